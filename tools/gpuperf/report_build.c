/*
 * report_build.c - the sections of `gpuperf report`, computed with the
 * trace processor's SQL and a little C where SQL would be slow or
 * awkward (the union of intervals for "busy", medians).
 *
 * Four temporary views narrow the trace to the command line's window
 * and filters; every section reads them:
 *
 *   rp_work     GPU work (gpu_slice on gpu_render_stage tracks): ts, dur,
 *               ugpu, queue, name (the short kernel name), raw_name,
 *               is_kernel, is_copy, bytes
 *   rp_host     host slices (not GPU work, not its mirror on "Device #N"
 *               stream tracks): kind 'api' (the application's calls),
 *               'range' (user ranges: a category, or a process-scoped
 *               async track),
 *               'overhead' (gpuperf's own "gpuperf ..." slices)
 *   rp_stream   GPU work as mirrored on the logical stream tracks
 *   rp_counter  counter values with their track's name, unit and gpu
 *
 * Work is in the window when it starts in it; busy time is clipped to it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

/* ------------------------------------------------------------------ */
/* Tables                                                               */

/* See report.h. */
rcell *rtable_row(rtable *t) {
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 32;
    rcell *c = realloc(t->cells, cap * (size_t)t->ncols * sizeof(rcell));
    if (!c) {
      fputs("gpuperf: out of memory\n", stderr);
      exit(CLI_BAD_INPUT);
    }
    t->cells = c;
    t->cap = cap;
  }
  rcell *row = &t->cells[t->nrows++ * (size_t)t->ncols];
  for (int i = 0; i < t->ncols; i++)
    row[i] = (rcell){NAN, NULL};
  return row;
}

/* See report.h. */
void rcell_text(rcell *c, const char *s) {
  free(c->s);
  c->s = strdup(s ? s : "");
}

static rtable *add_table(report *r, const char *id, const char *title,
                         const char *note, int ncols, const rcol *cols) {
  rtable *t = realloc(r->tabs, (r->ntabs + 1) * sizeof(rtable));
  if (!t) {
    fputs("gpuperf: out of memory\n", stderr);
    exit(CLI_BAD_INPUT);
  }
  r->tabs = t;
  t = &r->tabs[r->ntabs++];
  memset(t, 0, sizeof(*t));
  t->id = id;
  t->title = title;
  t->note = note;
  t->ncols = ncols;
  t->unit_col = -1;
  memcpy(t->cols, cols, (size_t)ncols * sizeof(rcol));
  return t;
}

