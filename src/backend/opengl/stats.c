/*
 * stats.c - the counters of a GL device, measured per frame.
 *
 * Each GL device (a renderer, context.c) publishes one catalog:
 *  - the pipeline statistics of GL_ARB_pipeline_statistics_query (or GL
 *    4.6), where the context has them, and `primitives-generated`
 *    (GL_PRIMITIVES_GENERATED: GL 3.0, ES 3.2; GALLIUM_HUD's name): one
 *    query each, begun at the frame's first work and ended at its swap;
 *  - `draws` and `triangles`: the frame's draw calls, and the triangles
 *    their arguments describe (display lists draw geometry we do not see:
 *    a glCallList counts as a draw of no known triangles; the statistics
 *    have their primitives);
 *  - the driver's counters where it has GL_AMD_performance_monitor
 *    (amdpm.c, a monitor per frame) or GL_INTEL_performance_query
 *    (intelpq.c, a query per counter set per frame);
 *  - `Utilization`, derived from the frames' GPU times like every device
 *    without a hardware busy counter (counters/derived.h).
 * All but Utilization are per-frame values (COUNTER records whose window
 * is the frame's GPU time, with the swap's correlation id); they are
 * measured only while a session selects them. `ia_primitives`, draws
 * and triangles are selected by default: each statistic is a query begun
 * and ended every frame, which costs llvmpipe some 28,000 instructions a
 * frame (bench/gl.c), so the others are asked for by name (-e).
 *
 * A query of the program's own of a statistic's target cannot be active
 * at the same time as ours: a frame begun while the program measures a
 * statistic leaves that statistic out, and one the program begins inside
 * our frame ends ours first (that frame's value is lost, and warned of).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "counters/derived.h"
#include "glInt.h"

/* The statistics, in the order of their catalog entries. */
static const struct {
  GLenum target;
  const char *name, *desc;
  uint32_t unit, group;
  bool dflt;
} stats[GP_GL_NSTATS] = {
    {0x82EE, "ia_vertices", "vertices submitted", GP_UNIT_VERTEX,
     GP_COUNTER_GROUP_VERTICES, false},
    {0x82EF, "ia_primitives", "primitives submitted", GP_UNIT_PRIMITIVE,
     GP_COUNTER_GROUP_PRIMITIVES, true},
    {0x82F0, "vs_invocations", "vertex shader invocations", GP_UNIT_VERTEX,
     GP_COUNTER_GROUP_VERTICES, false},
    {0x82F1, "tcs_patches", "tessellation control shader patches", GP_UNIT_NONE,
     GP_COUNTER_GROUP_PRIMITIVES, false},
    {0x82F2, "tes_invocations", "tessellation evaluation shader invocations",
     GP_UNIT_NONE, GP_COUNTER_GROUP_VERTICES, false},
    {0x887F, "gs_invocations", "geometry shader invocations", GP_UNIT_NONE,
     GP_COUNTER_GROUP_PRIMITIVES, false},
    {0x82F3, "gs_primitives", "primitives the geometry shaders emitted",
     GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES, false},
    {0x82F4, "fs_invocations", "fragment shader invocations", GP_UNIT_FRAGMENT,
     GP_COUNTER_GROUP_FRAGMENTS, true},
    {0x82F5, "cs_invocations", "compute shader invocations", GP_UNIT_NONE,
     GP_COUNTER_GROUP_COMPUTE, false},
    {0x82F6, "clipping_invocations", "primitives that reached clipping",
     GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES, false},
    {0x82F7, "clipping_primitives", "primitives clipping let through",
     GP_UNIT_PRIMITIVE, GP_COUNTER_GROUP_PRIMITIVES, false},
    /* GL_PRIMITIVES_GENERATED (GL 3.0, ES 3.2), GALLIUM_HUD's name */
    {0x8C87, "primitives-generated",
     "primitives the vertex or geometry stage generated", GP_UNIT_PRIMITIVE,
     GP_COUNTER_GROUP_PRIMITIVES, false},
};
#define PRIMS_GENERATED 11

