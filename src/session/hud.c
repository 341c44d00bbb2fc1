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
 *   GPUPERF_HUD=fps+frametime,gpu-frametime   a GL window's frame metrics
 *
 * GPUPERF_HUD=help is hud_help.c's. The HUD is a consumer of counters like
 * a session, so it sits with the sessions. Items are counter names (no
 * globs), looked up on every device that has a catalog; an item shows the
 * counter of the lowest-numbered device that reports it.
 *
 * Which processes show it. The HUD starts when the library is loaded
 * (unless the program says otherwise: gpuperf/hud.h), in every process of
 * the tree that has GPUPERF_HUD, but shows nothing until the process has a
 * device: the shells and tools a program runs stay silent, and the gpuperf
 * command line, which runs the program for `record` and `stat`, does not
 * start it for itself at all. One process per terminal draws the line
 * (hud_term.c); every process with a device writes its rows to the file.
 *
 * What it shows. On start-up the HUD enables COUNTER records, observes
 * every completed buffer, and starts periodic sampling of the named
 * counters on each device at the first tick after its catalog is
 * announced (a device a session samples by then, `gpuperf stat` or
 * `record`, is only watched: their records reach the HUD too). A thread
 * wakes at each period, flushes the activity buffers so that the period's
 * samples arrive, and shows the latest value of each item. The derived
 * `Utilization` counters (devices without hardware counters: OpenCL,
 * Vulkan) have final values only seconds later, once every record of
 * their window can have arrived; for those the HUD shows instead, at each
 * tick, the provisional busy share of the last period from the work seen
 * so far (gp__derived_provisional()). Outside a recording, where nothing
 * else asks for the work records those are computed from, the HUD enables
 * them itself.
 *
 * Where it shows it. With GPUPERF_HUD_FILE, one CSV row per period and
 * process, "time_s,pid,NAME,...", empty where an item has no value yet:
 * the first process of the run (the one whose environment has no
 * GPUPERF_HUD_T0, which it then sets for its children) creates the file
 * and writes the header; every process appends its rows, each row in one
 * write(2) on an O_APPEND descriptor, so rows of several processes never
 * mix; times are CLOCK_MONOTONIC seconds since the first process started.
 * Otherwise, when stderr is a terminal, a line of sparklines at its
 * bottom (hud_term.c); nothing otherwise.
 *
 * In a window. A library that owns a window (libgpuperf-gl.so) copies the
 * panes at each frame (gp__hud_view(), through the backend table) and
 * draws them in it; its first copy tells the HUD so, and the terminal's
 * line stops (the CSV rows go on). It also feeds each frame's swap and
 * GPU time (hud_frames.c), from which the frame metrics fps, frametime
 * and gpu-frametime come: names that need no device.
 *
 * Names are checked once a device with a catalog exists (the simulated
 * GPUs have theirs from first use on): a name no device has is reported
 * on stderr with the list of counters, and dropped; the program runs.
 * At exit an item that never had a value is named, with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/drm.h"
#include "core/hud_view.h"
#include "counters/countersInt.h"
#include "counters/derived.h"
#include "gpuperf/hud.h"
#include "counter_names.h"
#include "hudInt.h"
#include "core/thread.h"

#define MAX_ITEMS GP_HUD_VIEW_MAX_ITEMS
#define HIST GP_HUD_VIEW_HIST /* values kept per item */
#define TERM_HIST 24          /* at most shown on the terminal's line */
#define CACHE 256

/* Defined by programs that start the HUD themselves (gpuperf/hud.h). */
extern const int gp_hud_at_load __attribute__((weak));

typedef struct item {
  char name[96];
  double max; /* top of the scale, 0: automatic */
  int pane;
  int dev;      /* device whose values it shows, -1 until one reports it */
  int queue;    /* derived: -1 the device, else a queue; -2 not derived
                 (-1 for any Utilization name until a device has it) */
  bool derived; /* its values are gp__derived_provisional()'s */
  int frame;    /* a frame metric (GP__HUD_FPS...), 0 for a counter */
  bool have, ever, checked;
  bool periodic; /* it had a periodic value: per-activity ones are ignored */
  double value;
  double hist[HIST];
  uint64_t hist_t[HIST]; /* the trace time each bar was taken at */
  int nhist;
} item;

