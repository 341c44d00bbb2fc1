/*
 * stat.c - the in-process side of `gpuperf stat`: an environment-triggered
 * session that counts a program from start-up to exit and leaves totals in
 * a file for `gpuperf stat` to print.
 *
 * Protocol (docs/counters.md):
 *   GPUPERF_STAT_DIR=DIR      turns the session on; each process writes
 *                             DIR/stat.PID when it exits
 *   GPUPERF_STAT_EVENTS=LIST  comma-separated counter names or globs
 *                             (empty: each device's default counters)
 *   GPUPERF_STAT_PERIOD_NS=N  sampling period (default 1 ms)
 *
 * At start-up the session enables KERNEL, RENDER_STAGE and COUNTER
 * records, observes every completed buffer, and starts sampling on each
 * device as its catalog is announced (the simulated GPUs when the program
 * first uses them, OpenCL and Vulkan devices as they are made, each with
 * its derived `Utilization` at least): periodically, for totals per
 * counter, and per activity, for totals per kernel. A device whose
 * provider cannot do both at once (a Vulkan device: `Utilization` is
 * periodic, pipeline statistics are per render stage) samples its derived
 * counters periodically, or else per activity. A device whose catalog has
 * no `Utilization` (the simulated V3D, whose catalog is the hardware's)
 * gets one here, as derived.c defines it: the union of its kernels,
 * copies and fills over the time from its announcement to the exit,
 * divided by that time. The host CPU's perf_event
 * counters are opened at once by the first process of the tree
 * (inherited by its children), without registering a device, so the
 * program's devices keep their numbers. At exit the session retires the
 * work still in flight, stops sampling, flushes, and writes the file:
 *
 *   gpuperf-stat 1
 *   process  PID  NAME
 *   counter  DEVICE-NAME  COUNTER  UNITS  sum|avg  VALUE  WEIGHT-NS
 *   kernel   DEVICE-NAME  KERNEL  LAUNCHES  TIME-NS
 *   kvalue   DEVICE-NAME  KERNEL  COUNTER  UNITS  sum|avg  VALUE  WEIGHT-NS
 *   stage    DEVICE-NAME  STAGE  COUNT  TIME-NS
 *   submits  DEVICE-NAME  COUNT
 *   host     COUNTER  UNITS  VALUE
 *   sampled  DEVICE-NAME  NS
 *   running  DEVICE-NAME  COUNTER  RUNNING-NS  ENABLED-NS
 *   krunning DEVICE-NAME  KERNEL  COUNTER  RUNNING-NS  ENABLED-NS
 *   ended    signal
 *
 * "sampled" is the span of a device's periodic windows. A device given
 * more counters than it counts at once multiplexes them
 * (gp_counter_config.multiplex) where it can: then its counter and
 * kvalue sums are perf's estimates, the value counted scaled by
 * ENABLED-NS / RUNNING-NS (the device's sampled span, or the kernel's
 * GPU time, over what the counter's records cover), and a "running" or
 * "krunning" line follows each; a counter that never had its turn has
 * only a "running" line with RUNNING-NS 0.
 *
 * "stage" lines count the render stages of a graphics API (Vulkan): STAGE
 * is "command-buffer", "render-pass", "compute" or "transfer", TIME-NS
 * their summed GPU time; "submits" counts the submissions (queue submit
 * calls) they came from. Values of counters measured per render stage
 * (pipeline statistics) are summed into the device's "counter" lines.
 * "ended signal" is written by a process that is dying of a signal (its
 * counts stop there). Readers skip lines they do not know.
 *
 * Fields are separated by tabs; tabs, newlines and backslashes in names
 * are escaped as \t, \n and \\. "avg" values are time-weighted averages
 * over WEIGHT-NS of sampled time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/linux/drm.h"
#include "backend/linux/perf.h"
#include "counters/busy.h"
#include "counters/countersInt.h"
#include "counters/derived.h"

#define MAX_NAMES 64

typedef struct agg {
  double sum;     /* sum counters: the total; averages: value x weight */
  double weight;  /* ns of sampled time (averages) */
  double running; /* ns its records cover (sums and averages alike) */
} agg;

typedef struct total {
  uint32_t device_id, index; /* catalog index */
  agg a;
} total;

