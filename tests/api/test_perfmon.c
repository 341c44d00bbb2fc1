/*
 * test_perfmon.c - counter catalogs, perfmons and the global perfmon on
 * the simulated GPUs: validation before allocation, the scheduler's
 * switching (counted), per-client isolation checked against the cost
 * model, fences, global-perfmon conflicts and lifetime under ASan.
 */
#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

/* Device 0: compute; device 1: V3D. */
static void init_sim(void) {
  gp_sim_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.num_devices = 2;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  cfg.models[1] = GP_SIM_MODEL_V3D;
  ASSERT_OK(gp_sim_init(&cfg));
}

static gp_sim_dim3 dim(uint32_t x) {
  gp_sim_dim3 d = {x, 1, 1};
  return d;
}

/* Counter id of a name on a device. */
static uint32_t cid(uint32_t dev, const char *name) {
  const char *names[1] = {name};
  uint32_t id = 0;
  size_t n = 0;
  ASSERT_OK(gp_counter_select(dev, names, 1, &id, 1, &n));
  ASSERT_EQ(n, 1);
  return id;
}

TEST(counters_catalogs_published) {
  init_sim();
  gp_counter_catalog_info ci;
  ASSERT_OK(gp_counter_catalog(1, &ci));
  ASSERT_EQ(ci.num_counters, 87);
  ASSERT_EQ(ci.max_active, 32);
  ASSERT_EQ(ci.num_blocks, 1);
  ASSERT_EQ(ci.supports_instrumented, 1);
  gp_counter_block_info bi;
  ASSERT_OK(gp_counter_block_get(1, 0, &bi));
  ASSERT_EQ(bi.capacity, 32);
  ASSERT_EQ(bi.num_counters, 87);
  ASSERT_ERR(gp_counter_block_get(1, 1, &bi), GP_ENOENT);

  /* The kernel's table: index 14, its category, name and description. */
  gp_counter_info c;
  ASSERT_OK(gp_counter_get(1, 14, &c));
  ASSERT_STR_EQ(c.name, "QPU-total-active-clk-cycles-vertex-coord-shading");
  ASSERT_STR_EQ(c.category, "QPU");
  ASSERT_STR_EQ(c.description,
                "[QPU] Total active clock cycles for all QPUs doing "
                "vertex/coordinate/user shading (counts only when QPU is not "
                "stalled)");
  ASSERT_EQ(c.device_id, 1);
  ASSERT_EQ(c.id, 15);
  ASSERT_EQ(c.type, GP_COUNTER_TYPE_INT64);
  ASSERT_OK(gp_counter_get(1, 12, &c));
  ASSERT_STR_EQ(c.name, "PTB-primitives-discarded-reversed");
  ASSERT_OK(gp_counter_get(1, 86, &c));
  ASSERT_STR_EQ(c.name, "compute-active-cycles");
  ASSERT_ERR(gp_counter_get(1, 87, &c), GP_ENOENT);
  ASSERT_OK(gp_counter_lookup(1, 42, &c));
  ASSERT_STR_EQ(c.name, "AXI-read-bytes-seen-watch-0");
  ASSERT_EQ(c.num_numerator_units, 1);
  ASSERT_STR_EQ(gp_unit_name(c.numerator_units[0]), "BYTE");
  ASSERT_EQ(c.groups[0], GP_COUNTER_GROUP_MEMORY);
  gp_counter_group_info gi;
  ASSERT_OK(gp_counter_group_lookup(1, c.groups[1], &gi));
  ASSERT_STR_EQ(gi.name, "AXI");

  /* The compute catalog. */
  ASSERT_OK(gp_counter_catalog(0, &ci));
  ASSERT_GE(ci.num_counters, 6);
  ASSERT_OK(gp_counter_lookup(0, cid(0, "Utilization"), &c));
  ASSERT_EQ(c.type, GP_COUNTER_TYPE_PERCENT);
  ASSERT_EQ(c.numerator_units[0], GP_UNIT_PERCENT);
  ASSERT_EQ(c.groups[0], GP_COUNTER_GROUP_SYSTEM);
  ASSERT_OK(gp_counter_lookup(0, cid(0, "dram__bytes_write.sum"), &c));
  ASSERT_EQ(c.numerator_units[0], GP_UNIT_BYTE);
  cid(0, "sm__cycles_elapsed.avg");
  cid(0, "sm__cycles_active.avg");
  cid(0, "dram__bytes_read.sum");
  cid(0, "lts__t_sector_hit_rate.pct");
  cid(0, "sm__warps_active.avg.pct_of_peak_sustained_active");

  /* Errors. */
  ASSERT_ERR(gp_counter_lookup(0, 9999, &c), GP_ENOCOUNTER);
  ASSERT_ERR(gp_counter_catalog(42, &ci), GP_ENODEV);
  ASSERT_ERR(gp_counter_get(0, 0, NULL), GP_EINVAL);
  ASSERT_STR_EQ(gp_unit_name(999), "UNKNOWN");
}

