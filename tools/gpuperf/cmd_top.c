/*
 * cmd_top.c - `gpuperf top`: a live view of the machine's GPUs, like
 * nvtop or intel_gpu_top, refreshed every -d seconds:
 *
 *   - every DRM card with its frequency, power, temperature, fan and VRAM
 *     where the kernel shows them (gpuperf/drm.h);
 *   - every process with DRM clients: per-engine busy % over the last
 *     interval (two fdinfo readings) and its DRM memory;
 *   - every process recording with gpuperf (`gpuperf record`): over its
 *     last interval, its devices' busy share, its top kernels and queues
 *     by their time within the interval, and the latest values of the
 *     counters it samples, read from the region of shared memory it
 *     rewrites in place in gp_live_dir() (gpuperf/live.h), without
 *     stopping it. Regions whose process is gone are removed.
 *
 * On a terminal the screen is redrawn in place and `q` quits (the
 * terminal is in cbreak mode meanwhile: top_screen.c); otherwise (or with
 * --once / --iterations) plain blocks are printed one after the other.
 * Every line fits the terminal's width (80 columns when not a terminal).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "top_screen.h"

#define MAX_CLIENTS 256
#define TOP_KERNELS 10

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static void top_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf top [-d SECS] [--once | -n N | --iterations N]\n\n"
          "A live view of the GPUs: DRM cards (frequency, power, temperature,\n"
          "fan, VRAM), per-process engine use from DRM fdinfo, and, for\n"
          "processes recorded by gpuperf, each device's busy share, the top\n"
          "kernels and queues by their GPU time within the last interval,\n"
          "and the counters' latest values. Redraws the screen on a\n"
          "terminal (quit with q or Ctrl-C); prints plain blocks otherwise.\n"
          "Lines fit the terminal's width (80 columns, or $COLUMNS, when\n"
          "not a terminal).\n\n"
          "  -d SECS            refresh period (default 1, at least 0.1)\n"
          "  --once             print one view and exit (after one period,\n"
          "                     so that busy %% can be computed)\n"
          "  -n, --iterations N print N views and exit\n");
}

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t boot_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A share of an interval in percent, "-" when there is no interval. */
static const char *pct(char *buf, size_t size, uint64_t ns, double interval) {
  if (interval <= 0)
    snprintf(buf, size, "-");
  else
    snprintf(buf, size, "%.1f%%", 100.0 * (double)ns / interval);
  return buf;
}

/* ------------------------------------------------------------------ */
/* DRM                                                                  */

static gp_drm_client prev[MAX_CLIENTS], cur[MAX_CLIENTS];
static size_t nprev, ncur;
static uint64_t prev_ns;

static const gp_drm_client *find_prev(const gp_drm_client *c) {
  for (size_t i = 0; i < nprev; i++)
    if (prev[i].pid == c->pid && prev[i].client_id == c->client_id &&
        strcmp(prev[i].driver, c->driver) == 0)
      return &prev[i];
  return NULL;
}

static void show_gpus(void) {
  gp_drm_gpu g[16];
  size_t n = 0;
  gp_drm_gpus(g, 16, &n);
  top_line("GPUs (DRM)");
  if (n == 0)
    top_line("  no DRM card under /sys/class/drm");
  for (size_t i = 0; i < n; i++) {
    char a[32], b[32];
    top_fields_begin(9, "  %-6s %-8s %-14s", g[i].card, g[i].driver, g[i].pdev);
    if (!isnan(g[i].freq_mhz))
      top_field("  %.0f MHz", g[i].freq_mhz);
    if (!isnan(g[i].power_w))
      top_field("  %.1f W", g[i].power_w);
    if (!isnan(g[i].temp_c))
      top_field("  %.1f C", g[i].temp_c);
    if (!isnan(g[i].fan_rpm))
      top_field("  %.0f RPM", g[i].fan_rpm);
    if (!isnan(g[i].vram_used))
      top_field("  VRAM %s / %s", cli_fmt_bytes(a, sizeof(a), g[i].vram_used),
                isnan(g[i].vram_total)
                    ? "?"
                    : cli_fmt_bytes(b, sizeof(b), g[i].vram_total));
    top_fields_end();
  }
}

