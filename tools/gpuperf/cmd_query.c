/*
 * cmd_query.c - `gpuperf query`: run SQL (PerfettoSQL) on a trace.
 *
 *   gpuperf query FILE [SQL | -f FILE.sql] [--format table|csv|json]
 *                 [--db FILE] [--allow-truncated]
 *
 * Without SQL, a summary of what the trace holds is printed. The CSV
 * format is the one of Perfetto's diff tests (quoted header and strings,
 * NULL as "[NULL]", doubles as %f). --db keeps the imported tables in a
 * SQLite file and reuses it while the trace is unchanged (size, mtime and
 * a hash of its whole content); a damaged one is rebuilt with a warning.
 * Text from the trace cannot drive the terminal: when stdout is one,
 * control characters and invalid UTF-8 are shown escaped; JSON is always
 * valid UTF-8 (invalid bytes become U+FFFD and are counted on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gpuperf/tp.h"
#include "trace_open.h"

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: gpuperf query FILE [SQL | -f FILE.sql] [--format "
      "table|csv|json]\n"
      "                     [--db FILE] [--allow-truncated] [-q]\n\n"
      "Runs SQL on a Perfetto trace (any producer). Tables and views have\n"
      "Perfetto's names: gpu, gpu_track, gpu_slice, gpu_counter_track,\n"
      "gpu_counter_group, counter, track, slice, flow, args, process,\n"
      "thread, stats, ... (docs/sql.md). PerfettoSQL is understood:\n"
      "INCLUDE PERFETTO MODULE, macros called with '!', CREATE PERFETTO\n"
      "MACRO/TABLE/VIEW/FUNCTION. Several statements may be given; the\n"
      "rows of the last are printed. Without SQL, the trace is summarised.\n\n"
      "  -f FILE.sql        read the SQL from a file ('-' for stdin)\n"
      "  --format FMT       table (default), csv (Perfetto's diff-test "
      "CSV) or json\n"
      "  --db FILE          keep the imported tables in this SQLite file and\n"
      "                     reuse it while the trace is unchanged\n"
      "  --allow-truncated  import a trace whose last packet is incomplete\n"
      "                     (a killed recording) instead of failing\n"
      "  -q, --quiet        no progress line\n\n"
      "On a terminal, a progress line on stderr after a second: the import's\n"
      "percent and time left, then (when the result goes to a file or pipe)\n"
      "the seconds the query has run.\n\n"
      "Many traces: FILE may be a glob ('runs/*.pftrace', quoted); the SQL\n"
      "runs on each in parallel and one result with a 'trace' column is\n"
      "printed, progress on stderr.\n"
      "  -j, --jobs N       traces at once (default: one per CPU)\n"
      "  --keep-going       a failing trace is named and the others answer\n"
      "  -q, --quiet        no progress lines\n\n"
      "Exit status: 0 success, 1 usage error, 2 bad trace or SQL error.\n");
}

/* Reads a whole file (or stdin for "-") into a NUL-terminated buffer. */
static char *read_all(const char *path) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f)
    return NULL;
  size_t n = 0, cap = 4096;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1024 > cap) {
      char *p = realloc(buf, cap * 2);
      if (!p) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0)
      break;
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  if (f != stdin)
    fclose(f);
  if (buf)
    buf[n] = '\0';
  return buf;
}

static const char summary_sql[] =
    "SELECT 'gpus' AS what, (SELECT count(*) FROM gpu) AS count "
    "UNION ALL SELECT 'gpu slices', (SELECT count(*) FROM gpu_slice) "
    "UNION ALL SELECT 'slices', (SELECT count(*) FROM slice) "
    "UNION ALL SELECT 'counter tracks', (SELECT count(*) FROM counter_track) "
    "UNION ALL SELECT 'counter values', (SELECT count(*) FROM counter) "
    "UNION ALL SELECT 'flows', (SELECT count(*) FROM flow) "
    "UNION ALL SELECT 'processes', (SELECT count(*) FROM process) "
    "UNION ALL SELECT 'threads', (SELECT count(*) FROM thread) "
    "UNION ALL SELECT 'stat ' || name, value FROM stats WHERE value != 0";

/* Runs sql and writes its rows to stdout; when buffered, only once the
 * query has succeeded (so that a retry does not print rows twice). */
static int write_result(gp_tp *tp, const char *sql, gp_tp_format format,
                        uint32_t flags, bool buffered, gp_tp_write_stats *ws,
                        gp_tp_error *err) {
  if (!buffered)
    return gp_tp_write_ex(tp, sql, format, flags, stdout, ws, err);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (!mem)
    return gp_tp_write_ex(tp, sql, format, flags, stdout, ws, err);
  int rc = gp_tp_write_ex(tp, sql, format, flags, mem, ws, err);
  fclose(mem);
  if (rc == 0 && len)
    fwrite(buf, 1, len, stdout);
  free(buf);
  return rc;
}

