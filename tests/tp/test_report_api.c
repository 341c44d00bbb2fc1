/*
 * test_report_api.c - the report layer's public API (gpuperf/report.h)
 * on a small trace built here: what bad filters return, window bounds by
 * time and by range name, accessors past the end, a report that outlives
 * its trace processor, a diff of a report with itself, and the names
 * that once broke the report (a kernel name over 512 bytes split into
 * one row per launch; a process name with a '%' crashed it). Expected
 * numbers are the trace's own, or SQL over gpu_slice.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "gpuperf/gpuperf.h"
#include "gpuperf/report.h"
#include "harness.h"
#include "tp/tputil.h"

/* A GpuRenderStageEvent (TracePacket field 53) of name at ts for dur. */
static void stage(tg *t, uint64_t ts, uint64_t dur, const char *name) {
  tg_packet(t, ts, 1, 0);
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, ts);  /* event_id */
  gp__pb_uint(&t->w, 2, dur); /* duration */
  gp__pb_int(&t->w, 11, 0);   /* gpu_id */
  gp__pb_uint(&t->w, 3, 0);   /* hw_queue_id */
  gp__pb_uint(&t->w, 4, 0);   /* stage_id */
  gp__pb_string(&t->w, 17, name);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* Two launches of a kernel with a 700-byte name, one of "short". */
static gp_tp *trace(char *longname, size_t size) {
  memset(longname, 'k', size - 1);
  longname[size - 1] = '\0';
  memcpy(longname, "long_", 5);
  tg t;
  tg_init(&t);
  stage(&t, 1000, 50, longname);
  stage(&t, 2000, 70, "short");
  stage(&t, 3000, 90, longname);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  return tp;
}

static const gp_report_cell *row_named(const gp_report_table *t,
                                       const char *name) {
  for (size_t i = 0; i < gp_report_table_rows(t); i++)
    if (strcmp(gp_report_table_row(t, i)[0].text, name) == 0)
      return gp_report_table_row(t, i);
  return NULL;
}

TEST(report_api_filters_and_bounds) {
  char longname[701];
  gp_tp *tp = trace(longname, sizeof(longname));
  gp_report *r = (gp_report *)&r; /* a sentinel: failures leave it */
  gp_report *sentinel = r;
  gp_tp_error err;
  gp_report_filter f;
  gp_report_filter_init(&f);
  f.size = 8;
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), GP_EINVAL);
  ASSERT(strstr(err.message, "size") != NULL);
  ASSERT(r == sentinel);
  gp_report_filter_init(&f);
  f.gpu = -2;
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), GP_EINVAL);
  ASSERT(r == sentinel);
  char big[1100];
  memset(big, 'p', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  gp_report_filter_init(&f);
  f.process = big;
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), GP_EINVAL);
  ASSERT(strstr(err.message, "process") != NULL);
  ASSERT(r == sentinel);
  ASSERT_EQ(gp_report_views(tp, &f, NULL, NULL, &err), GP_EINVAL);

  /* A name that is SQL and printf syntax at once selects nothing. */
  f.process = "it's %s%n%s";
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), 0);
  ASSERT_EQ(gp_report_table_rows(gp_report_table_find(r, "kernels")), 0);
  gp_report_destroy(r);

  /* Bounds: a time after the trace start, or a slice's start and end. */
  int64_t ns, start = tp_int(tp, "SELECT start_ts FROM trace_bounds");
  ASSERT_EQ(gp_report_time(tp, "1us", false, &ns, &err), 0);
  ASSERT_EQ(ns, start + 1000);
  ASSERT_EQ(gp_report_time(tp, "short", false, &ns, &err), 0);
  ASSERT_EQ(ns, 2000);
  ASSERT_EQ(gp_report_time(tp, "short", true, &ns, &err), 0);
  ASSERT_EQ(ns, 2070);
  ASSERT_EQ(gp_report_time(tp, "no such range", true, &ns, &err), GP_ENOENT);
  ASSERT(strstr(err.message, "no such range") != NULL);

  /* A filter that selects nothing fails, and says why. */
  gp_report_filter_init(&f);
  f.from = start + 10 * 1000000000ll;
  r = sentinel;
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), GP_ERANGE);
  ASSERT(strstr(err.message, "outside the trace") != NULL);
  ASSERT(r == sentinel);
  gp_report_filter_init(&f);
  f.gpu = 9;
  ASSERT_EQ(gp_report_views(tp, &f, NULL, NULL, &err), GP_ERANGE);
  ASSERT(strstr(err.message, "GPU 9") != NULL);

  /* The window of "short" alone. */
  gp_report_filter_init(&f);
  ASSERT_EQ(gp_report_time(tp, "short", false, &f.from, NULL), 0);
  ASSERT_EQ(gp_report_time(tp, "short", true, &f.to, NULL), 0);
  ASSERT_EQ(gp_report_build(tp, "t", &f, &r, &err), 0);
  const gp_report_table *k = gp_report_table_find(r, "kernels");
  ASSERT_EQ(gp_report_table_rows(k), 1);
  ASSERT_STR_EQ(gp_report_table_row(k, 0)[0].text, "short");
  int64_t ws, we;
  gp_report_window(r, &ws, &we);
  ASSERT_EQ(ws, 2000);
  ASSERT_EQ(we, 2070);
  gp_report_destroy(r);
  gp_tp_close(tp);
}

