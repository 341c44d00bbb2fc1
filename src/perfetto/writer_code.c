/*
 * writer_code.c - where the device code a program loads shows in a
 * trace. Perfetto has no message for modules and functions, so each
 * record becomes an instant on the process's track, where the program's
 * other host-side events are:
 *
 *   record                       instant                  debug annotations
 *   MODULE (loaded)              "GPU module load"        name, module_id,
 *   MODULE (UNLOAD flag)         "GPU module unload"        context_id,
 *                                                           size_bytes
 *   FUNCTION                     "GPU function"           name, function_id,
 *                                                           module_id,
 *                                                           function_index,
 *                                                           context_id
 *
 * The trace processor shows the annotations as the slice's args
 * ("debug.name", ...). A record without a time of its own (CUPTI gives
 * none) is placed at the latest time the writer knows. Like user
 * markers, they are written where the trace has GPU work slices
 * (render_stages).
 */
#include "writerInt.h"

/* See writerInt.h. */
void gp__tw_annotate_uint(gp__pb_writer *pb, const char *name, uint64_t v) {
  gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(pb, GP_PB_DA_NAME, name);
  gp__pb_uint(pb, GP_PB_DA_UINT_VALUE, v);
  gp__pb_end(pb);
}

/* See writerInt.h. */
void gp__tw_annotate_string(gp__pb_writer *pb, const char *name,
                            const char *v) {
  gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(pb, GP_PB_DA_NAME, name);
  gp__pb_string(pb, GP_PB_DA_STRING_VALUE, v);
  gp__pb_end(pb);
}

/* See writerInt.h. */
void gp__tw_event_begin(gp__tw *w, uint64_t ts, uint32_t type, uint64_t track,
                        const char *category, const char *name) {
  gp__tw_packet_begin(w, ts ? ts : gp__tw_now_ts(w), TW_PACKET_LARGE);
  gp__pb_begin(&w->pb, GP_PB_PACKET_TRACK_EVENT);
  if (category)
    gp__pb_string(&w->pb, GP_PB_TE_CATEGORIES, category);
  gp__pb_uint(&w->pb, GP_PB_TE_TYPE, type);
  gp__pb_uint(&w->pb, GP_PB_TE_TRACK_UUID, track);
  if (name)
    gp__pb_string(&w->pb, GP_PB_TE_NAME, name);
}

/* See writerInt.h. */
void gp__tw_event_end(gp__tw *w) {
  gp__pb_end(&w->pb);
  gp__tw_packet_end(w);
  w->st.track_events++;
}

/* An instant called event on the process track (see gp__tw_event_begin). */
static void instant_begin(gp__tw *w, uint64_t ts, const char *event) {
  gp__tw_event_begin(w, ts, GP_PB_TE_TYPE_INSTANT, gp__tw_process_track(w),
                     NULL, event);
}

/* See writerInt.h. */
void gp__tw_module(gp__tw *w, const gp_activity_module *m) {
  gp__tw_saw_ts(w, m->timestamp);
  if (!w->o.render_stages)
    return;
  bool unload = (m->flags & GP_ACTIVITY_FLAG_MODULE_UNLOAD) != 0;
  instant_begin(w, m->timestamp,
                unload ? "GPU module unload" : "GPU module load");
  if (m->name_id)
    gp__tw_annotate_string(&w->pb, "name", gp__tw_string(w, m->name_id));
  gp__tw_annotate_uint(&w->pb, "module_id", m->module_id);
  gp__tw_annotate_uint(&w->pb, "context_id", m->context_id);
  if (m->size_bytes)
    gp__tw_annotate_uint(&w->pb, "size_bytes", m->size_bytes);
  gp__tw_event_end(w);
}

/* See writerInt.h. */
void gp__tw_function(gp__tw *w, const gp_activity_function *f) {
  gp__tw_saw_ts(w, f->timestamp);
  if (!w->o.render_stages)
    return;
  instant_begin(w, f->timestamp, "GPU function");
  gp__tw_annotate_string(&w->pb, "name", gp__tw_string(w, f->name_id));
  gp__tw_annotate_uint(&w->pb, "function_id", f->id);
  gp__tw_annotate_uint(&w->pb, "module_id", f->module_id);
  gp__tw_annotate_uint(&w->pb, "function_index", f->function_index);
  gp__tw_annotate_uint(&w->pb, "context_id", f->context_id);
  gp__tw_event_end(w);
}
