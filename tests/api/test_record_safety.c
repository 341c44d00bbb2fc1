/*
 * test_record_safety.c - `gpuperf record` loses and destroys nothing: real
 * programs (tests/programs/sim_app and the OpenCL sample on PoCL) recorded
 * while they die by SIGKILL, SIGSEGV, abort() and _exit(), fork children
 * that _exit(), or leave detached processes behind; an output that exists
 * kept when the program cannot start; a full disk; the recorder itself
 * killed, then --recover; counter lists past the limit. The salvage of a
 * killed process's records from its page is test_record_salvage.c.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "session/sessionInt.h"
#include "tp/tputil.h"
#include "record_util.h"
#include "unit/writer_util.h"

static void sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int expected_status(const char *how) {
  if (!strcmp(how, "kill"))
    return 128 + SIGKILL;
  if (!strcmp(how, "segv"))
    return 128 + SIGSEGV;
  if (!strcmp(how, "abort"))
    return 128 + SIGABRT;
  return 0;
}

static const char *const deaths[] = {"kill", "segv", "abort", "_exit"};

/* Every step's 5 GPU events (2 kernels, 2 copies, a fill) are in the trace,
 * however the program ended 10 ms after its last step. */
TEST(record_sim_program_deaths_lose_nothing) {
  const char *app = wt_build_path("tests/programs/sim_app");
  for (size_t i = 0; i < NELEM(deaths); i++) {
    char out[1024], err[1024], cmd[4096];
    if (SANITIZED && !strcmp(deaths[i], "segv"))
      continue;
    snprintf(out, sizeof(out), "%s/%s.pftrace", gp_test_tmpdir(), deaths[i]);
    snprintf(err, sizeof(err), "%s/%s.err", gp_test_tmpdir(), deaths[i]);
    snprintf(cmd, sizeof(cmd),
             "'%s' record -o '%s' -- '%s' --steps 20 --die %s 2>'%s'", cli(),
             out, app, deaths[i], err);
    int rc = wt_system(cmd);
    char *msg = wt_read_text(err);
    if (rc != expected_status(deaths[i]))
      gp_test_fail(__FILE__, __LINE__, "--die %s: status %d\n%s", deaths[i], rc,
                   msg);
    wt_trace t;
    wt_load(&t, out);
    ASSERT_EQ(t.valid, t.size);
    wt_check_sequences(&t);
    size_t events = wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT);
    wt_free(&t);
    /* Only SIGKILL goes unseen by the process; record says so, writes
     * the records it had committed but not written (salvaged from its
     * death page, whatever the load on the machine: all its GPU work) and
     * counts what it could not (counter samples taken since its last
     * flush, if it made none: their catalogs died with it). */
    bool killed = !strcmp(deaths[i], "kill");
    ASSERT_EQ(strstr(msg, "ended without finishing") != NULL, killed);
    const char *said =
        strstr(msg, " records salvaged, lost at process death: ");
    ASSERT_EQ(said != NULL, killed);
    int64_t lost = q_trace(out, LOST_SQL);
    if (killed)
      ASSERT_EQ(lost, strtoll(said + 42, NULL, 10));
    else
      ASSERT_EQ(lost, -1); /* no such track */
    if (events != 100)
      gp_test_fail(__FILE__, __LINE__, "--die %s: %zu GPU events, want 100",
                   deaths[i], events);
    ASSERT(strstr(msg, "1 process recorded"));
    free(msg);
  }
  ASSERT_EQ(wt_entries_with(gp_test_tmpdir(), ".parts-"), 0);
}

/* SIGKILL before anything was flushed (a config with a long flush
 * period): record salvages every record the process committed (all of its
 * GPU work is in the trace); its counter samples cannot be salvaged (their
 * catalogs died with it): the trace and the report say how many records
 * that was. */
