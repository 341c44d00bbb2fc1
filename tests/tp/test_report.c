/*
 * test_report.c - `gpuperf report` section by section on three kinds of
 * trace (the demo's, an OpenCL recording, Perfetto's gpu_compute_kernel
 * test trace), every number checked against one recomputed here from
 * SQL; the HTML report in headless Chromium; and each error case as a
 * user meets it (one line, the documented exit status, input untouched).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"
#include "tp/tputil.h"

static int lines(const char *s) {
  int n = 0;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

/* The numbers after prefix on its CSV line (at most max). Asserts the
 * line is there. Text fields after the prefix are skipped as NaN. */
static int csv_nums(const char *csv, const char *prefix, double *v, int max) {
  const char *p = csv;
  size_t n = strlen(prefix);
  while (p && strncmp(p, prefix, n) != 0) {
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
  if (!p)
    fprintf(stderr, "no CSV line starting %s\n", prefix);
  ASSERT_NOT_NULL(p);
  p += n;
  int k = 0;
  while (k < max && *p && *p != '\n') {
    if (*p == '"') {
      p = strchr(p + 1, '"');
      p++;
      v[k++] = NAN;
    } else {
      char *e;
      v[k++] = strtod(p, &e);
      p = e;
    }
    if (*p == ',')
      p++;
  }
  return k;
}

static bool near(double a, double b) {
  return fabs(a - b) <= 1e-6 * fabs(b) + 1e-3;
}

static double sql_num(gp_tp *tp, const char *sql) {
  gp_tp_rows *r;
  gp_tp_error err;
  ASSERT_EQ(gp_tp_query(tp, sql, &r, &err), 0);
  ASSERT_EQ(gp_tp_rows_next(r, &err), 1);
  double v = gp_tp_rows_real(r, 0);
  gp_tp_rows_destroy(r);
  return v;
}

/* The union of [ts, ts + dur) of sql's rows (ts, dur ordered by ts). */
static double sql_union(gp_tp *tp, const char *sql) {
  gp_tp_rows *r;
  gp_tp_error err;
  ASSERT_EQ(gp_tp_query(tp, sql, &r, &err), 0);
  double busy = 0;
  int64_t s = 0, e = 0;
  bool open = false;
  while (gp_tp_rows_next(r, &err) == 1) {
    int64_t ts = gp_tp_rows_int(r, 0), te = ts + gp_tp_rows_int(r, 1);
    if (!open || ts > e) {
      busy += open ? (double)(e - s) : 0;
      s = ts;
      e = te;
      open = true;
    } else if (te > e) {
      e = te;
    }
  }
  gp_tp_rows_destroy(r);
  return busy + (open ? (double)(e - s) : 0);
}

/* Checks the kernels, copies and GPUs sections of csv against trace. */
static void check_gpu_sections(gp_tp *tp, const char *csv) {
  gp_tp_rows *r;
  gp_tp_error err;
  /* Every kernel: count, total, min, max, mean recomputed. */
  ASSERT_EQ(
      gp_tp_query(tp,
                  "SELECT coalesce(nullif(rtrim(substr(d, 1, instr(d "
                  "|| '(', '(') - 1)), ''), k, name), count(*), "
                  "sum(dur), min(dur), max(dur), avg(dur) FROM (SELECT "
                  "s.*, extract_arg(arg_set_id, 'kernel_demangled_name') "
                  "d, extract_arg(arg_set_id, 'kernel_name') k FROM "
                  "gpu_slice s WHERE render_stage_category = 2) GROUP BY 1",
                  &r, &err),
      0);
  int kernels = 0;
  while (gp_tp_rows_next(r, &err) == 1) {
    char prefix[300];
    snprintf(prefix, sizeof(prefix), "kernels,\"%s\",", gp_tp_rows_text(r, 0));
    double v[8];
    ASSERT_EQ(csv_nums(csv, prefix, v, 8), 8);
    ASSERT(near(v[0], gp_tp_rows_real(r, 1)));
    ASSERT(near(v[1], gp_tp_rows_real(r, 2)));
    ASSERT(near(v[2], gp_tp_rows_real(r, 3)));
    ASSERT(near(v[5], gp_tp_rows_real(r, 4)));
    ASSERT(near(v[4], gp_tp_rows_real(r, 5)));
    ASSERT(v[2] <= v[3] && v[3] <= v[5]); /* min <= median <= max */
    kernels++;
  }
  gp_tp_rows_destroy(r);
  ASSERT(kernels > 0);
  /* Copies and fills by kind: count, bytes, time. */
  ASSERT_EQ(gp_tp_query(tp,
                        "SELECT name, count(*), sum(coalesce(extract_arg("
                        "arg_set_id, 'bytes'), 0)), sum(dur) FROM gpu_slice "
                        "WHERE name GLOB 'Memcpy*' OR name GLOB 'Memset*' "
                        "GROUP BY name",
                        &r, &err),
            0);
  while (gp_tp_rows_next(r, &err) == 1) {
    char prefix[300];
    snprintf(prefix, sizeof(prefix), "copies,\"%s\",", gp_tp_rows_text(r, 0));
    double v[5];
    ASSERT_EQ(csv_nums(csv, prefix, v, 5), 5);
    ASSERT(near(v[0], gp_tp_rows_real(r, 1)));
    ASSERT(near(v[1], gp_tp_rows_real(r, 2)));
    ASSERT(near(v[2], gp_tp_rows_real(r, 3)));
    if (v[2] > 0)
      ASSERT(near(v[4], v[1] / (v[2] / 1e9)));
  }
  gp_tp_rows_destroy(r);
  /* Busy per GPU: the union of all its work, as a share of the trace. */
  ASSERT_EQ(gp_tp_query(tp, "SELECT id, gpu FROM gpu", &r, &err), 0);
  double span = sql_num(tp, "SELECT end_ts - start_ts FROM trace_bounds");
  while (gp_tp_rows_next(r, &err) == 1) {
    char sql[512], prefix[64];
    snprintf(sql, sizeof(sql),
             "SELECT s.ts, s.dur FROM gpu_slice s JOIN gpu_track t ON "
             "s.track_id = t.id WHERE t.type = 'gpu_render_stage' AND "
             "coalesce(extract_arg(t.dimension_arg_set_id, 'ugpu'), 0) = "
             "%lld ORDER BY s.ts",
             (long long)gp_tp_rows_int(r, 0));
    double busy = sql_union(tp, sql);
    snprintf(prefix, sizeof(prefix), "gpus,%lld,",
             (long long)gp_tp_rows_int(r, 1));
    double v[6];
    ASSERT_EQ(csv_nums(csv, prefix, v, 6), 6);
    ASSERT(near(v[4], busy));
    ASSERT(near(v[5], 100.0 * busy / span));
  }
  gp_tp_rows_destroy(r);
}

TEST(report_sections_on_demo) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "3", "-o", trace, NULL),
            0);
  ASSERT_STR_EQ(out, ""); /* -q: no summary */
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", "--top",
                   "100", NULL),
            0);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  check_gpu_sections(tp, out);
  /* Host API calls: the application's only. */
  double v[8];
  csv_nums(out, "api,\"gp_sim_launch\",", v, 5);
  ASSERT(near(v[0], sql_num(tp, "SELECT count(*) FROM slice WHERE name = "
                                "'gp_sim_launch'")));
  ASSERT(near(v[1], sql_num(tp, "SELECT sum(dur) FROM slice WHERE name = "
                                "'gp_sim_launch'")));
  ASSERT(strstr(out, "api,\"training step") == NULL);
  ASSERT(strstr(out, "api,\"gpuperf") == NULL);
  ASSERT(strstr(out, "api,\"matmul") == NULL);
  csv_nums(out, "ranges,\"training step 2\",", v, 5);
  ASSERT(near(v[1], sql_num(tp, "SELECT dur FROM slice WHERE name = "
                                "'training step 2'")));
  /* Streams: one row per logical stream of each device. */
  ASSERT(strstr(out, "streams,\"Device #0\",\"Stream #2 (compute)\",18,") !=
         NULL);
  ASSERT(strstr(out, "streams,\"Device #1\",\"Stream #3 (copy)\",6,") != NULL);
  /* Counters: min, mean, max from SQL. */
  csv_nums(out, "counters,\"Utilization\",0,\"%\",", v, 5);
  ASSERT(near(v[0], 11));
  const char *q = "FROM counter c JOIN gpu_counter_track t ON c.track_id = "
                  "t.id WHERE t.name = 'Utilization' AND t.gpu_id = 0";
  char sql[256];
  snprintf(sql, sizeof(sql), "SELECT min(value) %s", q);
  ASSERT(near(v[1], sql_num(tp, sql)));
  snprintf(sql, sizeof(sql), "SELECT avg(value) %s", q);
  ASSERT(near(v[2], sql_num(tp, sql)));
  snprintf(sql, sizeof(sql), "SELECT max(value) %s", q);
  ASSERT(near(v[3], sql_num(tp, sql)));
  ASSERT(strstr(out, "losses,\"gpuperf dropped records\",0,") != NULL);
  gp_tp_close(tp);
  free(out);
  free(err);
  /* Text: human units, no scientific notation, the busy definition. */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, NULL), 0);
  ASSERT(strstr(out, "e+0") == NULL);
  ASSERT(strstr(out, " MiB") != NULL);
  ASSERT(strstr(out, "busy: time with any kernel, copy or fill running") !=
         NULL);
  free(out);
  free(err);
  /* The demo's own busy column says the same as the report's. */
  ASSERT_EQ(tp_cli(&out, &err, "demo", "--steps", "3", "-o", trace, NULL), 0);
  char *rep, *rerr;
  ASSERT_EQ(tp_cli(&rep, &rerr, "report", trace, "--format", "csv", NULL), 0);
  csv_nums(rep, "gpus,0,", v, 6);
  char pct[32];
  snprintf(pct, sizeof(pct), "%.1f%%", v[5]);
  ASSERT(strstr(out, pct) != NULL);
  free(rep);
  free(rerr);
  free(out);
  free(err);
  /* JSON has the same sections. */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "json", NULL), 0);
  ASSERT(strstr(out, "\"kernels\": [") != NULL);
  ASSERT(strstr(out, "\"kernel\": \"matmul_kernel\", \"count\": 6,") != NULL);
  free(out);
  free(err);
}

