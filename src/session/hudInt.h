/*
 * hudInt.h - what the HUD's files share: hud.c (counters, values, the
 * thread, CSV rows, start and exit), hud_term.c (its line at the bottom
 * of a terminal) and hud_help.c (GPUPERF_HUD=help).
 */
#ifndef GPUPERF_SESSION_HUD_INT_H
#define GPUPERF_SESSION_HUD_INT_H

#include <stdbool.h>
#include <stddef.h>

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

#endif /* GPUPERF_SESSION_HUD_INT_H */
