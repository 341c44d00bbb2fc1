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
 *
 * Where the counter rows are the counter table's, chosen by track (the
 * seed's `SELECT c.id, c.ts, c.track_id, c.value FROM counter c JOIN
 * gpu_counter_track gct ON gct.id = c.track_id WHERE gct.name = ...`),
 * the subquery runs over the table's tracks instead of its rows,
 *
 *   (SELECT __gp_ci_tracks(k, c.track_id) FROM __gp_counter_ids AS c
 *    JOIN gpu_counter_track gct ON gct.id = c.track_id WHERE ...)
 *
 * and the aggregate copies each track's rows from the store
 * (counter_rows.c): the same records, without a row of SQL each (half of
 * what was left of the seed query). Only where `counter` is the built-in
 * view of the tables in memory (from_store): no CTE and no temporary
 * table or view of that name.
 */
static const char ci_call[] = "(SELECT __gp_ci_agg(";

/* Is [p, p + n) text (case aside)? */
static bool same_text(const char *p, size_t n, const char *text) {
  return strlen(text) == n && strncasecmp(p, text, n) == 0;
}

/* The counter table's columns; __gp_ci_agg reads the first four. */
static const char *const counter_cols[] = {"id", "ts", "track_id", "value",
                                           "arg_set_id"};
enum { C_TRACK = 2 };
#define C_NCOLS ((int)(sizeof(counter_cols) / sizeof(counter_cols[0])))

/*
 * The ci_call subquery [at, close), as counter_leading_intervals! writes
 * it, "(SELECT __gp_ci_agg(__gp_c.id, __gp_c.ts, __gp_c.track_id,
 * __gp_c.value) FROM arg AS __gp_c)", over the counter table's tracks
 * (see above) with key k into out; false (out untouched) where arg is
 * neither the counter table nor a select of its rows by track.
 */
static bool ci_by_tracks(const char *at, const char *close,
                         unsigned long long k, gp__tp_sb *out) {
  static const char agg_args[] =
      "(__gp_c.id, __gp_c.ts, __gp_c.track_id, __gp_c.value)";
  const char *open = at + sizeof(ci_call) - 2;
  const char *args_end = gp__tp_sql_match_paren(open);
  if (!args_end || (size_t)(args_end - open) != sizeof(agg_args) - 1 ||
      memcmp(open, agg_args, sizeof(agg_args) - 1) != 0)
    return false;
  const char *arg = gp__tp_sql_eat(gp__tp_sql_skip_ws(args_end), "FROM");
  if (!arg)
    return false;
  int kind;
  size_t len = gp__tp_sql_token(arg, &kind);
  const char *arg_end = *arg == '('        ? gp__tp_sql_match_paren(arg)
                        : kind == TK_IDENT ? arg + len
                                           : NULL;
  const char *q =
      arg_end ? gp__tp_sql_eat(gp__tp_sql_skip_ws(arg_end), "AS") : NULL;
  if (!q || !gp__tp_sql_keyword(q, "__gp_c") ||
      gp__tp_sql_skip_ws(q + 6) != close - 1)
    return false;
  if (*arg != '(') { /* counter_leading_intervals!(counter) */
    if (!same_text(arg, len, "counter"))
      return false;
    gp__tp_sb_fmt(out,
                  "(SELECT __gp_ci_tracks(%llu, __gp_c.track_id) FROM "
                  "__gp_counter_ids AS __gp_c)",
                  k);
    return true;
  }
  gp__tp_shape sh;
  if (!gp__tp_sql_keyed_select(arg, arg_end, counter_cols, C_NCOLS, C_TRACK,
                               &sh) ||
      !same_text(sh.src, (size_t)(sh.src_end - sh.src), "counter"))
    return false;
  /* What __gp_ci_agg reads by name: the table's own columns. */
  for (int i = 0; i < 4; i++) {
    const char *w = counter_cols[i];
    const gp__tp_item *it = gp__tp_shape_item(&sh, w, strlen(w));
    if (!it || it->col != i)
      return false;
  }
  const char *an = sh.alias ? sh.alias : "__gp_c";
  int al = sh.alias ? (int)sh.alen : 6;
  gp__tp_sb_fmt(out,
                "(SELECT __gp_ci_tracks(%llu, %.*s.track_id) FROM "
                "__gp_counter_ids AS %.*s ",
                k, al, an, al, an);
  gp__tp_sb_add(out, sh.rest, (size_t)(sh.end - sh.rest));
  gp__tp_sb_cat(out, ")");
  return true;
}

/* body with each ci_call subquery keyed (and over the counter table's
 * tracks where from_store allows), into out. */
static void key_body(const char *body, size_t blen, bool from_store,
                     gp__tp_sb *out) {
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
    gp__tp_sb_add(out, p, (size_t)(at - p));
    gp__tp_sb_fmt(out, "COALESCE(__gp_ci_memo(%llu), ", k);
    if (!from_store || !ci_by_tracks(at, close, k, out)) {
      gp__tp_sb_fmt(out, "%s%llu, ", ci_call, k);
      gp__tp_sb_add(out, at + cl, (size_t)(close - (at + cl)));
    }
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
 * The body must be a SELECT from counter_leading_intervals!(...) that
 * looks at no column of it but track_id (psql_shape.c says which SQL
 * qualifies); the read's id, ts and dur must name the intervals' own,
 * its partition columns u.track_id or another table's columns.
 */

/* The columns of counter_leading_intervals!'s rows: id, ts and dur
 * first, as an intersection reads them. */
static const char *const ci_cols[] = {
    "id", "ts", "dur", "track_id", "value", "next_value", "delta_value"};
enum { U_TRACK = 3 };
#define U_NCOLS ((int)(sizeof(ci_cols) / sizeof(ci_cols[0])))

/*
 * The read r of a CTE with keyed body [body, body + blen) by tracks (see
 * above) into out; false (out untouched) where the body or the read is
 * not of that shape.
 */
static bool read_by_tracks(const ivread *r, const char *body, size_t blen,
                           gp__tp_sb *out) {
  gp__tp_shape sh;
  if (!gp__tp_sql_keyed_select(body, body + blen, ci_cols, U_NCOLS, U_TRACK,
                               &sh))
    return false;
  /* The intervals: GP_TP_CI_HEAD arg, trace_end()) */
  size_t hl = sizeof(GP_TP_CI_HEAD) - 1;
  if ((size_t)(sh.src_end - sh.src) < hl ||
      memcmp(sh.src, GP_TP_CI_HEAD, hl) != 0)
    return false;
  const char *call = sh.src + hl - 1, *call_end = gp__tp_sql_match_paren(call);
  const char *arg[2];
  size_t alen[2];
  if (!call_end || gp__tp_sql_skip_ws(call_end) != sh.src_end - 1 ||
      gp__tp_sql_split_args(call, call_end, arg, alen, 2) != 2 ||
      !same_text(arg[1], alen[1], "trace_end()"))
    return false;
  /* The read's columns (id, ts, dur, partitions), each one item by name:
   * the intervals' own id, ts and dur; partitions per track. */
  const char *rv[MAX_ARGS];
  size_t rl[MAX_ARGS];
  int nr = gp__tp_sql_split_args(r->cols, r->cols_end, rv, rl, MAX_ARGS);
  if (nr < 3)
    return false;
  const gp__tp_item *use[MAX_ARGS];
  for (int a = 0; a < nr; a++) {
    use[a] = gp__tp_shape_item(&sh, rv[a], rl[a]);
    if (!use[a] || (a < 3 && use[a]->col != a) ||
        (a >= 3 && use[a]->col != U_TRACK && use[a]->col >= 0))
      return false;
  }
  const char *an = sh.alias ? sh.alias : "__gp_u";
  int al = sh.alias ? (int)sh.alen : 6;
  gp__tp_sb_fmt(out, "__gp_iv_ci(%.*s.b, %.*s.trace_end, %.*s.track_id", al, an,
                al, an, al, an);
  for (int a = 3; a < nr; a++) {
    gp__tp_sb_cat(out, ", ");
    if (use[a]->col == U_TRACK)
      gp__tp_sb_fmt(out, "%.*s.track_id", al, an);
    else
      gp__tp_sb_add(out, use[a]->expr, use[a]->elen);
  }
  gp__tp_sb_cat(out, ") FROM __gp_counter_tracks(");
  gp__tp_sb_add(out, arg[0], alen[0]);
  gp__tp_sb_fmt(out, ", trace_end()) AS %.*s ", al, an);
  gp__tp_sb_add(out, sh.rest, (size_t)(sh.end - sh.rest));
  return true;
}

/* Whether `counter` names the built-in view of the tables in memory for a
 * statement with the CTEs c[0..n). */
static bool counter_in_store(gp_tp *tp, const cte *c, int n) {
  for (int i = 0; i < n; i++)
    if (same_text(c[i].name, c[i].nlen, "counter"))
      return false;
  sqlite3_stmt *st = NULL;
  bool temp = true; /* unless known otherwise */
  if (tp->db && sqlite3_prepare_v2(tp->sql,
                                   "SELECT 1 FROM temp.sqlite_master WHERE "
                                   "name = 'counter' COLLATE NOCASE",
                                   -1, &st, NULL) == SQLITE_OK)
    temp = sqlite3_step(st) != SQLITE_DONE;
  sqlite3_finalize(st);
  return !temp;
}

/* See psqlInt.h. */
int gp__tp_psql_inline_ctes(gp_tp *tp, const char *sql, gp__tp_sb *out) {
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
  bool from_store = counter_in_store(tp, c, n);
  while ((x = next_read(&p, c, n, &r)) != NULL)
    if (!keyed[x - c].p) {
      key_body(x->body, x->blen, from_store, &keyed[x - c]);
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