TEST(counters_select_names_and_globs) {
  init_sim();
  uint32_t ids[64];
  size_t n = 99;
  const char *exact[] = {"cycle-count", "L2T-total-cache-hit", "cycle-count"};
  ASSERT_OK(gp_counter_select(1, exact, 3, ids, 64, &n));
  ASSERT_EQ(n, 2); /* catalog order, no duplicates */
  ASSERT_EQ(ids[0], 31);
  ASSERT_EQ(ids[1], 33);
  const char *globs[] = {"AXI-*-watch-0"};
  ASSERT_OK(gp_counter_select(1, globs, 1, ids, 64, &n));
  ASSERT_EQ(n, 6);
  for (size_t i = 0; i < n; i++)
    ASSERT_EQ(ids[i], 37 + i);
  /* Unknown names and empty globs store nothing. */
  const char *bad[] = {"cycle-count", "no-such-counter"};
  ids[0] = 7777;
  n = 99;
  ASSERT_ERR(gp_counter_select(1, bad, 2, ids, 64, &n), GP_ENOCOUNTER);
  ASSERT_EQ(ids[0], 7777);
  ASSERT_EQ(n, 99);
  const char *none[] = {"zz*"};
  ASSERT_ERR(gp_counter_select(1, none, 1, ids, 64, &n), GP_ENOCOUNTER);
  const char *all[] = {"*"};
  ASSERT_ERR(gp_counter_select(1, all, 1, ids, 64, &n), GP_ENOSPC);
  ASSERT_EQ(ids[0], 7777);
}

TEST(perfmon_create_rejects_bad_sets) {
  init_sim();
  gp_perfmon *pm = NULL, *ok = NULL;
  uint32_t ids[40];
  for (uint32_t i = 0; i < 40; i++)
    ids[i] = i + 1;
  ASSERT_OK(gp_perfmon_create(1, ids, 2, &ok));
  uint32_t first = gp_perfmon_id(ok);
  gp_perfmon *sentinel = (gp_perfmon *)&ids;
  pm = sentinel;
  ASSERT_ERR(gp_perfmon_create(1, ids, 33, &pm), GP_ECAPACITY);
  uint32_t dup[] = {3, 4, 3};
  ASSERT_ERR(gp_perfmon_create(1, dup, 3, &pm), GP_EINVAL);
  uint32_t unknown[] = {3, 88};
  ASSERT_ERR(gp_perfmon_create(1, unknown, 2, &pm), GP_ENOCOUNTER);
  uint32_t zero[] = {0};
  ASSERT_ERR(gp_perfmon_create(1, zero, 1, &pm), GP_ENOCOUNTER);
  ASSERT_ERR(gp_perfmon_create(1, ids, 0, &pm), GP_EINVAL);
  ASSERT_ERR(gp_perfmon_create(1, NULL, 1, &pm), GP_EINVAL);
  ASSERT_ERR(gp_perfmon_create(42, ids, 1, &pm), GP_ENODEV);
  /* A block's capacity: the compute "dram" block counts 2 of its 3. */
  uint32_t dram[] = {cid(0, "dram__bytes_read.sum"),
                     cid(0, "dram__bytes_write.sum"),
                     cid(0, "dram__throughput.avg.pct_of_peak_sustained_"
                            "elapsed")};
  ASSERT_ERR(gp_perfmon_create(0, dram, 3, &pm), GP_ECAPACITY);
  ASSERT(pm == sentinel); /* untouched */
  /* Nothing was created: the next perfmon gets the next id. */
  gp_perfmon *next = NULL;
  ASSERT_OK(gp_perfmon_create(0, dram, 2, &next));
  ASSERT_EQ(gp_perfmon_id(next), first + 1);
  ASSERT_OK(gp_perfmon_create(1, ids, 32, &pm)); /* exactly the capacity */
  gp_perfmon_info info;
  ASSERT_OK(gp_perfmon_get_info(pm, &info));
  ASSERT_EQ(info.num_counters, 32);
  ASSERT_EQ(info.device_id, 1);
  ASSERT_EQ(info.counter_ids[31], 32);
  gp_perfmon_destroy(pm);
  gp_perfmon_destroy(next);
  gp_perfmon_destroy(ok);
  ASSERT_OK(gp_perfmon_destroy(NULL));
  gp_perfmon_put(NULL);
}

