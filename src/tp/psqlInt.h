/*
 * psqlInt.h - what the files of the PerfettoSQL layer share: a string
 * builder, an SQL tokenizer that knows strings, quoted names and
 * comments, macros and functions (macros.c, pfunc.c, psql.c).
 */
#ifndef GPUPERF_TP_PSQLINT_H
#define GPUPERF_TP_PSQLINT_H

#include <stdbool.h>
#include <stddef.h>

#include "tp/sqlInt.h"

#define MAX_ARGS 32
#define MAX_DEPTH 64

/* ------------------------------------------------------------------ */
/* A growable string (psql_text.c)                                       */

typedef struct gp__tp_sb {
  char *p;
  size_t n, cap;
  bool oom; /* memory ran out or the text passed 64 MiB: content lost */
} gp__tp_sb;

void gp__tp_sb_add(gp__tp_sb *s, const char *d, size_t n);
void gp__tp_sb_cat(gp__tp_sb *s, const char *d);
void gp__tp_sb_fmt(gp__tp_sb *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A NUL-terminated copy of s[0..n) (malloc'ed), NULL without memory. */
char *gp__tp_dup_n(const char *s, size_t n);

/* ------------------------------------------------------------------ */
/* Tokens (psql_text.c)                                                  */

enum {
  TK_END,
  TK_WS,
  TK_IDENT,
  TK_STRING,
  TK_QIDENT,
  TK_NUMBER,
  TK_VAR,
  TK_PUNCT,
  TK_BAD
};

/* Whether c can be part of an identifier. */
bool gp__tp_sql_ident_char(char c);

/* Length of the token at p (p[0] != 0) and its kind (TK_*); comments and
 * whitespace are TK_WS, an unterminated string or comment TK_BAD. */
size_t gp__tp_sql_token(const char *p, int *kind);

/* p past whitespace and comments. */
const char *gp__tp_sql_skip_ws(const char *p);

/* Does p start with keyword kw (case-insensitive, whole word)? */
bool gp__tp_sql_keyword(const char *p, const char *kw);

/* p past keyword kw and the whitespace after it, or NULL if absent. */
const char *gp__tp_sql_eat(const char *p, const char *kw);

/* Just after the parenthesised group at p ('('), NULL if unbalanced. */
const char *gp__tp_sql_match_paren(const char *p);

/* Splits "(a, b(c, d), e)" (p at '(', end just after ')') into trimmed
 * top-level items. Returns the count, or -1 if more than max. */
int gp__tp_sql_split_args(const char *p, const char *end, const char **item,
                          size_t *len, int max);

/* ------------------------------------------------------------------ */
/* Macros (macros.c) and functions (pfunc.c)                             */

struct gp__tp_macro {
  char *name;
  int nparams;
  char *params[MAX_ARGS];
  char *body;
  gp__tp_macro *next;
};

struct gp__tp_fn {
  char *name;
  int nargs;
  char *argv[MAX_ARGS];
  bool table; /* RETURNS TABLE(cols) */
  int ncols;
  char *cols[MAX_ARGS];
  char *body; /* SQL, macros expanded; arguments are $name parameters */
  gp_tp *tp;
  gp__tp_fn *next;
};

/* Arguments of a macro invocation: pointers into the text. */
typedef struct args {
  int n;
  const char *v[MAX_ARGS];
  size_t len[MAX_ARGS];
} args;

/*
 * Expands every macro invocation of text[0..len) into out (depth: the
 * nesting so far, 0 at the top). Errors: GP_ESQL / GP_EPARSE with a
 * message in err, GP_ENOMEM.
 */
int gp__tp_psql_expand(gp_tp *tp, const char *text, size_t len, int depth,
                       gp__tp_sb *out, char *err, size_t errsize);

/* What counter_leading_intervals!(t) expands to (macros.c) begins with
 * this; psql_cte.c recognises the expansion by it. */
#define GP_TP_CI_HEAD                                                          \
  "(SELECT id, ts, dur, track_id, value, next_value, delta_value "             \
  "FROM __gp_counter_intervals("

/*
 * Appends sql (one statement, macros expanded) to out, with each interval
 * intersection's read of a CTE of counter intervals pointed at the CTE's
 * body or its tracks (psql_cte.c says when and why). 0, or GP_ENOMEM
 * (out->oom).
 */
int gp__tp_psql_inline_ctes(gp_tp *tp, const char *sql, gp__tp_sb *out);

/* ------------------------------------------------------------------ */
/* SELECTs that look at one column of their first table (psql_shape.c)  */

/* A plain column of a select list: [q.]col [[AS] name]. */
typedef struct gp__tp_item {
  const char *expr; /* q.col or col */
  size_t elen;
  const char *name; /* what it is called */
  size_t nlen;
  int col; /* which of the first table's columns, or -1: another's */
} gp__tp_item;

#define GP_TP_MAX_ITEMS 64

/* "(SELECT items FROM src [[AS] alias] rest)": pointers into the text. */
typedef struct gp__tp_shape {
  const char *src, *src_end; /* the first table: a name or "(...)" */
  const char *alias;         /* NULL if none */
  size_t alen;
  const char *rest, *end; /* joins and WHERE, up to the closing ')' */
  int nitems;
  gp__tp_item items[GP_TP_MAX_ITEMS];
} gp__tp_shape;

/*
 * Reads [body, end), "(SELECT ...)", into sh if its first table has the
 * columns cols[0..ncols) and nothing but that table's column cols[key]
 * decides which of its rows come out and with what else (psql_shape.c
 * says which SQL qualifies). Returns false if body is not of that shape.
 */
bool gp__tp_sql_keyed_select(const char *body, const char *end,
                             const char *const *cols, int ncols, int key,
                             gp__tp_shape *sh);

/* The item of sh named [name, name + n), or NULL if none or several. */
const gp__tp_item *gp__tp_shape_item(const gp__tp_shape *sh, const char *name,
                                     size_t n);

/* INCLUDE PERFETTO MODULE name (name may end in ".*"). */
int gp__tp_psql_include(gp_tp *tp, const char *name, char *err, size_t errsize);

/* CREATE [OR REPLACE] PERFETTO MACRO, p just after MACRO. */
int gp__tp_psql_define_macro(gp_tp *tp, const char *p, bool replace, char *err,
                             size_t errsize);

/* CREATE [OR REPLACE] PERFETTO FUNCTION, p just after FUNCTION. */
int gp__tp_psql_define_function(gp_tp *tp, const char *p, bool replace,
                                char *err, size_t errsize);

/* Reads a name (dotted: module names) at p into out; returns p past it
 * and the whitespace after, or NULL. */
const char *gp__tp_psql_read_name(const char *p, char *out, size_t size,
                                  bool dotted);

/* The names of "(a TYPE, b TYPE(x.y), ...)" (malloc'ed each). */
int gp__tp_psql_param_names(const char *open, const char *close, char **names,
                            int *count, char *err, size_t errsize,
                            const char *what);

void gp__tp_psql_free_fn(gp__tp_fn *f);
void gp__tp_psql_free_macro(gp__tp_macro *m);

#endif /* GPUPERF_TP_PSQLINT_H */
