/*
 * context.c - GL contexts as gpuperf contexts, their devices, and their
 * GL clock against the trace clock.
 *
 * A context is set up the first time it is made current through us: its
 * GL_VENDOR, GL_RENDERER and GL_VERSION name a device (one per renderer
 * string in the process; its one queue is the context's command stream),
 * the functions we call are looked up, and its clock is calibrated:
 * glGetInteger64v(GL_TIMESTAMP) read between two reads of the trace
 * clock, again every second at a swap, so that a drift between the two
 * clocks stays under the calibration's error.
 */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_off.h"
#include "glInt.h"

const gp_backend_ops *gp__gl_core;
const gp_counters_backend_ops *gp__gl_counters;

static const gp_backend_ops off_ops = GP__BACKEND_OFF_INIT;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
#define MAX_CTX 256
static gp__gl_ctx *ctxs[MAX_CTX]; /* reg_lock */
static struct {
  char renderer[128];
  uint32_t device_id;
} devs[16]; /* reg_lock */
static uint32_t ndevs;

static __thread gp__gl_ctx *cur;

/* Flush hook: what finished is written (a forced flush: the session ends,
 * so the current context's frames are waited for on this thread if it
 * is the one that has it current). Not in a signal handler that finishes
 * the session (core/death.c): the thread it interrupted may be inside GL,
 * where llvmpipe then waits forever for a fence that thread had yet to
 * flush, so GL is not called there; the frames in flight are lost, and
 * counted. That happens only when no swap came within a second of the
 * signal: a program that swaps has its session finished at its next
 * swap (gp__gl_swapped). */
static void flush_hook(void *user, bool forced) {
  (void)user;
  gp__gl_ctx *c = cur;
  if (!c || !c->ready)
    return;
  if (forced && gp__gl_core->death_in_handler())
    gp__gl_frames_lose(c);
  else
    gp__gl_frames_read(c, forced);
}

/* Whether a context of the process swaps (a safe point for death.c comes
 * with each swap); cleared when one is destroyed. Async-signal-safe. */
static atomic_bool swaps_seen;
static bool swapping(void) {
  return atomic_load(&swaps_seen);
}

static void core_once(void) {
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  if (!c) {
    fprintf(stderr, "gpuperf: libgpuperf-gl.so and the libgpuperf it loaded "
                    "are of different builds: OpenGL calls are not "
                    "recorded\n");
    c = &off_ops;
  }
  gp__gl_core = c;
  gp__gl_counters = gp_counters_backend_interface(
      GP_COUNTERS_BACKEND_VERSION, sizeof(gp_counters_backend_ops));
  /* Before the session starts: a V3D GPU's counters are this program's,
   * per frame (GL_AMD_performance_monitor), not system-wide, in a GL
   * program (the kernel gives them one way at a time). */
  if (gp__gl_counters)
    gp__gl_counters->counters_perjob_claim("v3d");
  c->activate();
  c->activity_add_flush_hook(flush_hook, NULL);
  c->death_set_defer(swapping);
}

/* See glInt.h. */
void gp__gl_swapped(gp__gl_ctx *c) {
  if (c->ready && !atomic_load_explicit(&swaps_seen, memory_order_relaxed))
    atomic_store(&swaps_seen, true);
  gp__gl_core->death_point();
}

/* See glInt.h. */
void gp__gl_core_load(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, core_once);
}

/* See glInt.h. */
gp__gl_ctx *gp__gl_current(void) {
  return cur;
}

/* See glInt.h. */
void gp__gl_warn_once(atomic_bool *flag, const char *msg) {
  if (!atomic_exchange(flag, true))
    fprintf(stderr, "%s\n", msg);
}

/* See glInt.h. */
uint64_t gp__gl_to_trace(const gp__gl_ctx *c, uint64_t t) {
  int64_t v = (int64_t)t - c->gl_offset;
  return v > 0 ? (uint64_t)v : 0;
}

/* See glInt.h. */
void gp__gl_calibrate(gp__gl_ctx *c, bool force) {
  if (!c->timed || !c->fn.GetInteger64v)
    return;
  uint64_t now = gp_get_timestamp();
  if (!force && c->cal_at && now - c->cal_at < 1000000000ull)
    return;
  /* The narrowest of three brackets. */
  int64_t best_off = 0;
  uint64_t best_w = UINT64_MAX;
  for (int i = 0; i < 3; i++) {
    GLint64 g = 0;
    uint64_t a = gp_get_timestamp();
    c->fn.GetInteger64v(GL_TIMESTAMP, &g);
    uint64_t b = gp_get_timestamp();
    if (g <= 0)
      return;
    if (b - a < best_w) {
      best_w = b - a;
      best_off = (int64_t)g - (int64_t)(a + (b - a) / 2);
    }
  }
  c->gl_offset = best_off;
  c->cal_at = now;
}

