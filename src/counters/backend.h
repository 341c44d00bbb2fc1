/*
 * backend.h - the provider side of the counters subsystem
 * (countersInt.h), for backends built as shared objects of their own.
 *
 * The counters twin of core/backend.h: a library outside libgpuperf.so
 * that publishes counter catalogs and samples them (libgpuperf-cuda.so)
 * must do so into the one libgpuperf of the process, where sessions find
 * them; but the functions of countersInt.h are hidden in libgpuperf.so.
 * gp_counters_backend_interface() hands such a library a table of them,
 * checked by version and size. It is exported by libgpuperf.so (and
 * present in libgpuperf.a) but it is not a public API: its only users are
 * gpuperf's own backends, built from the same sources.
 */
#ifndef GPUPERF_COUNTERS_BACKEND_H
#define GPUPERF_COUNTERS_BACKEND_H

#include "counters/countersInt.h"

/* The table only ever grows at its end (see core/backend.h). */
#define GP_COUNTERS_BACKEND_VERSION 2u

/* Each entry is the countersInt.h function of the same name (gp__
 * dropped). */
typedef struct gp_counters_backend_ops {
  uint32_t version; /* GP_COUNTERS_BACKEND_VERSION */
  uint32_t size;    /* sizeof(gp_counters_backend_ops) */
  int (*counters_register)(uint32_t device_id, const gp__catalog *cat,
                           const gp__provider_ops *ops, void *prov);
  void (*counters_announce)(uint32_t device_id);
  void (*counter_emit)(const gp__catalog *cat, uint32_t device_id,
                       uint32_t index, double num, double den,
                       uint64_t timestamp, uint64_t window_start,
                       uint64_t correlation_id, uint32_t perfmon_id,
                       uint32_t context_id);
  gp__sampler *(*sampler_get)(gp__sampler *s);
  void (*sampler_put)(gp__sampler *s);
  bool (*sampler_instrument)(gp__sampler *s, const char *mangled,
                             const char *demangled);
  bool (*device_has_catalog)(uint32_t device_id);
  int (*derived_register)(uint32_t device_id); /* counters/derived.h */
  int (*derived_attach)(uint32_t device_id, const gp__catalog *cat,
                        uint32_t index);
  int (*derived_sampling_start)(uint32_t device_id, gp__sampler *s);
  void (*derived_sampling_stop)(uint32_t device_id, gp__sampler *s);
  /* since version 2 */
  void (*counters_perjob_claim)(const char *driver);
} gp_counters_backend_ops;

/*
 * Returns the counters' provider functions if the caller was built for
 * version (1 to GP_COUNTERS_BACKEND_VERSION) with the table of that
 * version, size bytes; NULL otherwise. The table lives as long as the
 * library.
 */
GP_EXPORT const gp_counters_backend_ops *
gp_counters_backend_interface(uint32_t version, size_t size);

#endif /* GPUPERF_COUNTERS_BACKEND_H */
