/*
 * test_cli.c - `gpuperf query` and `gpuperf report` as a user runs them:
 * options, formats, exit statuses and messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

/* Two GPUs, two queues each, kernels and copies, API calls, counters. */
static void write_trace(const char *path) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 0, 9, 0);
  gp__pb_begin(&t.w, 128);
  for (int g = 0; g < 2; g++) {
    gp__pb_begin(&t.w, 1);
    gp__pb_string(&t.w, 1, g ? "GPU B" : "GPU A");
    gp__pb_end(&t.w);
  }
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 1, 1, 1);
  gp__pb_begin(&t.w, 12);
  const char *specs[] = {"compute", "copy", "kernel", "memcpy"};
  for (int i = 0; i < 4; i++) {
    gp__pb_begin(&t.w, 24);
    gp__pb_uint(&t.w, 1, (uint64_t)i + 1);
    gp__pb_string(&t.w, 2, specs[i]);
    gp__pb_uint(&t.w, 4, i == 2 ? 2 : 0);
    gp__pb_end(&t.w);
  }
  gp__pb_end(&t.w);
  tg_end(&t);
  /* GPU A: kernels [100,200) and [150,250) overlap on two queues (busy
   * 150), a copy [300,350). GPU B: one kernel [100,400). */
  const struct {
    uint64_t ts, dur;
    int gpu, queue, stage;
    const char *name;
  } s[] = {{100, 100, 0, 1, 3, "gemm"},
           {100, 300, 1, 1, 3, "gemm"},
           {150, 100, 0, 2, 3, "relu"},
           {300, 50, 0, 2, 4, "h2d"}};
  for (int i = 0; i < 4; i++) {
    tg_packet(&t, s[i].ts, 1, 2);
    gp__pb_begin(&t.w, 53);
    gp__pb_uint(&t.w, 1, (uint64_t)i + 1);
    gp__pb_uint(&t.w, 2, s[i].dur);
    gp__pb_int(&t.w, 11, s[i].gpu);
    gp__pb_uint(&t.w, 13, (uint64_t)s[i].queue);
    gp__pb_uint(&t.w, 14, (uint64_t)s[i].stage);
    gp__pb_string(&t.w, 17, s[i].name);
    gp__pb_end(&t.w);
    tg_end(&t);
  }
  /* API calls on the default track, and a counter 0 -> 50 at 200. */
  for (int i = 0; i < 2; i++) {
    tg_packet(&t, 50 + (uint64_t)i * 20, 2, 0);
    gp__pb_begin(&t.w, 11);
    gp__pb_uint(&t.w, 9, 1);
    gp__pb_string(&t.w, 23, "cudaLaunchKernel");
    gp__pb_end(&t.w);
    tg_end(&t);
    tg_packet(&t, 55 + (uint64_t)i * 20, 2, 0);
    gp__pb_begin(&t.w, 11);
    gp__pb_uint(&t.w, 9, 2);
    gp__pb_end(&t.w);
    tg_end(&t);
  }
  tg_packet(&t, 100, 3, 0);
  gp__pb_begin(&t.w, 52);
  gp__pb_begin(&t.w, 1);
  gp__pb_begin(&t.w, 1);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_string(&t.w, 2, "Utilization");
  gp__pb_uint(&t.w, 7, 37);
  gp__pb_uint(&t.w, 11, 2);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  gp__pb_begin(&t.w, 2);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_double(&t.w, 3, 0);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 200, 3, 0);
  gp__pb_begin(&t.w, 52);
  gp__pb_begin(&t.w, 2);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_double(&t.w, 3, 50);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_write(&t, path);
  tg_fini(&t);
}

TEST(tp_cli_query) {
  const char *trace = gp_test_path(0, "t.pftrace");
  write_trace(trace);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "query", trace,
                   "SELECT name, dur FROM gpu_slice ORDER BY ts, name",
                   "--format", "csv", NULL),
            0);
  ASSERT_STR_EQ(out, "\"name\",\"dur\"\n\"gemm\",100\n\"gemm\",300\n"
                     "\"relu\",100\n\"h2d\",50\n");
  ASSERT_STR_EQ(err, "");
  free(out);
  free(err);
  /* -f FILE, table and json formats. */
  const char *sqlf = gp_test_path(1, "q.sql");
  FILE *f = fopen(sqlf, "w");
  fputs("-- the GPUs\nSELECT gpu, name FROM gpu ORDER BY gpu;\n", f);
  fclose(f);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "-f", sqlf, NULL), 0);
  ASSERT_STR_EQ(out, "gpu  name\n---  -----\n0    GPU A\n1    GPU B\n");
  free(out);
  free(err);
  ASSERT_EQ(
      tp_cli(&out, &err, "query", trace, "-f", sqlf, "--format", "json", NULL),
      0);
  ASSERT_STR_EQ(out, "[\n  {\"gpu\": 0, \"name\": \"GPU A\"},\n  {\"gpu\": 1, "
                     "\"name\": \"GPU B\"}\n]\n");
  free(out);
  free(err);
  /* Without SQL: a summary. */
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, NULL), 0);
  ASSERT(strstr(out, "gpu slices") != NULL);
  free(out);
  free(err);
}

