/*
 * clocks.c - clock snapshots and timestamp conversion (see clocks.h).
 */
#include "tp/clocks.h"

#include <stdlib.h>

#include "gpuperf/error.h"

#define MAX_HOPS 4

/* See clocks.h. */
void gp__tp_clocks_init(gp__tp_clocks *c) {
  memset(c, 0, sizeof(*c));
  c->trace_clock = GP_TP_CLOCK_BOOTTIME;
}

/* See clocks.h. */
void gp__tp_clocks_fini(gp__tp_clocks *c) {
  for (size_t i = 0; i < c->info.n; i++) {
    gp__tp_vec_free(&c->info.v[i].out);
    gp__tp_vec_free(&c->info.v[i].live);
    gp__tp_vec_free(&c->info.v[i].snaps);
  }
  for (size_t i = 0; i < c->series.n; i++)
    gp__tp_vec_free(&c->series.v[i].pts);
  gp__tp_vec_free(&c->info);
  gp__tp_vec_free(&c->rd_clock);
  gp__tp_vec_free(&c->rd_ns);
  gp__tp_vec_free(&c->snap);
  gp__tp_map_free(&c->sets);
  gp__tp_vec_free(&c->edges);
  gp__tp_vec_free(&c->series);
  gp__tp_vec_free(&c->scratch);
  gp__tp_map_free(&c->info_by_key);
  gp__tp_map2_free(&c->edge_by_pair);
  gp__tp_map_free(&c->path_by_src);
  gp__tp_vec_free(&c->paths);
}

static void forget_paths(gp__tp_clocks *c) {
  gp__tp_map_free(&c->path_by_src);
  c->paths.n = 0;
}

static gp__tp_clock_info *find_info(gp__tp_clocks *c, uint64_t key) {
  uint64_t *i = gp__tp_map_get(&c->info_by_key, key);
  return i ? &c->info.v[*i] : NULL;
}

static gp__tp_clock_info *get_info(gp__tp_clocks *c, uint64_t key) {
  gp__tp_clock_info *ci = find_info(c, key);
  if (ci)
    return ci;
  if (!gp__tp_vec_reserve(&c->info, 1))
    return NULL;
  bool ins;
  uint64_t *slot = gp__tp_map_put(&c->info_by_key, key, c->info.n, &ins);
  if (!slot)
    return NULL;
  ci = &c->info.v[c->info.n++];
  memset(ci, 0, sizeof(*ci));
  ci->key = key;
  ci->unit = 1;
  return ci;
}

/* Makes the edge from -> to (indexes in info) if it is new. */
static int add_edge(gp__tp_clocks *c, uint32_t from, uint32_t to) {
  gp__tp_clock_info *fi = &c->info.v[from];
  if (!gp__tp_vec_reserve(&c->edges, 1) || !gp__tp_vec_reserve(&fi->out, 1))
    return GP_ENOMEM;
  bool ins;
  if (!gp__tp_map2_put(&c->edge_by_pair, from, to, c->edges.n, &ins))
    return GP_ENOMEM;
  if (!ins)
    return 0;
  gp__tp_clock_edge *e = &c->edges.v[c->edges.n];
  e->from = from;
  e->to = to;
  e->series = GP_TP_NONE;
  fi->out.v[fi->out.n++] = (uint32_t)c->edges.n;
  c->edges.n++;
  forget_paths(c); /* a new edge may give a shorter path */
  return 0;
}

static size_t run_end(const gp__tp_clock_series *e, uint32_t r) {
  return r + 1 < e->nruns ? e->run[r + 1] : e->pts.n;
}

/* Merges the last two runs of e, stably (the older run first on ties). */
static int merge_last(gp__tp_clocks *c, gp__tp_clock_series *e) {
  size_t s1 = e->run[e->nruns - 2], s2 = e->run[e->nruns - 1], n = e->pts.n;
  size_t n1 = s2 - s1;
  c->scratch.n = 0;
  if (!gp__tp_vec_reserve(&c->scratch, n1))
    return GP_ENOMEM;
  memcpy(c->scratch.v, e->pts.v + s1, n1 * sizeof(e->pts.v[0]));
  size_t i = 0, j = s2, k = s1;
  while (i < n1 && j < n)
    e->pts.v[k++] =
        c->scratch.v[i].a <= e->pts.v[j].a ? c->scratch.v[i++] : e->pts.v[j++];
  while (i < n1)
    e->pts.v[k++] = c->scratch.v[i++];
  e->nruns--;
  return 0;
}

