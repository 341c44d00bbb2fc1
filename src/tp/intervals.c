/*
 * intervals.c - the engines behind PerfettoSQL's interval macros.
 *
 * _interval_intersect!((t1, ..., tk), (p1, ..., pm)) expands (psql.c) to
 *
 *   __gp_intersect((SELECT __gp_iv_agg(id, ts, dur, p1, ...) FROM t1), ...)
 *
 * The aggregate packs a table's intervals into a blob; the table-valued
 * function intersects them. Per partition (tuple of p values, NULL being
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
 *
 * counter_leading_intervals!(t) expands to __gp_counter_intervals over
 * __gp_ci_agg(id, ts, track_id, value): per track, in ts order (ties in
 * input order), runs of equal values are thinned (a value equal to the
 * last two kept is held back; the latest held-back row is kept when the
 * value changes, and dropped at the end; a held row at ts 0 is never
 * kept), then each kept row lasts until the next one (the last until
 * trace_end()), with next_value and delta_value.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/sqlInt.h"

#define MAX_TABLES 15
#define MAX_PARTS 4

/* ------------------------------------------------------------------ */
/* A growable byte buffer for the aggregates                             */

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
  uint64_t count;
  uint32_t nparts;
  bool error;
  const char *why;
} buf;

static bool buf_put(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->n + n)
      cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
      return false;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, d, n);
  b->n += n;
  return true;
}

static bool buf_i64(buf *b, int64_t v) { return buf_put(b, &v, 8); }

/* Blob layout: magic, count, nparts, then the records. */
#define IV_MAGIC 0x31564947u /* "GIV1" */
#define CI_MAGIC 0x31494347u /* "GCI1" */

typedef struct blob_head {
  uint32_t magic;
  uint32_t nparts;
  uint64_t count;
} blob_head;

static buf *agg_buf(sqlite3_context *ctx, uint32_t magic) {
  buf **slot = sqlite3_aggregate_context(ctx, sizeof(buf *));
  if (!slot)
    return NULL;
  if (!*slot) {
    *slot = calloc(1, sizeof(buf));
    if (!*slot)
      return NULL;
    blob_head h = {magic, 0, 0};
    if (!buf_put(*slot, &h, sizeof(h))) {
      free(*slot);
      *slot = NULL;
      return NULL;
    }
  }
  return *slot;
}

static void agg_final(sqlite3_context *ctx, uint32_t magic) {
  buf **slot = sqlite3_aggregate_context(ctx, 0);
  buf *b = slot ? *slot : NULL;
  if (!b) {
    blob_head h = {magic, 0, 0};
    sqlite3_result_blob(ctx, &h, sizeof(h), SQLITE_TRANSIENT);
    return;
  }
  if (b->error) {
    sqlite3_result_error(ctx, b->why, -1);
  } else {
    blob_head *h = (blob_head *)b->p;
    h->count = b->count;
    h->nparts = b->nparts;
    sqlite3_result_blob64(ctx, b->p, b->n, free);
    b->p = NULL;
  }
  free(b->p);
  free(b);
  *slot = NULL;
}

/* ------------------------------------------------------------------ */
/* __gp_iv_agg(id, ts, dur, p...)                                        */

static void iv_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  buf *b = agg_buf(ctx, IV_MAGIC);
  if (!b) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (b->error)
    return;
  if (argc < 3 || argc > 3 + MAX_PARTS) {
    b->error = true;
    b->why = "interval intersect: bad number of columns";
    return;
  }
  for (int i = 0; i < 3; i++)
    if (sqlite3_value_type(v[i]) != SQLITE_INTEGER) {
      b->error = true;
      b->why = "interval intersect: id, ts and dur must be integers";
      return;
    }
  int64_t id = sqlite3_value_int64(v[0]), ts = sqlite3_value_int64(v[1]),
          dur = sqlite3_value_int64(v[2]);
  if (ts < 0 || dur < 0) {
    b->error = true;
    b->why = "interval intersect: ts and dur must not be negative";
    return;
  }
  b->nparts = (uint32_t)(argc - 3);
  bool ok = buf_i64(b, id) && buf_i64(b, ts) && buf_i64(b, dur);
  for (int i = 3; ok && i < argc; i++) {
    uint8_t t = (uint8_t)sqlite3_value_type(v[i]);
    ok = buf_put(b, &t, 1);
    if (t == SQLITE_INTEGER) {
      ok = ok && buf_i64(b, sqlite3_value_int64(v[i]));
    } else if (t == SQLITE_FLOAT) {
      double d = sqlite3_value_double(v[i]);
      ok = ok && buf_put(b, &d, 8);
    } else if (t == SQLITE_TEXT || t == SQLITE_BLOB) {
      const void *p = t == SQLITE_TEXT ? (const void *)sqlite3_value_text(v[i])
                                       : sqlite3_value_blob(v[i]);
      uint32_t n = (uint32_t)sqlite3_value_bytes(v[i]);
      ok = ok && buf_put(b, &n, 4) && (n == 0 || buf_put(b, p, n));
    }
  }
  if (!ok) {
    b->error = true;
    b->why = "interval intersect: out of memory";
    return;
  }
  b->count++;
}

