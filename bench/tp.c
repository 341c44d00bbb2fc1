/*
 * bench/tp.c - the trace processor's import throughput, memory, and the
 * seed query's latency.
 *
 *   build/bench/tp [--events N] [--kernels K] [--runs R] [--trace FILE]
 *                  [--keep] [--demo-steps N]
 *
 * Writes a synthetic GPU trace the way a recording session does (pb.h's
 * writer: 4-byte redundant lengths, interned names, descriptor mode 2):
 * two GPUs, K kernels (a render-stage event each, with launch dims and a
 * GpuCorrelation to a host API-call slice, begin and end), and periodic
 * counter samples (Utilization, SM active cycles, DRAM bytes) filling up
 * to N packets in all. Then, R times, in a fresh child process each:
 * imports it (gp_tp_open) and runs the seed's top-5-kernels query, and
 * prints the medians: packets/s and MB/s imported on one core, peak
 * resident memory (VmHWM) over the trace size, and the query's latency.
 * Targets (issue 5): >= 1.5 M events/s; peak <= 3x the trace; the seed
 * query <= 2 s at >= 100 k kernels and >= 1 M counter samples (issue 15:
 * <= 0.3 s of CPU).
 * Where GPUPERF_PERFETTO_TP names Perfetto's trace_processor_shell, it is
 * timed on the same ~50 MB seed-query trace (import + the seed query, in
 * one run of this program) and the ratios of CPU time and peak memory are
 * printed; otherwise a line says it was skipped and why.
 * Then the same for a demo-shaped trace (`gpuperf demo --steps N`,
 * default 10000; 0 skips it), with issue 15's targets: import <= 12 ms of
 * CPU per MB, peak <= 1.5x the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "gpuperf/tp.h"
#include "perfetto/pb.h"

#define GPUS 2
#define NKERNELS 8

static const char *const kernel_names[NKERNELS] = {
    "matmul_kernel",      "matmul_bwd_kernel", "softmax_kernel",
    "softmax_bwd_kernel", "layernorm_kernel",  "gelu_kernel",
    "allreduce_kernel",   "adam_update_kernel"};

static const char seed_query[] =
    "INCLUDE PERFETTO MODULE counters.intervals;\n"
    "INCLUDE PERFETTO MODULE intervals.intersect;\n"
    "WITH\n"
    "  utilization AS (\n"
    "    SELECT u.id, u.ts, u.dur, u.value, gct.ugpu\n"
    "    FROM counter_leading_intervals!((\n"
    "      SELECT c.id, c.ts, c.track_id, c.value\n"
    "      FROM counter c\n"
    "      JOIN gpu_counter_track gct ON gct.id = c.track_id\n"
    "      WHERE gct.name = 'Utilization'\n"
    "    )) u\n"
    "    JOIN gpu_counter_track gct ON gct.id = u.track_id\n"
    "  ),\n"
    "  top_kernels AS (\n"
    "    SELECT\n"
    "      s.id, s.ts, s.dur, s.name,\n"
    "      extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu\n"
    "    FROM gpu_slice s\n"
    "    JOIN gpu_track t ON s.track_id = t.id\n"
    "    WHERE s.render_stage_category = 2 AND s.dur > 0\n"
    "    ORDER BY s.dur DESC\n"
    "    LIMIT 5\n"
    "  )\n"
    "SELECT\n"
    "  k.name AS kernel,\n"
    "  g.name AS gpu_name,\n"
    "  k.dur AS dur_ns,\n"
    "  SUM(u.value * ii.dur) / k.dur AS avg_utilization\n"
    "FROM top_kernels k\n"
    "LEFT JOIN gpu g ON g.id = k.ugpu\n"
    "JOIN _interval_intersect!((top_kernels, utilization), (ugpu)) ii\n"
    "  ON ii.id_0 = k.id\n"
    "JOIN utilization u ON u.id = ii.id_1\n"
    "GROUP BY k.id, k.name, g.name, k.dur\n"
    "ORDER BY k.dur DESC;\n";

/* ------------------------------------------------------------------ */
/* Trace generation                                                      */

/* Sequences: each writes into its own buffer, flushed to the file in
 * chunks as a recording session's per-thread buffers are. */
enum { SEQ_HOST = 1, SEQ_CTR = 2, SEQ_GPU0 = 3, NSEQ = SEQ_GPU0 + GPUS };
#define CHUNK (64u << 10)

