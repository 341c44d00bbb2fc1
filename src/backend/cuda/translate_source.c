/*
 * translate_source.c - CUPTI's source-level records into ours, and asking
 * CUPTI for them.
 *
 *   CUPTI (installed header's layout)      ours
 *   CUpti_ActivitySourceLocator            SOURCE_LOCATOR (file interned)
 *   CUpti_ActivityGlobalAccess3            GLOBAL_ACCESS
 *   CUpti_ActivitySharedAccess             SHARED_ACCESS
 *   CUpti_ActivityBranch2                  BRANCH
 *   CUpti_ActivityInstructionExecution     INSTRUCTION_EXECUTION
 *
 * Ids are CUPTI's: locator ids, the kernel's correlation id, the FUNCTION
 * record's function id; counts widen to 64 bits; the flags CUPTI defines
 * for each record keep their bits (ours are the same), others are dropped.
 *
 * These kinds are CUPTI's source-level SASS path, which CUDA 13 removed:
 * its cupti_activity.h says enabling them gives
 * CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, and its record iterator does
 * not walk them (CUPTI_ERROR_INVALID_KIND). The collector asks for them
 * only when gpuperf's kind is enabled as it starts; a refusal is said once
 * on stderr and the session goes on without them.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "cudaInt.h"

/* The flag bits CUPTI defines for each record (the same as ours). */
#define GLOBAL_FLAGS                                                           \
  (GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_SIZE_MASK |                             \
   GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD |                                  \
   GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED)
#define SHARED_FLAGS                                                           \
  (GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_SIZE_MASK |                             \
   GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD)
#define INSTRUCTION_FLAGS                                                      \
  (GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID |                                \
   GP_ACTIVITY_FLAG_INSTRUCTION_CLASS_MASK)

static const struct {
  CUpti_ActivityKind cupti;
  uint32_t ours;
} kinds[] = {
    {CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR, GP_ACTIVITY_KIND_SOURCE_LOCATOR},
    {CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS, GP_ACTIVITY_KIND_GLOBAL_ACCESS},
    {CUPTI_ACTIVITY_KIND_SHARED_ACCESS, GP_ACTIVITY_KIND_SHARED_ACCESS},
    {CUPTI_ACTIVITY_KIND_BRANCH, GP_ACTIVITY_KIND_BRANCH},
    {CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION,
     GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION},
};

/* See cudaInt.h. */
uint32_t gp__cuda_source_kind_map(uint32_t cupti_kind) {
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++)
    if (kinds[i].cupti == cupti_kind)
      return kinds[i].ours;
  return GP_ACTIVITY_KIND_INVALID;
}

/* Our record of kind, reserved if the kind is enabled: *rc says why not. */
static void *reserve(uint32_t kind, uint32_t size, int *rc) {
  if (!GP_CORE->activity_enabled(kind, 0)) {
    *rc = GP_ENOENT;
    return NULL;
  }
  void *r = GP_CORE->activity_reserve(kind, size, 0, 0);
  *rc = r ? 0 : GP_ENOSPC;
  return r;
}

