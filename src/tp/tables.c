/*
 * tables.c - the large intrinsic tables (slice, gpu_slice, counter, args):
 * for each, its columns
 * (names and SQL types as Perfetto spells them) and how to read a value
 * of a row out of the columnar store. vtab.c turns these into virtual
 * tables; schema.c into real ones for a saved database.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tp/tables.h"

/* ------------------------------------------------------------------ */
/* slice                                                                 */

static const gp__tp_coldef slice_cols[] = {
    {"id", I},
    {"ts", I},
    {"dur", I},
    {"track_id", I},
    {"category", T},
    {"name", T},
    {"depth", I},
    {"parent_id", I},
    {"arg_set_id", I},
    {"thread_ts", I},
    {"thread_dur", I},
    {"thread_instruction_count", I},
    {"thread_instruction_delta", I},
};
static const uint8_t slice_flags[] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                      GP_TP_COL_SORTED,
                                      0,
                                      GP_TP_COL_INDEXED,
                                      0,
                                      0,
                                      0,
                                      GP_TP_COL_INDEXED,
                                      GP_TP_COL_INDEXED,
                                      0,
                                      0,
                                      0,
                                      0};

static uint64_t slice_rows(const gp__tp_db *db) {
  return db->s_ts.n;
}

static bool slice_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                      gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = db->s_ts.v[r];
    return true;
  case 3:
    *out = db->s_track.v[r];
    return true;
  case 7:
    *out = db->s_parent.v[r];
    return db->s_parent.v[r] != GP_TP_NONE;
  case 8: {
    uint64_t s = gp__tp_slice_argset(db, (uint32_t)r);
    *out = (int64_t)s;
    return s != UINT64_MAX;
  }
  default:
    return false;
  }
}

static void slice_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, db->s_ts.v[r]);
    break;
  case 2:
    sqlite3_result_int64(ctx, db->s_dur.v[r]);
    break;
  case 3:
    sqlite3_result_int64(ctx, db->s_track.v[r]);
    break;
  case 4:
    res_str(db, ctx, db->s_cat.v[r]);
    break;
  case 5:
    res_str(db, ctx, db->s_name.v[r]);
    break;
  case 6:
    sqlite3_result_int64(ctx, db->s_depth.v[r]);
    break;
  case 7:
    res_id(ctx, db->s_parent.v[r]);
    break;
  case 8:
    res_set(ctx, gp__tp_slice_argset(db, (uint32_t)r));
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const slice_idx[] = {
    "CREATE INDEX %s_track ON %s(track_id)",
    "CREATE INDEX %s_parent ON %s(parent_id)",
    "CREATE INDEX %s_args ON %s(arg_set_id)", NULL};

const gp__tp_tabdef gp__tp_slice_tab = {
    "__intrinsic_slice", slice_cols,  13,        slice_flags,
    slice_rows,          slice_value, slice_int, slice_idx};

/* ------------------------------------------------------------------ */
/* gpu_slice: slices on GPU tracks, with their GPU columns               */

static const gp__tp_coldef gslice_cols[] = {
    {"id", I},
    {"ts", I},
    {"dur", I},
    {"track_id", I},
    {"category", T},
    {"name", T},
    {"depth", I},
    {"parent_id", I},
    {"arg_set_id", I},
    {"context_id", I},
    {"render_target", I},
    {"render_target_name", T},
    {"render_pass", I},
    {"render_pass_name", T},
    {"command_buffer", I},
    {"command_buffer_name", T},
    {"frame_id", I},
    {"submission_id", I},
    {"hw_queue_id", I},
    {"upid", I},
    {"render_subpasses", T},
    {"render_stage_category", I},
};
static const uint8_t gslice_flags[] = {GP_TP_COL_SORTED,
                                       GP_TP_COL_SORTED,
                                       0,
                                       GP_TP_COL_INDEXED,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0,
                                       0};

static uint64_t gslice_rows(const gp__tp_db *db) {
  return db->g_slice.n;
}

static bool gslice_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                       gp__tp_cache *c) {
  uint32_t s = db->g_slice.v[r];
  if (col <= 8)
    return slice_int(db, s, col, out, c);
  return false;
}

static uint32_t gslice_key(const gp__tp_db *db, int col) {
  switch (col) {
  case 9:
    return db->k_context_id;
  case 10:
    return db->k_render_target;
  case 11:
    return db->k_render_target_name;
  case 12:
    return db->k_render_pass;
  case 13:
    return db->k_render_pass_name;
  case 14:
    return db->k_command_buffer;
  case 15:
    return db->k_command_buffer_name;
  case 17:
    return db->k_submission_id;
  case 18:
    return db->k_hw_queue_id;
  case 19:
    return db->k_upid;
  case 20:
    return db->k_render_subpasses;
  case 21:
    return db->k_render_stage_category;
  default:
    return GP_TP_NONE;
  }
}

