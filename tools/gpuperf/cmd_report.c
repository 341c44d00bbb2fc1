/*
 * cmd_report.c - `gpuperf report`: what a trace says, in a few tables.
 *
 *   gpuperf report FILE [--top N] [--html OUT] [--db FILE]
 *                       [--allow-truncated]
 *
 * Sections: the trace (span, GPUs); top kernels by total time and by
 * single duration; busy time per GPU and per hardware queue (the union of
 * their slices, so overlapping work counts once); API calls (host slices)
 * with counts and times; counters with min, average, max and the
 * time-weighted average (each value holds until the next sample); and
 * everything the trace or the import dropped. Built on the trace
 * processor's public API and its SQL tables only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpuperf/tp.h"

typedef struct out {
  FILE *f;
  bool html;
} out;

static void usage(FILE *f) {
  fprintf(f,
          "usage: gpuperf report FILE [--top N] [--html OUT] [--db FILE]\n"
          "                      [--allow-truncated]\n\n"
          "Summarises a Perfetto trace: top kernels by total and by single\n"
          "duration, busy time per GPU and queue, API calls with counts and\n"
          "times, counters (min, average, max, time-weighted average) and\n"
          "dropped records.\n\n"
          "  --top N            rows per ranking (default 10)\n"
          "  --html OUT         also write the report as an HTML page\n"
          "  --db FILE          keep/reuse the imported tables (see query)\n"
          "  --allow-truncated  accept an incomplete last packet\n\n"
          "Exit status: 0 success, 1 usage error, 2 bad trace.\n");
}

static void html_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else
      fputc(*s, f);
  }
}

/* A table being printed: header, then rows of cells (copied). */
typedef struct table {
  int ncols;
  const char *head[8];
  bool right[8];
  char **cells;
  size_t n, cap;
} table;

static void table_add(table *t, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void table_add(table *t, int col, const char *fmt, ...) {
  (void)col;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    char **c = realloc(t->cells, cap * sizeof(char *));
    if (!c)
      return;
    t->cells = c;
    t->cap = cap;
  }
  t->cells[t->n++] = strdup(buf);
}

static void table_print(out *o, const char *title, table *t) {
  FILE *f = o->f;
  size_t rows = t->ncols ? t->n / (size_t)t->ncols : 0;
  if (o->html) {
    fprintf(f, "<h2>");
    html_escape(f, title);
    fprintf(f, "</h2>\n<table>\n<tr>");
    for (int c = 0; c < t->ncols; c++) {
      fprintf(f, "<th>");
      html_escape(f, t->head[c]);
      fprintf(f, "</th>");
    }
    fprintf(f, "</tr>\n");
    for (size_t r = 0; r < rows; r++) {
      fprintf(f, "<tr>");
      for (int c = 0; c < t->ncols; c++) {
        fprintf(f, t->right[c] ? "<td class=n>" : "<td>");
        html_escape(f, t->cells[r * (size_t)t->ncols + (size_t)c]
                           ? t->cells[r * (size_t)t->ncols + (size_t)c]
                           : "");
        fprintf(f, "</td>");
      }
      fprintf(f, "</tr>\n");
    }
    if (!rows)
      fprintf(f, "<tr><td colspan=%d>(none)</td></tr>\n", t->ncols);
    fprintf(f, "</table>\n");
  } else {
    size_t w[8] = {0};
    for (int c = 0; c < t->ncols; c++)
      w[c] = strlen(t->head[c]);
    for (size_t i = 0; i < t->n; i++) {
      size_t l = t->cells[i] ? strlen(t->cells[i]) : 0;
      if (l > w[i % (size_t)t->ncols])
        w[i % (size_t)t->ncols] = l;
    }
    fprintf(f, "\n%s\n", title);
    for (int c = 0; c < t->ncols; c++) {
      bool last = c + 1 == t->ncols;
      if (t->right[c])
        fprintf(f, "  %*s", (int)w[c], t->head[c]);
      else
        fprintf(f, "  %-*s", last ? 0 : (int)w[c], t->head[c]);
    }
    fputc('\n', f);
    for (size_t r = 0; r < rows; r++) {
      for (int c = 0; c < t->ncols; c++) {
        const char *s = t->cells[r * (size_t)t->ncols + (size_t)c];
        bool last = c + 1 == t->ncols;
        if (t->right[c])
          fprintf(f, "  %*s", (int)w[c], s ? s : "");
        else
          fprintf(f, "  %-*s", last ? 0 : (int)w[c], s ? s : "");
      }
      fputc('\n', f);
    }
    if (!rows)
      fprintf(f, "  (none)\n");
  }
  for (size_t i = 0; i < t->n; i++)
    free(t->cells[i]);
  free(t->cells);
  t->cells = NULL;
  t->n = t->cap = 0;
}

