/*
 * test_clock.c - the trace clock, device clock mapping, and the consumers
 * that read every device clock snapshot.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "harness.h"

static uint64_t boottime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TEST(clock_tracks_boottime) {
  /* Run long enough for calibration and twenty re-measurements: a badly
   * tuned correction oscillates and grows over several periods (a gain
   * error once made it swing by 15 to 30 us within a second). */
  uint64_t prev = gp_get_timestamp();
  uint64_t start = boottime();
  int64_t worst = 0;
  while (boottime() - start < 1200000000ull) {
    uint64_t b0 = boottime();
    uint64_t t = gp_get_timestamp();
    uint64_t b1 = boottime();
    ASSERT_GE(t, prev); /* monotonic */
    prev = t;
    if (b1 - start > 20000000ull) {
      int64_t err = t < b0 ? (int64_t)(b0 - t) : t > b1 ? (int64_t)(t - b1) : 0;
      if (err > worst)
        worst = err;
    }
  }
  printf("worst distance from CLOCK_BOOTTIME after 20 ms: %" PRId64 " ns\n",
         worst);
  ASSERT_LT(worst, 5000); /* 5 us; typically under 100 ns */
}

TEST(clock_without_tsc) {
  setenv("GPUPERF_NO_TSC", "1", 1);
  uint64_t b0 = boottime();
  uint64_t t = gp_get_timestamp();
  uint64_t b1 = boottime();
  ASSERT_GE(t, b0);
  ASSERT_LE(t, b1);
  usleep(3000);
  b0 = boottime();
  t = gp_get_timestamp();
  b1 = boottime();
  ASSERT_GE(t, b0);
  ASSERT_LE(t, b1);
}

static void *hammer(void *arg) {
  uint64_t *bad = arg;
  uint64_t prev = 0;
  for (int i = 0; i < 2000000; i++) {
    uint64_t t = gp_get_timestamp();
    if (t < prev)
      (*bad)++;
    prev = t;
  }
  return NULL;
}

TEST(clock_monotonic_per_thread) {
  pthread_t t[4];
  uint64_t bad[4] = {0};
  for (int i = 0; i < 4; i++)
    ASSERT_OK(-pthread_create(&t[i], NULL, hammer, &bad[i]));
  for (int i = 0; i < 4; i++) {
    ASSERT_OK(-pthread_join(t[i], NULL));
    ASSERT_EQ(bad[i], 0);
  }
}

/* Each thread reads from a copy of the TSC line of its own, taken anew at
 * every re-measurement (50 ms) and after an idle spell: in several
 * threads at once, across many re-measurements, with pauses longer than
 * a period, every reading lies within a bracket of CLOCK_BOOTTIME reads
 * (a loaded CPU only widens the bracket) and no thread's time goes
 * back. */
typedef struct bracket_job {
  int64_t worst;
  uint64_t backwards, reads;
} bracket_job;

static void *bracket_reader(void *arg) {
  bracket_job *j = arg;
  uint64_t prev = gp_get_timestamp(), start = boottime();
  for (int round = 0; boottime() - start < 400000000ull; round++) {
    for (int i = 0; i < 20000; i++) {
      uint64_t b0 = boottime();
      uint64_t t = gp_get_timestamp();
      uint64_t b1 = boottime();
      j->backwards += t < prev;
      prev = t;
      int64_t err = t < b0 ? (int64_t)(b0 - t) : t > b1 ? (int64_t)(t - b1) : 0;
      if (err > j->worst)
        j->worst = err;
      j->reads++;
    }
    if (round % 3 == 2)
      usleep(70000); /* idle past a period: the copy has expired */
  }
  return NULL;
}

