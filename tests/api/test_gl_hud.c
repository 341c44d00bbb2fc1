/*
 * test_gl_hud.c - the HUD drawn in a GL window (src/backend/opengl/hud_gl.c)
 * on Xvfb, judged on screenshots of the X screen taken by xwd(1), the X
 * server's own record of the pixels: tests/programs/gl_hud_app draws the
 * same scene every frame, once without the HUD and once with it, and
 *   (a) where the HUD's panes are, the pixels differ from the scene's,
 *       with the items' graph colours and white value text in them;
 *   (b) every pixel outside the HUD's rectangle is the same in both;
 *   (c) the program's own glGet reads of its state (set far from GL's
 *       defaults before the HUD) are the same after the renderer, and no
 *       GL error was raised.
 * For GLX compatibility and core contexts, EGL OpenGL ES 3, and the GL 2
 * and ES 2 paths. Also the live HUD: the program feeding its swaps
 * through the backend table, the CSV rows against the frame times the
 * program measured itself. Skips without xvfb-run or xwd. Under ASan the
 * program runs without leak checks: Mesa's and Xlib's leaks are not
 * ours.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/opengl/hud_gl.h"
#include "harness.h"
#include "unit/writer_util.h"

#define SCREEN_W 640
#define SCREEN_H 480

/* A screenshot: 0xRRGGBB per pixel. */
typedef struct shot {
  int w, h;
  uint32_t *px;
} shot;

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* Shifts a masked channel down to 8 bits. */
static uint32_t channel(uint32_t v, uint32_t mask) {
  if (!mask)
    return 0;
  while (!(mask & 1))
    mask >>= 1, v >>= 1;
  return v & mask & 0xff;
}

/* Reads an XWD file (X11's dump format: a header of big-endian 32-bit
 * fields, the colormap, then the rows) of a 24-bit TrueColor screen,
 * 24 or 32 bits a pixel. */
static void read_xwd(const char *path, shot *s) {
  size_t size = 0;
  uint8_t *b = wt_read_file(path, &size);
  ASSERT_NOT_NULL(b);
  ASSERT_GE(size, (size_t)100);
  uint32_t f[25];
  for (int i = 0; i < 25; i++)
    f[i] = be32(b + 4 * i);
  uint32_t header = f[0], version = f[1], format = f[2], width = f[4],
           height = f[5], order = f[7], bpp = f[11], stride = f[12],
           rmask = f[14], gmask = f[15], bmask = f[16], ncolors = f[19];
  ASSERT_EQ(version, 7u);
  ASSERT_EQ(format, 2u); /* ZPixmap */
  ASSERT(bpp == 24 || bpp == 32);
  uint32_t bytes = bpp / 8; /* rows padded to stride bytes */
  size_t off = header + (size_t)ncolors * 12;
  ASSERT_LE(off + (size_t)stride * height, size);
  s->w = (int)width, s->h = (int)height;
  s->px = malloc((size_t)width * height * 4);
  ASSERT_NOT_NULL(s->px);
  for (uint32_t y = 0; y < height; y++)
    for (uint32_t x = 0; x < width; x++) {
      uint32_t n = bytes, v = 0;
      const uint8_t *p = b + off + (size_t)y * stride + n * x;
      for (uint32_t k = 0; k < n; k++) /* MSBFirst (1) or LSBFirst (0) */
        v |= (uint32_t)p[order ? k : n - 1 - k] << (8 * (n - 1 - k));
      s->px[y * width + x] =
          channel(v, rmask) << 16 | channel(v, gmask) << 8 | channel(v, bmask);
    }
  free(b);
}

static void need_x(void) {
  if (wt_system("command -v xvfb-run >/dev/null 2>&1") != 0)
    SKIP("xvfb-run is not installed (Debian xvfb)");
  if (wt_system("command -v xwd >/dev/null 2>&1") != 0)
    SKIP("xwd is not installed (Debian x11-apps)");
}

