/*
 * test_sampling.c - sampling counters into COUNTER records: config
 * validation, periodic windows (contiguous, conserving totals, Utilization
 * consistent with the simulator's busy fraction), and the instrumented
 * filter pipeline exactly as the Perfetto seed describes it.
 */
#include <time.h>

#include "backend/sim/simInt.h"
#include "counters/derived.h"
#include "harness.h"
#include "testutil.h"

static void init_sim(void) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = 2;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  cfg.models[1] = GP_SIM_MODEL_V3D;
  ASSERT_OK(gp_sim_init(&cfg));
}

TEST(sampling_config_validation) {
  init_sim();
  uint32_t ids[] = {1, 2};
  const char *names[] = {"Utilization"};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = 100000;
  c.counter_ids = ids;
  c.num_counter_ids = 1;
  c.counter_names = names;
  c.num_counter_names = 1;
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL); /* ids and names */
  c.num_counter_names = 0;
  c.counter_names = NULL;
  ASSERT_ERR(gp_counters_start(0, NULL), GP_EINVAL);
  c.counter_period_ns = 0;
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL); /* nothing to do */
  c.counter_period_ns = 10; /* below the device's minimum */
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL);
  c.counter_period_ns = 100000;
  c.multiplex = 2; /* 0 or 1 */
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL);
  c.multiplex = 0;
  uint32_t unknown[] = {4242};
  c.counter_ids = unknown;
  ASSERT_ERR(gp_counters_start(0, &c), GP_ENOCOUNTER);
  uint32_t dram[] = {10, 11, 12};
  c.counter_ids = dram;
  c.num_counter_ids = 3;
  ASSERT_ERR(gp_counters_start(0, &c), GP_ECAPACITY);
  /* Multiplexed, the simulated GPU takes them (test_stat_perf.c checks
   * what it counts). */
  gp_counter_catalog_info ci;
  ASSERT_EQ(gp_counter_catalog(0, &ci), 0);
  ASSERT_EQ(ci.supports_multiplex, 1u);
  c.multiplex = 1;
  ASSERT_EQ(gp_counters_start(0, &c), 0);
  ASSERT_EQ(gp_counters_stop(0), 0);
  c.multiplex = 0;
  c.counter_ids = ids;
  c.num_counter_ids = 2;
  gp_activity_range r = {10, 5};
  c.ranges = &r;
  c.num_ranges = 1;
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL); /* filter, not instr. */
  c.instrumented = 1;
  gp_activity_name_filter nf = {"k*", 7, 0};
  c.name_filters = &nf;
  c.num_name_filters = 1;
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL); /* bad name base */
  nf.name_base = GP_NAME_BASE_DEMANGLED;
  const char *empty[] = {""};
  c.tx_include_globs = empty;
  c.num_tx_include_globs = 1;
  ASSERT_ERR(gp_counters_start(0, &c), GP_EINVAL);
  c.num_tx_include_globs = 0;
  c.tx_include_globs = NULL;
  ASSERT_ERR(gp_counters_stop(0), GP_ESTATE); /* nothing started */
  ASSERT_ERR(gp_counters_start(77, &c), GP_ENODEV);
  ASSERT_OK(gp_counters_start(0, &c));
  ASSERT_ERR(gp_counters_start(0, &c), GP_EBUSY);
  ASSERT_ERR(gp_counters_start(GP_ALL_DEVICES, &c), GP_EBUSY);
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_ERR(gp_counters_stop(0), GP_ESTATE);
  /* Several devices: names need only exist on one of them. */
  const char *mixed[] = {"Utilization", "cycle-count"};
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = 100000;
  c.counter_names = mixed;
  c.num_counter_names = 2;
  ASSERT_ERR(gp_counters_start(0, &c), GP_ENOCOUNTER);
  ASSERT_OK(gp_counters_start(GP_ALL_DEVICES, &c));
  c.counter_names = mixed + 1;
  c.num_counter_names = 1;
  ASSERT_ERR(gp_counters_start(1, &c), GP_EBUSY);
  c.num_counter_names = 2;
  c.counter_names = mixed;
  ASSERT_OK(gp_counters_stop(GP_ALL_DEVICES));
  ASSERT_ERR(gp_counters_stop(GP_ALL_DEVICES), GP_ESTATE);
  const char *nowhere[] = {"Utilization", "no-such-thing"};
  c.counter_names = nowhere;
  ASSERT_ERR(gp_counters_start(GP_ALL_DEVICES, &c), GP_ENOCOUNTER);
  ASSERT_ERR(gp_counters_stop(GP_ALL_DEVICES), GP_ESTATE);
}