TEST(record_sigkill_salvages_what_it_committed) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "slow.pbtxt"));
  const char *out = strdup(gp_test_path(1, "lost.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  wt_write_text(cfg, "flush_period_ms: 60000\n"
                     "data_sources { config { name: \"gpu.renderstages\" } }\n"
                     "data_sources { config { name: \"gpu.counters\" } }\n");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -c '%s' -o '%s' -- '%s' --steps 20 --die kill "
           "2>'%s'",
           cli(), cfg, out, app, err);
  ASSERT_EQ(wt_system(cmd), 128 + SIGKILL);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 100);
  wt_free(&t);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM gpu_slice"), 100);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM process WHERE name = "
                         "'sim_app'"),
            1);
  /* 20 steps: 100 GPU events, 20 x 10 API calls, 40 range marks, ... */
  char *msg = wt_read_text(err);
  const char *p = strstr(msg, "): ");
  ASSERT(p);
  ASSERT_GE(strtoll(p + 3, NULL, 10), 100 + 200 + 40);
  ASSERT(strstr(p, " records salvaged, lost at process death: "));
  /* Counter samples: one or more each millisecond the program ran. */
  int64_t lost = q_trace(out, LOST_SQL);
  ASSERT_GT(lost, 0);
  char want[96];
  snprintf(want, sizeof(want), "lost at process death: %lld records",
           (long long)lost);
  ASSERT(strstr(msg, want));
  ASSERT(!strstr(msg, "nothing was recorded"));
  free(msg);
  snprintf(cmd, sizeof(cmd), "'%s' report '%s' >'%s'", cli(), out, err);
  ASSERT_EQ(wt_system(cmd), 0);
  msg = wt_read_text(err);
  snprintf(want, sizeof(want), " %lld  records processes killed by SIGKILL",
           (long long)lost);
  ASSERT(strstr(msg, want));
  free(msg);
}

/* Buffers handed over full and still queued for the collector when the
 * process dies are salvaged too (their place is in the death page's queued
 * entries, core.h). GPUPERF_TEST_HOLD_DELIVERIES=1 keeps the collector
 * from writing anything, as if each delivery came too late: 1000 steps
 * fill the 1 MiB buffers over and over, and every GPU event is in the
 * trace with nothing lost (before: 721 of 5000 events, 14,564 records
 * lost). */
TEST(record_sigkill_salvages_buffers_queued_for_writing) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "stages.pbtxt"));
  const char *out = strdup(gp_test_path(1, "held.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  wt_write_text(cfg, "flush_period_ms: 60000\n"
                     "data_sources { config { name: \"gpu.renderstages\" } "
                     "}\n");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_TEST_HOLD_DELIVERIES=1 '%s' record -c '%s' -o '%s' -- "
           "'%s' --steps 1000 --die kill 2>'%s'",
           cli(), cfg, out, app, err);
  ASSERT_EQ(wt_system(cmd), 128 + SIGKILL);
  char *msg = wt_read_text(err);
  if (!strstr(msg, " records salvaged, lost at process death: 0 records"))
    gp_test_fail(__FILE__, __LINE__, "want nothing lost:\n%s", msg);
  /* More than a buffer's worth: some were handed over, not in a cell. */
  const char *p = strstr(msg, "): ");
  ASSERT(p);
  ASSERT_GT(strtoll(p + 3, NULL, 10), 10000);
  free(msg);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  wt_free(&t);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM gpu_slice"), 5000);
  ASSERT_EQ(q_trace(out, LOST_SQL), 0);
}

/* GPU work a process queued and never saw done is not a record yet: a
 * SIGKILL then loses it, and it is counted. The last step of sim_app
 * --busy-last is left in flight (its last copy at least, which no later
 * call retires): what is missing from the trace is what is counted. */
