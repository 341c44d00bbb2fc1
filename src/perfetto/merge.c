/*
 * merge.c - `gpuperf merge`: the traces of several machines on one
 * timeline (see gpuperf/merge.h and docs/merge.md).
 *
 * Two streaming passes over each input. The scan collects what the
 * alignment needs: the host identity, every clock snapshot pairing
 * BOOTTIME with REALTIME, the first and last timestamps, and with
 * sync_on the end times of that slice. The alignment fits each
 * machine's REALTIME - BOOTTIME by least squares (an offset and a
 * drift), maps its BOOTTIME onto input 0's through REALTIME, and with
 * sync_on corrects that map by a second fit on the matching ends. The
 * write pass rewrites every packet (merge_rewrite.c) after a small
 * "gpuperf merge" sequence that states, per machine, the offset, the
 * drift and the uncertainty left.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "gpuperf/error.h"
#include "gpuperf/merge.h"
#include "mergeInt.h"
#include "proto.h"
#include "writer.h"

#define DEFAULT_REALTIME_ERROR_NS 1000000ull
/* Track uuid of the merge's own track (and its sequence id). */
#define MERGE_TRACK_UUID 0x6d65726765000001ull

typedef struct mg_point {
  int64_t x, y; /* BOOTTIME, REALTIME - BOOTTIME */
} mg_point;

/* What the scan learns about one input. */
typedef struct mg_input {
  const char *path;
  mg_point *pts;
  size_t npts, cappts;
  int64_t *ends; /* sync_on slice ends, BOOTTIME */
  size_t nends, capends;
  mg_map names;  /* (seq, iid) of event names equal to sync_on */
  mg_map stacks; /* track uuid -> open slices, matching ones as 1 bits */
  mg_clock_map map;
  double resid;             /* of the REALTIME fit */
  uint32_t foreign_machine; /* a machine_id found in the input */
  gp_merge_machine m;
} mg_input;

static void seterr(char *err, size_t size, const char *fmt, ...) {
  if (!err || !size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
}

static bool push(void **v, size_t *n, size_t *cap, size_t elem) {
  if (*n < *cap)
    return true;
  size_t nc = *cap ? *cap * 2 : 64;
  void *p = realloc(*v, nc * elem);
  if (!p)
    return false;
  *v = p;
  *cap = nc;
  return true;
}

/* ------------------------------------------------------------------ */
/* Scan                                                                 */

static bool str_is(const gp__pb_field *f, const char *s) {
  return s && f->wire_type == GP_PB_LEN && f->size == strlen(s) &&
         memcmp(f->data, s, f->size) == 0;
}

static void copy_str(char *dst, size_t size, const gp__pb_field *f) {
  size_t n = f->size < size - 1 ? f->size : size - 1;
  memcpy(dst, f->data, n);
  dst[n] = '\0';
}

static int scan_snapshot(mg_input *in, const uint8_t *d, size_t n) {
  gp__pb_reader r, c;
  gp__pb_field f, g;
  int rc;
  uint64_t boot = 0, real = 0;
  bool has_boot = false, has_real = false;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id != GP_PB_CLOCK_SNAPSHOT_CLOCKS || f.wire_type != GP_PB_LEN)
      continue;
    uint64_t id = 0, ts = 0;
    bool inc = false;
    gp__pb_reader_init(&c, f.data, f.size, 0);
    while ((rc = gp__pb_next(&c, &g)) == 1) {
      if (g.id == GP_PB_CLOCK_ID)
        id = g.value;
      else if (g.id == GP_PB_CLOCK_TIMESTAMP)
        ts = g.value;
      else if (g.id == 3)
        inc = g.value != 0;
    }
    if (rc || inc)
      continue;
    if (id == MG_CLOCK_BOOTTIME) {
      boot = ts;
      has_boot = true;
    } else if (id == MG_CLOCK_REALTIME) {
      real = ts;
      has_real = true;
    }
  }
  if (rc)
    return rc;
  if (!has_boot || !has_real)
    return 0;
  if (!push((void **)&in->pts, &in->npts, &in->cappts, sizeof(mg_point)))
    return GP_ENOMEM;
  in->pts[in->npts++] = (mg_point){(int64_t)boot, (int64_t)(real - boot)};
  return 0;
}

