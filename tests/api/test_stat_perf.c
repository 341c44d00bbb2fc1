/*
 * test_stat_perf.c - `gpuperf stat` beside `perf stat` (issue 32 item 8):
 * thousands separators kept with -r, the "seconds user" and "seconds sys"
 * lines (the children's rusage), rates per second in the metric column,
 * and the shapes of those lines compared with what the perf installed
 * here prints (skipped where perf cannot count software events).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "unit/writer_util.h"
#include "tp/tputil.h"

/* The offset in text of the start of the line p is in. */
static size_t line_start(const char *text, const char *p) {
  while (p > text && p[-1] != '\n')
    p--;
  return (size_t)(p - text);
}

/* The -x line of text holding a and ending with end (its newline
 * included), copied into buf without it. */
static const char *line_ending(const char *text, const char *a, const char *end,
                               char *buf, size_t size) {
  for (const char *p = strstr(text, a); p; p = strstr(p + 1, a)) {
    const char *nl = strchr(p, '\n');
    size_t n = strlen(end) - 1;
    if (nl && (size_t)(nl - p) >= n && strncmp(nl - n, end, n + 1) == 0)
      return tp_line_of(text + line_start(text, p), a, buf, size);
  }
  return NULL;
}

/* The line of text holding both a and b, copied into buf. */
static const char *line_with(const char *text, const char *a, const char *b,
                             char *buf, size_t size) {
  for (const char *p = strstr(text, a); p; p = strstr(p + 1, a))
    if (tp_line_of(text + line_start(text, p), a, buf, size) && strstr(buf, b))
      return buf;
  return NULL;
}

/* The shape of a line: each number (digits, ',' and '.') made "N", a
 * K/M/G before "/sec" dropped, blanks collapsed to one. */
static void shape(const char *line, char *out, size_t size) {
  size_t o = 0;
  for (const char *p = line; *p && o + 2 < size;) {
    if (isdigit((unsigned char)*p)) {
      while (isdigit((unsigned char)*p) || *p == ',' || *p == '.')
        p++;
      out[o++] = 'N';
    } else if (isspace((unsigned char)*p)) {
      while (isspace((unsigned char)*p))
        p++;
      if (o > 0 && *p)
        out[o++] = ' ';
    } else if (strchr("KMG", *p) && strncmp(p + 1, "/sec", 4) == 0) {
      p++;
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = '\0';
}

/* perf stat's stderr for `perf stat ARGS`, or NULL if perf cannot count
 * here (not installed, or refused). */
static char *perf_stat(const char *args) {
  const char *path = gp_test_path(7, "perf.err");
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "perf stat %s 2>%s >/dev/null", args, path);
  if (system(cmd) != 0)
    return NULL;
  char *t = tp_read_file(path, NULL);
  if (t && !strstr(t, "page-faults")) {
    free(t);
    return NULL;
  }
  return t;
}

/* 1234567 -> "1,234,567", written here without gpuperf's code. */
static void grouped(long long v, char *buf, size_t size) {
  char d[32];
  snprintf(d, sizeof(d), "%lld", v);
  size_t len = strlen(d), o = 0;
  for (size_t i = 0; i < len && o + 2 < size; i++) {
    if (i > 0 && (len - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = d[i];
  }
  buf[o] = '\0';
}

/* The first field of the -x, line holding needle, as a number. */
static double csv_value(const char *text, const char *needle) {
  char line[512];
  if (!tp_line_of(text, needle, line, sizeof(line)))
    return NAN;
  return strtod(line, NULL);
}

/* Field i (from 0) of a -x, line, into buf. */
static const char *csv_field(const char *line, int i, char *buf, size_t size) {
  const char *p = line;
  for (int k = 0; k < i && p; k++)
    p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
  if (!p)
    return NULL;
  snprintf(buf, size, "%.*s", (int)strcspn(p, ","), p);
  return buf;
}

/* Cuts a shape's " ( +- N% )" ending, where it has one. */
static void drop_spread(char *shape) {
  char *p = strstr(shape, " ( +- N% )");
  if (p && !p[strlen(" ( +- N% )")])
    *p = 0;
}

TEST(stat_repeat_keeps_thousands_separators) {
  const char *app = wt_built("tests/stat_app");
  char *out, *err, line[512], num[64];
  /* The simulated GPU's count, printed raw by -x (the same every run). */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "-e", "dram__bytes_read.sum",
                   "--", app, "--launches", "6", NULL),
            0);
  double dram = NAN;
  if (line_ending(err, ",bytes,dram__bytes_read.sum,", "GPU #0,\n", line,
                  sizeof(line)))
    dram = strtod(line, NULL);
  free(out);
  free(err);
  ASSERT(dram > 1e6);
  grouped((long long)dram, num, sizeof(num));
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-r", "3", "-e",
                   "dram__bytes_read.sum,page-faults", "--", app, "--launches",
                   "6", NULL),
            0);
  ASSERT(strstr(err, "(3 runs):") != NULL);
  /* GPU #1 does no work: counted nothing, it has no section. */
  ASSERT(strstr(err, "Sim Compute GPU #1:") == NULL);
  ASSERT_NOT_NULL(tp_line_of(err, "dram__bytes_read.sum", line, sizeof(line)));
  ASSERT(strstr(line, num) != NULL);
  ASSERT(strstr(line, "( +-  0.00% )") != NULL);
  /* A mean of counts that differ run to run: rounded and grouped, as perf
   * prints it ("%'.0f"), not "448.33". */
  if (gp_host_perf_status(NULL, 0) == 0) {
    ASSERT_NOT_NULL(tp_line_of(err, " page-faults ", line, sizeof(line)));
    const char *v = line + strspn(line, " ");
    ASSERT(strcspn(v, " ") == strspn(v, "0123456789,"));
  }
  /* The footer: the mean elapsed time +- its spread, no user and sys. */
  ASSERT_NOT_NULL(tp_line_of(err, "seconds time elapsed", line, sizeof(line)));
  char ours[512], theirs[512];
  shape(line, ours, sizeof(ours));
  ASSERT_STR_EQ(ours, "N +- N seconds time elapsed ( +- N% )");
  ASSERT(strstr(err, "seconds user") == NULL);
  char *perf = perf_stat("-r 3 -e page-faults true");
  if (perf) {
    /* The same shapes as perf's, line for line. */
    ASSERT_NOT_NULL(
        tp_line_of(perf, "seconds time elapsed", line, sizeof(line)));
    shape(line, theirs, sizeof(theirs));
    ASSERT_STR_EQ(ours, theirs);
    ASSERT_NOT_NULL(tp_line_of(perf, " page-faults ", line, sizeof(line)));
    shape(line, theirs, sizeof(theirs));
    if (gp_host_perf_status(NULL, 0) == 0) {
      tp_line_of(err, " page-faults ", line, sizeof(line));
      shape(line, ours, sizeof(ours));
      /* perf prints the spread only where the runs' counts differ, which
       * two different programs need not share: compared without it. */
      drop_spread(ours);
      drop_spread(theirs);
      ASSERT_STR_EQ(ours, theirs);
    }
    free(perf);
  }
  free(out);
  free(err);
  if (!perf)
    SKIP("perf stat cannot count page-faults here: shapes not compared");
}