TEST(record_sigkill_counts_gpu_work_in_flight) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "slow.pbtxt"));
  const char *out = strdup(gp_test_path(1, "busy.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  wt_write_text(cfg,
                "data_sources { config { name: \"gpu.renderstages\" } }\n");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -c '%s' -o '%s' -- '%s' --steps 20 --busy-last "
           "--die kill 2>'%s'",
           cli(), cfg, out, app, err);
  ASSERT_EQ(wt_system(cmd), 128 + SIGKILL);
  int64_t slices = q_trace(out, "SELECT count(*) FROM gpu_slice");
  int64_t lost = q_trace(out, LOST_SQL);
  ASSERT_GE(lost, 1);
  ASSERT_EQ(slices + lost, 100);
  char *msg = wt_read_text(err), want[96];
  snprintf(want, sizeof(want), "lost at process death: %lld records",
           (long long)lost);
  ASSERT(strstr(msg, want));
  free(msg);
  /* Seen deaths wait for the work in flight: nothing lost. */
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -c '%s' -o '%s' -- '%s' --steps 20 --busy-last "
           "--die abort 2>/dev/null",
           cli(), cfg, out, app);
  ASSERT_EQ(wt_system(cmd), 128 + SIGABRT);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM gpu_slice"), 100);
  ASSERT_EQ(q_trace(out, LOST_SQL), -1);
}

/* A child forked after recording started counts into a page of its own
 * and its records are salvaged from it: its SIGKILL costs nothing, and the
 * parent's records are not mixed up with it. */
TEST(record_late_forked_child_counts_its_own_loss) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "slow.pbtxt"));
  const char *out = strdup(gp_test_path(1, "late.pftrace"));
  wt_write_text(cfg,
                "flush_period_ms: 60000\n"
                "data_sources { config { name: \"gpu.renderstages\" } }\n");
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -c '%s' -o '%s' -- '%s' --steps 20 --late-fork "
           "--child-die kill 2>/dev/null",
           cli(), cfg, out, app);
  ASSERT_EQ(wt_system(cmd), 5); /* sim_app: a child did not exit 0 */
  /* The parent: 1 + 20 steps. The child: its 20, salvaged, on its own
   * process. */
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM gpu_slice"), 41 * 5);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM counter_track WHERE name = "
                         "'gpuperf lost at process death'"),
            1);
  ASSERT_EQ(q_trace(out, LOST_SQL), 0);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM process WHERE name = "
                         "'sim_app'"),
            2);
  /* Each process's API calls and ranges on its own threads (191 for
   * 20 steps). */
  ASSERT_EQ(q_trace(out, "SELECT min(n) >= 191 FROM (SELECT count(*) AS n "
                         "FROM slice JOIN thread_track tt ON slice.track_id = "
                         "tt.id JOIN thread USING (utid) GROUP BY upid)"),
            1);
}

