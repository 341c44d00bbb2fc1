/*
 * gpuperf/sim.h - simulated GPUs, driven like a tiny CUDA.
 *
 * The simulator gives every part of gpuperf real work to observe on any
 * machine. It models devices with hardware queues and a clock of their own,
 * contexts, streams, kernels whose cost follows from their work size,
 * copies of every kind (peer-to-peer between two simulated devices
 * included), fills, and events for dependencies across streams and
 * devices. Every call produces an API record; the GPU work it launches
 * produces KERNEL, MEMCPY and MEMSET records with the same correlation id.
 *
 * Time. By default time is virtual and deterministic: each call advances a
 * virtual host clock by a fixed cost, work is scheduled on the virtual
 * device timelines, and the same program gives the same timestamps on
 * every run. Queues still overlap: two streams on different hardware
 * queues run at the same time. In real time mode the host clock is the
 * trace clock and synchronising calls sleep until the work would be done.
 *
 * Nothing is computed: device memory is an address range with no bytes
 * behind it, and kernels have a cost but no code.
 *
 * All functions return 0 or a negative GP_E* code; a failed call changes
 * nothing. Objects are not thread-safe individually: one stream should be
 * driven by one thread at a time; different streams may be driven from
 * different threads.
 */
#ifndef GPUPERF_SIM_H
#define GPUPERF_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/activity.h"
#include "gpuperf/export.h"
#include "gpuperf/perfmon.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_SIM_MAX_DEVICES 8

typedef enum gp_sim_model {
  GP_SIM_MODEL_COMPUTE = 1, /* a data-centre compute GPU */
  GP_SIM_MODEL_V3D = 2      /* a Broadcom V3D 4.2 (Raspberry Pi 4) GPU */
} gp_sim_model;

typedef enum gp_sim_time {
  GP_SIM_TIME_VIRTUAL = 0, /* deterministic virtual time (default) */
  GP_SIM_TIME_REAL = 1     /* the trace clock; synchronisation sleeps */
} gp_sim_time;

typedef struct gp_sim_config {
  uint32_t num_devices;                /* 1 .. GP_SIM_MAX_DEVICES */
  uint32_t models[GP_SIM_MAX_DEVICES]; /* gp_sim_model of each device */
  uint32_t time_mode;                  /* gp_sim_time */
  uint32_t reserved0;                  /* must be 0 */
} gp_sim_config;

/*
 * The simulator's calls, as the cbid of their API records
 * (GP_API_DOMAIN_SIM) and of their API callbacks (gpuperf/callback.h:
 * GP_CALLBACK_API_ID(GP_API_DOMAIN_SIM, GP_SIM_CBID_LAUNCH), ...).
 * Values are stable.
 */
typedef enum gp_sim_cbid {
  GP_SIM_CBID_INVALID = 0,
  GP_SIM_CBID_CONTEXT_CREATE,
  GP_SIM_CBID_CONTEXT_DESTROY,
  GP_SIM_CBID_STREAM_CREATE,
  GP_SIM_CBID_STREAM_DESTROY,
  GP_SIM_CBID_STREAM_SET_NAME,
  GP_SIM_CBID_MALLOC,
  GP_SIM_CBID_FREE,
  GP_SIM_CBID_HOST_REGISTER,
  GP_SIM_CBID_HOST_UNREGISTER,
  GP_SIM_CBID_KERNEL_CREATE,
  GP_SIM_CBID_KERNEL_DESTROY,
  GP_SIM_CBID_LAUNCH,
  GP_SIM_CBID_MEMCPY_ASYNC,
  GP_SIM_CBID_MEMCPY,
  GP_SIM_CBID_MEMSET_ASYNC,
  GP_SIM_CBID_EVENT_CREATE,
  GP_SIM_CBID_EVENT_DESTROY,
  GP_SIM_CBID_EVENT_RECORD,
  GP_SIM_CBID_STREAM_WAIT_EVENT,
  GP_SIM_CBID_EVENT_QUERY,
  GP_SIM_CBID_EVENT_SYNCHRONIZE,
  GP_SIM_CBID_EVENT_ELAPSED,
  GP_SIM_CBID_STREAM_SYNCHRONIZE,
  GP_SIM_CBID_CONTEXT_SYNCHRONIZE,
  GP_SIM_CBID_STREAM_SET_PERFMON,
  GP_SIM_CBID_MALLOC_MANAGED,
  GP_SIM_CBID_HOST_ACCESS,
  GP_SIM_CBID_COUNT
} gp_sim_cbid;

