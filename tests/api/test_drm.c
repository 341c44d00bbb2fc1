/*
 * test_drm.c - the Linux DRM sources against fixture trees in
 * tests/data/linux (/proc- and /sys-shaped folders whose files follow the
 * formats the kernel documents): fdinfo usage stats parsed, busy % from
 * two readings equal to the hand computation for each way drivers report
 * (ns with capacity, cycles with total cycles, cycles with maxfreq); one
 * client counted once however many fds it has; cards found with their
 * frequency, hwmon and VRAM files; and `gpuperf record` with
 * GPUPERF_SYSROOT on a fixture writing those values into gpu counter
 * tracks, V3D's engines (bin, render, tfu, csd, cache_clean) among them.
 *
 * These machines have no DRM GPU: nothing here runs on a real card.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/drm.h"
#include "harness.h"
#include "opencl/oclutil.h"

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

/* tests/data/linux/<rel> from the source tree (the tests run from it). */
static const char *data(const char *rel, char *buf, size_t size) {
  snprintf(buf, size, "tests/data/linux/%s", rel);
  FILE *f = fopen(buf, "r");
  if (!f) {
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/.", buf);
    f = fopen(dir, "r");
  }
  if (!f)
    SKIP("fixture %s not found (run from the source tree)", buf);
  fclose(f);
  return buf;
}

static void parse_file(const char *rel, gp__fdinfo *out) {
  char path[512];
  data(rel, path, sizeof(path));
  char *text = tp_read_file(path, NULL);
  ASSERT(text != NULL);
  ASSERT(gp__fdinfo_parse(text, out));
  free(text);
}

static double pct(const gp__fdinfo *a, const gp__fdinfo *b, const char *e) {
  return gp__fdinfo_busy_pct(gp__fdinfo_engine(a, e), gp__fdinfo_engine(b, e),
                             500000000ull);
}

TEST(drm_fdinfo_busy_from_two_readings) {
  gp__fdinfo a, b;
  /* v3d: busy ns per engine; readings 500 ms apart. */
  parse_file("fdinfo/v3d-a", &a);
  parse_file("fdinfo/v3d-b", &b);
  ASSERT_STR_EQ(a.driver, "v3d");
  ASSERT_EQ(a.client_id, 12);
  ASSERT_EQ(a.num_engines, 5);
  const char *v3d[] = {"bin", "render", "tfu", "csd", "cache_clean"};
  /* (3250000000 - 3000000000) / 500000000 = 50 %, and so on. */
  const double want[] = {50.0, 80.0, 0.0, 25.0, 1.0};
  for (int i = 0; i < 5; i++) {
    ASSERT_STR_EQ(a.engines[i].name, v3d[i]);
    ASSERT_NEAR(pct(&a, &b, v3d[i]), want[i], 1e-9);
  }
  /* amdgpu: capacity 4 on compute, memory in KiB and MiB. */
  parse_file("fdinfo/amdgpu-a", &a);
  parse_file("fdinfo/amdgpu-b", &b);
  ASSERT_STR_EQ(a.pdev, "0000:03:00.0");
  ASSERT_NEAR(pct(&a, &b, "gfx"), 20.0, 1e-9);     /* 1e8 / 5e8 */
  ASSERT_NEAR(pct(&a, &b, "compute"), 30.0, 1e-9); /* 6e8 / (5e8 x 4) */
  ASSERT_EQ(a.num_regions, 2); /* vram, gtt (drm-memory-* is the old key) */
  for (uint32_t i = 0; i < a.num_regions; i++) {
    if (strcmp(a.regions[i].name, "vram") == 0) {
      ASSERT_EQ(a.regions[i].total, 1073741824ull);
      ASSERT_EQ(a.regions[i].resident, 536870912ull);
    } else if (strcmp(a.regions[i].name, "gtt") == 0) {
      ASSERT_EQ(a.regions[i].total, 2097152ull);
    }
  }
  /* xe: cycles against total cycles, 1e6 / 4e6. */
  parse_file("fdinfo/xe-a", &a);
  parse_file("fdinfo/xe-b", &b);
  ASSERT_NEAR(pct(&a, &b, "rcs"), 25.0, 1e-9);
  ASSERT_NEAR(pct(&a, &b, "ccs"), 0.0, 1e-9);
  /* panfrost: cycles against maxfreq, 4e7 / (0.5 s x 8e8 Hz). */
  parse_file("fdinfo/panfrost-a", &a);
  parse_file("fdinfo/panfrost-b", &b);
  ASSERT_NEAR(pct(&a, &b, "fragment"), 10.0, 1e-9);
  /* Not a DRM file; no second reading. */
  ASSERT(!gp__fdinfo_parse("pos:\t0\nflags:\t02\n", &a));
  ASSERT(gp__fdinfo_busy_pct(NULL, &b.engines[0], 1) < 0);
}

