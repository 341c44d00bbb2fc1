/*
 * stat_app.c - a small program that drives the simulated GPUs through
 * libgpuperf (linked as a shared library), for the tests of `gpuperf stat`
 * and GPUPERF_HUD=help.
 *
 *   stat_app [--launches N] [--spawn] [--exit CODE] [--touch FILE]
 *            [--start-after FILE] [--wait FILE] [--die segv|_exit]
 *            [--die-once FILE SIG]
 *
 * Runs the workload of stat_app.h (N launches of saxpy, N/2+1 of reduce
 * on device 0, N of csd_blur on device 2), burns a little CPU, and exits
 * with CODE. --spawn runs a second copy of itself (without --spawn) and
 * waits for it; --touch creates FILE first, so a test can tell whether
 * the program ran at all; --start-after makes it wait until FILE exists
 * before its workload, --wait makes it wait, once done, until FILE
 * exists (at most 120 s), so a test can watch it while it runs; --die
 * then ends it by a segmentation fault or _exit() instead of returning.
 * --die-once: if FILE does not exist, creates it and dies of signal SIG
 * after its first kernel's launches (so one run of several crashes,
 * half-way).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs/stat_app.h"

static int check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "stat_app: %s: %s\n", what, gp_strerror(rc));
    exit(100);
  }
  return rc;
}

static void run(int dev, int which, int n) {
  gp_sim_context *ctx;
  gp_sim_kernel *k;
  gp_sim_kernel_desc d = stat_app_kernel(which);
  check(gp_sim_context_create((uint32_t)dev, &ctx), "context");
  check(gp_sim_kernel_create(&d, &k), "kernel");
  gp_sim_dim3 g = {dev == 2 ? STAT_APP_V3D_GRID : STAT_APP_GRID, 1, 1};
  gp_sim_dim3 b = {dev == 2 ? STAT_APP_V3D_BLOCK : STAT_APP_BLOCK, 1, 1};
  for (int i = 0; i < stat_app_launches(which, n); i++) {
    check(gp_sim_launch(gp_sim_default_stream(ctx), k, g, b, 0), "launch");
    check(gp_sim_host_work(20000), "host work");
  }
  check(gp_sim_context_synchronize(ctx), "synchronize");
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

int main(int argc, char **argv) {
  int n = 4, code = 0, spawn = 0, die_sig = 0;
  const char *wait_for = NULL, *die = NULL, *start_after = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      n = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc) {
      code = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--spawn") == 0) {
      spawn = 1;
    } else if (strcmp(argv[i], "--touch") == 0 && i + 1 < argc) {
      FILE *f = fopen(argv[++i], "w");
      if (f)
        fclose(f);
    } else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
      wait_for = argv[++i];
    } else if (strcmp(argv[i], "--start-after") == 0 && i + 1 < argc) {
      start_after = argv[++i];
    } else if (strcmp(argv[i], "--die") == 0 && i + 1 < argc) {
      die = argv[++i];
    } else if (strcmp(argv[i], "--die-once") == 0 && i + 2 < argc) {
      FILE *f = fopen(argv[++i], "wx"); /* fails if it exists */
      die_sig = atoi(argv[++i]);
      if (f)
        fclose(f);
      else
        die_sig = 0;
    } else {
      fprintf(stderr, "usage: stat_app [--launches N] [--spawn] [--exit CODE]"
                      " [--touch FILE] [--start-after FILE] [--wait FILE]"
                      " [--die segv|_exit] [--die-once FILE SIG]\n");
      return 2;
    }
  }
  if (spawn) {
    char nbuf[16];
    snprintf(nbuf, sizeof(nbuf), "%d", n);
    pid_t pid = fork();
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "--launches", nbuf, (char *)NULL);
      _exit(127);
    }
    int ws;
    waitpid(pid, &ws, 0);
  }
  struct timespec tick = {0, 10000000L};
  if (start_after) {
    /* The devices exist (a first, empty context each), so that what
     * watches them can start before the work does. */
    gp_sim_context *ctx;
    check(gp_sim_context_create(0, &ctx), "context");
    gp_sim_context_destroy(ctx);
    for (int i = 0; access(start_after, F_OK) != 0 && i < 12000; i++)
      nanosleep(&tick, NULL);
  }
  run(0, 0, n);
  if (die_sig)
    raise(die_sig);
  run(0, 1, n);
  run(2, 2, n);
  volatile double x = 0; /* a little CPU time for task-clock */
  for (int i = 0; i < 2000000; i++)
    x += i * 0.5;
  (void)x;
  printf("stat_app: done\n");
  fflush(stdout);
  for (int i = 0; wait_for && access(wait_for, F_OK) != 0 && i < 12000; i++)
    nanosleep(&tick, NULL);
  if (die && strcmp(die, "segv") == 0)
    *(volatile int *)(uintptr_t)0 = 1;
  if (die && strcmp(die, "_exit") == 0)
    _exit(code);
  return code;
}
