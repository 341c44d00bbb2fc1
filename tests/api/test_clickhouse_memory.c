/*
 * test_clickhouse_memory.c - the ClickHouse export's resident memory does
 * not grow with the trace (docs/scale.md, "Memory"). Two demo traces, of
 * 200 and 2000 steps on 8 GPUs (4.5 and 45 MB), are exported by a child
 * process each, and the kernel's count of the child's peak resident
 * memory (wait4's ru_maxrss) must stay under 64 MiB for both. The same
 * 45 MB trace exported with --in-memory must pass 64 MiB: the bound is
 * the spilled import's doing, not the trace being too small to matter.
 * The rows are the same either way: ClickHouse's counts equal ours after
 * each export. No timing is asserted. Skipped where the Debian packages
 * clickhouse-server/-client are absent.
 */
#include <sys/resource.h>

#include "clickhouse_util.h"

#define LIMIT_KB (64L * 1024)

/* Runs argv; returns its exit status and its peak resident KiB. */
static int run_rss(char *const argv[], long *maxrss_kb) {
  pid_t pid = ch_spawn(argv, NULL, NULL);
  int ws = 0;
  struct rusage ru;
  ASSERT_EQ(wait4(pid, &ws, 0, &ru), pid);
  *maxrss_kb = ru.ru_maxrss;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* ClickHouse's count of a table for trace `name` equals ours. */
static void same_count(gp_tp *tp, const char *table, const char *name) {
  char ours[64], q[256];
  snprintf(ours, sizeof(ours), "SELECT count(*) FROM %s", table);
  char *want = ch_ours(tp, ours);
  snprintf(q, sizeof(q), "SELECT count() FROM gpdb.%s WHERE trace = '%s'",
           table, name);
  ASSERT_EQ(ch_num(0, q), atoll(want));
  free(want);
}

TEST(clickhouse_export_memory_is_bounded) {
  if (GP_TEST_SANITIZED)
    SKIP("a sanitizer's shadow memory and quarantine are resident too (the "
         "ASan build's export of 4.5 MB peaked at 414 MiB): the bound is "
         "measured in the plain build");
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char small[1100], big[1100], url[256];
  snprintf(small, sizeof(small), "%s/small.pftrace", dir);
  snprintf(big, sizeof(big), "%s/big.pftrace", dir);
  char *d1[] = {(char *)cli, "demo", "--gpus", "8",   "--steps",
                "200",       "-q",   "-o",     small, NULL};
  char *d2[] = {(char *)cli, "demo", "--gpus", "8", "--steps",
                "2000",      "-q",   "-o",     big, NULL};
  ASSERT_EQ(ch_run(d1, NULL), 0);
  ASSERT_EQ(ch_run(d2, NULL), 0);
  ch_start_two();
  ch_url(url, sizeof(url));
  /* The spill files go to the test's folder, which is removed after. */
  setenv("TMPDIR", dir, 1);
  long rss_small, rss_big, rss_mem;
  char *e1[] = {(char *)cli, "export",       small,   "--to", url, "--cluster",
                "gp_test",   "--trace-name", "small", "-q",   NULL};
  char *e2[] = {(char *)cli, "export",       big,   "--to", url, "--cluster",
                "gp_test",   "--trace-name", "big", "-q",   NULL};
  ASSERT_EQ(run_rss(e1, &rss_small), 0);
  ASSERT_EQ(run_rss(e2, &rss_big), 0);
  printf("peak resident: %ld KiB (4.5 MB trace), %ld KiB (45 MB trace)\n",
         rss_small, rss_big);
  ASSERT_LT(rss_small, LIMIT_KB);
  ASSERT_LT(rss_big, LIMIT_KB);
  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open(big, NULL, &tp, &err));
  same_count(tp, "gpu_slice", "big");
  same_count(tp, "slice", "big");
  same_count(tp, "counter", "big");
  same_count(tp, "flow", "big");
  /* The control: in memory, the same trace needs more than the bound. */
  char *e3[] = {(char *)cli, "export",      big,       "--to",
                url,         "--cluster",   "gp_test", "--trace-name",
                "big",       "--in-memory", "-q",      NULL};
  ASSERT_EQ(run_rss(e3, &rss_mem), 0);
  printf("peak resident with --in-memory: %ld KiB\n", rss_mem);
  ASSERT_GT(rss_mem, LIMIT_KB);
  same_count(tp, "gpu_slice", "big");
  same_count(tp, "slice", "big");
  gp_tp_close(tp);
  ch_stop_all();
}