/* The provider state and catalog of one GL device. */
typedef struct gl_dev {
  uint32_t device_id;
  bool used;
  gp__catalog cat;
  gp__counter_def *defs;
  gp_counter_block_info blocks[3];
  gp_counter_group_info *groups;
  uint32_t nstats;                         /* the queries c can measure */
  uint8_t stat_of[GP_GL_NSTATS];           /* catalog index -> stats[] index */
  uint32_t i_draws, i_tris, i_amd, i_util; /* catalog indices */
  uint32_t namd;
  pthread_mutex_t lock;
  gp__sampler *started, *s, *derived; /* lock */
  uint32_t wanted;                    /* bits: statistics selected (lock) */
  bool amd_wanted;                    /* lock */
  uint32_t *amd_sel;                  /* extension indices selected (lock) */
  uint32_t namd_sel;
  uint32_t gen; /* bumped at each start and stop (lock) */
} gl_dev;

static gl_dev devs[16];
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;

static gl_dev *dev_of(uint32_t device_id) {
  for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
    if (devs[i].used && devs[i].device_id == device_id)
      return &devs[i];
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Provider                                                             */

static int gl_start(void *p, gp__sampler *s) {
  gl_dev *v = p;
  const gp_counters_backend_ops *K = gp__gl_counters;
  bool util = false;
  uint32_t wanted = 0, *sel = NULL, nsel = 0;
  bool frames = false;
  sel = calloc(s->num_counters ? s->num_counters : 1, sizeof(*sel));
  if (!sel)
    return GP_ENOMEM;
  for (uint32_t k = 0; k < s->num_counters; k++) {
    uint32_t i = s->index[k];
    if (i < v->nstats)
      wanted |= 1u << v->stat_of[i];
    else if (i == v->i_util)
      util = true;
    else if (v->namd && i >= v->i_amd && i < v->i_amd + v->namd)
      sel[nsel++] = i - v->i_amd;
    if (i != v->i_util)
      frames = true;
  }
  gp__sampler *d = NULL;
  if (util && s->period_ns && !s->instrumented) {
    d = K->sampler_get(s);
    int rc = K->derived_sampling_start(v->device_id, d);
    if (rc != 0) {
      K->sampler_put(d);
      free(sel);
      return rc;
    }
  }
  pthread_mutex_lock(&v->lock);
  v->started = s;
  v->derived = d;
  v->s = frames ? K->sampler_get(s) : NULL;
  v->wanted = wanted;
  free(v->amd_sel);
  v->amd_sel = sel;
  v->namd_sel = nsel;
  v->amd_wanted = nsel > 0;
  v->gen++;
  pthread_mutex_unlock(&v->lock);
  return 0;
}

static void gl_stop(void *p, gp__sampler *s) {
  gl_dev *v = p;
  const gp_counters_backend_ops *K = gp__gl_counters;
  pthread_mutex_lock(&v->lock);
  if (v->started != s) {
    pthread_mutex_unlock(&v->lock);
    return;
  }
  gp__sampler *d = v->derived, *st = v->s;
  v->started = v->derived = v->s = NULL;
  v->wanted = 0;
  v->amd_wanted = false;
  v->namd_sel = 0;
  v->gen++;
  pthread_mutex_unlock(&v->lock);
  if (d) {
    K->derived_sampling_stop(v->device_id, d);
    K->sampler_put(d);
  }
  if (st)
    K->sampler_put(st);
}

static const gp__provider_ops ops = {.sampling_start = gl_start,
                                     .sampling_stop = gl_stop};

#define DEF(i, n, d, u, g, dflt_)                                              \
  (gp__counter_def) {                                                          \
    .info = {.id = (i),                                                        \
             .name = (n),                                                      \
             .description = (d),                                               \
             .category = "pipeline statistics",                                \
             .type = GP_COUNTER_TYPE_INT64,                                    \
             .num_numerator_units = (u) != GP_UNIT_NONE,                       \
             .numerator_units = {(u)},                                         \
             .num_groups = 1,                                                  \
             .groups = {(g)},                                                  \
             .select_by_default = (dflt_)},                                    \
    .combine = GP__SUM, .sampled = GP__SAMPLED_INSTRUMENTED                    \
  }

static bool has_pstats(gp__gl_ctx *c) {
  if (c->es || !c->fn.GetString)
    return false;
  return c->major > 4 || (c->major == 4 && c->minor >= 6) ||
         gp__gl_has_ext(c, "GL_ARB_pipeline_statistics_query");
}

/* The stats[] indices c can measure, into idx; returns how many. */
static uint32_t available(gp__gl_ctx *c, uint8_t *idx) {
  uint32_t n = 0;
  if (has_pstats(c))
    for (uint32_t i = 0; i < PRIMS_GENERATED; i++)
      idx[n++] = (uint8_t)i;
  if (c->es ? c->major > 3 || (c->major == 3 && c->minor >= 2) : c->major >= 3)
    idx[n++] = PRIMS_GENERATED;
  return n;
}

/* See glInt.h. */
uint32_t gp__gl_stats_names(gp__gl_ctx *c, const char **names) {
  uint8_t idx[GP_GL_NSTATS];
  uint32_t n = available(c, idx);
  for (uint32_t k = 0; k < n; k++)
    names[k] = stats[idx[k]].name;
  return n;
}

/* See glInt.h. */
void gp__gl_counters_publish(gp__gl_ctx *c) {
  const gp_counters_backend_ops *K = gp__gl_counters;
  if (!K)
    return;
  pthread_mutex_lock(&devs_lock);
  gl_dev *v = NULL;
  for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]) && !v; i++)
    if (!devs[i].used)
      v = &devs[i];
  if (v) {
    v->used = true;
    v->device_id = c->device_id;
  }
  pthread_mutex_unlock(&devs_lock);
  if (!v)
    return;
  pthread_mutex_init(&v->lock, NULL);
  v->nstats = available(c, v->stat_of);
  v->namd = gp__gl_pm_count(c);
  v->i_draws = v->nstats;
  v->i_tris = v->i_draws + 1;
  v->i_amd = v->i_tris + 1;
  v->i_util = v->i_amd + v->namd;
  uint32_t ndefs = v->i_util + 1;
  v->defs = calloc(ndefs, sizeof(*v->defs));
  v->groups = calloc(8 + v->namd, sizeof(*v->groups));
  if (!v->defs || !v->groups) {
    free(v->defs);
    free(v->groups);
    v->used = false;
    return;
  }
  uint32_t id = 1;
  for (uint32_t i = 0; i < v->nstats; i++, id++) {
    const uint32_t t = v->stat_of[i];
    v->defs[i] = DEF(id, stats[t].name, stats[t].desc, stats[t].unit,
                     stats[t].group, stats[t].dflt);
    if (t == PRIMS_GENERATED)
      v->defs[i].info.category = "primitive queries";
  }
  v->defs[v->i_draws] =
      DEF(id++, "draws", "draw calls in the frame (a display list: one)",
          GP_UNIT_NONE, GP_COUNTER_GROUP_SYSTEM, true);
  v->defs[v->i_draws].info.category = "frame";
  v->defs[v->i_tris] =
      DEF(id++, "triangles",
          "triangles the frame's draw calls describe (not display lists)",
          GP_UNIT_TRIANGLE, GP_COUNTER_GROUP_PRIMITIVES, true);
  v->defs[v->i_tris].info.category = "frame";
  for (uint32_t i = 0; i < v->i_amd; i++)
    v->defs[i].info.block_id = 0;
  uint32_t ngroups = 0;
  static const gp_counter_group_info fixed[] = {
      {.id = GP_COUNTER_GROUP_SYSTEM, .name = "SYSTEM"},
      {.id = GP_COUNTER_GROUP_VERTICES, .name = "VERTICES"},
      {.id = GP_COUNTER_GROUP_FRAGMENTS, .name = "FRAGMENTS"},
      {.id = GP_COUNTER_GROUP_PRIMITIVES, .name = "PRIMITIVES"},
      {.id = GP_COUNTER_GROUP_COMPUTE, .name = "COMPUTE"}};
  for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
    v->groups[ngroups++] = fixed[i];
  uint32_t nag = 0;
  if (v->namd) {
    c->pm->defs(c, v->defs + v->i_amd, id, GP_COUNTER_GROUP_FIRST_CUSTOM,
                v->groups + ngroups, &nag);
    for (uint32_t k = 0; k < v->namd; k++)
      v->defs[v->i_amd + k].info.block_id = 1;
    id += v->namd;
  }
  ngroups += nag;
  v->defs[v->i_util] =
      (gp__counter_def)GP__DERIVED_UTILIZATION_DEF(id, 2, "frames");
  v->blocks[0] = (gp_counter_block_info){
      .id = 0,
      .capacity = v->i_amd,
      .num_counters = v->i_amd,
      .name = "frame",
      .description = "per-frame queries and call counts"};
  v->blocks[1] = (gp_counter_block_info){
      .id = 1,
      .capacity = v->namd,
      .num_counters = v->namd,
      .name = c->pm ? c->pm->ext : "driver",
      .description = c->pm ? c->pm->unit : "the driver's counters"};
  v->blocks[2] = (gp_counter_block_info){
      .id = 2,
      .capacity = 1,
      .num_counters = 1,
      .name = "derived",
      .description = "Counters derived from the activity timeline, not read "
                     "from hardware"};
  v->cat = (gp__catalog){.counters = v->defs,
                         .num_counters = ndefs,
                         .num_blocks = 3,
                         .blocks = v->blocks,
                         .groups = v->groups,
                         .num_groups = ngroups,
                         .max_active = ndefs,
                         .min_period_ns = GP__DERIVED_MIN_PERIOD_NS,
                         .max_period_ns = GP__DERIVED_MAX_PERIOD_NS,
                         .supports_instrumented = 1,
                         .has_scheduler = 0};
  if (K->derived_attach(c->device_id, &v->cat, v->i_util) == 0 &&
      K->counters_register(c->device_id, &v->cat, &ops, v) == 0)
    K->counters_announce(c->device_id);
}

