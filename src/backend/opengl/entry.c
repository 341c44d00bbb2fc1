/*
 * entry.c - the GL, GLX and EGL entry points libgpuperf-gl.so defines.
 *
 * Each wrapper is gp__gl_w_<name> (hidden), exported under the real name
 * by an alias, so that the lookups (resolve.c) can hand out our wrapper
 * whatever an earlier preload defines. A wrapper without a current
 * context of ours (none made current through us yet) only calls the real
 * function.
 *
 * dlsym is ours too, for loaders that open libGL themselves and look the
 * GL calls up in it (libepoxy; SDL's GLX calls): a name we wrap gets our
 * wrapper, everything else what the real dlsym says. dlsym(RTLD_NEXT)
 * depends on who calls it; ours passes such calls on as a tail call, so
 * the real dlsym sees the caller's return address (entry.c is built with
 * sibling-call optimisation for this; the test opengl_dlsym_rtld_next
 * checks it). GPUPERF_GL_DLSYM=0 turns the dlsym hook off.
 */

#define GL_GLEXT_PROTOTYPES
#include <EGL/egl.h>
#include <GL/glx.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "glInt.h"

/* Names only some headers declare (ES extensions). */
typedef void(APIENTRY *gp_debugproc)(GLenum, GLenum, GLuint, GLenum, GLsizei,
                                     const GLchar *, const void *);
void glDebugMessageCallbackKHR(gp_debugproc cb, const void *user);
void glBeginQueryEXT(GLenum target, GLuint id);
void glEndQueryEXT(GLenum target);

#define REAL(name) GP_GL_REAL(name)
#define CBID(name) (uint32_t) GP_GL_CBID_##name

