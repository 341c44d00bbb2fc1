/*
 * test_record.c - sessions and `gpuperf record` / `gpuperf demo` from the
 * outside: processes and their sequences, exit status, a recording killed
 * with SIGKILL, duration_ms, bad configs, start errors, and counters from
 * the simulated GPUs' catalogs, periodic and per kernel.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "unit/writer_util.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Render-stage event ids of a trace, and whether any repeats. */
static size_t event_ids(const wt_trace *t, bool *unique) {
  size_t n = 0, cap = 64;
  uint64_t *ids = malloc(cap * sizeof(*ids));
  *unique = true;
  for (size_t i = 0; i < t->n; i++) {
    uint64_t id;
    if (t->p[i].data_id != GP_PB_PACKET_GPU_RENDER_STAGE_EVENT ||
        !wt_u64(t->p[i].data, t->p[i].data_size, GP_PB_RSE_EVENT_ID, &id))
      continue;
    for (size_t k = 0; k < n; k++)
      if (ids[k] == id)
        *unique = false;
    if (n == cap)
      ids = realloc(ids, (cap *= 2) * sizeof(*ids));
    ids[n++] = id;
  }
  free(ids);
  return n;
}

static size_t sequences(const wt_trace *t) {
  uint32_t seen[64];
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    size_t k;
    for (k = 0; k < n && seen[k] != t->p[i].seq; k++) {
    }
    if (k == n && n < 64)
      seen[n++] = t->p[i].seq;
  }
  return n;
}

TEST(record_children_get_sequences_and_status) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = gp_test_path(0, "rec.pftrace");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -o '%s' -- '%s' --steps 2 "
           "--fork 2 --exit 3",
           cli(), out, app);
  ASSERT_EQ(wt_system(cmd), 3);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  ASSERT_EQ(sequences(&t), 3);
  bool unique;
  /* 3 processes x 2 steps x (2 kernels, 2 copies, 1 fill). */
  ASSERT_EQ(event_ids(&t, &unique), 30);
  ASSERT(unique);
  /* Three processes with three different pids. */
  int64_t pids[3];
  size_t np = 0;
  for (size_t i = 0; i < t.n; i++) {
    const uint8_t *p;
    size_t pn;
    uint64_t pid;
    if (t.p[i].data_id == GP_PB_PACKET_TRACK_DESCRIPTOR &&
        wt_sub(t.p[i].data, t.p[i].data_size, GP_PB_TD_PROCESS, 0, &p, &pn) &&
        wt_u64(p, pn, GP_PB_PD_PID, &pid)) {
      ASSERT_LT(np, 3);
      pids[np++] = (int64_t)pid;
    }
  }
  ASSERT_EQ(np, 3);
  ASSERT(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
  wt_free(&t);
  /* The parts directory is gone. */
  char ls[1200];
  snprintf(ls, sizeof(ls), "ls -d '%s'.parts-* 2>/dev/null | grep -q .", out);
  ASSERT_NE(wt_system(ls), 0);
}

TEST(record_exec_children) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = gp_test_path(0, "exec.pftrace");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -o '%s' -- '%s' --steps 1 "
           "--fork 2 --exec",
           cli(), out, app);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  wt_check_sequences(&t);
  bool unique;
  ASSERT_EQ(event_ids(&t, &unique), 15);
  ASSERT(unique);
  wt_free(&t);
}

/* Starts sim_app --forever with the recording environment set for dir. */
static pid_t start_forever(const char *dir, const char *pidfile) {
  const char *app = wt_build_path("tests/programs/sim_app");
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    setenv("GPUPERF_RECORD_DIR", dir, 1);
    unsetenv("GPUPERF_RECORD_CONFIG");
    execl(app, "sim_app", "--forever", "--sleep-ms", "2", "--pidfile", pidfile,
          (char *)NULL);
    _exit(127);
  }
  return pid;
}

TEST(record_sigkill_leaves_a_readable_trace) {
  const char *dir = gp_test_tmpdir();
  char pidfile[1024], part[1024];
  snprintf(pidfile, sizeof(pidfile), "%s/pid", dir);
  pid_t pid = start_forever(dir, pidfile);
  /* Half way through: well after the first flush (every 500 ms). */
  sleep_ms(1600);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  snprintf(part, sizeof(part), "%s/1.pftrace", dir);
  wt_trace t;
  wt_load(&t, part);
  /* Everything up to the last complete packet decodes and follows the
   * rules; what follows, if anything, is part of one packet. */
  ASSERT_GT(t.n, 100);
  ASSERT_LE(t.valid, t.size);
  wt_check_sequences(&t);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 10);
  wt_free(&t);
}

