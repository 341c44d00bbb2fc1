/*
 * macros.c - PerfettoSQL macros: the built-in ones (cast_*!, and the
 * interval helpers of the modules counters.intervals and
 * intervals.intersect), the modules themselves, CREATE PERFETTO MACRO,
 * and expansion.
 *
 * Macros are textual, as in Perfetto: an invocation name!(args) is
 * replaced by the macro's body with each $param replaced by the
 * argument's text, and the result is scanned again, so nested invocations
 * expand too (at most 64 deep, and 64 MiB of text).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/psqlInt.h"

/* ------------------------------------------------------------------ */
/* Macros                                                                */

/* Module bits. */
enum {
  MOD_COUNTERS_INTERVALS = 1 << 0,
  MOD_INTERVALS_INTERSECT = 1 << 1,
  MOD_STD_GPU_CONTEXT = 1 << 2,
};

typedef int (*builtin_fn)(const args *a, gp__tp_sb *out, char *err,
                          size_t errsize);

static int arg_count(const args *a, int want, const char *name, char *err,
                     size_t errsize) {
  if (a->n == want)
    return 0;
  snprintf(err, errsize, "%s!: expected %d arguments, got %d", name, want,
           a->n);
  return GP_ESQL;
}

static int m_cast(const args *a, gp__tp_sb *out, const char *type,
                  const char *name, char *err, size_t errsize) {
  if (arg_count(a, 1, name, err, errsize))
    return GP_ESQL;
  gp__tp_sb_cat(out, "CAST(");
  gp__tp_sb_add(out, a->v[0], a->len[0]);
  gp__tp_sb_fmt(out, " AS %s)", type);
  return 0;
}

static int m_cast_int(const args *a, gp__tp_sb *o, char *e, size_t n) {
  return m_cast(a, o, "INT", "cast_int", e, n);
}
static int m_cast_double(const args *a, gp__tp_sb *o, char *e, size_t n) {
  return m_cast(a, o, "REAL", "cast_double", e, n);
}
static int m_cast_string(const args *a, gp__tp_sb *o, char *e, size_t n) {
  return m_cast(a, o, "TEXT", "cast_string", e, n);
}

static int m_counter_leading_intervals(const args *a, gp__tp_sb *o, char *err,
                                       size_t errsize) {
  if (arg_count(a, 1, "counter_leading_intervals", err, errsize))
    return GP_ESQL;
  gp__tp_sb_cat(o, GP_TP_CI_HEAD "(SELECT __gp_ci_agg(__gp_c.id, "
                                 "__gp_c.ts, __gp_c.track_id, __gp_c.value) "
                                 "FROM ");
  gp__tp_sb_add(o, a->v[0], a->len[0]);
  gp__tp_sb_cat(o, " AS __gp_c), trace_end()))");
  return 0;
}

