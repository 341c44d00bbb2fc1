/*
 * submit.c - submissions, and the host calls recorded as API slices.
 *
 * vkQueueSubmit gets a correlation id (its API record carries it, so the
 * trace links the call to its GPU work) and a submission id; each
 * instrumented command buffer it submits becomes a pending entry, which
 * readback.c reads back and turns into records. On lavapipe the
 * timestamps of a recording submitted once are copied by its command
 * buffer's next recording (cmd.c, the deferred copy): its entry is "held"
 * until that one is submitted, and read after it has run. There, too, a
 * recording's first commands are in its prologue (cmd.c), which the
 * driver is given just before it in the same batch (with_prologues).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkInt.h"

/* ------------------------------------------------------------------ */
/* API records                                                          */

static const char *const api_names[] = {"",
                                        "vkQueueSubmit",
                                        "vkQueuePresentKHR",
                                        "vkQueueWaitIdle",
                                        "vkDeviceWaitIdle",
                                        "vkWaitForFences",
                                        "vkAllocateMemory",
                                        "vkFreeMemory",
                                        "vkCreateGraphicsPipelines",
                                        "vkCreateComputePipelines",
                                        "vkCreateShaderModule",
                                        "vkQueueSubmit2"};

/* An API record of size bytes (a gp_activity_api and what follows it),
 * reserved and filled but for what follows; NULL when API records are
 * off or lost. */
static gp_activity_api *api_record(uint32_t cbid, const char *name,
                                   uint32_t size, uint64_t start, uint64_t end,
                                   uint64_t corr, VkResult rv) {
  static _Atomic uint32_t ids[GP_ARRAY_SIZE(api_names)];
  if (!gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_API, 0))
    return NULL;
  uint32_t id = cbid < GP_ARRAY_SIZE(ids) ? atomic_load(&ids[cbid]) : 0;
  if (!id) {
    id = gp__vk_core->string_intern(name);
    if (cbid < GP_ARRAY_SIZE(ids))
      atomic_store(&ids[cbid], id);
  }
  gp_activity_api *r =
      gp__vk_core->activity_reserve(GP_ACTIVITY_KIND_API, size, 0, 0);
  if (!r)
    return NULL;
  r->correlation_id = corr;
  r->start = start;
  r->end = end;
  r->process_id = gp__vk_core->pid();
  r->thread_id = gp__vk_core->tid();
  r->domain = GP_API_DOMAIN_VULKAN;
  r->cbid = cbid;
  r->name_id = id;
  r->return_value = rv;
  return r;
}

/* See vkInt.h. */
void gp__vk_api(uint32_t cbid, const char *name, uint64_t start, uint64_t end,
                uint64_t corr, VkResult rv) {
  gp_activity_api *r = api_record(cbid, name, sizeof(*r), start, end, corr, rv);
  if (r)
    gp__vk_core->activity_commit(r);
}

#define API(id, start, corr, rv)                                               \
  gp__vk_api(id, api_names[id], start, gp_get_timestamp(), corr, rv)

/* The stream id of queue (0: none or unknown). */
static uint32_t stream_of(gp__vk_device *dev, VkQueue queue) {
  if (!queue)
    return 0;
  pthread_mutex_lock(&dev->lock);
  uint64_t v = (uint64_t)(uintptr_t)gp__vk_map_get(&dev->queues,
                                                   (uint64_t)(uintptr_t)queue);
  pthread_mutex_unlock(&dev->lock);
  return (uint32_t)(v >> 32); /* the stream: the high half (note_queue) */
}

