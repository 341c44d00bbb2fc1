/*
 * test_source_kinds.c - the source-level records of the simulated GPUs
 * (SOURCE_LOCATOR, GLOBAL_ACCESS, SHARED_ACCESS, BRANCH,
 * INSTRUCTION_EXECUTION): one launch's records, field by field, against
 * the instruction model of docs/sim.md worked out by hand here from the
 * kernel's description and launch (the numbers in the tables below), on
 * a 32-wide and a 16-wide device; locators once per (file, line), each
 * before the first record that points to it; nothing for a kind that is
 * not enabled.
 */
#include "harness.h"
#include "testutil.h"

/* The test kernel: 8 flops (4 FMAs) and 16 bytes per thread, three
 * quarters of them read (3 loads and 1 store of 4 bytes), cached, with
 * 256 bytes of shared memory per block. */
static gp_sim_kernel *stencil(const char *name) {
  gp_sim_kernel_desc kd = tu_kernel_desc(name, 8, 16);
  kd.read_fraction = 0.75;
  kd.cache_locality = 0.5;
  kd.static_shared_memory = 256;
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  return k;
}

static void enable_source_kinds(void) {
  for (uint32_t k = GP_ACTIVITY_KIND_SOURCE_LOCATOR;
       k <= GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION; k++)
    ASSERT_OK(gp_activity_enable((gp_activity_kind)k));
}

/* What one instruction of the model's program should have done. */
typedef struct want {
  uint64_t pc;
  uint32_t line, cls;
  uint64_t executed, threads, pred_on;
} want;

/* Checks the INSTRUCTION_EXECUTION records from #first on against w[n]
 * and returns the locator id of each in loc[]. */
static void check_instructions(size_t first, const want *w, size_t n,
                               uint64_t corr, uint32_t fn, uint32_t *loc) {
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION), first + n);
  for (size_t i = 0; i < n; i++) {
    const gp_activity_instruction_execution *r = (const void *)tu_find(
        GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, first + i);
    ASSERT_EQ(r->hdr.size, sizeof(*r));
    ASSERT_UEQ(r->correlation_id, corr);
    ASSERT_EQ(r->function_id, fn);
    ASSERT_UEQ(r->pc_offset, w[i].pc);
    ASSERT_EQ(GP_ACTIVITY_INSTRUCTION_CLASS(r->flags), w[i].cls);
    ASSERT_EQ(r->flags & GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID, 0);
    ASSERT_UEQ(r->executed, w[i].executed);
    ASSERT_UEQ(r->threads_executed, w[i].threads);
    ASSERT_UEQ(r->not_pred_off_threads_executed, w[i].pred_on);
    ASSERT_NE(r->source_locator_id, GP_SOURCE_LOCATOR_ID_UNKNOWN);
    loc[i] = r->source_locator_id;
  }
}

/* The locator record of id, which names file and line. */
static void check_locator(uint32_t id, const char *file, uint32_t line) {
  const gp_activity *r;
  size_t found = 0;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_SOURCE_LOCATOR, i)); i++) {
    const gp_activity_source_locator *l = (const void *)r;
    if (l->id != id)
      continue;
    found++;
    ASSERT_EQ(l->hdr.size, sizeof(*l));
    ASSERT_EQ(l->line, line);
    ASSERT_STR_EQ(gp_activity_string(l->file_id), file);
  }
  ASSERT_EQ(found, 1);
}

/* Every source-level record's locator was delivered before it. */
static void check_locators_come_first(void) {
  size_t size;
  const uint8_t *log = tu_log(&size);
  uint32_t seen[64];
  size_t nseen = 0, refs = 0;
  for (size_t off = 0; off < size;) {
    const gp_activity *r = (const void *)(log + off);
    uint32_t loc = UINT32_MAX;
    switch (r->kind) {
    case GP_ACTIVITY_KIND_SOURCE_LOCATOR:
      ASSERT_LT(nseen, sizeof(seen) / sizeof(seen[0]));
      seen[nseen++] = ((const gp_activity_source_locator *)r)->id;
      break;
    case GP_ACTIVITY_KIND_GLOBAL_ACCESS:
      loc = ((const gp_activity_global_access *)r)->source_locator_id;
      break;
    case GP_ACTIVITY_KIND_SHARED_ACCESS:
      loc = ((const gp_activity_shared_access *)r)->source_locator_id;
      break;
    case GP_ACTIVITY_KIND_BRANCH:
      loc = ((const gp_activity_branch *)r)->source_locator_id;
      break;
    case GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
      loc = ((const gp_activity_instruction_execution *)r)->source_locator_id;
      break;
    default:
      break;
    }
    if (loc != UINT32_MAX) {
      bool ok = false;
      for (size_t i = 0; i < nseen; i++)
        ok |= seen[i] == loc;
      ASSERT(ok);
      refs++;
    }
    off += r->size;
  }
  ASSERT_GT(refs, 0);
}

