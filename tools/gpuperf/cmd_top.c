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
 *     the counters it samples, from the file it publishes in
 *     gp_live_dir() (src/session/live.c has the format).
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
#define MAX_LINES 64

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

typedef struct line {
  char dev[96], name[160];
  double a, b; /* launches and ns, ns, or value */
  char unit[32];
} line;

static int by_b_desc(const void *x, const void *y) {
  const line *p = x, *q = y;
  return p->b < q->b ? 1 : p->b > q->b ? -1 : 0;
}

/* Splits a tab-separated line into up to max fields (in place). */
static int fields(char *s, char **f, int max) {
  int n = 0;
  while (n < max) {
    f[n++] = s;
    char *t = strchr(s, '\t');
    if (!t)
      break;
    *t = '\0';
    s = t + 1;
  }
  return n;
}

static void show_one(FILE *o, const char *path, uint64_t now) {
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  char buf[1024], comm[64] = "?";
  int pid = 0;
  uint64_t t = 0, interval = 0;
  static line k[MAX_LINES], q[MAX_LINES], c[MAX_LINES];
  int nk = 0, nq = 0, nc = 0;
  bool ok =
      fgets(buf, sizeof(buf), f) && strncmp(buf, "gpuperf-live\t1", 14) == 0;
  while (ok && fgets(buf, sizeof(buf), f)) {
    buf[strcspn(buf, "\n")] = '\0';
    char *v[6];
    int n = fields(buf, v, 6);
    if (strcmp(v[0], "pid") == 0 && n >= 3) {
      pid = atoi(v[1]);
      snprintf(comm, sizeof(comm), "%s", v[2]);
    } else if (strcmp(v[0], "time") == 0 && n >= 3) {
      t = strtoull(v[1], NULL, 10);
      interval = strtoull(v[2], NULL, 10);
    } else if (strcmp(v[0], "kernel") == 0 && n >= 5 && nk < MAX_LINES) {
      snprintf(k[nk].dev, sizeof(k[nk].dev), "%s", v[1]);
      snprintf(k[nk].name, sizeof(k[nk].name), "%s", v[2]);
      k[nk].a = strtod(v[3], NULL);
      k[nk++].b = strtod(v[4], NULL);
    } else if (strcmp(v[0], "queue") == 0 && n >= 4 && nq < MAX_LINES) {
      snprintf(q[nq].dev, sizeof(q[nq].dev), "%s", v[1]);
      snprintf(q[nq].name, sizeof(q[nq].name), "%s", v[2]);
      q[nq++].b = strtod(v[3], NULL);
    } else if (strcmp(v[0], "counter") == 0 && n >= 5 && nc < MAX_LINES) {
      snprintf(c[nc].dev, sizeof(c[nc].dev), "%s", v[1]);
      snprintf(c[nc].name, sizeof(c[nc].name), "%s", v[2]);
      c[nc].b = strtod(v[3], NULL);
      snprintf(c[nc].unit, sizeof(c[nc].unit), "%s", v[4]);
      nc++;
    }
  }
  fclose(f);
  if (!ok || pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
    return;
  double age = t && now > t ? (double)(now - t) / 1e9 : 0;
  fprintf(o, "  %7d %-16s (interval %.1f s, %.1f s ago)\n", pid, comm,
          (double)interval / 1e9, age);
  qsort(k, (size_t)nk, sizeof(line), by_b_desc);
  qsort(q, (size_t)nq, sizeof(line), by_b_desc);
  char a[32];
  if (nk)
    fprintf(o, "    %-40s %-24s %8s %12s %6s\n", "KERNEL", "DEVICE", "LAUNCHES",
            "GPU TIME", "BUSY");
  for (int i = 0; i < nk && i < 10; i++)
    fprintf(o, "    %-40.40s %-24.24s %8.0f %12s %5.1f%%\n", k[i].name,
            k[i].dev, k[i].a, cli_fmt_ns(a, sizeof(a), k[i].b),
            interval ? 100.0 * k[i].b / (double)interval : 0.0);
  if (nk == 0)
    fprintf(o, "    no kernel in the last interval\n");
  for (int i = 0; i < nq && i < 8; i++)
    fprintf(o, "    queue %-34.34s %-24.24s %21s %5.1f%%\n", q[i].name,
            q[i].dev, cli_fmt_ns(a, sizeof(a), q[i].b),
            interval ? 100.0 * q[i].b / (double)interval : 0.0);
  for (int i = 0; i < nc && i < 12; i++)
    fprintf(o, "    counter %-32.32s %-24.24s %12.6g %s\n", c[i].name, c[i].dev,
            c[i].b, c[i].unit);
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
