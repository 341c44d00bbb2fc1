/*
 * test_monitor.c - the GL_AMD_performance_monitor-shaped API: groups and
 * counters, selection limits, begin/end rules (one active monitor per
 * context), results through the fence, and every documented misuse.
 */
#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

static gp_sim_dim3 dim(uint32_t x) {
  gp_sim_dim3 d = {x, 1, 1};
  return d;
}

static void init_sim(void) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = 2;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  cfg.models[1] = GP_SIM_MODEL_V3D;
  ASSERT_OK(gp_sim_init(&cfg));
}

TEST(monitor_groups_and_counters) {
  init_sim();
  uint32_t ng = 0, groups[8];
  ASSERT_OK(gp_monitor_get_groups(1, &ng, groups, 8));
  ASSERT_EQ(ng, 1);
  gp_monitor_group_info gi;
  ASSERT_OK(gp_monitor_get_group_info(1, groups[0], &gi));
  ASSERT_EQ(gi.num_counters, 87);
  ASSERT_EQ(gi.max_active, 32);
  uint32_t ids[100];
  size_t n = 0;
  ASSERT_OK(gp_monitor_get_counters(1, 0, ids, 100, &n));
  ASSERT_EQ(n, 87);
  gp_monitor_counter_info ci;
  ASSERT_OK(gp_monitor_get_counter_info(1, 0, ids[32], &ci));
  ASSERT_STR_EQ(ci.name, "cycle-count");
  ASSERT_EQ(ci.type, GP_COUNTER_TYPE_INT64);
  ASSERT_OK(gp_monitor_get_groups(0, &ng, NULL, 0));
  ASSERT_EQ(ng, 4);
  ASSERT_OK(gp_monitor_get_counters(0, 0, ids, 100, &n));
  ASSERT_OK(gp_monitor_get_counter_info(0, 0, ids[0], &ci));
  ASSERT_STR_EQ(ci.name, "Utilization");
  ASSERT_EQ(ci.type, GP_COUNTER_TYPE_PERCENT);
  ASSERT_NEAR(ci.range_max, 100.0, 0.0);
  /* Misuse of the queries. */
  ASSERT_ERR(gp_monitor_get_group_info(1, 1, &gi), GP_ENOENT);
  ASSERT_ERR(gp_monitor_get_counters(0, 9, ids, 100, &n), GP_ENOENT);
  ASSERT_ERR(gp_monitor_get_counter_info(0, 1, ids[0], &ci), GP_ENOCOUNTER);
  ASSERT_ERR(gp_monitor_get_counter_info(0, 0, 999, &ci), GP_ENOCOUNTER);
  ASSERT_ERR(gp_monitor_get_groups(77, &ng, NULL, 0), GP_ENODEV);
  ASSERT_ERR(gp_monitor_get_groups(0, NULL, NULL, 0), GP_EINVAL);
}

TEST(monitor_misuse_errors) {
  init_sim();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  uint32_t cx = gp_sim_context_id(ctx);
  gp_monitor *m, *m2;
  ASSERT_ERR(gp_monitor_create(987654, &m), GP_ENOENT);
  ASSERT_ERR(gp_monitor_create(cx, NULL), GP_EINVAL);
  ASSERT_OK(gp_monitor_create(cx, &m));
  ASSERT_OK(gp_monitor_create(cx, &m2));
  uint32_t dram[3];
  size_t n = 0;
  ASSERT_OK(gp_monitor_get_counters(0, 3, dram, 3, &n)); /* group "dram" */
  ASSERT_EQ(n, 3);
  uint32_t util = 1;
  char buf[256];
  size_t w = 99;
  /* Nothing selected, never begun. */
  ASSERT_ERR(gp_monitor_begin(m), GP_EINVAL);
  ASSERT_ERR(gp_monitor_end(m), GP_ESTATE);
  ASSERT_ERR(gp_monitor_get_result(m, GP_MONITOR_RESULT_AVAILABLE, buf,
                                   sizeof(buf), &w),
             GP_ESTATE);
  ASSERT_EQ(w, 0);
  /* Selection errors change nothing. */
  ASSERT_ERR(gp_monitor_select_counters(m, 1, 7, &util, 1), GP_ENOENT);
  ASSERT_ERR(gp_monitor_select_counters(m, 1, 3, &util, 1), GP_ENOCOUNTER);
  ASSERT_ERR(gp_monitor_select_counters(m, 1, 3, dram, 3), GP_ECAPACITY);
  ASSERT_ERR(gp_monitor_select_counters(m, 2, 3, dram, 1), GP_EINVAL);
  ASSERT_ERR(gp_monitor_begin(m), GP_EINVAL); /* still nothing selected */
  ASSERT_OK(gp_monitor_select_counters(m, 1, 3, dram, 2));
  ASSERT_ERR(gp_monitor_select_counters(m, 1, 3, dram + 2, 1), GP_ECAPACITY);
  ASSERT_OK(gp_monitor_select_counters(m, 0, 3, dram + 1, 1));
  ASSERT_OK(gp_monitor_select_counters(m, 1, 3, dram + 2, 1));
  ASSERT_OK(gp_monitor_select_counters(m, 1, 0, &util, 1));
  ASSERT_OK(gp_monitor_select_counters(m2, 1, 0, &util, 1));
  /* Begin/end rules. */
  ASSERT_OK(gp_monitor_begin(m));
  ASSERT_ERR(gp_monitor_begin(m), GP_ESTATE);
  ASSERT_ERR(gp_monitor_begin(m2), GP_EBUSY); /* one per context */
  ASSERT_ERR(gp_monitor_select_counters(m, 1, 0, &util, 1), GP_ESTATE);
  ASSERT_ERR(gp_monitor_get_result(m, GP_MONITOR_RESULT, buf, sizeof(buf), &w),
             GP_ESTATE);
  ASSERT_OK(gp_monitor_end(m));
  ASSERT_ERR(gp_monitor_end(m), GP_ESTATE);
  ASSERT_ERR(gp_monitor_get_result(m, 7, buf, sizeof(buf), &w), GP_EINVAL);
  ASSERT_ERR(gp_monitor_get_result(m, GP_MONITOR_RESULT_SIZE, buf, 2, &w),
             GP_ESIZE);
  ASSERT_ERR(gp_monitor_get_result(m, GP_MONITOR_RESULT, buf, 8, &w), GP_ESIZE);
  ASSERT_ERR(gp_monitor_get_result(m, GP_MONITOR_RESULT, NULL, 8, &w),
             GP_EINVAL);
  uint32_t size = 0;
  ASSERT_OK(gp_monitor_get_result(m, GP_MONITOR_RESULT_SIZE, &size,
                                  sizeof(size), &w));
  ASSERT_EQ(size, 3 * sizeof(gp_monitor_result));
  ASSERT_EQ(w, sizeof(uint32_t));
  /* A global perfmon refuses monitors, as it refuses per-job perfmons. */
  gp_perfmon *g;
  ASSERT_OK(gp_perfmon_create(0, &util, 1, &g));
  ASSERT_OK(gp_perfmon_set_global(g));
  ASSERT_ERR(gp_monitor_begin(m), GP_EAGAIN);
  ASSERT_OK(gp_perfmon_clear_global(g));
  /* Now the other monitor of the context may run. */
  ASSERT_OK(gp_monitor_begin(m2));
  ASSERT_OK(gp_perfmon_set_global(g));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 10, 10);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_ERR(gp_sim_launch(gp_sim_default_stream(ctx), k, dim(8), dim(32), 0),
             GP_EAGAIN); /* m2 is active: its jobs carry a perfmon */
  ASSERT_OK(gp_perfmon_clear_global(g));
  gp_perfmon_destroy(g);
  ASSERT_OK(gp_monitor_destroy(m2)); /* active: ended first */
  ASSERT_OK(gp_monitor_begin(m));
  ASSERT_OK(gp_monitor_destroy(m));
  ASSERT_OK(gp_monitor_destroy(NULL));
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

