/*
 * textproto.c - a recursive-descent reader of the protobuf text format
 * against a schema (textproto.h), and the arena its results live in.
 *
 * The lexer keeps line and column (1-based, columns in bytes) of every
 * token; errors name the token at fault. Nothing is recorded on error:
 * the caller frees the arena.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "textproto.h"

/* ------------------------------------------------------------------ */
/* Arena                                                                */

typedef struct gp__arena_block {
  struct gp__arena_block *next;
  size_t used, cap;
  _Alignas(8) unsigned char data[];
} arena_block;

/* See textproto.h. */
void *gp__arena_alloc(gp__arena *a, size_t n) {
  n = GP_ALIGN8(n ? n : 1);
  arena_block *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > 8192 ? n : 8192;
    b = malloc(sizeof(*b) + cap);
    if (!b)
      return NULL;
    b->used = 0;
    b->cap = cap;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

/* See textproto.h. */
char *gp__arena_strndup(gp__arena *a, const char *s, size_t n) {
  char *d = gp__arena_alloc(a, n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* See textproto.h. */
void gp__arena_free(gp__arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
}

/* ------------------------------------------------------------------ */
/* Lexer                                                                */

typedef enum tok_kind {
  TOK_END,
  TOK_IDENT,
  TOK_NUMBER, /* digits, sign, '.', letters: validated by the parser */
  TOK_STRING,
  TOK_PUNCT
} tok_kind;

typedef struct token {
  tok_kind kind;
  const char *p;
  size_t n;
  uint32_t line, column;
} token;

typedef struct parser {
  const char *s, *end;
  const char *p;
  uint32_t line;
  const char *line_start;
  token tok;
  gp__arena *arena;
  char *err;
  size_t err_size;
  int depth;
} parser;

static int perr(parser *ps, const token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(parser *ps, const token *t, const char *fmt, ...) {
  if (ps->err && ps->err_size) {
    int k = snprintf(ps->err, ps->err_size, "line %u, column %u: ", t->line,
                     t->column);
    if (k >= 0 && (size_t)k < ps->err_size) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(ps->err + k, ps->err_size - (size_t)k, fmt, ap);
      va_end(ap);
    }
  }
  return GP_EPARSE;
}

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Reads the next token into ps->tok. */
static int next(parser *ps) {
  for (;;) {
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' ||
            *ps->p == '\n' || *ps->p == '\f' || *ps->p == '\v')) {
      if (*ps->p == '\n') {
        ps->line++;
        ps->line_start = ps->p + 1;
      }
      ps->p++;
    }
    if (ps->p < ps->end && *ps->p == '#') {
      while (ps->p < ps->end && *ps->p != '\n')
        ps->p++;
      continue;
    }
    break;
  }
  token *t = &ps->tok;
  t->p = ps->p;
  t->line = ps->line;
  t->column = (uint32_t)(ps->p - ps->line_start) + 1;
  if (ps->p >= ps->end) {
    t->kind = TOK_END;
    t->n = 0;
    return 0;
  }
  char c = *ps->p;
  if (is_ident_start(c)) {
    while (ps->p < ps->end && is_ident(*ps->p))
      ps->p++;
    t->kind = TOK_IDENT;
  } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
    ps->p++;
    while (ps->p < ps->end && (is_ident(*ps->p) || *ps->p == '.' ||
                               ((*ps->p == '-' || *ps->p == '+') &&
                                (ps->p[-1] == 'e' || ps->p[-1] == 'E'))))
      ps->p++;
    t->kind = TOK_NUMBER;
  } else if (c == '"' || c == '\'') {
    ps->p++;
    while (ps->p < ps->end && *ps->p != c && *ps->p != '\n') {
      if (*ps->p == '\\' && ps->p + 1 < ps->end)
        ps->p++;
      ps->p++;
    }
    if (ps->p >= ps->end || *ps->p != c) {
      t->n = (size_t)(ps->p - t->p);
      return perr(ps, t, "string not closed before the end of the line");
    }
    ps->p++;
    t->kind = TOK_STRING;
  } else if (strchr("{}<>[]:;,", c)) {
    ps->p++;
    t->kind = TOK_PUNCT;
  } else {
    t->n = 1;
    if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f)
      return perr(ps, t, "unexpected character 0x%02x",
                  (unsigned)(unsigned char)c);
    return perr(ps, t, "unexpected character '%c'", c);
  }
  t->n = (size_t)(ps->p - t->p);
  return 0;
}

