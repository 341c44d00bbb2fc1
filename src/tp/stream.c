/*
 * stream.c - rows of gpu_slice and counter handed to the caller while the
 * trace is imported (gp_tp_options.stream), so that an export can send
 * them while the rest is read instead of after the whole import.
 *
 * A row is handed over once nothing later in the trace can change it.
 * Rows are appended in time order and never removed, so a row's id is
 * final when it is made; what else it shows was checked column by column
 * against every place of the importer that writes after an append:
 *
 *  - counter: ts, track and the track's machine are set once. The value
 *    is too, but for a backwards-looking GPU counter, whose sample is the
 *    value of the interval that just ended: its row gets the value when
 *    the track's next sample comes (parse_counters.c), and is streamed
 *    then; the last one of each track at the end of the parse.
 *  - gpu_slice: rows are made by render stages (parse_render.c), GPU log
 *    messages and Vulkan submissions (parse_other.c), each with all its
 *    columns before the parse moves on. Their dur is given (complete
 *    slices on tracks that hold no begin/end pair, so tracks.c never
 *    ends them later). Machines and GPUs (GpuInfo) are made or named
 *    while tokenizing, before the parse. Track names are set when a
 *    track is made, except two: a track-event descriptor that renames
 *    its track (parse_track.c: no gpu_slice row is on such a track), and
 *    the placeholder track of a legacy hardware queue ("Unknown GPU
 *    Queue N"), which a later Specifications packet names
 *    (parse_render.c). The placeholder's rows wait for the end of the
 *    parse (gp__tp_stream_defer), as do the rows of any GPU track type
 *    not listed in stream_now() below, so that an importer change there
 *    cannot make a streamed row differ from the table.
 */
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int emit(gp__tp_importer *imp, const gp_tp_stream_row *row) {
  int rc = imp->stream(imp->stream_user, row);
  if (rc)
    return gp__tp_fail(imp, rc < 0 ? rc : GP_ESTATE, 0,
                       "import stopped by its row consumer (%s)",
                       gp_strerror(rc < 0 ? rc : GP_ESTATE));
  return 0;
}

/* Grows the per-track states to cover track. */
static uint8_t *track_state(gp__tp_importer *imp, uint32_t track) {
  if (track >= imp->stream_track.n) {
    size_t n = imp->stream_track.n;
    if (!gp__tp_vec_reserve(&imp->stream_track, track + 1 - n))
      return NULL;
    memset(imp->stream_track.v + n, GP_TP_STREAM_UNSEEN, track + 1 - n);
    imp->stream_track.n = track + 1;
  }
  return &imp->stream_track.v[track];
}

/* The gpu_track types (schema.c's gpu_track view) and, of those, the
 * ones whose names are final when their rows are made. */
static int type_state(const gp__tp_db *db, const gp__tp_track *t) {
  static const char *const now[] = {"gpu_render_stage", "vulkan_events",
                                    "gpu_log"};
  static const char *const later[] = {"drm_vblank", "drm_sched_ring",
                                      "drm_fence", "mali_mcu_state",
                                      "graphics_frame_event"};
  if (t->type == GP_TP_NONE)
    return GP_TP_STREAM_NOT_GPU;
  const char *type = gp__tp_str(&db->strings, t->type);
  for (size_t i = 0; i < sizeof(now) / sizeof(now[0]); i++)
    if (strcmp(type, now[i]) == 0)
      return GP_TP_STREAM_NOW;
  for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
    if (strcmp(type, later[i]) == 0)
      return GP_TP_STREAM_AT_END;
  return GP_TP_STREAM_NOT_GPU;
}

static const char *str_or_null(const gp__tp_db *db, uint32_t s) {
  return s == GP_TP_NONE ? NULL : gp__tp_str(&db->strings, s);
}

/* An integer arg of a stored set as gpu_slice shows it; false: NULL. */
static bool int_arg(const gp__tp_db *db, uint32_t set, uint32_t key,
                    int64_t *out) {
  gp__tp_arg a;
  if (set == GP_TP_NONE || !gp__tp_set_find(db, set, key, &a))
    return false;
  switch (a.type) {
  case GP_TP_ARG_INT:
  case GP_TP_ARG_UINT:
  case GP_TP_ARG_POINTER:
  case GP_TP_ARG_BOOL:
    *out = a.value;
    return true;
  default:
    return false; /* none of the importer's: it writes integers here */
  }
}

/* The machine and GPU columns of track t into *r. */
static void track_columns(const gp__tp_importer *imp, const gp__tp_track *t,
                          gp_tp_stream_row *r) {
  const gp__tp_db *db = imp->db;
  r->machine = db->machines.v[t->machine].raw_id;
  r->track_name = str_or_null(db, t->name);
  gp__tp_arg a;
  r->nulls |= GP_TP_STREAM_NULL_GPU;
  if (t->dims != GP_TP_NONE &&
      gp__tp_set_find(db, t->dims, imp->k_dims[0], &a)) {
    uint64_t g = (uint64_t)a.value;
    bool is_int = a.type == GP_TP_ARG_INT || a.type == GP_TP_ARG_UINT;
    if (is_int && g < db->gpus.n) {
      r->nulls &= ~GP_TP_STREAM_NULL_GPU;
      r->ugpu = (int64_t)g;
      r->gpu = db->gpus.v[g].gpu;
      r->gpu_name = str_or_null(db, db->gpus.v[g].name);
    }
  }
}

/* Starts *r: a row of table with its id, ts and track, and the track's
 * machine and GPU columns; the rest zero. */
