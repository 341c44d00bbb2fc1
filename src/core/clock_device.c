/*
 * clock_device.c - device clocks and their mapping to the trace clock
 * (clock.c).
 *
 * Device clocks are registered with a read function; snapshots pair a
 * device reading with the trace clock, and conversion is piecewise linear
 * between the snapshots that bracket a timestamp. Consumers that write
 * every snapshot out (the trace writer) read them through a cursor of
 * their own, without loss, however far behind the producer they are.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "seqfence.h"

/* ------------------------------------------------------------------ */
/* Device clocks                                                        */

/*
 * Every GPU record goes through gp_clock_to_trace(), often several times,
 * so readers take no lock: each clock has its own sequence counter, odd
 * while a writer changes its ring. Readers copy what they need, check that
 * the counter did not move, and retry otherwise; writers (snapshots,
 * registration: rare) still serialise on clocks_lock. The ring's words are
 * relaxed atomics so that a torn read is a retry, not a data race; on
 * x86-64 they are plain moves.
 */
#define SNAP_RING 256

typedef struct snap_slot {
  _Atomic uint64_t device_ts, trace_ts, error_ns;
} snap_slot;

typedef struct dev_clock {
  _Atomic uint32_t seq; /* odd while the ring or the clock changes */
  _Atomic bool used;
  char *_Atomic name;
  /* Read and written under clocks_lock only: */
  gp_clock_read_fn read;
  void *user;
  /* The ring, ordered, oldest at head: */
  _Atomic uint32_t head, count;
  snap_slot ring[SNAP_RING];
} dev_clock;

static pthread_mutex_t clocks_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_clock clocks[GP_CLOCK_MAX_DEVICE_CLOCKS];

/*
 * Consumers (gp__clock_consumer_open): the ring keeps the last SNAP_RING
 * snapshots for conversion, but a consumer that writes them all out reads
 * on its own thread, behind the producer, and would miss those the ring
 * overwrote in between. So each clock also has a log, beside the ring and
 * out of the readers' way: snapshots are numbered from 0 for each
 * registration of the clock, every consumer has a cursor per clock (the
 * number of the next one it reads), and a snapshot the ring drops while a
 * cursor has not passed it moves to the clock's spill, which ends where
 * the ring begins. Spilled snapshots every cursor has passed are freed, so
 * the memory grows only while a consumer lags, and at most to SPILL_MAX
 * snapshots a clock: past that the oldest spilled one is dropped, and the
 * consumers that had not read it are told how many they missed. The log
 * is read and written under clocks_lock only; gp_clock_to_trace() never
 * sees it.
 */
#define MAX_CONSUMERS GP_CLOCK_MAX_CONSUMERS /* sessions: 8 at once */
#define SPILL_MAX GP_CLOCK_SPILL_MAX         /* 1.5 MiB a clock at most */
#define SPILL_MIN 64u                        /* the first allocation */
/* Doubling from SPILL_MIN reaches SPILL_MAX exactly; a bit per consumer. */
_Static_assert((SPILL_MAX & (SPILL_MAX - 1)) == 0 && SPILL_MAX >= SPILL_MIN,
               "SPILL_MAX: a power of two");
_Static_assert(MAX_CONSUMERS <= 32, "consumers_live has 32 bits");

typedef struct snap_log {
  uint64_t total;                 /* snapshots appended since registration */
  uint64_t cursor[MAX_CONSUMERS]; /* by consumer: next snapshot to read */
  gp_clock_snapshot *spill;       /* circular: spill[(off + i) % cap] */
  uint32_t off, n, cap;
} snap_log;

static snap_log logs[GP_CLOCK_MAX_DEVICE_CLOCKS];
static uint32_t consumer_handle[MAX_CONSUMERS]; /* 0: free */
static uint32_t consumers_live; /* bit i set: consumer_handle[i] != 0 */
static uint32_t consumer_gen;   /* generations handed out, for handles */

#define RELAXED memory_order_relaxed

static dev_clock *clock_slot(uint32_t id) {
  if (id < GP_CLOCK_FIRST_DEVICE ||
      id >= GP_CLOCK_FIRST_DEVICE + GP_CLOCK_MAX_DEVICE_CLOCKS)
    return NULL;
  return &clocks[id - GP_CLOCK_FIRST_DEVICE];
}

