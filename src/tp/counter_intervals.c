/*
 * counter_intervals.c - counter_leading_intervals!: counter rows into
 * (ts, dur, value) intervals, each value holding until the next sample of
 * its track (the last until trace_end()).
 *
 * Per track, in ts order (ties in input order), runs of equal values are
 * thinned as Perfetto's stdlib does: a value equal to the last two kept
 * is held back; the latest held-back row is kept when the value changes,
 * and dropped at the end; a held row at ts 0 is never kept.
 *
 * Also __gp_counter_tracks: the tracks of those intervals, one row each,
 * which psql_cte.c reads in their place where only tracks matter.
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

/* A cursor walks positions [pos, end) of kept, or by_id[pos, end). */
typedef struct ci_cursor {
  sqlite3_vtab_cursor base;
  const ci_rec *rec;
  const ci_kept *k;
  uint64_t pos, end;
  bool by_id;
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

/* idxNum: bits 0-1 the hidden arguments given (both are required), then
 * the one lookup taken besides them. */
enum { CI_BY_ID = 1 << 2, CI_BY_TRACK = 1 << 3 };

/* Declares schema and makes the table over tp (aux): both of this file's
 * tables are a ci_vtab. */
static int connect_as(sqlite3 *db, void *aux, const char *schema,
                      sqlite3_vtab **out) {
  int rc = sqlite3_declare_vtab(db, schema);
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

static int ci_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  return connect_as(db, aux,
                    "CREATE TABLE x(id, ts, dur, track_id, value, next_value, "
                    "delta_value, b HIDDEN, trace_end HIDDEN)",
                    out);
}

static int ci_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

/*
 * Besides the two arguments: id = ? (a row) or else track_id = ? (one
 * track's rows), each served by binary search. A full result is costed
 * as the large table it usually is (intervals of a counter table), so
 * that a join with a small table of tracks is driven from the tracks
 * (`JOIN gpu_counter_track gct ON gct.id = u.track_id`) instead of
 * probing the track table once per interval. The constraint is not
 * omitted: SQLite checks it again, so a value of another type (which
 * only narrows the match) may be answered with a superset.
 */
static int ci_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  int rc = gp__tp_hidden_best_index(info, CI_BLOB, 2);
  if (rc != SQLITE_OK)
    return rc;
  int by_id = -1, by_track = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if (c->iColumn == CI_ID && by_id < 0)
      by_id = i;
    else if (c->iColumn == CI_TRACK && by_track < 0)
      by_track = i;
  }
  int args = 0;
  for (int i = 0; i < info->nConstraint; i++)
    if (info->aConstraintUsage[i].argvIndex > 0)
      args++;
  if (by_id >= 0) {
    info->aConstraintUsage[by_id].argvIndex = args + 1;
    info->idxNum |= CI_BY_ID;
    info->estimatedCost = 20;
    info->estimatedRows = 1;
  } else if (by_track >= 0) {
    info->aConstraintUsage[by_track].argvIndex = args + 1;
    info->idxNum |= CI_BY_TRACK;
    info->estimatedCost = 1000;
    info->estimatedRows = 1000;
  } else {
    info->estimatedCost = 1e6;
    info->estimatedRows = 1000000;
  }
  return SQLITE_OK;
}

static int ci_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  return gp__tp_cursor_open(sizeof(ci_cursor), out);
}

