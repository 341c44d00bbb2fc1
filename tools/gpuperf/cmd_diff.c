/*
 * cmd_diff.c - `gpuperf diff A B`: what changed between two runs.
 *
 *   gpuperf diff A B [--format text|csv|json] [--all] [--min-pct P]
 *                    [--min-ns N] [--fail-if COND]...
 *
 * Both traces are summarised as `gpuperf report` does (every row, no
 * ranking cut) and compared by the library (gp_report_diff_ex in
 * src/report/diff.c): rows matched by key, each metric's values in A
 * and B, the change in percent, and a hint that separates change from
 * noise (a minimum effect, then the spread). This file reads the command
 * line, checks the --fail-if conditions and prints; text hides the rows
 * that did not change past the minimum unless --all.
 *
 * --fail-if 'METRIC>+P%' (or '<-P%') makes the exit status 3 when the
 * change of METRIC passes P percent; with a '!' after the '%' only when
 * the change is also significant (past the minimum effect and, where
 * the spread is known, 3 standard errors). METRIC: total (all kernel
 * time), copies (all copy and fill time), busy (busy time of all GPUs),
 * wall (the trace's span) or kernel:NAME (that kernel's total time; a
 * NAME in neither trace is a usage error). For CI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpuperf/error.h"
#include "report.h"
#include "trace_open.h"

#define DIFF_FAILED 3
#define MAX_CONDS 16

static void usage(FILE *f) {
  fprintf(f, "usage: gpuperf diff A B [--format text|csv|json] [--all]\n"
             "                    [--min-pct P] [--min-ns N] [--fail-if "
             "COND]...\n\n"
             "Compares two traces (two runs of the same program): the wall\n"
             "time and GPU span; per kernel count, total and mean time with\n"
             "the change and a hint (significant, maybe, noise, small,\n"
             "changed, same); per copy kind count, bytes and time; busy time\n"
             "per GPU queue; the time-weighted mean of each counter. A change\n"
             "under P%% of A, or for a time under N ns, is 'small' and never\n"
             "significant; past them a kernel's mean or total is significant\n"
             "at 3 standard errors of the change (from the durations' "
             "spread).\n\n"
             "  --format FMT     text (default), csv or json (every row)\n"
             "  --all            text: also the rows that did not change past\n"
             "                   the minimum (hidden by default)\n"
             "  --min-pct P      the smallest change that counts, in %% of A\n"
             "                   (default 1)\n"
             "  --min-ns N       the smallest change of a time that counts\n"
             "                   (default 50)\n"
             "  --fail-if COND   exit 3 if COND holds: METRIC>+P%% or "
             "METRIC<-P%%,\n"
             "                   with '!' after the %% only if the change is\n"
             "                   significant too; METRIC total (kernel time),\n"
             "                   copies, busy, wall or kernel:NAME; e.g.\n"
             "                   --fail-if 'total>+5%%!'\n"
             "  --allow-truncated  read traces whose last packet is "
             "incomplete\n\n"
             "Exit status: 0 success, 1 usage error (an unknown kernel in a\n"
             "condition too), 2 bad trace, 3 a --fail-if condition held.\n");
}

typedef struct cond {
  char metric[256];
  const char *text; /* as given (argv) */
  bool above;       /* '>' */
  bool significant; /* '!': only a significant change */
  double pct;
} cond;

static bool parse_cond(const char *s, cond *c) {
  const char *op = strpbrk(s, "<>");
  if (!op || op == s || (size_t)(op - s) >= sizeof(c->metric))
    return false;
  memcpy(c->metric, s, (size_t)(op - s));
  c->metric[op - s] = '\0';
  c->text = s;
  c->above = *op == '>';
  char *end;
  c->pct = strtod(op + 1, &end);
  if (end == op + 1 || !isfinite(c->pct))
    return false;
  c->significant = strcmp(end, "%!") == 0;
  if (strcmp(end, "%") != 0 && !c->significant)
    return false;
  return strcmp(c->metric, "total") == 0 || strcmp(c->metric, "copies") == 0 ||
         strcmp(c->metric, "busy") == 0 || strcmp(c->metric, "wall") == 0 ||
         (strncmp(c->metric, "kernel:", 7) == 0 && c->metric[7]);
}

