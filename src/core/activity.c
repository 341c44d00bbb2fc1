/*
 * activity.c - producing activity records: per-thread buffers, enabling,
 * drop accounting and attributes (the CUPTI buffer model; the collector
 * thread and flush are in collector.c).
 *
 * Each producing thread owns a slot holding its current buffer. Writing a
 * record is a bump of the slot's private head, the stores of the fields,
 * and a release store of the published head: no lock, no allocation, no
 * atomic read-modify-write. When the buffer is full the thread hands it to
 * the collector queue and takes a new one (from the free list or the
 * application's request callback); only then is a lock taken.
 *
 * A flush must deliver records from buffers other threads are still
 * writing into. It never takes a buffer away from its owner: under the
 * slot's lock (which the owner takes only when it swaps buffers) it copies
 * the records between the slot's `taken` mark and the published head into
 * a fresh buffer and advances `taken`. When the owner later hands the
 * buffer over, the collector first moves the records after `taken` to the
 * front. Every record is therefore delivered exactly once, in order per
 * thread.
 *
 * The collector thread is the only caller of completion callbacks (and of
 * observers). Slots are never freed, only reused by later threads, so the
 * slot list can be walked without a lock.
 *
 * Records that cannot be written are dropped and counted by kind and
 * reason, globally, per (context, stream), and in the thread's slot, from
 * which a DROPPED record is written into the thread's next buffer.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#include <stdlib.h>
#include <string.h>

#include "activityInt.h"

_Atomic uint64_t gp__enabled_mask = 1ull << GP_ACTIVITY_KIND_DROPPED;

gp__activity_state gp__act = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
    .buffer_size = DEFAULT_BUFFER_SIZE,
    .pool_limit = DEFAULT_POOL_LIMIT,
    .drop_lock = PTHREAD_MUTEX_INITIALIZER,
};

slot *_Atomic gp__slots;
gp__slot gp__slot_none;
/* The core's per-thread block (core.h); its line is clock.c's. */
GP_TLS gp__tls_t gp__tls = {.slot = &gp__slot_none};

/* Where committed records are counted (gp__activity_count_into). */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *count_cells;
static uint32_t count_ncells;
static size_t count_stride;
static uint32_t *count_overflow;
static pid_t count_pid; /* the process that gave the cells */
static _Atomic uint32_t slots_made;

