/*
 * sim_work.c - the gp_sim_* calls that put work on the simulated GPUs:
 * kernels and launches, copies and fills, events and synchronisation.
 * The calls that set up devices, contexts, streams and memory are in
 * sim.c; both bracket every call with gp__sim_api_begin()/_end().
 */
#include <stdlib.h>
#include <string.h>

#include "simInt.h"

/* ------------------------------------------------------------------ */
/* Kernels                                                              */

static bool finite_nonneg(double v) {
  return v >= 0.0 && v < 1e300;
}

/*
 * The MODULE (load, or unload) and FUNCTION records of kernel k, if
 * enabled. A simulated kernel has no code and no context: it is its own
 * module, of one function (index 0), usable in any context (context 0),
 * and its module and function ids are its serial. Its size is unknown.
 */
static void emit_module(const gp_sim_kernel *k, bool unload) {
  uint64_t now = gp__sim_now();
  if (gp__activity_enabled(GP_ACTIVITY_KIND_MODULE, 0)) {
    gp_activity_module *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_MODULE, sizeof(*r), 0, 0);
    if (r) {
      r->timestamp = now;
      r->size_bytes = 0;
      r->context_id = 0;
      r->module_id = (uint32_t)k->serial;
      r->flags = unload ? GP_ACTIVITY_FLAG_MODULE_UNLOAD : 0;
      r->name_id = k->name_id;
      gp__activity_commit(r);
    }
  }
  if (unload || !gp__activity_enabled(GP_ACTIVITY_KIND_FUNCTION, 0))
    return;
  gp_activity_function *f =
      gp__activity_reserve(GP_ACTIVITY_KIND_FUNCTION, sizeof(*f), 0, 0);
  if (!f)
    return;
  f->timestamp = now;
  f->id = (uint32_t)k->serial;
  f->context_id = 0;
  f->module_id = (uint32_t)k->serial;
  f->function_index = 0;
  f->name_id = k->name_id;
  f->reserved0 = 0;
  gp__activity_commit(f);
}

/* Serials of kernels: never reused (a kernel at a freed one's address is
 * another kernel to sim_job_key). Under the simulator lock. */
static uint64_t last_kernel_serial;

/* See sim.h. */
int gp_sim_kernel_create(const gp_sim_kernel_desc *desc, gp_sim_kernel **out) {
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_KERNEL_CREATE);
  if (rc != 0)
    return rc;
  if (!desc || !out || !desc->name || !*desc->name ||
      !finite_nonneg(desc->flops_per_thread) ||
      !finite_nonneg(desc->bytes_per_thread) ||
      !(desc->read_fraction >= 0.0 && desc->read_fraction <= 1.0) ||
      !(desc->cache_locality >= 0.0 && desc->cache_locality <= 1.0))
    return gp__sim_api_end(&c, GP_EINVAL);
  gp_sim_kernel *k = calloc(1, sizeof(*k));
  char *name = strdup(desc->name);
  char *dem = strdup(desc->demangled_name ? desc->demangled_name : desc->name);
  if (!k || !name || !dem) {
    free(k);
    free(name);
    free(dem);
    return gp__sim_api_end(&c, GP_ENOMEM);
  }
  k->desc = *desc;
  k->desc.name = name;
  k->desc.demangled_name = dem;
  k->name_id = gp__string_intern(name);
  k->demangled_id = gp__string_intern(dem);
  k->serial = ++last_kernel_serial;
  emit_module(k, false);
  *out = k;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_kernel_destroy(gp_sim_kernel *k) {
  if (!k)
    return 0;
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_KERNEL_DESTROY);
  if (rc != 0)
    return rc;
  emit_module(k, true);
  free((char *)k->desc.name);
  free((char *)k->desc.demangled_name);
  free(k);
  return gp__sim_api_end(&c, 0);
}