TEST(clock_threads_track_boottime) {
  /* Calibrated (and settled) before the bracketed reads. */
  uint64_t start = boottime();
  while (boottime() - start < 30000000ull)
    (void)gp_get_timestamp();
  pthread_t t[3];
  bracket_job jobs[3] = {{0}};
  for (int i = 0; i < 3; i++)
    ASSERT_OK(-pthread_create(&t[i], NULL, bracket_reader, &jobs[i]));
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(-pthread_join(t[i], NULL));
    printf("thread %d: %" PRIu64 " reads, worst distance from "
           "CLOCK_BOOTTIME %" PRId64 " ns\n",
           i, jobs[i].reads, jobs[i].worst);
    ASSERT_EQ(jobs[i].backwards, 0);
    ASSERT_GT(jobs[i].reads, 0);
    ASSERT_LT(jobs[i].worst, 5000); /* as clock_tracks_boottime */
  }
}

static uint64_t fake_device_now;
static uint64_t read_fake(void *user) {
  (void)user;
  return fake_device_now;
}

TEST(clock_device_mapping) {
  uint32_t id;
  ASSERT_ERR(gp_clock_register(NULL, read_fake, NULL, &id), GP_EINVAL);
  ASSERT_OK(gp_clock_register("fake", read_fake, NULL, &id));
  ASSERT_GE(id, GP_CLOCK_FIRST_DEVICE);
  uint64_t out;
  ASSERT_ERR(gp_clock_to_trace(id, 5, &out), GP_EAGAIN);
  ASSERT_ERR(gp_clock_to_trace(12345, 5, &out), GP_ENOENT);

  /* Device runs at twice the trace rate, offset. */
  gp_clock_snapshot a = {1000, 50000, 0}, b = {3000, 51000, 0},
                    c = {5000, 52000, 0};
  ASSERT_OK(gp_clock_add_snapshot(id, &a));
  ASSERT_OK(gp_clock_add_snapshot(id, &b));
  ASSERT_OK(gp_clock_to_trace(id, 2000, &out));
  ASSERT_EQ(out, 50500); /* interpolated */
  ASSERT_OK(gp_clock_to_trace(id, 7000, &out));
  ASSERT_EQ(out, 53000); /* extrapolated at the last rate */
  ASSERT_OK(gp_clock_to_trace(id, 0, &out));
  ASSERT_EQ(out, 49000); /* before the first: its offset */
  ASSERT_OK(gp_clock_add_snapshot(id, &c));
  ASSERT_OK(gp_clock_to_trace(id, 4000, &out));
  ASSERT_EQ(out, 51500);

  /* Snapshots must move forwards on both clocks. */
  gp_clock_snapshot back = {4000, 53000, 0};
  ASSERT_ERR(gp_clock_add_snapshot(id, &back), GP_ERANGE);
  gp_clock_snapshot back2 = {6000, 51000, 0};
  ASSERT_ERR(gp_clock_add_snapshot(id, &back2), GP_ERANGE);

  gp_clock_snapshot got[8];
  size_t n;
  const char *name;
  ASSERT_OK(gp_clock_get_snapshots(id, got, 8, &n, &name));
  ASSERT_EQ(n, 3);
  ASSERT_STR_EQ(name, "fake");
  ASSERT_EQ(got[2].device_ts, 5000);
  ASSERT_OK(gp_clock_get_snapshots(id, got, 2, &n, NULL));
  ASSERT_EQ(n, 2);
  ASSERT_EQ(got[0].device_ts, 3000); /* the most recent two */

  /* A real snapshot through the read function. */
  uint32_t id2;
  ASSERT_OK(gp_clock_register("fake2", read_fake, NULL, &id2));
  fake_device_now = 777;
  gp_clock_snapshot s;
  uint64_t before = gp_get_timestamp();
  ASSERT_OK(gp_clock_snapshot_take(id2, &s));
  ASSERT_EQ(s.device_ts, 777);
  ASSERT_GE(s.trace_ts, before);
  ASSERT_LE(s.trace_ts, gp_get_timestamp());

  uint32_t id3;
  ASSERT_OK(gp_clock_register("nofn", NULL, NULL, &id3));
  ASSERT_ERR(gp_clock_snapshot_take(id3, NULL), GP_ENOTSUP);
  ASSERT_OK(gp_clock_unregister(id));
  ASSERT_ERR(gp_clock_unregister(id), GP_ENOENT);
  ASSERT_ERR(gp_clock_to_trace(id, 1, &out), GP_ENOENT);
}

