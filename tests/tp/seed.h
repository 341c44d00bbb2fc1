/*
 * seed.h - the seed document's example query (top 5 kernels with
 * time-weighted Utilization) for tests on other traces than test_seed.c's
 * own: running it verbatim and checking its rows.
 */
#ifndef GPUPERF_TESTS_TP_SEED_H
#define GPUPERF_TESTS_TP_SEED_H

#include <stdint.h>

#include "gpuperf/tp.h"

typedef struct row {
  char kernel[128], gpu[128];
  int64_t dur;
  double avg;
} row;

/* Runs the seed query (the document's text when the shared folder is
 * there) on tp; stores up to 16 rows and returns how many. */
int tp_seed_run(gp_tp *tp, row *rows);

/* Checks each row's avg_utilization against a recomputation from the
 * Utilization counter rows, and that they are the 5 longest kernels. */
void tp_seed_check_rows(gp_tp *tp, const row *rows, int n);

#endif /* GPUPERF_TESTS_TP_SEED_H */
