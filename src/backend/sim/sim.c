/*
 * sim.c - the public gp_sim_* calls: devices, contexts, streams, memory,
 * kernels, copies, fills and events of the simulated GPUs.
 *
 * Each call is bracketed by gp__sim_api_begin()/gp__sim_api_end(): they take
 * the simulator lock, allocate the correlation id, charge the call's virtual
 * cost, write the API record and retire finished work. Arguments are
 * validated completely before anything changes, so a failed call leaves
 * the simulator as it was (its API record, with the error code, is still
 * written: a profiler should show failed calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simInt.h"

sim_state gp__sim = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define VIRTUAL_EPOCH_NS 1000000000ull /* virtual time starts at 1 s */
#define DEVICE_ADDR_SHIFT 40           /* device i owns [(i+1)<<40, ...) */

/* Host cost of each call in virtual time, ns. */
static const uint32_t api_cost[GP_SIM_CBID_COUNT] = {
    [GP_SIM_CBID_CONTEXT_CREATE] = 120000,
    [GP_SIM_CBID_CONTEXT_DESTROY] = 40000,
    [GP_SIM_CBID_STREAM_CREATE] = 6000,
    [GP_SIM_CBID_STREAM_DESTROY] = 4000,
    [GP_SIM_CBID_STREAM_SET_NAME] = 300,
    [GP_SIM_CBID_MALLOC] = 9000,
    [GP_SIM_CBID_FREE] = 7000,
    [GP_SIM_CBID_HOST_REGISTER] = 25000,
    [GP_SIM_CBID_HOST_UNREGISTER] = 12000,
    [GP_SIM_CBID_KERNEL_CREATE] = 30000,
    [GP_SIM_CBID_KERNEL_DESTROY] = 2000,
    [GP_SIM_CBID_LAUNCH] = 3500,
    [GP_SIM_CBID_MEMCPY_ASYNC] = 2800,
    [GP_SIM_CBID_MEMCPY] = 3000,
    [GP_SIM_CBID_MEMSET_ASYNC] = 2600,
    [GP_SIM_CBID_EVENT_CREATE] = 1200,
    [GP_SIM_CBID_EVENT_DESTROY] = 800,
    [GP_SIM_CBID_EVENT_RECORD] = 1100,
    [GP_SIM_CBID_STREAM_WAIT_EVENT] = 900,
    [GP_SIM_CBID_EVENT_QUERY] = 400,
    [GP_SIM_CBID_EVENT_SYNCHRONIZE] = 700,
    [GP_SIM_CBID_EVENT_ELAPSED] = 300,
    [GP_SIM_CBID_STREAM_SYNCHRONIZE] = 900,
    [GP_SIM_CBID_CONTEXT_SYNCHRONIZE] = 1000,
    [GP_SIM_CBID_STREAM_SET_PERFMON] = 400,
    [GP_SIM_CBID_MALLOC_MANAGED] = 5000,
    [GP_SIM_CBID_HOST_ACCESS] = 200,
};

static GP_TLS bool tls_thread_named;

/* The virtual cost of a call, ns. */
uint64_t gp__sim_api_cost(uint32_t cbid) {
  return cbid < GP_SIM_CBID_COUNT ? api_cost[cbid] : 0;
}
GP_TLS bool gp__sim_locked;

/* ------------------------------------------------------------------ */
/* API bracketing                                                       */

static uint64_t virtual_clock(void) {
  return atomic_load_explicit(&gp__sim.vnow, memory_order_acquire);
}

static int init_locked(const gp_sim_config *cfg);

/*
 * Announces the catalogs of devices created since the last call (to the
 * env-triggered stat session, which starts sampling on them). Called
 * without the lock, so that what the announcement starts can take it.
 */
void gp__sim_announce(void) {
  uint32_t ids[GP_SIM_MAX_DEVICES], n;
  gp__sim_lock();
  n = atomic_load(&gp__sim.num_announce);
  memcpy(ids, gp__sim.announce, n * sizeof(*ids));
  atomic_store(&gp__sim.num_announce, 0);
  gp__sim_unlock();
  for (uint32_t i = 0; i < n; i++)
    gp__counters_announce(ids[i]);
}