/* Points s->count at its cell, or at its own counter. count_lock held. */
static void count_assign(slot *s) {
  if (count_cells && s->index < count_ncells) {
    atomic_store_explicit(
        &s->count, (uint64_t *)(count_cells + (size_t)s->index * count_stride),
        memory_order_relaxed);
  } else {
    atomic_store_explicit(&s->count, &s->own_cell[0], memory_order_relaxed);
    if (count_cells && count_overflow)
      *count_overflow = 1;
  }
}
static pthread_key_t slot_key;
static pthread_once_t slot_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg);
static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void init_once(void) {
  pthread_key_create(&slot_key, thread_exit);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Registers the thread-exit key and the fork handlers, once. */
void gp__activity_init(void) {
  pthread_once(&slot_key_once, init_once);
}

/* ------------------------------------------------------------------ */
/* Names                                                                */

/* By value: the kinds are not every value below GP_ACTIVITY_KIND_COUNT
 * (NULL: not a kind). */
static const char *const kind_names[GP_ACTIVITY_KIND_COUNT] = {
    [GP_ACTIVITY_KIND_INVALID] = "INVALID",
    [GP_ACTIVITY_KIND_KERNEL] = "KERNEL",
    [GP_ACTIVITY_KIND_MEMCPY] = "MEMCPY",
    [GP_ACTIVITY_KIND_MEMSET] = "MEMSET",
    [GP_ACTIVITY_KIND_API] = "API",
    [GP_ACTIVITY_KIND_MARKER] = "MARKER",
    [GP_ACTIVITY_KIND_DEVICE] = "DEVICE",
    [GP_ACTIVITY_KIND_CONTEXT] = "CONTEXT",
    [GP_ACTIVITY_KIND_NAME] = "NAME",
    [GP_ACTIVITY_KIND_OVERHEAD] = "OVERHEAD",
    [GP_ACTIVITY_KIND_ENVIRONMENT] = "ENVIRONMENT",
    [GP_ACTIVITY_KIND_COUNTER] = "COUNTER",
    [GP_ACTIVITY_KIND_DROPPED] = "DROPPED",
    [GP_ACTIVITY_KIND_SYNCHRONIZATION] = "SYNCHRONIZATION",
    [GP_ACTIVITY_KIND_RENDER_STAGE] = "RENDER_STAGE",
    [GP_ACTIVITY_KIND_GPU_LOG] = "GPU_LOG",
    [GP_ACTIVITY_KIND_GPU_MEMORY] = "GPU_MEMORY",
    [GP_ACTIVITY_KIND_DMA_FENCE] = "DMA_FENCE",
    [GP_ACTIVITY_KIND_GPU_FTRACE] = "GPU_FTRACE",
    [GP_ACTIVITY_KIND_MODULE] = "MODULE",
    [GP_ACTIVITY_KIND_FUNCTION] = "FUNCTION",
    [GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE] = "DEVICE_ATTRIBUTE",
    [GP_ACTIVITY_KIND_MARKER_DATA] = "MARKER_DATA",
    [GP_ACTIVITY_KIND_SOURCE_LOCATOR] = "SOURCE_LOCATOR",
    [GP_ACTIVITY_KIND_GLOBAL_ACCESS] = "GLOBAL_ACCESS",
    [GP_ACTIVITY_KIND_SHARED_ACCESS] = "SHARED_ACCESS",
    [GP_ACTIVITY_KIND_BRANCH] = "BRANCH",
    [GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION] = "INSTRUCTION_EXECUTION",
    [GP_ACTIVITY_KIND_CDP_KERNEL] = "CDP_KERNEL",
    [GP_ACTIVITY_KIND_PREEMPTION] = "PREEMPTION",
    [GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER] = "UNIFIED_MEMORY_COUNTER",
    [GP_ACTIVITY_KIND_EVENT] = "EVENT",
    [GP_ACTIVITY_KIND_METRIC] = "METRIC",
    [GP_ACTIVITY_KIND_EVENT_INSTANCE] = "EVENT_INSTANCE",
    [GP_ACTIVITY_KIND_METRIC_INSTANCE] = "METRIC_INSTANCE",
};
_Static_assert(GP_ACTIVITY_KIND_COUNT <= 64,
               "enable masks are uint64_t, bit k for kind k");

/* See activity.h. */
const char *gp_activity_kind_name(uint32_t kind) {
  return kind < GP_ACTIVITY_KIND_COUNT && kind_names[kind] ? kind_names[kind]
                                                           : "UNKNOWN";
}

/* See activity.h. */
const char *gp_device_attr_name(uint32_t attribute) {
  static const char *const names[GP_DEVICE_ATTR_COUNT] = {
      "unknown",
      "compute_units",
      "max_threads_per_block",
      "global_memory_bytes",
      "core_clock_khz",
      "max_shared_memory_per_block"};
  return attribute < GP_DEVICE_ATTR_COUNT ? names[attribute] : "unknown";
}

/* See activity.h. */
const char *gp_drop_reason_name(uint32_t reason) {
  static const char *const names[GP_DROP_REASON_COUNT] = {
      "no_buffer", "declined", "no_callbacks", "too_large", "source", "late"};
  return reason < GP_DROP_REASON_COUNT ? names[reason] : "unknown";
}

/* See activity.h. */
const char *gp_memcpy_kind_name(uint32_t kind) {
  static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA",
                                      "AtoH",    "AtoA", "AtoD", "DtoA",
                                      "DtoD",    "HtoH", "PtoP"};
  return kind < GP_ARRAY_SIZE(names) ? names[kind] : "Unknown";
}

/* ------------------------------------------------------------------ */
/* Enabling                                                             */

static bool kind_valid(uint32_t kind) {
  return kind > GP_ACTIVITY_KIND_INVALID && kind < GP_ACTIVITY_KIND_COUNT &&
         kind_names[kind] != NULL;
}

