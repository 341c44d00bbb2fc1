/*
 * hud.c - GPUPERF_HUD=<counters>: a live display of counters in any
 * program that loads libgpuperf, the way GALLIUM_HUD shows Mesa's.
 *
 *   GPUPERF_HUD=Utilization                one pane
 *   GPUPERF_HUD=Utilization,cycle-count    two panes (',' starts a pane)
 *   GPUPERF_HUD=a+b:100                    a and b share a pane; ':N' sets
 *                                          the top of an item's scale
 *   GPUPERF_HUD_PERIOD_MS=N                refresh and sampling period
 *                                          (default 250)
 *   GPUPERF_HUD_FILE=PATH                  CSV rows instead of the line
 *
 * GPUPERF_HUD=help is src/counters/list.c's. The HUD is a consumer of
 * counters like a session, so it sits with the sessions: it reaches the
 * counters layer and the DRM devices of src/backend/linux. Items are counter
 * names (no globs), looked up on every device that has a catalog; an item shows
 * the counter of the first device that reports it. On start-up the HUD enables
 * COUNTER records, observes every completed buffer, and starts periodic
 * sampling of the named counters on each device at the first tick after its
 * catalog is announced (a device a session samples by then, `gpuperf
 * stat` or `record`, is only watched: their records reach the HUD too).
 * A thread wakes at each period, flushes the activity buffers so that the
 * period's samples arrive, and shows the latest value of each item: one
 * line of sparklines on stderr, redrawn in place, when stderr is a
 * terminal; one CSV row per period to GPUPERF_HUD_FILE when it is set
 * ("time_s,ITEM,..."; empty where an item has no value yet); nothing
 * otherwise.
 *
 * Names are checked once a device with a catalog exists (the simulated
 * GPUs have theirs from first use on): a name no device has is reported
 * on stderr with the list of counters, and dropped; the program runs.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/drm.h"
#include "counters/countersInt.h"
#include "counters/derived.h"

#define MAX_ITEMS 16
#define HIST 24
#define CACHE 256

typedef struct item {
  char name[96];
  double max; /* top of the scale, 0: automatic */
  int pane;
  int dev; /* device whose values it shows, -1 until one reports it */
  bool have, checked;
  double value;
  double hist[HIST];
  int nhist;
} item;

static struct {
  bool on;
  int n;
  item items[MAX_ITEMS];
  const char *names[MAX_ITEMS];
  uint64_t period_ns;
  bool tty;
  FILE *csv;
  pid_t pid;
  uint64_t t0;
  pthread_t thread;
  pthread_mutex_t lock; /* items and the cache */
  pthread_cond_t cond;
  bool stop, thread_on, header;
  /* (device, counter id) -> item index or -1: the observer's lookups */
  struct {
    uint32_t dev, id;
    int item;
  } cache[CACHE];
  int ncache;
  _Atomic uint64_t pending; /* devices to start sampling on */
} hud = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------------------ */
/* Values                                                               */

static int item_of(uint32_t dev, uint32_t id) {
  for (int i = 0; i < hud.ncache; i++)
    if (hud.cache[i].dev == dev && hud.cache[i].id == id)
      return hud.cache[i].item;
  gp_counter_info ci;
  int it = -1;
  if (gp_counter_lookup(dev, id, &ci) == 0)
    for (int i = 0; i < hud.n && it < 0; i++)
      if (strcmp(ci.name, hud.items[i].name) == 0)
        it = i;
  if (hud.ncache < CACHE) {
    hud.cache[hud.ncache].dev = dev;
    hud.cache[hud.ncache].id = id;
    hud.cache[hud.ncache++].item = it;
  }
  return it;
}

static void observe(void *user, const uint8_t *buf, size_t size) {
  (void)user;
  pthread_mutex_lock(&hud.lock);
  for (size_t off = 0; off + sizeof(gp_activity) <= size;) {
    const gp_activity *h = (const gp_activity *)(buf + off);
    if (h->size < sizeof(*h) || h->size > size - off)
      break; /* defensive: a malformed buffer */
    if (h->kind == GP_ACTIVITY_KIND_COUNTER &&
        h->size >= sizeof(gp_activity_counter)) {
      const gp_activity_counter *c = (const void *)h;
      int i = c->correlation_id ? -1 : item_of(c->device_id, c->counter_id);
      item *it = i >= 0 ? &hud.items[i] : NULL;
      if (it && it->dev < 0)
        it->dev = (int)c->device_id;
      if (it && it->dev == (int)c->device_id) {
        it->value = c->value_type == GP_VALUE_INT64 ? (double)c->value.i64
                                                    : c->value.f64;
        it->have = true;
      }
    }
    off += h->size;
  }
  pthread_mutex_unlock(&hud.lock);
}

/* ------------------------------------------------------------------ */
/* Display                                                              */

/* The item's recent values as bars scaled to its :MAX (else their own
 * maximum). */
