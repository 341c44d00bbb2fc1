/*
 * intersect.c - _interval_intersect!: the engine behind the macro.
 *
 * _interval_intersect!((t1, ..., tk), (p1, ..., pm)) expands (psql.c) to
 *
 *   __gp_intersect((SELECT __gp_iv_agg(id, ts, dur, p1, ...) FROM t1), ...)
 *
 * The aggregate collects a table's intervals (aggbuf.c); the table-valued
 * function intersects them. A table may also come as whole tracks of
 * counter intervals (__gp_iv_ci, which psql_cte.c writes), read from the
 * counter buffer here. Per partition (tuple of p values, NULL being
 * a value like any other; only tuples present in every table count) the
 * tables are intersected pairwise, smallest first, each step a sweep over
 * start times with one min-heap of open intervals per side, ordered by
 * end: O((n + m) log(n + m) + output), never a nested loop.
 *
 * Semantics (Perfetto's): intervals are half-open [ts, ts + dur). Two
 * intervals of non-zero length overlap iff each starts before the other
 * ends (touching ends do not). A zero-length interval (an instant) at p
 * overlaps [a, b) iff a <= p < b, and another instant iff at the same p.
 * The result is [max(starts), min(ends)), or the instant itself. Negative
 * ts or dur is an error. Ids come out truncated to 32 bits, as there.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/aggbuf.h"

/* ------------------------------------------------------------------ */
/* An interval table, grouped by partition                               */

typedef struct ivtab {
  uint64_t n;
  int64_t *id, *ts, *end;
  uint32_t *order; /* rows by (group, ts) */
  uint32_t ngroups;
  uint64_t *gstart;      /* group g is order[gstart[g] .. gstart[g + 1]) */
  const uint8_t **gpart; /* partition bytes of each group */
  uint32_t *gplen;
  gp__tp_map gmap; /* hash of partition bytes -> first group (chained) */
  uint32_t *gnext;
} ivtab;

static void ivtab_free(ivtab *t) {
  gp__tp_array_free(t->id, t->n, 8);
  gp__tp_array_free(t->ts, t->n, 8);
  gp__tp_array_free(t->end, t->n, 8);
  gp__tp_array_free(t->order, t->n, 4);
  free(t->gstart);
  free(t->gpart);
  free(t->gplen);
  free(t->gnext);
  gp__tp_map_free(&t->gmap);
  memset(t, 0, sizeof(*t));
}

static uint64_t part_hash(const uint8_t *p, uint32_t n) {
  return gp__tp_hash_bytes(p, n, 0x7a1f0c2d);
}

/* The group of partition bytes p in t, or UINT32_MAX. */
static uint32_t find_group(const ivtab *t, const uint8_t *p, uint32_t n) {
  uint64_t *g = gp__tp_map_get(&t->gmap, part_hash(p, n));
  for (uint32_t x = g ? (uint32_t)*g : UINT32_MAX; x != UINT32_MAX;
       x = t->gnext[x])
    if (t->gplen[x] == n && memcmp(t->gpart[x], p, n) == 0)
      return x;
  return UINT32_MAX;
}

static int ts_order_cmp(const void *x, const void *y, void *arg) {
  const int64_t *ts = arg;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  if (ts[i] != ts[j])
    return ts[i] < ts[j] ? -1 : 1;
  return i < j ? -1 : (i > j);
}

/* Allocates t's arrays for n rows in at most ngroups groups. */
static bool ivtab_alloc(ivtab *t, uint64_t n, uint64_t ngroups) {
  size_t m = ngroups ? ngroups : 1;
  t->n = n;
  /* Written once each: huge pages where large (util.h). */
  t->id = gp__tp_array_alloc(n, 8);
  t->ts = gp__tp_array_alloc(n, 8);
  t->end = gp__tp_array_alloc(n, 8);
  t->order = gp__tp_array_alloc(n, 4);
  t->gpart = malloc(m * sizeof(*t->gpart));
  t->gplen = malloc(m * 4);
  t->gnext = malloc(m * 4);
  t->gstart = calloc(m + 1, 8);
  return t->id && t->ts && t->end && t->order && t->gpart && t->gplen &&
         t->gnext && t->gstart;
}