TEST(record_cli_keeps_whole_packets_of_a_killed_program) {
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
  sleep_ms(1200);
  ASSERT_EQ(kill(app_pid, SIGKILL), 0);
  int st;
  ASSERT_EQ(waitpid(rec, &st, 0), rec);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 128 + SIGKILL);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size); /* record kept whole packets only */
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 10);
  wt_check_sequences(&t);
  wt_free(&t);
}

TEST(record_duration_ms_ends_the_recording) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *cfg = strdup(gp_test_path(0, "short.pbtxt"));
  const char *out = gp_test_path(1, "short.pftrace");
  wt_write_text(cfg,
                "duration_ms: 300\n"
                "data_sources { config { name: \"gpu.renderstages\" } }\n");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -c '%s' -o '%s' -- '%s' "
           "--steps 150 --sleep-ms 8",
           cli(), cfg, out, app);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  /* Five events a step: the program ran 150 steps (1.2 s), the trace
   * holds about the first 300 ms of them. */
  size_t events = wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT);
  ASSERT_GT(events, 10);
  ASSERT_LT(events, 5 * 120);
  wt_free(&t);
}

TEST(record_bad_config_runs_nothing) {
  const char *cfg = strdup(gp_test_path(0, "bad.pbtxt"));
  const char *out = strdup(gp_test_path(1, "never.pftrace"));
  const char *err = gp_test_path(2, "stderr");
  wt_write_text(cfg, "data_sources {\n  config { name: \"gpu.counters\"\n"
                     "    gpu_counter_config { counter_period: 5 } } }\n");
  char cmd[3000];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -c '%s' -o '%s' -- touch '%s.ran' "
           "2>'%s'",
           cli(), cfg, out, out, err);
  ASSERT_EQ(wt_system(cmd), 2);
  size_t n;
  char *msg = (char *)wt_read_file(err, &n);
  msg = realloc(msg, n + 1);
  msg[n] = '\0';
  ASSERT(strstr(msg, "line 3, column 26: unknown field 'counter_period'"));
  free(msg);
  ASSERT_NE(access(out, F_OK), 0);
  char ran[1100];
  snprintf(ran, sizeof(ran), "%s.ran", out);
  ASSERT_NE(access(ran, F_OK), 0);
  /* -e with nothing usable, and no command: usage errors. */
  snprintf(cmd, sizeof(cmd), "'%s' record -e , -- true 2>/dev/null", cli());
  ASSERT_EQ(wt_system(cmd), 1);
  snprintf(cmd, sizeof(cmd), "'%s' record 2>/dev/null", cli());
  ASSERT_EQ(wt_system(cmd), 1);
  /* A command that does not exist: the shell's 127. */
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -o '%s' -- /nonexistent/x "
           "2>/dev/null",
           cli(), out);
  ASSERT_EQ(wt_system(cmd), 127);
}

/* Runs `demo --steps steps` twice and loads the first trace into *t after
 * checking that the second is the same, byte for byte. */
static void demo_twice(const char *steps, wt_trace *t) {
  const char *a = strdup(gp_test_path(0, "a.pftrace"));
  const char *b = strdup(gp_test_path(1, "b.pftrace"));
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "'%s' demo -q --steps %s -o '%s' && "
           "'%s' demo -q --steps %s -o '%s' && cmp -s '%s' '%s'",
           cli(), steps, a, cli(), steps, b, a, b);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_load(t, a);
  ASSERT_EQ(t->valid, t->size);
}

TEST(demo_writes_the_same_trace_twice) {
  wt_trace t;
  demo_twice("3", &t);
  wt_check_sequences(&t);
  /* 2 GPUs x 3 steps x (5 kernels, 3 copies, 1 fill). */
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 54);
  wt_free(&t);
}

/* Snapshots of one device clock in a trace: their number, and whether
 * both clocks only go forwards. */
