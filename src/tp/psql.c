/*
 * psql.c - PerfettoSQL on top of SQLite: statement splitting, INCLUDE
 * PERFETTO MODULE, macros (name!(args)), and CREATE PERFETTO MACRO /
 * TABLE / VIEW / FUNCTION / INDEX.
 *
 * Macros are textual, as in Perfetto: an invocation is replaced by the
 * macro's body with each $param replaced by the argument's text, and the
 * result is scanned again (nested invocations included). Built-in macros
 * (the interval helpers, cast_*!) are C functions producing text over
 * the engines of intervals.c. PERFETTO TABLEs and VIEWs are created in
 * the temp schema, so a saved database is never modified by a query.
 * PERFETTO FUNCTIONs run their SQL body with the arguments bound as
 * $name parameters; RETURNS TABLE(...) makes a table-valued function.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/sqlInt.h"

#define MAX_ARGS 32
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* Strings                                                               */

typedef struct str {
  char *p;
  size_t n, cap;
  bool oom;
} str;

/* Macro expansions larger than this are refused (exponential macros). */
#define MAX_TEXT (64u << 20)

static void str_add(str *s, const char *d, size_t n) {
  if (s->oom)
    return;
  if (s->n + n > MAX_TEXT) {
    s->oom = true;
    return;
  }
  if (s->n + n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    while (cap < s->n + n + 1)
      cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p) {
      s->oom = true;
      return;
    }
    s->p = p;
    s->cap = cap;
  }
  memcpy(s->p + s->n, d, n);
  s->n += n;
  s->p[s->n] = '\0';
}

static void str_cat(str *s, const char *d) { str_add(s, d, strlen(d)); }

