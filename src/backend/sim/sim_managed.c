/*
 * sim_managed.c - the simulator's managed (unified) memory: where each
 * page of a gp_sim_malloc_managed allocation is, the page faults and
 * migrations that touching it causes, and their UNIFIED_MEMORY_COUNTER
 * records (gpuperf/activity_um.h).
 *
 * The model (docs/sim.md). A page (GP_SIM_UM_PAGE bytes) is nowhere until
 * first touched, then on the host or on the allocation's device. A
 * kernel launched with managed ranges (gp_sim_launch_ex) faults on every
 * page of them that is not on its device, at its start: a page on the
 * host migrates (host to device, at the model's pinned host-to-device
 * bandwidth), one never touched is populated on the device. Each range's
 * faults are serviced as one group, SIM_UM_FAULT_NS plus its migration,
 * one range after another, and the kernel's work starts after the last:
 * its KERNEL record includes the stall. The host touching a range
 * (gp_sim_host_access) does the same the other way, at the device-to-host
 * bandwidth, after waiting for the context's work. Thrashing, throttling,
 * remote mapping and transfers between devices are not modelled.
 */
#include <stdlib.h>
#include <string.h>

#include "simInt.h"

/* The fixed cost of servicing one group of faults, ns. */
#define SIM_UM_FAULT_NS 20000u

/* The managed allocation of s's device holding [addr, addr + bytes), or
 * NULL. */
static sim_alloc *managed_alloc(sim_device *d, uint32_t context_id,
                                uint64_t addr, uint64_t bytes) {
  sim_alloc *a = gp__sim_find_alloc(d, addr, bytes);
  return a && a->where && a->context_id == context_id && bytes ? a : NULL;
}

/* See simInt.h: whether every range of r[0, n) is inside one managed
 * allocation of s's context, with a known access. */
bool gp__sim_um_check(const gp_sim_stream *s, const gp_sim_managed_range *r,
                      uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (r[i].reserved0 || r[i].access < GP_UM_ACCESS_READ ||
        r[i].access > GP_UM_ACCESS_ATOMIC ||
        !managed_alloc(s->ctx->dev, s->ctx->id, r[i].addr, r[i].bytes))
      return false;
  }
  return true;
}

/*
 * Moves the pages of [addr, addr + bytes) of a to `to` (SIM_UM_HOST or
 * SIM_UM_DEVICE). Returns the pages that faulted (those not there), and in
 * *moved the bytes that migrated (of pages that were on the other side),
 * in *first the first faulting page's address.
 */
static uint64_t touch(sim_alloc *a, uint64_t addr, uint64_t bytes, uint8_t to,
                      uint64_t *moved, uint64_t *first) {
  uint64_t p0 = (addr - a->addr) / GP_SIM_UM_PAGE;
  uint64_t p1 = (addr - a->addr + bytes - 1) / GP_SIM_UM_PAGE;
  uint64_t pages = 0;
  *moved = 0;
  *first = 0;
  for (uint64_t p = p0; p <= p1; p++) {
    if (a->where[p] == to)
      continue;
    if (!pages)
      *first = a->addr + p * GP_SIM_UM_PAGE;
    pages++;
    if (a->where[p] != SIM_UM_NOWHERE) {
      uint64_t off = p * GP_SIM_UM_PAGE;
      uint64_t len =
          a->bytes - off < GP_SIM_UM_PAGE ? a->bytes - off : GP_SIM_UM_PAGE;
      *moved += len;
    }
    a->where[p] = to;
  }
  return pages;
}

/* See simInt.h: the faults of a kernel on s touching r[0, n) (checked),
 * into out[0, n), pages moved to the device; *ns their time in all. */
int gp__sim_um_faults(gp_sim_stream *s, const gp_sim_managed_range *r,
                      uint32_t n, sim_um_fault *out, uint64_t *ns) {
  sim_device *d = s->ctx->dev;
  uint64_t t = 0;
  for (uint32_t i = 0; i < n; i++) {
    sim_alloc *a = managed_alloc(d, s->ctx->id, r[i].addr, r[i].bytes);
    sim_um_fault *f = &out[i];
    memset(f, 0, sizeof(*f));
    f->access = r[i].access;
    f->pages =
        touch(a, r[i].addr, r[i].bytes, SIM_UM_DEVICE, &f->bytes, &f->addr);
    f->t0 = t;
    if (f->pages)
      t += SIM_UM_FAULT_NS +
           (uint64_t)((double)f->bytes / d->m->h2d_pinned_bw * 1e9);
    f->t1 = t;
  }
  *ns = t;
  return 0;
}

