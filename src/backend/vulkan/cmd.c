/*
 * cmd.c - command buffers: their state, and the timestamps the layer
 * records into them.
 *
 * When render stages are being recorded, a primary command buffer gets a
 * query pool of ours and a small host-visible buffer (both sized from its
 * previous recording, so made once in the steady state). Its recording
 * starts by resetting the pool and writing timestamp 0; each render pass,
 * dynamic rendering block, dispatch, transfer command and secondary
 * command buffer executed outside a render pass is bracketed by two
 * timestamps (top of pipe before, bottom of pipe after) and noted as a
 * region with the debug label then in effect; the end writes the last
 * timestamp and copies the timestamps used, with their availability, into
 * the buffer (vkCmdCopyQueryPoolResults), where readback.c reads them
 * without calling the driver. Because the reset is part of the recording,
 * a command buffer submitted again measures each execution afresh.
 *
 * The deferred copy. On a device that runs command buffers in order on
 * the host's threads (lavapipe), a copy after the recording's render
 * passes costs its vkQueueSubmit several microseconds (WAIT or not). So
 * there the pool has two halves, and a recording with ONE_TIME_SUBMIT
 * (of a command buffer recorded and submitted before, without pipeline
 * statistics) copies nothing at its end: its timestamps stay in its half
 * ("held", readback.c) and the command buffer's next recording, which
 * writes the other half, begins by copying them without WAIT (their work
 * is over: a command buffer is recorded again only then). They are read
 * once that recording has run; if none comes, when the command buffer is
 * freed or at a forced flush, from the driver.
 *
 * The prologue. Lavapipe skips a command buffer's leading pipeline
 * barrier (a render pass begins with one) only while nothing comes
 * before it; else it flushes there and waits for all the work before
 * (counted in its own Gallium trace: one flush a frame more). So on such
 * a device a recording's first commands (the copy of the held timestamps
 * and the reset) go into a command buffer of ours, made once from a pool
 * of its own and recorded again with each recording; submit.c gives it
 * to the driver just before the program's, in the same batch (in a batch
 * of its own just before, where the batch has a mask per command buffer).
 * Secondary command buffers are not instrumented themselves: each is one
 * stage of the primary that executes it (inside a render pass, part of
 * the pass).
 *
 * A command buffer of a queue family without timestamps
 * (timestampValidBits 0) writes none: its stages are noted all the same
 * and written without times (instants at the submission in the trace),
 * and the first of each family is reported once in the GPU log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkInt.h"

/* See vkInt.h. */
bool gp__vk_tracing(const gp__vk_device *dev) {
  return gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_RENDER_STAGE,
                                       dev->context_id);
}

/* See vkInt.h. */
uint32_t gp__vk_timestamp_bits(gp__vk_device *dev, uint32_t f) {
  if (dev->ts_override) /* set with the first command pool */
    return dev->ts_override - 1;
  return f < 64 ? dev->timestamp_bits[f] : 0;
}

/* Looks up the functions the read-back needs and what the device's
 * timestamps are like, once, at its first command pool (dev->lock
 * held). */
static void readback_fns(gp__vk_device *dev) {
  if (dev->readback_fns)
    return;
#define GET(name) dev->name = (PFN_vk##name)dev->gdpa(dev->handle, "vk" #name)
  GET(CmdCopyQueryPoolResults);
  GET(CmdPipelineBarrier);
  GET(CmdExecuteCommands);
  GET(CreateCommandPool);
  GET(MapMemory);
#undef GET
  VkPhysicalDeviceProperties props;
  dev->inst->GetPhysicalDeviceProperties(dev->phys, &props);
  dev->ts_in_order = props.vendorID == VK_VENDOR_ID_MESA &&
                     props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  const char *e = getenv("GPUPERF_VULKAN_TEST_TIMESTAMP_BITS");
  dev->ts_override = e && *e ? (uint32_t)strtoul(e, NULL, 10) + 1 : 0;
  dev->readback_fns = true;
}

/* See vkInt.h. */
gp__vk_cmdbuf *gp__vk_cmdbuf_get(gp__vk_device *dev, VkCommandBuffer cb) {
  pthread_mutex_lock(&dev->lock);
  gp__vk_cmdbuf *c = gp__vk_map_get(&dev->cmdbufs, (uint64_t)(uintptr_t)cb);
  pthread_mutex_unlock(&dev->lock);
  return c;
}

/* See vkInt.h. */
void gp__vk_cmdbuf_free(gp__vk_device *dev, gp__vk_cmdbuf *c) {
  gp__vk_map_del(&dev->cmdbufs, (uint64_t)(uintptr_t)c->handle);
  if (c->qpool)
    dev->DestroyQueryPool(dev->handle, c->qpool, NULL);
  gp__vk_host_buffer_free(dev, &c->rbuf, &c->rmem);
  gp__vk_pstats_fini(dev, c);
  if (c->pro_pool) { /* with the prologue */
    dev->DestroyCommandPool(dev->handle, c->pro_pool, NULL);
    atomic_fetch_sub(&dev->prologues, 1);
  }
  free(c->regions);
  free(c->spare);
  free(c);
}

/* Notes each pool's queue family: its command buffers' timestamps depend
 * on it. */
