/*
 * bench/stats.h - the one way every bench states a figure: the median of
 * its runs with the smallest and largest beside it, "12.3 [11.9..14.0]",
 * so that a reader sees the spread a second measurement must fall in.
 * Header-only (each bench is one program of one file).
 */
#ifndef GPUPERF_BENCH_STATS_H
#define GPUPERF_BENCH_STATS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_spread {
  double med, min, max;
} bench_spread;

static int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median, minimum and maximum of v[0..n-1] (n >= 1); v is left as
 * it was (sorted in a copy). */
static inline bench_spread bench_spread_of(const double *v, int n) {
  bench_spread s = {0, 0, 0};
  if (n < 1)
    return s;
  double *c = malloc((size_t)n * sizeof(double));
  if (!c)
    return s;
  memcpy(c, v, (size_t)n * sizeof(double));
  qsort(c, (size_t)n, sizeof(double), bench_cmp_double);
  s.med = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  s.min = c[0];
  s.max = c[n - 1];
  free(c);
  return s;
}

/* Writes "MED [MIN..MAX]" of v[0..n-1] with `prec` decimals into out;
 * returns out (for use inside printf arguments). */
static inline const char *bench_fmt(char *out, size_t cap, const double *v,
                                    int n, int prec) {
  bench_spread s = bench_spread_of(v, n);
  snprintf(out, cap, "%.*f [%.*f..%.*f]", prec, s.med, prec, s.min, prec,
           s.max);
  return out;
}

/* A buffer for one bench_fmt() result inside a printf's arguments. */
#define BENCH_FMT(v, n, prec) bench_fmt((char[64]){0}, 64, (v), (n), (prec))

#endif /* GPUPERF_BENCH_STATS_H */
