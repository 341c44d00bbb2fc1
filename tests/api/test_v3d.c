/*
 * test_v3d.c - gpuperf's V3D backend (src/backend/linux/v3d.c) at the
 * kernel boundary, against the test double of the render node's ioctls
 * (build/tests/libv3d-double.so, tests/v3d/README.md): a sysroot whose
 * dev/dri holds renderD128 (the double's node) and renderD129 (a plain
 * file, not a DRM device), the double preloaded into gpuperf and the
 * programs it runs, and build/tests/v3d-jobs submitting jobs.
 *
 * The expected values are what the double counted (its shared state,
 * v3d_double.h), never what gpuperf computed. No V3D GPU has been run.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"
#include "v3d/v3d_double.h"

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

static char cli[512], jobs[512], state_path[600], root[512];

/* The sysroot, the double in LD_PRELOAD and its variables, for every
 * program the test runs from now on. */
static void setup(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("the double cannot be preloaded into a sanitizer build");
#endif
  char lib[512];
  if (!ocl_build_path("tests/libv3d-double.so", lib, sizeof(lib)) ||
      !ocl_build_path("tests/v3d-jobs", jobs, sizeof(jobs)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  if (access(lib, R_OK) != 0)
    SKIP("%s is not built", lib);
  snprintf(cli, sizeof(cli), "%s", c);
  snprintf(root, sizeof(root), "%s", gp_test_path(0, "root"));
  char dir[600], node[700], other[700];
  snprintf(dir, sizeof(dir), "%s/dev", root);
  mkdir(root, 0755);
  mkdir(dir, 0755);
  snprintf(dir, sizeof(dir), "%s/dev/dri", root);
  ASSERT_EQ(mkdir(dir, 0755), 0);
  snprintf(node, sizeof(node), "%s/renderD128", dir);
  snprintf(other, sizeof(other), "%s/renderD129", dir);
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(i ? other : node, "w");
    ASSERT(f != NULL);
    fclose(f);
  }
  snprintf(state_path, sizeof(state_path), "%s/state", root);
  setenv("GPUPERF_SYSROOT", root, 1);
  setenv("LD_PRELOAD", lib, 1);
  setenv("V3D_DOUBLE_NODE", node, 1);
  setenv("V3D_DOUBLE_STATE", state_path, 1);
  unsetenv("V3D_DOUBLE_VERSION");
  unsetenv("V3D_DOUBLE_WITHOUT");
}

/* A copy of the double's state as it is now. */
static v3dd_state read_state(void) {
  v3dd_state s;
  memset(&s, 0, sizeof(s));
  int fd = open(state_path, O_RDONLY);
  ASSERT(fd >= 0);
  ASSERT_EQ(pread(fd, &s, sizeof(s), 0), (ssize_t)sizeof(s));
  close(fd);
  ASSERT_EQ(s.magic, V3DD_MAGIC);
  return s;
}

/* Runs argv; its stdout and stderr into *out and *err (may be NULL: freed
 * then). Returns its exit status. */
__attribute__((noinline)) static int run(char **argv, char **out, char **err) {
  char *o = NULL, *e = NULL;
  int rc = ocl_run(argv, NULL, 120, &o, &e);
  if (out)
    *out = o;
  else
    free(o);
  if (err)
    *err = e;
  else
    free(e);
  return rc;
}

static void expect_has(const char *text, const char *want) {
  if (!text || !strstr(text, want))
    gp_test_fail(__FILE__, __LINE__, "'%s' not in:\n%s", want,
                 text ? text : "(nothing)");
}

/* The line of text holding `name` also holds `want`. */
static void expect_line(const char *text, const char *name, const char *want) {
  const char *at = text ? strstr(text, name) : NULL;
  if (!at)
    gp_test_fail(__FILE__, __LINE__, "'%s' not listed", name);
  size_t len = strcspn(at, "\n");
  char line[512];
  snprintf(line, sizeof(line), "%.*s", (int)len, at);
  if (!strstr(line, want))
    gp_test_fail(__FILE__, __LINE__, "'%s' not in the line '%s'", want, line);
}

/* The text of the file at path (malloc'd; "" if it cannot be read). */
static char *slurp(const char *path) {
  char *buf = calloc(1, 65536);
  ASSERT(buf != NULL);
  int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    ssize_t k = read(fd, buf, 65535);
    (void)k;
    close(fd);
  }
  return buf;
}

