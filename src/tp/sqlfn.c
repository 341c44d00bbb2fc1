/*
 * sqlfn.c - scalar SQL functions of the prelude: extract_arg() and the
 * trace bounds (trace_start(), trace_end(), trace_dur()).
 *
 * extract_arg(arg_set_id, key) returns the typed value of one arg: an
 * integer for int, uint, bool and pointer args, a real, or a string;
 * NULL if the set has no such key. In memory it reads the store directly;
 * with a database file it looks the arg up through the args index.
 */
#include <string.h>

#include "gpuperf/error.h"
#include "tp/sqlInt.h"

static void extract_mem(sqlite3_context *ctx, gp_tp *tp, sqlite3_int64 set,
                        const char *key, int keylen) {
  const gp__tp_db *db = tp->db;
  uint32_t k = gp__tp_str_find(&db->strings, key, (size_t)keylen);
  gp__tp_arg a;
  if (set < 0 || k == GP_TP_NONE ||
      !gp__tp_set_find(db, (uint64_t)set, k, &a)) {
    sqlite3_result_null(ctx);
    return;
  }
  switch (a.type) {
  case GP_TP_ARG_STRING:
  case GP_TP_ARG_JSON:
    if ((uint32_t)a.value == GP_TP_NONE)
      sqlite3_result_null(ctx);
    else
      sqlite3_result_text(ctx, gp__tp_str(&db->strings, (uint32_t)a.value),
                          (int)gp__tp_str_len(&db->strings, (uint32_t)a.value),
                          SQLITE_STATIC);
    break;
  case GP_TP_ARG_REAL: {
    double d;
    memcpy(&d, &a.value, sizeof(d));
    sqlite3_result_double(ctx, d);
    break;
  }
  case GP_TP_ARG_NULL:
    sqlite3_result_null(ctx);
    break;
  default:
    sqlite3_result_int64(ctx, a.value);
  }
}

static void extract_db(sqlite3_context *ctx, gp_tp *tp, sqlite3_int64 set,
                       sqlite3_value *key) {
  if (!tp->extract_stmt &&
      sqlite3_prepare_v3(
          tp->sql,
          "SELECT CASE WHEN value_type IN ('string', 'json') THEN string_value "
          "WHEN value_type = 'real' THEN real_value ELSE int_value END "
          "FROM __intrinsic_args WHERE arg_set_id = ?1 AND key = ?2 LIMIT 1",
          -1, SQLITE_PREPARE_PERSISTENT, &tp->extract_stmt,
          NULL) != SQLITE_OK) {
    sqlite3_result_error(ctx, sqlite3_errmsg(tp->sql), -1);
    return;
  }
  sqlite3_stmt *st = tp->extract_stmt;
  sqlite3_bind_int64(st, 1, set);
  sqlite3_bind_value(st, 2, key);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
  else if (rc == SQLITE_DONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_error(ctx, sqlite3_errmsg(tp->sql), -1);
  sqlite3_reset(st);
}

static void fn_extract_arg(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  gp_tp *tp = sqlite3_user_data(ctx);
  if (argc != 2) {
    sqlite3_result_error(ctx, "extract_arg: needs (arg_set_id, key)", -1);
    return;
  }
  if (sqlite3_value_type(v[0]) == SQLITE_NULL ||
      sqlite3_value_type(v[1]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  if (sqlite3_value_numeric_type(v[0]) != SQLITE_INTEGER) {
    sqlite3_result_error(ctx, "extract_arg: arg_set_id must be an integer", -1);
    return;
  }
  sqlite3_int64 set = sqlite3_value_int64(v[0]);
  if (tp->db) {
    const char *key = (const char *)sqlite3_value_text(v[1]);
    extract_mem(ctx, tp, set, key ? key : "", sqlite3_value_bytes(v[1]));
  } else {
    extract_db(ctx, tp, set, v[1]);
  }
}

static void fn_trace_start(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  (void)v;
  gp_tp *tp = sqlite3_user_data(ctx);
  sqlite3_result_int64(ctx, tp->info.start_ts);
}

static void fn_trace_end(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  (void)v;
  gp_tp *tp = sqlite3_user_data(ctx);
  sqlite3_result_int64(ctx, tp->info.end_ts);
}

static void fn_trace_dur(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  (void)argc;
  (void)v;
  gp_tp *tp = sqlite3_user_data(ctx);
  sqlite3_result_int64(ctx, gp__tp_ssub(tp->info.end_ts, tp->info.start_ts));
}

/* See sqlInt.h. */
int gp__tp_functions_register(gp_tp *tp) {
  int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
  struct {
    const char *name;
    int nargs;
    void (*fn)(sqlite3_context *, int, sqlite3_value **);
  } fns[] = {
      {"extract_arg", 2, fn_extract_arg},
      {"trace_start", 0, fn_trace_start},
      {"trace_end", 0, fn_trace_end},
      {"trace_dur", 0, fn_trace_dur},
  };
  for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
    if (sqlite3_create_function(tp->sql, fns[i].name, fns[i].nargs, flags, tp,
                                fns[i].fn, NULL, NULL) != SQLITE_OK)
      return GP_ESQL;
  return 0;
}
