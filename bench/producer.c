/*
 * bench/producer.c - what a record costs on the producer path (packets
 * into the tracing service's shared memory, chunks committed over the
 * socket) against the file path, in one run.
 *
 *   build/bench/producer [--steps N] [--runs N]
 *
 * The CLI next to this program runs `gpuperf demo --steps N` three ways,
 * alternately, --runs times each: without a trace (--no-trace), writing
 * its trace to a file (-o), and as a producer (GPUPERF_PRODUCER=perfetto,
 * --no-trace) of tests/programs/perfetto_peer, which enables
 * gpu.renderstages and gpu.counters with the demo's counter config and
 * takes the chunks as Perfetto's service would. The cost of a path is the
 * process's CPU time (user + system, the collector and the producer's
 * reader thread included) above the untraced run's, per GPU work event of
 * the trace (its gpu_slice rows); medians are printed, and the ratio
 * producer / file. The service's own work (the peer's CPU) is not the
 * program's and is printed apart. The peer gives the shared memory the
 * producer asks for (2 MiB in pages of 32 KiB), as Perfetto's service
 * does by default. Issue 18 asks for the ratio; it sets no target.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "gpuperf/tp.h"
#include "stats.h"

static char dir[256];
static char cli[4096], peer[4096];

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double ru_cpu(const struct rusage *ru) {
  return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 +
         (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Runs argv with extra environment (NULL-ended name, value pairs);
 * returns its CPU seconds, -1 if it failed. */
static double run(char *const argv[], const char *const *env) {
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; env && env[i]; i += 2)
      setenv(env[i], env[i + 1], 1);
    int null = open("/dev/null", 1);
    dup2(null, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int st;
  struct rusage ru;
  if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
    return -1;
  return ru_cpu(&ru);
}

/* The demo's gpu.counters config (cmd_demo.c), as the peer's --counters. */
static const char demo_counters[] =
    "500000:Utilization,sm__cycles_active.avg,"
    "sm__warps_active.avg.pct_of_peak_sustained_active,"
    "lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum";

/* The producer run: the peer started first, the demo when it listens.
 * Returns the demo's CPU seconds; the peer's in *service. */
