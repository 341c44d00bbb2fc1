/*
 * test_clickhouse.c - `gpuperf export --to clickhouse://` on a real
 * two-shard cluster: two clickhouse-server processes on loopback ports,
 * data in the test's temporary folder, configs written here (a
 * remote_servers entry naming both as the shards of "gp_test"). A merged
 * `demo --machines 4` trace is exported through the Distributed tables;
 * the kernel table and a time-weighted utilization per GPU computed by
 * ClickHouse over the Distributed tables must equal ours, both shards
 * must hold rows, and exporting again must not duplicate any. Skipped
 * where the Debian packages clickhouse-server/-client are absent.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/tp.h"
#include "harness.h"

#define SERVER "/usr/sbin/clickhouse-server"
#define CLIENT "/usr/bin/clickhouse-client"

static pid_t servers[2];

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT(fd >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  ASSERT(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
  close(fd);
  return ntohs(a.sin_port);
}

/* Runs argv, its stdout into out (if not NULL); returns the exit status. */
static int run(char *const argv[], const char *out) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int nul = open("/dev/null", O_WRONLY);
    if (fd < 0 || nul < 0)
      _exit(99);
    dup2(fd, 1);
    dup2(nul, 2);
    execv(argv[0], argv);
    _exit(98);
  }
  int ws = 0;
  ASSERT(waitpid(pid, &ws, 0) == pid);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  char *b = malloc(1 << 20);
  ASSERT_NOT_NULL(b);
  size_t n = fread(b, 1, (1 << 20) - 1, f);
  b[n] = '\0';
  fclose(f);
  return b;
}

/* Runs a query on server i's TCP port; returns its TSV output (malloc'd). */
static char *ch(int tcp, const char *q) {
  char port[16], out[1100];
  snprintf(port, sizeof(port), "%d", tcp);
  snprintf(out, sizeof(out), "%s/ch.out", gp_test_tmpdir());
  char *argv[] = {CLIENT, "--host",  "127.0.0.1", "--port",
                  port,   "--query", (char *)q,   NULL};
  if (run(argv, out) != 0)
    return NULL;
  return slurp(out);
}

static void write_config(int i, const int http[2], const int tcp[2]) {
  const char *dir = gp_test_tmpdir();
  char path[1100];
  snprintf(path, sizeof(path), "%s/users.xml", dir);
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fputs("<yandex><profiles><default/></profiles><users><default>"
        "<password></password><networks><ip>127.0.0.1</ip></networks>"
        "<profile>default</profile><quota>default</quota></default></users>"
        "<quotas><default/></quotas></yandex>\n",
        f);
  fclose(f);
  snprintf(path, sizeof(path), "%s/server%d.xml", dir, i);
  f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f,
          "<yandex>\n"
          " <logger><level>warning</level><log>%s/s%d/log</log>"
          "<errorlog>%s/s%d/err</errorlog></logger>\n"
          " <http_port>%d</http_port><tcp_port>%d</tcp_port>\n"
          " <listen_host>127.0.0.1</listen_host>\n"
          " <path>%s/s%d/</path><tmp_path>%s/s%d/tmp/</tmp_path>\n"
          " <user_files_path>%s/s%d/files/</user_files_path>\n"
          " <users_config>%s/users.xml</users_config>\n"
          " <default_profile>default</default_profile>\n"
          " <default_database>default</default_database>\n"
          " <mark_cache_size>67108864</mark_cache_size>\n"
          " <remote_servers><gp_test>\n"
          "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica>"
          "</shard>\n"
          "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica>"
          "</shard>\n"
          " </gp_test></remote_servers>\n"
          "</yandex>\n",
          dir, i, dir, i, http[i], tcp[i], dir, i, dir, i, dir, i, dir, tcp[0],
          tcp[1]);
  fclose(f);
}

static void stop_servers(void) {
  for (int i = 0; i < 2; i++) {
    if (servers[i] <= 0)
      continue;
    kill(servers[i], SIGTERM);
    int ws;
    for (int t = 0; t < 100 && waitpid(servers[i], &ws, WNOHANG) == 0; t++)
      usleep(100000);
    if (waitpid(servers[i], &ws, WNOHANG) == 0) {
      kill(servers[i], SIGKILL);
      waitpid(servers[i], &ws, 0);
    }
    servers[i] = 0;
  }
}

