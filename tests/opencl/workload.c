/*
 * workload.c - see workload.h. Every enqueue goes through one of the
 * counting helpers below, which also decide whether the call asks for an
 * event; values are small integers so every result is exact.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

static const char *source =
    "__kernel void scale(__global float *a, float f) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = a[i] * f;\n"
    "}\n"
    "__kernel void add(__global const float *a, __global const float *b,\n"
    "                  __global float *c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n"
    "__kernel void blur2d(__global const float *in, __global float *out,\n"
    "                     int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  float s = 0.0f;\n"
    "  for (int dy = -1; dy <= 1; dy++)\n"
    "    for (int dx = -1; dx <= 1; dx++) {\n"
    "      int xx = x + dx, yy = y + dy;\n"
    "      if (xx >= 0 && xx < w && yy >= 0 && yy < h)\n"
    "        s += in[yy * w + xx];\n"
    "    }\n"
    "  out[y * w + x] = s;\n"
    "}\n"
    "__kernel void reduce(__global const float *in, __global float *out,\n"
    "                     __local float *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = n / 2; s > 0; s >>= 1) {\n"
    "    if (l < s)\n"
    "      tmp[l] += tmp[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0)\n"
    "    out[get_group_id(0)] = tmp[0];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(16, 1, 1)))\n"
    "void fixed16(__global int *x) {\n"
    "  x[get_global_id(0)] += (int)get_local_id(0);\n"
    "}\n"
    "__kernel void task(__global int *x) { x[0] += 1; }\n"
    "__kernel void svm_inc(__global int *p) { p[get_global_id(0)] += 1; }\n";

typedef struct wl {
  const wl_options *opt;
  FILE *out;
  wl_counts *c;
  cl_platform_id platform;
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue qa; /* in-order, profiling not asked for */
  cl_command_queue qb; /* in-order, profiling asked for (1.x call) */
  cl_command_queue qo; /* out-of-order */
  cl_program prog;
  cl_kernel k_scale, k_add, k_blur, k_reduce, k_fixed, k_task, k_svm;
  bool images, svm;
} wl;

