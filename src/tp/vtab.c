/*
 * vtab.c - the "gp_table" SQLite virtual-table module: presents a table
 * of the catalogue (tables.c) over the columnar store.
 *
 * Plans, best first: a row by id (the id is the row number); a range of
 * a column whose values never decrease with the row (ts, arg_set_id),
 * found by binary search; the rows with one value of an indexed column
 * (track_id, parent_id, ...), through an index built on first use; a
 * full scan. Constraints are never marked omitted: SQLite re-checks
 * them, so a plan only has to return a superset of the matching rows.
 * Rows come out in row order (by value, then row, for an index), so an
 * ORDER BY on an ascending sorted column is free.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/spill.h"
#include "tp/sqlInt.h"

enum { PLAN_FULL = 0, PLAN_ID = 1, PLAN_RANGE = 2, PLAN_INDEX = 3 };

/* idxNum layout: plan | col << 4 | has_lo << 12 | lo_strict << 13 |
 * has_hi << 14 | hi_strict << 15. */
#define HAS_LO (1 << 12)
#define LO_STRICT (1 << 13)
#define HAS_HI (1 << 14)
#define HI_STRICT (1 << 15)

typedef struct vtab {
  sqlite3_vtab base;
  gp_tp *tp;
  int table;
} vtab;

typedef struct cursor {
  sqlite3_vtab_cursor base;
  const gp__tp_tabdef *def;
  const gp__tp_db *db;
  uint64_t row, end;
  const uint32_t *list;
  uint64_t li, ln;
  bool use_list;
  gp__tp_cache cache;
} cursor;

static int find_table(const char *name) {
  for (int i = 0; i < gp__tp_ntables; i++)
    if (strcmp(gp__tp_tables[i]->name, name) == 0)
      return i;
  return -1;
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  if (argc < 4) {
    *err = sqlite3_mprintf("gp_table needs the table's name");
    return SQLITE_ERROR;
  }
  int t = find_table(argv[3]);
  if (t < 0) {
    *err = sqlite3_mprintf("gp_table: no table %s", argv[3]);
    return SQLITE_ERROR;
  }
  const gp__tp_tabdef *def = gp__tp_tables[t];
  char sql[2048];
  size_t n = (size_t)snprintf(sql, sizeof(sql), "CREATE TABLE x(");
  for (int i = 0; i < def->ncols; i++)
    n += (size_t)snprintf(sql + n, sizeof(sql) - n, "%s%s %s", i ? ", " : "",
                          def->cols[i].name, def->cols[i].type);
  snprintf(sql + n, sizeof(sql) - n, ")");
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK)
    return rc;
  vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  v->tp = aux;
  v->table = t;
  *out = &v->base;
  return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static uint64_t table_rows(const vtab *v) {
  return gp__tp_tables[v->table]->rows(v->tp->db);
}

