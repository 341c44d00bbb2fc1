/*
 * sort.c - sorting the importer's entries by timestamp (see import.h).
 *
 * Traces are written by sequences that each emit packets in time order
 * and are flushed into the file in chunks, so the entries form sorted
 * runs that interleave. Unless the runs are very short (fewer than
 * MIN_RUN entries on average), one k-way merge through a heap of run
 * heads sorts everything in a single pass, O(n log k); ties go to the
 * earlier run, which keeps file order. The merge writes a new array
 * front to back and gives the old one's pages back as it empties them, so
 * the two are never both held whole: the sort adds a few MB to the
 * import's peak instead of a second copy of the entries (a demo trace of
 * 57 MB has 1.4 M entries in 209 k runs; the radix sort held 23 MB more).
 * With runs shorter than that (packets interleaved one by one), where a
 * heap of run heads would cost more than the entries, a
 * least-significant-digit radix sort on ts - min(ts) does it in one pass
 * per 8-bit digit that varies. Both are stable.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MIN_RUN 4 /* entries per run, on average, for the merge */

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

/* Entries per piece of the input that the merge gives back once it has
 * taken all of them (64 KiB). */
#define PIECE 4096

/* Merges the runs of a[0..n) into a new array that replaces *pa; each
 * piece of the old array goes back to the system when the merge has
 * taken all its entries, so the peak holds little more than one array. */
static int merge_runs(gp__tp_entry **pa, size_t *pcap, size_t n, size_t nruns) {
  gp__tp_entry *a = *pa;
  runs r;
  r.a = a;
  r.pos = malloc(nruns * sizeof(size_t));
  r.end = malloc(nruns * sizeof(size_t));
  r.heap = malloc(nruns * sizeof(uint32_t));
  size_t npieces = (n + PIECE - 1) / PIECE;
  uint16_t *left = malloc(npieces * sizeof(*left));
  size_t cap = 0;
  gp__tp_entry *out = scratch(n, &cap);
  int rc = GP_ENOMEM;
  if (!r.pos || !r.end || !r.heap || !left || !out)
    goto out;
  for (size_t p = 0; p < npieces; p++)
    left[p] = (uint16_t)(n - p * PIECE < PIECE ? n - p * PIECE : PIECE);
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
    size_t at = r.pos[top]++;
    out[o] = a[at];
    if (--left[at / PIECE] == 0)
      gp__tp_vec_drop(
          a, *pcap, sizeof(*a), at / PIECE * PIECE,
          at / PIECE * PIECE + PIECE > n ? n : at / PIECE * PIECE + PIECE);
    if (r.pos[top] == r.end[top])
      r.heap[0] = r.heap[--r.n];
    if (r.n)
      sift_down(&r, 0);
  }
  gp__tp_vec_release(a, *pcap, sizeof(*a));
  *pa = out;
  *pcap = cap;
  out = NULL;
  rc = 0;
out:
  gp__tp_vec_release(out, cap, sizeof(*out));
  free(left);
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
int gp__tp_sort_entries(gp__tp_entry **a, size_t *cap, size_t n) {
  size_t nruns = 1;
  for (size_t i = 1; i < n; i++)
    nruns += (*a)[i].ts < (*a)[i - 1].ts;
  if (nruns == 1)
    return 0;
  if (nruns <= n / MIN_RUN)
    return merge_runs(a, cap, n, nruns);
  return radix(*a, n);
}