static int locator(const CUpti_ActivitySourceLocator *l) {
  int rc;
  gp_activity_source_locator *r =
      reserve(GP_ACTIVITY_KIND_SOURCE_LOCATOR, sizeof(*r), &rc);
  if (!r)
    return rc;
  r->id = l->id;
  r->line = l->lineNumber;
  r->file_id = l->fileName ? GP_CORE->string_intern(l->fileName) : 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int global_access(const CUpti_ActivityGlobalAccess3 *g) {
  int rc;
  gp_activity_global_access *r =
      reserve(GP_ACTIVITY_KIND_GLOBAL_ACCESS, sizeof(*r), &rc);
  if (!r)
    return rc;
  r->correlation_id = g->correlationId;
  r->pc_offset = g->pcOffset;
  r->executed = g->executed;
  r->threads_executed = g->threadsExecuted;
  r->l2_transactions = g->l2_transactions;
  r->theoretical_l2_transactions = g->theoreticalL2Transactions;
  r->flags = (uint32_t)g->flags & GLOBAL_FLAGS;
  r->source_locator_id = g->sourceLocatorId;
  r->function_id = g->functionId;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int shared_access(const CUpti_ActivitySharedAccess *s) {
  int rc;
  gp_activity_shared_access *r =
      reserve(GP_ACTIVITY_KIND_SHARED_ACCESS, sizeof(*r), &rc);
  if (!r)
    return rc;
  r->correlation_id = s->correlationId;
  r->pc_offset = s->pcOffset;
  r->executed = s->executed;
  r->threads_executed = s->threadsExecuted;
  r->shared_transactions = s->sharedTransactions;
  r->theoretical_shared_transactions = s->theoreticalSharedTransactions;
  r->flags = (uint32_t)s->flags & SHARED_FLAGS;
  r->source_locator_id = s->sourceLocatorId;
  r->function_id = s->functionId;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int branch(const CUpti_ActivityBranch2 *b) {
  int rc;
  gp_activity_branch *r = reserve(GP_ACTIVITY_KIND_BRANCH, sizeof(*r), &rc);
  if (!r)
    return rc;
  r->correlation_id = b->correlationId;
  r->pc_offset = b->pcOffset;
  r->executed = b->executed;
  r->threads_executed = b->threadsExecuted;
  r->diverged = b->diverged;
  r->source_locator_id = b->sourceLocatorId;
  r->function_id = b->functionId;
  GP_CORE->activity_commit(r);
  return 0;
}

static int instruction(const CUpti_ActivityInstructionExecution *x) {
  int rc;
  gp_activity_instruction_execution *r =
      reserve(GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION, sizeof(*r), &rc);
  if (!r)
    return rc;
  r->correlation_id = x->correlationId;
  r->pc_offset = x->pcOffset;
  r->executed = x->executed;
  r->threads_executed = x->threadsExecuted;
  r->not_pred_off_threads_executed = x->notPredOffThreadsExecuted;
  r->flags = (uint32_t)x->flags & INSTRUCTION_FLAGS;
  r->source_locator_id = x->sourceLocatorId;
  r->function_id = x->functionId;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* See cudaInt.h. */
int gp__cuda_translate_source(const CUpti_Activity *rec) {
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR:
    return locator((const CUpti_ActivitySourceLocator *)rec);
  case CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS:
    return global_access((const CUpti_ActivityGlobalAccess3 *)rec);
  case CUPTI_ACTIVITY_KIND_SHARED_ACCESS:
    return shared_access((const CUpti_ActivitySharedAccess *)rec);
  case CUPTI_ACTIVITY_KIND_BRANCH:
    return branch((const CUpti_ActivityBranch2 *)rec);
  case CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
    return instruction((const CUpti_ActivityInstructionExecution *)rec);
  default:
    return GP_EKIND;
  }
}

/* ------------------------------------------------------------------ */
/* Asking CUPTI                                                         */

/* The kinds CUPTI took (bit i: kinds[i]), to give back at the stop. */
static atomic_uint enabled;
/* The kinds whose refusal was said (once per process). */
static atomic_uint said;

/* See cudaInt.h. */
uint32_t gp__cuda_source_enable(void) {
  uint32_t refused = 0;
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++) {
    if (!GP_CORE->activity_enabled(kinds[i].ours, 0))
      continue;
    CUptiResult r = cuptiActivityEnable(kinds[i].cupti);
    if (r == CUPTI_SUCCESS) {
      atomic_fetch_or(&enabled, 1u << i);
      continue;
    }
    refused |= 1u << i;
    if (atomic_fetch_or(&said, 1u << i) & (1u << i))
      continue;
    const char *name = NULL;
    if (cuptiGetResultString(r, &name) != CUPTI_SUCCESS || !name)
      name = "CUPTI_ERROR_?";
    fprintf(stderr,
            "gpuperf-cuda: CUPTI refused the source-level kind %s (%s, %d): "
            "no %s records in this session%s\n",
            gp_activity_kind_name(kinds[i].ours), name, (int)r,
            gp_activity_kind_name(kinds[i].ours),
            r == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED
                ? " (CUDA 13 removed the source-level kinds; docs/cuda.md)"
                : "");
  }
  return refused;
}

/* See cudaInt.h. */
void gp__cuda_source_disable(void) {
  uint32_t on = atomic_exchange(&enabled, 0);
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++)
    if (on & (1u << i))
      cuptiActivityDisable(kinds[i].cupti);
}