/* The clock of id if registered; caller holds clocks_lock. */
static dev_clock *clock_lookup(uint32_t id) {
  dev_clock *c = clock_slot(id);
  return c && atomic_load_explicit(&c->used, RELAXED) ? c : NULL;
}

static void slot_load(const dev_clock *c, uint32_t head, uint32_t i,
                      gp_clock_snapshot *out) {
  const snap_slot *s = &c->ring[(head + i) % SNAP_RING];
  out->device_ts = atomic_load_explicit(&s->device_ts, RELAXED);
  out->trace_ts = atomic_load_explicit(&s->trace_ts, RELAXED);
  out->error_ns = atomic_load_explicit(&s->error_ns, RELAXED);
}

static void slot_store(dev_clock *c, uint32_t i, const gp_clock_snapshot *s) {
  snap_slot *d = &c->ring[i % SNAP_RING];
  atomic_store_explicit(&d->device_ts, s->device_ts, RELAXED);
  atomic_store_explicit(&d->trace_ts, s->trace_ts, RELAXED);
  atomic_store_explicit(&d->error_ns, s->error_ns, RELAXED);
}

/* Writer side of the sequence lock (clocks_lock held). */
static void write_begin(dev_clock *c) {
  atomic_fetch_add_explicit(&c->seq, 1, RELAXED);
  SEQ_FENCE(memory_order_release);
}

static void write_end(dev_clock *c) {
  atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
}

/* Reader side: the counter to validate against (waits out a writer). */
static uint32_t read_begin(const dev_clock *c) {
  uint32_t s;
  while ((s = atomic_load_explicit(&c->seq, memory_order_acquire)) & 1)
    ;
  return s;
}

static bool read_retry(const dev_clock *c, uint32_t s) {
  SEQ_FENCE(memory_order_acquire);
  return atomic_load_explicit(&c->seq, RELAXED) != s;
}

/* ---- The log: spill and cursors (clocks_lock held) ---- */

static snap_log *log_of(const dev_clock *c) {
  return &logs[c - clocks];
}

/* The number of the oldest snapshot of c still held, spilled or not. */
static uint64_t log_first(const dev_clock *c, const snap_log *l) {
  return l->total - atomic_load_explicit(&c->count, RELAXED) - l->n;
}

static void spill_free(snap_log *l) {
  free(l->spill);
  l->spill = NULL;
  l->off = l->n = l->cap = 0;
}

/* Drops the k oldest spilled snapshots; an empty spill holds no memory. */
static void spill_drop(snap_log *l, uint32_t k) {
  if (k >= l->n) {
    spill_free(l);
    return;
  }
  l->off = (l->off + k) % l->cap;
  l->n -= k;
}

/*
 * Appends s, the snapshot the ring is about to overwrite, to the spill. At
 * SPILL_MAX the oldest spilled one goes first; if memory runs out the
 * whole spill goes, s with it. Either way the spill still ends where the
 * ring begins, and a consumer that had not read what went finds a gap
 * before its cursor: a loss it is told of (gp__clock_consume).
 */
static void spill_push(snap_log *l, const gp_clock_snapshot *s) {
  if (l->n == SPILL_MAX)
    spill_drop(l, 1);
  if (l->n == l->cap) {
    uint32_t ncap = l->cap ? l->cap * 2 : SPILL_MIN;
    gp_clock_snapshot *ns = realloc(l->spill, ncap * sizeof(*ns));
    if (!ns) {
      spill_free(l);
      return;
    }
    /* Full, so the part that wrapped is [0, off): it moves past the old
     * end, where the oldest part [off, cap) now continues. */
    memcpy(ns + l->cap, ns, l->off * sizeof(*ns));
    l->spill = ns;
    l->cap = ncap;
  }
  l->spill[(l->off + l->n) % l->cap] = *s;
  l->n++;
}

/* True if a consumer has not read snapshot number seq yet. */
static bool log_wanted(const snap_log *l, uint64_t seq) {
  for (uint32_t m = consumers_live; m; m &= m - 1)
    if (l->cursor[__builtin_ctz(m)] <= seq)
      return true;
  return false;
}

/* Frees the spilled snapshots every consumer has read. */
static void spill_trim(const dev_clock *c, snap_log *l) {
  if (l->n == 0)
    return;
  uint64_t first = log_first(c, l), min = UINT64_MAX;
  for (uint32_t m = consumers_live; m; m &= m - 1)
    if (l->cursor[__builtin_ctz(m)] < min)
      min = l->cursor[__builtin_ctz(m)];
  if (min > first)
    spill_drop(l, min - first > l->n ? l->n : (uint32_t)(min - first));
}

