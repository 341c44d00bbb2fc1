/*
 * clock.c - the trace clock (CLOCK_BOOTTIME) and device clock mapping.
 *
 * Why not just clock_gettime()? Because it costs about 26 ns a call on the
 * machines we run on (a KVM guest), more than the whole budget for writing
 * an activity record. So where the CPU has an invariant timestamp counter
 * the trace clock is the TSC put on a straight line through measured
 * (TSC, CLOCK_BOOTTIME) pairs:
 *
 *   ns = base_ns + (tsc - base_tsc) * mult / 2^32
 *
 * The first reads go to clock_gettime() directly while the counter's rate
 * is measured over at least a millisecond; after that the line is used,
 * and every ~50 ms one reader measures a fresh pair and slews the line
 * towards it (never backwards; a gap of more than 5 ms, as after a
 * suspend, is jumped forwards). The line's parameters sit behind a
 * sequence lock; a thread-local floor keeps each thread's readings
 * monotonic across re-calibrations.
 *
 * Device clocks are registered with a read function; snapshots pair a
 * device reading with the trace clock, and conversion is piecewise linear
 * between the snapshots that bracket a timestamp.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define GP_HAVE_TSC 1
#else
#define GP_HAVE_TSC 0
#endif

/* ------------------------------------------------------------------ */
/* Host clocks                                                          */

static uint64_t read_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* See clock.h. */
uint64_t gp_clock_read_host(uint32_t clock_id) {
  switch (clock_id) {
  case GP_CLOCK_REALTIME:
    return read_clock(CLOCK_REALTIME);
  case GP_CLOCK_MONOTONIC:
    return read_clock(CLOCK_MONOTONIC);
  case GP_CLOCK_BOOTTIME:
    return read_clock(CLOCK_BOOTTIME);
  default:
    return 0;
  }
}

/* ------------------------------------------------------------------ */
/* The TSC line                                                         */

enum {
  TSC_UNKNOWN = 0, /* not probed yet */
  TSC_ABSENT,      /* no invariant TSC: always clock_gettime() */
  TSC_CALIBRATING, /* probing the rate: clock_gettime() meanwhile */
  TSC_READY        /* the line is in use */
};

#define CAL_MIN_NS 1000000ull      /* first rate from >= 1 ms of counting */
#define RECAL_NS GP_CLOCK_RECAL_NS /* re-measure every 50 ms */
#define JUMP_NS 5000000ull         /* an error past 5 ms is a jump */
#define MAX_SLEW_PPM 500           /* slew at most 500 ppm */

static struct {
  _Atomic uint32_t seq; /* odd while the line is being changed */
  _Atomic int state;
  /* Written under lock inside the sequence lock, read by every thread:
   * atomics (relaxed; the sequence orders them), so that the lock is no
   * data race in C11 terms. On x86-64 these are plain moves. */
  _Atomic uint64_t base_tsc, base_ns;
  _Atomic uint64_t mult;        /* ns per tick, 32.32 fixed point */
  _Atomic uint64_t recal_ticks; /* ticks between re-measurements */
  /* Owned by whoever holds lock: */
  pthread_mutex_t lock;
  uint64_t first_tsc, first_ns; /* the first measured pair */
} tsc = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t (*_Atomic virtual_now)(void);
static GP_TLS uint64_t tls_floor; /* last value this thread returned */

#if GP_HAVE_TSC
static bool cpu_has_invariant_tsc(void) {
  unsigned a, b, c, d;
  if ((unsigned)__get_cpuid_max(0x80000000u, NULL) < 0x80000007u)
    return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;
}

/*
 * Measures one (tsc, boottime) pair: the tightest of three brackets of a
 * clock_gettime() call between two counter reads.
 */
static void measure_pair(uint64_t *tsc_out, uint64_t *ns_out) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    uint64_t t0 = __rdtsc();
    uint64_t ns = read_clock(CLOCK_BOOTTIME);
    uint64_t t1 = __rdtsc();
    if (t1 - t0 < best) {
      best = t1 - t0;
      *tsc_out = t0 + (t1 - t0) / 2;
      *ns_out = ns;
    }
  }
}