TEST(clock_host_clocks) {
  ASSERT_GT(gp_clock_read_host(GP_CLOCK_REALTIME),
            1500000000ull * 1000000000ull);
  ASSERT_GT(gp_clock_read_host(GP_CLOCK_MONOTONIC), 0);
  ASSERT_GE(gp_clock_read_host(GP_CLOCK_BOOTTIME),
            gp_clock_read_host(GP_CLOCK_MONOTONIC) - 1000000);
  ASSERT_EQ(gp_clock_read_host(42), 0);
}

/* The re-calibration is a feedback loop: check on a simulated counter that
 * it converges and stays converged (a gain error once made it oscillate
 * with a growing amplitude up to 30 us, visible only after seconds). */
TEST(clock_slew_converges) {
  const double ghz = 2.1;                         /* counter ticks per ns */
  uint64_t rate = (uint64_t)(4294967296.0 / ghz); /* 32.32 ns per tick */
  double ticks = (double)GP_CLOCK_RECAL_NS * ghz;
  double err = 3000.0; /* the line starts 3 us behind the true clock */
  uint32_t seed = 1;
  for (int k = 0; k < 400; k++) {
    /* The measured error carries +-20 ns of pair noise. */
    seed = seed * 1103515245u + 12345u;
    double noise = (double)((seed >> 16) % 41) - 20.0;
    uint64_t mult = gp__clock_slew_mult(rate, (int64_t)(err + noise));
    /* Over the period the line advances ticks * mult, the clock
     * ticks * rate (the measured rate is exact here). */
    err += ticks * (double)rate / 4294967296.0 -
           ticks * (double)mult / 4294967296.0;
    if (k >= 3)
      ASSERT_LT(err < 0 ? -err : err, 60.0);
  }
  /* Far off, the slew limit holds: 500 ppm of a 50 ms period. */
  uint64_t m = gp__clock_slew_mult(rate, 10000000);
  ASSERT_NEAR((double)(m - rate) / (double)rate, 500e-6, 1e-6);
}

/* Readers take no lock: while one thread appends snapshots (wrapping the
 * ring many times), others convert and copy, and must only ever see a
 * consistent ring. Device time d maps to d + 7 on every snapshot (a reader put
 * to sleep while the ring wraps extrapolates from the oldest: still exact). */
static _Atomic bool lockfree_stop;
static uint32_t lockfree_id;

static void *lockfree_reader(void *arg) {
  (void)arg;
  uint64_t bad = 0, seen = 0;
  while (!atomic_load(&lockfree_stop) || seen == 0) {
    gp_clock_snapshot got[4];
    size_t n = 0;
    if (gp_clock_get_snapshots(lockfree_id, got, 4, &n, NULL) != 0) {
      bad++;
      continue;
    }
    for (size_t i = 0; i < n; i++) {
      if (got[i].trace_ts != got[i].device_ts + 7)
        bad++;
      if (i > 0 && got[i].device_ts <= got[i - 1].device_ts)
        bad++;
    }
    if (n > 0) {
      uint64_t d = got[n - 1].device_ts + 3, t = 0;
      if (gp_clock_to_trace(lockfree_id, d, &t) != 0 || t != d + 7)
        bad++;
      seen++;
    }
  }
  return (void *)(uintptr_t)bad;
}

