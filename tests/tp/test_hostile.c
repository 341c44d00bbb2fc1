/*
 * test_hostile.c - the importer and the report stay linear on inputs
 * shaped to make them quadratic (tests/tp/hostile.h), and timestamp sums
 * that overflow saturate instead of wrapping.
 *
 * Linearity is checked as a ratio, not an absolute time, so a loaded
 * machine does not fail it: each shape is timed at n and 8n bytes (CPU
 * time, the best of three runs each), and the ratio must stay under 30
 * (linear is 8, n log n a little more, quadratic 64). Fixed costs only
 * lower the ratio.
 */
#include <signal.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/session.h"
#include "harness.h"
#include "tp/hostile.h"
#include "tp/tputil.h"

#define SIZE_RATIO 8
#define MAX_TIME_RATIO 30.0

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef void (*gen_fn)(gp__pb_writer *w, size_t bytes);

/* CPU seconds to import gen's trace of `bytes`, best of three. */
static double import_time(gen_fn gen, size_t bytes) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gen(&w, bytes);
  size_t n = (size_t)gp__pb_size(&w);
  uint8_t *buf = malloc(n);
  ASSERT_NOT_NULL(buf);
  gp__pb_copy(&w, buf);
  gp__pb_writer_fini(&w);
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    double t0 = cpu_now();
    gp_tp *tp = tp_open_bytes(buf, n);
    double t = cpu_now() - t0;
    gp_tp_close(tp);
    if (t < best)
      best = t;
  }
  free(buf);
  return best;
}

static void expect_linear(const char *what, double small, double large) {
  double ratio = large / (small > 1e-6 ? small : 1e-6);
  printf("%s: %.4f s at n, %.4f s at %dn: ratio %.1f\n", what, small, large,
         SIZE_RATIO, ratio);
  if (ratio >= MAX_TIME_RATIO)
    gp_test_fail(__FILE__, __LINE__,
                 "%s: %dx the input took %.1fx the time (limit %.0fx): "
                 "quadratic again?",
                 what, SIZE_RATIO, ratio, MAX_TIME_RATIO);
}

static void gen_compressed(gp__pb_writer *w, size_t bytes) {
  ASSERT_EQ(hostile_compressed(w, bytes), 0);
}

TEST(tp_hostile_overlapping_stages_linear) {
  size_t n = 512u << 10;
  expect_linear("overlapping stages", import_time(hostile_overlap, n),
                import_time(hostile_overlap, n * SIZE_RATIO));
  expect_linear("compressed overlapping stages", import_time(gen_compressed, n),
                import_time(gen_compressed, n * SIZE_RATIO));
  /* Every stage overlaps the earlier ones: one track each. */
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  hostile_overlap(&w, 4096);
  size_t sz = (size_t)gp__pb_size(&w);
  uint8_t *buf = malloc(sz);
  gp__pb_copy(&w, buf);
  gp__pb_writer_fini(&w);
  gp_tp *tp = tp_open_bytes(buf, sz);
  ASSERT_EQ(tp_int(tp, "SELECT count(DISTINCT track_id) FROM gpu_slice"),
            tp_int(tp, "SELECT count(*) FROM gpu_slice"));
  gp_tp_close(tp);
  free(buf);
}

/* A tid made and freed again and again: each lookup finds the newest
 * live thread without walking past the ended ones. */
TEST(tp_hostile_tid_reuse_linear) {
  size_t n = 256u << 10;
  expect_linear("one tid reused", import_time(hostile_tid_reuse, n),
                import_time(hostile_tid_reuse, n * SIZE_RATIO));
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  hostile_tid_reuse(&w, 4096);
  size_t sz = (size_t)gp__pb_size(&w);
  uint8_t *buf = malloc(sz);
  ASSERT_NOT_NULL(buf);
  gp__pb_copy(&w, buf);
  gp__pb_writer_fini(&w);
  gp_tp *tp = tp_open_bytes(buf, sz);
  /* Each made thread ended once, and was woken as its own row. */
  int64_t made = tp_int(tp, "SELECT count(*) FROM thread WHERE tid = 100");
  ASSERT_GT(made, 10);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM thread WHERE tid = 100 AND "
                       "end_ts IS NULL"),
            0);
  ASSERT_EQ(tp_int(tp, "SELECT count(DISTINCT utid) FROM thread_state "
                       "WHERE utid IN (SELECT utid FROM thread WHERE tid = "
                       "100)"),
            made);
  gp_tp_close(tp);
  free(buf);
}

