/*
 * report/report.c - reports as objects: their tables and rows, the views
 * the tables are computed from, window bounds by time or range name, and
 * the public accessors of gpuperf/report.h.
 *
 * Four temporary views narrow the trace to the filter's window, GPU and
 * process; every table reads them (sections.c):
 *
 *   rp_work     GPU work (gpu_slice on gpu_render_stage tracks): ts, dur,
 *               ugpu, queue, name (the short kernel name), raw_name,
 *               is_kernel, is_copy, bytes
 *   rp_host     host slices (not GPU work, not its mirror on "Device #N"
 *               stream tracks): kind 'api' (the application's calls),
 *               'range' (user ranges: a category, or a process-scoped
 *               async track), 'overhead' (gpuperf's own "gpuperf ..."
 *               slices), 'code' (the instants of modules loaded and
 *               functions made: no section counts them)
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

#include "gpuperf/error.h"
#include "reportInt.h"

/* The longest --process name: its SQL literal must fit the views' SQL. */
#define PROCESS_MAX 1000

/* ------------------------------------------------------------------ */
/* Tables                                                               */

/* See reportInt.h. */
gp_report_table *gp__report_add_table(gp_report *r, const char *id,
                                      const char *title, const char *note,
                                      int ncols, const gp__rcol *cols) {
  gp_report_table *t = realloc(r->tabs, (r->ntabs + 1) * sizeof(*t));
  if (!t) {
    r->oom = true;
    return NULL;
  }
  r->tabs = t;
  t = &r->tabs[r->ntabs++];
  memset(t, 0, sizeof(*t));
  t->id = id;
  t->title = title;
  t->note = note;
  t->ncols = ncols;
  t->unit_col = -1;
  t->oom = &r->oom;
  memcpy(t->cols, cols, (size_t)ncols * sizeof(gp__rcol));
  return t;
}

/* See reportInt.h. */
gp__rcell *gp__report_row(gp_report_table *t) {
  if (t->nrows == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 32;
    gp__rcell *c = realloc(t->cells, cap * (size_t)t->ncols * sizeof(*c));
    if (!c) {
      *t->oom = true;
      return NULL;
    }
    t->cells = c;
    t->cap = cap;
  }
  gp__rcell *row = &t->cells[t->nrows++ * (size_t)t->ncols];
  for (int i = 0; i < t->ncols; i++)
    row[i] = (gp__rcell){NAN, NULL};
  return row;
}

/* See reportInt.h. */
void gp__report_text(gp_report_table *t, gp__rcell *c, const char *s) {
  char *copy = strdup(s ? s : "");
  if (!copy) {
    *t->oom = true;
    return;
  }
  free((char *)c->text);
  c->text = copy;
}

/* See reportInt.h. */
int gp__report_name_cmp(const char *a, const char *b) {
  const unsigned char *p = (const unsigned char *)a,
                      *q = (const unsigned char *)b;
  while (*p && *q) {
    if (*p >= '0' && *p <= '9' && *q >= '0' && *q <= '9') {
      while (*p == '0')
        p++;
      while (*q == '0')
        q++;
      size_t m = 0, n = 0;
      while (p[m] >= '0' && p[m] <= '9')
        m++;
      while (q[n] >= '0' && q[n] <= '9')
        n++;
      if (m != n) /* more digits without leading zeros: larger */
        return m < n ? -1 : 1;
      int c = memcmp(p, q, m);
      if (c)
        return c;
      p += m;
      q += n;
      continue;
    }
    if (*p != *q)
      return *p < *q ? -1 : 1;
    p++;
    q++;
  }
  if (*p || *q)
    return *p ? 1 : -1;
  return strcmp(a, b);
}

/* See reportInt.h. */
int gp__report_fail(gp_tp_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    err->code = code;
    err->offset = UINT64_MAX;
  }
  return code;
}

