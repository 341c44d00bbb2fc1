/*
 * sched.c - time, scheduling and retirement for the simulated GPUs.
 *
 * Work is scheduled when it is submitted: it becomes ready when the host
 * queued it, its stream's previous work has ended and every event it
 * waits on is done; it starts when its hardware queue is free too, and
 * lasts what the cost model says. All of that is known at once, so the
 * timeline is exact and, in virtual time, the same on every run. Work is
 * retired into records only once the host clock has passed its end (or on
 * a forced flush), as a real GPU's results arrive after the fact.
 *
 * Times are kept in host nanoseconds; each device also has a clock of its
 * own (offset and a rate error of some ppm), and record timestamps go
 * device time -> trace time through the core's clock snapshots, so the
 * mapping code runs in every test.
 *
 * Everything here runs with gp__sim.lock held.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simInt.h"

#define ENV_PERIOD_NS 1000000ull /* environment sample period */
#define ENV_MAX_CATCHUP 1000     /* samples emitted per retire, at most */
#define SNAPSHOT_EVERY_NS 10000000ull

/* ------------------------------------------------------------------ */
/* Time                                                                 */

/* Host time now. */
uint64_t gp__sim_now(void) {
  if (gp__sim.time_mode == GP_SIM_TIME_VIRTUAL)
    return atomic_load_explicit(&gp__sim.vnow, memory_order_acquire);
  return gp__now();
}

/* Spends host time: virtual time moves; real time moves by itself. */
void gp__sim_advance(uint64_t ns) {
  if (gp__sim.time_mode == GP_SIM_TIME_VIRTUAL)
    atomic_fetch_add_explicit(&gp__sim.vnow, ns, memory_order_acq_rel);
}

/* Blocks the host until time t. In real time the lock is released while
 * sleeping, so other threads can go on. */
void gp__sim_wait_until(uint64_t t) {
  if (gp__sim.time_mode == GP_SIM_TIME_VIRTUAL) {
    uint64_t cur = atomic_load(&gp__sim.vnow);
    while (cur < t && !atomic_compare_exchange_weak(&gp__sim.vnow, &cur, t)) {
    }
    return;
  }
  uint64_t now = gp__now();
  if (now >= t)
    return;
  gp__sim_unlock();
  while ((now = gp__now()) < t) {
    uint64_t d = t - now;
    struct timespec ts = {(time_t)(d / 1000000000ull),
                          (long)(d % 1000000000ull)};
    nanosleep(&ts, NULL);
  }
  gp__sim_lock();
}

/* gp__sim_device_time() in 128 bits, out of line: for times from 2^62 on
 * or huge drifts, which never come in practice. */
static uint64_t __attribute__((noinline))
device_time_wide(const sim_device *d, uint64_t host_ns) {
  __int128 rel = (__int128)host_ns - (__int128)d->clock_epoch;
  __int128 drift = rel * d->m->clock_drift_ppb / 1000000000;
  __int128 v = (__int128)host_ns + d->clock_offset + drift;
  return v < 0 ? 0 : (uint64_t)v;
}

/* The device's own clock at host time host_ns. */
uint64_t gp__sim_device_time(const sim_device *d, uint64_t host_ns) {
  int64_t ppb = d->m->clock_drift_ppb;
  /* Every record converts up to four times: in 64 bits when nothing can
   * overflow (times below 2^62, so their difference is exact; a drift
   * below 2^40 x 2^22 / 10^9; the sum checked), the same value as
   * device_time_wide() gives. */
  if (((host_ns | d->clock_epoch) >> 62) == 0 && ppb > -(1 << 22) &&
      ppb < (1 << 22)) {
    int64_t rel = (int64_t)host_ns - (int64_t)d->clock_epoch;
    int64_t v;
    if (rel > -((int64_t)1 << 40) && rel < ((int64_t)1 << 40) &&
        !__builtin_add_overflow((int64_t)host_ns + rel * ppb / 1000000000,
                                d->clock_offset, &v))
      return v < 0 ? 0 : (uint64_t)v;
  }
  return device_time_wide(d, host_ns);
}

/* Records a (device, trace) clock pair for d. */
void gp__sim_clock_snapshot(sim_device *d) {
  gp_clock_snapshot s;
  if (gp_clock_snapshot_take(d->clock_id, &s) == 0)
    d->last_snapshot = s.trace_ts;
}

/* Trace time of host time h on device d, through the device clock. */
static uint64_t to_trace(const sim_device *d, uint64_t h) {
  uint64_t t = 0;
  if (gp_clock_to_trace(d->clock_id, gp__sim_device_time(d, h), &t) != 0)
    return h; /* no snapshot yet cannot happen: one is taken at init */
  return t;
}

/* See simInt.h. */
uint64_t gp__sim_to_trace(const sim_device *d, uint64_t h) {
  return to_trace(d, h);
}

/* ------------------------------------------------------------------ */
/* The in-flight heap                                                   */

static bool key_before(const sim_heap_key *a, const sim_heap_key *b) {
  if (a->end != b->end)
    return a->end < b->end;
  return a->correlation_id < b->correlation_id;
}

/* Grows the heap, the op slots and the free stack together; GP_ENOMEM
 * with nothing changed. */
