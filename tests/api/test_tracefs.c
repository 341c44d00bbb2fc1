/*
 * test_tracefs.c - the kernel's GPU trace events: trace_pipe lines parsed
 * (tasks with dashes, microsecond timestamps, key=value fields); the
 * fixture tree's trace_pipe read into records; recordings on that tree,
 * with GPUPERF_TRACEFS or a linux.ftrace data source, written as
 * traced_probes writes FtraceEventBundle packets and imported into
 * Perfetto's gpufreq and GPU Memory counters, DRM scheduler ring slices
 * and fence timelines (the same rows as Perfetto's trace_processor_shell
 * where GPUPERF_PERFETTO_TP is set); a warning, and a trace all the same,
 * where tracefs cannot be read; and, where tracefs is mounted and
 * writable (root), a private instance made with the GPU events this
 * kernel has enabled, and removed at stop. test_tracefs_real.c records a
 * real program.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "backend/linux/tracefs.h"
#include "harness.h"
#include "testutil.h"
#include "opencl/oclutil.h"

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

TEST(tracefs_parse_lines) {
  gp__tracefs_event ev;
  ASSERT(gp__tracefs_parse("     glmark2-es2-1234    [002] .....   "
                           "100.600003: gpu_mem_total: gpu_id=1 pid=1234 "
                           "size=65536",
                           &ev));
  ASSERT_STR_EQ(ev.task, "glmark2-es2");
  ASSERT_EQ(ev.pid, 1234);
  ASSERT_EQ(ev.cpu, 2);
  ASSERT_EQ(ev.ts_ns, 100600003000ull);
  ASSERT_STR_EQ(ev.event, "gpu_mem_total");
  uint64_t v = 0;
  ASSERT(gp__tracefs_field(&ev, "gpu_id", &v) && v == 1);
  ASSERT(gp__tracefs_field(&ev, "pid", &v) && v == 1234);
  ASSERT(gp__tracefs_field(&ev, "size", &v) && v == 65536);
  ASSERT(!gp__tracefs_field(&ev, "state", &v));
  ASSERT(gp__tracefs_parse("          <idle>-0       [000] d..2.   "
                           "7.000000001: gpu_frequency: state=500000 "
                           "gpu_id=0",
                           &ev));
  ASSERT_STR_EQ(ev.task, "<idle>");
  ASSERT_EQ(ev.ts_ns, 7000000001ull); /* nanoseconds when given */
  /* A scheduler event: "key:value" fields after commas. */
  ASSERT(gp__tracefs_parse(
      "  kworker/u8:2-77 [003] ..... 12.5: drm_run_job: dev=0000:03:00.0, "
      "id=881, fence=3:4, ring=gfx_0.0.0, job count:1, hw job count:2",
      &ev));
  ASSERT_STR_EQ(ev.task, "kworker/u8:2");
  ASSERT_EQ(ev.ts_ns, 12500000000ull);
  ASSERT(gp__tracefs_field(&ev, "id", &v) && v == 881);
  ASSERT(gp__tracefs_field(&ev, "count", &v) && v == 1);
  ASSERT(!gp__tracefs_parse("# tracer: nop", &ev));
}

/* Reads the fixture's trace_pipe, the events of mask, in this process
 * (no recording, so that a sanitizer build runs it too). */
static void read_fixture(uint32_t mask) {
  char *root = realpath("tests/data/linux/tracefs", NULL);
  if (!root)
    SKIP("tests/data/linux not found (run from the source tree)");
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DMA_FENCE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_GPU_FTRACE));
  gp__tracefs_options o = {root, mask, 0, 0};
  ASSERT_OK(gp__tracefs_start(&o, NULL, 0));
  gp__tracefs_stop(); /* a fixture's file is read whole first */
  ASSERT_OK(gp_activity_flush_all(0));
  free(root);
}

static const gp_activity_gpu_ftrace *gpu_ftrace(size_t i) {
  const gp_activity_gpu_ftrace *r =
      (const void *)tu_find(GP_ACTIVITY_KIND_GPU_FTRACE, i);
  ASSERT_NOT_NULL(r);
  return r;
}

