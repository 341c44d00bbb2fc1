/*
 * report/reportInt.h - what the files of the report layer share: the
 * structs behind gp_report and gp_report_table, and the helpers that
 * grow tables and run the trace processor's SQL.
 *
 * The report layer sits above the trace processor and reads it through
 * its public API only (gpuperf/tp.h); report.c holds the tables and the
 * views, sections.c the tables of a report, diff.c the diff of two.
 *
 * Allocation failures inside a row callback cannot be returned through
 * the trace processor's row loop, so they are remembered in the report
 * (oom) and returned as GP_ENOMEM when the table is done.
 */
#ifndef GPUPERF_REPORT_INT_H
#define GPUPERF_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/report.h"
#include "gpuperf/tp.h"

#define GP__REPORT_MAX_COLS 10

typedef struct gp__rcol {
  const char *id;   /* CSV/JSON name, e.g. "total_ns" */
  const char *head; /* text heading, e.g. "total" */
  gp_report_kind kind;
} gp__rcol;

/* A cell's text is owned by the table (the public struct says const). */
typedef gp_report_cell gp__rcell;

struct gp_report_table {
  const char *id; /* static strings: the layer's own */
  const char *title;
  const char *note; /* or NULL */
  int ncols;
  gp__rcol cols[GP__REPORT_MAX_COLS];
  int unit_col;     /* the column naming GP_REPORT_VALUE's unit, or -1 */
  gp__rcell *cells; /* nrows * ncols */
  size_t nrows, cap;
  size_t cut; /* rows left out by the filter's top */
  bool *oom;  /* the report's flag */
};

struct gp_report {
  char *name;
  uint64_t trace_bytes;
  int64_t start, end;           /* the window actually reported (ns) */
  int64_t work_start, work_end; /* first GPU work's start, last one's end
                                   in the window; both 0 if none */
  gp_report_table *tabs;
  size_t ntabs;
  bool oom; /* an allocation failed while building */
};

/* Adds an empty table with ncols columns (copied from cols) to r and
 * returns it (valid until the next table is added), or NULL with r->oom
 * set. id, title and note must be static. */
gp_report_table *gp__report_add_table(gp_report *r, const char *id,
                                      const char *title, const char *note,
                                      int ncols, const gp__rcol *cols);

/* Adds a row to t; returns its ncols cells (NaN, NULL), or NULL with the
 * report's oom set. */
gp__rcell *gp__report_row(gp_report_table *t);

/* Sets cell c of t to a copy of s (NULL: empty); on failure the cell
 * keeps its text and the report's oom is set. */
void gp__report_text(gp_report_table *t, gp__rcell *c, const char *s);

/* Compares two names as people order them: runs of digits by their
 * value ("step 2" before "step 10"), the rest byte by byte; names equal
 * so ("a01", "a1") by strcmp. A total order, like strcmp. */
int gp__report_name_cmp(const char *a, const char *b);

/* Runs sql on tp and calls row() (may be NULL) for each row. Returns 0,
 * or the trace processor's error with err filled. */
int gp__report_each_row(gp_tp *tp, const char *sql,
                        void (*row)(gp_tp_rows *rows, void *user), void *user,
                        gp_tp_error *err);

/* Fills err (may be NULL) with code and a printf message; returns code. */
int gp__report_fail(gp_tp_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* a - b and a + b, saturated to the int64 range: every sum or
 * difference of times read from a trace goes through these. */
int64_t gp__report_sub_sat(int64_t a, int64_t b);
int64_t gp__report_add_sat(int64_t a, int64_t b);

/* Builds the tables of r from the views gp_report_views made on tp
 * (sections.c). Returns 0 or an error with err filled. */
int gp__report_sections(gp_tp *tp, gp_report *r, const gp_report_filter *f,
                        gp_tp_error *err);

#endif /* GPUPERF_REPORT_INT_H */
