/*
 * bench/activity.c - the cost of writing an activity record, beside its
 * floor and a peer measured in the same run.
 *
 *   build/bench/activity [--records N] [--runs N] [--processes N [--pin]]
 *                        [--no-instructions]
 *
 * Measures the producer hot path as backends use it: reserve a 48-byte
 * MARKER record, take a timestamp, fill it, commit; with buffers of 4 MiB
 * recycled through the real request/complete callbacks and the collector
 * thread. Per record: CPU time of the producing thread (the machines are
 * shared; wall time would count the other tenants), median of the runs.
 *
 * Beside it, interleaved with its runs:
 *  - the floor: an rdtsc and a 64-byte store into a pre-faulted ring, the
 *    least any in-process tracer can do per event;
 *  - the peer, where liblttng-ust-dev was found at build time: an LTTng-UST
 *    tracepoint, recorded by a session daemon the bench starts in a
 *    temporary directory and stops (lttng-sessiond and lttng from
 *    lttng-tools); skipped with a message otherwise.
 * Then 1 and 2 threads in records/s of wall time and the 2-thread
 * speed-up. With --processes N the measurement is repeated in N fresh
 * processes and the spread of the per-record cost and of its ratio to the
 * floor is printed; --pin puts process i on CPU i % CPUs and prints the
 * spread per CPU as well (on our VMs processes differed by the CPU they
 * ran on). The floor is measured on the producing thread itself, just
 * before its records, so both sides of a ratio ran on the same CPU.
 *
 * Last, the instructions per record and per floor iteration, counted by
 * callgrind where valgrind is installed (this program run under it with
 * --instr, twice per loop: (I(N2) - I(N1)) / (N2 - N1)), the figure a
 * loaded machine does not move; --no-instructions leaves it out, and
 * --instructions-only prints it alone (`make bench-instructions`).
 *
 * Targets (issues 15, 36): <= 1.15x the floor in every process; 2-thread
 * speed-up >= 1.9x on an idle machine; <= 30 instructions per record.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "core/core.h"
#include "stats.h"

#if GP_HAVE_LTTNG_UST
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "activity_lttng.h"
#endif

#define BUF_SIZE (4u << 20)
#define MAX_FREE 256
#define MAX_RUNS 101

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *free_bufs[MAX_FREE];
static int nfree;

static void request(uint8_t **buffer, size_t *size, size_t *max_records) {
  pthread_mutex_lock(&free_lock);
  uint8_t *b = nfree ? free_bufs[--nfree] : NULL;
  pthread_mutex_unlock(&free_lock);
  *buffer = b ? b : aligned_alloc(8, BUF_SIZE);
  *size = BUF_SIZE;
  *max_records = 0;
}

static void complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  (void)valid;
  pthread_mutex_lock(&free_lock);
  if (nfree < MAX_FREE) {
    free_bufs[nfree++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&free_lock);
  free(buffer);
}

static double clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void) {
  return clock_ns(CLOCK_MONOTONIC);
}

static double cpu_ns(void) {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
  double s[MAX_RUNS];
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double minimum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] < m ? v[i] : m;
  return m;
}

static double maximum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    m = v[i] > m ? v[i] : m;
  return m;
}

/* ------------------------------------------------------------------ */
/* The floor: rdtsc + a 64-byte store into a ring                       */

#define RING_SIZE (4u << 20)

typedef struct floor_rec {
  uint64_t w[8];
} floor_rec;

/* CPU ns per event of the floor on the calling thread. */
static double floor_run(uint64_t records) {
  static _Alignas(64) floor_rec ring[RING_SIZE / sizeof(floor_rec)];
  const size_t mask = RING_SIZE / sizeof(floor_rec) - 1;
  memset(ring, 0, sizeof(ring)); /* pre-faulted, as buffers should be */
  double t0 = cpu_ns();
  for (uint64_t i = 0; i < records; i++) {
    floor_rec *r = &ring[i & mask];
    r->w[0] = (5ull << 32) | 48; /* kind, size */
    r->w[1] = __rdtsc();
    r->w[2] = i;
    r->w[3] = 1;
    r->w[4] = 1;
    r->w[5] = 1;
    r->w[6] = 0;
    r->w[7] = 0;
    __asm__ volatile("" : : "r"(r) : "memory"); /* keep every store */
  }
  return (cpu_ns() - t0) / (double)records;
}

