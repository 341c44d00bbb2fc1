/*
 * test_counters_cli.c - the counters from the command line: `gpuperf
 * list` (text and JSON), GPUPERF_HUD=help in a program that loads the
 * library, and `gpuperf stat -e ... -- CMD` on a program driving the
 * simulated GPUs, whose totals are checked against the cost model.
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/sim/simInt.h"
#include "harness.h"
#include "unit/writer_util.h"
#include "programs/refuse_perf.h"
#include "programs/stat_app.h"
#include "testutil.h"

/* Runs argv with extra env ("K=V" strings, NULL-terminated, may be NULL),
 * stdout and stderr into files; returns the exit status (128+sig). With
 * refuse, perf_event_open() is refused in the child (99 if that cannot be
 * arranged). */
static int run_as(char *const argv[], const char *const *env, const char *out,
                  const char *err, bool refuse) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    if (refuse && !refuse_perf_event_open())
      _exit(99);
    for (size_t i = 0; env && env[i]; i++)
      putenv((char *)env[i]);
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

static int run(char *const argv[], const char *const *env, const char *out,
               const char *err) {
  return run_as(argv, env, out, err, false);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  static char *bufs[8];
  static int next;
  char *b = malloc(1 << 20);
  ASSERT_NOT_NULL(b);
  size_t n = fread(b, 1, (1 << 20) - 1, f);
  b[n] = '\0';
  fclose(f);
  free(bufs[next]);
  bufs[next] = b;
  next = (next + 1) % 8;
  return b;
}

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || access(c, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through 'make test')");
  return c;
}

TEST(cli_list_counters) {
  const char *g = cli();
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  char *a1[] = {(char *)g, "list", NULL};
  ASSERT_EQ(run(a1, NULL, out, err), 0);
  const char *t = slurp(out);
  ASSERT(strstr(t, "device 2: Sim V3D 4.2 #2"));
  ASSERT(strstr(t, "blocks: perfcnt (87 counters, 32 at once)"));
  ASSERT(strstr(t, "QPU-total-active-clk-cycles-vertex-coord-shading"));
  ASSERT(strstr(t, "[L2T] Total Level 2 cache hits"));
  ASSERT(strstr(t, "Utilization"));
  ASSERT(strstr(t, "PERCENT"));
  ASSERT(strstr(t, "Memory, L2 Cache"));
  ASSERT(strstr(t, "Host CPU"));
  ASSERT(strstr(t, "task-clock"));
  char *a2[] = {(char *)g, "list", "--device", "2", "--json", NULL};
  ASSERT_EQ(run(a2, NULL, out, err), 0);
  t = slurp(out);
  ASSERT(strncmp(t, "{\"devices\": [", 13) == 0);
  ASSERT(strstr(t, "\"name\": \"AXI-read-bytes-seen-watch-0\""));
  ASSERT(strstr(t, "\"numerator_units\": [\"BYTE\"]"));
  ASSERT(strstr(t, "\"max_active\": 32"));
  ASSERT(strstr(t, "\"category\": \"QPU\""));
  ASSERT(!strstr(t, "Sim Compute GPU"));
  char *a3[] = {(char *)g, "list", "--device", "99", NULL};
  ASSERT_EQ(run(a3, NULL, out, err), 2);
  ASSERT(strstr(slurp(err), "no device 99"));
  char *a4[] = {(char *)g, "list", "--bogus", NULL};
  ASSERT_EQ(run(a4, NULL, out, err), 1);
  /* Where perf_event_open is refused, the host CPU says why. */
  int rc = run_as(a1, NULL, out, err, true);
  if (rc == 99)
    return; /* no seccomp here: the refusal is tested where it can be */
  ASSERT_EQ(rc, 0);
  t = slurp(out);
  const char *note = strstr(t, "note: perf_event_open() refused");
  ASSERT_NOT_NULL(note);
  ASSERT(strstr(note, "kernel.perf_event_paranoid is"));
  char *a5[] = {(char *)g, "list", "--json", NULL};
  ASSERT_EQ(run_as(a5, NULL, out, err, true), 0);
  ASSERT(strstr(slurp(out), "\"unavailable\": \"perf_event_open() refused"));
}