/* The group of partition bytes part[0, plen) into *g, a new one (the next
 * number) if t has none yet. Returns 0 or GP_ENOMEM. */
static int group_of(ivtab *t, const uint8_t *part, uint32_t plen, uint32_t *g) {
  *g = find_group(t, part, plen);
  if (*g != UINT32_MAX)
    return 0;
  *g = t->ngroups++;
  t->gpart[*g] = part;
  t->gplen[*g] = plen;
  bool ins;
  uint64_t *head = gp__tp_map_put(&t->gmap, part_hash(part, plen), *g, &ins);
  if (!head)
    return GP_ENOMEM;
  t->gnext[*g] = ins ? UINT32_MAX : (uint32_t)*head;
  *head = *g;
  return 0;
}

/* Just past the nparts partition values at p + at (of size bytes), or 0
 * if they run past the end. */
static size_t skip_parts(const uint8_t *p, size_t at, size_t size,
                         uint32_t nparts) {
  for (uint32_t k = 0; k < nparts; k++) {
    if (at + 1 > size)
      return 0;
    uint8_t ty = p[at++];
    if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
      at += 8;
    } else if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) {
      uint32_t len;
      if (at + 4 > size)
        return 0;
      memcpy(&len, p + at, 4);
      at += 4 + (size_t)len;
    }
    if (at > size)
      return 0;
  }
  return at;
}

/* Orders t's rows, grp[i] the group of row i (counts of rows per group in
 * gstart[1..]): by group (stable), then ts within groups (input order
 * for ties). Returns 0 or GP_ENOMEM. */
static int order_rows(ivtab *t, const uint32_t *grp) {
  for (uint32_t g = 0; g < t->ngroups; g++)
    t->gstart[g + 1] += t->gstart[g];
  uint64_t *fill = malloc((t->ngroups + 1) * 8);
  if (!fill)
    return GP_ENOMEM;
  memcpy(fill, t->gstart, (t->ngroups + 1) * 8);
  for (uint64_t i = 0; i < t->n; i++)
    t->order[fill[grp[i]]++] = (uint32_t)i;
  free(fill);
  for (uint32_t g = 0; g < t->ngroups; g++) {
    uint32_t *o = t->order + t->gstart[g];
    uint64_t m = t->gstart[g + 1] - t->gstart[g];
    uint64_t k = 1;
    while (k < m && t->ts[o[k - 1]] <= t->ts[o[k]])
      k++;
    if (k < m)
      qsort_r(o, m, 4, ts_order_cmp, t->ts);
  }
  return 0;
}

/* Reads an __gp_iv_agg buffer and groups its rows by partition, each
 * group in ts order (input order for ties). Returns 0, GP_ENOMEM, or
 * GP_EINVAL with *why set. */
static int load_iv(const gp__tp_buf *b, uint32_t *nparts, ivtab *t,
                   const char **why) {
  size_t size = b->n;
  const uint8_t *p = b->p;
  *why = "interval intersect: not an interval table";
  if (b->count > size / 24)
    return GP_EINVAL;
  *nparts = b->nparts;
  uint32_t *grp = gp__tp_array_alloc(b->count, 4);
  int rc = GP_ENOMEM;
  if (!ivtab_alloc(t, b->count, b->count) || !grp)
    goto out;
  rc = GP_EINVAL;
  size_t at = 0;
  const uint8_t *prev = NULL; /* the previous row's partition bytes */
  uint32_t prev_len = 0;
  for (uint64_t i = 0; i < t->n; i++) {
    if (at + 24 > size)
      goto out;
    int64_t dur;
    memcpy(&t->id[i], p + at, 8);
    memcpy(&t->ts[i], p + at + 8, 8);
    memcpy(&dur, p + at + 16, 8);
    /* Both are non-negative; saturate rather than overflow. */
    t->end[i] = dur > INT64_MAX - t->ts[i] ? INT64_MAX : t->ts[i] + dur;
    at += 24;
    const uint8_t *part = p + at;
    if (!(at = skip_parts(p, at, size, b->nparts)))
      goto out;
    uint32_t plen = (uint32_t)(p + at - part);
    /* Its group, by partition bytes (first appearance order); rows of one
     * partition usually come together. */
    uint32_t g;
    if (prev && plen == prev_len && memcmp(part, prev, plen) == 0)
      g = grp[i - 1];
    else if ((rc = group_of(t, part, plen, &g)) != 0)
      goto out;
    rc = GP_EINVAL;
    prev = part;
    prev_len = plen;
    grp[i] = g;
    t->gstart[g + 1]++;
  }
  rc = order_rows(t, grp);
out:
  gp__tp_array_free(grp, b->count, 4);
  return rc;
}