/* See vkInt.h. */
uint64_t gp__vk_call_enter(gp__vk_call *c, gp__vk_device *dev, VkQueue queue,
                           uint32_t cbid, const char *name, uint64_t corr) {
  if (!corr)
    corr = gp__vk_core->correlation_next();
  c->api.d =
      (gp_callback_api_data){.api_domain = GP_API_DOMAIN_VULKAN,
                             .cbid = cbid,
                             .function_name = name,
                             .correlation_id = corr,
                             .context_id = dev ? dev->context_id : 0,
                             .stream_id = dev ? stream_of(dev, queue) : 0,
                             .thread_id = gp__vk_core->tid()};
  gp__vk_core->callback_api(&c->api, GP_CALLBACK_SITE_ENTER, 0);
  return corr;
}

/* See vkInt.h. */
void gp__vk_synchronized(gp__vk_device *dev, VkQueue queue, uint32_t cbid,
                         uint64_t corr) {
  if (!GP_UNLIKELY(atomic_load_explicit(gp__vk_core->callback_mask,
                                        memory_order_relaxed) &
                   GP__CB_BIT(GP_CALLBACK_DOMAIN_SYNCHRONIZE)))
    return;
  gp_callback_sync_data d = {dev->context_id, stream_of(dev, queue), corr};
  gp__vk_core->callback(GP_CALLBACK_DOMAIN_SYNCHRONIZE, cbid, &d);
}

/* ------------------------------------------------------------------ */
/* Submission                                                           */

/* What one submission waits for and what it signals (dev->lock). */
typedef struct submit_ctx {
  uint64_t corr, queued, qv;
  uint32_t sid, nw, ncb;
  uint64_t waits[8];
} submit_ctx;

/* A semaphore waited for: the submission that signalled it, if known. */
static void note_wait(gp__vk_device *dev, submit_ctx *x, VkSemaphore sem) {
  uint64_t w = (uint64_t)(uintptr_t)gp__vk_map_del(&dev->signals,
                                                   (uint64_t)(uintptr_t)sem);
  if (w && x->nw < 8)
    x->waits[x->nw++] = w;
}

/* A command buffer submitted: pending until read back. Its entry is part
 * of it: nothing is allocated. */
static void note_cb(gp__vk_device *dev, submit_ctx *x, VkCommandBuffer cb) {
  gp__vk_cmdbuf *c = gp__vk_map_get(&dev->cmdbufs, (uint64_t)(uintptr_t)cb);
  if (!c || !c->instrumented || !c->recorded)
    return;
  if (c->submits++ > 0) /* its recordings are not deferred from now on */
    c->multi = true;
  if (c->pending) /* submitted again: the last execution is over */
    gp__vk_resolve(dev, true, c);
  /* A recording submitted again: its held entry is this half's, still
   * pending. With SIMULTANEOUS_USE its run may not even have begun (it
   * may be in this very submission, or wait for a semaphore yet to be
   * signalled): written without times, never waited for. Else (with
   * ONE_TIME_SUBMIT all the same) it is over: read from the driver. */
  if ((c->pending & (1u << c->half)) && c->simultaneous)
    gp__vk_resolve_untimed(dev, c);
  else if (c->pending & (1u << c->half))
    gp__vk_resolve_all(dev, c);
  /* The last execution's copy is read: this one's is not there yet. The
   * host's writes before a submission are visible to its work. */
  uint32_t n = 2 + 2 * c->nregions;
  if (c->results)
    memset(c->results + 2 * (size_t)c->half * c->qhalf, 0, (size_t)n * 16);
  /* This recording copies the timestamps a previous one left in the
   * other half of the pool: they will be in the results buffer after it
   * has run. */
  gp__vk_pending *h = c->copies ? &c->sub[c->copies - 1] : NULL;
  if (h && c->results && (c->pending & (1u << h->half)) &&
      h->state == GP_VK_COPY_HELD) {
    memset(c->results + 2 * (size_t)h->base, 0,
           (size_t)(2 + 2 * h->nregions) * 16);
    h->state = GP_VK_COPY_COPYING;
    h->copied_by = x->corr;
  }
  gp__vk_pstats_clear(c);
  c->resubmitted = true;
  gp__vk_pending *p = &c->sub[c->half];
  p->next = NULL;
  p->cb = c;
  p->corr = x->corr;
  p->queued = x->queued;
  p->submission_id = x->sid;
  p->stream_id = (uint32_t)(x->qv >> 32);
  p->queue_id = x->qv ? ((uint32_t)x->qv & 0xffffu) - 1 : 0;
  p->family = (uint32_t)(x->qv >> 16) & 0xffffu;
  gp__vk_queue_order *o =
      dev->ts_in_order ? gp__vk_queue_order_of(dev, p->stream_id, true) : NULL;
  p->seq = o ? ++o->noted : 0;
  /* The semaphores' waits belong to the first command buffer. */
  p->nwaits = x->ncb++ == 0 ? x->nw : 0;
  memcpy(p->waits, x->waits, sizeof(x->waits));
  p->regions = c->regions;
  p->nregions = c->nregions;
  p->start_q = c->start_q;
  p->end_q = c->end_q;
  p->half = c->half;
  p->base = c->half * c->qhalf;
  p->state = c->defer ? GP_VK_COPY_HELD : GP_VK_COPY_OWN;
  c->pending |= 1u << c->half;
  if (dev->pending_tail)
    dev->pending_tail->next = p;
  else
    dev->pending = p;
  dev->pending_tail = p;
}

