/*
 * pstats.c - the counters of a Vulkan device: pipeline statistics per
 * render stage and the derived `Utilization` per window, in one catalog.
 *
 * A Vulkan device whose driver offers pipelineStatisticsQuery publishes a
 * catalog of seven counters (the statistics lavapipe and most drivers
 * count) through the counters' backend table. They can only be measured
 * per render stage: each render pass and dispatch the sampler lets
 * through is bracketed by a pipeline-statistics query of the layer's own,
 * and its values become COUNTER records of that stage (correlation id of
 * its submission, window = the stage's GPU times), written when the stage
 * is read back. With instrumented sampling the filter pipeline decides
 * which stages (name globs over the debug label, or "Render pass" /
 * "Compute"; TX ranges; skip/count); a periodic config that selects them
 * (`gpuperf record -e ia_vertices`) measures every stage.
 *
 * The catalog's eighth counter is `Utilization`, periodic: the busy share
 * of each sampling window, derived from the command buffers' GPU times by
 * libgpuperf's derived counters (counters/derived.h, attached to this
 * catalog), as every device without hardware counters gets it. It is
 * sampled at the config's period, or at the default period when the
 * config asked for instrumented sampling only. A device without
 * pipelineStatisticsQuery gets derived.c's own catalog instead.
 *
 * So any mix of the eight is recorded in one session: each counter is
 * sampled the one way it can be (gp__counter_def.sampled says which, for
 * the session and the writer).
 *
 * The layer enables the feature at vkCreateDevice when the program did
 * not. A query of the program's own of the same type cannot be active at
 * the same time (Vulkan forbids it): a stage begun inside one is not
 * measured, and one begun inside a stage of ours ends ours first.
 */
#include <stdlib.h>
#include <string.h>

#include "counters/derived.h"
#include "vkInt.h"

#define NSTATS 7
#define UTIL NSTATS /* catalog index of Utilization */
#define NDEFS (NSTATS + 1)

/* Results come in bit order of these flags. */
static const VkQueryPipelineStatisticFlags stat_flags =
    VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_VERTICES_BIT |
    VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_PRIMITIVES_BIT |
    VK_QUERY_PIPELINE_STATISTIC_VERTEX_SHADER_INVOCATIONS_BIT |
    VK_QUERY_PIPELINE_STATISTIC_CLIPPING_INVOCATIONS_BIT |
    VK_QUERY_PIPELINE_STATISTIC_CLIPPING_PRIMITIVES_BIT |
    VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT |
    VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;

#define DEF(i, n, d, u, g)                                                     \
  {                                                                            \
    .info = {.id = i,                                                          \
             .name = n,                                                        \
             .description = d,                                                 \
             .category = "pipeline statistics",                                \
             .type = GP_COUNTER_TYPE_INT64,                                    \
             .num_numerator_units = 1,                                         \
             .numerator_units = {u},                                           \
             .num_groups = 1,                                                  \
             .groups = {g}},                                                   \
    .combine = GP__SUM, .sampled = GP__SAMPLED_INSTRUMENTED                    \
  }

static const gp__counter_def defs[NDEFS] = {
    DEF(1, "ia_vertices", "vertices the input assembler read", GP_UNIT_VERTEX,
        GP_COUNTER_GROUP_VERTICES),
    DEF(2, "ia_primitives", "primitives the input assembler assembled",
        GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES),
    DEF(3, "vs_invocations", "vertex shader invocations", GP_UNIT_VERTEX,
        GP_COUNTER_GROUP_VERTICES),
    DEF(4, "clipping_invocations", "primitives that reached clipping",
        GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES),
    DEF(5, "clipping_primitives", "primitives clipping let through",
        GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES),
    DEF(6, "fs_invocations", "fragment shader invocations", GP_UNIT_FRAGMENT,
        GP_COUNTER_GROUP_FRAGMENTS),
    DEF(7, "cs_invocations", "compute shader invocations", GP_UNIT_NONE,
        GP_COUNTER_GROUP_COMPUTE),
    GP__DERIVED_UTILIZATION_DEF(8, 1, "command buffers"),
};

static const gp_counter_block_info blocks[] = {
    {.id = 0,
     .capacity = NSTATS,
     .num_counters = NSTATS,
     .name = "pipeline statistics",
     .description = "one pipeline-statistics query per measured stage"},
    {.id = 1,
     .capacity = 1,
     .num_counters = 1,
     .name = "derived",
     .description = "Counters derived from the activity timeline, not read "
                    "from hardware"}};

