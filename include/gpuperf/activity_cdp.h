/*
 * gpuperf/activity_cdp.h - kernels launched by kernels (CUDA Dynamic
 * Parallelism, "CDP") and the preemptions of the blocks that wait for
 * them: CUPTI's CUPTI_ACTIVITY_KIND_CDP_KERNEL and _PREEMPTION.
 *
 * A kernel running on the GPU can launch further grids from its blocks.
 * Each such child grid is a CDP_KERNEL record naming its parent grid and
 * the parent's block that launched it. A parent block that waits for its
 * children is taken off the hardware while they run: a PREEMPTION record
 * of kind SAVE when its state is saved, RESTORE when it is put back.
 * Sources: the simulator's dynamic-parallelism model (gp_sim_launch_ex,
 * docs/sim.md) and, through the CUDA collector, CUPTI's own records.
 *
 * Grid ids. A grid launched by the host has as grid id the correlation id
 * of its KERNEL record in the simulator (CUDA: CUPTI's grid id, which
 * KERNEL records do not carry); a child grid gets a new, process-unique
 * id. parent_grid_id is the launching grid's id, so the records of one
 * tree join on (grid_id, parent_grid_id).
 *
 * Included by gpuperf/activity.h; include that instead.
 */
#ifndef GPUPERF_ACTIVITY_CDP_H
#define GPUPERF_ACTIVITY_CDP_H

#include "gpuperf/activity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A grid launched by a kernel (CUPTI's CUpti_ActivityCdpKernel). Written
 * while KERNEL or CDP_KERNEL is enabled: CUPTI gives these with its
 * concurrent kernels. */
typedef struct gp_activity_cdp_kernel {
  gp_activity hdr;
  uint64_t correlation_id; /* the host launch at the root of its tree */
  int64_t grid_id;         /* this grid */
  int64_t parent_grid_id;  /* the grid that launched it */
  uint64_t queued;         /* its parent block launched it */
  uint64_t submitted;      /* handed to the hardware */
  uint64_t start;
  uint64_t end;
  uint64_t completed; /* it and its own children finished (>= end) */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id; /* the parent's */
  uint32_t name_id;   /* mangled name (string id) */
  uint32_t grid_x, grid_y, grid_z;
  uint32_t block_x, block_y, block_z;
  uint32_t parent_block_x, parent_block_y, parent_block_z;
  uint32_t static_shared_memory;  /* bytes per block */
  uint32_t dynamic_shared_memory; /* bytes per block */
  uint32_t registers_per_thread;
  uint32_t local_memory_per_thread; /* bytes, 0 if unknown */
  uint32_t local_memory_total;      /* bytes, 0 if unknown */
  uint32_t flags;                   /* none yet: 0 */
  uint32_t queue_id; /* hardware queue index on the device, the parent's */
} gp_activity_cdp_kernel;

/* What a PREEMPTION record says happened (CUPTI's
 * CUpti_ActivityPreemptionKind, the same values). */
typedef enum gp_preemption_kind {
  GP_PREEMPTION_UNKNOWN = 0,
  GP_PREEMPTION_SAVE = 1,    /* a block's state saved: it leaves the GPU */
  GP_PREEMPTION_RESTORE = 2, /* its state restored: it runs again */
} gp_preemption_kind;

/* A block of a grid preempted or restored (CUPTI's
 * CUpti_ActivityPreemption; device, context and stream added). */
typedef struct gp_activity_preemption {
  gp_activity hdr;
  uint32_t preemption_kind; /* gp_preemption_kind */
  uint32_t device_id;
  uint64_t timestamp;
  int64_t grid_id; /* the block's grid (a KERNEL's or a CDP_KERNEL's) */
  uint32_t block_x, block_y, block_z;
  uint32_t context_id; /* 0 if unknown (CUPTI does not say) */
  uint32_t stream_id;  /* 0 if unknown */
  uint32_t reserved0;
} gp_activity_preemption;

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_ACTIVITY_CDP_H */