/* ------------------------------------------------------------------ */
/* Per frame                                                            */

/* See glInt.h. */
bool gp__gl_counters_sampled(const gp__gl_ctx *c) {
  gl_dev *v = dev_of(c->device_id);
  if (!v)
    return false;
  pthread_mutex_lock(&v->lock);
  bool on = v->s != NULL;
  pthread_mutex_unlock(&v->lock);
  return on;
}

/* See glInt.h. */
uint32_t gp__gl_stats_wanted(gp__gl_ctx *c, bool *amd, gp__sampler **sampler) {
  *amd = false;
  *sampler = NULL;
  gl_dev *v = dev_of(c->device_id);
  if (!v)
    return 0;
  pthread_mutex_lock(&v->lock);
  uint32_t w = v->s ? v->wanted | 0x80000000u : 0;
  *sampler = v->s ? gp__gl_counters->sampler_get(v->s) : NULL;
  if (v->s && v->amd_wanted && c->pm) {
    *amd = true;
    c->pm->select(c, v->amd_sel, v->namd_sel);
  }
  pthread_mutex_unlock(&v->lock);
  return w;
}

/* See glInt.h. */
void gp__gl_stats_begin(gp__gl_ctx *c, gp__gl_frame *f, uint32_t wanted) {
  f->stats_lost = 0;
  f->counted = true; /* draws and triangles, whatever else */
  for (uint32_t i = 0; i < GP_GL_NSTATS; i++) {
    if (!(wanted & (1u << i)) || (c->app_queries & (1u << i)) ||
        !c->fn.GenQueries)
      continue;
    /* A fresh query each frame: llvmpipe (Mesa 22.3) answers a
     * pipeline-statistics query object begun again with wrong values
     * (1040 primitives for 75 drawn, in opengl_record_sample). Names are
     * made, and deleted, GP_GL_STATQ at a time. */
    if (!c->nfresh) {
      c->fn.GenQueries(GP_GL_STATQ, c->fresh);
      c->nfresh = GP_GL_STATQ;
      while (c->nfresh && !c->fresh[c->nfresh - 1])
        c->nfresh--;
    }
    GLuint q = c->nfresh ? c->fresh[--c->nfresh] : 0;
    if (!q)
      continue;
    c->fn.BeginQuery(stats[i].target, q);
    f->stats[i] = q;
  }
}

