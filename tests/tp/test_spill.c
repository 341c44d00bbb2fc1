/*
 * test_spill.c - GP_TP_SPILL (src/tp/spill.c): a trace imported with its
 * arrays in temporary files, their resident pages dropped over and over,
 * must give the same rows, byte for byte, as the same trace imported in
 * memory. The spilled import runs with 64 KiB of resident pages allowed
 * (not the library's 32 MiB), so that the pages of every table, index
 * and sort are dropped and read back many times while they are made and
 * queried; the test checks that they were. GPU traces (render stages,
 * counters, flows, track events, merged machines) and system traces
 * (sched, compact sched, ftrace) take the different paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/tp.h"
#include "harness.h"
#include "tp/spill.h"

static const char *const tables[] = {
    "slice",        "counter",       "flow",      "track",
    "gpu_slice",    "gpu",           "machine",   "process",
    "thread",       "args",          "sched",     "thread_state",
    "ftrace_event", "counter_track", "gpu_track", "stats",
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

/* Every row of every table of the trace at path, as CSV (malloc'd). */
static char *dump(const char *path, uint32_t flags) {
  gp_tp_options o;
  memset(&o, 0, sizeof(o));
  o.size = sizeof(o);
  o.flags = flags;
  gp_tp *tp = NULL;
  gp_tp_error err;
  if (gp_tp_open(path, &o, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s", err.message);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ASSERT_NOT_NULL(f);
  for (size_t i = 0; i < NTABLES; i++) {
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT * FROM %s", tables[i]);
    fprintf(f, "== %s\n", tables[i]);
    if (gp_tp_write(tp, sql, GP_TP_FORMAT_CSV, f, NULL, &err) != 0)
      gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, err.message);
  }
  fclose(f);
  gp_tp_close(tp);
  return buf;
}

static void same_rows(const char *path) {
  char *plain = dump(path, 0);
  ASSERT(strlen(plain) > 1000);
  /* Nested in a spill of 64 KiB: the import's own begin keeps it. */
  ASSERT_EQ(gp__tp_spill_begin(NULL, 64u << 10), 0);
  unsigned long before = gp__tp_spill_drops();
  char *spilled = dump(path, GP_TP_SPILL);
  unsigned long drops = gp__tp_spill_drops() - before;
  gp__tp_spill_end();
  ASSERT(!gp__tp_spill_on());
  if (strcmp(plain, spilled) != 0) {
    size_t i = 0;
    while (plain[i] == spilled[i])
      i++;
    size_t from = i > 200 ? i - 200 : 0;
    gp_test_fail(__FILE__, __LINE__,
                 "%s: spilled rows differ at byte %zu:\n%.300s\n--- vs\n%.300s",
                 path, i, plain + from, spilled + from);
  }
  printf("%s: %zu bytes of rows, the same; pages dropped %lu times\n", path,
         strlen(plain), drops);
  ASSERT_GT(drops, 10);
  free(plain);
  free(spilled);
}

TEST(tp_spill_gives_the_same_rows) {
  same_rows("tests/data/systrace/sys_30s.pftrace");
  same_rows("tests/data/systrace/sys_3s_compact.pftrace");
  /* GPU work too (an OpenCL program's, through the producer). */
  same_rows("tests/data/systrace/sys_opencl_producer.pftrace");
  /* And the GPU traces of ../shared/perfetto-truth, where they are. */
  const char *shared = getenv("GPUPERF_SHARED");
  static const char *const truth[] = {"clpeak_kernel_latency.pftrace",
                                      "demo_3machines_merged.pftrace"};
  for (size_t i = 0; i < sizeof(truth) / sizeof(truth[0]); i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/perfetto-truth/traces/%s",
             shared ? shared : "../shared", truth[i]);
    if (access(path, R_OK) != 0) {
      printf("%s: absent (no ../shared here), not compared\n", path);
      continue;
    }
    same_rows(path);
  }
}