static void row_begin(const gp__tp_importer *imp, gp_tp_stream_row *r,
                      uint32_t table, int64_t id, int64_t ts, uint32_t track) {
  memset(r, 0, sizeof(*r));
  r->table = table;
  r->id = id;
  r->ts = ts;
  r->track_id = track;
  track_columns(imp, &imp->db->tracks.v[track], r);
}

/* Hands gpu_slice row g over, whatever its track waits for. */
static int emit_gpu_slice(gp__tp_importer *imp, uint32_t g) {
  const gp__tp_db *db = imp->db;
  uint32_t s = db->g_slice.v[g];
  gp_tp_stream_row r;
  row_begin(imp, &r, GP_TP_STREAM_GPU_SLICE, s, db->s_ts.v[s],
            db->s_track.v[s]);
  r.dur = db->s_dur.v[s];
  r.name = str_or_null(db, db->s_name.v[s]);
  if (db->g_kind.v[g] == GP_TP_GEXT_RENDER_STAGE) {
    r.context_id = (int64_t)db->dict.v[db->g_ctx.v[g]];
    r.submission_id = db->g_sub.v[g];
    if (db->g_upid.v[g] == GP_TP_NONE)
      r.nulls |= GP_TP_STREAM_NULL_UPID;
    else
      r.upid = db->g_upid.v[g];
    if (db->g_cat.v[g] == -1)
      r.nulls |= GP_TP_STREAM_NULL_CATEGORY;
    else
      r.render_stage_category = db->g_cat.v[g];
  } else {
    /* Vulkan submissions and logs: the columns are args (tables.c). */
    uint32_t set = db->s_args.v[s];
    if (!int_arg(db, set, db->k_context_id, &r.context_id))
      r.nulls |= GP_TP_STREAM_NULL_CONTEXT_ID;
    if (!int_arg(db, set, db->k_submission_id, &r.submission_id))
      r.nulls |= GP_TP_STREAM_NULL_SUBMISSION_ID;
    if (!int_arg(db, set, db->k_upid, &r.upid))
      r.nulls |= GP_TP_STREAM_NULL_UPID;
    if (!int_arg(db, set, db->k_render_stage_category,
                 &r.render_stage_category))
      r.nulls |= GP_TP_STREAM_NULL_CATEGORY;
  }
  return emit(imp, &r);
}

/* See import.h. */
int gp__tp_stream_begin(gp__tp_importer *imp) {
  if (!imp->stream)
    return 0;
  const gp__tp_db *db = imp->db;
  for (size_t m = 0; m < db->machines.n; m++) {
    gp_tp_stream_row r;
    memset(&r, 0, sizeof(r));
    r.table = GP_TP_STREAM_MACHINE;
    r.id = (int64_t)m;
    r.machine = db->machines.v[m].raw_id;
    int rc = emit(imp, &r);
    if (rc)
      return rc;
  }
  return 0;
}

/* See import.h. */
int gp__tp_stream_defer(gp__tp_importer *imp, uint32_t track) {
  if (!imp->stream)
    return 0;
  uint8_t *st = track_state(imp, track);
  if (!st)
    return nomem(imp);
  if (*st == GP_TP_STREAM_NOW)
    return gp__tp_fail(imp, GP_ESTATE, 0,
                       "internal: track %u may be renamed after its rows "
                       "were streamed",
                       track);
  if (*st == GP_TP_STREAM_UNSEEN)
    *st = GP_TP_STREAM_AT_END;
  imp->stream_deferred = imp->stream_deferred || *st == GP_TP_STREAM_AT_END;
  return 0;
}

/* See import.h. */
int gp__tp_stream_gpu_slice(gp__tp_importer *imp, uint32_t g) {
  if (!imp->stream)
    return 0;
  const gp__tp_db *db = imp->db;
  uint32_t track = db->s_track.v[db->g_slice.v[g]];
  uint8_t *st = track_state(imp, track);
  if (!st)
    return nomem(imp);
  if (*st == GP_TP_STREAM_UNSEEN) {
    *st = (uint8_t)type_state(db, &db->tracks.v[track]);
    imp->stream_deferred = imp->stream_deferred || *st == GP_TP_STREAM_AT_END;
  }
  return *st == GP_TP_STREAM_NOW ? emit_gpu_slice(imp, g) : 0;
}

/* See import.h. */
int gp__tp_stream_counter(gp__tp_importer *imp, uint32_t row) {
  if (!imp->stream)
    return 0;
  const gp__tp_db *db = imp->db;
  const gp__tp_track *t = &db->tracks.v[db->c_track.v[row]];
  if (!t->is_counter)
    return 0; /* not in counter JOIN counter_track */
  gp_tp_stream_row r;
  row_begin(imp, &r, GP_TP_STREAM_COUNTER, row, db->c_ts.v[row],
            db->c_track.v[row]);
  r.value = db->c_value.v[row];
  return emit(imp, &r);
}

/* See import.h. */
int gp__tp_stream_finish(gp__tp_importer *imp) {
  if (!imp->stream)
    return 0;
  const gp__tp_db *db = imp->db;
  int rc = 0;
  for (size_t t = 0; !rc && t < imp->last_counter_row.n; t++)
    if (imp->last_counter_row.v[t] != GP_TP_NONE)
      rc = gp__tp_stream_counter(imp, imp->last_counter_row.v[t]);
  /* One pass over gpu_slice, only if a track's rows waited. */
  for (uint32_t g = 0; !rc && imp->stream_deferred && g < db->g_slice.n; g++) {
    uint32_t track = db->s_track.v[db->g_slice.v[g]];
    if (track < imp->stream_track.n &&
        imp->stream_track.v[track] == GP_TP_STREAM_AT_END)
      rc = emit_gpu_slice(imp, g);
  }
  return rc;
}
