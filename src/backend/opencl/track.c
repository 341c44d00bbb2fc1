/*
 * track.c - commands in flight, from their enqueue to their record.
 *
 * Each tracked command gets an entry. The entry waits on the command's
 * event: the program's own if it asked for one, else one we asked the
 * driver for (internal), which we release once its times are read. We
 * never retain the program's events, so the reference counts it sees are
 * the ones it would see without us. A CL_COMPLETE callback on the event
 * (clSetEventCallback) reads the four profiling times, maps them to the
 * trace clock and writes the KERNEL, MEMCPY or MEMSET record; nothing in
 * the program's own calls waits for that.
 *
 * Who writes the record. An entry is "retired" once, under gp__ocl.lock,
 * by whoever will write its record: the callback, usually; the program's
 * clWaitForEvents or clReleaseEvent when they show the command finished
 * or failed first (PoCL never runs CL_COMPLETE callbacks of failed
 * commands); a flush, for internal events it can ask about itself; or a
 * forced flush, which waits up to a second for commands in flight and
 * writes what remains with the times it has (the host's enqueue time as
 * QUEUED, 0 = unknown for the rest). An entry is freed when both its
 * record writer and its callback are done with it (refs).
 *
 * Dependencies. The program's events map to the correlation ids of the
 * commands they complete (gp__ocl.events), so a wait list becomes the wait
 * ids of the record. Markers and barriers write no record of their own:
 * their events stand for the commands they waited on, which is what a
 * command waiting on them inherits. An event's entry is forgotten when the
 * program drops its last reference, or when a new event takes its address.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oclInt.h"

#define DRAIN_WAIT_NS 1000000000ull /* forced flush: wait for work in flight */

static _Atomic uint64_t n_tracked, n_recorded, n_unknown, n_failed,
    n_internal, n_released;
static _Atomic size_t events_live; /* entries in gp__ocl.events */
static _Atomic size_t finishing;   /* retired, record not written yet */
static _Atomic int drain_waiting; /* forced flushes waiting for the above */

/* ------------------------------------------------------------------ */
/* Entries                                                              */

static void entry_put(gp__ocl_entry *e) {
  if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
    free(e);
}

/* Takes the record's ownership. Caller holds gp__ocl.lock; e pending. */
static void retire_locked(gp__ocl_entry *e) {
  e->retired = true;
  atomic_fetch_add(&finishing, 1);
  if (e->prev)
    e->prev->next = e->next;
  else
    gp__ocl.pending = e->next;
  if (e->next)
    e->next->prev = e->prev;
  e->prev = e->next = NULL;
  gp__ocl.num_pending--;
  if (e->evinfo) {
    e->evinfo->entry = NULL;
    e->evinfo = NULL;
  }
  pthread_cond_broadcast(&gp__ocl.drained);
}

static void emit_kernel(const gp__ocl_entry *e, const uint64_t ts[4]) {
  uint32_t size = (uint32_t)sizeof(gp_activity_kernel) + 8u * e->num_waits;
  gp_activity_kernel *r = gp__activity_reserve(GP_ACTIVITY_KIND_KERNEL, size,
                                               e->context_id, e->stream_id);
  if (!r)
    return;
  memset((uint8_t *)r + sizeof(gp_activity), 0,
         sizeof(*r) - sizeof(gp_activity));
  r->correlation_id = e->corr;
  r->queued = ts[0];
  r->submitted = ts[1];
  r->start = ts[2];
  r->end = ts[3];
  r->device_id = e->device_id;
  r->context_id = e->context_id;
  r->stream_id = e->stream_id;
  r->name_id = e->cmd.name_id;
  r->grid_x = e->cmd.grid[0];
  r->grid_y = e->cmd.grid[1];
  r->grid_z = e->cmd.grid[2];
  r->block_x = e->cmd.block[0];
  r->block_y = e->cmd.block[1];
  r->block_z = e->cmd.block[2];
  r->dynamic_shared_memory = e->cmd.dynamic_shared;
  r->num_wait_ids = e->num_waits;
  memcpy((uint8_t *)r + sizeof(*r), e->waits, 8u * e->num_waits);
  gp__activity_commit(r);
}

