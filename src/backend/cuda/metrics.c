/*
 * metrics.c - what NVIDIA GPUs can count, from CUPTI's Profiler Host API.
 *
 * The host API knows every supported chip's metrics without a GPU or a
 * driver: given a chip name ("GH100") it lists base metrics (counters,
 * ratios, throughputs), their descriptions and units, the rollup
 * suffixes each accepts, and it builds the configuration image a set of
 * full metric names ("gpu__time_duration.sum") needs, telling how many
 * replay passes that takes. The same image then configures the range
 * profiler or PM sampling on a real device (profiler.c).
 *
 * A catalog loads the names of all base metrics when opened (a few
 * thousand) and their properties lazily, as they are asked for.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_profiler_host.h>

#include "cudaInt.h"

typedef struct metric {
  const char *name; /* owned by the host object */
  uint32_t type;
  bool have_props;
  gp_cuda_metric_info info;
} metric;

struct gp_cuda_metrics {
  CUpti_Profiler_Host_Object *host;
  uint32_t profiler;
  char chip[64];
  metric *v;
  size_t n;
  pthread_mutex_t lock; /* lazy properties */
};

/* libcupti loads libnvperf_host.so with RTLD_DEEPBIND, which
 * AddressSanitizer answers by killing the process: in such a build the
 * host API is refused instead. */
#if defined(__SANITIZE_ADDRESS__)
#define GP_CUDA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GP_CUDA_ASAN 1
#endif
#endif

/* See cudaInt.h. */
int gp__cuda_sanitizer_refuses(void) {
#ifdef GP_CUDA_ASAN
  return gp__cuda_refuse(
      "the Profiler Host API is not available in an AddressSanitizer build: "
      "libcupti loads libnvperf_host.so with RTLD_DEEPBIND, which the "
      "sanitizer does not allow");
#else
  return 0;
#endif
}

static int host_init(const char *chip, uint32_t profiler,
                     const uint8_t *availability,
                     CUpti_Profiler_Host_Object **host) {
  int rc = gp__cuda_sanitizer_refuses();
  if (rc != 0)
    return rc;
  CUpti_Profiler_Host_Initialize_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  p.profilerType = profiler == GP_CUDA_PROFILER_PM_SAMPLING
                       ? CUPTI_PROFILER_TYPE_PM_SAMPLING
                       : CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip;
  p.pCounterAvailabilityImage = availability;
  CUptiResult r = cuptiProfilerHostInitialize(&p);
  if (r == CUPTI_ERROR_INVALID_CHIP_NAME)
    return GP_ENODEV;
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiProfilerHostInitialize", r);
  *host = p.pHostObject;
  return 0;
}

static void host_fini(CUpti_Profiler_Host_Object *host) {
  if (!host)
    return;
  CUpti_Profiler_Host_Deinitialize_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

/* See cuda.h. */
int gp_cuda_chips(size_t *n, const char *const **names) {
  if (!n)
    return GP_EINVAL;
  int rc = gp__cuda_sanitizer_refuses();
  if (rc != 0)
    return rc;
  CUpti_Profiler_Host_GetSupportedChips_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
  CUptiResult r = cuptiProfilerHostGetSupportedChips(&p);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiProfilerHostGetSupportedChips", r);
  *n = p.numChips;
  if (names)
    *names = p.ppChipNames;
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const metric *)a)->name, ((const metric *)b)->name);
}

/* See cuda.h. */
int gp_cuda_metrics_open(const char *chip, uint32_t profiler,
                         gp_cuda_metrics **out) {
  if (!chip || !out || profiler > GP_CUDA_PROFILER_PM_SAMPLING)
    return GP_EINVAL;
  if (strlen(chip) >= sizeof(((gp_cuda_metrics *)0)->chip))
    return GP_ENODEV;
  gp_cuda_metrics *m = calloc(1, sizeof(*m));
  if (!m)
    return GP_ENOMEM;
  int rc = host_init(chip, profiler, NULL, &m->host);
  if (rc != 0)
    goto free_m;
  m->profiler = profiler;
  strcpy(m->chip, chip);
  pthread_mutex_init(&m->lock, NULL);
  for (uint32_t t = 0; t < CUPTI_METRIC_TYPE__COUNT; t++) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p;
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
    p.pHostObject = m->host;
    p.metricType = (CUpti_MetricType)t;
    CUptiResult r = cuptiProfilerHostGetBaseMetrics(&p);
    if (r != CUPTI_SUCCESS) {
      rc = gp__cuda_cupti_error("cuptiProfilerHostGetBaseMetrics", r);
      goto fini;
    }
    if (p.numMetrics == 0)
      continue;
    metric *nv = realloc(m->v, (m->n + p.numMetrics) * sizeof(*nv));
    if (!nv) {
      rc = GP_ENOMEM;
      goto fini;
    }
    m->v = nv;
    for (size_t i = 0; i < p.numMetrics; i++) {
      memset(&m->v[m->n], 0, sizeof(m->v[m->n]));
      m->v[m->n].name = p.ppMetricNames[i];
      m->v[m->n].type = t;
      m->n++;
    }
  }
  qsort(m->v, m->n, sizeof(*m->v), by_name);
  *out = m;
  return 0;

