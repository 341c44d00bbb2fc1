/*
 * aggbuf.c - the aggregates behind the interval macros, the registry of
 * the buffers they hand over, and what the interval table-valued
 * functions share (see aggbuf.h, intervals of psql.c's macros).
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/aggbuf.h"

/* ------------------------------------------------------------------ */
/* Aggregates: rows into a buffer, handed over by handle                 */

/* What the aggregates return: a handle to a buffer in tp->bufs. */

/* What the aggregates return. */
typedef struct handle {
  uint32_t magic;
  uint32_t pad;
  uint64_t id; /* 0: an empty table */
} handle;

/* The aggregate's state (in SQLite's aggregate context).
 *
 * A query often aggregates the same rows twice (psql_cte.c reads a CTE's
 * body once more for an interval intersection): while the records match
 * those of the latest buffer of the same kind, they are compared, not
 * stored, and an aggregate that ends matching all of it hands out that
 * buffer again, with what was computed from it (gp__tp_buf.derived). The
 * first difference copies the matched prefix and goes on as usual. */
typedef struct acc {
  GP_TP_VEC(uint8_t) data;
  uint64_t memo_key; /* __gp_ci_agg's first argument when given, else 0 */
  uint64_t count;
  uint32_t nparts;
  bool error, started;
  const char *why;
  uint64_t same_id; /* the buffer still matched so far, 0 if none */
  const uint8_t *same_p;
  size_t same_n, matched;
} acc;

/* Stops matching: the data is the matched prefix, then its own. */
static bool diverge(acc *a) {
  size_t m = a->matched;
  a->same_id = 0;
  if (!m)
    return true;
  if (!gp__tp_vec_reserve(&a->data, m))
    return false;
  memcpy(a->data.v, a->same_p, m);
  a->data.n = m;
  return true;
}

static bool put(acc *a, const void *d, size_t n) {
  if (a->same_id) {
    if (a->matched + n <= a->same_n &&
        memcmp(a->same_p + a->matched, d, n) == 0) {
      a->matched += n;
      return true;
    }
    if (!diverge(a))
      return false;
  }
  if (!gp__tp_vec_reserve(&a->data, n))
    return false;
  memcpy(a->data.v + a->data.n, d, n);
  a->data.n += n;
  return true;
}

/* The bytes put so far (while matching, the matched buffer's). */
static const uint8_t *acc_bytes(const acc *a) {
  return a->same_id ? a->same_p : a->data.v;
}

/* A step's state (on the first row, with the latest buffer of this kind
 * to match), or NULL where the step has nothing to do: out of memory
 * (reported to SQLite here) or an earlier row already failed. */
static acc *step_acc(sqlite3_context *ctx, uint32_t magic) {
  acc *a = sqlite3_aggregate_context(ctx, sizeof(acc));
  if (!a) {
    sqlite3_result_error_nomem(ctx);
    return NULL;
  }
  if (a->error)
    return NULL;
  if (!a->started) {
    a->started = true;
    gp_tp *tp = sqlite3_user_data(ctx);
    for (size_t i = tp->bufs.n; i-- > 0;)
      if (tp->bufs.v[i].magic == magic) {
        a->same_id = tp->bufs.v[i].id;
        a->same_p = tp->bufs.v[i].p;
        a->same_n = tp->bufs.v[i].n;
        break;
      }
  }
  return a;
}

static void acc_fail(acc *a, const char *why) {
  a->error = true;
  a->why = why;
}

/* See sqlInt.h. */
void gp__tp_bufs_clear(gp_tp *tp) {
  for (size_t i = 0; i < tp->bufs.n; i++) {
    gp__tp_buf *b = &tp->bufs.v[i];
    if (b->derived)
      b->free_derived(b->derived);
    gp__tp_vec_release(b->p, b->cap, 1);
  }
  gp__tp_vec_free(&tp->bufs);
  gp__tp_vec_free(&tp->memos);
}

/* See aggbuf.h. */
gp__tp_buf *gp__tp_buf_find(gp_tp *tp, uint64_t id) {
  for (size_t i = tp->bufs.n; i-- > 0;)
    if (tp->bufs.v[i].id == id)
      return &tp->bufs.v[i];
  return NULL;
}

/* Keeps the result of a keyed aggregate for __gp_ci_memo (a failure to
 * keep it only costs the next evaluation its pass over the rows). */
static void remember(gp_tp *tp, const acc *a, uint64_t id) {
  if (a && a->memo_key) {
    gp__tp_memo m = {a->memo_key, id};
    (void)gp__tp_vec_push(&tp->memos, m);
  }
}

