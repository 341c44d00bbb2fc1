/*
 * ids.c - CUPTI's device and context ids mapped onto ours, and the clock
 * of CUPTI timestamps.
 *
 * CUPTI numbers devices by their CUdevice ordinal and contexts with its
 * own process-unique ids. Ours are shared with every other backend (the
 * simulator may have registered devices first), so each CUPTI id gets our
 * id on first sight. A device is best described before any record names
 * it (collector.c does so from the driver at start); a record that names
 * an unknown device registers it from its number alone, so nothing is
 * ever attributed to the wrong device.
 *
 * CUPTI's timestamps, GPU ones included, are on the timebase of
 * cuptiGetTimestamp(), which follows CLOCK_REALTIME. They are mapped onto
 * the trace clock through a registered device clock named "cupti" whose
 * snapshots pair cuptiGetTimestamp() with our clock; conversion goes
 * through those snapshots, never through an assumed offset.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

#define MAX_CUDA_DEVICES 64
#define CTX_CACHE 4

typedef struct ctx_map {
  uint32_t cupti_id;
  uint32_t cupti_device;
  uint32_t gp_id;
  bool live;
} ctx_map;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Our id + 1 per CUPTI device ordinal; 0 = not registered. Read without
 * the lock on the hot path. */
static _Atomic uint32_t device_ids[MAX_CUDA_DEVICES];
static ctx_map *contexts; /* under lock */
static size_t num_contexts, cap_contexts;
static _Atomic uint32_t generation = 1; /* bumped by reset: stale caches */

static _Atomic uint32_t clock_id;
static _Atomic uint64_t last_snapshot; /* trace time of the last one */

/* ------------------------------------------------------------------ */
/* Devices                                                              */

static int register_device(const gp_device_info *info, uint32_t clock,
                           uint32_t *device_id) {
  static const gp_device_queue_info queues[] = {
      {"Compute", "kernels of every stream", GP_QUEUE_COMPUTE, 0},
      {"Copy", "copies and fills of every stream", GP_QUEUE_COPY, 0}};
  gp_device_info in = *info;
  in.api = GP_API_CUDA;
  in.clock_id = clock;
  return GP_CORE->device_register(&in, queues, GP_ARRAY_SIZE(queues),
                                  device_id);
}

