/*
 * test_opencl_clock.c - the mapping of OpenCL profiling times to the trace
 * clock, on PoCL: every command's queued, start and end times must fall
 * inside the host's window around it, from the start of the call that
 * enqueued it to the end of the clWaitForEvents that saw it complete,
 * within the error of the clock pairs the mapping used (measured: half
 * the gap between the trace-clock readings around each). Three ways of
 * mapping: MONOTONIC_RAW (PoCL's clock, verified by the first command),
 * enqueue brackets (forced), and the fall-back to brackets when the check
 * of MONOTONIC_RAW fails (made to fail with a skew). With brackets the
 * times after QUEUED follow at the device clock's rate, taken to be the
 * trace clock's: that adds at most 1000 ppm of the command's lifetime (the
 * trace clock slews by at most 500 ppm, NTP another 500). Commands with
 * no event are checked too, read by clFinish and, in batches, by the
 * reaper.
 */
#include <unistd.h>

#include "backend/opencl/oclInt.h"
#include "harness.h"
#include "opencl/oclutil.h"
#include "testutil.h"

static const char *spin_src =
    "__kernel void spin(__global float *out, int n) {\n"
    "  float acc = (float)get_global_id(0);\n"
    "  for (int i = 0; i < n; i++)\n"
    "    acc = acc * 0.999f + 1.0f;\n"
    "  out[get_global_id(0)] = acc;\n"
    "}\n";

typedef struct clock_result {
  uint64_t error_ns; /* widest clock pair the mapping used */
  bool rate_term;    /* add 1000 ppm of the command's lifetime */
  int64_t min_slack; /* smallest margin seen, ns (negative: outside) */
  size_t checked;
} clock_result;

/* When the host saw command corr (enqueued by a) complete: the end of the
 * clWaitForEvents that waited for it or, for a command with no event, of
 * the first clFinish of its stream after it. */
static uint64_t seen_done(uint64_t corr, const gp_activity_api *a,
                          uint32_t stream) {
  uint64_t best = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind != GP_ACTIVITY_KIND_SYNCHRONIZATION)
      continue;
    const gp_activity_sync *s = (const void *)r;
    if (s->sync_kind == GP_SYNC_EVENT_SYNCHRONIZE && s->wait_id == corr)
      return s->end;
    if (s->sync_kind == GP_SYNC_STREAM_SYNCHRONIZE && s->stream_id == stream &&
        s->start > a->end && (best == 0 || s->end < best))
      best = s->end;
  }
  return best;
}

static void slack(clock_result *res, int64_t margin, uint64_t err,
                  const char *what, uint64_t corr) {
  if (margin < res->min_slack)
    res->min_slack = margin;
  if (margin + (int64_t)err < 0)
    gp_test_fail(__FILE__, __LINE__,
                 "command %llu: %s is %lld ns outside the host window "
                 "(mapping error %llu ns)",
                 (unsigned long long)corr, what, (long long)-margin,
                 (unsigned long long)err);
}

/* Checks one command against its host window. */
static void check_window(clock_result *res, uint64_t corr, uint32_t stream,
                         const uint64_t ts[4]) {
  const gp_activity_api *a = ocl_api(corr);
  ASSERT_NOT_NULL(a);
  uint64_t done = seen_done(corr, a, stream);
  ASSERT_NE(done, 0);
  for (int i = 0; i < 4; i++)
    ASSERT_NE(ts[i], 0);
  ASSERT_LE(ts[0], ts[1]);
  ASSERT_LE(ts[1], ts[2]);
  ASSERT_LE(ts[2], ts[3]);
  /* With brackets, a command's own enqueue call is its clock pair: half
   * that call is its error (a slow call, preempted, maps loosely; the
   * others are not held to it). */
  uint64_t err = res->error_ns;
  if (res->rate_term) {
    err = (a->end - a->start + 1) / 2;
    ASSERT_LE(err, res->error_ns); /* the device's measure covers it */
  }
  uint64_t late = err + (res->rate_term ? (ts[3] - ts[0]) / 1000 : 0);
  /* QUEUED is taken during the enqueue call. */
  slack(res, (int64_t)(ts[0] - a->start), err, "queued before the call", corr);
  slack(res, (int64_t)(a->end - ts[0]), err, "queued after the call", corr);
  slack(res, (int64_t)(ts[2] - a->start), err, "start before the call", corr);
  slack(res, (int64_t)(done - ts[3]), late, "end after its wait returned",
        corr);
  res->checked++;
}