static int heap_reserve(void) {
  if (gp__sim.heap_n < gp__sim.heap_cap)
    return 0;
  size_t ncap = gp__sim.heap_cap ? gp__sim.heap_cap * 2 : 256;
  sim_heap_key *h = realloc(gp__sim.heap, ncap * sizeof(*h));
  if (!h)
    return GP_ENOMEM;
  gp__sim.heap = h;
  sim_op *o = realloc(gp__sim.ops, ncap * sizeof(*o));
  if (!o)
    return GP_ENOMEM;
  gp__sim.ops = o;
  uint32_t *f = realloc(gp__sim.free_slots, ncap * sizeof(*f));
  if (!f)
    return GP_ENOMEM;
  gp__sim.free_slots = f;
  /* Every slot below heap_cap is in use (the heap is full). */
  for (size_t i = ncap; i > gp__sim.heap_cap; i--)
    f[gp__sim.num_free++] = (uint32_t)(i - 1);
  gp__sim.heap_cap = ncap;
  return 0;
}

/* Adds key k to the heap (room reserved). */
static void heap_add(sim_heap_key k) {
  sim_heap_key *h = gp__sim.heap;
  size_t i = gp__sim.heap_n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!key_before(&k, &h[p]))
      break;
    h[i] = h[p];
    i = p;
  }
  h[i] = k;
}

/* Pushes a copy of op (room reserved by heap_reserve()). */
static void heap_push(const sim_op *op) {
  uint32_t slot = gp__sim.free_slots[--gp__sim.num_free];
  gp__sim.ops[slot] = *op;
  heap_add((sim_heap_key){op->end, op->correlation_id, slot});
}

/* Takes the earliest op off the heap and returns its slot, which the
 * caller frees with slot_free() once done with the op. */
static uint32_t heap_pop(void) {
  sim_heap_key *h = gp__sim.heap;
  uint32_t slot = h[0].slot;
  sim_heap_key k = h[--gp__sim.heap_n];
  size_t i = 0, n = gp__sim.heap_n;
  for (;;) {
    size_t l = 2 * i + 1, m = l;
    if (l >= n)
      break;
    if (l + 1 < n && key_before(&h[l + 1], &h[l]))
      m = l + 1;
    if (!key_before(&h[m], &k))
      break;
    h[i] = h[m];
    i = m;
  }
  if (n > 0)
    h[i] = k;
  return slot;
}

static void slot_free(uint32_t slot) {
  gp__sim.free_slots[gp__sim.num_free++] = slot;
}

/* ------------------------------------------------------------------ */
/* Scheduling                                                           */

static void busy_append(sim_queue *q, uint64_t start, uint64_t end) {
  if (q->log_count > 0) {
    sim_busy *last = &q->log[(q->log_head + q->log_count - 1) % SIM_BUSY_LOG];
    if (start <= last->end) {
      if (end > last->end)
        last->end = end;
      return;
    }
  }
  if (q->log_count == SIM_BUSY_LOG) {
    q->log_head = (q->log_head + 1) % SIM_BUSY_LOG;
    q->log_count--;
  }
  q->log[(q->log_head + q->log_count) % SIM_BUSY_LOG] = (sim_busy){start, end};
  q->log_count++;
}

/* ------------------------------------------------------------------ */
/* Perfmon segments                                                     */

/* Adds [s, e) to a segment's busy union; now is the host's present, before
 * which no new work can start. The intervals kept are disjoint and do not
 * touch. */
static void union_add_slow(sim_union *u, uint64_t s, uint64_t e, uint64_t now) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < u->n; i++) {
    sim_busy b = u->iv[i];
    if (b.end <= now) {
      u->closed += b.end - b.start;
    } else if (b.start <= e && s <= b.end) {
      /* Overlapping or touching: absorb it into [s, e). */
      if (b.start < s)
        s = b.start;
      if (b.end > e)
        e = b.end;
    } else {
      u->iv[k++] = b;
    }
  }
  u->n = k;
  if (u->n == SIM_UNION_MAX) {
    /* Defensive: more disjoint future intervals than kept; the earliest
     * is closed early (it may then be counted twice if overlapped). */
    uint32_t m = 0;
    for (uint32_t i = 1; i < u->n; i++)
      if (u->iv[i].end < u->iv[m].end)
        m = i;
    u->closed += u->iv[m].end - u->iv[m].start;
    u->iv[m] = u->iv[--u->n];
  }
  u->others_end = 0;
  for (uint32_t i = 0; i < u->n; i++)
    if (u->iv[i].end > u->others_end)
      u->others_end = u->iv[i].end;
  u->iv[u->n++] = (sim_busy){s, e};
}

/*
 * union_add_slow's common cases without its walk over every interval (it
 * ran for every job counted into a perfmon): work that starts after all
 * but the last interval ended either extends the last one (back-to-back
 * jobs of a stream) or is a new last one. Intervals that ended before the
 * present are left open until the walk runs: the total is the same.
 */
