/*
 * busy.c - see busy.h. Intervals are found by bisection: work arrives
 * nearly in time order, so a new one usually lands at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "busy.h"

/* The first interval of b whose end is after t (or at t, with touch). */
static size_t first_ending_after(const gp__busy *b, uint64_t t, bool touch) {
  size_t lo = 0, hi = b->n;
  if (b->n && (touch ? b->v[b->n - 1].e < t : b->v[b->n - 1].e <= t))
    return b->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (touch ? b->v[mid].e < t : b->v[mid].e <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* See busy.h. */
bool gp__busy_add(gp__busy *b, uint64_t s, uint64_t e) {
  if (e <= s)
    return true;
  size_t lo = first_ending_after(b, s, true); /* may touch or overlap */
  size_t j = lo;                              /* past the last merged */
  while (j < b->n && b->v[j].s <= e)
    j++;
  if (j > lo) { /* merge lo .. j-1 into one */
    if (b->v[lo].s < s)
      s = b->v[lo].s;
    if (b->v[j - 1].e > e)
      e = b->v[j - 1].e;
    b->v[lo] = (gp__busy_ivl){s, e};
    memmove(&b->v[lo + 1], &b->v[j], (b->n - j) * sizeof(gp__busy_ivl));
    b->n -= j - lo - 1;
    return true;
  }
  if (b->n == b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 64;
    gp__busy_ivl *nv = realloc(b->v, ncap * sizeof(*nv));
    if (!nv)
      return false;
    b->v = nv;
    b->cap = ncap;
  }
  memmove(&b->v[lo + 1], &b->v[lo], (b->n - lo) * sizeof(gp__busy_ivl));
  b->v[lo] = (gp__busy_ivl){s, e};
  b->n++;
  return true;
}

/* See busy.h. */
uint64_t gp__busy_within(const gp__busy *b, uint64_t a, uint64_t z) {
  uint64_t t = 0;
  for (size_t i = first_ending_after(b, a, false); i < b->n && b->v[i].s < z;
       i++) {
    uint64_t s = b->v[i].s > a ? b->v[i].s : a;
    uint64_t e = b->v[i].e < z ? b->v[i].e : z;
    if (e > s)
      t += e - s;
  }
  return t;
}

/* See busy.h. */
void gp__busy_drop_before(gp__busy *b, uint64_t z) {
  size_t k = first_ending_after(b, z, false);
  if (k > 0 && k >= b->n / 2) {
    memmove(b->v, b->v + k, (b->n - k) * sizeof(gp__busy_ivl));
    b->n -= k;
  }
}

/* See busy.h. */
void gp__busy_free(gp__busy *b) {
  free(b->v);
  memset(b, 0, sizeof(*b));
}