/* GPUPERF_HUD=help: any program loading the library prints the list that
 * `gpuperf list` prints, the OpenCL and Vulkan devices included, and exits
 * before doing its own work. */
TEST(cli_hud_help_prints_list) {
  const char *g = cli(), *app = wt_built("tests/stat_app");
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *out2 = gp_test_path(2, "out2");
  const char *touched = gp_test_path(3, "touched");
  char *a1[] = {(char *)g, "list", NULL};
  ASSERT_EQ(run(a1, NULL, out2, err), 0);
  char *list = strdup(slurp(out2));
  /* `gpuperf list` ends with the CUDA devices, which the CUDA injection
   * library registers only in the CLI. */
  char *cuda = strstr(list, "\nCUDA ");
  if (cuda)
    cuda[1] = '\0';
  char *a2[] = {(char *)app, "--touch", (char *)touched, NULL};
  const char *env[] = {"GPUPERF_HUD=help", NULL};
  ASSERT_EQ(run(a2, env, out, err), 0);
  const char *t = slurp(out);
  ASSERT(strstr(t, "GPUPERF_HUD=help"));
  const char *body = strstr(t, "device 0:");
  ASSERT_NOT_NULL(body);
  ASSERT_STR_EQ(body, list);
  ASSERT(strstr(body, "\nOpenCL")); /* a section, whatever the loader says */
  ASSERT(strstr(body, "\nVulkan"));
  ASSERT(access(touched, F_OK) != 0); /* main() never ran */
  ASSERT(!strstr(t, "stat_app: done"));
  /* Another value names counters to show (hud.c): one no device has is
   * named, with the list, and the program runs. */
  /* (fps is a name of the HUD in a GL window: not this one.) */
  const char *env2[] = {"GPUPERF_HUD=frames-per-minute,cycle-count", NULL};
  ASSERT_EQ(run(a2, env2, out, err), 0);
  ASSERT(
      strstr(slurp(err), "'frames-per-minute' is not a counter of any device"));
  ASSERT(strstr(slurp(err), "cycle-count"));
  ASSERT(strstr(slurp(out), "stat_app: done"));
  free(list);
}

/* The value printed for a counter in a section of the report ("" for the
 * device totals, or a kernel's name). */
static double report_value(const char *t, const char *device,
                           const char *kernel, const char *counter) {
  const char *p = strstr(t, device);
  if (!p)
    gp_test_fail(__FILE__, __LINE__, "no section %s in:\n%s", device, t);
  if (kernel) {
    char k[256];
    snprintf(k, sizeof(k), "kernel %s:", kernel);
    p = strstr(p, k);
    if (!p)
      gp_test_fail(__FILE__, __LINE__, "no %s in:\n%s", k, t);
  }
  /* The counter's line, before the blank line that ends the section. */
  const char *end = strstr(p, "\n\n");
  const char *line = strstr(p, counter);
  if (!line || (end && line > end))
    gp_test_fail(__FILE__, __LINE__, "no %s for %s/%s in:\n%s", counter, device,
                 kernel ? kernel : "-", t);
  const char *s = line;
  while (s > t && s[-1] != '\n')
    s--;
  char num[64];
  size_t n = 0;
  for (; s < line && n < sizeof(num) - 1; s++)
    if ((*s >= '0' && *s <= '9') || *s == '.')
      num[n++] = *s;
  num[n] = '\0';
  return strtod(num, NULL);
}

static double expected_dram(int which, int n) {
  gp_sim_kernel_desc d = stat_app_kernel(which);
  sim_work_stats st;
  gp_sim_dim3 g = {STAT_APP_GRID, 1, 1}, b = {STAT_APP_BLOCK, 1, 1};
  gp__sim_kernel_cost(gp__sim_model_get(GP_SIM_MODEL_COMPUTE), &d, g, b, 0,
                      &st);
  return st.dram_read * stat_app_launches(which, n);
}

