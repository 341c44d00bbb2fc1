/*
 * test_perfmon_runs.c - how the simulator counts a perfmon's repeated
 * jobs: a run of identical kernel launches is kept as (what one adds, how
 * many) and added later, which must give to the bit what adding each job
 * as it comes gives; and a segment's busy time, a plain sum while its jobs
 * stay on one queue, becomes a union of intervals once they do not.
 */
#include <float.h>
#include <math.h>

#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

static uint64_t bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

static double one_by_one(double s, double x, uint64_t n) {
  volatile double v = s; /* one rounded add at a time */
  for (uint64_t i = 0; i < n; i++)
    v = v + x;
  return v;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

/* A value of the kinds counter sums meet, and some they never do. */
static double pick(void) {
  uint64_t b;
  double v;
  switch (rnd() % 8) {
  case 0:
    return (double)(rnd() % 5000); /* integers */
  case 1:
    return (double)(rnd() % 100000) * 1.41; /* cycles at 1.41 GHz */
  case 2:
    return ldexp((double)(rnd() | 1), -(int)(rnd() % 90)); /* 53 bits */
  case 3:
    b = rnd() % 100000; /* subnormal */
    memcpy(&v, &b, sizeof(v));
    return v;
  case 4:
    return ldexp((double)(2 * (rnd() % 64) + 1), -(int)(rnd() % 8 + 1));
  case 5:
    return 0.0;
  default:
    return (double)rnd() / 7.0;
  }
}

TEST(perfmon_add_n_matches_one_by_one) {
  for (int i = 0; i < 20000; i++) {
    double s = rnd() % 4 ? pick() : 0.0, x = pick();
    uint64_t n = rnd() % 10 ? rnd() % 300 : rnd() % 5000;
    ASSERT_EQ(bits(gp__sim_add_n(s, x, n)), bits(one_by_one(s, x, n)));
  }
  /* Ties: x an odd multiple of half the ulp of s, so that each add rounds
   * to even; in every binade. */
  for (int e = -1070; e < 1000; e += 13) {
    double s = ldexp((double)((1ull << 52) | (rnd() >> 12)), e);
    double x = ldexp((double)(2 * (rnd() % 1000) + 1), e - 1);
    uint64_t n = rnd() % 3000;
    ASSERT_EQ(bits(gp__sim_add_n(s, x, n)), bits(one_by_one(s, x, n)));
  }
  /* Zeros, infinities, NaN, negatives, the top of the range. */
  const double sp[] = {0.0,   -0.0, INFINITY,  -INFINITY, NAN,
                       -3.25, 1.0,  0x1p-1074, DBL_MAX,   0x1p1023};
  for (size_t i = 0; i < GP_ARRAY_SIZE(sp); i++)
    for (size_t j = 0; j < GP_ARRAY_SIZE(sp); j++)
      for (uint64_t n = 0; n < 4; n++) {
        double a = gp__sim_add_n(sp[i], sp[j], n);
        double b = one_by_one(sp[i], sp[j], n);
        ASSERT(bits(a) == bits(b) || (isnan(a) && isnan(b)));
      }
}

/* n simulated compute GPUs. */
static void init_compute(uint32_t n) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = n;
  for (uint32_t i = 0; i < n; i++)
    cfg.models[i] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&cfg));
}

/* What one-by-one counting gives: a segment's sums, as the scheduler
 * added each job before runs. */
typedef struct expect {
  const sim_model *m;
  sim_acc acc;
} expect;

static void expect_kernel(expect *e, const gp_sim_kernel_desc *kd,
                          uint32_t grid, uint32_t block) {
  sim_work_stats st;
  gp_sim_dim3 g = {grid, 1, 1}, b = {block, 1, 1};
  double dur = (double)gp__sim_kernel_cost(e->m, kd, g, b, 0, &st);
  e->acc.jobs += 1.0;
  e->acc.work_ns += dur;
  e->acc.kernel_ns += dur;
  double *d = (double *)&e->acc.k;
  const double *s = (const double *)&st;
  for (size_t i = 0; i < sizeof(st) / sizeof(double); i++)
    d[i] += s[i];
}

static void launch(gp_sim_stream *s, gp_sim_kernel *k, expect *e,
                   const gp_sim_kernel_desc *kd, uint32_t grid, uint32_t block,
                   int times) {
  gp_sim_dim3 g = {grid, 1, 1}, b = {block, 1, 1};
  for (int i = 0; i < times; i++) {
    ASSERT_OK(gp_sim_launch(s, k, g, b, 0));
    expect_kernel(e, kd, grid, block);
  }
}

/* Adds what the segment e gives each counter of pm (those that do not
 * depend on the span or the busy time) to num and den, and starts the
 * next segment. */