/* Takes the lock, initialising with the defaults if needed. */
/* gp__death_set_defer's question: a program that uses the simulator
 * calls it again soon, and each call is a safe point to finish the
 * session (without DEATH_DEFER_S, finished in the handler after all). */
static bool sim_calls_soon(void) {
  return true;
}

/*
 * Starts a call: its correlation id and start time, with the lock held
 * from here to gp__sim_api_end. ctx and s: what the call names (either
 * may be NULL), for the callbacks' data. The API callbacks are called at
 * entry before the lock is taken and at exit after it is let go; RESOURCE
 * and SYNCHRONIZE callbacks raised inside are held until then
 * (gp__callback_hold), so that a callback may call the simulator.
 */
int gp__sim_api_begin_at(sim_api_call *c, uint32_t cbid,
                         const gp_sim_context *ctx, const gp_sim_stream *s) {
  gp__death_point(); /* no lock held: a signal noted since ends here */
  gp__activate();    /* before the lock: it may start sampling */
  c->cb = false;
  c->correlation_id = 0;
  if (GP_UNLIKELY(atomic_load_explicit(&gp__cb_mask, memory_order_relaxed) &
                  GP__CB_API_BIT(GP_API_DOMAIN_SIM))) {
    c->cb = true;
    c->correlation_id = gp__correlation_next();
    if (!ctx && s)
      ctx = s->ctx;
    c->api.d = (gp_callback_api_data){.api_domain = GP_API_DOMAIN_SIM,
                                      .cbid = cbid,
                                      .function_name = gp__sim_cbid_name(cbid),
                                      .correlation_id = c->correlation_id,
                                      .context_id = ctx ? ctx->id : 0,
                                      .stream_id = s ? s->id : 0,
                                      .thread_id = gp__tid()};
    gp__callback_api(&c->api, GP_CALLBACK_SITE_ENTER, 0);
  }
  gp__sim_lock();
  gp__callback_hold(&c->held);
  if (!gp__sim.initialised) {
    int rc = init_locked(NULL);
    if (rc != 0) {
      gp__sim_unlock();
      gp__callback_release(&c->held);
      if (c->cb)
        gp__callback_api(&c->api, GP_CALLBACK_SITE_EXIT, rc);
      return rc;
    }
  }
  if (!tls_thread_named) {
    tls_thread_named = true;
    char name[32] = "";
    pthread_getname_np(pthread_self(), name, sizeof(name));
    gp__emit_name(GP_OBJECT_THREAD, 0, 0, 0, gp__tid(), name);
  }
  c->cbid = cbid;
  if (!c->correlation_id)
    c->correlation_id = gp__correlation_next();
  c->start = gp__sim_now();
  return 0;
}

/* The string id of a call's name: interned once (ids live as long as the
 * process), not at every call. */
static uint32_t cbid_name_id(uint32_t cbid) {
  static _Atomic uint32_t ids[GP_SIM_CBID_COUNT];
  uint32_t id = atomic_load_explicit(&ids[cbid], memory_order_relaxed);
  if (GP_UNLIKELY(id == 0)) {
    id = gp__string_intern(gp__sim_cbid_name(cbid));
    atomic_store_explicit(&ids[cbid], id, memory_order_relaxed);
  }
  return id;
}

/* Charges the call, writes its API record, retires finished work and
 * drops the lock. Returns rc. */
int gp__sim_api_end(sim_api_call *c, int rc) {
  gp__sim_advance(api_cost[c->cbid]);
  uint64_t end = gp__sim_now();
  if (gp__activity_enabled(GP_ACTIVITY_KIND_API, 0)) {
    gp_activity_api *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_API, sizeof(*r), 0, 0);
    if (r) {
      r->correlation_id = c->correlation_id;
      r->start = c->start;
      r->end = end;
      r->process_id = gp__pid();
      r->thread_id = gp__tid();
      r->domain = GP_API_DOMAIN_SIM;
      r->cbid = c->cbid;
      r->name_id = cbid_name_id(c->cbid);
      r->return_value = rc;
      gp__activity_commit(r);
    }
  }
  gp__sim_retire(false);
  gp__sim_unlock();
  gp__callback_release(&c->held);
  if (c->cb)
    gp__callback_api(&c->api, GP_CALLBACK_SITE_EXIT, rc);
  if (GP_UNLIKELY(
          atomic_load_explicit(&gp__sim.num_announce, memory_order_relaxed)))
    gp__sim_announce();
  gp__death_point();
  return rc;
}

