/*
 * fuzz_report.c - libFuzzer target for the report layer (src/report):
 * what `gpuperf report` and `gpuperf diff` compute from a trace.
 *
 *   make fuzz                        builds build-fuzz/fuzz-report (clang)
 *   make fuzz-run FUZZ_TARGET=report runs it over tests/fuzz/corpus/importer
 *
 * Each input is imported as a trace (the importer's corpus is this
 * target's too); when it opens, a report of the whole trace is built, a
 * second one over a window whose bounds are the input's first 16 bytes
 * read as two int64 (so the extremes, INT64_MIN and INT64_MAX included,
 * are reached), the two are diffed, and every cell of the three is read.
 * Built with ASan and UBSan: an overflow of a time, an out-of-bounds
 * access or a leak is a finding (issue 35 D3).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpuperf/report.h"
#include "gpuperf/tp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile double sink;

static void read_all(const gp_report *r) {
  double s = 0;
  for (size_t i = 0; r && i < gp_report_table_count(r); i++) {
    const gp_report_table *t = gp_report_table_at(r, i);
    int nc = gp_report_table_columns(t);
    for (size_t j = 0; j < gp_report_table_rows(t); j++) {
      const gp_report_cell *row = gp_report_table_row(t, j);
      for (int c = 0; c < nc; c++)
        s += row[c].value + (row[c].text ? (double)strlen(row[c].text) : 0);
    }
  }
  sink = s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gp_tp_options opts = {.size = sizeof(opts),
                        .flags = (size & 1) ? GP_TP_ALLOW_TRUNCATED : 0,
                        .db_path = NULL};
  gp_tp *tp;
  if (gp_tp_open_buffer(data, size, "fuzz", &opts, &tp, NULL) != 0)
    return 0;
  gp_report *whole = NULL, *window = NULL, *diff = NULL;
  gp_report_build(tp, "fuzz", NULL, &whole, NULL);
  gp_report_filter f;
  gp_report_filter_init(&f);
  if (size >= 16) {
    memcpy(&f.from, data, sizeof(f.from));
    memcpy(&f.to, data + 8, sizeof(f.to));
  }
  f.top = (unsigned)(size % 4);
  f.gpu = size % 3 == 0 ? 0 : -1;
  gp_report_build(tp, "fuzz", &f, &window, NULL);
  int64_t t;
  gp_report_time(tp, "1.5ms", false, &t, NULL);
  gp_report_time(tp, "Kernel", true, &t, NULL);
  gp_report_change ch;
  if (whole && window &&
      gp_report_metric_change(whole, window, "kernel:Kernel", NULL, &ch) == 0)
    sink = ch.pct + ch.z;
  if (whole && window && gp_report_diff(whole, window, &diff) == 0) {
    sink = gp_report_metric(diff, "total") + gp_report_metric(whole, "busy") +
           gp_report_change_pct(gp_report_metric(whole, "copies"),
                                gp_report_metric(window, "copies"));
  }
  read_all(whole);
  read_all(window);
  read_all(diff);
  gp_report_destroy(diff);
  gp_report_destroy(window);
  gp_report_destroy(whole);
  gp_tp_close(tp);
  return 0;
}
