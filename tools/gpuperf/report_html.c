/*
 * report_html.c - `gpuperf report --html`: one self-contained page that
 * opens offline (no fetches, no libraries): a timeline that zooms to
 * individual events (report_timeline.c: lanes per GPU queue and host
 * thread, rows per depth, a time axis, details and flows of a clicked
 * slice), a plot per counter, the report's tables (click a heading to
 * sort), and how to open the same trace in ui.perfetto.dev.
 *
 * A plot is SVG written here, in a fixed 0..1000 x 0..100 box: samples
 * closer than a quarter unit are thinned (data-samples on the figure is
 * the track's sample count).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "report_timeline.h"

static void esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '&':
      fputs("&amp;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    default:
      fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Counter plots                                                        */

typedef struct pts {
  FILE *f;
  double t0, span, lo, hi;
  double lastx;
  double lastv;
  long n;
} pts;

static void point_row(gp_tp_rows *r, void *user) {
  pts *p = user;
  double x = p->span > 0
                 ? ((double)gp_tp_rows_int(r, 0) - p->t0) / p->span * 1000.0
                 : 0;
  double v = gp_tp_rows_real(r, 1);
  double y =
      p->hi > p->lo ? 100.0 - (v - p->lo) / (p->hi - p->lo) * 95.0 : 50.0;
  /* A step plot: the value holds until the next sample. Samples less
   * than a unit apart are thinned (the first of them is drawn). */
  if (p->n && x - p->lastx < 0.25) {
    p->n++;
    return;
  }
  if (p->n)
    fprintf(p->f, " %.2f,%.2f", x, p->lastv);
  fprintf(p->f, " %.2f,%.2f", x, y);
  p->lastx = x;
  p->lastv = y;
  p->n++;
}