TEST(report_window_and_filters) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "3", "-o", trace, NULL),
            0);
  free(out);
  free(err);
  /* One training step by name: 6 matmul_kernel launches per step over 2
   * GPUs is 2 (forward) per step. */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", "--from",
                   "training step 2", "--to", "training step 2", NULL),
            0);
  double v[8];
  csv_nums(out, "kernels,\"matmul_kernel\",", v, 8);
  ASSERT(near(v[0], 2));
  ASSERT(strstr(out, "ranges,\"training step 1\"") == NULL);
  ASSERT(strstr(out, "ranges,\"training step 2\",1,") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", "--gpu", "1",
                   NULL),
            0);
  ASSERT(strstr(out, "gpus,1,") != NULL);
  ASSERT(strstr(out, "gpus,0,") == NULL);
  csv_nums(out, "kernels,\"matmul_kernel\",", v, 8);
  ASSERT(near(v[0], 3));
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--process", "nosuchprocess",
                   "--format", "csv", NULL),
            0);
  ASSERT(strstr(out, "\nkernels,") == NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--from", "10ms", "--to",
                   "no such range", NULL),
            1);
  ASSERT_EQ(lines(err), 1);
  ASSERT(strstr(err, "no such range") != NULL);
  free(out);
  free(err);
}

