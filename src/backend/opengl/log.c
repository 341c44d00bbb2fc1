/*
 * log.c - KHR_debug messages as GPU log records (gpu.log).
 *
 * When a context with KHR_debug (GL 4.3, or the extension on desktop GL
 * and ES) is first made current, our callback is installed. A program
 * that installs its own later gets ours kept and its own called from ours
 * with its own user pointer, so it sees every message it saw before. We
 * do not enable GL_DEBUG_OUTPUT: the messages are those the program (or a
 * debug context) asked the driver for. glGetPointerv(GL_DEBUG_CALLBACK_
 * FUNCTION) answers ours, not the program's (docs/opengl.md).
 *
 * Our callback's user pointer is the context's handle, not our record of
 * it: the driver keeps the callback as long as its context lives, which
 * can be longer than our record (eglDestroyContext of a context current
 * on another thread is deferred; our record goes at the call), and a
 * message then would have read a freed record. The program's callbacks
 * are kept by handle in a table of their own that is never freed.
 */
#include <pthread.h>
#include <string.h>

#include "glInt.h"

#define LOG_CTXS 64
static struct {
  const void *handle;
  GLDEBUGPROC app;
  const void *user;
} apps[LOG_CTXS]; /* apps_lock */
static pthread_mutex_t apps_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of handle (made if create and there is room), or -1. Under
 * apps_lock. */
static int app_slot(const void *handle, bool create) {
  int free_slot = -1;
  for (int i = 0; i < LOG_CTXS; i++) {
    if (apps[i].handle == handle)
      return i;
    if (!apps[i].handle && free_slot < 0)
      free_slot = i;
  }
  if (create && free_slot >= 0)
    apps[free_slot].handle = handle;
  return create ? free_slot : -1;
}

/* Sets handle's program callback (made if create); its slot, or -1. */
static int app_set(const void *handle, bool create, GLDEBUGPROC cb,
                   const void *user) {
  pthread_mutex_lock(&apps_lock);
  int i = app_slot(handle, create);
  if (i >= 0) {
    apps[i].app = cb;
    apps[i].user = user;
  }
  pthread_mutex_unlock(&apps_lock);
  return i;
}

static const char *source_tag(GLenum source) {
  switch (source) {
  case GL_DEBUG_SOURCE_API:
    return "OpenGL API";
  case GL_DEBUG_SOURCE_WINDOW_SYSTEM:
    return "OpenGL window system";
  case GL_DEBUG_SOURCE_SHADER_COMPILER:
    return "OpenGL shader compiler";
  case GL_DEBUG_SOURCE_THIRD_PARTY:
    return "OpenGL third party";
  case GL_DEBUG_SOURCE_APPLICATION:
    return "OpenGL application";
  default:
    return "OpenGL";
  }
}

static uint32_t severity(GLenum type, GLenum sev) {
  if (type == GL_DEBUG_TYPE_ERROR)
    return GP_LOG_ERROR;
  switch (sev) {
  case GL_DEBUG_SEVERITY_HIGH:
    return GP_LOG_ERROR;
  case GL_DEBUG_SEVERITY_MEDIUM:
    return GP_LOG_WARNING;
  case GL_DEBUG_SEVERITY_LOW:
    return GP_LOG_INFO;
  default:
    return GP_LOG_DEBUG;
  }
}

static void APIENTRY on_message(GLenum source, GLenum type, GLuint id,
                                GLenum sev, GLsizei length, const GLchar *msg,
                                const void *user) {
  if (msg && gp__gl_core->activity_enabled(GP_ACTIVITY_KIND_GPU_LOG, 0)) {
    gp_activity_gpu_log *r = gp__gl_core->activity_reserve(
        GP_ACTIVITY_KIND_GPU_LOG, sizeof(*r), 0, 0);
    if (r) {
      r->timestamp = gp_get_timestamp();
      r->severity = severity(type, sev);
      r->tag_id = gp__gl_core->string_intern(source_tag(source));
      r->message_id =
          length >= 0
              ? gp__gl_core->string_intern_n(msg, strnlen(msg, (size_t)length))
              : gp__gl_core->string_intern(msg);
      r->process_id = gp__gl_core->pid();
      r->thread_id = gp__gl_core->tid();
      r->reserved0 = 0;
      gp__gl_core->activity_commit(r);
    }
  }
  GLDEBUGPROC app = NULL;
  const void *app_user = NULL;
  pthread_mutex_lock(&apps_lock);
  int i = app_slot(user, false);
  if (i >= 0) {
    app = apps[i].app;
    app_user = apps[i].user;
  }
  pthread_mutex_unlock(&apps_lock);
  if (app)
    app(source, type, id, sev, length, msg, app_user);
}

/* See glInt.h. */
void gp__gl_log_init(gp__gl_ctx *c) {
  bool khr = (!c->es && (c->major > 4 || (c->major == 4 && c->minor >= 3))) ||
             (c->es && (c->major > 3 || (c->major == 3 && c->minor >= 2)));
  if (!c->fn.DebugMessageCallback)
    return;
  if (!khr)
    khr = gp__gl_has_ext(c, "GL_KHR_debug");
  if (!khr)
    return;
  /* A new context (or a handle used again): no program callback yet. */
  if (app_set(c->handle, true, NULL, NULL) < 0)
    return; /* no room: the program's callbacks go to the driver */
  c->fn.DebugMessageCallback(on_message, c->handle);
  c->debug_hooked = true;
}

/* See glInt.h. */
void gp__gl_log_app_callback(gp__gl_ctx *c, GLDEBUGPROC cb, const void *user) {
  app_set(c->handle, false, cb, user);
}