static int add_point(gp__tp_clocks *c, gp__tp_clock_series *e, int64_t a,
                     int64_t b) {
  if (!gp__tp_vec_reserve(&e->pts, 1))
    return GP_ENOMEM;
  /* Snapshots in reverse time order: one run, appended in descending
   * order, so that they cost no merging. */
  if (e->nruns == 1 && (e->descending || e->pts.n == 1) &&
      a < e->pts.v[e->pts.n - 1].a) {
    e->descending = true;
    e->pts.v[e->pts.n].a = a;
    e->pts.v[e->pts.n].b = b;
    e->pts.n++;
    return 0;
  }
  if (e->descending) { /* another order: an ordinary run from now on */
    for (size_t i = 0, j = e->pts.n - 1; i < j; i++, j--) {
      gp__tp_clock_point x = e->pts.v[i];
      e->pts.v[i] = e->pts.v[j];
      e->pts.v[j] = x;
    }
    e->descending = false;
  }
  if (e->nruns == 0 || e->pts.v[e->pts.n - 1].a > a) {
    if (e->nruns == GP_TP_CLOCK_RUNS)
      return GP_ENOMEM; /* defensive: needs 2^48 points */
    e->run[e->nruns++] = e->pts.n;
  }
  e->pts.v[e->pts.n].a = a;
  e->pts.v[e->pts.n].b = b;
  e->pts.n++;
  while (e->nruns >= 2) {
    size_t top = e->pts.n - e->run[e->nruns - 1];
    size_t below = e->run[e->nruns - 1] - e->run[e->nruns - 2];
    if (2 * top < below)
      break;
    int rc = merge_last(c, e);
    if (rc)
      return rc;
  }
  return 0;
}

/* Whether snapshot s read exactly the clocks idx[0..n), in that order. */
static bool same_clocks(const gp__tp_clocks *c, uint32_t s, const uint32_t *idx,
                        uint32_t n) {
  size_t start = c->snap.v[s];
  size_t end = s + 1 < c->snap.n ? c->snap.v[s + 1] : c->rd_ns.n;
  return end - start == n &&
         memcmp(c->rd_clock.v + start, idx, n * sizeof(idx[0])) == 0;
}

/* The edges of a snapshot's clocks idx[0..n) (its snapshot number s):
 * none are new when the same list of clocks came before. */
static int add_edges(gp__tp_clocks *c, uint32_t s, const uint32_t *idx,
                     uint32_t n) {
  uint64_t h = gp__tp_hash_bytes(idx, n * sizeof(idx[0]), n);
  uint64_t *first = gp__tp_map_get(&c->sets, h);
  if (first && same_clocks(c, (uint32_t)*first, idx, n))
    return 0;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < n; j++) {
      int rc = i == j ? 0 : add_edge(c, idx[i], idx[j]);
      if (rc)
        return rc;
    }
  if (!first && !gp__tp_map_put(&c->sets, h, s, NULL))
    return GP_ENOMEM;
  return 0;
}

