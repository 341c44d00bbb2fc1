/*
 * track.h - the common path of an enqueue (track.c), inline, so that the
 * entry point the programs call most, clEnqueueNDRangeKernel, runs it
 * without calls and without its state going through memory; every other
 * entry point calls gp__ocl_enqueue_begin and gp__ocl_enqueue_end
 * (oclInt.h), made of the same code. What is off the common path (markers,
 * barriers, wait lists, the program's events, out-of-order queues) stays
 * in track.c.
 */
#ifndef GPUPERF_OPENCL_TRACK_H
#define GPUPERF_OPENCL_TRACK_H

#include <string.h>

#include "oclInt.h"

/* A marker or barrier: its event stands for what it waited on. */
void gp__ocl_track_passthrough(gp__ocl_enqueue *en, cl_uint num_waits,
                               const cl_event *wait_list, cl_event ev,
                               bool barrier);

/* A command with a wait list, the program's event or an out-of-order
 * queue: its entry is made under the event table's lock as needed and
 * watched, or deferred. */
void gp__ocl_track_command(gp__ocl_enqueue *en, const gp__ocl_cmd *cmd,
                           cl_uint num_waits, const cl_event *wait_list,
                           cl_event ev, bool internal, uint64_t end,
                           uint64_t raw_after);

/* Remembers that the queue ran command corr. Caller holds gp__ocl.lock
 * for an out-of-order queue. */
static inline void gp__ocl_note_recent(gp__ocl_queue *q, uint64_t corr) {
  if (!q->out_of_order) {
    atomic_store_explicit(&q->last, corr, memory_order_relaxed);
    return;
  }
  if (q->num_recent == GP_OCL_RECENT) {
    memmove(q->recent, q->recent + 1, (GP_OCL_RECENT - 1) * sizeof(uint64_t));
    q->num_recent--;
  }
  q->recent[q->num_recent++] = corr;
}

/* Fills e with what every tracked command's entry holds. */
static inline void gp__ocl_entry_fill(gp__ocl_entry *e,
                                      const gp__ocl_enqueue *en,
                                      const gp__ocl_cmd *cmd, cl_event ev,
                                      uint64_t end, uint64_t raw_after) {
  const gp__ocl_queue *q = en->q;
  e->event = ev;
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
}

/* The common case of a busy loop: our own event on an in-order queue, with
 * nothing to wait for. No event can name the command and the queue's
 * state is one word, so the event table's lock is not needed; the entry
 * goes on the queue's ring (pending.c). */
static inline void gp__ocl_track_deferred(gp__ocl_enqueue *en,
                                          const gp__ocl_cmd *cmd, cl_event ev,
                                          uint64_t end, uint64_t raw_after) {
  gp__ocl_entry *e = gp__ocl_entry_new0();
  if (GP_UNLIKELY(!e)) {
    GP_CL_REAL(clReleaseEvent)(ev);
    return; /* out of memory: the command goes unrecorded */
  }
  e->internal = true;
  e->deferred = true;
  gp__ocl_entry_fill(e, en, cmd, ev, end, raw_after);
  gp__ocl_note_recent(en->q, e->corr);
  gp__ocl_entry_defer_inline(en->core, e, en->q, &en->anchor);
}

/* gp__ocl_enqueue_begin (oclInt.h), inline. */
static inline __attribute__((always_inline)) void
gp__ocl_enqueue_begin_inline(gp__ocl_enqueue *en, uint32_t id,
                             cl_command_queue q, cl_event *app_event,
                             uint32_t kind) {
  en->q = NULL;
  en->track = false;
  en->internal = NULL;
  en->evp = app_event;
  en->anchor.raw = 0;
  en->kind = kind;
  en->unverified = false;
  const gp_backend_ops *core = GP_CORE;
  en->core = core;
  /* The API kind once: it decides the API record and, when on, that we
   * are recording (gp__ocl_recording() asks for it first). */
  bool api = core->activity_enabled(GP_ACTIVITY_KIND_API, 0);
  if (GP_LIKELY(api || gp__ocl_recording())) {
    en->q = gp__ocl_queue_find(q);
    if (en->q) {
      uint32_t ctx = en->q->context_id;
      if (kind != 0)
        en->track = core->activity_enabled(kind, ctx);
      else
        en->track = core->activity_enabled(GP_ACTIVITY_KIND_KERNEL, ctx) ||
                    core->activity_enabled(GP_ACTIVITY_KIND_MEMCPY, ctx) ||
                    core->activity_enabled(GP_ACTIVITY_KIND_MEMSET, ctx);
    }
  }
  gp__ocl_call_begin_on(&en->call, core, id, en->track, api,
                        en->q ? en->q->context_id : 0,
                        en->q ? en->q->stream_id : 0);
  if (en->track && kind != 0) {
    /* In flight from before the driver call until the command is pending
     * (frontier.c). */
    core->activity_submitting(en->call.start);
    if (!app_event)
      en->evp = &en->internal;
    /* Last, right before the driver call. While the device's clock is
     * being checked, the bracket around this call must be tight. */
    gp__ocl_device *d = en->q->dev;
    if (d && gp__ocl_device_anchors(d)) {
      en->unverified = gp__ocl_device_unverified(d);
      if (en->unverified)
        gp__ocl_anchor_take(&en->anchor);
      else
        gp__ocl_anchor_recent(&en->anchor, en->call.start);
    }
  }
}

/* gp__ocl_enqueue_end (oclInt.h), inline. */
static inline __attribute__((always_inline)) void gp__ocl_enqueue_end_inline(
    gp__ocl_enqueue *en, cl_int rc, const gp__ocl_cmd *cmd, cl_uint num_waits,
    const cl_event *wait_list, cl_event *app_event, bool barrier) {
  /* While the device's clock is checked, the bracket closes right after
   * the driver call. */
  uint64_t raw_after = en->unverified ? gp__ocl_raw_now() : 0;
  uint64_t end = gp_get_timestamp();
  if (rc == CL_SUCCESS && en->track) {
    if (en->kind == 0)
      gp__ocl_track_passthrough(en, num_waits, wait_list,
                                app_event ? *app_event : NULL, barrier);
    else if (en->evp == &en->internal && en->internal && !en->q->out_of_order &&
             (num_waits == 0 || !wait_list))
      gp__ocl_track_deferred(en, cmd, en->internal, end, raw_after);
    else if (en->evp && *en->evp)
      gp__ocl_track_command(en, cmd, num_waits, wait_list, *en->evp,
                            en->evp == &en->internal, end, raw_after);
  }
  if (en->track && en->kind != 0)
    en->core->activity_submitting(0); /* pending now, or never to be */
  gp__ocl_call_end_with(en->core, &en->call, rc, end);
}

#endif /* GPUPERF_OPENCL_TRACK_H */