static void str_fmt(str *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void str_fmt(str *s, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n >= 0)
    str_add(s, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* ------------------------------------------------------------------ */
/* Tokens                                                                */

enum { TK_END, TK_WS, TK_IDENT, TK_STRING, TK_QIDENT, TK_NUMBER, TK_VAR,
       TK_PUNCT, TK_BAD };

static bool ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* Length of the token at p (p[0] != 0) and its kind. */
static size_t token(const char *p, int *kind) {
  const char *q = p;
  if (isspace((unsigned char)*q)) {
    while (isspace((unsigned char)*q))
      q++;
    *kind = TK_WS;
  } else if (q[0] == '-' && q[1] == '-') {
    while (*q && *q != '\n')
      q++;
    *kind = TK_WS;
  } else if (q[0] == '/' && q[1] == '*') {
    q += 2;
    while (*q && !(q[0] == '*' && q[1] == '/'))
      q++;
    if (*q)
      q += 2;
    else {
      *kind = TK_BAD; /* unterminated comment */
      return (size_t)(q - p);
    }
    *kind = TK_WS;
  } else if (*q == '\'' || *q == '"' || *q == '`' || *q == '[') {
    char close = *q == '[' ? ']' : *q;
    *kind = *q == '\'' ? TK_STRING : TK_QIDENT;
    q++;
    for (;;) {
      if (!*q) {
        *kind = TK_BAD;
        return (size_t)(q - p);
      }
      if (*q == close) {
        if (close != ']' && q[1] == close) {
          q += 2;
          continue;
        }
        q++;
        break;
      }
      q++;
    }
  } else if (isdigit((unsigned char)*q) ||
             (*q == '.' && isdigit((unsigned char)q[1]))) {
    while (ident_char(*q) || *q == '.' ||
           ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))
      q++;
    *kind = TK_NUMBER;
  } else if (ident_char(*q)) {
    while (ident_char(*q) || *q == '$')
      q++;
    *kind = TK_IDENT;
  } else if ((*q == '$' || *q == ':' || *q == '@') && ident_char(q[1])) {
    q++;
    while (ident_char(*q))
      q++;
    *kind = TK_VAR;
  } else {
    q++;
    *kind = TK_PUNCT;
  }
  return (size_t)(q - p);
}

/* Skips whitespace and comments. */
static const char *skip_ws(const char *p) {
  int k;
  while (*p) {
    size_t n = token(p, &k);
    if (k != TK_WS)
      break;
    p += n;
  }
  return p;
}

/* Does p start with keyword kw (case-insensitive, whole word)? */
static bool keyword(const char *p, const char *kw) {
  size_t n = strlen(kw);
  return strncasecmp(p, kw, n) == 0 && !ident_char(p[n]);
}

/* Skips keyword kw and the whitespace after it. */
static const char *eat(const char *p, const char *kw) {
  return keyword(p, kw) ? skip_ws(p + strlen(kw)) : NULL;
}

/* The position just after the parenthesised group starting at p ('('),
 * or NULL if it does not close. */
static const char *match_paren(const char *p) {
  int depth = 0;
  while (*p) {
    int k;
    size_t n = token(p, &k);
    if (k == TK_BAD)
      return NULL;
    if (k == TK_PUNCT && *p == '(')
      depth++;
    else if (k == TK_PUNCT && *p == ')' && --depth == 0)
      return p + 1;
    p += n;
  }
  return NULL;
}

/* Splits "( a, b(c, d), e )" (p at '(' and end after ')') into trimmed
 * top-level items. Returns the count, or -1 if more than max. */
static int split_args(const char *p, const char *end, const char **item,
                      size_t *len, int max) {
  const char *start = skip_ws(p + 1);
  const char *last = end - 1; /* the closing ')' */
  int n = 0, depth = 0;
  const char *q = start;
  if (skip_ws(start) >= last)
    return 0;
  while (q < last) {
    int k;
    size_t tl = token(q, &k);
    bool split = false;
    if (k == TK_PUNCT && *q == '(')
      depth++;
    else if (k == TK_PUNCT && *q == ')')
      depth--;
    else if (k == TK_PUNCT && *q == ',' && depth == 0)
      split = true;
    if (split) {
      if (n >= max)
        return -1;
      item[n] = start;
      const char *e = q;
      while (e > start && isspace((unsigned char)e[-1]))
        e--;
      len[n++] = (size_t)(e - start);
      start = skip_ws(q + 1);
    }
    q += tl;
  }
  if (n >= max)
    return -1;
  const char *e = last;
  while (e > start && isspace((unsigned char)e[-1]))
    e--;
  item[n] = start;
  len[n++] = (size_t)(e - start);
  return n;
}

/* ------------------------------------------------------------------ */
/* Macros                                                                */

struct gp__tp_macro {
  char *name;
  int nparams;
  char *params[MAX_ARGS];
  char *body;
  gp__tp_macro *next;
};

typedef struct args {
  int n;
  const char *v[MAX_ARGS];
  size_t len[MAX_ARGS];
} args;

/* Module bits. */
enum {
  MOD_COUNTERS_INTERVALS = 1 << 0,
  MOD_INTERVALS_INTERSECT = 1 << 1,
  MOD_STD_GPU_CONTEXT = 1 << 2,
};

typedef int (*builtin_fn)(const args *a, str *out, char *err, size_t errsize);

static int arg_count(const args *a, int want, const char *name, char *err,
                     size_t errsize) {
  if (a->n == want)
    return 0;
  snprintf(err, errsize, "%s!: expected %d arguments, got %d", name, want,
           a->n);
  return GP_ESQL;
}

static int m_cast(const args *a, str *out, const char *type, const char *name,
                  char *err, size_t errsize) {
  if (arg_count(a, 1, name, err, errsize))
    return GP_ESQL;
  str_cat(out, "CAST(");
  str_add(out, a->v[0], a->len[0]);
  str_fmt(out, " AS %s)", type);
  return 0;
}

static int m_cast_int(const args *a, str *o, char *e, size_t n) {
  return m_cast(a, o, "INT", "cast_int", e, n);
}
static int m_cast_double(const args *a, str *o, char *e, size_t n) {
  return m_cast(a, o, "REAL", "cast_double", e, n);
}
static int m_cast_string(const args *a, str *o, char *e, size_t n) {
  return m_cast(a, o, "TEXT", "cast_string", e, n);
}

static int m_counter_leading_intervals(const args *a, str *o, char *err,
                                       size_t errsize) {
  if (arg_count(a, 1, "counter_leading_intervals", err, errsize))
    return GP_ESQL;
  str_cat(o, "(SELECT id, ts, dur, track_id, value, next_value, delta_value "
             "FROM __gp_counter_intervals((SELECT __gp_ci_agg(__gp_c.id, "
             "__gp_c.ts, __gp_c.track_id, __gp_c.value) FROM ");
  str_add(o, a->v[0], a->len[0]);
  str_cat(o, " AS __gp_c), trace_end()))");
  return 0;
}

/* A parenthesised list "(a, b, ...)" argument into items. */
static int list_arg(const char *p, size_t n, args *out, const char *name,
                    char *err, size_t errsize) {
  const char *q = skip_ws(p);
  const char *end = p + n;
  while (end > q && isspace((unsigned char)end[-1]))
    end--;
  if (q >= end || *q != '(' || match_paren(q) != end) {
    /* A single name without parentheses is a list of one. */
    if (q < end && *q != '(') {
      out->n = 1;
      out->v[0] = q;
      out->len[0] = (size_t)(end - q);
      return 0;
    }
    snprintf(err, errsize, "%s!: expected a parenthesised list", name);
    return GP_ESQL;
  }
  out->n = split_args(q, end, out->v, out->len, MAX_ARGS);
  if (out->n < 0) {
    snprintf(err, errsize, "%s!: too many items in a list", name);
    return GP_ESQL;
  }
  return 0;
}

static int intersect_text(const args *tabs, const args *parts, str *o,
                          const char *name, char *err, size_t errsize) {
  if (tabs->n < 1 || tabs->n > 15) {
    snprintf(err, errsize, "%s!: between 1 and 15 tables, got %d", name,
             tabs->n);
    return GP_ESQL;
  }
  if (parts->n > 4) {
    snprintf(err, errsize, "%s!: at most 4 partition columns, got %d", name,
             parts->n);
    return GP_ESQL;
  }
  str_cat(o, "(SELECT ts, dur");
  for (int i = 0; i < tabs->n; i++)
    str_fmt(o, ", id_%d", i);
  for (int i = 0; i < parts->n; i++) {
    str_fmt(o, ", p_%d AS ", i);
    str_add(o, parts->v[i], parts->len[i]);
  }
  str_cat(o, " FROM __gp_intersect(");
  for (int i = 0; i < tabs->n; i++) {
    str_cat(o, i ? ", (SELECT __gp_iv_agg(id, ts, dur"
                 : "(SELECT __gp_iv_agg(id, ts, dur");
    for (int j = 0; j < parts->n; j++) {
      str_cat(o, ", ");
      str_add(o, parts->v[j], parts->len[j]);
    }
    str_cat(o, ") FROM ");
    str_add(o, tabs->v[i], tabs->len[i]);
    str_cat(o, ")");
  }
  str_cat(o, "))");
  return 0;
}

static int m_interval_intersect(const args *a, str *o, char *err,
                                size_t errsize) {
  if (arg_count(a, 2, "_interval_intersect", err, errsize))
    return GP_ESQL;
  args tabs, parts;
  if (list_arg(a->v[0], a->len[0], &tabs, "_interval_intersect", err,
               errsize) ||
      list_arg(a->v[1], a->len[1], &parts, "_interval_intersect", err,
               errsize))
    return GP_ESQL;
  return intersect_text(&tabs, &parts, o, "_interval_intersect", err, errsize);
}

static int m_interval_intersect_single(const args *a, str *o, char *err,
                                       size_t errsize) {
  if (arg_count(a, 3, "_interval_intersect_single", err, errsize))
    return GP_ESQL;
  str_cat(o, "(SELECT id_0 AS id, ts, dur FROM _interval_intersect!((");
  str_add(o, a->v[2], a->len[2]);
  str_cat(o, ", (SELECT 0 AS id, ");
  str_add(o, a->v[0], a->len[0]);
  str_cat(o, " AS ts, ");
  str_add(o, a->v[1], a->len[1]);
  str_cat(o, " AS dur)), ()))");
  return 0;
}

static int m_interval_intersect_with_col_names(const args *a, str *o,
                                               char *err, size_t errsize) {
  if (arg_count(a, 9, "_interval_intersect_with_col_names", err, errsize))
    return GP_ESQL;
  args parts;
  if (list_arg(a->v[8], a->len[8], &parts, "_interval_intersect_with_col_names",
               err, errsize))
    return GP_ESQL;
  str_cat(o, "_interval_intersect!((");
  for (int t = 0; t < 2; t++) {
    const int b = t * 4;
    str_cat(o, t ? ", (SELECT " : "(SELECT ");
    str_add(o, a->v[b + 1], a->len[b + 1]);
    str_cat(o, " AS id, ");
    str_add(o, a->v[b + 2], a->len[b + 2]);
    str_cat(o, " AS ts, ");
    str_add(o, a->v[b + 3], a->len[b + 3]);
    str_cat(o, " AS dur");
    for (int j = 0; j < parts.n; j++) {
      str_cat(o, ", ");
      str_add(o, parts.v[j], parts.len[j]);
    }
    str_cat(o, " FROM ");
    str_add(o, a->v[b], a->len[b]);
    str_cat(o, ")");
  }
  str_cat(o, "), ");
  str_add(o, a->v[8], a->len[8]);
  str_cat(o, ")");
  return 0;
}

static const struct builtin {
  const char *name;
  uint64_t module; /* 0: always available */
  builtin_fn fn;
} builtins[] = {
    {"cast_int", 0, m_cast_int},
    {"cast_double", 0, m_cast_double},
    {"cast_string", 0, m_cast_string},
    {"counter_leading_intervals", MOD_COUNTERS_INTERVALS,
     m_counter_leading_intervals},
    {"_interval_intersect", MOD_INTERVALS_INTERSECT, m_interval_intersect},
    {"_interval_intersect_single", MOD_INTERVALS_INTERSECT,
     m_interval_intersect_single},
    {"_interval_intersect_with_col_names", MOD_INTERVALS_INTERSECT,
     m_interval_intersect_with_col_names},
};

static const struct module {
  const char *name;
  uint64_t bit;
  const char *sql; /* run once when included, NULL if none */
} modules[] = {
    {"counters.intervals", MOD_COUNTERS_INTERVALS, NULL},
    {"intervals.intersect", MOD_INTERVALS_INTERSECT, NULL},
    {"std.gpu.context", MOD_STD_GPU_CONTEXT,
     "CREATE TEMP VIEW IF NOT EXISTS gpu_context AS "
     "SELECT id, context_id, pid, api FROM __intrinsic_gpu_context"},
};

static gp__tp_macro *find_macro(gp_tp *tp, const char *name, size_t n) {
  for (gp__tp_macro *m = tp->macros; m; m = m->next)
    if (strlen(m->name) == n && strncmp(m->name, name, n) == 0)
      return m;
  return NULL;
}

static int expand(gp_tp *tp, const char *text, size_t len, int depth, str *out,
                  char *err, size_t errsize);

/* Substitutes $params of a user macro's body. */
static int user_macro(gp_tp *tp, const gp__tp_macro *m, const args *a,
                      int depth, str *out, char *err, size_t errsize) {
  if (a->n != m->nparams) {
    snprintf(err, errsize, "%s!: expected %d arguments, got %d", m->name,
             m->nparams, a->n);
    return GP_ESQL;
  }
  str body = {0};
  const char *p = m->body;
  while (*p) {
    int k;
    size_t n = token(p, &k);
    bool done = false;
    if (k == TK_VAR && *p == '$')
      for (int i = 0; i < m->nparams; i++)
        if (strlen(m->params[i]) == n - 1 &&
            strncmp(m->params[i], p + 1, n - 1) == 0) {
          str_add(&body, a->v[i], a->len[i]);
          done = true;
          break;
        }
    if (!done)
      str_add(&body, p, n);
    p += n;
  }
  if (body.oom) {
    free(body.p);
    return GP_ENOMEM;
  }
  int rc = expand(tp, body.p ? body.p : "", body.n, depth + 1, out, err,
                  errsize);
  free(body.p);
  return rc;
}

/* Expands every macro invocation of text[0..len) into out. */
static int expand(gp_tp *tp, const char *text, size_t len, int depth, str *out,
                  char *err, size_t errsize) {
  if (depth > MAX_DEPTH) {
    snprintf(err, errsize, "macros nested more than %d deep", MAX_DEPTH);
    return GP_ESQL;
  }
  char *copy = dup_n(text, len);
  if (!copy)
    return GP_ENOMEM;
  const char *p = copy;
  int rc = 0;
  while (*p && !rc) {
    int k;
    size_t n = token(p, &k);
    if (k == TK_BAD) {
      snprintf(err, errsize, "unterminated string or comment: %.40s", p);
      rc = GP_EPARSE;
      break;
    }
    const char *bang = p + n;
    if (k == TK_IDENT && *bang == '!' && bang[1] != '=') {
      const char *open = skip_ws(bang + 1);
      const char *close = *open == '(' ? match_paren(open) : NULL;
      if (!close) {
        snprintf(err, errsize, "%.*s!: expected '(' and a closing ')'", (int)n,
                 p);
        rc = GP_EPARSE;
        break;
      }
      args a;
      a.n = split_args(open, close, a.v, a.len, MAX_ARGS);
      if (a.n < 0) {
        snprintf(err, errsize, "%.*s!: too many arguments", (int)n, p);
        rc = GP_ESQL;
        break;
      }
      gp__tp_macro *m = find_macro(tp, p, n);
      const struct builtin *b = NULL;
      for (size_t i = 0; !m && i < sizeof(builtins) / sizeof(builtins[0]); i++)
        if (strlen(builtins[i].name) == n &&
            strncmp(builtins[i].name, p, n) == 0)
          b = &builtins[i];
      if (m) {
        rc = user_macro(tp, m, &a, depth, out, err, errsize);
      } else if (b && (!b->module || (tp->modules & b->module))) {
        str tmp = {0};
        rc = b->fn(&a, &tmp, err, errsize);
        if (!rc && tmp.oom)
          rc = GP_ENOMEM;
        if (!rc)
          rc = expand(tp, tmp.p ? tmp.p : "", tmp.n, depth + 1, out, err,
                      errsize);
        free(tmp.p);
      } else if (b) {
        const char *mod = "?";
        for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
          if (modules[i].bit == b->module)
            mod = modules[i].name;
        snprintf(err, errsize,
                 "macro %.*s! needs INCLUDE PERFETTO MODULE %s;", (int)n, p,
                 mod);
        rc = GP_ESQL;
      } else {
        snprintf(err, errsize, "unknown macro %.*s!", (int)n, p);
        rc = GP_ESQL;
      }
      p = close;
      continue;
    }
    str_add(out, p, n);
    p += n;
  }
  free(copy);
  if (!rc && out->oom)
    rc = GP_ENOMEM;
  return rc;
}

/* ------------------------------------------------------------------ */
/* CREATE PERFETTO FUNCTION                                              */

struct gp__tp_fn {
  char *name;
  int nargs;
  char *argv[MAX_ARGS];
  bool table;
  int ncols;
  char *cols[MAX_ARGS];
  char *body;
  gp_tp *tp;
  gp__tp_fn *next;
};

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

static int fn_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  gp__tp_fn *f = aux;
  str s = {0};
  str_cat(&s, "CREATE TABLE x(");
  for (int i = 0; i < f->ncols; i++)
    str_fmt(&s, "%s\"%s\"", i ? ", " : "", f->cols[i]);
  for (int i = 0; i < f->nargs; i++)
    str_fmt(&s, ", \"__arg_%s\" HIDDEN", f->argv[i]);
  str_cat(&s, ")");
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
  fn_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *out = &c->base;
  return SQLITE_OK;
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

static int fn_eof(sqlite3_vtab_cursor *cur) { return ((fn_cursor *)cur)->eof; }

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

static void free_fn(gp__tp_fn *f) {
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

static void free_macro(gp__tp_macro *m) {
  if (!m)
    return;
  free(m->name);
  free(m->body);
  for (int i = 0; i < m->nparams; i++)
    free(m->params[i]);
  free(m);
}

/* See sqlInt.h. */
void gp__tp_psql_free(gp_tp *tp) {
  while (tp->macros) {
    gp__tp_macro *m = tp->macros;
    tp->macros = m->next;
    free_macro(m);
  }
  while (tp->fns) {
    gp__tp_fn *f = tp->fns;
    tp->fns = f->next;
    free_fn(f);
  }
}

/* ------------------------------------------------------------------ */
/* Statements                                                            */

/* Reads an identifier (possibly dotted, for module names) at p. */
static const char *read_name(const char *p, char *out, size_t size,
                             bool dotted) {
  size_t n = 0;
  while (ident_char(p[n]) || (dotted && (p[n] == '.' || p[n] == '*')))
    n++;
  if (n == 0 || n >= size)
    return NULL;
  memcpy(out, p, n);
  out[n] = '\0';
  return skip_ws(p + n);
}

/* Names of "(a TYPE, b TYPE(x.y), ...)": the first word of each item. */
static int param_names(const char *open, const char *close, char **names,
                       int *count, char *err, size_t errsize,
                       const char *what) {
  const char *item[MAX_ARGS];
  size_t len[MAX_ARGS];
  int n = split_args(open, close, item, len, MAX_ARGS);
  if (n < 0) {
    snprintf(err, errsize, "%s: too many parameters", what);
    return GP_ESQL;
  }
  for (int i = 0; i < n; i++) {
    size_t w = 0;
    while (w < len[i] && ident_char(item[i][w]))
      w++;
    if (w == 0) {
      snprintf(err, errsize, "%s: bad parameter '%.*s'", what, (int)len[i],
               item[i]);
      for (int j = 0; j < i; j++)
        free(names[j]);
      return GP_ESQL;
    }
    names[i] = dup_n(item[i], w);
    if (!names[i]) {
      for (int j = 0; j < i; j++)
        free(names[j]);
      return GP_ENOMEM;
    }
  }
  *count = n;
  return 0;
}

static int include_module(gp_tp *tp, const char *name, char *err,
                          size_t errsize) {
  size_t n = strlen(name);
  bool wildcard = n >= 2 && strcmp(name + n - 2, ".*") == 0;
  bool found = false;
  for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
    const struct module *m = &modules[i];
    bool match = wildcard ? strncmp(m->name, name, n - 1) == 0
                          : strcmp(m->name, name) == 0;
    if (!match)
      continue;
    found = true;
    if (tp->modules & m->bit)
      continue;
    if (m->sql && sqlite3_exec(tp->sql, m->sql, NULL, NULL, NULL) != SQLITE_OK) {
      snprintf(err, errsize, "module %s: %s", m->name, sqlite3_errmsg(tp->sql));
      return GP_ESQL;
    }
    tp->modules |= m->bit;
  }
  if (!found) {
    str s = {0};
    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
      str_fmt(&s, "%s%s", i ? ", " : "", modules[i].name);
    snprintf(err, errsize, "unknown module '%s' (available: %s)", name,
             s.p ? s.p : "");
    free(s.p);
    return GP_ESQL;
  }
  return 0;
}

static int define_macro(gp_tp *tp, const char *p, bool replace, char *err,
                        size_t errsize) {
  char name[128];
  const char *q = read_name(p, name, sizeof(name), false);
  const char *close = q && *q == '(' ? match_paren(q) : NULL;
  if (!close) {
    snprintf(err, errsize, "CREATE PERFETTO MACRO: expected name(params)");
    return GP_EPARSE;
  }
  gp__tp_macro *m = calloc(1, sizeof(*m));
  if (!m)
    return GP_ENOMEM;
  int rc = param_names(q, close, m->params, &m->nparams, err, errsize,
                       "CREATE PERFETTO MACRO");
  const char *r = skip_ws(close);
  const char *ret = rc ? NULL : eat(r, "RETURNS");
  /* Skip the return type (a word, maybe with parentheses) up to AS. */
  while (ret && *ret && !keyword(ret, "AS")) {
    int k;
    ret += token(ret, &k);
    ret = skip_ws(ret);
  }
  const char *body = ret ? eat(ret, "AS") : NULL;
  if (!rc && !body) {
    snprintf(err, errsize,
             "CREATE PERFETTO MACRO %s: expected RETURNS type AS body", name);
    rc = GP_EPARSE;
  }
  if (!rc) {
    m->name = strdup(name);
    m->body = strdup(body);
    if (!m->name || !m->body)
      rc = GP_ENOMEM;
  }
  gp__tp_macro **pp = &tp->macros;
  while (!rc && *pp && strcmp((*pp)->name, name) != 0)
    pp = &(*pp)->next;
  if (!rc && *pp && !replace) {
    snprintf(err, errsize, "macro %s already exists (use CREATE OR REPLACE)",
             name);
    rc = GP_ESQL;
  }
  if (rc) {
    free_macro(m);
    return rc;
  }
  if (*pp) {
    m->next = (*pp)->next;
    free_macro(*pp);
  } else {
    m->next = NULL;
  }
  *pp = m;
  return 0;
}

static int define_function(gp_tp *tp, const char *p, bool replace, char *err,
                           size_t errsize) {
  char name[128];
  const char *q = read_name(p, name, sizeof(name), false);
  const char *close = q && *q == '(' ? match_paren(q) : NULL;
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
  int rc = param_names(q, close, f->argv, &f->nargs, err, errsize,
                       "CREATE PERFETTO FUNCTION");
  const char *r = rc ? NULL : eat(skip_ws(close), "RETURNS");
  if (!rc && !r) {
    snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: expected RETURNS",
             name);
    rc = GP_EPARSE;
  }
  if (!rc && keyword(r, "TABLE")) {
    const char *o = skip_ws(r + 5);
    const char *c = *o == '(' ? match_paren(o) : NULL;
    if (!c) {
      snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: TABLE(columns)",
               name);
      rc = GP_EPARSE;
    } else {
      f->table = true;
      rc = param_names(o, c, f->cols, &f->ncols, err, errsize,
                       "CREATE PERFETTO FUNCTION");
      r = skip_ws(c);
    }
  }
  while (!rc && *r && !keyword(r, "AS")) {
    int k;
    r = skip_ws(r + token(r, &k));
  }
  const char *body = rc ? NULL : eat(r, "AS");
  if (!rc && !body) {
    snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: expected AS body",
             name);
    rc = GP_EPARSE;
  }
  str expanded = {0};
  if (!rc)
    rc = expand(tp, body, strlen(body), 0, &expanded, err, errsize);
  if (!rc) {
    f->name = strdup(name);
    f->body = expanded.p ? expanded.p : strdup("SELECT NULL");
    expanded.p = NULL;
    if (!f->name || !f->body)
      rc = GP_ENOMEM;
  }
  free(expanded.p);
  if (!rc) {
    int src = f->table
                  ? sqlite3_create_module_v2(tp->sql, f->name, &fn_module, f,
                                             NULL)
                  : sqlite3_create_function_v2(tp->sql, f->name, f->nargs,
                                               SQLITE_UTF8, f, fn_scalar, NULL,
                                               NULL, NULL);
    if (src != SQLITE_OK) {
      snprintf(err, errsize, "CREATE PERFETTO FUNCTION %s: %s", name,
               sqlite3_errmsg(tp->sql));
      rc = GP_ESQL;
    }
  }
  if (rc) {
    free_fn(f);
    return rc;
  }
  /* Replaced functions stay allocated: SQLite may still reference them in
   * prepared statements; they are freed with the handle. */
  f->next = tp->fns;
  tp->fns = f;
  return 0;
}

