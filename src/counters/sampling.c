/*
 * sampling.c - sampling counters into the activity stream: the
 * validation of a gp_counter_config, the samplers it starts on devices,
 * the filter pipeline that decides which activities are instrumented, and
 * the writing of COUNTER records.
 *
 * The filter pipeline is the one Perfetto's gpu.counters data source
 * defines for instrumented sampling, in its order:
 *   1. activity name filters: any must match (none: all pass), each on
 *      the mangled name, the demangled name or the bare function name;
 *   2. TX ranges: the thread's nested user ranges (markers.h) are tested
 *      against the exclude globs (any match excludes) and then the include
 *      globs (some enclosing range must match; none given: all pass);
 *   3. skip/count ranges over the activities that passed 1 and 2, counted
 *      once per gp_counters_start() call across its devices, or across
 *      every device a session's data source started
 *      (gp__counters_start_shared()), and then possibly across the
 *      processes of a recording too (a counter in shared memory).
 * Without ranges, step 3 costs nothing; with them, one atomic add.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static gp__sampler *active[GP__MAX_DEVICES];

/* ------------------------------------------------------------------ */
/* Filters                                                              */

/* See countersInt.h. */
void gp__filter_put(gp__filter *f) {
  if (!f || atomic_fetch_sub(&f->refs, 1) != 1)
    return;
  for (uint32_t i = 0; i < f->num_names; i++)
    free((char *)f->names[i].name_glob);
  for (uint32_t i = 0; i < f->num_include; i++)
    free(f->include[i]);
  for (uint32_t i = 0; i < f->num_exclude; i++)
    free(f->exclude[i]);
  free(f->names);
  free(f->include);
  free(f->exclude);
  free(f->ranges);
  free(f);
}