TEST(drm_fdinfo_clients_and_cards) {
  char root[512];
  data("v3d", root, sizeof(root));
  setenv("GPUPERF_SYSROOT", root, 1);
  /* fds 5 and 9 are one client (7); fd 3 is not DRM. */
  gp__fdinfo f[8];
  ASSERT_EQ(gp__fdinfo_read_pid("self", f, 8), 1);
  ASSERT_EQ(f[0].client_id, 7);
  ASSERT_EQ(gp__fdinfo_read_pid("4242", f, 8), 1);
  ASSERT_EQ(f[0].client_id, 12);
  ASSERT_EQ(gp__fdinfo_read_pid("999999", f, 8), 0);

  gp__drm_card c[4];
  gp__drm_reading r;
  ASSERT_EQ(gp__drm_cards(c, 4), 1);
  ASSERT_STR_EQ(c[0].name, "card1");
  ASSERT_STR_EQ(c[0].driver, "v3d");
  ASSERT_STR_EQ(c[0].pdev, "fec00000.v3d"); /* device -> platform device */
  gp__drm_card_read(&c[0], &r);
  ASSERT_NEAR(r.freq_mhz, 500.0, 1e-9); /* devfreq cur_freq in Hz */
  ASSERT(isnan(r.power_w) && isnan(r.vram_used));

  setenv("GPUPERF_SYSROOT", data("amdgpu", root, sizeof(root)), 1);
  ASSERT_EQ(gp__drm_cards(c, 4), 1); /* card0-DP-1 is a connector */
  ASSERT_STR_EQ(c[0].driver, "amdgpu");
  ASSERT_STR_EQ(c[0].pdev, "0000:03:00.0");
  gp__drm_card_read(&c[0], &r);
  ASSERT_NEAR(r.freq_mhz, 2575.0, 1e-9); /* the pp_dpm_sclk level with '*' */
  ASSERT_NEAR(r.power_w, 187.0, 1e-9);   /* power1_average, microwatts */
  ASSERT_NEAR(r.temp_c, 61.0, 1e-9);     /* temp1_input, millidegrees */
  ASSERT_NEAR(r.fan_rpm, 1450.0, 1e-9);
  ASSERT_NEAR(r.vram_used, 1073741824.0, 0);
  ASSERT_NEAR(r.vram_total, 17163091968.0, 0);

  setenv("GPUPERF_SYSROOT", data("i915", root, sizeof(root)), 1);
  ASSERT_EQ(gp__drm_cards(c, 4), 1);
  gp__drm_card_read(&c[0], &r);
  ASSERT_NEAR(r.freq_mhz, 1150.0, 1e-9); /* gt_cur_freq_mhz */
  ASSERT_NEAR(r.power_w, 15.5, 1e-9);    /* power1_input, no average */
  ASSERT(isnan(r.temp_c));
}

#if HAVE_TP