/* See clocks.h. */
int gp__tp_clocks_add_snapshot(gp__tp_clocks *c, const gp__tp_snap_clock *clk,
                               uint32_t n, uint32_t primary) {
  if (n < 1 || n > 64)
    return GP_EINVAL;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++)
      if (clk[i].key == clk[j].key)
        return GP_EINVAL;
  if (c->rd_ns.n + n >= UINT32_MAX || c->snap.n + 1 >= UINT32_MAX)
    return GP_ENOMEM; /* defensive: positions are 32-bit */
  if (!gp__tp_vec_reserve(&c->rd_clock, n) ||
      !gp__tp_vec_reserve(&c->rd_ns, n) || !gp__tp_vec_reserve(&c->snap, 1))
    return GP_ENOMEM;
  uint32_t s = (uint32_t)c->snap.n, idx[64];
  int64_t ns[64];
  for (uint32_t i = 0; i < n; i++) {
    gp__tp_clock_info *ci = get_info(c, clk[i].key);
    if (!ci || !gp__tp_vec_push(&ci->snaps, s))
      return GP_ENOMEM;
    idx[i] = (uint32_t)(ci - c->info.v);
    ci->unit = clk[i].unit > 0 ? clk[i].unit : 1;
    ci->incremental = clk[i].incremental;
    ci->last = clk[i].ts;
    ns[i] = gp__tp_wmul(clk[i].ts, ci->unit);
  }
  c->snap.v[c->snap.n++] = (uint32_t)c->rd_ns.n;
  memcpy(c->rd_clock.v + c->rd_clock.n, idx, n * sizeof(idx[0]));
  memcpy(c->rd_ns.v + c->rd_ns.n, ns, n * sizeof(ns[0]));
  c->rd_clock.n += n;
  c->rd_ns.n += n;
  int rc = add_edges(c, s, idx, n);
  if (rc)
    return rc;
  /* The series that conversions use get this snapshot's point. */
  for (uint32_t i = 0; i < n; i++) {
    const gp__tp_clock_info *ci = &c->info.v[idx[i]];
    for (size_t k = 0; k < ci->live.n; k++) {
      const gp__tp_clock_edge *e = &c->edges.v[ci->live.v[k]];
      for (uint32_t j = 0; j < n; j++)
        if (idx[j] == e->to) {
          rc = add_point(c, &c->series.v[e->series], ns[i], ns[j]);
          if (rc)
            return rc;
        }
    }
  }
  if (primary) {
    c->trace_clock = primary;
    c->primary_set = true;
    forget_paths(c);
  }
  return 0;
}

/* Gives edge ei its series: the points of every snapshot so far that
 * read both its clocks, in the order they came. */
static int make_series(gp__tp_clocks *c, uint32_t ei) {
  gp__tp_clock_edge *e = &c->edges.v[ei];
  if (e->series != GP_TP_NONE)
    return 0;
  gp__tp_clock_info *fi = &c->info.v[e->from];
  if (!gp__tp_vec_reserve(&c->series, 1) || !gp__tp_vec_reserve(&fi->live, 1))
    return GP_ENOMEM;
  gp__tp_clock_series *se = &c->series.v[c->series.n];
  memset(se, 0, sizeof(*se));
  for (size_t k = 0; k < fi->snaps.n; k++) {
    uint32_t s = fi->snaps.v[k];
    size_t start = c->snap.v[s];
    size_t end = s + 1 < c->snap.n ? c->snap.v[s + 1] : c->rd_ns.n;
    size_t ia = end, ib = end;
    for (size_t r = start; r < end; r++) {
      if (c->rd_clock.v[r] == e->from)
        ia = r;
      else if (c->rd_clock.v[r] == e->to)
        ib = r;
    }
    if (ia == end || ib == end)
      continue;
    int rc = add_point(c, se, c->rd_ns.v[ia], c->rd_ns.v[ib]);
    if (rc) {
      gp__tp_vec_free(&se->pts);
      return rc;
    }
  }
  e->series = (uint32_t)c->series.n++;
  fi->live.v[fi->live.n++] = ei;
  return 0;
}

/* Breadth-first search from src to the trace clock; returns the path's
 * index in c->paths, or -1 if there is none (or memory ran out). The
 * edges of the path it finds get their series. */