typedef struct gp_sim_context gp_sim_context;
typedef struct gp_sim_stream gp_sim_stream;
typedef struct gp_sim_event gp_sim_event;
typedef struct gp_sim_kernel gp_sim_kernel;

typedef struct gp_sim_dim3 {
  uint32_t x, y, z;
} gp_sim_dim3;

/* A kernel's name and the cost model's description of its work. */
typedef struct gp_sim_kernel_desc {
  const char *name;           /* mangled name; required */
  const char *demangled_name; /* NULL: same as name */
  double flops_per_thread;    /* arithmetic per thread */
  double bytes_per_thread;    /* DRAM traffic per thread, read + written */
  double read_fraction;       /* share of the traffic that is reads, 0..1 */
  double cache_locality;      /* 0..1: how much of it hits in L2 */
  uint32_t registers_per_thread;
  uint32_t static_shared_memory; /* bytes per block */
} gp_sim_kernel_desc;

/*
 * Creates the simulated devices. cfg NULL reads GPUPERF_SIM_DEVICES (a comma
 * list of "compute" and "v3d", default "compute,compute,v3d") and
 * GPUPERF_SIM_TIME ("virtual" or "real"). Returns GP_EBUSY if already
 * initialised, GP_EINVAL for a bad config (unknown model, no device, too
 * many, reserved field set), with nothing created.
 */
GP_EXPORT int gp_sim_init(const gp_sim_config *cfg);

/* The configuration gp_sim_init(NULL) would use, from the environment
 * (GPUPERF_SIM_DEVICES, GPUPERF_SIM_TIME) into *cfg; GP_EINVAL if it is
 * bad. A tool that only looks at the devices changes time_mode to
 * GP_SIM_TIME_REAL before gp_sim_init(): virtual time would become the
 * clock of its whole process. */
GP_EXPORT int gp_sim_config_from_env(gp_sim_config *cfg);

/*
 * Retires all outstanding work, destroys every context and the devices'
 * simulator state. Device ids stay registered (records already written
 * name them). Returns GP_ESTATE if not initialised.
 */
GP_EXPORT int gp_sim_shutdown(void);

/* Stores the gpuperf device id of simulated device `index` in *device_id. */
GP_EXPORT int gp_sim_device_id(uint32_t index, uint32_t *device_id);

/* Stores the number of simulated devices in *n (initialising with the
 * defaults if needed). */
GP_EXPORT int gp_sim_device_count(uint32_t *n);

/*
 * Creates a context on simulated device `index` (0-based among simulated
 * devices), initialising the simulator with the defaults if needed.
 * GP_ENODEV for a bad index.
 */
GP_EXPORT int gp_sim_context_create(uint32_t index, gp_sim_context **ctx);

/* Waits for the context's work and destroys it with its streams, events
 * and allocations. NULL is accepted. */
GP_EXPORT int gp_sim_context_destroy(gp_sim_context *ctx);

/* The gpuperf context id of ctx (as in records), 0 for NULL. */
GP_EXPORT uint32_t gp_sim_context_id(const gp_sim_context *ctx);

/* Creates a stream. Its work runs in order; different streams overlap. */
GP_EXPORT int gp_sim_stream_create(gp_sim_context *ctx, gp_sim_stream **stream);

/* Waits for the stream's work and destroys it. NULL is accepted. */
GP_EXPORT int gp_sim_stream_destroy(gp_sim_stream *stream);

/* The context's default stream (owned by the context). */
GP_EXPORT gp_sim_stream *gp_sim_default_stream(gp_sim_context *ctx);

/* The stream id used in records, 0 for NULL. */
GP_EXPORT uint32_t gp_sim_stream_id(const gp_sim_stream *stream);

/* Names a stream (copied); emits a NAME record. */
GP_EXPORT int gp_sim_stream_set_name(gp_sim_stream *stream, const char *name);