typedef struct gen {
  gp__pb_writer seqw[NSEQ];
  gp__pb_writer w; /* the packet being written, then appended */
  FILE *out;
  uint64_t packets, kernels, samples, slices, bytes;
  uint32_t rng;
  uint32_t cur_seq;
} gen;

static uint32_t rnd(gen *g) {
  g->rng = g->rng * 1664525u + 1013904223u;
  return g->rng >> 8;
}

static int write_chunk(void *user, const uint8_t *data, size_t len) {
  gen *g = user;
  return fwrite(data, 1, len, g->out) == len ? 0 : -1;
}

/* Writes sequence seq's buffer to the file if it is full (or force). */
static int flush_seq(gen *g, uint32_t seq, bool force) {
  gp__pb_writer *w = &g->seqw[seq];
  if (!force && gp__pb_size(w) < CHUNK)
    return 0;
  if (gp__pb_error(w) || gp__pb_for_each(w, write_chunk, g) != 0)
    return -1;
  g->bytes += gp__pb_size(w);
  gp__pb_writer_reset(w);
  return 0;
}

static int copy_chunk(void *user, const uint8_t *data, size_t len) {
  gp__pb_raw(user, data, len);
  return 0;
}

/* Ends the packet begun by packet_begin: appends it to its sequence. */
static int packet_end(gen *g) {
  gp__pb_end(&g->w);
  gp__pb_for_each(&g->w, copy_chunk, &g->seqw[g->cur_seq]);
  gp__pb_writer_reset(&g->w);
  return flush_seq(g, g->cur_seq, false);
}

static void packet_begin(gen *g, uint64_t ts, uint32_t seq, uint32_t flags) {
  g->cur_seq = seq;
  gp__pb_begin(&g->w, 1);
  if (ts)
    gp__pb_uint(&g->w, 8, ts);
  gp__pb_uint(&g->w, 10, seq);
  if (flags)
    gp__pb_uint(&g->w, 13, flags);
  g->packets++;
}

enum { CTR_UTIL = 1, CTR_SM_ACTIVE = 2, CTR_DRAM_READ = 3, CTR_DRAM_WRITE = 4 };

