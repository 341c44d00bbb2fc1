/*
 * mixed_app.c - one process doing GPU work three ways: the simulated GPUs
 * (the gpuperf API, libgpuperf.so), OpenCL (PoCL, through the program's
 * libOpenCL, which `gpuperf record` makes pass through
 * libgpuperf-opencl.so) and CUDA (libgpuperf-cuda.so, the injection
 * library). The test of one core per process (test_cuda_one_core.c)
 * records it and looks for one sequence, one clock and the work of all
 * three.
 *
 *   cuda-mixed LIBGPUPERF-CUDA
 *
 * There is no GPU here, so CUPTI produces no records by itself: the
 * program opens the CUDA library as the driver would (dlopen) and hands it
 * what CUPTI would hand over for a device, a context, a kernel, a copy and
 * a fill, timed by the real cuptiGetTimestamp(), through gp__cuda_replay():
 * libcupti walks the buffer and the library translates it, exactly as for
 * a buffer CUPTI completed. Exit 0 on success, 77 without an OpenCL device,
 * 2 if the library cannot be used, 3 if a call fails.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/gpuperf.h"

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "cuda-mixed: %s: %d\n", what, rc);
    exit(3);
  }
}

/* A kernel, a copy and a fill on simulated GPU 0. */
static void sim_work(void) {
  gp_sim_context *ctx;
  gp_sim_stream *s;
  gp_sim_kernel *k;
  uint64_t buf;
  static char host[4096];
  check(gp_sim_context_create(0, &ctx), "sim context");
  check(gp_sim_stream_create(ctx, &s), "sim stream");
  check(gp_sim_malloc(ctx, 1 << 16, &buf), "sim malloc");
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "_Z11sim_mixed_kv";
  d.flops_per_thread = 100;
  d.bytes_per_thread = 8;
  d.read_fraction = 0.5;
  check(gp_sim_kernel_create(&d, &k), "sim kernel");
  const gp_sim_dim3 grid = {16, 1, 1}, block = {64, 1, 1};
  check(gp_sim_memcpy_async(s, buf, GP_SIM_HOST(host), sizeof(host),
                            GP_MEMCPY_HTOD),
        "sim copy");
  check(gp_sim_launch(s, k, grid, block, 0), "sim launch");
  check(gp_sim_memset_async(s, buf, 0, sizeof(host)), "sim fill");
  check(gp_sim_context_synchronize(ctx), "sim synchronize");
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

#define CL_CHECK(call)                                                         \
  do {                                                                         \
    cl_int e_ = (call);                                                        \
    if (e_ != CL_SUCCESS)                                                      \
      check(e_, #call);                                                        \
  } while (0)

/* A copy, a kernel, a fill and a read back on the first OpenCL device. */
static void opencl_work(void) {
  static const char *src =
      "__kernel void ocl_mixed_scale(__global float *a) {\n"
      "  a[get_global_id(0)] *= 2.0f;\n"
      "}\n";
  cl_platform_id p;
  cl_device_id dev;
  cl_uint n = 0;
  cl_int err = 0;
  if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n == 0 ||
      clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, &n) != CL_SUCCESS ||
      n == 0) {
    fprintf(stderr, "cuda-mixed: no OpenCL device\n");
    exit(77);
  }
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CL_CHECK(err);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  CL_CHECK(err);
  float host[256];
  for (int i = 0; i < 256; i++)
    host[i] = (float)i;
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(host), NULL, &err);
  CL_CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  CL_CHECK(err);
  CL_CHECK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "ocl_mixed_scale", &err);
  CL_CHECK(err);
  CL_CHECK(clSetKernelArg(k, 0, sizeof(b), &b));
  size_t global = 256;
  float zero = 0.0f;
  CL_CHECK(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, sizeof(host), host, 0, NULL,
                                NULL));
  CL_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
  CL_CHECK(
      clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL));
  CL_CHECK(clEnqueueFillBuffer(q, b, &zero, sizeof(zero), 0, sizeof(host), 0,
                               NULL, NULL));
  CL_CHECK(clFinish(q));
  if (host[3] != 6.0f)
    check(1, "the OpenCL kernel's result");
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

typedef struct cupti_buf {
  _Alignas(8) uint8_t bytes[4096];
  size_t used;
} cupti_buf;

static void *put(cupti_buf *b, size_t size, CUpti_ActivityKind kind) {
  size = (size + 7) & ~(size_t)7;
  if (b->used + size > sizeof(b->bytes))
    check(1, "the CUPTI buffer is too small");
  uint8_t *p = b->bytes + b->used;
  memset(p, 0, size);
  ((CUpti_Activity *)p)->kind = kind;
  b->used += size;
  return p;
}

static uint64_t cupti_now(void) {
  uint64_t t = 0;
  if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS)
    check(1, "cuptiGetTimestamp");
  return t;
}

/* A device, a context, a copy, a kernel and a fill, as CUPTI records. */
static void cuda_work(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "cuda-mixed: %s\n", dlerror());
    exit(2);
  }
  int (*replay)(const void *, size_t) =
      (int (*)(const void *, size_t))dlsym(h, "gp__cuda_replay");
  if (!replay) {
    fprintf(stderr, "cuda-mixed: %s lacks gp__cuda_replay\n", lib);
    exit(2);
  }
  static cupti_buf b;
  CUpti_ActivityDevice5 *d = put(&b, sizeof(*d), CUPTI_ACTIVITY_KIND_DEVICE);
  d->id = 0;
  d->name = "mixed test CUDA device";
  d->numMultiprocessors = 8;
  d->computeCapabilityMajor = 9;
  d->globalMemorySize = 1ull << 30;
  CUpti_ActivityContext3 *c = put(&b, sizeof(*c), CUPTI_ACTIVITY_KIND_CONTEXT);
  c->contextId = 1;
  c->deviceId = 0;
  c->nullStreamId = 7;
  uint64_t t = cupti_now();
  CUpti_ActivityMemcpy6 *m = put(&b, sizeof(*m), CUPTI_ACTIVITY_KIND_MEMCPY);
  m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m->bytes = 1 << 20;
  m->start = t + 1000;
  m->end = t + 21000;
  m->contextId = 1;
  m->streamId = 7;
  m->correlationId = 1;
  CUpti_ActivityKernel10 *k =
      put(&b, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k->start = t + 22000;
  k->end = t + 72000;
  k->contextId = 1;
  k->streamId = 7;
  k->gridX = 64;
  k->gridY = k->gridZ = 1;
  k->blockX = 128;
  k->blockY = k->blockZ = 1;
  k->correlationId = 2;
  k->name = "_Z16cuda_mixed_scalePf";
  CUpti_ActivityMemset4 *s = put(&b, sizeof(*s), CUPTI_ACTIVITY_KIND_MEMSET);
  s->start = t + 73000;
  s->end = t + 75000;
  s->bytes = 1 << 20;
  s->contextId = 1;
  s->streamId = 7;
  s->correlationId = 3;
  s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  check(replay(b.bytes, b.used), "gp__cuda_replay");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cuda-mixed LIBGPUPERF-CUDA\n");
    return 1;
  }
  sim_work();
  opencl_work();
  cuda_work(argv[1]);
  return 0;
}