static void start_server(int i, const int tcp[2]) {
  char cfg[1100], arg[1200];
  snprintf(cfg, sizeof(cfg), "%s/server%d.xml", gp_test_tmpdir(), i);
  snprintf(arg, sizeof(arg), "--config-file=%s", cfg);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    /* A failed assertion ends the test with _exit(): the servers go too. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    dup2(nul, 2);
    execl(SERVER, SERVER, arg, (char *)NULL);
    _exit(98);
  }
  servers[i] = pid;
  for (int t = 0; t < 300; t++) {
    char *r = ch(tcp[i], "SELECT 1");
    if (r) {
      free(r);
      return;
    }
    int ws;
    if (waitpid(pid, &ws, WNOHANG) == pid) {
      servers[i] = 0;
      stop_servers();
      ASSERT(!"clickhouse-server exited at start");
    }
    usleep(100000);
  }
  stop_servers();
  ASSERT(!"clickhouse-server did not answer within 30 s");
}

/* Our rows of sql as TSV lines "a\tb\t...". */
static char *ours(gp_tp *tp, const char *sql) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &rows, &err) != 0)
    ASSERT(!"our query failed" || !sql);
  size_t cap = 1 << 20, n = 0;
  char *b = malloc(cap);
  ASSERT_NOT_NULL(b);
  b[0] = '\0';
  int nc = gp_tp_rows_columns(rows);
  while (gp_tp_rows_next(rows, &err) == 1) {
    for (int c = 0; c < nc; c++) {
      const char *v = gp_tp_rows_text(rows, c);
      n += (size_t)snprintf(b + n, cap - n, "%s%s", c ? "\t" : "", v ? v : "");
    }
    n += (size_t)snprintf(b + n, cap - n, "\n");
    ASSERT_LT(n, cap - 1024);
  }
  gp_tp_rows_destroy(rows);
  return b;
}

/* Compares two TSV results line by line: the first columns exactly, the
 * last as a number within 1e-9 (relative). */
static void same_numbers(const char *a, const char *b) {
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    ASSERT(ea && eb);
    const char *ta = memrchr(a, '\t', (size_t)(ea - a));
    const char *tb = memrchr(b, '\t', (size_t)(eb - b));
    ASSERT(ta && tb && ta - a == tb - b && memcmp(a, b, (size_t)(ta - a)) == 0);
    double x = atof(ta + 1), y = atof(tb + 1);
    ASSERT_NEAR(x, y, 1e-9 * fmax(1.0, fabs(x)));
    a = ea + 1;
    b = eb + 1;
  }
  ASSERT(!*a && !*b);
}