static void union_add(sim_union *u, uint64_t s, uint64_t e) {
  if (u->n > 0 && s > u->others_end) {
    sim_busy *last = &u->iv[u->n - 1];
    if (last->start <= e && s <= last->end) {
      if (s < last->start)
        last->start = s;
      if (e > last->end)
        last->end = e;
      return;
    }
    if (u->n < SIM_UNION_MAX && s > last->end) {
      if (last->end > u->others_end)
        u->others_end = last->end;
      u->iv[u->n++] = (sim_busy){s, e};
      return;
    }
  }
  union_add_slow(u, s, e, gp__sim_now());
}

static uint64_t union_total(const sim_union *u) {
  uint64_t t = u->closed;
  for (uint32_t i = 0; i < u->n; i++)
    t += u->iv[i].end - u->iv[i].start;
  return t;
}

/* Adds n > 1 jobs of the run to *a: each sum gets what as many adds of
 * one job's part, one by one, would have given it. */
static void __attribute__((noinline))
run_add_many(sim_acc *a, const sim_run *r, uint64_t n) {
  double dur = (double)r->dur;
  a->jobs = gp__sim_add_n(a->jobs, 1.0, n);
  a->work_ns = gp__sim_add_n(a->work_ns, dur, n);
  a->kernel_ns = gp__sim_add_n(a->kernel_ns, dur, n);
  double *d = (double *)&a->k;
  const double *x = (const double *)&r->stats;
  for (size_t i = 0; i < sizeof(sim_work_stats) / sizeof(double); i++)
    d[i] = gp__sim_add_n(d[i], x[i], n);
}

/* Adds the run's pending jobs into the segment's sums. On a segment of
 * one queue their time is busy time too. */
static inline void run_flush(sim_pmstate *ps) {
  sim_run *r = &ps->run;
  uint64_t n = r->count;
  if (n == 0)
    return;
  r->count = 0;
  if (n == 1)
    gp__sim_acc_add_kernel(&ps->acc, &r->stats, (double)r->dur);
  else
    run_add_many(&ps->acc, r, n);
  if (ps->seg_queue != SIM_QUEUES_MANY)
    ps->busy.closed += n * r->dur;
}

/*
 * The segment's jobs, so far all on one queue, now run on two: its busy
 * time becomes a union of intervals, and every job adds its own (no more
 * runs). The first queue's busy log holds its intervals, merged; those
 * that may still meet new work (they end after the present) become the
 * union's, the rest stays in `closed`.
 */
static void busy_many(sim_device *d) {
  sim_pmstate *ps = &d->pm;
  sim_union *u = &ps->busy;
  const sim_queue *q = &d->queues[ps->seg_queue];
  run_flush(ps); /* its time is in closed now */
  ps->run.key.queue = SIM_QUEUES_NONE;
  uint64_t now = gp__sim_now();
  /* Newest first; the room left is for the job that comes. Beyond it
   * (defensive: never seen) older open intervals stay closed. */
  uint32_t k = 0;
  while (k < q->log_count && k < SIM_UNION_MAX - 1) {
    const sim_busy *b =
        &q->log[(q->log_head + q->log_count - 1 - k) % SIM_BUSY_LOG];
    if (b->end <= now || b->end <= ps->seg_start)
      break;
    k++;
  }
  u->n = 0;
  u->others_end = 0;
  for (uint32_t i = k; i > 0; i--) {
    sim_busy b = q->log[(q->log_head + q->log_count - i) % SIM_BUSY_LOG];
    /* The queue's earlier jobs ended by the segment's start; a merged
     * interval may reach back to them. */
    if (b.start < ps->seg_start)
      b.start = ps->seg_start;
    u->closed -= b.end - b.start;
    if (u->n > 0)
      u->others_end = u->iv[u->n - 1].end; /* in order: the latest */
    u->iv[u->n++] = b;
  }
  ps->seg_queue = SIM_QUEUES_MANY;
}

/* The latest end of pm's jobs: the device's tail while pm is programmed
 * (the switch to it waited for every other job), else what the switch
 * away from it, or a read, recorded. */
uint64_t gp__sim_perfmon_last_end(const sim_device *d, const gp_perfmon *pm) {
  if (d->pm.cur == pm && d->pm.tail > pm->last_end)
    return d->pm.tail;
  return pm->last_end;
}

/*
 * Captures the current segment of d into its perfmon: the hardware
 * counters (the segment's summed work over its span and busy time) are
 * converted into the perfmon's counters and added to its values. The
 * perfmon stays programmed; the next job with the same perfmon opens a
 * new segment without a switch.
 */
void gp__sim_perfmon_fold(sim_device *d) {
  sim_pmstate *ps = &d->pm;
  gp_perfmon *pm = ps->cur;
  if (pm && ps->seg_queue != SIM_QUEUES_NONE) {
    run_flush(ps);
    double span = (double)(ps->seg_end - ps->seg_start);
    double busy = (double)union_total(&ps->busy);
    for (uint32_t i = 0; i < pm->num_counters; i++) {
      double num = 0.0, den = 0.0;
      gp__sim_counter_eval(d->m, pm->cat, pm->index[i], &ps->acc, span, busy,
                           &num, &den);
      pm->num[i] += num;
      pm->den[i] += den;
    }
    pm->last_end = gp__sim_perfmon_last_end(d, pm);
  }
  memset(&ps->acc, 0, sizeof(ps->acc));
  ps->busy.closed = 0; /* the intervals past n are not read */
  ps->busy.n = 0;
  ps->busy.others_end = 0;
  ps->seg_queue = SIM_QUEUES_NONE;
  ps->seg_start = 0;
  ps->run.key.queue = SIM_QUEUES_NONE;
}

