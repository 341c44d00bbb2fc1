/*
 * submit.c - submissions and the records they become, and the host calls
 * recorded as API slices.
 *
 * vkQueueSubmit gets a correlation id (its API record carries it, so the
 * trace links the call to its GPU work) and a submission id; each
 * instrumented command buffer it submits becomes a pending entry. Entries
 * are read back without waiting when their last timestamp is available:
 * at the next submission, after the program's own waits and presents, and
 * at a flush; with waiting where the program has already waited (the
 * command buffer is recorded again, freed or submitted again, the device
 * is destroyed) or at a forced flush. Each entry becomes one RENDER_STAGE
 * record for the command buffer (with the submissions its semaphores
 * waited for) and one per region. On lavapipe the timestamps of a
 * recording submitted once are copied by its command buffer's next
 * recording (cmd.c, the deferred copy): its entry is "held" until that
 * one is submitted, and read after it has run.
 *
 * Clocks. With VK_EXT_calibrated_timestamps the device clock is measured
 * against CLOCK_MONOTONIC (whose offset to the trace clock we measure)
 * at device creation and again at most once a second at submissions.
 * Without it, a command buffer's first timestamp is placed at its
 * submission's host time (a bracket: right to within the queueing delay).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkInt.h"

/* ------------------------------------------------------------------ */
/* Clock                                                                */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* See vkInt.h. */
void gp__vk_calibrate(gp__vk_device *dev, bool force) {
  uint64_t now = gp_get_timestamp();
  if (!dev->GetCalibratedTimestampsEXT ||
      (!force && dev->calibrated && now - dev->cal_at < 1000000000ull))
    return;
  VkCalibratedTimestampInfoEXT ti[2] = {
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
       VK_TIME_DOMAIN_DEVICE_EXT},
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL,
       VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  uint64_t ts[2], dev_max = 0;
  /* The trace clock against CLOCK_MONOTONIC: the middle of a bracket. */
  uint64_t m0 = mono_ns(), t = gp_get_timestamp(), m1 = mono_ns();
  int64_t offset = (int64_t)t - (int64_t)(m0 + (m1 - m0) / 2);
  if (dev->GetCalibratedTimestampsEXT(dev->handle, 2, ti, ts, &dev_max) !=
      VK_SUCCESS)
    return;
  dev->cal_dev = ts[0];
  dev->cal_host = (int64_t)ts[1] + offset;
  dev->cal_at = now;
  dev->calibrated = true;
}

/* A device tick count in the trace clock; base: the bracket's shift. */
static uint64_t to_trace(const gp__vk_device *dev, uint64_t ticks,
                         int64_t base) {
  if (dev->calibrated) {
    int64_t d = (int64_t)(ticks - dev->cal_dev);
    return (uint64_t)(dev->cal_host + (int64_t)((double)d * dev->period));
  }
  return (uint64_t)((int64_t)((double)ticks * dev->period) + base);
}

/* ------------------------------------------------------------------ */
/* Records                                                              */

static void stage_record(const gp__vk_device *dev, const gp__vk_pending *p,
                         uint32_t stage, uint32_t name_id, uint64_t start,
                         uint64_t end, uint64_t rp, uint64_t target,
                         bool waits) {
  gp__gpu_work w = {.correlation_id = p->corr,
                    .queued = p->queued,
                    .start = start,
                    .end = end,
                    .device_id = dev->device_id,
                    .context_id = dev->context_id,
                    .stream_id = p->stream_id,
                    .queue_id = p->queue_id,
                    .num_wait_ids = waits ? p->nwaits : 0,
                    .wait_ids = p->waits};
  uint32_t size =
      gp__gpu_work_size(GP_ACTIVITY_KIND_RENDER_STAGE, w.num_wait_ids);
  gp_activity_render_stage *r = gp__vk_core->activity_reserve(
      GP_ACTIVITY_KIND_RENDER_STAGE, size, dev->context_id, p->stream_id);
  if (!r)
    return;
  gp__gpu_work_fill(r, GP_ACTIVITY_KIND_RENDER_STAGE, &w);
  r->stage = stage;
  r->render_target = target;
  r->render_pass = rp;
  r->command_buffer = (uint64_t)(uintptr_t)p->cb->handle;
  r->name_id = name_id;
  r->submission_id = p->submission_id;
  gp__vk_core->activity_commit(r);
}

/* The order of stream s's queue on dev, or NULL when all four slots are
 * other queues' (add: claim a free one). */