/* Runs sql; calls row() for each row. Returns 0 or prints the error. */
static int each_row(gp_tp *tp, const char *sql,
                    void (*row)(gp_tp_rows *r, void *user), void *user) {
  gp_tp_rows *r;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &r, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "report: %s", err.message);
  int rc;
  while ((rc = gp_tp_rows_next(r, &err)) == 1)
    row(r, user);
  gp_tp_rows_destroy(r);
  if (rc < 0)
    return cli_error(CLI_BAD_INPUT, "report: %s", err.message);
  return 0;
}

/* b - a and a + b on trace timestamps, which come from untrusted input:
 * a difference as a double (never overflows), a sum saturated. */
static double ns_diff(int64_t b, int64_t a) {
  return (double)b - (double)a;
}
static int64_t ns_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static const char *text(gp_tp_rows *r, int c) {
  const char *s = gp_tp_rows_text(r, c);
  return s ? s : "(null)";
}

static void dur_cell(table *t, double ns) {
  char buf[64];
  table_add(t, 0, "%s", cli_fmt_ns(buf, sizeof(buf), ns));
}

/* ------------------------------------------------------------------ */
/* Sections                                                              */

typedef struct ctx {
  table t;
  double span;
  int64_t start, end;
} ctx;

static void kernel_total_row(gp_tp_rows *r, void *user) {
  ctx *c = user;
  table_add(&c->t, 0, "%s", text(r, 0));
  table_add(&c->t, 1, "%" PRId64, gp_tp_rows_int(r, 1));
  dur_cell(&c->t, gp_tp_rows_real(r, 2));
  dur_cell(&c->t, gp_tp_rows_real(r, 3));
  dur_cell(&c->t, gp_tp_rows_real(r, 4));
  table_add(&c->t, 5, "%.1f%%", gp_tp_rows_real(r, 5));
}

static void kernel_single_row(gp_tp_rows *r, void *user) {
  ctx *c = user;
  char buf[64];
  table_add(&c->t, 0, "%s", text(r, 0));
  table_add(&c->t, 1, "%s", text(r, 1));
  table_add(
      &c->t, 2, "%s",
      cli_fmt_ns(buf, sizeof(buf), ns_diff(gp_tp_rows_int(r, 2), c->start)));
  dur_cell(&c->t, (double)gp_tp_rows_int(r, 3));
}

/* Busy time: the union of [ts, ts + dur) per group, rows sorted by
 * (group, ts). */
typedef struct busy {
  ctx *c;
  char group[256], label[256];
  int64_t cur_start, cur_end;
  double total;
  bool open;
} busy;

static void busy_flush(busy *b) {
  if (!b->open)
    return;
  b->total += ns_diff(b->cur_end, b->cur_start);
  table_add(&b->c->t, 0, "%s", b->label);
  dur_cell(&b->c->t, b->total);
  table_add(&b->c->t, 2, "%.1f%%",
            b->c->span > 0 ? 100.0 * b->total / b->c->span : 0.0);
  b->open = false;
}