/* Queues first: a key that matches no job (SIM_QUEUES_NONE, a run's first
 * job) fails there. */
static bool job_same(const sim_job_key *a, const sim_job_key *b) {
  return a->queue == b->queue && a->dynamic_shared == b->dynamic_shared &&
         a->kernel == b->kernel && a->grid.x == b->grid.x &&
         a->grid.y == b->grid.y && a->grid.z == b->grid.z &&
         a->block.x == b->block.x && a->block.y == b->block.y &&
         a->block.z == b->block.z;
}

/* A job of the segment's perfmon that does not repeat the run: it may
 * open the segment or take it to many queues; it is added at once, after
 * the run's jobs, unless it is a kernel that makes a run with the job
 * before. */
static void other_job(sim_device *d, const sim_op *op) {
  sim_pmstate *ps = &d->pm;
  sim_run *r = &ps->run;
  uint32_t queue = op->key.queue;
  if (ps->seg_queue == SIM_QUEUES_NONE) {
    ps->seg_queue = queue;
    ps->seg_start = op->start;
    ps->seg_end = op->end;
  } else if (queue == ps->seg_queue) {
    ps->seg_end = op->end; /* one queue: its jobs end in order */
  } else {
    if (ps->seg_queue != SIM_QUEUES_MANY)
      busy_many(d);
    union_add(&ps->busy, op->start, op->end);
    if (op->end > ps->seg_end)
      ps->seg_end = op->end;
  }
  sim_job_key key = op->key;
  key.queue |= SIM_RUN_ONE;
  if (key.kernel && job_same(&key, &r->key)) {
    r->stats = op->stats; /* the job before is in the sums already */
    r->key.queue = queue;
    r->count = 1;
    return;
  }
  run_flush(ps);
  gp__sim_op_acc_add(&ps->acc, op, d->m);
  if (ps->seg_queue != SIM_QUEUES_MANY)
    ps->busy.closed += op->end - op->start;
  if (key.kernel && ps->seg_queue != SIM_QUEUES_MANY) {
    r->key = key;
    r->dur = op->end - op->start;
  }
}

/*
 * The scheduler's side of a job with effective perfmon pm, placed at
 * [start, end): switch perfmons if it differs from the running one (read
 * and add the hardware counters into the outgoing perfmon, program pm),
 * then count the job into the segment. A kernel that repeats the run
 * costs a count and its end (the segment's one queue runs jobs in order).
 */
static void perfmon_job(sim_device *d, gp_perfmon *pm, const sim_op *op) {
  sim_pmstate *ps = &d->pm;
  if (pm != ps->cur) {
    gp__sim_perfmon_fold(d);
    gp_perfmon_put(ps->cur);
    ps->cur = gp_perfmon_get(pm);
    gp__perfmon_count_switch(d->device_id);
  }
  if (op->end > ps->tail)
    ps->tail = op->end;
  if (!pm)
    return;
  if (job_same(&op->key, &ps->run.key)) {
    ps->run.count++;
    ps->seg_end = op->end;
  } else {
    other_job(d, op);
  }
}

/* Drops the jobs of the log that ended by t, the start of the next window
 * (they reach none from then on), keeping the others in order. */
static void log_compact(sim_sampling *sm, uint64_t t) {
  size_t k = 0;
  for (size_t i = sm->head; i < sm->n; i++)
    if (sm->log[i].end > t)
      sm->log[k++] = sm->log[i];
  sm->head = 0;
  sm->n = k;
}

/* Makes room in the log for one more job: drops the jobs that ended, and
 * grows it if they were few. GP_ENOMEM if it is full and memory ran out
 * (its jobs are the same). */
static int log_room(sim_sampling *sm) {
  if (sm->n < sm->cap)
    return 0;
  log_compact(sm, sm->win_start);
  if (sm->cap && sm->n <= sm->cap - sm->cap / 4)
    return 0;
  size_t ncap = sm->cap ? sm->cap * 2 : 64;
  sim_job *l = realloc(sm->log, ncap * sizeof(*l));
  if (!l)
    return sm->n < sm->cap ? 0 : GP_ENOMEM;
  sm->log = l;
  sm->cap = ncap;
  return 0;
}

/* Whether op writes records when it is retired: its own, its source-level
 * ones, or those of what gp_sim_launch_ex added. */
static bool op_records(const sim_op *op) {
  return op->emit || op->src.kinds || (op->extra && op->extra->records);
}

/*
 * Places op (with queued, queue and everything else but the times filled
 * in; op->pm its effective perfmon, borrowed) on its stream and queue,
 * taking over the stream's pending waits. A job whose effective perfmon
 * (the device's global one, else its own) differs from the one running
 * waits for all the device's work, so that no two perfmons' jobs overlap;
 * one with the same perfmon only waits for the segment to have started.
 * The job is counted into its effective perfmon's segment here, so it
 * holds no reference: the device holds one on the perfmon programmed, and
 * nothing reads a perfmon once its jobs were counted.
 * Returns GP_ENOMEM with nothing changed if memory runs out.
 */