static void *fn(gp__gl_ctx *c, const char *name, const char *ext_name) {
  void *p = gp__gl_proc(name, c->egl);
  if (!p && ext_name)
    p = gp__gl_proc(ext_name, c->egl);
  return p;
}

/* See glInt.h. */
bool gp__gl_has_ext(gp__gl_ctx *c, const char *ext) {
  if (c->fn.GetStringi && c->fn.GetIntegerv &&
      (c->major >= 3 || (c->es && c->major >= 3))) {
    GLint n = 0;
    c->fn.GetIntegerv(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; i++) {
      const char *e = (const char *)c->fn.GetStringi(GL_EXTENSIONS, (GLuint)i);
      if (e && strcmp(e, ext) == 0)
        return true;
    }
    if (n > 0)
      return false;
  }
  const char *all = (const char *)c->fn.GetString(GL_EXTENSIONS);
  size_t len = strlen(ext);
  for (const char *p = all; p && (p = strstr(p, ext)); p += len)
    if ((p == all || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return true;
  return false;
}

static void lookup_fns(gp__gl_ctx *c) {
  gp__gl_fns *f = &c->fn;
  f->GetString = (gp_pfn_get_string)fn(c, "glGetString", NULL);
  f->GetStringi = (PFNGLGETSTRINGIPROC)fn(c, "glGetStringi", NULL);
  f->GetIntegerv = (gp_pfn_get_integerv)fn(c, "glGetIntegerv", NULL);
  f->GenQueries = (PFNGLGENQUERIESPROC)fn(c, "glGenQueries", "glGenQueriesEXT");
  f->DeleteQueries =
      (PFNGLDELETEQUERIESPROC)fn(c, "glDeleteQueries", "glDeleteQueriesEXT");
  f->BeginQuery = (PFNGLBEGINQUERYPROC)fn(c, "glBeginQuery", "glBeginQueryEXT");
  f->EndQuery = (PFNGLENDQUERYPROC)fn(c, "glEndQuery", "glEndQueryEXT");
  f->GetQueryObjectiv = (PFNGLGETQUERYOBJECTIVPROC)fn(
      c, c->es ? "glGetQueryObjectivEXT" : "glGetQueryObjectiv",
      c->es ? "glGetQueryObjectuivEXT" : NULL);
  if (!f->GetQueryObjectiv && c->es) /* ES 3: only the uint form */
    f->GetQueryObjectiv =
        (PFNGLGETQUERYOBJECTIVPROC)fn(c, "glGetQueryObjectuiv", NULL);
  f->GetQueryObjectui64v = (PFNGLGETQUERYOBJECTUI64VPROC)fn(
      c, "glGetQueryObjectui64v", "glGetQueryObjectui64vEXT");
  f->QueryCounter =
      (PFNGLQUERYCOUNTERPROC)fn(c, "glQueryCounter", "glQueryCounterEXT");
  f->GetInteger64v =
      (PFNGLGETINTEGER64VPROC)fn(c, "glGetInteger64v", "glGetInteger64vEXT");
  f->BindBuffer = (PFNGLBINDBUFFERPROC)fn(c, "glBindBuffer", NULL);
  f->DebugMessageCallback = (PFNGLDEBUGMESSAGECALLBACKPROC)fn(
      c, "glDebugMessageCallback", "glDebugMessageCallbackKHR");
}

/* The device of renderer, registered on first sight; reg_lock held. */
static uint32_t device_of(gp__gl_ctx *c, const char *vendor,
                          const char *renderer, const char *version,
                          bool *fresh) {
  *fresh = false;
  for (uint32_t i = 0; i < ndevs; i++)
    if (strcmp(devs[i].renderer, renderer) == 0)
      return devs[i].device_id;
  gp_device_queue_info q = {.name = "GL queue",
                            .description = "the context's command stream",
                            .kind = GP_QUEUE_GRAPHICS};
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.api = GP_API_OPEN_GL;
  info.name = renderer;
  info.vendor = vendor;
  info.model = renderer;
  info.architecture = c->es ? "OpenGL ES" : "OpenGL";
  info.driver_version = version;
  info.num_queues = 1;
  uint32_t id = UINT32_MAX;
  if (gp__gl_core->device_register(&info, &q, 1, &id) != 0)
    return UINT32_MAX;
  if (ndevs < sizeof(devs) / sizeof(devs[0])) {
    snprintf(devs[ndevs].renderer, sizeof(devs[ndevs].renderer), "%s",
             renderer);
    devs[ndevs++].device_id = id;
  }
  *fresh = true;
  return id;
}

/* See glInt.h. */
bool gp__gl_describe(gp__gl_ctx *c, const char **vendor, const char **renderer,
                     const char **version) {
  lookup_fns(c);
  if (!c->fn.GetString)
    return false;
  *vendor = (const char *)c->fn.GetString(GL_VENDOR);
  *renderer = (const char *)c->fn.GetString(GL_RENDERER);
  *version = (const char *)c->fn.GetString(GL_VERSION);
  if (!*vendor || !*renderer || !*version)
    return false;
  const char *v = *version;
  if (strncmp(v, "OpenGL ES", 9) == 0) {
    c->es = true;
    v += 9;
    while (*v && (*v < '0' || *v > '9'))
      v++;
  }
  if (sscanf(v, "%d.%d", &c->major, &c->minor) != 2)
    c->major = c->minor = 0;
  /* Again: ES names some of them differently. */
  if (c->es)
    lookup_fns(c);
  return true;
}

/* Sets up c, current on this thread. */
static void init(gp__gl_ctx *c) {
  c->ready = true;
  const char *vendor, *renderer, *version;
  if (!gp__gl_describe(c, &vendor, &renderer, &version))
    return;
  c->timed = c->fn.GenQueries && c->fn.QueryCounter && c->fn.GetQueryObjectiv &&
             c->fn.GetQueryObjectui64v && c->fn.GetInteger64v &&
             (c->es ? gp__gl_has_ext(c, "GL_EXT_disjoint_timer_query")
                    : (c->major > 3 || (c->major == 3 && c->minor >= 3) ||
                       gp__gl_has_ext(c, "GL_ARB_timer_query")));
  c->disjoint = c->es && c->timed;
  char dev_version[300];
  snprintf(dev_version, sizeof(dev_version), "%s", version);
  bool fresh = false;
  pthread_mutex_lock(&reg_lock);
  c->device_id = device_of(c, vendor, renderer, dev_version, &fresh);
  pthread_mutex_unlock(&reg_lock);
  if (c->device_id == UINT32_MAX)
    return;
  gp__gl_core->context_register(c->device_id, GP_API_OPEN_GL, 1,
                                &c->context_id);
  gp__gl_pm_init(c);
  if (fresh)
    gp__gl_counters_publish(c);
  gp__gl_log_init(c);
  gp__gl_calibrate(c, true);
  if (!c->timed) {
    static atomic_bool warned;
    gp__gl_warn_once(&warned,
                     "gpuperf: this GL context has no timer queries "
                     "(GL_ARB_timer_query, GL_EXT_disjoint_timer_query): its "
                     "frames and render passes are recorded without GPU "
                     "times");
  }
}

/* See glInt.h. */
void gp__gl_releasing(void) {
  gp__gl_ctx *c = cur;
  if (c && c->ready)
    gp__gl_frames_read(c, true);
}

/* See glInt.h. */
void gp__gl_made_current(void *handle, bool egl) {
  if (!handle) {
    cur = NULL;
    return;
  }
  gp__gl_core_load();
  gp__gl_ctx *c = NULL;
  pthread_mutex_lock(&reg_lock);
  int free_slot = -1;
  for (int i = 0; i < MAX_CTX; i++) {
    if (ctxs[i] && ctxs[i]->handle == handle) {
      c = ctxs[i];
      break;
    }
    if (!ctxs[i] && free_slot < 0)
      free_slot = i;
  }
  if (!c && free_slot >= 0) {
    c = calloc(1, sizeof(*c));
    if (c) {
      c->handle = handle;
      c->egl = egl;
      ctxs[free_slot] = c;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  cur = c;
  if (c && !c->ready)
    init(c);
}

/* See glInt.h. */
void gp__gl_context_destroyed(void *handle) {
  if (!handle)
    return;
  gp__gl_ctx *c = NULL;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < MAX_CTX; i++)
    if (ctxs[i] && ctxs[i]->handle == handle) {
      c = ctxs[i];
      ctxs[i] = NULL;
      break;
    }
  pthread_mutex_unlock(&reg_lock);
  if (!c)
    return;
  atomic_store(&swaps_seen, false); /* its swaps may have been the ones */
  gp__gl_hud_fini(c, c == cur);
  if (c == cur) { /* current here: what it has is read first */
    gp__gl_frames_read(c, true);
    gp__gl_frames_fini(c);
    if (c->pm)
      c->pm->fini(c);
    cur = NULL;
  } else if (c->frame_n || c->frame_open) {
    /* Current nowhere (GL cannot be asked): its frames in flight are
     * lost, and counted. */
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                    GP_DROP_SOURCE, c->context_id, 1,
                                    c->frame_n + (c->frame_open ? 1 : 0));
    for (uint32_t k = 0; k < c->frame_n; k++)
      gp__gl_counters->sampler_put(
          c->frames[(c->frame_head + k) % GP_GL_FRAMES].sampler);
  }
  if (c->context_id)
    gp__gl_core->context_unregister(c->context_id);
  free(c->amdpm);
  free(c->intelpq);
  free(c);
}
