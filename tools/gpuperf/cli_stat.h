/*
 * cli_stat.h - what `gpuperf stat`'s two halves share: cmd_stat.c runs the
 * command and merges the files its processes leave into rows;
 * stat_print.c prints the rows as perf stat does (text, -x SEP, --json).
 */
#ifndef GPUPERF_CLI_STAT_H
#define GPUPERF_CLI_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_ROWS 4096

typedef struct stat_row {
  /* 'c' counter, 'k' kernel, 'v' kernel value, 'h' host, 's' render
   * stage, 'u' submits, 'd' a device's sampled time */
  char kind;
  char *device;  /* device name ("" for host) */
  char *kernel;  /* kernel name ('k', 'v'), stage kind ('s') */
  char *counter; /* counter name ('c', 'v', 'h') */
  char *units;
  bool avg;
  double value, weight;       /* avg: weighted mean over weight ns */
  uint64_t launches, time_ns; /* 'k', 's' (launches: the stage count) */
  /* -r N: the values of the runs counted so far (time_ns for 'k', 's'),
   * their launches and weights */
  double rsum, rsq, lsum, wsum;
  int rn; /* runs counted that had this row */
  /* Multiplexed counters: ns it counted of ns it was enabled, summed over
   * the processes (and the runs, in runsum, ensum); 0, 0: counted all
   * along */
  double running, enabled, runsum, ensum;
} stat_row;

extern stat_row stat_rows[MAX_ROWS];
extern size_t stat_nrows;
/* How the totals are printed: perf stat's text, -x SEP, or --json. */
extern const char *stat_sep;
extern bool stat_json;
extern int stat_repeats;
/* Runs counted into the figures (those that did not crash). */
extern int stat_counted;
/* The most processes a counted run had. */
extern int stat_max_procs;

/* Whether a and b are both NULL or equal strings. */
bool stat_same(const char *a, const char *b);

/* The times of the runs, in seconds: means over the runs timed, and the
 * standard errors of those means (NaN for one run). user and sys are
 * the CPU time of the command's process tree (wait4()'s rusage). */
typedef struct stat_times {
  double elapsed_s, user_s, sys_s;
  double elapsed_se, user_se, sys_se;
} stat_times;

/*
 * Prints the totals in stat_rows (each row's mean over the runs) to out,
 * in the form stat_sep and stat_json ask: the header naming argv (text),
 * each device's counters and kernels, the host CPU's counters, and the
 * times of the (mean) run t. crashed: runs left out; partial_sig: the
 * signal that ended the only run (-1: a process of it died of one; 0:
 * none).
 */
void stat_print_report(FILE *out, char **argv, const stat_times *t, int crashed,
                       int partial_sig);

#endif