static void note_signal(gp__vk_device *dev, const submit_ctx *x,
                        VkSemaphore sem) {
  gp__vk_map_put(&dev->signals, (uint64_t)(uintptr_t)sem,
                 (void *)(uintptr_t)x->corr);
}

/* Notes the command buffers of one VkSubmitInfo as pending (dev->lock). */
static void note_submit(gp__vk_device *dev, const VkSubmitInfo *s,
                        submit_ctx *x) {
  x->nw = x->ncb = 0;
  for (uint32_t i = 0; i < s->waitSemaphoreCount; i++)
    note_wait(dev, x, s->pWaitSemaphores[i]);
  for (uint32_t i = 0; i < s->commandBufferCount; i++)
    note_cb(dev, x, s->pCommandBuffers[i]);
  for (uint32_t i = 0; i < s->signalSemaphoreCount; i++)
    note_signal(dev, x, s->pSignalSemaphores[i]);
}

/* The same for VkSubmitInfo2 (vkQueueSubmit2). */
static void note_submit2(gp__vk_device *dev, const VkSubmitInfo2 *s,
                         submit_ctx *x) {
  x->nw = x->ncb = 0;
  for (uint32_t i = 0; i < s->waitSemaphoreInfoCount; i++)
    note_wait(dev, x, s->pWaitSemaphoreInfos[i].semaphore);
  for (uint32_t i = 0; i < s->commandBufferInfoCount; i++)
    note_cb(dev, x, s->pCommandBufferInfos[i].commandBuffer);
  for (uint32_t i = 0; i < s->signalSemaphoreInfoCount; i++)
    note_signal(dev, x, s->pSignalSemaphoreInfos[i].semaphore);
}

/* Drops the entries of a submission the driver refused; what it was to
 * copy is held again. */
static void unnote(gp__vk_device *dev, uint64_t corr) {
  gp__vk_pending **pp = &dev->pending, *prev = NULL;
  while (*pp) {
    gp__vk_pending *p = *pp;
    if (p->state == GP_VK_COPY_COPYING && p->copied_by == corr)
      p->state = GP_VK_COPY_HELD;
    if (p->corr == corr) {
      gp__vk_pending_unlink(dev, pp, prev);
      continue;
    }
    prev = p;
    pp = &p->next;
  }
}

/* A submission as its API record tells it. */
typedef struct submit_call {
  VkQueue queue;
  uint32_t n;
  const void *infos; /* VkSubmitInfo, or VkSubmitInfo2 when v2 */
  bool v2;
  uint64_t start;
  uint64_t corr; /* 0: render stages not recorded */
  uint32_t sid;
  uint64_t corr_cb; /* the API record's: corr, or the callbacks' own */
} submit_call;

