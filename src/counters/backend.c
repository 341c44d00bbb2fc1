/*
 * backend.c - gp_counters_backend_interface(): see backend.h.
 */
#include "counters/backend.h"

static const gp_counters_backend_ops ops = {
    .version = GP_COUNTERS_BACKEND_VERSION,
    .size = sizeof(gp_counters_backend_ops),
    .counters_register = gp__counters_register,
    .counters_announce = gp__counters_announce,
    .counter_emit = gp__counter_emit,
    .sampler_get = gp__sampler_get,
    .sampler_put = gp__sampler_put,
    .sampler_instrument = gp__sampler_instrument,
};

/* See backend.h. */
const gp_counters_backend_ops *gp_counters_backend_interface(uint32_t version,
                                                             size_t size) {
  if (version != GP_COUNTERS_BACKEND_VERSION || size != sizeof(ops))
    return NULL;
  return &ops;
}