/* A row of an __gp_iv_ci buffer: a track's kept rows [lo, hi) and their
 * partition bytes. */
typedef struct seg {
  int64_t track;
  uint64_t lo, hi;
  const uint8_t *part;
  uint32_t plen;
} seg;

/*
 * Reads an __gp_iv_ci buffer (aggbuf.c) as load_iv reads __gp_iv_agg's:
 * its rows are the intervals of the tracks it names, in its order, each
 * track's by ts, read from the counter buffer's kept rows (no copy in
 * between): the rows __gp_iv_agg receives, in the same order, where
 * counter_leading_intervals! is joined with a table of tracks (SQLite
 * plans __gp_counter_tracks as the intervals). The same checks as
 * __gp_iv_agg's, with the same messages.
 */
static int load_ivc(gp_tp *tp, const gp__tp_buf *b, uint32_t *nparts, ivtab *t,
                    const char **why) {
  size_t size = b->n;
  const uint8_t *p = b->p;
  *why = "interval intersect: not an interval table";
  uint64_t head[2];
  if (size < sizeof(head) || b->count > (size - sizeof(head)) / 8)
    return GP_EINVAL;
  memcpy(head, p, sizeof(head));
  gp__tp_buf *cb = gp__tp_buf_find(tp, head[0]);
  ci_kept *k;
  int rc = cb && cb->magic == CI_MAGIC ? gp__tp_ci_kept(cb, &k) : GP_EINVAL;
  if (rc)
    return rc;
  const ci_rec *rec = (const ci_rec *)cb->p;
  int64_t trace_end = (int64_t)head[1];
  *nparts = b->nparts;
  uint64_t ns = b->count, n = 0;
  seg *sg = malloc((ns ? ns : 1) * sizeof(*sg));
  uint32_t *grp = NULL;
  if (!sg)
    return GP_ENOMEM;
  rc = GP_EINVAL;
  size_t at = sizeof(head);
  for (uint64_t i = 0; i < ns; i++) {
    if (at + 8 > size)
      goto out;
    memcpy(&sg[i].track, p + at, 8);
    at += 8;
    sg[i].part = p + at;
    if (!(at = skip_parts(p, at, size, b->nparts)))
      goto out;
    sg[i].plen = (uint32_t)(p + at - sg[i].part);
    gp__tp_ci_track(k, rec, sg[i].track, &sg[i].lo, &sg[i].hi);
    n += sg[i].hi - sg[i].lo;
  }
  if (n > UINT32_MAX)
    goto out;
  rc = GP_ENOMEM;
  if (!ivtab_alloc(t, n, ns) || !(grp = gp__tp_array_alloc(n, 4)))
    goto out;
  uint64_t i = 0;
  for (uint64_t s = 0; s < ns; s++) {
    uint32_t g;
    if ((rc = group_of(t, sg[s].part, sg[s].plen, &g)) != 0)
      goto out;
    rc = GP_EINVAL;
    for (uint64_t q = sg[s].lo; q < sg[s].hi; q++, i++) {
      const ci_rec *r = &rec[k->kept[q]];
      /* An interval lasts until the next of its track, the last until
       * trace_end (counter_intervals.c's dur). */
      int64_t dur = gp__tp_ssub(
          q + 1 < sg[s].hi ? rec[k->kept[q + 1]].ts : trace_end, r->ts);
      if (r->ts < 0 || dur < 0) {
        *why = "interval intersect: ts and dur must not be negative";
        goto out;
      }
      t->id[i] = r->id;
      t->ts[i] = r->ts;
      t->end[i] = dur > INT64_MAX - r->ts ? INT64_MAX : r->ts + dur;
      grp[i] = g;
    }
    t->gstart[g + 1] += sg[s].hi - sg[s].lo;
  }
  rc = order_rows(t, grp);
out:
  free(sg);
  gp__tp_array_free(grp, n, 4);
  return rc;
}

