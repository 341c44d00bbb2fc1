/*
 * cmd_report.c - `gpuperf report`: what a trace says, in a few tables.
 *
 *   gpuperf report [FILE] [--format text|csv|json] [--html OUT] [--top N]
 *                  [--from T] [--to T] [--process P] [--gpu N]
 *                  [--allow-truncated]
 *
 * The sections (GPUs, queues, streams, kernels, copies and fills, host
 * API calls, user ranges, counters, gpuperf's overhead, losses) are built
 * by the library (gpuperf/report.h, src/report) and printed by
 * report_fmt.c or report_html.c. This file reads the command line and
 * opens the trace. `--db` is refused, with its reason (below).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gpuperf/error.h"
#include "report.h"
#include "trace_open.h"

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: gpuperf report [FILE] [--format text|csv|json] [--html OUT]\n"
      "                      [--top N] [--from T] [--to T] [--process P]\n"
      "                      [--gpu N] [--allow-truncated]\n\n"
      "Summarises a Perfetto trace (FILE, '-' for standard input; default\n"
      "gpuperf.pftrace, what gpuperf record writes): GPUs, hardware queues\n"
      "and streams with their busy time, kernels (count, total, min, median,\n"
      "mean, max, stddev, share), copies and fills by kind (bytes,\n"
      "bandwidth), the application's host API calls, user ranges, counters\n"
      "(min, mean, max, time-weighted mean), gpuperf's own overhead, and\n"
      "what was lost. Busy: time with any kernel, copy or fill running,\n"
      "overlaps counted once, as a share of the window.\n\n"
      "  --format FMT       text (default), csv or json (raw ns and bytes)\n"
      "  --html OUT         also write a self-contained HTML report with a\n"
      "                     timeline, counter plots and sortable tables\n"
      "  --top N            rows per ranking, 0 for all (default: 10 in\n"
      "                     text and HTML, all in csv and json)\n"
      "  --from T, --to T   window: a time from the trace start (120us,\n"
      "                     1.5ms, 2s, or ns) or a user range's name (from\n"
      "                     its start, to its end)\n"
      "  --process P        only this process (pid or name)\n"
      "  --gpu N            only GPU number N\n"
      "  --allow-truncated  read a trace whose last packet is incomplete\n\n"
      "Exit status: 0 success, 1 usage error, 2 bad or unreadable trace.\n");
}

/* Resolves --from/--to: a time after the trace start, or the start (end)
 * of the first slice of that name. */
static int resolve_time(gp_tp *tp, const char *opt, const char *s, bool end,
                        int64_t *out) {
  gp_tp_error err = {0};
  int rc = gp_report_time(tp, s, end, out, &err);
  if (rc == GP_ENOENT)
    return cli_error(CLI_USAGE,
                     "report: %s '%s' is neither a time (like 1.5ms) nor the "
                     "name of a range in the trace",
                     opt, s);
  return rc ? report_error("report", rc, &err) : 0;
}

static int write_html(const gp_report *r, gp_tp *tp, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f)
    return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(errno));
  int rc = report_print_html(r, tp, f);
  if (fclose(f) != 0 && !rc)
    rc = -errno;
  if (rc)
    return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(-rc));
  return 0;
}

/* See cli.h. */
int cmd_report(int argc, char **argv) {
  const char *trace = NULL, *html = NULL, *from = NULL, *to = NULL;
  const char *format = "text";
  gp_report_filter flt;
  gp_report_filter_init(&flt);
  uint64_t v;
  uint32_t flags = 0;
  bool top_given = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = strcmp(a, "--top") == 0 || strcmp(a, "--html") == 0 ||
                 strcmp(a, "--db") == 0 || strcmp(a, "--format") == 0 ||
                 strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
                 strcmp(a, "--process") == 0 || strcmp(a, "--gpu") == 0;
    if (takes && !val)
      return cli_error(CLI_USAGE, "report: %s needs a value (see --help)", a);
    if (takes)
      i++;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--top") == 0) {
      if (!cli_parse_u64("report: --top", val, 0, 100000, &v))
        return CLI_USAGE;
      flt.top = (unsigned)v;
      top_given = true;
    } else if (strcmp(a, "--gpu") == 0) {
      if (!cli_parse_u64("report: --gpu", val, 0, 1000000, &v))
        return CLI_USAGE;
      flt.gpu = (int64_t)v;
    } else if (strcmp(a, "--html") == 0) {
      html = val;
    } else if (strcmp(a, "--db") == 0) {
      /* Measured on the 8000-step demo (44 MiB): the report 2.1 s from
       * the trace, 3.4 s from a kept database of 476 MiB (7.9 s the run
       * that writes it). A report reads every table whole, which the
       * in-memory import's columns serve faster than SQLite's pages. */
      return cli_error(CLI_USAGE,
                       "report: --db is refused: a report reads every table "
                       "whole, and importing the trace again is faster than "
                       "reading a kept database (which is some 10 times the "
                       "trace's size); --db pays for `gpuperf query`");
    } else if (strcmp(a, "--from") == 0) {
      from = val;
    } else if (strcmp(a, "--to") == 0) {
      to = val;
    } else if (strcmp(a, "--process") == 0) {
      flt.process = val;
    } else if (strcmp(a, "--format") == 0) {
      if (strcmp(val, "text") && strcmp(val, "csv") && strcmp(val, "json"))
        return cli_error(CLI_USAGE,
                         "report: --format '%s' is not text, csv or json", val);
      format = val;
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (a[0] == '-' && a[1]) {
      return cli_error(CLI_USAGE, "report: unknown option '%s' (see --help)",
                       a);
    } else if (!trace) {
      trace = a;
    } else {
      return cli_error(CLI_USAGE, "report: one trace only ('%s' is a second)",
                       a);
    }
  }
  /* CSV and JSON are for programs: every row unless --top says. */
  if (!top_given && strcmp(format, "text") != 0)
    flt.top = 0;
  const char *input = trace ? trace : TRACE_DEFAULT;
  if (html && (strcmp(html, "-") == 0 || trace_same_file(html, input)))
    return cli_error(CLI_USAGE,
                     "report: --html %s would overwrite the trace; name "
                     "another file",
                     html);
  gp_tp *tp;
  int rc = trace_open("report", trace, flags, NULL, &tp);
  if (rc)
    return rc;
  trace_progress_phase("summarising", 0);
  if ((from && (rc = resolve_time(tp, "--from", from, false, &flt.from))) ||
      (to && (rc = resolve_time(tp, "--to", to, true, &flt.to)))) {
    trace_progress_end();
    gp_tp_close(tp);
    return rc;
  }
  gp_report *r = NULL;
  gp_tp_error err = {0};
  rc = gp_report_build(tp, trace ? trace : TRACE_DEFAULT, &flt, &r, &err);
  if (rc)
    rc = report_error("report", rc, &err);
  /* The page first: its timeline queries are the long part of a large
   * trace, and the progress line must end before the report is printed. */
  if (!rc && html) {
    trace_progress_phase("writing the page of", 0);
    rc = write_html(r, tp, html);
  }
  trace_progress_end();
  if (!rc) {
    if (strcmp(format, "csv") == 0)
      report_print_csv(r, stdout, isatty(STDOUT_FILENO));
    else if (strcmp(format, "json") == 0)
      report_print_json(r, stdout);
    else
      report_print_text(r, stdout, isatty(1));
    if (fflush(stdout) != 0)
      rc = cli_error(CLI_BAD_INPUT, "report: writing: %s", strerror(errno));
  }
  gp_report_destroy(r);
  gp_tp_close(tp);
  return rc ? (rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT) : CLI_OK;
}
