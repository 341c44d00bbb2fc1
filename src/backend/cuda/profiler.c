/*
 * profiler.c - counter values from a real GPU: per kernel with the range
 * profiler, periodic with PM sampling, both written as COUNTER records.
 *
 * Per kernel (instrumented). For each context, the range profiler is
 * enabled with a configuration image built by the Profiler Host API for
 * the device's chip and counter availability, in auto-range mode with
 * kernel replay: every kernel between Start and Stop becomes one range,
 * replayed inside its launch as many times as the metrics need passes.
 * A kernel chosen by the filter is bracketed by Start at its launch's
 * entry and Stop at its exit, on the launching thread, with the context's
 * lock held in between so that two threads never interleave their
 * ranges. Ranges are decoded in batches (a full batch, a flush, the
 * context's end); range i is the i-th instrumented launch, so its values
 * go out with that launch's correlation id, the window being the launch
 * call (the kernel's own times are in its KERNEL record, joined by the
 * correlation id).
 *
 * Periodic. PM sampling runs per device on the GPU's time trigger; a
 * thread decodes the hardware buffer every 100 ms and writes one COUNTER
 * record per metric and sample, timestamped at the sample's end with the
 * window start. The sample times are taken to be on CUPTI's timebase and
 * mapped like every other CUPTI timestamp (an assumption no GPU here
 * could check).
 *
 * Configuration, until the counters API drives it: GPUPERF_CUDA_METRICS
 * (full metric names, comma-separated, per kernel), GPUPERF_CUDA_KERNELS
 * (globs on mangled or demangled names; default all), GPUPERF_CUDA_PM_METRICS
 * and GPUPERF_CUDA_PM_PERIOD_NS (default 1000000). Counter ids: the n-th
 * per-kernel metric is n, the n-th PM metric 1000 + n.
 *
 * None of this can run without a GPU; it has not been run on one.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cudaInt.h"

#define MAX_RANGES 64
#define MAX_METRICS 64
#define MAX_GLOBS 16
#define PM_DEVICES 16
#define PM_MAX_SAMPLES 4096
#define PM_HW_BUFFER (64u << 20)
#define PM_DECODE_NS 100000000ull
#define PM_FIRST_ID 1000u

typedef struct names_list {
  char *storage;
  const char *v[MAX_METRICS];
  size_t n;
} names_list;

typedef struct rp_ctx {
  CUcontext ctx;
  uint32_t cupti_device;
  pthread_mutex_t lock; /* held from an instrumented launch's entry to exit */
  bool failed;          /* could not be set up: never tried again */
  CUpti_RangeProfiler_Object *obj;
  gp__cuda_host *host;
  uint8_t *data;
  size_t data_size;
  size_t n;
  uint32_t corr[MAX_RANGES];
  uint64_t t0[MAX_RANGES], t1[MAX_RANGES];
  bool started;
  struct rp_ctx *next;
} rp_ctx;

typedef struct pm_dev {
  size_t index;
  CUpti_PmSampling_Object *obj;
  gp__cuda_host *host;
  uint8_t *data;
  size_t data_size;
} pm_dev;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static names_list range_metrics, pm_metrics, kernel_globs;
static rp_ctx *contexts;
static bool profiler_initialized;
static pm_dev pm[PM_DEVICES];
static size_t num_pm;
static uint64_t pm_period_ns = 1000000;
static pthread_t pm_thread;
static bool pm_running, pm_stop;
static pthread_cond_t pm_cond = PTHREAD_COND_INITIALIZER;

/* ------------------------------------------------------------------ */
/* Configuration                                                        */

