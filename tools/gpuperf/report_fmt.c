/*
 * report_fmt.c - the text, CSV and JSON forms of a built report, and
 * the human units they share ("1.234 ms", "48.0 MiB", "22.3 GiB/s",
 * "1.215 GHz").
 *
 * Text is for people: units chosen per value, never scientific notation,
 * names cleaned of control characters. CSV and JSON are for programs:
 * raw numbers (ns, bytes, bytes per second, percent) under column names
 * that say the unit ("total_ns"); CSV has one block per section, each
 * with its own header line, blocks separated by an empty line. A value
 * that is missing (NaN) is "-" in text, empty in CSV, null in JSON; an
 * infinite one "inf" or "-inf" in text and CSV, null in JSON. On a
 * terminal, CSV shows control characters escaped as `query` does; JSON
 * strings are always valid UTF-8 with control characters escaped.
 *
 * The tables come from the library (gpuperf/report.h); what the CLI's
 * report commands share besides the formats (errors, running SQL) is
 * here too.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpuperf/error.h"
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

/* Bytes per second in binary units, as byte counts are shown. */
static const char *fmt_bw(char *buf, size_t size, double v) {
  static const char *const units[] = {"B/s", "KiB/s", "MiB/s", "GiB/s",
                                      "TiB/s"};
  int u = 0;
  while (fabs(v) >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

/* A frequency in Hz with the prefix that fits: "1.215 GHz". */
static const char *fmt_hz(char *buf, size_t size, double hz) {
  double a = fabs(hz);
  if (a >= 1e9)
    snprintf(buf, size, "%.3f GHz", hz / 1e9);
  else if (a >= 1e6)
    snprintf(buf, size, "%.1f MHz", hz / 1e6);
  else if (a >= 1e3)
    snprintf(buf, size, "%.1f kHz", hz / 1e3);
  else
    snprintf(buf, size, "%.0f Hz", hz);
  return buf;
}

/* The factor from unit to a base unit this file scales (Hz, ns, B, B/s)
 * into *base, or 0 for a unit it shows as it is. */
static double unit_scale(const char *unit, const char **base) {
  static const struct {
    const char *unit, *base;
    double mul;
  } t[] = {{"Hz", "Hz", 1},      {"kHz", "Hz", 1e3}, {"KHz", "Hz", 1e3},
           {"MHz", "Hz", 1e6},   {"GHz", "Hz", 1e9}, {"ns", "ns", 1},
           {"us", "ns", 1e3},    {"ms", "ns", 1e6},  {"s", "ns", 1e9},
           {"B", "B", 1},        {"bytes", "B", 1},  {"B/s", "B/s", 1},
           {"bytes/s", "B/s", 1}};
  for (size_t i = 0; unit && i < sizeof(t) / sizeof(t[0]); i++)
    if (strcmp(unit, t[i].unit) == 0) {
      *base = t[i].base;
      return t[i].mul;
    }
  return 0;
}

/* See report.h. */
const char *report_fmt(char *buf, size_t size, gp_report_kind k, double v,
                       const char *unit) {
  if (isnan(v)) {
    snprintf(buf, size, "-");
    return buf;
  }
  if (isinf(v)) { /* a counter can say Infinity: no unit fits it */
    snprintf(buf, size, v > 0 ? "inf" : "-inf");
    return buf;
  }
  switch (k) {
  case GP_REPORT_INT:
    snprintf(buf, size, "%.0f", v);
    return buf;
  case GP_REPORT_NS:
    return cli_fmt_ns(buf, size, v);
  case GP_REPORT_BYTES:
    return cli_fmt_bytes(buf, size, v);
  case GP_REPORT_PCT:
    snprintf(buf, size, "%.1f%%", fabs(v) < 0.05 ? 0.0 : v);
    return buf;
  case GP_REPORT_BW:
    return fmt_bw(buf, size, v);
  case GP_REPORT_VALUE: {
    const char *base = NULL;
    double mul = unit_scale(unit, &base);
    if (mul > 0 && strcmp(base, "Hz") == 0)
      return fmt_hz(buf, size, v * mul);
    if (mul > 0 && strcmp(base, "ns") == 0)
      return cli_fmt_ns(buf, size, v * mul);
    if (mul > 0 && strcmp(base, "B") == 0)
      return cli_fmt_bytes(buf, size, v);
    if (mul > 0)
      return fmt_bw(buf, size, v);
    if (unit && strcmp(unit, "%") == 0) {
      snprintf(buf, size, "%.1f%%", v);
      return buf;
    }
    human_num(buf, size, v);
    if (unit && *unit && strcmp(unit, "count") != 0) {
      size_t n = strlen(buf);
      snprintf(buf + n, size - n, " %s", unit);
    }
    return buf;
  }
  case GP_REPORT_TEXT:
    break;
  }
  snprintf(buf, size, "?");
  return buf;
}

/* The length of the UTF-8 character at p if a terminal may be shown it
 * (1-4 bytes), or 0 for a control character (C0, DEL, C1: U+0080-U+009F,
 * which some terminals obey as escapes) or a byte that does not start a
 * valid sequence (a lone 0x9b is CSI to an 8-bit terminal). */
static size_t utf8_shown(const unsigned char *p) {
  if (p[0] < 0x80)
    return p[0] < 0x20 || p[0] == 0x7f ? 0 : 1;
  size_t n = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
             : p[0] >= 0xe0 && p[0] <= 0xef ? 3
             : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                            : 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
    return 0;
  return n;
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
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t len = utf8_shown(p);
    if (len)
      fwrite(p, 1, len, f);
    else
      fputc('?', f);
    p += len ? len : 1;
  }
  if (!right)
    for (int i = n; i < width; i++)
      fputc(' ', f);
}

/* See report.h. */
int64_t report_sub_sat(int64_t a, int64_t b) {
  if (b < 0 && a > INT64_MAX + b)
    return INT64_MAX;
  if (b > 0 && a < INT64_MIN + b)
    return INT64_MIN;
  return a - b;
}

/* See report.h. */
double report_span(const gp_report *r) {
  int64_t start, end;
  gp_report_window(r, &start, &end);
  return (double)report_sub_sat(end, start);
}

/* See report.h. */
int report_error(const char *what, int rc, const gp_tp_error *err) {
  const char *msg = err && err->message[0] ? err->message : gp_strerror(rc);
  return cli_error(rc == GP_EINVAL ? CLI_USAGE : CLI_BAD_INPUT, "%s: %s", what,
                   msg);
}

/* See report.h. */
int report_each_row(gp_tp *tp, const char *what, const char *sql,
                    void (*row)(gp_tp_rows *rows, void *user), void *user) {
  gp_tp_rows *rows;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &rows, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "%s: %s", what, err.message);
  int rc;
  while ((rc = gp_tp_rows_next(rows, &err)) == 1)
    if (row)
      row(rows, user);
  gp_tp_rows_destroy(rows);
  if (rc < 0)
    return cli_error(CLI_BAD_INPUT, "%s: %s", what, err.message);
  return 0;
}

