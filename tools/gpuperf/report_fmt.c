/*
 * report_fmt.c - the text, CSV and JSON forms of a built report, and
 * the human units they share ("1.234 ms", "48.0 MiB", "23.9 GB/s").
 *
 * Text is for people: units chosen per value, never scientific notation,
 * names cleaned of control characters. CSV and JSON are for programs:
 * raw numbers (ns, bytes, bytes per second, percent) under column names
 * that say the unit ("total_ns"); CSV has one block per section, each
 * with its own header line, blocks separated by an empty line.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

/* A plain number without an exponent: 3 significant digits, and an SI
 * suffix past a thousand. */
static const char *human_num(char *buf, size_t size, double v) {
  static const char *const sfx[] = {"", " k", " M", " G", " T", " P"};
  double a = fabs(v);
  int s = 0;
  while (a >= 1000.0 && s < 5) {
    a /= 1000.0;
    v /= 1000.0;
    s++;
  }
  if (v == floor(v) && s == 0)
    snprintf(buf, size, "%.0f", v);
  else if (a >= 100 || a == 0)
    snprintf(buf, size, "%.0f%s", v, sfx[s]);
  else if (a >= 10)
    snprintf(buf, size, "%.1f%s", v, sfx[s]);
  else if (a >= 0.01 || s)
    snprintf(buf, size, "%.2f%s", v, sfx[s]);
  else
    snprintf(buf, size, "%.6f", v);
  return buf;
}

/* See report.h. */
const char *report_fmt(char *buf, size_t size, rcol_kind k, double v,
                       const char *unit) {
  if (isnan(v)) {
    snprintf(buf, size, "-");
    return buf;
  }
  switch (k) {
  case RC_INT:
    snprintf(buf, size, "%.0f", v);
    return buf;
  case RC_NS:
    return cli_fmt_ns(buf, size, v);
  case RC_BYTES:
    return cli_fmt_bytes(buf, size, v);
  case RC_PCT:
    snprintf(buf, size, "%.1f%%", fabs(v) < 0.05 ? 0.0 : v);
    return buf;
  case RC_BW:
    if (v >= 1e9)
      snprintf(buf, size, "%.1f GB/s", v / 1e9);
    else if (v >= 1e6)
      snprintf(buf, size, "%.1f MB/s", v / 1e6);
    else if (v >= 1e3)
      snprintf(buf, size, "%.1f kB/s", v / 1e3);
    else
      snprintf(buf, size, "%.0f B/s", v);
    return buf;
  case RC_VALUE:
    if (unit && strcmp(unit, "B") == 0)
      return cli_fmt_bytes(buf, size, v);
    if (unit && strcmp(unit, "ns") == 0)
      return cli_fmt_ns(buf, size, v);
    if (unit && strcmp(unit, "%") == 0) {
      snprintf(buf, size, "%.1f%%", v);
      return buf;
    }
    if (unit && strcmp(unit, "Hz") == 0 && v >= 1e6) {
      snprintf(buf, size, "%.3f GHz", v / 1e9);
      return buf;
    }
    human_num(buf, size, v);
    if (unit && *unit && strcmp(unit, "count") != 0) {
      size_t n = strlen(buf);
      snprintf(buf + n, size - n, " %s", unit);
    }
    return buf;
  case RC_TEXT:
    break;
  }
  snprintf(buf, size, "?");
  return buf;
}

/* See report.h. */
void report_put_clean(FILE *f, const char *s, int width, bool right) {
  int n = 0;
  for (const char *p = s; *p; p++)
    if (((unsigned char)*p & 0xc0) != 0x80) /* UTF-8 characters */
      n++;
  if (right)
    for (int i = n; i < width; i++)
      fputc(' ', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
  if (!right)
    for (int i = n; i < width; i++)
      fputc(' ', f);
}

/* See report.h. */
bool report_parse_time(const char *s, int64_t *ns) {
  char *end;
  if (!s || !*s)
    return false;
  double v = strtod(s, &end);
  if (end == s || !isfinite(v) || v < 0)
    return false;
  double mul = 1;
  if (strcmp(end, "") == 0 || strcmp(end, "ns") == 0)
    mul = 1;
  else if (strcmp(end, "us") == 0)
    mul = 1e3;
  else if (strcmp(end, "ms") == 0)
    mul = 1e6;
  else if (strcmp(end, "s") == 0)
    mul = 1e9;
  else
    return false;
  if (v * mul > 9e18)
    return false;
  *ns = (int64_t)llround(v * mul);
  return true;
}

static const char *cell_text(char *buf, size_t size, const rtable *t,
                             const rcell *row, int c) {
  if (t->cols[c].kind == RC_TEXT)
    return row[c].s ? row[c].s : "";
  const char *unit = t->unit_col >= 0 ? row[t->unit_col].s : NULL;
  return report_fmt(buf, size, t->cols[c].kind, row[c].v, unit);
}

static int text_width(const char *s) {
  int n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xc0) != 0x80) /* count UTF-8 characters */
      n++;
  return n;
}

