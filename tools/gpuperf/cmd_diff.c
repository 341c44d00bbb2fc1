/*
 * cmd_diff.c - `gpuperf diff A B`: what changed between two runs.
 *
 *   gpuperf diff A B [--format text|csv|json] [--fail-if COND]...
 *
 * Both traces are summarised as `gpuperf report` does (every row, no
 * ranking cut) and compared by the library (gp_report_diff in
 * src/report/diff.c): rows matched by key, each metric's values in A
 * and B, the change in percent, and for kernels a hint saying whether
 * the change of the mean stands out of the spread. This file reads the
 * command line, checks the --fail-if conditions and prints.
 *
 * --fail-if 'METRIC>+P%' (or '<-P%') makes the exit status 3 when the
 * change of METRIC passes P percent: total (all kernel time), copies
 * (all copy and fill time), busy (busy time of all GPUs), or
 * kernel:NAME (that kernel's total time). For CI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "trace_open.h"

#define DIFF_FAILED 3
#define MAX_CONDS 16

static void usage(FILE *f) {
  fprintf(f, "usage: gpuperf diff A B [--format text|csv|json] [--fail-if "
             "COND]...\n\n"
             "Compares two traces (two runs of the same program): per kernel\n"
             "count, total and mean time with the change and a significance\n"
             "hint from the spread; per copy kind count, bytes and time; busy\n"
             "time per GPU queue; the time-weighted mean of each counter.\n\n"
             "  --format FMT     text (default), csv or json\n"
             "  --fail-if COND   exit 3 if COND holds: METRIC>+P%% or "
             "METRIC<-P%%,\n"
             "                   METRIC total (kernel time), copies, busy or\n"
             "                   kernel:NAME; e.g. --fail-if 'total>+5%%'\n"
             "  --allow-truncated  read traces whose last packet is "
             "incomplete\n\n"
             "Exit status: 0 success, 1 usage error, 2 bad trace, 3 a "
             "--fail-if condition held.\n");
}

typedef struct cond {
  char metric[256];
  bool above; /* '>' */
  double pct;
} cond;

static bool parse_cond(const char *s, cond *c) {
  const char *op = strpbrk(s, "<>");
  if (!op || op == s || (size_t)(op - s) >= sizeof(c->metric))
    return false;
  memcpy(c->metric, s, (size_t)(op - s));
  c->metric[op - s] = '\0';
  c->above = *op == '>';
  char *end;
  c->pct = strtod(op + 1, &end);
  if (end == op + 1 || strcmp(end, "%") != 0 || !isfinite(c->pct))
    return false;
  return strcmp(c->metric, "total") == 0 || strcmp(c->metric, "copies") == 0 ||
         strcmp(c->metric, "busy") == 0 ||
         strncmp(c->metric, "kernel:", 7) == 0;
}

/* The change of metric m from A to B, in percent. */
static double change(const gp_report *a, const gp_report *b, const char *m) {
  return gp_report_change_pct(gp_report_metric(a, m), gp_report_metric(b, m));
}

static int open_report(const char *path, uint32_t flags, gp_report **r) {
  gp_tp *tp;
  int rc = trace_open("diff", path, flags, NULL, &tp);
  if (rc)
    return rc;
  gp_report_filter f;
  gp_report_filter_init(&f);
  f.top = 0; /* every row */
  gp_tp_error err = {0};
  if ((rc = gp_report_build(tp, path, &f, r, &err)))
    rc = report_error("report", rc, &err);
  trace_progress_end();
  gp_tp_close(tp);
  return rc;
}

