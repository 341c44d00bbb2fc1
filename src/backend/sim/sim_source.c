/*
 * sim_source.c - the simulated kernels' instruction model, and the
 * source-level records it gives (SOURCE_LOCATOR, GLOBAL_ACCESS,
 * SHARED_ACCESS, BRANCH, INSTRUCTION_EXECUTION).
 *
 * A simulated kernel has no code, so the model gives every kernel the
 * same small program, "<kernel name>.cu" (docs/sim.md lists it), whose
 * loop trip counts come from the kernel's own description and whose
 * counts come from its launch:
 *
 *   pc    line  instruction               class         runs per thread
 *   0x00  2     i = blockIdx * blockDim + threadIdx   INTEGER  1
 *   0x10  3     bounds check (branch)     CONTROL_FLOW  1
 *   0x20  4     global load, 4 bytes      GLOBAL        L
 *   0x30  4     loop back-edge (branch)   CONTROL_FLOW  L
 *   0x40  5     fused multiply-add        FP_32         F
 *   0x50  5     loop back-edge (branch)   CONTROL_FLOW  F
 *   0x60  6     shared store, 4 bytes     SHARED        1 with shared memory
 *   0x70  6     __syncthreads()           BARRIER       1 with shared memory
 *   0x80  7     shared load, 4 bytes      SHARED        1 with shared memory
 *   0x90  8     global store, 4 bytes     GLOBAL        S
 *   0xa0  8     loop back-edge (branch)   CONTROL_FLOW  S
 *   0xb0  9     exit                      CONTROL_FLOW  1
 *
 * L = ceil(bytes_per_thread * read_fraction / 4), S = ceil(bytes_per_thread
 * * (1 - read_fraction) / 4), F = ceil(flops_per_thread / 2) (an FMA is
 * two flops). With T threads in W-wide warps (blocks * ceil(block / W)
 * warps), an instruction run n times per thread is executed n * warps
 * times, by n * T threads; a loop back-edge's predicate (taken) holds on
 * all but the last trip, n - 1. The bounds check diverges once in each
 * block whose size is not a multiple of W (its last warp has idle lanes).
 * Accesses are unit-stride 4-byte words: a warp execution with a lanes
 * active takes ceil(4a / 32) 32-byte L2 transactions, the fewest possible
 * (theoretical = actual), and one shared memory transaction. A load is
 * cached (CACHED) when the kernel's cache locality is above 0.
 *
 * Which kinds a launch records is decided when it is launched; the
 * records are written when it is retired, after its KERNEL record, all
 * under the simulator lock. A (file, line) gets one locator id for the
 * process, and its SOURCE_LOCATOR record is written before the first
 * record that points to it (again if that one was dropped).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "simInt.h"

/* The program's lines (1-based) and how many there are. */
#define SRC_LINES 9u

/* How many times one thread runs an instruction. */
enum { RUN_ONCE, RUN_LOADS, RUN_FMAS, RUN_SHARED, RUN_STORES };

/* What an instruction's kind-specific record is. */
enum {
  REC_NONE,
  REC_BRANCH,
  REC_BACK_EDGE,
  REC_LOAD,
  REC_STORE,
  REC_SLOAD,
  REC_SSTORE
};

static const struct src_instr {
  uint8_t line, cls, runs, rec;
} program[] = {
    {2, GP_INSTRUCTION_CLASS_INTEGER, RUN_ONCE, REC_NONE},
    {3, GP_INSTRUCTION_CLASS_CONTROL_FLOW, RUN_ONCE, REC_BRANCH},
    {4, GP_INSTRUCTION_CLASS_GLOBAL, RUN_LOADS, REC_LOAD},
    {4, GP_INSTRUCTION_CLASS_CONTROL_FLOW, RUN_LOADS, REC_BACK_EDGE},
    {5, GP_INSTRUCTION_CLASS_FP_32, RUN_FMAS, REC_NONE},
    {5, GP_INSTRUCTION_CLASS_CONTROL_FLOW, RUN_FMAS, REC_BACK_EDGE},
    {6, GP_INSTRUCTION_CLASS_SHARED, RUN_SHARED, REC_SSTORE},
    {6, GP_INSTRUCTION_CLASS_BARRIER, RUN_SHARED, REC_NONE},
    {7, GP_INSTRUCTION_CLASS_SHARED, RUN_SHARED, REC_SLOAD},
    {8, GP_INSTRUCTION_CLASS_GLOBAL, RUN_STORES, REC_STORE},
    {8, GP_INSTRUCTION_CLASS_CONTROL_FLOW, RUN_STORES, REC_BACK_EDGE},
    {9, GP_INSTRUCTION_CLASS_CONTROL_FLOW, RUN_ONCE, REC_NONE},
};

#define SRC_PC_STEP 16u /* bytes per instruction */
#define SRC_ACCESS_BYTES 4u

