/*
 * collector.c - buffers and their way back to the application: getting
 * empty buffers within the pool limit, the completion queue, the one
 * collector thread that calls completion callbacks and observers, flush
 * and finalize.
 *
 * A flush never takes a buffer from the thread writing into it: under the
 * slot's lock it copies the records between `taken` and the published
 * head into a fresh buffer (which may go past the pool limit, since it is
 * completed at once) and advances `taken`. When the owner later hands its
 * buffer over, the records after `taken` are moved to the front before
 * completion, so each record is delivered once, in order per thread.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "activityInt.h"
#include "thread.h"

/* ------------------------------------------------------------------ */
/* Buffers                                                              */

static void internal_request(uint8_t **buffer, size_t *size,
                             size_t *max_num_records) {
  *max_num_records = 0;
  *buffer = NULL;
  *buffer = gp__area_alloc(*size);
  if (!*buffer)
    *buffer = aligned_alloc(8, GP_ALIGN8(*size));
}

static void internal_complete(uint8_t *buffer, size_t size, size_t valid_size) {
  (void)size;
  (void)valid_size;
  if (!gp__area_release(buffer))
    free(buffer);
}

static uint8_t *buffer_request(size_t *size, size_t *max_records,
                               gp_buffer_complete_fn *complete, int *reason,
                               bool bypass_limit);

/*
 * Gets an empty buffer: a kept one, or a new one from the request callback
 * while fewer than the pool limit are held (flush copies may go past the
 * limit: they are completed at once). Returns NULL and the drop reason in
 * *reason if there is none. Called without locks.
 */
static uint8_t *buffer_get(size_t *size, size_t *max_records,
                           gp_buffer_complete_fn *complete, int *reason,
                           bool bypass_limit);

/*
 * Waits up to POOL_WAIT_MS for the collector to give a buffer back, when
 * the pool limit is reached while completed buffers are queued for it: a
 * collector that fell behind (a loaded machine, threads that each leave a
 * buffer behind when they exit) costs the thread a short wait instead of
 * its records. Never on the collector itself, never while the process
 * dies (the collector may be the thread that crashed), never when nothing
 * is queued (then no buffer comes back by waiting).
 */
#define POOL_WAIT_MS 50