/* The OpenCL sample, preloaded: the trace holds every command it counted. */
static void check_opencl_death(const char *how, const char *child_how) {
  if (SANITIZED)
    SKIP("gpuperf record preloads nothing in a sanitizer build");
  char sample[1024], out[1024], err[1024], so[1024], cmd[8192];
  snprintf(sample, sizeof(sample), "%s", wt_build_path("tests/opencl-sample"));
  snprintf(out, sizeof(out), "%s/ocl-%s.pftrace", gp_test_tmpdir(), how);
  snprintf(err, sizeof(err), "%s/ocl-%s.err", gp_test_tmpdir(), how);
  snprintf(so, sizeof(so), "%s/ocl-%s.out", gp_test_tmpdir(), how);
  snprintf(cmd, sizeof(cmd),
           "POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 "
           "'%s' record -o '%s' -- '%s' -n 2 %s %s --die %s >'%s' 2>'%s'",
           cli(), out, sample, child_how ? "--fork --child-die" : "",
           child_how ? child_how : "", how, so, err);
  int rc = wt_system(cmd);
  if (rc == 77)
    SKIP("no OpenCL device");
  char *msg = wt_read_text(err), *printed = wt_read_text(so);
  if (rc != expected_status(how))
    gp_test_fail(__FILE__, __LINE__, "--die %s: status %d\n%s", how, rc, msg);
  uint64_t commands = 0;
  for (const char *l = printed; (l = strstr(l, " count commands=")); l++)
    commands += strtoull(l + strlen(" count commands="), NULL, 10);
  ASSERT_GT(commands, 0);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(out, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", out, e.message);
  gp_tp_rows *rows = NULL;
  ASSERT_OK(gp_tp_query(tp, GPU_WORK_SQL, &rows, &e));
  ASSERT_EQ(gp_tp_rows_next(rows, &e), 1);
  int64_t slices = gp_tp_rows_int(rows, 0);
  gp_tp_rows_destroy(rows);
  gp_tp_close(tp);
  /* SIGKILL: what the process had committed is salvaged by record (all
   * its GPU work), and the trace says what was lost (counter samples
   * only). */
  int64_t lost = q_trace(out, LOST_SQL);
  if (!strcmp(how, "kill"))
    ASSERT_GE(lost, 0);
  else
    ASSERT_EQ(lost, -1);
  if ((uint64_t)slices != commands)
    gp_test_fail(__FILE__, __LINE__,
                 "--die %s: %lld GPU slices in the trace, the sample made "
                 "%llu commands\n%s",
                 how, (long long)slices, (unsigned long long)commands, msg);
  free(msg);
  free(printed);
}

TEST(record_opencl_program_deaths_lose_nothing) {
  for (size_t i = 0; i < NELEM(deaths); i++)
    check_opencl_death(deaths[i], NULL);
}

/* An OpenCL program SIGKILLed with 4 long kernels queued (PoCL): the
 * commands it saw complete are in the trace, the ones it never saw
 * complete are counted as lost, in the trace and in record's message.
 * (No exit() counterpart: PoCL itself crashes now and then when a program
 * exits with a kernel running, recorded or not.) */
TEST(record_opencl_sigkill_counts_work_in_flight) {
  if (SANITIZED)
    SKIP("gpuperf record preloads nothing in a sanitizer build");
  const char *sample = wt_build_path("tests/opencl-sample");
  const char *cfg = strdup(gp_test_path(0, "rs.pbtxt"));
  const char *out = strdup(gp_test_path(1, "busy.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  const char *so = strdup(gp_test_path(3, "stdout"));
  wt_write_text(cfg,
                "data_sources { config { name: \"gpu.renderstages\" } }\n");
  char cmd[8192];
  snprintf(cmd, sizeof(cmd),
           "POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 "
           "'%s' record -c '%s' -o '%s' -- '%s' -n 2 --busy-last 4 "
           "--die kill >'%s' 2>'%s'",
           cli(), cfg, out, sample, so, err);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = wt_system(cmd);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  int64_t wall =
      (t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec);
  if (rc == 77)
    SKIP("no OpenCL device");
  char *msg = wt_read_text(err), *printed = wt_read_text(so);
  if (rc != 128 + SIGKILL)
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, msg);
  const char *c = strstr(printed, " count commands=");
  ASSERT_NOT_NULL(c);
  int64_t commands = strtoll(c + strlen(" count commands="), NULL, 10);
  ASSERT_GT(commands, 0);
  ASSERT_NOT_NULL(strstr(printed, "count busy=4"));
  int64_t slices = q_trace(out, GPU_WORK_SQL);
  int64_t lost = q_trace(out, LOST_SQL);
  /* A spin takes ~0.1 s per kernel and the kill comes 10 ms after the
   * enqueue: at most one of them can have completed. */
  ASSERT_GE(lost, 3);
  ASSERT_EQ(slices + lost, commands + 4);
  char want[96];
  snprintf(want, sizeof(want), "lost at process death: %lld records",
           (long long)lost);
  if (!strstr(msg, want))
    gp_test_fail(__FILE__, __LINE__, "want '%s' in:\n%s", want, msg);
  /* On the real clock (issue 35's D1): the trace's window lies within
   * the recording's own run, and the loss is counted inside it, at the
   * process's last packet. */
  int64_t window = q_trace(out, "SELECT end_ts - start_ts FROM trace_bounds");
  if (window <= 0 || window > wall)
    gp_test_fail(__FILE__, __LINE__,
                 "trace window %lld ns, the recording ran %lld ns",
                 (long long)window, (long long)wall);
  ASSERT_EQ(q_trace(out, "SELECT count(*) FROM counter c JOIN counter_track "
                         "t ON c.track_id = t.id, trace_bounds b WHERE "
                         "t.name = 'gpuperf lost at process death' AND "
                         "c.ts >= b.start_ts AND c.ts <= b.end_ts"),
            1);
  /* Perfetto's trace processor finds nothing wrong with it. */
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (shell && access(shell, X_OK) == 0) {
    char *st = tp_perfetto_csv(shell, out,
                               "SELECT name, idx, value FROM stats WHERE "
                               "severity IN ('error', 'data_loss') AND "
                               "value > 0");
    if (strcmp(st, "\"name\",\"idx\",\"value\"\n") != 0)
      gp_test_fail(__FILE__, __LINE__, "Perfetto's stats:\n%s", st);
    free(st);
  }
  free(msg);
  free(printed);
}

/* Forked children that _exit(): the simulated GPUs and OpenCL. */
TEST(record_forked_children_that_exit_are_whole) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "fork.pftrace"));
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -o '%s' -- '%s' --steps 10 --fork 2 "
           "--child-die _exit",
           cli(), out, app);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  wt_check_sequences(&t);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT),
            3 * 10 * 5);
  wt_free(&t);
  check_opencl_death("exit", "_exit");
}

