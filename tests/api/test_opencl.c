/*
 * test_opencl.c - the OpenCL interception library on a real driver
 * (PoCL), at the level of activity records captured in-process: the test
 * binary links the wrappers, so the workload's OpenCL calls go through
 * them to the driver. Checks that records match what the sample workload
 * counts (nothing lost or duplicated), correlation and dependencies, that
 * the program's results and event reference counts do not change,
 * internal events, failed and invalid calls, objects made before
 * recording started, threads and fork.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/opencl/oclInt.h"
#include "cb_log.h"
#include "harness.h"
#include "opencl/oclutil.h"
#include "opencl/workload.h"
#include "testutil.h"

static bool is_gpu_kind(uint32_t kind) {
  return kind == GP_ACTIVITY_KIND_KERNEL || kind == GP_ACTIVITY_KIND_MEMCPY ||
         kind == GP_ACTIVITY_KIND_MEMSET;
}

/* Correlation id and times of a GPU record. */
static void gpu_fields(const gp_activity *r, uint64_t *corr, uint64_t ts[4]) {
  if (r->kind == GP_ACTIVITY_KIND_KERNEL) {
    const gp_activity_kernel *k = (const void *)r;
    *corr = k->correlation_id;
    ts[0] = k->queued, ts[1] = k->submitted, ts[2] = k->start, ts[3] = k->end;
  } else if (r->kind == GP_ACTIVITY_KIND_MEMCPY) {
    const gp_activity_memcpy *m = (const void *)r;
    *corr = m->correlation_id;
    ts[0] = m->queued, ts[1] = m->submitted, ts[2] = m->start, ts[3] = m->end;
  } else {
    const gp_activity_memset *m = (const void *)r;
    *corr = m->correlation_id;
    ts[0] = m->queued, ts[1] = m->submitted, ts[2] = m->start, ts[3] = m->end;
  }
}

static const gp_activity *gpu_by_corr(uint64_t corr) {
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    uint64_t c, ts[4];
    if (is_gpu_kind(r->kind)) {
      gpu_fields(r, &c, ts);
      if (c == corr)
        return r;
    }
  }
  return NULL;
}

/* Runs the workload with every kind captured; fails on a workload error. */
static void run_captured(int iterations, wl_counts *c) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  wl_options opt = {iterations, 4096, "t"};
  FILE *out = tmpfile();
  ASSERT_NOT_NULL(out);
  ASSERT_EQ(wl_run(&opt, out, c), 0);
  fclose(out);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
}

