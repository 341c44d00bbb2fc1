/*
 * sample.c - gl-sample: a GL program (GLX, under Xvfb in the tests) that
 * renders each frame into two framebuffers: an offscreen framebuffer
 * object (pass A: frame i draws A_i triangles), then the window (pass B:
 * B_i triangles), and swaps. The counts are fixed by the frame number, so
 * a recording can be checked against what the program drew, which it
 * prints per frame ("frame N passA T passB T").
 *
 *   gl-sample [--frames N] [--size WxH] [--quiet] [--fps] [--hold] [--egl]
 *
 * --egl: no window and no X server: an EGL pbuffer of the first EGL
 * device (EGL_EXT_platform_device; else the default display), desktop GL,
 * swapped with eglSwapBuffers. How bench/gl measures a GPU machine that
 * has no display (headless NVIDIA).
 *
 * --hold: after the last frame, the context stays current and the
 * program waits for a signal to end it, swapping no more (what death.c
 * does when no swap follows a SIGINT).
 *
 * --debug installs a KHR_debug callback that prints each message
 * ("debug: ..."), enables GL_DEBUG_OUTPUT and, in the first frame, makes
 * one GL error on purpose (glEnable of an invalid enum).
 *
 * --fps prints the frame rate of the frames after the first tenth (the
 * driver compiles its shaders in the first), measured by the program
 * itself: "fps F" (bench/gl.c reads it).
 *
 * Immediate mode is avoided: each pass is one glDrawArrays of
 * GL_TRIANGLES from a vertex buffer, so its triangles are the draw's
 * count / 3 and its primitives in the pipeline statistics the same.
 */
#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>
#include <GL/glx.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXTRI 4096