/*
 * Runs gl_hud_app with args (and the environment entries env, "K=V ...")
 * on a new Xvfb screen of SCREEN_W x SCREEN_H,
 * takes a screenshot of the whole screen once the program has drawn its
 * frames (it then waits for the test's word), and keeps the program's
 * output. Returns the program's exit status.
 */
static int run_shot_as(const char *env, const char *prefix, const char *args,
                       const char *xwd, char **out) {
  const char *app = wt_built("tests/gl_hud_app");
  const char *script = gp_test_path(1, "shot.sh");
  wt_write_text(script,
                "#!/bin/sh\n"
                "# shot.sh OUT APP ARGS...: APP's last frame into OUT\n"
                "out=$1; shift\n"
                "d=$(dirname \"$out\")\n"
                "rm -f \"$out.ready\" \"$out.hold\"\n"
                "\"$@\" --ready \"$out.ready\" --hold \"$out.hold\" & p=$!\n"
                "i=0\n"
                "while [ ! -e \"$out.ready\" ] && kill -0 $p 2>/dev/null; do\n"
                "  sleep 0.05\n"
                "done\n"
                "[ -e \"$out.ready\" ] && xwd -root -silent -out \"$out\"\n"
                "touch \"$out.hold\"\n"
                "wait $p\n");
  const char *log = gp_test_path(2, "app.log");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "env ASAN_OPTIONS=detect_leaks=0 %s xvfb-run -a -s '-screen 0 "
           "%dx%dx24' sh %s %s %s %s --size "
           "480x360 %s > %s 2>&1",
           env, SCREEN_W, SCREEN_H, script, xwd, prefix, app, args, log);
  int rc = wt_system(cmd);
  *out = wt_read_text(log);
  printf("  gl_hud_app %s: status %d\n%s", args, rc, *out ? *out : "");
  return rc;
}

static int run_shot(const char *env, const char *args, const char *xwd,
                    char **out) {
  return run_shot_as(env, "", args, xwd, out);
}

/* The HUD's rectangle for gl_hud_app's fixed view (two panes: two items,
 * then one), from the layout hud_gl.h documents. */
static void fixed_rect(int r[4], int pane_y[2], int pane_h[2]) {
  pane_h[0] = gp__gl_hud_pane_height(2);
  pane_h[1] = gp__gl_hud_pane_height(1);
  pane_y[0] = GP_GL_HUD_MARGIN;
  pane_y[1] = pane_y[0] + pane_h[0] + GP_GL_HUD_GAP;
  r[0] = GP_GL_HUD_MARGIN;
  r[1] = GP_GL_HUD_MARGIN;
  r[2] = GP_GL_HUD_PANE_W;
  r[3] = pane_y[1] + pane_h[1] - GP_GL_HUD_MARGIN;
}

static int count_in(const shot *s, int x0, int y0, int x1, int y1,
                    uint32_t rgb) {
  int n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      n += s->px[y * s->w + x] == rgb;
  return n;
}

/* (b): outside the rectangle r, every pixel of on is off's; the
 * differences' bounding box is inside it. */
static void same_outside(const shot *on, const shot *off, const int r[4]) {
  ASSERT_EQ(on->w, SCREEN_W);
  ASSERT_EQ(on->h, SCREEN_H);
  ASSERT_EQ(off->w, on->w);
  ASSERT_EQ(off->h, on->h);
  int outside = 0, changed = 0, bx0 = on->w, by0 = on->h, bx1 = -1, by1 = -1;
  for (int y = 0; y < on->h; y++)
    for (int x = 0; x < on->w; x++) {
      bool differs = on->px[y * on->w + x] != off->px[y * on->w + x];
      bool in = x >= r[0] && x < r[0] + r[2] && y >= r[1] && y < r[1] + r[3];
      outside += differs && !in;
      changed += differs;
      if (differs) {
        bx0 = x < bx0 ? x : bx0, by0 = y < by0 ? y : by0;
        bx1 = x > bx1 ? x : bx1, by1 = y > by1 ? y : by1;
      }
    }
  printf("  HUD rectangle %d,%d %dx%d; %d pixels changed, bounding box "
         "%d,%d..%d,%d; %d outside\n",
         r[0], r[1], r[2], r[3], changed, bx0, by0, bx1, by1, outside);
  ASSERT_GT(changed, r[2] * r[3] / 2);
  ASSERT_EQ(outside, 0);
}