typedef struct kernel_total {
  uint32_t device_id;
  uint32_t name_id;
  uint64_t launches, time_ns;
  agg *vals; /* by catalog index of its device */
  uint32_t num_vals;
} kernel_total;

typedef struct corr_entry {
  uint64_t corr;
  uint32_t value; /* 0: empty */
} corr_entry;

/* A table of correlation ids to small values (open addressing, size a
 * power of two). */
typedef struct corr_table {
  corr_entry *v;
  size_t cap, n;
} corr_table;

/* Render stages of one device (Vulkan). */
typedef struct stage_total {
  uint64_t count[GP_RENDER_STAGE_KIND_COUNT];
  uint64_t time_ns[GP_RENDER_STAGE_KIND_COUNT];
  uint64_t submits; /* distinct correlation ids among its stages */
} stage_total;

/* The busy time of a device without a `Utilization` counter: its work's
 * [start, end) merged into sorted, disjoint intervals. */
typedef struct busy_dev {
  uint64_t from;     /* when sampling started on it (the trace clock) */
  uint64_t last_end; /* the latest end of its work */
  gp__busy b;
  uint64_t folded; /* busy time of intervals folded out of b */
} busy_dev;

#define BUSY_MAX 65536 /* intervals kept; the older half folded past it */

static const char *const stage_names[GP_RENDER_STAGE_KIND_COUNT] = {
    "command-buffer", "render-pass", "compute", "transfer"};

static struct {
  bool on;
  char dir[1024];
  char *names[MAX_NAMES];
  size_t num_names;
  uint64_t period_ns;
  pthread_mutex_t lock;
  total *totals;
  size_t num_totals, cap_totals;
  kernel_total *kernels;
  size_t num_kernels, cap_kernels;
  corr_table corr;   /* kernels' correlation ids -> kernel index + 1 */
  corr_table submit; /* render stages' correlation ids -> device + 1 */
  stage_total *stages[GP__MAX_DEVICES];
  uint32_t api[GP__MAX_DEVICES];   /* gp_api + 1 (0: not looked up) */
  busy_dev *busy[GP__MAX_DEVICES]; /* devices without a Utilization */
  /* The span of each device's periodic windows, [from, to) (to 0: none
   * yet), and whether its counters are time-multiplexed. */
  uint64_t from[GP__MAX_DEVICES], to[GP__MAX_DEVICES];
  bool mux[GP__MAX_DEVICES];
  uint32_t *mux_ids[GP__MAX_DEVICES]; /* what a multiplexed device counts */
  size_t num_mux_ids[GP__MAX_DEVICES];
  gp__perf_set *host;
  uint32_t host_index[GP_PERFMON_MAX_COUNTERS];
  size_t num_host;
  pid_t pid;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------ */
/* Aggregation (collector thread)                                       */

static void agg_add(agg *a, uint32_t combine, double v, uint64_t w) {
  a->running += (double)w;
  if (combine == GP__SUM) {
    a->sum += v;
  } else {
    a->sum += v * (double)w;
    a->weight += (double)w;
  }
}

static total *total_get(uint32_t dev, uint32_t index) {
  for (size_t i = 0; i < st.num_totals; i++)
    if (st.totals[i].device_id == dev && st.totals[i].index == index)
      return &st.totals[i];
  if (st.num_totals == st.cap_totals) {
    size_t ncap = st.cap_totals ? st.cap_totals * 2 : 32;
    total *t = realloc(st.totals, ncap * sizeof(*t));
    if (!t)
      return NULL;
    st.totals = t;
    st.cap_totals = ncap;
  }
  total *t = &st.totals[st.num_totals++];
  memset(t, 0, sizeof(*t));
  t->device_id = dev;
  t->index = index;
  return t;
}

static uint32_t kernel_get(uint32_t dev, uint32_t name_id) {
  for (size_t i = 0; i < st.num_kernels; i++)
    if (st.kernels[i].device_id == dev && st.kernels[i].name_id == name_id)
      return (uint32_t)i + 1;
  if (st.num_kernels == st.cap_kernels) {
    size_t ncap = st.cap_kernels ? st.cap_kernels * 2 : 32;
    kernel_total *k = realloc(st.kernels, ncap * sizeof(*k));
    if (!k)
      return 0;
    st.kernels = k;
    st.cap_kernels = ncap;
  }
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  kernel_total *k = &st.kernels[st.num_kernels];
  memset(k, 0, sizeof(*k));
  k->device_id = dev;
  k->name_id = name_id;
  if (cat) {
    k->vals = calloc(cat->num_counters, sizeof(*k->vals));
    k->num_vals = k->vals ? cat->num_counters : 0;
  }
  return (uint32_t)++st.num_kernels;
}

static size_t corr_hash(uint64_t corr, size_t cap) {
  return (size_t)(corr * 0x9e3779b97f4a7c15ull) & (cap - 1);
}

/* Sets corr's value in t; false when out of memory (nothing changed). */
static bool corr_put(corr_table *t, uint64_t corr, uint32_t value) {
  if (t->n * 2 >= t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 1024;
    corr_entry *n = calloc(ncap, sizeof(*n));
    if (!n)
      return false;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->v[i].value)
        continue;
      size_t h = corr_hash(t->v[i].corr, ncap);
      while (n[h].value)
        h = (h + 1) & (ncap - 1);
      n[h] = t->v[i];
    }
    free(t->v);
    t->v = n;
    t->cap = ncap;
  }
  size_t h = corr_hash(corr, t->cap);
  while (t->v[h].value && t->v[h].corr != corr)
    h = (h + 1) & (t->cap - 1);
  if (!t->v[h].value)
    t->n++;
  t->v[h] = (corr_entry){corr, value};
  return true;
}