static const gp_counter_group_info groups[] = {
    {.id = GP_COUNTER_GROUP_VERTICES, .name = "VERTICES"},
    {.id = GP_COUNTER_GROUP_PRIMITIVES, .name = "PRIMITIVES"},
    {.id = GP_COUNTER_GROUP_FRAGMENTS, .name = "FRAGMENTS"},
    {.id = GP_COUNTER_GROUP_COMPUTE, .name = "COMPUTE"},
    {.id = GP_COUNTER_GROUP_SYSTEM, .name = "SYSTEM"},
};

/* The statistics are instrumented (a periodic sampler leaves them out);
 * Utilization is periodic, at the derived counters' periods. */
static const gp__catalog catalog = {.counters = defs,
                                    .num_counters = NDEFS,
                                    .num_blocks = 2,
                                    .blocks = blocks,
                                    .groups = groups,
                                    .num_groups = 5,
                                    .max_active = NDEFS,
                                    .min_period_ns = GP__DERIVED_MIN_PERIOD_NS,
                                    .max_period_ns = GP__DERIVED_MAX_PERIOD_NS,
                                    .supports_instrumented = 1,
                                    .has_scheduler = 0};

/* The derived counters' period when the config gives none (instrumented
 * sampling only): GP_DEFAULT_COUNTER_PERIOD_NS of session.h. */
#define UTIL_PERIOD_NS 1000000ull

/* The provider state of one core device. */
typedef struct prov {
  uint32_t device_id;
  pthread_mutex_t lock;
  gp__sampler *started; /* the sampler the counters layer started (lock) */
  gp__sampler *s;       /* statistics per stage, or NULL (lock) */
  bool every_stage;     /* s has no filter: every stage is measured */
  gp__sampler *derived; /* Utilization (derived.c's sampling), or NULL */
} prov;

static prov provs[64];
static const gp_counters_backend_ops *K;

/* A periodic sampler of Utilization alone, beside the instrumented one s:
 * derived.c samples windows of period_ns. NULL when out of memory. The
 * counters layer frees it with its last put (gp__sampler_put). */
static gp__sampler *util_sampler(const gp__sampler *s) {
  gp__sampler *x = calloc(1, sizeof(*x));
  uint32_t *ids = malloc(sizeof(*ids)), *index = malloc(sizeof(*index));
  if (!x || !ids || !index) {
    free(x);
    free(ids);
    free(index);
    return NULL;
  }
  atomic_init(&x->refs, 1);
  x->device_id = s->device_id;
  x->period_ns = s->period_ns ? s->period_ns : UTIL_PERIOD_NS;
  x->num_counters = 1;
  x->ids = ids;
  x->index = index;
  ids[0] = defs[UTIL].info.id;
  index[0] = UTIL;
  x->cat = s->cat;
  return x;
}

/* Starts what s selects, each counter its own way: the statistics per
 * stage, Utilization per window (derived.c). */
static int ps_start(void *p, gp__sampler *s) {
  prov *v = p;
  bool stats = false, util = false;
  for (uint32_t k = 0; k < s->num_counters; k++) {
    stats |= s->index[k] < NSTATS;
    util |= s->index[k] == UTIL;
  }
  pthread_mutex_lock(&v->lock);
  bool busy = v->started != NULL;
  pthread_mutex_unlock(&v->lock);
  if (busy)
    return GP_EBUSY; /* defensive: the counters layer allows one */
  gp__sampler *d = NULL;
  if (util) {
    d = s->period_ns && !s->instrumented ? K->sampler_get(s) : util_sampler(s);
    if (!d)
      return GP_ENOMEM;
    int rc = K->derived_sampling_start(v->device_id, d);
    if (rc != 0) {
      K->sampler_put(d);
      return rc;
    }
  }
  pthread_mutex_lock(&v->lock);
  v->started = s;
  v->derived = d;
  v->s = stats ? K->sampler_get(s) : NULL;
  v->every_stage = !s->instrumented || !s->filter;
  pthread_mutex_unlock(&v->lock);
  return 0;
}