static bool wait_for_pool(void) {
  if (gp__dying())
    return false;
  pthread_mutex_lock(&gp__act.lock);
  bool waited = false;
  if (gp__act.collector_running && gp__act.collector_ready &&
      !pthread_equal(pthread_self(), gp__act.collector_tid_self)) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += POOL_WAIT_MS * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    while (gp__act.q_head && !gp__act.stop &&
           atomic_load(&gp__act.free_count) == 0 &&
           atomic_load(&gp__act.outstanding) >=
               atomic_load(&gp__act.pool_limit)) {
      waited = true;
      pthread_cond_signal(&gp__act.work);
      if (pthread_cond_timedwait(&gp__act.done, &gp__act.lock, &dl) != 0)
        break;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
  return waited;
}

uint8_t *gp__buffer_get(size_t *size, size_t *max_records,
                        gp_buffer_complete_fn *complete, int *reason,
                        bool bypass_limit) {
  uint8_t *b = buffer_get(size, max_records, complete, reason, bypass_limit);
  if (!b && *reason == GP_DROP_NO_BUFFER && wait_for_pool())
    b = buffer_get(size, max_records, complete, reason, bypass_limit);
  return b;
}

static uint8_t *buffer_get(size_t *size, size_t *max_records,
                           gp_buffer_complete_fn *complete, int *reason,
                           bool bypass_limit) {
  size_t n_free =
      atomic_load_explicit(&gp__act.free_count, memory_order_relaxed);
  if (!bypass_limit && n_free == 0 &&
      atomic_load_explicit(&gp__act.outstanding, memory_order_relaxed) >=
          atomic_load_explicit(&gp__act.pool_limit, memory_order_relaxed)) {
    /* The common case while dropping: decided without the lock. */
    *reason = GP_DROP_NO_BUFFER;
    return NULL;
  }
  if (n_free > 0) {
    pthread_mutex_lock(&gp__act.lock);
    pending *p = gp__act.free_list;
    if (p) {
      gp__act.free_list = p->next;
      atomic_fetch_sub(&gp__act.free_count, 1);
    }
    pthread_mutex_unlock(&gp__act.lock);
    if (p) {
      uint8_t *b = p->buf;
      *size = p->size;
      *complete = p->complete;
      *max_records = p->max_records;
      free(p);
      return b;
    }
  }
  return buffer_request(size, max_records, complete, reason, bypass_limit);
}

/* The second half of gp__buffer_get(): a new buffer from the request
 * callback, within the pool limit unless bypass_limit. */
static uint8_t *buffer_request(size_t *size, size_t *max_records,
                               gp_buffer_complete_fn *complete, int *reason,
                               bool bypass_limit) {
  pthread_mutex_lock(&gp__act.lock);
  gp_buffer_request_fn req = gp__act.request;
  gp_buffer_complete_fn comp = gp__act.complete;
  size_t want = gp__act.buffer_size;
  if (!req && atomic_load(&gp__act.num_observers) > 0) {
    req = internal_request;
    comp = internal_complete;
  }
  if (!req) {
    pthread_mutex_unlock(&gp__act.lock);
    *reason = GP_DROP_NO_CALLBACKS;
    return NULL;
  }
  if (!bypass_limit &&
      atomic_load(&gp__act.outstanding) >= atomic_load(&gp__act.pool_limit)) {
    pthread_cond_signal(&gp__act.work);
    pthread_mutex_unlock(&gp__act.lock);
    *reason = GP_DROP_NO_BUFFER;
    return NULL;
  }
  atomic_fetch_add(&gp__act.outstanding, 1);
  pthread_mutex_unlock(&gp__act.lock);

  uint8_t *b = NULL;
  size_t sz = want, maxr = 0;
  req(&b, &sz, &maxr);
  if (!b || sz < sizeof(gp_activity) || ((uintptr_t)b & 7u)) {
    atomic_fetch_sub(&gp__act.outstanding, 1);
    *reason = GP_DROP_DECLINED;
    return NULL;
  }
  *size = sz;
  *max_records = maxr;
  *complete = comp;
  return b;
}

static uint64_t enqueue(uint8_t *buf, size_t size, size_t offset, size_t valid,
                        gp_buffer_complete_fn complete, slot *src, uint32_t to);

/* Queues a buffer for the collector; takes ownership. Caller holds no
 * lock. Returns the sequence number given. */
uint64_t gp__buffer_enqueue(uint8_t *buf, size_t size, size_t offset,
                            size_t valid, gp_buffer_complete_fn complete) {
  return enqueue(buf, size, offset, valid, complete, NULL, 0);
}

/* See activityInt.h. */
uint64_t gp__buffer_enqueue_copy(uint8_t *buf, size_t size, size_t valid,
                                 gp_buffer_complete_fn complete, slot *s,
                                 uint32_t to) {
  return enqueue(buf, size, 0, valid, complete, s, to);
}

static uint64_t enqueue(uint8_t *buf, size_t size, size_t offset, size_t valid,
                        gp_buffer_complete_fn complete, slot *src,
                        uint32_t to) {
  pending *p = malloc(sizeof(*p));
  pthread_mutex_lock(&gp__act.lock);
  if (!p) {
    /* Out of memory for the queue node: complete inline, in order lost. */
    pthread_mutex_unlock(&gp__act.lock);
    if (offset > 0 && valid > offset)
      memmove(buf, buf + offset, valid - offset);
    complete(buf, size, valid > offset ? valid - offset : 0);
    atomic_fetch_sub(&gp__act.outstanding, 1);
    return 0;
  }
  p->buf = buf;
  p->size = size;
  p->offset = offset;
  p->valid = valid;
  p->complete = complete;
  p->next = NULL;
  p->src_cell = NULL;
  if (src) {
    uint64_t *cell = gp__slot_cell(src);
    uint64_t w1 = __atomic_load_n(&cell[1], __ATOMIC_RELAXED);
    if (w1 != 0) { /* the thread's buffer is in the area */
      p->src_cell = cell;
      p->src_index = src->index;
      p->src_buf = w1;
      p->src_base = __atomic_load_n(&cell[2], __ATOMIC_RELAXED);
      p->src_to = to;
    }
  }
  p->seq = ++gp__act.enqueued_seq;
  if (!gp__act.collector_running)
    gp__collector_start_locked(); /* first hand-over after a fork */
  if (gp__act.q_tail)
    gp__act.q_tail->next = p;
  else
    gp__act.q_head = p;
  gp__act.q_tail = p;
  pthread_cond_signal(&gp__act.work);
  uint64_t seq = p->seq;
  pthread_mutex_unlock(&gp__act.lock);
  return seq;
}

/* Keeps an empty buffer for reuse. */
void gp__buffer_keep(uint8_t *buf, size_t size, gp_buffer_complete_fn comp) {
  pending *p = malloc(sizeof(*p));
  if (!p) {
    gp__buffer_enqueue(buf, size, 0, 0, comp);
    return;
  }
  p->buf = buf;
  p->size = size;
  p->complete = comp;
  p->max_records = 0;
  pthread_mutex_lock(&gp__act.lock);
  p->next = gp__act.free_list;
  gp__act.free_list = p;
  atomic_fetch_add(&gp__act.free_count, 1);
  pthread_mutex_unlock(&gp__act.lock);
}

/*
 * Touches every page of a buffer so that writing records into it later
 * takes no page fault, whatever allocator (malloc, a mapped file) gave it.
 * Writes a zero at the start of each page: the content of an empty buffer
 * is undefined anyway.
 */
void gp__buffer_prefault(uint8_t *buf, size_t size) {
  long pg = sysconf(_SC_PAGESIZE);
  size_t step = pg > 0 ? (size_t)pg : 4096;
  for (size_t off = 0; off < size; off += step)
    ((volatile uint8_t *)buf)[off] = 0;
}

/*
 * Keeps up to SPARE_BUFFERS empty buffers on the free list, got from the
 * request callback and pre-faulted here, on the collector thread: a
 * producer swapping buffers then takes one whose pages are already
 * mapped, instead of first-touch faults on its hot path (2.8x slower
 * chunks with fresh 4 MiB buffers). Only for buffers of SPARE_MIN_SIZE or
 * more, and only while the pool limit leaves room for one more besides.
 * Called with gp__act.lock held; drops it while requesting.
 */
#define SPARE_BUFFERS 2
#define SPARE_MIN_SIZE (1u << 20)

static void stock_spares_locked(void) {
  while (!gp__act.stop && gp__act.buffer_size >= SPARE_MIN_SIZE &&
         (gp__act.request || atomic_load(&gp__act.num_observers) > 0) &&
         atomic_load(&gp__act.free_count) < SPARE_BUFFERS &&
         atomic_load(&gp__act.outstanding) + 2 <=
             atomic_load(&gp__act.pool_limit)) {
    pthread_mutex_unlock(&gp__act.lock);
    size_t size = 0, maxr = 0;
    gp_buffer_complete_fn comp = NULL;
    int reason = 0;
    uint8_t *b = buffer_request(&size, &maxr, &comp, &reason, false);
    if (b) {
      gp__buffer_prefault(b, size);
      pending *p = malloc(sizeof(*p));
      if (!p) {
        gp__buffer_enqueue(b, size, 0, 0, comp);
        pthread_mutex_lock(&gp__act.lock);
        return;
      }
      p->buf = b;
      p->size = size;
      p->complete = comp;
      p->max_records = maxr;
      pthread_mutex_lock(&gp__act.lock);
      p->next = gp__act.free_list;
      gp__act.free_list = p;
      atomic_fetch_add(&gp__act.free_count, 1);
    } else {
      pthread_mutex_lock(&gp__act.lock);
      return;
    }
  }
}

/* ------------------------------------------------------------------ */
/* Collector                                                            */

/* Held while observers run and while one is removed, so that a removed
 * observer is never called after gp__activity_remove_observer() returns
 * and the list is never read while it is rearranged. Recursive: an
 * observer (or a finisher run on this thread at a fatal signal) may stop
 * a session, which removes its observer. */
static pthread_mutex_t obs_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* See activityInt.h. */
void gp__observers_after_fork(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&obs_lock, &a);
  pthread_mutexattr_destroy(&a);
}