static size_t device_snapshots(const wt_trace *t, uint64_t clock_id,
                               bool *ordered) {
  size_t n = 0;
  uint64_t last_boot = 0, last_dev = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (t->p[i].data_id != GP_PB_PACKET_CLOCK_SNAPSHOT)
      continue;
    const uint8_t *c;
    size_t cs;
    uint64_t boot = 0, dev = 0, id, v;
    bool mine = false;
    for (size_t k = 0; wt_sub(t->p[i].data, t->p[i].data_size,
                              GP_PB_CLOCK_SNAPSHOT_CLOCKS, k, &c, &cs);
         k++) {
      if (!wt_u64(c, cs, GP_PB_CLOCK_ID, &id) ||
          !wt_u64(c, cs, GP_PB_CLOCK_TIMESTAMP, &v))
        continue;
      if (id == GP_CLOCK_BOOTTIME)
        boot = v;
      if (id == wt_trace_clock(clock_id)) {
        dev = v;
        mine = true;
      }
    }
    if (!mine)
      continue;
    if (n > 0 && (boot <= last_boot || dev <= last_dev))
      *ordered = false;
    last_boot = boot;
    last_dev = dev;
    n++;
  }
  return n;
}

/* Past the 256 snapshots a device clock's ring holds, the writer still
 * gets every one (clock.c keeps them for it), so the trace is the same
 * however the collector thread was scheduled. */
TEST(demo_long_traces_are_byte_identical) {
  wt_trace t;
  demo_twice("1500", &t);
  for (size_t i = 0; i < t.n; i++)
    ASSERT(!t.p[i].dropped);
  /* Two GPUs (clocks 128 and 129), a snapshot at every synchronize at
   * least: once a step. */
  for (uint64_t clock = GP_CLOCK_FIRST_DEVICE;
       clock < GP_CLOCK_FIRST_DEVICE + 2; clock++) {
    bool ordered = true;
    ASSERT_GE(device_snapshots(&t, clock, &ordered), 1500);
    ASSERT(ordered);
  }
  wt_free(&t);
}

TEST(session_start_errors_leave_nothing) {
  gp_trace_config *cfg;
  ASSERT_OK(gp_trace_config_default(&cfg));
  gp_session *s = NULL;
  char err[256] = "";
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.error = err;
  o.error_size = sizeof(err);
  ASSERT_ERR(gp_session_start(cfg, "/nonexistent/dir/t.pftrace", &o, &s),
             -ENOENT);
  ASSERT(s == NULL);
  ASSERT(strstr(err, "/nonexistent/dir/t.pftrace"));
  o.reserved0 = 1;
  ASSERT_ERR(gp_session_start(cfg, gp_test_path(0, "x"), &o, &s), GP_EINVAL);
  o.reserved0 = 0;
  ASSERT_ERR(gp_session_start(cfg, NULL, &o, &s), GP_EINVAL); /* no fd */
  ASSERT_ERR(gp_session_start(NULL, gp_test_path(0, "x"), &o, &s), GP_EINVAL);
  ASSERT_NE(access(gp_test_path(0, "x"), F_OK), 0);
  /* Nothing left enabled or observing: a session now works normally. */
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_KERNEL), 0);
  ASSERT_OK(gp_session_start(cfg, gp_test_path(1, "ok.pftrace"), &o, &s));
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_KERNEL), 1);
  ASSERT_OK(gp_session_stop(s));
  ASSERT_OK(gp_session_stop(s)); /* twice: the same result */
  gp_session_destroy(s);
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_KERNEL), 0);
  gp_trace_config_destroy(cfg);
  unsetenv("GPUPERF_RECORD_DIR");
  ASSERT_ERR(gp_session_start_from_env(&s), GP_ENOENT);
}

TEST(session_counters_from_the_catalog) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 1;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&sc));
  const char *text =
      "data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  counter_period_ns: 100000 counter_names: \"Utilization\" } } }\n";
  gp_trace_config *cfg;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(text, strlen(text), &cfg, err, sizeof(err)));
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.flags = GP_SESSION_DETERMINISTIC;
  o.error = err;
  o.error_size = sizeof(err);
  gp_session *s;
  const char *path = gp_test_path(0, "c.pftrace");
  int rc = gp_session_start(cfg, path, &o, &s);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "start: %s: %s", gp_error_name(rc), err);
  gp_sim_context *ctx;
  gp_sim_kernel *k;
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "busy";
  d.flops_per_thread = 5000;
  d.bytes_per_thread = 16;
  d.read_fraction = 0.5;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_sim_kernel_create(&d, &k));
  const gp_sim_dim3 grid = {1024, 1, 1}, block = {256, 1, 1};
  for (int i = 0; i < 20; i++)
    ASSERT_OK(gp_sim_launch(gp_sim_default_stream(ctx), k, grid, block, 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_session_stop(s));
  gp_session_stats st;
  ASSERT_OK(gp_session_get_stats(s, &st));
  ASSERT_EQ(st.counter_devices, 1);
  ASSERT_GT(st.counter_events, 2);
  gp_session_destroy(s);
  gp_trace_config_destroy(cfg);
  wt_trace t;
  wt_load(&t, path);
  wt_check_sequences(&t);
  /* The descriptor names Utilization, in percent. */
  bool named = false;
  for (size_t i = 0; i < t.n && !named; i++) {
    const uint8_t *e, *dd, *sp;
    size_t en, dn, sn;
    if (!t.p[i].interned ||
        !wt_sub(t.p[i].interned, t.p[i].interned_size,
                GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, 0, &e, &en) ||
        !wt_sub(e, en, GP_PB_IGCD_DESCRIPTOR, 0, &dd, &dn))
      continue;
    for (size_t k2 = 0; wt_sub(dd, dn, GP_PB_GCD_SPECS, k2, &sp, &sn); k2++)
      named |= wt_str_is(sp, sn, GP_PB_SPEC_C_NAME, 0, "Utilization");
  }
  ASSERT(named);
  wt_free(&t);
}

