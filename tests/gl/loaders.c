/*
 * loaders.c - gl-getproc and gl-epoxy: programs that reach GL the way
 * loaders do, not by linking libGL, for the tests of libgpuperf-gl.so's
 * lookups (opengl_record_loaders).
 *
 *   gl-getproc FRAMES   opens libGL.so.1 itself (RTLD_LOCAL), takes
 *                       glXGetProcAddressARB from it with dlsym, and looks
 *                       every GLX and GL call up through it, as GLAD and
 *                       GLEW do;
 *   gl-epoxy FRAMES     the same drawing through libepoxy, which opens
 *                       libGL and looks calls up with dlsym (built where
 *                       libepoxy-dev is, with -DGP_EPOXY).
 *
 * Each draws FRAMES frames of one glClear and one glDrawArrays of 8
 * triangles, swaps, and prints "frames N".
 */
#include <X11/Xlib.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GP_EPOXY
#include <epoxy/gl.h>
#include <epoxy/glx.h>
#define GLX(name) glX##name
#define GL(name) gl##name
#else
#include <GL/gl.h>
#include <GL/glx.h>
typedef void *(*getproc_fn)(const GLubyte *);
static getproc_fn getproc;
#define LOOK(name) ((__typeof__(&name))getproc((const GLubyte *)#name))
#define GLX(name) LOOK(glX##name)
#define GL(name) LOOK(gl##name)
#endif

int main(int argc, char **argv) {
  int frames = argc > 1 ? atoi(argv[1]) : 30;
#ifndef GP_EPOXY
  void *lib = dlopen("libGL.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "gl-getproc: no libGL.so.1\n");
    return 77;
  }
  getproc = (getproc_fn)dlsym(lib, "glXGetProcAddressARB");
  if (!getproc) {
    fprintf(stderr, "gl-getproc: libGL.so.1 has no glXGetProcAddressARB\n");
    return 77;
  }
#endif
  Display *dpy = XOpenDisplay(NULL);
  if (!dpy) {
    fprintf(stderr, "gl loaders: no X display\n");
    return 77;
  }
  int attrs[] = {GLX_RGBA, GLX_DOUBLEBUFFER, None};
  XVisualInfo *vi = GLX(ChooseVisual)(dpy, DefaultScreen(dpy), attrs);
  if (!vi)
    return 77;
  Window root = RootWindow(dpy, vi->screen);
  XSetWindowAttributes swa;
  memset(&swa, 0, sizeof(swa));
  swa.colormap = XCreateColormap(dpy, root, vi->visual, AllocNone);
  Window win = XCreateWindow(dpy, root, 0, 0, 160, 120, 0, vi->depth,
                             InputOutput, vi->visual, CWColormap, &swa);
  XMapWindow(dpy, win);
  GLXContext ctx = GLX(CreateContext)(dpy, vi, NULL, True);
  if (!ctx || !GLX(MakeCurrent)(dpy, win, ctx))
    return 77;
  static float v[8 * 6];
  for (int t = 0; t < 8; t++) {
    float x = -0.9f + 0.2f * (float)t;
    float tri[6] = {x, 0, x + 0.1f, 0, x, 0.1f};
    memcpy(&v[t * 6], tri, sizeof(tri));
  }
  GL(EnableClientState)(GL_VERTEX_ARRAY);
  GL(VertexPointer)(2, GL_FLOAT, 0, v);
  for (int i = 0; i < frames; i++) {
    GL(Clear)(GL_COLOR_BUFFER_BIT);
    GL(DrawArrays)(GL_TRIANGLES, 0, 24);
    GLX(SwapBuffers)(dpy, win);
  }
  printf("frames %d\n", frames);
  GLX(MakeCurrent)(dpy, None, NULL);
  GLX(DestroyContext)(dpy, ctx);
  XCloseDisplay(dpy);
  return 0;
}
