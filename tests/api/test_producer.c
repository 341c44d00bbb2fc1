/*
 * test_producer.c - gpuperf as a producer of Perfetto's tracing service,
 * with real programs: `gpuperf demo`, tests/programs/sim_app and the
 * OpenCL sample on PoCL, under GPUPERF_PRODUCER=perfetto or `gpuperf
 * record --producer`, against tests/programs/perfetto_peer (the service
 * side of the protocol, written from the ABI) and, where
 * GPUPERF_PERFETTO_BIN names a folder with Perfetto's traced, perfetto
 * and trace_processor_shell, against Perfetto itself.
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

/* Sanitizer builds preload nothing (see test_record_safety.c). */
#define SANITIZED GP_TEST_SANITIZED

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

/* The demo's gpu.counters config (cmd_demo.c), as the peer's --counters. */
#define DEMO_COUNTERS                                                          \
  "500000:Utilization,sm__cycles_active.avg,"                                  \
  "sm__warps_active.avg.pct_of_peak_sustained_active,"                         \
  "lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum"

typedef struct peer_run {
  char dir[1024], sock[1100], trace[1100], out[1100], err[1100];
  char prog_err[1100];
  int status;
} peer_run;

/* Runs the peer with peer_args, and prog (a shell command) with the
 * producer's environment once the peer listens; waits for both. */
static void with_peer(peer_run *r, const char *name, const char *peer_args,
                      const char *prog) {
  snprintf(r->dir, sizeof(r->dir), "%s/%s", gp_test_tmpdir(), name);
  mkdir(r->dir, 0755);
  snprintf(r->sock, sizeof(r->sock), "%s/producer.sock", r->dir);
  snprintf(r->trace, sizeof(r->trace), "%s/service.pftrace", r->dir);
  snprintf(r->out, sizeof(r->out), "%s/peer.out", r->dir);
  snprintf(r->err, sizeof(r->err), "%s/peer.err", r->dir);
  snprintf(r->prog_err, sizeof(r->prog_err), "%s/prog.err", r->dir);
  char cmd[16384];
  snprintf(cmd, sizeof(cmd),
           "cd '%s' || exit 2; rm -f ready; '%s' --socket '%s' --out '%s' "
           "--ready ready %s >'%s' 2>'%s' & P=$!; "
           "i=0; while [ ! -e '%s/ready' ] && [ $i -lt 500 ]; do sleep 0.01; "
           "i=$((i+1)); done; "
           "export PERFETTO_PRODUCER_SOCK_NAME='%s' GPUPERF_PRODUCER=perfetto "
           "GPUPERF_PRODUCER_VERBOSE=1; %s 2>'%s'; S=$?; "
           "wait $P; W=$?; [ $S -ne 0 ] && exit $S; exit $W",
           r->dir, wt_build_path("tests/programs/perfetto_peer"), r->sock,
           r->trace, peer_args, r->out, r->err, r->dir, r->sock, prog,
           r->prog_err);
  r->status = wt_system(cmd);
}

static void expect_clean(const peer_run *r) {
  char *out = wt_read_text(r->out), *err = wt_read_text(r->err),
       *perr = wt_read_text(r->prog_err);
  if (r->status != 0 || !strstr(out, " errors 0"))
    gp_test_fail(__FILE__, __LINE__, "status %d\npeer: %s%s\nprogram: %s",
                 r->status, out, err, perr);
  free(out);
  free(err);
  free(perr);
}

#define SLICES_SQL                                                             \
  "SELECT ts, dur, name, depth, hw_queue_id, render_target, render_pass, "     \
  "command_buffer, submission_id, render_stage_category FROM gpu_slice "       \
  "ORDER BY ts, hw_queue_id, name, dur"
#define UTIL_SQL                                                               \
  "SELECT t.gpu_id, count(*), sum(c.value), min(c.ts), max(c.ts) FROM "        \
  "gpu_counter_track t JOIN counter c ON c.track_id = t.id WHERE t.name = "    \
  "'Utilization' AND c.ts <= (SELECT max(ts + dur) FROM gpu_slice) GROUP "     \
  "BY t.gpu_id ORDER BY t.gpu_id"