/* See cli.h. */
int cmd_diff(int argc, char **argv) {
  const char *files[2] = {NULL, NULL}, *format = "text";
  cond conds[MAX_CONDS];
  int nconds = 0, nfiles = 0;
  uint32_t flags = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "--format") == 0 || strcmp(a, "--fail-if") == 0;
    if (takes && i + 1 >= argc)
      return cli_error(CLI_USAGE, "diff: %s needs a value (see --help)", a);
    const char *val = takes ? argv[++i] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--format") == 0) {
      if (strcmp(val, "text") && strcmp(val, "csv") && strcmp(val, "json"))
        return cli_error(CLI_USAGE,
                         "diff: --format '%s' is not text, csv or json", val);
      format = val;
    } else if (strcmp(a, "--fail-if") == 0) {
      if (nconds == MAX_CONDS || !parse_cond(val, &conds[nconds]))
        return cli_error(CLI_USAGE,
                         "diff: --fail-if '%s' is not METRIC>+P%% or "
                         "METRIC<-P%% (total, copies, busy, kernel:NAME)",
                         val);
      nconds++;
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (a[0] == '-' && a[1]) {
      return cli_error(CLI_USAGE, "diff: unknown option '%s' (see --help)", a);
    } else if (nfiles < 2) {
      files[nfiles++] = a;
    } else {
      return cli_error(CLI_USAGE, "diff: two traces only ('%s' is a third)", a);
    }
  }
  if (nfiles != 2)
    return cli_error(CLI_USAGE, "diff: needs two traces, A and B (see --help)");
  if (strcmp(files[0], "-") == 0 && strcmp(files[1], "-") == 0)
    return cli_error(CLI_USAGE, "diff: only one trace can be standard input");
  gp_report *ra = NULL, *rb = NULL, *d = NULL;
  int rc = open_report(files[0], flags, &ra);
  if (!rc)
    rc = open_report(files[1], flags, &rb);
  if (!rc && (rc = gp_report_diff(ra, rb, &d)))
    rc = report_error("diff", rc, NULL);
  if (rc) {
    gp_report_destroy(ra);
    gp_report_destroy(rb);
    return rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT;
  }
  int status = CLI_OK;
  char held[MAX_CONDS * 300] = "";
  for (int c = 0; c < nconds; c++) {
    double p = gp_report_change_pct(gp_report_metric(ra, conds[c].metric),
                                    gp_report_metric(rb, conds[c].metric));
    if (!isnan(p) && (conds[c].above ? p > conds[c].pct : p < conds[c].pct)) {
      size_t l = strlen(held);
      if (l + sizeof(conds[c].metric) + 32 < sizeof(held))
        snprintf(held + l, sizeof(held) - l, "%s%.256s %+.1f%%", l ? ", " : "",
                 conds[c].metric, p);
      status = DIFF_FAILED;
    }
  }
  if (strcmp(format, "csv") == 0) {
    report_print_csv(d, stdout, isatty(STDOUT_FILENO));
  } else if (strcmp(format, "json") == 0) {
    report_print_json(d, stdout);
  } else {
    fputs("gpuperf diff: A = ", stdout);
    report_put_clean(stdout, files[0], 0, false);
    fputs(", B = ", stdout);
    report_put_clean(stdout, files[1], 0, false);
    fputc('\n', stdout);
    printf("kernel time %+.1f%%, copy time %+.1f%%, GPU busy %+.1f%%\n",
           change(ra, rb, "total"), change(ra, rb, "copies"),
           change(ra, rb, "busy"));
    size_t changed = 0;
    for (size_t i = 0; i < gp_report_table_count(d); i++) {
      const gp_report_table *t = gp_report_table_at(d, i);
      for (size_t j = 0; j < gp_report_table_rows(t); j++) {
        double c = gp_report_table_row(t, j)[5].value; /* change_pct */
        changed += isnan(c) || fabs(c) >= 0.05;
      }
    }
    if (changed)
      printf("%zu metrics changed by 0.05%% or more\n", changed);
    else
      printf("no change\n");
    report_print_text_tables(d, stdout);
  }
  if (status == DIFF_FAILED)
    cli_error(0, "diff: --fail-if held: %s", held);
  gp_report_destroy(ra);
  gp_report_destroy(rb);
  gp_report_destroy(d);
  return status;
}