static int parse_list(const char *s, names_list *out) {
  memset(out, 0, sizeof(*out));
  if (!s || !*s)
    return 0;
  out->storage = strdup(s);
  if (!out->storage)
    return GP_ENOMEM;
  char *save = NULL;
  for (char *t = strtok_r(out->storage, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    while (*t == ' ')
      t++;
    if (!*t)
      continue;
    if (out->n == MAX_METRICS)
      return GP_ECAPACITY;
    out->v[out->n++] = t;
  }
  return 0;
}

static void free_list(names_list *l) {
  free(l->storage);
  memset(l, 0, sizeof(*l));
}

static bool wants_kernel(const char *name) {
  if (kernel_globs.n == 0)
    return true;
  if (!name)
    return false;
  const char *dem = gp_activity_string(gp__cuda_demangle(name));
  for (size_t i = 0; i < kernel_globs.n; i++)
    if (gp__glob_match(kernel_globs.v[i], name) ||
        (*dem && gp__glob_match(kernel_globs.v[i], dem)))
      return true;
  return false;
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

static void emit(uint32_t device, uint32_t counter_id, uint64_t corr,
                 uint64_t window_start, uint64_t ts, double value) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_COUNTER, 0))
    return;
  gp_activity_counter *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_COUNTER, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = ts;
  r->correlation_id = corr;
  r->window_start = window_start;
  r->device_id = device;
  r->counter_id = counter_id;
  r->value_type = GP_VALUE_DOUBLE;
  r->perfmon_id = 0;
  r->value.f64 = value;
  gp__activity_commit(r);
}

/* ------------------------------------------------------------------ */
/* Chip and availability                                                */

static const char *chip_name(uint32_t device_index) {
  CUpti_Device_GetChipName_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  p.deviceIndex = device_index;
  if (cuptiDeviceGetChipName(&p) != CUPTI_SUCCESS)
    return NULL;
  return p.pChipName;
}

static uint8_t *range_availability(CUcontext ctx) {
  CUpti_Profiler_GetCounterAvailability_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
  p.ctx = ctx;
  if (cuptiProfilerGetCounterAvailability(&p) != CUPTI_SUCCESS)
    return NULL;
  uint8_t *img = malloc(p.counterAvailabilityImageSize);
  if (!img)
    return NULL;
  p.pCounterAvailabilityImage = img;
  if (cuptiProfilerGetCounterAvailability(&p) != CUPTI_SUCCESS) {
    free(img);
    return NULL;
  }
  return img;
}

/* ------------------------------------------------------------------ */
/* Range profiler, per context                                          */

static int rp_reset_data(rp_ctx *c) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize =
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  ip.pRangeProfilerObject = c->obj;
  ip.counterDataSize = c->data_size;
  ip.pCounterData = c->data;
  CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&ip);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiRangeProfilerCounterDataImageInitialize",
                                r);
  size_t config_size = 0;
  const uint8_t *config = gp__cuda_host_config(c->host, &config_size, NULL);
  CUpti_RangeProfiler_SetConfig_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  sp.pRangeProfilerObject = c->obj;
  sp.configSize = config_size;
  sp.pConfig = config;
  sp.counterDataImageSize = c->data_size;
  sp.pCounterDataImage = c->data;
  sp.range = CUPTI_AutoRange;
  sp.replayMode = CUPTI_KernelReplay;
  sp.maxRangesPerPass = MAX_RANGES;
  sp.numNestingLevels = 1;
  sp.minNestingLevel = 1;
  sp.passIndex = 0;
  sp.targetNestingLevel = 1;
  r = cuptiRangeProfilerSetConfig(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiRangeProfilerSetConfig", r);
  c->n = 0;
  return 0;
}