static struct {
  bool on;
  int n;
  item items[MAX_ITEMS];
  const char *names[MAX_ITEMS];
  uint64_t period_ns;
  pid_t pid;
  uint64_t t0; /* CLOCK_MONOTONIC ns: the run's start */
  const char *file;
  int csv;         /* O_APPEND descriptor, -1 until the first row */
  bool want_tty;   /* stderr is a terminal and there is no file */
  bool tty;        /* this process holds the terminal's line */
  bool root;       /* the first process of the run */
  bool shown;      /* a device to show appeared: shown from now on */
  bool ticked;     /* a period's tick showed something */
  bool window;     /* a window draws the HUD (gp__hud_view() was called) */
  uint64_t seq;    /* changes with what a view shows */
  int wake;        /* eventfd: stop, SIGWINCH */
  uint64_t ours;   /* devices the HUD started sampling */
  uint64_t failed; /* devices whose sampling failed */
  int fail_rc;
  pthread_t thread;
  pthread_mutex_t lock; /* items, the cache, the output */
  _Atomic bool stop;
  bool thread_on;
  /* (device, counter id) -> item index or -1: the observer's lookups */
  struct {
    uint32_t dev, id;
    int item;
  } cache[CACHE];
  int ncache;
  _Atomic uint64_t pending; /* devices to start sampling on */
} hud = {.lock = PTHREAD_MUTEX_INITIALIZER, .csv = -1, .wake = -1};

static uint64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

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
      if (!hud.items[i].frame && strcmp(ci.name, hud.items[i].name) == 0)
        it = i;
  if (hud.ncache < CACHE) {
    hud.cache[hud.ncache].dev = dev;
    hud.cache[hud.ncache].id = id;
    hud.cache[hud.ncache++].item = it;
  }
  return it;
}

/* The buffer observer: the latest periodic value of each item. */
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
      int i = item_of(c->device_id, c->counter_id);
      item *it = i >= 0 ? &hud.items[i] : NULL;
      /* Values per activity (a kernel's, a GL frame's) only for a counter
       * that has no periodic ones (a GL device's per-frame counters). */
      if (it && !c->correlation_id)
        it->periodic = true;
      else if (it && it->periodic)
        it = NULL;
      /* The lowest-numbered device that reports it: the samplers of
       * several devices start on one tick, and which of their first
       * records arrives first must not decide what the line shows. */
      if (it && (it->dev < 0 || (!it->derived && (int)c->device_id < it->dev)))
        it->dev = (int)c->device_id;
      /* A derived item's records are seconds old: its ticks show the
       * provisional value instead. */
      if (it && it->dev == (int)c->device_id && !it->derived) {
        it->value = c->value_type == GP_VALUE_INT64 ? (double)c->value.i64
                                                    : c->value.f64;
        it->have = it->ever = true;
      }
    }
    off += h->size;
  }
  pthread_mutex_unlock(&hud.lock);
}

/* The queue a derived counter of device dev named `name` covers: -1 for
 * `Utilization` (the device), the queue's index for `Utilization.<queue>`,
 * -2 for any other name. */
static int derived_queue(uint32_t dev, const char *name) {
  static const char base[] = "Utilization";
  if (strncmp(name, base, sizeof(base) - 1) != 0)
    return -2;
  const char *q = name + sizeof(base) - 1;
  if (*q == '\0')
    return -1;
  if (*q++ != '.')
    return -2;
  gp_device_info di;
  if (gp_device_get_info(dev, &di) != 0)
    return -2;
  for (uint32_t k = 0; k < di.num_queues; k++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(dev, k, &qi) == 0 && qi.name &&
        strcmp(qi.name, q) == 0)
      return (int)k;
  }
  return -2;
}

/* The provisional busy share of the last period, for an item whose
 * device has derived counters (the first such device that is sampled, if
 * it has none yet). Returns false when there is none now. Lock held. */
static bool provisional(item *it, uint64_t now) {
  if (now <= hud.period_ns || (it->dev >= 0 && !it->derived && it->have))
    return false; /* a device with counters of its own reports this one */
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    if (it->dev >= 0 && (uint32_t)it->dev != d)
      continue;
    int q = derived_queue(d, it->name);
    double pct;
    if (q == -2 ||
        gp__derived_provisional(d, q, now - hud.period_ns, now, &pct) != 0)
      continue;
    it->dev = (int)d;
    it->queue = q;
    it->derived = true;
    it->value = pct;
    it->have = it->ever = true;
    return true;
  }
  return false;
}

