/*
 * report_html.c - `gpuperf report --html`: one self-contained page that
 * opens offline (no fetches, no libraries): a timeline with one lane per
 * GPU queue, per host thread (its calls; its user ranges in a lane of
 * their own) and per range track, a plot per counter, the
 * report's tables (click a heading to sort), and how to open the same
 * trace in ui.perfetto.dev.
 *
 * The timeline and plots are SVG written here. Lane coordinates are a
 * fixed 0..TL_W range for the window, so zooming is a change of the SVG
 * viewBox (mouse wheel, buttons; drag to pan). A lane shows each slice
 * as a rect, except that slices closer than a pixel at full width are
 * merged into one rect: data-n on a rect says how many slices it stands
 * for, so a lane's data-n add up to its slice count whatever the size of
 * the trace. A plot thins its samples the same way (data-samples is the
 * track's sample count).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

#define TL_W 100000.0 /* timeline width in SVG units */
#define LANE_H 18
#define MERGE_PX (TL_W / 4000.0) /* one pixel of a 4000 px wide view */

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
/* Timeline                                                             */

typedef struct lane_state {
  FILE *f;
  int64_t start; /* the window's */
  double scale;  /* SVG units per ns */
  char key[512];
  int lanes;
  bool open;
  /* the rect being grown */
  double x0, x1;
  long n;
  char name[256], cls[16];
  double dur;
} lane_state;

static void rect_flush(lane_state *s) {
  if (!s->n)
    return;
  double w = s->x1 - s->x0;
  fprintf(s->f,
          "<rect class=\"%s\" x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
          "height=\"%d\" data-n=\"%ld\"><title>",
          s->cls, s->x0, (s->lanes - 1) * LANE_H + 2, w < 0.5 ? 0.5 : w,
          LANE_H - 4, s->n);
  char b[64];
  if (s->n == 1) {
    esc(s->f, s->name);
    fprintf(s->f, " (%s)", cli_fmt_ns(b, sizeof(b), s->dur));
  } else {
    fprintf(s->f, "%ld slices, %s", s->n, cli_fmt_ns(b, sizeof(b), s->dur));
  }
  fputs("</title></rect>\n", s->f);
  s->n = 0;
}

/* Columns: lane key, lane label, ts, dur, name, class. */
static void lane_row(gp_tp_rows *r, void *user) {
  lane_state *s = user;
  const char *key = gp_tp_rows_text(r, 0);
  key = key ? key : "";
  if (!s->open || strcmp(key, s->key) != 0) {
    rect_flush(s);
    if (s->open)
      fputs("</g>\n", s->f);
    snprintf(s->key, sizeof(s->key), "%s", key);
    s->lanes++;
    fprintf(s->f, "<g class=\"lane\" data-lane=\"");
    esc(s->f, gp_tp_rows_text(r, 1));
    fputs("\">\n", s->f);
    s->open = true;
  }
  double ts = (double)report_sub_sat(gp_tp_rows_int(r, 2), s->start);
  double dur = (double)gp_tp_rows_int(r, 3);
  double x0 = ts * s->scale, x1 = (ts + dur) * s->scale;
  const char *cls = gp_tp_rows_text(r, 5);
  if (s->n && x0 - s->x1 < MERGE_PX && strcmp(cls, s->cls) == 0) {
    if (x1 > s->x1)
      s->x1 = x1;
    s->n++;
    s->dur += dur;
    return;
  }
  rect_flush(s);
  s->x0 = x0;
  s->x1 = x1;
  s->n = 1;
  s->dur = dur;
  snprintf(s->name, sizeof(s->name), "%s",
           gp_tp_rows_text(r, 4) ? gp_tp_rows_text(r, 4) : "");
  snprintf(s->cls, sizeof(s->cls), "%s", cls ? cls : "k");
}

static void label_row(gp_tp_rows *r, void *user) {
  FILE *f = user;
  fputs("<div class=\"lbl\">", f);
  esc(f, gp_tp_rows_text(r, 1));
  fputs("</div>\n", f);
}

/* The lanes: GPU queues first, then host tracks. */
static const char lanes_sql[] =
    "SELECT 'g' || printf('%08d', w.ugpu) || '/' || w.queue AS k, "
    "coalesce(g.name, g.model, 'GPU ' || w.ugpu) || ': ' || w.queue AS l, "
    "w.ts, w.dur, w.name, CASE WHEN w.is_copy THEN 'c' WHEN w.is_kernel THEN "
    "'k' ELSE 'o' END FROM rp_work w LEFT JOIN gpu g ON g.id = w.ugpu "
    "UNION ALL SELECT 'h' || printf('%08d', h.track_id) || (h.kind = "
    "'range'), coalesce(t.name, 'thread') || CASE WHEN h.kind = 'range' "
    "THEN ' (ranges)' ELSE '' END, h.ts, h.dur, h.name, CASE h.kind "
    "WHEN 'api' THEN 'a' WHEN 'range' THEN 'r' ELSE 'x' END FROM rp_host h "
    "JOIN track t ON t.id = h.track_id LEFT JOIN thread_track tt ON tt.id = "
    "h.track_id "
    "ORDER BY 1, 3";