/* The checks (a), (b) and (c) for one kind of context. */
static void screens(const char *args) {
  need_x();
  char with_args[512];
  snprintf(with_args, sizeof(with_args), "%s --hud fixed --state", args);
  char *out = NULL;
  const char *a = gp_test_path(0, "without.xwd");
  ASSERT_EQ(run_shot("GPUPERF_HUD=", args, a, &out), 0);
  free(out);
  shot off, on;
  read_xwd(a, &off);
  static char b[4096];
  snprintf(b, sizeof(b), "%s", gp_test_path(0, "with.xwd"));
  /* (c): the program's state reads back the same, no GL error. */
  ASSERT_EQ(run_shot("GPUPERF_HUD=", with_args, b, &out), 0);
  ASSERT(strstr(out, "state checks 30, differ 0, GL errors 0"));
  free(out);
  read_xwd(b, &on);
  int r[4], py[2], ph[2];
  fixed_rect(r, py, ph);
  same_outside(&on, &off, r);
  /* (a): each pane covers its box (a translucent background over the
   * scene changes nearly every pixel), its items' graphs are drawn in
   * their colours, the values in white text. */
  static const uint32_t green = 0x5ae65a, yellow = 0xffd23c;
  for (int p = 0; p < 2; p++) {
    int x0 = r[0], x1 = r[0] + r[2], y0 = py[p], y1 = py[p] + ph[p];
    int diff = 0, n = (x1 - x0) * (y1 - y0);
    for (int y = y0; y < y1; y++)
      for (int x = x0; x < x1; x++)
        diff += on.px[y * on.w + x] != off.px[y * on.w + x];
    int items = p == 0 ? 2 : 1;
    int text_y1 = y0 + GP_GL_HUD_PAD + items * GP_GL_HUD_LINE_H;
    int g0 = count_in(&on, x0, text_y1, x1, y1, green);
    int g1 = count_in(&on, x0, text_y1, x1, y1, yellow);
    int white = count_in(&on, x1 - 60, y0, x1, text_y1, 0xffffff);
    int name = count_in(&on, x0, y0, x0 + 100,
                        y0 + GP_GL_HUD_PAD + GP_GL_HUD_LINE_H, green);
    printf("  pane %d: %d of %d pixels changed; graph pixels %d green, %d "
           "yellow; value text %d white; name text %d green\n",
           p, diff, n, g0, g1, white, name);
    ASSERT_GT(diff, n * 9 / 10);
    ASSERT_GT(g0, 200);
    if (p == 0)
      ASSERT_GT(g1, 200);
    else
      ASSERT_EQ(g1, 0);
    ASSERT_GT(white, 30);
    ASSERT_GT(name, 10);
  }
  /* The same text in both panes' first lines would be the same pixels:
   * "fps" and "gpu-frametime" differ, so do their pixels. */
  int same = 0;
  for (int y = 0; y < GP_GL_HUD_LINE_H; y++)
    for (int x = 0; x < 100; x++)
      same += on.px[(py[0] + GP_GL_HUD_PAD + y) * on.w + r[0] + x] ==
              on.px[(py[1] + GP_GL_HUD_PAD + y) * on.w + r[0] + x];
  ASSERT_LT(same, 100 * GP_GL_HUD_LINE_H);
  free(on.px);
  free(off.px);
}