/* Fills the fields common to every op submitted on s. */
static void op_init(sim_op *op, uint32_t kind, const sim_api_call *c,
                    gp_sim_stream *s, uint32_t queue) {
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  op->correlation_id = c->correlation_id;
  op->queued = gp__sim_now() + gp__sim_api_cost(c->cbid);
  op->device_id = s->ctx->dev->device_id;
  op->dev_index = s->ctx->dev->index;
  op->context_id = s->ctx->id;
  op->stream_id = s->id;
  op->key.queue = queue;
  op->emit = gp__activity_enabled(kind, s->ctx->id);
}

static uint32_t compute_queue(const gp_sim_stream *s) {
  const sim_model *m = s->ctx->dev->m;
  return m->first_compute + s->ordinal % m->num_compute;
}

/*
 * Sets op->pm to the perfmon that counts a job on s: the device's global
 * one, else the one the job carries, the stream's, else the context's (an
 * active monitor's). GP_ENOENT if the job's was destroyed, GP_EAGAIN if
 * the job carries one while the device has a global perfmon (as the V3D
 * submit ioctls answer).
 */
static inline __attribute__((always_inline)) int
job_perfmon(const gp_sim_stream *s, sim_op *op) {
  gp_perfmon *pm = s->pm ? s->pm : s->ctx->pm;
  gp_perfmon *global = s->ctx->dev->pm.global;
  if (pm && atomic_load_explicit(&pm->destroyed, memory_order_relaxed))
    return GP_ENOENT;
  if (pm && global)
    return GP_EAGAIN;
  op->pm = pm ? pm : global;
  return 0;
}

/* Whether launch attributes a are all valid for a launch of grid on s
 * (a reserved field, a managed range, the child launch). */
static bool attrs_valid(const gp_sim_stream *s, gp_sim_dim3 grid,
                        const gp_sim_launch_attrs *a) {
  for (size_t i = 0; i < GP_ARRAY_SIZE(a->reserved); i++)
    if (a->reserved[i])
      return false;
  if (a->num_managed &&
      (!a->managed || !gp__sim_um_check(s, a->managed, a->num_managed)))
    return false;
  if (!a->cdp_blocks)
    return true;
  const sim_model *m = s->ctx->dev->m;
  const gp_sim_kernel *k = a->cdp_child;
  gp_sim_dim3 g = a->cdp_grid, b = a->cdp_block;
  if (!k || (uint64_t)a->cdp_blocks > (uint64_t)grid.x * grid.y * grid.z ||
      !g.x || !g.y || !g.z || !b.x || !b.y || !b.z || a->cdp_sync > 1)
    return false;
  return (uint64_t)b.x * b.y * b.z <= m->max_threads_per_block &&
         (uint64_t)k->desc.static_shared_memory + a->cdp_dynamic_shared <=
             m->shared_per_block;
}

/*
 * What attrs (valid) add to a kernel op on s that takes *dur alone: the
 * managed memory's faults before its work, the child grids, their work
 * in op->stats; *dur becomes the whole. op->extra gets them (NULL if
 * none). GP_ENOMEM with nothing changed if memory runs out.
 */