TEST(opencl_records_match_sample) {
  wl_counts c;
  run_captured(2, &c);

  /* Kernels by name and shape; failed launches have no device times. */
  wl_counts seen;
  memset(&seen, 0, sizeof(seen));
  size_t gpu = 0, api_enqueues = 0;
  uint64_t waits = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind == GP_ACTIVITY_KIND_API) {
      const gp_activity_api *a = (const void *)r;
      ASSERT_EQ(a->domain, GP_API_DOMAIN_OPENCL);
      ASSERT_STR_EQ(ocl_api_name(a), gp__ocl_call_name(a->cbid));
      if (strncmp(ocl_api_name(a), "clEnqueue", 9) == 0)
        api_enqueues++;
      continue;
    }
    if (!is_gpu_kind(r->kind))
      continue;
    gpu++;
    uint64_t corr, ts[4];
    gpu_fields(r, &corr, ts);
    bool failed = ts[2] == 0 && ts[3] == 0;
    ASSERT_NE(ts[0], 0); /* queued is known even for a failed command */
    if (!failed) {
      ASSERT_LE(ts[0], ts[1]);
      ASSERT_LE(ts[1], ts[2]);
      ASSERT_LE(ts[2], ts[3]);
    }
    /* Every command belongs to exactly one enqueue call. */
    const gp_activity_api *a = ocl_api(corr);
    ASSERT_NOT_NULL(a);
    ASSERT_EQ(strncmp(ocl_api_name(a), "clEnqueue", 9), 0);
    ASSERT_EQ(a->return_value, 0);
    ASSERT_EQ(gpu_by_corr(corr), r); /* no duplicate */
    uint32_t nw = 0;
    const uint64_t *w = gp_activity_wait_ids(r, &nw);
    for (uint32_t i = 0; i < nw; i++)
      ASSERT_NOT_NULL(gpu_by_corr(w[i]));
    waits += nw;
    if (r->kind == GP_ACTIVITY_KIND_KERNEL) {
      const gp_activity_kernel *k = (const void *)r;
      unsigned i;
      for (i = 0; i < c.num_kernel_groups; i++) {
        const wl_kernel_count *g = &c.kernels[i];
        if (strcmp(g->name, gp_activity_string(k->name_id)) == 0 &&
            g->grid[0] == k->grid_x && g->grid[1] == k->grid_y &&
            g->grid[2] == k->grid_z && g->block[0] == k->block_x &&
            g->block[1] == k->block_y && g->block[2] == k->block_z &&
            g->local_bytes == k->dynamic_shared_memory)
          break;
      }
      if (i == c.num_kernel_groups)
        gp_test_fail(__FILE__, __LINE__,
                     "kernel %s grid %u,%u,%u block %u,%u,%u local %u is "
                     "not one the sample launched",
                     gp_activity_string(k->name_id), k->grid_x, k->grid_y,
                     k->grid_z, k->block_x, k->block_y, k->block_z,
                     k->dynamic_shared_memory);
      if (failed)
        seen.kernels[i].failed++;
      else
        seen.kernels[i].launches++;
    } else if (r->kind == GP_ACTIVITY_KIND_MEMCPY) {
      const gp_activity_memcpy *m = (const void *)r;
      ASSERT_LT(m->copy_kind, WL_COPY_KINDS);
      seen.copies[m->copy_kind]++;
      seen.copy_bytes[m->copy_kind] += m->bytes;
      ASSERT_EQ(m->src_device_id == UINT32_MAX,
                m->copy_kind == GP_MEMCPY_HTOD ||
                    m->copy_kind == GP_MEMCPY_HTOA ||
                    m->copy_kind == GP_MEMCPY_HTOH);
    } else {
      const gp_activity_memset *m = (const void *)r;
      seen.fills++;
      seen.fill_bytes += m->bytes;
    }
  }
  for (unsigned i = 0; i < c.num_kernel_groups; i++) {
    if (seen.kernels[i].launches != c.kernels[i].launches ||
        seen.kernels[i].failed != c.kernels[i].failed)
      gp_test_fail(__FILE__, __LINE__,
                   "kernel %s: recorded %u launches and %u failed, the "
                   "sample made %u and %u",
                   c.kernels[i].name, seen.kernels[i].launches,
                   seen.kernels[i].failed, c.kernels[i].launches,
                   c.kernels[i].failed);
  }
  for (int k = 0; k < WL_COPY_KINDS; k++) {
    ASSERT_EQ(seen.copies[k], c.copies[k]);
    ASSERT_EQ(seen.copy_bytes[k], c.copy_bytes[k]);
  }
  ASSERT_EQ(seen.fills, c.fills);
  ASSERT_EQ(seen.fill_bytes, c.fill_bytes);
  ASSERT_EQ(gpu, c.commands);
  ASSERT_EQ(api_enqueues, c.commands + c.markers);
  ASSERT_EQ(waits, c.dependencies);

  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.pending, 0);
  ASSERT_EQ(st.tracked, c.commands);
  ASSERT_EQ(st.internal, c.null_events);
  ASSERT_EQ(st.released, st.internal);
  ASSERT_EQ(st.failed, 1);
  ASSERT_EQ(st.unknown, 1);
  ASSERT_EQ(st.recorded, c.commands - 1);
}

