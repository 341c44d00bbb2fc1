/*
 * gpuperf/clock.h - the trace clock and the mapping of device clocks onto it.
 *
 * Every timestamp gpuperf hands out is nanoseconds on the trace clock,
 * CLOCK_BOOTTIME, Perfetto's default. A device that keeps its own time (a
 * GPU's timestamp counter, the simulator's device clock) registers a clock;
 * pairs of simultaneous readings (snapshots) then map device time onto the
 * trace clock, piecewise linearly between snapshots. Nothing is guessed: a
 * device clock with no snapshot cannot be converted.
 *
 * Clock ids follow Perfetto: the builtin ids (REALTIME 1, MONOTONIC 3,
 * BOOTTIME 6) name the host clocks; registered device clocks get ids from
 * GP_CLOCK_FIRST_DEVICE (128, Perfetto's first global custom clock) upward.
 */
#ifndef GPUPERF_CLOCK_H
#define GPUPERF_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_CLOCK_REALTIME 1u
#define GP_CLOCK_MONOTONIC 3u
#define GP_CLOCK_BOOTTIME 6u
#define GP_CLOCK_FIRST_DEVICE 128u
#define GP_CLOCK_MAX_DEVICE_CLOCKS 64u

/*
 * Returns the trace clock now, in nanoseconds (CLOCK_BOOTTIME). It is read
 * from the CPU's invariant timestamp counter where there is one, calibrated
 * against CLOCK_BOOTTIME and kept within a few microseconds of it; else
 * from clock_gettime(). Monotonic on every thread, callable from any thread.
 */
GP_EXPORT uint64_t gp_get_timestamp(void);

/* One snapshot: the device clock and the trace clock read together. */
typedef struct gp_clock_snapshot {
  uint64_t device_ts; /* device clock, in its own ns */
  uint64_t trace_ts;  /* trace clock, ns */
  uint64_t error_ns;  /* half the width of the window the pair was read in */
} gp_clock_snapshot;

/* Reads a device clock now, in nanoseconds of that clock. */
typedef uint64_t (*gp_clock_read_fn)(void *user);

/*
 * Registers a device clock. name is copied; read and user are kept until
 * gp_clock_unregister() (read may be NULL for a clock that only receives
 * snapshots through gp_clock_add_snapshot()). Stores the new id in
 * *clock_id. Returns GP_EINVAL for NULL name or clock_id, GP_ENOSPC when
 * GP_CLOCK_MAX_DEVICE_CLOCKS are registered.
 */
GP_EXPORT int gp_clock_register(const char *name, gp_clock_read_fn read,
                                void *user, uint32_t *clock_id);

/* Forgets a device clock and its snapshots. GP_ENOENT if unknown. */
GP_EXPORT int gp_clock_unregister(uint32_t clock_id);

/*
 * Takes a snapshot of a registered clock that has a read function: reads
 * the trace clock before and after the device clock, keeps the midpoint and
 * half the window as the error, and records the pair. Stores it in *out if
 * out is not NULL. GP_ENOENT if unknown, GP_ENOTSUP if it has no read fn.
 */
GP_EXPORT int gp_clock_snapshot_take(uint32_t clock_id, gp_clock_snapshot *out);

/*
 * Records a snapshot measured by the caller (for instance with
 * clGetDeviceAndHostTimer or cuptiGetTimestamp). Snapshots must come in
 * increasing order of both clocks: GP_ERANGE otherwise (nothing recorded).
 */
GP_EXPORT int gp_clock_add_snapshot(uint32_t clock_id,
                                    const gp_clock_snapshot *snap);

/*
 * Converts a device timestamp to the trace clock using the snapshots:
 * linear between the two that bracket it, the offset of the nearest one
 * outside them (rate of the last two beyond the last). GP_ENOENT for an
 * unknown clock, GP_EAGAIN if it has no snapshot yet.
 */
GP_EXPORT int gp_clock_to_trace(uint32_t clock_id, uint64_t device_ts,
                                uint64_t *trace_ts);

/*
 * Copies up to cap of the most recent snapshots of clock_id, oldest first,
 * into out and stores their number in *n. The clock's name is stored in
 * *name (valid until unregistered) if name is not NULL.
 */
GP_EXPORT int gp_clock_get_snapshots(uint32_t clock_id, gp_clock_snapshot *out,
                                     size_t cap, size_t *n, const char **name);

/*
 * Reads a host clock (GP_CLOCK_REALTIME, MONOTONIC or BOOTTIME) directly
 * from the kernel. Returns 0 for any other id.
 */
GP_EXPORT uint64_t gp_clock_read_host(uint32_t clock_id);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_CLOCK_H */
