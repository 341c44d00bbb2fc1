/*
 * live.c - what a recording process publishes for `gpuperf top`: the
 * shared region of gpuperf/live.h (live_region.c), gp_live_dir()/<pid>,
 * rewritten in place about once a second while the process records with,
 * over the last interval, its devices' busy time, its top kernels, its
 * queues' busy time and the latest values of the counters it samples;
 * removed when the recording stops.
 *
 * The numbers come from a buffer observer: records reach it when the
 * process's buffers are flushed (every flush period, 500 ms by default),
 * and a backend may write a piece of work's record long after it ran
 * (PoCL's kernels when the program waits for their queue). So each
 * piece of work (kernels, copies, fills, Vulkan command buffers and
 * render stages) is kept as its [start, end) until the interval it falls
 * in is published: the interval [last publication, now) counts the part
 * of each piece that lies within it, kernels by the union of their
 * launches' parts, queues and devices by the union of their work's, so
 * no share passes 100%. Work that ran wholly before the interval (its
 * record came too late for its own) counts in none and adds to late_ns;
 * work that reaches past now (a device clock ahead) is kept for the next.
 *
 * Launches in flight (live_flight.c: an OpenCL launch enqueued, its
 * KERNEL record not come yet). While there are some, the device's time
 * after its last reported work (from no earlier than the oldest of them
 * was enqueued) is published as assumed busy: on an in-order queue the
 * device is then running one of them, or about to. They are attributed
 * to the process's one OpenCL device, and to none (in_flight_unplaced)
 * when it has several.
 *
 * Counters. Periodic values are windows of the sampling period (1 ms by
 * default): each counter shows the windows that ended in the interval,
 * averaged over their time for ratios (`Utilization`, hit rates) and
 * summed for counts, and keeps its last value, with the time of its last
 * window, while no window ends (derived values are emitted seconds late).
 *
 * The snapshot is built aside and copied into the region under its
 * sequence lock, so a reader never sees half of one. A thread of ours
 * publishes it once a second, records or not (a program waiting on a
 * long kernel may produce none for a long while), as does the observer
 * when it runs at the time; both under the lock, which the stop takes
 * before it unmaps the region, so nothing writes into it after. A forked
 * child that records publishes a region of its own, from a thread of its
 * own.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters/countersInt.h"
#include "sessionInt.h"
#include "core/thread.h"

#define SLOTS 1024 /* hash slots per table (power of two) */
#define WRITE_NS 1000000000ull
#define MAX_ITEMS 65536 /* work kept per interval; past it, publish early */
#define MAX_DEV 64

/* Names of render stages without a label of their own (gp_live_kernel
 * name ids past STAGE_ID). */
#define STAGE_ID 0xffffff00u

typedef struct kslot {
  uint64_t key; /* device << 32 | name id, +1; 0: empty */
  uint64_t launches, ns, busy;
} kslot;

typedef struct qslot {
  uint64_t key; /* device << 32 | stream id, +1 */
  uint64_t busy;
} qslot;

typedef struct cslot {
  uint64_t key;       /* device << 32 | counter id, +1 */
  uint32_t combine;   /* gp__combine + 1 (0: not looked up) */
  uint32_t windows;   /* windows that ended in the interval */
  double sum, weight; /* of those: values (x ns for ratios), ns */
  double value;       /* last published */
  uint64_t time;      /* end of the last window in it */
} cslot;

/* A piece of work of the interval. */
typedef struct item {
  uint64_t s, e;
  uint64_t kkey; /* kernel key, 0: not a listed kernel (a copy, ...) */
  uint64_t qkey; /* queue key, 0: no queue (a stage within a buffer) */
  uint32_t dev;
  uint32_t busy; /* counts in its device's busy time */
} item;

/* (key, start, end) for a union over sorted spans. */
typedef struct span {
  uint64_t key, s, e;
} span;

