/*
 * tputil.h - helpers for the trace-processor tests: building small traces
 * with the protobuf writer, opening them, running a query into a CSV
 * string, comparing CSV as Perfetto's diff tests do, and running the CLI.
 */
#ifndef GPUPERF_TESTS_TPUTIL_H
#define GPUPERF_TESTS_TPUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/tp.h"
#include "perfetto/pb.h"

/* A trace being built: packets appended to w. */
typedef struct tg {
  gp__pb_writer w;
} tg;

void tg_init(tg *t);
void tg_fini(tg *t);

/* Begins a TracePacket; ts 0 = no timestamp, seq 0 = no sequence id,
 * flags 0 = no sequence_flags. End it with tg_end(). */
void tg_packet(tg *t, uint64_t ts, uint32_t seq, uint32_t flags);
void tg_end(tg *t);

/* The bytes so far (malloc'ed; caller frees). */
uint8_t *tg_bytes(tg *t, size_t *size);

/* Writes the bytes to path; asserts on failure. */
void tg_write(tg *t, const char *path);

/* Opens a trace held in memory; asserts success. */
gp_tp *tp_open_bytes(const uint8_t *data, size_t size);

/* Opens the bytes of t; asserts success. */
gp_tp *tp_open_tg(tg *t);

/* A trace of one render stage [0, 1000): trace_end() is 1000 (SQL tests
 * over their own VALUES). */
gp_tp *tp_small_trace(void);

/* Runs sql and returns its CSV (malloc'ed); asserts success. */
char *tp_csv(gp_tp *tp, const char *sql);

/* Runs sql, expecting an error; returns its code and copies its message. */
int tp_fail(gp_tp *tp, const char *sql, char *msg, size_t size);

/*
 * Compares CSV as Perfetto's runner does: leading blank lines dropped,
 * each line stripped of whitespace. On mismatch prints both and fails.
 */
void tp_assert_csv(const char *actual, const char *expected, const char *what);

/* Whether two CSV texts are equal as tp_assert_csv compares them. */
bool tp_csv_equal(const char *a, const char *b);

/* Runs sql on tp and asserts its CSV. */
void tp_expect(gp_tp *tp, const char *sql, const char *expected);

/* Perfetto's CSV for sql on trace (malloc'ed): its trace_processor_shell
 * at shell, run as `shell -q FILE trace`; fails the test if it fails. */
char *tp_perfetto_csv(const char *shell, const char *trace, const char *sql);

/* fn(arg, path) for each of Perfetto's GPU test traces in
 * $GPUPERF_SHARED/conformance (none where they are not at hand). */
void tp_each_conformance_trace(void (*fn)(const char *arg, const char *path),
                               const char *arg);

/* A single integer from sql. */
int64_t tp_int(gp_tp *tp, const char *sql);

/* Runs the CLI ($GPUPERF_CLI) with args (NULL-terminated), capturing
 * stdout and stderr into malloc'ed strings (may be NULL). Returns the exit
 * status, or -1 if it did not exit normally. Skips the test if the CLI is
 * not known. */
int tp_cli(char **out, char **err, const char *arg0, ...);

/* Reads a whole file (malloc'ed, NUL-terminated), NULL if absent. */
char *tp_read_file(const char *path, size_t *size);

/* The line of text holding needle, copied into buf (size bytes); NULL if
 * there is none. */
const char *tp_line_of(const char *text, const char *needle, char *buf,
                       size_t size);

/* The shared reference directory ($GPUPERF_SHARED) or NULL. */
const char *tp_shared(void);

/* The tables compared with Perfetto's, each by a query over the columns
 * Perfetto fills deterministically (test_parity_tables.c). */
typedef struct tp_parity_query {
  const char *table;
  const char *sql;
} tp_parity_query;

extern const tp_parity_query tp_parity_queries[];
extern const size_t tp_parity_nqueries;

/* Every tp_parity_queries row of tp (opened from trace) equals what
 * Perfetto's trace_processor_shell (shell) gives on trace. */
void tp_parity_compare(const char *shell, gp_tp *tp, const char *trace);

#endif /* GPUPERF_TESTS_TPUTIL_H */
