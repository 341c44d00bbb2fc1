/*
 * gpuperf/activity_source.h - the source-level activity records: what
 * each instruction of a kernel did, by source line (CUPTI 6.5's
 * CUpti_ActivitySourceLocator, CUpti_ActivityGlobalAccess2/3,
 * CUpti_ActivitySharedAccess, CUpti_ActivityBranch2 and
 * CUpti_ActivityInstructionExecution). Included by gpuperf/activity.h;
 * the kinds are GP_ACTIVITY_KIND_SOURCE_LOCATOR .. _INSTRUCTION_EXECUTION.
 *
 * A SOURCE_LOCATOR record names a (file, line) once, with an id; the
 * records of the other four kinds describe one instruction of one kernel
 * execution (correlation_id: the KERNEL record's, function_id: the
 * FUNCTION record's id, pc_offset: the instruction's offset in the
 * function) and point to the line it came from by source_locator_id
 * (GP_SOURCE_LOCATOR_ID_UNKNOWN: none). A locator's record comes before
 * the first record that refers to it, on the same thread.
 *
 * Counts, as CUPTI's: `executed` counts warp-level executions (a warp
 * with at least one thread active), `threads_executed` the threads that
 * executed it. The simulator's counts are a model (docs/sim.md).
 *
 * Records follow gpuperf's conventions (activity.h): fixed-width fields,
 * sizes a multiple of 8, strings as ids, 64-bit correlation ids and counts
 * (CUPTI's 32-bit `executed` widens).
 */
#ifndef GPUPERF_ACTIVITY_SOURCE_H
#define GPUPERF_ACTIVITY_SOURCE_H

#include <stdint.h>

#include "gpuperf/activity.h"
#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A source_locator_id that names no locator (CUPTI's
 * CUPTI_SOURCE_LOCATOR_ID_UNKNOWN). */
#define GP_SOURCE_LOCATOR_ID_UNKNOWN 0u

/* GLOBAL_ACCESS flags, CUPTI's bits: the bytes each thread asked for in
 * the low 8 bits; a load (else a store); a load through the L1 cache. */
#define GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_SIZE_MASK 0xffu
#define GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD (1u << 8)
#define GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED (1u << 9)

/* SHARED_ACCESS flags, CUPTI's bits: bytes per thread; a load (else a
 * store). */
#define GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_SIZE_MASK 0xffu
#define GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD (1u << 8)

/* INSTRUCTION_EXECUTION flags, CUPTI's bits: the counts could not be
 * worked out; the instruction's gp_instruction_class in bits 1..8. */
#define GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID (1u << 0)
#define GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_MASK (0xffu << 1)
#define GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_SHIFT 1u

/* The class in an INSTRUCTION_EXECUTION record's flags. */
#define GP_ACTIVITY_INSTRUCTION_CLASS(flags)                                   \
  (((flags)&GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_MASK) >>                        \
   GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_SHIFT)

/* What an instruction does; values as CUPTI's CUpti_ActivityInstructionClass
 * (6.5's up to MISCELLANEOUS, and the two later toolkits added). */
typedef enum gp_instruction_class {
  GP_INSTRUCTION_CLASS_UNKNOWN = 0,
  GP_INSTRUCTION_CLASS_FP_32 = 1,
  GP_INSTRUCTION_CLASS_FP_64 = 2,
  GP_INSTRUCTION_CLASS_INTEGER = 3,
  GP_INSTRUCTION_CLASS_BIT_CONVERSION = 4,
  GP_INSTRUCTION_CLASS_CONTROL_FLOW = 5,
  GP_INSTRUCTION_CLASS_GLOBAL = 6, /* global load or store */
  GP_INSTRUCTION_CLASS_SHARED = 7, /* shared load or store */
  GP_INSTRUCTION_CLASS_LOCAL = 8,
  GP_INSTRUCTION_CLASS_GENERIC = 9,
  GP_INSTRUCTION_CLASS_SURFACE = 10,
  GP_INSTRUCTION_CLASS_CONSTANT = 11,
  GP_INSTRUCTION_CLASS_TEXTURE = 12,
  GP_INSTRUCTION_CLASS_GLOBAL_ATOMIC = 13,
  GP_INSTRUCTION_CLASS_SHARED_ATOMIC = 14,
  GP_INSTRUCTION_CLASS_SURFACE_ATOMIC = 15,
  GP_INSTRUCTION_CLASS_INTER_THREAD_COMMUNICATION = 16,
  GP_INSTRUCTION_CLASS_BARRIER = 17,
  GP_INSTRUCTION_CLASS_MISCELLANEOUS = 18,
  GP_INSTRUCTION_CLASS_FP_16 = 19,
  GP_INSTRUCTION_CLASS_UNIFORM = 20,
  GP_INSTRUCTION_CLASS_COUNT
} gp_instruction_class;

/* A (file, line) that source-level records point to by id. */
typedef struct gp_activity_source_locator {
  gp_activity hdr;
  uint32_t id;      /* never GP_SOURCE_LOCATOR_ID_UNKNOWN */
  uint32_t line;    /* 1-based */
  uint32_t file_id; /* string id of the file's path */
  uint32_t reserved0;
} gp_activity_source_locator;

/* A global memory load or store instruction (CUpti_ActivityGlobalAccess3). */
typedef struct gp_activity_global_access {
  gp_activity hdr;
  uint64_t correlation_id; /* the kernel's */
  uint64_t pc_offset;
  uint64_t executed;         /* warp-level executions, predicate true */
  uint64_t threads_executed; /* threads, predicate true */
  uint64_t l2_transactions;  /* 32-byte transactions to L2 */
  uint64_t theoretical_l2_transactions; /* the fewest the pattern allows */
  uint32_t flags; /* GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_* and size */
  uint32_t source_locator_id;
  uint32_t function_id; /* the FUNCTION record's id */
  uint32_t reserved0;
} gp_activity_global_access;

/* A shared memory load or store instruction (CUpti_ActivitySharedAccess). */
typedef struct gp_activity_shared_access {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t pc_offset;
  uint64_t executed;         /* warp-level executions, predicate true */
  uint64_t threads_executed; /* threads, predicate true */
  uint64_t shared_transactions;
  uint64_t theoretical_shared_transactions; /* the fewest possible */
  uint32_t flags; /* GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_* and size */
  uint32_t source_locator_id;
  uint32_t function_id;
  uint32_t reserved0;
} gp_activity_shared_access;

/* A branch instruction (CUpti_ActivityBranch2). */
typedef struct gp_activity_branch {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t pc_offset;
  uint64_t executed;         /* warp-level, whatever the predicate */
  uint64_t threads_executed; /* threads that executed it */
  uint64_t diverged;         /* warp-level executions whose threads parted */
  uint32_t source_locator_id;
  uint32_t function_id;
} gp_activity_branch;

/* Any instruction (CUpti_ActivityInstructionExecution). */
typedef struct gp_activity_instruction_execution {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t pc_offset;
  uint64_t executed;         /* warp-level, whatever the predicate */
  uint64_t threads_executed; /* threads, whatever the predicate */
  uint64_t not_pred_off_threads_executed; /* threads, predicate true */
  uint32_t
      flags; /* _VALUE_INVALID; the class (GP_ACTIVITY_INSTRUCTION_CLASS) */
  uint32_t source_locator_id;
  uint32_t function_id;
  uint32_t reserved0;
} gp_activity_instruction_execution;

/* Returns the name of a gp_instruction_class ("FP_32"), or "UNKNOWN". */
GP_EXPORT const char *gp_instruction_class_name(uint32_t instruction_class);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_ACTIVITY_SOURCE_H */
