/*
 * activity_source.c - names for the source-level records
 * (gpuperf/activity_source.h). The records themselves are written by the
 * backends: the simulator's instruction model (backend/sim/sim_source.c)
 * and the CUDA collector's translation of CUPTI's
 * (backend/cuda/translate_source.c).
 */
#include "core.h"

/* See activity_source.h. */
const char *gp_instruction_class_name(uint32_t instruction_class) {
  static const char *const names[GP_INSTRUCTION_CLASS_COUNT] = {
      [GP_INSTRUCTION_CLASS_UNKNOWN] = "UNKNOWN",
      [GP_INSTRUCTION_CLASS_FP_32] = "FP_32",
      [GP_INSTRUCTION_CLASS_FP_64] = "FP_64",
      [GP_INSTRUCTION_CLASS_INTEGER] = "INTEGER",
      [GP_INSTRUCTION_CLASS_BIT_CONVERSION] = "BIT_CONVERSION",
      [GP_INSTRUCTION_CLASS_CONTROL_FLOW] = "CONTROL_FLOW",
      [GP_INSTRUCTION_CLASS_GLOBAL] = "GLOBAL",
      [GP_INSTRUCTION_CLASS_SHARED] = "SHARED",
      [GP_INSTRUCTION_CLASS_LOCAL] = "LOCAL",
      [GP_INSTRUCTION_CLASS_GENERIC] = "GENERIC",
      [GP_INSTRUCTION_CLASS_SURFACE] = "SURFACE",
      [GP_INSTRUCTION_CLASS_CONSTANT] = "CONSTANT",
      [GP_INSTRUCTION_CLASS_TEXTURE] = "TEXTURE",
      [GP_INSTRUCTION_CLASS_GLOBAL_ATOMIC] = "GLOBAL_ATOMIC",
      [GP_INSTRUCTION_CLASS_SHARED_ATOMIC] = "SHARED_ATOMIC",
      [GP_INSTRUCTION_CLASS_SURFACE_ATOMIC] = "SURFACE_ATOMIC",
      [GP_INSTRUCTION_CLASS_INTER_THREAD_COMMUNICATION] =
          "INTER_THREAD_COMMUNICATION",
      [GP_INSTRUCTION_CLASS_BARRIER] = "BARRIER",
      [GP_INSTRUCTION_CLASS_MISCELLANEOUS] = "MISCELLANEOUS",
      [GP_INSTRUCTION_CLASS_FP_16] = "FP_16",
      [GP_INSTRUCTION_CLASS_UNIFORM] = "UNIFORM"};
  return instruction_class < GP_INSTRUCTION_CLASS_COUNT
             ? names[instruction_class]
             : "UNKNOWN";
}
