/*
 * counter_rows.c - the counter table's rows by track, straight from the
 * store, for psql_cte.c's rewrite of a select of the counter table by
 * track: SQL runs over the table's tracks (__gp_counter_ids), and
 * __gp_ci_tracks (aggbuf.c) copies each chosen track's rows here, instead
 * of SQLite handing __gp_ci_agg a row at a time (a microsecond each).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/aggbuf.h"

/* ------------------------------------------------------------------ */
/* __gp_counter_ids: the track ids of the counter table's rows           */

typedef struct ids_vtab {
  sqlite3_vtab base;
  gp_tp *tp;
  uint32_t *ids; /* distinct, ascending; computed on first use */
  uint64_t n;
  bool built;
} ids_vtab;

typedef struct ids_cursor {
  sqlite3_vtab_cursor base;
  uint64_t pos, end;
} ids_cursor;

enum { IDS_BY_TRACK = 1 };

static int ids_connect(sqlite3 *db, void *aux, int argc,
                       const char *const *argv, sqlite3_vtab **out,
                       char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(track_id)");
  if (rc != SQLITE_OK)
    return rc;
  ids_vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  v->tp = aux;
  *out = &v->base;
  return SQLITE_OK;
}

static int ids_disconnect(sqlite3_vtab *tab) {
  free(((ids_vtab *)tab)->ids);
  sqlite3_free(tab);
  return SQLITE_OK;
}

/* track_id = ? by binary search; there are few tracks. The constraint is
 * not omitted: SQLite checks it again (a value of another type). */
static int ids_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  info->estimatedCost = 100;
  info->estimatedRows = 100;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->usable && c->op == SQLITE_INDEX_CONSTRAINT_EQ && c->iColumn == 0) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->idxNum = IDS_BY_TRACK;
      info->estimatedCost = 5;
      info->estimatedRows = 1;
      break;
    }
  }
  return SQLITE_OK;
}

static int ids_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  return gp__tp_cursor_open(sizeof(ids_cursor), out);
}

/* v->ids from the store: a bitmap of the track ids seen, in one pass (the
 * column is read from memory: tens of megabytes in a large trace). */
static int ids_build(ids_vtab *v) {
  const gp__tp_db *db = v->tp->db;
  uint64_t rows = db->c_ts.n, words = 0;
  const uint32_t *track = db->c_track.v;
  uint64_t *seen = NULL;
  for (uint64_t r = 0; r < rows; r++) {
    uint64_t w = track[r] / 64, bit = 1ull << (track[r] % 64);
    if (w >= words) {
      uint64_t nw = w + 1 > 2 * words ? w + 1 : 2 * words;
      uint64_t *p = realloc(seen, nw * 8);
      if (!p) {
        free(seen);
        return SQLITE_NOMEM;
      }
      memset(p + words, 0, (nw - words) * 8);
      seen = p;
      words = nw;
    }
    if (!(seen[w] & bit)) /* mostly read: no chain of stores */
      seen[w] |= bit;
  }
  uint64_t n = 0;
  for (uint64_t w = 0; w < words; w++)
    n += (uint64_t)__builtin_popcountll(seen[w]);
  v->ids = malloc((n ? n : 1) * 4);
  if (!v->ids) {
    free(seen);
    return SQLITE_NOMEM;
  }
  for (uint64_t w = 0; w < words; w++)
    for (uint64_t b = seen[w]; b; b &= b - 1)
      v->ids[v->n++] = (uint32_t)(w * 64 + (uint64_t)__builtin_ctzll(b));
  free(seen);
  v->built = true;
  return SQLITE_OK;
}

/* The first position of v->ids whose id is >= x (> x if after). */
static uint64_t ids_lower(const ids_vtab *v, int64_t x, bool after) {
  uint64_t lo = 0, hi = v->n;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (after ? v->ids[mid] <= x : v->ids[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int ids_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                      int argc, sqlite3_value **argv) {
  (void)s;
  ids_cursor *c = (ids_cursor *)cur;
  ids_vtab *v = (ids_vtab *)cur->pVtab;
  c->pos = c->end = 0;
  if (!v->tp->db)
    return gp__tp_vtab_error(cur->pVtab,
                             "counter rows: the tables are not in memory");
  int rc = v->built ? SQLITE_OK : ids_build(v);
  if (rc != SQLITE_OK)
    return rc;
  c->end = v->n;
  if ((mask & IDS_BY_TRACK) && argc == 1) {
    /* Any other value matches no integer id, or SQLite's check drops it. */
    if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
      int64_t x = sqlite3_value_int64(argv[0]);
      c->pos = ids_lower(v, x, false);
      c->end = ids_lower(v, x, true);
    } else if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
      c->end = 0;
    }
  }
  return SQLITE_OK;
}

