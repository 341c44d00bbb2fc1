/*
 * session_ftrace.c - the kernel's GPU trace events in a session: a
 * linux.ftrace data source (ftrace_events, buffer_size_kb,
 * drain_period_ms), or GPUPERF_TRACEFS, its shorthand for all the GPU
 * events gpuperf reads, read from tracefs (backend/linux/tracefs.c) into
 * DMA_FENCE and GPU_FTRACE records, which the writer writes as
 * traced_probes would. GPUPERF_TRACEFS=PATH also names the tracefs to
 * read (a mount, or a test's fixture tree) for either.
 *
 * The kernel's events are the machine's, not a process's: in a recording
 * of several processes (gpuperf record, GPUPERF_RECORD_DIR) one process
 * reads them, the first to lock the recording's folder (flock); the
 * others leave them to it, so no event is written twice. Should that
 * process end first, the events after its end are not read.
 *
 * Tracefs is the kernel's and may not be there for us: not mounted, or
 * not ours to write (not root). The session then goes on without the
 * events, and one warning says why and what to do; so does one for the
 * events asked for that this kernel lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "backend/linux/tracefs.h"
#include "sessionInt.h"

/* GPUPERF_TRACEFS when it asks for something ("auto" or a path), else
 * NULL. */
static const char *env_tracefs(void) {
  const char *tr = getenv("GPUPERF_TRACEFS");
  return tr && *tr && strcmp(tr, "0") != 0 ? tr : NULL;
}

/* See sessionInt.h. */
bool gp__session_ftrace_wanted(const gp_trace_config *cfg,
                               gp__tracefs_options *o) {
  memset(o, 0, sizeof(*o));
  gp_data_source_info ds;
  for (uint32_t i = 0; gp_trace_config_get_data_source(cfg, i, &ds) == 0; i++) {
    if (ds.kind != GP_DATA_SOURCE_LINUX_FTRACE)
      continue;
    o->events |= ds.ftrace_events;
    o->buffer_size_kb = ds.ftrace_buffer_size_kb;
    o->drain_period_ms = ds.ftrace_drain_period_ms;
  }
  o->root = env_tracefs();
  if (o->root && !o->events) /* the shorthand: every GPU event */
    o->events = (1u << GP_FTRACE_EVENT_COUNT) - 1;
  return o->events != 0;
}

/* The scheduler's events of the names this kernel does not use: not
 * missing (Linux 6.16 renamed them). */
static uint32_t other_generation(uint32_t avail) {
  const uint32_t old = (1u << GP_FTRACE_DRM_SCHED_JOB) |
                       (1u << GP_FTRACE_DRM_RUN_JOB) |
                       (1u << GP_FTRACE_DRM_SCHED_PROCESS_JOB);
  const uint32_t now = (1u << GP_FTRACE_DRM_SCHED_JOB_QUEUE) |
                       (1u << GP_FTRACE_DRM_SCHED_JOB_RUN) |
                       (1u << GP_FTRACE_DRM_SCHED_JOB_DONE) |
                       (1u << GP_FTRACE_DRM_SCHED_JOB_ADD_DEP) |
                       (1u << GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE);
  if (avail & now)
    return old;
  if (avail & old)
    return now;
  return 0;
}

/* One line naming the events asked for that tracefs at root lacks. */
static void warn_missing(const char *root, uint32_t asked, uint32_t avail) {
  uint32_t missing = asked & ~avail & ~other_generation(avail);
  if (!missing)
    return;
  char names[1024] = "";
  size_t n = 0;
  for (int e = 0; e < GP_FTRACE_EVENT_COUNT; e++)
    if (missing & (1u << e))
      n +=
          (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0,
                           "%s%s", n ? ", " : "", gp__ftrace_event_name(e));
  gp__session_warn("linux.ftrace: %s has no %s (this kernel or its GPU "
                   "driver does not have %s): not recorded",
                   root, names, missing & (missing - 1) ? "them" : "it");
}

/* Whether this process is the one of its recording to read tracefs (a
 * session not started from GPUPERF_RECORD_DIR always is): it holds a
 * lock on the recording's folder, kept in s->tracefs_lock (fd + 1) until
 * stop. */
static bool claim_recording(gp_session *s) {
  const char *dir = getenv("GPUPERF_RECORD_DIR");
  if (!s->env || !dir || !*dir)
    return true;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return true; /* nothing to share it with */
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return false;
  }
  s->tracefs_lock = fd + 1;
  return true;
}

static void release_recording(gp_session *s) {
  if (s->tracefs_lock) {
    close(s->tracefs_lock - 1); /* and its lock */
    s->tracefs_lock = 0;
  }
}

/* See sessionInt.h. */
void gp__session_ftrace_start(gp_session *s) {
  gp__tracefs_options o;
  if (!gp__session_ftrace_wanted(s->cfg, &o) || !claim_recording(s))
    return;
  char root[400] = "";
  int rc = gp__tracefs_start(&o, root, sizeof(root));
  if (rc != 0)
    release_recording(s); /* another may try */
  if (rc == GP_EBUSY)     /* another session of this process reads it */
    return;
  if (rc == GP_ENOENT) {
    if (o.root && strcmp(o.root, "auto") != 0)
      gp__session_warn("linux.ftrace: %s is not a tracefs (it has no "
                       "events/ directory): the kernel's GPU events are not "
                       "recorded; point GPUPERF_TRACEFS at the tracefs mount "
                       "(/sys/kernel/tracing), or unset it",
                       root);
    else
      gp__session_warn("linux.ftrace: tracefs is not mounted (no "
                       "/sys/kernel/tracing/events): the kernel's GPU events "
                       "are not recorded; mount it, as root: mount -t "
                       "tracefs nodev /sys/kernel/tracing");
    return;
  }
  if (rc == -EACCES || rc == -EPERM || rc == -EROFS) {
    gp__session_warn("linux.ftrace: %s: %s: the kernel's GPU events are not "
                     "recorded; record as root, or give this user write "
                     "access to %s/instances and its events (as Perfetto's "
                     "traced_probes needs too)",
                     root, gp_strerror(rc), root);
    return;
  }
  if (rc != 0) {
    gp__session_warn("linux.ftrace: %s: %s: the kernel's GPU events are not "
                     "recorded",
                     root, gp_strerror(rc));
    return;
  }
  s->tracefs_on = true;
  warn_missing(root, o.events, gp__tracefs_available(root));
}

/* See sessionInt.h. */
void gp__session_ftrace_stop(gp_session *s) {
  if (!s->tracefs_on)
    return;
  gp__tracefs_stop();
  s->tracefs_on = false;
  release_recording(s);
  uint64_t bad = gp__tracefs_malformed();
  if (bad)
    gp__session_warn("linux.ftrace: %llu event line(s) of tracefs did not "
                     "parse and are not in the trace",
                     (unsigned long long)bad);
}
