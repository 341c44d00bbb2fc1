/*
 * backend.c - gp_counters_backend_interface(): see backend.h.
 */
#include "counters/backend.h"
#include "counters/derived.h"

static bool has_catalog(uint32_t device_id) {
  return gp__catalog_get(device_id, NULL) != NULL;
}

static const gp_counters_backend_ops ops = {
    .version = GP_COUNTERS_BACKEND_VERSION,
    .size = sizeof(gp_counters_backend_ops),
    .counters_register = gp__counters_register,
    .counters_announce = gp__counters_announce,
    .counter_emit = gp__counter_emit,
    .sampler_get = gp__sampler_get,
    .sampler_put = gp__sampler_put,
    .sampler_instrument = gp__sampler_instrument,
    .device_has_catalog = has_catalog,
    .derived_register = gp__derived_register,
    .derived_attach = gp__derived_attach,
    .derived_sampling_start = gp__derived_sampling_start,
    .derived_sampling_stop = gp__derived_sampling_stop,
    .counters_perjob_claim = gp__counters_perjob_claim,
};

/* See backend.h. */
const gp_counters_backend_ops *gp_counters_backend_interface(uint32_t version,
                                                             size_t size) {
  if (version != GP_COUNTERS_BACKEND_VERSION || size != sizeof(ops))
    return NULL;
  return &ops;
}
