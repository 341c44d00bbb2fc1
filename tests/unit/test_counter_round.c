/*
 * test_counter_round.c - gp__counter_round(), the inline llround() that
 * sampling finishes integer counter values with: it must give llround()'s
 * value to the bit, halfway cases and the edges of its fast range included,
 * or traces would change.
 */
#include <float.h>
#include <math.h>

#include "counters/countersInt.h"
#include "harness.h"

static void check(double v) {
  long long want = llround(v);
  int64_t got = gp__counter_round(v);
  if (got != want)
    gp_test_fail(__FILE__, __LINE__, "round(%.17g) = %lld, llround gives %lld",
                 v, (long long)got, want);
}

TEST(counter_round_matches_llround) {
  static const double edge[] = {
      0.0,
      -0.0,
      0.5,
      -0.5,
      1.5,
      -1.5,
      2.5,
      -2.5,
      0.49999999999999994,
      -0.49999999999999994,
      4503599627370495.5,
      -4503599627370495.5,
      4503599627370496.0,
      9007199254740993.0,
      1e15 + 0.5,
      DBL_MIN,
      -DBL_MIN,
      9.1999999999999e18,
      -9.1999999999999e18,
      9.2e18,
      -9.2e18,
      1e19,
      -1e19,
      HUGE_VAL,
      -HUGE_VAL,
  };
  for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
    check(edge[i]);
  /* Around every halfway point near small integers, one ulp either side. */
  for (int k = -1000; k <= 1000; k++) {
    double h = k + 0.5;
    check(h);
    check(nextafter(h, HUGE_VAL));
    check(nextafter(h, -HUGE_VAL));
  }
  /* A spread of magnitudes, as byte counts and ratios come. */
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 100000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double m = (double)(x >> 11) / (double)(1ull << 53);
    double v = ldexp(m, (int)(x % 64)) * ((x >> 7) & 1 ? -1.0 : 1.0);
    check(v);
  }
}