static void acc_final(sqlite3_context *ctx, uint32_t magic) {
  gp_tp *tp = sqlite3_user_data(ctx);
  acc *a = sqlite3_aggregate_context(ctx, 0);
  handle h = {magic, 0, 0};
  if (a && a->error) {
    sqlite3_result_error(ctx, a->why, -1);
    gp__tp_vec_free(&a->data);
    return;
  }
  if (a && a->count && a->same_id) {
    gp__tp_buf *same = gp__tp_buf_find(tp, a->same_id);
    if (same && a->matched == same->n && a->count == same->count &&
        a->nparts == same->nparts) {
      h.id = same->id; /* the same rows: the same buffer */
      remember(tp, a, h.id);
      sqlite3_result_blob(ctx, &h, sizeof(h), SQLITE_TRANSIENT);
      return;
    }
    if (!diverge(a)) {
      gp__tp_vec_free(&a->data);
      sqlite3_result_error_nomem(ctx);
      return;
    }
  }
  if (a && a->count) {
    gp__tp_buf b = {++tp->next_buf, a->data.v, a->data.n, a->data.cap, a->count,
                    a->nparts,      magic,     NULL,      NULL};
    if (!gp__tp_vec_push(&tp->bufs, b)) {
      gp__tp_vec_free(&a->data);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    a->data.v = NULL; /* now owned by tp->bufs */
    a->data.ready = 0;
    h.id = b.id;
  }
  remember(tp, a, h.id);
  sqlite3_result_blob(ctx, &h, sizeof(h), SQLITE_TRANSIENT);
}

/* See aggbuf.h. */
gp__tp_buf *gp__tp_arg_buf(gp_tp *tp, sqlite3_value *v, uint32_t magic,
                           bool *empty) {
  *empty = false;
  if (sqlite3_value_type(v) != SQLITE_BLOB ||
      sqlite3_value_bytes(v) != (int)sizeof(handle))
    return NULL;
  handle h;
  memcpy(&h, sqlite3_value_blob(v), sizeof(h));
  if (h.magic != magic)
    return NULL;
  if (h.id == 0) {
    *empty = true;
    return NULL;
  }
  return gp__tp_buf_find(tp, h.id);
}

/* ------------------------------------------------------------------ */
/* __gp_iv_agg(id, ts, dur, p...)                                        */

/*
 * Puts one record: its fixed part rec[0, n), then partition values
 * v[0, nv), each a type byte and 8 bytes (integer, real), 4 + n bytes
 * (text, blob) or nothing (NULL). rec has room for MAX_PARTS more values
 * of 9 bytes. The record is assembled there and put whole (one put per
 * row, not one per value: put was a quarter of the seed query); text and
 * blob bytes go straight from SQLite's value. Returns false if memory
 * runs out.
 */
static bool put_record(acc *b, uint8_t *rec, size_t n, int nv,
                       sqlite3_value **v) {
  for (int i = 0; i < nv; i++) {
    uint8_t t = (uint8_t)sqlite3_value_type(v[i]);
    rec[n++] = t;
    if (t == SQLITE_INTEGER) {
      int64_t x = sqlite3_value_int64(v[i]);
      memcpy(rec + n, &x, 8);
      n += 8;
    } else if (t == SQLITE_FLOAT) {
      double d = sqlite3_value_double(v[i]);
      memcpy(rec + n, &d, 8);
      n += 8;
    } else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
      const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_value_text(v[i])
                                       : sqlite3_value_blob(v[i]);
      uint32_t len = (uint32_t)sqlite3_value_bytes(v[i]);
      memcpy(rec + n, &len, 4);
      n += 4;
      if (!put(b, rec, n) || (len && !put(b, p, len)))
        return false;
      n = 0;
    }
  }
  return n == 0 || put(b, rec, n);
}

/* Puts an interval row of __gp_iv_agg or __gp_iv_ci: the fixed bytes of
 * rec (room for the partition values after them), then the partition
 * values v[3 .. argc). */
static void iv_row(acc *b, uint8_t *rec, size_t fixed, int argc,
                   sqlite3_value **v) {
  b->nparts = (uint32_t)(argc - 3);
  if (!put_record(b, rec, fixed, argc - 3, v + 3)) {
    acc_fail(b, "interval intersect: out of memory");
    return;
  }
  b->count++;
}

