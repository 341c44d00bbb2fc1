/*
 * test_cuda_trace.c - from CUPTI to a Perfetto trace, without a GPU.
 *
 * A recording session runs in the test process while the collector is fed
 * what CUPTI would give it for tests/cuda/sample.cu: the API callbacks
 * (launches, copies, fills, an event recorded on one stream and waited
 * for on the other, NVTX ranges) as they happen, and afterwards CUPTI
 * buffers with the matching API, kernel, copy, fill and synchronization
 * records, timed by the real cuptiGetTimestamp(). The trace the session
 * writes is decoded with gpuperf's own decoder and checked for what the
 * device check (scripts/device-check-cuda.sh) will query on a GPU: kernel
 * names, copies, dependencies, correlation, ranges.
 *
 * Without the CUDA toolkit at build time every test here skips.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#ifdef GP_HAVE_CUDA

#include <nvtx3/nvToolsExt.h>

#include "cudaInt.h"
#include "gpuperf/session.h"
#include "perfetto/dump.h"

#include <generated_nvtx_meta.h>

#define ITERATIONS 5

typedef struct fake {
  uint8_t *buf;
  size_t size, used;
  uint32_t corr;
  uint64_t gpu_free[3]; /* when each stream's last work ends */
} fake;

static void *put(fake *f, size_t size, uint32_t kind) {
  ASSERT_LE(f->used + size, f->size);
  uint8_t *p = f->buf + f->used;
  memset(p, 0, size);
  ((CUpti_Activity *)p)->kind = (CUpti_ActivityKind)kind;
  f->used += size;
  return p;
}

static uint64_t now(void) {
  uint64_t t = 0;
  ASSERT_EQ(cuptiGetTimestamp(&t), CUPTI_SUCCESS);
  return t;
}

/* One runtime call: its callbacks now, its API record into the buffer.
 * Returns its correlation id. */
static uint32_t call(fake *f, uint32_t cbid, const void *params) {
  uint32_t corr = ++f->corr;
  CUpti_CallbackData cb;
  memset(&cb, 0, sizeof(cb));
  cb.functionParams = params;
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  uint64_t t0 = now();
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &cb);
  CUpti_ActivityAPI *a = put(f, sizeof(*a), CUPTI_ACTIVITY_KIND_RUNTIME);
  a->cbid = cbid;
  a->start = t0;
  a->end = now() + 200;
  a->processId = gp__pid();
  a->threadId = gp__tid();
  a->correlationId = corr;
  return corr;
}

/* GPU work on stream s (1 or 2) after `after`: its [start, end). */
static void gpu_time(fake *f, int s, uint64_t after, uint64_t dur,
                     uint64_t *start, uint64_t *end) {
  uint64_t t = after > f->gpu_free[s] ? after : f->gpu_free[s];
  *start = t + 1000;
  *end = *start + dur;
  f->gpu_free[s] = *end;
}