static long find_path(gp__tp_clocks *c, uint64_t src_key) {
  typedef struct {
    uint32_t clock;
    int len;
    uint32_t path[MAX_HOPS];
  } node;
  uint64_t *pt = gp__tp_map_get(&c->info_by_key, c->trace_clock);
  uint64_t *ps = gp__tp_map_get(&c->info_by_key, src_key);
  if (!pt || !ps)
    return -1;
  uint32_t target = (uint32_t)*pt, src = (uint32_t)*ps;
  node queue[256];
  int head = 0, tail = 0;
  queue[tail].clock = src;
  queue[tail].len = 0;
  tail++;
  while (head < tail) {
    node cur = queue[head++];
    if (cur.clock == target) {
      for (int k = 0; k < cur.len; k++)
        if (make_series(c, cur.path[k]) != 0)
          return -1;
      if (!gp__tp_vec_reserve(&c->paths, 1) ||
          !gp__tp_map_put(&c->path_by_src, src_key, c->paths.n, NULL))
        return -1;
      c->paths.v[c->paths.n].len = cur.len;
      memcpy(c->paths.v[c->paths.n].edge, cur.path, sizeof(cur.path));
      return (long)c->paths.n++;
    }
    if (cur.len == MAX_HOPS)
      continue;
    const gp__tp_clock_info *ci = &c->info.v[cur.clock];
    for (size_t i = 0; i < ci->out.n && tail < 256; i++) {
      const gp__tp_clock_edge *e = &c->edges.v[ci->out.v[i]];
      bool seen = e->to == src;
      for (int k = 0; k < cur.len && !seen; k++)
        seen = c->edges.v[cur.path[k]].to == e->to;
      if (seen)
        continue;
      node nx = cur;
      nx.clock = e->to;
      nx.path[nx.len++] = ci->out.v[i];
      queue[tail++] = nx;
    }
  }
  return -1;
}

/* The point of e to convert t with: the one with the greatest a <= t
 * (the latest of equal ones), or the first if t precedes them all. */
static const gp__tp_clock_point *point_for(const gp__tp_clock_series *e,
                                           int64_t t) {
  const gp__tp_clock_point *best = NULL, *first = NULL;
  if (e->descending) { /* one run, strictly descending: no ties */
    size_t lo = 0, hi = e->pts.n;
    while (lo < hi) { /* first point with a <= t */
      size_t mid = lo + (hi - lo) / 2;
      if (e->pts.v[mid].a <= t)
        hi = mid;
      else
        lo = mid + 1;
    }
    return &e->pts.v[lo < e->pts.n ? lo : e->pts.n - 1];
  }
  for (uint32_t r = 0; r < e->nruns; r++) {
    size_t lo = e->run[r], hi = run_end(e, r), start = lo;
    if (!first || e->pts.v[start].a < first->a)
      first = &e->pts.v[start];
    while (lo < hi) { /* first point with a > t */
      size_t mid = lo + (hi - lo) / 2;
      if (e->pts.v[mid].a <= t)
        lo = mid + 1;
      else
        hi = mid;
    }
    /* A later run holds later points: it wins ties. */
    if (lo > start && (!best || e->pts.v[lo - 1].a >= best->a))
      best = &e->pts.v[lo - 1];
  }
  return best ? best : first;
}

static int64_t hop(const gp__tp_clock_series *e, int64_t t) {
  const gp__tp_clock_point *p = point_for(e, t);
  if (!p) /* defensive: edges get their first point when made */
    return t;
  return gp__tp_wadd(p->b, gp__tp_wsub(t, p->a));
}

/* See clocks.h. */
int64_t gp__tp_clocks_abs(gp__tp_clocks *c, uint64_t key, int64_t ts) {
  gp__tp_clock_info *ci = find_info(c, key);
  if (!ci)
    return ts;
  if (ci->incremental) {
    ci->last = gp__tp_wadd(ci->last, ts);
    ts = ci->last;
  }
  return gp__tp_wmul(ts, ci->unit);
}

/* See clocks.h. */
int gp__tp_clocks_convert(gp__tp_clocks *c, uint64_t key, int64_t ns,
                          int64_t *out) {
  if (key == c->trace_clock) {
    *out = ns;
    return 0;
  }
  if (!find_info(c, key))
    return GP_ENOENT;
  uint64_t *pi = gp__tp_map_get(&c->path_by_src, key);
  long p = pi ? (long)*pi : find_path(c, key);
  if (p < 0)
    return GP_ENOENT;
  int64_t t = ns;
  for (int i = 0; i < c->paths.v[p].len; i++)
    t = hop(&c->series.v[c->edges.v[c->paths.v[p].edge[i]].series], t);
  *out = t;
  return 0;
}