/* Sets up the range profiler on c's context. Caller holds c->lock. */
static int rp_setup(rp_ctx *c) {
  if (!profiler_initialized) {
    CUpti_Profiler_Initialize_Params ip;
    memset(&ip, 0, sizeof(ip));
    ip.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
    CUptiResult r = cuptiProfilerInitialize(&ip);
    if (r != CUPTI_SUCCESS)
      return gp__cuda_cupti_error("cuptiProfilerInitialize", r);
    profiler_initialized = true;
  }
  const char *chip = chip_name(c->cupti_device);
  uint8_t *avail = range_availability(c->ctx);
  if (!chip || !avail) {
    free(avail);
    return gp__cuda_cupti_error("cuptiDeviceGetChipName/GetCounterAvailability",
                                CUPTI_ERROR_NOT_SUPPORTED);
  }
  size_t bad = 0;
  int rc = gp__cuda_host_open(chip, GP_CUDA_PROFILER_RANGE, avail,
                              range_metrics.v, range_metrics.n, &c->host, &bad);
  free(avail);
  if (rc != 0)
    return rc;
  CUpti_RangeProfiler_Enable_Params ep;
  memset(&ep, 0, sizeof(ep));
  ep.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  ep.ctx = c->ctx;
  CUptiResult r = cuptiRangeProfilerEnable(&ep);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiRangeProfilerEnable", r);
  c->obj = ep.pRangeProfilerObject;
  CUpti_RangeProfiler_GetCounterDataSize_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
  sp.pRangeProfilerObject = c->obj;
  sp.pMetricNames = range_metrics.v;
  sp.numMetrics = range_metrics.n;
  sp.maxNumOfRanges = MAX_RANGES;
  sp.maxNumRangeTreeNodes = MAX_RANGES;
  r = cuptiRangeProfilerGetCounterDataSize(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiRangeProfilerGetCounterDataSize", r);
  c->data_size = sp.counterDataSize;
  c->data = malloc(c->data_size);
  if (!c->data)
    return GP_ENOMEM;
  return rp_reset_data(c);
}

/* Decodes the batch of c and writes its values. Caller holds c->lock. */
static void rp_decode(rp_ctx *c) {
  if (!c->obj || c->n == 0)
    return;
  CUpti_RangeProfiler_DecodeData_Params dp;
  memset(&dp, 0, sizeof(dp));
  dp.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  dp.pRangeProfilerObject = c->obj;
  if (cuptiRangeProfilerDecodeData(&dp) == CUPTI_SUCCESS) {
    CUpti_RangeProfiler_GetCounterDataInfo_Params ip;
    memset(&ip, 0, sizeof(ip));
    ip.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
    ip.pCounterDataImage = c->data;
    ip.counterDataImageSize = c->data_size;
    size_t ranges = 0;
    if (cuptiRangeProfilerGetCounterDataInfo(&ip) == CUPTI_SUCCESS)
      ranges = ip.numTotalRanges;
    uint32_t dev = gp__cuda_device(c->cupti_device);
    double values[MAX_METRICS];
    for (size_t i = 0; i < ranges && i < c->n; i++) {
      if (gp__cuda_host_evaluate(c->host, c->data, c->data_size, i, values) !=
          0)
        continue;
      for (size_t m = 0; m < range_metrics.n; m++)
        emit(dev, (uint32_t)(m + 1), c->corr[i], c->t0[i], c->t1[i], values[m]);
    }
    if (dp.numOfRangeDropped > 0)
      gp__activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE, 0, 0,
                             dp.numOfRangeDropped * range_metrics.n);
  }
  rp_reset_data(c);
}

static rp_ctx *rp_find(CUcontext ctx, bool create) {
  pthread_mutex_lock(&lock);
  rp_ctx *c = contexts;
  while (c && c->ctx != ctx)
    c = c->next;
  if (!c && create) {
    uint32_t dev = 0;
    c = calloc(1, sizeof(*c));
    if (c && cuptiGetDeviceId(ctx, &dev) == CUPTI_SUCCESS) {
      c->ctx = ctx;
      c->cupti_device = dev;
      pthread_mutex_init(&c->lock, NULL);
      c->next = contexts;
      contexts = c;
    } else {
      free(c);
      c = NULL;
    }
  }
  pthread_mutex_unlock(&lock);
  return c;
}

