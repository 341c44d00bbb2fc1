/*
 * test_opencl_trace.c - `gpuperf record` on the sample OpenCL program, and
 * its trace read back through the trace processor: kernel names, counts,
 * shapes and durations, copies and fills with their bytes, dependency
 * flows and API-to-command correlation flows, each exactly as the sample
 * counted what it enqueued; forked and exec'd children each in a process
 * of their own; the program's output and exit status unchanged.
 */
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

#if HAVE_TP

static const char *build_file(const char *name, char *buf, size_t size) {
  if (!ocl_build_path(name, buf, size))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  return buf;
}

/*
 * Records the sample with args into the test's trace.pftrace and checks
 * that it exits with want and, if same_output (its processes do not
 * print side by side), prints what it prints alone. Returns the opened
 * trace and the sample's output (malloc'ed) in *out.
 */
static gp_tp *record(char **args, int want, bool same_output, char **out) {
  ocl_env();
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  static char sample[512], trace[512];
  build_file("tests/opencl-sample", sample, sizeof(sample));
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "trace.pftrace"));
  char *argv[32] = {(char *)cli, "record", "-q", "-o", trace, "--", sample};
  int n = 7;
  for (int i = 0; args[i] && n < 30; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  char *err = NULL, *plain = NULL;
  int rc = ocl_run(argv, NULL, 180, out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != want)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d (want %d):\n%s",
                 rc, want, err ? err : "");
  free(err);
  ASSERT_EQ(ocl_run(argv + 6, NULL, 180, &plain, NULL), want);
  if (same_output) /* recorded, it computed and saw the same */
    ASSERT_STR_EQ(*out, plain);
  free(plain);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  return tp;
}