static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo *ci,
                        const VkAllocationCallbacks *a, VkCommandPool *pool) {
  gp__vk_device *dev = gp__vk_device_of(device);
  pthread_mutex_lock(&dev->lock);
  readback_fns(dev);
  pthread_mutex_unlock(&dev->lock);
  VkResult r = dev->CreateCommandPool(device, ci, a, pool);
  if (r == VK_SUCCESS) {
    pthread_mutex_lock(&dev->lock);
    gp__vk_map_put(&dev->pools, (uint64_t)(uintptr_t)*pool,
                   (void *)(uintptr_t)(ci->queueFamilyIndex + 1u));
    pthread_mutex_unlock(&dev->lock);
  }
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_AllocateCommandBuffers(
    VkDevice device, const VkCommandBufferAllocateInfo *ai,
    VkCommandBuffer *out) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->AllocateCommandBuffers(device, ai, out);
  if (r != VK_SUCCESS)
    return r;
  pthread_mutex_lock(&dev->lock);
  for (uint32_t i = 0; i < ai->commandBufferCount; i++) {
    gp__vk_cmdbuf *c = calloc(1, sizeof(*c));
    if (!c)
      break; /* that one is not measured */
    c->handle = out[i];
    c->pool = ai->commandPool;
    c->dev = dev;
    c->primary = ai->level == VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    uintptr_t fam = (uintptr_t)gp__vk_map_get(
        &dev->pools, (uint64_t)(uintptr_t)ai->commandPool);
    c->family = fam ? (uint32_t)(fam - 1) : 0;
    if (gp__vk_map_put(&dev->cmdbufs, (uint64_t)(uintptr_t)out[i], c) != 0)
      free(c);
  }
  pthread_mutex_unlock(&dev->lock);
  return r;
}

/* Forgets a command buffer, reading back its submissions first. */
static void forget(gp__vk_device *dev, gp__vk_cmdbuf *c) {
  if (c->pending)
    gp__vk_resolve_all(dev, c);
  gp__vk_cmdbuf_free(dev, c);
}

/* Forgets dev's command buffers of pool, or all of them when pool is
 * null. Scanning the table is linear in the command buffers alive.
 * dev->lock held. */
static void forget_pool(gp__vk_device *dev, VkCommandPool pool) {
  for (size_t i = 0; i < dev->cmdbufs.cap;) {
    gp__vk_cmdbuf *c = dev->cmdbufs.vals[i];
    if (dev->cmdbufs.keys[i] && (!pool || c->pool == pool))
      forget(dev, c); /* the slot may now hold a shifted entry: look again */
    else
      i++;
  }
}

/* See vkInt.h. */
void gp__vk_cmd_fini(gp__vk_device *dev) {
  forget_pool(dev, VK_NULL_HANDLE);
  gp__vk_map_fini(&dev->pools);
}

static VKAPI_ATTR void VKAPI_CALL
layer_FreeCommandBuffers(VkDevice device, VkCommandPool pool, uint32_t n,
                         const VkCommandBuffer *cbs) {
  gp__vk_device *dev = gp__vk_device_of(device);
  pthread_mutex_lock(&dev->lock);
  for (uint32_t i = 0; i < n; i++) {
    gp__vk_cmdbuf *c =
        gp__vk_map_get(&dev->cmdbufs, (uint64_t)(uintptr_t)cbs[i]);
    if (c)
      forget(dev, c);
  }
  pthread_mutex_unlock(&dev->lock);
  dev->FreeCommandBuffers(device, pool, n, cbs);
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyCommandPool(
    VkDevice device, VkCommandPool pool, const VkAllocationCallbacks *alloc) {
  gp__vk_device *dev = gp__vk_device_of(device);
  pthread_mutex_lock(&dev->lock);
  forget_pool(dev, pool); /* a pool's buffers go with it */
  gp__vk_map_del(&dev->pools, (uint64_t)(uintptr_t)pool);
  pthread_mutex_unlock(&dev->lock);
  dev->DestroyCommandPool(device, pool, alloc);
}

/* See vkInt.h. */
bool gp__vk_family_copies(gp__vk_device *dev, uint32_t family) {
  VkQueueFamilyProperties fams[64];
  uint32_t nf = 64;
  dev->inst->GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nf, fams);
  return family < nf && dev->CmdCopyQueryPoolResults &&
         (fams[family].queueFlags &
          (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT));
}

/* Makes c's results buffer hold n queries (a value and an availability
 * word each), mapped; on failure c has none. Only for families that can
 * copy query results (graphics or compute). */
static void ensure_results(gp__vk_device *dev, gp__vk_cmdbuf *c, uint32_t n) {
  gp__vk_host_buffer_free(dev, &c->rbuf, &c->rmem);
  c->results = NULL;
  if (!gp__vk_family_copies(dev, c->family) || !dev->CmdPipelineBarrier)
    return;
  void *map = gp__vk_host_buffer(dev, (VkDeviceSize)n * 16, &c->rbuf, &c->rmem);
  if (!map)
    return;
  c->results = map;
  memset(c->results, 0, (size_t)n * 16);
}

/* Makes room for want regions (2 queries each, plus 2) in c's regions
 * and in each half of its pool. False if none. A command buffer without
 * timestamps needs no pool: only its regions. On an in-order device whose
 * timestamps are copied into a results buffer the pool has two halves
 * (the deferred copy, at the top of this file), else one. */
static bool ensure_pool(gp__vk_device *dev, gp__vk_cmdbuf *c, uint32_t want) {
  if (want > GP_VK_REGIONS_MAX)
    want = GP_VK_REGIONS_MAX;
  uint32_t need = 2 + 2 * want;
  if (c->rcap < want) {
    gp__vk_region *regions = realloc(c->regions, want * sizeof(*regions));
    if (!regions)
      return false;
    c->regions = regions;
    c->rcap = want;
  }
  if ((c->qpool || c->untimed) && c->qhalf >= need)
    return true;
  if (c->pending) { /* what the old pool holds is read first */
    pthread_mutex_lock(&dev->lock);
    gp__vk_resolve_all(dev, c);
    pthread_mutex_unlock(&dev->lock);
  }
  if (c->qpool)
    dev->DestroyQueryPool(dev->handle, c->qpool, NULL);
  c->qpool = VK_NULL_HANDLE;
  c->qcap = c->qhalf = c->half = 0;
  if (c->untimed) {
    c->qcap = c->qhalf = need;
    return true;
  }
  uint32_t halves =
      dev->ts_in_order && gp__vk_family_copies(dev, c->family) ? 2 : 1;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = halves * need};
  if (dev->CreateQueryPool(dev->handle, &qi, NULL, &c->qpool) != VK_SUCCESS) {
    c->qpool = VK_NULL_HANDLE;
    return false;
  }
  c->qcap = halves * need;
  ensure_results(dev, c, c->qcap);
  c->qhalf = c->results ? need : c->qcap;
  return true;
}

