/*
 * translate.c - CUPTI activity records into ours.
 *
 * One function per CUPTI record kind, each reading the struct version of
 * the installed toolkit (CUDA 13: Kernel10, Memcpy6, MemcpyPtoP4, Memset4,
 * API, Synchronization2, Marker2, Overhead3, Device5, Context3, Name,
 * Environment, Function, Module, DeviceAttribute; CdpKernel, Preemption
 * and UnifiedMemoryCounter3 in translate_dp.c; Event, EventInstance,
 * Metric, MetricInstance in translate_events.c) and writing the
 * matching record of include/gpuperf/activity.h. What changes on the way:
 *
 *   - timestamps go from CUPTI's timebase to the trace clock (ids.c);
 *     CUPTI_TIMESTAMP_UNKNOWN (0) stays 0;
 *   - device and context ids become ours; stream ids are kept;
 *   - names CUPTI owns (kernel, marker, domain, object names) are interned
 *     before we return: CUPTI may reuse that memory once its buffer is
 *     given back;
 *   - API records get their function name from cuptiGetCallbackName(),
 *     without the version suffix, and kernels a demangled name besides the
 *     mangled one (names.c);
 *   - GPU work gets the wait ids that deps.c recorded at launch;
 *   - DEVICE and CONTEXT records register the device or context with the
 *     core, which writes our DEVICE or CONTEXT record.
 *
 * Kinds we do not translate (MARKER_DATA, CUDA_EVENT, graph and memory
 * pool records ...) are counted as unknown, never guessed at.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

/* ------------------------------------------------------------------ */
/* Small conversions                                                    */

/* See cudaInt.h. */
uint32_t gp__cuda_kind_map(uint32_t cupti_kind) {
  switch (cupti_kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return GP_ACTIVITY_KIND_KERNEL;
  case CUPTI_ACTIVITY_KIND_MEMCPY:
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    return GP_ACTIVITY_KIND_MEMCPY;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return GP_ACTIVITY_KIND_MEMSET;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return GP_ACTIVITY_KIND_API;
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    return GP_ACTIVITY_KIND_SYNCHRONIZATION;
  case CUPTI_ACTIVITY_KIND_MARKER:
    return GP_ACTIVITY_KIND_MARKER;
  case CUPTI_ACTIVITY_KIND_OVERHEAD:
    return GP_ACTIVITY_KIND_OVERHEAD;
  case CUPTI_ACTIVITY_KIND_DEVICE:
    return GP_ACTIVITY_KIND_DEVICE;
  case CUPTI_ACTIVITY_KIND_CONTEXT:
    return GP_ACTIVITY_KIND_CONTEXT;
  case CUPTI_ACTIVITY_KIND_NAME:
    return GP_ACTIVITY_KIND_NAME;
  case CUPTI_ACTIVITY_KIND_ENVIRONMENT:
    return GP_ACTIVITY_KIND_ENVIRONMENT;
  case CUPTI_ACTIVITY_KIND_FUNCTION:
    return GP_ACTIVITY_KIND_FUNCTION;
  case CUPTI_ACTIVITY_KIND_MODULE:
    return GP_ACTIVITY_KIND_MODULE;
  case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE:
    return GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE;
  case CUPTI_ACTIVITY_KIND_CDP_KERNEL:
    return GP_ACTIVITY_KIND_CDP_KERNEL;
  case CUPTI_ACTIVITY_KIND_PREEMPTION:
    return GP_ACTIVITY_KIND_PREEMPTION;
  case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
    return GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  case CUPTI_ACTIVITY_KIND_EVENT:
    return GP_ACTIVITY_KIND_EVENT;
  case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
    return GP_ACTIVITY_KIND_EVENT_INSTANCE;
  case CUPTI_ACTIVITY_KIND_METRIC:
    return GP_ACTIVITY_KIND_METRIC;
  case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    return GP_ACTIVITY_KIND_METRIC_INSTANCE;
  default:
    return gp__cuda_source_kind_map(cupti_kind);
  }
}