static void gslice_value(const gp__tp_db *db, uint64_t r, int col,
                         sqlite3_context *ctx, gp__tp_cache *c) {
  uint32_t s = db->g_slice.v[r];
  if (col <= 8) {
    slice_value(db, s, col, ctx, c);
    return;
  }
  uint32_t g = (uint32_t)r;
  if (db->g_kind.v[g] != GP_TP_GEXT_RENDER_STAGE) {
    /* Vulkan submissions and logs: read the columns from their args. */
    gp__tp_arg a;
    uint32_t k = gslice_key(db, col);
    uint32_t set = db->s_args.v[s];
    if (k != GP_TP_NONE && set != GP_TP_NONE && gp__tp_set_find(db, set, k, &a))
      res_arg(db, ctx, &a);
    else
      sqlite3_result_null(ctx);
    return;
  }
  switch (col) {
  case 9:
    sqlite3_result_int64(ctx, (int64_t)db->dict.v[db->g_ctx.v[g]]);
    break;
  case 10:
    sqlite3_result_int64(ctx, (int64_t)db->dict.v[db->g_rt.v[g]]);
    break;
  case 11:
    res_str(db, ctx, gp__tp_rare_get(db, g, GP_TP_RARE_RT_NAME));
    break;
  case 12:
    sqlite3_result_int64(ctx, (int64_t)db->dict.v[db->g_rp.v[g]]);
    break;
  case 13:
    res_str(db, ctx, gp__tp_rare_get(db, g, GP_TP_RARE_RP_NAME));
    break;
  case 14:
    sqlite3_result_int64(ctx, (int64_t)db->dict.v[db->g_cb.v[g]]);
    break;
  case 15:
    res_str(db, ctx, gp__tp_rare_get(db, g, GP_TP_RARE_CB_NAME));
    break;
  case 17:
    sqlite3_result_int64(ctx, db->g_sub.v[g]);
    break;
  case 18:
    sqlite3_result_int64(ctx, (int64_t)db->dict.v[db->g_hwq.v[g]]);
    break;
  case 19:
    res_id(ctx, db->g_upid.v[g]);
    break;
  case 20:
    res_str(db, ctx, gp__tp_rare_get(db, g, GP_TP_RARE_SUBPASSES));
    break;
  case 21:
    res_i64(ctx, db->g_cat.v[g], -1);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const gslice_idx[] = {
    "CREATE INDEX %s_track ON %s(track_id)", NULL};

const gp__tp_tabdef gp__tp_gslice_tab = {"__intrinsic_gpu_slice",
                                         gslice_cols,
                                         22,
                                         gslice_flags,
                                         gslice_rows,
                                         gslice_value,
                                         gslice_int,
                                         gslice_idx};

/* ------------------------------------------------------------------ */
/* counter                                                               */

static const gp__tp_coldef counter_cols[] = {
    {"id", I}, {"ts", I}, {"track_id", I}, {"value", R}, {"arg_set_id", I}};
static const uint8_t counter_flags[] = {
    GP_TP_COL_ID | GP_TP_COL_SORTED, GP_TP_COL_SORTED, GP_TP_COL_INDEXED, 0, 0};

static uint64_t counter_rows(const gp__tp_db *db) {
  return db->c_ts.n;
}

static bool counter_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                        gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = db->c_ts.v[r];
    return true;
  case 2:
    *out = db->c_track.v[r];
    return true;
  case 4: {
    const uint64_t *set = gp__tp_map_get(&db->c_args, r);
    if (!set)
      return false;
    *out = (int64_t)*set;
    return true;
  }
  default:
    return false;
  }
}

static void counter_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, db->c_ts.v[r]);
    break;
  case 2:
    sqlite3_result_int64(ctx, db->c_track.v[r]);
    break;
  case 3:
    sqlite3_result_double(ctx, db->c_value.v[r]);
    break;
  case 4: {
    const uint64_t *set = gp__tp_map_get(&db->c_args, r);
    if (set)
      sqlite3_result_int64(ctx, (int64_t)*set);
    else
      sqlite3_result_null(ctx);
    break;
  }
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const counter_idx[] = {
    "CREATE INDEX %s_track ON %s(track_id, ts)", NULL};

const gp__tp_tabdef gp__tp_counter_tab = {
    "__intrinsic_counter", counter_cols,  5,           counter_flags,
    counter_rows,          counter_value, counter_int, counter_idx};