/* A selection that selects nothing is an error (exit 2) whose one line
 * names the window and the trace's span (read here with SQL), or the
 * GPUs the trace has; before, each gave empty sections and exit 0. */
TEST(report_empty_selections) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "-o", trace, NULL), 0);
  free(out);
  free(err);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  char span[64], gpus[64];
  snprintf(span, sizeof(span), "spans 0 ns to %.3f ms",
           sql_num(tp, "SELECT end_ts - start_ts FROM trace_bounds") / 1e6);
  int64_t ngpus = tp_int(tp, "SELECT count(*) FROM gpu");
  ASSERT(ngpus >= 1 && ngpus < 7);
  snprintf(gpus, sizeof(gpus), "its GPUs:");
  for (int64_t i = 0; i < ngpus; i++) {
    char sql[96];
    snprintf(sql, sizeof(sql),
             "SELECT gpu FROM gpu ORDER BY gpu LIMIT 1 "
             "OFFSET %d",
             (int)i);
    size_t l = strlen(gpus);
    snprintf(gpus + l, sizeof(gpus) - l, "%s %d", i ? "," : "",
             (int)tp_int(tp, sql));
  }
  gp_tp_close(tp);
  const struct {
    const char *a[4], *says[2];
  } cases[] = {
      {{"--from", "5s"}, {"from 5.000 s to its end is outside", span}},
      {{"--from", "10ms", "--to", "2ms"},
       {"from 10.000 ms to 2.000 ms", "ends before it begins"}},
      {{"--to", "0"}, {"from its start to 0 ns is outside", span}},
      {{"--gpu", "7"}, {"GPU 7 is not in the trace", gpus}},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const char *const *a = cases[i].a;
    ASSERT_EQ(tp_cli(&out, &err, "report", trace, a[0], a[1], a[2], a[3], NULL),
              2);
    if (!strstr(err, cases[i].says[0]) || !strstr(err, cases[i].says[1]))
      fprintf(stderr, "case %zu said: %s", i, err);
    ASSERT(strstr(err, cases[i].says[0]) != NULL);
    ASSERT(strstr(err, cases[i].says[1]) != NULL);
    ASSERT_EQ(lines(err), 1);
    ASSERT_STR_EQ(out, "");
    free(out);
    free(err);
  }
  /* The HTML page is not written for an empty selection either. */
  const char *html = gp_test_path(1, "r.html");
  ASSERT_EQ(
      tp_cli(&out, &err, "report", trace, "--gpu", "2", "--html", html, NULL),
      2);
  ASSERT(access(html, F_OK) != 0);
  free(out);
  free(err);
  /* A window that only overlaps the trace still reports. */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--from", "13ms", "--to", "20s",
                   "--format", "csv", NULL),
            0);
  free(out);
  free(err);
}