/* Each event line of the fixture as one record, in file order, holding
 * the fields the line prints (the values below are the fixture's text):
 * dma_fence events as DMA_FENCE records, the others as GPU_FTRACE
 * records; dma_fence_destroy and drm_sched_job_wait_dep, which Perfetto
 * has no message for, are not read. */
TEST(tracefs_records_in_process) {
  read_fixture((1u << GP_FTRACE_EVENT_COUNT) - 1);
  /* Nine fence events (unbound included: the importers drop it). */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DMA_FENCE), 9);
  const gp_activity_dma_fence *f =
      (const void *)tu_find(GP_ACTIVITY_KIND_DMA_FENCE, 0);
  ASSERT_EQ(f->event, GP_DMA_FENCE_EMIT);
  ASSERT_EQ(f->timestamp, 100700004000ull);
  ASSERT_EQ(f->thread_id, 301);
  ASSERT_EQ(f->cpu, 1);
  ASSERT_EQ(f->context, 7);
  ASSERT_EQ(f->seqno, 12);
  ASSERT_STR_EQ(gp_activity_string(f->driver_id), "v3d");
  ASSERT_STR_EQ(gp_activity_string(f->timeline_id), "v3d_render");
  f = (const void *)tu_find(GP_ACTIVITY_KIND_DMA_FENCE, 6);
  ASSERT_EQ(f->event, GP_DMA_FENCE_WAIT_START);
  ASSERT_EQ(f->thread_id, 1234);
  ASSERT_EQ(f->context, 9);
  ASSERT_EQ(f->seqno, 42);
  /* 2 gpu_frequency, 2 gpu_mem_total, 6 old scheduler events, 10 new. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_GPU_FTRACE), 20);
  const gp_activity_gpu_ftrace *g = gpu_ftrace(0);
  ASSERT_EQ(g->event, GP_FTRACE_GPU_FREQUENCY);
  ASSERT_EQ(g->timestamp, 100000001000ull);
  ASSERT_EQ(g->cpu, 0);
  ASSERT_EQ(g->thread_id, 0);
  ASSERT_EQ(g->gpu_id, 0);
  ASSERT_EQ(g->value, 500000);
  g = gpu_ftrace(2);
  ASSERT_EQ(g->event, GP_FTRACE_GPU_MEM_TOTAL);
  ASSERT_EQ(g->pid, 1234);
  ASSERT_EQ(g->value, 65536);
  ASSERT_EQ(g->cpu, 2);
  g = gpu_ftrace(4); /* drm_sched_job: entity=00000000a1b2c3d4, id=41 */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_JOB);
  ASSERT_EQ(g->entity, 0xa1b2c3d4ull);
  ASSERT_EQ(g->fence, 0xdeadbeefull);
  ASSERT_EQ(g->job_id, 41);
  ASSERT_STR_EQ(gp_activity_string(g->ring_id), "v3d_render");
  ASSERT_EQ(g->job_count, 1);
  ASSERT_EQ(g->hw_job_count, 0);
  g = gpu_ftrace(7); /* drm_sched_process_job: fence=00000000deadbeef */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_PROCESS_JOB);
  ASSERT_EQ(g->fence, 0xdeadbeefull);
  g = gpu_ftrace(10); /* queue: dev=fec00000.v3d, fence=9:42, v3d_bin */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_JOB_QUEUE);
  ASSERT_STR_EQ(gp_activity_string(g->dev_id), "fec00000.v3d");
  ASSERT_STR_EQ(gp_activity_string(g->ring_id), "v3d_bin");
  ASSERT_EQ(g->fence_context, 9);
  ASSERT_EQ(g->fence_seqno, 42);
  ASSERT_EQ(g->client_id, 7);
  g = gpu_ftrace(11); /* add_dep: fence=10:7 depends on fence=9:42 */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_JOB_ADD_DEP);
  ASSERT_EQ(g->fence_context, 10);
  ASSERT_EQ(g->fence_seqno, 7);
  ASSERT_EQ(g->dep_context, 9);
  ASSERT_EQ(g->dep_seqno, 42);
  g = gpu_ftrace(14); /* unschedulable: 10:7 on unsignalled 9:42 */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE);
  ASSERT_EQ(g->dep_context, 9);
  ASSERT_EQ(g->dep_seqno, 42);
  g = gpu_ftrace(16); /* done: fence=9:42 signaled */
  ASSERT_EQ(g->event, GP_FTRACE_DRM_SCHED_JOB_DONE);
  ASSERT_EQ(g->timestamp, 101201250000ull);
  ASSERT_EQ(g->fence_context, 9);
  ASSERT_EQ(g->fence_seqno, 42);
  uint64_t counts[GP_FTRACE_EVENT_COUNT];
  gp__tracefs_counts(counts);
  ASSERT_EQ(counts[GP_FTRACE_DRM_SCHED_JOB_QUEUE], 3);
  ASSERT_EQ(counts[GP_FTRACE_DMA_FENCE_SIGNALED], 3);
  ASSERT_EQ(gp__tracefs_malformed(), 0);
}