TEST(v3d_double_refuses_as_the_uapi_documents) {
  setup();
  char *argv[] = {jobs, "abi", NULL};
  char *out = NULL;
  ASSERT_EQ(run(argv, &out, NULL), 0);
  expect_has(out, "abi: 29 checks");
  free(out);
  v3dd_state s = read_state();
  ASSERT_EQ(s.refused_eagain, 1);
  ASSERT_EQ(s.refused_ebusy, 2);
  ASSERT_EQ(s.global, 0); /* destroying the global perfmon cleared it */
}

TEST(v3d_list_shows_kernel_counters) {
  setup();
  char *argv[] = {cli, "list", NULL};
  char *out = NULL;
  ASSERT_EQ(run(argv, &out, NULL), 0);
  expect_has(out, "V3D 4.2 (renderD128)");
  expect_has(out, "87 counters from the kernel");
  expect_has(out, "counters: 87, up to 32 at once");
  ASSERT(strstr(out, "renderD129") == NULL); /* not a V3D node */
  /* The seed's counters with their category's groups. */
  const char *dev = strstr(out, "V3D 4.2 (renderD128)");
  expect_line(dev, " L2T-CLE-reads ", "Memory, L2T");
  expect_line(dev, " TLB-quads-passing-z-and-stencil-test ", "Fragments, TLB");
  free(out);
  char *jargv[] = {cli, "list", "--json", NULL};
  ASSERT_EQ(run(jargv, &out, NULL), 0);
  expect_has(out, "\"name\": \"L2T-CLE-reads\"");
  expect_has(out, "\"category\": \"L2T\"");
  expect_has(out, "\"category\": \"TLB\"");
  free(out);
}

TEST(v3d_list_builtin_tables_by_version) {
  setup();
  char *argv[] = {cli, "list", NULL};
  char *out = NULL;
  setenv("V3D_DOUBLE_WITHOUT", "GET_COUNTER", 1);
  ASSERT_EQ(run(argv, &out, NULL), 0);
  expect_has(out, "V3D 4.2 (renderD128)");
  expect_has(out, "87 counters from gpuperf's built-in table");
  expect_has(out, "L2T-CLE-reads");
  free(out);
  setenv("V3D_DOUBLE_VERSION", "71", 1);
  ASSERT_EQ(run(argv, &out, NULL), 0);
  expect_has(out, "V3D 7.1 (renderD128)");
  expect_has(out, "93 counters from gpuperf's built-in table");
  expect_has(out, "QPU-stalls-other");
  free(out);
  unsetenv("V3D_DOUBLE_WITHOUT");
  ASSERT_EQ(run(argv, &out, NULL), 0);
  expect_has(out, "93 counters from the kernel");
  free(out);
}

#if HAVE_TP

/* The sum and number of the values of counter track `name` of the V3D
 * GPU in trace. */
static double track_sum(gp_tp *tp, const char *name, int64_t *n) {
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM counter c JOIN gpu_counter_track t ON "
           "t.id = c.track_id JOIN gpu g ON g.id = t.ugpu WHERE t.name = '%s' "
           "AND g.name = 'V3D 4.2 (renderD128)'",
           name);
  *n = tp_int(tp, sql);
  snprintf(sql, sizeof(sql),
           "SELECT CAST(total(c.value) AS INT) FROM counter c JOIN "
           "gpu_counter_track t ON t.id = c.track_id WHERE t.name = '%s'",
           name);
  return (double)tp_int(tp, sql);
}

static gp_tp *open_trace(const char *path) {
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(path, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, e.message);
  return tp;
}

TEST(v3d_record_values_equal_what_the_double_counted) {
  setup();
  const char *trace = gp_test_path(1, "v3d.pftrace");
  char *argv[] = {cli,
                  "record",
                  "-q",
                  "-o",
                  (char *)trace,
                  "-e",
                  "L2T-CLE-reads,TLB-quads-passing-z-and-stencil-test",
                  "--",
                  jobs,
                  "run",
                  "60",
                  NULL};
  char *err = NULL;
  int rc = run(argv, NULL, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "record exited %d:\n%s", rc, err);
  free(err);
  v3dd_state s = read_state();
  ASSERT_EQ(s.jobs, 60);
  ASSERT_EQ(s.global, 0); /* gpuperf cleared its global perfmon */
  gp_tp *tp = open_trace(trace);
  static const struct {
    const char *name;
    int hw;
  } c[] = {{"L2T-CLE-reads", 57}, {"TLB-quads-passing-z-and-stencil-test", 6}};
  for (int i = 0; i < 2; i++) {
    int64_t n = 0;
    double sum = track_sum(tp, c[i].name, &n);
    printf("  %-38s %lld samples, sum %.0f, the double counted %llu\n",
           c[i].name, (long long)n, sum,
           (unsigned long long)s.global_counted[c[i].hw]);
    ASSERT_GT(n, 1);
    ASSERT_GT(s.global_counted[c[i].hw], 0);
    ASSERT_EQ((uint64_t)sum, s.global_counted[c[i].hw]);
  }
  /* Nothing else of the double's counters was counted. */
  ASSERT_EQ(s.global_counted[0], 0);
  gp_tp_close(tp);
}

