/*
 * coreops.c - the core and the counters this collector writes into: those
 * of the process's one libgpuperf, reached through their backend tables
 * (core/backend.h, counters/backend.h).
 *
 * libgpuperf-cuda.so has no core of its own. It needs libgpuperf.so.0,
 * which the dynamic loader finds already loaded (a program linked with it,
 * the preload of `gpuperf record`) or loads from beside this library (its
 * rpath: $ORIGIN, the build tree and an installed lib/). So an OpenCL+CUDA
 * program, or a CUDA program that also uses the gpuperf API or markers,
 * has one record stream, one clock and one session. In the test binary and
 * the benchmark the tables come from the static library they link.
 *
 * The tables are copied by value at load time (before any entry point of
 * the library can run), so a call costs one load and an indirect call.
 * Where libgpuperf is of another build (the versions differ) the copies
 * are tables that record nothing, and one line says so.
 */
#include <stdio.h>

#include "core/backend_off.h"
#include "cudaInt.h"

static int off_register(uint32_t device_id, const gp__catalog *cat,
                        const gp__provider_ops *ops, void *prov) {
  (void)device_id, (void)cat, (void)ops, (void)prov;
  return GP_ENOTSUP;
}
static void off_announce(uint32_t device_id) {
  (void)device_id;
}
static void off_emit(const gp__catalog *cat, uint32_t device_id, uint32_t index,
                     double num, double den, uint64_t ts, uint64_t window_start,
                     uint64_t corr, uint32_t perfmon_id, uint32_t context_id) {
  (void)cat, (void)device_id, (void)index, (void)num, (void)den, (void)ts;
  (void)window_start, (void)corr, (void)perfmon_id, (void)context_id;
}
static gp__sampler *off_get(gp__sampler *s) {
  return s;
}
static void off_put(gp__sampler *s) {
  (void)s;
}
static bool off_instrument(gp__sampler *s, const char *mangled,
                           const char *demangled) {
  (void)s, (void)mangled, (void)demangled;
  return false;
}

static bool off_has_catalog(uint32_t device_id) {
  (void)device_id;
  return true; /* nothing to derive into */
}

static int off_derived(uint32_t device_id) {
  (void)device_id;
  return GP_ENOTSUP;
}

gp_backend_ops gp__cuda_core = GP__BACKEND_OFF_INIT;

gp_counters_backend_ops gp__cuda_counters = {
    .version = GP_COUNTERS_BACKEND_VERSION,
    .size = sizeof(gp_counters_backend_ops),
    .counters_register = off_register,
    .counters_announce = off_announce,
    .counter_emit = off_emit,
    .sampler_get = off_get,
    .sampler_put = off_put,
    .sampler_instrument = off_instrument,
    .device_has_catalog = off_has_catalog,
    .derived_register = off_derived,
};

__attribute__((constructor)) static void coreops_load(void) {
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  const gp_counters_backend_ops *k =
      gp_counters_backend_interface(GP_COUNTERS_BACKEND_VERSION, sizeof(*k));
  if (!c || !k) {
    fprintf(stderr, "gpuperf-cuda: libgpuperf-cuda.so and the libgpuperf it "
                    "loaded are of different builds: CUDA work is not "
                    "recorded\n");
    return;
  }
  gp__cuda_core = *c;
  gp__cuda_counters = *k;
}
