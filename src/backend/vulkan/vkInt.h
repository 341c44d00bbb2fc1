/*
 * vkInt.h - what the modules of the Vulkan layer share.
 *
 * libgpuperf-vulkan.so is a Vulkan layer (VK_LAYER_GPUPERF_trace). The
 * loader puts it between the program and the next layer or the driver;
 * every call we intercept is forwarded through the dispatch tables kept
 * here, one per instance and one per device (layer.c). Around the calls
 * it writes records into the process's one libgpuperf, reached through
 * gp_backend_interface():
 *  - command buffers (cmd.c): when render stages are being recorded, the
 *    layer writes timestamps into a query pool of its own at the start and
 *    end of each primary command buffer and around each render pass,
 *    dynamic rendering block, dispatch and transfer command;
 *  - submissions (submit.c): each vkQueueSubmit becomes an API record whose
 *    correlation id all its stages share; the timestamps are read back
 *    without waiting, at the next submission on the device, after the
 *    program's own waits, at a flush, or when a command buffer is
 *    recorded, freed or submitted again (then the program has waited for
 *    it), and mapped to the trace clock with VK_EXT_calibrated_timestamps;
 *  - other calls (api.c): presents, waits, allocations, pipeline and shader
 *    creation as API records; debug-utils messages as GPU_LOG records.
 *
 * Locks: one per device (dev->lock) guards its command-buffer table and
 * its pending submissions; the global registry lock (layer.c) guards the
 * tables of instances and devices. No lock of ours is held across a call
 * into the next layer that may block (submits, waits).
 */
#ifndef GPUPERF_VULKAN_VKINT_H
#define GPUPERF_VULKAN_VKINT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include "core/backend.h"
#include "counters/backend.h"

#define GP_VK_LAYER_NAME "VK_LAYER_GPUPERF_trace"
#define GP_VK_EXPORT __attribute__((visibility("default")))

/* Regions a command buffer may hold before it stops being instrumented
 * in detail (its whole-buffer stage is still measured); the pool is sized
 * from the previous recording, so this is only the first guess. */
#define GP_VK_REGIONS_FIRST 32
#define GP_VK_REGIONS_MAX 4096
#define GP_VK_LABEL_DEPTH 16

/* The process's libgpuperf (layer.c). Never NULL after gp__vk_core_load. */
extern const gp_backend_ops *gp__vk_core;

/* Loads the core table once; a core of another build records nothing. */
void gp__vk_core_load(void);

/* The counters' provider table, or NULL (a libgpuperf of another build);
 * set by gp__vk_counters_load(). */
extern const gp_counters_backend_ops *gp__vk_counters;
void gp__vk_counters_load(void);

/* ------------------------------------------------------------------ */
/* A small map from 64-bit keys (handles) to pointers (map.c)          */

typedef struct gp__vk_map {
  uint64_t *keys; /* 0: empty slot; handles are never 0 */
  void **vals;
  size_t cap, n; /* cap a power of two */
} gp__vk_map;

/* The value for key, or NULL. */
void *gp__vk_map_get(const gp__vk_map *m, uint64_t key);
/* Sets key to val (replacing). Returns 0 or GP_ENOMEM (map unchanged). */
int gp__vk_map_put(gp__vk_map *m, uint64_t key, void *val);
/* Removes key; returns its value or NULL. */
void *gp__vk_map_del(gp__vk_map *m, uint64_t key);
void gp__vk_map_fini(gp__vk_map *m);

/* ------------------------------------------------------------------ */
/* Dispatch                                                             */