/*
 * A derived item's earlier bars, taken again: a driver that reports a
 * command only once it completed (PoCL does) makes a long kernel's
 * periods read idle while it runs; once its record arrives, the bars of
 * those periods show it. The latest value stays what was seen by now.
 * Lock held.
 */
static void revise(item *it) {
  for (int k = 0; k + 1 < it->nhist; k++) {
    uint64_t t = it->hist_t[k];
    double pct;
    if (t > hud.period_ns &&
        gp__derived_provisional((uint32_t)it->dev, it->queue, t - hud.period_ns,
                                t, &pct) == 0)
      it->hist[k] = pct;
  }
}

/* ------------------------------------------------------------------ */
/* Display                                                              */

/* The item's recent values as n bars scaled to its :MAX (else their own
 * maximum), appended to buf at *o. */
static void sparkline(char *buf, size_t *o, const item *it, int n) {
  static const char *bars[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                               "\u2585", "\u2586", "\u2587", "\u2588"};
  double m = 0;
  for (int k = 0; k < it->nhist; k++)
    m = m > it->hist[k] ? m : it->hist[k];
  double top = it->max > 0 ? it->max : m > 0 ? m : 1;
  for (int k = it->nhist > n ? it->nhist - n : 0; k < it->nhist; k++) {
    int lvl = (int)(it->hist[k] / top * 7.0 + 0.5);
    memcpy(buf + *o, bars[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl], 3);
    *o += 3;
  }
}

/* Columns a UTF-8 string takes (every character one column). */
static size_t columns(const char *s, size_t len) {
  size_t w = 0;
  for (size_t i = 0; i < len; i++)
    w += ((unsigned char)s[i] & 0xc0) != 0x80;
  return w;
}

/* The line, cut to width columns: "NAME ▁▂▃ 12.3 | NAME ..." with as
 * much history as fits. Lock held. */
static void draw_line(int width) {
  char vals[MAX_ITEMS][32];
  size_t fixed = 0;
  for (int i = 0; i < hud.n; i++) {
    const item *it = &hud.items[i];
    if (it->have)
      snprintf(vals[i], sizeof(vals[i]), "%.4g", it->value);
    else
      snprintf(vals[i], sizeof(vals[i]), "-");
    fixed +=
        (i ? 3 : 0) + columns(it->name, strlen(it->name)) + 2 + strlen(vals[i]);
  }
  int hist = hud.n && (size_t)width > fixed
                 ? (int)(((size_t)width - fixed) / (size_t)hud.n)
                 : 0;
  hist = hist > TERM_HIST ? TERM_HIST : hist;
  char buf[MAX_ITEMS * (96 + 3 * TERM_HIST + 40)];
  size_t o = 0;
  for (int i = 0; i < hud.n; i++) {
    const item *it = &hud.items[i];
    bool first = i == 0 || hud.items[i - 1].pane != it->pane;
    o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s ",
                          first ? (i ? " | " : "") : " + ", it->name);
    sparkline(buf, &o, it, hist);
    o += (size_t)snprintf(buf + o, sizeof(buf) - o, " %s", vals[i]);
  }
  /* Cut at width columns, on a character boundary. */
  size_t cut = 0, w = 0;
  while (cut < o) {
    size_t next = cut + 1;
    while (next < o && ((unsigned char)buf[next] & 0xc0) == 0x80)
      next++;
    if (++w > (size_t)width)
      break;
    cut = next;
  }
  gp__hud_term_draw(buf, cut);
}

