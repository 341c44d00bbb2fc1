/*
 * perf_event.c - the host CPU as a counter source, through Linux's
 * perf_event_open(2): a catalog of the hardware events the kernel offers
 * on this machine (cycles, instructions, cache and branch events) and the
 * software events it always has (task-clock, context switches, page
 * faults, ...), perfmons that count the calling process, and periodic
 * sampling by a thread of its own.
 *
 * Permission. kernel.perf_event_paranoid decides what an unprivileged
 * process may count: at 2 (the usual default) only user-space events of
 * its own tasks, at 3 (some distributions) nothing. Events are opened
 * counting kernel time too, and again user-space only if that is refused;
 * when even that fails, the error names the sysctl and its value
 * (gp_host_perf_status).
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"
#include "core/thread.h"

typedef struct perf_event_def {
  uint32_t id;
  uint32_t type; /* PERF_TYPE_* */
  uint64_t config;
  const char *name;
  uint32_t unit;
  const char *description;
} perf_event_def;

enum { BLOCK_SOFTWARE, BLOCK_HARDWARE, NUM_BLOCKS };
#define HW_CAPACITY 4 /* generic counters of common cores; more multiplex */
#define GROUP_SW (GP_COUNTER_GROUP_FIRST_CUSTOM + 0)
#define GROUP_HW (GP_COUNTER_GROUP_FIRST_CUSTOM + 1)

static const perf_event_def sw_events[] = {
    {1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock",
     GP_UNIT_NANOSECOND, "CPU time the process's tasks ran"},
    {2, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock",
     GP_UNIT_NANOSECOND, "CPU clock time while counting"},
    {3, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches",
     GP_UNIT_NONE, "Context switches"},
    {4, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations",
     GP_UNIT_NONE, "Moves of a task from one CPU to another"},
    {5, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults",
     GP_UNIT_NONE, "Page faults"},
    {6, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults",
     GP_UNIT_NONE, "Page faults served without I/O"},
    {7, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults",
     GP_UNIT_NONE, "Page faults that needed I/O"},
    {8, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "alignment-faults",
     GP_UNIT_NONE, "Unaligned accesses the kernel fixed up"},
    {9, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "emulation-faults",
     GP_UNIT_NONE, "Instructions the kernel emulated"},
};

static const perf_event_def hw_events[] = {
    {101, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", GP_UNIT_NONE,
     "CPU cycles"},
    {102, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions",
     GP_UNIT_INSTRUCTION, "Instructions retired"},
    {103, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
     "cache-references", GP_UNIT_NONE, "Last-level cache accesses"},
    {104, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses",
     GP_UNIT_NONE, "Last-level cache misses"},
    {105, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     "branch-instructions", GP_UNIT_NONE, "Branch instructions retired"},
    {106, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses",
     GP_UNIT_NONE, "Mispredicted branches"},
    {107, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles",
     GP_UNIT_NONE, "Bus cycles"},
    {108, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
     "stalled-cycles-frontend", GP_UNIT_NONE,
     "Cycles the front end issued nothing"},
    {109, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
     "stalled-cycles-backend", GP_UNIT_NONE,
     "Cycles the back end retired nothing"},
    {110, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles",
     GP_UNIT_NONE, "CPU cycles at the reference frequency"},
};

#define MAX_EVENTS (GP_ARRAY_SIZE(sw_events) + GP_ARRAY_SIZE(hw_events))

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static gp__counter_def defs[MAX_EVENTS];
static const perf_event_def *def_src[MAX_EVENTS]; /* by catalog index */
static gp_counter_block_info blocks[NUM_BLOCKS];
static gp__catalog catalog;
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;

