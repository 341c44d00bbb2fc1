/*
 * report.h - the tables of `gpuperf report`, shared by the commands that
 * show them (report, diff, export) and by their output formats (text,
 * CSV, JSON, HTML).
 *
 * A report is a list of tables built from a trace with the trace
 * processor's SQL (report_build.c). Each table has typed columns (a
 * duration in ns, a byte count, a share...) and rows of cells holding a
 * number or a string; the formats decide how a type is shown (report_fmt.c:
 * "1.234 ms" in text, the raw 1234000 in CSV and JSON).
 *
 * "Busy" is defined once, here: the time during which at least one piece
 * of GPU work (a kernel, a copy or a fill) ran on a GPU, queue or stream,
 * overlapping work counted once (the union of the intervals), clipped to
 * the report's window, and shown as a share of that window.
 */
#ifndef GPUPERF_REPORT_H
#define GPUPERF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuperf/tp.h"

/* What a column holds; decides how it is shown. */
typedef enum rcol_kind {
  RC_TEXT,  /* a string */
  RC_INT,   /* a count */
  RC_NS,    /* a duration or time in ns */
  RC_BYTES, /* a byte count */
  RC_PCT,   /* a share, 0 to 100 */
  RC_BW,    /* bytes per second */
  RC_VALUE, /* a counter value, in the unit named by the table's unit_col */
} rcol_kind;

#define RT_MAX_COLS 10

typedef struct rcol {
  const char *id;   /* CSV/JSON name, e.g. "total_ns" */
  const char *head; /* text heading, e.g. "total" */
  rcol_kind kind;
} rcol;

/* One cell: s for text (owned), else v; missing numbers are NaN. */
typedef struct rcell {
  double v;
  char *s;
} rcell;

typedef struct rtable {
  const char *id;    /* "kernels", "copies", ... */
  const char *title; /* "Kernels", ... */
  const char *note;  /* one line saying what the rows are, or NULL */
  int ncols;
  rcol cols[RT_MAX_COLS];
  int unit_col; /* the column naming RC_VALUE's unit, or -1 */
  rcell *cells; /* nrows * ncols */
  size_t nrows, cap;
} rtable;

/* What to include: the window and the filters of the command line. */
typedef struct report_filter {
  int64_t from, to;    /* window in trace ns; INT64_MIN/INT64_MAX: all */
  const char *process; /* pid or name, or NULL */
  int64_t gpu;         /* gpu number, or -1 */
  unsigned top;        /* rows per ranking */
} report_filter;

/* A built report. */
typedef struct report {
  char *trace; /* the name shown */
  uint64_t trace_bytes;
  int64_t start, end; /* the window actually reported (ns) */
  rtable *tabs;
  size_t ntabs;
} report;

/*
 * Builds every section of the report from tp (borrowed) into *r (zeroed
 * by the call). Returns 0, or CLI_BAD_INPUT after printing one line.
 * Free with report_free() either way.
 */
int report_build(gp_tp *tp, const char *trace, const report_filter *f,
                 report *r);

/* Frees what r owns. */
void report_free(report *r);

/* The table with this id, or NULL. */
rtable *report_table(const report *r, const char *id);

/*
 * Creates the temporary views the sections read (rp_gpu, rp_work,
 * rp_host, rp_counter) for filter f on tp. Returns 0 or CLI_BAD_INPUT
 * after printing one line. Used by report_build and export.
 */
int report_views(gp_tp *tp, const report_filter *f, int64_t *start,
                 int64_t *end);

/* Runs sql on tp and calls row() for each row. Returns 0 or
 * CLI_BAD_INPUT after printing "gpuperf: what: message". */
int report_each_row(gp_tp *tp, const char *what, const char *sql,
                    void (*row)(gp_tp_rows *rows, void *user), void *user);

/* Adds a row to t; returns its first cell (ncols of them, NaN/NULL). */
rcell *rtable_row(rtable *t);

/* Sets a text cell (copied; NULL: empty). */
void rcell_text(rcell *c, const char *s);

/* Output formats of a built report. Each returns 0 or -errno. */
void report_print_text(const report *r, FILE *f, bool tty);
void report_print_csv(const report *r, FILE *f);
void report_print_text_tables(const report *r, FILE *f); /* no header */
void report_print_json(const report *r, FILE *f);
int report_print_html(const report *r, gp_tp *tp, FILE *f);

/*
 * Formats v of column kind k (unit for RC_VALUE) as a human reads it:
 * "1.234 ms", "48.0 MiB", "23.9 GB/s", "12.5%", "1.23 M"; never in
 * scientific notation. Returns buf.
 */
const char *report_fmt(char *buf, size_t size, rcol_kind k, double v,
                       const char *unit);

/*
 * Writes s to f with control characters (and, on a terminal, escape
 * sequences) shown as '?', so that a name in a trace cannot move the
 * cursor or change colours.
 */
void report_put_clean(FILE *f, const char *s, int width, bool right);

/*
 * Parses a time for --from/--to: "1.5ms", "200us", "3s", "120ns" or a
 * bare number of ns, relative to the trace start. Returns false if s is
 * not such a time.
 */
bool report_parse_time(const char *s, int64_t *ns);

/* a - b, saturated to the int64 range. */
int64_t report_sub_sat(int64_t a, int64_t b);

#endif /* GPUPERF_REPORT_H */