/* See reportInt.h. */
int gp__report_each_row(gp_tp *tp, const char *sql,
                        void (*row)(gp_tp_rows *rows, void *user), void *user,
                        gp_tp_error *err) {
  gp_tp_rows *rows;
  int rc = gp_tp_query(tp, sql, &rows, err);
  if (rc)
    return rc;
  while ((rc = gp_tp_rows_next(rows, err)) == 1)
    if (row)
      row(rows, user);
  gp_tp_rows_destroy(rows);
  return rc < 0 ? rc : 0;
}

/* See reportInt.h. */
int64_t gp__report_sub_sat(int64_t a, int64_t b) {
  if (b < 0 && a > INT64_MAX + b)
    return INT64_MAX;
  if (b > 0 && a < INT64_MIN + b)
    return INT64_MIN;
  return a - b;
}

/* See reportInt.h. */
int64_t gp__report_add_sat(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b)
    return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b)
    return INT64_MIN;
  return a + b;
}

/* ------------------------------------------------------------------ */
/* Filters and views                                                    */

/* See gpuperf/report.h. */
void gp_report_filter_init(gp_report_filter *f) {
  memset(f, 0, sizeof(*f));
  f->size = sizeof(*f);
  f->top = 10;
  f->from = INT64_MIN;
  f->to = INT64_MAX;
  f->gpu = -1;
}

/* Checks f (NULL: the defaults) into *out. */
static int filter_check(const gp_report_filter *f, gp_report_filter *out,
                        gp_tp_error *err) {
  if (!f) {
    gp_report_filter_init(out);
    return 0;
  }
  if (f->size != sizeof(*f))
    return gp__report_fail(err, GP_EINVAL,
                           "gp_report_filter.size is %u, not %zu (set it "
                           "with gp_report_filter_init)",
                           f->size, sizeof(*f));
  if (f->gpu < -1)
    return gp__report_fail(err, GP_EINVAL,
                           "the GPU filter is %" PRId64 ", not -1 or a GPU "
                           "number",
                           f->gpu);
  if (f->process && strlen(f->process) > PROCESS_MAX)
    return gp__report_fail(err, GP_EINVAL,
                           "the process name is longer than %d bytes",
                           PROCESS_MAX);
  *out = *f;
  return 0;
}

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

/* s as an SQL string literal (quotes doubled) into buf, which holds
 * 2 * strlen(s) + 3 bytes. */
static const char *sql_str(char *buf, const char *s) {
  size_t o = 0;
  buf[o++] = '\'';
  for (; *s; s++) {
    if (*s == '\'')
      buf[o++] = '\'';
    buf[o++] = *s;
  }
  buf[o++] = '\'';
  buf[o] = '\0';
  return buf;
}

/* Appends " AND col IN (the processes f->process names)" to sql. */
static void cat_process(char *sql, size_t size, const gp_report_filter *f,
                        const char *col) {
  char lit[2 * PROCESS_MAX + 3];
  char *e;
  long long pid = strtoll(f->process, &e, 10);
  if (*f->process && !*e)
    cat(sql, size, " AND %s IN (SELECT upid FROM process WHERE pid = %lld)",
        col, pid);
  else
    cat(sql, size,
        " AND %s IN (SELECT upid FROM process WHERE name = %s OR "
        "name GLOB '*/' || %s)",
        col, sql_str(lit, f->process), lit);
}

/* The short name of a kernel: the demangled name up to its parameter
 * list, else the mangled name from the args, else the slice's name
 * (Perfetto's gpu_compute_kernel traces name every slice "Kernel"). */
#define KERNEL_NAME                                                            \
  "coalesce(nullif(rtrim(substr(extract_arg(s.arg_set_id, "                    \
  "'kernel_demangled_name'), 1, instr(extract_arg(s.arg_set_id, "              \
  "'kernel_demangled_name') || '(', '(') - 1)), ''), "                         \
  "extract_arg(s.arg_set_id, 'kernel_name'), s.name, '(unnamed)')"