static const char *cell_text(char *buf, size_t size, const gp_report_table *t,
                             const gp_report_cell *row, int c) {
  gp_report_kind kind = gp_report_column_kind(t, c);
  if (kind == GP_REPORT_TEXT)
    return row[c].text ? row[c].text : "";
  int u = gp_report_table_unit_column(t);
  return report_fmt(buf, size, kind, row[c].value, u >= 0 ? row[u].text : NULL);
}

static int text_width(const char *s) {
  int n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xc0) != 0x80) /* count UTF-8 characters */
      n++;
  return n;
}

/* Prints table t; keep (NULL: every row) says which rows; the others
 * are counted into *hidden. */
static void print_table_text(const gp_report_table *t, FILE *f,
                             bool (*keep)(const gp_report_table *,
                                          const gp_report_cell *),
                             size_t *hidden) {
  int ncols = gp_report_table_columns(t);
  size_t nrows = gp_report_table_rows(t), shown = 0;
  int *w = calloc((size_t)ncols + 1, sizeof(int));
  char buf[64];
  if (!w) {
    fputs("gpuperf: out of memory\n", stderr);
    exit(CLI_BAD_INPUT);
  }
  for (int c = 0; c < ncols; c++)
    w[c] = text_width(gp_report_column_head(t, c));
  for (size_t i = 0; i < nrows; i++) {
    if (keep && !keep(t, gp_report_table_row(t, i)))
      continue;
    shown++;
    for (int c = 0; c < ncols; c++) {
      int l = text_width(
          cell_text(buf, sizeof(buf), t, gp_report_table_row(t, i), c));
      if (l > w[c])
        w[c] = l;
    }
  }
  if (hidden)
    *hidden += nrows - shown;
  if (keep && nrows && !shown) { /* nothing to show: not even the title */
    free(w);
    return;
  }
  fprintf(f, "\n%s\n", gp_report_table_title(t));
  if (gp_report_table_note(t))
    fprintf(f, "  %s\n", gp_report_table_note(t));
  for (int c = 0; c < ncols; c++) {
    bool last = c + 1 == ncols;
    fputs("  ", f);
    bool right = gp_report_column_kind(t, c) != GP_REPORT_TEXT;
    report_put_clean(f, gp_report_column_head(t, c), last && !right ? 0 : w[c],
                     right);
  }
  fputc('\n', f);
  for (size_t i = 0; i < nrows; i++) {
    const gp_report_cell *row = gp_report_table_row(t, i);
    if (keep && !keep(t, row))
      continue;
    for (int c = 0; c < ncols; c++) {
      bool last = c + 1 == ncols,
           right = gp_report_column_kind(t, c) != GP_REPORT_TEXT;
      fputs("  ", f);
      report_put_clean(f, cell_text(buf, sizeof(buf), t, row, c),
                       last && !right ? 0 : w[c], right);
    }
    fputc('\n', f);
  }
  if (!nrows)
    fputs("  (none)\n", f);
  if (gp_report_table_cut(t))
    fprintf(f, "  (%zu more not shown; --top 0 shows all)\n",
            gp_report_table_cut(t));
  free(w);
}