/* What the cost model says one launch does. */
typedef struct expect {
  double dram_read, dur_ns, active, issue;
} expect;

static void add_expect(expect *e, uint32_t model, const gp_sim_kernel_desc *kd,
                       uint32_t grid, uint32_t block) {
  sim_work_stats st;
  uint64_t ns = gp__sim_kernel_cost(gp__sim_model_get(model), kd, dim(grid),
                                    dim(block), 0, &st);
  e->dram_read += st.dram_read;
  e->dur_ns += (double)ns;
  e->active += st.active_cycles;
  e->issue += st.issue_cycles;
}

/* Two clients (contexts) with different perfmons interleave jobs on one
 * device; each perfmon holds exactly its own jobs' counts. */
TEST(perfmon_two_clients_get_own_counts) {
  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  for (uint32_t dev = 0; dev < 2; dev++) {
    uint32_t model = dev == 0 ? GP_SIM_MODEL_COMPUTE : GP_SIM_MODEL_V3D;
    uint32_t ids[3];
    if (dev == 0) {
      ids[0] = cid(0, "dram__bytes_read.sum");
      ids[1] = cid(0, "gpu__time_duration.sum");
      ids[2] = cid(0, "sm__cycles_active.avg");
    } else {
      ids[0] = cid(1, "AXI-read-bytes-seen-watch-0");
      ids[1] = cid(1, "cycle-count");
      ids[2] = cid(1, "QPU-total-active-clk-cycles-vertex-coord-shading");
    }
    gp_sim_context *ca, *cb;
    gp_sim_stream *sa, *sb;
    gp_perfmon *pa, *pb;
    ASSERT_OK(gp_sim_context_create(dev, &ca));
    ASSERT_OK(gp_sim_context_create(dev, &cb));
    ASSERT_OK(gp_sim_stream_create(ca, &sa));
    ASSERT_OK(gp_sim_stream_create(cb, &sb));
    ASSERT_OK(gp_perfmon_create(dev, ids, 3, &pa));
    ASSERT_OK(gp_perfmon_create(dev, ids, 3, &pb));
    ASSERT_OK(gp_sim_stream_set_perfmon(sa, pa));
    ASSERT_OK(gp_sim_stream_set_perfmon(sb, pb));
    gp_sim_kernel_desc da = tu_kernel_desc("client_a", 512, 48);
    gp_sim_kernel_desc db = tu_kernel_desc("client_b", 64, 256);
    da.read_fraction = 0.75;
    db.cache_locality = 0.1;
    gp_sim_kernel *ka, *kb;
    ASSERT_OK(gp_sim_kernel_create(&da, &ka));
    ASSERT_OK(gp_sim_kernel_create(&db, &kb));
    expect ea = {0}, eb = {0};
    uint32_t blk = dev == 0 ? 256 : 64;
    for (uint32_t i = 0; i < 6; i++) {
      ASSERT_OK(gp_sim_launch(sa, ka, dim(64 + 32 * i), dim(blk), 0));
      add_expect(&ea, model, &da, 64 + 32 * i, blk);
      ASSERT_OK(gp_sim_launch(sb, kb, dim(200 - 16 * i), dim(blk), 0));
      add_expect(&eb, model, &db, 200 - 16 * i, blk);
    }
    ASSERT_OK(gp_sim_context_synchronize(ca));
    ASSERT_OK(gp_sim_context_synchronize(cb));
    gp_counter_value va[3], vb[3];
    ASSERT_OK(gp_perfmon_get_values(pa, va, 0));
    ASSERT_OK(gp_perfmon_get_values(pb, vb, 0));
    double clk = dev == 0 ? 1.41 : 0.5;
    ASSERT_NEAR(va[0].i64, ea.dram_read, 1.0);
    ASSERT_NEAR(vb[0].i64, eb.dram_read, 1.0);
    if (dev == 0) {
      ASSERT_NEAR(va[1].i64, ea.dur_ns, 1.0);
      ASSERT_NEAR(vb[1].i64, eb.dur_ns, 1.0);
      ASSERT_NEAR(va[2].f64, ea.active, 1e-6 * ea.active);
      ASSERT_NEAR(vb[2].f64, eb.active, 1e-6 * eb.active);
    } else {
      /* Strict alternation: each segment is one job, so cycle-count is
       * the jobs' own time. */
      ASSERT_NEAR(va[1].i64, ea.dur_ns * clk, 1.0);
      ASSERT_NEAR(vb[1].i64, eb.dur_ns * clk, 1.0);
      ASSERT_NEAR(va[2].i64, ea.issue * 8, 1.0);
      ASSERT_NEAR(vb[2].i64, eb.issue * 8, 1.0);
    }
    ASSERT_NE(va[0].i64, vb[0].i64);
    /* The jobs of the two perfmons never overlapped on the device. */
    ASSERT_OK(gp_activity_flush_all(0));
    const gp_activity *r;
    for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++) {
      const gp_activity_kernel *x = (const gp_activity_kernel *)r;
      if (x->device_id != dev)
        continue;
      ASSERT(x->perfmon_id == gp_perfmon_id(pa) ||
             x->perfmon_id == gp_perfmon_id(pb));
      const gp_activity *r2;
      for (size_t j = 0; (r2 = tu_find(GP_ACTIVITY_KIND_KERNEL, j)); j++) {
        const gp_activity_kernel *y = (const gp_activity_kernel *)r2;
        /* Back-to-back in device time; mapping to the trace clock
         * through successive snapshots may round the seam by 1 ns. */
        if (y->device_id == dev && y->perfmon_id != x->perfmon_id)
          ASSERT(y->end <= x->start + 2 || x->end <= y->start + 2);
      }
    }
    gp_perfmon_destroy(pa);
    gp_perfmon_destroy(pb);
    gp_sim_kernel_destroy(ka);
    gp_sim_kernel_destroy(kb);
    gp_sim_context_destroy(ca);
    gp_sim_context_destroy(cb);
    tu_clear();
  }
}

