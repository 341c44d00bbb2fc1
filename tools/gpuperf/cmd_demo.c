/*
 * cmd_demo.c - `gpuperf demo`: the main job on the built-in default.
 *
 * Runs the simulated training step (demo_workload.c) and records it twice
 * over: a tracing session writes the Perfetto trace (demo.pftrace, or
 * -o FILE), and the activity API's buffer callbacks, as any application
 * would use them, feed a summary: kernels, copies, API calls, per-GPU busy
 * time, drops, and what the trace holds and cost. The simulator runs in
 * virtual time and the session is deterministic, so the same options give
 * the same trace, byte for byte.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define MAX_NAMES 64
#define MAX_GPUS GP_SIM_MAX_DEVICES

typedef struct stat_row {
  uint32_t name_id;
  uint32_t display_id; /* demangled name, when there is one */
  uint64_t count;
  uint64_t total_ns, max_ns;
  uint64_t bytes;
} stat_row;

static struct {
  stat_row kernels[MAX_NAMES];
  int nkernels;
  stat_row copies[16]; /* by gp_memcpy_kind */
  stat_row memsets;
  stat_row apis[MAX_NAMES];
  int napis;
  uint64_t by_kind[GP_ACTIVITY_KIND_COUNT];
  uint64_t busy_ns[MAX_GPUS];
  uint64_t first_ts, last_ts;
  uint64_t ranges;
  uint64_t dropped_reported;
} S;

/* GPU work intervals per device, for busy time: the union of the
 * intervals of kernels, copies and fills (as `gpuperf report` defines it). */
typedef struct work_iv {
  uint64_t start, end;
} work_iv;
static struct {
  work_iv *iv;
  size_t n, cap;
} W[MAX_GPUS];

static void work(uint32_t device, uint64_t start, uint64_t end) {
  if (device >= MAX_GPUS || end < start)
    return;
  if (W[device].n == W[device].cap) {
    size_t cap = W[device].cap ? W[device].cap * 2 : 256;
    work_iv *p = realloc(W[device].iv, cap * sizeof(work_iv));
    if (!p)
      return;
    W[device].iv = p;
    W[device].cap = cap;
  }
  W[device].iv[W[device].n++] = (work_iv){start, end};
}

static int by_start(const void *a, const void *b) {
  uint64_t x = ((const work_iv *)a)->start, y = ((const work_iv *)b)->start;
  return x < y ? -1 : x > y;
}

/* The union of device g's work intervals, in ns. */
static uint64_t busy_ns(uint32_t g) {
  qsort(W[g].iv, W[g].n, sizeof(work_iv), by_start);
  uint64_t busy = 0, s = 0, e = 0;
  for (size_t i = 0; i < W[g].n; i++) {
    if (i == 0 || W[g].iv[i].start > e) {
      busy += e - s;
      s = W[g].iv[i].start;
      e = W[g].iv[i].end;
    } else if (W[g].iv[i].end > e) {
      e = W[g].iv[i].end;
    }
  }
  return busy + (e - s);
}

static stat_row *row_for(stat_row *rows, int *n, uint32_t name_id) {
  for (int i = 0; i < *n; i++)
    if (rows[i].name_id == name_id)
      return &rows[i];
  if (*n == MAX_NAMES)
    return NULL;
  rows[*n].name_id = name_id;
  return &rows[(*n)++];
}

static void add(stat_row *r, uint64_t start, uint64_t end, uint64_t bytes) {
  if (!r)
    return;
  uint64_t d = end > start ? end - start : 0;
  r->count++;
  r->total_ns += d;
  if (d > r->max_ns)
    r->max_ns = d;
  r->bytes += bytes;
}

static void span(uint64_t start, uint64_t end) {
  if (start && (!S.first_ts || start < S.first_ts))
    S.first_ts = start;
  if (end > S.last_ts)
    S.last_ts = end;
}