#define CHECK(call)                                                            \
  do {                                                                         \
    cl_int r_ = (call);                                                        \
    if (r_ != CL_SUCCESS) {                                                    \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call,     \
              (int)r_);                                                        \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* The caller declares cl_int e_, which call passes as its errcode_ret. */
#define CHECK_OBJ(var, call)                                                   \
  do {                                                                         \
    e_ = CL_SUCCESS;                                                           \
    var = (call);                                                              \
    if (!var || e_ != CL_SUCCESS) {                                            \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call,     \
              (int)e_);                                                        \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------------ */
/* Counting                                                             */

/* Counts one launch of kernel name with the given shape. */
static void count_kernel(wl *w, const char *name, cl_uint dims,
                         const size_t *global, const size_t *local,
                         uint32_t local_bytes, bool failed) {
  wl_kernel_count key;
  memset(&key, 0, sizeof(key));
  snprintf(key.name, sizeof(key.name), "%s", name);
  for (cl_uint i = 0; i < 3; i++) {
    size_t g = i < dims ? global[i] : 1;
    if (local) {
      size_t l = i < dims ? local[i] : 1;
      key.grid[i] = (uint32_t)((g + l - 1) / l);
      key.block[i] = (uint32_t)l;
    } else {
      key.grid[i] = (uint32_t)g;
      key.block[i] = 0;
    }
  }
  key.local_bytes = local_bytes;
  wl_counts *c = w->c;
  unsigned i;
  for (i = 0; i < c->num_kernel_groups; i++) {
    wl_kernel_count *k = &c->kernels[i];
    if (strcmp(k->name, key.name) == 0 &&
        memcmp(k->grid, key.grid, sizeof(key.grid)) == 0 &&
        memcmp(k->block, key.block, sizeof(key.block)) == 0 &&
        k->local_bytes == key.local_bytes)
      break;
  }
  if (i == c->num_kernel_groups) {
    if (i == WL_MAX_KERNEL_GROUPS)
      abort(); /* the workload grew: raise the limit */
    c->kernels[i] = key;
    c->num_kernel_groups++;
  }
  if (failed)
    c->kernels[i].failed++;
  else
    c->kernels[i].launches++;
  c->commands++;
}

static void count_copy(wl *w, int kind, uint64_t bytes) {
  w->c->copies[kind]++;
  w->c->copy_bytes[kind] += bytes;
  w->c->commands++;
}

static void count_fill(wl *w, uint64_t bytes) {
  w->c->fills++;
  w->c->fill_bytes += bytes;
  w->c->commands++;
}

/* The event pointer to pass: ev, or NULL (counted) when want is false. */
static cl_event *ev_or_null(wl *w, cl_event *ev, bool want) {
  if (want)
    return ev;
  w->c->null_events++;
  return NULL;
}

static cl_uint refcount(cl_event ev) {
  cl_uint n = 0;
  if (clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof(n), &n, NULL) !=
      CL_SUCCESS)
    return 0;
  return n;
}

/* Waits for the driver to drop the references it held for the command
 * (no change for 20 ms, at most 2 s) and returns the count that remains. */
static cl_uint settled_refcount(cl_event ev) {
  cl_uint n = refcount(ev);
  for (int i = 0, same = 0; i < 2000 && same < 20; i++) {
    usleep(1000);
    cl_uint m = refcount(ev);
    same = m == n ? same + 1 : 0;
    n = m;
  }
  return n;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                               */

static int setup(wl *w) {
  cl_uint np = 0;
  cl_platform_id plats[8];
  if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0)
    return WL_NO_DEVICE;
  bool found = false;
  for (cl_uint i = 0; i < np && i < 8 && !found; i++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &w->dev, &nd) ==
            CL_SUCCESS &&
        nd > 0) {
      w->platform = plats[i];
      found = true;
    }
  }
  if (!found)
    return WL_NO_DEVICE;
  cl_bool img = CL_FALSE;
  CHECK(clGetDeviceInfo(w->dev, CL_DEVICE_IMAGE_SUPPORT, sizeof(img), &img,
                        NULL));
  w->images = img == CL_TRUE;
  cl_device_svm_capabilities svm = 0;
  if (clGetDeviceInfo(w->dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm,
                      NULL) == CL_SUCCESS)
    w->svm = (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;

  cl_int e_ = CL_SUCCESS;
  CHECK_OBJ(w->ctx, clCreateContext(NULL, 1, &w->dev, NULL, NULL, &e_));
  CHECK_OBJ(w->qa,
            clCreateCommandQueueWithProperties(w->ctx, w->dev, NULL, &e_));
  CHECK_OBJ(w->qb, clCreateCommandQueue(w->ctx, w->dev,
                                        CL_QUEUE_PROFILING_ENABLE, &e_));
  cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES,
                               CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  CHECK_OBJ(w->qo,
            clCreateCommandQueueWithProperties(w->ctx, w->dev, ooo, &e_));
  (void)e_;

  CHECK_OBJ(w->prog, clCreateProgramWithSource(w->ctx, 1, &source, NULL, &e_));
  if (clBuildProgram(w->prog, 1, &w->dev, "", NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(w->prog, w->dev, CL_PROGRAM_BUILD_LOG, sizeof(log),
                          log, NULL);
    fprintf(stderr, "clBuildProgram failed:\n%s\n", log);
    return 1;
  }
  CHECK_OBJ(w->k_scale, clCreateKernel(w->prog, "scale", &e_));
  CHECK_OBJ(w->k_add, clCreateKernel(w->prog, "add", &e_));
  CHECK_OBJ(w->k_blur, clCreateKernel(w->prog, "blur2d", &e_));
  CHECK_OBJ(w->k_reduce, clCreateKernel(w->prog, "reduce", &e_));
  CHECK_OBJ(w->k_fixed, clCreateKernel(w->prog, "fixed16", &e_));
  CHECK_OBJ(w->k_svm, clCreateKernel(w->prog, "svm_inc", &e_));
  /* The task kernel comes from clCreateKernelsInProgram-style cloning. */
  cl_kernel tmp;
  CHECK_OBJ(tmp, clCreateKernel(w->prog, "task", &e_));
  CHECK_OBJ(w->k_task, clCloneKernel(tmp, &e_));
  CHECK(clReleaseKernel(tmp));
  return 0;
}

static void teardown(wl *w) {
  cl_kernel ks[] = {w->k_scale, w->k_add,  w->k_blur, w->k_reduce,
                    w->k_fixed, w->k_task, w->k_svm};
  for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
    if (ks[i])
      clReleaseKernel(ks[i]);
  if (w->prog)
    clReleaseProgram(w->prog);
  cl_command_queue qs[] = {w->qa, w->qb, w->qo};
  for (int i = 0; i < 3; i++)
    if (qs[i])
      clReleaseCommandQueue(qs[i]);
  if (w->ctx)
    clReleaseContext(w->ctx);
}

/* ------------------------------------------------------------------ */
/* Phases                                                               */

/* What the program sees of its queues and events. */
static int observe(wl *w) {
  cl_command_queue_properties pa = 0, pb = 0, po = 0;
  CHECK(
      clGetCommandQueueInfo(w->qa, CL_QUEUE_PROPERTIES, sizeof(pa), &pa, NULL));
  CHECK(
      clGetCommandQueueInfo(w->qb, CL_QUEUE_PROPERTIES, sizeof(pb), &pb, NULL));
  CHECK(
      clGetCommandQueueInfo(w->qo, CL_QUEUE_PROPERTIES, sizeof(po), &po, NULL));
  size_t arr = 0;
  CHECK(clGetCommandQueueInfo(w->qo, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &arr));
  fprintf(w->out,
          "%s queue properties qa=%#llx qb=%#llx qo=%#llx qo_array=%zu\n",
          w->opt->tag, (unsigned long long)pa, (unsigned long long)pb,
          (unsigned long long)po, arr);

  float x = 1.0f;
  cl_mem b;
  cl_int e_ = CL_SUCCESS;
  CHECK_OBJ(b, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, sizeof(x), NULL, &e_));
  cl_event ea, eb;
  CHECK(
      clEnqueueWriteBuffer(w->qa, b, CL_TRUE, 0, sizeof(x), &x, 0, NULL, &ea));
  count_copy(w, WL_HTOD, sizeof(x));
  CHECK(
      clEnqueueWriteBuffer(w->qb, b, CL_TRUE, 0, sizeof(x), &x, 0, NULL, &eb));
  count_copy(w, WL_HTOD, sizeof(x));
  cl_ulong t = 0;
  cl_int ra = clGetEventProfilingInfo(ea, CL_PROFILING_COMMAND_END, sizeof(t),
                                      &t, NULL);
  cl_int rb = clGetEventProfilingInfo(eb, CL_PROFILING_COMMAND_END, sizeof(t),
                                      &t, NULL);
  fprintf(w->out, "%s profiling qa=%d qb=%d\n", w->opt->tag, (int)ra, (int)rb);
  CHECK(clReleaseEvent(ea));
  CHECK(clReleaseEvent(eb));
  CHECK(clReleaseMemObject(b));
  return 0;
}

