/*
 * v3d.h - the Broadcom V3D counter tables (v3dtables.c), shared by the
 * simulated V3D (src/backend/sim) and the real one through the kernel's
 * perfmon ioctls (src/backend/linux/v3d.c), so that a counter has the same
 * name, category and groups whichever of them counts it.
 */
#ifndef GPUPERF_COUNTERS_V3D_H
#define GPUPERF_COUNTERS_V3D_H

#include "countersInt.h"

#define GP__V3D42_NUM 87
#define GP__V3D71_NUM 93
#define GP__V3D_NUM_GROUPS 18

/* One counter as the kernel describes it (DRM_V3D_PERFMON_GET_COUNTER). */
typedef struct gp__v3d_desc {
  const char *category, *name, *description;
} gp__v3d_desc;

/* V3D 4.2 (Raspberry Pi 4), hardware index order, ids index + 1. */
extern const gp__counter_def gp__v3d42_counters[GP__V3D42_NUM];

/* V3D 7.1 (Raspberry Pi 5), hardware index order. */
extern const gp__v3d_desc gp__v3d71_counters[GP__V3D71_NUM];

/* The groups V3D counters belong to: Perfetto's fixed ones, then one
 * custom group per category. */
extern const gp_counter_group_info gp__v3d_groups[GP__V3D_NUM_GROUPS];

/*
 * Fills *out for hardware counter `index` described by d: id index + 1,
 * type INT64, summed; the unit, groups and default selection of the 4.2
 * counter of the same name where there is one, else the groups of its
 * category (an unknown category gets SYSTEM alone). d's strings are
 * borrowed: they must live as long as *out. Never selected by default
 * when select_default is false.
 */
void gp__v3d_counter_fill(uint32_t index, const gp__v3d_desc *d,
                          bool select_default, gp__counter_def *out);

#endif /* GPUPERF_COUNTERS_V3D_H */
