/*
 * test_opengl.c - `gpuperf record` of GL programs as a user runs them,
 * under Xvfb on Mesa's llvmpipe: our two-framebuffer sample (gl-sample,
 * whose per-frame triangle counts it prints), glxgears (GLX, display
 * lists) and es2gears_x11 (EGL, GLES 2), checked against what each
 * program says of itself; `gpuperf list`'s GL device; and the dlsym hook's
 * RTLD_NEXT.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/vkutil.h"
#include "harness.h"
#include "opencl/oclutil.h"

#if HAVE_TP

/* Skips unless Xvfb and the program are there and the GL library was
 * built. */
static void need(const char *prog) {
  if (!vk_on_path("Xvfb"))
    SKIP("Xvfb is not installed (Debian xvfb)");
  if (prog && !vk_on_path(prog))
    SKIP("%s is not installed (Debian mesa-utils)", prog);
  char buf[512];
  vk_built("libgpuperf-gl.so", buf, sizeof(buf));
}

/* An X server of the test's own (xvfb-run sometimes fails to clean up
 * its directory under load, and says so in its exit status): started on
 * a free display, stopped by its PID (xvfb_stop), and told to die with
 * the test should the test fail first. Returns "DISPLAY=:N". */
static pid_t xvfb_pid;
static char xvfb_env[32];

static const char *xvfb_start(void) {
  for (int k = 0; k < 64; k++) {
    int d = 300 + (int)(((unsigned)getpid() + (unsigned)k * 7u) % 600u);
    char lock[64], sock[64], dn[16];
    snprintf(lock, sizeof(lock), "/tmp/.X%d-lock", d);
    snprintf(sock, sizeof(sock), "/tmp/.X11-unix/X%d", d);
    snprintf(dn, sizeof(dn), ":%d", d);
    if (access(lock, F_OK) == 0 || access(sock, F_OK) == 0)
      continue;
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      int nul = open("/dev/null", O_WRONLY);
      dup2(nul, 1);
      dup2(nul, 2);
      execlp("Xvfb", "Xvfb", dn, "-ac", "-screen", "0", "640x480x24",
             "-nolisten", "tcp", (char *)NULL);
      _exit(127);
    }
    if (pid < 0)
      break;
    for (int i = 0; i < 400; i++) { /* up to 20 s on a loaded machine */
      if (access(sock, F_OK) == 0) {
        xvfb_pid = pid;
        snprintf(xvfb_env, sizeof(xvfb_env), "DISPLAY=%s", dn);
        return xvfb_env;
      }
      if (waitpid(pid, NULL, WNOHANG) == pid) {
        pid = 0;
        break; /* lost a race for the display: the next one */
      }
      usleep(50000);
    }
    if (pid) {
      kill(pid, SIGTERM);
      waitpid(pid, NULL, 0);
    }
  }
  SKIP("no Xvfb server could be started");
  return NULL;
}

static void xvfb_stop(void) {
  if (xvfb_pid > 0) {
    kill(xvfb_pid, SIGTERM);
    waitpid(xvfb_pid, NULL, 0);
  }
  xvfb_pid = 0;
}

/* An environment entry ("K=V") for the next recordings, or NULL. */
static const char *record_env, *record_env2;

/* Records argv (NULL-terminated, a program on PATH or a path) on the
 * test's X server into slot 0's trace; its stdout in *out. Opens the
 * trace. */
static gp_tp *record(char *const *cmd, const char *extra, char **out,
                     int want_rc) {
  const char *cli = vk_cli_path(false);
  static char trace[512];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "gl.pftrace"));
  char *argv[32] = {(char *)cli, "record", "-q", "-o", trace};
  int n = 5;
  if (extra) {
    argv[n++] = "-e";
    argv[n++] = (char *)extra;
  }
  argv[n++] = "--";
  for (int i = 0; cmd[i] && n < 31; i++)
    argv[n++] = cmd[i];
  argv[n] = NULL;
  char *env[] = {(char *)(xvfb_pid ? xvfb_env : xvfb_start()),
                 (char *)record_env, (char *)record_env2, NULL};
  char *err = NULL;
  int rc = ocl_run(argv, env, 240, out, &err);
  if (rc != want_rc)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record %s: %d\n%s", cmd[0], rc,
                 err ? err : "");
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  return tp;
}

