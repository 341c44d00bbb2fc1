/*
 * psql.c - PerfettoSQL on top of SQLite: runs a text of statements one by
 * one, handling INCLUDE PERFETTO MODULE and CREATE PERFETTO MACRO /
 * TABLE / VIEW / FUNCTION / INDEX itself, expanding macros (macros.c) in
 * everything else, and hands back the last statement for its rows.
 *
 * PERFETTO TABLEs, VIEWs and INDEXes are created in the temp schema, so a
 * saved database is never modified by a query.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/psqlInt.h"

/* ------------------------------------------------------------------ */
/* Statements                                                            */

/* See psqlInt.h. */
const char *gp__tp_psql_read_name(const char *p, char *out, size_t size,
                                  bool dotted) {
  size_t n = 0;
  while (gp__tp_sql_ident_char(p[n]) ||
         (dotted && (p[n] == '.' || p[n] == '*')))
    n++;
  if (n == 0 || n >= size)
    return NULL;
  memcpy(out, p, n);
  out[n] = '\0';
  return gp__tp_sql_skip_ws(p + n);
}

/* See psqlInt.h. */
int gp__tp_psql_param_names(const char *open, const char *close, char **names,
                            int *count, char *err, size_t errsize,
                            const char *what) {
  const char *item[MAX_ARGS];
  size_t len[MAX_ARGS];
  int n = gp__tp_sql_split_args(open, close, item, len, MAX_ARGS);
  if (n < 0) {
    snprintf(err, errsize, "%s: too many parameters", what);
    return GP_ESQL;
  }
  for (int i = 0; i < n; i++) {
    size_t w = 0;
    while (w < len[i] && gp__tp_sql_ident_char(item[i][w]))
      w++;
    if (w == 0) {
      snprintf(err, errsize, "%s: bad parameter '%.*s'", what, (int)len[i],
               item[i]);
      for (int j = 0; j < i; j++)
        free(names[j]);
      return GP_ESQL;
    }
    names[i] = gp__tp_dup_n(item[i], w);
    if (!names[i]) {
      for (int j = 0; j < i; j++)
        free(names[j]);
      return GP_ENOMEM;
    }
  }
  *count = n;
  return 0;
}

static int exec_sql(gp_tp *tp, const char *sql, char *err, size_t errsize) {
  if (sqlite3_exec(tp->sql, sql, NULL, NULL, NULL) == SQLITE_OK)
    return 0;
  snprintf(err, errsize, "%s", sqlite3_errmsg(tp->sql));
  return GP_ESQL;
}

/* Replaces the expanded text in *s by gp__tp_psql_inline_ctes' version. */
static int inline_ctes(gp_tp *tp, gp__tp_sb *s) {
  gp__tp_sb out = {0};
  int rc = gp__tp_psql_inline_ctes(tp, s->p ? s->p : "", &out);
  free(s->p);
  *s = out;
  if (rc) {
    free(s->p);
    memset(s, 0, sizeof(*s));
  }
  return rc;
}

