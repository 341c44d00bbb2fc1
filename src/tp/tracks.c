/*
 * tracks.c - the trackers every parser shares: GPU rows, tracks interned
 * by (type, dimensions), processes and threads, counter values, slices
 * with their per-track nesting stacks, flows, and GPU-slice rows.
 *
 * Slice nesting follows Perfetto's rules: intervals are closed on the
 * left and open on the right, so a slice ending where the next begins is
 * popped, except that instants at the same timestamp stack; a complete
 * slice that starts inside an open one and ends after it is dropped
 * (stat slice_drop_overlapping_complete_event).
 */
#include <stdlib.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MAX_DEPTH 512
#define PENDING INT64_MIN

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

/* See import.h. */
int gp__tp_gpu_get(gp__tp_importer *imp, uint32_t machine, int64_t gpu,
                   uint32_t *out) {
  gp__tp_db *db = imp->db;
  uint64_t key = (uint64_t)machine << 32 | (uint32_t)gpu;
  bool ins;
  uint64_t *slot = gp__tp_map_put(&imp->gpu_by_num, key, db->gpus.n, &ins);
  if (!slot)
    return nomem(imp);
  if (ins) {
    gp__tp_gpu g = {gpu,        GP_TP_NONE, GP_TP_NONE, GP_TP_NONE, GP_TP_NONE,
                    GP_TP_NONE, GP_TP_NONE, machine,    GP_TP_NONE};
    if (!gp__tp_vec_push(&db->gpus, g)) {
      *slot = GP_TP_NONE; /* unreachable entry; import fails anyway */
      return nomem(imp);
    }
  }
  *out = (uint32_t)*slot;
  return 0;
}

/* See import.h. */
int gp__tp_track_new(gp__tp_importer *imp, const gp__tp_track_spec *spec,
                     uint32_t dims_set, uint32_t *out) {
  gp__tp_db *db = imp->db;
  gp__tp_track t;
  memset(&t, 0, sizeof(t));
  int rc = gp__tp_intern(imp, spec->type, strlen(spec->type), &t.type);
  if (rc)
    return rc;
  t.name = spec->name;
  t.is_counter = spec->is_counter;
  t.dims = dims_set;
  t.source = GP_TP_NONE;
  t.description = GP_TP_NONE;
  t.group = GP_TP_NONE;
  if (spec->source) {
    if ((rc = gp__tp_argset_commit(db, spec->source, &t.source)) != 0)
      return nomem(imp);
    for (uint32_t i = 0; i < spec->source->n; i++)
      if (spec->source->a[i].key == db->k_description &&
          spec->source->a[i].type == GP_TP_ARG_STRING)
        t.description = (uint32_t)spec->source->a[i].value;
  }
  t.parent = spec->parent;
  t.machine = spec->machine;
  t.unit = spec->unit;
  t.ugpu = spec->ugpu;
  t.gpu = spec->gpu;
  t.upid = spec->upid;
  t.utid = spec->utid;
  if (db->tracks.n >= GP_TP_NONE - 1 || !gp__tp_vec_push(&db->tracks, t))
    return nomem(imp);
  *out = (uint32_t)db->tracks.n - 1;
  return 0;
}