TEST(opencl_device_context_and_names) {
  wl_counts c;
  run_captured(1, &c);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 1);
  const gp_activity_device *d =
      (const void *)tu_find(GP_ACTIVITY_KIND_DEVICE, 0);
  ASSERT_NE(gp_activity_string(d->name_id)[0], '\0');
  ASSERT_NE(gp_activity_string(d->vendor_id)[0], '\0');
  ASSERT_NE(gp_activity_string(d->driver_version_id)[0], '\0');
  ASSERT_EQ(d->compute_units, 2); /* POCL_MAX_PTHREAD_COUNT */
  ASSERT_GT(d->global_memory_bytes, 0);
  ASSERT_GT(d->core_clock_khz, 0);
  ASSERT_GT(d->max_threads_per_block, 0);
  ASSERT_GE(d->clock_id, GP_CLOCK_FIRST_DEVICE);
  ASSERT_EQ(d->num_queues, 1);

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_CONTEXT), 1);
  const gp_activity_context *cx =
      (const void *)tu_find(GP_ACTIVITY_KIND_CONTEXT, 0);
  ASSERT_EQ(cx->api, GP_API_OPEN_CL);
  ASSERT_EQ(cx->device_id, d->device_id);
  ASSERT_EQ(cx->process_id, (uint32_t)getpid());

  /* One stream name per queue, and every GPU record on one of them. */
  uint32_t streams[8];
  size_t ns = 0;
  bool thread_named = false, process_named = false;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind != GP_ACTIVITY_KIND_NAME)
      continue;
    const gp_activity_name *n = (const void *)r;
    if (n->object_kind == GP_OBJECT_STREAM) {
      ASSERT_LT(ns, 8);
      ASSERT_EQ(n->context_id, cx->context_id);
      ASSERT_EQ(strncmp(gp_activity_string(n->name_id), "OpenCL queue ", 13),
                0);
      streams[ns++] = n->stream_id;
    }
    thread_named |= n->object_kind == GP_OBJECT_THREAD &&
                    n->thread_id == (uint32_t)gettid();
    process_named |= n->object_kind == GP_OBJECT_PROCESS;
  }
  ASSERT_EQ(ns, 3);
  ASSERT(thread_named);
  ASSERT(process_named);
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind != GP_ACTIVITY_KIND_KERNEL)
      continue;
    const gp_activity_kernel *k = (const void *)r;
    ASSERT_EQ(k->context_id, cx->context_id);
    ASSERT_EQ(k->device_id, d->device_id);
    bool known = false;
    for (size_t i = 0; i < ns; i++)
      known |= streams[i] == k->stream_id;
    ASSERT(known);
  }
  /* Host waits: every clFinish has its stream, every clWaitForEvents the
   * command it waited for. */
  size_t finishes = 0, waits = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind != GP_ACTIVITY_KIND_SYNCHRONIZATION)
      continue;
    const gp_activity_sync *s = (const void *)r;
    const gp_activity_api *a = ocl_api(s->correlation_id);
    ASSERT_NOT_NULL(a);
    if (s->sync_kind == GP_SYNC_STREAM_SYNCHRONIZE) {
      ASSERT_STR_EQ(ocl_api_name(a), "clFinish");
      finishes++;
    } else {
      ASSERT_EQ(s->sync_kind, GP_SYNC_EVENT_SYNCHRONIZE);
      ASSERT_STR_EQ(ocl_api_name(a), "clWaitForEvents");
      ASSERT_NOT_NULL(gpu_by_corr(s->wait_id));
      waits++;
    }
    ASSERT_EQ(s->start, a->start);
    ASSERT_LE(s->end, a->end);
  }
  ASSERT_GE(finishes, 6);
  ASSERT_EQ(waits, 2);
}

/* The program's output with recording off and on, in fresh processes. */
static char *workload_output(bool record, wl_counts *counts_out,
                             gp__ocl_stats *stats_out) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  char path[512];
  snprintf(path, sizeof(path), "%s/%s.out", gp_test_tmpdir(),
           record ? "on" : "off");
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    ocl_env();
    if (record)
      ocl_capture_all();
    FILE *out = fopen(path, "w");
    wl_options opt = {1, 4096, "b"};
    wl_counts c;
    int rc = out ? wl_run(&opt, out, &c) : 1;
    if (rc == 0)
      wl_print_counts(&c, "b", out);
    fclose(out);
    gp__ocl_stats st;
    if (record)
      gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
    gp__ocl_get_stats(&st);
    if (write(fds[1], &c, sizeof(c)) != (ssize_t)sizeof(c) ||
        write(fds[1], &st, sizeof(st)) != (ssize_t)sizeof(st))
      rc = 1;
    _exit(rc);
  }
  close(fds[1]);
  ASSERT_EQ(read(fds[0], counts_out, sizeof(*counts_out)),
            (ssize_t)sizeof(*counts_out));
  ASSERT_EQ(read(fds[0], stats_out, sizeof(*stats_out)),
            (ssize_t)sizeof(*stats_out));
  close(fds[0]);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  if (WIFEXITED(st) && WEXITSTATUS(st) == WL_NO_DEVICE)
    SKIP("no OpenCL device");
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  static char buf[2][16384];
  char *b = buf[record];
  size_t n = fread(b, 1, sizeof(buf[0]) - 1, f);
  b[n] = '\0';
  fclose(f);
  return b;
}

TEST(opencl_behaviour_unchanged) {
  wl_counts c_off, c_on;
  gp__ocl_stats s_off, s_on;
  char *off = workload_output(false, &c_off, &s_off);
  char *on = workload_output(true, &c_on, &s_on);
  /* Results, properties, profiling availability, reference counts. */
  ASSERT_STR_EQ(on, off);
  ASSERT(strstr(off, "refcounts pending=") != NULL);
  ASSERT(strstr(off, "profiling qa=-7 qb=0") != NULL);
  /* And the run with recording did record, with events of its own. */
  ASSERT_EQ(s_off.tracked, 0);
  ASSERT_EQ(s_on.tracked, c_on.commands);
  ASSERT_EQ(s_on.internal, c_on.null_events);
  ASSERT_EQ(s_on.released, s_on.internal);
}