static int preamble(gen *g, uint64_t t0) {
  gp__pb_writer *w = &g->w;
  int rc = 0;
  /* Clock snapshot: BOOTTIME and MONOTONIC. */
  packet_begin(g, 0, SEQ_HOST, 0);
  gp__pb_begin(w, 6);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, 6);
  gp__pb_uint(w, 2, t0);
  gp__pb_end(w);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, 3);
  gp__pb_uint(w, 2, t0 - 1000000);
  gp__pb_end(w);
  gp__pb_end(w);
  rc |= packet_end(g);
  /* GpuInfo. */
  packet_begin(g, 0, SEQ_HOST, 0);
  gp__pb_begin(w, 128);
  for (int i = 0; i < GPUS; i++) {
    char name[64];
    snprintf(name, sizeof(name), "Simulated GPU #%d", i + 1);
    gp__pb_begin(w, 1);
    gp__pb_string(w, 1, name);
    gp__pb_string(w, 2, "gpuperf");
    gp__pb_string(w, 3, "sim-compute");
    gp__pb_end(w);
  }
  gp__pb_end(w);
  rc |= packet_end(g);
  /* Host: process and thread descriptors, interned API names. */
  packet_begin(g, t0, SEQ_HOST, 1);
  gp__pb_begin(w, 60);
  gp__pb_uint(w, 1, 100);
  gp__pb_begin(w, 3);
  gp__pb_uint(w, 1, 4242);
  gp__pb_string(w, 6, "trainer");
  gp__pb_end(w);
  gp__pb_end(w);
  gp__pb_begin(w, 12);
  gp__pb_begin(w, 2);
  gp__pb_uint(w, 1, 1);
  gp__pb_string(w, 2, "cudaLaunchKernel");
  gp__pb_end(w);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, 1);
  gp__pb_string(w, 2, "cuda");
  gp__pb_end(w);
  gp__pb_end(w);
  rc |= packet_end(g);
  packet_begin(g, t0, SEQ_HOST, 0);
  gp__pb_begin(w, 60);
  gp__pb_uint(w, 1, 101);
  gp__pb_uint(w, 5, 100);
  gp__pb_begin(w, 4);
  gp__pb_uint(w, 1, 4242);
  gp__pb_uint(w, 2, 4243);
  gp__pb_string(w, 5, "trainer-main");
  gp__pb_end(w);
  gp__pb_end(w);
  rc |= packet_end(g);
  /* Counters: interned descriptors, one per GPU. */
  static const struct {
    uint32_t id;
    const char *name;
    uint32_t num, group;
  } specs[] = {{CTR_UTIL, "Utilization", 37, 1},
               {CTR_SM_ACTIVE, "sm__cycles_active.avg", 0, 6},
               {CTR_DRAM_READ, "dram__bytes_read.sum", 7, 5},
               {CTR_DRAM_WRITE, "dram__bytes_write.sum", 7, 5}};
  packet_begin(g, t0, SEQ_CTR, 1);
  gp__pb_begin(w, 12);
  for (int i = 0; i < GPUS; i++) {
    gp__pb_begin(w, 47);
    gp__pb_uint(w, 1, (uint64_t)i + 1);
    gp__pb_int(w, 3, i);
    gp__pb_begin(w, 2);
    for (size_t s = 0; s < 4; s++) {
      gp__pb_begin(w, 1);
      gp__pb_uint(w, 1, specs[s].id);
      gp__pb_string(w, 2, specs[s].name);
      if (specs[s].num)
        gp__pb_uint(w, 7, specs[s].num);
      gp__pb_uint(w, 10, specs[s].group);
      gp__pb_end(w);
    }
    gp__pb_end(w);
    gp__pb_end(w);
  }
  gp__pb_end(w);
  rc |= packet_end(g);
  /* GPUs: context, queue, stage, kernels. */
  for (int i = 0; i < GPUS; i++) {
    packet_begin(g, t0, SEQ_GPU0 + (uint32_t)i, 1);
    gp__pb_begin(w, 12);
    gp__pb_begin(w, 23);
    gp__pb_uint(w, 1, 0x7f0000 + (uint64_t)i);
    gp__pb_uint(w, 2, 4242);
    gp__pb_uint(w, 3, 4);
    gp__pb_end(w);
    gp__pb_begin(w, 24);
    gp__pb_uint(w, 1, 1);
    gp__pb_string(w, 2, "Stream #7");
    gp__pb_uint(w, 4, 2);
    gp__pb_end(w);
    gp__pb_begin(w, 24);
    gp__pb_uint(w, 1, 2);
    gp__pb_string(w, 2, "kernel");
    gp__pb_uint(w, 4, 2);
    gp__pb_end(w);
    for (int k = 0; k < NKERNELS; k++) {
      gp__pb_begin(w, 1000);
      gp__pb_uint(w, 1, (uint64_t)k + 1);
      gp__pb_string(w, 2, kernel_names[k]);
      gp__pb_string(w, 3, kernel_names[k]);
      gp__pb_end(w);
      gp__pb_begin(w, 2);
      gp__pb_uint(w, 1, (uint64_t)k + 1);
      gp__pb_string(w, 2, kernel_names[k]);
      gp__pb_end(w);
    }
    gp__pb_end(w);
    rc |= packet_end(g);
  }
  return rc;
}

