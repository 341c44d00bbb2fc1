/*
 * frames.c - frames and render passes of a GL context, timed on the GPU
 * without waiting for it, and the API records of the calls.
 *
 * GL has no command buffers: the context's commands form one stream. We
 * cut it where the GPU's work changes meaning:
 *  - a run of work starts at the first GPU call (draw, clear) after a
 *    swap or a framebuffer switch, and ends at the next switch or swap;
 *    each run is a render pass (a GPU render stage slice, its render
 *    target the framebuffer object it drew into, 0 for the window);
 *  - a frame is the span from its first run's start to its swap (a stage
 *    named "Frame" whose submission id is the frame's number, so that the
 *    passes nest in it on the queue's track).
 * Each start and end is a timestamp query (glQueryCounter(GL_TIMESTAMP)).
 * The results are read at later swaps, oldest frame first, only once
 * GL_QUERY_RESULT_AVAILABLE says they are there: never glFinish, never a
 * wait, except when the context is destroyed or the session ends (a
 * forced read). GL times are mapped to the trace clock by context.c's
 * calibration. Up to GP_GL_FRAMES frames may be in flight; past that the
 * oldest is given up and counted as dropped.
 *
 * Correlation: the first call of a run (its first draw or clear) and the
 * pass share a correlation id, as do the swap and its frame, so Perfetto
 * draws a flow from each to the GPU work it started.
 */
#include <stdlib.h>
#include <string.h>

#include "glInt.h"

#ifndef GL_QUERY_BUFFER_BINDING
#define GL_QUERY_BUFFER_BINDING 0x9193
#define GL_QUERY_BUFFER 0x9192
#endif
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

/* ------------------------------------------------------------------ */
/* API records                                                          */

/* See glInt.h. */
bool gp__gl_api_on(void) {
  return gp__gl_core && gp__gl_core->activity_enabled(GP_ACTIVITY_KIND_API, 0);
}

/* See glInt.h. */
void gp__gl_api(uint32_t cbid, uint64_t start, uint64_t corr) {
  static _Atomic uint32_t ids[64];
  uint32_t id = cbid < 64 ? atomic_load(&ids[cbid]) : 0;
  if (!id) {
    id = gp__gl_core->string_intern(gp__gl_fn_name(cbid));
    if (cbid < 64)
      atomic_store(&ids[cbid], id);
  }
  gp_activity_api *r =
      gp__gl_core->activity_reserve(GP_ACTIVITY_KIND_API, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->correlation_id = corr;
  r->start = start;
  r->end = gp_get_timestamp();
  r->process_id = gp__gl_core->pid();
  r->thread_id = gp__gl_core->tid();
  r->domain = GP_API_DOMAIN_OPENGL;
  r->cbid = cbid;
  r->name_id = id;
  r->return_value = 0;
  gp__gl_core->activity_commit(r);
}

/* ------------------------------------------------------------------ */
/* Queries and marks                                                    */

static GLuint take_query(gp__gl_ctx *c) {
  if (!c->nfree) {
    GLuint q[16];
    memset(q, 0, sizeof(q));
    c->fn.GenQueries(16, q);
    for (int i = 0; i < 16 && q[i]; i++)
      c->free_q[c->nfree++] = q[i];
    if (!c->nfree)
      return 0;
  }
  return c->free_q[--c->nfree];
}

static void give_query(gp__gl_ctx *c, GLuint q) {
  if (!q)
    return;
  if (c->nfree < GP_GL_MARKS)
    c->free_q[c->nfree++] = q;
  else
    c->fn.DeleteQueries(1, &q);
}

/* See glInt.h. */
gp__gl_frame *gp__gl_open_frame(gp__gl_ctx *c) {
  return c->frame_open
             ? &c->frames[(c->frame_head + c->frame_n - 1) % GP_GL_FRAMES]
             : NULL;
}

/* Adds a mark to the open frame; false if the ring is full (the mark is
 * lost, and counted). */
static bool mark(gp__gl_ctx *c, gp__gl_frame *f, bool end) {
  if (c->mark_n == GP_GL_MARKS) {
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                    GP_DROP_SOURCE, c->context_id, 1, 1);
    return false;
  }
  gp__gl_mark *m = &c->marks[(c->mark_head + c->mark_n) % GP_GL_MARKS];
  m->query = 0;
  if (c->timed && (m->query = take_query(c)) != 0)
    c->fn.QueryCounter(m->query, GL_TIMESTAMP);
  m->cpu = gp_get_timestamp();
  m->start = !end;
  m->end = end;
  m->fbo = c->fbo;
  m->corr = c->run_corr;
  c->mark_n++;
  f->n++;
  return true;
}

