/*
 * gpuperf/tp.h - the trace processor: open a Perfetto trace, query it in
 * SQL, iterate rows with typed columns.
 *
 * A trace from any producer (gpuperf's writer, Perfetto's own, an
 * Android GPU driver) is imported into tables with Perfetto's names and
 * columns: gpu, gpu_track, gpu_slice, gpu_counter_track,
 * gpu_counter_group, counter, track, slice, flow, args, process, thread,
 * stats and more (docs/sql.md lists them). Queries are SQLite SQL plus
 * the PerfettoSQL that Perfetto's standard library needs:
 * INCLUDE PERFETTO MODULE, macros called with '!', and CREATE PERFETTO
 * MACRO / TABLE / VIEW / FUNCTION.
 *
 *   gp_tp *tp;
 *   gp_tp_error err;
 *   if (gp_tp_open("demo.pftrace", NULL, &tp, &err) != 0)
 *     fprintf(stderr, "%s\n", err.message);
 *   gp_tp_rows *rows;
 *   gp_tp_query(tp, "SELECT name, dur FROM gpu_slice", &rows, &err);
 *   while (gp_tp_rows_next(rows, &err) == 1)
 *     printf("%s %lld\n", gp_tp_rows_text(rows, 0),
 *            (long long)gp_tp_rows_int(rows, 1));
 *   gp_tp_rows_destroy(rows);
 *   gp_tp_close(tp);
 *
 * A handle is used by one thread at a time; distinct handles are
 * independent. Errors return a negative GP_E* code and, when the caller
 * passes a gp_tp_error, a message naming what is at fault.
 */
#ifndef GPUPERF_TP_H
#define GPUPERF_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opened trace. */
typedef struct gp_tp gp_tp;

/* The rows of one query. */
typedef struct gp_tp_rows gp_tp_rows;

/* Why a call failed. */
typedef struct gp_tp_error {
  int code;          /* the GP_E* code returned */
  uint64_t offset;   /* byte offset in the trace at fault, or UINT64_MAX */
  char message[512]; /* one line, no trailing newline */
} gp_tp_error;

/* gp_tp_options.flags */
#define GP_TP_ALLOW_TRUNCATED 0x1u /* ignore an incomplete last packet */
#define GP_TP_REBUILD_DB 0x2u      /* re-import even if db_path matches */
/*
 * Keep the resident memory of the import, and of the queries on it, from
 * growing with the trace: the big arrays of the tables (and of the
 * import's sorting and indexes) live in unlinked temporary files in
 * $TMPDIR (else /var/tmp), and their resident pages are handed back
 * whenever they pass 24 MiB (a thread of the library watches). Up to
 * 2.2 bytes of disk a byte of trace, freed on close; the same rows,
 * slower (2.6x for a 455.7 MB trace). While any handle opened so lives,
 * the big arrays of every handle of the process are made so.
 */
#define GP_TP_SPILL 0x4u

/* The tables of gp_tp_stream_row.table. */
typedef enum gp_tp_stream_table {
  GP_TP_STREAM_MACHINE = 1,   /* a machine row: id and machine (its raw id) */
  GP_TP_STREAM_GPU_SLICE = 2, /* a gpu_slice row on a gpu_track */
  GP_TP_STREAM_COUNTER = 3,   /* a counter row on a counter_track */
} gp_tp_stream_table;

/* Bits of gp_tp_stream_row.nulls: the integer columns that are NULL. */
#define GP_TP_STREAM_NULL_GPU 0x1u /* no gpu row: ugpu and gpu */
#define GP_TP_STREAM_NULL_CONTEXT_ID 0x2u
#define GP_TP_STREAM_NULL_SUBMISSION_ID 0x4u
#define GP_TP_STREAM_NULL_UPID 0x8u
#define GP_TP_STREAM_NULL_CATEGORY 0x10u /* render_stage_category */

/*
 * One row handed to gp_tp_options.stream while the trace is imported,
 * with what a query would join to it. Valid for the call only (strings
 * too; NULL for an SQL NULL). A gpu_slice row has the columns of
 *
 *   SELECT s.id, s.ts, s.dur, s.track_id, s.name, s.context_id,
 *          s.submission_id, s.upid, s.render_stage_category,
 *          t.name, m.raw_id, g.id, g.gpu, g.name
 *   FROM gpu_slice s JOIN gpu_track t ON s.track_id = t.id
 *   JOIN machine m ON m.id = t.machine_id
 *   LEFT JOIN gpu g ON g.id = extract_arg(t.dimension_arg_set_id, 'ugpu')
 *
 * a counter row those of c.id, c.ts, c.track_id, c.value and m.raw_id
 * (counter c JOIN counter_track t, the machine as above).
 */
