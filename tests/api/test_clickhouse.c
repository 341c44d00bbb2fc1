/*
 * test_clickhouse.c - `gpuperf export --to clickhouse://` on a real
 * two-shard cluster (clickhouse_util.h starts the servers). A merged
 * `demo --machines 4` trace is exported to both shards; the kernel table
 * and a time-weighted utilization per GPU computed by ClickHouse over the
 * views of the Distributed tables must equal ours, both shards must hold
 * rows, the export must use one connection per server (libcurl's count
 * and the servers' query_log agree), a user and password are sent, and
 * exporting again must not duplicate any row. Skipped where the Debian
 * packages clickhouse-server/-client are absent.
 */
#include "clickhouse_util.h"

TEST(clickhouse_two_shard_export_matches_ours) {
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char base[1100], nodes[4][1100], merged[1100], url[256], export_out[1100];
  snprintf(base, sizeof(base), "%s/run.pftrace", dir);
  for (int k = 0; k < 4; k++)
    snprintf(nodes[k], sizeof(nodes[k]), "%s/run-node%d.pftrace", dir, k);
  snprintf(merged, sizeof(merged), "%s/all.pftrace", dir);
  snprintf(export_out, sizeof(export_out), "%s/export.out", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "4", "--gpus",
                  "2",         "-o",   base,         NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  char *merge[] = {(char *)cli, "merge",     nodes[0], nodes[1],
                   nodes[2],    nodes[3],    "-o",     merged,
                   "--sync-on", "allreduce", NULL};
  ASSERT_EQ(ch_run(merge, NULL), 0);

  ch_start_two();
  ch_url(url, sizeof(url));
  char *exp[] = {(char *)cli, "export",       merged,    "--to",
                 url,         "--cluster",    "gp_test", "--trace-name",
                 "job1",      "--batch-rows", "500",     NULL};
  ASSERT_EQ(ch_run(exp, export_out), 0);
  char *o = ch_slurp(export_out);
  ASSERT(strstr(o, "rows/s"));
  /* Keep-alive: one connection per server, by libcurl's count and by the
   * servers' own log (distinct client ports of our requests). */
  const char *conn = strstr(o, " over ");
  ASSERT_NOT_NULL(conn);
  ASSERT_EQ(atoi(conn + 6), 2);
  long long seen = 0;
  for (int i = 0; i < 2; i++) {
    free(ch_q(i, "SYSTEM FLUSH LOGS"));
    seen += ch_num(i, "SELECT uniqExact(port) FROM system.query_log WHERE "
                      "http_user_agent LIKE 'gpuperf-export/%'");
  }
  ASSERT_EQ(seen, 2);
  free(o);

  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open(merged, NULL, &tp, &err));

  /* The kernel table (report's), over the Distributed table. */
  char *want = ch_ours(tp, "SELECT name, count(*), sum(dur), max(dur) FROM "
                           "gpu_slice WHERE render_stage_category = 2 GROUP BY "
                           "name ORDER BY name");
  char *got = ch_q(0, "SELECT name, count(), sum(dur), max(dur) FROM "
                      "gpdb.gpu_slice WHERE render_stage_category = 2 "
                      "GROUP BY name ORDER BY name");
  ASSERT_NOT_NULL(got);
  ASSERT(strstr(want, "matmul_kernel"));
  ASSERT_STR_EQ(got, want);
  free(got);

  /* Time-weighted utilization of every GPU of every machine. */
  char *wu = ch_ours(
      tp, "WITH x AS (SELECT (SELECT raw_id FROM machine m WHERE m.id = "
          "t.machine_id) AS machine, c.track_id, c.ts, c.value, LEAD(c.ts) "
          "OVER (PARTITION BY c.track_id ORDER BY c.ts) AS nts FROM counter c "
          "JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
          "'Utilization') SELECT machine, track_id, sum(value * (nts - ts)) "
          "* 1.0 / sum(nts - ts) FROM x WHERE nts IS NOT NULL GROUP BY "
          "machine, track_id ORDER BY machine, track_id");
  char *gu = ch_q(
      0,
      "SELECT machine, track_id, arraySum(arrayMap((v, d) -> v * d, "
      "arrayPopBack(vs), ds)) / arraySum(ds) FROM (SELECT machine, track_id, "
      "arraySort(groupArray(ts)) AS t, arraySort((v, x) -> x, "
      "groupArray(value), groupArray(ts)) AS vs, arrayMap((a, b) -> b - a, "
      "arrayPopBack(t), arrayPopFront(t)) AS ds FROM gpdb.counter WHERE "
      "(trace, machine, track_id) GLOBAL IN (SELECT trace, machine, id FROM "
      "gpdb.track WHERE name = 'Utilization') GROUP BY machine, track_id) "
      "ORDER BY machine, track_id");
  ASSERT_NOT_NULL(gu);
  int lines = 0;
  for (const char *p = wu; (p = strchr(p, '\n')); p++)
    lines++;
  ASSERT_EQ(lines, 8); /* 4 machines x 2 GPUs */
  ch_same_numbers(gu, wu);
  free(gu);
  free(wu);

  /* Each shard holds exactly the rows whose (trace, machine) the
   * sharding key, evaluated by the server, sends there (which shards
   * 4 machines land on is the hash's business: test_clickhouse_fleet
   * checks the balance); their sum is ours. */
  char *n = ch_ours(tp, "SELECT count(*) FROM gpu_slice");
  long long s0 = ch_num(0, "SELECT count() FROM gpu_slice_local");
  long long s1 = ch_num(1, "SELECT count() FROM gpu_slice_local");
  ASSERT_EQ(ch_num(0, "SELECT count() FROM gpu_slice_local WHERE "
                      "cityHash64(trace, machine) % 2 != 0"),
            0);
  ASSERT_EQ(ch_num(1, "SELECT count() FROM gpu_slice_local WHERE "
                      "cityHash64(trace, machine) % 2 != 1"),
            0);
  ASSERT_EQ(s0 + s1, atoll(n));
  /* A URL with fewer servers than the cluster's shards is refused
   * before anything is written. */
  char one[256], err1[1100];
  snprintf(one, sizeof(one), "clickhouse://127.0.0.1:%d/gpdb", ch_http[0]);
  snprintf(err1, sizeof(err1), "%s/err1", dir);
  char *short_url[] = {(char *)cli, "export",    merged,    "--to",
                       one,         "--cluster", "gp_test", NULL};
  ASSERT_EQ(ch_wait(ch_spawn(short_url, NULL, err1)), 2);
  char *e1 = ch_slurp(err1);
  ASSERT(strstr(e1, "cluster 'gp_test' has 2 shards there, but the URL "
                    "lists 1"));
  free(e1);
  /* An unknown user is refused (the user really is sent)... */
  snprintf(url, sizeof(url),
           "clickhouse://nobody@127.0.0.1:%d,127.0.0.1:%d/gpdb", ch_http[0],
           ch_http[1]);
  ASSERT_EQ(ch_run(exp, export_out), 2);
  /* ...a user with a password, from the environment only: refused
   * without it... */
  snprintf(url, sizeof(url),
           "clickhouse://gpuser@127.0.0.1:%d,127.0.0.1:%d/gpdb", ch_http[0],
           ch_http[1]);
  unsetenv("GPUPERF_CLICKHOUSE_PASSWORD");
  ASSERT_EQ(ch_run(exp, export_out), 2);
  /* ...and with it, again: the old copy replaced, no duplicates. */
  setenv("GPUPERF_CLICKHOUSE_PASSWORD", "s3cret", 1);
  ASSERT_EQ(ch_run(exp, export_out), 0);
  unsetenv("GPUPERF_CLICKHOUSE_PASSWORD");
  char *again = ch_q(1, "SELECT count() FROM gpdb.gpu_slice");
  ASSERT_NOT_NULL(again);
  ASSERT_EQ(atoll(again), atoll(n));
  free(again);
  char *mach = ch_q(1, "SELECT hostname FROM gpdb.machine ORDER BY "
                       "hostname");
  ASSERT_STR_EQ(mach, "node-0\nnode-1\nnode-2\nnode-3\n");
  free(mach);
  free(n);
  free(want);
  gp_tp_close(tp);
  ch_stop_all();
}

