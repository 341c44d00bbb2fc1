/*
 * test_hud.c - GPUPERF_HUD=<counters> rows in GPUPERF_HUD_FILE, against
 * what is true independently of the HUD: the pid the program itself
 * reports (rows come from it alone, never from `gpuperf record`), the
 * wall time the test measured around the whole run (times start at the
 * program's start and never go back), the file's bytes (every row whole,
 * as many fields as the header). Programs: tests/programs/stat_app
 * (simulated GPUs in real time) and the OpenCL sample (PoCL), under
 * `gpuperf record` and under the OpenCL preload alone. Also a name no
 * device has (reported with the list, the program running on) and the
 * line on a terminal (script(1)); test_hud_term.c compares a terminal's
 * screen with the program's own output.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "unit/writer_util.h"
#include "opencl/oclutil.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || access(c, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The pid a `sh -c 'echo pid=$$ >&2; exec ...'` wrapper printed. */
static long wrapped_pid(const char *err) {
  const char *p = err ? strstr(err, "pid=") : NULL;
  if (!p)
    gp_test_fail(__FILE__, __LINE__, "no pid= line in:\n%s", err ? err : "");
  return strtol(p + 4, NULL, 10);
}

/* A HUD file, read back and checked row by row. */
typedef struct csv {
  int rows, with_value;
  long pid;       /* every row's (checked to be one) */
  double first_t; /* the first row's time */
  double last_t;
  double values[4096]; /* the first item's values, in order */
  int first_valued;    /* index of the first row with a value, -1 none */
} csv;

/*
 * Reads path: the header must be "time_s,pid,<header_items>"; every row
 * must end in a newline and have 2 + nitems fields, a time above the one
 * before (times never go back) and a pid, every row the same pid; values
 * lie in [lo, hi].
 */
static void read_csv(const char *path, const char *header_items, int nitems,
                     double lo, double hi, csv *c) {
  memset(c, 0, sizeof(*c));
  c->first_valued = -1;
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  static char line[8192];
  char want[512];
  snprintf(want, sizeof(want), "time_s,pid,%s\n", header_items);
  ASSERT_NOT_NULL(fgets(line, sizeof(line), f));
  ASSERT_STR_EQ(line, want);
  double prev = -1;
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n')
      gp_test_fail(__FILE__, __LINE__, "row %d is cut: '%s'", c->rows + 1,
                   line);
    int fields = 1;
    for (char *p = line; *p; p++)
      fields += *p == ',';
    if (fields != 2 + nitems)
      gp_test_fail(__FILE__, __LINE__, "row %d has %d fields: '%s'",
                   c->rows + 1, fields, line);
    char *end;
    double t = strtod(line, &end);
    ASSERT(*end == ',');
    long pid = strtol(end + 1, &end, 10);
    ASSERT(*end == ',');
    if (c->rows == 0) {
      c->pid = pid;
      c->first_t = t;
      ASSERT(t >= 0);
    }
    if (pid != c->pid)
      gp_test_fail(__FILE__, __LINE__, "row %d is from pid %ld, row 1 from %ld",
                   c->rows + 1, pid, c->pid);
    if (!(t > prev))
      gp_test_fail(__FILE__, __LINE__, "row %d: time %.3f after %.3f",
                   c->rows + 1, t, prev);
    prev = c->last_t = t;
    const char *v = end + 1;
    if (*v != ',' && *v != '\n') {
      double x = strtod(v, NULL);
      if (!(x >= lo && x <= hi))
        gp_test_fail(__FILE__, __LINE__, "row %d: value %g", c->rows + 1, x);
      if (c->with_value < 4096)
        c->values[c->with_value] = x;
      if (c->first_valued < 0)
        c->first_valued = c->rows;
      c->with_value++;
    }
    c->rows++;
  }
  fclose(f);
}

/* `gpuperf record` runs the program: the rows are the program's (the pid
 * it prints), none the recorder's, with times from its start. */
