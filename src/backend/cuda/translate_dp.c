/*
 * translate_dp.c - CUPTI's records of dynamic parallelism and unified
 * memory into ours (gpuperf/activity_cdp.h, activity_um.h):
 * CUpti_ActivityCdpKernel, CUpti_ActivityPreemption and
 * CUpti_ActivityUnifiedMemoryCounter3, the layouts of the installed
 * toolkit. translate.c dispatches here.
 *
 * What changes on the way, besides times (to the trace clock) and device
 * and context ids (to ours), as translate.c does for every kind:
 *
 *   - a CDP kernel's name is interned (CUPTI owns its memory); its grid
 *     ids are CUPTI's, which our KERNEL records do not carry;
 *   - CUPTI's preemption records name no device, context or stream:
 *     device_id is UINT32_MAX and the others 0;
 *   - a unified memory counter's sides become our device ids or
 *     GP_UM_HOST: the host is the source of a host-to-device transfer
 *     and the destination of a device-to-host one; CUPTI's stream id is
 *     documented as invalid and dropped; a CPU fault's value (the faulting
 *     instruction's address) becomes 1, one fault, and the end CUPTI says
 *     to ignore (CPU faults, thrashing, remote maps) becomes the start.
 */
#include "cudaInt.h"

/* See cudaInt.h. */
int gp__cuda_cdp_kernel(const CUpti_ActivityCdpKernel *c) {
  uint32_t dev = gp__cuda_device(c->deviceId);
  uint32_t ctx = gp__cuda_context(c->contextId, c->deviceId, 0);
  /* CUPTI gives these with concurrent kernels, and so do we. */
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_KERNEL, ctx) &&
      !GP_CORE->activity_enabled(GP_ACTIVITY_KIND_CDP_KERNEL, ctx))
    return GP_ENOENT;
  gp_activity_cdp_kernel *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_CDP_KERNEL, sizeof(*r), ctx, c->streamId);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = c->correlationId;
  r->grid_id = c->gridId;
  r->parent_grid_id = c->parentGridId;
  r->queued = gp__cuda_ts(c->queued);
  r->submitted = gp__cuda_ts(c->submitted);
  r->start = gp__cuda_ts(c->start);
  r->end = gp__cuda_ts(c->end);
  r->completed = gp__cuda_ts(c->completed);
  r->device_id = dev;
  r->context_id = ctx;
  r->stream_id = c->streamId;
  uint32_t dem;
  gp__cuda_kernel_names(c->name, &r->name_id, &dem);
  r->grid_x = (uint32_t)c->gridX;
  r->grid_y = (uint32_t)c->gridY;
  r->grid_z = (uint32_t)c->gridZ;
  r->block_x = (uint32_t)c->blockX;
  r->block_y = (uint32_t)c->blockY;
  r->block_z = (uint32_t)c->blockZ;
  r->parent_block_x = c->parentBlockX;
  r->parent_block_y = c->parentBlockY;
  r->parent_block_z = c->parentBlockZ;
  r->static_shared_memory = (uint32_t)c->staticSharedMemory;
  r->dynamic_shared_memory = (uint32_t)c->dynamicSharedMemory;
  r->registers_per_thread = c->registersPerThread;
  r->local_memory_per_thread = c->localMemoryPerThread;
  r->local_memory_total = c->localMemoryTotal;
  r->flags = 0;
  r->queue_id = 0; /* as for kernels: CUPTI does not say */
  GP_CORE->activity_commit(r);
  return 0;
}

/* See cudaInt.h. */
int gp__cuda_preemption(const CUpti_ActivityPreemption *p) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_PREEMPTION, 0))
    return GP_ENOENT;
  gp_activity_preemption *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_PREEMPTION, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->preemption_kind =
      p->preemptionKind == CUPTI_ACTIVITY_PREEMPTION_KIND_SAVE
          ? GP_PREEMPTION_SAVE
      : p->preemptionKind == CUPTI_ACTIVITY_PREEMPTION_KIND_RESTORE
          ? GP_PREEMPTION_RESTORE
          : GP_PREEMPTION_UNKNOWN;
  r->device_id = UINT32_MAX;
  r->timestamp = gp__cuda_ts(p->timestamp);
  r->grid_id = p->gridId;
  r->block_x = p->blockX;
  r->block_y = p->blockY;
  r->block_z = p->blockZ;
  r->context_id = 0;
  r->stream_id = 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* Our id of a CUPTI device id on side `host_side` of a transfer. */
static uint32_t um_side(uint32_t id, bool host_side) {
  return host_side ? GP_UM_HOST : gp__cuda_device(id);
}

/* See cudaInt.h. */
int gp__cuda_um_counter(const CUpti_ActivityUnifiedMemoryCounter3 *u) {
  uint32_t kind = (uint32_t)u->counterKind;
  if (kind == GP_UM_COUNTER_UNKNOWN || kind >= GP_UM_COUNTER_KIND_COUNT)
    return GP_EKIND;
  bool htod = kind == GP_UM_COUNTER_BYTES_TRANSFER_HTOD;
  bool dtoh = kind == GP_UM_COUNTER_BYTES_TRANSFER_DTOH;
  bool cpu = kind == GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT;
  bool transfer = htod || dtoh || kind == GP_UM_COUNTER_BYTES_TRANSFER_DTOD;
  /* The GPU concerned: the device side of a transfer, else the source
   * (a faulting GPU, a thrashing or throttling one). */
  uint32_t dev = cpu ? 0 : gp__cuda_device(htod ? u->dstId : u->srcId);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, 0) ||
      !GP_CORE->um_wanted(kind, dev))
    return GP_ENOENT;
  gp_activity_um_counter *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  bool no_end = cpu || kind == GP_UM_COUNTER_THRASHING ||
                kind == GP_UM_COUNTER_REMOTE_MAP;
  r->counter_kind = kind;
  r->scope = GP_UM_SCOPE_PROCESS_ALL_DEVICES;
  r->value = cpu ? 1 : u->value;
  r->start = gp__cuda_ts(u->start);
  r->end = no_end ? r->start : gp__cuda_ts(u->end);
  r->address = u->address;
  r->device_id = dev;
  r->src_id = transfer || kind == GP_UM_COUNTER_REMOTE_MAP
                  ? um_side(u->srcId, htod)
                  : 0;
  r->dst_id = transfer || kind == GP_UM_COUNTER_REMOTE_MAP
                  ? um_side(u->dstId, dtoh)
                  : 0;
  r->stream_id = 0;
  r->process_id = u->processId;
  r->flags = u->flags;
  GP_CORE->activity_commit(r);
  return 0;
}
