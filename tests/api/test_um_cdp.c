/*
 * test_um_cdp.c - the simulator's managed memory and dynamic parallelism
 * as UNIFIED_MEMORY_COUNTER, CDP_KERNEL and PREEMPTION records
 * (gpuperf/activity_um.h, activity_cdp.h), against the model docs/sim.md
 * describes: page counts and bytes from the test's own arithmetic over
 * the allocation's size and GP_SIM_UM_PAGE, and the children's times
 * from launches of the same kernels made alone (the model says a CDP
 * launch is its parent's work with its children's between the halves).
 */
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const gp_activity_um_counter *um(size_t i) {
  return (const gp_activity_um_counter *)tu_find(
      GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, i);
}

/* The i-th UM record of counter kind k, or NULL. */
static const gp_activity_um_counter *um_of(uint32_t k, size_t i) {
  const gp_activity_um_counter *u;
  for (size_t j = 0; (u = um(j)); j++)
    if (u->counter_kind == k && i-- == 0)
      return u;
  return NULL;
}

static size_t um_count(uint32_t k) {
  size_t n = 0;
  while (um_of(k, n))
    n++;
  return n;
}

static const gp_activity_kernel *kernel(size_t i) {
  return (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
}

/* Every kind on again (the configuration is process-wide). */
static void um_all_on(void) {
  gp_um_counter_config c[GP_UM_COUNTER_KIND_COUNT - 1];
  for (uint32_t k = 1; k < GP_UM_COUNTER_KIND_COUNT; k++)
    c[k - 1] = (gp_um_counter_config){GP_UM_SCOPE_PROCESS_ALL_DEVICES, k, 0, 1};
  ASSERT_OK(gp_activity_configure_unified_memory_counter(
      c, GP_UM_COUNTER_KIND_COUNT - 1));
}

TEST(sim_managed_memory_faults_and_migrates) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4readPKf", 4, 8);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  /* 16 whole pages and 100 bytes of a 17th. */
  const uint64_t bytes = 16ull * GP_SIM_UM_PAGE + 100;
  uint64_t a;
  ASSERT_OK(gp_sim_malloc_managed(ctx, bytes, &a));
  ASSERT_EQ(a % GP_SIM_UM_PAGE, 0);

  /* The host fills it: every page faults, none moves (none was anywhere). */
  ASSERT_OK(gp_sim_host_access(ctx, a, bytes, GP_UM_ACCESS_WRITE));
  gp_sim_managed_range r = {a, bytes, GP_UM_ACCESS_READ, 0};
  gp_sim_launch_attrs at = {.managed = &r, .num_managed = 1};
  /* The kernel reads it all: 17 pages fault and move, then none. */
  ASSERT_OK(gp_sim_launch_ex(s, k, tu_dim(64), tu_dim(128), 0, &at));
  ASSERT_OK(gp_sim_launch_ex(s, k, tu_dim(64), tu_dim(128), 0, &at));
  /* The host reads 100000 bytes back: pages 0 and 1 fault and move. */
  ASSERT_OK(gp_sim_host_access(ctx, a, 100000, GP_UM_ACCESS_READ));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(um_count(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT), 2);
  ASSERT_EQ(um_count(GP_UM_COUNTER_GPU_PAGE_FAULT), 1);
  ASSERT_EQ(um_count(GP_UM_COUNTER_BYTES_TRANSFER_HTOD), 1);
  ASSERT_EQ(um_count(GP_UM_COUNTER_BYTES_TRANSFER_DTOH), 1);
  const gp_activity_um_counter *cpu0 =
      um_of(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, 0);
  const gp_activity_um_counter *gpu = um_of(GP_UM_COUNTER_GPU_PAGE_FAULT, 0);
  const gp_activity_um_counter *htod =
      um_of(GP_UM_COUNTER_BYTES_TRANSFER_HTOD, 0);
  const gp_activity_um_counter *cpu1 =
      um_of(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, 1);
  const gp_activity_um_counter *dtoh =
      um_of(GP_UM_COUNTER_BYTES_TRANSFER_DTOH, 0);
  uint32_t dev;
  ASSERT_OK(gp_sim_device_id(0, &dev));
  ASSERT_EQ(cpu0->hdr.size, sizeof(*cpu0));
  ASSERT_EQ(cpu0->value, 17);
  ASSERT_EQ(cpu0->address, a);
  ASSERT_EQ(gpu->value, 17);
  ASSERT_EQ(gpu->flags, GP_UM_ACCESS_READ);
  ASSERT_EQ(gpu->device_id, dev);
  ASSERT_EQ(gpu->stream_id, gp_sim_stream_id(s));
  ASSERT_EQ(htod->value, bytes);
  ASSERT_EQ(htod->src_id, GP_UM_HOST);
  ASSERT_EQ(htod->dst_id, dev);
  ASSERT_EQ(htod->flags, GP_UM_MIGRATION_COHERENCE);
  ASSERT_EQ(htod->address, a);
  ASSERT_EQ(cpu1->value, 2);
  ASSERT_EQ(dtoh->value, 2ull * GP_SIM_UM_PAGE);
  ASSERT_EQ(dtoh->src_id, dev);
  ASSERT_EQ(dtoh->dst_id, GP_UM_HOST);
  for (size_t i = 0; um(i); i++) {
    ASSERT_EQ(um(i)->scope, GP_UM_SCOPE_PROCESS_ALL_DEVICES);
    ASSERT_EQ(um(i)->process_id, (uint32_t)getpid());
    ASSERT(um(i)->end > um(i)->start);
  }
  /* The faults open the first kernel, which is longer than the second
   * (the same work, no faults) by just their time. */
  const gp_activity_kernel *k0 = kernel(0), *k1 = kernel(1);
  ASSERT_EQ(gpu->start, k0->start);
  ASSERT_EQ(htod->start, k0->start);
  ASSERT(gpu->end < k0->end);
  int64_t extra =
      (int64_t)(k0->end - k0->start) - (int64_t)(k1->end - k1->start);
  int64_t fault = (int64_t)(gpu->end - gpu->start);
  ASSERT(extra - fault <= 1 && fault - extra <= 1); /* clock rounding */
  /* The host's read waited for the kernels, and ran after them (to
   * within the device clock's conversion, which puts the kernel's end a
   * few ns off the host's time of it). */
  ASSERT(cpu1->start + 100 >= k1->end);
  ASSERT_OK(gp_sim_free(ctx, a));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

TEST(sim_managed_memory_follows_the_configuration) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  uint32_t dev0, dev1;
  ASSERT_OK(gp_sim_device_id(0, &dev0));
  ASSERT_OK(gp_sim_device_id(1, &dev1));
  uint64_t a;
  ASSERT_OK(gp_sim_malloc_managed(ctx, 4 * GP_SIM_UM_PAGE, &a));

  /* Refused, each with nothing changed. */
  gp_um_counter_config bad[] = {
      {GP_UM_SCOPE_PROCESS_ALL_DEVICES, GP_UM_COUNTER_KIND_COUNT, 0, 1},
      {GP_UM_SCOPE_UNKNOWN, GP_UM_COUNTER_GPU_PAGE_FAULT, 0, 1},
      {GP_UM_SCOPE_PROCESS_SINGLE_DEVICE, GP_UM_COUNTER_GPU_PAGE_FAULT, 4096,
       1},
      {GP_UM_SCOPE_PROCESS_ALL_DEVICES, GP_UM_COUNTER_UNKNOWN, 0, 1}};
  gp_um_counter_config off = {GP_UM_SCOPE_PROCESS_ALL_DEVICES,
                              GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, 0, 0};
  for (size_t i = 0; i < N_OF(bad); i++) {
    gp_um_counter_config two[2] = {off, bad[i]};
    ASSERT_EQ(gp_activity_configure_unified_memory_counter(two, 2), GP_EINVAL);
  }
  ASSERT_EQ(gp_activity_configure_unified_memory_counter(NULL, 1), GP_EINVAL);
  ASSERT_EQ(gp_activity_configure_unified_memory_counter(&off, 0), GP_EINVAL);
  ASSERT_OK(gp_sim_host_access(ctx, a, 10, GP_UM_ACCESS_WRITE));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(um_count(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT), 1); /* still on */

  /* CPU faults off; then on for the other device only. */
  ASSERT_OK(gp_activity_configure_unified_memory_counter(&off, 1));
  ASSERT_OK(
      gp_sim_host_access(ctx, a + GP_SIM_UM_PAGE, 10, GP_UM_ACCESS_WRITE));
  gp_um_counter_config other = {GP_UM_SCOPE_PROCESS_SINGLE_DEVICE,
                                GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, dev1, 1};
  ASSERT_OK(gp_activity_configure_unified_memory_counter(&other, 1));
  ASSERT_OK(
      gp_sim_host_access(ctx, a + 2 * GP_SIM_UM_PAGE, 10, GP_UM_ACCESS_WRITE));
  /* And on for this one. */
  other.device_id = dev0;
  ASSERT_OK(gp_activity_configure_unified_memory_counter(&other, 1));
  ASSERT_OK(
      gp_sim_host_access(ctx, a + 3 * GP_SIM_UM_PAGE, 10, GP_UM_ACCESS_WRITE));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(um_count(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT), 2);
  ASSERT_EQ(um_of(GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT, 1)->address,
            a + 3 * GP_SIM_UM_PAGE);
  um_all_on();

  /* Ranges a kernel cannot name. */
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z1kv", 1, 1);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  uint64_t plain;
  ASSERT_OK(gp_sim_malloc(ctx, 4096, &plain));
  gp_sim_managed_range rs[] = {{plain, 16, GP_UM_ACCESS_READ, 0},
                               {a, 5 * GP_SIM_UM_PAGE, GP_UM_ACCESS_READ, 0},
                               {a, 16, 0, 0},
                               {a, 16, GP_UM_ACCESS_PREFETCH, 0},
                               {a, 16, GP_UM_ACCESS_READ, 1},
                               {a, 0, GP_UM_ACCESS_READ, 0}};
  for (size_t i = 0; i < N_OF(rs); i++) {
    gp_sim_launch_attrs at = {.managed = &rs[i], .num_managed = 1};
    ASSERT_EQ(gp_sim_launch_ex(s, k, tu_dim(1), tu_dim(32), 0, &at), GP_EINVAL);
  }
  ASSERT_EQ(gp_sim_host_access(ctx, plain, 16, GP_UM_ACCESS_READ), GP_EINVAL);
  ASSERT_EQ(gp_sim_host_access(ctx, a, 16, GP_UM_ACCESS_ATOMIC), GP_EINVAL);
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

static const gp_activity_cdp_kernel *cdp(size_t i) {
  return (const gp_activity_cdp_kernel *)tu_find(GP_ACTIVITY_KIND_CDP_KERNEL,
                                                 i);
}

static const gp_activity_preemption *preemption(size_t i) {
  return (const gp_activity_preemption *)tu_find(GP_ACTIVITY_KIND_PREEMPTION,
                                                 i);
}

/* Launches parent (8 blocks of 128) with 3 children of child (4 x 64) on
 * s, sync or not, after each kernel alone; returns the records' parent
 * KERNEL (the third kernel record: alone, alone, the CDP launch). */
static const gp_activity_kernel *cdp_run(bool sync, uint64_t *p_ns,
                                         uint64_t *c_ns) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_PREEMPTION));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel_desc pd = tu_kernel_desc("_Z6parentv", 4000, 64);
  gp_sim_kernel_desc cd = tu_kernel_desc("_Z5childv", 2000, 32);
  gp_sim_kernel *parent, *child;
  ASSERT_OK(gp_sim_kernel_create(&pd, &parent));
  ASSERT_OK(gp_sim_kernel_create(&cd, &child));
  ASSERT_OK(gp_sim_launch(s, parent, tu_dim(8), tu_dim(128), 0));
  ASSERT_OK(gp_sim_launch(s, child, tu_dim(4), tu_dim(64), 0));
  gp_sim_launch_attrs at = {.cdp_blocks = 3,
                            .cdp_child = child,
                            .cdp_grid = tu_dim(4),
                            .cdp_block = tu_dim(64),
                            .cdp_sync = sync};
  ASSERT_OK(gp_sim_launch_ex(s, parent, tu_dim(8), tu_dim(128), 0, &at));
  /* Refused: more launching blocks than the grid has, a bad child. */
  at.cdp_blocks = 9;
  ASSERT_EQ(gp_sim_launch_ex(s, parent, tu_dim(8), tu_dim(128), 0, &at),
            GP_EINVAL);
  at.cdp_blocks = 1;
  at.cdp_block = tu_dim(100000);
  ASSERT_EQ(gp_sim_launch_ex(s, parent, tu_dim(8), tu_dim(128), 0, &at),
            GP_EINVAL);
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 3);
  *p_ns = kernel(0)->end - kernel(0)->start;
  *c_ns = kernel(1)->end - kernel(1)->start;
  ASSERT_OK(gp_sim_kernel_destroy(parent));
  ASSERT_OK(gp_sim_kernel_destroy(child));
  ASSERT_OK(gp_sim_context_destroy(ctx));
  return kernel(2);
}