TEST(clickhouse_two_shard_export_matches_ours) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  if (access(SERVER, X_OK) != 0 || access(CLIENT, X_OK) != 0)
    SKIP("ClickHouse is not installed (Debian packages clickhouse-server, "
         "clickhouse-client)");
  const char *dir = gp_test_tmpdir();
  char base[1100], nodes[4][1100], merged[1100], url[256], export_out[1100];
  snprintf(base, sizeof(base), "%s/run.pftrace", dir);
  for (int k = 0; k < 4; k++)
    snprintf(nodes[k], sizeof(nodes[k]), "%s/run-node%d.pftrace", dir, k);
  snprintf(merged, sizeof(merged), "%s/all.pftrace", dir);
  snprintf(export_out, sizeof(export_out), "%s/export.out", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "4", "--gpus",
                  "2",         "-o",   base,         NULL};
  ASSERT_EQ(run(demo, NULL), 0);
  char *merge[] = {(char *)cli, "merge",     nodes[0], nodes[1],
                   nodes[2],    nodes[3],    "-o",     merged,
                   "--sync-on", "allreduce", NULL};
  ASSERT_EQ(run(merge, NULL), 0);

  int http[2], tcp[2];
  for (int i = 0; i < 2; i++) {
    http[i] = free_port();
    tcp[i] = free_port();
  }
  for (int i = 0; i < 2; i++)
    write_config(i, http, tcp);
  start_server(0, tcp);
  start_server(1, tcp);

  snprintf(url, sizeof(url), "clickhouse://127.0.0.1:%d,127.0.0.1:%d/gpdb",
           http[0], http[1]);
  char *exp[] = {(char *)cli, "export",       merged,    "--to",
                 url,         "--cluster",    "gp_test", "--trace-name",
                 "job1",      "--batch-rows", "500",     NULL};
  ASSERT_EQ(run(exp, export_out), 0);
  char *o = slurp(export_out);
  ASSERT(strstr(o, "rows/s"));
  free(o);

  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open(merged, NULL, &tp, &err));

  /* The kernel table (report's), over the Distributed table. */
  char *want = ours(tp, "SELECT name, count(*), sum(dur), max(dur) FROM "
                        "gpu_slice WHERE render_stage_category = 2 GROUP BY "
                        "name ORDER BY name");
  char *got = ch(tcp[0], "SELECT name, count(), sum(dur), max(dur) FROM "
                         "gpdb.gpu_slice WHERE render_stage_category = 2 "
                         "GROUP BY name ORDER BY name");
  ASSERT_NOT_NULL(got);
  ASSERT(strstr(want, "matmul_kernel"));
  ASSERT_STR_EQ(got, want);
  free(got);

  /* Time-weighted utilization of every GPU of every machine. */
  char *wu = ours(
      tp, "WITH x AS (SELECT (SELECT raw_id FROM machine m WHERE m.id = "
          "t.machine_id) AS machine, c.track_id, c.ts, c.value, LEAD(c.ts) "
          "OVER (PARTITION BY c.track_id ORDER BY c.ts) AS nts FROM counter c "
          "JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
          "'Utilization') SELECT machine, track_id, sum(value * (nts - ts)) "
          "* 1.0 / sum(nts - ts) FROM x WHERE nts IS NOT NULL GROUP BY "
          "machine, track_id ORDER BY machine, track_id");
  char *gu = ch(
      tcp[0],
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
  same_numbers(gu, wu);
  free(gu);
  free(wu);

  /* Both shards hold rows; their sum is ours; again: no duplicates. */
  char *n = ours(tp, "SELECT count(*) FROM gpu_slice");
  char *s0 = ch(tcp[0], "SELECT count() FROM gpdb.gpu_slice_local");
  char *s1 = ch(tcp[1], "SELECT count() FROM gpdb.gpu_slice_local");
  ASSERT(s0 && s1);
  ASSERT_GT(atoll(s0), 0);
  ASSERT_GT(atoll(s1), 0);
  ASSERT_EQ(atoll(s0) + atoll(s1), atoll(n));
  free(s0);
  free(s1);
  /* An unknown user is refused (the user really is sent)... */
  snprintf(url, sizeof(url),
           "clickhouse://nobody@127.0.0.1:%d,127.0.0.1:%d/gpdb", http[0],
           http[1]);
  ASSERT_EQ(run(exp, export_out), 2);
  /* ...and again, naming the user: no duplicates. */
  snprintf(url, sizeof(url),
           "clickhouse://default@127.0.0.1:%d,127.0.0.1:%d/gpdb", http[0],
           http[1]);
  ASSERT_EQ(run(exp, export_out), 0);
  char *again = ch(tcp[1], "SELECT count() FROM gpdb.gpu_slice");
  ASSERT_NOT_NULL(again);
  ASSERT_EQ(atoll(again), atoll(n));
  free(again);
  char *mach = ch(tcp[1], "SELECT hostname FROM gpdb.machine ORDER BY "
                          "hostname");
  ASSERT_STR_EQ(mach, "node-0\nnode-1\nnode-2\nnode-3\n");
  free(mach);
  free(n);
  free(want);
  gp_tp_close(tp);
  stop_servers();
}

TEST(clickhouse_export_bad_input_is_named) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  char trace[1100], out[1100];
  snprintf(trace, sizeof(trace), "%s/t.pftrace", gp_test_tmpdir());
  snprintf(out, sizeof(out), "%s/out", gp_test_tmpdir());
  char *demo[] = {(char *)cli, "demo", "--steps", "1", "-o", trace, NULL};
  ASSERT_EQ(run(demo, NULL), 0);
  char *a1[] = {(char *)cli, "export", trace, "--to", "http://h:1/db", NULL};
  ASSERT_EQ(run(a1, NULL), 1);
  char *a2[] = {(char *)cli,
                "export",
                trace,
                "--to",
                "clickhouse://127.0.0.1:1,127.0.0.1:2/db",
                NULL};
  ASSERT_EQ(run(a2, NULL), 1); /* several hosts need --cluster */
  /* Nothing listens on a free port: exit 2, the server named. */
  int port = free_port();
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
  char *e = slurp(err);
  char want[64];
  snprintf(want, sizeof(want), "ClickHouse at 127.0.0.1:%d", port);
  ASSERT(strstr(e, want));
  free(e);
}