/* The instance functions we call or intercept. */
typedef struct gp__vk_instance {
  VkInstance handle;
  PFN_vkGetInstanceProcAddr gipa;
  PFN_vkDestroyInstance DestroyInstance;
  PFN_vkEnumerateDeviceExtensionProperties EnumerateDeviceExtensionProperties;
  PFN_vkGetPhysicalDeviceProperties GetPhysicalDeviceProperties;
  /* vkGetPhysicalDeviceProperties2 where the instance may call it: the
   * core one (Vulkan 1.1 instances) or the KHR one (1.0 instances, where
   * the layer enables VK_KHR_get_physical_device_properties2); or NULL. */
  PFN_vkGetPhysicalDeviceProperties2 GetPhysicalDeviceProperties2;
  bool id_props; /* VkPhysicalDeviceIDProperties may be asked for */
  PFN_vkGetPhysicalDeviceQueueFamilyProperties
      GetPhysicalDeviceQueueFamilyProperties;
  PFN_vkGetPhysicalDeviceMemoryProperties GetPhysicalDeviceMemoryProperties;
  PFN_vkGetPhysicalDeviceFeatures GetPhysicalDeviceFeatures;
  PFN_vkCreateDebugUtilsMessengerEXT CreateDebugUtilsMessengerEXT;
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyDebugUtilsMessengerEXT;
  VkDebugUtilsMessengerEXT messenger; /* ours, for gpu.log; may be null */
  uint32_t api_version;
} gp__vk_instance;

/* What we remember of a recording command buffer's timed parts. */
typedef struct gp__vk_region {
  uint32_t stage;   /* gp_render_stage_kind */
  uint32_t name_id; /* debug label in effect, 0 if none */
  uint64_t render_pass, render_target;
  uint32_t stat_q;    /* pipeline-statistics query + 1, 0 if none */
  uint32_t stat_lost; /* ended early for the program's own query */
  bool inside;        /* its timestamps are inside its render pass */
} gp__vk_region;

/* The order of an in-order device's queue (submit.c): its stream id + 1
 * (0: a free slot), the submissions noted on it and written of it (each
 * counts them), and where the last one written ended (0: not known). */
typedef struct gp__vk_queue_order {
  uint32_t stream, noted, written;
  uint64_t end;
} gp__vk_queue_order;

typedef struct gp__vk_device gp__vk_device;
typedef struct gp__vk_cmdbuf gp__vk_cmdbuf;

/* How a pending submission's timestamps reach its results buffer. */
enum {
  GP_VK_COPY_OWN,    /* its recording copies them at its end (WAIT) */
  GP_VK_COPY_HELD,   /* still in the query pool: the command buffer's next
                        recording copies them (cmd.c, deferred copy) */
  GP_VK_COPY_COPYING /* that recording has been submitted */
};

/* A submitted command buffer waiting to be read back: part of its
 * gp__vk_cmdbuf (two per command buffer, one per half of its query pool),
 * so submitting allocates nothing. What it reads its timestamps with is
 * its own: a deferred one is read after the command buffer has been
 * recorded again. */
typedef struct gp__vk_pending {
  struct gp__vk_pending *next;
  gp__vk_cmdbuf *cb;
  uint64_t corr, queued;
  uint64_t copied_by; /* GP_VK_COPY_COPYING: that submission's corr */
  uint32_t submission_id, stream_id, queue_id, family;
  uint32_t nwaits;
  uint64_t waits[8];
  const gp__vk_region *regions; /* of its recording */
  uint32_t nregions, start_q, end_q;
  uint32_t half;  /* of the query pool and results buffer: 0 or 1 */
  uint32_t base;  /* its first query: half * qhalf */
  uint32_t state; /* GP_VK_COPY_* */
  uint32_t seq;   /* in its queue's order (in-order devices), from 1; 0 */
} gp__vk_pending;

