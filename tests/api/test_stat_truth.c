/*
 * test_stat_truth.c - `gpuperf stat` and `gpuperf top` checked against an
 * independent truth on real programs (issue 26):
 *
 *   - the simulated GPUs (stat_app): a Utilization line for each device it
 *     used, the V3D's (whose catalog has none) computed by stat, each the
 *     share of its kernels' time (run one after the other) in the
 *     sampled time;
 *   - PoCL (clpeak --kernel-latency): a Utilization line, whose value is
 *     the busy share recomputed from the same run's kernel records (their
 *     GPU time over the sampled time: clpeak's queue is in order, so its
 *     kernels never overlap and their union is their sum);
 *   - Vulkan (vkcube --c 100 under Xvfb): a GPU section whose render
 *     passes are vkcube's 100 frames, one submit per command buffer, and
 *     a Utilization that is the command buffers' share;
 *   - -r N of a program that crashes in one run: the crash is reported,
 *     left out of the means (which are then stat_app.h's exact launch
 *     counts) and gives the exit status, whether the run left counts
 *     (SIGSEGV, through the death handler) or none (SIGKILL);
 *   - top under tmux at 80x24 while clpeak --compute-sp runs kernels of
 *     a second or more: no line wider than 80 columns, every share within
 *     [0, 100], the device seen busy, and `q` ends it with status 0.
 *
 * No assertion is on timing: each figure is compared with another of the
 * same run, or counted.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "unit/writer_util.h"
#include "opencl/oclutil.h"
#include "programs/stat_app.h"
#include "tp/tputil.h"

/* The full path of prog on PATH, or NULL. */
static const char *on_path(const char *prog, char *buf, size_t size) {
  const char *path = getenv("PATH");
  for (const char *p = path; p && *p;) {
    const char *c = strchr(p, ':');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    snprintf(buf, size, "%.*s/%s", (int)n, p, prog);
    if (access(buf, X_OK) == 0)
      return buf;
    p = c ? c + 1 : NULL;
  }
  return NULL;
}

static void not_sanitized(void) {
#if GP_TEST_SANITIZED
  SKIP("gpuperf stat and record preload nothing in a sanitizer build");
#endif
}

/* The first --json line of event at or after from (NULL: text), or NULL. */
static const char *json_line(const char *text, const char *event,
                             const char *from) {
  char key[128];
  snprintf(key, sizeof(key), "\"event\": \"%s\"", event);
  const char *p = strstr(from ? from : text, key);
  if (!p)
    return NULL;
  while (p > text && p[-1] != '\n')
    p--;
  return p;
}

/* The --json line of event on device dev, or NULL. */
static const char *json_line_on(const char *text, const char *event,
                                const char *dev) {
  char key[256];
  snprintf(key, sizeof(key), "\"device\": \"%s\"", dev);
  for (const char *l = json_line(text, event, NULL); l;
       l = json_line(text, event, strchr(l, '\n'))) {
    const char *k = strstr(l, key), *end = strchr(l, '\n');
    if (k && (!end || k < end))
      return l;
  }
  return NULL;
}

/* A number field of a --json line ("counter-value", "event-runtime"). */
static double json_num(const char *line, const char *field) {
  char key[64];
  snprintf(key, sizeof(key), "\"%s\": ", field);
  const char *p = strstr(line, key);
  const char *end = strchr(line, '\n');
  if (!p || (end && p > end))
    gp_test_fail(__FILE__, __LINE__, "no %s in: %.300s", field, line);
  return strtod(p + strlen(key), NULL);
}

/* The sum of the values of event over every --json line that has it. */
static double json_sum(const char *text, const char *event) {
  double sum = 0;
  for (const char *l = json_line(text, event, NULL); l;
       l = json_line(text, event, strchr(l, '\n')))
    sum += json_num(l, "counter-value");
  return sum;
}

/* The sum of event's values on device dev. */
static double json_sum_on(const char *text, const char *event,
                          const char *dev) {
  char key[256];
  snprintf(key, sizeof(key), "\"device\": \"%s\"", dev);
  double sum = 0;
  for (const char *l = json_line(text, event, NULL); l;
       l = json_line(text, event, strchr(l, '\n'))) {
    const char *k = strstr(l, key), *end = strchr(l, '\n');
    if (k && (!end || k < end))
      sum += json_num(l, "counter-value");
  }
  return sum;
}