/* Record: id, ts, dur (int64 each), then the partition values. */
static void iv_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  acc *b = step_acc(ctx, IV_MAGIC);
  if (!b)
    return;
  if (argc < 3 || argc > 3 + MAX_PARTS) {
    acc_fail(b, "interval intersect: bad number of columns");
    return;
  }
  for (int i = 0; i < 3; i++)
    if (sqlite3_value_type(v[i]) != SQLITE_INTEGER) {
      acc_fail(b, "interval intersect: id, ts and dur must be integers");
      return;
    }
  int64_t id = sqlite3_value_int64(v[0]), ts = sqlite3_value_int64(v[1]),
          dur = sqlite3_value_int64(v[2]);
  if (ts < 0 || dur < 0) {
    acc_fail(b, "interval intersect: ts and dur must not be negative");
    return;
  }
  uint8_t rec[24 + MAX_PARTS * 9];
  memcpy(rec, &id, 8);
  memcpy(rec + 8, &ts, 8);
  memcpy(rec + 16, &dur, 8);
  iv_row(b, rec, 24, argc, v);
}

static void iv_final(sqlite3_context *ctx) {
  acc_final(ctx, IV_MAGIC);
}

/* ------------------------------------------------------------------ */
/* __gp_iv_ci(ci, trace_end, track_id, p...)                             */

/*
 * The buffer: the counter buffer's id (a CI_MAGIC handle's) and
 * trace_end, 16 bytes, then per row a record: track_id (int64) and the
 * partition values as __gp_iv_agg's. Every row names the same counter
 * buffer and trace_end (psql_cte.c passes __gp_counter_tracks' hidden
 * columns).
 */
static void ivc_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  acc *b = step_acc(ctx, IVC_MAGIC);
  if (!b)
    return;
  if (argc < 3 || argc > 3 + MAX_PARTS) {
    acc_fail(b, "interval intersect: bad number of columns");
    return;
  }
  bool empty;
  gp__tp_buf *ci =
      gp__tp_arg_buf(sqlite3_user_data(ctx), v[0], CI_MAGIC, &empty);
  if (!ci || sqlite3_value_type(v[1]) != SQLITE_INTEGER ||
      sqlite3_value_type(v[2]) != SQLITE_INTEGER) {
    acc_fail(b, "interval intersect: not a table of counter tracks");
    return;
  }
  uint64_t head[2] = {ci->id, (uint64_t)sqlite3_value_int64(v[1])};
  if (b->count == 0 ? !put(b, head, sizeof(head))
                    : memcmp(head, acc_bytes(b), sizeof(head)) != 0) {
    acc_fail(b, b->count ? "interval intersect: tracks of different counter "
                           "tables"
                         : "interval intersect: out of memory");
    return;
  }
  int64_t track = sqlite3_value_int64(v[2]);
  uint8_t rec[8 + MAX_PARTS * 9];
  memcpy(rec, &track, 8);
  iv_row(b, rec, 8, argc, v);
}

static void ivc_final(sqlite3_context *ctx) {
  acc_final(ctx, IVC_MAGIC);
}

/* ------------------------------------------------------------------ */
/* __gp_ci_agg(id, ts, track_id, value)                                  */

static void ci_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  acc *b = step_acc(ctx, CI_MAGIC);
  if (!b || (argc != 4 && argc != 5))
    return;
  if (argc == 5) { /* __gp_ci_agg(key, ...): see __gp_ci_memo */
    b->memo_key = (uint64_t)sqlite3_value_int64(v[0]);
    v++;
  }
  if (sqlite3_value_type(v[3]) == SQLITE_NULL)
    return; /* a counter row without value has no interval */
  for (int i = 0; i < 3; i++)
    if (sqlite3_value_type(v[i]) != SQLITE_INTEGER) {
      acc_fail(b, "counter_leading_intervals: id, ts and track_id must be "
                  "integers");
      return;
    }
  ci_rec r = {sqlite3_value_int64(v[0]), sqlite3_value_int64(v[1]),
              sqlite3_value_int64(v[2]), sqlite3_value_double(v[3])};
  if (!put(b, &r, sizeof(r))) {
    acc_fail(b, "counter_leading_intervals: out of memory");
    return;
  }
  b->count++;
}

static void ci_final(sqlite3_context *ctx) {
  acc_final(ctx, CI_MAGIC);
}

/* __gp_ci_tracks(key, track_id): the state's data are the track ids. */
static void ci_tracks_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  /* Magic 0: no buffer to match, the tracks are not what is handed out. */
  acc *b = step_acc(ctx, 0);
  if (!b || argc != 2)
    return;
  b->memo_key = (uint64_t)sqlite3_value_int64(v[0]);
  if (sqlite3_value_type(v[1]) != SQLITE_INTEGER) {
    acc_fail(b, "counter_leading_intervals: id, ts and track_id must be "
                "integers");
    return;
  }
  int64_t track = sqlite3_value_int64(v[1]);
  if (!put(b, &track, sizeof(track))) {
    acc_fail(b, "counter_leading_intervals: out of memory");
    return;
  }
  b->count++;
}