static char **copy_globs(const char *const *src, size_t n, bool *oom) {
  if (n == 0)
    return NULL;
  char **d = calloc(n, sizeof(*d));
  if (!d) {
    *oom = true;
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (!(d[i] = strdup(src[i])))
      *oom = true;
  return d;
}

/* Copies the filter part of a validated config. NULL when out of memory. */
static gp__filter *filter_new(const gp_counter_config *c) {
  gp__filter *f = calloc(1, sizeof(*f));
  if (!f)
    return NULL;
  atomic_init(&f->refs, 1);
  atomic_init(&f->matched, 0);
  f->index = &f->matched;
  bool oom = false;
  if (c->num_name_filters) {
    f->names = calloc(c->num_name_filters, sizeof(*f->names));
    if (!f->names)
      oom = true;
    for (size_t i = 0; f->names && i < c->num_name_filters; i++) {
      f->names[i] = c->name_filters[i];
      f->names[i].name_glob = strdup(c->name_filters[i].name_glob);
      if (!f->names[i].name_glob)
        oom = true;
      f->num_names++;
    }
  }
  f->include = copy_globs(c->tx_include_globs, c->num_tx_include_globs, &oom);
  f->num_include = f->include ? (uint32_t)c->num_tx_include_globs : 0;
  f->exclude = copy_globs(c->tx_exclude_globs, c->num_tx_exclude_globs, &oom);
  f->num_exclude = f->exclude ? (uint32_t)c->num_tx_exclude_globs : 0;
  if (c->num_ranges) {
    f->ranges = malloc(c->num_ranges * sizeof(*f->ranges));
    if (f->ranges) {
      memcpy(f->ranges, c->ranges, c->num_ranges * sizeof(*f->ranges));
      f->num_ranges = (uint32_t)c->num_ranges;
    } else {
      oom = true;
    }
  }
  if (oom) {
    gp__filter_put(f);
    return NULL;
  }
  return f;
}

/* See countersInt.h. */
const char *gp__function_name(const char *demangled, char *buf, size_t size) {
  if (size == 0)
    return buf;
  buf[0] = '\0';
  if (!demangled)
    return buf;
  /* The name ends at the first '(' outside template brackets. */
  size_t end = strlen(demangled);
  int angle = 0;
  for (size_t i = 0; demangled[i]; i++) {
    char ch = demangled[i];
    if (ch == '<')
      angle++;
    else if (ch == '>' && angle > 0)
      angle--;
    else if (ch == '(' && angle == 0 && i > 0) {
      end = i;
      break;
    }
  }
  /* Drop trailing template arguments: f<int> -> f. */
  while (end > 0 && demangled[end - 1] == ' ')
    end--;
  if (end > 0 && demangled[end - 1] == '>') {
    int depth = 0;
    size_t i = end;
    while (i > 0) {
      char ch = demangled[--i];
      if (ch == '>')
        depth++;
      else if (ch == '<' && --depth == 0)
        break;
    }
    if (depth == 0)
      end = i;
  }
  /* The name starts after the last "::" or space outside brackets. */
  size_t start = 0;
  angle = 0;
  for (size_t i = 0; i < end; i++) {
    char ch = demangled[i];
    if (ch == '<')
      angle++;
    else if (ch == '>' && angle > 0)
      angle--;
    else if (angle == 0 && ch == ' ')
      start = i + 1;
    else if (angle == 0 && ch == ':' && demangled[i + 1] == ':')
      start = i + 2;
  }
  size_t len = end > start ? end - start : 0;
  if (len >= size)
    len = size - 1;
  memcpy(buf, demangled + start, len);
  buf[len] = '\0';
  return buf;
}

static bool name_filters_pass(const gp__filter *f, const char *mangled,
                              const char *demangled) {
  if (f->num_names == 0)
    return true;
  char fn[256];
  bool have_fn = false;
  for (uint32_t i = 0; i < f->num_names; i++) {
    const char *subject = mangled;
    if (f->names[i].name_base == GP_NAME_BASE_DEMANGLED) {
      subject = demangled;
    } else if (f->names[i].name_base == GP_NAME_BASE_FUNCTION) {
      if (!have_fn)
        gp__function_name(demangled, fn, sizeof(fn));
      have_fn = true;
      subject = fn;
    }
    if (gp__glob_match(f->names[i].name_glob, subject))
      return true;
  }
  return false;
}

static bool any_glob(char *const *globs, uint32_t n, const char *s) {
  for (uint32_t i = 0; i < n; i++)
    if (gp__glob_match(globs[i], s))
      return true;
  return false;
}

static bool ranges_pass(const gp__filter *f) {
  if (f->num_include == 0 && f->num_exclude == 0)
    return true;
  uint32_t ids[GP_RANGE_MAX_DEPTH];
  uint32_t depth = gp_range_stack(ids, GP_RANGE_MAX_DEPTH);
  if (depth > GP_RANGE_MAX_DEPTH)
    depth = GP_RANGE_MAX_DEPTH;
  bool included = f->num_include == 0;
  for (uint32_t i = 0; i < depth; i++) {
    const char *name = gp_activity_string(ids[i]);
    if (any_glob(f->exclude, f->num_exclude, name))
      return false; /* excludes win, at any depth */
    if (!included && any_glob(f->include, f->num_include, name))
      included = true;
  }
  return included;
}

/* See countersInt.h. */
bool gp__sampler_instrument(gp__sampler *s, const char *mangled,
                            const char *demangled) {
  if (!s || !s->instrumented || !s->filter || !mangled)
    return false;
  gp__filter *f = s->filter;
  if (!demangled || !*demangled)
    demangled = mangled;
  if (!name_filters_pass(f, mangled, demangled) || !ranges_pass(f))
    return false;
  if (f->num_ranges == 0)
    return true;
  /* The activity's index among those that passed, in every process that
   * counts in the same cell. */
  uint64_t k = atomic_fetch_add_explicit(f->index, 1, memory_order_relaxed);
  for (uint32_t i = 0; i < f->num_ranges; i++) {
    uint64_t skip = f->ranges[i].skip;
    uint64_t count = f->ranges[i].count ? f->ranges[i].count : UINT32_MAX;
    if (k >= skip && (count == UINT32_MAX || k - skip < count))
      return true;
  }
  return false;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

/* See countersInt.h. */
void gp__counter_emit_n(const gp__catalog *cat, uint32_t device_id,
                        const uint32_t *index, uint32_t n, const double *num,
                        const double *den, uint64_t timestamp,
                        uint64_t window_start, uint64_t correlation_id,
                        uint32_t perfmon_id, uint32_t context_id) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_COUNTER, context_id))
    return;
  for (uint32_t i = 0; i < n; i++) {
    gp_activity_counter *r = gp__activity_reserve(GP_ACTIVITY_KIND_COUNTER,
                                                  sizeof(*r), context_id, 0);
    if (!r)
      continue;
    const gp__counter_def *def = &cat->counters[index[i]];
    gp_counter_value v;
    r->value_type = gp__counter_finish(def, num[i], den[i], &v);
    r->timestamp = timestamp;
    r->correlation_id = correlation_id;
    r->window_start = window_start;
    r->device_id = device_id;
    r->counter_id = def->info.id;
    r->perfmon_id = perfmon_id;
    /* Both members are 64 bits: one copy stores either. */
    memcpy(&r->value, &v, sizeof(r->value));
    gp__activity_commit(r);
  }
}

