/*
 * test_sampling_log.c - the simulated GPU's log of jobs for periodic
 * sampling when jobs end out of order: short jobs that end behind a long
 * one still running on another queue are skipped by the windows that
 * follow and dropped together once they outnumber the others. The log
 * stays small, and the windows still conserve every byte and agree with
 * the simulator's busy fraction.
 */
#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

typedef struct window {
  uint64_t t0, t1;
  double util;
  int64_t dram;
} window;

#define SHORT_JOBS 300
#define MAX_WINDOWS 4096

TEST(sampling_log_drops_jobs_ended_behind_a_long_one) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = 1;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&cfg));
  tu_capture(1 << 24, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s1 = gp_sim_default_stream(ctx), *s2;
  ASSERT_OK(gp_sim_stream_create(ctx, &s2));
  uint32_t ids[] = {tu_counter_id(0, "Utilization"),
                    tu_counter_id(0, "dram__bytes_read.sum")};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  const uint64_t period = 20000;
  c.counter_period_ns = period;
  c.counter_ids = ids;
  c.num_counter_ids = 2;
  uint64_t t_start = gp__sim_now();
  ASSERT_OK(gp_counters_start(0, &c));

  const sim_model *m = gp__sim_model_get(GP_SIM_MODEL_COMPUTE);
  gp_sim_kernel_desc ld = tu_kernel_desc("long", 200000, 256);
  gp_sim_kernel_desc sd = tu_kernel_desc("short", 100, 64);
  gp_sim_kernel *lk, *sk;
  ASSERT_OK(gp_sim_kernel_create(&ld, &lk));
  ASSERT_OK(gp_sim_kernel_create(&sd, &sk));
  sim_work_stats st;
  uint64_t long_ns =
      gp__sim_kernel_cost(m, &ld, tu_dim(4096), tu_dim(256), 0, &st);
  double dram = st.dram_read;
  uint64_t short_ns =
      gp__sim_kernel_cost(m, &sd, tu_dim(64), tu_dim(256), 0, &st);
  uint64_t gap = short_ns + 1000;

  ASSERT_OK(gp_sim_launch(s2, lk, tu_dim(4096), tu_dim(256), 0));
  gp__sim_lock();
  uint64_t long_end = s2->tail_end, long_start = long_end - long_ns;
  gp__sim_unlock();
  /* The short jobs all end while the long one runs. */
  ASSERT_GT(long_end, gp__sim_now() + 2 * SHORT_JOBS * gap);
  for (int i = 0; i < SHORT_JOBS; i++) {
    ASSERT_OK(gp_sim_launch(s1, sk, tu_dim(64), tu_dim(256), 0));
    dram += st.dram_read;
    ASSERT_OK(gp_sim_host_work(gap));
  }
  /* Every short job has ended, behind the long one: the log keeps the
   * jobs still running and a few ended ones, not all 300 (nor a full
   * log's worth, which making room for a job would drop too). */
  gp__sim_lock();
  const sim_sampling *sm = &gp__sim_device_by_id(0)->smp;
  ASSERT_LT(gp__sim_now(), long_end);
  ASSERT_LE(sm->n - sm->head, 8);
  gp__sim_unlock();
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_sim_host_work(3 * period));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));

  static window w[MAX_WINDOWS];
  size_t nw = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    if (x->counter_id == ids[0]) {
      ASSERT(nw < MAX_WINDOWS);
      w[nw].t0 = x->window_start;
      w[nw].t1 = x->timestamp;
      w[nw].util = x->value.f64;
      nw++;
    } else {
      ASSERT_EQ(x->counter_id, ids[1]);
      ASSERT_GT(nw, 0);
      w[nw - 1].dram = x->value.i64;
    }
  }
  ASSERT_GT(nw, (long_end - t_start) / period);
  double total = 0;
  size_t busy = 0;
  sim_device *d = gp__sim_device_by_id(0);
  gp__sim_lock();
  for (size_t i = 0; i < nw; i++) {
    if (i > 0)
      ASSERT_EQ(w[i].t0, w[i - 1].t1); /* contiguous */
    total += (double)w[i].dram;
    /* The long job keeps the device busy while it runs. */
    uint64_t h0 = t_start + i * period, h1 = h0 + period;
    if (h0 >= long_start && h1 <= long_end) {
      ASSERT_NEAR(w[i].util, 100.0, 1e-9);
      busy++;
    }
    if (i + 1 < nw)
      ASSERT_NEAR(w[i].util, 100.0 * gp__sim_busy_fraction(d, h0, h1), 1e-9);
  }
  gp__sim_unlock();
  ASSERT_GT(busy, (long_end - long_start) / period - 2);
  ASSERT_NEAR(total, dram, (double)nw); /* every byte in some window */
  gp_sim_kernel_destroy(lk);
  gp_sim_kernel_destroy(sk);
  gp_sim_context_destroy(ctx);
}