TEST(clock_readers_take_no_lock) {
  ASSERT_OK(gp_clock_register("lockfree", NULL, NULL, &lockfree_id));
  gp_clock_snapshot s0 = {10, 17, 0}, s1 = {15, 22, 0};
  ASSERT_OK(gp_clock_add_snapshot(lockfree_id, &s0));
  ASSERT_OK(gp_clock_add_snapshot(lockfree_id, &s1));
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_create(&th[i], NULL, lockfree_reader, NULL), 0);
  for (uint64_t d = 20; d < 20 + 100000 * 10; d += 10) {
    gp_clock_snapshot s = {d, d + 7, 0};
    ASSERT_OK(gp_clock_add_snapshot(lockfree_id, &s));
  }
  atomic_store(&lockfree_stop, true);
  for (int i = 0; i < 2; i++) {
    void *r;
    pthread_join(th[i], &r);
    ASSERT_EQ((uintptr_t)r, 0);
  }
  ASSERT_OK(gp_clock_unregister(lockfree_id));
}

/* A virtual clock takes over at once in threads that hold a copy of the
 * TSC line: gp__now() does not look for it, so installing it must reach
 * every copy (and none of exited threads, whose copies are gone). */
static uint64_t virtual_42(void) {
  return 42;
}
static pthread_barrier_t virt_bar;

static void *line_holder(void *arg) {
  uint64_t *got = arg;
  for (int i = 0; i < 100000; i++)
    (void)gp__now();
  got[1] = gp__now();
  pthread_barrier_wait(&virt_bar); /* holds its copy ... */
  pthread_barrier_wait(&virt_bar); /* ... while the clock is installed */
  got[2] = gp__now();
  got[3] = gp_get_timestamp();
  return NULL;
}

static void *read_and_exit(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++)
    (void)gp__now();
  return NULL;
}

TEST(clock_virtual_reaches_threads_holding_a_line) {
  pthread_t gone[32];
  for (int i = 0; i < 32; i++)
    ASSERT_EQ(pthread_create(&gone[i], NULL, read_and_exit, NULL), 0);
  for (int i = 0; i < 32; i++)
    pthread_join(gone[i], NULL);
  uint64_t got[4] = {0};
  pthread_t t;
  ASSERT_EQ(pthread_barrier_init(&virt_bar, NULL, 2), 0);
  ASSERT_EQ(pthread_create(&t, NULL, line_holder, got), 0);
  pthread_barrier_wait(&virt_bar);
  uint64_t before = gp__now();
  gp__clock_set_virtual(virtual_42);
  pthread_barrier_wait(&virt_bar);
  uint64_t mine = gp__now();
  pthread_join(t, NULL);
  gp__clock_set_virtual(NULL);
  pthread_barrier_destroy(&virt_bar);
  ASSERT_GT(got[1], 42);
  ASSERT_GT(before, 42);
  ASSERT_EQ(got[2], 42);
  ASSERT_EQ(got[3], 42);
  ASSERT_EQ(mine, 42);
  ASSERT_GE(gp__now(), before); /* the real clock again */
}

/* ------------------------------------------------------------------ */
/* Consumers: every snapshot, in order, whatever the ring overwrote     */

/* Snapshot number i of the consumer tests: device 100 + 10 i, trace
 * 1100 + 10 i. */
static int put_nth(uint32_t id, uint64_t i) {
  gp_clock_snapshot s = {100 + 10 * i, 1100 + 10 * i, 0};
  return gp_clock_add_snapshot(id, &s);
}

static void add_nth(uint32_t id, uint64_t i) {
  ASSERT_OK(put_nth(id, i));
}

/* Reads what consumer has below bound, chunk at a time, checking that it
 * is snapshot *next onwards without a gap; returns how many it read. */
static uint64_t read_all(uint32_t cons, uint32_t id, uint64_t bound,
                         size_t chunk, uint64_t *next) {
  gp_clock_snapshot out[64];
  uint64_t total = 0;
  size_t n;
  do {
    uint64_t lost = 1;
    ASSERT_OK(gp__clock_consume(cons, id, bound, out, chunk, &n, &lost));
    ASSERT_EQ(lost, 0);
    for (size_t k = 0; k < n; k++, (*next)++) {
      ASSERT_EQ(out[k].device_ts, 100 + 10 * *next);
      ASSERT_EQ(out[k].trace_ts, 1100 + 10 * *next);
    }
    total += n;
  } while (n == chunk);
  return total;
}