TEST(stat_utilization_on_every_simulated_device) {
  const char *app = wt_built("tests/stat_app");
  char *out, *err;
  ASSERT_EQ(
      tp_cli(&out, &err, "stat", "--json", "--", app, "--launches", "6", NULL),
      0);
  static const char *const devs[] = {"Sim Compute GPU #0", "Sim V3D 4.2 #2"};
  for (size_t i = 0; i < 2; i++) {
    const char *l = json_line_on(err, "Utilization", devs[i]);
    if (!l)
      gp_test_fail(__FILE__, __LINE__, "no Utilization on %s:\n%s", devs[i],
                   err);
    double util = json_num(l, "counter-value");
    double sampled_ns = json_num(l, "event-runtime");
    double kernel_ms = json_sum_on(err, "kernel-time", devs[i]);
    printf("  %s: Utilization %.4f %%; kernels %.6f ms of %.6f ms: %.4f %%\n",
           devs[i], util, kernel_ms, sampled_ns / 1e6,
           100.0 * kernel_ms * 1e6 / sampled_ns);
    ASSERT(kernel_ms > 0);
    ASSERT_NEAR(util, 100.0 * kernel_ms * 1e6 / sampled_ns, 0.01);
  }
  free(out);
  free(err);
}

TEST(stat_utilization_is_the_kernels_share_clpeak) {
  not_sanitized();
  char clpeak[1024];
  if (!on_path("clpeak", clpeak, sizeof(clpeak)))
    SKIP("clpeak is not installed (Debian package clpeak)");
  ocl_env();
  char *out, *err;
  /* The text form: a Utilization line under the PoCL device. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-e", "Utilization", "--", clpeak,
                   "--kernel-latency", NULL),
            0);
  const char *dev = strstr(err, "\n pthread-");
  if (!dev)
    gp_test_fail(__FILE__, __LINE__, "no PoCL device section:\n%s", err);
  const char *u = strstr(dev, "%  Utilization");
  if (!u || strstr(dev, "\n\n") < u)
    gp_test_fail(__FILE__, __LINE__, "no Utilization line:\n%s", err);
  free(out);
  free(err);
  /* The value against the same run's kernels. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "--json", "-e", "Utilization", "--",
                   clpeak, "--kernel-latency", NULL),
            0);
  const char *l = json_line(err, "Utilization", NULL);
  if (!l)
    gp_test_fail(__FILE__, __LINE__, "no Utilization:\n%s", err);
  double util = json_num(l, "counter-value");
  double sampled_ns = json_num(l, "event-runtime");
  double kernel_ms = json_sum(err, "kernel-time");
  double launches = json_sum(err, "launches");
  printf("  Utilization %.3f %%; kernels %.0f launches, %.3f ms of %.3f ms "
         "sampled: %.3f %%\n",
         util, launches, kernel_ms, sampled_ns / 1e6,
         100.0 * kernel_ms * 1e6 / sampled_ns);
  ASSERT_GT(launches, 1000); /* clpeak launches thousands */
  ASSERT_GT(sampled_ns, 0);
  ASSERT_NEAR(util, 100.0 * kernel_ms * 1e6 / sampled_ns, 1.0);
  free(out);
  free(err);
}

TEST(stat_vulkan_gpu_section_vkcube) {
  not_sanitized();
  char buf[1024], xvfb[1024];
  if (!on_path("xvfb-run", xvfb, sizeof(xvfb)) ||
      !on_path("Xvfb", buf, sizeof(buf)))
    SKIP("xvfb-run is not installed (Debian xvfb)");
  if (!on_path("vkcube", buf, sizeof(buf)))
    SKIP("vkcube is not installed (Debian vulkan-tools)");
  const char *icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
  if (access(icd, R_OK) != 0)
    SKIP("lavapipe is not installed (Debian mesa-vulkan-drivers)");
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  /* Lavapipe only, quietly. */
  setenv("VK_ICD_FILENAMES", icd, 1);
  setenv("VK_DRIVER_FILES", icd, 1);
  unsetenv("VK_INSTANCE_LAYERS");
  unsetenv("VK_ADD_LAYER_PATH");
  const char *xdg = gp_test_path(2, "xdg");
  mkdir(xdg, 0700);
  setenv("XDG_RUNTIME_DIR", xdg, 1);
  char *argv[] = {xvfb, "-a",     (char *)cli, "stat", "--json",
                  "--", "vkcube", "--c",       "100",  NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, NULL, 240, &out, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "xvfb-run gpuperf stat vkcube: %d\n%s", rc,
                 err ? err : "");
  double passes = json_sum(err, "render-passes");
  double buffers = json_sum(err, "command-buffers");
  double submits = json_sum(err, "submits");
  printf("  %.0f render passes, %.0f command buffers, %.0f submits\n", passes,
         buffers, submits);
  ASSERT_EQ(passes, 100); /* vkcube's frames: one render pass each */
  ASSERT_GE(buffers, 100);
  ASSERT_EQ(submits, buffers); /* vkcube submits one buffer at a time */
  const char *l = json_line(err, "Utilization", NULL);
  if (!l)
    gp_test_fail(__FILE__, __LINE__, "no Utilization:\n%s", err);
  double util = json_num(l, "counter-value");
  double sampled_ns = json_num(l, "event-runtime");
  double busy_ms = json_sum(err, "command-buffer-time");
  printf("  Utilization %.3f %%; command buffers %.3f ms of %.3f ms: %.3f %%\n",
         util, busy_ms, sampled_ns / 1e6, 100.0 * busy_ms * 1e6 / sampled_ns);
  ASSERT_GT(sampled_ns, 0);
  ASSERT_NEAR(util, 100.0 * busy_ms * 1e6 / sampled_ns, 1.0);
  free(out);
  free(err);
  /* The text form names the section's figures. */
  char *targv[] = {xvfb,     "-a",  (char *)cli, "stat", "--",
                   "vkcube", "--c", "10",        NULL};
  ASSERT_EQ(ocl_run(targv, NULL, 240, &out, &err), 0);
  ASSERT(strstr(err, "render-passes") && strstr(err, "submits") &&
         strstr(err, "%  Utilization"));
  free(out);
  free(err);
}