int gp__sim_schedule(gp_sim_stream *s, sim_op *op, uint64_t duration) {
  sim_device *d = s->ctx->dev;
  sim_sampling *sm = &d->smp;
  bool periodic = sm->s && sm->s->period_ns;
  if (periodic && log_room(sm) != 0)
    return GP_ENOMEM;
  if (heap_reserve() != 0)
    return GP_ENOMEM;
  uint32_t nw = 0;
  for (uint32_t i = 0; i < s->num_waits; i++)
    if (s->waits[i].correlation_id)
      nw++;
  uint64_t *ids = op->waits_inline;
  if (nw > SIM_INLINE_WAITS) {
    ids = malloc(nw * sizeof(*ids));
    if (!ids)
      return GP_ENOMEM;
    op->waits_heap = ids;
  }

  uint64_t ready = op->queued;
  if (s->tail_end > ready)
    ready = s->tail_end;
  op->num_waits = 0;
  for (uint32_t i = 0; i < s->num_waits; i++) {
    if (s->waits[i].done_at > ready)
      ready = s->waits[i].done_at;
    if (s->waits[i].correlation_id)
      ids[op->num_waits++] = s->waits[i].correlation_id;
  }
  s->num_waits = 0;

  sim_pmstate *ps = &d->pm;
  gp_perfmon *pm = op->pm;
  if (pm != ps->cur) {
    if (ps->tail > ready)
      ready = ps->tail; /* drain: perfmons never share the hardware */
  } else if (ps->seg_start > ready) {
    ready = ps->seg_start;
  }

  sim_queue *q = &d->queues[op->key.queue];
  uint64_t start = ready > q->free_at ? ready : q->free_at;
  op->submitted = ready;
  op->start = start;
  op->end = start + duration;
  q->free_at = op->end;
  s->tail_end = op->end;
  s->tail_corr = op->correlation_id;
  busy_append(q, op->start, op->end);
  perfmon_job(d, pm, op);
  op->pm = NULL;
  op->perfmon_id = pm ? pm->id : 0;
  if (periodic) {
    sim_job *j = &sm->log[sm->n++];
    j->start = op->start;
    j->end = op->end;
    gp__sim_op_acc(op, d->m, &j->acc);
  }
  heap_push(op);
  /* records once it is retired (lost if we die first) */
  if (op_records(op))
    gp__activity_work_in_flight(1);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Retirement                                                           */

static const uint64_t *op_waits(const sim_op *op) {
  return op->waits_heap ? op->waits_heap : op->waits_inline;
}

/* An op's times in trace time. */
typedef struct sim_times {
  uint64_t queued, submitted, start, end;
} sim_times;

/* Converts op's four times (d its device) into *t. */
static void trace_times(const sim_op *op, const sim_device *d, sim_times *t) {
  /* A job starts when it is submitted unless its queue is still busy
   * (in the demo: always), and is sometimes queued then too. An equal
   * host time maps to the same trace time, so it is converted once: a
   * conversion is a quarter of a record's cost. */
  t->submitted = to_trace(d, op->submitted);
  t->queued =
      op->queued == op->submitted ? t->submitted : to_trace(d, op->queued);
  t->start = op->start == op->submitted ? t->submitted : to_trace(d, op->start);
  t->end = to_trace(d, op->end);
}

/* Reserves op's record of kind and fills the header every kind shares
 * (t: its times, trace_times()); NULL when it is dropped. */
static inline __attribute__((always_inline)) void *
begin_work(const sim_op *op, const sim_times *t, uint32_t kind) {
  gp__gpu_work w = {
      .correlation_id = op->correlation_id,
      .queued = t->queued,
      .submitted = t->submitted,
      .start = t->start,
      .end = t->end,
      .device_id = op->device_id,
      .context_id = op->context_id,
      .stream_id = op->stream_id,
      .queue_id = op->key.queue,
      .flags = op->flags,
      .perfmon_id = op->perfmon_id,
      .num_wait_ids = op->num_waits,
      .wait_ids = op_waits(op),
  };
  void *r = gp__activity_reserve(kind, gp__gpu_work_size(kind, op->num_waits),
                                 op->context_id, op->stream_id);
  if (r)
    gp__gpu_work_fill(r, kind, &w);
  return r;
}

static void emit_kernel(const sim_op *op, const sim_times *t) {
  gp_activity_kernel *r = begin_work(op, t, GP_ACTIVITY_KIND_KERNEL);
  if (!r)
    return;
  r->name_id = op->name_id;
  r->demangled_name_id = op->demangled_id;
  r->grid_x = op->key.grid.x;
  r->grid_y = op->key.grid.y;
  r->grid_z = op->key.grid.z;
  r->block_x = op->key.block.x;
  r->block_y = op->key.block.y;
  r->block_z = op->key.block.z;
  r->static_shared_memory = op->static_shared;
  r->dynamic_shared_memory = op->key.dynamic_shared;
  r->registers_per_thread = op->registers;
  gp__activity_commit(r);
}

static void emit_memcpy(const sim_op *op, const sim_times *t) {
  gp_activity_memcpy *r = begin_work(op, t, GP_ACTIVITY_KIND_MEMCPY);
  if (!r)
    return;
  r->bytes = op->bytes;
  r->src_device_id = op->src_device;
  r->dst_device_id = op->dst_device;
  r->src_context_id = op->src_context;
  r->dst_context_id = op->dst_context;
  r->copy_kind = op->copy_kind;
  r->src_kind = op->src_kind;
  r->dst_kind = op->dst_kind;
  gp__activity_commit(r);
}

static void emit_memset(const sim_op *op, const sim_times *t) {
  gp_activity_memset *r = begin_work(op, t, GP_ACTIVITY_KIND_MEMSET);
  if (!r)
    return;
  r->bytes = op->bytes;
  r->value = op->value;
  r->memory_kind = GP_MEMORY_DEVICE;
  gp__activity_commit(r);
}

/* op's record, its times t. */
static void emit_op(const sim_op *op, const sim_times *t) {
  switch (op->kind) {
  case GP_ACTIVITY_KIND_KERNEL:
    emit_kernel(op, t);
    break;
  case GP_ACTIVITY_KIND_MEMCPY:
    emit_memcpy(op, t);
    break;
  case GP_ACTIVITY_KIND_MEMSET:
    emit_memset(op, t);
    break;
  default:
    break;
  }
}

/* The length of the union of iv[0, n), which it sorts by start:
 * insertion sort, as the intervals are few and come nearly in order. */
static uint64_t union_length(sim_busy *iv, size_t n) {
  for (size_t i = 1; i < n; i++) {
    sim_busy x = iv[i];
    size_t j = i;
    while (j > 0 && iv[j - 1].start > x.start) {
      iv[j] = iv[j - 1];
      j--;
    }
    iv[j] = x;
  }
  uint64_t busy = 0, cur_s = 0, cur_e = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || iv[i].start > cur_e) {
      busy += cur_e - cur_s;
      cur_s = iv[i].start;
      cur_e = iv[i].end;
    } else if (iv[i].end > cur_e) {
      cur_e = iv[i].end;
    }
  }
  return busy + (cur_e - cur_s);
}