static double run_producer(const char *steps, double *service) {
  char sock[300], trace[300], ready[300];
  snprintf(sock, sizeof(sock), "%s/p.sock", dir);
  snprintf(trace, sizeof(trace), "%s/service.pftrace", dir);
  snprintf(ready, sizeof(ready), "%s/ready", dir);
  unlink(ready);
  pid_t p = fork();
  if (p == 0) {
    int null = open("/dev/null", 1);
    dup2(null, 1);
    execl(peer, peer, "--socket", sock, "--out", trace, "--ready", ready,
          "--source", "gpu.renderstages", "--source", "gpu.counters",
          "--counters", demo_counters, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 500 && access(ready, F_OK) != 0; i++)
    usleep(10000);
  char *argv[] = {cli,          "demo", "--steps", (char *)steps,
                  "--no-trace", "-q",   NULL};
  const char *env[] = {"GPUPERF_PRODUCER", "perfetto",
                       "PERFETTO_PRODUCER_SOCK_NAME", sock, NULL};
  double cpu = run(argv, env);
  int st;
  struct rusage ru;
  if (wait4(p, &st, 0, &ru) != p || !WIFEXITED(st) || WEXITSTATUS(st))
    return -1;
  *service = ru_cpu(&ru);
  return cpu;
}

static int64_t slices(const char *path) {
  gp_tp *tp = NULL;
  gp_tp_error e;
  gp_tp_rows *r = NULL;
  int64_t n = -1;
  if (gp_tp_open(path, NULL, &tp, &e) == 0 &&
      gp_tp_query(tp, "SELECT count(*) FROM gpu_slice", &r, &e) == 0 &&
      gp_tp_rows_next(r, &e) == 1)
    n = gp_tp_rows_int(r, 0);
  gp_tp_rows_destroy(r);
  gp_tp_close(tp);
  return n;
}

int main(int argc, char **argv) {
  const char *steps = "5000";
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--steps"))
      steps = argv[i + 1];
    else if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
  }
  snprintf(cli, sizeof(cli), "%s", argv[0]);
  char *slash = strrchr(cli, '/');
  size_t base = slash ? (size_t)(slash + 1 - cli) : 0;
  snprintf(peer, sizeof(peer), "%.*s../tests/programs/perfetto_peer", (int)base,
           cli);
  snprintf(cli + base, sizeof(cli) - base, "../gpuperf");
  if (access(cli, X_OK) != 0 || access(peer, X_OK) != 0) {
    printf("producer: %s or %s not found (make all tests): skipped\n", cli,
           peer);
    return 0;
  }
  snprintf(dir, sizeof(dir), "/tmp/gpuperf-bench-producer-%d", (int)getpid());
  mkdir(dir, 0755);
  signal(SIGPIPE, SIG_IGN);
  char file[300];
  snprintf(file, sizeof(file), "%s/file.pftrace", dir);
  double *none = malloc((size_t)runs * sizeof(double));
  double *fil = malloc((size_t)runs * sizeof(double));
  double *prod = malloc((size_t)runs * sizeof(double));
  double *svc = malloc((size_t)runs * sizeof(double));
  char *a_none[] = {cli,          "demo", "--steps", (char *)steps,
                    "--no-trace", "-q",   NULL};
  char *a_file[] = {cli,  "demo", "--steps", (char *)steps,
                    "-q", "-o",   file,      NULL};
  for (int r = 0; r < runs; r++) {
    none[r] = run(a_none, NULL);
    fil[r] = run(a_file, NULL);
    prod[r] = run_producer(steps, &svc[r]);
    if (none[r] < 0 || fil[r] < 0 || prod[r] < 0) {
      printf("producer: a run failed: skipped\n");
      return 1;
    }
  }
  char trace[300];
  snprintf(trace, sizeof(trace), "%s/service.pftrace", dir);
  int64_t nf = slices(file), np = slices(trace);
  int64_t nf_ = nf > 0 ? nf : 1, np_ = np > 0 ? np : 1;
  /* Per run, in ms, and per event above that run's untraced CPU (the
   * runs are interleaved: run r of each way saw the same load). */
  double ms_none[100], ms_fil[100], ms_prod[100], ms_svc[100];
  double ev_fil[100], ev_prod[100];
  int k = runs < 100 ? runs : 100;
  for (int r = 0; r < k; r++) {
    ms_none[r] = none[r] * 1e3, ms_fil[r] = fil[r] * 1e3;
    ms_prod[r] = prod[r] * 1e3, ms_svc[r] = svc[r] * 1e3;
    ev_fil[r] = (fil[r] - none[r]) * 1e9 / (double)nf_;
    ev_prod[r] = (prod[r] - none[r]) * 1e9 / (double)np_;
  }
  double n0 = median(none, runs), f = median(fil, runs), p = median(prod, runs);
  double per_f = (f - n0) / (double)nf_, per_p = (p - n0) / (double)np_;
  printf("demo --steps %s (%lld GPU work events; %lld through the "
         "service), %d interleaved runs, median [min..max]:\n",
         steps, (long long)nf, (long long)np, k);
  printf("  untraced       %s ms CPU\n", BENCH_FMT(ms_none, k, 1));
  printf("  file (-o)      %s ms CPU  %s ns per event above the same run's "
         "untraced\n",
         BENCH_FMT(ms_fil, k, 1), BENCH_FMT(ev_fil, k, 0));
  printf("  producer       %s ms CPU  %s ns per event  (the service side: "
         "%s ms)\n",
         BENCH_FMT(ms_prod, k, 1), BENCH_FMT(ev_prod, k, 0),
         BENCH_FMT(ms_svc, k, 1));
  printf("  producer / file per event: %.2fx\n",
         per_f > 0 ? per_p / per_f : 0.0);
  if (np != nf)
    printf("  NOTE: the service got %lld events of %lld\n", (long long)np,
           (long long)nf);
  unlink(file);
  unlink(trace);
  char path[300];
  snprintf(path, sizeof(path), "%s/ready", dir);
  unlink(path);
  rmdir(dir);
  return 0;
}