/*
 * 10 blocks of 100 threads on the "compute" device (32-wide warps): 3
 * full warps and one of 4 threads per block, 40 warps, 1000 threads. A
 * 4-byte access by all: 10 x (3 x 4 + 1) = 130 32-byte transactions.
 */
static const want compute_program[] = {
    {0x00, 2, GP_INSTRUCTION_CLASS_INTEGER, 40, 1000, 1000},
    {0x10, 3, GP_INSTRUCTION_CLASS_CONTROL_FLOW, 40, 1000, 1000},
    {0x20, 4, GP_INSTRUCTION_CLASS_GLOBAL, 120, 3000, 3000},       /* 3 loads */
    {0x30, 4, GP_INSTRUCTION_CLASS_CONTROL_FLOW, 120, 3000, 2000}, /* 2 taken */
    {0x40, 5, GP_INSTRUCTION_CLASS_FP_32, 160, 4000, 4000},        /* 4 FMAs */
    {0x50, 5, GP_INSTRUCTION_CLASS_CONTROL_FLOW, 160, 4000, 3000},
    {0x60, 6, GP_INSTRUCTION_CLASS_SHARED, 40, 1000, 1000},
    {0x70, 6, GP_INSTRUCTION_CLASS_BARRIER, 40, 1000, 1000},
    {0x80, 7, GP_INSTRUCTION_CLASS_SHARED, 40, 1000, 1000},
    {0x90, 8, GP_INSTRUCTION_CLASS_GLOBAL, 40, 1000, 1000}, /* 1 store */
    {0xa0, 8, GP_INSTRUCTION_CLASS_CONTROL_FLOW, 40, 1000, 0},
    {0xb0, 9, GP_INSTRUCTION_CLASS_CONTROL_FLOW, 40, 1000, 1000},
};