static void on_record(const gp_activity *r) {
  if (r->kind < GP_ACTIVITY_KIND_COUNT)
    S.by_kind[r->kind]++;
  switch (r->kind) {
  case GP_ACTIVITY_KIND_KERNEL: {
    const gp_activity_kernel *k = (const gp_activity_kernel *)r;
    stat_row *row = row_for(S.kernels, &S.nkernels, k->name_id);
    if (row)
      row->display_id = k->demangled_name_id;
    add(row, k->start, k->end, 0);
    if (k->device_id < MAX_GPUS)
      S.busy_ns[k->device_id] += k->end - k->start;
    work(k->device_id, k->start, k->end);
    span(k->start, k->end);
    break;
  }
  case GP_ACTIVITY_KIND_MEMCPY: {
    const gp_activity_memcpy *m = (const gp_activity_memcpy *)r;
    add(&S.copies[m->copy_kind & 15], m->start, m->end, m->bytes);
    span(m->start, m->end);
    work(m->device_id, m->start, m->end);
    break;
  }
  case GP_ACTIVITY_KIND_MEMSET: {
    const gp_activity_memset *m = (const gp_activity_memset *)r;
    add(&S.memsets, m->start, m->end, m->bytes);
    work(m->device_id, m->start, m->end);
    span(m->start, m->end);
    break;
  }
  case GP_ACTIVITY_KIND_API: {
    const gp_activity_api *a = (const gp_activity_api *)r;
    add(row_for(S.apis, &S.napis, a->name_id), a->start, a->end, 0);
    span(a->start, a->end);
    break;
  }
  case GP_ACTIVITY_KIND_MARKER: {
    const gp_activity_marker *m = (const gp_activity_marker *)r;
    if (m->flags & GP_ACTIVITY_FLAG_MARKER_START)
      S.ranges++;
    break;
  }
  case GP_ACTIVITY_KIND_DROPPED:
    S.dropped_reported += ((const gp_activity_dropped *)r)->count;
    break;
  default:
    break;
  }
}

#define BUFFER_SIZE (1u << 20)

/*
 * Activity buffers, as an application that cares about its overhead would
 * keep them. A fresh 1 MiB buffer costs 256 first-touch page faults (12-40
 * us each on the VMs we run on: a third of the traced demo's extra CPU),
 * which the collector pays when it pre-faults it. So buffers are carved
 * from arenas of ARENA_SIZE bytes aligned to a 2 MiB boundary with
 * transparent huge pages asked for (one fault per two buffers where the
 * kernel has huge pages to give), and completed buffers are kept for the
 * next requests, never freed until the end: the demo holds at most as many
 * as were ever outstanding at once. Requests come from any producing
 * thread, completions from the collector.
 */
#define ARENA_SIZE (8u << 20)
#define HUGE_PAGE (2u << 20)
#define MAX_ARENAS 64

static struct {
  pthread_mutex_t lock;
  uint8_t **free; /* completed buffers */
  size_t n, cap;
  uint8_t *arena[MAX_ARENAS];
  size_t narenas, used; /* bytes of the last arena handed out */
} pool = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, {NULL}, 0, ARENA_SIZE};

/* A new buffer from the arenas, or NULL. Caller holds pool.lock. */
static uint8_t *carve_locked(void) {
  if (pool.used + BUFFER_SIZE > ARENA_SIZE) {
    if (pool.narenas == MAX_ARENAS)
      return NULL;
    uint8_t *a = aligned_alloc(HUGE_PAGE, ARENA_SIZE);
    if (!a)
      return NULL;
#ifdef MADV_HUGEPAGE
    madvise(a, ARENA_SIZE, MADV_HUGEPAGE);
#endif
    pool.arena[pool.narenas++] = a;
    pool.used = 0;
  }
  uint8_t *b = pool.arena[pool.narenas - 1] + pool.used;
  pool.used += BUFFER_SIZE;
  return b;
}

static void request(uint8_t **buffer, size_t *size, size_t *max_records) {
  pthread_mutex_lock(&pool.lock);
  uint8_t *b = pool.n ? pool.free[--pool.n] : carve_locked();
  pthread_mutex_unlock(&pool.lock);
  *buffer = b;
  *size = b ? BUFFER_SIZE : 0;
  *max_records = 0;
}

