/*
 * busy.h - a device's busy time as sorted, disjoint intervals (busy.c):
 * work's [start, end) merged as it arrives, overlapping work counted once,
 * and the busy time within any range read back. Used by the derived
 * `Utilization` (derived.c) and by `gpuperf stat` for devices whose
 * catalog has no busy counter (session/stat.c).
 */
#ifndef GPUPERF_COUNTERS_BUSY_H
#define GPUPERF_COUNTERS_BUSY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gp__busy_ivl {
  uint64_t s, e;
} gp__busy_ivl;

/* Sorted, disjoint, non-adjacent intervals; zero-initialised is empty. */
typedef struct gp__busy {
  gp__busy_ivl *v;
  size_t n, cap;
} gp__busy;

/*
 * Adds [s, e) to b, merged with what it overlaps or touches (nothing when
 * e <= s). Work arriving nearly in time order costs amortised O(1), at
 * worst O(log n + moved). Returns false, with b unaltered, when out of
 * memory.
 */
bool gp__busy_add(gp__busy *b, uint64_t s, uint64_t e);

/* Returns the busy time of b within [a, z), in O(log n + intervals in
 * it). */
uint64_t gp__busy_within(const gp__busy *b, uint64_t a, uint64_t z);

/*
 * Lets b drop the intervals that end at or before z, for a reader whose
 * ranges only move forward. They are moved out once they are half of b,
 * so each costs amortised O(1); until then they stay, outside any range
 * the reader asks for.
 */
void gp__busy_drop_before(gp__busy *b, uint64_t z);

/* Frees b's intervals; b is empty again. */
void gp__busy_free(gp__busy *b);

#endif /* GPUPERF_COUNTERS_BUSY_H */