/* A command buffer of ours to know. */
struct gp__vk_cmdbuf {
  VkCommandBuffer handle;
  VkCommandPool pool;
  gp__vk_device *dev;
  bool primary;
  bool instrumented; /* this recording writes timestamps */
  bool recorded;     /* ended successfully */
  uint32_t pending;  /* bit h set while sub[h] is on the pending list */
  VkQueryPool qpool;
  uint32_t qcap;        /* queries in qpool */
  uint32_t qhalf;       /* queries a recording may use: qcap or qcap / 2 */
  uint32_t half;        /* the half this recording writes (base qhalf*half) */
  uint32_t nregions;    /* timed regions of this recording */
  uint32_t want;        /* regions seen (past capacity too) */
  uint32_t open_region; /* index of the open region + 1, 0 if none */
  gp__vk_region *regions;
  /* The other array of regions, and each one's capacity: a deferred
   * submission keeps the regions of its recording while the next is
   * recorded. */
  gp__vk_region *spare;
  uint32_t rcap, spare_cap;
  bool defer;        /* this recording's timestamps are copied by the next */
  bool one_time;     /* begun with ONE_TIME_SUBMIT, not SIMULTANEOUS_USE */
  bool resubmitted;  /* a recording of it was submitted (instrumented) */
  uint32_t submits;  /* submissions of this recording */
  bool simultaneous; /* this recording: SIMULTANEOUS_USE */
  bool multi;        /* a recording of it was submitted more than once */
  uint32_t copies;   /* half + 1 whose held timestamps it copies, or 0 */
  uint32_t label_depth;
  uint32_t labels[GP_VK_LABEL_DEPTH];
  VkQueryPool spool; /* pipeline statistics (pstats.c), or null */
  uint32_t scap;
  /* spool's results, copied by the device at the recording's end as the
   * timestamps are (a value per statistic and an availability word per
   * query), mapped at sresults; null if it could not be made. */
  VkBuffer sbuf;
  VkDeviceMemory smem;
  uint64_t *sresults;
  bool stat_open;   /* a query of ours is active */
  bool app_stats;   /* a pipeline-statistics query of the program's is */
  uint32_t name_id; /* object name given by the program */
  /* Read-back (cmd.c, submit.c). The recording ends by copying its
   * timestamps, with their availability, into rbuf (host-visible, mapped
   * at results: a value and an availability word per query), so they are
   * read from memory, without calling the driver. rbuf is null where the
   * pool's family cannot copy query results (transfer-only queues): then
   * vkGetQueryPoolResults, only where the program has waited. */
  VkBuffer rbuf;
  VkDeviceMemory rmem;
  uint64_t *results;
  uint32_t family; /* of its command pool */
  bool untimed;    /* the family has no timestamps: stages without times */
  gp__vk_pending sub[2]; /* its submissions, one per half, while pending */
  uint32_t kinds;        /* secondary: 1 << each gp_render_stage_kind seen */
  bool start_due;        /* query 0 is still to be written (cmd.c stamp()) */
  uint32_t last_q;       /* the query last written */
  uint32_t start_q;      /* the query of its start: 0, or its first other */
  uint32_t end_q;        /* the query of its end: 1, or its last pass's end */
  /* The prologue (cmd.c, in-order devices): a command buffer of ours,
   * from a pool of its own, holding what this recording would otherwise
   * begin with (the reset of its half, the copy of the held timestamps);
   * the submission runs it just before (submit.c). armed: this recording
   * has one; failed: none can be made, the recording begins with them. */
  VkCommandPool pro_pool;
  VkCommandBuffer pro;
  bool pro_armed, pro_failed;
};

