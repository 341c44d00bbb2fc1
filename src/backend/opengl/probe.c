/*
 * probe.c - gpuperf_gl_probe(): the GL device of this machine and the
 * counters a recorded GL program gets on it, for `gpuperf list` and for
 * checking counter names before a program runs (counters/loaders.c opens
 * this library and calls it).
 *
 * It makes a desktop GL context of its own through EGL on Mesa's
 * surfaceless platform (no window system needed; EGL's default display
 * where that platform is missing), reads what context.c reads of a
 * program's context, and registers nothing: the process only learns the
 * names. The context is destroyed before it returns.
 */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/loaders.h"
#include "glInt.h"

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif

typedef struct egl_fns {
  PFNEGLGETPROCADDRESSPROC GetProcAddress;
  PFNEGLGETDISPLAYPROC GetDisplay;
  PFNEGLINITIALIZEPROC Initialize;
  PFNEGLTERMINATEPROC Terminate;
  PFNEGLBINDAPIPROC BindAPI;
  PFNEGLCHOOSECONFIGPROC ChooseConfig;
  PFNEGLCREATECONTEXTPROC CreateContext;
  PFNEGLDESTROYCONTEXTPROC DestroyContext;
  PFNEGLMAKECURRENTPROC MakeCurrent;
} egl_fns;

static int fail(gp__gl_probe_result *out, const char *why) {
  snprintf(out->error, sizeof(out->error), "%s", why);
  return -1;
}

/* The names of c's counters, as stats.c publishes them, into out. */
static int names(gp__gl_ctx *c, gp__gl_probe_result *out) {
  const char *snames[GP_GL_NSTATS];
  uint32_t nstats = gp__gl_stats_names(c, snames);
  uint32_t namd = gp__gl_pm_count(c);
  uint32_t n = nstats + 2 + namd + 1;
  const char **nm = calloc(n, sizeof(*nm)), **cat = calloc(n, sizeof(*cat));
  gp__counter_def *defs = namd ? calloc(namd, sizeof(*defs)) : NULL;
  gp_counter_group_info *groups =
      namd ? calloc(namd + 1, sizeof(*groups)) : NULL;
  if (!nm || !cat || (namd && (!defs || !groups))) {
    free(nm);
    free(cat);
    free(defs);
    free(groups);
    return fail(out, "out of memory");
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < nstats; i++, k++) {
    nm[k] = snames[i];
    cat[k] = "per frame, from queries";
  }
  nm[k] = "draws";
  cat[k++] = "per frame, from the draw calls";
  nm[k] = "triangles";
  cat[k++] = "per frame, from the draw calls";
  if (namd) {
    uint32_t ng = 0;
    c->pm->defs(c, defs, 1, GP_COUNTER_GROUP_FIRST_CUSTOM, groups, &ng);
    for (uint32_t i = 0; i < namd; i++, k++) {
      nm[k] = defs[i].info.name;
      char *s = malloc(strlen(defs[i].info.category) + 64);
      if (s)
        sprintf(s, "per frame, %s group %s", c->pm->ext, defs[i].info.category);
      cat[k] = s ? s : defs[i].info.category;
    }
    free(defs);
    free(groups);
  }
  nm[k] = "Utilization";
  cat[k++] = "derived from the frames' GPU times when recorded";
  out->num_counters = k;
  out->counters = nm;
  out->categories = cat;
  return 0;
}

GP_GL_EXPORT int gpuperf_gl_probe(gp__gl_probe_result *out);
int gpuperf_gl_probe(gp__gl_probe_result *out) {
  memset(out, 0, sizeof(*out));
  void *h = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return fail(out, "no libEGL.so.1 (libegl1): no GL device listed");
  egl_fns e;
#define EGL(name) e.name = (__typeof__(e.name))gp__gl_real_dlsym(h, "egl" #name)
  EGL(GetProcAddress);
  EGL(GetDisplay);
  EGL(Initialize);
  EGL(Terminate);
  EGL(BindAPI);
  EGL(ChooseConfig);
  EGL(CreateContext);
  EGL(DestroyContext);
  EGL(MakeCurrent);
#undef EGL
  if (!e.GetProcAddress || !e.GetDisplay || !e.Initialize || !e.BindAPI ||
      !e.ChooseConfig || !e.CreateContext || !e.MakeCurrent)
    return fail(out, "libEGL.so.1 lacks EGL 1.4's functions");
  PFNEGLGETPLATFORMDISPLAYEXTPROC platform =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)e.GetProcAddress(
          "eglGetPlatformDisplayEXT");
  EGLDisplay dpy = EGL_NO_DISPLAY;
  if (platform)
    dpy = platform(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
  EGLint maj = 0, min = 0;
  if (dpy == EGL_NO_DISPLAY || !e.Initialize(dpy, &maj, &min)) {
    dpy = e.GetDisplay(EGL_DEFAULT_DISPLAY);
    if (dpy == EGL_NO_DISPLAY || !e.Initialize(dpy, &maj, &min))
      return fail(out, "EGL has no display (neither Mesa's surfaceless "
                       "platform nor a default one)");
  }
  EGLint attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                    EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig cfg = NULL;
  EGLint ncfg = 0;
  EGLContext ctx = EGL_NO_CONTEXT;
  if (e.BindAPI(EGL_OPENGL_API) && e.ChooseConfig(dpy, attrs, &cfg, 1, &ncfg) &&
      ncfg > 0)
    ctx = e.CreateContext(dpy, cfg, EGL_NO_CONTEXT, NULL);
  if (ctx == EGL_NO_CONTEXT) /* EGL_KHR_no_config_context */
    ctx = e.CreateContext(dpy, (EGLConfig)0, EGL_NO_CONTEXT, NULL);
  if (ctx == EGL_NO_CONTEXT) {
    e.Terminate(dpy);
    return fail(out, "EGL could not make a desktop GL context");
  }
  if (!e.MakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) {
    e.DestroyContext(dpy, ctx);
    e.Terminate(dpy);
    return fail(out, "EGL could not make a context current without a "
                     "surface (EGL_KHR_surfaceless_context)");
  }
  gp__gl_ctx *c = calloc(1, sizeof(*c));
  int rc = -1;
  const char *vendor, *renderer, *version;
  if (!c) {
    fail(out, "out of memory");
  } else if (!gp__gl_describe(c, &vendor, &renderer, &version)) {
    fail(out, "the GL context answers no GL_VENDOR, GL_RENDERER or "
              "GL_VERSION");
  } else {
    snprintf(out->name, sizeof(out->name), "%s", renderer);
    snprintf(out->vendor, sizeof(out->vendor), "%s", vendor);
    snprintf(out->version, sizeof(out->version), "%s", version);
    gp__gl_pm_init(c);
    rc = names(c, out);
  }
  e.MakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  e.DestroyContext(dpy, ctx);
  e.Terminate(dpy);
  free(c); /* its driver counters' strings stay: the names point into them */
  return rc;
}