/* Says once per device and queue family, in the GPU log, that its
 * command buffers are recorded without times. */
static void warn_untimed(gp__vk_device *dev, uint32_t family) {
  char msg[192];
  snprintf(msg, sizeof(msg),
           "gpuperf: queue family %u has no timestamps (timestampValidBits "
           "0): its render stages are recorded without times, as instants "
           "at their submission",
           family);
  gp__vk_warn_once(dev, &dev->untimed_warned,
                   family < 32 ? 1u << family : 1u << 31, msg);
}

/*
 * Writes timestamp q of c. On a device that runs each command buffer in
 * order on the host (lavapipe), every timestamp is top of pipe: one at
 * the bottom of the pipe first runs the work binned so far, a pass of the
 * rasterizer threads that the submission waits for (vkmark's clear
 * scene, a transfer a frame, lost half its frame rate to three of them).
 * A timestamp is a command in every tile, read as the latest tile's
 * time, run when the work binned with it is: in a render pass, with it
 * (so a pass's last timestamp goes inside it), outside, at the next
 * flush (the next render pass, or the copy of the timestamps). That
 * ends a stage, but does not begin one: readback.c takes a stage's start
 * from the end of the work before it. The command buffer's start (query
 * 0) is written with its first other timestamp, not at its beginning,
 * where it would make a pass of its own (with the previous framebuffer)
 * before the first render pass's.
 */
static void stamp(gp__vk_device *dev, VkCommandBuffer cb, gp__vk_cmdbuf *c,
                  VkPipelineStageFlagBits stage, uint32_t q) {
  if (c->untimed)
    return;
  if (dev->ts_in_order)
    stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
  uint32_t base = c->half * c->qhalf;
  if (c->start_due) {
    c->start_due = false;
    /* (one with nothing timed gets both: no duration of 0) */
    c->start_q = dev->ts_in_order && c->results && q != 1 ? q : 0;
    if (q != c->start_q)
      dev->CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, c->qpool,
                             base);
  }
  dev->CmdWriteTimestamp(cb, stage, c->qpool, base + q);
  c->last_q = q;
}

/* c's submission whose timestamps are held in its query pool, or NULL
 * (dev->lock held). */
static gp__vk_pending *held(gp__vk_cmdbuf *c) {
  for (uint32_t i = 0; i < 2; i++)
    if ((c->pending & (1u << i)) && c->sub[i].state == GP_VK_COPY_HELD)
      return &c->sub[i];
  return NULL;
}

/* Records the copy of the timestamps a recording wrote (the command
 * buffer's start and end, its regions' n - 2), from its half of c's pool
 * (first query base) into the same place in the results buffer. */
static void copy_results(gp__vk_device *dev, VkCommandBuffer cb,
                         gp__vk_cmdbuf *c, uint32_t base, uint32_t start_q,
                         uint32_t end_q, uint32_t n, VkQueryResultFlags fl) {
  if (start_q == 0 && end_q == 1) {
    dev->CmdCopyQueryPoolResults(cb, c->qpool, base, n, c->rbuf,
                                 (VkDeviceSize)base * 16, 16, fl);
    return;
  }
  /* only those written: a copy waits for each */
  for (uint32_t q = 0; q < 2; q++)
    if (q == (q ? end_q : start_q))
      dev->CmdCopyQueryPoolResults(cb, c->qpool, base + q, 1, c->rbuf,
                                   (VkDeviceSize)(base + q) * 16, 16, fl);
  if (n > 2)
    dev->CmdCopyQueryPoolResults(cb, c->qpool, base + 2, n - 2, c->rbuf,
                                 (VkDeviceSize)(base + 2) * 16, 16, fl);
}

/* True if c's pool has two halves (the deferred copy). */
static bool halved(const gp__vk_cmdbuf *c) {
  return c->qcap >= 2 * c->qhalf;
}

/* True if a region of c's recording measures pipeline statistics. */
static bool has_stats(const gp__vk_cmdbuf *c) {
  for (uint32_t i = 0; i < c->nregions; i++)
    if (c->regions[i].stat_q)
      return true;
  return false;
}

/* Begins recording c's prologue for a recording begun with flags: the
 * command buffer to write its first commands into, or null (then they go
 * into c's own). Its pool and command buffer are made once. */
static VkCommandBuffer prologue_begin(gp__vk_device *dev, gp__vk_cmdbuf *c,
                                      VkCommandBufferUsageFlags flags) {
  c->pro_armed = false;
  if (!dev->ts_in_order || c->pro_failed)
    return VK_NULL_HANDLE;
  if (!c->pro) {
    VkCommandPoolCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                 VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = c->family};
    VkCommandBufferAllocateInfo ai = {
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, VK_NULL_HANDLE,
        VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    c->pro_failed = true; /* unless all goes well */
    if (!dev->set_loader_data || !dev->CreateCommandPool ||
        dev->CreateCommandPool(dev->handle, &pi, NULL, &c->pro_pool) !=
            VK_SUCCESS) {
      c->pro_pool = VK_NULL_HANDLE;
      return VK_NULL_HANDLE;
    }
    atomic_fetch_add(&dev->prologues, 1);
    ai.commandPool = c->pro_pool;
    if (dev->AllocateCommandBuffers(dev->handle, &ai, &c->pro) != VK_SUCCESS ||
        dev->set_loader_data(dev->handle, c->pro) != VK_SUCCESS)
      return c->pro = VK_NULL_HANDLE; /* the pool goes with c */
    c->pro_failed = false;
  }
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = flags & (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT |
                        VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT)};
  return dev->BeginCommandBuffer(c->pro, &bi) == VK_SUCCESS ? c->pro
                                                            : VK_NULL_HANDLE;
}