static gp__vk_queue_order *queue_order(gp__vk_device *dev, uint32_t s,
                                       bool add) {
  for (uint32_t i = 0; i < GP_ARRAY_SIZE(dev->order); i++) {
    gp__vk_queue_order *o = &dev->order[i];
    if (o->stream == s + 1)
      return o;
    if (!o->stream && add) {
      o->stream = s + 1;
      return o;
    }
  }
  return NULL;
}

/*
 * Where a stage of an in-order device (lavapipe) began, from its first
 * timestamp t and the end of the work before it. There a timestamp is a
 * command in every tile of the framebuffer and reads as the latest
 * tile's time, so one at the beginning of a render pass (where the layer
 * writes it: one before the pass would cost the frame a pass over the
 * tiles of its own, +80 us at 800x600) is the start of the pass's last
 * tile: a pass that clears 800x600 measured 0.0 us. The device takes
 * up a stage when what came before it on its queue has ended (the
 * previous stage of the command buffer, or for its first, the queue's
 * previous work or its submission, whichever is later), and began it by
 * then: that start, but never after t. (Outside a pass, a timestamp is
 * the time it was run, right away where no framebuffer is bound, else
 * with the work binned with it: cmd.c.)
 */
static uint64_t in_order_start(uint64_t t, uint64_t before) {
  return before && before < t ? before : t;
}

/* Writes the records of one entry from its timestamps: query i of its
 * recording at q[i * stride] (untimed when q is NULL: the work's times
 * could not be read, or its queue has none). */
static void write_entry(gp__vk_device *dev, const gp__vk_pending *p,
                        const uint64_t *q, size_t stride, uint32_t bits) {
  const gp__vk_cmdbuf *c = p->cb;
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  int64_t base = 0;
  if (q && !dev->calibrated)
    base = (int64_t)p->queued -
           (int64_t)((double)(q[(size_t)p->start_q * stride] & mask) *
                     dev->period);
#define T(i) (q ? to_trace(dev, q[(size_t)(i)*stride] & mask, base) : 0)
  /* An in-order device's first stage starts with its command buffer,
   * whose start is its first timestamp there (start_q != 0): see
   * in_order_start(). What came before on the queue is known when the
   * submission before it there was the last written. */
  bool in_order = q && dev->ts_in_order;
  gp__vk_queue_order *o = p->seq ? queue_order(dev, p->stream_id, false) : NULL;
  uint64_t before = 0;
  if (o && o->written + 1 == p->seq && o->end)
    before = o->end > p->queued ? o->end : p->queued;
  uint64_t cb_start = T(p->start_q), cb_end = T(p->end_q);
  if (in_order && p->start_q)
    cb_start = in_order_start(cb_start, before);
  stage_record(dev, p, GP_RENDER_STAGE_COMMAND_BUFFER, c->name_id, cb_start,
               cb_end, 0, 0, true);
  /* Pipeline statistics of the measured stages, over their GPU times
   * (only a recording that copies its own timestamps measures them: its
   * regions are the command buffer's). */
  bool stats =
      q && c->spool && p->state == GP_VK_COPY_OWN && p->nregions == c->nregions;
  uint64_t st[64], en[64], *s = st, *e = en;
  if (stats && p->nregions > 64) {
    s = malloc(p->nregions * sizeof(*s));
    e = malloc(p->nregions * sizeof(*e));
    stats = s && e;
  }
  uint64_t prev_end = cb_start;
  for (uint32_t i = 0; i < p->nregions; i++) {
    const gp__vk_region *g = &p->regions[i];
    uint64_t start = T(2 + 2 * i), end = T(3 + 2 * i);
    if (in_order && g->inside)
      start = in_order_start(start, i ? prev_end : cb_start);
    stage_record(dev, p, g->stage, g->name_id, start, end, g->render_pass,
                 g->render_target, false);
    if (stats)
      s[i] = start, e[i] = end;
    prev_end = end;
  }
  if (o && p->seq > o->written) { /* (an untimed one's end is not known) */
    o->written = p->seq;
    o->end = cb_end;
  }
  if (stats)
    gp__vk_pstats_emit(dev, c, p->corr, s, e);
  if (s != st)
    free(s);
  if (e != en)
    free(e);
#undef T
}

/* How read_entry may get an entry's timestamps. */
enum {
  READ_READY, /* only if they are there: never waits */
  READ_DONE,  /* the program has waited for the work: there, or never (an
                 entry still held in the query pool stays) */
  READ_WAIT   /* wait for them if need be (a forced flush, the device's end,
                 a command buffer freed) */
};

/* True when query i of p's recording was written (on an in-order device
 * the command buffer's start and end may be its first and last pass's). */
static bool written(const gp__vk_pending *p, uint32_t i) {
  return i > 1 || i == (i ? p->end_q : p->start_q);
}