/* Writes a SYNCHRONIZATION record for call c (if enabled), ending now. */
void gp__sim_emit_sync(const sim_api_call *c, uint32_t kind, sim_device *d,
                       uint32_t context_id, uint32_t stream_id,
                       uint32_t event_id, uint64_t wait_id) {
  if (GP_UNLIKELY(atomic_load_explicit(&gp__cb_mask, memory_order_relaxed) &
                  GP__CB_BIT(GP_CALLBACK_DOMAIN_SYNCHRONIZE)) &&
      (kind == GP_SYNC_STREAM_SYNCHRONIZE ||
       kind == GP_SYNC_CONTEXT_SYNCHRONIZE)) {
    gp_callback_sync_data sd = {context_id, stream_id, c->correlation_id};
    gp__callback(GP_CALLBACK_DOMAIN_SYNCHRONIZE,
                 kind == GP_SYNC_STREAM_SYNCHRONIZE
                     ? GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED
                     : GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED,
                 &sd); /* delivered after the lock (held) */
  }
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, context_id))
    return;
  gp_activity_sync *r = gp__activity_reserve(GP_ACTIVITY_KIND_SYNCHRONIZATION,
                                             sizeof(*r), context_id, stream_id);
  if (!r)
    return;
  r->correlation_id = c->correlation_id;
  r->start = c->start;
  r->end = gp__sim_now();
  r->wait_id = wait_id;
  r->sync_kind = kind;
  r->device_id = d ? d->device_id : 0;
  r->context_id = context_id;
  r->stream_id = stream_id;
  r->event_id = event_id;
  r->reserved0 = 0;
  gp__activity_commit(r);
}

/* ------------------------------------------------------------------ */
/* Initialisation                                                       */

static uint64_t device_clock_read(void *user) {
  return gp__sim_device_time(user, gp__sim_now());
}

/* A simulated GPU runs at its model's clocks, always (the ENVIRONMENT
 * records show them): it never boosts on its own. */
static int auto_boost(void *user, uint32_t device_id, uint32_t context_id,
                      gp_auto_boost_state *state) {
  (void)user, (void)device_id, (void)context_id;
  state->enabled = 0;
  state->pid = 0;
  return 0;
}

static int parse_env_config(gp_sim_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  const char *devs = getenv("GPUPERF_SIM_DEVICES");
  if (!devs || !*devs)
    devs = "compute,compute,v3d";
  const char *p = devs;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (cfg->num_devices == GP_SIM_MAX_DEVICES)
      return GP_EINVAL;
    if (len == 7 && strncmp(p, "compute", 7) == 0)
      cfg->models[cfg->num_devices++] = GP_SIM_MODEL_COMPUTE;
    else if (len == 3 && strncmp(p, "v3d", 3) == 0)
      cfg->models[cfg->num_devices++] = GP_SIM_MODEL_V3D;
    else
      return GP_EINVAL;
    p += len;
    if (*p == ',')
      p++;
  }
  const char *tm = getenv("GPUPERF_SIM_TIME");
  if (tm && strcmp(tm, "real") == 0)
    cfg->time_mode = GP_SIM_TIME_REAL;
  else if (tm && *tm && strcmp(tm, "virtual") != 0)
    return GP_EINVAL;
  return 0;
}

static int validate_config(const gp_sim_config *cfg) {
  if (cfg->num_devices == 0 || cfg->num_devices > GP_SIM_MAX_DEVICES ||
      cfg->reserved0 != 0 ||
      (cfg->time_mode != GP_SIM_TIME_VIRTUAL &&
       cfg->time_mode != GP_SIM_TIME_REAL))
    return GP_EINVAL;
  for (uint32_t i = 0; i < cfg->num_devices; i++)
    if (!gp__sim_model_get(cfg->models[i]))
      return GP_EINVAL;
  return 0;
}