TEST(report_api_tables_and_diff) {
  char longname[701];
  gp_tp *tp = trace(longname, sizeof(longname));
  gp_report *r, *d;
  gp_tp_error err;
  gp_report_filter f;
  gp_report_filter_init(&f);
  f.top = 0;
  ASSERT_EQ(gp_report_build(tp, "small.pftrace", &f, &r, &err), 0);
  /* What SQL says, taken before the trace processor goes: the report
   * owns its numbers. */
  int64_t n_long = tp_int(tp, "SELECT count(*) FROM gpu_slice WHERE name "
                              "GLOB 'long_*'");
  int64_t sum_long = tp_int(tp, "SELECT sum(dur) FROM gpu_slice WHERE name "
                                "GLOB 'long_*'");
  int64_t sum_all = tp_int(tp, "SELECT sum(dur) FROM gpu_slice");
  gp_tp_close(tp);
  ASSERT_EQ(n_long, 2);

  static const char *const ids[] = {"gpus",     "queues", "streams", "kernels",
                                    "copies",   "api",    "ranges",  "counters",
                                    "overhead", "losses"};
  ASSERT_EQ(gp_report_table_count(r), 10);
  for (size_t i = 0; i < 10; i++)
    ASSERT_STR_EQ(gp_report_table_id(gp_report_table_at(r, i)), ids[i]);
  ASSERT(gp_report_table_at(r, 10) == NULL);
  ASSERT(gp_report_table_find(r, "nope") == NULL);
  ASSERT_STR_EQ(gp_report_name(r), "small.pftrace");

  /* The long name is one kernel of two launches, not two of one. */
  const gp_report_table *k = gp_report_table_find(r, "kernels");
  ASSERT_EQ(gp_report_table_rows(k), 2);
  ASSERT_EQ(gp_report_table_columns(k), 9);
  ASSERT_STR_EQ(gp_report_column_id(k, 2), "total_ns");
  ASSERT_EQ(gp_report_column_kind(k, 2), GP_REPORT_NS);
  ASSERT(gp_report_column_id(k, 9) == NULL);
  ASSERT(gp_report_table_row(k, 2) == NULL);
  const gp_report_cell *c = row_named(k, longname);
  ASSERT_NOT_NULL(c);
  ASSERT_EQ(c[1].value, (double)n_long);
  ASSERT_EQ(c[2].value, (double)sum_long);
  ASSERT_EQ(gp_report_metric(r, "total"), (double)sum_all);
  ASSERT(isnan(gp_report_metric(r, "bogus")));

  /* Against itself: nothing changed, every row "same" (count and total
   * had no hint before the minimum effect came). */
  ASSERT_EQ(gp_report_diff(r, r, &d), 0);
  ASSERT_STR_EQ(gp_report_name(d), "small.pftrace vs small.pftrace");
  const gp_report_table *dk = gp_report_table_find(d, "kernels");
  ASSERT_EQ(gp_report_table_rows(dk), 6); /* count, total, mean of two */
  for (size_t i = 0; i < gp_report_table_rows(dk); i++) {
    const gp_report_cell *row = gp_report_table_row(dk, i);
    ASSERT_EQ(row[5].value, 0.0);
    ASSERT_STR_EQ(row[6].text, "same");
  }
  /* The options: checked; the metric change judged as the rows are. */
  gp_report_diff_options o;
  gp_report_diff_options_init(&o);
  ASSERT(o.min_pct == 1 && o.min_ns == 50);
  o.min_pct = -1;
  gp_report *d2 = NULL;
  ASSERT_EQ(gp_report_diff_ex(r, r, &o, &d2), GP_EINVAL);
  ASSERT(d2 == NULL);
  gp_report_change ch;
  ASSERT_EQ(gp_report_metric_change(r, r, "total", NULL, &ch), 0);
  ASSERT_STR_EQ(ch.hint, "same");
  ASSERT(!ch.significant && ch.pct == 0);
  ASSERT_EQ(gp_report_metric_change(r, r, "kernel:nosuch", NULL, &ch),
            GP_ENOENT);
  ASSERT_EQ(gp_report_metric_change(r, r, "bogus", NULL, &ch), GP_EINVAL);
  ASSERT_EQ(gp_report_diff(r, NULL, &d), GP_EINVAL);
  gp_report_destroy(d);
  gp_report_destroy(r);
  gp_report_destroy(NULL);

  ASSERT_EQ(gp_report_change_pct(0, 0), 0.0);
  ASSERT(isnan(gp_report_change_pct(0, 1)));
  ASSERT(isnan(gp_report_change_pct(NAN, 1)));
  ASSERT_EQ(gp_report_change_pct(2, 3), 50.0);
}