static void run_observers(const uint8_t *buf, size_t valid) {
  pthread_mutex_lock(&obs_lock);
  int n = atomic_load(&gp__act.num_observers);
  for (int i = 0; i < n; i++) {
    gp__buffer_observer fn = gp__act.observers[i].fn;
    if (fn)
      fn(gp__act.observers[i].user, buf, valid);
  }
  pthread_mutex_unlock(&obs_lock);
}

static void emit_overhead(uint64_t start, uint64_t end, uint64_t bytes) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_OVERHEAD, 0))
    return;
  gp_activity_overhead *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_OVERHEAD, sizeof(*r), 0, 0);
  if (!r)
    return;
  if (!gp__act.collector_slot) { /* read by finalize under the lock */
    pthread_mutex_lock(&gp__act.lock);
    gp__act.collector_slot = gp__slot_mine();
    pthread_mutex_unlock(&gp__act.lock);
  }
  r->start = start;
  r->end = end;
  r->overhead_kind = GP_OVERHEAD_BUFFER_FLUSH;
  r->process_id = gp__pid();
  r->thread_id = gp__tid();
  r->reserved0 = 0;
  r->bytes = bytes;
  gp__activity_commit(r);
}

/* Says in the area which records the observers are about to write
 * (core.h, gp__delivery), so that a reader after our death knows whether
 * they were. */