/* The values of counter track name, oldest first, into v (at most max). */
static size_t counter_values(gp_tp *tp, const char *name, int64_t *v,
                             size_t max) {
  char sql[256];
  snprintf(sql, sizeof(sql),
           "SELECT c.value FROM counter c JOIN gpu_counter_track t ON "
           "c.track_id = t.id WHERE t.name = '%s' ORDER BY c.ts",
           name);
  gp_tp_rows *rows = NULL;
  gp_tp_error e;
  if (gp_tp_query(tp, sql, &rows, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, e.message);
  size_t n = 0;
  while (gp_tp_rows_next(rows, &e) == 1 && n < max)
    v[n++] = (int64_t)gp_tp_rows_real(rows, 0);
  gp_tp_rows_destroy(rows);
  return n;
}

/* The triangles of each frame that gl-sample printed ("frame N passA A
 * passB B": A + B) into want (room for max); returns how many. */
static int sample_triangles(const char *out, int64_t *want, int max) {
  int nf = 0;
  for (const char *p = out; p && *p && nf < max;) {
    int i, a, b;
    if (sscanf(p, "frame %d passA %d passB %d", &i, &a, &b) == 3)
      want[nf++] = a + b;
    p = strchr(p, '\n');
    p = p ? p + 1 : NULL;
  }
  return nf;
}

#define FRAMES 40

/* Our sample: two render passes a frame, the offscreen one into its
 * framebuffer object and the other into the window; the triangles of
 * each frame, as the program printed them, are the frame's primitives in
 * the pipeline statistics and its `triangles`. */
TEST(opengl_record_sample) {
  need(NULL);
  char sample[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  char *out = NULL;
  char *cmd[] = {sample, "--frames", "40", NULL};
  gp_tp *tp = record(cmd, "default,ia_primitives,triangles,draws", &out, 0);
  int64_t want[FRAMES];
  ASSERT_EQ(sample_triangles(out, want, FRAMES), FRAMES);
  free(out);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame'", FRAMES);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass'",
       2 * FRAMES);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'glXSwapBuffers'", FRAMES);
  /* Each frame: its two passes inside it, timed, the first into the
   * framebuffer object and the second into the window. */
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice f WHERE f.name = 'Frame' AND f.dur > 0 "
       "AND (SELECT count(*) FROM gpu_slice p WHERE p.name = 'Render pass' "
       "AND p.submission_id = f.submission_id AND p.ts >= f.ts AND p.ts + "
       "p.dur <= f.ts + f.dur AND p.dur > 0) = 2",
       FRAMES);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice p WHERE p.name = 'Render pass' AND "
       "p.render_target != 0 AND p.ts = (SELECT min(q.ts) FROM gpu_slice q "
       "WHERE q.name = 'Render pass' AND q.submission_id = p.submission_id)",
       FRAMES);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice p WHERE p.name = 'Render pass' AND "
       "p.render_target = 0",
       FRAMES);
  /* Flows: each swap to its frame, each pass's first call to the pass. */
  Q_EQ(tp,
       "SELECT count(*) FROM flow f JOIN slice a ON f.slice_out = a.id JOIN "
       "gpu_slice g ON f.slice_in = g.id WHERE a.name = 'glXSwapBuffers' AND "
       "g.name = 'Frame'",
       FRAMES);
  Q_EQ(tp,
       "SELECT count(*) FROM flow f JOIN slice a ON f.slice_out = a.id JOIN "
       "gpu_slice g ON f.slice_in = g.id WHERE a.name = 'glClear' AND "
       "g.name = 'Render pass'",
       2 * FRAMES);
  /* Per frame: what the program drew. */
  int64_t got[FRAMES + 1];
  ASSERT_EQ(counter_values(tp, "ia_primitives", got, FRAMES + 1), FRAMES);
  for (int i = 0; i < FRAMES; i++)
    ASSERT_EQ(got[i], want[i]);
  ASSERT_EQ(counter_values(tp, "triangles", got, FRAMES + 1), FRAMES);
  for (int i = 0; i < FRAMES; i++)
    ASSERT_EQ(got[i], want[i]);
  ASSERT_EQ(counter_values(tp, "draws", got, FRAMES + 1), FRAMES);
  for (int i = 0; i < FRAMES; i++)
    ASSERT_EQ(got[i], 2);
  /* The device as GL names it. */
  Q_EQ(tp,
       "SELECT count(*) FROM gpu WHERE name GLOB 'llvmpipe*' AND vendor "
       "GLOB 'Mesa*' AND architecture = 'OpenGL'",
       1);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* The sample on an EGL pbuffer (--egl: no window, as bench/gl --egl
 * measures a GPU machine without a display): its frames, passes and
 * swaps, unthrottled by any window, all recorded. */
