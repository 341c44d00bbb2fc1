/*
 * gpuperf/activity_um.h - unified (managed) memory counters: CUPTI's
 * CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER and
 * cuptiActivityConfigureUnifiedMemoryCounter.
 *
 * Memory that the host and the GPUs share by one address ("managed"
 * memory: cudaMallocManaged, gp_sim_malloc_managed) moves to whoever
 * touches it, a page at a time. A UNIFIED_MEMORY_COUNTER record says how
 * much moved, or how many pages faulted, over an interval: bytes migrated
 * host to device, device to host or device to device, CPU and GPU page
 * faults, and the driver's thrashing, throttling and remote-mapping
 * decisions. Sources: the simulator's managed-memory model (docs/sim.md)
 * and, through the CUDA collector, CUPTI's own records.
 *
 * Included by gpuperf/activity.h; include that instead.
 */
#ifndef GPUPERF_ACTIVITY_UM_H
#define GPUPERF_ACTIVITY_UM_H

#include "gpuperf/activity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a record counts (CUPTI's CUpti_ActivityUnifiedMemoryCounterKind,
 * the same values). */
typedef enum gp_um_counter_kind {
  GP_UM_COUNTER_UNKNOWN = 0,
  GP_UM_COUNTER_BYTES_TRANSFER_HTOD = 1,  /* bytes migrated host to device */
  GP_UM_COUNTER_BYTES_TRANSFER_DTOH = 2,  /* bytes migrated device to host */
  GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT = 3, /* pages the host faulted on */
  GP_UM_COUNTER_GPU_PAGE_FAULT = 4,       /* pages a GPU faulted on */
  GP_UM_COUNTER_THRASHING = 5,  /* pages moved back and forth repeatedly */
  GP_UM_COUNTER_THROTTLING = 6, /* faults the driver held back */
  GP_UM_COUNTER_REMOTE_MAP = 7, /* pages mapped remotely instead of moved */
  GP_UM_COUNTER_BYTES_TRANSFER_DTOD = 8, /* bytes migrated between GPUs */
  GP_UM_COUNTER_KIND_COUNT
} gp_um_counter_kind;

/* Whose memory a counter covers (CUPTI's
 * CUpti_ActivityUnifiedMemoryCounterScope, the same values; CUDA 7 and
 * later count every device whatever is asked). */
typedef enum gp_um_counter_scope {
  GP_UM_SCOPE_UNKNOWN = 0,
  GP_UM_SCOPE_PROCESS_SINGLE_DEVICE = 1, /* this process, one device */
  GP_UM_SCOPE_PROCESS_ALL_DEVICES = 2,   /* this process, every device */
  GP_UM_SCOPE_COUNT
} gp_um_counter_scope;

/* How a GPU page fault touched the page: the flags of a GPU_PAGE_FAULT
 * record (CUPTI's CUpti_ActivityUnifiedMemoryAccessType). */
typedef enum gp_um_access {
  GP_UM_ACCESS_UNKNOWN = 0,
  GP_UM_ACCESS_READ = 1,
  GP_UM_ACCESS_WRITE = 2,
  GP_UM_ACCESS_ATOMIC = 3,
  GP_UM_ACCESS_PREFETCH = 4
} gp_um_access;

/* Why pages moved: the flags of a BYTES_TRANSFER_* record (CUPTI's
 * CUpti_ActivityUnifiedMemoryMigrationCause). */
typedef enum gp_um_migration_cause {
  GP_UM_MIGRATION_UNKNOWN = 0,
  GP_UM_MIGRATION_USER = 1,      /* an explicit copy or prefetch */
  GP_UM_MIGRATION_COHERENCE = 2, /* a fault: the other side touched it */
  GP_UM_MIGRATION_PREFETCH = 3,  /* the driver's speculative prefetch */
  GP_UM_MIGRATION_EVICTION = 4,  /* the device ran out of memory */
  GP_UM_MIGRATION_ACCESS_COUNTERS = 5
} gp_um_migration_cause;

/* src_id / dst_id of a record for the host side. */
#define GP_UM_HOST UINT32_MAX

/*
 * A unified memory counter over [start, end] (CUPTI's
 * CUpti_ActivityUnifiedMemoryCounter, with the interval, address and
 * sides that CUPTI's later versions added). CUPTI 6.5's one timestamp is
 * start. A count at an instant has end == start.
 */
typedef struct gp_activity_um_counter {
  gp_activity hdr;
  uint32_t counter_kind; /* gp_um_counter_kind */
  uint32_t scope;        /* gp_um_counter_scope */
  uint64_t value;        /* bytes (BYTES_TRANSFER_*) or pages */
  uint64_t start;
  uint64_t end;
  uint64_t address;   /* the first page's address, 0 if unknown */
  uint32_t device_id; /* the GPU concerned: the faulting GPU, or the
                         GPU side of a transfer (the source for DTOD) */
  uint32_t src_id;    /* transfers: device id or GP_UM_HOST; else 0 */
  uint32_t dst_id;    /* transfers: device id or GP_UM_HOST; else 0 */
  uint32_t stream_id; /* the stream whose work caused it, 0 if none */
  uint32_t process_id;
  uint32_t flags; /* GPU_PAGE_FAULT: gp_um_access; BYTES_TRANSFER_*:
                     gp_um_migration_cause; else 0 */
} gp_activity_um_counter;

/* One counter to record or not (CUPTI's
 * CUpti_ActivityUnifiedMemoryCounterConfig). */
typedef struct gp_um_counter_config {
  uint32_t scope;     /* gp_um_counter_scope */
  uint32_t kind;      /* gp_um_counter_kind, not UNKNOWN */
  uint32_t device_id; /* gpuperf device id, for PROCESS_SINGLE_DEVICE */
  uint32_t enable;    /* non-zero: record it; 0: do not */
} gp_um_counter_config;

/*
 * Chooses which unified memory counters UNIFIED_MEMORY_COUNTER records
 * carry, as cuptiActivityConfigureUnifiedMemoryCounter: each entry of
 * config[0, count) enables or disables one kind, for all devices or
 * (PROCESS_SINGLE_DEVICE) one; later entries override earlier ones. Until
 * it is first called, every kind is recorded on every device. Records
 * are written only while the kind GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER
 * is enabled too; configure before enabling it, as CUPTI requires (the
 * CUDA collector passes the configuration to CUPTI when it enables the
 * kind). Borrows config for the call. Returns 0; GP_EINVAL, with nothing
 * changed, if config is NULL, count is 0 or an entry has an unknown kind
 * or scope, or names a device that is not registered.
 */
GP_EXPORT int
gp_activity_configure_unified_memory_counter(const gp_um_counter_config *config,
                                             uint32_t count);

/* Returns the name of a gp_um_counter_kind ("bytes_htod"), or
 * "unknown". */
GP_EXPORT const char *gp_um_counter_kind_name(uint32_t kind);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_ACTIVITY_UM_H */