/* A process the program leaves running is named, and says nothing later
 * about a recording that is over. */
TEST(record_names_detached_processes) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "detach.pftrace"));
  const char *err = strdup(gp_test_path(1, "stderr"));
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -o '%s' -- '%s' --steps 3 --detach-ms 400 2>'%s'",
           cli(), out, app, err);
  ASSERT_EQ(wt_system(cmd), 0);
  sleep_ms(900); /* the detached process has done its work by now */
  char *msg = wt_read_text(err);
  ASSERT(strstr(msg, "was left running by the program: its GPU work from "
                     "now on is not recorded"));
  ASSERT(!strstr(msg, "cannot read"));
  free(msg);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 15);
  wt_free(&t);
}

/* An output that exists is never destroyed: kept as it was when the
 * program cannot start, kept as FILE.old when a new trace replaces it. */
TEST(record_keeps_an_existing_output) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "keep.pftrace"));
  FILE *f = fopen(out, "w");
  fputs("precious", f);
  fclose(f);
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -o '%s' -- /nonexistent/prog 2>/dev/null", cli(), out);
  ASSERT_EQ(wt_system(cmd), 127);
  char *s = wt_read_text(out);
  ASSERT_STR_EQ(s, "precious");
  free(s);
  ASSERT_EQ(wt_entries_with(gp_test_tmpdir(), ".parts-"), 0);
  /* A folder that cannot be written: a clear error, exit 2. */
  snprintf(cmd, sizeof(cmd), "'%s' record -o '%s/x.pftrace' -- '%s' 2>'%s.err'",
           cli(), out, app, out);
  ASSERT_EQ(wt_system(cmd), 2);
  char errp[1100];
  snprintf(errp, sizeof(errp), "%s.err", out);
  s = wt_read_text(errp);
  ASSERT(strstr(s, "cannot create a folder next to"));
  free(s);
  /* A new trace: the old file becomes keep.pftrace.old. */
  snprintf(cmd, sizeof(cmd), "'%s' record -q -o '%s' -- '%s' --steps 2", cli(),
           out, app);
  ASSERT_EQ(wt_system(cmd), 0);
  char old[1100];
  snprintf(old, sizeof(old), "%s.old", out);
  s = wt_read_text(old);
  ASSERT_STR_EQ(s, "precious");
  free(s);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 10);
  wt_free(&t);
}

/* A 200 KiB file system: exit 2, one line naming the file, and what was
 * written is a readable trace. */