static void ps_stop(void *p, gp__sampler *s) {
  prov *v = p;
  pthread_mutex_lock(&v->lock);
  if (v->started != s) {
    pthread_mutex_unlock(&v->lock);
    return;
  }
  gp__sampler *d = v->derived, *st = v->s;
  v->started = v->derived = v->s = NULL;
  pthread_mutex_unlock(&v->lock);
  if (d) {
    K->derived_sampling_stop(v->device_id, d);
    K->sampler_put(d);
  }
  K->sampler_put(st);
}

static const gp__provider_ops ops = {.sampling_start = ps_start,
                                     .sampling_stop = ps_stop};

/* See vkInt.h. */
void gp__vk_pstats_publish(gp__vk_device *dev, bool supported) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, gp__vk_counters_load);
  K = gp__vk_counters;
  if (!K || dev->device_id >= 64)
    return;
  if (!supported) { /* Utilization alone, in derived.c's catalog */
    K->derived_register(dev->device_id);
    return;
  }
  prov *v = &provs[dev->device_id];
  v->device_id = dev->device_id;
  pthread_mutex_init(&v->lock, NULL);
  if (K->derived_attach(dev->device_id, &catalog, UTIL) == 0 &&
      K->counters_register(dev->device_id, &catalog, &ops, v) == 0)
    K->counters_announce(dev->device_id);
}

/* The statistics sampler of dev's device with a reference, or NULL;
 * *every: it measures every stage (no filter). */
static gp__sampler *sampler(const gp__vk_device *dev, bool *every) {
  if (!K || dev->device_id >= 64 || !dev->pstats)
    return NULL;
  prov *v = &provs[dev->device_id];
  pthread_mutex_lock(&v->lock);
  gp__sampler *s = v->s ? K->sampler_get(v->s) : NULL;
  *every = v->every_stage;
  pthread_mutex_unlock(&v->lock);
  return s;
}

/* See vkInt.h. */
bool gp__vk_pstats_want(gp__vk_device *dev, uint32_t name_id, uint32_t stage) {
  bool every = false;
  gp__sampler *s = sampler(dev, &every);
  if (!s)
    return false;
  const char *name = name_id ? gp_activity_string(name_id)
                     : stage == GP_RENDER_STAGE_COMPUTE ? "Compute"
                                                        : "Render pass";
  bool want = every || K->sampler_instrument(s, name, NULL);
  K->sampler_put(s);
  return want;
}

/* Words per query in a command buffer's statistics results buffer: the
 * values, then the availability word. */
#define SWORDS (NSTATS + 1)

/* See vkInt.h. */
void gp__vk_pstats_lost(gp__vk_device *dev, uint32_t why) {
  const char *msg =
      why == GP_VK_PSTATS_LOST_APP_QUERY
          ? "gpuperf: a render stage inside the program's own "
            "pipeline-statistics query is not measured (two such queries "
            "cannot be active at once): its per-stage statistics are lost"
      : why == GP_VK_PSTATS_LOST_ENDED
          ? "gpuperf: a render stage's pipeline statistics ended early (the "
            "program began its own query, or executed secondary command "
            "buffers, inside it): its per-stage statistics are lost"
      : why == GP_VK_PSTATS_LOST_NO_POOL
          ? "gpuperf: no pipeline-statistics query pool could be made: "
            "per-stage statistics are lost"
          : "gpuperf: a render stage's pipeline statistics were never "
            "available: its per-stage statistics are lost";
  gp__vk_warn_once(dev, &dev->pstats_warned, why, msg);
}

/* See vkInt.h. */
bool gp__vk_pstats_pool(gp__vk_device *dev, gp__vk_cmdbuf *c, uint32_t n) {
  if (c->spool && c->scap >= n)
    return true;
  gp__vk_pstats_fini(dev, c);
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
                              .queryCount = n,
                              .pipelineStatistics = stat_flags};
  if (dev->CreateQueryPool(dev->handle, &qi, NULL, &c->spool) != VK_SUCCESS) {
    c->spool = VK_NULL_HANDLE;
    gp__vk_pstats_lost(dev, GP_VK_PSTATS_LOST_NO_POOL);
    return false;
  }
  c->scap = n;
  /* Where the device copies them: read without calling the driver (whose
   * vkGetQueryPoolResults may wait for the device to be idle). */
  if (gp__vk_family_copies(dev, c->family))
    c->sresults = gp__vk_host_buffer(
        dev, (VkDeviceSize)n * SWORDS * sizeof(uint64_t), &c->sbuf, &c->smem);
  if (c->sresults)
    memset(c->sresults, 0, (size_t)n * SWORDS * sizeof(uint64_t));
  return true;
}