static void busy_row(gp_tp_rows *r, void *user) {
  busy *b = user;
  const char *group = text(r, 0);
  int64_t ts = gp_tp_rows_int(r, 2), dur = gp_tp_rows_int(r, 3);
  if (dur < 0)
    dur = 0;
  if (!b->open || strcmp(group, b->group) != 0) {
    busy_flush(b);
    snprintf(b->group, sizeof(b->group), "%s", group);
    snprintf(b->label, sizeof(b->label), "%s", text(r, 1));
    b->total = 0;
    b->cur_start = ts;
    b->cur_end = ns_add(ts, dur);
    b->open = true;
    return;
  }
  if (ts > b->cur_end) {
    b->total += ns_diff(b->cur_end, b->cur_start);
    b->cur_start = ts;
    b->cur_end = ns_add(ts, dur);
  } else if (ns_add(ts, dur) > b->cur_end) {
    b->cur_end = ns_add(ts, dur);
  }
}

static void api_row(gp_tp_rows *r, void *user) {
  ctx *c = user;
  table_add(&c->t, 0, "%s", text(r, 0));
  table_add(&c->t, 1, "%" PRId64, gp_tp_rows_int(r, 1));
  dur_cell(&c->t, gp_tp_rows_real(r, 2));
  dur_cell(&c->t, gp_tp_rows_real(r, 3));
  dur_cell(&c->t, gp_tp_rows_real(r, 4));
}

/* One counter track's statistics, from its values in time order. Each
 * value holds until the next sample, the last one until the trace ends. */
typedef struct stat {
  uint64_t n;
  double min, max, sum, wsum, wdur;
  int64_t last_ts;
  double last;
  int64_t end;
} stat;

static void stat_row(gp_tp_rows *r, void *user) {
  stat *s = user;
  int64_t ts = gp_tp_rows_int(r, 0);
  double v = gp_tp_rows_real(r, 1);
  if (s->n) {
    s->wsum += s->last * ns_diff(ts, s->last_ts);
    s->wdur += ns_diff(ts, s->last_ts);
  }
  s->min = s->n && s->min < v ? s->min : v;
  s->max = s->n && s->max > v ? s->max : v;
  s->sum += v;
  s->n++;
  s->last = v;
  s->last_ts = ts;
}

typedef struct tracks {
  ctx *c;
  gp_tp *tp;
  int rc;
} tracks;

static void counter_track_row(gp_tp_rows *r, void *user) {
  tracks *k = user;
  ctx *c = k->c;
  if (k->rc)
    return;
  char sql[128];
  /* The counter table's index on track_id gives the values in time order
   * without sorting. */
  snprintf(sql, sizeof(sql),
           "SELECT ts, value FROM counter WHERE track_id = %" PRId64
           " ORDER BY ts",
           gp_tp_rows_int(r, 0));
  stat s;
  memset(&s, 0, sizeof(s));
  if ((k->rc = each_row(k->tp, sql, stat_row, &s)))
    return;
  if (s.n && c->end > s.last_ts) {
    s.wsum += s.last * ns_diff(c->end, s.last_ts);
    s.wdur += ns_diff(c->end, s.last_ts);
  }
  const char *unit = gp_tp_rows_text(r, 3);
  table_add(&c->t, 0, "%s", text(r, 1));
  table_add(&c->t, 1, "%s",
            gp_tp_rows_type(r, 2) == GP_TP_NULL ? "" : text(r, 2));
  table_add(&c->t, 2, "%s", unit ? unit : "");
  table_add(&c->t, 3, "%" PRIu64, s.n);
  table_add(&c->t, 4, "%.6g", s.min);
  table_add(&c->t, 5, "%.6g", s.n ? s.sum / (double)s.n : 0.0);
  table_add(&c->t, 6, "%.6g", s.max);
  if (s.wdur > 0)
    table_add(&c->t, 7, "%.6g", s.wsum / s.wdur);
  else
    table_add(&c->t, 7, "-");
}

