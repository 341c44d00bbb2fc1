/*
 * top_screen.h - the screen of `gpuperf top` (top_screen.c): lines built
 * to a width and drawn in place or printed, the terminal's keys read
 * without echo while it runs, and values in human units.
 */
#ifndef GPUPERF_TOP_SCREEN_H
#define GPUPERF_TOP_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Starts a new screen of the given width (columns, at least 40) and
 * height (lines; 0: no limit). Lines added past the height are dropped
 * when it is drawn.
 */
void top_screen_begin(int width, int height);

/* The width of the screen being built. */
int top_screen_width(void);

/* Adds one line, cut to the width (never wrapped). */
void top_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Adds text wrapped at spaces to the width, the lines after the first
 * indented by indent columns. */
void top_wrap(int indent, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Adds fields to lines that wrap: each field goes on the current line if
 * it fits within the width, else on a new line indented by indent
 * columns. top_fields_end() adds the last line.
 */
void top_fields_begin(int indent, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void top_field(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void top_fields_end(void);

/*
 * Writes the screen to out: on a terminal (tty), over the last one from
 * the top left, each line cleared to its end, at most height - 1 lines;
 * else every line, then an empty one. Returns false on a write error.
 */
bool top_screen_draw(FILE *out, bool tty);

/*
 * The terminal's size on fd (columns, lines), or 80 x 0 when fd is not a
 * terminal (COLUMNS, when set, gives the width then).
 */
void top_terminal_size(int fd, int *width, int *height);

/*
 * Interactive mode on the terminal of stdin and stdout: keys are read one
 * at a time without echo (ICANON and ECHO off, signals still on), the
 * alternate screen is used and the cursor hidden. The terminal is
 * restored by top_keys_end(), at exit, at a fatal signal (then raised
 * again) and while the process is stopped (^Z; cbreak again on SIGCONT).
 * Returns false (and changes nothing) when stdin or stdout is not a
 * terminal.
 */
bool top_keys_begin(void);
void top_keys_end(void);

/*
 * Waits up to seconds for a key. Returns the key ('q' and others), 0 when
 * the time ran out, or -1 when a signal (stop, resize) cut the wait.
 * Without interactive mode it only sleeps.
 */
int top_wait_key(double seconds);

/* Set by SIGWINCH (interactive mode): the terminal's size changed. */
extern volatile int top_resized;

/*
 * A counter's value in human units from its unit's name (gp_unit_name():
 * "PERCENT", "KILOHERTZ", "BYTE", ...): "12.5 %", "1.22 GHz", "845 MHz",
 * "1.5 MiB", "3.2 ms", "12.4 W", "45.0 C", or a plain number ("1.23 M")
 * for counts. Writes into buf and returns it.
 */
const char *top_fmt_value(char *buf, size_t size, double v, const char *unit);

#endif /* GPUPERF_TOP_SCREEN_H */
