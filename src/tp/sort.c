/*
 * sort.c - sorting the importer's entries by timestamp (see import.h).
 *
 * Traces are written by sequences that each emit packets in time order
 * and are flushed into the file in chunks, so the entries form sorted
 * runs that interleave. One k-way merge through a heap of run heads sorts
 * them in a single pass, O(n log k); ties go to the earlier run, which
 * keeps file order. The merge writes a new array front to back and gives
 * the old one's pages back as it empties them, so the two are never both
 * held whole: the sort adds a few MB to the import's peak instead of a
 * second copy of the entries (a demo trace of 57 MB has 1.4 M entries;
 * the radix sort this replaces held 23 MB more).
 *
 * Where runs are short (that trace has 209 k of them, 7 entries on
 * average; packets interleaved one by one give runs of one), each block
 * of BLOCK entries is first sorted in place by a stable merge sort in
 * cache, which leaves at most n / BLOCK runs for the heap: O(n log n) in
 * all, and the heap stays small enough to live in cache. Both steps are
 * stable.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define BLOCK 256   /* entries a block sort puts in order, in cache */
#define MIN_RUN 64  /* shorter runs on average: sort blocks first */
#define PIECE 32768 /* entries the merge gives back at once (512 KiB) */

typedef GP_TP_VEC(gp__tp_entry) gp__tp_entries;

/* Room for n entries, in memory that the merge fills front to back: no
 * page is present yet, and the pushes make them present 64 KiB at a time
 * (gp__tp_vec_grow); the array is what gp__tp_vec_grow would allocate
 * for n entries, so that gp__tp_vec_release frees it. */
static bool scratch(gp__tp_entries *v, size_t n) {
  if (!(v->v = gp__tp_array_alloc(n, sizeof(*v->v))))
    return false;
  v->cap = n;
  /* Huge pages would commit 2 MiB ahead of the merge's writes while the
   * old array goes back 512 KiB at a time: 2 MB more at the import's peak. */
  gp__tp_vec_small_pages(v->v, v->cap, sizeof(*v->v));
  return true;
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

/* Merges the nruns runs of (*pa)[0..n) into a new array that replaces
 * *pa; each piece of the old array goes back to the system when the merge
 * has taken all its entries, so the peak holds little more than one
 * array. The bookkeeping lives in its own mappings too (gp__tp_vec_*),
 * so that freeing it leaves the C heap as it was. */
static int merge_runs(gp__tp_entry **pa, size_t *pcap, size_t n, size_t nruns) {
  gp__tp_entry *a = *pa;
  GP_TP_VEC(size_t) pos = {0}, end = {0};
  GP_TP_VEC(uint32_t) heap = {0};
  GP_TP_VEC(uint32_t) left = {0};
  size_t npieces = (n + PIECE - 1) / PIECE;
  gp__tp_entries out = {0};
  int rc = GP_ENOMEM;
  if (!gp__tp_vec_reserve(&pos, nruns) || !gp__tp_vec_reserve(&end, nruns) ||
      !gp__tp_vec_reserve(&heap, nruns) ||
      !gp__tp_vec_reserve(&left, npieces) || !scratch(&out, n))
    goto out;
  runs r = {pos.v, end.v, heap.v, 0, a};
  for (size_t p = 0; p < npieces; p++)
    left.v[p] = (uint32_t)(n - p * PIECE < PIECE ? n - p * PIECE : PIECE);
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
  while (out.n < n) {
    uint32_t top = r.heap[0];
    size_t at = r.pos[top]++;
    /* Within the reservation: this only makes pages present ahead. */
    if (!gp__tp_vec_push(&out, a[at]))
      goto out;
    size_t p = at / PIECE;
    if (--left.v[p] == 0)
      gp__tp_vec_drop(a, *pcap, sizeof(*a), p * PIECE,
                      p * PIECE + PIECE > n ? n : p * PIECE + PIECE);
    if (r.pos[top] == r.end[top])
      r.heap[0] = r.heap[--r.n];
    if (r.n)
      sift_down(&r, 0);
  }
  gp__tp_vec_release(a, *pcap, sizeof(*a));
  *pa = out.v;
  *pcap = out.cap;
  out.v = NULL;
  out.cap = 0;
  rc = 0;
out:
  gp__tp_vec_free(&out);
  gp__tp_vec_free(&pos);
  gp__tp_vec_free(&end);
  gp__tp_vec_free(&heap);
  gp__tp_vec_free(&left);
  return rc;
}

/* Sorts a[0..m) (m <= BLOCK) stably by ts: insertion sorts of 8 entries,
 * then bottom-up merges through tmp (BLOCK entries). */
static void sort_block(gp__tp_entry *a, size_t m, gp__tp_entry *tmp) {
  for (size_t lo = 0; lo < m; lo += 8) {
    size_t hi = lo + 8 < m ? lo + 8 : m;
    for (size_t i = lo + 1; i < hi; i++) {
      gp__tp_entry x = a[i];
      size_t j = i;
      for (; j > lo && a[j - 1].ts > x.ts; j--)
        a[j] = a[j - 1];
      a[j] = x;
    }
  }
  gp__tp_entry *src = a, *dst = tmp;
  for (size_t w = 8; w < m; w *= 2) {
    for (size_t lo = 0; lo < m; lo += 2 * w) {
      size_t mid = lo + w < m ? lo + w : m;
      size_t hi = lo + 2 * w < m ? lo + 2 * w : m;
      size_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        dst[o++] = src[j].ts < src[i].ts ? src[j++] : src[i++];
      while (i < mid)
        dst[o++] = src[i++];
      while (j < hi)
        dst[o++] = src[j++];
    }
    gp__tp_entry *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, m * sizeof(*a));
}

static size_t count_runs(const gp__tp_entry *a, size_t n) {
  size_t nruns = 1;
  for (size_t i = 1; i < n; i++)
    nruns += a[i].ts < a[i - 1].ts;
  return nruns;
}

/* See import.h. */
int gp__tp_sort_entries(gp__tp_entry **a, size_t *cap, size_t n) {
  if (n < 2)
    return 0;
  size_t nruns = count_runs(*a, n);
  if (nruns == 1)
    return 0;
  if (nruns > n / MIN_RUN) {
    gp__tp_entry tmp[BLOCK];
    for (size_t lo = 0; lo < n; lo += BLOCK)
      sort_block(*a + lo, n - lo < BLOCK ? n - lo : BLOCK, tmp);
    if ((nruns = count_runs(*a, n)) == 1)
      return 0;
  }
  return merge_runs(a, cap, n, nruns);
}