/* ------------------------------------------------------------------ */
/* gpuperf records                                                      */

typedef struct job {
  uint64_t records;
  uint64_t written;
  double wall_ns, cpu_ns;
  long faults;     /* minor page faults taken by the producing thread */
  double floor_ns; /* the floor on this thread, just before (with_floor) */
  bool with_floor;
  pthread_barrier_t *start;
} job;

static long thread_faults(void) {
  struct rusage ru;
  return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_minflt : 0;
}

static void *produce(void *arg) {
  job *j = arg;
  uint32_t tid = gp__tid();
  /* Warm the slot (first buffer) outside the timed loop. */
  gp_activity_marker *w =
      gp__activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*w), 0, 0);
  if (w) {
    memset((uint8_t *)w + sizeof(gp_activity), 0,
           sizeof(*w) - sizeof(gp_activity));
    gp__activity_commit(w);
  }
  pthread_barrier_wait(j->start);
  /* The floor on the same thread, so on the same CPU: the two CPUs of a
   * VM need not be alike (see main), and a ratio across them says
   * nothing. */
  if (j->with_floor)
    j->floor_ns = floor_run(j->records);
  long f0 = thread_faults();
  double t0 = now_ns(), c0 = cpu_ns();
  uint64_t ok = 0;
  for (uint64_t i = 0; i < j->records; i++) {
    gp_activity_marker *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*r), 0, 0);
    if (GP_UNLIKELY(!r))
      continue;
    r->timestamp = gp__now();
    r->id = i;
    r->flags = GP_ACTIVITY_FLAG_MARKER_INSTANT;
    r->name_id = 1;
    r->domain_id = 0;
    r->process_id = 1;
    r->thread_id = tid;
    r->depth = 0;
    gp__activity_commit(r);
    ok++;
  }
  j->cpu_ns = cpu_ns() - c0;
  j->wall_ns = now_ns() - t0;
  j->faults = thread_faults() - f0;
  j->written = ok;
  return NULL;
}

/*
 * The loops `make bench-instructions` counts (valgrind --tool=callgrind
 * --toggle-collect=instr_*): the same work as the timed loops above, on
 * one thread, nothing else inside. Never inlined, so that the tool finds
 * them by name.
 */
__attribute__((noinline)) void instr_records(uint64_t records, uint32_t tid);
__attribute__((noinline)) void instr_records(uint64_t records, uint32_t tid) {
  for (uint64_t i = 0; i < records; i++) {
    gp_activity_marker *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*r), 0, 0);
    if (GP_UNLIKELY(!r))
      continue;
    r->timestamp = gp__now();
    r->id = i;
    r->flags = GP_ACTIVITY_FLAG_MARKER_INSTANT;
    r->name_id = 1;
    r->domain_id = 0;
    r->process_id = 1;
    r->thread_id = tid;
    r->depth = 0;
    gp__activity_commit(r);
  }
}

__attribute__((noinline)) void instr_floor(uint64_t records);
__attribute__((noinline)) void instr_floor(uint64_t records) {
  (void)floor_run(records);
}

/* One run with n threads; returns records per second of wall time and
 * stores CPU ns per record (mean over the threads) in *per. */
static double run(int n, uint64_t records, double *per, double *floor,
                  uint64_t *dropped, long *faults) {
  pthread_t t[8];
  job jobs[8];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)n);
  for (int i = 0; i < n; i++) {
    jobs[i].records = records;
    jobs[i].start = &start;
    jobs[i].with_floor = floor != NULL;
    pthread_create(&t[i], NULL, produce, &jobs[i]);
  }
  double worst = 0, sum_per = 0;
  uint64_t total = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(t[i], NULL);
    if (jobs[i].wall_ns > worst)
      worst = jobs[i].wall_ns;
    sum_per += jobs[i].cpu_ns / (double)records;
    total += jobs[i].written;
    *faults += jobs[i].faults;
  }
  pthread_barrier_destroy(&start);
  gp_activity_flush_all(0);
  size_t d = 0;
  gp_activity_get_num_dropped_records(0, 0, &d);
  *dropped += d;
  *per = sum_per / n;
  if (floor)
    *floor = jobs[0].floor_ns;
  return (double)total / (worst / 1e9);
}

