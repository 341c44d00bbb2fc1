/*
 * parse_drm_sched.c - the DRM vblank and GPU scheduler ftrace events,
 * imported as Perfetto's DrmTracker imports them (v58.2,
 * src/trace_processor/importers/ftrace/drm_tracker.cc):
 *
 *   - drm_vblank_event and drm_vblank_event_delivered: an instant slice
 *     "signal" or "deliver" (arg "vblank seqno") on the track of the
 *     CRTC: type 'drm_vblank', name "vblank-<crtc>", dimension drm_crtc.
 *   - A job is queued (drm_sched_job; drm_sched_job_queue since Linux
 *     6.17): an instant slice "drm_sched_job_queue" (args "gpu sched ring"
 *     and the job's) on the queuing thread's track, kept as the job's
 *     queue slice on its ring. The ring's track, made on its first event:
 *     type 'drm_sched_ring', name "sched-<ring>", dimension name.
 *   - A job runs (drm_run_job; drm_sched_job_run): it joins the ring's
 *     running jobs; when it is the only one, a slice "job" begins on the
 *     ring, with a flow from its queue slice.
 *   - A job is done (drm_sched_process_job; drm_sched_job_done): the
 *     ring that runs it ends the front job's slice, and the next running
 *     job's slice (and flow) begins at the same time. A job no ring runs
 *     is ignored.
 *   - A job's args: "fence context" and "fence seqno" since 6.17, else
 *     "gpu sched job" (its local id). Before 6.17 a queued job is known by
 *     its local id (matched to the run on the same ring), a running one by
 *     its global id (the fence).
 *
 * Costs: a hash lookup or two per event; running jobs are a vector with a
 * moving head (amortised O(1)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

/* The fields of one event that Perfetto reads. */
typedef struct drm_ev {
  uint64_t v[8]; /* varints by field number (1..7) */
  const uint8_t *name;
  size_t name_len;
} drm_ev;

static int decode(gp__tp_importer *imp, const gp__pb_reader *parent,
                  const gp__pb_field *pf, uint32_t name_field, drm_ev *e) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  memset(e, 0, sizeof(*e));
  e->name = (const uint8_t *)"";
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == name_field && f.wire_type == GP_PB_LEN) {
      e->name = f.data;
      e->name_len = f.size;
    } else if (f.id < 8 && f.wire_type == GP_PB_VARINT) {
      e->v[f.id] = f.value;
    }
  }
  return rc < 0 ? gp__tp_corrupt(imp, &r, "DRM ftrace event") : 0;
}

static int track_of(gp__tp_importer *imp, uint32_t machine, const char *type,
                    const char *name, size_t name_len, gp__tp_argb *dims,
                    uint32_t *track) {
  uint32_t n;
  int rc = gp__tp_intern(imp, name, name_len, &n);
  if (rc)
    return rc;
  gp__tp_track_spec spec = {type, n,  false, GP_TP_NONE, machine,   NULL,
                            -1,   -1, -1,    -1,         GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, dims, track, NULL);
}

/* An instant slice named name with args b on track. */
static int instant(gp__tp_importer *imp, int64_t ts, uint32_t track,
                   const char *name, gp__tp_argb *b, uint32_t *slice) {
  uint32_t n, set;
  int rc = key(imp, name, &n);
  if (rc)
    return rc;
  if (gp__tp_argset_commit(imp->db, b, &set))
    return nomem(imp);
  return gp__tp_slice_scoped(imp, ts, 0, track, GP_TP_NONE, n, set, slice);
}

static int vblank(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                  uint32_t field, const drm_ev *e) {
  uint32_t crtc = (uint32_t)(int32_t)e->v[1], seq = (uint32_t)e->v[3];
  uint32_t k_crtc, k_seq, track, slice;
  int rc;
  if ((rc = key(imp, "drm_crtc", &k_crtc)) ||
      (rc = key(imp, "vblank seqno", &k_seq)))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_int(&dims, k_crtc, crtc);
  char name[32];
  int len = snprintf(name, sizeof(name), "vblank-%u", crtc);
  if ((rc = track_of(imp, machine, "drm_vblank", name, (size_t)len, &dims,
                     &track)))
    return rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  gp__tp_argb_uint(&b, k_seq, seq);
  return instant(imp, ts, track,
                 field == GP_PB_FTRACE_DRM_VBLANK_EVENT ? "signal" : "deliver",
                 &b, &slice);
}