static void fill_device_info(const sim_model *m, uint32_t index,
                             uint32_t next_id, gp_device_info *info, char *name,
                             size_t name_size) {
  memset(info, 0, sizeof(*info));
  snprintf(name, name_size, m->name_fmt, next_id);
  info->api = GP_API_SIM;
  info->name = name;
  info->vendor = m->vendor;
  info->model = m->model_name;
  info->architecture = m->architecture;
  info->driver_version = m->driver_version;
  static const char tag[] = "gpuperf-sim-gpu";
  memcpy(info->uuid, tag, sizeof(tag) - 1);
  info->uuid[15] = (uint8_t)index;
  info->pci_bus = 0x17 + index * 0x10;
  info->global_memory_bytes = m->memory_bytes;
  info->memory_bandwidth_bytes_per_s = (uint64_t)m->dram_bw;
  info->compute_units = m->compute_units;
  info->core_clock_khz = m->core_clock_khz;
  info->memory_clock_khz = m->memory_clock_khz;
  info->max_threads_per_block = m->max_threads_per_block;
  info->max_shared_memory_per_block = m->shared_per_block;
  info->flags = GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
}

/* Initialises the simulator; caller holds the lock. */
static int init_locked(const gp_sim_config *cfg) {
  gp_sim_config envcfg;
  if (!cfg) {
    int rc = parse_env_config(&envcfg);
    if (rc != 0)
      return rc;
    cfg = &envcfg;
  }
  int rc = validate_config(cfg);
  if (rc != 0)
    return rc;
  gp__sim.time_mode = cfg->time_mode;
  if (cfg->time_mode == GP_SIM_TIME_VIRTUAL) {
    if (atomic_load(&gp__sim.vnow) == 0)
      atomic_store(&gp__sim.vnow, VIRTUAL_EPOCH_NS);
    gp__clock_set_virtual(virtual_clock);
  }
  uint32_t first = 0;
  gp_device_count(&first);
  for (uint32_t i = 0; i < cfg->num_devices; i++) {
    sim_device *d = &gp__sim.devices[i];
    memset(d, 0, sizeof(*d));
    d->m = gp__sim_model_get(cfg->models[i]);
    d->index = i;
    d->clock_epoch = gp__sim_now();
    d->clock_offset = 3000000000000ll + (int64_t)i * 250000000000ll;
    d->next_addr = (uint64_t)(i + 1) << DEVICE_ADDR_SHIFT;
    d->temp_c = d->m->idle_c;
    char clock_name[64];
    snprintf(clock_name, sizeof(clock_name), "sim-gpu%u", first + i);
    rc = gp_clock_register(clock_name, device_clock_read, d, &d->clock_id);
    if (rc != 0)
      return rc;
    gp__sim_clock_snapshot(d);
    gp_device_info info;
    char name[64];
    fill_device_info(d->m, i, first + i, &info, name, sizeof(name));
    info.clock_id = d->clock_id;
    rc = gp__device_register(&info, d->m->queues, d->m->num_queues,
                             &d->device_id);
    if (rc != 0)
      return rc;
    gp__device_set_auto_boost(d->device_id, auto_boost, d);
    d->next_env = gp__sim_now();
    if (gp__counters_register(d->device_id, gp__sim_catalog(d->m->model),
                              &gp__sim_provider, NULL) == 0)
      gp__sim.announce[atomic_fetch_add(&gp__sim.num_announce, 1)] =
          d->device_id;
  }
  gp__sim.num_devices = cfg->num_devices;
  gp__activity_add_flush_hook(gp__sim_flush_hook, NULL);
  gp__sim.initialised = true;
  gp__death_set_defer_if_unset(sim_calls_soon);
  return 0;
}

/* See sim.h. */
int gp_sim_config_from_env(gp_sim_config *cfg) {
  if (!cfg)
    return GP_EINVAL;
  int rc = parse_env_config(cfg);
  return rc != 0 ? rc : validate_config(cfg);
}

/* See sim.h. */
int gp_sim_init(const gp_sim_config *cfg) {
  gp__activate();
  gp__sim_lock();
  int rc = gp__sim.initialised ? GP_EBUSY : init_locked(cfg);
  gp__sim_unlock();
  gp__sim_announce();
  return rc;
}

static void context_free(gp_sim_context *ctx);