static int launch_extra(gp_sim_stream *s, sim_op *op, gp_sim_dim3 grid,
                        const gp_sim_launch_attrs *a, uint64_t *dur) {
  uint32_t nf = a->num_managed, nc = a->cdp_blocks;
  if (!nf && !nc)
    return 0;
  sim_extra *x = calloc(1, sizeof(*x) + nf * sizeof(sim_um_fault) +
                               nc * sizeof(sim_cdp_child));
  if (!x)
    return GP_ENOMEM;
  x->nfaults = nf;
  x->nchildren = nc;
  x->faults = (sim_um_fault *)(x + 1);
  x->children = (sim_cdp_child *)(x->faults + nf);
  uint64_t fault_ns = 0;
  if (nf)
    gp__sim_um_faults(s, a->managed, nf, x->faults, &fault_ns);
  uint64_t work = *dur;
  if (nc) {
    const gp_sim_kernel *k = a->cdp_child;
    sim_work_stats cs;
    uint64_t child =
        gp__sim_kernel_cost(s->ctx->dev->m, &k->desc, a->cdp_grid, a->cdp_block,
                            a->cdp_dynamic_shared, &cs);
    work = gp__sim_cdp_plan(s->ctx->dev->m, work, child, nc, a->cdp_sync != 0,
                            x->children);
    for (uint32_t i = 0; i < nc; i++) {
      sim_cdp_child *c = &x->children[i];
      c->queued += fault_ns;
      c->submitted += fault_ns;
      c->start += fault_ns;
      c->end += fault_ns;
    }
    double *dst = (double *)&op->stats;
    const double *src = (const double *)&cs;
    for (size_t i = 1; i < sizeof(cs) / sizeof(double); i++)
      dst[i] += src[i] * nc; /* not `kernels`: one launch */
    x->child_name_id = k->name_id;
    x->child_static_shared = k->desc.static_shared_memory;
    x->child_registers = k->desc.registers_per_thread;
    x->child_dynamic_shared = a->cdp_dynamic_shared;
    x->child_grid = a->cdp_grid;
    x->child_block = a->cdp_block;
    x->parent_grid = grid;
    x->sync = a->cdp_sync != 0;
  }
  *dur = fault_ns + work;
  uint32_t ctx = s->ctx->id;
  x->records =
      (nf &&
       gp__activity_enabled(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, ctx)) ||
      (nc &&
       (gp__activity_enabled(GP_ACTIVITY_KIND_KERNEL, ctx) ||
        gp__activity_enabled(GP_ACTIVITY_KIND_CDP_KERNEL, ctx) ||
        (x->sync && gp__activity_enabled(GP_ACTIVITY_KIND_PREEMPTION, ctx))));
  op->extra = x;
  /* Not a repeat of any launch: its work and time depend on more than
   * the key (sim_job_key). */
  op->key.kernel = 0;
  return 0;
}

/* gp_sim_launch and gp_sim_launch_ex (attrs NULL: none). */
static int launch(gp_sim_stream *s, const gp_sim_kernel *k, gp_sim_dim3 grid,
                  gp_sim_dim3 block, uint32_t dynamic_shared_memory,
                  const gp_sim_launch_attrs *attrs) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_LAUNCH, NULL, s);
  if (rc != 0)
    return rc;
  if (!s || !k || !grid.x || !grid.y || !grid.z || !block.x || !block.y ||
      !block.z)
    return gp__sim_api_end(&c, GP_EINVAL);
  const sim_model *m = s->ctx->dev->m;
  uint64_t tpb = (uint64_t)block.x * block.y * block.z;
  if (tpb > m->max_threads_per_block ||
      (uint64_t)k->desc.static_shared_memory + dynamic_shared_memory >
          m->shared_per_block ||
      (attrs && !attrs_valid(s, grid, attrs)))
    return gp__sim_api_end(&c, GP_EINVAL);
  sim_op op;
  op_init(&op, GP_ACTIVITY_KIND_KERNEL, &c, s, compute_queue(s));
  op.name_id = k->name_id;
  op.demangled_id = k->demangled_id;
  op.key.kernel = k->serial;
  op.key.grid = grid;
  op.key.block = block;
  op.key.dynamic_shared = dynamic_shared_memory;
  op.static_shared = k->desc.static_shared_memory;
  op.registers = k->desc.registers_per_thread;
  gp__sim_source_prepare(&op, &k->desc);
  rc = job_perfmon(s, &op);
  if (rc != 0)
    return gp__sim_api_end(&c, rc);
  uint64_t dur = gp__sim_kernel_cost(m, &k->desc, grid, block,
                                     dynamic_shared_memory, &op.stats);
  if (attrs && (rc = launch_extra(s, &op, grid, attrs, &dur)) != 0)
    return gp__sim_api_end(&c, rc);
  gp__sampler *smp = s->ctx->dev->smp.s;
  if (GP_UNLIKELY(smp != NULL) && smp->instrumented &&
      gp__sampler_instrument(smp, k->desc.name, k->desc.demangled_name))
    op.instr = gp__sampler_get(smp);
  rc = gp__sim_schedule(s, &op, dur);
  if (rc != 0) {
    gp__sampler_put(op.instr);
    free(op.extra);
  }
  return gp__sim_api_end(&c, rc);
}