static const gp_counter_group_info groups[] = {
    {GP_COUNTER_GROUP_SYSTEM, 0, "System", "the host CPU"},
    {GROUP_SW, 0, "Software events", "counted by the kernel"},
    {GROUP_HW, 0, "Hardware events", "counted by the CPU's PMU"},
};

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu,
                               int group, unsigned long flags) {
  return (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

/* How an event follows the tasks the counted one creates. */
enum { FOLLOW_NONE, FOLLOW_ALL, FOLLOW_THREADS };

static void attr_init(struct perf_event_attr *a, const perf_event_def *e,
                      bool user_only, int follow) {
  memset(a, 0, sizeof(*a));
  a->size = sizeof(*a);
  a->type = e->type;
  a->config = e->config;
  a->read_format =
      PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  a->inherit = follow != FOLLOW_NONE;
  a->inherit_thread = follow == FOLLOW_THREADS;
  a->exclude_kernel = user_only;
  a->exclude_hv = user_only;
}

/* Opens one event on task tid (0: the calling one); -errno on failure.
 * FOLLOW_THREADS needs Linux 5.13: before, the kernel says EINVAL and the
 * event follows every task created instead (FOLLOW_ALL). */
static int open_event_on(const perf_event_def *e, pid_t tid, int follow) {
  struct perf_event_attr a;
  int fd = -1;
  for (int tries = 0; tries < 2; tries++) {
    attr_init(&a, e, false, follow);
    fd = sys_perf_event_open(&a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
      attr_init(&a, e, true, follow);
      fd = sys_perf_event_open(&a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd >= 0 || errno != EINVAL || follow != FOLLOW_THREADS)
      break;
    follow = FOLLOW_ALL;
  }
  return fd >= 0 ? fd : -errno;
}

/* Opens one event on the calling process; -errno on failure. */
static int open_event(const perf_event_def *e, bool inherit) {
  return open_event_on(e, 0, inherit ? FOLLOW_ALL : FOLLOW_NONE);
}

static void add_def(uint32_t *n, const perf_event_def *e, uint32_t block) {
  gp__counter_def *d = &defs[*n];
  memset(d, 0, sizeof(*d));
  d->info.id = e->id;
  d->info.name = e->name;
  d->info.description = e->description;
  d->info.category = block == BLOCK_SOFTWARE ? "software" : "hardware";
  d->info.type = GP_COUNTER_TYPE_INT64;
  d->info.block_id = block;
  d->info.num_numerator_units = e->unit != GP_UNIT_NONE;
  d->info.numerator_units[0] = e->unit;
  d->info.num_groups = 2;
  d->info.groups[0] = GP_COUNTER_GROUP_SYSTEM;
  d->info.groups[1] = block == BLOCK_SOFTWARE ? GROUP_SW : GROUP_HW;
  d->info.select_by_default = e->id == 1 || e->id == 3 || e->id == 4 ||
                              e->id == 5 || e->id == 101 || e->id == 102;
  d->combine = GP__SUM;
  def_src[*n] = e;
  (*n)++;
}

/* Builds the catalog: software events always, hardware ones the kernel
 * accepts (an event it refuses for permission is left out too: whether
 * the PMU has it cannot be known). */
static void probe(void) {
  uint32_t n = 0;
  for (size_t i = 0; i < GP_ARRAY_SIZE(sw_events); i++)
    add_def(&n, &sw_events[i], BLOCK_SOFTWARE);
  uint32_t nsw = n;
  for (size_t i = 0; i < GP_ARRAY_SIZE(hw_events); i++) {
    int fd = open_event(&hw_events[i], false);
    if (fd >= 0) {
      close(fd);
      add_def(&n, &hw_events[i], BLOCK_HARDWARE);
    }
  }
  blocks[BLOCK_SOFTWARE] = (gp_counter_block_info){
      BLOCK_SOFTWARE,
      nsw,
      0,
      0,
      "software",
      "software events the kernel counts (all at once)"};
  blocks[BLOCK_HARDWARE] = (gp_counter_block_info){
      BLOCK_HARDWARE,
      HW_CAPACITY,
      0,
      0,
      "cpu",
      "hardware events of the CPU's PMU (4 at once, so that values are "
      "never estimates from multiplexing)"};
  catalog.counters = defs;
  catalog.num_counters = n;
  catalog.num_blocks = NUM_BLOCKS;
  catalog.blocks = blocks;
  catalog.groups = groups;
  catalog.num_groups = GP_ARRAY_SIZE(groups);
  catalog.max_active = nsw + HW_CAPACITY;
  catalog.min_period_ns = 1000000;        /* 1 ms: a thread wakes up */
  catalog.max_period_ns = 60000000000ull; /* 1 min */
  catalog.supports_instrumented = 0;
  catalog.has_scheduler = 0;
}

/* See perf.h. */
const gp__catalog *gp__perf_catalog(void) {
  pthread_once(&probe_once, probe);
  return &catalog;
}

/* ------------------------------------------------------------------ */
/* Event sets                                                           */

/* n events on each of ntask tasks: fd[t * n + i] is event i of task t;
 * last[] its last value read (a task that ended keeps its count). */
struct gp__perf_set {
  size_t n, ntask, cap; /* cap: tasks room was made for */
  int *fd;
  double *last;
};

static gp__perf_set *set_alloc(size_t n, size_t tasks) {
  gp__perf_set *s = calloc(1, sizeof(*s));
  if (!s)
    return NULL;
  s->n = n;
  s->cap = tasks;
  size_t k = n * tasks > 0 ? n * tasks : 1;
  s->fd = malloc(k * sizeof(*s->fd));
  s->last = calloc(k, sizeof(*s->last));
  if (!s->fd || !s->last) {
    free(s->fd);
    free(s->last);
    free(s);
    return NULL;
  }
  return s;
}

/* Opens the n events of index[] on task tid as task slot s->ntask; 0, or
 * the first event's error (nothing opened then). */
static int set_add_task(gp__perf_set *s, const uint32_t *index, pid_t tid,
                        int follow) {
  int *fd = s->fd + s->ntask * s->n;
  for (size_t i = 0; i < s->n; i++) {
    fd[i] = open_event_on(def_src[index[i]], tid, follow);
    if (fd[i] < 0) {
      int rc = fd[i] == -ENOENT || fd[i] == -EOPNOTSUPP ? GP_ENOTSUP : fd[i];
      while (i-- > 0)
        close(fd[i]);
      return rc;
    }
  }
  s->ntask++;
  return 0;
}

/* See perf.h. */
int gp__perf_set_open(const uint32_t *index, size_t n, bool inherit,
                      gp__perf_set **out) {
  const gp__catalog *cat = gp__perf_catalog();
  if (n > GP_PERFMON_MAX_COUNTERS || !out)
    return GP_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (index[i] >= cat->num_counters)
      return GP_EINVAL;
  gp__perf_set *s = set_alloc(n, 1);
  if (!s)
    return GP_ENOMEM;
  int rc = set_add_task(s, index, 0, inherit ? FOLLOW_ALL : FOLLOW_NONE);
  if (rc != 0) {
    gp__perf_set_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* Reads the thread ids of /proc/self/task not yet in tids[0 .. *nt - 1]
 * into it, up to max; returns how many were added, or -errno. */
static int scan_tasks(pid_t *tids, size_t *nt, size_t max, bool *full) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -errno;
  int added = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    char *end;
    long v = strtol(de->d_name, &end, 10);
    if (*end || v <= 0)
      continue;
    bool seen = false;
    for (size_t i = 0; i < *nt && !seen; i++)
      seen = tids[i] == (pid_t)v;
    if (seen)
      continue;
    if (*nt == max) {
      *full = true;
      break;
    }
    tids[(*nt)++] = (pid_t)v;
    added++;
  }
  closedir(d);
  return added;
}

/* See perf.h. */
int gp__perf_set_open_process(const uint32_t *index, size_t n,
                              gp__perf_set **out, size_t *left_out) {
  const gp__catalog *cat = gp__perf_catalog();
  if (n == 0 || n > GP_PERFMON_MAX_COUNTERS || !out)
    return GP_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (index[i] >= cat->num_counters)
      return GP_EINVAL;
  size_t max = GP_PERF_MAX_FDS / n;
  pid_t *tids = malloc(max * sizeof(*tids));
  gp__perf_set *s = tids ? set_alloc(n, max) : NULL;
  if (!s) {
    free(tids);
    return GP_ENOMEM;
  }
  size_t nt = 0, done = 0;
  bool full = false;
  int rc = 0;
  /* Threads made while the first ones were being opened are caught by a
   * second look (or counted by the thread that made them, if it was open
   * by then); a few looks settle it. */
  for (int pass = 0; pass < 4 && rc == 0; pass++) {
    int k = scan_tasks(tids, &nt, max, &full);
    if (k < 0 && pass == 0)
      rc = k;
    if (k <= 0)
      break;
    for (; done < nt; done++) {
      int r = set_add_task(s, index, tids[done], FOLLOW_THREADS);
      if (r == -ESRCH)
        continue; /* the thread ended in between: nothing of it to count */
      if (r != 0 && s->ntask == 0) {
        rc = r;
        break;
      }
      if (r != 0)
        full = true; /* out of descriptors, most likely */
    }
  }
  free(tids);
  if (rc == 0 && s->ntask == 0)
    rc = -ESRCH;
  if (rc != 0) {
    gp__perf_set_close(s);
    return rc;
  }
  if (left_out)
    *left_out = full;
  *out = s;
  return 0;
}

/* See perf.h. */
int gp__perf_set_read(gp__perf_set *s, double *values) {
  for (size_t i = 0; i < s->n; i++) {
    double sum = 0;
    for (size_t t = 0; t < s->ntask; t++) {
      size_t k = t * s->n + i;
      uint64_t buf[3] = {0, 0, 0}; /* value, time enabled, time running */
      ssize_t r = read(s->fd[k], buf, sizeof(buf));
      if (r != (ssize_t)sizeof(buf)) {
        if (t == 0)
          return r < 0 ? -errno : GP_EIO;
        sum += s->last[k]; /* an ended thread: its count as last read */
        continue;
      }
      double v = (double)buf[0];
      if (buf[2] > 0 && buf[2] < buf[1])
        v *= (double)buf[1] / (double)buf[2]; /* multiplexed: scale up */
      s->last[k] = v;
      sum += v;
    }
    values[i] = sum;
  }
  return 0;
}

/* See perf.h. */
void gp__perf_set_close(gp__perf_set *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->n * s->ntask; i++)
    close(s->fd[i]);
  free(s->fd);
  free(s->last);
  free(s);
}

/* ------------------------------------------------------------------ */
/* Provider hooks                                                       */

static int pe_open(void *prov, gp_perfmon *pm) {
  (void)prov;
  gp__perf_set *s = NULL;
  int rc = gp__perf_set_open(pm->index, pm->num_counters, true, &s);
  if (rc == 0)
    pm->hw = s;
  return rc;
}

static void pe_close(void *prov, gp_perfmon *pm) {
  (void)prov;
  gp__perf_set_close(pm->hw);
  pm->hw = NULL;
}

/* Host counters run with no jobs: a read is never pending. */
static int pe_read(void *prov, gp_perfmon *pm, bool wait,
                   gp_counter_value *out) {
  (void)prov;
  (void)wait;
  double v[GP_PERFMON_MAX_COUNTERS];
  pthread_mutex_lock(&perf_lock);
  int rc = gp__perf_set_read(pm->hw, v);
  if (rc == 0) {
    for (uint32_t i = 0; i < pm->num_counters; i++)
      pm->num[i] = v[i]; /* the kernel accumulates: values are totals */
    gp__perfmon_values(pm, out);
  }
  pthread_mutex_unlock(&perf_lock);
  return rc;
}

/* Periodic sampling: a thread reads the events every period and writes
 * the increase over each window. */
typedef struct pe_sampling {
  gp__sampler *s;
  gp__perf_set *set;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
  uint64_t last_ts;
  double last[GP_PERFMON_MAX_COUNTERS];
} pe_sampling;

static void pe_emit(pe_sampling *ps) {
  double v[GP_PERFMON_MAX_COUNTERS];
  if (gp__perf_set_read(ps->set, v) != 0)
    return;
  uint64_t now = gp_get_timestamp();
  for (uint32_t i = 0; i < ps->s->num_counters; i++)
    gp__counter_emit(ps->s->cat, ps->s->device_id, ps->s->index[i],
                     v[i] - ps->last[i], 0.0, now, ps->last_ts, 0, 0, 0);
  memcpy(ps->last, v, sizeof(v));
  ps->last_ts = now;
}

static void *pe_thread(void *arg) {
  pe_sampling *ps = arg;
  pthread_mutex_lock(&ps->lock);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!ps->stop) {
    uint64_t ns = (uint64_t)next.tv_nsec + ps->s->period_ns;
    next.tv_sec += (time_t)(ns / 1000000000ull);
    next.tv_nsec = (long)(ns % 1000000000ull);
    while (!ps->stop &&
           pthread_cond_timedwait(&ps->cond, &ps->lock, &next) != ETIMEDOUT) {
    }
    pe_emit(ps); /* also the last, partial window at stop */
  }
  pthread_mutex_unlock(&ps->lock);
  return NULL;
}

static int pe_sampling_start(void *prov, gp__sampler *s) {
  (void)prov;
  pe_sampling *ps = calloc(1, sizeof(*ps));
  if (!ps)
    return GP_ENOMEM;
  int rc = gp__perf_set_open(s->index, s->num_counters, true, &ps->set);
  if (rc != 0)
    goto fail;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&ps->cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&ps->lock, NULL);
  ps->s = gp__sampler_get(s);
  ps->last_ts = gp_get_timestamp();
  gp__perf_set_read(ps->set, ps->last);
  if (gp__thread_start(&ps->thread, NULL, pe_thread, ps) != 0) {
    rc = GP_ENOMEM;
    gp__sampler_put(ps->s);
    pthread_cond_destroy(&ps->cond);
    pthread_mutex_destroy(&ps->lock);
    goto fail;
  }
  s->prov_data = ps;
  return 0;
fail:
  gp__perf_set_close(ps->set);
  free(ps);
  return rc;
}