TEST(opengl_record_sample_egl_pbuffer) {
  need(NULL);
  char sample[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  char *out = NULL;
  char *cmd[] = {sample, "--egl", "--frames", "400", "--size", "32x32", NULL};
  gp_tp *tp = record(cmd, NULL, &out, 0);
  int64_t want[400];
  ASSERT_EQ(sample_triangles(out, want, 400), 400);
  free(out);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame' AND dur > 0",
       400);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass' AND dur > 0",
       800);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'eglSwapBuffers'", 400);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* glxgears (GLX, display lists): a frame per swap, each with its
 * statistics, and at least the frames it reported. */
TEST(opengl_record_glxgears) {
  need("glxgears");
  char *out = NULL;
  char *cmd[] = {"timeout", "-s", "INT", "6", "glxgears", NULL};
  gp_tp *tp = record(cmd, NULL, &out, 124); /* timeout's status */
  int reported = 0;
  const char *line = out ? strstr(out, " frames in ") : NULL;
  if (line) {
    while (line > out && line[-1] != '\n')
      line--;
    reported = atoi(line);
  }
  free(out);
  int64_t frames =
      tp_int(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame'");
  int64_t swaps =
      tp_int(tp, "SELECT count(*) FROM slice WHERE name = 'glXSwapBuffers'");
  /* The session is finished at the swap after the signal (death.c), so
   * no frame is cut; the tolerance of one is for a machine too loaded to
   * swap within the second death.c waits. */
  ASSERT(frames >= reported && reported > 0);
  ASSERT(swaps == frames || swaps + 1 == frames);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass' AND dur > 0",
       frames);
  int64_t stats = tp_int(tp, "SELECT count(*) FROM counter c JOIN "
                             "gpu_counter_track t ON c.track_id = t.id WHERE "
                             "t.name = 'ia_primitives'");
  /* At the end the counters stop before the stages do: the frames begun
   * in between have no statistics, as many as a loaded machine lets pass
   * (12 of 11,329 seen). They are a tail: no frame with statistics comes
   * after one without, and at least the frames glxgears reported have
   * them. */
  ASSERT(stats >= reported && stats <= frames);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice f WHERE f.name = 'Frame' AND f.ts < "
       "(SELECT max(c.ts) FROM counter c JOIN gpu_counter_track t ON "
       "c.track_id = t.id WHERE t.name = 'ia_primitives') AND NOT EXISTS "
       "(SELECT 1 FROM counter c JOIN gpu_counter_track t ON c.track_id = "
       "t.id WHERE t.name = 'ia_primitives' AND c.ts >= f.ts AND c.ts <= "
       "f.ts + f.dur)",
       0);
  Q_EQ(tp,
       "SELECT count(DISTINCT c.value) FROM counter c JOIN gpu_counter_track "
       "t ON c.track_id = t.id WHERE t.name = 'draws'",
       1); /* three display lists a frame, every frame */
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* A SIGINT while the program swaps no more (gl-sample --hold, its context
 * current, waiting in pause()): death.c waits a second for a swap, then
 * finishes the session in the handler without calling GL. The trace is
 * whole: every frame, with its counters, nothing lost. (The deferred
 * case, a swap after the signal, is opengl_record_glxgears's.) */
TEST(opengl_sigint_without_a_swap) {
  need(NULL);
  char sample[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  char *cmd[] = {"timeout",  "-s", "INT",    "3",       sample,
                 "--frames", "20", "--hold", "--quiet", NULL};
  char *out = NULL;
  gp_tp *tp = record(cmd, NULL, &out, 124); /* timeout's status */
  ASSERT(out && strstr(out, "holding"));
  free(out);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame'", 20);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'glXSwapBuffers'", 20);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM counter c JOIN "
                       "gpu_counter_track t ON c.track_id = t.id WHERE "
                       "t.name = 'ia_primitives'"),
            20);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* es2gears_x11 (EGL, GLES 2 through libGLESv2): timed frames, and the
 * triangles its strips describe. */
TEST(opengl_record_es2gears) {
  need("es2gears_x11");
  char *cmd[] = {"timeout", "-s", "INT", "5", "es2gears_x11", NULL};
  gp_tp *tp = record(cmd, NULL, NULL, 124); /* timeout's status */
  int64_t frames =
      tp_int(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame'");
  int64_t swaps =
      tp_int(tp, "SELECT count(*) FROM slice WHERE name = 'eglSwapBuffers'");
  ASSERT(frames > 10);
  ASSERT(swaps == frames || swaps + 1 == frames);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame' AND dur > 0",
       frames);
  Q_EQ(tp, "SELECT count(*) FROM gpu WHERE architecture = 'OpenGL ES'", 1);
  Q_EQ(tp, "SELECT count(*) > 0 FROM slice WHERE name = 'glDrawArrays'", 1);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* GL_AMD_performance_monitor forwarded, against the test double
 * (tests/gl: V3D-shaped counters over llvmpipe; no real driver with the
 * extension exists here): two of its counters recorded per frame beside
 * a pipeline statistic, in one recording, with the values its model
 * gives for what the program says it drew: L2T-CLE-reads = the frame's
 * vertices (3 per triangle), PTB-primitives-binned = its triangles. */
TEST(opengl_amd_counters_per_frame) {
  need(NULL);
  char sample[512], dbl[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  vk_built("tests/libgl-amdpm-double.so", dbl, sizeof(dbl));
  static char env[600];
  snprintf(env, sizeof(env), "LD_PRELOAD=%s", dbl);
  record_env = env;
  char *cmd[] = {sample, "--frames", "30", NULL}, *out = NULL;
  gp_tp *tp =
      record(cmd, "L2T-CLE-reads,PTB-primitives-binned,ia_primitives", &out, 0);
  record_env = NULL;
  int64_t want[30];
  ASSERT_EQ(sample_triangles(out, want, 30), 30);
  free(out);
  int64_t got[31];
  ASSERT_EQ(counter_values(tp, "PTB-primitives-binned", got, 31), 30);
  for (int i = 0; i < 30; i++)
    ASSERT_EQ(got[i], want[i]);
  ASSERT_EQ(counter_values(tp, "L2T-CLE-reads", got, 31), 30);
  for (int i = 0; i < 30; i++)
    ASSERT_EQ(got[i], 3 * want[i]);
  ASSERT_EQ(counter_values(tp, "ia_primitives", got, 31), 30);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  xvfb_stop();
}

/* GL_INTEL_performance_query forwarded, against its test double
 * (tests/gl: the V3D categories as query types over llvmpipe; no real
 * driver with the extension exists here): two counters of two query
 * types recorded per frame beside a pipeline statistic, with the values
 * the double's model gives (as for the AMD double above). The double
 * makes a result wait until two later frames have ended a query of its
 * type, so every frame's results were first asked for while not there
 * ("late" in its log) and read at a later frame, never with
 * GL_PERFQUERY_WAIT_INTEL ("wait"); the sample's last two frames' are
 * still late when it releases its context, and are lost, counted, not
 * waited for, while those frames' pipeline statistics are read then. */
TEST(opengl_intel_counters_per_frame) {
  need(NULL);
  char sample[512], dbl[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  vk_built("tests/libgl-intelpq-double.so", dbl, sizeof(dbl));
  static char env[600], log_env[600];
  const char *log = gp_test_path(1, "intelpq.log");
  snprintf(env, sizeof(env), "LD_PRELOAD=%s", dbl);
  snprintf(log_env, sizeof(log_env), "GLD_INTELPQ_LOG=%s", log);
  unlink(log);
  record_env = env;
  record_env2 = log_env;
  char *cmd[] = {sample, "--frames", "30", NULL}, *out = NULL;
  gp_tp *tp =
      record(cmd, "L2T-CLE-reads,PTB-primitives-binned,ia_primitives", &out, 0);
  record_env = record_env2 = NULL;
  int64_t want[30];
  ASSERT_EQ(sample_triangles(out, want, 30), 30);
  free(out);
  int64_t got[31];
  ASSERT_EQ(counter_values(tp, "PTB-primitives-binned", got, 31), 28);
  for (int i = 0; i < 28; i++)
    ASSERT_EQ(got[i], want[i]);
  ASSERT_EQ(counter_values(tp, "L2T-CLE-reads", got, 31), 28);
  for (int i = 0; i < 28; i++)
    ASSERT_EQ(got[i], 3 * want[i]);
  ASSERT_EQ(counter_values(tp, "ia_primitives", got, 31), 30);
  for (int i = 0; i < 30; i++)
    ASSERT_EQ(got[i], want[i]);
  gp_tp_close(tp);
  xvfb_stop();

  FILE *f = fopen(log, "r");
  ASSERT_NOT_NULL(f);
  char line[128];
  int late = 0, data = 0, waits = 0;
  while (fgets(line, sizeof(line), f)) {
    late += strncmp(line, "late ", 5) == 0;
    data += strncmp(line, "data ", 5) == 0;
    waits += strncmp(line, "wait ", 5) == 0;
  }
  fclose(f);
  printf("  GetPerfQueryDataINTEL: %d late, %d with data, %d waiting\n", late,
         data, waits);
  ASSERT_GT(late, 0);
  ASSERT_GE(data, 2 * 28); /* 28 frames' 2 queries */
  ASSERT_EQ(waits, 0);
}

/* Programs that reach GL as loaders do: through glXGetProcAddressARB
 * taken from a libGL they opened themselves (GLAD, GLEW), and through
 * libepoxy (dlsym on its own handle). Every frame is recorded. */
TEST(opengl_record_loaders) {
  need(NULL);
  static const char *const progs[] = {"tests/gl-getproc", "tests/gl-epoxy"};
  for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
    char path[512];
    const char *build = getenv("GPUPERF_BUILD");
    snprintf(path, sizeof(path), "%s/%s", build ? build : "build", progs[i]);
    if (i == 1 && access(path, X_OK) != 0) {
      fprintf(stderr, "      (gl-epoxy not built: no libepoxy-dev)\n");
      continue;
    }
    vk_built(progs[i], path, sizeof(path));
    char *cmd[] = {path, "25", NULL}, *out = NULL;
    gp_tp *tp = record(cmd, NULL, &out, 0);
    ASSERT(strstr(out, "frames 25") != NULL);
    free(out);
    Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Frame' AND dur > 0",
         25);
    Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'glDrawArrays'", 25);
    Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'glXSwapBuffers'", 25);
    Q_NO_LOSS(tp);
    gp_tp_close(tp);
  }
  xvfb_stop();
}

/* The sample's trace read by Perfetto's own trace processor: the stages,
 * API slices, flows, counters and tracks are the rows it gives (the
 * tp_parity_* queries), and no error stats, where GPUPERF_PERFETTO_TP
 * names it. */
TEST(opengl_sample_parity_with_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || access(shell, X_OK) != 0)
    SKIP("GPUPERF_PERFETTO_TP does not name Perfetto's "
         "trace_processor_shell");
  need(NULL);
  char sample[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  char *cmd[] = {sample, "--frames", "20", "--quiet", NULL};
  gp_tp *tp = record(cmd, NULL, NULL, 0);
  tp_parity_compare(shell, tp, gp_test_path(0, "gl.pftrace"));
  char *csv = tp_perfetto_csv(
      shell, gp_test_path(0, "gl.pftrace"),
      "SELECT count(*) AS n FROM stats WHERE severity IN ('error', "
      "'data_loss') AND value > 0;");
  ASSERT(strstr(csv, "\n0") != NULL);
  free(csv);
  gp_tp_close(tp);
  xvfb_stop();
}

/* KHR_debug: the program's own callback still gets every message, with
 * its own user pointer (its output is the same recorded or not), and the
 * message is in the trace's GPU log. */
TEST(opengl_debug_output) {
  need(NULL);
  vk_cli_path(false); /* skips in sanitizer builds, before the plain run */
  char sample[512];
  vk_built("tests/gl-sample", sample, sizeof(sample));
  char *dpy[] = {(char *)xvfb_start(), NULL};
  char *plain_argv[] = {sample, "--frames", "3", "--quiet", "--debug", NULL};
  char *plain = NULL;
  ASSERT_EQ(ocl_run(plain_argv, dpy, 120, &plain, NULL), 0);
  ASSERT(strstr(plain, "debug: GL_INVALID_ENUM") != NULL);
  char *cmd[] = {sample, "--frames", "3", "--quiet", "--debug", NULL};
  char *out = NULL;
  gp_tp *tp = record(cmd, NULL, &out, 0);
  ASSERT_STR_EQ(out, plain);
  Q_EQ(tp,
       "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id JOIN "
       "args a ON a.arg_set_id = s.arg_set_id WHERE t.name = 'GPU Log' AND "
       "s.name = 'ERROR' AND a.key = 'message' AND a.display_value GLOB "
       "'GL_INVALID_ENUM*'",
       1);
  free(out);
  free(plain);
  gp_tp_close(tp);
  xvfb_stop();
}

#else

TEST(opengl_debug_output) {
  SKIP("built without the trace processor");
}

TEST(opengl_record_loaders) {
  SKIP("built without the trace processor");
}
TEST(opengl_amd_counters_per_frame) {
  SKIP("built without the trace processor");
}
TEST(opengl_intel_counters_per_frame) {
  SKIP("built without the trace processor");
}
TEST(opengl_sample_parity_with_perfetto) {
  SKIP("built without the trace processor");
}

TEST(opengl_record_sample) {
  SKIP("built without the trace processor");
}
TEST(opengl_record_sample_egl_pbuffer) {
  SKIP("built without the trace processor");
}
TEST(opengl_record_glxgears) {
  SKIP("built without the trace processor");
}
TEST(opengl_record_es2gears) {
  SKIP("built without the trace processor");
}

#endif /* HAVE_TP */

/* `gpuperf list` names the GL device of a context of its own, with the
 * per-frame counters; in JSON too. */
TEST(opengl_list_device) {
  char buf[512];
  vk_built("libgpuperf-gl.so", buf, sizeof(buf));
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if defined(__SANITIZE_ADDRESS__)
  SKIP("the loaders are not listed in a sanitizer build");
#endif
  char *argv[] = {(char *)cli, "list", NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, NULL, 120, &out, &err), 0);
  const char *gl = strstr(out, "\nOpenGL");
  ASSERT_NOT_NULL(gl);
  if (strncmp(gl, "\nOpenGL:", 8) == 0)
    SKIP("no GL device here: %.*s", (int)strcspn(gl + 1, "\n"), gl + 1);
  ASSERT(strstr(gl, "llvmpipe") != NULL);
  ASSERT(strstr(gl, "ia_primitives") != NULL);
  ASSERT(strstr(gl, "triangles") != NULL);
  free(out);
  free(err);
  char *jargv[] = {(char *)cli, "list", "--json", NULL};
  ASSERT_EQ(ocl_run(jargv, NULL, 120, &out, &err), 0);
  ASSERT(strstr(out, "\"api\": \"OpenGL\"") != NULL);
  free(out);
  free(err);
}

/* dlsym(RTLD_NEXT) through our dlsym is answered for its real caller: a
 * program that looks up the next glXSwapBuffers after itself finds the
 * first one after it in the search order (ours, preloaded), not the one
 * after our library (libGL's). */
TEST(opengl_dlsym_rtld_next) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SKIP("an instrumented library cannot be preloaded into a plain program");
#endif
  char lib[512], prog[512];
  vk_built("libgpuperf-gl.so", lib, sizeof(lib));
  vk_built("tests/gl-dlsym", prog, sizeof(prog));
  char env[600];
  snprintf(env, sizeof(env), "LD_PRELOAD=%s", lib);
  char *envp[] = {env, NULL};
  char *argv[] = {prog, NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, envp, 60, &out, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gl-dlsym: %d\n%s%s", rc, out, err);
  ASSERT(strstr(out, "next: libgpuperf-gl.so") != NULL);
  ASSERT(strstr(out, "handle: libgpuperf-gl.so") != NULL);
  free(out);
  free(err);
}