TEST(clickhouse_export_bad_input_is_named) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  char trace[1100], out[1100];
  snprintf(trace, sizeof(trace), "%s/t.pftrace", gp_test_tmpdir());
  snprintf(out, sizeof(out), "%s/out", gp_test_tmpdir());
  char *demo[] = {(char *)cli, "demo", "--steps", "1", "-o", trace, NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  char *a1[] = {(char *)cli, "export", trace, "--to", "http://h:1/db", NULL};
  ASSERT_EQ(ch_run(a1, NULL), 1);
  char *a2[] = {(char *)cli,
                "export",
                trace,
                "--to",
                "clickhouse://127.0.0.1:1,127.0.0.1:2/db",
                NULL};
  ASSERT_EQ(ch_run(a2, NULL), 1); /* several hosts need --cluster */
  /* Nothing listens on a free port: exit 2, the server named. */
  int port = ch_free_port();
  char url[128], err[1100];
  snprintf(url, sizeof(url), "clickhouse://127.0.0.1:%d/db", port);
  snprintf(err, sizeof(err), "%s/err", gp_test_tmpdir());
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(e, 2);
    execl(cli, cli, "export", trace, "--to", url, (char *)NULL);
    _exit(98);
  }
  int ws;
  ASSERT_EQ(waitpid(pid, &ws, 0), pid);
  ASSERT(WIFEXITED(ws) && WEXITSTATUS(ws) == 2);
  char *e = ch_slurp(err);
  char want[64];
  snprintf(want, sizeof(want), "ClickHouse at 127.0.0.1:%d", port);
  ASSERT(strstr(e, want));
  free(e);
  /* The server is asked before the trace is read: a file that is not a
   * trace gets the server's error, not its own. */
  char bad[1100];
  snprintf(bad, sizeof(bad), "%s/not-a-trace", gp_test_tmpdir());
  FILE *f = fopen(bad, "w");
  ASSERT_NOT_NULL(f);
  fputs("not a trace\n", f);
  fclose(f);
  char *a3[] = {(char *)cli, "export", bad, "--to", url, NULL};
  ASSERT_EQ(ch_wait(ch_spawn(a3, NULL, err)), 2);
  e = ch_slurp(err);
  ASSERT(strstr(e, want));
  free(e);
}

