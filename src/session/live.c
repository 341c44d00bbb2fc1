/*
 * live.c - what a recording process publishes for `gpuperf top`: the
 * shared region of gpuperf/live.h (live_region.c), gp_live_dir()/<pid>,
 * rewritten in place about once a second while the process records with
 * its top kernels, its queues' busy time and the latest values of the
 * counters it samples over the last interval; removed when the recording
 * stops.
 *
 * The numbers come from a buffer observer: records reach it when the
 * process's buffers are flushed (every flush period, 500 ms by default),
 * so a kernel shows up within about a period of its end. They add up in
 * hash tables of SLOTS entries per kind; at each interval the busiest
 * kernels and queues (GP_LIVE_MAX_*) go into a snapshot, built aside and
 * then copied into the region under its sequence lock, so a reader never
 * sees half of one. A forked child that records publishes a region of
 * its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sessionInt.h"

#define SLOTS 1024 /* hash slots per table (power of two) */
#define WRITE_NS 1000000000ull

typedef struct kslot {
  uint64_t key; /* device << 32 | name id, +1; 0: empty */
  uint64_t launches, ns;
} kslot;

typedef struct qslot {
  uint64_t key; /* device << 32 | stream id, +1 */
  uint64_t ns;
} qslot;

typedef struct cslot {
  uint64_t key; /* device << 32 | counter id, +1 */
  double value;
} cslot;