static uint8_t memory_kind(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
    return GP_MEMORY_PAGEABLE;
  case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
    return GP_MEMORY_PINNED;
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
    return GP_MEMORY_DEVICE;
  case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
    return GP_MEMORY_ARRAY;
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
    return GP_MEMORY_MANAGED;
  default:
    return GP_MEMORY_UNKNOWN;
  }
}

/* Which ends of a copy are host memory, from its copy kind. */
static void copy_ends(uint32_t copy_kind, bool *src_host, bool *dst_host) {
  *src_host = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD ||
              copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOA ||
              copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
  *dst_host = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH ||
              copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_ATOH ||
              copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
}

static uint32_t stream_or_zero(uint32_t id) {
  return id == CUPTI_INVALID_STREAM_ID ? 0 : id;
}

/* ------------------------------------------------------------------ */
/* Marker nesting                                                       */

/* CUPTI says START and END but not how deep: we count the ranges open
 * on each thread. Open ranges are few; a small table does. */
typedef struct open_marker {
  uint32_t id, tid, depth;
} open_marker;

static pthread_mutex_t marker_lock = PTHREAD_MUTEX_INITIALIZER;
static open_marker *open_markers;
static size_t num_open, cap_open;

static uint32_t marker_start(uint32_t id, uint32_t tid) {
  pthread_mutex_lock(&marker_lock);
  uint32_t depth = 1;
  for (size_t i = 0; i < num_open; i++)
    if (open_markers[i].tid == tid)
      depth++;
  if (num_open == cap_open) {
    size_t ncap = cap_open ? cap_open * 2 : 32;
    open_marker *n = realloc(open_markers, ncap * sizeof(*n));
    if (!n) {
      pthread_mutex_unlock(&marker_lock);
      return depth;
    }
    open_markers = n;
    cap_open = ncap;
  }
  open_markers[num_open++] = (open_marker){id, tid, depth};
  pthread_mutex_unlock(&marker_lock);
  return depth;
}

/* Closes range id; returns its depth and stores its thread in *tid (0
 * and unchanged if it was not open). */
static uint32_t marker_end(uint32_t id, uint32_t *tid) {
  uint32_t depth = 0;
  pthread_mutex_lock(&marker_lock);
  for (size_t i = 0; i < num_open; i++) {
    if (open_markers[i].id == id) {
      depth = open_markers[i].depth;
      *tid = open_markers[i].tid;
      open_markers[i] = open_markers[--num_open];
      break;
    }
  }
  pthread_mutex_unlock(&marker_lock);
  return depth;
}

/* See cudaInt.h. */
void gp__cuda_translate_reset(void) {
  pthread_mutex_lock(&marker_lock);
  free(open_markers);
  open_markers = NULL;
  num_open = cap_open = 0;
  pthread_mutex_unlock(&marker_lock);
}

/* ------------------------------------------------------------------ */
/* GPU work                                                             */

/* Takes the wait ids of the work launched by corr (or, when it has none,
 * by alt_corr) into w, reserves w's record of kind and fills the header
 * every kind shares. Returns NULL (counted as dropped by the core) on
 * failure. */
static inline __attribute__((always_inline)) void *
begin_work(uint32_t kind, gp__gpu_work *w, uint32_t corr, uint32_t alt_corr,
           uint64_t waits[GP_CUDA_MAX_WAITS]) {
  uint32_t n = gp__cuda_deps_take(corr, waits, GP_CUDA_MAX_WAITS);
  if (n == 0 && alt_corr != 0 && alt_corr != corr)
    n = gp__cuda_deps_take(alt_corr, waits, GP_CUDA_MAX_WAITS);
  w->wait_ids = waits;
  w->num_wait_ids = n;
  void *r = GP_CORE->activity_reserve(kind, gp__gpu_work_size(kind, n),
                                      w->context_id, w->stream_id);
  if (r)
    gp__gpu_work_fill(r, kind, w);
  return r;
}

/* CUPTI's async flag of a copy or fill, as ours. */
static uint32_t async_flag(uint32_t flags, uint32_t cupti_async) {
  return (flags & cupti_async) ? GP_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
}