TEST(sim_source_records_follow_the_instruction_model) {
  tu_capture(1 << 18, 0);
  enable_source_kinds();
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_FUNCTION));
  gp_sim_kernel *k = stencil("_Z7stencilPKfPf");
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(10), tu_dim(100), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));

  const gp_activity_kernel *kr =
      (const void *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  const gp_activity_function *fr =
      (const void *)tu_find(GP_ACTIVITY_KIND_FUNCTION, 0);
  ASSERT_NOT_NULL(kr);
  ASSERT_NOT_NULL(fr);
  uint64_t corr = kr->correlation_id;
  uint32_t loc[12];
  check_instructions(0, compute_program, 12, corr, fr->id, loc);
  /* One locator per line, lines 2 to 9 of "<kernel>.cu". */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_SOURCE_LOCATOR), 8);
  for (size_t i = 0; i < 12; i++)
    check_locator(loc[i], "_Z7stencilPKfPf.cu", compute_program[i].line);
  ASSERT_EQ(loc[2], loc[3]); /* a line's instructions share its locator */
  ASSERT_NE(loc[1], loc[2]);
  check_locators_come_first();

  /* Branches: the bounds check diverges in each block's partial warp;
   * the loops' back-edges never diverge. */
  static const struct {
    uint64_t pc, executed, threads, diverged;
  } br[] = {{0x10, 40, 1000, 10},
            {0x30, 120, 3000, 0},
            {0x50, 160, 4000, 0},
            {0xa0, 40, 1000, 0}};
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_BRANCH), 4);
  for (size_t i = 0; i < 4; i++) {
    const gp_activity_branch *b =
        (const void *)tu_find(GP_ACTIVITY_KIND_BRANCH, i);
    ASSERT_EQ(b->hdr.size, sizeof(*b));
    ASSERT_UEQ(b->correlation_id, corr);
    ASSERT_EQ(b->function_id, fr->id);
    ASSERT_UEQ(b->pc_offset, br[i].pc);
    ASSERT_UEQ(b->executed, br[i].executed);
    ASSERT_UEQ(b->threads_executed, br[i].threads);
    ASSERT_UEQ(b->diverged, br[i].diverged);
    ASSERT_EQ(b->source_locator_id, loc[b->pc_offset / 16]);
  }

  /* Global: 3 cached loads of 4 bytes (3 x 130 transactions), 1 store. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_GLOBAL_ACCESS), 2);
  const gp_activity_global_access *ld =
      (const void *)tu_find(GP_ACTIVITY_KIND_GLOBAL_ACCESS, 0);
  const gp_activity_global_access *st =
      (const void *)tu_find(GP_ACTIVITY_KIND_GLOBAL_ACCESS, 1);
  ASSERT_EQ(ld->hdr.size, sizeof(*ld));
  ASSERT_UEQ(ld->correlation_id, corr);
  ASSERT_EQ(ld->function_id, fr->id);
  ASSERT_UEQ(ld->pc_offset, 0x20);
  ASSERT_EQ(ld->flags, 4u | GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD |
                           GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED);
  ASSERT_UEQ(ld->executed, 120);
  ASSERT_UEQ(ld->threads_executed, 3000);
  ASSERT_UEQ(ld->l2_transactions, 390);
  ASSERT_UEQ(ld->theoretical_l2_transactions, 390);
  ASSERT_EQ(ld->source_locator_id, loc[2]);
  ASSERT_UEQ(st->pc_offset, 0x90);
  ASSERT_EQ(st->flags, 4u); /* a store */
  ASSERT_EQ(st->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_SIZE_MASK, 4u);
  ASSERT_UEQ(st->executed, 40);
  ASSERT_UEQ(st->threads_executed, 1000);
  ASSERT_UEQ(st->l2_transactions, 130);
  ASSERT_EQ(st->source_locator_id, loc[9]);

  /* Shared: a store, then a load, one transaction per warp each. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_SHARED_ACCESS), 2);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_shared_access *a =
        (const void *)tu_find(GP_ACTIVITY_KIND_SHARED_ACCESS, i);
    ASSERT_EQ(a->hdr.size, sizeof(*a));
    ASSERT_UEQ(a->correlation_id, corr);
    ASSERT_UEQ(a->pc_offset, i ? 0x80 : 0x60);
    ASSERT_EQ(a->flags, i ? 4u | GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD : 4u);
    ASSERT_UEQ(a->executed, 40);
    ASSERT_UEQ(a->threads_executed, 1000);
    ASSERT_UEQ(a->shared_transactions, 40);
    ASSERT_UEQ(a->theoretical_shared_transactions, 40);
    ASSERT_EQ(a->source_locator_id, loc[i ? 8 : 6]);
  }

  /* The same kernel again: new counts, no new locators. */
  tu_clear();
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(10), tu_dim(100), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_SOURCE_LOCATOR), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION), 12);
  const gp_activity_instruction_execution *again =
      (const void *)tu_find(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, 0);
  ASSERT_NE(again->correlation_id, corr);
  ASSERT_EQ(again->source_locator_id, loc[0]);
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

/*
 * The V3D's warps are 16 wide: the same launch is 6 full warps and one of
 * 4 threads per block, 70 warps; an access by all still moves 4000 bytes:
 * 10 x (6 x 2 + 1) = 130 transactions.
 */
TEST(sim_source_counts_follow_the_device_warp) {
  tu_capture(1 << 18, 0);
  enable_source_kinds();
  gp_sim_kernel *k = stencil("_Z7stencilPKfPf");
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(2, &ctx)); /* the default third: v3d */
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(10), tu_dim(100), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION), 12);
  const gp_activity_instruction_execution *fma =
      (const void *)tu_find(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, 4);
  ASSERT_UEQ(fma->pc_offset, 0x40);
  ASSERT_UEQ(fma->executed, 280); /* 4 x 70 */
  ASSERT_UEQ(fma->threads_executed, 4000);
  const gp_activity_branch *b =
      (const void *)tu_find(GP_ACTIVITY_KIND_BRANCH, 0);
  ASSERT_UEQ(b->executed, 70);
  ASSERT_UEQ(b->diverged, 10);
  const gp_activity_global_access *ld =
      (const void *)tu_find(GP_ACTIVITY_KIND_GLOBAL_ACCESS, 0);
  ASSERT_UEQ(ld->executed, 210);
  ASSERT_UEQ(ld->l2_transactions, 390);
  /* Whole warps: 2 blocks of 64 threads diverge nowhere. */
  tu_clear();
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(2), tu_dim(64), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  b = (const void *)tu_find(GP_ACTIVITY_KIND_BRANCH, 0);
  ASSERT_NOT_NULL(b);
  ASSERT_UEQ(b->executed, 8);
  ASSERT_UEQ(b->threads_executed, 128);
  ASSERT_UEQ(b->diverged, 0);
  ld = (const void *)tu_find(GP_ACTIVITY_KIND_GLOBAL_ACCESS, 0);
  ASSERT_UEQ(ld->l2_transactions, 48); /* 3 loads x 8 warps x 2 */
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