/* corr's value in t, 0 if it has none. */
static uint32_t corr_find(const corr_table *t, uint64_t corr) {
  if (!t->cap)
    return 0;
  size_t h = corr_hash(corr, t->cap);
  while (t->v[h].value) {
    if (t->v[h].corr == corr)
      return t->v[h].value;
    h = (h + 1) & (t->cap - 1);
  }
  return 0;
}

/* The gp_api of a device (GP_API_UNDEFINED if unknown), looked up once. */
static uint32_t api_of(uint32_t dev) {
  if (dev >= GP__MAX_DEVICES)
    return GP_API_UNDEFINED;
  if (!st.api[dev]) {
    gp_device_info di;
    st.api[dev] = 1 + (gp_device_get_info(dev, &di) == 0 ? di.api : 0);
  }
  return st.api[dev] - 1;
}

/*
 * Adds [s, e) to the busy time of dev, if it is counted here. Past
 * BUSY_MAX intervals the older half is folded into a total: work that
 * arrives later still and overlaps it would count twice (not seen: it
 * takes 32768 disjoint pieces of work in between).
 */
static void busy_note(uint32_t dev, uint64_t s, uint64_t e) {
  busy_dev *b = dev < GP__MAX_DEVICES ? st.busy[dev] : NULL;
  if (!b || e <= s)
    return;
  if (e > b->last_end)
    b->last_end = e;
  if (b->b.n == BUSY_MAX) { /* the first half ends before the next starts */
    uint64_t cut = b->b.v[BUSY_MAX / 2].s;
    b->folded += gp__busy_within(&b->b, 0, cut);
    gp__busy_drop_before(&b->b, cut);
  }
  gp__busy_add(&b->b, s, e);
}

static void on_kernel(const gp_activity_kernel *k) {
  busy_note(k->device_id, k->start, k->end);
  uint32_t name = k->demangled_name_id ? k->demangled_name_id : k->name_id;
  uint32_t ki = kernel_get(k->device_id, name);
  if (!ki)
    return;
  st.kernels[ki - 1].launches++;
  st.kernels[ki - 1].time_ns += k->end > k->start ? k->end - k->start : 0;
  corr_put(&st.corr, k->correlation_id, ki);
}

static void on_stage(const gp_activity_render_stage *r) {
  if (r->device_id >= GP__MAX_DEVICES || r->stage >= GP_RENDER_STAGE_KIND_COUNT)
    return;
  stage_total *t = st.stages[r->device_id];
  if (!t && !(t = st.stages[r->device_id] = calloc(1, sizeof(*t))))
    return;
  t->count[r->stage]++;
  t->time_ns[r->stage] += r->end > r->start ? r->end - r->start : 0;
  /* The stages of one submission share its correlation id. */
  if (r->correlation_id && !corr_find(&st.submit, r->correlation_id) &&
      corr_put(&st.submit, r->correlation_id, r->device_id + 1))
    t->submits++;
}