/* Text shows the rows whose change counts (and keys in one trace). */
static bool changed_row(const gp_report_table *t, const gp_report_cell *row) {
  (void)t;
  const char *h = row[6].text; /* hint */
  return !h || (strcmp(h, "same") != 0 && strcmp(h, "small") != 0);
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
  trace_progress_phase("summarising", 0);
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
  bool all = false;
  gp_report_diff_options dopt;
  gp_report_diff_options_init(&dopt);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "--format") == 0 || strcmp(a, "--fail-if") == 0 ||
                 strcmp(a, "--min-pct") == 0 || strcmp(a, "--min-ns") == 0;
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
    } else if (strcmp(a, "--min-pct") == 0 || strcmp(a, "--min-ns") == 0) {
      char *end;
      double v = strtod(val, &end);
      if (end == val || *end || !(v >= 0) || !isfinite(v))
        return cli_error(CLI_USAGE, "diff: %s '%s' is not a number >= 0", a,
                         val);
      *(strcmp(a, "--min-pct") == 0 ? &dopt.min_pct : &dopt.min_ns) = v;
    } else if (strcmp(a, "--all") == 0) {
      all = true;
    } else if (strcmp(a, "--fail-if") == 0) {
      if (nconds == MAX_CONDS || !parse_cond(val, &conds[nconds]))
        return cli_error(CLI_USAGE,
                         "diff: --fail-if '%s' is not METRIC>+P%%[!] or "
                         "METRIC<-P%%[!] (total, copies, busy, wall, "
                         "kernel:NAME)",
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
  if (!rc && (rc = gp_report_diff_ex(ra, rb, &dopt, &d)))
    rc = report_error("diff", rc, NULL);
  /* Every condition is checked before anything is printed: a kernel
   * that is in neither trace (a typo) must not pass as "no change". */
  gp_report_change ch[MAX_CONDS];
  for (int c = 0; !rc && c < nconds; c++) {
    int e = gp_report_metric_change(ra, rb, conds[c].metric, &dopt, &ch[c]);
    if (e == GP_ENOENT)
      rc = cli_error(CLI_USAGE,
                     "diff: --fail-if '%.300s': no kernel '%.256s' in A or B "
                     "(gpuperf report --top 0 lists them)",
                     conds[c].text, conds[c].metric + 7);
    else if (e)
      rc = report_error("diff", e, NULL);
  }
  if (rc) {
    gp_report_destroy(ra);
    gp_report_destroy(rb);
    gp_report_destroy(d);
    return rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT;
  }
  int status = CLI_OK;
  char held[MAX_CONDS * 400] = "";
  for (int c = 0; c < nconds; c++) {
    double p = ch[c].pct;
    bool past =
        !isnan(p) && (conds[c].above ? p > conds[c].pct : p < conds[c].pct);
    if (past && conds[c].significant && !ch[c].significant) {
      /* Said, so that a gate that did not fire is not a mystery. */
      cli_error(0,
                "diff: --fail-if '%.300s' not held: %+.1f%% is %s (under "
                "%.3g%% or %.3g ns, or under 3 standard errors)",
                conds[c].text, p, ch[c].hint, dopt.min_pct, dopt.min_ns);
      continue;
    }
    if (past) {
      size_t l = strlen(held);
      if (l + sizeof(conds[c].metric) + 64 < sizeof(held))
        snprintf(held + l, sizeof(held) - l, "%s%.256s %+.1f%% (%s)",
                 l ? ", " : "", conds[c].metric, p, ch[c].hint);
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
    printf("wall %+.1f%%, kernel time %+.1f%%, copy time %+.1f%%, GPU busy "
           "%+.1f%%\n",
           change(ra, rb, "wall"), change(ra, rb, "total"),
           change(ra, rb, "copies"), change(ra, rb, "busy"));
    size_t changed = 0, rows = 0, sig = 0;
    for (size_t i = 0; i < gp_report_table_count(d); i++) {
      const gp_report_table *t = gp_report_table_at(d, i);
      for (size_t j = 0; j < gp_report_table_rows(t); j++) {
        const gp_report_cell *row = gp_report_table_row(t, j);
        rows++;
        changed += changed_row(t, row);
        sig += strcmp(row[6].text, "significant") == 0;
      }
    }
    if (changed)
      printf("%zu of %zu metrics changed by %.3g%% (and %.3g ns) or more, %zu "
             "of them significant\n",
             changed, rows, dopt.min_pct, dopt.min_ns, sig);
    else
      printf("no change (by %.3g%% and %.3g ns or more)\n", dopt.min_pct,
             dopt.min_ns);
    size_t hidden = 0;
    report_print_text_tables_keep(d, stdout, all ? NULL : changed_row, &hidden);
    if (hidden)
      printf("\n(%zu unchanged rows hidden; --all shows them)\n", hidden);
  }
  if (status == DIFF_FAILED)
    cli_error(0, "diff: --fail-if held: %s", held);
  gp_report_destroy(ra);
  gp_report_destroy(rb);
  gp_report_destroy(d);
  return status;
}