static void show_clients(uint64_t now) {
  ncur = 0;
  gp_drm_clients(cur, MAX_CLIENTS, &ncur);
  uint64_t wall = prev_ns ? now - prev_ns : 0;
  top_line("%s", "");
  top_line("Processes on DRM engines (fdinfo, busy %% over %.1f s)",
           (double)wall / 1e9);
  if (ncur == 0)
    top_line("  none readable");
  for (size_t i = 0; i < ncur; i++) {
    const gp_drm_client *c = &cur[i], *p = find_prev(c);
    char m[32];
    top_fields_begin(10, "  %7u %-16.16s %-8s client %-4llu mem %s", c->pid,
                     c->comm, c->driver, (unsigned long long)c->client_id,
                     cli_fmt_bytes(m, sizeof(m), (double)c->mem_total));
    for (uint32_t e = 0; e < c->num_engines; e++) {
      double busy = wall ? gp_drm_engine_busy(p, c, e, wall) : -1;
      if (busy < 0)
        top_field(" %s -", c->engines[e].name);
      else
        top_field(" %s %.1f%%", c->engines[e].name, busy);
    }
    top_fields_end();
  }
  memcpy(prev, cur, ncur * sizeof(cur[0]));
  nprev = ncur;
  prev_ns = now;
}

/* ------------------------------------------------------------------ */
/* Recorded processes                                                   */

/* Column widths of the tables of a recorded process at the screen's
 * width: a name column and a device column share what the figures
 * leave. */
typedef struct cols {
  int name, dev;
} cols;

static cols layout(int fixed) {
  int w = top_screen_width() - 4 - fixed; /* indent and figures */
  cols c;
  c.dev = w >= 60 ? 24 : w * 3 / 8;
  c.name = w - c.dev - 1;
  if (c.name > 64) { /* a wide screen: device names in full first */
    c.dev += c.name - 64;
    c.name = 64;
    if (c.dev > 47)
      c.dev = 47;
  }
  return c;
}

static void show_devices(const gp_live_snapshot *s, double interval,
                         bool *assumed) {
  /* NAME BUSY REPORTED IN-FLIGHT: 4 + name + 8 + 10 + 17 */
  int nw = top_screen_width() - 4 - 8 - 10 - 17;
  if (nw > 47)
    nw = 47; /* gp_live_device.name's longest */
  char a[16], b[16], f[32];
  top_line("    %-*s %6s  %9s  %s", nw, "DEVICE", "BUSY", "REPORTED",
           "IN FLIGHT");
  for (uint32_t i = 0; i < s->num_devices; i++) {
    const gp_live_device *d = &s->devices[i];
    if (d->in_flight)
      snprintf(f, sizeof(f), "%u (%.1f s)", d->in_flight,
               s->time_ns > d->in_flight_since_ns
                   ? (double)(s->time_ns - d->in_flight_since_ns) / 1e9
                   : 0.0);
    else
      snprintf(f, sizeof(f), "-");
    pct(a, sizeof(a), d->busy_ns + d->assumed_ns, interval);
    *assumed = *assumed || d->assumed_ns;
    top_line("    %-*.*s %6s%c %9s  %s", nw, nw, d->name, a,
             d->assumed_ns ? '*' : ' ', pct(b, sizeof(b), d->busy_ns, interval),
             f);
  }
}