/* See cudaInt.h. */
int gp__cuda_device_describe(uint32_t cupti_device, const gp_device_info *info,
                             uint32_t *device_id) {
  if (!info || !device_id)
    return GP_EINVAL;
  if (cupti_device >= MAX_CUDA_DEVICES)
    return GP_ENOSPC;
  uint32_t clock = gp__cuda_clock(); /* takes the lock itself */
  pthread_mutex_lock(&lock);
  uint32_t have = atomic_load(&device_ids[cupti_device]);
  int rc = 0;
  if (have) {
    *device_id = have - 1;
  } else {
    uint32_t id = 0;
    rc = register_device(info, clock, &id);
    if (rc == 0) {
      atomic_store(&device_ids[cupti_device], id + 1);
      *device_id = id;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See cudaInt.h. */
uint32_t gp__cuda_device(uint32_t cupti_device) {
  if (cupti_device >= MAX_CUDA_DEVICES)
    return UINT32_MAX;
  uint32_t have =
      atomic_load_explicit(&device_ids[cupti_device], memory_order_acquire);
  if (GP_LIKELY(have != 0))
    return have - 1;
  char name[32];
  snprintf(name, sizeof(name), "CUDA device %u", cupti_device);
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.name = name;
  info.vendor = "NVIDIA";
  info.model = name;
  info.architecture = "";
  info.driver_version = "";
  uint32_t id;
  return gp__cuda_device_describe(cupti_device, &info, &id) == 0 ? id
                                                                 : UINT32_MAX;
}

/* See cudaInt.h. */
uint32_t gp__cuda_device_ordinal(uint32_t device_id) {
  for (uint32_t i = 0; i < MAX_CUDA_DEVICES; i++)
    if (atomic_load(&device_ids[i]) == device_id + 1)
      return i;
  return UINT32_MAX;
}

/* See cudaInt.h. */
bool gp__cuda_device_known(uint32_t cupti_device) {
  return cupti_device < MAX_CUDA_DEVICES &&
         atomic_load(&device_ids[cupti_device]) != 0;
}

/* ------------------------------------------------------------------ */
/* Contexts                                                             */

static ctx_map *ctx_find(uint32_t cupti_context) {
  for (size_t i = 0; i < num_contexts; i++)
    if (contexts[i].cupti_id == cupti_context)
      return &contexts[i];
  return NULL;
}

/* See cudaInt.h. */
uint32_t gp__cuda_context(uint32_t cupti_context, uint32_t cupti_device,
                          uint32_t default_stream) {
  if (cupti_context == 0)
    return 0;
  /* Contexts are few and records of one context come in runs: a small
   * per-thread cache spares the lock. */
  static GP_TLS uint32_t cache_key[CTX_CACHE], cache_val[CTX_CACHE];
  static GP_TLS unsigned cache_next;
  static GP_TLS uint32_t cache_gen;
  uint32_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
  if (cache_gen != gen) {
    memset(cache_val, 0, sizeof(cache_val));
    cache_gen = gen;
  }
  for (unsigned i = 0; i < CTX_CACHE; i++)
    if (cache_key[i] == cupti_context && cache_val[i] != 0)
      return cache_val[i];

  uint32_t id = 0;
  pthread_mutex_lock(&lock);
  ctx_map *c = ctx_find(cupti_context);
  if (c) {
    id = c->gp_id;
    goto out;
  }
  pthread_mutex_unlock(&lock);
  /* Registering the device may take the lock: do it outside. */
  uint32_t dev = gp__cuda_device(cupti_device);
  if (dev == UINT32_MAX)
    return 0;
  pthread_mutex_lock(&lock);
  c = ctx_find(cupti_context);
  if (c) {
    id = c->gp_id;
    goto out;
  }
  if (num_contexts == cap_contexts) {
    size_t ncap = cap_contexts ? cap_contexts * 2 : 16;
    ctx_map *n = realloc(contexts, ncap * sizeof(*n));
    if (!n)
      goto out;
    contexts = n;
    cap_contexts = ncap;
  }
  if (GP_CORE->context_register(dev, GP_API_CUDA, default_stream, &id) != 0) {
    id = 0;
    goto out;
  }
  contexts[num_contexts++] = (ctx_map){cupti_context, cupti_device, id, true};
out:
  pthread_mutex_unlock(&lock);
  if (id) {
    cache_key[cache_next % CTX_CACHE] = cupti_context;
    cache_val[cache_next % CTX_CACHE] = id;
    cache_next++;
  }
  return id;
}

/* See cudaInt.h. */
uint32_t gp__cuda_context_device(uint32_t cupti_context) {
  pthread_mutex_lock(&lock);
  ctx_map *c = ctx_find(cupti_context);
  uint32_t dev = c ? c->cupti_device : UINT32_MAX;
  pthread_mutex_unlock(&lock);
  return dev;
}

/* See cudaInt.h. */
void gp__cuda_context_gone(uint32_t cupti_context) {
  pthread_mutex_lock(&lock);
  ctx_map *c = ctx_find(cupti_context);
  /* The mapping stays: records of the context may still be in CUPTI's
   * buffers and must keep landing on the same id. */
  bool was_live = c && c->live;
  if (c)
    c->live = false;
  uint32_t id = c ? c->gp_id : 0;
  pthread_mutex_unlock(&lock);
  if (was_live)
    GP_CORE->context_unregister(id);
}

/* See cudaInt.h. */
void gp__cuda_ids_reset(void) {
  pthread_mutex_lock(&lock);
  free(contexts);
  contexts = NULL;
  num_contexts = cap_contexts = 0;
  atomic_fetch_add(&generation, 1);
  pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ */
/* The CUPTI clock                                                      */

static uint64_t read_cupti_clock(void *user) {
  (void)user;
  uint64_t ts = 0;
  if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
    return 0;
  return ts;
}

/*
 * Measures one (CUPTI, trace) pair: the narrowest of a few windows of
 * trace-clock readings around cuptiGetTimestamp(), whose first call can
 * take a millisecond of lazy set-up that must not become mapping error.
 */
static int measure_pair(gp_clock_snapshot *out) {
  gp_clock_snapshot best = {0, 0, UINT64_MAX};
  for (int i = 0; i < 5; i++) {
    uint64_t t0 = gp_get_timestamp();
    uint64_t d = read_cupti_clock(NULL);
    uint64_t t1 = gp_get_timestamp();
    if (d == 0)
      return GP_EIO;
    if ((t1 - t0) / 2 < best.error_ns)
      best = (gp_clock_snapshot){d, t0 + (t1 - t0) / 2, (t1 - t0) / 2};
  }
  *out = best;
  return 0;
}

/* See cudaInt.h. */
uint32_t gp__cuda_clock(void) {
  uint32_t id = atomic_load_explicit(&clock_id, memory_order_acquire);
  if (GP_LIKELY(id != 0))
    return id;
  pthread_mutex_lock(&lock);
  id = atomic_load(&clock_id);
  if (id == 0 && gp_clock_register("cupti", read_cupti_clock, NULL, &id) == 0) {
    gp_clock_snapshot s;
    if (measure_pair(&s) == 0 && gp_clock_add_snapshot(id, &s) == 0)
      atomic_store(&last_snapshot, s.trace_ts);
    atomic_store_explicit(&clock_id, id, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
  return id;
}

/* See cudaInt.h. */
int gp__cuda_clock_refresh(uint64_t min_interval_ns) {
  uint32_t id = gp__cuda_clock();
  if (id == 0)
    return GP_ENOENT;
  uint64_t now = gp_get_timestamp();
  uint64_t last = atomic_load(&last_snapshot);
  if (min_interval_ns && now - last < min_interval_ns)
    return 0;
  gp_clock_snapshot s;
  int rc = measure_pair(&s);
  if (rc == 0)
    rc = gp_clock_add_snapshot(id, &s);
  /* CLOCK_REALTIME can be stepped back (NTP, an administrator): such a
   * pair is refused (GP_ERANGE) and the mapping keeps the earlier ones. */
  if (rc == 0)
    atomic_store(&last_snapshot, s.trace_ts);
  return rc;
}

/*
 * A buffer holds thousands of timestamps; gp_clock_to_trace() takes the
 * clock lock for each. While a thread translates a buffer it maps them
 * through its own copy of the snapshots instead, with the same
 * piecewise-linear rule as gp_clock_to_trace() (clock.h): the offset of
 * the first snapshot before it, interpolation between the two that
 * bracket a timestamp, the line of the last two beyond the last. The copy
 * lives on the heap: the library may be dlopen()ed, where static TLS is
 * scarce.
 */
#define SNAP_CACHE 256

typedef struct snap_cache {
  gp_clock_snapshot v[SNAP_CACHE];
  size_t n;
  bool on;
} snap_cache;

static GP_TLS snap_cache *tls_snaps;
static pthread_key_t snaps_key;
static pthread_once_t snaps_once = PTHREAD_ONCE_INIT;

static void snaps_key_init(void) {
  pthread_key_create(&snaps_key, free);
}

/* See cudaInt.h. */
void gp__cuda_ts_begin(void) {
  uint32_t id = gp__cuda_clock();
  if (id == 0)
    return;
  if (!tls_snaps) {
    pthread_once(&snaps_once, snaps_key_init);
    tls_snaps = calloc(1, sizeof(*tls_snaps));
    if (!tls_snaps)
      return;
    pthread_setspecific(snaps_key, tls_snaps);
  }
  size_t n = 0;
  if (gp_clock_get_snapshots(id, tls_snaps->v, SNAP_CACHE, &n, NULL) == 0 &&
      n > 0) {
    tls_snaps->n = n;
    tls_snaps->on = true;
  }
}

/* See cudaInt.h. */
void gp__cuda_ts_end(void) {
  if (tls_snaps)
    tls_snaps->on = false;
}

/* Maps d through the line from a to b (b may equal a: pure offset). */
static uint64_t map_linear(const gp_clock_snapshot *a,
                           const gp_clock_snapshot *b, uint64_t d) {
  __int128 dd = (__int128)d - (__int128)a->device_ts;
  if (b->device_ts == a->device_ts)
    return (uint64_t)((__int128)a->trace_ts + dd);
  __int128 span_t = (__int128)b->trace_ts - (__int128)a->trace_ts;
  __int128 span_d = (__int128)b->device_ts - (__int128)a->device_ts;
  __int128 r = (__int128)a->trace_ts + (dd * span_t) / span_d;
  return r < 0 ? 0 : (uint64_t)r;
}

static uint64_t map_cached(const snap_cache *c, uint64_t d) {
  const gp_clock_snapshot *first = &c->v[0], *last = &c->v[c->n - 1];
  if (d <= first->device_ts)
    return map_linear(first, first, d);
  if (d >= last->device_ts)
    return map_linear(c->n >= 2 ? &c->v[c->n - 2] : last, last, d);
  size_t lo = 0, hi = c->n - 1;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->v[mid].device_ts <= d)
      lo = mid;
    else
      hi = mid;
  }
  return map_linear(&c->v[lo], &c->v[hi], d);
}

/* See cudaInt.h. */
uint64_t gp__cuda_ts(uint64_t cupti_ts) {
  if (cupti_ts == 0)
    return 0;
  snap_cache *c = tls_snaps;
  if (c && c->on)
    return map_cached(c, cupti_ts);
  uint32_t id = gp__cuda_clock();
  uint64_t t = 0;
  if (id == 0 || gp_clock_to_trace(id, cupti_ts, &t) != 0)
    return 0;
  return t;
}
