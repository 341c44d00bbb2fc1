/*
 * gpuperf/report.h - the tables of `gpuperf report` and `gpuperf diff`,
 * computed from a trace opened with the trace processor (gpuperf/tp.h).
 *
 * A report is a list of tables (GPUs, queues, streams, kernels, copies,
 * API calls, user ranges, counters, gpuperf's overhead, losses), each
 * with typed columns and rows of cells holding a number or a string.
 * The numbers are raw: durations in ns, bytes, percent, bytes per
 * second; a column's kind says which, and how a tool should show it.
 * docs/report.md defines every table and the words it uses ("busy",
 * "kernel", the window).
 *
 *   gp_tp *tp;                       (opened with gp_tp_open)
 *   gp_report *r;
 *   if (gp_report_build(tp, "demo.pftrace", NULL, &r, &err) == 0) {
 *     const gp_report_table *t = gp_report_table_find(r, "kernels");
 *     for (size_t i = 0; i < gp_report_table_rows(t); i++) {
 *       const gp_report_cell *row = gp_report_table_row(t, i);
 *       printf("%s %.0f ns\n", row[0].text, row[2].value);
 *     }
 *   }
 *   gp_report_destroy(r);
 *
 * A diff (gp_report_diff) is a report too: one table per compared
 * section, the values of A and B, the change and a significance hint.
 *
 * A report owns its tables and strings; it does not refer to the
 * trace processor it was built from, which may be closed at once.
 */
#ifndef GPUPERF_REPORT_H
#define GPUPERF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"
#include "gpuperf/tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A built report, or a diff of two. */
typedef struct gp_report gp_report;

/* One of its tables (owned by the report). */
typedef struct gp_report_table gp_report_table;

/* What a column holds; decides how a tool shows it. */
typedef enum gp_report_kind {
  GP_REPORT_TEXT = 0,  /* a string (the cell's text) */
  GP_REPORT_INT = 1,   /* a count */
  GP_REPORT_NS = 2,    /* a duration or a time in ns */
  GP_REPORT_BYTES = 3, /* a byte count */
  GP_REPORT_PCT = 4,   /* a share or a change, in percent */
  GP_REPORT_BW = 5,    /* bytes per second */
  GP_REPORT_VALUE = 6, /* a counter value, in the unit that the table's
                          unit column names (gp_report_table_unit_column) */
} gp_report_kind;

/* One cell: text for a GP_REPORT_TEXT column (never NULL), else value;
 * a missing number is NaN (and text NULL). */
typedef struct gp_report_cell {
  double value;
  const char *text;
} gp_report_cell;

/* What a report includes. gp_report_filter_init() gives the defaults. */
typedef struct gp_report_filter {
  uint32_t size; /* sizeof(gp_report_filter): lets the struct grow */
  uint32_t top;  /* rows per ranking (kernels, API calls, ranges); 0: all.
                    Default 10, as `gpuperf report` */
  int64_t from;  /* window start, trace ns; INT64_MIN: the trace's start */
  int64_t to;    /* window end, trace ns; INT64_MAX: the trace's end */
  int64_t gpu;   /* only this GPU number, or -1 (default): every GPU */
  const char *process; /* only this process, a pid or a name (a path's
                          last part matches too), or NULL (default): all.
                          Borrowed for the call */
} gp_report_filter;

/* Fills *f with the defaults: the whole trace, every GPU and process,
 * the top 10 rows of each ranking. */
GP_EXPORT void gp_report_filter_init(gp_report_filter *f);

/*
 * Builds every table of the report of tp (borrowed for the call) for
 * filter f (NULL: the defaults); name (copied; NULL: "trace") is what
 * the report calls the trace. On success *out is a new report (free
 * with gp_report_destroy). On failure returns GP_EINVAL (a bad filter:
 * wrong size, gpu < -1, a process name over 1000 bytes), GP_ERANGE (a
 * filter that selects nothing: a window that ends where or before it
 * begins, one wholly outside the trace, a GPU the trace does not have;
 * err names the window and the trace's span, or the GPUs there are),
 * GP_ESQL or GP_ECORRUPT (from the trace processor) or GP_ENOMEM, with
 * err (may be NULL) filled; *out is untouched.
 *
 * The views of gp_report_views() are created (or replaced) on tp.
 */
GP_EXPORT int gp_report_build(gp_tp *tp, const char *name,
                              const gp_report_filter *f, gp_report **out,
                              gp_tp_error *err);