fini:
  pthread_mutex_destroy(&m->lock);
  host_fini(m->host);
  free(m->v);
free_m:
  free(m);
  return rc;
}

/* See cuda.h. */
void gp_cuda_metrics_close(gp_cuda_metrics *m) {
  if (!m)
    return;
  host_fini(m->host);
  pthread_mutex_destroy(&m->lock);
  free(m->v);
  free(m);
}

/* See cuda.h. */
size_t gp_cuda_metrics_count(const gp_cuda_metrics *m) {
  return m ? m->n : 0;
}

static void load_props(gp_cuda_metrics *m, metric *e) {
  pthread_mutex_lock(&m->lock);
  if (!e->have_props) {
    CUpti_Profiler_Host_GetMetricProperties_Params p;
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    p.pHostObject = m->host;
    p.pMetricName = e->name;
    bool ok = cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
    e->info.name = e->name;
    e->info.description = ok && p.pDescription ? p.pDescription : "";
    e->info.hw_unit = ok && p.pHwUnit ? p.pHwUnit : "";
    e->info.dim_unit = ok && p.pDimUnit ? p.pDimUnit : "";
    e->info.type = e->type;
    e->have_props = true;
  }
  pthread_mutex_unlock(&m->lock);
}

/* See cuda.h. */
int gp_cuda_metrics_get(gp_cuda_metrics *m, size_t index,
                        gp_cuda_metric_info *info) {
  if (!m || !info)
    return GP_EINVAL;
  if (index >= m->n)
    return GP_ENOENT;
  load_props(m, &m->v[index]);
  *info = m->v[index].info;
  return 0;
}

/* Finds the base metric of name: the whole name, else the part before
 * each '.' from the right. */
static metric *find(gp_cuda_metrics *m, const char *name) {
  char buf[512];
  size_t len = strlen(name);
  if (len >= sizeof(buf))
    return NULL;
  memcpy(buf, name, len + 1);
  for (;;) {
    metric key = {.name = buf};
    metric *e = bsearch(&key, m->v, m->n, sizeof(*m->v), by_name);
    if (e)
      return e;
    char *dot = strrchr(buf, '.');
    if (!dot)
      return NULL;
    *dot = '\0';
  }
}

/* See cuda.h. */
int gp_cuda_metrics_find(gp_cuda_metrics *m, const char *name,
                         gp_cuda_metric_info *info) {
  if (!m || !name || !info)
    return GP_EINVAL;
  metric *e = find(m, name);
  if (!e)
    return GP_ENOCOUNTER;
  load_props(m, e);
  *info = e->info;
  return 0;
}

/* See cuda.h. */
int gp_cuda_metrics_submetrics(gp_cuda_metrics *m, const char *name,
                               const char *const **subs, size_t *n) {
  if (!m || !name || !subs || !n)
    return GP_EINVAL;
  metric *e = find(m, name);
  if (!e || strcmp(e->name, name) != 0)
    return GP_ENOCOUNTER;
  CUpti_Profiler_Host_GetSubMetrics_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE;
  p.pHostObject = m->host;
  p.metricType = (CUpti_MetricType)e->type;
  p.pMetricName = e->name;
  CUptiResult r = cuptiProfilerHostGetSubMetrics(&p);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiProfilerHostGetSubMetrics", r);
  *subs = (const char *const *)p.ppSubMetrics;
  *n = p.numOfSubmetrics;
  return 0;
}

struct gp__cuda_host {
  CUpti_Profiler_Host_Object *host;
  const char **names; /* copies */
  size_t num_names;
  uint8_t *config;
  size_t config_size;
  size_t passes;
};

/* See cudaInt.h. */
void gp__cuda_host_close(gp__cuda_host *h) {
  if (!h)
    return;
  host_fini(h->host);
  for (size_t i = 0; i < h->num_names; i++)
    free((void *)h->names[i]);
  free(h->names);
  free(h->config);
  free(h);
}

/* Adds the metrics one at a time, so that a refusal names the culprit,
 * then builds the configuration image and counts its passes. */
