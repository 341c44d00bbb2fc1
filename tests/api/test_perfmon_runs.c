/*
 * test_perfmon_runs.c - how the simulator counts a perfmon's repeated
 * jobs: n adds of one value done at once (gp__sim_add_n) must give to the
 * bit what adding it n times, one rounded add after the other, gives.
 */
#include <float.h>
#include <math.h>

#include "backend/sim/simInt.h"
#include "harness.h"
#include "testutil.h"

static uint64_t bits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof(u));
  return u;
}

static double one_by_one(double s, double x, uint64_t n) {
  volatile double v = s; /* one rounded add at a time */
  for (uint64_t i = 0; i < n; i++)
    v = v + x;
  return v;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

/* A value of the kinds counter sums meet, and some they never do. */
static double pick(void) {
  uint64_t b;
  double v;
  switch (rnd() % 8) {
  case 0:
    return (double)(rnd() % 5000); /* integers */
  case 1:
    return (double)(rnd() % 100000) * 1.41; /* cycles at 1.41 GHz */
  case 2:
    return ldexp((double)(rnd() | 1), -(int)(rnd() % 90)); /* 53 bits */
  case 3:
    b = rnd() % 100000; /* subnormal */
    memcpy(&v, &b, sizeof(v));
    return v;
  case 4:
    return ldexp((double)(2 * (rnd() % 64) + 1), -(int)(rnd() % 8 + 1));
  case 5:
    return 0.0;
  default:
    return (double)rnd() / 7.0;
  }
}

TEST(perfmon_add_n_matches_one_by_one) {
  for (int i = 0; i < 20000; i++) {
    double s = rnd() % 4 ? pick() : 0.0, x = pick();
    uint64_t n = rnd() % 10 ? rnd() % 300 : rnd() % 5000;
    ASSERT_EQ(bits(gp__sim_add_n(s, x, n)), bits(one_by_one(s, x, n)));
  }
  /* Ties: x an odd multiple of half the ulp of s, so that each add rounds
   * to even; in every binade. */
  for (int e = -1070; e < 1000; e += 13) {
    double s = ldexp((double)((1ull << 52) | (rnd() >> 12)), e);
    double x = ldexp((double)(2 * (rnd() % 1000) + 1), e - 1);
    uint64_t n = rnd() % 3000;
    ASSERT_EQ(bits(gp__sim_add_n(s, x, n)), bits(one_by_one(s, x, n)));
  }
  /* Zeros, infinities, NaN, negatives, the top of the range. */
  const double sp[] = {0.0,   -0.0, INFINITY,  -INFINITY, NAN,
                       -3.25, 1.0,  0x1p-1074, DBL_MAX,   0x1p1023};
  for (size_t i = 0; i < GP_ARRAY_SIZE(sp); i++)
    for (size_t j = 0; j < GP_ARRAY_SIZE(sp); j++)
      for (uint64_t n = 0; n < 4; n++) {
        double a = gp__sim_add_n(sp[i], sp[j], n);
        double b = one_by_one(sp[i], sp[j], n);
        ASSERT(bits(a) == bits(b) || (isnan(a) && isnan(b)));
      }
}