static void on_counter(const gp_activity_counter *c) {
  const gp__catalog *cat = gp__catalog_get(c->device_id, NULL);
  int idx = cat ? gp__catalog_find(cat, c->counter_id) : -1;
  if (idx < 0)
    return;
  double v =
      c->value_type == GP_VALUE_INT64 ? (double)c->value.i64 : c->value.f64;
  uint64_t w =
      c->timestamp > c->window_start ? c->timestamp - c->window_start : 0;
  uint32_t combine = cat->counters[idx].combine;
  /* The span of the periodic windows: what a multiplexed counter could
   * have counted, and what a device's rates are over. */
  if (c->correlation_id == 0 && c->device_id < GP__MAX_DEVICES) {
    uint32_t d = c->device_id;
    if (!st.to[d] || c->window_start < st.from[d])
      st.from[d] = c->window_start;
    if (c->timestamp > st.to[d])
      st.to[d] = c->timestamp;
  }
  /* Periodic values, and those measured per render stage (a Vulkan
   * device's pipeline statistics), make the device's totals. */
  if (c->correlation_id == 0 || api_of(c->device_id) == GP_API_VULKAN) {
    total *t = total_get(c->device_id, (uint32_t)idx);
    if (t)
      agg_add(&t->a, combine, v, w);
    return;
  }
  uint32_t ki = corr_find(&st.corr, c->correlation_id);
  if (ki && (uint32_t)idx < st.kernels[ki - 1].num_vals)
    agg_add(&st.kernels[ki - 1].vals[idx], combine, v, w);
}

static void observe(void *user, const uint8_t *buf, size_t valid) {
  (void)user;
  const gp_activity *r = NULL;
  pthread_mutex_lock(&st.lock);
  while (gp_activity_get_next_record(buf, valid, &r) == 0) {
    if (r->kind == GP_ACTIVITY_KIND_KERNEL &&
        r->size >= sizeof(gp_activity_kernel))
      on_kernel((const gp_activity_kernel *)r);
    else if (r->kind == GP_ACTIVITY_KIND_COUNTER &&
             r->size >= sizeof(gp_activity_counter))
      on_counter((const gp_activity_counter *)r);
    else if (r->kind == GP_ACTIVITY_KIND_RENDER_STAGE &&
             r->size >= sizeof(gp_activity_render_stage))
      on_stage((const gp_activity_render_stage *)r);
    else if (r->kind == GP_ACTIVITY_KIND_MEMCPY &&
             r->size >= sizeof(gp_activity_memcpy)) {
      const gp_activity_memcpy *m = (const gp_activity_memcpy *)r;
      busy_note(m->device_id, m->start, m->end);
    } else if (r->kind == GP_ACTIVITY_KIND_MEMSET &&
               r->size >= sizeof(gp_activity_memset)) {
      const gp_activity_memset *m = (const gp_activity_memset *)r;
      busy_note(m->device_id, m->start, m->end);
    }
  }
  pthread_mutex_unlock(&st.lock);
}

/* ------------------------------------------------------------------ */
/* Starting on devices                                                  */

static void device_name(uint32_t dev, char *buf, size_t size);

/* Starts sampling on dev with the counters ids[n] (catalog ids), period
 * and instrumented as given; says why on stderr if it cannot. */
static int start_on(uint32_t dev, const gp__catalog *cat, const uint32_t *ids,
                    size_t n, bool periodic, bool instrumented) {
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  if (periodic) {
    c.counter_period_ns = gp__catalog_period(cat, st.period_ns);
  }
  c.counter_ids = ids;
  c.num_counter_ids = n;
  c.instrumented = instrumented;
  c.multiplex = 1; /* where the device can, as perf does */
  return gp_counters_start(dev, &c);
}

/* Counts the busy time of dev here when its catalog has no Utilization
 * and Utilization is wanted (no -e, or -e naming it). */
