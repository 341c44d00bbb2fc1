/*
 * sort.c - the importer's entries in timestamp order (see import.h).
 *
 * Traces are written by sequences that each emit packets in time order
 * and are flushed into the file in chunks, so the entries form sorted
 * runs that interleave. A k-way merge through a heap of run heads hands
 * them to the parser in time order, O(n log k); ties go to the entry
 * earlier in the array, which keeps file order. The merge writes no
 * sorted copy: the parser takes each entry as the merge finds it, and
 * each piece of the array goes back to the system once the merge has
 * taken all its entries. (A sorted copy was 22 MB written and read again
 * for a demo trace of 57 MB, a tenth of its import, and the copy's pages
 * were the merge's own page faults.)
 *
 * Where runs are short (that trace has 209 k of them, 7 entries on
 * average; packets interleaved one by one give runs of one), each block
 * of BLOCK entries is first sorted in place by a stable merge sort in
 * cache, which leaves at most n / BLOCK runs for the heap: O(n log n) in
 * all, and the heap stays small enough to live in cache. Both steps are
 * stable.
 *
 * While the import spills (spill.h), the merge reads the head of every
 * run in turn: n / BLOCK runs are as many pages, 170 MB for a 450 MB
 * trace, which a few MiB of resident pages would read again from the page
 * cache for nearly every entry. There, chunks of CHUNK entries are sorted
 * first (block sorts, then stable merges through a buffer of one chunk,
 * all within a chunk's 1 MiB): n / CHUNK runs, a page each. Stable merges
 * of stably sorted pieces: the same order.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"
#include "tp/spill.h"

#define BLOCK 256   /* entries a block sort puts in order, in cache */
#define MIN_RUN 64  /* shorter runs on average: sort blocks first */
#define PIECE 16384 /* entries the merge gives back at once (256 KiB) */
#define SPAN 2048   /* entries per count and least input offset kept */
#define CHUNK 65536 /* entries a spilling import sorts before the merge */
/* A taken entry's ref: kind compact, so that it reads no input. */
#define TAKEN (~(uint64_t)0)

/* Whether entry e reads the input at gp__tp_ref_off(e->ref): not once
 * taken, nor a compact sched event (decoded when tokenized; its ref holds
 * an index), nor a packet only kept for its place in the order. */
static bool reads_input(const gp__tp_entry *e) {
  uint32_t k = gp__tp_ref_kind(e->ref);
  return k != GP_TP_ENT_COMPACT && k != GP_TP_ENT_SKIP;
}
_Static_assert(PIECE % SPAN == 0, "a piece is whole spans");

/* Ties go to the entry earlier in the array: the merge is stable. */
static bool run_less(const gp__tp_merge *m, uint32_t x, uint32_t y) {
  int64_t tx = m->a[m->pos[x]].ts, ty = m->a[m->pos[y]].ts;
  return tx < ty || (tx == ty && m->pos[x] < m->pos[y]);
}

static void sift_down(gp__tp_merge *m, uint32_t i) {
  uint32_t x = m->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= m->nheap)
      break;
    if (c + 1 < m->nheap && run_less(m, m->heap[c + 1], m->heap[c]))
      c++;
    if (!run_less(m, m->heap[c], x))
      break;
    m->heap[i] = m->heap[c];
    i = c;
  }
  m->heap[i] = x;
}

/* Merges the sorted runs of w entries of a[0..m) bottom-up, stably by
 * ts, through tmp (m entries), until a[0..m) is one run; poll: let the
 * spill drop pages between merges (a chunk's merges touch more than it
 * keeps resident). */
