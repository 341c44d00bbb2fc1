/*
 * test_multi.c - many machines: `gpuperf demo --machines` writes one trace
 * per simulated node, each on its own clocks; `gpuperf merge` puts them
 * on one timeline. Every node runs the same step, so the same kernel
 * happened at the same true moment everywhere: after the merge, the n-th
 * kernel of each machine must sit within the uncertainty the merge states
 * of machine 0's. Also: one machine row, GPU and process names per
 * machine, no flow crossing machines, and bad input named.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuperf/merge.h"
#include "gpuperf/tp.h"
#include "harness.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || access(c, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  return c;
}

/* Runs argv with stdout and stderr into files; returns the exit status. */
static int run(char *const argv[], const char *out, const char *err) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0)
      _exit(99);
    dup2(o, 1);
    dup2(e, 2);
    execv(argv[0], argv);
    _exit(98);
  }
  int ws = 0;
  ASSERT(waitpid(pid, &ws, 0) == pid);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static char *slurp(const char *path) {
  static char buf[1 << 16];
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int64_t q_int(gp_tp *tp, const char *sql) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &rows, &err) != 0)
    ASSERT(!"query failed" || !sql);
  ASSERT_EQ(gp_tp_rows_next(rows, &err), 1);
  int64_t v = gp_tp_rows_int(rows, 0);
  gp_tp_rows_destroy(rows);
  return v;
}

static gp_tp *open_trace(const char *path) {
  gp_tp *tp = NULL;
  gp_tp_error err;
  if (gp_tp_open(path, NULL, &tp, &err) != 0)
    ASSERT(!"cannot open the trace" || !path);
  return tp;
}

/* The largest distance, over machines and kernels, between a machine's
 * n-th matmul on its GPU 0 and machine 0's, each compared with the
 * uncertainty the merge stated for that machine. */
static int64_t check_aligned(gp_tp *tp, int machines, int64_t *max_unc) {
  static const char sql[] =
      "WITH k AS (SELECT t.machine_id AS m, s.ts, row_number() OVER "
      "(PARTITION BY t.machine_id ORDER BY s.ts) AS n FROM gpu_slice s "
      "JOIN gpu_track t ON s.track_id = t.id JOIN gpu g ON g.id = "
      "extract_arg(t.dimension_arg_set_id, 'ugpu') WHERE s.name GLOB "
      "'matmul_kernel*' AND g.gpu = 0), "
      "u AS (SELECT m.id AS m, extract_arg(s.arg_set_id, "
      "'debug.uncertainty_ns') AS unc FROM slice s JOIN machine m ON "
      "m.raw_id = extract_arg(s.arg_set_id, 'debug.machine_id') WHERE "
      "s.name = 'clock alignment') "
      "SELECT k.m, max(abs(k.ts - r.ts)), u.unc, count(*) FROM k JOIN k r "
      "ON r.m = 0 AND r.n = k.n JOIN u ON u.m = k.m GROUP BY k.m "
      "ORDER BY k.m";
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp, sql, &rows, &err));
  int64_t worst = 0;
  int seen = 0;
  *max_unc = 0;
  while (gp_tp_rows_next(rows, &err) == 1) {
    int64_t d = gp_tp_rows_int(rows, 1), unc = gp_tp_rows_int(rows, 2);
    ASSERT_EQ(gp_tp_rows_int(rows, 3), 10); /* one per step */
    ASSERT_LE(d, unc);
    if (d > worst)
      worst = d;
    if (unc > *max_unc)
      *max_unc = unc;
    seen++;
  }
  gp_tp_rows_destroy(rows);
  ASSERT_EQ(seen, machines);
  return worst;
}

/* The offsets the merge recovered against the true ones of `demo
 * --machines` (node K's BOOTTIME is K hours and K x 123456789 ns ahead of
 * node 0's at the start): within the uncertainty stated. */
static void check_offsets(gp_tp *tp) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp,
                        "SELECT extract_arg(arg_set_id, 'debug.hostname'), "
                        "extract_arg(arg_set_id, 'debug.offset_ns'), "
                        "extract_arg(arg_set_id, 'debug.uncertainty_ns') FROM "
                        "slice WHERE name = 'clock alignment' ORDER BY 1",
                        &rows, &err));
  int k = 0;
  for (; gp_tp_rows_next(rows, &err) == 1; k++) {
    char host[16];
    snprintf(host, sizeof(host), "node-%d", k);
    ASSERT_STR_EQ(gp_tp_rows_text(rows, 0), host);
    int64_t truth = -(k * 3600000000000ll + k * 123456789ll);
    int64_t got = gp_tp_rows_int(rows, 1), unc = gp_tp_rows_int(rows, 2);
    ASSERT_LE(llabs(got - truth), unc);
  }
  gp_tp_rows_destroy(rows);
  ASSERT_EQ(k, 4);
}