static void nvtx(uint32_t cbid, const void *params) {
  CUpti_NvtxData d = {.functionName = "nvtx", .functionParams = params};
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

static void copy(fake *f, int s, cudaStream_t stream, uint32_t kind) {
  cudaMemcpyAsync_v3020_params p;
  memset(&p, 0, sizeof(p));
  p.stream = stream;
  uint32_t corr = call(f, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
  CUpti_ActivityMemcpy6 *m = put(f, sizeof(*m), CUPTI_ACTIVITY_KIND_MEMCPY);
  m->copyKind = (uint8_t)kind;
  m->srcKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                   ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                   : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m->dstKind = kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                   ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                   : CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m->bytes = 4 << 20;
  gpu_time(f, s, now(), 300000, &m->start, &m->end);
  m->contextId = 1;
  m->streamId = (uint32_t)(13 + s);
  m->correlationId = corr + 1000000; /* the driver's id */
  m->runtimeCorrelationId = corr;
}

static void launch(fake *f, int s, cudaStream_t stream, const char *name) {
  cudaLaunchKernel_v7000_params p; /* __cudaLaunchKernel's layout */
  memset(&p, 0, sizeof(p));
  p.stream = stream;
  uint32_t corr =
      call(f, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, &p);
  CUpti_ActivityKernel10 *k =
      put(f, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  gpu_time(f, s, now(), 500000, &k->start, &k->end);
  k->contextId = 1;
  k->streamId = (uint32_t)(13 + s);
  k->gridX = 4096;
  k->gridY = k->gridZ = 1;
  k->blockX = 256;
  k->blockY = k->blockZ = 1;
  k->registersPerThread = 16;
  k->correlationId = corr;
  k->name = name;
}

/* What CUPTI would hand over for the sample's run. */
static void sample_run(fake *f) {
  cudaStream_t s1 = (cudaStream_t)0x51, s2 = (cudaStream_t)0x52;
  cudaEvent_t ev = (cudaEvent_t)0xe1;
  CUpti_ActivityDevice5 *d = put(f, sizeof(*d), CUPTI_ACTIVITY_KIND_DEVICE);
  d->id = 0;
  d->name = "NVIDIA H100 80GB HBM3";
  d->numMultiprocessors = 132;
  d->computeCapabilityMajor = 9;
  d->globalMemorySize = 85899345920ull;
  CUpti_ActivityContext3 *c = put(f, sizeof(*c), CUPTI_ACTIVITY_KIND_CONTEXT);
  c->contextId = 1;
  c->deviceId = 0;
  c->nullStreamId = 7;
  nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &(nvtxRangePushA_params){"setup"});
  nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &(nvtxRangePop_params){0});
  for (int i = 0; i < ITERATIONS; i++) {
    /* As the sample pushes it: green, its index as payload. */
    nvtxEventAttributes_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.colorType = NVTX_COLOR_ARGB;
    attr.color = 0xff00c000u;
    attr.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    attr.payload.ullValue = (uint64_t)i;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = "iteration";
    nvtx(CUPTI_CBID_NVTX_nvtxRangePushEx, &(nvtxRangePushEx_params){&attr});
    copy(f, 1, s1, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    launch(f, 1, s1, "_Z5scalePfif");
    cudaEventRecord_v3020_params er = {.event = ev, .stream = s1};
    call(f, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &er);
    copy(f, 2, s2, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    cudaMemsetAsync_v3020_params ms;
    memset(&ms, 0, sizeof(ms));
    ms.stream = s2;
    uint32_t mc = call(f, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &ms);
    CUpti_ActivityMemset4 *m = put(f, sizeof(*m), CUPTI_ACTIVITY_KIND_MEMSET);
    gpu_time(f, 2, now(), 20000, &m->start, &m->end);
    m->bytes = 4 << 20;
    m->contextId = 1;
    m->streamId = 15;
    m->correlationId = mc;
    m->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    cudaStreamWaitEvent_v3020_params sw = {.stream = s2, .event = ev};
    call(f, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &sw);
    /* add starts after scale ends: the event. */
    f->gpu_free[2] =
        f->gpu_free[2] > f->gpu_free[1] ? f->gpu_free[2] : f->gpu_free[1];
    launch(f, 2, s2, "_Z3addPKfS0_Pfi");
    copy(f, 2, s2, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    cudaStreamSynchronize_v3020_params ss = {.stream = s2};
    uint32_t sc =
        call(f, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &ss);
    CUpti_ActivitySynchronization2 *y =
        put(f, sizeof(*y), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    y->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y->start = now();
    y->end = f->gpu_free[2] + 500;
    y->correlationId = sc;
    y->contextId = 1;
    y->streamId = 15;
    y->cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &(nvtxRangePop_params){0});
  }
}

static void no_emit(void *user, uint32_t dev, size_t metric, double value,
                    uint64_t ts, uint64_t window_start, uint64_t corr) {
  (void)user, (void)dev, (void)metric, (void)value, (void)ts;
  (void)window_start, (void)corr;
}

static char *read_all(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  ASSERT_NOT_NULL(fp);
  size_t cap = 1 << 20, n = 0, k;
  char *buf = malloc(cap);
  ASSERT_NOT_NULL(buf);
  while ((k = fread(buf + n, 1, cap - n - 1, fp)) > 0) {
    n += k;
    if (n + 1 == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      ASSERT_NOT_NULL(buf);
    }
  }
  fclose(fp);
  buf[n] = '\0';
  *len = n;
  return buf;
}

static size_t count(const char *text, const char *needle) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* The config scripts/device-check-cuda.sh records with (its default
 * METRICS). */
static const char device_check_config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
    "  counter_names: \"gpu__time_duration.sum\"\n"
    "  counter_names: \"sm__cycles_elapsed.sum\"\n"
    "  instrumented_sampling: true } } }\n";

/* Records the fake sample run into a trace with config text; returns
 * the trace's path and the session's stats in *st. */
static const char *record_sample(const char *cfg_text, gp_session_stats *st,
                                 size_t drops) {
  gp_trace_config *cfg = NULL;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(cfg_text, strlen(cfg_text), &cfg, err,
                                  sizeof(err)));
  const char *path = gp_test_path(0, "sample.pftrace");
  gp_session *s = NULL;
  ASSERT_OK(gp_session_start(cfg, path, NULL, &s));
  fake f;
  memset(&f, 0, sizeof(f));
  size_t maxr;
  gp__cuda_buffer_request(&f.buf, &f.size, &maxr);
  ASSERT_NOT_NULL(f.buf);
  sample_run(&f);
  gp__cuda_buffer_complete(NULL, 0, f.buf, f.size, f.used);
  gp__cuda_carry_drops(1, 14, drops); /* what CUPTI lost */
  ASSERT_OK(gp_session_stop(s));
  ASSERT_OK(gp_session_get_stats(s, st));
  ASSERT_EQ(st->render_stages, 6 * ITERATIONS); /* 2 kernels 3 copies 1 fill */
  gp_session_destroy(s);
  gp_trace_config_destroy(cfg);
  return path;
}

TEST(cuda_sample_run_becomes_a_trace) {
  gp_session_stats st;
  const char *path = record_sample(
      "data_sources { config { name: \"gpu.renderstages\" } }\n", &st, 3);
  size_t len = 0;
  char *trace = read_all(path, &len);
  ASSERT_GT(len, 1000);
  FILE *out = fopen(gp_test_path(1, "dump.txt"), "w");
  ASSERT_NOT_NULL(out);
  ASSERT_OK(gp__trace_dump((const uint8_t *)trace, len, out));
  fclose(out);
  free(trace);
  size_t dlen = 0;
  char *dump = read_all(gp_test_path(1, "dump.txt"), &dlen);
  if (getenv("GPUPERF_TEST_VERBOSE"))
    fputs(dump, stdout);
  /* The device, the CUDA context, the kernels by both names. */
  ASSERT(strstr(dump, "NVIDIA H100 80GB HBM3"));
  ASSERT(strstr(dump, "CUDA"));
  ASSERT(strstr(dump, "_Z5scalePfif"));
  ASSERT(strstr(dump, "scale(float*, int, float)"));
  ASSERT(strstr(dump, "add(float const*, float const*, float*, int)"));
  /* Each add waits for its scale: one event wait per iteration. */
  ASSERT_EQ(count(dump, "event_wait_ids"), ITERATIONS);
  /* API calls as slices, with their correlation to the GPU work. */
  ASSERT(strstr(dump, "__cudaLaunchKernel"));
  ASSERT(strstr(dump, "cudaMemcpyAsync"));
  ASSERT_GE(count(dump, "render_stage_submission_event_ids"), 5 * ITERATIONS);
  /* The NVTX ranges. */
  ASSERT(strstr(dump, "iteration"));
  ASSERT(strstr(dump, "setup"));
  free(dump);
}

TEST(cuda_recording_samples_the_device_check_counters) {
  /* The device appears while the session runs (as at cuInit) and
   * publishes its catalog: the session starts the per-kernel counters the
   * device check asks for on it. Values need the GPU. */
  CUpti_ActivityDevice5 d;
  memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.name = "NVIDIA H100 80GB HBM3";
  gp_trace_config *cfg = NULL;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(device_check_config,
                                  strlen(device_check_config), &cfg, err,
                                  sizeof(err)));
  gp_session *s = NULL;
  ASSERT_OK(gp_session_start(cfg, gp_test_path(0, "c.pftrace"), NULL, &s));
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&d));
  uint32_t dev = gp__cuda_device(0);
  int rc = gp__cuda_provider_publish(dev, 0, "GH100");
  if (rc == GP_ENOTSUP) {
    gp_session_destroy(s);
    gp_trace_config_destroy(cfg);
    SKIP("no catalogs in this build: %s", gp_cuda_status());
  }
  ASSERT_OK(rc);
  /* The device's one sampling configuration is the session's now. */
  const char *one[] = {"gpu__time_duration.sum"};
  gp__cuda_sampling mine = {
      .metrics = one, .num_metrics = 1, .instrumented = true, .emit = no_emit};
  ASSERT_ERR(gp__cuda_sampling_start(0, &mine), GP_EBUSY);
  ASSERT_OK(gp_session_stop(s));
  gp_session_stats st;
  ASSERT_OK(gp_session_get_stats(s, &st));
  ASSERT_EQ(st.counter_devices, 1);
  ASSERT_EQ(st.counter_error, 0);
  ASSERT_OK(gp__cuda_sampling_start(0, &mine)); /* released at stop */
  gp__cuda_sampling_stop(0);
  gp_session_destroy(s);
  gp_trace_config_destroy(cfg);
}