static void want_busy(uint32_t dev, const gp__catalog *cat) {
  static const char *const util[] = {"Utilization"};
  uint32_t id;
  size_t n = 0;
  if (dev >= GP__MAX_DEVICES ||
      gp__catalog_select(cat, util, 1, true, &id, 1, &n) != 0 || n > 0)
    return; /* it has its own */
  bool asked = st.num_names == 0;
  for (size_t i = 0; i < st.num_names && !asked; i++)
    asked = strpbrk(st.names[i], "*?[") ? gp__glob_match(st.names[i], util[0])
                                        : strcmp(st.names[i], util[0]) == 0;
  if (!asked)
    return;
  busy_dev *b = calloc(1, sizeof(*b));
  if (!b)
    return;
  b->from = gp_get_timestamp();
  pthread_mutex_lock(&st.lock);
  if (!st.busy[dev])
    st.busy[dev] = b;
  else
    free(b);
  pthread_mutex_unlock(&st.lock);
}

static bool is_derived(const gp__counter_def *d) {
  return d->info.category && strcmp(d->info.category, "derived") == 0;
}

/* Starts sampling on a device with whichever of the requested counters
 * it has (its defaults when none were requested): periodically and per
 * activity where it can. A provider that does one or the other (a Vulkan
 * device) samples the derived counters (`Utilization`) periodically, or,
 * when none of them was asked for, the rest per activity. */
static void on_device(uint32_t dev) {
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  if (!cat || cat == gp__perf_catalog())
    return; /* the host CPU is counted by the perf_event set */
  want_busy(dev, cat);
  uint32_t ids[GP_PERFMON_MAX_COUNTERS];
  size_t n = 0;
  if (st.num_names) {
    int rc =
        gp__catalog_select(cat, (const char *const *)st.names, st.num_names,
                           true, ids, GP_PERFMON_MAX_COUNTERS, &n);
    if (rc != 0)
      fprintf(stderr, "gpuperf stat: cannot count on device %u: %s\n", dev,
              rc == GP_ENOSPC ? "more counters than one sampling takes"
                              : gp_strerror(rc));
    if (rc != 0 || n == 0)
      return;
  } else {
    for (uint32_t i = 0; i < cat->num_counters && n < GP_PERFMON_MAX_COUNTERS;
         i++)
      if (cat->counters[i].info.select_by_default)
        ids[n++] = cat->counters[i].info.id;
    if (n == 0)
      return;
  }
  if (dev < GP__MAX_DEVICES && cat->supports_multiplex &&
      gp__catalog_check(cat, ids, n, NULL) == GP_ECAPACITY &&
      (st.mux_ids[dev] = malloc(n * sizeof(*ids)))) {
    memcpy(st.mux_ids[dev], ids, n * sizeof(*ids));
    st.num_mux_ids[dev] = n;
    st.mux[dev] = true;
  }
  int rc = start_on(dev, cat, ids, n, true, cat->supports_instrumented);
  if (rc == GP_ENOTSUP && cat->supports_instrumented) {
    uint32_t derived[GP_PERFMON_MAX_COUNTERS], other[GP_PERFMON_MAX_COUNTERS];
    size_t nd = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
      int idx = gp__catalog_find(cat, ids[i]);
      if (idx >= 0 && is_derived(&cat->counters[idx]))
        derived[nd++] = ids[i];
      else
        other[no++] = ids[i];
    }
    if (nd) {
      rc = start_on(dev, cat, derived, nd, true, false);
      if (rc == 0 && no) {
        char name[256], list[512] = "";
        device_name(dev, name, sizeof(name));
        for (size_t i = 0; i < no; i++) {
          int idx = gp__catalog_find(cat, other[i]);
          size_t o = strlen(list);
          snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                   idx >= 0 ? cat->counters[idx].info.name : "?");
        }
        fprintf(stderr,
                "gpuperf stat: %s: %s (counted per activity) cannot be "
                "counted with its derived counters in one run: left out\n",
                name, list);
      }
    } else {
      rc = start_on(dev, cat, other, no, false, true);
    }
  }
  if (rc != 0)
    fprintf(stderr, "gpuperf stat: cannot count on device %u: %s\n", dev,
            gp_strerror(rc));
}

