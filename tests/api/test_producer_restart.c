/*
 * test_producer_restart.c - the producer through a restart of the tracing
 * service, and in one trace with Perfetto's own data sources: against
 * tests/programs/perfetto_peer everywhere, and against Perfetto's traced,
 * traced_probes, perfetto and trace_processor_shell where
 * GPUPERF_PERFETTO_BIN names a folder holding them. Every test stops only
 * the processes it started, by the PID it got.
 *
 * What "lost" means here (docs/perfetto.md): the packets a program wrote
 * that no service took, from the moment its service went away until a
 * new one started its data sources again. They are counted, and the
 * trace of the new service holds the count as the counter "gpuperf lost
 * while no tracing service". What the dead service had taken and not
 * written out is its own loss: `perfetto` writes no file at all for a
 * session whose service died, unless the config has write_into_file,
 * and then the file holds what the service wrote before it died.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "unit/writer_util.h"

#define SANITIZED GP_TEST_SANITIZED
#define LOST_TRACK "gpuperf lost while no tracing service"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

/* The folder of Perfetto's binaries, or a skip. */
static const char *perfetto_bin(void) {
  const char *bin = getenv("GPUPERF_PERFETTO_BIN");
  if (!bin || !*bin)
    SKIP("GPUPERF_PERFETTO_BIN is not set (a folder with Perfetto's traced, "
         "traced_probes, perfetto and trace_processor_shell)");
  return bin;
}

/* The first cell of sql on trace, by Perfetto's trace_processor_shell
 * (GPUPERF_PERFETTO_TP, else the one in GPUPERF_PERFETTO_BIN). */
static int64_t ptp_one(const char *trace, const char *sql) {
  const char *tp = getenv("GPUPERF_PERFETTO_TP");
  char shell[1200], cmd[8192], line[512] = "";
  if (!tp || !*tp) {
    snprintf(shell, sizeof(shell), "%s/trace_processor_shell", perfetto_bin());
    tp = shell;
  }
  snprintf(cmd, sizeof(cmd), "'%s' -Q \"%s\" '%s' 2>/dev/null | tail -n 1", tp,
           sql, trace);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  if (!fgets(line, sizeof(line), p))
    line[0] = '\0';
  pclose(p);
  return strtoll(line, NULL, 10);
}

static void test_dir(char *dir, size_t size, const char *name) {
  snprintf(dir, size, "%s/%s", gp_test_tmpdir(), name);
  mkdir(dir, 0755);
}

static void fail_with_logs(const char *dir, int status, const char *what) {
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && for f in *.out *.err *.log; do [ -s \"$f\" ] && "
           "{ echo \"== $f\"; tail -n 20 \"$f\"; }; done >&2",
           dir);
  wt_system(cmd);
  gp_test_fail(__FILE__, __LINE__, "%s: status %d", what, status);
}

/* sim_app does five GPU operations a step (two kernels, two copies, a
 * fill): each is one slice. */
#define STEPS 1500

/* The peer is ended (as a service that dies: it takes nothing more, and
 * what it had read is in its trace), a second one comes on the same
 * socket, and the program, which ran on, registers with it. Nothing
 * vanishes uncounted: the slices of both traces and the packets counted
 * lost cover every slice the program made. */