/* The rows of section sec in CSV text. */
static int csv_rows(const char *csv, const char *sec) {
  char pre[64];
  int n = 0;
  snprintf(pre, sizeof(pre), "\n%s,", sec);
  for (const char *p = csv; (p = strstr(p, pre)); p++)
    n++;
  return n;
}

/* Rankings are not silently cut: CSV and JSON have every row unless
 * --top says, --top 0 is every row in each format, and text says how
 * many it left out. Ties are ordered by name with numbers by value.
 * Units scale: a counter in kHz reads in GHz, bandwidth in GiB/s, both
 * against SQL on the trace. */
TEST(report_rows_units_and_order) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "-o", trace, NULL), 0);
  free(out);
  free(err);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  int ranges = (int)sql_num(tp, "SELECT count(DISTINCT name) FROM slice "
                                "WHERE category IS NOT NULL");
  ASSERT_EQ(ranges, 12); /* 10 training steps, forward, backward */
  char ghz[64], gib[64];
  snprintf(ghz, sizeof(ghz), " %.3f GHz\n",
           sql_num(tp, "SELECT max(value) FROM counter c JOIN counter_track "
                       "t ON c.track_id = t.id WHERE t.name = 'gpufreq'") *
               1e3 / 1e9);
  snprintf(gib, sizeof(gib), " %.1f GiB/s\n",
           sql_num(tp, "SELECT sum(extract_arg(arg_set_id, 'bytes')) * 1e9 / "
                       "sum(dur) FROM gpu_slice WHERE name = 'Memcpy HtoD'") /
               1073741824.0);
  gp_tp_close(tp);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", NULL), 0);
  ASSERT_EQ(csv_rows(out, "ranges"), ranges);
  /* "training step 2" before "training step 10". */
  char *s2 = strstr(out, "\"training step 2\""),
       *s10 = strstr(out, "\"training step 10\"");
  ASSERT(s2 && s10 && s2 < s10);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", "--top", "3",
                   NULL),
            0);
  ASSERT_EQ(csv_rows(out, "ranges"), 3);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "json", NULL), 0);
  ASSERT(strstr(out, "\"left_out\": {}") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "json", "--top",
                   "4", NULL),
            0);
  ASSERT(strstr(out, "\"ranges\": 8") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, NULL), 0);
  ASSERT(strstr(out, "  (2 more not shown; --top 0 shows all)\n") != NULL);
  ASSERT(strstr(out, ghz) != NULL);
  ASSERT(strstr(out, gib) != NULL);
  ASSERT(strstr(out, " M KHz") == NULL && strstr(out, " M kHz") == NULL);
  s2 = strstr(out, "  training step 2 ");
  s10 = strstr(out, "  training step 10 ");
  ASSERT(s2 && s10 && s2 < s10);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--top", "0", NULL), 0);
  ASSERT(strstr(out, "  backward ") != NULL);
  ASSERT(strstr(out, "more not shown") == NULL);
  free(out);
  free(err);
}

