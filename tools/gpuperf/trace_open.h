/*
 * trace_open.h - opening a trace for report, export and diff (see
 * trace_open.c).
 */
#ifndef GPUPERF_TRACE_OPEN_H
#define GPUPERF_TRACE_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuperf/tp.h"

/* The trace read when none is named: what `gpuperf record` writes. */
#define TRACE_DEFAULT "gpuperf.pftrace"

/*
 * Opens path (NULL: TRACE_DEFAULT; "-": standard input; pipes and
 * devices are read whole) with the trace processor. flags and db are
 * gp_tp_options'. cmd names the command in messages. Returns 0 with *out
 * set, else prints one line and returns CLI_USAGE (no trace named and no
 * default file) or CLI_BAD_INPUT (unreadable, empty, JSON, malformed;
 * a trace cut short mentions --allow-truncated). The file is only read.
 * On a terminal, a progress line appears on stderr after a second and
 * runs until trace_progress_end(): call it once the trace is summarised.
 */
int trace_open(const char *cmd, const char *path, uint32_t flags,
               const char *db, gp_tp **out);

/* Starts the progress line (stderr, a terminal only) of the trace name,
 * size bytes, in its "reading" phase; trace_open calls it. */
void trace_progress_start(const char *name, uint64_t size);

/* gp_tp_options.progress for the line: the import's percent and time
 * left ("reading"), then the database's ("saving the tables of"). */
void trace_progress_tp(void *user, const char *phase, uint64_t done,
                       uint64_t total);

/* Ends the progress line of the last trace_open (if any). */
void trace_progress_end(void);

/* Names the progress line's next phase ("summarising", "writing": static
 * strings) and its total units of work (0: not known; the line then
 * shows the seconds taken, else the percent and the time left). */
void trace_progress_phase(const char *phase, uint64_t total);

/* n more units of the phase's work done (cheap: an atomic add). */
void trace_progress_step(uint64_t n);

/* Whether a and b name the same existing file. */
bool trace_same_file(const char *a, const char *b);

#endif /* GPUPERF_TRACE_OPEN_H */