/* Share of [t0, t1) during which any queue of d was busy. */
double gp__sim_busy_fraction(const sim_device *d, uint64_t t0, uint64_t t1) {
  if (t1 <= t0)
    return 0.0;
  /* Gather the intervals overlapping the window from every queue. */
  sim_busy iv[SIM_MAX_QUEUES * 64];
  size_t n = 0;
  for (uint32_t qi = 0; qi < d->m->num_queues; qi++) {
    const sim_queue *q = &d->queues[qi];
    for (uint32_t k = q->log_count; k > 0 && n < GP_ARRAY_SIZE(iv); k--) {
      const sim_busy *b = &q->log[(q->log_head + k - 1) % SIM_BUSY_LOG];
      if (b->end <= t0)
        break;
      if (b->start >= t1)
        continue;
      iv[n].start = b->start < t0 ? t0 : b->start;
      iv[n].end = b->end > t1 ? t1 : b->end;
      n++;
    }
  }
  uint64_t busy = union_length(iv, n);
  return (double)busy / (double)(t1 - t0);
}

/* One ENVIRONMENT record of d at trace time tt. */
static void emit_env(const sim_device *d, uint64_t tt, uint32_t kind,
                     uint32_t a, uint32_t b) {
  gp_activity_environment *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_ENVIRONMENT, sizeof(*r), 0, 0);
  if (!r)
    return;
  memset(&r->data, 0, sizeof(r->data));
  r->timestamp = tt;
  r->device_id = d->device_id;
  r->environment_kind = kind;
  switch (kind) {
  case GP_ENVIRONMENT_SPEED:
    r->data.speed.core_clock_khz = a;
    r->data.speed.memory_clock_khz = b;
    break;
  case GP_ENVIRONMENT_TEMPERATURE:
    r->data.temperature.gpu_temperature_mc = a;
    break;
  case GP_ENVIRONMENT_POWER:
    r->data.power.power_mw = a;
    r->data.power.power_limit_mw = b;
    break;
  default:
    r->data.cooling.fan_speed_pct = a;
    break;
  }
  gp__activity_commit(r);
}

/* Emits environment samples for d up to host time now. */
static void sample_environment(sim_device *d, uint64_t now) {
  if (d->next_env > now)
    return; /* none due (most retires): nothing below would change */
  bool on = gp__activity_enabled(GP_ACTIVITY_KIND_ENVIRONMENT, 0);
  if (!on) {
    if (d->next_env <= now)
      d->next_env = now - now % ENV_PERIOD_NS + ENV_PERIOD_NS;
    return;
  }
  if (d->next_env + ENV_MAX_CATCHUP * ENV_PERIOD_NS < now)
    d->next_env = now - ENV_MAX_CATCHUP * ENV_PERIOD_NS;
  const sim_model *m = d->m;
  for (; d->next_env <= now; d->next_env += ENV_PERIOD_NS) {
    uint64_t t = d->next_env;
    double util = gp__sim_busy_fraction(d, t - ENV_PERIOD_NS, t);
    double target = m->idle_c + (m->busy_c - m->idle_c) * util;
    d->temp_c += (target - d->temp_c) * 0.05;
    double watts = m->idle_w + (m->busy_w - m->idle_w) * util;
    uint64_t tt = to_trace(d, t); /* once for the four records */
    emit_env(d, tt, GP_ENVIRONMENT_SPEED, m->core_clock_khz,
             m->memory_clock_khz);
    emit_env(d, tt, GP_ENVIRONMENT_TEMPERATURE,
             (uint32_t)llround(d->temp_c * 1000.0), 0);
    emit_env(d, tt, GP_ENVIRONMENT_POWER, (uint32_t)llround(watts * 1000.0),
             (uint32_t)llround(m->busy_w * 1000.0));
    emit_env(d, tt, GP_ENVIRONMENT_COOLING,
             (uint32_t)llround(30.0 + 70.0 * util), 0);
  }
}