/* The HUD as a user gets it: GPUPERF_HUD=fps,primitives-generated in the
 * environment of `gpuperf record -- PROGRAM`, drawn by libgpuperf-gl.so
 * (preloaded by record) into the program's window at each swap. Against
 * the same recording without GPUPERF_HUD: every pixel outside the two
 * panes' rectangle is the same, and inside it the panes are drawn, with
 * the graphs' colours and white value text. */
TEST(gl_hud_drawn_by_the_recording) {
  need_x();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SKIP("gpuperf record preloads no library in a sanitizer build");
#endif
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  wt_built("libgpuperf-gl.so");
  char prefix[1024];
  /* Under record the HUD shows what the recording samples: -e adds it. */
  snprintf(prefix, sizeof(prefix),
           "%s record -q -e default,primitives-generated -o %s --", cli,
           gp_test_path(3, "gl.pftrace"));
  char *out = NULL;
  static char a[4096];
  snprintf(a, sizeof(a), "%s", gp_test_path(0, "without.xwd"));
  ASSERT_EQ(run_shot_as("GPUPERF_HUD=", prefix, "--api compat", a, &out), 0);
  free(out);
  static char b[4096];
  snprintf(b, sizeof(b), "%s", gp_test_path(0, "with.xwd"));
  ASSERT_EQ(run_shot_as("GPUPERF_HUD=fps,primitives-generated", prefix,
                        "--api compat --frames 600", b, &out),
            0);
  free(out);
  shot off, on;
  read_xwd(a, &off);
  read_xwd(b, &on);
  /* Two panes of one item each, from the layout hud_gl.h documents. */
  int h = gp__gl_hud_pane_height(1);
  int py[2] = {GP_GL_HUD_MARGIN, GP_GL_HUD_MARGIN + h + GP_GL_HUD_GAP};
  int r[4] = {GP_GL_HUD_MARGIN, GP_GL_HUD_MARGIN, GP_GL_HUD_PANE_W,
              py[1] + h - GP_GL_HUD_MARGIN};
  same_outside(&on, &off, r);
  static const uint32_t green = 0x5ae65a;
  for (int p = 0; p < 2; p++) {
    int x0 = r[0], x1 = r[0] + r[2], y0 = py[p], y1 = py[p] + h;
    int text_y1 = y0 + GP_GL_HUD_PAD + GP_GL_HUD_LINE_H;
    int graph = count_in(&on, x0, text_y1, x1, y1, green);
    int white = count_in(&on, x1 - 60, y0, x1, text_y1, 0xffffff);
    printf("  pane %d: graph pixels %d green; value text %d white\n", p, graph,
           white);
    ASSERT_GT(white, 10);
    if (p == 0)
      ASSERT_GT(graph, 0); /* fps has a history by the last frame */
  }
  free(on.px);
  free(off.px);
}

TEST(gl_hud_screen_glx_compat) {
  screens("--api compat");
}

TEST(gl_hud_screen_glx_core) {
  screens("--api core");
}

TEST(gl_hud_screen_egl_es3) {
  screens("--api es");
}

/* The renderer's GL 2 path (no vertex array object of its own: the
 * program's arrays saved and put back) on a GL 2.1 program. */
TEST(gl_hud_screen_gl2_path) {
  screens("--api compat --as 2.1");
}

TEST(gl_hud_screen_es2_path) {
  screens("--api es2 --as 2.0");
}

/* The largest view (16 items, the longest names, huge, negative and NaN
 * values, full histories) in a window too short for it: the program's
 * state kept, no GL error, nothing drawn outside the panes' column. */