/* A parenthesised list "(a, b, ...)" argument into items. */
static int list_arg(const char *p, size_t n, args *out, const char *name,
                    char *err, size_t errsize) {
  const char *q = gp__tp_sql_skip_ws(p);
  const char *end = p + n;
  while (end > q && isspace((unsigned char)end[-1]))
    end--;
  if (q >= end || *q != '(' || gp__tp_sql_match_paren(q) != end) {
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
  out->n = gp__tp_sql_split_args(q, end, out->v, out->len, MAX_ARGS);
  if (out->n < 0) {
    snprintf(err, errsize, "%s!: too many items in a list", name);
    return GP_ESQL;
  }
  return 0;
}

static int intersect_text(const args *tabs, const args *parts, gp__tp_sb *o,
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
  gp__tp_sb_cat(o, "(SELECT ts, dur");
  for (int i = 0; i < tabs->n; i++)
    gp__tp_sb_fmt(o, ", id_%d", i);
  for (int i = 0; i < parts->n; i++) {
    gp__tp_sb_fmt(o, ", p_%d AS ", i);
    gp__tp_sb_add(o, parts->v[i], parts->len[i]);
  }
  gp__tp_sb_cat(o, " FROM __gp_intersect(");
  for (int i = 0; i < tabs->n; i++) {
    gp__tp_sb_cat(o, i ? ", (SELECT __gp_iv_agg(id, ts, dur"
                       : "(SELECT __gp_iv_agg(id, ts, dur");
    for (int j = 0; j < parts->n; j++) {
      gp__tp_sb_cat(o, ", ");
      gp__tp_sb_add(o, parts->v[j], parts->len[j]);
    }
    gp__tp_sb_cat(o, ") FROM ");
    gp__tp_sb_add(o, tabs->v[i], tabs->len[i]);
    gp__tp_sb_cat(o, ")");
  }
  gp__tp_sb_cat(o, "))");
  return 0;
}

static int m_interval_intersect(const args *a, gp__tp_sb *o, char *err,
                                size_t errsize) {
  if (arg_count(a, 2, "_interval_intersect", err, errsize))
    return GP_ESQL;
  args tabs, parts;
  if (list_arg(a->v[0], a->len[0], &tabs, "_interval_intersect", err,
               errsize) ||
      list_arg(a->v[1], a->len[1], &parts, "_interval_intersect", err, errsize))
    return GP_ESQL;
  return intersect_text(&tabs, &parts, o, "_interval_intersect", err, errsize);
}

static int m_interval_intersect_single(const args *a, gp__tp_sb *o, char *err,
                                       size_t errsize) {
  if (arg_count(a, 3, "_interval_intersect_single", err, errsize))
    return GP_ESQL;
  gp__tp_sb_cat(o, "(SELECT id_0 AS id, ts, dur FROM _interval_intersect!((");
  gp__tp_sb_add(o, a->v[2], a->len[2]);
  gp__tp_sb_cat(o, ", (SELECT 0 AS id, ");
  gp__tp_sb_add(o, a->v[0], a->len[0]);
  gp__tp_sb_cat(o, " AS ts, ");
  gp__tp_sb_add(o, a->v[1], a->len[1]);
  gp__tp_sb_cat(o, " AS dur)), ()))");
  return 0;
}

static int m_interval_intersect_with_col_names(const args *a, gp__tp_sb *o,
                                               char *err, size_t errsize) {
  if (arg_count(a, 9, "_interval_intersect_with_col_names", err, errsize))
    return GP_ESQL;
  args parts;
  if (list_arg(a->v[8], a->len[8], &parts, "_interval_intersect_with_col_names",
               err, errsize))
    return GP_ESQL;
  gp__tp_sb_cat(o, "_interval_intersect!((");
  for (int t = 0; t < 2; t++) {
    const int b = t * 4;
    gp__tp_sb_cat(o, t ? ", (SELECT " : "(SELECT ");
    gp__tp_sb_add(o, a->v[b + 1], a->len[b + 1]);
    gp__tp_sb_cat(o, " AS id, ");
    gp__tp_sb_add(o, a->v[b + 2], a->len[b + 2]);
    gp__tp_sb_cat(o, " AS ts, ");
    gp__tp_sb_add(o, a->v[b + 3], a->len[b + 3]);
    gp__tp_sb_cat(o, " AS dur");
    for (int j = 0; j < parts.n; j++) {
      gp__tp_sb_cat(o, ", ");
      gp__tp_sb_add(o, parts.v[j], parts.len[j]);
    }
    gp__tp_sb_cat(o, " FROM ");
    gp__tp_sb_add(o, a->v[b], a->len[b]);
    gp__tp_sb_cat(o, ")");
  }
  gp__tp_sb_cat(o, "), ");
  gp__tp_sb_add(o, a->v[8], a->len[8]);
  gp__tp_sb_cat(o, ")");
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

/* Substitutes $params of a user macro's body. */
static int user_macro(gp_tp *tp, const gp__tp_macro *m, const args *a,
                      int depth, gp__tp_sb *out, char *err, size_t errsize) {
  if (a->n != m->nparams) {
    snprintf(err, errsize, "%s!: expected %d arguments, got %d", m->name,
             m->nparams, a->n);
    return GP_ESQL;
  }
  gp__tp_sb body = {0};
  const char *p = m->body;
  while (*p) {
    int k;
    size_t n = gp__tp_sql_token(p, &k);
    bool done = false;
    if (k == TK_VAR && *p == '$')
      for (int i = 0; i < m->nparams; i++)
        if (strlen(m->params[i]) == n - 1 &&
            strncmp(m->params[i], p + 1, n - 1) == 0) {
          gp__tp_sb_add(&body, a->v[i], a->len[i]);
          done = true;
          break;
        }
    if (!done)
      gp__tp_sb_add(&body, p, n);
    p += n;
  }
  if (body.oom) {
    free(body.p);
    return GP_ENOMEM;
  }
  int rc = gp__tp_psql_expand(tp, body.p ? body.p : "", body.n, depth + 1, out,
                              err, errsize);
  free(body.p);
  return rc;
}

/* See psqlInt.h. */
int gp__tp_psql_expand(gp_tp *tp, const char *text, size_t len, int depth,
                       gp__tp_sb *out, char *err, size_t errsize) {
  if (depth > MAX_DEPTH) {
    snprintf(err, errsize, "macros nested more than %d deep", MAX_DEPTH);
    return GP_ESQL;
  }
  char *copy = gp__tp_dup_n(text, len);
  if (!copy)
    return GP_ENOMEM;
  const char *p = copy;
  int rc = 0;
  while (*p && !rc) {
    int k;
    size_t n = gp__tp_sql_token(p, &k);
    if (k == TK_BAD) {
      snprintf(err, errsize, "unterminated string or comment: %.40s", p);
      rc = GP_EPARSE;
      break;
    }
    const char *bang = p + n;
    if (k == TK_IDENT && *bang == '!' && bang[1] != '=') {
      const char *open = gp__tp_sql_skip_ws(bang + 1);
      const char *close = *open == '(' ? gp__tp_sql_match_paren(open) : NULL;
      if (!close) {
        snprintf(err, errsize, "%.*s!: expected '(' and a closing ')'", (int)n,
                 p);
        rc = GP_EPARSE;
        break;
      }
      args a;
      a.n = gp__tp_sql_split_args(open, close, a.v, a.len, MAX_ARGS);
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
        gp__tp_sb tmp = {0};
        rc = b->fn(&a, &tmp, err, errsize);
        if (!rc && tmp.oom)
          rc = GP_ENOMEM;
        if (!rc)
          rc = gp__tp_psql_expand(tp, tmp.p ? tmp.p : "", tmp.n, depth + 1, out,
                                  err, errsize);
        free(tmp.p);
      } else if (b) {
        const char *mod = "?";
        for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
          if (modules[i].bit == b->module)
            mod = modules[i].name;
        snprintf(err, errsize, "macro %.*s! needs INCLUDE PERFETTO MODULE %s;",
                 (int)n, p, mod);
        rc = GP_ESQL;
      } else {
        snprintf(err, errsize, "unknown macro %.*s!", (int)n, p);
        rc = GP_ESQL;
      }
      p = close;
      continue;
    }
    gp__tp_sb_add(out, p, n);
    p += n;
  }
  free(copy);
  if (!rc && out->oom)
    rc = GP_ENOMEM;
  return rc;
}

/* See psqlInt.h. */
int gp__tp_psql_include(gp_tp *tp, const char *name, char *err,
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
    if (m->sql &&
        sqlite3_exec(tp->sql, m->sql, NULL, NULL, NULL) != SQLITE_OK) {
      snprintf(err, errsize, "module %s: %s", m->name, sqlite3_errmsg(tp->sql));
      return GP_ESQL;
    }
    tp->modules |= m->bit;
  }
  if (!found) {
    gp__tp_sb s = {0};
    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++)
      gp__tp_sb_fmt(&s, "%s%s", i ? ", " : "", modules[i].name);
    snprintf(err, errsize, "unknown module '%s' (available: %s)", name,
             s.p ? s.p : "");
    free(s.p);
    return GP_ESQL;
  }
  return 0;
}