static void complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size;
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(buffer, valid, &r) == 0)
    on_record(r);
  pthread_mutex_lock(&pool.lock);
  if (pool.n == pool.cap) {
    /* Never more than the buffers carved: room for all of them. */
    size_t cap = pool.narenas * (ARENA_SIZE / BUFFER_SIZE);
    uint8_t **f = realloc(pool.free, cap * sizeof(*f));
    if (f) {
      pool.free = f;
      pool.cap = cap;
    }
  }
  if (pool.n < pool.cap)
    pool.free[pool.n++] = buffer; /* else lost to reuse until the end */
  pthread_mutex_unlock(&pool.lock);
}

/* Frees the arenas (once the collector has stopped). */
static void pool_free(void) {
  pthread_mutex_lock(&pool.lock);
  for (size_t i = 0; i < pool.narenas; i++)
    free(pool.arena[i]);
  free(pool.free);
  pool.free = NULL;
  pool.n = pool.cap = pool.narenas = 0;
  pool.used = ARENA_SIZE;
  pthread_mutex_unlock(&pool.lock);
}

static int by_total_desc(const void *a, const void *b) {
  const stat_row *x = a, *y = b;
  return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static void print_summary(uint32_t gpus, uint32_t steps) {
  char b1[32], b2[32], b3[32];
  double wall = (double)(S.last_ts - S.first_ts);
  printf("gpuperf demo: %u simulated GPU%s, %u training step%s, %s traced\n\n",
         gpus, gpus == 1 ? "" : "s", steps, steps == 1 ? "" : "s",
         cli_fmt_ns(b1, sizeof(b1), wall));

  qsort(S.kernels, (size_t)S.nkernels, sizeof(stat_row), by_total_desc);
  printf("%-22s %8s %12s %12s %12s\n", "kernel", "count", "total", "avg",
         "max");
  for (int i = 0; i < S.nkernels; i++) {
    const stat_row *r = &S.kernels[i];
    /* The function name: the demangled name up to its parameter list. */
    const char *name =
        gp_activity_string(r->display_id ? r->display_id : r->name_id);
    char shortname[64];
    snprintf(shortname, sizeof(shortname), "%.*s", (int)strcspn(name, "("),
             name);
    printf("%-22.22s %8llu %12s %12s %12s\n", shortname,
           (unsigned long long)r->count,
           cli_fmt_ns(b1, sizeof(b1), (double)r->total_ns),
           cli_fmt_ns(b2, sizeof(b2), (double)r->total_ns / (double)r->count),
           cli_fmt_ns(b3, sizeof(b3), (double)r->max_ns));
  }

  printf("\n%-22s %8s %12s %12s %12s\n", "copy", "count", "bytes", "total",
         "bandwidth");
  for (int k = 0; k < 16; k++) {
    const stat_row *r = &S.copies[k];
    if (!r->count)
      continue;
    printf("%-22s %8llu %12s %12s %9.1f GB/s\n",
           gp_memcpy_kind_name((uint32_t)k), (unsigned long long)r->count,
           cli_fmt_bytes(b1, sizeof(b1), (double)r->bytes),
           cli_fmt_ns(b2, sizeof(b2), (double)r->total_ns),
           r->total_ns ? (double)r->bytes / (double)r->total_ns : 0.0);
  }
  if (S.memsets.count)
    printf("%-22s %8llu %12s %12s %9.1f GB/s\n", "memset",
           (unsigned long long)S.memsets.count,
           cli_fmt_bytes(b1, sizeof(b1), (double)S.memsets.bytes),
           cli_fmt_ns(b2, sizeof(b2), (double)S.memsets.total_ns),
           S.memsets.total_ns
               ? (double)S.memsets.bytes / (double)S.memsets.total_ns
               : 0.0);

  qsort(S.apis, (size_t)S.napis, sizeof(stat_row), by_total_desc);
  printf("\n%-28s %8s %12s\n", "API call", "count", "total");
  for (int i = 0; i < S.napis && i < 8; i++)
    printf("%-28s %8llu %12s\n", gp_activity_string(S.apis[i].name_id),
           (unsigned long long)S.apis[i].count,
           cli_fmt_ns(b1, sizeof(b1), (double)S.apis[i].total_ns));

  printf("\n%-22s %12s %12s %8s\n", "GPU", "kernel time", "busy", "busy %");
  for (uint32_t g = 0; g < gpus && g < MAX_GPUS; g++) {
    gp_device_info info;
    if (gp_device_get_info(g, &info) != 0)
      continue;
    double busy = (double)busy_ns(g);
    printf("%-22s %12s %12s %7.1f%%\n", info.name,
           cli_fmt_ns(b1, sizeof(b1), (double)S.busy_ns[g]),
           cli_fmt_ns(b2, sizeof(b2), busy),
           wall > 0 ? 100.0 * busy / wall : 0.0);
  }
  printf("(busy: time with any kernel, copy or fill running, overlaps once; "
         "%% of the time traced)\n");

  size_t dropped = 0;
  gp_activity_get_num_dropped_records(0, 0, &dropped);
  printf("\nrecords:");
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++)
    if (S.by_kind[k])
      printf(" %s %llu", gp_activity_kind_name(k),
             (unsigned long long)S.by_kind[k]);
  printf("\nuser ranges: %llu; dropped records: %zu\n",
         (unsigned long long)S.ranges, dropped);
}