/* The views' SQL for filter f and window [start, stop) into sql. */
static void views_sql(char *sql, size_t size, const gp_report_filter *f,
                      int64_t start, int64_t end, int64_t stop,
                      bool has_compute) {
  cat(sql, size,
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
      " AND s.ts < %" PRId64,
      has_compute ? 0 : 1, start, stop);
  if (f->gpu >= 0)
    cat(sql, size,
        " AND coalesce(extract_arg(t.dimension_arg_set_id, 'ugpu'), 0) "
        "IN (SELECT id FROM gpu WHERE gpu = %" PRId64 ")",
        f->gpu);
  if (f->process)
    cat_process(sql, size, f, "s.upid");
  cat(sql, size,
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_host AS SELECT s.id, s.ts, "
      "max(s.dur, 0) AS dur, s.name, s.category, s.depth, s.track_id, "
      "CASE WHEN s.name GLOB 'gpuperf *' THEN 'overhead' WHEN s.name IN "
      "('GPU module load', 'GPU module unload', 'GPU function') AND s.dur = "
      "0 THEN 'code' WHEN s.category IS NOT NULL OR pt.id IS NOT NULL THEN "
      "'range' ELSE 'api' END AS kind, "
      "coalesce(th.upid, pt.upid) AS upid FROM slice s JOIN track t ON "
      "s.track_id = t.id LEFT JOIN thread_track tt ON tt.id = t.id LEFT JOIN "
      "thread th ON th.utid = tt.utid LEFT JOIN process_track pt ON pt.id = "
      "t.id WHERE t.id NOT IN (SELECT id FROM gpu_track) AND NOT EXISTS "
      "(SELECT 1 FROM track p WHERE p.id = t.parent_id AND p.name GLOB "
      "'Device #*') AND s.name IS NOT NULL AND s.ts >= %" PRId64
      " AND s.ts < %" PRId64,
      start, stop);
  if (f->process)
    cat_process(sql, size, f, "coalesce(th.upid, pt.upid)");
  cat(sql, size,
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_stream AS SELECT s.ts, "
      "max(s.dur, 0) AS dur, p.name AS device, t.name AS stream, t.id AS "
      "track_id FROM slice s JOIN track t ON s.track_id = t.id JOIN track p "
      "ON p.id = t.parent_id WHERE p.name GLOB 'Device #*' AND s.ts >= "
      "%" PRId64 " AND s.ts < %" PRId64,
      start, stop);
  if (f->gpu >= 0)
    cat(sql, size, " AND p.name = 'Device #%" PRId64 "'", f->gpu);
  if (f->process)
    cat_process(sql, size, f,
                "(SELECT upid FROM process_track WHERE id = t.id)");
  cat(sql, size,
      ";\nCREATE OR REPLACE PERFETTO VIEW rp_counter AS SELECT c.ts, c.value, "
      "c.track_id, t.name, t.unit, g.gpu_id AS gpu FROM counter c JOIN "
      "counter_track t ON c.track_id = t.id LEFT JOIN gpu_counter_track g ON "
      "g.id = t.id WHERE c.ts >= %" PRId64 " AND c.ts <= %" PRId64,
      start, end);
  if (f->gpu >= 0)
    cat(sql, size, " AND g.gpu_id = %" PRId64, f->gpu);
  cat(sql, size, ";\nSELECT 1");
}

/* A time of the trace as the window's messages show it: ns from the
 * trace's start ts0, in the unit of its size ("5.000 s", "13.807 ms"). */
static const char *rel_time(char *buf, size_t size, int64_t ts, int64_t ts0) {
  double ns = (double)gp__report_sub_sat(ts, ts0), a = fabs(ns);
  if (a >= 1e9)
    snprintf(buf, size, "%.3f s", ns / 1e9);
  else if (a >= 1e6)
    snprintf(buf, size, "%.3f ms", ns / 1e6);
  else if (a >= 1e3)
    snprintf(buf, size, "%.3f us", ns / 1e3);
  else
    snprintf(buf, size, "%.0f ns", ns);
  return buf;
}