/* The oldest frame given up: its queries freed, its stages counted as
 * dropped. */
static void drop_oldest(gp__gl_ctx *c) {
  gp__gl_frame *f = &c->frames[c->frame_head];
  for (uint32_t k = 0; k < f->n; k++)
    give_query(c, c->marks[(f->first + k) % GP_GL_MARKS].query);
  c->mark_head = (c->mark_head + f->n) % GP_GL_MARKS;
  c->mark_n -= f->n;
  gp__gl_stats_drop(c, f);
  gp__gl_pm_drop(c, f);
  gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE, GP_DROP_SOURCE,
                                  c->context_id, 1, 1 + f->n / 2);
  c->frame_head = (c->frame_head + 1) % GP_GL_FRAMES;
  c->frame_n--;
}

static gp__gl_frame *begin_frame(gp__gl_ctx *c) {
  if (c->frame_n == GP_GL_FRAMES)
    gp__gl_frames_read(c, false);
  if (c->frame_n == GP_GL_FRAMES)
    drop_oldest(c);
  gp__gl_frame *f = &c->frames[(c->frame_head + c->frame_n) % GP_GL_FRAMES];
  memset(f, 0, sizeof(*f));
  f->number = ++c->frames_done;
  f->first = (c->mark_head + c->mark_n) % GP_GL_MARKS;
  c->frame_n++;
  c->frame_open = true;
  bool amd = false;
  uint32_t wanted = gp__gl_stats_wanted(c, &amd, &f->sampler);
  /* The monitor outside the queries: begun first, ended last. */
  if (amd && c->pm)
    c->pm->begin(c, f);
  if (wanted)
    gp__gl_stats_begin(c, f, wanted);
  return f;
}

/* Whether frames are wanted now: their stages by a session, their
 * counters by a session or the HUD, their GPU times by the HUD. */
static bool recording(const gp__gl_ctx *c) {
  return c->ready && c->device_id != UINT32_MAX &&
         (gp__gl_core->activity_enabled(GP_ACTIVITY_KIND_RENDER_STAGE,
                                        c->context_id) ||
          gp__gl_counters_sampled(c) || gp__gl_hud_on());
}

/* See glInt.h. */
uint64_t gp__gl_work(gp__gl_ctx *c) {
  gp__gl_frame *f = gp__gl_open_frame(c);
  if (!f) {
    if (!recording(c))
      return 0;
    f = begin_frame(c);
  }
  if (c->in_run)
    return 0;
  c->run_corr = gp__gl_core->correlation_next();
  if (c->reusable) {
    /* No GPU work since the switch's mark: the run starts there. */
    gp__gl_mark *m = &c->marks[(c->mark_head + c->mark_n - 1) % GP_GL_MARKS];
    m->start = true;
    m->fbo = c->fbo;
    m->corr = c->run_corr;
    c->reusable = false;
  } else if (!mark(c, f, false)) {
    return 0;
  }
  c->in_run = true;
  return c->run_corr;
}

/* Triangles of a draw of mode with count vertices; 0 when not triangles
 * or unknown (count < 0: a display list). */
static uint64_t triangles(GLenum mode, int64_t count) {
  if (count <= 0)
    return 0;
  switch (mode) {
  case GL_TRIANGLES:
    return (uint64_t)count / 3;
  case GL_TRIANGLE_STRIP:
  case GL_TRIANGLE_FAN:
  case GL_POLYGON:
    return count >= 3 ? (uint64_t)count - 2 : 0;
  case GL_QUADS:
    return (uint64_t)count / 4 * 2;
  case GL_QUAD_STRIP:
    return count >= 4 ? ((uint64_t)count - 2) / 2 * 2 : 0;
  default:
    return 0;
  }
}

/* See glInt.h. */
void gp__gl_draw(gp__gl_ctx *c, GLenum mode, int64_t count, int64_t instances) {
  gp__gl_frame *f = gp__gl_open_frame(c);
  if (!f)
    return;
  f->draws++;
  if (instances > 0)
    f->triangles += triangles(mode, count) * (uint64_t)instances;
}