/* See vkInt.h. */
VkCommandBuffer gp__vk_prologue_of(gp__vk_device *dev, VkCommandBuffer cb) {
  gp__vk_cmdbuf *c = gp__vk_map_get(&dev->cmdbufs, (uint64_t)(uintptr_t)cb);
  return c && c->pro_armed && c->instrumented && c->recorded ? c->pro
                                                             : VK_NULL_HANDLE;
}

/* Writes what a recording of c begins with into into (c's prologue or cb
 * itself): the copy of the timestamps its previous recording left in the
 * pool (deferred copy), then the reset of the half it writes. */
static void first_commands(gp__vk_device *dev, VkCommandBuffer into,
                           gp__vk_cmdbuf *c) {
  pthread_mutex_lock(&dev->lock);
  gp__vk_pending *h = held(c);
  c->half = h && halved(c) ? 1 - h->half : 0;
  c->copies = 0;
  if (h && halved(c) && c->results) {
    copy_results(
        dev, into, c, h->base, h->start_q, h->end_q, 2 + 2 * h->nregions,
        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    c->copies = h->half + 1;
  }
  pthread_mutex_unlock(&dev->lock);
  dev->CmdResetQueryPool(into, c->qpool, c->half * c->qhalf, c->qhalf);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BeginCommandBuffer(
    VkCommandBuffer cb, const VkCommandBufferBeginInfo *bi) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  VkResult r = dev->BeginCommandBuffer(cb, bi);
  pthread_mutex_lock(&dev->lock);
  gp__vk_cmdbuf *c = gp__vk_map_get(&dev->cmdbufs, (uint64_t)(uintptr_t)cb);
  if (c && c->pending) /* recorded again: the last execution is over */
    gp__vk_resolve(dev, true, c);
  pthread_mutex_unlock(&dev->lock);
  if (!c)
    return r;
  uint32_t want = c->want > GP_VK_REGIONS_FIRST ? c->want : GP_VK_REGIONS_FIRST;
  c->instrumented = false;
  c->recorded = false;
  c->pro_armed = false;
  c->submits = 0;
  c->simultaneous =
      (bi->flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT) != 0;
  c->nregions = c->want = c->open_region = 0;
  c->label_depth = 0;
  c->stat_open = c->app_stats = false;
  c->kinds = 0;
  c->last_q = c->start_q = 0;
  c->end_q = 1;
  if (r != VK_SUCCESS || !c->primary || !gp__vk_tracing(dev) ||
      !dev->CmdWriteTimestamp)
    return r;
  bool untimed = gp__vk_timestamp_bits(dev, c->family) == 0;
  if (untimed != c->untimed) { /* a pool of the other kind: start over */
    c->untimed = untimed;
    c->qcap = c->qhalf = 0;
  }
  c->one_time = (bi->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) &&
                !(bi->flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
  c->defer = false;
  c->copies = 0;
  /* The regions of a submission still held in the pool are its own. */
  pthread_mutex_lock(&dev->lock);
  gp__vk_pending *h = held(c);
  if (h && h->regions == c->regions) {
    gp__vk_region *t = c->regions;
    uint32_t cap = c->rcap;
    c->regions = c->spare;
    c->rcap = c->spare_cap;
    c->spare = t;
    c->spare_cap = cap;
  }
  pthread_mutex_unlock(&dev->lock);
  if (!ensure_pool(dev, c, want))
    return r;
  c->instrumented = true;
  if (untimed) {
    warn_untimed(dev, c->family);
    return r;
  }
  /* This recording writes the half the held submission is not in, and
   * first copies the held timestamps into the results buffer: their work
   * is over (the command buffer could not be recorded again before), so
   * the copy needs no WAIT. On an in-order device both go into the
   * prologue: lavapipe skips a command buffer's leading pipeline barrier
   * (a render pass begins with one) only while nothing comes before it,
   * else it flushes there and waits for all the work before (measured:
   * +4 context switches and up to a fifth of the frame rate of a loop of
   * render passes). */
  VkCommandBuffer pro = prologue_begin(dev, c, bi->flags);
  first_commands(dev, pro ? pro : cb, c);
  if (pro && dev->EndCommandBuffer(pro) == VK_SUCCESS)
    c->pro_armed = true;
  else if (pro) /* not recorded: in the command buffer after all */
    first_commands(dev, cb, c);
  c->start_due = true;
  if (!dev->ts_in_order) /* else with the first timestamp after it */
    stamp(dev, cb, c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_EndCommandBuffer(VkCommandBuffer cb) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && c->instrumented && !c->untimed) {
    /* On an in-order device, a command buffer whose last timed stage
     * ends it ends with that stage: another timestamp would be another
     * pass over the tiles. Not where its timestamps are read from the
     * driver (query 1 would never be available). */
    uint32_t last = c->last_q;
    if (dev->ts_in_order && c->results && last >= 3 && last % 2 == 1) {
      c->end_q = last;
    } else {
      c->end_q = 1;
      stamp(dev, cb, c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 1);
    }
    gp__vk_pstats_copy(dev, cb, c);
    /* On an in-order device (lavapipe), a copy after the render pass
     * costs the submission its time (measured: +4 to +12 us in
     * vkQueueSubmit at 800x600, with WAIT or without): a recording
     * submitted once leaves its timestamps in the pool for the command
     * buffer's next recording to copy at its beginning. Only in a command
     * buffer recorded and submitted before (a frame's, not a one-off
     * upload's, whose timestamps would wait in its pool until it is
     * freed), and not where its regions measure pipeline statistics,
     * which are copied here. Begun with ONE_TIME_SUBMIT, or not but
     * recorded again for each submission so far (vkmark records its
     * frames with SIMULTANEOUS_USE): once a recording of it is submitted
     * twice (vkcube's, recorded once), its recordings copy at their end,
     * and the recording submitted again is read from the driver first
     * (submit.c). Also after the program's last barrier, which lavapipe
     * then runs as a flush and a wait (a barrier last in a command buffer
     * it skips). */
    c->defer = dev->ts_in_order && c->results && (c->one_time || !c->multi) &&
               c->resubmitted && halved(c) && !has_stats(c);
    if (c->results && !c->defer) {
      /* The device waits for its timestamps (on its own timeline) and
       * copies them where the host reads them without the driver. */
      copy_results(dev, cb, c, c->half * c->qhalf, c->start_q, c->end_q,
                   2 + 2 * c->nregions,
                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
                       VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
      /* The copy made visible to the host: where the device is the
       * host's own threads (lavapipe), its writes are the host's already,
       * and its barriers flush the work binned so far. */
      VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                            VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_ACCESS_HOST_READ_BIT};
      if (!dev->ts_in_order)
        dev->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL,
                                0, NULL);
    }
  }
  VkResult r = dev->EndCommandBuffer(cb);
  if (c)
    c->recorded = r == VK_SUCCESS;
  return r;
}

/* ------------------------------------------------------------------ */
/* Regions                                                              */

/* Opens a region before a command; returns the state to close it with
 * (NULL if this command is not measured). inside: a render pass whose
 * timestamps go inside it on this device (pass_begun() writes the first,
 * after the pass has begun). */
static gp__vk_cmdbuf *region_open(gp__vk_device *dev, VkCommandBuffer cb,
                                  uint32_t stage, uint64_t render_pass,
                                  uint64_t target, bool inside) {
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && !c->primary) /* what the primary's stage for it will be */
    c->kinds |= 1u << stage;
  if (!c || !c->instrumented || c->open_region)
    return NULL;
  c->want++;
  if (2 + 2 * (c->nregions + 1) > c->qhalf)
    return NULL; /* counted in want: the next recording has room */
  uint32_t i = c->nregions++;
  c->regions[i].stage = stage;
  c->regions[i].name_id = c->label_depth && c->label_depth <= GP_VK_LABEL_DEPTH
                              ? c->labels[c->label_depth - 1]
                              : 0;
  c->regions[i].render_pass = render_pass;
  c->regions[i].render_target = target;
  c->regions[i].stat_q = c->regions[i].stat_lost = 0;
  c->regions[i].inside = inside && dev->ts_in_order;
  c->open_region = i + 1;
  if (!c->regions[i].inside)
    stamp(dev, cb, c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 2 + 2 * i);
  /* Pipeline statistics, if this stage is to be measured (outside any
   * render pass here: the reset is allowed). */
  if ((stage == GP_RENDER_STAGE_RENDER_PASS ||
       stage == GP_RENDER_STAGE_COMPUTE) &&
      dev->pstats && gp__vk_pstats_want(dev, c->regions[i].name_id, stage)) {
    if (c->app_stats) /* the program's query is active: ours cannot be */
      gp__vk_pstats_lost(dev, GP_VK_PSTATS_LOST_APP_QUERY);
    else if (gp__vk_pstats_pool(dev, c, c->qhalf / 2)) {
      dev->CmdResetQueryPool(cb, c->spool, i, 1);
      dev->CmdBeginQuery(cb, c->spool, i, 0);
      c->regions[i].stat_q = i + 1;
      c->stat_open = true;
    }
  }
  return c;
}

