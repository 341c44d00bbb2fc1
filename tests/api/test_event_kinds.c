/*
 * test_event_kinds.c - the EVENT, METRIC, EVENT_INSTANCE and
 * METRIC_INSTANCE records of instrumented simulated kernels, read back
 * with gp_activity_get_next_record (tu_find walks the buffers with it).
 *
 * Expected values come from elsewhere than the records under test: the
 * kernel's own KERNEL record (its time), the device's description
 * (clock, bandwidth, SMs), the counter catalog (names, blocks), the
 * COUNTER records of the same kernels (which stay as they were), and the
 * instance model as docs/activity.md states it (blocks dealt to the SMs
 * in turn; an event's instances add up to it).
 */
#include <math.h>

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

static void enable_kinds(void) {
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_EVENT));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_EVENT_INSTANCE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_METRIC));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_METRIC_INSTANCE));
}

/* Instruments every kernel of device dev with the named counters. */
static void instrument(uint32_t dev, const char *const *names, size_t n) {
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_names = names;
  c.num_counter_names = n;
  c.instrumented = 1;
  ASSERT_OK(gp_counters_start(dev, &c));
}

/* Runs one launch of k (blocks of 128 threads) on a new context of dev,
 * to its end. */
static void run(uint32_t dev, gp_sim_kernel *k, uint32_t blocks) {
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(dev, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(blocks), tu_dim(128), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

static const gp_activity_kernel *kernel_rec(size_t i) {
  return (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
}

static const gp_activity_counter *counter_of(uint64_t corr, uint32_t id) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *c = (const gp_activity_counter *)r;
    if (c->correlation_id == corr && c->counter_id == id)
      return c;
  }
  return NULL;
}

static const gp_activity_event *event_of(uint64_t corr, uint32_t id) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_EVENT, i)); i++) {
    const gp_activity_event *e = (const gp_activity_event *)r;
    if (e->correlation_id == corr && e->event_id == id)
      return e;
  }
  return NULL;
}

static const gp_activity_metric *metric_of(uint64_t corr, uint32_t id) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_METRIC, i)); i++) {
    const gp_activity_metric *m = (const gp_activity_metric *)r;
    if (m->correlation_id == corr && m->metric_id == id)
      return m;
  }
  return NULL;
}

/* The instances of event id over corr into out (indexed by instance);
 * returns how many there are. */
static size_t event_instances(uint64_t corr, uint32_t id,
                              const gp_activity_event_instance **out,
                              size_t cap) {
  size_t n = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_EVENT_INSTANCE, i)); i++) {
    const gp_activity_event_instance *e = (const gp_activity_event_instance *)r;
    if (e->correlation_id != corr || e->event_id != id)
      continue;
    ASSERT_LT(e->instance, cap);
    ASSERT_EQ(e->hdr.size, sizeof(*e));
    out[e->instance] = e;
    n++;
  }
  return n;
}

static size_t metric_instances(uint64_t corr, uint32_t id,
                               const gp_activity_metric_instance **out,
                               size_t cap) {
  size_t n = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_METRIC_INSTANCE, i)); i++) {
    const gp_activity_metric_instance *m =
        (const gp_activity_metric_instance *)r;
    if (m->correlation_id != corr || m->metric_id != id)
      continue;
    ASSERT_LT(m->instance, cap);
    ASSERT_EQ(m->hdr.size, sizeof(*m));
    out[m->instance] = m;
    n++;
  }
  return n;
}

static void assert_close(double a, double b, double rel) {
  double d = fabs(a - b), m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  if (!(d <= rel * m)) {
    fprintf(stderr, "%.17g vs %.17g (relative %g allowed)\n", a, b, rel);
    ASSERT(d <= rel * m);
  }
}

#define MAX_INST 256

