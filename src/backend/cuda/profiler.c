/*
 * profiler.c - counter values from a real GPU: per kernel with the range
 * profiler, periodic with PM sampling.
 *
 * Each CUDA device may sample one configuration at a time
 * (gp__cuda_sampling_start): full metric names, per kernel and/or
 * periodic, and where the values go (an emit callback: COUNTER records
 * with the counter ids of whoever asked).
 *
 * Per kernel (instrumented). For each context of the device the range
 * profiler is enabled with a configuration image that the Profiler Host
 * API builds for the device's chip and counter availability, in
 * auto-range mode with kernel replay: every kernel between Start and Stop
 * becomes one range, replayed inside its launch as many times as the
 * metrics need passes. A kernel the configuration wants is bracketed by
 * Start at its launch's entry and Stop at its exit, on the launching
 * thread, with the context's lock held in between so that two threads
 * never interleave their ranges. Ranges are decoded in batches (a full
 * batch, a flush, the context's end, a stop); range i is the i-th
 * measured launch, so its values go out with that launch's correlation
 * id; the window is the launch call (the kernel's own times are in its
 * KERNEL record, joined by the correlation id).
 *
 * Periodic. PM sampling runs per device on the GPU's time trigger; a
 * thread decodes the hardware buffer every 100 ms and emits one value per
 * metric and sample, at the sample's end with its start as the window.
 * The sample times are taken to be on CUPTI's timebase and mapped like
 * every other CUPTI timestamp (an assumption no GPU here could check).
 *
 * Who asks: the counters API (provider.c), or the environment
 * (envconfig.c).
 *
 * None of this can run without a GPU; it has not been run on one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cudaInt.h"
#include "core/thread.h"

#define MAX_DEVS 64
#define MAX_RANGES 64
#define MAX_METRICS 64
#define PM_MAX_SAMPLES 4096
#define PM_HW_BUFFER (64u << 20)
#define PM_DECODE_NS 100000000ull

typedef struct names_list {
  char *storage;
  const char *v[MAX_METRICS];
  size_t n;
} names_list;

typedef struct pm_state {
  CUpti_PmSampling_Object *obj;
  gp__cuda_host *host;
  uint8_t *data;
  size_t data_size;
} pm_state;

/* One device's sampling. Changed under `lock`; `gen` tells a context
 * that the configuration it was set up for is gone. */
typedef struct dev_sampling {
  bool on;
  bool instrumented;
  uint64_t period_ns;
  uint32_t gen;
  names_list metrics;
  gp__cuda_want_fn want;
  gp__cuda_emit_fn emit;
  void *user;
  pm_state pm;
} dev_sampling;

typedef struct rp_ctx {
  CUcontext ctx;
  uint32_t cupti_device;
  pthread_mutex_t lock; /* held from a measured launch's entry to exit */
  uint32_t gen;         /* of the device configuration set up for */
  bool failed;          /* could not be set up for gen: not tried again */
  bool gone;            /* the context was destroyed */
  CUpti_RangeProfiler_Object *obj;
  gp__cuda_host *host;
  uint8_t *data;
  size_t data_size;
  size_t n;
  uint32_t corr[MAX_RANGES];
  uint64_t t0[MAX_RANGES], t1[MAX_RANGES];
  /* The configuration's output, copied at setup. */
  size_t num_metrics;
  gp__cuda_emit_fn emit;
  void *user;
  struct rp_ctx *next;
} rp_ctx;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* How many devices measure per kernel (instrumented sampling on): with
 * none, a launch costs gp__cuda_profiler_launch one relaxed load. */
static atomic_uint instrumented_devs;
static dev_sampling devs[MAX_DEVS];
static rp_ctx *contexts; /* prepended under lock, never removed */
static bool profiler_initialized;
static pthread_t pm_thread;
static bool pm_running, pm_stop;
static pthread_cond_t pm_cond = PTHREAD_COND_INITIALIZER;

/* ------------------------------------------------------------------ */
/* Lists                                                                */

/* Copies names into out as one allocation. */
static int copy_list(const char *const *names, size_t n, names_list *out) {
  memset(out, 0, sizeof(*out));
  if (n > MAX_METRICS)
    return GP_ECAPACITY;
  size_t len = 1;
  for (size_t i = 0; i < n; i++) {
    if (!names[i] || !*names[i])
      return GP_EINVAL;
    len += strlen(names[i]) + 1;
  }
  out->storage = malloc(len);
  if (!out->storage)
    return GP_ENOMEM;
  char *p = out->storage;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(names[i]) + 1;
    memcpy(p, names[i], l);
    out->v[i] = p;
    p += l;
  }
  out->n = n;
  return 0;
}