/* See sim.h. */
int gp_sim_shutdown(void) {
  gp__sim_lock();
  if (!gp__sim.initialised) {
    gp__sim_unlock();
    return GP_ESTATE;
  }
  gp__sim_retire(true);
  for (uint32_t i = 0; i < gp__sim.num_devices; i++) {
    /* Counters: the last windows, the last segment, the references. */
    sim_device *d = &gp__sim.devices[i];
    gp__sim_sampling_emit(d, gp__sim_now(), true);
    free(d->smp.log);
    gp__sampler_put(d->smp.s);
    memset(&d->smp, 0, sizeof(d->smp));
    gp__sim_perfmon_fold(d);
    gp_perfmon_put(d->pm.cur);
    gp_perfmon_put(d->pm.global);
    memset(&d->pm, 0, sizeof(d->pm));
  }
  for (size_t i = 0; i < gp__sim.num_contexts; i++)
    context_free(gp__sim.contexts[i]);
  free(gp__sim.contexts);
  gp__sim.contexts = NULL;
  gp__sim.num_contexts = gp__sim.cap_contexts = 0;
  free(gp__sim.heap);
  free(gp__sim.ops);
  free(gp__sim.free_slots);
  gp__sim.heap = NULL;
  gp__sim.ops = NULL;
  gp__sim.free_slots = NULL;
  gp__sim.heap_n = gp__sim.heap_cap = gp__sim.num_free = 0;
  free(gp__sim.pinned);
  gp__sim.pinned = NULL;
  gp__sim.num_pinned = gp__sim.cap_pinned = 0;
  for (uint32_t i = 0; i < gp__sim.num_devices; i++) {
    gp_clock_unregister(gp__sim.devices[i].clock_id);
    for (size_t j = 0; j < gp__sim.devices[i].num_allocs; j++)
      free(gp__sim.devices[i].allocs[j].where);
    free(gp__sim.devices[i].allocs);
  }
  gp__sim.num_devices = 0;
  gp__sim.initialised = false;
  gp__activity_remove_flush_hook(gp__sim_flush_hook, NULL);
  gp__sim_unlock();
  return 0;
}

/* See sim.h. */
int gp_sim_device_count(uint32_t *n) {
  gp__activate();
  if (!n)
    return GP_EINVAL;
  gp__sim_lock();
  int rc = gp__sim.initialised ? 0 : init_locked(NULL);
  *n = rc == 0 ? gp__sim.num_devices : 0;
  gp__sim_unlock();
  gp__sim_announce();
  return rc;
}

/* See sim.h. */
int gp_sim_device_id(uint32_t index, uint32_t *device_id) {
  gp__activate();
  if (!device_id)
    return GP_EINVAL;
  gp__sim_lock();
  int rc = gp__sim.initialised ? 0 : init_locked(NULL);
  if (rc == 0 && index >= gp__sim.num_devices)
    rc = GP_ENODEV;
  if (rc == 0)
    *device_id = gp__sim.devices[index].device_id;
  gp__sim_unlock();
  gp__sim_announce();
  return rc;
}

/* ------------------------------------------------------------------ */
/* Growable arrays                                                      */

/* Makes room for need elements of elem bytes in *arr (capacity *cap),
 * doubling. Returns 0, or GP_ENOMEM with *arr unchanged. */
int gp__sim_grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap < need)
    ncap *= 2;
  void *n = realloc(*arr, ncap * elem);
  if (!n)
    return GP_ENOMEM;
  *arr = n;
  *cap = ncap;
  return 0;
}

/* Removes pointer p from arr[0..*n) (order not kept), if present. */
void gp__sim_remove_ptr(void **arr, size_t *n, void *p) {
  for (size_t i = 0; i < *n; i++) {
    if (arr[i] == p) {
      arr[i] = arr[--*n];
      return;
    }
  }
}

/* ------------------------------------------------------------------ */
/* Contexts and streams                                                 */

static gp_sim_stream *stream_new(gp_sim_context *ctx) {
  if (gp__sim_grow((void **)&ctx->streams, &ctx->cap_streams,
                   ctx->num_streams + 1, sizeof(*ctx->streams)) != 0)
    return NULL;
  gp_sim_stream *s = calloc(1, sizeof(*s));
  if (!s)
    return NULL;
  s->ctx = ctx;
  s->id = ctx->next_stream_id++;
  s->ordinal = s->id - 1;
  ctx->streams[ctx->num_streams++] = s;
  return s;
}

/* Notes stream s (of a registered context) for gp_activity_get_*_id. */
static void stream_note(const gp_sim_stream *s) {
  gp__handle_put(GP_API_SIM, GP__HANDLE_STREAM, s, NULL, s->ctx->dev->device_id,
                 s->ctx->id, s->id);
}

