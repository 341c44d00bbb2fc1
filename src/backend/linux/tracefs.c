/*
 * tracefs.c - the kernel's GPU trace events, read from tracefs while a
 * session records (a linux.ftrace data source, or GPUPERF_TRACEFS=auto
 * or the path of a tracefs mount, which means all of them):
 *
 *   power/gpu_frequency        "state=<kHz> gpu_id=<n>"
 *   gpu_mem/gpu_mem_total      "gpu_id=<n> pid=<n> size=<bytes>"
 *   gpu_scheduler/drm_sched_job, drm_run_job (to Linux 6.15)
 *                              "entity=<p>, id=<n>, fence=<p>, ring=<s>,
 *                               job count:<n>, hw job count:<n>"
 *   gpu_scheduler/drm_sched_process_job   "fence=<p> signaled"
 *   gpu_scheduler/drm_sched_job_queue, _run (6.16 on)
 *                              "dev=<s>, fence=<c>:<s>, ring=<s>, job
 *                               count:<n>, hw job count:<n>, client_id:<n>"
 *   gpu_scheduler/drm_sched_job_done      "fence=<c>:<s> signaled"
 *   gpu_scheduler/drm_sched_job_add_dep, _unschedulable
 *                              "fence=<c>:<s> depends on [unsignalled]
 *                               fence=<c>:<s>"
 *   dma_fence/dma_fence_{init,emit,signaled,wait_start,wait_end}
 *                              "driver=<s> timeline=<s> context=<n>
 *                               seqno=<n>"
 *
 * Each event becomes one record holding what Perfetto's message for it
 * holds: fences DMA_FENCE records, the others GPU_FTRACE records. The
 * trace writer writes both as traced_probes writes what it reads from
 * the kernel (FtraceEventBundle), so a trace of gpuperf's and one of
 * Perfetto's are imported by the same code, ours or Perfetto's. Nothing
 * is derived here: scheduler jobs become slices (and fences timelines)
 * in the importer, as Perfetto's DrmTracker makes them. A line of an
 * event read whose fields do not parse is counted (malformed), never
 * guessed at.
 *
 * On a real tracefs (statfs magic TRACEFS_MAGIC) a private instance
 * instances/gpuperf-<pid> is made, so the global buffer and whatever else
 * uses it are left alone; its trace_clock is set to "boot" (the trace
 * clock), its buffer_size_kb to the size asked for, and the events asked
 * for that exist are enabled. A thread reads the instance's trace_pipe
 * (text: "TASK-PID [CPU] FLAGS SECONDS: EVENT: FIELDS") every drain
 * period. At stop the events are disabled and the instance removed.
 *
 * A root that is not a tracefs (a test fixture) is only read: its
 * trace_pipe file, whole, nothing enabled, no instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/core.h"
#include "tracefs.h"
#include "core/thread.h"

#define TRACEFS_MAGIC 0x74726163

static struct {
  pthread_mutex_t lock;
  bool on, real, stop;
  char root[400], dir[512]; /* the mount; the instance (or the root) */
  uint32_t enabled;         /* the events read */
  uint64_t counts[GP_FTRACE_EVENT_COUNT];
  uint64_t malformed;
  int drain_ms;
  int fd;
  pthread_t thread;
  char partial[4096];
  size_t npartial;
} tfs = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* See tracefs.h. */
bool gp__tracefs_find(const char *want, char *buf, size_t size) {
  const char *cand[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
  if (want && *want && strcmp(want, "auto") != 0) {
    snprintf(buf, size, "%s", want);
    char ev[600];
    snprintf(ev, sizeof(ev), "%s/events", buf);
    return is_dir(ev);
  }
  /* Where none is found, buf names the first that is there but not ours
   * to look into (not root), else the first. */
  snprintf(buf, size, "%s", cand[0]);
  bool denied = false;
  for (size_t i = 0; i < 2; i++) {
    char ev[64];
    snprintf(ev, sizeof(ev), "%s/events", cand[i]);
    if (is_dir(ev)) {
      snprintf(buf, size, "%s", cand[i]);
      return true;
    }
    if (!denied && (errno == EACCES || errno == EPERM)) {
      snprintf(buf, size, "%s", cand[i]);
      denied = true;
    }
  }
  return false;
}

/* See tracefs.h. */
uint32_t gp__tracefs_available(const char *root) {
  uint32_t mask = 0;
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++) {
    char p[600];
    snprintf(p, sizeof(p), "%s/events/%s", root, gp__ftrace_event_name(i));
    if (is_dir(p))
      mask |= 1u << i;
  }
  return mask;
}