TEST(hud_file_rows_of_the_program_alone) {
  const char *g = cli(), *app = wt_built("tests/stat_app");
  const char *path = gp_test_path(0, "hud.csv");
  const char *trace = gp_test_path(1, "t.pftrace");
  char file[600];
  snprintf(file, sizeof(file), "GPUPERF_HUD_FILE=%s", path);
  char *env[] = {"GPUPERF_HUD=Utilization", "GPUPERF_HUD_PERIOD_MS=100",
                 "GPUPERF_SIM_TIME=real", file, NULL};
  char *argv[] = {
      (char *)g,   "record",      "-q",
      "-o",        (char *)trace, "--",
      "/bin/sh",   "-c",          "echo pid=$$ >&2; exec \"$0\" \"$@\"",
      (char *)app, "--launches",  "6000",
      NULL};
  char *out = NULL, *err = NULL;
  double t0 = now_s();
  ASSERT_EQ(ocl_run(argv, env, 120, &out, &err), 0);
  double ran = now_s() - t0;
  ASSERT(strstr(out, "stat_app: done"));
  long pid = wrapped_pid(err);
  csv c;
  read_csv(path, "Utilization", 1, 0, 100, &c);
  printf("  ran %.2f s: %d rows from pid %ld (the program: %ld), %d with a "
         "value, times %.3f .. %.3f s\n",
         ran, c.rows, c.pid, pid, c.with_value, c.first_t, c.last_t);
  ASSERT_GE(c.rows, 2); /* a period's row, and the exit's */
  ASSERT_EQ(c.pid, pid);
  /* From the program's start (after the test's), on CLOCK_MONOTONIC. */
  ASSERT(c.last_t <= ran);
  ASSERT_GE(c.with_value, 1);
  free(out);
  free(err);
}

/* Starts argv with the extra environment env, stdout and stderr into
 * files of the test's directory; returns its pid. */
static pid_t spawn(char *const argv[], char *const env[]) {
  const char *out = gp_test_path(2, "spawn.out");
  const char *err = gp_test_path(3, "spawn.err");
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    for (size_t i = 0; env && env[i]; i++)
      putenv(env[i]);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0)
      _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  return pid;
}

/* Waits up to limit_s for pid; its exit status (128 + signal). On time
 * out it is killed (by its pid) and the test fails. */
static int reap(pid_t pid, int limit_s) {
  int st = 0;
  for (int i = 0; i < limit_s * 100; i++) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  gp_test_fail(__FILE__, __LINE__, "pid %d ran past %d s", (int)pid, limit_s);
}

/* Rows in the file so far (lines after the header). */
static int rows_in(const char *path) {
  FILE *f = fopen(path, "r");
  int n = -1, c;
  if (!f)
    return 0;
  while ((c = fgetc(f)) != EOF)
    n += c == '\n';
  fclose(f);
  return n < 0 ? 0 : n;
}

/* A program that prints nothing of its own HUD: a row each period, with
 * values that move while the device works. The program starts its work
 * once the HUD has written a row (it waits for a file the test creates
 * then), so the work is sampled however slowly the machine runs. */