/* See import.h. */
int gp__tp_track_intern(gp__tp_importer *imp, const gp__tp_track_spec *spec,
                        const gp__tp_argb *dims, uint32_t *out, bool *created) {
  uint32_t dims_set = GP_TP_NONE, type;
  if (dims && gp__tp_argset_commit(imp->db, dims, &dims_set) != 0)
    return nomem(imp);
  int rc = gp__tp_intern(imp, spec->type, strlen(spec->type), &type);
  if (rc)
    return rc;
  uint64_t key = (uint64_t)type << 32 | dims_set;
  uint64_t *slot = gp__tp_map_get(&imp->track_by_dims, key);
  if (created)
    *created = !slot;
  if (slot) {
    *out = (uint32_t)*slot;
    return 0;
  }
  if ((rc = gp__tp_track_new(imp, spec, dims_set, out)) != 0)
    return rc;
  if (!gp__tp_map_put(&imp->track_by_dims, key, *out, NULL))
    return nomem(imp);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Counters                                                              */

/* Appends a counter row; its id in *row (may be NULL). */
static int counter_append(gp__tp_importer *imp, int64_t ts, uint32_t track,
                          double value, uint32_t *row) {
  gp__tp_db *db = imp->db;
  if (db->c_ts.n >= GP_TP_NONE - 1 || !gp__tp_vec_push(&db->c_ts, ts) ||
      !gp__tp_vec_reserve(&db->c_track, 1) ||
      !gp__tp_vec_reserve(&db->c_value, 1)) {
    if (db->c_ts.n > db->c_track.n)
      db->c_ts.n--;
    return nomem(imp);
  }
  db->c_track.v[db->c_track.n++] = track;
  db->c_value.v[db->c_value.n++] = value;
  if (row)
    *row = (uint32_t)db->c_ts.n - 1;
  return 0;
}

/* See import.h. */
int gp__tp_counter_add(gp__tp_importer *imp, int64_t ts, uint32_t track,
                       double value, uint32_t *row) {
  int rc = counter_append(imp, ts, track, value, row);
  if (!rc)
    rc = gp__tp_stream_counter(imp, (uint32_t)imp->db->c_ts.n - 1);
  return rc;
}

/* See import.h. */
int gp__tp_counter_add_open(gp__tp_importer *imp, int64_t ts, uint32_t track,
                            uint32_t *row) {
  return counter_append(imp, ts, track, 0, row);
}

/* ------------------------------------------------------------------ */
/* Slices                                                                */

static gp__tp_stack *stack_of(gp__tp_importer *imp, uint32_t track) {
  if (track >= imp->stacks.n) {
    size_t n = imp->stacks.n;
    if (!gp__tp_vec_reserve(&imp->stacks, track + 1 - n))
      return NULL;
    memset(imp->stacks.v + n, 0, (track + 1 - n) * sizeof(gp__tp_stack));
    imp->stacks.n = track + 1;
  }
  return &imp->stacks.v[track];
}

static int slice_insert(gp__tp_importer *imp, int64_t ts, int64_t dur,
                        uint32_t track, uint32_t cat, uint32_t name,
                        uint32_t args, uint32_t depth, uint32_t parent,
                        uint32_t *out) {
  gp__tp_db *db = imp->db;
  size_t n = db->s_ts.n;
  if (n >= GP_TP_NONE - 1 || !gp__tp_vec_reserve(&db->s_ts, 1) ||
      !gp__tp_vec_reserve(&db->s_dur, 1) ||
      !gp__tp_vec_reserve(&db->s_track, 1) ||
      !gp__tp_vec_reserve(&db->s_cat, 1) ||
      !gp__tp_vec_reserve(&db->s_name, 1) ||
      !gp__tp_vec_reserve(&db->s_depth, 1) ||
      !gp__tp_vec_reserve(&db->s_parent, 1) ||
      !gp__tp_vec_reserve(&db->s_args, 1) ||
      !gp__tp_vec_reserve(&db->s_gext, 1))
    return nomem(imp);
  db->s_ts.v[n] = ts;
  db->s_dur.v[n] = dur;
  db->s_track.v[n] = track;
  db->s_cat.v[n] = cat;
  db->s_name.v[n] = name;
  db->s_depth.v[n] = depth;
  db->s_parent.v[n] = parent;
  db->s_args.v[n] = args;
  db->s_gext.v[n] = GP_TP_NONE;
  db->s_ts.n = db->s_dur.n = db->s_track.n = db->s_cat.n = db->s_name.n =
      db->s_depth.n = db->s_parent.n = db->s_args.n = db->s_gext.n = n + 1;
  *out = (uint32_t)n;
  return 0;
}

/*
 * Pops what has ended before a new slice at ts of duration dur (PENDING
 * for a begin). Returns false if the new slice must be dropped.
 */
static bool close_stack(gp__tp_importer *imp, gp__tp_stack *st, int64_t ts,
                        int64_t dur) {
  gp__tp_db *db = imp->db;
  bool incomplete = false;
  for (size_t i = st->s.n; i-- > 0;) {
    if (i >= st->s.n)
      continue; /* popped below */
    gp__tp_open *o = &st->s.v[i];
    if (o->end == PENDING) {
      incomplete = true;
      continue;
    }
    int64_t end = o->end;
    int64_t odur = gp__tp_ssub(end, db->s_ts.v[o->slice]);
    if (incomplete) {
      if (ts <= end)
        continue;
      /* An open child outlived its complete parent: end it there. */
      gp__tp_stat(imp, GP_TP_STAT_misplaced_end_event, 1);
      for (size_t j = st->s.n; j-- > i + 1;) {
        uint32_t c = st->s.v[j].slice;
        db->s_dur.v[c] = gp__tp_ssub(end, db->s_ts.v[c]);
      }
      st->s.n = i;
      incomplete = false;
      continue;
    }
    bool before = end < ts;
    bool same = end == ts && !(odur == 0 && dur == 0);
    if (before || same) {
      st->s.n = i;
      continue;
    }
    if (dur == PENDING)
      continue;
    if (ts < end && gp__tp_sadd(ts, dur) > end) {
      gp__tp_stat(imp, GP_TP_STAT_slice_drop_overlapping_complete_event, 1);
      return false;
    }
  }
  return true;
}

static int push_open(gp__tp_importer *imp, gp__tp_stack *st, uint32_t slice,
                     int64_t end) {
  if (!gp__tp_vec_push(&st->s, ((gp__tp_open){slice, end})))
    return nomem(imp);
  return 0;
}

static int start_slice(gp__tp_importer *imp, int64_t ts, int64_t dur,
                       uint32_t track, uint32_t cat, uint32_t name,
                       uint32_t args, uint32_t *out) {
  *out = GP_TP_NONE;
  gp__tp_stack *st = stack_of(imp, track);
  if (!st)
    return nomem(imp);
  if (!close_stack(imp, st, ts, dur))
    return 0;
  uint32_t depth = (uint32_t)st->s.n;
  if (depth >= MAX_DEPTH) {
    gp__tp_stat(imp, GP_TP_STAT_slice_max_depth_exceeded, 1);
    return 0;
  }
  uint32_t parent = depth ? st->s.v[depth - 1].slice : GP_TP_NONE;
  int rc = slice_insert(imp, ts, dur == PENDING ? -1 : dur, track, cat, name,
                        args, depth, parent, out);
  if (rc)
    return rc;
  int64_t end = dur == PENDING ? PENDING : gp__tp_sadd(ts, dur);
  if (end == PENDING && dur != PENDING)
    end++; /* saturated low: still an end, not "open" */
  return push_open(imp, st, *out, end);
}

/* See import.h. */
int gp__tp_slice_scoped(gp__tp_importer *imp, int64_t ts, int64_t dur,
                        uint32_t track, uint32_t cat, uint32_t name,
                        uint32_t args, uint32_t *out) {
  if (dur == PENDING)
    dur = -1;
  return start_slice(imp, ts, dur, track, cat, name, args, out);
}

/* See import.h. */
int gp__tp_slice_begin(gp__tp_importer *imp, int64_t ts, uint32_t track,
                       uint32_t cat, uint32_t name, uint32_t args,
                       uint32_t *out) {
  return start_slice(imp, ts, PENDING, track, cat, name, args, out);
}

/* See import.h. */
int gp__tp_slice_end(gp__tp_importer *imp, int64_t ts, uint32_t track,
                     uint32_t *out) {
  *out = GP_TP_NONE;
  gp__tp_db *db = imp->db;
  if (track >= imp->stacks.n)
    return 0;
  gp__tp_stack *st = &imp->stacks.v[track];
  close_stack(imp, st, ts, PENDING);
  for (size_t i = st->s.n; i-- > 0;) {
    if (st->s.v[i].end != PENDING)
      continue;
    uint32_t s = st->s.v[i].slice;
    db->s_dur.v[s] = gp__tp_ssub(ts, db->s_ts.v[s]);
    if (i == st->s.n - 1)
      st->s.n--;
    else
      st->s.v[i].end = ts;
    *out = s;
    return 0;
  }
  return 0;
}

/* See import.h. */
int gp__tp_flow_add(gp__tp_importer *imp, uint32_t out_slice,
                    uint32_t in_slice) {
  gp__tp_db *db = imp->db;
  if (!gp__tp_vec_reserve(&db->f_out, 1) || !gp__tp_vec_reserve(&db->f_in, 1))
    return nomem(imp);
  db->f_out.v[db->f_out.n++] = out_slice;
  db->f_in.v[db->f_in.n++] = in_slice;
  return 0;
}

/* See import.h. */
int gp__tp_gext_add(gp__tp_importer *imp, uint32_t slice, uint8_t kind,
                    uint32_t *row) {
  gp__tp_db *db = imp->db;
  size_t n = db->g_slice.n;
  if (!gp__tp_vec_reserve(&db->g_slice, 1) ||
      !gp__tp_vec_reserve(&db->g_kind, 1) ||
      !gp__tp_vec_reserve(&db->g_ctx, 1) || !gp__tp_vec_reserve(&db->g_rt, 1) ||
      !gp__tp_vec_reserve(&db->g_rp, 1) || !gp__tp_vec_reserve(&db->g_cb, 1) ||
      !gp__tp_vec_reserve(&db->g_hwq, 1) ||
      !gp__tp_vec_reserve(&db->g_sub, 1) ||
      !gp__tp_vec_reserve(&db->g_upid, 1) ||
      !gp__tp_vec_reserve(&db->g_cat, 1) ||
      !gp__tp_vec_reserve(&db->g_extra, 1))
    return nomem(imp);
  db->g_slice.v[n] = slice;
  db->g_kind.v[n] = kind;
  db->g_ctx.v[n] = db->g_rt.v[n] = db->g_rp.v[n] = db->g_cb.v[n] =
      db->g_hwq.v[n] = GP_TP_NONE;
  db->g_sub.v[n] = 0;
  db->g_upid.v[n] = GP_TP_NONE;
  db->g_cat.v[n] = -1;
  db->g_extra.v[n] = GP_TP_NONE;
  db->g_slice.n = db->g_kind.n = db->g_ctx.n = db->g_rt.n = db->g_rp.n =
      db->g_cb.n = db->g_hwq.n = db->g_sub.n = db->g_upid.n = db->g_cat.n =
          db->g_extra.n = n + 1;
  db->s_gext.v[slice] = (uint32_t)n;
  *row = (uint32_t)n;
  return 0;
}

/* See import.h. */
void gp__tp_trackers_free(gp__tp_importer *imp) {
  gp__tp_map_free(&imp->gpu_by_num);
  gp__tp_dma_fence_free(imp);
  gp__tp_drm_sched_free(imp);
  gp__tp_map_free(&imp->track_by_dims);
  gp__tp_map_free(&imp->upid_by_pid);
  gp__tp_map_free(&imp->uuid_by_upid);
  gp__tp_map_free(&imp->utid_by_tid);
  gp__tp_procs_free(imp);
  for (size_t i = 0; i < imp->stacks.n; i++)
    gp__tp_vec_free(&imp->stacks.v[i].s);
  gp__tp_vec_free(&imp->stacks);
  gp__tp_map_free(&imp->ctr_global);
  gp__tp_map2_free(&imp->ctr_interned);
  gp__tp_map2_free(&imp->desc_done);
  gp__tp_vec_free(&imp->ctr_specs);
  gp__tp_vec_free(&imp->last_counter_row);
  gp__tp_vec_free(&imp->stream_track);
  gp__tp_vec_free(&imp->hwq_legacy);
  gp__tp_map_free(&imp->hwq_placeholder);
  gp__tp_vec_free(&imp->stage_legacy);
  gp__tp_map_free(&imp->cset_by_dims);
  for (size_t i = 0; i < imp->csets.n; i++) {
    gp__tp_vec_free(&imp->csets.v[i].t);
    gp__tp_vec_free(&imp->csets.v[i].busy);
    gp__tp_vec_free(&imp->csets.v[i].freed);
  }
  gp__tp_vec_free(&imp->csets);
  gp__tp_map_free(&imp->ctx_seen);
  gp__tp_map2_free(&imp->debug_names);
  gp__tp_vec_free(&imp->flow_slots);
  gp__tp_vec_free(&imp->evflows);
  gp__tp_vec_free(&imp->links);
  gp__tp_vec_free(&imp->descs);
  gp__tp_map_free(&imp->desc_by_uuid);
  gp__tp_map_free(&imp->running_sum);
  gp__tp_map_free(&imp->flow_v1);
  gp__tp_vec_free(&imp->spec_cache);
  gp__tp_vec_free(&imp->args_cache);
  gp__tp_vec_free(&imp->cached_args);
  gp__tp_map2_free(&imp->track_cache);
}