/* The overhead of a row of the "overhead" table, or NaN; *count gets its
 * count. */
static double overhead(const gp_report *r, const char *what, double *count) {
  const gp_report_table *t = gp_report_table_find(r, "overhead");
  for (size_t i = 0; t && i < gp_report_table_rows(t); i++) {
    const gp_report_cell *row = gp_report_table_row(t, i);
    if (strcmp(row[0].text, what) == 0) {
      *count = row[1].value;
      return row[2].value;
    }
  }
  *count = NAN;
  return NAN;
}

/* The overhead section's writer figure is the writer's own: the CPU
 * time the session says it spent writing (gp_session_get_stats), less
 * what it spent after writing its last counter value (the final flush).
 * The 0 ns "gpuperf host" marker is no overhead. A deterministic trace
 * has no writer figure: missing (NaN), not 0. */
TEST(report_overhead_is_the_writers) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 1;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_EQ(gp_sim_init(&sc), 0);
  gp_trace_config *cfg;
  ASSERT_EQ(gp_trace_config_default(&cfg), 0);
  const char *paths[2] = {gp_test_path(0, "real.pftrace"),
                          gp_test_path(1, "det.pftrace")};
  uint64_t writer_ns[2];
  for (int det = 0; det < 2; det++) {
    gp_session_options o;
    memset(&o, 0, sizeof(o));
    o.flags = det ? GP_SESSION_DETERMINISTIC : 0;
    gp_session *s;
    ASSERT_EQ(gp_session_start(cfg, paths[det], &o, &s), 0);
    gp_sim_context *ctx;
    gp_sim_kernel *k;
    gp_sim_kernel_desc d;
    memset(&d, 0, sizeof(d));
    d.name = "busy";
    d.flops_per_thread = 5000;
    d.bytes_per_thread = 16;
    ASSERT_EQ(gp_sim_context_create(0, &ctx), 0);
    ASSERT_EQ(gp_sim_kernel_create(&d, &k), 0);
    const gp_sim_dim3 grid = {1024, 1, 1}, block = {256, 1, 1};
    for (int i = 0; i < 50; i++)
      ASSERT_EQ(gp_sim_launch(gp_sim_default_stream(ctx), k, grid, block, 0),
                0);
    ASSERT_EQ(gp_sim_context_synchronize(ctx), 0);
    ASSERT_EQ(gp_sim_context_destroy(ctx), 0);
    ASSERT_EQ(gp_session_stop(s), 0);
    gp_session_stats st;
    ASSERT_EQ(gp_session_get_stats(s, &st), 0);
    writer_ns[det] = st.writer_ns;
    gp_session_destroy(s);
  }
  gp_trace_config_destroy(cfg);
  for (int det = 0; det < 2; det++) {
    gp_tp *tp;
    ASSERT_EQ(gp_tp_open(paths[det], NULL, &tp, NULL), 0);
    gp_report *r;
    gp_tp_error err;
    ASSERT_EQ(gp_report_build(tp, "t", NULL, &r, &err), 0);
    double count, host = overhead(r, "gpuperf host", &count);
    ASSERT(isnan(host));
    double w = overhead(r, "gpuperf writer overhead", &count);
    ASSERT(isnan(count));
    if (det) {
      ASSERT(isnan(w));
      ASSERT(strstr(gp_report_table_note(gp_report_table_find(r, "overhead")),
                    "no writer figure") != NULL);
    } else {
      ASSERT(writer_ns[0] > 0);
      ASSERT(w > 0 && w <= (double)writer_ns[0]);
      ASSERT(w >= (double)writer_ns[0] / 2);
    }
    gp_report_destroy(r);
    gp_tp_close(tp);
  }
}