#else

TEST(v3d_record_values_equal_what_the_double_counted) {
  SKIP("built without the trace processor");
}

#endif

/* Starts `v3d-jobs mode` and waits for its "ready"; returns its pid. */
static pid_t start_holder(const char *mode) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execl(jobs, jobs, mode, (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  char buf[16] = "";
  ssize_t k;
  while ((k = read(p[0], buf, sizeof(buf) - 1)) < 0 && errno == EINTR) {
  }
  close(p[0]);
  if (k <= 0 || strncmp(buf, "ready", 5) != 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    gp_test_fail(__FILE__, __LINE__, "v3d-jobs %s did not get ready", mode);
  }
  return pid;
}

static void stop_holder(pid_t pid) {
  kill(pid, SIGTERM);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
}

TEST(v3d_arbitration_says_who_and_exits_3) {
  setup();
  const char *trace = gp_test_path(1, "busy.pftrace");
  char *rec[] = {
      cli,  "record", "-q",  "-o", (char *)trace, "-e", "L2T-CLE-reads",
      "--", jobs,     "run", "3",  NULL};
  char *stat[] = {cli,   "stat", "-e", "L2T-CLE-reads", "--", jobs,
                  "run", "3",    NULL};
  /* A global perfmon held by another program. */
  pid_t h = start_holder("hold-global");
  char *err = NULL;
  ASSERT_EQ(run(rec, NULL, &err), 3);
  expect_has(err, "V3D counters of");
  expect_has(err, "are in use (DRM_IOCTL_V3D_PERFMON_SET_GLOBAL: EBUSY)");
  expect_has(err, "gpuperf does not stop them");
  expect_has(err, "--wait");
  free(err);
  v3dd_state s = read_state();
  ASSERT(s.global != 0); /* theirs, untouched */
  ASSERT_EQ(s.jobs, 0);  /* the program was not run */
  /* The HUD has no command line to stop at: the program runs, and its
   * counters are said not to be counted. */
  char hud_file[700];
  snprintf(hud_file, sizeof(hud_file), "GPUPERF_HUD_FILE=%s",
           gp_test_path(2, "hud.csv"));
  /* Long enough for the HUD's thread to tick (every 20 ms) many times. */
  char *hud[] = {"/usr/bin/env",
                 "GPUPERF_HUD=L2T-CLE-reads",
                 "GPUPERF_HUD_PERIOD_MS=20",
                 hud_file,
                 jobs,
                 "run",
                 "300",
                 NULL};
  ASSERT_EQ(run(hud, NULL, &err), 0);
  expect_has(err, "are in use (DRM_IOCTL_V3D_PERFMON_SET_GLOBAL: EBUSY)");
  expect_has(err, "not counted in this process");
  free(err);
  s = read_state();
  ASSERT(s.global != 0);
  ASSERT_EQ(s.jobs, 300);
  ASSERT_EQ(s.global_counted[57], 0); /* the holder counts counter 0 */
  stop_holder(h);
  /* A program's own per-job perfmon, active. */
  h = start_holder("hold-perjob");
  ASSERT_EQ(run(stat, NULL, &err), 3);
  expect_has(err, "per-job perfmon");
  free(err);
  s = read_state();
  ASSERT(s.active != 0 && s.global == 0);
  stop_holder(h);
  /* Free again (the kernel released the holder's file). */
  ASSERT_EQ(run(rec, NULL, NULL), 0);
  /* A kernel without SET_GLOBAL. */
  setenv("V3D_DOUBLE_WITHOUT", "SET_GLOBAL", 1);
  ASSERT_EQ(run(rec, NULL, &err), 2);
  expect_has(err, "this kernel has no system-wide V3D counters");
  free(err);
}

TEST(v3d_arbitration_wait_until_free) {
  setup();
  pid_t h = start_holder("hold-global");
  const char *trace = gp_test_path(1, "wait.pftrace");
  const char *errpath = gp_test_path(2, "wait.err");
  pid_t r = fork();
  ASSERT(r >= 0);
  if (r == 0) {
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    execl(cli, cli, "record", "-q", "--wait", "-o", trace, "-e",
          "L2T-CLE-reads", "--", jobs, "run", "5", (char *)NULL);
    _exit(127);
  }
  /* Until it says it waits (the test's own timeout bounds this). */
  for (;;) {
    char *text = slurp(errpath);
    bool waiting = strstr(text, "waiting (--wait)");
    free(text);
    if (waiting)
      break;
    struct timespec t = {0, 20000000L};
    nanosleep(&t, NULL);
  }
  ASSERT_EQ(read_state().jobs, 0); /* still waiting: not run */
  stop_holder(h);
  int st = 0;
  while (waitpid(r, &st, 0) < 0 && errno == EINTR) {
  }
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
  char *text = slurp(errpath);
  expect_has(text, "the V3D counters are free: starting");
  free(text);
  v3dd_state s = read_state();
  ASSERT_EQ(s.jobs, 5);
  ASSERT_GT(s.global_counted[57], 0);
}

TEST(v3d_program_per_job_refused_while_gpuperf_counts) {
  setup();
  const char *trace = gp_test_path(1, "perjob.pftrace");
  char *rec[] = {
      cli,  "record", "-q",     "-o", (char *)trace, "-e", "L2T-CLE-reads",
      "--", jobs,     "perjob", "4",  NULL};
  char *out = NULL;
  ASSERT_EQ(run(rec, &out, NULL), 0);
  /* The kernel refuses the program's own perfmon while gpuperf's global
   * one is set; gpuperf never clears anyone's. */
  expect_has(out, "perjob: 0 ok, 4 EAGAIN");
  free(out);
  ASSERT_EQ(read_state().refused_eagain, 4);
}

TEST(v3d_more_than_32_counters_refused) {
  setup();
  char *rec[] = {cli,
                 "record",
                 "-q",
                 "-o",
                 (char *)gp_test_path(1, "x"),
                 "-e",
                 "L2T-*,TLB-*,QPU-*",
                 "--",
                 jobs,
                 "run",
                 "1",
                 NULL};
  char *err = NULL;
  ASSERT_EQ(run(rec, NULL, &err), 2);
  expect_has(err, "can count at once");
  free(err);
  ASSERT_EQ(read_state().jobs, 0);
}

#if HAVE_TP

/* A GL program recorded with a V3D counter: the counter comes per frame
 * through GL_AMD_performance_monitor (here the GL double, tests/gl),
 * gpuperf says so, and the recorded program never takes the kernel's
 * global perfmon (the double's state). */
TEST(v3d_gl_program_counts_per_frame) {
  setup();
  char gl[512], amd[512], cmd[4096];
  if (!ocl_build_path("libgpuperf-gl.so", gl, sizeof(gl)) ||
      access(gl, R_OK) != 0)
    SKIP("libgpuperf-gl.so was not built");
  if (!ocl_build_path("tests/libgl-amdpm-double.so", amd, sizeof(amd)) ||
      access(amd, R_OK) != 0)
    SKIP("the GL_AMD_performance_monitor double was not built");
  if (system("command -v xvfb-run >/dev/null && command -v glxgears "
             ">/dev/null") != 0)
    SKIP("xvfb-run or glxgears is not installed (Debian xvfb, mesa-utils)");
  const char *trace = gp_test_path(1, "gl.pftrace");
  const char *errp = gp_test_path(2, "gl.err");
  snprintf(cmd, sizeof(cmd),
           "xvfb-run -a env LD_PRELOAD='%s:%s' '%s' record -q -e "
           "L2T-CLE-reads -o '%s' -- timeout -s INT 2 glxgears >/dev/null "
           "2>'%s'",
           amd, getenv("LD_PRELOAD"), cli, trace, errp);
  int rc = system(cmd);
  (void)rc; /* timeout's status: glxgears runs until told to stop */
  char *err = slurp(errp);
  expect_has(err, "its V3D counters are counted per frame through "
                  "GL_AMD_performance_monitor");
  free(err);
  gp_tp *tp = open_trace(trace);
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM counter c JOIN "
                       "gpu_counter_track t ON t.id = c.track_id JOIN gpu g "
                       "ON g.id = t.ugpu WHERE t.name = 'L2T-CLE-reads' AND "
                       "g.name NOT LIKE 'V3D%'"),
            10);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu_counter_track t JOIN gpu g "
                       "ON g.id = t.ugpu WHERE g.name LIKE 'V3D%'"),
            0);
  gp_tp_close(tp);
  v3dd_state s = read_state();
  ASSERT_EQ(s.global, 0);
  ASSERT_EQ(s.global_counted[57], 0);
  ASSERT_EQ(s.refused_ebusy, 0);
}