static int exec_sql(gp_tp *tp, const char *sql, char *err, size_t errsize) {
  if (sqlite3_exec(tp->sql, sql, NULL, NULL, NULL) == SQLITE_OK)
    return 0;
  snprintf(err, errsize, "%s", sqlite3_errmsg(tp->sql));
  return GP_ESQL;
}

/* CREATE PERFETTO TABLE / VIEW / INDEX. */
static int define_relation(gp_tp *tp, const char *p, const char *what,
                           bool replace, char *err, size_t errsize) {
  char name[128];
  const char *q = read_name(p, name, sizeof(name), false);
  if (!q) {
    snprintf(err, errsize, "CREATE PERFETTO %s: expected a name", what);
    return GP_EPARSE;
  }
  if (strcmp(what, "INDEX") == 0) {
    str s = {0};
    str_fmt(&s, "%sCREATE INDEX temp.%s %s",
            replace ? "" : "", name, q);
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
    const char *c = match_paren(q);
    if (!c) {
      snprintf(err, errsize, "CREATE PERFETTO %s %s: unbalanced schema", what,
               name);
      return GP_EPARSE;
    }
    q = skip_ws(c);
  }
  const char *body = eat(q, "AS");
  if (!body) {
    snprintf(err, errsize, "CREATE PERFETTO %s %s: expected AS", what, name);
    return GP_EPARSE;
  }
  str sel = {0}, s = {0};
  int rc = expand(tp, body, strlen(body), 0, &sel, err, errsize);
  if (!rc && replace) {
    char drop[200];
    snprintf(drop, sizeof(drop), "DROP %s IF EXISTS temp.%s", what, name);
    rc = exec_sql(tp, drop, err, errsize);
  }
  if (!rc) {
    str_fmt(&s, "CREATE TEMP %s %s AS ", what, name);
    str_cat(&s, sel.p ? sel.p : "");
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
  const char *p = skip_ws(stmt);
  const char *q;
  if ((q = eat(p, "INCLUDE")) && (q = eat(q, "PERFETTO")) &&
      (q = eat(q, "MODULE"))) {
    char name[256];
    const char *r = read_name(q, name, sizeof(name), true);
    if (!r || *r) {
      snprintf(err, errsize, "INCLUDE PERFETTO MODULE: expected a module name");
      return GP_EPARSE;
    }
    return include_module(tp, name, err, errsize);
  }
  if ((q = eat(p, "CREATE"))) {
    bool replace = false;
    const char *r = eat(q, "OR");
    if (r && (r = eat(r, "REPLACE"))) {
      replace = true;
      q = r;
    }
    if ((r = eat(q, "PERFETTO"))) {
      if ((q = eat(r, "MACRO")))
        return define_macro(tp, q, replace, err, errsize);
      if ((q = eat(r, "FUNCTION")))
        return define_function(tp, q, replace, err, errsize);
      if ((q = eat(r, "TABLE")))
        return define_relation(tp, q, "TABLE", replace, err, errsize);
      if ((q = eat(r, "VIEW")))
        return define_relation(tp, q, "VIEW", replace, err, errsize);
      if ((q = eat(r, "INDEX")))
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
  p = skip_ws(p);
  if (!*p)
    return false;
  *start = (size_t)(p - sql);
  int depth = 0;
  while (*p) {
    int k;
    size_t n = token(p, &k);
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
    char *text = dup_n(sql + start, end - start);
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
    str ex = {0};
    rc = expand(tp, text, strlen(text), 0, &ex, msg, sizeof(msg));
    free(text);
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
    if (tail && *skip_ws(tail)) {
      sqlite3_finalize(st);
      gp__tp_set_error(err, GP_ESQL, UINT64_MAX,
                       "line %d: unexpected text after the statement: %.40s",
                       line, skip_ws(tail));
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
