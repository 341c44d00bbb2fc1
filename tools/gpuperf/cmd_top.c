/*
 * cmd_top.c - `gpuperf top`: a live view of the machine's GPUs, like
 * nvtop or intel_gpu_top, refreshed every -d seconds:
 *
 *   - every DRM card with its frequency, power, temperature, fan and VRAM
 *     where the kernel shows them (gpuperf/drm.h);
 *   - every process with DRM clients: per-engine busy % over the last
 *     interval (two fdinfo readings) and its DRM memory;
 *   - every process recording with gpuperf (`gpuperf record`): its top
 *     kernels and queues over its last interval and the latest values of
 *     the counters it samples, read from the region of shared memory it
 *     rewrites in place in gp_live_dir() (gpuperf/live.h), without
 *     stopping it.
 *
 * On a terminal the screen is redrawn in place; otherwise (or with
 * --once / --iterations) plain blocks are printed one after the other.
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

#define MAX_CLIENTS 256

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static void top_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf top [-d SECS] [--once | -n N | --iterations N]\n\n"
          "A live view of the GPUs: DRM cards (frequency, power, temperature,\n"
          "fan, VRAM), per-process engine use from DRM fdinfo, and the top\n"
          "kernels, queues and counters of processes recorded by gpuperf.\n"
          "Redraws the screen on a terminal; prints plain blocks otherwise.\n"
          "Quit with Ctrl-C.\n\n"
          "  -d SECS            refresh period (default 1, at least 0.1)\n"
          "  --once             print one view and exit (after one period,\n"
          "                     so that busy %% can be computed)\n"
          "  -n, --iterations N print N views and exit\n");
}

static uint64_t boot_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_BOOTTIME, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
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

static void show_gpus(FILE *o) {
  gp_drm_gpu g[16];
  size_t n = 0;
  gp_drm_gpus(g, 16, &n);
  fprintf(o, "GPUs (DRM)\n");
  if (n == 0)
    fprintf(o, "  no DRM card under /sys/class/drm\n");
  for (size_t i = 0; i < n; i++) {
    char a[32], b[32];
    fprintf(o, "  %-6s %-8s %-14s", g[i].card, g[i].driver, g[i].pdev);
    if (!isnan(g[i].freq_mhz))
      fprintf(o, "  %6.0f MHz", g[i].freq_mhz);
    if (!isnan(g[i].power_w))
      fprintf(o, "  %6.1f W", g[i].power_w);
    if (!isnan(g[i].temp_c))
      fprintf(o, "  %5.1f C", g[i].temp_c);
    if (!isnan(g[i].fan_rpm))
      fprintf(o, "  %5.0f RPM", g[i].fan_rpm);
    if (!isnan(g[i].vram_used))
      fprintf(o, "  VRAM %s / %s", cli_fmt_bytes(a, sizeof(a), g[i].vram_used),
              isnan(g[i].vram_total)
                  ? "?"
                  : cli_fmt_bytes(b, sizeof(b), g[i].vram_total));
    fputc('\n', o);
  }
}

static void show_clients(FILE *o, uint64_t now) {
  ncur = 0;
  gp_drm_clients(cur, MAX_CLIENTS, &ncur);
  uint64_t wall = prev_ns ? now - prev_ns : 0;
  fprintf(o, "\nProcesses on DRM engines (fdinfo, busy %% over %.1f s)\n",
          (double)wall / 1e9);
  if (ncur == 0)
    fprintf(o, "  none readable\n");
  for (size_t i = 0; i < ncur; i++) {
    const gp_drm_client *c = &cur[i], *p = find_prev(c);
    char m[32];
    fprintf(o, "  %7u %-16s %-8s client %-4llu mem %-10s", c->pid, c->comm,
            c->driver, (unsigned long long)c->client_id,
            cli_fmt_bytes(m, sizeof(m), (double)c->mem_total));
    for (uint32_t e = 0; e < c->num_engines; e++) {
      double pct = wall ? gp_drm_engine_busy(p, c, e, wall) : -1;
      if (pct < 0)
        fprintf(o, " %s -", c->engines[e].name);
      else
        fprintf(o, " %s %.1f%%", c->engines[e].name, pct);
    }
    fputc('\n', o);
  }
  memcpy(prev, cur, ncur * sizeof(cur[0]));
  nprev = ncur;
  prev_ns = now;
}

/* ------------------------------------------------------------------ */
/* Recorded processes                                                   */