/* See core.h. */
uint64_t gp__clock_slew_mult(uint64_t rate, int64_t err_ns) {
  /* The coming period has RECAL_NS / rate ticks (rate in 32.32 ns per
   * tick): spreading err over them adds err * rate / RECAL_NS. A larger
   * gain overshoots and, past 2, oscillates ever wider. */
  __int128 corr = (__int128)err_ns * (__int128)rate / (__int128)RECAL_NS;
  __int128 lim = ((__int128)rate * MAX_SLEW_PPM) / 1000000;
  if (corr > lim)
    corr = lim;
  if (corr < -lim)
    corr = -lim;
  return (uint64_t)((__int128)rate + corr);
}

/* Value of the current line at counter value t (seqlock held by caller). */
static uint64_t line_at(uint64_t t) {
  uint64_t bt = atomic_load_explicit(&tsc.base_tsc, memory_order_relaxed);
  uint64_t bn = atomic_load_explicit(&tsc.base_ns, memory_order_relaxed);
  uint64_t m = atomic_load_explicit(&tsc.mult, memory_order_relaxed);
  if (t <= bt)
    return bn;
  return bn + (uint64_t)(((unsigned __int128)(t - bt) * m) >> 32);
}

static void line_store(uint64_t base_tsc, uint64_t base_ns, uint64_t mult,
                       uint64_t rate) {
  atomic_fetch_add_explicit(&tsc.seq, 1, memory_order_acq_rel);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&tsc.base_tsc, base_tsc, memory_order_relaxed);
  atomic_store_explicit(&tsc.base_ns, base_ns, memory_order_relaxed);
  atomic_store_explicit(&tsc.mult, mult, memory_order_relaxed);
  atomic_store_explicit(&tsc.recal_ticks,
                        (uint64_t)(((unsigned __int128)RECAL_NS << 32) / rate),
                        memory_order_relaxed);
  atomic_fetch_add_explicit(&tsc.seq, 1, memory_order_release);
}