/* The kinds of sim_source_work.kinds, as bits. */
#define K_LOCATOR (1u << 0)
#define K_GLOBAL (1u << 1)
#define K_SHARED (1u << 2)
#define K_BRANCH (1u << 3)
#define K_INSTR (1u << 4)

/* ---- Locators: one id per (file, line), by the kernel name's id ---- */

typedef struct src_file {
  uint32_t name_id; /* the kernel's name; 0: empty slot */
  uint32_t file_id; /* "<name>.cu" */
  uint32_t base;    /* the id of line 1 */
  uint32_t written; /* bit l: line l's record written */
} src_file;

static src_file *files; /* open addressing; cap a power of two */
static size_t files_cap, files_n;
static uint32_t next_locator = 1;

static src_file *file_slot(src_file *tab, size_t cap, uint32_t name_id) {
  size_t i = (name_id * 0x9e3779b1u) & (cap - 1);
  while (tab[i].name_id && tab[i].name_id != name_id)
    i = (i + 1) & (cap - 1);
  return &tab[i];
}

/* The file of the kernel named name_id, made on first use; NULL when
 * memory runs out. Under the simulator lock. */
static src_file *file_of(uint32_t name_id) {
  if (files_n * 2 >= files_cap) {
    size_t cap = files_cap ? files_cap * 2 : 64;
    src_file *tab = calloc(cap, sizeof(*tab));
    if (!tab)
      return NULL;
    for (size_t i = 0; i < files_cap; i++)
      if (files[i].name_id)
        *file_slot(tab, cap, files[i].name_id) = files[i];
    free(files);
    files = tab;
    files_cap = cap;
  }
  src_file *f = file_slot(files, files_cap, name_id);
  if (f->name_id)
    return f;
  char path[512];
  snprintf(path, sizeof(path), "%s.cu", gp_activity_string(name_id));
  f->name_id = name_id;
  f->file_id = gp__string_intern(path);
  f->base = next_locator;
  f->written = 0;
  next_locator += SRC_LINES;
  files_n++;
  return f;
}

/* The locator id of line of f, its record written first if enabled and
 * not yet written. */
static uint32_t locator(src_file *f, uint32_t line, uint8_t kinds) {
  if ((kinds & K_LOCATOR) && !(f->written & (1u << line))) {
    gp_activity_source_locator *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_SOURCE_LOCATOR, sizeof(*r), 0, 0);
    if (r) {
      r->id = f->base + line - 1;
      r->line = line;
      r->file_id = f->file_id;
      r->reserved0 = 0;
      gp__activity_commit(r);
      f->written |= 1u << line;
    }
  }
  return f->base + line - 1;
}

/* ---- Launch ---- */