static gp__delivery *delivery_begin(const pending *p, const uint64_t *q) {
  gp__delivery *d = gp__area_delivery();
  if (!d)
    return NULL;
  __atomic_store_n(&d->state, 0, __ATOMIC_RELEASE);
  if (q) { /* a handed-over buffer's records */
    d->cell = GP_DELIVERY_QUEUED;
    d->buf = __atomic_load_n(&q[0], __ATOMIC_RELAXED);
    d->base = __atomic_load_n(&q[1], __ATOMIC_RELAXED);
    d->to = __atomic_load_n(&q[3], __ATOMIC_RELAXED);
  } else {
    d->cell = p->src_cell ? p->src_index : UINT64_MAX;
    d->buf = p->src_buf;
    d->base = p->src_base;
    d->to = p->src_to;
  }
  d->part_before = UINT64_MAX;
  d->part_after = UINT64_MAX;
  __atomic_store_n(&d->state, 1, __ATOMIC_RELEASE);
  return d;
}

/* The records of a flush's copy are written: the thread's cell says so,
 * if it still holds the buffer they were copied from, or else the queued
 * entry of that buffer, handed over since. Those of a handed-over buffer
 * (q): its entry is emptied, before the buffer can be used again. */
static void delivery_end(gp__delivery *d, const pending *p, uint64_t *q) {
  uint64_t *c = p->src_cell;
  if (c && __atomic_load_n(&c[1], __ATOMIC_RELAXED) == p->src_buf &&
      __atomic_load_n(&c[2], __ATOMIC_RELAXED) == p->src_base) {
    gp__cell_set(c, 3, p->src_to);
  } else if (c) {
    uint64_t *e = gp__area_queued(p->src_buf);
    if (e && __atomic_load_n(&e[0], __ATOMIC_ACQUIRE) == p->src_buf &&
        __atomic_load_n(&e[1], __ATOMIC_RELAXED) == p->src_base)
      __atomic_store_n(&e[2], p->src_to, __ATOMIC_RELEASE);
  }
  if (q)
    __atomic_store_n(&q[0], 0, __ATOMIC_RELEASE);
  if (d)
    __atomic_store_n(&d->state, 0, __ATOMIC_RELEASE);
}

/* p's queued entry, if p is a buffer of the area a thread handed over. */
static uint64_t *handed_over(const pending *p) {
  uint64_t w = p->src_cell ? 0 : gp__area_word(p->buf);
  uint64_t *e = gp__area_queued(w);
  return e && __atomic_load_n(&e[0], __ATOMIC_ACQUIRE) == w ? e : NULL;
}

/*
 * Puts a completed buffer of our own (no application callbacks, not from
 * an area) back on the free list while it holds fewer than RECYCLE_MAX:
 * its pages are mapped already, where a freed one (munmap'd by malloc at
 * this size) comes back as first-touch faults, pre-faulted or not (12 us
 * a page on a VM: 3 ms per MiB, a third of a traced demo's extra CPU).
 * Still counted as outstanding: the free list is ours. Returns true if p
 * went on the list (then it is not the caller's to free).
 */
#define RECYCLE_MAX (SPARE_BUFFERS + 2)

static bool recycle(pending *p) {
  if (p->complete != internal_complete || gp__area_holds(p->buf))
    return false;
  pthread_mutex_lock(&gp__act.lock);
  bool keep = !gp__act.stop && atomic_load(&gp__act.free_count) < RECYCLE_MAX &&
              p->size == gp__act.buffer_size;
  if (keep) {
    p->offset = p->valid = 0;
    p->max_records = 0;
    p->src_cell = NULL;
    p->next = gp__act.free_list;
    gp__act.free_list = p;
    atomic_fetch_add(&gp__act.free_count, 1);
  }
  pthread_mutex_unlock(&gp__act.lock);
  return keep;
}

