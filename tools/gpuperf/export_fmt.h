/*
 * export_fmt.h - the file formats of `gpuperf export` (export_fmt.c):
 * Chrome's trace-event JSON and CSV tables, written from a trace opened
 * with the trace processor. `--to clickhouse://` is export_clickhouse.c.
 */
#ifndef GPUPERF_CLI_EXPORT_FMT_H
#define GPUPERF_CLI_EXPORT_FMT_H

#include <stdbool.h>
#include <stdio.h>

#include "gpuperf/tp.h"

/*
 * Writes tp (whose report views gp_report_views made) to f as Chrome
 * trace-event JSON: every slice, with its args, flows as "s"/"f" events,
 * process and thread names, counters. Returns 0 or an exit status after
 * printing one line on stderr. *lost_flows (may be NULL) gets the flows
 * of the trace that could not be written (an end that is no slice of
 * the JSON).
 */
int export_chrome_json(gp_tp *tp, FILE *f, long long *lost_flows);

/*
 * Writes table (work, host, counters, flows, or a table or view of the
 * trace processor) of tp to f as CSV with a header line; escape: show
 * control characters escaped (f is a terminal). Returns 0 or an exit
 * status after printing one line on stderr (CLI_USAGE for an unknown
 * table).
 */
int export_csv(gp_tp *tp, const char *table, FILE *f, bool escape);

#endif /* GPUPERF_CLI_EXPORT_FMT_H */
