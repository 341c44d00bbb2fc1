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
 * means its body, materialized or not. Where the body only looks at the
 * track of each interval, the read goes one step further and runs once
 * per track rather than once per interval (read_by_tracks, below).
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

/* A read of a CTE by an intersection: "__gp_iv_agg(args) FROM name )". */
typedef struct ivread {
  const char *agg;             /* "__gp_iv_agg" */
  const char *cols, *cols_end; /* "(id, ts, dur, ...)" */
  const char *name;
  size_t nlen;
} ivread;

/*
 * The next read to rewrite at or after *pp whose name is a usable CTE.
 * Returns that CTE (and the read in *r) and moves *pp past the name, or
 * NULL at the end of sql.
 */
static const cte *next_read(const char **pp, const cte *c, int n, ivread *r) {
  const char *p = *pp;
  while (*p) {
    int k;
    size_t len = gp__tp_sql_token(p, &k);
    if (k != TK_IDENT || len != 11 || strncasecmp(p, "__gp_iv_agg", 11) != 0) {
      p += len;
      continue;
    }
    const char *agg = p;
    p += len;
    const char *q = gp__tp_sql_skip_ws(p);
    const char *cols = q;
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
    *r = (ivread){agg, cols, args_end, name, nlen};
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

/*
 * Even read from its body, such a CTE costs a row of SQL per interval
 * (about a microsecond each: most of the seed query) to hand
 * counter_leading_intervals!'s rows to the intersection. Where the body
 * only looks at each interval's track besides passing id, ts and dur on,
 *
 *   (SELECT u.id, u.ts, u.dur, u.value, gct.ugpu
 *    FROM counter_leading_intervals!(...) u
 *    JOIN gpu_counter_track gct ON gct.id = u.track_id)
 *
 * the read runs the same SQL over the intervals' tracks instead:
 *
 *   __gp_iv_ci(u.b, u.trace_end, u.track_id, gct.ugpu)
 *   FROM __gp_counter_tracks(<the intervals' argument>, trace_end()) AS u
 *   JOIN gpu_counter_track gct ON gct.id = u.track_id
 *
 * one row per track, which stands for all its intervals
 * (aggbuf.h). The same rows reach the intersection: a track's intervals
 * all meet or all fail the joins and the WHERE clause when those look at
 * no column of u but track_id.
 *
 * The body must read exactly so: SELECT, plain column names (q.col, with
 * or without AS) between it and FROM, counter_leading_intervals!(...)
 * with an optional alias, then joins or a WHERE clause without
 * parentheses, quoted names or parameters, and not RIGHT, FULL, NATURAL,
 * USING, GROUP, ORDER, LIMIT, compound or window clauses, where u's
 * columns appear only as u.track_id (another table's columns qualified
 * when they share a name with u's). The read's id, ts and dur must name
 * u's, its partition columns u.track_id or another table's columns.
 */

/* The columns of counter_leading_intervals!'s rows. */
static const char *const ci_cols[] = {
    "id", "ts", "dur", "track_id", "value", "next_value", "delta_value"};
enum { U_ID, U_TS, U_DUR, U_TRACK, U_NCOLS = 7, U_NOT = -1 };

/* Which of ci_cols [p, p + n) is, or U_NOT. */
static int ci_col(const char *p, size_t n) {
  for (int i = 0; i < U_NCOLS; i++)
    if (strlen(ci_cols[i]) == n && strncasecmp(p, ci_cols[i], n) == 0)
      return i;
  return U_NOT;
}

static bool same_ident(const char *a, size_t an, const char *b, size_t bn) {
  return an == bn && strncasecmp(a, b, an) == 0;
}

/* Is [p, p + n) one of the words (NULL-terminated)? */
static bool is_word(const char *p, size_t n, const char *const *words) {
  for (; *words; words++)
    if (same_ident(p, n, *words, strlen(*words)))
      return true;
  return false;
}

/* Words after the intervals that end an alias-less FROM item. */
static const char *const clause_words[] = {
    "JOIN",  "INNER",  "LEFT",      "RIGHT",  "FULL",   "CROSS", "NATURAL",
    "OUTER", "ON",     "USING",     "WHERE",  "GROUP",  "ORDER", "LIMIT",
    "UNION", "EXCEPT", "INTERSECT", "WINDOW", "HAVING", NULL};

/* Words that make the rows of the rest depend on more than a track. */
static const char *const rest_bad[] = {
    "RIGHT",    "FULL",   "NATURAL", "USING",     "GROUP",  "ORDER",
    "LIMIT",    "UNION",  "EXCEPT",  "INTERSECT", "WINDOW", "HAVING",
    "DISTINCT", "SELECT", "VALUES",  "OVER",      NULL};

/* A token of a body, whitespace and comments dropped. */
typedef struct btok {
  const char *p;
  size_t n;
  int kind;
} btok;

/* The next token at or after p (before end), TK_END at end. */
static btok next_tok(const char *p, const char *end) {
  btok t;
  t.p = gp__tp_sql_skip_ws(p);
  if (t.p >= end || !*t.p) {
    t.p = end;
    t.n = 0;
    t.kind = TK_END;
    return t;
  }
  t.n = gp__tp_sql_token(t.p, &t.kind);
  return t;
}

static bool is_punct(btok t, char c) {
  return t.kind == TK_PUNCT && *t.p == c;
}

/* A column of the body's select list: [q.]col [[AS] name]. */
typedef struct item {
  const char *expr; /* q.col or col */
  size_t elen;
  const char *name;
  size_t nlen;
  int ucol; /* which of u's columns, or U_NOT: another table's */
} item;

#define MAX_ITEMS 64

/* Reads the item [p, end) into it; false if it is not a plain column or
 * may be u's or another table's. alias: u's (NULL if none); joined:
 * whether other tables follow u. */
static bool read_item(const char *p, const char *end, const btok *alias,
                      bool joined, item *it) {
  btok t[6];
  int nt = 0;
  for (btok x = next_tok(p, end); x.kind != TK_END;
       x = next_tok(x.p + x.n, end)) {
    if (nt == 6)
      return false;
    t[nt++] = x;
  }
  int at = 0;
  btok q = {NULL, 0, TK_END};
  if (nt >= 3 && t[0].kind == TK_IDENT && is_punct(t[1], '.')) {
    q = t[0];
    at = 2;
  }
  if (at >= nt || t[at].kind != TK_IDENT)
    return false;
  btok col = t[at++];
  it->expr = q.p ? q.p : col.p;
  it->elen = (size_t)(col.p + col.n - it->expr);
  it->name = col.p;
  it->nlen = col.n;
  if (at < nt && gp__tp_sql_keyword(t[at].p, "AS"))
    at++;
  if (at < nt && t[at].kind == TK_IDENT) {
    it->name = t[at].p;
    it->nlen = t[at].n;
    at++;
  }
  if (at != nt)
    return false;
  int u = ci_col(col.p, col.n);
  bool of_u = q.p ? alias && same_ident(q.p, q.n, alias->p, alias->n)
                  : !joined || u != U_NOT;
  if (!of_u) {
    it->ucol = U_NOT;
    return true;
  }
  /* u's: a column it has, named so that no other table may claim it. */
  it->ucol = u;
  return u != U_NOT && (q.p || !joined);
}

/* Whether the joins and WHERE clause [p, end) look at no column of u
 * (alias) but u.track_id. */
static bool rest_per_track(const char *p, const char *end, const btok *alias) {
  btok prev2 = {NULL, 0, TK_END}, prev = prev2;
  for (btok t = next_tok(p, end); t.kind != TK_END;
       prev2 = prev, prev = t, t = next_tok(t.p + t.n, end)) {
    if (t.kind == TK_QIDENT || t.kind == TK_VAR || t.kind == TK_BAD ||
        is_punct(t, '(') || is_punct(t, ')') ||
        (t.kind == TK_IDENT && is_word(t.p, t.n, rest_bad)))
      return false;
    if (t.kind != TK_IDENT)
      continue;
    bool qualified =
        prev.kind == TK_PUNCT && *prev.p == '.' && prev2.kind == TK_IDENT;
    if (alias && same_ident(t.p, t.n, alias->p, alias->n)) {
      btok dot = next_tok(t.p + t.n, end);
      btok col = next_tok(dot.p + dot.n, end);
      if (!is_punct(dot, '.') || col.kind != TK_IDENT ||
          ci_col(col.p, col.n) != U_TRACK)
        return false;
    } else if (ci_col(t.p, t.n) != U_NOT && !qualified) {
      return false;
    }
  }
  return true;
}

/*
 * The read r of a CTE with keyed body [body, body + blen) by tracks (see
 * above) into out; false (out untouched) where the body or the read is
 * not of that shape.
 */
static bool read_by_tracks(const ivread *r, const char *body, size_t blen,
                           gp__tp_sb *out) {
  const char *end = body + blen - 1; /* the body's ')' */
  btok t = next_tok(body, end);
  if (!is_punct(t, '('))
    return false;
  t = next_tok(t.p + t.n, end);
  if (t.kind != TK_IDENT || !gp__tp_sql_keyword(t.p, "SELECT"))
    return false;
  /* The select list: [list, from). */
  const char *list = t.p + t.n, *from = NULL;
  int depth = 0;
  for (t = next_tok(list, end); t.kind != TK_END && !from;
       t = next_tok(t.p + t.n, end)) {
    depth += is_punct(t, '(') - is_punct(t, ')');
    if (t.kind == TK_BAD)
      return false;
    if (depth == 0 && t.kind == TK_IDENT && gp__tp_sql_keyword(t.p, "FROM"))
      from = t.p;
  }
  /* The intervals: GP_TP_CI_HEAD arg, trace_end()) */
  const char *src = from ? gp__tp_sql_skip_ws(from + 4) : NULL;
  size_t hl = sizeof(GP_TP_CI_HEAD) - 1;
  if (!src || (size_t)(end - src) < hl || memcmp(src, GP_TP_CI_HEAD, hl) != 0)
    return false;
  const char *call = src + hl - 1, *call_end = gp__tp_sql_match_paren(call);
  const char *src_end = call_end ? gp__tp_sql_match_paren(src) : NULL;
  const char *arg[2];
  size_t alen[2];
  if (!src_end || src_end > end ||
      gp__tp_sql_skip_ws(call_end) != src_end - 1 ||
      gp__tp_sql_split_args(call, call_end, arg, alen, 2) != 2 ||
      !same_ident(arg[1], alen[1], "trace_end()", 11))
    return false;
  /* An alias, then the rest of the body: [rest, end). */
  btok alias = next_tok(src_end, end);
  bool has_alias = false;
  if (alias.kind == TK_IDENT && gp__tp_sql_keyword(alias.p, "AS")) {
    alias = next_tok(alias.p + alias.n, end);
    if (alias.kind != TK_IDENT)
      return false;
    has_alias = true;
  } else if (alias.kind == TK_IDENT &&
             !is_word(alias.p, alias.n, clause_words)) {
    has_alias = true;
  }
  const char *rest = has_alias ? alias.p + alias.n : src_end;
  bool joined = next_tok(rest, end).kind != TK_END;
  const btok *ap = has_alias ? &alias : NULL;
  if ((joined && !has_alias) || !rest_per_track(rest, end, ap))
    return false;
  /* The select list's columns. */
  item it[MAX_ITEMS];
  int ni = 0;
  const char *ip = list;
  for (t = next_tok(list, from);; t = next_tok(t.p + t.n, from)) {
    if (is_punct(t, '(') || is_punct(t, ')'))
      return false;
    if (t.kind != TK_END && !is_punct(t, ','))
      continue;
    if (ni == MAX_ITEMS || !read_item(ip, t.p, ap, joined, &it[ni++]))
      return false;
    if (t.kind == TK_END)
      break;
    ip = t.p + 1;
  }
  /* The read's columns (id, ts, dur, partitions), each one item by name. */
  const char *rv[MAX_ARGS];
  size_t rl[MAX_ARGS];
  int nr = gp__tp_sql_split_args(r->cols, r->cols_end, rv, rl, MAX_ARGS);
  if (nr < 3)
    return false;
  const item *use[MAX_ARGS];
  for (int a = 0; a < nr; a++) {
    use[a] = NULL;
    for (int i = 0; i < ni; i++)
      if (same_ident(rv[a], rl[a], it[i].name, it[i].nlen)) {
        if (use[a])
          return false; /* two columns of that name */
        use[a] = &it[i];
      }
    if (!use[a] || (a < 3 && use[a]->ucol != a) ||
        (a >= 3 && use[a]->ucol != U_TRACK && use[a]->ucol != U_NOT))
      return false;
  }
  const char *an = has_alias ? alias.p : "__gp_u";
  int al = has_alias ? (int)alias.n : 6;
  gp__tp_sb_fmt(out, "__gp_iv_ci(%.*s.b, %.*s.trace_end, %.*s.track_id", al, an,
                al, an, al, an);
  for (int a = 3; a < nr; a++) {
    gp__tp_sb_cat(out, ", ");
    if (use[a]->ucol == U_TRACK)
      gp__tp_sb_fmt(out, "%.*s.track_id", al, an);
    else
      gp__tp_sb_add(out, use[a]->expr, use[a]->elen);
  }
  gp__tp_sb_cat(out, ") FROM __gp_counter_tracks(");
  gp__tp_sb_add(out, arg[0], alen[0]);
  gp__tp_sb_fmt(out, ", trace_end()) AS %.*s ", al, an);
  gp__tp_sb_add(out, rest, (size_t)(end - rest));
  return true;
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
  const char *p = sql;
  ivread r;
  const cte *x;
  bool oom = false;
  while ((x = next_read(&p, c, n, &r)) != NULL)
    if (!keyed[x - c].p) {
      key_body(x->body, x->blen, &keyed[x - c]);
      oom = oom || keyed[x - c].oom || !keyed[x - c].p;
    }
  /* ... then each read goes by tracks or points at its CTE's keyed body,
   * and each definition is its keyed body. */
  const char *copied = sql;
  p = sql;
  while (!oom && (x = next_read(&p, c, n, &r)) != NULL) {
    gp__tp_sb tracks = {0};
    if (read_by_tracks(&r, keyed[x - c].p, keyed[x - c].n, &tracks)) {
      emit_range(copied, r.agg, c, n, keyed, out);
      gp__tp_sb_add(out, tracks.p, tracks.n);
    } else {
      emit_range(copied, r.name, c, n, keyed, out);
      gp__tp_sb_add(out, keyed[x - c].p, keyed[x - c].n);
      gp__tp_sb_cat(out, " AS ");
      gp__tp_sb_add(out, r.name, r.nlen);
    }
    oom = oom || tracks.oom;
    free(tracks.p);
    copied = p;
  }
  if (!oom)
    emit_range(copied, copied + strlen(copied), c, n, keyed, out);
  for (int i = 0; i < n; i++)
    free(keyed[i].p);
  return oom || out->oom ? GP_ENOMEM : 0;
}