static int kernel(gen *g, uint64_t ts, int gpu, uint64_t event_id,
                  uint64_t dur) {
  gp__pb_writer *w = &g->w;
  int k = (int)(rnd(g) % NKERNELS), rc = 0;
  /* The host call that launched it, with its correlation. */
  packet_begin(g, ts - 3000, SEQ_HOST, 2);
  gp__pb_begin(w, 11);
  gp__pb_uint(w, 9, 1);
  gp__pb_uint(w, 11, 101);
  gp__pb_uint(w, 3, 1);
  gp__pb_uint(w, 10, 1);
  gp__pb_begin(w, 3000);
  gp__pb_uint(w, 1, event_id);
  gp__pb_end(w);
  gp__pb_end(w);
  rc |= packet_end(g);
  packet_begin(g, ts - 1000, SEQ_HOST, 2);
  gp__pb_begin(w, 11);
  gp__pb_uint(w, 9, 2);
  gp__pb_uint(w, 11, 101);
  gp__pb_end(w);
  rc |= packet_end(g);
  g->slices++;
  /* The kernel. */
  packet_begin(g, ts, SEQ_GPU0 + (uint32_t)gpu, 2);
  gp__pb_begin(w, 53);
  gp__pb_uint(w, 1, event_id);
  gp__pb_uint(w, 2, dur);
  gp__pb_uint(w, 13, 1);
  gp__pb_uint(w, 14, 2);
  gp__pb_uint(w, 5, 0x7f0000 + (uint64_t)gpu);
  gp__pb_int(w, 11, gpu);
  gp__pb_uint(w, 19, (uint64_t)k + 1);
  gp__pb_uint(w, 20, (uint64_t)k + 1);
  gp__pb_uint(w, 10, (uint32_t)event_id);
  gp__pb_begin(w, 21);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, 1024 + rnd(g) % 4);
  gp__pb_uint(w, 2, 1);
  gp__pb_uint(w, 3, 1);
  gp__pb_end(w);
  gp__pb_begin(w, 2);
  gp__pb_uint(w, 1, 256);
  gp__pb_uint(w, 2, 1);
  gp__pb_uint(w, 3, 1);
  gp__pb_end(w);
  gp__pb_end(w);
  gp__pb_end(w);
  rc |= packet_end(g);
  g->kernels++;
  return rc;
}

static int sample(gen *g, uint64_t ts, int gpu, uint32_t id, bool busy) {
  gp__pb_writer *w = &g->w;
  packet_begin(g, ts, SEQ_CTR, 2);
  gp__pb_begin(w, 52);
  gp__pb_uint(w, 4, (uint64_t)gpu + 1);
  gp__pb_begin(w, 2);
  gp__pb_uint(w, 1, id);
  if (id == CTR_UTIL)
    gp__pb_double(w, 3, busy ? 60.0 + rnd(g) % 40 : (double)(rnd(g) % 20));
  else
    gp__pb_uint(w, 2, rnd(g) % 1000000);
  gp__pb_end(w);
  gp__pb_end(w);
  g->samples++;
  return packet_end(g);
}

/*
 * Writes a trace of about `packets` packets with `kernels` kernels to
 * path. Each GPU runs kernels back to back; a sampler takes counters at a
 * fixed period over the same time span, alternating Utilization and the
 * others, one counter per packet. Every sequence is in time order and is
 * flushed to the file in 64 KiB chunks.
 */
static int generate(const char *path, uint64_t packets, uint64_t kernels,
                    gen *g) {
  memset(g, 0, sizeof(*g));
  g->rng = 12345;
  g->out = fopen(path, "wb");
  if (!g->out)
    return -errno;
  gp__pb_writer_init(&g->w);
  for (int i = 0; i < NSEQ; i++)
    gp__pb_writer_init(&g->seqw[i]);
  uint64_t t0 = 1000000000000ull;
  int rc = preamble(g, t0);
  uint64_t kernel_packets = kernels * 3;
  uint64_t samples = packets > kernel_packets + g->packets
                         ? packets - kernel_packets - g->packets
                         : 0;
  /* Kernels take 2-22 us; two GPUs share the time line. */
  uint64_t span = kernels / GPUS * 12500 + 20000;
  uint64_t period = samples ? span / samples : span;
  if (period == 0)
    period = 1;
  uint64_t kts[GPUS], event_id = 1, s = 0, k = 0;
  for (int i = 0; i < GPUS; i++)
    kts[i] = t0 + 10000;
  uint64_t sts = t0 + 10000;
  while (!rc && (k < kernels || s < samples)) {
    int gpu = (int)(k % GPUS);
    if (k < kernels && (s >= samples || kts[gpu] <= sts)) {
      uint64_t dur = 2000 + rnd(g) % 20000;
      rc = kernel(g, kts[gpu], gpu, event_id++, dur);
      kts[gpu] += dur + 500;
      k++;
    } else {
      uint32_t id = (s % 2 == 0) ? CTR_UTIL : (uint32_t)(2 + (s / 2) % 3);
      rc = sample(g, sts, (int)(s / 2 % GPUS), id, s % 3 != 0);
      sts += period;
      s++;
    }
  }
  for (int i = 0; i < NSEQ && !rc; i++)
    rc = flush_seq(g, (uint32_t)i, true);
  for (int i = 0; i < NSEQ; i++)
    gp__pb_writer_fini(&g->seqw[i]);
  gp__pb_writer_fini(&g->w);
  if (fclose(g->out) != 0 && !rc)
    rc = -errno;
  return rc;
}