/* Completes one queued buffer. Called without gp__act.lock. Returns true
 * if p itself was kept (recycle()). */
static bool complete_one(pending *p) {
  uint64_t t0 = gp_get_timestamp();
  size_t valid = p->valid > p->offset ? p->valid - p->offset : 0;
  if (p->offset > 0 && valid > 0)
    memmove(p->buf, p->buf + p->offset, valid);
  uint64_t *q = handed_over(p);
  gp__delivery *d = delivery_begin(p, q);
  run_observers(p->buf, valid);
  delivery_end(d, p, q);
  bool kept = recycle(p);
  if (!kept) {
    p->complete(p->buf, p->size, valid);
    atomic_fetch_sub(&gp__act.outstanding, 1);
  }
  uint64_t t1 = gp_get_timestamp();
  if (valid > 0)
    emit_overhead(t0, t1, valid);
  return kept;
}

/* Pops and completes everything queued. Called with gp__act.lock held; drops it
 * while completing. */
static void drain_locked(void) {
  while (gp__act.q_head) {
    pending *p = gp__act.q_head;
    gp__act.q_head = p->next;
    if (!gp__act.q_head)
      gp__act.q_tail = NULL;
    pthread_mutex_unlock(&gp__act.lock);
    uint64_t seq = p->seq;
    /* Freed before a flusher is released: once flush returns, the
     * collector allocates nothing until new work comes (a fork right
     * after a flush then finds no allocator lock held, which matters for
     * sanitizer runtimes that do not lock their allocator around fork). */
    if (!complete_one(p))
      free(p);
    pthread_mutex_lock(&gp__act.lock);
    if (seq > gp__act.completed_seq)
      gp__act.completed_seq = seq;
    pthread_cond_broadcast(&gp__act.done);
  }
}

static void slot_give_back(slot *s);

static void *collector_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&gp__act.lock);
  gp__act.collector_tid_self = pthread_self();
  gp__act.collector_slot = NULL; /* ours is made at our first record */
  gp__act.collector_ready = true;
  pthread_cond_broadcast(&gp__act.done);
  uint64_t last_flush = gp_clock_read_host(GP_CLOCK_MONOTONIC);
  /* For the tests of salvage only (tests/api/test_record_safety.c): the
   * queue is never written, as if the process died before every delivery. */
  const char *hold = getenv("GPUPERF_TEST_HOLD_DELIVERIES");
  while (hold && *hold == '1' && !gp__act.stop)
    pthread_cond_wait(&gp__act.work, &gp__act.lock);
  while (!gp__act.stop) {
    if (!gp__act.q_head) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t wait_ms =
          gp__act.flush_period_ms ? gp__act.flush_period_ms : 1000;
      ts.tv_sec += (time_t)(wait_ms / 1000);
      ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&gp__act.work, &gp__act.lock, &ts);
    }
    drain_locked();
    if (gp__act.give_back_own) {
      /* Finalize: our own slot's application buffer, given back by us
       * (no other thread may touch it while we may write into it). */
      slot *own = gp__act.collector_slot;
      pthread_mutex_unlock(&gp__act.lock);
      if (own)
        slot_give_back(own);
      pthread_mutex_lock(&gp__act.lock);
      gp__act.give_back_own = false;
      pthread_cond_broadcast(&gp__act.done);
      drain_locked();
    }
    stock_spares_locked();
    uint64_t period = gp__act.flush_period_ms;
    uint64_t now = gp_clock_read_host(GP_CLOCK_MONOTONIC);
    if (period && now - last_flush >= period * 1000000ull && !gp__act.stop) {
      last_flush = now;
      pthread_mutex_unlock(&gp__act.lock);
      /* Settled as a flush is (core.h): what was committed before the
       * collection is delivered once the queue is drained here. */
      gp__settle(GP__SETTLE_BEGIN);
      bool whole = gp__collect_slots();
      pthread_mutex_lock(&gp__act.lock);
      drain_locked();
      pthread_mutex_unlock(&gp__act.lock);
      gp__settle(whole ? GP__SETTLE_END : GP__SETTLE_PARTIAL);
      pthread_mutex_lock(&gp__act.lock);
    }
  }
  /* Our own records (overhead) go out with the rest before we leave. */
  pthread_mutex_unlock(&gp__act.lock);
  slot *own = gp__slot_mine();
  if (own)
    gp__slot_release(own);
  pthread_mutex_lock(&gp__act.lock);
  drain_locked();
  pthread_mutex_unlock(&gp__act.lock);
  return NULL;
}