TEST(opencl_dependencies_and_correlation) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  cl_device_id dev;
  cl_context ctx = ocl_first_context(&dev);
  cl_int e = 0;
  cl_command_queue qa = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  cl_queue_properties ooo[] = {CL_QUEUE_PROPERTIES,
                               CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
  cl_command_queue qo = clCreateCommandQueueWithProperties(ctx, dev, ooo, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  char host[4096] = {0};
  int one = 1;

  /* write (qa) -> fill (qo) -> marker (qo) -> read (qa) */
  cl_event w, f, m;
  ASSERT_EQ(clEnqueueWriteBuffer(qa, b, CL_FALSE, 0, 4096, host, 0, NULL, &w),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueFillBuffer(qo, b, &one, 4, 0, 4096, 1, &w, &f),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueMarkerWithWaitList(qo, 1, &f, &m), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(qa, b, CL_TRUE, 0, 4096, host, 1, &m, NULL),
            CL_SUCCESS);
  /* Out-of-order: two copies with no events, a barrier, a marker: what
   * waits on the marker waits on both copies. */
  cl_mem b2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
  ASSERT_EQ(clEnqueueCopyBuffer(qo, b, b2, 0, 0, 2048, 0, NULL, NULL),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueCopyBuffer(qo, b, b2, 2048, 2048, 2048, 0, NULL, NULL),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueBarrierWithWaitList(qo, 0, NULL, NULL), CL_SUCCESS);
  cl_event m2;
  ASSERT_EQ(clEnqueueMarker(qo, &m2), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(qa, b2, CL_TRUE, 0, 4096, host, 1, &m2, NULL),
            CL_SUCCESS);
  ASSERT_EQ(clFinish(qo), CL_SUCCESS);
  ASSERT_EQ(host[0], 1);
  cl_event evs[] = {w, f, m, m2};
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(clReleaseEvent(evs[i]), CL_SUCCESS);
  clReleaseMemObject(b);
  clReleaseMemObject(b2);
  clReleaseCommandQueue(qa);
  clReleaseCommandQueue(qo);
  clReleaseContext(ctx);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));

  /* In enqueue order (correlation ids grow with each call): write, fill,
   * read, copy, copy, read. */
  const gp_activity *gpu[6];
  size_t n = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);)
    if (is_gpu_kind(r->kind) && n < 6)
      gpu[n++] = r;
  ASSERT_EQ(n, 6);
  uint64_t corr[6], ts[4];
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0; j--) {
      uint64_t left, right;
      gpu_fields(gpu[j - 1], &left, ts);
      gpu_fields(gpu[j], &right, ts);
      if (left > right) {
        const gp_activity *t = gpu[j];
        gpu[j] = gpu[j - 1];
        gpu[j - 1] = t;
      }
    }
  const char *expect[6] = {"clEnqueueWriteBuffer", "clEnqueueFillBuffer",
                           "clEnqueueReadBuffer",  "clEnqueueCopyBuffer",
                           "clEnqueueCopyBuffer",  "clEnqueueReadBuffer"};
  for (size_t i = 0; i < 6; i++) {
    gpu_fields(gpu[i], &corr[i], ts);
    ASSERT_STR_EQ(ocl_api_name(ocl_api(corr[i])), expect[i]);
  }
  uint32_t nw;
  const uint64_t *wid = gp_activity_wait_ids(gpu[0], &nw);
  ASSERT_EQ(nw, 0);
  wid = gp_activity_wait_ids(gpu[1], &nw);
  ASSERT_EQ(nw, 1);
  ASSERT_EQ(wid[0], corr[0]); /* across queues */
  wid = gp_activity_wait_ids(gpu[2], &nw);
  ASSERT_EQ(nw, 1);
  ASSERT_EQ(wid[0], corr[1]); /* through the marker */
  /* Through barrier and marker: everything before on qo, the fill and
   * both copies. */
  wid = gp_activity_wait_ids(gpu[5], &nw);
  ASSERT_EQ(nw, 3);
  for (size_t i = 1; i <= 4; i++) {
    bool in = false;
    for (uint32_t j = 0; j < nw; j++)
      in |= wid[j] == corr[i];
    ASSERT_EQ(in, i != 2); /* not the read on qa */
  }
  /* The copies passed no event: the library made and released its own. */
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.internal, 4);
  ASSERT_EQ(st.released, 4);
}

