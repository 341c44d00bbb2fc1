/*
 * surfaceless.h - GL contexts without a window or surface, on Mesa's
 * surfaceless EGL platform (EGL_MESA_platform_surfaceless) and without a
 * config (EGL_KHR_no_config_context), for the GL test programs. Header
 * only: each program is its own binary.
 */
#ifndef GPUPERF_TESTS_GL_SURFACELESS_H
#define GPUPERF_TESTS_GL_SURFACELESS_H

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <string.h>

/* The surfaceless display, initialised; EGL_NO_DISPLAY with the reason
 * in *why where EGL has none. */
static inline EGLDisplay sl_display(const char **why) {
  const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  if (!ext || !strstr(ext, "EGL_MESA_platform_surfaceless")) {
    *why = "EGL has no EGL_MESA_platform_surfaceless";
    return EGL_NO_DISPLAY;
  }
  PFNEGLGETPLATFORMDISPLAYEXTPROC get =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress(
          "eglGetPlatformDisplayEXT");
  EGLDisplay d =
      get ? get(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL)
          : EGL_NO_DISPLAY;
  if (d == EGL_NO_DISPLAY || !eglInitialize(d, NULL, NULL)) {
    *why = "no surfaceless EGL display";
    return EGL_NO_DISPLAY;
  }
  return d;
}

/* A current context of api (EGL_OPENGL_API, EGL_OPENGL_ES_API),
 * major.minor and profile (EGL_CONTEXT_OPENGL_*_PROFILE_BIT; 0 for none)
 * on d; EGL_NO_CONTEXT when EGL refuses it. */
static inline EGLContext sl_context(EGLDisplay d, EGLenum api, int major,
                                    int minor, EGLint profile) {
  EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                    major,
                    EGL_CONTEXT_MINOR_VERSION,
                    minor,
                    profile ? EGL_CONTEXT_OPENGL_PROFILE_MASK : EGL_NONE,
                    profile,
                    EGL_NONE};
  if (!eglBindAPI(api))
    return EGL_NO_CONTEXT;
  EGLContext c = eglCreateContext(d, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
  if (c == EGL_NO_CONTEXT)
    return EGL_NO_CONTEXT;
  if (!eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) {
    eglDestroyContext(d, c);
    return EGL_NO_CONTEXT;
  }
  return c;
}

#endif /* GPUPERF_TESTS_GL_SURFACELESS_H */