static void merge_runs(gp__tp_entry *a, size_t m, size_t w, gp__tp_entry *tmp,
                       bool poll) {
  gp__tp_entry *src = a, *dst = tmp;
  for (; w < m; w *= 2) {
    for (size_t lo = 0; lo < m; lo += 2 * w) {
      if (poll)
        gp__tp_spill_poll();
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
  merge_runs(a, m, 8, tmp, false);
}

/* Sorts each chunk of CHUNK entries of a[0..n) stably by ts: its blocks,
 * then bottom-up merges through tmp (CHUNK entries). */
static void sort_chunks(gp__tp_entry *a, size_t n, gp__tp_entry *tmp) {
  gp__tp_entry btmp[BLOCK];
  for (size_t lo = 0; lo < n; lo += BLOCK) {
    gp__tp_spill_poll();
    sort_block(a + lo, n - lo < BLOCK ? n - lo : BLOCK, btmp);
  }
  for (size_t c = 0; c < n; c += CHUNK)
    merge_runs(a + c, n - c < CHUNK ? n - c : CHUNK, BLOCK, tmp, true);
}

static size_t count_runs(const gp__tp_entry *a, size_t n) {
  size_t nruns = 1;
  for (size_t i = 1; i < n; i++) {
    if (i % 256 == 0)
      gp__tp_spill_poll();
    nruns += a[i].ts < a[i - 1].ts;
  }
  return nruns;
}

/* See import.h. */
int gp__tp_merge_init(gp__tp_merge *m, gp__tp_entry *a, size_t cap, size_t n) {
  memset(m, 0, sizeof(*m));
  m->a = a;
  m->cap = cap;
  m->n = n;
  m->nspans = (n + SPAN - 1) / SPAN;
  size_t nruns = n ? count_runs(a, n) : 0;
  if (nruns > n / MIN_RUN) {
    gp__tp_entry tmp[BLOCK];
    for (size_t lo = 0; lo < n; lo += BLOCK)
      sort_block(a + lo, n - lo < BLOCK ? n - lo : BLOCK, tmp);
    nruns = count_runs(a, n);
  }
  if (nruns > (n + CHUNK - 1) / CHUNK && gp__tp_spill_on()) {
    gp__tp_entry *tmp = gp__tp_array_alloc(CHUNK, sizeof(*tmp));
    if (!tmp) {
      gp__tp_vec_release(a, cap, sizeof(*a));
      memset(m, 0, sizeof(*m));
      return GP_ENOMEM;
    }
    sort_chunks(a, n, tmp);
    gp__tp_array_free(tmp, CHUNK, sizeof(*tmp));
    nruns = count_runs(a, n);
  }
  /* The bookkeeping lives in its own mappings (gp__tp_array_alloc) where
   * large, so that freeing it leaves the C heap as it was. */
  size_t nr = nruns ? nruns : 1, ns = m->nspans ? m->nspans : 1;
  m->pos = gp__tp_array_alloc(nr, sizeof(*m->pos));
  m->end = gp__tp_array_alloc(nr, sizeof(*m->end));
  m->heap = gp__tp_array_alloc(nr, sizeof(*m->heap));
  m->span_left = gp__tp_array_alloc(ns, sizeof(*m->span_left));
  m->smin = gp__tp_array_alloc(ns, sizeof(*m->smin));
  m->nruns = nr;
  if (!m->pos || !m->end || !m->heap || !m->span_left || !m->smin) {
    gp__tp_merge_fini(m);
    return GP_ENOMEM;
  }
  uint64_t low = UINT64_MAX;
  for (size_t p = ns; p-- > 0;) {
    size_t lo = p * SPAN, hi = lo + SPAN < n ? lo + SPAN : n;
    m->span_left[p] = (uint32_t)(hi - lo);
    gp__tp_spill_poll();
    for (size_t i = lo; i < hi; i++) {
      /* A compact sched event was decoded when tokenized: it reads no
       * input (its ref holds an index, not an offset). */
      if (!reads_input(&a[i]))
        continue;
      uint64_t off = gp__tp_ref_off(a[i].ref);
      low = off < low ? off : low;
    }
    m->smin[p] = low;
  }
  size_t k = 0, start = 0;
  for (size_t i = 1; i <= n; i++)
    if (i == n || a[i].ts < a[i - 1].ts) {
      m->pos[k] = start;
      m->end[k] = i;
      m->heap[k] = (uint32_t)k;
      k++;
      start = i;
    }
  m->nheap = (uint32_t)k;
  for (uint32_t i = m->nheap / 2; i-- > 0;)
    sift_down(m, i);
  return 0;
}

/* See import.h. */
bool gp__tp_merge_next(gp__tp_merge *m, gp__tp_entry *out) {
  if (!m->nheap)
    return false;
  uint32_t top = m->heap[0];
  size_t at = m->pos[top]++;
  *out = m->a[at];
  m->a[at].ref = TAKEN; /* for gp__tp_merge_low_off() */
  if (--m->span_left[at / SPAN] == 0) {
    /* The piece goes when its last span with entries left empties. */
    size_t p = at / PIECE, s = p * (PIECE / SPAN), e = s + PIECE / SPAN;
    while (s < e && s < m->nspans && m->span_left[s] == 0)
      s++;
    if (s == e || s == m->nspans)
      gp__tp_vec_drop(m->a, m->cap, sizeof(*m->a), p * PIECE,
                      p * PIECE + PIECE > m->n ? m->n : p * PIECE + PIECE);
  }
  if (m->pos[top] == m->end[top])
    m->heap[0] = m->heap[--m->nheap];
  if (m->nheap)
    sift_down(m, 0);
  return true;
}

/* See import.h. The first span with entries left is looked at entry by
 * entry (SPAN entries, once every RELEASE_BLOCK parsed): a queue whose
 * entries are sparse in the file, and so span much of it, would otherwise
 * hold the input back from its first entry to the last of that span. */
uint64_t gp__tp_merge_low_off(gp__tp_merge *m) {
  while (m->live < m->nspans && m->span_left[m->live] == 0)
    m->live++;
  if (m->live >= m->nspans)
    return UINT64_MAX;
  uint64_t low = m->live + 1 < m->nspans ? m->smin[m->live + 1] : UINT64_MAX;
  size_t lo = m->live * SPAN, hi = lo + SPAN < m->n ? lo + SPAN : m->n;
  for (size_t i = lo; i < hi; i++)
    if (reads_input(&m->a[i]) && gp__tp_ref_off(m->a[i].ref) < low)
      low = gp__tp_ref_off(m->a[i].ref);
  return low;
}

/* The head of the merge: its next entry's ts; false when none is left. */
static bool merge_peek(const gp__tp_merge *m, int64_t *ts) {
  if (!m->nheap)
    return false;
  *ts = m->a[m->pos[m->heap[0]]].ts;
  return true;
}

/* See import.h. */
void gp__tp_merge_fini(gp__tp_merge *m) {
  size_t ns = m->nspans ? m->nspans : 1;
  gp__tp_vec_release(m->a, m->cap, sizeof(*m->a));
  gp__tp_array_free(m->pos, m->nruns, sizeof(*m->pos));
  gp__tp_array_free(m->end, m->nruns, sizeof(*m->end));
  gp__tp_array_free(m->heap, m->nruns, sizeof(*m->heap));
  gp__tp_array_free(m->span_left, ns, sizeof(*m->span_left));
  gp__tp_array_free(m->smin, ns, sizeof(*m->smin));
  memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* A window's queue: what was pushed by a read of the service's buffers  */

/* Entry i of q before entry j: the earlier, or the one pushed first. */
static bool wq_less(const gp__tp_wqueue *q, uint32_t i, uint32_t j) {
  return q->a[i].ts < q->a[j].ts || (q->a[i].ts == q->a[j].ts && i < j);
}

/* Makes a[vis..to) visible: into the heap. */
static void wq_show(gp__tp_wqueue *q, size_t to) {
  for (; q->vis < to; q->vis++) {
    uint32_t x = (uint32_t)q->vis;
    size_t i = q->nh++;
    while (i > 0 && wq_less(q, x, q->h[(i - 1) / 2])) {
      q->h[i] = q->h[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    q->h[i] = x;
  }
}

static uint32_t wq_pop(gp__tp_wqueue *q) {
  uint32_t top = q->h[0], x = q->h[--q->nh];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= q->nh)
      break;
    if (c + 1 < q->nh && wq_less(q, q->h[c + 1], q->h[c]))
      c++;
    if (!wq_less(q, q->h[c], x))
      break;
    q->h[i] = q->h[c];
    i = c;
  }
  if (q->nh)
    q->h[i] = x;
  return top;
}

/* ------------------------------------------------------------------ */
/* The queues merged                                                     */

/* The head of queue q (its next entry's ts); false if it has none (in a
 * window: none visible). */
static bool q_peek(const gp__tp_sorter *s, uint32_t q, int64_t *ts) {
  if (!s->wq)
    return merge_peek(&s->q[q], ts);
  const gp__tp_wqueue *w = &s->wq[q];
  if (!w->nh)
    return false;
  *ts = w->a[w->h[0]].ts;
  return true;
}

/* Whether the head of queue q may be handed out in this window: pushed
 * before the read that ended the window before. */
static bool q_in_window(const gp__tp_sorter *s, uint32_t q) {
  return !s->wq || !s->lim || s->wq[q].h[0] < s->lim[q];
}

static void q_take(gp__tp_sorter *s, uint32_t q, gp__tp_entry *out) {
  if (!s->wq) {
    gp__tp_merge_next(&s->q[q], out);
    return;
  }
  *out = s->wq[q].a[wq_pop(&s->wq[q])];
}

/* Queue x before queue y: the earlier head, or the one made first. */
static bool queue_less(const gp__tp_sorter *s, uint32_t x, uint32_t y) {
  int64_t tx = 0, ty = 0;
  q_peek(s, x, &tx);
  q_peek(s, y, &ty);
  return tx < ty || (tx == ty && x < y);
}

/* Puts queue x at heap slot i, keeping its slot where windows need it. */
static void heap_set(gp__tp_sorter *s, uint32_t i, uint32_t x) {
  s->heap[i] = x;
  if (s->hpos)
    s->hpos[x] = i;
}

static void queue_sift_down(gp__tp_sorter *s, uint32_t i) {
  uint32_t x = s->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= s->nheap)
      break;
    if (c + 1 < s->nheap && queue_less(s, s->heap[c + 1], s->heap[c]))
      c++;
    if (!queue_less(s, s->heap[c], x))
      break;
    heap_set(s, i, s->heap[c]);
    i = c;
  }
  heap_set(s, i, x);
}

/* Moves queue x, at slot i, up to where its (earlier) head belongs. */
static void queue_sift_up(gp__tp_sorter *s, uint32_t i, uint32_t x) {
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!queue_less(s, x, s->heap[p]))
      break;
    heap_set(s, i, s->heap[p]);
    i = p;
  }
  heap_set(s, i, x);
}