static void open_host(void) {
  /* Children inherit the first process's events: count once. */
  char pid[32];
  const char *owner = getenv("GPUPERF_STAT_HOST_PID");
  if (owner && *owner)
    return;
  snprintf(pid, sizeof(pid), "%d", (int)getpid());
  setenv("GPUPERF_STAT_HOST_PID", pid, 1);
  const gp__catalog *cat = gp__perf_catalog();
  size_t n = 0;
  for (uint32_t i = 0; i < cat->num_counters && n < GP_PERFMON_MAX_COUNTERS;
       i++) {
    const char *cn = cat->counters[i].info.name;
    bool want =
        st.num_names == 0 ? cat->counters[i].info.select_by_default : false;
    for (size_t j = 0; j < st.num_names && !want; j++)
      want = strpbrk(st.names[j], "*?[") ? gp__glob_match(st.names[j], cn)
                                         : strcmp(st.names[j], cn) == 0;
    if (want)
      st.host_index[n++] = i;
  }
  if (n == 0)
    return;
  int rc = gp__perf_set_open(st.host_index, n, true, &st.host);
  if (rc != 0) {
    char msg[512];
    gp_host_perf_status(msg, sizeof(msg));
    fprintf(stderr, "gpuperf stat: host CPU counters unavailable: %s\n",
            rc == GP_ENOTSUP ? gp_strerror(rc) : msg);
    return;
  }
  st.num_host = n;
}

/* ------------------------------------------------------------------ */
/* Writing the file                                                     */

static void put_escaped(FILE *f, const char *s) {
  fputc('\t', f);
  for (; s && *s; s++) {
    if (*s == '\t')
      fputs("\\t", f);
    else if (*s == '\n')
      fputs("\\n", f);
    else if (*s == '\\')
      fputs("\\\\", f);
    else
      fputc(*s, f);
  }
}

static const char *units_of(const gp_counter_info *c, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < c->num_numerator_units && i < GP_COUNTER_MAX_UNITS;
       i++)
    o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "%s%s", i ? "*" : "",
                          gp_unit_name(c->numerator_units[i]));
  for (uint32_t i = 0; i < c->num_denominator_units && i < GP_COUNTER_MAX_UNITS;
       i++)
    o += (size_t)snprintf(buf + o, o < n ? n - o : 0, "%s%s", i ? "*" : "/",
                          gp_unit_name(c->denominator_units[i]));
  if (!buf[0])
    snprintf(buf, n, "-");
  return buf;
}

/* Writes a's value; enabled: the ns it could have counted, of which it
 * counted a->running (multiplexed: a sum is scaled by enabled / running,
 * perf's estimate), or 0 (not multiplexed). */
static void put_value(FILE *f, const gp__counter_def *def, const agg *a,
                      double enabled) {
  char units[96];
  units_of(&def->info, units, sizeof(units));
  put_escaped(f, def->info.name);
  put_escaped(f, units);
  double scale = enabled > 0 && a->running > 0 ? enabled / a->running : 1.0;
  if (def->combine == GP__SUM)
    fprintf(f, "\tsum\t%.17g\t0\n", a->sum * scale);
  else
    fprintf(f, "\tavg\t%.17g\t%.17g\n", a->weight > 0 ? a->sum / a->weight : 0,
            a->weight);
}

static void device_name(uint32_t dev, char *buf, size_t size) {
  gp_device_info di;
  if (gp_device_get_info(dev, &di) == 0)
    snprintf(buf, size, "%s", di.name);
  else
    snprintf(buf, size, "device %u", dev);
}

/* A "running" line with 0 ns for each counter of a multiplexed device that
 * never had its turn (perf's "<not counted>"). Lock held. */
static void put_not_counted(FILE *f) {
  char name[256];
  for (uint32_t d = 0; d < GP__MAX_DEVICES; d++) {
    const gp__catalog *cat = st.mux[d] ? gp__catalog_get(d, NULL) : NULL;
    if (!cat || st.to[d] <= st.from[d])
      continue;
    for (size_t i = 0; i < st.num_mux_ids[d]; i++) {
      int idx = gp__catalog_find(cat, st.mux_ids[d][i]);
      bool seen = idx < 0;
      for (size_t j = 0; j < st.num_totals && !seen; j++)
        seen =
            st.totals[j].device_id == d && st.totals[j].index == (uint32_t)idx;
      if (seen)
        continue;
      device_name(d, name, sizeof(name));
      fputs("running", f);
      put_escaped(f, name);
      put_escaped(f, cat->counters[idx].info.name);
      fprintf(f, "\t0\t%llu\n", (unsigned long long)(st.to[d] - st.from[d]));
    }
  }
}

