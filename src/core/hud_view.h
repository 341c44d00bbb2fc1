/*
 * hud_view.h - the HUD's panes as another library draws them: the struct
 * the backend table's hud_view entry fills (core/backend.h), and the
 * frame metrics its hud_feed entry takes.
 *
 * The HUD itself (src/session/hud.c) keeps the items GPUPERF_HUD names,
 * their latest values and their history; a library that owns a window
 * (libgpuperf-gl.so) copies them at each frame with hud_view and draws
 * them (src/backend/opengl/hud_gl.c). The core only carries the two calls
 * to the session layer through a hook (hooks.c), as it carries activation.
 *
 * The struct crosses a library boundary: fixed-width types, explicit
 * padding, and a size the caller sets, which the HUD checks.
 */
#ifndef GPUPERF_CORE_HUD_VIEW_H
#define GPUPERF_CORE_HUD_VIEW_H

#include <stdint.h>

#define GP_HUD_VIEW_MAX_ITEMS 16
#define GP_HUD_VIEW_HIST 64 /* history values kept per item */
#define GP_HUD_VIEW_NAME 48 /* bytes of a name, NUL included */

/* gp_hud_view_item.flags */
#define GP_HUD_VIEW_HAVE 1u  /* value holds a value (else none yet) */
#define GP_HUD_VIEW_FIXED 2u /* top is the item's :MAX, not automatic */

typedef struct gp_hud_view_item {
  char name[GP_HUD_VIEW_NAME]; /* as in GPUPERF_HUD, cut to fit */
  uint32_t pane;               /* 0, 1, ...: ',' in GPUPERF_HUD */
  uint32_t flags;              /* GP_HUD_VIEW_* */
  double value;                /* latest value (with GP_HUD_VIEW_HAVE) */
  double top;        /* top of the graph's scale: :MAX, else the largest
                        value of the history (1 when there is none) */
  uint32_t num_hist; /* values in hist, at most GP_HUD_VIEW_HIST */
  uint32_t reserved; /* 0 */
  double hist[GP_HUD_VIEW_HIST]; /* one per HUD period, oldest first */
} gp_hud_view_item;

typedef struct gp_hud_view {
  uint32_t size;      /* set by the caller: sizeof(gp_hud_view) */
  uint32_t num_items; /* items in the order GPUPERF_HUD names them */
  uint32_t num_panes;
  uint32_t reserved; /* 0 */
  uint64_t seq;      /* changes whenever anything below changed */
  gp_hud_view_item items[GP_HUD_VIEW_MAX_ITEMS];
} gp_hud_view;

/*
 * What hud_feed is told (core/backend.h):
 *   GP_HUD_FEED_SWAP       a frame ended (a swap) at time t_ns: fps and
 *                          frametime are computed from these; value unused
 *   GP_HUD_FEED_GPU_FRAME  a frame took value milliseconds on the GPU
 *                          (gpu-frametime); t_ns unused
 * t_ns is CLOCK_MONOTONIC nanoseconds, 0 meaning now.
 */
#define GP_HUD_FEED_SWAP 1u
#define GP_HUD_FEED_GPU_FRAME 2u

#endif /* GPUPERF_CORE_HUD_VIEW_H */