/* A clock's log starts afresh: numbered from 0, every cursor at 0. */
static void log_reset(snap_log *l) {
  spill_free(l);
  l->total = 0;
  memset(l->cursor, 0, sizeof(l->cursor));
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
    dev_clock *c = &clocks[i];
    if (!atomic_load_explicit(&c->used, RELAXED)) {
      write_begin(c);
      atomic_store_explicit(&c->name, copy, RELAXED);
      c->read = read;
      c->user = user;
      atomic_store_explicit(&c->head, 0, RELAXED);
      atomic_store_explicit(&c->count, 0, RELAXED);
      atomic_store_explicit(&c->used, true, RELAXED);
      write_end(c);
      log_reset(log_of(c));
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
  write_begin(c);
  atomic_store_explicit(&c->used, false, RELAXED);
  atomic_store_explicit(&c->count, 0, RELAXED);
  char *name = atomic_exchange_explicit(&c->name, NULL, RELAXED);
  c->read = NULL;
  c->user = NULL;
  write_end(c);
  log_reset(log_of(c));
  pthread_mutex_unlock(&clocks_lock);
  free(name); /* as before: a name handed out lives until unregistered */
  return 0;
}

/* Appends a snapshot; caller holds clocks_lock. */
static int snap_append(dev_clock *c, const gp_clock_snapshot *s) {
  uint32_t head = atomic_load_explicit(&c->head, RELAXED);
  uint32_t count = atomic_load_explicit(&c->count, RELAXED);
  if (count > 0) {
    gp_clock_snapshot last;
    slot_load(c, head, count - 1, &last);
    if (s->device_ts < last.device_ts || s->trace_ts < last.trace_ts)
      return GP_ERANGE;
    if (s->device_ts == last.device_ts)
      return 0; /* same instant measured again: nothing new */
  }
  snap_log *l = log_of(c);
  if (count == SNAP_RING) {
    /* The oldest goes: to the spill if a consumer has yet to read it.
     * Done before the write section: readers never look at the spill. */
    if (log_wanted(l, l->total - SNAP_RING)) {
      gp_clock_snapshot old;
      slot_load(c, head, 0, &old);
      spill_push(l, &old);
    } else if (l->n) {
      spill_free(l); /* defensive: it precedes what nobody wants */
    }
  }
  write_begin(c);
  if (count == SNAP_RING) {
    head = (head + 1) % SNAP_RING;
    count--;
  }
  slot_store(c, head + count, s);
  atomic_store_explicit(&c->head, head, RELAXED);
  atomic_store_explicit(&c->count, count + 1, RELAXED);
  write_end(c);
  l->total++;
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
  __int128 q;
  if (dd > -((__int128)1 << 31) && dd < ((__int128)1 << 31) &&
      span_t < ((__int128)1 << 31) && span_d < ((__int128)1 << 62)) {
    /* The usual case, seconds at most: the same quotient in 64 bits. */
    q = (int64_t)dd * (int64_t)span_t / (int64_t)span_d;
  } else {
    q = (dd * span_t) / span_d;
  }
  __int128 r = (__int128)a->trace_ts + q;
  return r < 0 ? 0 : (uint64_t)r;
}

/* Picks the snapshots that bracket device_ts (a == b: offset only).
 * Returns false when the clock has none. Inside a read section. */
static bool bracket(const dev_clock *c, uint64_t device_ts,
                    gp_clock_snapshot *a, gp_clock_snapshot *b) {
  uint32_t head = atomic_load_explicit(&c->head, RELAXED);
  uint32_t count = atomic_load_explicit(&c->count, RELAXED);
  if (count == 0)
    return false;
  if (count > SNAP_RING)
    count = SNAP_RING; /* torn: the retry will tell */
  slot_load(c, head, count - 1, b);
  if (device_ts >= b->device_ts) {
    slot_load(c, head, count >= 2 ? count - 2 : count - 1, a);
    return true;
  }
  slot_load(c, head, 0, a);
  if (device_ts <= a->device_ts) {
    *b = *a;
    return true;
  }
  /* Work is mostly converted soon after it ran: try the last span first,
   * then binary search for the last snapshot <= device_ts. */
  uint32_t lo = 0, hi = count - 1;
  if (count > 2 &&
      atomic_load_explicit(&c->ring[(head + count - 2) % SNAP_RING].device_ts,
                           RELAXED) <= device_ts)
    lo = count - 2;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (atomic_load_explicit(&c->ring[(head + mid) % SNAP_RING].device_ts,
                             RELAXED) <= device_ts)
      lo = mid;
    else
      hi = mid;
  }
  slot_load(c, head, lo, a);
  slot_load(c, head, hi, b);
  return true;
}