typedef struct window {
  uint64_t t0, t1;
  double util, elapsed;
  int64_t dram;
} window;

TEST(sampling_periodic_windows) {
  init_sim();
  tu_capture(1 << 22, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s1 = gp_sim_default_stream(ctx), *s2;
  ASSERT_OK(gp_sim_stream_create(ctx, &s2));
  uint32_t ids[] = {tu_counter_id(0, "Utilization"),
                    tu_counter_id(0, "dram__bytes_read.sum"),
                    tu_counter_id(0, "sm__cycles_elapsed.avg"),
                    tu_counter_id(0, "sm__cycles_active.avg")};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  const uint64_t period = 50000;
  c.counter_period_ns = period;
  c.counter_ids = ids;
  c.num_counter_ids = 4;
  uint64_t t_start = gp__sim_now();
  ASSERT_OK(gp_counters_start(0, &c));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 4000, 256);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  double dram = 0;
  for (int i = 0; i < 12; i++) {
    gp_sim_stream *s = i % 3 ? s1 : s2; /* two queues, overlapping */
    ASSERT_OK(gp_sim_launch(s, k, tu_dim(256 + 64 * i), tu_dim(256), 0));
    sim_work_stats st;
    gp__sim_kernel_cost(gp__sim_model_get(GP_SIM_MODEL_COMPUTE), &kd,
                        tu_dim(256 + 64 * i), tu_dim(256), 0, &st);
    dram += st.dram_read;
    ASSERT_OK(gp_sim_host_work(7000 * (uint64_t)(i % 4)));
  }
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_sim_host_work(3 * period));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));

  window w[256];
  size_t nw = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    ASSERT_EQ(x->correlation_id, 0);
    ASSERT_EQ(x->perfmon_id, 0);
    ASSERT_EQ(x->device_id, 0);
    if (x->counter_id == ids[0]) {
      ASSERT(nw < 256);
      ASSERT_EQ(x->value_type, GP_VALUE_DOUBLE);
      w[nw].t0 = x->window_start;
      w[nw].t1 = x->timestamp;
      w[nw].util = x->value.f64;
      nw++;
    } else if (x->counter_id == ids[1]) {
      ASSERT_EQ(x->value_type, GP_VALUE_INT64);
      w[nw - 1].dram = x->value.i64;
    } else if (x->counter_id == ids[2]) {
      /* Elapsed cycles of the window in device time: the period, but
       * for the last, partial window. */
      w[nw - 1].elapsed = x->value.f64;
    } else if (x->counter_id == ids[3]) {
      ASSERT_LE(x->value.f64, w[nw - 1].elapsed); /* active <= elapsed */
      ASSERT_GE(x->value.f64, 0.0);
    }
  }
  ASSERT_GT(nw, 5);
  double total = 0;
  sim_device *d = gp__sim_device_by_id(0);
  gp__sim_lock();
  for (size_t i = 0; i < nw; i++) {
    if (i > 0)
      ASSERT_EQ(w[i].t0, w[i - 1].t1); /* contiguous */
    ASSERT(w[i].util >= 0.0 && w[i].util <= 100.0);
    if (i + 1 < nw)
      ASSERT_NEAR(w[i].elapsed, (double)period * 1.41, 1e-6);
    total += (double)w[i].dram;
    /* Utilization is the simulator's busy fraction over the window. */
    uint64_t h0 = t_start + i * period, h1 = h0 + period;
    if (i + 1 < nw)
      ASSERT_NEAR(w[i].util, 100.0 * gp__sim_busy_fraction(d, h0, h1), 1e-9);
  }
  gp__sim_unlock();
  ASSERT_NEAR(total, dram, (double)nw); /* every byte in some window */
  size_t partly = 0, idle = 0;
  for (size_t i = 0; i < nw; i++) {
    partly += w[i].util > 1.0 && w[i].util < 99.0;
    idle += w[i].util == 0.0;
  }
  ASSERT_GT(partly, 1); /* the workload leaves gaps inside windows */
  ASSERT_GT(idle, 0);   /* and idle windows at the end */
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