static int plots(const gp_report *r, gp_tp *tp, FILE *f) {
  const gp_report_table *t = gp_report_table_find(r, "counters");
  size_t n = t ? gp_report_table_rows(t) : 0;
  fputs("<h2>Counters</h2>\n<div class=plots>\n", f);
  if (!n)
    fputs("<p>(no counters in the window)</p>\n", f);
  for (size_t i = 0; i < n; i++) {
    const gp_report_cell *row = gp_report_table_row(t, i);
    char sql[1024], lit[600], b1[64], b2[64];
    size_t o = 0;
    for (const char *p = row[0].text; p && *p && o + 2 < sizeof(lit); p++) {
      if (*p == '\'')
        lit[o++] = '\'';
      lit[o++] = *p;
    }
    lit[o] = '\0';
    if (isnan(row[1].value))
      snprintf(sql, sizeof(sql),
               "SELECT ts, value FROM rp_counter WHERE name = '%s' AND gpu "
               "IS NULL ORDER BY track_id, ts",
               lit);
    else
      snprintf(sql, sizeof(sql),
               "SELECT ts, value FROM rp_counter WHERE name = '%s' AND gpu = "
               "%.0f ORDER BY track_id, ts",
               lit, row[1].value);
    fprintf(f, "<figure class=plot data-samples=\"%.0f\"><figcaption>",
            row[3].value);
    esc(f, row[0].text);
    if (!isnan(row[1].value))
      fprintf(f, " (GPU %.0f)", row[1].value);
    fprintf(
        f, ": %s to ",
        report_fmt(b1, sizeof(b1), GP_REPORT_VALUE, row[4].value, row[2].text));
    fprintf(
        f,
        "%s</figcaption>\n<svg viewBox=\"0 0 1000 100\" "
        "preserveAspectRatio=\"none\"><polyline points=\"",
        report_fmt(b2, sizeof(b2), GP_REPORT_VALUE, row[6].value, row[2].text));
    int64_t start;
    gp_report_window(r, &start, NULL);
    pts p = {f, (double)start, report_span(r), row[4].value, row[6].value, 0, 0,
             0};
    int rc = report_each_row(tp, "report", sql, point_row, &p);
    if (rc)
      return rc;
    if (p.n)
      fprintf(f, " 1000,%.2f", p.lastv);
    fputs("\"/></svg></figure>\n", f);
  }
  fputs("</div>\n", f);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Tables                                                               */

static void html_table(const gp_report_table *t, FILE *f) {
  char b[64];
  int ncols = gp_report_table_columns(t),
      unit_col = gp_report_table_unit_column(t);
  size_t nrows = gp_report_table_rows(t);
  fprintf(f, "<h2>");
  esc(f, gp_report_table_title(t));
  fprintf(f, "</h2>\n");
  if (gp_report_table_note(t)) {
    fputs("<p class=note>", f);
    esc(f, gp_report_table_note(t));
    fputs("</p>\n", f);
  }
  fprintf(f, "<table class=sortable data-section=\"%s\"><thead><tr>",
          gp_report_table_id(t));
  for (int c = 0; c < ncols; c++) {
    fputs(gp_report_column_kind(t, c) == GP_REPORT_TEXT ? "<th>"
                                                        : "<th class=n>",
          f);
    esc(f, gp_report_column_head(t, c));
    fputs("</th>", f);
  }
  fputs("</tr></thead><tbody>\n", f);
  for (size_t i = 0; i < nrows; i++) {
    const gp_report_cell *row = gp_report_table_row(t, i);
    fputs("<tr>", f);
    for (int c = 0; c < ncols; c++) {
      gp_report_kind kind = gp_report_column_kind(t, c);
      if (kind == GP_REPORT_TEXT) {
        fputs("<td>", f);
        esc(f, row[c].text);
      } else {
        const char *unit = unit_col >= 0 ? row[unit_col].text : NULL;
        fprintf(f, "<td class=n data-v=\"%.17g\">",
                isnan(row[c].value) ? -1e300 : row[c].value);
        esc(f, report_fmt(b, sizeof(b), kind, row[c].value, unit));
      }
      fputs("</td>", f);
    }
    fputs("</tr>\n", f);
  }
  if (!nrows)
    fprintf(f, "<tr><td colspan=%d>(none)</td></tr>\n", ncols);
  fputs("</tbody></table>\n", f);
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;margin-bottom:1.2em}"
    "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
    "td.n,th.n{text-align:right}th{cursor:pointer;background:#f0f0f0}"
    ".note{color:#555;font-size:90%}"
    ".plots{display:grid;grid-template-columns:repeat(auto-fill,"
    "minmax(22em,1fr));gap:1em}figure{margin:0}figcaption{font-size:12px}"
    ".plot svg{width:100%;height:70px;border:1px solid #ddd}"
    "polyline{fill:none;stroke:#3b73c4;stroke-width:1.5;"
    "vector-effect:non-scaling-stroke}";

/* Sorting of the tables (the timeline has its own script). */
static const char script[] =
    "(function(){"
    "document.querySelectorAll('table.sortable th').forEach(function(th,i){"
    "th.onclick=function(){var tb=th.closest('table').tBodies[0];"
    "var rows=Array.prototype.slice.call(tb.rows);var dir=th.dataset.dir==="
    "'d'?1:-1;th.dataset.dir=dir<0?'d':'a';var col=th.cellIndex;"
    "rows.sort(function(a,b){var p=a.cells[col],q=b.cells[col];"
    "if(!p||!q)return 0;if(p.dataset.v!==undefined)return dir*"
    "(parseFloat(p.dataset.v)-parseFloat(q.dataset.v));"
    "return dir*p.textContent.localeCompare(q.textContent)});"
    "rows.forEach(function(r){tb.appendChild(r)})}});"
    "document.body.dataset.ready='1'})();";

/* See report.h. */
int report_print_html(const gp_report *r, gp_tp *tp, FILE *f) {
  char b1[64], b2[64];
  fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=utf-8>"
             "<title>gpuperf report: ");
  esc(f, gp_report_name(r));
  fprintf(f, "</title><style>%s%s</style></head><body>\n<h1>gpuperf report: ",
          style, report_timeline_css);
  esc(f, gp_report_name(r));
  fprintf(f, "</h1>\n<p>%s trace, window of %s.</p>\n",
          cli_fmt_bytes(b1, sizeof(b1), (double)gp_report_trace_bytes(r)),
          cli_fmt_ns(b2, sizeof(b2), report_span(r)));
  fputs("<p class=note>To see every event: open <b>https://ui.perfetto.dev"
        "</b>, choose <i>Open trace file</i> and pick <code>",
        f);
  esc(f, gp_report_name(r));
  fputs("</code> (the UI runs in the browser; the trace stays on this "
        "machine). Or query it: <code>gpuperf query ",
        f);
  esc(f, gp_report_name(r));
  fputs(" 'SELECT ...'</code>.</p>\n", f);
  int rc = report_timeline_html(r, tp, f);
  if (!rc)
    rc = plots(r, tp, f);
  if (rc)
    return rc == -ENOMEM ? rc : -EIO;
  for (size_t i = 0; i < gp_report_table_count(r); i++)
    html_table(gp_report_table_at(r, i), f);
  fprintf(f, "<script>%s</script>\n</body></html>\n", script);
  return ferror(f) ? -EIO : 0;
}
