/*
 * gpuperf/live.h - what a recording process publishes for `gpuperf top`,
 * read without stopping it: a small region of shared memory (a file of
 * gp_live_dir(), named by the pid, mapped by the process and by each
 * reader) that the process rewrites in place about once a second with its
 * top kernels, its queues' busy time and the latest values of the
 * counters it samples over the last interval.
 *
 * The region (all integers little-endian as the machine writes them; a
 * reader checks magic, version and sizes before anything else):
 *
 *   offset  size  field
 *   0       8     magic "gpuperfL"
 *   8       4     version (GP_LIVE_VERSION)
 *   12      4     header size (64)
 *   16      4     snapshot size (sizeof(gp_live_snapshot))
 *   20      4     pid of the publishing process
 *   24      8     sequence: odd while a snapshot is being written
 *   32      32    reserved, zero
 *   64      ...   gp_live_snapshot
 *
 * A writer makes the sequence odd, writes the snapshot, makes it even
 * (a sequence lock); a reader copies the snapshot between two readings
 * of an even, unchanged sequence, and tries again otherwise, so it never
 * returns a snapshot half old and half new, and never makes the writer
 * wait.
 */
#ifndef GPUPERF_LIVE_H
#define GPUPERF_LIVE_H

#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_LIVE_VERSION 2
#define GP_LIVE_MAX_KERNELS 64
#define GP_LIVE_MAX_QUEUES 32
#define GP_LIVE_MAX_COUNTERS 64

/* A kernel over the interval: its launches and GPU time. */
typedef struct gp_live_kernel {
  char device[48]; /* device name, NUL-terminated (truncated) */
  char name[96];   /* kernel name, NUL-terminated (truncated) */
  uint64_t launches;
  uint64_t gpu_ns;
} gp_live_kernel;

/* A queue (stream) over the interval: the time it had work running. */
typedef struct gp_live_queue {
  char device[48];
  char name[32]; /* "stream <n>" */
  uint64_t busy_ns;
} gp_live_queue;

/* The latest value of a counter the process samples. */
typedef struct gp_live_counter {
  char device[48];
  char name[64];
  char unit[16];
  double value;
} gp_live_counter;

/* One snapshot: the last interval, its busiest kernels and queues first. */
typedef struct gp_live_snapshot {
  uint64_t time_ns;     /* end of the interval (CLOCK_BOOTTIME) */
  uint64_t interval_ns; /* its length */
  char comm[16];        /* the process's name (/proc/<pid>/comm) */
  uint32_t num_kernels, num_queues, num_counters;
  uint32_t kernels_left_out; /* kernels past GP_LIVE_MAX_KERNELS */
  gp_live_kernel kernels[GP_LIVE_MAX_KERNELS];
  gp_live_queue queues[GP_LIVE_MAX_QUEUES];
  gp_live_counter counters[GP_LIVE_MAX_COUNTERS];
} gp_live_snapshot;

/*
 * Reads the latest whole snapshot of the region at path (a file of
 * gp_live_dir()) into *out and the publisher's pid into *pid (may be
 * NULL), mapping the region read-only for the call. Returns 0;
 * -errno if the file cannot be opened or mapped; GP_ECORRUPT if it is
 * not a region of this version (wrong magic, version or sizes); GP_EBUSY
 * if the writer was always mid-update over many tries. *out is unchanged
 * on failure.
 */
GP_EXPORT int gp_live_read(const char *path, gp_live_snapshot *out,
                           uint32_t *pid);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_LIVE_H */
