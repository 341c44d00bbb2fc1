/*
 * test_clickhouse_fleet.c - the ClickHouse export at fleet scale, on two
 * real servers (clickhouse_util.h): node traces spread over the shards,
 * the Distributed tables route as the export does, default trace names
 * never collide, and a re-export that fails (a server killed, or stopped
 * so that it never answers) leaves the previous copy as it was.
 */
#include <sys/stat.h>

#include "clickhouse_util.h"

static const char *const tables[] = {"gpu_slice", "counter", "track",
                                     "slice",     "flow",    "gpu",
                                     "machine",   "process"};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

/* Each table's row count for trace name, through the views (what readers
 * see), from server 0. */
static void view_counts(const char *name, long long out[NTABLES]) {
  char q[512];
  for (size_t i = 0; i < NTABLES; i++) {
    snprintf(q, sizeof(q), "SELECT count() FROM %s WHERE trace = '%s'",
             tables[i], name);
    out[i] = ch_num(0, q);
  }
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST(clickhouse_fleet_spreads_over_shards) {
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char base[1100], url[256], out[1100], path[1200];
  snprintf(base, sizeof(base), "%s/w.pftrace", dir);
  snprintf(out, sizeof(out), "%s/export.out", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "8",  "--gpus", "1",
                  "--steps",   "20",   "-o",         base, NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  ch_start_two();
  ch_url(url, sizeof(url));
  /* 8 single-node traces (each has machine 0), default names. */
  long long slices = 0;
  for (int k = 0; k < 8; k++) {
    snprintf(path, sizeof(path), "%s/w-node%d.pftrace", dir, k);
    char *exp[] = {(char *)cli, "export",    path,      "--to",
                   url,         "--cluster", "gp_test", NULL};
    ASSERT_EQ(ch_run(exp, out), 0);
    gp_tp *tp = NULL;
    gp_tp_error err;
    ASSERT_OK(gp_tp_open(path, NULL, &tp, &err));
    char *n = ch_ours(tp, "SELECT count(*) FROM gpu_slice");
    slices += atoll(n);
    free(n);
    gp_tp_close(tp);
  }
  ASSERT_EQ(ch_num(0, "SELECT count() FROM traces"), 8);
  ASSERT_EQ(ch_num(0, "SELECT count() FROM gpu_slice"), slices);
  long long s0 = ch_num(0, "SELECT count() FROM gpu_slice_local");
  long long s1 = ch_num(1, "SELECT count() FROM gpu_slice_local");
  ASSERT_EQ(s0 + s1, slices);
  fprintf(stderr, "shard balance: %lld + %lld GPU slices (%.1f%% on shard 0)\n",
          s0, s1, 100.0 * (double)s0 / (double)slices);
  ASSERT_GE(s0 * 100, slices * 35);
  ASSERT_LE(s0 * 100, slices * 65);

  /* Rows inserted through the Distributed table land where the export
   * put them: one marker row per (trace, machine), generation 1. */
  char *ins = ch_q2(0,
                    "INSERT INTO gpu_slice_all (trace, machine, gen, day) "
                    "SELECT DISTINCT trace, machine, toUInt64(1), today() "
                    "FROM gpu_slice",
                    "--insert_distributed_sync=1");
  ASSERT_NOT_NULL(ins);
  free(ins);
  for (int i = 0; i < 2; i++) {
    char *ours = ch_q(i, "SELECT DISTINCT trace, machine FROM "
                         "gpu_slice_local WHERE gen != 1 ORDER BY trace, "
                         "machine");
    char *routed = ch_q(i, "SELECT DISTINCT trace, machine FROM "
                           "gpu_slice_local WHERE gen = 1 ORDER BY trace, "
                           "machine");
    ASSERT(ours && routed && *ours);
    ASSERT_STR_EQ(routed, ours);
    free(ours);
    free(routed);
  }

  /* Two different files of one name keep both: the name is the file's
   * and its SHA-256's (checked with sha256sum); --trace-name wins. */
  char dirs[2][1100], runs[2][1300];
  for (int k = 0; k < 2; k++) {
    snprintf(dirs[k], sizeof(dirs[k]), "%s/%c", dir, 'a' + k);
    ASSERT_EQ(mkdir(dirs[k], 0755), 0);
    snprintf(runs[k], sizeof(runs[k]), "%.1100s/run.pftrace", dirs[k]);
    char *d[] = {(char *)cli, "demo",  "--steps", k ? "3" : "2",
                 "-o",        runs[k], NULL};
    ASSERT_EQ(ch_run(d, NULL), 0);
    char *exp[] = {(char *)cli, "export",    runs[k],   "--to",
                   url,         "--cluster", "gp_test", NULL};
    ASSERT_EQ(ch_run(exp, out), 0);
  }
  char want[512] = "", sums[1100];
  snprintf(sums, sizeof(sums), "%s/sums", dir);
  char *sha[] = {"/usr/bin/sha256sum", runs[0], runs[1], NULL};
  ASSERT_EQ(ch_run(sha, sums), 0);
  char *sv = ch_slurp(sums);
  char *line2 = strchr(sv, '\n');
  ASSERT_NOT_NULL(line2);
  char n0[128], n1[128];
  snprintf(n0, sizeof(n0), "run.pftrace@%.12s", sv);
  snprintf(n1, sizeof(n1), "run.pftrace@%.12s", line2 + 1);
  ASSERT(strcmp(n0, n1) != 0);
  snprintf(want, sizeof(want), "%s\n%s\n", strcmp(n0, n1) < 0 ? n0 : n1,
           strcmp(n0, n1) < 0 ? n1 : n0);
  free(sv);
  char *got = ch_q(0, "SELECT trace FROM traces WHERE trace LIKE "
                      "'run.pftrace@%' ORDER BY trace");
  ASSERT_NOT_NULL(got);
  ASSERT_STR_EQ(got, want);
  free(got);
  char *named[] = {(char *)cli, "export",  runs[0],        "--to", url,
                   "--cluster", "gp_test", "--trace-name", "mine", NULL};
  ASSERT_EQ(ch_run(named, out), 0);
  ASSERT_EQ(ch_num(0, "SELECT count() FROM traces WHERE trace = 'mine'"), 1);
  ch_stop_all();
}

/* Starts a re-export of trace "job" (cluster, small batches, timeout
 * secs), waits until its new rows reach server victim, and returns its
 * PID with the export still running. */
static pid_t export_until_midway(const char *cli, const char *trace, int victim,
                                 long long gen0, const char *timeout,
                                 const char *err) {
  char url[256], q[256];
  ch_url(url, sizeof(url));
  char *exp[] = {(char *)cli, "export",    (char *)trace,   "--to",
                 url,         "--cluster", "gp_test",       "--trace-name",
                 "job",       "--timeout", (char *)timeout, "--batch-rows",
                 "100",       NULL};
  pid_t pid = ch_spawn(exp, NULL, err);
  snprintf(q, sizeof(q),
           "SELECT count() FROM gpu_slice_local WHERE trace = 'job' AND gen "
           "!= %lld",
           gen0);
  for (int t = 0; t < 600; t++) {
    if (ch_num(victim, q) > 0)
      break;
    usleep(50000);
  }
  ASSERT_GT(ch_num(victim, q), 0);
  int ws;
  if (waitpid(pid, &ws, WNOHANG) == pid)
    ASSERT(!"the export ended before the server was stopped: a bigger trace "
            "is needed");
  return pid;
}

TEST(clickhouse_failed_reexport_keeps_the_old_copy) {
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char base[1100], nodes[4][1100], merged[1100], url[256], err[1100];
  snprintf(base, sizeof(base), "%s/run.pftrace", dir);
  for (int k = 0; k < 4; k++)
    snprintf(nodes[k], sizeof(nodes[k]), "%s/run-node%d.pftrace", dir, k);
  snprintf(merged, sizeof(merged), "%s/all.pftrace", dir);
  snprintf(err, sizeof(err), "%s/export.err", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "4",  "--gpus", "2",
                  "--steps",   "40",   "-o",         base, NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  char *merge[] = {(char *)cli, "merge", nodes[0], nodes[1], nodes[2],
                   nodes[3],    "-o",    merged,   NULL};
  ASSERT_EQ(ch_run(merge, NULL), 0);
  ch_start_two();
  ch_url(url, sizeof(url));
  char *exp[] = {(char *)cli, "export",  merged,         "--to", url,
                 "--cluster", "gp_test", "--trace-name", "job",  NULL};
  ASSERT_EQ(ch_run(exp, NULL), 0);
  long long before[NTABLES], after[NTABLES];
  view_counts("job", before);
  long long gen0 = ch_num(0, "SELECT gen FROM traces WHERE trace = 'job'");
  ASSERT_GT(before[0], 0);
  /* The victim: a server that holds some of the trace's rows. */
  int victim = ch_num(1, "SELECT count() FROM gpu_slice_local") > 0 ? 1 : 0;

  /* SIGKILL midway: the export fails, the old copy is whole. */
  pid_t pid = export_until_midway(cli, merged, victim, gen0, "300", err);
  ASSERT_EQ(kill(ch_pids[victim], SIGKILL), 0);
  ASSERT_EQ(waitpid(ch_pids[victim], NULL, 0), ch_pids[victim]);
  ch_pids[victim] = 0;
  double t0 = mono_s();
  ASSERT_EQ(ch_wait(pid), 2);
  fprintf(stderr, "killed server %d: the export failed %.2f s later\n", victim,
          mono_s() - t0);
  ch_start(victim);
  view_counts("job", after);
  for (size_t i = 0; i < NTABLES; i++)
    ASSERT_EQ(after[i], before[i]);
  ASSERT_EQ(ch_num(0, "SELECT gen FROM traces WHERE trace = 'job'"), gen0);
  /* The failed export's rows are there, unseen. */
  char q[256];
  snprintf(q, sizeof(q),
           "SELECT count() FROM gpu_slice_local WHERE trace = 'job' AND gen "
           "!= %lld",
           gen0);
  ASSERT_GT(ch_num(victim, q), 0);

  /* SIGSTOP midway: the export gives up within its timeout (3 s), the
   * old copy is whole. */
  pid = export_until_midway(cli, merged, victim, gen0, "3", err);
  ASSERT_EQ(kill(ch_pids[victim], SIGSTOP), 0);
  t0 = mono_s();
  ASSERT_EQ(ch_wait(pid), 2);
  double waited = mono_s() - t0;
  fprintf(stderr, "stopped server %d: the export failed %.2f s later\n", victim,
          waited);
  char *e = ch_slurp(err);
  ASSERT(strstr(e, "Timeout"));
  free(e);
  /* Not a timing assertion: a hang would be far beyond this. */
  ASSERT_LT(waited, 60.0);
  ASSERT_EQ(kill(ch_pids[victim], SIGCONT), 0);
  view_counts("job", after);
  for (size_t i = 0; i < NTABLES; i++)
    ASSERT_EQ(after[i], before[i]);
  ASSERT_EQ(ch_num(0, "SELECT gen FROM traces WHERE trace = 'job'"), gen0);

  /* A whole re-export replaces it, row for row; started while the
   * victim is down, it tries again (pauses 0.1 s, doubling) until the
   * server is back. */
  ch_stop(victim);
  char *slow[] = {(char *)cli, "export",    merged,         "--to", url,
                  "--cluster", "gp_test",   "--trace-name", "job",  "--retries",
                  "9",         "--timeout", "120",          NULL};
  pid = ch_spawn(slow, NULL, err);
  ch_start(victim);
  ASSERT_EQ(ch_wait(pid), 0);
  view_counts("job", after);
  for (size_t i = 0; i < NTABLES; i++)
    ASSERT_EQ(after[i], before[i]);
  ASSERT_GT(ch_num(0, "SELECT gen FROM traces WHERE trace = 'job'"), gen0);
  ch_stop_all();
}
