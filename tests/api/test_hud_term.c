/*
 * test_hud_term.c - the HUD on a real terminal never changes what the
 * program prints. Programs run in a tmux pane of 80x24 on a private
 * server; the test compares the pane's text (history included) once the
 * program ended with the program's own output (a run without the HUD, or
 * the same run's stdout through tee), line for line, and reads the bytes
 * the terminal received (tmux pipe-pane) for the HUD's frames: on the
 * bottom line, under a scroll region over the lines above, given back at
 * exit, and set anew when the terminal is resized. Nothing is timed: the
 * test waits for what the pane shows (with generous limits), and the
 * program that must still run while the terminal is resized waits for a
 * file the test creates. The tmux server is stopped by its pid, or by a
 * watchdog in the pane once the test process is gone.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "unit/writer_util.h"
#include "opencl/oclutil.h"

#define TMUX "/usr/bin/tmux"

typedef struct term {
  char sock[600], raw[600], script[600];
  long server;
} term;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  ASSERT_NOT_NULL(b);
  size_t got = fread(b, 1, (size_t)n, f);
  b[got] = '\0';
  fclose(f);
  return b;
}

/* Runs tmux with the arguments after "-S sock -f /dev/null"; returns its
 * stdout (malloc'd) and fails the test if it fails. */
static char *tmux(term *t, const char *a, const char *b, const char *c,
                  const char *d, const char *e) {
  char *argv[] = {TMUX,        "-S",      t->sock,   "-f",
                  "/dev/null", (char *)a, (char *)b, (char *)c,
                  (char *)d,   (char *)e, NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, NULL, 60, &out, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "tmux %s exited %d: %s", a, rc,
                 err ? err : "");
  free(err);
  return out;
}

/*
 * Starts a private tmux server with one 80x24 pane that runs the shell
 * commands `cmd` once term_go() is called, then prints EXIT=<status>.
 * Everything the pane receives goes to t->raw.
 */
static void term_start(term *t, const char *cmd) {
  if (access(TMUX, X_OK) != 0)
    SKIP("tmux is not installed: no terminal to test in");
  static int serial; /* a server, a transcript, a script per start */
  serial++;
  snprintf(t->sock, sizeof(t->sock), "%s/tmux%d.sock", gp_test_tmpdir(),
           serial);
  snprintf(t->raw, sizeof(t->raw), "%s/pane%d.raw", gp_test_tmpdir(), serial);
  snprintf(t->script, sizeof(t->script), "%s/pane%d.sh", gp_test_tmpdir(),
           serial);
  FILE *f = fopen(t->script, "w");
  ASSERT_NOT_NULL(f);
  /* A watchdog stops the server once the test is gone, whichever way it
   * ended (a failed assertion leaves with _exit). */
  fprintf(f,
          "(while kill -0 %d; do sleep 0.5; done; %s -S '%s' kill-server) "
          ">/dev/null 2>&1 &\n"
          "%s -S '%s' wait-for go\n%s\necho EXIT=$?\nexec sleep 600\n",
          (int)getpid(), TMUX, t->sock, TMUX, t->sock, cmd);
  fclose(f);
  char shell[700];
  snprintf(shell, sizeof(shell), "sh '%s'", t->script);
  free(tmux(t, "new-session", "-d", "-x80", "-y24", shell));
  char *pid = tmux(t, "display-message", "-p", "#{pid}", NULL, NULL);
  t->server = strtol(pid, NULL, 10);
  free(pid);
  ASSERT_GT(t->server, 0);
  char pipe[700];
  snprintf(pipe, sizeof(pipe), "cat > '%s'", t->raw);
  free(tmux(t, "pipe-pane", "-o", pipe, NULL, NULL));
}

static void term_go(term *t) {
  free(tmux(t, "wait-for", "-S", "go", NULL, NULL));
}

/* The pane's text, its history included. */
static char *term_text(term *t) {
  return tmux(t, "capture-pane", "-p", "-J", "-S", "-");
}

/* Waits (up to limit_s) until the pane's text has needle. */
static char *term_wait(term *t, const char *needle, int limit_s) {
  for (int i = 0; i < limit_s * 10; i++) {
    char *text = term_text(t);
    if (strstr(text, needle))
      return text;
    free(text);
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
  }
  char *text = term_text(t);
  gp_test_fail(__FILE__, __LINE__, "no '%s' in the pane after %d s:\n%s",
               needle, limit_s, text);
}

/* Waits (up to limit_s) until the raw bytes have needle; returns them. */
static char *raw_wait(term *t, const char *needle, int limit_s) {
  for (int i = 0; i < limit_s * 10; i++) {
    char *raw = slurp(t->raw);
    if (raw && strstr(raw, needle))
      return raw;
    free(raw);
    struct timespec ts = {0, 100000000L};
    nanosleep(&ts, NULL);
  }
  gp_test_fail(__FILE__, __LINE__, "the terminal never received '%s'", needle);
}

