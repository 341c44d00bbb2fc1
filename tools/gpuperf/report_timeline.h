/*
 * report_timeline.h - the HTML report's timeline (report_timeline.c
 * writes its data, report_timeline_js.c holds the page's renderer).
 *
 * The slices of the report's window are embedded once, as a compact JSON
 * object in a <script> block; a small hand-written script (no framework,
 * nothing fetched) lays out only what is visible at the current zoom as
 * SVG, so that zooming in separates slices that were merged at a wider
 * view. See docs/report.md, "The HTML report".
 */
#ifndef GPUPERF_CLI_REPORT_TIMELINE_H
#define GPUPERF_CLI_REPORT_TIMELINE_H

#include <stdio.h>

#include "gpuperf/report.h"
#include "gpuperf/tp.h"

/*
 * Writes the timeline section of r's page to f: its heading, controls,
 * the <svg> the script draws into, the data and the script. tp must hold
 * r's views (gp_report_views). Returns 0, CLI_BAD_INPUT after printing
 * the failed query's message, or -ENOMEM.
 */
int report_timeline_html(const gp_report *r, gp_tp *tp, FILE *f);

/* The renderer (JavaScript) and its style sheet (CSS), without tags. */
extern const char report_timeline_js[];
extern const char report_timeline_css[];

#endif /* GPUPERF_CLI_REPORT_TIMELINE_H */