/* See cli.h. */
int cmd_query(int argc, char **argv) {
  const char *trace = NULL, *sql = NULL, *sql_file = NULL, *db = NULL;
  gp_tp_format format = GP_TP_FORMAT_TABLE;
  uint32_t flags = 0;
  uint64_t jobs = 0;
  bool keep_going = false, batch_opt = false, quiet = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "-f") == 0 || strcmp(a, "--file") == 0) {
      if (++i >= argc)
        return cli_error(CLI_USAGE, "%s needs a file", a);
      sql_file = argv[i];
    } else if (strcmp(a, "--format") == 0) {
      if (++i >= argc)
        return cli_error(CLI_USAGE, "--format needs table, csv or json");
      if (strcmp(argv[i], "table") == 0)
        format = GP_TP_FORMAT_TABLE;
      else if (strcmp(argv[i], "csv") == 0)
        format = GP_TP_FORMAT_CSV;
      else if (strcmp(argv[i], "json") == 0)
        format = GP_TP_FORMAT_JSON;
      else
        return cli_error(CLI_USAGE, "--format: '%s' is not table, csv or json",
                         argv[i]);
    } else if (strcmp(a, "--db") == 0) {
      if (++i >= argc)
        return cli_error(CLI_USAGE, "--db needs a file");
      db = argv[i];
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) {
      if (!cli_parse_u64(a, i + 1 < argc ? argv[++i] : NULL, 1, 1024, &jobs))
        return CLI_USAGE;
      batch_opt = true;
    } else if (strncmp(a, "-j", 2) == 0 && a[2]) {
      if (!cli_parse_u64("-j", a + 2, 1, 1024, &jobs))
        return CLI_USAGE;
      batch_opt = true;
    } else if (strcmp(a, "--keep-going") == 0) {
      keep_going = batch_opt = true;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else if (a[0] == '-' && a[1] != '\0') {
      cli_error(CLI_USAGE, "query: unknown option '%s'", a);
      usage(stderr);
      return CLI_USAGE;
    } else if (!trace) {
      trace = a;
    } else if (!sql) {
      sql = a;
    } else {
      return cli_error(CLI_USAGE,
                       "query: one SQL argument only (quote it, or use -f)");
    }
  }
  if (!trace) {
    usage(stderr);
    return CLI_USAGE;
  }
  if (sql && !sql[strspn(sql, " \t\r\n;")])
    return cli_error(CLI_USAGE, "query: the SQL is empty");
  if (sql && sql_file)
    return cli_error(CLI_USAGE, "query: give SQL or -f FILE, not both");
  char *text = NULL;
  if (sql_file) {
    text = read_all(sql_file);
    if (!text)
      return cli_error(CLI_BAD_INPUT, "%s: %s", sql_file, strerror(errno));
    sql = text;
  }
  if (cli_query_is_batch(trace, batch_opt)) {
    int st = db ? cli_error(CLI_USAGE, "query: --db takes one trace")
                : cli_query_batch(trace, sql ? sql : summary_sql, format,
                                  (unsigned)jobs, keep_going, quiet);
    free(text);
    return st;
  }
  gp_tp_options opts = {.size = sizeof(opts), .flags = flags, .db_path = db};
  struct stat st;
  if (!quiet && stat(trace, &st) == 0 && S_ISREG(st.st_mode)) {
    trace_progress_start(trace, (uint64_t)st.st_size);
    opts.progress = trace_progress_tp;
  }
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(trace, &opts, &tp, &err) != 0) {
    trace_progress_end();
    free(text);
    return cli_error(err.code == GP_EINVAL ? CLI_USAGE : CLI_BAD_INPUT, "%s",
                     err.message);
  }
  /* Rows on the terminal end the line first; into a file or pipe, the
   * query's seconds follow. */
  if (isatty(STDOUT_FILENO))
    trace_progress_end();
  else
    trace_progress_phase("querying", 0);
  if (gp_tp_warning(tp))
    fprintf(stderr, "gpuperf: warning: %s\n", gp_tp_warning(tp));
  int status = CLI_OK;
  uint32_t wflags = isatty(STDOUT_FILENO) ? GP_TP_WRITE_ESCAPE : 0;
  gp_tp_write_stats ws;
  int rc = write_result(tp, sql ? sql : summary_sql, format, wflags, db != NULL,
                        &ws, &err);
  if (rc == GP_ECORRUPT && db) {
    /* The --db file is damaged past what opening it checks: rebuild it
     * from the trace and run the query again. */
    fprintf(stderr, "gpuperf: warning: %s: rebuilding it from %s\n",
            err.message, trace);
    gp_tp_close(tp);
    opts.flags |= GP_TP_REBUILD_DB;
    if (gp_tp_open(trace, &opts, &tp, &err) != 0) {
      free(text);
      return cli_error(CLI_BAD_INPUT, "%s", err.message);
    }
    rc = write_result(tp, sql ? sql : summary_sql, format, wflags, true, &ws,
                      &err);
  }
  trace_progress_end();
  if (rc != 0) {
    fflush(stdout);
    status = cli_error(CLI_BAD_INPUT, "%s", err.message);
  } else if (ws.invalid_utf8) {
    fflush(stdout);
    fprintf(stderr,
            "gpuperf: warning: %llu byte%s of text in the result %s not "
            "UTF-8: shown as %s\n",
            (unsigned long long)ws.invalid_utf8,
            ws.invalid_utf8 == 1 ? "" : "s",
            ws.invalid_utf8 == 1 ? "was" : "were",
            format == GP_TP_FORMAT_JSON ? "U+FFFD" : "\\xNN");
  }
  if (fflush(stdout) != 0 && status == CLI_OK)
    status =
        cli_error(CLI_BAD_INPUT, "writing the result: %s", strerror(errno));
  gp_tp_close(tp);
  free(text);
  return status;
}