static int ids_next(sqlite3_vtab_cursor *cur) {
  ((ids_cursor *)cur)->pos++;
  return SQLITE_OK;
}

static int ids_eof(sqlite3_vtab_cursor *cur) {
  ids_cursor *c = (ids_cursor *)cur;
  return c->pos >= c->end;
}

static int ids_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  (void)col;
  ids_cursor *c = (ids_cursor *)cur;
  sqlite3_result_int64(ctx, ((ids_vtab *)cur->pVtab)->ids[c->pos]);
  return SQLITE_OK;
}

static int ids_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ids_cursor *)cur)->pos;
  return SQLITE_OK;
}

/* See aggbuf.h. */
sqlite3_module gp__tp_counter_ids_module = {
    .xConnect = ids_connect,
    .xBestIndex = ids_best_index,
    .xDisconnect = ids_disconnect,
    .xOpen = ids_open,
    .xClose = gp__tp_cursor_close,
    .xFilter = ids_filter,
    .xNext = ids_next,
    .xEof = ids_eof,
    .xColumn = ids_column,
    .xRowid = ids_rowid,
};

/* ------------------------------------------------------------------ */
/* The rows of chosen tracks                                             */

/* See aggbuf.h. */
int gp__tp_counter_rows(gp_tp *tp, const int64_t *tracks, uint64_t n,
                        gp__tp_buf *b) {
  const gp__tp_db *db = tp->db;
  if (!db || n >= UINT32_MAX)
    return GP_EINVAL;
  uint64_t rows = db->c_ts.n;
  const uint32_t *track = db->c_track.v;
  const int64_t *ts = db->c_ts.v;
  const double *value = db->c_value.v;
  /* The track ids that may have rows: up to the largest one asked for,
   * or where that is far out, the largest one there is. */
  int64_t hmax = -1;
  for (uint64_t i = 0; i < n; i++)
    hmax = tracks[i] > hmax ? tracks[i] : hmax;
  if (hmax > (int64_t)rows + (1 << 20)) {
    uint32_t cmax = 0;
    for (uint64_t r = 0; r < rows; r++)
      cmax = track[r] > cmax ? track[r] : cmax;
    hmax = hmax > (int64_t)cmax ? (int64_t)cmax : hmax;
  }
  /* Each track id: its first place in tracks (head) and the next place
   * of the same id (next); its rows (cnt, by first place); where each
   * place's copy goes (at). */
  uint64_t nh = (uint64_t)(hmax + 1);
  uint32_t *head = malloc((nh ? nh : 1) * 4), *next = malloc((n ? n : 1) * 4);
  uint64_t *cnt = calloc(n ? n : 1, 8), *at = malloc((n ? n : 1) * 8);
  int rc = GP_ENOMEM;
  if (!head || !next || !cnt || !at)
    goto out;
  memset(head, 0xff, nh * 4);
  for (uint64_t i = n; i-- > 0;) {
    next[i] = UINT32_MAX;
    if (tracks[i] < 0 || tracks[i] > hmax)
      continue; /* no rows */
    next[i] = head[tracks[i]];
    head[tracks[i]] = (uint32_t)i;
  }
  for (uint64_t r = 0; r < rows; r++)
    if (track[r] < nh && head[track[r]] != UINT32_MAX)
      cnt[head[track[r]]]++;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; i++) {
    at[i] = total;
    if (tracks[i] >= 0 && tracks[i] <= hmax)
      total += cnt[head[tracks[i]]];
  }
  GP_TP_VEC(uint8_t) data = {0};
  if (total && !gp__tp_vec_reserve(&data, total * sizeof(ci_rec)))
    goto out;
  memset(b, 0, sizeof(*b));
  b->p = data.v; /* b's from here on */
  b->cap = data.cap;
  ci_rec *out = (ci_rec *)b->p;
  uint64_t nans = 0;
  for (uint64_t r = 0; r < rows; r++) {
    uint32_t t = track[r];
    if (t >= nh || head[t] == UINT32_MAX)
      continue;
    ci_rec x = {(int64_t)r, ts[r], t, value[r]};
    nans += isnan(x.value) != 0;
    for (uint32_t i = head[t]; i != UINT32_MAX; i = next[i])
      out[at[i]++] = x;
  }
  /* SQLite reads a NaN as NULL, and __gp_ci_agg skips a NULL value. */
  if (nans) {
    uint64_t k = 0;
    for (uint64_t i = 0; i < total; i++)
      if (!isnan(out[i].value))
        out[k++] = out[i];
    total = k;
  }
  b->n = total * sizeof(ci_rec);
  b->count = total;
  b->magic = CI_MAGIC;
  rc = 0;
out:
  free(head);
  free(next);
  free(cnt);
  free(at);
  return rc;
}
