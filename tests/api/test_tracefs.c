/*
 * test_tracefs.c - the kernel's GPU trace events: trace_pipe lines parsed
 * (tasks with dashes, microsecond timestamps, key=value fields); a
 * recording with GPUPERF_TRACEFS on a fixture tree whose trace_pipe holds
 * GPU frequency, memory and fence events, giving Perfetto's gpufreq and
 * GPU Memory rows; and, where tracefs is mounted and writable (root), a
 * private instance made with the GPU events this kernel has enabled, and
 * removed at stop. No GPU driver runs here, so no real GPU event is read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/tracefs.h"
#include "harness.h"
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

#if HAVE_TP

/* Records the OpenCL sample with GPUPERF_TRACEFS on the tracefs fixture
 * and, if sysroot is not NULL, GPUPERF_SYSROOT on that fixture tree (a
 * folder of tests/data/linux); returns the trace, opened (skips where the
 * test cannot run). */
static gp_tp *record_fixture(const char *name, const char *sysroot) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if defined(__SANITIZE_ADDRESS__)
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  ocl_env();
  static char sample[512];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  char rel[256];
  snprintf(rel, sizeof(rel), "tests/data/linux/%s", sysroot ? sysroot : "");
  char *root = realpath("tests/data/linux/tracefs", NULL);
  char *sys = sysroot ? realpath(rel, NULL) : NULL;
  if (!root || (sysroot && !sys))
    SKIP("tests/data/linux not found (run from the source tree)");
  char env1[600], env2[600];
  snprintf(env1, sizeof(env1), "GPUPERF_TRACEFS=%s", root);
  snprintf(env2, sizeof(env2), "GPUPERF_SYSROOT=%s", sys ? sys : "");
  free(root);
  free(sys);
  const char *trace = gp_test_path(0, name);
  char *argv[] = {(char *)cli, "record", "-q", "-o", (char *)trace,
                  "--",        sample,   "-n", "2",  NULL};
  char *env[] = {env1, sysroot ? env2 : NULL, NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, env, 120, &out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d:\n%s", rc,
                 err ? err : "");
  free(out);
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  return tp;
}

TEST(tracefs_fixture_events_reach_trace) {
  gp_tp *tp = record_fixture("tracefs.pftrace", NULL);
  /* Perfetto's rules: gpufreq in kHz; GPU Memory global for pid 0, per
   * process otherwise; the kernel's gpu_id is the gpu. */
  tp_expect(tp,
            "SELECT t.name, t.type, extract_arg(t.dimension_arg_set_id, "
            "'gpu') AS gpu, c.ts, cast_int!(c.value) AS v FROM counter c "
            "JOIN counter_track t ON t.id = c.track_id WHERE t.type IN "
            "('gpu_frequency', 'gpu_memory', 'process_gpu_memory') ORDER BY "
            "c.ts",
            "\"name\",\"type\",\"gpu\",\"ts\",\"v\"\n"
            "\"gpufreq\",\"gpu_frequency\",0,100000001000,500000\n"
            "\"GPU Memory\",\"gpu_memory\",0,100500002000,1048576\n"
            "\"GPU Memory\",\"process_gpu_memory\",0,100600003000,65536\n"
            "\"gpufreq\",\"gpu_frequency\",0,101000001000,250000\n");
  ASSERT_EQ(tp_int(tp, "SELECT p.pid FROM process_counter_track t JOIN "
                       "process p USING (upid) WHERE t.type = "
                       "'process_gpu_memory'"),
            1234);
  gp_tp_close(tp);
}

/* DRM scheduler jobs (the old event names and Linux 6.16's) on the v3d
 * fixture card: GPU slices on the engines their rings belong to, from run
 * to done; a job never seen done is not drawn. */
TEST(tracefs_sched_jobs_are_gpu_slices) {
  gp_tp *tp = record_fixture("sched.pftrace", "v3d");
  tp_expect(tp,
            "SELECT s.name, s.ts, s.dur, t.name AS queue FROM gpu_slice s "
            "JOIN track t ON t.id = s.track_id WHERE s.name LIKE 'v3d_%' "
            "ORDER BY s.ts",
            "\"name\",\"ts\",\"dur\",\"queue\"\n"
            "\"v3d_render job\",101100500000,2000000,\"render\"\n"
            "\"v3d_bin job\",101200250000,1000000,\"bin\"\n");
  gp_tp_close(tp);
}

#else

TEST(tracefs_fixture_events_reach_trace) {
  SKIP("built without the trace processor");
}

TEST(tracefs_sched_jobs_are_gpu_slices) {
  SKIP("built without the trace processor");
}

#endif

TEST(tracefs_real_instance) {
  char root[400];
  if (!gp__tracefs_find("auto", root, sizeof(root)))
    SKIP("tracefs is not mounted (as root: mount -t tracefs nodev "
         "/sys/kernel/tracing)");
  uint32_t avail = gp__tracefs_available(root);
  printf("  %s has:", root);
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++)
    if (avail & (1u << i))
      printf(" %s", gp__tracefs_event_name(i));
  printf("\n");
  int rc = gp__tracefs_start("auto");
  if (rc == -EACCES || rc == -EPERM || rc == -EROFS)
    SKIP("tracefs refuses a new instance here (%s): run as root",
         gp_strerror(rc));
  ASSERT_OK(rc);
  char inst[600], enable[800];
  snprintf(inst, sizeof(inst), "%s/instances/gpuperf-%d", root, (int)getpid());
  struct stat st;
  ASSERT_EQ(stat(inst, &st), 0);
  uint64_t counts[GP__TRACEFS_NUM_EVENTS];
  uint32_t enabled = gp__tracefs_counts(counts);
  ASSERT_EQ(enabled, avail); /* every GPU event the kernel has */
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    if (!(avail & (1u << i)))
      continue;
    snprintf(enable, sizeof(enable), "%s/events/%s/enable", inst,
             gp__tracefs_event_name(i));
    FILE *f = fopen(enable, "r");
    ASSERT_NOT_NULL(f);
    ASSERT_EQ(fgetc(f), '1');
    fclose(f);
  }
  snprintf(enable, sizeof(enable), "%s/trace_clock", inst);
  char *clock = tp_read_file(enable, NULL);
  ASSERT(clock && strstr(clock, "[boot]"));
  free(clock);
  gp__tracefs_stop();
  ASSERT(stat(inst, &st) != 0); /* the instance is gone */
}