static int timeline(const gp_report *r, gp_tp *tp, FILE *f) {
  double span = report_span(r);
  lane_state s;
  memset(&s, 0, sizeof(s));
  s.f = f;
  gp_report_window(r, &s.start, NULL);
  s.scale = span > 0 ? TL_W / span : 0;
  char sql[sizeof(lanes_sql) + 64];
  snprintf(sql, sizeof(sql), "SELECT DISTINCT k, l FROM (%s) ORDER BY k",
           lanes_sql);
  fputs("<h2>Timeline</h2>\n<p class=note>GPU queues, then host threads and "
        "range tracks. Wheel or buttons to zoom, drag to pan; hover for "
        "names. <button id=zin>zoom in</button> <button id=zout>zoom "
        "out</button> <button id=zreset>whole window</button></p>\n"
        "<div class=tl><div class=lbls>\n",
        f);
  int rc = report_each_row(tp, "report", sql, label_row, f);
  if (rc)
    return rc;
  fputs("</div><div class=tlsvg>\n", f);
  /* The SVG's height is known only after the lanes: it is set by the
   * script from the lane count (data-lanes), written at the end. */
  fprintf(f,
          "<svg id=\"timeline\" preserveAspectRatio=\"none\" "
          "viewBox=\"0 0 %.0f 100\" width=\"100%%\">\n",
          TL_W);
  rc = report_each_row(tp, "report", lanes_sql, lane_row, &s);
  rect_flush(&s);
  if (s.open)
    fputs("</g>\n", f);
  fprintf(f,
          "</svg></div></div>\n<script>var LANES=%d,LANE_H=%d,TL_W=%.0f;"
          "</script>\n",
          s.lanes, LANE_H, TL_W);
  return rc;
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
    ".tl{display:flex;border:1px solid #ccc}.lbls{flex:0 0 20em;"
    "font-size:12px;overflow:hidden}.lbl{height:18px;line-height:18px;"
    "white-space:nowrap;overflow:hidden;text-overflow:ellipsis;padding:0 4px;"
    "border-bottom:1px solid #eee}"
    ".tlsvg{flex:1;overflow:hidden;cursor:grab}"
    "rect.k{fill:#3b73c4}rect.c{fill:#e08a1e}rect.o{fill:#888}"
    "rect.a{fill:#3a9a4a}rect.r{fill:#8a5cc2}rect.x{fill:#bbb}"
    ".plots{display:grid;grid-template-columns:repeat(auto-fill,"
    "minmax(22em,1fr));gap:1em}figure{margin:0}figcaption{font-size:12px}"
    ".plot svg{width:100%;height:70px;border:1px solid #ddd}"
    "polyline{fill:none;stroke:#3b73c4;stroke-width:1.5;"
    "vector-effect:non-scaling-stroke}";

/* Zoom/pan of the timeline and sorting of the tables. */
static const char script[] =
    "(function(){var s=document.getElementById('timeline');"
    "var h=Math.max(1,LANES)*LANE_H;s.setAttribute('height',h);"
    "var x=0,w=TL_W;function set(){s.setAttribute('viewBox',x+' 0 '+w+' '+h)}"
    "set();function zoom(f,c){var nw=Math.min(TL_W,Math.max(TL_W/1e6,w*f));"
    "x=Math.max(0,Math.min(TL_W-nw,c-(c-x)*nw/w));w=nw;set()}"
    "document.getElementById('zin').onclick=function(){zoom(0.5,x+w/2)};"
    "document.getElementById('zout').onclick=function(){zoom(2,x+w/2)};"
    "document.getElementById('zreset').onclick=function(){x=0;w=TL_W;set()};"
    "s.addEventListener('wheel',function(e){e.preventDefault();"
    "var r=s.getBoundingClientRect();var c=x+(e.clientX-r.left)/r.width*w;"
    "zoom(e.deltaY<0?0.8:1.25,c)},{passive:false});var d=null;"
    "s.addEventListener('mousedown',function(e){d={cx:e.clientX,x:x}});"
    "window.addEventListener('mouseup',function(){d=null});"
    "window.addEventListener('mousemove',function(e){if(!d)return;"
    "var r=s.getBoundingClientRect();x=Math.max(0,Math.min(TL_W-w,"
    "d.x-(e.clientX-d.cx)/r.width*w));set()});"
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
  fprintf(
      f, "</title><style>%s</style></head><body>\n<h1>gpuperf report: ", style);
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
  int rc = timeline(r, tp, f);
  if (!rc)
    rc = plots(r, tp, f);
  if (rc)
    return -EIO;
  for (size_t i = 0; i < gp_report_table_count(r); i++)
    html_table(gp_report_table_at(r, i), f);
  fprintf(f, "<script>%s</script>\n</body></html>\n", script);
  return ferror(f) ? -EIO : 0;
}