static void sparkline(FILE *out, const item *it) {
  static const char *bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                               "\u2585", "\u2586", "\u2587", "\u2588"};
  double m = 0;
  for (int k = 0; k < it->nhist; k++)
    m = m > it->hist[k] ? m : it->hist[k];
  double top = it->max > 0 ? it->max : m > 0 ? m : 1;
  for (int k = 0; k < it->nhist; k++) {
    int lvl = (int)(it->hist[k] / top * 7.0 + 0.5);
    fputs(bars[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl], out);
  }
}

static void draw_line(void) {
  fputs("\r\033[K", stderr);
  for (int i = 0; i < hud.n; i++) {
    const item *it = &hud.items[i];
    bool first = i == 0 || hud.items[i - 1].pane != it->pane;
    fputs(first ? (i ? " | " : "") : " + ", stderr);
    fprintf(stderr, "%s ", it->name);
    sparkline(stderr, it);
    if (it->have)
      fprintf(stderr, " %.4g", it->value);
    else
      fputs(" -", stderr);
  }
  fflush(stderr);
}

static void write_row(double t) {
  if (!hud.header) {
    fputs("time_s", hud.csv);
    for (int i = 0; i < hud.n; i++)
      fprintf(hud.csv, ",%s", hud.items[i].name);
    fputc('\n', hud.csv);
    hud.header = true;
  }
  fprintf(hud.csv, "%.3f", t);
  for (int i = 0; i < hud.n; i++) {
    if (hud.items[i].have)
      fprintf(hud.csv, ",%.9g", hud.items[i].value);
    else
      fputc(',', hud.csv);
  }
  fputc('\n', hud.csv);
  fflush(hud.csv);
}

/* Reports names no device has, once some device has a catalog. Lock
 * held. */
static void check_names(void) {
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  bool any = false;
  for (uint32_t d = 0; d < ndev && !any; d++)
    any = gp__catalog_get(d, NULL) != NULL;
  if (!any)
    return;
  for (int i = 0; i < hud.n; i++) {
    item *it = &hud.items[i];
    if (it->checked)
      continue;
    it->checked = true;
    bool found = false;
    for (uint32_t d = 0; d < ndev && !found; d++) {
      const gp__catalog *cat = gp__catalog_get(d, NULL);
      for (uint32_t k = 0; cat && k < cat->num_counters && !found; k++)
        found = strcmp(cat->counters[k].info.name, it->name) == 0;
    }
    if (found)
      continue;
    fprintf(stderr,
            "%sgpuperf: GPUPERF_HUD: no device has a counter named '%s'; "
            "the counters are:\n",
            hud.tty ? "\r\033[K" : "", it->name);
    gp_device_list_print(stderr, GP_ALL_DEVICES, 0);
    fprintf(stderr,
            "gpuperf: GPUPERF_HUD: '%s' is not a counter of any device "
            "(listed above); it is left out\n",
            it->name);
    memmove(it, it + 1, (size_t)(hud.n - i - 1) * sizeof(*it));
    hud.n--;
    hud.ncache = 0; /* item indexes moved */
    i--;
  }
}

static void sample_device(uint32_t dev);

static void tick(bool last) {
  uint64_t p = last ? 0 : atomic_exchange(&hud.pending, 0);
  for (uint32_t d = 0; p; d++, p >>= 1)
    if (p & 1)
      sample_device(d);
  gp_activity_flush_all(0);
  pthread_mutex_lock(&hud.lock);
  check_names();
  for (int i = 0; i < hud.n; i++) {
    item *it = &hud.items[i];
    if (!it->have)
      continue;
    if (it->nhist == HIST)
      memmove(it->hist, it->hist + 1, (HIST - 1) * sizeof(double));
    else
      it->nhist++;
    it->hist[it->nhist - 1] = it->value;
  }
  if (hud.csv)
    write_row((double)(gp_get_timestamp() - hud.t0) / 1e9);
  else if (hud.tty && hud.n) {
    draw_line();
    if (last)
      fputc('\n', stderr);
  }
  pthread_mutex_unlock(&hud.lock);
}