/* Says once per process that measured kernels are placed at their
 * launch, on the program's stderr (as the profiler's other notes). */
static void untimed_kernel_note(void) {
  static atomic_bool said;
  if (!atomic_exchange(&said, true))
    fprintf(stderr,
            "gpuperf-cuda: CUPTI gives no GPU times for kernels measured "
            "with per-kernel counters: they are drawn at their launch, "
            "without duration (gpu__time_duration.sum has it)\n");
}

static int kernel(const CUpti_ActivityKernel10 *k) {
  uint32_t dev = gp__cuda_device(k->deviceId);
  uint32_t ctx = gp__cuda_context(k->contextId, k->deviceId, 0);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_KERNEL, ctx))
    return GP_ENOENT;
  uint64_t waits[GP_CUDA_MAX_WAITS];
  /* A kernel measured for per-kernel counters has no times from CUPTI:
   * the writer draws it at the host time its launch began (its queued
   * time), without duration. */
  uint64_t launched = 0;
  if (k->start == 0 && k->end == 0 && k->queued == 0 &&
      (launched = gp__cuda_launch_time_take(k->correlationId)) != 0)
    untimed_kernel_note();
  gp__gpu_work w = {.correlation_id = k->correlationId,
                    .queued = launched ? launched : gp__cuda_ts(k->queued),
                    .submitted = gp__cuda_ts(k->submitted),
                    .start = gp__cuda_ts(k->start),
                    .end = gp__cuda_ts(k->end),
                    .device_id = dev,
                    .context_id = ctx,
                    .stream_id = k->streamId,
                    .queue_id = 0};
  gp_activity_kernel *r =
      begin_work(GP_ACTIVITY_KIND_KERNEL, &w, k->correlationId, 0, waits);
  if (!r)
    return GP_ENOSPC;
  gp__cuda_kernel_names(k->name, &r->name_id, &r->demangled_name_id);
  r->grid_x = (uint32_t)k->gridX;
  r->grid_y = (uint32_t)k->gridY;
  r->grid_z = (uint32_t)k->gridZ;
  r->block_x = (uint32_t)k->blockX;
  r->block_y = (uint32_t)k->blockY;
  r->block_z = (uint32_t)k->blockZ;
  r->static_shared_memory = (uint32_t)k->staticSharedMemory;
  r->dynamic_shared_memory = (uint32_t)k->dynamicSharedMemory;
  r->registers_per_thread = k->registersPerThread;
  GP_CORE->activity_commit(r);
  return 0;
}

/* The correlation id our copy carries: the runtime call's when the copy
 * came from one (that is the call the program made), else the driver
 * call's. */
static uint32_t copy_correlation(uint32_t corr, uint32_t runtime_corr) {
  return runtime_corr ? runtime_corr : corr;
}

static int memcpy_rec(const CUpti_ActivityMemcpy6 *m) {
  uint32_t dev = gp__cuda_device(m->deviceId);
  uint32_t ctx = gp__cuda_context(m->contextId, m->deviceId, 0);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MEMCPY, ctx))
    return GP_ENOENT;
  uint32_t corr = copy_correlation(m->correlationId, m->runtimeCorrelationId);
  uint64_t waits[GP_CUDA_MAX_WAITS];
  gp__gpu_work w = {.correlation_id = corr,
                    .start = gp__cuda_ts(m->start),
                    .end = gp__cuda_ts(m->end),
                    .device_id = dev,
                    .context_id = ctx,
                    .stream_id = m->streamId,
                    .queue_id = 1,
                    .flags =
                        async_flag(m->flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)};
  gp_activity_memcpy *r =
      begin_work(GP_ACTIVITY_KIND_MEMCPY, &w, corr, m->correlationId, waits);
  if (!r)
    return GP_ENOSPC;
  bool src_host, dst_host;
  copy_ends(m->copyKind, &src_host, &dst_host);
  r->bytes = m->bytes;
  r->src_device_id = src_host ? UINT32_MAX : dev;
  r->dst_device_id = dst_host ? UINT32_MAX : dev;
  r->src_context_id = src_host ? 0 : ctx;
  r->dst_context_id = dst_host ? 0 : ctx;
  r->copy_kind =
      m->copyKind <= GP_MEMCPY_PTOP ? m->copyKind : GP_MEMCPY_UNKNOWN;
  r->src_kind = memory_kind(m->srcKind);
  r->dst_kind = memory_kind(m->dstKind);
  GP_CORE->activity_commit(r);
  return 0;
}