/* See glInt.h. */
void gp__gl_stats_end(gp__gl_ctx *c, gp__gl_frame *f) {
  for (uint32_t i = 0; i < GP_GL_NSTATS; i++)
    if (f->stats[i] && !(f->stats_lost & (1u << i)) &&
        !(f->stats_ended & (1u << i)))
      c->fn.EndQuery(stats[i].target);
  f->stats_ended = ~0u;
}

/* See glInt.h. */
void gp__gl_stats_app_query(gp__gl_ctx *c, GLenum target, bool begin) {
  for (uint32_t i = 0; i < GP_GL_NSTATS; i++) {
    if (stats[i].target != target)
      continue;
    if (!begin) {
      c->app_queries &= ~(1u << i);
      return;
    }
    c->app_queries |= 1u << i;
    gp__gl_frame *f = gp__gl_open_frame(c);
    if (f && f->stats[i] && !(f->stats_ended & (1u << i))) {
      c->fn.EndQuery(target); /* ours ends first; its value is lost */
      f->stats_lost |= 1u << i;
      static atomic_bool warned;
      gp__gl_warn_once(&warned,
                       "gpuperf: the program began a pipeline-statistics "
                       "query inside a frame that gpuperf measures: that "
                       "frame's value of the statistic is lost");
    }
    return;
  }
}

