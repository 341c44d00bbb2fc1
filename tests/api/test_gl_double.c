/*
 * test_gl_double.c - the GL_AMD_performance_monitor test double
 * (tests/gl/amdpm_double.c) against a GL program written from the
 * extension's specification (tests/gl/amdpm_client.c), on llvmpipe
 * through EGL's surfaceless platform. The expectations come from the
 * specification (errors, result layout), the V3D seed (names), the
 * kernel's counter table and the client's own geometry (triangles drawn,
 * pixels covered), never from the double.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters/countersInt.h"
#include "harness.h"

extern const gp__counter_def gp__v3d42_counters[87];

#define SCISSOR 64 /* the client's scissor box, pixels a side */
#define N1 10
#define N2 25

/* The path of a build output, or a skip saying why it is missing. */
static const char *built(const char *name, char *buf, size_t size) {
  const char *build = getenv("GPUPERF_BUILD");
  if (!build || !*build)
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  snprintf(buf, size, "%s/tests/%s", build, name);
  if (access(buf, R_OK) != 0)
    SKIP("%s was not built (libgl-dev, libegl-dev missing)", name);
  return buf;
}

/* Runs cmd through the shell, its stderr into a file of the test's, and
 * returns its standard output (malloc'd). Exit status 77 is a skip, with
 * the reason the program gave; any other but 0 fails the test. */
static char *run(const char *cmd) {
  const char *err = gp_test_path(0, "stderr");
  char full[4096];
  snprintf(full, sizeof(full), "%s 2>'%s'", cmd, err);
  setenv("LIBGL_ALWAYS_SOFTWARE", "1", 1);
  FILE *p = popen(full, "r");
  ASSERT_NOT_NULL(p);
  size_t cap = 1 << 16, len = 0, got;
  char *out = malloc(cap);
  ASSERT_NOT_NULL(out);
  while ((got = fread(out + len, 1, cap - 1 - len, p)) > 0) {
    len += got;
    if (len == cap - 1) {
      cap *= 2;
      out = realloc(out, cap);
      ASSERT_NOT_NULL(out);
    }
  }
  out[len] = '\0';
  int status = pclose(p);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    char why[256] = "the program cannot make a GL context here";
    FILE *e = fopen(err, "r");
    if (e) {
      if (fgets(why, sizeof(why), e))
        why[strcspn(why, "\n")] = '\0';
      fclose(e);
    }
    SKIP("%s", why);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: exit status 0x%x:\n%s", cmd, status,
                 out);
  return out;
}

/* Runs the client, with the double preloaded or not. */
static char *run_client(int preload) {
  char client[512], lib[512], cmd[2048];
  built("gl-amdpm-client", client, sizeof(client));
  built("libgl-amdpm-double.so", lib, sizeof(lib));
  snprintf(cmd, sizeof(cmd), "%s%s%s'%s' %d %d", preload ? "LD_PRELOAD='" : "",
           preload ? lib : "", preload ? "' " : "", client, N1, N2);
  return run(cmd);
}

/* The value of line "KEY VALUE", or NULL. */
static const char *value(const char *out, const char *key) {
  size_t n = strlen(key);
  for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
    if (!strncmp(l, key, n) && l[n] == ' ')
      return l + n + 1;
  return NULL;
}

/* The number on line KEY; fails the test when there is none. */
static long long num(const char *out, const char *key) {
  const char *v = value(out, key);
  if (!v)
    gp_test_fail(__FILE__, __LINE__, "no \"%s\" in the client's output:\n%s",
                 key, out);
  return strtoll(v, NULL, 0);
}

TEST(gl_double_absent_without_preload) {
  char *out = run_client(0);
  ASSERT_EQ(num(out, "ext_absent"), 1);
  ASSERT_EQ(num(out, "core_ext_index"), -1);
  ASSERT_EQ(num(out, "compat_ext_in_string"), 0);
  free(out);
}