/* See clock.h. */
int gp_clock_to_trace(uint32_t clock_id, uint64_t device_ts,
                      uint64_t *trace_ts) {
  if (!trace_ts)
    return GP_EINVAL;
  const dev_clock *c = clock_slot(clock_id);
  if (!c)
    return GP_ENOENT;
  gp_clock_snapshot a, b;
  bool used, have;
  uint32_t s;
  do {
    s = read_begin(c);
    used = atomic_load_explicit(&c->used, RELAXED);
    have = used && bracket(c, device_ts, &a, &b);
  } while (GP_UNLIKELY(read_retry(c, s)));
  if (!used)
    return GP_ENOENT;
  if (!have)
    return GP_EAGAIN;
  *trace_ts = map_linear(&a, &b, device_ts);
  return 0;
}

/* See clock.h. */
int gp_clock_get_snapshots(uint32_t clock_id, gp_clock_snapshot *out,
                           size_t cap, size_t *n, const char **name) {
  if (!n || (cap > 0 && !out))
    return GP_EINVAL;
  const dev_clock *c = clock_slot(clock_id);
  if (!c)
    return GP_ENOENT;
  bool used;
  size_t k;
  const char *nm;
  uint32_t s;
  do {
    s = read_begin(c);
    used = atomic_load_explicit(&c->used, RELAXED);
    uint32_t head = atomic_load_explicit(&c->head, RELAXED);
    uint32_t count = atomic_load_explicit(&c->count, RELAXED);
    if (count > SNAP_RING)
      count = SNAP_RING; /* torn: the retry will tell */
    nm = atomic_load_explicit(&c->name, RELAXED);
    k = count < cap ? count : cap;
    for (size_t i = 0; i < k; i++)
      slot_load(c, head, (uint32_t)(count - k + i), &out[i]);
  } while (GP_UNLIKELY(read_retry(c, s)));
  if (!used)
    return GP_ENOENT;
  *n = k;
  if (name)
    *name = nm;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Consumers                                                            */

/* The slot of consumer h, or -1 if h is not open. clocks_lock held. */
static int consumer_index(uint32_t h) {
  uint32_t i = h % MAX_CONSUMERS;
  return h != 0 && consumer_handle[i] == h ? (int)i : -1;
}

/* See core.h. */
int gp__clock_consumer_open(uint32_t *consumer) {
  if (!consumer)
    return GP_EINVAL;
  int rc = GP_ENOSPC;
  pthread_mutex_lock(&clocks_lock);
  for (uint32_t i = 0; i < MAX_CONSUMERS; i++) {
    if (consumer_handle[i])
      continue;
    /* A handle names one opening: a stale one (closed, or the parent's
     * in a forked child) never matches a slot taken again. */
    if (++consumer_gen >= UINT32_MAX / MAX_CONSUMERS)
      consumer_gen = 1;
    uint32_t h = consumer_gen * MAX_CONSUMERS + i;
    consumer_handle[i] = h;
    consumers_live |= 1u << i;
    for (uint32_t k = 0; k < GP_CLOCK_MAX_DEVICE_CLOCKS; k++)
      logs[k].cursor[i] =
          logs[k].total - atomic_load_explicit(&clocks[k].count, RELAXED);
    *consumer = h;
    rc = 0;
    break;
  }
  pthread_mutex_unlock(&clocks_lock);
  return rc;
}

/* See core.h. */
void gp__clock_consumer_close(uint32_t consumer) {
  pthread_mutex_lock(&clocks_lock);
  int i = consumer_index(consumer);
  if (i >= 0) {
    consumer_handle[i] = 0;
    consumers_live &= ~(1u << i);
    for (uint32_t k = 0; k < GP_CLOCK_MAX_DEVICE_CLOCKS; k++)
      spill_trim(&clocks[k], &logs[k]);
  }
  pthread_mutex_unlock(&clocks_lock);
}

/* See core.h. */
int gp__clock_consume(uint32_t consumer, uint32_t clock_id, uint64_t bound,
                      gp_clock_snapshot *out, size_t cap, size_t *n,
                      uint64_t *lost) {
  if (!n || !lost || (cap > 0 && !out))
    return GP_EINVAL;
  pthread_mutex_lock(&clocks_lock);
  int i = consumer_index(consumer);
  dev_clock *c = clock_lookup(clock_id);
  if (i < 0 || !c) {
    pthread_mutex_unlock(&clocks_lock);
    return i < 0 ? GP_EINVAL : GP_ENOENT;
  }
  snap_log *l = log_of(c);
  uint32_t head = atomic_load_explicit(&c->head, RELAXED);
  uint64_t first = log_first(c, l), *cur = &l->cursor[i];
  *lost = 0;
  if (*cur < first) { /* dropped at the cap, or memory ran out */
    *lost = first - *cur;
    *cur = first;
  }
  size_t k = 0;
  for (; k < cap && *cur < l->total; k++, (*cur)++) {
    uint64_t at = *cur - first;
    if (at < l->n)
      out[k] = l->spill[(l->off + at) % l->cap];
    else
      slot_load(c, head, (uint32_t)(at - l->n), &out[k]);
    if (out[k].trace_ts >= bound)
      break; /* in trace time order: the rest waits too */
  }
  spill_trim(c, l);
  pthread_mutex_unlock(&clocks_lock);
  *n = k;
  return 0;
}

/* See core.h. */
size_t gp__clock_spilled(uint32_t clock_id) {
  pthread_mutex_lock(&clocks_lock);
  dev_clock *c = clock_lookup(clock_id);
  size_t n = c ? log_of(c)->n : 0;
  pthread_mutex_unlock(&clocks_lock);
  return n;
}

/*
 * In a forked child the consumers are the parent's (its writers are never
 * used there, session.c): they are forgotten, so nothing is spilled for
 * them. A thread that is gone may have held clocks_lock at the fork, in
 * the middle of a change: then the spills, perhaps half moved, are left
 * rather than freed, and a ring caught in its write section (an odd
 * counter would keep gp_clock_to_trace() waiting for ever) is emptied.
 * The TSC line is made safe the same way.
 */
static void clocks_after_fork(void) {
  bool held = pthread_mutex_trylock(&clocks_lock) != 0;
  if (held) {
    pthread_mutex_init(&clocks_lock, NULL);
    pthread_mutex_lock(&clocks_lock);
  }
  memset(consumer_handle, 0, sizeof(consumer_handle));
  consumers_live = 0;
  for (uint32_t k = 0; k < GP_CLOCK_MAX_DEVICE_CLOCKS; k++) {
    dev_clock *c = &clocks[k];
    if (held) {
      logs[k].spill = NULL;
      logs[k].off = logs[k].n = logs[k].cap = 0;
    } else {
      spill_free(&logs[k]);
    }
    if (atomic_load_explicit(&c->seq, RELAXED) & 1) {
      atomic_store_explicit(&c->head, 0, RELAXED);
      atomic_store_explicit(&c->count, 0, RELAXED);
      write_end(c);
    }
  }
  pthread_mutex_unlock(&clocks_lock);
#if GP_HAVE_TSC
  /* The same for the TSC line: a calibration cut short by the fork would
   * leave its lock taken for good (no more re-measuring) and, caught in
   * line_store(), an odd counter that keeps every reader waiting and a
   * line half old, half new. The child then calibrates afresh, on
   * clock_gettime() meanwhile (floor_clamp() keeps its time monotonic). */
  if (pthread_mutex_trylock(&tsc.lock) != 0)
    pthread_mutex_init(&tsc.lock, NULL);
  else
    pthread_mutex_unlock(&tsc.lock);
  if (atomic_load_explicit(&tsc.seq, RELAXED) & 1) {
    atomic_store_explicit(&tsc.state, TSC_UNKNOWN, memory_order_relaxed);
    atomic_fetch_add_explicit(&tsc.seq, 1, memory_order_release);
  }
#endif
}

/* Fork handlers run in the child in the order they were registered, and
 * a session's may make a writer, which opens a consumer: ours must come
 * first, so it is registered at load. */
__attribute__((constructor)) static void clocks_init(void) {
  pthread_atfork(NULL, NULL, clocks_after_fork);
}
