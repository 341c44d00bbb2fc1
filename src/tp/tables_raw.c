/*
 * tables_raw.c - the ftrace_event table (Perfetto's
 * __intrinsic_ftrace_event, every ftrace event), the cpu table
 * (__intrinsic_cpu: GP_TP_CPUS_PER_MACHINE rows per machine, a row's cpu
 * set once that CPU was seen) and the CPUs' frequencies (cpu_freq), read out of
 * the columnar store for vtab.c and schema.c as tables.c's are.
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
  const gp__tp_cpu *row = r < db->cpus.n ? &db->cpus.v[r] : NULL;
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    if (row && row->seen)
      sqlite3_result_int64(ctx, (int64_t)(r % GP_TP_CPUS_PER_MACHINE));
    else
      sqlite3_result_null(ctx);
    break;
  case 2:
    sqlite3_result_int64(ctx, row ? row->cluster : 0);
    break;
  case 3:
    res_str(db, ctx, row ? row->processor : GP_TP_NONE);
    break;
  case 4:
    sqlite3_result_int64(ctx, (int64_t)(r / GP_TP_CPUS_PER_MACHINE));
    break;
  case 5:
    res_i64(ctx, row ? row->capacity : -1, -1);
    break;
  default:
    res_id(ctx, row ? row->args : GP_TP_NONE);
  }
}

/* See tables.h. */
const gp__tp_tabdef gp__tp_cpu_tab = {
    "__intrinsic_cpu", cpu_cols,     7, gp__tp_id_flags, cpu_rows, cpu_value,
    gp__tp_id_int,     gp__tp_no_idx};

/* ------------------------------------------------------------------ */
/* cpu_freq                                                              */

static const gp__tp_coldef cf_cols[] = {{"id", I}, {"ucpu", I}, {"freq", I}};

static uint64_t cf_rows(const gp__tp_db *db) {
  return db->cf_ucpu.n;
}

static void cf_value(const gp__tp_db *db, uint64_t r, int col,
                     sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  sqlite3_result_int64(ctx, col == 0   ? (int64_t)r
                            : col == 1 ? (int64_t)db->cf_ucpu.v[r]
                                       : (int64_t)db->cf_freq.v[r]);
}

/* See tables.h. */
const gp__tp_tabdef gp__tp_cpu_freq_tab = {
    "__intrinsic_cpu_freq", cf_cols,      3, gp__tp_id_flags, cf_rows, cf_value,
    gp__tp_id_int,          gp__tp_no_idx};