/* ------------------------------------------------------------------ */
/* Measuring                                                             */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A field of /proc/self/status in kB. */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof(line), f))
    if (strncmp(line, field, n) == 0 && line[n] == ':')
      v = strtol(line + n + 1, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

typedef struct result {
  double import_s, query_s, import_cpu, query_cpu;
  long base_kb, peak_kb, after_kb; /* after_kb: resident once imported */
  uint64_t events, rows;
  int rc;
} result;

static void run_child(const char *path, int fd) {
  result r;
  memset(&r, 0, sizeof(r));
  r.base_kb = status_kb("VmRSS");
  gp_tp *tp;
  gp_tp_error err;
  double t0 = now_s(), c0 = cpu_s();
  r.rc = gp_tp_open(path, NULL, &tp, &err);
  r.import_s = now_s() - t0;
  r.import_cpu = cpu_s() - c0;
  r.peak_kb = status_kb("VmHWM");
  r.after_kb = status_kb("VmRSS");
  if (r.rc == 0) {
    gp_tp_info info;
    gp_tp_get_info(tp, &info);
    r.events = info.events;
    FILE *devnull = fopen("/dev/null", "w");
    t0 = now_s();
    c0 = cpu_s();
    r.rc =
        gp_tp_write(tp, seed_query, GP_TP_FORMAT_CSV, devnull, &r.rows, &err);
    r.query_s = now_s() - t0;
    r.query_cpu = cpu_s() - c0;
    if (r.rc)
      fprintf(stderr, "bench/tp: query: %s\n", err.message);
    fclose(devnull);
    gp_tp_close(tp);
  } else {
    fprintf(stderr, "bench/tp: %s\n", err.message);
  }
  if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
    _exit(1);
  _exit(0);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Medians over the runs of one trace. */
typedef struct medians {
  double import_wall, import_cpu, query_wall, query_cpu, peak, peak_delta;
  uint64_t events, rows;
} medians;

static int measure_trace(const char *path, uint64_t bytes, int runs,
                         medians *m);

/* Writes a trace of `packets` packets and `kernels` kernels to path and
 * measures it `runs` times. Returns 0 or 1. */
static int bench_trace(const char *path, uint64_t packets, uint64_t kernels,
                       int runs, gen *g, medians *m) {
  double t0 = now_s();
  int rc = generate(path, packets, kernels, g);
  if (rc) {
    fprintf(stderr, "bench/tp: writing %s: %s\n", path, gp_strerror(rc));
    return 1;
  }
  printf("\ntrace %s: %.1f MB, %" PRIu64 " packets (%" PRIu64
         " kernels, %" PRIu64 " API slices, %" PRIu64
         " counter samples, half of them Utilization), written in %.2f s\n",
         path, (double)g->bytes / 1e6, g->packets, g->kernels, g->slices,
         g->samples, now_s() - t0);
  return measure_trace(path, g->bytes, runs, m);
}

/* Imports path (bytes long) and runs the seed query `runs` times, each in
 * a fresh process. Returns 0 or 1. */
static int measure_trace(const char *path, uint64_t bytes, int runs,
                         medians *m) {
  double imp[15], qry[15], impc[15], qryc[15], peak[15], delta[15];
  result r = {0};
  for (int i = 0; i < runs; i++) {
    int fds[2];
    if (pipe(fds) != 0)
      return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      run_child(path, fds[1]);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], &r, sizeof(r));
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof(r) || r.rc != 0) {
      fprintf(stderr, "bench/tp: run %d failed\n", i + 1);
      return 1;
    }
    imp[i] = r.import_s;
    qry[i] = r.query_s;
    impc[i] = r.import_cpu;
    qryc[i] = r.query_cpu;
    peak[i] = (double)r.peak_kb * 1024.0 / (double)bytes;
    delta[i] = (double)(r.peak_kb - r.base_kb) * 1024.0 / (double)bytes;
    printf("  run %d: import %.3f s (CPU %.3f s), seed query %.3f s (CPU "
           "%.3f s, %" PRIu64 " rows), peak RSS %.1f MB, %.1f MB resident "
           "once imported (%.1f MB before)\n",
           i + 1, r.import_s, r.import_cpu, r.query_s, r.query_cpu, r.rows,
           (double)r.peak_kb / 1024.0, (double)r.after_kb / 1024.0,
           (double)r.base_kb / 1024.0);
  }
  m->import_wall = median(imp, runs);
  m->import_cpu = median(impc, runs);
  m->query_wall = median(qry, runs);
  m->query_cpu = median(qryc, runs);
  m->peak = median(peak, runs);
  m->peak_delta = median(delta, runs);
  m->events = r.events;
  m->rows = r.rows;
  return 0;
}