static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  vtab *v = (vtab *)tab;
  const gp__tp_tabdef *def = gp__tp_tables[v->table];
  double n = (double)table_rows(v) + 1;
  int best = PLAN_FULL, bcol = 0, eq = -1, lo = -1, hi = -1, rcol = -1;
  bool lo_strict = false, hi_strict = false;
  double cost = n, rows = n;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->iColumn < 0 || c->iColumn >= def->ncols)
      continue;
    uint8_t fl = def->flags[c->iColumn];
    if (c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      if ((fl & GP_TP_COL_ID) && cost > 1) {
        best = PLAN_ID, bcol = c->iColumn, eq = i, cost = 1, rows = 1;
      } else if ((fl & GP_TP_COL_SORTED) && cost > log2(n) + 10) {
        best = PLAN_RANGE, bcol = c->iColumn, eq = i;
        cost = log2(n) + 10, rows = 10;
      } else if ((fl & GP_TP_COL_INDEXED) && cost > log2(n) + 50) {
        best = PLAN_INDEX, bcol = c->iColumn, eq = i;
        cost = log2(n) + 50, rows = 50;
      }
    } else if ((fl & GP_TP_COL_SORTED) && (rcol < 0 || rcol == c->iColumn)) {
      switch (c->op) {
      case SQLITE_INDEX_CONSTRAINT_GT:
      case SQLITE_INDEX_CONSTRAINT_GE:
        rcol = c->iColumn;
        lo = i;
        lo_strict = c->op == SQLITE_INDEX_CONSTRAINT_GT;
        break;
      case SQLITE_INDEX_CONSTRAINT_LT:
      case SQLITE_INDEX_CONSTRAINT_LE:
        rcol = c->iColumn;
        hi = i;
        hi_strict = c->op == SQLITE_INDEX_CONSTRAINT_LT;
        break;
      default:
        break;
      }
    }
  }
  if (best == PLAN_FULL && rcol >= 0) {
    best = PLAN_RANGE;
    bcol = rcol;
    cost = log2(n) + n / ((lo >= 0 && hi >= 0) ? 8 : 3);
    rows = cost;
  }
  int idx = best | bcol << 4;
  if (best == PLAN_ID || eq >= 0) {
    info->aConstraintUsage[eq].argvIndex = 1;
  } else if (best == PLAN_RANGE) {
    int arg = 1;
    if (lo >= 0) {
      info->aConstraintUsage[lo].argvIndex = arg++;
      idx |= HAS_LO | (lo_strict ? LO_STRICT : 0);
    }
    if (hi >= 0) {
      info->aConstraintUsage[hi].argvIndex = arg++;
      idx |= HAS_HI | (hi_strict ? HI_STRICT : 0);
    }
  }
  info->idxNum = idx;
  info->estimatedCost = cost;
  info->estimatedRows = (sqlite3_int64)rows;
  if (best == PLAN_ID)
    info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  if (info->nOrderBy == 1 && !info->aOrderBy[0].desc &&
      info->aOrderBy[0].iColumn >= 0 &&
      (def->flags[info->aOrderBy[0].iColumn] & GP_TP_COL_SORTED))
    info->orderByConsumed = 1;
  return SQLITE_OK;
}

/* See sqlInt.h. */
int gp__tp_cursor_open(size_t size, sqlite3_vtab_cursor **out) {
  sqlite3_vtab_cursor *c = sqlite3_malloc((int)size);
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, size);
  *out = c;
  return SQLITE_OK;
}

/* See sqlInt.h. */
int gp__tp_cursor_close(sqlite3_vtab_cursor *cur) {
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  vtab *v = (vtab *)tab;
  int rc = gp__tp_cursor_open(sizeof(cursor), out);
  if (rc != SQLITE_OK)
    return rc;
  cursor *c = (cursor *)*out;
  c->def = gp__tp_tables[v->table];
  c->db = v->tp->db;
  c->cache.set = UINT64_MAX;
  return SQLITE_OK;
}

/* The integer an SQL value stands for; false if it is not a number. For
 * reals, *exact says whether it was integral (bounds round inward). */
static bool as_int(sqlite3_value *v, int64_t *out, double *real) {
  int t = sqlite3_value_numeric_type(v);
  if (t == SQLITE_INTEGER) {
    *out = sqlite3_value_int64(v);
    *real = (double)*out;
    return true;
  }
  if (t == SQLITE_FLOAT) {
    double d = sqlite3_value_double(v);
    if (!(d > -9.2e18 && d < 9.2e18))
      return false;
    *real = d;
    *out = (int64_t)floor(d);
    return true;
  }
  return false;
}