static void stream_free(gp_sim_stream *s) {
  gp__handle_drop(GP_API_SIM, GP__HANDLE_STREAM, s, NULL);
  gp_perfmon_put(s->pm);
  free(s->waits);
  free(s);
}

static void context_free(gp_sim_context *ctx) {
  for (size_t i = 0; i < ctx->num_streams; i++)
    stream_free(ctx->streams[i]);
  free(ctx->streams);
  for (size_t i = 0; i < ctx->num_events; i++)
    free(ctx->events[i]);
  free(ctx->events);
  sim_device *d = ctx->dev;
  size_t k = 0;
  for (size_t i = 0; i < d->num_allocs; i++) {
    if (d->allocs[i].context_id != ctx->id)
      d->allocs[k++] = d->allocs[i];
    else
      free(d->allocs[i].where);
  }
  d->num_allocs = k;
  gp__handle_drop(GP_API_SIM, GP__HANDLE_CONTEXT, ctx, NULL);
  gp__context_unregister(ctx->id);
  gp_perfmon_put(ctx->pm);
  free(ctx);
}

/* True if ctx is a context the simulator knows (not destroyed). */
bool gp__sim_context_live(const gp_sim_context *ctx) {
  for (size_t i = 0; i < gp__sim.num_contexts; i++)
    if (gp__sim.contexts[i] == ctx)
      return true;
  return false;
}

/* See sim.h. */
int gp_sim_context_create(uint32_t index, gp_sim_context **out) {
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_CONTEXT_CREATE);
  if (rc != 0)
    return rc;
  if (!out)
    return gp__sim_api_end(&c, GP_EINVAL);
  if (index >= gp__sim.num_devices)
    return gp__sim_api_end(&c, GP_ENODEV);
  if (gp__sim_grow((void **)&gp__sim.contexts, &gp__sim.cap_contexts,
                   gp__sim.num_contexts + 1, sizeof(*gp__sim.contexts)) != 0)
    return gp__sim_api_end(&c, GP_ENOMEM);
  gp_sim_context *ctx = calloc(1, sizeof(*ctx));
  if (!ctx)
    return gp__sim_api_end(&c, GP_ENOMEM);
  ctx->dev = &gp__sim.devices[index];
  ctx->next_stream_id = 1;
  ctx->next_event_id = 1;
  ctx->default_stream = stream_new(ctx);
  if (!ctx->default_stream) {
    free(ctx->streams);
    free(ctx);
    return gp__sim_api_end(&c, GP_ENOMEM);
  }
  rc = gp__context_register(ctx->dev->device_id, GP_API_SIM,
                            ctx->default_stream->id, &ctx->id);
  if (rc != 0) {
    context_free(ctx);
    return gp__sim_api_end(&c, rc);
  }
  gp__sim.contexts[gp__sim.num_contexts++] = ctx;
  gp__handle_put(GP_API_SIM, GP__HANDLE_CONTEXT, ctx, NULL, ctx->dev->device_id,
                 ctx->id, ctx->default_stream->id);
  stream_note(ctx->default_stream);
  gp__sim_clock_snapshot(ctx->dev);
  *out = ctx;
  c.api.d.context_id = ctx->id; /* the exit's data names it */
  c.api.d.stream_id = ctx->default_stream->id;
  return gp__sim_api_end(&c, 0);
}

/* When the last work of any stream of ctx ends (host ns); its
 * correlation id in *corr (0 if none). */
uint64_t gp__sim_context_tail(const gp_sim_context *ctx, uint64_t *corr) {
  uint64_t t = 0;
  *corr = 0;
  for (size_t i = 0; i < ctx->num_streams; i++) {
    if (ctx->streams[i]->tail_end >= t) {
      t = ctx->streams[i]->tail_end;
      *corr = ctx->streams[i]->tail_corr;
    }
  }
  return t;
}