/* The device functions we call or intercept. */
struct gp__vk_device {
  VkDevice handle;
  VkPhysicalDevice phys;
  gp__vk_instance *inst;
  PFN_vkGetDeviceProcAddr gdpa;
#define GP_VK_DEVICE_FNS(X)                                                    \
  X(DestroyDevice)                                                             \
  X(GetDeviceQueue)                                                            \
  X(GetDeviceQueue2)                                                           \
  X(AllocateCommandBuffers)                                                    \
  X(FreeCommandBuffers)                                                        \
  X(DestroyCommandPool)                                                        \
  X(BeginCommandBuffer)                                                        \
  X(EndCommandBuffer)                                                          \
  X(CreateQueryPool)                                                           \
  X(DestroyQueryPool)                                                          \
  X(GetQueryPoolResults)                                                       \
  X(CmdResetQueryPool)                                                         \
  X(CmdBeginQuery)                                                             \
  X(CmdEndQuery)                                                               \
  X(CmdWriteTimestamp)                                                         \
  X(CmdBeginRenderPass)                                                        \
  X(CmdEndRenderPass)                                                          \
  X(CmdBeginRenderPass2)                                                       \
  X(CmdEndRenderPass2)                                                         \
  X(CmdBeginRendering)                                                         \
  X(CmdEndRendering)                                                           \
  X(CmdBeginRenderingKHR)                                                      \
  X(CmdEndRenderingKHR)                                                        \
  X(CmdDispatch)                                                               \
  X(CmdDispatchIndirect)                                                       \
  X(CmdDispatchBase)                                                           \
  X(CmdCopyBuffer)                                                             \
  X(CmdCopyImage)                                                              \
  X(CmdCopyBufferToImage)                                                      \
  X(CmdCopyImageToBuffer)                                                      \
  X(CmdBlitImage)                                                              \
  X(CmdResolveImage)                                                           \
  X(CmdClearColorImage)                                                        \
  X(CmdClearDepthStencilImage)                                                 \
  X(CmdFillBuffer)                                                             \
  X(CmdUpdateBuffer)                                                           \
  X(CmdBeginDebugUtilsLabelEXT)                                                \
  X(CmdEndDebugUtilsLabelEXT)                                                  \
  X(SetDebugUtilsObjectNameEXT)                                                \
  X(QueueSubmit)                                                               \
  X(QueueSubmit2)                                                              \
  X(QueueSubmit2KHR)                                                           \
  X(QueueWaitIdle)                                                             \
  X(DeviceWaitIdle)                                                            \
  X(WaitForFences)                                                             \
  X(QueuePresentKHR)                                                           \
  X(AllocateMemory)                                                            \
  X(FreeMemory)                                                                \
  X(CreateBuffer)                                                              \
  X(DestroyBuffer)                                                             \
  X(CreateImage)                                                               \
  X(DestroyImage)                                                              \
  X(BindBufferMemory)                                                          \
  X(BindImageMemory)                                                           \
  X(BindBufferMemory2)                                                         \
  X(BindImageMemory2)                                                          \
  X(GetBufferMemoryRequirements)                                               \
  X(GetImageMemoryRequirements)                                                \
  X(CreateGraphicsPipelines)                                                   \
  X(CreateComputePipelines)                                                    \
  X(CreateShaderModule)                                                        \
  X(DestroyShaderModule)                                                       \
  X(GetCalibratedTimestampsEXT)
#define GP_VK_FN_FIELD(name) PFN_vk##name name;
  GP_VK_DEVICE_FNS(GP_VK_FN_FIELD)
#undef GP_VK_FN_FIELD

  pthread_mutex_t lock;
  gp__vk_map cmdbufs;  /* VkCommandBuffer -> gp__vk_cmdbuf (lock) */
  gp__vk_map queues;   /* VkQueue -> stream id (lock) */
  gp__vk_map signals;  /* VkSemaphore -> correlation id of its signal */
  gp__vk_map memories; /* VkDeviceMemory -> what memory.c knows (lock) */
  gp__vk_map objects;  /* VkBuffer, VkImage -> the same (lock) */
  gp__vk_map shaders;  /* VkShaderModule -> its module id (code.c, lock) */
  uint32_t mem_heap[VK_MAX_MEMORY_TYPES]; /* heap of each memory type */
  VkAllocationCallbacks allocator;        /* ours, for the driver */
  bool own_allocator;                     /* the device was created with it */
  bool pstats;                            /* pipelineStatisticsQuery enabled */
  gp__vk_map stat_pools; /* the program's pipeline-statistics pools */
  gp__vk_pending *pending, *pending_tail; /* submission order (lock) */
  uint32_t next_stream;
  uint32_t device_id, context_id;
  uint32_t queue_base[64]; /* first hardware queue of each family */
  uint32_t timestamp_bits[64];
  uint32_t num_families;
  double period; /* ns per tick */
  bool calibrated;
  int64_t cal_host; /* trace time (ns) at cal_dev */
  uint64_t cal_dev; /* device ticks */
  uint64_t cal_at;  /* when last calibrated (trace clock) */
  _Atomic uint32_t submissions;
  /* cmd.c: VkCommandPool -> its queue family + 1 (lock) */
  gp__vk_map pools;
  uint32_t ts_override;    /* GPUPERF_VULKAN_TEST_TIMESTAMP_BITS + 1, or 0 */
  uint32_t untimed_warned; /* families whose lack of timestamps was logged */
  uint32_t odd_warned;     /* timestamps that cannot be were logged (1) */
  uint32_t pstats_warned;  /* GP_VK_PSTATS_LOST_* reasons logged */
  PFN_vkCmdCopyQueryPoolResults CmdCopyQueryPoolResults;
  PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
  PFN_vkCmdExecuteCommands CmdExecuteCommands;
  PFN_vkCreateCommandPool CreateCommandPool;
  PFN_vkMapMemory MapMemory;
  bool readback_fns; /* the five above were looked up */
  /* The loader's, to make a command buffer of ours dispatchable (from
   * VkLayerDeviceCreateInfo), or NULL. */
  PFN_vkSetDeviceLoaderData set_loader_data;
  _Atomic uint32_t prologues; /* command buffers with a prologue made */
  bool ts_in_order; /* runs command buffers in order on the host (cmd.c) */
  /* submit.c, for an in-order device: what was submitted to and written
   * of each of its first four queues (lock) */
  gp__vk_queue_order order[4];
};

