/*
 * parse_drm.c - the kernel's dma_fence ftrace events (FtraceEvent fields
 * 414..418), imported as Perfetto's DrmTracker imports them (v58.2,
 * src/trace_processor/importers/ftrace/drm_tracker.cc):
 *
 *   - A fence timeline is a fence context. Its track, made on the first
 *     event of the context: type 'drm_fence', name "fence-<timeline>-<ctx>",
 *     dimensions name = <timeline>, context = <ctx>. Timelines named
 *     "unbound" (fence arrays and chains) are ignored.
 *   - The timeline keeps a queue of pending seqnos. dma_fence_init (while
 *     the timeline has never had a dma_fence_emit) and dma_fence_emit push
 *     the seqno; when the queue was empty, a slice "fence" with the arg
 *     "fence seqno" begins. The first dma_fence_emit of a timeline ends the
 *     open slice and empties the queue first: init is then ignored there.
 *   - dma_fence_signaled with a seqno at least the queue's front pops the
 *     front and ends the slice; the next pending fence's slice begins at
 *     the same time. An older seqno, or an empty queue, is ignored.
 *   - Every event's task (its pid) is a thread, made without a process if
 *     unknown, as Perfetto's raw-table ingestion makes it.
 *   - dma_fence_wait_start begins "dma_fence_wait" (args "fence context",
 *     "fence seqno") on the waiting thread's track (type 'thread_execution',
 *     dimension utid; the thread made from the event's pid without a
 *     process if unknown); dma_fence_wait_end ends it.
 *
 * Costs: one hash lookup per event, the queue is a vector with a moving
 * head (amortised O(1)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

/* One DmaFence*FtraceEvent: the fields Perfetto reads. */
typedef struct fence_ev {
  uint32_t context, seqno;
  const uint8_t *timeline;
  size_t timeline_len;
} fence_ev;

static int decode(gp__tp_importer *imp, const gp__pb_reader *parent,
                  const gp__pb_field *pf, fence_ev *e) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  memset(e, 0, sizeof(*e));
  e->timeline = (const uint8_t *)"";
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == GP_PB_DMA_FENCE_CONTEXT && f.wire_type == GP_PB_VARINT) {
      e->context = (uint32_t)f.value;
    } else if (f.id == GP_PB_DMA_FENCE_SEQNO && f.wire_type == GP_PB_VARINT) {
      e->seqno = (uint32_t)f.value;
    } else if (f.id == GP_PB_DMA_FENCE_TIMELINE && f.wire_type == GP_PB_LEN) {
      e->timeline = f.data;
      e->timeline_len = f.size;
    }
  }
  return rc < 0 ? gp__tp_corrupt(imp, &r, "DmaFenceFtraceEvent") : 0;
}

/* The timeline of e's context, made (with its track) on first sight. */
static int timeline_get(gp__tp_importer *imp, uint32_t machine,
                        const fence_ev *e, gp__tp_fence_tl **out) {
  uint64_t k = (uint64_t)machine << 32 | e->context;
  uint64_t *slot = gp__tp_map_get(&imp->fence_by_ctx, k);
  if (slot) {
    *out = &imp->fences.v[*slot];
    return 0;
  }
  char name[300];
  int len = snprintf(name, sizeof(name), "fence-%.*s-%u",
                     (int)(e->timeline_len < 256 ? e->timeline_len : 256),
                     (const char *)e->timeline, e->context);
  uint32_t n, tl, k_name, k_ctx;
  int rc;
  if ((rc = gp__tp_intern(imp, name, (size_t)len, &n)) ||
      (rc = gp__tp_intern(imp, e->timeline, e->timeline_len, &tl)) ||
      (rc = key(imp, "name", &k_name)) || (rc = key(imp, "context", &k_ctx)))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_str(&dims, k_name, tl);
  gp__tp_argb_int(&dims, k_ctx, e->context);
  gp__tp_track_spec spec = {"drm_fence", n,  false, GP_TP_NONE, machine,   NULL,
                            -1,          -1, -1,    -1,         GP_TP_NONE};
  gp__tp_fence_tl t;
  memset(&t, 0, sizeof(t));
  if ((rc = gp__tp_track_intern(imp, &spec, &dims, &t.track, NULL)))
    return rc;
  if (!gp__tp_vec_push(&imp->fences, t) ||
      !gp__tp_map_put(&imp->fence_by_ctx, k, imp->fences.n - 1, NULL))
    return nomem(imp);
  *out = &imp->fences.v[imp->fences.n - 1];
  return 0;
}

static size_t pending(const gp__tp_fence_tl *t) {
  return t->q.n - t->head;
}