/* See countersInt.h. */
void gp__sampler_emit(const gp__sampler *s, uint64_t t, const double *num,
                      const double *den, uint64_t timestamp,
                      uint64_t window_start, uint64_t correlation_id,
                      uint32_t perfmon_id, uint32_t context_id) {
  if (!s->mux_num) {
    gp__counter_emit_n(s->cat, s->device_id, s->index, s->num_counters, num,
                       den, timestamp, window_start, correlation_id, perfmon_id,
                       context_id);
    return;
  }
  uint64_t mask = gp__sampler_mask(s, t);
  uint32_t index[GP_PERFMON_MAX_COUNTERS], n = 0;
  double nv[GP_PERFMON_MAX_COUNTERS], dv[GP_PERFMON_MAX_COUNTERS];
  for (uint32_t i = 0; i < s->num_counters; i++) {
    if (!(mask >> i & 1))
      continue;
    index[n] = s->index[i];
    nv[n] = num[i];
    dv[n++] = den[i];
  }
  gp__counter_emit_n(s->cat, s->device_id, index, n, nv, dv, timestamp,
                     window_start, correlation_id, perfmon_id, context_id);
}

/* See countersInt.h. */
void gp__counter_emit(const gp__catalog *cat, uint32_t device_id,
                      uint32_t index, double num, double den,
                      uint64_t timestamp, uint64_t window_start,
                      uint64_t correlation_id, uint32_t perfmon_id,
                      uint32_t context_id) {
  gp__counter_emit_n(cat, device_id, &index, 1, &num, &den, timestamp,
                     window_start, correlation_id, perfmon_id, context_id);
}

/* ------------------------------------------------------------------ */
/* Starting and stopping                                                */

/* See countersInt.h. */
gp__sampler *gp__sampler_get(gp__sampler *s) {
  if (s)
    atomic_fetch_add(&s->refs, 1);
  return s;
}

/* See countersInt.h. */
void gp__sampler_put(gp__sampler *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
    return;
  gp__filter_put(s->filter);
  free(s->ids);
  free(s->index);
  free(s->mux_mask);
  free(s);
}

static int check_filters(const gp_counter_config *c) {
  bool any = c->num_name_filters || c->num_tx_include_globs ||
             c->num_tx_exclude_globs || c->num_ranges;
  if (any && !c->instrumented)
    return GP_EINVAL; /* filters only make sense for instrumented sampling */
  if ((c->num_name_filters && !c->name_filters) ||
      (c->num_tx_include_globs && !c->tx_include_globs) ||
      (c->num_tx_exclude_globs && !c->tx_exclude_globs) ||
      (c->num_ranges && !c->ranges))
    return GP_EINVAL;
  for (size_t i = 0; i < c->num_name_filters; i++) {
    const gp_activity_name_filter *nf = &c->name_filters[i];
    if (!nf->name_glob || !*nf->name_glob || nf->reserved0 ||
        nf->name_base > GP_NAME_BASE_FUNCTION)
      return GP_EINVAL;
  }
  for (size_t i = 0; i < c->num_tx_include_globs; i++)
    if (!c->tx_include_globs[i] || !*c->tx_include_globs[i])
      return GP_EINVAL;
  for (size_t i = 0; i < c->num_tx_exclude_globs; i++)
    if (!c->tx_exclude_globs[i] || !*c->tx_exclude_globs[i])
      return GP_EINVAL;
  return 0;
}