/* The counters asked for by the demo's config. */
static const char demo_config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.log\" } }\n"
    "data_sources {\n"
    "  config {\n"
    "    name: \"gpu.counters\"\n"
    "    gpu_counter_config {\n"
    "      counter_period_ns: 500000\n"
    "      counter_names: \"Utilization\"\n"
    "      counter_names: \"sm__cycles_active.avg\"\n"
    "      counter_names: "
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
    "      counter_names: \"lts__t_sector_hit_rate.pct\"\n"
    "      counter_names: \"dram__bytes_read.sum\"\n"
    "      counter_names: \"dram__bytes_write.sum\"\n"
    "    }\n"
    "  }\n"
    "}\n";

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void print_trace(const char *path, const gp_session_stats *st,
                        double total_ns) {
  char b1[32], b2[32], b3[32];
  printf("trace: %s, %s in %llu packets (%llu GPU events, %llu slices and "
         "counter values, %llu GPU counter events)\n",
         path, cli_fmt_bytes(b1, sizeof(b1), (double)st->bytes),
         (unsigned long long)st->packets, (unsigned long long)st->render_stages,
         (unsigned long long)st->track_events,
         (unsigned long long)st->counter_events);
  if (st->counter_error)
    printf("counters: not recorded (%s)\n", gp_strerror(st->counter_error));
  else
    printf("counters: sampled on %u device%s\n", st->counter_devices,
           st->counter_devices == 1 ? "" : "s");
  printf("trace writer: %s of CPU time, %.1f%% of the %s the demo took\n",
         cli_fmt_ns(b2, sizeof(b2), (double)st->writer_ns),
         total_ns > 0 ? 100.0 * (double)st->writer_ns / total_ns : 0.0,
         cli_fmt_ns(b3, sizeof(b3), total_ns));
}

