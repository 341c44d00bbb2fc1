/*
 * report.h - how the CLI shows the tables of a report (gpuperf/report.h):
 * `gpuperf report`, `diff` and `export` share it, and so do the formats
 * (text, CSV, JSON: report_fmt.c; HTML: report_html.c).
 *
 * The tables are computed by the library's report layer (src/report);
 * each column has a kind (a duration in ns, a byte count, a share...)
 * and the formats decide how a kind is shown: "1.234 ms" in text, the
 * raw 1234000 in CSV and JSON.
 */
#ifndef GPUPERF_CLI_REPORT_H
#define GPUPERF_CLI_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuperf/report.h"
#include "gpuperf/tp.h"

/*
 * Prints "gpuperf: what: message" for a failed report call (rc, err)
 * and returns the exit status: CLI_USAGE for GP_EINVAL (a bad filter),
 * else CLI_BAD_INPUT.
 */
int report_error(const char *what, int rc, const gp_tp_error *err);

/* Runs sql on tp and calls row() for each row. Returns 0 or
 * CLI_BAD_INPUT after printing "gpuperf: what: message". */
int report_each_row(gp_tp *tp, const char *what, const char *sql,
                    void (*row)(gp_tp_rows *rows, void *user), void *user);

/* a - b, saturated to the int64 range. */
int64_t report_sub_sat(int64_t a, int64_t b);

/* The length of r's window in ns. */
double report_span(const gp_report *r);

/* Output formats of a built report. */
void report_print_text(const gp_report *r, FILE *f, bool tty);
/* escape: control characters in text shown escaped (for a terminal). */
void report_print_csv(const gp_report *r, FILE *f, bool escape);
void report_print_text_tables(const gp_report *r, FILE *f); /* no header */
/* The same, only the rows keep() accepts (NULL: all); the number of the
 * others is added to *hidden (may be NULL). */
void report_print_text_tables_keep(const gp_report *r, FILE *f,
                                   bool (*keep)(const gp_report_table *,
                                                const gp_report_cell *),
                                   size_t *hidden);
void report_print_json(const gp_report *r, FILE *f);
/* The HTML page (its timeline and plots query tp); returns 0 or -errno. */
int report_print_html(const gp_report *r, gp_tp *tp, FILE *f);

/*
 * Formats v of column kind k (unit for GP_REPORT_VALUE) as a human reads
 * it: "1.234 ms", "48.0 MiB", "23.9 GB/s", "12.5%", "1.23 M"; never in
 * scientific notation. Returns buf.
 */
const char *report_fmt(char *buf, size_t size, gp_report_kind k, double v,
                       const char *unit);

/*
 * Writes s to f with control characters (C0, DEL, C1) and bytes that
 * are not UTF-8 shown as '?', so that a name in a trace cannot move the
 * cursor or change colours.
 */
void report_put_clean(FILE *f, const char *s, int width, bool right);

/*
 * Writes s as a quoted CSV field (quotes doubled). With escape (stdout is
 * a terminal), control characters and bytes that are not UTF-8 are shown
 * escaped as gp_tp_put_escaped() does, as `query` shows text; without
 * it the bytes go as they are.
 */
void report_put_csv_str(FILE *f, const char *s, bool escape);

#endif /* GPUPERF_CLI_REPORT_H */