#else

TEST(v3d_gl_program_counts_per_frame) {
  SKIP("built without the trace processor");
}

#endif

/* Starts argv[0] with argv, stdout and stderr into log; returns its pid. */
static pid_t spawn(char *const argv[], const char *log) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

static int reap(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `gpuperf producer` with the double, into Perfetto's own traced (v58.2,
 * GPUPERF_PERFETTO_BIN), read by Perfetto's trace processor: the counter
 * tracks sum to what the double counted into the global perfmon. */
TEST(v3d_producer_into_perfettos_traced) {
  setup();
  const char *bin = getenv("GPUPERF_PERFETTO_BIN");
  if (!bin || !*bin)
    SKIP("GPUPERF_PERFETTO_BIN is not set (a folder with Perfetto's traced, "
         "perfetto and trace_processor_shell)");
  char traced[600], perfetto[600], tps[600], cfg[600], out[600], cmd[4096];
  snprintf(traced, sizeof(traced), "%s/traced", bin);
  snprintf(perfetto, sizeof(perfetto), "%s/perfetto", bin);
  snprintf(tps, sizeof(tps), "%s/trace_processor_shell", bin);
  snprintf(cfg, sizeof(cfg), "%s/gpu.cfg", root);
  snprintf(out, sizeof(out), "%s/service.pftrace", root);
  FILE *f = fopen(cfg, "w");
  ASSERT(f != NULL);
  fprintf(f, "buffers { size_kb: 8192 }\nduration_ms: 20000\n"
             "data_sources { config { name: \"gpu.counters\" "
             "gpu_counter_config { counter_period_ns: 10000000 "
             "counter_names: \"L2T-CLE-reads\" } } }\n");
  fclose(f);
  char sock[700];
  snprintf(sock, sizeof(sock), "%s/p.sock", root);
  setenv("PERFETTO_PRODUCER_SOCK_NAME", sock, 1);
  snprintf(sock, sizeof(sock), "%s/c.sock", root);
  setenv("PERFETTO_CONSUMER_SOCK_NAME", sock, 1);
  /* The double is not for Perfetto's programs. */
  char *lib = strdup(getenv("LD_PRELOAD"));
  unsetenv("LD_PRELOAD");
  char *tv[] = {traced, NULL};
  pid_t t = spawn(tv, gp_test_path(2, "traced.log"));
  /* traced listens once its socket is there. */
  while (access(sock, F_OK) != 0) {
    struct timespec ts = {0, 20000000L};
    nanosleep(&ts, NULL);
  }
  setenv("LD_PRELOAD", lib, 1);
  char *pv[] = {cli, "producer", "--duration", "60", NULL};
  pid_t p = spawn(pv, gp_test_path(3, "producer.log"));
  unsetenv("LD_PRELOAD");
  char *cv[] = {perfetto, "--txt", "-c", cfg, "-o", out, NULL};
  pid_t c = spawn(cv, gp_test_path(1, "perfetto.log"));
  setenv("LD_PRELOAD", lib, 1);
  /* Until the producer's data source holds the global perfmon. */
  while (access(state_path, R_OK) != 0 || read_state().global == 0) {
    struct timespec ts = {0, 20000000L};
    nanosleep(&ts, NULL);
  }
  char *jv[] = {jobs, "run", "100", NULL};
  ASSERT_EQ(run(jv, NULL, NULL), 0);
  v3dd_state s = read_state();
  /* End the session now rather than at its duration. */
  kill(c, SIGTERM);
  int prc = reap(c);
  kill(p, SIGTERM);
  reap(p);
  kill(t, SIGTERM);
  reap(t);
  free(lib);
  unsetenv("LD_PRELOAD");
  ASSERT_EQ(prc, 0);
  ASSERT_GT(s.global_counted[57], 0);
  snprintf(cmd, sizeof(cmd),
           "'%s' -Q \"SELECT CAST(sum(c.value) AS INT) FROM counter c JOIN "
           "gpu_counter_track t ON c.track_id = t.id WHERE t.name = "
           "'L2T-CLE-reads'\" '%s' 2>/dev/null | tail -1",
           tps, out);
  FILE *q = popen(cmd, "r");
  ASSERT(q != NULL);
  char line[128] = "";
  char *got = fgets(line, sizeof(line), q);
  pclose(q);
  ASSERT(got != NULL);
  printf("  Perfetto's trace processor: L2T-CLE-reads %s  the double: %llu\n",
         strtok(line, "\n"), (unsigned long long)s.global_counted[57]);
  ASSERT_EQ(strtoull(line, NULL, 10), s.global_counted[57]);
}
