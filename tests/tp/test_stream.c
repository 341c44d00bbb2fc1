/*
 * test_stream.c - gp_tp_options.stream: the gpu_slice and counter rows
 * handed over while a trace is imported must be, row for row and column
 * for column (NULLs included), those that the tables give after the
 * import, joined as the option's comment says; each exactly once. The
 * expected rows come from SQL on the finished tables, not from the
 * stream's code. The traces: every conformance trace of ../shared (GPU
 * counters backwards- and forwards-looking, render stages with legacy
 * hardware queues named after their first use, GPU logs, Vulkan events,
 * interned specs), the perfetto-truth GPU traces (merged machines) and
 * an OpenCL program's trace; in memory and spilled. A callback that
 * fails stops the import with its code.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "gpuperf/tp.h"
#include "harness.h"

typedef struct lines {
  char **v;
  size_t n, cap;
  size_t machines;
  int fail_after; /* >0: return GP_EIO at that row */
} lines;

static void add(lines *l, char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->v = realloc(l->v, l->cap * sizeof(*l->v));
    ASSERT_NOT_NULL(l->v);
  }
  l->v[l->n++] = s;
}

static void put_i(FILE *f, bool null, int64_t v) {
  if (null)
    fputs("|\\N", f);
  else
    fprintf(f, "|%lld", (long long)v);
}

static void put_s(FILE *f, const char *s) {
  fprintf(f, "|%s", s ? s : "\\N");
}

static int on_row(void *user, const gp_tp_stream_row *r) {
  lines *l = user;
  if (l->fail_after && (int)l->n + 1 >= l->fail_after)
    return GP_EIO;
  if (r->table == GP_TP_STREAM_MACHINE) {
    /* Machines come first, before any other row. */
    ASSERT_EQ(l->n, l->machines);
    l->machines++;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ASSERT_NOT_NULL(f);
  bool ng = r->nulls & GP_TP_STREAM_NULL_GPU;
  switch (r->table) {
  case GP_TP_STREAM_MACHINE:
    fprintf(f, "M|%lld|%lld", (long long)r->id, (long long)r->machine);
    break;
  case GP_TP_STREAM_COUNTER:
    fprintf(f, "C|%lld|%lld|%lld|%.17g|%lld", (long long)r->id,
            (long long)r->ts, (long long)r->track_id, r->value,
            (long long)r->machine);
    break;
  case GP_TP_STREAM_GPU_SLICE:
    fprintf(f, "G|%lld|%lld|%lld|%lld", (long long)r->id, (long long)r->ts,
            (long long)r->dur, (long long)r->track_id);
    put_s(f, r->name);
    put_i(f, r->nulls & GP_TP_STREAM_NULL_CONTEXT_ID, r->context_id);
    put_i(f, r->nulls & GP_TP_STREAM_NULL_SUBMISSION_ID, r->submission_id);
    put_i(f, r->nulls & GP_TP_STREAM_NULL_UPID, r->upid);
    put_i(f, r->nulls & GP_TP_STREAM_NULL_CATEGORY, r->render_stage_category);
    put_s(f, r->track_name);
    fprintf(f, "|%lld", (long long)r->machine);
    put_i(f, ng, r->ugpu);
    put_i(f, ng, r->gpu);
    put_s(f, ng ? NULL : r->gpu_name);
    break;
  default:
    gp_test_fail(__FILE__, __LINE__, "unknown table %u", r->table);
  }
  fclose(f);
  add(l, buf);
  return 0;
}

/* The same rows from SQL after the import, each "P|col|col...". */
static void query(gp_tp *tp, const char *prefix, const char *sql, lines *out) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &rows, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s", err.message);
  int nc = gp_tp_rows_columns(rows);
  while (gp_tp_rows_next(rows, &err) == 1) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_NOT_NULL(f);
    fputs(prefix, f);
    for (int c = 0; c < nc; c++) {
      switch (gp_tp_rows_type(rows, c)) {
      case GP_TP_NULL:
        fputs("|\\N", f);
        break;
      case GP_TP_INT:
        fprintf(f, "|%lld", (long long)gp_tp_rows_int(rows, c));
        break;
      case GP_TP_REAL:
        fprintf(f, "|%.17g", gp_tp_rows_real(rows, c));
        break;
      default:
        fprintf(f, "|%s", gp_tp_rows_text(rows, c));
        break;
      }
    }
    fclose(f);
    add(out, buf);
  }
  gp_tp_rows_destroy(rows);
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_lines(lines *l) {
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
}