/* Only the events asked for are read. */
TEST(tracefs_reads_only_events_asked) {
  read_fixture(1u << GP_FTRACE_DMA_FENCE_INIT | 1u << GP_FTRACE_GPU_FREQUENCY);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DMA_FENCE), 3);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_GPU_FTRACE), 2);
  uint64_t counts[GP_FTRACE_EVENT_COUNT];
  ASSERT_EQ(gp__tracefs_counts(counts),
            1u << GP_FTRACE_DMA_FENCE_INIT | 1u << GP_FTRACE_GPU_FREQUENCY);
}

#if HAVE_TP

/*
 * Records the OpenCL sample on the tracefs fixture tree: with config
 * (the text of a TraceConfig, given with -c) or, where it is NULL, with
 * the GPUPERF_TRACEFS shorthand alone; GPUPERF_TRACEFS names the
 * fixture's root, or tracefs_env where it is not NULL. Returns the trace,
 * opened, and its path in *path; gpuperf's stderr into *err_out if not
 * NULL (skips where the test cannot run).
 */
static gp_tp *record_with(const char *name, const char *config,
                          const char *tracefs_env, const char **path,
                          char **err_out) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  ocl_env();
  static char sample[512];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  char *root = realpath("tests/data/linux/tracefs", NULL);
  if (!root)
    SKIP("tests/data/linux not found (run from the source tree)");
  char env1[600];
  snprintf(env1, sizeof(env1), "GPUPERF_TRACEFS=%s",
           tracefs_env ? tracefs_env : root);
  free(root);
  const char *trace = gp_test_path(0, name);
  char cpath[600];
  snprintf(cpath, sizeof(cpath), "%s.config", trace);
  if (config) {
    FILE *f = fopen(cpath, "w");
    ASSERT_NOT_NULL(f);
    fputs(config, f);
    fclose(f);
  }
  char *argv[] = {(char *)cli, "record", "-q",   "-o", (char *)trace, "-c",
                  cpath,       "--",     sample, "-n", "2",           NULL};
  if (!config) /* no -c */
    memmove(&argv[5], &argv[7], 5 * sizeof(char *));
  char *env[] = {env1, NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, env, 120, &out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d:\n%s", rc,
                 err ? err : "");
  free(out);
  if (err_out)
    *err_out = err;
  else
    free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  if (path)
    *path = trace;
  return tp;
}

/* Asserts sql's rows on tp are expected and, where GPUPERF_PERFETTO_TP
 * names Perfetto's trace_processor_shell, that it gives the same on the
 * same trace. */
static void expect_as_perfetto(gp_tp *tp, const char *trace, const char *sql,
                               const char *expected) {
  tp_expect(tp, sql, expected);
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || !*shell)
    return;
  char *theirs = tp_perfetto_csv(shell, trace, sql);
  tp_assert_csv(theirs, expected, "Perfetto's trace_processor_shell");
  free(theirs);
}

/* Perfetto's rules: gpufreq in kHz; GPU Memory global for pid 0, per
 * process otherwise; the kernel's gpu_id is the gpu. */
static const char counters_sql[] =
    "SELECT t.name, t.type, extract_arg(t.dimension_arg_set_id, 'gpu') AS "
    "gpu, c.ts, CAST(c.value AS INT) AS v FROM counter c JOIN counter_track "
    "t ON t.id = c.track_id WHERE t.type IN ('gpu_frequency', "
    "'gpu_memory', 'process_gpu_memory') ORDER BY c.ts";

