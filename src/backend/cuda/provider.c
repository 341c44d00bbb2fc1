/*
 * provider.c - CUDA devices in the counters API: each device publishes
 * its chip's metrics as a counter catalog, and sampling started through
 * gp_counters_start() runs on the range profiler (per kernel, decided by
 * the counters' filter pipeline) and PM sampling (periodic), profiler.c.
 *
 * The catalog is the Profiler Host API's list of base metrics for the
 * device's chip, each published under one full name with its usual
 * rollup: counters as NAME.sum (an integer count), ratios as NAME.ratio,
 * throughputs as NAME.avg.pct_of_peak_sustained_elapsed (a percent). Ids
 * are 1.. in name order. Any other rollup of a metric can still be had
 * through GPUPERF_CUDA_METRICS (profiler.c). CUPTI replays kernels for as
 * many passes as a set needs, so the catalog has one block of
 * GP_PERFMON_MAX_COUNTERS counters; perfmons (jobs carrying counters) are
 * not offered: the CUDA driver runs the jobs, not us.
 *
 * Values arrive finished from CUPTI (doubles); they are written as they
 * are, rounded for integer counters.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/countersInt.h"
#include "cudaInt.h"

typedef struct cuda_catalog {
  gp__catalog cat;
  gp__counter_def *defs;
  gp_counter_block_info block;
  gp_counter_group_info groups[3];
  gp_cuda_metrics *metrics; /* kept open: descriptions point into it */
  uint32_t cupti_device;
} cuda_catalog;

static const char *rollup(uint32_t type) {
  switch (type) {
  case GP_CUDA_METRIC_RATIO:
    return ".ratio";
  case GP_CUDA_METRIC_THROUGHPUT:
    return ".avg.pct_of_peak_sustained_elapsed";
  default:
    return ".sum";
  }
}

/* Perfetto units from CUPTI's dimension units. */
static uint32_t unit(const char *dim) {
  static const struct {
    const char *dim;
    uint32_t unit;
  } map[] = {{"byte", GP_UNIT_BYTE},
             {"bytes", GP_UNIT_BYTE},
             {"nanosecond", GP_UNIT_NANOSECOND},
             {"microsecond", GP_UNIT_MICROSECOND},
             {"millisecond", GP_UNIT_MILLISECOND},
             {"second", GP_UNIT_SECOND},
             {"instruction", GP_UNIT_INSTRUCTION},
             {"hz", GP_UNIT_HERTZ},
             {"mhz", GP_UNIT_MEGAHERTZ},
             {"watt", GP_UNIT_WATT},
             {"mwatt", GP_UNIT_MILLIWATT},
             {"percent", GP_UNIT_PERCENT}};
  for (size_t i = 0; i < GP_ARRAY_SIZE(map); i++)
    if (strcmp(dim, map[i].dim) == 0)
      return map[i].unit;
  return GP_UNIT_NONE;
}

/* Perfetto's fixed groups from CUPTI's hardware units. */
static uint32_t group(const char *hw) {
  static const char *const memory[] = {"dram",  "fbpa",  "fbp", "lts",
                                       "ltc",   "l1tex", "lrc", "pcie",
                                       "nvlrx", "nvltx", "sys"};
  static const char *const compute[] = {"sm",  "smsp",   "tpc",   "gpc",
                                        "idc", "launch", "tensor"};
  for (size_t i = 0; i < GP_ARRAY_SIZE(memory); i++)
    if (strcmp(hw, memory[i]) == 0)
      return GP_COUNTER_GROUP_MEMORY;
  for (size_t i = 0; i < GP_ARRAY_SIZE(compute); i++)
    if (strncmp(hw, compute[i], strlen(compute[i])) == 0)
      return GP_COUNTER_GROUP_COMPUTE;
  return GP_COUNTER_GROUP_SYSTEM;
}

static void free_catalog(cuda_catalog *c) {
  if (!c)
    return;
  for (uint32_t i = 0; c->defs && i < c->cat.num_counters; i++)
    free((void *)c->defs[i].info.name);
  free(c->defs);
  gp_cuda_metrics_close(c->metrics);
  free(c);
}

