/*
 * record_util.h - what the `gpuperf record` safety tests share
 * (test_record_safety.c, test_record_salvage.c).
 */
#ifndef GPUPERF_TESTS_RECORD_UTIL_H
#define GPUPERF_TESTS_RECORD_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "gpuperf/tp.h"
#include "harness.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static inline const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

/* The first column of the first row of sql on the trace at path. */
static inline int64_t q_trace(const char *path, const char *sql) {
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(path, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, e.message);
  gp_tp_rows *rows = NULL;
  if (gp_tp_query(tp, sql, &rows, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, e.message);
  int64_t v = -1;
  if (gp_tp_rows_next(rows, &e) == 1)
    v = gp_tp_rows_int(rows, 0);
  gp_tp_rows_destroy(rows);
  gp_tp_close(tp);
  return v;
}

/* The GPU work of a trace: its GPU slices but those of the GPU log (the
 * default config records gpu.log, where the sample's failing calls go). */
#define GPU_WORK_SQL                                                           \
  "SELECT count(*) FROM gpu_slice WHERE track_id NOT IN (SELECT id FROM "      \
  "track WHERE name = 'GPU Log')"

#define LOST_SQL                                                               \
  "SELECT coalesce(sum(value), -1) FROM counter WHERE track_id IN (SELECT "    \
  "id FROM counter_track WHERE name = 'gpuperf lost at process death')"

/* In a sanitizer build (GP_TEST_SANITIZED), the sanitizer's own SIGSEGV
 * handler (which exits with status 1 after its report) takes the fault,
 * not ours, and record preloads nothing (an instrumented library needs
 * its runtime first). */
#define SANITIZED GP_TEST_SANITIZED

#endif