static void dropped_row(gp_tp_rows *r, void *user) {
  ctx *c = user;
  table_add(&c->t, 0, "%s", text(r, 0));
  table_add(&c->t, 1, "%" PRId64, gp_tp_rows_int(r, 1));
  table_add(&c->t, 2, "%s", text(r, 2));
}

static void gpu_row(gp_tp_rows *r, void *user) {
  ctx *c = user;
  table_add(&c->t, 0, "%" PRId64, gp_tp_rows_int(r, 0));
  table_add(&c->t, 1, "%s",
            gp_tp_rows_type(r, 1) == GP_TP_NULL ? "" : text(r, 1));
  table_add(&c->t, 2, "%" PRId64, gp_tp_rows_int(r, 2));
}

#define SQL_MAX 4096

static int report(gp_tp *tp, out *o, const char *trace, unsigned top) {
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  ctx c;
  memset(&c, 0, sizeof(c));
  c.start = info.start_ts;
  c.end = info.end_ts;
  c.span = ns_diff(info.end_ts, info.start_ts);
  char sql[SQL_MAX], buf[64], size[64];
  int rc;
  if (o->html) {
    fprintf(o->f, "<!DOCTYPE html>\n<html><head><meta charset=utf-8>"
                  "<title>gpuperf report</title><style>body{font-family:"
                  "sans-serif;margin:2em}table{border-collapse:collapse;"
                  "margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:"
                  "2px 8px;text-align:left}td.n{text-align:right}</style>"
                  "</head><body>\n<h1>gpuperf report: ");
    html_escape(o->f, trace);
    fprintf(o->f, "</h1>\n<p>%s, %s of trace time</p>\n",
            cli_fmt_bytes(size, sizeof(size), (double)info.trace_bytes),
            cli_fmt_ns(buf, sizeof(buf), c.span));
  } else {
    fprintf(o->f, "gpuperf report: %s (%s, %s of trace time)\n", trace,
            cli_fmt_bytes(size, sizeof(size), (double)info.trace_bytes),
            cli_fmt_ns(buf, sizeof(buf), c.span));
  }

  c.t = (table){3, {"gpu", "name", "slices"}, {true, false, true}, 0, 0, 0};
  if ((rc = each_row(tp,
                     /* Counted per GPU, then joined on gpu.id (indexed):
                      * linear in GPUs and slices. */
                     "SELECT gpu, name, sum(c) FROM (SELECT id, gpu, name, 0 "
                     "AS c FROM gpu UNION ALL SELECT g.id, g.gpu, g.name, n.c "
                     "FROM (SELECT extract_arg(t.dimension_arg_set_id, "
                     "'ugpu') AS u, count(*) AS c FROM gpu_slice s JOIN "
                     "gpu_track t ON s.track_id = t.id GROUP BY u) n "
                     "JOIN gpu g ON g.id = n.u) GROUP BY id ORDER BY gpu",
                     gpu_row, &c)))
    return rc;
  table_print(o, "GPUs", &c.t);

  /* Kernels: compute render stages, or every render stage if the trace
   * does not say which are compute. */
  const char *kernels =
      "(SELECT s.* FROM gpu_slice s JOIN gpu_track t ON s.track_id = t.id "
      "WHERE t.type = 'gpu_render_stage' AND (s.render_stage_category = 2 OR "
      "NOT EXISTS (SELECT 1 FROM gpu_slice WHERE render_stage_category = 2)))";
  snprintf(sql, sizeof(sql),
           "SELECT name, count(*), sum(dur), avg(dur), max(dur), 100.0 * "
           "sum(dur) / max(1, (SELECT sum(dur) FROM %s)) FROM %s GROUP BY name "
           "ORDER BY sum(dur) DESC, name LIMIT %u",
           kernels, kernels, top);
  c.t = (table){6,
                {"kernel", "count", "total", "average", "max", "share"},
                {false, true, true, true, true, true},
                0,
                0,
                0};
  if ((rc = each_row(tp, sql, kernel_total_row, &c)))
    return rc;
  table_print(o, "Top kernels by total time", &c.t);

  snprintf(sql, sizeof(sql),
           "SELECT k.name, coalesce(g.name, 'GPU ' || g.gpu, ''), k.ts, k.dur "
           "FROM %s k JOIN gpu_track t ON k.track_id = t.id LEFT JOIN gpu g ON "
           "g.id = extract_arg(t.dimension_arg_set_id, 'ugpu') "
           "ORDER BY k.dur DESC, k.ts LIMIT %u",
           kernels, top);
  c.t = (table){4,
                {"kernel", "gpu", "start", "duration"},
                {false, false, true, true},
                0,
                0,
                0};
  if ((rc = each_row(tp, sql, kernel_single_row, &c)))
    return rc;
  table_print(o, "Longest single kernels", &c.t);

  busy b;
  memset(&b, 0, sizeof(b));
  b.c = &c;
  c.t = (table){3, {"gpu", "busy", "of trace"}, {false, true, true}, 0, 0, 0};
  if ((rc = each_row(
           tp,
           "SELECT extract_arg(t.dimension_arg_set_id, 'ugpu') AS u, "
           "coalesce(g.name, 'GPU ' || g.gpu, 'GPU ?'), s.ts, s.dur "
           "FROM gpu_slice s JOIN gpu_track t ON s.track_id = t.id "
           "LEFT JOIN gpu g ON g.id = extract_arg(t.dimension_arg_set_id, "
           "'ugpu') WHERE t.type = 'gpu_render_stage' ORDER BY u, s.ts",
           busy_row, &b)))
    return rc;
  busy_flush(&b);
  table_print(o, "Busy time per GPU", &c.t);

  memset(&b, 0, sizeof(b));
  b.c = &c;
  c.t = (table){3, {"queue", "busy", "of trace"}, {false, true, true}, 0, 0, 0};
  if ((rc = each_row(
           tp,
           "SELECT extract_arg(t.dimension_arg_set_id, 'ugpu') || '/' || "
           "t.name AS q, coalesce(g.name, 'GPU ' || g.gpu, 'GPU ?') || ': ' || "
           "coalesce(t.name, '?'), s.ts, s.dur FROM gpu_slice s "
           "JOIN gpu_track t ON s.track_id = t.id LEFT JOIN gpu g ON g.id = "
           "extract_arg(t.dimension_arg_set_id, 'ugpu') "
           "WHERE t.type = 'gpu_render_stage' ORDER BY q, s.ts",
           busy_row, &b)))
    return rc;
  busy_flush(&b);
  table_print(o, "Busy time per GPU queue", &c.t);

  snprintf(
      sql, sizeof(sql),
      "SELECT coalesce(s.name, '(unnamed)'), count(*), sum(max(s.dur, 0)), "
      "avg(max(s.dur, 0)), max(s.dur) FROM slice s JOIN track t ON "
      "s.track_id = t.id WHERE t.id NOT IN (SELECT id FROM gpu_track) "
      /* GPU work mirrored on logical streams ("Device #N" > "Stream #M",
       * the layout of the Perfetto GPU docs) is the GPU's, not the host's. */
      "AND NOT EXISTS (SELECT 1 FROM track p WHERE p.id = t.parent_id AND "
      "p.name GLOB 'Device #*') "
      "GROUP BY s.name ORDER BY sum(s.dur) DESC LIMIT %u",
      top);
  c.t = (table){5,
                {"call", "count", "total", "average", "max"},
                {false, true, true, true, true},
                0,
                0,
                0};
  if ((rc = each_row(tp, sql, api_row, &c)))
    return rc;
  table_print(o, "API calls and host ranges", &c.t);

  /* Time-weighted average: each value holds until the next sample of its
   * track; the last until the end of the trace. */
  c.t = (table){8,
                {"counter", "gpu", "unit", "samples", "min", "average", "max",
                 "time-weighted"},
                {false, true, false, true, true, true, true, true},
                0,
                0,
                0};
  tracks k = {&c, tp, 0};
  if ((rc = each_row(tp,
                     "SELECT t.id, t.name, gct.gpu_id, t.unit FROM "
                     "counter_track t LEFT JOIN gpu_counter_track gct ON "
                     "gct.id = t.id WHERE EXISTS (SELECT 1 FROM counter WHERE "
                     "track_id = t.id) ORDER BY gct.gpu_id, t.name, t.id",
                     counter_track_row, &k)) ||
      (rc = k.rc))
    return rc;
  table_print(o, "Counters", &c.t);

  /* What the recording dropped (gpuperf writes a cumulative counter),
   * then what the import could not use. */
  c.t = (table){3, {"what", "count", "meaning"}, {false, true, false}, 0, 0, 0};
  if ((rc = each_row(tp,
                     "SELECT 'gpuperf dropped records', cast_int!(value), "
                     "'records the recording session lost (its own count)' "
                     "FROM counter WHERE track_id IN (SELECT id FROM "
                     "counter_track WHERE name = 'gpuperf dropped records') "
                     "ORDER BY ts DESC LIMIT 1",
                     dropped_row, &c)) ||
      (rc = each_row(tp,
                     "SELECT 'gpuperf lost at process death', "
                     "cast_int!(sum(value)), 'records processes killed by "
                     "SIGKILL had not written yet' FROM counter WHERE "
                     "track_id IN (SELECT id FROM counter_track WHERE name = "
                     "'gpuperf lost at process death') HAVING count(*) > 0",
                     dropped_row, &c)) ||
      (rc = each_row(tp,
                     "SELECT name, value, description FROM stats WHERE value "
                     "> 0 AND severity IN ('data_loss', 'error') ORDER BY name",
                     dropped_row, &c)))
    return rc;
  table_print(o, "Dropped or unusable records", &c.t);
  if (o->html)
    fprintf(o->f, "</body></html>\n");
  return 0;
}

