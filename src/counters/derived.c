/*
 * derived.c - a busy counter for devices that have no hardware counters
 * (OpenCL on any driver, Vulkan, CUDA without the profiler): `Utilization`,
 * the share of each sampling window during which the device had work
 * running, derived from the activity timeline, per device and per
 * hardware queue.
 *
 * A Vulkan device's layer publishes a catalog of its own (pipeline
 * statistics) with a `Utilization` entry and attaches it here
 * (gp__derived_attach()): the same windows, emitted in that catalog, from
 * its whole command buffers (RENDER_STAGE records of that stage kind).
 *
 * A device qualifies when its backend registers it without a catalog; this
 * file then publishes a small catalog for it (category "derived", custom
 * group "derived", so the trace says where the values come from) and is its
 * provider. While a sampler runs, a buffer observer takes the [start, end)
 * of every KERNEL, MEMCPY and MEMSET record of the device and merges it
 * into a sorted list of disjoint busy intervals (one for the device, one
 * per queue): overlapping work counts once. Windows are cut from the
 * sampler's start at its period and emitted as COUNTER records with
 * (busy ns, window ns) as the ratio's pair, so a perfmon-style sum over
 * windows stays time-weighted.
 *
 * When a window is final. Work reaches the observer only once its record
 * was written and its buffer flushed, which may be long after it ran (PoCL
 * tells of kernels at clFinish, up to tens of seconds later). A window is
 * emitted only once every record that could fall in it has been seen: at
 * the start of each flush (a settle hook, core.h) the device's frontier
 * is asked for, a time before which all its work has been written
 * (gp__device_set_frontier(), installed by the backend); once that flush
 * has brought every record written by then to the observer, the windows
 * that end before the frontier (less FRONTIER_MARGIN_NS for the error of
 * the device clock's mapping) are final. A device whose backend has no
 * frontier keeps its windows until sampling stops, after a forced flush
 * brought in every record the backends hold. Waiting is bounded only by
 * the program's end; live views read provisional values meanwhile
 * (gp__derived_provisional()). Work that still arrives for a window
 * already emitted is cut at the window's end, counted in
 * gp__derived_late_ns() and reported as dropped COUNTER data
 * (GP_DROP_LATE), never silently left out.
 *
 * Locks. One lock guards every device's state; the observer takes it per
 * buffer; the counters layer calls the hooks with its session lock held.
 * Nothing is called with the lock held that could call back into us.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "busy.h"
#include "countersInt.h"
#include "derived.h"

#define MAX_QUEUES 8
#define GROUP_DERIVED GP_COUNTER_GROUP_FIRST_CUSTOM

typedef struct dstate {
  gp__catalog cat;
  /* The catalog the values go out in and the index of `Utilization` in it:
   * &cat and 0, or those of the provider that attached us (a Vulkan
   * device's pipeline-statistics catalog, gp__derived_attach()). */
  const gp__catalog *ecat;
  uint32_t base;
  gp__counter_def defs[1 + MAX_QUEUES];
  char names[1 + MAX_QUEUES][96];
  char descs[1 + MAX_QUEUES][200];
  gp_counter_block_info block;
  gp_counter_group_info group;
  uint32_t device_id;
  uint32_t num_queues;
  /* Sampling, under `lock`. */
  gp__sampler *s;
  uint64_t win_start;   /* start of the first window not yet emitted */
  uint64_t last_end;    /* latest end seen */
  uint64_t final_until; /* windows that end by then are final */
  /* The last frontier asked for, when work was in flight then (it is the
   * least start that work can have); 0 when nothing was. */
  uint64_t in_flight_since;
  gp__busy all, q[MAX_QUEUES];
} dstate;

/* How far before a device's frontier a window must end to be final: the
 * error allowed to the mapping of device times to the trace clock. */
#define FRONTIER_MARGIN_NS 1000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dstate *states[GP__MAX_DEVICES];
static uint32_t num_sampling; /* devices sampling: the observer is on */
static uint64_t late_ns;
static bool hooked;

/* ------------------------------------------------------------------ */
/* Windows                                                              */

/* Emits d's windows that end at or before `until` (all of them, the last
 * one partial, when final). Lock held, or d is the caller's own copy
 * (dp_sampling_stop()). */