TEST(producer_reconnects_to_a_restarted_peer) {
  char dir[1024], app[1024], peer[1024], cmd[16384];
  test_dir(dir, sizeof(dir), "restart-peer");
  snprintf(app, sizeof(app), "%s", wt_build_path("tests/programs/sim_app"));
  snprintf(peer, sizeof(peer), "%s",
           wt_build_path("tests/programs/perfetto_peer"));
  snprintf(cmd, sizeof(cmd),
           "cd '%s' || exit 2; rm -f r1 r2 g1 pid t1.pftrace t2.pftrace; "
           "wait_for() { i=0; while ! eval \"$1\" && [ $i -lt 3000 ]; do "
           "sleep 0.01; i=$((i+1)); done; }; "
           "'%s' --socket p.sock --out t1.pftrace --ready r1 --got g1 --source "
           "gpu.renderstages >p1.out 2>p1.err & P1=$!; wait_for '[ -e r1 ]'; "
           "PERFETTO_PRODUCER_SOCK_NAME=p.sock GPUPERF_PRODUCER=perfetto '%s' "
           "--steps %d --sleep-ms 5 --pidfile pid >/dev/null 2>app.err & A=$!; "
           "wait_for '[ -s pid ]'; wait_for '[ -e g1 ]'; sleep 0.2; "
           "kill -TERM $P1; wait $P1 || exit 3; "
           "wait_for 'grep -q \"went away\" app.err'; sleep 0.3; "
           "'%s' --socket p.sock --out t2.pftrace --ready r2 --source "
           "gpu.renderstages >p2.out 2>p2.err & P2=$!; "
           "wait $A; S=$?; wait $P2; W=$?; [ $S -ne 0 ] && exit 10; exit $W",
           dir, peer, app, STEPS, peer);
  int status = wt_system(cmd);
  if (status != 0)
    fail_with_logs(dir, status, "the restart");
  char t1[1100], t2[1100], err[1100];
  snprintf(t1, sizeof(t1), "%s/t1.pftrace", dir);
  snprintf(t2, sizeof(t2), "%s/t2.pftrace", dir);
  snprintf(err, sizeof(err), "%s/app.err", dir);
  int64_t s1 = wt_tp_one(t1, "SELECT count(*) FROM gpu_slice");
  int64_t s2 = wt_tp_one(t2, "SELECT count(*) FROM gpu_slice");
  int64_t lost =
      wt_tp_one(t2, "SELECT sum(c.value) FROM counter c JOIN "
                    "counter_track t ON c.track_id = t.id WHERE t.name "
                    "= '" LOST_TRACK "'");
  ASSERT_GT(s1, 0);
  ASSERT_GT(s2, 0);
  ASSERT_GT(lost, 0);
  ASSERT_LT(s1 + s2, 5 * STEPS);
  ASSERT_GE(s1 + s2 + lost, 5 * STEPS);
  char *e = wt_read_text(err);
  ASSERT(strstr(e, "packets were lost while no tracing service") != NULL);
  free(e);
  ASSERT_EQ(wt_tp_one(t2, "SELECT count(*) FROM stats WHERE severity IN "
                          "('error', 'data_loss') AND value > 0"),
            0);
  wt_trace t;
  wt_load(&t, t2);
  wt_check_sequences(&t);
  wt_free(&t);
}

/* The counters daemon runs through the restart and serves the second
 * peer too. */
TEST(producer_daemon_reconnects_to_a_restarted_peer) {
  char dir[1024], peer[1024], root[1024], cmd[16384];
  if (!getcwd(root, sizeof(root)) ||
      access("tests/data/linux/amdgpu", F_OK) != 0)
    SKIP("the DRM fixture is not found (run from the source tree)");
  test_dir(dir, sizeof(dir), "restart-daemon");
  snprintf(peer, sizeof(peer), "%s",
           wt_build_path("tests/programs/perfetto_peer"));
  snprintf(cmd, sizeof(cmd),
           "cd '%s' || exit 2; rm -f r1 r2; "
           "wait_for() { i=0; while ! eval \"$1\" && [ $i -lt 3000 ]; do "
           "sleep 0.01; i=$((i+1)); done; }; "
           "'%s' --socket p.sock --out t1.pftrace --ready r1 --source "
           "gpu.counters >p1.out 2>p1.err & P1=$!; wait_for '[ -e r1 ]'; "
           "PERFETTO_PRODUCER_SOCK_NAME=p.sock GPUPERF_SYSROOT='%s/tests/data/"
           "linux/amdgpu' '%s' producer >daemon.out 2>daemon.err & D=$!; "
           "sleep 1; kill -TERM $P1; wait $P1 || exit 3; "
           "wait_for 'grep -q \"went away\" daemon.err'; "
           "'%s' --socket p.sock --out t2.pftrace --ready r2 --source "
           "gpu.counters --stop-after-ms 1000 >p2.out 2>p2.err & P2=$!; "
           "wait $P2; W=$?; kill -INT $D; wait $D; S=$?; "
           "[ $S -ne 0 ] && exit 10; exit $W",
           dir, peer, root, cli(), peer);
  int status = wt_system(cmd);
  if (status != 0)
    fail_with_logs(dir, status, "the daemon's restart");
  char t1[1100], t2[1100], out[1100];
  snprintf(t1, sizeof(t1), "%s/t1.pftrace", dir);
  snprintf(t2, sizeof(t2), "%s/t2.pftrace", dir);
  snprintf(out, sizeof(out), "%s/daemon.out", dir);
  static const char busy[] =
      "SELECT count(*) FROM counter c JOIN gpu_counter_track t ON "
      "c.track_id = t.id WHERE t.name = 'engine-gfx-busy'";
  ASSERT_GT(wt_tp_one(t1, busy), 0);
  ASSERT_GT(wt_tp_one(t2, busy), 0);
  char *o = wt_read_text(out);
  ASSERT(strstr(o, " 1 reconnects") != NULL);
  free(o);
}