static void clock_run(int mode, int64_t skew_ns, int expect_mode,
                      clock_result *res) {
  ocl_env();
  ocl_require_device();
  gp__ocl_test_clock(mode, skew_ns);
  ocl_capture_all();
  cl_device_id dev;
  cl_context ctx = ocl_first_context(&dev);
  cl_int e = 0;
  cl_command_queue qa = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES,
                               CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue qo = clCreateCommandQueueWithProperties(ctx, dev, ooo, &e);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &spin_src, NULL, &e);
  ASSERT_EQ(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(prog, "spin", &e);
  ASSERT_EQ(e, CL_SUCCESS);
  size_t n = 4096;
  cl_mem b =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &e);
  float *host = calloc(n, sizeof(float));
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(b), &b), CL_SUCCESS);
  for (int i = 0; i < 24; i++) {
    cl_command_queue q = (i % 3 == 2) ? qo : qa;
    int iters = 50 * (i % 5 + 1);
    ASSERT_EQ(clSetKernelArg(k, 1, sizeof(iters), &iters), CL_SUCCESS);
    size_t g = n, l = 64;
    cl_event ev[2];
    ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, &ev[0]),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(q, b, CL_FALSE, 0, n * sizeof(float), host, 1,
                                  &ev[0], &ev[1]),
              CL_SUCCESS);
    ASSERT_EQ(clWaitForEvents(2, ev), CL_SUCCESS);
    clReleaseEvent(ev[0]);
    clReleaseEvent(ev[1]);
    if (i % 8 == 7)
      usleep(60000); /* let the mapping be re-measured in between */
  }
  /* And with no events: the library's own, read when the queue is next
   * used or finished. */
  for (int i = 0; i < 8; i++) {
    int iters = 40 * (i % 4 + 1);
    ASSERT_EQ(clSetKernelArg(k, 1, sizeof(iters), &iters), CL_SUCCESS);
    size_t g = n, l = 64;
    ASSERT_EQ(clEnqueueNDRangeKernel(qa, k, 1, NULL, &g, &l, 0, NULL, NULL),
              CL_SUCCESS);
    ASSERT_EQ(clEnqueueReadBuffer(qa, b, CL_FALSE, 0, n * sizeof(float), host,
                                  0, NULL, NULL),
              CL_SUCCESS);
    ASSERT_EQ(clFinish(qa), CL_SUCCESS);
  }
  /* Batches of them, which the reaper reads (with its own anchors) while
   * clFinish waits. */
  int few = 10;
  ASSERT_EQ(clSetKernelArg(k, 1, sizeof(few), &few), CL_SUCCESS);
  for (int i = 0; i < 3 * GP_OCL_REAP_BATCH; i++) {
    size_t g = n, l = 64;
    ASSERT_EQ(clEnqueueNDRangeKernel(qa, k, 1, NULL, &g, &l, 0, NULL, NULL),
              CL_SUCCESS);
  }
  ASSERT_EQ(clFinish(qa), CL_SUCCESS);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));

  gp__ocl_device *d = gp__ocl_device_get(dev);
  ASSERT_NOT_NULL(d);
  ASSERT_EQ(atomic_load(&d->clock_mode), expect_mode);
  gp_clock_snapshot snaps[256];
  size_t ns = 0;
  ASSERT_OK(gp_clock_get_snapshots(d->clock_id, snaps, 256, &ns, NULL));
  /* Pairs for the trace; re-measured as time goes (brackets keep only the
   * tighter ones). */
  ASSERT_GE(ns, expect_mode == GP_OCL_CLOCK_BRACKET ? 1 : 2);
  res->error_ns = atomic_load(&d->max_error_ns);
  ASSERT_GT(res->error_ns, 0);
  res->rate_term = expect_mode == GP_OCL_CLOCK_BRACKET;
  res->min_slack = INT64_MAX;
  res->checked = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    uint64_t ts[4];
    if (r->kind == GP_ACTIVITY_KIND_KERNEL) {
      const gp_activity_kernel *kr = (const void *)r;
      ts[0] = kr->queued, ts[1] = kr->submitted, ts[2] = kr->start;
      ts[3] = kr->end;
      check_window(res, kr->correlation_id, kr->stream_id, ts);
    } else if (r->kind == GP_ACTIVITY_KIND_MEMCPY) {
      const gp_activity_memcpy *m = (const void *)r;
      ts[0] = m->queued, ts[1] = m->submitted, ts[2] = m->start;
      ts[3] = m->end;
      check_window(res, m->correlation_id, m->stream_id, ts);
    }
  }
  ASSERT_EQ(res->checked, 48 + 16 + 3 * GP_OCL_REAP_BATCH);
  printf("mode %d: %zu commands within their windows; mapping error %llu ns,"
         " smallest margin %lld ns, %zu snapshots\n",
         expect_mode, res->checked, (unsigned long long)res->error_ns,
         (long long)res->min_slack, ns);
  free(host);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qo);
  clReleaseContext(ctx);
}

TEST(opencl_clock_monotonic_raw) {
  clock_result res;
  clock_run(0, 0, GP_OCL_CLOCK_RAW, &res);
  /* A MONOTONIC_RAW reading between two trace-clock readings: well under a
   * microsecond, unless the thread was preempted there (retried). */
  ASSERT_LT(res.error_ns, 1000000);
}

TEST(opencl_clock_enqueue_brackets) {
  clock_result res;
  clock_run(GP_OCL_CLOCK_BRACKET, 0, GP_OCL_CLOCK_BRACKET, &res);
}

TEST(opencl_clock_unconfirmed_raw_falls_back) {
  clock_result res;
  /* QUEUED made to look a second off MONOTONIC_RAW: the check fails and the
   * device is mapped with brackets instead, still correctly. */
  clock_run(0, 1000000000, GP_OCL_CLOCK_BRACKET, &res);
}