/* ------------------------------------------------------------------ */
/* The sweep                                                             */

/* An interval of a running intersection: [ts, end) and the row of the
 * input tables it came from (ids[] of k tables, stride k). */
typedef struct ivset {
  uint64_t n, cap;
  int64_t *ts, *end;
  int64_t *ids;
  int k;
} ivset;

static void ivset_free(ivset *s) {
  free(s->ts);
  free(s->end);
  free(s->ids);
  memset(s, 0, sizeof(*s));
}

static bool ivset_push(ivset *s, int64_t ts, int64_t end, const int64_t *ids) {
  if (s->n == s->cap) {
    uint64_t cap = s->cap ? s->cap * 2 : 64;
    int64_t *a = realloc(s->ts, cap * 8), *b = NULL, *c = NULL;
    if (a)
      s->ts = a;
    b = a ? realloc(s->end, cap * 8) : NULL;
    if (b)
      s->end = b;
    c = b ? realloc(s->ids, cap * 8 * (uint64_t)s->k) : NULL;
    if (!c)
      return false;
    s->ids = c;
    s->cap = cap;
  }
  s->ts[s->n] = ts;
  s->end[s->n] = end;
  memcpy(s->ids + s->n * (uint64_t)s->k, ids, 8 * (size_t)s->k);
  s->n++;
  return true;
}

/* Min-heap of interval indices by (end, instants last). */
typedef struct heap {
  uint32_t *v;
  uint64_t n, cap;
  const int64_t *ts, *end;
} heap;

static bool heap_less(const heap *h, uint32_t a, uint32_t b) {
  if (h->end[a] != h->end[b])
    return h->end[a] < h->end[b];
  bool ia = h->ts[a] == h->end[a], ib = h->ts[b] == h->end[b];
  return !ia && ib;
}

