/*
 * test_sampling_mux.c - time-multiplexed sampling on the simulated GPU
 * (gp_counter_config.multiplex): the three dram counters, of a block that
 * counts two at once, take turns perf's way, and what each counts in its
 * turns is what it counts alone.
 *
 * The truth comes from runs without multiplexing: the same workload, in
 * virtual time, from an idle device, sampled with the counters that fit
 * ({read, write}, then {throughput}); window i and kernel i of each run
 * are the same work.
 */
#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

#define PERIOD 50000 /* ns; slices of GP_COUNTER_MUX_PERIODS periods */
#define MAX_W 256
#define MAX_K 64

/* One run's records: per window and per kernel, each counter's value
 * (NAN: none). */
typedef struct run {
  size_t nw, nk;
  uint64_t w0[MAX_W], w1[MAX_W]; /* the windows, in trace time */
  double w[MAX_W][3];
  uint64_t kstart[MAX_K];
  double k[MAX_K][3];
} run;

/* Samples `n` of the three dram counters (ids) on device 0, periodically
 * and per kernel, over the same workload, and gathers the records. */
static void sample(gp_sim_context *ctx, gp_sim_kernel *k, const uint32_t *all,
                   const uint32_t *ids, size_t n, bool multiplex, run *out) {
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = PERIOD;
  c.counter_ids = ids;
  c.num_counter_ids = n;
  c.instrumented = 1;
  c.multiplex = multiplex;
  tu_clear();
  ASSERT_OK(gp_counters_start(0, &c));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  for (int i = 0; i < 40; i++) {
    ASSERT_OK(gp_sim_launch(s, k, tu_dim(64 + 32 * (uint32_t)(i % 7)),
                            tu_dim(256), 0));
    ASSERT_OK(gp_sim_host_work(9000 + 4000 * (uint64_t)(i % 5)));
  }
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_sim_host_work(2 * PERIOD));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < MAX_W; i++)
    out->w[i][0] = out->w[i][1] = out->w[i][2] = NAN;
  for (size_t i = 0; i < MAX_K; i++)
    out->k[i][0] = out->k[i][1] = out->k[i][2] = NAN;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++) {
    ASSERT(out->nk < MAX_K);
    out->kstart[out->nk++] = ((const gp_activity_kernel *)r)->start;
  }
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    int j = x->counter_id == all[0] ? 0 : x->counter_id == all[1] ? 1 : 2;
    double v =
        x->value_type == GP_VALUE_INT64 ? (double)x->value.i64 : x->value.f64;
    if (x->correlation_id) {
      /* Launches one after the other: correlation ids in order. */
      size_t ki = 0;
      for (size_t m = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, m)); m++)
        if (((const gp_activity_kernel *)r)->correlation_id ==
            x->correlation_id)
          ki = m;
      out->k[ki][j] = v;
      continue;
    }
    size_t wi = 0;
    while (wi < out->nw && out->w0[wi] != x->window_start)
      wi++;
    if (wi == out->nw) {
      ASSERT(out->nw < MAX_W);
      out->w0[wi] = x->window_start;
      out->w1[wi] = x->timestamp;
      out->nw++;
    }
    out->w[wi][j] = v;
  }
}

/* The slice (from 0) a trace time falls in: that of the window of run r
 * holding it. */
static size_t slice_of(const run *r, uint64_t t) {
  for (size_t i = 0; i < r->nw; i++)
    if (t >= r->w0[i] && t < r->w1[i])
      return i / GP_COUNTER_MUX_PERIODS;
  return SIZE_MAX;
}

TEST(sampling_multiplexed_takes_turns) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = 1;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&cfg));
  tu_capture(1 << 22, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 4000, 256);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  const uint32_t all[3] = {
      tu_counter_id(0, "dram__bytes_read.sum"),
      tu_counter_id(0, "dram__bytes_write.sum"),
      tu_counter_id(0, "dram__throughput.avg.pct_of_peak_sustained_"
                       "elapsed")};
  static run mux, rw, tp;
  sample(ctx, k, all, all, 3, true, &mux);
  sample(ctx, k, all, all, 2, false, &rw);
  sample(ctx, k, all, all + 2, 1, false, &tp);
  ASSERT_GT(mux.nw, 3 * GP_COUNTER_MUX_PERIODS * 2); /* a few rotations */
  ASSERT_EQ(mux.nw, rw.nw);
  ASSERT_EQ(mux.nw, tp.nw);
  ASSERT_EQ(mux.nk, 40u);
  ASSERT_EQ(rw.nk, 40u);
  /* Slice s counts, from counter s % 3 on, the two that fit. */
  for (size_t i = 0; i < mux.nw; i++) {
    size_t s = i / GP_COUNTER_MUX_PERIODS % 3;
    for (size_t j = 0; j < 3; j++) {
      bool turn = j == s || j == (s + 1) % 3;
      const run *alone = j < 2 ? &rw : &tp;
      ASSERT_EQ(!isnan(mux.w[i][j]), turn);
      if (turn)
        ASSERT_NEAR(mux.w[i][j], alone->w[i][j],
                    1e-9 * fabs(alone->w[i][j]) + 1e-9);
    }
  }
  /* A kernel counts with the slice it started in. */
  size_t counted[3] = {0, 0, 0};
  for (size_t i = 0; i < mux.nk; i++) {
    size_t s = slice_of(&mux, mux.kstart[i]);
    ASSERT(s != SIZE_MAX);
    for (size_t j = 0; j < 3; j++) {
      bool turn = j == s % 3 || j == (s + 1) % 3;
      const run *alone = j < 2 ? &rw : &tp;
      ASSERT_EQ(!isnan(mux.k[i][j]), turn);
      if (turn) {
        ASSERT_NEAR(mux.k[i][j], alone->k[i][j],
                    1e-9 * fabs(alone->k[i][j]) + 1e-9);
        counted[j]++;
      }
    }
  }
  for (size_t j = 0; j < 3; j++)
    ASSERT(counted[j] > 0 && counted[j] < mux.nk);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}