TEST(gl_double_extension_and_entry_points) {
  char *out = run_client(1);
  ASSERT(value(out, "ext_absent") == NULL);
  ASSERT_EQ(num(out, "compat_ext_in_string"), 1);
  /* Core: listed once, last, and counted by GL_NUM_EXTENSIONS. */
  ASSERT_EQ(num(out, "core_ext_index"), num(out, "core_num_extensions") - 1);
  /* Not OpenGL ES (where the context could be made). */
  if (value(out, "es_ext_index"))
    ASSERT_EQ(num(out, "es_ext_index"), -1);
  ASSERT_EQ(num(out, "procs_same_everywhere"), 1);
  ASSERT_EQ(num(out, "other_names_chained"), 1);
  free(out);
}

TEST(gl_double_catalog_is_v3d) {
  char *out = run_client(1);
  ASSERT_EQ(num(out, "counters_total"), 87);
  ASSERT_EQ(num(out, "string_lengths_ok"), 1);
  /* Each counter of the kernel's table, under its category, 64-bit. */
  for (int i = 0; i < 87; i++) {
    const gp_counter_info *c = &gp__v3d42_counters[i].info;
    char line[256];
    snprintf(line, sizeof(line), "counter %d %s %s 0x8bc2 0 %llu\n", i,
             c->category, c->name, 18446744073709551615ull);
    if (!strstr(out, line))
      gp_test_fail(__FILE__, __LINE__, "no \"%.*s\" in:\n%s",
                   (int)strlen(line) - 1, line, out);
  }
  /* One group per category, named by it, none empty. */
  int groups = (int)num(out, "groups"), in_groups = 0;
  for (int g = 0; g < groups; g++) {
    char key[32], name[64];
    int n = 0, max_active = 0;
    snprintf(key, sizeof(key), "group %d", g);
    const char *v = value(out, key);
    ASSERT_NOT_NULL(v);
    ASSERT_EQ(sscanf(v, "%63s %d %d", name, &n, &max_active), 3);
    ASSERT_GT(n, 0);
    ASSERT_EQ(max_active, n < 32 ? n : 32);
    in_groups += n;
  }
  ASSERT_EQ(in_groups, 87);
  /* The names the V3D seed uses, from the seed itself. */
  const char *shared = getenv("GPUPERF_SHARED");
  if (shared && *shared) {
    char path[512];
    static char text[1 << 16];
    snprintf(path, sizeof(path),
             "%s/reference/seeds/v3d-performance-counters.txt", shared);
    FILE *f = fopen(path, "r");
    if (!f) { /* the shared references are not at hand here */
      printf("  %s not at hand: the seed's names not checked\n", path);
      free(out);
      return;
    }
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *hud = strstr(text, "GALLIUM_HUD=L2T");
    ASSERT_NOT_NULL(hud);
    hud += strlen("GALLIUM_HUD=");
    hud[strcspn(hud, " \n")] = '\0';
    int names = 0;
    for (char *s = strtok(hud, ","); s; s = strtok(NULL, ","), names++) {
      char want[128];
      snprintf(want, sizeof(want), " %s 0x8bc2", s);
      if (!strstr(out, want))
        gp_test_fail(__FILE__, __LINE__, "the seed's %s is not listed", s);
    }
    ASSERT_EQ(names, 3);
  }
  free(out);
}

TEST(gl_double_errors_as_specified) {
  char *out = run_client(1);
  static const char *const invalid_value[] = {
      "err_counters_bad_group",         "err_group_string_bad_group",
      "err_counter_string_bad_counter", "err_counter_info_bad_counter",
      "err_counter_info_bad_group",     "err_select_bad_monitor",
      "err_select_bad_group",           "err_select_negative_count",
      "err_delete_bad_monitor"};
  static const char *const invalid_operation[] = {
      "err_end_not_started",    "err_data_null",
      "err_begin_while_active", "err_end_other_than_active",
      "err_begin_too_many",     "err_begin_target_busy",
      "err_end_straddled",      "err_end_query_not_begun"};
  for (size_t i = 0; i < sizeof(invalid_value) / sizeof(*invalid_value); i++)
    if (num(out, invalid_value[i]) != 0x501)
      gp_test_fail(__FILE__, __LINE__, "%s: 0x%llx, not GL_INVALID_VALUE",
                   invalid_value[i], num(out, invalid_value[i]));
  for (size_t i = 0; i < sizeof(invalid_operation) / sizeof(*invalid_operation);
       i++)
    if (num(out, invalid_operation[i]) != 0x502)
      gp_test_fail(__FILE__, __LINE__, "%s: 0x%llx, not INVALID_OPERATION",
                   invalid_operation[i], num(out, invalid_operation[i]));
  /* Correct calls leave no error behind. */
  ASSERT_EQ(num(out, "selected_for_too_many"), 33);
  ASSERT_EQ(num(out, "err_end_active"), 0);
  ASSERT_EQ(num(out, "err_select_many"), 0);
  ASSERT_EQ(num(out, "err_delete_ok"), 0);
  /* The program's straddling query was its own to end; the monitor that
   * it straddled has no result rather than a wrong one. */
  ASSERT_EQ(num(out, "err_own_query_after_straddle"), 0);
  ASSERT_EQ(num(out, "straddled_size"), 0);
  ASSERT_EQ(num(out, "err_end_after_not_begun"), 0);
  ASSERT_EQ(num(out, "final_error"), 0);
  free(out);
}