/* See sim.h. */
int gp_sim_launch(gp_sim_stream *s, const gp_sim_kernel *k, gp_sim_dim3 grid,
                  gp_sim_dim3 block, uint32_t dynamic_shared_memory) {
  return launch(s, k, grid, block, dynamic_shared_memory, NULL);
}

/* See sim.h. */
int gp_sim_launch_ex(gp_sim_stream *s, const gp_sim_kernel *k, gp_sim_dim3 grid,
                     gp_sim_dim3 block, uint32_t dynamic_shared_memory,
                     const gp_sim_launch_attrs *attrs) {
  return launch(s, k, grid, block, dynamic_shared_memory, attrs);
}

/* ------------------------------------------------------------------ */
/* Copies and fills                                                     */

/* Validates a copy and fills the op's copy fields. Returns 0 or an
 * error; changes nothing else. */
static int prepare_copy(gp_sim_stream *s, uint64_t dst, uint64_t src,
                        uint64_t bytes, gp_memcpy_kind kind, sim_op *op) {
  sim_device *sd = s->ctx->dev;
  sim_device *src_dev = gp__sim_device_of(src),
             *dst_dev = gp__sim_device_of(dst);
  sim_alloc *sa = src_dev ? gp__sim_find_alloc(src_dev, src, bytes) : NULL;
  sim_alloc *da = dst_dev ? gp__sim_find_alloc(dst_dev, dst, bytes) : NULL;
  const sim_model *m = sd->m;
  if (bytes == 0 || !src || !dst)
    return GP_EINVAL;
  switch (kind) {
  case GP_MEMCPY_HTOD:
    if (src_dev || dst_dev != sd || !da)
      return GP_EINVAL;
    op->key.queue = m->q_h2d;
    break;
  case GP_MEMCPY_DTOH:
    if (dst_dev || src_dev != sd || !sa)
      return GP_EINVAL;
    op->key.queue = m->q_d2h;
    break;
  case GP_MEMCPY_DTOD:
    if (src_dev != sd || dst_dev != sd || !sa || !da)
      return GP_EINVAL;
    op->key.queue = compute_queue(s);
    break;
  case GP_MEMCPY_PTOP:
    if (!sa || !da || src_dev == dst_dev || (src_dev != sd && dst_dev != sd))
      return GP_EINVAL;
    op->key.queue = m->q_p2p;
    break;
  case GP_MEMCPY_HTOH:
    if (src_dev || dst_dev)
      return GP_EINVAL;
    op->key.queue = m->q_h2d;
    break;
  case GP_MEMCPY_HTOA:
  case GP_MEMCPY_ATOH:
  case GP_MEMCPY_ATOA:
  case GP_MEMCPY_ATOD:
  case GP_MEMCPY_DTOA:
    return GP_ENOTSUP;
  default:
    return GP_EINVAL;
  }
  op->bytes = bytes;
  op->copy_kind = kind;
  op->src_kind = src_dev                           ? GP_MEMORY_DEVICE
                 : gp__sim_host_pinned(src, bytes) ? GP_MEMORY_PINNED
                                                   : GP_MEMORY_PAGEABLE;
  op->dst_kind = dst_dev                           ? GP_MEMORY_DEVICE
                 : gp__sim_host_pinned(dst, bytes) ? GP_MEMORY_PINNED
                                                   : GP_MEMORY_PAGEABLE;
  op->src_device = src_dev ? src_dev->device_id : UINT32_MAX;
  op->dst_device = dst_dev ? dst_dev->device_id : UINT32_MAX;
  op->src_context = sa ? sa->context_id : 0;
  op->dst_context = da ? da->context_id : 0;
  return 0;
}

static int copy_locked(const sim_api_call *c, gp_sim_stream *s, uint64_t dst,
                       uint64_t src, uint64_t bytes, gp_memcpy_kind kind,
                       bool async) {
  if (!s)
    return GP_EINVAL;
  sim_op op;
  op_init(&op, GP_ACTIVITY_KIND_MEMCPY, c, s, 0);
  int rc = prepare_copy(s, dst, src, bytes, kind, &op);
  if (rc != 0)
    return rc;
  op.flags = async ? GP_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  rc = job_perfmon(s, &op);
  if (rc != 0)
    return rc;
  uint64_t dur = gp__sim_copy_cost(s->ctx->dev->m, op.copy_kind, op.src_kind,
                                   op.dst_kind, bytes);
  return gp__sim_schedule(s, &op, dur);
}