static int memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *m) {
  uint32_t dev = gp__cuda_device(m->deviceId);
  uint32_t ctx = gp__cuda_context(m->contextId, m->deviceId, 0);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MEMCPY, ctx))
    return GP_ENOENT;
  /* Registering a device or context writes a record: all of them before
   * ours is reserved (one open reservation per thread). */
  uint32_t src_dev = gp__cuda_device(m->srcDeviceId);
  uint32_t dst_dev = gp__cuda_device(m->dstDeviceId);
  uint32_t src_ctx = gp__cuda_context(m->srcContextId, m->srcDeviceId, 0);
  uint32_t dst_ctx = gp__cuda_context(m->dstContextId, m->dstDeviceId, 0);
  uint64_t waits[GP_CUDA_MAX_WAITS];
  gp__gpu_work w = {.correlation_id = m->correlationId,
                    .start = gp__cuda_ts(m->start),
                    .end = gp__cuda_ts(m->end),
                    .device_id = dev,
                    .context_id = ctx,
                    .stream_id = m->streamId,
                    .queue_id = 1,
                    .flags =
                        async_flag(m->flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)};
  gp_activity_memcpy *r =
      begin_work(GP_ACTIVITY_KIND_MEMCPY, &w, m->correlationId, 0, waits);
  if (!r)
    return GP_ENOSPC;
  r->bytes = m->bytes;
  r->src_device_id = src_dev;
  r->dst_device_id = dst_dev;
  r->src_context_id = src_ctx;
  r->dst_context_id = dst_ctx;
  r->copy_kind =
      m->copyKind <= GP_MEMCPY_PTOP ? m->copyKind : GP_MEMCPY_UNKNOWN;
  r->src_kind = memory_kind(m->srcKind);
  r->dst_kind = memory_kind(m->dstKind);
  GP_CORE->activity_commit(r);
  return 0;
}

static int memset_rec(const CUpti_ActivityMemset4 *m) {
  uint32_t dev = gp__cuda_device(m->deviceId);
  uint32_t ctx = gp__cuda_context(m->contextId, m->deviceId, 0);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MEMSET, ctx))
    return GP_ENOENT;
  uint64_t waits[GP_CUDA_MAX_WAITS];
  gp__gpu_work w = {.correlation_id = m->correlationId,
                    .start = gp__cuda_ts(m->start),
                    .end = gp__cuda_ts(m->end),
                    .device_id = dev,
                    .context_id = ctx,
                    .stream_id = m->streamId,
                    .queue_id = 1,
                    .flags =
                        async_flag(m->flags, CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC)};
  gp_activity_memset *r =
      begin_work(GP_ACTIVITY_KIND_MEMSET, &w, m->correlationId, 0, waits);
  if (!r)
    return GP_ENOSPC;
  r->bytes = m->bytes;
  r->value = m->value;
  r->memory_kind = memory_kind(m->memoryKind);
  GP_CORE->activity_commit(r);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Host side                                                            */

static int api(const CUpti_ActivityAPI *a) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0))
    return GP_ENOENT;
  bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
  gp_activity_api *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_API, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = a->correlationId;
  r->start = gp__cuda_ts(a->start);
  r->end = gp__cuda_ts(a->end);
  r->process_id = a->processId;
  r->thread_id = a->threadId;
  r->domain = runtime ? GP_API_DOMAIN_CUDA_RUNTIME : GP_API_DOMAIN_CUDA_DRIVER;
  r->cbid = a->cbid;
  r->name_id = gp__cuda_api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                         : CUPTI_CB_DOMAIN_DRIVER_API,
                                 a->cbid);
  r->return_value = (int32_t)a->returnValue;
  GP_CORE->activity_commit(r);
  return 0;
}