/* ---- layer.c ---- */

/* The entry points the manifest names (the library's only exports). */
GP_VK_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
gpuperf_NegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v);
GP_VK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
gpuperf_GetInstanceProcAddr(VkInstance instance, const char *name);
GP_VK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
gpuperf_GetDeviceProcAddr(VkDevice device, const char *name);

/* The device whose dispatch table a dispatchable object uses (device,
 * queue, command buffer), or NULL. */
gp__vk_device *gp__vk_device_of(const void *dispatchable);

/* After a present: a safe point for core/death.c (a SIGINT or the like
 * noted since finishes the session here, and the process). */
void gp__vk_presented(void);

/* Every live device, for the flush hook: calls fn on each under the
 * registry lock. */
void gp__vk_devices_each(void (*fn)(gp__vk_device *dev, void *user),
                         void *user);

/* The same without waiting: false, having called fn for none, when the
 * registry is busy. */
bool gp__vk_devices_try_each(void (*fn)(gp__vk_device *dev, void *user),
                             void *user);

/* The layer's own function of that name, or NULL (device level). */
PFN_vkVoidFunction gp__vk_device_intercept(const char *name);

/* The same for submissions, waits and object creation (submit.c). */
PFN_vkVoidFunction gp__vk_submit_intercept(const char *name);

/* ---- cmd.c ---- */

/* The command buffer's state, or NULL if unknown (takes dev->lock). */
gp__vk_cmdbuf *gp__vk_cmdbuf_get(gp__vk_device *dev, VkCommandBuffer cb);

/* Frees a command buffer's state and its query pool; its pending
 * submissions must have been read (dev->lock held). */
void gp__vk_cmdbuf_free(gp__vk_device *dev, gp__vk_cmdbuf *c);

/* True when render stages are being recorded (RENDER_STAGE enabled). */
bool gp__vk_tracing(const gp__vk_device *dev);

/* The timestampValidBits of queue family f of dev (0: no timestamps). The
 * environment variable GPUPERF_VULKAN_TEST_TIMESTAMP_BITS, read at the
 * device's first vkCreateCommandPool, replaces the driver's value: a test
 * double for devices without timestamps, which lavapipe is not. */
uint32_t gp__vk_timestamp_bits(gp__vk_device *dev, uint32_t f);

/* Frees what cmd.c keeps for a device going away, every command
 * buffer's state with it (dev->lock held). */
void gp__vk_cmd_fini(gp__vk_device *dev);

/* The prologue cb's recording is to run just before it, or null
 * (dev->lock held). */
VkCommandBuffer gp__vk_prologue_of(gp__vk_device *dev, VkCommandBuffer cb);

/* ---- readback.c ---- */

/* The order of an in-order device's queue of stream s, or NULL when all
 * four slots are other queues' (add: claim a free one). dev->lock held. */
gp__vk_queue_order *gp__vk_queue_order_of(gp__vk_device *dev, uint32_t s,
                                          bool add);

/* Takes *pp (which follows prev, NULL at the head) off dev's pending
 * list. dev->lock held. */
void gp__vk_pending_unlink(gp__vk_device *dev, gp__vk_pending **pp,
                           gp__vk_pending *prev);

/* The frontier of the Vulkan device device_id (core.h, gp__frontier_fn):
 * the least submission time of its command buffers not yet read back,
 * UINT64_MAX if none, 0 when the registry or the device is busy. */
uint64_t gp__vk_frontier(void *user, uint32_t device_id);

/*
 * Reads back the pending submissions of dev whose timestamps are ready,
 * in order, and writes their records. wait: also those not ready yet,
 * waiting for them (used where the program has waited already, or at a
 * forced flush where their times are needed). only: if not NULL, reads
 * the submissions of that command buffer only, whose work is over (one
 * whose timestamps are still held in its query pool stays pending: the
 * command buffer's next recording copies them). dev->lock held.
 */
