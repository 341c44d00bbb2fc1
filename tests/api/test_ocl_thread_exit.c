/*
 * test_ocl_thread_exit.c - the OpenCL interception library's per-thread
 * state dies with its thread: a hundred threads that each enqueue and
 * exit leave nothing behind (under `make test-asan`, LeakSanitizer checks
 * it before the test ends; everywhere, every kernel must be recorded).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK 1
#endif
#endif

#include "backend/opencl/oclInt.h"
#include "harness.h"
#include "opencl/oclutil.h"
#include "testutil.h"

typedef struct exit_arg {
  cl_context ctx;
  cl_device_id dev;
  cl_kernel k;
  int ok;
} exit_arg;

static void *enqueue_and_exit(void *p) {
  exit_arg *a = p;
  cl_int e = 0;
  cl_command_queue q =
      clCreateCommandQueueWithProperties(a->ctx, a->dev, NULL, &e);
  size_t g = 16, l = 16;
  a->ok = q != NULL;
  for (int i = 0; a->ok && i < 20; i++) {
    cl_event ev = NULL;
    a->ok = clEnqueueNDRangeKernel(q, a->k, 1, NULL, &g, &l, 0, NULL,
                                   (i % 2) ? &ev : NULL) == CL_SUCCESS;
    if (ev)
      clReleaseEvent(ev);
  }
  a->ok = a->ok && clFinish(q) == CL_SUCCESS;
  clReleaseCommandQueue(q);
  return NULL;
}

TEST(opencl_exited_threads_leave_no_state) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  cl_platform_id p;
  cl_device_id dev;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), CL_SUCCESS);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  const char *src = "__kernel void one(__global int *x) {"
                    " x[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  ASSERT_EQ(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(prog, "one", &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16 * 4, NULL, &e);
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(b), &b), CL_SUCCESS);
  enum { THREADS = 100 };
  /* One after the other, so that each thread's list is its own. */
  for (int i = 0; i < THREADS; i++) {
    pthread_t t;
    exit_arg a = {ctx, dev, k, 0};
    ASSERT_EQ(pthread_create(&t, NULL, enqueue_and_exit, &a), 0);
    pthread_join(t, NULL);
    ASSERT(a.ok);
  }
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), THREADS * 20);
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.pending, 0);
#ifdef LEAK_CHECK
  /* The threads are gone: what they kept must be too (the harness ends
   * a test with _exit, which makes no leak check of its own). */
  ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0);
#endif
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
}
