/*
 * activityInt.h - private state shared by the activity modules:
 * activity.c (enabling, per-thread slots, producing, drops, attributes,
 * fork) and collector.c (buffers, the collector thread, flush).
 */
#ifndef GPUPERF_ACTIVITY_INT_H
#define GPUPERF_ACTIVITY_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "core.h"

/* The slot (slot.h) by its short names, in the activity modules. */
typedef gp__slot slot;
typedef gp__drop_pending drop_pending;

#define MIN_BUFFER_SIZE 1024u
#define MAX_BUFFER_SIZE (1u << 30)
#define DEFAULT_BUFFER_SIZE (1u << 20)
#define DEFAULT_POOL_LIMIT 64u
#define MAX_HOOKS 16
#define MAX_OBSERVERS 8
#define MAX_DROP_ENTRIES 256

/* The kinds that can be set per context. */
#define CONTEXT_KINDS                                                          \
  ((1ull << GP_ACTIVITY_KIND_KERNEL) | (1ull << GP_ACTIVITY_KIND_MEMCPY) |     \
   (1ull << GP_ACTIVITY_KIND_MEMSET) |                                         \
   (1ull << GP_ACTIVITY_KIND_SYNCHRONIZATION) |                                \
   (1ull << GP_ACTIVITY_KIND_COUNTER) |                                        \
   (1ull << GP_ACTIVITY_KIND_RENDER_STAGE))

/* A buffer waiting for the collector. */
typedef struct pending {
  uint8_t *buf;
  size_t size;   /* as the request callback gave it */
  size_t offset; /* records start here (already-delivered prefix) */
  size_t valid;  /* records end here */
  gp_buffer_complete_fn complete;
  size_t max_records; /* free list: as the request callback gave it */
  uint64_t seq;
  /* A flush's copy of a thread's records from a buffer of the area: the
   * thread's cell, its words 1 and 2 then, and its word 3 once written
   * (core.h, gp__activity_share_buffers). src_cell NULL: none. */
  uint64_t *src_cell;
  uint64_t src_index, src_buf, src_base, src_to;
  struct pending *next;
} pending;

typedef struct drop_entry {
  uint32_t context_id, stream_id;
  uint64_t unread;
} drop_entry;

typedef struct gp__activity_state {
  pthread_mutex_t lock; /* everything below that is not atomic */
  pthread_cond_t work;  /* collector: something to do */
  pthread_cond_t done;  /* flushers: completed_seq moved */
  gp_buffer_request_fn request;
  gp_buffer_complete_fn complete;
  size_t buffer_size, flush_period_ms;
  _Atomic size_t pool_limit;
  _Atomic size_t outstanding; /* buffers held by us: gp__slots, queue, free */
  pending *q_head, *q_tail;
  uint64_t enqueued_seq, completed_seq;
  pthread_t collector;
  bool collector_running, stop;
  bool collector_ready; /* the collector thread has started */
  slot *collector_slot; /* the collector's own slot (its OVERHEAD records) */
  bool give_back_own;   /* finalize: the collector gives its slot back */
  pthread_t collector_tid_self;
  /* Empty buffers kept for reuse (from exited threads). */
  pending *free_list;
  _Atomic size_t free_count;
  /* Hooks and observers: fixed arrays, changed under lock. */
  struct {
    gp__flush_hook fn;
    void *user;
  } hooks[MAX_HOOKS];
  int num_hooks;
  struct {
    gp__buffer_observer fn;
    void *user;
  } observers[MAX_OBSERVERS];
  _Atomic int num_observers;
  /* Per-context overrides. */
  struct {
    uint32_t context_id;
    uint64_t set_mask, on_mask;
  } overrides[64];
  _Atomic int num_overrides;
  /* Drops. */
  _Atomic uint64_t drop_stats[GP_ACTIVITY_KIND_COUNT][GP_DROP_REASON_COUNT];
  _Atomic uint64_t drop_total;
  _Atomic uint64_t drop_unread; /* for (0, 0) */
  pthread_mutex_t drop_lock;
  drop_entry drops[MAX_DROP_ENTRIES];
  int num_drops;
  _Atomic uint64_t correlation;
} gp__activity_state;

extern gp__activity_state gp__act;
extern _Atomic uint64_t gp__enabled_mask;

extern slot *_Atomic gp__slots;

/* activity.c */
void gp__activity_init(void);
void gp__slot_release(slot *s);

/* The words of a thread's cell (core.h): stores that another process may
 * read after this one died, in program order. */
static inline uint64_t *gp__slot_cell(slot *s) {
  return atomic_load_explicit(&s->count, memory_order_relaxed);
}
static inline void gp__cell_set(uint64_t *cell, int word, uint64_t v) {
  __atomic_store_n(&cell[word], v, __ATOMIC_RELEASE);
}

/* area.c */
/* The offset of buf in the buffer area this process gives its buffers
 * from, + 1; 0 if it is not in it (or there is none). */
uint64_t gp__area_word(const uint8_t *buf);
/* A buffer of size bytes from this process's area, or NULL (none, or
 * none free). */
uint8_t *gp__area_alloc(size_t size);
/* Gives buf back to its area (not when the area is another process's);
 * false if buf lies in no area. */
bool gp__area_release(uint8_t *buf);
/* Whether buf lies in an area ever given. */
bool gp__area_holds(const uint8_t *buf);
/* The delivery record of this process's area, or NULL. */
gp__delivery *gp__area_delivery(void);
/* The queued entry (core.h) of the buffer at area offset word - 1 of
 * this process's area, or NULL. */
uint64_t *gp__area_queued(uint64_t word);

/* A thread hands over buf (its cell's words 1 and 2: word and base), with
 * committed records in bytes [from, to): noted in the area's queued
 * entries (core.h) before the cell lets go of it. */
void gp__area_queued_note(uint64_t word, uint64_t base, uint64_t from,
                          uint64_t to);
/* In a fork child: whether buf lies in an area of another process (the
 * parent's), which the child must not write. */
bool gp__area_foreign(const uint8_t *buf);
/* In a fork child: stops using the parent's area. */
void gp__area_after_fork(void);

/* collector.c */
uint8_t *gp__buffer_get(size_t *size, size_t *max_records,
                        gp_buffer_complete_fn *complete, int *reason,
                        bool bypass_limit);
uint64_t gp__buffer_enqueue(uint8_t *buf, size_t size, size_t offset,
                            size_t valid, gp_buffer_complete_fn complete);
/* The same for a flush's copy of slot s's records up to `to` (s->lock
 * held): once written, the thread's cell says so. */
uint64_t gp__buffer_enqueue_copy(uint8_t *buf, size_t size, size_t valid,
                                 gp_buffer_complete_fn complete, slot *s,
                                 uint32_t to);
void gp__buffer_keep(uint8_t *buf, size_t size, gp_buffer_complete_fn comp);
void gp__buffer_prefault(uint8_t *buf, size_t size);
bool gp__collect_slot(slot *s);
/* Collects every slot (gp__collect_slot()); false if one kept records
 * for want of a buffer. */
bool gp__collect_slots(void);
int gp__collector_start_locked(void);

/* collector.c: in a fork child, the observers' lock starts unlocked (the
 * collector that may have held it is gone). */
void gp__observers_after_fork(void);

#endif /* GPUPERF_ACTIVITY_INT_H */