TEST(monitor_results_match_jobs) {
  init_sim();
  gp_sim_context *ctx, *other;
  ASSERT_OK(gp_sim_context_create(1, &ctx));
  ASSERT_OK(gp_sim_context_create(1, &other));
  gp_monitor *m;
  ASSERT_OK(gp_monitor_create(gp_sim_context_id(ctx), &m));
  uint32_t sel[] = {42, 33, 15}; /* AXI read bytes, cycle-count, QPU active */
  ASSERT_OK(gp_monitor_select_counters(m, 1, 0, sel, 3));
  gp_sim_kernel_desc kd = tu_kernel_desc("shade", 3000, 96);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  /* Before begin: not counted. */
  ASSERT_OK(gp_sim_launch(s, k, dim(16), dim(64), 0));
  ASSERT_OK(gp_monitor_begin(m));
  double read = 0, issue = 0, dur = 0;
  for (int i = 0; i < 4; i++) {
    ASSERT_OK(gp_sim_launch(s, k, dim(32 + 8 * i), dim(64), 0));
    sim_work_stats st;
    uint64_t ns = gp__sim_kernel_cost(gp__sim_model_get(GP_SIM_MODEL_V3D), &kd,
                                      dim(32 + 8 * i), dim(64), 0, &st);
    read += st.dram_read;
    issue += st.issue_cycles;
    dur += (double)ns;
    /* Another context's work is not the monitor's. */
    ASSERT_OK(
        gp_sim_launch(gp_sim_default_stream(other), k, dim(64), dim(64), 0));
  }
  ASSERT_OK(gp_monitor_end(m));
  ASSERT_OK(gp_sim_launch(s, k, dim(16), dim(64), 0)); /* after end */
  uint32_t avail = 7;
  size_t w = 0;
  ASSERT_OK(gp_monitor_get_result(m, GP_MONITOR_RESULT_AVAILABLE, &avail,
                                  sizeof(avail), &w));
  ASSERT_EQ(avail, 0); /* jobs still pending */
  gp_monitor_result res[3];
  ASSERT_OK(gp_monitor_get_result(m, GP_MONITOR_RESULT, res, sizeof(res),
                                  &w)); /* waits */
  ASSERT_EQ(w, sizeof(res));
  ASSERT_OK(gp_monitor_get_result(m, GP_MONITOR_RESULT_AVAILABLE, &avail,
                                  sizeof(avail), &w));
  ASSERT_EQ(avail, 1);
  /* Ordered by group, then id. */
  ASSERT_EQ(res[0].counter, 15);
  ASSERT_EQ(res[1].counter, 33);
  ASSERT_EQ(res[2].counter, 42);
  ASSERT_EQ(res[0].group, 0);
  ASSERT_EQ(res[0].type, GP_COUNTER_TYPE_INT64);
  ASSERT_NEAR(res[2].value.i64, read, 1.0);
  ASSERT_NEAR(res[0].value.i64, issue * 8, 1.0);
  /* The other context's jobs interleaved, so each monitored job was a
   * segment of its own: cycle-count is the jobs' own time. */
  ASSERT_NEAR(res[1].value.i64, dur * 0.5, 1.0);
  /* A partial buffer takes whole entries. */
  ASSERT_OK(
      gp_monitor_get_result(m, GP_MONITOR_RESULT, res, sizeof(res[0]) + 4, &w));
  ASSERT_EQ(w, sizeof(res[0]));
  gp_monitor_destroy(m);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
  gp_sim_context_destroy(other);
}