static int sync_rec(const CUpti_ActivitySynchronization2 *s) {
  /* The record names a context but not its device: the context map
   * knows it (contexts are registered when created). An unknown context
   * leaves device UINT32_MAX and context 0. */
  uint32_t cdev = s->contextId == CUPTI_INVALID_CONTEXT_ID
                      ? UINT32_MAX
                      : gp__cuda_context_device(s->contextId);
  uint32_t dev = cdev == UINT32_MAX ? UINT32_MAX : gp__cuda_device(cdev);
  uint32_t ctx =
      cdev == UINT32_MAX ? 0 : gp__cuda_context(s->contextId, cdev, 0);
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, ctx))
    return GP_ENOENT;
  uint64_t waits[GP_CUDA_MAX_WAITS];
  uint32_t n = gp__cuda_deps_take(s->correlationId, waits, GP_CUDA_MAX_WAITS);
  gp_activity_sync *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(*r),
                                ctx, stream_or_zero(s->streamId));
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = s->correlationId;
  r->start = gp__cuda_ts(s->start);
  r->end = gp__cuda_ts(s->end);
  r->wait_id = n ? waits[0] : 0;
  r->sync_kind =
      s->type <= CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
          ? (uint32_t)s->type
          : GP_SYNC_UNKNOWN;
  r->device_id = dev;
  r->context_id = ctx;
  r->stream_id = stream_or_zero(s->streamId);
  r->event_id = s->cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE
                    ? 0
                    : s->cudaEventId;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int marker(const CUpti_ActivityMarker2 *m) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MARKER, 0))
    return GP_ENOENT;
  uint32_t pid = 0, tid = 0;
  if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
      m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    pid = m->objectId.pt.processId;
    tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
              ? m->objectId.pt.threadId
              : 0;
  }
  uint32_t flags = 0, depth = 0;
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    flags = GP_ACTIVITY_FLAG_MARKER_INSTANT;
  } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    flags = GP_ACTIVITY_FLAG_MARKER_START;
    depth = marker_start(m->id, tid);
  } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    flags = GP_ACTIVITY_FLAG_MARKER_END;
    depth = marker_end(m->id, &tid);
  } else {
    return GP_EKIND; /* sync markers: not ranges */
  }
  gp_activity_marker *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->timestamp = gp__cuda_ts(m->timestamp);
  r->id = m->id;
  r->flags = flags;
  r->name_id = flags == GP_ACTIVITY_FLAG_MARKER_END
                   ? 0
                   : GP_CORE->string_intern(m->name);
  r->domain_id = GP_CORE->string_intern(m->domain);
  r->process_id = pid;
  r->thread_id = tid;
  r->depth = depth;
  GP_CORE->activity_commit(r);
  return 0;
}

static uint32_t overhead_kind(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
    return GP_OVERHEAD_BUFFER_FLUSH;
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
    return GP_OVERHEAD_INSTRUMENTATION;
  case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
    return GP_OVERHEAD_RESOURCE;
  case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
    return GP_OVERHEAD_DRIVER_COMPILER;
  default:
    return GP_OVERHEAD_UNKNOWN;
  }
}

static int overhead(const CUpti_ActivityOverhead3 *o) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_OVERHEAD, 0))
    return GP_ENOENT;
  gp_activity_overhead *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_OVERHEAD, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->start = gp__cuda_ts(o->start);
  r->end = gp__cuda_ts(o->end);
  r->overhead_kind = overhead_kind(o->overheadKind);
  bool pt = o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ||
            o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  r->process_id = pt ? o->objectId.pt.processId : 0;
  r->thread_id = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD
                     ? o->objectId.pt.threadId
                     : 0;
  r->reserved0 = 0;
  r->bytes = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Devices, contexts, names, environment                                */