static void write_file(void) {
  char path[1200], tmp[1300], name[256], comm[64] = "";
  snprintf(path, sizeof(path), "%s/stat.%d", st.dir, (int)getpid());
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "gpuperf stat: cannot write %s: %s\n", tmp,
            strerror(errno));
    return;
  }
  FILE *c = fopen("/proc/self/comm", "r");
  if (c) {
    if (fgets(comm, sizeof(comm), c))
      comm[strcspn(comm, "\n")] = '\0';
    fclose(c);
  }
  fprintf(f, "gpuperf-stat\t1\nprocess\t%d", (int)getpid());
  put_escaped(f, comm);
  fputc('\n', f);
  pthread_mutex_lock(&st.lock);
  for (size_t i = 0; i < st.num_totals; i++) {
    const total *t = &st.totals[i];
    const gp__catalog *cat = gp__catalog_get(t->device_id, NULL);
    device_name(t->device_id, name, sizeof(name));
    uint32_t d = t->device_id;
    bool mux = d < GP__MAX_DEVICES && st.mux[d] && st.to[d] > st.from[d];
    double enabled = mux ? (double)(st.to[d] - st.from[d]) : 0;
    fputs("counter", f);
    put_escaped(f, name);
    put_value(f, &cat->counters[t->index], &t->a, enabled);
    if (mux) {
      fputs("running", f);
      put_escaped(f, name);
      put_escaped(f, cat->counters[t->index].info.name);
      fprintf(f, "\t%.17g\t%.17g\n", t->a.running, enabled);
    }
  }
  put_not_counted(f);
  for (uint32_t d = 0; d < GP__MAX_DEVICES; d++) {
    if (st.to[d] <= st.from[d])
      continue;
    device_name(d, name, sizeof(name));
    fputs("sampled", f);
    put_escaped(f, name);
    fprintf(f, "\t%llu\n", (unsigned long long)(st.to[d] - st.from[d]));
  }
  for (size_t i = 0; i < st.num_kernels; i++) {
    const kernel_total *k = &st.kernels[i];
    const gp__catalog *cat = gp__catalog_get(k->device_id, NULL);
    device_name(k->device_id, name, sizeof(name));
    fputs("kernel", f);
    put_escaped(f, name);
    put_escaped(f, gp_activity_string(k->name_id));
    fprintf(f, "\t%llu\t%llu\n", (unsigned long long)k->launches,
            (unsigned long long)k->time_ns);
    for (uint32_t j = 0; j < k->num_vals; j++) {
      if (k->vals[j].sum == 0.0 && k->vals[j].weight == 0.0)
        continue;
      bool mux = k->device_id < GP__MAX_DEVICES && st.mux[k->device_id];
      double enabled = mux ? (double)k->time_ns : 0;
      fputs("kvalue", f);
      put_escaped(f, name);
      put_escaped(f, gp_activity_string(k->name_id));
      put_value(f, &cat->counters[j], &k->vals[j], enabled);
      if (mux) {
        fputs("krunning", f);
        put_escaped(f, name);
        put_escaped(f, gp_activity_string(k->name_id));
        put_escaped(f, cat->counters[j].info.name);
        fprintf(f, "\t%.17g\t%.17g\n", k->vals[j].running, enabled);
      }
    }
  }
  uint64_t now = gp_get_timestamp();
  for (uint32_t d = 0; d < GP__MAX_DEVICES; d++) {
    const busy_dev *b = st.busy[d];
    if (!b)
      continue;
    uint64_t end = b->last_end > now ? b->last_end : now;
    uint64_t t = b->folded + gp__busy_within(&b->b, b->from, UINT64_MAX);
    if (end <= b->from)
      continue;
    device_name(d, name, sizeof(name));
    fputs("counter", f);
    put_escaped(f, name);
    fprintf(f, "\tUtilization\tPERCENT\tavg\t%.17g\t%llu\n",
            100.0 * (double)t / (double)(end - b->from),
            (unsigned long long)(end - b->from));
  }
  for (uint32_t d = 0; d < GP__MAX_DEVICES; d++) {
    const stage_total *t = st.stages[d];
    if (!t)
      continue;
    device_name(d, name, sizeof(name));
    for (uint32_t k = 0; k < GP_RENDER_STAGE_KIND_COUNT; k++) {
      if (!t->count[k])
        continue;
      fputs("stage", f);
      put_escaped(f, name);
      put_escaped(f, stage_names[k]);
      fprintf(f, "\t%llu\t%llu\n", (unsigned long long)t->count[k],
              (unsigned long long)t->time_ns[k]);
    }
    fputs("submits", f);
    put_escaped(f, name);
    fprintf(f, "\t%llu\n", (unsigned long long)t->submits);
  }
  pthread_mutex_unlock(&st.lock);
  if (st.host) {
    double v[GP_PERFMON_MAX_COUNTERS];
    const gp__catalog *cat = gp__perf_catalog();
    if (gp__perf_set_read(st.host, v) == 0) {
      for (size_t i = 0; i < st.num_host; i++) {
        char units[96];
        const gp_counter_info *ci = &cat->counters[st.host_index[i]].info;
        fputs("host", f);
        put_escaped(f, ci->name);
        put_escaped(f, units_of(ci, units, sizeof(units)));
        fprintf(f, "\t%.17g\n", v[i]);
      }
    }
  }
  if (gp__dying())
    fputs("ended\tsignal\n", f);
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
    fprintf(stderr, "gpuperf stat: cannot write %s: %s\n", path,
            strerror(errno));
    unlink(tmp);
  }
}