/* Launches one kernel and returns the correlation id of its launch (the
 * next one after `after`). */
static uint64_t launch(gp_sim_stream *s, gp_sim_kernel *k) {
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(32), tu_dim(128), 0));
  return 0;
}

static size_t instrumented(uint64_t *corr, size_t cap, uint32_t counter) {
  size_t n = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    if (x->correlation_id && x->counter_id == counter && n < cap)
      corr[n++] = x->correlation_id;
  }
  return n;
}

static const gp_activity_kernel *kernel_of(uint64_t corr) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++)
    if (((const gp_activity_kernel *)r)->correlation_id == corr)
      return (const gp_activity_kernel *)r;
  return NULL;
}

/*
 * The seed's example: myKernel* on demangled names, inside training*
 * ranges, skip 10, count 5 - exactly the 11th to 15th matching kernels.
 * Kernels that do not match (other names, outside the ranges) neither
 * get values nor count towards the skip.
 */
TEST(sampling_seed_example_filter) {
  init_sim();
  tu_capture(1 << 22, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc dm = tu_kernel_desc("_Z8myKernelPfi", 800, 32);
  dm.demangled_name = "myKernel(float*, int)";
  gp_sim_kernel_desc dmx = tu_kernel_desc("myKernelMangledOnly", 800, 32);
  dmx.demangled_name = "void helper(float*)";
  gp_sim_kernel_desc dother = tu_kernel_desc("_Z5otherv", 100, 8);
  dother.demangled_name = "other()";
  gp_sim_kernel *my, *myx, *other;
  ASSERT_OK(gp_sim_kernel_create(&dm, &my));
  ASSERT_OK(gp_sim_kernel_create(&dmx, &myx));
  ASSERT_OK(gp_sim_kernel_create(&dother, &other));

  const char *names[] = {"sm__cycles_elapsed.avg", "sm__cycles_active.avg"};
  gp_activity_name_filter nf = {"myKernel*", GP_NAME_BASE_DEMANGLED, 0};
  const char *inc[] = {"training*"};
  gp_activity_range rg = {10, 5};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_names = names;
  c.num_counter_names = 2;
  c.instrumented = 1;
  c.name_filters = &nf;
  c.num_name_filters = 1;
  c.tx_include_globs = inc;
  c.num_tx_include_globs = 1;
  c.ranges = &rg;
  c.num_ranges = 1;
  ASSERT_OK(gp_counters_start(0, &c));

  /* Matching launches get numbers 1, 2, ... in launch order. */
  uint32_t match = 0;
  uint64_t want_first = 0, want_last = 0;
  for (int step = 0; step < 4; step++) {
    launch(s, my); /* outside any range: not a match */
    ASSERT_OK(gp_range_push(NULL, "eval"));
    launch(s, my); /* in a range that does not match */
    ASSERT_OK(gp_range_pop());
    ASSERT_OK(gp_range_push(NULL, "training step"));
    ASSERT_OK(gp_range_push(NULL, "forward")); /* nested: outer matches */
    for (int i = 0; i < 3; i++) {
      launch(s, other);
      launch(s, myx);
      launch(s, my);
      match++;
      (void)want_first;
      (void)want_last;
    }
    ASSERT_OK(gp_range_pop());
    launch(s, my);
    match++;
    ASSERT_OK(gp_range_pop());
  }
  ASSERT_EQ(match, 16);
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));

  /* The matching launches, in order, from the kernel records. */
  uint64_t matching[32];
  size_t nm = 0;
  const gp_activity *r;
  int seen_in_training = 0;
  (void)seen_in_training;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++) {
    const gp_activity_kernel *k = (const gp_activity_kernel *)r;
    if (k->name_id == my->name_id && nm < 32)
      matching[nm++] = k->correlation_id;
  }
  ASSERT_EQ(nm, 24); /* 6 per step, 4 of them in training ranges */
  /* Of each step's six myKernel launches, the first two are outside. */
  uint64_t in_training[16];
  size_t nt = 0;
  for (size_t i = 0; i < nm; i++)
    if (i % 6 >= 2)
      in_training[nt++] = matching[i];
  ASSERT_EQ(nt, 16);

  uint64_t got[64];
  size_t ng = instrumented(got, 64, tu_counter_id(0, "sm__cycles_elapsed.avg"));
  ASSERT_EQ(ng, 5);
  for (size_t i = 0; i < 5; i++)
    ASSERT_EQ(got[i], in_training[10 + i]);
  /* Two values each, over the kernel's own [start, end]. */
  size_t total = 0;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    const gp_activity_kernel *k = kernel_of(x->correlation_id);
    ASSERT_NOT_NULL(k);
    ASSERT_EQ(x->window_start, k->start);
    ASSERT_EQ(x->timestamp, k->end);
    ASSERT_EQ(x->value_type, GP_VALUE_DOUBLE);
    ASSERT_GT(x->value.f64, 0.0);
    total++;
  }
  ASSERT_EQ(total, 10);
  gp_sim_kernel_destroy(my);
  gp_sim_kernel_destroy(myx);
  gp_sim_kernel_destroy(other);
  gp_sim_context_destroy(ctx);
}