TEST(opencl_invalid_calls_record_errors) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  size_t g = 64;
  cl_event ev = NULL;
  /* Bad arguments: the driver's error comes back unchanged, the call is
   * recorded with it, and no command is tracked. */
  ASSERT_EQ(clEnqueueNDRangeKernel(NULL, NULL, 1, NULL, &g, NULL, 0, NULL, &ev),
            CL_INVALID_COMMAND_QUEUE);
  ASSERT(ev == NULL);
  cl_int e = 0;
  ASSERT(clCreateBuffer(NULL, 0, 16, NULL, &e) == NULL);
  ASSERT_EQ(e, CL_INVALID_CONTEXT);
  ASSERT(clCreateKernel(NULL, "k", NULL) == NULL); /* no errcode_ret */
  ASSERT_EQ(clWaitForEvents(0, NULL), CL_INVALID_VALUE);
  ASSERT_EQ(clReleaseEvent(NULL), CL_INVALID_EVENT);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  const char *names[] = {"clEnqueueNDRangeKernel", "clCreateBuffer",
                         "clCreateKernel", "clWaitForEvents", "clReleaseEvent"};
  const int32_t rcs[] = {CL_INVALID_COMMAND_QUEUE, CL_INVALID_CONTEXT,
                         CL_INVALID_PROGRAM, CL_INVALID_VALUE,
                         CL_INVALID_EVENT};
  size_t i = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    ASSERT(!is_gpu_kind(r->kind));
    if (r->kind != GP_ACTIVITY_KIND_API)
      continue;
    const gp_activity_api *a = (const void *)r;
    if (strcmp(ocl_api_name(a), "clGetPlatformIDs") == 0 ||
        strcmp(ocl_api_name(a), "clGetDeviceIDs") == 0)
      continue;
    ASSERT_LT(i, 5);
    ASSERT_STR_EQ(ocl_api_name(a), names[i]);
    ASSERT_EQ(a->return_value, rcs[i]);
    ASSERT_LE(a->start, a->end);
    i++;
  }
  ASSERT_EQ(i, 5);
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.tracked, 0);
}

TEST(opencl_objects_made_before_recording) {
  ocl_env();
  ocl_require_device();
  /* Context, queue and kernel made while nothing is recorded... */
  cl_platform_id p;
  cl_device_id dev;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), CL_SUCCESS);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  const char *src = "__kernel void k(__global int *x) { x[0] = 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  ASSERT_EQ(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(prog, "k", &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(b), &b), CL_SUCCESS);
  /* ...is found when recording starts: the records name the kernel but,
   * the queue having no profiling, carry only the host's enqueue time. */
  ocl_capture_all();
  size_t g = 1;
  ASSERT_EQ(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL),
            CL_SUCCESS);
  ASSERT_EQ(clFinish(q), CL_SUCCESS);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
  const gp_activity_kernel *r =
      (const void *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_STR_EQ(gp_activity_string(r->name_id), "k");
  ASSERT_NE(r->queued, 0);
  ASSERT_EQ(r->start, 0);
  ASSERT_EQ(r->end, 0);
  ASSERT_NE(r->stream_id, 0);
  ASSERT_NE(r->context_id, 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 1);
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.unknown, 1);
  ASSERT_EQ(st.pending, 0);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

typedef struct thread_arg {
  cl_context ctx;
  cl_device_id dev;
  cl_kernel k;
  int launches;
  int ok;
} thread_arg;

static void *enqueue_thread(void *p) {
  thread_arg *a = p;
  cl_int e = 0;
  cl_command_queue q =
      clCreateCommandQueueWithProperties(a->ctx, a->dev, NULL, &e);
  cl_kernel k = clCloneKernel(a->k, &e);
  size_t g = 64, l = 16;
  a->ok = q != NULL && k != NULL;
  for (int i = 0; a->ok && i < a->launches; i++) {
    cl_event ev = NULL;
    a->ok = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL,
                                   (i % 2) ? &ev : NULL) == CL_SUCCESS;
    if (ev)
      clReleaseEvent(ev); /* released before it completes */
  }
  a->ok = a->ok && clFinish(q) == CL_SUCCESS;
  clReleaseKernel(k);
  clReleaseCommandQueue(q);
  return NULL;
}

TEST(opencl_threads_and_early_releases) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  cl_platform_id p;
  cl_device_id dev;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), CL_SUCCESS);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  const char *src = "__kernel void tiny(__global int *x) {"
                    " x[get_global_id(0)] += 1; }";
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  ASSERT_EQ(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  cl_kernel k = clCreateKernel(prog, "tiny", &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * 4, NULL, &e);
  ASSERT_EQ(clSetKernelArg(k, 0, sizeof(b), &b), CL_SUCCESS);
  enum { THREADS = 4, LAUNCHES = 150 };
  pthread_t t[THREADS];
  thread_arg a[THREADS];
  for (int i = 0; i < THREADS; i++) {
    a[i] = (thread_arg){ctx, dev, k, LAUNCHES, 0};
    ASSERT_EQ(pthread_create(&t[i], NULL, enqueue_thread, &a[i]), 0);
  }
  for (int i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    ASSERT(a[i].ok);
  }
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), THREADS * LAUNCHES);
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind != GP_ACTIVITY_KIND_KERNEL)
      continue;
    const gp_activity_kernel *kr = (const void *)r;
    ASSERT_STR_EQ(gp_activity_string(kr->name_id), "tiny");
    ASSERT_NE(kr->start, 0);
    ASSERT_LE(kr->start, kr->end);
  }
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.pending, 0);
  ASSERT_EQ(st.internal, THREADS * LAUNCHES / 2);
  ASSERT_EQ(st.released, st.internal);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
}