/* The value of the -x, line of EVENT on DEVICE for KERNEL: perf stat's
 * fields (value, unit, event, ...), gpuperf's device and kernel last. */
static double csv_value(const char *text, const char *event, const char *dev,
                        const char *kernel) {
  for (const char *line = text; *line;) {
    size_t n = strcspn(line, "\n");
    char buf[1024], *f[32];
    int nf = 0;
    snprintf(buf, sizeof(buf), "%.*s", (int)n, line);
    for (char *p = buf, *c; nf < 32; p = c + 1) {
      f[nf++] = p;
      if (!(c = strchr(p, ',')))
        break;
      *c = '\0';
    }
    if (nf >= 5 && strcmp(f[2], event) == 0 && strcmp(f[nf - 2], dev) == 0 &&
        strcmp(f[nf - 1], kernel) == 0)
      return strtod(f[0], NULL);
    line += n + (line[n] == '\n');
  }
  gp_test_fail(__FILE__, __LINE__, "no %s of %s on %s in:\n%s", event, kernel,
               dev, text);
  return 0;
}

TEST(stat_repeat_leaves_a_crashed_run_out) {
  const char *app = wt_built("tests/stat_app");
  char die[600];
  char *out, *err;
  /* Run 1 of 3 dies of SIGSEGV half-way, after its saxpy launches: its
   * file holds partial counts, which must not reach the means. (SIGTERM
   * in a sanitizer build, whose runtime takes SIGSEGV for its own.) */
  int sig = GP_TEST_SANITIZED ? SIGTERM : SIGSEGV;
  char signame[16], killed[64];
  snprintf(signame, sizeof(signame), "%d", sig);
  snprintf(killed, sizeof(killed), "killed by signal %d", sig);
  snprintf(die, sizeof(die), "%s", gp_test_path(0, "die-segv"));
  int rc = tp_cli(&out, &err, "stat", "-r", "3", "-x", ",", "--", app,
                  "--launches", "6", "--die-once", die, signame, NULL);
  if (rc != 128 + sig || !strstr(err, "run 1 of 3: ") || !strstr(err, killed) ||
      !strstr(err, "left out"))
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, err);
  ASSERT_EQ(csv_value(err, "launches", "Sim Compute GPU #0", "saxpy"),
            stat_app_launches(0, 6));
  ASSERT_EQ(csv_value(err, "launches", "Sim Compute GPU #0", "reduce"),
            stat_app_launches(1, 6));
  ASSERT_EQ(csv_value(err, "launches", "Sim V3D 4.2 #2", "csd_blur"),
            stat_app_launches(2, 6));
  free(out);
  free(err);
  /* SIGKILL: the run leaves no counts at all. */
  snprintf(die, sizeof(die), "%s", gp_test_path(0, "die-kill"));
  rc = tp_cli(&out, &err, "stat", "-r", "2", "--", app, "--launches", "6",
              "--die-once", die, "9", NULL);
  if (rc != 128 + SIGKILL || !strstr(err, "run 1 of 2: ") ||
      !strstr(err, "(1 run, crashed runs left out)") ||
      !strstr(err, "kernel reduce: 4 launches"))
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, err);
  free(out);
  free(err);
  /* One run alone: what it counted, headed as partial. */
  snprintf(die, sizeof(die), "%s", gp_test_path(0, "die-abort"));
  rc = tp_cli(&out, &err, "stat", "--", app, "--launches", "6", "--die-once",
              die, "6", NULL);
  if (rc != 128 + SIGABRT || !strstr(err, "(partial: killed by signal 6") ||
      !strstr(err, "kernel saxpy: 6 launches") || strstr(err, "kernel reduce"))
    gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, err);
  free(out);
  free(err);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Checks one capture of top's screen: no line over 80 columns (the
 * capture joins wrapped lines), every share in [0, 100]. Returns the
 * first device's BUSY, or -1 if there is none. */
