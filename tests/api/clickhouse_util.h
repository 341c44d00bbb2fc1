/*
 * clickhouse_util.h - what the ClickHouse export tests share
 * (test_clickhouse.c, test_clickhouse_fleet.c): two real
 * clickhouse-server processes on loopback ports, data and configs in the
 * test's temporary folder, a remote_servers entry naming both as the
 * shards of "gp_test", and queries logged (system.query_log) so that a
 * test can count the export's connections from the server's side.
 * Servers are stopped by the PIDs this file got when it started them.
 */
#ifndef GPUPERF_TESTS_CLICKHOUSE_UTIL_H
#define GPUPERF_TESTS_CLICKHOUSE_UTIL_H

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

#define CH_SERVER "/usr/sbin/clickhouse-server"
#define CH_CLIENT "/usr/bin/clickhouse-client"

static pid_t ch_pids[2];
static int ch_http[2], ch_tcp[2];
/* Set before ch_start_two: server 0 also speaks HTTPS on ch_https, with
 * cert.pem and key.pem of the test's folder. */
static int ch_https;

/* GPUPERF_CLI and the ClickHouse packages, or the test is skipped. */
static inline const char *ch_need(void) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  if (access(CH_SERVER, X_OK) != 0 || access(CH_CLIENT, X_OK) != 0)
    SKIP("ClickHouse is not installed (Debian packages clickhouse-server, "
         "clickhouse-client)");
  return cli;
}

static inline int ch_free_port(void) {
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

/* Starts argv with stdout into out and stderr into err (NULL:
 * /dev/null); returns its PID. */
static inline pid_t ch_spawn(char *const argv[], const char *out,
                             const char *err) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || fe < 0)
      _exit(99);
    dup2(fd, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    _exit(98);
  }
  return pid;
}

static inline int ch_wait(pid_t pid) {
  int ws = 0;
  ASSERT(waitpid(pid, &ws, 0) == pid);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Runs argv, its stdout into out (if not NULL); returns the exit status. */
static inline int ch_run(char *const argv[], const char *out) {
  return ch_wait(ch_spawn(argv, out, NULL));
}

static inline char *ch_slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  char *b = malloc(1 << 20);
  ASSERT_NOT_NULL(b);
  size_t n = fread(b, 1, (1 << 20) - 1, f);
  b[n] = '\0';
  fclose(f);
  return b;
}

/* Runs a query on server i (through its TCP port; in database gpdb once
 * it exists), with an optional setting ("--name=value"); returns its TSV
 * output (malloc'd), or NULL if it failed. */
static inline char *ch_q2(int i, const char *q, const char *setting) {
  char port[16], out[1100];
  snprintf(port, sizeof(port), "%d", ch_tcp[i]);
  snprintf(out, sizeof(out), "%s/ch%d.out", gp_test_tmpdir(), i);
  char *argv[12] = {CH_CLIENT, "--host",  "127.0.0.1", "--port",
                    port,      "--query", (char *)q};
  int n = 7;
  if (strcmp(q, "SELECT 1") != 0) {
    argv[n++] = "--database";
    argv[n++] = "gpdb";
  }
  if (setting)
    argv[n++] = (char *)setting;
  argv[n] = NULL;
  if (ch_run(argv, out) != 0)
    return NULL;
  return ch_slurp(out);
}

static inline char *ch_q(int i, const char *q) {
  return ch_q2(i, q, NULL);
}

/* The number a query of one value answers on server i. */
static inline long long ch_num(int i, const char *q) {
  char *r = ch_q(i, q);
  if (!r)
    gp_test_fail(__FILE__, __LINE__, "query failed: %s", q);
  long long v = atoll(r);
  free(r);
  return v;
}

static inline void ch_write_config(int i) {
  const char *dir = gp_test_tmpdir();
  char path[1100];
  snprintf(path, sizeof(path), "%s/users.xml", dir);
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fputs("<yandex><profiles><default><log_queries>1</log_queries></default>"
        "</profiles><users><default>"
        "<password></password><networks><ip>127.0.0.1</ip></networks>"
        "<profile>default</profile><quota>default</quota></default>"
        "<gpuser><password>s3cret</password><networks><ip>127.0.0.1</ip>"
        "</networks><profile>default</profile><quota>default</quota>"
        "</gpuser></users><quotas><default/></quotas></yandex>\n",
        f);
  fclose(f);
  char tls[3000] = "";
  if (i == 0 && ch_https)
    snprintf(tls, sizeof(tls),
             " <https_port>%d</https_port><openSSL><server>"
             "<certificateFile>%s/cert.pem</certificateFile>"
             "<privateKeyFile>%s/key.pem</privateKeyFile>"
             "<verificationMode>none</verificationMode></server></openSSL>\n",
             ch_https, dir, dir);
  snprintf(path, sizeof(path), "%s/server%d.xml", dir, i);
  f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f,
          "<yandex>\n"
          " <logger><level>warning</level><log>%s/s%d/log</log>"
          "<errorlog>%s/s%d/err</errorlog></logger>\n"
          " <http_port>%d</http_port><tcp_port>%d</tcp_port>\n"
          " <listen_host>127.0.0.1</listen_host>\n"
          "%s"
          " <path>%s/s%d/</path><tmp_path>%s/s%d/tmp/</tmp_path>\n"
          " <user_files_path>%s/s%d/files/</user_files_path>\n"
          " <users_config>%s/users.xml</users_config>\n"
          " <default_profile>default</default_profile>\n"
          " <default_database>default</default_database>\n"
          " <mark_cache_size>67108864</mark_cache_size>\n"
          " <query_log><database>system</database><table>query_log</table>"
          "<flush_interval_milliseconds>500</flush_interval_milliseconds>"
          "</query_log>\n"
          " <remote_servers><gp_test>\n"
          "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica>"
          "</shard>\n"
          "  <shard><replica><host>127.0.0.1</host><port>%d</port></replica>"
          "</shard>\n"
          " </gp_test></remote_servers>\n"
          "</yandex>\n",
          dir, i, dir, i, ch_http[i], ch_tcp[i], tls, dir, i, dir, i, dir, i,
          dir, ch_tcp[0], ch_tcp[1]);
  fclose(f);
}