static void iv_final(sqlite3_context *ctx) { agg_final(ctx, IV_MAGIC); }

/* ------------------------------------------------------------------ */
/* __gp_ci_agg(id, ts, track_id, value)                                  */

static void ci_step(sqlite3_context *ctx, int argc, sqlite3_value **v) {
  buf *b = agg_buf(ctx, CI_MAGIC);
  if (!b) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (b->error || argc != 4)
    return;
  if (sqlite3_value_type(v[3]) == SQLITE_NULL)
    return; /* a counter row without value has no interval */
  for (int i = 0; i < 3; i++)
    if (sqlite3_value_type(v[i]) != SQLITE_INTEGER) {
      b->error = true;
      b->why = "counter_leading_intervals: id, ts and track_id must be "
               "integers";
      return;
    }
  double d = sqlite3_value_double(v[3]);
  if (!(buf_i64(b, sqlite3_value_int64(v[0])) &&
        buf_i64(b, sqlite3_value_int64(v[1])) &&
        buf_i64(b, sqlite3_value_int64(v[2])) && buf_put(b, &d, 8))) {
    b->error = true;
    b->why = "counter_leading_intervals: out of memory";
    return;
  }
  b->count++;
}

static void ci_final(sqlite3_context *ctx) { agg_final(ctx, CI_MAGIC); }

/* ------------------------------------------------------------------ */
/* Parsing an interval blob                                              */

typedef struct ivtab {
  uint64_t n;
  int64_t *id, *ts, *end;
  const uint8_t **part; /* start of each record's partition values */
  uint32_t *plen;
  uint32_t *order; /* by (partition, ts) */
} ivtab;

static void ivtab_free(ivtab *t) {
  free(t->id);
  free(t->ts);
  free(t->end);
  free(t->part);
  free(t->plen);
  free(t->order);
  memset(t, 0, sizeof(*t));
}

static int parse_iv(const uint8_t *p, size_t size, uint32_t *nparts,
                    ivtab *t) {
  blob_head h;
  if (size < sizeof(h))
    return GP_EINVAL;
  memcpy(&h, p, sizeof(h));
  if (h.magic != IV_MAGIC || h.count > size / 24)
    return GP_EINVAL;
  t->n = h.count;
  *nparts = h.nparts;
  size_t n = t->n ? t->n : 1;
  t->id = malloc(n * 8);
  t->ts = malloc(n * 8);
  t->end = malloc(n * 8);
  t->part = malloc(n * sizeof(*t->part));
  t->plen = malloc(n * 4);
  t->order = malloc(n * 4);
  if (!t->id || !t->ts || !t->end || !t->part || !t->plen || !t->order)
    return GP_ENOMEM;
  size_t at = sizeof(h);
  for (uint64_t i = 0; i < t->n; i++) {
    if (at + 24 > size)
      return GP_EINVAL;
    int64_t dur;
    memcpy(&t->id[i], p + at, 8);
    memcpy(&t->ts[i], p + at + 8, 8);
    memcpy(&dur, p + at + 16, 8);
    /* Both are non-negative; saturate rather than overflow. */
    t->end[i] = dur > INT64_MAX - t->ts[i] ? INT64_MAX : t->ts[i] + dur;
    at += 24;
    t->part[i] = p + at;
    for (uint32_t k = 0; k < h.nparts; k++) {
      if (at + 1 > size)
        return GP_EINVAL;
      uint8_t ty = p[at++];
      if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
        at += 8;
      } else if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) {
        uint32_t len;
        if (at + 4 > size)
          return GP_EINVAL;
        memcpy(&len, p + at, 4);
        at += 4 + (size_t)len;
      }
      if (at > size)
        return GP_EINVAL;
    }
    t->plen[i] = (uint32_t)(p + at - t->part[i]);
    t->order[i] = (uint32_t)i;
  }
  return 0;
}