TEST(gl_hud_largest_view) {
  need_x();
  char *out = NULL;
  const char *a = gp_test_path(0, "without.xwd");
  ASSERT_EQ(run_shot("GPUPERF_HUD=", "--api core", a, &out), 0);
  free(out);
  shot off, on;
  read_xwd(a, &off);
  static char b[4096];
  snprintf(b, sizeof(b), "%s", gp_test_path(0, "with.xwd"));
  ASSERT_EQ(run_shot("GPUPERF_HUD=", "--api core --hud full --state", b, &out),
            0);
  ASSERT(strstr(out, "state checks 30, differ 0, GL errors 0"));
  free(out);
  read_xwd(b, &on);
  /* The panes' column, down to the window's bottom (360 rows). */
  int r[4] = {GP_GL_HUD_MARGIN, GP_GL_HUD_MARGIN, GP_GL_HUD_PANE_W,
              360 - GP_GL_HUD_MARGIN};
  same_outside(&on, &off, r);
  free(on.px);
  free(off.px);
}

/* A field of a CSV row: the k-th after the first comma-separated ones. */
static const char *field(const char *row, int k) {
  for (; k > 0 && row; k--) {
    row = strpbrk(row, ",\n");
    row = row && *row == ',' ? row + 1 : NULL;
  }
  return row;
}

/*
 * The live HUD: the program feeds its swaps (with the times it read) and
 * draws the views the HUD gives. Its pixels outside the HUD are the
 * scene's; the HUD's rows hold, for every period, a mean frame time
 * within the program's own shortest and longest intervals, and fps equal
 * to 1000 over it; gpu-frametime, never fed, has no value and is named
 * at exit.
 */
TEST(gl_hud_live_values_and_rows) {
  need_x();
  const char *csv = gp_test_path(3, "hud.csv");
  char env[600];
  snprintf(env, sizeof(env),
           "GPUPERF_HUD=fps+frametime,gpu-frametime GPUPERF_HUD_PERIOD_MS=100 "
           "GPUPERF_HUD_FILE=%s",
           csv);
  char *out = NULL;
  const char *a = gp_test_path(0, "without.xwd");
  ASSERT_EQ(run_shot("GPUPERF_HUD=", "--frames 600", a, &out), 0);
  free(out);
  shot off, on;
  read_xwd(a, &off);
  static char b[4096];
  snprintf(b, sizeof(b), "%s", gp_test_path(0, "with.xwd"));
  ASSERT_EQ(run_shot(env, "--hud live --frames 600", b, &out), 0);
  read_xwd(b, &on);
  int r[4], py[2], ph[2];
  fixed_rect(r, py, ph); /* the same panes: two items, then one */
  same_outside(&on, &off, r);
  ASSERT_GT(count_in(&on, r[0], py[0], r[0] + 100,
                     py[0] + GP_GL_HUD_PAD + GP_GL_HUD_LINE_H, 0x5ae65a),
            10);
  const char *iv = strstr(out, "shortest ");
  ASSERT_NOT_NULL(iv);
  double lo = strtod(iv + 9, NULL),
         hi = strtod(strstr(iv, "longest ") + 8, NULL);
  const char *ls = strstr(out, "last swap at ");
  ASSERT_NOT_NULL(ls);
  double last = strtod(ls + 13, NULL);
  ASSERT(strstr(out, "'gpu-frametime' had no value"));
  ASSERT(strstr(out, "no GPU frame time was fed"));
  free(out);
  char *text = wt_read_text(csv);
  ASSERT_NOT_NULL(text);
  const char *head = "time_s,pid,fps,frametime,gpu-frametime\n";
  ASSERT(strncmp(text, head, strlen(head)) == 0);
  int rows = 0, valued = 0, after = 0;
  for (const char *row = text + strlen(head); *row;
       row = strchr(row, '\n') + 1, rows++) {
    const char *f = field(row, 2), *ft = field(row, 3), *g = field(row, 4);
    ASSERT(f && ft && g);
    ASSERT(*g == '\n'); /* gpu-frametime: empty */
    if (*f == ',')
      continue; /* no frame yet */
    double fps = strtod(f, NULL), ms = strtod(ft, NULL);
    valued++;
    ASSERT_NEAR(fps * ms, 1000.0, 1e-5);
    /* After the last swap (the program waits for its screenshot), a
     * period with no frame shows the frame still in progress: the time
     * since that swap (the rows' times are taken just after). */
    double t = strtod(row, NULL);
    bool within = ms >= lo * (1 - 1e-8) && ms <= hi * (1 + 1e-8);
    if (t > last && !within) {
      after++;
      if (!(ms <= (t - last) * 1000 + 1e-3))
        gp_test_fail(__FILE__, __LINE__,
                     "row %d at %.6f s, after the last swap at %.6f s: "
                     "frametime %.9g ms",
                     rows + 1, t, last, ms);
      continue;
    }
    /* The first row with a frame may come when only the first swap has
     * happened: no interval has ended, and it shows the frame in
     * progress, shorter than any whole one (seen under load). */
    if (!within && valued == 1 && ms > 0 && ms <= hi * (1 + 1e-8))
      continue;
    if (!within)
      gp_test_fail(__FILE__, __LINE__,
                   "row %d: frametime %.9g ms is outside the program's "
                   "intervals [%.9g, %.9g]",
                   rows + 1, ms, lo, hi);
  }
  printf("  %d rows, %d with frames, %d after the last swap; the program's "
         "intervals %.3f .. %.3f ms\n",
         rows, valued, after, lo, hi);
  ASSERT_GE(valued, 1);
  free(text);
  free(on.px);
  free(off.px);
}