TEST(producer_demo_gives_the_rows_of_the_file) {
  char prog[2048], file[1100];
  const char *args = "--source gpu.renderstages --source gpu.counters "
                     "--counters " DEMO_COUNTERS;
  snprintf(prog, sizeof(prog), "'%s' demo --steps 50 --no-trace -q", cli());
  peer_run r;
  with_peer(&r, "demo", args, prog);
  expect_clean(&r);
  /* The demo's GPUs appear after the process connected: their catalogs
   * reached the service's gpu.counters descriptors (UpdateDataSource). */
  char *out = wt_read_text(r.out);
  const char *k = strstr(out, " specs ");
  ASSERT_NOT_NULL(k);
  ASSERT_GE(strtoull(k + 7, NULL, 10), 6);
  /* With the catalogs' groups: the five `gpuperf list` shows for the
   * simulated compute GPU (System, Compute, Compute Core, Memory, L2
   * Cache), the custom ones included. */
  k = strstr(out, " groups ");
  ASSERT_NOT_NULL(k);
  ASSERT_GE(strtoull(k + 8, NULL, 10), 5);
  free(out);
  snprintf(file, sizeof(file), "%s/file.pftrace", r.dir);
  char cmd[4096];
  snprintf(cmd, sizeof(cmd), "'%s' demo --steps 50 -q -o '%s'", cli(), file);
  ASSERT_EQ(wt_system(cmd), 0);

  char *a = wt_tp_rows(file, SLICES_SQL), *b = wt_tp_rows(r.trace, SLICES_SQL);
  ASSERT_GT(strlen(a), 1000);
  if (strcmp(a, b) != 0)
    gp_test_fail(__FILE__, __LINE__,
                 "gpu_slice differs: file %zu bytes, "
                 "service %zu bytes",
                 strlen(a), strlen(b));
  free(a);
  free(b);
  a = wt_tp_rows(file, UTIL_SQL);
  b = wt_tp_rows(r.trace, UTIL_SQL);
  ASSERT(strchr(a, '\n') != NULL);
  ASSERT_STR_EQ(a, b);
  free(a);
  free(b);
  /* No error in our trace processor, and every sequence obeys the rules
   * of interning (the service stamped each writer's sequence). */
  ASSERT_EQ(wt_tp_one(r.trace, "SELECT count(*) FROM stats WHERE severity IN "
                               "('error', 'data_loss') AND value > 0"),
            0);
  wt_trace t;
  wt_load(&t, r.trace);
  wt_check_sequences(&t);
  wt_free(&t);
}

TEST(producer_service_flush_stop_and_clear_drive_the_sessions) {
  char prog[2048];
  const char *app = wt_build_path("tests/programs/sim_app");
  /* The app runs until the service has stopped its data sources and it is
   * told to go; what it did while they ran is in the trace. */
  snprintf(prog, sizeof(prog),
           "('%s' --forever --sleep-ms 5 & A=$!; "
           "while kill -0 $P 2>/dev/null; do sleep 0.02; done; kill $A; "
           "wait $A; exit 0)",
           app);
  peer_run r;
  with_peer(&r, "flush",
            "--source gpu.renderstages --source gpu.log --stop-after-ms 600 "
            "--clear-after-ms 200",
            prog);
  expect_clean(&r);
  char *out = wt_read_text(r.out);
  ASSERT(strstr(out, "started 2 stopped 2 flushes 2 acks") != NULL);
  ASSERT(strstr(out, "acks 0") == NULL);
  free(out);
  ASSERT_GT(wt_tp_one(r.trace, "SELECT count(*) FROM gpu_slice"), 20);
  ASSERT_EQ(wt_tp_one(r.trace, "SELECT count(*) FROM stats WHERE severity IN "
                               "('error', 'data_loss') AND value > 0"),
            0);
  wt_trace t;
  wt_load(&t, r.trace);
  wt_check_sequences(&t); /* the cleared state was emitted again */
  wt_free(&t);
}