/* Begins the slice of the timeline's front fence. */
static int begin_front(gp__tp_importer *imp, int64_t ts,
                       const gp__tp_fence_tl *t) {
  uint32_t name, k_seq, set, slice;
  int rc;
  if ((rc = key(imp, "fence", &name)) || (rc = key(imp, "fence seqno", &k_seq)))
    return rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  gp__tp_argb_uint(&b, k_seq, t->q.v[t->head]);
  if (gp__tp_argset_commit(imp->db, &b, &set))
    return nomem(imp);
  return gp__tp_slice_begin(imp, ts, t->track, GP_TP_NONE, name, set, &slice);
}

static int push(gp__tp_importer *imp, int64_t ts, gp__tp_fence_tl *t,
                uint32_t seqno) {
  if (t->head > 64 && t->head * 2 > t->q.n) { /* drop the popped prefix */
    memmove(t->q.v, t->q.v + t->head, pending(t) * sizeof(*t->q.v));
    t->q.n -= t->head;
    t->head = 0;
  }
  if (!gp__tp_vec_push(&t->q, seqno))
    return nomem(imp);
  return pending(t) == 1 ? begin_front(imp, ts, t) : 0;
}

static int fence_event(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                       uint32_t field, const fence_ev *e) {
  if (e->timeline_len == 7 && memcmp(e->timeline, "unbound", 7) == 0)
    return 0;
  gp__tp_fence_tl *t;
  uint32_t out;
  int rc = timeline_get(imp, machine, e, &t);
  if (rc)
    return rc;
  switch (field) {
  case GP_PB_FTRACE_DMA_FENCE_INIT:
    return t->has_emit ? 0 : push(imp, ts, t, e->seqno);
  case GP_PB_FTRACE_DMA_FENCE_EMIT:
    if (!t->has_emit) {
      t->has_emit = true;
      if (pending(t)) {
        if ((rc = gp__tp_slice_end(imp, ts, t->track, &out)))
          return rc;
        t->q.n = t->head = 0;
      }
    }
    return push(imp, ts, t, e->seqno);
  default: /* signaled */
    if (!pending(t) || e->seqno < t->q.v[t->head])
      return 0;
    t->head++;
    if ((rc = gp__tp_slice_end(imp, ts, t->track, &out)))
      return rc;
    return pending(t) ? begin_front(imp, ts, t) : 0;
  }
}

/* See import.h. */
int gp__tp_ftrace_thread_track(gp__tp_importer *imp, uint32_t machine,
                               uint32_t pid, uint32_t *track) {
  uint32_t utid, k_utid;
  int rc;
  if ((rc = gp__tp_ftrace_thread(imp, machine, pid, &utid)) ||
      (rc = key(imp, "utid", &k_utid)))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_int(&dims, k_utid, utid);
  gp__tp_track_spec spec = {"thread_execution",
                            GP_TP_NONE,
                            false,
                            GP_TP_NONE,
                            machine,
                            NULL,
                            -1,
                            -1,
                            -1,
                            utid,
                            GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, &dims, track, NULL);
}

static int wait_event(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                      uint32_t pid, uint32_t field, const fence_ev *e) {
  uint32_t track, slice;
  int rc;
  if ((rc = gp__tp_ftrace_thread_track(imp, machine, pid, &track)))
    return rc;
  if (field == GP_PB_FTRACE_DMA_FENCE_WAIT_END)
    return gp__tp_slice_end(imp, ts, track, &slice);
  uint32_t name, k_ctx, k_seq, set;
  if ((rc = key(imp, "dma_fence_wait", &name)) ||
      (rc = key(imp, "fence context", &k_ctx)) ||
      (rc = key(imp, "fence seqno", &k_seq)))
    return rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  gp__tp_argb_uint(&b, k_ctx, e->context);
  gp__tp_argb_uint(&b, k_seq, e->seqno);
  if (gp__tp_argset_commit(imp->db, &b, &set))
    return nomem(imp);
  return gp__tp_slice_begin(imp, ts, track, GP_TP_NONE, name, set, &slice);
}

/* See import.h. */
int gp__tp_parse_dma_fence(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           uint32_t pid, const gp__pb_reader *parent,
                           const gp__pb_field *f) {
  fence_ev e;
  uint32_t utid;
  int rc = decode(imp, parent, f, &e);
  /* Perfetto files every ftrace event in its ftrace_event table under
   * the task's thread, made if new: the thread table gets it either way
   * (we keep no ftrace_event table). */
  if (rc || (rc = gp__tp_ftrace_thread(imp, machine, pid, &utid)))
    return rc;
  if (f->id == GP_PB_FTRACE_DMA_FENCE_WAIT_START ||
      f->id == GP_PB_FTRACE_DMA_FENCE_WAIT_END)
    return wait_event(imp, ts, machine, pid, f->id, &e);
  return fence_event(imp, ts, machine, f->id, &e);
}

/* See import.h. */
void gp__tp_dma_fence_free(gp__tp_importer *imp) {
  for (size_t i = 0; i < imp->fences.n; i++)
    gp__tp_vec_free(&imp->fences.v[i].q);
  gp__tp_vec_free(&imp->fences);
  gp__tp_map_free(&imp->fence_by_ctx);
}