static bool heap_push(heap *h, uint32_t x) {
  if (h->n == h->cap) {
    uint64_t cap = h->cap ? h->cap * 2 : 64;
    uint32_t *v = realloc(h->v, cap * 4);
    if (!v)
      return false;
    h->v = v;
    h->cap = cap;
  }
  uint64_t i = h->n++;
  while (i > 0 && heap_less(h, x, h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
  return true;
}

static void heap_pop(heap *h) {
  uint32_t x = h->v[--h->n];
  uint64_t i = 0;
  for (;;) {
    uint64_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && heap_less(h, h->v[c + 1], h->v[c]))
      c++;
    if (!heap_less(h, h->v[c], x))
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n)
    h->v[i] = x;
}

/* Whether [ts, end) can overlap nothing that starts at cur or later. */
static bool expired(int64_t ts, int64_t end, int64_t cur) {
  return end < cur || (end == cur && ts != end);
}

/* Drops what cannot overlap anything starting at cur. */
static void heap_expire(heap *h, int64_t cur) {
  while (h->n && expired(h->ts[h->v[0]], h->end[h->v[0]], cur))
    heap_pop(h);
}

/* The intersection of [s, e) and [a, b) known to overlap. */
static void clip(int64_t s, int64_t e, int64_t a, int64_t b, int64_t *rs,
                 int64_t *re) {
  if (s == e) {
    *rs = *re = s;
  } else if (a == b) {
    *rs = *re = a;
  } else {
    *rs = s > a ? s : a;
    *re = e < b ? e : b;
  }
}

static int ts_cmp(const void *x, const void *y, void *arg) {
  const int64_t *cmp_ts = arg;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  if (cmp_ts[i] != cmp_ts[j])
    return cmp_ts[i] < cmp_ts[j] ? -1 : 1;
  return i < j ? -1 : (i > j);
}

/*
 * a = a ∩ (rows [lo, hi) of t's order, filling ids column `col`). t's
 * rows are read where they are (no copy: fresh memory costs page faults);
 * its heap holds their row numbers. Returns 0 or GP_ENOMEM.
 */
static int intersect_step(ivset *a, const ivtab *t, uint64_t lo, uint64_t hi,
                          int col) {
  uint64_t na = a->n, nb = hi - lo;
  uint32_t *oa = malloc((na ? na : 1) * 4);
  const uint32_t *ob = t->order + lo;
  const int64_t *bts = t->ts, *bend = t->end;
  ivset out = {0, 0, NULL, NULL, NULL, a->k};
  heap ha = {NULL, 0, 0, a->ts, a->end}, hb = {NULL, 0, 0, bts, bend};
  int rc = GP_ENOMEM;
  int64_t *ids = malloc(8 * (size_t)a->k);
  if (!oa || !ids)
    goto out;
  for (uint64_t i = 0; i < na; i++)
    oa[i] = (uint32_t)i;
  qsort_r(oa, na, 4, ts_cmp, a->ts);
  uint64_t i = 0, j = 0;
  while (i < na || j < nb) {
    /* One side done and nothing of it open: nothing more overlaps. */
    if ((i == na && ha.n == 0) || (j == nb && hb.n == 0))
      break;
    bool take_a = j >= nb || (i < na && a->ts[oa[i]] <= bts[ob[j]]);
    if (take_a) {
      uint32_t x = oa[i++];
      int64_t s = a->ts[x], e = a->end[x];
      heap_expire(&hb, s);
      for (uint64_t q = 0; q < hb.n; q++) {
        uint32_t y = hb.v[q];
        int64_t rs, re;
        clip(s, e, bts[y], bend[y], &rs, &re);
        memcpy(ids, a->ids + (uint64_t)x * (uint64_t)a->k, 8 * (size_t)a->k);
        ids[col] = (int64_t)(uint32_t)t->id[y];
        if (!ivset_push(&out, rs, re, ids))
          goto out;
      }
      /* Open it only if the next start of the other side can still
       * meet it (heap_expire would drop it there): a long table beside
       * a short one then costs a comparison per row, not a heap push. */
      if (j < nb && !expired(s, e, bts[ob[j]]) && !heap_push(&ha, x))
        goto out;
    } else {
      uint32_t y = ob[j++];
      int64_t s = bts[y], e = bend[y];
      heap_expire(&ha, s);
      for (uint64_t q = 0; q < ha.n; q++) {
        uint32_t x = ha.v[q];
        int64_t rs, re;
        clip(s, e, a->ts[x], a->end[x], &rs, &re);
        memcpy(ids, a->ids + (uint64_t)x * (uint64_t)a->k, 8 * (size_t)a->k);
        ids[col] = (int64_t)(uint32_t)t->id[y];
        if (!ivset_push(&out, rs, re, ids))
          goto out;
      }
      if (i < na && !expired(s, e, a->ts[oa[i]]) && !heap_push(&hb, y))
        goto out;
    }
  }
  ivset_free(a);
  *a = out;
  out.ts = out.end = out.ids = NULL;
  rc = 0;
out:
  ivset_free(&out);
  free(oa);
  free(ids);
  free(ha.v);
  free(hb.v);
  return rc;
}

/* The result of one intersection: rows of ts, dur and ids, and for each
 * row the partition group it belongs to (partition bytes are copied). */
typedef struct ivresult {
  int refs;
  int k;
  uint32_t nparts;
  uint64_t n, cap;
  int64_t *ts, *dur, *ids;
  uint32_t *grp;
  uint8_t **gpart; /* owned copies */
  uint32_t ngroups;
  uint64_t key; /* hash of the inputs' handles */
} ivresult;

static void result_put(ivresult *r) {
  if (!r || --r->refs > 0)
    return;
  free(r->ts);
  free(r->dur);
  free(r->ids);
  free(r->grp);
  for (uint32_t g = 0; g < r->ngroups; g++)
    free(r->gpart[g]);
  free(r->gpart);
  free(r);
}

static int result_add(ivresult *r, const ivset *s, const uint8_t *part,
                      uint32_t plen) {
  uint8_t **gp = realloc(r->gpart, (r->ngroups + 1) * sizeof(*gp));
  if (!gp)
    return GP_ENOMEM;
  r->gpart = gp;
  if (!(gp[r->ngroups] = malloc(plen ? plen : 1)))
    return GP_ENOMEM;
  memcpy(gp[r->ngroups], part, plen);
  uint32_t g = r->ngroups++;
  if (r->n + s->n > r->cap) {
    uint64_t c = r->cap ? r->cap : 64;
    while (c < r->n + s->n)
      c *= 2;
    int64_t *a = realloc(r->ts, c * 8);
    if (!a)
      return GP_ENOMEM;
    r->ts = a;
    if (!(a = realloc(r->dur, c * 8)))
      return GP_ENOMEM;
    r->dur = a;
    if (!(a = realloc(r->ids, c * 8 * (uint64_t)r->k)))
      return GP_ENOMEM;
    r->ids = a;
    uint32_t *q = realloc(r->grp, c * 4);
    if (!q)
      return GP_ENOMEM;
    r->grp = q;
    r->cap = c;
  }
  for (uint64_t i = 0; i < s->n; i++) {
    r->ts[r->n] = s->ts[i];
    r->dur[r->n] = s->end[i] - s->ts[i];
    memcpy(r->ids + r->n * (uint64_t)r->k, s->ids + i * (uint64_t)s->k,
           8 * (size_t)r->k);
    r->grp[r->n] = g;
    r->n++;
  }
  return 0;
}

/* Intersects k interval tables (NULL: an empty table). */
static int intersect(gp_tp *tp, const gp__tp_buf *const *bufs, int k,
                     ivresult **out, const char **why) {
  ivtab t[MAX_TABLES];
  memset(t, 0, sizeof(t));
  ivresult *r = calloc(1, sizeof(*r));
  int rc = GP_ENOMEM;
  ivset cur = {0, 0, NULL, NULL, NULL, k};
  int64_t *ids = calloc((size_t)k, 8);
  if (!r || !ids)
    goto out;
  r->refs = 1;
  r->k = k;
  bool any_empty = false;
  for (int i = 0; i < k; i++) {
    if (!bufs[i]) {
      any_empty = true;
      continue;
    }
    uint32_t np = 0;
    rc = bufs[i]->magic == IVC_MAGIC ? load_ivc(tp, bufs[i], &np, &t[i], why)
                                     : load_iv(bufs[i], &np, &t[i], why);
    if (rc)
      goto out;
    if (i == 0 || !r->nparts)
      r->nparts = np;
    else if (np != r->nparts) {
      rc = GP_EINVAL;
      *why = "interval intersect: tables disagree on partition columns";
      goto out;
    }
  }
  rc = 0;
  if (any_empty)
    goto done; /* an empty input: an empty result */
  /* Tables by ascending size, as Perfetto does. */
  int ord[MAX_TABLES];
  for (int i = 0; i < k; i++)
    ord[i] = i;
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && t[ord[j]].n < t[ord[j - 1]].n; j--) {
      int x = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = x;
    }
  /* Each partition of the smallest table that every table has. */
  const ivtab *first = &t[ord[0]];
  for (uint32_t g = 0; g < first->ngroups; g++) {
    uint32_t grp[MAX_TABLES];
    bool all = true;
    for (int i = 0; i < k && all; i++) {
      grp[i] = find_group(&t[i], first->gpart[g], first->gplen[g]);
      all = grp[i] != UINT32_MAX;
    }
    if (!all)
      continue;
    cur.n = 0;
    const ivtab *f = first;
    uint32_t fg = grp[ord[0]];
    for (uint64_t q = f->gstart[fg]; q < f->gstart[fg + 1]; q++) {
      uint32_t row = f->order[q];
      ids[ord[0]] = (int64_t)(uint32_t)f->id[row];
      if (!ivset_push(&cur, f->ts[row], f->end[row], ids)) {
        rc = GP_ENOMEM;
        goto out;
      }
    }
    for (int s = 1; s < k && cur.n; s++) {
      const ivtab *ts = &t[ord[s]];
      uint32_t sg = grp[ord[s]];
      if ((rc = intersect_step(&cur, ts, ts->gstart[sg], ts->gstart[sg + 1],
                               ord[s])))
        goto out;
    }
    if (cur.n && (rc = result_add(r, &cur, first->gpart[g], first->gplen[g])))
      goto out;
  }
done:
  *out = r;
  r = NULL;
out:
  if (rc == GP_ENOMEM)
    *why = "out of memory";
  free(ids);
  ivset_free(&cur);
  for (int i = 0; i < k; i++)
    ivtab_free(&t[i]);
  result_put(r);
  return rc;
}