/* The counters config c selects on one device, into ids (capacity
 * GP_PERFMON_MAX_COUNTERS). With lenient (several devices), what does not
 * exist there is skipped. */
static int select_on(const gp__catalog *cat, const gp_counter_config *c,
                     bool lenient, uint32_t *ids, size_t *n) {
  *n = 0;
  if (c->num_counter_ids) {
    for (size_t i = 0; i < c->num_counter_ids; i++) {
      if (gp__catalog_find(cat, c->counter_ids[i]) < 0) {
        if (!lenient)
          return GP_ENOCOUNTER;
        continue;
      }
      if (*n == GP_PERFMON_MAX_COUNTERS)
        return GP_ECAPACITY;
      ids[(*n)++] = c->counter_ids[i];
    }
    return 0;
  }
  if (c->num_counter_names) {
    int rc = gp__catalog_select(cat, c->counter_names, c->num_counter_names,
                                lenient, ids, GP_PERFMON_MAX_COUNTERS, n);
    return rc == GP_ENOSPC ? GP_ECAPACITY : rc;
  }
  for (uint32_t i = 0; i < cat->num_counters; i++) {
    if (!cat->counters[i].info.select_by_default)
      continue;
    if (*n == GP_PERFMON_MAX_COUNTERS)
      return GP_ECAPACITY;
    ids[(*n)++] = cat->counters[i].info.id;
  }
  return 0;
}

/* Every id or name of c must exist on at least one of the devices. */
static int check_all_known(const gp_counter_config *c, const uint32_t *devs,
                           uint32_t ndev) {
  for (size_t i = 0; i < c->num_counter_ids; i++) {
    bool hit = false;
    for (uint32_t d = 0; d < ndev && !hit; d++)
      hit = gp__catalog_find(gp__catalog_get(devs[d], NULL),
                             c->counter_ids[i]) >= 0;
    if (!hit)
      return GP_ENOCOUNTER;
  }
  for (size_t i = 0; i < c->num_counter_names; i++) {
    bool hit = false;
    for (uint32_t d = 0; d < ndev && !hit; d++) {
      size_t n = 0;
      uint32_t ids[GP_PERFMON_MAX_COUNTERS];
      hit = gp__catalog_select(gp__catalog_get(devs[d], NULL),
                               &c->counter_names[i], 1, false, ids,
                               GP_PERFMON_MAX_COUNTERS, &n) != GP_ENOCOUNTER;
    }
    if (!hit)
      return GP_ENOCOUNTER;
  }
  return 0;
}

static int check_config(const gp_counter_config *c) {
  if (!c || c->multiplex > 1 || c->instrumented > 1)
    return GP_EINVAL;
  if ((c->num_counter_ids && c->num_counter_names) ||
      (c->num_counter_ids && !c->counter_ids) ||
      (c->num_counter_names && !c->counter_names))
    return GP_EINVAL;
  if (c->counter_period_ns == 0 && !c->instrumented)
    return GP_EINVAL;
  for (size_t i = 0; i < c->num_counter_names; i++)
    if (!c->counter_names[i] || !*c->counter_names[i])
      return GP_EINVAL;
  return check_filters(c);
}

/*
 * Makes s (its ids set, more than its device counts at once) a
 * multiplexed sampler: its catalog indexes, and one schedule per
 * counter, perf's rotation: schedule k takes, from the k-th counter on,
 * each that still fits max_active and its block's capacity. GP_ECAPACITY
 * if some counter never fits; GP_ENOMEM.
 */