/*
 * Makes every job submitted on stream from now on (kernels, copies,
 * fills) carry pm, or none for NULL; the stream takes a reference. A
 * stream's perfmon wins over an active monitor of its context. The
 * device's scheduler switches perfmons between jobs (perfmon.h); a job
 * carrying a perfmon is refused with GP_EAGAIN while the device has a
 * global perfmon, and with GP_ENOENT once pm was destroyed. GP_EINVAL if
 * pm belongs to another device.
 */
GP_EXPORT int gp_sim_stream_set_perfmon(gp_sim_stream *stream, gp_perfmon *pm);

/* Allocates device memory: an address range, no bytes behind it. */
GP_EXPORT int gp_sim_malloc(gp_sim_context *ctx, uint64_t bytes,
                            uint64_t *addr);

/* Frees device memory. GP_ENOENT if addr is not an allocation of ctx. */
GP_EXPORT int gp_sim_free(gp_sim_context *ctx, uint64_t addr);

/*
 * Allocates managed memory on ctx's device (as cudaMallocManaged): one
 * address for the host and the device, moved between them a page
 * (GP_SIM_UM_PAGE bytes) at a time by whoever touches it
 * (gp_sim_launch_ex's managed ranges, gp_sim_host_access). No page is
 * anywhere until first touched. Freed by gp_sim_free. GP_EINVAL for a
 * bad ctx, addr NULL or bytes 0; GP_ENOMEM past the device's memory.
 */
GP_EXPORT int gp_sim_malloc_managed(gp_sim_context *ctx, uint64_t bytes,
                                    uint64_t *addr);

/* The simulator's page of managed memory, in bytes. */
#define GP_SIM_UM_PAGE 65536u

/*
 * The host reads or writes [addr, addr + bytes) of ctx's managed memory
 * (access: gp_um_access READ or WRITE). It first waits for ctx's queued
 * work, as a program synchronises before touching memory its kernels
 * use; pages on the device then fault and migrate back (the host waits
 * for them), untouched ones fault and are populated on the host. GP_EINVAL
 * if the range is not inside one managed allocation of ctx.
 */
GP_EXPORT int gp_sim_host_access(gp_sim_context *ctx, uint64_t addr,
                                 uint64_t bytes, uint32_t access);

/* Marks host memory as pinned (copies from and to it are faster). */
GP_EXPORT int gp_sim_host_register(const void *ptr, uint64_t bytes);
GP_EXPORT int gp_sim_host_unregister(const void *ptr);

/* Host address as the copy calls take it. */
#define GP_SIM_HOST(ptr) ((uint64_t)(uintptr_t)(ptr))

/*
 * Creates a kernel from desc (strings copied). GP_EINVAL if desc or name is
 * NULL, or a cost is negative or not finite, or a fraction is outside 0..1.
 * A kernel is a module of one function: creating it writes a MODULE and a
 * FUNCTION record (if enabled), destroying it the module's unload.
 */
GP_EXPORT int gp_sim_kernel_create(const gp_sim_kernel_desc *desc,
                                   gp_sim_kernel **kernel);
GP_EXPORT int gp_sim_kernel_destroy(gp_sim_kernel *kernel);

/*
 * Launches a kernel on a stream. GP_EINVAL for a zero dimension, a block
 * over the device's max threads per block, or shared memory over its
 * limit. With source-level kinds enabled (activity_source.h), the kernel
 * gives their records when it retires, from an instruction model
 * (docs/sim.md).
 */
GP_EXPORT int gp_sim_launch(gp_sim_stream *stream, const gp_sim_kernel *kernel,
                            gp_sim_dim3 grid, gp_sim_dim3 block,
                            uint32_t dynamic_shared_memory);

/* A range of managed memory a kernel touches, and how (gp_um_access:
 * READ, WRITE or ATOMIC). */
typedef struct gp_sim_managed_range {
  uint64_t addr, bytes;
  uint32_t access;
  uint32_t reserved0; /* must be 0 */
} gp_sim_managed_range;