typedef struct gpu_list {
  char text[256];
  bool found;
  int64_t want;
} gpu_list;

static void gpu_row(gp_tp_rows *r, void *user) {
  gpu_list *g = user;
  int64_t n = gp_tp_rows_int(r, 0);
  size_t l = strlen(g->text);
  if (n == g->want)
    g->found = true;
  if (l + 32 < sizeof(g->text))
    snprintf(g->text + l, sizeof(g->text) - l, "%s%" PRId64, l ? ", " : "", n);
  else if (l + 4 < sizeof(g->text) && !strstr(g->text, "..."))
    strcat(g->text, ", ...");
}

/* The GPU numbers the report's filter can select: the gpu table's, the
 * counter tracks', the "Device #N" stream tracks'. */
#define GPU_NUMBERS_SQL                                                        \
  "SELECT DISTINCT n FROM (SELECT gpu AS n FROM gpu WHERE gpu IS NOT NULL "    \
  "UNION SELECT gpu_id FROM gpu_counter_track WHERE gpu_id IS NOT NULL "       \
  "UNION SELECT CAST(substr(name, 9) AS INT) FROM track WHERE name GLOB "      \
  "'Device #[0-9]*') ORDER BY n"

/*
 * An explicit selection that selects nothing is an error, not an empty
 * report: a window that ends before it begins, one wholly outside the
 * trace [ts0, ts1], a GPU the trace does not have. The message names
 * the window (times from the trace's start) and the trace's span, or the
 * GPUs there are. Returns 0 or GP_ERANGE with err filled.
 */
static int selection_check(gp_tp *tp, const gp_report_filter *f, int64_t ts0,
                           int64_t ts1, gp_tp_error *err) {
  char a[48] = "its start", b[48] = "its end", s[48];
  bool from = f->from != INT64_MIN, to = f->to != INT64_MAX;
  if (from)
    rel_time(a, sizeof(a), f->from, ts0);
  if (to)
    rel_time(b, sizeof(b), f->to, ts0);
  if (from && to && f->to <= f->from)
    return gp__report_fail(err, GP_ERANGE,
                           "the window from %s to %s (times from the trace's "
                           "start) is empty: it ends %s it begins",
                           a, b, f->to == f->from ? "where" : "before");
  /* Outside: no time of the trace in it, or only its one last instant. */
  if ((from || to) && ((from && f->from >= ts1) || (to && f->to <= ts0)))
    return gp__report_fail(err, GP_ERANGE,
                           "the window from %s to %s is outside the trace, "
                           "which spans 0 ns to %s (times from its start)",
                           a, b, rel_time(s, sizeof(s), ts1, ts0));
  if (f->gpu < 0)
    return 0;
  gpu_list g = {"", false, f->gpu};
  int rc = gp__report_each_row(tp, GPU_NUMBERS_SQL, gpu_row, &g, err);
  if (rc || g.found)
    return rc;
  if (!g.text[0])
    return gp__report_fail(err, GP_ERANGE,
                           "GPU %" PRId64 " is not in the trace, which has no "
                           "GPUs",
                           f->gpu);
  return gp__report_fail(err, GP_ERANGE,
                         "GPU %" PRId64 " is not in the trace; its GPUs: %s",
                         f->gpu, g.text);
}

