/*
 * tables.c - the catalogue of intrinsic tables: for each, its columns
 * (names and SQL types as Perfetto spells them) and how to read a value
 * of a row out of the columnar store. vtab.c turns these into virtual
 * tables; schema.c into real ones for a saved database.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tp/sqlInt.h"

#define I "INTEGER"
#define R "REAL"
#define T "TEXT"

static void res_str(const gp__tp_db *db, sqlite3_context *ctx, uint32_t s) {
  if (s == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_text(ctx, gp__tp_str(&db->strings, s),
                        (int)gp__tp_str_len(&db->strings, s), SQLITE_STATIC);
}

static void res_id(sqlite3_context *ctx, uint32_t v) {
  if (v == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, v);
}

static void res_i64(sqlite3_context *ctx, int64_t v, int64_t null) {
  if (v == null)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, v);
}

static void res_set(sqlite3_context *ctx, uint64_t set) {
  if (set == UINT64_MAX || set == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, (int64_t)set);
}

/* An arg's value as an SQL value (ints, reals, strings). */
static void res_arg(const gp__tp_db *db, sqlite3_context *ctx,
                    const gp__tp_arg *a) {
  switch (a->type) {
  case GP_TP_ARG_STRING:
  case GP_TP_ARG_JSON:
    res_str(db, ctx, (uint32_t)a->value);
    break;
  case GP_TP_ARG_REAL: {
    double d;
    memcpy(&d, &a->value, sizeof(d));
    sqlite3_result_double(ctx, d);
    break;
  }
  case GP_TP_ARG_NULL:
    sqlite3_result_null(ctx);
    break;
  default:
    sqlite3_result_int64(ctx, a->value);
  }
}

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

static const gp__tp_tabdef slice_tab = {
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

static const gp__tp_tabdef gslice_tab = {"__intrinsic_gpu_slice",
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
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const counter_idx[] = {
    "CREATE INDEX %s_track ON %s(track_id, ts)", NULL};

static const gp__tp_tabdef counter_tab = {
    "__intrinsic_counter", counter_cols,  5,           counter_flags,
    counter_rows,          counter_value, counter_int, counter_idx};

/* ------------------------------------------------------------------ */
/* track                                                                 */

static const gp__tp_coldef track_cols[] = {
    {"id", I},
    {"name", T},
    {"type", T},
    {"event_type", T},
    {"dimension_arg_set_id", I},
    {"parent_id", I},
    {"source_arg_set_id", I},
    {"machine_id", I},
    {"counter_unit", T},
    {"utid", I},
    {"upid", I},
    {"track_group_id", I},
    {"description", T},
    {"ugpu", I},
    {"gpu_id", I},
};
static const uint8_t track_flags[] = {
    GP_TP_COL_ID | GP_TP_COL_SORTED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static uint64_t track_rows(const gp__tp_db *db) {
  return db->tracks.n;
}

static bool id_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                   gp__tp_cache *c) {
  (void)db;
  (void)c;
  *out = (int64_t)r;
  return col == 0;
}

static void track_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_track *t = &db->tracks.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    res_str(db, ctx, t->name);
    break;
  case 2:
    res_str(db, ctx, t->type);
    break;
  case 3:
    sqlite3_result_text(ctx, t->is_counter ? "counter" : "slice", -1,
                        SQLITE_STATIC);
    break;
  case 4:
    res_id(ctx, t->dims);
    break;
  case 5:
    res_id(ctx, t->parent);
    break;
  case 6:
    res_id(ctx, t->source);
    break;
  case 7:
    sqlite3_result_int64(ctx, t->machine);
    break;
  case 8:
    res_str(db, ctx, t->unit);
    break;
  case 9:
    res_i64(ctx, t->utid, -1);
    break;
  case 10:
    res_i64(ctx, t->upid, -1);
    break;
  case 12:
    res_str(db, ctx, t->description);
    break;
  case 13:
    res_i64(ctx, t->ugpu, -1);
    break;
  case 14:
    res_i64(ctx, t->gpu, -1);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const no_idx[] = {NULL};

static const gp__tp_tabdef track_tab = {
    "__intrinsic_track", track_cols,  15,     track_flags,
    track_rows,          track_value, id_int, no_idx};

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

static const gp__tp_tabdef args_tab = {
    "__intrinsic_args", args_cols,  9,        args_flags,
    args_rows,          args_value, args_int, args_idx};

/* ------------------------------------------------------------------ */
/* small tables                                                          */

static const gp__tp_coldef gpu_cols[] = {
    {"id", I},         {"gpu", I},          {"name", T}, {"vendor", T},
    {"model", T},      {"architecture", T}, {"uuid", T}, {"pci_bdf", T},
    {"machine_id", I}, {"arg_set_id", I},
};
static const uint8_t id_flags[32] = {GP_TP_COL_ID | GP_TP_COL_SORTED};

static uint64_t gpu_rows(const gp__tp_db *db) {
  return db->gpus.n;
}

static void gpu_value(const gp__tp_db *db, uint64_t r, int col,
                      sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_gpu *g = &db->gpus.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, g->gpu);
    break;
  case 2:
    res_str(db, ctx, g->name);
    break;
  case 3:
    res_str(db, ctx, g->vendor);
    break;
  case 4:
    res_str(db, ctx, g->model);
    break;
  case 5:
    res_str(db, ctx, g->architecture);
    break;
  case 6:
    res_str(db, ctx, g->uuid);
    break;
  case 7:
    res_str(db, ctx, g->pci_bdf);
    break;
  case 8:
    sqlite3_result_int64(ctx, g->machine);
    break;
  default:
    res_id(ctx, g->args);
    break;
  }
}