/* Starts the collector if it is not running. Caller holds gp__act.lock. */
int gp__collector_start_locked(void) {
  if (gp__act.collector_running)
    return 0;
  gp__act.stop = false;
  gp__act.collector_ready = false;
  int rc = gp__thread_start(&gp__act.collector, NULL, collector_main, NULL);
  if (rc != 0)
    return -rc;
  gp__act.collector_running = true;
  /* Wait until the thread runs: its start-up (allocations of the thread
   * library and of sanitizers) is then over before our caller goes on,
   * and so before a fork that might follow. */
  while (!gp__act.collector_ready)
    pthread_cond_wait(&gp__act.done, &gp__act.lock);
  return 0;
}

/* See activity.h. */
int gp_activity_register_callbacks(gp_buffer_request_fn request,
                                   gp_buffer_complete_fn complete) {
  if (!request || !complete)
    return GP_EINVAL;
  gp__activity_init();
  pthread_mutex_lock(&gp__act.lock);
  int rc = gp__collector_start_locked();
  if (rc == 0) {
    gp__act.request = request;
    gp__act.complete = complete;
    pthread_cond_signal(&gp__act.work); /* stock the spare buffers */
  }
  pthread_mutex_unlock(&gp__act.lock);
  return rc;
}

/*
 * Copies the undelivered records of one slot into fresh buffers and queues
 * them. Returns false if no buffer could be had (the rest stays for the
 * next flush).
 */
bool gp__collect_slot(slot *s) {
  pthread_mutex_lock(&s->lock);
  for (;;) {
    uint32_t head = gp__slot_head(s);
    if (!s->buf || head <= s->taken)
      break;
    size_t bsize = 0, maxr = 0;
    gp_buffer_complete_fn comp = NULL;
    int reason = 0;
    uint8_t *b = gp__buffer_get(&bsize, &maxr, &comp, &reason, true);
    if (!b) {
      pthread_mutex_unlock(&s->lock);
      return false;
    }
    /* Copy whole records that fit. */
    uint32_t from = s->taken, to = from;
    size_t nrec = 0;
    while (to < head) {
      const gp_activity *r = (const gp_activity *)(s->buf + to);
      if ((size_t)(to - from) + r->size > bsize || (maxr && nrec == maxr))
        break;
      to += r->size;
      nrec++;
    }
    if (to == from) {
      /* Not even one record fits the buffer we were given. */
      gp__buffer_enqueue(b, bsize, 0, 0, comp);
      pthread_mutex_unlock(&s->lock);
      return false;
    }
    memcpy(b, s->buf + from, to - from);
    s->taken = to;
    gp__buffer_enqueue_copy(b, bsize, to - from, comp, s, to);
  }
  pthread_mutex_unlock(&s->lock);
  return true;
}

bool gp__collect_slots(void) {
  bool all = true;
  for (slot *s = atomic_load(&gp__slots); s; s = atomic_load(&s->next))
    all &= gp__collect_slot(s);
  return all;
}

static bool on_collector(void) {
  return gp__act.collector_running &&
         pthread_equal(pthread_self(), gp__act.collector_tid_self);
}

/* See core.h. */
bool gp__activity_on_collector(void) {
  pthread_mutex_lock(&gp__act.lock);
  bool yes = on_collector();
  pthread_mutex_unlock(&gp__act.lock);
  return yes;
}

/* The scope of the flush this thread runs (its hooks read it): context
 * and stream, 0 for all. */
static __thread uint32_t scope_ctx, scope_stream;

/* See core.h. */
bool gp__activity_flush_scope(uint32_t *context_id, uint32_t *stream_id) {
  *context_id = scope_ctx;
  *stream_id = scope_stream;
  return scope_ctx != 0;
}

static int flush(uint32_t flags);

/* See activity.h. */
int gp_activity_flush_all(uint32_t flags) {
  return gp_activity_flush(0, 0, flags);
}

