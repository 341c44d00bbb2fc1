/*
 * bench/opencl.c - what the OpenCL interception costs a program.
 *
 *   opencl [--kernels N] [--runs R] [--iterations I] [--tiny-only]
 *          [--realistic-only] [--api-only] [--one-way plain|traced]
 *
 * Two workloads, each run R times (default 5) without interception and R
 * times with it, alternately, in one process on the first OpenCL device:
 *
 *   tiny       N (default 100000) kernels of 64 work-items on an in-order
 *              queue, no events, in chunks of 5000 that alternate between
 *              the two ways, each ending with clFinish: the worst case,
 *              where the driver's own cost per enqueue is smallest;
 *   realistic  I (default 40) iterations of an upload, three kernels of
 *              256 Ki work-items chained by events across two queues, a
 *              reduction with a __local argument and a download.
 *
 * "Without" calls the loader's functions directly (looked up in
 * libOpenCL.so.1), "with" goes through the library's wrappers, linked into
 * this program, with API, KERNEL, MEMCPY, MEMSET and SYNCHRONIZATION
 * records collected into buffers that a completion callback consumes.
 * Prints medians: ns per enqueue and the ns added (from the run totals,
 * and from the differences of neighbouring chunks, which the load of a
 * shared machine disturbs least), the process's CPU time per enqueue, and
 * the ratio of wall times. Targets: <= 1000 ns added per enqueue, <= 5 %
 * on the realistic workload. --tiny-only, --realistic-only: one workload;
 * --api-only: API records only (no command is tracked); --one-way: only
 * that way (for profilers).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpuperf/gpuperf.h"
#include "stats.h"

/* The calls the workloads make, from one source or the other. */
typedef struct api {
  __typeof__(&clGetPlatformIDs) GetPlatformIDs;
  __typeof__(&clGetDeviceIDs) GetDeviceIDs;
  __typeof__(&clGetDeviceInfo) GetDeviceInfo;
  __typeof__(&clCreateContext) CreateContext;
  __typeof__(&clCreateCommandQueueWithProperties) CreateQueue;
  __typeof__(&clCreateProgramWithSource) CreateProgramWithSource;
  __typeof__(&clBuildProgram) BuildProgram;
  __typeof__(&clCreateKernel) CreateKernel;
  __typeof__(&clCreateBuffer) CreateBuffer;
  __typeof__(&clSetKernelArg) SetKernelArg;
  __typeof__(&clEnqueueNDRangeKernel) EnqueueNDRangeKernel;
  __typeof__(&clEnqueueWriteBuffer) EnqueueWriteBuffer;
  __typeof__(&clEnqueueReadBuffer) EnqueueReadBuffer;
  __typeof__(&clFinish) Finish;
  __typeof__(&clReleaseEvent) ReleaseEvent;
  __typeof__(&clReleaseMemObject) ReleaseMemObject;
  __typeof__(&clReleaseKernel) ReleaseKernel;
  __typeof__(&clReleaseProgram) ReleaseProgram;
  __typeof__(&clReleaseCommandQueue) ReleaseCommandQueue;
  __typeof__(&clReleaseContext) ReleaseContext;
} api;

#define API_FIELDS(X)                                                          \
  X(GetPlatformIDs, clGetPlatformIDs)                                          \
  X(GetDeviceIDs, clGetDeviceIDs)                                              \
  X(GetDeviceInfo, clGetDeviceInfo)                                            \
  X(CreateContext, clCreateContext)                                            \
  X(CreateQueue, clCreateCommandQueueWithProperties)                           \
  X(CreateProgramWithSource, clCreateProgramWithSource)                        \
  X(BuildProgram, clBuildProgram)                                              \
  X(CreateKernel, clCreateKernel)                                              \
  X(CreateBuffer, clCreateBuffer)                                              \
  X(SetKernelArg, clSetKernelArg)                                              \
  X(EnqueueNDRangeKernel, clEnqueueNDRangeKernel)                              \
  X(EnqueueWriteBuffer, clEnqueueWriteBuffer)                                  \
  X(EnqueueReadBuffer, clEnqueueReadBuffer)                                    \
  X(Finish, clFinish)                                                          \
  X(ReleaseEvent, clReleaseEvent)                                              \
  X(ReleaseMemObject, clReleaseMemObject)                                      \
  X(ReleaseKernel, clReleaseKernel)                                            \
  X(ReleaseProgram, clReleaseProgram)                                          \
  X(ReleaseCommandQueue, clReleaseCommandQueue)                                \
  X(ReleaseContext, clReleaseContext)

