/*
 * test_writer_um.c - where CDP_KERNEL, PREEMPTION and UNIFIED_MEMORY_
 * COUNTER records end up in a trace, read back with our trace processor
 * from a recorded simulated run: the child grids as GPU slices nested in
 * their parent's, with the grid ids; the preemptions as instants on the
 * process track; the faults and migrations as slices on the stream's
 * unified memory track, with the values the records carry.
 */
#include "core/core.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "testutil.h"
#include "writer_util.h"

TEST(writer_cdp_and_unified_memory_in_a_recorded_trace) {
  const char *path = gp_test_path(0, "um.pftrace");
  gp_session *rec = wt_recording(
      "data_sources { config { name: \"gpu.renderstages\" } }\n", path);
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc pd = tu_kernel_desc("_Z6parentPf", 4000, 64);
  gp_sim_kernel_desc cd = tu_kernel_desc("_Z5childPf", 2000, 32);
  gp_sim_kernel *parent, *child;
  ASSERT_OK(gp_sim_kernel_create(&pd, &parent));
  ASSERT_OK(gp_sim_kernel_create(&cd, &child));
  uint64_t a;
  ASSERT_OK(gp_sim_malloc_managed(ctx, 3 * GP_SIM_UM_PAGE, &a));
  ASSERT_OK(gp_sim_host_access(ctx, a, 3 * GP_SIM_UM_PAGE, GP_UM_ACCESS_WRITE));
  gp_sim_managed_range r = {a, 3 * GP_SIM_UM_PAGE, GP_UM_ACCESS_WRITE, 0};
  gp_sim_launch_attrs at = {.managed = &r,
                            .num_managed = 1,
                            .cdp_blocks = 2,
                            .cdp_child = child,
                            .cdp_grid = tu_dim(2),
                            .cdp_block = tu_dim(64),
                            .cdp_sync = 1};
  ASSERT_OK(gp_sim_launch_ex(s, parent, tu_dim(4), tu_dim(128), 0, &at));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_session_stop(rec));
  gp_session_destroy(rec);
  ASSERT_OK(gp_sim_kernel_destroy(parent));
  ASSERT_OK(gp_sim_kernel_destroy(child));
  ASSERT_OK(gp_sim_context_destroy(ctx));

  /* The children during their parent, on a second track of its queue's
   * name (Perfetto puts a queue's overlapping stages on tracks of their
   * own), with their grid ids and launching blocks. */
  char *rows = wt_tp_rows(
      path,
      "SELECT s.name, t.name, s.track_id = p.track_id, "
      "s.ts >= p.ts AND s.ts + s.dur <= p.ts + p.dur, "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'parent_block'), "
      "(SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "
      "AND a.key = 'parent_grid_id') IS NOT NULL "
      "FROM gpu_slice s JOIN track t ON s.track_id = t.id, gpu_slice p "
      "WHERE p.name = '_Z6parentPf' ORDER BY s.ts");
  ASSERT_STR_EQ(rows, "_Z6parentPf|Compute 0|1|1||0\n"
                      "_Z5childPf|Compute 0|0|1|0,0,0|1\n"
                      "_Z5childPf|Compute 0|0|1|1,0,0|1\n");
  free(rows);
  /* Two grids of one parent. */
  rows = wt_tp_rows(
      path, "SELECT COUNT(DISTINCT g.display_value), "
            "COUNT(DISTINCT p.display_value), "
            "SUM(g.display_value = p.display_value) FROM gpu_slice s "
            "JOIN args g ON g.arg_set_id = s.arg_set_id AND g.key = 'grid_id' "
            "JOIN args p ON p.arg_set_id = s.arg_set_id AND "
            "p.key = 'parent_grid_id'");
  ASSERT_STR_EQ(rows, "2|1|0\n");
  free(rows);
  /* Two blocks saved, then restored. */
  rows = wt_tp_rows(path, "SELECT s.name, "
                          "(SELECT display_value FROM args a WHERE "
                          "a.arg_set_id = s.arg_set_id AND a.key = "
                          "'debug.block') FROM slice s WHERE s.name GLOB "
                          "'GPU preemption*' ORDER BY s.ts, s.id");
  ASSERT_STR_EQ(rows, "GPU preemption save|0,0,0\n"
                      "GPU preemption save|1,0,0\n"
                      "GPU preemption restore|0,0,0\n"
                      "GPU preemption restore|1,0,0\n");
  free(rows);
  /* The host's faults (no bytes moved: nothing was anywhere), then the
   * kernel's: 3 pages that moved, 3 x GP_SIM_UM_PAGE bytes. */
  rows = wt_tp_rows(
      path, "SELECT t.name, s.name, s.dur > 0, "
            "(SELECT display_value FROM args a WHERE a.arg_set_id = "
            "s.arg_set_id AND a.key = 'debug.value') "
            "FROM slice s JOIN track t ON s.track_id = t.id "
            "WHERE t.name GLOB 'Unified memory*' ORDER BY s.ts, s.depth");
  char want[512];
  snprintf(want, sizeof(want),
           "Unified memory (GPU 0)|CPU page faults|1|3\n"
           "Unified memory (GPU 0, stream %u)|GPU page faults|1|3\n"
           "Unified memory (GPU 0, stream %u)|UM HtoD|1|%u\n",
           1u, 1u, 3 * GP_SIM_UM_PAGE);
  ASSERT_STR_EQ(rows, want);
  free(rows);
}