/* One monitor's figures against the geometry the client drew. */
static void check_monitor(const char *out, const char *tag, int triangles) {
  char key[128];
#define K(suffix) (snprintf(key, sizeof(key), "%s.%s", tag, suffix), key)
  ASSERT_EQ(num(out, K("error")), 0);
  ASSERT_EQ(num(out, K("size_before")), 0);
  ASSERT_EQ(num(out, K("available_before")), 0);
  /* Six counters selected, 16 bytes each (group, counter, 64-bit). */
  ASSERT_EQ(num(out, K("size")), 6 * 16);
  ASSERT_EQ(num(out, K("available")), 1);
  ASSERT_EQ(num(out, K("bytes_written")), 6 * 16);
  ASSERT_EQ(num(out, K("bytes_written_short")), 2 * 16);
  /* Triangles drawn, and each covers the whole scissor box: 2x2 quads. */
  ASSERT_EQ(num(out, K("PTB-primitives-binned")), triangles);
  ASSERT_EQ(num(out, K("FEP-valid-primitives-rendered-pixels")), triangles);
  ASSERT_EQ(num(out, K("TLB-quads-passing-z-and-stencil-test")),
            triangles * (SCISSOR * SCISSOR / 4));
  ASSERT_EQ(num(out, K("L2T-CLE-reads")), 3 * triangles);
  ASSERT_EQ(num(out, K("QPU-total-idle-clk-cycles")), 0);
  ASSERT_EQ(num(out, K("L2T-CLE-reads.type")), 0x8bc2);
  /* The monitor's time (500 MHz) holds the client's own stamps. */
  long long cycles = num(out, K("cycle-count"));
  ASSERT_GE(2 * cycles + 1, num(out, K("inner_ns")));
  /* A new selection forgets the result. */
  ASSERT_EQ(num(out, K("size_after_select")), 0);
  ASSERT_EQ(num(out, K("available_after_select")), 0);
  printf("  %s: %d triangles -> primitives %lld, quads %lld, CLE reads "
         "%lld, cycles %lld; available after %lld frames%s\n",
         tag, triangles, num(out, K("PTB-primitives-binned")),
         num(out, K("TLB-quads-passing-z-and-stencil-test")),
         num(out, K("L2T-CLE-reads")), cycles,
         num(out, K("frames_until_available")),
         num(out, K("needed_finish")) ? " and glFinish" : "");
#undef K
}

TEST(gl_double_monitor_values) {
  char *out = run_client(1);
  ASSERT_EQ(num(out, "done"), 1);
  check_monitor(out, "a", N1);
  check_monitor(out, "b", N2);
  /* b's middle 5 triangles were inside the program's own queries of the
   * targets the monitor counts: both count them whole. */
  ASSERT_EQ(num(out, "b.own_prims"), 5);
  ASSERT_EQ(num(out, "b.own_frags"), 5 * SCISSOR * SCISSOR);
  free(out);
}

/* The extension's token in the three lists of glxinfo's output: core,
 * compatibility, ES (a program not ours, through GLX under Xvfb). */