TEST(hud_file_one_csv_row_per_period) {
  const char *app = wt_built("tests/stat_app");
  const char *path = gp_test_path(0, "hud.csv");
  const char *go = gp_test_path(1, "go");
  char file[600];
  snprintf(file, sizeof(file), "GPUPERF_HUD_FILE=%s", path);
  char *env[] = {"GPUPERF_HUD=Utilization", "GPUPERF_HUD_PERIOD_MS=100",
                 "GPUPERF_SIM_TIME=real", file, NULL};
  char *argv[] = {(char *)app,     "--launches", "6000",
                  "--start-after", (char *)go,   NULL};
  double t0 = now_s();
  pid_t pid = spawn(argv, env);
  for (int i = 0; rows_in(path) < 1 && i < 12000; i++) {
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
  FILE *f = fopen(go, "w");
  ASSERT_NOT_NULL(f);
  fclose(f);
  ASSERT_EQ(reap(pid, 120), 0);
  double ran = now_s() - t0;
  csv c;
  read_csv(path, "Utilization", 1, 0, 100, &c);
  printf("  ran %.2f s: %d rows, %d with a value; last at %.3f s\n", ran,
         c.rows, c.with_value, c.last_t);
  ASSERT_EQ(c.pid, pid);
  ASSERT(c.last_t <= ran);
  ASSERT_GE(c.with_value, 2);
  int positive = 0;
  bool moved = false;
  for (int i = 0; i < c.with_value && i < 4096; i++) {
    positive += c.values[i] > 0;
    moved |= fabs(c.values[i] - c.values[0]) > 1e-9;
  }
  ASSERT_GE(positive, 1); /* device 0 works while it is sampled */
  ASSERT(moved);          /* live values, not one number repeated */
}

/* A real OpenCL program: the derived Utilization, whose final values come
 * seconds late, has a provisional value in every row from the first one
 * after the device appeared, under `gpuperf record` and with the preload
 * library alone (no session asks for the work records then: the HUD
 * does). */
static void opencl_rows(bool record) {
  ocl_env();
  ocl_require_device();
  const char *sample = wt_built("tests/opencl-sample");
  const char *path = gp_test_path(0, "hud.csv");
  const char *trace = gp_test_path(1, "t.pftrace");
  char file[600], preload[600];
  snprintf(file, sizeof(file), "GPUPERF_HUD_FILE=%s", path);
  snprintf(preload, sizeof(preload), "LD_PRELOAD=%s",
           wt_built("libgpuperf-opencl.so"));
  char *env[] = {"GPUPERF_HUD=Utilization", "GPUPERF_HUD_PERIOD_MS=20", file,
                 record ? NULL : preload, NULL};
  char *wrap[] = {"/bin/sh",
                  "-c",
                  "echo pid=$$ >&2; exec \"$0\" \"$@\"",
                  (char *)sample,
                  "-n",
                  "5",
                  NULL};
  char *rec[] = {(char *)cli(), "record", "-q", "-o",
                 (char *)trace, "--",     NULL};
  char *argv[32];
  int k = 0;
  for (int i = 0; record && rec[i]; i++)
    argv[k++] = rec[i];
  for (int i = 0; wrap[i]; i++)
    argv[k++] = wrap[i];
  argv[k] = NULL;
  char *out = NULL, *err = NULL;
  double t0 = now_s();
  int rc = ocl_run(argv, env, 180, &out, &err);
  double ran = now_s() - t0;
  if (rc == 77)
    SKIP("no OpenCL device");
  ASSERT_EQ(rc, 0);
  ASSERT(strstr(out, "main count commands="));
  csv c;
  read_csv(path, "Utilization", 1, 0, 100, &c);
  printf("  %s: ran %.2f s, %d rows from pid %ld, %d with a value (the "
         "first at row %d)\n",
         record ? "record" : "preload", ran, c.rows, c.pid, c.with_value,
         c.first_valued + 1);
  ASSERT_EQ(c.pid, wrapped_pid(err));
  ASSERT(c.last_t <= ran);
  /* Rows start with the device; a value within one period: the first
   * row may come before its sampling began, no later one. */
  ASSERT_GE(c.with_value, 1);
  ASSERT_LE(c.first_valued, 1);
  ASSERT_EQ(c.with_value, c.rows - c.first_valued);
  ASSERT(!strstr(err, "had no value"));
  free(out);
  free(err);
}

TEST(hud_file_opencl_values_under_record) {
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  opencl_rows(true);
}

TEST(hud_file_opencl_values_with_preload_alone) {
  opencl_rows(false);
}

/* The numbers after each "Utilization " and its sparkline in a terminal
 * transcript; returns how many. */
static int line_values(const char *t, double *v, int cap) {
  int n = 0;
  for (const char *p = t; (p = strstr(p, "\033[2KUtilization ")) && n < cap;) {
    p += strlen("\033[2KUtilization ");
    /* U+2581..U+2588 are E2 96 81..88 in UTF-8. */
    while ((unsigned char)p[0] == 0xe2 && (unsigned char)p[1] == 0x96)
      p += 3;
    if (*p == ' ' && p[1] != '-') {
      char *end;
      double x = strtod(p + 1, &end);
      if (end > p + 1)
        v[n++] = x;
    }
  }
  return n;
}

TEST(hud_tty_line_shows_live_values) {
  const char *app = wt_built("tests/stat_app");
  if (access("/usr/bin/script", X_OK) != 0)
    SKIP("script(1) (util-linux) is not installed: no terminal to test in");
  char cmd[800];
  /* script(1) gives the terminal the size of its own, none here. */
  snprintf(cmd, sizeof(cmd), "stty rows 24 cols 80; %s --launches 6000", app);
  char *env[] = {"GPUPERF_HUD=Utilization", "GPUPERF_HUD_PERIOD_MS=100",
                 "GPUPERF_SIM_TIME=real", NULL};
  char *argv[] = {"/usr/bin/script", "-qfec", cmd, "/dev/null", NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 60, &out, &err), 0);
  ASSERT(strstr(out, "stat_app: done"));
  double v[4096];
  int n = line_values(out, v, 4096);
  printf("  %d redraws with a value, e.g. %.4g, %.4g\n", n, n ? v[0] : 0,
         n > 1 ? v[n / 2] : 0);
  ASSERT_GE(n, 2);
  bool moved = false;
  for (int i = 1; i < n && !moved; i++)
    moved = fabs(v[i] - v[0]) > 1e-9;
  ASSERT(moved);
  for (int i = 0; i < n; i++)
    ASSERT(v[i] >= 0 && v[i] <= 100);
  /* The bottom line only: a scroll region over the 23 above, given back. */
  ASSERT(strstr(out, "\033[1;23r"));
  ASSERT(strstr(out, "\0337\033[r"));
  /* Not a terminal: nothing on stderr. */
  char *argv2[] = {(char *)app, "--launches", "200", NULL};
  free(out);
  free(err);
  ASSERT_EQ(ocl_run(argv2, env, 60, &out, &err), 0);
  ASSERT(!strstr(err, "Utilization"));
  ASSERT(!strchr(err, '\033'));
  free(out);
  free(err);
}