/* Writes all of buf to fd in one write(2) where the system allows. */
static void write_whole(int fd, const char *buf, size_t len) {
  while (len) {
    ssize_t k = write(fd, buf, len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return;
    buf += k;
    len -= (size_t)k;
  }
}

/* This process's row. Lock held. */
static void write_row(void) {
  if (hud.csv < 0) {
    hud.csv = open(hud.file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (hud.csv < 0) {
      fprintf(stderr, "gpuperf: GPUPERF_HUD_FILE=%s: cannot write it: %s\n",
              hud.file, strerror(errno));
      hud.file = NULL;
      return;
    }
  }
  char row[MAX_ITEMS * 32 + 64];
  int o = snprintf(row, sizeof(row), "%.6f,%d",
                   (double)(mono_ns() - hud.t0) / 1e9, (int)hud.pid);
  for (int i = 0; i < hud.n && o < (int)sizeof(row) - 32; i++)
    o += hud.items[i].have ? snprintf(row + o, sizeof(row) - (size_t)o, ",%.9g",
                                      hud.items[i].value)
                           : snprintf(row + o, sizeof(row) - (size_t)o, ",");
  row[o++] = '\n';
  write_whole(hud.csv, row, (size_t)o);
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
    char why[512] = "";
    gp__counter_explain(it->name, false, why, sizeof(why));
    fprintf(stderr,
            "gpuperf: GPUPERF_HUD: no device has a counter named '%s'; "
            "the counters are:\n",
            it->name);
    gp_device_list_print(stderr, GP_ALL_DEVICES, 0);
    fprintf(stderr,
            "gpuperf: GPUPERF_HUD: '%s' is not a counter of any device "
            "(listed above)%s%s; it is left out\n",
            it->name, why[0] ? ": " : "", why);
    memmove(it, it + 1, (size_t)(hud.n - i - 1) * sizeof(*it));
    hud.n--;
    for (int k = 0; k < hud.n; k++)
      hud.names[k] = hud.items[k].name;
    hud.ncache = 0; /* item indexes moved */
    hud.seq++;
    i--;
  }
}

/*
 * Whether this process has something to show: a device it does GPU work
 * on (a backend registered it), or, in the run's first process only, a
 * machine-wide device (a DRM card, the host CPU) with a counter the HUD
 * names. The shells and tools of a tree under the HUD show nothing.
 */
static bool has_device_to_show(void) {
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    gp_device_info di;
    if (gp_device_get_info(d, &di) != 0)
      continue;
    if (di.api != GP_API_UNDEFINED)
      return true;
    const gp__catalog *cat = hud.root ? gp__catalog_get(d, NULL) : NULL;
    for (uint32_t k = 0; cat && k < cat->num_counters; k++)
      for (int i = 0; i < hud.n; i++)
        if (strcmp(cat->counters[k].info.name, hud.items[i].name) == 0)
          return true;
  }
  return false;
}

static void sample_device(uint32_t dev);
static void hud_exit(void);

/* One period: sampling on new devices, the period's records, the values,
 * then the row and the line. last: the exit's tick. */
static void tick(bool last) {
  uint64_t p = last ? 0 : atomic_exchange(&hud.pending, 0);
  for (uint32_t d = 0; p; d++, p >>= 1)
    if (p & 1)
      sample_device(d);
  gp_activity_flush_all(0);
  pthread_mutex_lock(&hud.lock);
  if (!hud.shown && (hud.window || has_device_to_show())) {
    hud.shown = true; /* from the first tick with a device on */
    if (hud.want_tty && !hud.window)
      hud.tty = gp__hud_term_claim(hud.wake);
    /* Again, to run before the exit handlers registered since (a
     * recording's), while what the HUD shows is still sampled. */
    if (!last)
      atexit(hud_exit);
  }
  if (!hud.shown) {
    pthread_mutex_unlock(&hud.lock);
    return;
  }
  check_names();
  hud.ticked |= !last;
  hud.seq++;
  uint64_t now = gp_get_timestamp();
  double fv[4];
  /* At exit, no frame in progress: the program stopped drawing. */
  unsigned got = gp__hud_frames_take(last ? 0 : mono_ns(), fv);
  for (int i = 0; i < hud.n; i++) {
    item *it = &hud.items[i];
    if (it->queue != -2 && !last) /* at exit: hud_exit() did it */
      provisional(it, now);
    if (it->frame && (got & 1u << it->frame)) {
      it->value = fv[it->frame];
      it->have = it->ever = true;
    }
    if (!it->have)
      continue;
    if (it->nhist == HIST) {
      memmove(it->hist, it->hist + 1, (HIST - 1) * sizeof(double));
      memmove(it->hist_t, it->hist_t + 1, (HIST - 1) * sizeof(uint64_t));
    } else {
      it->nhist++;
    }
    it->hist[it->nhist - 1] = it->value;
    it->hist_t[it->nhist - 1] = now;
    if (it->derived && !last)
      revise(it);
  }
  if (hud.file)
    write_row();
  else if (hud.tty && hud.n && !hud.window) { /* at exit too, given back
                                                 right after */
    int width = gp__hud_term_check();
    if (width > 0)
      draw_line(width);
  }
  pthread_mutex_unlock(&hud.lock);
}