static void glxinfo_counts(const char *out, int count[3]) {
  static const char *const heads[3] = {"OpenGL core profile version string",
                                       "OpenGL version string",
                                       "OpenGL ES profile version string"};
  count[0] = count[1] = count[2] = 0;
  for (const char *p = out; (p = strstr(p, "GL_AMD_performance_monitor"));
       p++) {
    int section = -1;
    for (int h = 0; h < 3; h++) {
      const char *at = strstr(out, heads[h]);
      if (at && at < p && (section < 0 || at > strstr(out, heads[section])))
        section = h;
    }
    ASSERT_GE(section, 0);
    count[section]++;
  }
}

TEST(gl_double_glxinfo_lists_it) {
  char lib[512], cmd[1024];
  built("libgl-amdpm-double.so", lib, sizeof(lib));
  if (system("command -v xvfb-run >/dev/null && command -v glxinfo "
             ">/dev/null") != 0)
    SKIP("xvfb-run or glxinfo is not installed (Debian xvfb, mesa-utils)");
  int with[3], without[3];
  snprintf(cmd, sizeof(cmd), "xvfb-run -a env LD_PRELOAD='%s' glxinfo", lib);
  char *out = run(cmd);
  if (!strstr(out, "OpenGL core profile version string"))
    SKIP("glxinfo found no OpenGL under Xvfb");
  glxinfo_counts(out, with);
  free(out);
  out = run("xvfb-run -a glxinfo");
  glxinfo_counts(out, without);
  free(out);
  ASSERT_EQ(without[0] + without[1] + without[2], 0);
  ASSERT_EQ(with[0], 1);
  ASSERT_EQ(with[1], 1);
  ASSERT_EQ(with[2], 0);
}

