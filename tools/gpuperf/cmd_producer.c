/*
 * cmd_producer.c - `gpuperf producer`: a daemon that offers the Linux GPU
 * counters of this machine (DRM fdinfo, sysfs, hwmon: docs/gpu-linux.md)
 * to Perfetto's tracing service as gpuperf's data sources, with no traced
 * program; and `gpuperf record --producer -- CMD`, which runs CMD with
 * GPUPERF_PRODUCER=perfetto so that its GPU work goes to the service's
 * trace instead of a file (docs/perfetto.md).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cuda.h"
#include "gpuperf/drm.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static int no_service(const char *what, const char *path, int rc) {
  return cli_error(CLI_BAD_INPUT,
                   "%s: no Perfetto tracing service at %s (%s): start "
                   "traced, or name its socket in PERFETTO_PRODUCER_SOCK_NAME",
                   what, path, strerror(-rc));
}

/* See cli.h. */
int cli_record_producer(char **cmd, bool quiet) {
  const char *path = gp_producer_socket();
  int rc = gp_producer_probe();
  if (rc != 0)
    return no_service("record --producer", path, rc);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return cli_error(CLI_BAD_INPUT, "cannot start %s: %s", cmd[0],
                     strerror(errno));
  if (pid == 0) {
    setenv("GPUPERF_PRODUCER", "perfetto", 1);
    unsetenv("GPUPERF_RECORD_DIR");
    cli_cuda_record_env();
    cli_preload_libraries();
    cli_enable_vulkan_layer();
    execvp(cmd[0], cmd);
    fprintf(stderr, "gpuperf record: cannot run %s: %s\n", cmd[0],
            strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!quiet)
    fprintf(stderr,
            "gpuperf record: %s's GPU work went to the tracing service at %s "
            "(the trace is the one `perfetto` writes)\n",
            cmd[0], path);
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void producer_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf producer [--name NAME] [--duration SECS] "
          "[--status SECS] [-q]\n\n"
          "Offers this machine's GPU counters (DRM cards: busy time, memory,\n"
          "clocks, power, temperature) to Perfetto's tracing service as the\n"
          "data sources gpu.counters and gpu.counters.gpuperf, until stopped\n"
          "(SIGINT, SIGTERM) or for --duration. If the service goes away it\n"
          "connects again when it is back. Programs' own GPU work goes\n"
          "to the service with `gpuperf record --producer -- CMD`.\n"
          "The socket is $PERFETTO_PRODUCER_SOCK_NAME, else Perfetto's\n"
          "default (now %s).\n\n"
          "  --name NAME       producer name (default gpuperf-system)\n"
          "  --duration SECS   stop after SECS seconds\n"
          "  --status SECS     print what was done every SECS (default: at "
          "the end)\n"
          "  -q, --quiet       print nothing but errors\n",
          gp_producer_socket());
}

static void print_stats(const gp_producer_stats *st) {
  printf("producer: %s, %u running, %llu started, %llu flushes, %llu "
         "chunks in %llu commits, %llu packets dropped, %llu reconnects, "
         "%llu packets lost while no service\n",
         st->connected ? "connected" : "disconnected", st->running,
         (unsigned long long)st->started, (unsigned long long)st->flushes,
         (unsigned long long)st->chunks, (unsigned long long)st->commits,
         (unsigned long long)st->dropped, (unsigned long long)st->reconnects,
         (unsigned long long)st->lost);
  fflush(stdout);
}

/* See cli.h. */
int cmd_producer(int argc, char **argv) {
  const char *name = "gpuperf-system";
  uint64_t duration = 0, status_every = 0;
  bool quiet = false;
  static const struct option longopts[] = {
      {"name", required_argument, 0, 'n'},
      {"duration", required_argument, 0, 'd'},
      {"status", required_argument, 0, 's'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'n':
      if (!*optarg)
        return cli_error(CLI_USAGE, "--name needs a name");
      name = optarg;
      break;
    case 'd':
      if (!cli_parse_u64("--duration", optarg, 1, 31536000, &duration))
        return CLI_USAGE;
      break;
    case 's':
      if (!cli_parse_u64("--status", optarg, 1, 86400, &status_every))
        return CLI_USAGE;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      producer_usage(stdout);
      return CLI_OK;
    default:
      producer_usage(stderr);
      return CLI_USAGE;
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "producer: unexpected argument '%s'",
                     argv[optind]);
  int rc = gp_drm_register_devices();
  if (rc != 0 && !quiet)
    fprintf(stderr, "gpuperf producer: some DRM cards are left out: %s\n",
            gp_strerror(rc));
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  char err[512] = "";
  rc = gp_producer_start(
      name, GP_PRODUCER_COUNTERS_ONLY | (quiet ? GP_PRODUCER_QUIET : 0), err,
      sizeof(err));
  if (rc != 0) {
    const char *path = gp_producer_socket();
    if (rc != GP_EIO && rc != GP_EBUSY)
      return no_service("producer", path, rc);
    return cli_error(CLI_BAD_INPUT, "producer: %s", err);
  }
  if (!quiet) {
    printf("producer %s connected to %s: gpu.counters, gpu.counters.gpuperf "
           "on %u device%s%s\n",
           name, gp_producer_socket(), ndev, ndev == 1 ? "" : "s",
           ndev ? "" : " (no DRM card found: nothing to sample)");
    fflush(stdout);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  time_t t0 = time(NULL), last = t0;
  gp_producer_stats st;
  while (!stop_requested) {
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
    time_t now = time(NULL);
    gp_producer_get_stats(&st);
    if (duration && (uint64_t)(now - t0) >= duration)
      break;
    if (status_every && !quiet && (uint64_t)(now - last) >= status_every) {
      print_stats(&st);
      last = now;
    }
  }
  gp_producer_stop();
  gp_producer_get_stats(&st);
  if (!quiet)
    print_stats(&st);
  return CLI_OK;
}
