/*
 * tables_sched.c - the scheduling tables: __intrinsic_sched_slice (under
 * the sched and sched_slice views) and __intrinsic_thread_state (under
 * thread_state), with Perfetto v58's columns. io_wait and blocked_function
 * come from sched_blocked_reason, which is not imported: always NULL.
 */
#include "tp/tables.h"

static const gp__tp_coldef sched_cols[] = {
    {"id", I},        {"ts", I},       {"dur", I},  {"utid", I},
    {"end_state", T}, {"priority", I}, {"ucpu", I},
};

/* ts never decreases with the row: slices are made in time order. */
static const uint8_t sched_flags[32] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                        GP_TP_COL_SORTED, 0, GP_TP_COL_INDEXED};

static uint64_t sched_rows(const gp__tp_db *db) {
  return db->sched.n;
}

static bool sched_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                      gp__tp_cache *c) {
  (void)c;
  const gp__tp_sched_slice *s = &db->sched.v[r];
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = s->ts;
    return true;
  case 3:
    *out = s->utid;
    return true;
  }
  return false;
}

static void sched_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_sched_slice *s = &db->sched.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, s->ts);
    break;
  case 2:
    sqlite3_result_int64(ctx, s->dur);
    break;
  case 3:
    sqlite3_result_int64(ctx, s->utid);
    break;
  case 4:
    res_str(db, ctx, s->end_state);
    break;
  case 5:
    sqlite3_result_int64(ctx, s->priority);
    break;
  default:
    res_id(ctx, s->ucpu);
    break;
  }
}

static const char *const sched_idx[] = {
    "CREATE INDEX %s_ts ON %s(ts)", "CREATE INDEX %s_utid ON %s(utid)", NULL};

const gp__tp_tabdef gp__tp_sched_tab = {"__intrinsic_sched_slice",
                                        sched_cols,
                                        7,
                                        sched_flags,
                                        sched_rows,
                                        sched_value,
                                        sched_int,
                                        sched_idx};

static const gp__tp_coldef state_cols[] = {
    {"id", I},
    {"ts", I},
    {"dur", I},
    {"utid", I},
    {"state", T},
    {"io_wait", I},
    {"blocked_function", T},
    {"waker_utid", I},
    {"waker_id", I},
    {"irq_context", I},
    {"ucpu", I},
};

static const uint8_t state_flags[32] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                        GP_TP_COL_SORTED, 0, GP_TP_COL_INDEXED};

static uint64_t state_rows(const gp__tp_db *db) {
  return db->thread_states.n;
}

static bool state_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                      gp__tp_cache *c) {
  (void)c;
  const gp__tp_thread_state *s = &db->thread_states.v[r];
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = s->ts;
    return true;
  case 3:
    *out = s->utid;
    return true;
  }
  return false;
}

static void state_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_thread_state *s = &db->thread_states.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, s->ts);
    break;
  case 2:
    sqlite3_result_int64(ctx, s->dur);
    break;
  case 3:
    sqlite3_result_int64(ctx, s->utid);
    break;
  case 4:
    res_str(db, ctx, s->state);
    break;
  case 7:
    res_id(ctx, s->waker_utid);
    break;
  case 8:
    res_id(ctx, s->waker_id);
    break;
  case 9:
    res_i64(ctx, s->irq_context, -1);
    break;
  case 10:
    res_id(ctx, s->ucpu);
    break;
  default: /* io_wait, blocked_function */
    sqlite3_result_null(ctx);
    break;
  }
}

static const char *const state_idx[] = {
    "CREATE INDEX %s_ts ON %s(ts)", "CREATE INDEX %s_utid ON %s(utid)", NULL};

const gp__tp_tabdef gp__tp_thread_state_tab = {"__intrinsic_thread_state",
                                               state_cols,
                                               11,
                                               state_flags,
                                               state_rows,
                                               state_value,
                                               state_int,
                                               state_idx};