TEST(opencl_fork_child_forgets_parent_work) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  cl_platform_id p;
  cl_device_id dev;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL), CL_SUCCESS);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
  /* Held back by a user event, the write is in flight across the fork. */
  cl_event gate = clCreateUserEvent(ctx, &e);
  char host[64] = {0};
  ASSERT_EQ(clEnqueueWriteBuffer(q, b, CL_FALSE, 0, 64, host, 1, &gate, NULL),
            CL_SUCCESS);
  gp__ocl_stats st;
  gp__ocl_get_stats(&st);
  ASSERT_EQ(st.pending, 1);
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    /* The child touches no OpenCL (PoCL would hang): it only checks that
     * the parent's command is not its own to record. */
    gp__ocl_stats cs;
    gp__ocl_get_stats(&cs);
    _exit(cs.pending == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(clFinish(q), CL_SUCCESS);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MEMCPY), 1);
  const gp_activity_memcpy *m =
      (const void *)tu_find(GP_ACTIVITY_KIND_MEMCPY, 0);
  ASSERT_NE(m->end, 0);
  clReleaseEvent(gate);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

TEST(opencl_no_platform_is_clean) {
  ocl_env();
  setenv("OCL_ICD_FILENAMES", "/nonexistent/libnothing.so", 1);
  setenv("OCL_ICD_VENDORS", "/nonexistent", 1);
  ocl_capture_all();
  wl_options opt = {1, 4096, "t"};
  wl_counts c;
  FILE *out = tmpfile();
  ASSERT_EQ(wl_run(&opt, out, &c), WL_NO_DEVICE);
  fclose(out);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  const gp_activity_api *a = (const void *)tu_find(GP_ACTIVITY_KIND_API, 0);
  ASSERT_NOT_NULL(a);
  ASSERT_STR_EQ(ocl_api_name(a), "clGetPlatformIDs");
  ASSERT_NE(a->return_value, CL_SUCCESS);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 0);
}

TEST(opencl_two_devices_one_context) {
  ocl_env();
  setenv("POCL_DEVICES", "pthread pthread", 1);
  ocl_require_device();
  ocl_capture_all();
  cl_platform_id p;
  cl_device_id dev[2];
  cl_uint nd = 0;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 2, dev, &nd), CL_SUCCESS);
  if (nd < 2)
    SKIP("PoCL made %u device(s) of POCL_DEVICES=\"pthread pthread\"", nd);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 2, dev, NULL, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  cl_command_queue q0 =
      clCreateCommandQueueWithProperties(ctx, dev[0], NULL, &e);
  cl_command_queue q1 =
      clCreateCommandQueueWithProperties(ctx, dev[1], NULL, &e);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
  int v = 3;
  cl_event f;
  ASSERT_EQ(clEnqueueFillBuffer(q0, a, &v, sizeof(v), 0, 4096, 0, NULL, &f),
            CL_SUCCESS);
  ASSERT_EQ(clEnqueueCopyBuffer(q1, a, b, 0, 0, 4096, 1, &f, NULL), CL_SUCCESS);
  int host[1024];
  ASSERT_EQ(
      clEnqueueReadBuffer(q1, b, CL_TRUE, 0, sizeof(host), host, 0, NULL, NULL),
      CL_SUCCESS);
  ASSERT_EQ(host[1023], 3);
  clReleaseEvent(f);
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(ctx);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));

  /* Two devices, one gpuperf context each, records on the right one. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 2);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_CONTEXT), 2);
  const gp_activity_context *c0 =
      (const void *)tu_find(GP_ACTIVITY_KIND_CONTEXT, 0);
  const gp_activity_context *c1 =
      (const void *)tu_find(GP_ACTIVITY_KIND_CONTEXT, 1);
  ASSERT_NE(c0->device_id, c1->device_id);
  const gp_activity_memset *fill =
      (const void *)tu_find(GP_ACTIVITY_KIND_MEMSET, 0);
  ASSERT_NOT_NULL(fill);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MEMCPY), 2);
  const gp_activity_memcpy *copy = NULL;
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_memcpy *m =
        (const void *)tu_find(GP_ACTIVITY_KIND_MEMCPY, i);
    if (m->copy_kind == GP_MEMCPY_DTOD)
      copy = m;
  }
  ASSERT_NOT_NULL(copy);
  ASSERT_NE(fill->device_id, copy->device_id);
  ASSERT_EQ(fill->context_id,
            fill->device_id == c0->device_id ? c0->context_id : c1->context_id);
  ASSERT_EQ(copy->context_id,
            copy->device_id == c0->device_id ? c0->context_id : c1->context_id);
  uint32_t nw = 0;
  const uint64_t *w = gp_activity_wait_ids((const gp_activity *)copy, &nw);
  ASSERT_EQ(nw, 1); /* across devices */
  ASSERT_EQ(w[0], fill->correlation_id);
}