static void emit_memcpy(const gp__ocl_entry *e, const uint64_t ts[4]) {
  uint32_t size = (uint32_t)sizeof(gp_activity_memcpy) + 8u * e->num_waits;
  gp_activity_memcpy *r = gp__activity_reserve(GP_ACTIVITY_KIND_MEMCPY, size,
                                               e->context_id, e->stream_id);
  if (!r)
    return;
  memset((uint8_t *)r + sizeof(gp_activity), 0,
         sizeof(*r) - sizeof(gp_activity));
  r->correlation_id = e->corr;
  r->queued = ts[0];
  r->submitted = ts[1];
  r->start = ts[2];
  r->end = ts[3];
  r->bytes = e->cmd.bytes;
  r->device_id = e->device_id;
  r->context_id = e->context_id;
  r->stream_id = e->stream_id;
  r->src_device_id = e->cmd.src_host ? UINT32_MAX : e->device_id;
  r->dst_device_id = e->cmd.dst_host ? UINT32_MAX : e->device_id;
  r->src_context_id = e->cmd.src_host ? 0 : e->context_id;
  r->dst_context_id = e->cmd.dst_host ? 0 : e->context_id;
  r->copy_kind = e->cmd.copy_kind;
  r->src_kind = e->cmd.src_kind;
  r->dst_kind = e->cmd.dst_kind;
  r->flags = GP_ACTIVITY_FLAG_MEMCPY_ASYNC;
  r->num_wait_ids = e->num_waits;
  memcpy((uint8_t *)r + sizeof(*r), e->waits, 8u * e->num_waits);
  gp__activity_commit(r);
}

static void emit_memset(const gp__ocl_entry *e, const uint64_t ts[4]) {
  uint32_t size = (uint32_t)sizeof(gp_activity_memset) + 8u * e->num_waits;
  gp_activity_memset *r = gp__activity_reserve(GP_ACTIVITY_KIND_MEMSET, size,
                                               e->context_id, e->stream_id);
  if (!r)
    return;
  memset((uint8_t *)r + sizeof(gp_activity), 0,
         sizeof(*r) - sizeof(gp_activity));
  r->correlation_id = e->corr;
  r->queued = ts[0];
  r->submitted = ts[1];
  r->start = ts[2];
  r->end = ts[3];
  r->bytes = e->cmd.bytes;
  r->device_id = e->device_id;
  r->context_id = e->context_id;
  r->stream_id = e->stream_id;
  r->value = e->cmd.value;
  r->memory_kind = e->cmd.dst_kind;
  r->flags = GP_ACTIVITY_FLAG_MEMCPY_ASYNC;
  r->num_wait_ids = e->num_waits;
  memcpy((uint8_t *)r + sizeof(*r), e->waits, 8u * e->num_waits);
  gp__activity_commit(r);
}

/*
 * Writes the record of a retired entry (its owner calls this once). With
 * can_read, the event may be asked for its profiling times. Releases an
 * internal event and drops the owner's reference.
 */