/* The count on line KEY of file path, or -1. */
static long long file_num(const char *path, const char *key) {
  FILE *f = fopen(path, "r");
  char line[128];
  long long v = -1;
  size_t n = strlen(key);
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, key, n) && line[n] == ' ')
      v = strtoll(line + n + 1, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

/* With another interposer before and after it in LD_PRELOAD: the client
 * still sees the extension and right values, and the other still sees
 * the client's calls (and, after the double, the double's own too). */
TEST(gl_double_with_another_interposer) {
  char client[512], lib[512], tap[512], cmd[2048];
  built("gl-amdpm-client", client, sizeof(client));
  built("libgl-amdpm-double.so", lib, sizeof(lib));
  built("libgl-tap.so", tap, sizeof(tap));
  const char *counts = gp_test_path(1, "tap.txt");
  for (int tap_first = 1; tap_first >= 0; tap_first--) {
    remove(counts);
    snprintf(cmd, sizeof(cmd), "GLTAP_OUT='%s' LD_PRELOAD='%s:%s' '%s' %d %d",
             counts, tap_first ? tap : lib, tap_first ? lib : tap, client, N1,
             N2);
    char *out = run(cmd);
    ASSERT_EQ(num(out, "done"), 1);
    ASSERT_EQ(num(out, "procs_same_everywhere"), 1);
    ASSERT_EQ(num(out, "other_names_chained"), 1);
    check_monitor(out, "a", N1);
    check_monitor(out, "b", N2);
    ASSERT_EQ(num(out, "b.own_prims"), 5);
    long long client_begins = num(out, "client_begin_queries");
    long long seen = file_num(counts, "glBeginQuery");
    ASSERT_GT(client_begins, 0);
    if (tap_first)
      ASSERT_EQ(seen, client_begins);
    else
      ASSERT_GT(seen, client_begins); /* the double's own queries too */
    ASSERT_GT(file_num(counts, "glGetString"), 0);
    free(out);
  }
}

/* A program that opens libEGL itself (RTLD_LOCAL) and links no GL
 * library, out of the double's RTLD_NEXT: the double finds the driver
 * among the loaded libraries and still adds the extension. */
TEST(gl_double_libegl_opened_locally) {
  char probe[512], lib[512], cmd[2048];
  built("gl-local-probe", probe, sizeof(probe));
  built("libgl-amdpm-double.so", lib, sizeof(lib));
  snprintf(cmd, sizeof(cmd), "'%s'", probe);
  char *out = run(cmd);
  ASSERT_EQ(num(out, "ext_index"), -1);
  free(out);
  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s' '%s'", lib, probe);
  out = run(cmd);
  ASSERT_EQ(num(out, "global_gpa_is_libegl"), 0);
  ASSERT(strncmp(value(out, "renderer"), "(null)", 6) != 0);
  ASSERT_EQ(num(out, "ext_index"), num(out, "num_extensions") - 1);
  ASSERT_EQ(num(out, "groups"), 12);
  free(out);
}

/* The callback API through libgpuperf-gl.so (tests/gl/cb_probe.c, a
 * program linking libgpuperf.so, on a surfaceless EGL context): every
 * OpenGL API record has its entry and exit callbacks, with its
 * correlation id, call and context, and the subscriber's data carried
 * from one to the other. */
TEST(opengl_callbacks_match_records) {
#if GP_TEST_SANITIZED
  SKIP("instrumented libraries cannot be preloaded before the sanitizer's "
       "runtime");
#endif
  char probe[512], lib[1024], cmd[2048];
  built("gl-cb-probe", probe, sizeof(probe));
  snprintf(lib, sizeof(lib), "%s/libgpuperf-gl.so", getenv("GPUPERF_BUILD"));
  if (access(lib, R_OK) != 0)
    SKIP("libgpuperf-gl.so was not built");
  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s' '%s'", lib, probe);
  char *out = run(cmd);
  if (strncmp(out, "ok ", 3) != 0)
    gp_test_fail(__FILE__, __LINE__, "gl-cb-probe: %s", out);
  ASSERT_GE(atoi(out + 3), 5);
  free(out);
}

/* One number from `gpuperf query FILE SQL` (csv, one row, one column). */
static long long query_num(const char *cli, const char *trace,
                           const char *sql) {
  char cmd[2048];
  snprintf(cmd, sizeof(cmd), "'%s' query '%s' \"%s\" --format csv", cli, trace,
           sql);
  char *out = run(cmd);
  const char *row = strchr(out, '\n'); /* after the header */
  if (!row || !row[1])
    gp_test_fail(__FILE__, __LINE__, "%s: no row:\n%s", sql, out);
  long long v = strtoll(row + 1, NULL, 10);
  free(out);
  return v;
}

/* The double through libgpuperf-gl.so (src/backend/opengl): `gpuperf
 * list` shows its groups and counters, and a recording of glxgears gives
 * per-frame counter tracks with the values the double's model predicts
 * from the same frames' pipeline statistics (from a second recording
 * here; test_opengl.c's opengl_amd_counters_per_frame takes both in
 * one). */
TEST(gl_double_through_libgpuperf_gl) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SKIP("instrumented libraries cannot be preloaded before the sanitizer's "
       "runtime");
#endif
  char lib[512], gl[512], cmd[4096];
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  built("libgl-amdpm-double.so", lib, sizeof(lib));
  snprintf(gl, sizeof(gl), "%s/libgpuperf-gl.so", getenv("GPUPERF_BUILD"));
  if (access(gl, R_OK) != 0)
    SKIP("libgpuperf-gl.so was not built");
  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s:%s' '%s' list", gl, lib, cli);
  char *out = run(cmd);
  const char *opengl = strstr(out, "\nOpenGL");
  ASSERT_NOT_NULL(opengl);
  ASSERT(strstr(opengl, "GL_AMD_performance_monitor group L2T") != NULL);
  ASSERT(strstr(opengl, "L2T-CLE-reads") != NULL);
  ASSERT(strstr(opengl, "TLB-quads-passing-z-and-stencil-test") != NULL);
  free(out);

  if (system("command -v xvfb-run >/dev/null && command -v glxgears "
             ">/dev/null") != 0)
    SKIP("xvfb-run or glxgears is not installed (Debian xvfb, mesa-utils)");
  const char *amd = gp_test_path(1, "amd.pftrace");
  const char *ia = gp_test_path(2, "ia.pftrace");
  snprintf(cmd, sizeof(cmd),
           "xvfb-run -a env LD_PRELOAD='%s' '%s' record -q -e "
           "L2T-CLE-reads,PTB-primitives-binned -o '%s' -- timeout -s INT 3 "
           "glxgears >/dev/null; "
           "xvfb-run -a '%s' record -q -e ia_vertices,ia_primitives -o '%s' "
           "-- timeout -s INT 3 glxgears >/dev/null; true",
           lib, cli, amd, cli, ia);
  free(run(cmd));
#define PER_FRAME(file, name, what)                                            \
  query_num(cli, file,                                                         \
            "SELECT " what "(c.value) FROM counter c JOIN counter_track t "    \
            "ON c.track_id = t.id WHERE t.name = '" name "'")
  long long frames = PER_FRAME(amd, "L2T-CLE-reads", "count");
  ASSERT_GT(frames, 10);
  ASSERT_EQ(PER_FRAME(amd, "PTB-primitives-binned", "count"), frames);
  /* glxgears submits the same geometry every frame. */
  long long vertices = PER_FRAME(ia, "ia_vertices", "max");
  long long primitives = PER_FRAME(ia, "ia_primitives", "max");
  ASSERT_GT(vertices, 0);
  ASSERT_EQ(PER_FRAME(ia, "ia_vertices", "min"), vertices);
  ASSERT_EQ(PER_FRAME(amd, "L2T-CLE-reads", "min"), vertices);
  ASSERT_EQ(PER_FRAME(amd, "L2T-CLE-reads", "max"), vertices);
  ASSERT_EQ(PER_FRAME(amd, "PTB-primitives-binned", "min"), primitives);
  ASSERT_EQ(PER_FRAME(amd, "PTB-primitives-binned", "max"), primitives);
  printf("  glxgears: %lld frames, L2T-CLE-reads %lld (ia_vertices %lld), "
         "PTB-primitives-binned %lld (ia_primitives %lld) per frame\n",
         frames, PER_FRAME(amd, "L2T-CLE-reads", "max"), vertices,
         PER_FRAME(amd, "PTB-primitives-binned", "max"), primitives);
#undef PER_FRAME
}