/* Before a submission: reads back what finished and notes the new work,
 * giving it a correlation and submission id (none when render stages are
 * not recorded). */
static void submit_begin(gp__vk_device *dev, submit_call *c) {
  if (!gp__vk_tracing(dev))
    return;
  submit_ctx x = {.corr = gp__vk_core->correlation_next(), .queued = c->start};
  pthread_mutex_lock(&dev->lock);
  gp__vk_calibrate(dev, false);
  gp__vk_resolve(dev, false, NULL);
  x.sid = atomic_fetch_add(&dev->submissions, 1) + 1;
  x.qv = (uint64_t)(uintptr_t)gp__vk_map_get(&dev->queues, (uintptr_t)c->queue);
  for (uint32_t i = 0; i < c->n; i++) {
    if (c->v2)
      note_submit2(dev, &((const VkSubmitInfo2 *)c->infos)[i], &x);
    else
      note_submit(dev, &((const VkSubmitInfo *)c->infos)[i], &x);
  }
  pthread_mutex_unlock(&dev->lock);
  c->corr = x.corr;
  c->sid = x.sid;
}

/* How many command buffers batch i of c has. */
static uint32_t batch_count(const submit_call *c, uint32_t i) {
  return c->v2 ? ((const VkSubmitInfo2 *)c->infos)[i].commandBufferInfoCount
               : ((const VkSubmitInfo *)c->infos)[i].commandBufferCount;
}

/* Command buffer j of batch i of c. */
static VkCommandBuffer batch_cb(const submit_call *c, uint32_t i, uint32_t j) {
  return c->v2 ? ((const VkSubmitInfo2 *)c->infos)[i]
                     .pCommandBufferInfos[j]
                     .commandBuffer
               : ((const VkSubmitInfo *)c->infos)[i].pCommandBuffers[j];
}

/* The command buffers of a submission, in order, into out (at most max);
 * returns how many it has in all. */
static uint32_t submit_cbs(const submit_call *c, uint64_t *out, uint32_t max) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < c->n; i++)
    for (uint32_t j = 0; j < batch_count(c, i); j++, total++)
      if (out && total < max)
        out[total] = (uint64_t)(uintptr_t)batch_cb(c, i, j);
  return total;
}

/* After it: a refused submission leaves nothing pending. A recorded one's
 * API record lists its queue and command buffers. */
static void submit_end(gp__vk_device *dev, const submit_call *c, VkResult r,
                       uint32_t cbid, const char *name) {
  uint64_t end = gp_get_timestamp();
  if (r != VK_SUCCESS && c->corr) {
    pthread_mutex_lock(&dev->lock);
    unnote(dev, c->corr);
    pthread_mutex_unlock(&dev->lock);
  }
  if (r != VK_SUCCESS || !c->corr) {
    gp__vk_api(cbid, name, c->start, end, c->corr_cb, r);
    return;
  }
  uint32_t total = submit_cbs(c, NULL, 0);
  uint32_t n = total < GP_ACTIVITY_SUBMIT_MAX_COMMAND_BUFFERS
                   ? total
                   : GP_ACTIVITY_SUBMIT_MAX_COMMAND_BUFFERS;
  gp_activity_api_submit *s = (gp_activity_api_submit *)api_record(
      cbid, name, (uint32_t)(sizeof(*s) + n * sizeof(uint64_t)), c->start, end,
      c->corr, r);
  if (!s)
    return;
  s->queue = (uint64_t)(uintptr_t)c->queue;
  s->submission_id = c->sid;
  s->num_command_buffers = n;
  s->total_command_buffers = total;
  s->reserved0 = 0;
  submit_cbs(c, s->command_buffers, n);
  gp__vk_core->activity_commit(s);
}