static void show_kernels(const gp_live_snapshot *s, double interval) {
  /* NAME DEVICE LAUNCHES GPU-TIME BUSY: 9 + 11 + 7 */
  cols c = layout(9 + 11 + 7);
  char t[32], b[16];
  uint32_t in_flight = s->in_flight_unplaced;
  for (uint32_t i = 0; i < s->num_devices; i++)
    in_flight += s->devices[i].in_flight;
  if (s->num_kernels == 0 && in_flight == 0) {
    top_line("    no kernel ran in the last interval");
    return;
  }
  top_line("    %-*s %-*s %8s %10s %6s", c.name, "KERNEL", c.dev, "DEVICE",
           "LAUNCHES", "GPU TIME", "BUSY");
  uint32_t shown = 0;
  for (uint32_t i = 0; i < s->num_kernels && shown < TOP_KERNELS; i++) {
    const gp_live_kernel *k = &s->kernels[i];
    top_line("    %-*.*s %-*.*s %8llu %10s %6s", c.name, c.name, k->name, c.dev,
             c.dev, k->device, (unsigned long long)k->launches,
             cli_fmt_ns(t, sizeof(t), (double)k->gpu_ns),
             pct(b, sizeof(b), k->busy_ns, interval));
    shown++;
  }
  /* What is running and not reported yet: its name is not known. */
  for (uint32_t i = 0; i < s->num_devices; i++) {
    const gp_live_device *d = &s->devices[i];
    if (!d->in_flight)
      continue;
    top_line("    %-*.*s %-*.*s %8u %10s %6s", c.name, c.name, "(in flight)",
             c.dev, c.dev, d->name, d->in_flight,
             cli_fmt_ns(t, sizeof(t), (double)d->assumed_ns),
             pct(b, sizeof(b), d->assumed_ns, interval));
  }
  if (s->in_flight_unplaced)
    top_wrap(6, "    %u launches in flight on a device that cannot be told",
             s->in_flight_unplaced);
  uint32_t more = s->num_kernels - shown + s->kernels_left_out;
  if (more)
    top_line("    (%u more kernel%s)", more, more == 1 ? "" : "s");
}

static void show_queues(const gp_live_snapshot *s, double interval) {
  /* Only where a device has several queues: one queue's busy time is
   * its device's. */
  bool several = false;
  for (uint32_t i = 0; i < s->num_queues && !several; i++)
    for (uint32_t j = i + 1; j < s->num_queues && !several; j++)
      several = !strcmp(s->queues[i].device, s->queues[j].device);
  if (!several)
    return;
  cols c = layout(9 + 11 + 7);
  char t[32], b[16];
  top_line("    %-*s %-*s %8s %10s %6s", c.name, "QUEUE", c.dev, "DEVICE", "",
           "BUSY TIME", "BUSY");
  for (uint32_t i = 0; i < s->num_queues && i < 8; i++) {
    const gp_live_queue *q = &s->queues[i];
    top_line("    %-*.*s %-*.*s %8s %10s %6s", c.name, c.name, q->name, c.dev,
             c.dev, q->device, "", cli_fmt_ns(t, sizeof(t), (double)q->busy_ns),
             pct(b, sizeof(b), q->busy_ns, interval));
  }
}

static int by_device_name(const void *x, const void *y) {
  const gp_live_counter *a = x, *b = y;
  int c = strcmp(a->device, b->device);
  return c ? c : strcmp(a->name, b->name);
}

static void show_counters(gp_live_snapshot *s) {
  if (!s->num_counters)
    return;
  qsort(s->counters, s->num_counters, sizeof(s->counters[0]), by_device_name);
  /* NAME DEVICE VALUE AGE: 13 + 9 */
  cols c = layout(13 + 9);
  char v[32], age[32];
  top_line("    %-*s %-*s %12s %8s", c.name, "COUNTER", c.dev, "DEVICE",
           "VALUE", "AGE");
  for (uint32_t i = 0; i < s->num_counters && i < 12; i++) {
    const gp_live_counter *k = &s->counters[i];
    if (k->time_ns && s->time_ns >= k->time_ns)
      snprintf(age, sizeof(age), "%.1f s",
               (double)(s->time_ns - k->time_ns) / 1e9);
    else
      snprintf(age, sizeof(age), "-");
    top_line("    %-*.*s %-*.*s %12s %8s", c.name, c.name, k->name, c.dev,
             c.dev, k->device, top_fmt_value(v, sizeof(v), k->value, k->unit),
             age);
  }
}