/* See sim.h. */
int gp_sim_context_destroy(gp_sim_context *ctx) {
  if (!ctx)
    return 0;
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_CONTEXT_DESTROY, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  uint64_t corr;
  gp__sim_wait_until(gp__sim_context_tail(ctx, &corr));
  gp__sim_remove_ptr((void **)gp__sim.contexts, &gp__sim.num_contexts, ctx);
  context_free(ctx);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
uint32_t gp_sim_context_id(const gp_sim_context *ctx) {
  return ctx ? ctx->id : 0;
}

/* Raises a RESOURCE callback of stream s (delivered after the lock). */
static void stream_event(const gp_sim_stream *s, uint32_t cbid) {
  gp__callback_resource(cbid, GP_API_SIM, s->ctx->dev->device_id, s->ctx->id,
                        s->id);
}

/* See sim.h. */
int gp_sim_stream_create(gp_sim_context *ctx, gp_sim_stream **out) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_CREATE, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!ctx || !out || !gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  gp_sim_stream *s = stream_new(ctx);
  if (!s)
    return gp__sim_api_end(&c, GP_ENOMEM);
  *out = s;
  stream_note(s);
  c.api.d.stream_id = s->id; /* the exit's data names it */
  stream_event(s, GP_CALLBACK_RESOURCE_STREAM_CREATED);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_stream_destroy(gp_sim_stream *s) {
  if (!s)
    return 0;
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_DESTROY, NULL, s);
  if (rc != 0)
    return rc;
  if (s == s->ctx->default_stream)
    return gp__sim_api_end(&c, GP_EINVAL);
  stream_event(s, GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING);
  /* Work already scheduled carries its own copy of what it needs. */
  gp__sim_remove_ptr((void **)s->ctx->streams, &s->ctx->num_streams, s);
  stream_free(s);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
gp_sim_stream *gp_sim_default_stream(gp_sim_context *ctx) {
  return ctx ? ctx->default_stream : NULL;
}

/* See sim.h. */
uint32_t gp_sim_stream_id(const gp_sim_stream *s) {
  return s ? s->id : 0;
}

/* See sim.h. */
int gp_sim_stream_set_name(gp_sim_stream *s, const char *name) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_SET_NAME, NULL, s);
  if (rc != 0)
    return rc;
  if (!s || !name)
    return gp__sim_api_end(&c, GP_EINVAL);
  gp__emit_name(GP_OBJECT_STREAM, s->ctx->dev->device_id, s->ctx->id, s->id, 0,
                name);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_stream_set_perfmon(gp_sim_stream *s, gp_perfmon *pm) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_SET_PERFMON, NULL, s);
  if (rc != 0)
    return rc;
  if (!s || !gp__sim_context_live(s->ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  if (pm && pm->device_id != s->ctx->dev->device_id)
    return gp__sim_api_end(&c, GP_EINVAL);
  if (pm && atomic_load(&pm->destroyed))
    return gp__sim_api_end(&c, GP_ENOENT);
  gp_perfmon_put(s->pm);
  s->pm = gp_perfmon_get(pm);
  return gp__sim_api_end(&c, 0);
}

/* ------------------------------------------------------------------ */
/* Memory                                                               */

/* The allocation of d covering [addr, addr + bytes), or NULL. */
sim_alloc *gp__sim_find_alloc(sim_device *d, uint64_t addr, uint64_t bytes) {
  for (size_t i = 0; i < d->num_allocs; i++) {
    sim_alloc *a = &d->allocs[i];
    if (addr >= a->addr && addr - a->addr < a->bytes &&
        bytes <= a->bytes - (addr - a->addr))
      return a;
  }
  return NULL;
}

/* The simulator device whose address range holds addr, or NULL. */
sim_device *gp__sim_device_of(uint64_t addr) {
  uint64_t i = addr >> DEVICE_ADDR_SHIFT;
  if (i == 0 || i > gp__sim.num_devices)
    return NULL;
  return &gp__sim.devices[i - 1];
}

static uint64_t used_bytes(const sim_device *d) {
  uint64_t n = 0;
  for (size_t i = 0; i < d->num_allocs; i++)
    n += d->allocs[i].bytes;
  return n;
}

/* gp_sim_malloc and gp_sim_malloc_managed: call cbid; managed memory
 * starts with every page nowhere. */
static int sim_malloc(uint32_t cbid, gp_sim_context *ctx, uint64_t bytes,
                      uint64_t *addr) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, cbid, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!ctx || !addr || bytes == 0 || !gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  sim_device *d = ctx->dev;
  if (bytes > d->m->memory_bytes - used_bytes(d))
    return gp__sim_api_end(&c, GP_ENOMEM);
  uint8_t *where = NULL;
  if (cbid == GP_SIM_CBID_MALLOC_MANAGED &&
      !(where = calloc((bytes + GP_SIM_UM_PAGE - 1) / GP_SIM_UM_PAGE, 1)))
    return gp__sim_api_end(&c, GP_ENOMEM);
  if (gp__sim_grow((void **)&d->allocs, &d->cap_allocs, d->num_allocs + 1,
                   sizeof(*d->allocs)) != 0) {
    free(where);
    return gp__sim_api_end(&c, GP_ENOMEM);
  }
  /* Managed ranges start on a page, so pages are the allocation's own. */
  uint64_t align = where ? GP_SIM_UM_PAGE : 256;
  uint64_t a = (d->next_addr + align - 1) & ~(align - 1);
  d->next_addr = a + bytes;
  d->allocs[d->num_allocs++] = (sim_alloc){a, bytes, ctx->id, where};
  *addr = a;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_malloc(gp_sim_context *ctx, uint64_t bytes, uint64_t *addr) {
  return sim_malloc(GP_SIM_CBID_MALLOC, ctx, bytes, addr);
}

/* See sim.h. */
int gp_sim_malloc_managed(gp_sim_context *ctx, uint64_t bytes, uint64_t *addr) {
  return sim_malloc(GP_SIM_CBID_MALLOC_MANAGED, ctx, bytes, addr);
}

/* See sim.h. */
int gp_sim_free(gp_sim_context *ctx, uint64_t addr) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_FREE, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!ctx || !gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  sim_device *d = ctx->dev;
  for (size_t i = 0; i < d->num_allocs; i++) {
    if (d->allocs[i].addr == addr && d->allocs[i].context_id == ctx->id) {
      free(d->allocs[i].where);
      d->allocs[i] = d->allocs[--d->num_allocs];
      return gp__sim_api_end(&c, 0);
    }
  }
  return gp__sim_api_end(&c, GP_ENOENT);
}