static uint64_t name_key(uint64_t seq, uint64_t iid) {
  return (seq << 40 ^ iid) + 1;
}

/* Interned event names equal to the sync_on name, per sequence. */
static int scan_interned(mg_input *in, uint64_t seq, const uint8_t *d, size_t n,
                         const char *sync) {
  gp__pb_reader r, e;
  gp__pb_field f, g;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id != GP_PB_INTERNED_EVENT_NAMES || f.wire_type != GP_PB_LEN)
      continue;
    uint64_t iid = 0;
    bool match = false;
    gp__pb_reader_init(&e, f.data, f.size, 0);
    while ((rc = gp__pb_next(&e, &g)) == 1) {
      if (g.id == GP_PB_INTERNED_IID)
        iid = g.value;
      else if (g.id == GP_PB_INTERNED_NAME)
        match = str_is(&g, sync);
    }
    if (rc)
      return rc;
    uint64_t *v = gp__mg_map_put(&in->names, name_key(seq, iid));
    if (!v)
      return GP_ENOMEM;
    *v = match;
  }
  return rc;
}

static int scan_track_event(mg_input *in, uint64_t seq, uint64_t ts,
                            const uint8_t *d, size_t n, const char *sync) {
  gp__pb_reader r, a;
  gp__pb_field f, g;
  int rc;
  uint64_t type = 0, track = 0, iid = 0;
  bool host = false, match = false;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id == GP_PB_TE_TYPE)
      type = f.value;
    else if (f.id == GP_PB_TE_TRACK_UUID)
      track = f.value;
    else if (f.id == GP_PB_TE_NAME_IID)
      iid = f.value;
    else if (f.id == GP_PB_TE_NAME) {
      host = str_is(&f, GP_TW_HOST_EVENT);
      match = str_is(&f, sync);
    }
  }
  if (rc)
    return rc;
  if (iid && sync) {
    uint64_t *v = gp__mg_map_get(&in->names, name_key(seq, iid));
    match = v && *v;
  }
  if (host) {
    gp__pb_reader_init(&r, d, n, 0);
    while ((rc = gp__pb_next(&r, &f)) == 1) {
      if (f.id != GP_PB_TE_DEBUG_ANNOTATIONS || f.wire_type != GP_PB_LEN)
        continue;
      gp__pb_field name = {0}, val = {0};
      gp__pb_reader_init(&a, f.data, f.size, 0);
      while ((rc = gp__pb_next(&a, &g)) == 1) {
        if (g.id == GP_PB_DA_NAME)
          name = g;
        else if (g.id == GP_PB_DA_STRING_VALUE)
          val = g;
      }
      if (str_is(&name, "hostname") && val.data)
        copy_str(in->m.hostname, sizeof(in->m.hostname), &val);
      else if (str_is(&name, "boot_id") && val.data)
        copy_str(in->m.boot_id, sizeof(in->m.boot_id), &val);
    }
  }
  if (!sync ||
      (type != GP_PB_TE_TYPE_SLICE_BEGIN && type != GP_PB_TE_TYPE_SLICE_END))
    return 0;
  /* Open slices per track: a bit per level, 1 where the slice is sync_on
   * (the level count in the top byte). */
  uint64_t *st = gp__mg_map_put(&in->stacks, track + 1);
  if (!st)
    return GP_ENOMEM;
  uint64_t depth = *st >> 56, bits = *st & ((1ull << 56) - 1);
  if (type == GP_PB_TE_TYPE_SLICE_BEGIN) {
    if (depth < 56)
      *st = (depth + 1) << 56 | (bits << 1 | match);
    return 0;
  }
  if (depth == 0)
    return 0;
  *st = (depth - 1) << 56 | bits >> 1;
  if (!(bits & 1))
    return 0;
  if (!push((void **)&in->ends, &in->nends, &in->capends, sizeof(int64_t)))
    return GP_ENOMEM;
  in->ends[in->nends++] = (int64_t)ts;
  return 0;
}