/* p's timestamps in its command buffer's results buffer: a value and an
 * availability word per query. */
static const uint64_t *entry_results(const gp__vk_pending *p) {
  return p->cb->results + 2 * (size_t)p->base;
}

/* True when the n timestamps the device copied into p's part of the
 * results buffer are all there. Reads memory only: no call into the
 * driver. */
static bool results_ready(const gp__vk_pending *p, uint32_t n) {
  const uint64_t *r = entry_results(p);
  for (uint32_t i = n; i-- > 0;)
    if (written(p, i) && !__atomic_load_n(&r[2 * i + 1], __ATOMIC_ACQUIRE))
      return false;
  return true;
}

/* Asks the driver for an entry's n timestamps, with how; true when read
 * (and written). vkGetQueryPoolResults may wait even without WAIT (lavapipe
 * waits for the device to be idle first): only for command buffers
 * without a results buffer (families that cannot copy query results). */
static bool read_driver(gp__vk_device *dev, gp__vk_pending *p, uint32_t n,
                        int how) {
  gp__vk_cmdbuf *c = p->cb;
  uint32_t bits = p->family < 64 ? dev->timestamp_bits[p->family] : 64;
  uint64_t small[2 * 34], *buf = small;
  if (n > 34 && !(buf = malloc((size_t)n * 16))) {
    write_entry(dev, p, NULL, 1, 64);
    return true;
  }
  bool wait = how != READ_READY;
  VkQueryResultFlags fl = VK_QUERY_RESULT_64_BIT;
  fl |= wait ? VK_QUERY_RESULT_WAIT_BIT : VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
  size_t stride = wait ? 8 : 16;
  /* Only the queries written: one never written is never available. */
  bool ok = true;
  for (uint32_t i = 0; i < n && ok;) {
    uint32_t k = i >= 2 || (written(p, 0) && written(p, 1)) ? n - i : 1;
    if (written(p, i))
      ok = dev->GetQueryPoolResults(dev->handle, c->qpool, p->base + i, k,
                                    (size_t)k * stride, buf + i * stride / 8,
                                    stride, fl) == VK_SUCCESS;
    i += k;
  }
  if (ok && !wait) /* [value, available] pairs: all there? */
    for (uint32_t i = 0; i < n; i++)
      ok = ok && (!written(p, i) || buf[2 * i + 1]);
  if (!ok && !wait) {
    if (buf != small)
      free(buf);
    return false;
  }
  write_entry(dev, p, ok ? buf : NULL, wait ? 1 : 2, bits);
  if (buf != small)
    free(buf);
  return true;
}

/* Reads an entry's timestamps; true when read (and written). */
static bool read_entry(gp__vk_device *dev, gp__vk_pending *p, int how) {
  gp__vk_cmdbuf *c = p->cb;
  uint32_t n = 2 + 2 * p->nregions;
  if (c->untimed) { /* its queue has no timestamps: stages without times */
    write_entry(dev, p, NULL, 1, 64);
    return true;
  }
  if (!c->results)
    return read_driver(dev, p, n, how);
  if (p->state == GP_VK_COPY_HELD) {
    /* In the query pool until the command buffer's next recording copies
     * them; the driver is asked only where waiting is allowed. */
    if (how != READ_WAIT)
      return false;
    return read_driver(dev, p, n, READ_WAIT);
  }
  if (results_ready(p, n)) {
    write_entry(dev, p, entry_results(p), 2,
                p->family < 64 ? dev->timestamp_bits[p->family] : 64);
    return true;
  }
  if (how == READ_READY)
    return false;
  if (how == READ_DONE) { /* overlapping executions (SIMULTANEOUS_USE) */
    write_entry(dev, p, NULL, 1, 64);
    return true;
  }
  return read_driver(dev, p, n, READ_WAIT);
}

/* Entries not ready that one non-waiting pass looks at before it stops:
 * work completes in submission order on each queue, so with few queues
 * the first of them says all. This bounds the work of each submission. */
#define GP_VK_RESOLVE_MISSES 4

/* Takes p (after prev) off dev's pending list. */
static void unlink_entry(gp__vk_device *dev, gp__vk_pending **pp,
                         gp__vk_pending *prev) {
  gp__vk_pending *p = *pp;
  *pp = p->next;
  if (dev->pending_tail == p)
    dev->pending_tail = prev;
  p->next = NULL;
  p->cb->pending &= ~(1u << p->half);
}

/* Reads back dev's pending entries (of only, if not NULL) as how says.
 * On an in-order device, those submitted before only's last on its queue
 * are read first where they can be, so that each stage follows what came
 * before it there (write_entry()). */
