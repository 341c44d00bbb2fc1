/*
 * tconfig.c - Perfetto's TraceConfig in the text format: the subset
 * gpuperf records (session.h), read with textproto.c against the schema
 * below (or, for one data source's config sent encoded, with
 * textproto_bin.c against the same schema), and checked for what the
 * schema cannot say (a data source gpuperf does not provide, ids and
 * names together, a oneof given twice, a filter without a glob). Writing
 * a config back is tconfig_format.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "tconfig.h"
#include "tconfigInt.h"
#include "textproto.h"

/* ------------------------------------------------------------------ */
/* Schema                                                               */

enum {
  F_BUFFERS = 1,
  F_DATA_SOURCES,
  F_DURATION_MS,
  F_FLUSH_PERIOD_MS,
  F_FILE_WRITE_PERIOD_MS,
  F_WRITE_INTO_FILE,
  F_GPUPERF_OPTIONS,
  F_SIZE_KB,
  F_FILL_POLICY,
  F_CONFIG,
  F_NAME,
  F_TARGET_BUFFER,
  F_GPU_COUNTER_CONFIG,
  F_GPU_RENDERSTAGES_CONFIG,
  F_COUNTER_PERIOD_NS,
  F_COUNTER_IDS,
  F_COUNTER_NAMES,
  F_INSTRUMENTED_SAMPLING,
  F_FIX_GPU_CLOCK,
  F_ISC,
  F_NAME_FILTERS,
  F_TX_INCLUDE,
  F_TX_EXCLUDE,
  F_RANGES,
  F_NAME_GLOB,
  F_NAME_BASE,
  F_SKIP,
  F_COUNT,
  F_FULL_LOADSTORE,
  F_LOW_OVERHEAD,
  F_TRACE_METRICS,
  F_DESCRIPTOR_MODE,
  F_MACHINE_ID,
  F_CODE_OBJECTS,
  F_SOURCE_LEVEL,
  F_VULKAN_MEMORY_CONFIG,
  F_TRACK_DRIVER,
  F_TRACK_DEVICE,
  F_FTRACE_CONFIG,
  F_FTRACE_EVENTS,
  F_FTRACE_BUFFER_SIZE_KB,
  F_FTRACE_DRAIN_PERIOD_MS
};

/* See tconfigInt.h. */
const char *const gp__tc_fill_policies[] = {"UNSPECIFIED", "RING_BUFFER",
                                            "DISCARD", NULL};
/* See tconfigInt.h. */
const char *const gp__tc_name_bases[] = {
    "MANGLED_KERNEL_NAME", "DEMANGLED_KERNEL_NAME", "FUNCTION_NAME", NULL};