/* The callback API (gpuperf/callback.h) on the wrappers and PoCL: every
 * OpenCL API record has its entry/exit pair with the same correlation id
 * and call, an enqueue's pair names its queue's context and stream (those
 * of its GPU record), and clFinish raises STREAM_SYNCHRONIZED. */
static cb_event cb_log[1 << 14];
static _Atomic int cb_n;

static void on_ocl_cb(void *user, gp_callback_domain domain, uint32_t cbid,
                      const void *data) {
  (void)user;
  int i = atomic_fetch_add(&cb_n, 1);
  if (i < (int)(sizeof(cb_log) / sizeof(cb_log[0])))
    cb_note(&cb_log[i], domain, cbid, data, 7);
}

/* Whether a STREAM_CREATED callback named (context, stream). */
static bool stream_made(uint32_t context, uint32_t stream) {
  int n = atomic_load(&cb_n);
  for (int i = 0; i < n; i++)
    if (cb_log[i].domain == GP_CALLBACK_DOMAIN_RESOURCE &&
        cb_log[i].cbid == GP_CALLBACK_RESOURCE_STREAM_CREATED &&
        cb_log[i].context == context && cb_log[i].stream == stream)
      return true;
  return false;
}

TEST(opencl_callbacks_match_records) {
  ocl_env();
  ocl_require_device(); /* its calls: before the subscription */
  ocl_capture_all();
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_ocl_cb, NULL));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_API));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_SYNCHRONIZE));
  wl_counts counts;
  wl_options opt = {3, 4096, "t"};
  FILE *wl_out = tmpfile();
  ASSERT_NOT_NULL(wl_out);
  ASSERT_EQ(wl_run(&opt, wl_out, &counts), 0);
  fclose(wl_out);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  int n = atomic_load(&cb_n);
  ASSERT_LT(n, (int)(sizeof(cb_log) / sizeof(cb_log[0])));
  /* Every OpenCL API record: its pair. */
  int records = 0, enqueues = 0;
  for (const gp_activity *r = NULL; ocl_next(&r);) {
    if (r->kind == GP_ACTIVITY_KIND_API) {
      const gp_activity_api *a = (const void *)r;
      if (a->domain != GP_API_DOMAIN_OPENCL)
        continue;
      records++;
      const cb_event *in = cb_find(cb_log, atomic_load(&cb_n),
                                   a->correlation_id, GP_CALLBACK_SITE_ENTER);
      const cb_event *out = cb_find(cb_log, atomic_load(&cb_n),
                                    a->correlation_id, GP_CALLBACK_SITE_EXIT);
      ASSERT_NOT_NULL(in);
      ASSERT_NOT_NULL(out);
      ASSERT_EQ(in->call, a->cbid);
      ASSERT_EQ(out->call, a->cbid);
      ASSERT_EQ(in->cbid, GP_CALLBACK_API_ID(GP_API_DOMAIN_OPENCL, a->cbid));
      ASSERT_EQ(out->rc, a->return_value);
      ASSERT_EQ(in->data, 0);
      ASSERT_EQ(out->data, cb_mark(a->correlation_id, 7));
    } else if (is_gpu_kind(r->kind)) {
      uint64_t corr, ts[4];
      gpu_fields(r, &corr, ts);
      const cb_event *in =
          cb_find(cb_log, atomic_load(&cb_n), corr, GP_CALLBACK_SITE_ENTER);
      ASSERT_NOT_NULL(in);
      const gp_activity_kernel *k = (const void *)r;
      const gp_activity_memcpy *m = (const void *)r;
      const gp_activity_memset *s = (const void *)r;
      uint32_t ctx = r->kind == GP_ACTIVITY_KIND_KERNEL   ? k->context_id
                     : r->kind == GP_ACTIVITY_KIND_MEMCPY ? m->context_id
                                                          : s->context_id;
      uint32_t stream = r->kind == GP_ACTIVITY_KIND_KERNEL   ? k->stream_id
                        : r->kind == GP_ACTIVITY_KIND_MEMCPY ? m->stream_id
                                                             : s->stream_id;
      ASSERT_EQ(in->context, ctx);
      ASSERT_EQ(in->stream, stream);
      ASSERT_NE(stream, 0);
      ASSERT(stream_made(ctx, stream)); /* its queue: RESOURCE */
      enqueues++;
    }
  }
  /* Nothing but pairs: as many entries and exits as records. */
  int entries = 0, exits = 0, finishes = 0;
  for (int i = 0; i < n; i++) {
    entries += cb_log[i].domain == GP_CALLBACK_DOMAIN_API &&
               cb_log[i].site == GP_CALLBACK_SITE_ENTER;
    exits += cb_log[i].domain == GP_CALLBACK_DOMAIN_API &&
             cb_log[i].site == GP_CALLBACK_SITE_EXIT;
    if (cb_log[i].domain == GP_CALLBACK_DOMAIN_SYNCHRONIZE) {
      ASSERT_EQ(cb_log[i].cbid, GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED);
      ASSERT_NE(cb_log[i].stream, 0);
      finishes++;
    }
  }
  ASSERT_GT(records, 20);
  ASSERT_EQ(entries, records);
  ASSERT_EQ(exits, records);
  ASSERT_EQ(enqueues, (int)counts.commands);
  ASSERT_GT(finishes, 0);
  /* The context the workload made. */
  int made = 0;
  for (int i = 0; i < n; i++)
    made += cb_log[i].domain == GP_CALLBACK_DOMAIN_RESOURCE &&
            cb_log[i].cbid == GP_CALLBACK_RESOURCE_CONTEXT_CREATED;
  ASSERT_GE(made, 1);
}