static struct {
  pthread_mutex_t lock;
  bool on;
  pid_t pid;
  /* The publishing thread: runs while `run`, woken by `wake` to stop. */
  pthread_t thread;
  pid_t thread_pid; /* the process it runs in, 0: none */
  bool run;
  pthread_cond_t wake;
  char dir[400];
  gp__live_region *region;
  uint64_t last_write; /* end of the last interval: the trace clock */
  uint64_t last_mono;  /* when it was published: CLOCK_MONOTONIC */
  char comm[16];
  kslot k[SLOTS];
  qslot q[SLOTS];
  cslot c[SLOTS];
  item *items;
  size_t num_items, cap_items;
  span *spans; /* cap_items of them, for publish() */
  uint64_t late_ns;
  uint64_t last_end[MAX_DEV]; /* latest end of reported work */
  gp_live_snapshot snap;      /* built here, then published */
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void wake_init(void) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&live.wake, &a);
  pthread_condattr_destroy(&a);
}

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* See session.h. */
int gp_live_dir(char *buf, size_t size) {
  if (!buf || size == 0)
    return GP_EINVAL;
  const char *d = getenv("GPUPERF_LIVE_DIR");
  int n = d && *d
              ? snprintf(buf, size, "%s", d)
              : snprintf(buf, size, "/tmp/gpuperf-live-%u", (unsigned)getuid());
  return n < 0 || (size_t)n >= size ? GP_ESIZE : 0;
}

static size_t hash64(uint64_t key, size_t mask) {
  key ^= key >> 29;
  key *= 0x9e3779b97f4a7c15ull;
  return (size_t)(key >> 40) & mask;
}

/* The slot of key in a table of n-byte entries starting with the key, or
 * NULL when the table is full (the entry is then not counted). */