static const gp__tp_field buffer_fields[] = {
    {"size_kb", F_SIZE_KB, GP_TP_U32, false, NULL, NULL},
    {"fill_policy", F_FILL_POLICY, GP_TP_ENUM, false, NULL,
     gp__tc_fill_policies},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message buffer_msg = {"buffers", buffer_fields};

static const gp__tp_field filter_fields[] = {
    {"name_glob", F_NAME_GLOB, GP_TP_STRING, false, NULL, NULL},
    {"name_base", F_NAME_BASE, GP_TP_ENUM, false, NULL, gp__tc_name_bases},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message filter_msg = {"activity_name_filters",
                                          filter_fields};

static const gp__tp_field range_fields[] = {
    {"skip", F_SKIP, GP_TP_U32, false, NULL, NULL},
    {"count", F_COUNT, GP_TP_U32, false, NULL, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message range_msg = {"activity_ranges", range_fields};

static const gp__tp_field isc_fields[] = {
    {"activity_name_filters", F_NAME_FILTERS, GP_TP_MESSAGE, true, &filter_msg,
     NULL},
    {"activity_tx_include_globs", F_TX_INCLUDE, GP_TP_STRING, true, NULL, NULL},
    {"activity_tx_exclude_globs", F_TX_EXCLUDE, GP_TP_STRING, true, NULL, NULL},
    {"activity_ranges", F_RANGES, GP_TP_MESSAGE, true, &range_msg, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message isc_msg = {"instrumented_sampling_config",
                                       isc_fields};

static const gp__tp_field gcc_fields[] = {
    {"counter_period_ns", F_COUNTER_PERIOD_NS, GP_TP_U64, false, NULL, NULL},
    {"counter_ids", F_COUNTER_IDS, GP_TP_U32, true, NULL, NULL},
    {"counter_names", F_COUNTER_NAMES, GP_TP_STRING, true, NULL, NULL},
    {"instrumented_sampling", F_INSTRUMENTED_SAMPLING, GP_TP_BOOL, false, NULL,
     NULL},
    {"fix_gpu_clock", F_FIX_GPU_CLOCK, GP_TP_BOOL, false, NULL, NULL},
    {"instrumented_sampling_config", F_ISC, GP_TP_MESSAGE, false, &isc_msg,
     NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message gcc_msg = {"gpu_counter_config", gcc_fields};

static const gp__tp_field grc_fields[] = {
    {"full_loadstore", F_FULL_LOADSTORE, GP_TP_BOOL, false, NULL, NULL},
    {"low_overhead", F_LOW_OVERHEAD, GP_TP_BOOL, false, NULL, NULL},
    {"trace_metrics", F_TRACE_METRICS, GP_TP_STRING, true, NULL, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message grc_msg = {"gpu_renderstages_config", grc_fields};

static const gp__tp_field vmc_fields[] = {
    {"track_driver_memory_usage", F_TRACK_DRIVER, GP_TP_BOOL, false, NULL,
     NULL},
    {"track_device_memory_usage", F_TRACK_DEVICE, GP_TP_BOOL, false, NULL,
     NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message vmc_msg = {"vulkan_memory_config", vmc_fields};

/* FtraceConfig: what gpuperf reads of it (the GPU events only). */
static const gp__tp_field ftc_fields[] = {
    {"ftrace_events", F_FTRACE_EVENTS, GP_TP_STRING, true, NULL, NULL},
    {"buffer_size_kb", F_FTRACE_BUFFER_SIZE_KB, GP_TP_U32, false, NULL, NULL},
    {"drain_period_ms", F_FTRACE_DRAIN_PERIOD_MS, GP_TP_U32, false, NULL, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message ftc_msg = {"ftrace_config", ftc_fields};

static const gp__tp_field dsc_fields[] = {
    {"name", F_NAME, GP_TP_STRING, false, NULL, NULL},
    {"target_buffer", F_TARGET_BUFFER, GP_TP_U32, false, NULL, NULL},
    {"gpu_counter_config", F_GPU_COUNTER_CONFIG, GP_TP_MESSAGE, false, &gcc_msg,
     NULL},
    {"gpu_renderstages_config", F_GPU_RENDERSTAGES_CONFIG, GP_TP_MESSAGE, false,
     &grc_msg, NULL},
    {"vulkan_memory_config", F_VULKAN_MEMORY_CONFIG, GP_TP_MESSAGE, false,
     &vmc_msg, NULL},
    {"ftrace_config", F_FTRACE_CONFIG, GP_TP_MESSAGE, false, &ftc_msg, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message dsc_msg = {"config", dsc_fields};

static const gp__tp_field ds_fields[] = {
    {"config", F_CONFIG, GP_TP_MESSAGE, false, &dsc_msg, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message ds_msg = {"data_sources", ds_fields};

static const gp__tp_field opt_fields[] = {
    {"counter_descriptor_mode", F_DESCRIPTOR_MODE, GP_TP_U32, false, NULL,
     NULL},
    {"machine_id", F_MACHINE_ID, GP_TP_U32, false, NULL, NULL},
    {"code_objects", F_CODE_OBJECTS, GP_TP_BOOL, false, NULL, NULL},
    {"source_level", F_SOURCE_LEVEL, GP_TP_BOOL, false, NULL, NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message opt_msg = {"gpuperf_options", opt_fields};

static const gp__tp_field trace_fields[] = {
    {"buffers", F_BUFFERS, GP_TP_MESSAGE, true, &buffer_msg, NULL},
    {"data_sources", F_DATA_SOURCES, GP_TP_MESSAGE, true, &ds_msg, NULL},
    {"duration_ms", F_DURATION_MS, GP_TP_U32, false, NULL, NULL},
    {"flush_period_ms", F_FLUSH_PERIOD_MS, GP_TP_U32, false, NULL, NULL},
    {"file_write_period_ms", F_FILE_WRITE_PERIOD_MS, GP_TP_U32, false, NULL,
     NULL},
    {"write_into_file", F_WRITE_INTO_FILE, GP_TP_BOOL, false, NULL, NULL},
    {"gpuperf_options", F_GPUPERF_OPTIONS, GP_TP_MESSAGE, false, &opt_msg,
     NULL},
    {NULL, 0, 0, false, NULL, NULL}};
static const gp__tp_message trace_msg = {"TraceConfig", trace_fields};

/* ------------------------------------------------------------------ */
/* The config                                                           */

static const struct {
  const char *base;
  uint32_t kind;
} source_kinds[] = {{"gpu.counters", GP_DATA_SOURCE_GPU_COUNTERS},
                    {"gpu.renderstages", GP_DATA_SOURCE_GPU_RENDERSTAGES},
                    {"gpu.log", GP_DATA_SOURCE_GPU_LOG},
                    {"vulkan.memory_tracker", GP_DATA_SOURCE_VULKAN_MEMORY}};

/* The kind of a data source name and its vendor suffix; 0 if not ours. */
static uint32_t source_kind(const char *name, const char **vendor) {
  if (strcmp(name, "linux.ftrace") == 0) { /* no vendor suffix */
    *vendor = "";
    return GP_DATA_SOURCE_LINUX_FTRACE;
  }
  for (size_t i = 0; i < GP_ARRAY_SIZE(source_kinds); i++) {
    size_t n = strlen(source_kinds[i].base);
    if (strncmp(name, source_kinds[i].base, n) != 0)
      continue;
    if (name[n] == '\0') {
      *vendor = "";
      return source_kinds[i].kind;
    }
    if (name[n] == '.' && name[n + 1] != '\0' && !strchr(name + n + 1, '.')) {
      *vendor = name + n + 1;
      return source_kinds[i].kind;
    }
  }
  return 0;
}

static tc_source *add_source(gp_trace_config *c) {
  if (c->nsrc == c->capsrc) {
    uint32_t ncap = c->capsrc ? c->capsrc * 2 : 4;
    tc_source *n = realloc(c->src, ncap * sizeof(*n));
    if (!n)
      return NULL;
    c->src = n;
    c->capsrc = ncap;
  }
  tc_source *s = &c->src[c->nsrc++];
  memset(s, 0, sizeof(*s));
  return s;
}

static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (; *s; s++)
    h = (h ^ (uint8_t)*s) * 16777619u;
  /* FNV's low bits depend only on the low bits of every step, and the
   * table is indexed by its low bits: a finalizer (MurmurHash3's) spreads
   * the high bits into them. */
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

/* The source named name, or NULL: a hash lookup, so that checking each
 * of n sources for a duplicate costs O(n), not O(n^2). A slot keeps its
 * name's hash, so a probe reads a source (a cache miss once the config
 * is large) only when the hashes are equal. */
static const tc_source *source_by_name(const gp_trace_config *c,
                                       const char *name) {
  if (!c->nslots)
    return NULL;
  uint32_t h = name_hash(name);
  for (uint32_t i = h & (c->nslots - 1);; i = (i + 1) & (c->nslots - 1)) {
    const tc_slot *t = &c->by_name[i];
    if (!t->index)
      return NULL;
    if (t->hash == h && strcmp(c->src[t->index - 1].info.name, name) == 0)
      return &c->src[t->index - 1];
  }
}

static void put_slot(tc_slot *t, uint32_t nslots, uint32_t h, uint32_t k) {
  uint32_t i = h & (nslots - 1);
  while (t[i].index)
    i = (i + 1) & (nslots - 1);
  t[i].index = k + 1;
  t[i].hash = h;
}

/* Indexes source s (in c->src) by its name. 0 or GP_ENOMEM. */
static int index_source(gp_trace_config *c, const tc_source *s) {
  if (2 * (c->nsrc + 1) > c->nslots) {
    uint32_t n = c->nslots ? c->nslots * 2 : 16;
    tc_slot *t = calloc(n, sizeof(*t));
    if (!t)
      return GP_ENOMEM;
    for (uint32_t i = 0; i < c->nslots; i++)
      if (c->by_name[i].index)
        put_slot(t, n, c->by_name[i].hash, c->by_name[i].index - 1);
    free(c->by_name);
    c->by_name = t;
    c->nslots = n;
  }
  put_slot(c->by_name, c->nslots, name_hash(s->info.name),
           (uint32_t)(s - c->src));
  return 0;
}

static size_t count_field(const gp__tp_node *n, int id) {
  size_t k = 0;
  for (; n; n = n->next)
    k += n->field->id == id;
  return k;
}

static const gp__tp_node *first_field(const gp__tp_node *n, int id) {
  for (; n; n = n->next)
    if (n->field->id == id)
      return n;
  return NULL;
}

/* The strings of every `id` field among n's siblings, in the arena. */
static const char *const *collect_strings(gp__arena *a, const gp__tp_node *n,
                                          int id, size_t *count) {
  *count = count_field(n, id);
  const char **v = gp__arena_alloc(a, (*count + 1) * sizeof(char *));
  if (!v)
    return NULL;
  size_t k = 0;
  for (; n; n = n->next)
    if (n->field->id == id)
      v[k++] = n->s;
  return v;
}

#define FAIL(node, ...)                                                        \
  do {                                                                         \
    gp__tp_error_at((node), err, err_size, __VA_ARGS__);                       \
    return GP_EPARSE;                                                          \
  } while (0)

static int convert_isc(gp_trace_config *c, tc_source *s, const gp__tp_node *isc,
                       char *err, size_t err_size) {
  gp_counter_config *cc = &s->info.counters;
  gp__arena *a = &c->arena;
  size_t nf = count_field(isc, F_NAME_FILTERS);
  gp_activity_name_filter *filters =
      gp__arena_alloc(a, (nf + 1) * sizeof(*filters));
  size_t nr = count_field(isc, F_RANGES);
  gp_activity_range *ranges = gp__arena_alloc(a, (nr + 1) * sizeof(*ranges));
  if (!filters || !ranges)
    return GP_ENOMEM;
  size_t kf = 0, kr = 0;
  for (const gp__tp_node *n = isc; n; n = n->next) {
    if ((n->field->id == F_TX_INCLUDE || n->field->id == F_TX_EXCLUDE) &&
        strlen(n->s) != n->len)
      FAIL(n, "%s: a glob holds a NUL byte", n->field->name);
    if (n->field->id == F_NAME_FILTERS) {
      const gp__tp_node *g = first_field(n->child, F_NAME_GLOB);
      const gp__tp_node *b = first_field(n->child, F_NAME_BASE);
      if (!g)
        FAIL(n, "activity_name_filters needs a name_glob");
      if (g->len == 0)
        FAIL(g, "name_glob is empty");
      if (strlen(g->s) != g->len)
        FAIL(g, "name_glob holds a NUL byte");
      filters[kf].name_glob = g->s;
      filters[kf].name_base = b ? (uint32_t)b->u : GP_NAME_BASE_MANGLED;
      kf++;
    } else if (n->field->id == F_RANGES) {
      const gp__tp_node *sk = first_field(n->child, F_SKIP);
      const gp__tp_node *ct = first_field(n->child, F_COUNT);
      ranges[kr].skip = sk ? (uint32_t)sk->u : 0;
      ranges[kr].count = ct ? (uint32_t)ct->u : UINT32_MAX;
      kr++;
    }
  }
  cc->name_filters = filters;
  cc->num_name_filters = kf;
  cc->ranges = ranges;
  cc->num_ranges = kr;
  cc->tx_include_globs =
      collect_strings(a, isc, F_TX_INCLUDE, &cc->num_tx_include_globs);
  cc->tx_exclude_globs =
      collect_strings(a, isc, F_TX_EXCLUDE, &cc->num_tx_exclude_globs);
  if (!cc->tx_include_globs || !cc->tx_exclude_globs)
    return GP_ENOMEM;
  cc->instrumented = 1;
  s->isc = true;
  return 0;
}

static int convert_counters(gp_trace_config *c, tc_source *s,
                            const gp__tp_node *gcc, char *err,
                            size_t err_size) {
  gp_counter_config *cc = &s->info.counters;
  const gp__tp_node *ids = first_field(gcc, F_COUNTER_IDS);
  const gp__tp_node *names = first_field(gcc, F_COUNTER_NAMES);
  const gp__tp_node *is = first_field(gcc, F_INSTRUMENTED_SAMPLING);
  const gp__tp_node *isc = first_field(gcc, F_ISC);
  if (ids && names)
    FAIL(ids->line > names->line ||
                 (ids->line == names->line && ids->column > names->column)
             ? ids
             : names,
         "use counter_ids or counter_names, not both");
  if (is && isc)
    FAIL(isc->line > is->line ? isc : is,
         "instrumented_sampling and instrumented_sampling_config are "
         "alternatives (a oneof): give one");
  /* A session notes which names or ids matched in a 64-bit mask. */
  size_t nsel = 0;
  for (const gp__tp_node *x = gcc; x; x = x->next)
    if ((x->field->id == F_COUNTER_IDS || x->field->id == F_COUNTER_NAMES) &&
        ++nsel > GP_TRACE_CONFIG_MAX_COUNTERS)
      FAIL(x, "%s: more than %d in one data source",
           x->field->id == F_COUNTER_IDS ? "counter_ids" : "counter_names",
           GP_TRACE_CONFIG_MAX_COUNTERS);
  size_t n = count_field(gcc, F_COUNTER_IDS);
  uint32_t *idv = gp__arena_alloc(&c->arena, (n + 1) * sizeof(uint32_t));
  if (!idv)
    return GP_ENOMEM;
  size_t k = 0;
  for (const gp__tp_node *x = gcc; x; x = x->next) {
    if (x->field->id == F_COUNTER_IDS)
      idv[k++] = (uint32_t)x->u;
    else if (x->field->id == F_COUNTER_NAMES && x->len == 0)
      FAIL(x, "counter_names: empty name");
    else if (x->field->id == F_COUNTER_NAMES && strlen(x->s) != x->len)
      FAIL(x, "counter_names: name holds a NUL byte");
  }
  cc->counter_ids = idv;
  cc->num_counter_ids = n;
  cc->counter_names =
      collect_strings(&c->arena, gcc, F_COUNTER_NAMES, &cc->num_counter_names);
  if (!cc->counter_names)
    return GP_ENOMEM;
  const gp__tp_node *p = first_field(gcc, F_COUNTER_PERIOD_NS);
  if (p) {
    s->period_set = true;
    cc->counter_period_ns = p->u;
  }
  /* Perfetto's producers pin the GPU clock for steadier counters; no
   * backend of gpuperf can (the simulated GPUs' clocks never move, the
   * others are the driver's): refused, rather than accepted and ignored. */
  const gp__tp_node *fix = first_field(gcc, F_FIX_GPU_CLOCK);
  if (fix && fix->u)
    FAIL(fix, "fix_gpu_clock: gpuperf cannot fix a GPU's clock on any "
              "device it drives; leave the field out (or false)");
  if (is)
    cc->instrumented = (uint32_t)is->u;
  if (isc) {
    int rc = convert_isc(c, s, isc->child, err, err_size);
    if (rc != 0)
      return rc;
  }
  if (p && p->u == 0 && !cc->instrumented)
    FAIL(p,
         "counter_period_ns: 0 samples nothing (leave it out for the "
         "default of %llu ns, or enable instrumented sampling)",
         (unsigned long long)GP_DEFAULT_COUNTER_PERIOD_NS);
  s->counter_config = true;
  return 0;
}

/* A linux.ftrace data source's ftrace_config: every event named must be
 * a GPU event gpuperf reads (the others are traced_probes' to record). */
static int convert_ftrace(tc_source *s, const gp__tp_node *ftc, char *err,
                          size_t err_size) {
  for (const gp__tp_node *x = ftc; x; x = x->next) {
    if (x->field->id != F_FTRACE_EVENTS)
      continue;
    uint32_t m = strlen(x->s) == x->len ? gp__ftrace_event_match(x->s) : 0;
    if (!m)
      FAIL(x,
           "ftrace_events: '%s' is not a GPU event gpuperf reads (it reads "
           "power/gpu_frequency, gpu_mem/gpu_mem_total, gpu_scheduler/* and "
           "dma_fence/*; record other events with Perfetto's traced_probes, "
           "beside `gpuperf record --producer`)",
           x->s);
    s->info.ftrace_events |= m;
  }
  const gp__tp_node *x;
  if ((x = first_field(ftc, F_FTRACE_BUFFER_SIZE_KB)))
    s->info.ftrace_buffer_size_kb = (uint32_t)x->u;
  if ((x = first_field(ftc, F_FTRACE_DRAIN_PERIOD_MS)))
    s->info.ftrace_drain_period_ms = (uint32_t)x->u;
  return 0;
}

static int convert_source(gp_trace_config *c, const gp__tp_node *ds, char *err,
                          size_t err_size) {
  const gp__tp_node *cfg = first_field(ds->child, F_CONFIG);
  if (!cfg)
    FAIL(ds, "data_sources needs a config { name: ... }");
  const gp__tp_node *name = first_field(cfg->child, F_NAME);
  if (!name)
    FAIL(cfg, "the data source config has no name");
  const char *vendor = "";
  uint32_t kind =
      strlen(name->s) == name->len ? source_kind(name->s, &vendor) : 0;
  if (!kind)
    FAIL(name,
         "data source '%s' is not one gpuperf records: use gpu.renderstages, "
         "gpu.counters, gpu.log or vulkan.memory_tracker, optionally with a "
         "vendor suffix such as gpu.counters.v3d, or linux.ftrace",
         name->s);
  const tc_source *dup = source_by_name(c, name->s);
  if (dup)
    FAIL(name, "data source '%s' is given twice (first at line %u)", name->s,
         dup->line);
  tc_source *s = add_source(c);
  if (!s)
    return GP_ENOMEM;
  s->info.kind = kind;
  s->info.name = name->s;
  if (index_source(c, s))
    return GP_ENOMEM;
  s->info.vendor = vendor;
  s->line = name->line;
  const gp__tp_node *tb = first_field(cfg->child, F_TARGET_BUFFER);
  if (tb) {
    if (c->nbuf && tb->u >= c->nbuf)
      FAIL(tb, "target_buffer %llu: there %s only %u buffer%s",
           (unsigned long long)tb->u, c->nbuf == 1 ? "is" : "are", c->nbuf,
           c->nbuf == 1 ? "" : "s");
    s->info.target_buffer = (uint32_t)tb->u;
    s->target_set = true;
  }
  const gp__tp_node *gcc = first_field(cfg->child, F_GPU_COUNTER_CONFIG);
  const gp__tp_node *grc = first_field(cfg->child, F_GPU_RENDERSTAGES_CONFIG);
  if (gcc && kind != GP_DATA_SOURCE_GPU_COUNTERS)
    FAIL(gcc,
         "gpu_counter_config belongs to a gpu.counters data source, not "
         "to '%s'",
         name->s);
  if (grc && kind != GP_DATA_SOURCE_GPU_RENDERSTAGES)
    FAIL(grc,
         "gpu_renderstages_config belongs to a gpu.renderstages data "
         "source, not to '%s'",
         name->s);
  const gp__tp_node *vmc = first_field(cfg->child, F_VULKAN_MEMORY_CONFIG);
  if (vmc && kind != GP_DATA_SOURCE_VULKAN_MEMORY)
    FAIL(vmc,
         "vulkan_memory_config belongs to a vulkan.memory_tracker data "
         "source, not to '%s'",
         name->s);
  const gp__tp_node *ftc = first_field(cfg->child, F_FTRACE_CONFIG);
  if (ftc && kind != GP_DATA_SOURCE_LINUX_FTRACE)
    FAIL(ftc,
         "ftrace_config belongs to a linux.ftrace data source, not to '%s'",
         name->s);
  if (kind == GP_DATA_SOURCE_LINUX_FTRACE) {
    if (!ftc || !first_field(ftc->child, F_FTRACE_EVENTS))
      FAIL(ftc ? ftc : name,
           "linux.ftrace needs ftrace_config { ftrace_events: ... }, the GPU "
           "events to read (\"power/gpu_frequency\", \"dma_fence/*\", ...)");
    int rc = convert_ftrace(s, ftc->child, err, err_size);
    if (rc != 0)
      return rc;
  }
  if (vmc) {
    const gp__tp_node *x;
    if ((x = first_field(vmc->child, F_TRACK_DRIVER)))
      s->info.track_driver_memory_usage = (uint32_t)x->u;
    if ((x = first_field(vmc->child, F_TRACK_DEVICE)))
      s->info.track_device_memory_usage = (uint32_t)x->u;
    s->vulkan_memory_config = true;
  }
  if (gcc) {
    int rc = convert_counters(c, s, gcc->child, err, err_size);
    if (rc != 0)
      return rc;
  }
  if (grc) {
    const gp__tp_node *x;
    /* Load and store operations of render passes, and the driver's own
     * trace metrics, are what Android GPU drivers write into their
     * render stages; no backend of gpuperf sees them: refused, rather
     * than accepted and ignored. */
    if ((x = first_field(grc->child, F_FULL_LOADSTORE)) && x->u)
      FAIL(x, "full_loadstore: gpuperf sees no render pass load or store "
              "operations on any device it drives; leave the field out (or "
              "false)");
    if ((x = first_field(grc->child, F_TRACE_METRICS)))
      FAIL(x,
           "trace_metrics: gpuperf records no driver trace metrics "
           "('%s'); leave the field out",
           strlen(x->s) == x->len ? x->s : "?");
    if ((x = first_field(grc->child, F_LOW_OVERHEAD)))
      s->info.low_overhead = (uint32_t)x->u;
    s->info.trace_metrics = gp__arena_alloc(&c->arena, sizeof(char *));
    if (!s->info.trace_metrics)
      return GP_ENOMEM;
    s->renderstages_config = true;
  }
  return 0;
}

static gp_trace_config *config_new(void) {
  gp_trace_config *c = calloc(1, sizeof(*c));
  if (c) {
    c->write_into_file = -1;
    c->descriptor_mode = 2;
  }
  return c;
}

static int convert(gp_trace_config *c, const gp__tp_node *root, char *err,
                   size_t err_size) {
  c->nbuf = (uint32_t)count_field(root, F_BUFFERS);
  c->buffers = gp__arena_alloc(&c->arena, (c->nbuf + 1) * sizeof(tc_buffer));
  if (!c->buffers)
    return GP_ENOMEM;
  uint32_t kb = 0;
  for (const gp__tp_node *n = root; n; n = n->next) {
    const gp__tp_node *x;
    switch (n->field->id) {
    case F_BUFFERS:
      if ((x = first_field(n->child, F_SIZE_KB)))
        c->buffers[kb].size_kb = (uint32_t)x->u;
      if ((x = first_field(n->child, F_FILL_POLICY)))
        c->buffers[kb].fill_policy = (uint32_t)x->u;
      kb++;
      break;
    case F_DURATION_MS:
      c->duration_ms = (uint32_t)n->u;
      break;
    case F_FLUSH_PERIOD_MS:
      c->flush_period_ms = (uint32_t)n->u;
      break;
    case F_FILE_WRITE_PERIOD_MS:
      c->file_write_period_ms = (uint32_t)n->u;
      break;
    case F_WRITE_INTO_FILE:
      c->write_into_file = (int)n->u;
      break;
    case F_GPUPERF_OPTIONS:
      c->options_given = true;
      if ((x = first_field(n->child, F_DESCRIPTOR_MODE))) {
        if (x->u != 1 && x->u != 2)
          FAIL(x,
               "counter_descriptor_mode must be 1 (inline) or 2 "
               "(interned), not %llu",
               (unsigned long long)x->u);
        c->descriptor_mode = (uint32_t)x->u;
      }
      if ((x = first_field(n->child, F_MACHINE_ID)))
        c->machine_id = (uint32_t)x->u;
      if ((x = first_field(n->child, F_CODE_OBJECTS)))
        c->code_objects = x->u != 0;
      if ((x = first_field(n->child, F_SOURCE_LEVEL)))
        c->source_level = x->u != 0;
      break;
    default:
      break;
    }
  }
  for (const gp__tp_node *n = root; n; n = n->next) {
    if (n->field->id != F_DATA_SOURCES)
      continue;
    int rc = convert_source(c, n, err, err_size);
    if (rc != 0)
      return rc;
  }
  return 0;
}

/* See session.h. */
int gp_trace_config_parse(const char *text, size_t len, gp_trace_config **out,
                          char *err, size_t err_size) {
  if ((!text && len) || !out)
    return GP_EINVAL;
  gp_trace_config *c = config_new();
  if (!c)
    return GP_ENOMEM;
  gp__tp_node *root = NULL;
  int rc = gp__tp_parse(text ? text : "", len, &trace_msg, &c->arena, &root,
                        err, err_size);
  if (rc == 0)
    rc = convert(c, root, err, err_size);
  if (rc != 0) {
    gp_trace_config_destroy(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* Protobuf field numbers of the schema's fields (Perfetto's
 * data_source_config.proto, gpu_counter_config.proto,
 * gpu_renderstages_config.proto, vulkan_memory_config.proto,
 * ftrace_config.proto), for
 * configs that arrive encoded. */
static const uint32_t field_numbers[] = {[F_NAME] = 1,
                                         [F_TARGET_BUFFER] = 2,
                                         [F_GPU_COUNTER_CONFIG] = 108,
                                         [F_VULKAN_MEMORY_CONFIG] = 112,
                                         [F_GPU_RENDERSTAGES_CONFIG] = 133,
                                         [F_COUNTER_PERIOD_NS] = 1,
                                         [F_COUNTER_IDS] = 2,
                                         [F_INSTRUMENTED_SAMPLING] = 3,
                                         [F_FIX_GPU_CLOCK] = 4,
                                         [F_ISC] = 5,
                                         [F_COUNTER_NAMES] = 6,
                                         [F_NAME_FILTERS] = 3,
                                         [F_RANGES] = 5,
                                         [F_TX_INCLUDE] = 6,
                                         [F_TX_EXCLUDE] = 7,
                                         [F_NAME_GLOB] = 1,
                                         [F_NAME_BASE] = 2,
                                         [F_SKIP] = 1,
                                         [F_COUNT] = 2,
                                         [F_FULL_LOADSTORE] = 1,
                                         [F_LOW_OVERHEAD] = 2,
                                         [F_TRACE_METRICS] = 3,
                                         [F_TRACK_DRIVER] = 1,
                                         [F_TRACK_DEVICE] = 2,
                                         [F_FTRACE_CONFIG] = 100,
                                         [F_FTRACE_EVENTS] = 1,
                                         [F_FTRACE_BUFFER_SIZE_KB] = 10,
                                         [F_FTRACE_DRAIN_PERIOD_MS] = 11,
                                         [F_FTRACE_DRAIN_PERIOD_MS + 1] = 0};

/* See tconfig.h. */
int gp__trace_config_from_source(const uint8_t *p, size_t n,
                                 gp_trace_config **out, char *err,
                                 size_t err_size) {
  if ((!p && n) || !out)
    return GP_EINVAL;
  gp_trace_config *c = config_new();
  if (!c)
    return GP_ENOMEM;
  /* The tree of "data_sources { config { ...these bytes... } }". */
  gp__tp_node *fields = NULL;
  gp__tp_node *ds = gp__arena_alloc(&c->arena, sizeof(*ds));
  gp__tp_node *cfg = gp__arena_alloc(&c->arena, sizeof(*cfg));
  int rc = GP_ENOMEM;
  if (ds && cfg)
    rc = gp__tp_parse_binary(p, n, &dsc_msg, field_numbers, &c->arena, &fields,
                             err, err_size);
  if (rc == 0) {
    ds->field = &trace_fields[1];
    ds->child = cfg;
    cfg->field = &ds_fields[0];
    cfg->child = fields;
    rc = convert(c, ds, err, err_size);
  }
  if (rc != 0) {
    gp_trace_config_destroy(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* See session.h. */
int gp_trace_config_default(gp_trace_config **out) {
  /* Everything cheap: the log and the memory tracker are rare events
   * (Vulkan programs only; device memory, buffers and images). */
  static const char text[] =
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" } }\n"
      "data_sources { config { name: \"gpu.log\" } }\n"
      "data_sources { config { name: \"vulkan.memory_tracker\" } }\n";
  return gp_trace_config_parse(text, sizeof(text) - 1, out, NULL, 0);
}

/* See session.h. */
int gp_trace_config_add_counters(gp_trace_config *c, const char *names) {
  if (!c || !names)
    return GP_EINVAL;
  /* Validate the whole list before changing anything. */
  size_t count = 0;
  for (const char *p = names;; p++) {
    size_t len = strcspn(p, ",");
    if (len == 0)
      return GP_EINVAL;
    count++;
    p += len;
    if (!*p)
      break;
  }
  tc_source *s = NULL;
  for (uint32_t i = 0; i < c->nsrc && !s; i++)
    if (c->src[i].info.kind == GP_DATA_SOURCE_GPU_COUNTERS)
      s = &c->src[i];
  if (s && s->info.counters.num_counter_ids > 0)
    return GP_EINVAL;
  size_t have = s ? s->info.counters.num_counter_names : 0;
  if (have + count > GP_TRACE_CONFIG_MAX_COUNTERS)
    return GP_ERANGE;
  const char **v = gp__arena_alloc(&c->arena, (have + count + 1) * sizeof(*v));
  if (!v)
    return GP_ENOMEM;
  if (have)
    memcpy(v, s->info.counters.counter_names, have * sizeof(*v));
  size_t k = have;
  for (const char *p = names;; p++) {
    size_t len = strcspn(p, ",");
    if (!(v[k++] = gp__arena_strndup(&c->arena, p, len)))
      return GP_ENOMEM;
    p += len;
    if (!*p)
      break;
  }
  if (!s) {
    if (!(s = add_source(c)))
      return GP_ENOMEM;
    s->info.kind = GP_DATA_SOURCE_GPU_COUNTERS;
    s->info.name = "gpu.counters";
    s->info.vendor = "";
    if (index_source(c, s)) {
      c->nsrc--;
      return GP_ENOMEM;
    }
  }
  s->counter_config = true;
  s->info.counters.counter_names = v;
  s->info.counters.num_counter_names = k;
  return 0;
}

/* See session.h. */
int gp_trace_config_get_info(const gp_trace_config *c,
                             gp_trace_config_info *info) {
  if (!c || !info)
    return GP_EINVAL;
  memset(info, 0, sizeof(*info));
  info->num_data_sources = c->nsrc;
  info->num_buffers = c->nbuf;
  for (uint32_t i = 0; i < c->nbuf; i++)
    info->buffer_size_kb += c->buffers[i].size_kb;
  info->duration_ms = c->duration_ms;
  info->flush_period_ms = c->flush_period_ms;
  info->counter_descriptor_mode = c->descriptor_mode;
  info->machine_id = c->machine_id;
  return 0;
}

/* See tconfig.h. */
bool gp__trace_config_code_objects(const gp_trace_config *c) {
  return c && c->code_objects;
}

/* See tconfig.h. */
bool gp__trace_config_source_level(const gp_trace_config *c) {
  return c && c->source_level;
}

/* See session.h. */
int gp_trace_config_get_data_source(const gp_trace_config *c, uint32_t index,
                                    gp_data_source_info *info) {
  if (!c || !info)
    return GP_EINVAL;
  if (index >= c->nsrc)
    return GP_ENOENT;
  const tc_source *s = &c->src[index];
  *info = s->info;
  if (s->info.kind == GP_DATA_SOURCE_GPU_COUNTERS && !s->period_set &&
      !s->info.counters.instrumented)
    info->counters.counter_period_ns = GP_DEFAULT_COUNTER_PERIOD_NS;
  return 0;
}

static bool alnum_ascii(char ch) {
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
         (ch >= 'A' && ch <= 'Z');
}

static char lower_ascii(char ch) {
  return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* See tconfig.h. */
bool gp__vendor_suffix_matches(const char *suffix, const gp_device_info *di) {
  if (!*suffix || strcmp(suffix, "gpuperf") == 0)
    return true;
  const char *v = di->vendor ? di->vendor : "";
  size_t n = strlen(suffix);
  for (const char *p = v; *p;) {
    size_t k = 0;
    while (k < n && p[k] && lower_ascii(p[k]) == lower_ascii(suffix[k]))
      k++;
    /* p is where a word starts (or the string): the suffix must end
     * where a word does. */
    if (k == n && (!p[k] || !alnum_ascii(p[k]) || !alnum_ascii(p[k - 1])))
      return true;
    /* The next word. */
    while (*p && alnum_ascii(*p))
      p++;
    while (*p && !alnum_ascii(*p))
      p++;
  }
  return false;
}

/* See tconfig.h. */
int gp__trace_config_source_for(const gp_trace_config *c, uint32_t kind,
                                const gp_device_info *di) {
  int generic = -1;
  for (uint32_t i = 0; i < c->nsrc; i++) {
    const gp_data_source_info *ds = &c->src[i].info;
    if (ds->kind != kind)
      continue;
    if (!*ds->vendor || strcmp(ds->vendor, "gpuperf") == 0) {
      if (generic < 0)
        generic = (int)i;
    } else if (gp__vendor_suffix_matches(ds->vendor, di)) {
      return (int)i;
    }
  }
  return generic;
}

/* See session.h. */
void gp_trace_config_destroy(gp_trace_config *c) {
  if (!c)
    return;
  gp__arena_free(&c->arena);
  free(c->src);
  free(c->by_name);
  free(c);
}