/* ------------------------------------------------------------------ */
/* __gp_intersect(...): the table-valued function                         */

enum {
  IX_TS,
  IX_DUR,
  IX_ID0,
  IX_P0 = IX_ID0 + MAX_TABLES,
  IX_B0 = IX_P0 + MAX_PARTS,
  IX_NCOLS = IX_B0 + MAX_TABLES
};

typedef struct ix_vtab {
  sqlite3_vtab base;
  gp_tp *tp;
  ivresult *cached;
} ix_vtab;

typedef struct ix_cursor {
  sqlite3_vtab_cursor base;
  ivresult *r;
  uint64_t row;
} ix_cursor;

static int ix_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err) {
  (void)argc;
  (void)argv;
  (void)err;
  char sql[1024] = "CREATE TABLE x(ts, dur";
  size_t n = strlen(sql);
  for (int i = 0; i < MAX_TABLES; i++)
    n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", id_%d", i);
  for (int i = 0; i < MAX_PARTS; i++)
    n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", p_%d", i);
  for (int i = 0; i < MAX_TABLES; i++)
    n += (size_t)snprintf(sql + n, sizeof(sql) - n, ", b%d HIDDEN", i);
  snprintf(sql + n, sizeof(sql) - n, ")");
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK)
    return rc;
  ix_vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  v->tp = aux;
  *out = &v->base;
  return SQLITE_OK;
}