/* See activity.h. */
int gp_activity_flush(uint32_t context_id, uint32_t stream_id, uint32_t flags) {
  if (flags & ~GP_ACTIVITY_FLUSH_FORCED)
    return GP_EINVAL;
  if (!context_id && stream_id)
    return GP_EINVAL;
  if (context_id && !gp__context_exists(context_id))
    return GP_ENOENT;
  uint32_t was_ctx = scope_ctx, was_stream = scope_stream;
  scope_ctx = context_id;
  scope_stream = stream_id;
  int rc = flush(flags);
  scope_ctx = was_ctx;
  scope_stream = was_stream;
  return rc;
}

/* Runs the hooks (in this thread's scope), then delivers every slot. */
static int flush(uint32_t flags) {
  pthread_mutex_lock(&gp__act.lock);
  bool have =
      gp__act.request != NULL || atomic_load(&gp__act.num_observers) > 0;
  if (have && !gp__act.collector_running) {
    int rc = gp__collector_start_locked();
    if (rc != 0) {
      pthread_mutex_unlock(&gp__act.lock);
      return rc;
    }
  }
  int nh = gp__act.num_hooks;
  gp__flush_hook fns[MAX_HOOKS];
  void *users[MAX_HOOKS];
  for (int i = 0; i < nh; i++) {
    fns[i] = gp__act.hooks[i].fn;
    users[i] = gp__act.hooks[i].user;
  }
  pthread_mutex_unlock(&gp__act.lock);
  if (!have)
    return GP_ENOCALLBACK;

  for (int i = 0; i < nh; i++)
    fns[i](users[i], (flags & GP_ACTIVITY_FLUSH_FORCED) != 0);
  gp__settle(GP__SETTLE_BEGIN);

  /* Copy out every slot. If the application declines to give a buffer,
   * the records stay where they are for a later flush. */
  bool whole = gp__collect_slots();

  pthread_mutex_lock(&gp__act.lock);
  if (on_collector()) {
    drain_locked();
  } else {
    uint64_t target = gp__act.enqueued_seq;
    pthread_cond_signal(&gp__act.work);
    while (gp__act.completed_seq < target)
      pthread_cond_wait(&gp__act.done, &gp__act.lock);
  }
  pthread_mutex_unlock(&gp__act.lock);
  /* Records left in a slot for want of a buffer were not delivered: the
   * settle hooks learn nothing from this flush then. */
  gp__settle(whole ? GP__SETTLE_END : GP__SETTLE_PARTIAL);
  return 0;
}

/* True if buf came from the application's request callback (comp is the
 * completion it goes back through), not from us or a shared area. */
static bool app_buffer(const uint8_t *buf, gp_buffer_complete_fn comp) {
  return comp && comp != internal_complete && !gp__area_holds(buf);
}

/*
 * Hands the application's buffer of slot s back through the collector,
 * with the records in it not yet delivered (gp__slot_release()). Another
 * thread's slot is looked at under its lock, which is sound while that
 * thread produces nothing, as after finalize disabled every kind (a
 * thread still writing a record then is the caller's race, as in CUPTI).
 */
static void slot_give_back(slot *s) {
  pthread_mutex_lock(&s->lock);
  bool app = s->buf && app_buffer(s->buf, s->buf_complete);
  pthread_mutex_unlock(&s->lock);
  if (app)
    gp__slot_release(s);
}

/*
 * The buffer lifetime rule (docs/architecture.md, "Who may touch a
 * buffer"): at finalize every buffer the application gave comes back
 * through its completion callback, and neither callback is called again
 * until the application registers callbacks anew. The slots' buffers are
 * queued for the collector (which is then stopped, draining its queue);
 * the empty ones kept for reuse are completed here, with nothing valid.
 */