static void expect_fold(expect *e, const gp_perfmon *pm, double *num,
                        double *den) {
  for (uint32_t i = 0; i < pm->num_counters; i++) {
    double n = 0.0, d = 0.0;
    gp__sim_counter_eval(e->m, pm->cat, pm->index[i], &e->acc, 0.0, 0.0, &n,
                         &d);
    num[i] += n;
    den[i] += d;
  }
  memset(&e->acc, 0, sizeof(e->acc));
}

/* Long runs of one launch, broken by other kernels, a fill, a read of the
 * values and a kernel created where a destroyed one lived: the perfmon's
 * sums are, to the bit, those of adding job after job. */
TEST(perfmon_runs_sum_like_one_by_one) {
  init_compute(1);
  const char *names[] = {"gpu__time_duration.sum",
                         "sm__warps_active.avg.pct_of_peak_sustained_active",
                         "smsp__inst_executed.sum",
                         "lts__t_sector_hit_rate.pct", "dram__bytes_write.sum"};
  uint32_t ids[5];
  size_t n = 0;
  ASSERT_OK(gp_counter_select(0, names, 5, ids, 5, &n));
  ASSERT_EQ(n, 5);
  gp_perfmon *pm;
  ASSERT_OK(gp_perfmon_create(0, ids, 5, &pm));
  gp_sim_context *ctx;
  gp_sim_stream *s;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_sim_stream_create(ctx, &s));
  ASSERT_OK(gp_sim_stream_set_perfmon(s, pm));
  uint64_t mem = 0;
  ASSERT_OK(gp_sim_malloc(ctx, 1 << 20, &mem));
  /* Fractional parameters, so that the counts are not integers and the
   * order of the rounded adds shows. */
  gp_sim_kernel_desc da = tu_kernel_desc("a", 3.7, 5.3);
  gp_sim_kernel_desc db = tu_kernel_desc("b", 11.1, 2.9);
  da.read_fraction = 0.37;
  da.cache_locality = 0.61;
  db.cache_locality = 0.13;
  gp_sim_kernel *ka, *kb;
  ASSERT_OK(gp_sim_kernel_create(&da, &ka));
  ASSERT_OK(gp_sim_kernel_create(&db, &kb));
  expect e;
  memset(&e, 0, sizeof(e));
  e.m = gp__sim_model_get(GP_SIM_MODEL_COMPUTE);
  double num[5] = {0}, den[5] = {0};

  launch(s, ka, &e, &da, 37, 96, 700);
  launch(s, kb, &e, &db, 37, 96, 1);
  launch(s, ka, &e, &da, 37, 96, 3);
  launch(s, ka, &e, &da, 38, 96, 2); /* another grid: another run */
  ASSERT_OK(gp_sim_memset_async(s, mem, 0, 4096));
  e.acc.jobs += 1.0;
  e.acc.work_ns += (double)gp__sim_fill_cost(e.m, 4096);
  e.acc.k.dram_write += 4096.0;
  launch(s, ka, &e, &da, 37, 96, 500);
  /* A read ends the segment; the run goes on in the next one. */
  gp_counter_value v[5];
  ASSERT_OK(gp_perfmon_get_values(pm, v, 1));
  expect_fold(&e, pm, num, den);
  launch(s, ka, &e, &da, 37, 96, 300);
  /* Same launch, new kernel, maybe at the same address: its own run. */
  ASSERT_OK(gp_sim_kernel_destroy(ka));
  da.flops_per_thread = 7.9;
  ASSERT_OK(gp_sim_kernel_create(&da, &ka));
  launch(s, ka, &e, &da, 37, 96, 400);
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_perfmon_get_values(pm, v, 0));
  expect_fold(&e, pm, num, den);

  for (uint32_t i = 0; i < 5; i++) {
    ASSERT_EQ(bits(pm->num[i]), bits(num[i]));
    ASSERT_EQ(bits(pm->den[i]), bits(den[i]));
  }
  ASSERT_GT(v[2].i64, 0);
  gp_perfmon_destroy(pm);
  gp_sim_kernel_destroy(ka);
  gp_sim_kernel_destroy(kb);
  gp_sim_context_destroy(ctx);
  gp_sim_shutdown();
}

/* A segment whose jobs leave their first queue: jobs still to come on it
 * (behind waits for another device's work, so with gaps) become the busy
 * union's intervals, and work on a second queue overlapping them is not
 * counted twice. Utilization is then the device's busy fraction over the
 * segment, as the queues' busy logs give it. */
