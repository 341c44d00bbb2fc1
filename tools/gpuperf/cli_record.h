/*
 * cli_record.h - what `gpuperf record` (cmd_record.c) and `gpuperf stat`
 * (cmd_stat.c) share with record_merge.c (turning the per-process parts
 * of a recording into one trace, safely) and events.c (checking -e names
 * before anything runs).
 */
#ifndef GPUPERF_CLI_RECORD_H
#define GPUPERF_CLI_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What a merge found and wrote. */
typedef struct rec_summary {
  unsigned procs;   /* sequences with at least one byte */
  unsigned cut;     /* sequences whose last packet was incomplete */
  unsigned failed;  /* processes that could not write their part */
  unsigned unclean; /* parts never finished (SIGKILL): <N>.open left */
  unsigned long first_unclean; /* the sequence of the first of them */
  uint64_t lost;               /* records they committed but never wrote */
  uint64_t salvaged;           /* records of theirs record wrote for them */
  unsigned lost_unknown;       /* of them, those whose count is not known */
  uint64_t packets;            /* whole packets written */
  uint64_t bytes;              /* bytes written */
  char first_failed[256];      /* what the first failed process said */
} rec_summary;

/*
 * Merges the parts in dir (<N>.pftrace, in sequence order, whole packets
 * only) into a new file beside output, then renames it to output; an
 * existing output is first renamed to output.old. The parts are left in
 * dir. Returns 0, or -errno with a one-line reason in err (naming the file)
 * and sum saying what was written: on a write error the new file is cut
 * back to whole packets, and output is left as it was (the new file goes
 * to output.partial, or to output where there was none); if it could not
 * even be created, output is untouched.
 */
int rec_merge_into(const char *dir, const char *output, bool quiet,
                   rec_summary *sum, char *err, size_t err_size);

/* Removes the parts, the config, the note and the activity index the
 * processes shared (activity_ranges) of dir, then dir itself.
 * Returns false if dir is not empty afterwards (a process still writing). */
bool rec_remove_parts(const char *dir);

/* Writes dir/RECOVER: the command that turns dir into a trace if record
 * does not get to do it. Best effort. */
void rec_write_note(const char *dir, const char *output);

/* Says on stderr what sum holds about processes that died unseen
 * (SIGKILL): records salvaged, and lost (or of unknown count). */
void rec_print_deaths(const rec_summary *sum);

/* `gpuperf record --recover DIR [-o FILE]`: merges what a killed record
 * left in DIR, and says what was salvaged and lost, as record does.
 * Returns the exit status: 2 when records were lost. */
int rec_recover(const char *dir, const char *output, bool quiet);

/*
 * Checks counter names as given to -e before a program runs: each must
 * match a counter of a device gpuperf knows here (the simulated GPUs and
 * the host CPU), and what they select on a device must fit what it counts
 * at once, or, with multiplex (stat), be multiplexed there (the device's
 * catalog supports_multiplex) (record writes the host CPU's as process
 * counter tracks, stat counts them). Prints a one-line error and returns
 * CLI_BAD_INPUT if not.
 */
int cli_check_events(char **names, size_t n, bool multiplex);

/* When true (record and stat --wait), cli_check_events() waits for
 * counters someone else holds (a V3D GPU's) instead of returning
 * CLI_BUSY. */
extern bool cli_wait_counters;

/* Splits a comma list into newly allocated names appended to names[]
 * (at most max in all). Returns CLI_OK, or the exit status after printing
 * why: CLI_USAGE for a list without a name, CLI_BAD_INPUT past max. */
int cli_split_events(const char *list, char **names, size_t *n, size_t max);

/* Reads the whole file at path into a malloc'd buffer (its length in
 * *len); NULL with errno set if it cannot be opened or read. */
char *cli_slurp(const char *path, size_t *len);

#endif /* GPUPERF_CLI_RECORD_H */