/* See report.h. */
void report_print_text(const gp_report *r, FILE *f, bool tty) {
  (void)tty;
  char b1[64], b2[64];
  fputs("gpuperf report: ", f);
  report_put_clean(f, gp_report_name(r), 0, false);
  fprintf(f, " (%s; window %s)\n",
          cli_fmt_bytes(b1, sizeof(b1), (double)gp_report_trace_bytes(r)),
          cli_fmt_ns(b2, sizeof(b2), report_span(r)));
  report_print_text_tables(r, f);
}

/* See report.h. */
void report_print_text_tables(const gp_report *r, FILE *f) {
  report_print_text_tables_keep(r, f, NULL, NULL);
}

/* See report.h. */
void report_print_text_tables_keep(const gp_report *r, FILE *f,
                                   bool (*keep)(const gp_report_table *,
                                                const gp_report_cell *),
                                   size_t *hidden) {
  for (size_t i = 0; i < gp_report_table_count(r); i++)
    print_table_text(gp_report_table_at(r, i), f, keep, hidden);
}

/* See report.h. */
void report_put_csv_str(FILE *f, const char *s, bool escape) {
  fputc('"', f);
  while (*s) {
    size_t n = strcspn(s, "\"");
    if (escape) {
      char *part = strndup(s, n);
      gp_tp_put_escaped(f, part ? part : "?");
      free(part);
    } else {
      fwrite(s, 1, n, f);
    }
    s += n;
    if (*s == '"') {
      fputs("\"\"", f);
      s++;
    }
  }
  fputc('"', f);
}