/* ------------------------------------------------------------------ */
/* Prologues                                                            */

/* Batches and command buffers handed to the driver with prologues: on the
 * stack up to these counts (a frame's few), else allocated for the call. */
#define PRO_INFOS 8
#define PRO_CBS 32

/* What a submission gives the driver: the program's batches, or copies of
 * them with each prologue before its command buffer. */
typedef struct pro_submit {
  uint32_t n;             /* command buffers in all */
  uint32_t armed;         /* of them with a prologue */
  VkCommandBuffer *pro;   /* per command buffer: its prologue, or null */
  void *infos;            /* n_infos VkSubmitInfo or VkSubmitInfo2 */
  void *cbs;              /* n + armed VkCommandBuffer(SubmitInfo)s */
  VkCommandBuffer *apart; /* prologues submitted in a batch of their own */
  uint32_t napart;
  VkCommandBuffer pro_buf[PRO_CBS];
  VkSubmitInfo info_buf[PRO_INFOS]; /* (or as many VkSubmitInfo2) */
  VkCommandBufferSubmitInfo cb_buf[PRO_CBS * 2];
  VkCommandBuffer apart_buf[PRO_CBS];
  void *heap[4];
} pro_submit;

static void *pro_room(pro_submit *ps, void *stack, size_t have, size_t need,
                      size_t size, int slot) {
  if (need <= have)
    return stack;
  ps->heap[slot] = malloc(need * size);
  return ps->heap[slot];
}

static void pro_done(pro_submit *ps) {
  for (int i = 0; i < 4; i++)
    free(ps->heap[i]);
}

/* Looks up each command buffer's prologue: 1 if one has one, 0 if none
 * has (the program's batches go to the driver as they are), -1 if it
 * cannot say for want of memory (submit_apart()). */
static int pro_find(gp__vk_device *dev, const submit_call *c, pro_submit *ps) {
  memset(ps->heap, 0, sizeof(ps->heap));
  ps->armed = ps->napart = 0;
  if (!atomic_load_explicit(&dev->prologues, memory_order_relaxed))
    return 0;
  ps->n = submit_cbs(c, NULL, 0);
  ps->pro =
      pro_room(ps, ps->pro_buf, PRO_CBS, ps->n, sizeof(VkCommandBuffer), 0);
  if (!ps->pro)
    return -1;
  uint32_t k = 0;
  pthread_mutex_lock(&dev->lock);
  for (uint32_t i = 0; i < c->n; i++)
    for (uint32_t j = 0; j < batch_count(c, i); j++, k++) {
      ps->pro[k] = gp__vk_prologue_of(dev, batch_cb(c, i, j));
      ps->armed += ps->pro[k] != VK_NULL_HANDLE;
    }
  pthread_mutex_unlock(&dev->lock);
  return ps->armed > 0;
}

/* True if batch s carries a struct with an entry per command buffer
 * (device masks): then its prologues are submitted apart. */
static bool per_cb_chain(const VkSubmitInfo *s) {
  for (const VkBaseInStructure *p = s->pNext; p; p = p->pNext)
    if (p->sType == VK_STRUCTURE_TYPE_DEVICE_GROUP_SUBMIT_INFO)
      return true;
  return false;
}