/* A SIGWINCH: the region and the line for the new size, at once. */
static void redraw(void) {
  pthread_mutex_lock(&hud.lock);
  if (hud.tty && hud.n) {
    int width = gp__hud_term_check();
    if (width > 0)
      draw_line(width);
  }
  pthread_mutex_unlock(&hud.lock);
}

/* See hudInt.h. */
void gp__hud_tick(void) {
  tick(false);
}

/*
 * The backend table's hud_view (core/hud_view.h): copies the panes into
 * *v under the lock. Returns 0, GP_ENOENT when the HUD does not run in
 * this process, GP_EINVAL when v->size is not sizeof(*v) (v unchanged).
 * The first call marks the process as one with a window: the HUD shows
 * from then on, and the terminal's line is given back.
 */
static int hud_view(gp_hud_view *v) {
  if (!v || v->size != sizeof(*v))
    return GP_EINVAL;
  pthread_mutex_lock(&hud.lock);
  if (!hud.on || getpid() != hud.pid) {
    pthread_mutex_unlock(&hud.lock);
    return GP_ENOENT;
  }
  if (!hud.window) {
    hud.window = true;
    hud.want_tty = false;
    if (hud.tty)
      gp__hud_term_release();
    hud.tty = false;
  }
  v->num_items = (uint32_t)hud.n;
  v->num_panes = hud.n ? (uint32_t)hud.items[hud.n - 1].pane + 1 : 0;
  v->reserved = 0;
  v->seq = hud.seq;
  int pane = -1, panes = 0;
  for (int i = 0; i < hud.n; i++) {
    const item *it = &hud.items[i];
    gp_hud_view_item *o = &v->items[i];
    if (it->pane != pane) /* panes renumbered: dropped names leave gaps */
      pane = it->pane, panes++;
    snprintf(o->name, sizeof(o->name), "%s", it->name);
    o->pane = (uint32_t)(panes - 1);
    o->flags = (it->have ? GP_HUD_VIEW_HAVE : 0u) |
               (it->max > 0 ? GP_HUD_VIEW_FIXED : 0u);
    o->value = it->have ? it->value : 0;
    double top = 0;
    for (int k = 0; k < it->nhist; k++)
      top = it->hist[k] > top ? it->hist[k] : top;
    o->top = it->max > 0 ? it->max : top > 0 ? top : 1;
    o->num_hist = (uint32_t)it->nhist;
    o->reserved = 0;
    memcpy(o->hist, it->hist, (size_t)it->nhist * sizeof(double));
  }
  v->num_panes = (uint32_t)panes;
  pthread_mutex_unlock(&hud.lock);
  return 0;
}

static const gp__hud_hooks hooks = {.view = hud_view,
                                    .feed = gp__hud_frames_feed};

