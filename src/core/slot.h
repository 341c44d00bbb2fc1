/*
 * slot.h - a producing thread's slot (its current activity buffer) and the
 * fast path of writing a record into it, inlined into every producer:
 * reserve is a bump of the slot's open end checked against one limit,
 * commit a release store of the published end and an increment of the thread's
 * own count. No lock, no call, no atomic read-modify-write; everything
 * else (no slot or buffer yet, a full buffer, drop records to write, a
 * records-per-buffer budget) is reserve's out-of-line slow path
 * (activity.c). Included by core.h; the slot's other users are
 * activity.c and collector.c (activityInt.h).
 */
#ifndef GPUPERF_SLOT_H
#define GPUPERF_SLOT_H

#include <pthread.h>
#include <stdatomic.h>

typedef struct gp__drop_pending {
  uint64_t count, first, last;
} gp__drop_pending;

/* One thread's buffer state. The fast path's positions are pointers
 * into buf (NULL while there is none), so that reserve and commit do no
 * offset arithmetic; the slow paths turn them into offsets with
 * gp__slot_off(). */
typedef struct gp__slot {
  /* Fast path fields, the owner's but for cur: */
  /* The end of the last committed record, published: the owner stores it
   * with release (gp__slot_set_cur) and reads it plainly, others load it
   * with acquire (gp__slot_head). */
  uint8_t *cur;
  /* The fast path reserves only while the record ends at or before
   * limit: buf + cap, or NULL (always the slow path) while there is no
   * buffer, drop records wait to be written, or the buffer has a budget
   * of records (records_left, counted by the slow path).
   * gp__slot_limit() keeps it so. */
  uint8_t *limit;
  uint8_t *open;             /* end of the open reservation; cur when
                                none is open */
  _Atomic(uint64_t *) count; /* committed records are counted here: word 0
                                of the thread's cell (core.h) */
  uint8_t *buf;
  uint32_t cap;          /* usable bytes of buf */
  uint32_t records_left; /* max_num_records budget, UINT32_MAX = none */
  bool has_drops;        /* drop_pend holds something to report */
  uint64_t own_cell[5];  /* count's cell unless a shared one was given */
  uint32_t index;        /* order of creation, from 0 */
  gp_buffer_complete_fn buf_complete; /* where buf goes back to */
  size_t buf_size;                    /* size the request callback gave */
  /* Shared: */
  uint32_t taken;       /* records before this were delivered (lock) */
  pthread_mutex_t lock; /* taken by the owner to swap buffers */
  _Atomic int live;     /* owned by a running thread */
  uint32_t tid;
  _Atomic uint64_t submitting; /* gp__activity_submitting(): 0 or a start */
  gp__drop_pending drop_pend[GP_ACTIVITY_KIND_COUNT][GP_DROP_REASON_COUNT];
  struct gp__slot *_Atomic next;
} gp__slot;

/* The calling thread's slot (gp__tls.slot): &gp__slot_none, never NULL, until
 * it has one of its own. gp__slot_none has no buffer and a NULL limit, so the
 * fast path needs no test of its own for it; nothing writes it. */
extern gp__slot gp__slot_none;

/* The calling thread's slot, or NULL if it has none yet. */
static inline gp__slot *gp__slot_mine(void) {
  gp__slot *s = gp__tls.slot;
  return s == &gp__slot_none ? NULL : s;
}

/* The offset in s->buf of a position p (NULL: 0). */
static inline uint32_t gp__slot_off(const gp__slot *s, const uint8_t *p) {
  return p ? (uint32_t)(p - s->buf) : 0;
}

/* The published end of committed records as an offset in s->buf (under
 * s->lock, or by the owner). */
static inline uint32_t gp__slot_head(gp__slot *s) {
  return gp__slot_off(s, __atomic_load_n(&s->cur, __ATOMIC_ACQUIRE));
}

/* Publishes p as the end of committed records (owner, or under s->lock
 * while the owner produces nothing). */
static inline void gp__slot_set_cur(gp__slot *s, uint8_t *p) {
  __atomic_store_n(&s->cur, p, __ATOMIC_RELEASE);
}

/* Sets s->limit from the fields it stands for (owner, or while the owner
 * produces nothing). */
static inline void gp__slot_limit(gp__slot *s) {
  s->limit = (s->buf && !s->has_drops && s->records_left == UINT32_MAX)
                 ? s->buf + s->cap
                 : NULL;
}

/* The slow path of gp__activity_reserve(). */
void *gp__activity_reserve_slow(uint32_t kind, uint32_t size,
                                uint32_t context_id, uint32_t stream_id);

/*
 * Reserves size bytes (a multiple of 8, header included) for a record of
 * kind in the calling thread's buffer and fills in the header. Returns NULL
 * if the record is dropped (counted by kind and reason, against context_id
 * and stream_id). At most one reservation per thread may be open; finish it
 * with gp__activity_commit(). Lock-free and allocation-free unless the
 * thread's buffer is full.
 */
static inline __attribute__((always_inline)) void *
gp__activity_reserve(uint32_t kind, uint32_t size, uint32_t context_id,
                     uint32_t stream_id) {
  gp__slot *s = gp__tls.slot;
  /* As integers: no pointer arithmetic on a NULL cur (no buffer). */
  uintptr_t end = (uintptr_t)s->cur + size;
  if (GP_LIKELY(end <= (uintptr_t)s->limit)) {
    gp_activity *rec = (gp_activity *)s->cur;
    rec->kind = kind;
    rec->size = size;
    s->open = (uint8_t *)end;
    return rec;
  }
  return gp__activity_reserve_slow(kind, size, context_id, stream_id);
}

/* Publishes the record reserved last on this thread. */
static inline __attribute__((always_inline)) void
gp__activity_commit(void *record) {
  gp__slot *s = gp__tls.slot;
  (void)record;
  /* Only this thread writes its count (no locked instruction); a reader
   * in another process reads it after our death. */
  (*atomic_load_explicit(&s->count, memory_order_relaxed))++;
  gp__slot_set_cur(s, s->open);
}

/* The same two, out of line: for the table that libraries outside
 * libgpuperf.so reach the core through (backend.h). */
void *gp__activity_reserve_out(uint32_t kind, uint32_t size,
                               uint32_t context_id, uint32_t stream_id);
void gp__activity_commit_out(void *record);

#endif /* GPUPERF_SLOT_H */