/* Builds the batches for the driver (ps->infos); false if out of memory. */
static bool with_prologues(const submit_call *c, pro_submit *ps) {
  size_t isz = c->v2 ? sizeof(VkSubmitInfo2) : sizeof(VkSubmitInfo);
  size_t csz =
      c->v2 ? sizeof(VkCommandBufferSubmitInfo) : sizeof(VkCommandBuffer);
  ps->infos =
      pro_room(ps, ps->info_buf, sizeof(ps->info_buf) / isz, c->n, isz, 1);
  ps->cbs = pro_room(ps, ps->cb_buf, sizeof(ps->cb_buf) / csz,
                     ps->n + ps->armed, csz, 2);
  ps->apart = pro_room(ps, ps->apart_buf, PRO_CBS, ps->armed,
                       sizeof(VkCommandBuffer), 3);
  if (!ps->infos || !ps->cbs || !ps->apart)
    return false;
  memcpy(ps->infos, c->infos, c->n * isz);
  uint32_t k = 0, out = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    if (c->v2) {
      VkSubmitInfo2 *s2 = &((VkSubmitInfo2 *)ps->infos)[i];
      VkCommandBufferSubmitInfo *o = (VkCommandBufferSubmitInfo *)ps->cbs + out;
      uint32_t m = 0;
      for (uint32_t j = 0; j < s2->commandBufferInfoCount; j++, k++) {
        if (ps->pro[k]) {
          o[m] = s2->pCommandBufferInfos[j];
          o[m].pNext = NULL;
          o[m++].commandBuffer = ps->pro[k];
        }
        o[m++] = s2->pCommandBufferInfos[j];
      }
      s2->pCommandBufferInfos = o;
      s2->commandBufferInfoCount = m;
      out += m;
      continue;
    }
    VkSubmitInfo *s = &((VkSubmitInfo *)ps->infos)[i];
    bool apart = per_cb_chain(s);
    VkCommandBuffer *o = (VkCommandBuffer *)ps->cbs + out;
    uint32_t m = 0;
    for (uint32_t j = 0; j < s->commandBufferCount; j++, k++) {
      if (ps->pro[k] && apart)
        ps->apart[ps->napart++] = ps->pro[k];
      else if (ps->pro[k])
        o[m++] = ps->pro[k];
      o[m++] = s->pCommandBuffers[j];
    }
    s->pCommandBuffers = o;
    s->commandBufferCount = m;
    out += m;
  }
  return true;
}

/* Without memory for the batches: each prologue in a batch of its own,
 * before them (query commands on one queue run in submission order). */
static VkResult submit_apart(gp__vk_device *dev, const submit_call *c) {
  for (uint32_t i = 0; i < c->n; i++)
    for (uint32_t j = 0; j < batch_count(c, i); j++) {
      pthread_mutex_lock(&dev->lock);
      VkCommandBuffer pro = gp__vk_prologue_of(dev, batch_cb(c, i, j));
      pthread_mutex_unlock(&dev->lock);
      VkSubmitInfo a = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                        .commandBufferCount = 1,
                        .pCommandBuffers = &pro};
      VkResult r =
          pro ? dev->QueueSubmit(c->queue, 1, &a, VK_NULL_HANDLE) : VK_SUCCESS;
      if (r != VK_SUCCESS)
        return r;
    }
  return VK_SUCCESS;
}

