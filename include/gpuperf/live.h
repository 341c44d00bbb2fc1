/*
 * gpuperf/live.h - what a recording process publishes for `gpuperf top`,
 * read without stopping it: a small region of shared memory (a file of
 * gp_live_dir(), named by the pid, mapped by the process and by each
 * reader) that the process rewrites in place about once a second with,
 * over the last interval, its devices' busy time, its top kernels, its
 * queues' busy time and the latest values of the counters it samples.
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
 *   32      8     start time of the publishing process: field 22 of
 *                 /proc/<pid>/stat (clock ticks after boot), so that a
 *                 region is never taken for that of a later process
 *                 given the same pid (version 3 on; 0 before)
 *   40      24    reserved, zero
 *   64      ...   gp_live_snapshot
 *
 * A writer makes the sequence odd, writes the snapshot, makes it even
 * (a sequence lock); a reader copies the snapshot between two readings
 * of an even, unchanged sequence, and tries again otherwise, so it never
 * returns a snapshot half old and half new, and never makes the writer
 * wait.
 *
 * Times are the process's trace clock: CLOCK_BOOTTIME, unless flags says
 * it runs simulated GPUs in virtual time.
 *
 * What an interval holds. Work reaches the process as records once it has
 * completed, often later (OpenCL drivers may deliver a kernel's record
 * only when the program waits for its queue, many seconds after it ran).
 * Each piece of work counts in the interval for the part of its
 * [start, end) that falls in it, so no share exceeds 100%; a record that
 * arrives after its interval was published is not counted again in a
 * later one (late_ns says how much). Launches enqueued and not yet
 * reported are "in flight": their device's time after its last reported
 * work is taken as busy (assumed_ns), on an in-order queue the one thing
 * it can be doing. docs/gpu-linux.md ("gpuperf top") has the details.
 */
#ifndef GPUPERF_LIVE_H
#define GPUPERF_LIVE_H

#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_LIVE_VERSION 3
#define GP_LIVE_MAX_DEVICES 16
#define GP_LIVE_MAX_KERNELS 64
#define GP_LIVE_MAX_QUEUES 32
#define GP_LIVE_MAX_COUNTERS 64

/* gp_live_snapshot.flags: its times are the simulated GPUs' virtual
 * clock (the process runs them in virtual time), not CLOCK_BOOTTIME. */
#define GP_LIVE_FLAG_VIRTUAL_TIME 1u

/* A device over the interval. busy_ns + assumed_ns <= the interval. */
typedef struct gp_live_device {
  char name[48]; /* NUL-terminated (truncated) */
  /* The union of the work reported so far within the interval. */
  uint64_t busy_ns;
  /* The part of the interval after the device's last reported work while
   * launches were in flight: taken as busy, not yet reported. */
  uint64_t assumed_ns;
  /* Launches enqueued and not yet reported at the interval's end, and
   * when the oldest of them was enqueued (the trace clock; 0: none). */
  uint64_t in_flight_since_ns;
  uint32_t in_flight;
  uint32_t reserved0;
} gp_live_device;

/* A kernel (or a render stage) over the interval: the launches that
 * overlap it and their time within it. */
typedef struct gp_live_kernel {
  char device[48]; /* device name, NUL-terminated (truncated) */
  char name[96];   /* kernel name, NUL-terminated (truncated) */
  uint64_t launches;
  uint64_t gpu_ns;  /* their time within the interval, summed */
  uint64_t busy_ns; /* the union of it: at most the interval */
} gp_live_kernel;

/* A queue (stream) over the interval: the union of its work within it. */
typedef struct gp_live_queue {
  char device[48];
  char name[32]; /* "stream <n>" */
  uint64_t busy_ns;
} gp_live_queue;

/* The latest value of a counter the process samples. */
typedef struct gp_live_counter {
  char device[48];
  char name[64];
  char unit[16]; /* gp_unit_name() of its first numerator unit */
  double value;
  uint64_t time_ns; /* end of the window it is from (the trace clock) */
} gp_live_counter;

/* One snapshot: the last interval; kernels and queues busiest first. */
typedef struct gp_live_snapshot {
  uint64_t time_ns;     /* end of the interval (the trace clock) */
  uint64_t interval_ns; /* its length */
  /* Work reported during the interval that ran wholly before it (counted
   * in no interval). */
  uint64_t late_ns;
  char comm[16]; /* the process's name (/proc/<pid>/comm) */
  uint32_t num_devices, num_kernels, num_queues, num_counters;
  uint32_t kernels_left_out; /* kernels past GP_LIVE_MAX_KERNELS */
  /* Launches in flight on no device that can be told (several devices of
   * their API): in no device's figures. */
  uint32_t in_flight_unplaced;
  uint32_t flags; /* GP_LIVE_FLAG_* */
  uint32_t reserved0;
  gp_live_device devices[GP_LIVE_MAX_DEVICES];
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

/*
 * Whether the process that published the region at path still runs: 1
 * if a process with its pid and start time exists; 0 if not (its
 * process is gone, or the pid now belongs to a process started later):
 * the region is stale. A region of version 2 (no start time) is judged
 * by its pid alone. -errno if path cannot be read; GP_ECORRUPT if it is
 * not a region (as a region still being made under its temporary name
 * may not be yet).
 */
GP_EXPORT int gp_live_owner_alive(const char *path);

/*
 * Removes the stale files of the live directory dir (gp_live_dir()):
 * regions whose process is gone (gp_live_owner_alive() is 0), and files
 * named <pid> or <pid>.tmp whose pid no process has. Other files are
 * left alone. Stores how many were removed in *removed (may be NULL).
 * Returns 0, or -errno if dir cannot be read.
 */
GP_EXPORT int gp_live_remove_stale(const char *dir, uint32_t *removed);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_LIVE_H */
