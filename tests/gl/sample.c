/*
 * sample.c - gl-sample: a GL program (GLX, under Xvfb in the tests) that
 * renders each frame into two framebuffers: an offscreen framebuffer
 * object (pass A: frame i draws A_i triangles), then the window (pass B:
 * B_i triangles), and swaps. The counts are fixed by the frame number, so
 * a recording can be checked against what the program drew, which it
 * prints per frame ("frame N passA T passB T").
 *
 *   gl-sample [--frames N] [--size WxH] [--quiet] [--fps] [--hold]
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

int main(int argc, char **argv) {
  int frames = 60, w = 320, h = 240;
  int quiet = 0, fps = 0, debug = 0, hold = 0;
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
    else {
      fprintf(stderr, "usage: gl-sample [--frames N] [--size WxH] [--quiet] "
                      "[--fps] [--debug] [--hold]\n");
      return 2;
    }
  }
  Display *dpy = XOpenDisplay(NULL);
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
  Window win =
      XCreateWindow(dpy, root, 0, 0, (unsigned)w, (unsigned)h, 0, vi->depth,
                    InputOutput, vi->visual, CWColormap, &swa);
  XMapWindow(dpy, win);
  GLXContext ctx = glXCreateContext(dpy, vi, NULL, True);
  if (!ctx || !glXMakeCurrent(dpy, win, ctx)) {
    fprintf(stderr, "gl-sample: no GL context\n");
    return 77;
  }
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
  glXMakeCurrent(dpy, None, NULL);
  glXDestroyContext(dpy, ctx);
  XCloseDisplay(dpy);
  return 0;
}
