/*
 * psql_shape.c - reads a SELECT that looks at only one column of its
 * first table, for psql_cte.c's rewrites, which run such SQL once per
 * value of that column (a track) instead of once per row.
 *
 *   (SELECT u.id, u.ts, gct.ugpu AS g FROM src u
 *    JOIN gpu_counter_track gct ON gct.id = u.track_id WHERE gct.x = 1)
 *
 * Plain on purpose, so that what the SQL means can be seen from its
 * tokens: plain column names (q.col, with or without AS) between SELECT
 * and FROM; a first table src (a name or a parenthesised group) with an
 * optional alias; then joins and a WHERE clause without parentheses,
 * quoted names or parameters, and not RIGHT, FULL, NATURAL, USING,
 * GROUP, ORDER, LIMIT, compound or window clauses, where src's columns
 * appear only as alias.key (another table's columns qualified wherever
 * they share a name with src's). Then each row of src meets the joins
 * and the WHERE clause as every other row of its key does.
 */
#include <string.h>
#include <strings.h>

#include "tp/psqlInt.h"

/* Words after the first table that end an alias-less FROM item. */
static const char *const clause_words[] = {
    "JOIN",  "INNER",  "LEFT",      "RIGHT",  "FULL",   "CROSS", "NATURAL",
    "OUTER", "ON",     "USING",     "WHERE",  "GROUP",  "ORDER", "LIMIT",
    "UNION", "EXCEPT", "INTERSECT", "WINDOW", "HAVING", NULL};

/* Words that make the rows of the rest depend on more than the key. */
static const char *const rest_bad[] = {
    "RIGHT",    "FULL",   "NATURAL", "USING",     "GROUP",  "ORDER",
    "LIMIT",    "UNION",  "EXCEPT",  "INTERSECT", "WINDOW", "HAVING",
    "DISTINCT", "SELECT", "VALUES",  "OVER",      NULL};

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

/* A token, whitespace and comments dropped. */
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

/* What the shape is read against: src's columns and alias. */
typedef struct source {
  const char *const *cols;
  int ncols, key;
  const char *alias; /* NULL if none */
  size_t alen;
  bool joined; /* other tables follow src */
} source;

/* Which of src's columns [p, p + n) names, or -1. */
static int col_of(const source *s, const char *p, size_t n) {
  for (int i = 0; i < s->ncols; i++)
    if (same_ident(p, n, s->cols[i], strlen(s->cols[i])))
      return i;
  return -1;
}

/* Reads the item [p, end) into it; false if it is not a plain column, or
 * may be src's or another table's. */
static bool read_item(const char *p, const char *end, const source *s,
                      gp__tp_item *it) {
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
  int c = col_of(s, col.p, col.n);
  bool of_src = q.p ? s->alias && same_ident(q.p, q.n, s->alias, s->alen)
                    : !s->joined || c >= 0;
  if (!of_src) {
    it->col = -1;
    return true;
  }
  /* src's: a column it has, named so that no other table may claim it. */
  it->col = c;
  return c >= 0 && (q.p || !s->joined);
}

/* Whether the joins and WHERE clause [p, end) look at no column of src
 * but alias.key. */
static bool rest_by_key(const char *p, const char *end, const source *s) {
  btok prev2 = {NULL, 0, TK_END}, prev = prev2;
  for (btok t = next_tok(p, end); t.kind != TK_END;
       prev2 = prev, prev = t, t = next_tok(t.p + t.n, end)) {
    if (t.kind == TK_QIDENT || t.kind == TK_VAR || t.kind == TK_BAD ||
        is_punct(t, '(') || is_punct(t, ')') ||
        (t.kind == TK_IDENT && is_word(t.p, t.n, rest_bad)))
      return false;
    if (t.kind != TK_IDENT)
      continue;
    bool qualified = is_punct(prev, '.') && prev2.kind == TK_IDENT;
    if (s->alias && same_ident(t.p, t.n, s->alias, s->alen)) {
      btok dot = next_tok(t.p + t.n, end);
      btok col = next_tok(dot.p + dot.n, end);
      if (!is_punct(dot, '.') || col.kind != TK_IDENT ||
          col_of(s, col.p, col.n) != s->key)
        return false;
    } else if (col_of(s, t.p, t.n) >= 0 && !qualified) {
      return false;
    }
  }
  return true;
}

/* See psqlInt.h. */
bool gp__tp_sql_keyed_select(const char *body, const char *end,
                             const char *const *cols, int ncols, int key,
                             gp__tp_shape *sh) {
  end--; /* the body's ')' */
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
  if (!from)
    return false;
  /* The first table: a name or a parenthesised group. */
  t = next_tok(from + 4, end);
  sh->src = t.p;
  if (is_punct(t, '('))
    sh->src_end = gp__tp_sql_match_paren(t.p);
  else
    sh->src_end = t.kind == TK_IDENT && !is_word(t.p, t.n, clause_words)
                      ? t.p + t.n
                      : NULL;
  if (!sh->src_end || sh->src_end > end)
    return false;
  /* An alias, then the rest: [rest, end). */
  source s = {cols, ncols, key, NULL, 0, false};
  btok a = next_tok(sh->src_end, end);
  if (a.kind == TK_IDENT && gp__tp_sql_keyword(a.p, "AS")) {
    a = next_tok(a.p + a.n, end);
    if (a.kind != TK_IDENT)
      return false;
    s.alias = a.p;
  } else if (a.kind == TK_IDENT && !is_word(a.p, a.n, clause_words)) {
    s.alias = a.p;
  }
  s.alen = s.alias ? a.n : 0;
  sh->alias = s.alias;
  sh->alen = s.alen;
  sh->rest = s.alias ? a.p + a.n : sh->src_end;
  sh->end = end;
  s.joined = next_tok(sh->rest, end).kind != TK_END;
  /* Without an alias, only unqualified names could name src's columns. */
  if ((s.joined && !s.alias) || !rest_by_key(sh->rest, end, &s))
    return false;
  /* The select list's columns. */
  sh->nitems = 0;
  const char *ip = list;
  for (t = next_tok(list, from);; t = next_tok(t.p + t.n, from)) {
    if (is_punct(t, '(') || is_punct(t, ')'))
      return false;
    if (t.kind != TK_END && !is_punct(t, ','))
      continue;
    if (sh->nitems == GP_TP_MAX_ITEMS ||
        !read_item(ip, t.p, &s, &sh->items[sh->nitems++]))
      return false;
    if (t.kind == TK_END)
      return true;
    ip = t.p + 1;
  }
}

/* See psqlInt.h. */
const gp__tp_item *gp__tp_shape_item(const gp__tp_shape *sh, const char *name,
                                     size_t n) {
  const gp__tp_item *found = NULL;
  for (int i = 0; i < sh->nitems; i++)
    if (same_ident(name, n, sh->items[i].name, sh->items[i].nlen)) {
      if (found)
        return NULL; /* two columns of that name */
      found = &sh->items[i];
    }
  return found;
}
