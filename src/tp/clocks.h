/*
 * clocks.h - converting packet timestamps to the trace clock.
 *
 * ClockSnapshot packets say "at this instant, clock A read a and clock B
 * read b". Each snapshot gives, for every ordered pair of its clocks, a
 * point (a, b) of the series of that pair. A timestamp t of clock A is
 * converted to clock B with the point whose a is the greatest <= t (the
 * first point if t precedes them all): b + (t - a). Clocks that never
 * appear together are linked through others: the path is found by a
 * breadth-first search over pairs, at most four hops, and cached.
 *
 * Memory stays proportional to the snapshots' size: their readings are
 * kept once, in arrival order; a pair is only an edge of the graph until
 * a conversion path uses it, and only then are its points gathered into
 * a series, which later snapshots extend. (A snapshot of n clocks has
 * n(n-1) pairs: giving each its points would cost ~60 times the input
 * for snapshots of 64 clocks.)
 *
 * Clock ids 64..127 are sequence-scoped: they mean a different clock on
 * every packet sequence, so their key includes the sequence id. Clocks may
 * count in units of unit_multiplier_ns and may be incremental (a packet
 * carries the delta to the previous value of that clock on its sequence).
 *
 * The trace clock is BOOTTIME unless a snapshot names another one with
 * primary_trace_clock.
 */
#ifndef GPUPERF_TP_CLOCKS_H
#define GPUPERF_TP_CLOCKS_H

#include <stdbool.h>
#include <stdint.h>

#include "tp/util.h"

#define GP_TP_CLOCK_BOOTTIME 6
#define GP_TP_CLOCK_TRACE_FILE 11

typedef struct gp__tp_clock_point {
  int64_t a, b;
} gp__tp_clock_point;

/* The most sorted runs of one series: sizes at least halve from one run
 * to the next, so 48 hold 2^48 points. */
#define GP_TP_CLOCK_RUNS 48

/* The points of one clock pair, once a conversion path uses it: in
 * sorted runs (by a; points of equal a in the order they came), oldest
 * run first, each at least twice the size of the next. Snapshots in time
 * order extend the last run; one out of order starts a run, and runs
 * merge as in a merge sort, so any order of n snapshots costs
 * O(n log n). */
typedef struct gp__tp_clock_series {
  GP_TP_VEC(gp__tp_clock_point) pts;
  bool descending; /* one run, kept in strictly descending a (snapshots
                      that came in reverse time order), reversed into an
                      ordinary run when another order shows up */
  uint32_t nruns;
  size_t run[GP_TP_CLOCK_RUNS]; /* start of each run in pts */
} gp__tp_clock_series;

/* A directed pair of clocks seen in one snapshot (indexes in info). */
typedef struct gp__tp_clock_edge {
  uint32_t from, to;
  uint32_t series; /* index in series, or GP_TP_NONE while no path uses
                      the edge */
} gp__tp_clock_edge;

typedef struct gp__tp_clock_info {
  uint64_t key;
  int64_t unit; /* unit_multiplier_ns */
  bool incremental;
  int64_t last; /* incremental clocks: last absolute value, in units */
  GP_TP_VEC(uint32_t) out;   /* edges leaving this clock, in creation order */
  GP_TP_VEC(uint32_t) live;  /* those of them that have a series */
  GP_TP_VEC(uint32_t) snaps; /* snapshots that read this clock, in order */
} gp__tp_clock_info;

typedef struct gp__tp_clocks {
  uint64_t trace_clock;
  bool primary_set;
  GP_TP_VEC(gp__tp_clock_info) info;
  gp__tp_map info_by_key; /* key -> index in info */
  /* Every snapshot's readings, one snapshot after another: clock (index
   * in info) and value in ns; snapshot s is [snap.v[s], snap.v[s + 1]). */
  GP_TP_VEC(uint32_t) rd_clock;
  GP_TP_VEC(int64_t) rd_ns;
  GP_TP_VEC(uint32_t) snap;
  gp__tp_map sets; /* hash of a snapshot's clock list -> first snapshot
                      with it: a list seen before adds no edges */
  GP_TP_VEC(gp__tp_clock_edge) edges;
  gp__tp_map2 edge_by_pair; /* (from, to) -> index in edges */
  GP_TP_VEC(gp__tp_clock_series) series;
  GP_TP_VEC(gp__tp_clock_point) scratch; /* merging runs */
  /* Path cache: source key -> index in paths; cleared on new edges. */
  gp__tp_map path_by_src;
  GP_TP_VEC(struct gp__tp_clock_path {
    int len;
    uint32_t edge[4];
  })
  paths;
} gp__tp_clocks;

/* The key of clock_id as seen by a packet of sequence seq_id. */
static inline uint64_t gp__tp_clock_key(uint32_t clock_id, uint32_t seq_id) {
  if (clock_id >= 64 && clock_id < 128)
    return (uint64_t)seq_id << 32 | clock_id;
  return clock_id;
}

void gp__tp_clocks_init(gp__tp_clocks *c);
void gp__tp_clocks_fini(gp__tp_clocks *c);

/* One clock of a snapshot, as decoded from ClockSnapshot.Clock. */
typedef struct gp__tp_snap_clock {
  uint64_t key;
  int64_t ts; /* in the clock's units */
  int64_t unit;
  bool incremental;
} gp__tp_snap_clock;

/*
 * Adds a snapshot of n clocks. primary (0 = absent) sets the trace clock.
 * Returns 0, GP_EINVAL for an unusable snapshot (duplicate clock, n < 1;
 * the caller counts it) or GP_ENOMEM.
 */
int gp__tp_clocks_add_snapshot(gp__tp_clocks *c, const gp__tp_snap_clock *clk,
                               uint32_t n, uint32_t primary);

/*
 * Turns a packet's raw timestamp of clock `key` into nanoseconds of that
 * clock: applies the unit multiplier and, for incremental clocks, adds it
 * to the clock's last value (advancing it). Unknown clocks pass ts through.
 */
int64_t gp__tp_clocks_abs(gp__tp_clocks *c, uint64_t key, int64_t ts);

/*
 * Converts ns (from gp__tp_clocks_abs) of clock `key` to the trace clock
 * into *out. Returns 0, or GP_ENOENT if no path exists (yet).
 */
int gp__tp_clocks_convert(gp__tp_clocks *c, uint64_t key, int64_t ns,
                          int64_t *out);

#endif /* GPUPERF_TP_CLOCKS_H */