TEST(tracefs_fixture_events_reach_trace) {
  const char *trace;
  gp_tp *tp = record_with("tracefs.pftrace", NULL, NULL, &trace, NULL);
  expect_as_perfetto(tp, trace, counters_sql,
                     "\"name\",\"type\",\"gpu\",\"ts\",\"v\"\n"
                     "\"gpufreq\",\"gpu_frequency\",0,100000001000,500000\n"
                     "\"GPU Memory\",\"gpu_memory\",0,100500002000,1048576\n"
                     "\"GPU Memory\",\"process_gpu_memory\",0,100600003000,"
                     "65536\n"
                     "\"gpufreq\",\"gpu_frequency\",0,101000001000,250000\n");
  expect_as_perfetto(tp, trace,
                     "SELECT name, type, unit, gpu_id FROM gpu_counter_track "
                     "WHERE type IN ('gpu_frequency', 'gpu_memory', "
                     "'process_gpu_memory') ORDER BY id",
                     "\"name\",\"type\",\"unit\",\"gpu_id\"\n"
                     "\"gpufreq\",\"gpu_frequency\",\"kHz\",0\n"
                     "\"GPU Memory\",\"gpu_memory\",\"bytes\",0\n"
                     "\"GPU Memory\",\"process_gpu_memory\",\"bytes\",0\n");
  ASSERT_EQ(tp_int(tp, "SELECT p.pid FROM process_counter_track t JOIN "
                       "process p USING (upid) WHERE t.type = "
                       "'process_gpu_memory'"),
            1234);
  gp_tp_close(tp);
}

/* The scheduler's events (to Linux 6.15 and from 6.16) as Perfetto's
 * DrmTracker reads them: an instant "drm_sched_job_queue" on the queuing
 * thread, a "job" slice on the ring's track from run to done, a flow
 * from the one to the other; a job never run (11:5) is only queued. */
TEST(tracefs_sched_jobs_as_perfetto) {
  const char *trace;
  gp_tp *tp = record_with("sched.pftrace", NULL, NULL, &trace, NULL);
  expect_as_perfetto(
      tp, trace,
      "SELECT s.name, s.ts, s.dur, t.name AS track FROM slice s JOIN track t "
      "ON t.id = s.track_id WHERE s.name IN ('job', 'drm_sched_job_queue') "
      "ORDER BY s.ts",
      "\"name\",\"ts\",\"dur\",\"track\"\n"
      "\"drm_sched_job_queue\",101100000000,0,\"[NULL]\"\n"
      "\"job\",101100500000,2000000,\"sched-v3d_render\"\n"
      "\"drm_sched_job_queue\",101101000000,0,\"[NULL]\"\n"
      "\"job\",101102600000,400000,\"sched-v3d_render\"\n"
      "\"drm_sched_job_queue\",101200000000,0,\"[NULL]\"\n"
      "\"drm_sched_job_queue\",101200100000,0,\"[NULL]\"\n"
      "\"job\",101200250000,1000000,\"sched-v3d_bin\"\n"
      "\"job\",101201300000,200000,\"sched-v3d_render\"\n"
      "\"drm_sched_job_queue\",101300000000,0,\"[NULL]\"\n");
  expect_as_perfetto(
      tp, trace,
      "SELECT so.name AS out_name, so.ts AS out_ts, si.name AS in_name, "
      "si.ts AS in_ts FROM flow f JOIN slice so ON so.id = f.slice_out "
      "JOIN slice si ON si.id = f.slice_in WHERE si.name = 'job' ORDER BY "
      "si.ts",
      "\"out_name\",\"out_ts\",\"in_name\",\"in_ts\"\n"
      "\"drm_sched_job_queue\",101100000000,\"job\",101100500000\n"
      "\"drm_sched_job_queue\",101101000000,\"job\",101102600000\n"
      "\"drm_sched_job_queue\",101200000000,\"job\",101200250000\n"
      "\"drm_sched_job_queue\",101200100000,\"job\",101201300000\n");
  gp_tp_close(tp);
  /* The events no slice shows (dependencies), field by field as
   * Perfetto's ftrace_event table reads them: the fixture's values. */
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || !*shell)
    return;
  char *theirs = tp_perfetto_csv(
      shell, trace,
      "SELECT e.name, e.ts, a.key, a.display_value AS v FROM ftrace_event e "
      "JOIN args a USING (arg_set_id) WHERE e.name GLOB "
      "'drm_sched_job_[au]*' ORDER BY e.ts, a.key");
  tp_assert_csv(theirs,
                "\"name\",\"ts\",\"key\",\"v\"\n"
                "\"drm_sched_job_add_dep\",101200050000,\"ctx\",\"9\"\n"
                "\"drm_sched_job_add_dep\",101200050000,\"fence_context\","
                "\"10\"\n"
                "\"drm_sched_job_add_dep\",101200050000,\"fence_seqno\",\"7\"\n"
                "\"drm_sched_job_add_dep\",101200050000,\"seqno\",\"42\"\n"
                "\"drm_sched_job_add_dep\",101200060000,\"ctx\",\"3\"\n"
                "\"drm_sched_job_add_dep\",101200060000,\"fence_context\","
                "\"10\"\n"
                "\"drm_sched_job_add_dep\",101200060000,\"fence_seqno\",\"7\"\n"
                "\"drm_sched_job_add_dep\",101200060000,\"seqno\",\"1\"\n"
                "\"drm_sched_job_unschedulable\",101200200000,\"ctx\",\"9\"\n"
                "\"drm_sched_job_unschedulable\",101200200000,"
                "\"fence_context\",\"10\"\n"
                "\"drm_sched_job_unschedulable\",101200200000,"
                "\"fence_seqno\",\"7\"\n"
                "\"drm_sched_job_unschedulable\",101200200000,\"seqno\","
                "\"42\"\n",
                "Perfetto's ftrace_event args");
  free(theirs);
}

