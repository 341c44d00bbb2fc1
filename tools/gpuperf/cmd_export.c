/*
 * cmd_export.c - `gpuperf export`: a trace in the formats other tools
 * read.
 *
 *   gpuperf export [FILE] --format chrome-json|csv [--table T] [-o OUT]
 *
 * The formats are written by export_fmt.c: chrome-json (Chrome's
 * trace-event JSON: every slice with its args, flows, process and thread
 * names, counters) and csv (one table: GPU work with correlation ids,
 * streams and launch configuration, host slices, counters, flows, or any
 * table of the trace processor). Both read the views of the library's
 * report layer (gp_report_views). This file reads the command line and
 * writes OUT safely.
 *
 * `--to clickhouse://...` (into a database) is a separate exporter,
 * export_clickhouse.c: any --to on the command line goes there.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "export_fmt.h"
#include "report.h"
#include "trace_open.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: gpuperf export [FILE] --format chrome-json|csv "
          "[--table T] [-o OUT]\n\n"
          "Writes a Perfetto trace (FILE, '-' for standard input; default\n"
          "gpuperf.pftrace) in another format:\n"
          "  chrome-json  Chrome's trace-event JSON: GPU work per GPU and\n"
          "               queue, host calls and ranges per thread, streams,\n"
          "               kernel args, flows (launch -> kernel), names,\n"
          "               counters\n"
          "  csv          one table as CSV: --table work (GPU work with\n"
          "               correlation id, stream and launch configuration;\n"
          "               the default), host (calls and ranges), counters,\n"
          "               flows, or any table of `gpuperf query` (slice,\n"
          "               gpu_slice, args, ...)\n\n"
          "  -o OUT       write to OUT instead of standard output\n"
          "  --to clickhouse://HOST:PORT/DB [--cluster NAME]\n"
          "               write the tables into ClickHouse instead\n"
          "               (gpuperf export --to URL --help; docs/scale.md)\n"
          "  --allow-truncated  read a trace whose last packet is "
          "incomplete\n\n"
          "Exit status: 0 success, 1 usage error, 2 bad trace or write "
          "error.\n");
}

/* `--to URL` sends the trace's tables to ClickHouse (docs/scale.md). */
static int export_to(int argc, char **argv) {
  return cli_export_clickhouse(argc, argv); /* export_clickhouse.c */
}

/* See cli.h. */
int cmd_export(int argc, char **argv) {
  const char *trace = NULL, *format = NULL, *out = NULL, *table = "work";
  uint32_t flags = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--to") == 0 || strncmp(argv[i], "--to=", 5) == 0)
      return export_to(argc, argv);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "--format") == 0 || strcmp(a, "-o") == 0 ||
                 strcmp(a, "--output") == 0 || strcmp(a, "--table") == 0;
    if (takes && i + 1 >= argc)
      return cli_error(CLI_USAGE, "export: %s needs a value (see --help)", a);
    const char *val = takes ? argv[++i] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--format") == 0) {
      if (strcmp(val, "chrome-json") && strcmp(val, "csv"))
        return cli_error(
            CLI_USAGE, "export: --format '%s' is not chrome-json or csv", val);
      format = val;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
      out = val;
    } else if (strcmp(a, "--table") == 0) {
      table = val;
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (a[0] == '-' && a[1]) {
      return cli_error(CLI_USAGE, "export: unknown option '%s' (see --help)",
                       a);
    } else if (!trace) {
      trace = a;
    } else {
      return cli_error(CLI_USAGE, "export: one trace only ('%s' is a second)",
                       a);
    }
  }
  if (!format)
    return cli_error(CLI_USAGE,
                     "export: say --format chrome-json or --format csv");
  if (out && trace_same_file(out, trace ? trace : TRACE_DEFAULT))
    return cli_error(CLI_USAGE,
                     "export: -o %s would overwrite the trace; name another "
                     "file",
                     out);
  gp_tp *tp;
  int rc = trace_open("export", trace, flags, NULL, &tp);
  if (rc)
    return rc;
  gp_tp_error err = {0};
  FILE *f = stdout;
  /* -o: written beside OUT and renamed at the end, so that a failure
   * leaves no half-written file and an old OUT stays as it was. */
  char tmp[4096] = "";
  if (out && snprintf(tmp, sizeof(tmp), "%s.tmp-%d", out, (int)getpid()) >=
                 (int)sizeof(tmp))
    rc = cli_error(CLI_USAGE, "export: -o: name too long");
  trace_progress_phase("preparing the export of", 0);
  if (!rc && (rc = gp_report_views(tp, NULL, NULL, NULL, &err)))
    rc = report_error("report", rc, &err);
  if (!rc && out && !(f = fopen(tmp, "w")))
    rc = cli_error(CLI_BAD_INPUT, "%s: %s", out, strerror(errno));
  long long lost_flows = 0;
  if (!rc)
    rc = strcmp(format, "csv") == 0
             ? export_csv(tp, table, f, f == stdout && isatty(1))
             : export_chrome_json(tp, f, &lost_flows);
  if (!rc && lost_flows > 0) /* said, not dropped silently */
    cli_error(0,
              "export: %lld flows left out: an end of each is not a slice "
              "of the JSON (an instant, or a slice without a name)",
              lost_flows);
  if (f == stdout && fflush(stdout) != 0 && !rc)
    rc = cli_error(CLI_BAD_INPUT, "export: writing: %s", strerror(errno));
  if (f && f != stdout) {
    if (fclose(f) != 0 && !rc)
      rc = cli_error(CLI_BAD_INPUT, "%s: %s", out, strerror(errno));
    if (!rc && rename(tmp, out) != 0)
      rc = cli_error(CLI_BAD_INPUT, "%s: %s", out, strerror(errno));
    if (rc)
      unlink(tmp);
  }
  trace_progress_end();
  gp_tp_close(tp);
  return rc ? (rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT) : CLI_OK;
}