static void pe_sampling_stop(void *prov, gp__sampler *s) {
  (void)prov;
  pe_sampling *ps = s->prov_data;
  if (!ps)
    return;
  pthread_mutex_lock(&ps->lock);
  ps->stop = true;
  pthread_cond_signal(&ps->cond);
  pthread_mutex_unlock(&ps->lock);
  pthread_join(ps->thread, NULL);
  gp__perf_set_close(ps->set);
  pthread_cond_destroy(&ps->cond);
  pthread_mutex_destroy(&ps->lock);
  s->prov_data = NULL;
  gp__sampler_put(ps->s);
  free(ps);
}

static const gp__provider_ops perf_provider = {
    .perfmon_open = pe_open,
    .perfmon_close = pe_close,
    .perfmon_read = pe_read,
    .sampling_start = pe_sampling_start,
    .sampling_stop = pe_sampling_stop,
};

/* ------------------------------------------------------------------ */
/* The host device                                                      */

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static uint32_t host_id;
static int host_rc;

/* Copies the value of the first "key : value" line of /proc/cpuinfo. */
static void cpuinfo(const char *key, char *buf, size_t size) {
  buf[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return;
  char line[512];
  size_t klen = strlen(key);
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, klen) != 0)
      continue;
    char *colon = strchr(line, ':');
    if (!colon)
      continue;
    colon++;
    while (*colon == ' ' || *colon == '\t')
      colon++;
    colon[strcspn(colon, "\n")] = '\0';
    snprintf(buf, size, "%s", colon);
    break;
  }
  fclose(f);
}