static int host_configure(gp__cuda_host *h, uint32_t profiler, size_t *bad) {
  for (size_t i = 0; i < h->num_names; i++) {
    CUpti_Profiler_Host_ConfigAddMetrics_Params p;
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    p.pHostObject = h->host;
    p.ppMetricNames = &h->names[i];
    p.numMetrics = 1;
    if (cuptiProfilerHostConfigAddMetrics(&p) != CUPTI_SUCCESS) {
      if (bad)
        *bad = i;
      return GP_ENOCOUNTER;
    }
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params sp;
  memset(&sp, 0, sizeof(sp));
  sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  sp.pHostObject = h->host;
  CUptiResult r = cuptiProfilerHostGetConfigImageSize(&sp);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiProfilerHostGetConfigImageSize", r);
  h->config = malloc(sp.configImageSize ? sp.configImageSize : 1);
  if (!h->config)
    return GP_ENOMEM;
  h->config_size = sp.configImageSize;
  CUpti_Profiler_Host_GetConfigImage_Params ip;
  memset(&ip, 0, sizeof(ip));
  ip.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  ip.pHostObject = h->host;
  ip.configImageSize = h->config_size;
  ip.pConfigImage = h->config;
  r = cuptiProfilerHostGetConfigImage(&ip);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiProfilerHostGetConfigImage", r);
  h->passes = 1;
  if (profiler == GP_CUDA_PROFILER_RANGE) {
    /* PM sampling always takes one pass: it has no replay. */
    CUpti_Profiler_Host_GetNumOfPasses_Params np;
    memset(&np, 0, sizeof(np));
    np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    np.configImageSize = h->config_size;
    np.pConfigImage = h->config;
    r = cuptiProfilerHostGetNumOfPasses(&np);
    if (r != CUPTI_SUCCESS)
      return gp__cuda_cupti_error("cuptiProfilerHostGetNumOfPasses", r);
    h->passes = np.numOfPasses;
  }
  return 0;
}

/* See cudaInt.h. */
int gp__cuda_host_open(const char *chip, uint32_t profiler,
                       const uint8_t *availability, const char *const *names,
                       size_t num_names, gp__cuda_host **out, size_t *bad) {
  if (!chip || !names || num_names == 0 || !out ||
      profiler > GP_CUDA_PROFILER_PM_SAMPLING)
    return GP_EINVAL;
  for (size_t i = 0; i < num_names; i++) {
    if (!names[i] || !*names[i]) {
      if (bad)
        *bad = i;
      return GP_ENOCOUNTER;
    }
  }
  gp__cuda_host *h = calloc(1, sizeof(*h));
  if (!h)
    return GP_ENOMEM;
  int rc = GP_ENOMEM;
  h->names = calloc(num_names, sizeof(*h->names));
  if (!h->names)
    goto fail;
  for (size_t i = 0; i < num_names; i++) {
    h->names[i] = strdup(names[i]);
    if (!h->names[i])
      goto fail;
    h->num_names++;
  }
  rc = host_init(chip, profiler, availability, &h->host);
  if (rc != 0)
    goto fail;
  rc = host_configure(h, profiler, bad);
  if (rc != 0)
    goto fail;
  *out = h;
  return 0;
fail:
  gp__cuda_host_close(h);
  return rc;
}

/* See cudaInt.h. */
const uint8_t *gp__cuda_host_config(const gp__cuda_host *h, size_t *size,
                                    size_t *passes) {
  if (size)
    *size = h->config_size;
  if (passes)
    *passes = h->passes;
  return h->config;
}

/* See cudaInt.h. */
const char *const *gp__cuda_host_names(const gp__cuda_host *h, size_t *n) {
  *n = h->num_names;
  return h->names;
}

/* See cudaInt.h. */
int gp__cuda_host_evaluate(gp__cuda_host *h, const uint8_t *data, size_t size,
                           size_t index, double *values) {
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
  p.pHostObject = h->host;
  p.pCounterDataImage = data;
  p.counterDataImageSize = size;
  p.rangeIndex = index;
  p.ppMetricNames = h->names;
  p.numMetrics = h->num_names;
  p.pMetricValues = values;
  CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&p);
  return r == CUPTI_SUCCESS
             ? 0
             : gp__cuda_cupti_error("cuptiProfilerHostEvaluateToGpuValues", r);
}

/* See cuda.h. */
int gp_cuda_metrics_plan(gp_cuda_metrics *m, const char *const *names,
                         size_t num_names, size_t *passes, size_t *bad) {
  if (!m || !names || num_names == 0 || !passes)
    return GP_EINVAL;
  gp__cuda_host *h = NULL;
  int rc =
      gp__cuda_host_open(m->chip, m->profiler, NULL, names, num_names, &h, bad);
  if (rc != 0)
    return rc;
  gp__cuda_host_config(h, NULL, passes);
  gp__cuda_host_close(h);
  return 0;
}