/*
 * Where GPUPERF_PERFETTO_TP names Perfetto's trace_processor_shell: runs
 * it on the same trace with the seed query (-q), `runs` times, and prints
 * the medians of its CPU time, wall time and peak memory beside ours
 * (import + query) and the ratios. Otherwise prints why it is skipped.
 */
static void versus_perfetto(const char *path, const medians *m, uint64_t bytes,
                            int runs) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || !*shell || access(shell, X_OK) != 0) {
    printf("vs Perfetto's trace processor: skipped (GPUPERF_PERFETTO_TP does "
           "not name an executable trace_processor_shell)\n");
    return;
  }
  char qfile[700];
  snprintf(qfile, sizeof(qfile), "%s.sql", path);
  FILE *f = fopen(qfile, "w");
  if (!f || fputs(seed_query, f) < 0 || fclose(f) != 0) {
    printf("vs Perfetto's trace processor: cannot write %s\n", qfile);
    return;
  }
  double cpu[15], wall[15], rss[15];
  for (int i = 0; i < runs; i++) {
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stdout))
        _exit(126);
      execl(shell, shell, "-q", qfile, path, (char *)NULL);
      _exit(127);
    }
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0) {
      printf("vs Perfetto's trace processor: %s failed on %s\n", shell, path);
      unlink(qfile);
      return;
    }
    wall[i] = now_s() - t0;
    cpu[i] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    rss[i] = (double)ru.ru_maxrss * 1024.0;
  }
  unlink(qfile);
  double pc = median(cpu, runs), pw = median(wall, runs);
  double pr = median(rss, runs);
  double oc = m->import_cpu + m->query_cpu, ow = m->import_wall + m->query_wall;
  double orss = m->peak * (double)bytes;
  printf("vs Perfetto's trace processor (%s) on the same %.1f MB trace, "
         "import + seed query: ours %.3f s CPU (wall %.3f s), %.0f MB peak; "
         "Perfetto's %.3f s CPU (wall %.3f s), %.0f MB peak; ratio %.2f of its "
         "time, %.2f of its memory\n",
         shell, (double)bytes / 1e6, oc, ow, orss / 1e6, pc, pw, pr / 1e6,
         oc / pc, orss / pr);
}

/*
 * A demo-shaped trace: `gpuperf demo --steps N` (the CLI next to this
 * program) writes it, then it is measured like the synthetic ones: import
 * CPU per MB, peak memory over its size, the seed query. The demo is
 * arg-heavy (launch metrics, copy details), unlike the synthetic trace.
 */
