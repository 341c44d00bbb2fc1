/*
 * cmd_export.c - `gpuperf export`: a trace in the formats other tools
 * read.
 *
 *   gpuperf export [FILE] --format chrome-json|csv [--table T] [-o OUT]
 *
 * chrome-json is Chrome's trace-event format (the JSON that
 * chrome://tracing, Perfetto's UI and many scripts read): GPU work as
 * complete ("X") events on one pseudo-process per GPU with a thread per
 * queue, host calls and ranges on their process and thread, counters as
 * "C" events. Times are microseconds written exactly (ns / 1000 with
 * three decimals). csv writes one table as plain CSV: GPU work, host
 * slices or counter values. Both read the views of the library's report
 * layer (gp_report_views).
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
#include "report.h"
#include "trace_open.h"

/* The pid of GPU n's pseudo-process in the JSON (real pids are below). */
#define GPU_PID_BASE 1073741824 /* 2^30 */
/* The tid of a host track that is not a thread (an async range track). */
#define TRACK_TID_BASE 1073741824

static void usage(FILE *f) {
  fprintf(f,
          "usage: gpuperf export [FILE] --format chrome-json|csv "
          "[--table T] [-o OUT]\n\n"
          "Writes a Perfetto trace (FILE, '-' for standard input; default\n"
          "gpuperf.pftrace) in another format:\n"
          "  chrome-json  Chrome's trace-event JSON: GPU work per GPU and\n"
          "               queue, host calls and ranges per thread, counters\n"
          "  csv          one table as CSV: --table work (GPU work, the\n"
          "               default), host (calls and ranges) or counters\n\n"
          "  -o OUT       write to OUT instead of standard output\n"
          "  --to clickhouse://HOST:PORT/DB [--cluster NAME]\n"
          "               write the tables into ClickHouse instead\n"
          "               (gpuperf export --to URL --help; docs/scale.md)\n"
          "  --allow-truncated  read a trace whose last packet is "
          "incomplete\n\n"
          "Exit status: 0 success, 1 usage error, 2 bad trace or write "
          "error.\n");
}

/* ns as exact microseconds: "1234.567". */
static void us(FILE *f, int64_t ns) {
  if (ns < 0) {
    fputc('-', f);
    ns = ns == INT64_MIN ? INT64_MAX : -ns;
  }
  fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

typedef struct jstate {
  FILE *f;
  bool first;
} jstate;

static void sep(jstate *j) {
  fputs(j->first ? "\n" : ",\n", j->f);
  j->first = false;
}

/* Columns: pid, tid, kind ('M' process, 'T' thread), name. */
static void meta_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  sep(j);
  bool proc = strcmp(gp_tp_rows_text(r, 2), "M") == 0;
  fprintf(j->f,
          "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
          ",\"args\":{\"name\":",
          proc ? "process_name" : "thread_name", gp_tp_rows_int(r, 0),
          gp_tp_rows_int(r, 1));
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 3));
  fputs("}}", j->f);
}