/* The ring named name, made (with its track) on first sight. */
static int ring_get(gp__tp_importer *imp, uint32_t machine, const drm_ev *e,
                    uint32_t *out) {
  uint32_t ns;
  int rc = gp__tp_intern(imp, e->name, e->name_len, &ns);
  if (rc)
    return rc;
  uint64_t k = (uint64_t)machine << 32 | ns;
  uint64_t *slot = gp__tp_map_get(&imp->ring_by_name, k);
  if (slot) {
    *out = (uint32_t)*slot;
    return 0;
  }
  uint32_t k_name;
  if ((rc = key(imp, "name", &k_name)))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_str(&dims, k_name, ns);
  char name[300];
  int len = snprintf(name, sizeof(name), "sched-%.*s",
                     (int)(e->name_len < 256 ? e->name_len : 256),
                     (const char *)e->name);
  gp__tp_sched_ring r;
  memset(&r, 0, sizeof(r));
  if ((rc = track_of(imp, machine, "drm_sched_ring", name, (size_t)len, &dims,
                     &r.track)))
    return rc;
  if (!gp__tp_vec_push(&imp->rings, r) ||
      !gp__tp_map_put(&imp->ring_by_name, k, imp->rings.n - 1, NULL))
    return nomem(imp);
  *out = (uint32_t)imp->rings.n - 1;
  return 0;
}

/* A job's args: its fence, or its local id. */
static int job_args(gp__tp_importer *imp, const gp__tp_sched_job *j,
                    gp__tp_argb *b) {
  uint32_t k1, k2;
  int rc;
  if (j->fence) {
    if ((rc = key(imp, "fence context", &k1)) ||
        (rc = key(imp, "fence seqno", &k2)))
      return rc;
    gp__tp_argb_uint(b, k1, j->a);
    gp__tp_argb_uint(b, k2, j->b);
    return 0;
  }
  if ((rc = key(imp, "gpu sched job", &k1)))
    return rc;
  gp__tp_argb_uint(b, k1, j->b);
  return 0;
}

/* The queue slice of a job on ring r (by fence, or local id). */
static uint64_t *out_slot(gp__tp_sched_ring *r, const gp__tp_sched_job *j) {
  return j->fence ? gp__tp_map2_get(&r->out_fence, j->a, j->b)
                  : gp__tp_map_get(&r->out_local, j->b);
}

/* Begins the slice of the ring's front job, with a flow from its queue
 * slice (used once). */
static int begin_front(gp__tp_importer *imp, int64_t ts, uint32_t ri) {
  gp__tp_sched_job j = imp->rings.v[ri].q.v[imp->rings.v[ri].head];
  uint32_t name, set, slice;
  int rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  if ((rc = key(imp, "job", &name)) || (rc = job_args(imp, &j, &b)))
    return rc;
  if (gp__tp_argset_commit(imp->db, &b, &set))
    return nomem(imp);
  gp__tp_sched_ring *r = &imp->rings.v[ri];
  if ((rc = gp__tp_slice_begin(imp, ts, r->track, GP_TP_NONE, name, set,
                               &slice)) ||
      slice == GP_TP_NONE)
    return rc;
  uint64_t *out = out_slot(r, &j);
  if (!out || *out == GP_TP_NONE)
    return 0;
  uint32_t from = (uint32_t)*out;
  *out = GP_TP_NONE; /* erased */
  return gp__tp_flow_add(imp, from, slice);
}

static int queue_job(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t pid, const drm_ev *e, const gp__tp_sched_job *j) {
  uint32_t k_ring, ring_name, track, slice, ri;
  int rc;
  if ((rc = gp__tp_ftrace_thread_track(imp, machine, pid, &track)) ||
      (rc = key(imp, "gpu sched ring", &k_ring)) ||
      (rc = gp__tp_intern(imp, e->name, e->name_len, &ring_name)))
    return rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  gp__tp_argb_str(&b, k_ring, ring_name);
  if ((rc = job_args(imp, j, &b)) ||
      (rc = instant(imp, ts, track, "drm_sched_job_queue", &b, &slice)) ||
      slice == GP_TP_NONE || (rc = ring_get(imp, machine, e, &ri)))
    return rc;
  gp__tp_sched_ring *r = &imp->rings.v[ri];
  uint64_t *ok = j->fence
                     ? gp__tp_map2_put(&r->out_fence, j->a, j->b, slice, NULL)
                     : gp__tp_map_put(&r->out_local, j->b, slice, NULL);
  if (!ok)
    return nomem(imp);
  *ok = slice;
  return 0;
}