/* Builds the catalog of chip for a device. */
static int build_catalog(const char *chip, uint32_t cupti_device,
                         cuda_catalog **out) {
  cuda_catalog *c = calloc(1, sizeof(*c));
  if (!c)
    return GP_ENOMEM;
  int rc = gp_cuda_metrics_open(chip, GP_CUDA_PROFILER_RANGE, &c->metrics);
  if (rc != 0) {
    free(c);
    return rc;
  }
  c->cupti_device = cupti_device;
  size_t n = gp_cuda_metrics_count(c->metrics);
  c->defs = calloc(n ? n : 1, sizeof(*c->defs));
  if (!c->defs) {
    free_catalog(c);
    return GP_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    gp_cuda_metric_info mi;
    if ((rc = gp_cuda_metrics_get(c->metrics, i, &mi)) != 0)
      goto fail;
    const char *suffix = rollup(mi.type);
    char *name = malloc(strlen(mi.name) + strlen(suffix) + 1);
    if (!name) {
      rc = GP_ENOMEM;
      goto fail;
    }
    strcpy(name, mi.name);
    strcat(name, suffix);
    gp_counter_info *info = &c->defs[i].info;
    info->id = (uint32_t)i + 1;
    info->name = name;
    info->description = mi.description;
    info->category = mi.hw_unit;
    info->block_id = 0;
    switch (mi.type) {
    case GP_CUDA_METRIC_RATIO:
      info->type = GP_COUNTER_TYPE_DOUBLE;
      break;
    case GP_CUDA_METRIC_THROUGHPUT:
      info->type = GP_COUNTER_TYPE_PERCENT;
      info->num_numerator_units = 1;
      info->numerator_units[0] = GP_UNIT_PERCENT;
      info->peak_value = 100.0;
      break;
    default:
      info->type = GP_COUNTER_TYPE_INT64;
      info->num_numerator_units = unit(mi.dim_unit) != GP_UNIT_NONE;
      info->numerator_units[0] = unit(mi.dim_unit);
      break;
    }
    info->num_groups = 1;
    info->groups[0] = group(mi.hw_unit);
    c->defs[i].combine = GP__SUM; /* CUPTI's values are finished */
    c->cat.num_counters = (uint32_t)i + 1;
  }
  c->block = (gp_counter_block_info){
      .id = 0,
      .capacity = GP_PERFMON_MAX_COUNTERS,
      .name = "metrics",
      .description = "metrics the range profiler or PM sampling collects "
                     "(CUPTI replays kernels for as many passes as needed)"};
  c->groups[0] =
      (gp_counter_group_info){.id = GP_COUNTER_GROUP_COMPUTE,
                              .name = "COMPUTE",
                              .description = "SM, SMSP, TPC and GPC units"};
  c->groups[1] = (gp_counter_group_info){
      .id = GP_COUNTER_GROUP_MEMORY,
      .name = "MEMORY",
      .description = "DRAM, L2 (LTS), L1TEX, PCIe and NVLink"};
  c->groups[2] = (gp_counter_group_info){.id = GP_COUNTER_GROUP_SYSTEM,
                                         .name = "SYSTEM",
                                         .description = "the rest of the GPU"};
  c->cat.counters = c->defs;
  c->cat.num_blocks = 1;
  c->cat.blocks = &c->block;
  c->cat.groups = c->groups;
  c->cat.num_groups = 3;
  c->cat.max_active = GP_PERFMON_MAX_COUNTERS;
  c->cat.min_period_ns = 10000;       /* PM sampling: 10 us */
  c->cat.max_period_ns = 1000000000u; /* 1 s */
  c->cat.supports_instrumented = 1;
  c->cat.has_scheduler = 0;
  *out = c;
  return 0;
fail:
  free_catalog(c);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Sampling                                                             */

typedef struct cuda_sampler {
  gp__sampler *s;
  const cuda_catalog *c;
  uint32_t device_id;
} cuda_sampler;

static bool sampler_want(void *user, const char *mangled,
                         const char *demangled) {
  cuda_sampler *cs = user;
  return GP_COUNTERS->sampler_instrument(cs->s, mangled, demangled);
}

static void sampler_emit(void *user, uint32_t cupti_device, size_t metric,
                         double value, uint64_t timestamp,
                         uint64_t window_start, uint64_t corr) {
  cuda_sampler *cs = user;
  (void)cupti_device;
  if (metric >= cs->s->num_counters)
    return;
  GP_COUNTERS->counter_emit(&cs->c->cat, cs->device_id, cs->s->index[metric],
                            value, 0.0, timestamp, window_start, corr, 0, 0);
  if (corr) /* a kernel's: also a METRIC (translate_events.c) */
    gp__cuda_metric_record(cs->device_id,
                           &cs->c->defs[cs->s->index[metric]].info, value,
                           window_start, timestamp, corr);
}

static int cp_sampling_start(void *prov, gp__sampler *s) {
  cuda_catalog *c = prov;
  if (s->num_counters == 0 || s->num_counters > GP_PERFMON_MAX_COUNTERS)
    return GP_EINVAL;
  cuda_sampler *cs = calloc(1, sizeof(*cs));
  if (!cs)
    return GP_ENOMEM;
  const char *names[GP_PERFMON_MAX_COUNTERS];
  for (uint32_t i = 0; i < s->num_counters; i++)
    names[i] = c->defs[s->index[i]].info.name;
  cs->s = GP_COUNTERS->sampler_get(s);
  cs->c = c;
  cs->device_id = s->device_id;
  gp__cuda_sampling cfg = {.metrics = names,
                           .num_metrics = s->num_counters,
                           .instrumented = s->instrumented != 0,
                           .period_ns = s->period_ns,
                           .want = s->instrumented ? sampler_want : NULL,
                           .emit = sampler_emit,
                           .user = cs};
  int rc = gp__cuda_sampling_start(c->cupti_device, &cfg);
  if (rc != 0) {
    GP_COUNTERS->sampler_put(cs->s);
    free(cs);
    return rc;
  }
  s->prov_data = cs;
  return 0;
}

static void cp_sampling_stop(void *prov, gp__sampler *s) {
  cuda_catalog *c = prov;
  cuda_sampler *cs = s->prov_data;
  if (!cs)
    return;
  gp__cuda_sampling_stop(c->cupti_device); /* pending values go out first */
  s->prov_data = NULL;
  GP_COUNTERS->sampler_put(cs->s);
  free(cs);
}

static const gp__provider_ops cuda_provider = {
    .sampling_start = cp_sampling_start,
    .sampling_stop = cp_sampling_stop,
};

/* See cudaInt.h. */
int gp__cuda_provider_publish(uint32_t device_id, uint32_t cupti_device,
                              const char *chip) {
  if (!chip)
    return GP_EINVAL;
  cuda_catalog *c = NULL;
  int rc = build_catalog(chip, cupti_device, &c);
  if (rc != 0)
    return rc;
  rc = GP_COUNTERS->counters_register(device_id, &c->cat, &cuda_provider, c);
  if (rc != 0) {
    free_catalog(c);
    return rc;
  }
  /* Published for good: sessions that sample every device start on it. */
  GP_COUNTERS->counters_announce(device_id);
  return 0;
}