static void demo_usage(FILE *out) {
  fprintf(
      out,
      "usage: gpuperf demo [-o FILE] [-c CONFIG] [--gpus N] [--steps N] "
      "[--no-trace] [-q]\n"
      "                    [--machines N] [--jitter PCT [--seed N]] "
      "[--slow KERNEL=PCT]\n\n"
      "Runs a data-parallel training step on simulated GPUs (copies,\n"
      "matmul and softmax forward and backward, a peer-to-peer\n"
      "gradient exchange), writes a Perfetto trace of it and\n"
      "summarises what the activity API saw. Deterministic: the same\n"
      "options give the same trace, byte for byte.\n\n"
      "  -o, --output FILE  trace file (default demo.pftrace)\n"
      "  -c CONFIG          a TraceConfig text file (default: render stages,\n"
      "                     and counters every 500 us with Utilization)\n"
      "  --gpus N           simulated compute GPUs, 1 to 8 (default 2)\n"
      "  --steps N          training steps, 1 to 1000000 (default 10)\n"
      "  --no-trace         run without writing a trace\n"
      "  --machines N       N simulated nodes, one trace each (FILE-nodeK),\n"
      "                     each on its own clocks; see gpuperf merge\n"
      "  --collective       an \"allreduce\" range around each gradient\n"
      "                     exchange (set by --machines)\n"
      "  --jitter PCT       each kernel launch does up to +-PCT %% more or\n"
      "                     less work, drawn from --seed N (default 0): runs\n"
      "                     with noise, for gpuperf diff; still deterministic\n"
      "  --slow KERNEL=PCT  that kernel (e.g. matmul_kernel) does PCT %%\n"
      "                     more work: a real change, for gpuperf diff\n"
      "  -q, --quiet        no summary\n");
}

