/*
 * counter_intervals.c - counter_leading_intervals!: counter rows into
 * (ts, dur, value) intervals, each value holding until the next sample of
 * its track (the last until trace_end()).
 *
 * Per track, in ts order (ties in input order), runs of equal values are
 * thinned as Perfetto's stdlib does: a value equal to the last two kept
 * is held back; the latest held-back row is kept when the value changes,
 * and dropped at the end; a held row at ts 0 is never kept.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/aggbuf.h"

/* ------------------------------------------------------------------ */
/* __gp_counter_intervals(handle, trace_end)                             */

typedef struct ci_vtab {
  sqlite3_vtab base;
  gp_tp *tp;
} ci_vtab;

/* The kept rows (indices into the records, in output order); a row's
 * interval lasts until the next kept row of the same track. */
typedef struct ci_cursor {
  sqlite3_vtab_cursor base;
  const ci_rec *rec;
  uint32_t *kept;
  uint64_t n, row;
  int64_t trace_end;
} ci_cursor;

enum {
  CI_ID,
  CI_TS,
  CI_DUR,
  CI_TRACK,
  CI_VALUE,
  CI_NEXT,
  CI_DELTA,
  CI_BLOB,
  CI_END
};

static int ci_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(
      db, "CREATE TABLE x(id, ts, dur, track_id, value, next_value, "
          "delta_value, b HIDDEN, trace_end HIDDEN)");
  if (rc != SQLITE_OK)
    return rc;
  ci_vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  v->tp = aux;
  *out = &v->base;
  return SQLITE_OK;
}

static int ci_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int ci_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  return gp__tp_hidden_best_index(info, CI_BLOB, 2);
}

static int ci_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  ci_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *out = &c->base;
  return SQLITE_OK;
}

static int ci_close(sqlite3_vtab_cursor *cur) {
  free(((ci_cursor *)cur)->kept);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int ci_cmp(const void *x, const void *y, void *arg) {
  const ci_rec *rec = arg;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  const ci_rec *a = &rec[i], *b = &rec[j];
  if (a->track != b->track)
    return a->track < b->track ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return i < j ? -1 : (i > j);
}

static int ci_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                     int argc, sqlite3_value **argv) {
  (void)s;
  ci_cursor *c = (ci_cursor *)cur;
  ci_vtab *v = (ci_vtab *)cur->pVtab;
  free(c->kept);
  c->kept = NULL;
  c->n = c->row = 0;
  bool empty;
  const gp__tp_buf *b = mask == 3 && argc == 2
                            ? gp__tp_arg_buf(v->tp, argv[0], CI_MAGIC, &empty)
                            : NULL;
  if (!b && !(mask == 3 && argc == 2 && empty))
    return gp__tp_vtab_error(cur->pVtab,
                             "counter_leading_intervals: not a counter table");
  if (!b)
    return SQLITE_OK;
  c->trace_end = sqlite3_value_int64(argv[1]);
  uint64_t n = b->count;
  if (n > b->n / sizeof(ci_rec) || n > UINT32_MAX)
    return gp__tp_vtab_error(cur->pVtab,
                             "counter_leading_intervals: bad input");
  const ci_rec *rec = (const ci_rec *)b->p;
  c->rec = rec;
  uint32_t *order = malloc((n ? n : 1) * 4);
  c->kept = malloc((n ? n : 1) * 4);
  if (!order || !c->kept) {
    free(order);
    return SQLITE_NOMEM;
  }
  /* By track, then ts, then input order; usually the input already is. */
  bool sorted = true;
  for (uint64_t i = 0; i < n; i++) {
    order[i] = (uint32_t)i;
    if (i && (rec[i].track < rec[i - 1].track ||
              (rec[i].track == rec[i - 1].track && rec[i].ts < rec[i - 1].ts)))
      sorted = false;
  }
  if (!sorted)
    qsort_r(order, n, 4, ci_cmp, (void *)rec);
  for (uint64_t lo = 0; lo < n;) {
    uint64_t hi = lo;
    while (hi < n && rec[order[hi]].track == rec[order[lo]].track)
      hi++;
    uint64_t first = c->n;
    bool held = false;
    uint32_t hrow = 0;
    for (uint64_t i = lo; i < hi; i++) {
      uint32_t x = order[i];
      uint64_t nk = c->n - first;
      if (nk >= 2 && rec[x].value == rec[c->kept[c->n - 1]].value &&
          rec[x].value == rec[c->kept[c->n - 2]].value) {
        held = true;
        hrow = x;
        continue;
      }
      if (held && rec[hrow].ts != 0)
        c->kept[c->n++] = hrow;
      held = false;
      c->kept[c->n++] = x;
    }
    lo = hi;
  }
  free(order);
  return SQLITE_OK;
}

static int ci_next(sqlite3_vtab_cursor *cur) {
  ((ci_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int ci_eof(sqlite3_vtab_cursor *cur) {
  ci_cursor *c = (ci_cursor *)cur;
  return c->row >= c->n;
}

static int ci_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ci_cursor *c = (ci_cursor *)cur;
  const ci_rec *r = &c->rec[c->kept[c->row]];
  const ci_rec *next = c->row + 1 < c->n ? &c->rec[c->kept[c->row + 1]] : NULL;
  const ci_rec *prev = c->row > 0 ? &c->rec[c->kept[c->row - 1]] : NULL;
  if (next && next->track != r->track)
    next = NULL;
  if (prev && prev->track != r->track)
    prev = NULL;
  switch (col) {
  case CI_ID:
    sqlite3_result_int64(ctx, r->id);
    break;
  case CI_TS:
    sqlite3_result_int64(ctx, r->ts);
    break;
  case CI_DUR:
    sqlite3_result_int64(ctx,
                         gp__tp_ssub(next ? next->ts : c->trace_end, r->ts));
    break;
  case CI_TRACK:
    sqlite3_result_int64(ctx, r->track);
    break;
  case CI_VALUE:
    sqlite3_result_double(ctx, r->value);
    break;
  case CI_NEXT:
    if (next)
      sqlite3_result_double(ctx, next->value);
    else
      sqlite3_result_null(ctx);
    break;
  case CI_DELTA:
    if (prev)
      sqlite3_result_double(ctx, r->value - prev->value);
    else
      sqlite3_result_null(ctx);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
  return SQLITE_OK;
}

static int ci_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ci_cursor *)cur)->row;
  return SQLITE_OK;
}

/* See aggbuf.h. */
sqlite3_module gp__tp_counter_intervals_module = {
    .xConnect = ci_connect,
    .xBestIndex = ci_best_index,
    .xDisconnect = ci_disconnect,
    .xOpen = ci_open,
    .xClose = ci_close,
    .xFilter = ci_filter,
    .xNext = ci_next,
    .xEof = ci_eof,
    .xColumn = ci_column,
    .xRowid = ci_rowid,
};
