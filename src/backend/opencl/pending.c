/*
 * pending.c - commands in flight, and the records they become.
 *
 * Each tracked command gets an entry, which waits on the command's event:
 * the program's own if it asked for one, else one we asked the driver for
 * (internal), released once its times are read. We never retain the
 * program's events, so the reference counts it sees are the ones it would
 * see without us. A CL_COMPLETE callback on the event (clSetEventCallback)
 * reads the four profiling times, maps them to the trace clock and writes
 * the KERNEL, MEMCPY or MEMSET record; nothing in the program's own calls
 * waits for that.
 *
 * Who writes the record. An entry is "retired" once, by whoever will
 * write its record: the callback, usually; the program's clWaitForEvents
 * or clReleaseEvent when they show the command finished or failed first
 * (PoCL never runs CL_COMPLETE callbacks of failed commands); the reaper
 * or clFinish, for the commands of an in-order queue's reap list (see
 * Reaping); a flush, for internal events it can ask about itself; or a
 * forced flush, which waits up to a second for commands in flight and
 * writes what remains with the times it has (the host's enqueue time as
 * QUEUED, 0 = unknown for the rest). An entry is recycled when both its
 * record writer and its callback are done with it (refs).
 *
 * Locks. Pending entries sit in one of 32 lists (by address), each with
 * its own lock, so that the driver's threads retiring commands and the
 * program's threads enqueueing them rarely meet. An entry whose event is
 * the program's is also known to the event table (gp__ocl.lock, taken
 * first): retiring it takes both.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oclInt.h"

#define DRAIN_WAIT_NS                                                          \
  1000000000ull /* forced flush: wait for work in flight                       \
                 */
#define SHARDS 32

/* One list of pending entries, with what happened to its entries. A
 * command's entry is touched by the thread that enqueues it and the one
 * that completes it (the driver's, or the reaper); keeping every counter
 * on its list's own cache lines (not on shared global ones), and what
 * each side writes on a line of its own, is what keeps those threads
 * from fighting over memory. */
typedef struct shard {
  pthread_mutex_t lock;
  gp__ocl_entry *head;
  uint64_t pending; /* entries in the list (lock) */
  /* Written on enqueue: */
  _Alignas(64) _Atomic uint64_t tracked;
  _Atomic uint64_t internal;
  /* Written once a command is done with: */
  _Alignas(64) _Atomic uint64_t finishing; /* retired, not written yet */
  _Atomic uint64_t recorded, unknown, failed, released;
} __attribute__((aligned(64))) shard;

static shard shards[SHARDS];
static pthread_once_t shards_once = PTHREAD_ONCE_INIT;

static _Atomic int drain_waiting __attribute__((aligned(64)));
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drained = PTHREAD_COND_INITIALIZER;

static void adaptive_init(pthread_mutex_t *m) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
}

static pthread_key_t
    own_key; /* its destructor frees gp__ocl_own_free (below) */
static void own_free_release(void *unused);

static void shards_init(void) {
  for (int i = 0; i < SHARDS; i++)
    adaptive_init(&shards[i].lock);
  pthread_key_create(&own_key, own_free_release);
}

static shard *shard_of(const gp__ocl_entry *e) {
  return &shards[((uintptr_t)e >> 8) % SHARDS];
}

static void wake_drainers(void) {
  if (atomic_load(&drain_waiting) > 0) {
    pthread_mutex_lock(&drain_lock);
    pthread_cond_broadcast(&drained);
    pthread_mutex_unlock(&drain_lock);
  }
}

static cl_int event_status(cl_event ev) {
  cl_int st = CL_QUEUED;
  if (GP_CL_REAL(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                 sizeof(st), &st, NULL) != CL_SUCCESS)
    return CL_QUEUED;
  return st;
}

/* ------------------------------------------------------------------ */
/* Entries                                                              */

/*
 * Entries are recycled, not freed: they are made on the program's threads
 * and done with on the driver's or the reaper's, and malloc's arenas are
 * slow to trade memory across threads. A thread keeps a few freed entries
 * for itself and hands the rest back in batches, pushed on one stack; a
 * thread that needs entries takes the whole stack into its own list.
 * Pushes and the taking of everything at once cannot suffer from ABA.
 * Batches keep the stack's cache line quiet, and a chain that can be
 * fetched one entry ahead (prefetch_entry).
 */
static struct {
  gp__ocl_entry *_Atomic top;
} __attribute__((aligned(64))) returned; /* a cache line of its own */
GP_TLS gp__ocl_entry *gp__ocl_own_free;
GP_TLS unsigned gp__ocl_own_free_n;
static GP_TLS gp__ocl_entry *out_head, *out_tail;
static GP_TLS unsigned out_n;
static GP_TLS bool own_registered; /* own_key set: freed at thread exit */
#define OWN_FREE_MAX 64            /* kept by a thread before they go back */
#define OUT_BATCH 64               /* handed back at once */

static void free_chain(gp__ocl_entry *e) {
  while (e) {
    gp__ocl_entry *next = e->next;
    free(e);
    e = next;
  }
}

