/*
 * cb_probe.c - the callback API (gpuperf/callback.h) through
 * libgpuperf-gl.so, in a GL program that links libgpuperf.so and is run
 * with the GL library preloaded:
 *
 *   LD_PRELOAD=libgpuperf-gl.so gl-cb-probe
 *
 * On a surfaceless EGL context (no X server) it binds a framebuffer,
 * clears it, uploads a buffer, flushes and finishes, subscribed to the API
 * domain and collecting API records. Every OpenGL API record must have
 * its entry and exit callbacks with its correlation id and call, in the
 * context the trace gives the calls, and no callback be without its
 * record. Prints "ok N" (N records) and exits 0; a line naming what
 * differed and 1; 77 where no such context can be made.
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cb_log.h"
#include "surfaceless.h"
#include "gpuperf/gpuperf.h"

#define MAXEV 256

static cb_event evs[MAXEV];
static int nev;
static gp_activity_api recs[MAXEV];
static int nrec;

static void on_cb(void *user, gp_callback_domain domain, uint32_t cbid,
                  const void *data) {
  (void)user;
  if (nev < MAXEV)
    cb_note(&evs[nev++], domain, cbid, data, 3);
}

static void complete(uint8_t *buf, size_t size, size_t valid) {
  (void)size;
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(buf, valid, &r) == 0)
    if (r->kind == GP_ACTIVITY_KIND_API && nrec < MAXEV &&
        ((const gp_activity_api *)r)->domain == GP_API_DOMAIN_OPENGL)
      recs[nrec++] = *(const gp_activity_api *)r;
  free(buf);
}

static int fail(const char *what) {
  printf("mismatch: %s\n", what);
  return 1;
}

/* A surfaceless desktop GL 3.3 core context, current; 0 or 77. */
static int make_context(void) {
  const char *why = NULL;
  EGLDisplay d = sl_display(&why);
  return d != EGL_NO_DISPLAY &&
                 sl_context(d, EGL_OPENGL_API, 3, 3,
                            EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT) !=
                     EGL_NO_CONTEXT
             ? 0
             : 77;
}

int main(void) {
  gp_activity_register_callbacks(cb_request, complete);
  gp_activity_enable(GP_ACTIVITY_KIND_API);
  gp_callback_subscriber *sub;
  if (gp_callback_subscribe(&sub, on_cb, NULL) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_API) != 0)
    return fail("subscribe");
  int rc = make_context();
  if (rc)
    return rc;
  GLuint fb, rb, buf;
  glGenFramebuffers(1, &fb);
  glGenRenderbuffers(1, &rb);
  glBindRenderbuffer(GL_RENDERBUFFER, rb);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, 64, 64);
  glBindFramebuffer(GL_FRAMEBUFFER, fb);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0,
                            GL_RENDERBUFFER, rb);
  glClearColor(0.25f, 0.5f, 0.75f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  glGenBuffers(1, &buf);
  glBindBuffer(GL_ARRAY_BUFFER, buf);
  static const float data[64];
  glBufferData(GL_ARRAY_BUFFER, sizeof(data), data, GL_STATIC_DRAW);
  glFlush();
  glFinish();
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  gp_callback_unsubscribe(sub);

  if (nrec < 5)
    return fail("fewer than 5 OpenGL API records (is libgpuperf-gl.so "
                "preloaded?)");
  const char *bad = cb_check_pairs(evs, nev, recs, nrec, 3, 0);
  if (bad)
    return fail(bad);
  printf("ok %d\n", nrec);
  return 0;
}