/* Exports wrapper gp__gl_w_<name> as <name>. */
#define EXPORT_AS(name, ret, params)                                           \
  GP_GL_EXPORT ret name params __attribute__((alias("gp__gl_w_" #name)));

/* Start of an API record: its start time, or 0 when API records are off. */
static inline uint64_t api_start(void) {
  return gp__gl_api_on() ? gp_get_timestamp() : 0;
}

static inline void api_end(uint32_t cbid, uint64_t t0, uint64_t corr) {
  if (t0)
    gp__gl_api(cbid, t0, corr);
}

/* An entry point's API callbacks (gpuperf/callback.h). */
typedef struct gl_cb {
  bool on; /* called at entry: at exit too */
  gp__cb_api_call api;
} gl_cb;

static uint64_t cb_enter_slow(gl_cb *k, uint32_t cbid, const gp__gl_ctx *c,
                              uint64_t corr) {
  if (!corr)
    corr = gp__gl_core->correlation_next();
  k->api.d = (gp_callback_api_data){.api_domain = GP_API_DOMAIN_OPENGL,
                                    .cbid = cbid,
                                    .function_name = gp__gl_fn_name(cbid),
                                    .correlation_id = corr,
                                    .context_id = c ? c->context_id : 0,
                                    .thread_id = gp__gl_core->tid()};
  gp__gl_core->callback_api(&k->api, GP_CALLBACK_SITE_ENTER, 0);
  return corr;
}

/* The entry callbacks of call cbid in context c, if a subscriber wants
 * GL's; returns the correlation id for the call's API record: corr, or
 * a new one for a call that had none. */
static inline uint64_t cb_enter(gl_cb *k, uint32_t cbid, const gp__gl_ctx *c,
                                uint64_t corr) {
  k->on = gp__gl_core && (atomic_load_explicit(gp__gl_core->callback_mask,
                                               memory_order_relaxed) &
                          GP__CB_API_BIT(GP_API_DOMAIN_OPENGL));
  return GP_UNLIKELY(k->on) ? cb_enter_slow(k, cbid, c, corr) : corr;
}

/* The exit callbacks of a call entered (GL calls return no status: 0, as
 * in their API records). */
static inline void cb_exit(gl_cb *k) {
  if (GP_UNLIKELY(k->on))
    gp__gl_core->callback_api(&k->api, GP_CALLBACK_SITE_EXIT, 0);
}

/* ------------------------------------------------------------------ */
/* Frames: swaps                                                        */

static void swap_before(gp__gl_ctx *c, uint64_t *t0, uint64_t *corr, int w,
                        int h) {
  *t0 = api_start();
  *corr = gp__gl_frame_end(c);
  gp__gl_hud_swap(c, w, h); /* after the frame's end: not measured in it */
}

static void swap_after(gp__gl_ctx *c, uint32_t cbid, uint64_t t0,
                       uint64_t corr) {
  gp__gl_hud_swapped();
  api_end(cbid, t0, corr);
  gp__gl_frames_read(c, false);
  gp__gl_swapped(c); /* a safe point: a signal noted meanwhile ends here */
}

/* The size of a GLX drawable or EGL surface (0 x 0 if it cannot be
 * asked): the default framebuffer the HUD draws into. */
static void glx_size(Display *dpy, GLXDrawable d, int *w, int *h) {
  static void *_Atomic query;
  void *q = atomic_load(&query);
  if (!q && (q = gp__gl_real_dlsym(RTLD_NEXT, "glXQueryDrawable")))
    atomic_store(&query, q);
  unsigned uw = 0, uh = 0;
  if (q) {
    ((void (*)(Display *, GLXDrawable, int, unsigned *))q)(dpy, d, GLX_WIDTH,
                                                           &uw);
    ((void (*)(Display *, GLXDrawable, int, unsigned *))q)(dpy, d, GLX_HEIGHT,
                                                           &uh);
  }
  *w = (int)uw;
  *h = (int)uh;
}

static void egl_size(EGLDisplay dpy, EGLSurface s, int *w, int *h) {
  static void *_Atomic query;
  void *q = atomic_load(&query);
  if (!q && (q = gp__gl_real_dlsym(RTLD_NEXT, "eglQuerySurface")))
    atomic_store(&query, q);
  EGLint ew = 0, eh = 0;
  if (q) {
    ((EGLBoolean(*)(EGLDisplay, EGLSurface, EGLint, EGLint *))q)(
        dpy, s, EGL_WIDTH, &ew);
    ((EGLBoolean(*)(EGLDisplay, EGLSurface, EGLint, EGLint *))q)(
        dpy, s, EGL_HEIGHT, &eh);
  }
  *w = ew;
  *h = eh;
}

__attribute__((visibility("hidden"))) void
gp__gl_w_glXSwapBuffers(Display *dpy, GLXDrawable d) {
  gp__gl_ctx *c = gp__gl_current();
  uint64_t t0 = 0, corr = 0;
  if (c) {
    int w = 0, h = 0;
    if (!c->hud_failed && gp__gl_hud_maybe())
      glx_size(dpy, d, &w, &h);
    swap_before(c, &t0, &corr, w, h);
  }
  gl_cb k;
  k.on = false;
  if (c)
    corr = cb_enter(&k, CBID(glXSwapBuffers), c, corr);
  if (REAL(glXSwapBuffers))
    REAL(glXSwapBuffers)(dpy, d);
  if (c)
    swap_after(c, CBID(glXSwapBuffers), t0, corr);
  cb_exit(&k);
}
EXPORT_AS(glXSwapBuffers, void, (Display * dpy, GLXDrawable d))

__attribute__((visibility("hidden"))) EGLBoolean
gp__gl_w_eglSwapBuffers(EGLDisplay dpy, EGLSurface s) {
  gp__gl_ctx *c = gp__gl_current();
  uint64_t t0 = 0, corr = 0;
  if (c) {
    int w = 0, h = 0;
    if (!c->hud_failed && gp__gl_hud_maybe())
      egl_size(dpy, s, &w, &h);
    swap_before(c, &t0, &corr, w, h);
  }
  gl_cb k;
  k.on = false;
  if (c)
    corr = cb_enter(&k, CBID(eglSwapBuffers), c, corr);
  EGLBoolean ok =
      REAL(eglSwapBuffers) ? REAL(eglSwapBuffers)(dpy, s) : EGL_FALSE;
  if (c)
    swap_after(c, CBID(eglSwapBuffers), t0, corr);
  cb_exit(&k);
  return ok;
}
EXPORT_AS(eglSwapBuffers, EGLBoolean, (EGLDisplay dpy, EGLSurface s))

/* ------------------------------------------------------------------ */
/* Contexts                                                             */

__attribute__((visibility("hidden"))) Bool
gp__gl_w_glXMakeCurrent(Display *dpy, GLXDrawable d, GLXContext ctx) {
  if (!ctx)
    gp__gl_releasing();
  Bool ok = REAL(glXMakeCurrent) ? REAL(glXMakeCurrent)(dpy, d, ctx) : False;
  if (ok)
    gp__gl_made_current(ctx, false);
  return ok;
}
EXPORT_AS(glXMakeCurrent, Bool, (Display * dpy, GLXDrawable d, GLXContext ctx))

__attribute__((visibility("hidden"))) Bool
gp__gl_w_glXMakeContextCurrent(Display *dpy, GLXDrawable draw, GLXDrawable read,
                               GLXContext ctx) {
  if (!ctx)
    gp__gl_releasing();
  Bool ok = REAL(glXMakeContextCurrent)
                ? REAL(glXMakeContextCurrent)(dpy, draw, read, ctx)
                : False;
  if (ok)
    gp__gl_made_current(ctx, false);
  return ok;
}
EXPORT_AS(glXMakeContextCurrent, Bool,
          (Display * dpy, GLXDrawable draw, GLXDrawable read, GLXContext ctx))

__attribute__((visibility("hidden"))) EGLBoolean
gp__gl_w_eglMakeCurrent(EGLDisplay dpy, EGLSurface draw, EGLSurface read,
                        EGLContext ctx) {
  if (ctx == EGL_NO_CONTEXT)
    gp__gl_releasing();
  EGLBoolean ok = REAL(eglMakeCurrent)
                      ? REAL(eglMakeCurrent)(dpy, draw, read, ctx)
                      : EGL_FALSE;
  if (ok)
    gp__gl_made_current(ctx == EGL_NO_CONTEXT ? NULL : ctx, true);
  return ok;
}
EXPORT_AS(eglMakeCurrent, EGLBoolean,
          (EGLDisplay dpy, EGLSurface draw, EGLSurface read, EGLContext ctx))

__attribute__((visibility("hidden"))) void
gp__gl_w_glXDestroyContext(Display *dpy, GLXContext ctx) {
  gp__gl_context_destroyed(ctx);
  if (REAL(glXDestroyContext))
    REAL(glXDestroyContext)(dpy, ctx);
}
EXPORT_AS(glXDestroyContext, void, (Display * dpy, GLXContext ctx))

__attribute__((visibility("hidden"))) EGLBoolean
gp__gl_w_eglDestroyContext(EGLDisplay dpy, EGLContext ctx) {
  gp__gl_context_destroyed(ctx);
  return REAL(eglDestroyContext) ? REAL(eglDestroyContext)(dpy, ctx)
                                 : EGL_FALSE;
}
EXPORT_AS(eglDestroyContext, EGLBoolean, (EGLDisplay dpy, EGLContext ctx))

/* ------------------------------------------------------------------ */
/* Work: draws, clears                                                  */

/* The body of a call that issues GPU work: the run's bookkeeping around
 * the real call, and its API record. */
#define WORK_CALL(name, args, draw_stmt)                                       \
  do {                                                                         \
    gp__gl_ctx *c = gp__gl_current();                                          \
    if (!c) {                                                                  \
      if (REAL(name))                                                          \
        REAL(name) args;                                                       \
      return;                                                                  \
    }                                                                          \
    uint64_t t0 = api_start();                                                 \
    gl_cb k_;                                                                  \
    uint64_t corr = cb_enter(&k_, CBID(name), c, gp__gl_work(c));              \
    if (REAL(name))                                                            \
      REAL(name) args;                                                         \
    draw_stmt;                                                                 \
    api_end(CBID(name), t0, corr);                                             \
    cb_exit(&k_);                                                              \
  } while (0)

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawArrays(GLenum mode, GLint first, GLsizei count) {
  WORK_CALL(glDrawArrays, (mode, first, count), gp__gl_draw(c, mode, count, 1));
}
EXPORT_AS(glDrawArrays, void, (GLenum mode, GLint first, GLsizei count))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawElements(GLenum mode, GLsizei count, GLenum type,
                        const void *idx) {
  WORK_CALL(glDrawElements, (mode, count, type, idx),
            gp__gl_draw(c, mode, count, 1));
}
EXPORT_AS(glDrawElements, void,
          (GLenum mode, GLsizei count, GLenum type, const void *idx))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawArraysInstanced(GLenum mode, GLint first, GLsizei count,
                               GLsizei n) {
  WORK_CALL(glDrawArraysInstanced, (mode, first, count, n),
            gp__gl_draw(c, mode, count, n));
}
EXPORT_AS(glDrawArraysInstanced, void,
          (GLenum mode, GLint first, GLsizei count, GLsizei n))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawElementsInstanced(GLenum mode, GLsizei count, GLenum type,
                                 const void *idx, GLsizei n) {
  WORK_CALL(glDrawElementsInstanced, (mode, count, type, idx, n),
            gp__gl_draw(c, mode, count, n));
}
EXPORT_AS(glDrawElementsInstanced, void,
          (GLenum mode, GLsizei count, GLenum type, const void *idx, GLsizei n))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawRangeElements(GLenum mode, GLuint lo, GLuint hi, GLsizei count,
                             GLenum type, const void *idx) {
  WORK_CALL(glDrawRangeElements, (mode, lo, hi, count, type, idx),
            gp__gl_draw(c, mode, count, 1));
}
EXPORT_AS(glDrawRangeElements, void,
          (GLenum mode, GLuint lo, GLuint hi, GLsizei count, GLenum type,
           const void *idx))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDrawElementsBaseVertex(GLenum mode, GLsizei count, GLenum type,
                                  const void *idx, GLint base) {
  WORK_CALL(glDrawElementsBaseVertex, (mode, count, type, idx, base),
            gp__gl_draw(c, mode, count, 1));
}
EXPORT_AS(glDrawElementsBaseVertex, void,
          (GLenum mode, GLsizei count, GLenum type, const void *idx,
           GLint base))

__attribute__((visibility("hidden"))) void
gp__gl_w_glMultiDrawArrays(GLenum mode, const GLint *first,
                           const GLsizei *count, GLsizei n) {
  WORK_CALL(glMultiDrawArrays, (mode, first, count, n), {
    for (GLsizei i = 0; count && i < n; i++)
      gp__gl_draw(c, mode, count[i], 1);
  });
}
EXPORT_AS(glMultiDrawArrays, void,
          (GLenum mode, const GLint *first, const GLsizei *count, GLsizei n))

/* Display lists: a draw each, of geometry we do not see (their
 * primitives are in the pipeline statistics). */
__attribute__((visibility("hidden"))) void gp__gl_w_glCallList(GLuint list) {
  WORK_CALL(glCallList, (list), gp__gl_draw(c, 0, -1, 1));
}
EXPORT_AS(glCallList, void, (GLuint list))

__attribute__((visibility("hidden"))) void
gp__gl_w_glCallLists(GLsizei n, GLenum type, const void *lists) {
  WORK_CALL(glCallLists, (n, type, lists), {
    for (GLsizei i = 0; i < n; i++)
      gp__gl_draw(c, 0, -1, 1);
  });
}
EXPORT_AS(glCallLists, void, (GLsizei n, GLenum type, const void *lists))

__attribute__((visibility("hidden"))) void gp__gl_w_glClear(GLbitfield mask) {
  WORK_CALL(glClear, (mask), (void)0);
}
EXPORT_AS(glClear, void, (GLbitfield mask))

/* ------------------------------------------------------------------ */
/* Other recorded calls                                                 */

/* A call recorded as an API slice only. */
#define API_CALL(name, args)                                                   \
  do {                                                                         \
    gp__gl_ctx *c_ = gp__gl_current();                                         \
    uint64_t t0 = c_ ? api_start() : 0;                                        \
    gl_cb k_;                                                                  \
    k_.on = false;                                                             \
    uint64_t corr_ = c_ ? cb_enter(&k_, CBID(name), c_, 0) : 0;                \
    if (REAL(name))                                                            \
      REAL(name) args;                                                         \
    api_end(CBID(name), t0, corr_);                                            \
    cb_exit(&k_);                                                              \
  } while (0)

__attribute__((visibility("hidden"))) void gp__gl_w_glFinish(void) {
  API_CALL(glFinish, ());
}
EXPORT_AS(glFinish, void, (void))

__attribute__((visibility("hidden"))) void gp__gl_w_glFlush(void) {
  API_CALL(glFlush, ());
}
EXPORT_AS(glFlush, void, (void))

__attribute__((visibility("hidden"))) void
gp__gl_w_glBufferData(GLenum target, GLsizeiptr size, const void *data,
                      GLenum usage) {
  API_CALL(glBufferData, (target, size, data, usage));
}
EXPORT_AS(glBufferData, void,
          (GLenum target, GLsizeiptr size, const void *data, GLenum usage))

__attribute__((visibility("hidden"))) void
gp__gl_w_glBufferSubData(GLenum target, GLintptr off, GLsizeiptr size,
                         const void *data) {
  API_CALL(glBufferSubData, (target, off, size, data));
}
EXPORT_AS(glBufferSubData, void,
          (GLenum target, GLintptr off, GLsizeiptr size, const void *data))

__attribute__((visibility("hidden"))) void
gp__gl_w_glTexImage2D(GLenum target, GLint level, GLint ifmt, GLsizei w,
                      GLsizei h, GLint border, GLenum fmt, GLenum type,
                      const void *px) {
  API_CALL(glTexImage2D, (target, level, ifmt, w, h, border, fmt, type, px));
}
EXPORT_AS(glTexImage2D, void,
          (GLenum target, GLint level, GLint ifmt, GLsizei w, GLsizei h,
           GLint border, GLenum fmt, GLenum type, const void *px))

__attribute__((visibility("hidden"))) void
gp__gl_w_glTexSubImage2D(GLenum target, GLint level, GLint x, GLint y,
                         GLsizei w, GLsizei h, GLenum fmt, GLenum type,
                         const void *px) {
  API_CALL(glTexSubImage2D, (target, level, x, y, w, h, fmt, type, px));
}
EXPORT_AS(glTexSubImage2D, void,
          (GLenum target, GLint level, GLint x, GLint y, GLsizei w, GLsizei h,
           GLenum fmt, GLenum type, const void *px))

__attribute__((visibility("hidden"))) void
gp__gl_w_glCompileShader(GLuint shader) {
  API_CALL(glCompileShader, (shader));
}
EXPORT_AS(glCompileShader, void, (GLuint shader))

__attribute__((visibility("hidden"))) void
gp__gl_w_glLinkProgram(GLuint program) {
  API_CALL(glLinkProgram, (program));
}
EXPORT_AS(glLinkProgram, void, (GLuint program))

/* Framebuffer binds end the run of work drawn into the old one. */
static void bind_fbo(uint32_t cbid, GLenum target, GLuint fb,
                     void (*real)(GLenum, GLuint)) {
  gp__gl_ctx *c = gp__gl_current();
  uint64_t t0 = c ? api_start() : 0;
  gl_cb k;
  k.on = false;
  uint64_t corr = c ? cb_enter(&k, cbid, c, 0) : 0;
  if (c && (target == GL_FRAMEBUFFER || target == GL_DRAW_FRAMEBUFFER))
    gp__gl_bind_fbo(c, fb);
  if (real)
    real(target, fb);
  api_end(cbid, t0, corr);
  cb_exit(&k);
}

__attribute__((visibility("hidden"))) void
gp__gl_w_glBindFramebuffer(GLenum target, GLuint fb) {
  bind_fbo(CBID(glBindFramebuffer), target, fb, REAL(glBindFramebuffer));
}
EXPORT_AS(glBindFramebuffer, void, (GLenum target, GLuint fb))

__attribute__((visibility("hidden"))) void
gp__gl_w_glBindFramebufferEXT(GLenum target, GLuint fb) {
  bind_fbo(CBID(glBindFramebufferEXT), target, fb, REAL(glBindFramebufferEXT));
}
EXPORT_AS(glBindFramebufferEXT, void, (GLenum target, GLuint fb))

/* The program's own queries: a pipeline statistic it measures is left to
 * it (two queries of one target cannot be active at once). */
static void app_query(GLenum target, bool begin) {
  gp__gl_ctx *c = gp__gl_current();
  if (c)
    gp__gl_stats_app_query(c, target, begin);
}

__attribute__((visibility("hidden"))) void gp__gl_w_glBeginQuery(GLenum target,
                                                                 GLuint id) {
  app_query(target, true);
  if (REAL(glBeginQuery))
    REAL(glBeginQuery)(target, id);
}
EXPORT_AS(glBeginQuery, void, (GLenum target, GLuint id))

__attribute__((visibility("hidden"))) void gp__gl_w_glEndQuery(GLenum target) {
  if (REAL(glEndQuery))
    REAL(glEndQuery)(target);
  app_query(target, false);
}
EXPORT_AS(glEndQuery, void, (GLenum target))

__attribute__((visibility("hidden"))) void
gp__gl_w_glBeginQueryEXT(GLenum target, GLuint id) {
  app_query(target, true);
  if (REAL(glBeginQueryEXT))
    REAL(glBeginQueryEXT)(target, id);
}
EXPORT_AS(glBeginQueryEXT, void, (GLenum target, GLuint id))

__attribute__((visibility("hidden"))) void
gp__gl_w_glEndQueryEXT(GLenum target) {
  if (REAL(glEndQueryEXT))
    REAL(glEndQueryEXT)(target);
  app_query(target, false);
}
EXPORT_AS(glEndQueryEXT, void, (GLenum target))

/* KHR_debug: ours stays installed and calls the program's. */
__attribute__((visibility("hidden"))) void
gp__gl_w_glDebugMessageCallback(GLDEBUGPROC cb, const void *user) {
  gp__gl_ctx *c = gp__gl_current();
  if (c && c->debug_hooked) {
    gp__gl_log_app_callback(c, cb, user);
    return;
  }
  if (REAL(glDebugMessageCallback))
    REAL(glDebugMessageCallback)(cb, user);
}
EXPORT_AS(glDebugMessageCallback, void, (GLDEBUGPROC cb, const void *user))

__attribute__((visibility("hidden"))) void
gp__gl_w_glDebugMessageCallbackKHR(gp_debugproc cb, const void *user) {
  gp__gl_ctx *c = gp__gl_current();
  if (c && c->debug_hooked) {
    gp__gl_log_app_callback(c, (GLDEBUGPROC)cb, user);
    return;
  }
  if (REAL(glDebugMessageCallbackKHR))
    REAL(glDebugMessageCallbackKHR)(cb, user);
}
EXPORT_AS(glDebugMessageCallbackKHR, void, (gp_debugproc cb, const void *user))

/* ------------------------------------------------------------------ */
/* Lookups                                                              */

typedef void (*gp_glx_fn)(void);

/* The real lookups: glXGetProcAddress, glXGetProcAddressARB,
 * eglGetProcAddress. */
static const char *const lookup_names[3] = {
    "glXGetProcAddress", "glXGetProcAddressARB", "eglGetProcAddress"};
static void *_Atomic lookup_real[3];

/* See glInt.h. */
void *gp__gl_lookup_real(int k) {
  void *fn = atomic_load(&lookup_real[k]);
  if (!fn) {
    fn = gp__gl_real_dlsym(RTLD_NEXT, lookup_names[k]);
    void *none = NULL;
    if (fn)
      atomic_compare_exchange_strong(&lookup_real[k], &none, fn);
  }
  return fn;
}

/* Our wrapper of the real function p of name through lookup k. */
static void *looked_up(int k, const char *name) {
  void *fn = gp__gl_lookup_real(k);
  if (!fn || !name)
    return NULL;
  void *p = (void *)((gp_glx_fn(*)(const char *))fn)(name);
  return gp__gl_intercept(name, p);
}

GP_GL_EXPORT __GLXextFuncPtr glXGetProcAddress(const GLubyte *name) {
  return (__GLXextFuncPtr)looked_up(0, (const char *)name);
}

GP_GL_EXPORT __GLXextFuncPtr glXGetProcAddressARB(const GLubyte *name) {
  return (__GLXextFuncPtr)looked_up(1, (const char *)name);
}

GP_GL_EXPORT __eglMustCastToProperFunctionPointerType
eglGetProcAddress(const char *name) {
  return (__eglMustCastToProperFunctionPointerType)looked_up(2, name);
}

/* dlsym of a lookup: ours, the real one kept; else p. */
static void *lookup_of(const char *name, void *p) {
  static void *const ours[3] = {(void *)glXGetProcAddress,
                                (void *)glXGetProcAddressARB,
                                (void *)eglGetProcAddress};
  for (int k = 0; k < 3; k++)
    if (p && p != ours[k] && strcmp(name, lookup_names[k]) == 0) {
      void *none = NULL;
      atomic_compare_exchange_strong(&lookup_real[k], &none, p);
      return ours[k];
    }
  return p;
}

/* ------------------------------------------------------------------ */
/* dlsym                                                                */

typedef void *(*dlsym_fn)(void *, const char *);

static dlsym_fn real_dlsym_fn(void) {
  static _Atomic(dlsym_fn) real;
  dlsym_fn f = atomic_load_explicit(&real, memory_order_acquire);
  if (f)
    return f;
  f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f)
    f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  atomic_store_explicit(&real, f, memory_order_release);
  return f;
}

/* See glInt.h: the real dlsym, for our own lookups. */
void *gp__gl_real_dlsym(void *handle, const char *name) {
  dlsym_fn f = real_dlsym_fn();
  return f ? f(handle, name) : NULL;
}

static int dlsym_hook = -1; /* -1: not decided; 0 off; 1 on */

/* Whether dlsym may hand out our wrapper for name. */
static bool hookable(void *handle, const char *name) {
  if (handle == RTLD_NEXT || !name || (name[0] != 'g' && name[0] != 'e'))
    return false;
  int on = __atomic_load_n(&dlsym_hook, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *e = getenv("GPUPERF_GL_DLSYM");
    on = !(e && strcmp(e, "0") == 0);
    __atomic_store_n(&dlsym_hook, on, __ATOMIC_RELAXED);
  }
  return on;
}

GP_GL_EXPORT void *dlsym(void *handle, const char *name) {
  dlsym_fn real = real_dlsym_fn();
  if (!real)
    return NULL;
  if (!hookable(handle, name))
    return real(handle, name); /* a tail call: see the top */
  void *p = real(handle, name);
  if (name[2] == 'X' || name[0] == 'e')
    p = lookup_of(name, p);
  return gp__gl_intercept(name, p);
}