static void rp_teardown(rp_ctx *c) {
  if (c->obj) {
    CUpti_RangeProfiler_Disable_Params p;
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    p.pRangeProfilerObject = c->obj;
    cuptiRangeProfilerDisable(&p);
    c->obj = NULL;
  }
  gp__cuda_host_close(c->host);
  c->host = NULL;
  free(c->data);
  c->data = NULL;
}

/* See cudaInt.h. */
void gp__cuda_profiler_launch(CUcontext ctx, const char *name, uint32_t corr,
                              bool enter) {
  if (range_metrics.n == 0 || !ctx)
    return;
  static GP_TLS rp_ctx *open_ctx; /* instrumented launch in progress */
  if (enter) {
    if (open_ctx || !wants_kernel(name))
      return;
    rp_ctx *c = rp_find(ctx, true);
    if (!c)
      return;
    pthread_mutex_lock(&c->lock);
    if (!c->obj && !c->failed && rp_setup(c) != 0) {
      c->failed = true;
      rp_teardown(c);
    }
    CUpti_RangeProfiler_Start_Params sp;
    memset(&sp, 0, sizeof(sp));
    sp.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = c->obj;
    if (c->failed || cuptiRangeProfilerStart(&sp) != CUPTI_SUCCESS) {
      pthread_mutex_unlock(&c->lock);
      return;
    }
    c->started = true;
    c->corr[c->n] = corr;
    c->t0[c->n] = gp_get_timestamp();
    open_ctx = c;
    return; /* c->lock stays held until the launch returns */
  }
  rp_ctx *c = open_ctx;
  if (!c || c->ctx != ctx)
    return;
  open_ctx = NULL;
  CUpti_RangeProfiler_Stop_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  sp.pRangeProfilerObject = c->obj;
  if (cuptiRangeProfilerStop(&sp) == CUPTI_SUCCESS) {
    c->t1[c->n] = gp_get_timestamp();
    c->n++;
  }
  c->started = false;
  if (c->n == MAX_RANGES)
    rp_decode(c);
  pthread_mutex_unlock(&c->lock);
}

/* See cudaInt.h. */
void gp__cuda_profiler_context(CUcontext ctx, bool created) {
  if (created || range_metrics.n == 0)
    return;
  rp_ctx *c = rp_find(ctx, false);
  if (!c)
    return;
  pthread_mutex_lock(&c->lock);
  rp_decode(c);
  rp_teardown(c);
  c->failed = true; /* the context is going: no more ranges */
  pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------------ */
/* PM sampling, per device                                              */

static int pm_reset_data(pm_dev *d) {
  CUpti_PmSampling_CounterDataImage_Initialize_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize =
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  ip.pPmSamplingObject = d->obj;
  ip.counterDataSize = d->data_size;
  ip.pCounterData = d->data;
  CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&ip);
  return r == CUPTI_SUCCESS
             ? 0
             : gp__cuda_cupti_error("cuptiPmSamplingCounterDataImageInitialize",
                                    r);
}