/* See cli.h. */
int cmd_demo(int argc, char **argv) {
  demo_options opts = {2, 10, false, 0, 0, NULL, 0};
  uint32_t machines = 0;
  const char *output = "demo.pftrace", *config = NULL;
  bool trace = true, quiet = false;
  static const struct option longopts[] = {
      {"gpus", required_argument, 0, 'g'},
      {"steps", required_argument, 0, 's'},
      {"output", required_argument, 0, 'o'},
      {"no-trace", no_argument, 0, 'n'},
      {"machines", required_argument, 0, 'm'},
      {"collective", no_argument, 0, 'C'},
      {"jitter", required_argument, 0, 'J'},
      {"seed", required_argument, 0, 'S'},
      {"slow", required_argument, 0, 'W'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  uint64_t v;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "ho:c:q", longopts, NULL)) != -1) {
    switch (c) {
    case 'g':
      if (!cli_parse_u64("--gpus", optarg, 1, MAX_GPUS, &v))
        return CLI_USAGE;
      opts.gpus = (uint32_t)v;
      break;
    case 's':
      if (!cli_parse_u64("--steps", optarg, 1, 1000000, &v))
        return CLI_USAGE;
      opts.steps = (uint32_t)v;
      break;
    case 'o':
      if (!*optarg)
        return cli_error(CLI_USAGE, "-o needs a file name");
      output = optarg;
      break;
    case 'n':
      trace = false;
      break;
    case 'm':
      if (!cli_parse_u64("--machines", optarg, 1, 1024, &v))
        return CLI_USAGE;
      machines = (uint32_t)v;
      break;
    case 'C':
      opts.collective = true;
      break;
    case 'J': {
      char *end;
      opts.jitter = strtod(optarg, &end);
      if (end == optarg || *end || !(opts.jitter >= 0 && opts.jitter <= 50))
        return cli_error(CLI_USAGE,
                         "demo: --jitter '%s' is not a percent "
                         "from 0 to 50",
                         optarg);
      break;
    }
    case 'S':
      if (!cli_parse_u64("--seed", optarg, 0, UINT32_MAX, &v))
        return CLI_USAGE;
      opts.seed = (uint32_t)v;
      break;
    case 'W': {
      const char *eq = strrchr(optarg, '=');
      char *end;
      opts.slow_pct = eq ? strtod(eq + 1, &end) : NAN;
      if (!eq || eq == optarg || end == eq + 1 || *end ||
          !(opts.slow_pct > -90 && opts.slow_pct <= 1000))
        return cli_error(CLI_USAGE,
                         "demo: --slow '%s' is not KERNEL=PCT "
                         "(PCT from -90 to 1000)",
                         optarg);
      static char name[128];
      snprintf(name, sizeof(name), "%.*s", (int)(eq - optarg), optarg);
      opts.slow = name;
      break;
    }
    case 'q':
      quiet = true;
      break;
    case 'c':
      config = optarg;
      break;
    case 'h':
      demo_usage(stdout);
      return CLI_OK;
    default:
      return cli_error(CLI_USAGE,
                       "demo: bad option or missing value in '%s' (see "
                       "--help)",
                       argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "demo: unexpected argument '%s' (see --help)",
                     argv[optind]);
  if (machines && !trace)
    return cli_error(CLI_USAGE, "--machines writes traces: drop --no-trace");
  if (machines)
    return demo_machines(machines, &opts, config, output);

  double t0 = now_ns();
  int rc = demo_sim_init(&opts);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "cannot start the simulated GPUs: %s",
                     gp_strerror(rc));
  rc = gp_activity_register_callbacks(request, complete);
  for (uint32_t k = 1; rc == 0 && k < GP_ACTIVITY_KIND_COUNT; k++)
    if (strcmp(gp_activity_kind_name(k), "UNKNOWN") != 0) /* not a kind */
      rc = gp_activity_enable((gp_activity_kind)k);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "demo failed: %s", gp_strerror(rc));

  gp_session *session = NULL;
  struct stat ost;
  bool had_output = trace && lstat(output, &ost) == 0 && S_ISREG(ost.st_mode);
  if (trace) {
    gp_trace_config *cfg = NULL;
    char err[512] = "";
    const char *text = demo_config;
    size_t len = sizeof(demo_config) - 1;
    char *file = NULL;
    if (config) {
      FILE *f = fopen(config, "rb");
      if (!f)
        return cli_error(CLI_BAD_INPUT, "cannot read %s: %s", config,
                         strerror(errno));
      file = malloc(1 << 20);
      len = file ? fread(file, 1, (1 << 20) - 1, f) : 0;
      fclose(f);
      if (!file)
        return cli_error(CLI_BAD_INPUT, "out of memory");
      text = file;
    }
    rc = gp_trace_config_parse(text, len, &cfg, err, sizeof(err));
    free(file);
    if (rc != 0)
      return cli_error(CLI_BAD_INPUT, "%s: %s", config ? config : "demo config",
                       err);
    gp_session_options so;
    memset(&so, 0, sizeof(so));
    so.flags = GP_SESSION_DETERMINISTIC;
    so.error = err;
    so.error_size = sizeof(err);
    rc = gp_session_start(cfg, output, &so, &session);
    gp_trace_config_destroy(cfg);
    if (rc != 0)
      return cli_error(CLI_BAD_INPUT, "cannot record the demo: %s",
                       err[0] ? err : gp_strerror(rc));
  }
  rc = demo_workload_run(&opts);
  int src = session ? gp_session_stop(session) : 0;
  int frc = gp_activity_finalize();
  pool_free();
  double total = now_ns() - t0;
  if (rc != 0 || frc != 0) {
    gp_session_destroy(session);
    return cli_error(CLI_BAD_INPUT, "demo failed: %s",
                     gp_strerror(rc ? rc : frc));
  }
  if (src != 0) {
    gp_session_destroy(session);
    /* The session put what it wrote (whole packets) at output, and the
     * file there before at output.old (gp_session_start()). */
    struct stat st;
    char old[4200];
    snprintf(old, sizeof(old), "%s.old", output);
    bool kept = had_output && lstat(old, &st) == 0;
    return cli_error(
        CLI_BAD_INPUT, "cannot write %s: %s: the trace is incomplete%s%s",
        output, gp_strerror(src), kept ? "; the previous file is kept as " : "",
        kept ? old : "");
  }
  if (session && gp_session_warning(session)) /* even with -q */
    fprintf(stderr, "gpuperf demo: warning: %s\n", gp_session_warning(session));
  if (!quiet)
    print_summary(opts.gpus, opts.steps);
  if (session && !quiet) {
    gp_session_stats st;
    gp_session_get_stats(session, &st);
    printf("\n");
    print_trace(output, &st, total);
  }
  gp_session_destroy(session);
  for (uint32_t g = 0; g < MAX_GPUS; g++)
    free(W[g].iv);
  return CLI_OK;
}