static void queue_push(gp__tp_sorter *s, uint32_t x) {
  queue_sift_up(s, s->nheap++, x);
}

/* Takes the heap's first queue out. */
static uint32_t queue_pop(gp__tp_sorter *s) {
  uint32_t top = s->heap[0];
  if (s->hpos)
    s->hpos[top] = UINT32_MAX;
  if (--s->nheap) {
    heap_set(s, 0, s->heap[s->nheap]);
    queue_sift_down(s, 0);
  }
  return top;
}

/* Applies window k's changes to the lengths in len. */
static void apply_window(const gp__tp_windows *w, size_t k, uint32_t *len) {
  for (size_t i = k ? w->ends.v[k - 1] : 0; i < w->ends.v[k]; i++)
    len[w->changes.v[i].queue] = w->changes.v[i].len;
}

/* Makes queue q's entries up to len visible; its head can only come
 * earlier, so it moves up in the heap of queues (or joins it). */
static void show(gp__tp_sorter *s, uint32_t q, uint32_t len) {
  gp__tp_wqueue *w = &s->wq[q];
  if (len <= w->vis)
    return;
  wq_show(w, len);
  if (s->hpos[q] == UINT32_MAX)
    queue_push(s, q);
  else
    queue_sift_up(s, s->hpos[q], q);
}

