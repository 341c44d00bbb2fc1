/*
 * psql_text.c - text handling for the PerfettoSQL layer: a growable
 * string and an SQL tokenizer that knows strings, quoted identifiers,
 * numbers, parameters and comments, so macros are never found inside a
 * string or a comment (see psqlInt.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp/psqlInt.h"

/* ------------------------------------------------------------------ */
/* Strings                                                               */

/* Macro expansions larger than this are refused (exponential macros). */
#define MAX_TEXT (64u << 20)

/* See psqlInt.h. */
void gp__tp_sb_add(gp__tp_sb *s, const char *d, size_t n) {
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

/* See psqlInt.h. */
void gp__tp_sb_cat(gp__tp_sb *s, const char *d) {
  gp__tp_sb_add(s, d, strlen(d));
}

/* See psqlInt.h. */
void gp__tp_sb_fmt(gp__tp_sb *s, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n >= 0)
    gp__tp_sb_add(s, buf,
                  (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* See psqlInt.h. */
char *gp__tp_dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* ------------------------------------------------------------------ */
/* Tokens                                                                */

/* See psqlInt.h. */
bool gp__tp_sql_ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80;
}

/* See psqlInt.h. */
size_t gp__tp_sql_token(const char *p, int *kind) {
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
    while (gp__tp_sql_ident_char(*q) || *q == '.' ||
           ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))
      q++;
    *kind = TK_NUMBER;
  } else if (gp__tp_sql_ident_char(*q)) {
    while (gp__tp_sql_ident_char(*q) || *q == '$')
      q++;
    *kind = TK_IDENT;
  } else if ((*q == '$' || *q == ':' || *q == '@') &&
             gp__tp_sql_ident_char(q[1])) {
    q++;
    while (gp__tp_sql_ident_char(*q))
      q++;
    *kind = TK_VAR;
  } else {
    q++;
    *kind = TK_PUNCT;
  }
  return (size_t)(q - p);
}

/* See psqlInt.h. */
const char *gp__tp_sql_skip_ws(const char *p) {
  int k;
  while (*p) {
    size_t n = gp__tp_sql_token(p, &k);
    if (k != TK_WS)
      break;
    p += n;
  }
  return p;
}

/* See psqlInt.h. */
bool gp__tp_sql_keyword(const char *p, const char *kw) {
  size_t n = strlen(kw);
  return strncasecmp(p, kw, n) == 0 && !gp__tp_sql_ident_char(p[n]);
}

/* See psqlInt.h. */
const char *gp__tp_sql_eat(const char *p, const char *kw) {
  return gp__tp_sql_keyword(p, kw) ? gp__tp_sql_skip_ws(p + strlen(kw)) : NULL;
}

/* See psqlInt.h. */
const char *gp__tp_sql_match_paren(const char *p) {
  int depth = 0;
  while (*p) {
    int k;
    size_t n = gp__tp_sql_token(p, &k);
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

/* See psqlInt.h. */
int gp__tp_sql_split_args(const char *p, const char *end, const char **item,
                          size_t *len, int max) {
  const char *start = gp__tp_sql_skip_ws(p + 1);
  const char *last = end - 1; /* the closing ')' */
  int n = 0, depth = 0;
  const char *q = start;
  if (gp__tp_sql_skip_ws(start) >= last)
    return 0;
  while (q < last) {
    int k;
    size_t tl = gp__tp_sql_token(q, &k);
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
      start = gp__tp_sql_skip_ws(q + 1);
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