TEST(perfmon_busy_union_across_queues) {
  init_compute(2);
  const char *names[] = {"Utilization", "gpu__time_duration.sum"};
  uint32_t ids[2];
  size_t n = 0;
  ASSERT_OK(gp_counter_select(0, names, 2, ids, 2, &n));
  gp_perfmon *pm;
  ASSERT_OK(gp_perfmon_create(0, ids, 2, &pm));
  gp_sim_context *c0, *c1;
  gp_sim_stream *a, *b, *x;
  ASSERT_OK(gp_sim_context_create(0, &c0));
  ASSERT_OK(gp_sim_context_create(1, &c1));
  ASSERT_OK(gp_sim_stream_create(c0, &a));
  ASSERT_OK(gp_sim_stream_create(c0, &b));
  ASSERT_OK(gp_sim_stream_create(c1, &x));
  ASSERT_OK(gp_sim_stream_set_perfmon(a, pm));
  ASSERT_OK(gp_sim_stream_set_perfmon(b, pm));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 400, 64);
  gp_sim_kernel_desc ld = tu_kernel_desc("long", 40000, 4096);
  gp_sim_kernel *k, *lk;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(gp_sim_kernel_create(&ld, &lk));
  gp_sim_event *e1, *e2;
  ASSERT_OK(gp_sim_event_create(c1, &e1));
  ASSERT_OK(gp_sim_event_create(c1, &e2));
  gp_sim_dim3 g = {256, 1, 1}, blk = {128, 1, 1}, big = {4096, 1, 1};

  /* Device 1 finishes two long kernels, one after the other, later on. */
  ASSERT_OK(gp_sim_launch(x, lk, big, blk, 0));
  ASSERT_OK(gp_sim_event_record(e1, x));
  ASSERT_OK(gp_sim_launch(x, lk, big, blk, 0));
  ASSERT_OK(gp_sim_event_record(e2, x));
  /* Stream a: now, after e1, after e2: three intervals ahead. */
  for (int i = 0; i < 3; i++)
    ASSERT_OK(gp_sim_launch(a, k, g, blk, 0));
  ASSERT_OK(gp_sim_stream_wait_event(a, e1));
  for (int i = 0; i < 3; i++)
    ASSERT_OK(gp_sim_launch(a, k, g, blk, 0));
  ASSERT_OK(gp_sim_stream_wait_event(a, e2));
  ASSERT_OK(gp_sim_launch(a, k, g, blk, 0));
  /* Stream b, on another queue: now, and over a's jobs after e1. */
  ASSERT_OK(gp_sim_launch(b, k, g, blk, 0));
  ASSERT_OK(gp_sim_stream_wait_event(b, e1));
  ASSERT_OK(gp_sim_launch(b, k, big, blk, 0));
  ASSERT_OK(gp_sim_context_synchronize(c0));

  sim_device *d = gp__sim_device_by_id(0);
  gp__sim_lock();
  ASSERT_EQ(d->pm.seg_queue, SIM_QUEUES_MANY);
  uint64_t t0 = d->pm.seg_start, t1 = d->pm.seg_end;
  double busy = gp__sim_busy_fraction(d, t0, t1);
  gp__sim_unlock();
  gp_counter_value v[2];
  ASSERT_OK(gp_perfmon_get_values(pm, v, 0));
  ASSERT_NEAR(v[0].f64, 100.0 * busy, 1e-9);
  /* The setting holds what it should: jobs overlapped (their time adds
   * up to more than the busy time), and there were gaps. */
  ASSERT_GT((double)v[1].i64, busy * (double)(t1 - t0) + 1000.0);
  ASSERT(busy > 0.0 && busy < 0.5);

  /* A run on one queue, a copy on another, the run's launch again: the
   * copy makes the segment one of many queues, whose jobs each add their
   * busy time, the repeated launch's too. */
  gp_perfmon *pm2;
  ASSERT_OK(gp_perfmon_create(0, ids, 2, &pm2));
  ASSERT_OK(gp_sim_stream_set_perfmon(a, pm2));
  uint64_t mem = 0;
  ASSERT_OK(gp_sim_malloc(c0, 1 << 24, &mem));
  static char host[1 << 16];
  for (int i = 0; i < 5; i++)
    ASSERT_OK(gp_sim_launch(a, k, g, blk, 0));
  ASSERT_OK(gp_sim_memcpy_async(a, mem, (uint64_t)(uintptr_t)host, sizeof(host),
                                GP_MEMCPY_HTOD));
  for (int i = 0; i < 5; i++)
    ASSERT_OK(gp_sim_launch(a, k, g, blk, 0));
  ASSERT_OK(gp_sim_context_synchronize(c0));
  gp__sim_lock();
  ASSERT_EQ(d->pm.seg_queue, SIM_QUEUES_MANY);
  t0 = d->pm.seg_start;
  t1 = d->pm.seg_end;
  busy = gp__sim_busy_fraction(d, t0, t1);
  gp__sim_unlock();
  ASSERT_OK(gp_perfmon_get_values(pm2, v, 0));
  ASSERT_NEAR(v[0].f64, 100.0 * busy, 1e-9);
  gp_perfmon_destroy(pm2);

  gp_sim_event_destroy(e1);
  gp_sim_event_destroy(e2);
  gp_perfmon_destroy(pm);
  gp_sim_kernel_destroy(k);
  gp_sim_kernel_destroy(lk);
  gp_sim_context_destroy(c0);
  gp_sim_context_destroy(c1);
  gp_sim_shutdown();
}