/*
 * The next window: at read k of the service's buffers (k >= 1), Perfetto's
 * sorter has what was pushed by then, and hands out, in order, what had
 * been pushed by read k - 1 (the first read hands out nothing: what came
 * before the trace). After the last read, all the rest. Only the queues
 * a window changed move in the heap of queues: O(changes log q).
 */
static void next_window(gp__tp_sorter *s) {
  const gp__tp_windows *w = s->win;
  s->has_cur = false; /* the caller put it back */
  if (s->phase < w->ends.n) {
    apply_window(w, s->phase - 1, s->lim);
    size_t k = s->phase++;
    for (size_t i = k ? w->ends.v[k - 1] : 0; i < w->ends.v[k]; i++)
      show(s, w->changes.v[i].queue, w->changes.v[i].len);
  } else {
    s->lim = NULL; /* the end of the trace: all */
    for (uint32_t i = 0; i < s->nq; i++)
      show(s, i, (uint32_t)s->wq[i].n);
  }
}

/* See import.h. */
int gp__tp_sorter_init(gp__tp_sorter *s, gp__tp_queue *q, size_t nq,
                       const gp__tp_windows *win) {
  memset(s, 0, sizeof(*s));
  s->win = win;
  s->latest = INT64_MIN;
  /* The first read hands out what came before the trace: nothing. With
   * fewer than two, the trace is sorted once at its end. */
  bool windows = win && win->ends.n >= 2;
  size_t nq1 = nq ? nq : 1;
  s->heap = calloc(nq1, sizeof(*s->heap));
  if (windows) {
    s->wq = calloc(nq1, sizeof(*s->wq));
    s->lim = s->lim_mem = calloc(nq1, sizeof(*s->lim));
    s->hpos = malloc(nq1 * sizeof(*s->hpos));
    if (s->hpos)
      memset(s->hpos, 0xff, nq1 * sizeof(*s->hpos)); /* none in the heap */
  } else {
    s->q = calloc(nq1, sizeof(*s->q));
  }
  int rc = s->heap && (windows ? s->wq && s->lim && s->hpos : s->q != NULL)
               ? 0
               : GP_ENOMEM;
  for (size_t i = 0; i < nq; i++) {
    gp__tp_entry *a = q[i].v;
    size_t cap = q[i].cap, n = q[i].n;
    q[i].v = NULL;
    q[i].n = q[i].cap = q[i].ready = 0;
    if (rc) {
      gp__tp_vec_release(a, cap, sizeof(*a));
      continue;
    }
    s->nq = i + 1;
    if (windows) {
      gp__tp_wqueue *w = &s->wq[i];
      w->a = a;
      w->cap = cap;
      w->n = n;
      w->h = n ? gp__tp_array_alloc(n, sizeof(*w->h)) : NULL;
      rc = n && !w->h ? GP_ENOMEM : 0;
    } else {
      rc = gp__tp_merge_init(&s->q[i], a, cap, n);
      if (!rc && n)
        queue_push(s, (uint32_t)i);
    }
  }
  if (rc) {
    gp__tp_sorter_fini(s);
    return rc;
  }
  if (windows) {
    /* Window 0 is what read 0 saw: visible from read 1 on. */
    for (size_t i = 0; i < win->ends.v[0]; i++)
      show(s, win->changes.v[i].queue, win->changes.v[i].len);
    s->phase = 1;
    next_window(s);
  }
  return 0;
}

