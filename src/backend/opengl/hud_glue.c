/*
 * hud_glue.c - GPUPERF_HUD in the program's window: at each swap, the
 * HUD's current panes (the backend table's hud_view) drawn over the frame
 * by hud_gl.c, and the frame metrics fed back (hud_feed): each swap's
 * time, and each frame's GPU time once its timestamps are read.
 *
 * A process without GPUPERF_HUD is not asked again once hud_view has
 * answered GP_ENOENT; one with it is asked at each swap until its HUD
 * has started. A context whose
 * renderer cannot be made (a GL below 2.0 or ES 2.0, a shader that does
 * not compile) draws nothing, and says so once.
 */
#include <stdio.h>
#include <stdlib.h>

#include "glInt.h"
#include "hud_gl.h"

static atomic_int hud_state; /* 0 unknown, 1 on, -1 off */

static void *getproc_glx(const char *name) {
  return gp__gl_proc(name, false);
}

static void *getproc_egl(const char *name) {
  return gp__gl_proc(name, true);
}

/* See glInt.h. */
bool gp__gl_hud_maybe(void) {
  int st = atomic_load_explicit(&hud_state, memory_order_relaxed);
  if (st == 0) {
    const char *spec = getenv("GPUPERF_HUD");
    if (!spec || !*spec) {
      atomic_store(&hud_state, -1);
      return false;
    }
  }
  return st >= 0;
}

/* See glInt.h. */
void gp__gl_hud_swap(gp__gl_ctx *c, int width, int height) {
  if (atomic_load_explicit(&hud_state, memory_order_relaxed) < 0 ||
      c->hud_failed || !c->ready || width <= 0 || height <= 0)
    return;
  const gp_backend_ops *k = gp__gl_core;
  if (!k || k->version < 6 || !k->hud_view) {
    atomic_store(&hud_state, -1);
    return;
  }
  if (!c->hud_view && !(c->hud_view = calloc(1, sizeof(*c->hud_view))))
    return;
  c->hud_view->size = sizeof(*c->hud_view);
  if (k->hud_view(c->hud_view) != 0) {
    /* No HUD yet: for good where GPUPERF_HUD is not set; otherwise it may
     * start a moment later (its thread shows nothing before a device). */
    const char *spec = getenv("GPUPERF_HUD");
    if (!spec || !*spec)
      atomic_store(&hud_state, -1);
    return;
  }
  atomic_store(&hud_state, 1);
  if (!c->hud) {
    c->hud = gp__gl_hud_create(c->egl ? getproc_egl : getproc_glx, c->es,
                               c->major, c->minor);
    if (!c->hud) {
      c->hud_failed = true;
      static atomic_bool warned;
      gp__gl_warn_once(&warned,
                       "gpuperf: GPUPERF_HUD: this GL context cannot draw the "
                       "HUD (it needs GL 2.0 or ES 2.0 and its shaders): it "
                       "is left out of the window");
      return;
    }
  }
  gp__gl_hud_draw(c->hud, c->hud_view, width, height);
}

/* See glInt.h. */
bool gp__gl_hud_on(void) {
  return atomic_load_explicit(&hud_state, memory_order_relaxed) > 0;
}

/* See glInt.h. */
void gp__gl_hud_swapped(void) {
  if (atomic_load_explicit(&hud_state, memory_order_relaxed) > 0)
    gp__gl_core->hud_feed(GP_HUD_FEED_SWAP, 0, 0);
}

/* See glInt.h. */
void gp__gl_hud_gpu_frame(uint64_t ns) {
  if (atomic_load_explicit(&hud_state, memory_order_relaxed) > 0)
    gp__gl_core->hud_feed(GP_HUD_FEED_GPU_FRAME, 0, (double)ns / 1e6);
}

/* See glInt.h. */
void gp__gl_hud_fini(gp__gl_ctx *c, bool current) {
  if (c->hud) {
    if (current)
      gp__gl_hud_destroy(c->hud);
    else
      gp__gl_hud_abandon(c->hud);
  }
  c->hud = NULL;
  free(c->hud_view);
  c->hud_view = NULL;
}