static void *thread_main(void *arg) {
  (void)arg;
  uint64_t next = mono_ns() + hud.period_ns;
  while (!atomic_load(&hud.stop)) {
    uint64_t now = mono_ns();
    if (now >= next) {
      tick(false);
      next += hud.period_ns;
      if (next <= now) /* late (a stopped process): skip what was missed */
        next = now + hud.period_ns;
      continue;
    }
    struct pollfd pfd = {.fd = hud.wake, .events = POLLIN};
    int ms = (int)((next - now + 999999) / 1000000);
    if (poll(&pfd, 1, ms) > 0 && (pfd.revents & POLLIN)) {
      uint64_t v;
      if (read(hud.wake, &v, sizeof(v)) < 0) {
        /* drained by an earlier read */
      }
      if (!atomic_load(&hud.stop))
        redraw();
    }
  }
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
  c.counter_period_ns = gp__catalog_period(cat, hud.period_ns);
  c.counter_ids = ids;
  c.num_counter_ids = n;
  int rc = gp_counters_start(dev, &c);
  if (rc == 0) {
    hud.ours |= 1ull << dev;
  } else if (rc != GP_EBUSY) { /* EBUSY: a session samples it: watch */
    hud.failed |= 1ull << dev;
    hud.fail_rc = rc;
    fprintf(stderr, "gpuperf: GPUPERF_HUD: cannot sample device %u: %s\n", dev,
            gp_strerror(rc));
  }
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

/* Says why an item never had a value. Lock held. */
static void report_silent(const item *it) {
  char why[256];
  if (!hud.ticked || (!hud.file && !hud.tty && !hud.window))
    return; /* nothing was shown, nor expected */
  if (it->frame == GP__HUD_GPU_FRAMETIME)
    snprintf(why, sizeof(why),
             "no GPU frame time was fed (it comes from the GL library's "
             "timer queries, libgpuperf-gl.so)");
  else if (it->frame)
    snprintf(why, sizeof(why),
             "no frame was shown (frame metrics come from the swaps of a GL "
             "window, through libgpuperf-gl.so)");
  else if (hud.failed && it->dev < 0)
    snprintf(why, sizeof(why), "sampling failed (%s)",
             gp_strerror(hud.fail_rc));
  else if (it->dev >= 0)
    snprintf(why, sizeof(why),
             "device %d has it, but no sample of it reached the HUD (is a "
             "session sampling it with a period longer than the run?)",
             it->dev);
  else
    snprintf(why, sizeof(why),
             "no device of this process sampled it (the devices that have "
             "it were not used)");
  fprintf(stderr, "gpuperf: GPUPERF_HUD: '%s' had no value in process %d: %s\n",
          it->name, (int)hud.pid, why);
}

/* At exit: the last, partial window, the last row, the terminal back. */
static void hud_exit(void) {
  if (!hud.on || getpid() != hud.pid)
    return;
  gp__hud_set_hooks(NULL);
  pthread_mutex_lock(&hud.lock);
  hud.on = false; /* under the lock: a view in progress ends first */
  pthread_mutex_unlock(&hud.lock);
  gp__counters_remove_device_hook(on_device);
  if (hud.thread_on) {
    atomic_store(&hud.stop, true);
    uint64_t one = 1;
    if (write(hud.wake, &one, sizeof(one)) < 0) {
      /* the counter is full: the thread is awake */
    }
    pthread_join(hud.thread, NULL);
  }
  /* The derived values of the last, partial period, while their devices
   * are still sampled (unknown where they are not any more). */
  pthread_mutex_lock(&hud.lock);
  uint64_t now = gp_get_timestamp();
  for (int i = 0; i < hud.n; i++) {
    item *it = &hud.items[i];
    if (it->queue != -2 && !provisional(it, now) && it->derived)
      it->have = false;
  }
  pthread_mutex_unlock(&hud.lock);
  for (uint32_t d = 0; d < 64; d++)
    if (hud.ours & (1ull << d))
      gp_counters_stop(d);
  tick(true);
  gp__hud_term_release();
  gp__hud_term_unhook();
  gp__activity_remove_observer(observe, NULL);
  pthread_mutex_lock(&hud.lock);
  for (int i = 0; i < hud.n; i++)
    if (!hud.items[i].ever)
      report_silent(&hud.items[i]);
  if (hud.csv >= 0)
    close(hud.csv);
  hud.csv = -1;
  pthread_mutex_unlock(&hud.lock);
}

/* On a fatal signal or _exit (core/death.c): the terminal back, which is
 * all that cannot wait for exit(). Async-signal-safe. */
static void hud_finish(void) {
  if (getpid() == hud.pid)
    gp__hud_term_release();
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
      hud.n = 0;
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
    it->queue = strncmp(it->name, "Utilization", 11) == 0 ? -1 : -2;
    it->frame = gp__hud_frame_metric(it->name);
    if (it->frame) {
      it->queue = -2;
      it->checked = true; /* no device has it: none is asked */
    }
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

/*
 * The run's clock and file: the first process of the run (no
 * GPUPERF_HUD_T0 in its environment) takes its start as the run's, tells
 * its children, and creates the file with its header; the others use the
 * run's start and append.
 */
static void start_run(void) {
  const char *t0 = getenv("GPUPERF_HUD_T0");
  char *end = NULL;
  uint64_t v = t0 && *t0 ? strtoull(t0, &end, 10) : 0;
  uint64_t now = mono_ns();
  if (v && end && *end == '\0' && v <= now) {
    hud.t0 = v;
    return;
  }
  hud.t0 = now;
  hud.root = true;
  char buf[32];
  snprintf(buf, sizeof(buf), "%llu", (unsigned long long)now);
  setenv("GPUPERF_HUD_T0", buf, 1);
  if (!hud.file)
    return;
  int fd =
      open(hud.file, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "gpuperf: GPUPERF_HUD_FILE=%s: cannot write it: %s\n",
            hud.file, strerror(errno));
    hud.file = NULL;
    return;
  }
  char head[MAX_ITEMS * 100 + 16];
  size_t o = (size_t)snprintf(head, sizeof(head), "time_s,pid");
  for (int i = 0; i < hud.n; i++)
    o += (size_t)snprintf(head + o, sizeof(head) - o, ",%s", hud.items[i].name);
  head[o++] = '\n';
  write_whole(fd, head, o);
  hud.csv = fd;
}

/* Whether something in this process records its GPU work already (a
 * recording, the Perfetto producer, `gpuperf stat`): the HUD then takes
 * the work records that come, and enables none of its own. */
static bool recorded(void) {
  static const char *const vars[] = {"GPUPERF_RECORD_DIR", "GPUPERF_PRODUCER",
                                     "GPUPERF_STAT_DIR"};
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
    const char *v = getenv(vars[i]);
    if (v && *v)
      return true;
  }
  return false;
}