TEST(sampling_exclude_beats_include) {
  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 100, 8);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  uint32_t util = tu_counter_id(0, "Utilization");
  const char *inc[] = {"training*"};
  const char *exc[] = {"*validation*"};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_ids = &util;
  c.num_counter_ids = 1;
  c.instrumented = 1;
  c.tx_include_globs = inc;
  c.num_tx_include_globs = 1;
  c.tx_exclude_globs = exc;
  c.num_tx_exclude_globs = 1;
  ASSERT_OK(gp_counters_start(0, &c));
  ASSERT_OK(gp_range_push(NULL, "training epoch"));
  launch(s, k);                                      /* 1: included */
  ASSERT_OK(gp_range_push(NULL, "validation pass")); /* inner: excluded */
  launch(s, k);                                      /* 2: excluded */
  ASSERT_OK(gp_range_push(NULL, "training inner"));  /* included again? no */
  launch(s, k);                                      /* 3: still excluded */
  ASSERT_OK(gp_range_pop());
  ASSERT_OK(gp_range_pop());
  launch(s, k); /* 4: included */
  ASSERT_OK(gp_range_pop());
  ASSERT_OK(gp_range_push(NULL, "training validation"));
  launch(s, k); /* 5: matches both: exclude wins */
  ASSERT_OK(gp_range_pop());
  launch(s, k); /* 6: no range: not included */
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  uint64_t got[16];
  size_t ng = instrumented(got, 16, util);
  ASSERT_EQ(ng, 2);
  const gp_activity *r;
  uint64_t all[8];
  size_t na = 0;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++)
    all[na++] = ((const gp_activity_kernel *)r)->correlation_id;
  ASSERT_EQ(na, 6);
  ASSERT_EQ(got[0], all[0]);
  ASSERT_EQ(got[1], all[3]);
  /* An exclude glob alone: everything but the excluded passes. */
  tu_clear();
  c.num_tx_include_globs = 0;
  c.tx_include_globs = NULL;
  ASSERT_OK(gp_counters_start(0, &c));
  launch(s, k);
  ASSERT_OK(gp_range_push(NULL, "validation"));
  launch(s, k);
  ASSERT_OK(gp_range_pop());
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(instrumented(got, 16, util), 1);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