static void print_table_text(const rtable *t, FILE *f) {
  int w[RT_MAX_COLS];
  char buf[64];
  for (int c = 0; c < t->ncols; c++)
    w[c] = text_width(t->cols[c].head);
  for (size_t i = 0; i < t->nrows; i++)
    for (int c = 0; c < t->ncols; c++) {
      int l = text_width(
          cell_text(buf, sizeof(buf), t, &t->cells[i * (size_t)t->ncols], c));
      if (l > w[c])
        w[c] = l;
    }
  fprintf(f, "\n%s\n", t->title);
  if (t->note)
    fprintf(f, "  %s\n", t->note);
  for (int c = 0; c < t->ncols; c++) {
    bool last = c + 1 == t->ncols;
    fputs("  ", f);
    bool right = t->cols[c].kind != RC_TEXT;
    report_put_clean(f, t->cols[c].head, last && !right ? 0 : w[c], right);
  }
  fputc('\n', f);
  for (size_t i = 0; i < t->nrows; i++) {
    const rcell *row = &t->cells[i * (size_t)t->ncols];
    for (int c = 0; c < t->ncols; c++) {
      bool last = c + 1 == t->ncols, right = t->cols[c].kind != RC_TEXT;
      fputs("  ", f);
      report_put_clean(f, cell_text(buf, sizeof(buf), t, row, c),
                       last && !right ? 0 : w[c], right);
    }
    fputc('\n', f);
  }
  if (!t->nrows)
    fputs("  (none)\n", f);
}

/* See report.h. */
void report_print_text(const report *r, FILE *f, bool tty) {
  (void)tty;
  char b1[64], b2[64];
  fputs("gpuperf report: ", f);
  report_put_clean(f, r->trace, 0, false);
  fprintf(f, " (%s; window %s)\n",
          cli_fmt_bytes(b1, sizeof(b1), (double)r->trace_bytes),
          cli_fmt_ns(b2, sizeof(b2), (double)report_sub_sat(r->end, r->start)));
  report_print_text_tables(r, f);
}

/* See report.h. */
void report_print_text_tables(const report *r, FILE *f) {
  for (size_t i = 0; i < r->ntabs; i++)
    print_table_text(&r->tabs[i], f);
}

static void csv_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"')
      fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void raw_num(FILE *f, double v, const char *null) {
  if (isnan(v))
    fputs(null, f);
  else if (v == floor(v) && fabs(v) < 9e15)
    fprintf(f, "%.0f", v);
  else
    fprintf(f, "%.6f", v);
}

/* See report.h. */
void report_print_csv(const report *r, FILE *f) {
  for (size_t i = 0; i < r->ntabs; i++) {
    const rtable *t = &r->tabs[i];
    if (i)
      fputc('\n', f);
    fputs("section", f);
    for (int c = 0; c < t->ncols; c++)
      fprintf(f, ",%s", t->cols[c].id);
    fputc('\n', f);
    for (size_t j = 0; j < t->nrows; j++) {
      const rcell *row = &t->cells[j * (size_t)t->ncols];
      fputs(t->id, f);
      for (int c = 0; c < t->ncols; c++) {
        fputc(',', f);
        if (t->cols[c].kind == RC_TEXT)
          csv_str(f, row[c].s ? row[c].s : "");
        else
          raw_num(f, row[c].v, "");
      }
      fputc('\n', f);
    }
  }
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

/* See report.h. */
void report_print_json(const report *r, FILE *f) {
  fputs("{\"trace\": ", f);
  json_str(f, r->trace);
  fprintf(f,
          ", \"trace_bytes\": %llu, \"window\": {\"start_ns\": %lld, "
          "\"end_ns\": %lld},\n \"sections\": {",
          (unsigned long long)r->trace_bytes, (long long)r->start,
          (long long)r->end);
  for (size_t i = 0; i < r->ntabs; i++) {
    const rtable *t = &r->tabs[i];
    fprintf(f, "%s\n  \"%s\": [", i ? "," : "", t->id);
    for (size_t j = 0; j < t->nrows; j++) {
      const rcell *row = &t->cells[j * (size_t)t->ncols];
      fputs(j ? ",\n    {" : "\n    {", f);
      for (int c = 0; c < t->ncols; c++) {
        fprintf(f, "%s\"%s\": ", c ? ", " : "", t->cols[c].id);
        if (t->cols[c].kind == RC_TEXT)
          json_str(f, row[c].s ? row[c].s : "");
        else
          raw_num(f, row[c].v, "null");
      }
      fputc('}', f);
    }
    fputs(t->nrows ? "\n  ]" : "]", f);
  }
  fputs("\n }\n}\n", f);
}
