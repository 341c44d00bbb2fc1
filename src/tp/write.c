/*
 * write.c - writing a query's rows as Perfetto's diff-test CSV, an
 * aligned table or JSON (gp_tp_write, gp_tp_write_ex).
 *
 * Strings in a trace are untrusted: a name can hold an escape sequence
 * that drives the terminal, newlines that fake rows, or bytes that are not
 * UTF-8. JSON output is therefore always valid UTF-8: control characters
 * are escaped as JSON requires and every byte that does not start a valid
 * UTF-8 sequence (overlong, surrogate, past U+10FFFF, cut short) becomes
 * U+FFFD and is counted. With GP_TP_WRITE_ESCAPE (tools set it when the
 * output is a terminal) the table and CSV formats show control
 * characters (C0, DEL, C1) and invalid bytes escaped as \n, \t, \xNN or
 * \u{NN}; without it they are written as they are (CSV stays byte for
 * byte Perfetto's). Doubles that are not finite are null in JSON. The
 * same rules are public (gp_tp_put_escaped, gp_tp_put_json_string,
 * gp_tp_put_json_number) so that every tool prints by them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "gpuperf/tp.h"
#include "tp/sqlInt.h"

/* The length of the valid UTF-8 sequence at p (1-4), or 0 if the byte at
 * p does not start one. end bounds the read. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  if (c < 0x80)
    return 1;
  size_t n;
  unsigned min;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, min = 0x10000;
  else
    return 0;
  if ((size_t)(end - p) < n)
    return 0;
  unsigned cp = c & (0x3fu >> (n - 1));
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (p[i] & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

/* The code point of a valid sequence of n bytes. */
static unsigned utf8_cp(const unsigned char *p, size_t n) {
  if (n == 1)
    return p[0];
  unsigned cp = p[0] & (0x3fu >> (n - 1));
  for (size_t i = 1; i < n; i++)
    cp = cp << 6 | (p[i] & 0x3fu);
  return cp;
}

/* A growable string for escaped text. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_put(sbuf *b, const void *s, size_t n) {
  if (b->oom)
    return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1)
      cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/*
 * s escaped for a terminal (malloc'ed; NULL if memory runs out): C0
 * controls, DEL and C1 controls as \n, \t, \r, \xNN or \u{NN}, invalid
 * UTF-8 bytes as \xNN (counted in *invalid), the rest as it is.
 */
