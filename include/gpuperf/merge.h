/*
 * gpuperf/merge.h - many machines on one timeline: merging the traces of
 * several machines into one multi-machine Perfetto trace, and re-timing a
 * trace (the simulated nodes of `gpuperf demo --machines`).
 *
 * Each input is the trace of one machine, as `gpuperf record` or `demo`
 * write it (its host identity: SystemInfo and the "gpuperf host" event;
 * its clock snapshots pairing BOOTTIME with REALTIME). The output is one
 * trace in which every packet of input k carries TracePacket.machine_id
 * (a distinct non-zero id per input), timestamps of input k are moved onto
 * the BOOTTIME clock of input 0 through the REALTIME snapshots of both,
 * and sequences, track uuids and event ids are renumbered so that no two
 * machines share one. docs/merge.md gives the rules and the arithmetic.
 */
#ifndef GPUPERF_MERGE_H
#define GPUPERF_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most inputs one merge takes. */
#define GP_MERGE_MAX_INPUTS 32767

typedef struct gp_merge_options {
  uint32_t size; /* sizeof(gp_merge_options): lets the struct grow */
  /* How far apart two machines' REALTIME clocks may be (NTP's accuracy),
   * in ns; 0 = 1 ms. Part of the stated uncertainty without sync_on. */
  uint64_t realtime_error_ns;
  /* Name of a slice (a collective or barrier range) present the same
   * number of times on every machine, whose ends happened at the same
   * moment everywhere: the alignment is refined on them. NULL = none. */
  const char *sync_on;
  /* Non-zero: apply sync_on's correction even where it moves a machine
   * further than its REALTIME uncertainty allows (which is refused
   * otherwise). Read only if size covers it. */
  uint32_t force_sync;
  uint32_t reserved; /* must be zero */
} gp_merge_options;

/* What the merge did with one input. */
typedef struct gp_merge_machine {
  uint32_t machine_id;     /* TracePacket.machine_id written */
  char hostname[128];      /* from the input's host identity, or "" */
  char boot_id[48];        /* likewise */
  int64_t offset_ns;       /* output ts - input ts at the input's first ts */
  double drift_ppm;        /* rate of its clock against input 0's, minus 1 */
  uint64_t uncertainty_ns; /* bound on the residual misalignment */
  uint32_t snapshots;      /* REALTIME snapshots used */
  uint32_t sync_points;    /* sync_on ends used (0: REALTIME only) */
  uint64_t packets;        /* packets copied */
  uint64_t first_ts;       /* first and last timestamps (input clock) */
  uint64_t last_ts;
} gp_merge_machine;

/*
 * Merges inputs[0..n) into output. Reads every input twice, streaming
 * (memory grows with the number of snapshots and sync points, not with
 * the trace). machines, if not NULL, receives n entries. On failure a
 * message naming the file (and offset) at fault is written into err
 * (errsize bytes), output may be partly written, and a negative GP_E*
 * code is returned: GP_EINVAL (bad arguments, or an input that already
 * carries machine ids), GP_ECORRUPT (an input is
 * not a trace), GP_ENOENT (an input has no REALTIME snapshot, or sync_on
 * is missing on a machine), GP_ERANGE (sync_on counts differ, sync_on's
 * correction of a machine exceeds its REALTIME uncertainty without
 * force_sync, or a time would fall before 0), -errno for I/O.
 */
GP_EXPORT int gp_trace_merge(const char *const *inputs, size_t n,
                             const char *output, const gp_merge_options *opts,
                             gp_merge_machine *machines, char *err,
                             size_t errsize);

/*
 * Copies input to output with BOOTTIME (and MONOTONIC) timestamps t
 * rewritten to t + offset_ns + drift * (t - t0), t0 being the first
 * timestamp, and REALTIME clock values moved by realtime_offset_ns:
 * what the same trace would be on a machine whose clocks differ that
 * way. Everything else is copied as is. Errors as gp_trace_merge().
 */
GP_EXPORT int gp_trace_retime(const char *input, const char *output,
                              int64_t offset_ns, double drift,
                              int64_t realtime_offset_ns, char *err,
                              size_t errsize);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_MERGE_H */
