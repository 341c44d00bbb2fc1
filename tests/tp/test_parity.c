/*
 * test_parity.c - our track, thread, process and machine tables against
 * Perfetto v58.2's on the same traces.
 *
 * No trace_processor_shell runs here, so the expected rows are derived
 * from Perfetto's importer source (track_event_tracker.cc: a thread's own
 * descriptor is its "thread_execution" track, unnamed; a process's own
 * descriptor a "process_track_event" named only by the descriptor's name;
 * children merge with same-named siblings into "*_merged_track_event"
 * tracks unless sibling_merge_behavior says otherwise; a thread- or
 * process-scoped child keeps its parent link only below a track that is
 * not a root, a global one always; process_tracker.cc: each machine's
 * thread 0 is the idle "swapper"; the prelude views' columns), and from
 * the table Perfetto printed for `gpuperf demo` (issue 17). Where
 * GPUPERF_PERFETTO_TP names a trace_processor_shell, the same queries are
 * also compared live with it, on the demo trace and every conformance
 * trace.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

static const char track_classes[] =
    "SELECT type, name, parent_id IS NOT NULL AS has_parent, count(*) AS n "
    "FROM track GROUP BY 1, 2, 3 ORDER BY 1, 2, 3";

/* A demo trace written by the CLI; its path (static storage). */
static const char *demo_trace(void) {
  const char *path = gp_test_path(0, "demo.pftrace");
  char *out = NULL, *err = NULL;
  int rc = tp_cli(&out, &err, "demo", "-o", path, NULL);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf demo: %d: %s", rc,
                 err ? err : "");
  free(out);
  free(err);
  return path;
}

static gp_tp *open_path(const char *path) {
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(path, NULL, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "open %s: %s", path, err.message);
  return tp;
}

TEST(tp_parity_demo_tables) {
  gp_tp *tp = open_path(demo_trace());
  /* Non-GPU rows: Perfetto v58.2's classification of the same trace. */
  tp_expect(tp, track_classes,
            "\"type\",\"name\",\"has_parent\",\"n\"\n"
            "\"gpu_counter\",\"Fan speed\",0,2\n"
            "\"gpu_counter\",\"GPU power\",0,2\n"
            "\"gpu_counter\",\"GPU power limit\",0,2\n"
            "\"gpu_counter\",\"GPU temperature\",0,2\n"
            "\"gpu_counter\",\"Memory clock\",0,2\n"
            "\"gpu_counter\",\"Utilization\",0,2\n"
            "\"gpu_counter\",\"dram__bytes_read.sum\",0,2\n"
            "\"gpu_counter\",\"dram__bytes_write.sum\",0,2\n"
            "\"gpu_counter\",\"lts__t_sector_hit_rate.pct\",0,2\n"
            "\"gpu_counter\",\"sm__cycles_active.avg\",0,2\n"
            "\"gpu_counter\","
            "\"sm__warps_active.avg.pct_of_peak_sustained_active\",0,2\n"
            "\"gpu_frequency\",\"gpufreq\",0,2\n"
            "\"gpu_render_stage\",\"Compute 1\",0,2\n"
            "\"gpu_render_stage\",\"Copy DtoH\",0,2\n"
            "\"gpu_render_stage\",\"Copy HtoD\",0,2\n"
            "\"gpu_render_stage\",\"Copy P2P\",0,2\n"
            "\"process_counter_track_event\",\"gpuperf dropped records\",0,1\n"
            "\"process_merged_track_event\",\"Device #0\",1,1\n"
            "\"process_merged_track_event\",\"Device #1\",1,1\n"
            "\"process_merged_track_event\",\"Simulated GPUs\",0,1\n"
            "\"process_merged_track_event\",\"Stream #2 (compute)\",1,2\n"
            "\"process_merged_track_event\",\"Stream #3 (copy)\",1,2\n"
            "\"process_merged_track_event\",\"Stream #4 (comm)\",1,2\n"
            "\"process_track_event\",\"[NULL]\",0,1\n"
            "\"thread_execution\",\"[NULL]\",0,1");
  /* Streams hang under their device, devices under "Simulated GPUs". */
  tp_expect(tp,
            "SELECT t.name, p.name AS parent FROM track t JOIN track p ON "
            "t.parent_id = p.id WHERE t.type = 'process_merged_track_event' "
            "ORDER BY t.id",
            "\"name\",\"parent\"\n"
            "\"Device #0\",\"Simulated GPUs\"\n"
            "\"Stream #3 (copy)\",\"Device #0\"\n"
            "\"Device #1\",\"Simulated GPUs\"\n"
            "\"Stream #3 (copy)\",\"Device #1\"\n"
            "\"Stream #2 (compute)\",\"Device #0\"\n"
            "\"Stream #2 (compute)\",\"Device #1\"\n"
            "\"Stream #4 (comm)\",\"Device #0\"\n"
            "\"Stream #4 (comm)\",\"Device #1\"");
  tp_expect(tp, "SELECT * FROM thread ORDER BY utid",
            "\"id\",\"utid\",\"tid\",\"name\",\"start_ts\",\"end_ts\","
            "\"upid\",\"is_main_thread\",\"is_idle\",\"machine_id\","
            "\"arg_set_id\"\n"
            "0,0,0,\"swapper\",\"[NULL]\",\"[NULL]\",0,1,1,0,\"[NULL]\"\n"
            "1,1,1000,\"gpuperf\",\"[NULL]\",\"[NULL]\",1,1,0,0,\"[NULL]\"");
  tp_expect(tp, "SELECT upid, pid, name, machine_id FROM process ORDER BY upid",
            "\"upid\",\"pid\",\"name\",\"machine_id\"\n"
            "0,0,\"[NULL]\",0\n1,1000,\"gpuperf\",0");
  /* release, version and arch are the recording host's (SystemInfo). */
  tp_expect(tp,
            "SELECT id, raw_id, name, sysname, release IS NOT NULL AS rel, "
            "num_cpus, android_build_fingerprint, "
            "android_device_manufacturer, android_sdk_version, "
            "system_ram_bytes, system_ram_gb, label_index FROM machine",
            "\"id\",\"raw_id\",\"name\",\"sysname\",\"rel\",\"num_cpus\","
            "\"android_build_fingerprint\",\"android_device_manufacturer\","
            "\"android_sdk_version\",\"system_ram_bytes\",\"system_ram_gb\","
            "\"label_index\"\n"
            "0,0,\"[NULL]\",\"Linux\",1,\"[NULL]\",\"[NULL]\",\"[NULL]\","
            "\"[NULL]\",\"[NULL]\",\"[NULL]\",0");
  gp_tp_close(tp);
}