/* Stops server i (SIGCONT first, in case a test stopped it), by its PID. */
static inline void ch_stop(int i) {
  if (ch_pids[i] <= 0)
    return;
  kill(ch_pids[i], SIGCONT);
  kill(ch_pids[i], SIGTERM);
  int ws;
  for (int t = 0; t < 100 && waitpid(ch_pids[i], &ws, WNOHANG) == 0; t++)
    usleep(100000);
  if (waitpid(ch_pids[i], &ws, WNOHANG) == 0) {
    kill(ch_pids[i], SIGKILL);
    waitpid(ch_pids[i], &ws, 0);
  }
  ch_pids[i] = 0;
}

static inline void ch_stop_all(void) {
  ch_stop(0);
  ch_stop(1);
}

/* Starts server i (its config written before) and waits until it answers. */
static inline void ch_start(int i) {
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
    execl(CH_SERVER, CH_SERVER, arg, (char *)NULL);
    _exit(98);
  }
  ch_pids[i] = pid;
  for (int t = 0; t < 600; t++) {
    char *r = ch_q2(i, "SELECT 1", NULL);
    if (r) {
      free(r);
      return;
    }
    int ws;
    if (waitpid(pid, &ws, WNOHANG) == pid) {
      ch_pids[i] = 0;
      ch_stop_all();
      ASSERT(!"clickhouse-server exited at start");
    }
    usleep(100000);
  }
  ch_stop_all();
  ASSERT(!"clickhouse-server did not answer within 60 s");
}

/* Picks ports, writes the configs and starts both servers. */
static inline void ch_start_two(void) {
  for (int i = 0; i < 2; i++) {
    ch_http[i] = ch_free_port();
    ch_tcp[i] = ch_free_port();
  }
  for (int i = 0; i < 2; i++)
    ch_write_config(i);
  ch_start(0);
  ch_start(1);
  /* The export would create it; the tests query it from the start. */
  for (int i = 0; i < 2; i++) {
    char port[16];
    snprintf(port, sizeof(port), "%d", ch_tcp[i]);
    char *argv[] = {CH_CLIENT,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    port,
                    "--query",
                    "CREATE DATABASE IF NOT EXISTS gpdb",
                    NULL};
    ASSERT_EQ(ch_run(argv, NULL), 0);
  }
}

/* The --to URL of both servers as one cluster (database gpdb). */
static inline void ch_url(char *buf, size_t size) {
  snprintf(buf, size, "clickhouse://127.0.0.1:%d,127.0.0.1:%d/gpdb", ch_http[0],
           ch_http[1]);
}

/* Our rows of sql on tp as TSV lines "a\tb\t..." (malloc'd). */
static inline char *ch_ours(gp_tp *tp, const char *sql) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &rows, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "our query failed: %s", err.message);
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

/* Compares two TSV results line by line: every column but the last
 * exactly, the last as a number within 1e-9 (relative). */
static inline void ch_same_numbers(const char *a, const char *b) {
  while (*a && *b) {
    const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
    ASSERT(ea && eb);
    const char *ta = memrchr(a, '\t', (size_t)(ea - a));
    const char *tb = memrchr(b, '\t', (size_t)(eb - b));
    if (!(ta && tb && ta - a == tb - b && memcmp(a, b, (size_t)(ta - a)) == 0))
      gp_test_fail(__FILE__, __LINE__, "rows differ:\n%.*s\n%.*s",
                   (int)(ea - a), a, (int)(eb - b), b);
    double x = atof(ta + 1), y = atof(tb + 1);
    ASSERT_NEAR(x, y, 1e-9 * fmax(1.0, fabs(x)));
    a = ea + 1;
    b = eb + 1;
  }
  ASSERT(!*a && !*b);
}

#endif /* GPUPERF_TESTS_CLICKHOUSE_UTIL_H */