TEST(session_instrumented_counters_inside_kernels) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 1;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&sc));
  const char *text =
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  counter_names: \"sm__cycles_active.avg\"\n"
      "  instrumented_sampling_config {\n"
      "    activity_name_filters { name_glob: \"busy*\" } } } } }\n";
  gp_trace_config *cfg;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(text, strlen(text), &cfg, err, sizeof(err)));
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.flags = GP_SESSION_DETERMINISTIC;
  o.error = err;
  o.error_size = sizeof(err);
  gp_session *s;
  const char *path = gp_test_path(0, "i.pftrace");
  int rc = gp_session_start(cfg, path, &o, &s);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "start: %s: %s", gp_error_name(rc), err);
  gp_sim_context *ctx;
  gp_sim_kernel *k, *other;
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "busy_kernel";
  d.flops_per_thread = 5000;
  d.bytes_per_thread = 16;
  d.read_fraction = 0.5;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_sim_kernel_create(&d, &k));
  d.name = "idle_kernel";
  ASSERT_OK(gp_sim_kernel_create(&d, &other));
  const gp_sim_dim3 grid = {512, 1, 1}, block = {256, 1, 1};
  for (int i = 0; i < 5; i++) {
    ASSERT_OK(gp_sim_launch(gp_sim_default_stream(ctx), k, grid, block, 0));
    ASSERT_OK(gp_sim_launch(gp_sim_default_stream(ctx), other, grid, block, 0));
  }
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  gp_trace_config_destroy(cfg);

  wt_trace t;
  wt_load(&t, path);
  wt_check_sequences(&t);
  /* The counter's spec: its catalog id and groups (the fixed ones),
   * forwards looking. */
  gp_counter_info ci;
  ASSERT_OK(gp_counter_lookup(0, 4, &ci));
  ASSERT_STR_EQ(ci.name, "sm__cycles_active.avg");
  bool spec_ok = false;
  for (size_t i = 0; i < t.n && !spec_ok; i++) {
    const uint8_t *e, *dd, *sp;
    size_t en, dn, sn;
    if (!t.p[i].interned ||
        !wt_sub(t.p[i].interned, t.p[i].interned_size,
                GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, 0, &e, &en) ||
        !wt_sub(e, en, GP_PB_IGCD_DESCRIPTOR, 0, &dd, &dn))
      continue;
    for (size_t k2 = 0; wt_sub(dd, dn, GP_PB_GCD_SPECS, k2, &sp, &sn); k2++) {
      uint64_t id, dir;
      if (!wt_u64(sp, sn, GP_PB_SPEC_COUNTER_ID, &id) || id != ci.id ||
          !wt_u64(sp, sn, GP_PB_SPEC_VALUE_DIRECTION, &dir))
        continue;
      size_t fixed = 0;
      for (uint32_t g = 0; g < ci.num_groups; g++)
        fixed += ci.groups[g] < GP_COUNTER_GROUP_FIRST_CUSTOM;
      uint64_t g0 = 0;
      spec_ok = dir == GP_PB_VALUE_DIRECTION_FORWARDS &&
                wt_str_is(sp, sn, GP_PB_SPEC_C_NAME, 0, ci.name) &&
                wt_count(sp, sn, GP_PB_SPEC_GROUPS) == fixed &&
                wt_u64(sp, sn, GP_PB_SPEC_GROUPS, &g0) &&
                g0 == GP_COUNTER_GROUP_COMPUTE;
    }
  }
  ASSERT(spec_ok);
  /* Every per-activity sample lies inside a busy_kernel's [start, end). */
  size_t samples = 0;
  for (size_t i = 0; i < t.n; i++) {
    const uint8_t *c;
    size_t cn;
    uint64_t id;
    if (t.p[i].data_id != GP_PB_PACKET_GPU_COUNTER_EVENT ||
        !wt_sub(t.p[i].data, t.p[i].data_size, GP_PB_GCE_COUNTERS, 0, &c,
                &cn) ||
        !wt_u64(c, cn, GP_PB_GC_COUNTER_ID, &id) || id != ci.id)
      continue;
    bool inside = false;
    for (size_t j = 0; j < t.n && !inside; j++) {
      uint64_t dur;
      if (t.p[j].data_id == GP_PB_PACKET_GPU_RENDER_STAGE_EVENT &&
          wt_u64(t.p[j].data, t.p[j].data_size, GP_PB_RSE_DURATION, &dur))
        inside = t.p[i].ts >= t.p[j].ts && t.p[i].ts < t.p[j].ts + dur;
    }
    ASSERT(inside);
    samples++;
  }
  ASSERT_EQ(samples, 5);
  wt_free(&t);
}

