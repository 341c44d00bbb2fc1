/*
 * tables_raw.c - the ftrace_event table (Perfetto's
 * __intrinsic_ftrace_event, every ftrace event) and the cpu table
 * (__intrinsic_cpu: GP_TP_CPUS_PER_MACHINE rows per machine, a row's cpu
 * set once that CPU was seen), read out of the columnar store for vtab.c
 * and schema.c as tables.c's are.
 */
#include "tp/tables.h"

/* ------------------------------------------------------------------ */
/* ftrace_event                                                          */

static const gp__tp_coldef fe_cols[] = {
    {"id", I},         {"ts", I},           {"name", T}, {"utid", I},
    {"arg_set_id", I}, {"common_flags", I}, {"ucpu", I},
};
static const uint8_t fe_flags[] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                   GP_TP_COL_SORTED,
                                   0,
                                   GP_TP_COL_INDEXED,
                                   0,
                                   0,
                                   0};

static uint64_t fe_rows(const gp__tp_db *db) {
  return db->fe_ts.n;
}

static bool fe_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                   gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = db->fe_ts.v[r];
    return true;
  case 3:
    *out = db->fe_utid.v[r];
    return true;
  case 4:
    *out = db->fe_args.v[r];
    return db->fe_args.v[r] != GP_TP_NONE;
  case 5:
    *out = db->fe_flags.v[r];
    return true;
  case 6:
    *out = db->fe_ucpu.v[r];
    return true;
  default:
    return false;
  }
}

static void fe_value(const gp__tp_db *db, uint64_t r, int col,
                     sqlite3_context *ctx, gp__tp_cache *c) {
  int64_t v;
  if (col == 2)
    res_str(db, ctx, db->fe_name.v[r]);
  else if (fe_int(db, r, col, &v, c))
    sqlite3_result_int64(ctx, v);
  else
    sqlite3_result_null(ctx);
}

static const char *const fe_idx[] = {"CREATE INDEX %s_utid ON %s(utid)", NULL};

/* See tables.h. */
const gp__tp_tabdef gp__tp_ftrace_event_tab = {"__intrinsic_ftrace_event",
                                               fe_cols,
                                               7,
                                               fe_flags,
                                               fe_rows,
                                               fe_value,
                                               fe_int,
                                               fe_idx};

/* ------------------------------------------------------------------ */
/* cpu                                                                   */

static const gp__tp_coldef cpu_cols[] = {
    {"id", I},         {"cpu", I},      {"cluster_id", I}, {"processor", T},
    {"machine_id", I}, {"capacity", I}, {"arg_set_id", I},
};

static uint64_t cpu_rows(const gp__tp_db *db) {
  return (uint64_t)db->machines.n * GP_TP_CPUS_PER_MACHINE;
}

static void cpu_value(const gp__tp_db *db, uint64_t r, int col,
                      sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  bool seen = r < db->cpu_seen.n && db->cpu_seen.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    if (seen)
      sqlite3_result_int64(ctx, (int64_t)(r % GP_TP_CPUS_PER_MACHINE));
    else
      sqlite3_result_null(ctx);
    break;
  case 2:
    sqlite3_result_int64(ctx, 0);
    break;
  case 4:
    sqlite3_result_int64(ctx, (int64_t)(r / GP_TP_CPUS_PER_MACHINE));
    break;
  default:
    sqlite3_result_null(ctx);
  }
}

/* See tables.h. */
const gp__tp_tabdef gp__tp_cpu_tab = {
    "__intrinsic_cpu", cpu_cols,     7, gp__tp_id_flags, cpu_rows, cpu_value,
    gp__tp_id_int,     gp__tp_no_idx};
