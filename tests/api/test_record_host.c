/*
 * test_record_host.c - host CPU counters selected with `gpuperf record -e`
 * (or a config's counter_names) become process counter tracks: a real
 * program (tests/programs/sim_app, and its forked and exec'd children)
 * recorded, its trace read back by the trace processor. Also: the same
 * recording where a seccomp filter refuses perf_event_open (a warning,
 * the trace still written), and unknown names refused before anything
 * runs.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "unit/writer_util.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

typedef struct track_check {
  int64_t tracks;     /* process counter tracks named so */
  int64_t processes;  /* distinct processes they belong to */
  int64_t wrong_name; /* tracks under a process not named sim_app */
  int64_t samples;    /* values, all tracks */
  int64_t decreases;  /* a value below the one before on its track */
  double max;         /* the largest value */
} track_check;

/* What the trace at path holds for the process counter track `name`. */
static track_check check_track(const char *path, const char *name) {
  track_check c = {0, 0, 0, 0, 0, 0};
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(path, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, e.message);
  char sql[1024];
  snprintf(sql, sizeof(sql),
           "SELECT count(*), count(DISTINCT t.upid), "
           "sum(coalesce(p.name, '') != 'sim_app'), "
           "(SELECT count(*) FROM counter c JOIN process_counter_track x ON "
           "c.track_id = x.id WHERE x.name = '%s'), "
           "(SELECT count(*) FROM (SELECT value < lag(value) OVER (PARTITION "
           "BY track_id ORDER BY ts) AS d FROM counter c JOIN "
           "process_counter_track x ON c.track_id = x.id WHERE x.name = '%s') "
           "WHERE d), "
           "(SELECT CAST(max(value) AS REAL) FROM counter c JOIN "
           "process_counter_track x ON "
           "c.track_id = x.id WHERE x.name = '%s') "
           "FROM process_counter_track t LEFT JOIN process p USING (upid) "
           "WHERE t.name = '%s'",
           name, name, name, name);
  gp_tp_rows *rows = NULL;
  if (gp_tp_query(tp, sql, &rows, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, e.message);
  if (gp_tp_rows_next(rows, &e) == 1) {
    c.tracks = gp_tp_rows_int(rows, 0);
    c.processes = gp_tp_rows_int(rows, 1);
    c.wrong_name = gp_tp_rows_int(rows, 2);
    c.samples = gp_tp_rows_int(rows, 3);
    c.decreases = gp_tp_rows_int(rows, 4);
    c.max = gp_tp_rows_real(rows, 5);
  }
  gp_tp_rows_destroy(rows);
  gp_tp_close(tp);
  return c;
}

/* Whether this process may count itself (else the tests check the
 * warning path only). */
static bool perf_allowed(void) {
  return gp_host_perf_status(NULL, 0) == 0;
}

/* `record -e default,task-clock,context-switches` of a program that forks
 * two children (one step each) and of one whose children exec: one
 * task-clock track per process, under that process, its values never
 * decreasing, the GPU counters still there. */
TEST(record_host_counters_become_process_tracks) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "host.pftrace"));
  const char *err = strdup(gp_test_path(1, "stderr"));
  static const char *const forms[] = {"--fork 2", "--fork 2 --exec"};
  for (size_t f = 0; f < 2; f++) {
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "'%s' record -q -e default,task-clock,context-switches -o '%s' "
             "-- '%s' --steps 20 --sleep-ms 2 %s 2>'%s'",
             cli(), out, app, forms[f], err);
    int rc = wt_system(cmd);
    char *msg = wt_read_text(err);
    if (rc != 0)
      gp_test_fail(__FILE__, __LINE__, "%s: status %d\n%s", forms[f], rc, msg);
    track_check tc = check_track(out, "task-clock");
    if (!perf_allowed()) {
      ASSERT(strstr(msg, "host CPU counters not recorded"));
      ASSERT_EQ(tc.tracks, 0);
      free(msg);
      continue;
    }
    ASSERT_STR_EQ(msg, "");
    free(msg);
    ASSERT_EQ(tc.tracks, 3); /* the parent and its two children */
    ASSERT_EQ(tc.processes, 3);
    ASSERT_EQ(tc.wrong_name, 0);
    ASSERT_GE(tc.samples, 3); /* a last value each, at least */
    ASSERT_EQ(tc.decreases, 0);
    ASSERT_GT(tc.max, 1e5); /* 20 steps and a simulator: > 0.1 ms of CPU */
    track_check cs = check_track(out, "context-switches");
    ASSERT_EQ(cs.tracks, 3);
    ASSERT_EQ(cs.decreases, 0);
    ASSERT_EQ(check_track(out, "cpu-clock").tracks, 0); /* not asked for */
    /* The GPU's counters are sampled as before ("default"). */
    gp_tp *tp = NULL;
    gp_tp_error e;
    ASSERT_OK(gp_tp_open(out, NULL, &tp, &e));
    gp_tp_rows *rows = NULL;
    ASSERT_OK(
        gp_tp_query(tp, "SELECT count(*) FROM gpu_counter_track", &rows, &e));
    ASSERT_EQ(gp_tp_rows_next(rows, &e), 1);
    ASSERT_GT(gp_tp_rows_int(rows, 0), 0);
    gp_tp_rows_destroy(rows);
    gp_tp_close(tp);
  }
}