static void show_one(FILE *o, const char *path, uint64_t now) {
  static gp_live_snapshot snap;
  uint32_t pid = 0;
  if (gp_live_read(path, &snap, &pid) != 0 || pid == 0 ||
      (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
    return; /* not a region, or its process is gone */
  double age = snap.time_ns && now > snap.time_ns
                   ? (double)(now - snap.time_ns) / 1e9
                   : 0;
  double interval = (double)snap.interval_ns;
  fprintf(o, "  %7u %-16s (interval %.1f s, %.1f s ago)\n", pid, snap.comm,
          interval / 1e9, age);
  char a[32];
  /* The process lists its kernels and queues busiest first. */
  if (snap.num_kernels)
    fprintf(o, "    %-40s %-24s %8s %12s %6s\n", "KERNEL", "DEVICE", "LAUNCHES",
            "GPU TIME", "BUSY");
  for (uint32_t i = 0; i < snap.num_kernels && i < 10; i++) {
    const gp_live_kernel *k = &snap.kernels[i];
    fprintf(o, "    %-40.40s %-24.24s %8llu %12s %5.1f%%\n", k->name, k->device,
            (unsigned long long)k->launches,
            cli_fmt_ns(a, sizeof(a), (double)k->gpu_ns),
            interval > 0 ? 100.0 * (double)k->gpu_ns / interval : 0.0);
  }
  if (snap.num_kernels > 10 || snap.kernels_left_out)
    fprintf(o, "    (%u more kernels)\n",
            snap.num_kernels - (snap.num_kernels > 10 ? 10 : snap.num_kernels) +
                snap.kernels_left_out);
  if (snap.num_kernels == 0)
    fprintf(o, "    no kernel in the last interval\n");
  for (uint32_t i = 0; i < snap.num_queues && i < 8; i++) {
    const gp_live_queue *q = &snap.queues[i];
    fprintf(o, "    queue %-34.34s %-24.24s %21s %5.1f%%\n", q->name, q->device,
            cli_fmt_ns(a, sizeof(a), (double)q->busy_ns),
            interval > 0 ? 100.0 * (double)q->busy_ns / interval : 0.0);
  }
  for (uint32_t i = 0; i < snap.num_counters && i < 12; i++) {
    const gp_live_counter *c = &snap.counters[i];
    fprintf(o, "    counter %-32.32s %-24.24s %12.6g %s\n", c->name, c->device,
            c->value, c->unit);
  }
}

static void show_recorded(FILE *o, uint64_t now) {
  char dir[512];
  fprintf(o, "\nProcesses recorded by gpuperf\n");
  if (gp_live_dir(dir, sizeof(dir)) != 0)
    return;
  DIR *d = opendir(dir);
  int shown = 0;
  struct dirent *de;
  while (d && (de = readdir(d))) {
    if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
      continue;
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
    show_one(o, path, now);
    shown++;
  }
  if (d)
    closedir(d);
  if (!shown)
    fprintf(o, "  none (start one with 'gpuperf record -- PROGRAM')\n");
}

/* ------------------------------------------------------------------ */
/* The command                                                          */

static void view(FILE *o, bool tty, double period) {
  uint64_t now = boot_ns();
  time_t wall = time(NULL);
  struct tm tm;
  char hms[16];
  localtime_r(&wall, &tm);
  strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
  if (tty)
    fputs("\033[H\033[2J", o);
  fprintf(o, "gpuperf top - %s, every %.1f s\n\n", hms, period);
  show_gpus(o);
  show_clients(o, now);
  show_recorded(o, now);
  if (!tty)
    fputc('\n', o);
  fflush(o);
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
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  /* A first DRM reading, so that the first view has busy %. */
  ncur = 0;
  gp_drm_clients(prev, MAX_CLIENTS, &nprev);
  prev_ns = boot_ns();
  for (uint64_t i = 0; !stop && (iterations == 0 || i < iterations); i++) {
    struct timespec ts = {(time_t)period,
                          (long)((period - (double)(time_t)period) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && !stop) {
    }
    if (stop)
      break;
    view(stdout, tty, period);
  }
  return CLI_OK;
}