void gp__vk_resolve(gp__vk_device *dev, bool wait, const gp__vk_cmdbuf *only);

/* Reads back every pending submission of c, waiting where need be (also
 * those still held in its query pool, which the driver is asked for): c
 * is being freed or its pool replaced, and its work is over. dev->lock
 * held. */
void gp__vk_resolve_all(gp__vk_device *dev, const gp__vk_cmdbuf *c);

/* Writes c's entry of its current half without times (a recording
 * submitted again while its last run may still be pending: its held
 * timestamps are never waited for). dev->lock held. */
void gp__vk_resolve_untimed(gp__vk_device *dev, const gp__vk_cmdbuf *c);

/* Re-measures the device clock against the trace clock (at most once per
 * second unless force). */
void gp__vk_calibrate(gp__vk_device *dev, bool force);

/* ---- submit.c ---- */

/* An entry point's API callbacks (gpuperf/callback.h). */
typedef struct gp__vk_call {
  bool cb; /* called at entry: at exit too */
  gp__cb_api_call api;
} gp__vk_call;

/* The entry callbacks of call cbid (name) on dev, which names queue (or
 * none); returns the call's correlation id: corr, or a new one when corr
 * is 0. */
uint64_t gp__vk_call_enter(gp__vk_call *c, gp__vk_device *dev, VkQueue queue,
                           uint32_t cbid, const char *name, uint64_t corr);

/* Calls the entry callbacks if a subscriber wants the Vulkan domain's;
 * returns the correlation id for the call's API record (corr if none). */
static inline uint64_t gp__vk_enter(gp__vk_call *c, gp__vk_device *dev,
                                    VkQueue queue, uint32_t cbid,
                                    const char *name, uint64_t corr) {
  c->cb =
      atomic_load_explicit(gp__vk_core->callback_mask, memory_order_relaxed) &
      GP__CB_API_BIT(GP_API_DOMAIN_VULKAN);
  return GP_UNLIKELY(c->cb) ? gp__vk_call_enter(c, dev, queue, cbid, name, corr)
                            : corr;
}

/* The exit callbacks of a call entered. */
static inline void gp__vk_exit(gp__vk_call *c, VkResult r) {
  if (GP_UNLIKELY(c->cb))
    gp__vk_core->callback_api(&c->api, GP_CALLBACK_SITE_EXIT, (int32_t)r);
}

/* Raises a SYNCHRONIZE callback (cbid) for dev's context and the stream
 * of queue (or none), if one is enabled. */
void gp__vk_synchronized(gp__vk_device *dev, VkQueue queue, uint32_t cbid,
                         uint64_t corr);

/* Writes an API record of the Vulkan domain; corr may be 0. */
void gp__vk_api(uint32_t cbid, const char *name, uint64_t start, uint64_t end,
                uint64_t corr, VkResult rv);

/* API ids (cbid of the Vulkan domain). */
enum {
  GP_VK_API_QUEUE_SUBMIT = 1,
  GP_VK_API_QUEUE_PRESENT,
  GP_VK_API_QUEUE_WAIT_IDLE,
  GP_VK_API_DEVICE_WAIT_IDLE,
  GP_VK_API_WAIT_FOR_FENCES,
  GP_VK_API_ALLOCATE_MEMORY,
  GP_VK_API_FREE_MEMORY,
  GP_VK_API_CREATE_GRAPHICS_PIPELINES,
  GP_VK_API_CREATE_COMPUTE_PIPELINES,
  GP_VK_API_CREATE_SHADER_MODULE,
  GP_VK_API_QUEUE_SUBMIT2
};

/* ---- memory.c ---- */

/* Device memory, buffer and image calls (the rest of the table). */
PFN_vkVoidFunction gp__vk_memory_intercept(const char *name);

/* ---- code.c: shader modules and pipeline stages as MODULE and FUNCTION
 * records ---- */

/* A shader module m of code_size bytes made on dev: its module id, and
 * its MODULE record if wanted. */
void gp__vk_shader_created(gp__vk_device *dev, VkShaderModule m,
                           size_t code_size);
/* The stages[0, n) of a pipeline made on dev: a FUNCTION record each, if
 * wanted. */