static int bench_demo(const char *argv0, long steps, int runs) {
  char cli[4096], out[64], nsteps[32];
  snprintf(cli, sizeof(cli), "%s", argv0);
  char *slash = strrchr(cli, '/');
  snprintf(slash ? slash + 1 : cli,
           sizeof(cli) - (size_t)(slash ? slash + 1 - cli : 0), "../gpuperf");
  if (access(cli, X_OK) != 0) {
    printf("\ndemo trace: %s not found (build the CLI first): skipped\n", cli);
    return 0;
  }
  snprintf(out, sizeof(out), "/tmp/gpuperf-bench-tp-demo-%d.pftrace",
           (int)getpid());
  snprintf(nsteps, sizeof(nsteps), "%ld", steps);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout))
      _exit(127);
    execl(cli, "gpuperf", "demo", "--steps", nsteps, "-o", out, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  struct stat sb;
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0 || stat(out, &sb) != 0) {
    fprintf(stderr, "bench/tp: gpuperf demo --steps %ld failed\n", steps);
    unlink(out);
    return 1;
  }
  printf("\ndemo trace %s: %.1f MB (gpuperf demo --steps %ld)\n", out,
         (double)sb.st_size / 1e6, steps);
  medians m;
  int rc = measure_trace(out, (uint64_t)sb.st_size, runs, &m);
  unlink(out);
  if (rc)
    return 1;
  double mb = (double)sb.st_size / 1e6;
  printf("demo trace: import %.1f ms of CPU per MB (target <= 12) [%s], "
         "%.2f M events/s; peak memory %.2fx the trace (target <= 1.5x) [%s], "
         "%.2fx counting only what the import added; seed query %.3f s CPU\n",
         m.import_cpu * 1e3 / mb,
         m.import_cpu * 1e3 / mb <= 12 ? "met" : "MISSED",
         (double)m.events / m.import_cpu / 1e6, m.peak,
         m.peak <= 1.5 ? "met" : "MISSED", m.peak_delta, m.query_cpu);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t events = 5200000, kernels = 200000;
  long demo_steps = 10000;
  uint64_t q_kernels = 100000, q_samples = 1050000;
  int runs = 3;
  const char *trace = NULL;
  bool keep = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
      events = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--kernels") == 0 && i + 1 < argc)
      kernels = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc)
      trace = argv[++i];
    else if (strcmp(argv[i], "--keep") == 0)
      keep = true;
    else if (strcmp(argv[i], "--demo-steps") == 0 && i + 1 < argc)
      demo_steps = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: bench/tp [--events N] [--kernels K] [--runs R] "
                      "[--trace FILE] [--keep] [--demo-steps N]\n");
      return 1;
    }
  }
  if (runs < 1 || runs > 15)
    runs = 3;
  char path[512], qpath[600];
  if (trace)
    snprintf(path, sizeof(path), "%s", trace);
  else
    snprintf(path, sizeof(path), "/tmp/gpuperf-bench-tp-%ld.pftrace",
             (long)getpid());
  snprintf(qpath, sizeof(qpath), "%s.query", path);
  printf("bench/tp: %d runs per trace, each in a fresh process; medians. "
         "Throughput is on CPU time (user + system: the importer is one "
         "thread, so that is its time on a core of its own; wall time also "
         "counts waiting for a core on a shared machine).\n",
         runs);
  gen g, qg;
  medians m, qm;
  int rc = bench_trace(path, events, kernels, runs, &g, &m);
  if (!rc)
    rc = bench_trace(qpath, q_kernels * 3 + q_samples + 16, q_kernels, runs,
                     &qg, &qm);
  if (!rc)
    versus_perfetto(qpath, &qm, qg.bytes, runs);
  if (!keep) {
    if (!trace)
      unlink(path);
    unlink(qpath);
  }
  if (!rc && demo_steps > 0)
    rc = bench_demo(argv[0], demo_steps, runs);
  if (rc)
    return 1;
  double rate = (double)m.events / m.import_cpu;
  printf("\nimport of %" PRIu64 " events (%.1f MB): %.2f M events/s on one "
         "core (CPU %.3f s), %.1f MB/s; wall %.3f s (%.2f M/s)\n",
         m.events, (double)g.bytes / 1e6, rate / 1e6, m.import_cpu,
         (double)g.bytes / m.import_cpu / 1e6, m.import_wall,
         (double)m.events / m.import_wall / 1e6);
  printf("peak memory importing it: %.2fx the trace (VmHWM), %.2fx counting "
         "only what the import added\n",
         m.peak, m.peak_delta);
  printf("seed query at %" PRIu64 " kernels and %" PRIu64
         " counter samples: %.3f s CPU (wall %.3f s)\n",
         qg.kernels, qg.samples, qm.query_cpu, qm.query_wall);
  printf("seed query at %" PRIu64 " kernels and %" PRIu64
         " counter samples: %.3f s CPU (wall %.3f s)\n",
         g.kernels, g.samples, m.query_cpu, m.query_wall);
  printf("targets: >= 1.5 M events/s [%s]; peak <= 3x the trace [%s]; seed "
         "query <= 2 s at >= 100 k kernels and >= 1 M samples [%s], <= 0.3 s "
         "CPU (issue 15) [%s]\n",
         rate >= 1.5e6 ? "met" : "MISSED", m.peak <= 3.0 ? "met" : "MISSED",
         qm.query_cpu <= 2.0 ? "met" : "MISSED",
         qm.query_cpu <= 0.3 ? "met" : "MISSED");
  return 0;
}