/* See gpuperf/hud.h. */
int gp_hud_start_from_env(void) {
  const char *v = getenv("GPUPERF_HUD");
  if (!v || !*v)
    return GP_ENOENT;
  if (strcmp(v, "help") == 0) {
    int rc = gp_hud_help_print(stdout);
    fflush(stdout);
    exit(rc == 0 ? 0 : 1);
  }
  if (hud.on || hud.n)
    return GP_ESTATE;
  if (!parse(v))
    return GP_EINVAL;
  const char *per = getenv("GPUPERF_HUD_PERIOD_MS");
  uint64_t ms = per && *per ? strtoull(per, NULL, 10) : 250;
  hud.period_ns = (ms ? ms : 250) * 1000000ull;
  const char *file = getenv("GPUPERF_HUD_FILE");
  hud.file = file && *file ? file : NULL;
  hud.want_tty = !hud.file && isatty(2);
  hud.pid = getpid();
  start_run();
  /* With nowhere to show it (no terminal, no file), the HUD still runs:
   * a name no device has is reported all the same. */
  hud.wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (gp__activity_add_observer(observe, NULL) != 0) {
    fprintf(stderr, "gpuperf: GPUPERF_HUD: cannot observe activity records\n");
    return GP_ENOSPC;
  }
  gp_activity_enable(GP_ACTIVITY_KIND_COUNTER);
  bool derived = false;
  for (int i = 0; i < hud.n; i++)
    derived |= hud.items[i].queue != -2;
  if (derived && !recorded()) {
    /* The work the derived Utilization is computed from; from the start:
     * the OpenCL preload registers no device and follows no command
     * while no kind of work is enabled. */
    gp_activity_enable(GP_ACTIVITY_KIND_KERNEL);
    gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY);
    gp_activity_enable(GP_ACTIVITY_KIND_MEMSET);
    gp_activity_enable(GP_ACTIVITY_KIND_RENDER_STAGE);
  }
  hud.on = true;
  gp__hud_set_hooks(&hooks);
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
  if (hud.wake >= 0 &&
      gp__thread_start(&hud.thread, NULL, thread_main, NULL) == 0)
    hud.thread_on = true;
  gp__death_add_finisher(hud_finish);
  gp__death_watch();
  atexit(hud_exit);
  return 0;
}

__attribute__((constructor)) static void hud_load(void) {
  if (&gp_hud_at_load && gp_hud_at_load == 0)
    return; /* the program starts it where it wants it */
  gp_hud_start_from_env();
}