/* See sim.h. */
int gp_sim_memcpy_async(gp_sim_stream *s, uint64_t dst, uint64_t src,
                        uint64_t bytes, gp_memcpy_kind kind) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_MEMCPY_ASYNC, NULL, s);
  if (rc != 0)
    return rc;
  return gp__sim_api_end(&c, copy_locked(&c, s, dst, src, bytes, kind, true));
}

/* See sim.h. */
int gp_sim_memcpy(gp_sim_stream *s, uint64_t dst, uint64_t src, uint64_t bytes,
                  gp_memcpy_kind kind) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_MEMCPY, NULL, s);
  if (rc != 0)
    return rc;
  rc = copy_locked(&c, s, dst, src, bytes, kind, false);
  if (rc == 0)
    gp__sim_wait_until(s->tail_end);
  return gp__sim_api_end(&c, rc);
}

/* See sim.h. */
int gp_sim_memset_async(gp_sim_stream *s, uint64_t dst, uint32_t value,
                        uint64_t bytes) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_MEMSET_ASYNC, NULL, s);
  if (rc != 0)
    return rc;
  if (!s || bytes == 0 || gp__sim_device_of(dst) != s->ctx->dev ||
      !gp__sim_find_alloc(s->ctx->dev, dst, bytes))
    return gp__sim_api_end(&c, GP_EINVAL);
  sim_op op;
  op_init(&op, GP_ACTIVITY_KIND_MEMSET, &c, s, compute_queue(s));
  op.bytes = bytes;
  op.value = value;
  op.flags = GP_ACTIVITY_FLAG_MEMCPY_ASYNC;
  rc = job_perfmon(s, &op);
  if (rc != 0)
    return gp__sim_api_end(&c, rc);
  uint64_t dur = gp__sim_fill_cost(s->ctx->dev->m, bytes);
  return gp__sim_api_end(&c, gp__sim_schedule(s, &op, dur));
}

/* ------------------------------------------------------------------ */
/* Events and synchronisation                                           */

/* See sim.h. */
int gp_sim_event_create(gp_sim_context *ctx, gp_sim_event **out) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_EVENT_CREATE, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!ctx || !out || !gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  if (gp__sim_grow((void **)&ctx->events, &ctx->cap_events, ctx->num_events + 1,
                   sizeof(*ctx->events)) != 0)
    return gp__sim_api_end(&c, GP_ENOMEM);
  gp_sim_event *e = calloc(1, sizeof(*e));
  if (!e)
    return gp__sim_api_end(&c, GP_ENOMEM);
  e->ctx = ctx;
  e->id = ctx->next_event_id++;
  e->dev_index = ctx->dev->index;
  ctx->events[ctx->num_events++] = e;
  *out = e;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_event_destroy(gp_sim_event *e) {
  if (!e)
    return 0;
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_EVENT_DESTROY,
                                e ? e->ctx : NULL, NULL);
  if (rc != 0)
    return rc;
  gp__sim_remove_ptr((void **)e->ctx->events, &e->ctx->num_events, e);
  free(e);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_event_record(gp_sim_event *e, gp_sim_stream *s) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_EVENT_RECORD, NULL, s);
  if (rc != 0)
    return rc;
  if (!e || !s)
    return gp__sim_api_end(&c, GP_EINVAL);
  uint64_t done = s->tail_end;
  for (uint32_t i = 0; i < s->num_waits; i++)
    if (s->waits[i].done_at > done)
      done = s->waits[i].done_at;
  uint64_t now = gp__sim_now();
  e->recorded = true;
  e->correlation_id = s->tail_corr;
  e->done_at = done > now ? done : now;
  e->dev_index = s->ctx->dev->index;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_stream_wait_event(gp_sim_stream *s, gp_sim_event *e) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_WAIT_EVENT, NULL, s);
  if (rc != 0)
    return rc;
  if (!s || !e)
    return gp__sim_api_end(&c, GP_EINVAL);
  if (e->recorded) {
    if (gp__sim_grow((void **)&s->waits, &s->cap_waits, s->num_waits + 1,
                     sizeof(*s->waits)) != 0)
      return gp__sim_api_end(&c, GP_ENOMEM);
    s->waits[s->num_waits++] = (sim_wait){e->correlation_id, e->done_at};
  }
  gp__sim_emit_sync(&c, GP_SYNC_STREAM_WAIT_EVENT, s->ctx->dev, s->ctx->id,
                    s->id, e->id, e->recorded ? e->correlation_id : 0);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_event_query(gp_sim_event *e) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_EVENT_QUERY, e ? e->ctx : NULL,
                                NULL);
  if (rc != 0)
    return rc;
  if (!e)
    return gp__sim_api_end(&c, GP_EINVAL);
  bool done = !e->recorded || gp__sim_now() >= e->done_at;
  return gp__sim_api_end(&c, done ? 0 : GP_EAGAIN);
}