static int ix_disconnect(sqlite3_vtab *tab) {
  result_put(((ix_vtab *)tab)->cached);
  sqlite3_free(tab);
  return SQLITE_OK;
}

static int ix_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  return gp__tp_hidden_best_index(info, IX_B0, MAX_TABLES);
}

static int ix_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  return gp__tp_cursor_open(sizeof(ix_cursor), out);
}

static int ix_close(sqlite3_vtab_cursor *cur) {
  result_put(((ix_cursor *)cur)->r);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int ix_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                     int argc, sqlite3_value **argv) {
  (void)s;
  ix_cursor *c = (ix_cursor *)cur;
  ix_vtab *v = (ix_vtab *)cur->pVtab;
  result_put(c->r);
  c->r = NULL;
  c->row = 0;
  int k = argc;
  if (k < 1 || mask != (1 << k) - 1)
    return gp__tp_vtab_error(
        cur->pVtab, "interval intersect: tables must be given in order");
  const gp__tp_buf *bufs[MAX_TABLES];
  uint64_t key = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < k; i++) {
    bool empty;
    bufs[i] = gp__tp_arg_buf(v->tp, argv[i], IV_MAGIC, &empty);
    if (!bufs[i] && !empty)
      bufs[i] = gp__tp_arg_buf(v->tp, argv[i], IVC_MAGIC, &empty);
    if (!bufs[i] && !empty)
      return gp__tp_vtab_error(cur->pVtab,
                               "interval intersect: not an interval table");
    key = gp__tp_mix64(key ^ (bufs[i] ? bufs[i]->id : 0)) + (uint64_t)i;
  }
  /* The planner may run us once per outer row: reuse the last result.
   * Handles are never reused, so a match is the same input. */
  if (v->cached && v->cached->key == key && v->cached->k == k) {
    c->r = v->cached;
    c->r->refs++;
    return SQLITE_OK;
  }
  const char *why = "interval intersect failed";
  ivresult *r = NULL;
  if (intersect(v->tp, bufs, k, &r, &why) != 0)
    return gp__tp_vtab_error(cur->pVtab, why);
  r->key = key;
  result_put(v->cached);
  v->cached = r;
  r->refs++;
  c->r = r;
  return SQLITE_OK;
}