/* See cli.h. */
int cmd_report(int argc, char **argv) {
  const char *trace = NULL, *html = NULL, *db = NULL;
  uint64_t top = 10;
  uint32_t flags = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--top") == 0) {
      if (!cli_parse_u64("--top", i + 1 < argc ? argv[++i] : NULL, 1, 100000,
                         &top))
        return CLI_USAGE;
    } else if (strcmp(a, "--html") == 0) {
      if (++i >= argc)
        return cli_error(CLI_USAGE, "--html needs a file");
      html = argv[i];
    } else if (strcmp(a, "--db") == 0) {
      if (++i >= argc)
        return cli_error(CLI_USAGE, "--db needs a file");
      db = argv[i];
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (a[0] == '-' && a[1]) {
      cli_error(CLI_USAGE, "report: unknown option '%s'", a);
      usage(stderr);
      return CLI_USAGE;
    } else if (!trace) {
      trace = a;
    } else {
      return cli_error(CLI_USAGE, "report: one trace file only");
    }
  }
  if (!trace) {
    usage(stderr);
    return CLI_USAGE;
  }
  gp_tp_options opts = {sizeof(opts), flags, db};
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(trace, &opts, &tp, &err) != 0)
    return cli_error(err.code == GP_EINVAL ? CLI_USAGE : CLI_BAD_INPUT, "%s",
                     err.message);
  if (gp_tp_warning(tp))
    fprintf(stderr, "gpuperf: warning: %s\n", gp_tp_warning(tp));
  out o = {stdout, false};
  int rc = report(tp, &o, trace, (unsigned)top);
  if (!rc && html) {
    FILE *f = fopen(html, "w");
    if (!f) {
      rc = cli_error(CLI_BAD_INPUT, "%s: %s", html, strerror(errno));
    } else {
      out h = {f, true};
      rc = report(tp, &h, trace, (unsigned)top);
      if (fclose(f) != 0 && !rc)
        rc = cli_error(CLI_BAD_INPUT, "%s: %s", html, strerror(errno));
    }
  }
  gp_tp_close(tp);
  return rc ? CLI_BAD_INPUT : CLI_OK;
}