static void host_register(void) {
  const gp__catalog *cat = gp__perf_catalog();
  char model[160], vendor[64], name[200];
  struct utsname u;
  cpuinfo("model name", model, sizeof(model));
  if (!model[0])
    cpuinfo("Model", model, sizeof(model));
  cpuinfo("vendor_id", vendor, sizeof(vendor));
  if (uname(&u) != 0)
    snprintf(u.machine, sizeof(u.machine), "unknown");
  snprintf(name, sizeof(name), "Host CPU (%s)", model[0] ? model : u.machine);
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.api = GP_API_UNDEFINED;
  info.name = name;
  info.vendor = vendor[0] ? vendor : "unknown";
  info.model = model[0] ? model : u.machine;
  info.architecture = u.machine;
  info.driver_version = u.release;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  info.compute_units = ncpu > 0 ? (uint32_t)ncpu : 1;
  host_rc = gp__device_register(&info, NULL, 0, &host_id);
  if (host_rc == 0)
    host_rc = gp__counters_register(host_id, cat, &perf_provider, NULL);
  if (host_rc == 0)
    gp__counters_announce(host_id);
}

/* See counters.h. */
int gp_host_device_register(uint32_t *device_id) {
  if (!device_id)
    return GP_EINVAL;
  pthread_once(&host_once, host_register);
  if (host_rc != 0)
    return host_rc;
  *device_id = host_id;
  return 0;
}