/* First row in [0, n) whose value of col is >= x (> x if strict). */
static uint64_t lower(cursor *c, int col, int64_t x, bool strict) {
  uint64_t lo = 0, hi = c->def->rows(c->db);
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int64_t v = INT64_MIN;
    c->def->int_value(c->db, mid, col, &v, &c->cache);
    if (strict ? v <= x : v < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str,
                     int argc, sqlite3_value **argv) {
  (void)idx_str;
  cursor *c = (cursor *)cur;
  vtab *v = (vtab *)cur->pVtab;
  uint64_t n = c->def->rows(c->db);
  int plan = idx & 15, col = (idx >> 4) & 255;
  c->use_list = false;
  c->row = 0;
  c->end = n;
  c->cache.set = UINT64_MAX;
  int64_t x;
  double d;
  /* Every constraint we take (=, <, <=, >, >=) is false against NULL: a
   * join on a NULL key (t.parent_id of a root track) matches no row, and
   * must not turn into a full scan per outer row. */
  for (int a = 0; a < argc; a++)
    if (sqlite3_value_type(argv[a]) == SQLITE_NULL) {
      c->row = c->end = n;
      return SQLITE_OK;
    }
  if (plan == PLAN_ID && argc >= 1) {
    if (as_int(argv[0], &x, &d)) {
      bool ok = (double)x == d && x >= 0 && (uint64_t)x < n;
      c->row = ok ? (uint64_t)x : n;
      c->end = ok ? (uint64_t)x + 1 : n;
    }
  } else if (plan == PLAN_RANGE && !(idx & (HAS_LO | HAS_HI)) && argc >= 1) {
    if (as_int(argv[0], &x, &d)) {
      if ((double)x != d) {
        c->row = c->end = n;
      } else {
        c->row = lower(c, col, x, false);
        c->end = lower(c, col, x, true);
      }
    }
  } else if (plan == PLAN_RANGE) {
    int a = 0;
    if ((idx & HAS_LO) && a < argc && as_int(argv[a++], &x, &d)) {
      bool strict = (idx & LO_STRICT) != 0;
      if ((double)x != d)
        strict = true; /* ts > 1.5 and ts >= 1.5 both mean ts > 1 */
      c->row = lower(c, col, x, strict);
    }
    if ((idx & HAS_HI) && a < argc && as_int(argv[a], &x, &d)) {
      bool strict = (idx & HI_STRICT) != 0;
      if ((double)x != d)
        strict = false; /* ts < 1.5 and ts <= 1.5 both mean ts <= 1 */
      c->end = lower(c, col, x, !strict);
    }
    if (c->end < c->row)
      c->end = c->row;
  } else if (plan == PLAN_INDEX && argc >= 1) {
    if (as_int(argv[0], &x, &d)) {
      const gp__tp_colindex *ix = gp__tp_index(v->tp, v->table, col);
      if (!ix)
        return SQLITE_NOMEM;
      c->use_list = true;
      c->list = ix->rows;
      c->li = c->ln = 0;
      if ((double)x == d) {
        uint64_t lo = 0, hi = ix->n;
        while (lo < hi) {
          uint64_t mid = lo + (hi - lo) / 2;
          if (ix->vals[mid] < x)
            lo = mid + 1;
          else
            hi = mid;
        }
        uint64_t e = lo;
        while (e < ix->n && ix->vals[e] == x)
          e++;
        c->li = lo;
        c->ln = e;
      }
    }
  }
  return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur) {
  cursor *c = (cursor *)cur;
  gp__tp_spill_poll();
  if (c->use_list)
    c->li++;
  else
    c->row++;
  return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur) {
  cursor *c = (cursor *)cur;
  return c->use_list ? c->li >= c->ln : c->row >= c->end;
}

static uint64_t cur_row(const cursor *c) {
  return c->use_list ? c->list[c->li] : c->row;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  cursor *c = (cursor *)cur;
  c->def->value(c->db, cur_row(c), col, ctx, &c->cache);
  return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)cur_row((cursor *)cur);
  return SQLITE_OK;
}