/* ------------------------------------------------------------------ */
/* The LTTng-UST peer                                                   */

/* Runs argv with LTTNG_HOME=home, output discarded; returns its exit
 * status, or -1. */
static int run_quiet(const char *home, char *const argv[]) {
  fflush(stdout); /* or the child writes our buffered lines again */
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    setenv("LTTNG_HOME", home, 1);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execvp(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) < 0)
    return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs argv with LTTNG_HOME=home and copies what follows `key` on the
 * last line of its output that starts with it into out (cap bytes).
 * Returns false if no line did. */
static bool run_for_line(const char *home, char *const argv[], const char *key,
                         char *out, size_t cap) {
  int fd[2];
  if (pipe(fd) != 0)
    return false;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    setenv("LTTNG_HOME", home, 1);
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  FILE *f = fdopen(fd[0], "r");
  char line[512];
  bool found = false;
  while (f && fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, strlen(key)) == 0) {
      snprintf(out, cap, "%s", line + strlen(key));
      found = true;
    }
  }
  if (f)
    fclose(f);
  waitpid(pid, NULL, 0);
  return found;
}

#if GP_HAVE_LTTNG_UST
/* In the child started by lttng_peer(): CPU ns per tracepoint, median of
 * runs, and the floor beside it. */
static int lttng_child(uint64_t records, int runs) {
  double tp[MAX_RUNS], fl[MAX_RUNS];
  uint32_t tid = (uint32_t)gettid();
  for (int r = 0; r < runs; r++) {
    double c0 = cpu_ns();
    for (uint64_t i = 0; i < records; i++)
      lttng_ust_tracepoint(gpuperf_bench, marker, i, 1, tid);
    tp[r] = (cpu_ns() - c0) / (double)records;
    fl[r] = floor_run(records);
  }
  printf("lttng %.3f %.3f\n", median(tp, runs), median(fl, runs));
  return 0;
}

/* Starts a session daemon in a temporary LTTNG_HOME, records the bench's
 * tracepoint in a child process, stops everything. Returns the child's ns
 * per tracepoint (its floor in *floor), or a negative value with *why. */
static double lttng_peer(const char *self, uint64_t records, int runs,
                         double *floor, const char **why) {
  char home[] = "/tmp/gpuperf-bench-lttng-XXXXXX";
  if (!mkdtemp(home)) {
    *why = "cannot make a temporary directory";
    return -1;
  }
  double ns = -1;
  char *list[] = {"lttng", "list", NULL};
  if (run_quiet(home, list) == 0) {
    /* As root the daemon's sockets are system-wide: never take over one
     * that somebody else started. */
    *why = "a session daemon is already running (not ours to use)";
    goto out_dir;
  }
  fflush(stdout);
  pid_t sd = fork();
  if (sd < 0) {
    *why = "cannot fork";
    goto out_dir;
  }
  if (sd == 0) {
    setenv("LTTNG_HOME", home, 1);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execlp("lttng-sessiond", "lttng-sessiond", (char *)NULL);
    _exit(127);
  }
  int up = 0;
  for (int i = 0; i < 100 && !up; i++) {
    usleep(50000);
    up = run_quiet(home, list) == 0;
    if (!up && waitpid(sd, NULL, WNOHANG) == sd) {
      sd = 0;
      break;
    }
  }
  if (!up) {
    *why = "lttng-sessiond did not start (is lttng-tools installed?)";
    goto out_daemon;
  }
  char out[sizeof(home) + 16];
  snprintf(out, sizeof(out), "--output=%s/trace", home);
  char *create[] = {"lttng", "create", "gpuperf-bench", out, NULL};
  char *chan[] = {"lttng", "enable-channel", "-u", "--subbuf-size",
                  "4M",    "--num-subbuf",   "8",  "gpuperf-channel",
                  NULL};
  char *event[] = {"lttng",           "enable-event",         "-u", "-c",
                   "gpuperf-channel", "gpuperf_bench:marker", NULL};
  char *start[] = {"lttng", "start", NULL};
  char *stop[] = {"lttng", "stop", NULL};
  char *destroy[] = {"lttng", "destroy", NULL};
  if (run_quiet(home, create) != 0 || run_quiet(home, chan) != 0 ||
      run_quiet(home, event) != 0 || run_quiet(home, start) != 0) {
    *why = "the lttng session could not be set up";
    goto out_daemon;
  }
  char nrec[32], nruns[16];
  snprintf(nrec, sizeof(nrec), "%llu", (unsigned long long)records);
  snprintf(nruns, sizeof(nruns), "%d", runs);
  char *child[] = {(char *)self, "--lttng-child", "--records", nrec,
                   "--runs",     nruns,           NULL};
  char line[128];
  if (!run_for_line(home, child, "lttng ", line, sizeof(line)) ||
      sscanf(line, "%lf %lf", &ns, floor) != 2) {
    ns = -1;
    *why = "the child process did not report";
  }
  run_quiet(home, stop);
  run_quiet(home, destroy);
out_daemon:
  if (sd > 0) {
    kill(sd, SIGTERM);
    waitpid(sd, NULL, 0);
  }
out_dir:;
  char *rm[] = {"rm", "-rf", home, NULL};
  run_quiet(home, rm);
  return ns;
}
#endif