/* Ends the open run (at a switch or the frame's end). */
static void end_run(gp__gl_ctx *c, gp__gl_frame *f, bool at_switch) {
  if (!c->in_run)
    return;
  c->in_run = false;
  if (mark(c, f, true)) {
    c->reusable = at_switch;
    return;
  }
  /* Its start mark has no end: the run is lost. A mark that only
   * started it is given back; one that also ended the run before keeps
   * that. */
  gp__gl_mark *m = &c->marks[(c->mark_head + c->mark_n - 1) % GP_GL_MARKS];
  if (m->end) {
    m->start = false;
    return;
  }
  give_query(c, m->query);
  c->mark_n--;
  f->n--;
}

/* See glInt.h. */
void gp__gl_bind_fbo(gp__gl_ctx *c, uint32_t fbo) {
  if (fbo == c->fbo)
    return;
  gp__gl_frame *f = gp__gl_open_frame(c);
  if (f)
    end_run(c, f, true);
  c->fbo = fbo;
}

/* See glInt.h. */
uint64_t gp__gl_frame_end(gp__gl_ctx *c) {
  gp__gl_frame *f = gp__gl_open_frame(c);
  if (!f)
    return 0;
  end_run(c, f, false);
  c->reusable = false;
  gp__gl_stats_end(c, f);
  if (c->pm)
    c->pm->end(c, f);
  f->corr = gp__gl_core->correlation_next();
  c->frame_open = false;
  return f->corr;
}

/* ------------------------------------------------------------------ */
/* Read-back                                                            */

static bool query_ready(gp__gl_ctx *c, GLuint q) {
  if (!q)
    return true;
  GLint avail = 0;
  c->fn.GetQueryObjectiv(q, GL_QUERY_RESULT_AVAILABLE, &avail);
  return avail != 0;
}

/* Frames a monitor's results may take before it is given up. */
#define MONITOR_PATIENCE 16

static bool frame_ready(gp__gl_ctx *c, gp__gl_frame *f) {
  /* Timestamps complete in order: the last one says for all. */
  if (f->n &&
      !query_ready(c, c->marks[(f->first + f->n - 1) % GP_GL_MARKS].query))
    return false;
  if (!gp__gl_stats_ready(c, f))
    return false;
  if (gp__gl_pm_ready(c, f))
    return true;
  /* A monitor the driver never makes available (its Begin refused, say:
   * GL reports that only through glGetError, which is the program's) is
   * given up after a while, so the frame and those after it are written;
   * its counters are lost, and said so. */
  if (c->frames_done - f->number < MONITOR_PATIENCE)
    return false;
  gp__gl_pm_drop(c, f);
  gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE,
                                  c->context_id, 1, 1);
  static atomic_bool warned;
  gp__gl_warn_once(&warned,
                   "gpuperf: the driver counters' (GL_AMD_performance_monitor "
                   "or GL_INTEL_performance_query) results of a frame never "
                   "became available (the driver refused its monitor or "
                   "query?): its frames' driver counters are lost");
  return true;
}

static void stage(gp__gl_ctx *c, uint32_t kind, uint64_t corr, uint64_t queued,
                  uint64_t start, uint64_t end, uint32_t fbo, uint32_t name_id,
                  uint32_t number) {
  gp__gpu_work w = {.correlation_id = corr,
                    .queued = queued,
                    .start = start,
                    .end = end,
                    .device_id = c->device_id,
                    .context_id = c->context_id,
                    .stream_id = 1,
                    .queue_id = 0};
  if (!gp__gl_core->activity_enabled(GP_ACTIVITY_KIND_RENDER_STAGE,
                                     c->context_id))
    return; /* timed for the HUD or the counters only */
  uint32_t size = gp__gpu_work_size(GP_ACTIVITY_KIND_RENDER_STAGE, 0);
  gp_activity_render_stage *r = gp__gl_core->activity_reserve(
      GP_ACTIVITY_KIND_RENDER_STAGE, size, c->context_id, 1);
  if (!r)
    return;
  gp__gpu_work_fill(r, GP_ACTIVITY_KIND_RENDER_STAGE, &w);
  r->stage = kind;
  r->render_target = fbo;
  r->name_id = name_id;
  r->submission_id = number;
  gp__gl_core->activity_commit(r);
}

/* Writes f's stages and counters; times: whether its queries can be read
 * (not after a disjoint event). */
