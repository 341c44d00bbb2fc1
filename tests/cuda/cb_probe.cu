/*
 * cb_probe.cu - the CUDA collector's side of the CUPTI seed on a real
 * GPU: the callback API (gpuperf/callback.h), the handle lookups
 * (gp_activity_get_*_id), and the MODULE, FUNCTION and DEVICE_ATTRIBUTE
 * records, each checked against something that is not the collector's
 * own word: the activity records CUPTI produced, the program's own
 * results, and what the CUDA runtime tells the program
 * (cudaGetDeviceProperties).
 *
 *   cuda-cb-probe [ITERATIONS]      (default 10)
 *   cuda-cb-probe --metrics [N]      per-kernel METRIC records instead
 *
 * The program links libgpuperf-cuda and libgpuperf and starts the
 * collector itself (gp_cuda_start). It subscribes to the API, RESOURCE
 * and SYNCHRONIZE domains, makes its context, then (the window checked)
 * a stream, copies, ITERATIONS x two kernels on the stream, a stream and
 * a device synchronisation, and destroys the stream. After the window it
 * fills managed memory on the host, has a kernel add to it and reads it
 * back (UNIFIED_MEMORY_COUNTER records against the bytes the program
 * moved), and asks for the context's auto boost state (ours against
 * cuptiGetAutoBoostState's own answer). Every check prints
 * "ok  WHAT: detail" or "FAIL WHAT: detail", and all of them run.
 * Built and run by scripts/device-check-cuda.sh.
 *
 * Exit status: 0 every check passed; 1 a check failed; 77 no CUDA device
 * (the collector's reason printed); 2 a CUDA call failed.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_result.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "cb_log.h"
#include "gpuperf/cuda.h"
#include "gpuperf/gpuperf.h"

__global__ void cbp_scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

__global__ void cbp_touch(float *m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    m[i] += 1.0f;
}

__global__ void cbp_add(float *x, const float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += y[i];
}

/* What the callbacks and the buffers delivered; CUPTI may deliver either
 * from a thread of its own. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
struct event {
  cb_event e;
  uint64_t at;       /* gp_get_timestamp() when it came */
  const char *fname; /* API: the function's name (static) */
};
static std::vector<event> evs;

struct named_kernel {
  gp_activity_kernel k;
  std::string name;
};
struct named_function {
  gp_activity_function f;
  std::string name;
};
static std::vector<gp_activity_api> apis;
static std::vector<std::string> api_names;
static std::vector<named_kernel> kernels;
static std::vector<gp_activity_memcpy> copies;
static std::vector<gp_activity_module> modules;
static std::vector<named_function> functions;
static std::vector<gp_activity_device_attribute> attrs;
static std::vector<gp_activity_um_counter> ums;
static std::vector<gp_activity_metric> metrics;

static void on_cb(void *user, gp_callback_domain domain, uint32_t cbid,
                  const void *data) {
  (void)user;
  event ev;
  cb_note(&ev.e, domain, cbid, data, 1);
  ev.at = gp_get_timestamp();
  ev.fname = domain == GP_CALLBACK_DOMAIN_API
                 ? ((const gp_callback_api_data *)data)->function_name
                 : NULL;
  pthread_mutex_lock(&lock);
  evs.push_back(ev);
  pthread_mutex_unlock(&lock);
}

static const char *str(uint32_t id) {
  const char *s = id ? gp_activity_string(id) : NULL;
  return s ? s : "";
}