static int pm_setup(pm_dev *d) {
  CUpti_PmSampling_GetCounterAvailability_Params ap;
  memset(&ap, 0, sizeof(ap));
  ap.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
  ap.deviceIndex = d->index;
  CUptiResult r = cuptiPmSamplingGetCounterAvailability(&ap);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingGetCounterAvailability", r);
  uint8_t *avail = malloc(ap.counterAvailabilityImageSize);
  if (!avail)
    return GP_ENOMEM;
  ap.pCounterAvailabilityImage = avail;
  r = cuptiPmSamplingGetCounterAvailability(&ap);
  const char *chip = r == CUPTI_SUCCESS ? chip_name((uint32_t)d->index) : NULL;
  int rc = chip ? gp__cuda_host_open(chip, GP_CUDA_PROFILER_PM_SAMPLING, avail,
                                     pm_metrics.v, pm_metrics.n, &d->host, NULL)
                : gp__cuda_cupti_error(
                      "cuptiPmSamplingGetCounterAvailability",
                      r == CUPTI_SUCCESS ? CUPTI_ERROR_NOT_SUPPORTED : r);
  free(avail);
  if (rc != 0)
    return rc;
  CUpti_PmSampling_Enable_Params ep;
  memset(&ep, 0, sizeof(ep));
  ep.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
  ep.deviceIndex = d->index;
  r = cuptiPmSamplingEnable(&ep);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingEnable", r);
  d->obj = ep.pPmSamplingObject;
  size_t config_size = 0;
  const uint8_t *config = gp__cuda_host_config(d->host, &config_size, NULL);
  CUpti_PmSampling_SetConfig_Params cp;
  memset(&cp, 0, sizeof(cp));
  cp.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
  cp.pPmSamplingObject = d->obj;
  cp.configSize = config_size;
  cp.pConfig = config;
  cp.hardwareBufferSize = PM_HW_BUFFER;
  cp.samplingInterval = pm_period_ns;
  cp.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  cp.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  r = cuptiPmSamplingSetConfig(&cp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingSetConfig", r);
  CUpti_PmSampling_GetCounterDataSize_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
  sp.pPmSamplingObject = d->obj;
  sp.pMetricNames = pm_metrics.v;
  sp.numMetrics = pm_metrics.n;
  sp.maxSamples = PM_MAX_SAMPLES;
  r = cuptiPmSamplingGetCounterDataSize(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingGetCounterDataSize", r);
  d->data_size = sp.counterDataSize;
  d->data = malloc(d->data_size);
  if (!d->data)
    return GP_ENOMEM;
  rc = pm_reset_data(d);
  if (rc != 0)
    return rc;
  CUpti_PmSampling_Start_Params st;
  memset(&st, 0, sizeof(st));
  st.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE;
  st.pPmSamplingObject = d->obj;
  r = cuptiPmSamplingStart(&st);
  return r == CUPTI_SUCCESS ? 0
                            : gp__cuda_cupti_error("cuptiPmSamplingStart", r);
}

/* Decodes what the hardware buffer holds and writes it out. */
static void pm_decode(pm_dev *d) {
  CUpti_PmSampling_DecodeData_Params dp;
  memset(&dp, 0, sizeof(dp));
  dp.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
  dp.pPmSamplingObject = d->obj;
  dp.pCounterDataImage = d->data;
  dp.counterDataImageSize = d->data_size;
  if (cuptiPmSamplingDecodeData(&dp) != CUPTI_SUCCESS)
    return;
  CUpti_PmSampling_GetCounterDataInfo_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
  ip.pCounterDataImage = d->data;
  ip.counterDataImageSize = d->data_size;
  if (cuptiPmSamplingGetCounterDataInfo(&ip) != CUPTI_SUCCESS)
    return;
  uint32_t dev = gp__cuda_device((uint32_t)d->index);
  double values[MAX_METRICS];
  for (size_t i = 0; i < ip.numCompletedSamples; i++) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params sp;
    memset(&sp, 0, sizeof(sp));
    sp.structSize =
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
    sp.pPmSamplingObject = d->obj;
    sp.pCounterDataImage = d->data;
    sp.counterDataImageSize = d->data_size;
    sp.sampleIndex = i;
    if (cuptiPmSamplingCounterDataGetSampleInfo(&sp) != CUPTI_SUCCESS ||
        gp__cuda_host_evaluate(d->host, d->data, d->data_size, i, values) != 0)
      continue;
    uint64_t t0 = gp__cuda_ts(sp.startTimestamp);
    uint64_t t1 = gp__cuda_ts(sp.endTimestamp);
    for (size_t m = 0; m < pm_metrics.n; m++)
      emit(dev, PM_FIRST_ID + (uint32_t)m + 1, 0, t0, t1, values[m]);
  }
  if (dp.overflow)
    gp__activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE, 0, 0, 1);
  pm_reset_data(d);
}

