/*
 * bench/gl.c - what libgpuperf-gl.so costs a GL program: its frame rate
 * unrecorded, recorded by `gpuperf record`, and recorded with the HUD
 * drawing in its window (GPUPERF_HUD).
 *
 *   gl [--runs R] [--frames F] [--program PATH] [--glxgears SECONDS]
 *      [--hud SPEC] [--egl]
 *
 * --egl runs gl-sample --egl (an EGL pbuffer, no X server) and starts no
 * Xvfb: for a GPU machine without a display.
 *
 * Starts an Xvfb server of its own (stopped by its PID at the end) and
 * runs tests/gl-sample (beside this program's build: ../tests/gl-sample)
 * --frames F (default 3000) --fps R times (default 5) each way,
 * interleaved (plain, recorded, HUD, GALLIUM_HUD, plain, ...): the last
 * is the program unrecorded with Mesa's own HUD showing the same names,
 * the cost of the HUD that ours imitates, measured by nobody's code but
 * Mesa's (Gallium drivers such as llvmpipe; others ignore the variable). The
 * frame rate is the program's own figure (it times its frames after the first
 * tenth). Prints each way's median [min..max] and the ratio of the medians to
 * plain (targets: >= 0.97 recorded, >= 0.9 with the HUD).
 *
 * --glxgears S runs glxgears for S seconds (default off) instead, and reads
 * its own "N frames in 5.0 seconds" line.
 *
 * The CLI is GPUPERF_CLI, or ../gpuperf beside this program.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define MAXRUNS 64

static char self_dir[4096];

/* Stops our Xvfb, if we started one. */
static void stop_x(pid_t xvfb) {
  if (xvfb > 0) {
    kill(xvfb, SIGTERM);
    waitpid(xvfb, NULL, 0);
  }
}

static void dir_of_self(void) {
  ssize_t n = readlink("/proc/self/exe", self_dir, sizeof(self_dir) - 1);
  if (n <= 0) {
    strcpy(self_dir, ".");
    return;
  }
  self_dir[n] = '\0';
  char *slash = strrchr(self_dir, '/');
  if (slash)
    *slash = '\0';
}

