/*
 * sort.c - sorting the importer's entries by timestamp (see import.h).
 *
 * Traces are written by sequences that each emit packets in time order
 * and are flushed into the file in chunks, so the entries form sorted
 * runs that interleave. With few runs (the usual case: a run per flushed
 * chunk) one k-way merge through a heap of run heads sorts everything in
 * a single pass, O(n log k); ties go to the earlier run, which keeps file
 * order. With many short runs (packets interleaved one by one) a
 * least-significant-digit radix sort on ts - min(ts) does it in one pass
 * per 8-bit digit that varies. Both are stable.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MAX_MERGE_RUNS 4096

/* Allocates n entries of scratch in huge-page-friendly memory. */
static gp__tp_entry *scratch(size_t n, size_t *cap) {
  GP_TP_VEC(gp__tp_entry) v = {0};
  if (!gp__tp_vec_reserve(&v, n))
    return NULL;
  *cap = v.cap;
  return v.v;
}

/* A min-heap of run indices, by (head ts, run index). */
typedef struct runs {
  size_t *pos, *end;
  uint32_t *heap;
  uint32_t n;
  const gp__tp_entry *a;
} runs;

static bool run_less(const runs *r, uint32_t x, uint32_t y) {
  int64_t tx = r->a[r->pos[x]].ts, ty = r->a[r->pos[y]].ts;
  return tx < ty || (tx == ty && x < y);
}

static void sift_down(runs *r, uint32_t i) {
  uint32_t x = r->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= r->n)
      break;
    if (c + 1 < r->n && run_less(r, r->heap[c + 1], r->heap[c]))
      c++;
    if (!run_less(r, r->heap[c], x))
      break;
    r->heap[i] = r->heap[c];
    i = c;
  }
  r->heap[i] = x;
}

static int merge_runs(gp__tp_entry *a, size_t n, size_t nruns) {
  runs r;
  r.a = a;
  r.pos = malloc(nruns * sizeof(size_t));
  r.end = malloc(nruns * sizeof(size_t));
  r.heap = malloc(nruns * sizeof(uint32_t));
  size_t cap = 0;
  gp__tp_entry *out = scratch(n, &cap);
  int rc = GP_ENOMEM;
  if (!r.pos || !r.end || !r.heap || !out)
    goto out;
  size_t k = 0, start = 0;
  for (size_t i = 1; i <= n; i++)
    if (i == n || a[i].ts < a[i - 1].ts) {
      r.pos[k] = start;
      r.end[k] = i;
      k++;
      start = i;
    }
  r.n = (uint32_t)k;
  for (uint32_t i = 0; i < r.n; i++)
    r.heap[i] = i;
  for (uint32_t i = r.n / 2; i-- > 0;)
    sift_down(&r, i);
  for (size_t o = 0; o < n; o++) {
    uint32_t top = r.heap[0];
    out[o] = a[r.pos[top]++];
    if (r.pos[top] == r.end[top])
      r.heap[0] = r.heap[--r.n];
    if (r.n)
      sift_down(&r, 0);
  }
  memcpy(a, out, n * sizeof(*a));
  rc = 0;
out:
  gp__tp_vec_release(out, cap, sizeof(*out));
  free(r.pos);
  free(r.end);
  free(r.heap);
  return rc;
}

static int radix(gp__tp_entry *a, size_t n) {
  int64_t min = a[0].ts;
  for (size_t k = 1; k < n; k++)
    if (a[k].ts < min)
      min = a[k].ts;
  size_t(*hist)[256] = calloc(8, sizeof(*hist));
  size_t cap = 0;
  gp__tp_entry *tmp = scratch(n, &cap);
  if (!hist || !tmp) {
    free(hist);
    gp__tp_vec_release(tmp, cap, sizeof(*tmp));
    return GP_ENOMEM;
  }
  for (size_t k = 0; k < n; k++) {
    uint64_t key = (uint64_t)a[k].ts - (uint64_t)min;
    for (int d = 0; d < 8 && key; d++, key >>= 8)
      hist[d][key & 255]++;
  }
  gp__tp_entry *src = a, *dst = tmp;
  for (int d = 0; d < 8; d++) {
    size_t *h = hist[d];
    /* Keys that ran out of digits counted nothing here: they are 0. */
    size_t counted = 0;
    for (int b = 0; b < 256; b++)
      counted += h[b];
    h[0] += n - counted;
    if (h[0] == n)
      continue; /* every entry has the same digit here */
    size_t sum = 0;
    for (int b = 0; b < 256; b++) {
      size_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    int shift = d * 8;
    for (size_t k = 0; k < n; k++) {
      uint64_t key = (uint64_t)src[k].ts - (uint64_t)min;
      dst[h[(key >> shift) & 255]++] = src[k];
    }
    gp__tp_entry *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, n * sizeof(*a));
  gp__tp_vec_release(tmp, cap, sizeof(*tmp));
  free(hist);
  return 0;
}

/* See import.h. */
int gp__tp_sort_entries(gp__tp_entry *a, size_t n) {
  size_t nruns = 1;
  for (size_t i = 1; i < n && nruns <= MAX_MERGE_RUNS; i++)
    nruns += a[i].ts < a[i - 1].ts;
  if (nruns == 1)
    return 0;
  if (nruns <= MAX_MERGE_RUNS)
    return merge_runs(a, n, nruns);
  return radix(a, n);
}
