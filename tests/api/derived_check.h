/*
 * derived_check.h - the check of derived Utilization windows against a
 * trace's GPU slices (test_derived.c), shared with the Vulkan tests.
 */
#ifndef GPUPERF_TEST_DERIVED_CHECK_H
#define GPUPERF_TEST_DERIVED_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/tp.h"

typedef struct win {
  int64_t ts;
  double value; /* as imported */
  double want;  /* from the slices (windows but the last) */
} win;

/*
 * The Utilization windows of gpu ugpu, each checked (the test fails
 * otherwise) against the union of that GPU's slices inside it, and all of
 * them together against all the GPU's busy time. Returns them (malloc'ed),
 * their number in *n.
 */
win *derived_check_windows(gp_tp *tp, int64_t ugpu, size_t *n);

#endif /* GPUPERF_TEST_DERIVED_CHECK_H */