/* See glInt.h. */
bool gp__gl_stats_ready(gp__gl_ctx *c, const gp__gl_frame *f) {
  for (uint32_t i = GP_GL_NSTATS; i-- > 0;)
    if (f->stats[i] && !(f->stats_lost & (1u << i))) {
      GLint avail = 0;
      c->fn.GetQueryObjectiv(f->stats[i], GL_QUERY_RESULT_AVAILABLE, &avail);
      return avail != 0;
    }
  return true;
}

static void free_stats(gp__gl_ctx *c, gp__gl_frame *f) {
  for (uint32_t i = 0; i < GP_GL_NSTATS; i++)
    if (f->stats[i]) {
      c->used[c->nused++] = f->stats[i];
      f->stats[i] = 0;
      if (c->nused == GP_GL_STATQ) {
        c->fn.DeleteQueries(GP_GL_STATQ, c->used);
        c->nused = 0;
      }
    }
}

/* See glInt.h. */
void gp__gl_stats_fini(gp__gl_ctx *c) {
  if (c->nused)
    c->fn.DeleteQueries((GLsizei)c->nused, c->used);
  if (c->nfresh)
    c->fn.DeleteQueries((GLsizei)c->nfresh, c->fresh);
  c->nused = c->nfresh = 0;
}

/* See glInt.h. */
void gp__gl_stats_drop(gp__gl_ctx *c, gp__gl_frame *f) {
  free_stats(c, f);
  gp__gl_counters->sampler_put(f->sampler);
  f->sampler = NULL;
}

/* See glInt.h. */
void gp__gl_stats_emit(gp__gl_ctx *c, gp__gl_frame *f, uint64_t start,
                       uint64_t end) {
  const gp_counters_backend_ops *K = gp__gl_counters;
  gl_dev *v = f->counted ? dev_of(c->device_id) : NULL;
  gp__sampler *s = v ? f->sampler : NULL;
  double amdv[256];
  uint32_t amdi[256], namd = 256;
  bool amd = s && f->monitor && c->pm && c->pm->read(c, f, amdv, amdi, &namd);
  if (!amd)
    gp__gl_pm_drop(c, f);
  if (s) {
    for (uint32_t k = 0; k < s->num_counters; k++) {
      uint32_t i = s->index[k];
      double val = NAN;
      if (i < v->nstats) {
        const uint32_t t = v->stat_of[i];
        if (!f->stats[t] || (f->stats_lost & (1u << t)))
          continue;
        GLuint64 r = 0;
        c->fn.GetQueryObjectui64v(f->stats[t], GL_QUERY_RESULT, &r);
        val = (double)r;
      } else if (i == v->i_draws) {
        val = f->draws;
      } else if (i == v->i_tris) {
        val = (double)f->triangles;
      } else if (amd && i >= v->i_amd && i < v->i_amd + v->namd) {
        for (uint32_t j = 0; j < namd; j++)
          if (amdi[j] == i - v->i_amd)
            val = amdv[j];
      }
      if (isnan(val))
        continue;
      K->counter_emit(&v->cat, c->device_id, i, val, 0.0, end, start, f->corr,
                      0, c->context_id);
    }
  }
  gp__gl_stats_drop(c, f);
}