static void ci_kept_free(void *p) {
  ci_kept *k = p;
  if (!k)
    return;
  gp__tp_array_free(k->kept, k->cap, 4);
  gp__tp_array_free(k->by_id, k->n, 4);
  free(k);
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

/* The kept rows of n records (see the top of the file), or NULL if memory
 * runs out. */
static ci_kept *ci_kept_build(const ci_rec *rec, uint64_t n) {
  ci_kept *k = calloc(1, sizeof(*k));
  if (k) {
    k->cap = n;
    k->kept = gp__tp_array_alloc(n, 4);
  }
  if (!k || !k->kept) {
    ci_kept_free(k);
    return NULL;
  }
  /* By track, then ts, then input order; usually the input already is,
   * and then needs no order array (fresh memory costs page faults). */
  bool sorted = true;
  for (uint64_t i = 1; i < n && sorted; i++)
    sorted = rec[i].track > rec[i - 1].track ||
             (rec[i].track == rec[i - 1].track && rec[i].ts >= rec[i - 1].ts);
  uint32_t *order = NULL;
  if (!sorted) {
    if (!(order = gp__tp_array_alloc(n, 4))) {
      ci_kept_free(k);
      return NULL;
    }
    for (uint64_t i = 0; i < n; i++)
      order[i] = (uint32_t)i;
    qsort_r(order, n, 4, ci_cmp, (void *)rec);
  }
#define AT(i) (order ? order[i] : (uint32_t)(i))
  for (uint64_t lo = 0; lo < n;) {
    uint64_t hi = lo;
    while (hi < n && rec[AT(hi)].track == rec[AT(lo)].track)
      hi++;
    uint64_t first = k->n;
    bool held = false;
    uint32_t hrow = 0;
    for (uint64_t i = lo; i < hi; i++) {
      uint32_t x = AT(i);
      uint64_t nk = k->n - first;
      if (nk >= 2 && rec[x].value == rec[k->kept[k->n - 1]].value &&
          rec[x].value == rec[k->kept[k->n - 2]].value) {
        held = true;
        hrow = x;
        continue;
      }
      if (held && rec[hrow].ts != 0)
        k->kept[k->n++] = hrow;
      held = false;
      k->kept[k->n++] = x;
    }
    lo = hi;
  }
#undef AT
  gp__tp_array_free(order, n, 4);
  return k;
}

/* See aggbuf.h. The kept rows are computed on the first call and kept
 * with the buffer (aggbuf.c frees them with it): the planner may call us
 * once per row of an outer loop (a join on track_id or id), and each call
 * then costs a binary search, not a pass over the input. */
int gp__tp_ci_kept(gp__tp_buf *b, ci_kept **out) {
  uint64_t n = b->count;
  if (n > b->n / sizeof(ci_rec) || n > UINT32_MAX)
    return GP_EINVAL;
  if (!b->derived) {
    if (!(b->derived = ci_kept_build((const ci_rec *)b->p, n)))
      return GP_ENOMEM;
    b->free_derived = ci_kept_free;
  }
  *out = b->derived;
  return 0;
}

/* The first position in kept whose track is >= track (> if after). */
static uint64_t track_lower(const ci_kept *k, const ci_rec *rec, int64_t track,
                            bool after) {
  uint64_t lo = 0, hi = k->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int64_t v = rec[k->kept[mid]].track;
    if (after ? v <= track : v < track)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* See aggbuf.h. */
void gp__tp_ci_track(const ci_kept *k, const ci_rec *rec, int64_t track,
                     uint64_t *lo, uint64_t *hi) {
  *lo = track_lower(k, rec, track, false);
  *hi = track_lower(k, rec, track, true);
}

/*
 * Sorts the positions v[0..n) of kept by id (stable): the runs already in
 * order are found, then merged pairwise, O(n log r) for r runs. Counter
 * ids rise with ts within a track, so the usual input is one run per
 * track. Returns false if memory runs out (v is then unchanged).
 */
static bool sort_by_id(uint32_t *v, uint64_t n, const ci_rec *rec,
                       const uint32_t *kept) {
#define ID(p) rec[kept[p]].id
  uint32_t *tmp = gp__tp_array_alloc(n, 4);
  uint64_t *run = gp__tp_array_alloc(n + 1, 8),
           *next = gp__tp_array_alloc(n + 1, 8);
  bool ok = tmp && run && next;
  if (!ok)
    goto out;
  uint64_t nr = 0;
  for (uint64_t i = 0; i < n; i++)
    if (i == 0 || ID(v[i]) < ID(v[i - 1]))
      run[nr++] = i;
  run[nr] = n;
  uint32_t *src = v, *dst = tmp;
  while (nr > 1) {
    uint64_t m = 0;
    for (uint64_t r = 0; r < nr; r += 2) {
      uint64_t a = run[r], am = run[r + 1], b = am;
      uint64_t bm = r + 1 < nr ? run[r + 2] : am; /* none: an odd run */
      uint64_t o = a;
      next[m++] = a;
      while (a < am && b < bm)
        dst[o++] = ID(src[b]) < ID(src[a]) ? src[b++] : src[a++];
      while (a < am)
        dst[o++] = src[a++];
      while (b < bm)
        dst[o++] = src[b++];
    }
    next[m] = n;
    memcpy(run, next, (m + 1) * 8);
    nr = m;
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy(v, src, n * 4);
#undef ID
out:
  gp__tp_array_free(tmp, n, 4);
  gp__tp_array_free(run, n + 1, 8);
  gp__tp_array_free(next, n + 1, 8);
  return ok;
}

/* k->by_id, built on the first lookup by id. Returns false if memory runs
 * out. */
static bool ci_by_id(ci_kept *k, const ci_rec *rec) {
  if (k->by_id)
    return true;
  uint32_t *v = gp__tp_array_alloc(k->n, 4);
  if (!v)
    return false;
  for (uint64_t i = 0; i < k->n; i++)
    v[i] = (uint32_t)i;
  if (!sort_by_id(v, k->n, rec, k->kept)) {
    gp__tp_array_free(v, k->n, 4);
    return false;
  }
  k->by_id = v;
  return true;
}

/* The integer an = constraint's value stands for: 1, or 0 if no integer
 * equals it (NULL, a fraction), or -1 if it is not a number (the caller
 * then answers with every row and lets SQLite compare). */
static int eq_int(sqlite3_value *v, int64_t *out) {
  switch (sqlite3_value_type(v)) {
  case SQLITE_INTEGER:
    *out = sqlite3_value_int64(v);
    return 1;
  case SQLITE_FLOAT: {
    double d = sqlite3_value_double(v);
    if (!(d >= -9.2e18 && d <= 9.2e18) || (double)(int64_t)d != d)
      return 0;
    *out = (int64_t)d;
    return 1;
  }
  case SQLITE_NULL:
    return 0;
  default:
    return -1;
  }
}

/* The first position in by_id whose row's id is >= x (> x if after). */
static uint64_t id_lower(const ci_cursor *c, int64_t x, bool after) {
  uint64_t lo = 0, hi = c->k->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int64_t v = c->rec[c->k->kept[c->k->by_id[mid]]].id;
    if (after ? v <= x : v < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The buffer of a table-valued function's handle argument into *out (NULL
 * for an empty table), or an error set on tab. */
static int ci_arg(sqlite3_vtab *tab, gp_tp *tp, sqlite3_value *v,
                  gp__tp_buf **out) {
  bool empty;
  *out = gp__tp_arg_buf(tp, v, CI_MAGIC, &empty);
  if (!*out && !empty)
    return gp__tp_vtab_error(tab,
                             "counter_leading_intervals: not a counter table");
  return SQLITE_OK;
}

/* The kept rows of b into *out, or an error set on tab. */
static int ci_rows(sqlite3_vtab *tab, gp__tp_buf *b, ci_kept **out) {
  int rc = gp__tp_ci_kept(b, out);
  if (rc == GP_ENOMEM)
    return SQLITE_NOMEM;
  if (rc)
    return gp__tp_vtab_error(tab, "counter_leading_intervals: bad input");
  return SQLITE_OK;
}

static int ci_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                     int argc, sqlite3_value **argv) {
  (void)s;
  ci_cursor *c = (ci_cursor *)cur;
  ci_vtab *v = (ci_vtab *)cur->pVtab;
  c->k = NULL;
  c->pos = c->end = 0;
  c->by_id = false;
  int want = 2 + ((mask & (CI_BY_ID | CI_BY_TRACK)) != 0);
  gp__tp_buf *b = NULL;
  if ((mask & 3) != 3 || argc != want)
    return gp__tp_vtab_error(cur->pVtab,
                             "counter_leading_intervals: not a counter table");
  int rc = ci_arg(cur->pVtab, v->tp, argv[0], &b);
  if (rc != SQLITE_OK || !b)
    return rc;
  c->trace_end = sqlite3_value_int64(argv[1]);
  ci_kept *k = NULL;
  if ((rc = ci_rows(cur->pVtab, b, &k)) != SQLITE_OK)
    return rc;
  c->rec = (const ci_rec *)b->p;
  c->k = k;
  c->end = k->n;
  int64_t x = 0;
  int known = want == 3 ? eq_int(argv[2], &x) : -1;
  if (known == 0) {
    c->end = 0;
  } else if (known == 1 && (mask & CI_BY_TRACK)) {
    gp__tp_ci_track(k, c->rec, x, &c->pos, &c->end);
  } else if (known == 1) {
    if (!ci_by_id(k, c->rec))
      return SQLITE_NOMEM;
    c->by_id = true;
    c->pos = id_lower(c, x, false);
    c->end = id_lower(c, x, true);
  }
  return SQLITE_OK;
}

static int ci_next(sqlite3_vtab_cursor *cur) {
  ((ci_cursor *)cur)->pos++;
  return SQLITE_OK;
}

static int ci_eof(sqlite3_vtab_cursor *cur) {
  ci_cursor *c = (ci_cursor *)cur;
  return c->pos >= c->end;
}

/* The position in kept of the cursor's row. */
static uint64_t ci_at(const ci_cursor *c) {
  return c->by_id ? c->k->by_id[c->pos] : c->pos;
}

static int ci_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ci_cursor *c = (ci_cursor *)cur;
  const ci_kept *k = c->k;
  uint64_t at = ci_at(c);
  const ci_rec *r = &c->rec[k->kept[at]];
  const ci_rec *next = at + 1 < k->n ? &c->rec[k->kept[at + 1]] : NULL;
  const ci_rec *prev = at > 0 ? &c->rec[k->kept[at - 1]] : NULL;
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
  *out = (sqlite3_int64)ci_at((ci_cursor *)cur);
  return SQLITE_OK;
}

/* See aggbuf.h. */
sqlite3_module gp__tp_counter_intervals_module = {
    .xConnect = ci_connect,
    .xBestIndex = ci_best_index,
    .xDisconnect = ci_disconnect,
    .xOpen = ci_open,
    .xClose = gp__tp_cursor_close,
    .xFilter = ci_filter,
    .xNext = ci_next,
    .xEof = ci_eof,
    .xColumn = ci_column,
    .xRowid = ci_rowid,
};

/* ------------------------------------------------------------------ */
/* __gp_counter_tracks(handle, trace_end)                                */

/*
 * The tracks of __gp_counter_intervals(handle, trace_end)'s rows, one row
 * each, by track_id: the table psql_cte.c puts in the place of
 * counter_leading_intervals! where only the track of each interval is
 * looked at, so that SQL runs once per track, and __gp_iv_ci (aggbuf.c)
 * stands for the track's intervals. The hidden columns read back the
 * arguments, for __gp_iv_ci.
 */

enum { CT_TRACK, CT_BLOB, CT_END };

typedef struct ct_cursor {
  sqlite3_vtab_cursor base;
  const ci_rec *rec;
  const ci_kept *k;
  uint64_t pos, next, end; /* the track at pos ends at next; all at end */
  uint8_t handle[16];      /* the first argument (gp__tp_arg_buf checked it) */
  int64_t trace_end;
} ct_cursor;

static int ct_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  return connect_as(
      db, aux, "CREATE TABLE x(track_id, b HIDDEN, trace_end HIDDEN)", out);
}

/* Besides the two arguments: track_id = ? (binary search). Costed as
 * __gp_counter_intervals is (the intervals it stands for), so that SQLite
 * orders the joins around it as it would around the intervals, and the
 * tracks reach __gp_iv_ci in the order their intervals would reach
 * __gp_iv_agg (the order of equal start times in the intersection). */
static int ct_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  int rc = gp__tp_hidden_best_index(info, CT_BLOB, 2);
  if (rc != SQLITE_OK)
    return rc;
  int args = 0, by_track = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (info->aConstraintUsage[i].argvIndex > 0)
      args++;
    else if (c->usable && c->op == SQLITE_INDEX_CONSTRAINT_EQ &&
             c->iColumn == CT_TRACK && by_track < 0)
      by_track = i;
  }
  info->estimatedCost = 1e6;
  info->estimatedRows = 1000000;
  if (by_track >= 0) {
    info->aConstraintUsage[by_track].argvIndex = args + 1;
    info->idxNum |= CI_BY_TRACK;
    info->estimatedCost = 1000;
    info->estimatedRows = 1000;
  }
  return SQLITE_OK;
}