TEST(sim_events_add_up_from_their_instances) {
  init_sim();
  tu_capture(1 << 22, 0);
  enable_kinds();
  const char *names[] = {"smsp__inst_executed.sum", "gpu__time_duration.sum",
                         "dram__bytes_read.sum", "lts__t_sectors.sum"};
  instrument(0, names, 4);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4workPf", 4000, 64);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  const uint32_t blocks = 250; /* 2 waves of 108 SMs and 34 more */
  run(0, k, blocks);
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));

  gp_device_info di;
  ASSERT_OK(gp_device_get_info(0, &di));
  ASSERT_EQ(di.compute_units, 108);
  const gp_activity_kernel *kr = kernel_rec(0);
  ASSERT_NOT_NULL(kr);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_EVENT), 4);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_METRIC), 0); /* all four are counts */
  for (size_t i = 0; i < 4; i++) {
    gp_counter_info ci;
    uint32_t id = tu_counter_id(0, names[i]);
    ASSERT_OK(gp_counter_lookup(0, id, &ci));
    gp_counter_block_info bi;
    ASSERT_OK(gp_counter_block_get(0, ci.block_id, &bi));
    const gp_activity_event *e = event_of(kr->correlation_id, id);
    ASSERT_NOT_NULL(e);
    ASSERT_EQ(e->hdr.size, sizeof(*e));
    ASSERT_EQ(e->device_id, 0);
    ASSERT_STR_EQ(gp_activity_string(e->name_id), names[i]);
    ASSERT_EQ(e->domain_id, ci.block_id);
    ASSERT_STR_EQ(gp_activity_string(e->domain_name_id), bi.name);
    ASSERT_EQ(e->start, kr->start);
    ASSERT_EQ(e->end, kr->end);
    ASSERT_EQ(e->flags, 0);
    /* The same count as the kernel's COUNTER record. */
    const gp_activity_counter *c = counter_of(kr->correlation_id, id);
    ASSERT_NOT_NULL(c);
    ASSERT_EQ(c->value_type, GP_VALUE_INT64);
    ASSERT_EQ(e->value, (uint64_t)c->value.i64);
    ASSERT_GT(e->value, 0);
    /* The sm block has one instance per SM, the others one. */
    bool sm = strcmp(bi.name, "sm") == 0;
    ASSERT_EQ(e->num_instances, sm ? di.compute_units : 1u);
    const gp_activity_event_instance *in[MAX_INST] = {0};
    ASSERT_EQ(event_instances(kr->correlation_id, id, in, MAX_INST),
              e->num_instances);
    uint64_t sum = 0;
    for (uint32_t j = 0; j < e->num_instances; j++) {
      ASSERT_NOT_NULL(in[j]);
      ASSERT_EQ(in[j]->device_id, 0);
      ASSERT_EQ(in[j]->domain_id, e->domain_id);
      ASSERT_EQ(in[j]->flags, 0);
      sum += in[j]->value;
      /* SM j ran blocks/108 blocks, one more for the first blocks%108. */
      double share =
          sm ? (double)(blocks / 108 + (j < blocks % 108)) / blocks : 1.0;
      ASSERT_LE(fabs((double)in[j]->value - (double)e->value * share), 1.0);
    }
    ASSERT_EQ(sum, e->value);
  }
  /* The kernel's time, counted in ns. */
  const gp_activity_event *t =
      event_of(kr->correlation_id, tu_counter_id(0, "gpu__time_duration.sum"));
  ASSERT_LE(llabs((long long)t->value - (long long)(kr->end - kr->start)), 1);
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