static int scan_packet(mg_input *in, const uint8_t *d, size_t n,
                       const char *sync) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  uint64_t ts = 0, seq = 0, clock = 0;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id == GP_PB_PACKET_TIMESTAMP)
      ts = f.value;
    else if (f.id == GP_PB_PACKET_SEQUENCE_ID)
      seq = f.value;
    else if (f.id == GP_PB_PACKET_TIMESTAMP_CLOCK_ID)
      clock = f.value;
    else if (f.id == GP_PB_PACKET_MACHINE_ID && f.value && !in->foreign_machine)
      in->foreign_machine = (uint32_t)f.value;
  }
  if (rc)
    return rc;
  if (ts && (!clock || clock == MG_CLOCK_BOOTTIME)) {
    if (!in->m.first_ts || ts < in->m.first_ts)
      in->m.first_ts = ts;
    if (ts > in->m.last_ts)
      in->m.last_ts = ts;
  }
  in->m.packets++;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    if (f.id == GP_PB_PACKET_CLOCK_SNAPSHOT)
      rc = scan_snapshot(in, f.data, f.size);
    else if (f.id == GP_PB_PACKET_INTERNED_DATA && sync)
      rc = scan_interned(in, seq, f.data, f.size, sync);
    else if (f.id == GP_PB_PACKET_TRACK_EVENT)
      rc = scan_track_event(in, seq, ts, f.data, f.size, sync);
    if (rc < 0)
      return rc;
  }
  return rc;
}