/* After a render pass has begun: its first timestamp, if it goes inside. */
static void pass_begun(gp__vk_device *dev, VkCommandBuffer cb,
                       gp__vk_cmdbuf *c) {
  if (!c || !c->open_region)
    return;
  uint32_t i = c->open_region - 1;
  if (c->regions[i].inside)
    stamp(dev, cb, c, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 2 + 2 * i);
}

static void region_close(gp__vk_device *dev, VkCommandBuffer cb,
                         gp__vk_cmdbuf *c) {
  if (!c || !c->open_region)
    return;
  uint32_t i = c->open_region - 1;
  c->open_region = 0;
  if (c->stat_open) {
    dev->CmdEndQuery(cb, c->spool, i);
    c->stat_open = false;
  }
  if (!c->regions[i].inside) /* else written before the pass ended */
    stamp(dev, cb, c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 3 + 2 * i);
}

/* Before a render pass ends: its last timestamp, if it goes inside. */
static void pass_ending(gp__vk_device *dev, VkCommandBuffer cb) {
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (!c || !c->open_region)
    return;
  uint32_t i = c->open_region - 1;
  if (c->regions[i].stage == GP_RENDER_STAGE_RENDER_PASS &&
      c->regions[i].inside)
    stamp(dev, cb, c, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 3 + 2 * i);
}