static double check_screen(const char *screen) {
  double busy = -1;
  bool device_next = false;
  for (const char *l = screen; *l;) {
    size_t n = strcspn(l, "\n");
    if (n > 80)
      gp_test_fail(__FILE__, __LINE__, "a line of %zu columns:\n%s", n, screen);
    for (const char *p = l; p < l + n; p++) {
      if (*p != '%' || p == l || !(p[-1] >= '0' && p[-1] <= '9'))
        continue;
      const char *s = p;
      while (s > l && ((s[-1] >= '0' && s[-1] <= '9') || s[-1] == '.'))
        s--;
      double v = strtod(s, NULL);
      if (v < 0 || v > 100)
        gp_test_fail(__FILE__, __LINE__, "a share of %g %%:\n%s", v, screen);
      if (device_next && busy < 0)
        busy = v;
    }
    device_next = n > 10 && !strncmp(l, "    DEVICE ", 11);
    l += n + (l[n] == '\n');
  }
  return busy;
}

TEST(top_tmux_80x24_busy_in_range_and_q_quits) {
  const char *g = getenv("GPUPERF_CLI");
  if (!g || !*g)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  not_sanitized();
  char clpeak[1024], tmux[1024];
  if (!on_path("tmux", tmux, sizeof(tmux)))
    SKIP("tmux is not installed (Debian package tmux)");
  if (!on_path("clpeak", clpeak, sizeof(clpeak)))
    SKIP("clpeak is not installed (Debian package clpeak)");
  ocl_env();
  const char *live = gp_test_path(0, "live");
  setenv("GPUPERF_LIVE_DIR", live, 1);
  char trace[600];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(1, "sp.pftrace"));
  /* clpeak --compute-sp: kernels of a second or more, whose records PoCL
   * gives only when clpeak waits for the queue. */
  pid_t rec = fork();
  if (rec == 0) {
    setpgid(0, 0); /* its own group: the test ends the recording whole */
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      _exit(126);
    execl(g, g, "record", "-q", "-o", trace, "--", clpeak, "--compute-sp",
          (char *)NULL);
    _exit(127);
  }
  ASSERT_GT(rec, 0);
  setpgid(rec, rec);
  char sock[64], cmd[2048];
  snprintf(sock, sizeof(sock), "gpuperf-top80-%d", (int)getpid());
  snprintf(cmd, sizeof(cmd),
           "%s -L %s new-session -d -x 80 -y 24 -s top "
           "'GPUPERF_LIVE_DIR=%s %s top -d 0.5; echo TOP-EXIT=$?; sleep 60'",
           tmux, sock, live, g);
  if (system(cmd) != 0) {
    kill(-rec, SIGKILL);
    waitpid(rec, NULL, 0);
    SKIP("tmux cannot start a session here");
  }
  char *cap[] = {tmux, "-L",  sock, "capture-pane", "-p", "-J",
                 "-t", "top", NULL};
  char *screen = NULL, *err = NULL;
  double t0 = now_s(), best = -1;
  int screens = 0;
  /* Until the device has been seen busy (its first kernels run within
   * seconds) and a few refreshes more, every screen checked. */
  while ((best < 90 || screens < 8) && now_s() - t0 < 120) {
    usleep(500000);
    free(screen);
    free(err);
    screen = err = NULL;
    ocl_run(cap, NULL, 20, &screen, &err);
    if (!screen || !strstr(screen, "clpeak"))
      continue;
    double busy = check_screen(screen);
    screens++;
    if (busy > best)
      best = busy;
  }
  char *last = screen ? strdup(screen) : NULL;
  /* q, as a person would press it. */
  snprintf(cmd, sizeof(cmd), "%s -L %s send-keys -t top q", tmux, sock);
  int sent = system(cmd);
  bool quit = false;
  for (double t1 = now_s(); sent == 0 && !quit && now_s() - t1 < 30;) {
    usleep(200000);
    free(screen);
    free(err);
    screen = err = NULL;
    ocl_run(cap, NULL, 20, &screen, &err);
    quit = screen && strstr(screen, "TOP-EXIT=0");
  }
  snprintf(cmd, sizeof(cmd), "%s -L %s kill-server 2>/dev/null", tmux, sock);
  if (system(cmd) != 0)
    printf("  (tmux kill-server failed)\n");
  kill(-rec, SIGKILL);
  waitpid(rec, NULL, 0);
  printf("  %d screens of clpeak, best BUSY %.1f %%; last:\n%s\n", screens,
         best, last ? last : "(none)");
  if (best < 90)
    gp_test_fail(__FILE__, __LINE__, "the device was never seen busy");
  if (!quit)
    gp_test_fail(__FILE__, __LINE__, "q did not end top:\n%s",
                 screen ? screen : "(nothing)");
  free(last);
  free(screen);
  free(err);
}