/* See vkInt.h. */
void gp__vk_pstats_copy(gp__vk_device *dev, VkCommandBuffer cb,
                        gp__vk_cmdbuf *c) {
  if (!c->sresults)
    return;
  bool any = false;
  for (uint32_t i = 0; i < c->nregions; i++) {
    uint32_t q = c->regions[i].stat_q;
    if (!q || c->regions[i].stat_lost)
      continue;
    /* The device waits for the query on its own timeline, not the host. */
    dev->CmdCopyQueryPoolResults(cb, c->spool, q - 1, 1, c->sbuf,
                                 (VkDeviceSize)(q - 1) * SWORDS * 8, SWORDS * 8,
                                 VK_QUERY_RESULT_64_BIT |
                                     VK_QUERY_RESULT_WAIT_BIT |
                                     VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    any = true;
  }
  /* Made visible to the host by the timestamps' barrier, or this one. */
  if (any && !c->results && !dev->ts_in_order && dev->CmdPipelineBarrier) {
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                          VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_HOST_READ_BIT};
    dev->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                            NULL);
  }
}

/* See vkInt.h. */
void gp__vk_pstats_clear(gp__vk_cmdbuf *c) {
  if (c->sresults)
    for (uint32_t i = 0; i < c->nregions && i < c->scap; i++)
      c->sresults[(size_t)i * SWORDS + NSTATS] = 0;
}

/* One measured region's statistics into v: from the results buffer, or
 * (where there is none) from the driver without waiting. False if they
 * are not there. */
static bool region_stats(gp__vk_device *dev, const gp__vk_cmdbuf *c, uint32_t q,
                         uint64_t *v) {
  if (c->sresults) {
    const uint64_t *w = &c->sresults[(size_t)q * SWORDS];
    if (!__atomic_load_n(&w[NSTATS], __ATOMIC_ACQUIRE))
      return false;
    memcpy(v, w, NSTATS * sizeof(uint64_t));
    return true;
  }
  uint64_t buf[SWORDS];
  if (dev->GetQueryPoolResults(
          dev->handle, c->spool, q, 1, sizeof(buf), buf, sizeof(buf),
          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT) !=
          VK_SUCCESS ||
      !buf[NSTATS])
    return false;
  memcpy(v, buf, NSTATS * sizeof(uint64_t));
  return true;
}

/* See vkInt.h. */
void gp__vk_pstats_emit(gp__vk_device *dev, const gp__vk_cmdbuf *c,
                        uint64_t corr, const uint64_t *start,
                        const uint64_t *end) {
  bool any = false;
  for (uint32_t i = 0; i < c->nregions && !any; i++)
    any = c->regions[i].stat_q != 0;
  bool every = false;
  gp__sampler *s = any ? sampler(dev, &every) : NULL;
  if (!s)
    return;
  for (uint32_t i = 0; i < c->nregions; i++) {
    uint32_t q = c->regions[i].stat_q;
    if (!q)
      continue;
    uint64_t v[NSTATS];
    if (c->regions[i].stat_lost) {
      gp__vk_pstats_lost(dev, GP_VK_PSTATS_LOST_ENDED);
      continue;
    }
    if (!region_stats(dev, c, q - 1, v)) {
      gp__vk_pstats_lost(dev, GP_VK_PSTATS_LOST_UNAVAILABLE);
      continue;
    }
    for (uint32_t k = 0; k < s->num_counters; k++) {
      uint32_t idx = s->index[k];
      if (idx < NSTATS)
        K->counter_emit(&catalog, dev->device_id, idx, (double)v[idx], 0.0,
                        end[i], start[i], corr, 0, dev->context_id);
    }
  }
  K->sampler_put(s);
}

/* See vkInt.h. */
void gp__vk_pstats_fini(gp__vk_device *dev, gp__vk_cmdbuf *c) {
  if (c->spool)
    dev->DestroyQueryPool(dev->handle, c->spool, NULL);
  c->spool = VK_NULL_HANDLE;
  c->scap = 0;
  gp__vk_host_buffer_free(dev, &c->sbuf, &c->smem);
  c->sresults = NULL;
}