/* The buffer of the tracks' rows, handed out as __gp_ci_agg's is. */
static void ci_tracks_final(sqlite3_context *ctx) {
  gp_tp *tp = sqlite3_user_data(ctx);
  acc *a = sqlite3_aggregate_context(ctx, 0);
  handle h = {CI_MAGIC, 0, 0};
  gp__tp_buf b = {0};
  int rc = 0;
  if (a && a->error) {
    sqlite3_result_error(ctx, a->why, -1);
  } else if (a && a->count &&
             (rc = gp__tp_counter_rows(tp, (const int64_t *)a->data.v, a->count,
                                       &b)) != 0) {
    if (rc == GP_ENOMEM)
      sqlite3_result_error_nomem(ctx);
    else
      sqlite3_result_error(ctx, "counter rows: the tables are not in memory",
                           -1);
  } else {
    b.id = b.count ? tp->next_buf + 1 : 0;
    if (b.count && !gp__tp_vec_push(&tp->bufs, b)) {
      gp__tp_vec_release(b.p, b.cap, 1);
      sqlite3_result_error_nomem(ctx);
    } else {
      if (b.count)
        h.id = ++tp->next_buf; /* b now owned by tp->bufs */
      else
        gp__tp_vec_release(b.p, b.cap, 1);
      remember(tp, a, h.id);
      sqlite3_result_blob(ctx, &h, sizeof(h), SQLITE_TRANSIENT);
    }
  }
  if (a)
    gp__tp_vec_free(&a->data);
}

/* __gp_ci_memo(key): the handle a keyed __gp_ci_agg(key, ...) returned
 * earlier in this query, or NULL. psql_cte.c writes
 * COALESCE(__gp_ci_memo(k), (SELECT __gp_ci_agg(k, ...) ...)) where a
 * statement evaluates the same counter intervals twice, so that the
 * second evaluation does not read the counter rows again. */
static void ci_memo(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  gp_tp *tp = sqlite3_user_data(ctx);
  if (argc != 1 || sqlite3_value_type(v[0]) != SQLITE_INTEGER)
    return; /* NULL */
  uint64_t key = (uint64_t)sqlite3_value_int64(v[0]);
  for (size_t i = tp->memos.n; i-- > 0;)
    if (tp->memos.v[i].key == key) {
      handle h = {CI_MAGIC, 0, tp->memos.v[i].id};
      sqlite3_result_blob(ctx, &h, sizeof(h), SQLITE_TRANSIENT);
      return;
    }
}

/* See aggbuf.h. */
int gp__tp_hidden_best_index(sqlite3_index_info *info, int first_hidden,
                             int nhidden) {
  int mask = 0;
  int argi[32];
  for (int i = 0; i < 32; i++)
    argi[i] = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    int h = c->iColumn - first_hidden;
    if (h < 0 || h >= nhidden || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if (!c->usable)
      return SQLITE_CONSTRAINT;
    mask |= 1 << h;
    argi[h] = i;
  }
  int arg = 1;
  for (int h = 0; h < nhidden; h++)
    if (argi[h] >= 0) {
      info->aConstraintUsage[argi[h]].argvIndex = arg++;
      info->aConstraintUsage[argi[h]].omit = 1;
    }
  info->idxNum = mask;
  info->estimatedCost = 1000;
  info->estimatedRows = 1000;
  return SQLITE_OK;
}

/* See aggbuf.h. */
int gp__tp_vtab_error(sqlite3_vtab *tab, const char *msg) {
  sqlite3_free(tab->zErrMsg);
  tab->zErrMsg = sqlite3_mprintf("%s", msg);
  return SQLITE_ERROR;
}

/* See sqlInt.h. */
int gp__tp_intervals_register(gp_tp *tp) {
  int rc = sqlite3_create_function(tp->sql, "__gp_iv_agg", -1, SQLITE_UTF8, tp,
                                   NULL, iv_step, iv_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_iv_ci", -1, SQLITE_UTF8, tp,
                                 NULL, ivc_step, ivc_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_ci_agg", 4, SQLITE_UTF8, tp,
                                 NULL, ci_step, ci_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_ci_agg", 5, SQLITE_UTF8, tp,
                                 NULL, ci_step, ci_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_ci_tracks", 2, SQLITE_UTF8, tp,
                                 NULL, ci_tracks_step, ci_tracks_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_ci_memo", 1, SQLITE_UTF8, tp,
                                 ci_memo, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_intersect",
                               &gp__tp_intersect_module, tp);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_counter_intervals",
                               &gp__tp_counter_intervals_module, tp);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_counter_tracks",
                               &gp__tp_counter_tracks_module, tp);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_counter_ids",
                               &gp__tp_counter_ids_module, tp);
  return rc == SQLITE_OK ? 0 : GP_ESQL;
}