/* See psqlInt.h. */
void gp__tp_psql_free_macro(gp__tp_macro *m) {
  if (!m)
    return;
  free(m->name);
  free(m->body);
  for (int i = 0; i < m->nparams; i++)
    free(m->params[i]);
  free(m);
}

/* See psqlInt.h. */
int gp__tp_psql_define_macro(gp_tp *tp, const char *p, bool replace, char *err,
                             size_t errsize) {
  char name[128];
  const char *q = gp__tp_psql_read_name(p, name, sizeof(name), false);
  const char *close = q && *q == '(' ? gp__tp_sql_match_paren(q) : NULL;
  if (!close) {
    snprintf(err, errsize, "CREATE PERFETTO MACRO: expected name(params)");
    return GP_EPARSE;
  }
  gp__tp_macro *m = calloc(1, sizeof(*m));
  if (!m)
    return GP_ENOMEM;
  int rc = gp__tp_psql_param_names(q, close, m->params, &m->nparams, err,
                                   errsize, "CREATE PERFETTO MACRO");
  const char *r = gp__tp_sql_skip_ws(close);
  const char *ret = rc ? NULL : gp__tp_sql_eat(r, "RETURNS");
  /* Skip the return type (a word, maybe with parentheses) up to AS. */
  while (ret && *ret && !gp__tp_sql_keyword(ret, "AS")) {
    int k;
    ret += gp__tp_sql_token(ret, &k);
    ret = gp__tp_sql_skip_ws(ret);
  }
  const char *body = ret ? gp__tp_sql_eat(ret, "AS") : NULL;
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
    gp__tp_psql_free_macro(m);
    return rc;
  }
  if (*pp) {
    m->next = (*pp)->next;
    gp__tp_psql_free_macro(*pp);
  } else {
    m->next = NULL;
  }
  *pp = m;
  return 0;
}