typedef struct gp_tp_stream_row {
  uint32_t table; /* gp_tp_stream_table */
  uint32_t nulls; /* GP_TP_STREAM_NULL_* */
  int64_t id;
  int64_t machine; /* the raw machine id (of the row's track) */
  int64_t ts, dur, track_id;
  double value;
  const char *name, *track_name, *gpu_name;
  int64_t ugpu, gpu; /* gpu.id and gpu.gpu of the track's GPU */
  int64_t context_id, submission_id, upid, render_stage_category;
} gp_tp_stream_row;

typedef struct gp_tp_options {
  uint32_t size; /* sizeof(gp_tp_options): lets the struct grow */
  uint32_t flags;
  /*
   * If set, the imported tables are kept in this SQLite file (written
   * atomically) and reused by later opens while the trace file keeps the
   * same size and modification time. Borrowed for the call.
   */
  const char *db_path;
  /*
   * If set, called now and then while opening, on the opening thread:
   * phase names the work ("reading": the import; "saving": writing
   * db_path), done of total units of it (total is fixed within a phase,
   * done only grows). For a progress line; NULL: not called.
   */
  void (*progress)(void *user, const char *phase, uint64_t done,
                   uint64_t total);
  void *progress_user;
  /*
   * If set, called on the opening thread while the trace is imported with
   * every row of gpu_slice and counter (each once, in no set order), as
   * soon as no later event of the trace can change it: most when they
   * are parsed, a few (a backwards-looking GPU counter's sample, whose
   * value comes with the next one; a slice on a hardware queue that a
   * later packet may name) at the end of the import. Before any of them,
   * each machine row. The rows equal those the tables give after the
   * import; a consumer can send them on while the rest is read. Returns
   * 0, or a negative GP_E* code that stops the import: gp_tp_open then
   * fails with it. Not called when the tables come from db_path.
   */
  int (*stream)(void *user, const gp_tp_stream_row *row);
  void *stream_user;
} gp_tp_options;

/* What opening cost. */
typedef struct gp_tp_info {
  uint64_t trace_bytes;
  uint64_t packets;         /* TracePackets read (0 when loaded from a db) */
  uint64_t events;          /* packets and ftrace events parsed in ts order */
  double import_seconds;    /* tokenize + sort + parse + SQL setup */
  bool from_db;             /* tables came from db_path, nothing imported */
  int64_t start_ts, end_ts; /* trace bounds (ns, trace clock) */
} gp_tp_info;

/* Column types of a row. */
typedef enum gp_tp_type {
  GP_TP_NULL = 0,
  GP_TP_INT = 1,
  GP_TP_REAL = 2,
  GP_TP_TEXT = 3,
  GP_TP_BLOB = 4,
} gp_tp_type;

/* Output formats of gp_tp_write(). */
typedef enum gp_tp_format {
  GP_TP_FORMAT_CSV = 0,   /* Perfetto's diff-test CSV: quoted header and
                             strings, NULL as "[NULL]", doubles as %f */
  GP_TP_FORMAT_TABLE = 1, /* aligned columns for a terminal */
  GP_TP_FORMAT_JSON = 2,  /* an array of objects, one per row */
} gp_tp_format;

/*
 * Opens and imports the trace at path. path and opts (NULL: defaults) are
 * borrowed for the call; err (NULL: not wanted) is filled on failure.
 * On success *out is a new handle (free with gp_tp_close). On failure
 * returns -errno (cannot read the file: GP_ENOENT, -EISDIR, ...),
 * GP_ECORRUPT (malformed trace: err->offset names the byte), GP_ERANGE
 * (a limit of the importer), GP_ENOMEM, GP_EEXIST (db_path is a file that
 * is not a gpuperf trace database: it is left alone) or GP_ESQL (another
 * database file problem); *out is untouched and nothing is left behind.
 */
GP_EXPORT int gp_tp_open(const char *path, const gp_tp_options *opts,
                         gp_tp **out, gp_tp_error *err);

/*
 * The same for a trace in memory: data (size bytes), name (used in
 * messages; NULL: "trace") and opts are borrowed for the call only;
 * opts->db_path is ignored.
 */
GP_EXPORT int gp_tp_open_buffer(const void *data, size_t size, const char *name,
                                const gp_tp_options *opts, gp_tp **out,
                                gp_tp_error *err);

/* Closes tp, freeing everything it owns (NULL is accepted). Its rows
 * must be destroyed first. */
GP_EXPORT void gp_tp_close(gp_tp *tp);

/*
 * What went wrong but was mended while opening tp, as one line (owned by
 * tp, valid until gp_tp_close), or NULL: a damaged --db file rebuilt
 * from the trace. Tools print it as a warning.
 */
GP_EXPORT const char *gp_tp_warning(const gp_tp *tp);

/* What opening tp cost (copied into *info). */
GP_EXPORT void gp_tp_get_info(const gp_tp *tp, gp_tp_info *info);

