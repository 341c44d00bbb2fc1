/*
 * test_hud_view.c - the HUD's data side for a window (core/hud_view.h):
 * the panes hud_view copies out of the HUD, the frame metrics hud_feed
 * takes, through the backend table a GL library gets, in this process
 * (its HUD started by the test, ticked by the test: a period of an hour
 * keeps the HUD's own thread from ticking). Expected values are computed
 * here from the swap times the test feeds. Also, in programs: the names
 * in GPUPERF_HUD=help, and a frame metric beside a counter in a program
 * without a window (never reported as unknown; at exit, said to have had
 * no frame).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/backend.h"
#include "harness.h"
#include "opencl/oclutil.h"
#include "session/hudInt.h"
#include "unit/writer_util.h"

static uint64_t mono(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static const gp_backend_ops *table(void) {
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  ASSERT_NOT_NULL(c);
  return c;
}

/* Starts this process's HUD on spec, never ticking by itself. */
static void start(const char *spec) {
  setenv("GPUPERF_HUD", spec, 1);
  setenv("GPUPERF_HUD_PERIOD_MS", "3600000", 1);
  unsetenv("GPUPERF_HUD_FILE");
  ASSERT_OK(gp_hud_start_from_env());
}

static gp_hud_view view; /* 10 KiB: not on the stack */

static void get_view(const gp_backend_ops *c) {
  memset(&view, 0xa5, sizeof(view));
  view.size = sizeof(view);
  ASSERT_OK(c->hud_view(&view));
}

TEST(hud_view_without_hud) {
  const gp_backend_ops *c = table();
  view.size = sizeof(view);
  ASSERT_ERR(c->hud_view(&view), GP_ENOENT);
  c->hud_feed(GP_HUD_FEED_SWAP, 0, 0); /* nothing to feed: no effect */
  ASSERT_ERR(c->hud_view(&view), GP_ENOENT);
}

/* The panes as GPUPERF_HUD names them, before any value. */
TEST(hud_view_panes_from_the_syntax) {
  const gp_backend_ops *c = table();
  start("fps+frametime:50,gpu-frametime");
  gp_hud_view small;
  memset(&small, 0, sizeof(small));
  small.size = sizeof(small) - 8; /* another build's struct */
  ASSERT_ERR(c->hud_view(&small), GP_EINVAL);
  ASSERT_EQ(small.num_items, 0u); /* unchanged */
  get_view(c);
  ASSERT_EQ(view.num_items, 3u);
  ASSERT_EQ(view.num_panes, 2u);
  ASSERT_STR_EQ(view.items[0].name, "fps");
  ASSERT_STR_EQ(view.items[1].name, "frametime");
  ASSERT_STR_EQ(view.items[2].name, "gpu-frametime");
  ASSERT_EQ(view.items[0].pane, 0u);
  ASSERT_EQ(view.items[1].pane, 0u);
  ASSERT_EQ(view.items[2].pane, 1u);
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(view.items[i].num_hist, 0u);
    ASSERT_EQ(view.items[i].flags & GP_HUD_VIEW_HAVE, 0u);
  }
  ASSERT_EQ(view.items[1].flags, GP_HUD_VIEW_FIXED);
  ASSERT_NEAR(view.items[1].top, 50.0, 0);
  ASSERT_NEAR(view.items[0].top, 1.0, 0); /* automatic, nothing yet */
  /* A tick with no frame fed: still nothing. */
  uint64_t seq = view.seq;
  gp__hud_tick();
  get_view(c);
  ASSERT_EQ(view.items[0].flags & GP_HUD_VIEW_HAVE, 0u);
  ASSERT(view.seq != seq);
}

/* Values computed from the swap times fed, one history value per tick,
 * oldest first, at most GP_HUD_VIEW_HIST. */