/* dma_fence events, imported as Perfetto's DrmTracker does: a track per
 * fence context ("unbound" ignored), a "fence" slice from emit (or init,
 * on a timeline that never emits) to signaled, pending fences in turn,
 * and the task's dma_fence_wait on its thread's track. */
static void expect_fences(gp_tp *tp, const char *trace) {
  expect_as_perfetto(
      tp, trace,
      "SELECT t.name AS track, extract_arg(t.dimension_arg_set_id, "
      "'name') AS timeline, extract_arg(t.dimension_arg_set_id, "
      "'context') AS ctx, s.name, s.ts, s.dur, extract_arg(s.arg_set_id, "
      "'fence seqno') AS seqno FROM slice s JOIN track t ON t.id = "
      "s.track_id WHERE t.type = 'drm_fence' ORDER BY s.ts",
      "\"track\",\"timeline\",\"ctx\",\"name\",\"ts\",\"dur\",\"seqno\"\n"
      "\"fence-v3d_render-7\",\"v3d_render\",7,\"fence\",100700004000,"
      "100000,12\n"
      "\"fence-v3d_bin-9\",\"v3d_bin\",9,\"fence\",100800000000,100000,"
      "41\n"
      "\"fence-v3d_bin-9\",\"v3d_bin\",9,\"fence\",100800100000,200000,"
      "42\n");
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu_track WHERE type = "
                       "'drm_fence'"),
            2);
  expect_as_perfetto(
      tp, trace,
      "SELECT s.name, s.ts, s.dur, t.type, th.tid, extract_arg("
      "s.arg_set_id, 'fence context') AS ctx, extract_arg(s.arg_set_id, "
      "'fence seqno') AS seqno FROM slice s JOIN thread_track t ON t.id "
      "= s.track_id JOIN thread th USING (utid) WHERE s.name = "
      "'dma_fence_wait'",
      "\"name\",\"ts\",\"dur\",\"type\",\"tid\",\"ctx\",\"seqno\"\n"
      "\"dma_fence_wait\",100800200000,100000,\"thread_execution\",1234,"
      "9,42\n");
}

