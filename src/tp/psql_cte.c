/*
 * psql_cte.c - an interval intersection over a CTE of counter intervals
 * reads the CTE's definition, not the CTE.
 *
 * The seed's pattern
 *
 *   WITH u AS (SELECT ... FROM counter_leading_intervals!(...) ...)
 *   SELECT ... FROM _interval_intersect!((k, u), ()) ii
 *              JOIN u ON u.id = ii.id_1
 *
 * uses u twice, and SQLite (3.35 and later) materializes a CTE used twice:
 * every interval is written into a temporary B-tree, and the join back by
 * id then builds an automatic index over all of them, to look up the few
 * hundred the intersection returns. At 525 k intervals that is two thirds
 * of the query. The intersection only reads its tables once, in one
 * aggregate pass (macros.c: `(SELECT __gp_iv_agg(id, ts, dur, ...) FROM
 * u)`), so after macro expansion this pass points that read at the CTE's
 * body instead: `FROM (body) AS u`. The body runs once more (one more
 * pass over the counter rows), and the CTE's other use, now its only one,
 * is planned inline, where counter_leading_intervals! answers id and
 * track_id lookups (counter_intervals.c). Results are the same: a CTE
 * means its body, materialized or not.
 *
 * Only where that is plainly safe: a top-level WITH (not RECURSIVE) of
 * the statement, no other WITH anywhere in it (a nested one could reuse
 * the name), a CTE defined once, without a column list or a MATERIALIZED
 * hint, whose body calls __gp_counter_intervals (the expansion of
 * counter_leading_intervals!), read by an intersection placed after its
 * definition. Anything else is left as written.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpuperf/error.h"
#include "tp/psqlInt.h"

#define MAX_CTES 64

/* A CTE of the top-level WITH. */
typedef struct cte {
  const char *name;
  size_t nlen;
  const char *body; /* "(...)", parentheses included */
  size_t blen;
  bool usable;
} cte;

/* The token at p (after whitespace) and its kind and length. */
static const char *tok(const char *p, int *kind, size_t *len) {
  p = gp__tp_sql_skip_ws(p);
  *len = *p ? gp__tp_sql_token(p, kind) : 0;
  if (!*p)
    *kind = TK_END;
  return p;
}

/* Does [p, end) hold the identifier `word` as a token? */
static bool has_ident(const char *p, const char *end, const char *word) {
  size_t wl = strlen(word);
  while (p < end) {
    int k;
    size_t n = gp__tp_sql_token(p, &k);
    if (k == TK_IDENT && n == wl && strncasecmp(p, word, wl) == 0)
      return true;
    p += n;
  }
  return false;
}

/* Reads the top-level WITH list of sql into c[]; returns the count (0:
 * none, or not one this pass may touch). */