static int part_cmp(const uint8_t *a, uint32_t an, const uint8_t *b,
                    uint32_t bn) {
  if (an != bn)
    return an < bn ? -1 : 1;
  return memcmp(a, b, an);
}

static int order_cmp(const void *x, const void *y, void *arg) {
  const ivtab *sort_tab = arg;
  uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
  int c = part_cmp(sort_tab->part[i], sort_tab->plen[i], sort_tab->part[j],
                   sort_tab->plen[j]);
  if (c)
    return c;
  if (sort_tab->ts[i] != sort_tab->ts[j])
    return sort_tab->ts[i] < sort_tab->ts[j] ? -1 : 1;
  return i < j ? -1 : (i > j);
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

/* Drops what cannot overlap anything starting at cur. */
static void heap_expire(heap *h, int64_t cur) {
  while (h->n) {
    uint32_t t = h->v[0];
    bool instant = h->ts[t] == h->end[t];
    if (h->end[t] < cur || (h->end[t] == cur && !instant))
      heap_pop(h);
    else
      break;
  }
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
 * a = a ∩ (rows [lo, hi) of t's order, filling ids column `col`).
 * Returns 0 or GP_ENOMEM.
 */
static int intersect_step(ivset *a, const ivtab *t, uint64_t lo, uint64_t hi,
                          int col) {
  uint64_t na = a->n, nb = hi - lo;
  uint32_t *oa = malloc((na ? na : 1) * 4);
  int64_t *bts = malloc((nb ? nb : 1) * 8), *bend = malloc((nb ? nb : 1) * 8);
  ivset out = {0, 0, NULL, NULL, NULL, a->k};
  heap ha = {NULL, 0, 0, a->ts, a->end}, hb = {NULL, 0, 0, bts, bend};
  int rc = GP_ENOMEM;
  int64_t *ids = malloc(8 * (size_t)a->k);
  if (!oa || !bts || !bend || !ids)
    goto out;
  for (uint64_t i = 0; i < na; i++)
    oa[i] = (uint32_t)i;
  qsort_r(oa, na, 4, ts_cmp, a->ts);
  for (uint64_t j = 0; j < nb; j++) {
    uint32_t r = t->order[lo + j];
    bts[j] = t->ts[r];
    bend[j] = t->end[r];
  }
  uint64_t i = 0, j = 0;
  while (i < na || j < nb) {
    bool take_a = j >= nb || (i < na && a->ts[oa[i]] <= bts[j]);
    if (take_a) {
      uint32_t x = oa[i++];
      int64_t s = a->ts[x], e = a->end[x];
      heap_expire(&hb, s);
      for (uint64_t q = 0; q < hb.n; q++) {
        uint32_t y = hb.v[q];
        int64_t rs, re;
        clip(s, e, bts[y], bend[y], &rs, &re);
        memcpy(ids, a->ids + (uint64_t)x * (uint64_t)a->k, 8 * (size_t)a->k);
        ids[col] = (int64_t)(uint32_t)t->id[t->order[lo + y]];
        if (!ivset_push(&out, rs, re, ids))
          goto out;
      }
      if (!heap_push(&ha, x))
        goto out;
    } else {
      uint32_t y = (uint32_t)j++;
      int64_t s = bts[y], e = bend[y];
      heap_expire(&ha, s);
      for (uint64_t q = 0; q < ha.n; q++) {
        uint32_t x = ha.v[q];
        int64_t rs, re;
        clip(s, e, a->ts[x], a->end[x], &rs, &re);
        memcpy(ids, a->ids + (uint64_t)x * (uint64_t)a->k, 8 * (size_t)a->k);
        ids[col] = (int64_t)(uint32_t)t->id[t->order[lo + y]];
        if (!ivset_push(&out, rs, re, ids))
          goto out;
      }
      if (!heap_push(&hb, y))
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
  free(bts);
  free(bend);
  free(ids);
  free(ha.v);
  free(hb.v);
  return rc;
}

/* The result of one intersection: rows of ts, dur, ids and a pointer to
 * the partition values (into the copy of table 0's blob). */
typedef struct ivresult {
  int refs;
  int k;
  uint32_t nparts;
  uint64_t n;
  int64_t *ts, *dur, *ids;
  const uint8_t **part;
  uint8_t *blob0; /* owned copy of table 0's blob */
  uint64_t key;   /* hash of the inputs */
} ivresult;

static void result_put(ivresult *r) {
  if (!r || --r->refs > 0)
    return;
  free(r->ts);
  free(r->dur);
  free(r->ids);
  free(r->part);
  free(r->blob0);
  free(r);
}

static int result_add(ivresult *r, uint64_t *cap, const ivset *s,
                      const uint8_t *part) {
  if (r->n + s->n > *cap) {
    uint64_t c = *cap ? *cap : 64;
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
    const uint8_t **p = realloc(r->part, c * sizeof(*p));
    if (!p)
      return GP_ENOMEM;
    r->part = p;
    *cap = c;
  }
  for (uint64_t i = 0; i < s->n; i++) {
    r->ts[r->n] = s->ts[i];
    r->dur[r->n] = s->end[i] - s->ts[i];
    memcpy(r->ids + r->n * (uint64_t)r->k, s->ids + i * (uint64_t)s->k,
           8 * (size_t)r->k);
    r->part[r->n] = part;
    r->n++;
  }
  return 0;
}

/* Intersects k blobs (the first copied into the result). */
static int intersect(const uint8_t *const *blobs, const size_t *sizes, int k,
                     ivresult **out, const char **why) {
  ivtab t[MAX_TABLES];
  memset(t, 0, sizeof(t));
  ivresult *r = calloc(1, sizeof(*r));
  int rc = GP_ENOMEM;
  uint64_t cap = 0;
  ivset cur = {0, 0, NULL, NULL, NULL, k};
  if (!r)
    return GP_ENOMEM;
  r->refs = 1;
  r->k = k;
  r->blob0 = malloc(sizes[0] ? sizes[0] : 1);
  if (!r->blob0)
    goto out;
  memcpy(r->blob0, blobs[0], sizes[0]);
  for (int i = 0; i < k; i++) {
    uint32_t np;
    rc = parse_iv(i ? blobs[i] : r->blob0, sizes[i], &np, &t[i]);
    if (rc) {
      *why = rc == GP_ENOMEM ? "out of memory"
                             : "interval intersect: not an interval table";
      goto out;
    }
    if (i == 0)
      r->nparts = np;
    else if (np != r->nparts && t[i].n && t[0].n) {
      rc = GP_EINVAL;
      *why = "interval intersect: tables disagree on partition columns";
      goto out;
    }
    qsort_r(t[i].order, t[i].n, 4, order_cmp, &t[i]);
  }
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
  uint64_t pos[MAX_TABLES] = {0};
  int64_t *ids = calloc((size_t)k, 8);
  if (!ids)
    goto out;
  for (;;) {
    /* The greatest partition at the heads; advance the others to it. */
    bool done = false;
    int maxi = 0;
    for (int i = 0; i < k && !done; i++) {
      if (pos[i] >= t[i].n) {
        done = true;
        break;
      }
      uint32_t a = t[i].order[pos[i]], b = t[maxi].order[pos[maxi]];
      if (part_cmp(t[i].part[a], t[i].plen[a], t[maxi].part[b],
                   t[maxi].plen[b]) > 0)
        maxi = i;
    }
    if (done)
      break;
    uint32_t mb = t[maxi].order[pos[maxi]];
    const uint8_t *mp = t[maxi].part[mb];
    uint32_t ml = t[maxi].plen[mb];
    bool all = true;
    uint64_t end[MAX_TABLES];
    for (int i = 0; i < k; i++) {
      while (pos[i] < t[i].n &&
             part_cmp(t[i].part[t[i].order[pos[i]]],
                      t[i].plen[t[i].order[pos[i]]], mp, ml) < 0)
        pos[i]++;
      if (pos[i] >= t[i].n ||
          part_cmp(t[i].part[t[i].order[pos[i]]], t[i].plen[t[i].order[pos[i]]],
                   mp, ml) != 0) {
        all = false;
        continue;
      }
      end[i] = pos[i];
      while (end[i] < t[i].n &&
             part_cmp(t[i].part[t[i].order[end[i]]],
                      t[i].plen[t[i].order[end[i]]], mp, ml) == 0)
        end[i]++;
    }
    if (!all)
      continue;
    /* Intersect this partition's groups. */
    cur.n = 0;
    int first = ord[0];
    for (uint64_t q = pos[first]; q < end[first]; q++) {
      uint32_t row = t[first].order[q];
      ids[first] = (int64_t)(uint32_t)t[first].id[row];
      if (!ivset_push(&cur, t[first].ts[row], t[first].end[row], ids))
        goto out_ids;
    }
    for (int s = 1; s < k && cur.n; s++)
      if ((rc = intersect_step(&cur, &t[ord[s]], pos[ord[s]], end[ord[s]],
                               ord[s])))
        goto out_ids;
    /* Partition values of this group, from table 0's copy. */
    const uint8_t *part = t[0].part[t[0].order[pos[0]]];
    if ((rc = result_add(r, &cap, &cur, part)))
      goto out_ids;
    for (int i = 0; i < k; i++)
      pos[i] = end[i];
  }
  rc = 0;
  *out = r;
  r = NULL;
out_ids:
  free(ids);
out:
  if (rc == GP_ENOMEM)
    *why = "out of memory";
  ivset_free(&cur);
  for (int i = 0; i < k; i++)
    ivtab_free(&t[i]);
  result_put(r);
  return rc;
}

/* ------------------------------------------------------------------ */
/* __gp_intersect(...): the table-valued function                         */

enum { IX_TS, IX_DUR, IX_ID0, IX_P0 = IX_ID0 + MAX_TABLES,
       IX_B0 = IX_P0 + MAX_PARTS, IX_NCOLS = IX_B0 + MAX_TABLES };

typedef struct ix_vtab {
  sqlite3_vtab base;
  ivresult *cached;
} ix_vtab;

typedef struct ix_cursor {
  sqlite3_vtab_cursor base;
  ivresult *r;
  uint64_t row;
} ix_cursor;

static int ix_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  (void)aux;
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
  *out = &v->base;
  return SQLITE_OK;
}

static int ix_disconnect(sqlite3_vtab *tab) {
  result_put(((ix_vtab *)tab)->cached);
  sqlite3_free(tab);
  return SQLITE_OK;
}

/* Table-valued functions take their arguments as equality constraints
 * on the hidden columns, which must all be usable. */
static int hidden_best_index(sqlite3_index_info *info, int first_hidden,
                             int nhidden) {
  int mask = 0;
  int argi[32];
  for (int i = 0; i < 32; i++)
    argi[i] = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    int h = c->iColumn - first_hidden;
    if (h < 0 || h >= nhidden || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if (!c->usable)
      return SQLITE_CONSTRAINT;
    mask |= 1 << h;
    argi[h] = i;
  }
  int arg = 1;
  for (int h = 0; h < nhidden; h++)
    if (argi[h] >= 0) {
      info->aConstraintUsage[argi[h]].argvIndex = arg++;
      info->aConstraintUsage[argi[h]].omit = 1;
    }
  info->idxNum = mask;
  info->estimatedCost = 1000;
  info->estimatedRows = 1000;
  return SQLITE_OK;
}

static int ix_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  return hidden_best_index(info, IX_B0, MAX_TABLES);
}

static int cur_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  ix_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *out = &c->base;
  return SQLITE_OK;
}

static int ix_close(sqlite3_vtab_cursor *cur) {
  result_put(((ix_cursor *)cur)->r);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int set_vtab_error(sqlite3_vtab *tab, const char *msg) {
  sqlite3_free(tab->zErrMsg);
  tab->zErrMsg = sqlite3_mprintf("%s", msg);
  return SQLITE_ERROR;
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
    return set_vtab_error(cur->pVtab,
                          "interval intersect: tables must be given in order");
  const uint8_t *blobs[MAX_TABLES];
  size_t sizes[MAX_TABLES];
  uint64_t key = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < k; i++) {
    if (sqlite3_value_type(argv[i]) != SQLITE_BLOB)
      return set_vtab_error(cur->pVtab,
                            "interval intersect: not an interval table");
    blobs[i] = sqlite3_value_blob(argv[i]);
    sizes[i] = (size_t)sqlite3_value_bytes(argv[i]);
    key = gp__tp_hash_bytes(blobs[i], sizes[i], key);
  }
  /* The planner may run us once per outer row: reuse the last result. */
  if (v->cached && v->cached->key == key && v->cached->k == k) {
    c->r = v->cached;
    c->r->refs++;
    return SQLITE_OK;
  }
  const char *why = "interval intersect failed";
  ivresult *r = NULL;
  if (intersect(blobs, sizes, k, &r, &why) != 0)
    return set_vtab_error(cur->pVtab, why);
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

/* The value of partition column p of a record's partition bytes. */
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
  else if (col < IX_P0)
    if (col - IX_ID0 < r->k)
      sqlite3_result_int64(ctx, r->ids[i * (uint64_t)r->k + (uint64_t)(col - IX_ID0)]);
    else
      sqlite3_result_null(ctx);
  else if (col < IX_B0)
    part_value(ctx, r->part[i], r->nparts, col - IX_P0);
  else
    sqlite3_result_null(ctx);
  return SQLITE_OK;
}

static int cur_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ix_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module ix_module = {
    .xConnect = ix_connect,
    .xBestIndex = ix_best_index,
    .xDisconnect = ix_disconnect,
    .xOpen = cur_open,
    .xClose = ix_close,
    .xFilter = ix_filter,
    .xNext = ix_next,
    .xEof = ix_eof,
    .xColumn = ix_column,
    .xRowid = cur_rowid,
};

/* ------------------------------------------------------------------ */
/* __gp_counter_intervals(blob, trace_end)                               */

typedef struct ci_row {
  int64_t id, ts, track;
  double value;
  uint64_t seq;
} ci_row;

typedef struct ci_out {
  int64_t id, ts, dur, track;
  double value, next, delta;
  bool has_next, has_delta;
} ci_out;

typedef struct ci_cursor {
  sqlite3_vtab_cursor base;
  ci_out *rows;
  uint64_t n, row;
} ci_cursor;

enum { CI_ID, CI_TS, CI_DUR, CI_TRACK, CI_VALUE, CI_NEXT, CI_DELTA, CI_BLOB,
       CI_END };

static int ci_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(
      db, "CREATE TABLE x(id, ts, dur, track_id, value, next_value, "
          "delta_value, b HIDDEN, trace_end HIDDEN)");
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_vtab *v = sqlite3_malloc(sizeof(*v));
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof(*v));
  *out = v;
  return SQLITE_OK;
}