static int read_paranoid(void) {
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  int v = 0;
  bool ok = f && fscanf(f, "%d", &v) == 1;
  if (f)
    fclose(f);
  return ok ? v : -100;
}

/* See counters.h. */
int gp_host_perf_status(char *msg, size_t size) {
  int fd = open_event(&sw_events[0], false);
  int paranoid = read_paranoid();
  char pv[32];
  if (paranoid == -100)
    snprintf(pv, sizeof(pv), "unreadable");
  else
    snprintf(pv, sizeof(pv), "%d", paranoid);
  if (fd >= 0) {
    close(fd);
    if (msg && size)
      snprintf(msg, size,
               "perf_event_open() can count this process "
               "(kernel.perf_event_paranoid is %s)",
               pv);
    return 0;
  }
  if (msg && size) {
    if (fd == -EACCES || fd == -EPERM) {
      const char *why =
          paranoid >= 3
              ? "which forbids perf_event_open() to unprivileged processes; "
                "lower it (sudo sysctl -w kernel.perf_event_paranoid=2) or "
                "run with CAP_PERFMON"
              : "which allows counting one's own process, so something "
                "else refused it (a seccomp filter or container policy); "
                "allow the perf_event_open system call or run with "
                "CAP_PERFMON";
      snprintf(msg, size,
               "perf_event_open() refused (%s): kernel.perf_event_paranoid "
               "is %s, %s",
               strerror(-fd), pv, why);
    } else if (fd == -ENOSYS) {
      snprintf(msg, size,
               "perf_event_open() is not available (%s): the kernel lacks "
               "CONFIG_PERF_EVENTS (kernel.perf_event_paranoid is %s)",
               strerror(-fd), pv);
    } else {
      snprintf(msg, size,
               "perf_event_open() failed (%s); kernel.perf_event_paranoid "
               "is %s",
               strerror(-fd), pv);
    }
  }
  return fd;
}