/* See import.h. */
bool gp__tp_sorter_next(gp__tp_sorter *s, gp__tp_entry *out) {
  for (;;) {
    int64_t ts;
    if (!s->has_cur || !q_peek(s, s->cur, &ts) || ts > s->limit ||
        !q_in_window(s, s->cur)) {
      if (s->has_cur && q_peek(s, s->cur, &ts))
        queue_push(s, s->cur);
      s->has_cur = false;
      if (!s->nheap) {
        if (!s->wq || !s->lim)
          return false;
        next_window(s); /* nothing visible is left in this window */
        continue;
      }
      if (!q_in_window(s, s->heap[0])) {
        next_window(s); /* Perfetto's sorter stops at that head */
        continue;
      }
      s->cur = queue_pop(s);
      s->has_cur = true;
      s->limit = INT64_MAX;
      if (s->nheap)
        q_peek(s, s->heap[0], &s->limit);
    }
    q_take(s, s->cur, out);
    if (out->ts < s->latest) {
      s->out_of_order++; /* as Perfetto's sorter drops it */
      continue;
    }
    s->latest = out->ts;
    return true;
  }
}

/* See import.h. */
uint64_t gp__tp_sorter_low_off(gp__tp_sorter *s) {
  if (s->wq)
    return 0; /* a window keeps its input: nothing is given back */
  uint64_t low = UINT64_MAX;
  for (size_t i = 0; i < s->nq; i++) {
    uint64_t o = gp__tp_merge_low_off(&s->q[i]);
    low = o < low ? o : low;
  }
  return low;
}

/* See import.h. */
void gp__tp_sorter_fini(gp__tp_sorter *s) {
  for (size_t i = 0; i < s->nq; i++) {
    if (s->wq) {
      gp__tp_vec_release(s->wq[i].a, s->wq[i].cap, sizeof(*s->wq[i].a));
      gp__tp_array_free(s->wq[i].h, s->wq[i].n, sizeof(*s->wq[i].h));
    } else {
      gp__tp_merge_fini(&s->q[i]);
    }
  }
  free(s->q);
  free(s->wq);
  free(s->heap);
  free(s->lim_mem);
  free(s->hpos);
  memset(s, 0, sizeof(*s));
}