static sqlite3_module module = {
    .iVersion = 0,
    .xCreate = vt_connect,
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = gp__tp_cursor_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* ------------------------------------------------------------------ */
/* Lazy indexes                                                          */

typedef struct pair {
  int64_t val;
  uint32_t row;
} pair;

static int pair_cmp(const void *a, const void *b) {
  const pair *x = a, *y = b;
  if (x->val != y->val)
    return x->val < y->val ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* See sqlInt.h. */
const gp__tp_colindex *gp__tp_index(gp_tp *tp, int table, int col) {
  gp__tp_colindex *ix = &tp->index[table][col];
  if (ix->built)
    return ix;
  const gp__tp_tabdef *def = gp__tp_tables[table];
  uint64_t n = def->rows(tp->db);
  gp__tp_cache cache = {UINT64_MAX, 0, 0};
  uint64_t m = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;
  for (uint64_t r = 0; r < n; r++) {
    gp__tp_spill_poll();
    int64_t v;
    if (def->int_value(tp->db, r, col, &v, &cache)) {
      m++;
      min = v < min ? v : min;
      max = v > max ? v : max;
    }
  }
  /* n is what gp__tp_array_free() will be told, from here on. */
  ix->n = m;
  ix->rows = gp__tp_array_alloc(m, sizeof(uint32_t));
  ix->vals = gp__tp_array_alloc(m, sizeof(int64_t));
  if (!ix->rows || !ix->vals)
    goto nomem;
  cache.set = UINT64_MAX;
  uint64_t span = (uint64_t)max - (uint64_t)min;
  if (m && span < 4 * m + 1024 && span < (1u << 26)) {
    /* Counting sort: few distinct small values (track ids, ...). */
    uint64_t nb = span + 1;
    /* Where the import spills, a spilled array too: nb reaches the
     * table's size (slice ids that flows name). */
    uint32_t *start = gp__tp_array_alloc(nb + 1, sizeof(uint32_t));
    if (!start)
      goto nomem;
    memset(start, 0, (nb + 1) * sizeof(uint32_t));
    for (uint64_t r = 0; r < n; r++) {
      gp__tp_spill_poll();
      int64_t v;
      if (def->int_value(tp->db, r, col, &v, &cache))
        start[(uint64_t)v - (uint64_t)min + 1]++;
    }
    for (uint64_t b = 0; b < nb; b++)
      start[b + 1] += start[b];
    for (uint64_t r = 0; r < n; r++) {
      gp__tp_spill_poll();
      int64_t v;
      if (def->int_value(tp->db, r, col, &v, &cache)) {
        uint32_t at = start[(uint64_t)v - (uint64_t)min]++;
        ix->rows[at] = (uint32_t)r;
        ix->vals[at] = v;
      }
    }
    gp__tp_array_free(start, nb + 1, sizeof(uint32_t));
  } else if (m) {
    pair *p = gp__tp_array_alloc(m, sizeof(pair));
    if (!p)
      goto nomem;
    uint64_t k = 0;
    for (uint64_t r = 0; r < n; r++) {
      gp__tp_spill_poll();
      int64_t v;
      if (def->int_value(tp->db, r, col, &v, &cache)) {
        p[k].val = v;
        p[k].row = (uint32_t)r;
        k++;
      }
    }
    qsort(p, m, sizeof(pair), pair_cmp);
    for (uint64_t i = 0; i < m; i++) {
      ix->rows[i] = p[i].row;
      ix->vals[i] = p[i].val;
    }
    gp__tp_array_free(p, m, sizeof(pair));
  }
  ix->built = true;
  return ix;
nomem:
  gp__tp_array_free(ix->rows, ix->n, sizeof(*ix->rows));
  gp__tp_array_free(ix->vals, ix->n, sizeof(*ix->vals));
  ix->rows = NULL;
  ix->vals = NULL;
  ix->n = 0;
  return NULL;
}

/* See sqlInt.h. */
int gp__tp_vtab_register(gp_tp *tp, char *err, size_t errsize) {
  int rc = sqlite3_create_module(tp->sql, "gp_table", &module, tp);
  for (int i = 0; rc == SQLITE_OK && i < gp__tp_ntables; i++) {
    char sql[256];
    snprintf(sql, sizeof(sql), "CREATE VIRTUAL TABLE %s USING gp_table(%s)",
             gp__tp_tables[i]->name, gp__tp_tables[i]->name);
    rc = sqlite3_exec(tp->sql, sql, NULL, NULL, NULL);
  }
  if (rc != SQLITE_OK) {
    snprintf(err, errsize, "cannot create the tables: %s",
             sqlite3_errmsg(tp->sql));
    return GP_ESQL;
  }
  return 0;
}