TEST(hud_feed_frame_metrics) {
  const gp_backend_ops *c = table();
  start("fps+frametime:50,gpu-frametime");
  const uint64_t ms = 1000000, base = mono() - 100000 * ms;
  get_view(c); /* a window: the HUD shows from now on */
  /* Frames of 10, 10 and 20 ms: 40 ms for 3 frames. */
  c->hud_feed(GP_HUD_FEED_SWAP, base, 0);
  c->hud_feed(GP_HUD_FEED_SWAP, base + 10 * ms, 0);
  c->hud_feed(GP_HUD_FEED_SWAP, base + 20 * ms, 0);
  c->hud_feed(GP_HUD_FEED_SWAP, base + 40 * ms, 0);
  c->hud_feed(GP_HUD_FEED_GPU_FRAME, 0, 5.0);
  c->hud_feed(GP_HUD_FEED_GPU_FRAME, 0, 7.0);
  c->hud_feed(99, 0, 1e9); /* unknown: ignored */
  gp__hud_tick();
  get_view(c);
  ASSERT_EQ(view.items[0].flags & GP_HUD_VIEW_HAVE, GP_HUD_VIEW_HAVE);
  ASSERT_NEAR(view.items[0].value, 3 * 1000.0 / 40.0, 1e-9);
  ASSERT_NEAR(view.items[1].value, 40.0 / 3, 1e-9);
  ASSERT_NEAR(view.items[2].value, 6.0, 1e-9);
  ASSERT_EQ(view.items[0].num_hist, 1u);
  ASSERT_NEAR(view.items[0].hist[0], 75.0, 1e-9);
  ASSERT_NEAR(view.items[0].top, 75.0, 1e-9);
  /* Next period: two frames of 10 ms, no GPU time (it keeps its last). */
  c->hud_feed(GP_HUD_FEED_SWAP, base + 50 * ms, 0);
  c->hud_feed(GP_HUD_FEED_SWAP, base + 60 * ms, 0);
  /* A swap before the last one is no frame. */
  c->hud_feed(GP_HUD_FEED_SWAP, base + 55 * ms, 0);
  c->hud_feed(GP_HUD_FEED_SWAP, base + 65 * ms, 0);
  gp__hud_tick();
  get_view(c);
  ASSERT_EQ(view.items[0].num_hist, 2u);
  ASSERT_NEAR(view.items[0].hist[0], 75.0, 1e-9);
  ASSERT_NEAR(view.items[0].hist[1], 100.0, 1e-9);
  ASSERT_NEAR(view.items[0].top, 100.0, 1e-9);
  ASSERT_NEAR(view.items[1].hist[1], 10.0, 1e-9);
  ASSERT_NEAR(view.items[1].top, 50.0, 0);
  ASSERT_EQ(view.items[2].num_hist, 2u);
  ASSERT_NEAR(view.items[2].hist[1], 6.0, 1e-9);
  /* 100 more periods, period k with frames of k+1 ms: the view keeps the
   * last GP_HUD_VIEW_HIST, oldest first. */
  uint64_t t = base + 65 * ms;
  for (int k = 0; k < 100; k++) {
    t += (uint64_t)(k + 1) * ms;
    c->hud_feed(GP_HUD_FEED_SWAP, t, 0);
    c->hud_feed(GP_HUD_FEED_GPU_FRAME, 0, (double)k);
    gp__hud_tick();
  }
  get_view(c);
  ASSERT_EQ(view.items[1].num_hist, (uint32_t)GP_HUD_VIEW_HIST);
  for (int j = 0; j < GP_HUD_VIEW_HIST; j++) {
    int k = 100 - GP_HUD_VIEW_HIST + j;
    ASSERT_NEAR(view.items[1].hist[j], (double)(k + 1), 1e-6);
    ASSERT_NEAR(view.items[0].hist[j], 1000.0 / (k + 1), 1e-6);
    ASSERT_NEAR(view.items[2].hist[j], (double)k, 1e-9);
  }
  ASSERT_NEAR(view.items[0].top, 1000.0 / (100 - GP_HUD_VIEW_HIST + 1), 1e-6);
  /* A period in which no frame ended: the frame in progress, since the
   * last swap (more than 90 s ago here). */
  gp__hud_tick();
  get_view(c);
  double ft = view.items[1].value, fps = view.items[0].value;
  printf("  no frame for a period: frametime %.1f ms, fps %.6f\n", ft, fps);
  ASSERT_GT(ft, 90000.0);
  ASSERT_NEAR(fps * ft, 1000.0, 1e-6);
  ASSERT_NEAR(view.items[2].value, 99.0, 1e-9);
}

/* A malformed GPUPERF_HUD is refused as before, frame names or not. */
TEST(hud_view_syntax_errors) {
  setenv("GPUPERF_HUD", "fps,,frametime", 1);
  ASSERT_ERR(gp_hud_start_from_env(), GP_EINVAL);
  view.size = sizeof(view);
  ASSERT_ERR(table()->hud_view(&view), GP_ENOENT);
}

/* GPUPERF_HUD=help names the frame metrics. */
TEST(hud_help_lists_frame_metrics) {
  const char *app = wt_built("tests/stat_app");
  char *env[] = {"GPUPERF_HUD=help", NULL};
  char *argv[] = {(char *)app, NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 60, &out, &err), 0);
  ASSERT(strstr(out, "\n  fps "));
  ASSERT(strstr(out, "\n  frametime "));
  ASSERT(strstr(out, "\n  gpu-frametime "));
  ASSERT(!strstr(out, "stat_app: done")); /* main() never ran */
  free(out);
  free(err);
}

/* A program without a window: a frame metric beside a counter is no
 * unknown name; the counter's rows go on; at exit the metric is said to
 * have had no frame. */
TEST(hud_frame_metric_without_window) {
  const char *app = wt_built("tests/stat_app");
  const char *path = gp_test_path(0, "hud.csv");
  char file[600];
  snprintf(file, sizeof(file), "GPUPERF_HUD_FILE=%s", path);
  char *env[] = {"GPUPERF_HUD=fps,Utilization,no-such-counter",
                 "GPUPERF_HUD_PERIOD_MS=100", "GPUPERF_SIM_TIME=real", file,
                 NULL};
  char *argv[] = {(char *)app, "--launches", "3000", NULL};
  char *out = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, env, 120, &out, &err), 0);
  ASSERT(strstr(err, "no device has a counter named 'no-such-counter'"));
  ASSERT(!strstr(err, "counter named 'fps'"));
  ASSERT(strstr(err, "'fps' had no value in process"));
  ASSERT(strstr(err, "no frame was shown"));
  char *csv = wt_read_text(path);
  ASSERT(strncmp(csv, "time_s,pid,fps,Utilization,no-such-counter\n", 43) == 0);
  /* Rows after the name was dropped have fps and Utilization only; some
   * have a Utilization value, none an fps. */
  int valued = 0;
  for (char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
    char *f1 = strchr(l + 1, ','), *f2 = f1 ? strchr(f1 + 1, ',') : NULL;
    ASSERT_NOT_NULL(f2);
    ASSERT(f2[1] == ','); /* fps: empty */
    valued += f2[2] != '\n' && f2[2] != ',';
  }
  ASSERT_GT(valued, 0);
  free(csv);
  free(out);
  free(err);
}