/* A hashed kernel pointer ("%p": hex digits without 0x) of field key. */
static bool hex_field(const gp__tracefs_event *ev, const char *key,
                      uint64_t *v) {
  char tok[40], *end;
  if (!gp__tracefs_token(ev, key, tok, sizeof(tok)))
    return false;
  *v = strtoull(tok, &end, 16);
  return end != tok && *end == '\0';
}

/* "key=<context>:<seqno>", the n-th such (0: the first) in ev's fields. */
static bool fence_pair(const gp__tracefs_event *ev, int n, uint64_t *ctx,
                       uint64_t *seqno) {
  const char *p = ev->fields;
  for (int k = 0;; k++) {
    p = strstr(p, "fence=");
    if (!p)
      return false;
    p += 6;
    if (k == n)
      break;
  }
  char *end;
  *ctx = strtoull(p, &end, 10);
  if (end == p || *end != ':')
    return false;
  const char *s = end + 1;
  *seqno = strtoull(s, &end, 10);
  return end != s;
}

/* The scheduler's job fields common to queue and run, old and new. */
static bool job_fields(const gp__tracefs_event *ev, gp_activity_gpu_ftrace *r) {
  char ring[128];
  uint64_t jc, hw;
  if (!gp__tracefs_token(ev, "ring", ring, sizeof(ring)) ||
      !gp__tracefs_field(ev, "job count", &jc) ||
      !gp__tracefs_field(ev, "hw job count", &hw))
    return false;
  r->ring_id = gp__string_intern(ring);
  r->job_count = (uint32_t)jc;
  r->hw_job_count = (int32_t)hw;
  return true;
}

/* Fills r from the text of event e; false if a field is missing. */
static bool gpu_fields(int e, const gp__tracefs_event *ev,
                       gp_activity_gpu_ftrace *r) {
  uint64_t v = 0;
  char dev[128];
  switch (e) {
  case GP_FTRACE_GPU_FREQUENCY:
    if (!gp__tracefs_field(ev, "state", &r->value) ||
        !gp__tracefs_field(ev, "gpu_id", &v))
      return false;
    r->gpu_id = (uint32_t)v;
    return true;
  case GP_FTRACE_GPU_MEM_TOTAL:
    if (!gp__tracefs_field(ev, "size", &r->value) ||
        !gp__tracefs_field(ev, "gpu_id", &v))
      return false;
    r->gpu_id = (uint32_t)v;
    if (!gp__tracefs_field(ev, "pid", &v))
      return false;
    r->pid = (uint32_t)v;
    return true;
  case GP_FTRACE_DRM_SCHED_JOB:
  case GP_FTRACE_DRM_RUN_JOB:
    return hex_field(ev, "entity", &r->entity) &&
           hex_field(ev, "fence", &r->fence) &&
           gp__tracefs_field(ev, "id", &r->job_id) && job_fields(ev, r);
  case GP_FTRACE_DRM_SCHED_PROCESS_JOB:
    return hex_field(ev, "fence", &r->fence);
  case GP_FTRACE_DRM_SCHED_JOB_QUEUE:
  case GP_FTRACE_DRM_SCHED_JOB_RUN:
    if (!gp__tracefs_token(ev, "dev", dev, sizeof(dev)) ||
        !fence_pair(ev, 0, &r->fence_context, &r->fence_seqno) ||
        !job_fields(ev, r))
      return false;
    r->dev_id = gp__string_intern(dev);
    gp__tracefs_field(ev, "client_id", &r->client_id); /* from 6.17 */
    return true;
  case GP_FTRACE_DRM_SCHED_JOB_DONE:
    return fence_pair(ev, 0, &r->fence_context, &r->fence_seqno);
  case GP_FTRACE_DRM_SCHED_JOB_ADD_DEP:
  case GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE:
    return fence_pair(ev, 0, &r->fence_context, &r->fence_seqno) &&
           fence_pair(ev, 1, &r->dep_context, &r->dep_seqno);
  default:
    return false;
  }
}

static void gpu_event(int e, const gp__tracefs_event *ev) {
  gp_activity_gpu_ftrace f;
  memset(&f, 0, sizeof(f));
  if (!gpu_fields(e, ev, &f)) {
    tfs.malformed++;
    return;
  }
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_GPU_FTRACE, 0))
    return;
  gp_activity_gpu_ftrace *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_GPU_FTRACE, sizeof(*r), 0, 0);
  if (!r)
    return; /* counted by the core as dropped */
  f.hdr = r->hdr;
  *r = f;
  r->timestamp = ev->ts_ns;
  r->event = (uint32_t)e;
  r->thread_id = ev->pid;
  r->cpu = ev->cpu;
  gp__activity_commit(r);
}