/* Records the OpenCL sample with GPUPERF_SYSROOT=<fixture> and counters
 * `events`; returns the trace, opened. */
static gp_tp *record_on(const char *fixture, const char *events) {
  ocl_env();
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  static char sample[512], root[512], env[600];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  data(fixture, root, sizeof(root));
  char *abs = realpath(root, NULL);
  snprintf(env, sizeof(env), "GPUPERF_SYSROOT=%s", abs);
  free(abs);
  const char *trace = gp_test_path(0, "drm.pftrace");
  char *argv[] = {(char *)cli,    "record", "-q",   "-o", (char *)trace, "-e",
                  (char *)events, "--",     sample, "-n", "2",           NULL};
  char *envv[] = {env, NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, envv, 180, &out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d:\n%s", rc,
                 err ? err : "");
  free(out);
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  return tp;
}

/* The value the counter track `name` of the DRM GPU has all along. */
static void expect_track(gp_tp *tp, const char *name, double want) {
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM counter c JOIN gpu_counter_track t ON "
           "t.id = c.track_id JOIN gpu g ON g.id = t.ugpu WHERE t.name = '%s' "
           "AND g.name LIKE 'DRM card%%'",
           name);
  int64_t n = tp_int(tp, sql);
  if (n < 2)
    gp_test_fail(__FILE__, __LINE__, "track %s: %lld samples", name,
                 (long long)n);
  /* Every window but the importer's last row (0) holds the reading. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM counter c JOIN gpu_counter_track t ON "
           "t.id = c.track_id WHERE t.name = '%s' AND abs(c.value - %.17g) > "
           "1e-6 * abs(%.17g)",
           name, want, want);
  ASSERT_LE(tp_int(tp, sql), 1);
  printf("  %-24s %lld samples of %g\n", name, (long long)n, want);
}

TEST(drm_sysfs_values_reach_gpu_counter_track) {
  gp_tp *tp = record_on(
      "amdgpu", "gpu-frequency,power,temperature,fan,vram-used,engine-gfx*");
  expect_track(tp, "gpu-frequency", 2575);
  expect_track(tp, "power", 187);
  expect_track(tp, "temperature", 61);
  expect_track(tp, "fan", 1450);
  expect_track(tp, "vram-used", 1073741824.0);
  expect_track(tp, "engine-gfx-busy", 0);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu WHERE name = 'DRM card0 "
                       "(amdgpu)'"),
            1);
  /* The same readings in Perfetto's dedicated packets: gpufreq (kHz) and
   * the card's global GPU Memory track. */
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track t "
                       "ON t.id = c.track_id WHERE t.type = 'gpu_frequency' "
                       "AND c.value = 2575000"),
            1);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track t "
                       "ON t.id = c.track_id WHERE t.type = 'gpu_memory' "
                       "AND c.value != 1073741824"),
            0);
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track t "
                       "ON t.id = c.track_id WHERE t.type = 'gpu_memory'"),
            1);
  gp_tp_close(tp);
  tp = record_on("i915", "gpu-frequency,power");
  expect_track(tp, "gpu-frequency", 1150);
  expect_track(tp, "power", 15.5);
  gp_tp_close(tp);
}

TEST(drm_v3d_engines_are_tracks) {
  gp_tp *tp = record_on("v3d", "gpu-frequency,engine-*");
  expect_track(tp, "gpu-frequency", 500);
  const char *v3d[] = {"bin", "render", "tfu", "csd", "cache_clean"};
  for (int i = 0; i < 5; i++) {
    char name[64];
    snprintf(name, sizeof(name), "engine-%s-busy", v3d[i]);
    expect_track(tp, name, 0); /* the fixture's clients do not move */
  }
  gp_tp_close(tp);
}

#else

TEST(drm_sysfs_values_reach_gpu_counter_track) {
  SKIP("built without the trace processor");
}

TEST(drm_v3d_engines_are_tracks) {
  SKIP("built without the trace processor");
}

#endif