/* See activity.h. */
int gp_activity_enable(gp_activity_kind kind) {
  if (!kind_valid(kind))
    return GP_EKIND;
  uint64_t old = atomic_fetch_or(&gp__enabled_mask, 1ull << kind);
  if (kind == GP_ACTIVITY_KIND_DEVICE && !(old & (1ull << kind)))
    gp__device_emit_all();
  if (kind == GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE && !(old & (1ull << kind)))
    gp__device_emit_all_attributes();
  return 0;
}

/* See activity.h. */
int gp_activity_disable(gp_activity_kind kind) {
  if (!kind_valid(kind))
    return GP_EKIND;
  atomic_fetch_and(&gp__enabled_mask, ~(1ull << kind));
  return 0;
}

static int set_context(uint32_t context_id, gp_activity_kind kind, bool on) {
  if (!kind_valid(kind))
    return GP_EKIND;
  if (!((CONTEXT_KINDS >> kind) & 1))
    return GP_ENOTSUP;
  if (!gp__context_exists(context_id))
    return GP_ENOENT;
  pthread_mutex_lock(&gp__act.lock);
  int n = atomic_load(&gp__act.num_overrides), i;
  for (i = 0; i < n; i++)
    if (gp__act.overrides[i].context_id == context_id)
      break;
  if (i == n) {
    if (n == (int)GP_ARRAY_SIZE(gp__act.overrides)) {
      pthread_mutex_unlock(&gp__act.lock);
      return GP_ENOSPC;
    }
    gp__act.overrides[i].context_id = context_id;
    gp__act.overrides[i].set_mask = 0;
    gp__act.overrides[i].on_mask = 0;
  }
  gp__act.overrides[i].set_mask |= 1ull << kind;
  if (on)
    gp__act.overrides[i].on_mask |= 1ull << kind;
  else
    gp__act.overrides[i].on_mask &= ~(1ull << kind);
  if (i == n)
    atomic_store(&gp__act.num_overrides, n + 1);
  pthread_mutex_unlock(&gp__act.lock);
  return 0;
}

/* See activity.h. */
int gp_activity_enable_context(uint32_t context_id, gp_activity_kind kind) {
  return set_context(context_id, kind, true);
}

/* See activity.h. */
int gp_activity_disable_context(uint32_t context_id, gp_activity_kind kind) {
  return set_context(context_id, kind, false);
}