TEST(producer_full_shared_memory_is_never_silent) {
  /* 8 KiB of shared memory for 200 steps: the writer waits for the
   * service, and what it cannot place is counted and said. */
  char prog[2048];
  snprintf(prog, sizeof(prog), "'%s' demo --steps 200 --no-trace -q", cli());
  peer_run r;
  with_peer(&r, "small", "--source gpu.renderstages --smb-kb 8 --page-kb 4",
            prog);
  expect_clean(&r);
  char file[1100], cmd[4096];
  snprintf(file, sizeof(file), "%s/file.pftrace", r.dir);
  snprintf(cmd, sizeof(cmd), "'%s' demo --steps 200 -q -o '%s'", cli(), file);
  ASSERT_EQ(wt_system(cmd), 0);
  int64_t want = wt_tp_one(file, "SELECT count(*) FROM gpu_slice");
  int64_t got = wt_tp_one(r.trace, "SELECT count(*) FROM gpu_slice");
  char *perr = wt_read_text(r.prog_err);
  if (got != want && !strstr(perr, "packets dropped"))
    gp_test_fail(__FILE__, __LINE__,
                 "%lld of %lld slices arrived and nothing was said: %s",
                 (long long)got, (long long)want, perr);
  free(perr);
}

TEST(producer_without_a_service_changes_nothing) {
  char a[1100], b[1100], cmd[4096];
  snprintf(a, sizeof(a), "%s/plain.pftrace", gp_test_tmpdir());
  snprintf(b, sizeof(b), "%s/producer.pftrace", gp_test_tmpdir());
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_HOST_IDENTITY=0 '%s' demo --steps 5 -q -o '%s' && "
           "GPUPERF_HOST_IDENTITY=0 GPUPERF_PRODUCER=perfetto "
           "PERFETTO_PRODUCER_SOCK_NAME='%s/nobody.sock' '%s' demo --steps 5 "
           "-q -o '%s' 2>'%s/producer.err'",
           cli(), a, gp_test_tmpdir(), cli(), b, gp_test_tmpdir());
  ASSERT_EQ(wt_system(cmd), 0);
  size_t na, nb;
  uint8_t *x = wt_read_file(a, &na), *y = wt_read_file(b, &nb);
  ASSERT_EQ(na, nb);
  ASSERT(memcmp(x, y, na) == 0);
  free(x);
  free(y);
  char err[1100];
  snprintf(err, sizeof(err), "%s/producer.err", gp_test_tmpdir());
  char *e = wt_read_text(err);
  ASSERT_STR_EQ(e, "");
  free(e);
}

TEST(producer_cli_errors_are_clear) {
  char cmd[4096], err[1100];
  snprintf(err, sizeof(err), "%s/cli.err", gp_test_tmpdir());
  snprintf(cmd, sizeof(cmd),
           "PERFETTO_PRODUCER_SOCK_NAME='%s/none.sock' '%s' producer "
           "--duration 1 2>'%s'",
           gp_test_tmpdir(), cli(), err);
  ASSERT_EQ(wt_system(cmd), 2);
  char *e = wt_read_text(err);
  ASSERT(strstr(e, "no Perfetto tracing service at") != NULL);
  ASSERT(strstr(e, "none.sock") != NULL);
  free(e);
  snprintf(cmd, sizeof(cmd),
           "PERFETTO_PRODUCER_SOCK_NAME='%s/none.sock' '%s' record --producer "
           "-- true 2>'%s'",
           gp_test_tmpdir(), cli(), err);
  ASSERT_EQ(wt_system(cmd), 2);
  snprintf(cmd, sizeof(cmd), "'%s' record --producer -o x -- true 2>'%s'",
           cli(), err);
  ASSERT_EQ(wt_system(cmd), 1);
  e = wt_read_text(err);
  ASSERT(strstr(e, "drop -c, -e and -o") != NULL);
  free(e);
}