/* Only the kinds enabled are written; code the kernel never runs (no
 * arithmetic, no shared memory, no stores) has no records. */
TEST(sim_source_records_follow_their_enables) {
  tu_capture(1 << 18, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z4loadPKf", 0, 8);
  kd.read_fraction = 1.0;
  kd.cache_locality = 0.0;
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(4), tu_dim(64), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
  for (uint32_t kind = GP_ACTIVITY_KIND_SOURCE_LOCATOR;
       kind <= GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION; kind++)
    ASSERT_EQ(tu_count(kind), 0);

  /* Global accesses only: no locator records (the ids are still set). */
  tu_clear();
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_GLOBAL_ACCESS));
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(4), tu_dim(64), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_GLOBAL_ACCESS), 1); /* no store */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_SOURCE_LOCATOR), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_BRANCH), 0);
  const gp_activity_global_access *ld =
      (const void *)tu_find(GP_ACTIVITY_KIND_GLOBAL_ACCESS, 0);
  ASSERT_EQ(ld->flags, 4u | GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD);
  ASSERT_UEQ(ld->executed, 16); /* 2 loads x 8 warps */
  ASSERT_UEQ(ld->l2_transactions, 64);
  uint32_t id = ld->source_locator_id;

  /* Locators enabled later: written then, with the id already used. */
  tu_clear();
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_SOURCE_LOCATOR));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION));
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(4), tu_dim(64), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));
  /* Lines 2, 3, 4 and 9 run: no arithmetic, shared memory or store. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION), 5);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_SOURCE_LOCATOR), 4);
  check_locator(id, "_Z4loadPKf.cu", 4);
  check_locators_come_first();
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_kernel_destroy(k));
}

TEST(source_record_layouts_and_names) {
  ASSERT_EQ(sizeof(gp_activity_source_locator), 24);
  ASSERT_EQ(sizeof(gp_activity_global_access), 72);
  ASSERT_EQ(sizeof(gp_activity_shared_access), 72);
  ASSERT_EQ(sizeof(gp_activity_branch), 56);
  ASSERT_EQ(sizeof(gp_activity_instruction_execution), 64);
  ASSERT_EQ(GP_ACTIVITY_KIND_SOURCE_LOCATOR, 23);
  ASSERT_EQ(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, 27);
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_SOURCE_LOCATOR),
                "SOURCE_LOCATOR");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_GLOBAL_ACCESS),
                "GLOBAL_ACCESS");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_SHARED_ACCESS),
                "SHARED_ACCESS");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_BRANCH), "BRANCH");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION),
                "INSTRUCTION_EXECUTION");
  ASSERT_STR_EQ(gp_instruction_class_name(GP_INSTRUCTION_CLASS_FP_32), "FP_32");
  ASSERT_STR_EQ(gp_instruction_class_name(GP_INSTRUCTION_CLASS_BARRIER),
                "BARRIER");
  ASSERT_STR_EQ(gp_instruction_class_name(GP_INSTRUCTION_CLASS_UNIFORM),
                "UNIFORM");
  ASSERT_STR_EQ(gp_instruction_class_name(GP_INSTRUCTION_CLASS_COUNT),
                "UNKNOWN");
  ASSERT_EQ(GP_ACTIVITY_INSTRUCTION_CLASS(
                (uint32_t)GP_INSTRUCTION_CLASS_SHARED_ATOMIC << 1 |
                GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID),
            GP_INSTRUCTION_CLASS_SHARED_ATOMIC);
}