/* ------------------------------------------------------------------ */
/* Counter sampling                                                     */

#define MAX_CATCHUP_WINDOWS 10000

/* Per-activity values of an instrumented job: its own work over its own
 * [start, end), which it kept busy throughout (t->start and t->end:
 * those in trace time). */
static void emit_instrumented(const sim_op *op, const sim_device *d,
                              const sim_times *t) {
  const gp__sampler *s = op->instr;
  sim_acc a;
  gp__sim_op_acc(op, d->m, &a);
  double dur = (double)(op->end - op->start);
  double num[GP_PERFMON_MAX_COUNTERS], den[GP_PERFMON_MAX_COUNTERS];
  gp__sim_counter_eval_n(d->m, s->cat, s->index, s->num_counters, &a, dur, dur,
                         num, den);
  gp__sampler_emit(s, op->start, num, den, t->end, t->start, op->correlation_id,
                   op->perfmon_id, op->context_id);
  gp__sim_emit_events(op, d, s, num, den, t->start, t->end);
}

/* Emits one periodic window [t0, t1) of d (t0 is sm->win_start) and
 * forgets the jobs that ended in it. */
static void emit_window(sim_device *d, uint64_t t0, uint64_t t1) {
  sim_sampling *sm = &d->smp;
  sim_acc a;
  memset(&a, 0, sizeof(a));
  /* The window's share of each job, and its busy intervals: on the stack
   * for the few jobs a window usually overlaps (a window comes every
   * sampling period; a malloc, qsort and free each time were a sixth of
   * its cost). */
  sim_busy stack_iv[64];
  size_t kept = sm->n - sm->head;
  sim_busy *iv =
      kept <= GP_ARRAY_SIZE(stack_iv) ? stack_iv : malloc(kept * sizeof(*iv));
  size_t niv = 0, ended = 0;
  for (size_t i = sm->head; i < sm->n; i++) {
    const sim_job *j = &sm->log[i];
    ended += j->end <= t1;
    if (j->end <= t0 || j->start >= t1 || j->end <= j->start)
      continue;
    uint64_t s = j->start > t0 ? j->start : t0;
    uint64_t e = j->end < t1 ? j->end : t1;
    gp__sim_acc_add(&a, &j->acc, (double)(e - s) / (double)(j->end - j->start));
    if (iv)
      iv[niv++] = (sim_busy){s, e};
  }
  /* The union of busy intervals, as gp__sim_busy_fraction() takes it. */
  uint64_t busy = union_length(iv, niv);
  if (iv != stack_iv)
    free(iv);
  const gp__sampler *s = sm->s;
  /* Windows share their edges exactly in trace time too, whatever clock
   * snapshot maps each of them. */
  uint64_t tt0 = sm->win_start_trace, tt1 = to_trace(d, t1);
  if (tt1 < tt0)
    tt1 = tt0;
  sm->win_start_trace = tt1;
  double num[GP_PERFMON_MAX_COUNTERS], den[GP_PERFMON_MAX_COUNTERS];
  gp__sim_counter_eval_n(d->m, s->cat, s->index, s->num_counters, &a,
                         (double)(t1 - t0), (double)busy, num, den);
  /* Multiplexed: the counters of t0's slice (a catch-up window, merged
   * over many slices after a jump of virtual time, counts as its first). */
  gp__sampler_emit(s, t0, num, den, tt1, tt0, 0, 0, 0);
  /* Forget the jobs that ended: those in front by moving the head; those
   * behind a job still running stay (windows skip them) until they
   * outnumber the others, and are then dropped in one pass. */
  while (sm->head < sm->n && sm->log[sm->head].end <= t1) {
    sm->head++;
    ended--;
  }
  if (sm->head == sm->n)
    sm->head = sm->n = 0;
  else if (ended > (sm->n - sm->head) / 2)
    log_compact(sm, t1);
}

/*
 * Emits the periodic windows of d that end by `until`; with final, also
 * the partial window up to `until`. Far behind (virtual time jumped), the
 * older windows are merged into one so that totals stay right.
 */