/* Render passes close at their end command, not after the begin. */
static void pass_close(gp__vk_device *dev, VkCommandBuffer cb) {
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && c->open_region &&
      c->regions[c->open_region - 1].stage == GP_RENDER_STAGE_RENDER_PASS)
    region_close(dev, cb, c);
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdBeginRenderPass(VkCommandBuffer cb, const VkRenderPassBeginInfo *bi,
                         VkSubpassContents contents) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = region_open(dev, cb, GP_RENDER_STAGE_RENDER_PASS,
                                 (uint64_t)(uintptr_t)bi->renderPass,
                                 (uint64_t)(uintptr_t)bi->framebuffer,
                                 contents == VK_SUBPASS_CONTENTS_INLINE);
  dev->CmdBeginRenderPass(cb, bi, contents);
  pass_begun(dev, cb, c);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderPass(VkCommandBuffer cb) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  pass_ending(dev, cb);
  dev->CmdEndRenderPass(cb);
  pass_close(dev, cb);
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdBeginRenderPass2(VkCommandBuffer cb, const VkRenderPassBeginInfo *bi,
                          const VkSubpassBeginInfo *si) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = region_open(
      dev, cb, GP_RENDER_STAGE_RENDER_PASS, (uint64_t)(uintptr_t)bi->renderPass,
      (uint64_t)(uintptr_t)bi->framebuffer,
      !si || si->contents == VK_SUBPASS_CONTENTS_INLINE);
  dev->CmdBeginRenderPass2(cb, bi, si);
  pass_begun(dev, cb, c);
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdEndRenderPass2(VkCommandBuffer cb, const VkSubpassEndInfo *ei) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  pass_ending(dev, cb);
  dev->CmdEndRenderPass2(cb, ei);
  pass_close(dev, cb);
}

/* Dynamic rendering: the target is the first color attachment's view. */
static uint64_t rendering_target(const VkRenderingInfo *ri) {
  if (ri->colorAttachmentCount && ri->pColorAttachments)
    return (uint64_t)(uintptr_t)ri->pColorAttachments[0].imageView;
  if (ri->pDepthAttachment)
    return (uint64_t)(uintptr_t)ri->pDepthAttachment->imageView;
  return 0;
}

/* A resumed block continues the suspended one's region; one whose
 * contents are secondary command buffers has its timestamps outside. */
static gp__vk_cmdbuf *rendering_open(gp__vk_device *dev, VkCommandBuffer cb,
                                     const VkRenderingInfo *ri) {
  if (ri->flags & VK_RENDERING_RESUMING_BIT)
    return NULL;
  return region_open(
      dev, cb, GP_RENDER_STAGE_RENDER_PASS, 0, rendering_target(ri),
      !(ri->flags & VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT));
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdBeginRendering(VkCommandBuffer cb, const VkRenderingInfo *ri) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = rendering_open(dev, cb, ri);
  dev->CmdBeginRendering(cb, ri);
  pass_begun(dev, cb, c);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRendering(VkCommandBuffer cb) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  pass_ending(dev, cb);
  dev->CmdEndRendering(cb);
  pass_close(dev, cb);
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdBeginRenderingKHR(VkCommandBuffer cb, const VkRenderingInfo *ri) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = rendering_open(dev, cb, ri);
  dev->CmdBeginRenderingKHR(cb, ri);
  pass_begun(dev, cb, c);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndRenderingKHR(VkCommandBuffer cb) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  pass_ending(dev, cb);
  dev->CmdEndRenderingKHR(cb);
  pass_close(dev, cb);
}