static int ci_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

static int ci_best_index(sqlite3_vtab *tab, sqlite3_index_info *info) {
  (void)tab;
  return hidden_best_index(info, CI_BLOB, 2);
}

static int ci_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out) {
  (void)tab;
  ci_cursor *c = sqlite3_malloc(sizeof(*c));
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *out = &c->base;
  return SQLITE_OK;
}

static int ci_close(sqlite3_vtab_cursor *cur) {
  free(((ci_cursor *)cur)->rows);
  sqlite3_free(cur);
  return SQLITE_OK;
}

static int ci_cmp(const void *x, const void *y) {
  const ci_row *a = x, *b = y;
  if (a->track != b->track)
    return a->track < b->track ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Emits the kept rows of one track, [lo, hi) of kept[]. */
static void ci_emit(ci_cursor *c, const ci_row *kept, uint64_t nk,
                    int64_t trace_end) {
  for (uint64_t i = 0; i < nk; i++) {
    ci_out *o = &c->rows[c->n++];
    o->id = kept[i].id;
    o->ts = kept[i].ts;
    o->track = kept[i].track;
    o->value = kept[i].value;
    o->has_next = i + 1 < nk;
    o->dur = (o->has_next ? kept[i + 1].ts : trace_end) - kept[i].ts;
    o->next = o->has_next ? kept[i + 1].value : 0;
    o->has_delta = i > 0;
    o->delta = i > 0 ? kept[i].value - kept[i - 1].value : 0;
  }
}

static int ci_filter(sqlite3_vtab_cursor *cur, int mask, const char *s,
                     int argc, sqlite3_value **argv) {
  (void)s;
  ci_cursor *c = (ci_cursor *)cur;
  free(c->rows);
  c->rows = NULL;
  c->n = c->row = 0;
  if (mask != 3 || argc != 2 || sqlite3_value_type(argv[0]) != SQLITE_BLOB)
    return set_vtab_error(cur->pVtab,
                          "counter_leading_intervals: not a counter table");
  const uint8_t *p = sqlite3_value_blob(argv[0]);
  size_t size = (size_t)sqlite3_value_bytes(argv[0]);
  int64_t trace_end = sqlite3_value_int64(argv[1]);
  blob_head h;
  if (size < sizeof(h))
    return set_vtab_error(cur->pVtab, "counter_leading_intervals: bad input");
  memcpy(&h, p, sizeof(h));
  if (h.magic != CI_MAGIC || h.count > (size - sizeof(h)) / 32)
    return set_vtab_error(cur->pVtab, "counter_leading_intervals: bad input");
  uint64_t n = h.count;
  ci_row *in = malloc((n ? n : 1) * sizeof(ci_row));
  ci_row *kept = malloc((n ? n : 1) * sizeof(ci_row));
  c->rows = malloc((n ? n : 1) * sizeof(ci_out));
  if (!in || !kept || !c->rows) {
    free(in);
    free(kept);
    return SQLITE_NOMEM;
  }
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t *r = p + sizeof(h) + i * 32;
    memcpy(&in[i].id, r, 8);
    memcpy(&in[i].ts, r + 8, 8);
    memcpy(&in[i].track, r + 16, 8);
    memcpy(&in[i].value, r + 24, 8);
    in[i].seq = i;
  }
  qsort(in, n, sizeof(ci_row), ci_cmp);
  for (uint64_t lo = 0; lo < n;) {
    uint64_t hi = lo;
    while (hi < n && in[hi].track == in[lo].track)
      hi++;
    uint64_t nk = 0;
    bool held = false;
    ci_row hrow;
    for (uint64_t i = lo; i < hi; i++) {
      if (nk >= 2 && in[i].value == kept[nk - 1].value &&
          in[i].value == kept[nk - 2].value) {
        held = true;
        hrow = in[i];
        continue;
      }
      if (held && hrow.ts != 0)
        kept[nk++] = hrow;
      held = false;
      kept[nk++] = in[i];
    }
    ci_emit(c, kept, nk, trace_end);
    lo = hi;
  }
  free(in);
  free(kept);
  return SQLITE_OK;
}