/* A thread's own lists die with it: what it kept is freed (the stack,
 * reachable by every thread, is left for reuse). */
static void own_free_release(void *unused) {
  (void)unused;
  free_chain(gp__ocl_own_free);
  free_chain(out_head);
  gp__ocl_own_free = out_head = out_tail = NULL;
  gp__ocl_own_free_n = out_n = 0;
}

/* Arranges for own_free_release to run when this thread exits. */
static void own_register(void) {
  if (GP_UNLIKELY(!own_registered)) {
    pthread_once(&shards_once, shards_init);
    own_registered = pthread_setspecific(own_key, &own_registered) == 0;
  }
}

/* Takes every entry handed back so far, or NULL. */
static gp__ocl_entry *take_returned(void);

/* When the thread's own list is empty: the entries it has gathered to
 * hand back (fewer than a batch, which no other thread can see yet), else
 * every entry handed back so far; NULL if none. */
static gp__ocl_entry *own_refill(void) {
  gp__ocl_entry *e = out_head;
  if (e) {
    out_head = out_tail = NULL;
    out_n = 0;
    return e;
  }
  return take_returned();
}

static gp__ocl_entry *take_returned(void) {
  if (!atomic_load_explicit(&returned.top, memory_order_relaxed))
    return NULL;
  own_register(); /* a whole stack comes with it */
  return atomic_exchange_explicit(&returned.top, NULL, memory_order_acquire);
}

/* See oclInt.h. */
gp__ocl_entry *gp__ocl_entry_new(uint32_t num_waits) {
  /* A thread with entries of its own has registered (own_register). */
  if (GP_UNLIKELY(!gp__ocl_own_free))
    pthread_once(&shards_once, shards_init);
  gp__ocl_entry *e = gp__ocl_own_free ? gp__ocl_own_free : own_refill();
  if (e) {
    gp__ocl_own_free = e->next;
    if (gp__ocl_own_free_n)
      gp__ocl_own_free_n--;
    if (!gp__ocl_own_free)
      gp__ocl_own_free = own_refill(); /* now, to fetch its first one ahead */
    gp__ocl_prefetch_entry(gp__ocl_own_free);
  } else if (!(e = malloc(sizeof(*e)))) {
    return NULL;
  }
  e->waits = e->inline_waits;
  if (num_waits > GP_OCL_INLINE_WAITS && !(e->waits = malloc(8u * num_waits))) {
    own_register();
    e->next = gp__ocl_own_free;
    gp__ocl_own_free = e;
    return NULL;
  }
  gp__ocl_entry_init(e);
  return e;
}

static void entry_put(gp__ocl_entry *e) {
  if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1)
    return;
  if (e->waits != e->inline_waits)
    free(e->waits);
  own_register();
  if (gp__ocl_own_free_n < OWN_FREE_MAX) {
    /* Freed where it will be made again (commands read on the program's
     * thread), or at most a few kept by another thread. */
    e->next = gp__ocl_own_free;
    gp__ocl_own_free = e;
    gp__ocl_own_free_n++;
    return;
  }
  e->next = out_head;
  out_head = e;
  if (!out_tail)
    out_tail = e;
  if (++out_n < OUT_BATCH)
    return;
  gp__ocl_entry *head =
      atomic_load_explicit(&returned.top, memory_order_relaxed);
  do {
    out_tail->next = head;
  } while (!atomic_compare_exchange_weak_explicit(
      &returned.top, &head, out_head, memory_order_release,
      memory_order_relaxed));
  out_head = out_tail = NULL;
  out_n = 0;
}