TEST(tracefs_dma_fence_slices) {
  const char *trace;
  gp_tp *tp = record_with("fence.pftrace", NULL, NULL, &trace, NULL);
  expect_fences(tp, trace);
  gp_tp_close(tp);
}

/* A linux.ftrace data source, without gpu.counters: the events it names
 * and no others (no GPU Memory, no scheduler slices). */
TEST(tracefs_linux_ftrace_config) {
  const char *trace;
  gp_tp *tp = record_with(
      "config.pftrace",
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  ftrace_events: \"dma_fence/*\"\n"
      "  ftrace_events: \"power/gpu_frequency\"\n"
      "  buffer_size_kb: 1024 drain_period_ms: 50 } } }\n",
      NULL, &trace, NULL);
  expect_fences(tp, trace);
  expect_as_perfetto(tp, trace, counters_sql,
                     "\"name\",\"type\",\"gpu\",\"ts\",\"v\"\n"
                     "\"gpufreq\",\"gpu_frequency\",0,100000001000,500000\n"
                     "\"gpufreq\",\"gpu_frequency\",0,101000001000,250000\n");
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM slice WHERE name IN ('job', "
                       "'drm_sched_job_queue')"),
            0);
  gp_tp_close(tp);
}

/* Counts the lines of text that hold needle. */
static int lines_with(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, needle)); p++)
    n++;
  return n;
}

/* Where tracefs cannot be read, one warning names the cause and the fix,
 * and the trace is written all the same. */
TEST(tracefs_missing_warns_once) {
  const char *trace;
  char *err = NULL;
  gp_tp *tp = record_with(
      "missing.pftrace",
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"linux.ftrace\" ftrace_config { "
      "ftrace_events: \"dma_fence/dma_fence_init\" } } }\n",
      "/nonexistent/tracing", &trace, &err);
  ASSERT_NOT_NULL(err);
  if (lines_with(err, "linux.ftrace") != 1 ||
      !strstr(err, "/nonexistent/tracing is not a tracefs") ||
      !strstr(err, "GPUPERF_TRACEFS"))
    gp_test_fail(__FILE__, __LINE__, "expected one warning, got:\n%s", err);
  free(err);
  /* The program's own work is in the trace. */
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM gpu_slice"), 0);
  gp_tp_close(tp);
}

/* As a user tracefs refuses (nobody, where tracefs is root's alone): one
 * warning naming the cause and the fix, and the trace all the same. Run
 * with `gpuperf demo -c` (a session in the CLI's own process). */
TEST(tracefs_not_root_warns_once) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("setpriv runs the CLI without the sanitizer's runtime setup");
#endif
  if (geteuid() != 0)
    SKIP("only root can run the CLI as another user here");
  if (system("command -v setpriv >/dev/null 2>&1") != 0)
    SKIP("no setpriv (util-linux) to run the CLI as nobody");
  if (access("/sys/kernel/tracing/events", F_OK) != 0)
    SKIP("tracefs is not mounted on /sys/kernel/tracing");
  const char *as_nobody = "setpriv --reuid=65534 --regid=65534 "
                          "--clear-groups";
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "%s test -r /sys/kernel/tracing/events/enable",
           as_nobody);
  if (system(cmd) == 0)
    SKIP("nobody may read tracefs here: nothing to warn about");
  char dir[] = "/tmp/gpuperf-ftrace-XXXXXX";
  ASSERT_NOT_NULL(mkdtemp(dir));
  ASSERT_EQ(chmod(dir, 0777), 0);
  char cfg[128], trace[128], err[128];
  snprintf(cfg, sizeof(cfg), "%s/c.txt", dir);
  snprintf(trace, sizeof(trace), "%s/t.pftrace", dir);
  snprintf(err, sizeof(err), "%s/err.txt", dir);
  FILE *f = fopen(cfg, "w");
  ASSERT_NOT_NULL(f);
  fputs("data_sources { config { name: \"gpu.renderstages\" } }\n"
        "data_sources { config { name: \"linux.ftrace\" ftrace_config { "
        "ftrace_events: \"dma_fence/dma_fence_init\" } } }\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof(cmd),
           "cd %s && env -u GPUPERF_TRACEFS %s '%s' demo -c %s -o %s "
           ">/dev/null 2>%s",
           dir, as_nobody, cli, cfg, trace, err);
  int rc = system(cmd);
  char *text = tp_read_file(err, NULL);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "%s exited %d:\n%s", cmd, rc,
                 text ? text : "");
  ASSERT_NOT_NULL(text);
  if (lines_with(text, "linux.ftrace") != 1 ||
      !strstr(text, "Permission denied") || !strstr(text, "as root"))
    gp_test_fail(__FILE__, __LINE__, "expected one warning, got:\n%s", text);
  free(text);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM gpu_slice"), 0);
  gp_tp_close(tp);
  unlink(cfg);
  unlink(trace);
  unlink(err);
  rmdir(dir);
}