/* Submits the batches of c with their prologues (else as they are). */
static VkResult submit_driver(gp__vk_device *dev, const submit_call *c,
                              PFN_vkQueueSubmit2 submit2, VkFence fence) {
  pro_submit ps;
  int found = pro_find(dev, c, &ps);
  bool pro = found > 0 && with_prologues(c, &ps);
  const void *infos = pro ? ps.infos : c->infos;
  VkResult r = found && !pro ? submit_apart(dev, c) : VK_SUCCESS;
  if (r == VK_SUCCESS && pro && ps.napart) {
    VkSubmitInfo a = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                      .commandBufferCount = ps.napart,
                      .pCommandBuffers = ps.apart};
    r = dev->QueueSubmit(c->queue, 1, &a, VK_NULL_HANDLE);
  }
  if (r == VK_SUCCESS)
    r = c->v2 ? submit2(c->queue, c->n, infos, fence)
              : dev->QueueSubmit(c->queue, c->n, infos, fence);
  pro_done(&ps);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit(VkQueue queue,
                                                        uint32_t n,
                                                        const VkSubmitInfo *s,
                                                        VkFence fence) {
  gp__vk_device *dev = gp__vk_device_of(queue);
  submit_call c = {queue, n, s, false, gp_get_timestamp(), 0, 0, 0};
  submit_begin(dev, &c);
  gp__vk_call k;
  c.corr_cb = gp__vk_enter(&k, dev, queue, GP_VK_API_QUEUE_SUBMIT,
                           "vkQueueSubmit", c.corr);
  VkResult r = submit_driver(dev, &c, NULL, fence);
  submit_end(dev, &c, r, GP_VK_API_QUEUE_SUBMIT, "vkQueueSubmit");
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2(VkQueue queue,
                                                         uint32_t n,
                                                         const VkSubmitInfo2 *s,
                                                         VkFence fence) {
  gp__vk_device *dev = gp__vk_device_of(queue);
  submit_call c = {queue, n, s, true, gp_get_timestamp(), 0, 0, 0};
  submit_begin(dev, &c);
  gp__vk_call k;
  c.corr_cb = gp__vk_enter(&k, dev, queue, GP_VK_API_QUEUE_SUBMIT2,
                           "vkQueueSubmit2", c.corr);
  VkResult r = submit_driver(dev, &c, dev->QueueSubmit2, fence);
  submit_end(dev, &c, r, GP_VK_API_QUEUE_SUBMIT2, "vkQueueSubmit2");
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueSubmit2KHR(
    VkQueue queue, uint32_t n, const VkSubmitInfo2 *s, VkFence fence) {
  gp__vk_device *dev = gp__vk_device_of(queue);
  submit_call c = {queue, n, s, true, gp_get_timestamp(), 0, 0, 0};
  submit_begin(dev, &c);
  gp__vk_call k;
  c.corr_cb = gp__vk_enter(&k, dev, queue, GP_VK_API_QUEUE_SUBMIT2,
                           "vkQueueSubmit2", c.corr);
  VkResult r = submit_driver(dev, &c, dev->QueueSubmit2KHR, fence);
  submit_end(dev, &c, r, GP_VK_API_QUEUE_SUBMIT2, "vkQueueSubmit2");
  gp__vk_exit(&k, r);
  return r;
}

/* After the program's own waits: what finished is read back. */
static void after_wait(gp__vk_device *dev) {
  pthread_mutex_lock(&dev->lock);
  gp__vk_resolve(dev, false, NULL);
  pthread_mutex_unlock(&dev->lock);
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_QueuePresentKHR(VkQueue queue, const VkPresentInfoKHR *pi) {
  gp__vk_device *dev = gp__vk_device_of(queue);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, queue, GP_VK_API_QUEUE_PRESENT,
                               api_names[GP_VK_API_QUEUE_PRESENT], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->QueuePresentKHR(queue, pi);
  API(GP_VK_API_QUEUE_PRESENT, start, corr, r);
  gp__vk_exit(&k, r);
  after_wait(dev);
  gp__vk_presented(); /* a safe point: a signal noted meanwhile ends here */
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_QueueWaitIdle(VkQueue queue) {
  gp__vk_device *dev = gp__vk_device_of(queue);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, queue, GP_VK_API_QUEUE_WAIT_IDLE,
                               api_names[GP_VK_API_QUEUE_WAIT_IDLE], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->QueueWaitIdle(queue);
  API(GP_VK_API_QUEUE_WAIT_IDLE, start, corr, r);
  after_wait(dev);
  if (r == VK_SUCCESS)
    gp__vk_synchronized(dev, queue, GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED, corr);
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_DeviceWaitIdle(VkDevice device) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, NULL, GP_VK_API_DEVICE_WAIT_IDLE,
                               api_names[GP_VK_API_DEVICE_WAIT_IDLE], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->DeviceWaitIdle(device);
  API(GP_VK_API_DEVICE_WAIT_IDLE, start, corr, r);
  after_wait(dev);
  if (r == VK_SUCCESS)
    gp__vk_synchronized(dev, NULL, GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED, corr);
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_WaitForFences(VkDevice device,
                                                          uint32_t n,
                                                          const VkFence *f,
                                                          VkBool32 all,
                                                          uint64_t timeout) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, NULL, GP_VK_API_WAIT_FOR_FENCES,
                               api_names[GP_VK_API_WAIT_FOR_FENCES], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->WaitForFences(device, n, f, all, timeout);
  API(GP_VK_API_WAIT_FOR_FENCES, start, corr, r);
  if (r == VK_SUCCESS)
    after_wait(dev);
  gp__vk_exit(&k, r);
  return r;
}

/* ------------------------------------------------------------------ */
/* Objects                                                              */

static VKAPI_ATTR VkResult VKAPI_CALL layer_CreateGraphicsPipelines(
    VkDevice device, VkPipelineCache cache, uint32_t n,
    const VkGraphicsPipelineCreateInfo *ci, const VkAllocationCallbacks *a,
    VkPipeline *out) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr =
      gp__vk_enter(&k, dev, NULL, GP_VK_API_CREATE_GRAPHICS_PIPELINES,
                   api_names[GP_VK_API_CREATE_GRAPHICS_PIPELINES], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->CreateGraphicsPipelines(device, cache, n, ci, a, out);
  API(GP_VK_API_CREATE_GRAPHICS_PIPELINES, start, corr, r);
  for (uint32_t i = 0; r == VK_SUCCESS && i < n; i++)
    gp__vk_pipeline_stages(dev, ci[i].pStages, ci[i].stageCount);
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateComputePipelines(VkDevice device, VkPipelineCache cache, uint32_t n,
                             const VkComputePipelineCreateInfo *ci,
                             const VkAllocationCallbacks *a, VkPipeline *out) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr =
      gp__vk_enter(&k, dev, NULL, GP_VK_API_CREATE_COMPUTE_PIPELINES,
                   api_names[GP_VK_API_CREATE_COMPUTE_PIPELINES], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->CreateComputePipelines(device, cache, n, ci, a, out);
  API(GP_VK_API_CREATE_COMPUTE_PIPELINES, start, corr, r);
  for (uint32_t i = 0; r == VK_SUCCESS && i < n; i++)
    gp__vk_pipeline_stages(dev, &ci[i].stage, 1);
  gp__vk_exit(&k, r);
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateShaderModule(VkDevice device, const VkShaderModuleCreateInfo *ci,
                         const VkAllocationCallbacks *a, VkShaderModule *m) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, NULL, GP_VK_API_CREATE_SHADER_MODULE,
                               api_names[GP_VK_API_CREATE_SHADER_MODULE], 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->CreateShaderModule(device, ci, a, m);
  API(GP_VK_API_CREATE_SHADER_MODULE, start, corr, r);
  if (r == VK_SUCCESS)
    gp__vk_shader_created(dev, *m, ci->codeSize);
  gp__vk_exit(&k, r);
  return r;
}

/* See vkInt.h: the rest of the device-level table. */
PFN_vkVoidFunction gp__vk_submit_intercept(const char *name) {
  static const struct {
    const char *name;
    PFN_vkVoidFunction fn;
  } table[] = {
#define E(n) {"vk" #n, (PFN_vkVoidFunction)layer_##n}
      E(QueueSubmit),
      E(QueueSubmit2),
      E(QueueSubmit2KHR),
      E(QueuePresentKHR),
      E(QueueWaitIdle),
      E(DeviceWaitIdle),
      E(WaitForFences),
      E(CreateGraphicsPipelines),
      E(CreateComputePipelines),
      E(CreateShaderModule),
#undef E
  };
  for (size_t i = 0; i < GP_ARRAY_SIZE(table); i++)
    if (strcmp(name, table[i].name) == 0)
      return table[i].fn;
  return gp__vk_code_intercept(name);
}