/* See oclInt.h. */
void gp__ocl_entry_hold(gp__ocl_entry *e) {
  atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

/* See oclInt.h. */
void gp__ocl_entry_drop(gp__ocl_entry *e) {
  entry_put(e);
}

/* Takes the record's ownership. Caller holds e's list lock (and
 * gp__ocl.lock if e has an evinfo); e is pending. */
static void retire_locked(gp__ocl_entry *e) {
  shard *s = shard_of(e);
  e->retired = true;
  atomic_fetch_add_explicit(&s->finishing, 1, memory_order_relaxed);
  if (e->prev)
    e->prev->next = e->next;
  else
    s->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  e->prev = e->next = NULL;
  s->pending--;
  if (e->evinfo) {
    e->evinfo->entry = NULL;
    e->evinfo = NULL;
  }
}

/* See oclInt.h. */
bool gp__ocl_retire(gp__ocl_entry *e, bool events_locked) {
  /* Only the entry's creator gives it an evinfo, before it is pending;
   * after that only retiring (below) takes it away. */
  bool program_event = !e->internal;
  if (program_event && !events_locked)
    pthread_mutex_lock(&gp__ocl.lock);
  shard *s = shard_of(e);
  pthread_mutex_lock(&s->lock);
  bool mine = !e->retired;
  if (mine)
    retire_locked(e);
  pthread_mutex_unlock(&s->lock);
  if (program_event && !events_locked)
    pthread_mutex_unlock(&gp__ocl.lock);
  if (mine)
    wake_drainers();
  return mine;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

/* Reserves e's record of kind and fills the header every kind shares;
 * NULL when it is dropped. Queue 0: OpenCL does not say which hardware
 * queue ran a command. */
static inline __attribute__((always_inline)) void *
begin_work(const gp__ocl_entry *e, const uint64_t ts[4], uint32_t kind,
           uint32_t flags) {
  gp__gpu_work w = {
      .correlation_id = e->corr,
      .queued = ts[0],
      .submitted = ts[1],
      .start = ts[2],
      .end = ts[3],
      .device_id = e->device_id,
      .context_id = e->context_id,
      .stream_id = e->stream_id,
      .flags = flags,
      .num_wait_ids = e->num_waits,
      .wait_ids = e->waits,
  };
  void *r = GP_CORE->activity_reserve(
      kind, gp__gpu_work_size(kind, e->num_waits), e->context_id, e->stream_id);
  if (r)
    gp__gpu_work_fill(r, kind, &w);
  return r;
}

static uint32_t clamp32(uint64_t v) {
  return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* See oclInt.h. */
void gp__ocl_kernel_shape(const gp__ocl_cmd *c, uint32_t grid[3],
                          uint32_t block[3]) {
  for (int i = 0; i < 3; i++) {
    uint64_t g = c->work[i];
    if (c->local) {
      uint64_t l = c->group[i] ? c->group[i] : 1;
      grid[i] = clamp32((g + l - 1) / l);
      block[i] = clamp32(l);
    } else {
      grid[i] = clamp32(g);
      block[i] = 0;
    }
  }
}

static void emit_kernel(const gp__ocl_entry *e, const uint64_t ts[4]) {
  gp_activity_kernel *r = begin_work(e, ts, GP_ACTIVITY_KIND_KERNEL, 0);
  if (!r)
    return;
  uint32_t grid[3], block[3];
  gp__ocl_kernel_shape(&e->cmd, grid, block);
  r->name_id = e->cmd.name_id;
  r->grid_x = grid[0];
  r->grid_y = grid[1];
  r->grid_z = grid[2];
  r->block_x = block[0];
  r->block_y = block[1];
  r->block_z = block[2];
  r->dynamic_shared_memory = e->cmd.dynamic_shared;
  GP_CORE->activity_commit(r);
}

static void emit_memcpy(const gp__ocl_entry *e, const uint64_t ts[4]) {
  gp_activity_memcpy *r =
      begin_work(e, ts, GP_ACTIVITY_KIND_MEMCPY, GP_ACTIVITY_FLAG_MEMCPY_ASYNC);
  if (!r)
    return;
  r->bytes = e->cmd.bytes;
  r->src_device_id = e->cmd.src_host ? UINT32_MAX : e->device_id;
  r->dst_device_id = e->cmd.dst_host ? UINT32_MAX : e->device_id;
  r->src_context_id = e->cmd.src_host ? 0 : e->context_id;
  r->dst_context_id = e->cmd.dst_host ? 0 : e->context_id;
  r->copy_kind = e->cmd.copy_kind;
  r->src_kind = e->cmd.src_kind;
  r->dst_kind = e->cmd.dst_kind;
  GP_CORE->activity_commit(r);
}

static void emit_memset(const gp__ocl_entry *e, const uint64_t ts[4]) {
  gp_activity_memset *r =
      begin_work(e, ts, GP_ACTIVITY_KIND_MEMSET, GP_ACTIVITY_FLAG_MEMCPY_ASYNC);
  if (!r)
    return;
  r->bytes = e->cmd.bytes;
  r->value = e->cmd.value;
  r->memory_kind = e->cmd.dst_kind;
  GP_CORE->activity_commit(r);
}

/* See oclInt.h. */
void gp__ocl_finish(gp__ocl_entry *e, cl_int status, bool can_read) {
  gp__ocl_finish_at(e, status, can_read, NULL);
}

/* See oclInt.h. */
void gp__ocl_finish_at(gp__ocl_entry *e, cl_int status, bool can_read,
                       const gp__ocl_anchor *after) {
  uint64_t dev[4] = {0, 0, 0, 0}, ts[4] = {0, 0, 0, 0};
  static const cl_profiling_info which[4] = {
      CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
      CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  bool complete = false;
  shard *s = shard_of(e);
  if (status < 0)
    atomic_fetch_add_explicit(&s->failed, 1, memory_order_relaxed);
  if (can_read && status == CL_COMPLETE) {
    __typeof__(&clGetEventProfilingInfo) prof =
        GP_CL_REAL(clGetEventProfilingInfo);
    complete = prof != NULL;
    for (int i = 0; i < 4 && complete; i++) {
      cl_ulong v = 0;
      if (prof(e->event, which[i], sizeof(v), &v, NULL) != CL_SUCCESS || v == 0)
        complete = false;
      dev[i] = v;
    }
  }
  if (complete) {
    gp__ocl_device_map(e->dev, e, dev, ts, after);
    complete = ts[0] && ts[1] && ts[2] && ts[3];
  }
  if (!complete) {
    /* What the host saw: the command was queued during the call. */
    ts[0] = e->host_start;
    ts[1] = ts[2] = ts[3] = 0;
  }
  atomic_fetch_add_explicit(complete ? &s->recorded : &s->unknown, 1,
                            memory_order_relaxed);
  if (GP_CORE->activity_enabled(e->cmd.kind, e->context_id)) {
    if (e->cmd.kind == GP_ACTIVITY_KIND_KERNEL)
      emit_kernel(e, ts);
    else if (e->cmd.kind == GP_ACTIVITY_KIND_MEMCPY)
      emit_memcpy(e, ts);
    else if (e->cmd.kind == GP_ACTIVITY_KIND_MEMSET)
      emit_memset(e, ts);
  }
  /* Written (or never to be): no longer in flight. After the commit, so
   * that a death in between counts it twice rather than not at all. */
  if (e->in_flight)
    GP_CORE->activity_work_in_flight(-1);
  if (e->internal && e->event) {
    __typeof__(&clReleaseEvent) rel = GP_CL_REAL(clReleaseEvent);
    if (rel && rel(e->event) == CL_SUCCESS)
      atomic_fetch_add_explicit(&s->released, 1, memory_order_relaxed);
  }
  entry_put(e);
  atomic_fetch_sub_explicit(&s->finishing, 1, memory_order_release);
  wake_drainers();
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user) {
  (void)ev;
  gp__ocl_entry *e = user;
  if (gp__ocl_retire(e, false))
    gp__ocl_finish(e, status, true);
  entry_put(e); /* the callback's reference */
}

/* Counts a command whose record is wanted as GPU work in flight, in the
 * calling thread's cell of the core (core.h): what a recorded process
 * that is SIGKILLed had queued and not seen complete is then known. */
/* Only tracked commands come here (track.c): their kind was found enabled
 * for their context when the enqueue began, which is the decision that
 * the command is recorded; it is not asked again. */
static void count_in_flight(gp__ocl_entry *e) {
  e->in_flight = true;
  GP_CORE->activity_work_in_flight(1);
}

/* See oclInt.h. */
void gp__ocl_entry_link(gp__ocl_entry *e) {
  shard *s = shard_of(e);
  pthread_mutex_lock(&s->lock);
  e->prev = NULL;
  e->next = s->head;
  if (e->next)
    e->next->prev = e;
  s->head = e;
  s->pending++;
  pthread_mutex_unlock(&s->lock);
  count_in_flight(e);
  atomic_fetch_add_explicit(&s->tracked, 1, memory_order_relaxed);
  if (e->internal)
    atomic_fetch_add_explicit(&s->internal, 1, memory_order_relaxed);
}

/* See oclInt.h. */
void gp__ocl_entry_watch(gp__ocl_entry *e) {
  /* From here the callback may run, on any thread, even before
   * clSetEventCallback returns: e belongs to it and its record owner. */
  __typeof__(&clSetEventCallback) set_cb = GP_CL_REAL(clSetEventCallback);
  if (!set_cb || set_cb(e->event, CL_COMPLETE, on_complete, e) != CL_SUCCESS) {
    entry_put(e); /* no callback will come */
    if (gp__ocl_retire(e, false))
      gp__ocl_finish(e, CL_QUEUED, false);
  }
}

/* ------------------------------------------------------------------ */
/* Reaping                                                              */

/*
 * A command of an in-order queue that the program asked no event for is
 * not watched with a callback: it waits on its queue's reap list, oldest
 * first. In-order queues complete in order, so a list is read from its
 * head and the reading stops at the first command still running. This
 * leaves the driver's threads to the driver and spares a callback per
 * command; the times are the same, read from the same event.
 *
 * The list is in two parts. The queue's owner, the first thread that
 * enqueues such a command on it (usually the only one), appends to the
 * queue's ring (gp__ocl_ring): a slot, then the tail, with no lock and no
 * atomic read-modify-write, so that enqueueing threads share nothing on
 * this path. Other threads, and the owner when the ring is full, append
 * to the linked list under reap_lock. Each part is in the queue's order,
 * so each is read from its oldest as above.
 *
 * Who reads the lists. Reading a command (a status query, four profiling
 * times, the record, the release of our event) costs about a microsecond
 * on PoCL, most of it in the driver's locks, which its worker contends
 * for: too much for the program's thread, which only appends to the list.
 * Once GP_OCL_REAP_BATCH wait, the queue is handed to the reaper, a thread
 * of ours (reaper.c). clFinish and flushes read the lists themselves,
 * so that what completed is written by the time they return.
 *
 * One reader of a list at a time (reap_serial), held until the records
 * are written, so that a flush or clFinish that takes it after the
 * reaper finds the reaper's batch written. No callback of ours takes that
 * lock, so holding it across clReleaseEvent cannot deadlock.
 */

static void reap_hand(gp__ocl_queue *q, const gp__ocl_anchor *anchor);

/* See oclInt.h. */
GP_TLS char gp__ocl_ring_token;

/* The calling thread's ring on q: q's ring if the thread owns q (making it
 * the owner if q has none yet), NULL if another thread does or no ring
 * could be had. */
static gp__ocl_ring *own_ring(gp__ocl_queue *q) {
  void *owner = atomic_load_explicit(&q->ring_owner, memory_order_relaxed);
  if (GP_LIKELY(owner == &gp__ocl_ring_token))
    return atomic_load_explicit(&q->ring, memory_order_relaxed);
  if (owner)
    return NULL;
  /* Once per queue (and again in a fork child, see reap_reset). A ring
   * left by a fork's reset is empty: head == tail. */
  gp__ocl_ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
  bool fresh = r == NULL;
  if (fresh && !(r = aligned_alloc(64, sizeof(*r))))
    return NULL;
  if (fresh) {
    atomic_init(&r->tail, 0);
    atomic_init(&r->head, 0);
  }
  void *none = NULL;
  if (!atomic_compare_exchange_strong(&q->ring_owner, &none,
                                      &gp__ocl_ring_token)) {
    if (fresh)
      free(r);
    return NULL;
  }
  if (fresh)
    atomic_store_explicit(&q->ring, r, memory_order_release);
  return r;
}

/* Appends e to q's list (another thread's commands, or the owner's when
 * its ring is full); returns how many the list holds. */
static uint64_t list_append(gp__ocl_entry *e, gp__ocl_queue *q) {
  shard *s = shard_of(e);
  atomic_fetch_add_explicit(&s->tracked, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->internal, 1, memory_order_relaxed);
  pthread_mutex_lock(&q->reap_lock);
  if (q->reap_tail)
    q->reap_tail->reap_next = e;
  else
    q->reap_head = e;
  q->reap_tail = e;
  uint64_t n = atomic_fetch_add_explicit(&q->reap_n, 1, memory_order_relaxed);
  pthread_mutex_unlock(&q->reap_lock);
  return n + 1;
}

/* See oclInt.h. */
void gp__ocl_entry_defer(gp__ocl_entry *e, gp__ocl_queue *q,
                         const gp__ocl_anchor *anchor) {
  /* Counted as tracked and internal by the ring's tail (gp__ocl_get_stats),
   * or on the list's way. */
  uint64_t n;
  gp__ocl_ring *r = own_ring(q);
  if (!r || !gp__ocl_ring_put(GP_CORE, r, e, &n)) {
    count_in_flight(e);
    e->reap_next = NULL;
    n = list_append(e, q);
  }
  gp__ocl_reap_due(q, n, anchor);
}

/* See oclInt.h. */
uint64_t gp__ocl_reap_waiting(gp__ocl_queue *q) {
  uint64_t n = atomic_load_explicit(&q->reap_n, memory_order_relaxed);
  gp__ocl_ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
  if (r)
    n += atomic_load_explicit(&r->tail, memory_order_acquire) -
         atomic_load_explicit(&r->head, memory_order_relaxed);
  return n;
}

/* Takes up to max of the commands on q's ring that are done (with force:
 * done or not), oldest first, counting them as finishing; links them
 * through reap_next from *link on and returns how many. Caller holds
 * q->reap_serial. */
static unsigned ring_take(gp__ocl_queue *q, unsigned max, bool force,
                          gp__ocl_entry ***link) {
  gp__ocl_ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
  if (!r)
    return 0;
  uint64_t h0 = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
  uint64_t h = h0;
  for (; h < t && h - h0 < max; h++) {
    gp__ocl_entry *e = atomic_load_explicit(&r->slot[h % GP_OCL_RING].entry,
                                            memory_order_relaxed);
    cl_int st = event_status(e->event);
    if (st > CL_COMPLETE && !force)
      break;
    e->swept_status = st;
    /* Counted as finishing before it leaves the ring, as on the list. */
    atomic_fetch_add_explicit(&shard_of(e)->finishing, 1, memory_order_relaxed);
    e->reap_next = NULL;
    **link = e;
    *link = &e->reap_next;
  }
  if (h != h0)
    atomic_store_explicit(&r->head, h, memory_order_release);
  return (unsigned)(h - h0);
}

/* Writes the records of up to max of q's oldest commands that are done
 * (with force: done or not), mapping their times with after, an anchor
 * taken since they completed (NULL: one is taken here); returns how many.
 * Caller holds q->reap_serial. */
static unsigned reap_serial_locked(gp__ocl_queue *q, unsigned max, bool force,
                                   const gp__ocl_anchor *after) {
  /* The ring's and the list's commands are each in the queue's order,
   * which is the order they complete in; each is read from its oldest. */
  gp__ocl_entry *taken = NULL, **link = &taken;
  unsigned from_ring = ring_take(q, max, force, &link);
  max -= from_ring;
  pthread_mutex_lock(&q->reap_lock);
  gp__ocl_entry *first = q->reap_head;
  uint64_t n = atomic_load_explicit(&q->reap_n, memory_order_relaxed);
  pthread_mutex_unlock(&q->reap_lock);
  /* Only the holder of reap_serial takes entries off the list: the n
   * oldest stay on it, with their events and the links between them,
   * while the driver is asked about them without the list's lock (which
   * the program's enqueues take). */
  gp__ocl_entry *e = first, *last = NULL;
  unsigned k = 0;
  while (e && k < n && k < max) {
    cl_int st = event_status(e->event);
    if (st > CL_COMPLETE && !force)
      break;
    e->swept_status = st;
    /* Counted as finishing before it leaves the list: a flush waiting
     * for work in flight may count it twice, never not at all. */
    atomic_fetch_add_explicit(&shard_of(e)->finishing, 1, memory_order_relaxed);
    last = e;
    e = ++k < n ? e->reap_next : NULL;
  }
  if (k > 0) {
    pthread_mutex_lock(&q->reap_lock);
    q->reap_head = last->reap_next;
    if (!q->reap_head)
      q->reap_tail = NULL;
    /* Off the list: no enqueue links to it any more. */
    last->reap_next = NULL;
    atomic_fetch_sub_explicit(&q->reap_n, k, memory_order_relaxed);
    pthread_mutex_unlock(&q->reap_lock);
    *link = first;
  }
  if (from_ring + k == 0)
    return 0;
  gp__ocl_anchor now;
  if (!after || !after->raw) {
    gp__ocl_anchor_take(&now); /* one for the batch, after all ended */
    after = &now;
  }
  for (e = taken; e;) {
    gp__ocl_entry *next = e->reap_next;
    e->reap_next = NULL;
    e->retired = true;
    cl_int st = e->swept_status;
    gp__ocl_finish_at(e, st, st <= CL_COMPLETE, after);
    entry_put(e); /* the reap list's reference */
    e = next;
  }
  return from_ring + k;
}

/* See oclInt.h. */
unsigned gp__ocl_reap_batch(gp__ocl_queue *q, unsigned max, bool force,
                            const gp__ocl_anchor *after) {
  pthread_mutex_lock(&q->reap_serial);
  unsigned n = reap_serial_locked(q, max, force, after);
  pthread_mutex_unlock(&q->reap_serial);
  return n;
}

/* See oclInt.h. */
void gp__ocl_reap(gp__ocl_queue *q) {
  gp__ocl_reap_batch(q, UINT32_MAX, false, NULL);
}

/* Hands q, whose list has a batch waiting, to the reaper; without one,
 * reads the batch here with anchor (taken before the enqueue that made it
 * whole). */
static void reap_hand(gp__ocl_queue *q, const gp__ocl_anchor *anchor) {
  if (atomic_exchange(&q->reap_handed, true))
    return; /* handed already */
  if (gp__ocl_reaper_take(q))
    return;
  /* No reaper (none could start, or the process is exiting): the batch is
   * read here. The anchor is after the commands done before that enqueue,
   * and close for those that ended during it (a few us at the clocks'
   * rates). */
  atomic_store(&q->reap_handed, false);
  gp__ocl_reap_batch(q, GP_OCL_REAP_BATCH, false, anchor);
}

/* See oclInt.h. */
void gp__ocl_reap_hand(gp__ocl_queue *q, const gp__ocl_anchor *anchor) {
  reap_hand(q, anchor);
}

/* See oclInt.h. */
void gp__ocl_reap_while_waiting(gp__ocl_queue *q) {
  if (gp__ocl_reap_waiting(q) >= GP_OCL_REAP_BATCH &&
      !atomic_load_explicit(&q->reap_handed, memory_order_relaxed))
    reap_hand(q, NULL);
}

/* Which queues a flush forces: all, or one context's (one stream's). */
typedef struct flush_scope {
  bool scoped;
  uint32_t context_id, stream_id;
} flush_scope;

static bool in_scope(const flush_scope *sc, uint32_t context_id,
                     uint32_t stream_id) {
  return !sc->scoped || (context_id == sc->context_id &&
                         (!sc->stream_id || stream_id == sc->stream_id));
}

static void reap_all(void *user, const void *key, void *val) {
  (void)key;
  const gp__ocl_queue *q = val;
  /* user: the scope of a forced flush, whose queues give up what is
   * left, done or not; NULL: what is done only */
  const flush_scope *sc = user;
  gp__ocl_reap_batch(val, UINT32_MAX,
                     sc && in_scope(sc, q->context_id, q->stream_id), NULL);
}

static void count_waiting(void *user, const void *key, void *val) {
  (void)key;
  *(uint64_t *)user += gp__ocl_reap_waiting(val);
}

static void count_ringed(void *user, const void *key, void *val) {
  (void)key;
  gp__ocl_ring *r = atomic_load(&((gp__ocl_queue *)val)->ring);
  if (r)
    *(uint64_t *)user += atomic_load(&r->tail);
}

/* Commands on the queues' reap lists. */
static uint64_t reap_waiting(void) {
  uint64_t n = 0;
  gp__ptrmap_each(&gp__ocl.queues, count_waiting, &n);
  return n;
}

/* ------------------------------------------------------------------ */
/* Flushes                                                              */

/* Retires the pending commands with internal events that completed or
 * failed without a callback having written them yet. Asking the driver for
 * an event's status runs no callbacks, so it is done under the list lock,
 * which keeps each event alive (its releaser must retire it first). */
static void sweep_internal(void) {
  gp__ocl_entry *done = NULL;
  for (int i = 0; i < SHARDS; i++) {
    shard *s = &shards[i];
    pthread_mutex_lock(&s->lock);
    gp__ocl_entry *next;
    for (gp__ocl_entry *e = s->head; e; e = next) {
      next = e->next;
      if (!e->internal)
        continue; /* the program's events */
      cl_int st = event_status(e->event);
      if (st > CL_COMPLETE)
        continue;
      retire_locked(e);
      e->swept_status = st;
      e->next = done;
      done = e;
    }
    pthread_mutex_unlock(&s->lock);
  }
  while (done) {
    gp__ocl_entry *e = done;
    done = e->next;
    e->next = NULL;
    gp__ocl_finish(e, e->swept_status, true);
  }
}

/* Commands pending or being written, over all lists. */
static uint64_t in_flight(void) {
  uint64_t n = 0;
  for (int i = 0; i < SHARDS; i++) {
    pthread_mutex_lock(&shards[i].lock);
    n += shards[i].pending;
    pthread_mutex_unlock(&shards[i].lock);
    n += atomic_load_explicit(&shards[i].finishing, memory_order_acquire);
  }
  return n + reap_waiting();
}

static void flush_hook(void *user, bool forced) {
  (void)user;
  pthread_once(&shards_once, shards_init);
  gp__ptrmap_each(&gp__ocl.queues, reap_all, NULL);
  sweep_internal();
  if (!forced)
    return;
  /* Work in flight: give it a moment to end and be read whole. */
  uint64_t deadline = gp_clock_read_host(GP_CLOCK_MONOTONIC) + DRAIN_WAIT_NS;
  while (in_flight() > 0 && gp_clock_read_host(GP_CLOCK_MONOTONIC) < deadline) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_nsec += 2000000;
    if (dl.tv_nsec >= 1000000000) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&drain_lock);
    atomic_fetch_add(&drain_waiting, 1);
    pthread_cond_timedwait(&drained, &drain_lock, &dl);
    atomic_fetch_sub(&drain_waiting, 1);
    pthread_mutex_unlock(&drain_lock);
    gp__ptrmap_each(&gp__ocl.queues, reap_all, NULL);
    sweep_internal();
  }
  /* What remains: ours to write with what we know. */
  flush_scope sc;
  sc.scoped = GP_CORE->activity_flush_scope(&sc.context_id, &sc.stream_id);
  gp__ptrmap_each(&gp__ocl.queues, reap_all, &sc);
  gp__ocl_entry *left = NULL;
  pthread_mutex_lock(&gp__ocl.lock);
  for (int i = 0; i < SHARDS; i++) {
    shard *s = &shards[i];
    pthread_mutex_lock(&s->lock);
    gp__ocl_entry *next;
    for (gp__ocl_entry *e = s->head; e; e = next) {
      next = e->next;
      if (!in_scope(&sc, e->context_id, e->stream_id))
        continue; /* another context's: stays in flight */
      retire_locked(e);
      e->next = left;
      left = e;
    }
    pthread_mutex_unlock(&s->lock);
  }
  pthread_mutex_unlock(&gp__ocl.lock);
  while (left) {
    gp__ocl_entry *e = left;
    left = e->next;
    e->next = NULL;
    /* Our own events can still be asked; the program's may be gone. */
    cl_int st = e->internal ? event_status(e->event) : CL_QUEUED;
    gp__ocl_finish(e, st, e->internal);
  }
}

static void oldest_reaped(void *user, const void *key, void *val) {
  (void)key;
  uint64_t *acc = user; /* [0] device id, [1] the least start */
  gp__ocl_queue *q = val;
  if (q->device_id != acc[0])
    return;
  pthread_mutex_lock(&q->reap_lock);
  /* Oldest first: the head's call started first. */
  if (q->reap_head && q->reap_head->host_start < acc[1])
    acc[1] = q->reap_head->host_start;
  pthread_mutex_unlock(&q->reap_lock);
  gp__ocl_ring *r = atomic_load_explicit(&q->ring, memory_order_acquire);
  if (!r)
    return;
  /* The ring's oldest, read without its reader's lock: the slot is only
   * written again after head moved past it, so an unchanged head vouches
   * for what was read; a command that left the ring is counted as
   * finishing until written (see gp__ocl_pending_oldest). */
  uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
  if (h == atomic_load_explicit(&r->tail, memory_order_acquire))
    return;
  uint64_t start = atomic_load_explicit(&r->slot[h % GP_OCL_RING].start,
                                        memory_order_acquire);
  if (atomic_load_explicit(&r->head, memory_order_acquire) == h &&
      start < acc[1])
    acc[1] = start;
}

/* See oclInt.h. */
uint64_t gp__ocl_pending_oldest(uint32_t device_id, bool *writing) {
  pthread_once(&shards_once, shards_init);
  uint64_t least = UINT64_MAX;
  for (int i = 0; i < SHARDS; i++) {
    shard *s = &shards[i];
    pthread_mutex_lock(&s->lock);
    for (const gp__ocl_entry *e = s->head; e; e = e->next)
      if (e->device_id == device_id && e->host_start < least)
        least = e->host_start;
    pthread_mutex_unlock(&s->lock);
  }
  uint64_t acc[2] = {device_id, least};
  gp__ptrmap_each(&gp__ocl.queues, oldest_reaped, acc);
  /* Read after the lists: an entry that left one before it was scanned
   * is counted here until its record is written. */
  uint64_t n = 0;
  for (int i = 0; i < SHARDS; i++)
    n += atomic_load_explicit(&shards[i].finishing, memory_order_acquire);
  *writing = n > 0;
  return acc[1];
}

/* See oclInt.h. */
void gp__ocl_get_stats(gp__ocl_stats *out) {
  memset(out, 0, sizeof(*out));
  pthread_once(&shards_once, shards_init);
  for (int i = 0; i < SHARDS; i++) {
    shard *s = &shards[i];
    pthread_mutex_lock(&s->lock);
    out->pending += s->pending;
    pthread_mutex_unlock(&s->lock);
    out->tracked += atomic_load(&s->tracked);
    out->internal += atomic_load(&s->internal);
    out->recorded += atomic_load(&s->recorded);
    out->unknown += atomic_load(&s->unknown);
    out->failed += atomic_load(&s->failed);
    out->released += atomic_load(&s->released);
  }
  out->pending += reap_waiting();
  /* The rings' commands were counted by nothing else. */
  uint64_t ringed = 0;
  gp__ptrmap_each(&gp__ocl.queues, count_ringed, &ringed);
  out->tracked += ringed;
  out->internal += ringed;
}

/* ------------------------------------------------------------------ */
/* fork()                                                               */

static void atfork_prepare(void) {
  pthread_mutex_lock(&gp__ocl.objects_lock);
  pthread_mutex_lock(&gp__ocl.lock);
  for (int i = 0; i < SHARDS; i++)
    pthread_mutex_lock(&shards[i].lock);
}

static void atfork_parent(void) {
  for (int i = SHARDS - 1; i >= 0; i--)
    pthread_mutex_unlock(&shards[i].lock);
  pthread_mutex_unlock(&gp__ocl.lock);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
}

static void reap_reset(void *user, const void *key, void *val) {
  (void)user;
  (void)key;
  gp__ocl_queue *q = val;
  pthread_mutex_init(&q->reap_lock, NULL);
  pthread_mutex_init(&q->reap_serial, NULL);
  atomic_store(&q->reap_handed, false);
  q->reap_todo_next = NULL;
  gp__ocl_entry *e = q->reap_head;
  while (e) {
    gp__ocl_entry *next = e->reap_next;
    if (e->waits != e->inline_waits)
      free(e->waits);
    free(e);
    e = next;
  }
  q->reap_head = q->reap_tail = NULL;
  atomic_store(&q->reap_n, 0);
  gp__ocl_ring *r = atomic_load(&q->ring);
  if (r) {
    for (uint64_t h = atomic_load(&r->head); h < atomic_load(&r->tail); h++) {
      gp__ocl_entry *d = atomic_load(&r->slot[h % GP_OCL_RING].entry);
      if (d->waits != d->inline_waits)
        free(d->waits);
      free(d);
    }
    atomic_store(&r->head, atomic_load(&r->tail));
  }
  /* Its owner may be a thread the child does not have: the next thread to
   * enqueue becomes the owner (of the same, empty, ring). */
  atomic_store(&q->ring_owner, NULL);
}

/* The commands in flight are the parent's: their callbacks will never run
 * here, and their records are the parent's to write. */
static void atfork_child(void) {
  adaptive_init(&gp__ocl.lock);
  pthread_mutex_init(&gp__ocl.objects_lock, NULL);
  pthread_mutex_init(&drain_lock, NULL);
  pthread_cond_init(&drained, NULL);
  for (int i = 0; i < SHARDS; i++) {
    adaptive_init(&shards[i].lock);
    gp__ocl_entry *e = shards[i].head;
    while (e) {
      gp__ocl_entry *next = e->next;
      if (e->evinfo)
        e->evinfo->entry = NULL;
      if (e->waits != e->inline_waits)
        free(e->waits);
      free(e);
      e = next;
    }
    shards[i].head = NULL;
    shards[i].pending = 0;
    atomic_store(&shards[i].finishing, 0);
  }
  atomic_store(&drain_waiting, 0);
  gp__ocl_reaper_atfork_child();
  gp__ptrmap_each(&gp__ocl.queues, reap_reset, NULL);
  gp__ocl_device_atfork_child();
}

/* See oclInt.h. */
void gp__ocl_track_init(void) {
  pthread_once(&shards_once, shards_init);
  GP_CORE->activity_add_flush_hook(flush_hook, NULL);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