static int sort_col;
static int by_col_desc(const void *a, const void *b) {
  double x = ((const rcell *)a)[sort_col].v, y = ((const rcell *)b)[sort_col].v;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Sorts t's rows by column col, largest first, and keeps the first top. */
static void sort_top(rtable *t, int col, unsigned top) {
  if (!t->nrows)
    return;
  sort_col = col;
  size_t rowsize = (size_t)t->ncols * sizeof(rcell);
  /* qsort moves whole rows: the cells are one array, ncols per row. */
  char *tmp = malloc(t->nrows * rowsize + 1);
  if (!tmp)
    return;
  memcpy(tmp, t->cells, t->nrows * rowsize);
  qsort(tmp, t->nrows, rowsize, by_col_desc);
  memcpy(t->cells, tmp, t->nrows * rowsize);
  free(tmp);
  while (t->nrows > top) {
    rcell *row = &t->cells[--t->nrows * (size_t)t->ncols];
    for (int i = 0; i < t->ncols; i++)
      free(row[i].s);
  }
}

/* See report.h. */
rtable *report_table(const report *r, const char *id) {
  for (size_t i = 0; i < r->ntabs; i++)
    if (strcmp(r->tabs[i].id, id) == 0)
      return &r->tabs[i];
  return NULL;
}

/* See report.h. */
void report_free(report *r) {
  for (size_t i = 0; i < r->ntabs; i++) {
    rtable *t = &r->tabs[i];
    for (size_t c = 0; c < t->nrows * (size_t)t->ncols; c++)
      free(t->cells[c].s);
    free(t->cells);
  }
  free(r->tabs);
  free(r->trace);
  memset(r, 0, sizeof(*r));
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

/* See report.h. */
int64_t report_sub_sat(int64_t a, int64_t b) {
  if (b < 0 && a > INT64_MAX + b)
    return INT64_MAX;
  if (b > 0 && a < INT64_MIN + b)
    return INT64_MIN;
  return a - b;
}

static const char *text(gp_tp_rows *r, int c) {
  const char *s = gp_tp_rows_text(r, c);
  return s ? s : "";
}

static double num(gp_tp_rows *r, int c) {
  return gp_tp_rows_type(r, c) == GP_TP_NULL ? NAN : gp_tp_rows_real(r, c);
}

/* ------------------------------------------------------------------ */
/* Views                                                                */

static void one_int(gp_tp_rows *r, void *user) {
  *(int64_t *)user = gp_tp_rows_int(r, 0);
}

/* Appends printf output to a fixed buffer (truncation is checked once). */
static void cat(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t size, const char *fmt, ...) {
  size_t n = strlen(buf);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, n < size ? size - n : 0, fmt, ap);
  va_end(ap);
}

/* s as an SQL string literal (quotes doubled) into buf. */
static const char *sql_str(char *buf, size_t size, const char *s) {
  size_t o = 0;
  if (size < 3)
    return "''";
  buf[o++] = '\'';
  for (; *s && o + 3 < size; s++) {
    if (*s == '\'')
      buf[o++] = '\'';
    buf[o++] = *s;
  }
  buf[o++] = '\'';
  buf[o] = '\0';
  return buf;
}

/* The short name of a kernel: the demangled name up to its parameter
 * list, else the mangled name from the args, else the slice's name
 * (Perfetto's gpu_compute_kernel traces name every slice "Kernel"). */
#define KERNEL_NAME                                                            \
  "coalesce(nullif(rtrim(substr(extract_arg(s.arg_set_id, "                    \
  "'kernel_demangled_name'), 1, instr(extract_arg(s.arg_set_id, "              \
  "'kernel_demangled_name') || '(', '(') - 1)), ''), "                         \
  "extract_arg(s.arg_set_id, 'kernel_name'), s.name, '(unnamed)')"

/* See report.h. */
int report_views(gp_tp *tp, const report_filter *f, int64_t *start,
                 int64_t *end) {
  int64_t ts0 = 0, ts1 = 0, has_compute = 0;
  int rc;
  if ((rc = report_each_row(tp, "report", "SELECT start_ts FROM trace_bounds",
                            one_int, &ts0)) ||
      (rc = report_each_row(tp, "report", "SELECT end_ts FROM trace_bounds",
                            one_int, &ts1)) ||
      (rc = report_each_row(tp, "report",
                            "SELECT EXISTS (SELECT 1 FROM gpu_slice WHERE "
                            "render_stage_category = 2)",
                            one_int, &has_compute)))
    return rc;
  *start = f->from == INT64_MIN ? ts0 : f->from;
  *end = f->to == INT64_MAX ? ts1 : f->to;
  if (*end < *start)
    *end = *start;
  char proc[1200] = "", gpu[200] = "", lit[512];
  if (f->process) {
    char *e;
    long long pid = strtoll(f->process, &e, 10);
    if (*f->process && !*e)
      snprintf(proc, sizeof(proc),
               " AND %%s IN (SELECT upid FROM process WHERE pid = %lld)", pid);
    else
      snprintf(proc, sizeof(proc),
               " AND %%s IN (SELECT upid FROM process WHERE name = %s OR "
               "name GLOB '*/' || %s)",
               sql_str(lit, sizeof(lit), f->process), lit);
  }
  if (f->gpu >= 0)
    snprintf(gpu, sizeof(gpu),
             " AND coalesce(extract_arg(t.dimension_arg_set_id, 'ugpu'), 0) "
             "IN (SELECT id FROM gpu WHERE gpu = %" PRId64 ")",
             f->gpu);
  char where_proc[1400];
  char sql[8192] = "";
  cat(sql, sizeof(sql),
      "CREATE OR REPLACE PERFETTO VIEW rp_work AS SELECT s.id, s.ts, "
      "max(s.dur, 0) AS dur, s.track_id, "
      "coalesce(extract_arg(t.dimension_arg_set_id, 'ugpu'), 0) AS ugpu, "
      "coalesce(t.name, '?') AS queue, s.name AS raw_name, " KERNEL_NAME
      " AS name, (s.name GLOB 'Memcpy*' OR s.name GLOB 'Memset*') AS is_copy, "
      "NOT (s.name GLOB 'Memcpy*' OR s.name GLOB 'Memset*') AND "
      "(s.render_stage_category = 2 OR %d) AS is_kernel, "
      "extract_arg(s.arg_set_id, 'bytes') AS bytes, s.upid, s.arg_set_id "
      "FROM gpu_slice s JOIN gpu_track t ON s.track_id = t.id "
      "WHERE t.type = 'gpu_render_stage' AND s.ts >= %" PRId64
      " AND s.ts < %" PRId64 "%s",
      has_compute ? 0 : 1, *start,
      (*end == ts1 && *end < INT64_MAX ? *end + 1 : *end), gpu);
  if (f->process) {
    snprintf(where_proc, sizeof(where_proc), proc, "s.upid");
    cat(sql, sizeof(sql), "%s", where_proc);
  }
  cat(sql, sizeof(sql),
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_host AS SELECT s.id, s.ts, "
      "max(s.dur, 0) AS dur, s.name, s.category, s.depth, s.track_id, "
      "CASE WHEN s.name GLOB 'gpuperf *' THEN 'overhead' WHEN s.category IS "
      "NOT NULL OR pt.id IS NOT NULL THEN 'range' ELSE 'api' END AS kind, "
      "coalesce(th.upid, pt.upid) AS upid FROM slice s JOIN track t ON "
      "s.track_id = t.id LEFT JOIN thread_track tt ON tt.id = t.id LEFT JOIN "
      "thread th ON th.utid = tt.utid LEFT JOIN process_track pt ON pt.id = "
      "t.id WHERE t.id NOT IN (SELECT id FROM gpu_track) AND NOT EXISTS "
      "(SELECT 1 FROM track p WHERE p.id = t.parent_id AND p.name GLOB "
      "'Device #*') AND s.name IS NOT NULL AND s.ts >= %" PRId64
      " AND s.ts < %" PRId64,
      *start, (*end == ts1 && *end < INT64_MAX ? *end + 1 : *end));
  if (f->process) {
    snprintf(where_proc, sizeof(where_proc), proc,
             "coalesce(th.upid, pt.upid)");
    cat(sql, sizeof(sql), "%s", where_proc);
  }
  cat(sql, sizeof(sql),
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_stream AS SELECT s.ts, "
      "max(s.dur, 0) AS dur, p.name AS device, t.name AS stream, t.id AS "
      "track_id FROM slice s JOIN track t ON s.track_id = t.id JOIN track p "
      "ON p.id = t.parent_id WHERE p.name GLOB 'Device #*' AND s.ts >= "
      "%" PRId64 " AND s.ts < %" PRId64,
      *start, (*end == ts1 && *end < INT64_MAX ? *end + 1 : *end));
  if (f->gpu >= 0)
    cat(sql, sizeof(sql), " AND p.name = 'Device #%" PRId64 "'", f->gpu);
  if (f->process) {
    snprintf(where_proc, sizeof(where_proc), proc,
             "(SELECT upid FROM process_track WHERE id = t.id)");
    cat(sql, sizeof(sql), "%s", where_proc);
  }
  cat(sql, sizeof(sql),
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_counter AS SELECT c.ts, c.value, "
      "c.track_id, t.name, t.unit, g.gpu_id AS gpu FROM counter c JOIN "
      "counter_track t ON c.track_id = t.id LEFT JOIN gpu_counter_track g ON "
      "g.id = t.id WHERE c.ts >= %" PRId64 " AND c.ts <= %" PRId64,
      *start, *end);
  if (f->gpu >= 0)
    cat(sql, sizeof(sql), " AND g.gpu_id = %" PRId64, f->gpu);
  cat(sql, sizeof(sql), ";\nSELECT 1");
  if (strlen(sql) + 1 >= sizeof(sql))
    return cli_error(CLI_USAGE, "report: the --process name is too long");
  return report_each_row(tp, "report", sql, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Kernels: count, total, min, median, mean, max, stddev, share         */

typedef struct kstate {
  rtable *t;
  char name[512];
  double *durs;
  size_t n, cap;
  double sum, sumsq;
  double all;
} kstate;

static void kernel_flush(kstate *k) {
  if (!k->n)
    return;
  rcell *row = rtable_row(k->t);
  rcell_text(&row[0], k->name);
  double n = (double)k->n, mean = k->sum / n;
  double var = k->n > 1 ? (k->sumsq - n * mean * mean) / (n - 1) : 0;
  row[1].v = n;
  row[2].v = k->sum;
  row[3].v = k->durs[0];
  row[4].v = k->n % 2 ? k->durs[k->n / 2]
                      : (k->durs[k->n / 2 - 1] + k->durs[k->n / 2]) / 2;
  row[5].v = mean;
  row[6].v = k->durs[k->n - 1];
  row[7].v = var > 0 ? sqrt(var) : 0;
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
  if (!k->n)
    snprintf(k->name, sizeof(k->name), "%s", name);
  if (k->n == k->cap) {
    size_t cap = k->cap ? k->cap * 2 : 256;
    double *p = realloc(k->durs, cap * sizeof(double));
    if (!p)
      return;
    k->durs = p;
    k->cap = cap;
  }
  k->durs[k->n++] = d;
  k->sum += d;
  k->sumsq += d * d;
}

static int kernels(gp_tp *tp, report *r, unsigned top) {
  static const rcol cols[] = {
      {"kernel", "kernel", RC_TEXT},  {"count", "count", RC_INT},
      {"total_ns", "total", RC_NS},   {"min_ns", "min", RC_NS},
      {"median_ns", "median", RC_NS}, {"mean_ns", "mean", RC_NS},
      {"max_ns", "max", RC_NS},       {"stddev_ns", "stddev", RC_NS},
      {"share_pct", "share", RC_PCT}};
  kstate k;
  memset(&k, 0, sizeof(k));
  k.t = add_table(r, "kernels", "Kernels by total time",
                  "share: of all kernel time", 9, cols);
  /* Ordered by name, then duration: each kernel's durations arrive
   * sorted, so the median needs no second sort. */
  int rc = report_each_row(tp, "report",
                           "SELECT name, dur FROM rp_work WHERE is_kernel "
                           "ORDER BY name, dur",
                           kernel_row, &k);
  kernel_flush(&k);
  free(k.durs);
  for (size_t i = 0; i < k.t->nrows; i++) {
    rcell *row = &k.t->cells[i * 9];
    row[8].v = k.all > 0 ? 100.0 * row[2].v / k.all : 0;
  }
  sort_top(k.t, 2, top);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Copies, API calls, user ranges, overhead                             */

static void grouped_row(gp_tp_rows *r, void *user) {
  rtable *t = user;
  rcell *row = rtable_row(t);
  for (int c = 0; c < t->ncols; c++) {
    if (t->cols[c].kind == RC_TEXT)
      rcell_text(&row[c], gp_tp_rows_text(r, c));
    else if (c < gp_tp_rows_columns(r))
      row[c].v = num(r, c);
  }
}

static void copy_bw(rtable *t) {
  for (size_t i = 0; i < t->nrows; i++) {
    rcell *row = &t->cells[i * (size_t)t->ncols];
    row[5].v = row[3].v > 0 ? row[2].v / (row[3].v / 1e9) : NAN;
  }
}

static int host_table(gp_tp *tp, report *r, const char *id, const char *title,
                      const char *note, const char *kind, unsigned top) {
  static const rcol cols[] = {
      {"name", "name", RC_TEXT},    {"count", "count", RC_INT},
      {"total_ns", "total", RC_NS}, {"min_ns", "min", RC_NS},
      {"mean_ns", "mean", RC_NS},   {"max_ns", "max", RC_NS}};
  rtable *t = add_table(r, id, title, note, 6, cols);
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT name, count(*), sum(dur), min(dur), avg(dur), max(dur) "
           "FROM rp_host WHERE kind = '%s' GROUP BY name ORDER BY sum(dur) "
           "DESC, name LIMIT %u",
           kind, top);
  return report_each_row(tp, "report", sql, grouped_row, t);
}

/* ------------------------------------------------------------------ */
/* Busy: the union of intervals per group, from rows sorted by group    */

typedef struct bstate {
  rtable *t;
  int64_t lo, hi; /* the window */
  char key[512];
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
    b->busy += (double)(e - a);
}

static void busy_flush(bstate *b) {
  if (!b->open)
    return;
  busy_close_interval(b);
  rcell *row = &b->t->cells[(b->t->nrows - 1) * (size_t)b->t->ncols];
  int c = b->label_cols;
  if (b->gpu_cols) {
    row[c++].v = b->kern;
    row[c++].v = b->copies;
    row[c++].v = b->kern_ns;
  } else {
    row[c++].v = b->work;
  }
  row[c++].v = b->busy;
  double span = (double)report_sub_sat(b->hi, b->lo);
  row[c].v = span > 0 ? 100.0 * b->busy / span : 0;
  b->open = false;
}

/* Columns: key, label columns (label_cols of them), ts, dur[, is_kernel,
 * is_copy]. */
static void busy_row(gp_tp_rows *r, void *user) {
  bstate *b = user;
  const char *key = text(r, 0);
  int lc = b->label_cols;
  int64_t ts = gp_tp_rows_int(r, 1 + lc), dur = gp_tp_rows_int(r, 2 + lc);
  int64_t te = dur > INT64_MAX - ts ? INT64_MAX : ts + dur;
  if (!b->open || strcmp(key, b->key) != 0) {
    busy_flush(b);
    snprintf(b->key, sizeof(b->key), "%s", key);
    rcell *row = rtable_row(b->t);
    for (int c = 0; c < lc; c++) {
      if (b->t->cols[c].kind == RC_TEXT)
        rcell_text(&row[c], gp_tp_rows_text(r, 1 + c));
      else
        row[c].v = num(r, 1 + c);
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

static int busy_table(gp_tp *tp, report *r, rtable *t, int label_cols,
                      bool gpu_cols, const char *sql) {
  bstate b;
  memset(&b, 0, sizeof(b));
  b.t = t;
  b.lo = r->start;
  b.hi = r->end;
  b.label_cols = label_cols;
  b.gpu_cols = gpu_cols;
  int rc = report_each_row(tp, "report", sql, busy_row, &b);
  busy_flush(&b);
  return rc;
}

#define GPU_NAME "coalesce(g.name, g.model, 'GPU ' || coalesce(g.gpu, w.ugpu))"

static int gpus_and_queues(gp_tp *tp, report *r) {
  static const rcol gcols[] = {{"gpu", "gpu", RC_INT},
                               {"name", "name", RC_TEXT},
                               {"kernels", "kernels", RC_INT},
                               {"copies", "copies+fills", RC_INT},
                               {"kernel_ns", "kernel time", RC_NS},
                               {"busy_ns", "busy", RC_NS},
                               {"busy_pct", "busy %", RC_PCT}};
  rtable *t = add_table(r, "gpus", "GPUs",
                        "busy: time with any kernel, copy or fill running, "
                        "overlaps once, as a share of the window",
                        7, gcols);
  int rc = busy_table(tp, r, t, 2, true,
                      "SELECT w.ugpu, coalesce(g.gpu, w.ugpu), " GPU_NAME
                      ", w.ts, w.dur, w.is_kernel, w.is_copy FROM rp_work w "
                      "LEFT JOIN gpu g ON g.id = w.ugpu ORDER BY w.ugpu, w.ts");
  if (rc)
    return rc;
  static const rcol qcols[] = {{"gpu", "gpu", RC_INT},
                               {"queue", "queue", RC_TEXT},
                               {"work", "work items", RC_INT},
                               {"busy_ns", "busy", RC_NS},
                               {"busy_pct", "busy %", RC_PCT}};
  t = add_table(r, "queues", "GPU queues (hardware)", NULL, 5, qcols);
  rc = busy_table(tp, r, t, 2, false,
                  "SELECT w.ugpu || '/' || w.queue, coalesce(g.gpu, w.ugpu), "
                  "w.queue, w.ts, w.dur FROM rp_work w LEFT JOIN gpu g ON "
                  "g.id = w.ugpu ORDER BY w.ugpu, w.queue, w.ts");
  if (rc)
    return rc;
  static const rcol scols[] = {{"device", "device", RC_TEXT},
                               {"stream", "stream", RC_TEXT},
                               {"work", "work items", RC_INT},
                               {"busy_ns", "busy", RC_NS},
                               {"busy_pct", "busy %", RC_PCT}};
  t = add_table(r, "streams", "Streams and command queues (logical)", NULL, 5,
                scols);
  return busy_table(tp, r, t, 2, false,
                    "SELECT track_id, device, stream, ts, dur FROM rp_stream "
                    "ORDER BY device, stream, track_id, ts");
}

/* ------------------------------------------------------------------ */
/* Counters: min, mean, max and the time-weighted mean                  */

typedef struct cstate {
  rtable *t;
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
  if (s->end > s->last_ts) {
    s->wsum += s->last * (double)(s->end - s->last_ts);
    s->wdur += (double)(s->end - s->last_ts);
  }
  rcell *row = &s->t->cells[(s->t->nrows - 1) * (size_t)s->t->ncols];
  row[3].v = (double)s->n;
  row[4].v = s->min;
  row[5].v = s->sum / (double)s->n;
  row[6].v = s->max;
  row[7].v = s->wdur > 0 ? s->wsum / s->wdur : s->last;
  s->open = false;
}

/* Columns: track_id, name, gpu, unit, ts, value; by track, then ts. */
static void counter_row(gp_tp_rows *r, void *user) {
  cstate *s = user;
  int64_t track = gp_tp_rows_int(r, 0), ts = gp_tp_rows_int(r, 4);
  double v = gp_tp_rows_real(r, 5);
  if (!s->open || track != s->track) {
    counter_flush(s);
    rcell *row = rtable_row(s->t);
    rcell_text(&row[0], gp_tp_rows_text(r, 1));
    row[1].v = num(r, 2);
    rcell_text(&row[2], gp_tp_rows_text(r, 3));
    s->track = track;
    s->open = true;
    s->n = 0;
    s->sum = s->wsum = s->wdur = 0;
    s->min = s->max = v;
  } else {
    s->wsum += s->last * (double)(ts - s->last_ts);
    s->wdur += (double)(ts - s->last_ts);
  }
  s->min = v < s->min ? v : s->min;
  s->max = v > s->max ? v : s->max;
  s->sum += v;
  s->n++;
  s->last = v;
  s->last_ts = ts;
}

static int counters(gp_tp *tp, report *r) {
  static const rcol cols[] = {{"counter", "counter", RC_TEXT},
                              {"gpu", "gpu", RC_INT},
                              {"unit", "unit", RC_TEXT},
                              {"samples", "samples", RC_INT},
                              {"min", "min", RC_VALUE},
                              {"mean", "mean", RC_VALUE},
                              {"max", "max", RC_VALUE},
                              {"time_weighted", "time-weighted", RC_VALUE}};
  cstate s;
  memset(&s, 0, sizeof(s));
  s.t = add_table(r, "counters", "Counters",
                  "time-weighted: each sample holds until the next one, the "
                  "last until the window ends",
                  8, cols);
  s.t->unit_col = 2;
  s.end = r->end;
  /* The counter table's index on (track_id, ts) gives this order cheaply. */
  int rc = report_each_row(tp, "report",
                           "SELECT track_id, name, gpu, unit, ts, value FROM "
                           "rp_counter WHERE name NOT GLOB 'gpuperf *' "
                           "ORDER BY gpu, name, track_id, ts",
                           counter_row, &s);
  counter_flush(&s);
  return rc;
}

/* ------------------------------------------------------------------ */
/* gpuperf's own overhead and what was lost                             */

static int overhead_and_losses(gp_tp *tp, report *r) {
  static const rcol ocols[] = {{"what", "what", RC_TEXT},
                               {"count", "count", RC_INT},
                               {"total_ns", "total", RC_NS}};
  rtable *t = add_table(r, "overhead", "gpuperf's own overhead",
                        "time gpuperf spent in the recorded process", 3, ocols);
  int rc = report_each_row(
      tp, "report",
      "SELECT name, count(*), sum(dur) FROM rp_host WHERE kind = 'overhead' "
      "GROUP BY name UNION ALL SELECT t.name, count(*), max(c.value) FROM "
      "counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
      "'gpuperf writer overhead' GROUP BY t.name",
      grouped_row, t);
  if (rc)
    return rc;
  static const rcol lcols[] = {{"what", "what", RC_TEXT},
                               {"count", "count", RC_INT},
                               {"meaning", "meaning", RC_TEXT}};
  t = add_table(r, "losses", "Dropped or unusable records", NULL, 3, lcols);
  return report_each_row(
      tp, "report",
      "SELECT t.name, max(c.value), CASE t.name WHEN 'gpuperf dropped "
      "records' THEN 'records the recording lost (its own count)' ELSE "
      "'GPU work without times (not in the tables above)' END FROM counter c "
      "JOIN counter_track t ON c.track_id = t.id WHERE t.name IN ('gpuperf "
      "dropped records', 'gpuperf untimed GPU work') GROUP BY t.name "
      "UNION ALL SELECT 'gpuperf lost at process death', sum(c.value), "
      "'records processes killed by SIGKILL had not written yet' FROM "
      "counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
      "'gpuperf lost at process death' HAVING count(*) > 0 "
      "UNION ALL SELECT name, value, description FROM stats WHERE value > 0 "
      "AND severity IN ('data_loss', 'error')",
      grouped_row, t);
}

/* See report.h. */
int report_build(gp_tp *tp, const char *trace, const report_filter *f,
                 report *r) {
  memset(r, 0, sizeof(*r));
  r->trace = strdup(trace);
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  r->trace_bytes = info.trace_bytes;
  int rc;
  if ((rc = report_views(tp, f, &r->start, &r->end)) ||
      (rc = gpus_and_queues(tp, r)) || (rc = kernels(tp, r, f->top)))
    return rc;
  static const rcol ccols[] = {
      {"kind", "copy or fill", RC_TEXT}, {"count", "count", RC_INT},
      {"bytes", "bytes", RC_BYTES},      {"total_ns", "total", RC_NS},
      {"mean_ns", "mean", RC_NS},        {"bandwidth", "bandwidth", RC_BW}};
  rtable *t =
      add_table(r, "copies", "Copies and fills by kind",
                "bandwidth: bytes over the time the copies ran", 6, ccols);
  if ((rc = report_each_row(tp, "report",
                            "SELECT raw_name, count(*), sum(coalesce(bytes, "
                            "0)), sum(dur), avg(dur) FROM rp_work WHERE "
                            "is_copy GROUP BY raw_name ORDER BY sum(dur) DESC",
                            grouped_row, t)))
    return rc;
  copy_bw(t);
  if ((rc = host_table(tp, r, "api", "Host API calls",
                       "the application's calls: not user ranges, not "
                       "gpuperf's own work",
                       "api", f->top)) ||
      (rc =
           host_table(tp, r, "ranges", "User ranges", NULL, "range", f->top)) ||
      (rc = counters(tp, r)) || (rc = overhead_and_losses(tp, r)))
    return rc;
  return 0;
}