/* A number of the CSV: integers without a point, NaN (no value) as an
 * empty field, infinities as inf and -inf (what Python, pandas and
 * strtod read). */
static void csv_num(FILE *f, double v) {
  if (isnan(v))
    return;
  if (isinf(v))
    fputs(v > 0 ? "inf" : "-inf", f);
  else if (v == floor(v) && fabs(v) < 9e15)
    fprintf(f, "%.0f", v);
  else
    fprintf(f, "%.6f", v);
}

/* A number of the JSON: as the CSV's, but null for NaN and the
 * infinities (gp_tp_put_json_number's rule: JSON cannot spell them). */
static void json_num(FILE *f, double v) {
  if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
    fprintf(f, "%.0f", v);
  else if (isfinite(v))
    fprintf(f, "%.6f", v);
  else
    gp_tp_put_json_number(f, v);
}

/* See report.h. */
void report_print_csv(const gp_report *r, FILE *f, bool escape) {
  for (size_t i = 0; i < gp_report_table_count(r); i++) {
    const gp_report_table *t = gp_report_table_at(r, i);
    int ncols = gp_report_table_columns(t);
    if (i)
      fputc('\n', f);
    fputs("section", f);
    for (int c = 0; c < ncols; c++)
      fprintf(f, ",%s", gp_report_column_id(t, c));
    fputc('\n', f);
    for (size_t j = 0; j < gp_report_table_rows(t); j++) {
      const gp_report_cell *row = gp_report_table_row(t, j);
      fputs(gp_report_table_id(t), f);
      for (int c = 0; c < ncols; c++) {
        fputc(',', f);
        if (gp_report_column_kind(t, c) == GP_REPORT_TEXT)
          report_put_csv_str(f, row[c].text ? row[c].text : "", escape);
        else
          csv_num(f, row[c].value);
      }
      fputc('\n', f);
    }
  }
}

/* See report.h. */
void report_print_json(const gp_report *r, FILE *f) {
  fputs("{\"trace\": ", f);
  gp_tp_put_json_string(f, gp_report_name(r));
  int64_t start, end;
  gp_report_window(r, &start, &end);
  fprintf(f,
          ", \"trace_bytes\": %llu, \"window\": {\"start_ns\": %lld, "
          "\"end_ns\": %lld},\n \"sections\": {",
          (unsigned long long)gp_report_trace_bytes(r), (long long)start,
          (long long)end);
  for (size_t i = 0; i < gp_report_table_count(r); i++) {
    const gp_report_table *t = gp_report_table_at(r, i);
    int ncols = gp_report_table_columns(t);
    size_t nrows = gp_report_table_rows(t);
    fprintf(f, "%s\n  \"%s\": [", i ? "," : "", gp_report_table_id(t));
    for (size_t j = 0; j < nrows; j++) {
      const gp_report_cell *row = gp_report_table_row(t, j);
      fputs(j ? ",\n    {" : "\n    {", f);
      for (int c = 0; c < ncols; c++) {
        fprintf(f, "%s\"%s\": ", c ? ", " : "", gp_report_column_id(t, c));
        if (gp_report_column_kind(t, c) == GP_REPORT_TEXT)
          gp_tp_put_json_string(f, row[c].text);
        else
          json_num(f, row[c].value);
      }
      fputc('}', f);
    }
    fputs(nrows ? "\n  ]" : "]", f);
  }
  fputs("\n },\n \"left_out\": {", f);
  bool first = true;
  for (size_t i = 0; i < gp_report_table_count(r); i++) {
    const gp_report_table *t = gp_report_table_at(r, i);
    if (gp_report_table_cut(t)) {
      fprintf(f, "%s\"%s\": %zu", first ? "" : ", ", gp_report_table_id(t),
              gp_report_table_cut(t));
      first = false;
    }
  }
  fputs("}\n}\n", f);
}