/* ------------------------------------------------------------------ */
/* Against Perfetto's own service                                       */

/* Writes a trace config into dir/name. */
static void write_config(const char *dir, const char *name, const char *text) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fputs(text, f);
  fclose(f);
}

/* The config of the restart tests: traced writes the file every 500 ms
 * and flushes the producers as often, so what it took before it dies is
 * in the first file. */
#define RESTART_CONFIG(sources)                                                \
  "buffers { size_kb: 32768 fill_policy: RING_BUFFER }\n"                      \
  "duration_ms: 120000\n"                                                      \
  "write_into_file: true\n"                                                    \
  "file_write_period_ms: 500\n"                                                \
  "flush_period_ms: 500\n" sources

/* The shell around a restart of traced: $B the binaries; the socket
 * variables exported; traced 1 and `perfetto` 1 started; $PROG (which
 * must write file pid once it works) started in the background; traced 1
 * killed by SIGKILL once it works; traced 2 and `perfetto` 2 started once
 * $PROG_ERR says the service went away; $PROG waited for; `perfetto` 2
 * ended by SIGINT, traced 2 by SIGTERM. Exit status: $PROG's, else
 * `perfetto` 2's. */
#define RESTART_SHELL                                                          \
  "wait_for() { i=0; while ! eval \"$1\" && [ $i -lt 3000 ]; do sleep 0.01; "  \
  "i=$((i+1)); done; }; "                                                      \
  "export PERFETTO_PRODUCER_SOCK_NAME=$PWD/p.sock "                            \
  "PERFETTO_CONSUMER_SOCK_NAME=$PWD/c.sock; "                                  \
  "\"$B/traced\" >traced1.log 2>&1 & T1=$!; wait_for '[ -S c.sock ]'; "        \
  "\"$B/perfetto\" --txt -c config.txt -o t1.pftrace >perfetto1.log 2>&1 & "   \
  "C1=$!; sleep 1; eval \"$PROG\" & A=$!; wait_for '[ -s pid ]'; sleep 1.5; "  \
  "kill -KILL $T1; wait $T1; wait $C1; "                                       \
  "wait_for \"grep -q 'went away' $PROG_ERR\"; rm -f c.sock; "                 \
  "\"$B/traced\" >traced2.log 2>&1 & T2=$!; wait_for '[ -S c.sock ]'; "        \
  "\"$B/perfetto\" --txt -c config.txt -o t2.pftrace >perfetto2.log 2>&1 & "   \
  "C2=$!; wait $A; S=$?; sleep 1; kill -INT $C2; wait $C2; W=$?; "             \
  "kill -TERM $T2; wait $T2; [ $S -ne 0 ] && exit 10; exit $W"

/* traced killed and started again while a program works, under
 * GPUPERF_PRODUCER=perfetto: the program is unharmed, the first file
 * holds what traced wrote of it, the second what came after the
 * producer connected again, and the count of what was lost between. */
TEST(producer_survives_a_restart_of_perfettos_service) {
  const char *bin = perfetto_bin();
  char dir[1024], app[1024], cmd[16384];
  test_dir(dir, sizeof(dir), "restart-traced");
  snprintf(app, sizeof(app), "%s", wt_build_path("tests/programs/sim_app"));
  write_config(dir, "config.txt",
               RESTART_CONFIG("data_sources { config { name: "
                              "\"gpu.renderstages\" } }\n"));
  snprintf(
      cmd, sizeof(cmd),
      "cd '%s' || exit 2; rm -f pid *.pftrace *.sock; B='%s'; "
      "PROG=\"GPUPERF_PRODUCER=perfetto '%s' --steps %d --sleep-ms 5 "
      "--pidfile pid >/dev/null 2>app.err\"; PROG_ERR=app.err; " RESTART_SHELL,
      dir, bin, app, STEPS);
  int status = wt_system(cmd);
  if (status != 0)
    fail_with_logs(dir, status, "the restart of traced");
  char t1[1100], t2[1100];
  snprintf(t1, sizeof(t1), "%s/t1.pftrace", dir);
  snprintf(t2, sizeof(t2), "%s/t2.pftrace", dir);
  int64_t s1 = ptp_one(t1, "SELECT count(*) FROM gpu_slice");
  int64_t s2 = ptp_one(t2, "SELECT count(*) FROM gpu_slice");
  int64_t lost = ptp_one(t2, "SELECT cast(sum(c.value) AS int) FROM counter "
                             "c JOIN counter_track t ON c.track_id = t.id "
                             "WHERE t.name = '" LOST_TRACK "'");
  printf("traced restart: %lld slices in the first file, %lld in the "
         "second, %lld packets counted lost, of %d slices made\n",
         (long long)s1, (long long)s2, (long long)lost, 5 * STEPS);
  ASSERT_GT(s1, 0);
  ASSERT_GT(s2, 0);
  ASSERT_GT(lost, 0);
  ASSERT_LT(s1 + s2, 5 * STEPS);
  /* No error in Perfetto's reading of the second file, but for the
   * writer's counter value at time 0 (issue 27, item 4: the writer's, not
   * the producer's, and fixed apart). */
  ASSERT_EQ(ptp_one(t2, "SELECT count(*) FROM stats WHERE severity = "
                        "'error' AND value > 0 AND name != "
                        "'track_event_missing_timestamp'"),
            0);
}

