/*
 * hudInt.h - what the HUD's files share: hud.c (counters, values, the
 * thread, CSV rows, the view a window draws, start and exit), hud_term.c
 * (its line at the bottom of a terminal), hud_frames.c (the frame
 * metrics a window feeds) and hud_help.c (GPUPERF_HUD=help).
 */
#ifndef GPUPERF_SESSION_HUD_INT_H
#define GPUPERF_SESSION_HUD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Claims the terminal on stderr for this process's HUD line: one process
 * per terminal holds it (an flock on the terminal, opened anew), the
 * first that asks; the others get false and draw nothing. On success the
 * bottom line is kept out of the program's way with a scroll region
 * (DECSTBM) over the lines above it, SIGWINCH (where the program leaves
 * it at its default) wakes fd by writing to it, and true is returned.
 * Call from one thread only, as the ones below.
 */
bool gp__hud_term_claim(int wake_fd);

/*
 * Checks the terminal's size: when it changed, sets the scroll region
 * anew for it (the program's cursor stays on its line). Returns the
 * columns the line may use (the width less one), 0 when the terminal is
 * too small for a line of its own.
 */
int gp__hud_term_check(void);

/* Draws line (len bytes, already cut to what gp__hud_term_check() gave)
 * on the bottom line, in one write, leaving the program's cursor and
 * character attributes as they were. */
void gp__hud_term_draw(const char *line, size_t len);

/*
 * Gives the terminal back: clears the HUD's line, resets the scroll
 * region to the whole screen and puts the cursor back. Async-signal-safe
 * (core/death.c calls it, through the HUD's finisher, on a fatal signal):
 * it waits a moment for a draw in progress on another thread, then goes
 * ahead. Once given back nothing is drawn any more. Does nothing if the
 * terminal was never claimed or is already given back.
 */
void gp__hud_term_release(void);

/* Puts back the default SIGWINCH action if the HUD's handler still holds
 * it (at a normal exit). */
void gp__hud_term_unhook(void);

/*
 * The frame metrics (hud_frames.c): GP__HUD_FPS, GP__HUD_FRAMETIME,
 * GP__HUD_GPU_FRAMETIME index the values gp__hud_frames_take() gives.
 */
enum { GP__HUD_FPS = 1, GP__HUD_FRAMETIME = 2, GP__HUD_GPU_FRAMETIME = 3 };

/* The metric name names ("fps", "frametime", "gpu-frametime"), 0 for a
 * name that is none of them. */
int gp__hud_frame_metric(const char *name);

/* Takes a frame (GP_HUD_FEED_SWAP at t_ns, CLOCK_MONOTONIC, 0: now) or a
 * frame's GPU time (GP_HUD_FEED_GPU_FRAME, value ms); anything else is
 * ignored. Any thread. */
void gp__hud_frames_feed(uint32_t what, uint64_t t_ns, double value);

/*
 * Ends a period at now (CLOCK_MONOTONIC ns): stores in out[m] the
 * period's value of each metric m that has one and returns the set of
 * them (bit m), then starts the next period. hud_frames.c's top comment
 * says how each is computed.
 */
unsigned gp__hud_frames_take(uint64_t now, double out[4]);

/* One HUD period now, as the HUD's thread runs it (hud.c): for tests,
 * which set a period long enough that the thread never ticks. */
void gp__hud_tick(void);

#endif /* GPUPERF_SESSION_HUD_INT_H */