static int read_ctes(const char *sql, cte *c) {
  const char *p = gp__tp_sql_skip_ws(sql), *e;
  if ((e = gp__tp_sql_eat(p, "EXPLAIN"))) { /* shows the plan that runs */
    p = e;
    if ((e = gp__tp_sql_eat(p, "QUERY")))
      p = gp__tp_sql_eat(e, "PLAN");
  }
  p = p ? gp__tp_sql_eat(p, "WITH") : NULL;
  if (!p || gp__tp_sql_keyword(p, "RECURSIVE"))
    return 0;
  int n = 0;
  for (;;) {
    int k;
    size_t len;
    p = tok(p, &k, &len);
    if (k != TK_IDENT || n == MAX_CTES)
      return 0;
    cte *x = &c[n++];
    x->name = p;
    x->nlen = len;
    x->usable = true;
    p = gp__tp_sql_skip_ws(p + len);
    if (*p == '(') { /* a column list: the body's names differ */
      x->usable = false;
      if (!(p = gp__tp_sql_match_paren(p)))
        return 0;
      p = gp__tp_sql_skip_ws(p);
    }
    if (!(p = gp__tp_sql_eat(p, "AS")))
      return 0;
    const char *q = gp__tp_sql_eat(p, "NOT");
    if (q || gp__tp_sql_keyword(p, "MATERIALIZED")) {
      x->usable = false; /* the query says how it wants it */
      if (!(p = gp__tp_sql_eat(q ? q : p, "MATERIALIZED")))
        return 0;
    }
    const char *close = *p == '(' ? gp__tp_sql_match_paren(p) : NULL;
    if (!close)
      return 0;
    x->body = p;
    x->blen = (size_t)(close - p);
    x->usable = x->usable && has_ident(p, close, "__gp_counter_intervals");
    p = gp__tp_sql_skip_ws(close);
    if (*p != ',')
      break;
    p++;
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (c[i].nlen == c[j].nlen &&
          strncasecmp(c[i].name, c[j].name, c[i].nlen) == 0)
        c[i].usable = c[j].usable = false;
  return n;
}

/* The usable CTE named [p, p + len) defined before p, or NULL. */
static const cte *find_cte(const cte *c, int n, const char *p, size_t len) {
  for (int i = 0; i < n; i++)
    if (c[i].usable && c[i].nlen == len &&
        strncasecmp(c[i].name, p, len) == 0 && p >= c[i].body + c[i].blen)
      return &c[i];
  return NULL;
}

/*
 * The next read to rewrite at or after *pp: "__gp_iv_agg(...) FROM name )"
 * whose name is a usable CTE. Returns that CTE (and the name's place) and
 * moves *pp past it, or NULL at the end of sql.
 */
static const cte *next_read(const char **pp, const cte *c, int n,
                            const char **name_out, size_t *nlen_out) {
  const char *p = *pp;
  while (*p) {
    int k;
    size_t len = gp__tp_sql_token(p, &k);
    if (k != TK_IDENT || len != 11 || strncasecmp(p, "__gp_iv_agg", 11) != 0) {
      p += len;
      continue;
    }
    p += len;
    const char *q = gp__tp_sql_skip_ws(p);
    const char *args_end = *q == '(' ? gp__tp_sql_match_paren(q) : NULL;
    if (!args_end)
      continue;
    q = gp__tp_sql_eat(gp__tp_sql_skip_ws(args_end), "FROM");
    if (!q)
      continue;
    size_t nlen;
    const char *name = tok(q, &k, &nlen);
    int k2;
    size_t l2;
    const char *after = tok(name + nlen, &k2, &l2);
    const cte *x = k == TK_IDENT && k2 == TK_PUNCT && *after == ')'
                       ? find_cte(c, n, name, nlen)
                       : NULL;
    if (!x)
      continue;
    *name_out = name;
    *nlen_out = nlen;
    *pp = name + nlen;
    return x;
  }
  *pp = p;
  return NULL;
}

/*
 * A CTE's body is read twice after the rewrite (its definition, and the
 * copy an intersection reads), and so is its counter_leading_intervals!:
 * two passes over the counter rows for the same intervals (a quarter of
 * the seed query). In both, each `(SELECT __gp_ci_agg(` subquery of the
 * body becomes
 *
 *   COALESCE(__gp_ci_memo(k), (SELECT __gp_ci_agg(k, ...) ...))
 *
 * with a key k of its own: whichever runs first keeps its result under k
 * (aggbuf.c) and the other takes it from there without running the
 * subquery. The same text in one statement: the same rows.
 */
static const char ci_call[] = "(SELECT __gp_ci_agg(";

/* body with each ci_call subquery keyed, into out. */
static void key_body(const char *body, size_t blen, gp__tp_sb *out) {
  static _Atomic uint64_t next_key;
  const char *p = body, *end = body + blen;
  size_t cl = sizeof(ci_call) - 1;
  for (;;) {
    const char *at = NULL;
    for (const char *q = p; q + cl <= end && !at; q++)
      if (memcmp(q, ci_call, cl) == 0)
        at = q;
    const char *close = at ? gp__tp_sql_match_paren(at) : NULL;
    if (!close || close > end) {
      gp__tp_sb_add(out, p, (size_t)(end - p));
      return;
    }
    unsigned long long k = atomic_fetch_add(&next_key, 1) + 1;
    char head[96];
    snprintf(head, sizeof(head), "COALESCE(__gp_ci_memo(%llu), %s%llu, ", k,
             ci_call, k);
    gp__tp_sb_add(out, p, (size_t)(at - p));
    gp__tp_sb_cat(out, head);
    gp__tp_sb_add(out, at + cl, (size_t)(close - (at + cl)));
    gp__tp_sb_cat(out, ")");
    p = close;
  }
}

/* [a, b) of sql into out, with the definitions of the CTEs that have a
 * keyed body (keyed[i].p) replaced by it. */
static void emit_range(const char *a, const char *b, const cte *c, int n,
                       const gp__tp_sb *keyed, gp__tp_sb *out) {
  for (int i = 0; i < n; i++)
    if (keyed[i].p && c[i].body >= a && c[i].body + c[i].blen <= b) {
      gp__tp_sb_add(out, a, (size_t)(c[i].body - a));
      gp__tp_sb_add(out, keyed[i].p, keyed[i].n);
      a = c[i].body + c[i].blen;
    }
  gp__tp_sb_add(out, a, (size_t)(b - a));
}

/* See psqlInt.h. */
int gp__tp_psql_inline_ctes(const char *sql, gp__tp_sb *out) {
  cte c[MAX_CTES];
  int n = read_ctes(sql, c);
  bool any = false;
  for (int i = 0; i < n; i++)
    any = any || c[i].usable;
  /* A second WITH anywhere (a subquery's) could bind a name differently. */
  int withs = 0;
  for (const char *p = sql; any && *p;) {
    int k;
    size_t len = gp__tp_sql_token(p, &k);
    withs += k == TK_IDENT && gp__tp_sql_keyword(p, "WITH");
    p += len;
  }
  if (!any || withs != 1) {
    gp__tp_sb_cat(out, sql);
    return out->oom ? GP_ENOMEM : 0;
  }
  /* The CTEs that intersections read, their bodies keyed once... */
  gp__tp_sb keyed[MAX_CTES];
  memset(keyed, 0, sizeof(keyed));
  const char *p = sql, *name;
  size_t nlen;
  const cte *x;
  bool oom = false;
  while ((x = next_read(&p, c, n, &name, &nlen)) != NULL)
    if (!keyed[x - c].p) {
      key_body(x->body, x->blen, &keyed[x - c]);
      oom = oom || keyed[x - c].oom || !keyed[x - c].p;
    }
  /* ... then each read points at its CTE's keyed body, and each
   * definition is its keyed body. */
  const char *copied = sql;
  p = sql;
  while (!oom && (x = next_read(&p, c, n, &name, &nlen)) != NULL) {
    emit_range(copied, name, c, n, keyed, out);
    gp__tp_sb_add(out, keyed[x - c].p, keyed[x - c].n);
    gp__tp_sb_cat(out, " AS ");
    gp__tp_sb_add(out, name, nlen);
    copied = p;
  }
  if (!oom)
    emit_range(copied, copied + strlen(copied), c, n, keyed, out);
  for (int i = 0; i < n; i++)
    free(keyed[i].p);
  return oom || out->oom ? GP_ENOMEM : 0;
}