TEST(multi_demo_machines_merge_on_one_clock) {
  const char *g = cli();
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  char base[1024], n[4][1100], all[1100], synced[1100];
  snprintf(base, sizeof(base), "%s", gp_test_path(2, "run.pftrace"));
  for (int k = 0; k < 4; k++)
    snprintf(n[k], sizeof(n[k]), "%.*s-node%d.pftrace", (int)(strlen(base) - 8),
             base, k);
  snprintf(all, sizeof(all), "%s/all.pftrace", gp_test_tmpdir());
  snprintf(synced, sizeof(synced), "%s/synced.pftrace", gp_test_tmpdir());

  char *demo[] = {(char *)g, "demo", "--machines", "4", "--gpus",
                  "2",       "-o",   base,         NULL};
  ASSERT_EQ(run(demo, out, err), 0);
  ASSERT(strstr(slurp(out), "node-3"));
  char *merge[] = {(char *)g, "merge", n[0], n[1], n[2], n[3], "-o", all, NULL};
  ASSERT_EQ(run(merge, out, err), 0);
  ASSERT(strstr(slurp(out), "merged 4 machines"));
  char *merge2[] = {(char *)g, "merge", n[0],        n[1],        n[2], n[3],
                    "-o",      synced,  "--sync-on", "allreduce", NULL};
  ASSERT_EQ(run(merge2, out, err), 0);
  ASSERT(strstr(slurp(out), "10 sync points"));

  gp_tp *one = open_trace(n[1]);
  int64_t flows1 = q_int(one, "SELECT count(*) FROM flow");
  int64_t slices1 = q_int(one, "SELECT count(*) FROM slice");
  /* Node 1's own clock is an hour ahead of node 0's. */
  int64_t ts1 = q_int(one, "SELECT min(ts) FROM gpu_slice");
  gp_tp_close(one);
  ASSERT_GT(flows1, 0);

  /* REALTIME only: the nodes' NTP errors (up to 0.4 ms) remain, within
   * the stated 1 ms. */
  gp_tp *tp = open_trace(all);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM machine"), 4);
  ASSERT_EQ(q_int(tp, "SELECT count(DISTINCT raw_id) FROM machine WHERE "
                      "raw_id != 0"),
            4);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM machine WHERE sysname IS NOT "
                      "NULL AND arch IS NOT NULL"),
            4); /* from each node's SystemInfo */
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM gpu"), 8);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM gpu WHERE name GLOB 'node-2: "
                      "Sim Compute GPU #*' AND machine_id = 2"),
            2);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM process WHERE name = 'node-3: "
                      "gpuperf' AND machine_id = 3"),
            1);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM flow"), 4 * flows1);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM slice"), 4 * slices1 + 4);
  ASSERT_LT(q_int(tp, "SELECT min(ts) FROM gpu_slice"), ts1 - 3600000000000);
  check_offsets(tp);
  int64_t unc;
  int64_t worst = check_aligned(tp, 4, &unc);
  ASSERT_GT(worst, 50000); /* the REALTIME errors are really there */
  ASSERT_GE(unc, 1000000);
  gp_tp_close(tp);

  /* Refined on the allreduce ends: to the ns. */
  tp = open_trace(synced);
  check_offsets(tp);
  worst = check_aligned(tp, 4, &unc);
  ASSERT_LE(unc, 100);
  ASSERT_LE(worst, unc);
  gp_tp_close(tp);
}

