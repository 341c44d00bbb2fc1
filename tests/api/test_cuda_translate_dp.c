/*
 * test_cuda_translate_dp.c - CUPTI's CDP kernel, preemption and unified
 * memory counter records (the installed cupti_activity.h's
 * CUpti_ActivityCdpKernel, CUpti_ActivityPreemption and
 * CUpti_ActivityUnifiedMemoryCounter3), walked by the real libcupti and
 * translated into ours, field by field, with CUPTI's documented meanings:
 * which side of a transfer is the host, a CPU fault's value is an
 * instruction address, the ends CUPTI says to ignore.
 *
 * Without the CUDA toolkit at build time every test here skips.
 */
#include "harness.h"
#include "testutil.h"

#ifdef GP_HAVE_CUDA

#include "cuda_xlate.h"

/* Every kind captured, device 0 described, CUPTI's clock now in *t0, and
 * an empty buffer. */
static void begin(uint64_t *dev, uint64_t *t0, cbuf *b) {
  tu_capture(1 << 20, 0);
  enable_all();
  describe_device0(dev);
  *t0 = cupti_now();
  cbuf_init(b);
}

TEST(cuda_translate_cdp_kernels_and_preemptions) {
  uint64_t dev, t0;
  cbuf b;
  begin(&dev, &t0, &b);
  CUpti_ActivityCdpKernel *c =
      put(&b, sizeof(*c), CUPTI_ACTIVITY_KIND_CDP_KERNEL);
  c->registersPerThread = 40;
  c->start = t0 + 3000;
  c->end = t0 + 9000;
  c->queued = t0 + 1000;
  c->submitted = t0 + 2000;
  c->completed = t0 + 9500;
  c->deviceId = 0;
  c->contextId = 5;
  c->streamId = 14;
  c->gridX = 4, c->gridY = 2, c->gridZ = 1;
  c->blockX = 64, c->blockY = 1, c->blockZ = 1;
  c->staticSharedMemory = 1024;
  c->dynamicSharedMemory = 256;
  c->localMemoryPerThread = 16;
  c->localMemoryTotal = 1 << 20;
  c->correlationId = 77;
  c->gridId = 1001;
  c->parentGridId = 1000;
  c->parentBlockX = 3, c->parentBlockY = 1, c->parentBlockZ = 0;
  static char name[] = "_Z5childPf";
  c->name = name;
  CUpti_ActivityPreemption *p =
      put(&b, sizeof(*p), CUPTI_ACTIVITY_KIND_PREEMPTION);
  p->preemptionKind = CUPTI_ACTIVITY_PREEMPTION_KIND_SAVE;
  p->timestamp = t0 + 1500;
  p->gridId = 1000;
  p->blockX = 3, p->blockY = 1, p->blockZ = 0;
  p = put(&b, sizeof(*p), CUPTI_ACTIVITY_KIND_PREEMPTION);
  p->preemptionKind = CUPTI_ACTIVITY_PREEMPTION_KIND_RESTORE;
  p->timestamp = t0 + 9200;
  p->gridId = 1000;
  complete(&b);
  memset(name, 'x', sizeof(name) - 1); /* CUPTI's memory, reused */

  const gp_activity_cdp_kernel *r =
      (const gp_activity_cdp_kernel *)nth(GP_ACTIVITY_KIND_CDP_KERNEL, 0);
  ASSERT_EQ(r->hdr.size, sizeof(*r));
  ASSERT_STR_EQ(gp_activity_string(r->name_id), "_Z5childPf");
  ASSERT_UEQ(r->correlation_id, 77);
  ASSERT_EQ(r->grid_id, 1001);
  ASSERT_EQ(r->parent_grid_id, 1000);
  ASSERT_UEQ(r->queued, mapped(t0 + 1000));
  ASSERT_UEQ(r->submitted, mapped(t0 + 2000));
  ASSERT_UEQ(r->start, mapped(t0 + 3000));
  ASSERT_UEQ(r->end, mapped(t0 + 9000));
  ASSERT_UEQ(r->completed, mapped(t0 + 9500));
  ASSERT_EQ(r->device_id, (uint32_t)dev);
  ASSERT_EQ(r->context_id, gp__cuda_context(5, 0, 0));
  ASSERT_EQ(r->stream_id, 14);
  ASSERT_EQ(r->grid_x, 4);
  ASSERT_EQ(r->grid_y, 2);
  ASSERT_EQ(r->block_x, 64);
  ASSERT_EQ(r->parent_block_x, 3);
  ASSERT_EQ(r->parent_block_y, 1);
  ASSERT_EQ(r->static_shared_memory, 1024);
  ASSERT_EQ(r->dynamic_shared_memory, 256);
  ASSERT_EQ(r->registers_per_thread, 40);
  ASSERT_EQ(r->local_memory_per_thread, 16);
  ASSERT_EQ(r->local_memory_total, 1 << 20);

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_PREEMPTION), 2);
  const gp_activity_preemption *s =
      (const gp_activity_preemption *)nth(GP_ACTIVITY_KIND_PREEMPTION, 0);
  const gp_activity_preemption *e =
      (const gp_activity_preemption *)nth(GP_ACTIVITY_KIND_PREEMPTION, 1);
  ASSERT_EQ(s->preemption_kind, GP_PREEMPTION_SAVE);
  ASSERT_EQ(e->preemption_kind, GP_PREEMPTION_RESTORE);
  ASSERT_UEQ(s->timestamp, mapped(t0 + 1500));
  ASSERT_EQ(s->grid_id, 1000);
  ASSERT_EQ(s->block_x, 3);
  ASSERT_EQ(s->block_y, 1);
  ASSERT_EQ(s->device_id, UINT32_MAX); /* CUPTI does not say */
}