static void emit_until(dstate *d, uint64_t until, bool final) {
  gp__sampler *s = d->s;
  uint64_t p = s->period_ns;
  while (d->win_start < until) {
    uint64_t ws = d->win_start, we = ws + p;
    if (we > until) {
      if (!final)
        break;
      we = until;
    }
    for (uint32_t k = 0; k < s->num_counters; k++) {
      uint32_t idx = s->index[k];
      if (idx < d->base || idx - d->base > d->num_queues)
        continue; /* another provider's counter of an attached catalog */
      uint32_t local = idx - d->base;
      const gp__busy *b = local == 0 ? &d->all : &d->q[local - 1];
      uint64_t t = gp__busy_within(b, ws, we);
      gp__counter_emit(d->ecat, d->device_id, idx, (double)t, (double)(we - ws),
                       we, ws, 0, 0, 0);
    }
    /* Work stays known for a while after its windows, for
     * gp__derived_provisional(). */
    if (we > GP__DERIVED_KEEP_NS) {
      uint64_t keep = we - GP__DERIVED_KEEP_NS;
      gp__busy_drop_before(&d->all, keep);
      for (uint32_t q = 0; q < d->num_queues; q++)
        gp__busy_drop_before(&d->q[q], keep);
    }
    d->win_start = we;
  }
}

/* How far past the present a record's end may lie: work read back has
 * ended, so only the error of the device clock's mapping. */
#define FUTURE_MARGIN_NS 1000000000ull

static void note_work(dstate *d, uint32_t queue, uint64_t s, uint64_t e,
                      uint64_t now) {
  /* An end past the present is no time at all (a driver's 0 taken for a
   * timestamp maps to 2^64 - 11 ns): counting to it would make the last
   * windows endless, a trace of 76 GB and rising. Such work is left out. */
  if (e <= s || e > now + FUTURE_MARGIN_NS)
    return;
  if (e > d->last_end)
    d->last_end = e;
  if (s < d->win_start) {
    uint64_t cut = e < d->win_start ? e : d->win_start;
    late_ns += cut - s;
    s = cut;
    /* The collector's own slot: we run on it, as its observer. */
    gp__activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_LATE, 0, 0, 1);
  }
  gp__busy_add(&d->all, s, e);
  if (queue < d->num_queues)
    gp__busy_add(&d->q[queue], s, e);
}

/* The buffer observer: the work of sampling devices. */
static void observe(void *user, const uint8_t *buf, size_t size) {
  (void)user;
  uint64_t now = gp_get_timestamp();
  pthread_mutex_lock(&lock);
  for (size_t off = 0; off + sizeof(gp_activity) <= size;) {
    const gp_activity *h = (const gp_activity *)(buf + off);
    if (h->size < sizeof(*h) || h->size > size - off)
      break; /* defensive: a malformed buffer */
    uint32_t dev = UINT32_MAX, q = 0;
    uint64_t s = 0, e = 0;
    if (h->kind == GP_ACTIVITY_KIND_KERNEL &&
        h->size >= sizeof(gp_activity_kernel)) {
      const gp_activity_kernel *r = (const void *)h;
      dev = r->device_id, q = r->queue_id, s = r->start, e = r->end;
    } else if (h->kind == GP_ACTIVITY_KIND_MEMCPY &&
               h->size >= sizeof(gp_activity_memcpy)) {
      const gp_activity_memcpy *r = (const void *)h;
      dev = r->device_id, q = r->queue_id, s = r->start, e = r->end;
    } else if (h->kind == GP_ACTIVITY_KIND_MEMSET &&
               h->size >= sizeof(gp_activity_memset)) {
      const gp_activity_memset *r = (const void *)h;
      dev = r->device_id, q = r->queue_id, s = r->start, e = r->end;
    } else if (h->kind == GP_ACTIVITY_KIND_RENDER_STAGE &&
               h->size >= sizeof(gp_activity_render_stage)) {
      /* Whole command buffers: the stages inside them lie within. */
      const gp_activity_render_stage *r = (const void *)h;
      if (r->stage == GP_RENDER_STAGE_COMMAND_BUFFER)
        dev = r->device_id, q = r->queue_id, s = r->start, e = r->end;
    }
    if (dev < GP__MAX_DEVICES && states[dev] && states[dev]->s)
      note_work(states[dev], q, s, e, now);
    off += h->size;
  }
  /* Windows made final by a flush on another thread (settle_end()). */
  for (uint32_t i = 0; i < GP__MAX_DEVICES; i++)
    if (states[i] && states[i]->s && states[i]->final_until)
      emit_until(states[i], states[i]->final_until, false);
  pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ */
/* Finality                                                             */

/* The frontiers asked for at a flush's start, kept by the flushing thread
 * until the flush has delivered (settle(), below). */
static GP_TLS uint64_t settle_bound[GP__MAX_DEVICES];
static GP_TLS uint64_t settle_have; /* bit i: settle_bound[i] is set */
static GP_TLS int settle_depth;

static void settle_begin(void) {
  uint32_t ids[GP__MAX_DEVICES], n = 0;
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < GP__MAX_DEVICES; i++)
    if (states[i] && states[i]->s)
      ids[n++] = i;
  pthread_mutex_unlock(&lock);
  settle_have = 0;
  /* Without our lock: a backend's frontier takes its own locks. */
  for (uint32_t k = 0; k < n; k++) {
    uint64_t f = 0, asked = gp_get_timestamp();
    if (gp__device_frontier(ids[k], &f) && f > FRONTIER_MARGIN_NS) {
      settle_bound[ids[k]] = f - FRONTIER_MARGIN_NS;
      settle_have |= 1ull << ids[k];
      /* Before the time asked: work was in flight (gp__device_frontier()
       * gives that time when nothing is). */
      pthread_mutex_lock(&lock);
      if (states[ids[k]])
        states[ids[k]]->in_flight_since = f < asked ? f : 0;
      pthread_mutex_unlock(&lock);
    }
  }
}