TEST(clock_consumer_sees_every_snapshot) {
  uint32_t id, cons, late;
  ASSERT_OK(gp_clock_register("every", NULL, NULL, &id));
  add_nth(id, 0); /* held when the consumer opens: it is read too */
  ASSERT_OK(gp__clock_consumer_open(&cons));
  ASSERT_NE(cons, 0);
  /* The ring (256) wraps almost four times before the first read. */
  for (uint64_t i = 1; i <= 1000; i++)
    add_nth(id, i);
  ASSERT_EQ(gp__clock_spilled(id), 1001 - 256);
  /* The public call still gives the most recent ones, as before. */
  gp_clock_snapshot got[300];
  size_t n;
  ASSERT_OK(gp_clock_get_snapshots(id, got, 300, &n, NULL));
  ASSERT_EQ(n, 256);
  ASSERT_EQ(got[0].device_ts, 100 + 10 * 745);
  ASSERT_OK(gp_clock_get_snapshots(id, got, 2, &n, NULL));
  ASSERT_EQ(got[1].device_ts, 100 + 10 * 1000);

  /* A bound: snapshots at or past it wait. What all have read is freed. */
  uint64_t next = 0;
  ASSERT_EQ(read_all(cons, id, 1100 + 10 * 600, 64, &next), 600);
  ASSERT_EQ(gp__clock_spilled(id), 745 - 600);
  ASSERT_EQ(read_all(cons, id, 1100 + 10 * 600, 64, &next), 0);

  /* A consumer opened now starts at the oldest the ring holds. */
  ASSERT_OK(gp__clock_consumer_open(&late));
  ASSERT_NE(late, cons);
  uint64_t late_next = 745;

  /* Producer and consumer interleaved, the producer ahead. */
  for (uint64_t i = 1001; i <= 3000; i++) {
    add_nth(id, i);
    if (i % 500 == 0)
      read_all(cons, id, UINT64_MAX, 37, &next);
  }
  ASSERT_EQ(next, 3001);
  ASSERT_GT(gp__clock_spilled(id), 0); /* kept for the late one */
  ASSERT_EQ(read_all(late, id, UINT64_MAX, 64, &late_next), 3001 - 745);
  ASSERT_EQ(gp__clock_spilled(id), 0);
  ASSERT_EQ(read_all(cons, id, UINT64_MAX, 64, &next), 0);

  /* Conversion is unchanged by all this. */
  uint64_t t;
  ASSERT_OK(gp_clock_to_trace(id, 100 + 10 * 2900 + 5, &t));
  ASSERT_EQ(t, 1100 + 10 * 2900 + 5);

  /* A clock registered later is read from its first snapshot. */
  uint32_t id2;
  ASSERT_OK(gp_clock_register("every2", NULL, NULL, &id2));
  for (uint64_t i = 0; i < 300; i++)
    add_nth(id2, i);
  next = 0;
  ASSERT_EQ(read_all(cons, id2, UINT64_MAX, 64, &next), 300);

  uint64_t lost;
  ASSERT_ERR(gp__clock_consume(cons, 12345, 0, got, 1, &n, &lost), GP_ENOENT);
  ASSERT_ERR(gp__clock_consume(cons, id, 0, NULL, 1, &n, &lost), GP_EINVAL);
  gp__clock_consumer_close(cons);
  gp__clock_consumer_close(late);
  ASSERT_OK(gp_clock_unregister(id));
  ASSERT_OK(gp_clock_unregister(id2));
}

