/*
 * derived.h - counters derived from the activity timeline for devices
 * without hardware counters (derived.c): `Utilization` per device and per
 * hardware queue.
 */
#ifndef GPUPERF_COUNTERS_DERIVED_H
#define GPUPERF_COUNTERS_DERIVED_H

#include <stdint.h>

/* How long after its end a sampling window is taken as final while
 * sampling runs (stop emits the rest at once). */
#define GP__DERIVED_LAG_NS 2000000000ull

/*
 * Publishes the derived catalog for a registered device that has none and
 * announces it. GP_ENODEV for an unknown device, GP_EEXIST if it has a
 * catalog, GP_ENOMEM.
 */
int gp__derived_register(uint32_t device_id);

/*
 * From now on, every device of a backend that publishes no counters
 * (OpenCL, Vulkan, OpenGL, HIP) gets the derived catalog when it is
 * registered; those registered already get it now. Idempotent. Sessions
 * and the stat hook call it before they look for catalogs.
 */
void gp__derived_enable(void);

/* Busy nanoseconds that reached the observer after their window had been
 * emitted (so were counted in a later window). */
uint64_t gp__derived_late_ns(void);

#endif /* GPUPERF_COUNTERS_DERIVED_H */