/* A loop of the shell's that spends CPU time in user mode. */
static char *burn[] = {
    "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done", NULL};

TEST(stat_user_and_sys_are_the_childrens_rusage) {
#if GP_TEST_SANITIZED
  /* sh does not link libgpuperf, and nothing is preloaded there. */
  SKIP("gpuperf stat preloads nothing in a sanitizer build");
#endif
  char *out, *err, line[512];
  struct rusage before, after;
  getrusage(RUSAGE_CHILDREN, &before);
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-e", "task-clock", "--", burn[0],
                   burn[1], burn[2], NULL),
            0);
  getrusage(RUSAGE_CHILDREN, &after);
  double user = NAN, sys = NAN;
  ASSERT_NOT_NULL(tp_line_of(err, " seconds user", line, sizeof(line)));
  user = strtod(line, NULL);
  ASSERT_NOT_NULL(tp_line_of(err, " seconds sys", line, sizeof(line)));
  sys = strtod(line, NULL);
  /* The loop's CPU time is the command's, and is part of what this
   * test's children (gpuperf and the loop) spent, by the kernel's count. */
  double cu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
              (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6;
  double cs = (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) +
              (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;
  ASSERT(user > 0.0);
  ASSERT(user <= cu + 1e-6);
  ASSERT(sys <= cs + 1e-6);
  /* Their order: elapsed, a blank line, user, sys (perf's footer). */
  const char *e = strstr(err, "seconds time elapsed\n\n");
  ASSERT_NOT_NULL(e);
  ASSERT(strstr(e, "seconds user\n") < strstr(e, "seconds sys\n"));
  char ours[512], theirs[512];
  shape(e + strlen("seconds time elapsed\n\n"), ours, sizeof(ours));
  ASSERT_STR_EQ(ours, "N seconds user N seconds sys");
  /* -x: time-user and time-sys values carry them too. */
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "--", "true", NULL), 0);
  ASSERT_NOT_NULL(tp_line_of(err, ",s,time-user,", line, sizeof(line)));
  ASSERT_NOT_NULL(tp_line_of(err, ",s,time-sys,", line, sizeof(line)));
  ASSERT(strstr(err, "seconds user") == NULL);
  free(out);
  free(err);
  char *perf = perf_stat("-e page-faults true");
  if (!perf)
    SKIP("perf stat cannot count page-faults here: footer not compared");
  e = strstr(perf, "seconds time elapsed\n\n");
  ASSERT_NOT_NULL(e);
  shape(e + strlen("seconds time elapsed\n\n"), theirs, sizeof(theirs));
  free(perf);
  ASSERT_STR_EQ(ours, theirs);
}