static void APIENTRY on_debug(GLenum source, GLenum type, GLuint id,
                              GLenum severity, GLsizei length,
                              const GLchar *msg, const void *user) {
  (void)source, (void)type, (void)id, (void)severity, (void)length;
  printf("debug: %s (%s)\n", msg, (const char *)user);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Triangles of pass A and B in frame i (1-based). */
static int tris_a(int i) {
  return 10 + (i % 7) * 10;
}
static int tris_b(int i) {
  return 5 + (i % 5) * 20;
}

/* The --egl way: a pbuffer of w x h on the first EGL device, desktop GL
 * current. 0, or 77 where there is none. */
static int egl_setup(int w, int h, EGLDisplay *pd, EGLSurface *ps,
                     EGLContext *pc) {
  EGLDisplay d = EGL_NO_DISPLAY;
  PFNEGLQUERYDEVICESEXTPROC query =
      (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
  PFNEGLGETPLATFORMDISPLAYEXTPROC platform =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress(
          "eglGetPlatformDisplayEXT");
  EGLDeviceEXT devs[8];
  EGLint n = 0;
  if (query && platform && query(8, devs, &n) && n > 0)
    d = platform(EGL_PLATFORM_DEVICE_EXT, devs[0], NULL);
  if (d == EGL_NO_DISPLAY)
    d = eglGetDisplay(EGL_DEFAULT_DISPLAY);
  if (d == EGL_NO_DISPLAY || !eglInitialize(d, NULL, NULL))
    return 77;
  EGLint ca[] = {EGL_SURFACE_TYPE,
                 EGL_PBUFFER_BIT,
                 EGL_RED_SIZE,
                 8,
                 EGL_GREEN_SIZE,
                 8,
                 EGL_BLUE_SIZE,
                 8,
                 EGL_RENDERABLE_TYPE,
                 EGL_OPENGL_BIT,
                 EGL_NONE};
  EGLConfig cfg;
  EGLint nc = 0;
  EGLint pa[] = {EGL_WIDTH, w, EGL_HEIGHT, h, EGL_NONE};
  if (!eglChooseConfig(d, ca, &cfg, 1, &nc) || nc < 1 ||
      !eglBindAPI(EGL_OPENGL_API))
    return 77;
  *ps = eglCreatePbufferSurface(d, cfg, pa);
  *pc = eglCreateContext(d, cfg, EGL_NO_CONTEXT, NULL);
  if (*ps == EGL_NO_SURFACE || *pc == EGL_NO_CONTEXT ||
      !eglMakeCurrent(d, *ps, *ps, *pc))
    return 77;
  *pd = d;
  printf("egl: %s\n", (const char *)glGetString(GL_RENDERER));
  return 0;
}

int main(int argc, char **argv) {
  int frames = 60, w = 320, h = 240;
  int quiet = 0, fps = 0, debug = 0, hold = 0, egl = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      sscanf(argv[++i], "%dx%d", &w, &h);
    else if (strcmp(argv[i], "--quiet") == 0)
      quiet = 1;
    else if (strcmp(argv[i], "--fps") == 0)
      fps = 1;
    else if (strcmp(argv[i], "--debug") == 0)
      debug = 1;
    else if (strcmp(argv[i], "--hold") == 0)
      hold = 1;
    else if (strcmp(argv[i], "--egl") == 0)
      egl = 1;
    else {
      fprintf(stderr, "usage: gl-sample [--frames N] [--size WxH] [--quiet] "
                      "[--fps] [--debug] [--hold] [--egl]\n");
      return 2;
    }
  }
  EGLDisplay edpy = EGL_NO_DISPLAY;
  EGLSurface esurf = EGL_NO_SURFACE;
  EGLContext ectx = EGL_NO_CONTEXT;
  Display *dpy = NULL;
  Window win = 0;
  GLXContext ctx = NULL;
  if (egl) {
    if (egl_setup(w, h, &edpy, &esurf, &ectx) != 0) {
      fprintf(stderr, "gl-sample: no EGL pbuffer with desktop GL\n");
      return 77;
    }
    goto ready;
  }
  dpy = XOpenDisplay(NULL);
  if (!dpy) {
    fprintf(stderr, "gl-sample: no X display\n");
    return 77;
  }
  int attrs[] = {GLX_RGBA,
                 GLX_DOUBLEBUFFER,
                 GLX_RED_SIZE,
                 8,
                 GLX_GREEN_SIZE,
                 8,
                 GLX_BLUE_SIZE,
                 8,
                 None};
  XVisualInfo *vi = glXChooseVisual(dpy, DefaultScreen(dpy), attrs);
  if (!vi) {
    fprintf(stderr, "gl-sample: no double-buffered RGBA visual\n");
    return 77;
  }
  Window root = RootWindow(dpy, vi->screen);
  XSetWindowAttributes swa;
  memset(&swa, 0, sizeof(swa));
  swa.colormap = XCreateColormap(dpy, root, vi->visual, AllocNone);
  win = XCreateWindow(dpy, root, 0, 0, (unsigned)w, (unsigned)h, 0, vi->depth,
                      InputOutput, vi->visual, CWColormap, &swa);
  XMapWindow(dpy, win);
  ctx = glXCreateContext(dpy, vi, NULL, True);
  if (!ctx || !glXMakeCurrent(dpy, win, ctx)) {
    fprintf(stderr, "gl-sample: no GL context\n");
    return 77;
  }
ready:
  if (debug) {
    glEnable(GL_DEBUG_OUTPUT);
    glDebugMessageCallback(on_debug, "sample's user pointer");
  }
  /* Small triangles spread over the target, 3 vertices each. */
  static float v[MAXTRI * 6];
  for (int t = 0; t < MAXTRI; t++) {
    float x = -0.9f + 1.8f * (float)(t % 64) / 64.0f;
    float y = -0.9f + 1.8f * (float)((t / 64) % 64) / 64.0f;
    float s = 0.02f;
    float tri[6] = {x, y, x + s, y, x, y + s};
    memcpy(&v[t * 6], tri, sizeof(tri));
  }
  GLuint vbo, fbo, tex;
  glGenBuffers(1, &vbo);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, sizeof(v), v, GL_STATIC_DRAW);
  glEnableClientState(GL_VERTEX_ARRAY);
  glVertexPointer(2, GL_FLOAT, 0, NULL);
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE,
               NULL);
  glGenFramebuffers(1, &fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                         tex, 0);
  if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
    fprintf(stderr, "gl-sample: framebuffer incomplete\n");
    return 1;
  }
  int warm = frames / 10;
  double t0 = 0;
  for (int i = 1; i <= frames; i++) {
    if (i == warm + 1)
      t0 = now_s();
    if (debug && i == 1)
      glEnable(0x7fff); /* an invalid enum: a KHR_debug error message */
    glBindFramebuffer(GL_FRAMEBUFFER, fbo); /* pass A */
    glViewport(0, 0, w, h);
    glClearColor(0.1f, 0.2f, 0.3f, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glColor3f(1, 0.5f, 0);
    glDrawArrays(GL_TRIANGLES, 0, 3 * tris_a(i));
    glBindFramebuffer(GL_FRAMEBUFFER, 0); /* pass B: the window */
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glColor3f(0, 1, 0.5f);
    glDrawArrays(GL_TRIANGLES, 0, 3 * tris_b(i));
    if (egl)
      eglSwapBuffers(edpy, esurf);
    else
      glXSwapBuffers(dpy, win);
    if (!quiet)
      printf("frame %d passA %d passB %d\n", i, tris_a(i), tris_b(i));
  }
  if (fps && frames > warm)
    printf("fps %.1f\n", (frames - warm) / (now_s() - t0));
  fflush(stdout);
  if (hold) {
    printf("holding\n");
    fflush(stdout);
    for (;;)
      pause();
  }
  glDeleteFramebuffers(1, &fbo);
  if (egl) {
    eglMakeCurrent(edpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(edpy, ectx);
    eglDestroySurface(edpy, esurf);
    eglTerminate(edpy);
    return 0;
  }
  glXMakeCurrent(dpy, None, NULL);
  glXDestroyContext(dpy, ctx);
  XCloseDisplay(dpy);
  return 0;
}