static int scan_input(mg_input *in, const char *sync, char *err,
                      size_t errsize) {
  mg_reader rd;
  int rc = gp__mg_reader_open(&rd, in->path);
  if (rc) {
    seterr(err, errsize, "%s: %s", in->path, strerror(-rc));
    return rc;
  }
  const uint8_t *d;
  size_t n;
  while ((rc = gp__mg_reader_next(&rd, &d, &n)) == 1)
    if ((rc = scan_packet(in, d, n, sync)) != 0)
      break;
  if (rc < 0)
    seterr(err, errsize, "%s: %s at offset %llu", in->path,
           rc == GP_ECORRUPT ? "not a Perfetto trace, or truncated"
                             : gp_strerror(rc),
           (unsigned long long)rd.offset);
  else if (in->foreign_machine) {
    seterr(err, errsize,
           "%s: already holds machine %u (a merged or multi-machine trace); "
           "merge the traces of single machines",
           in->path, in->foreign_machine);
    rc = GP_EINVAL;
  }
  gp__mg_reader_close(&rd);
  gp__mg_map_free(&in->names);
  gp__mg_map_free(&in->stacks);
  return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ */
/* Alignment                                                            */

/* Least squares y = c + s * (x - x0) over n points; the largest |residual|
 * into *resid. With one point the slope is 0. */
static void fit(const double *x, const double *y, size_t n, double *c,
                double *s, double *resid) {
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  for (size_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  *s = sxx > 0 ? sxy / sxx : 0;
  *c = my - *s * mx; /* at x = 0 */
  double r = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs(y[i] - (*c + *s * x[i]));
    if (e > r)
      r = e;
  }
  *resid = r;
}

/* A residual in ns, rounded up, as an unsigned count (clamped: a fit of
 * absurd clock snapshots may give any double). */
static uint64_t ns_ceil(double r) {
  return r > 0 ? (uint64_t)gp__mg_round_sat(ceil(r)) : 0;
}

/* REALTIME - BOOTTIME of one input as yref + c + s * (boot - pivot). */
typedef struct rt_fit {
  int64_t pivot, yref;
  double c, s, resid;
} rt_fit;

static int fit_realtime(mg_input *in, rt_fit *f) {
  size_t n = in->npts;
  double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  if (!x || !y) {
    free(x);
    free(y);
    return GP_ENOMEM;
  }
  f->pivot = in->pts[0].x;
  f->yref = in->pts[0].y;
  for (size_t i = 0; i < n; i++) {
    x[i] = (double)gp__mg_sub_sat(in->pts[i].x, f->pivot);
    y[i] = (double)gp__mg_sub_sat(in->pts[i].y, f->yref);
  }
  fit(x, y, n, &f->c, &f->s, &f->resid);
  free(x);
  free(y);
  return 0;
}

/* Refines in->map so that its sync_on ends meet input 0's. */
static int refine(mg_input *in, const mg_input *ref, uint64_t *uncert) {
  size_t n = in->nends;
  double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  if (!x || !y) {
    free(x);
    free(y);
    return GP_ENOMEM;
  }
  int64_t q = ref->ends[0];
  for (size_t i = 0; i < n; i++) {
    int64_t mapped = gp__mg_apply(&in->map, in->ends[i]);
    x[i] = (double)gp__mg_sub_sat(mapped, q);
    y[i] = (double)gp__mg_sub_sat(ref->ends[i], mapped);
  }
  double c, s, r;
  fit(x, y, n, &c, &s, &r);
  free(x);
  free(y);
  /* M'(b) = M(b) + c + s (M(b) - q), written again as b + off + slope
   * (b - pivot). */
  mg_clock_map *m = &in->map;
  double s1 = m->slope;
  m->off = gp__mg_add_sat(
      m->off,
      gp__mg_round_sat(
          c + s * (double)gp__mg_sub_sat(gp__mg_add_sat(m->pivot, m->off), q)));
  m->slope = s1 + s + s1 * s;
  /* + 2 ns: the rounding of timestamps to whole ns, at both ends. */
  *uncert = ns_ceil(r) + 2;
  return 0;
}

/*
 * The sync ends pair the j-th end of each machine with the j-th of input
 * 0; if the windows do not hold the same collectives (one node's starts a
 * step later), that pairing is wrong by whole steps and the fit, exact
 * as it looks, moves the machine by as much. REALTIME already places it
 * within bound, so a correction larger than that is refused (unless
 * forced): GP_ERANGE with the likely cause in err.
 */
static int check_correction(const mg_input *in, const mg_clock_map *before,
                            uint64_t bound, const char *sync, bool force,
                            char *err, size_t errsize) {
  double worst = 0;
  /* The maps are linear: the largest change is at an end of the span. */
  int64_t span[2] = {(int64_t)in->m.first_ts, (int64_t)in->m.last_ts};
  for (int i = 0; i < 2; i++) {
    double d = fabs((double)gp__mg_sub_sat(gp__mg_apply(&in->map, span[i]),
                                           gp__mg_apply(before, span[i])));
    if (d > worst)
      worst = d;
  }
  if (force || worst <= (double)bound)
    return 0;
  seterr(err, errsize,
         "%s: aligning it on the ends of '%s' would move it by %.3f ms, "
         "beyond the %.3f ms its REALTIME clock allows: the traces probably "
         "do not cover the same '%s' events (the j-th end on each machine "
         "is paired with the j-th: a window that starts or ends a step "
         "earlier shifts them by whole steps), or REALTIME is further off "
         "than --realtime-error; --force-sync applies it anyway",
         in->path, sync, worst / 1e6, (double)bound / 1e6, sync);
  return GP_ERANGE;
}

static int align(mg_input *in, size_t n, const gp_merge_options *o, char *err,
                 size_t errsize) {
  uint64_t rt_err = o && o->realtime_error_ns ? o->realtime_error_ns
                                              : DEFAULT_REALTIME_ERROR_NS;
  const char *sync = o ? o->sync_on : NULL;
  bool force = o &&
               o->size >= offsetof(gp_merge_options, force_sync) +
                              sizeof(o->force_sync) &&
               o->force_sync;
  rt_fit f0 = {0}, fk;
  int rc;
  for (size_t k = 0; k < n; k++) {
    if (!in[k].npts) {
      seterr(err, errsize,
             "%s: no clock snapshot pairs BOOTTIME with REALTIME; cannot "
             "place it on a common clock",
             in[k].path);
      return GP_ENOENT;
    }
    if ((rc = fit_realtime(&in[k], k ? &fk : &f0)))
      return rc;
    const rt_fit *f = k ? &fk : &f0;
    /* boot0 = pk + (D + ck - c0 + s0 (p0 - pk)) / (1 + s0) at b = pk. */
    double d = (double)gp__mg_sub_sat(f->yref, f0.yref) + f->c - f0.c +
               f0.s * (double)gp__mg_sub_sat(f0.pivot, f->pivot);
    in[k].map.pivot = f->pivot;
    in[k].map.off = k ? gp__mg_round_sat(d / (1 + f0.s)) : 0;
    in[k].map.slope = k ? (f->s - f0.s) / (1 + f0.s) : 0;
    in[k].resid = f->resid;
    in[k].m.snapshots = (uint32_t)in[k].npts;
    in[k].m.uncertainty_ns = k ? rt_err + ns_ceil(f->resid + f0.resid) : 0;
  }
  if (sync) {
    for (size_t k = 0; k < n; k++) {
      if (!in[k].nends) {
        seterr(err, errsize, "%s: no slice named '%s' ends in it", in[k].path,
               sync);
        return GP_ENOENT;
      }
      if (in[k].nends != in[0].nends) {
        seterr(err, errsize,
               "'%s' ends %zu times in %s but %zu times in %s: the traces "
               "do not cover the same collectives",
               sync, in[k].nends, in[k].path, in[0].nends, in[0].path);
        return GP_ERANGE;
      }
    }
    for (size_t k = 1; k < n; k++) {
      mg_clock_map before = in[k].map;
      uint64_t bound = in[k].m.uncertainty_ns;
      if ((rc = refine(&in[k], &in[0], &in[k].m.uncertainty_ns)))
        return rc;
      in[k].m.sync_points = (uint32_t)in[k].nends;
      if ((rc = check_correction(&in[k], &before, bound, sync, force, err,
                                 errsize)))
        return rc;
    }
    in[0].m.sync_points = (uint32_t)in[0].nends;
  }
  for (size_t k = 0; k < n; k++) {
    int64_t first = (int64_t)in[k].m.first_ts;
    in[k].m.offset_ns = gp__mg_sub_sat(gp__mg_apply(&in[k].map, first), first);
    in[k].m.drift_ppm = in[k].map.slope * 1e6;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

/* Writes the buffer's content to out and empties it. */
static int flush_out(mg_buf *b, FILE *out) {
  if (b->oom)
    return GP_ENOMEM;
  size_t n = b->n;
  b->n = 0;
  return fwrite(b->p, 1, n, out) == n ? 0 : -EIO;
}

static void annotation_str(mg_buf *pb, const char *k, const char *v) {
  gp__mg_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__mg_string(pb, GP_PB_DA_NAME, k);
  gp__mg_string(pb, GP_PB_DA_STRING_VALUE, v);
  gp__mg_end(pb);
}

static void annotation_int(mg_buf *pb, const char *k, int64_t v) {
  gp__mg_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__mg_string(pb, GP_PB_DA_NAME, k);
  gp__mg_uint(pb, GP_PB_DA_INT_VALUE, v);
  gp__mg_end(pb);
}

/* The "gpuperf merge" track: one instant per machine stating how it was
 * aligned. On machine 0, first in the file, so that Perfetto's importer
 * adopts input 0's machine as its host row. */
static void write_summary(mg_buf *pb, const mg_input *in, size_t n,
                          uint32_t seq, const char *sync) {
  gp__mg_begin(pb, GP_PB_TRACE_PACKET);
  gp__mg_uint(pb, GP_PB_PACKET_SEQUENCE_ID, seq);
  gp__mg_begin(pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__mg_uint(pb, GP_PB_TD_UUID, MERGE_TRACK_UUID);
  gp__mg_string(pb, GP_PB_TD_NAME, "gpuperf merge");
  gp__mg_end(pb);
  gp__mg_uint(pb, GP_PB_PACKET_MACHINE_ID, in[0].m.machine_id);
  gp__mg_end(pb);
  for (size_t k = 0; k < n; k++) {
    const gp_merge_machine *m = &in[k].m;
    char method[160];
    if (m->sync_points && k)
      snprintf(method, sizeof(method), "realtime, then ends of '%s' (%u)", sync,
               m->sync_points);
    else
      snprintf(method, sizeof(method), k ? "realtime" : "reference");
    gp__mg_begin(pb, GP_PB_TRACE_PACKET);
    gp__mg_uint(pb, GP_PB_PACKET_TIMESTAMP,
                in[0].m.first_ts ? in[0].m.first_ts : 1);
    gp__mg_uint(pb, GP_PB_PACKET_SEQUENCE_ID, seq);
    gp__mg_begin(pb, GP_PB_PACKET_TRACK_EVENT);
    gp__mg_uint(pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_INSTANT);
    gp__mg_uint(pb, GP_PB_TE_TRACK_UUID, MERGE_TRACK_UUID);
    gp__mg_string(pb, GP_PB_TE_NAME, "clock alignment");
    annotation_int(pb, "machine_id", m->machine_id);
    annotation_str(pb, "input", in[k].path);
    annotation_str(pb, "hostname", m->hostname);
    annotation_str(pb, "boot_id", m->boot_id);
    annotation_int(pb, "offset_ns", m->offset_ns);
    annotation_int(pb, "drift_ppb", gp__mg_round_sat(m->drift_ppm * 1e3));
    annotation_int(pb, "uncertainty_ns", (int64_t)m->uncertainty_ns);
    annotation_str(pb, "method", method);
    gp__mg_end(pb);
    gp__mg_uint(pb, GP_PB_PACKET_MACHINE_ID, in[0].m.machine_id);
    gp__mg_end(pb);
  }
}

/* Machine ids: 1 + the input's index. Small on purpose: every packet
 * carries one (a hash of the host identity would take 5 bytes a packet);
 * the identity itself is in the summary and in each machine's own
 * "gpuperf host" event. */
static void machine_ids(mg_input *in, size_t n) {
  for (size_t k = 0; k < n; k++)
    in[k].m.machine_id = (uint32_t)k + 1;
}

static int copy_input(mg_input *in, size_t k, uint32_t *next_seq, FILE *out,
                      mg_buf *pb, char *err, size_t errsize) {
  char prefix[160];
  snprintf(prefix, sizeof(prefix),
           "%s: ", in->m.hostname[0] ? in->m.hostname : in->path);
  mg_rewrite rw;
  memset(&rw, 0, sizeof(rw));
  rw.map = in->map;
  rw.machine_id = in->m.machine_id;
  rw.renumber = true;
  rw.id_xor = (uint64_t)k << 48;
  rw.prefix = prefix;
  rw.next_seq = next_seq;
  mg_reader rd;
  int rc = gp__mg_reader_open(&rd, in->path);
  if (rc) {
    seterr(err, errsize, "%s: %s", in->path, strerror(-rc));
    return rc;
  }
  const uint8_t *d;
  size_t n;
  while ((rc = gp__mg_reader_next(&rd, &d, &n)) == 1) {
    if ((rc = gp__mg_rewrite_packet(&rw, d, n, pb)) != 0)
      break;
    if (pb->n >= (1u << 20) && (rc = flush_out(pb, out)) != 0)
      break;
  }
  if (rc < 0)
    seterr(err, errsize, "%s: %s at offset %llu", in->path,
           rc == GP_ECORRUPT ? "not a Perfetto trace, or truncated"
           : rc == -EIO      ? "cannot write the output"
                             : gp_strerror(rc),
           (unsigned long long)rd.offset);
  else if (rw.huge_time) {
    seterr(err, errsize,
           "%s: a timestamp is past 2^63 - 1 ns, which no clock reaches; "
           "the trace is damaged",
           in->path);
    rc = GP_ERANGE;
  } else if (rw.bad_time) {
    seterr(err, errsize,
           "%s: its times fall before the start of %s's clock; put the "
           "earliest recording first",
           in->path, "input 0");
    rc = GP_ERANGE;
  }
  gp__mg_reader_close(&rd);
  gp__mg_map_free(&rw.seqs);
  return rc < 0 ? rc : 0;
}

/* See merge.h. */
int gp_trace_merge(const char *const *inputs, size_t n, const char *output,
                   const gp_merge_options *opts, gp_merge_machine *machines,
                   char *err, size_t errsize) {
  if (!inputs || n == 0 || n > GP_MERGE_MAX_INPUTS || !output ||
      (opts && opts->size < sizeof(uint32_t))) {
    seterr(err, errsize, "merge: bad arguments");
    return GP_EINVAL;
  }
  const char *sync = opts ? opts->sync_on : NULL;
  mg_input *in = calloc(n, sizeof(*in));
  if (!in)
    return GP_ENOMEM;
  int rc = 0;
  for (size_t k = 0; k < n && rc == 0; k++) {
    in[k].path = inputs[k];
    rc = scan_input(&in[k], sync, err, errsize);
  }
  if (rc == 0)
    rc = align(in, n, opts, err, errsize);
  /* Written beside output and renamed over it when whole: a failed
   * merge leaves output as it was. */
  FILE *out = NULL;
  char *tmp = NULL;
  if (rc == 0 && !(out = gp__outfile_open(output, &tmp))) {
    rc = -errno;
    seterr(err, errsize, "%s: %s", output, strerror(errno));
  }
  mg_buf pb;
  memset(&pb, 0, sizeof(pb));
  if (rc == 0) {
    machine_ids(in, n);
    uint32_t next_seq = 1;
    write_summary(&pb, in, n, next_seq++, sync);
    for (size_t k = 0; k < n && rc == 0; k++)
      rc = copy_input(&in[k], k, &next_seq, out, &pb, err, errsize);
    if (rc == 0 && (flush_out(&pb, out) != 0 || fflush(out) != 0)) {
      rc = -EIO;
      seterr(err, errsize, "%s: cannot write: %s", output, strerror(errno));
    }
  }
  gp__mg_buf_fini(&pb);
  if (out) {
    int crc = gp__outfile_close(out, tmp, output, rc == 0);
    if (crc != 0 && rc == 0) {
      rc = crc;
      seterr(err, errsize, "%s: cannot write: %s", output, strerror(-crc));
    }
  }
  for (size_t k = 0; k < n; k++) {
    if (machines)
      machines[k] = in[k].m;
    free(in[k].pts);
    free(in[k].ends);
  }
  free(in);
  return rc;
}

/* See merge.h. */
int gp_trace_retime(const char *input, const char *output, int64_t offset_ns,
                    double drift, int64_t realtime_offset_ns, char *err,
                    size_t errsize) {
  if (!input || !output) {
    seterr(err, errsize, "retime: bad arguments");
    return GP_EINVAL;
  }
  mg_input in;
  memset(&in, 0, sizeof(in));
  in.path = input;
  int rc = scan_input(&in, NULL, err, errsize);
  free(in.pts);
  if (rc)
    return rc;
  char *tmp = NULL;
  FILE *out = gp__outfile_open(output, &tmp);
  if (!out) {
    seterr(err, errsize, "%s: %s", output, strerror(errno));
    return -errno;
  }
  mg_rewrite rw;
  memset(&rw, 0, sizeof(rw));
  rw.map.pivot = (int64_t)in.m.first_ts;
  rw.map.off = offset_ns;
  rw.map.slope = drift;
  rw.real_off = realtime_offset_ns;
  uint32_t unused = 0;
  rw.next_seq = &unused;
  mg_buf pb;
  memset(&pb, 0, sizeof(pb));
  mg_reader rd;
  if ((rc = gp__mg_reader_open(&rd, input)) == 0) {
    const uint8_t *d;
    size_t len;
    while ((rc = gp__mg_reader_next(&rd, &d, &len)) == 1) {
      if ((rc = gp__mg_rewrite_packet(&rw, d, len, &pb)) != 0)
        break;
      if (pb.n >= (1u << 20) && (rc = flush_out(&pb, out)) != 0)
        break;
    }
    gp__mg_reader_close(&rd);
  }
  if (rc == 0 && (rw.bad_time || rw.huge_time))
    rc = GP_ERANGE;
  if (rc == 0 && flush_out(&pb, out) != 0)
    rc = -EIO;
  gp__mg_buf_fini(&pb);
  gp__mg_map_free(&rw.seqs);
  int crc = gp__outfile_close(out, tmp, output, rc == 0);
  if (rc == 0)
    rc = crc;
  if (rc)
    seterr(err, errsize, "%s: cannot re-time into %s: %s", input, output,
           gp_strerror(rc));
  return rc;
}
