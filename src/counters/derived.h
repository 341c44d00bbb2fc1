/*
 * derived.h - counters derived from the activity timeline for devices
 * without hardware counters (derived.c): `Utilization` per device and per
 * hardware queue.
 */
#ifndef GPUPERF_COUNTERS_DERIVED_H
#define GPUPERF_COUNTERS_DERIVED_H

#include <stdint.h>

#include "counters/countersInt.h"

/* The sampling periods the derived counters take. */
#define GP__DERIVED_MIN_PERIOD_NS 100000ull      /* 100 us */
#define GP__DERIVED_MAX_PERIOD_NS 60000000000ull /* 60 s */

/*
 * Publishes the derived catalog for a registered device that has none and
 * announces it. GP_ENODEV for an unknown device, GP_EEXIST if it has a
 * catalog, GP_ENOMEM.
 */
int gp__derived_register(uint32_t device_id);

/*
 * From now on, every device of a backend that publishes no counters
 * (OpenCL, OpenGL, HIP) gets the derived catalog when it is
 * registered; those registered already get it now. Idempotent. Sessions
 * and the stat hook call it before they look for catalogs.
 */
void gp__derived_enable(void);

/*
 * The catalog entry of such an attached `Utilization` counter (id_ and
 * block_ in its catalog; what_: what the device's busy time is made of,
 * "command buffers", "frames"), an initializer for a gp__counter_def.
 */
#define GP__DERIVED_UTILIZATION_DEF(id_, block_, what_)                        \
  {                                                                            \
    .info = {.id = (id_),                                                      \
             .name = "Utilization",                                            \
             .description = "Derived from the activity timeline: share of "    \
                            "each sampling window during which the device "    \
                            "ran " what_,                                      \
             .category = "derived",                                            \
             .type = GP_COUNTER_TYPE_PERCENT,                                  \
             .block_id = (block_),                                             \
             .num_numerator_units = 1,                                         \
             .numerator_units = {GP_UNIT_PERCENT},                             \
             .num_groups = 1,                                                  \
             .groups = {GP_COUNTER_GROUP_SYSTEM},                              \
             .peak_value = 100.0,                                              \
             .select_by_default = true},                                       \
    .combine = GP__RATIO, .sampled = GP__SAMPLED_PERIODIC                      \
  }

/*
 * For a device whose backend publishes a catalog of its own that also
 * holds a `Utilization` counter at `index` (ratio of percent, periodic):
 * derived.c computes it from the device's timeline (kernels, copies,
 * fills and whole command buffers), with no catalog of its own. cat must
 * outlive the process's sampling (a static catalog). GP_EEXIST if the
 * device already has derived counters, GP_EINVAL, GP_ENOMEM.
 */
int gp__derived_attach(uint32_t device_id, const gp__catalog *cat,
                       uint32_t index);

/*
 * The provider hooks of an attached device, for its provider to call from
 * its own sampling_start/stop with a periodic sampler (whose indices are
 * those of the attached catalog). Start returns 0, GP_EBUSY, GP_ENOSPC,
 * or GP_ENODEV if the device is not attached.
 */
int gp__derived_sampling_start(uint32_t device_id, gp__sampler *s);
void gp__derived_sampling_stop(uint32_t device_id, gp__sampler *s);

/* Busy nanoseconds that reached the observer after their window had been
 * emitted (so could not be placed in it; counted in no window). */
uint64_t gp__derived_late_ns(void);

/*
 * The provisional busy share, in percent (0 to 100), of device_id over
 * [from, to) of the trace clock: the union of the work the observer has
 * seen so far (kernels, copies, fills, whole command buffers) within the
 * range, divided by its length. queue < 0: any queue of the device; else
 * that queue (its index among the device's queues). For the device, work
 * the backend has in flight (its frontier at the last flush was in the
 * past) counts as busy from the later of its enqueue and the end of the
 * last work seen, up to `to`: an estimate, as a driver that tells of a
 * kernel only once it ended would otherwise read idle while it runs.
 * Later records may still change it, so live views (HUD, top) show it
 * while traces hold the final values (docs/gpu-linux.md, "When values
 * are final"). Returns 0; GP_ENODEV
 * when the device has no derived counters or none of them is being
 * sampled; GP_EINVAL when to <= from or pct is NULL; GP_ERANGE when the
 * range starts before the work still kept (the last
 * GP__DERIVED_KEEP_NS before the first window not yet final).
 */
int gp__derived_provisional(uint32_t device_id, int queue, uint64_t from,
                            uint64_t to, double *pct);

/* How much work before the first window not yet final stays known for
 * gp__derived_provisional(). */
#define GP__DERIVED_KEEP_NS 10000000000ull

#endif /* GPUPERF_COUNTERS_DERIVED_H */