static int device(const CUpti_ActivityDevice5 *d) {
  char arch[32];
  snprintf(arch, sizeof(arch), "sm_%u%u", d->computeCapabilityMajor,
           d->computeCapabilityMinor);
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.name = d->name ? d->name : "";
  info.vendor = "NVIDIA";
  info.model = info.name;
  info.architecture = arch;
  info.driver_version = "";
  memcpy(info.uuid, d->uuid.bytes, sizeof(info.uuid));
  info.global_memory_bytes = d->globalMemorySize;
  info.memory_bandwidth_bytes_per_s = d->globalMemoryBandwidth * 1000u;
  info.compute_units = d->numMultiprocessors;
  info.core_clock_khz = d->coreClockRate;
  info.max_threads_per_block = d->maxThreadsPerBlock;
  info.max_shared_memory_per_block = d->maxSharedMemoryPerBlock;
  info.flags = (d->flags & CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS)
                   ? GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS
                   : 0;
  uint32_t id;
  /* Already described (by the driver at start): the first description
   * stays, and the core wrote its DEVICE record then. */
  return gp__cuda_device_describe(d->id, &info, &id);
}

static int context(const CUpti_ActivityContext3 *c) {
  uint32_t ours = gp__cuda_context(c->contextId, c->deviceId, c->nullStreamId);
  if (!ours)
    return GP_ENOMEM;
  /* Registered when it was made, as CUDA: CUPTI says MPS only here. */
  if (c->computeApiKind == CUPTI_ACTIVITY_COMPUTE_API_CUDA_MPS)
    GP_CORE->context_describe(ours, c->nullStreamId,
                              GP_ACTIVITY_FLAG_CONTEXT_CUDA_MPS);
  return 0;
}

static int name_rec(const CUpti_ActivityName *n) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_NAME, 0))
    return GP_ENOENT;
  switch (n->objectKind) {
  case CUPTI_ACTIVITY_OBJECT_PROCESS:
    GP_CORE->emit_name(GP_OBJECT_PROCESS, 0, 0, 0, 0, n->name);
    return 0;
  case CUPTI_ACTIVITY_OBJECT_THREAD:
    GP_CORE->emit_name(GP_OBJECT_THREAD, 0, 0, 0, n->objectId.pt.threadId,
                       n->name);
    return 0;
  case CUPTI_ACTIVITY_OBJECT_DEVICE:
    GP_CORE->emit_name(GP_OBJECT_DEVICE,
                       gp__cuda_device(n->objectId.dcs.deviceId), 0, 0, 0,
                       n->name);
    return 0;
  case CUPTI_ACTIVITY_OBJECT_CONTEXT:
  case CUPTI_ACTIVITY_OBJECT_STREAM: {
    uint32_t d = n->objectId.dcs.deviceId;
    bool stream = n->objectKind == CUPTI_ACTIVITY_OBJECT_STREAM;
    GP_CORE->emit_name(stream ? GP_OBJECT_STREAM : GP_OBJECT_CONTEXT,
                       gp__cuda_device(d),
                       gp__cuda_context(n->objectId.dcs.contextId, d, 0),
                       stream ? n->objectId.dcs.streamId : 0, 0, n->name);
    return 0;
  }
  default:
    return GP_EKIND;
  }
}