static int run_job(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   const drm_ev *e, const gp__tp_sched_job *j) {
  uint32_t ri;
  int rc = ring_get(imp, machine, e, &ri);
  if (rc)
    return rc;
  gp__tp_sched_ring *r = &imp->rings.v[ri];
  if (r->head > 64 && r->head * 2 > r->q.n) { /* drop the popped prefix */
    memmove(r->q.v, r->q.v + r->head, (r->q.n - r->head) * sizeof(*r->q.v));
    r->q.n -= r->head;
    r->head = 0;
  }
  if (!gp__tp_vec_push(&r->q, *j))
    return nomem(imp);
  /* Inserted only where absent, as Perfetto's map does. */
  uint64_t *ok = j->fence
                     ? gp__tp_map2_put(&imp->busy_fence, j->a, j->b, ri, NULL)
                     : gp__tp_map_put(&imp->busy_global, j->a, ri, NULL);
  if (!ok)
    return nomem(imp);
  if (*ok == GP_TP_NONE) /* erased before */
    *ok = ri;
  return r->q.n - r->head == 1 ? begin_front(imp, ts, ri) : 0;
}

static int job_done(gp__tp_importer *imp, int64_t ts,
                    const gp__tp_sched_job *j) {
  uint64_t *slot = j->fence ? gp__tp_map2_get(&imp->busy_fence, j->a, j->b)
                            : gp__tp_map_get(&imp->busy_global, j->a);
  if (!slot || *slot == GP_TP_NONE)
    return 0;
  uint32_t ri = (uint32_t)*slot, out;
  *slot = GP_TP_NONE; /* erased */
  gp__tp_sched_ring *r = &imp->rings.v[ri];
  if (r->head < r->q.n)
    r->head++;
  int rc = gp__tp_slice_end(imp, ts, r->track, &out);
  if (rc)
    return rc;
  r = &imp->rings.v[ri];
  return r->head < r->q.n ? begin_front(imp, ts, ri) : 0;
}

/* See import.h. */
int gp__tp_parse_drm_sched(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           uint32_t pid, const gp__pb_reader *parent,
                           const gp__pb_field *f) {
  uint32_t utid;
  drm_ev e;
  bool since617 = f->id >= GP_PB_FTRACE_DRM_SCHED_JOB_DONE;
  int rc = decode(imp, parent, f, since617 ? 1 : 6, &e);
  /* Perfetto files every ftrace event under its task's thread. */
  if (rc || (rc = gp__tp_ftrace_thread(imp, machine, pid, &utid)))
    return rc;
  gp__tp_sched_job j = {since617, 0, 0};
  switch (f->id) {
  case GP_PB_FTRACE_DRM_VBLANK_EVENT:
  case GP_PB_FTRACE_DRM_VBLANK_EVENT_DELIVERED:
    return vblank(imp, ts, machine, f->id, &e);
  case GP_PB_FTRACE_DRM_SCHED_JOB: /* id 4: a local id */
    j.b = e.v[4];
    return queue_job(imp, ts, machine, pid, &e, &j);
  case GP_PB_FTRACE_DRM_RUN_JOB: /* fence 2: the global id, and id 4 */
    j.a = e.v[2];
    j.b = e.v[4];
    return run_job(imp, ts, machine, &e, &j);
  case GP_PB_FTRACE_DRM_SCHED_PROCESS_JOB: /* fence 1 */
    j.a = e.v[1];
    return job_done(imp, ts, &j);
  case GP_PB_FTRACE_DRM_SCHED_JOB_DONE: /* fence_context 1, fence_seqno 2 */
    j.a = e.v[1];
    j.b = e.v[2];
    return job_done(imp, ts, &j);
  case GP_PB_FTRACE_DRM_SCHED_JOB_QUEUE: /* fence_context 5, fence_seqno 6 */
    j.a = e.v[5];
    j.b = e.v[6];
    return queue_job(imp, ts, machine, pid, &e, &j);
  default: /* drm_sched_job_run */
    j.a = e.v[5];
    j.b = e.v[6];
    return run_job(imp, ts, machine, &e, &j);
  }
}

/* See import.h. */
void gp__tp_drm_sched_free(gp__tp_importer *imp) {
  for (size_t i = 0; i < imp->rings.n; i++) {
    gp__tp_vec_free(&imp->rings.v[i].q);
    gp__tp_map_free(&imp->rings.v[i].out_local);
    gp__tp_map2_free(&imp->rings.v[i].out_fence);
  }
  gp__tp_vec_free(&imp->rings);
  gp__tp_map_free(&imp->ring_by_name);
  gp__tp_map2_free(&imp->busy_fence);
  gp__tp_map_free(&imp->busy_global);
}