/* Makes the windows before the frontiers found final. They are written
 * here on the collector thread, else by the observer on its next buffer:
 * writing a record may wait for the collector to give a buffer back, and
 * the observer it would wait for takes our lock. */
static void settle_end(void) {
  if (!settle_have)
    return;
  bool write = gp__activity_on_collector();
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < GP__MAX_DEVICES; i++) {
    if (!(settle_have >> i & 1))
      continue;
    dstate *d = states[i];
    if (!d || !d->s)
      continue;
    if (settle_bound[i] > d->final_until)
      d->final_until = settle_bound[i];
    if (write)
      emit_until(d, d->final_until, false);
  }
  pthread_mutex_unlock(&lock);
  settle_have = 0;
}

/* The settle hook (core.h): frontiers at a flush's start, final windows
 * once it delivered. A flush inside a flush (none is expected) settles
 * nothing. */
static void settle(int phase) {
  if (phase == GP__SETTLE_BEGIN) {
    if (settle_depth++ == 0)
      settle_begin();
  } else if (settle_depth > 0 && --settle_depth == 0) {
    if (phase == GP__SETTLE_END)
      settle_end();
    settle_have = 0;
  }
}

/* ------------------------------------------------------------------ */
/* Provider hooks                                                       */

static int dp_sampling_start(void *prov, gp__sampler *s) {
  dstate *d = prov;
  pthread_mutex_lock(&lock);
  if (d->s) {
    pthread_mutex_unlock(&lock);
    return GP_EBUSY; /* defensive: the counters layer allows one */
  }
  d->s = gp__sampler_get(s);
  d->win_start = gp_get_timestamp();
  d->last_end = d->win_start;
  d->final_until = 0;
  d->in_flight_since = 0;
  bool first = num_sampling++ == 0;
  pthread_mutex_unlock(&lock);
  if (first)
    gp__activity_add_settle_hook(settle);
  if (first && gp__activity_add_observer(observe, NULL) != 0) {
    pthread_mutex_lock(&lock);
    num_sampling--;
    d->s = NULL;
    pthread_mutex_unlock(&lock);
    gp__sampler_put(s);
    return GP_ENOSPC;
  }
  return 0;
}

static void dp_sampling_stop(void *prov, gp__sampler *s) {
  dstate *d = prov;
  pthread_mutex_lock(&lock);
  bool ours = d->s == s;
  pthread_mutex_unlock(&lock);
  if (!ours)
    return;
  /* Bring in every record the backends hold (the OpenCL one emits work it
   * has not asked about yet on a forced flush). */
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  /* The last windows are written without the lock, from d's state taken
   * out of it: writing a record may wait for the collector to give a
   * buffer back, and the collector's observer takes the lock (a program
   * whose buffers were all in flight at its end hung here). */
  pthread_mutex_lock(&lock);
  uint64_t until = gp_get_timestamp();
  if (d->last_end > until)
    until = d->last_end;
  dstate tail = *d; /* its intervals move to tail */
  memset(&d->all, 0, sizeof(d->all));
  memset(d->q, 0, sizeof(d->q));
  d->s = NULL;
  bool last = --num_sampling == 0;
  pthread_mutex_unlock(&lock);
  emit_until(&tail, until, true);
  gp__busy_free(&tail.all);
  for (uint32_t q = 0; q < MAX_QUEUES; q++)
    gp__busy_free(&tail.q[q]);
  if (last)
    gp__activity_remove_observer(observe, NULL);
  gp__sampler_put(s);
}