/* Records one part of a recording in dir (a session started from
 * GPUPERF_RECORD_DIR, as in each process `gpuperf record` runs) on the
 * fixture, and returns how many gpufreq values its part holds. */
static int64_t record_part(const char *dir, uint32_t seq) {
  gp_session *s = NULL;
  ASSERT_OK(gp_session_start_from_env(&s));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  char part[600];
  snprintf(part, sizeof(part), "%s/%u.pftrace", dir, seq);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(part, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", part, e.message);
  int64_t n = tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track "
                         "t ON t.id = c.track_id WHERE t.type = "
                         "'gpu_frequency'");
  gp_tp_close(tp);
  return n;
}

/* The kernel's events are the machine's: of the processes of one
 * recording, only the one holding the lock on the recording's folder
 * reads them (here the test holds it first, as another process would). */
TEST(tracefs_one_reader_per_recording) {
  char *root = realpath("tests/data/linux/tracefs", NULL);
  if (!root)
    SKIP("tests/data/linux not found (run from the source tree)");
  const char *dir = gp_test_path(0, "parts");
  ASSERT_EQ(mkdir(dir, 0755), 0);
  char cfg[600];
  snprintf(cfg, sizeof(cfg), "%s/config.pbtxt", dir);
  FILE *f = fopen(cfg, "w");
  ASSERT_NOT_NULL(f);
  fputs("data_sources { config { name: \"linux.ftrace\" ftrace_config { "
        "ftrace_events: \"power/gpu_frequency\" } } }\n",
        f);
  fclose(f);
  setenv("GPUPERF_RECORD_DIR", dir, 1);
  setenv("GPUPERF_RECORD_CONFIG", cfg, 1);
  setenv("GPUPERF_TRACEFS", root, 1);
  free(root);
  int other = open(dir, O_RDONLY | O_DIRECTORY);
  ASSERT(other >= 0);
  ASSERT_EQ(flock(other, LOCK_EX | LOCK_NB), 0);
  ASSERT_EQ(record_part(dir, 1), 0); /* the other process reads them */
  close(other);
  ASSERT_EQ(record_part(dir, 2), 2); /* none does: this one */
  unsetenv("GPUPERF_RECORD_DIR");
  unsetenv("GPUPERF_RECORD_CONFIG");
  unsetenv("GPUPERF_TRACEFS");
}

#else

TEST(tracefs_one_reader_per_recording) {
  SKIP("built without the trace processor");
}

TEST(tracefs_not_root_warns_once) {
  SKIP("built without the trace processor");
}

TEST(tracefs_dma_fence_slices) {
  SKIP("built without the trace processor");
}

TEST(tracefs_fixture_events_reach_trace) {
  SKIP("built without the trace processor");
}

TEST(tracefs_sched_jobs_as_perfetto) {
  SKIP("built without the trace processor");
}

TEST(tracefs_linux_ftrace_config) {
  SKIP("built without the trace processor");
}

TEST(tracefs_missing_warns_once) {
  SKIP("built without the trace processor");
}

#endif

/*
 * The real tracefs into root, or skips. Where it is not mounted and we
 * are root, mounts it as a user would (mount -t tracefs nodev
 * /sys/kernel/tracing), but in a mount namespace of this test's process
 * alone, so that nothing outside the test sees it.
 */
