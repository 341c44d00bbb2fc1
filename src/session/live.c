/*
 * live.c - what a recording process publishes for `gpuperf top`: a small
 * text file, rewritten (atomically, by rename) about once a second while
 * the process records, with its top kernels, its queues' busy time and the
 * latest values of the counters it samples over the last interval.
 *
 * Where: gp_live_dir() ($GPUPERF_LIVE_DIR, else /tmp/gpuperf-live-<uid>),
 * file <pid>, removed when the recording stops. Format (tab-separated,
 * tabs and newlines in names replaced by spaces):
 *
 *   gpuperf-live    1
 *   pid             PID   COMM
 *   time            NOW_NS   INTERVAL_NS          (CLOCK_BOOTTIME)
 *   kernel          DEVICE   NAME   LAUNCHES   GPU_NS
 *   queue           DEVICE   STREAM   BUSY_NS
 *   counter         DEVICE   NAME   VALUE   UNIT
 *
 * The file is made by a buffer observer: records reach it when the
 * process's buffers are flushed (every flush period, 500 ms by default),
 * so a kernel shows up within about a period of its end. This is the
 * stand-in for per-process shared memory (a reader then needs no file):
 * the lines are what such a region would hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
  char path[512];
  uint64_t last_write;
  kslot k[SLOTS];
  qslot q[SLOTS];
  cslot c[SLOTS];
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

static void clean(char *s) {
  for (; *s; s++)
    if (*s == '\t' || *s == '\n' || *s == '\r')
      *s = ' ';
}

static void device_name(uint32_t dev, char *buf, size_t size) {
  gp_device_info di;
  if (gp_device_get_info(dev, &di) == 0 && di.name && *di.name)
    snprintf(buf, size, "%s", di.name);
  else
    snprintf(buf, size, "device %u", dev);
  clean(buf);
}

/* Writes the file and starts a new interval. Lock held. */
static void write_file(uint64_t now) {
  char tmp[600], name[256], dev[128];
  snprintf(tmp, sizeof(tmp), "%s.tmp", live.path);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return;
  char comm[64] = "";
  FILE *c = fopen("/proc/self/comm", "r");
  if (c) {
    if (fgets(comm, sizeof(comm), c))
      comm[strcspn(comm, "\n")] = '\0';
    fclose(c);
  }
  clean(comm);
  fprintf(f, "gpuperf-live\t1\npid\t%d\t%s\ntime\t%llu\t%llu\n", (int)live.pid,
          comm, (unsigned long long)now,
          (unsigned long long)(now - live.last_write));
  for (size_t i = 0; i < SLOTS; i++) {
    kslot *k = &live.k[i];
    if (!k->key)
      continue;
    uint32_t d = (uint32_t)((k->key - 1) >> 32), id = (uint32_t)(k->key - 1);
    device_name(d, dev, sizeof(dev));
    snprintf(name, sizeof(name), "%s", gp_activity_string(id));
    clean(name);
    fprintf(f, "kernel\t%s\t%s\t%llu\t%llu\n", dev, name,
            (unsigned long long)k->launches, (unsigned long long)k->ns);
  }
  for (size_t i = 0; i < SLOTS; i++) {
    qslot *q = &live.q[i];
    if (!q->key)
      continue;
    uint32_t d = (uint32_t)((q->key - 1) >> 32), id = (uint32_t)(q->key - 1);
    device_name(d, dev, sizeof(dev));
    fprintf(f, "queue\t%s\tstream %u\t%llu\n", dev, id,
            (unsigned long long)q->ns);
  }
  for (size_t i = 0; i < SLOTS; i++) {
    cslot *cs = &live.c[i];
    if (!cs->key)
      continue;
    uint32_t d = (uint32_t)((cs->key - 1) >> 32), id = (uint32_t)(cs->key - 1);
    gp_counter_info ci;
    if (gp_counter_lookup(d, id, &ci) != 0)
      continue;
    device_name(d, dev, sizeof(dev));
    snprintf(name, sizeof(name), "%s", ci.name);
    clean(name);
    fprintf(f, "counter\t%s\t%s\t%.9g\t%s\n", dev, name, cs->value,
            ci.num_numerator_units ? gp_unit_name(ci.numerator_units[0]) : "");
  }
  bool ok = fclose(f) == 0;
  if (ok && rename(tmp, live.path) == 0) {
    memset(live.k, 0, sizeof(live.k));
    memset(live.q, 0, sizeof(live.q));
    live.last_write = now;
  } else {
    unlink(tmp);
  }
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
    /* A forked child records too: it publishes a file of its own. */
    char *slash = strrchr(live.path, '/');
    live.pid = getpid();
    if (slash)
      snprintf(slash + 1, sizeof(live.path) - (size_t)(slash + 1 - live.path),
               "%d", (int)live.pid);
    memset(live.c, 0, sizeof(live.c));
  }
  if (live.on && now - live.last_write >= WRITE_NS)
    write_file(now);
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
  live.pid = getpid();
  snprintf(live.path, sizeof(live.path), "%s/%d", dir, (int)live.pid);
  live.last_write = gp_get_timestamp();
  memset(live.k, 0, sizeof(live.k));
  memset(live.q, 0, sizeof(live.q));
  memset(live.c, 0, sizeof(live.c));
  live.on = true;
  write_file(live.last_write); /* there from the start */
  pthread_mutex_unlock(&live.lock);
  if (gp__activity_add_observer(observe, NULL) != 0) {
    pthread_mutex_lock(&live.lock);
    live.on = false;
    unlink(live.path);
    pthread_mutex_unlock(&live.lock);
  }
}

/* See sessionInt.h. */
void gp__live_stop(void) {
  pthread_mutex_lock(&live.lock);
  bool was = live.on && live.pid == getpid();
  live.on = false;
  if (was)
    unlink(live.path);
  pthread_mutex_unlock(&live.lock);
  if (was)
    gp__activity_remove_observer(observe, NULL);
}