TEST(tp_cli_query_errors) {
  const char *trace = gp_test_path(0, "t.pftrace");
  write_trace(trace);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "query", NULL), 1);
  ASSERT(strstr(err, "usage: gpuperf query") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(
      tp_cli(&out, &err, "query", trace, "SELECT 1", "--format", "xml", NULL),
      1);
  ASSERT(strstr(err, "'xml' is not table, csv or json") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "SELECT 1", "--bogus", NULL), 1);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace,
                   "SELECT 1;\nSELECT nope FROM "
                   "gpu",
                   NULL),
            2);
  ASSERT(strstr(err, "line 2") != NULL);
  ASSERT(strstr(err, "nope") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", gp_test_path(2, "absent.pftrace"),
                   "SELECT 1", NULL),
            2);
  ASSERT(strstr(err, "absent.pftrace: No such file") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", "--help", NULL), 0);
  ASSERT(strstr(out, "--format") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "--help", NULL), 0);
  ASSERT(strstr(out, "query") != NULL && strstr(out, "report") != NULL);
  free(out);
  free(err);
}

/* s with every run of spaces squeezed to one (in place). */
static char *squeeze(char *s) {
  char *o = s;
  for (char *p = s; *p; p++)
    if (!(*p == ' ' && o > s && o[-1] == ' '))
      *o++ = *p;
  *o = '\0';
  return s;
}

TEST(tp_cli_report) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *html = gp_test_path(1, "r.html");
  write_trace(trace);
  char *out, *err;
  ASSERT_EQ(
      tp_cli(&out, &err, "report", trace, "--top", "5", "--html", html, NULL),
      0);
  squeeze(out);
  /* Kernels: gemm twice (400 ns), relu once; the copy is not a kernel. */
  ASSERT(strstr(out, "Kernels by total time") != NULL);
  ASSERT(strstr(out,
                " gemm 2 400 ns 100 ns 200 ns 200 ns 300 ns 141 ns 80.0%\n") !=
         NULL);
  ASSERT(
      strstr(out, " relu 1 100 ns 100 ns 100 ns 100 ns 100 ns 0 ns 20.0%\n") !=
      NULL);
  ASSERT(strstr(out, "h2d") == NULL);
  /* GPU A is busy [100, 250) and [300, 350): 200 ns of the trace's
   * [50, 400). */
  ASSERT(strstr(out, " 0 GPU A 2 0 200 ns 200 ns 57.1%\n") != NULL);
  ASSERT(strstr(out, " 1 GPU B 1 0 300 ns 300 ns 85.7%\n") != NULL);
  ASSERT(strstr(out, " 0 compute 1 100 ns 28.6%\n") != NULL);
  ASSERT(strstr(out, " 0 copy 2 150 ns 42.9%\n") != NULL);
  ASSERT(strstr(out, " cudaLaunchKernel 2 10 ns 5 ns 5 ns 5 ns\n") != NULL);
  /* Utilization: 0 over [100, 200), 50 over [200, 400): 33.3 on average
   * over time, 25 per sample. */
  ASSERT(strstr(out, " Utilization 0 % 2 0.0% 25.0% 50.0% 33.3%\n") != NULL);
  ASSERT(strstr(out, "Dropped or unusable records") != NULL);
  char *page = tp_read_file(html, NULL);
  ASSERT_NOT_NULL(page);
  ASSERT(strstr(page, "<table class=sortable") != NULL);
  ASSERT(strstr(page, "gemm") != NULL);
  free(page);
  free(out);
  free(err);
  /* --top 0: every row (it was refused). */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--top", "0", NULL), 0);
  ASSERT(strstr(out, "gemm") != NULL && strstr(out, "more not shown") == NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--top", "-1", NULL), 1);
  free(out);
  free(err);
}

/* On a recording, host calls are the host's: GPU work mirrored on the
 * logical stream tracks ("Device #N" > "Stream #M") is not listed as a
 * host call. */
TEST(tp_cli_report_host_calls_on_demo) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "--steps", "3", "-o", trace, NULL), 0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--top", "50", NULL), 0);
  char *api = strstr(out, "Host API calls");
  ASSERT_NOT_NULL(api);
  char *end = strstr(api, "\nUser ranges");
  ASSERT_NOT_NULL(end);
  *end = '\0';
  ASSERT(strstr(end + 1, "training step 1") != NULL);
  ASSERT(strstr(api, "gp_sim_launch") != NULL);
  ASSERT(strstr(api, "training step 1") == NULL);
  ASSERT(strstr(api, "matmul_kernel") == NULL);
  ASSERT(strstr(api, "Memcpy") == NULL);
  free(out);
  free(err);
}