static const gp__tp_tabdef gpu_tab = {
    "__intrinsic_gpu", gpu_cols,  10,     id_flags,
    gpu_rows,          gpu_value, id_int, no_idx};

static const gp__tp_coldef flow_cols[] = {{"id", I},
                                          {"slice_out", I},
                                          {"slice_in", I},
                                          {"trace_id", I},
                                          {"arg_set_id", I}};
static const uint8_t flow_flags[] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                     GP_TP_COL_INDEXED, GP_TP_COL_INDEXED, 0,
                                     0};

static uint64_t flow_rows(const gp__tp_db *db) {
  return db->f_out.n;
}

static bool flow_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                     gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = db->f_out.v[r];
    return true;
  case 2:
    *out = db->f_in.v[r];
    return true;
  default:
    return false;
  }
}

static void flow_value(const gp__tp_db *db, uint64_t r, int col,
                       sqlite3_context *ctx, gp__tp_cache *c) {
  int64_t v;
  if (flow_int(db, r, col, &v, c))
    sqlite3_result_int64(ctx, v);
  else
    sqlite3_result_null(ctx);
}

static const char *const flow_idx[] = {"CREATE INDEX %s_out ON %s(slice_out)",
                                       "CREATE INDEX %s_in ON %s(slice_in)",
                                       NULL};

static const gp__tp_tabdef flow_tab = {
    "__intrinsic_flow", flow_cols,  5,        flow_flags,
    flow_rows,          flow_value, flow_int, flow_idx};

static const gp__tp_coldef process_cols[] = {
    {"id", I},       {"pid", I},           {"name", T},
    {"start_ts", I}, {"end_ts", I},        {"parent_upid", I},
    {"uid", I},      {"android_appid", I}, {"android_user_id", I},
    {"cmdline", T},  {"arg_set_id", I},    {"machine_id", I},
};

static uint64_t process_rows(const gp__tp_db *db) {
  return db->processes.n;
}

static void process_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_process *p = &db->processes.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, p->pid);
    break;
  case 2:
    res_str(db, ctx, p->name);
    break;
  case 3:
    res_i64(ctx, p->start_ts, INT64_MIN);
    break;
  case 4:
    res_i64(ctx, p->end_ts, INT64_MIN);
    break;
  case 5:
    res_id(ctx, p->parent_upid);
    break;
  case 9:
    res_str(db, ctx, p->cmdline);
    break;
  case 11:
    sqlite3_result_int64(ctx, p->machine);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const gp__tp_tabdef process_tab = {
    "__intrinsic_process", process_cols,  12,     id_flags,
    process_rows,          process_value, id_int, no_idx};

static const gp__tp_coldef thread_cols[] = {
    {"id", I},     {"tid", I},  {"name", T},           {"start_ts", I},
    {"end_ts", I}, {"upid", I}, {"is_main_thread", I}, {"machine_id", I},
};

static uint64_t thread_rows(const gp__tp_db *db) {
  return db->threads.n;
}

static void thread_value(const gp__tp_db *db, uint64_t r, int col,
                         sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_thread *t = &db->threads.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, t->tid);
    break;
  case 2:
    res_str(db, ctx, t->name);
    break;
  case 3:
    res_i64(ctx, t->start_ts, INT64_MIN);
    break;
  case 4:
    res_i64(ctx, t->end_ts, INT64_MIN);
    break;
  case 5:
    res_id(ctx, t->upid);
    break;
  case 6:
    if (t->upid == GP_TP_NONE)
      sqlite3_result_null(ctx);
    else
      sqlite3_result_int64(ctx, db->processes.v[t->upid].pid == t->tid);
    break;
  default:
    sqlite3_result_int64(ctx, t->machine);
    break;
  }
}

static const gp__tp_tabdef thread_tab = {
    "__intrinsic_thread", thread_cols,  8,      id_flags,
    thread_rows,          thread_value, id_int, no_idx};

static const gp__tp_coldef stats_cols[] = {
    {"id", I},     {"name", T},  {"idx", I},         {"severity", T},
    {"source", T}, {"value", I}, {"description", T},
};

static uint64_t stats_rows(const gp__tp_db *db) {
  (void)db;
  return GP_TP_NSTATS;
}

static void stats_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_text(ctx, gp__tp_stat_names[r], -1, SQLITE_STATIC);
    break;
  case 3:
    sqlite3_result_text(ctx, gp__tp_stat_severity[r], -1, SQLITE_STATIC);
    break;
  case 4:
    sqlite3_result_text(ctx, gp__tp_stat_source[r], -1, SQLITE_STATIC);
    break;
  case 5:
    sqlite3_result_int64(ctx, db->stats[r]);
    break;
  case 6:
    sqlite3_result_text(ctx, gp__tp_stat_desc[r], -1, SQLITE_STATIC);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const gp__tp_tabdef stats_tab = {
    "__intrinsic_stats", stats_cols,  7,      id_flags,
    stats_rows,          stats_value, id_int, no_idx};