static void free_list(names_list *l) {
  free(l->storage);
  memset(l, 0, sizeof(*l));
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

/* Sets up the range profiler on c's context for the device's metrics.
 * Caller holds c->lock and `lock`. */
static int rp_setup(rp_ctx *c, const dev_sampling *d) {
  int rc = gp__cuda_sanitizer_refuses();
  if (rc != 0)
    return rc;
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
  rc = gp__cuda_host_open(chip, GP_CUDA_PROFILER_RANGE, avail, d->metrics.v,
                          d->metrics.n, &c->host, NULL);
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
  sp.pMetricNames = (const char **)d->metrics.v;
  sp.numMetrics = d->metrics.n;
  sp.maxNumOfRanges = MAX_RANGES;
  sp.maxNumRangeTreeNodes = MAX_RANGES;
  r = cuptiRangeProfilerGetCounterDataSize(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiRangeProfilerGetCounterDataSize", r);
  c->data_size = sp.counterDataSize;
  c->data = malloc(c->data_size);
  if (!c->data)
    return GP_ENOMEM;
  c->num_metrics = d->metrics.n;
  c->emit = d->emit;
  c->user = d->user;
  return rp_reset_data(c);
}

/* Decodes c's batch and emits its values. Caller holds c->lock. */
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
    double values[MAX_METRICS];
    for (size_t i = 0; i < ranges && i < c->n; i++) {
      if (gp__cuda_host_evaluate(c->host, c->data, c->data_size, i, values) !=
          0)
        continue;
      for (size_t m = 0; m < c->num_metrics; m++)
        c->emit(c->user, c->cupti_device, m, values[m], c->t1[i], c->t0[i],
                c->corr[i]);
    }
    if (dp.numOfRangeDropped > 0)
      GP_CORE->activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE, 0,
                                  0, dp.numOfRangeDropped * c->num_metrics);
  }
  rp_reset_data(c);
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
  c->n = 0;
}