static void *thread_main(void *arg) {
  (void)arg;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  pthread_mutex_lock(&hud.lock);
  while (!hud.stop) {
    uint64_t ns = (uint64_t)next.tv_nsec + hud.period_ns;
    next.tv_sec += (time_t)(ns / 1000000000ull);
    next.tv_nsec = (long)(ns % 1000000000ull);
    int rc = 0;
    while (!hud.stop && rc == 0)
      rc = pthread_cond_timedwait(&hud.cond, &hud.lock, &next);
    if (hud.stop)
      break;
    pthread_mutex_unlock(&hud.lock);
    tick(false);
    pthread_mutex_lock(&hud.lock);
  }
  pthread_mutex_unlock(&hud.lock);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Start and exit                                                       */

/* Starts sampling on device dev (called from the HUD's thread). */
static void sample_device(uint32_t dev) {
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  if (!cat)
    return;
  uint32_t ids[GP_PERFMON_MAX_COUNTERS];
  size_t n = 0;
  if (gp__catalog_select(cat, hud.names, (size_t)hud.n, true, ids,
                         GP_PERFMON_MAX_COUNTERS, &n) != 0 ||
      n == 0)
    return;
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = hud.period_ns;
  if (c.counter_period_ns < cat->min_period_ns)
    c.counter_period_ns = cat->min_period_ns;
  if (c.counter_period_ns > cat->max_period_ns)
    c.counter_period_ns = cat->max_period_ns;
  c.counter_ids = ids;
  c.num_counter_ids = n;
  int rc = gp_counters_start(dev, &c);
  if (rc != 0 && rc != GP_EBUSY) /* EBUSY: a session samples it: watch */
    fprintf(stderr, "gpuperf: GPUPERF_HUD: cannot sample device %u: %s\n", dev,
            gp_strerror(rc));
}

/*
 * A device with a catalog: sampled from the next tick on, so that a
 * session that starts on the same announcement (`gpuperf stat`, `gpuperf
 * record`) samples it as it asks and the HUD only watches its records.
 */
static void on_device(uint32_t dev) {
  if (dev < 64)
    atomic_fetch_or(&hud.pending, 1ull << dev);
}

static void hud_exit(void) {
  if (!hud.on || getpid() != hud.pid)
    return;
  hud.on = false;
  gp__counters_remove_device_hook(on_device);
  if (hud.thread_on) {
    pthread_mutex_lock(&hud.lock);
    hud.stop = true;
    pthread_cond_signal(&hud.cond);
    pthread_mutex_unlock(&hud.lock);
    pthread_join(hud.thread, NULL);
  }
  /* The last, partial window, then the last row or line. */
  gp_counters_stop(GP_ALL_DEVICES);
  tick(true);
  gp__activity_remove_observer(observe, NULL);
  if (hud.csv)
    fclose(hud.csv);
  hud.csv = NULL;
}

/* Parses "a+b:100,c" into items; false (with a message) if malformed. */
static bool parse(const char *spec) {
  int pane = 0;
  for (const char *p = spec; *p;) {
    size_t len = strcspn(p, "+,");
    if (len == 0 || hud.n == MAX_ITEMS) {
      fprintf(stderr,
              "gpuperf: GPUPERF_HUD=%s: %s; the syntax is "
              "NAME[:MAX][+NAME...][,NAME...] (GPUPERF_HUD=help lists the "
              "names)\n",
              spec, len ? "too many counters" : "empty counter name");
      return false;
    }
    item *it = &hud.items[hud.n];
    memset(it, 0, sizeof(*it));
    it->dev = -1;
    it->pane = pane;
    const char *colon = memchr(p, ':', len);
    size_t nl = colon ? (size_t)(colon - p) : len;
    if (nl >= sizeof(it->name))
      nl = sizeof(it->name) - 1;
    memcpy(it->name, p, nl);
    if (colon)
      it->max = strtod(colon + 1, NULL);
    hud.names[hud.n] = it->name;
    hud.n++;
    p += len;
    if (*p == ',')
      pane++;
    if (*p)
      p++;
  }
  return hud.n > 0;
}

__attribute__((constructor)) static void hud_start(void) {
  const char *v = getenv("GPUPERF_HUD");
  if (!v || !*v || strcmp(v, "help") == 0)
    return; /* help: list.c */
  if (!parse(v))
    return;
  const char *per = getenv("GPUPERF_HUD_PERIOD_MS");
  uint64_t ms = per && *per ? strtoull(per, NULL, 10) : 250;
  hud.period_ns = (ms ? ms : 250) * 1000000ull;
  const char *file = getenv("GPUPERF_HUD_FILE");
  if (file && *file) {
    hud.csv = fopen(file, "w");
    if (!hud.csv) {
      fprintf(stderr, "gpuperf: GPUPERF_HUD_FILE=%s: cannot write it\n", file);
      return;
    }
  } else {
    hud.tty = isatty(2);
  }
  hud.pid = getpid();
  hud.t0 = gp_get_timestamp();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&hud.cond, &ca);
  pthread_condattr_destroy(&ca);
  if (gp__activity_add_observer(observe, NULL) != 0) {
    fprintf(stderr, "gpuperf: GPUPERF_HUD: cannot observe activity records\n");
    return;
  }
  gp_activity_enable(GP_ACTIVITY_KIND_COUNTER);
  hud.on = true;
  if (gp__counters_add_device_hook(on_device) != 0)
    fprintf(stderr, "gpuperf: GPUPERF_HUD: cannot follow new devices\n");
  const char *drm = getenv("GPUPERF_DRM");
  if (!drm || strcmp(drm, "0") != 0)
    gp__drm_devices_register();
  gp__derived_enable();
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++)
    on_device(d);
  if (pthread_create(&hud.thread, NULL, thread_main, NULL) == 0)
    hud.thread_on = true;
  atexit(hud_exit);
}
