/*
 * envconfig.c - counters asked for in the environment: every CUDA device,
 * as it appears, samples what these variables say, without the counters
 * API (which offers each metric under one rollup only, provider.c).
 *
 *   GPUPERF_CUDA_METRICS       full metric names, comma-separated, per
 *                              kernel (counter ids 1, 2, ...)
 *   GPUPERF_CUDA_KERNELS       globs on mangled or demangled kernel names
 *                              to measure (default all)
 *   GPUPERF_CUDA_PM_METRICS    full metric names for PM sampling (counter
 *                              ids 1001, 1002, ...), where no per-kernel
 *                              metrics took the device
 *   GPUPERF_CUDA_PM_PERIOD_NS  its period, 1000 to 1000000000 (1000000)
 *
 * Values become COUNTER records with those ids; a device so configured
 * holds its one sampling configuration (profiler.c) for good.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

#define MAX_NAMES 64
#define PM_FIRST_ID 1000u

typedef struct names_list {
  char *storage;
  const char *v[MAX_NAMES];
  size_t n;
} names_list;

static names_list env_range, env_pm, env_kernels;
static uint64_t env_period_ns = 1000000;

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
    if (out->n == MAX_NAMES)
      return GP_ECAPACITY;
    out->v[out->n++] = t;
  }
  return 0;
}

static void free_list(names_list *l) {
  free(l->storage);
  memset(l, 0, sizeof(*l));
}

static bool env_want(void *user, const char *mangled, const char *demangled) {
  (void)user;
  if (env_kernels.n == 0)
    return true;
  for (size_t i = 0; i < env_kernels.n; i++)
    if (GP_CORE->glob_match(env_kernels.v[i], mangled) ||
        (demangled && GP_CORE->glob_match(env_kernels.v[i], demangled)))
      return true;
  return false;
}

/* Writes a COUNTER record, and a kernel's value as a METRIC record too;
 * user tells the first counter id (1 or 1001). */
static void env_emit(void *user, uint32_t cupti_device, size_t metric,
                     double value, uint64_t timestamp, uint64_t window_start,
                     uint64_t corr) {
  bool as_metric = corr && metric < env_range.n &&
                   GP_CORE->activity_enabled(GP_ACTIVITY_KIND_METRIC, 0);
  bool as_counter = GP_CORE->activity_enabled(GP_ACTIVITY_KIND_COUNTER, 0);
  if (!as_metric && !as_counter)
    return;
  uint32_t device = gp__cuda_device(cupti_device);
  if (as_metric) {
    gp_counter_info ci = {.id = (uint32_t)(uintptr_t)user + (uint32_t)metric,
                          .name = env_range.v[metric],
                          .type = GP_COUNTER_TYPE_DOUBLE};
    gp__cuda_metric_record(device, &ci, value, window_start, timestamp, corr);
  }
  if (!as_counter)
    return;
  gp_activity_counter *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_COUNTER, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = timestamp;
  r->correlation_id = corr;
  r->window_start = window_start;
  r->device_id = device;
  r->counter_id = (uint32_t)(uintptr_t)user + (uint32_t)metric;
  r->value_type = GP_VALUE_DOUBLE;
  r->perfmon_id = 0;
  r->value.f64 = value;
  GP_CORE->activity_commit(r);
}

/* See cudaInt.h. */
int gp__cuda_profiler_start(void) {
  int rc = parse_list(getenv("GPUPERF_CUDA_METRICS"), &env_range);
  if (rc == 0)
    rc = parse_list(getenv("GPUPERF_CUDA_KERNELS"), &env_kernels);
  if (rc == 0)
    rc = parse_list(getenv("GPUPERF_CUDA_PM_METRICS"), &env_pm);
  const char *period = getenv("GPUPERF_CUDA_PM_PERIOD_NS");
  if (rc == 0 && period && *period) {
    char *end;
    unsigned long long v = strtoull(period, &end, 10);
    if (*end || v < 1000 || v > 1000000000ull)
      rc = GP_EINVAL;
    else
      env_period_ns = v;
  }
  if (rc != 0) {
    free_list(&env_range);
    free_list(&env_kernels);
    free_list(&env_pm);
    return gp__cuda_refuse(
        "GPUPERF_CUDA_METRICS, GPUPERF_CUDA_KERNELS and "
        "GPUPERF_CUDA_PM_METRICS take up to 64 comma-separated names; "
        "GPUPERF_CUDA_PM_PERIOD_NS 1000 to 1000000000");
  }
  return 0;
}

/* See cudaInt.h. */
void gp__cuda_profiler_device(uint32_t cupti_device) {
  if (env_range.n > 0) {
    gp__cuda_sampling c = {.metrics = env_range.v,
                           .num_metrics = env_range.n,
                           .instrumented = true,
                           .want = env_want,
                           .emit = env_emit,
                           .user = (void *)(uintptr_t)1};
    gp__cuda_sampling_start(cupti_device, &c);
  }
  if (env_pm.n > 0) {
    /* A device samples one configuration: PM sampling goes on the device
     * only when no per-kernel metrics took it. */
    gp__cuda_sampling c = {.metrics = env_pm.v,
                           .num_metrics = env_pm.n,
                           .period_ns = env_period_ns,
                           .emit = env_emit,
                           .user = (void *)(uintptr_t)(PM_FIRST_ID + 1)};
    int rc = gp__cuda_sampling_start(cupti_device, &c);
    if (rc != 0 && rc != GP_EBUSY)
      fprintf(stderr, "gpuperf-cuda: PM sampling on device %u: %s\n",
              cupti_device, gp__cuda_status());
  }
}

/* See cudaInt.h. */
void gp__cuda_env_stop(void) {
  free_list(&env_range);
  free_list(&env_kernels);
  free_list(&env_pm);
}
