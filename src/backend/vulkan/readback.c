/*
 * readback.c - the timestamps of submitted command buffers, read back,
 * and the records they become (submit.c notes the submissions).
 *
 * Entries are read back without waiting when their last timestamp is
 * available: at the next submission, after the program's own waits and
 * presents, and at a flush; with waiting where the program has already
 * waited (the command buffer is recorded again, freed or submitted
 * again, the device is destroyed) or at a forced flush. Each entry
 * becomes one RENDER_STAGE record for the command buffer (with the
 * submissions its semaphores waited for) and one per region.
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

/* See vkInt.h. */
gp__vk_queue_order *gp__vk_queue_order_of(gp__vk_device *dev, uint32_t s,
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

/* True when query i of p's recording was written (on an in-order device
 * the command buffer's start and end may be its first and last pass's). */
static bool written(const gp__vk_pending *p, uint32_t i) {
  return i > 1 || i == (i ? p->end_q : p->start_q);
}

/* How far outside its submission and the present an entry's times may
 * lie: the error of the device clock's mapping, generously. */
#define TIMES_MARGIN_NS 100000000ull

/* True if the times p reads (query i at q[i * stride]) lie between its
 * submission and now. One outside is no time at all: lavapipe under
 * Gallium's trace wrapper (GALLIUM_TRACE) gave a timestamp of 0 as
 * available, which maps to 2^64 - 11 ns, and a trace whose Utilization
 * counted windows up to it grew without end. */
static bool times_hold(const gp__vk_device *dev, const gp__vk_pending *p,
                       const uint64_t *q, size_t stride, uint64_t mask,
                       int64_t base) {
  uint64_t lo = p->queued > TIMES_MARGIN_NS ? p->queued - TIMES_MARGIN_NS : 0;
  uint64_t hi = gp_get_timestamp() + TIMES_MARGIN_NS;
  for (uint32_t i = 0; i < 2 + 2 * p->nregions; i++) {
    if (!written(p, i))
      continue;
    uint64_t t = to_trace(dev, q[(size_t)i * stride] & mask, base);
    if (t < lo || t > hi)
      return false;
  }
  return true;
}

/* Writes the records of one entry from its timestamps: query i of its
 * recording at q[i * stride] (untimed when q is NULL: the work's times
 * could not be read, or its queue has none; and when they cannot be,
 * times_hold(), which the GPU log says once). */
static void write_entry(gp__vk_device *dev, const gp__vk_pending *p,
                        const uint64_t *q, size_t stride, uint32_t bits) {
  const gp__vk_cmdbuf *c = p->cb;
  uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  int64_t base = 0;
  if (q && !dev->calibrated)
    base = (int64_t)p->queued -
           (int64_t)((double)(q[(size_t)p->start_q * stride] & mask) *
                     dev->period);
  if (q && !times_hold(dev, p, q, stride, mask, base)) {
    q = NULL;
    gp__vk_warn_once(dev, &dev->odd_warned, 1,
                     "gpuperf: the driver gave timestamps outside their "
                     "submission's time (0, or past the present): those "
                     "command buffers' stages are recorded without times, "
                     "as instants at their submission");
  }
#define T(i) (q ? to_trace(dev, q[(size_t)(i)*stride] & mask, base) : 0)
  /* An in-order device's first stage starts with its command buffer,
   * whose start is its first timestamp there (start_q != 0): see
   * in_order_start(). What came before on the queue is known when the
   * submission before it there was the last written. */
  bool in_order = q && dev->ts_in_order;
  gp__vk_queue_order *o =
      p->seq ? gp__vk_queue_order_of(dev, p->stream_id, false) : NULL;
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
  if (how == READ_DONE && p->state == GP_VK_COPY_COPYING)
    return false; /* copied by a later submission, perhaps not yet run */
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

/* See vkInt.h. */
void gp__vk_pending_unlink(gp__vk_device *dev, gp__vk_pending **pp,
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
      gp__vk_pending_unlink(dev, pp, prev);
      continue;
    }
    if (mine && read_entry(dev, p, how)) {
      gp__vk_pending_unlink(dev, pp, prev);
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

/* See vkInt.h. */
void gp__vk_resolve_untimed(gp__vk_device *dev, const gp__vk_cmdbuf *c) {
  gp__vk_pending **pp = &dev->pending, *prev = NULL;
  while (*pp) {
    gp__vk_pending *p = *pp;
    if (p->cb == c && p->half == c->half) {
      write_entry(dev, p, NULL, 1, 64);
      gp__vk_pending_unlink(dev, pp, prev);
      continue;
    }
    prev = p;
    pp = &p->next;
  }
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
