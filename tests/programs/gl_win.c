/*
 * gl_win.c - see gl_win.h. Swaps are synchronous under Xvfb (llvmpipe
 * copies the back buffer into the window with XPutImage), so the screen
 * holds the last frame once a swap returned and the X server has
 * processed it (XSync).
 */
#include <EGL/egl.h>
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <stdio.h>
#include <string.h>

#include "programs/gl_win.h"

#ifndef GLX_CONTEXT_MAJOR_VERSION_ARB
#define GLX_CONTEXT_MAJOR_VERSION_ARB 0x2091
#define GLX_CONTEXT_MINOR_VERSION_ARB 0x2092
#define GLX_CONTEXT_PROFILE_MASK_ARB 0x9126
#define GLX_CONTEXT_CORE_PROFILE_BIT_ARB 0x00000001
#endif

typedef GLXContext (*create_attribs_fn)(Display *, GLXFBConfig, GLXContext,
                                        Bool, const int *);

static struct {
  gl_win_api api;
  Display *dpy;
  Window win;
  Colormap cmap;
  GLXContext glx;
  EGLDisplay edpy;
  EGLSurface esurf;
  EGLContext ectx;
} w;

static bool make_window(XVisualInfo *vi, int width, int height) {
  Window root = RootWindow(w.dpy, vi->screen);
  XSetWindowAttributes a;
  memset(&a, 0, sizeof(a));
  w.cmap = XCreateColormap(w.dpy, root, vi->visual, AllocNone);
  a.colormap = w.cmap;
  a.border_pixel = 0;
  a.override_redirect = True; /* exactly at 0,0 whatever manages windows */
  w.win = XCreateWindow(w.dpy, root, 0, 0, (unsigned)width, (unsigned)height, 0,
                        vi->depth, InputOutput, vi->visual,
                        CWColormap | CWBorderPixel | CWOverrideRedirect, &a);
  XMapRaised(w.dpy, w.win);
  XSync(w.dpy, False);
  return true;
}

static bool open_glx(int width, int height) {
  static const int attrs[] = {GLX_X_RENDERABLE,
                              True,
                              GLX_DRAWABLE_TYPE,
                              GLX_WINDOW_BIT,
                              GLX_RENDER_TYPE,
                              GLX_RGBA_BIT,
                              GLX_RED_SIZE,
                              8,
                              GLX_GREEN_SIZE,
                              8,
                              GLX_BLUE_SIZE,
                              8,
                              GLX_DEPTH_SIZE,
                              24,
                              GLX_STENCIL_SIZE,
                              8,
                              GLX_DOUBLEBUFFER,
                              True,
                              None};
  int n = 0;
  GLXFBConfig *cfg = glXChooseFBConfig(w.dpy, DefaultScreen(w.dpy), attrs, &n);
  if (!cfg || n == 0) {
    fprintf(stderr, "gl_win: no GLX framebuffer configuration\n");
    return false;
  }
  XVisualInfo *vi = glXGetVisualFromFBConfig(w.dpy, cfg[0]);
  make_window(vi, width, height);
  if (w.api == GL_WIN_CORE) {
    create_attribs_fn create = (create_attribs_fn)glXGetProcAddressARB(
        (const GLubyte *)"glXCreateContextAttribsARB");
    static const int ca[] = {GLX_CONTEXT_MAJOR_VERSION_ARB,
                             3,
                             GLX_CONTEXT_MINOR_VERSION_ARB,
                             3,
                             GLX_CONTEXT_PROFILE_MASK_ARB,
                             GLX_CONTEXT_CORE_PROFILE_BIT_ARB,
                             None};
    w.glx = create ? create(w.dpy, cfg[0], NULL, True, ca) : NULL;
  } else {
    w.glx = glXCreateNewContext(w.dpy, cfg[0], GLX_RGBA_TYPE, NULL, True);
  }
  XFree(vi);
  XFree(cfg);
  if (!w.glx || !glXMakeCurrent(w.dpy, w.win, w.glx)) {
    fprintf(stderr, "gl_win: no GLX context\n");
    return false;
  }
  return true;
}