static int mux_schedules(gp__sampler *s, uint64_t period_ns) {
  const gp__catalog *cat = s->cat;
  uint32_t n = s->num_counters;
  s->mux_mask = calloc(n, sizeof(*s->mux_mask));
  if (!s->mux_mask)
    return GP_ENOMEM;
  for (uint32_t i = 0; i < n; i++)
    s->index[i] = (uint32_t)gp__catalog_find(cat, s->ids[i]);
  uint64_t all = 0;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t per_block[GP_PERFMON_MAX_COUNTERS] = {0}, total = 0;
    for (uint32_t j = 0; j < n; j++) {
      uint32_t i = (k + j) % n;
      uint32_t b = cat->counters[s->index[i]].info.block_id;
      if (total == cat->max_active || (b < GP_PERFMON_MAX_COUNTERS &&
                                       per_block[b] == cat->blocks[b].capacity))
        continue;
      if (b < GP_PERFMON_MAX_COUNTERS)
        per_block[b]++;
      total++;
      s->mux_mask[k] |= 1ull << i;
    }
    all |= s->mux_mask[k];
  }
  if (all != (n == 64 ? ~0ull : (1ull << n) - 1))
    return GP_ECAPACITY;
  s->mux_num = n;
  s->mux_slice_ns =
      period_ns ? period_ns * GP_COUNTER_MUX_PERIODS : 4000000; /* perf's */
  return 0;
}

/* Builds the sampler of one device (nothing started). *s NULL when the
 * device takes no part (several devices, nothing of c applies). */
static int sampler_new(uint32_t dev, const gp_counter_config *c, bool many,
                       gp__sampler **s) {
  *s = NULL;
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  bool instr = c->instrumented && cat->supports_instrumented;
  uint64_t period = c->counter_period_ns;
  if (c->instrumented && !instr && !many)
    return GP_ENOTSUP;
  if (!instr && period == 0)
    return 0; /* several devices: this one cannot take part */
  if (period && (period < cat->min_period_ns || period > cat->max_period_ns))
    return GP_EINVAL;
  uint32_t ids[GP_PERFMON_MAX_COUNTERS];
  size_t n = 0;
  int rc = select_on(cat, c, many, ids, &n);
  if (rc != 0)
    return rc;
  if (n == 0)
    return many ? 0 : GP_ENOCOUNTER;
  rc = gp__catalog_check(cat, ids, n, NULL);
  bool mux = rc == GP_ECAPACITY && c->multiplex && cat->supports_multiplex;
  if (rc != 0 && !mux)
    return rc;
  if (active[dev])
    return GP_EBUSY;
  gp__sampler *x = calloc(1, sizeof(*x));
  if (!x)
    return GP_ENOMEM;
  atomic_init(&x->refs, 1);
  x->device_id = dev;
  x->instrumented = instr;
  x->period_ns = period;
  x->num_counters = (uint32_t)n;
  x->cat = cat;
  x->ids = malloc(n * sizeof(*x->ids));
  x->index = malloc(n * sizeof(*x->index));
  if (!x->ids || !x->index) {
    gp__sampler_put(x);
    return GP_ENOMEM;
  }
  memcpy(x->ids, ids, n * sizeof(*ids));
  if (mux) {
    rc = mux_schedules(x, period);
    if (rc != 0) {
      gp__sampler_put(x);
      return rc;
    }
  } else {
    gp__catalog_check(cat, ids, n, x->index);
  }
  *s = x;
  return 0;
}

/* gp_counters_start(), with the filter pipeline of *shared when shared
 * is not NULL, counting in cell (see gp__counters_start_shared()). */