static int environment(const CUpti_ActivityEnvironment *e) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_ENVIRONMENT, 0))
    return GP_ENOENT;
  uint32_t kind;
  switch (e->environmentKind) {
  case CUPTI_ACTIVITY_ENVIRONMENT_SPEED:
    kind = GP_ENVIRONMENT_SPEED;
    break;
  case CUPTI_ACTIVITY_ENVIRONMENT_TEMPERATURE:
    kind = GP_ENVIRONMENT_TEMPERATURE;
    break;
  case CUPTI_ACTIVITY_ENVIRONMENT_POWER:
    kind = GP_ENVIRONMENT_POWER;
    break;
  case CUPTI_ACTIVITY_ENVIRONMENT_COOLING:
    kind = GP_ENVIRONMENT_COOLING;
    break;
  default:
    return GP_EKIND;
  }
  uint32_t dev = gp__cuda_device(e->deviceId);
  gp_activity_environment *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_ENVIRONMENT, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  memset(&r->data, 0, sizeof(r->data));
  r->timestamp = gp__cuda_ts(e->timestamp);
  r->device_id = dev;
  r->environment_kind = kind;
  switch (kind) {
  case GP_ENVIRONMENT_SPEED: /* CUPTI: MHz */
    r->data.speed.core_clock_khz = e->data.speed.smClock * 1000u;
    r->data.speed.memory_clock_khz = e->data.speed.memoryClock * 1000u;
    r->data.speed.throttle_reasons =
        (uint32_t)e->data.speed.clocksThrottleReasons;
    break;
  case GP_ENVIRONMENT_TEMPERATURE: /* CUPTI: degrees C */
    r->data.temperature.gpu_temperature_mc =
        e->data.temperature.gpuTemperature * 1000u;
    break;
  case GP_ENVIRONMENT_POWER: /* CUPTI: milliwatts */
    r->data.power.power_mw = e->data.power.power;
    r->data.power.power_limit_mw = e->data.power.powerLimit;
    break;
  default: /* cooling: percent */
    r->data.cooling.fan_speed_pct = e->data.cooling.fanSpeed;
    break;
  }
  GP_CORE->activity_commit(r);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Code and device attributes                                           */

/* Our context for a CUPTI context whose device CUPTI told us (records of
 * code name no device); 0 if it never did. */
static uint32_t known_context(uint32_t cupti_context) {
  uint32_t d = gp__cuda_context_device(cupti_context);
  return d == UINT32_MAX ? 0 : gp__cuda_context(cupti_context, d, 0);
}

static int function_rec(const CUpti_ActivityFunction *f) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_FUNCTION, 0))
    return GP_ENOENT;
  gp_activity_function *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_FUNCTION, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->timestamp = 0; /* CUPTI says not when */
  r->id = f->id;
  r->context_id = known_context(f->contextId);
  r->module_id = f->moduleId;
  r->function_index = f->functionIndex;
  r->name_id = f->name ? GP_CORE->string_intern(f->name) : 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* CUPTI defines the record but does not write it (a module callback's
 * data, which a framework may store as one; our own MODULE records come
 * from those callbacks, callbacks.c): translated when one comes, without
 * the name and time it does not have. */
static int module_rec(const CUpti_ActivityModule *m) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MODULE, 0))
    return GP_ENOENT;
  gp_activity_module *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_MODULE, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->timestamp = 0;
  r->size_bytes = m->cubinSize;
  r->context_id = known_context(m->contextId);
  r->module_id = m->id;
  r->flags = 0;
  r->name_id = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* The CUPTI devices whose CUdevice attributes the collector wrote itself
 * (gp__cuda_attribute_record): CUPTI's records of them would repeat. */
#define ATTR_DEVICES 64u
static atomic_bool attrs_ours[ATTR_DEVICES];

/* See cudaInt.h. */
int gp__cuda_attribute_record(uint32_t cupti_device, uint32_t cu_attribute,
                              int64_t value, bool ours) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, 0))
    return GP_ENOENT;
  if (cupti_device < ATTR_DEVICES) {
    if (ours)
      atomic_store(&attrs_ours[cupti_device], true);
    else if (atomic_load(&attrs_ours[cupti_device]))
      return GP_EEXIST;
  }
  uint32_t dev = gp__cuda_device(cupti_device);
  if (dev == UINT32_MAX)
    return GP_ENOMEM;
  gp_activity_device_attribute *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->device_id = dev;
  r->attribute = cu_attribute;
  r->flags = GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE;
  r->value_type = GP_VALUE_INT64;
  r->value.i64 = value;
  GP_CORE->activity_commit(r);
  return 0;
}

/* CUdevice attributes (CUPTI's flag) become ours with our flag; their
 * values are ints (cuDeviceGetAttribute's), in the union's int32. CUPTI's
 * own CUpti_DeviceAttribute ones are its event API's, which we have no
 * attribute for: not translated. */