/* gp_activity_get_*_id on OpenCL's handles: the context, device and
 * stream ids that the records of work on them carry. */
TEST(opencl_object_ids_by_handle) {
  ocl_env();
  ocl_require_device();
  ocl_capture_all();
  cl_device_id dev;
  cl_context ctx = ocl_first_context(&dev);
  cl_int e = 0;
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  int one = 1;
  ASSERT_EQ(clEnqueueFillBuffer(q, b, &one, 4, 0, 4096, 0, NULL, NULL),
            CL_SUCCESS);
  ASSERT_EQ(clFinish(q), CL_SUCCESS);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  const gp_activity_memset *m = NULL;
  for (const gp_activity *r = NULL; ocl_next(&r);)
    if (r->kind == GP_ACTIVITY_KIND_MEMSET)
      m = (const void *)r;
  ASSERT_NOT_NULL(m);
  uint32_t id = 0, did = 0, did2 = 0, sid = 0;
  ASSERT_OK(gp_activity_get_context_id(GP_API_OPEN_CL, ctx, NULL, &id));
  ASSERT_EQ(id, m->context_id);
  ASSERT_OK(gp_activity_get_context_id(GP_API_OPEN_CL, ctx, dev, &id));
  ASSERT_EQ(id, m->context_id);
  ASSERT_OK(gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, q, &sid));
  ASSERT_EQ(sid, m->stream_id);
  ASSERT_OK(gp_activity_get_stream_id(GP_API_OPEN_CL, ctx, q, &sid));
  ASSERT_OK(gp_activity_get_device_id(GP_API_OPEN_CL, NULL, dev, &did));
  ASSERT_EQ(did, m->device_id);
  ASSERT_OK(gp_activity_get_device_id(GP_API_OPEN_CL, ctx, NULL, &did2));
  ASSERT_EQ(did2, did);
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, b, &sid),
             GP_ENOENT);
  /* OpenCL cannot tell whether a device boosts: CUPTI's NOT_SUPPORTED. */
  gp_auto_boost_state boost;
  ASSERT_ERR(gp_activity_get_auto_boost_state(id, &boost), GP_ENOTSUP);
  clReleaseMemObject(b);
  /* The release that ends the queue, and only that one, raises
   * STREAM_DESTROY_STARTING with the queue's ids; they are forgotten. */
  atomic_store(&cb_n, 0);
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_ocl_cb, NULL));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE));
  ASSERT_EQ(clRetainCommandQueue(q), CL_SUCCESS);
  ASSERT_EQ(clReleaseCommandQueue(q), CL_SUCCESS); /* the retain's */
  ASSERT_EQ(atomic_load(&cb_n), 0);
  ASSERT_OK(gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, q, &sid));
  ASSERT_EQ(clReleaseCommandQueue(q), CL_SUCCESS);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  ASSERT_EQ(atomic_load(&cb_n), 1);
  ASSERT_EQ(cb_log[0].cbid, GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING);
  ASSERT_EQ(cb_log[0].api_domain, GP_API_OPEN_CL);
  ASSERT_EQ(cb_log[0].context, m->context_id);
  ASSERT_EQ(cb_log[0].stream, m->stream_id);
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, q, &sid),
             GP_ENOENT);
  clReleaseContext(ctx);
}