TEST(cli_stat_totals_per_counter_and_kernel) {
  const char *g = cli(), *app = wt_built("tests/stat_app");
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *rep = gp_test_path(2, "report");
  char *a[] = {
      (char *)g,    "stat",
      "-e",         "dram__bytes_read.sum,Utilization,cycle-count,task-clock",
      "-o",         (char *)rep,
      "--",         (char *)app,
      "--launches", "6",
      "--exit",     "3",
      NULL};
  ASSERT_EQ(run(a, NULL, out, err), 3); /* the program's status */
  ASSERT(strstr(slurp(out), "stat_app: done"));
  const char *t = slurp(rep);
  ASSERT(strstr(t, "Performance counter stats for"));
  double saxpy = expected_dram(0, 6), reduce = expected_dram(1, 6);
  ASSERT_NEAR(
      report_value(t, "Sim Compute GPU #0:", NULL, "dram__bytes_read.sum"),
      saxpy + reduce, 2.0);
  ASSERT_NEAR(
      report_value(t, "Sim Compute GPU #0:", "saxpy", "dram__bytes_read.sum"),
      saxpy, 6.0); /* one rounding per launch */
  ASSERT_NEAR(
      report_value(t, "Sim Compute GPU #0:", "reduce", "dram__bytes_read.sum"),
      reduce, 4.0);
  ASSERT(strstr(t, "kernel saxpy: 6 launches"));
  ASSERT(strstr(t, "kernel reduce: 4 launches"));
  ASSERT(strstr(t, "kernel csd_blur: 6 launches"));
  double util = report_value(t, "Sim Compute GPU #0:", NULL, "Utilization");
  ASSERT(util > 0.0 && util < 100.0);
  ASSERT_GT(report_value(t, "Sim V3D 4.2 #2:", NULL, "cycle-count"), 0.0);
  ASSERT(strstr(t, "seconds time elapsed"));
  if (gp_host_perf_status(NULL, 0) == 0)
    ASSERT_GT(report_value(t, "Host CPU", NULL, "task-clock"), 1.0); /* ms */
}

TEST(cli_stat_children_and_errors) {
  const char *g = cli(), *app = wt_built("tests/stat_app");
  const char *out = gp_test_path(0, "out"), *err = gp_test_path(1, "err");
  const char *touched = gp_test_path(2, "touched");
  /* Two processes: both counted. */
  char *a[] = {(char *)g, "stat",      "-e",         "dram__bytes_read.sum",
               "--",      (char *)app, "--launches", "2",
               "--spawn", NULL};
  ASSERT_EQ(run(a, NULL, out, err), 0);
  const char *t = slurp(err);
  ASSERT(strstr(t, "(all its processes)"));
  ASSERT_NEAR(
      report_value(t, "Sim Compute GPU #0:", NULL, "dram__bytes_read.sum"),
      2 * (expected_dram(0, 2) + expected_dram(1, 2)), 4.0);
  ASSERT(strstr(t, "kernel saxpy: 4 launches"));
  /* An unknown counter: status 2, one clear line, the program not run. */
  char *b[] = {(char *)g, "stat",      "-e",      "cycle-count,no-such-counter",
               "--",      (char *)app, "--touch", (char *)touched,
               NULL};
  ASSERT_EQ(run(b, NULL, out, err), 2);
  ASSERT(strstr(slurp(err), "unknown counter 'no-such-counter'"));
  ASSERT(access(touched, F_OK) != 0);
  /* More than a block counts at once: record refuses before the program
   * runs (stat multiplexes them: test_stat_perf.c). */
  const char *trace = gp_test_path(3, "t.pftrace");
  char *c[] = {(char *)g, "record",        "-e", "dram__*",
               "-o",      (char *)trace,   "--", (char *)app,
               "--touch", (char *)touched, NULL};
  ASSERT_EQ(run(c, NULL, out, err), 2);
  ASSERT(strstr(slurp(err), "more than it can count at once"));
  ASSERT(access(touched, F_OK) != 0);
  /* A command that does not exist: 127, like a shell. */
  char *d[] = {(char *)g, "stat", "--", "/nonexistent/program", NULL};
  ASSERT_EQ(run(d, NULL, out, err), 127);
  ASSERT(strstr(slurp(err), "cannot run '/nonexistent/program'"));
  /* No command. */
  char *e[] = {(char *)g, "stat", NULL};
  ASSERT_EQ(run(e, NULL, out, err), 1);
}