static int start(uint32_t device_id, const gp_counter_config *config,
                 gp__filter **shared, _Atomic uint64_t *cell) {
  int rc = check_config(config);
  if (rc != 0)
    return rc;
  uint32_t devs[GP__MAX_DEVICES], ndev = 0;
  bool many = device_id == GP_ALL_DEVICES;
  if (many) {
    uint32_t n = 0;
    gp_device_count(&n);
    for (uint32_t d = 0; d < n && d < GP__MAX_DEVICES; d++)
      if (gp__catalog_get(d, NULL))
        devs[ndev++] = d;
    if (ndev == 0)
      return GP_ENOENT;
    rc = check_all_known(config, devs, ndev);
    if (rc != 0)
      return rc;
  } else {
    if (!gp__catalog_get(device_id, &rc))
      return rc;
    devs[ndev++] = device_id;
  }

  gp__sampler *s[GP__MAX_DEVICES] = {0};
  gp__filter *filter = NULL;
  uint32_t started = 0;
  pthread_mutex_lock(&session_lock);
  bool any = false;
  for (uint32_t i = 0; i < ndev; i++) {
    rc = sampler_new(devs[i], config, many, &s[i]);
    if (rc != 0)
      goto fail;
    any = any || s[i];
  }
  if (!any) {
    rc = config->instrumented && !config->counter_period_ns ? GP_ENOTSUP
                                                            : GP_ENOCOUNTER;
    goto fail;
  }
  if (config->instrumented) {
    if (shared && *shared) {
      filter = *shared;
      atomic_fetch_add(&filter->refs, 1);
    } else if (!(filter = filter_new(config))) {
      rc = GP_ENOMEM;
      goto fail;
    } else if (cell) {
      filter->index = cell;
    }
    for (uint32_t i = 0; i < ndev; i++)
      if (s[i] && s[i]->instrumented) {
        atomic_fetch_add(&filter->refs, 1);
        s[i]->filter = filter;
      }
  }
  for (started = 0; started < ndev; started++) {
    if (!s[started])
      continue;
    void *prov = NULL;
    const gp__provider_ops *ops = gp__provider_get(devs[started], &prov);
    rc = ops->sampling_start ? ops->sampling_start(prov, s[started])
                             : GP_ENOTSUP;
    if (rc != 0)
      goto fail_stop;
    active[devs[started]] = s[started];
  }
  pthread_mutex_unlock(&session_lock);
  if (shared && !*shared)
    *shared = filter; /* our reference becomes the caller's */
  else
    gp__filter_put(filter);
  return 0;

fail_stop:
  while (started-- > 0) {
    if (!s[started])
      continue;
    void *prov = NULL;
    const gp__provider_ops *ops = gp__provider_get(devs[started], &prov);
    ops->sampling_stop(prov, s[started]);
    active[devs[started]] = NULL;
  }
fail:
  pthread_mutex_unlock(&session_lock);
  for (uint32_t i = 0; i < ndev; i++)
    gp__sampler_put(s[i]);
  gp__filter_put(filter);
  return rc;
}

/* See counters.h. */
int gp_counters_start(uint32_t device_id, const gp_counter_config *config) {
  return start(device_id, config, NULL, NULL);
}

/* See countersInt.h. */
int gp__counters_start_shared(uint32_t device_id,
                              const gp_counter_config *config,
                              gp__filter **shared, _Atomic uint64_t *cell) {
  if (!shared || device_id == GP_ALL_DEVICES)
    return GP_EINVAL;
  return start(device_id, config, shared, cell);
}

static void stop_one(uint32_t dev) {
  gp__sampler *s = active[dev];
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(dev, &prov);
  if (ops && ops->sampling_stop)
    ops->sampling_stop(prov, s);
  active[dev] = NULL;
  gp__sampler_put(s);
}

/* See counters.h. */
int gp_counters_stop(uint32_t device_id) {
  int rc = GP_ESTATE;
  pthread_mutex_lock(&session_lock);
  if (device_id == GP_ALL_DEVICES) {
    for (uint32_t d = 0; d < GP__MAX_DEVICES; d++) {
      if (active[d]) {
        stop_one(d);
        rc = 0;
      }
    }
  } else if (!gp__catalog_get(device_id, &rc)) {
    /* rc says why */
  } else if (active[device_id]) {
    stop_one(device_id);
    rc = 0;
  } else {
    rc = GP_ESTATE;
  }
  pthread_mutex_unlock(&session_lock);
  return rc;
}