TEST(tp_hostile_descending_clocks_linear) {
  size_t n = 1u << 20;
  expect_linear("descending clock snapshots", import_time(hostile_clocks, n),
                import_time(hostile_clocks, n * SIZE_RATIO));
  expect_linear("zigzag clock snapshots", import_time(hostile_zigzag, n),
                import_time(hostile_zigzag, n * SIZE_RATIO));
  expect_linear("descending 64-clock snapshots",
                import_time(hostile_clocks64, n / 8),
                import_time(hostile_clocks64, n / 8 * SIZE_RATIO));
}

/* Snapshots in any order convert as if they had come sorted: each
 * timestamp uses the snapshot with the greatest MONOTONIC value <= it. */
static void check_order(const int64_t *mono, const int64_t *boot,
                        const uint32_t *order, int N);

TEST(tp_hostile_clock_snapshots_any_order) {
  enum { N = 300 };
  int64_t mono[N], boot[N];
  uint32_t order[N];
  for (int i = 0; i < N; i++) {
    mono[i] = 1000000 + (int64_t)i * 1000;
    boot[i] = 5000000000 + (int64_t)i * 1003 + (i % 7) * 11;
    order[i] = (uint32_t)i;
  }
  uint32_t seed = 7;
  for (int i = N - 1; i > 0; i--) { /* shuffle */
    seed = seed * 1664525u + 1013904223u;
    uint32_t j = (seed >> 8) % (uint32_t)(i + 1), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  check_order(mono, boot, order, N);
  /* Descending, then the rest in ascending order (a run kept reversed,
   * then turned into an ordinary one). */
  for (int i = 0; i < N; i++)
    order[i] = (uint32_t)(i < N / 2 ? N / 2 - 1 - i : i);
  check_order(mono, boot, order, N);
}

/* A render stage event (packet field 53) of id on queue 1, in clock. */
static void stage_packet(tg *t, int64_t ts, uint32_t clock, uint64_t id) {
  tg_packet(t, (uint64_t)ts, 1, 0);
  gp__pb_uint(&t->w, 58, clock);
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, id);
  gp__pb_uint(&t->w, 2, 1);
  gp__pb_end(&t->w);
  tg_end(t);
}
/* Imports snapshots (mono[i], boot[i]) in the given order, then stages
 * timed in MONOTONIC; each must convert with the snapshot of greatest
 * mono <= its time (the first if it precedes them all). */
static void check_order(const int64_t *mono, const int64_t *boot,
                        const uint32_t *order, int N) {
  enum { Q = 40 };
  tg t;
  tg_init(&t);
  for (int k = 0; k < N; k++) {
    int i = (int)order[k];
    tg_packet(&t, 0, 1, 0);
    gp__pb_begin(&t.w, 6);
    gp__pb_begin(&t.w, 1);
    gp__pb_uint(&t.w, 1, 6);
    gp__pb_uint(&t.w, 2, (uint64_t)boot[i]);
    gp__pb_end(&t.w);
    gp__pb_begin(&t.w, 1);
    gp__pb_uint(&t.w, 1, 3);
    gp__pb_uint(&t.w, 2, (uint64_t)mono[i]);
    gp__pb_end(&t.w);
    gp__pb_end(&t.w);
    tg_end(&t);
  }
  int64_t want[Q];
  for (int q = 0; q < Q; q++) {
    int64_t ts = 1000000 + (int64_t)q * 7919 - 500; /* the first precedes all */
    int best = 0;
    for (int i = 0; i < N; i++)
      if (mono[i] <= ts)
        best = i;
    want[q] = boot[best] + (ts - mono[best]);
    stage_packet(&t, ts, 3, (uint64_t)q + 1);
  }
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  gp_tp_rows *r;
  ASSERT_OK(gp_tp_query(tp, "SELECT ts FROM gpu_slice ORDER BY id", &r, NULL));
  for (int q = 0; q < Q; q++) {
    ASSERT_EQ(gp_tp_rows_next(r, NULL), 1);
    ASSERT_EQ(gp_tp_rows_int(r, 0), want[q]);
  }
  ASSERT_EQ(gp_tp_rows_next(r, NULL), 0);
  gp_tp_rows_destroy(r);
  gp_tp_close(tp);
}