static struct {
  pthread_mutex_t lock;
  bool on;
  pid_t pid;
  char dir[400];
  gp__live_region *region;
  uint64_t last_write;
  char comm[16];
  kslot k[SLOTS];
  qslot q[SLOTS];
  cslot c[SLOTS];
  gp_live_snapshot snap; /* built here, then published */
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

static size_t slot_of(uint64_t key) {
  key ^= key >> 29;
  key *= 0x9e3779b97f4a7c15ull;
  return (size_t)(key >> 40) & (SLOTS - 1);
}

/* The slot of key in a table of n-byte entries starting with the key, or
 * NULL when the table is full (the entry is then not counted). */
static void *find(void *table, size_t entry, uint64_t key) {
  size_t i = slot_of(key);
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

static void work(uint32_t dev, uint32_t name, uint32_t stream, uint64_t s,
                 uint64_t e, bool kernel) {
  uint64_t ns = e > s ? e - s : 0;
  if (kernel) {
    kslot *k = find(live.k, sizeof(kslot), ((uint64_t)dev << 32 | name) + 1);
    if (k) {
      k->launches++;
      k->ns += ns;
    }
  }
  qslot *q = find(live.q, sizeof(qslot), ((uint64_t)dev << 32 | stream) + 1);
  if (q)
    q->ns += ns;
}

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

static int by_ns_desc(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? 1 : a > b ? -1 : 0;
}

/* The used slots of a table as {ns, slot index} pairs, busiest first,
 * into pairs[SLOTS]; returns how many. off: the ns field's offset. */
static size_t busiest(const void *table, size_t entry, size_t off,
                      uint64_t (*pairs)[2]) {
  size_t n = 0;
  for (size_t i = 0; i < SLOTS; i++) {
    const char *e = (const char *)table + i * entry;
    if (*(const uint64_t *)e == 0)
      continue;
    memcpy(&pairs[n][0], e + off, 8);
    pairs[n++][1] = i;
  }
  qsort(pairs, n, sizeof(pairs[0]), by_ns_desc);
  return n;
}

/* Builds the snapshot of the interval ending now, publishes it and
 * starts a new interval. Lock held. */
static void publish(uint64_t now) {
  static uint64_t pairs[SLOTS][2];
  gp_live_snapshot *s = &live.snap;
  memset(s, 0, sizeof(*s));
  s->time_ns = now;
  s->interval_ns = now - live.last_write;
  memcpy(s->comm, live.comm, sizeof(s->comm));
  size_t n = busiest(live.k, sizeof(kslot), offsetof(kslot, ns), pairs);
  for (size_t i = 0; i < n && i < GP_LIVE_MAX_KERNELS; i++) {
    const kslot *k = &live.k[pairs[i][1]];
    gp_live_kernel *o = &s->kernels[s->num_kernels++];
    uint32_t d = (uint32_t)((k->key - 1) >> 32), id = (uint32_t)(k->key - 1);
    device_name(d, o->device, sizeof(o->device));
    snprintf(o->name, sizeof(o->name), "%s", gp_activity_string(id));
    o->launches = k->launches;
    o->gpu_ns = k->ns;
  }
  s->kernels_left_out = n > GP_LIVE_MAX_KERNELS ? n - GP_LIVE_MAX_KERNELS : 0;
  n = busiest(live.q, sizeof(qslot), offsetof(qslot, ns), pairs);
  for (size_t i = 0; i < n && i < GP_LIVE_MAX_QUEUES; i++) {
    const qslot *q = &live.q[pairs[i][1]];
    gp_live_queue *o = &s->queues[s->num_queues++];
    uint32_t d = (uint32_t)((q->key - 1) >> 32), id = (uint32_t)(q->key - 1);
    device_name(d, o->device, sizeof(o->device));
    snprintf(o->name, sizeof(o->name), "stream %u", id);
    o->busy_ns = q->ns;
  }
  for (size_t i = 0; i < SLOTS && s->num_counters < GP_LIVE_MAX_COUNTERS; i++) {
    const cslot *cs = &live.c[i];
    gp_counter_info ci;
    uint32_t d = (uint32_t)((cs->key - 1) >> 32), id = (uint32_t)(cs->key - 1);
    if (!cs->key || gp_counter_lookup(d, id, &ci) != 0)
      continue;
    gp_live_counter *o = &s->counters[s->num_counters++];
    device_name(d, o->device, sizeof(o->device));
    snprintf(o->name, sizeof(o->name), "%s", ci.name);
    snprintf(o->unit, sizeof(o->unit), "%s",
             ci.num_numerator_units ? gp_unit_name(ci.numerator_units[0]) : "");
    o->value = cs->value;
  }
  gp__live_region_publish(live.region, s);
  memset(live.k, 0, sizeof(live.k));
  memset(live.q, 0, sizeof(live.q));
  live.last_write = now;
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

static void observe(void *user, const uint8_t *buf, size_t size) {
  (void)user;
  pthread_mutex_lock(&live.lock);
  for (size_t off = 0; live.on && off + sizeof(gp_activity) <= size;) {
    const gp_activity *h = (const gp_activity *)(buf + off);
    if (h->size < sizeof(*h) || h->size > size - off)
      break; /* defensive: a malformed buffer */
    if (h->kind == GP_ACTIVITY_KIND_KERNEL &&
        h->size >= sizeof(gp_activity_kernel)) {
      const gp_activity_kernel *r = (const void *)h;
      work(r->device_id,
           r->demangled_name_id ? r->demangled_name_id : r->name_id,
           r->stream_id, r->start, r->end, true);
    } else if (h->kind == GP_ACTIVITY_KIND_MEMCPY &&
               h->size >= sizeof(gp_activity_memcpy)) {
      const gp_activity_memcpy *r = (const void *)h;
      work(r->device_id, 0, r->stream_id, r->start, r->end, false);
    } else if (h->kind == GP_ACTIVITY_KIND_MEMSET &&
               h->size >= sizeof(gp_activity_memset)) {
      const gp_activity_memset *r = (const void *)h;
      work(r->device_id, 0, r->stream_id, r->start, r->end, false);
    } else if (h->kind == GP_ACTIVITY_KIND_COUNTER &&
               h->size >= sizeof(gp_activity_counter)) {
      const gp_activity_counter *r = (const void *)h;
      cslot *cs =
          r->correlation_id
              ? NULL
              : find(live.c, sizeof(cslot),
                     ((uint64_t)r->device_id << 32 | r->counter_id) + 1);
      if (cs)
        cs->value = r->value_type == GP_VALUE_INT64 ? (double)r->value.i64
                                                    : r->value.f64;
    }
    off += h->size;
  }
  uint64_t now = gp_get_timestamp();
  if (live.on && live.pid != getpid()) {
    /* A forked child records too: it publishes a region of its own and
     * leaves its parent's alone (unmapped here, not removed). */
    gp__live_region_destroy(live.region, false);
    live.region = NULL;
    memset(live.c, 0, sizeof(live.c));
    live.on = region_open();
  }
  if (live.on && now - live.last_write >= WRITE_NS)
    publish(now);
  pthread_mutex_unlock(&live.lock);
}

/* See sessionInt.h. */
void gp__live_start(void) {
  char dir[400];
  if (gp_live_dir(dir, sizeof(dir)) != 0)
    return;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return;
  pthread_mutex_lock(&live.lock);
  if (live.on) {
    pthread_mutex_unlock(&live.lock);
    return;
  }
  snprintf(live.dir, sizeof(live.dir), "%s", dir);
  live.last_write = gp_get_timestamp();
  memset(live.k, 0, sizeof(live.k));
  memset(live.q, 0, sizeof(live.q));
  memset(live.c, 0, sizeof(live.c));
  live.on = region_open(); /* there from the start, empty */
  bool on = live.on;
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
  live.on = false;
  /* A fork child that never published holds its parent's mapping: it
   * unmaps it and leaves the file. */
  gp__live_region_destroy(live.region, was);
  live.region = NULL;
  pthread_mutex_unlock(&live.lock);
  if (was)
    gp__activity_remove_observer(observe, NULL);
}