/* The same for `gpuperf record --producer` and the counters daemon at
 * once: both connect again and are served by the second traced. */
TEST(producer_record_and_daemon_survive_a_restart_of_perfettos_service) {
  if (SANITIZED)
    SKIP("gpuperf record preloads nothing in a sanitizer build");
  const char *bin = perfetto_bin();
  char dir[1024], app[1024], root[1024], cmd[16384];
  if (!getcwd(root, sizeof(root)) ||
      access("tests/data/linux/amdgpu", F_OK) != 0)
    SKIP("the DRM fixture is not found (run from the source tree)");
  test_dir(dir, sizeof(dir), "restart-record");
  snprintf(app, sizeof(app), "%s", wt_build_path("tests/programs/sim_app"));
  write_config(
      dir, "config.txt",
      RESTART_CONFIG("data_sources { config { name: \"gpu.renderstages\" } }\n"
                     "data_sources { config { name: \"gpu.counters\" } }\n"));
  snprintf(cmd, sizeof(cmd),
           "cd '%s' || exit 2; rm -f pid *.pftrace *.sock; B='%s'; "
           "PROG=\"(GPUPERF_SYSROOT='%s/tests/data/linux/amdgpu' '%s' "
           "producer >daemon.out 2>daemon.err & D=\\$!; '%s' record "
           "--producer -q -- '%s' --steps %d --sleep-ms 5 --pidfile pid "
           ">/dev/null 2>app.err; R=\\$?; kill -INT \\$D; wait \\$D || exit "
           "11; exit \\$R)\"; PROG_ERR=app.err; " RESTART_SHELL,
           dir, bin, root, cli(), cli(), app, STEPS);
  int status = wt_system(cmd);
  if (status != 0)
    fail_with_logs(dir, status, "the restart of traced");
  char t1[1100], t2[1100], out[1100];
  snprintf(t1, sizeof(t1), "%s/t1.pftrace", dir);
  snprintf(t2, sizeof(t2), "%s/t2.pftrace", dir);
  snprintf(out, sizeof(out), "%s/daemon.out", dir);
  static const char busy[] =
      "SELECT count(*) FROM counter c JOIN gpu_counter_track t ON "
      "c.track_id = t.id WHERE t.name = 'engine-gfx-busy'";
  ASSERT_GT(ptp_one(t1, "SELECT count(*) FROM gpu_slice"), 0);
  ASSERT_GT(ptp_one(t2, "SELECT count(*) FROM gpu_slice"), 0);
  ASSERT_GT(ptp_one(t1, busy), 0);
  ASSERT_GT(ptp_one(t2, busy), 0);
  char *o = wt_read_text(out);
  ASSERT(strstr(o, " 1 reconnects") != NULL);
  free(o);
}

/* One trace with Perfetto's own data (ftrace's sched events and process
 * stats, from traced_probes) and ours, from an OpenCL program on PoCL and
 * a Vulkan one on lavapipe: our GPU slices and tracks belong to the
 * processes traced_probes named, and no pid has two process rows. */
