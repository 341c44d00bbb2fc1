/*
 * stat_app.h - the workload of tests/programs/stat_app.c, shared with the
 * tests that check what `gpuperf stat` prints for it against the cost
 * model: two kernels on simulated device 0 (compute), one on device 2
 * (V3D).
 */
#ifndef GPUPERF_TESTS_STAT_APP_H
#define GPUPERF_TESTS_STAT_APP_H

#include <string.h>

#include "gpuperf/gpuperf.h"

#define STAT_APP_GRID 512
#define STAT_APP_BLOCK 256
#define STAT_APP_V3D_GRID 32
#define STAT_APP_V3D_BLOCK 64

/* Kernel 0: saxpy, launched N times; kernel 1: reduce, N / 2 + 1 times;
 * kernel 2: csd_blur on the V3D, N times. */
static inline gp_sim_kernel_desc stat_app_kernel(int which) {
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.registers_per_thread = 32;
  if (which == 0) {
    d.name = "_Z5saxpyfPfS_";
    d.demangled_name = "saxpy(float, float*, float*)";
    d.flops_per_thread = 2;
    d.bytes_per_thread = 12;
    d.read_fraction = 2.0 / 3.0;
    d.cache_locality = 0.1;
  } else if (which == 1) {
    d.name = "_Z6reducePKfPf";
    d.demangled_name = "reduce(float const*, float*)";
    d.flops_per_thread = 1;
    d.bytes_per_thread = 4;
    d.read_fraction = 1.0;
    d.cache_locality = 0.5;
  } else {
    d.name = "csd_blur";
    d.flops_per_thread = 60;
    d.bytes_per_thread = 16;
    d.read_fraction = 0.5;
    d.cache_locality = 0.3;
  }
  return d;
}

static inline int stat_app_launches(int which, int n) {
  return which == 1 ? n / 2 + 1 : n;
}

#endif /* GPUPERF_TESTS_STAT_APP_H */