/* Columns: pid, tid, ts, dur, name, cat, bytes. */
static void slice_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  sep(j);
  fprintf(j->f, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
          gp_tp_rows_int(r, 0), gp_tp_rows_int(r, 1));
  us(j->f, gp_tp_rows_int(r, 2));
  fputs(",\"dur\":", j->f);
  us(j->f, gp_tp_rows_int(r, 3));
  fputs(",\"name\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 4));
  fputs(",\"cat\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 5));
  if (gp_tp_rows_type(r, 6) != GP_TP_NULL)
    fprintf(j->f, ",\"args\":{\"bytes\":%" PRId64 "}", gp_tp_rows_int(r, 6));
  fputc('}', j->f);
}

/* Columns: pid, ts, name, value. */
static void counter_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  sep(j);
  fprintf(j->f,
          "{\"ph\":\"C\",\"pid\":%" PRId64 ",\"ts\":", gp_tp_rows_int(r, 0));
  us(j->f, gp_tp_rows_int(r, 1));
  fputs(",\"name\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 2));
  fputs(",\"args\":{\"value\":", j->f);
  gp_tp_put_json_number(j->f, gp_tp_rows_real(r, 3));
  fputs("}}", j->f);
}

#define STR(x) #x
#define XSTR(x) STR(x)

/* The pid and tid of a host slice: its thread's, or its process's and a
 * tid for the track. */
#define HOST_PID "coalesce(p.pid, 0)"
#define HOST_TID "coalesce(th.tid, " XSTR(TRACK_TID_BASE) " + h.track_id)"
#define HOST_JOIN                                                              \
  " LEFT JOIN thread_track tt ON tt.id = h.track_id LEFT JOIN thread th ON "   \
  "th.utid = tt.utid LEFT JOIN process p ON p.upid = h.upid"

static int chrome_json(gp_tp *tp, FILE *f) {
  jstate j = {f, true};
  int rc;
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
  if ((rc = report_each_row(
           tp, "export",
           "SELECT DISTINCT " XSTR(
               GPU_PID_BASE) " + w.ugpu, 0, 'M', "
                             "coalesce(g.name, g.model, 'GPU ' || w.ugpu) FROM "
                             "rp_work w LEFT "
                             "JOIN gpu g ON g.id = w.ugpu UNION ALL SELECT "
                             "DISTINCT " XSTR(
                                 GPU_PID_BASE) " + w.ugpu, w.track_id, 'T', "
                                               "w.queue FROM "
                                               "rp_work w UNION ALL SELECT "
                                               "DISTINCT p.pid, 0, "
                                               "'M', coalesce(p.name, 'process "
                                               "' || p.pid) "
                                               "FROM rp_host h JOIN process p "
                                               "ON p.upid = "
                                               "h.upid UNION ALL SELECT "
                                               "DISTINCT " HOST_PID
                                               ", " HOST_TID
                                               ", 'T', coalesce(t.name, "
                                               "'thread') FROM rp_host h "
                                               "JOIN track t ON t.id = "
                                               "h.track_id" HOST_JOIN,
           meta_row, &j)) ||
      (rc = report_each_row(
           tp, "export",
           "SELECT " XSTR(GPU_PID_BASE) " + ugpu, track_id, ts, dur, name, "
                                        "CASE WHEN is_kernel THEN 'kernel' "
                                        "WHEN is_copy THEN 'copy' ELSE "
                                        "'gpu' END, CAST(bytes AS INT) FROM "
                                        "rp_work ORDER BY ts",
           slice_row, &j)) ||
      (rc = report_each_row(tp, "export",
                            "SELECT " HOST_PID ", " HOST_TID
                            ", h.ts, h.dur, h.name, CASE h.kind WHEN 'api' "
                            "THEN 'api' WHEN 'range' THEN coalesce(h.category, "
                            "'range') ELSE 'gpuperf' END, NULL FROM rp_host "
                            "h" HOST_JOIN " ORDER BY h.ts",
                            slice_row, &j)) ||
      (rc = report_each_row(tp, "export",
                            "SELECT CASE WHEN gpu IS NULL THEN 0 ELSE " XSTR(
                                GPU_PID_BASE) " + gpu END, ts, name, value "
                                              "FROM rp_counter ORDER BY ts",
                            counter_row, &j)))
    return rc;
  fputs("\n]}\n", f);
  return 0;
}

static int csv_table(gp_tp *tp, const char *table, FILE *f, bool escape) {
  const char *sql;
  if (strcmp(table, "work") == 0)
    sql = "SELECT w.ts AS ts_ns, w.dur AS dur_ns, coalesce(g.gpu, w.ugpu) AS "
          "gpu, w.queue, w.name, CASE WHEN w.is_kernel THEN 'kernel' WHEN "
          "w.is_copy THEN 'copy' ELSE 'gpu' END AS kind, CAST(w.bytes AS INT) "
          "AS bytes FROM rp_work "
          "w LEFT JOIN gpu g ON g.id = w.ugpu ORDER BY w.ts";
  else if (strcmp(table, "host") == 0)
    sql = "SELECT h.ts AS ts_ns, h.dur AS dur_ns, h.kind, h.name, h.category, "
          "p.pid, th.tid FROM rp_host h" HOST_JOIN " ORDER BY h.ts";
  else if (strcmp(table, "counters") == 0)
    sql = "SELECT ts AS ts_ns, name, gpu, unit, value FROM rp_counter ORDER "
          "BY ts";
  else
    return cli_error(
        CLI_USAGE, "export: --table '%s' is not work, host or counters", table);
  gp_tp_rows *r;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &r, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "export: %s", err.message);
  int n = gp_tp_rows_columns(r), rc;
  for (int c = 0; c < n; c++)
    fprintf(f, "%s%s", c ? "," : "", gp_tp_rows_name(r, c));
  fputc('\n', f);
  while ((rc = gp_tp_rows_next(r, &err)) == 1) {
    for (int c = 0; c < n; c++) {
      if (c)
        fputc(',', f);
      switch (gp_tp_rows_type(r, c)) {
      case GP_TP_INT:
        fprintf(f, "%" PRId64, gp_tp_rows_int(r, c));
        break;
      case GP_TP_REAL: {
        double v = gp_tp_rows_real(r, c);
        if (isinf(v)) /* as the report's CSV: what strtod reads */
          fputs(v > 0 ? "inf" : "-inf", f);
        else
          fprintf(f, "%.17g", v);
        break;
      }
      case GP_TP_TEXT:
        report_put_csv_str(f, gp_tp_rows_text(r, c), escape);
        break;
      default:
        break;
      }
    }
    fputc('\n', f);
  }
  gp_tp_rows_destroy(r);
  if (rc < 0)
    return cli_error(CLI_BAD_INPUT, "export: %s", err.message);
  return 0;
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
  if (!rc && (rc = gp_report_views(tp, NULL, NULL, NULL, &err)))
    rc = report_error("report", rc, &err);
  if (!rc && out && !(f = fopen(tmp, "w")))
    rc = cli_error(CLI_BAD_INPUT, "%s: %s", out, strerror(errno));
  if (!rc)
    rc = strcmp(format, "csv") == 0
             ? csv_table(tp, table, f, f == stdout && isatty(1))
             : chrome_json(tp, f);
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