static rp_ctx *rp_find(CUcontext ctx, bool create) {
  pthread_mutex_lock(&lock);
  rp_ctx *c = contexts;
  while (c && c->ctx != ctx)
    c = c->next;
  if (!c && create) {
    uint32_t dev = 0;
    c = calloc(1, sizeof(*c));
    if (c && cuptiGetDeviceId(ctx, &dev) == CUPTI_SUCCESS && dev < MAX_DEVS) {
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

/* Is a launch on device d measured? Reads the configuration under lock. */
static bool wanted(uint32_t d, const char *name, uint32_t *gen) {
  pthread_mutex_lock(&lock);
  dev_sampling *ds = &devs[d];
  bool on = ds->on && ds->instrumented;
  gp__cuda_want_fn want = ds->want;
  void *user = ds->user;
  *gen = ds->gen;
  pthread_mutex_unlock(&lock);
  if (!on)
    return false;
  if (!want)
    return true;
  const char *dem = gp_activity_string(gp__cuda_demangle(name));
  return want(user, name, *dem ? dem : NULL);
}

/* When each measured launch began, by correlation id, for its kernel
 * record: CUPTI does not time the kernels it measures (seen on an H200
 * with CUPTI 13.0: their records come with start and end 0), so those
 * are placed at their launch (gp__cuda_launch_time_take). Direct-mapped:
 * a record that comes LAUNCH_SLOTS correlation ids later or more finds
 * its slot taken, and its kernel stays untimed (the trace counts it).
 * Made at the first measured launch; kept to the end of the process,
 * since records may still be translated after the profiler stops. */
#define LAUNCH_SLOTS 4096u
typedef struct launch_slot {
  uint32_t corr;
  uint64_t t0;
} launch_slot;
static launch_slot *launch_slots;
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

/* See cudaInt.h. */
void gp__cuda_launch_time_put(uint32_t corr, uint64_t t0) {
  pthread_mutex_lock(&launch_lock);
  if (!launch_slots)
    launch_slots = calloc(LAUNCH_SLOTS, sizeof(*launch_slots));
  if (launch_slots && corr)
    launch_slots[corr % LAUNCH_SLOTS] = (launch_slot){corr, t0};
  pthread_mutex_unlock(&launch_lock);
}

/* See cudaInt.h. */
uint64_t gp__cuda_launch_time_take(uint32_t corr) {
  uint64_t t = 0;
  pthread_mutex_lock(&launch_lock);
  launch_slot *sl = launch_slots ? &launch_slots[corr % LAUNCH_SLOTS] : NULL;
  if (sl && corr && sl->corr == corr) {
    t = sl->t0;
    sl->corr = 0;
  }
  pthread_mutex_unlock(&launch_lock);
  return t;
}

/* See cudaInt.h. */
void gp__cuda_profiler_launch(CUcontext ctx, const char *name, uint32_t corr,
                              bool enter) {
  static GP_TLS rp_ctx *open_ctx; /* a measured launch in progress */
  if (!ctx)
    return;
  if (enter) {
    if (open_ctx || !name ||
        atomic_load_explicit(&instrumented_devs, memory_order_relaxed) == 0)
      return;
    rp_ctx *c = rp_find(ctx, true);
    uint32_t gen = 0;
    if (!c || !wanted(c->cupti_device, name, &gen))
      return;
    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&lock);
    dev_sampling *d = &devs[c->cupti_device];
    bool ok = d->on && d->instrumented && d->gen == gen && !c->gone;
    if (ok && c->gen != gen) {
      /* First launch under this configuration: (re)build. */
      rp_teardown(c);
      c->gen = gen;
      c->failed = rp_setup(c, d) != 0;
      if (c->failed) {
        rp_teardown(c);
        /* Once per context and configuration: the program runs on. */
        fprintf(stderr,
                "gpuperf-cuda: no per-kernel counters on CUDA device %u: %s\n",
                c->cupti_device, gp__cuda_status());
      }
    }
    ok = ok && !c->failed;
    pthread_mutex_unlock(&lock);
    CUpti_RangeProfiler_Start_Params sp;
    memset(&sp, 0, sizeof(sp));
    sp.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = c->obj;
    if (!ok || cuptiRangeProfilerStart(&sp) != CUPTI_SUCCESS) {
      pthread_mutex_unlock(&c->lock);
      return;
    }
    c->corr[c->n] = corr;
    c->t0[c->n] = gp_get_timestamp();
    gp__cuda_launch_time_put(corr, c->t0[c->n]);
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
  if (c->n == MAX_RANGES)
    rp_decode(c);
  pthread_mutex_unlock(&c->lock);
}

/* See cudaInt.h. */
void gp__cuda_profiler_context(CUcontext ctx, bool created) {
  if (created)
    return;
  rp_ctx *c = rp_find(ctx, false);
  if (!c)
    return;
  pthread_mutex_lock(&c->lock);
  rp_decode(c);
  rp_teardown(c);
  pthread_mutex_lock(&lock);
  c->gone = true; /* CUcontext values can be reused: not this entry */
  c->ctx = NULL;
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&c->lock);
}

/* ------------------------------------------------------------------ */
/* PM sampling, per device                                              */

static int pm_reset_data(pm_state *p) {
  CUpti_PmSampling_CounterDataImage_Initialize_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize =
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  ip.pPmSamplingObject = p->obj;
  ip.counterDataSize = p->data_size;
  ip.pCounterData = p->data;
  CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&ip);
  return r == CUPTI_SUCCESS
             ? 0
             : gp__cuda_cupti_error("cuptiPmSamplingCounterDataImageInitialize",
                                    r);
}

static int pm_setup(uint32_t index, dev_sampling *d) {
  pm_state *p = &d->pm;
  int rc = gp__cuda_sanitizer_refuses();
  if (rc != 0)
    return rc;
  CUpti_PmSampling_GetCounterAvailability_Params ap;
  memset(&ap, 0, sizeof(ap));
  ap.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
  ap.deviceIndex = index;
  CUptiResult r = cuptiPmSamplingGetCounterAvailability(&ap);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingGetCounterAvailability", r);
  uint8_t *avail = malloc(ap.counterAvailabilityImageSize);
  if (!avail)
    return GP_ENOMEM;
  ap.pCounterAvailabilityImage = avail;
  r = cuptiPmSamplingGetCounterAvailability(&ap);
  const char *chip = r == CUPTI_SUCCESS ? chip_name(index) : NULL;
  rc = chip ? gp__cuda_host_open(chip, GP_CUDA_PROFILER_PM_SAMPLING, avail,
                                 d->metrics.v, d->metrics.n, &p->host, NULL)
            : gp__cuda_cupti_error(
                  "cuptiPmSamplingGetCounterAvailability",
                  r == CUPTI_SUCCESS ? CUPTI_ERROR_NOT_SUPPORTED : r);
  free(avail);
  if (rc != 0)
    return rc;
  CUpti_PmSampling_Enable_Params ep;
  memset(&ep, 0, sizeof(ep));
  ep.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
  ep.deviceIndex = index;
  r = cuptiPmSamplingEnable(&ep);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingEnable", r);
  p->obj = ep.pPmSamplingObject;
  size_t config_size = 0;
  const uint8_t *config = gp__cuda_host_config(p->host, &config_size, NULL);
  CUpti_PmSampling_SetConfig_Params cp;
  memset(&cp, 0, sizeof(cp));
  cp.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
  cp.pPmSamplingObject = p->obj;
  cp.configSize = config_size;
  cp.pConfig = config;
  cp.hardwareBufferSize = PM_HW_BUFFER;
  cp.samplingInterval = d->period_ns;
  cp.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  cp.hwBufferAppendMode =
      CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
  r = cuptiPmSamplingSetConfig(&cp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingSetConfig", r);
  CUpti_PmSampling_GetCounterDataSize_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
  sp.pPmSamplingObject = p->obj;
  sp.pMetricNames = (const char **)d->metrics.v;
  sp.numMetrics = d->metrics.n;
  sp.maxSamples = PM_MAX_SAMPLES;
  r = cuptiPmSamplingGetCounterDataSize(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiPmSamplingGetCounterDataSize", r);
  p->data_size = sp.counterDataSize;
  p->data = malloc(p->data_size);
  if (!p->data)
    return GP_ENOMEM;
  rc = pm_reset_data(p);
  if (rc != 0)
    return rc;
  CUpti_PmSampling_Start_Params st;
  memset(&st, 0, sizeof(st));
  st.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE;
  st.pPmSamplingObject = p->obj;
  r = cuptiPmSamplingStart(&st);
  return r == CUPTI_SUCCESS ? 0
                            : gp__cuda_cupti_error("cuptiPmSamplingStart", r);
}

/* Decodes what the hardware buffer holds and emits it. Caller holds lock. */
static void pm_decode(uint32_t index, dev_sampling *d) {
  pm_state *p = &d->pm;
  CUpti_PmSampling_DecodeData_Params dp;
  memset(&dp, 0, sizeof(dp));
  dp.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
  dp.pPmSamplingObject = p->obj;
  dp.pCounterDataImage = p->data;
  dp.counterDataImageSize = p->data_size;
  if (cuptiPmSamplingDecodeData(&dp) != CUPTI_SUCCESS)
    return;
  CUpti_PmSampling_GetCounterDataInfo_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
  ip.pCounterDataImage = p->data;
  ip.counterDataImageSize = p->data_size;
  if (cuptiPmSamplingGetCounterDataInfo(&ip) != CUPTI_SUCCESS)
    return;
  double values[MAX_METRICS];
  for (size_t i = 0; i < ip.numCompletedSamples; i++) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params sp;
    memset(&sp, 0, sizeof(sp));
    sp.structSize =
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
    sp.pPmSamplingObject = p->obj;
    sp.pCounterDataImage = p->data;
    sp.counterDataImageSize = p->data_size;
    sp.sampleIndex = i;
    if (cuptiPmSamplingCounterDataGetSampleInfo(&sp) != CUPTI_SUCCESS ||
        gp__cuda_host_evaluate(p->host, p->data, p->data_size, i, values) != 0)
      continue;
    uint64_t t0 = gp__cuda_ts(sp.startTimestamp);
    uint64_t t1 = gp__cuda_ts(sp.endTimestamp);
    for (size_t m = 0; m < d->metrics.n; m++)
      d->emit(d->user, index, m, values[m], t1, t0, 0);
  }
  if (dp.overflow)
    GP_CORE->activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE, 0, 0,
                                1);
  pm_reset_data(p);
}

static void pm_teardown(uint32_t index, dev_sampling *d) {
  pm_state *p = &d->pm;
  if (p->obj) {
    CUpti_PmSampling_Stop_Params st;
    memset(&st, 0, sizeof(st));
    st.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
    st.pPmSamplingObject = p->obj;
    cuptiPmSamplingStop(&st);
    if (p->data)
      pm_decode(index, d);
    CUpti_PmSampling_Disable_Params dp;
    memset(&dp, 0, sizeof(dp));
    dp.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE;
    dp.pPmSamplingObject = p->obj;
    cuptiPmSamplingDisable(&dp);
    p->obj = NULL;
  }
  gp__cuda_host_close(p->host);
  p->host = NULL;
  free(p->data);
  p->data = NULL;
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
    for (uint32_t i = 0; i < MAX_DEVS; i++)
      if (devs[i].on && devs[i].pm.obj)
        pm_decode(i, &devs[i]);
  }
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Starting and stopping a device                                       */

/* See cudaInt.h. */
int gp__cuda_sampling_start(uint32_t cupti_device,
                            const gp__cuda_sampling *cfg) {
  if (cupti_device >= MAX_DEVS || !cfg || !cfg->emit || cfg->num_metrics == 0 ||
      (!cfg->instrumented && cfg->period_ns == 0))
    return GP_EINVAL;
  names_list metrics;
  int rc = copy_list(cfg->metrics, cfg->num_metrics, &metrics);
  if (rc != 0)
    return rc;
  pthread_mutex_lock(&lock);
  dev_sampling *d = &devs[cupti_device];
  if (d->on) {
    pthread_mutex_unlock(&lock);
    free_list(&metrics);
    return GP_EBUSY;
  }
  d->metrics = metrics;
  d->instrumented = cfg->instrumented;
  d->period_ns = cfg->period_ns;
  d->want = cfg->want;
  d->emit = cfg->emit;
  d->user = cfg->user;
  if (cfg->period_ns > 0) {
    rc = pm_setup(cupti_device, d);
    if (rc != 0) {
      pm_teardown(cupti_device, d);
      free_list(&d->metrics);
      pthread_mutex_unlock(&lock);
      return rc;
    }
    if (!pm_running) {
      pm_stop = false;
      pm_running = gp__thread_start(&pm_thread, NULL, pm_main, NULL) == 0;
    }
  }
  d->gen++;
  d->on = true;
  if (d->instrumented)
    atomic_fetch_add(&instrumented_devs, 1);
  pthread_mutex_unlock(&lock);
  return 0;
}

/* See cudaInt.h. */
void gp__cuda_sampling_stop(uint32_t cupti_device) {
  if (cupti_device >= MAX_DEVS)
    return;
  pthread_mutex_lock(&lock);
  dev_sampling *d = &devs[cupti_device];
  if (!d->on) {
    pthread_mutex_unlock(&lock);
    return;
  }
  d->on = false;
  d->gen++;
  if (d->instrumented)
    atomic_fetch_sub(&instrumented_devs, 1);
  rp_ctx *list = contexts;
  pthread_mutex_unlock(&lock);
  /* Each context's pending ranges go out under the configuration they
   * were taken with; a launch in progress finishes first (its lock). */
  for (rp_ctx *c = list; c; c = c->next) {
    if (c->cupti_device != cupti_device)
      continue;
    pthread_mutex_lock(&c->lock);
    rp_decode(c);
    rp_teardown(c);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_lock(&lock);
  pm_teardown(cupti_device, d);
  free_list(&d->metrics);
  d->want = NULL;
  d->emit = NULL;
  d->user = NULL;
  pthread_mutex_unlock(&lock);
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
    for (uint32_t i = 0; i < MAX_DEVS; i++)
      if (devs[i].on && devs[i].pm.obj)
        pm_decode(i, &devs[i]);
    pthread_mutex_unlock(&lock);
  }
}

/* See cudaInt.h. */
void gp__cuda_profiler_stop(void) {
  for (uint32_t i = 0; i < MAX_DEVS; i++)
    gp__cuda_sampling_stop(i);
  pthread_mutex_lock(&lock);
  pm_stop = true;
  pthread_cond_signal(&pm_cond);
  bool join = pm_running;
  pm_running = false;
  pthread_mutex_unlock(&lock);
  if (join)
    pthread_join(pm_thread, NULL);
  gp__cuda_env_stop();
}