/* Forgets the overrides of a context (called when it goes away). */
void gp__activity_forget_context(uint32_t context_id) {
  pthread_mutex_lock(&gp__act.lock);
  int n = atomic_load(&gp__act.num_overrides);
  for (int i = 0; i < n; i++) {
    if (gp__act.overrides[i].context_id == context_id) {
      gp__act.overrides[i] = gp__act.overrides[n - 1];
      atomic_store(&gp__act.num_overrides, n - 1);
      break;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
}

/* See core.h. */
bool gp__activity_enabled(uint32_t kind, uint32_t context_id) {
  uint64_t bit = 1ull << kind;
  bool on = (atomic_load_explicit(&gp__enabled_mask, memory_order_relaxed) &
             bit) != 0;
  if (context_id == 0 ||
      GP_LIKELY(atomic_load_explicit(&gp__act.num_overrides,
                                     memory_order_relaxed) == 0))
    return on;
  pthread_mutex_lock(&gp__act.lock);
  int n = atomic_load(&gp__act.num_overrides);
  for (int i = 0; i < n; i++) {
    if (gp__act.overrides[i].context_id == context_id &&
        (gp__act.overrides[i].set_mask & bit)) {
      on = (gp__act.overrides[i].on_mask & bit) != 0;
      break;
    }
  }
  pthread_mutex_unlock(&gp__act.lock);
  return on;
}

/* See activity.h. */
int gp_activity_is_enabled(uint32_t context_id, gp_activity_kind kind) {
  if (!kind_valid(kind))
    return GP_EKIND;
  return gp__activity_enabled(kind, context_id) ? 1 : 0;
}

/* See core.h. */
uint64_t gp__correlation_next(void) {
  return atomic_fetch_add_explicit(&gp__act.correlation, 1,
                                   memory_order_relaxed) +
         1;
}

/* ------------------------------------------------------------------ */
/* Slots                                                                */

static slot *slot_attach(void) {
  gp__activity_init();
  slot *s;
  for (s = atomic_load(&gp__slots); s; s = atomic_load(&s->next)) {
    int expect = 0;
    if (atomic_compare_exchange_strong(&s->live, &expect, 1))
      break;
  }
  if (!s) {
    s = calloc(1, sizeof(*s));
    if (!s)
      return NULL;
    pthread_mutex_init(&s->lock, NULL);
    atomic_store(&s->live, 1);
    s->index = atomic_fetch_add(&slots_made, 1);
    pthread_mutex_lock(&count_lock);
    count_assign(s);
    pthread_mutex_unlock(&count_lock);
    slot *head = atomic_load(&gp__slots);
    do {
      atomic_store(&s->next, head);
    } while (!atomic_compare_exchange_weak(&gp__slots, &head, s));
  }
  s->tid = gp__tid();
  s->records_left = UINT32_MAX;
  gp__slot_limit(s);
  gp__tls.slot = s;
  pthread_setspecific(slot_key, s);
  return s;
}

/* Hands the owner's current buffer to the collector (or keeps it for
 * reuse if nothing in it is undelivered). By the owner, or by another
 * thread while the owner produces nothing (finalize): the end is the
 * published head, which equals cur between the owner's calls. */
void gp__slot_release(slot *s) {
  pthread_mutex_lock(&s->lock);
  uint8_t *b = s->buf;
  size_t size = s->buf_size;
  uint32_t taken = s->taken;
  uint32_t head = gp__slot_head(s);
  gp_buffer_complete_fn comp = s->buf_complete;
  s->buf = NULL;
  s->cap = 0;
  gp__slot_set_cur(s, NULL);
  s->open = NULL;
  s->limit = NULL;
  s->taken = 0;
  /* Its records now go the way of the queue: where the buffer is the
   * area's, its queued entry says where they are until written (core.h),
   * noted before the cell lets go of it. */
  uint64_t *cell = gp__slot_cell(s);
  uint64_t w1 = __atomic_load_n(&cell[1], __ATOMIC_RELAXED);
  if (w1 && b && head > taken)
    gp__area_queued_note(w1, __atomic_load_n(&cell[2], __ATOMIC_RELAXED),
                         __atomic_load_n(&cell[3], __ATOMIC_RELAXED), head);
  gp__cell_set(cell, 1, 0);
  /* Queued before the slot's lock is let go: a flush that finds the slot
   * empty then finds the buffer in the queue (core.h, settle hooks). */
  if (b && head > taken)
    gp__buffer_enqueue(b, size, taken, head, comp);
  else if (b)
    gp__buffer_keep(b, size, comp);
  pthread_mutex_unlock(&s->lock);
}

/* See core.h. */
void gp__activity_submitting(uint64_t start) {
  slot *s = gp__slot_mine();
  if (GP_UNLIKELY(!s) && (start == 0 || !(s = slot_attach())))
    return;
  /* Release: the driver call that follows submits the work with later
   * stores of this thread, so the work cannot start before this is seen. */
  atomic_store_explicit(&s->submitting, start, memory_order_release);
}

/* See core.h. */
uint64_t gp__activity_submitting_min(void) {
  uint64_t least = UINT64_MAX;
  for (slot *s = atomic_load(&gp__slots); s; s = atomic_load(&s->next)) {
    uint64_t v = atomic_load_explicit(&s->submitting, memory_order_acquire);
    if (v && v < least)
      least = v;
  }
  return least;
}

static void thread_exit(void *arg) {
  slot *s = arg;
  if (!s)
    return;
  atomic_store_explicit(&s->submitting, 0, memory_order_release);
  gp__slot_release(s);
  memset(s->drop_pend, 0, sizeof(s->drop_pend));
  s->has_drops = false;
  gp__slot_limit(s);
  gp__tls.slot = &gp__slot_none;
  atomic_store(&s->live, 0);
}

/* ------------------------------------------------------------------ */
/* Drops                                                                */

static void write_drop_records(slot *s);

static void count_drops(slot *s, uint32_t kind, int reason, uint32_t context_id,
                        uint32_t stream_id, uint64_t n) {
  atomic_fetch_add_explicit(&gp__act.drop_stats[kind][reason], n,
                            memory_order_relaxed);
  atomic_fetch_add_explicit(&gp__act.drop_total, n, memory_order_relaxed);
  atomic_fetch_add_explicit(&gp__act.drop_unread, n, memory_order_relaxed);
  if (context_id != 0) {
    pthread_mutex_lock(&gp__act.drop_lock);
    int i;
    for (i = 0; i < gp__act.num_drops; i++)
      if (gp__act.drops[i].context_id == context_id &&
          gp__act.drops[i].stream_id == stream_id)
        break;
    if (i == gp__act.num_drops && i < MAX_DROP_ENTRIES) {
      gp__act.drops[i].context_id = context_id;
      gp__act.drops[i].stream_id = stream_id;
      gp__act.drops[i].unread = 0;
      gp__act.num_drops++;
    }
    if (i < gp__act.num_drops)
      gp__act.drops[i].unread += n;
    pthread_mutex_unlock(&gp__act.drop_lock);
  }
  if (s && kind != GP_ACTIVITY_KIND_DROPPED) {
    drop_pending *d = &s->drop_pend[kind][reason];
    uint64_t now = gp__now();
    if (d->count == 0)
      d->first = now;
    d->count += n;
    d->last = now;
    s->has_drops = true;
    s->limit = 0; /* the next reserve writes them first */
  }
}

static void count_drop(slot *s, uint32_t kind, int reason, uint32_t context_id,
                       uint32_t stream_id) {
  count_drops(s, kind, reason, context_id, stream_id, 1);
}

/* See core.h. */
void gp__activity_add_drops(uint32_t kind, uint32_t reason, uint32_t context_id,
                            uint32_t stream_id, uint64_t count) {
  if (count == 0 || kind >= GP_ACTIVITY_KIND_COUNT ||
      reason >= GP_DROP_REASON_COUNT)
    return;
  slot *s = gp__slot_mine();
  if (!s)
    s = slot_attach();
  count_drops(s, kind, (int)reason, context_id, stream_id, count);
  /* A source's drops are news now: write the DROPPED record at once if the
   * thread holds a buffer (else with its next record). */
  if (s && s->buf && s->open == s->cur)
    write_drop_records(s);
}

/* Writes DROPPED records for what the thread dropped, as far as they fit.
 * Owner only; the slot has a buffer. */
static void write_drop_records(slot *s) {
  bool want = (atomic_load_explicit(&gp__enabled_mask, memory_order_relaxed) &
               (1ull << GP_ACTIVITY_KIND_DROPPED)) != 0;
  bool left = false;
  uint32_t h = gp__slot_off(s, s->cur);
  for (uint32_t k = 0; k < GP_ACTIVITY_KIND_COUNT; k++) {
    for (uint32_t r = 0; r < GP_DROP_REASON_COUNT; r++) {
      drop_pending *d = &s->drop_pend[k][r];
      if (d->count == 0)
        continue;
      if (!want) {
        memset(d, 0, sizeof(*d));
        continue;
      }
      uint32_t size = sizeof(gp_activity_dropped);
      if (h + size > s->cap || s->records_left == 0) {
        left = true;
        continue;
      }
      gp_activity_dropped *rec = (void *)(s->buf + h);
      memset(rec, 0, size);
      rec->hdr.kind = GP_ACTIVITY_KIND_DROPPED;
      rec->hdr.size = size;
      rec->first = d->first;
      rec->last = d->last;
      rec->count = d->count;
      rec->dropped_kind = k;
      rec->reason = r;
      rec->thread_id = s->tid;
      h += size;
      s->records_left--;
      (*atomic_load_explicit(&s->count, memory_order_relaxed))++;
      memset(d, 0, sizeof(*d));
    }
  }
  gp__slot_set_cur(s, s->buf + h);
  s->open = s->cur;
  s->has_drops = left;
  gp__slot_limit(s);
}

/* ------------------------------------------------------------------ */
/* Producing                                                            */

/* See slot.h. Out of line and cold, so that the inlined fast path stays
 * small: attaching the thread, a full or missing buffer, pending drop
 * records, a buffer with a budget of records (max_num_records: every
 * reservation comes here and is counted against it). */
__attribute__((noinline, cold)) void *
gp__activity_reserve_slow(uint32_t kind, uint32_t size, uint32_t context_id,
                          uint32_t stream_id) {
  slot *s = gp__slot_mine();
  if (!s && !(s = slot_attach())) {
    count_drop(NULL, kind, GP_DROP_NO_BUFFER, context_id, stream_id);
    return NULL;
  }
  if (s->buf &&
      (gp__slot_off(s, s->cur) + size > s->cap || s->records_left == 0))
    gp__slot_release(s);
  if (!s->buf) {
    size_t bsize = 0, maxr = 0;
    gp_buffer_complete_fn comp = NULL;
    int reason = 0;
    uint8_t *b = gp__buffer_get(&bsize, &maxr, &comp, &reason, false);
    if (!b) {
      count_drop(s, kind, reason, context_id, stream_id);
      return NULL;
    }
    pthread_mutex_lock(&s->lock);
    s->buf = b;
    s->buf_size = bsize;
    s->buf_complete = comp;
    s->cap = bsize > UINT32_MAX ? UINT32_MAX & ~7u : (uint32_t)(bsize & ~7ul);
    gp__slot_set_cur(s, b);
    s->open = b;
    s->taken = 0;
    s->records_left =
        maxr ? (maxr > UINT32_MAX ? UINT32_MAX : (uint32_t)maxr) : UINT32_MAX;
    gp__slot_limit(s);
    /* Where a reader finds the records of this buffer if we die (core.h):
     * word 1 last, once 2 and 3 are right. */
    uint64_t *cell = gp__slot_cell(s);
    gp__cell_set(cell, 1, 0);
    gp__cell_set(cell, 2, __atomic_load_n(&cell[0], __ATOMIC_RELAXED));
    gp__cell_set(cell, 3, 0);
    gp__cell_set(cell, 1, gp__area_word(b));
    pthread_mutex_unlock(&s->lock);
  }
  if (s->has_drops)
    write_drop_records(s);
  if (size > s->cap) {
    count_drop(s, kind, GP_DROP_TOO_LARGE, context_id, stream_id);
    return NULL;
  }
  uint32_t h = gp__slot_off(s, s->cur);
  if (h + size > s->cap || s->records_left == 0) {
    /* The drop records filled it: start over with a fresh buffer. */
    return gp__activity_reserve_slow(kind, size, context_id, stream_id);
  }
  if (s->records_left != UINT32_MAX)
    s->records_left--; /* a budget: counted here, not by commit */
  gp_activity *rec = (gp_activity *)(s->buf + h);
  rec->kind = kind;
  rec->size = size;
  s->open = s->buf + h + size;
  return rec;
}

/* See slot.h. */
void *gp__activity_reserve_out(uint32_t kind, uint32_t size,
                               uint32_t context_id, uint32_t stream_id) {
  return gp__activity_reserve(kind, size, context_id, stream_id);
}

/* See slot.h. */
void gp__activity_commit_out(void *record) {
  gp__activity_commit(record);
}

/* See core.h. */
void gp__activity_work_in_flight(int delta) {
  slot *s = gp__slot_mine();
  if (!s && !(s = slot_attach()))
    return;
  uint64_t *c = gp__slot_cell(s);
  /* Only this thread writes it; a reader comes after our death. */
  uint64_t v = __atomic_load_n(&c[4], __ATOMIC_RELAXED);
  __atomic_store_n(&c[4], v + (uint64_t)(int64_t)delta, __ATOMIC_RELAXED);
}

static void count_set(uint8_t *cells, uint32_t ncells, size_t stride,
                      uint32_t *overflow) {
  count_cells = cells;
  count_ncells = cells ? ncells : 0;
  count_stride = stride;
  count_overflow = cells ? overflow : NULL;
  count_pid = getpid();
  /* A thread may be committing: its pointer changes between two records,
   * and a count in flight lands in one cell or the other. */
  for (slot *s = atomic_load(&gp__slots); s; s = atomic_load(&s->next))
    count_assign(s);
}

/* See core.h. */
void gp__activity_count_into(uint8_t *cells, uint32_t ncells, size_t stride,
                             uint32_t *overflow, bool in_fork_child) {
  /* In a fork handler the lock may be held by a thread that is gone; the
   * child has one thread, which needs none. */
  if (!in_fork_child)
    pthread_mutex_lock(&count_lock);
  count_set(cells, ncells, stride, overflow);
  if (!in_fork_child)
    pthread_mutex_unlock(&count_lock);
}

/* ------------------------------------------------------------------ */
/* Drop queries and attributes                                          */

/* See activity.h. */
int gp_activity_get_num_dropped_records(uint32_t context_id, uint32_t stream_id,
                                        size_t *dropped) {
  if (!dropped)
    return GP_EINVAL;
  if (context_id == 0) {
    *dropped = (size_t)atomic_exchange(&gp__act.drop_unread, 0);
    return 0;
  }
  uint64_t n = 0;
  pthread_mutex_lock(&gp__act.drop_lock);
  for (int i = 0; i < gp__act.num_drops; i++) {
    if (gp__act.drops[i].context_id == context_id &&
        (stream_id == 0 || gp__act.drops[i].stream_id == stream_id)) {
      n += gp__act.drops[i].unread;
      gp__act.drops[i].unread = 0;
    }
  }
  pthread_mutex_unlock(&gp__act.drop_lock);
  *dropped = (size_t)n;
  return 0;
}

/* See activity.h. */
int gp_activity_get_drop_stats(gp_activity_drop_stats *stats) {
  if (!stats)
    return GP_EINVAL;
  for (int k = 0; k < GP_ACTIVITY_KIND_COUNT; k++)
    for (int r = 0; r < GP_DROP_REASON_COUNT; r++)
      stats->count[k][r] = atomic_load(&gp__act.drop_stats[k][r]);
  stats->total = atomic_load(&gp__act.drop_total);
  return 0;
}

/* The device-side buffer attributes (GP_ACTIVITY_ATTR_DEVICE_*), for the
 * backends that pass them on; 0: the driver's default. Under
 * gp__act.lock. */
static size_t device_attr[3];
#define DEVICE_ATTR(attr)                                                      \
  device_attr[(attr)-GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE]

/* See activity.h. */
int gp_activity_get_attribute(gp_activity_attr attr, size_t *value_size,
                              void *value) {
  if (!value_size || !value || attr < 0 || attr >= GP_ACTIVITY_ATTR_COUNT)
    return GP_EINVAL;
  if (*value_size < sizeof(size_t)) {
    *value_size = sizeof(size_t);
    return GP_ESIZE;
  }
  size_t v;
  pthread_mutex_lock(&gp__act.lock);
  switch (attr) {
  case GP_ACTIVITY_ATTR_BUFFER_SIZE:
    v = gp__act.buffer_size;
    break;
  case GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT:
    v = gp__act.pool_limit;
    break;
  case GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS:
    v = gp__act.flush_period_ms;
    break;
  default:
    v = DEVICE_ATTR(attr);
    break;
  }
  pthread_mutex_unlock(&gp__act.lock);
  memcpy(value, &v, sizeof(v));
  *value_size = sizeof(size_t);
  return 0;
}

/* See activity.h. */
int gp_activity_set_attribute(gp_activity_attr attr, size_t *value_size,
                              const void *value) {
  if (!value_size || !value || attr < 0 || attr >= GP_ACTIVITY_ATTR_COUNT)
    return GP_EINVAL;
  if (*value_size < sizeof(size_t)) {
    *value_size = sizeof(size_t);
    return GP_ESIZE;
  }
  size_t v;
  memcpy(&v, value, sizeof(v));
  switch (attr) {
  case GP_ACTIVITY_ATTR_BUFFER_SIZE:
    if (v < MIN_BUFFER_SIZE || v > MAX_BUFFER_SIZE)
      return GP_ERANGE;
    break;
  case GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT:
    if (v == 0)
      return GP_ERANGE;
    break;
  case GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS:
    if (v > 3600000)
      return GP_ERANGE;
    break;
  case GP_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
    if (v > 65536)
      return GP_ERANGE;
    break;
  default: /* the device buffer sizes */
    if (v && (v < (64u << 10) || v > (1u << 30)))
      return GP_ERANGE;
    break;
  }
  pthread_mutex_lock(&gp__act.lock);
  switch (attr) {
  case GP_ACTIVITY_ATTR_BUFFER_SIZE:
    gp__act.buffer_size = v;
    break;
  case GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT:
    atomic_store(&gp__act.pool_limit, v);
    break;
  case GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS:
    gp__act.flush_period_ms = v;
    pthread_cond_signal(&gp__act.work);
    break;
  default:
    DEVICE_ATTR(attr) = v;
    break;
  }
  pthread_mutex_unlock(&gp__act.lock);
  *value_size = sizeof(size_t);
  return 0;
}

/* ------------------------------------------------------------------ */
/* fork()                                                               */

static void atfork_prepare(void) {
  pthread_mutex_lock(&gp__act.lock);
}

static void atfork_parent(void) {
  pthread_mutex_unlock(&gp__act.lock);
}

/*
 * In the child only the forking thread exists and the collector is gone.
 * Records written before the fork belong to the parent, which delivers
 * them; the child forgets them (they are not drops) and starts afresh with
 * the same callbacks and settings.
 */
static void atfork_child(void) {
  pthread_mutex_init(&gp__act.lock, NULL);
  gp__observers_after_fork();
  pthread_cond_init(&gp__act.work, NULL);
  pthread_cond_init(&gp__act.done, NULL);
  pthread_mutex_init(&gp__act.drop_lock, NULL);
  /* The parent's count cells are not ours (shared memory stays shared);
   * a session's fork handler may have given the child cells of its own
   * already (fork handlers run in the order they were registered). */
  pthread_mutex_init(&count_lock, NULL);
  if (count_cells && count_pid != getpid())
    count_set(NULL, 0, 0, NULL);
  gp__area_after_fork();
  gp__act.collector_running = false;
  gp__act.stop = false;
  gp__act.q_head = gp__act.q_tail = NULL;
  gp__act.free_list = NULL;
  atomic_store(&gp__act.free_count, 0);
  gp__act.enqueued_seq = gp__act.completed_seq = 0;
  size_t held = 0;
  for (slot *s = atomic_load(&gp__slots); s; s = atomic_load(&s->next)) {
    pthread_mutex_init(&s->lock, NULL);
    atomic_store(&s->submitting, 0); /* no thread but ours is submitting */
    memset(s->drop_pend, 0, sizeof(s->drop_pend));
    s->has_drops = false;
    if (s == gp__tls.slot && s->buf && gp__area_foreign(s->buf)) {
      /* Shared with the parent, who goes on writing it: not ours. */
      s->buf = NULL;
      s->cap = 0;
      gp__slot_set_cur(s, NULL);
      s->taken = 0;
    } else if (s == gp__tls.slot) {
      s->taken = gp__slot_off(s, s->cur); /* the parent's records */
      if (s->buf)
        held++;
    } else {
      s->buf = NULL;
      s->cap = 0;
      gp__slot_set_cur(s, NULL);
      s->taken = 0;
      atomic_store(&s->live, 0);
    }
    s->open = s->cur;
    gp__slot_limit(s);
  }
  atomic_store(&gp__act.outstanding, held);
  /* The collector is restarted lazily, by the next hand-over or flush:
   * creating threads here, in a fork handler, is not safe. */
}