/* Within 4 ns: each time went through the device clock. */
#define NEAR(a, b)                                                             \
  ASSERT((int64_t)(a) - (int64_t)(b) <= 4 && (int64_t)(b) - (int64_t)(a) <= 4)

TEST(sim_cdp_children_and_preemptions) {
  uint64_t p, c;
  const gp_activity_kernel *k = cdp_run(true, &p, &c);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_CDP_KERNEL), 3);
  const gp_activity_cdp_kernel *first = cdp(0);
  uint64_t latency = first->submitted - first->queued;
  ASSERT(latency > 0);
  for (uint32_t i = 0; i < 3; i++) {
    const gp_activity_cdp_kernel *r = cdp(i);
    ASSERT_EQ(r->hdr.size, sizeof(*r));
    ASSERT_STR_EQ(gp_activity_string(r->name_id), "_Z5childv");
    ASSERT_EQ(r->parent_grid_id, (int64_t)k->correlation_id);
    ASSERT_EQ(r->correlation_id, k->correlation_id);
    ASSERT(r->grid_id != r->parent_grid_id);
    ASSERT(i == 0 || r->grid_id != cdp(i - 1)->grid_id);
    ASSERT_EQ(r->parent_block_x, i);
    ASSERT_EQ(r->parent_block_y, 0);
    ASSERT_EQ(r->grid_x, 4);
    ASSERT_EQ(r->block_x, 64);
    ASSERT_EQ(r->stream_id, k->stream_id);
    ASSERT_EQ(r->queue_id, k->queue_id);
    /* Queued halfway through the parent's own work, one after another,
     * each as long as the child alone. */
    NEAR(r->queued - k->start, p / 2);
    NEAR(r->end - r->start, c);
    ASSERT_EQ(r->completed, r->end);
    ASSERT(i == 0 || r->start >= cdp(i - 1)->end);
    ASSERT(r->start >= k->start && r->end <= k->end);
  }
  /* The parent: its work, the latency and the children, in a row. */
  NEAR(k->end - k->start, p + latency + 3 * c);
  /* Each launching block saved at its launch, restored at its child's end. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_PREEMPTION), 6);
  for (uint32_t i = 0; i < 3; i++) {
    const gp_activity_preemption *save = preemption(2 * i);
    const gp_activity_preemption *restore = preemption(2 * i + 1);
    ASSERT_EQ(save->preemption_kind, GP_PREEMPTION_SAVE);
    ASSERT_EQ(restore->preemption_kind, GP_PREEMPTION_RESTORE);
    ASSERT_EQ(save->grid_id, (int64_t)k->correlation_id);
    ASSERT_EQ(save->block_x, i);
    ASSERT_EQ(restore->block_x, i);
    ASSERT_EQ(save->timestamp, cdp(i)->queued);
    ASSERT_EQ(restore->timestamp, cdp(i)->end);
  }
}

TEST(sim_cdp_without_sync_overlaps_the_parent) {
  uint64_t p, c;
  const gp_activity_kernel *k = cdp_run(false, &p, &c);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_CDP_KERNEL), 3);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_PREEMPTION), 0);
  uint64_t latency = cdp(0)->submitted - cdp(0)->queued;
  uint64_t children = p / 2 + latency + 3 * c;
  NEAR(k->end - k->start, children > p ? children : p);
  NEAR(cdp(2)->end - k->start, children);
}