/* See gpuperf/report.h. */
int gp_report_views(gp_tp *tp, const gp_report_filter *filter, int64_t *start,
                    int64_t *end, gp_tp_error *err) {
  gp_report_filter f;
  int64_t ts0 = 0, ts1 = 0, has_compute = 0;
  int rc;
  if ((rc = filter_check(filter, &f, err)) ||
      (rc = gp__report_each_row(tp, "SELECT start_ts FROM trace_bounds",
                                one_int, &ts0, err)) ||
      (rc = gp__report_each_row(tp, "SELECT end_ts FROM trace_bounds", one_int,
                                &ts1, err)) ||
      (rc = gp__report_each_row(tp,
                                "SELECT EXISTS (SELECT 1 FROM gpu_slice WHERE "
                                "render_stage_category = 2)",
                                one_int, &has_compute, err)) ||
      (rc = selection_check(tp, &f, ts0, ts1, err)))
    return rc;
  int64_t lo = f.from == INT64_MIN ? ts0 : f.from;
  int64_t hi = f.to == INT64_MAX ? ts1 : f.to;
  if (hi < lo)
    hi = lo;
  /* Work starting at the trace's very end is in a whole-trace window. */
  int64_t stop = hi == ts1 && hi < INT64_MAX ? hi + 1 : hi;
  /* Room for the three quoted process names (PROCESS_MAX each). */
  size_t size = 16384 + 6 * (PROCESS_MAX + 2);
  char *sql = malloc(size);
  if (!sql)
    return gp__report_fail(err, GP_ENOMEM, "out of memory");
  sql[0] = '\0';
  views_sql(sql, size, &f, lo, hi, stop, has_compute != 0);
  if (strlen(sql) + 1 >= size) /* defensive: the limits above make room */
    rc = gp__report_fail(err, GP_ERANGE, "the report's views do not fit");
  else
    rc = gp__report_each_row(tp, sql, NULL, NULL, err);
  free(sql);
  if (!rc) {
    if (start)
      *start = lo;
    if (end)
      *end = hi;
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* Window bounds                                                        */

/* "1.5ms", "200us", "3s", "120ns" or a bare number of ns into *ns. */
static bool parse_time(const char *s, int64_t *ns) {
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

typedef struct range_end {
  bool found;
  int64_t v;
} range_end;

static void range_row(gp_tp_rows *r, void *user) {
  range_end *e = user;
  if (gp_tp_rows_type(r, 0) != GP_TP_NULL) {
    e->found = true;
    e->v = gp_tp_rows_int(r, 0);
  }
}

/* See gpuperf/report.h. */
int gp_report_time(gp_tp *tp, const char *spec, bool end, int64_t *ns,
                   gp_tp_error *err) {
  int64_t t;
  if (!spec)
    return gp__report_fail(err, GP_EINVAL, "no time given");
  if (parse_time(spec, &t)) {
    gp_tp_info info;
    gp_tp_get_info(tp, &info);
    *ns = gp__report_add_sat(info.start_ts, t);
    return 0;
  }
  size_t n = strlen(spec);
  char *sql = malloc(2 * n + 128);
  if (!sql)
    return gp__report_fail(err, GP_ENOMEM, "out of memory");
  int o = snprintf(sql, 64, "SELECT %s FROM slice WHERE name = ",
                   end ? "ts + max(dur, 0)" : "ts");
  sql_str(sql + o, spec);
  strcat(sql, " ORDER BY ts LIMIT 1");
  range_end e = {false, 0};
  int rc = gp__report_each_row(tp, sql, range_row, &e, err);
  free(sql);
  if (rc)
    return rc;
  if (!e.found)
    return gp__report_fail(err, GP_ENOENT,
                           "'%.400s' is neither a time (like 1.5ms) nor the "
                           "name of a range in the trace",
                           spec);
  *ns = e.v;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Reports                                                              */

static void work_span(gp_tp_rows *rows, void *user) {
  gp_report *r = user;
  r->work_start = gp_tp_rows_int(rows, 0);
  r->work_end = gp_tp_rows_int(rows, 1);
}

/* See gpuperf/report.h. */
int gp_report_build(gp_tp *tp, const char *name, const gp_report_filter *filter,
                    gp_report **out, gp_tp_error *err) {
  gp_report_filter f;
  int rc = filter_check(filter, &f, err);
  if (rc)
    return rc;
  gp_report *r = calloc(1, sizeof(*r));
  if (!r || !(r->name = strdup(name ? name : "trace"))) {
    free(r);
    return gp__report_fail(err, GP_ENOMEM, "out of memory");
  }
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  r->trace_bytes = info.trace_bytes;
  if (!(rc = gp_report_views(tp, &f, &r->start, &r->end, err)) &&
      !(rc = gp__report_each_row(tp,
                                 "SELECT coalesce(min(ts), 0), "
                                 "coalesce(max(ts + dur), 0) FROM rp_work",
                                 work_span, r, err)))
    rc = gp__report_sections(tp, r, &f, err);
  if (!rc && r->oom)
    rc = gp__report_fail(err, GP_ENOMEM, "out of memory");
  if (rc) {
    gp_report_destroy(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* See gpuperf/report.h. */
void gp_report_destroy(gp_report *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->ntabs; i++) {
    gp_report_table *t = &r->tabs[i];
    for (size_t c = 0; c < t->nrows * (size_t)t->ncols; c++)
      free((char *)t->cells[c].text);
    free(t->cells);
  }
  free(r->tabs);
  free(r->name);
  free(r);
}

/* See gpuperf/report.h. */
const char *gp_report_name(const gp_report *r) {
  return r->name;
}

/* See gpuperf/report.h. */
uint64_t gp_report_trace_bytes(const gp_report *r) {
  return r->trace_bytes;
}

/* See gpuperf/report.h. */
void gp_report_window(const gp_report *r, int64_t *start, int64_t *end) {
  if (start)
    *start = r->start;
  if (end)
    *end = r->end;
}

/* See gpuperf/report.h. */
size_t gp_report_table_count(const gp_report *r) {
  return r->ntabs;
}

/* See gpuperf/report.h. */
const gp_report_table *gp_report_table_at(const gp_report *r, size_t i) {
  return i < r->ntabs ? &r->tabs[i] : NULL;
}

/* See gpuperf/report.h. */
const gp_report_table *gp_report_table_find(const gp_report *r,
                                            const char *id) {
  for (size_t i = 0; id && i < r->ntabs; i++)
    if (strcmp(r->tabs[i].id, id) == 0)
      return &r->tabs[i];
  return NULL;
}

/* See gpuperf/report.h. */
const char *gp_report_table_id(const gp_report_table *t) {
  return t->id;
}

/* See gpuperf/report.h. */
const char *gp_report_table_title(const gp_report_table *t) {
  return t->title;
}

/* See gpuperf/report.h. */
const char *gp_report_table_note(const gp_report_table *t) {
  return t->note;
}

/* See gpuperf/report.h. */
int gp_report_table_columns(const gp_report_table *t) {
  return t->ncols;
}

/* See gpuperf/report.h. */
const char *gp_report_column_id(const gp_report_table *t, int c) {
  return c >= 0 && c < t->ncols ? t->cols[c].id : NULL;
}

/* See gpuperf/report.h. */
const char *gp_report_column_head(const gp_report_table *t, int c) {
  return c >= 0 && c < t->ncols ? t->cols[c].head : NULL;
}

/* See gpuperf/report.h. */
gp_report_kind gp_report_column_kind(const gp_report_table *t, int c) {
  return c >= 0 && c < t->ncols ? t->cols[c].kind : GP_REPORT_TEXT;
}

/* See gpuperf/report.h. */
int gp_report_table_unit_column(const gp_report_table *t) {
  return t->unit_col;
}

/* See gpuperf/report.h. */
size_t gp_report_table_rows(const gp_report_table *t) {
  return t->nrows;
}

/* See gpuperf/report.h. */
size_t gp_report_table_cut(const gp_report_table *t) {
  return t->cut;
}

/* See gpuperf/report.h. */
const gp_report_cell *gp_report_table_row(const gp_report_table *t, size_t i) {
  return i < t->nrows ? &t->cells[i * (size_t)t->ncols] : NULL;
}