/* ------------------------------------------------------------------ */
/* Main                                                                 */

typedef struct result {
  double per1, floor, ratio, per2, r1, r2, ts, cg;
  uint64_t dropped;
  long faults;      /* in the producing threads, timed runs */
  long warm_faults; /* the same in the untimed first pass */
  /* The same figures as "median [min..max]" of the runs. */
  char s_per1[64], s_floor[64], s_ratio[64], s_per2[64], s_ts[64], s_cg[64];
  char s_r1[64], s_r2[64];
} result;

static void measure(uint64_t records, int runs, result *out) {
  size_t limit = 1024, sz = sizeof(limit);
  gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz, &limit);
  size_t bsize = BUF_SIZE;
  sz = sizeof(bsize);
  gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &bsize);
  gp_activity_register_callbacks(request, complete);
  gp_activity_enable(GP_ACTIVITY_KIND_MARKER);

  /* A bare timestamp, for reference (after calibration settles). */
  double ts_runs[MAX_RUNS], cg_runs[MAX_RUNS];
  for (int r = 0; r < runs; r++) {
    volatile uint64_t sink = 0;
    double t0 = cpu_ns();
    for (int i = 0; i < 1000000; i++)
      sink += gp_get_timestamp();
    ts_runs[r] = (cpu_ns() - t0) / 1e6;
    t0 = cpu_ns();
    for (int i = 0; i < 1000000; i++)
      sink += gp_clock_read_host(GP_CLOCK_BOOTTIME);
    cg_runs[r] = (cpu_ns() - t0) / 1e6;
    (void)sink;
  }

  double per1[MAX_RUNS], rate1[MAX_RUNS], per2[MAX_RUNS], rate2[MAX_RUNS];
  double fl[MAX_RUNS], ratio[MAX_RUNS];
  uint64_t dropped = 0;
  long faults = 0;
  /* One pass of each, untimed: the first buffers the request callback
   * gives are fresh memory, and the collector cannot pre-fault them as
   * fast as a thread fills them (12-40 us a page on this VM); after this
   * every buffer is a recycled one, as in a program that runs for more
   * than a second. Its faults are reported apart. */
  double unused;
  long warm_faults = 0;
  run(1, records, &unused, &unused, &dropped, &warm_faults);
  run(2, records, &unused, NULL, &dropped, &warm_faults);
  out->warm_faults = warm_faults;
  for (int r = 0; r < runs; r++) {
    rate1[r] = run(1, records, &per1[r], &fl[r], &dropped, &faults);
    ratio[r] = per1[r] / fl[r];
    rate2[r] = run(2, records, &per2[r], NULL, &dropped, &faults);
  }
  out->faults = faults;
  out->per1 = median(per1, runs);
  out->floor = median(fl, runs);
  out->ratio = median(ratio, runs);
  out->per2 = median(per2, runs);
  out->r1 = median(rate1, runs);
  out->r2 = median(rate2, runs);
  out->ts = median(ts_runs, runs);
  out->cg = median(cg_runs, runs);
  out->dropped = dropped;
  bench_fmt(out->s_per1, 64, per1, runs, 1);
  bench_fmt(out->s_floor, 64, fl, runs, 1);
  bench_fmt(out->s_ratio, 64, ratio, runs, 2);
  bench_fmt(out->s_per2, 64, per2, runs, 1);
  bench_fmt(out->s_ts, 64, ts_runs, runs, 1);
  bench_fmt(out->s_cg, 64, cg_runs, runs, 1);
  for (int r = 0; r < runs; r++)
    rate1[r] /= 1e6, rate2[r] /= 1e6;
  bench_fmt(out->s_r1, 64, rate1, runs, 1);
  bench_fmt(out->s_r2, 64, rate2, runs, 1);
  gp_activity_finalize();
}

