/*
 * demo_machines.c - `gpuperf demo --machines N`: the training step on N
 * simulated nodes, one trace each, as N real machines would record it.
 *
 * Every node runs the same data-parallel step (a child `gpuperf demo`
 * with an "allreduce" range around the gradient exchange that ends each
 * step) under its own host identity (GPUPERF_HOSTNAME, GPUPERF_BOOT_ID).
 * Its trace is then re-timed (gp_trace_retime) onto the node's own
 * clocks: BOOTTIME offset by hours (each node booted at another time)
 * and drifting by some ppm, REALTIME off by up to 0.4 ms (NTP). The
 * table printed gives these true values, which `gpuperf merge` should
 * recover within the uncertainty it states.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "gpuperf/merge.h"

/* See cli.h. */
void demo_node_clock(uint32_t k, int64_t *boot_off, double *drift,
                     int64_t *real_off) {
  *boot_off = (int64_t)k * 3600000000000ll + (int64_t)k * 123456789ll;
  *drift = ((double)k * 17.0 - 25.0) * 1e-6;
  *real_off = ((int64_t)((k * 7919u) % 801u) - 400) * 1000;
}

/* See cli.h. */
void demo_node_path(const char *output, uint32_t k, char *buf, size_t size) {
  const char *dot = strrchr(output, '.');
  const char *slash = strrchr(output, '/');
  if (!dot || (slash && dot < slash))
    dot = output + strlen(output);
  snprintf(buf, size, "%.*s-node%u%s", (int)(dot - output), output, k, dot);
}

static int run_node(uint32_t k, const demo_options *opts, const char *config,
                    const char *tmp) {
  char host[32], boot[48], gpus[16], steps[16];
  snprintf(host, sizeof(host), "node-%u", k);
  snprintf(boot, sizeof(boot), "00000000-0000-4000-8000-%012x", k + 1);
  snprintf(gpus, sizeof(gpus), "%u", opts->gpus);
  snprintf(steps, sizeof(steps), "%u", opts->steps);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return -errno;
  if (pid == 0) {
    setenv("GPUPERF_HOSTNAME", host, 1);
    setenv("GPUPERF_BOOT_ID", boot, 1);
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0)
      dup2(fd, 1);
    char *args[12];
    int n = 0;
    args[n++] = "gpuperf";
    args[n++] = "demo";
    args[n++] = "--gpus";
    args[n++] = gpus;
    args[n++] = "--steps";
    args[n++] = steps;
    args[n++] = "--collective";
    args[n++] = "-o";
    args[n++] = (char *)tmp;
    if (config) {
      args[n++] = "-c";
      args[n++] = (char *)config;
    }
    args[n] = NULL;
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -errno;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : GP_EIO;
}

/* See cli.h. */
int demo_machines(uint32_t machines, const demo_options *opts,
                  const char *config, const char *output) {
  printf("gpuperf demo: %u simulated nodes x %u GPU%s, %u step%s, an "
         "allreduce ending each step\n\n",
         machines, opts->gpus, opts->gpus == 1 ? "" : "s", opts->steps,
         opts->steps == 1 ? "" : "s");
  printf("%-28s %-8s %22s %10s %14s\n", "trace", "host", "BOOTTIME offset",
         "drift", "REALTIME error");
  for (uint32_t k = 0; k < machines; k++) {
    char path[4096], tmp[4200], err[512] = "";
    demo_node_path(output, k, path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int rc = run_node(k, opts, config, tmp);
    if (rc != 0) {
      unlink(tmp);
      return cli_error(CLI_BAD_INPUT, "node %u: the demo failed", k);
    }
    int64_t off, real;
    double drift;
    demo_node_clock(k, &off, &drift, &real);
    rc = gp_trace_retime(tmp, path, off, drift, real, err, sizeof(err));
    unlink(tmp);
    if (rc != 0)
      return cli_error(CLI_BAD_INPUT, "%s", err);
    printf("%-28.28s node-%-3u %19lld ns %6.1f ppm %11.1f us\n", path, k,
           (long long)off, drift * 1e6, (double)real / 1e3);
  }
  printf("\nmerge them with: gpuperf merge ");
  for (uint32_t k = 0; k < machines; k++) {
    char path[4096];
    demo_node_path(output, k, path, sizeof(path));
    printf("%s ", path);
  }
  printf("-o all.pftrace --sync-on allreduce\n");
  return CLI_OK;
}