void gp__sim_sampling_emit(sim_device *d, uint64_t until, bool final) {
  sim_sampling *sm = &d->smp;
  if (!sm->s || !sm->s->period_ns)
    return;
  uint64_t p = sm->s->period_ns;
  if (until > sm->win_start &&
      (until - sm->win_start) / p > MAX_CATCHUP_WINDOWS) {
    uint64_t t1 =
        until - (until - sm->win_start) % p - (uint64_t)MAX_CATCHUP_WINDOWS * p;
    emit_window(d, sm->win_start, t1);
    sm->win_start = t1;
  }
  while (sm->win_start + p <= until) {
    emit_window(d, sm->win_start, sm->win_start + p);
    sm->win_start += p;
  }
  if (final && sm->win_start < until) {
    emit_window(d, sm->win_start, until);
    sm->win_start = until;
  }
}

/* Puts the device's work already in flight into the sampling log (when
 * sampling starts at sm->win_start). */
void gp__sim_sampling_seed(sim_device *d) {
  sim_sampling *sm = &d->smp;
  sm->win_start_trace = to_trace(d, sm->win_start);
  for (size_t i = 0; i < gp__sim.heap_n; i++) {
    const sim_op *op = &gp__sim.ops[gp__sim.heap[i].slot];
    if (op->dev_index != d->index || op->end <= sm->win_start)
      continue;
    if (log_room(sm) != 0)
      return; /* defensive: sampling goes on without the older work */
    sim_job *j = &sm->log[sm->n++];
    j->start = op->start;
    j->end = op->end;
    gp__sim_op_acc(op, d->m, &j->acc);
  }
}

/* Writes the records of the op in slot (taken off the heap), then frees
 * the slot. Nothing it calls schedules work, so the slot stays put. */
static void retire_slot(uint32_t slot) {
  const sim_op *op = &gp__sim.ops[slot];
  const sim_device *d = &gp__sim.devices[op->dev_index];
  sim_times t;
  if (op->emit) {
    trace_times(op, d, &t);
    emit_op(op, &t);
  }
  if (op->src.kinds)
    gp__sim_source_emit(op, d->m);
  if (op_records(op))
    gp__activity_work_in_flight(-1);
  if (op->instr) {
    /* Its record's start and end serve the values too. */
    if (!op->emit) {
      t.start = to_trace(d, op->start);
      t.end = to_trace(d, op->end);
    }
    emit_instrumented(op, d, &t);
    gp__sampler_put(op->instr);
  }
  if (op->extra) {
    gp__sim_extra_emit(op, d);
    free(op->extra);
  }
  free(op->waits_heap);
  slot_free(slot);
}

static int key_cmp(const void *a, const void *b) {
  return key_before(a, b) ? -1 : key_before(b, a) ? 1 : 0;
}

/*
 * Retires the in-flight work of context ctx (of its stream stream, or of
 * all its streams for 0), in order of end time; the other work stays on
 * the heap, which is built again from what is left. O(n log n) in the
 * work in flight; with no memory for the list, nothing is forced.
 */
static void retire_scoped(uint32_t ctx, uint32_t stream) {
  sim_heap_key *h = gp__sim.heap;
  size_t n = gp__sim.heap_n, keep = 0, take = 0;
  sim_heap_key *t = malloc((n ? n : 1) * sizeof(*t));
  if (!t)
    return;
  for (size_t i = 0; i < n; i++) {
    const sim_op *op = &gp__sim.ops[h[i].slot];
    if (op->context_id == ctx && (!stream || op->stream_id == stream))
      t[take++] = h[i];
    else
      h[keep++] = h[i];
  }
  /* The kept keys, added one by one into a heap again (each is read
   * before the heap grows over its place). */
  gp__sim.heap_n = 0;
  for (size_t k = 0; k < keep; k++)
    heap_add(h[k]);
  qsort(t, take, sizeof(*t), key_cmp);
  for (size_t k = 0; k < take; k++)
    retire_slot(t[k].slot);
  free(t);
}

/*
 * Retires into records the work that has ended by now, or all in-flight
 * work if all is true, in order of end time; then samples the environment
 * and counters, and refreshes clock snapshots that have grown old.
 */
void gp__sim_retire(bool all) {
  if (!gp__sim.initialised)
    return;
  uint64_t now = gp__sim_now();
  for (uint32_t i = 0; i < gp__sim.num_devices; i++) {
    sim_device *d = &gp__sim.devices[i];
    if (d->last_snapshot + SNAPSHOT_EVERY_NS <= gp__now())
      gp__sim_clock_snapshot(d);
  }
  while (gp__sim.heap_n > 0 && (all || gp__sim.heap[0].end <= now))
    retire_slot(heap_pop());
  for (uint32_t i = 0; i < gp__sim.num_devices; i++) {
    sim_device *d = &gp__sim.devices[i];
    sample_environment(d, now);
    /* Most retires end no window: no call then. */
    const gp__sampler *smp = d->smp.s;
    if (smp && smp->period_ns && d->smp.win_start + smp->period_ns <= now)
      gp__sim_sampling_emit(d, now, false);
  }
}

/* The flush hook: retire what is done, or everything when forced; a
 * forced flush of one context forces only that context's (stream's)
 * work. */
void gp__sim_flush_hook(void *user, bool forced) {
  (void)user;
  uint32_t ctx, stream;
  bool scoped = gp__activity_flush_scope(&ctx, &stream);
  gp__sim_lock();
  if (forced && scoped && gp__sim.initialised)
    retire_scoped(ctx, stream);
  gp__sim_retire(forced && !scoped);
  gp__sim_unlock();
}
