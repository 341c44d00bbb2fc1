/*
 * test_top.c - `gpuperf top`: one plain view of the V3D fixture tree
 * (card, frequency, a process's engines from fdinfo); bad options; and,
 * under tmux (send-keys, capture-pane), the live screen showing the
 * kernels of an OpenCL program being recorded by `gpuperf record`, read
 * from the file the recording process publishes.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"

static const char *cli(void) {
  const char *g = getenv("GPUPERF_CLI");
  if (!g || !*g)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return g;
}

TEST(top_once_plain_view) {
  const char *g = cli();
  char *root = realpath("tests/data/linux/v3d", NULL);
  if (!root)
    SKIP("tests/data/linux/v3d not found (run from the source tree)");
  char env1[600];
  snprintf(env1, sizeof(env1), "GPUPERF_SYSROOT=%s", root);
  free(root);
  char live[600];
  snprintf(live, sizeof(live), "GPUPERF_LIVE_DIR=%s", gp_test_path(0, "live"));
  char *env[] = {env1, live, "COLUMNS=", NULL};
  char *argv[] = {(char *)g, "top", "--once", "-d", "0.2", NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 30, &out, &err), 0);
  ASSERT(strstr(out, "card1"));
  ASSERT(strstr(out, "fec00000.v3d")); /* the platform device's name */
  ASSERT(strstr(out, "500 MHz"));      /* devfreq cur_freq */
  ASSERT(strstr(out, "4242 glmark2"));
  ASSERT(strstr(out, "bin 0.0%"));
  ASSERT(strstr(out, "cache_clean 0.0%"));
  ASSERT(strstr(out, "Processes recorded by gpuperf"));
  ASSERT(!strchr(out, '\033')); /* plain: not a terminal */
  /* 80 columns when not a terminal: the five engines wrap. */
  for (const char *l = out; *l;) {
    size_t n = strcspn(l, "\n");
    if (n > 80)
      gp_test_fail(__FILE__, __LINE__, "a line over 80 columns:\n%s", out);
    l += n + (l[n] == '\n');
  }
  free(out);
  free(err);
  char *bad[] = {(char *)g, "top", "-d", "0", NULL};
  ASSERT_EQ(ocl_run(bad, env, 30, &out, &err), 1);
  ASSERT(strstr(err, "-d: '0' is not a period"));
  free(out);
  free(err);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

TEST(top_tmux_shows_recorded_kernels) {
  const char *g = cli();
  if (access("/usr/bin/tmux", X_OK) != 0)
    SKIP("tmux is not installed (Debian package tmux)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  ocl_env();
  static char sample[512];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  const char *live = gp_test_path(0, "live");
  setenv("GPUPERF_LIVE_DIR", live, 1);
  /* A long recording in the background. */
  pid_t rec = fork();
  if (rec == 0) {
    setpgid(0, 0); /* its own group: the test ends the recording whole */
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      _exit(126);
    execl(g, g, "record", "-q", "-o", gp_test_path(1, "rec.pftrace"), "--",
          sample, "-n", "6000", "--size", "65536", (char *)NULL);
    _exit(127);
  }
  ASSERT_GT(rec, 0);
  setpgid(rec, rec); /* as the child does: whichever runs first */
  char sock[64], cmd[1200];
  snprintf(sock, sizeof(sock), "gpuperf-test-%d", (int)getpid());
  snprintf(cmd, sizeof(cmd),
           "tmux -L %s new-session -d -x 160 -y 60 -s top "
           "'GPUPERF_LIVE_DIR=%s %s top -d 0.3'",
           sock, live, g);
  int rc = system(cmd);
  if (rc != 0) {
    kill(-rec, SIGKILL);
    waitpid(rec, NULL, 0);
    SKIP("tmux cannot start a session here (exit %d)", rc);
  }
  char *argv[] = {"/usr/bin/tmux", "-L", sock, "capture-pane", "-p", "-t",
                  "top",           NULL};
  char *screen = NULL;
  bool seen = false;
  double t0 = now_s();
  while (!seen && now_s() - t0 < 40) {
    usleep(300000);
    free(screen);
    screen = NULL;
    char *err = NULL;
    ocl_run(argv, NULL, 10, &screen, &err);
    free(err);
    seen = screen && strstr(screen, "opencl-sample") &&
           strstr(screen, "KERNEL") &&
           (strstr(screen, "reduce") || strstr(screen, "blur2d"));
  }
  /* Ctrl-C through the terminal ends it like a person would. */
  snprintf(cmd, sizeof(cmd), "tmux -L %s send-keys -t top C-c", sock);
  ASSERT_EQ(system(cmd), 0);
  usleep(200000);
  snprintf(cmd, sizeof(cmd), "tmux -L %s kill-server 2>/dev/null", sock);
  if (system(cmd) != 0)
    printf("  (tmux kill-server failed)\n");
  kill(-rec, SIGKILL);
  waitpid(rec, NULL, 0);
  if (!seen)
    gp_test_fail(__FILE__, __LINE__, "after %.1f s the screen shows:\n%s",
                 now_s() - t0, screen ? screen : "(nothing)");
  const char *k = strstr(screen, "Processes recorded by gpuperf");
  ASSERT_NOT_NULL(k);
  printf("  after %.1f s:\n%.600s\n", now_s() - t0, k);
  free(screen);
}