/* CREATE PERFETTO TABLE / VIEW / INDEX. */
static int define_relation(gp_tp *tp, const char *p, const char *what,
                           bool replace, char *err, size_t errsize) {
  char name[128];
  const char *q = gp__tp_psql_read_name(p, name, sizeof(name), false);
  if (!q) {
    snprintf(err, errsize, "CREATE PERFETTO %s: expected a name", what);
    return GP_EPARSE;
  }
  if (strcmp(what, "INDEX") == 0) {
    gp__tp_sb s = {0};
    gp__tp_sb_fmt(&s, "%sCREATE INDEX temp.%s %s", replace ? "" : "", name, q);
    if (replace) {
      char drop[200];
      snprintf(drop, sizeof(drop), "DROP INDEX IF EXISTS temp.%s", name);
      exec_sql(tp, drop, err, errsize);
    }
    int rc = s.oom ? GP_ENOMEM : exec_sql(tp, s.p, err, errsize);
    free(s.p);
    return rc;
  }
  if (*q == '(') {
    const char *c = gp__tp_sql_match_paren(q);
    if (!c) {
      snprintf(err, errsize, "CREATE PERFETTO %s %s: unbalanced schema", what,
               name);
      return GP_EPARSE;
    }
    q = gp__tp_sql_skip_ws(c);
  }
  const char *body = gp__tp_sql_eat(q, "AS");
  if (!body) {
    snprintf(err, errsize, "CREATE PERFETTO %s %s: expected AS", what, name);
    return GP_EPARSE;
  }
  gp__tp_sb sel = {0}, s = {0};
  int rc = gp__tp_psql_expand(tp, body, strlen(body), 0, &sel, err, errsize);
  if (!rc)
    rc = inline_ctes(tp, &sel);
  if (!rc && replace) {
    char drop[200];
    snprintf(drop, sizeof(drop), "DROP %s IF EXISTS temp.%s", what, name);
    rc = exec_sql(tp, drop, err, errsize);
  }
  if (!rc) {
    gp__tp_sb_fmt(&s, "CREATE TEMP %s %s AS ", what, name);
    gp__tp_sb_cat(&s, sel.p ? sel.p : "");
    rc = s.oom ? GP_ENOMEM : exec_sql(tp, s.p, err, errsize);
  }
  free(sel.p);
  free(s.p);
  return rc;
}

/* Handles a PerfettoSQL statement; *handled = false for plain SQL. */
static int perfetto_statement(gp_tp *tp, const char *stmt, bool *handled,
                              char *err, size_t errsize) {
  *handled = true;
  const char *p = gp__tp_sql_skip_ws(stmt);
  const char *q;
  if ((q = gp__tp_sql_eat(p, "INCLUDE")) &&
      (q = gp__tp_sql_eat(q, "PERFETTO")) &&
      (q = gp__tp_sql_eat(q, "MODULE"))) {
    char name[256];
    const char *r = gp__tp_psql_read_name(q, name, sizeof(name), true);
    if (!r || *r) {
      snprintf(err, errsize, "INCLUDE PERFETTO MODULE: expected a module name");
      return GP_EPARSE;
    }
    return gp__tp_psql_include(tp, name, err, errsize);
  }
  if ((q = gp__tp_sql_eat(p, "CREATE"))) {
    bool replace = false;
    const char *r = gp__tp_sql_eat(q, "OR");
    if (r && (r = gp__tp_sql_eat(r, "REPLACE"))) {
      replace = true;
      q = r;
    }
    if ((r = gp__tp_sql_eat(q, "PERFETTO"))) {
      if ((q = gp__tp_sql_eat(r, "MACRO")))
        return gp__tp_psql_define_macro(tp, q, replace, err, errsize);
      if ((q = gp__tp_sql_eat(r, "FUNCTION")))
        return gp__tp_psql_define_function(tp, q, replace, err, errsize);
      if ((q = gp__tp_sql_eat(r, "TABLE")))
        return define_relation(tp, q, "TABLE", replace, err, errsize);
      if ((q = gp__tp_sql_eat(r, "VIEW")))
        return define_relation(tp, q, "VIEW", replace, err, errsize);
      if ((q = gp__tp_sql_eat(r, "INDEX")))
        return define_relation(tp, q, "INDEX", replace, err, errsize);
      snprintf(err, errsize,
               "CREATE PERFETTO: expected MACRO, FUNCTION, TABLE, VIEW or "
               "INDEX");
      return GP_EPARSE;
    }
  }
  *handled = false;
  return 0;
}

/* The next statement of sql at *pos: [start, end) without the ';'.
 * Returns false at the end. */