TEST(sim_metrics_follow_from_their_events) {
  init_sim();
  tu_capture(1 << 22, 0);
  enable_kinds();
  const char *names[] = {"gpu__time_duration.sum", "dram__bytes_read.sum",
                         "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                         "sm__cycles_elapsed.avg",
                         "sm__warps_active.avg.pct_of_peak_sustained_active"};
  instrument(0, names, 5);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4readPKf", 10, 256);
  kd.read_fraction = 1.0; /* reads only: the traffic is the read event */
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  const uint32_t blocks = 50; /* SMs 0 .. 49 get one each, 50 .. 107 none */
  run(0, k, blocks);
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));

  gp_device_info di;
  ASSERT_OK(gp_device_get_info(0, &di));
  const gp_activity_kernel *kr = kernel_rec(0);
  ASSERT_NOT_NULL(kr);
  uint64_t corr = kr->correlation_id;
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_EVENT), 2);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_METRIC), 3);
  const gp_activity_event *time = event_of(corr, tu_counter_id(0, names[0]));
  const gp_activity_event *read = event_of(corr, tu_counter_id(0, names[1]));
  ASSERT_NOT_NULL(time);
  ASSERT_NOT_NULL(read);

  /* Throughput: the bytes read over the time at the device's bandwidth. */
  const gp_activity_metric *pct = metric_of(corr, tu_counter_id(0, names[2]));
  ASSERT_NOT_NULL(pct);
  ASSERT_EQ(pct->hdr.size, sizeof(*pct));
  ASSERT_EQ(pct->value_kind, GP_METRIC_VALUE_PERCENT);
  ASSERT_EQ(pct->flags, 0);
  ASSERT_STR_EQ(gp_activity_string(pct->name_id), names[2]);
  ASSERT_EQ(pct->start, kr->start);
  ASSERT_EQ(pct->end, kr->end);
  ASSERT_EQ(pct->num_instances, 1);
  double want =
      (double)read->value /
      ((double)di.memory_bandwidth_bytes_per_s * 1e-9 * (double)time->value) *
      100.0;
  ASSERT_GT(want, 1.0);
  assert_close(pct->value.f64, want, 1e-6);
  const gp_activity_metric_instance *pin[MAX_INST] = {0};
  ASSERT_EQ(metric_instances(corr, pct->metric_id, pin, MAX_INST), 1);
  ASSERT_EQ(pin[0]->value.f64, pct->value.f64);

  /* Elapsed cycles: the time at the core clock, the same on every SM. */
  const gp_activity_metric *el = metric_of(corr, tu_counter_id(0, names[3]));
  ASSERT_NOT_NULL(el);
  ASSERT_EQ(el->value_kind, GP_METRIC_VALUE_DOUBLE);
  assert_close(el->value.f64, (double)time->value * di.core_clock_khz / 1e6,
               1e-9);
  ASSERT_EQ(el->num_instances, di.compute_units);
  const gp_activity_metric_instance *ein[MAX_INST] = {0};
  ASSERT_EQ(metric_instances(corr, el->metric_id, ein, MAX_INST),
            di.compute_units);
  for (uint32_t j = 0; j < di.compute_units; j++) {
    ASSERT_EQ(ein[j]->flags, 0);
    assert_close(ein[j]->value.f64, el->value.f64, 1e-12);
  }

  /* Occupancy: the SMs that ran a block have the kernel's; the others
   * ran nothing to have one of. */
  const gp_activity_metric *oc = metric_of(corr, tu_counter_id(0, names[4]));
  ASSERT_NOT_NULL(oc);
  ASSERT_EQ(oc->value_kind, GP_METRIC_VALUE_PERCENT);
  ASSERT_EQ(oc->flags, 0);
  ASSERT_GT(oc->value.f64, 0.0);
  const gp_activity_metric_instance *oin[MAX_INST] = {0};
  ASSERT_EQ(metric_instances(corr, oc->metric_id, oin, MAX_INST),
            di.compute_units);
  for (uint32_t j = 0; j < di.compute_units; j++) {
    if (j < blocks) {
      ASSERT_EQ(oin[j]->flags, 0);
      assert_close(oin[j]->value.f64, oc->value.f64, 1e-12);
    } else {
      ASSERT_EQ(oin[j]->flags, GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID);
      ASSERT_EQ(oin[j]->value.f64, 0.0);
    }
  }
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

TEST(sim_metric_without_requests_is_invalid) {
  init_sim();
  tu_capture(1 << 20, 0);
  enable_kinds();
  const char *names[] = {"lts__t_sector_hit_rate.pct"};
  instrument(0, names, 1);
  gp_sim_kernel *k[2];
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z7computev", 100, 0); /* no bytes */
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[0]));
  kd = tu_kernel_desc("_Z6memoryPf", 100, 64);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[1]));
  run(0, k[0], 8);
  run(0, k[1], 8);
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  uint32_t id = tu_counter_id(0, names[0]);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_kernel *kr = kernel_rec(i);
    ASSERT_NOT_NULL(kr);
    const gp_activity_metric *m = metric_of(kr->correlation_id, id);
    ASSERT_NOT_NULL(m);
    const gp_activity_metric_instance *in[MAX_INST] = {0};
    ASSERT_EQ(metric_instances(kr->correlation_id, id, in, MAX_INST), 1);
    const gp_activity_counter *c = counter_of(kr->correlation_id, id);
    ASSERT_NOT_NULL(c);
    if (i == 0) {
      /* No L2 request: no hit rate. COUNTER says 0 as it always did. */
      ASSERT_EQ(m->flags, GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID);
      ASSERT_EQ(in[0]->flags, GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID);
      ASSERT_EQ(m->value.f64, 0.0);
      ASSERT_EQ(c->value.f64, 0.0);
    } else {
      ASSERT_EQ(m->flags, 0);
      ASSERT_EQ(in[0]->flags, 0);
      ASSERT_GT(m->value.f64, 0.0);
      ASSERT_EQ(m->value.f64, c->value.f64);
    }
  }
  ASSERT_OK(gp_sim_kernel_destroy(k[0]));
  ASSERT_OK(gp_sim_kernel_destroy(k[1]));
}