/* Perfetto's own test trace: names from the kernel_name args, the GPU
 * named although the trace gives no name. */
TEST(report_sections_on_gpu_compute_kernel) {
  const char *sh = tp_shared();
  if (!sh)
    SKIP("GPUPERF_SHARED is not set (the conformance traces live there)");
  char trace[512];
  snprintf(trace, sizeof(trace), "%s/conformance/gpu_compute_kernel/trace.pb",
           sh);
  if (access(trace, R_OK) != 0)
    SKIP("%s is not there", trace);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", NULL), 0);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  check_gpu_sections(tp, out);
  gp_tp_close(tp);
  ASSERT(strstr(out, "kernels,\"vectorAdd\",2,") != NULL);
  ASSERT(strstr(out, "kernels,\"matMul\",1,") != NULL);
  ASSERT(strstr(out, "\"Kernel\"") == NULL);
  ASSERT(strstr(out, "gpus,0,\"GPU 0\",3,0,") != NULL);
  free(out);
  free(err);
}

/* An OpenCL recording of the sample: queues and copies by kind. */
TEST(report_sections_on_opencl) {
#if GP_TEST_SANITIZED
  SKIP("a sanitizer build of gpuperf does not preload its OpenCL library");
#endif
  char sample[512];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)) ||
      access(sample, X_OK) != 0)
    SKIP("the OpenCL sample is not built");
  ocl_env();
  const char *trace = gp_test_path(0, "ocl.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "record", "-q", "-o", trace, "--", sample, NULL),
            0);
  free(out);
  free(err);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  if (sql_num(tp, "SELECT count(*) FROM gpu_slice") == 0) {
    gp_tp_close(tp);
    SKIP("no OpenCL work recorded (no device, or a sanitizer build that "
         "does not preload the OpenCL library)");
  }
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", "--top",
                   "1000", NULL),
            0);
  check_gpu_sections(tp, out);
  /* The sample's three command queues are three stream rows. */
  int streams = 0;
  for (const char *p = out; (p = strstr(p, "\nstreams,\"Device")); p++)
    streams++;
  ASSERT_EQ(streams, 3);
  double v[5];
  csv_nums(out, "api,\"clEnqueueNDRangeKernel\",", v, 5);
  ASSERT(near(v[0], sql_num(tp, "SELECT count(*) FROM slice WHERE name = "
                                "'clEnqueueNDRangeKernel'")));
  ASSERT(strstr(out, "api,\"gpuperf buffer completion\"") == NULL);
  gp_tp_close(tp);
  free(out);
  free(err);
}

/* A clpeak recording (its transfer-bandwidth and kernel-latency tests):
 * copies by kind are the largest GPU work, and every section agrees
 * with SQL. */
TEST(report_sections_on_clpeak) {
#if GP_TEST_SANITIZED
  SKIP("a sanitizer build of gpuperf does not preload its OpenCL library");
#endif
  const char *clpeak = "/usr/bin/clpeak";
  if (access(clpeak, X_OK) != 0)
    SKIP("clpeak is not installed (scripts/install-deps.sh installs it)");
  ocl_env();
  const char *trace = gp_test_path(0, "clpeak.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "record", "-q", "-o", trace, "--", clpeak,
                   "--transfer-bandwidth", "--kernel-latency", NULL),
            0);
  free(out);
  free(err);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--format", "csv", NULL), 0);
  check_gpu_sections(tp, out);
  double v[5];
  csv_nums(out, "copies,\"Memcpy HtoD\",", v, 5);
  ASSERT(v[0] > 0 && v[1] > 0);
  ASSERT(strstr(out, "api,\"clEnqueueWriteBuffer\",") != NULL);
  ASSERT(strstr(out, "api,\"gpuperf") == NULL);
  gp_tp_close(tp);
  free(out);
  free(err);
}