/* Peak resident kB of a child that builds gen's trace of `bytes` and
 * imports it. */
static long import_peak_kb(gen_fn gen, size_t bytes) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    gp__pb_writer w;
    gp__pb_writer_init(&w);
    gen(&w, bytes);
    size_t n = (size_t)gp__pb_size(&w);
    uint8_t *buf = malloc(n);
    if (!buf)
      _exit(2);
    gp__pb_copy(&w, buf);
    gp__pb_writer_fini(&w);
    gp_tp *tp;
    gp_tp_error err;
    _exit(gp_tp_open_buffer(buf, n, NULL, NULL, &tp, &err) == 0 ? 0 : 1);
  }
  int st;
  struct rusage ru;
  ASSERT_EQ(wait4(pid, &st, 0, &ru), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  return ru.ru_maxrss;
}

/* Snapshots of 64 clocks: memory grows with the input, not with the 4032
 * clock pairs of each snapshot (it was 70 bytes per input byte). The
 * children start alike, so the difference of their peaks is what the
 * extra input cost; the writer and the copy of the input are 2-3 of the
 * bytes allowed per byte. */
TEST(tp_hostile_many_clocks_memory_proportional) {
  size_t n = 1u << 20;
  long small = import_peak_kb(hostile_clocks64, n);
  long large = import_peak_kb(hostile_clocks64, n * SIZE_RATIO);
  double per_byte =
      (double)(large - small) * 1024.0 / (double)(n * (SIZE_RATIO - 1));
  printf("64-clock snapshots: peak %ld kB at 1 MB, %ld kB at %d MB: %.1f "
         "bytes per input byte\n",
         small, large, SIZE_RATIO, per_byte);
  if (per_byte > 12.0)
    gp_test_fail(__FILE__, __LINE__,
                 "64-clock snapshots take %.1f bytes of memory per input "
                 "byte (limit 12): per-pair points again?",
                 per_byte);
}

/* Snapshots between packets: each packet converts with the snapshots
 * before it, also once its clock pair has a series (later snapshots
 * extend it) and through a third clock (a two-hop path). */
TEST(tp_hostile_clock_series_extended) {
  tg t;
  tg_init(&t);
  static const struct {
    int64_t mono, boot, raw; /* raw < 0: not in the snapshot */
  } snaps[] = {
      {1000, 10000, -1}, {2000, 30000, -1}, {3000, 50000, -1}, {4000, -1, 900}};
  static const struct {
    uint32_t clock;
    int64_t ts, want;
  } stages[] = {{3, 1500, 10500},
                {3, 500, 9500}, /* before the first: the first snapshot */
                {3, 2500, 30500},
                {3, 3500, 50500},
                {4, 1000, 51100}}; /* MONOTONIC_RAW -> MONOTONIC -> BOOT */
  int next = 0;
  for (int k = 0; k < 4; k++) {
    tg_packet(&t, 0, 1, 0);
    gp__pb_begin(&t.w, 6);
    uint32_t ids[] = {6, 3, 4};
    int64_t vals[] = {snaps[k].boot, snaps[k].mono, snaps[k].raw};
    for (int c = 0; c < 3; c++) {
      if (vals[c] < 0)
        continue;
      gp__pb_begin(&t.w, 1);
      gp__pb_uint(&t.w, 1, ids[c]);
      gp__pb_uint(&t.w, 2, (uint64_t)vals[c]);
      gp__pb_end(&t.w);
    }
    gp__pb_end(&t.w);
    tg_end(&t);
    int upto = k == 0 ? 2 : k + 2;
    for (; next < upto; next++) {
      stage_packet(&t, stages[next].ts, stages[next].clock, (uint64_t)next + 1);
    }
  }
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  gp_tp_rows *r;
  ASSERT_OK(gp_tp_query(tp, "SELECT ts FROM gpu_slice ORDER BY ts", &r, NULL));
  static const int by_time[] = {1, 0, 2, 3, 4};
  for (int q = 0; q < 5; q++) {
    ASSERT_EQ(gp_tp_rows_next(r, NULL), 1);
    ASSERT_EQ(gp_tp_rows_int(r, 0), stages[by_time[q]].want);
  }
  ASSERT_EQ(gp_tp_rows_next(r, NULL), 0);
  gp_tp_rows_destroy(r);
  gp_tp_close(tp);
}