/* See sim.h. */
int gp_sim_event_synchronize(gp_sim_event *e) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_EVENT_SYNCHRONIZE,
                                e ? e->ctx : NULL, NULL);
  if (rc != 0)
    return rc;
  if (!e)
    return gp__sim_api_end(&c, GP_EINVAL);
  if (e->recorded)
    gp__sim_wait_until(e->done_at);
  gp__sim_emit_sync(&c, GP_SYNC_EVENT_SYNCHRONIZE, e->ctx->dev, e->ctx->id, 0,
                    e->id, e->recorded ? e->correlation_id : 0);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_event_elapsed(gp_sim_event *a, gp_sim_event *b, uint64_t *ns) {
  sim_api_call c;
  int rc = gp__sim_api_begin(&c, GP_SIM_CBID_EVENT_ELAPSED);
  if (rc != 0)
    return rc;
  if (!a || !b || !ns)
    return gp__sim_api_end(&c, GP_EINVAL);
  if (!a->recorded || !b->recorded)
    return gp__sim_api_end(&c, GP_ESTATE);
  uint64_t now = gp__sim_now();
  if (now < a->done_at || now < b->done_at)
    return gp__sim_api_end(&c, GP_EAGAIN);
  const sim_device *da = &gp__sim.devices[a->dev_index];
  const sim_device *db = &gp__sim.devices[b->dev_index];
  uint64_t ta = gp__sim_device_time(da, a->done_at);
  uint64_t tb = gp__sim_device_time(db, b->done_at);
  if (tb < ta)
    return gp__sim_api_end(&c, GP_ERANGE);
  *ns = tb - ta;
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_stream_synchronize(gp_sim_stream *s) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_STREAM_SYNCHRONIZE, NULL, s);
  if (rc != 0)
    return rc;
  if (!s)
    return gp__sim_api_end(&c, GP_EINVAL);
  gp__sim_wait_until(s->tail_end);
  gp__sim_clock_snapshot(s->ctx->dev);
  gp__sim_emit_sync(&c, GP_SYNC_STREAM_SYNCHRONIZE, s->ctx->dev, s->ctx->id,
                    s->id, 0, s->tail_corr);
  return gp__sim_api_end(&c, 0);
}

/* See sim.h. */
int gp_sim_context_synchronize(gp_sim_context *ctx) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_CONTEXT_SYNCHRONIZE, ctx, NULL);
  if (rc != 0)
    return rc;
  if (!ctx || !gp__sim_context_live(ctx))
    return gp__sim_api_end(&c, GP_EINVAL);
  uint64_t corr;
  gp__sim_wait_until(gp__sim_context_tail(ctx, &corr));
  gp__sim_clock_snapshot(ctx->dev);
  gp__sim_emit_sync(&c, GP_SYNC_CONTEXT_SYNCHRONIZE, ctx->dev, ctx->id, 0, 0,
                    corr);
  return gp__sim_api_end(&c, 0);
}
