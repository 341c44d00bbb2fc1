/*
 * tracefs.c - the kernel's GPU trace events, read from tracefs while a
 * session records (opt-in: GPUPERF_TRACEFS=auto, or the path of a tracefs
 * mount):
 *
 *   power/gpu_frequency        "state=<kHz> gpu_id=<n>"
 *   gpu_mem/gpu_mem_total      "gpu_id=<n> pid=<n> size=<bytes>"
 *   gpu_scheduler/drm_sched_job, drm_run_job, drm_sched_process_job
 *     (Linux 6.16 on: drm_sched_job_queue, _run, _done)
 *                              "[entity=<p>, id=<n>,|dev=<pci>,] fence=<f>,
 *                               ring=<name>, job count:<n>, ..." and
 *                              "fence=<f> signaled"
 *   dma_fence/dma_fence_*      "driver=<s> timeline=<s> context=<n> seqno=<n>"
 *
 * On a real tracefs (statfs magic TRACEFS_MAGIC) a private instance
 * instances/gpuperf-<pid> is made, so the global buffer and whatever else
 * uses it are left alone; its trace_clock is set to "boot" (the trace
 * clock) and the events above that exist are enabled. A thread reads the
 * instance's trace_pipe (text: "TASK-PID [CPU] FLAGS SECONDS: EVENT:
 * FIELDS") and turns GPU frequency and memory totals into ENVIRONMENT
 * records, which the trace writer writes as Perfetto's
 * GenericGpuFrequencyEvent and GpuMemTotalEvent (the kernel's gpu_id is
 * the trace's gpu id, as Perfetto's ftrace import takes it). A scheduler
 * job (queued, run, done: matched by its fence) becomes a KERNEL record
 * named "<ring> job" on the DRM card's engine the ring belongs to
 * (gp__drm_ring_queue), so it is a GPU slice on that engine's track; at
 * most MAX_JOBS are followed at once, the oldest dropped and counted past
 * that. A job's dependencies (drm_sched_job_wait_dep before Linux 6.16,
 * drm_sched_job_add_dep and drm_sched_job_unschedulable from 6.16) on
 * other scheduler jobs become the wait ids of its record, so its slice is
 * written waiting for theirs (event_wait_ids: flows between the slices).
 * Fence events become DMA_FENCE records (init, emit, signaled,
 * wait_start, wait_end), which the writer writes as Perfetto's ftrace
 * data source would (FtraceEventBundle, DmaFence*FtraceEvent); destroy
 * and enable_signal, which Perfetto has no message for, are only counted
 * (gp__tracefs_counts(), like every event). At stop the events are
 * disabled and the instance removed.
 *
 * A root that is not a tracefs (a test fixture) is only read: its
 * trace_pipe file, nothing enabled, no instance.
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
#include "drm.h"
#include "tracefs.h"

#define TRACEFS_MAGIC 0x74726163

static const char *const gpu_events[GP__TRACEFS_NUM_EVENTS] = {
    "power/gpu_frequency",
    "gpu_mem/gpu_mem_total",
    "gpu_scheduler/drm_sched_job",
    "gpu_scheduler/drm_run_job",
    "gpu_scheduler/drm_sched_process_job",
    "dma_fence/dma_fence_init",
    "dma_fence/dma_fence_emit",
    "dma_fence/dma_fence_enable_signal",
    "dma_fence/dma_fence_signaled",
    "dma_fence/dma_fence_wait_start",
    "dma_fence/dma_fence_wait_end",
    "dma_fence/dma_fence_destroy",
    /* Linux 6.16 and later name the scheduler's events so: */
    "gpu_scheduler/drm_sched_job_queue",
    "gpu_scheduler/drm_sched_job_run",
    "gpu_scheduler/drm_sched_job_done",
    /* Dependencies: before 6.16, and from 6.16 on. */
    "gpu_scheduler/drm_sched_job_wait_dep",
    "gpu_scheduler/drm_sched_job_add_dep",
    "gpu_scheduler/drm_sched_job_unschedulable",
};