static int ct_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  return gp__tp_cursor_open(sizeof(ct_cursor), out);
}

/* The end of the track that starts at c->pos. */
static void ct_run(ct_cursor *c) {
  c->next =
      c->pos < c->end
          ? track_lower(c->k, c->rec, c->rec[c->k->kept[c->pos]].track, true)
          : c->end;
}

static int ct_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                     int argc, sqlite3_value **argv) {
  (void)s;
  ct_cursor *c = (ct_cursor *)cur;
  ci_vtab *v = (ci_vtab *)cur->pVtab;
  c->k = NULL;
  c->pos = c->next = c->end = 0;
  int want = 2 + ((mask & CI_BY_TRACK) != 0);
  if ((mask & 3) != 3 || argc != want)
    return gp__tp_vtab_error(cur->pVtab,
                             "counter_leading_intervals: not a counter table");
  gp__tp_buf *b;
  int rc = ci_arg(cur->pVtab, v->tp, argv[0], &b);
  if (rc != SQLITE_OK || !b)
    return rc;
  ci_kept *k = NULL;
  if ((rc = ci_rows(cur->pVtab, b, &k)) != SQLITE_OK)
    return rc;
  c->rec = (const ci_rec *)b->p;
  c->k = k;
  c->end = k->n;
  memcpy(c->handle, sqlite3_value_blob(argv[0]), sizeof(c->handle));
  c->trace_end = sqlite3_value_int64(argv[1]);
  int64_t x = 0;
  int known = want == 3 ? eq_int(argv[2], &x) : -1;
  if (known == 0)
    c->end = 0;
  else if (known == 1)
    gp__tp_ci_track(k, c->rec, x, &c->pos, &c->end);
  ct_run(c);
  return SQLITE_OK;
}