/* The GL_INTEL_performance_query double (libgl-intelpq-double.so) under
 * libgpuperf-gl.so: `gpuperf list` shows its query types (the V3D
 * categories) as groups and their counters. With both doubles preloaded
 * (a context with both extensions) the AMD extension is the one
 * forwarded, and the Intel one is not listed. */
TEST(gl_intel_double_through_libgpuperf_gl) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SKIP("instrumented libraries cannot be preloaded before the sanitizer's "
       "runtime");
#endif
  char intel[512], amd[512], gl[512], cmd[4096];
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  built("libgl-intelpq-double.so", intel, sizeof(intel));
  built("libgl-amdpm-double.so", amd, sizeof(amd));
  snprintf(gl, sizeof(gl), "%s/libgpuperf-gl.so", getenv("GPUPERF_BUILD"));
  if (access(gl, R_OK) != 0)
    SKIP("libgpuperf-gl.so was not built");
  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s:%s' '%s' list", gl, intel, cli);
  char *out = run(cmd);
  const char *opengl = strstr(out, "\nOpenGL");
  ASSERT_NOT_NULL(opengl);
  static const char *const groups[] = {"FEP",  "TLB", "PTB", "QPU",
                                       "TMU",  "VPM", "CLE", "L2T",
                                       "CORE", "AXI", "PSE", "GMP"};
  for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
    char want[128];
    snprintf(want, sizeof(want),
             "GL_INTEL_performance_query group %s):", groups[g]);
    ASSERT(strstr(opengl, want) != NULL);
  }
  ASSERT(strstr(opengl, "L2T-CLE-reads") != NULL);
  ASSERT(strstr(opengl, "TLB-quads-passing-z-and-stencil-test") != NULL);
  ASSERT(strstr(opengl, "GL_AMD_performance_monitor") == NULL);
  free(out);

  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s:%s:%s' '%s' list", gl, amd, intel,
           cli);
  out = run(cmd);
  opengl = strstr(out, "\nOpenGL");
  ASSERT_NOT_NULL(opengl);
  ASSERT(strstr(opengl, "GL_AMD_performance_monitor group L2T") != NULL);
  ASSERT(strstr(opengl, "GL_INTEL_performance_query") == NULL);
  free(out);
}