TEST(record_e_selects_counters) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = strdup(gp_test_path(0, "e.pftrace"));
  const char *err = strdup(gp_test_path(1, "stderr"));
  char cmd[3000];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -e Utilization -o '%s' -- '%s' "
           "--steps 3 2>'%s'",
           cli(), out, app, err);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  wt_check_sequences(&t);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_COUNTER_EVENT), 1);
  bool named = false;
  for (size_t i = 0; i < t.n && !named; i++) {
    const uint8_t *e, *dd, *sp;
    size_t en, dn, sn;
    if (!t.p[i].interned ||
        !wt_sub(t.p[i].interned, t.p[i].interned_size,
                GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, 0, &e, &en) ||
        !wt_sub(e, en, GP_PB_IGCD_DESCRIPTOR, 0, &dd, &dn))
      continue;
    for (size_t k = 0; wt_sub(dd, dn, GP_PB_GCD_SPECS, k, &sp, &sn); k++)
      named |= wt_str_is(sp, sn, GP_PB_SPEC_C_NAME, 0, "Utilization");
  }
  ASSERT(named);
  wt_free(&t);
  /* A name no device has: an error before anything runs (exit 2), and an
   * output that exists is left as it was. */
  char ran[1100];
  snprintf(ran, sizeof(ran), "%s.ran", out);
  snprintf(cmd, sizeof(cmd),
           "'%s' record -q -e no_such_counter -o '%s' -- "
           "touch '%s' 2>'%s'",
           cli(), out, ran, err);
  ASSERT_EQ(wt_system(cmd), 2);
  ASSERT_NE(access(ran, F_OK), 0);
  size_t n;
  char *msg = (char *)wt_read_file(err, &n);
  msg = realloc(msg, n + 1);
  msg[n] = '\0';
  ASSERT(strstr(msg, "unknown counter 'no_such_counter'"));
  free(msg);
  wt_load(&t, out);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_COUNTER_EVENT), 1);
  wt_free(&t);
}

/* Processes that do no GPU work (here the shells around the program, which
 * inherit the environment and the preload) leave no sequence. */
TEST(record_processes_without_gpu_work_leave_no_trace) {
  const char *app = wt_build_path("tests/programs/sim_app");
  const char *out = gp_test_path(0, "sh.pftrace");
  const char *log = gp_test_path(1, "record.log");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "'%s' record -o '%s' -- sh -c \"sh -c true; '%s' --steps 1\" "
           "2>'%s'",
           cli(), out, app, log);
  ASSERT_EQ(wt_system(cmd), 0);
  wt_trace t;
  wt_load(&t, out);
  wt_check_sequences(&t);
  ASSERT_EQ(sequences(&t), 1);
  wt_free(&t);
  FILE *f = fopen(log, "r");
  ASSERT_NOT_NULL(f);
  char line[512] = "";
  bool said = false;
  while (fgets(line, sizeof(line), f))
    if (strstr(line, "1 process recorded"))
      said = true;
  fclose(f);
  ASSERT(said);
  /* A program that never touches a GPU: nothing, and a clear word. */
  snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- true 2>'%s'", cli(),
           gp_test_path(2, "none.pftrace"), log);
  ASSERT_EQ(wt_system(cmd), 0);
  f = fopen(log, "r");
  ASSERT_NOT_NULL(f);
  said = false;
  while (fgets(line, sizeof(line), f))
    if (strstr(line, "did GPU work") && strstr(line, "nothing was recorded"))
      said = true;
  fclose(f);
  ASSERT(said);
}