static const gp__provider_ops derived_provider = {
    .sampling_start = dp_sampling_start,
    .sampling_stop = dp_sampling_stop,
};

/* ------------------------------------------------------------------ */
/* Catalogs                                                             */

static void def_util(dstate *d, uint32_t i, const char *name, const char *desc,
                     bool dflt) {
  snprintf(d->names[i], sizeof(d->names[i]), "%s", name);
  snprintf(d->descs[i], sizeof(d->descs[i]), "%s", desc);
  gp__counter_def *c = &d->defs[i];
  c->info.id = i + 1;
  c->info.name = d->names[i];
  c->info.description = d->descs[i];
  c->info.category = "derived";
  c->info.type = GP_COUNTER_TYPE_PERCENT;
  c->info.block_id = 0;
  c->info.num_numerator_units = 1;
  c->info.numerator_units[0] = GP_UNIT_PERCENT;
  c->info.num_groups = 2;
  c->info.groups[0] = GP_COUNTER_GROUP_SYSTEM;
  c->info.groups[1] = GROUP_DERIVED;
  c->info.peak_value = 100.0;
  c->info.select_by_default = dflt;
  c->combine = GP__RATIO;
}

/* A fresh state with d's catalog, or NULL when out of memory. */
static dstate *state_new(const gp_device_info *di) {
  dstate *d = calloc(1, sizeof(*d));
  if (!d)
    return NULL;
  d->device_id = di->id;
  d->num_queues = di->num_queues < MAX_QUEUES ? di->num_queues : MAX_QUEUES;
  def_util(d, 0, "Utilization",
           "Derived from the activity timeline: share of each sampling "
           "window during which any queue of the device ran work (kernels, "
           "copies or fills)",
           true);
  for (uint32_t q = 0; q < d->num_queues; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(di->id, q, &qi) != 0)
      qi.name = "queue";
    char name[96], desc[200];
    snprintf(name, sizeof(name), "Utilization.%s", qi.name);
    snprintf(desc, sizeof(desc),
             "Derived from the activity timeline: share of each sampling "
             "window during which the %s queue ran work",
             qi.name);
    def_util(d, q + 1, name, desc, false);
  }
  d->block = (gp_counter_block_info){0,
                                     1 + d->num_queues,
                                     1 + d->num_queues,
                                     0,
                                     "derived",
                                     "Counters derived from the activity "
                                     "timeline, not read from hardware"};
  d->group = (gp_counter_group_info){GROUP_DERIVED, 0, "derived",
                                     "Derived from the activity timeline"};
  d->cat.counters = d->defs;
  d->cat.num_counters = 1 + d->num_queues;
  d->cat.num_blocks = 1;
  d->cat.blocks = &d->block;
  d->cat.groups = &d->group;
  d->cat.num_groups = 1;
  d->cat.max_active = 1 + d->num_queues;
  d->cat.min_period_ns = GP__DERIVED_MIN_PERIOD_NS;
  d->cat.max_period_ns = GP__DERIVED_MAX_PERIOD_NS;
  d->ecat = &d->cat;
  return d;
}

/* See derived.h. */
int gp__derived_register(uint32_t device_id) {
  gp_device_info di;
  if (device_id >= GP__MAX_DEVICES || gp_device_get_info(device_id, &di) != 0)
    return GP_ENODEV;
  if (gp__catalog_get(device_id, NULL))
    return GP_EEXIST;
  pthread_mutex_lock(&lock);
  if (states[device_id]) {
    pthread_mutex_unlock(&lock);
    return GP_EEXIST;
  }
  dstate *d = state_new(&di);
  if (!d) {
    pthread_mutex_unlock(&lock);
    return GP_ENOMEM;
  }
  int rc = gp__counters_register(device_id, &d->cat, &derived_provider, d);
  if (rc != 0) {
    pthread_mutex_unlock(&lock);
    free(d);
    return rc;
  }
  states[device_id] = d; /* published for good: lives as the process */
  pthread_mutex_unlock(&lock);
  gp__counters_announce(device_id);
  return 0;
}

