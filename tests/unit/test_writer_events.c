/*
 * test_writer_events.c - where EVENT, METRIC and their instance records
 * end up in a trace, read back with our trace processor (`gpuperf
 * query`'s): a recorded simulated run whose program enables the four
 * kinds while a gpu.counters data source instruments its kernels. Each
 * event and metric is an instant on the device's track named after the
 * counter; its value equals the per-activity counter sample the COUNTER
 * records put in the same trace, and its instances add up to it.
 */
#include "core/core.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "testutil.h"
#include "writer_util.h"

static const char config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.counters\"\n"
    "  gpu_counter_config {\n"
    "    instrumented_sampling: true\n"
    "    counter_names: \"smsp__inst_executed.sum\"\n"
    "    counter_names: \"lts__t_sector_hit_rate.pct\"\n"
    "} } }\n";

TEST(writer_events_and_metrics_in_a_recorded_trace) {
  const char *path = gp_test_path(0, "events.pftrace");
  gp_session *s = wt_recording(config, path);
  /* The program's own enables, CUPTI-style. */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_EVENT));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_EVENT_INSTANCE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_METRIC));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_METRIC_INSTANCE));
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4workPf", 500, 64);
  gp_sim_kernel *k[2];
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[0]));
  kd = tu_kernel_desc("_Z4calcv", 500, 0); /* no memory: no hit rate */
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[1]));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *st = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(st, k[0], tu_dim(250), tu_dim(128), 0));
  ASSERT_OK(gp_sim_launch(st, k[1], tu_dim(250), tu_dim(128), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k[0]));
  ASSERT_OK(gp_sim_kernel_destroy(k[1]));

  /* One instant per kernel and counter, on the device's track. */
  char *rows = wt_tp_rows(
      path, "SELECT s.name, t.name, count(*) FROM slice s JOIN track t ON "
            "s.track_id = t.id WHERE s.name GLOB 'smsp__*' OR s.name GLOB "
            "'lts__*' GROUP BY s.name, t.name ORDER BY s.name");
  ASSERT_STR_EQ(rows, "lts__t_sector_hit_rate.pct|Device #0|2\n"
                      "smsp__inst_executed.sum|Device #0|2\n");
  free(rows);

  /* The event's value is the per-activity sample of the same counter
   * (from the COUNTER records), at the same time; its 108 instances add
   * up to it. */
  rows = wt_tp_rows(
      path,
      "SELECT (SELECT int_value FROM args a WHERE a.arg_set_id = "
      "s.arg_set_id AND a.key = 'debug.value') = CAST(c.value AS INT), "
      "(SELECT sum(int_value) FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key GLOB 'debug.instances[[]*]') = CAST(c.value AS INT), "
      "(SELECT count(*) FROM args a WHERE a.arg_set_id = s.arg_set_id AND "
      "a.key GLOB 'debug.instances[[]*]'), "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'debug.domain'), c.value > 0 "
      "FROM slice s JOIN counter c ON c.ts = s.ts JOIN counter_track ct ON "
      "c.track_id = ct.id AND ct.name = s.name "
      "WHERE s.name = 'smsp__inst_executed.sum' ORDER BY s.ts");
  ASSERT_STR_EQ(rows, "1|1|108|sm|1\n1|1|108|sm|1\n");
  free(rows);

  /* The hit rate: a percent over the first kernel; the second made no L2
   * request and has none (its one instance neither). */
  rows = wt_tp_rows(
      path,
      "SELECT (SELECT display_value FROM args a WHERE a.arg_set_id = "
      "s.arg_set_id AND a.key = 'debug.value_kind'), "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'debug.invalid'), "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'debug.instances[0]') = 'invalid', "
      "(SELECT real_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'debug.value') > 0 "
      "FROM slice s WHERE s.name = 'lts__t_sector_hit_rate.pct' ORDER BY s.ts");
  ASSERT_STR_EQ(rows, "percent||0|1\npercent|true|1|0\n");
  free(rows);
}

/* Instances without their record (EVENT disabled) still reach the trace,
 * as an instant of their own without a value; nothing of the kinds when
 * the program enables none of them. */
TEST(writer_instances_without_their_event) {
  const char *path = gp_test_path(0, "inst.pftrace");
  gp_session *s = wt_recording(config, path);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_EVENT_INSTANCE));
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4workPf", 500, 64);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(
      gp_sim_launch(gp_sim_default_stream(ctx), k, tu_dim(20), tu_dim(128), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  char *rows = wt_tp_rows(
      path, "SELECT s.name, (SELECT count(*) FROM args a WHERE a.arg_set_id "
            "= s.arg_set_id AND a.key GLOB 'debug.instances[[]*]'), "
            "(SELECT count(*) FROM args a WHERE a.arg_set_id = s.arg_set_id "
            "AND a.key = 'debug.value') FROM slice s WHERE s.name GLOB "
            "'event *' OR s.name GLOB 'smsp__*' OR s.name GLOB 'lts__*'");
  /* Without the EVENT record the instances do not know the name. */
  ASSERT_STR_EQ(rows, "event 6|108|0\n");
  free(rows);
}