TEST(sampling_name_bases_and_ranges) {
  char buf[64];
  ASSERT_STR_EQ(gp__function_name("void ns::myKernel<float>(float*, int)", buf,
                                  sizeof(buf)),
                "myKernel");
  ASSERT_STR_EQ(gp__function_name("saxpy(float, float*)", buf, sizeof(buf)),
                "saxpy");
  ASSERT_STR_EQ(gp__function_name("plain", buf, sizeof(buf)), "plain");
  ASSERT_STR_EQ(gp__function_name("a::b::c<x::y<int>>()", buf, sizeof(buf)),
                "c");
  ASSERT_STR_EQ(
      gp__function_name("std::vector<int> ns::K<std::pair<a, b> >::run(int)",
                        buf, sizeof(buf)),
      "run");

  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z8myKernelIfEvPT_", 100, 8);
  kd.demangled_name = "void ns::myKernel<float>(float*)";
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  uint32_t util = tu_counter_id(0, "Utilization");
  struct {
    const char *glob;
    uint32_t base;
    size_t want;
  } cases[] = {
      {"myKernel*", GP_NAME_BASE_MANGLED, 0},
      {"_Z8myKernel*", GP_NAME_BASE_MANGLED, 3},
      {"void ns::myKernel*", GP_NAME_BASE_DEMANGLED, 3},
      {"myKernel", GP_NAME_BASE_FUNCTION, 3},
      {"myKernel*", GP_NAME_BASE_DEMANGLED, 0},
  };
  for (size_t i = 0; i < GP_ARRAY_SIZE(cases); i++) {
    tu_clear();
    gp_activity_name_filter nf = {cases[i].glob, cases[i].base, 0};
    gp_counter_config c;
    memset(&c, 0, sizeof(c));
    c.counter_ids = &util;
    c.num_counter_ids = 1;
    c.instrumented = 1;
    c.name_filters = &nf;
    c.num_name_filters = 1;
    ASSERT_OK(gp_counters_start(0, &c));
    for (int j = 0; j < 3; j++)
      launch(s, k);
    ASSERT_OK(gp_sim_context_synchronize(ctx));
    ASSERT_OK(gp_counters_stop(0));
    ASSERT_OK(gp_activity_flush_all(0));
    uint64_t got[8];
    if (instrumented(got, 8, util) != cases[i].want)
      gp_test_fail(__FILE__, __LINE__, "case %zu (%s): %zu instrumented", i,
                   cases[i].glob, instrumented(got, 8, util));
  }
  /* Several skip/count ranges; count 0 means "all the rest". */
  gp_activity_range rg[] = {{0, 1}, {3, 2}, {8, 0}};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_ids = &util;
  c.num_counter_ids = 1;
  c.instrumented = 1;
  c.ranges = rg;
  c.num_ranges = 3;
  tu_clear();
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_counters_start(0, &c));
  for (int j = 0; j < 10; j++)
    launch(s, k);
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  uint64_t got[16], all[16];
  size_t ng = instrumented(got, 16, util), na = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++)
    all[na++] = ((const gp_activity_kernel *)r)->correlation_id;
  ASSERT_EQ(na, 10);
  ASSERT_EQ(ng, 5); /* launches 0, 3, 4, 8, 9 */
  ASSERT_EQ(got[0], all[0]);
  ASSERT_EQ(got[1], all[3]);
  ASSERT_EQ(got[2], all[4]);
  ASSERT_EQ(got[3], all[8]);
  ASSERT_EQ(got[4], all[9]);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