/* Runs argv with env entries added, its stdout into buf; exit status. */
static int run(char *const argv[], char *const env[], char *buf, size_t size) {
  int p[2];
  if (pipe(p) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; env && env[i]; i++)
      putenv(env[i]);
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  size_t len = 0;
  ssize_t r;
  while ((r = read(p[0], buf + len, size - 1 - len)) > 0)
    len += (size_t)r;
  buf[len] = '\0';
  close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The frame rate a run printed, or -1. */
static double fps_of(const char *out, bool gears) {
  const char *p = gears ? strstr(out, " frames in ") : strstr(out, "fps ");
  if (!p)
    return -1;
  if (gears) {
    const char *f = strstr(p, "= ");
    return f ? atof(f + 2) : -1;
  }
  return atof(p + 4);
}

int main(int argc, char **argv) {
  int runs = 5, frames = 3000, gears = 0, egl = 0;
  const char *program = NULL, *hud = "fps,frametime";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else if (strcmp(argv[i], "--program") == 0 && i + 1 < argc)
      program = argv[++i];
    else if (strcmp(argv[i], "--glxgears") == 0 && i + 1 < argc)
      gears = atoi(argv[++i]);
    else if (strcmp(argv[i], "--hud") == 0 && i + 1 < argc)
      hud = argv[++i];
    else if (strcmp(argv[i], "--egl") == 0)
      egl = 1;
    else {
      fprintf(stderr, "usage: gl [--runs R] [--frames F] [--program PATH] "
                      "[--glxgears SECONDS] [--hud SPEC] [--egl]\n");
      return 2;
    }
  }
  if (runs < 1 || runs > MAXRUNS)
    runs = 5;
  dir_of_self();
  char cli[4200], sample[4200], trace[256];
  const char *env_cli = getenv("GPUPERF_CLI");
  snprintf(cli, sizeof(cli), "%s", env_cli ? env_cli : "");
  if (!env_cli)
    snprintf(cli, sizeof(cli), "%s/../gpuperf", self_dir);
  snprintf(sample, sizeof(sample), "%s", program ? program : "");
  if (!program)
    snprintf(sample, sizeof(sample), "%s/../tests/gl-sample", self_dir);
  if (access(cli, X_OK) != 0 || (!gears && access(sample, X_OK) != 0)) {
    fprintf(stderr, "gl: %s or %s not built (make all tests)\n", cli, sample);
    return 2;
  }
  snprintf(trace, sizeof(trace), "/tmp/gpuperf-bench-gl-%d.pftrace",
           (int)getpid());
  /* An X server of our own, on a display it picks itself (-displayfd):
   * a socket left in /tmp/.X11-unix by a server that was killed is no
   * sign of a live one. */
  char dpy[32];
  int dfd[2];
  pid_t xvfb = -1;
  if (egl)
    goto started;
  if (pipe(dfd) != 0)
    return 2;
  xvfb = fork();
  if (xvfb == 0) {
    int nul = open("/dev/null", 1);
    dup2(nul, 2);
    close(dfd[0]);
    char fd[16];
    snprintf(fd, sizeof(fd), "%d", dfd[1]);
    execlp("Xvfb", "Xvfb", "-displayfd", fd, "-ac", "-screen", "0",
           "640x480x24", "-nolisten", "tcp", (char *)NULL);
    _exit(127);
  }
  close(dfd[1]);
  /* It writes "N\n" when ready; read the whole line (closing the pipe
   * before the newline would kill it with SIGPIPE). */
  char num[16] = "";
  size_t got = 0;
  while (got < sizeof(num) - 1 && !strchr(num, '\n')) {
    ssize_t r = read(dfd[0], num + got, sizeof(num) - 1 - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(dfd[0]);
  if (!strchr(num, '\n')) {
    fprintf(stderr, "gl: Xvfb did not start (Debian xvfb)\n");
    kill(xvfb, SIGTERM);
    waitpid(xvfb, NULL, 0);
    return 2;
  }
  snprintf(dpy, sizeof(dpy), ":%d", atoi(num));
  setenv("DISPLAY", dpy, 1);
started:;
  char nframes[32], secs[32];
  snprintf(nframes, sizeof(nframes), "%d", frames);
  snprintf(secs, sizeof(secs), "%d", gears > 0 ? gears : 6);
  char *prog_argv[8];
  if (gears) {
    char *g[] = {"timeout", "-s", "INT", secs, "glxgears", NULL};
    memcpy(prog_argv, g, sizeof(g));
  } else {
    char *g[] = {sample,  "--frames",           nframes, "--quiet",
                 "--fps", egl ? "--egl" : NULL, NULL};
    memcpy(prog_argv, g, sizeof(g));
  }
  /* The fourth way is the yardstick from outside our code: the program
   * unrecorded with Mesa's own HUD (GALLIUM_HUD, the same names), on a
   * Gallium driver such as llvmpipe (others ignore it). */
  enum { WAYS = 4 };
  double v[WAYS][MAXRUNS];
  static const char *const ways[WAYS] = {"plain", "recorded", "recorded+HUD",
                                         "GALLIUM_HUD"};
  char hud_env[256], gallium_env[256];
  snprintf(hud_env, sizeof(hud_env), "GPUPERF_HUD=%s", hud);
  snprintf(gallium_env, sizeof(gallium_env), "GALLIUM_HUD=%s", hud);
  static char out[1 << 20];
  printf("gl: %s, %d runs each way, interleaved\n",
         gears ? "glxgears" : "gl-sample", runs);
  for (int r = 0; r < runs; r++) {
    for (int w = 0; w < WAYS; w++) {
      char *argv2[16];
      int n = 0;
      if (w == 1 || w == 2) {
        argv2[n++] = cli;
        argv2[n++] = "record";
        argv2[n++] = "-q";
        argv2[n++] = "-o";
        argv2[n++] = trace;
        argv2[n++] = "--";
      }
      for (int k = 0; prog_argv[k]; k++)
        argv2[n++] = prog_argv[k];
      argv2[n] = NULL;
      char *env[] = {w == 2 ? hud_env : gallium_env, NULL};
      run(argv2, w >= 2 ? env : NULL, out, sizeof(out));
      v[w][r] = fps_of(out, gears);
      if (v[w][r] < 0) {
        fprintf(stderr, "gl: the %s run printed no frame rate:\n%s\n", ways[w],
                out);
        stop_x(xvfb);
        return 1;
      }
      printf("  run %d %-13s %9.1f fps\n", r + 1, ways[w], v[w][r]);
      fflush(stdout);
    }
  }
  /* Each way's spread, and the ratio of each recorded run to the plain
   * run of its own round (interleaved: the same machine state). */
  double med0 = bench_spread_of(v[0], runs).med;
  for (int w = 0; w < WAYS; w++) {
    printf("%-13s %s fps", ways[w], BENCH_FMT(v[w], runs, 1));
    if (w) {
      double ratio[MAXRUNS];
      for (int r = 0; r < runs; r++)
        ratio[r] = v[0][r] > 0 ? v[w][r] / v[0][r] : 0;
      printf("  %.3fx plain's median; per round %sx",
             med0 > 0 ? bench_spread_of(v[w], runs).med / med0 : 0,
             BENCH_FMT(ratio, runs, 3));
    }
    printf("\n");
  }
  printf("targets: recorded >= 0.97x plain, with the HUD >= 0.9x "
         "(GALLIUM_HUD: Mesa's own HUD, unrecorded, for scale)\n");
  unlink(trace);
  stop_x(xvfb);
  return 0;
}