static bool open_egl(int width, int height) {
  w.edpy = eglGetDisplay((EGLNativeDisplayType)w.dpy);
  EGLint major, minor;
  if (w.edpy == EGL_NO_DISPLAY || !eglInitialize(w.edpy, &major, &minor) ||
      !eglBindAPI(EGL_OPENGL_ES_API)) {
    fprintf(stderr, "gl_win: no EGL display\n");
    return false;
  }
  const EGLint attrs[] = {EGL_SURFACE_TYPE,
                          EGL_WINDOW_BIT,
                          EGL_RENDERABLE_TYPE,
                          w.api == GL_WIN_ES ? EGL_OPENGL_ES3_BIT
                                             : EGL_OPENGL_ES2_BIT,
                          EGL_RED_SIZE,
                          8,
                          EGL_GREEN_SIZE,
                          8,
                          EGL_BLUE_SIZE,
                          8,
                          EGL_DEPTH_SIZE,
                          24,
                          EGL_STENCIL_SIZE,
                          8,
                          EGL_NONE};
  EGLConfig cfg;
  EGLint n = 0;
  if (!eglChooseConfig(w.edpy, attrs, &cfg, 1, &n) || n == 0) {
    fprintf(stderr, "gl_win: no EGL configuration\n");
    return false;
  }
  EGLint vid = 0;
  eglGetConfigAttrib(w.edpy, cfg, EGL_NATIVE_VISUAL_ID, &vid);
  XVisualInfo tmpl;
  memset(&tmpl, 0, sizeof(tmpl));
  tmpl.visualid = (VisualID)vid;
  int nv = 0;
  XVisualInfo *vi = XGetVisualInfo(w.dpy, VisualIDMask, &tmpl, &nv);
  if (!vi) {
    fprintf(stderr, "gl_win: no X visual for the EGL configuration\n");
    return false;
  }
  make_window(vi, width, height);
  XFree(vi);
  const EGLint ca[] = {EGL_CONTEXT_CLIENT_VERSION, w.api == GL_WIN_ES ? 3 : 2,
                       EGL_NONE};
  w.esurf =
      eglCreateWindowSurface(w.edpy, cfg, (EGLNativeWindowType)w.win, NULL);
  w.ectx = eglCreateContext(w.edpy, cfg, EGL_NO_CONTEXT, ca);
  if (w.esurf == EGL_NO_SURFACE || w.ectx == EGL_NO_CONTEXT ||
      !eglMakeCurrent(w.edpy, w.esurf, w.esurf, w.ectx)) {
    fprintf(stderr, "gl_win: no EGL context\n");
    return false;
  }
  return true;
}

/* See gl_win.h. */
bool gl_win_open(gl_win_api api, int width, int height) {
  w.api = api;
  w.dpy = XOpenDisplay(NULL);
  if (!w.dpy) {
    fprintf(stderr, "gl_win: cannot open the X display\n");
    return false;
  }
  return api == GL_WIN_ES || api == GL_WIN_ES2 ? open_egl(width, height)
                                               : open_glx(width, height);
}

/* See gl_win.h. */
void *gl_win_proc(const char *name) {
  if (w.api == GL_WIN_ES || w.api == GL_WIN_ES2)
    return (void *)eglGetProcAddress(name);
  return (void *)glXGetProcAddressARB((const GLubyte *)name);
}

/* See gl_win.h. */
void gl_win_swap(void) {
  if (w.api == GL_WIN_ES || w.api == GL_WIN_ES2)
    eglSwapBuffers(w.edpy, w.esurf);
  else
    glXSwapBuffers(w.dpy, w.win);
  XSync(w.dpy, False);
}

/* See gl_win.h. */
void gl_win_version(int *major, int *minor) {
  const GLubyte *(*get)(GLenum) =
      (const GLubyte *(*)(GLenum))gl_win_proc("glGetString");
  const char *v = get ? (const char *)get(GL_VERSION) : NULL;
  *major = *minor = 0;
  if (!v)
    return;
  const char *p = strncmp(v, "OpenGL ES ", 10) == 0 ? v + 10 : v;
  sscanf(p, "%d.%d", major, minor);
}

/* See gl_win.h. */
void gl_win_close(void) {
  if (w.api == GL_WIN_ES || w.api == GL_WIN_ES2) {
    eglMakeCurrent(w.edpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(w.edpy, w.ectx);
    eglDestroySurface(w.edpy, w.esurf);
    eglTerminate(w.edpy);
  } else {
    glXMakeCurrent(w.dpy, None, NULL);
    glXDestroyContext(w.dpy, w.glx);
  }
  XDestroyWindow(w.dpy, w.win);
  XFreeColormap(w.dpy, w.cmap);
  XCloseDisplay(w.dpy);
}
