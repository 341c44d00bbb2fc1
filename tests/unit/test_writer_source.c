/*
 * test_writer_source.c - where the source-level records end up in a
 * trace: a recorded simulated run with gpuperf_options { source_level:
 * true } has one instant per record on the process's "GPU source lines"
 * track, at its kernel's end, its fields and its locator's file and line
 * as the slice's args, read back with our trace processor and with
 * `gpuperf query`; without the option the trace has none. The numbers are
 * the instruction model's for the test's launch (docs/sim.md), worked out
 * by hand: 10 blocks of 100 threads on a 32-wide device are 40 warps,
 * one partial per block.
 */
#include "core/core.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "testutil.h"
#include "writer_util.h"

/* A deterministic recording of config into path, with one launch of a
 * kernel of 8 flops and 16 bytes (3/4 read) per thread and shared memory;
 * *collected: whether the session collected GLOBAL_ACCESS records. */
static void record(const char *config, const char *path, int *collected) {
  gp_session *s = wt_recording(config, path);
  *collected = gp_activity_is_enabled(0, GP_ACTIVITY_KIND_GLOBAL_ACCESS);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z7stencilPKfPf", 8, 16);
  kd.read_fraction = 0.75;
  kd.static_shared_memory = 256;
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *st = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(st, k, tu_dim(10), tu_dim(100), 0));
  ASSERT_OK(gp_sim_stream_synchronize(st));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

/* The rows of the instants called event (in trace order), with the args
 * debug.<key> of keys, a space-separated list; where: more conditions on
 * them ("" for none, else "AND ..." over the same args with arg()). */
static char *instants(const char *path, const char *event, const char *keys,
                      const char *where) {
  char sql[4096];
  size_t n = (size_t)snprintf(sql, sizeof(sql), "SELECT ");
  char copy[512];
  snprintf(copy, sizeof(copy), "%s", keys);
  const char *sep = "";
  for (char *k = strtok(copy, " "); k; k = strtok(NULL, " ")) {
    n += (size_t)snprintf(sql + n, sizeof(sql) - n,
                          "%s(SELECT display_value FROM args a WHERE "
                          "a.arg_set_id = s.arg_set_id AND a.key = 'debug.%s')",
                          sep, k);
    sep = ", ";
  }
  snprintf(sql + n, sizeof(sql) - n,
           " FROM slice s WHERE s.name = '%s' %s ORDER BY s.id", event, where);
  return wt_tp_rows(path, sql);
}

/* The condition that an instant's arg debug.<key> is value. */
#define ARG_IS(key, value)                                                     \
  "AND (SELECT display_value FROM args a WHERE a.arg_set_id = s.arg_set_id "   \
  "AND a.key = 'debug." key "') = '" value "'"

TEST(writer_source_level_instants_in_a_recorded_trace) {
  int collected;
  const char *path = gp_test_path(0, "source.pftrace");
  record("data_sources { config { name: \"gpu.renderstages\" } }\n"
         "gpuperf_options { source_level: true }\n",
         path, &collected);
  ASSERT_EQ(collected, 1);

  /* One instant per record, on the process's "GPU source lines" track. */
  char *rows = wt_tp_rows(
      path, "SELECT s.name, t.name, count(*), min(s.dur), max(s.dur) FROM "
            "slice s JOIN track t ON s.track_id = t.id WHERE s.name GLOB "
            "'GPU *' AND s.category IS NULL GROUP BY s.name, t.name "
            "ORDER BY s.name");
  ASSERT_STR_EQ(rows, "GPU branch|GPU source lines|4|0|0\n"
                      "GPU global access|GPU source lines|2|0|0\n"
                      "GPU instruction|GPU source lines|12|0|0\n"
                      "GPU shared access|GPU source lines|2|0|0\n");
  free(rows);
  /* The track belongs to the process (a child of its track: Perfetto
   * merges it into a process-scoped track). */
  rows = wt_tp_rows(path, "SELECT type FROM track WHERE name = 'GPU source "
                          "lines'");
  ASSERT_STR_EQ(rows, "process_merged_track_event\n");
  free(rows);
  /* At the end of the kernel they count. */
  ASSERT_EQ(wt_tp_one(path, "SELECT count(*) FROM slice s WHERE s.name GLOB "
                            "'GPU [bgis]*' AND s.ts = (SELECT ts + dur FROM "
                            "gpu_slice WHERE name GLOB '*stencil*')"),
            20);

  /* The bounds check's branch: diverged in each block's partial warp. */
  rows = instants(path, "GPU branch",
                  "kernel file line executed threads_executed diverged", "");
  ASSERT_STR_EQ(rows, "_Z7stencilPKfPf|_Z7stencilPKfPf.cu|3|40|1000|10\n"
                      "_Z7stencilPKfPf|_Z7stencilPKfPf.cu|4|120|3000|0\n"
                      "_Z7stencilPKfPf|_Z7stencilPKfPf.cu|5|160|4000|0\n"
                      "_Z7stencilPKfPf|_Z7stencilPKfPf.cu|8|40|1000|0\n");
  free(rows);
  /* The global load: 3 per thread, cached, 3 x 130 transactions. */
  rows = instants(path, "GPU global access",
                  "access size_bytes cached executed l2_transactions "
                  "theoretical_l2_transactions line",
                  "");
  ASSERT_STR_EQ(rows, "load|4|1|120|390|390|4\n"
                      "store|4||40|130|130|8\n");
  free(rows);
  /* Instructions: their classes, and the loops' predicates. */
  rows = instants(path, "GPU instruction",
                  "class threads_executed not_pred_off_threads_executed",
                  ARG_IS("line", "5"));
  ASSERT_STR_EQ(rows, "FP_32|4000|4000\n"
                      "CONTROL_FLOW|4000|3000\n");
  free(rows);
  rows = instants(path, "GPU shared access",
                  "access shared_transactions theoretical_shared_transactions",
                  "");
  ASSERT_STR_EQ(rows, "store|40|40\n"
                      "load|40|40\n");
  free(rows);

  /* `gpuperf query` finds them too. */
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    return; /* run through `make test` for the CLI */
  char cmd[2048], out[1100];
  snprintf(out, sizeof(out), "%s/query.txt", gp_test_tmpdir());
  snprintf(cmd, sizeof(cmd),
           "'%s' query '%s' \"SELECT count(*) AS n FROM slice s JOIN args a "
           "USING (arg_set_id) WHERE s.name = 'GPU instruction' AND a.key = "
           "'debug.file' AND a.display_value = '_Z7stencilPKfPf.cu'\" > '%s'",
           cli, path, out);
  ASSERT_EQ(wt_system(cmd), 0);
  char *text = wt_read_text(out);
  ASSERT_STR_EQ(text, "n\n--\n12\n");
  free(text);
}

TEST(writer_source_level_is_off_by_default) {
  const char *path = gp_test_path(0, "plain.pftrace");
  int collected;
  record("data_sources { config { name: \"gpu.renderstages\" } }\n", path,
         &collected);
  ASSERT_EQ(collected, 0); /* nor are the records collected */
  ASSERT_EQ(wt_tp_one(path, "SELECT count(*) FROM gpu_slice WHERE name GLOB "
                            "'*stencil*'"),
            1);
  ASSERT_EQ(wt_tp_one(path, "SELECT count(*) FROM slice WHERE name IN ('GPU "
                            "instruction', 'GPU branch', 'GPU global access', "
                            "'GPU shared access')"),
            0);
}