/* A command timed on its own: region around the forwarded call. */
#define TIMED(stage, target, call)                                             \
  do {                                                                         \
    gp__vk_device *dev = gp__vk_device_of(cb);                                 \
    gp__vk_cmdbuf *c =                                                         \
        region_open(dev, cb, stage, 0, (uint64_t)(target), false);             \
    dev->call;                                                                 \
    region_close(dev, cb, c);                                                  \
  } while (0)

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatch(VkCommandBuffer cb,
                                                    uint32_t x, uint32_t y,
                                                    uint32_t z) {
  TIMED(GP_RENDER_STAGE_COMPUTE, 0, CmdDispatch(cb, x, y, z));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdDispatchIndirect(VkCommandBuffer cb,
                                                            VkBuffer b,
                                                            VkDeviceSize o) {
  TIMED(GP_RENDER_STAGE_COMPUTE, 0, CmdDispatchIndirect(cb, b, o));
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdDispatchBase(VkCommandBuffer cb, uint32_t bx, uint32_t by, uint32_t bz,
                      uint32_t x, uint32_t y, uint32_t z) {
  TIMED(GP_RENDER_STAGE_COMPUTE, 0, CmdDispatchBase(cb, bx, by, bz, x, y, z));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdCopyBuffer(VkCommandBuffer cb,
                                                      VkBuffer src,
                                                      VkBuffer dst, uint32_t n,
                                                      const VkBufferCopy *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdCopyBuffer(cb, src, dst, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdCopyImage(
    VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst,
    VkImageLayout dl, uint32_t n, const VkImageCopy *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdCopyImage(cb, src, sl, dst, dl, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdCopyBufferToImage(
    VkCommandBuffer cb, VkBuffer src, VkImage dst, VkImageLayout dl, uint32_t n,
    const VkBufferImageCopy *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdCopyBufferToImage(cb, src, dst, dl, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdCopyImageToBuffer(
    VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkBuffer dst, uint32_t n,
    const VkBufferImageCopy *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdCopyImageToBuffer(cb, src, sl, dst, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBlitImage(
    VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst,
    VkImageLayout dl, uint32_t n, const VkImageBlit *r, VkFilter f) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdBlitImage(cb, src, sl, dst, dl, n, r, f));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdResolveImage(
    VkCommandBuffer cb, VkImage src, VkImageLayout sl, VkImage dst,
    VkImageLayout dl, uint32_t n, const VkImageResolve *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdResolveImage(cb, src, sl, dst, dl, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdClearColorImage(
    VkCommandBuffer cb, VkImage img, VkImageLayout l,
    const VkClearColorValue *v, uint32_t n, const VkImageSubresourceRange *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)img,
        CmdClearColorImage(cb, img, l, v, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdClearDepthStencilImage(
    VkCommandBuffer cb, VkImage img, VkImageLayout l,
    const VkClearDepthStencilValue *v, uint32_t n,
    const VkImageSubresourceRange *r) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)img,
        CmdClearDepthStencilImage(cb, img, l, v, n, r));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdFillBuffer(VkCommandBuffer cb,
                                                      VkBuffer dst,
                                                      VkDeviceSize off,
                                                      VkDeviceSize size,
                                                      uint32_t data) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdFillBuffer(cb, dst, off, size, data));
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdUpdateBuffer(VkCommandBuffer cb,
                                                        VkBuffer dst,
                                                        VkDeviceSize off,
                                                        VkDeviceSize size,
                                                        const void *data) {
  TIMED(GP_RENDER_STAGE_TRANSFER, (uintptr_t)dst,
        CmdUpdateBuffer(cb, dst, off, size, data));
}

/* Secondary command buffers: outside a render pass, each is a stage of
 * its own, executed one by one between timestamps (the same as executing
 * them together), named "Secondary command buffer" or after its object
 * name, of the kind of the work it holds (rendering, else dispatches,
 * else transfers); inside a render pass, they are part of the pass's
 * stage. */
static VKAPI_ATTR void VKAPI_CALL layer_CmdExecuteCommands(
    VkCommandBuffer cb, uint32_t n, const VkCommandBuffer *cbs) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && c->stat_open && c->open_region) {
    /* No query may be active across secondaries (without the
     * inheritedQueries feature): the pass's statistics end here, lost. */
    uint32_t i = c->open_region - 1;
    dev->CmdEndQuery(cb, c->spool, i);
    c->regions[i].stat_lost = 1;
    c->stat_open = false;
  }
  if (!c || !c->instrumented || c->open_region) {
    dev->CmdExecuteCommands(cb, n, cbs);
    return;
  }
  static _Atomic uint32_t secondary_id;
  uint32_t id = atomic_load(&secondary_id);
  if (!id) {
    id = gp__vk_core->string_intern("Secondary command buffer");
    atomic_store(&secondary_id, id);
  }
  bool app_stats = c->app_stats;
  c->app_stats = true; /* no statistics query of ours around them */
  for (uint32_t i = 0; i < n; i++) {
    gp__vk_cmdbuf *s = gp__vk_cmdbuf_get(dev, cbs[i]);
    uint32_t k = s ? s->kinds : 0;
    uint32_t stage =
        (k & (1u << GP_RENDER_STAGE_RENDER_PASS)) ? GP_RENDER_STAGE_RENDER_PASS
        : (k & (1u << GP_RENDER_STAGE_COMPUTE))   ? GP_RENDER_STAGE_COMPUTE
                                                  : GP_RENDER_STAGE_TRANSFER;
    gp__vk_cmdbuf *o = region_open(dev, cb, stage, 0, 0, false);
    /* Named after the secondary, not the debug label around it. */
    if (o)
      o->regions[o->nregions - 1].name_id = s && s->name_id ? s->name_id : id;
    dev->CmdExecuteCommands(cb, 1, &cbs[i]);
    region_close(dev, cb, o);
  }
  c->app_stats = app_stats;
}

/* ------------------------------------------------------------------ */
/* Debug labels and names                                               */

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginDebugUtilsLabelEXT(
    VkCommandBuffer cb, const VkDebugUtilsLabelEXT *label) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c) {
    if (c->label_depth < GP_VK_LABEL_DEPTH)
      c->labels[c->label_depth] =
          label && label->pLabelName
              ? gp__vk_core->string_intern(label->pLabelName)
              : 0;
    c->label_depth++;
  }
  dev->CmdBeginDebugUtilsLabelEXT(cb, label);
}

static VKAPI_ATTR void VKAPI_CALL
layer_CmdEndDebugUtilsLabelEXT(VkCommandBuffer cb) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && c->label_depth)
    c->label_depth--;
  dev->CmdEndDebugUtilsLabelEXT(cb);
}

/* The name as a NAME record of an API object (VulkanApiEvent's
 * debug-utils object name in the trace). */
static void api_object_name(gp__vk_device *dev,
                            const VkDebugUtilsObjectNameInfoEXT *ni) {
  if (!ni->pObjectName ||
      !gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_NAME, 0))
    return;
  gp_activity_name *r =
      gp__vk_core->activity_reserve(GP_ACTIVITY_KIND_NAME, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->object_kind = GP_OBJECT_API_OBJECT;
  r->process_id = gp__vk_core->pid();
  r->thread_id = gp__vk_core->tid();
  r->device_id = dev->device_id;
  r->context_id = dev->context_id;
  r->stream_id = 0;
  r->name_id = gp__vk_core->string_intern(ni->pObjectName);
  r->reserved0 = 0;
  r->object_handle = ni->objectHandle;
  r->timestamp = gp_get_timestamp();
  r->api_object_type = (uint32_t)ni->objectType;
  r->reserved1 = 0;
  gp__vk_core->activity_commit(r);
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_SetDebugUtilsObjectNameEXT(
    VkDevice device, const VkDebugUtilsObjectNameInfoEXT *ni) {
  gp__vk_device *dev = gp__vk_device_of(device);
  if (ni)
    api_object_name(dev, ni);
  if (ni && ni->objectType == VK_OBJECT_TYPE_COMMAND_BUFFER) {
    gp__vk_cmdbuf *c =
        gp__vk_cmdbuf_get(dev, (VkCommandBuffer)(uintptr_t)ni->objectHandle);
    if (c)
      c->name_id =
          ni->pObjectName ? gp__vk_core->string_intern(ni->pObjectName) : 0;
  } else if (ni && ni->objectType == VK_OBJECT_TYPE_QUEUE && ni->pObjectName) {
    pthread_mutex_lock(&dev->lock);
    uint64_t v =
        (uint64_t)(uintptr_t)gp__vk_map_get(&dev->queues, ni->objectHandle);
    pthread_mutex_unlock(&dev->lock);
    if (v)
      gp__vk_core->emit_name(GP_OBJECT_STREAM, dev->device_id, dev->context_id,
                             (uint32_t)(v >> 32), 0, ni->pObjectName);
  }
  return dev->SetDebugUtilsObjectNameEXT(device, ni);
}

/* ------------------------------------------------------------------ */
/* The program's own pipeline-statistics queries                        */

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateQueryPool(VkDevice device, const VkQueryPoolCreateInfo *ci,
                      const VkAllocationCallbacks *a, VkQueryPool *pool) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->CreateQueryPool(device, ci, a, pool);
  if (r == VK_SUCCESS && ci->queryType == VK_QUERY_TYPE_PIPELINE_STATISTICS) {
    pthread_mutex_lock(&dev->lock);
    gp__vk_map_put(&dev->stat_pools, (uint64_t)(uintptr_t)*pool, dev);
    pthread_mutex_unlock(&dev->lock);
  }
  return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyQueryPool(
    VkDevice device, VkQueryPool pool, const VkAllocationCallbacks *a) {
  gp__vk_device *dev = gp__vk_device_of(device);
  pthread_mutex_lock(&dev->lock);
  gp__vk_map_del(&dev->stat_pools, (uint64_t)(uintptr_t)pool);
  pthread_mutex_unlock(&dev->lock);
  dev->DestroyQueryPool(device, pool, a);
}

static bool is_stat_pool(gp__vk_device *dev, VkQueryPool pool) {
  pthread_mutex_lock(&dev->lock);
  bool yes = gp__vk_map_get(&dev->stat_pools, (uint64_t)(uintptr_t)pool);
  pthread_mutex_unlock(&dev->lock);
  return yes;
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdBeginQuery(VkCommandBuffer cb,
                                                      VkQueryPool pool,
                                                      uint32_t q,
                                                      VkQueryControlFlags f) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && is_stat_pool(dev, pool)) {
    /* Two of the same type cannot be active: ours gives way. */
    if (c->stat_open && c->open_region) {
      uint32_t i = c->open_region - 1;
      dev->CmdEndQuery(cb, c->spool, i);
      c->regions[i].stat_lost = 1;
      c->stat_open = false;
    }
    c->app_stats = true;
  }
  dev->CmdBeginQuery(cb, pool, q, f);
}

static VKAPI_ATTR void VKAPI_CALL layer_CmdEndQuery(VkCommandBuffer cb,
                                                    VkQueryPool pool,
                                                    uint32_t q) {
  gp__vk_device *dev = gp__vk_device_of(cb);
  dev->CmdEndQuery(cb, pool, q);
  gp__vk_cmdbuf *c = gp__vk_cmdbuf_get(dev, cb);
  if (c && is_stat_pool(dev, pool))
    c->app_stats = false;
}

/* See vkInt.h. */
PFN_vkVoidFunction gp__vk_query_intercept(const char *name) {
  if (strcmp(name, "vkCreateQueryPool") == 0)
    return (PFN_vkVoidFunction)layer_CreateQueryPool;
  if (strcmp(name, "vkDestroyQueryPool") == 0)
    return (PFN_vkVoidFunction)layer_DestroyQueryPool;
  if (strcmp(name, "vkCmdBeginQuery") == 0)
    return (PFN_vkVoidFunction)layer_CmdBeginQuery;
  if (strcmp(name, "vkCmdEndQuery") == 0)
    return (PFN_vkVoidFunction)layer_CmdEndQuery;
  return NULL;
}

/* ------------------------------------------------------------------ */
/* The table                                                            */

/* See vkInt.h. */
PFN_vkVoidFunction gp__vk_device_intercept(const char *name) {
  static const struct {
    const char *name;
    PFN_vkVoidFunction fn;
  } table[] = {
#define E(n) {"vk" #n, (PFN_vkVoidFunction)layer_##n}
      E(CreateCommandPool),
      E(AllocateCommandBuffers),
      E(FreeCommandBuffers),
      E(DestroyCommandPool),
      E(BeginCommandBuffer),
      E(EndCommandBuffer),
      E(CmdBeginRenderPass),
      E(CmdEndRenderPass),
      E(CmdBeginRenderPass2),
      E(CmdEndRenderPass2),
      E(CmdBeginRendering),
      E(CmdEndRendering),
      E(CmdBeginRenderingKHR),
      E(CmdEndRenderingKHR),
      E(CmdDispatch),
      E(CmdDispatchIndirect),
      E(CmdDispatchBase),
      E(CmdCopyBuffer),
      E(CmdCopyImage),
      E(CmdCopyBufferToImage),
      E(CmdCopyImageToBuffer),
      E(CmdBlitImage),
      E(CmdResolveImage),
      E(CmdClearColorImage),
      E(CmdClearDepthStencilImage),
      E(CmdFillBuffer),
      E(CmdUpdateBuffer),
      E(CmdExecuteCommands),
      E(CmdBeginDebugUtilsLabelEXT),
      E(CmdEndDebugUtilsLabelEXT),
      E(SetDebugUtilsObjectNameEXT),
#undef E
  };
  for (size_t i = 0; i < GP_ARRAY_SIZE(table); i++)
    if (strcmp(name, table[i].name) == 0)
      return table[i].fn;
  return gp__vk_submit_intercept(name);
}