/* The scheduler's events by role, old and new names; the fences'. */
enum {
  EV_QUEUE = 2,
  EV_RUN = 3,
  EV_DONE = 4,
  EV_FENCE_INIT = 5,
  EV_FENCE_EMIT = 6,
  EV_FENCE_ENABLE_SIGNAL = 7,
  EV_FENCE_SIGNALED = 8,
  EV_FENCE_WAIT_START = 9,
  EV_FENCE_WAIT_END = 10,
  EV_FENCE_DESTROY = 11,
  EV_QUEUE2 = 12,
  EV_RUN2 = 13,
  EV_DONE2 = 14,
  EV_WAIT_DEP = 15,
  EV_ADD_DEP = 16,
  EV_UNSCHEDULABLE = 17
};

static struct {
  pthread_mutex_t lock;
  bool on, real, stop;
  char root[400], dir[512]; /* the mount; the instance (or the root) */
  bool enabled[GP__TRACEFS_NUM_EVENTS];
  uint64_t counts[GP__TRACEFS_NUM_EVENTS];
  int fd;
  pthread_t thread;
  char partial[4096];
  size_t npartial;
  uint64_t jobs_dropped; /* jobs never seen done, or past MAX_JOBS */
  uint64_t deps_unknown; /* dependencies on no job seen, or past MAX_DEPS */
} tfs = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* Scheduler jobs between queue and done, in arrival order (only the
 * reader thread touches them). */
#define MAX_JOBS 256
#define MAX_DEPS 8 /* dependencies kept per job; more are counted */
typedef struct sched_job {
  char fence[48], ring[40], dev[40];
  bool has_ring; /* ring (and dev) came from an event, not the default */
  uint64_t id, queued, run;
  uint64_t corr; /* the job's correlation id: its slice's event id */
  uint64_t deps[MAX_DEPS];
  uint32_t ndeps;
} sched_job;
static sched_job jobs[MAX_JOBS];
static size_t njobs;

/* The last DONE_RING jobs done, by fence, so that a job depending on one
 * already finished still points at it. */
#define DONE_RING 256
static struct {
  char fence[48];
  uint64_t corr;
} done_ring[DONE_RING];
static size_t ndone;

/* See tracefs.h. */
const char *gp__tracefs_event_name(int i) {
  return i >= 0 && i < GP__TRACEFS_NUM_EVENTS ? gpu_events[i] : NULL;
}

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
  for (size_t i = 0; i < 2; i++) {
    char ev[64];
    snprintf(ev, sizeof(ev), "%s/events", cand[i]);
    if (is_dir(ev)) {
      snprintf(buf, size, "%s", cand[i]);
      return true;
    }
  }
  return false;
}

/* See tracefs.h. */
uint32_t gp__tracefs_available(const char *root) {
  uint32_t mask = 0;
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    char p[600];
    snprintf(p, sizeof(p), "%s/events/%s", root, gpu_events[i]);
    if (is_dir(p))
      mask |= 1u << i;
  }
  return mask;
}

static void env_record(uint32_t gpu, uint64_t ts, uint32_t kind, uint32_t a,
                       uint64_t bytes) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_ENVIRONMENT, 0))
    return;
  gp_activity_environment *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_ENVIRONMENT, sizeof(*r), 0, 0);
  if (!r)
    return;
  memset(&r->data, 0, sizeof(r->data));
  r->timestamp = ts;
  r->device_id = gpu;
  r->environment_kind = kind;
  if (kind == GP_ENVIRONMENT_MEMORY) {
    r->data.memory.pid = a;
    r->data.memory.used_bytes = bytes;
  } else {
    r->data.speed.core_clock_khz = a;
  }
  gp__activity_commit(r);
}

static sched_job *job_find(const char *fence) {
  for (size_t i = njobs; i-- > 0;)
    if (strcmp(jobs[i].fence, fence) == 0)
      return &jobs[i];
  return NULL;
}

