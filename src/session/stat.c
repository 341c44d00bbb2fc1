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
 * At start-up the session enables KERNEL and COUNTER records, observes
 * every completed buffer, and starts sampling on each device as its
 * catalog is announced (the simulated GPUs when the program first uses
 * them): periodically, for totals per counter, and per activity, for
 * totals per kernel. The host CPU's perf_event counters are opened at once
 * by the first process of the tree (inherited by its children), without
 * registering a device, so the program's devices keep their numbers. At
 * exit the session retires the work still in flight, stops sampling,
 * flushes, and writes the file:
 *
 *   gpuperf-stat 1
 *   process  PID  NAME
 *   counter  DEVICE-NAME  COUNTER  UNITS  sum|avg  VALUE  WEIGHT-NS
 *   kernel   DEVICE-NAME  KERNEL  LAUNCHES  TIME-NS
 *   kvalue   DEVICE-NAME  KERNEL  COUNTER  UNITS  sum|avg  VALUE  WEIGHT-NS
 *   host     COUNTER  UNITS  VALUE
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

#include "backend/linux/perf.h"
#include "counters/countersInt.h"
#include "counters/derived.h"

#define MAX_NAMES 64

typedef struct agg {
  double sum;    /* sum counters: the total; averages: value x weight */
  double weight; /* ns of sampled time (averages) */
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
  uint32_t kernel; /* index into kernels, +1 (0: empty) */
} corr_entry;

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
  corr_entry *corr; /* open addressing, size a power of two */
  size_t corr_cap, corr_n;
  gp__perf_set *host;
  uint32_t host_index[GP_PERFMON_MAX_COUNTERS];
  size_t num_host;
  pid_t pid;
} st = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------ */
/* Aggregation (collector thread)                                       */

static void agg_add(agg *a, uint32_t combine, double v, uint64_t w) {
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

static void corr_put(uint64_t corr, uint32_t kernel) {
  if (st.corr_n * 2 >= st.corr_cap) {
    size_t ncap = st.corr_cap ? st.corr_cap * 2 : 1024;
    corr_entry *n = calloc(ncap, sizeof(*n));
    if (!n)
      return;
    for (size_t i = 0; i < st.corr_cap; i++) {
      if (!st.corr[i].kernel)
        continue;
      size_t h = (size_t)(st.corr[i].corr * 0x9e3779b97f4a7c15ull) & (ncap - 1);
      while (n[h].kernel)
        h = (h + 1) & (ncap - 1);
      n[h] = st.corr[i];
    }
    free(st.corr);
    st.corr = n;
    st.corr_cap = ncap;
  }
  size_t h = (size_t)(corr * 0x9e3779b97f4a7c15ull) & (st.corr_cap - 1);
  while (st.corr[h].kernel && st.corr[h].corr != corr)
    h = (h + 1) & (st.corr_cap - 1);
  if (!st.corr[h].kernel)
    st.corr_n++;
  st.corr[h] = (corr_entry){corr, kernel};
}

static uint32_t corr_find(uint64_t corr) {
  if (!st.corr_cap)
    return 0;
  size_t h = (size_t)(corr * 0x9e3779b97f4a7c15ull) & (st.corr_cap - 1);
  while (st.corr[h].kernel) {
    if (st.corr[h].corr == corr)
      return st.corr[h].kernel;
    h = (h + 1) & (st.corr_cap - 1);
  }
  return 0;
}

static void on_kernel(const gp_activity_kernel *k) {
  uint32_t name = k->demangled_name_id ? k->demangled_name_id : k->name_id;
  uint32_t ki = kernel_get(k->device_id, name);
  if (!ki)
    return;
  st.kernels[ki - 1].launches++;
  st.kernels[ki - 1].time_ns += k->end > k->start ? k->end - k->start : 0;
  corr_put(k->correlation_id, ki);
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
  if (c->correlation_id == 0) {
    total *t = total_get(c->device_id, (uint32_t)idx);
    if (t)
      agg_add(&t->a, combine, v, w);
    return;
  }
  uint32_t ki = corr_find(c->correlation_id);
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
  }
  pthread_mutex_unlock(&st.lock);
}

/* ------------------------------------------------------------------ */
/* Starting on devices                                                  */

/* Starts sampling on a device with whichever of the requested counters
 * it has (its defaults when none were requested). */
static void on_device(uint32_t dev) {
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  if (!cat || !cat->has_scheduler)
    return; /* the host CPU is counted by the perf_event set */
  uint32_t ids[GP_PERFMON_MAX_COUNTERS];
  size_t n = 0;
  if (st.num_names) {
    int rc =
        gp__catalog_select(cat, (const char *const *)st.names, st.num_names,
                           true, ids, GP_PERFMON_MAX_COUNTERS, &n);
    if (rc != 0 || n == 0)
      return;
  }
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = st.period_ns;
  if (c.counter_period_ns < cat->min_period_ns)
    c.counter_period_ns = cat->min_period_ns;
  if (c.counter_period_ns > cat->max_period_ns)
    c.counter_period_ns = cat->max_period_ns;
  c.counter_ids = n ? ids : NULL;
  c.num_counter_ids = n;
  c.instrumented = cat->supports_instrumented;
  int rc = gp_counters_start(dev, &c);
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

static void put_value(FILE *f, const gp__counter_def *def, const agg *a) {
  char units[96];
  units_of(&def->info, units, sizeof(units));
  put_escaped(f, def->info.name);
  put_escaped(f, units);
  if (def->combine == GP__SUM)
    fprintf(f, "\tsum\t%.17g\t0\n", a->sum);
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
    fputs("counter", f);
    put_escaped(f, name);
    put_value(f, &cat->counters[t->index], &t->a);
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
      fputs("kvalue", f);
      put_escaped(f, name);
      put_escaped(f, gp_activity_string(k->name_id));
      put_value(f, &cat->counters[j], &k->vals[j]);
    }
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
  st.on = true;
  if (gp__counters_add_device_hook(on_device) != 0)
    fprintf(stderr, "gpuperf stat: cannot follow new devices\n");
  gp__derived_enable(); /* Utilization where there is nothing else */
  atexit(stat_exit);
  /* A program that crashes, aborts or _exit()s still has its counts. */
  gp__death_add_finisher(stat_exit);
  gp__death_watch();
}
