/*
 * render_tracks.c - which track of its queue a render stage goes to.
 *
 * Perfetto puts overlapping render stages of one hardware queue on extra
 * tracks of the same name: a stage [ts, ts + dur) goes to the first track
 * of its compression set (creation order) whose last stage has ended by
 * ts, or to a new track. Scanning the tracks for each stage is quadratic
 * when every stage overlaps the ones before (each makes a new track), so
 * the set keeps two heaps: busy tracks ordered by end, and free tracks
 * ordered by index. Stages arrive sorted by ts, so a track whose end is
 * <= ts stays free for every later stage: moving it from the busy heap to
 * the free heap once is exact, and each stage costs O(log tracks).
 */
#include "gpuperf/error.h"
#include "tp/import.h"

typedef struct gp__tp_cset_busy busy_t;

static bool busy_less(const busy_t *a, const busy_t *b) {
  return a->end < b->end || (a->end == b->end && a->idx < b->idx);
}

static bool busy_push(gp__tp_cset *cs, busy_t x) {
  if (!gp__tp_vec_push(&cs->busy, x))
    return false;
  busy_t *h = cs->busy.v;
  size_t i = cs->busy.n - 1;
  while (i > 0 && busy_less(&x, &h[(i - 1) / 2])) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
  return true;
}

static busy_t busy_pop(gp__tp_cset *cs) {
  busy_t *h = cs->busy.v, top = h[0], x = h[--cs->busy.n];
  size_t n = cs->busy.n, i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && busy_less(&h[c + 1], &h[c]))
      c++;
    if (!busy_less(&h[c], &x))
      break;
    h[i] = h[c];
    i = c;
  }
  if (n)
    h[i] = x;
  return top;
}

static bool freed_push(gp__tp_cset *cs, uint32_t x) {
  if (!gp__tp_vec_push(&cs->freed, x))
    return false;
  uint32_t *h = cs->freed.v;
  size_t i = cs->freed.n - 1;
  while (i > 0 && x < h[(i - 1) / 2]) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
  return true;
}

static uint32_t freed_pop(gp__tp_cset *cs) {
  uint32_t *h = cs->freed.v, top = h[0], x = h[--cs->freed.n];
  size_t n = cs->freed.n, i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && h[c + 1] < h[c])
      c++;
    if (h[c] >= x)
      break;
    h[i] = h[c];
    i = c;
  }
  if (n)
    h[i] = x;
  return top;
}

/* Defensive: a stage earlier than one already placed (parse order is by
 * ts, so this should not happen) is placed by a scan, and the heaps are
 * rebuilt from the tracks' ends. */
static int place_by_scan(gp__tp_cset *cs, int64_t ts, int64_t end,
                         uint32_t *idx) {
  *idx = GP_TP_NONE;
  for (size_t i = 0; i < cs->t.n && *idx == GP_TP_NONE; i++)
    if (cs->t.v[i].end <= ts)
      *idx = (uint32_t)i;
  if (*idx != GP_TP_NONE)
    cs->t.v[*idx].end = end;
  cs->busy.n = cs->freed.n = 0;
  for (size_t i = 0; i < cs->t.n; i++)
    if (!busy_push(cs, ((busy_t){cs->t.v[i].end, (uint32_t)i})))
      return GP_ENOMEM;
  return 0;
}

/* See import.h. */
int gp__tp_stage_track(gp__tp_importer *imp, uint32_t ci,
                       const gp__tp_track_spec *spec, int64_t ts, int64_t dur,
                       uint32_t *out) {
  gp__tp_cset *cs = &imp->csets.v[ci];
  int64_t end = gp__tp_sadd(ts, dur);
  uint32_t idx = GP_TP_NONE;
  if (cs->t.n && ts < cs->last_ts) {
    if (place_by_scan(cs, ts, end, &idx))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  } else {
    cs->last_ts = ts;
    while (cs->busy.n && cs->busy.v[0].end <= ts) {
      busy_t b = busy_pop(cs);
      if (!freed_push(cs, b.idx))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    }
    if (cs->freed.n) {
      idx = freed_pop(cs);
      cs->t.v[idx].end = end;
      if (!busy_push(cs, ((busy_t){end, idx})))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    }
  }
  if (idx != GP_TP_NONE) {
    *out = cs->t.v[idx].track;
    return 0;
  }
  /* Perfetto's TrackCompressor: the set's dimensions and the track's
   * index in the set. */
  gp__tp_argb dims;
  uint32_t first, n, set;
  gp__tp_argset_range(imp->db, cs->dims, &first, &n);
  dims.n = 0;
  dims.overflow = false;
  for (uint32_t i = 0; i < n && i + 1 < GP_TP_ARGS_MAX; i++)
    dims.a[dims.n++] = imp->db->args.v[first + i];
  gp__tp_argb_int(&dims, imp->k_cidx, cs->t.n);
  if (gp__tp_argset_commit(imp->db, &dims, &set))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  int rc = gp__tp_track_new(imp, spec, set, out);
  if (rc)
    return rc;
  imp->db->tracks.v[*out].group = cs->group;
  if (cs->t.n >= GP_TP_NONE - 1 || !gp__tp_vec_reserve(&cs->t, 1) ||
      !busy_push(cs, ((busy_t){end, (uint32_t)cs->t.n})))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  cs->t.v[cs->t.n++] = (struct gp__tp_cset_track){*out, end};
  return 0;
}