static void *find(void *table, size_t entry, uint64_t key) {
  size_t i = hash64(key, SLOTS - 1);
  for (size_t probe = 0; probe < SLOTS; probe++, i = (i + 1) & (SLOTS - 1)) {
    uint64_t *k = (uint64_t *)((char *)table + i * entry);
    if (*k == key)
      return k;
    if (*k == 0) {
      memset(k, 0, entry);
      *k = key;
      return k;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Work                                                                 */

static void add_item(uint64_t s, uint64_t e, uint64_t kkey, uint64_t qkey,
                     uint32_t dev, bool busy) {
  if (e <= s)
    return;
  if (dev < MAX_DEV && busy && e > live.last_end[dev])
    live.last_end[dev] = e;
  if (e <= live.last_write) { /* its interval is published already */
    live.late_ns += e - s;
    return;
  }
  if (live.num_items == live.cap_items) {
    size_t ncap = live.cap_items ? live.cap_items * 2 : 1024;
    item *ni =
        ncap <= MAX_ITEMS ? realloc(live.items, ncap * sizeof(*ni)) : NULL;
    span *ns = ni ? realloc(live.spans, ncap * sizeof(*ns)) : NULL;
    if (ni)
      live.items = ni;
    if (!ns)
      return; /* defensive: the caller publishes before MAX_ITEMS */
    live.spans = ns;
    live.cap_items = ncap;
  }
  live.items[live.num_items++] = (item){s, e, kkey, qkey, dev, busy};
}

static uint64_t key_of(uint32_t dev, uint32_t id) {
  return ((uint64_t)dev << 32 | id) + 1;
}

static void on_stage(const gp_activity_render_stage *r) {
  if (r->stage == GP_RENDER_STAGE_COMMAND_BUFFER) {
    /* Whole command buffers: the device's and queue's busy time. */
    add_item(r->start, r->end, 0, key_of(r->device_id, r->stream_id),
             r->device_id, true);
  } else if (r->stage < GP_RENDER_STAGE_KIND_COUNT) {
    /* Stages within them: listed like kernels, by label or kind. */
    uint32_t id = r->name_id ? r->name_id : STAGE_ID + r->stage;
    add_item(r->start, r->end, key_of(r->device_id, id), 0, r->device_id,
             false);
  }
}

/* ------------------------------------------------------------------ */
/* Publishing                                                           */

static void device_name(uint32_t dev, char *buf, size_t size) {
  gp_device_info di;
  if (gp_device_get_info(dev, &di) == 0 && di.name && *di.name)
    snprintf(buf, size, "%s", di.name);
  else
    snprintf(buf, size, "device %u", dev);
}

static void read_comm(void) {
  memset(live.comm, 0, sizeof(live.comm));
  FILE *c = fopen("/proc/self/comm", "r");
  if (c) {
    if (fgets(live.comm, sizeof(live.comm), c))
      live.comm[strcspn(live.comm, "\n")] = '\0';
    fclose(c);
  }
}

static int by_span(const void *x, const void *y) {
  const span *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->s < b->s ? -1 : a->s > b->s;
}

/*
 * Sorts spans[n] by key and start and calls fn(key, union) for each key:
 * the length of the union of its spans.
 */
static void unions(span *spans, size_t n, void (*fn)(uint64_t, uint64_t)) {
  if (n == 0)
    return;
  qsort(spans, n, sizeof(*spans), by_span);
  for (size_t i = 0; i < n;) {
    uint64_t key = spans[i].key, total = 0;
    uint64_t cs = spans[i].s, ce = spans[i].e;
    for (; i < n && spans[i].key == key; i++) {
      if (spans[i].s > ce) {
        total += ce - cs;
        cs = spans[i].s;
        ce = spans[i].e;
      } else if (spans[i].e > ce) {
        ce = spans[i].e;
      }
    }
    fn(key, total + (ce - cs));
  }
}

static uint64_t dev_busy[MAX_DEV];

static void set_kernel_busy(uint64_t key, uint64_t ns) {
  kslot *k = find(live.k, sizeof(kslot), key);
  if (k)
    k->busy = ns;
}

static void set_queue_busy(uint64_t key, uint64_t ns) {
  qslot *q = find(live.q, sizeof(qslot), key);
  if (q)
    q->busy = ns;
}

static void set_dev_busy(uint64_t key, uint64_t ns) {
  if (key - 1 < MAX_DEV)
    dev_busy[key - 1] = ns;
}

/* Clips the kept work to [from, to), adds up kernels, queues and devices
 * (the unions) and keeps what reaches past `to` for the next interval. */
static void count_items(uint64_t from, uint64_t to) {
  size_t kept = 0;
  span *sp = live.spans;
  memset(dev_busy, 0, sizeof(dev_busy));
  /* Three passes over the same spans buffer: kernels, queues, devices. */
  for (int pass = 0; pass < 3; pass++) {
    size_t n = 0;
    for (size_t i = 0; i < live.num_items; i++) {
      const item *it = &live.items[i];
      uint64_t s = it->s > from ? it->s : from;
      uint64_t e = it->e < to ? it->e : to;
      if (e <= s)
        continue;
      uint64_t key = pass == 0   ? it->kkey
                     : pass == 1 ? it->qkey
                     : it->busy  ? (uint64_t)it->dev + 1
                                 : 0;
      if (!key || (pass == 2 && it->dev >= MAX_DEV))
        continue;
      if (pass == 0) {
        kslot *k = find(live.k, sizeof(kslot), key);
        if (k) {
          k->launches++;
          k->ns += e - s;
        }
      }
      sp[n++] = (span){key, s, e};
    }
    unions(sp, n,
           pass == 0   ? set_kernel_busy
           : pass == 1 ? set_queue_busy
                       : set_dev_busy);
  }
  for (size_t i = 0; i < live.num_items; i++)
    if (live.items[i].e > to) {
      live.items[kept] = live.items[i];
      if (live.items[kept].s < to)
        live.items[kept].s = to;
      kept++;
    }
  live.num_items = kept;
}

static int by_busy_desc(const void *x, const void *y) {
  const uint64_t *a = x, *b = y;
  if (a[0] != b[0])
    return a[0] < b[0] ? 1 : -1;
  return a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0;
}

/* The used slots of a table as {busy, ns, slot index} triples, busiest
 * first, into t[SLOTS]; returns how many. */
static size_t busiest(const void *table, size_t entry, size_t busy_off,
                      size_t ns_off, uint64_t (*t)[3]) {
  size_t n = 0;
  for (size_t i = 0; i < SLOTS; i++) {
    const char *e = (const char *)table + i * entry;
    if (*(const uint64_t *)e == 0)
      continue;
    memcpy(&t[n][0], e + busy_off, 8);
    memcpy(&t[n][1], e + ns_off, 8);
    t[n++][2] = i;
  }
  qsort(t, n, sizeof(t[0]), by_busy_desc);
  return n;
}

/* The one device of api this process has, or UINT32_MAX (none, or
 * several). */
static uint32_t only_device(uint32_t api) {
  uint32_t n = 0, found = UINT32_MAX;
  gp_device_count(&n);
  for (uint32_t d = 0; d < n; d++) {
    gp_device_info di;
    if (gp_device_get_info(d, &di) != 0 || di.api != api)
      continue;
    if (found != UINT32_MAX)
      return UINT32_MAX;
    found = d;
  }
  return found;
}

/* The snapshot's entry of device dev, added if new; NULL when full. */
static gp_live_device *snap_device(gp_live_snapshot *s, uint32_t dev,
                                   uint32_t *ids) {
  for (uint32_t i = 0; i < s->num_devices; i++)
    if (ids[i] == dev)
      return &s->devices[i];
  if (s->num_devices == GP_LIVE_MAX_DEVICES)
    return NULL;
  ids[s->num_devices] = dev;
  gp_live_device *d = &s->devices[s->num_devices++];
  device_name(dev, d->name, sizeof(d->name));
  return d;
}

/* The devices: reported busy time, and launches in flight with the time
 * taken as busy for them. */
static void publish_devices(gp_live_snapshot *s, uint64_t from, uint64_t to) {
  uint32_t ids[GP_LIVE_MAX_DEVICES];
  for (uint32_t d = 0; d < MAX_DEV; d++)
    if (dev_busy[d]) {
      gp_live_device *o = snap_device(s, d, ids);
      if (o)
        o->busy_ns = dev_busy[d];
    }
  uint64_t since = 0;
  uint32_t n = gp__flight_count(to, &since);
  if (!n)
    return;
  uint32_t dev = only_device(GP_API_OPEN_CL);
  gp_live_device *o = dev < MAX_DEV ? snap_device(s, dev, ids) : NULL;
  if (!o) {
    s->in_flight_unplaced = n;
    return;
  }
  o->in_flight = n;
  o->in_flight_since_ns = since;
  uint64_t a = since > from ? since : from;
  if (live.last_end[dev] > a)
    a = live.last_end[dev];
  o->assumed_ns = to > a ? to - a : 0;
  if (o->busy_ns + o->assumed_ns > to - from) /* defensive */
    o->assumed_ns = to - from - o->busy_ns;
}

/* The kernel's name: its string, or a render stage's kind. */
static void kernel_name(uint32_t id, char *buf, size_t size) {
  static const char *const stage[] = {"Command buffer", "Render pass",
                                      "Compute", "Transfer"};
  if (id >= STAGE_ID && id - STAGE_ID < GP_ARRAY_SIZE(stage))
    snprintf(buf, size, "%s", stage[id - STAGE_ID]);
  else
    snprintf(buf, size, "%s", gp_activity_string(id));
}

/* Builds the snapshot of the interval ending now, publishes it and
 * starts a new interval. Lock held. */
static void publish(uint64_t now) {
  static uint64_t t[SLOTS][3];
  gp_live_snapshot *s = &live.snap;
  uint64_t from = live.last_write;
  memset(s, 0, sizeof(*s));
  s->time_ns = now;
  s->interval_ns = now - from;
  s->late_ns = live.late_ns;
  s->flags = gp__clock_is_virtual() ? GP_LIVE_FLAG_VIRTUAL_TIME : 0;
  memcpy(s->comm, live.comm, sizeof(s->comm));
  count_items(from, now);
  publish_devices(s, from, now);
  size_t n = busiest(live.k, sizeof(kslot), offsetof(kslot, busy),
                     offsetof(kslot, ns), t);
  for (size_t i = 0; i < n && i < GP_LIVE_MAX_KERNELS; i++) {
    const kslot *k = &live.k[t[i][2]];
    gp_live_kernel *o = &s->kernels[s->num_kernels++];
    uint32_t d = (uint32_t)((k->key - 1) >> 32), id = (uint32_t)(k->key - 1);
    device_name(d, o->device, sizeof(o->device));
    kernel_name(id, o->name, sizeof(o->name));
    o->launches = k->launches;
    o->gpu_ns = k->ns;
    o->busy_ns = k->busy;
  }
  s->kernels_left_out = n > GP_LIVE_MAX_KERNELS ? n - GP_LIVE_MAX_KERNELS : 0;
  n = busiest(live.q, sizeof(qslot), offsetof(qslot, busy),
              offsetof(qslot, busy), t);
  for (size_t i = 0; i < n && i < GP_LIVE_MAX_QUEUES; i++) {
    const qslot *q = &live.q[t[i][2]];
    gp_live_queue *o = &s->queues[s->num_queues++];
    uint32_t d = (uint32_t)((q->key - 1) >> 32), id = (uint32_t)(q->key - 1);
    device_name(d, o->device, sizeof(o->device));
    snprintf(o->name, sizeof(o->name), "stream %u", id);
    o->busy_ns = q->busy;
  }
  for (size_t i = 0; i < SLOTS; i++) {
    cslot *cs = &live.c[i];
    if (!cs->windows)
      continue; /* no new window: the last value stays */
    bool sum = cs->combine - 1 == GP__SUM;
    cs->value = sum ? cs->sum : cs->weight > 0 ? cs->sum / cs->weight : 0;
    cs->sum = cs->weight = 0;
    cs->windows = 0;
  }
  for (size_t i = 0; i < SLOTS && s->num_counters < GP_LIVE_MAX_COUNTERS; i++) {
    const cslot *cs = &live.c[i];
    gp_counter_info ci;
    uint32_t d = (uint32_t)((cs->key - 1) >> 32), id = (uint32_t)(cs->key - 1);
    if (!cs->key || !cs->time || gp_counter_lookup(d, id, &ci) != 0)
      continue;
    gp_live_counter *o = &s->counters[s->num_counters++];
    device_name(d, o->device, sizeof(o->device));
    snprintf(o->name, sizeof(o->name), "%s", ci.name);
    snprintf(o->unit, sizeof(o->unit), "%s",
             ci.num_numerator_units ? gp_unit_name(ci.numerator_units[0]) : "");
    o->value = cs->value;
    o->time_ns = cs->time;
  }
  gp__live_region_publish(live.region, s);
  memset(live.k, 0, sizeof(live.k));
  memset(live.q, 0, sizeof(live.q));
  live.late_ns = 0;
  live.last_write = now;
  live.last_mono = mono_ns();
}

/* Publishes the interval ending now when one is due (about once a second
 * of real time, whatever the trace clock does), or at once with force.
 * Lock held. */
static void publish_due(bool force) {
  uint64_t now = gp_get_timestamp();
  if (now < live.last_write) {
    /* The trace clock went back: the simulated GPUs' virtual clock took
     * over. The interval starts again on it; the work kept was on the
     * other clock. */
    live.last_write = now;
    live.num_items = 0;
    memset(live.last_end, 0, sizeof(live.last_end));
    gp__flight_reset(true);
    return;
  }
  if ((force || mono_ns() - live.last_mono >= WRITE_NS) &&
      now > live.last_write)
    publish(now);
}

/* The publishing thread. */
static void *publisher(void *arg) {
  (void)arg;
  pthread_mutex_lock(&live.lock);
  while (live.run) {
    uint64_t at = live.last_mono + WRITE_NS;
    struct timespec ts = {(time_t)(at / 1000000000ull),
                          (long)(at % 1000000000ull)};
    pthread_cond_timedwait(&live.wake, &live.lock, &ts);
    if (live.run && live.on && live.pid == getpid())
      publish_due(false);
  }
  pthread_mutex_unlock(&live.lock);
  return NULL;
}

/* Starts the publishing thread of this process. Lock held. Without it
 * (it cannot be made), the observer still publishes when it runs. */
static void thread_start(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, wake_init);
  live.run = true;
  /* The program's signals are for its own threads. */
  if (gp__thread_start(&live.thread, NULL, publisher, NULL) == 0)
    live.thread_pid = getpid();
  else
    live.run = false;
}

/* Makes this process's region (a new one after a fork: the inherited
 * mapping is the parent's). Lock held; false if it cannot be made. */
static bool region_open(void) {
  char path[512];
  live.pid = getpid();
  snprintf(path, sizeof(path), "%s/%d", live.dir, (int)live.pid);
  read_comm();
  return gp__live_region_create(path, (uint32_t)live.pid, &live.region) == 0;
}

/* A periodic counter window (per-activity values are left out). */
static void on_counter(const gp_activity_counter *r) {
  if (r->correlation_id)
    return;
  cslot *cs = find(live.c, sizeof(cslot), key_of(r->device_id, r->counter_id));
  if (!cs)
    return;
  if (!cs->combine) {
    const gp__catalog *cat = gp__catalog_get(r->device_id, NULL);
    int idx = cat ? gp__catalog_find(cat, r->counter_id) : -1;
    cs->combine = 1 + (idx >= 0 ? cat->counters[idx].combine : GP__RATIO);
  }
  double v =
      r->value_type == GP_VALUE_INT64 ? (double)r->value.i64 : r->value.f64;
  double w = r->timestamp > r->window_start
                 ? (double)(r->timestamp - r->window_start)
                 : 0;
  if (cs->combine - 1 == GP__SUM) {
    cs->sum += v;
  } else {
    cs->sum += v * w;
    cs->weight += w;
  }
  cs->windows++;
  if (r->timestamp > cs->time)
    cs->time = r->timestamp;
}

/* One record. Lock held. */
static void on_record(const gp_activity *h) {
  if (h->kind == GP_ACTIVITY_KIND_KERNEL &&
      h->size >= sizeof(gp_activity_kernel)) {
    const gp_activity_kernel *r = (const void *)h;
    uint32_t name = r->demangled_name_id ? r->demangled_name_id : r->name_id;
    add_item(r->start, r->end, key_of(r->device_id, name),
             key_of(r->device_id, r->stream_id), r->device_id, true);
    gp__flight_done(r->correlation_id);
  } else if (h->kind == GP_ACTIVITY_KIND_MEMCPY &&
             h->size >= sizeof(gp_activity_memcpy)) {
    const gp_activity_memcpy *r = (const void *)h;
    add_item(r->start, r->end, 0, key_of(r->device_id, r->stream_id),
             r->device_id, true);
  } else if (h->kind == GP_ACTIVITY_KIND_MEMSET &&
             h->size >= sizeof(gp_activity_memset)) {
    const gp_activity_memset *r = (const void *)h;
    add_item(r->start, r->end, 0, key_of(r->device_id, r->stream_id),
             r->device_id, true);
  } else if (h->kind == GP_ACTIVITY_KIND_RENDER_STAGE &&
             h->size >= sizeof(gp_activity_render_stage)) {
    on_stage((const gp_activity_render_stage *)h);
  } else if (h->kind == GP_ACTIVITY_KIND_API &&
             h->size >= sizeof(gp_activity_api)) {
    gp__flight_api((const gp_activity_api *)h);
  } else if (h->kind == GP_ACTIVITY_KIND_DROPPED &&
             h->size >= sizeof(gp_activity_dropped)) {
    const gp_activity_dropped *r = (const void *)h;
    /* Which launches lost their records is not known: none is taken as
     * in flight any more. */
    if (r->dropped_kind == GP_ACTIVITY_KIND_KERNEL)
      gp__flight_reset(false);
  } else if (h->kind == GP_ACTIVITY_KIND_COUNTER &&
             h->size >= sizeof(gp_activity_counter)) {
    on_counter((const gp_activity_counter *)h);
  }
}

static void observe(void *user, const uint8_t *buf, size_t size) {
  (void)user;
  pthread_mutex_lock(&live.lock);
  if (live.on && live.pid != getpid()) {
    /* A forked child records too: it publishes a region of its own and
     * leaves its parent's alone (unmapped here, not removed). */
    gp__live_region_destroy(live.region, false);
    live.region = NULL;
    memset(live.c, 0, sizeof(live.c));
    gp__flight_reset(true);
    live.num_items = 0;
    live.on = region_open();
    live.run = false; /* the parent's thread is not in this process */
    if (live.on)
      thread_start();
  }
  for (size_t off = 0; live.on && off + sizeof(gp_activity) <= size;) {
    const gp_activity *h = (const gp_activity *)(buf + off);
    if (h->size < sizeof(*h) || h->size > size - off)
      break;                         /* defensive: a malformed buffer */
    if (live.num_items == MAX_ITEMS) /* a short interval, not lost work */
      publish_due(true);
    on_record(h);
    off += h->size;
  }
  if (live.on)
    publish_due(false);
  pthread_mutex_unlock(&live.lock);
}

/* See sessionInt.h. */
void gp__live_start(void) {
  char dir[400];
  if (gp_live_dir(dir, sizeof(dir)) != 0)
    return;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return;
  /* Regions of processes that ended without removing theirs (SIGKILL). */
  gp_live_remove_stale(dir, NULL);
  pthread_mutex_lock(&live.lock);
  if (live.on) {
    pthread_mutex_unlock(&live.lock);
    return;
  }
  snprintf(live.dir, sizeof(live.dir), "%s", dir);
  live.last_write = gp_get_timestamp();
  live.last_mono = mono_ns();
  memset(live.k, 0, sizeof(live.k));
  memset(live.q, 0, sizeof(live.q));
  memset(live.c, 0, sizeof(live.c));
  gp__flight_reset(true);
  memset(live.last_end, 0, sizeof(live.last_end));
  live.num_items = 0;
  live.late_ns = 0;
  live.on = region_open(); /* there from the start, empty */
  bool on = live.on;
  if (on && live.thread_pid != getpid())
    thread_start();
  pthread_mutex_unlock(&live.lock);
  if (on && gp__activity_add_observer(observe, NULL) != 0) {
    pthread_mutex_lock(&live.lock);
    live.on = false;
    gp__live_region_destroy(live.region, true);
    live.region = NULL;
    pthread_mutex_unlock(&live.lock);
  }
}

/* See sessionInt.h. */
void gp__live_stop(void) {
  pthread_mutex_lock(&live.lock);
  bool was = live.on && live.pid == getpid();
  /* Our thread stops publishing once it has the lock again; it is
   * waited for unless the process is dying (then no thread is). */
  bool join = live.thread_pid == getpid() && !gp__dying();
  if (live.thread_pid == getpid()) {
    live.run = false;
    pthread_cond_broadcast(&live.wake);
  }
  live.on = false;
  /* A fork child that never published holds its parent's mapping: it
   * unmaps it and leaves the file. */
  gp__live_region_destroy(live.region, was);
  live.region = NULL;
  free(live.items);
  free(live.spans);
  live.items = NULL;
  live.spans = NULL;
  live.num_items = live.cap_items = 0;
  pthread_t thread = live.thread;
  if (join)
    live.thread_pid = 0;
  pthread_mutex_unlock(&live.lock);
  if (join)
    pthread_join(thread, NULL);
  if (was)
    gp__activity_remove_observer(observe, NULL);
}