/*
 * Creates (or replaces) the temporary views the report's tables are
 * computed from, narrowed to filter f (NULL: the defaults) on tp:
 *
 *   rp_work     GPU work: ts, dur, ugpu, queue, name (the short kernel
 *               name), raw_name, is_kernel, is_copy, bytes, upid
 *   rp_host     host slices: kind 'api', 'range' or 'overhead'
 *   rp_stream   GPU work as mirrored on the logical stream tracks
 *   rp_counter  counter values with their track's name, unit and gpu
 *
 * *start and *end (may be NULL) get the window in trace ns. Returns 0,
 * or an error as gp_report_build.
 */
GP_EXPORT int gp_report_views(gp_tp *tp, const gp_report_filter *f,
                              int64_t *start, int64_t *end, gp_tp_error *err);

/*
 * Resolves a window bound as `gpuperf report --from/--to` takes it: a
 * time after the trace start ("1.5ms", "200us", "3s", "120ns", or a
 * bare number of ns), or the name of a slice (a user range), whose first
 * occurrence's start (end: its end) is taken. spec is borrowed. Returns
 * 0 with *ns in trace ns; GP_ENOENT if spec is neither (err says so);
 * GP_ESQL from the trace processor.
 */
GP_EXPORT int gp_report_time(gp_tp *tp, const char *spec, bool end, int64_t *ns,
                             gp_tp_error *err);

/* What a diff calls a change: below both minimums nothing is
 * "significant". gp_report_diff_options_init() gives the defaults. */
typedef struct gp_report_diff_options {
  uint32_t size;      /* sizeof(gp_report_diff_options): lets it grow */
  uint32_t reserved0; /* must be 0 */
  double min_pct;     /* smallest change that counts, in percent of A
                         (default 1) */
  double min_ns;      /* smallest change of a time that counts, in ns
                         (default 50) */
} gp_report_diff_options;

/* Fills *o with the defaults: 1% and 50 ns. */
GP_EXPORT void gp_report_diff_options_init(gp_report_diff_options *o);

/*
 * Compares two reports (borrowed; build both with top 0 for every row)
 * into a new report *out (free with gp_report_destroy) with the tables
 * kernels, copies, queues and counters. Rows are matched by key (kernel
 * name, copy kind, GPU and queue, counter and GPU); each metric is one
 * row: name, metric, unit, a, b, change_pct (NaN where a is 0 or a row
 * is missing) and hint. For a kernel's mean the hint weighs the change
 * against the spread, |mean_b - mean_a| / sqrt(sd_a^2/n_a + sd_b^2/n_b):
 * "significant" at 3 or more (or with no spread at all), "maybe" from 1,
 * "noise" under 1, "same" for no change; a key in one report only is
 * "new in B" or "gone in B". The diff is named "A vs B" after the two
 * reports. Returns 0 or GP_ENOMEM (*out untouched), GP_EINVAL for a NULL
 * report. The same as gp_report_diff_ex() with the default options.
 */
GP_EXPORT int gp_report_diff(const gp_report *a, const gp_report *b,
                             gp_report **out);

/*
 * gp_report_diff() with options o (NULL: the defaults; GP_EINVAL for a
 * wrong size, a reserved field set, a negative or NaN minimum). Its
 * tables are run (the window's length, "wall", and the span from the
 * first GPU work's start to the last one's end), kernels, copies, queues
 * and counters. Each row's hint:
 *   "same"         no change;
 *   "small"        a change under o->min_pct percent of A, or for a time
 *                  under o->min_ns: never significant, however steady;
 *   "significant"  beyond the minimums and, where the spread of the
 *                  durations is known (a kernel's mean and total), 3 or
 *                  more standard errors (or no spread at all);
 *   "maybe", "noise"  beyond the minimums, 1 to 3 and under 1 standard
 *                  errors;
 *   "changed"      beyond the minimums where no spread is known (counts,
 *                  bytes, copies, busy, counters, run);
 *   "new in B", "gone in B"  a key in one report only.
 * Standard errors: a mean's sqrt(sd_a^2/n_a + sd_b^2/n_b), a total's
 * sqrt(n_a sd_a^2 + n_b sd_b^2).
 */
GP_EXPORT int gp_report_diff_ex(const gp_report *a, const gp_report *b,
                                const gp_report_diff_options *o,
                                gp_report **out);