/* A TrackDescriptor: uuid, parent (0 none), pid/tid (0 none), name
 * (NULL none), counter, sibling_merge_behavior (-1 unset), merge key. */
static void desc(tg *t, uint64_t uuid, uint64_t parent, int pid, int tid,
                 const char *name, bool counter, int merge, const char *key) {
  tg_packet(t, 1, 7, 0);
  gp__pb_begin(&t->w, 60);
  gp__pb_uint(&t->w, 1, uuid);
  if (parent)
    gp__pb_uint(&t->w, 5, parent);
  if (name)
    gp__pb_string(&t->w, 2, name);
  if (pid && !tid) {
    gp__pb_begin(&t->w, 3);
    gp__pb_int(&t->w, 1, pid);
    gp__pb_string(&t->w, 6, "proc-name");
    gp__pb_end(&t->w);
  }
  if (tid) {
    gp__pb_begin(&t->w, 4);
    gp__pb_int(&t->w, 1, pid);
    gp__pb_int(&t->w, 2, tid);
    gp__pb_string(&t->w, 5, "thread-name");
    gp__pb_end(&t->w);
  }
  if (counter) {
    gp__pb_begin(&t->w, 8);
    gp__pb_end(&t->w);
  }
  if (merge >= 0)
    gp__pb_uint(&t->w, 15, (uint64_t)merge);
  if (key)
    gp__pb_string(&t->w, 16, key);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* An instant on track uuid at ts (a counter value for counter tracks). */
static void event(tg *t, uint64_t ts, uint64_t uuid, bool counter) {
  tg_packet(t, ts, 7, 0);
  gp__pb_begin(&t->w, 11);
  gp__pb_uint(&t->w, 9, counter ? 4 : 3);
  gp__pb_uint(&t->w, 11, uuid);
  if (counter)
    gp__pb_int(&t->w, 30, 5);
  else
    gp__pb_string(&t->w, 23, "e");
  gp__pb_end(&t->w);
  tg_end(t);
}

TEST(tp_parity_track_descriptor_rules) {
  tg t;
  tg_init(&t);
  desc(&t, 1, 0, 10, 0, NULL, false, -1, NULL);  /* process 10 */
  desc(&t, 2, 0, 10, 11, NULL, false, -1, NULL); /* thread 11 */
  desc(&t, 3, 1, 0, 0, "A", false, -1, NULL);    /* under the process */
  desc(&t, 4, 3, 0, 0, "B", false, -1, NULL);    /* two "B" under A: */
  desc(&t, 5, 3, 0, 0, "B", false, -1, NULL);    /* one merged track */
  desc(&t, 6, 3, 0, 0, "C", false, 2, NULL);     /* merge NONE */
  desc(&t, 7, 2, 0, 0, "ctr", true, -1, NULL);   /* thread counter */
  desc(&t, 8, 0, 0, 0, "G", false, -1, NULL);    /* global */
  desc(&t, 9, 8, 0, 0, "H", false, -1, NULL);    /* under G */
  desc(&t, 10, 8, 0, 0, "gctr", true, -1, NULL); /* global counter */
  desc(&t, 11, 3, 0, 0, "K1", false, 3, "k");    /* merged by key */
  desc(&t, 12, 3, 0, 0, "K2", false, 3, "k");
  desc(&t, 13, 4, 0, 0, "D", false, -1, NULL); /* under B (not root) */
  uint64_t uuids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  for (size_t i = 0; i < sizeof(uuids) / sizeof(uuids[0]); i++)
    event(&t, 100 + i * 10, uuids[i], uuids[i] == 7 || uuids[i] == 10);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  tp_expect(tp,
            "SELECT t.type, t.name, p.name AS parent, count(*) AS n FROM "
            "track t LEFT JOIN track p ON t.parent_id = p.id GROUP BY 1, 2, 3 "
            "ORDER BY 1, 2, 3",
            "\"type\",\"name\",\"parent\",\"n\"\n"
            "\"global_counter_track_event\",\"gctr\",\"G\",1\n"
            "\"global_merged_track_event\",\"G\",\"[NULL]\",1\n"
            "\"global_merged_track_event\",\"H\",\"G\",1\n"
            "\"process_merged_track_event\",\"A\",\"[NULL]\",1\n"
            "\"process_merged_track_event\",\"B\",\"A\",1\n"
            "\"process_merged_track_event\",\"D\",\"B\",1\n"
            "\"process_merged_track_event\",\"K1\",\"A\",1\n"
            "\"process_track_event\",\"[NULL]\",\"[NULL]\",1\n"
            "\"process_track_event\",\"C\",\"A\",1\n"
            "\"thread_counter_track_event\",\"ctr\",\"[NULL]\",1\n"
            "\"thread_execution\",\"[NULL]\",\"[NULL]\",1");
  /* Both "B" descriptors' events are on the one merged track; both
   * key-merged ones on "K1"'s. */
  tp_expect(tp,
            "SELECT t.name, count(*) AS n FROM slice s JOIN track t ON "
            "s.track_id = t.id WHERE t.name IN ('B', 'K1') GROUP BY 1 "
            "ORDER BY 1",
            "\"name\",\"n\"\n\"B\",2\n\"K1\",2");
  /* Names of threads and processes go to their tables, not the tracks;
   * the process descriptor gave its process its main thread. */
  tp_expect(tp, "SELECT tid, name, is_idle FROM thread ORDER BY utid",
            "\"tid\",\"name\",\"is_idle\"\n0,\"swapper\",1\n"
            "10,\"[NULL]\",0\n11,\"thread-name\",0");
  tp_expect(tp, "SELECT pid, name FROM process ORDER BY upid",
            "\"pid\",\"name\"\n0,\"[NULL]\"\n10,\"proc-name\"");
  gp_tp_close(tp);
}

/* Track trees Perfetto does not resolve (track_event_tracker.cc): chains
 * of 99 ancestors and more, a loop, a parent never described. Their events
 * are dropped and counted, a chain of 98 is kept; the rows are
 * trace_processor_shell v58.2's on this trace. */
TEST(tp_parity_track_hierarchy_faults) {
  tg t;
  tg_init(&t);
  /* 1 <- 2 <- ... <- 101 (101 has 100 ancestors), 102 under 101. */
  desc(&t, 1, 0, 0, 0, "root", false, -1, NULL);
  for (uint64_t u = 2; u <= 102; u++)
    desc(&t, u, u - 1, 0, 0,
         u == 101   ? "deep100"
         : u == 102 ? "deep101"
                    : "c",
         false, 2, NULL);
  desc(&t, 200, 201, 0, 0, "loopA", false, -1, NULL); /* 200 <-> 201 */
  desc(&t, 201, 200, 0, 0, "loopB", false, -1, NULL);
  desc(&t, 300, 999, 0, 0, "orphan", false, -1, NULL); /* 999: never */
  desc(&t, 400, 98, 0, 0, "ok", false, -1, NULL);      /* 98 ancestors */
  event(&t, 90, 400, false);
  event(&t, 100, 101, false);
  event(&t, 110, 102, false);
  event(&t, 120, 102, false);
  event(&t, 130, 200, false);
  event(&t, 140, 300, false);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  tp_expect(tp,
            "SELECT t.name, count(*) AS n FROM slice s JOIN track t ON "
            "s.track_id = t.id GROUP BY 1 ORDER BY 1",
            "\"name\",\"n\"\n\"ok\",1");
  /* Counted for each descriptor and each event of a bad tree: 100, 101
   * and 102 have 99 or more ancestors (descriptors 3, events 3); the loop
   * 2 + 1; the orphan 1 + 1. */
  tp_expect(tp,
            "SELECT name, value FROM stats WHERE name LIKE '%hierarchy%' "
            "AND value > 0 ORDER BY name",
            "\"name\",\"value\"\n"
            "\"track_event_track_hierarchy_loop\",3\n"
            "\"track_event_track_hierarchy_too_deep\",6\n"
            "\"track_hierarchy_missing_uuid\",2");
  gp_tp_close(tp);
}

/* Records the suite's OpenCL sample on PoCL into a trace; its path, or
 * NULL with *why set when it cannot be recorded here. */
static const char *opencl_trace(const char **why) {
  const char *cli = getenv("GPUPERF_CLI"), *build = getenv("GPUPERF_BUILD");
  if (!cli || access(cli, X_OK) != 0 || !build) {
    *why = "GPUPERF_CLI and GPUPERF_BUILD are not set (run via make test)";
    return NULL;
  }
#if GP_TEST_SANITIZED
  *why = "gpuperf record preloads nothing in a sanitizer build";
  return NULL;
#endif
  static char sample[1024];
  snprintf(sample, sizeof(sample), "%s/tests/opencl-sample", build);
  if (access(sample, X_OK) != 0) {
    *why = "tests/opencl-sample is not built";
    return NULL;
  }
  setenv("POCL_CACHE_DIR", gp_test_path(3, "pocl-cache"), 1);
  setenv("POCL_DEVICES", "pthread", 1);
  setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
  setenv("OCL_ICD_FILENAMES", "libpocl.so.2", 1);
  unsetenv("OCL_ICD_VENDORS");
  const char *trace = gp_test_path(4, "ocl.pftrace");
  char *out = NULL, *err = NULL;
  int rc = tp_cli(&out, &err, "record", "-q", "-o", trace, "--", sample, "-n",
                  "1", NULL);
  if (rc == 77) {
    *why = "no OpenCL device";
    trace = NULL;
  } else if (rc != 0) {
    gp_test_fail(__FILE__, __LINE__, "gpuperf record: %d: %s", rc,
                 err ? err : "");
  }
  free(out);
  free(err);
  return trace;
}

/* A recorded OpenCL program: its tracks are laid out as Perfetto lays out
 * the same descriptors. */
TEST(tp_parity_recorded_opencl) {
  const char *why = NULL;
  const char *trace = opencl_trace(&why);
  if (!trace)
    SKIP("%s", why);
  gp_tp *tp = open_path(trace);
  tp_expect(tp,
            "SELECT type, name, parent_id IS NOT NULL AS has_parent, "
            "count(*) AS n FROM track WHERE type NOT LIKE 'gpu%' "
            "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
            "\"type\",\"name\",\"has_parent\",\"n\"\n"
            "\"process_counter_track_event\",\"gpuperf dropped records\",0,1\n"
            "\"process_counter_track_event\",\"gpuperf writer overhead\",0,1\n"
            "\"process_merged_track_event\",\"Device #0\",1,1\n"
            "\"process_merged_track_event\",\"OpenCL\",0,1\n"
            "\"process_merged_track_event\","
            "\"Stream #1 (OpenCL queue 1 (in-order))\",1,1\n"
            "\"process_merged_track_event\","
            "\"Stream #2 (OpenCL queue 2 (in-order))\",1,1\n"
            "\"process_merged_track_event\","
            "\"Stream #3 (OpenCL queue 3 (out-of-order))\",1,1\n"
            "\"process_track_event\",\"[NULL]\",0,1\n"
            "\"thread_execution\",\"[NULL]\",0,2");
  /* The OpenCL calls are slices of their threads' execution tracks. */
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM slice s JOIN track t ON "
                       "s.track_id = t.id WHERE t.type = 'thread_execution' "
                       "AND s.name = 'clSetKernelArg'"),
            0);
  tp_expect(tp,
            "SELECT tid, name, is_idle, is_main_thread FROM thread WHERE "
            "utid = 0",
            "\"tid\",\"name\",\"is_idle\",\"is_main_thread\"\n"
            "0,\"swapper\",1,1");
  gp_tp_close(tp);
}

static void compare_live(const char *shell, const char *trace) {
  gp_tp *tp = open_path(trace);
  tp_parity_compare(shell, tp, trace);
  gp_tp_close(tp);
}

TEST(tp_parity_live_with_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || access(shell, X_OK) != 0)
    SKIP("GPUPERF_PERFETTO_TP does not name Perfetto's trace_processor_shell: "
         "the expected rows of tp_parity_* stand in for it");
  compare_live(shell, demo_trace());
  const char *why = NULL;
  const char *ocl = opencl_trace(&why);
  if (ocl)
    compare_live(shell, ocl);
  else
    printf("no recorded OpenCL program to compare: %s\n", why);
  tp_each_conformance_trace(compare_live, shell);
}