/* The text of ev's field key up to " <next>=" (or the end), into buf:
 * driver and timeline names may hold what token() stops at. */
static bool text_before(const gp__tracefs_event *ev, const char *key,
                        const char *next, char *buf, size_t size) {
  char k[32], n[32];
  snprintf(k, sizeof(k), "%s=", key);
  snprintf(n, sizeof(n), " %s=", next);
  const char *a = strstr(ev->fields, k);
  if (!a || (a != ev->fields && a[-1] != ' '))
    return false;
  a += strlen(k);
  const char *b = strstr(a, n);
  size_t len = b ? (size_t)(b - a) : strlen(a);
  if (len >= size)
    len = size - 1;
  memcpy(buf, a, len);
  buf[len] = '\0';
  return true;
}

/* A dma_fence event (gp_ftrace_event e) as a DMA_FENCE record. */
static void fence_event(int e, const gp__tracefs_event *ev) {
  static const uint32_t kinds[GP_FTRACE_EVENT_COUNT] = {
      [GP_FTRACE_DMA_FENCE_INIT] = GP_DMA_FENCE_INIT,
      [GP_FTRACE_DMA_FENCE_EMIT] = GP_DMA_FENCE_EMIT,
      [GP_FTRACE_DMA_FENCE_SIGNALED] = GP_DMA_FENCE_SIGNALED,
      [GP_FTRACE_DMA_FENCE_WAIT_START] = GP_DMA_FENCE_WAIT_START,
      [GP_FTRACE_DMA_FENCE_WAIT_END] = GP_DMA_FENCE_WAIT_END};
  char driver[128], timeline[128];
  uint64_t context, seqno;
  if (!text_before(ev, "driver", "timeline", driver, sizeof(driver)) ||
      !text_before(ev, "timeline", "context", timeline, sizeof(timeline)) ||
      !gp__tracefs_field(ev, "context", &context) ||
      !gp__tracefs_field(ev, "seqno", &seqno)) {
    tfs.malformed++;
    return;
  }
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_DMA_FENCE, 0))
    return;
  gp_activity_dma_fence *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_DMA_FENCE, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = ev->ts_ns;
  r->event = kinds[e];
  r->thread_id = ev->pid;
  r->cpu = ev->cpu;
  r->context = (uint32_t)context;
  r->seqno = (uint32_t)seqno;
  r->driver_id = gp__string_intern(driver);
  r->timeline_id = gp__string_intern(timeline);
  r->reserved0 = 0;
  gp__activity_commit(r);
}

static void handle(const char *line) {
  gp__tracefs_event ev;
  if (!gp__tracefs_parse(line, &ev))
    return;
  for (int e = 0; e < GP_FTRACE_EVENT_COUNT; e++) {
    const char *slash = strchr(gp__ftrace_event_name(e), '/');
    if (!(tfs.enabled & (1u << e)) || strcmp(slash + 1, ev.event) != 0)
      continue;
    tfs.counts[e]++;
    if (e >= GP_FTRACE_DMA_FENCE_INIT)
      fence_event(e, &ev);
    else
      gpu_event(e, &ev);
    return;
  }
}

/* Reads what trace_pipe has; returns false at its end (a plain file). */
static bool pump(void) {
  char buf[8192];
  ssize_t n = read(tfs.fd, buf, sizeof(buf));
  if (n <= 0)
    return n < 0 && errno == EAGAIN;
  for (ssize_t i = 0; i < n; i++) {
    char ch = buf[i];
    if (ch == '\n' || tfs.npartial + 1 == sizeof(tfs.partial)) {
      tfs.partial[tfs.npartial] = '\0';
      handle(tfs.partial);
      tfs.npartial = 0;
    } else {
      tfs.partial[tfs.npartial++] = ch;
    }
  }
  return true;
}

static void *reader(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&tfs.lock);
    bool stop = tfs.stop;
    pthread_mutex_unlock(&tfs.lock);
    struct pollfd pfd = {tfs.fd, POLLIN, 0};
    if (poll(&pfd, 1, stop ? 0 : tfs.drain_ms) > 0) {
      if (!pump() && !tfs.real)
        break; /* a fixture's file: read whole */
      continue;
    }
    if (stop)
      break;
  }
  return NULL;
}

static bool write_str(const char *path, const char *s) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
  close(fd);
  return ok;
}

/* Enables (on) the events in mask, into tfs.enabled those that took; or
 * disables those enabled. */
static void enable_events(uint32_t mask, bool on) {
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++) {
    char p[700];
    snprintf(p, sizeof(p), "%s/events/%s/enable", tfs.dir,
             gp__ftrace_event_name(i));
    if (on && (mask & (1u << i)) && write_str(p, "1"))
      tfs.enabled |= 1u << i;
    else if (!on && (tfs.enabled & (1u << i)))
      write_str(p, "0");
  }
}