void gp__vk_pipeline_stages(gp__vk_device *dev,
                            const VkPipelineShaderStageCreateInfo *stages,
                            uint32_t n);
/* The device-level entry points of code.c, else memory.c's. */
PFN_vkVoidFunction gp__vk_code_intercept(const char *name);

/* The program's queries (cmd.c, asked last). */
PFN_vkVoidFunction gp__vk_query_intercept(const char *name);

/* The allocator to create dev's device with: a, or ours (which records
 * the driver's host allocations) when a is NULL and memory is tracked. */
const VkAllocationCallbacks *
gp__vk_driver_allocator(gp__vk_device *dev, const VkAllocationCallbacks *a);

/* Frees what memory.c keeps for a device going away. */
void gp__vk_memory_fini(gp__vk_device *dev);

/* True if family's queues can copy query results (graphics, compute). */
bool gp__vk_family_copies(gp__vk_device *dev, uint32_t family);

/* A host-visible, coherent buffer of size bytes that transfers write,
 * made and mapped: its mapping, or NULL (*buf, *mem null) if it cannot
 * be made. */
void *gp__vk_host_buffer(gp__vk_device *dev, VkDeviceSize size, VkBuffer *buf,
                         VkDeviceMemory *mem);

/* Frees a gp__vk_host_buffer (null handles are accepted) and nulls them. */
void gp__vk_host_buffer_free(gp__vk_device *dev, VkBuffer *buf,
                             VkDeviceMemory *mem);

/* ---- pstats.c ---- */

/* Why a stage's statistics were lost (bits of dev->pstats_warned). */
enum {
  GP_VK_PSTATS_LOST_APP_QUERY = 1u << 0, /* inside the program's query */
  GP_VK_PSTATS_LOST_ENDED = 1u << 1,     /* ended early: program, secondaries */
  GP_VK_PSTATS_LOST_NO_POOL = 1u << 2,   /* the pool could not be made */
  GP_VK_PSTATS_LOST_UNAVAILABLE = 1u << 3 /* results never there */
};

/* Says once per device in the GPU log (tag "Vulkan") that per-stage
 * statistics were lost, and why. */
void gp__vk_pstats_lost(gp__vk_device *dev, uint32_t why);

/* At the end of c's recording: the device copies its statistics into
 * c's results buffer (see sbuf). */
void gp__vk_pstats_copy(gp__vk_device *dev, VkCommandBuffer cb,
                        gp__vk_cmdbuf *c);

/* Before c is submitted: the last execution's statistics are forgotten. */
void gp__vk_pstats_clear(gp__vk_cmdbuf *c);

/* Publishes the pipeline-statistics catalog of dev's core device (once
 * per device; supported: the driver offers the feature). */
void gp__vk_pstats_publish(gp__vk_device *dev, bool supported);

/* True if a stage (its label or kind) is to be measured now. */
bool gp__vk_pstats_want(gp__vk_device *dev, uint32_t name_id, uint32_t stage);

/* Makes c's statistics pool hold n queries. False if it cannot. */
bool gp__vk_pstats_pool(gp__vk_device *dev, gp__vk_cmdbuf *c, uint32_t n);

/* Writes the counters of c's measured regions, whose GPU times (trace
 * clock) are start[i], end[i]. */
void gp__vk_pstats_emit(gp__vk_device *dev, const gp__vk_cmdbuf *c,
                        uint64_t corr, const uint64_t *start,
                        const uint64_t *end);

/* Frees c's statistics pool. */
void gp__vk_pstats_fini(gp__vk_device *dev, gp__vk_cmdbuf *c);

/* ---- log.c ---- */

/* A GPU log warning (tag "Vulkan") of msg, unless bit is set in *said;
 * sets it. Takes no lock. */
void gp__vk_warn_once(gp__vk_device *dev, uint32_t *said, uint32_t bit,
                      const char *msg);

/* Creates the layer's debug-utils messenger on an instance whose program
 * enabled VK_EXT_debug_utils; its messages become GPU_LOG records. */
void gp__vk_log_attach(gp__vk_instance *inst, const VkAllocationCallbacks *a);

/* Destroys it again (before the instance). */
void gp__vk_log_detach(gp__vk_instance *inst, const VkAllocationCallbacks *a);

#endif /* GPUPERF_VULKAN_VKINT_H */