/* ns per tick in 32.32 between two measured pairs. */
static uint64_t rate_between(uint64_t t0, uint64_t n0, uint64_t t1,
                             uint64_t n1) {
  return (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
}

/*
 * Slow path: probe, finish calibration or re-measure. Does nothing if
 * another thread is already at it.
 */
static void calibrate(void) {
  if (pthread_mutex_trylock(&tsc.lock) != 0)
    return; /* somebody else is at it; their result will do */
  int st = atomic_load_explicit(&tsc.state, memory_order_acquire);
  uint64_t t, ns;
  if (st == TSC_UNKNOWN) {
    if (!cpu_has_invariant_tsc() || getenv("GPUPERF_NO_TSC")) {
      atomic_store_explicit(&tsc.state, TSC_ABSENT, memory_order_release);
    } else {
      measure_pair(&tsc.first_tsc, &tsc.first_ns);
      atomic_store_explicit(&tsc.state, TSC_CALIBRATING, memory_order_release);
    }
  } else if (st == TSC_CALIBRATING) {
    measure_pair(&t, &ns);
    if (ns - tsc.first_ns >= CAL_MIN_NS && t > tsc.first_tsc) {
      uint64_t mult = rate_between(tsc.first_tsc, tsc.first_ns, t, ns);
      /* Readers until now saw clock_gettime() values up to about ns. */
      line_store(t, ns, mult, mult);
      atomic_store_explicit(&tsc.state, TSC_READY, memory_order_release);
    }
  } else if (st == TSC_READY) {
    measure_pair(&t, &ns);
    uint64_t pred = line_at(t);
    uint64_t rate = rate_between(tsc.first_tsc, tsc.first_ns, t, ns);
    int64_t err = (int64_t)(ns - pred);
    if (err > (int64_t)JUMP_NS) {
      line_store(t, ns, rate, rate); /* jump forwards (resume, step) */
    } else {
      line_store(t, pred, gp__clock_slew_mult(rate, err), rate);
    }
  }
  pthread_mutex_unlock(&tsc.lock);
}
#endif /* GP_HAVE_TSC */

/* See core.h. */
void gp__clock_set_virtual(uint64_t (*now)(void)) {
  atomic_store_explicit(&virtual_now, now, memory_order_release);
}

/* See core.h. */
bool gp__clock_is_virtual(void) {
  return atomic_load_explicit(&virtual_now, memory_order_acquire) != NULL;
}

static inline uint64_t floor_clamp(uint64_t v) {
  if (GP_UNLIKELY(v < tls_floor))
    return tls_floor;
  tls_floor = v;
  return v;
}

/* See clock.h. */
uint64_t gp_get_timestamp(void) {
  uint64_t (*vn)(void) =
      atomic_load_explicit(&virtual_now, memory_order_relaxed);
  if (GP_UNLIKELY(vn != NULL))
    return vn();
#if GP_HAVE_TSC
  int st = atomic_load_explicit(&tsc.state, memory_order_relaxed);
  if (GP_LIKELY(st == TSC_READY)) {
    uint64_t t = __rdtsc();
    uint32_t s;
    uint64_t base_tsc, base_ns, mult, recal;
    do {
      s = atomic_load_explicit(&tsc.seq, memory_order_acquire);
      base_tsc = atomic_load_explicit(&tsc.base_tsc, memory_order_relaxed);
      base_ns = atomic_load_explicit(&tsc.base_ns, memory_order_relaxed);
      mult = atomic_load_explicit(&tsc.mult, memory_order_relaxed);
      recal = atomic_load_explicit(&tsc.recal_ticks, memory_order_relaxed);
      atomic_thread_fence(memory_order_acquire);
    } while (GP_UNLIKELY(
        (s & 1) || s != atomic_load_explicit(&tsc.seq, memory_order_relaxed)));
    uint64_t delta = t > base_tsc ? t - base_tsc : 0;
    if (GP_UNLIKELY(delta > recal))
      calibrate();
    return floor_clamp(base_ns +
                       (uint64_t)(((unsigned __int128)delta * mult) >> 32));
  }
  if (st != TSC_ABSENT)
    calibrate();
#endif
  return floor_clamp(read_clock(CLOCK_BOOTTIME));
}

/* ------------------------------------------------------------------ */
/* Device clocks                                                        */

#define SNAP_RING 256

typedef struct dev_clock {
  bool used;
  char *name;
  gp_clock_read_fn read;
  void *user;
  gp_clock_snapshot ring[SNAP_RING]; /* ordered; oldest at head */
  size_t head, count;
} dev_clock;

static pthread_mutex_t clocks_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_clock clocks[GP_CLOCK_MAX_DEVICE_CLOCKS];

static dev_clock *clock_lookup(uint32_t id) {
  if (id < GP_CLOCK_FIRST_DEVICE ||
      id >= GP_CLOCK_FIRST_DEVICE + GP_CLOCK_MAX_DEVICE_CLOCKS)
    return NULL;
  dev_clock *c = &clocks[id - GP_CLOCK_FIRST_DEVICE];
  return c->used ? c : NULL;
}

static const gp_clock_snapshot *snap_at(const dev_clock *c, size_t i) {
  return &c->ring[(c->head + i) % SNAP_RING];
}

/* See clock.h. */
int gp_clock_register(const char *name, gp_clock_read_fn read, void *user,
                      uint32_t *clock_id) {
  if (!name || !clock_id)
    return GP_EINVAL;
  char *copy = strdup(name);
  if (!copy)
    return GP_ENOMEM;
  pthread_mutex_lock(&clocks_lock);
  for (uint32_t i = 0; i < GP_CLOCK_MAX_DEVICE_CLOCKS; i++) {
    if (!clocks[i].used) {
      memset(&clocks[i], 0, sizeof(clocks[i]));
      clocks[i].used = true;
      clocks[i].name = copy;
      clocks[i].read = read;
      clocks[i].user = user;
      *clock_id = GP_CLOCK_FIRST_DEVICE + i;
      pthread_mutex_unlock(&clocks_lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&clocks_lock);
  free(copy);
  return GP_ENOSPC;
}

/* See clock.h. */
int gp_clock_unregister(uint32_t clock_id) {
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  if (!c) {
    pthread_mutex_unlock(&clocks_lock);
    return GP_ENOENT;
  }
  free(c->name);
  memset(c, 0, sizeof(*c));
  pthread_mutex_unlock(&clocks_lock);
  return 0;
}

/* Appends a snapshot; caller holds clocks_lock. */
static int snap_append(dev_clock *c, const gp_clock_snapshot *s) {
  if (c->count > 0) {
    const gp_clock_snapshot *last = snap_at(c, c->count - 1);
    if (s->device_ts < last->device_ts || s->trace_ts < last->trace_ts)
      return GP_ERANGE;
    if (s->device_ts == last->device_ts)
      return 0; /* same instant measured again: nothing new */
  }
  if (c->count == SNAP_RING) {
    c->head = (c->head + 1) % SNAP_RING;
    c->count--;
  }
  c->ring[(c->head + c->count) % SNAP_RING] = *s;
  c->count++;
  return 0;
}

/* See clock.h. */
int gp_clock_snapshot_take(uint32_t clock_id, gp_clock_snapshot *out) {
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  int rc = 0;
  if (!c) {
    rc = GP_ENOENT;
  } else if (!c->read) {
    rc = GP_ENOTSUP;
  } else {
    gp_clock_snapshot s;
    uint64_t t0 = gp_get_timestamp();
    s.device_ts = c->read(c->user);
    uint64_t t1 = gp_get_timestamp();
    s.trace_ts = t0 + (t1 - t0) / 2;
    s.error_ns = (t1 - t0 + 1) / 2;
    rc = snap_append(c, &s);
    if (rc == 0 && out)
      *out = s;
  }
  pthread_mutex_unlock(&clocks_lock);
  return rc;
}

/* See clock.h. */
int gp_clock_add_snapshot(uint32_t clock_id, const gp_clock_snapshot *snap) {
  if (!snap)
    return GP_EINVAL;
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  int rc = c ? snap_append(c, snap) : GP_ENOENT;
  pthread_mutex_unlock(&clocks_lock);
  return rc;
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

/* See clock.h. */
int gp_clock_to_trace(uint32_t clock_id, uint64_t device_ts,
                      uint64_t *trace_ts) {
  if (!trace_ts)
    return GP_EINVAL;
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  int rc = 0;
  if (!c) {
    rc = GP_ENOENT;
  } else if (c->count == 0) {
    rc = GP_EAGAIN;
  } else {
    const gp_clock_snapshot *first = snap_at(c, 0);
    const gp_clock_snapshot *last = snap_at(c, c->count - 1);
    if (device_ts <= first->device_ts) {
      *trace_ts = map_linear(first, first, device_ts);
    } else if (device_ts >= last->device_ts) {
      const gp_clock_snapshot *prev =
          c->count >= 2 ? snap_at(c, c->count - 2) : last;
      *trace_ts = map_linear(prev, last, device_ts);
    } else {
      /* Binary search for the last snapshot <= device_ts. */
      size_t lo = 0, hi = c->count - 1;
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (snap_at(c, mid)->device_ts <= device_ts)
          lo = mid;
        else
          hi = mid;
      }
      *trace_ts = map_linear(snap_at(c, lo), snap_at(c, hi), device_ts);
    }
  }
  pthread_mutex_unlock(&clocks_lock);
  return rc;
}

/* See clock.h. */
int gp_clock_get_snapshots(uint32_t clock_id, gp_clock_snapshot *out,
                           size_t cap, size_t *n, const char **name) {
  if (!n || (cap > 0 && !out))
    return GP_EINVAL;
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  if (!c) {
    pthread_mutex_unlock(&clocks_lock);
    return GP_ENOENT;
  }
  size_t k = c->count < cap ? c->count : cap;
  size_t skip = c->count - k;
  for (size_t i = 0; i < k; i++)
    out[i] = *snap_at(c, skip + i);
  *n = k;
  if (name)
    *name = c->name;
  pthread_mutex_unlock(&clocks_lock);
  return 0;
}