static void finish(gp__ocl_entry *e, bool can_read) {
  uint64_t dev[4] = {0, 0, 0, 0}, ts[4] = {0, 0, 0, 0};
  static const cl_profiling_info which[4] = {
      CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
      CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  bool complete = false;
  if (can_read) {
    __typeof__(&clGetEventProfilingInfo) prof =
        GP_CL_REAL(clGetEventProfilingInfo);
    complete = prof != NULL;
    for (int i = 0; i < 4 && complete; i++) {
      cl_ulong v = 0;
      if (prof(e->event, which[i], sizeof(v), &v, NULL) != CL_SUCCESS ||
          v == 0)
        complete = false;
      dev[i] = v;
    }
  }
  if (complete) {
    gp__ocl_device_map(e->dev, e, dev, ts);
    complete = ts[0] && ts[1] && ts[2] && ts[3];
  }
  if (!complete) {
    /* What the host saw: the command was queued during the call. */
    ts[0] = e->host_start;
    ts[1] = ts[2] = ts[3] = 0;
  }
  atomic_fetch_add_explicit(complete ? &n_recorded : &n_unknown, 1,
                            memory_order_relaxed);
  if (gp__activity_enabled(e->cmd.kind, e->context_id)) {
    if (e->cmd.kind == GP_ACTIVITY_KIND_KERNEL)
      emit_kernel(e, ts);
    else if (e->cmd.kind == GP_ACTIVITY_KIND_MEMCPY)
      emit_memcpy(e, ts);
    else if (e->cmd.kind == GP_ACTIVITY_KIND_MEMSET)
      emit_memset(e, ts);
  }
  if (e->internal && e->event) {
    __typeof__(&clReleaseEvent) rel = GP_CL_REAL(clReleaseEvent);
    if (rel && rel(e->event) == CL_SUCCESS)
      atomic_fetch_add_explicit(&n_released, 1, memory_order_relaxed);
  }
  entry_put(e);
  atomic_fetch_sub(&finishing, 1);
  if (atomic_load(&drain_waiting) > 0) {
    pthread_mutex_lock(&gp__ocl.lock);
    pthread_cond_broadcast(&gp__ocl.drained);
    pthread_mutex_unlock(&gp__ocl.lock);
  }
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user) {
  (void)ev;
  gp__ocl_entry *e = user;
  pthread_mutex_lock(&gp__ocl.lock);
  bool mine = !e->retired;
  if (mine)
    retire_locked(e);
  pthread_mutex_unlock(&gp__ocl.lock);
  if (mine) {
    if (status < 0)
      atomic_fetch_add_explicit(&n_failed, 1, memory_order_relaxed);
    finish(e, status == CL_COMPLETE);
  }
  entry_put(e); /* the callback's reference */
}

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
static uint32_t add_previous(const gp__ocl_queue *q, uint64_t *out,
                             uint32_t n, uint32_t cap) {
  if (q->num_recent > 0 || !q->out_of_order)
    return add_ids(q->recent, q->num_recent, out, n, cap);
  return add_ids(q->frontier, q->num_frontier, out, n, cap);
}

/* Remembers that the queue ran command corr. Caller holds gp__ocl.lock. */
static void note_recent(gp__ocl_queue *q, uint64_t corr) {
  if (!q->out_of_order) {
    q->recent[0] = corr;
    q->num_recent = 1;
    return;
  }
  if (q->num_recent == GP_OCL_RECENT) {
    memmove(q->recent, q->recent + 1, (GP_OCL_RECENT - 1) * sizeof(uint64_t));
    q->num_recent--;
  }
  q->recent[q->num_recent++] = corr;
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
void gp__ocl_enqueue_begin(gp__ocl_enqueue *en, uint32_t id,
                           cl_command_queue q, cl_event *app_event,
                           uint32_t kind) {
  en->q = NULL;
  en->track = false;
  en->internal = NULL;
  en->evp = app_event;
  en->anchor.raw = 0;
  en->kind = kind;
  if (GP_LIKELY(gp__ocl_recording())) {
    en->q = gp__ocl_queue_get(q);
    if (en->q) {
      uint32_t ctx = en->q->context_id;
      if (kind != 0)
        en->track = gp__activity_enabled(kind, ctx);
      else
        en->track = gp__activity_enabled(GP_ACTIVITY_KIND_KERNEL, ctx) ||
                    gp__activity_enabled(GP_ACTIVITY_KIND_MEMCPY, ctx) ||
                    gp__activity_enabled(GP_ACTIVITY_KIND_MEMSET, ctx);
    }
  }
  gp__ocl_call_begin(&en->call, id, en->track);
  if (en->track && kind != 0) {
    if (!app_event)
      en->evp = &en->internal;
    /* Last, right before the driver call: */
    if (en->q->dev && gp__ocl_device_anchors(en->q->dev))
      gp__ocl_anchor_take(&en->anchor);
  }
}

/* A marker or barrier: its event stands for what it waited on. */
static void track_passthrough(gp__ocl_enqueue *en, cl_uint num_waits,
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

static void track_command(gp__ocl_enqueue *en, const gp__ocl_cmd *cmd,
                          cl_uint num_waits, const cl_event *wait_list,
                          cl_event ev, bool internal, uint64_t end,
                          uint64_t raw_after) {
  uint64_t ids[GP_OCL_MAX_WAITS];
  gp__ocl_queue *q = en->q;
  pthread_mutex_lock(&gp__ocl.lock);
  uint32_t n = resolve_waits(num_waits, wait_list, ids, 0, GP_OCL_MAX_WAITS);
  gp__ocl_entry *e = malloc(sizeof(*e) + 8u * n);
  gp__ocl_evinfo *info = internal ? NULL : evinfo_new(q, &en->call.corr, 1);
  if (!e) {
    pthread_mutex_unlock(&gp__ocl.lock);
    free(info);
    if (internal)
      GP_CL_REAL(clReleaseEvent)(ev);
    return; /* out of memory: the command goes unrecorded */
  }
  e->prev = NULL;
  e->next = gp__ocl.pending;
  if (e->next)
    e->next->prev = e;
  gp__ocl.pending = e;
  gp__ocl.num_pending++;
  atomic_init(&e->refs, 2);
  e->retired = false;
  e->internal = internal;
  e->event = ev;
  e->evinfo = NULL;
  e->dev = q->dev;
  e->cmd = *cmd;
  e->corr = en->call.corr;
  e->host_start = en->call.start;
  e->host_end = end;
  e->anchor = en->anchor;
  e->raw_after = raw_after;
  e->device_id = q->device_id;
  e->context_id = q->context_id;
  e->stream_id = q->stream_id;
  e->num_waits = n;
  memcpy(e->waits, ids, 8u * n);
  if (info) {
    info->entry = e;
    e->evinfo = info;
    event_set_locked(ev, info);
  }
  note_recent(q, e->corr);
  pthread_mutex_unlock(&gp__ocl.lock);

  atomic_fetch_add_explicit(&n_tracked, 1, memory_order_relaxed);
  if (internal)
    atomic_fetch_add_explicit(&n_internal, 1, memory_order_relaxed);
  /* From here the callback may run, on any thread, even before
   * clSetEventCallback returns: e belongs to it and its record owner. */
  __typeof__(&clSetEventCallback) set_cb = GP_CL_REAL(clSetEventCallback);
  if (!set_cb || set_cb(ev, CL_COMPLETE, on_complete, e) != CL_SUCCESS) {
    entry_put(e); /* no callback will come */
    pthread_mutex_lock(&gp__ocl.lock);
    bool mine = !e->retired;
    if (mine)
      retire_locked(e);
    pthread_mutex_unlock(&gp__ocl.lock);
    if (mine)
      finish(e, false);
  }
}

/* See oclInt.h. */
void gp__ocl_enqueue_end(gp__ocl_enqueue *en, cl_int rc,
                         const gp__ocl_cmd *cmd, cl_uint num_waits,
                         const cl_event *wait_list, cl_event *app_event,
                         bool barrier) {
  uint64_t raw_after = en->anchor.raw && gp__ocl_device_unverified(en->q->dev)
                           ? gp__ocl_raw_now()
                           : 0;
  uint64_t end = gp_get_timestamp();
  if (rc == CL_SUCCESS && en->track) {
    if (en->kind == 0)
      track_passthrough(en, num_waits, wait_list,
                        app_event ? *app_event : NULL, barrier);
    else if (en->evp && *en->evp)
      track_command(en, cmd, num_waits, wait_list, *en->evp,
                    en->evp == &en->internal, end, raw_after);
  }
  gp__ocl_call_end_at(&en->call, rc, end);
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
    atomic_fetch_add(&e->refs, 1); /* keep it while we ask */
  pthread_mutex_unlock(&gp__ocl.lock);
  if (!e)
    return;
  cl_int st = event_status(ev);
  if (st == CL_COMPLETE || st < 0) {
    pthread_mutex_lock(&gp__ocl.lock);
    bool mine = !e->retired;
    if (mine)
      retire_locked(e);
    pthread_mutex_unlock(&gp__ocl.lock);
    if (mine) {
      if (st < 0)
        atomic_fetch_add_explicit(&n_failed, 1, memory_order_relaxed);
      finish(e, st == CL_COMPLETE);
    }
  }
  entry_put(e);
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

/* ------------------------------------------------------------------ */
/* Flushes                                                              */

/* Retires the pending commands with internal events that completed or
 * failed without a callback having written them yet. Asking the driver for
 * an event's status runs no callbacks, so it is done under the lock, which
 * keeps each event alive (its releaser must retire it first). */
static void sweep_internal(void) {
  gp__ocl_entry *done = NULL;
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_entry *next;
  for (gp__ocl_entry *e = gp__ocl.pending; e; e = next) {
    next = e->next;
    if (!e->internal)
      continue;
    cl_int st = event_status(e->event);
    if (st > CL_COMPLETE)
      continue;
    retire_locked(e);
    e->swept_status = st;
    e->next = done;
    done = e;
  }
  pthread_mutex_unlock(&gp__ocl.lock);
  while (done) {
    gp__ocl_entry *e = done;
    done = e->next;
    e->next = NULL;
    if (e->swept_status < 0)
      atomic_fetch_add_explicit(&n_failed, 1, memory_order_relaxed);
    finish(e, e->swept_status == CL_COMPLETE);
  }
}

static void flush_hook(void *user, bool forced) {
  (void)user;
  sweep_internal();
  if (!forced)
    return;
  /* Work in flight: give callbacks a moment to deliver it whole. */
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += (time_t)(DRAIN_WAIT_NS / 1000000000ull);
  pthread_mutex_lock(&gp__ocl.lock);
  atomic_fetch_add(&drain_waiting, 1);
  while (gp__ocl.num_pending > 0 || atomic_load(&finishing) > 0)
    if (pthread_cond_timedwait(&gp__ocl.drained, &gp__ocl.lock, &dl) != 0)
      break;
  atomic_fetch_sub(&drain_waiting, 1);
  gp__ocl_entry *left = NULL;
  while (gp__ocl.pending) {
    gp__ocl_entry *e = gp__ocl.pending;
    retire_locked(e);
    e->next = left;
    left = e;
  }
  pthread_mutex_unlock(&gp__ocl.lock);
  while (left) {
    gp__ocl_entry *e = left;
    left = e->next;
    e->next = NULL;
    /* Our own events can still be asked; the program's may be gone. */
    finish(e, e->internal && event_status(e->event) == CL_COMPLETE);
  }
}

/* See oclInt.h. */
void gp__ocl_get_stats(gp__ocl_stats *out) {
  out->tracked = atomic_load(&n_tracked);
  out->recorded = atomic_load(&n_recorded);
  out->unknown = atomic_load(&n_unknown);
  out->failed = atomic_load(&n_failed);
  out->internal = atomic_load(&n_internal);
  out->released = atomic_load(&n_released);
  pthread_mutex_lock(&gp__ocl.lock);
  out->pending = gp__ocl.num_pending;
  pthread_mutex_unlock(&gp__ocl.lock);
}

/* ------------------------------------------------------------------ */
/* fork()                                                               */

static void atfork_prepare(void) {
  pthread_mutex_lock(&gp__ocl.objects_lock);
  pthread_mutex_lock(&gp__ocl.lock);
}

static void atfork_parent(void) {
  pthread_mutex_unlock(&gp__ocl.lock);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
}

/* The commands in flight are the parent's: their callbacks will never run
 * here, and their records are the parent's to write. */
static void atfork_child(void) {
  pthread_mutex_init(&gp__ocl.lock, NULL);
  pthread_mutex_init(&gp__ocl.objects_lock, NULL);
  pthread_cond_init(&gp__ocl.drained, NULL);
  gp__ocl_entry *e = gp__ocl.pending;
  while (e) {
    gp__ocl_entry *next = e->next;
    if (e->evinfo)
      e->evinfo->entry = NULL;
    free(e);
    e = next;
  }
  gp__ocl.pending = NULL;
  gp__ocl.num_pending = 0;
  atomic_store(&finishing, 0);
  atomic_store(&drain_waiting, 0);
  gp__ocl_device_atfork_child();
}

/* See oclInt.h. */
void gp__ocl_track_init(void) {
  gp__activity_add_flush_hook(flush_hook, NULL);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