static const gp__tp_coldef machine_cols[] = {
    {"id", I},      {"raw_id", I},  {"name", T}, {"sysname", T},
    {"release", T}, {"version", T}, {"arch", T}, {"num_cpus", I},
};

static uint64_t machine_rows(const gp__tp_db *db) {
  return db->machines.n;
}

static void machine_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  if (col == 0)
    sqlite3_result_int64(ctx, (int64_t)r);
  else if (col == 1)
    sqlite3_result_int64(ctx, db->machines.v[r].raw_id);
  else
    sqlite3_result_null(ctx);
}

static const gp__tp_tabdef machine_tab = {
    "__intrinsic_machine", machine_cols,  8,      id_flags,
    machine_rows,          machine_value, id_int, no_idx};

static const gp__tp_coldef group_cols[] = {{"id", I},
                                           {"group_id", I},
                                           {"track_id", I},
                                           {"name", T},
                                           {"description", T}};

static uint64_t group_rows(const gp__tp_db *db) {
  return db->counter_groups.n;
}

static void group_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_counter_group *g = &db->counter_groups.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, g->group_id);
    break;
  case 2:
    sqlite3_result_int64(ctx, g->track);
    break;
  case 3:
    res_str(db, ctx, g->name);
    break;
  default:
    res_str(db, ctx, g->description);
    break;
  }
}

static const gp__tp_tabdef group_tab = {"__intrinsic_gpu_counter_group",
                                        group_cols,
                                        5,
                                        id_flags,
                                        group_rows,
                                        group_value,
                                        id_int,
                                        no_idx};

static const gp__tp_coldef context_cols[] = {
    {"id", I}, {"context_id", I}, {"pid", I}, {"api", T}};

static uint64_t context_rows(const gp__tp_db *db) {
  return db->gpu_contexts.n;
}

static void context_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_gpu_context *g = &db->gpu_contexts.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, (int64_t)g->context_id);
    break;
  case 2:
    res_i64(ctx, g->pid, -1);
    break;
  default:
    res_str(db, ctx, g->api);
    break;
  }
}

static const gp__tp_tabdef context_tab = {"__intrinsic_gpu_context",
                                          context_cols,
                                          4,
                                          id_flags,
                                          context_rows,
                                          context_value,
                                          id_int,
                                          no_idx};

static const gp__tp_coldef vk_cols[] = {
    {"id", I},
    {"arg_set_id", I},
    {"source", T},
    {"operation", T},
    {"timestamp", I},
    {"upid", I},
    {"device", I},
    {"device_memory", I},
    {"memory_type", I},
    {"heap", I},
    {"function_name", T},
    {"object_handle", I},
    {"memory_address", I},
    {"memory_size", I},
    {"scope", T},
};

static uint64_t vk_rows(const gp__tp_db *db) {
  return db->vk_allocs.n;
}

static void vk_value(const gp__tp_db *db, uint64_t r, int col,
                     sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_vk_alloc *a = &db->vk_allocs.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    res_id(ctx, a->args);
    break;
  case 2:
    res_str(db, ctx, a->source);
    break;
  case 3:
    res_str(db, ctx, a->operation);
    break;
  case 4:
    sqlite3_result_int64(ctx, a->ts);
    break;
  case 5:
    res_id(ctx, a->upid);
    break;
  case 6:
    res_i64(ctx, a->device, INT64_MIN);
    break;
  case 7:
    res_i64(ctx, a->device_memory, INT64_MIN);
    break;
  case 8:
    res_i64(ctx, a->memory_type, INT64_MIN);
    break;
  case 9:
    res_i64(ctx, a->heap, INT64_MIN);
    break;
  case 10:
    res_str(db, ctx, a->function_name);
    break;
  case 11:
    res_i64(ctx, a->object_handle, INT64_MIN);
    break;
  case 12:
    res_i64(ctx, a->memory_address, INT64_MIN);
    break;
  case 13:
    res_i64(ctx, a->memory_size, INT64_MIN);
    break;
  default:
    res_str(db, ctx, a->scope);
    break;
  }
}

static const gp__tp_tabdef vk_tab = {"__intrinsic_vulkan_memory_allocations",
                                     vk_cols,
                                     15,
                                     id_flags,
                                     vk_rows,
                                     vk_value,
                                     id_int,
                                     no_idx};

const gp__tp_tabdef *const gp__tp_tables[] = {
    &slice_tab,   &gslice_tab, &counter_tab, &track_tab,  &args_tab,
    &gpu_tab,     &flow_tab,   &process_tab, &thread_tab, &stats_tab,
    &machine_tab, &group_tab,  &context_tab, &vk_tab,
};
const int gp__tp_ntables =
    (int)(sizeof(gp__tp_tables) / sizeof(gp__tp_tables[0]));