/* Backends whose devices never publish a catalog of their own. CUDA
 * publishes its CUPTI catalog after registering the device and calls
 * gp__derived_register() itself when it has none. Vulkan and OpenGL
 * devices are left out: their libraries publish a catalog of their own
 * right after registering the device (pipeline statistics, per-frame
 * counters), and a device has one catalog. */
static bool qualifies(const gp_device_info *di) {
  return di->api == GP_API_OPEN_CL || di->api == GP_API_HIP;
}

static void on_device(uint32_t device_id) {
  gp_device_info di;
  if (gp_device_get_info(device_id, &di) == 0 && qualifies(&di) &&
      !gp__catalog_get(device_id, NULL))
    gp__derived_register(device_id);
}

/* See derived.h. */
void gp__derived_enable(void) {
  pthread_mutex_lock(&lock);
  bool first = !hooked;
  hooked = true;
  pthread_mutex_unlock(&lock);
  if (!first)
    return;
  gp__device_add_hook(on_device);
  uint32_t n = 0;
  gp_device_count(&n);
  for (uint32_t i = 0; i < n; i++)
    on_device(i);
}

/* See derived.h. */
uint64_t gp__derived_late_ns(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = late_ns;
  pthread_mutex_unlock(&lock);
  return v;
}

/* See derived.h. */
int gp__derived_attach(uint32_t device_id, const gp__catalog *cat,
                       uint32_t index) {
  if (device_id >= GP__MAX_DEVICES || !cat || index >= cat->num_counters)
    return GP_EINVAL;
  dstate *d = calloc(1, sizeof(*d));
  if (!d)
    return GP_ENOMEM;
  d->device_id = device_id;
  d->num_queues = 0; /* the device's Utilization only */
  d->ecat = cat;
  d->base = index;
  pthread_mutex_lock(&lock);
  if (states[device_id]) {
    pthread_mutex_unlock(&lock);
    free(d);
    return GP_EEXIST;
  }
  states[device_id] = d; /* lives as the process, like a catalog of ours */
  pthread_mutex_unlock(&lock);
  return 0;
}

/* The attached state of device_id, or NULL. */
static dstate *attached(uint32_t device_id) {
  pthread_mutex_lock(&lock);
  dstate *d = device_id < GP__MAX_DEVICES ? states[device_id] : NULL;
  pthread_mutex_unlock(&lock);
  return d && d->ecat != &d->cat ? d : NULL;
}

/* See derived.h. */
int gp__derived_sampling_start(uint32_t device_id, gp__sampler *s) {
  dstate *d = attached(device_id);
  return d ? dp_sampling_start(d, s) : GP_ENODEV;
}

/* See derived.h. */
void gp__derived_sampling_stop(uint32_t device_id, gp__sampler *s) {
  dstate *d = attached(device_id);
  if (d)
    dp_sampling_stop(d, s);
}

/* See derived.h. */
int gp__derived_provisional(uint32_t device_id, int queue, uint64_t from,
                            uint64_t to, double *pct) {
  if (!pct || to <= from)
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  dstate *d = device_id < GP__MAX_DEVICES ? states[device_id] : NULL;
  int rc = 0;
  if (!d || !d->s || (queue >= 0 && (uint32_t)queue >= d->num_queues)) {
    rc = GP_ENODEV;
  } else if (d->win_start > GP__DERIVED_KEEP_NS &&
             from < d->win_start - GP__DERIVED_KEEP_NS) {
    rc = GP_ERANGE;
  } else {
    const gp__busy *b = queue < 0 ? &d->all : &d->q[queue];
    uint64_t t = gp__busy_within(b, from, to);
    /* Work in flight (the last frontier said so) counts from when it was
     * enqueued, or from the end of the last work seen if that is later,
     * up to now: a device whose driver tells of a kernel only once it
     * ended (PoCL) does not read idle while the kernel runs. */
    if (queue < 0 && d->in_flight_since) {
      uint64_t s =
          d->in_flight_since > d->last_end ? d->in_flight_since : d->last_end;
      if (s < from)
        s = from;
      if (s < to)
        t += to - s;
      if (t > to - from)
        t = to - from;
    }
    *pct = 100.0 * (double)t / (double)(to - from);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