static sched_job *job_add(const gp__tracefs_event *ev, const char *fence) {
  if (njobs == MAX_JOBS) { /* the oldest never finished, as far as we saw */
    memmove(jobs, jobs + 1, (MAX_JOBS - 1) * sizeof(*jobs));
    njobs--;
    tfs.jobs_dropped++;
  }
  sched_job *j = &jobs[njobs++];
  memset(j, 0, sizeof(*j));
  snprintf(j->fence, sizeof(j->fence), "%s", fence);
  snprintf(j->ring, sizeof(j->ring), "drm");
  j->corr = gp__correlation_next();
  return j;
}

/* Takes the job's ring, device and id from a queue or run event, the
 * first that gives them (a job first seen by its dependency has none). */
static void job_describe(sched_job *j, const gp__tracefs_event *ev) {
  if (j->has_ring || !gp__tracefs_token(ev, "ring", j->ring, sizeof(j->ring)))
    return;
  j->has_ring = true;
  gp__tracefs_token(ev, "dev", j->dev, sizeof(j->dev));
  gp__tracefs_field(ev, "id", &j->id);
}

/* A job is done: GPU work from its run (or queue) to now. */
static void job_done(sched_job *j, uint64_t end) {
  uint32_t dev, queue;
  if (gp__activity_enabled(GP_ACTIVITY_KIND_KERNEL, 0) &&
      gp__drm_ring_queue(j->ring, j->dev, &dev, &queue)) {
    gp__gpu_work w = {.correlation_id = j->corr,
                      .queued = j->queued,
                      .submitted = j->queued,
                      .start = j->run ? j->run : j->queued,
                      .end = end,
                      .device_id = dev,
                      .queue_id = queue,
                      .num_wait_ids = j->ndeps,
                      .wait_ids = j->deps};
    uint32_t size = gp__gpu_work_size(GP_ACTIVITY_KIND_KERNEL, j->ndeps);
    gp_activity_kernel *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_KERNEL, size, 0, 0);
    if (r) {
      gp__gpu_work_fill(r, GP_ACTIVITY_KIND_KERNEL, &w);
      char name[64];
      snprintf(name, sizeof(name), "%s job", j->ring);
      r->name_id = gp__string_intern(name);
      gp__activity_commit(r);
    }
  }
  size_t d = ndone++ % DONE_RING;
  snprintf(done_ring[d].fence, sizeof(done_ring[d].fence), "%s", j->fence);
  done_ring[d].corr = j->corr;
  *j = jobs[--njobs]; /* order among the rest does not matter much */
}

/* The correlation id of the job whose fence is `fence` (running, queued
 * or among the last done), or 0. */
static uint64_t fence_job(const char *fence) {
  sched_job *j = job_find(fence);
  if (j)
    return j->corr;
  size_t n = ndone < DONE_RING ? ndone : DONE_RING;
  for (size_t k = 0; k < n; k++) {
    size_t d = (ndone - 1 - k) % DONE_RING; /* the latest first */
    if (strcmp(done_ring[d].fence, fence) == 0)
      return done_ring[d].corr;
  }
  return 0;
}

/* The old kernels' job of a wait_dep event: by ring and id. */
static sched_job *job_by_id(const gp__tracefs_event *ev) {
  char ring[40];
  uint64_t id;
  if (!gp__tracefs_token(ev, "ring", ring, sizeof(ring)) ||
      !gp__tracefs_field(ev, "id", &id))
    return NULL;
  for (size_t i = njobs; i-- > 0;)
    if (jobs[i].id == id && strcmp(jobs[i].ring, ring) == 0)
      return &jobs[i];
  return NULL;
}

/*
 * A dependency: the job (old kernels: "job ring=R, id=N, depends
 * fence=P, ..."; 6.16 on: "fence=C:S depends on [unsignalled] fence=C:S")
 * waits for the fence after "depends". Where that fence is a scheduler
 * job's, its correlation id joins the job's wait ids, and the job's slice
 * is written waiting for that job's (event_wait_ids). A fence of no job
 * seen, or past MAX_DEPS, is counted in deps_unknown.
 */