TEST(clickhouse_export_over_https) {
  const char *cli = ch_need();
  if (access("/usr/bin/openssl", X_OK) != 0)
    SKIP("no /usr/bin/openssl to make the server's certificate (Debian "
         "package openssl)");
  const char *dir = gp_test_tmpdir();
  char key[1100], cert[1100], trace[1100], url[256], err[1100];
  snprintf(key, sizeof(key), "%s/key.pem", dir);
  snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
  snprintf(trace, sizeof(trace), "%s/t.pftrace", dir);
  snprintf(err, sizeof(err), "%s/err", dir);
  char *mk[] = {"/usr/bin/openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                key,
                "-out",
                cert,
                "-days",
                "2",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
                NULL};
  ASSERT_EQ(ch_run(mk, NULL), 0);
  char *demo[] = {(char *)cli, "demo", "--steps", "3", "-o", trace, NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  ch_https = ch_free_port();
  ch_start_two();
  snprintf(url, sizeof(url), "clickhouses://127.0.0.1:%d/gpdb", ch_https);
  /* The server's certificate is checked: unknown CA, refused... */
  char *plain[] = {(char *)cli, "export", trace, "--to", url, NULL};
  ASSERT_EQ(ch_wait(ch_spawn(plain, NULL, err)), 2);
  char *e = ch_slurp(err);
  ASSERT(strstr(e, "certificate"));
  free(e);
  /* ...and trusted with --cacert. */
  char *exp[] = {(char *)cli, "export",   trace, "--to",
                 url,         "--cacert", cert,  NULL};
  ASSERT_EQ(ch_run(exp, NULL), 0);
  gp_tp *tp = NULL;
  gp_tp_error gerr;
  ASSERT_OK(gp_tp_open(trace, NULL, &tp, &gerr));
  char *n = ch_ours(tp, "SELECT count(*) FROM gpu_slice");
  ASSERT_EQ(ch_num(0, "SELECT count() FROM gpu_slice"), atoll(n));
  free(n);
  gp_tp_close(tp);
  ch_stop_all();
}