/* ceil(x) as a count, x >= 0 (finite: gp_sim_kernel_create checked). */
static uint32_t count_of(double x) {
  double c = ceil(x);
  return c >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* See simInt.h. */
void gp__sim_source_prepare(sim_op *op, const gp_sim_kernel_desc *k) {
  static const struct {
    uint32_t kind;
    uint8_t bit;
  } map[] = {{GP_ACTIVITY_KIND_SOURCE_LOCATOR, K_LOCATOR},
             {GP_ACTIVITY_KIND_GLOBAL_ACCESS, K_GLOBAL},
             {GP_ACTIVITY_KIND_SHARED_ACCESS, K_SHARED},
             {GP_ACTIVITY_KIND_BRANCH, K_BRANCH},
             {GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, K_INSTR}};
  /* Not settable per context (gp_activity_enable_context): asked without
   * one, which never takes the overrides' lock. */
  uint8_t kinds = 0;
  for (size_t i = 0; i < GP_ARRAY_SIZE(map); i++)
    if (gp__activity_enabled(map[i].kind, 0))
      kinds |= map[i].bit;
  /* Locators alone say nothing: they come with the records that use them. */
  if (!(kinds & ~K_LOCATOR))
    return;
  op->src.kinds = kinds;
  op->src.cached = k->cache_locality > 0.0;
  op->src.loads =
      count_of(k->bytes_per_thread * k->read_fraction / SRC_ACCESS_BYTES);
  op->src.stores = count_of(k->bytes_per_thread * (1.0 - k->read_fraction) /
                            SRC_ACCESS_BYTES);
  op->src.fmas = count_of(k->flops_per_thread / 2.0);
}

/* ---- Retirement ---- */

/* A launch's shape, as the model counts it. */
typedef struct src_shape {
  uint64_t threads, warps;
  uint64_t diverged;     /* warps with idle lanes */
  uint64_t transactions; /* L2 transactions of one 4-byte access by all */
} src_shape;

static uint64_t sectors(uint64_t lanes) {
  return (lanes * SRC_ACCESS_BYTES + 31) / 32;
}

static void shape_of(const sim_op *op, uint32_t warp, src_shape *s) {
  uint64_t blocks = (uint64_t)op->key.grid.x * op->key.grid.y * op->key.grid.z;
  uint64_t tpb = (uint64_t)op->key.block.x * op->key.block.y * op->key.block.z;
  uint64_t full = tpb / warp, rem = tpb % warp;
  s->threads = blocks * tpb;
  s->warps = blocks * (full + (rem ? 1 : 0));
  s->diverged = rem ? blocks : 0;
  s->transactions = blocks * (full * sectors(warp) + sectors(rem));
}

/* See simInt.h. */
void gp__sim_source_emit(const sim_op *op, const sim_model *m) {
  uint8_t kinds = op->src.kinds;
  src_file *f = file_of(op->name_id);
  src_shape s;
  shape_of(op, m->warp, &s);
  bool shared = op->static_shared + op->key.dynamic_shared > 0;
  const uint64_t runs[] = {[RUN_ONCE] = 1,
                           [RUN_LOADS] = op->src.loads,
                           [RUN_FMAS] = op->src.fmas,
                           [RUN_SHARED] = shared ? 1 : 0,
                           [RUN_STORES] = op->src.stores};
  uint32_t fn = (uint32_t)op->key.kernel;
  for (size_t i = 0; i < GP_ARRAY_SIZE(program); i++) {
    const struct src_instr *in = &program[i];
    uint64_t n = runs[in->runs];
    if (n == 0)
      continue; /* never executed: no record */
    uint32_t loc = f ? locator(f, in->line, kinds) : 0;
    uint64_t pc = i * SRC_PC_STEP;
    uint64_t executed = n * s.warps, threads = n * s.threads;
    if (kinds & K_INSTR) {
      gp_activity_instruction_execution *r =
          gp__activity_reserve(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION,
                               sizeof(*r), op->context_id, op->stream_id);
      if (r) {
        r->correlation_id = op->correlation_id;
        r->pc_offset = pc;
        r->executed = executed;
        r->threads_executed = threads;
        r->not_pred_off_threads_executed =
            in->rec == REC_BACK_EDGE ? (n - 1) * s.threads : threads;
        r->flags = (uint32_t)in->cls
                   << GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_SHIFT;
        r->source_locator_id = loc;
        r->function_id = fn;
        r->reserved0 = 0;
        gp__activity_commit(r);
      }
    }
    switch (in->rec) {
    case REC_BRANCH:
    case REC_BACK_EDGE:
      if (kinds & K_BRANCH) {
        gp_activity_branch *r = gp__activity_reserve(
            GP_ACTIVITY_KIND_BRANCH, sizeof(*r), op->context_id, op->stream_id);
        if (r) {
          r->correlation_id = op->correlation_id;
          r->pc_offset = pc;
          r->executed = executed;
          r->threads_executed = threads;
          r->diverged = in->rec == REC_BRANCH ? s.diverged : 0;
          r->source_locator_id = loc;
          r->function_id = fn;
          gp__activity_commit(r);
        }
      }
      break;
    case REC_LOAD:
    case REC_STORE:
      if (kinds & K_GLOBAL) {
        gp_activity_global_access *r =
            gp__activity_reserve(GP_ACTIVITY_KIND_GLOBAL_ACCESS, sizeof(*r),
                                 op->context_id, op->stream_id);
        if (r) {
          uint32_t fl = SRC_ACCESS_BYTES;
          if (in->rec == REC_LOAD)
            fl |= GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD |
                  (op->src.cached ? GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED
                                  : 0);
          r->correlation_id = op->correlation_id;
          r->pc_offset = pc;
          r->executed = executed;
          r->threads_executed = threads;
          r->l2_transactions = n * s.transactions;
          r->theoretical_l2_transactions = n * s.transactions;
          r->flags = fl;
          r->source_locator_id = loc;
          r->function_id = fn;
          r->reserved0 = 0;
          gp__activity_commit(r);
        }
      }
      break;
    case REC_SLOAD:
    case REC_SSTORE:
      if (kinds & K_SHARED) {
        gp_activity_shared_access *r =
            gp__activity_reserve(GP_ACTIVITY_KIND_SHARED_ACCESS, sizeof(*r),
                                 op->context_id, op->stream_id);
        if (r) {
          r->correlation_id = op->correlation_id;
          r->pc_offset = pc;
          r->executed = executed;
          r->threads_executed = threads;
          r->shared_transactions = executed;
          r->theoretical_shared_transactions = executed;
          r->flags =
              SRC_ACCESS_BYTES |
              (in->rec == REC_SLOAD ? GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD
                                    : 0);
          r->source_locator_id = loc;
          r->function_id = fn;
          r->reserved0 = 0;
          gp__activity_commit(r);
        }
      }
      break;
    default:
      break;
    }
  }
}