TEST(multi_merge_bad_input_is_named) {
  const char *g = cli();
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *junk = gp_test_path(2, "junk.pftrace");
  const char *good = gp_test_path(3, "good.pftrace");
  char merged[1100];
  snprintf(merged, sizeof(merged), "%s/m.pftrace", gp_test_tmpdir());
  FILE *f = fopen(junk, "w");
  ASSERT_NOT_NULL(f);
  fputs("this is not a trace", f);
  fclose(f);
  char *demo[] = {(char *)g, "demo", "--steps", "2", "-o", (char *)good, NULL};
  ASSERT_EQ(run(demo, out, err), 0);
  char *a1[] = {(char *)g, "merge", (char *)good, (char *)junk,
                "-o",      merged,  NULL};
  ASSERT_EQ(run(a1, out, err), 2);
  ASSERT(strstr(slurp(err), "junk.pftrace: not a Perfetto trace"));
  char *a2[] = {(char *)g, "merge", (char *)good, NULL};
  ASSERT_EQ(run(a2, out, err), 1);
  ASSERT(strstr(slurp(err), "needs -o"));
  char *a3[] = {(char *)g, "merge",     (char *)good,    (char *)good, "-o",
                merged,    "--sync-on", "no such range", NULL};
  ASSERT_EQ(run(a3, out, err), 2);
  ASSERT(strstr(slurp(err), "no slice named 'no such range'"));
  /* A trace names its host: hostname and boot id, and REALTIME beside
   * BOOTTIME in its clock snapshots. */
  char host[256] = "", boot[64] = "";
  ASSERT_EQ(gethostname(host, sizeof(host)), 0);
  FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (b) {
    ASSERT_NOT_NULL(fgets(boot, sizeof(boot), b));
    boot[strcspn(boot, "\n")] = '\0';
    fclose(b);
  }
  gp_tp *one = open_trace(good);
  gp_tp_rows *rows = NULL;
  gp_tp_error e;
  ASSERT_OK(gp_tp_query(one,
                        "SELECT extract_arg(arg_set_id, 'debug.hostname'), "
                        "extract_arg(arg_set_id, 'debug.boot_id') FROM slice "
                        "WHERE name = 'gpuperf host'",
                        &rows, &e));
  ASSERT_EQ(gp_tp_rows_next(rows, &e), 1);
  ASSERT_STR_EQ(gp_tp_rows_text(rows, 0), host);
  if (boot[0])
    ASSERT_STR_EQ(gp_tp_rows_text(rows, 1), boot);
  gp_tp_rows_destroy(rows);
  gp_tp_close(one);
  /* Same host twice: still two machines. */
  char *a4[] = {(char *)g, "merge", (char *)good, (char *)good,
                "-o",      merged,  "-q",         NULL};
  ASSERT_EQ(run(a4, out, err), 0);
  gp_tp *tp = open_trace(merged);
  ASSERT_EQ(q_int(tp, "SELECT count(*) FROM machine"), 2);
  gp_tp_close(tp);
  /* A merged trace is not an input. */
  char *a5[] = {(char *)g, "merge",      merged, (char *)good,
                "-o",      (char *)junk, NULL};
  ASSERT_EQ(run(a5, out, err), 2);
  ASSERT(strstr(slurp(err), "already holds machine 1"));
}

/* --sync-on pairs the j-th end of each machine with the j-th of machine
 * 0. A node whose window starts whole steps later (its trace re-timed
 * with gp_trace_retime: BOOTTIME and REALTIME both later by those steps,
 * as if recorded then) would be pulled back by them; REALTIME places it
 * within 1 ms, so the merge refuses, naming the cause, unless forced. */