/* Kernels, buffer copies, fills and maps across three queues. */
static int buffers(wl *w, float *result) {
  size_t n = w->opt->n, bytes = n * sizeof(float);
  float *h = malloc(bytes), *h2 = malloc(bytes);
  if (!h || !h2)
    return 1;
  for (size_t i = 0; i < n; i++)
    h[i] = (float)(i % 7);
  cl_int e_ = CL_SUCCESS;
  cl_mem a, b, c, r;
  CHECK_OBJ(a, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e_));
  CHECK_OBJ(b, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e_));
  CHECK_OBJ(c, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e_));
  CHECK_OBJ(r,
            clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, bytes / 64, NULL, &e_));
  cl_event w_a, fill_b, k_scale, k_add, mk, k_red;

  /* qa: upload a (event), fill b (event). */
  CHECK(clEnqueueWriteBuffer(w->qa, a, CL_FALSE, 0, bytes, h, 0, NULL, &w_a));
  count_copy(w, WL_HTOD, bytes);
  float two = 2.0f;
  CHECK(clEnqueueFillBuffer(w->qa, b, &two, sizeof(two), 0, bytes, 0, NULL,
                            &fill_b));
  count_fill(w, bytes);

  /* qo (out-of-order): scale a after the upload on qa (cross-queue). */
  float f = 3.0f;
  CHECK(clSetKernelArg(w->k_scale, 0, sizeof(a), &a));
  CHECK(clSetKernelArg(w->k_scale, 1, sizeof(f), &f));
  size_t g1 = n, l1 = 64;
  CHECK(clEnqueueNDRangeKernel(w->qo, w->k_scale, 1, NULL, &g1, &l1, 1, &w_a,
                               &k_scale));
  count_kernel(w, "scale", 1, &g1, &l1, 0, false);
  w->c->dependencies += 1;

  /* qo: c = a + b after both, through a marker on qo's view. */
  cl_event both[2] = {k_scale, fill_b};
  CHECK(clEnqueueMarkerWithWaitList(w->qo, 2, both, &mk));
  w->c->markers++;
  CHECK(clSetKernelArg(w->k_add, 0, sizeof(a), &a));
  CHECK(clSetKernelArg(w->k_add, 1, sizeof(b), &b));
  CHECK(clSetKernelArg(w->k_add, 2, sizeof(c), &c));
  CHECK(clEnqueueNDRangeKernel(w->qo, w->k_add, 1, NULL, &g1, &l1, 1, &mk,
                               &k_add));
  count_kernel(w, "add", 1, &g1, &l1, 0, false);
  w->c->dependencies += 2; /* the marker stands for scale and the fill */

  /* qb: reduce c in groups of 64 with a __local argument, after add. */
  CHECK(clSetKernelArg(w->k_reduce, 0, sizeof(c), &c));
  CHECK(clSetKernelArg(w->k_reduce, 1, sizeof(r), &r));
  CHECK(clSetKernelArg(w->k_reduce, 2, 64 * sizeof(float), NULL));
  CHECK(clEnqueueNDRangeKernel(w->qb, w->k_reduce, 1, NULL, &g1, &l1, 1, &k_add,
                               &k_red));
  count_kernel(w, "reduce", 1, &g1, &l1, 64 * sizeof(float), false);
  w->c->dependencies += 1;

  /* qb: read the partial sums (blocking, no event). */
  float *partial = malloc(bytes / 64);
  if (!partial)
    return 1;
  CHECK(clEnqueueReadBuffer(w->qb, r, CL_TRUE, 0, bytes / 64, partial, 0, NULL,
                            ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, bytes / 64);
  double sum = 0;
  for (size_t i = 0; i < n / 64; i++)
    sum += partial[i];
  free(partial);

  /* qa: copies within the device, whole and rectangular, no events. */
  CHECK(clEnqueueCopyBuffer(w->qa, c, a, 0, 0, bytes, 1, &k_red,
                            ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOD, bytes);
  w->c->dependencies += 1;
  size_t rows = n / 256;
  size_t origin[3] = {0, 0, 0}, region[3] = {256 * sizeof(float), rows / 2, 1};
  CHECK(clEnqueueCopyBufferRect(w->qa, a, b, origin, origin, region,
                                256 * sizeof(float), 0, 256 * sizeof(float), 0,
                                0, NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOD, region[0] * region[1]);
  CHECK(clEnqueueWriteBufferRect(w->qa, b, CL_FALSE, origin, origin, region,
                                 256 * sizeof(float), 0, 256 * sizeof(float), 0,
                                 h, 0, NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, region[0] * region[1]);
  CHECK(clEnqueueReadBufferRect(w->qa, b, CL_TRUE, origin, origin, region,
                                256 * sizeof(float), 0, 256 * sizeof(float), 0,
                                h2, 0, NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, region[0] * region[1]);
  unsigned char zero = 0;
  CHECK(clEnqueueFillBuffer(w->qa, b, &zero, 1, bytes / 2, bytes / 2, 0, NULL,
                            ev_or_null(w, NULL, false)));
  count_fill(w, bytes / 2);

  /* qa: 2-D blur of a, local size 16x16. */
  int wd = 256, ht = (int)rows;
  CHECK(clSetKernelArg(w->k_blur, 0, sizeof(a), &a));
  CHECK(clSetKernelArg(w->k_blur, 1, sizeof(c), &c));
  CHECK(clSetKernelArg(w->k_blur, 2, sizeof(wd), &wd));
  CHECK(clSetKernelArg(w->k_blur, 3, sizeof(ht), &ht));
  size_t g2[2] = {256, rows}, l2[2] = {16, 16};
  CHECK(clEnqueueNDRangeKernel(w->qa, w->k_blur, 2, NULL, g2, l2, 0, NULL,
                               ev_or_null(w, NULL, false)));
  count_kernel(w, "blur2d", 2, g2, l2, 0, false);

  /* qa: map c for reading (the blur's output), then unmap; map a region of
   * b for writing, write it, unmap. */
  float *m;
  CHECK_OBJ(m, (float *)clEnqueueMapBuffer(w->qa, c, CL_TRUE, CL_MAP_READ, 0,
                                           bytes, 0, NULL,
                                           ev_or_null(w, NULL, false), &e_));
  count_copy(w, WL_DTOH, bytes);
  double blur = 0;
  for (size_t i = 0; i < n; i += 97)
    blur += m[i];
  CHECK(clEnqueueUnmapMemObject(w->qa, c, m, 0, NULL,
                                ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, 0); /* mapped for reading: nothing goes back */
  cl_event map_ev;
  CHECK_OBJ(m, (float *)clEnqueueMapBuffer(w->qa, b, CL_TRUE, CL_MAP_WRITE, 0,
                                           1024, 0, NULL, &map_ev, &e_));
  count_copy(w, WL_DTOH, 1024);
  for (int i = 0; i < 256; i++)
    m[i] = 5.0f;
  CHECK(clEnqueueUnmapMemObject(w->qa, b, m, 1, &map_ev,
                                ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, 1024);
  w->c->dependencies += 1;
  CHECK(clReleaseEvent(map_ev));

  /* qa: the kernel with a reqd_work_group_size. */
  CHECK(clSetKernelArg(w->k_fixed, 0, sizeof(b), &b));
  size_t g3 = 256;
  size_t fixed_local = 16;
  CHECK(clEnqueueNDRangeKernel(w->qa, w->k_fixed, 1, NULL, &g3, &fixed_local, 0,
                               NULL, ev_or_null(w, NULL, false)));
  count_kernel(w, "fixed16", 1, &g3, &fixed_local, 0, false);
  /* scale with no local size: the driver picks the work-group size. */
  CHECK(clSetKernelArg(w->k_scale, 0, sizeof(b), &b));
  CHECK(clEnqueueNDRangeKernel(w->qa, w->k_scale, 1, NULL, &g1, NULL, 0, NULL,
                               ev_or_null(w, NULL, false)));
  count_kernel(w, "scale", 1, &g1, NULL, 0, false);
  /* a task, then migrate b to the host and back. */
  CHECK(clSetKernelArg(w->k_task, 0, sizeof(b), &b));
  CHECK(clEnqueueTask(w->qa, w->k_task, 0, NULL, ev_or_null(w, NULL, false)));
  {
    size_t one = 1;
    count_kernel(w, "task", 1, &one, &one, 0, false);
  }
  CHECK(clEnqueueMigrateMemObjects(w->qa, 1, &b, CL_MIGRATE_MEM_OBJECT_HOST, 0,
                                   NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, bytes);
  CHECK(clEnqueueMigrateMemObjects(w->qa, 1, &b, 0, 0, NULL,
                                   ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, bytes);
  CHECK(clEnqueueBarrierWithWaitList(w->qa, 0, NULL, NULL));
  w->c->markers++;
  CHECK(clEnqueueReadBuffer(w->qa, b, CL_TRUE, 0, bytes, h2, 0, NULL,
                            ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, bytes);
  double bsum = 0;
  for (size_t i = 0; i < n; i++)
    bsum += h2[i];

  CHECK(clFinish(w->qa));
  CHECK(clFinish(w->qb));
  CHECK(clFinish(w->qo));
  cl_event evs[] = {w_a, fill_b, k_scale, mk, k_add, k_red};
  for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
    CHECK(clReleaseEvent(evs[i]));
  CHECK(clReleaseMemObject(a));
  CHECK(clReleaseMemObject(b));
  CHECK(clReleaseMemObject(c));
  CHECK(clReleaseMemObject(r));
  free(h);
  free(h2);
  *result = (float)sum;
  fprintf(w->out, "%s buffers sum=%.1f blur=%.1f b=%.1f\n", w->opt->tag, sum,
          blur, bsum);
  return 0;
}

/* Images: write, fill, copy, read, to and from buffers, map. */
static int images(wl *w) {
  if (!w->images) {
    fprintf(w->out, "%s images unsupported\n", w->opt->tag);
    return 0;
  }
  cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_image_desc desc;
  memset(&desc, 0, sizeof(desc));
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = 64;
  desc.image_height = 32;
  cl_int e_ = CL_SUCCESS;
  cl_mem i1, i2, buf;
  CHECK_OBJ(i1,
            clCreateImage(w->ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &e_));
  CHECK_OBJ(i2,
            clCreateImage(w->ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &e_));
  size_t bytes = 64 * 32 * 4;
  CHECK_OBJ(buf, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e_));
  unsigned char *px = malloc(bytes);
  if (!px)
    return 1;
  for (size_t i = 0; i < bytes; i++)
    px[i] = (unsigned char)(i % 251);
  size_t origin[3] = {0, 0, 0}, region[3] = {64, 32, 1};
  size_t half[3] = {32, 32, 1};
  cl_event wr;
  CHECK(clEnqueueWriteImage(w->qb, i1, CL_FALSE, origin, region, 0, 0, px, 0,
                            NULL, &wr));
  count_copy(w, WL_HTOA, bytes);
  cl_uint4 color = {{7, 8, 9, 10}};
  CHECK(clEnqueueFillImage(w->qb, i2, &color, origin, half, 0, NULL,
                           ev_or_null(w, NULL, false)));
  count_fill(w, 32 * 32 * 4);
  size_t dst[3] = {32, 0, 0};
  CHECK(clEnqueueCopyImage(w->qo, i1, i2, origin, dst, half, 1, &wr,
                           ev_or_null(w, NULL, false)));
  count_copy(w, WL_ATOA, 32 * 32 * 4);
  w->c->dependencies += 1;
  CHECK(clEnqueueBarrierWithWaitList(w->qo, 0, NULL, NULL));
  w->c->markers++;
  cl_event ob;
  CHECK(clEnqueueMarker(w->qo, &ob));
  w->c->markers++;
  CHECK(clEnqueueCopyImageToBuffer(w->qb, i2, buf, origin, region, 0, 1, &ob,
                                   ev_or_null(w, NULL, false)));
  count_copy(w, WL_ATOD, bytes);
  /* The marker after the barrier waits for all earlier commands of qo:
   * since the last barrier, scale, add and the image copy. */
  w->c->dependencies += 3;
  CHECK(clEnqueueCopyBufferToImage(w->qb, buf, i1, 0, origin, region, 0, NULL,
                                   ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOA, bytes);
  size_t pitch = 0;
  unsigned char *m;
  CHECK_OBJ(m,
            (unsigned char *)clEnqueueMapImage(
                w->qb, i1, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, origin, region,
                &pitch, NULL, 0, NULL, ev_or_null(w, NULL, false), &e_));
  count_copy(w, WL_ATOH, bytes);
  m[0] = 42;
  CHECK(clEnqueueUnmapMemObject(w->qb, i1, m, 0, NULL,
                                ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOA, bytes);
  CHECK(clEnqueueReadImage(w->qb, i1, CL_TRUE, origin, region, 0, 0, px, 0,
                           NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_ATOH, bytes);
  unsigned long s = 0;
  for (size_t i = 0; i < bytes; i++)
    s += px[i];
  fprintf(w->out, "%s images sum=%lu\n", w->opt->tag, s);
  CHECK(clFinish(w->qo));
  CHECK(clReleaseEvent(wr));
  CHECK(clReleaseEvent(ob));
  CHECK(clReleaseMemObject(i1));
  CHECK(clReleaseMemObject(i2));
  CHECK(clReleaseMemObject(buf));
  free(px);
  return 0;
}

/* Shared virtual memory: copies, fill, map, a kernel, free. */
static int svm(wl *w) {
  if (!w->svm) {
    fprintf(w->out, "%s svm unsupported\n", w->opt->tag);
    return 0;
  }
  size_t n = 1024, bytes = n * sizeof(int);
  int *p = clSVMAlloc(w->ctx, CL_MEM_READ_WRITE, bytes, 0);
  int *q = clSVMAlloc(w->ctx, CL_MEM_READ_WRITE, bytes, 0);
  int *h = malloc(bytes);
  if (!p || !q || !h) {
    fprintf(stderr, "clSVMAlloc failed\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++)
    h[i] = (int)i;
  int seven = 7;
  CHECK(clEnqueueSVMMemFill(w->qb, q, &seven, sizeof(seven), bytes, 0, NULL,
                            ev_or_null(w, NULL, false)));
  count_fill(w, bytes);
  CHECK(clEnqueueSVMMemcpy(w->qb, CL_FALSE, p, h, bytes, 0, NULL,
                           ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, bytes);
  CHECK(clSetKernelArgSVMPointer(w->k_svm, 0, p));
  size_t g = n, l = 64;
  cl_event k;
  CHECK(clEnqueueNDRangeKernel(w->qb, w->k_svm, 1, NULL, &g, &l, 0, NULL, &k));
  count_kernel(w, "svm_inc", 1, &g, &l, 0, false);
  CHECK(clEnqueueSVMMemcpy(w->qb, CL_FALSE, q, p, bytes / 2, 1, &k,
                           ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOD, bytes / 2);
  w->c->dependencies += 1;
  CHECK(clEnqueueSVMMemcpy(w->qb, CL_TRUE, h, q, bytes, 0, NULL,
                           ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, bytes);
  long s = 0;
  for (size_t i = 0; i < n; i++)
    s += h[i];
  CHECK(clEnqueueSVMMap(w->qb, CL_TRUE, CL_MAP_WRITE, p, bytes, 0, NULL,
                        ev_or_null(w, NULL, false)));
  count_copy(w, WL_DTOH, bytes);
  p[0] = 100;
  CHECK(clEnqueueSVMUnmap(w->qb, p, 0, NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, bytes);
  CHECK(clFinish(w->qb));
  fprintf(w->out, "%s svm sum=%ld first=%d\n", w->opt->tag, s, p[0]);
  CHECK(clReleaseEvent(k));
  void *ptrs[1] = {q};
  CHECK(clEnqueueSVMFree(w->qb, 1, ptrs, NULL, NULL, 0, NULL, NULL));
  w->c->markers++;
  CHECK(clFinish(w->qb));
  clSVMFree(w->ctx, p);
  free(h);
  return 0;
}

/* Reference counts of an event whose command waits on a user event, and
 * a command that fails because its user event does. */
static int events(wl *w) {
  cl_int e_ = CL_SUCCESS;
  cl_mem x;
  CHECK_OBJ(x, clCreateBuffer(w->ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL,
                              &e_));
  int zeros[64] = {0};
  CHECK(clEnqueueWriteBuffer(w->qb, x, CL_TRUE, 0, sizeof(zeros), zeros, 0,
                             NULL, ev_or_null(w, NULL, false)));
  count_copy(w, WL_HTOD, sizeof(zeros));

  cl_event gate, k;
  CHECK_OBJ(gate, clCreateUserEvent(w->ctx, &e_));
  CHECK(clSetKernelArg(w->k_fixed, 0, sizeof(x), &x));
  size_t g = 64, l = 16;
  CHECK(
      clEnqueueNDRangeKernel(w->qb, w->k_fixed, 1, NULL, &g, &l, 1, &gate, &k));
  count_kernel(w, "fixed16", 1, &g, &l, 0, false);
  cl_uint before = refcount(k);
  CHECK(clRetainEvent(k));
  cl_uint retained = refcount(k);
  CHECK(clReleaseEvent(k));
  cl_uint released = refcount(k);
  cl_int st = 0;
  CHECK(clGetEventInfo(k, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
                       NULL));
  CHECK(clSetUserEventStatus(gate, CL_COMPLETE));
  CHECK(clWaitForEvents(1, &k));
  cl_uint done = settled_refcount(k);
  fprintf(w->out,
          "%s refcounts pending=%u retained=%u released=%u settled=%u "
          "status_before=%d\n",
          w->opt->tag, before, retained, released, done, (int)st);
  CHECK(clReleaseEvent(k));
  CHECK(clReleaseEvent(gate));

  /* A kernel behind a user event that fails never runs. */
  cl_event bad, kf;
  CHECK_OBJ(bad, clCreateUserEvent(w->ctx, &e_));
  CHECK(
      clEnqueueNDRangeKernel(w->qb, w->k_fixed, 1, NULL, &g, &l, 1, &bad, &kf));
  count_kernel(w, "fixed16", 1, &g, &l, 0, true);
  CHECK(clSetUserEventStatus(bad, -42));
  cl_int wr = clWaitForEvents(1, &kf);
  cl_int fst = 0;
  CHECK(clGetEventInfo(kf, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(fst), &fst,
                       NULL));
  fprintf(w->out, "%s failed wait=%d status=%s\n", w->opt->tag, (int)wr,
          fst < 0 ? "error" : "complete");
  CHECK(clReleaseEvent(kf));
  CHECK(clReleaseEvent(bad));
  CHECK(clFinish(w->qb));
  CHECK(clFlush(w->qa));
  CHECK(clReleaseMemObject(x));
  return 0;
}

/* See workload.h. */
int wl_run(const wl_options *opt, FILE *out, wl_counts *counts) {
  wl w;
  memset(&w, 0, sizeof(w));
  memset(counts, 0, sizeof(*counts));
  w.opt = opt;
  w.out = out;
  w.c = counts;
  int rc = setup(&w);
  if (rc == 0)
    rc = observe(&w);
  for (int i = 0; rc == 0 && i < opt->iterations; i++) {
    float sum = 0;
    rc = buffers(&w, &sum);
    if (rc == 0)
      rc = images(&w);
    if (rc == 0)
      rc = svm(&w);
  }
  if (rc == 0)
    rc = events(&w);
  teardown(&w);
  fflush(out);
  return rc;
}

/* See workload.h. */
static const char *spin_source =
    "__kernel void spin(__global float *out, int iters) {\n"
    "  float x = (float)get_global_id(0);\n"
    "  for (int i = 0; i < iters; i++) x = x * 1.0000001f + 1.0f;\n"
    "  out[get_global_id(0)] = x;\n"
    "}\n";

/* See workload.h. */
int wl_busy(unsigned n, FILE *out) {
  cl_platform_id plat;
  cl_device_id dev;
  cl_uint np = 0, nd = 0;
  if (clGetPlatformIDs(1, &plat, &np) != CL_SUCCESS || np == 0 ||
      clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS ||
      nd == 0)
    return WL_NO_DEVICE;
  cl_int e = CL_SUCCESS;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  cl_command_queue q =
      ctx ? clCreateCommandQueueWithProperties(ctx, dev, NULL, &e) : NULL;
  cl_program prog =
      q ? clCreateProgramWithSource(ctx, 1, &spin_source, NULL, &e) : NULL;
  if (!prog || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
    fprintf(stderr, "wl_busy: cannot build the spin kernel (%d)\n", e);
    return 1;
  }
  cl_kernel k = clCreateKernel(prog, "spin", &e);
  cl_mem buf =
      clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(float), NULL, &e);
  cl_int iters = 1 << 21;
  size_t global = 64;
  if (!k || !buf || clSetKernelArg(k, 0, sizeof(buf), &buf) != CL_SUCCESS ||
      clSetKernelArg(k, 1, sizeof(iters), &iters) != CL_SUCCESS) {
    fprintf(stderr, "wl_busy: cannot set up the spin kernel (%d)\n", e);
    return 1;
  }
  for (unsigned i = 0; i < n; i++)
    if (clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) !=
        CL_SUCCESS) {
      fprintf(stderr, "wl_busy: clEnqueueNDRangeKernel failed\n");
      return 1;
    }
  clFlush(q);
  fprintf(out, "count busy=%u\n", n);
  fflush(out);
  return 0;
}

/* See workload.h. */
const char *wl_copy_kind_name(int kind) {
  static const char *const names[WL_COPY_KINDS] = {
      "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < WL_COPY_KINDS ? names[kind] : "Unknown";
}

/* See workload.h. */
void wl_print_counts(const wl_counts *c, const char *tag, FILE *out) {
  for (unsigned i = 0; i < c->num_kernel_groups; i++) {
    const wl_kernel_count *k = &c->kernels[i];
    fprintf(out,
            "%s count kernel %s grid=%u,%u,%u block=%u,%u,%u local=%u "
            "launches=%u failed=%u\n",
            tag, k->name, k->grid[0], k->grid[1], k->grid[2], k->block[0],
            k->block[1], k->block[2], k->local_bytes, k->launches, k->failed);
  }
  for (int i = 0; i < WL_COPY_KINDS; i++)
    if (c->copies[i])
      fprintf(out, "%s count memcpy %s n=%u bytes=%llu\n", tag,
              wl_copy_kind_name(i), c->copies[i],
              (unsigned long long)c->copy_bytes[i]);
  fprintf(out, "%s count memset n=%u bytes=%llu\n", tag, c->fills,
          (unsigned long long)c->fill_bytes);
  fprintf(out,
          "%s count commands=%u markers=%u null_events=%u dependencies=%u\n",
          tag, c->commands, c->markers, c->null_events, c->dependencies);
}
