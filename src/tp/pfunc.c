/*
 * pfunc.c - CREATE PERFETTO FUNCTION: a scalar function runs its SQL body
 * with the arguments bound as $name parameters and returns the first
 * column of the first row (NULL without rows); RETURNS TABLE(cols) makes
 * a table-valued function (a virtual-table module of that name) whose
 * rows are the body's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/psqlInt.h"

/* ------------------------------------------------------------------ */
/* CREATE PERFETTO FUNCTION                                              */

static int bind_args(const gp__tp_fn *f, sqlite3_stmt *st, int argc,
                     sqlite3_value **argv) {
  for (int i = 0; i < argc && i < f->nargs; i++) {
    char name[128];
    snprintf(name, sizeof(name), "$%s", f->argv[i]);
    int at = sqlite3_bind_parameter_index(st, name);
    if (at > 0 && sqlite3_bind_value(st, at, argv[i]) != SQLITE_OK)
      return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

static void fn_scalar(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  gp__tp_fn *f = sqlite3_user_data(ctx);
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(f->tp->sql, f->body, -1, &st, NULL) != SQLITE_OK) {
    sqlite3_result_error(ctx, sqlite3_errmsg(f->tp->sql), -1);
    return;
  }
  bind_args(f, st, argc, argv);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
  else if (rc == SQLITE_DONE)
    sqlite3_result_null(ctx);
  else
    sqlite3_result_error(ctx, sqlite3_errmsg(f->tp->sql), -1);
  sqlite3_finalize(st);
}

typedef struct fn_vtab {
  sqlite3_vtab base;
  gp__tp_fn *f;
} fn_vtab;

typedef struct fn_cursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st;
  bool eof;
  sqlite3_int64 row;
} fn_cursor;

static int fn_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  gp__tp_fn *f = aux;
  gp__tp_sb s = {0};
  gp__tp_sb_cat(&s, "CREATE TABLE x(");
  for (int i = 0; i < f->ncols; i++)
    gp__tp_sb_fmt(&s, "%s\"%s\"", i ? ", " : "", f->cols[i]);
  for (int i = 0; i < f->nargs; i++)
    gp__tp_sb_fmt(&s, ", \"__arg_%s\" HIDDEN", f->argv[i]);
  gp__tp_sb_cat(&s, ")");
  int rc = s.oom ? SQLITE_NOMEM : sqlite3_declare_vtab(db, s.p);
  free(s.p);
  if (rc != SQLITE_OK)
    return rc;
  fn_vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  v->f = f;
  *out = &v->base;
  return SQLITE_OK;
}

static int fn_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int fn_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  fn_vtab *v = (fn_vtab *)tab;
  int first = v->f->ncols, arg = 1;
  for (int h = 0; h < v->f->nargs; h++)
    for (int i = 0; i < info->nConstraint; i++) {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      if (c->iColumn != first + h || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
        continue;
      if (!c->usable)
        return SQLITE_CONSTRAINT;
      info->aConstraintUsage[i].argvIndex = arg++;
      info->aConstraintUsage[i].omit = 1;
      break;
    }
  info->idxNum = arg - 1;
  info->estimatedCost = 1000;
  return SQLITE_OK;
}

static int fn_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  return gp__tp_cursor_open(sizeof(fn_cursor), out);
}

static int fn_close(sqlite3_vtab_cursor *cur) {
  sqlite3_finalize(((fn_cursor *)cur)->st);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int fn_step(fn_cursor *c, sqlite3_vtab *tab, gp__tp_fn *f) {
  int rc = sqlite3_step(c->st);
  if (rc == SQLITE_ROW) {
    c->row++;
    return SQLITE_OK;
  }
  c->eof = true;
  if (rc == SQLITE_DONE)
    return SQLITE_OK;
  sqlite3_free(tab->zErrMsg);
  tab->zErrMsg = sqlite3_mprintf("%s: %s", f->name, sqlite3_errmsg(f->tp->sql));
  return SQLITE_ERROR;
}

static int fn_filter(sqlite3_vtab_cursor *cur, int n, const char *s, int argc,
                     sqlite3_value **argv) {
  (void)n;
  (void)s;
  fn_cursor *c = (fn_cursor *)cur;
  gp__tp_fn *f = ((fn_vtab *)cur->pVtab)->f;
  sqlite3_finalize(c->st);
  c->st = NULL;
  c->eof = false;
  c->row = 0;
  if (argc != f->nargs) {
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg =
        sqlite3_mprintf("%s: expected %d arguments", f->name, f->nargs);
    return SQLITE_ERROR;
  }
  if (sqlite3_prepare_v2(f->tp->sql, f->body, -1, &c->st, NULL) != SQLITE_OK) {
    sqlite3_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg =
        sqlite3_mprintf("%s: %s", f->name, sqlite3_errmsg(f->tp->sql));
    return SQLITE_ERROR;
  }
  bind_args(f, c->st, argc, argv);
  return fn_step(c, cur->pVtab, f);
}

static int fn_next(sqlite3_vtab_cursor *cur) {
  return fn_step((fn_cursor *)cur, cur->pVtab, ((fn_vtab *)cur->pVtab)->f);
}

static int fn_eof(sqlite3_vtab_cursor *cur) {
  return ((fn_cursor *)cur)->eof;
}

static int fn_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  fn_cursor *c = (fn_cursor *)cur;
  if (col < sqlite3_column_count(c->st))
    sqlite3_result_value(ctx, sqlite3_column_value(c->st, col));
  else
    sqlite3_result_null(ctx);
  return SQLITE_OK;
}

