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
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/linux/drm.h"
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

/* The fixture's trace_pipe read in this process (no recording, so that
 * a sanitizer build runs it too): dma_fence events as DMA_FENCE records,
 * destroy only counted; scheduler jobs on the v3d fixture card as KERNEL
 * records whose wait ids are the correlation ids of the jobs they
 * depend on, once each. */
TEST(tracefs_records_in_process) {
  char *root = realpath("tests/data/linux/tracefs", NULL);
  char *v3d = realpath("tests/data/linux/v3d", NULL);
  if (!root || !v3d)
    SKIP("tests/data/linux not found (run from the source tree)");
  setenv("GPUPERF_SYSROOT", v3d, 1);
  ASSERT_GT(gp__drm_devices_register(), 0);
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DMA_FENCE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp__tracefs_start(root));
  gp__tracefs_stop(); /* a fixture's file is read whole first */
  ASSERT_OK(gp_activity_flush_all(0));
  /* Nine fence events with a message in Perfetto (unbound included: the
   * importers drop it), in file order. */
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
  uint64_t counts[GP__TRACEFS_NUM_EVENTS];
  gp__tracefs_counts(counts);
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++)
    if (strcmp(gp__tracefs_event_name(i), "dma_fence/dma_fence_destroy") == 0)
      ASSERT_EQ(counts[i], 1);
  /* Jobs by start: 41, 43 (waits for 41), 9:42, 10:7 (waits for 9:42,
   * added then found unschedulable: once; and for 3:1, no job). */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 4);
  const gp_activity_kernel *k[4] = {NULL};
  const uint64_t starts[4] = {101100500000ull, 101102600000ull, 101200250000ull,
                              101201300000ull};
  for (size_t i = 0; i < 4; i++) {
    const gp_activity_kernel *r =
        (const void *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
    for (int j = 0; j < 4; j++)
      if (r->start == starts[j])
        k[j] = r;
  }
  for (int j = 0; j < 4; j++)
    ASSERT_NOT_NULL(k[j]);
  uint32_t n = 9;
  const uint64_t *w = gp_activity_wait_ids(&k[0]->hdr, &n);
  ASSERT_EQ(n, 0);
  w = gp_activity_wait_ids(&k[1]->hdr, &n);
  ASSERT_EQ(n, 1);
  ASSERT_EQ(w[0], k[0]->correlation_id);
  w = gp_activity_wait_ids(&k[3]->hdr, &n);
  ASSERT_EQ(n, 1);
  ASSERT_EQ(w[0], k[2]->correlation_id);
  uint64_t jobs, deps;
  gp__tracefs_lost(&jobs, &deps);
  ASSERT_EQ(jobs, 1); /* 11:5, queued, never done */
  ASSERT_EQ(deps, 1); /* on 3:1 */
  free(root);
  free(v3d);
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
#if GP_TEST_SANITIZED
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
            "\"v3d_render job\",101102600000,400000,\"render\"\n"
            "\"v3d_bin job\",101200250000,1000000,\"bin\"\n"
            "\"v3d_render job\",101201300000,200000,\"render\"\n");
  gp_tp_close(tp);
}

/* A job's dependencies on other jobs (drm_sched_job_wait_dep before
 * Linux 6.16: the job by ring and id, the fence waited for by pointer;
 * drm_sched_job_add_dep and _unschedulable after: both by
 * context:seqno, the dependency added before the job is queued and
 * repeated once unschedulable) are flows from the slice of the job
 * depended on to the dependent's, through event_wait_ids; a dependency on
 * a fence of no job seen draws nothing. */
TEST(tracefs_sched_dependencies_are_flows) {
  gp_tp *tp = record_fixture("deps.pftrace", "v3d");
  tp_expect(tp,
            "SELECT so.name AS out_name, so.ts AS out_ts, si.name AS in_name, "
            "si.ts AS in_ts FROM flow f JOIN slice so ON so.id = f.slice_out "
            "JOIN slice si ON si.id = f.slice_in WHERE so.name LIKE 'v3d_%' "
            "OR si.name LIKE 'v3d_%' ORDER BY si.ts",
            "\"out_name\",\"out_ts\",\"in_name\",\"in_ts\"\n"
            "\"v3d_render job\",101100500000,\"v3d_render job\","
            "101102600000\n"
            "\"v3d_bin job\",101200250000,\"v3d_render job\",101201300000\n");
  gp_tp_close(tp);
}

/* dma_fence events, written as Perfetto's ftrace data source writes them
 * and imported as Perfetto's DrmTracker does: a track per fence context
 * ("unbound" ignored), a "fence" slice from emit (or init, on a timeline
 * that never emits) to signaled, pending fences in turn, and the task's
 * dma_fence_wait on its thread's track. */
TEST(tracefs_dma_fence_slices) {
  gp_tp *tp = record_fixture("fence.pftrace", NULL);
  tp_expect(tp,
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
  tp_expect(tp,
            "SELECT s.name, s.ts, s.dur, t.type, th.tid, extract_arg("
            "s.arg_set_id, 'fence context') AS ctx, extract_arg(s.arg_set_id, "
            "'fence seqno') AS seqno FROM slice s JOIN thread_track t ON t.id "
            "= s.track_id JOIN thread th USING (utid) WHERE s.name = "
            "'dma_fence_wait'",
            "\"name\",\"ts\",\"dur\",\"type\",\"tid\",\"ctx\",\"seqno\"\n"
            "\"dma_fence_wait\",100800200000,100000,\"thread_execution\",1234,"
            "9,42\n");
  gp_tp_close(tp);
}

#else

TEST(tracefs_dma_fence_slices) {
  SKIP("built without the trace processor");
}

TEST(tracefs_fixture_events_reach_trace) {
  SKIP("built without the trace processor");
}

TEST(tracefs_sched_jobs_are_gpu_slices) {
  SKIP("built without the trace processor");
}

TEST(tracefs_sched_dependencies_are_flows) {
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
  for (int i = 0; i < GP__TRACEFS_NUM_EVENTS; i++) {
    const char *name = gp__tracefs_event_name(i);
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

TEST(tracefs_real_instance) {
  char root[400];
  real_tracefs(root, sizeof(root));
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