/* A config's counter_names select host counters too, globs included. */
TEST(record_config_names_host_counters) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "host.pbtxt"));
  const char *out = strdup(gp_test_path(1, "host.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  wt_write_text(cfg,
                "data_sources { config { name: \"gpu.renderstages\" } }\n"
                "data_sources { config { name: \"gpu.counters\"\n"
                "  gpu_counter_config { counter_period_ns: 20000000\n"
                "    counter_names: \"task-*\" counter_names: \"page-faults\"\n"
                "  } } }\n");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -c '%s' -o '%s' -- '%s' --steps 10 2>'%s'", cli(),
           cfg, out, app, err);
  int rc = wt_system(cmd);
  char *msg = wt_read_text(err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, msg);
  if (!perf_allowed()) {
    ASSERT(strstr(msg, "host CPU counters not recorded"));
    free(msg);
    return;
  }
  ASSERT_STR_EQ(msg, "");
  free(msg);
  track_check tc = check_track(out, "task-clock");
  ASSERT_EQ(tc.tracks, 1);
  ASSERT_EQ(tc.wrong_name, 0);
  ASSERT_EQ(tc.decreases, 0);
  ASSERT_GT(tc.max, 0);
  ASSERT_EQ(check_track(out, "page-faults").tracks, 1);
}

/* Installs a seccomp filter on the calling process that makes
 * perf_event_open fail with EACCES, as container policies do. */
static int refuse_perf_event_open(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & 0xffff)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
    return -errno;
  return 0;
}

/* Where perf_event_open is refused: the recorded process says why, once,
 * and the trace is written whole with its GPU work; record succeeds. */
TEST(record_host_counters_refused_warns_and_records) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "refused.pftrace"));
  const char *err = strdup(gp_test_path(1, "stderr"));
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -e default,task-clock -o '%s' -- '%s' --steps 5 "
           "2>'%s'",
           cli(), out, app, err);
  fflush(NULL);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (refuse_perf_event_open() != 0)
      _exit(77);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77)
    SKIP("seccomp filters are not available here");
  char *msg = wt_read_text(err);
  if (WEXITSTATUS(st) != 0)
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", WEXITSTATUS(st), msg);
  const char *want = "gpuperf: sim_app: host CPU counters not recorded: "
                     "perf_event_open() refused";
  const char *w = strstr(msg, want);
  if (!w || strstr(w + strlen(want), "host CPU counters not recorded"))
    gp_test_fail(__FILE__, __LINE__, "want one warning:\n%s", msg);
  ASSERT(strstr(msg, "seccomp"));
  ASSERT(strstr(msg, "1 process recorded"));
  free(msg);
  ASSERT_EQ(check_track(out, "task-clock").tracks, 0);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 0);
  wt_free(&t);
}

/* Unknown names still fail before the program runs: exit 2, no output. */
TEST(record_unknown_host_like_names_fail_first) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "none.pftrace"));
  const char *err = strdup(gp_test_path(1, "stderr"));
  const char *mark = strdup(gp_test_path(2, "ran"));
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -e task-clock,task-clok -o '%s' -- sh -c 'touch "
           "\"%s\"; exec \"%s\"' 2>'%s'",
           cli(), out, mark, app, err);
  ASSERT_EQ(wt_system(cmd), 2);
  char *msg = wt_read_text(err);
  ASSERT(strstr(msg, "unknown counter 'task-clok'"));
  free(msg);
  ASSERT_NE(access(out, F_OK), 0);
  ASSERT_NE(access(mark, F_OK), 0);
}
