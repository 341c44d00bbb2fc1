/*
 * report/sections.c - the tables of a report, computed with the trace
 * processor's SQL over the views of report.c, and a little C where SQL
 * would be slow or awkward (the union of intervals for "busy", medians).
 *
 * "Busy" is defined once, here: the time during which at least one piece
 * of GPU work (a kernel, a copy or a fill) ran on a GPU, queue or stream,
 * overlapping work counted once (the union of the intervals), clipped to
 * the report's window, and shown as a share of that window.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reportInt.h"

static const char *text(gp_tp_rows *r, int c) {
  const char *s = gp_tp_rows_text(r, c);
  return s ? s : "";
}

static double num(gp_tp_rows *r, int c) {
  return gp_tp_rows_type(r, c) == GP_TP_NULL ? NAN : gp_tp_rows_real(r, c);
}

/* Largest first in column col, ties by the name in column 0. */
static int by_col_desc(const void *a, const void *b, void *col) {
  int c = *(const int *)col;
  const gp__rcell *ra = a, *rb = b;
  double x = ra[c].value, y = rb[c].value;
  if (x < y || (isnan(x) && !isnan(y)))
    return 1;
  if (x > y || (isnan(y) && !isnan(x)))
    return -1;
  return gp__report_name_cmp(ra[0].text ? ra[0].text : "",
                             rb[0].text ? rb[0].text : "");
}

/* Sorts t's rows by column col, largest first (ties by name, numbers by
 * value), and keeps the first top; t->cut counts the rest. */
static void sort_top(gp_report_table *t, int col, unsigned top) {
  if (!t->nrows)
    return;
  size_t rowsize = (size_t)t->ncols * sizeof(gp__rcell);
  /* qsort moves whole rows: the cells are one array, ncols per row. */
  char *tmp = malloc(t->nrows * rowsize + 1);
  if (!tmp) {
    *t->oom = true;
    return;
  }
  memcpy(tmp, t->cells, t->nrows * rowsize);
  qsort_r(tmp, t->nrows, rowsize, by_col_desc, &col);
  memcpy(t->cells, tmp, t->nrows * rowsize);
  free(tmp);
  t->cut = t->nrows > top ? t->nrows - top : 0;
  while (t->nrows > top) {
    gp__rcell *row = &t->cells[--t->nrows * (size_t)t->ncols];
    for (int i = 0; i < t->ncols; i++)
      free((char *)row[i].text);
  }
}

/* ------------------------------------------------------------------ */
/* Kernels: count, total, min, median, mean, max, stddev, share         */

typedef struct kstate {
  gp_report_table *t;
  char *name; /* the kernel whose durations are in durs (owned) */
  double *durs;
  size_t n, cap;
  double sum, sumsq;
  double all;
} kstate;

static void kernel_flush(kstate *k) {
  if (!k->n)
    return;
  gp__rcell *row = gp__report_row(k->t);
  if (!row) {
    k->n = 0;
    return;
  }
  gp__report_text(k->t, &row[0], k->name);
  double n = (double)k->n, mean = k->sum / n;
  double var = k->n > 1 ? (k->sumsq - n * mean * mean) / (n - 1) : 0;
  row[1].value = n;
  row[2].value = k->sum;
  row[3].value = k->durs[0];
  row[4].value = k->n % 2 ? k->durs[k->n / 2]
                          : (k->durs[k->n / 2 - 1] + k->durs[k->n / 2]) / 2;
  row[5].value = mean;
  row[6].value = k->durs[k->n - 1];
  row[7].value = var > 0 ? sqrt(var) : 0;
  k->all += k->sum;
  k->n = 0;
  k->sum = k->sumsq = 0;
}

