/*
 * bench/hud.c - what GPUPERF_HUD costs a sampled program.
 *
 *   build/bench/hud [--app PATH] [--launches N] [--runs N] [--period-ms N]
 *
 * Runs the test program tests/programs/stat_app (simulated GPUs in real
 * time, GPUPERF_SIM_TIME=real: about 0.25 ms per launch, so that the run
 * lasts long enough for the HUD to refresh many times) with --launches N
 * in three ways, taking turns: plain; sampled (the `gpuperf stat` session
 * of the library, GPUPERF_STAT_DIR, sampling Utilization at the period);
 * and sampled with GPUPERF_HUD=Utilization shown at the same period (to
 * GPUPERF_HUD_FILE=/dev/null, so that it flushes and formats a row each
 * period as it would draw on a terminal). For each turn it takes the CPU
 * time (user + system) and the wall time of each child, and prints the
 * medians and the median of the per-turn ratios HUD/sampled (the HUD's own
 * cost; target, issue 12: within 2%) and sampled/plain (for reference).
 * The machine is shared: ratios within a turn are what to read.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs app once; stores its CPU and wall seconds. Returns its status. */
static char stat_dir[64];

/* mode 0 plain, 1 sampled, 2 sampled with the HUD. */
static int run(const char *app, const char *launches, int mode,
               const char *period, double *cpu, double *wall) {
  double t0 = now_s();
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    setenv("GPUPERF_SIM_TIME", "real", 1);
    unsetenv("GPUPERF_HUD");
    unsetenv("GPUPERF_HUD_FILE");
    unsetenv("GPUPERF_STAT_DIR");
    if (mode >= 1) {
      char ns[32];
      snprintf(ns, sizeof(ns), "%llu", strtoull(period, NULL, 10) * 1000000ull);
      setenv("GPUPERF_STAT_DIR", stat_dir, 1);
      setenv("GPUPERF_STAT_EVENTS", "Utilization", 1);
      setenv("GPUPERF_STAT_PERIOD_NS", ns, 1);
    }
    if (mode == 2) {
      setenv("GPUPERF_HUD", "Utilization", 1);
      setenv("GPUPERF_HUD_FILE", "/dev/null", 1);
      setenv("GPUPERF_HUD_PERIOD_MS", period, 1);
    }
    if (!freopen("/dev/null", "w", stdout))
      _exit(126);
    execl(app, app, "--launches", launches, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid)
    return -1;
  *wall = now_s() - t0;
  *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv) {
  const char *app = NULL, *launches = "4000", *period = "250";
  int runs = 5;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--app") == 0 && i + 1 < argc)
      app = argv[++i];
    else if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
      launches = argv[++i];
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--period-ms") == 0 && i + 1 < argc)
      period = argv[++i];
    else {
      fprintf(stderr, "usage: hud [--app PATH] [--launches N] [--runs N] "
                      "[--period-ms N]\n");
      return 1;
    }
  }
  static char path[1024];
  if (!app) { /* next to us: build/bench/hud -> build/tests/stat_app */
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
    char *slash = n > 0 ? (path[n] = '\0', strrchr(path, '/')) : NULL;
    if (slash) {
      *slash = '\0';
      slash = strrchr(path, '/');
    }
    if (!slash) {
      fprintf(stderr, "hud: cannot find stat_app; use --app PATH\n");
      return 1;
    }
    strcpy(slash, "/tests/stat_app");
    app = path;
  }
  if (access(app, X_OK) != 0) {
    fprintf(stderr, "hud: %s is not built (make tests)\n", app);
    return 1;
  }
  if (runs < 1 || runs > 1000)
    runs = 5;
  snprintf(stat_dir, sizeof(stat_dir), "/tmp/gpuperf-bench-hud-XXXXXX");
  if (!mkdtemp(stat_dir)) {
    fprintf(stderr, "hud: cannot make a directory in /tmp\n");
    return 1;
  }
  double *v = calloc((size_t)runs * 8, sizeof(double));
  double *c[3] = {v, v + runs, v + 2 * runs};
  double *w[3] = {v + 3 * runs, v + 4 * runs, v + 5 * runs};
  double *r_hud = v + 6 * runs, *r_smp = v + 7 * runs;
  for (int i = 0; i < runs; i++) {
    for (int k = 0; k < 3; k++) {
      int mode = (i + k) % 3; /* rotate the order, so slow phases hit all */
      if (run(app, launches, mode, period, &c[mode][i], &w[mode][i]) != 0) {
        fprintf(stderr, "hud: %s failed\n", app);
        return 1;
      }
    }
    r_hud[i] = c[2][i] / c[1][i];
    r_smp[i] = c[1][i] / c[0][i];
  }
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", stat_dir);
  if (system(cmd) != 0)
    fprintf(stderr, "hud: could not remove %s\n", stat_dir);
  double wr_hud[1000];
  for (int i = 0; i < runs; i++)
    wr_hud[i] = w[2][i] / w[1][i];
  printf("stat_app --launches %s, %d turns, period %s ms\n", launches, runs,
         period);
  const char *label[3] = {
      "plain:         ", "sampled:       ", "sampled + HUD: "};
  for (int k = 0; k < 3; k++)
    printf("  %s cpu %s s  wall %s s (median [min..max])\n", label[k],
           BENCH_FMT(c[k], runs, 4), BENCH_FMT(w[k], runs, 4));
  for (int i = 0; i < runs; i++) {
    r_hud[i] = (r_hud[i] - 1) * 100;
    wr_hud[i] = (wr_hud[i] - 1) * 100;
    r_smp[i] = (r_smp[i] - 1) * 100;
  }
  printf("  HUD / sampled, per turn, %%: cpu %s  wall %s  (target: within "
         "2%%)\n",
         BENCH_FMT(r_hud, runs, 2), BENCH_FMT(wr_hud, runs, 2));
  printf("  sampled / plain, per turn, %%: cpu %s\n",
         BENCH_FMT(r_smp, runs, 2));
  free(v);
  return 0;
}