/* Prints the spread of k processes' results. */
static void print_spread(const char *what, const double *per,
                         const double *ratio, int k) {
  int over = 0;
  for (int i = 0; i < k; i++)
    over += ratio[i] > 1.15;
  printf("  %s%d processes: %.1f ns/record median [%.1f..%.1f]; ratio to "
         "the floor %.2fx median [%.2f..%.2f]; over 1.15x in %d of %d\n",
         what, k, median(per, k), minimum(per, k), maximum(per, k),
         median(ratio, k), minimum(ratio, k), maximum(ratio, k), over, k);
}

/*
 * Repeats the measurement in n fresh processes; prints the spread of the
 * 1-thread cost and of its ratio to the floor. With pin, process i runs
 * on CPU i % (CPUs online) only, and the spread is also printed per CPU:
 * on the VMs we measured on, the split between processes followed the
 * CPU the producing thread ran on, not the process.
 */
static int spread(const char *self, uint64_t records, int runs, int n,
                  bool pin) {
  double per[MAX_RUNS], fl[MAX_RUNS], ratio[MAX_RUNS];
  int cpu_of[MAX_RUNS];
  int ncpu = pin ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1;
  if (ncpu < 1)
    ncpu = 1;
  char nrec[32], nruns[16], ncpu_arg[16];
  snprintf(nrec, sizeof(nrec), "%llu", (unsigned long long)records);
  snprintf(nruns, sizeof(nruns), "%d", runs);
  char *child[] = {(char *)self, "--child", "--records", nrec, "--runs",
                   nruns,        NULL,      NULL,        NULL};
  int k = 0;
  printf("  per process (ns/record, floor ns, ratio%s):", pin ? ", CPU" : "");
  for (int i = 0; i < n; i++) {
    if (pin) {
      snprintf(ncpu_arg, sizeof(ncpu_arg), "%d", i % ncpu);
      child[6] = "--cpu";
      child[7] = ncpu_arg;
    }
    char line[128];
    if (!run_for_line("/tmp", child, "child ", line, sizeof(line)) ||
        sscanf(line, "%lf %lf %lf", &per[k], &fl[k], &ratio[k]) != 3)
      continue;
    cpu_of[k] = i % ncpu;
    printf(" %.1f/%.1f/%.2fx", per[k], fl[k], ratio[k]);
    if (pin)
      printf("/%d", cpu_of[k]);
    fflush(stdout);
    k++;
  }
  printf("\n");
  if (k == 0) {
    fprintf(stderr, "activity: no child process reported\n");
    return 1;
  }
  print_spread("", per, ratio, k);
  for (int c = 0; pin && c < ncpu; c++) {
    double p[MAX_RUNS], r[MAX_RUNS];
    int m = 0;
    for (int i = 0; i < k; i++)
      if (cpu_of[i] == c) {
        p[m] = per[i];
        r[m++] = ratio[i];
      }
    char what[32];
    snprintf(what, sizeof(what), "CPU %d: ", c);
    if (m > 0)
      print_spread(what, p, r, m);
  }
  return 0;
}

/*
 * --instr: one loop of `records` iterations for callgrind to count
 * (scripts/bench-instructions.sh), set up as measure() does. The clock
 * must be on its TSC line first, as in a program that has run for more
 * than a millisecond: the loop waits for it (wall time, not counted).
 */