/* A UnifiedMemoryCounter3 record of kind k into b. */
static CUpti_ActivityUnifiedMemoryCounter3 *
put_um(cbuf *b, uint32_t k, uint64_t value, uint64_t start, uint64_t end,
       uint32_t src, uint32_t dst, uint32_t flags) {
  CUpti_ActivityUnifiedMemoryCounter3 *u =
      put(b, sizeof(*u), CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  u->counterKind = (CUpti_ActivityUnifiedMemoryCounterKind)k;
  u->value = value;
  u->start = start;
  u->end = end;
  u->address = 0x7f0000000000ull + value;
  u->srcId = src;
  u->dstId = dst;
  u->streamId = 999; /* "invalid", CUPTI says */
  u->processId = 4242;
  u->flags = flags;
  return u;
}

TEST(cuda_translate_unified_memory_counters) {
  uint64_t dev, t0;
  cbuf b;
  begin(&dev, &t0, &b);
  /* Host (CPU 0) to device 0; device 0 to host; a GPU fault; a CPU fault
   * (its value the faulting instruction's address, its end to ignore);
   * thrashing (end to ignore); a kind CUPTI may add later. */
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
         65536, t0 + 100, t0 + 900, 0, 0,
         CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
         4096, t0 + 1000, t0 + 1200, 0, 0,
         CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 3,
         t0 + 50, t0 + 80, 0, 7,
         CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
         0x401234, t0 + 2000, 12345, 0, 0, 0);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 8192,
         t0 + 3000, 1, 0, 0, 0);
  put_um(&b, 42, 1, t0, t0, 0, 0, 0);
  complete(&b);

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER), 5);
  const gp_activity_um_counter *u[5];
  for (size_t i = 0; i < 5; i++) {
    u[i] = (const gp_activity_um_counter *)nth(
        GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, i);
    ASSERT_EQ(u[i]->hdr.size, sizeof(*u[i]));
    ASSERT_EQ(u[i]->scope, GP_UM_SCOPE_PROCESS_ALL_DEVICES);
    ASSERT_EQ(u[i]->process_id, 4242);
    ASSERT_EQ(u[i]->stream_id, 0);
  }
  ASSERT_EQ(u[0]->counter_kind, GP_UM_COUNTER_BYTES_TRANSFER_HTOD);
  ASSERT_UEQ(u[0]->value, 65536);
  ASSERT_UEQ(u[0]->start, mapped(t0 + 100));
  ASSERT_UEQ(u[0]->end, mapped(t0 + 900));
  ASSERT_UEQ(u[0]->address, 0x7f0000000000ull + 65536);
  ASSERT_EQ(u[0]->src_id, GP_UM_HOST);
  ASSERT_EQ(u[0]->dst_id, (uint32_t)dev);
  ASSERT_EQ(u[0]->device_id, (uint32_t)dev);
  ASSERT_EQ(u[0]->flags, GP_UM_MIGRATION_COHERENCE);
  ASSERT_EQ(u[1]->counter_kind, GP_UM_COUNTER_BYTES_TRANSFER_DTOH);
  ASSERT_EQ(u[1]->src_id, (uint32_t)dev);
  ASSERT_EQ(u[1]->dst_id, GP_UM_HOST);
  ASSERT_EQ(u[1]->flags, GP_UM_MIGRATION_USER);
  ASSERT_EQ(u[2]->counter_kind, GP_UM_COUNTER_GPU_PAGE_FAULT);
  ASSERT_UEQ(u[2]->value, 3);
  ASSERT_EQ(u[2]->device_id, (uint32_t)dev);
  ASSERT_EQ(u[2]->dst_id, 0); /* CUPTI: to ignore */
  ASSERT_EQ(u[2]->flags, GP_UM_ACCESS_WRITE);
  ASSERT_UEQ(u[2]->end, mapped(t0 + 80));
  ASSERT_EQ(u[3]->counter_kind, GP_UM_COUNTER_CPU_PAGE_FAULT_COUNT);
  ASSERT_UEQ(u[3]->value, 1);
  ASSERT_UEQ(u[3]->start, mapped(t0 + 2000));
  ASSERT_UEQ(u[3]->end, u[3]->start);
  ASSERT_EQ(u[4]->counter_kind, GP_UM_COUNTER_THRASHING);
  ASSERT_UEQ(u[4]->end, u[4]->start);

  /* Filtered by the configuration: GPU faults off. */
  gp_um_counter_config off = {GP_UM_SCOPE_PROCESS_ALL_DEVICES,
                              GP_UM_COUNTER_GPU_PAGE_FAULT, 0, 0};
  ASSERT_OK(gp_activity_configure_unified_memory_counter(&off, 1));
  cbuf_init(&b);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 1,
         t0 + 50, t0 + 80, 0, 0, 0);
  put_um(&b, CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
         4096, t0 + 100, t0 + 900, 0, 0, 0);
  complete(&b);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER), 6);
  ASSERT_EQ(((const gp_activity_um_counter *)nth(
                 GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, 5))
                ->counter_kind,
            GP_UM_COUNTER_BYTES_TRANSFER_HTOD);
}