static void pm_teardown(pm_dev *d) {
  if (d->obj) {
    CUpti_PmSampling_Stop_Params st;
    memset(&st, 0, sizeof(st));
    st.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
    st.pPmSamplingObject = d->obj;
    cuptiPmSamplingStop(&st);
    if (d->data)
      pm_decode(d);
    CUpti_PmSampling_Disable_Params dp;
    memset(&dp, 0, sizeof(dp));
    dp.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE;
    dp.pPmSamplingObject = d->obj;
    cuptiPmSamplingDisable(&dp);
    d->obj = NULL;
  }
  gp__cuda_host_close(d->host);
  d->host = NULL;
  free(d->data);
  d->data = NULL;
}

static void *pm_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (!pm_stop) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)PM_DECODE_NS;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&pm_cond, &lock, &ts);
    for (size_t i = 0; i < num_pm; i++)
      if (pm[i].obj)
        pm_decode(&pm[i]);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Start, flush, stop                                                   */

/* See cudaInt.h. */
int gp__cuda_profiler_start(void) {
  int rc = parse_list(getenv("GPUPERF_CUDA_METRICS"), &range_metrics);
  if (rc == 0)
    rc = parse_list(getenv("GPUPERF_CUDA_KERNELS"), &kernel_globs);
  if (rc == 0)
    rc = parse_list(getenv("GPUPERF_CUDA_PM_METRICS"), &pm_metrics);
  if (rc != 0)
    goto fail;
  const char *period = getenv("GPUPERF_CUDA_PM_PERIOD_NS");
  if (period && *period) {
    char *end;
    unsigned long long v = strtoull(period, &end, 10);
    if (*end || v < 1000 || v > 1000000000ull) {
      rc = GP_EINVAL;
      goto fail;
    }
    pm_period_ns = v;
  }
  if (pm_metrics.n == 0)
    return 0;
  /* Devices that answer; those that do not are skipped. */
  pthread_mutex_lock(&lock);
  int count = 0;
  for (uint32_t i = 0; i < PM_DEVICES; i++) {
    if (!gp__cuda_device_known(i))
      continue;
    pm[num_pm].index = i;
    if (pm_setup(&pm[num_pm]) == 0)
      count++, num_pm++;
    else
      pm_teardown(&pm[num_pm]);
  }
  if (count > 0 && pthread_create(&pm_thread, NULL, pm_main, NULL) == 0)
    pm_running = true;
  pthread_mutex_unlock(&lock);
  return count > 0 ? 0 : GP_ENOTSUP;

fail:
  free_list(&range_metrics);
  free_list(&kernel_globs);
  free_list(&pm_metrics);
  return rc;
}

/* See cudaInt.h. */
void gp__cuda_profiler_flush(bool final) {
  pthread_mutex_lock(&lock);
  rp_ctx *list = contexts;
  pthread_mutex_unlock(&lock);
  for (rp_ctx *c = list; c; c = c->next) {
    /* A launch in progress holds the lock: its batch goes next time. */
    if (pthread_mutex_trylock(&c->lock) != 0)
      continue;
    rp_decode(c);
    pthread_mutex_unlock(&c->lock);
  }
  if (final) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < num_pm; i++)
      if (pm[i].obj)
        pm_decode(&pm[i]);
    pthread_mutex_unlock(&lock);
  }
}

/* See cudaInt.h. */
void gp__cuda_profiler_stop(void) {
  pthread_mutex_lock(&lock);
  pm_stop = true;
  pthread_cond_signal(&pm_cond);
  bool joined = pm_running;
  pthread_mutex_unlock(&lock);
  if (joined)
    pthread_join(pm_thread, NULL);
  pthread_mutex_lock(&lock);
  pm_running = false;
  for (size_t i = 0; i < num_pm; i++)
    pm_teardown(&pm[i]);
  num_pm = 0;
  for (rp_ctx *c = contexts; c; c = c->next) {
    pthread_mutex_lock(&c->lock);
    rp_decode(c);
    rp_teardown(c);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&lock);
}