static void kernel_row(gp_tp_rows *r, void *user) {
  kstate *k = user;
  const char *name = text(r, 0);
  double d = gp_tp_rows_real(r, 1);
  if (k->n && strcmp(name, k->name) != 0)
    kernel_flush(k);
  if (!k->n) {
    free(k->name);
    if (!(k->name = strdup(name))) {
      *k->t->oom = true;
      return;
    }
  }
  if (k->n == k->cap) {
    size_t cap = k->cap ? k->cap * 2 : 256;
    double *p = realloc(k->durs, cap * sizeof(double));
    if (!p) {
      *k->t->oom = true;
      return;
    }
    k->durs = p;
    k->cap = cap;
  }
  k->durs[k->n++] = d;
  k->sum += d;
  k->sumsq += d * d;
}

static int kernels(gp_tp *tp, gp_report *r, unsigned top, gp_tp_error *err) {
  static const gp__rcol cols[] = {{"kernel", "kernel", GP_REPORT_TEXT},
                                  {"count", "count", GP_REPORT_INT},
                                  {"total_ns", "total", GP_REPORT_NS},
                                  {"min_ns", "min", GP_REPORT_NS},
                                  {"median_ns", "median", GP_REPORT_NS},
                                  {"mean_ns", "mean", GP_REPORT_NS},
                                  {"max_ns", "max", GP_REPORT_NS},
                                  {"stddev_ns", "stddev", GP_REPORT_NS},
                                  {"share_pct", "share", GP_REPORT_PCT}};
  kstate k;
  memset(&k, 0, sizeof(k));
  k.t = gp__report_add_table(r, "kernels", "Kernels by total time",
                             "share: of all kernel time", 9, cols);
  if (!k.t)
    return 0;
  /* Ordered by name, then duration: each kernel's durations arrive
   * sorted, so the median needs no second sort. */
  int rc = gp__report_each_row(tp,
                               "SELECT name, dur FROM rp_work WHERE is_kernel "
                               "ORDER BY name, dur",
                               kernel_row, &k, err);
  kernel_flush(&k);
  free(k.durs);
  free(k.name);
  for (size_t i = 0; i < k.t->nrows; i++) {
    gp__rcell *row = &k.t->cells[i * 9];
    row[8].value = k.all > 0 ? 100.0 * row[2].value / k.all : 0;
  }
  sort_top(k.t, 2, top);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Copies, API calls, user ranges, overhead                             */

static void grouped_row(gp_tp_rows *r, void *user) {
  gp_report_table *t = user;
  gp__rcell *row = gp__report_row(t);
  for (int c = 0; row && c < t->ncols; c++) {
    if (t->cols[c].kind == GP_REPORT_TEXT)
      gp__report_text(t, &row[c], gp_tp_rows_text(r, c));
    else if (c < gp_tp_rows_columns(r))
      row[c].value = num(r, c);
  }
}

static void copy_bw(gp_report_table *t) {
  for (size_t i = 0; i < t->nrows; i++) {
    gp__rcell *row = &t->cells[i * (size_t)t->ncols];
    row[5].value = row[3].value > 0 ? row[2].value / (row[3].value / 1e9) : NAN;
  }
}

static int host_table(gp_tp *tp, gp_report *r, const char *id,
                      const char *title, const char *note, const char *kind,
                      unsigned top, gp_tp_error *err) {
  static const gp__rcol cols[] = {
      {"name", "name", GP_REPORT_TEXT},    {"count", "count", GP_REPORT_INT},
      {"total_ns", "total", GP_REPORT_NS}, {"min_ns", "min", GP_REPORT_NS},
      {"mean_ns", "mean", GP_REPORT_NS},   {"max_ns", "max", GP_REPORT_NS}};
  gp_report_table *t = gp__report_add_table(r, id, title, note, 6, cols);
  if (!t)
    return 0;
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT name, count(*), sum(dur), min(dur), avg(dur), max(dur) "
           "FROM rp_host WHERE kind = '%s' GROUP BY name",
           kind);
  int rc = gp__report_each_row(tp, sql, grouped_row, t, err);
  sort_top(t, 2, top);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Busy: the union of intervals per group, from rows sorted by group    */

typedef struct bstate {
  gp_report_table *t;
  int64_t lo, hi; /* the window */
  char *key;      /* the group being summed (owned) */
  bool open;
  int64_t cur0, cur1;
  double busy, work, kern, kern_ns, copies;
  int label_cols; /* leading text/int columns copied from the row */
  bool gpu_cols;  /* the gpus table: kernels, copies, kernel time */
} bstate;

static void busy_close_interval(bstate *b) {
  int64_t a = b->cur0 > b->lo ? b->cur0 : b->lo;
  int64_t e = b->cur1 < b->hi ? b->cur1 : b->hi;
  if (e > a)
    b->busy += (double)gp__report_sub_sat(e, a);
}

static void busy_flush(bstate *b) {
  if (!b->open)
    return;
  busy_close_interval(b);
  b->open = false;
  if (*b->t->oom) /* the row may be missing; the report is dropped */
    return;
  gp__rcell *row = &b->t->cells[(b->t->nrows - 1) * (size_t)b->t->ncols];
  int c = b->label_cols;
  if (b->gpu_cols) {
    row[c++].value = b->kern;
    row[c++].value = b->copies;
    row[c++].value = b->kern_ns;
  } else {
    row[c++].value = b->work;
  }
  row[c++].value = b->busy;
  double span = (double)gp__report_sub_sat(b->hi, b->lo);
  row[c].value = span > 0 ? 100.0 * b->busy / span : 0;
}

/* Columns: key, label columns (label_cols of them), ts, dur[, is_kernel,
 * is_copy]. */
static void busy_row(gp_tp_rows *r, void *user) {
  bstate *b = user;
  const char *key = text(r, 0);
  int lc = b->label_cols;
  int64_t ts = gp_tp_rows_int(r, 1 + lc), dur = gp_tp_rows_int(r, 2 + lc);
  int64_t te = gp__report_add_sat(ts, dur);
  if (!b->open || strcmp(key, b->key) != 0) {
    busy_flush(b);
    free(b->key);
    b->key = strdup(key);
    gp__rcell *row = gp__report_row(b->t);
    if (!b->key || !row) {
      *b->t->oom = true;
      return;
    }
    for (int c = 0; c < lc; c++) {
      if (b->t->cols[c].kind == GP_REPORT_TEXT)
        gp__report_text(b->t, &row[c], gp_tp_rows_text(r, 1 + c));
      else
        row[c].value = num(r, 1 + c);
    }
    b->busy = b->work = b->kern = b->kern_ns = b->copies = 0;
    b->cur0 = ts;
    b->cur1 = te;
    b->open = true;
  } else if (ts > b->cur1) {
    busy_close_interval(b);
    b->cur0 = ts;
    b->cur1 = te;
  } else if (te > b->cur1) {
    b->cur1 = te;
  }
  b->work++;
  if (b->gpu_cols) {
    if (gp_tp_rows_int(r, 3 + lc)) {
      b->kern++;
      b->kern_ns += (double)dur;
    }
    if (gp_tp_rows_int(r, 4 + lc))
      b->copies++;
  }
}

static int busy_table(gp_tp *tp, gp_report *r, gp_report_table *t,
                      int label_cols, bool gpu_cols, const char *sql,
                      gp_tp_error *err) {
  if (!t)
    return 0;
  bstate b;
  memset(&b, 0, sizeof(b));
  b.t = t;
  b.lo = r->start;
  b.hi = r->end;
  b.label_cols = label_cols;
  b.gpu_cols = gpu_cols;
  int rc = gp__report_each_row(tp, sql, busy_row, &b, err);
  busy_flush(&b);
  free(b.key);
  return rc;
}

#define GPU_NAME "coalesce(g.name, g.model, 'GPU ' || coalesce(g.gpu, w.ugpu))"

static int gpus_and_queues(gp_tp *tp, gp_report *r, gp_tp_error *err) {
  static const gp__rcol gcols[] = {{"gpu", "gpu", GP_REPORT_INT},
                                   {"name", "name", GP_REPORT_TEXT},
                                   {"kernels", "kernels", GP_REPORT_INT},
                                   {"copies", "copies+fills", GP_REPORT_INT},
                                   {"kernel_ns", "kernel time", GP_REPORT_NS},
                                   {"busy_ns", "busy", GP_REPORT_NS},
                                   {"busy_pct", "busy %", GP_REPORT_PCT}};
  gp_report_table *t =
      gp__report_add_table(r, "gpus", "GPUs",
                           "busy: time with any kernel, copy or fill running, "
                           "overlaps once, as a share of the window",
                           7, gcols);
  int rc = busy_table(tp, r, t, 2, true,
                      "SELECT w.ugpu, coalesce(g.gpu, w.ugpu), " GPU_NAME
                      ", w.ts, w.dur, w.is_kernel, w.is_copy FROM rp_work w "
                      "LEFT JOIN gpu g ON g.id = w.ugpu ORDER BY w.ugpu, w.ts",
                      err);
  if (rc)
    return rc;
  static const gp__rcol qcols[] = {{"gpu", "gpu", GP_REPORT_INT},
                                   {"queue", "queue", GP_REPORT_TEXT},
                                   {"work", "work items", GP_REPORT_INT},
                                   {"busy_ns", "busy", GP_REPORT_NS},
                                   {"busy_pct", "busy %", GP_REPORT_PCT}};
  t = gp__report_add_table(r, "queues", "GPU queues (hardware)", NULL, 5,
                           qcols);
  rc = busy_table(tp, r, t, 2, false,
                  "SELECT w.ugpu || '/' || w.queue, coalesce(g.gpu, w.ugpu), "
                  "w.queue, w.ts, w.dur FROM rp_work w LEFT JOIN gpu g ON "
                  "g.id = w.ugpu ORDER BY w.ugpu, w.queue, w.ts",
                  err);
  if (rc)
    return rc;
  static const gp__rcol scols[] = {{"device", "device", GP_REPORT_TEXT},
                                   {"stream", "stream", GP_REPORT_TEXT},
                                   {"work", "work items", GP_REPORT_INT},
                                   {"busy_ns", "busy", GP_REPORT_NS},
                                   {"busy_pct", "busy %", GP_REPORT_PCT}};
  t = gp__report_add_table(r, "streams", "Streams and command queues (logical)",
                           NULL, 5, scols);
  return busy_table(tp, r, t, 2, false,
                    "SELECT track_id, device, stream, ts, dur FROM rp_stream "
                    "ORDER BY device, stream, track_id, ts",
                    err);
}

/* ------------------------------------------------------------------ */
/* Counters: min, mean, max and the time-weighted mean                  */

typedef struct cstate {
  gp_report_table *t;
  int64_t end;
  int64_t track;
  bool open;
  uint64_t n;
  double min, max, sum, wsum, wdur, last;
  int64_t last_ts;
} cstate;

static void counter_flush(cstate *s) {
  if (!s->open)
    return;
  s->open = false;
  if (*s->t->oom) /* the row may be missing; the report is dropped */
    return;
  if (s->end > s->last_ts) {
    double held = (double)gp__report_sub_sat(s->end, s->last_ts);
    s->wsum += s->last * held;
    s->wdur += held;
  }
  gp__rcell *row = &s->t->cells[(s->t->nrows - 1) * (size_t)s->t->ncols];
  row[3].value = (double)s->n;
  row[4].value = s->min;
  row[5].value = s->sum / (double)s->n;
  row[6].value = s->max;
  row[7].value = s->wdur > 0 ? s->wsum / s->wdur : s->last;
}

/* Columns: track_id, name, gpu, unit, ts, value; by track, then ts. */
static void counter_row(gp_tp_rows *r, void *user) {
  cstate *s = user;
  int64_t track = gp_tp_rows_int(r, 0), ts = gp_tp_rows_int(r, 4);
  double v = gp_tp_rows_real(r, 5);
  if (!s->open || track != s->track) {
    counter_flush(s);
    gp__rcell *row = gp__report_row(s->t);
    if (!row)
      return;
    gp__report_text(s->t, &row[0], gp_tp_rows_text(r, 1));
    row[1].value = num(r, 2);
    gp__report_text(s->t, &row[2], gp_tp_rows_text(r, 3));
    s->track = track;
    s->open = true;
    s->n = 0;
    s->sum = s->wsum = s->wdur = 0;
    s->min = s->max = v;
  } else {
    double held = (double)gp__report_sub_sat(ts, s->last_ts);
    s->wsum += s->last * held;
    s->wdur += held;
  }
  s->min = v < s->min ? v : s->min;
  s->max = v > s->max ? v : s->max;
  s->sum += v;
  s->n++;
  s->last = v;
  s->last_ts = ts;
}

static int counters(gp_tp *tp, gp_report *r, gp_tp_error *err) {
  static const gp__rcol cols[] = {
      {"counter", "counter", GP_REPORT_TEXT},
      {"gpu", "gpu", GP_REPORT_INT},
      {"unit", "unit", GP_REPORT_TEXT},
      {"samples", "samples", GP_REPORT_INT},
      {"min", "min", GP_REPORT_VALUE},
      {"mean", "mean", GP_REPORT_VALUE},
      {"max", "max", GP_REPORT_VALUE},
      {"time_weighted", "time-weighted", GP_REPORT_VALUE}};
  cstate s;
  memset(&s, 0, sizeof(s));
  s.t = gp__report_add_table(
      r, "counters", "Counters",
      "time-weighted: each sample holds until the next one, the "
      "last until the window ends",
      8, cols);
  if (!s.t)
    return 0;
  s.t->unit_col = 2;
  s.end = r->end;
  /* The counter table's index on (track_id, ts) gives this order cheaply. */
  int rc =
      gp__report_each_row(tp,
                          "SELECT track_id, name, gpu, unit, ts, value FROM "
                          "rp_counter WHERE name NOT GLOB 'gpuperf *' "
                          "ORDER BY gpu, name, track_id, ts",
                          counter_row, &s, err);
  counter_flush(&s);
  return rc;
}

/* ------------------------------------------------------------------ */
/* gpuperf's own overhead and what was lost                             */

static void one_int(gp_tp_rows *r, void *user) {
  *(int64_t *)user = gp_tp_rows_int(r, 0);
}

/* gpuperf's own time: its slices ("gpuperf buffer completion"; not the
 * 0 ns "gpuperf host" marker, which names the host and costs nothing),
 * and the trace writer's CPU time from its cumulative counter, one per
 * recorded process: what it grew by in the window. A deterministic trace
 * (gpuperf demo's) holds no real-time figure: the row says "-" and the
 * note why, never 0 ns. */
static int overhead_and_losses(gp_tp *tp, gp_report *r, gp_tp_error *err) {
  static const gp__rcol ocols[] = {{"what", "what", GP_REPORT_TEXT},
                                   {"count", "count", GP_REPORT_INT},
                                   {"total_ns", "total", GP_REPORT_NS}};
  int64_t has_writer = 0;
  int rc = gp__report_each_row(tp,
                               "SELECT EXISTS (SELECT 1 FROM counter_track "
                               "WHERE name = 'gpuperf writer overhead')",
                               one_int, &has_writer, err);
  if (rc)
    return rc;
  gp_report_table *t = gp__report_add_table(
      r, "overhead", "gpuperf's own overhead",
      has_writer ? "time gpuperf spent in the recorded processes; the "
                   "writer's: CPU time over the window, from its own counter"
                 : "time gpuperf spent in the recorded processes; this trace "
                   "has no writer figure (a deterministic trace, as gpuperf "
                   "demo's, holds no real-time values: the demo prints it)",
      3, ocols);
  static const gp__rcol lcols[] = {{"what", "what", GP_REPORT_TEXT},
                                   {"count", "count", GP_REPORT_INT},
                                   {"meaning", "meaning", GP_REPORT_TEXT}};
  if (!t)
    return 0;
  char sql[1024];
  snprintf(sql, sizeof(sql),
           "SELECT name, count(*), sum(dur) FROM rp_host WHERE kind = "
           "'overhead' AND name <> 'gpuperf host' GROUP BY name UNION ALL "
           "SELECT 'gpuperf writer overhead', NULL, sum(v) FROM (SELECT "
           "max(CASE WHEN c.ts <= %lld THEN c.value END) - coalesce(max(CASE "
           "WHEN c.ts < %lld THEN c.value END), 0) AS v FROM counter c JOIN "
           "counter_track t ON c.track_id = t.id WHERE t.name = 'gpuperf "
           "writer overhead' GROUP BY t.id)",
           (long long)r->end, (long long)r->start);
  rc = gp__report_each_row(tp, sql, grouped_row, t, err);
  if (rc || !(t = gp__report_add_table(
                  r, "losses", "Dropped or unusable records", NULL, 3, lcols)))
    return rc;
  return gp__report_each_row(
      tp,
      "SELECT t.name, max(c.value), CASE t.name WHEN 'gpuperf dropped "
      "records' THEN 'records the recording lost (its own count)' ELSE "
      "'GPU work without times (not in the tables above)' END FROM counter c "
      "JOIN counter_track t ON c.track_id = t.id WHERE t.name IN ('gpuperf "
      "dropped records', 'gpuperf untimed GPU work') GROUP BY t.name "
      "UNION ALL SELECT 'gpuperf lost at process death', sum(c.value), "
      "'records processes killed by SIGKILL had not written yet' FROM "
      "counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
      "'gpuperf lost at process death' HAVING count(*) > 0 "
      "UNION ALL SELECT t.name, count(*), 'processes killed by SIGKILL whose "
      "lost records could not be counted (damaged shared memory)' FROM "
      "counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
      "'gpuperf lost at process death, count unknown' HAVING count(*) > 0 "
      "UNION ALL SELECT name, value, description FROM stats WHERE value > 0 "
      "AND severity IN ('data_loss', 'error')",
      grouped_row, t, err);
}

/* See reportInt.h. */
int gp__report_sections(gp_tp *tp, gp_report *r, const gp_report_filter *f,
                        gp_tp_error *err) {
  unsigned top = f->top ? f->top : UINT32_MAX;
  int rc;
  if ((rc = gpus_and_queues(tp, r, err)) || (rc = kernels(tp, r, top, err)))
    return rc;
  static const gp__rcol ccols[] = {{"kind", "copy or fill", GP_REPORT_TEXT},
                                   {"count", "count", GP_REPORT_INT},
                                   {"bytes", "bytes", GP_REPORT_BYTES},
                                   {"total_ns", "total", GP_REPORT_NS},
                                   {"mean_ns", "mean", GP_REPORT_NS},
                                   {"bandwidth", "bandwidth", GP_REPORT_BW}};
  gp_report_table *t = gp__report_add_table(
      r, "copies", "Copies and fills by kind",
      "bandwidth: bytes over the time the copies ran", 6, ccols);
  if (t && (rc = gp__report_each_row(
                tp,
                "SELECT raw_name, count(*), sum(coalesce(bytes, "
                "0)), sum(dur), avg(dur) FROM rp_work WHERE "
                "is_copy GROUP BY raw_name ORDER BY sum(dur) DESC",
                grouped_row, t, err)))
    return rc;
  if (t)
    copy_bw(t);
  if ((rc = host_table(tp, r, "api", "Host API calls",
                       "the application's calls: not user ranges, not "
                       "gpuperf's own work",
                       "api", top, err)) ||
      (rc = host_table(tp, r, "ranges", "User ranges", NULL, "range", top,
                       err)) ||
      (rc = counters(tp, r, err)) || (rc = overhead_and_losses(tp, r, err)))
    return rc;
  return 0;
}