/* ------------------------------------------------------------------ */
/* Start and exit                                                       */

static void stat_exit(void) {
  /* A child forked without exec inherits this handler and a copy of the
   * totals: only the process that started the session writes them. */
  if (!st.on || getpid() != st.pid)
    return;
  st.on = false;
  gp__counters_remove_device_hook(on_device);
  /* Retire what is in flight (per-kernel values), close the sampling
   * windows, then deliver everything to the observer. */
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  gp_counters_stop(GP_ALL_DEVICES);
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  gp__activity_remove_observer(observe, NULL);
  write_file();
  gp__perf_set_close(st.host);
  st.host = NULL;
}

static void parse_events(const char *list) {
  const char *p = list;
  while (p && *p && st.num_names < MAX_NAMES) {
    size_t len = strcspn(p, ",");
    if (len > 0) {
      char *n = strndup(p, len);
      if (n)
        st.names[st.num_names++] = n;
    }
    p += len;
    if (*p == ',')
      p++;
  }
}

__attribute__((constructor)) static void stat_start(void) {
  const char *dir = getenv("GPUPERF_STAT_DIR");
  if (!dir || !*dir)
    return;
  if (strlen(dir) >= sizeof(st.dir)) {
    fprintf(stderr, "gpuperf stat: GPUPERF_STAT_DIR is too long\n");
    return;
  }
  snprintf(st.dir, sizeof(st.dir), "%s", dir);
  parse_events(getenv("GPUPERF_STAT_EVENTS"));
  const char *period = getenv("GPUPERF_STAT_PERIOD_NS");
  st.period_ns = period && *period ? strtoull(period, NULL, 10) : 1000000;
  st.pid = getpid();
  open_host();
  if (gp__activity_add_observer(observe, NULL) != 0) {
    fprintf(stderr, "gpuperf stat: cannot observe activity records\n");
    return;
  }
  gp_activity_enable(GP_ACTIVITY_KIND_KERNEL);
  gp_activity_enable(GP_ACTIVITY_KIND_COUNTER);
  gp_activity_enable(GP_ACTIVITY_KIND_RENDER_STAGE);
  gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY); /* busy time (busy_note) */
  gp_activity_enable(GP_ACTIVITY_KIND_MEMSET);
  st.on = true;
  if (gp__counters_add_device_hook(on_device) != 0)
    fprintf(stderr, "gpuperf stat: cannot follow new devices\n");
  /* V3D GPUs count only the counters named (none is a default), so they
   * are brought up only for -e; DRM cards are not stat's. */
  const char *drm = getenv("GPUPERF_DRM");
  if (getenv("GPUPERF_STAT_EVENTS") && (!drm || strcmp(drm, "0") != 0))
    gp__v3d_devices_register();
  gp__derived_enable(); /* Utilization where there is nothing else */
  atexit(stat_exit);
  /* A program that crashes, aborts or _exit()s still has its counts. */
  gp__death_add_finisher(stat_exit);
  gp__death_watch();
}