TEST(stat_rates_per_second) {
  const char *app = wt_built("tests/stat_app");
  char *out, *err, line[512], f[64];
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "-e",
                   "dram__bytes_read.sum,cycle-count,page-faults,task-clock",
                   "--", app, "--launches", "6", NULL),
            0);
  /* A kernel's cycles per second of its GPU time: the V3D's clock, which
   * the device's information gives (500 MHz). */
  gp_sim_config sc;
  ASSERT_EQ(gp_sim_config_from_env(&sc), 0);
  ASSERT_EQ(gp_sim_init(&sc), 0);
  gp_device_info di;
  ASSERT_EQ(gp_device_get_info(2, &di), 0);
  gp_sim_shutdown();
  ASSERT_NOT_NULL(
      line_with(err, ",,cycle-count,", ",csd_blur", line, sizeof(line)));
  ASSERT_STR_EQ(csv_field(line, 6, f, sizeof(f)), "M/sec");
  ASSERT_NEAR(strtod(csv_field(line, 5, f, sizeof(f)), NULL),
              di.core_clock_khz / 1e3, 0.01);
  /* A device's total: per second of the time the device was sampled,
   * its run time (-x's fourth field; within the elapsed time). */
  double elapsed = csv_value(err, ",s,time-elapsed,");
  ASSERT_NOT_NULL(line_ending(err, ",bytes,dram__bytes_read.sum,", "GPU #0,\n",
                              line, sizeof(line)));
  double sampled = strtod(csv_field(line, 3, f, sizeof(f)), NULL) / 1e9;
  ASSERT(sampled > 0 && sampled < elapsed);
  double dram = strtod(line, NULL), rate = dram / sampled;
  const char *unit = rate > 1e9 ? "G/sec" : rate > 1e6 ? "M/sec" : "K/sec";
  double scale = rate > 1e9 ? 1e9 : rate > 1e6 ? 1e6 : 1e3;
  ASSERT_STR_EQ(csv_field(line, 6, f, sizeof(f)), unit);
  ASSERT_NEAR(strtod(csv_field(line, 5, f, sizeof(f)), NULL), rate / scale,
              0.0006);
  /* The host CPU's: per second of task-clock, as perf divides. */
  if (gp_host_perf_status(NULL, 0) == 0) {
    double tc = csv_value(err, ",msec,task-clock,");
    ASSERT_NOT_NULL(tp_line_of(err, ",,page-faults,", line, sizeof(line)));
    double pf = strtod(line, NULL);
    ASSERT_STR_EQ(csv_field(line, 6, f, sizeof(f)), "K/sec");
    ASSERT_NEAR(strtod(csv_field(line, 5, f, sizeof(f)), NULL), pf / tc,
                0.0006);
    char *perf = perf_stat("-x, -e task-clock,page-faults true");
    if (perf) {
      /* perf's fields: value, unit, event, run time, percentage, metric,
       * metric unit; ours the same, then device and kernel. */
      char p[512];
      const char *pl = tp_line_of(perf, ",page-faults,", p, sizeof(p));
      ASSERT_NOT_NULL(pl);
      for (int i = 0; i < 7; i++) {
        char a[64], b[64], sa[64], sb[64];
        ASSERT_NOT_NULL(csv_field(p, i, a, sizeof(a)));
        ASSERT_NOT_NULL(csv_field(line, i, b, sizeof(b)));
        shape(a, sa, sizeof(sa));
        shape(b, sb, sizeof(sb));
        ASSERT_STR_EQ(sb, sa);
      }
      free(perf);
    }
  }
  free(out);
  free(err);
}

/* The -x, line of a counter's total on a device (no kernel) or of a
 * kernel's value, in buf; NULL if none. */
static const char *value_line(const char *text, const char *counter,
                              const char *dev, const char *kernel, char *buf,
                              size_t size) {
  char a[256], end[256];
  snprintf(a, sizeof(a), ",%s,", counter);
  snprintf(end, sizeof(end), ",%s,%s\n", dev, kernel ? kernel : "");
  return line_ending(text, a, end, buf, size);
}