TEST(record_full_disk_is_an_error) {
  const char *app = wt_build_path("tests/programs/sim_app");
  char mnt[1024];
  snprintf(mnt, sizeof(mnt), "%s/small", gp_test_tmpdir());
  ASSERT_EQ(mkdir(mnt, 0755), 0);
  if (mount("gpuperf-test", mnt, "tmpfs", 0, "size=200k") != 0)
    SKIP("cannot mount a small tmpfs (%s): needs root", strerror(errno));
  char out[1100], err[1100], cmd[4096];
  snprintf(out, sizeof(out), "%s/full.pftrace", mnt);
  snprintf(err, sizeof(err), "%s/stderr", gp_test_tmpdir());
  snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- '%s' --steps 600 2>'%s'",
           cli(), out, app, err);
  int rc = wt_system(cmd);
  char *msg = wt_read_text(err);
  wt_trace t;
  memset(&t, 0, sizeof(t));
  bool have = access(out, R_OK) == 0;
  if (have)
    wt_load(&t, out);
  umount2(mnt, MNT_DETACH);
  if (rc != 2)
    gp_test_fail(__FILE__, __LINE__, "status %d, want 2\n%s", rc, msg);
  ASSERT(strcasestr(msg, "no space left"));
  ASSERT(strstr(msg, "full.pftrace"));
  ASSERT(!strstr(msg, "written to"));
  if (have) {
    ASSERT_EQ(t.valid, t.size); /* whole packets only */
    wt_free(&t);
  }
  free(msg);
}

/* Runs argv (stdout and stderr to /dev/null); its exit status. */
static int run_quietly(char *const *argv) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      _exit(126);
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The parts folder beside out (out.parts-XXXXXX) into buf; false if none. */
static bool parts_of(const char *dir, char *buf, size_t size) {
  DIR *d = opendir(dir);
  struct dirent *e;
  bool found = false;
  while (d && !found && (e = readdir(d)) != NULL)
    if (strstr(e->d_name, ".parts-")) {
      snprintf(buf, size, "%s/%s", dir, e->d_name);
      found = true;
    }
  if (d)
    closedir(d);
  return found;
}

/* -o naming a folder: said before the program runs, nothing left. */
TEST(record_output_folder_is_refused_first) {
  char dir[1100], parts[1300], cmd[4096];
  snprintf(dir, sizeof(dir), "%s/out", gp_test_tmpdir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  char *argv[] = {(char *)cli(), "record", "-o", dir, "--", "/bin/true", NULL};
  ASSERT_EQ(run_quietly(argv), 1);
  ASSERT(!parts_of(gp_test_tmpdir(), parts, sizeof(parts)));
  snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q 'out\\.' && exit 1; exit 0",
           gp_test_tmpdir());
  ASSERT_EQ(wt_system(cmd), 0);
}

/* A full disk while the parts are joined (issue 35's D2): the previous
 * output stays as it was; what was written, whole packets only, is kept
 * beside it; the RECOVER note's command (its paths quoted for the shell,
 * one with a quote in it) makes the trace once there is room, and the
 * previous file is then kept as .old. */
TEST(record_full_disk_keeps_the_previous_output) {
  const char *app = wt_build_path("tests/programs/sim_app");
  char mnt[1024];
  snprintf(mnt, sizeof(mnt), "%s/small", gp_test_tmpdir());
  ASSERT_EQ(mkdir(mnt, 0755), 0);
  if (mount("gpuperf-test", mnt, "tmpfs", 0, "size=2m") != 0)
    SKIP("cannot mount a small tmpfs (%s): needs root", strerror(errno));
  char out[1100], filler[1100], partial[1200], cmd[4096], parts[1300];
  snprintf(out, sizeof(out), "%s/it's.pftrace", mnt);
  snprintf(filler, sizeof(filler), "%s/filler", mnt);
  snprintf(partial, sizeof(partial), "%s.partial", out);
  FILE *f = fopen(filler, "wb");
  ASSERT(f != NULL);
  static char zero[1024];
  for (int i = 0; i < 1100; i++)
    fwrite(zero, 1, sizeof(zero), f);
  fclose(f);
  f = fopen(out, "w");
  ASSERT(f != NULL);
  fputs("precious\n", f);
  ASSERT_EQ(fclose(f), 0);
  char *argv[] = {(char *)cli(), "record",  "-o",  out, "--",
                  (char *)app,   "--steps", "400", NULL};
  int rc = run_quietly(argv);
  char *kept = wt_read_text(out);
  wt_trace t;
  memset(&t, 0, sizeof(t));
  bool have_partial = access(partial, R_OK) == 0;
  if (have_partial)
    wt_load(&t, partial);
  bool have_parts = parts_of(mnt, parts, sizeof(parts));
  char note[1400], *recover = NULL;
  snprintf(note, sizeof(note), "%s/RECOVER", parts);
  if (have_parts)
    recover = wt_read_text(note);
  unlink(filler);
  unlink(partial);
  int rrc = -1;
  char *line = recover ? strstr(recover, "gpuperf record --recover") : NULL;
  if (line) {
    char *nl = strchr(line, '\n');
    if (nl)
      *nl = '\0';
    /* The note's command as a user pastes it, with our CLI for "gpuperf". */
    snprintf(cmd, sizeof(cmd), "'%s' %s", cli(), line + strlen("gpuperf "));
    rrc = wt_system(cmd);
  }
  char old[1200];
  snprintf(old, sizeof(old), "%s.old", out);
  char *old_text = wt_read_text(old);
  wt_trace r;
  memset(&r, 0, sizeof(r));
  bool have_new = rrc == 0 && access(out, R_OK) == 0;
  if (have_new)
    wt_load(&r, out);
  umount2(mnt, MNT_DETACH);
  ASSERT_EQ(rc, 2);
  ASSERT(kept && strcmp(kept, "precious\n") == 0);
  if (have_partial) {
    ASSERT_EQ(t.valid, t.size); /* whole packets only */
    ASSERT_GT(t.valid, 0);
    wt_free(&t);
  }
  ASSERT(have_parts);
  ASSERT(line != NULL);
  ASSERT_EQ(rrc, 0);
  ASSERT(old_text && strcmp(old_text, "precious\n") == 0);
  ASSERT(have_new);
  ASSERT_EQ(r.valid, r.size);
  ASSERT_GT(r.size, 1000);
  wt_free(&r);
  free(kept);
  free(recover);
  free(old_text);
}