static double parse_time(size_t bytes) {
  size_t len;
  char *text = hostile_tconfig(bytes, &len);
  ASSERT_NOT_NULL(text);
  /* Keep freed memory in the heap, so that the best of three measures
   * the parse, not first-touch page faults of freshly mapped memory
   * (15-40 us each on a VM: they made 8x the input cost 27-35x). */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    gp_trace_config *cfg;
    char err[256];
    double t0 = cpu_now();
    ASSERT_OK(gp_trace_config_parse(text, len, &cfg, err, sizeof(err)));
    double t = cpu_now() - t0;
    gp_trace_config_destroy(cfg);
    if (t < best)
      best = t;
  }
  free(text);
  return best;
}

TEST(tp_hostile_trace_config_sources_linear) {
  size_t n = 256u << 10;
  expect_linear("TraceConfig data sources", parse_time(n),
                parse_time(n * SIZE_RATIO));
  /* The duplicate check still finds duplicates. */
  const char *dup = "data_sources { config { name: \"gpu.log.a\" } }\n"
                    "data_sources { config { name: \"gpu.log.b\" } }\n"
                    "data_sources { config { name: \"gpu.log.a\" } }\n";
  gp_trace_config *cfg;
  char err[256];
  ASSERT_ERR(gp_trace_config_parse(dup, strlen(dup), &cfg, err, sizeof(err)),
             GP_EPARSE);
  ASSERT(strstr(err, "given twice (first at line 1)") != NULL);
}

/* CPU seconds of `gpuperf report` on a trace of many GPUs, best of 3. */
static double report_time(const char *cli, size_t bytes) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  hostile_gpus(&w, bytes);
  char path[] = "/tmp/gpuperf-test-gpus-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  size_t n = (size_t)gp__pb_size(&w);
  uint8_t *buf = malloc(n);
  gp__pb_copy(&w, buf);
  gp__pb_writer_fini(&w);
  ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
  close(fd);
  free(buf);
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stdout))
        _exit(126);
      execl(cli, cli, "report", path, (char *)NULL);
      _exit(127);
    }
    int st;
    struct rusage ru;
    ASSERT_EQ(wait4(pid, &st, 0, &ru), pid);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    double t = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    if (t < best)
      best = t;
  }
  unlink(path);
  return best;
}

TEST(tp_hostile_report_many_gpus_linear) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set to the gpuperf binary (run via make test)");
  size_t n = 64u << 10; /* 1000 GPUs, then 8000 */
  expect_linear("report on many GPUs", report_time(cli, n),
                report_time(cli, n * SIZE_RATIO));
}

/* The 29-byte trace of a stage at 2^62 lasting 2^63 - 1 ns. */
static void overflow_trace(tg *t) {
  tg_init(t);
  tg_packet(t, 1ull << 62, 1, 0);
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_uint(&t->w, 2, (uint64_t)INT64_MAX);
  gp__pb_end(&t->w);
  tg_end(t);
}

TEST(tp_overflow_stage_end_saturates) {
  tg t;
  overflow_trace(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp, "SELECT ts, dur FROM gpu_slice",
            "\"ts\",\"dur\"\n4611686018427387904,9223372036854775807");
  tp_expect(tp, "SELECT start_ts, end_ts, trace_dur() AS d FROM trace_bounds",
            "\"start_ts\",\"end_ts\",\"d\"\n"
            "4611686018427387904,9223372036854775807,4611686018427387903");
  gp_tp_close(tp);

  /* The report's span is positive, not wrapped. */
  char path[] = "/tmp/gpuperf-test-ovf-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  tg_write(&t, path);
  tg_fini(&t);
  char *out = NULL, *err = NULL;
  int rc = tp_cli(&out, &err, "report", path, NULL);
  unlink(path);
  ASSERT_EQ(rc, 0);
  ASSERT(strstr(out, "window 4611686018.427 s)") != NULL);
  ASSERT(strstr(out, "-46116") == NULL);
  free(out);
  free(err);
}
