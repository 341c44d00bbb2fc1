/*
 * v3d_double.h - the state of the V3D render-node test double
 * (libv3d-double.so, tests/v3d/README.md), shared by every process that
 * preloads it through one file mapped MAP_SHARED ($V3D_DOUBLE_STATE): one
 * simulated GPU, as the kernel's driver is one for every process. Tests
 * read it to know what the double counted.
 *
 * Layout (all fields native-endian, one machine):
 *
 *   offset  size  field
 *   0       4     magic V3DD_MAGIC
 *   4       4     global: perfmon slot + 1 of the global perfmon, 0 none
 *   8       4     active: perfmon slot + 1 of the running per-job
 *                 perfmon (the kernel's perfmon_state.active), 0 none
 *   12      4     reserved
 *   16      8     jobs: jobs run
 *   24      8     refused_eagain: jobs refused, own perfmon while global
 *   32      8     refused_ebusy: SET_GLOBAL refused
 *   40     ...    hw[V3DD_COUNTERS]: events the jobs made, per counter
 *           ...    global_counted[V3DD_COUNTERS]: of those, what went
 *                 into global perfmons
 *           ...    files[V3DD_FILES], perfmons[V3DD_PERFMONS]
 */
#ifndef GPUPERF_TESTS_V3D_DOUBLE_H
#define GPUPERF_TESTS_V3D_DOUBLE_H

#include <stdint.h>

#define V3DD_MAGIC 0x56334444u /* "V3DD" */
#define V3DD_COUNTERS 93
#define V3DD_FILES 64
#define V3DD_PERFMONS 256

typedef struct v3dd_file {
  int32_t pid; /* 0: free */
  uint32_t next_id;
} v3dd_file;

typedef struct v3dd_perfmon {
  uint32_t file; /* file slot + 1; 0: free */
  uint32_t id;   /* per file, from 1 */
  uint32_t ncounters;
  uint8_t counters[32];
  uint32_t pad;
  uint64_t values[32];
} v3dd_perfmon;

typedef struct v3dd_state {
  uint32_t magic;
  uint32_t global;
  uint32_t active;
  uint32_t reserved;
  uint64_t jobs;
  uint64_t refused_eagain;
  uint64_t refused_ebusy;
  uint64_t hw[V3DD_COUNTERS];
  uint64_t global_counted[V3DD_COUNTERS];
  v3dd_file files[V3DD_FILES];
  v3dd_perfmon perfmons[V3DD_PERFMONS];
} v3dd_state;

/* What job number j (from 1) adds to hardware counter c: a fixed,
 * uneven amount, so that a wrong counter, a lost window or a window
 * counted twice shows. */
static inline uint64_t v3dd_job_amount(uint64_t j, uint32_t c) {
  return 1 + (c * 31u + j * 17u) % 97u;
}

#endif /* GPUPERF_TESTS_V3D_DOUBLE_H */