/* The recorder SIGKILLed: the program is told (SIGTERM, on which it
 * finishes its part), and --recover makes the trace from the parts. */
TEST(record_killed_recorder_can_be_recovered) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "killed.pftrace"));
  const char *pidfile = strdup(gp_test_path(1, "pid"));
  fflush(NULL);
  pid_t rec = fork();
  ASSERT(rec >= 0);
  if (rec == 0) {
    execl(cli(), "gpuperf", "record", "-q", "-o", out, "--", app, "--forever",
          "--sleep-ms", "2", "--pidfile", pidfile, (char *)NULL);
    _exit(127);
  }
  int app_pid = 0;
  for (int i = 0; i < 500 && app_pid == 0; i++) {
    FILE *f = fopen(pidfile, "r");
    if (f) {
      if (fscanf(f, "%d", &app_pid) != 1)
        app_pid = 0;
      fclose(f);
    }
    if (!app_pid)
      sleep_ms(10);
  }
  ASSERT_GT(app_pid, 0);
  sleep_ms(300);
  ASSERT_EQ(kill(rec, SIGKILL), 0);
  int st;
  ASSERT_EQ(waitpid(rec, &st, 0), rec);
  /* The program ends too (it is not our child: watch its /proc entry). */
  char proc[64], state[256] = "";
  snprintf(proc, sizeof(proc), "/proc/%d/stat", app_pid);
  for (int i = 0; i < 300; i++) {
    FILE *f = fopen(proc, "r");
    if (!f)
      break;
    bool gone = fgets(state, sizeof(state), f) && strstr(state, ") Z");
    fclose(f);
    if (gone)
      break;
    sleep_ms(10);
  }
  ASSERT(access(proc, F_OK) != 0 || strstr(state, ") Z"));
  ASSERT_NE(access(out, F_OK), 0); /* nothing half-made under the name */
  /* The parts folder, with a note saying what to do. */
  char dir[1100] = "", cmd[4096];
  DIR *d = opendir(gp_test_tmpdir());
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strstr(e->d_name, "killed.pftrace.parts-"))
      snprintf(dir, sizeof(dir), "%s/%s", gp_test_tmpdir(), e->d_name);
  closedir(d);
  ASSERT(dir[0]);
  char note[1200];
  snprintf(note, sizeof(note), "%s/RECOVER", dir);
  char *s = wt_read_text(note);
  ASSERT(strstr(s, "gpuperf record --recover"));
  free(s);
  snprintf(cmd, sizeof(cmd), "'%s' record --recover '%s' 2>/dev/null", cli(),
           dir);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 50);
  wt_free(&t);
  ASSERT_NE(access(dir, F_OK), 0);
  /* Nothing to recover: a clear error. */
  ASSERT_EQ(wt_system(cmd), 2);
}

