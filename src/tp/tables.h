/*
 * tables.h - what the two files of the table catalogue share: SQL value
 * helpers and the table definitions (tables.c: the large tables;
 * tables_small.c: the others and the catalogue itself).
 */
#ifndef GPUPERF_TP_TABLES_H
#define GPUPERF_TP_TABLES_H

#include <string.h>

#include "tp/sqlInt.h"

#define I "INTEGER"
#define R "REAL"
#define T "TEXT"

static inline void res_str(const gp__tp_db *db, sqlite3_context *ctx,
                           uint32_t s) {
  if (s == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_text(ctx, gp__tp_str(&db->strings, s),
                        (int)gp__tp_str_len(&db->strings, s), SQLITE_STATIC);
}

static inline void res_id(sqlite3_context *ctx, uint32_t v) {
  if (v == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, v);
}

static inline void res_i64(sqlite3_context *ctx, int64_t v, int64_t null) {
  if (v == null)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, v);
}

static inline void res_set(sqlite3_context *ctx, uint64_t set) {
  if (set == UINT64_MAX || set == GP_TP_NONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_int64(ctx, (int64_t)set);
}

/* An arg's value as an SQL value (ints, reals, strings). */
static inline void res_arg(const gp__tp_db *db, sqlite3_context *ctx,
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

/* Shared by tables whose only sorted column is id. */
bool gp__tp_id_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                   gp__tp_cache *c);
extern const char *const gp__tp_no_idx[];
extern const uint8_t gp__tp_id_flags[32];

extern const gp__tp_tabdef gp__tp_sched_tab, gp__tp_thread_state_tab;
extern const gp__tp_tabdef gp__tp_slice_tab, gp__tp_gslice_tab,
    gp__tp_counter_tab, gp__tp_args_tab;
/* tables_raw.c */
extern const gp__tp_tabdef gp__tp_ftrace_event_tab, gp__tp_cpu_tab,
    gp__tp_cpu_freq_tab;

#endif /* GPUPERF_TP_TABLES_H */
