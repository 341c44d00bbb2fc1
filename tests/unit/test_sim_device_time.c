/*
 * test_sim_device_time.c - gp__sim_device_time(), host time to a simulated
 * device's clock: its 64-bit path must give what the 128-bit formula
 * gives, at the edges where it hands over to it too, or traces change.
 */
#include "backend/sim/simInt.h"
#include "harness.h"

/* host + offset + (host - epoch) * ppb / 10^9, clamped at 0, in 128 bits. */
static uint64_t reference(int64_t offset, uint64_t epoch, int64_t ppb,
                          uint64_t host) {
  __int128 rel = (__int128)host - (__int128)epoch;
  __int128 v = (__int128)host + offset + rel * ppb / 1000000000;
  return v < 0 ? 0 : (uint64_t)v;
}

TEST(sim_device_time_matches_128_bit_formula) {
  static const int64_t ppbs[] = {
      0,        37000,   -21000,        1,
      -1,       4194303, -4194303,      4194304,
      -4194304, 1000000, -1000000000ll, 1000000000000ll};
  static const int64_t offsets[] = {
      0,         3000000000000ll, -3000000000000ll, INT64_MAX,
      INT64_MIN, INT64_MAX - 5,   INT64_MIN / 2};
  static const uint64_t epochs[] = {0,
                                    1000,
                                    (uint64_t)1 << 40,
                                    ((uint64_t)1 << 62) - 1,
                                    (uint64_t)1 << 62,
                                    UINT64_MAX};
  static const int64_t rels[] = {0,
                                 1,
                                 -1,
                                 999999999,
                                 ((int64_t)1 << 40) - 1,
                                 (int64_t)1 << 40,
                                 -((int64_t)1 << 40) + 1,
                                 -((int64_t)1 << 40),
                                 (int64_t)1 << 50};
  sim_model m;
  sim_device d;
  memset(&m, 0, sizeof(m));
  memset(&d, 0, sizeof(d));
  d.m = &m;
  for (size_t a = 0; a < GP_ARRAY_SIZE(ppbs); a++)
    for (size_t b = 0; b < GP_ARRAY_SIZE(offsets); b++)
      for (size_t c = 0; c < GP_ARRAY_SIZE(epochs); c++)
        for (size_t e = 0; e < GP_ARRAY_SIZE(rels); e++) {
          m.clock_drift_ppb = ppbs[a];
          d.clock_offset = offsets[b];
          d.clock_epoch = epochs[c];
          uint64_t host = epochs[c] + (uint64_t)rels[e];
          uint64_t want = reference(offsets[b], epochs[c], ppbs[a], host);
          ASSERT_UEQ(gp__sim_device_time(&d, host), want);
        }
}