static void write_frame(gp__gl_ctx *c, gp__gl_frame *f, bool times) {
  static _Atomic uint32_t frame_name;
  uint32_t fname = atomic_load(&frame_name);
  if (!fname) {
    fname = gp__gl_core->string_intern("Frame");
    atomic_store(&frame_name, fname);
  }
  uint64_t t[GP_GL_FRAME_MARKS];
  uint32_t n = f->n < GP_GL_FRAME_MARKS ? f->n : GP_GL_FRAME_MARKS;
  for (uint32_t k = 0; k < n; k++) {
    GLuint q = c->marks[(f->first + k) % GP_GL_MARKS].query;
    GLuint64 v = 0;
    if (q && times)
      c->fn.GetQueryObjectui64v(q, GL_QUERY_RESULT, &v);
    t[k] = v ? gp__gl_to_trace(c, v) : 0;
  }
  if (n >= 2) {
    const gp__gl_mark *m0 = &c->marks[f->first];
    stage(c, GP_RENDER_STAGE_COMMAND_BUFFER, f->corr, m0->cpu, t[0], t[n - 1],
          0, fname, (uint32_t)f->number);
    for (uint32_t k = 0; k + 1 < n; k++) {
      const gp__gl_mark *m = &c->marks[(f->first + k) % GP_GL_MARKS];
      if (m->start)
        stage(c, GP_RENDER_STAGE_RENDER_PASS, m->corr, m->cpu, t[k], t[k + 1],
              m->fbo, 0, (uint32_t)f->number);
    }
  }
  if (n < f->n) /* runs past what one frame can list */
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                    GP_DROP_SOURCE, c->context_id, 1, f->n - n);
  uint64_t start = n ? t[0] : 0, end = n ? t[n - 1] : 0;
  if (start && end > start)
    gp__gl_hud_gpu_frame(end - start);
  if (times && (!start || !end)) /* untimed: the CPU's view of the frame */
    start = end = 0;
  gp__gl_stats_emit(c, f, start, end);
}

/* See glInt.h. */
void gp__gl_frames_read(gp__gl_ctx *c, bool forced) {
  if (!c->ready || !c->frame_n)
    return;
  uint32_t done = c->frame_n - (c->frame_open ? 1 : 0);
  if (!done)
    return;
  /* A buffer bound to GL_QUERY_BUFFER would receive our results. */
  GLint qbuf = 0;
  bool has_qbuf = !c->es && (c->major > 4 || (c->major == 4 && c->minor >= 4));
  if (has_qbuf) {
    c->fn.GetIntegerv(GL_QUERY_BUFFER_BINDING, &qbuf);
    if (qbuf)
      c->fn.BindBuffer(GL_QUERY_BUFFER, 0);
  }
  bool times = true;
  if (c->disjoint) {
    GLint dj = 0;
    c->fn.GetIntegerv(GL_GPU_DISJOINT_EXT, &dj);
    times = dj == 0;
  }
  gp__gl_calibrate(c, false);
  for (; done; done--) {
    gp__gl_frame *f = &c->frames[c->frame_head];
    if (!forced && !frame_ready(c, f))
      break;
    write_frame(c, f, times);
    for (uint32_t k = 0; k < f->n; k++)
      give_query(c, c->marks[(f->first + k) % GP_GL_MARKS].query);
    c->mark_head = (c->mark_head + f->n) % GP_GL_MARKS;
    c->mark_n -= f->n;
    c->frame_head = (c->frame_head + 1) % GP_GL_FRAMES;
    c->frame_n--;
  }
  if (qbuf)
    c->fn.BindBuffer(GL_QUERY_BUFFER, (GLuint)qbuf);
}

/* See glInt.h. */
void gp__gl_frames_lose(gp__gl_ctx *c) {
  /* The open frame was never presented: like at exit(), it is not a
   * frame (nor written, nor lost). */
  uint32_t done = c->frame_n - (c->frame_open ? 1 : 0);
  uint64_t stages = 0;
  for (uint32_t k = 0; k < done; k++)
    stages += 1 + c->frames[(c->frame_head + k) % GP_GL_FRAMES].n / 2;
  if (stages)
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                    GP_DROP_SOURCE, c->context_id, 1, stages);
  /* Their queries and monitors stay allocated: the process is ending. */
  c->frame_head = (c->frame_head + c->frame_n) % GP_GL_FRAMES;
  c->frame_n = 0;
  c->frame_open = false;
  c->mark_head = (c->mark_head + c->mark_n) % GP_GL_MARKS;
  c->mark_n = 0;
  c->in_run = false;
}

/* See glInt.h. */
void gp__gl_frames_fini(gp__gl_ctx *c) {
  while (c->frame_n)
    drop_oldest(c);
  if (c->nfree && c->fn.DeleteQueries)
    c->fn.DeleteQueries((GLsizei)c->nfree, c->free_q);
  c->nfree = 0;
  gp__gl_stats_fini(c);
}