static int api_real(api *a) {
  void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "opencl: cannot open libOpenCL.so.1: %s\n", dlerror());
    return -1;
  }
#define REAL(field, name)                                                      \
  if (!(*(void **)&a->field = dlsym(h, #name))) {                              \
    fprintf(stderr, "opencl: libOpenCL.so.1 has no %s\n", #name);              \
    return -1;                                                                 \
  }
  API_FIELDS(REAL)
#undef REAL
  return 0;
}

static void api_wrapped(api *a) {
#define WRAPPED(field, name) a->field = name;
  API_FIELDS(WRAPPED)
#undef WRAPPED
}

static const char *source =
    "__kernel void tiny(__global int *x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void saxpy(__global float *y, __global const float *x,\n"
    "                    float a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float v = y[i];\n"
    "  for (int k = 0; k < 16; k++) v = a * x[i] + v * 0.5f;\n"
    "  y[i] = v;\n"
    "}\n"
    "__kernel void reduce(__global const float *in, __global float *out,\n"
    "                     __local float *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = n / 2; s > 0; s >>= 1) {\n"
    "    if (l < s) tmp[l] += tmp[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) out[get_group_id(0)] = tmp[0];\n"
    "}\n";

typedef struct env {
  const api *a;
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q1, q2;
  cl_program prog;
  cl_kernel tiny, saxpy, reduce;
} env;

#define CK(call)                                                               \
  do {                                                                         \
    cl_int r_ = (call);                                                        \
    if (r_ != CL_SUCCESS) {                                                    \
      fprintf(stderr, "opencl: %s failed: %d\n", #call, (int)r_);              \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static void env_init(env *e, const api *a) {
  memset(e, 0, sizeof(*e));
  e->a = a;
  cl_platform_id p[8];
  cl_uint np = 0;
  if (a->GetPlatformIDs(8, p, &np) != CL_SUCCESS || np == 0) {
    fprintf(stderr, "opencl: no OpenCL platform\n");
    exit(77);
  }
  bool found = false;
  for (cl_uint i = 0; i < np && i < 8 && !found; i++)
    found = a->GetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 1, &e->dev, NULL) ==
            CL_SUCCESS;
  if (!found) {
    fprintf(stderr, "opencl: no OpenCL device\n");
    exit(77);
  }
  cl_int err = 0;
  e->ctx = a->CreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
  CK(err);
  e->q1 = a->CreateQueue(e->ctx, e->dev, NULL, &err);
  CK(err);
  e->q2 = a->CreateQueue(e->ctx, e->dev, NULL, &err);
  CK(err);
  e->prog = a->CreateProgramWithSource(e->ctx, 1, &source, NULL, &err);
  CK(err);
  CK(a->BuildProgram(e->prog, 1, &e->dev, "", NULL, NULL));
  e->tiny = a->CreateKernel(e->prog, "tiny", &err);
  CK(err);
  e->saxpy = a->CreateKernel(e->prog, "saxpy", &err);
  CK(err);
  e->reduce = a->CreateKernel(e->prog, "reduce", &err);
  CK(err);
}

static void env_fini(env *e) {
  const api *a = e->a;
  a->ReleaseKernel(e->tiny);
  a->ReleaseKernel(e->saxpy);
  a->ReleaseKernel(e->reduce);
  a->ReleaseProgram(e->prog);
  a->ReleaseCommandQueue(e->q1);
  a->ReleaseCommandQueue(e->q2);
  a->ReleaseContext(e->ctx);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (every thread, the driver's included). */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling (application) thread only: what interception
 * adds where the program runs, without the driver's worker threads. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Makes e ready for tiny kernels: their buffer and argument, warm. */
static cl_mem tiny_setup(env *e) {
  const api *a = e->a;
  cl_int err = 0;
  cl_mem b =
      a->CreateBuffer(e->ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
  CK(err);
  CK(a->SetKernelArg(e->tiny, 0, sizeof(b), &b));
  size_t g = 64, l = 64;
  CK(a->EnqueueNDRangeKernel(e->q1, e->tiny, 1, NULL, &g, &l, 0, NULL, NULL));
  CK(a->Finish(e->q1)); /* compiled and warm before the clock starts */
  return b;
}

/* N tiny kernels, then clFinish; returns the wall time in seconds, adds
 * the process's CPU time to *cpu and stores the application thread's in
 * *tcpu. */
static double run_tiny(env *e, long n, double *cpu, double *tcpu) {
  const api *a = e->a;
  size_t g = 64, l = 64;
  double t0 = now_s(), c0 = cpu_s(), tc0 = thread_cpu_s();
  for (long i = 0; i < n; i++)
    CK(a->EnqueueNDRangeKernel(e->q1, e->tiny, 1, NULL, &g, &l, 0, NULL, NULL));
  CK(a->Finish(e->q1));
  *tcpu = thread_cpu_s() - tc0;
  *cpu += cpu_s() - c0;
  return now_s() - t0;
}

/*
 * The loop `make bench-instructions` counts (valgrind --tool=callgrind
 * --toggle-collect=instr_enqueue): n tiny enqueues, nothing else. Never
 * inlined, so that the tool finds it by name.
 */
__attribute__((noinline)) void instr_enqueue(env *e, long n);
__attribute__((noinline)) void instr_enqueue(env *e, long n) {
  const api *a = e->a;
  size_t g = 64, l = 64;
  for (long i = 0; i < n; i++)
    CK(a->EnqueueNDRangeKernel(e->q1, e->tiny, 1, NULL, &g, &l, 0, NULL, NULL));
}

/* A small iterative solver's shape; returns the wall time in seconds. */
static double run_realistic(env *e, int iterations) {
  const api *a = e->a;
  enum { N = 256 * 1024, GROUP = 256 };
  size_t bytes = N * sizeof(float);
  float *host = malloc(bytes), *partial = malloc(bytes / GROUP);
  for (int i = 0; i < N; i++)
    host[i] = (float)(i % 13);
  cl_int err = 0;
  cl_mem x = a->CreateBuffer(e->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem y = a->CreateBuffer(e->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  cl_mem r =
      a->CreateBuffer(e->ctx, CL_MEM_READ_WRITE, bytes / GROUP, NULL, &err);
  CK(err);
  size_t g = N, l = GROUP;
  float alpha = 0.25f;
  CK(a->SetKernelArg(e->reduce, 2, GROUP * sizeof(float), NULL));
  double t0 = 0;
  for (int it = -1; it < iterations; it++) {
    if (it == 0)
      t0 = now_s(); /* iteration -1 warms the kernels up */
    cl_event up, k[3], red;
    CK(a->EnqueueWriteBuffer(e->q1, x, CL_FALSE, 0, bytes, host, 0, NULL, &up));
    CK(a->SetKernelArg(e->saxpy, 0, sizeof(y), &y));
    CK(a->SetKernelArg(e->saxpy, 1, sizeof(x), &x));
    CK(a->SetKernelArg(e->saxpy, 2, sizeof(alpha), &alpha));
    CK(a->EnqueueNDRangeKernel(e->q2, e->saxpy, 1, NULL, &g, &l, 1, &up,
                               &k[0]));
    CK(a->EnqueueNDRangeKernel(e->q2, e->saxpy, 1, NULL, &g, &l, 0, NULL,
                               &k[1]));
    CK(a->EnqueueNDRangeKernel(e->q2, e->saxpy, 1, NULL, &g, &l, 0, NULL,
                               &k[2]));
    CK(a->SetKernelArg(e->reduce, 0, sizeof(y), &y));
    CK(a->SetKernelArg(e->reduce, 1, sizeof(r), &r));
    CK(a->EnqueueNDRangeKernel(e->q1, e->reduce, 1, NULL, &g, &l, 1, &k[2],
                               &red));
    CK(a->EnqueueReadBuffer(e->q1, r, CL_TRUE, 0, bytes / GROUP, partial, 1,
                            &red, NULL));
    a->ReleaseEvent(up);
    for (int i = 0; i < 3; i++)
      a->ReleaseEvent(k[i]);
    a->ReleaseEvent(red);
  }
  CK(a->Finish(e->q2));
  double t = now_s() - t0;
  a->ReleaseMemObject(x);
  a->ReleaseMemObject(y);
  a->ReleaseMemObject(r);
  free(host);
  free(partial);
  return t;
}

/* ------------------------------------------------------------------ */
/* Records: consumed as a trace writer would, without writing.         */

static _Atomic unsigned long records;
static size_t buffer_bytes = 1 << 20; /* as the core suggests by default */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[64];
static int pool_n;

/* Buffers are recycled, as a trace writer would: fresh ones cost page
 * faults, which are not the interception's doing. */
static void on_request(uint8_t **buffer, size_t *size, size_t *max) {
  *size = buffer_bytes;
  *max = 0;
  pthread_mutex_lock(&pool_lock);
  *buffer = pool_n > 0 ? pool[--pool_n] : NULL;
  pthread_mutex_unlock(&pool_lock);
  if (!*buffer)
    *buffer = aligned_alloc(8, *size);
}

static void on_complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  const gp_activity *r = NULL;
  unsigned long n = 0;
  while (gp_activity_get_next_record(buffer, valid, &r) == 0)
    n++;
  records += n;
  pthread_mutex_lock(&pool_lock);
  if (pool_n < 64)
    pool[pool_n++] = buffer, buffer = NULL;
  pthread_mutex_unlock(&pool_lock);
  free(buffer);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * --instr: n tiny enqueues one way, in chunks of 1000 each ended by a
 * clFinish outside the counted loop (scripts/bench-instructions.sh).
 */
static int instr_main(const char *way, long n, const api *real,
                      const api *wrapped) {
  bool traced = strcmp(way, "traced") == 0;
  if (!traced && strcmp(way, "plain") != 0) {
    fprintf(stderr, "opencl: --instr plain or traced\n");
    return 2;
  }
  env e;
  env_init(&e, traced ? wrapped : real);
  cl_mem b = tiny_setup(&e);
  for (long done = 0; done < n;) {
    long k = n - done < 1000 ? n - done : 1000;
    instr_enqueue(&e, k);
    CK(e.a->Finish(e.q1));
    done += k;
  }
  e.a->ReleaseMemObject(b);
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  size_t d = 0;
  gp_activity_get_num_dropped_records(0, 0, &d);
  printf("instr %s %ld enqueues, %lu records, %zu dropped\n", way, n,
         (unsigned long)records, d);
  env_fini(&e);
  gp_activity_finalize();
  return d != 0;
}

int main(int argc, char **argv) {
  long kernels = 100000;
  int runs = 5, iterations = 40;
  bool api_only = false, tiny_only = false, realistic_only = false;
  const char *one_way = NULL; /* "plain" or "traced": that way only */
  const char *instr = NULL;   /* --instr plain|traced */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc)
      kernels = atol(argv[++i]);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = atoi(argv[++i]);
    else if (strcmp(argv[i], "--api-only") == 0)
      api_only = true;
    else if (strcmp(argv[i], "--tiny-only") == 0)
      tiny_only = true;
    else if (strcmp(argv[i], "--realistic-only") == 0)
      realistic_only = true;
    else if (strcmp(argv[i], "--one-way") == 0 && i + 1 < argc)
      one_way = argv[++i];
    else if (strcmp(argv[i], "--instr") == 0 && i + 1 < argc)
      instr = argv[++i];
    else if (strcmp(argv[i], "--buffer-kb") == 0 && i + 1 < argc)
      buffer_bytes = (size_t)atol(argv[++i]) << 10;
    else {
      fprintf(stderr, "usage: opencl [--kernels N] [--runs R] "
                      "[--iterations I] [--api-only] [--tiny-only] "
                      "[--realistic-only]\n"
                      "       opencl --instr plain|traced --kernels N\n");
      return 2;
    }
  }
  if (kernels < 1 || runs < 1 || runs > 100 || iterations < 1) {
    fprintf(stderr, "opencl: --kernels, --runs (<= 100) and --iterations "
                    "must be positive\n");
    return 2;
  }

  api real, wrapped;
  if (api_real(&real) != 0)
    return 77;
  api_wrapped(&wrapped);
  if (gp_activity_register_callbacks(on_request, on_complete) != 0)
    return 1;
  static const gp_activity_kind kinds[] = {
      GP_ACTIVITY_KIND_API, GP_ACTIVITY_KIND_KERNEL, GP_ACTIVITY_KIND_MEMCPY,
      GP_ACTIVITY_KIND_MEMSET, GP_ACTIVITY_KIND_SYNCHRONIZATION};
  for (size_t i = 0; i < (api_only ? 1 : sizeof(kinds) / sizeof(kinds[0])); i++)
    gp_activity_enable(kinds[i]);

  if (instr)
    return instr_main(instr, kernels, &real, &wrapped);

  env plain, traced;
  env_init(&plain, &real);
  env_init(&traced, &wrapped);
  char name[256] = "";
  real.GetDeviceInfo(plain.dev, CL_DEVICE_NAME, sizeof(name), name, NULL);
  printf("opencl: device \"%s\", %d runs of each, medians\n", name, runs);

  /* Tiny kernels: each run enqueues N kernels each way, in chunks of
   * CHUNK that alternate between the two (and which goes first), each
   * ending with clFinish. The load of a shared machine comes and goes;
   * neighbouring chunks see the same, so their differences are what the
   * interception adds. */
  enum { CHUNK = 5000, MAX_CHUNKS = 4000 };
  static double chunk_diff[MAX_CHUNKS], chunk_tdiff[MAX_CHUNKS];
  double t_plain[100], t_traced[100], r_plain[100], r_traced[100];
  double c_plain[100], c_traced[100];
  size_t nd = 0;
  cl_mem bp = tiny_setup(&plain), bt = tiny_setup(&traced);
  for (int i = 0; i < runs; i++) {
    t_plain[i] = t_traced[i] = c_plain[i] = c_traced[i] = 0;
    for (long done = 0, c = 0; !realistic_only && done < kernels; c++) {
      long n = kernels - done < CHUNK ? kernels - done : CHUNK;
      double tp1 = 0, tt1 = 0, ap = 0, at = 0;
      for (int k = 0; k < 2; k++) {
        if ((c + k) % 2 == 0 && (!one_way || one_way[0] == 'p'))
          tp1 = run_tiny(&plain, n, &c_plain[i], &ap);
        else if ((c + k) % 2 == 1 && (!one_way || one_way[0] == 't'))
          tt1 = run_tiny(&traced, n, &c_traced[i], &at);
      }
      t_plain[i] += tp1;
      t_traced[i] += tt1;
      if (nd < MAX_CHUNKS) {
        chunk_tdiff[nd] = (at - ap) / (double)n;
        chunk_diff[nd++] = (tt1 - tp1) / (double)n;
      }
      done += n;
    }
  }
  real.ReleaseMemObject(bp);
  wrapped.ReleaseMemObject(bt);
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  unsigned long tiny_records = records;
  for (int i = 0; i < runs && !tiny_only; i++) {
    /* Alternate which goes first: the first of a pair runs colder. */
    if (i % 2) {
      r_traced[i] = run_realistic(&traced, iterations);
      r_plain[i] = run_realistic(&plain, iterations);
    } else {
      r_plain[i] = run_realistic(&plain, iterations);
      r_traced[i] = run_realistic(&traced, iterations);
    }
  }
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);

  /* Per enqueue, each run's: spreads before median() sorts the arrays. */
  double e_plain[100], e_traced[100], ec_plain[100], ec_traced[100];
  for (int i = 0; i < runs; i++) {
    e_plain[i] = t_plain[i] * 1e9 / (double)kernels;
    e_traced[i] = t_traced[i] * 1e9 / (double)kernels;
    ec_plain[i] = c_plain[i] * 1e9 / (double)kernels;
    ec_traced[i] = c_traced[i] * 1e9 / (double)kernels;
  }
  double tp = median(t_plain, runs), tt = median(t_traced, runs);
  double per_plain = tp * 1e9 / (double)kernels;
  double per_traced = tt * 1e9 / (double)kernels;
  printf("tiny kernels: %ld enqueues per run each way, median [min..max] of "
         "%d interleaved runs\n",
         kernels, runs);
  printf("  without interception  %s ns per enqueue (wall)\n",
         BENCH_FMT(e_plain, runs, 0));
  printf("  with interception     %s ns per enqueue (wall)\n",
         BENCH_FMT(e_traced, runs, 0));
  printf("  added                 %8.0f ns per enqueue (target <= 1000), "
         "ratio %.3f\n",
         per_traced - per_plain, tt / tp);
  printf("  added, paired chunks  %8.0f ns per enqueue (median of %zu "
         "differences of %d-kernel chunks)\n",
         nd ? median(chunk_diff, (int)nd) * 1e9 : 0.0, nd, (int)CHUNK);
  if (nd) {
    /* median() sorts: the quartiles are read from the sorted array. */
    double m = median(chunk_tdiff, (int)nd) * 1e9;
    printf("  added CPU time of the application thread, paired chunks "
           "%6.0f ns per enqueue [min %.0f, quartiles %.0f .. %.0f, max %.0f]; "
           "target <= 500: %s\n",
           m, chunk_tdiff[0] * 1e9, chunk_tdiff[nd / 4] * 1e9,
           chunk_tdiff[(3 * nd) / 4] * 1e9, chunk_tdiff[nd - 1] * 1e9,
           m <= 500 ? "met" : "NOT met");
  }
  printf("  CPU time, all threads: plain %s, traced %s ns per enqueue\n",
         BENCH_FMT(ec_plain, runs, 0), BENCH_FMT(ec_traced, runs, 0));
  if (!tiny_only) { /* --tiny-only ran no realistic workload */
    double ms_plain[100], ms_traced[100];
    for (int i = 0; i < runs; i++)
      ms_plain[i] = r_plain[i] * 1e3, ms_traced[i] = r_traced[i] * 1e3;
    double rp = median(r_plain, runs), rt = median(r_traced, runs);
    printf("realistic: %d iterations (upload, 4 kernels, download) per run, "
           "median [min..max]\n",
           iterations);
    printf("  without interception  %s ms\n", BENCH_FMT(ms_plain, runs, 1));
    printf("  with interception     %s ms\n", BENCH_FMT(ms_traced, runs, 1));
    printf("  overhead              %+7.2f %% (target <= 5 %%), ratio %.3f\n",
           (rt / rp - 1) * 100, rt / rp);
  }
  printf("records collected: %lu (tiny), %lu (all)\n", tiny_records,
         (unsigned long)records);
  env_fini(&plain);
  env_fini(&traced);
  gp_activity_finalize();
  return 0;
}
