/*
 * slot.h - a producing thread's slot (its current activity buffer) and the
 * fast path of writing a record into it, inlined into every producer:
 * reserve is a bump of the slot's private head checked against one limit,
 * commit a store of the published head and an increment of the thread's
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

/* One thread's buffer state. */
typedef struct gp__slot {
  /* Owner-only fast path fields. */
  uint8_t *buf;
  uint32_t cap;        /* usable bytes of buf */
  uint32_t head_local; /* end of the last committed record */
  /* The fast path reserves only while the record ends at or before
   * limit: cap, or 0 (always the slow path) while there is no buffer,
   * drop records wait to be written, or the buffer has a budget of
   * records (records_left, counted by the slow path). gp__slot_limit()
   * keeps it so. */
  uint32_t limit;
  uint32_t open;             /* end of the open reservation; head_local
                                when none is open */
  uint32_t records_left;     /* max_num_records budget, UINT32_MAX = none */
  bool has_drops;            /* drop_pend holds something to report */
  _Atomic(uint64_t *) count; /* committed records are counted here: word 0
                                of the thread's cell (core.h) */
  uint64_t own_cell[5];      /* ... unless a shared cell was given */
  uint32_t index;            /* order of creation, from 0 */
  gp_buffer_complete_fn buf_complete; /* where buf goes back to */
  size_t buf_size;                    /* size the request callback gave */
  /* Shared: */
  _Atomic uint32_t head; /* published end of committed records */
  uint32_t taken;        /* records before this were delivered (lock) */
  pthread_mutex_t lock;  /* taken by the owner to swap buffers */
  _Atomic int live;      /* owned by a running thread */
  uint32_t tid;
  _Atomic uint64_t submitting; /* gp__activity_submitting(): 0 or a start */
  gp__drop_pending drop_pend[GP_ACTIVITY_KIND_COUNT][GP_DROP_REASON_COUNT];
  struct gp__slot *_Atomic next;
} gp__slot;

extern GP_TLS gp__slot *gp__tls_slot;

/* Sets s->limit from the fields it stands for (owner, or while the owner
 * produces nothing). */
static inline void gp__slot_limit(gp__slot *s) {
  s->limit =
      (s->buf && !s->has_drops && s->records_left == UINT32_MAX) ? s->cap : 0;
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
  gp__slot *s = gp__tls_slot;
  if (GP_LIKELY(s != NULL)) {
    uint32_t h = s->head_local;
    uint64_t end = (uint64_t)h + size; /* 64 bits: no size wraps */
    if (GP_LIKELY(end <= s->limit)) {
      gp_activity *rec = (gp_activity *)(s->buf + h);
      rec->kind = kind;
      rec->size = size;
      s->open = (uint32_t)end;
      return rec;
    }
  }
  return gp__activity_reserve_slow(kind, size, context_id, stream_id);
}

/* Publishes the record reserved last on this thread. */
static inline __attribute__((always_inline)) void
gp__activity_commit(void *record) {
  gp__slot *s = gp__tls_slot;
  (void)record;
  uint32_t end = s->open;
  s->head_local = end;
  /* Only this thread writes its count (no locked instruction); a reader
   * in another process reads it after our death. */
  (*atomic_load_explicit(&s->count, memory_order_relaxed))++;
  atomic_store_explicit(&s->head, end, memory_order_release);
}

/* The same two, out of line: for the table that libraries outside
 * libgpuperf.so reach the core through (backend.h). */
void *gp__activity_reserve_out(uint32_t kind, uint32_t size,
                               uint32_t context_id, uint32_t stream_id);
void gp__activity_commit_out(void *record);

#endif /* GPUPERF_SLOT_H */