static void term_stop(term *t) {
  if (t->server > 0)
    kill((pid_t)t->server, SIGTERM);
  t->server = 0;
}

/* Splits text into lines without trailing blanks (in place). */
static int split(char *text, char **lines, int cap) {
  int n = 0;
  for (char *p = text; p && *p && n < cap;) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = '\0';
    size_t len = strlen(p);
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\r'))
      p[--len] = '\0';
    lines[n++] = p;
    p = nl ? nl + 1 : NULL;
  }
  return n;
}

/* Fails unless the lines of `want` appear in `pane`, in order, one after
 * the other, and no line of the pane has `hud` (what the HUD draws). */
static void expect_block(char *pane, char *want, const char *hud) {
  static char *pl[8192], *wl[8192];
  int np = split(pane, pl, 8192), nw = split(want, wl, 8192);
  while (nw && !wl[nw - 1][0])
    nw--;
  ASSERT_GT(nw, 0);
  for (int i = 0; i < np; i++)
    if (strstr(pl[i], hud))
      gp_test_fail(__FILE__, __LINE__, "pane line %d has '%s': '%s'", i + 1,
                   hud, pl[i]);
  for (int i = 0; i + nw <= np; i++) {
    int k = 0;
    while (k < nw && strcmp(pl[i + k], wl[k]) == 0)
      k++;
    if (k == nw) {
      printf("  the program's %d lines are lines %d..%d of the pane\n", nw,
             i + 1, i + nw);
      return;
    }
  }
  for (int i = 0; i < np; i++)
    fprintf(stderr, "pane %3d: %s\n", i + 1, pl[i]);
  gp_test_fail(__FILE__, __LINE__,
               "the program's %d lines are not in the pane (first: '%s')", nw,
               wl[0]);
}

/* The raw bytes show the HUD's frames: the region over 23 lines, a frame
 * on line 24 with a value, the terminal given back. */
static void expect_frames(const char *raw) {
  ASSERT(strstr(raw, "\033[1;23r"));
  const char *f = strstr(raw, "\0337\033[24;1H\033[2KUtilization ");
  ASSERT_NOT_NULL(f);
  bool valued = false;
  for (; f && !valued; f = strstr(f + 1, "\033[24;1H\033[2KUtilization ")) {
    const char *end = strstr(f, "\0338");
    const char *sp = end ? end - 1 : NULL;
    while (sp && sp > f && *sp != ' ')
      sp--;
    valued = sp && sp[1] >= '0' && sp[1] <= '9';
  }
  ASSERT(valued);
  ASSERT(strstr(raw, "\0337\033[r\033[24;1H\033[2K\0338"));
}

/* The OpenCL sample under the HUD, its output longer than the screen:
 * every line as it prints them alone, in order, and nothing of the
 * HUD's left on the screen. */
TEST(hud_term_keeps_the_programs_lines) {
#if GP_TEST_SANITIZED
  SKIP("an instrumented preload library needs the sanitizer runtime "
       "preloaded first, which the pane's shell does not do");
#endif
  ocl_env();
  ocl_require_device();
  const char *sample = wt_built("tests/opencl-sample");
  const char *lib = wt_built("libgpuperf-opencl.so");
  char *argv[] = {(char *)sample, "-n", "20", NULL};
  char *plain = NULL, *err = NULL;
  int rc = ocl_run(argv, NULL, 120, &plain, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  ASSERT_EQ(rc, 0);
  free(err);
  term t;
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_HUD=Utilization GPUPERF_HUD_PERIOD_MS=20 LD_PRELOAD='%s' "
           "'%s' -n 20",
           lib, sample);
  term_start(&t, cmd);
  term_go(&t);
  char *pane = term_wait(&t, "EXIT=", 120);
  char *raw = raw_wait(&t, "EXIT=", 30);
  term_stop(&t);
  ASSERT(strstr(pane, "EXIT=0"));
  expect_frames(raw);
  expect_block(pane, plain, "Utilization");
  free(pane);
  free(raw);
  free(plain);
}

/* clpeak, a real program, under `gpuperf record` and the HUD: the lines
 * it printed (through tee, into a file too: its figures differ from run
 * to run) are the pane's. */