static int device_attribute(const CUpti_ActivityDeviceAttribute *a) {
  if (!(a->flags & CUPTI_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE))
    return GP_EKIND;
  return gp__cuda_attribute_record(a->deviceId, (uint32_t)a->attribute.cu,
                                   a->value.vInt32, false);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */

/* See cudaInt.h. */
int gp__cuda_translate(const CUpti_Activity *rec) {
  if (!rec)
    return GP_EINVAL;
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return kernel((const CUpti_ActivityKernel10 *)rec);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return memcpy_rec((const CUpti_ActivityMemcpy6 *)rec);
  case CUPTI_ACTIVITY_KIND_MEMCPY2:
    return memcpy_p2p((const CUpti_ActivityMemcpyPtoP4 *)rec);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return memset_rec((const CUpti_ActivityMemset4 *)rec);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    return api((const CUpti_ActivityAPI *)rec);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    return sync_rec((const CUpti_ActivitySynchronization2 *)rec);
  case CUPTI_ACTIVITY_KIND_MARKER:
    return marker((const CUpti_ActivityMarker2 *)rec);
  case CUPTI_ACTIVITY_KIND_OVERHEAD:
    return overhead((const CUpti_ActivityOverhead3 *)rec);
  case CUPTI_ACTIVITY_KIND_DEVICE:
    return device((const CUpti_ActivityDevice5 *)rec);
  case CUPTI_ACTIVITY_KIND_CONTEXT:
    return context((const CUpti_ActivityContext3 *)rec);
  case CUPTI_ACTIVITY_KIND_NAME:
    return name_rec((const CUpti_ActivityName *)rec);
  case CUPTI_ACTIVITY_KIND_ENVIRONMENT:
    return environment((const CUpti_ActivityEnvironment *)rec);
  case CUPTI_ACTIVITY_KIND_FUNCTION:
    return function_rec((const CUpti_ActivityFunction *)rec);
  case CUPTI_ACTIVITY_KIND_MODULE:
    return module_rec((const CUpti_ActivityModule *)rec);
  case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE:
    return device_attribute((const CUpti_ActivityDeviceAttribute *)rec);
  case CUPTI_ACTIVITY_KIND_CDP_KERNEL:
    return gp__cuda_cdp_kernel((const CUpti_ActivityCdpKernel *)rec);
  case CUPTI_ACTIVITY_KIND_PREEMPTION:
    return gp__cuda_preemption((const CUpti_ActivityPreemption *)rec);
  case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
    return gp__cuda_um_counter(
        (const CUpti_ActivityUnifiedMemoryCounter3 *)rec);
  case CUPTI_ACTIVITY_KIND_EVENT:
  case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
  case CUPTI_ACTIVITY_KIND_METRIC:
  case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    return gp__cuda_translate_events(rec); /* translate_events.c */
  default:
    return gp__cuda_translate_source(rec); /* or GP_EKIND */
  }
}

/* See cudaInt.h. */
int gp__cuda_translate_buffer(const uint8_t *buffer, size_t valid_size,
                              gp__cuda_xlate_stats *stats) {
  gp__cuda_xlate_stats st = {0};
  CUpti_Activity *rec = NULL;
  CUptiResult res = CUPTI_SUCCESS;
  int rc = 0;
  if (buffer && valid_size > 0) {
    gp__cuda_ts_begin();
    /* CUPTI's iterator takes a non-const buffer but only reads it. */
    while ((res = cuptiActivityGetNextRecord((uint8_t *)buffer, valid_size,
                                             &rec)) == CUPTI_SUCCESS) {
      st.records++;
      switch (gp__cuda_translate(rec)) {
      case 0:
        st.translated++;
        break;
      case GP_ENOENT:
      case GP_EEXIST: /* one the collector wrote itself */
        st.disabled++;
        break;
      case GP_ENOSPC:
      case GP_ENOMEM:
        st.dropped++;
        break;
      default:
        st.unknown++;
        break;
      }
    }
    gp__cuda_ts_end();
    if (res != CUPTI_ERROR_MAX_LIMIT_REACHED)
      rc = GP_ECORRUPT;
  }
  if (stats) {
    stats->records += st.records;
    stats->translated += st.translated;
    stats->disabled += st.disabled;
    stats->unknown += st.unknown;
    stats->dropped += st.dropped;
  }
  return rc;
}