/* True if [addr, addr + bytes) lies in a registered pinned range. */
bool gp__sim_host_pinned(uint64_t addr, uint64_t bytes) {
  for (size_t i = 0; i < gp__sim.num_pinned; i++) {
    uint64_t a = gp__sim.pinned[i].addr, n = gp__sim.pinned[i].bytes;
    if (addr >= a && addr - a < n && bytes <= n - (addr - a))
      return true;
  }
  return false;
}

/* See sim.h. */
int gp_sim_host_register(const void *ptr, uint64_t bytes) {
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_HOST_REGISTER);
  if (rc != 0)
    return rc;
  uint64_t a = GP_SIM_HOST(ptr);
  if (!ptr || bytes == 0 || gp__sim_device_of(a))
    return gp__sim_api_end(&c, GP_EINVAL);
  for (size_t i = 0; i < gp__sim.num_pinned; i++)
    if (gp__sim.pinned[i].addr == a)
      return gp__sim_api_end(&c, GP_EEXIST);
  if (gp__sim_grow((void **)&gp__sim.pinned, &gp__sim.cap_pinned,
                   gp__sim.num_pinned + 1, sizeof(*gp__sim.pinned)) != 0)
    return gp__sim_api_end(&c, GP_ENOMEM);
  gp__sim.pinned[gp__sim.num_pinned].addr = a;
  gp__sim.pinned[gp__sim.num_pinned].bytes = bytes;
  gp__sim.num_pinned++;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_host_unregister(const void *ptr) {
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_HOST_UNREGISTER);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < gp__sim.num_pinned; i++) {
    if (gp__sim.pinned[i].addr == GP_SIM_HOST(ptr)) {
      gp__sim.pinned[i] = gp__sim.pinned[--gp__sim.num_pinned];
      return gp__sim_api_end(&c, 0);
    }
  }
  return gp__sim_api_end(&c, GP_ENOENT);
}

/* See sim.h. */
int gp_sim_host_work(uint64_t ns) {
  gp__activate();
  gp__sim_lock();
  int rc = gp__sim.initialised ? 0 : init_locked(NULL);
  if (rc == 0)
    gp__sim_wait_until(gp__sim_now() + ns);
  if (rc == 0)
    gp__sim_retire(false);
  gp__sim_unlock();
  gp__sim_announce();
  return rc;
}