/*
 * What a launch does besides its kernel's work (gp_sim_launch_ex).
 *
 * managed[0, num_managed): managed memory (gp_sim_malloc_managed) the
 * kernel touches. Pages it finds on the host fault and migrate to the
 * device before its work starts; untouched pages fault and are
 * populated there. UNIFIED_MEMORY_COUNTER records say so.
 *
 * cdp_blocks > 0: dynamic parallelism. The first cdp_blocks blocks of the
 * grid each launch one grid of cdp_child (cdp_grid x cdp_block,
 * cdp_dynamic_shared bytes) from the device, halfway through the
 * parent's work; the children run one after another, and the parent
 * completes when they have. With cdp_sync, each launching block waits
 * for its child: it is preempted (saved) at the launch and restored
 * when its child ends, and the parent's second half runs after the last
 * one. CDP_KERNEL and PREEMPTION records say so. docs/sim.md has the
 * model.
 */
typedef struct gp_sim_launch_attrs {
  const gp_sim_managed_range *managed; /* borrowed for the call */
  uint32_t num_managed;
  uint32_t cdp_blocks; /* <= the grid's blocks; 0: no child grids */
  const gp_sim_kernel *cdp_child;
  gp_sim_dim3 cdp_grid, cdp_block;
  uint32_t cdp_dynamic_shared;
  uint32_t cdp_sync;    /* 1: launching blocks wait for their child */
  uint32_t reserved[4]; /* must be 0 */
} gp_sim_launch_attrs;

/*
 * gp_sim_launch, with what attrs adds (NULL: nothing). GP_EINVAL as
 * gp_sim_launch, and for a managed range that is not inside one managed
 * allocation of the stream's device, an access that is not READ, WRITE
 * or ATOMIC, cdp_blocks over the grid's blocks, a child grid that
 * gp_sim_launch would refuse, or a reserved field set.
 */
GP_EXPORT int gp_sim_launch_ex(gp_sim_stream *stream,
                               const gp_sim_kernel *kernel, gp_sim_dim3 grid,
                               gp_sim_dim3 block,
                               uint32_t dynamic_shared_memory,
                               const gp_sim_launch_attrs *attrs);

/*
 * Copies bytes on a stream. kind says which side is which: device addresses
 * must be live allocations large enough (of the stream's device, or of two
 * different devices for PTOP), host addresses any non-zero value.
 * GP_EINVAL otherwise. GP_MEMCPY_HTOA and the other array kinds are not
 * simulated (GP_ENOTSUP).
 */
GP_EXPORT int gp_sim_memcpy_async(gp_sim_stream *stream, uint64_t dst,
                                  uint64_t src, uint64_t bytes,
                                  gp_memcpy_kind kind);

/* The same, then waits for the stream (a synchronous copy). */
GP_EXPORT int gp_sim_memcpy(gp_sim_stream *stream, uint64_t dst, uint64_t src,
                            uint64_t bytes, gp_memcpy_kind kind);

/* Fills bytes of device memory with value (as cudaMemsetAsync). */
GP_EXPORT int gp_sim_memset_async(gp_sim_stream *stream, uint64_t dst,
                                  uint32_t value, uint64_t bytes);

GP_EXPORT int gp_sim_event_create(gp_sim_context *ctx, gp_sim_event **event);
GP_EXPORT int gp_sim_event_destroy(gp_sim_event *event);

/* Captures the work queued on stream so far. */
GP_EXPORT int gp_sim_event_record(gp_sim_event *event, gp_sim_stream *stream);

/* Makes later work on stream wait for the event's work, on any device. An
 * event never recorded is complete. */
GP_EXPORT int gp_sim_stream_wait_event(gp_sim_stream *stream,
                                       gp_sim_event *event);

/* Returns 0 if the event's work is done, GP_EAGAIN if not (no waiting). */
GP_EXPORT int gp_sim_event_query(gp_sim_event *event);

/* Blocks (in simulated time) until the event's work is done. */
GP_EXPORT int gp_sim_event_synchronize(gp_sim_event *event);

/* Device time between two completed events, in ns. GP_EAGAIN if not done. */
GP_EXPORT int gp_sim_event_elapsed(gp_sim_event *start, gp_sim_event *end,
                                   uint64_t *ns);

GP_EXPORT int gp_sim_stream_synchronize(gp_sim_stream *stream);
GP_EXPORT int gp_sim_context_synchronize(gp_sim_context *ctx);

/*
 * Spends ns of host time between calls, as a program computing on the CPU
 * would: virtual time advances, or (real time) the thread sleeps.
 */
GP_EXPORT int gp_sim_host_work(uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_SIM_H */