/*
 * Runs sql: every statement but the last is executed and its rows
 * dropped; the rows of the last are returned in *out, owned by the caller
 * (destroy with gp_tp_rows_destroy, before gp_tp_close). Several result
 * sets may be open at once. GP_ESQL (or GP_EPARSE) with a message naming
 * the line on error; GP_ECORRUPT (here or from gp_tp_rows_next) when the
 * tables come from a --db file that turns out damaged: the message names
 * it, and opening the trace with GP_TP_REBUILD_DB mends it. sql is
 * borrowed for the call.
 */
GP_EXPORT int gp_tp_query(gp_tp *tp, const char *sql, gp_tp_rows **out,
                          gp_tp_error *err);

/* Steps to the next row: 1 if there is one, 0 at the end, or a negative
 * code (GP_ESQL with err filled). */
GP_EXPORT int gp_tp_rows_next(gp_tp_rows *rows, gp_tp_error *err);

/* Column count and names (names live as long as rows). */
GP_EXPORT int gp_tp_rows_columns(const gp_tp_rows *rows);
GP_EXPORT const char *gp_tp_rows_name(const gp_tp_rows *rows, int col);

/* Typed values of the current row. Text is NUL-terminated and valid
 * until the next gp_tp_rows_next or destroy; NULL for a NULL value. */
GP_EXPORT gp_tp_type gp_tp_rows_type(const gp_tp_rows *rows, int col);
GP_EXPORT int64_t gp_tp_rows_int(const gp_tp_rows *rows, int col);
GP_EXPORT double gp_tp_rows_real(const gp_tp_rows *rows, int col);
GP_EXPORT const char *gp_tp_rows_text(const gp_tp_rows *rows, int col);
GP_EXPORT const void *gp_tp_rows_blob(const gp_tp_rows *rows, int col,
                                      size_t *size);

/* Frees rows (NULL is accepted). */
GP_EXPORT void gp_tp_rows_destroy(gp_tp_rows *rows);

/*
 * Runs sql (as gp_tp_query) and writes every row of the last statement
 * to out (borrowed; not closed) in the given format. *nrows (may be NULL)
 * gets the row count.
 */
GP_EXPORT int gp_tp_write(gp_tp *tp, const char *sql, gp_tp_format format,
                          FILE *out, uint64_t *nrows, gp_tp_error *err);

/* Flags of gp_tp_write_ex(). */
#define GP_TP_WRITE_ESCAPE                                                     \
  1u /* table and CSV: control characters (C0,                                 \
        DEL, C1) and invalid UTF-8 shown escaped                               \
        (\n, \x1b, \u{9b}): for a terminal */

/* What gp_tp_write_ex() wrote. */
typedef struct gp_tp_write_stats {
  uint64_t rows;
  uint64_t invalid_utf8; /* bytes that were not UTF-8, shown as U+FFFD
                            (JSON) or \xNN (GP_TP_WRITE_ESCAPE) */
} gp_tp_write_stats;

/*
 * gp_tp_write with flags (GP_TP_WRITE_*) and what was written in *stats
 * (may be NULL). JSON is always valid UTF-8, whatever the flags: text
 * that is not becomes U+FFFD, byte by byte, and is counted.
 */
GP_EXPORT int gp_tp_write_ex(gp_tp *tp, const char *sql, gp_tp_format format,
                             uint32_t flags, FILE *out,
                             gp_tp_write_stats *stats, gp_tp_error *err);

/*
 * The rules gp_tp_write_ex() writes text and numbers by, for tools that
 * print trace strings or values themselves (gpuperf's report, export and
 * batch query use them), so that every output follows one rule:
 *
 * gp_tp_put_escaped() writes s (NULL: "") as GP_TP_WRITE_ESCAPE shows
 * text: control characters (C0, DEL, C1) as \n, \t, \r, \xNN or
 * \u{NN}, bytes that are not UTF-8 as \xNN, the rest as it is; no byte
 * of the output is a control character. Returns how many bytes were not
 * UTF-8.
 *
 * gp_tp_put_json_string() writes s (NULL: "") as a JSON string, quotes
 * included: control characters (C0, DEL, C1) escaped as \n, \t or
 * \uNNNN, every byte that does not start a valid UTF-8 sequence as
 * \ufffd. Returns how many bytes were replaced.
 *
 * gp_tp_put_json_number() writes v as a JSON number (%.17g, exact), or
 * null when v is not finite (NaN, +Infinity, -Infinity): JSON has no
 * spelling for them and every parser reads null.
 *
 * None of them takes ownership of out or s.
 */
GP_EXPORT uint64_t gp_tp_put_escaped(FILE *out, const char *s);
GP_EXPORT uint64_t gp_tp_put_json_string(FILE *out, const char *s);
GP_EXPORT void gp_tp_put_json_number(FILE *out, double v);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_TP_H */