TEST(producer_record_opencl_and_system_counters) {
  if (SANITIZED)
    SKIP("gpuperf record preloads nothing in a sanitizer build");
  char prog[4096], root[1024];
  if (!getcwd(root, sizeof(root)) ||
      access("tests/data/linux/amdgpu", F_OK) != 0)
    SKIP("the DRM fixture is not found (run from the source tree)");
  /* An OpenCL program on PoCL under `record --producer`, and beside it
   * the daemon offering a DRM card's counters (a fixture of sysfs). */
  snprintf(prog, sizeof(prog),
           "(GPUPERF_SYSROOT='%s/tests/data/linux/amdgpu' '%s' producer "
           "--duration 1 -q & D=$!; POCL_DEVICES=pthread "
           "POCL_MAX_PTHREAD_COUNT=2 '%s' record --producer -q -- '%s' -n 2 "
           ">/dev/null; S=$?; wait $D; exit $S)",
           root, cli(), cli(), wt_build_path("tests/opencl-sample"));
  peer_run r;
  with_peer(&r, "opencl", "--source gpu.renderstages --source gpu.counters",
            prog);
  if (r.status == 77)
    SKIP("no OpenCL device");
  expect_clean(&r);
  ASSERT_GT(wt_tp_one(r.trace, "SELECT count(*) FROM gpu_slice"), 0);
  ASSERT_GT(wt_tp_one(r.trace, "SELECT count(*) FROM counter c JOIN "
                               "gpu_counter_track t ON c.track_id = t.id WHERE "
                               "t.name = 'engine-gfx-busy'"),
            10);
  /* The program's process is in the trace beside its GPU work. */
  ASSERT_GT(wt_tp_one(r.trace, "SELECT count(*) FROM process WHERE name LIKE "
                               "'%opencl-sample%'"),
            0);
}

/* Against Perfetto itself: traced on private sockets, `perfetto` with a
 * config of linux.process_stats and our data sources, the demo as a
 * producer, and Perfetto's trace processor as the judge. */