static void complete(uint8_t *buf, size_t size, size_t valid) {
  (void)size;
  const gp_activity *r = NULL;
  pthread_mutex_lock(&lock);
  while (gp_activity_get_next_record(buf, valid, &r) == 0) {
    switch (r->kind) {
    case GP_ACTIVITY_KIND_API: {
      const gp_activity_api *a = (const gp_activity_api *)r;
      if (a->domain == GP_API_DOMAIN_CUDA_RUNTIME ||
          a->domain == GP_API_DOMAIN_CUDA_DRIVER) {
        apis.push_back(*a);
        api_names.push_back(str(a->name_id));
      }
      break;
    }
    case GP_ACTIVITY_KIND_KERNEL: {
      const gp_activity_kernel *k = (const gp_activity_kernel *)r;
      named_kernel nk = {
          *k, str(k->demangled_name_id ? k->demangled_name_id : k->name_id)};
      nk.k.num_wait_ids = 0; /* the copy holds no wait ids */
      kernels.push_back(nk);
      break;
    }
    case GP_ACTIVITY_KIND_MEMCPY: {
      gp_activity_memcpy m = *(const gp_activity_memcpy *)r;
      copies.push_back(m);
      break;
    }
    case GP_ACTIVITY_KIND_MODULE:
      modules.push_back(*(const gp_activity_module *)r);
      break;
    case GP_ACTIVITY_KIND_FUNCTION: {
      const gp_activity_function *f = (const gp_activity_function *)r;
      named_function nf = {*f, str(f->name_id)};
      functions.push_back(nf);
      break;
    }
    case GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE:
      attrs.push_back(*(const gp_activity_device_attribute *)r);
      break;
    case GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      ums.push_back(*(const gp_activity_um_counter *)r);
      break;
    case GP_ACTIVITY_KIND_METRIC:
      metrics.push_back(*(const gp_activity_metric *)r);
      break;
    default:
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  free(buf);
}

static int failures;

static void check(bool ok, const char *what, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
  printf("%s %s: %s\n", ok ? "ok  " : "FAIL", what, detail);
  failures += !ok;
}

#define CU(call)                                                               \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      printf("cuda-cb-probe: %s: %s\n", #call, cudaGetErrorString(e_));        \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static void pause_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The API record of correlation id corr in api (a gp_api_domain; 0 any),
 * or NULL. */
static const gp_activity_api *api_of(uint32_t api, uint64_t corr) {
  for (size_t i = 0; i < apis.size(); i++)
    if (apis[i].correlation_id == corr && (!api || apis[i].domain == api))
      return &apis[i];
  return NULL;
}

/* The API callback of correlation id corr in api at site, or NULL. */
static const cb_event *api_event(uint32_t api, uint64_t corr, uint32_t site) {
  for (size_t i = 0; i < evs.size(); i++)
    if (evs[i].e.domain == GP_CALLBACK_DOMAIN_API && evs[i].e.corr == corr &&
        evs[i].e.api_domain == api && evs[i].e.site == site)
      return &evs[i].e;
  return NULL;
}

static const cb_event *enter_of(uint32_t api, uint64_t corr) {
  return api_event(api, corr, GP_CALLBACK_SITE_ENTER);
}

static const cb_event *exit_of(uint32_t api, uint64_t corr) {
  return api_event(api, corr, GP_CALLBACK_SITE_EXIT);
}

/* The API record named name (version suffixes gone) in [t0, t1], or
 * NULL: the first of them. */
static const gp_activity_api *api_named(const char *name, uint64_t t0,
                                        uint64_t t1) {
  for (size_t i = 0; i < apis.size(); i++)
    if (apis[i].start >= t0 && apis[i].end <= t1 && api_names[i] == name)
      return &apis[i];
  return NULL;
}

static int64_t attr_of(uint32_t dev, uint32_t attr, uint32_t flags,
                       int *found) {
  for (size_t i = 0; i < attrs.size(); i++)
    if (attrs[i].device_id == dev && attrs[i].attribute == attr &&
        (attrs[i].flags & GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE) ==
            flags) {
      *found = 1;
      return attrs[i].value_type == GP_VALUE_DOUBLE
                 ? (int64_t)attrs[i].value.f64
                 : attrs[i].value.i64;
    }
  *found = 0;
  return 0;
}

/*
 * --metrics: the collector's per-kernel metric (GPUPERF_CUDA_METRICS,
 * gpu__time_duration.sum) as METRIC records, one per kernel, against the
 * program's own clock of each kernel: CUDA events recorded on the stream
 * just before and after it, between which the kernel's GPU time must
 * lie. Returns the exit status.
 */
static int metrics_mode(int iters) {
  setenv("GPUPERF_CUDA_METRICS", "gpu__time_duration.sum", 1);
  gp_activity_register_callbacks(cb_request, complete);
  if (gp_activity_enable(GP_ACTIVITY_KIND_KERNEL) != 0 ||
      gp_activity_enable(GP_ACTIVITY_KIND_METRIC) != 0) {
    printf("FAIL enable\n");
    return 1;
  }
  int rc = gp_cuda_start(0);
  if (rc == GP_ENODEV) {
    printf("cuda-cb-probe: %s\n", gp_cuda_status());
    return 77;
  }
  if (rc != 0) {
    printf("FAIL gp_cuda_start: %d (%s)\n", rc, gp_cuda_status());
    return 1;
  }
  const int n = 1 << 22;
  float *x;
  CU(cudaMalloc(&x, n * sizeof(float)));
  CU(cudaMemset(x, 0, n * sizeof(float)));
  cudaStream_t s;
  CU(cudaStreamCreate(&s));
  std::vector<cudaEvent_t> ev(2 * iters);
  for (int i = 0; i < 2 * iters; i++)
    CU(cudaEventCreate(&ev[i]));
  for (int i = 0; i < iters; i++) {
    CU(cudaEventRecord(ev[2 * i], s));
    cbp_scale<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, n);
    CU(cudaEventRecord(ev[2 * i + 1], s));
  }
  CU(cudaStreamSynchronize(s));
  std::vector<double> event_ns(iters);
  for (int i = 0; i < iters; i++) {
    float ms = 0;
    CU(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    event_ns[i] = ms * 1e6;
  }
  gp_cuda_stop();
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  pthread_mutex_lock(&lock);
  /* The kernels' METRIC records, in launch order (correlation ids grow). */
  std::vector<gp_activity_metric> mine;
  for (size_t i = 0; i < metrics.size(); i++)
    if (strcmp(str(metrics[i].name_id), "gpu__time_duration.sum") == 0)
      mine.push_back(metrics[i]);
  for (size_t i = 1; i < mine.size(); i++)
    for (size_t j = i; j > 0 && mine[j].correlation_id < mine[j - 1].correlation_id; j--)
      std::swap(mine[j], mine[j - 1]);
  int inside = 0;
  double worst = 0;
  for (size_t i = 0; i < mine.size() && i < (size_t)iters; i++) {
    double v = mine[i].value.f64;
    /* The events' clock ticks at about 0.5 us. */
    inside += v > 0 && v <= event_ns[i] + 1000 &&
              mine[i].value_kind == GP_METRIC_VALUE_DOUBLE &&
              !(mine[i].flags & GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID);
    if (event_ns[i] > 0 && v / event_ns[i] > worst)
      worst = v / event_ns[i];
  }
  check((int)mine.size() == iters && inside == iters,
        "METRIC records of gpu__time_duration.sum",
        "%zu for %d kernels, %d of them within their CUDA events (first: %.0f "
        "ns, events %.0f ns; largest share of the events' time %.2f)",
        mine.size(), iters, inside, mine.empty() ? 0.0 : mine[0].value.f64,
        event_ns[0], worst);
  printf("cuda-cb-probe --metrics: %d failed checks\n", failures);
  pthread_mutex_unlock(&lock);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--metrics") == 0)
    return metrics_mode(argc > 2 ? atoi(argv[2]) : 10);
  int iters = argc > 1 ? atoi(argv[1]) : 10;
  if (iters < 1 || iters > 10000) {
    fprintf(stderr, "usage: cuda-cb-probe [ITERATIONS 1..10000]\n");
    return 2;
  }
  evs.reserve(1 << 16);
  gp_activity_register_callbacks(cb_request, complete);
  static const gp_activity_kind kinds[] = {
      GP_ACTIVITY_KIND_API,      GP_ACTIVITY_KIND_KERNEL,
      GP_ACTIVITY_KIND_MEMCPY,   GP_ACTIVITY_KIND_MODULE,
      GP_ACTIVITY_KIND_FUNCTION, GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE,
      GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    if (gp_activity_enable(kinds[i]) != 0) {
      printf("FAIL enable: kind %d\n", (int)kinds[i]);
      return 1;
    }
  int rc = gp_cuda_start(0);
  if (rc == GP_ENODEV) {
    printf("cuda-cb-probe: %s\n", gp_cuda_status());
    return 77;
  }
  if (rc != 0) {
    printf("FAIL gp_cuda_start: %d (%s)\n", rc, gp_cuda_status());
    return 1;
  }
  gp_callback_subscriber *sub;
  if (gp_callback_subscribe(&sub, on_cb, NULL) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_API) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_SYNCHRONIZE) != 0) {
    printf("FAIL subscribe\n");
    return 1;
  }

  /* The context; then the window whose calls are checked one by one. */
  CU(cudaFree(0));
  cudaDeviceProp prop;
  CU(cudaGetDeviceProperties(&prop, 0));
  pause_ms(20);
  uint64_t t0 = gp_get_timestamp();

  const int n = 1 << 20;
  cudaStream_t s;
  CU(cudaStreamCreate(&s));
  float *x, *y;
  CU(cudaMalloc(&x, n * sizeof(float)));
  CU(cudaMalloc(&y, n * sizeof(float)));
  std::vector<float> hx(n, 1.0f), hy(n, 2.0f);
  CU(cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int i = 0; i < iters; i++) {
    cbp_scale<<<(n + 255) / 256, 256, 0, s>>>(x, 0.5f, n);
    cbp_add<<<(n + 255) / 256, 256, 0, s>>>(x, y, n);
  }
  CU(cudaGetLastError());
  CU(cudaStreamSynchronize(s));
  CU(cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
  CU(cudaDeviceSynchronize());
  /* The driver the runtime loaded (the program does not link it, so it
   * starts, and says there is no device, where there is no driver). */
  CUcontext ctx = NULL;
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CUresult (*get_current)(CUcontext *) =
      drv ? (CUresult(*)(CUcontext *))dlsym(drv, "cuCtxGetCurrent") : NULL;
  if (!get_current || get_current(&ctx) != CUDA_SUCCESS || !ctx) {
    printf("cuda-cb-probe: cuCtxGetCurrent failed\n");
    return 2;
  }
  uint32_t look_ctx = 0, look_stream = 0, look_dev = 0, gone_stream = 0;
  int rc_ctx = gp_activity_get_context_id(GP_API_CUDA, ctx, NULL, &look_ctx);
  int rc_stream = gp_activity_get_stream_id(GP_API_CUDA, ctx, s, &look_stream);
  int rc_dev = gp_activity_get_device_id(GP_API_CUDA, ctx, NULL, &look_dev);
  CU(cudaStreamDestroy(s));
  int rc_gone = gp_activity_get_stream_id(GP_API_CUDA, ctx, s, &gone_stream);
  pause_ms(20);
  uint64_t t1 = gp_get_timestamp();
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  gp_callback_unsubscribe(sub);
  CU(cudaFree(x));
  CU(cudaFree(y));
  /* Managed memory, after the window: the host fills it, a kernel adds
   * to all of it, the host reads it back. */
  const int mn = 2 << 20;
  const uint64_t um_bytes = (uint64_t)mn * sizeof(float);
  float *m = NULL;
  CU(cudaMallocManaged(&m, um_bytes));
  for (int i = 0; i < mn; i++)
    m[i] = 1.0f;
  cbp_touch<<<(mn + 255) / 256, 256>>>(m, mn);
  CU(cudaGetLastError());
  CU(cudaDeviceSynchronize());
  double um_sum = 0;
  for (int i = 0; i < mn; i++)
    um_sum += m[i];
  CU(cudaFree(m));
  /* The auto boost state, ours and CUPTI's own. */
  gp_auto_boost_state boost = {0, 0};
  int rc_boost = gp_activity_get_auto_boost_state(look_ctx, &boost);
  typedef int (*boost_fn)(CUcontext, void *);
  boost_fn cupti_boost = (boost_fn)dlsym(RTLD_DEFAULT, "cuptiGetAutoBoostState");
  uint32_t cb_state[2] = {0, 0};
  int rc_cupti = cupti_boost ? cupti_boost(ctx, cb_state) : -1;
  gp_cuda_stop();
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  pthread_mutex_lock(&lock);

  /* 1. The program's own result: x = (x * 0.5 + 2), iters times, from 1. */
  float want = 1.0f;
  for (int i = 0; i < iters; i++)
    want = want * 0.5f + 2.0f;
  int wrong = 0;
  for (int i = 0; i < n; i++)
    wrong += hx[i] != want;
  check(wrong == 0, "the program's result", "%d of %d elements differ from %g",
        wrong, n, (double)want);

  /* 2. The kernels, by name, all on one context and stream. */
  int nscale = 0, nadd = 0, same = 1;
  uint32_t kctx = 0, kstream = 0, kdev = 0;
  for (size_t i = 0; i < kernels.size(); i++) {
    const gp_activity_kernel *k = &kernels[i].k;
    if (kernels[i].name.find("cbp_scale") != std::string::npos)
      nscale++;
    else if (kernels[i].name.find("cbp_add") != std::string::npos)
      nadd++;
    else
      continue;
    if (!kctx) {
      kctx = k->context_id;
      kstream = k->stream_id;
      kdev = k->device_id;
    }
    same &= k->context_id == kctx && k->stream_id == kstream;
  }
  check(nscale == iters && nadd == iters && same && kctx != 0, "kernel records",
        "%d cbp_scale, %d cbp_add (want %d each), context "
        "%u stream %u device %u, all on it: %s",
        nscale, nadd, iters, kctx, kstream, kdev, same ? "yes" : "no");

  /* 3. Every API call of the window: its entry and exit callbacks, with
   *    its correlation id, call, status and the subscriber's data. */
  int in_window = 0, unpaired = 0, bad = 0;
  std::string first_bad;
  for (size_t i = 0; i < apis.size(); i++) {
    const gp_activity_api *a = &apis[i];
    if (a->start < t0 || a->end > t1)
      continue;
    in_window++;
    const cb_event *in = enter_of(a->domain, a->correlation_id);
    const cb_event *out = exit_of(a->domain, a->correlation_id);
    if (!in || !out) {
      if (unpaired++ == 0 && first_bad.empty())
        first_bad = api_names[i] + " (no pair)";
      continue;
    }
    if (in->call != a->cbid || out->call != a->cbid ||
        in->cbid != GP_CALLBACK_API_ID(a->domain, a->cbid) ||
        out->rc != a->return_value ||
        out->data != cb_mark(a->correlation_id, 1)) {
      if (bad++ < 6)
        printf("  differs: %s (domain %u, correlation %llu): call %u/%u, "
               "record %u; id %u, want %u; status %d, record %d; data "
               "%llu, want %llu\n",
               api_names[i].c_str(), a->domain,
               (unsigned long long)a->correlation_id, in->call, out->call,
               a->cbid, in->cbid, GP_CALLBACK_API_ID(a->domain, a->cbid),
               out->rc, a->return_value, (unsigned long long)out->data,
               (unsigned long long)cb_mark(a->correlation_id, 1));
      if (first_bad.empty())
        first_bad = api_names[i] + " (call, status or data)";
    }
  }
  /* No exit without its record, but for what CUPTI records nowhere: a
   * driver call the runtime made inside a runtime call carries that
   * call's correlation id (CUPTI 13.0 on an H200) and has no record of
   * its own; it must lie inside that call's callbacks. */
  int orphans = 0, nested = 0;
  for (size_t i = 0; i < evs.size(); i++) {
    const event *ev = &evs[i];
    if (ev->e.domain != GP_CALLBACK_DOMAIN_API ||
        ev->e.site != GP_CALLBACK_SITE_EXIT || ev->at <= t0 || ev->at >= t1 ||
        api_of(ev->e.api_domain, ev->e.corr))
      continue;
    if (ev->e.api_domain == GP_API_DOMAIN_CUDA_DRIVER &&
        api_of(GP_API_DOMAIN_CUDA_RUNTIME, ev->e.corr)) {
      const cb_event *in = enter_of(GP_API_DOMAIN_CUDA_RUNTIME, ev->e.corr);
      const cb_event *out = exit_of(GP_API_DOMAIN_CUDA_RUNTIME, ev->e.corr);
      if (in && out && in < &ev->e && &ev->e < out) {
        nested++;
        continue;
      }
    }
    if (orphans++ < 8)
      printf("  no record: %s (domain %u, call %u, correlation %llu, "
             "status %d)\n",
             ev->fname ? ev->fname : "?", ev->e.api_domain, ev->e.call,
             (unsigned long long)ev->e.corr, ev->e.rc);
  }
  check(in_window >= 2 * iters && unpaired == 0 && bad == 0 && orphans == 0,
        "API callbacks pair with API records",
        "%d records in the window, %d without a pair, %d differing, %d exits "
        "without a record (and %d driver calls inside runtime calls, which "
        "CUPTI does not record)%s%s",
        in_window, unpaired, bad, orphans, nested,
        first_bad.empty() ? "" : "; first: ", first_bad.c_str());

  /* 4. A launch's entry callback names the context and stream its kernel
   *    ran on; the kernel's correlation id is the runtime call's. */
  int launch_ok = 0;
  for (size_t i = 0; i < kernels.size(); i++) {
    const gp_activity_kernel *k = &kernels[i].k;
    const gp_activity_api *a =
        api_of(GP_API_DOMAIN_CUDA_RUNTIME, k->correlation_id);
    const cb_event *in =
        enter_of(GP_API_DOMAIN_CUDA_RUNTIME, k->correlation_id);
    launch_ok +=
        a && in && in->context == k->context_id && in->stream == k->stream_id;
  }
  check(launch_ok == 2 * iters,
        "launch callbacks name the kernel's context "
        "and stream",
        "%d of %d", launch_ok, 2 * iters);

  /* 5. RESOURCE: the context and the stream, made. */
  int made_ctx = 0, made_stream = 0, ended_stream = 0;
  for (size_t i = 0; i < evs.size(); i++) {
    const cb_event *e = &evs[i].e;
    if (e->domain != GP_CALLBACK_DOMAIN_RESOURCE)
      continue;
    made_ctx += e->cbid == GP_CALLBACK_RESOURCE_CONTEXT_CREATED &&
                e->context == kctx && e->api_domain == GP_API_CUDA;
    made_stream += e->cbid == GP_CALLBACK_RESOURCE_STREAM_CREATED &&
                   e->context == kctx && e->stream == kstream;
    ended_stream += e->cbid == GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING &&
                    e->context == kctx && e->stream == kstream;
  }
  check(made_ctx == 1 && made_stream == 1 && ended_stream == 1,
        "RESOURCE callbacks",
        "CONTEXT_CREATED of context %u: %d, STREAM_CREATED of stream %u: %d, "
        "its STREAM_DESTROY_STARTING: %d (want 1 each)",
        kctx, made_ctx, kstream, made_stream, ended_stream);

  /* 6. SYNCHRONIZE: the stream's and the device's, each with its call. */
  const gp_activity_api *ssync = api_named("cudaStreamSynchronize", t0, t1);
  const gp_activity_api *dsync = api_named("cudaDeviceSynchronize", t0, t1);
  int stream_sync = 0, ctx_sync = 0, nsync = 0;
  for (size_t i = 0; i < evs.size(); i++) {
    const cb_event *e = &evs[i].e;
    if (e->domain != GP_CALLBACK_DOMAIN_SYNCHRONIZE)
      continue;
    nsync++;
    stream_sync += e->cbid == GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED && ssync &&
                   e->corr == ssync->correlation_id && e->stream == kstream &&
                   e->context == kctx;
    ctx_sync += e->cbid == GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED && dsync &&
                e->corr == dsync->correlation_id && e->context == kctx;
  }
  check(stream_sync == 1 && ctx_sync == 1, "SYNCHRONIZE callbacks",
        "%d in all; cudaStreamSynchronize's of stream %u: %d, "
        "cudaDeviceSynchronize's: %d (want 1 each)",
        nsync, kstream, stream_sync, ctx_sync);

  /* 7. The handles' ids: those of the kernel records; a destroyed stream
   *    is forgotten. */
  check(rc_ctx == 0 && look_ctx == kctx && rc_stream == 0 &&
            look_stream == kstream && rc_dev == 0 && look_dev == kdev &&
            rc_gone == GP_ENOENT,
        "ids of the CUcontext and CUstream",
        "context %d/%u, stream %d/%u, device %d/%u (want %u, %u, %u); after "
        "cudaStreamDestroy %d (want %d)",
        rc_ctx, look_ctx, rc_stream, look_stream, rc_dev, look_dev, kctx,
        kstream, kdev, rc_gone, GP_ENOENT);

  /* 8. MODULE and FUNCTION: the program's module in its context, its two
   *    kernels functions of a module recorded. */
  int loaded = 0;
  for (size_t i = 0; i < modules.size(); i++)
    loaded += !(modules[i].flags & GP_ACTIVITY_FLAG_MODULE_UNLOAD) &&
              modules[i].context_id == kctx && modules[i].size_bytes > 0;
  int fscale = 0, fadd = 0, fmod = 0;
  for (size_t i = 0; i < functions.size(); i++) {
    const named_function *f = &functions[i];
    int ours = f->name.find("cbp_scale") != std::string::npos ||
               f->name.find("cbp_add") != std::string::npos;
    if (!ours)
      continue;
    fscale += f->name.find("cbp_scale") != std::string::npos;
    fadd += f->name.find("cbp_add") != std::string::npos;
    for (size_t j = 0; j < modules.size(); j++)
      if (modules[j].module_id == f->f.module_id && f->f.context_id == kctx) {
        fmod++;
        break;
      }
  }
  check(loaded >= 1, "MODULE records",
        "%zu in all, %d loaded into context %u with a size", modules.size(),
        loaded, kctx);
  check(fscale >= 1 && fadd >= 1 && fmod == fscale + fadd, "FUNCTION records",
        "%zu in all; cbp_scale %d, cbp_add %d, %d of them in a recorded "
        "module of context %u",
        functions.size(), fscale, fadd, fmod, kctx);

  /* 9. DEVICE_ATTRIBUTE: ours against cudaGetDeviceProperties; CUDA's own
   *    (CUDEVICE) where CUPTI wrote them. */
  int f1, f2, f3, f4;
  int64_t sms = attr_of(kdev, GP_DEVICE_ATTR_COMPUTE_UNITS, 0, &f1);
  int64_t mem = attr_of(kdev, GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES, 0, &f2);
  int64_t tpb = attr_of(kdev, GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK, 0, &f3);
  int64_t smem =
      attr_of(kdev, GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK, 0, &f4);
  check(f1 && f2 && f3 && f4 && sms == prop.multiProcessorCount &&
            mem == (int64_t)prop.totalGlobalMem &&
            tpb == prop.maxThreadsPerBlock &&
            smem == (int64_t)prop.sharedMemPerBlock,
        "DEVICE_ATTRIBUTE records (ours)",
        "SMs %lld, memory %lld, threads/block %lld, shared/block %lld; the "
        "runtime says %d, %zu, %d, %zu",
        (long long)sms, (long long)mem, (long long)tpb, (long long)smem,
        prop.multiProcessorCount, prop.totalGlobalMem, prop.maxThreadsPerBlock,
        prop.sharedMemPerBlock);
  int cu = 0, g[5];
  for (size_t i = 0; i < attrs.size(); i++)
    cu += !!(attrs[i].flags & GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE);
  const uint32_t F = GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE;
  int64_t cu_sms =
      attr_of(kdev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, F, &g[0]);
  int64_t cu_major =
      attr_of(kdev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, F, &g[1]);
  int64_t cu_minor =
      attr_of(kdev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, F, &g[2]);
  int64_t cu_l2 = attr_of(kdev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, F, &g[3]);
  int64_t cu_warp = attr_of(kdev, CU_DEVICE_ATTRIBUTE_WARP_SIZE, F, &g[4]);
  check(g[0] && g[1] && g[2] && g[3] && g[4] &&
            cu_sms == prop.multiProcessorCount && cu_major == prop.major &&
            cu_minor == prop.minor && cu_l2 == prop.l2CacheSize &&
            cu_warp == prop.warpSize,
        "DEVICE_ATTRIBUTE records (CUDA's CUdevice_attribute)",
        "%d written; multiprocessors %lld, compute capability %lld.%lld, L2 "
        "%lld bytes, warp %lld (the runtime says %d, %d.%d, %d, %d)",
        cu, (long long)cu_sms, (long long)cu_major, (long long)cu_minor,
        (long long)cu_l2, (long long)cu_warp, prop.multiProcessorCount,
        prop.major, prop.minor, prop.l2CacheSize, prop.warpSize);

  /* 10. Copies: the three of the window, each with its call's pair. */
  int ncopies = 0;
  for (size_t i = 0; i < copies.size(); i++)
    ncopies += copies[i].start >= t0 && copies[i].end <= t1 &&
               api_of(GP_API_DOMAIN_CUDA_RUNTIME, copies[i].correlation_id) &&
               enter_of(GP_API_DOMAIN_CUDA_RUNTIME, copies[i].correlation_id) &&
               exit_of(GP_API_DOMAIN_CUDA_RUNTIME, copies[i].correlation_id);
  check(ncopies == 3, "copy records with their calls' callbacks", "%d (want 3)",
        ncopies);

  /* 11. Unified memory: every byte the host wrote moved to the GPU for
   *     the kernel (its pages faulted there), and back for the host's
   *     read; the program's own sum says the kernel ran on all of it. */
  uint64_t htod = 0, dtoh = 0, gpu_faults = 0, cpu_faults = 0;
  for (size_t i = 0; i < ums.size(); i++) {
    const gp_activity_um_counter *u = &ums[i];
    htod += u->counter_kind == GP_UM_COUNTER_BYTES_TRANSFER_HTOD ? u->value : 0;
    dtoh += u->counter_kind == GP_UM_COUNTER_BYTES_TRANSFER_DTOH ? u->value : 0;
    gpu_faults += u->counter_kind == GP_UM_COUNTER_GPU_PAGE_FAULT;
    cpu_faults += u->counter_kind == GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT;
  }
  check(um_sum == 2.0 * mn && htod >= um_bytes && dtoh > 0 && gpu_faults > 0 &&
            cpu_faults > 0,
        "UNIFIED_MEMORY_COUNTER records",
        "%zu records: %llu bytes host to device, %llu device to host (the "
        "program moved %llu each way), %llu GPU fault records, %llu CPU "
        "faults; the program's sum %.0f (want %d)",
        ums.size(), (unsigned long long)htod, (unsigned long long)dtoh,
        (unsigned long long)um_bytes, (unsigned long long)gpu_faults,
        (unsigned long long)cpu_faults, um_sum, 2 * mn);

  /* 12. The auto boost state: what CUPTI itself answers for the context. */
  bool boost_same =
      rc_cupti == CUPTI_ERROR_NOT_SUPPORTED
          ? rc_boost == GP_ENOTSUP
          : rc_cupti == CUPTI_SUCCESS && rc_boost == 0 &&
                boost.enabled == cb_state[0] && boost.pid == cb_state[1];
  check(boost_same, "auto boost state",
        "ours %d (enabled %u, pid %u), CUPTI's %d (enabled %u, pid %u)",
        rc_boost, boost.enabled, boost.pid, rc_cupti, cb_state[0],
        cb_state[1]);

  /* 13. Nothing was lost on the way. */
  size_t dropped = 0;
  gp_activity_get_num_dropped_records(0, 0, &dropped);
  check(dropped == 0, "nothing dropped", "%zu records dropped", dropped);

  printf("cuda-cb-probe: %zu callbacks, %zu API records, %d failed checks\n",
         evs.size(), apis.size(), failures);
  pthread_mutex_unlock(&lock);
  return failures ? 1 : 0;
}
