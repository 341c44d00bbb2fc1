/*
 * hud_gl.h - GPUPERF_HUD drawn inside a GL window (hud_gl.c), as
 * GALLIUM_HUD draws Mesa's: panes at the top left, each with its items'
 * names and latest values and a line graph of their history, over a
 * translucent background.
 *
 * The GL library calls gp__gl_hud_draw() at each swap, before the real
 * swap, with the view the HUD gave it (the backend table's hud_view,
 * core/hud_view.h). The renderer draws into the default framebuffer (0)
 * with a program, a vertex buffer and a font texture of its own, and puts
 * back every piece of GL state it touches, so the program's rendering and
 * its pixels outside the HUD's rectangle are unchanged.
 *
 * The layout, in window pixels from the top left (what a test of the
 * pixels may rely on): the first pane starts at (GP_GL_HUD_MARGIN,
 * GP_GL_HUD_MARGIN); panes are GP_GL_HUD_PANE_W wide and stacked below
 * each other, GP_GL_HUD_GAP apart; a pane of n items is
 * gp__gl_hud_pane_height(n) high: a text line of GP_GL_HUD_LINE_H pixels
 * per item (the name in the item's colour, the value in white, right
 * aligned), then a graph GP_GL_HUD_GRAPH_H high with a grey frame.
 */
#ifndef GPUPERF_BACKEND_OPENGL_HUD_GL_H
#define GPUPERF_BACKEND_OPENGL_HUD_GL_H

#include <stdbool.h>

#include "core/hud_view.h"

#define GP_GL_HUD_MARGIN 8
#define GP_GL_HUD_PANE_W 280
#define GP_GL_HUD_GAP 6
#define GP_GL_HUD_PAD 4
#define GP_GL_HUD_LINE_H 10 /* a 5x7 glyph in a 6x10 cell */
#define GP_GL_HUD_GRAPH_H 64

static inline int gp__gl_hud_pane_height(int items) {
  return 3 * GP_GL_HUD_PAD + items * GP_GL_HUD_LINE_H + GP_GL_HUD_GRAPH_H;
}

typedef struct gp__gl_hud gp__gl_hud;

/* Resolves a GL function by name (the GL library's resolver of the real
 * functions, glXGetProcAddress or eglGetProcAddress). */
typedef void *(*gp__gl_getproc)(const char *name);

/*
 * Creates the renderer for the context current on this thread: es and
 * major.minor say what it is (desktop GL 2.0 or later, compatibility or
 * core profile; OpenGL ES 2.0 or later). Resolves what it calls with
 * getproc (borrowed for this call only), compiles its program and makes
 * its buffer and font texture, saving and restoring the GL state it
 * touches. Returns NULL (the context as it was) for a version below
 * those, a function getproc does not give, or a program that does not
 * compile or link. It never calls glGetError(), so an error the program
 * has pending stays its own. The renderer belongs
 * to that context (and those sharing its objects).
 */
gp__gl_hud *gp__gl_hud_create(gp__gl_getproc getproc, bool es, int major,
                              int minor);

/*
 * Draws view's panes into the default framebuffer of h's context, current
 * on this thread, whose size is width x height pixels. Every piece of GL
 * state it changes is put back before it returns; it allocates nothing.
 * The vertices are rebuilt and uploaded only when view->seq or the size
 * changed. One draw call. A NULL h or view, or no item, draws nothing.
 */
void gp__gl_hud_draw(gp__gl_hud *h, const gp_hud_view *view, int width,
                     int height);

/*
 * The rectangle the HUD of view covers in a width x height window: x, y
 * (from the top left), w, h in rect[0..3], cut to the window; all 0 when
 * nothing is drawn.
 */
void gp__gl_hud_extent(const gp_hud_view *view, int width, int height,
                       int rect[4]);

/* Deletes h's GL objects (its context, or one sharing its objects, must
 * be current) and frees h. NULL is ignored. */
void gp__gl_hud_destroy(gp__gl_hud *h);

/* Frees h without a GL call: for a context already destroyed, whose
 * objects went with it. NULL is ignored. */
void gp__gl_hud_abandon(gp__gl_hud *h);

#endif /* GPUPERF_BACKEND_OPENGL_HUD_GL_H */