static const char *const dram[] = {
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed"};

/*
 * -e 'dram*' selects 3 counters of a block that counts 2 at once: stat
 * multiplexes them, perf's way. Each counter's share of the time (-x's
 * fifth field) is below 100 % and the shares add up to 2 x 100 %; a
 * kernel's values, scaled by its time over the time counted, equal those
 * counted without multiplexing (stat_app's launches of a kernel are
 * alike).
 */
TEST(stat_multiplexes_beyond_capacity) {
  const char *app = wt_built("tests/stat_app");
  const char *dev = "Sim Compute GPU #0";
  char *out, *err, *plain[2], line[512], f[64];
  /* 10 us periods: 40 us slices, many in the run. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "--period", "10000", "-e",
                   "dram*", "--", app, "--launches", "30", NULL),
            0);
  free(out);
  ASSERT_EQ(tp_cli(&out, &plain[0], "stat", "-x", ",", "-e",
                   "dram__bytes_read.sum,dram__bytes_write.sum", "--", app,
                   "--launches", "30", NULL),
            0);
  free(out);
  ASSERT_EQ(tp_cli(&out, &plain[1], "stat", "-x", ",", "-e", dram[2], "--", app,
                   "--launches", "30", NULL),
            0);
  free(out);
  double shares = 0;
  for (int i = 0; i < 3; i++) {
    ASSERT_NOT_NULL(value_line(err, dram[i], dev, NULL, line, sizeof(line)));
    double pct = strtod(csv_field(line, 4, f, sizeof(f)), NULL);
    ASSERT(pct > 0.0 && pct < 100.0);
    shares += pct;
    /* The kernel saxpy: the same as counted alone. */
    ASSERT_NOT_NULL(value_line(err, dram[i], dev, "saxpy", line, sizeof(line)));
    double mux = strtod(line, NULL);
    pct = strtod(csv_field(line, 4, f, sizeof(f)), NULL);
    ASSERT(pct > 0.0 && pct < 100.0);
    ASSERT_NOT_NULL(
        value_line(plain[i / 2], dram[i], dev, "saxpy", line, sizeof(line)));
    ASSERT_STR_EQ(csv_field(line, 4, f, sizeof(f)), "100.00");
    double alone = strtod(line, NULL);
    ASSERT(alone > 0);
    ASSERT_NEAR(mux / alone, 1.0, 1e-4);
  }
  ASSERT_NEAR(shares, 200.0, 0.05);
  free(err);
  free(plain[0]);
  free(plain[1]);
  /* The text form: the share after the value, as perf prints it. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "--period", "10000", "-e", "dram*", "--",
                   app, "--launches", "30", NULL),
            0);
  ASSERT_NOT_NULL(
      tp_line_of(err, " dram__bytes_write.sum ", line, sizeof(line)));
  size_t len = strlen(line);
  ASSERT(len > 9 && line[len - 1] == ')' && line[len - 8] == '(');
  ASSERT(line[len - 2] == '%');
  free(out);
  free(err);
}

/* With the default period (4 ms slices) a run of 1 ms of GPU time never
 * reaches the second slice: the counter left out is "<not counted>", as
 * perf says of an event that never ran. */
TEST(stat_multiplexed_not_counted) {
  const char *app = wt_built("tests/stat_app");
  char *out, *err, line[512];
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "-e", "dram*", "--", app,
                   "--launches", "2", NULL),
            0);
  ASSERT_NOT_NULL(tp_line_of(err, "<not counted>,,", line, sizeof(line)));
  ASSERT(strstr(line, ",dram__throughput.avg.pct_of_peak_sustained_elapsed,"
                      "0,0.00,") != NULL);
  free(out);
  free(err);
}

/* The V3D counts 32 of its 87 counters at once: 64 (the most one
 * sampling takes) are multiplexed, each counting half the time in all;
 * 68 are refused before the program runs. */
TEST(stat_multiplexes_the_v3d) {
  const char *app = wt_built("tests/stat_app");
  const char *touched = gp_test_path(2, "touched");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "--period", "10000", "-e",
                   "QPU*,TMU*,L2T*,TLB*,FEP*,PTB*,cycle-count", "--", app,
                   "--launches", "30", NULL),
            0);
  int n = 0;
  double shares = 0;
  for (const char *p = strstr(err, ",Sim V3D 4.2 #2,\n"); p;
       p = strstr(p + 1, ",Sim V3D 4.2 #2,\n")) {
    char line[512], f[64];
    tp_line_of(err + line_start(err, p), ",", line, sizeof(line));
    shares += strtod(csv_field(line, 4, f, sizeof(f)), NULL);
    n++;
  }
  ASSERT_EQ(n, 64);
  ASSERT_NEAR(shares, 32 * 100.0, 0.5);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-e",
                   "QPU*,TMU*,L2T*,TLB*,FEP*,PTB*,cycle-count,AXI-writes*",
                   "--", app, "--touch", touched, NULL),
            2);
  ASSERT(strstr(err, "68 counters selected on device 2") != NULL);
  ASSERT(access(touched, F_OK) != 0);
  free(out);
  free(err);
}