TEST(clock_consumer_closed_pins_nothing) {
  uint32_t id, a, b;
  ASSERT_OK(gp_clock_register("pins", NULL, NULL, &id));
  ASSERT_OK(gp__clock_consumer_open(&a));
  ASSERT_OK(gp__clock_consumer_open(&b));
  for (uint64_t i = 0; i < 1000; i++)
    add_nth(id, i);
  uint64_t next = 0;
  read_all(a, id, UINT64_MAX, 64, &next);
  ASSERT_EQ(gp__clock_spilled(id), 1000 - 256); /* b has read nothing */
  gp__clock_consumer_close(b);
  ASSERT_EQ(gp__clock_spilled(id), 0);
  /* A closed handle is stale for good: no read, a second close is
   * ignored, and a slot taken again gets another handle. */
  gp_clock_snapshot out[4];
  size_t n;
  uint64_t lost;
  ASSERT_ERR(gp__clock_consume(b, id, UINT64_MAX, out, 4, &n, &lost),
             GP_EINVAL);
  gp__clock_consumer_close(b);
  gp__clock_consumer_close(0);
  uint32_t c;
  ASSERT_OK(gp__clock_consumer_open(&c));
  ASSERT_NE(c, b);
  gp__clock_consumer_close(c);
  for (uint64_t i = 1000; i < 1300; i++)
    add_nth(id, i);
  ASSERT_EQ(gp__clock_spilled(id), 1300 - 256 - 1000); /* a lags now */

  /* A forked child forgets its parent's consumers. */
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    bool ok =
        gp__clock_spilled(id) == 0 &&
        gp__clock_consume(a, id, UINT64_MAX, out, 4, &n, &lost) == GP_EINVAL;
    for (uint64_t i = 1300; i < 1600; i++)
      ok = ok && put_nth(id, i) == 0;
    uint64_t t = 0;
    ok = ok && gp__clock_spilled(id) == 0 &&
         gp_clock_to_trace(id, 100 + 10 * 1500, &t) == 0 &&
         t == 1100 + 10 * 1500 && gp__clock_consumer_open(&c) == 0 && c != a;
    _exit(ok ? 0 : 1);
  }
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_EQ(gp__clock_spilled(id), 1300 - 256 - 1000);

  /* Closing the last consumer, or unregistering the clock, frees it. */
  gp__clock_consumer_close(a);
  ASSERT_EQ(gp__clock_spilled(id), 0);
  ASSERT_OK(gp__clock_consumer_open(&a));
  for (uint64_t i = 1300; i < 1600; i++)
    add_nth(id, i);
  ASSERT_GT(gp__clock_spilled(id), 0);
  ASSERT_OK(gp_clock_unregister(id));
  ASSERT_EQ(gp__clock_spilled(id), 0);
  ASSERT_ERR(gp__clock_consume(a, id, UINT64_MAX, out, 4, &n, &lost),
             GP_ENOENT);
  gp__clock_consumer_close(a);
}

TEST(clock_consumer_cap_counts_the_loss) {
  uint32_t id, cons;
  ASSERT_OK(gp_clock_register("cap", NULL, NULL, &id));
  ASSERT_OK(gp__clock_consumer_open(&cons));
  const uint64_t over = 100, total = GP_CLOCK_SPILL_MAX + 256 + over;
  for (uint64_t i = 0; i < total; i++)
    add_nth(id, i);
  ASSERT_EQ(gp__clock_spilled(id), GP_CLOCK_SPILL_MAX);
  /* The oldest `over` are gone, and the first read says so, once. */
  gp_clock_snapshot out[64];
  size_t n;
  uint64_t lost = 0;
  ASSERT_OK(gp__clock_consume(cons, id, UINT64_MAX, out, 64, &n, &lost));
  ASSERT_EQ(lost, over);
  ASSERT_EQ(n, 64);
  ASSERT_EQ(out[0].device_ts, 100 + 10 * over);
  uint64_t next = over + 64;
  ASSERT_EQ(read_all(cons, id, UINT64_MAX, 64, &next), total - over - 64);
  ASSERT_EQ(next, total);
  ASSERT_EQ(gp__clock_spilled(id), 0);
  gp__clock_consumer_close(cons);
  ASSERT_OK(gp_clock_unregister(id));
}