static bool punct(const token *t, char c) {
  return t->kind == TOK_PUNCT && t->p[0] == c;
}

static bool ident_is(const token *t, const char *s) {
  return t->kind == TOK_IDENT && strlen(s) == t->n &&
         memcmp(t->p, s, t->n) == 0;
}

/* ------------------------------------------------------------------ */
/* Values                                                               */

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Decodes the string token t (quotes and escapes) and appends it to the
 * buffer buf of *len bytes (cap at least the token's length more). */
static int unescape(parser *ps, const token *t, char *buf, size_t *len) {
  const char *p = t->p + 1, *e = t->p + t->n - 1;
  size_t n = *len;
  while (p < e) {
    char c = *p++;
    if (c != '\\') {
      buf[n++] = c;
      continue;
    }
    c = *p++;
    switch (c) {
    case 'n':
      buf[n++] = '\n';
      break;
    case 't':
      buf[n++] = '\t';
      break;
    case 'r':
      buf[n++] = '\r';
      break;
    case 'a':
      buf[n++] = '\a';
      break;
    case 'b':
      buf[n++] = '\b';
      break;
    case 'f':
      buf[n++] = '\f';
      break;
    case 'v':
      buf[n++] = '\v';
      break;
    case '\\':
    case '\'':
    case '"':
    case '?':
      buf[n++] = c;
      break;
    case 'x': {
      int v = 0, k = 0;
      while (k < 2 && p < e && hexval(*p) >= 0)
        v = v * 16 + hexval(*p++), k++;
      if (k == 0)
        return perr(ps, t, "\\x needs a hexadecimal digit");
      buf[n++] = (char)v;
      break;
    }
    default:
      if (c >= '0' && c <= '7') {
        int v = c - '0', k = 1;
        while (k < 3 && p < e && *p >= '0' && *p <= '7')
          v = v * 8 + (*p++ - '0'), k++;
        if (v > 255)
          return perr(ps, t, "octal escape out of range");
        buf[n++] = (char)v;
        break;
      }
      return perr(ps, t, "unknown escape '\\%c' in string", c);
    }
  }
  *len = n;
  return 0;
}

static int parse_uint(parser *ps, const token *t, uint64_t max, uint64_t *out) {
  if (t->kind != TOK_NUMBER)
    return perr(ps, t, "expected a number, found '%.*s'", (int)t->n, t->p);
  if (t->p[0] == '-')
    return perr(ps, t, "'%.*s': a negative value is not allowed here",
                (int)t->n, t->p);
  const char *p = t->p, *e = t->p + t->n;
  if (*p == '+')
    p++;
  uint64_t v = 0;
  int base = 10;
  if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (p == e)
    return perr(ps, t, "'%.*s' is not a whole number", (int)t->n, t->p);
  for (; p < e; p++) {
    int d = base == 16 ? hexval(*p) : (*p >= '0' && *p <= '9' ? *p - '0' : -1);
    if (d < 0)
      return perr(ps, t, "'%.*s' is not a whole number", (int)t->n, t->p);
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
      return perr(ps, t, "'%.*s' is too large", (int)t->n, t->p);
    v = v * (uint64_t)base + (uint64_t)d;
  }
  if (v > max)
    return perr(ps, t, "%.*s is out of range (at most %llu)", (int)t->n, t->p,
                (unsigned long long)max);
  *out = v;
  return 0;
}

/* Reads one scalar value of field f from the current token into n. */
static int scalar(parser *ps, const gp__tp_field *f, gp__tp_node *n) {
  token *t = &ps->tok;
  int rc;
  switch (f->type) {
  case GP_TP_U32:
    rc = parse_uint(ps, t, UINT32_MAX, &n->u);
    break;
  case GP_TP_U64:
    rc = parse_uint(ps, t, UINT64_MAX, &n->u);
    break;
  case GP_TP_BOOL:
    if (ident_is(t, "true") || ident_is(t, "True") || ident_is(t, "t") ||
        (t->kind == TOK_NUMBER && t->n == 1 && t->p[0] == '1')) {
      n->u = 1;
    } else if (ident_is(t, "false") || ident_is(t, "False") ||
               ident_is(t, "f") ||
               (t->kind == TOK_NUMBER && t->n == 1 && t->p[0] == '0')) {
      n->u = 0;
    } else {
      return perr(ps, t, "expected true or false for '%s', found '%.*s'",
                  f->name, (int)t->n, t->p);
    }
    rc = 0;
    break;
  case GP_TP_ENUM: {
    size_t count = 0;
    while (f->enum_values[count])
      count++;
    if (t->kind == TOK_NUMBER) {
      rc = parse_uint(ps, t, count ? count - 1 : 0, &n->u);
      break;
    }
    for (size_t i = 0; i < count; i++) {
      if (f->enum_values[i][0] && ident_is(t, f->enum_values[i])) {
        n->u = i;
        return next(ps);
      }
    }
    char known[256] = "";
    size_t k = 0;
    for (size_t i = 0; i < count && k < sizeof(known) - 1; i++) {
      if (!f->enum_values[i][0])
        continue;
      int m = snprintf(known + k, sizeof(known) - k, "%s%s", k ? ", " : "",
                       f->enum_values[i]);
      if (m < 0)
        break;
      k += (size_t)m;
    }
    return perr(ps, t, "'%.*s' is not a value of '%s' (one of: %s)", (int)t->n,
                t->p, f->name, known);
  }
  case GP_TP_STRING: {
    if (t->kind != TOK_STRING)
      return perr(ps, t, "expected a quoted string for '%s', found '%.*s'",
                  f->name, (int)t->n, t->p);
    /* Adjacent strings are one: size the buffer for all of them. */
    const parser save = *ps;
    size_t total = 0;
    while (ps->tok.kind == TOK_STRING) {
      total += ps->tok.n;
      if ((rc = next(ps)) != 0)
        return rc;
    }
    *ps = save;
    char *buf = gp__arena_alloc(ps->arena, total + 1);
    if (!buf)
      return GP_ENOMEM;
    size_t len = 0;
    while (ps->tok.kind == TOK_STRING) {
      if ((rc = unescape(ps, &ps->tok, buf, &len)) != 0 || (rc = next(ps)) != 0)
        return rc;
    }
    buf[len] = '\0';
    n->s = buf;
    n->len = len;
    return 0;
  }
  default:
    return GP_EINVAL;
  }
  if (rc != 0)
    return rc;
  return next(ps);
}

/* ------------------------------------------------------------------ */
/* Messages                                                             */

static int message_body(parser *ps, const gp__tp_message *msg, char close,
                        gp__tp_node **first);

static const gp__tp_field *find_field(const gp__tp_message *msg,
                                      const token *t) {
  for (const gp__tp_field *f = msg->fields; f->name; f++)
    if (ident_is(t, f->name))
      return f;
  return NULL;
}

static int unknown_field(parser *ps, const gp__tp_message *msg,
                         const token *t) {
  char known[512] = "";
  size_t k = 0;
  for (const gp__tp_field *f = msg->fields; f->name && k < sizeof(known) - 1;
       f++) {
    int m =
        snprintf(known + k, sizeof(known) - k, "%s%s", k ? ", " : "", f->name);
    if (m < 0)
      break;
    k += (size_t)m;
  }
  if (t->kind == TOK_PUNCT && t->p[0] == '[')
    return perr(ps, t, "extensions are not supported in %s", msg->name);
  return perr(ps, t, "unknown field '%.*s' in %s (known fields: %s)", (int)t->n,
              t->p, msg->name, known);
}

static gp__tp_node *new_node(parser *ps, const gp__tp_field *f,
                             const token *at) {
  gp__tp_node *n = gp__arena_alloc(ps->arena, sizeof(*n));
  if (n) {
    n->field = f;
    n->line = at->line;
    n->column = at->column;
  }
  return n;
}

/* One value (scalar or message) of field f; appends nodes at *tail. */
static int value(parser *ps, const gp__tp_field *f, const token *at,
                 gp__tp_node ***tail) {
  gp__tp_node *n = new_node(ps, f, at);
  if (!n)
    return GP_ENOMEM;
  int rc;
  if (f->type == GP_TP_MESSAGE) {
    token open = ps->tok;
    if (!punct(&open, '{') && !punct(&open, '<'))
      return perr(ps, &open, "expected '{' to open '%s', found '%.*s'", f->name,
                  (int)open.n, open.p);
    if (++ps->depth > 32)
      return perr(ps, &open, "messages nested too deeply");
    if ((rc = next(ps)) != 0 ||
        (rc = message_body(ps, f->message, open.p[0] == '{' ? '}' : '>',
                           &n->child)) != 0)
      return rc;
    ps->depth--;
  } else if ((rc = scalar(ps, f, n)) != 0) {
    return rc;
  }
  **tail = n;
  *tail = &n->next;
  return 0;
}

static int field(parser *ps, const gp__tp_message *msg, gp__tp_node *first,
                 gp__tp_node ***tail) {
  token name = ps->tok;
  const gp__tp_field *f = NULL;
  if (name.kind != TOK_IDENT || !(f = find_field(msg, &name)))
    return unknown_field(ps, msg, &name);
  if (!f->repeated) {
    for (gp__tp_node *o = first; o; o = o->next)
      if (o->field == f)
        return perr(ps, &name,
                    "'%s' is given twice (first at line %u, column %u) but is "
                    "not a repeated field",
                    f->name, o->line, o->column);
  }
  int rc = next(ps);
  if (rc != 0)
    return rc;
  bool colon = punct(&ps->tok, ':');
  if (colon && (rc = next(ps)) != 0)
    return rc;
  if (!colon && f->type != GP_TP_MESSAGE)
    return perr(ps, &ps->tok, "expected ':' after '%s'", f->name);
  if (punct(&ps->tok, '[')) {
    if (!f->repeated)
      return perr(ps, &ps->tok, "'%s' is not a repeated field: no list",
                  f->name);
    if ((rc = next(ps)) != 0)
      return rc;
    bool first_item = true;
    while (!punct(&ps->tok, ']')) {
      if (!first_item) {
        if (!punct(&ps->tok, ','))
          return perr(ps, &ps->tok, "expected ',' or ']' in the list of '%s'",
                      f->name);
        if ((rc = next(ps)) != 0)
          return rc;
      }
      if (ps->tok.kind == TOK_END)
        return perr(ps, &ps->tok, "list of '%s' not closed", f->name);
      token at = ps->tok;
      if ((rc = value(ps, f, &at, tail)) != 0)
        return rc;
      first_item = false;
    }
    return next(ps);
  }
  if (ps->tok.kind == TOK_END)
    return perr(ps, &ps->tok, "missing value for '%s'", f->name);
  return value(ps, f, &name, tail);
}

static int message_body(parser *ps, const gp__tp_message *msg, char close,
                        gp__tp_node **first) {
  gp__tp_node **tail = first;
  *first = NULL;
  for (;;) {
    int rc;
    if (close && punct(&ps->tok, close))
      return next(ps);
    if (ps->tok.kind == TOK_END) {
      if (!close)
        return 0;
      return perr(ps, &ps->tok, "'%s' not closed: expected '%c' before the end",
                  msg->name, close);
    }
    if ((rc = field(ps, msg, *first, &tail)) != 0)
      return rc;
    if (punct(&ps->tok, ',') || punct(&ps->tok, ';'))
      if ((rc = next(ps)) != 0)
        return rc;
  }
}

/* See textproto.h. */
int gp__tp_parse(const char *text, size_t len, const gp__tp_message *msg,
                 gp__arena *arena, gp__tp_node **root, char *err,
                 size_t err_size) {
  parser ps;
  memset(&ps, 0, sizeof(ps));
  ps.s = ps.p = ps.line_start = text;
  ps.end = text + len;
  ps.line = 1;
  ps.arena = arena;
  ps.err = err;
  ps.err_size = err_size;
  if (err && err_size)
    err[0] = '\0';
  int rc = next(&ps);
  if (rc == 0)
    rc = message_body(&ps, msg, 0, root);
  if (rc == GP_ENOMEM && err && err_size)
    snprintf(err, err_size, "out of memory");
  return rc;
}

/* See textproto.h. */
void gp__tp_error_at(const gp__tp_node *n, char *err, size_t err_size,
                     const char *fmt, ...) {
  if (!err || !err_size)
    return;
  int k = n->line ? snprintf(err, err_size, "line %u, column %u: ", n->line,
                             n->column)
                  : snprintf(err, err_size, "field %s: ", n->field->name);
  if (k < 0 || (size_t)k >= err_size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + k, err_size - (size_t)k, fmt, ap);
  va_end(ap);
}