TEST(producer_with_perfettos_service) {
  const char *bin = getenv("GPUPERF_PERFETTO_BIN");
  if (!bin || !*bin)
    SKIP("GPUPERF_PERFETTO_BIN is not set (a folder with Perfetto's traced, "
         "perfetto and trace_processor_shell)");
  char dir[1100], cmd[16384];
  snprintf(dir, sizeof(dir), "%s/perfetto", gp_test_tmpdir());
  mkdir(dir, 0755);
  char cfg[1200];
  snprintf(cfg, sizeof(cfg), "%s/config.txt", dir);
  FILE *f = fopen(cfg, "w");
  ASSERT_NOT_NULL(f);
  fprintf(f,
          "buffers { size_kb: 65536 fill_policy: DISCARD }\n"
          "duration_ms: 4000\n"
          "data_sources { config { name: \"linux.process_stats\" } }\n"
          "data_sources { config { name: \"gpu.renderstages\" } }\n"
          "data_sources { config { name: \"gpu.counters\" gpu_counter_config "
          "{ counter_period_ns: 500000 counter_names: \"Utilization\" "
          "counter_names: \"sm__cycles_active.avg\" counter_names: "
          "\"sm__warps_active.avg.pct_of_peak_sustained_active\" "
          "counter_names: \"lts__t_sector_hit_rate.pct\" counter_names: "
          "\"dram__bytes_read.sum\" counter_names: \"dram__bytes_write.sum\" "
          "} } }\n");
  fclose(f);
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && export PERFETTO_PRODUCER_SOCK_NAME='%s/p.sock' "
           "PERFETTO_CONSUMER_SOCK_NAME='%s/c.sock'; "
           "'%s/traced' >traced.log 2>&1 & T=$!; P=; "
           "if [ -x '%s/traced_probes' ]; then '%s/traced_probes' >probes.log "
           "2>&1 & P=$!; fi; sleep 1; "
           "'%s/perfetto' --txt -c config.txt -o service.pftrace "
           ">perfetto.log 2>&1 & C=$!; sleep 1; "
           "GPUPERF_PRODUCER=perfetto '%s' demo --steps 50 --no-trace -q; "
           "S=$?; wait $C; W=$?; kill $T; [ -n \"$P\" ] && kill $P; "
           "'%s' demo --steps 50 -q -o file.pftrace; "
           "[ $S -ne 0 ] && exit $S; exit $W",
           dir, dir, dir, bin, bin, bin, bin, cli(), cli());
  ASSERT_EQ(wt_system(cmd), 0);
  char trace[1200], file[1200];
  snprintf(trace, sizeof(trace), "%s/service.pftrace", dir);
  snprintf(file, sizeof(file), "%s/file.pftrace", dir);
  /* Perfetto's trace processor: the same slices and no error stat. */
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && '%s/trace_processor_shell' -Q \"SELECT count(*) AS n, "
           "sum(dur) AS d FROM gpu_slice\" service.pftrace > tp_service.csv && "
           "'%s/trace_processor_shell' -Q \"SELECT count(*) AS n, sum(dur) AS "
           "d FROM gpu_slice\" file.pftrace > tp_file.csv && "
           "cmp tp_service.csv tp_file.csv && '%s/trace_processor_shell' -Q "
           "\"SELECT count(*) FROM stats WHERE severity IN ('error', "
           "'data_loss') AND value > 0 AND name NOT LIKE 'traced_%%'\" "
           "service.pftrace | grep -q '^0$'",
           dir, bin, bin, bin);
  ASSERT_EQ(wt_system(cmd), 0);
  char *a = wt_tp_rows(file, SLICES_SQL), *b = wt_tp_rows(trace, SLICES_SQL);
  ASSERT_STR_EQ(a, b);
  free(a);
  free(b);
  ASSERT_GT(wt_tp_one(trace,
                      "SELECT count(*) FROM gpu_counter_track WHERE name = "
                      "'Utilization'"),
            0);
}

/* A program that dies by abort() or _exit() still hands its records to
 * the service; one whose service dies runs on and ends normally. */
TEST(producer_program_death_and_service_death) {
  char app[1024]; /* wt_build_path's buffer is reused */
  snprintf(app, sizeof(app), "%s", wt_build_path("tests/programs/sim_app"));
  static const char *const deaths[] = {"abort", "_exit"};
  for (size_t i = 0; i < 2; i++) {
    char prog[2048], name[64];
    snprintf(prog, sizeof(prog), "('%s' --steps 20 --die %s; exit 0)", app,
             deaths[i]);
    snprintf(name, sizeof(name), "die-%zu", i);
    peer_run r;
    with_peer(&r, name, "--source gpu.renderstages", prog);
    expect_clean(&r);
    /* sim_app: per step two kernels, two copies, a fill: all of them. */
    ASSERT_EQ(wt_tp_one(r.trace, "SELECT count(*) FROM gpu_slice"), 20 * 5);
  }
  char prog[2048];
  snprintf(prog, sizeof(prog),
           "('%s' --steps 300 --sleep-ms 2 & A=$!; sleep 0.3; kill -9 $P; "
           "wait $A)",
           app);
  peer_run r;
  with_peer(&r, "service-dies", "--source gpu.renderstages", prog);
  /* The program's status is 0; the peer's, killed, is 137. */
  ASSERT_EQ(r.status, 137);
}

/* A Vulkan program (vkcube on lavapipe, under Xvfb) through the layer:
 * render stages and memory go to the service. */
