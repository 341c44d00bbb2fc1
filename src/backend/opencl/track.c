/*
 * track.c - enqueues: which commands are tracked, what they wait on, and
 * what the program's events stand for.
 *
 * The program's events map to the correlation ids of the commands they
 * complete (gp__ocl.events, under gp__ocl.lock), so a wait list becomes
 * the wait ids of a record. Markers and barriers write no record of their
 * own: their events stand for the commands they waited on, which is what
 * a command waiting on them inherits; one without a wait list waits for
 * everything before it on its queue (see gp__ocl_queue). An event's entry
 * is forgotten when the program drops its last reference, or when a new
 * event takes its address. The commands themselves are followed to their
 * records in pending.c.
 */
#include <stdlib.h>
#include <string.h>

#include "track.h"

static _Atomic size_t events_live; /* entries in gp__ocl.events */

/* ------------------------------------------------------------------ */
/* Dependencies                                                         */

/* Appends the ids behind the wait list to out[n..cap), without repeats.
 * Caller holds gp__ocl.lock. */
static uint32_t resolve_waits(cl_uint num, const cl_event *list, uint64_t *out,
                              uint32_t n, uint32_t cap) {
  for (cl_uint i = 0; list && i < num; i++) {
    const gp__ocl_evinfo *info = gp__ptrmap_get(&gp__ocl.events, list[i]);
    if (!info)
      continue; /* a user event, or one we never saw made */
    for (uint32_t j = 0; j < info->num_ids; j++) {
      uint64_t id = info->ids[j];
      uint32_t k;
      for (k = 0; k < n && out[k] != id; k++)
        ;
      if (k == n && n < cap)
        out[n++] = id;
    }
  }
  return n;
}

static uint32_t add_ids(const uint64_t *ids, uint32_t count, uint64_t *out,
                        uint32_t n, uint32_t cap) {
  for (uint32_t i = 0; i < count; i++) {
    uint32_t k;
    for (k = 0; k < n && out[k] != ids[i]; k++)
      ;
    if (k == n && n < cap)
      out[n++] = ids[i];
  }
  return n;
}

/* Adds what "every command enqueued so far on q" stands for. */
static uint32_t add_previous(gp__ocl_queue *q, uint64_t *out, uint32_t n,
                             uint32_t cap) {
  if (!q->out_of_order) {
    uint64_t last = atomic_load_explicit(&q->last, memory_order_relaxed);
    return last ? add_ids(&last, 1, out, n, cap) : n;
  }
  if (q->num_recent > 0)
    return add_ids(q->recent, q->num_recent, out, n, cap);
  return add_ids(q->frontier, q->num_frontier, out, n, cap);
}

/* Gives the program's event ev the meaning info; frees what the address
 * meant before. Caller holds gp__ocl.lock. Takes ownership of info. */
static void event_set_locked(cl_event ev, gp__ocl_evinfo *info) {
  void *old = NULL;
  if (gp__ptrmap_put(&gp__ocl.events, ev, info, &old) != 0) {
    free(info); /* out of memory: this event's dependents lose the edge */
    return;
  }
  if (old) {
    gp__ocl_evinfo *o = old;
    if (o->entry)
      o->entry->evinfo = NULL;
    free(o);
  } else {
    atomic_fetch_add_explicit(&events_live, 1, memory_order_relaxed);
  }
}

static gp__ocl_evinfo *evinfo_new(const gp__ocl_queue *q, const uint64_t *ids,
                                  uint32_t n) {
  gp__ocl_evinfo *info = malloc(sizeof(*info) + 8u * n);
  if (!info)
    return NULL;
  info->entry = NULL;
  info->device_id = q->device_id;
  info->context_id = q->context_id;
  info->stream_id = q->stream_id;
  info->num_ids = n;
  memcpy(info->ids, ids, 8u * n);
  return info;
}

/* ------------------------------------------------------------------ */
/* Enqueues                                                             */

/* See oclInt.h. */
void gp__ocl_enqueue_begin(gp__ocl_enqueue *en, uint32_t id, cl_command_queue q,
                           cl_event *app_event, uint32_t kind) {
  gp__ocl_enqueue_begin_inline(en, id, q, app_event, kind);
}

/* See track.h. */
void gp__ocl_track_passthrough(gp__ocl_enqueue *en, cl_uint num_waits,
                               const cl_event *wait_list, cl_event ev,
                               bool barrier) {
  uint64_t ids[GP_OCL_MAX_WAITS];
  pthread_mutex_lock(&gp__ocl.lock);
  uint32_t n = resolve_waits(num_waits, wait_list, ids, 0, GP_OCL_MAX_WAITS);
  /* With a wait list, a marker or barrier waits for that list only; with
   * none, for everything before it (in-order queues: always). */
  if (num_waits == 0 || !en->q->out_of_order)
    n = add_previous(en->q, ids, n, GP_OCL_MAX_WAITS);
  if (barrier && en->q->out_of_order) {
    uint32_t keep = n < GP_OCL_RECENT ? n : GP_OCL_RECENT;
    memcpy(en->q->frontier, ids + (n - keep), 8u * keep);
    en->q->num_frontier = keep;
    en->q->num_recent = 0;
  }
  if (ev) {
    gp__ocl_evinfo *info = evinfo_new(en->q, ids, n);
    if (info)
      event_set_locked(ev, info);
  }
  pthread_mutex_unlock(&gp__ocl.lock);
}