/* 65 and 1000 counters, in a config and in -e: a clear error (exit 2),
 * nothing run; 64 work. The library refuses them too. */
TEST(record_counter_lists_are_bounded) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "many.pbtxt"));
  const char *out = strdup(gp_test_path(1, "many.pftrace"));
  const char *err = strdup(gp_test_path(2, "stderr"));
  static const unsigned counts[] = {64, 65, 1000};
  for (size_t i = 0; i < NELEM(counts); i++) {
    FILE *f = fopen(cfg, "w");
    fprintf(f, "data_sources { config { name: \"gpu.counters\"\n"
               "  gpu_counter_config {\n");
    for (unsigned k = 0; k < counts[i]; k++)
      fprintf(f, "    counter_names: \"%s\"\n",
              k % 2 ? "Utilization" : "gpu__time_duration.sum");
    fprintf(f, "  } } }\n");
    fclose(f);
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "'%s' record -q -c '%s' -o '%s' -- '%s' 2>'%s'",
             cli(), cfg, out, app, err);
    int rc = wt_system(cmd);
    char *msg = wt_read_text(err);
    if (counts[i] <= GP_TRACE_CONFIG_MAX_COUNTERS) {
      ASSERT_EQ(rc, 0);
    } else {
      ASSERT_EQ(rc, 2);
      ASSERT(strstr(msg, "counter_names: more than 64 in one data source"));
    }
    free(msg);
    /* The same names with -e. */
    size_t len = (size_t)counts[i] * 24 + 1;
    char *names = malloc(len), *p = names;
    for (unsigned k = 0; k < counts[i]; k++)
      p += sprintf(p, "%s%s", k ? "," : "",
                   k % 2 ? "Utilization" : "gpu__time_duration.sum");
    char *ecmd = malloc(len + 2048);
    snprintf(ecmd, len + 2048, "'%s' record -q -e '%s' -o '%s' -- '%s' 2>'%s'",
             cli(), names, out, app, err);
    rc = wt_system(ecmd);
    msg = wt_read_text(err);
    if (counts[i] <= GP_TRACE_CONFIG_MAX_COUNTERS) {
      ASSERT_EQ(rc, 0);
    } else {
      ASSERT_EQ(rc, 2);
      ASSERT(strstr(msg, "-e: more than 64 counter names"));
    }
    free(msg);
    /* The library's own limit. */
    gp_trace_config *c = NULL;
    ASSERT_OK(gp_trace_config_default(&c));
    int arc = gp_trace_config_add_counters(c, names);
    ASSERT_EQ(arc, counts[i] <= GP_TRACE_CONFIG_MAX_COUNTERS ? 0 : GP_ERANGE);
    gp_trace_config_destroy(c);
    free(names);
    free(ecmd);
  }
}

/* `gpuperf stat` of a program that crashes, aborts or _exit()s still
 * prints its counts, and exits with the program's status. */
TEST(stat_of_a_dying_program_prints_its_counts) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *err = strdup(gp_test_path(0, "stderr"));
  for (size_t i = 0; i < NELEM(deaths); i++) {
    if (!strcmp(deaths[i], "kill") || (SANITIZED && !strcmp(deaths[i], "segv")))
      continue; /* SIGKILL: nothing in the process can count */
    char cmd[4096];
    snprintf(cmd, sizeof(cmd), "'%s' stat -- '%s' --steps 5 --die %s 2>'%s'",
             cli(), app, deaths[i], err);
    int rc = wt_system(cmd);
    char *msg = wt_read_text(err);
    if (rc != expected_status(deaths[i]) ||
        !strstr(msg, "kernel consume: 5 launches"))
      gp_test_fail(__FILE__, __LINE__, "--die %s: status %d\n%s", deaths[i], rc,
                   msg);
    free(msg);
  }
}