static bool next_statement(const char *sql, size_t *pos, size_t *start,
                           size_t *end, bool *bad) {
  const char *p = sql + *pos;
  p = gp__tp_sql_skip_ws(p);
  if (!*p)
    return false;
  *start = (size_t)(p - sql);
  int depth = 0;
  while (*p) {
    int k;
    size_t n = gp__tp_sql_token(p, &k);
    if (k == TK_BAD) {
      *bad = true;
      *end = (size_t)(p - sql);
      *pos = strlen(sql);
      return true;
    }
    if (k == TK_PUNCT && *p == '(')
      depth++;
    else if (k == TK_PUNCT && *p == ')')
      depth--;
    else if (k == TK_PUNCT && *p == ';' && depth <= 0) {
      *end = (size_t)(p - sql);
      *pos = *end + 1;
      return true;
    }
    p += n;
  }
  *end = (size_t)(p - sql);
  *pos = *end;
  return true;
}

static int line_of(const char *sql, size_t off) {
  int line = 1;
  for (size_t i = 0; i < off && sql[i]; i++)
    line += sql[i] == '\n';
  return line;
}

/* See sqlInt.h. */
int gp__tp_psql_run(gp_tp *tp, const char *sql, sqlite3_stmt **stmt,
                    gp_tp_error *err) {
  *stmt = NULL;
  char msg[400];
  size_t pos = 0, start, end;
  bool bad = false;
  /* Find the last statement first: only its rows are returned. */
  size_t last_start = SIZE_MAX;
  {
    size_t p2 = 0, s2, e2;
    bool b2 = false;
    while (next_statement(sql, &p2, &s2, &e2, &b2))
      last_start = s2;
  }
  while (next_statement(sql, &pos, &start, &end, &bad)) {
    int line = line_of(sql, start);
    if (bad)
      return gp__tp_set_error(err, GP_EPARSE, UINT64_MAX,
                              "line %d: unterminated string, identifier or "
                              "comment",
                              line);
    char *text = gp__tp_dup_n(sql + start, end - start);
    if (!text)
      return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
    bool handled;
    msg[0] = '\0';
    int rc = perfetto_statement(tp, text, &handled, msg, sizeof(msg));
    if (rc || handled) {
      free(text);
      if (rc)
        return gp__tp_set_error(err, rc, UINT64_MAX, "line %d: %s", line, msg);
      continue;
    }
    gp__tp_sb ex = {0};
    rc = gp__tp_psql_expand(tp, text, strlen(text), 0, &ex, msg, sizeof(msg));
    free(text);
    if (!rc)
      rc = inline_ctes(tp, &ex);
    if (rc) {
      free(ex.p);
      return gp__tp_set_error(err, rc, UINT64_MAX, "line %d: %s", line,
                              rc == GP_ENOMEM ? "out of memory" : msg);
    }
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    rc = sqlite3_prepare_v2(tp->sql, ex.p ? ex.p : "", -1, &st, &tail);
    if (rc != SQLITE_OK) {
      gp__tp_set_error(err, GP_ESQL, UINT64_MAX, "line %d: %s", line,
                       sqlite3_errmsg(tp->sql));
      free(ex.p);
      return GP_ESQL;
    }
    if (tail && *gp__tp_sql_skip_ws(tail)) {
      sqlite3_finalize(st);
      gp__tp_set_error(err, GP_ESQL, UINT64_MAX,
                       "line %d: unexpected text after the statement: %.40s",
                       line, gp__tp_sql_skip_ws(tail));
      free(ex.p);
      return GP_ESQL;
    }
    free(ex.p);
    if (!st)
      continue; /* only comments */
    if (start == last_start) {
      *stmt = st;
      return 0;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
      ;
    if (rc != SQLITE_DONE) {
      gp__tp_set_error(err, GP_ESQL, UINT64_MAX, "line %d: %s", line,
                       sqlite3_errmsg(tp->sql));
      sqlite3_finalize(st);
      return GP_ESQL;
    }
    sqlite3_finalize(st);
  }
  return 0;
}

/* See sqlInt.h. */
void gp__tp_psql_free(gp_tp *tp) {
  while (tp->macros) {
    gp__tp_macro *m = tp->macros;
    tp->macros = m->next;
    gp__tp_psql_free_macro(m);
  }
  while (tp->fns) {
    gp__tp_fn *f = tp->fns;
    tp->fns = f->next;
    gp__tp_psql_free_fn(f);
  }
}