static int instr_main(const char *what, uint64_t records) {
  size_t limit = 1024, sz = sizeof(limit);
  gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz, &limit);
  size_t bsize = BUF_SIZE;
  sz = sizeof(bsize);
  gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &bsize);
  gp_activity_register_callbacks(request, complete);
  gp_activity_enable(GP_ACTIVITY_KIND_MARKER);
  double t0 = now_ns();
  while (now_ns() - t0 < 20e6)
    (void)gp_get_timestamp();
  uint32_t tid = gp__tid();
  instr_records(1, tid); /* the thread's slot and first buffer */
  if (strcmp(what, "record") == 0)
    instr_records(records, tid);
  else if (strcmp(what, "floor") == 0)
    instr_floor(records);
  else {
    fprintf(stderr, "activity: --instr record or floor\n");
    return 1;
  }
  gp_activity_flush_all(0);
  size_t d = 0;
  gp_activity_get_num_dropped_records(0, 0, &d);
  printf("instr %s %llu records, %zu dropped, clock: %s\n", what,
         (unsigned long long)records, d, gp__clock_source_name());
  gp_activity_finalize();
  return d != 0;
}

/* The instructions callgrind counts inside fn when self runs
 * `--instr what --records n`; -1 if it could not. */
static double callgrind_count(const char *self, const char *fn,
                              const char *what, uint64_t n) {
  char out[] = "/tmp/gpuperf-bench-cg.XXXXXX";
  int fd = mkstemp(out);
  if (fd < 0)
    return -1;
  close(fd);
  char ofile[64], toggle[64], nrec[32];
  snprintf(ofile, sizeof(ofile), "--callgrind-out-file=%s", out);
  snprintf(toggle, sizeof(toggle), "--toggle-collect=%s", fn);
  snprintf(nrec, sizeof(nrec), "%llu", (unsigned long long)n);
  pid_t pid = fork();
  if (pid == 0) {
    int dn = open("/dev/null", O_WRONLY);
    if (dn >= 0) {
      dup2(dn, 1);
      dup2(dn, 2);
    }
    execlp("valgrind", "valgrind", "--tool=callgrind", ofile, toggle, self,
           "--instr", what, "--records", nrec, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  double total = -1;
  if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
      WEXITSTATUS(st) == 0) {
    FILE *f = fopen(out, "r");
    char line[512];
    while (f && fgets(line, sizeof(line), f))
      if (strncmp(line, "totals:", 7) == 0)
        total = strtod(line + 7, NULL);
    if (f)
      fclose(f);
  }
  unlink(out);
  return total;
}

/* Prints the instructions per record and per floor iteration; false if
 * they could not be counted. */
static bool print_instructions(const char *argv0) {
  const uint64_t n1 = 100000, n2 = 400000;
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len > 0)
    self[len] = '\0';
  else
    snprintf(self, sizeof(self), "%s", argv0);
  double r1 = callgrind_count(self, "instr_records", "record", n1);
  double r2 =
      r1 < 0 ? -1 : callgrind_count(self, "instr_records", "record", n2);
  double f1 = r2 < 0 ? -1 : callgrind_count(self, "instr_floor", "floor", n1);
  double f2 = f1 < 0 ? -1 : callgrind_count(self, "instr_floor", "floor", n2);
  if (f2 < 0) {
    printf("  instructions per record: not counted (valgrind not installed "
           "or its run failed; scripts/install-deps.sh installs it)\n");
    return false;
  }
  double rec = (r2 - r1) / (double)(n2 - n1),
         fl = (f2 - f1) / (double)(n2 - n1);
  printf("  instructions per record (callgrind, (I(%llu) - I(%llu)) / %llu): "
         "%.1f, floor %.1f, %.2fx (target <= 30: %s)\n",
         (unsigned long long)n2, (unsigned long long)n1,
         (unsigned long long)(n2 - n1), rec, fl, rec / fl,
         rec <= 30.05 ? "met" : "NOT met");
  return true;
}