TEST(sim_v3d_event_overflows_its_32_bits) {
  init_sim();
  tu_capture(1 << 20, 0);
  enable_kinds();
  const char *names[] = {"cycle-count"};
  instrument(1, names, 1);
  gp_sim_kernel *k[2];
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z5shortv", 100, 4);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[0]));
  /* Seconds of work: past 2^32 cycles at 500 MHz (8.6 s); virtual time. */
  kd = tu_kernel_desc("_Z4longv", 2e8, 4);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k[1]));
  run(1, k[0], 16);
  run(1, k[1], 16);
  ASSERT_OK(gp_counters_stop(1));
  ASSERT_OK(gp_activity_flush_all(0));
  gp_device_info di;
  ASSERT_OK(gp_device_get_info(1, &di));
  ASSERT_EQ(di.compute_units, 8);
  uint32_t id = tu_counter_id(1, names[0]);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_kernel *kr = kernel_rec(i);
    ASSERT_NOT_NULL(kr);
    const gp_activity_event *e = event_of(kr->correlation_id, id);
    const gp_activity_counter *c = counter_of(kr->correlation_id, id);
    ASSERT_NOT_NULL(e);
    ASSERT_NOT_NULL(c);
    /* The full count: the kernel's time at the core clock. */
    double cycles = (double)(kr->end - kr->start) * di.core_clock_khz / 1e6;
    assert_close((double)c->value.i64, cycles, 1e-6);
    ASSERT_EQ(e->num_instances, 1); /* the V3D 4.2 has one core */
    ASSERT_STR_EQ(gp_activity_string(e->domain_name_id), "perfcnt");
    const gp_activity_event_instance *in[4] = {0};
    ASSERT_EQ(event_instances(kr->correlation_id, id, in, 4), 1);
    uint64_t full = (uint64_t)c->value.i64;
    if (i == 0) {
      ASSERT_LT(full, 1ull << 32);
      ASSERT_EQ(e->flags, 0);
      ASSERT_EQ(e->value, full);
    } else {
      ASSERT_GE(full, 1ull << 32);
      ASSERT_EQ(e->flags, GP_ACTIVITY_FLAG_EVENT_OVERFLOWED);
      ASSERT_EQ(e->value, full & 0xffffffffull);
    }
    ASSERT_EQ(in[0]->flags, e->flags);
    ASSERT_EQ(in[0]->value, e->value);
  }
  ASSERT_OK(gp_sim_kernel_destroy(k[0]));
  ASSERT_OK(gp_sim_kernel_destroy(k[1]));
}

/* Each kind alone: enabling one writes that one only, and nothing without
 * instrumented sampling. */
TEST(sim_event_kinds_follow_their_enables) {
  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_METRIC_INSTANCE));
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z3fooPf", 100, 16);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  run(0, k, 4); /* not instrumented */
  const char *names[] = {"sm__cycles_active.avg", "smsp__inst_executed.sum"};
  instrument(0, names, 2);
  run(0, k, 4);
  ASSERT_OK(gp_counters_stop(0));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 2);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_COUNTER), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_EVENT), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_EVENT_INSTANCE), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_METRIC), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_METRIC_INSTANCE), 108);
  const gp_activity_metric_instance *m =
      (const gp_activity_metric_instance *)tu_find(
          GP_ACTIVITY_KIND_METRIC_INSTANCE, 0);
  ASSERT_EQ(m->correlation_id, kernel_rec(1)->correlation_id);
  ASSERT_OK(gp_sim_kernel_destroy(k));
}