/* The CONTEXT records of our context ctx, in order, into out[0, 4). */
static size_t contexts_of(uint32_t ctx, const gp_activity_context **out) {
  size_t n = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_CONTEXT, i)) && n < 4; i++)
    if (((const gp_activity_context *)r)->context_id == ctx)
      out[n++] = (const gp_activity_context *)r;
  return n;
}

TEST(cuda_translate_mps_contexts) {
  tu_capture(1 << 20, 0);
  enable_all();
  uint64_t dev;
  describe_device0(&dev);
  /* Both contexts made (as the resource callback registers them), then
   * CUPTI's records: one plain CUDA, one a client of MPS. */
  uint32_t plain = gp__cuda_context(21, 0, 0);
  uint32_t mps = gp__cuda_context(22, 0, 0);
  ASSERT(plain && mps && plain != mps);
  cbuf b;
  cbuf_init(&b);
  CUpti_ActivityContext3 *cx =
      put(&b, sizeof(*cx), CUPTI_ACTIVITY_KIND_CONTEXT);
  cx->contextId = 21;
  cx->deviceId = 0;
  cx->nullStreamId = 7;
  cx->computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
  cx = put(&b, sizeof(*cx), CUPTI_ACTIVITY_KIND_CONTEXT);
  cx->contextId = 22;
  cx->deviceId = 0;
  cx->nullStreamId = 9;
  cx->computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA_MPS;
  complete(&b);
  const gp_activity_context *c[4];
  ASSERT_EQ(contexts_of(plain, c), 1);
  ASSERT_EQ(c[0]->flags, 0);
  ASSERT_EQ(c[0]->api, GP_API_CUDA);
  /* Described again, the later record with the flag. */
  ASSERT_EQ(contexts_of(mps, c), 2);
  ASSERT_EQ(c[0]->flags, 0);
  ASSERT_EQ(c[1]->flags, GP_ACTIVITY_FLAG_CONTEXT_CUDA_MPS);
  ASSERT_EQ(c[1]->api, GP_API_CUDA);
  ASSERT_EQ(c[1]->device_id, (uint32_t)dev);
  ASSERT_EQ(c[1]->default_stream_id, 9);
}

#else /* !GP_HAVE_CUDA */

#define NO_CUDA(name)                                                          \
  TEST(name) {                                                                 \
    SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "   \
         "build time; see mk/cuda.mk (CUDA_HOME)");                            \
  }
NO_CUDA(cuda_translate_cdp_kernels_and_preemptions)
NO_CUDA(cuda_translate_unified_memory_counters)
NO_CUDA(cuda_translate_mps_contexts)

#endif