/* See track.h. */
void gp__ocl_track_command(gp__ocl_enqueue *en, const gp__ocl_cmd *cmd,
                           cl_uint num_waits, const cl_event *wait_list,
                           cl_event ev, bool internal, uint64_t end,
                           uint64_t raw_after) {
  uint64_t ids[GP_OCL_MAX_WAITS];
  gp__ocl_queue *q = en->q;
  /* Our own event on an in-order queue: as gp__ocl_track_deferred, but the
   * wait list needs the event table. */
  bool deferred = internal && !q->out_of_order;
  bool locked = !deferred || (num_waits > 0 && wait_list);
  if (locked)
    pthread_mutex_lock(&gp__ocl.lock);
  uint32_t n =
      locked ? resolve_waits(num_waits, wait_list, ids, 0, GP_OCL_MAX_WAITS)
             : 0;
  gp__ocl_entry *e = gp__ocl_entry_new(n);
  gp__ocl_evinfo *info = internal ? NULL : evinfo_new(q, &en->call.corr, 1);
  if (!e) {
    if (locked)
      pthread_mutex_unlock(&gp__ocl.lock);
    free(info);
    if (internal)
      GP_CL_REAL(clReleaseEvent)(ev);
    return; /* out of memory: the command goes unrecorded */
  }
  e->internal = internal;
  e->deferred = deferred;
  gp__ocl_entry_fill(e, en, cmd, ev, end, raw_after);
  e->num_waits = n;
  if (n)
    memcpy(e->waits, ids, 8u * n);
  if (!deferred) {
    /* Pending before anyone can find it through the event. */
    gp__ocl_entry_link(e);
    if (info) {
      info->entry = e;
      e->evinfo = info;
      event_set_locked(ev, info);
    }
  }
  gp__ocl_note_recent(q, e->corr);
  if (locked)
    pthread_mutex_unlock(&gp__ocl.lock);
  if (deferred)
    gp__ocl_entry_defer(e, q, &en->anchor);
  else
    gp__ocl_entry_watch(e);
}

/* See oclInt.h. */
void gp__ocl_enqueue_end(gp__ocl_enqueue *en, cl_int rc, const gp__ocl_cmd *cmd,
                         cl_uint num_waits, const cl_event *wait_list,
                         cl_event *app_event, bool barrier) {
  gp__ocl_enqueue_end_inline(en, rc, cmd, num_waits, wait_list, app_event,
                             barrier);
}

/* ------------------------------------------------------------------ */
/* The program's events                                                 */

/* See oclInt.h. */
uint64_t gp__ocl_event_corr(cl_event ev) {
  if (atomic_load_explicit(&events_live, memory_order_relaxed) == 0)
    return 0;
  pthread_mutex_lock(&gp__ocl.lock);
  const gp__ocl_evinfo *info = gp__ptrmap_get(&gp__ocl.events, ev);
  uint64_t id = info && info->num_ids > 0 ? info->ids[0] : 0;
  pthread_mutex_unlock(&gp__ocl.lock);
  return id;
}

static cl_int event_status(cl_event ev) {
  cl_int st = CL_QUEUED;
  if (GP_CL_REAL(clGetEventInfo)(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                 sizeof(st), &st, NULL) != CL_SUCCESS)
    return CL_QUEUED;
  return st;
}

/* Retires the pending command of the program's event ev if it is done
 * (status known); the program holds ev, so it may be asked. */
static void retire_if_done(cl_event ev) {
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_evinfo *info = gp__ptrmap_get(&gp__ocl.events, ev);
  gp__ocl_entry *e = info ? info->entry : NULL;
  if (e)
    gp__ocl_entry_hold(e); /* keep it while we ask */
  pthread_mutex_unlock(&gp__ocl.lock);
  if (!e)
    return;
  cl_int st = event_status(ev);
  if ((st == CL_COMPLETE || st < 0) && gp__ocl_retire(e, false))
    gp__ocl_finish(e, st, true);
  gp__ocl_entry_drop(e);
}

/* See oclInt.h. */
void gp__ocl_reconcile_events(cl_uint n, const cl_event *list) {
  if (atomic_load_explicit(&events_live, memory_order_relaxed) == 0 || !list)
    return;
  for (cl_uint i = 0; i < n; i++)
    retire_if_done(list[i]);
}

/* See oclInt.h. */
void gp__ocl_event_releasing(cl_event ev) {
  if (atomic_load_explicit(&events_live, memory_order_relaxed) == 0)
    return;
  retire_if_done(ev);
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_evinfo *info = gp__ptrmap_get(&gp__ocl.events, ev);
  bool idle = info && !info->entry;
  pthread_mutex_unlock(&gp__ocl.lock);
  if (!idle)
    return;
  /* Done with the command; if this is the last reference, the address
   * will mean something else soon. */
  cl_uint refs = 0;
  if (GP_CL_REAL(clGetEventInfo)(ev, CL_EVENT_REFERENCE_COUNT, sizeof(refs),
                                 &refs, NULL) != CL_SUCCESS ||
      refs != 1)
    return;
  gp__ocl_event_forget(ev);
}

/* See oclInt.h. */
void gp__ocl_event_forget(cl_event ev) {
  if (atomic_load_explicit(&events_live, memory_order_relaxed) == 0)
    return;
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_evinfo *info = gp__ptrmap_get(&gp__ocl.events, ev);
  if (info && !info->entry) {
    gp__ptrmap_del(&gp__ocl.events, ev);
    atomic_fetch_sub_explicit(&events_live, 1, memory_order_relaxed);
    free(info);
  }
  pthread_mutex_unlock(&gp__ocl.lock);
}
