/*
 * test_hud.c - GPUPERF_HUD=<counters> in a program that drives the
 * simulated GPUs (tests/programs/stat_app, real time): one CSV row per
 * period to GPUPERF_HUD_FILE, with Utilization values that move; a live
 * line of sparklines redrawn on a terminal (the program run under
 * script(1), which gives it one); a name no device has reported with the
 * list of counters, the program running on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"

static const char *stat_app(void) {
  static char buf[512];
  if (!ocl_build_path("tests/stat_app", buf, sizeof(buf)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  if (access(buf, X_OK) != 0)
    SKIP("%s is not built", buf);
  return buf;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

TEST(hud_file_one_csv_row_per_period) {
  const char *app = stat_app();
  const char *path = gp_test_path(0, "hud.csv");
  char file[600];
  snprintf(file, sizeof(file), "GPUPERF_HUD_FILE=%s", path);
  char *env[] = {"GPUPERF_HUD=Utilization", "GPUPERF_HUD_PERIOD_MS=100",
                 "GPUPERF_SIM_TIME=real", file, NULL};
  char *argv[] = {(char *)app, "--launches", "6000", NULL};
  char *out = NULL, *err = NULL;
  double t0 = now_s();
  ASSERT_EQ(ocl_run(argv, env, 60, &out, &err), 0);
  double ran = now_s() - t0;
  ASSERT(strstr(out, "stat_app: done"));
  FILE *f = fopen(path, "r");
  ASSERT_NOT_NULL(f);
  char line[256];
  ASSERT_NOT_NULL(fgets(line, sizeof(line), f));
  ASSERT_STR_EQ(line, "time_s,Utilization\n");
  int rows = 0, with_value = 0, positive = 0;
  double prev = 0, t = 0;
  double values[4096];
  while (fgets(line, sizeof(line), f) && rows < 4096) {
    char *comma = strchr(line, ',');
    ASSERT_NOT_NULL(comma);
    t = strtod(line, NULL);
    if (rows)
      ASSERT(t > prev);
    prev = t;
    if (comma[1] != '\n') {
      double v = strtod(comma + 1, NULL);
      ASSERT(v >= 0 && v <= 100);
      values[with_value++] = v;
      positive += v > 0;
    }
    rows++;
  }
  fclose(f);
  printf("  ran %.2f s: %d rows, %d with a value, %d > 0; last at %.3f s\n",
         ran, rows, with_value, positive, t);
  /* Every period has its row: as many as the HUD's time ran periods (the
   * last row is the exit's). Its clock starts after the program is loaded
   * and ends before the process does, which under a sanitizer on a busy
   * machine is a good part of a second: the span is held to most of the
   * run, the rows to the span. */
  ASSERT_GE(t, ran * 0.5);
  ASSERT_LE(t, ran);
  ASSERT_GE(rows, (int)(t / 0.1) - 1);
  ASSERT_LE(rows, (int)(t / 0.1) + 2);
  ASSERT_GE(positive, 3); /* device 0 is busy in the first part */
  bool moved = false;
  for (int i = 1; i < with_value && !moved; i++)
    moved = fabs(values[i] - values[0]) > 1e-9;
  ASSERT(moved); /* live values, not one number repeated */
  free(out);
  free(err);
}

/* The numbers after each "Utilization " and its sparkline in a terminal
 * transcript; returns how many. */
static int line_values(const char *t, double *v, int cap) {
  int n = 0;
  for (const char *p = t; (p = strstr(p, "\033[KUtilization ")) && n < cap;) {
    p += strlen("\033[KUtilization ");
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
  const char *app = stat_app();
  if (access("/usr/bin/script", X_OK) != 0)
    SKIP("script(1) (util-linux) is not installed: no terminal to test in");
  char cmd[800];
  snprintf(cmd, sizeof(cmd), "%s --launches 6000", app);
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
  ASSERT_GE(n, 5);
  bool moved = false;
  for (int i = 1; i < n && !moved; i++)
    moved = fabs(v[i] - v[0]) > 1e-9;
  ASSERT(moved);
  for (int i = 0; i < n; i++)
    ASSERT(v[i] >= 0 && v[i] <= 100);
  /* Not a terminal: nothing on stderr. */
  char *argv2[] = {(char *)app, "--launches", "200", NULL};
  free(out);
  free(err);
  ASSERT_EQ(ocl_run(argv2, env, 60, &out, &err), 0);
  ASSERT(!strstr(err, "Utilization"));
  free(out);
  free(err);
}

TEST(hud_unknown_name_lists_counters) {
  const char *app = stat_app();
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