/* Streams path's import and compares with the tables; returns the rows. */
static size_t same_rows(const char *path, uint32_t flags) {
  lines got = {0}, want = {0};
  gp_tp_options o;
  memset(&o, 0, sizeof(o));
  o.size = sizeof(o);
  o.flags = flags;
  o.stream = on_row;
  o.stream_user = &got;
  gp_tp *tp = NULL;
  gp_tp_error err;
  if (gp_tp_open(path, &o, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s", err.message);
  query(tp, "M", "SELECT id, raw_id FROM machine", &want);
  query(tp, "C",
        "SELECT c.id, c.ts, c.track_id, c.value, m.raw_id FROM counter c "
        "JOIN counter_track t ON c.track_id = t.id JOIN machine m ON m.id = "
        "t.machine_id",
        &want);
  query(tp, "G",
        "SELECT s.id, s.ts, s.dur, s.track_id, s.name, s.context_id, "
        "s.submission_id, s.upid, s.render_stage_category, t.name, m.raw_id, "
        "g.id, g.gpu, g.name FROM gpu_slice s JOIN gpu_track t ON s.track_id "
        "= t.id JOIN machine m ON m.id = t.machine_id LEFT JOIN gpu g ON g.id "
        "= extract_arg(t.dimension_arg_set_id, 'ugpu')",
        &want);
  gp_tp_close(tp);
  qsort(got.v, got.n, sizeof(*got.v), cmp);
  qsort(want.v, want.n, sizeof(*want.v), cmp);
  for (size_t i = 0; i < got.n && i < want.n; i++)
    if (strcmp(got.v[i], want.v[i]) != 0)
      gp_test_fail(__FILE__, __LINE__,
                   "%s: streamed\n  %s\nbut the tables "
                   "give\n  %s",
                   path, got.v[i], want.v[i]);
  if (got.n != want.n)
    gp_test_fail(__FILE__, __LINE__, "%s: %zu rows streamed, %zu in the tables",
                 path, got.n, want.n);
  size_t n = got.n;
  free_lines(&got);
  free_lines(&want);
  return n;
}

TEST(tp_stream_rows_equal_the_tables) {
  const char *shared = getenv("GPUPERF_SHARED");
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/conformance", shared ? shared : "../shared");
  size_t traces = 0, rows = 0;
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      char path[2048];
      snprintf(path, sizeof(path), "%s/%s/trace.pb", dir, e->d_name);
      if (e->d_name[0] == '.' || access(path, R_OK) != 0)
        continue;
      rows += same_rows(path, 0);
      traces++;
    }
    closedir(d);
  } else {
    printf("%s: absent (no ../shared here), not compared\n", dir);
  }
  static const char *const truth[] = {"demo_3machines_merged.pftrace",
                                      "clpeak_kernel_latency.pftrace",
                                      "vkcube_30.pftrace"};
  for (size_t i = 0; i < sizeof(truth) / sizeof(truth[0]); i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/perfetto-truth/traces/%s",
             shared ? shared : "../shared", truth[i]);
    if (access(path, R_OK) != 0)
      continue;
    rows += same_rows(path, 0);
    rows += same_rows(path, GP_TP_SPILL);
    traces++;
  }
  rows += same_rows("tests/data/systrace/sys_opencl_producer.pftrace", 0);
  traces++;
  printf("%zu traces, %zu rows streamed, each equal to the tables'\n", traces,
         rows);
  ASSERT_GT(rows, 1000);
}

TEST(tp_stream_failure_stops_the_import) {
  lines got = {0};
  got.fail_after = 5;
  gp_tp_options o;
  memset(&o, 0, sizeof(o));
  o.size = sizeof(o);
  o.stream = on_row;
  o.stream_user = &got;
  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_EQ(gp_tp_open("tests/data/systrace/sys_opencl_producer.pftrace", &o,
                       &tp, &err),
            GP_EIO);
  ASSERT(tp == NULL);
  ASSERT(strstr(err.message, "stopped"));
  ASSERT_EQ(got.n, 4);
  free_lines(&got);
}