/* Writes one UNIFIED_MEMORY_COUNTER record, if enabled and wanted. */
static void emit_um(uint32_t kind, uint32_t device_id, uint32_t context_id,
                    uint32_t stream_id, uint64_t value, uint64_t start,
                    uint64_t end, uint64_t addr, uint32_t src, uint32_t dst,
                    uint32_t flags) {
  if (!value ||
      !gp__activity_enabled(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER,
                            context_id) ||
      !gp__um_wanted(kind, device_id))
    return;
  gp_activity_um_counter *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, sizeof(*r),
                           context_id, stream_id);
  if (!r)
    return;
  r->counter_kind = kind;
  r->scope = GP_UM_SCOPE_PROCESS_ALL_DEVICES;
  r->value = value;
  r->start = start;
  r->end = end;
  r->address = addr;
  r->device_id = device_id;
  r->src_id = src;
  r->dst_id = dst;
  r->stream_id = stream_id;
  r->process_id = gp__pid();
  r->flags = flags;
  gp__activity_commit(r);
}

/* See simInt.h. */
void gp__sim_um_emit(const sim_op *op, const sim_device *d) {
  const sim_extra *x = op->extra;
  for (uint32_t i = 0; i < x->nfaults; i++) {
    const sim_um_fault *f = &x->faults[i];
    uint64_t t0 = gp__sim_to_trace(d, op->start + f->t0);
    uint64_t t1 = gp__sim_to_trace(d, op->start + f->t1);
    emit_um(GP_UM_COUNTER_GPU_PAGE_FAULT, op->device_id, op->context_id,
            op->stream_id, f->pages, t0, t1, f->addr, 0, 0, f->access);
    emit_um(GP_UM_COUNTER_BYTES_TRANSFER_HTOD, op->device_id, op->context_id,
            op->stream_id, f->bytes, t0, t1, f->addr, GP_UM_HOST, op->device_id,
            GP_UM_MIGRATION_COHERENCE);
  }
}

/* See sim.h. */
int gp_sim_host_access(gp_sim_context *ctx, uint64_t addr, uint64_t bytes,
                       uint32_t access) {
  sim_api_call c;
  int rc = gp__sim_api_begin_at(&c, GP_SIM_CBID_HOST_ACCESS, ctx, NULL);
  if (rc != 0)
    return rc;
  sim_alloc *a = NULL;
  if (!ctx || !gp__sim_context_live(ctx) ||
      (access != GP_UM_ACCESS_READ && access != GP_UM_ACCESS_WRITE) ||
      !(a = managed_alloc(ctx->dev, ctx->id, addr, bytes)))
    return gp__sim_api_end(&c, GP_EINVAL);
  uint64_t corr;
  gp__sim_wait_until(gp__sim_context_tail(ctx, &corr));
  /* The wait may have let another thread free it (real time): look again. */
  if (!gp__sim_context_live(ctx) ||
      !(a = managed_alloc(ctx->dev, ctx->id, addr, bytes)))
    return gp__sim_api_end(&c, GP_EINVAL);
  sim_device *d = ctx->dev;
  uint64_t moved, first;
  uint64_t pages = touch(a, addr, bytes, SIM_UM_HOST, &moved, &first);
  if (pages) {
    /* The host waits for its faults (in real time: sleeps). */
    uint64_t t0 = gp__sim_now();
    gp__sim_wait_until(t0 + SIM_UM_FAULT_NS +
                       (uint64_t)((double)moved / d->m->h2d_pinned_bw * 1e9));
    uint64_t t1 = gp__sim_now();
    emit_um(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, d->device_id, ctx->id, 0, pages,
            t0, t1, first, 0, 0, 0);
    emit_um(GP_UM_COUNTER_BYTES_TRANSFER_DTOH, d->device_id, ctx->id, 0, moved,
            t0, t1, first, d->device_id, GP_UM_HOST, GP_UM_MIGRATION_COHERENCE);
  }
  return gp__sim_api_end(&c, 0);
}