static int ci_next(sqlite3_vtab_cursor *cur) {
  ((ci_cursor *)cur)->row++;
  return SQLITE_OK;
}

static int ci_eof(sqlite3_vtab_cursor *cur) {
  ci_cursor *c = (ci_cursor *)cur;
  return c->row >= c->n;
}

static int ci_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  ci_cursor *c = (ci_cursor *)cur;
  const ci_out *o = &c->rows[c->row];
  switch (col) {
  case CI_ID: sqlite3_result_int64(ctx, o->id); break;
  case CI_TS: sqlite3_result_int64(ctx, o->ts); break;
  case CI_DUR: sqlite3_result_int64(ctx, o->dur); break;
  case CI_TRACK: sqlite3_result_int64(ctx, o->track); break;
  case CI_VALUE: sqlite3_result_double(ctx, o->value); break;
  case CI_NEXT:
    if (o->has_next)
      sqlite3_result_double(ctx, o->next);
    else
      sqlite3_result_null(ctx);
    break;
  case CI_DELTA:
    if (o->has_delta)
      sqlite3_result_double(ctx, o->delta);
    else
      sqlite3_result_null(ctx);
    break;
  default: sqlite3_result_null(ctx); break;
  }
  return SQLITE_OK;
}

static int ci_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  *out = (sqlite3_int64)((ci_cursor *)cur)->row;
  return SQLITE_OK;
}

static sqlite3_module ci_module = {
    .xConnect = ci_connect,
    .xBestIndex = ci_best_index,
    .xDisconnect = ci_disconnect,
    .xOpen = ci_open,
    .xClose = ci_close,
    .xFilter = ci_filter,
    .xNext = ci_next,
    .xEof = ci_eof,
    .xColumn = ci_column,
    .xRowid = ci_rowid,
};

/* See sqlInt.h. */
int gp__tp_intervals_register(gp_tp *tp) {
  int rc = sqlite3_create_function(tp->sql, "__gp_iv_agg", -1, SQLITE_UTF8,
                                   NULL, NULL, iv_step, iv_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(tp->sql, "__gp_ci_agg", 4, SQLITE_UTF8, NULL,
                                 NULL, ci_step, ci_final);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_intersect", &ix_module, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_module(tp->sql, "__gp_counter_intervals", &ci_module,
                               NULL);
  return rc == SQLITE_OK ? 0 : GP_ESQL;
}