/* ------------------------------------------------------------------ */
/* args                                                                  */

static const gp__tp_coldef args_cols[] = {
    {"id", I},         {"arg_set_id", I}, {"flat_key", T},
    {"key", T},        {"int_value", I},  {"string_value", T},
    {"real_value", R}, {"value_type", T}, {"display_value", T},
};
static const uint8_t args_flags[] = {
    GP_TP_COL_ID | GP_TP_COL_SORTED, GP_TP_COL_SORTED, 0, 0, 0, 0, 0, 0, 0};

static uint64_t args_rows(const gp__tp_db *db) {
  return db->nargs_total;
}

static void args_locate(const gp__tp_db *db, uint64_t r, gp__tp_cache *c) {
  if (c->set != UINT64_MAX && r >= c->first && r < c->first + c->size)
    return;
  /* Rows are usually read in order: try the next set first. */
  uint64_t next = c->set == UINT64_MAX ? 0 : c->set + 1;
  if (next < gp__tp_nsets(db) && gp__tp_set_first_row(db, next) <= r &&
      r < gp__tp_set_first_row(db, next) + gp__tp_set_size(db, next)) {
    c->set = next;
  } else {
    c->set = gp__tp_row_set(db, r);
  }
  c->first = gp__tp_set_first_row(db, c->set);
  c->size = gp__tp_set_size(db, c->set);
}

static bool args_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                     gp__tp_cache *c) {
  if (col == 0) {
    *out = (int64_t)r;
    return true;
  }
  if (col != 1)
    return false;
  args_locate(db, r, c);
  *out = (int64_t)c->set;
  return true;
}

/* display_value: Perfetto's string form of any value. */
static void display(const gp__tp_db *db, sqlite3_context *ctx,
                    const gp__tp_arg *a) {
  char buf[64];
  switch (a->type) {
  case GP_TP_ARG_STRING:
  case GP_TP_ARG_JSON:
    res_str(db, ctx, (uint32_t)a->value);
    return;
  case GP_TP_ARG_INT:
    snprintf(buf, sizeof(buf), "%" PRId64, a->value);
    break;
  case GP_TP_ARG_UINT:
    snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)a->value);
    break;
  case GP_TP_ARG_POINTER:
    snprintf(buf, sizeof(buf), "0x%" PRIx64, (uint64_t)a->value);
    break;
  case GP_TP_ARG_BOOL:
    snprintf(buf, sizeof(buf), "%s", a->value ? "true" : "false");
    break;
  case GP_TP_ARG_REAL: {
    double d;
    memcpy(&d, &a->value, sizeof(d));
    snprintf(buf, sizeof(buf), "%g", d);
    break;
  }
  default:
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

static void args_value(const gp__tp_db *db, uint64_t r, int col,
                       sqlite3_context *ctx, gp__tp_cache *c) {
  if (col == 0) {
    sqlite3_result_int64(ctx, (int64_t)r);
    return;
  }
  args_locate(db, r, c);
  gp__tp_arg a;
  gp__tp_set_arg(db, c->set, (uint32_t)(r - c->first), &a);
  switch (col) {
  case 1:
    sqlite3_result_int64(ctx, (int64_t)c->set);
    break;
  case 2:
    res_str(db, ctx, a.flat_key);
    break;
  case 3:
    res_str(db, ctx, a.key);
    break;
  case 4:
    if (a.type == GP_TP_ARG_INT || a.type == GP_TP_ARG_UINT ||
        a.type == GP_TP_ARG_BOOL || a.type == GP_TP_ARG_POINTER)
      sqlite3_result_int64(ctx, a.value);
    else
      sqlite3_result_null(ctx);
    break;
  case 5:
    if (a.type == GP_TP_ARG_STRING || a.type == GP_TP_ARG_JSON)
      res_str(db, ctx, (uint32_t)a.value);
    else
      sqlite3_result_null(ctx);
    break;
  case 6:
    if (a.type == GP_TP_ARG_REAL)
      res_arg(db, ctx, &a);
    else
      sqlite3_result_null(ctx);
    break;
  case 7:
    sqlite3_result_text(ctx, gp__tp_arg_type_names[a.type & 7], -1,
                        SQLITE_STATIC);
    break;
  default:
    display(db, ctx, &a);
    break;
  }
}

static const char *const args_idx[] = {
    "CREATE INDEX %s_set ON %s(arg_set_id, key)", NULL};

const gp__tp_tabdef gp__tp_args_tab = {
    "__intrinsic_args", args_cols,  9,        args_flags,
    args_rows,          args_value, args_int, args_idx};