/* The number after key in line (0 if absent). */
static uint64_t field(const char *line, const char *key) {
  const char *p = strstr(line, key);
  return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Checks the kernels, copies, fills and flows of the sample's run tagged
 * tag (its "count" lines in out) against process upid of the trace (0:
 * any). */
static void check_counts(gp_tp *tp, const char *out, const char *tag,
                         int64_t upid) {
  char key[32], sql[2048], where_p[64] = "";
  if (upid)
    snprintf(where_p, sizeof(where_p), " AND s.upid = %lld", (long long)upid);
  snprintf(key, sizeof(key), "%s count ", tag);
  uint64_t commands = 0, deps = 0, kernels = 0;
  for (const char *l = out; (l = strstr(l, key)) != NULL; l++) {
    const char *rest = l + strlen(key);
    if (strncmp(rest, "kernel ", 7) == 0) {
      char name[64];
      unsigned g[3], b[3], local, launches, failed;
      if (sscanf(rest,
                 "kernel %63s grid=%u,%u,%u block=%u,%u,%u local=%u "
                 "launches=%u failed=%u",
                 name, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &local,
                 &launches, &failed) != 10)
        gp_test_fail(__FILE__, __LINE__, "cannot read: %.120s", l);
      snprintf(sql, sizeof(sql),
               "SELECT count(*) * 1000000 + sum(s.dur > 0) FROM gpu_slice s "
               "WHERE s.name = '%s'%s"
               " AND extract_arg(s.arg_set_id, 'launch.grid_size.x') = %u"
               " AND extract_arg(s.arg_set_id, 'launch.grid_size.y') = %u"
               " AND extract_arg(s.arg_set_id, 'launch.grid_size.z') = %u"
               " AND coalesce(extract_arg(s.arg_set_id, "
               "'launch.workgroup_size.x'), 0) = %u"
               " AND coalesce(extract_arg(s.arg_set_id, "
               "'launch.workgroup_size.y'), 0) = %u"
               " AND coalesce(extract_arg(s.arg_set_id, "
               "'launch.workgroup_size.z'), 0) = %u"
               " AND coalesce(extract_arg(s.arg_set_id, "
               "'launch__shared_mem_per_block_dynamic'), 0) = %u",
               name, where_p, g[0], g[1], g[2], b[0], b[1], b[2], local);
      int64_t v = tp_int(tp, sql);
      if (v / 1000000 != launches + failed || v % 1000000 != launches)
        gp_test_fail(__FILE__, __LINE__,
                     "kernel %s grid %u,%u,%u block %u,%u,%u: %lld slices, "
                     "%lld with a duration; the sample made %u, %u failed",
                     name, g[0], g[1], g[2], b[0], b[1], b[2],
                     (long long)(v / 1000000), (long long)(v % 1000000),
                     launches + failed, failed);
      kernels += launches + failed;
    } else if (strncmp(rest, "memcpy ", 7) == 0) {
      char kind[16];
      unsigned n = 0;
      if (sscanf(rest, "memcpy %15s n=%u", kind, &n) != 2)
        gp_test_fail(__FILE__, __LINE__, "cannot read: %.120s", l);
      uint64_t bytes = field(rest, "bytes=");
      snprintf(sql, sizeof(sql),
               "SELECT count(*) * 1000000000000 + coalesce(sum("
               "extract_arg(s.arg_set_id, 'bytes')), 0) FROM gpu_slice s "
               "WHERE s.name = 'Memcpy %s'%s",
               kind, where_p);
      int64_t v = tp_int(tp, sql);
      ASSERT_EQ(v / 1000000000000ll, n);
      ASSERT_EQ(v % 1000000000000ll, (int64_t)bytes);
    } else if (strncmp(rest, "memset ", 7) == 0) {
      snprintf(sql, sizeof(sql),
               "SELECT count(*) * 1000000000000 + coalesce(sum("
               "extract_arg(s.arg_set_id, 'bytes')), 0) FROM gpu_slice s "
               "WHERE s.name = 'Memset'%s",
               where_p);
      int64_t v = tp_int(tp, sql);
      ASSERT_EQ(v / 1000000000000ll, field(rest, "n="));
      ASSERT_EQ(v % 1000000000000ll, (int64_t)field(rest, "bytes="));
    } else if (strncmp(rest, "commands=", 9) == 0) {
      commands = field(rest, "commands=");
      deps = field(rest, "dependencies=");
    }
  }
  ASSERT_GT(commands, 0);
  /* Nothing lost, nothing twice (the GPU log, where the sample's failing
   * calls go, aside). */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM gpu_slice s WHERE s.track_id NOT IN (SELECT "
           "id FROM track WHERE name = 'GPU Log')%s",
           where_p);
  ASSERT_EQ(tp_int(tp, sql), commands);
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM gpu_slice s WHERE s.render_stage_category "
           "= 2%s",
           where_p);
  ASSERT_EQ(tp_int(tp, sql), kernels);
  /* Dependency flows: between GPU slices, one per wait the sample made. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM flow f JOIN gpu_slice o ON o.id = "
           "f.slice_out JOIN gpu_slice s ON s.id = f.slice_in WHERE 1%s",
           where_p);
  ASSERT_EQ(tp_int(tp, sql), deps);
  /* Correlation flows: every command from exactly one clEnqueue* call. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) * 1000000 + count(DISTINCT f.slice_in) FROM flow "
           "f JOIN slice a ON a.id = f.slice_out JOIN gpu_slice s ON s.id = "
           "f.slice_in WHERE a.id NOT IN (SELECT id FROM gpu_slice) AND "
           "a.name LIKE 'clEnqueue%%'%s",
           where_p);
  ASSERT_EQ(tp_int(tp, sql), (int64_t)commands * 1000000 + (int64_t)commands);
}

TEST(opencl_trace_of_the_sample) {
  char *args[] = {"-n", "2", "--exit-status", "3", NULL};
  char *out = NULL;
  gp_tp *tp = record(args, 3, true, &out);
  check_counts(tp, out, "main", 0);
  /* Kernels ran for some time; the one that failed for none. */
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu_slice WHERE "
                       "render_stage_category = 2 AND dur <= 0"),
            1);
  /* The device, named as the driver names it, and no losses. */
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu WHERE name != ''"), 1);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM stats WHERE value > 0 AND "
                       "severity IN ('data_loss', 'error')"),
            0);
  /* Every OpenCL call is a slice of the calling thread. */
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM slice WHERE name = "
                       "'clSetKernelArg'"),
            0);
  gp_tp_close(tp);
  free(out);
}

TEST(opencl_trace_fork_and_exec) {
  char *fork_args[] = {"--fork", NULL};
  char *out = NULL;
  gp_tp *tp = record(fork_args, 0, false, &out);
  ASSERT_EQ(tp_int(tp, "SELECT count(DISTINCT upid) FROM gpu_slice"), 2);
  int64_t a = tp_int(tp, "SELECT min(upid) FROM gpu_slice");
  int64_t b = tp_int(tp, "SELECT max(upid) FROM gpu_slice");
  /* Each process ran the same workload: the parent's counts fit both. */
  check_counts(tp, out, "parent", a);
  check_counts(tp, out, "parent", b);
  gp_tp_close(tp);
  free(out);

  char *exec_args[] = {"--exec", "--exit-status", "5", NULL};
  tp = record(exec_args, 5, true, &out);
  ASSERT_EQ(tp_int(tp, "SELECT count(DISTINCT upid) FROM gpu_slice"), 2);
  a = tp_int(tp, "SELECT min(upid) FROM gpu_slice");
  b = tp_int(tp, "SELECT max(upid) FROM gpu_slice");
  /* The exec'd program ran the same workload as its parent. */
  check_counts(tp, out, "main", a);
  check_counts(tp, out, "main", b);
  gp_tp_close(tp);
  free(out);
}

#else

TEST(opencl_trace_of_the_sample) {
  SKIP("the trace processor (gpuperf/tp.h) is not in this build");
}

TEST(opencl_trace_fork_and_exec) {
  SKIP("the trace processor (gpuperf/tp.h) is not in this build");
}

#endif