static int ix_next(sqlite3_vtab_cursor *cur) {
  ((ix_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int ix_eof(sqlite3_vtab_cursor *cur) {
  ix_cursor *c = (ix_cursor *)cur;
  return !c->r || c->row >= c->r->n;
}

/* The value of partition column col from a group's partition bytes. */
static void part_value(sqlite3_context *ctx, const uint8_t *p, uint32_t nparts,
                       int col) {
  for (uint32_t i = 0; i < nparts; i++) {
    uint8_t ty = *p++;
    const uint8_t *v = p;
    uint32_t len = 0;
    if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
      p += 8;
    } else if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) {
      memcpy(&len, p, 4);
      v = p + 4;
      p += 4 + len;
    }
    if ((int)i != col)
      continue;
    int64_t x;
    double d;
    switch (ty) {
    case SQLITE_INTEGER:
      memcpy(&x, v, 8);
      sqlite3_result_int64(ctx, x);
      return;
    case SQLITE_FLOAT:
      memcpy(&d, v, 8);
      sqlite3_result_double(ctx, d);
      return;
    case SQLITE_TEXT:
      sqlite3_result_text(ctx, (const char *)v, (int)len, SQLITE_TRANSIENT);
      return;
    case SQLITE_BLOB:
      sqlite3_result_blob(ctx, v, (int)len, SQLITE_TRANSIENT);
      return;
    default:
      sqlite3_result_null(ctx);
      return;
    }
  }
  sqlite3_result_null(ctx);
}

static int ix_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ix_cursor *c = (ix_cursor *)cur;
  const ivresult *r = c->r;
  uint64_t i = c->row;
  if (col == IX_TS)
    sqlite3_result_int64(ctx, r->ts[i]);
  else if (col == IX_DUR)
    sqlite3_result_int64(ctx, r->dur[i]);
  else if (col < IX_P0 && col - IX_ID0 < r->k)
    sqlite3_result_int64(ctx,
                         r->ids[i * (uint64_t)r->k + (uint64_t)(col - IX_ID0)]);
  else if (col >= IX_P0 && col < IX_B0)
    part_value(ctx, r->gpart[r->grp[i]], r->nparts, col - IX_P0);
  else
    sqlite3_result_null(ctx);
  return SQLITE_OK;
}

static int ix_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ix_cursor *)cur)->row;
  return SQLITE_OK;
}

/* See aggbuf.h. */
sqlite3_module gp__tp_intersect_module = {
    .xConnect = ix_connect,
    .xBestIndex = ix_best_index,
    .xDisconnect = ix_disconnect,
    .xOpen = ix_open,
    .xClose = ix_close,
    .xFilter = ix_filter,
    .xNext = ix_next,
    .xEof = ix_eof,
    .xColumn = ix_column,
    .xRowid = ix_rowid,
};