/* The change of one metric between two reports (gp_report_metric_change). */
typedef struct gp_report_change {
  double a, b;      /* the metric in A and in B */
  double pct;       /* the change in percent: as gp_report_change_pct, but
                       +Infinity from 0 to more than 0 */
  double z;         /* |b - a| over its standard error; +Infinity with no
                       spread; NaN where the spread is not known */
  const char *hint; /* static: as the diff's hints ("significant", ...) */
  bool significant; /* hint is "significant", "changed", "new in B" or
                       "gone in B" */
} gp_report_change;

/*
 * The change of metric (as gp_report_metric: "total", "copies", "busy",
 * "kernel:NAME", "wall") from report a to b (borrowed), judged with
 * options o (NULL: the defaults) as the diff's hints are; the spread of
 * "total" is that of every kernel, of "kernel:NAME" that kernel's.
 * Returns 0 with *out filled, GP_ENOENT for a kernel that is in neither
 * report, GP_EINVAL for another name or bad options.
 */
GP_EXPORT int gp_report_metric_change(const gp_report *a, const gp_report *b,
                                      const char *metric,
                                      const gp_report_diff_options *o,
                                      gp_report_change *out);

/*
 * A total of a report, as `gpuperf diff --fail-if` compares them:
 * "total" (all kernel time), "copies" (all copy and fill time), "busy"
 * (all GPUs' busy time), "kernel:NAME" (that kernel's total time) or
 * "wall" (the window's length), in ns; NaN for another name. Totals over
 * the rows the report kept.
 */
GP_EXPORT double gp_report_metric(const gp_report *r, const char *metric);

/* The change from a to b in percent: NaN if either is NaN, or a is 0 and
 * b is not; 0 if both are 0. */
GP_EXPORT double gp_report_change_pct(double a, double b);

/* Frees r and its tables (NULL is accepted). */
GP_EXPORT void gp_report_destroy(gp_report *r);

/* The name the report was built with (owned by r). */
GP_EXPORT const char *gp_report_name(const gp_report *r);

/* The size of the trace in bytes (0 for a diff). */
GP_EXPORT uint64_t gp_report_trace_bytes(const gp_report *r);

/* The window reported, in trace ns, into *start and *end (may be NULL);
 * both 0 for a diff. */
GP_EXPORT void gp_report_window(const gp_report *r, int64_t *start,
                                int64_t *end);

/* The number of tables, and table i (NULL past the end), in the order
 * `gpuperf report` prints them. */
GP_EXPORT size_t gp_report_table_count(const gp_report *r);
GP_EXPORT const gp_report_table *gp_report_table_at(const gp_report *r,
                                                    size_t i);

/* The table with this id ("kernels", "copies", ...), or NULL. */
GP_EXPORT const gp_report_table *gp_report_table_find(const gp_report *r,
                                                      const char *id);

/* A table's id ("kernels"), title ("Kernels by total time") and note (a
 * line saying what the rows are, or NULL). Owned by the report. */
GP_EXPORT const char *gp_report_table_id(const gp_report_table *t);
GP_EXPORT const char *gp_report_table_title(const gp_report_table *t);
GP_EXPORT const char *gp_report_table_note(const gp_report_table *t);

/* The column count; column c's id (the CSV and JSON name, "total_ns"),
 * heading ("total") and kind; NULL (GP_REPORT_TEXT) past the end. */
GP_EXPORT int gp_report_table_columns(const gp_report_table *t);
GP_EXPORT const char *gp_report_column_id(const gp_report_table *t, int c);
GP_EXPORT const char *gp_report_column_head(const gp_report_table *t, int c);
GP_EXPORT gp_report_kind gp_report_column_kind(const gp_report_table *t, int c);

/* The column whose text names the unit of the GP_REPORT_VALUE columns
 * of the same row, or -1. */
GP_EXPORT int gp_report_table_unit_column(const gp_report_table *t);

/* The number of rows a ranking (kernels, API calls, ranges) left out
 * after the filter's top N: 0 when every row is there. */
GP_EXPORT size_t gp_report_table_cut(const gp_report_table *t);

/* The row count, and row i: gp_report_table_columns(t) cells, owned by
 * the report (NULL past the end). Rankings are ordered by total time,
 * largest first, ties by name with numbers by value ("training step 2"
 * before "training step 10"). */
GP_EXPORT size_t gp_report_table_rows(const gp_report_table *t);
GP_EXPORT const gp_report_cell *gp_report_table_row(const gp_report_table *t,
                                                    size_t i);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_REPORT_H */