/* Makes the private instance and enables what o asks for; 0 or -errno. */
static int make_instance(const gp__tracefs_options *o) {
  snprintf(tfs.dir, sizeof(tfs.dir), "%s/instances/gpuperf-%d", tfs.root,
           (int)getpid());
  if (mkdir(tfs.dir, 0700) != 0 && errno != EEXIST)
    return -errno;
  char p[600], v[32];
  snprintf(p, sizeof(p), "%s/trace_clock", tfs.dir);
  write_str(p, "boot");
  if (o->buffer_size_kb) {
    snprintf(p, sizeof(p), "%s/buffer_size_kb", tfs.dir);
    snprintf(v, sizeof(v), "%u", o->buffer_size_kb);
    if (!write_str(p, v)) {
      int rc = -errno;
      rmdir(tfs.dir);
      return rc;
    }
  }
  enable_events(o->events & gp__tracefs_available(tfs.root), true);
  return 0;
}

/* See tracefs.h. */
int gp__tracefs_start(const gp__tracefs_options *o, char *root_out,
                      size_t size) {
  pthread_mutex_lock(&tfs.lock);
  if (tfs.on) {
    pthread_mutex_unlock(&tfs.lock);
    return GP_EBUSY;
  }
  bool found = gp__tracefs_find(o->root, tfs.root, sizeof(tfs.root));
  if (size)
    snprintf(root_out, size, "%s", tfs.root);
  if (!found) {
    char ev[600];
    struct stat st;
    snprintf(ev, sizeof(ev), "%s/events", tfs.root);
    int rc = stat(ev, &st) != 0 && (errno == EACCES || errno == EPERM)
                 ? -EACCES
                 : GP_ENOENT;
    pthread_mutex_unlock(&tfs.lock);
    return rc;
  }
  struct statfs sf;
  tfs.real = statfs(tfs.root, &sf) == 0 && sf.f_type == TRACEFS_MAGIC;
  snprintf(tfs.dir, sizeof(tfs.dir), "%s", tfs.root);
  tfs.enabled = 0;
  tfs.drain_ms = o->drain_period_ms ? (int)o->drain_period_ms : 100;
  int rc = 0;
  if (tfs.real)
    rc = make_instance(o);
  else
    tfs.enabled = o->events & gp__tracefs_available(tfs.root);
  char pipe[600];
  snprintf(pipe, sizeof(pipe), "%s/trace_pipe", tfs.dir);
  if (rc == 0) {
    tfs.fd = open(pipe, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    rc = tfs.fd < 0 ? -errno : 0;
  }
  memset(tfs.counts, 0, sizeof(tfs.counts));
  tfs.malformed = 0;
  tfs.npartial = 0;
  tfs.stop = false;
  if (rc == 0 && gp__thread_start(&tfs.thread, NULL, reader, NULL) != 0)
    rc = GP_ENOMEM;
  if (rc != 0) {
    if (tfs.fd >= 0)
      close(tfs.fd);
    tfs.fd = -1;
    if (tfs.real && strcmp(tfs.dir, tfs.root) != 0) {
      enable_events(0, false);
      rmdir(tfs.dir);
    }
  }
  tfs.on = rc == 0;
  pthread_mutex_unlock(&tfs.lock);
  return rc;
}

/* See tracefs.h. */
void gp__tracefs_stop(void) {
  pthread_mutex_lock(&tfs.lock);
  if (!tfs.on) {
    pthread_mutex_unlock(&tfs.lock);
    return;
  }
  tfs.stop = true;
  pthread_mutex_unlock(&tfs.lock);
  pthread_join(tfs.thread, NULL);
  pthread_mutex_lock(&tfs.lock);
  close(tfs.fd);
  tfs.fd = -1;
  if (tfs.real) {
    enable_events(0, false);
    rmdir(tfs.dir);
  }
  tfs.on = false;
  pthread_mutex_unlock(&tfs.lock);
}

/* See tracefs.h. */
uint32_t gp__tracefs_counts(uint64_t *counts) {
  pthread_mutex_lock(&tfs.lock);
  memcpy(counts, tfs.counts, sizeof(tfs.counts));
  uint32_t mask = tfs.enabled;
  pthread_mutex_unlock(&tfs.lock);
  return mask;
}

/* See tracefs.h. */
uint64_t gp__tracefs_malformed(void) {
  pthread_mutex_lock(&tfs.lock);
  uint64_t n = tfs.malformed;
  pthread_mutex_unlock(&tfs.lock);
  return n;
}
