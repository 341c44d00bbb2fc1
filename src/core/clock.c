/*
 * clock.c - the trace clock (CLOCK_BOOTTIME); device clocks and their
 * mapping to it are clock_device.c's.
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
 * sequence lock; each thread reads from a copy of its own, retaken at
 * every re-measurement and started at the thread's own time, which keeps
 * its readings monotonic across re-calibrations (gp__tls.line below).

 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "seqfence.h"

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
  SEQ_FENCE(memory_order_release);
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

static void lines_expire(void);

/* See core.h. */
void gp__clock_set_virtual(uint64_t (*now)(void)) {
  atomic_store_explicit(&virtual_now, now, memory_order_seq_cst);
  atomic_thread_fence(memory_order_seq_cst);
  /* Every thread's next reading goes where virtual_now says. */
  if (now)
    lines_expire();
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

#if GP_HAVE_TSC
/* The TSC line as one consistent copy (the sequence lock's read side). */
typedef struct tsc_line {
  uint64_t base_tsc, base_ns, mult, recal;
} tsc_line;

static inline __attribute__((always_inline)) tsc_line line_read(void) {
  uint32_t s;
  tsc_line l;
  do {
    s = atomic_load_explicit(&tsc.seq, memory_order_acquire);
    l.base_tsc = atomic_load_explicit(&tsc.base_tsc, memory_order_relaxed);
    l.base_ns = atomic_load_explicit(&tsc.base_ns, memory_order_relaxed);
    l.mult = atomic_load_explicit(&tsc.mult, memory_order_relaxed);
    l.recal = atomic_load_explicit(&tsc.recal_ticks, memory_order_relaxed);
    SEQ_FENCE(memory_order_acquire);
  } while (GP_UNLIKELY(
      (s & 1) || s != atomic_load_explicit(&tsc.seq, memory_order_relaxed)));
  return l;
}

/* The line's time at delta ticks past its base. */
static inline uint64_t line_ns(const tsc_line *l, uint64_t delta) {
  return l->base_ns + (uint64_t)(((unsigned __int128)delta * l->mult) >> 32);
}
#endif

/*
 * Each thread reads the time from a copy of the line of its own
 * (gp__tls.line, core.h): its fast path, gp__now(), is an rdtsc, a
 * subtraction, a compare, a multiply and an add, with no sequence lock, no
 * clamp and no shared load. The copy is taken in gp__timestamp_slow() and
 * is good for `span` ticks past its base: up to the moment the shared line
 * is due to be re-measured, and never so far that delta * mult overflows
 * 64 bits. A copy starts where the thread's time is (its base is the value
 * returned when it was taken, never less than what the thread returned
 * before), so a thread's readings are monotonic across re-calibrations
 * without a floor check per reading.
 *
 * A virtual clock is not looked for on the fast path: every copy is in a
 * list, and gp__clock_set_virtual() zeroes every copy's span, which sends
 * each thread to the slow path, where the virtual clock is read.
 */
#define tls_line (gp__tls.line)

static struct {
  pthread_mutex_t lock;
  gp__tls_line_t *head;
  pthread_key_t key;  /* unlists a thread's copy when it exits */
  _Atomic bool ready; /* key made (at load): copies may be listed */
} lines = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void line_unlist(gp__tls_line_t *l) {
  if (l->prev)
    l->prev->next = l->next;
  else
    lines.head = l->next;
  if (l->next)
    l->next->prev = l->prev;
  l->prev = l->next = NULL;
}

static void copy_drop(void);

/* Thread exit (the destructor runs on the exiting thread): the copy's
 * memory goes with the thread. From here on the thread reads the time
 * without a copy (listed -1), never below what the copy gave. */
static void line_exit(void *arg) {
  gp__tls_line_t *l = arg;
  pthread_mutex_lock(&lines.lock);
  if (l->listed == 1)
    line_unlist(l);
  l->listed = -1;
  copy_drop();
  pthread_mutex_unlock(&lines.lock);
}

/* A fork's child has only the forking thread: the others' copies are not
 * there to be zeroed. The list is made afresh, not walked (another thread
 * may have been changing it), and its lock too; the parent's lock is not
 * taken before the fork, because other fork handlers read the time, and
 * a thread's first reading lists its copy. */
static void lines_child(void) {
  pthread_mutex_init(&lines.lock, NULL);
  lines.head = NULL;
  if (tls_line.listed == 1) {
    tls_line.prev = tls_line.next = NULL;
    lines.head = &tls_line;
  }
}

/* At load, not on a first reading: a first reading may be a signal
 * handler's. */
__attribute__((constructor)) static void lines_init(void) {
  if (pthread_key_create(&lines.key, line_exit) != 0)
    return; /* copies are never listed: every reading takes the slow path */
  pthread_atfork(NULL, NULL, lines_child);
  atomic_store(&lines.ready, true);
}

/* Puts the calling thread's copy in the list; false if it may not have
 * one now (the thread is exiting, the list is busy, or the library is
 * still loading): its readings then take the slow path, which asks again.
 * Never waits, since a signal handler may be the one asking. */
static bool line_list(void) {
  if (tls_line.listed)
    return tls_line.listed == 1;
  if (!atomic_load(&lines.ready) || pthread_mutex_trylock(&lines.lock) != 0)
    return false;
  if (pthread_setspecific(lines.key, &tls_line) != 0) {
    pthread_mutex_unlock(&lines.lock);
    return false;
  }
  tls_line.prev = NULL;
  tls_line.next = lines.head;
  if (lines.head)
    lines.head->prev = &tls_line;
  lines.head = &tls_line;
  tls_line.listed = 1;
  pthread_mutex_unlock(&lines.lock);
  return true;
}

/* Zeroes every thread's span (gp__clock_set_virtual). */
static void lines_expire(void) {
  pthread_mutex_lock(&lines.lock);
  for (gp__tls_line_t *l = lines.head; l; l = l->next)
    atomic_store_explicit(&l->span, 0, memory_order_relaxed);
  pthread_mutex_unlock(&lines.lock);
}

#if GP_HAVE_TSC
/* The thread's line at tick t: what its fast path returned for t, or the
 * most it can have returned (at the end of its span) once t is past it. */
static uint64_t tls_line_at(uint64_t t) {
  const gp__tls_line_t *l = &tls_line;
  uint64_t span = atomic_load_explicit(&l->span, memory_order_relaxed);
  if (span == 0 || t < l->base_tsc)
    return 0;
  uint64_t d = t - l->base_tsc;
  if (d >= span)
    d = span - 1;
  return l->base_ns + ((d * l->mult) >> 32);
}
#endif

/* Lets the calling thread's copy go: what it can have given so far
 * becomes the floor of its later readings (floor_clamp). */
static void copy_drop(void) {
#if GP_HAVE_TSC
  uint64_t old = tls_line_at(__rdtsc());
  if (tls_floor < old)
    tls_floor = old;
#endif
  atomic_store_explicit(&tls_line.span, 0, memory_order_relaxed);
}

/*
 * Everything but the thread's line: a virtual clock, the line past its
 * span (a fresh copy is taken), calibration under way or due, no TSC.
 * Out of line, so that gp__now() inlined stays small and
 * gp_get_timestamp()'s common path is a leaf that saves no registers.
 */
__attribute__((noinline)) uint64_t gp__timestamp_slow(void) {
  uint64_t (*vn)(void) =
      atomic_load_explicit(&virtual_now, memory_order_relaxed);
  if (vn != NULL)
    return vn();
#if GP_HAVE_TSC
  int st = atomic_load_explicit(&tsc.state, memory_order_relaxed);
  if (st == TSC_READY) {
    uint64_t t = __rdtsc();
    tsc_line l = line_read();
    uint64_t delta = t > l.base_tsc ? t - l.base_tsc : 0;
    if (delta > l.recal) {
      calibrate();
      t = __rdtsc();
      l = line_read();
      delta = t > l.base_tsc ? t - l.base_tsc : 0;
    }
    /* Never below what this thread's old copy gave (floor_clamp). */
    uint64_t old = tls_line_at(t);
    if (tls_floor < old)
      tls_floor = old;
    uint64_t v = floor_clamp(line_ns(&l, delta));
    /* A copy from here to the shared line's next re-measurement (none if
     * that is due: every reading comes here until somebody did it), for a
     * thread whose copy gp__clock_set_virtual() can reach. */
    uint64_t span = delta < l.recal ? l.recal - delta : 0;
    uint64_t max_span = l.mult ? UINT64_MAX / l.mult : 0;
    if (!line_list())
      span = 0;
    tls_line.base_tsc = t;
    tls_line.base_ns = v;
    tls_line.mult = l.mult;
    atomic_store_explicit(&tls_line.span, span < max_span ? span : max_span,
                          memory_order_relaxed);
    /* A virtual clock installed meanwhile may have zeroed the copies
     * before this one was stored: look again (the setter stores the
     * clock, then zeroes; one of the two sees the other). */
    atomic_thread_fence(memory_order_seq_cst);
    vn = atomic_load_explicit(&virtual_now, memory_order_relaxed);
    if (GP_UNLIKELY(vn != NULL)) {
      atomic_store_explicit(&tls_line.span, 0, memory_order_relaxed);
      return vn();
    }
    return v;
  }
  if (atomic_load_explicit(&tls_line.span, memory_order_relaxed))
    copy_drop(); /* the line was given up (a fork's child calibrates
                    afresh) */
  if (st != TSC_ABSENT)
    calibrate();
#endif
  return floor_clamp(read_clock(CLOCK_BOOTTIME));
}

/* See clock.h. */
uint64_t gp_get_timestamp(void) {
  return gp__now();
}

/* See core.h. */
const char *gp__clock_source_name(void) {
  if (gp__clock_is_virtual())
    return "virtual";
#if GP_HAVE_TSC
  switch (atomic_load_explicit(&tsc.state, memory_order_acquire)) {
  case TSC_READY:
    return "tsc";
  case TSC_CALIBRATING:
  case TSC_UNKNOWN:
    return "clock_gettime (TSC calibrating)";
  default:
    break;
  }
#endif
  return "clock_gettime (no invariant TSC)";
}