TEST(hud_unknown_name_lists_counters) {
  const char *app = wt_built("tests/stat_app");
  char *env[] = {"GPUPERF_HUD=Utilization+no-such-counter:5,cycle-count",
                 "GPUPERF_SIM_TIME=real", NULL};
  char *argv[] = {(char *)app, "--launches", "300", NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 60, &out, &err), 0);
  ASSERT(strstr(out, "stat_app: done")); /* the program ran */
  ASSERT(strstr(err, "'no-such-counter' is not a counter of any device"));
  ASSERT(strstr(err, "device 0: Sim Compute GPU #0")); /* the list */
  ASSERT(strstr(err, "cycle-count"));
  ASSERT(!strstr(err, "'Utilization' is not"));
  ASSERT(!strstr(err, "'cycle-count' is not"));
  free(out);
  free(err);
  /* Malformed: an empty name. */
  char *env2[] = {"GPUPERF_HUD=Utilization,,x", NULL};
  ASSERT_EQ(ocl_run(argv, env2, 60, &out, &err), 0);
  ASSERT(strstr(err, "empty counter name"));
  free(out);
  free(err);
}

/* GPUPERF_HUD=help under `gpuperf record`: the list, real devices
 * included, on stderr, and the program runs (it would print the list and
 * exit before main() on its own). */
TEST(hud_help_under_record_runs_the_program) {
  const char *g = cli(), *app = wt_built("tests/stat_app");
  const char *touched = gp_test_path(0, "touched");
  const char *trace = gp_test_path(1, "t.pftrace");
  ocl_env();
  char *env[] = {"GPUPERF_HUD=help", NULL};
  char *argv[] = {(char *)g,       "record", "-q",        "-o",
                  (char *)trace,   "--",     (char *)app, "--touch",
                  (char *)touched, NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 120, &out, &err), 0);
  ASSERT(access(touched, F_OK) == 0); /* main() ran */
  ASSERT(strstr(out, "stat_app: done"));
  ASSERT(strstr(err, "GPUPERF_HUD=help"));
  ASSERT(strstr(err, "device 0: Sim Compute GPU #0"));
  ASSERT(strstr(err, "the program runs without the HUD"));
  ASSERT(!strstr(out, "device 0:")); /* the program's stdout is its own */
  /* The OpenCL devices the program could use, with their counters. */
  if (!strstr(err, "\nOpenCL: "))
    ASSERT(strstr(err, "Utilization.Compute"));
  free(out);
  free(err);
}