static void show_one(const char *path, uint64_t now) {
  static gp_live_snapshot snap;
  uint32_t pid = 0;
  if (gp_live_owner_alive(path) != 1 || gp_live_read(path, &snap, &pid) != 0 ||
      pid == 0)
    return; /* not a region of this version, or its process is gone */
  double interval = (double)snap.interval_ns;
  if (snap.time_ns == 0) {
    top_line("  %u %s (nothing published yet)", pid, snap.comm);
    return;
  }
  char iv[32];
  cli_fmt_ns(iv, sizeof(iv), interval);
  if (snap.flags & GP_LIVE_FLAG_VIRTUAL_TIME)
    top_line("  %u %s (interval %s of simulated time)", pid, snap.comm, iv);
  else
    top_line("  %u %s (interval %s, %.1f s ago)", pid, snap.comm, iv,
             now > snap.time_ns ? (double)(now - snap.time_ns) / 1e9 : 0.0);
  bool assumed = false;
  if (snap.num_devices)
    show_devices(&snap, interval, &assumed);
  show_kernels(&snap, interval);
  show_queues(&snap, interval);
  show_counters(&snap);
  char t[32];
  if (snap.late_ns)
    top_wrap(6, "    + %s of GPU time reported late, run before this interval",
             cli_fmt_ns(t, sizeof(t), (double)snap.late_ns));
  if (assumed)
    top_wrap(6, "    * BUSY counts the launches in flight (enqueued, not "
                "reported yet) as running");
}

static void show_recorded(uint64_t now) {
  char dir[512];
  top_line("%s", "");
  top_line("Processes recorded by gpuperf");
  if (gp_live_dir(dir, sizeof(dir)) != 0)
    return;
  /* Regions of processes that died without removing theirs. */
  gp_live_remove_stale(dir, NULL);
  DIR *d = opendir(dir);
  int shown = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) {
    if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
      continue;
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
    show_one(path, now);
    shown++;
  }
  if (d)
    closedir(d);
  if (!shown)
    top_line("  none (start one with 'gpuperf record -- PROGRAM')");
}

/* ------------------------------------------------------------------ */
/* The command                                                          */

static void view(bool tty, bool keys, double period) {
  uint64_t now = boot_ns();
  time_t wall = time(NULL);
  struct tm tm;
  char hms[16];
  int w, h;
  localtime_r(&wall, &tm);
  strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
  top_terminal_size(1, &w, &h);
  top_screen_begin(w, tty ? h : 0);
  top_line("gpuperf top - %s, every %.1f s%s", hms, period,
           keys ? " (q: quit)" : "");
  top_line("%s", "");
  show_gpus();
  show_clients(now);
  show_recorded(now);
  top_screen_draw(stdout, tty);
}

/* See cli.h. */
int cmd_top(int argc, char **argv) {
  static const struct option longopts[] = {
      {"once", no_argument, 0, 'o'},
      {"iterations", required_argument, 0, 'n'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  double period = 1.0;
  uint64_t iterations = 0; /* 0: until interrupted */
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "d:n:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'd': {
      char *end;
      period = strtod(optarg, &end);
      if (end == optarg || *end || !(period >= 0.1) || period > 3600)
        return cli_error(CLI_USAGE,
                         "-d: '%s' is not a period in seconds (0.1 .. 3600)",
                         optarg);
      break;
    }
    case 'o':
      iterations = 1;
      break;
    case 'n':
      if (!cli_parse_u64("--iterations", optarg, 1, 1000000000, &iterations))
        return CLI_USAGE;
      break;
    case 'h':
      top_usage(stdout);
      return CLI_OK;
    default:
      top_usage(stderr);
      return CLI_USAGE;
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "unexpected argument '%s'", argv[optind]);
  bool tty = isatty(1) && iterations == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal; /* no SA_RESTART: the wait ends at once */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  bool keys = tty && top_keys_begin();
  /* A first DRM reading, so that the first view has busy %. */
  ncur = 0;
  gp_drm_clients(prev, MAX_CLIENTS, &nprev);
  prev_ns = boot_ns();
  double next = mono_s() + period;
  for (uint64_t i = 0; !stop && (iterations == 0 || i < iterations);) {
    double left = next - mono_s();
    int key = left > 0 ? top_wait_key(left) : 0;
    if (key == 'q' || key == 'Q' || stop)
      break;
    if (key == 0 && mono_s() >= next) {
      view(tty, keys, period);
      i++;
      next += period;
      if (next < mono_s()) /* a slow view: the next period from now */
        next = mono_s() + period;
    } else if (top_resized) {
      top_resized = 0;
      if (i > 0) /* redraw at the new size; the interval goes on */
        view(tty, keys, period);
    }
  }
  top_keys_end();
  return CLI_OK;
}