TEST(producer_shares_processes_with_traced_probes) {
  if (SANITIZED)
    SKIP("gpuperf record preloads nothing in a sanitizer build");
  const char *bin = perfetto_bin();
  char dir[1024], ocl[1024], cmd[16384];
  test_dir(dir, sizeof(dir), "probes");
  snprintf(ocl, sizeof(ocl), "%s", wt_build_path("tests/opencl-sample"));
  if (access("/sys/kernel/tracing/events/sched", F_OK) != 0 &&
      access("/sys/kernel/debug/tracing/events/sched", F_OK) != 0)
    SKIP("no tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
  bool vk = wt_system("command -v xvfb-run >/dev/null && command -v vkcube "
                      ">/dev/null") == 0;
  write_config(
      dir, "config.txt",
      "buffers { size_kb: 65536 fill_policy: RING_BUFFER }\n"
      "duration_ms: 120000\n"
      "data_sources { config { name: \"linux.ftrace\" ftrace_config { "
      "ftrace_events: \"sched/sched_switch\" ftrace_events: "
      "\"sched/sched_process_fork\" ftrace_events: "
      "\"sched/sched_process_exec\" ftrace_events: "
      "\"sched/sched_process_exit\" ftrace_events: \"task/task_newtask\" "
      "ftrace_events: \"task/task_rename\" } } }\n"
      "data_sources { config { name: \"linux.process_stats\" "
      "process_stats_config { scan_all_processes_on_start: true } } }\n"
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" } }\n");
  snprintf(
      cmd, sizeof(cmd),
      "cd '%s' || exit 2; rm -f *.pftrace *.sock; B='%s'; "
      "wait_for() { i=0; while ! eval \"$1\" && [ $i -lt 3000 ]; do "
      "sleep 0.01; i=$((i+1)); done; }; "
      "export PERFETTO_PRODUCER_SOCK_NAME=$PWD/p.sock "
      "PERFETTO_CONSUMER_SOCK_NAME=$PWD/c.sock; "
      "\"$B/traced\" >traced.log 2>&1 & T=$!; wait_for '[ -S p.sock ]'; "
      "\"$B/traced_probes\" >probes.log 2>&1 & P=$!; sleep 1; "
      "\"$B/perfetto\" --txt -c config.txt -o t.pftrace >perfetto.log 2>&1 "
      "& C=$!; sleep 2; POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 '%s' "
      "record --producer -q -- '%s' -n 2 >ocl.out 2>ocl.err; S=$?; "
      "if [ %d -eq 1 ] && [ $S -eq 0 ]; then xvfb-run -a '%s' record "
      "--producer -q -- vkcube --c 60 >vk.out 2>vk.err; S=$?; fi; "
      "sleep 1; kill -INT $C; wait $C; W=$?; kill -TERM $P $T; wait $P; "
      "wait $T; [ $S -ne 0 ] && exit $S; exit $W",
      dir, bin, cli(), ocl, vk ? 1 : 0, cli());
  int status = wt_system(cmd);
  if (status == 77)
    SKIP("no OpenCL device");
  if (status != 0)
    fail_with_logs(dir, status, "the system trace");
  char t[1100];
  snprintf(t, sizeof(t), "%s/t.pftrace", dir);
  static const char *const names[] = {"opencl-sample", "vkcube"};
  for (size_t i = 0; i < (vk ? 2u : 1u); i++) {
    char sql[2048];
    /* The pid of the program, from our process descriptor. */
    snprintf(sql, sizeof(sql),
             "SELECT p.pid FROM process_counter_track t JOIN process p USING "
             "(upid) WHERE t.name = 'gpuperf dropped records' AND p.name "
             "LIKE '%%%s%%' LIMIT 1",
             names[i]);
    int64_t pid = ptp_one(t, sql);
    ASSERT_GT(pid, 0);
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM process WHERE pid = %lld",
             (long long)pid);
    int64_t rows = ptp_one(t, sql);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM gpu_slice s JOIN process p ON p.upid = "
             "extract_arg(s.arg_set_id, 'upid') WHERE p.pid = %lld AND "
             "p.start_ts IS NOT NULL",
             (long long)pid);
    int64_t slices = ptp_one(t, sql);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM sched s JOIN thread USING (utid) JOIN "
             "process p USING (upid) JOIN process_counter_track c ON c.upid "
             "= p.upid WHERE p.pid = %lld AND c.name = 'gpuperf dropped "
             "records'",
             (long long)pid);
    int64_t sched = ptp_one(t, sql);
    printf("%s (pid %lld): %lld process rows, %lld GPU slices on the process "
           "traced_probes saw, %lld of its sched slices on the process of "
           "our tracks\n",
           names[i], (long long)pid, (long long)rows, (long long)slices,
           (long long)sched);
    ASSERT_EQ(rows, 1);
    ASSERT_GT(slices, 0);
    ASSERT_GT(sched, 0);
  }
}