static char *term_escape(const char *s, uint64_t *invalid) {
  const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
  sbuf b = {NULL, 0, 0, false};
  sb_put(&b, "", 0);
  while (p < end) {
    size_t n = utf8_len(p, end);
    char esc[16];
    if (n == 0) {
      snprintf(esc, sizeof(esc), "\\x%02x", *p);
      sb_put(&b, esc, strlen(esc));
      (*invalid)++;
      p++;
      continue;
    }
    unsigned cp = utf8_cp(p, n);
    if (cp == '\n')
      sb_put(&b, "\\n", 2);
    else if (cp == '\t')
      sb_put(&b, "\\t", 2);
    else if (cp == '\r')
      sb_put(&b, "\\r", 2);
    else if (cp < 0x20 || cp == 0x7f) {
      snprintf(esc, sizeof(esc), "\\x%02x", cp);
      sb_put(&b, esc, strlen(esc));
    } else if (cp >= 0x80 && cp < 0xa0) {
      snprintf(esc, sizeof(esc), "\\u{%02x}", cp);
      sb_put(&b, esc, strlen(esc));
    } else {
      sb_put(&b, p, n);
    }
    p += n;
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

/* See tp.h. */
uint64_t gp_tp_put_escaped(FILE *out, const char *s) {
  uint64_t invalid = 0;
  char *e = term_escape(s ? s : "", &invalid);
  fputs(e ? e : "?", out);
  free(e);
  return invalid;
}

typedef struct wctx {
  FILE *out;
  uint32_t flags;
  gp_tp_write_stats *st;
} wctx;

/* Writes s as the text of a cell: escaped if asked. */
static void put_text(wctx *w, const char *s) {
  if (!(w->flags & GP_TP_WRITE_ESCAPE))
    fputs(s, w->out);
  else
    w->st->invalid_utf8 += gp_tp_put_escaped(w->out, s);
}

/* A value as Perfetto's diff-test CSV writes it. */
static void csv_value(wctx *w, const gp_tp_rows *r, int c) {
  FILE *out = w->out;
  switch (gp_tp_rows_type(r, c)) {
  case GP_TP_NULL:
    fputs("\"[NULL]\"", out);
    break;
  case GP_TP_INT:
    fprintf(out, "%" PRId64, gp_tp_rows_int(r, c));
    break;
  case GP_TP_REAL:
    fprintf(out, "%f", gp_tp_rows_real(r, c));
    break;
  case GP_TP_TEXT:
    fputc('"', out);
    put_text(w, gp_tp_rows_text(r, c));
    fputc('"', out);
    break;
  default:
    fputs("\"<raw bytes>\"", out);
    break;
  }
}

/* See tp.h. */
uint64_t gp_tp_put_json_string(FILE *out, const char *s) {
  uint64_t invalid = 0;
  if (!s)
    s = "";
  const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
  fputc('"', out);
  while (p < end) {
    size_t n = utf8_len(p, end);
    if (n == 0) {
      fputs("\\ufffd", out);
      invalid++;
      p++;
    } else if (n == 2 && utf8_cp(p, n) < 0xa0) { /* C1 controls */
      fprintf(out, "\\u%04x", utf8_cp(p, n));
      p += n;
    } else if (n > 1) {
      fwrite(p, 1, n, out);
      p += n;
    } else {
      unsigned char c = *p++;
      if (c == '"' || c == '\\')
        fprintf(out, "\\%c", c);
      else if (c == '\n')
        fputs("\\n", out);
      else if (c == '\t')
        fputs("\\t", out);
      else if (c < 0x20 || c == 0x7f)
        fprintf(out, "\\u%04x", c);
      else
        fputc(c, out);
    }
  }
  fputc('"', out);
  return invalid;
}

/* See tp.h. */
void gp_tp_put_json_number(FILE *out, double v) {
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

/* s as a JSON string: always valid UTF-8, invalid bytes as U+FFFD. */
static void json_string(wctx *w, const char *s) {
  w->st->invalid_utf8 += gp_tp_put_json_string(w->out, s);
}

static void json_value(wctx *w, const gp_tp_rows *r, int c) {
  FILE *out = w->out;
  switch (gp_tp_rows_type(r, c)) {
  case GP_TP_INT:
    fprintf(out, "%" PRId64, gp_tp_rows_int(r, c));
    break;
  case GP_TP_REAL:
    gp_tp_put_json_number(out, gp_tp_rows_real(r, c));
    break;
  case GP_TP_TEXT:
    json_string(w, gp_tp_rows_text(r, c));
    break;
  case GP_TP_BLOB: {
    size_t n;
    const unsigned char *b = gp_tp_rows_blob(r, c, &n);
    fputc('"', out);
    for (size_t i = 0; i < n; i++)
      fprintf(out, "%02x", b[i]);
    fputc('"', out);
    break;
  }
  default:
    fputs("null", out);
    break;
  }
}

/* A value as the table format shows it (malloc'ed). */
static char *table_value(wctx *w, const gp_tp_rows *r, int c) {
  char buf[64];
  switch (gp_tp_rows_type(r, c)) {
  case GP_TP_NULL:
    return strdup("NULL");
  case GP_TP_INT:
    snprintf(buf, sizeof(buf), "%" PRId64, gp_tp_rows_int(r, c));
    return strdup(buf);
  case GP_TP_REAL:
    snprintf(buf, sizeof(buf), "%g", gp_tp_rows_real(r, c));
    return strdup(buf);
  case GP_TP_TEXT:
    if (w->flags & GP_TP_WRITE_ESCAPE)
      return term_escape(gp_tp_rows_text(r, c), &w->st->invalid_utf8);
    return strdup(gp_tp_rows_text(r, c));
  default:
    return strdup("<bytes>");
  }
}

static int write_table(wctx *w, gp_tp_rows *r, gp_tp_error *err) {
  FILE *out = w->out;
  int nc = gp_tp_rows_columns(r);
  size_t *wd = calloc((size_t)(nc ? nc : 1), sizeof(size_t));
  char **cells = NULL;
  size_t n = 0, cap = 0;
  int rc;
  if (!wd)
    return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
  for (int c = 0; c < nc; c++)
    wd[c] = strlen(gp_tp_rows_name(r, c));
  while ((rc = gp_tp_rows_next(r, err)) == 1) {
    if (n + (size_t)nc > cap) {
      size_t ncap = cap ? cap * 2 : 1024;
      while (ncap < n + (size_t)nc)
        ncap *= 2;
      char **p = realloc(cells, ncap * sizeof(char *));
      if (!p) {
        rc = gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
        break;
      }
      cells = p;
      cap = ncap;
    }
    for (int c = 0; c < nc; c++) {
      char *s = table_value(w, r, c);
      if (!s)
        s = strdup("");
      cells[n++] = s;
      size_t l = s ? strlen(s) : 0;
      if (l > wd[c])
        wd[c] = l;
    }
  }
  if (rc >= 0) {
    for (int c = 0; c < nc; c++)
      fprintf(out, "%s%-*s", c ? "  " : "", c + 1 < nc ? (int)wd[c] : 0,
              gp_tp_rows_name(r, c));
    fputc('\n', out);
    for (int c = 0; c < nc; c++) {
      fprintf(out, "%s", c ? "  " : "");
      for (size_t i = 0; i < wd[c]; i++)
        fputc('-', out);
    }
    fputc('\n', out);
    for (size_t i = 0; i < n; i += (size_t)nc) {
      for (int c = 0; c < nc; c++) {
        const char *s = cells[i + (size_t)c] ? cells[i + (size_t)c] : "";
        fprintf(out, "%s%-*s", c ? "  " : "", c + 1 < nc ? (int)wd[c] : 0, s);
      }
      fputc('\n', out);
    }
    w->st->rows = nc ? n / (size_t)nc : 0;
    rc = 0;
  }
  for (size_t i = 0; i < n; i++)
    free(cells[i]);
  free(cells);
  free(wd);
  return rc;
}

/* See tp.h. */
int gp_tp_write_ex(gp_tp *tp, const char *sql, gp_tp_format format,
                   uint32_t flags, FILE *out, gp_tp_write_stats *stats,
                   gp_tp_error *err) {
  if (!out)
    return gp__tp_set_error(err, GP_EINVAL, UINT64_MAX, "invalid argument");
  gp_tp_write_stats local;
  if (!stats)
    stats = &local;
  memset(stats, 0, sizeof(*stats));
  wctx w = {out, flags, stats};
  gp_tp_rows *r;
  int rc = gp_tp_query(tp, sql, &r, err);
  if (rc)
    return rc;
  uint64_t n = 0;
  int nc = gp_tp_rows_columns(r);
  if (format == GP_TP_FORMAT_TABLE) {
    rc = write_table(&w, r, err);
    n = stats->rows;
  } else if (format == GP_TP_FORMAT_JSON) {
    fputc('[', out);
    while ((rc = gp_tp_rows_next(r, err)) == 1) {
      fputs(n ? ",\n  {" : "\n  {", out);
      for (int c = 0; c < nc; c++) {
        if (c)
          fputs(", ", out);
        json_string(&w, gp_tp_rows_name(r, c));
        fputs(": ", out);
        json_value(&w, r, c);
      }
      fputc('}', out);
      n++;
    }
    fputs(n ? "\n]\n" : "]\n", out);
  } else {
    for (int c = 0; c < nc; c++) {
      fputs(c ? ",\"" : "\"", out);
      put_text(&w, gp_tp_rows_name(r, c));
      fputc('"', out);
    }
    if (nc)
      fputc('\n', out);
    while ((rc = gp_tp_rows_next(r, err)) == 1) {
      for (int c = 0; c < nc; c++) {
        if (c)
          fputc(',', out);
        csv_value(&w, r, c);
      }
      fputc('\n', out);
      n++;
    }
  }
  gp_tp_rows_destroy(r);
  stats->rows = n;
  return rc < 0 ? rc : 0;
}

/* See tp.h. */
int gp_tp_write(gp_tp *tp, const char *sql, gp_tp_format format, FILE *out,
                uint64_t *nrows, gp_tp_error *err) {
  gp_tp_write_stats st;
  int rc = gp_tp_write_ex(tp, sql, format, 0, out, &st, err);
  if (nrows)
    *nrows = st.rows;
  return rc;
}
