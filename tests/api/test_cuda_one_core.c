/*
 * test_cuda_one_core.c - one core per process: a program that does GPU
 * work through the simulated GPUs (the gpuperf API), OpenCL (PoCL, under
 * the preload library) and the CUDA injection library, recorded by
 * `gpuperf record`, leaves one sequence, on one clock, with the work of
 * all three.
 *
 * The program is tests/cuda/mixed_app.c (build/tests/cuda-mixed). It opens
 * build/libgpuperf-cuda.so as the CUDA driver would and hands it CUPTI
 * records (there is no GPU here); the library translates them into the
 * process's one libgpuperf.so, the one the program linked, where the
 * simulator's and the OpenCL preload's records go too. A collector with a
 * core of its own would leave a second sequence, or no CUDA work at all.
 *
 * The simulated GPUs run in real time (GPUPERF_SIM_TIME=real): the trace
 * clock is then CLOCK_BOOTTIME, and every GPU slice, whichever device
 * clock it was mapped from (the simulator's, PoCL's, CUPTI's), must lie
 * within the run as the test saw it on that clock.
 *
 * Skips without the CUDA toolkit at build time, without an OpenCL device,
 * and in sanitizer builds (where `gpuperf record` preloads nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#ifdef GP_HAVE_CUDA

#include "opencl/oclutil.h"
#include "unit/writer_util.h"

static uint64_t boottime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The one integer a query of trace prints (as CSV, after its header). */
static long long query_int(const char *cli, const char *trace,
                           const char *sql) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "'%s' query '%s' \"%s\" --format csv", cli, trace,
           sql);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  char header[256] = "", value[256] = "";
  bool ok = fgets(header, sizeof(header), p) && fgets(value, sizeof(value), p);
  int st = pclose(p);
  if (!ok || st != 0)
    gp_test_fail(__FILE__, __LINE__, "query failed (status %d): %s", st, sql);
  return atoll(value);
}

static size_t sequences(const wt_trace *t) {
  uint32_t seen[16];
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    size_t k = 0;
    while (k < n && seen[k] != t->p[i].seq)
      k++;
    if (k == n && n < 16)
      seen[n++] = t->p[i].seq;
  }
  return n;
}

TEST(cuda_sim_and_opencl_share_one_core) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  char app[1024], lib[1024]; /* wt_build_path() has one buffer */
  snprintf(app, sizeof(app), "%s", wt_build_path("tests/cuda-mixed"));
  snprintf(lib, sizeof(lib), "%s", wt_build_path("libgpuperf-cuda.so"));
  ASSERT_EQ(access(app, X_OK), 0);
#if GP_TEST_SANITIZED
  /* OpenCL would go unrecorded, and PoCL's leaks fail the program. */
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  ocl_env();
  ocl_require_device();
  setenv("GPUPERF_SIM_TIME", "real", 1);
  const char *out = gp_test_path(0, "mixed.pftrace");
  const char *log = gp_test_path(1, "record.log");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- '%s' '%s' 2>'%s'", cli,
           out, app, lib, log);
  uint64_t t0 = boottime_ns();
  int rc = wt_system(cmd);
  uint64_t t1 = boottime_ns();
  unsetenv("GPUPERF_SIM_TIME");
  size_t n = 0;
  char *msg = (char *)wt_read_file(log, &n);
  msg = realloc(msg, n + 1);
  msg[n] = '\0';
  if (rc != 0)
    fputs(msg, stderr);
  ASSERT_EQ(rc, 0);
  ASSERT(strstr(msg, "1 process recorded"));
  free(msg);

  /* One process, one sequence: one writer, one clock. */
  wt_trace t;
  wt_load(&t, out);
  wt_check_sequences(&t);
  ASSERT_EQ(sequences(&t), 1);
  ASSERT_GT(wt_count_packets(&t, 0), 10);
  wt_free(&t);
  ASSERT_EQ(query_int(cli, out, "select count(*) from process where pid > 0"),
            1);

  /* The work of all three, once each. */
  static const char *const kernels[] = {
      "_Z11sim_mixed_kv",  /* the simulator */
      "ocl_mixed_scale",   /* OpenCL */
      "cuda_mixed_scale"}; /* CUDA (demangled from _Z16cuda_mixed_scalePf) */
  char sql[512];
  for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
    snprintf(sql, sizeof(sql),
             "select count(*) from gpu_slice where name = '%s'", kernels[i]);
    ASSERT_EQ(query_int(cli, out, sql), 1);
  }
  /* A copy to the device and a fill from each. */
  ASSERT_EQ(query_int(cli, out,
                      "select count(*) from gpu_slice where name = "
                      "'Memcpy HtoD'"),
            3);
  ASSERT_EQ(query_int(cli, out,
                      "select count(*) from gpu_slice where name = 'Memset'"),
            3);

  /* One clock: every slice, whichever device clock it came from, lies in
   * the run as seen on CLOCK_BOOTTIME, with its duration kept (CUDA's
   * kernel ran 50 us on the CUPTI clock). */
  snprintf(sql, sizeof(sql),
           "select count(*) from gpu_slice where ts < %llu or ts + dur > %llu "
           "or dur < 0",
           (unsigned long long)t0, (unsigned long long)t1);
  ASSERT_EQ(query_int(cli, out, sql), 0);
  ASSERT_EQ(query_int(cli, out,
                      "select count(*) from gpu_slice where ts > 0 and "
                      "name = 'cuda_mixed_scale' and dur between 49500 and "
                      "50500"),
            1);
}

#else /* !GP_HAVE_CUDA */

TEST(cuda_sim_and_opencl_share_one_core) {
  SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "
       "build time; see mk/cuda.mk (CUDA_HOME)");
}

#endif