static void real_tracefs(char *root, size_t size) {
  if (gp__tracefs_find("auto", root, size))
    return;
  if (geteuid() != 0)
    SKIP("tracefs is not mounted, and only root may mount it (as root: "
         "mount -t tracefs nodev /sys/kernel/tracing)");
  if (unshare(CLONE_NEWNS) != 0 ||
      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    SKIP("tracefs is not mounted, and no private mount namespace here to "
         "mount it in: %s",
         strerror(errno));
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
    SKIP("tracefs is not mounted and cannot be: mount -t tracefs nodev "
         "/sys/kernel/tracing: %s",
         strerror(errno));
  if (!gp__tracefs_find("auto", root, size))
    SKIP("tracefs mounted on /sys/kernel/tracing has no events/");
}

/* Each dma_fence event this kernel has prints the fields the reader
 * takes apart (tracefs.c), in that order. */
TEST(tracefs_real_dma_fence_format) {
  char root[400];
  real_tracefs(root, sizeof(root));
  int seen = 0;
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++) {
    const char *name = gp__ftrace_event_name(i);
    if (strncmp(name, "dma_fence/", 10) != 0)
      continue;
    char path[700];
    snprintf(path, sizeof(path), "%s/events/%s/format", root, name);
    char *fmt = tp_read_file(path, NULL);
    if (!fmt)
      continue;
    const char *pf = strstr(fmt, "print fmt: ");
    ASSERT_NOT_NULL(pf);
    if (strncmp(pf + 11, "\"driver=%s timeline=%s context=%u seqno=%u\"", 43) !=
        0)
      gp_test_fail(__FILE__, __LINE__, "%s: %.80s", name, pf);
    free(fmt);
    seen++;
  }
  printf("  %d dma_fence events in %s print what tracefs.c parses\n", seen,
         root);
  if (seen == 0)
    SKIP("this kernel has no dma_fence trace events");
}

/* A private instance with every GPU event this kernel has enabled, the
 * boot clock and the buffer size asked for; gone at stop. */
TEST(tracefs_real_instance) {
  char root[400];
  real_tracefs(root, sizeof(root));
  uint32_t avail = gp__tracefs_available(root);
  printf("  %s has:", root);
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++)
    if (avail & (1u << i))
      printf(" %s", gp__ftrace_event_name(i));
  printf("\n");
  gp__tracefs_options o = {"auto", (1u << GP_FTRACE_EVENT_COUNT) - 1, 2048, 20};
  int rc = gp__tracefs_start(&o, NULL, 0);
  if (rc == -EACCES || rc == -EPERM || rc == -EROFS)
    SKIP("tracefs refuses a new instance here (%s): run as root",
         gp_strerror(rc));
  ASSERT_OK(rc);
  char inst[600], enable[800];
  snprintf(inst, sizeof(inst), "%s/instances/gpuperf-%d", root, (int)getpid());
  struct stat st;
  ASSERT_EQ(stat(inst, &st), 0);
  uint64_t counts[GP_FTRACE_EVENT_COUNT];
  uint32_t enabled = gp__tracefs_counts(counts);
  ASSERT_EQ(enabled, avail); /* every GPU event the kernel has */
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++) {
    if (!(avail & (1u << i)))
      continue;
    snprintf(enable, sizeof(enable), "%s/events/%s/enable", inst,
             gp__ftrace_event_name(i));
    FILE *f = fopen(enable, "r");
    ASSERT_NOT_NULL(f);
    ASSERT_EQ(fgetc(f), '1');
    fclose(f);
  }
  snprintf(enable, sizeof(enable), "%s/trace_clock", inst);
  char *text = tp_read_file(enable, NULL);
  ASSERT(text && strstr(text, "[boot]"));
  free(text);
  snprintf(enable, sizeof(enable), "%s/buffer_size_kb", inst);
  text = tp_read_file(enable, NULL);
  ASSERT_NOT_NULL(text);
  /* The kernel rounds the size up to whole pages of its sub-buffers. */
  long kb = strtol(text, NULL, 10);
  if (kb < 2048 || kb >= 4096)
    gp_test_fail(__FILE__, __LINE__, "buffer_size_kb %ld for 2048 asked", kb);
  free(text);
  gp__tracefs_stop();
  ASSERT(stat(inst, &st) != 0); /* the instance is gone */
}