/* The rest of line "KEY ...", without its newline (valid until the next
 * call); fails the test when there is none. */
static const char *text(const char *out, const char *key) {
  static char buf[256];
  const char *v = value(out, key);
  if (!v)
    gp_test_fail(__FILE__, __LINE__, "no \"%s\" in the client's output:\n%s",
                 key, out);
  size_t n = strcspn(v, "\n");
  snprintf(buf, sizeof(buf), "%.*s", (int)n, v);
  return buf;
}

/* gl-intelpq-client (tests/gl/intelpq_client.c) with the Intel double:
 * 12 query types (the V3D categories) holding the 87 counters, each
 * counter an 8-byte UINT64 EVENT at its offset; the errors the
 * specification lists; PTB and L2T nested, TLB refused on top (over V3D's
 * 32 counters), as is a second PTB; results not written at once without
 * waiting (bytesWritten 0), written after two more frames of each type
 * (and again when asked again), with the values of the double's model
 * for N triangles over a 64x64 box; and written at once with
 * PERFQUERY_WAIT_INTEL. Without the double, no extension. */
TEST(gl_intel_double_client) {
  char client[512], lib[512], cmd[2048];
  built("gl-intelpq-client", client, sizeof(client));
  built("libgl-intelpq-double.so", lib, sizeof(lib));
  snprintf(cmd, sizeof(cmd), "'%s' %d", client, N1);
  char *out = run(cmd);
  ASSERT_EQ(num(out, "ext_absent"), 1);
  free(out);
  snprintf(cmd, sizeof(cmd), "LD_PRELOAD='%s' '%s' %d", lib, client, N1);
  out = run(cmd);
  ASSERT_EQ(num(out, "done"), 1);
  ASSERT_EQ(num(out, "procs"), 1);
  ASSERT_EQ(num(out, "queries"), 12);
  ASSERT_EQ(num(out, "counters"), 87);
  ASSERT_STR_EQ(text(out, "type.PTB"), "3 56 7 1024 0");
  ASSERT_STR_EQ(text(out, "type.L2T"), "8 176 22 1024 0");
  ASSERT_STR_EQ(text(out, "counter.PTB-primitives-binned"),
                "24 8 0x94f0 0x94f9 0 1");
  ASSERT_STR_EQ(text(out, "counter.L2T-CLE-reads"), "48 8 0x94f0 0x94f9 0 1");
  static const char *const value_errors[] = {
      "err.first_null",   "err.next_null",   "err.by_name_bad", "err.info_bad",
      "err.counter_zero", "err.create_bad",  "err.delete_bad",  "err.begin_bad",
      "err.data_null",    "err.written_null"};
  for (size_t i = 0; i < sizeof(value_errors) / sizeof(value_errors[0]); i++)
    ASSERT_EQ(num(out, value_errors[i]), 0x501);
  ASSERT_STR_EQ(text(out, "err.next_bad"), "0x501 0");
  ASSERT_EQ(num(out, "err.end_not_begun"), 0x502);
  ASSERT_EQ(num(out, "err.none"), 0);
  ASSERT_EQ(num(out, "nested.begin_error"), 0);
  ASSERT_EQ(num(out, "nested.over_32_error"), 0x502);
  ASSERT_EQ(num(out, "nested.same_type_error"), 0x502);
  ASSERT_STR_EQ(text(out, "frame1.written_at_once"), "0 0");
  ASSERT_EQ(num(out, "frame1.ptb_written"), 56);
  ASSERT_EQ(num(out, "frame1.PTB-primitives-binned"), N1);
  ASSERT_EQ(num(out, "frame1.l2t_written"), 176);
  ASSERT_EQ(num(out, "frame1.L2T-CLE-reads"), 3 * N1);
  ASSERT_EQ(num(out, "frame1.l2t_written_again"), 176);
  ASSERT_EQ(num(out, "wait.written"), 88);
  ASSERT_EQ(num(out, "wait.TLB-quads-passing-z-and-stencil-test"),
            N1 * SCISSOR * SCISSOR / 4);
  ASSERT_EQ(num(out, "final_error"), 0);
  free(out);
}