int main(int argc, char **argv) {
  uint64_t records = 10000000;
  int runs = 7, processes = 1, cpu = -1;
  bool child = false, lchild = false, pin = false, instructions = true,
       only_instructions = false;
  const char *instr = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--records") == 0 && i + 1 < argc)
      records = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--processes") == 0 && i + 1 < argc)
      processes = atoi(argv[++i]);
    else if (strcmp(argv[i], "--pin") == 0)
      pin = true;
    else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc)
      cpu = atoi(argv[++i]);
    else if (strcmp(argv[i], "--child") == 0)
      child = true;
    else if (strcmp(argv[i], "--lttng-child") == 0)
      lchild = true;
    else if (strcmp(argv[i], "--instr") == 0 && i + 1 < argc)
      instr = argv[++i];
    else if (strcmp(argv[i], "--no-instructions") == 0)
      instructions = false;
    else if (strcmp(argv[i], "--instructions-only") == 0)
      only_instructions = true;
    else {
      fprintf(stderr,
              "usage: %s [--records N] [--runs N] [--processes N [--pin]] "
              "[--no-instructions]\n"
              "       %s --instructions-only\n"
              "       %s --instr record|floor --records N\n",
              argv[0], argv[0], argv[0]);
      return 1;
    }
  }
  if (instr)
    return instr_main(instr, records);
  if (only_instructions)
    return print_instructions(argv[0]) ? 0 : 1;
  if (runs < 1 || runs > MAX_RUNS || records == 0 || processes < 1 ||
      processes > MAX_RUNS) {
    fprintf(stderr,
            "activity: --runs and --processes 1 to %d, --records "
            ">= 1\n",
            MAX_RUNS);
    return 1;
  }
#if GP_HAVE_LTTNG_UST
  if (lchild)
    return lttng_child(records, runs);
#else
  if (lchild)
    return 1;
#endif
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      perror("activity: sched_setaffinity");
      return 1;
    }
  }
  result res;
  measure(records, runs, &res);
  if (child) {
    printf("child %.3f %.3f %.3f %ld\n", res.per1, res.floor, res.ratio,
           res.faults);
    return 0;
  }
  printf("bench/activity: %llu records per thread, %d interleaved runs, CPU "
         "time per record, median [min..max]\n",
         (unsigned long long)records, runs);
  printf("  gp_get_timestamp()  %s ns   (clock_gettime BOOTTIME %s ns)\n",
         res.s_ts, res.s_cg);
  printf("  1 thread:  %s ns/record   floor (rdtsc + 64 B store into a "
         "ring, the same runs): %s ns\n",
         res.s_per1, res.s_floor);
  printf("  ratio to the floor: %s (target <= 1.15x)\n", res.s_ratio);
  printf("  1 thread:  %s M records/s (wall)\n", res.s_r1);
  printf("  2 threads: %s ns/record  %s M records/s (wall)\n", res.s_per2,
         res.s_r2);
  printf("  2-thread speed-up: %.2fx   (target >= 1.9x on an idle machine)\n",
         res.r2 / res.r1);
  printf("  dropped records: %llu; page faults in the producing threads: "
         "%ld in the timed runs, %ld in the untimed first pass (fresh "
         "buffers)\n",
         (unsigned long long)res.dropped, res.faults, res.warm_faults);
#if GP_HAVE_LTTNG_UST
  const char *why = "";
  double lfloor = 0;
  uint64_t lrec = records < 2000000 ? records : 2000000;
  double lns = lttng_peer(argv[0], lrec, runs, &lfloor, &why);
  if (lns > 0)
    printf("  LTTng-UST tracepoint, recorded: %.1f ns/event (floor in that "
           "process %.1f ns: %.2fx); gpuperf is %.1fx cheaper\n",
           lns, lfloor, lns / lfloor, lns / res.per1);
  else
    printf("  LTTng-UST tracepoint: skipped: %s\n", why);
#else
  printf("  LTTng-UST tracepoint: skipped: built without liblttng-ust-dev "
         "(scripts/install-deps.sh installs it)\n");
#endif
  int rc = 0;
  if (processes > 1)
    rc = spread(argv[0], records, runs, processes, pin);
  if (instructions)
    print_instructions(argv[0]);
  return rc;
}