static void resolve(gp__vk_device *dev, int how, const gp__vk_cmdbuf *only) {
  uint32_t misses = 0;
  const gp__vk_pending *upto = NULL;
  for (const gp__vk_pending *p = dev->pending; only && dev->ts_in_order && p;
       p = p->next)
    if (p->cb == only)
      upto = p;
  gp__vk_pending **pp = &dev->pending, *prev = NULL;
  while (*pp) {
    gp__vk_pending *p = *pp;
    bool mine = !only || p->cb == only;
    /* One before only's on its queue: read as far as the program's wait
     * allows (it waited for only's work, not for what is still to copy
     * this one's timestamps). */
    bool before = !mine && upto && p->stream_id == upto->stream_id;
    if (p == upto)
      upto = NULL;
    if (before && read_entry(dev, p, how == READ_WAIT ? how : READ_READY)) {
      unlink_entry(dev, pp, prev);
      continue;
    }
    if (mine && read_entry(dev, p, how)) {
      unlink_entry(dev, pp, prev);
      continue;
    }
    /* (an entry held in its query pool is parked, not late) */
    if (mine && how == READ_READY && p->state != GP_VK_COPY_HELD &&
        ++misses >= GP_VK_RESOLVE_MISSES)
      return;
    prev = p;
    pp = &p->next;
  }
}

/* See vkInt.h. */
void gp__vk_resolve(gp__vk_device *dev, bool wait, const gp__vk_cmdbuf *only) {
  resolve(dev, only ? READ_DONE : wait ? READ_WAIT : READ_READY, only);
}

/* See vkInt.h. */
void gp__vk_resolve_all(gp__vk_device *dev, const gp__vk_cmdbuf *c) {
  resolve(dev, READ_WAIT, c);
}

/* The least submission time on dev's pending list into user[1], for the
 * device id in user[0]; user[2] set when a device was busy. */
static void oldest_pending(gp__vk_device *dev, void *user) {
  uint64_t *acc = user;
  if (dev->device_id != acc[0])
    return;
  if (pthread_mutex_trylock(&dev->lock) != 0) {
    acc[2] = 1;
    return;
  }
  for (const gp__vk_pending *p = dev->pending; p; p = p->next)
    if (p->queued < acc[1])
      acc[1] = p->queued;
  pthread_mutex_unlock(&dev->lock);
}

/*
 * See vkInt.h. A command buffer is pending (noted under dev->lock) before
 * the driver call that submits it, and its records are written under
 * that lock as it leaves the list: so the least submission time on the
 * lists bounds every start not yet written. Devices are found through the
 * registry, under its lock, so that one destroyed meanwhile is not read.
 * Locks are only tried: the collector thread asks, and a thread holding
 * them may be writing records, waiting for the collector to give it a
 * buffer. Busy: nothing is said this time (0).
 */
uint64_t gp__vk_frontier(void *user, uint32_t device_id) {
  (void)user;
  uint64_t acc[3] = {device_id, UINT64_MAX, 0};
  if (!gp__vk_devices_try_each(oldest_pending, acc) || acc[2])
    return 0;
  return acc[1];
}

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
  if (c->pending) /* submitted again: the last execution is over */
    gp__vk_resolve(dev, true, c);
  /* A recording with ONE_TIME_SUBMIT submitted again all the same: its
   * held entry is this half's, still pending; read from the driver. */
  if (c->pending & (1u << c->half))
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
      dev->ts_in_order ? queue_order(dev, p->stream_id, true) : NULL;
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
      unlink_entry(dev, pp, prev);
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

/* The command buffers of a submission, in order, into out (at most max);
 * returns how many it has in all. */
static uint32_t submit_cbs(const submit_call *c, uint64_t *out, uint32_t max) {
  uint32_t total = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    const VkSubmitInfo *s = c->v2 ? NULL : &((const VkSubmitInfo *)c->infos)[i];
    const VkSubmitInfo2 *s2 =
        c->v2 ? &((const VkSubmitInfo2 *)c->infos)[i] : NULL;
    uint32_t m = s ? s->commandBufferCount : s2->commandBufferInfoCount;
    for (uint32_t j = 0; j < m; j++, total++)
      if (out && total < max)
        out[total] =
            (uint64_t)(uintptr_t)(s ? s->pCommandBuffers[j]
                                    : s2->pCommandBufferInfos[j].commandBuffer);
  }
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
  VkResult r = dev->QueueSubmit(queue, n, s, fence);
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
  VkResult r = dev->QueueSubmit2(queue, n, s, fence);
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
  VkResult r = dev->QueueSubmit2KHR(queue, n, s, fence);
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