TEST(hud_term_clpeak_under_record) {
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  const char *g = getenv("GPUPERF_CLI");
  if (!g || access(g, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  if (access("/usr/bin/clpeak", X_OK) != 0)
    SKIP("clpeak is not installed");
  ocl_env();
  ocl_require_device();
  const char *out = gp_test_path(0, "clpeak.out");
  const char *trace = gp_test_path(1, "t.pftrace");
  term t;
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_HUD=Utilization GPUPERF_HUD_PERIOD_MS=50 '%s' record -q "
           "-o '%s' -- sh -c 'clpeak --kernel-latency | tee \"%s\"'",
           g, trace, out);
  term_start(&t, cmd);
  term_go(&t);
  char *pane = term_wait(&t, "EXIT=", 240);
  char *raw = raw_wait(&t, "EXIT=", 30);
  term_stop(&t);
  ASSERT(strstr(pane, "EXIT=0"));
  char *own = slurp(out);
  ASSERT_NOT_NULL(own);
  ASSERT(strstr(own, "Kernel launch latency"));
  expect_frames(raw);
  expect_block(pane, own, "Utilization");
  free(own);
  free(pane);
  free(raw);
}

/* A resized terminal: the region is set anew for its size, at once (the
 * program still runs: it waits for a file). */
TEST(hud_term_follows_a_resize) {
  const char *app = wt_built("tests/stat_app");
  const char *go = gp_test_path(0, "go");
  term t;
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_HUD=Utilization GPUPERF_HUD_PERIOD_MS=50 "
           "GPUPERF_SIM_TIME=real '%s' --launches 100 --wait '%s'",
           app, go);
  term_start(&t, cmd);
  term_go(&t);
  free(raw_wait(&t, "\033[24;1H\033[2KUtilization", 120));
  free(tmux(&t, "resize-window", "-x", "70", "-y", "30"));
  free(raw_wait(&t, "\033[1;29r", 60));
  char *raw = raw_wait(&t, "\033[30;1H\033[2KUtilization", 60);
  free(raw);
  FILE *f = fopen(go, "w");
  ASSERT_NOT_NULL(f);
  fclose(f);
  char *pane = term_wait(&t, "EXIT=", 120);
  raw = raw_wait(&t, "EXIT=", 30);
  term_stop(&t);
  ASSERT(strstr(pane, "EXIT=0"));
  ASSERT(strstr(pane, "stat_app: done"));
  ASSERT(strstr(raw, "\0337\033[r\033[30;1H\033[2K\0338"));
  /* Frames fit the new width: none wider than 69 columns. */
  for (const char *p = raw; (p = strstr(p, "\033[30;1H\033[2K"));) {
    p += strlen("\033[30;1H\033[2K");
    const char *end = strstr(p, "\0338");
    ASSERT_NOT_NULL(end);
    int cols = 0;
    for (const char *c = p; c < end; c++)
      cols += ((unsigned char)*c & 0xc0) != 0x80;
    ASSERT_LE(cols, 69);
  }
  free(pane);
  free(raw);
}

/* A program that dies by a fault or _exit() gives the terminal back too
 * (the library's death handler runs the HUD's finisher), and its lines
 * stay. */
static void given_back(const char *how, const char *status) {
  const char *app = wt_built("tests/stat_app");
  const char *go = gp_test_path(0, "go");
  unlink(go); /* the last call's */
  term t;
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_HUD=Utilization GPUPERF_HUD_PERIOD_MS=50 "
           "GPUPERF_SIM_TIME=real '%s' --launches 100 --wait '%s' --die %s",
           app, go, how);
  term_start(&t, cmd);
  term_go(&t);
  free(raw_wait(&t, "\033[24;1H\033[2KUtilization", 120));
  FILE *f = fopen(go, "w");
  ASSERT_NOT_NULL(f);
  fclose(f);
  char *pane = term_wait(&t, "EXIT=", 120);
  char *raw = raw_wait(&t, "EXIT=", 30);
  term_stop(&t);
  printf("  --die %s: %.8s\n", how, strstr(pane, "EXIT="));
  ASSERT(strstr(pane, status));
  ASSERT(strstr(pane, "stat_app: done"));
  /* Given back after the last frame. */
  const char *last = NULL;
  for (const char *p = raw; (p = strstr(p, "\033[24;1H\033[2KUtilization"));
       p++)
    last = p;
  ASSERT_NOT_NULL(last);
  ASSERT(strstr(last, "\0337\033[r\033[24;1H\033[2K\0338"));
  if (strstr(pane, "Utilization"))
    gp_test_fail(__FILE__, __LINE__, "the HUD's line is left:\n%s", pane);
  free(pane);
  free(raw);
}

TEST(hud_term_given_back_on_a_fault_or_exit) {
  /* A sanitizer takes SIGSEGV for itself and aborts. */
  if (!GP_TEST_SANITIZED)
    given_back("segv", "EXIT=139");
  given_back("_exit", "EXIT=0");
}
