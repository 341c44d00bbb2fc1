/*
 * writer_um.c - where preemptions and unified memory counters show in a
 * trace. Perfetto has no message for either, so they become TrackEvents
 * with debug annotations (the slices' "debug.<name>" args):
 *
 *   record                    event                           track
 *   PREEMPTION (SAVE)         instant "GPU preemption save"    the process
 *   PREEMPTION (RESTORE)      instant "GPU preemption restore" the process
 *     args: grid_id, block (x,y,z), device_id, context_id, stream_id
 *   UNIFIED_MEMORY_COUNTER    slice over [start, end], named   "Unified
 *                             by its kind ("GPU page faults",  memory (GPU
 *                             "UM HtoD", ...)                  n, stream
 *     args: value, address, src, dst (device id or "host"),    s)", or "(GPU
 *           access (faults) or cause (transfers)               n)" without
 *                                                              a stream;
 *                                                              children of
 *                                                              the process
 * A record whose interval would cross the latest slice on its track is an
 * instant at its start instead, with its length as "dur_ns".
 *
 * The kinds' records and the CDP child grids (writer_gpu.c) are written
 * where the trace has GPU work slices (render_stages).
 */
#include <stdio.h>

#include "writerInt.h"

/* See writerInt.h. */
void gp__tw_preemption(gp__tw *w, const gp_activity_preemption *p) {
  gp__tw_saw_ts(w, p->timestamp);
  if (!w->o.render_stages)
    return;
  gp__tw_event_begin(
      w, p->timestamp, GP_PB_TE_TYPE_INSTANT, gp__tw_process_track(w), NULL,
      p->preemption_kind == GP_PREEMPTION_RESTORE ? "GPU preemption restore"
      : p->preemption_kind == GP_PREEMPTION_SAVE  ? "GPU preemption save"
                                                  : "GPU preemption");
  char b[40];
  snprintf(b, sizeof(b), "%u,%u,%u", p->block_x, p->block_y, p->block_z);
  gp__tw_annotate_uint(&w->pb, "grid_id", (uint64_t)p->grid_id);
  gp__tw_annotate_string(&w->pb, "block", b);
  gp__tw_annotate_uint(&w->pb, "device_id", p->device_id);
  if (p->context_id)
    gp__tw_annotate_uint(&w->pb, "context_id", p->context_id);
  if (p->stream_id)
    gp__tw_annotate_uint(&w->pb, "stream_id", p->stream_id);
  gp__tw_event_end(w);
}

static const char *um_event_name(uint32_t kind) {
  static const char *const names[GP_UM_COUNTER_KIND_COUNT] = {
      "UM counter",      "UM HtoD",         "UM DtoH",
      "CPU page faults", "GPU page faults", "UM thrashing",
      "UM throttling",   "UM remote map",   "UM DtoD"};
  return kind < GP_UM_COUNTER_KIND_COUNT ? names[kind] : names[0];
}

static const char *um_access_name(uint32_t a) {
  static const char *const names[] = {"unknown", "read", "write", "atomic",
                                      "prefetch"};
  return a < GP_ARRAY_SIZE(names) ? names[a] : "unknown";
}

static const char *um_cause_name(uint32_t c) {
  static const char *const names[] = {"unknown",   "user",
                                      "coherence", "prefetch",
                                      "eviction",  "access_counters"};
  return c < GP_ARRAY_SIZE(names) ? names[c] : "unknown";
}

/* The annotation of a transfer's side: a device id, or "host". */
static void side(gp__pb_writer *pb, const char *name, uint32_t id) {
  if (id == GP_UM_HOST)
    gp__tw_annotate_string(pb, name, "host");
  else
    gp__tw_annotate_uint(pb, name, id);
}

/* The track of a stream's unified memory (stream 0: the host's), its
 * descriptor written the first time; *e its entry (aux: the latest end
 * of a slice on it), NULL if memory ran out. */
static uint64_t um_track(gp__tw *w, uint32_t device, uint32_t stream,
                         tw_entry **e) {
  bool created = false;
  uint64_t key = (uint64_t)device << 32 | stream;
  *e = gp__tw_map_get(&w->track_ids, TW_TRACK_UM, key, &created);
  uint64_t uuid = gp__tw_track_uuid(w, TW_TRACK_UM, key);
  if (created || !*e) {
    char name[80];
    if (stream)
      snprintf(name, sizeof(name), "Unified memory (GPU %u, stream %u)", device,
               stream);
    else
      snprintf(name, sizeof(name), "Unified memory (GPU %u)", device);
    gp__tw_track_descriptor(w, uuid, gp__tw_process_track(w), name);
  }
  return uuid;
}

/* See writerInt.h. */
void gp__tw_um_counter(gp__tw *w, const gp_activity_um_counter *u) {
  gp__tw_saw_ts(w, u->end > u->start ? u->end : u->start);
  if (!w->o.render_stages || !u->start)
    return;
  tw_entry *e;
  uint64_t track = um_track(w, u->device_id, u->stream_id, &e);
  uint64_t end = u->end > u->start ? u->end : u->start;
  /* A slice must nest in the track's others or follow them; one that
   * would cross the latest (CUPTI's intervals may) is an instant at its
   * start with its length as an arg. */
  bool slice = !e || u->start >= e->aux || end <= e->aux;
  if (e && end > e->aux)
    e->aux = end;
  gp__tw_event_begin(w, u->start,
                     slice ? GP_PB_TE_TYPE_SLICE_BEGIN : GP_PB_TE_TYPE_INSTANT,
                     track, NULL, um_event_name(u->counter_kind));
  gp__pb_writer *pb = &w->pb;
  gp__tw_annotate_uint(pb, "value", u->value);
  if (u->address)
    gp__tw_annotate_uint(pb, "address", u->address);
  switch (u->counter_kind) {
  case GP_UM_COUNTER_BYTES_TRANSFER_HTOD:
  case GP_UM_COUNTER_BYTES_TRANSFER_DTOH:
  case GP_UM_COUNTER_BYTES_TRANSFER_DTOD:
    side(pb, "src", u->src_id);
    side(pb, "dst", u->dst_id);
    gp__tw_annotate_string(pb, "cause", um_cause_name(u->flags));
    break;
  case GP_UM_COUNTER_GPU_PAGE_FAULT:
    gp__tw_annotate_string(pb, "access", um_access_name(u->flags));
    break;
  default:
    break;
  }
  if (!slice)
    gp__tw_annotate_uint(pb, "dur_ns", end - u->start);
  gp__tw_event_end(w);
  if (!slice)
    return;
  /* An unnamed end: the slice opened last on the track ends first. */
  gp__tw_event_begin(w, end, GP_PB_TE_TYPE_SLICE_END, track, NULL, NULL);
  gp__tw_event_end(w);
}