/* Runs the device check's queries on a trace; returns its exit status
 * and its output in out. */
static int device_check(const char *trace, char *out, size_t size) {
  const char *build = getenv("GPUPERF_BUILD");
  if (!build || !*build)
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  if (access("scripts/device-check-cuda.sh", X_OK) != 0)
    SKIP("not run from the repository root");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "METRICS= scripts/device-check-cuda.sh --check-trace '%s' %d '%s' "
           "2>&1",
           trace, ITERATIONS, build);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(cuda_device_check_queries_pass_on_a_cupti_fed_trace) {
  /* The queries the device check runs on a GPU, run on the trace of the
   * sample made from CUPTI records here: they must find what the sample
   * did, and fail when something is wrong (here: drops). */
  gp_session_stats st;
  const char *cfg = "data_sources { config { name: \"gpu.renderstages\" } }";
  const char *path = record_sample(cfg, &st, 0);
  static char out[1 << 16];
  int rc = device_check(path, out, sizeof(out));
  if (rc == 2 && strstr(out, "no 'query' command"))
    SKIP("this gpuperf has no 'query' command (the trace processor)");
  if (rc != 0)
    fputs(out, stderr);
  ASSERT_EQ(rc, 0);
  ASSERT(strstr(out, "ok    event dependency flows: 5"));
  ASSERT(strstr(out, "ok    kernels launched inside iterations: 10"));
  ASSERT(strstr(out, "PASS: all checks"));
  path = record_sample(cfg, &st, 3);
  ASSERT_EQ(device_check(path, out, sizeof(out)), 1);
  ASSERT(strstr(out, "FAIL  nothing dropped: got '3', want eq 0"));
  ASSERT(strstr(out, "FAIL: 1 checks failed"));
}

#else /* !GP_HAVE_CUDA */

#define NO_CUDA(name)                                                          \
  TEST(name) {                                                                 \
    SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "   \
         "build time; see mk/cuda.mk (CUDA_HOME)");                            \
  }
NO_CUDA(cuda_sample_run_becomes_a_trace)
NO_CUDA(cuda_device_check_queries_pass_on_a_cupti_fed_trace)
NO_CUDA(cuda_recording_samples_the_device_check_counters)

#endif