static void dep_event(int i, const gp__tracefs_event *ev) {
  const char *dep = strstr(ev->fields, "depends ");
  dep = dep ? strstr(dep, "fence=") : NULL;
  if (!dep)
    return;
  char fence[48];
  size_t n = strcspn(dep + 6, ", ");
  snprintf(fence, sizeof(fence), "%.*s", (int)n, dep + 6);
  sched_job *j;
  if (i == EV_WAIT_DEP) {
    j = job_by_id(ev);
  } else {
    char own[48];
    if (!gp__tracefs_token(ev, "fence", own, sizeof(own)))
      return;
    /* 6.16 adds dependencies before it queues the job. */
    j = job_find(own);
    if (!j)
      j = job_add(ev, own);
  }
  uint64_t corr = fence_job(fence);
  if (!j || !corr || corr == j->corr) {
    tfs.deps_unknown++;
    return;
  }
  for (uint32_t k = 0; k < j->ndeps; k++)
    if (j->deps[k] == corr)
      return; /* add_dep, then unschedulable on the same fence */
  if (j->ndeps == MAX_DEPS) {
    tfs.deps_unknown++;
    return;
  }
  j->deps[j->ndeps++] = corr;
}

static void sched_event(int i, const gp__tracefs_event *ev) {
  char fence[48];
  if (!gp__tracefs_token(ev, "fence", fence, sizeof(fence)))
    return;
  sched_job *j = job_find(fence);
  if (i == EV_QUEUE || i == EV_QUEUE2) {
    if (!j)
      j = job_add(ev, fence);
    job_describe(j, ev);
    j->queued = ev->ts_ns;
  } else if (i == EV_RUN || i == EV_RUN2) {
    if (!j)
      j = job_add(ev, fence);
    job_describe(j, ev);
    j->run = ev->ts_ns;
    if (!j->queued)
      j->queued = ev->ts_ns;
  } else if (j) { /* done */
    job_done(j, ev->ts_ns);
  }
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

/* A dma_fence event (gpu_events index i) as a DMA_FENCE record; destroy
 * and enable_signal are only counted (Perfetto imports neither). */
static void fence_event(int i, const gp__tracefs_event *ev) {
  static const uint32_t kinds[] = {[EV_FENCE_INIT] = GP_DMA_FENCE_INIT,
                                   [EV_FENCE_EMIT] = GP_DMA_FENCE_EMIT,
                                   [EV_FENCE_SIGNALED] = GP_DMA_FENCE_SIGNALED,
                                   [EV_FENCE_WAIT_START] =
                                       GP_DMA_FENCE_WAIT_START,
                                   [EV_FENCE_WAIT_END] = GP_DMA_FENCE_WAIT_END};
  uint32_t kind = (size_t)i < sizeof(kinds) / sizeof(kinds[0]) ? kinds[i] : 0;
  char driver[128], timeline[128];
  uint64_t context, seqno;
  if (!kind || !gp__activity_enabled(GP_ACTIVITY_KIND_DMA_FENCE, 0) ||
      !text_before(ev, "driver", "timeline", driver, sizeof(driver)) ||
      !text_before(ev, "timeline", "context", timeline, sizeof(timeline)) ||
      !gp__tracefs_field(ev, "context", &context) ||
      !gp__tracefs_field(ev, "seqno", &seqno))
    return;
  gp_activity_dma_fence *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_DMA_FENCE, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = ev->ts_ns;
  r->event = kind;
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
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    const char *slash = strchr(gpu_events[i], '/');
    if (strcmp(slash + 1, ev.event) != 0)
      continue;
    tfs.counts[i]++;
    uint64_t gpu = 0, a = 0, size = 0;
    if (i == 0 && gp__tracefs_field(&ev, "state", &a)) {
      gp__tracefs_field(&ev, "gpu_id", &gpu);
      env_record((uint32_t)gpu, ev.ts_ns, GP_ENVIRONMENT_SPEED, (uint32_t)a, 0);
    } else if (i == 1 && gp__tracefs_field(&ev, "size", &size)) {
      gp__tracefs_field(&ev, "gpu_id", &gpu);
      gp__tracefs_field(&ev, "pid", &a);
      env_record((uint32_t)gpu, ev.ts_ns, GP_ENVIRONMENT_MEMORY, (uint32_t)a,
                 size);
    } else if (i == EV_QUEUE || i == EV_RUN || i == EV_DONE ||
               (i >= EV_QUEUE2 && i <= EV_DONE2)) {
      sched_event(i, &ev);
    } else if (i >= EV_WAIT_DEP && i <= EV_UNSCHEDULABLE) {
      dep_event(i, &ev);
    } else if (i >= EV_FENCE_INIT && i <= EV_FENCE_DESTROY) {
      fence_event(i, &ev);
    }
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
    if (poll(&pfd, 1, stop ? 0 : 100) > 0) {
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

static void enable_all(bool on) {
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    char p[700];
    snprintf(p, sizeof(p), "%s/events/%s/enable", tfs.dir, gpu_events[i]);
    if (on)
      tfs.enabled[i] = write_str(p, "1");
    else if (tfs.enabled[i])
      write_str(p, "0");
  }
}

/* See tracefs.h. */
int gp__tracefs_start(const char *want) {
  pthread_mutex_lock(&tfs.lock);
  if (tfs.on) {
    pthread_mutex_unlock(&tfs.lock);
    return GP_EBUSY;
  }
  if (!gp__tracefs_find(want, tfs.root, sizeof(tfs.root))) {
    pthread_mutex_unlock(&tfs.lock);
    return GP_ENOENT;
  }
  struct statfs sf;
  tfs.real = statfs(tfs.root, &sf) == 0 && sf.f_type == TRACEFS_MAGIC;
  snprintf(tfs.dir, sizeof(tfs.dir), "%s", tfs.root);
  if (tfs.real) {
    snprintf(tfs.dir, sizeof(tfs.dir), "%s/instances/gpuperf-%d", tfs.root,
             (int)getpid());
    if (mkdir(tfs.dir, 0700) != 0 && errno != EEXIST) {
      int rc = -errno;
      pthread_mutex_unlock(&tfs.lock);
      return rc;
    }
    char p[600];
    snprintf(p, sizeof(p), "%s/trace_clock", tfs.dir);
    write_str(p, "boot");
    enable_all(true);
  }
  char pipe[600];
  snprintf(pipe, sizeof(pipe), "%s/trace_pipe", tfs.dir);
  tfs.fd = open(pipe, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  int rc = tfs.fd < 0 ? -errno : 0;
  memset(tfs.counts, 0, sizeof(tfs.counts));
  tfs.jobs_dropped = tfs.deps_unknown = 0;
  ndone = 0;
  tfs.npartial = 0;
  tfs.stop = false;
  if (rc == 0 && pthread_create(&tfs.thread, NULL, reader, NULL) != 0)
    rc = GP_ENOMEM;
  if (rc != 0) {
    if (tfs.fd >= 0)
      close(tfs.fd);
    tfs.fd = -1;
    if (tfs.real) {
      enable_all(false);
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
  tfs.jobs_dropped += njobs; /* queued or running, never seen done */
  njobs = 0;
  close(tfs.fd);
  tfs.fd = -1;
  if (tfs.real) {
    enable_all(false);
    rmdir(tfs.dir);
  }
  tfs.on = false;
  pthread_mutex_unlock(&tfs.lock);
}

/* See tracefs.h. */
uint32_t gp__tracefs_counts(uint64_t *counts) {
  pthread_mutex_lock(&tfs.lock);
  uint32_t mask = 0;
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    counts[i] = tfs.counts[i];
    mask |= tfs.enabled[i] ? 1u << i : 0;
  }
  pthread_mutex_unlock(&tfs.lock);
  return mask;
}

/* See tracefs.h. */
void gp__tracefs_lost(uint64_t *jobs_lost, uint64_t *deps_lost) {
  pthread_mutex_lock(&tfs.lock);
  *jobs_lost = tfs.jobs_dropped;
  *deps_lost = tfs.deps_unknown;
  pthread_mutex_unlock(&tfs.lock);
}