TEST(producer_record_vulkan) {
  if (SANITIZED)
    SKIP("gpuperf record loads no layer in a sanitizer build");
  if (wt_system("command -v xvfb-run >/dev/null && command -v vkcube "
                ">/dev/null") != 0)
    SKIP("xvfb-run or vkcube is not installed (Debian xvfb, vulkan-tools)");
  char prog[2048];
  snprintf(prog, sizeof(prog),
           "xvfb-run -a '%s' record --producer -q -- vkcube --c 30 >/dev/null",
           cli());
  peer_run r;
  with_peer(&r, "vulkan",
            "--source gpu.renderstages --source vulkan.memory_tracker", prog);
  expect_clean(&r);
  ASSERT_EQ(wt_tp_one(r.trace,
                      "SELECT count(*) FROM gpu_slice WHERE name = 'Render "
                      "pass' AND dur > 0"),
            30);
  ASSERT_GT(
      wt_tp_one(r.trace, "SELECT count(*) FROM vulkan_memory_allocations"), 0);
}

/* A service that accepts and never answers holds the program's first GPU
 * call for the handshake's 5 s at most, then the program runs as without
 * it. */
TEST(producer_hung_service_costs_at_most_the_handshake) {
  char prog[2048];
  snprintf(prog, sizeof(prog),
           "(S=$(date +%%s); '%s' demo --steps 5 -q -o hung.pftrace || exit "
           "9; E=$(date +%%s); kill $P; [ $((E - S)) -le 8 ] || exit 8)",
           cli());
  peer_run r;
  with_peer(&r, "hung", "--mute 1 --source gpu.renderstages", prog);
  /* The demo's status is 0; the peer ends cleanly on SIGTERM. */
  ASSERT_EQ(r.status, 0);
  char trace[1200];
  snprintf(trace, sizeof(trace), "%s/hung.pftrace", r.dir);
  ASSERT_EQ(wt_tp_one(trace, "SELECT count(*) FROM gpu_slice"), 90);
}

/* A service whose shared memory is not sealed, and that shrinks it to
 * nothing (issue 35's D11): the producer does not use it (as Perfetto's
 * producers, it wants F_SEAL_SHRINK), says so, and the program runs to
 * its end normally instead of dying of SIGBUS. */
TEST(producer_unsealed_shrinking_memory_is_refused) {
  char prog[2048];
  snprintf(prog, sizeof(prog), "'%s' --steps 300 --sleep-ms 2",
           wt_build_path("tests/programs/sim_app"));
  peer_run r;
  with_peer(&r, "shrink",
            "--shrink-smb-after-ms 100 --stop-after-ms 3000 --source "
            "gpu.renderstages",
            prog);
  char *perr = wt_read_text(r.prog_err), *out = wt_read_text(r.out);
  if (r.status != 0 || !strstr(perr, "not sealed against shrinking"))
    gp_test_fail(__FILE__, __LINE__, "status %d\npeer: %s\nprogram: %s",
                 r.status, out, perr);
  free(perr);
  free(out);
}

/* A service that never drains its 64 KiB buffer, asks for a flush, and
 * dies 0.2 s later (issue 35's D12): the flush gives up on the full buffer
 * after one wait, so the reader sees the service go, and the program runs
 * to its end and exits normally (it hung for ever before). A hang fails
 * the test through timeout(1) after 120 s; no tighter time is asserted. */
TEST(producer_flush_into_a_full_buffer_then_death_does_not_hang) {
  char prog[2048];
  snprintf(prog, sizeof(prog),
           "(S=$(date +%%s%%N); timeout 120 '%s' --steps 600 --sleep-ms 10; "
           "R=$?; E=$(date +%%s%%N); echo \"ran $(((E - S) / 1000000)) ms\" "
           ">&2; exit $R)",
           wt_build_path("tests/programs/sim_app"));
  peer_run r;
  with_peer(&r, "full-flush-death",
            "--smb-kb 64 --no-drain 1 --flush-after-ms 1500 --exit-after-ms "
            "1700 --source gpu.renderstages",
            prog);
  char *perr = wt_read_text(r.prog_err), *out = wt_read_text(r.out);
  if (r.status != 0)
    gp_test_fail(__FILE__, __LINE__, "status %d\npeer: %s\nprogram: %s",
                 r.status, out, perr);
  printf("%s", perr);
  free(perr);
  free(out);
}