TEST(perfmon_same_perfmon_no_switch) {
  init_sim();
  gp_sim_context *ctx;
  gp_sim_stream *s1, *s2;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_sim_stream_create(ctx, &s1));
  ASSERT_OK(gp_sim_stream_create(ctx, &s2));
  uint32_t ids[] = {cid(0, "Utilization")};
  gp_perfmon *a, *b;
  ASSERT_OK(gp_perfmon_create(0, ids, 1, &a));
  ASSERT_OK(gp_perfmon_create(0, ids, 1, &b));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 100, 16);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  uint64_t n0 = 0, n = 0;
  ASSERT_OK(gp_perfmon_switch_count(0, &n0));
  /* Jobs without perfmons never switch. */
  for (int i = 0; i < 5; i++)
    ASSERT_OK(gp_sim_launch(s1, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_switch_count(0, &n));
  ASSERT_EQ(n, n0);
  /* Ten jobs with one perfmon, on two streams: one switch (to it). */
  ASSERT_OK(gp_sim_stream_set_perfmon(s1, a));
  ASSERT_OK(gp_sim_stream_set_perfmon(s2, a));
  for (int i = 0; i < 10; i++)
    ASSERT_OK(gp_sim_launch(i % 2 ? s1 : s2, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_switch_count(0, &n));
  ASSERT_EQ(n, n0 + 1);
  /* Reading the values captures them without a switch. */
  gp_counter_value v;
  ASSERT_OK(gp_perfmon_get_values(a, &v, 1));
  ASSERT_OK(gp_sim_launch(s1, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_switch_count(0, &n));
  ASSERT_EQ(n, n0 + 1);
  /* A, B, A, B: a switch each; then none again: one more. */
  ASSERT_OK(gp_sim_stream_set_perfmon(s2, b));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(gp_sim_launch(i % 2 ? s1 : s2, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_switch_count(0, &n));
  ASSERT_EQ(n, n0 + 5);
  ASSERT_OK(gp_sim_stream_set_perfmon(s1, NULL));
  ASSERT_OK(gp_sim_launch(s1, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_switch_count(0, &n));
  ASSERT_EQ(n, n0 + 6);
  /* The other device did not switch. */
  ASSERT_OK(gp_perfmon_switch_count(1, &n));
  ASSERT_EQ(n, 0);
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_perfmon_get_values(a, &v, 0));
  ASSERT(v.f64 > 0.0 && v.f64 <= 100.0);
  gp_perfmon_destroy(a);
  gp_perfmon_destroy(b);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

TEST(perfmon_values_through_fence) {
  init_sim();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  uint32_t ids[] = {cid(0, "dram__bytes_read.sum"),
                    cid(0, "gpu__time_duration.sum")};
  gp_perfmon *pm;
  ASSERT_OK(gp_perfmon_create(0, ids, 2, &pm));
  ASSERT_OK(gp_sim_stream_set_perfmon(s, pm));
  gp_sim_kernel_desc kd = tu_kernel_desc("long", 20000, 4096);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(gp_sim_launch(s, k, dim(4096), dim(256), 0));
  expect e = {0};
  add_expect(&e, GP_SIM_MODEL_COMPUTE, &kd, 4096, 256);
  gp_counter_value v[2] = {{.i64 = -7}, {.i64 = -7}};
  ASSERT_ERR(gp_perfmon_get_values(pm, v, 0), GP_EAGAIN);
  ASSERT_EQ(v[0].i64, -7); /* untouched */
  ASSERT_ERR(gp_perfmon_get_values(pm, v, 2), GP_EINVAL);
  ASSERT_OK(gp_perfmon_get_values(pm, v, 1)); /* waits */
  ASSERT_NEAR(v[0].i64, e.dram_read, 1.0);
  ASSERT_NEAR(v[1].i64, e.dur_ns, 1.0);
  /* Values accumulate; a second job is pending again until synchronised. */
  ASSERT_OK(gp_sim_launch(s, k, dim(4096), dim(256), 0));
  add_expect(&e, GP_SIM_MODEL_COMPUTE, &kd, 4096, 256);
  ASSERT_ERR(gp_perfmon_get_values(pm, v, 0), GP_EAGAIN);
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_perfmon_get_values(pm, v, 0));
  ASSERT_NEAR(v[0].i64, e.dram_read, 1.0);
  ASSERT_NEAR(v[1].i64, e.dur_ns, 1.0);
  gp_perfmon_destroy(pm);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(ctx);
}

TEST(perfmon_global_conflicts) {
  init_sim();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  gp_sim_context *c1, *c2;
  ASSERT_OK(gp_sim_context_create(0, &c1));
  ASSERT_OK(gp_sim_context_create(0, &c2));
  gp_sim_stream *own = gp_sim_default_stream(c1);
  gp_sim_stream *plain = gp_sim_default_stream(c2);
  uint32_t ids[] = {cid(0, "dram__bytes_read.sum")};
  gp_perfmon *g, *g2, *mine;
  ASSERT_OK(gp_perfmon_create(0, ids, 1, &g));
  ASSERT_OK(gp_perfmon_create(0, ids, 1, &g2));
  ASSERT_OK(gp_perfmon_create(0, ids, 1, &mine));
  ASSERT_OK(gp_sim_stream_set_perfmon(own, mine));
  ASSERT_ERR(gp_perfmon_clear_global(g), GP_ESTATE);
  ASSERT_OK(gp_perfmon_set_global(g));
  ASSERT_ERR(gp_perfmon_set_global(g2), GP_EBUSY);
  ASSERT_ERR(gp_perfmon_clear_global(g2), GP_ESTATE);
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 100, 64);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  /* A job with its own perfmon is refused; one without is counted by the
   * global perfmon, whoever submits it. */
  ASSERT_ERR(gp_sim_launch(own, k, dim(64), dim(128), 0), GP_EAGAIN);
  ASSERT_OK(gp_sim_launch(plain, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_sim_launch(plain, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_sim_context_synchronize(c2));
  expect e = {0};
  add_expect(&e, GP_SIM_MODEL_COMPUTE, &kd, 64, 128);
  add_expect(&e, GP_SIM_MODEL_COMPUTE, &kd, 64, 128);
  gp_counter_value v;
  ASSERT_OK(gp_perfmon_get_values(g, &v, 0));
  ASSERT_NEAR(v.i64, e.dram_read, 1.0);
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 2); /* the refused one ran not */
  const gp_activity_kernel *kr =
      (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_EQ(kr->perfmon_id, gp_perfmon_id(g));
  ASSERT_OK(gp_perfmon_get_values(mine, &v, 0));
  ASSERT_EQ(v.i64, 0);
  /* Cleared, jobs may carry their own perfmon again. */
  ASSERT_OK(gp_perfmon_clear_global(g));
  ASSERT_OK(gp_sim_launch(own, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_perfmon_set_global(g2));
  /* Destroying the global perfmon clears it. */
  gp_perfmon_destroy(g2);
  ASSERT_OK(gp_sim_launch(own, k, dim(64), dim(128), 0));
  ASSERT_OK(gp_sim_context_synchronize(c1));
  ASSERT_OK(gp_perfmon_get_values(mine, &v, 0));
  ASSERT_GT(v.i64, 0);
  /* The host CPU has no scheduler, hence no global perfmon. */
  uint32_t host;
  ASSERT_OK(gp_host_device_register(&host));
  uint32_t tc[] = {1};
  gp_perfmon *hp = NULL;
  if (gp_perfmon_create(host, tc, 1, &hp) == 0) {
    ASSERT_ERR(gp_perfmon_set_global(hp), GP_ENOTSUP);
    gp_perfmon_destroy(hp);
  }
  gp_perfmon_destroy(g);
  gp_perfmon_destroy(mine);
  gp_sim_kernel_destroy(k);
  gp_sim_context_destroy(c1);
  gp_sim_context_destroy(c2);
}

TEST(perfmon_destroy_with_jobs_in_flight) {
  init_sim();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(1, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  uint32_t ids[] = {33, 42};
  gp_perfmon *pm, *ref, *found = NULL;
  ASSERT_OK(gp_perfmon_create(1, ids, 2, &pm));
  uint32_t id = gp_perfmon_id(pm);
  ASSERT_OK(gp_perfmon_lookup(id, &found));
  ASSERT(found == pm);
  gp_perfmon_put(found);
  ref = gp_perfmon_get(pm);
  ASSERT_OK(gp_sim_stream_set_perfmon(s, pm));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 4000, 512);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  for (int i = 0; i < 16; i++)
    ASSERT_OK(gp_sim_launch(s, k, dim(64), dim(64), 0));
  ASSERT_OK(gp_perfmon_destroy(pm)); /* 16 jobs still in flight */
  ASSERT_ERR(gp_perfmon_lookup(id, &found), GP_ENOENT);
  ASSERT_ERR(gp_sim_launch(s, k, dim(64), dim(64), 0), GP_ENOENT);
  ASSERT_ERR(gp_sim_stream_set_perfmon(s, ref), GP_ENOENT);
  gp_perfmon_info info;
  ASSERT_OK(gp_perfmon_get_info(ref, &info));
  ASSERT_EQ(info.destroyed, 1);
  /* The jobs finish counting into it; our reference still reads it. */
  gp_counter_value v[2];
  ASSERT_OK(gp_perfmon_get_values(ref, v, 1));
  ASSERT_GT(v[0].i64, 0);
  gp_perfmon_put(ref);
  /* The stream still holds one; unbinding lets it go. */
  ASSERT_OK(gp_sim_stream_set_perfmon(s, NULL));
  ASSERT_OK(gp_sim_launch(s, k, dim(64), dim(64), 0));
  /* A perfmon destroyed with its work never waited for, and the
   * simulator shut down under it: nothing leaks (ASan checks). */
  gp_perfmon *p2;
  ASSERT_OK(gp_perfmon_create(1, ids, 2, &p2));
  ASSERT_OK(gp_sim_stream_set_perfmon(s, p2));
  ASSERT_OK(gp_sim_launch(s, k, dim(64), dim(64), 0));
  ASSERT_OK(gp_perfmon_destroy(p2));
  gp_sim_kernel_destroy(k);
  ASSERT_OK(gp_sim_shutdown());
}