static int ct_next(sqlite3_vtab_cursor *cur) {
  ct_cursor *c = (ct_cursor *)cur;
  c->pos = c->next;
  ct_run(c);
  return SQLITE_OK;
}

static int ct_eof(sqlite3_vtab_cursor *cur) {
  ct_cursor *c = (ct_cursor *)cur;
  return c->pos >= c->end;
}

static int ct_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ct_cursor *c = (ct_cursor *)cur;
  if (col == CT_TRACK)
    sqlite3_result_int64(ctx, c->rec[c->k->kept[c->pos]].track);
  else if (col == CT_BLOB)
    sqlite3_result_blob(ctx, c->handle, sizeof(c->handle), SQLITE_TRANSIENT);
  else
    sqlite3_result_int64(ctx, c->trace_end);
  return SQLITE_OK;
}

static int ct_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ct_cursor *)cur)->pos;
  return SQLITE_OK;
}

/* See aggbuf.h. */
sqlite3_module gp__tp_counter_tracks_module = {
    .xConnect = ct_connect,
    .xBestIndex = ct_best_index,
    .xDisconnect = ci_disconnect,
    .xOpen = ct_open,
    .xClose = gp__tp_cursor_close,
    .xFilter = ct_filter,
    .xNext = ct_next,
    .xEof = ct_eof,
    .xColumn = ct_column,
    .xRowid = ct_rowid,
};