/* Per-activity values are the activity's own work, from the cost model. */
TEST(sampling_instrumented_values) {
  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(1, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc kd = tu_kernel_desc("csd", 2000, 64);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  const char *names[] = {"AXI-read-bytes-seen-watch-0", "cycle-count",
                         "QPU-total-idle-clk-cycles"};
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_names = names;
  c.num_counter_names = 3;
  c.instrumented = 1;
  c.counter_period_ns = 1000000; /* both kinds at once */
  ASSERT_OK(gp_counters_start(1, &c));
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(48), tu_dim(64), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_counters_stop(1));
  ASSERT_OK(gp_activity_flush_all(0));
  sim_work_stats st;
  uint64_t ns = gp__sim_kernel_cost(gp__sim_model_get(GP_SIM_MODEL_V3D), &kd,
                                    tu_dim(48), tu_dim(64), 0, &st);
  const gp_activity *r;
  int per_activity = 0, periodic = 0;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    if (!x->correlation_id) {
      periodic++;
      continue;
    }
    per_activity++;
    if (x->counter_id == 42)
      ASSERT_NEAR(x->value.i64, st.dram_read, 1.0);
    else if (x->counter_id == 33)
      ASSERT_NEAR(x->value.i64, (double)ns * 0.5, 1.0);
    else
      ASSERT_NEAR(
          x->value.i64,
          (double)ns * 0.5 * 8 - (st.issue_cycles + st.stall_cycles) * 8, 1.0);
  }
  ASSERT_EQ(per_activity, 3);
  ASSERT_GE(periodic, 3);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

/* A device without counters of its own, given the derived ones. */
static uint32_t derived_device(const char *name) {
  gp_device_info di;
  memset(&di, 0, sizeof(di));
  di.name = name;
  uint32_t dev;
  ASSERT_OK(gp__device_register(&di, NULL, 0, &dev));
  ASSERT_OK(gp__derived_register(dev));
  return dev;
}

/* Starts sampling dev's Utilization every period_ns; returns when. */
static uint64_t sample_utilization(uint32_t dev, uint64_t period_ns) {
  static uint32_t ids[1];
  ids[0] = tu_counter_id(dev, "Utilization");
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = period_ns;
  c.counter_ids = ids;
  c.num_counter_ids = 1;
  uint64_t t0 = gp_get_timestamp();
  ASSERT_OK(gp_counters_start(dev, &c));
  return t0;
}

/* A derived counter's last windows are written when sampling stops, and
 * writing may wait for the collector to give a buffer back, while the
 * collector's observer takes the derived counters' lock: the windows must
 * not be written with it held. Here every buffer is small and only two
 * may be out at once, so the 100 us windows of about 50 ms need many more
 * buffers than there are (with the lock held, the program hung here, as
 * `gpuperf record` of the Vulkan sample once did). All are delivered. */
TEST(sampling_derived_stop_outlasts_the_buffer_pool) {
  uint32_t dev = derived_device("derived-only");
  tu_capture(1024, 0);
  size_t limit = 2, sz = sizeof(limit);
  ASSERT_OK(gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz,
                                      &limit));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  uint64_t t0 = sample_utilization(dev, GP__DERIVED_MIN_PERIOD_NS);
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  uint64_t windows = (gp_get_timestamp() - t0) / GP__DERIVED_MIN_PERIOD_NS;
  ASSERT_OK(gp_counters_stop(dev));
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  /* (about 18 records a buffer) */
  ASSERT_GE(tu_count(GP_ACTIVITY_KIND_COUNTER), windows - 1);
  ASSERT_GE(tu_buffers_completed(), 20);
}

/* Work whose end lies past the present (a driver's timestamp of 0 maps to
 * 2^64 - 11 ns) is left out: the last windows end at the present, not at
 * that end (counting to it, a recording of the Vulkan sample wrote 76 GB
 * of windows before the disk was full). */
TEST(sampling_derived_ignores_ends_past_the_present) {
  uint32_t dev = derived_device("derived-future");
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  uint64_t t0 = sample_utilization(dev, 1000000);
  gp_activity_kernel *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_KERNEL, sizeof(*r), 0, 0);
  ASSERT_NOT_NULL(r);
  memset((char *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
  r->start = gp_get_timestamp();
  r->end = UINT64_MAX - 10;
  r->device_id = dev;
  gp__activity_commit(r);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  ASSERT_OK(gp_counters_stop(dev));
  uint64_t ms = (gp_get_timestamp() - t0) / 1000000;
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_GE(tu_count(GP_ACTIVITY_KIND_COUNTER), 10);
  ASSERT(tu_count(GP_ACTIVITY_KIND_COUNTER) <= ms + 2); /* up to now */
}