static int fn_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = ((fn_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module fn_module = {
    .xConnect = fn_connect,
    .xBestIndex = fn_best_index,
    .xDisconnect = fn_disconnect,
    .xOpen = fn_open,
    .xClose = fn_close,
    .xFilter = fn_filter,
    .xNext = fn_next,
    .xEof = fn_eof,
    .xColumn = fn_column,
    .xRowid = fn_rowid,
};

/* See psqlInt.h. */
void gp__tp_psql_free_fn(gp__tp_fn *f) {
  if (!f)
    return;
  free(f->name);
  free(f->body);
  for (int i = 0; i < f->nargs; i++)
    free(f->argv[i]);
  for (int i = 0; i < f->ncols; i++)
    free(f->cols[i]);
  free(f);
}

/* See psqlInt.h. */
int gp__tp_psql_define_function(gp_tp *tp, const char *p, bool replace,
                                char *err, size_t errsize) {
  char name[128];
  const char *q = gp__tp_psql_read_name(p, name, sizeof(name), false);
  const char *close = q && *q == '(' ? gp__tp_sql_match_paren(q) : NULL;
  if (!close) {
    snprintf(err, errsize, "CREATE PERFETTO FUNCTION: expected name(args)");
    return GP_EPARSE;
  }
  for (gp__tp_fn *f = tp->fns; f; f = f->next)
    if (strcmp(f->name, name) == 0 && !replace) {
      snprintf(err, errsize,
               "function %s already exists (use CREATE OR REPLACE)", name);
      return GP_ESQL;
    }
  gp__tp_fn *f = calloc(1, sizeof(*f));
  if (!f)
    return GP_ENOMEM;
  f->tp = tp;
  int rc = gp__tp_psql_param_names(q, close, f->argv, &f->nargs, err, errsize,
                                   "CREATE PERFETTO FUNCTION");
  const char *r =
      rc ? NULL : gp__tp_sql_eat(gp__tp_sql_skip_ws(close), "RETURNS");
  if (!rc && !r) {
    snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: expected RETURNS",
             name);
    rc = GP_EPARSE;
  }
  if (!rc && gp__tp_sql_keyword(r, "TABLE")) {
    const char *o = gp__tp_sql_skip_ws(r + 5);
    const char *c = *o == '(' ? gp__tp_sql_match_paren(o) : NULL;
    if (!c) {
      snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: TABLE(columns)",
               name);
      rc = GP_EPARSE;
    } else {
      f->table = true;
      rc = gp__tp_psql_param_names(o, c, f->cols, &f->ncols, err, errsize,
                                   "CREATE PERFETTO FUNCTION");
      r = gp__tp_sql_skip_ws(c);
    }
  }
  while (!rc && *r && !gp__tp_sql_keyword(r, "AS")) {
    int k;
    r = gp__tp_sql_skip_ws(r + gp__tp_sql_token(r, &k));
  }
  const char *body = rc ? NULL : gp__tp_sql_eat(r, "AS");
  if (!rc && !body) {
    snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: expected AS body",
             name);
    rc = GP_EPARSE;
  }
  gp__tp_sb expanded = {0};
  if (!rc)
    rc = gp__tp_psql_expand(tp, body, strlen(body), 0, &expanded, err, errsize);
  if (!rc) {
    f->name = strdup(name);
    f->body = expanded.p ? expanded.p : strdup("SELECT NULL");
    expanded.p = NULL;
    if (!f->name || !f->body)
      rc = GP_ENOMEM;
  }
  free(expanded.p);
  if (!rc) {
    int src = f->table ? sqlite3_create_module_v2(tp->sql, f->name, &fn_module,
                                                  f, NULL)
                       : sqlite3_create_function_v2(tp->sql, f->name, f->nargs,
                                                    SQLITE_UTF8, f, fn_scalar,
                                                    NULL, NULL, NULL);
    if (src != SQLITE_OK) {
      snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: %s", name,
               sqlite3_errmsg(tp->sql));
      rc = GP_ESQL;
    }
  }
  if (rc) {
    gp__tp_psql_free_fn(f);
    return rc;
  }
  /* Replaced functions stay allocated: SQLite may still reference them in
   * prepared statements; they are freed with the handle. */
  f->next = tp->fns;
  tp->fns = f;
  return 0;
}