/* Runs gl_hud_app (args) on Xvfb with its stderr on a terminal of 24
 * rows (script(1)), GPUPERF_HUD=fps,Utilization; the terminal's bytes in
 * *out. */
static void run_on_tty(const char *args, char **out) {
  if (access("/usr/bin/script", X_OK) != 0)
    SKIP("script(1) (util-linux) is not installed: no terminal to test in");
  const char *app = wt_built("tests/gl_hud_app");
  const char *log = gp_test_path(2, "tty.log");
  char cmd[1600];
  snprintf(cmd, sizeof(cmd),
           "ASAN_OPTIONS=detect_leaks=0 GPUPERF_HUD=fps,Utilization "
           "GPUPERF_HUD_PERIOD_MS=50 "
           "/usr/bin/script -qfec \"stty rows 24 cols 80; xvfb-run -a -s "
           "'-screen 0 640x480x24' %s --size 320x240 %s\" %s > /dev/null",
           app, args, log);
  ASSERT_EQ(wt_system(cmd), 0);
  *out = wt_read_text(log);
  ASSERT_NOT_NULL(*out);
}

/*
 * A process whose window shows the HUD gives the terminal's line back at
 * its first view: the line drawn while it only used a GPU (a simulated
 * one, 2 s) stops at that moment. Without a window the line goes on to
 * the exit.
 */
TEST(gl_hud_window_takes_over_the_terminal) {
  need_x();
  static const char draw[] = "\0337\033[24;1H", release[] = "\0337\033[r";
  char *out = NULL;
  run_on_tty("--sim-first --hud live --frames 50", &out);
  const char *first = strstr(out, draw), *back = strstr(out, release),
             *done = strstr(out, "gl_hud_app: frames 50");
  if (!first)
    SKIP("the HUD drew no line in the 2 s before the window (a machine "
         "this loaded cannot show the hand-over)");
  ASSERT_NOT_NULL(done);
  ASSERT_NOT_NULL(back);
  ASSERT(first < back); /* drawn, then given back */
  ASSERT(back < done);  /* at the first frame, not at the exit */
  ASSERT(strstr(back, draw) == NULL);
  free(out);
  /* The control: no window, the line goes on to the exit. */
  run_on_tty("--sim-first --hud none --frames 50", &out);
  done = strstr(out, "gl_hud_app: frames 50");
  ASSERT_NOT_NULL(done);
  ASSERT_NOT_NULL(strstr(done, draw));
  free(out);
}