TEST(multi_sync_on_refuses_a_shifted_window) {
  const char *g = cli();
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *base = gp_test_path(2, "w.pftrace");
  const char *shifted = gp_test_path(3, "shifted.pftrace");
  char node[2][1100], merged[1100];
  for (int k = 0; k < 2; k++)
    snprintf(node[k], sizeof(node[k]), "%s/w-node%d.pftrace", gp_test_tmpdir(),
             k);
  snprintf(merged, sizeof(merged), "%s/m.pftrace", gp_test_tmpdir());
  char *demo[] = {(char *)g, "demo", "--machines", "2",          "--gpus", "1",
                  "--steps", "12",   "-o",         (char *)base, NULL};
  ASSERT_EQ(run(demo, out, err), 0);
  gp_tp *tp = open_trace(node[1]);
  int64_t step =
      q_int(tp, "SELECT (SELECT ts + dur FROM slice WHERE name = 'allreduce' "
                "ORDER BY ts LIMIT 1 OFFSET 1) - (SELECT ts + dur FROM slice "
                "WHERE name = 'allreduce' ORDER BY ts LIMIT 1)");
  gp_tp_close(tp);
  ASSERT_GT(step, 0);
  /* Whole steps, at least 2 ms: beyond REALTIME's 1 ms and the demo's
   * REALTIME error (up to 0.4 ms) together. */
  int64_t steps = (2000000 + step - 1) / step, shift = steps * step;
  char e[256];
  ASSERT_OK(gp_trace_retime(node[1], shifted, shift, 0, shift, e, sizeof(e)));
  char *m[] = {(char *)g,   "merge",     node[0], (char *)shifted, "-o", merged,
               "--sync-on", "allreduce", NULL};
  ASSERT_EQ(run(m, out, err), 2);
  const char *msg = slurp(err);
  ASSERT(strstr(msg, "shifted.pftrace: aligning it on the ends of "
                     "'allreduce' would move it by"));
  ASSERT(strstr(msg, "do not cover the same 'allreduce' events"));
  ASSERT_EQ(access(merged, F_OK), -1);
  /* The unshifted node merges; the shifted one is taken when forced. */
  char *ok[] = {(char *)g, "merge",     node[0],     node[1], "-o",
                merged,    "--sync-on", "allreduce", NULL};
  ASSERT_EQ(run(ok, out, err), 0);
  char *forced[] = {(char *)g, "merge",     node[0],     (char *)shifted, "-o",
                    merged,    "--sync-on", "allreduce", "--force-sync",  NULL};
  ASSERT_EQ(run(forced, out, err), 0);
  ASSERT(strstr(slurp(out), "sync points"));
}

TEST(multi_batch_query_names_the_failing_trace) {
  const char *g = cli();
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *dir = gp_test_tmpdir();
  char path[1100], pattern[1100];
  for (int k = 0; k < 5; k++) {
    snprintf(path, sizeof(path), "%s/t%d.pftrace", dir, k);
    if (k == 3) {
      FILE *f = fopen(path, "w");
      ASSERT_NOT_NULL(f);
      fputs("not a trace at all", f);
      fclose(f);
      continue;
    }
    char steps[8];
    snprintf(steps, sizeof(steps), "%d", k + 1);
    char *demo[] = {(char *)g, "demo", "--steps", steps, "-o", path, NULL};
    ASSERT_EQ(run(demo, out, err), 0);
  }
  snprintf(pattern, sizeof(pattern), "%s/t*.pftrace", dir);
  static const char sql[] =
      "SELECT count(*) AS kernels FROM gpu_slice WHERE name GLOB 'matmul*'";
  char *a1[] = {(char *)g, "query",        pattern, (char *)sql, "--format",
                "csv",     "--keep-going", "-j",    "2",         NULL};
  ASSERT_EQ(run(a1, out, err), 2);
  const char *o = slurp(out);
  ASSERT(strstr(o, "\"trace\",\"kernels\"\n"));
  /* Two matmuls (forward, backward) per GPU and step, 2 GPUs: in the
   * glob's order whatever order the workers finished in. */
  char want[4096];
  snprintf(want, sizeof(want),
           "\"%s/t0.pftrace\",4\n\"%s/t1.pftrace\",8\n\"%s/t2.pftrace\",12\n"
           "\"%s/t4.pftrace\",20\n",
           dir, dir, dir, dir);
  ASSERT(strstr(o, want));
  ASSERT(!strstr(o, "t3.pftrace"));
  const char *e = slurp(err);
  ASSERT(strstr(e, "FAILED "));
  ASSERT(strstr(e, "t3.pftrace: "));
  ASSERT(strstr(e, "5 traces, 1 failed, 2 workers"));
  /* Without --keep-going: the failure, and no result. */
  char *a2[] = {(char *)g, "query", pattern, (char *)sql, "-j", "1", NULL};
  ASSERT_EQ(run(a2, out, err), 2);
  ASSERT(strstr(slurp(err), "use --keep-going"));
  ASSERT_EQ(strlen(slurp(out)), 0);
  /* A glob matching nothing, and a bad -j. */
  char none[1100];
  snprintf(none, sizeof(none), "%s/none*.pftrace", dir);
  char *a3[] = {(char *)g, "query", none, (char *)sql, NULL};
  ASSERT_EQ(run(a3, out, err), 2);
  ASSERT(strstr(slurp(err), "no trace matches"));
  char *a4[] = {(char *)g, "query", pattern, (char *)sql, "-j", "0", NULL};
  ASSERT_EQ(run(a4, out, err), 1);
}