static void give_back_app_buffers(void) {
  pthread_mutex_lock(&gp__act.lock);
  gp__act.request = NULL;
  gp__act.complete = NULL;
  pthread_mutex_unlock(&gp__act.lock);
  /* The collector's own slot it gives back itself, while it runs: it
   * may be writing an OVERHEAD record into it right now. */
  pthread_mutex_lock(&gp__act.lock);
  slot *own = gp__act.collector_running ? gp__act.collector_slot : NULL;
  if (own) {
    gp__act.give_back_own = true;
    pthread_cond_signal(&gp__act.work);
    while (gp__act.give_back_own && gp__act.collector_running)
      pthread_cond_wait(&gp__act.done, &gp__act.lock);
  }
  pthread_mutex_unlock(&gp__act.lock);
  for (slot *s = atomic_load(&gp__slots); s; s = atomic_load(&s->next))
    if (s != own)
      slot_give_back(s);
  pthread_mutex_lock(&gp__act.lock);
  pending *mine = NULL, **pp = &gp__act.free_list;
  while (*pp) {
    pending *p = *pp;
    if (app_buffer(p->buf, p->complete)) {
      *pp = p->next;
      atomic_fetch_sub(&gp__act.free_count, 1);
      p->next = mine;
      mine = p;
    } else {
      pp = &p->next;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
  while (mine) {
    pending *p = mine;
    mine = p->next;
    p->complete(p->buf, p->size, 0);
    atomic_fetch_sub(&gp__act.outstanding, 1);
    free(p);
  }
}

/* See activity.h. */
int gp_activity_finalize(void) {
  gp__finalizing(); /* sessions kept until exit end now (core.h) */
  pthread_mutex_lock(&gp__act.lock);
  bool running = gp__act.collector_running;
  pthread_mutex_unlock(&gp__act.lock);
  int rc = 0;
  if (running)
    rc = gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  /* Nothing new is produced from here; then the application's buffers go
   * back through the collector (which a hand-over starts if need be). */
  atomic_store(&gp__enabled_mask, 1ull << GP_ACTIVITY_KIND_DROPPED);
  give_back_app_buffers();
  pthread_mutex_lock(&gp__act.lock);
  running = gp__act.collector_running;
  if (running) {
    gp__act.stop = true;
    pthread_cond_signal(&gp__act.work);
  }
  pthread_mutex_unlock(&gp__act.lock);
  if (running) {
    pthread_join(gp__act.collector, NULL);
    pthread_mutex_lock(&gp__act.lock);
    gp__act.collector_running = false;
    pthread_mutex_unlock(&gp__act.lock);
  }
  return rc == GP_ENOCALLBACK ? 0 : rc;
}

/* ------------------------------------------------------------------ */
/* Hooks and observers                                                  */

/* See core.h. */
int gp__activity_add_flush_hook(gp__flush_hook hook, void *user) {
  pthread_mutex_lock(&gp__act.lock);
  if (gp__act.num_hooks == MAX_HOOKS) {
    pthread_mutex_unlock(&gp__act.lock);
    return GP_ENOSPC;
  }
  gp__act.hooks[gp__act.num_hooks].fn = hook;
  gp__act.hooks[gp__act.num_hooks].user = user;
  gp__act.num_hooks++;
  pthread_mutex_unlock(&gp__act.lock);
  return 0;
}

/* See core.h. */
void gp__activity_remove_flush_hook(gp__flush_hook hook, void *user) {
  pthread_mutex_lock(&gp__act.lock);
  for (int i = 0; i < gp__act.num_hooks; i++) {
    if (gp__act.hooks[i].fn == hook && gp__act.hooks[i].user == user) {
      gp__act.hooks[i] = gp__act.hooks[--gp__act.num_hooks];
      break;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
}

/* See core.h. */
int gp__activity_add_observer(gp__buffer_observer fn, void *user) {
  gp__activity_init();
  pthread_mutex_lock(&gp__act.lock);
  int n = atomic_load(&gp__act.num_observers);
  if (n == MAX_OBSERVERS) {
    pthread_mutex_unlock(&gp__act.lock);
    return GP_ENOSPC;
  }
  gp__act.observers[n].fn = fn;
  gp__act.observers[n].user = user;
  atomic_store(&gp__act.num_observers, n + 1);
  int rc = gp__collector_start_locked();
  pthread_mutex_unlock(&gp__act.lock);
  return rc;
}

/* See core.h. */
void gp__activity_remove_observer(gp__buffer_observer fn, void *user) {
  pthread_mutex_lock(&obs_lock);
  pthread_mutex_lock(&gp__act.lock);
  int n = atomic_load(&gp__act.num_observers);
  for (int i = 0; i < n; i++) {
    if (gp__act.observers[i].fn == fn && gp__act.observers[i].user == user) {
      gp__act.observers[i] = gp__act.observers[n - 1];
      atomic_store(&gp__act.num_observers, n - 1);
      break;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
  pthread_mutex_unlock(&obs_lock);
}
