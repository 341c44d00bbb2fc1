/*
 * test_vulkan_programs.c - `gpuperf record` of Vulkan programs as a user
 * runs them: vkcube under Xvfb (its frames, everything cheap recorded with
 * no config, its own output unchanged by the recording) and a program
 * whose layer is missing (record says so, naming the fix); the sample's
 * shader modules and pipeline stages as MODULE and FUNCTION records; a
 * recorded frame loop as lavapipe's own trace sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/vkutil.h"
#include "harness.h"
#include "opencl/oclutil.h"

#if HAVE_TP
#include "api/derived_check.h"

TEST(vulkan_record_vkcube) {
  vk_env();
  vk_need_vkcube();
  const char *cli = vk_cli_path(false);
  char trace[512];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "cube.pftrace"));
  char *argv[] = {"/usr/bin/xvfb-run",
                  "-a",
                  (char *)cli,
                  "record",
                  "-q",
                  "-o",
                  trace,
                  "--",
                  "vkcube",
                  "--c",
                  "100",
                  NULL};
  char *err = NULL;
  int rc = ocl_run(argv, NULL, 240, NULL, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "xvfb-run gpuperf record vkcube: %d\n%s",
                 rc, err ? err : "");
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  /* 100 frames: a render pass and a present each. */
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass'", 100);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'vkQueuePresentKHR'", 100);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass' AND "
       "render_pass != 0 AND render_target != 0 AND dur > 0",
       100);
  Q_NO_LOSS(tp);
  /* Everything cheap, with no config: API calls, memory, Utilization, and
   * the device as it is. */
  Q_EQ(tp, "SELECT count(*) > 0 FROM slice WHERE name = 'vkQueueSubmit'", 1);
  Q_EQ(tp, "SELECT count(*) > 0 FROM vulkan_memory_allocations", 1);
  Q_EQ(tp,
       "SELECT count(*) > 0 FROM counter c JOIN gpu_counter_track t ON "
       "c.track_id = t.id WHERE t.name = 'Utilization'",
       1);
  vk_check_gpu_info(tp);
  /* Utilization against the frames' own GPU times: every window, and the
   * time-weighted mean within a point of the busy share of the slices. */
  int64_t ugpu = tp_int(tp, "SELECT id FROM gpu WHERE name GLOB 'llvmpipe*'");
  size_t n = 0;
  free(derived_check_windows(tp, ugpu, &n));
  gp_tp_close(tp);
}

/* The output of vkcube with its validation messages, handles (which
 * differ from run to run) written as "0x?", without the lines of
 * xvfb-run itself (it sometimes fails to clean up its directory). */
static char *vkcube_output(const char *cli, const char *trace) {
  char *argv[16] = {"/usr/bin/xvfb-run", "-a"};
  int n = 2;
  if (cli) {
    argv[n++] = (char *)cli;
    argv[n++] = "record";
    argv[n++] = "-q";
    argv[n++] = "-o";
    argv[n++] = (char *)trace;
    argv[n++] = "--";
  }
  argv[n++] = "vkcube";
  argv[n++] = "--c";
  argv[n++] = "20";
  argv[n++] = "--validate";
  argv[n++] = "--force_errors";
  argv[n] = NULL;
  char *out = NULL, *err = NULL;
  ocl_run(argv, NULL, 240, &out, &err);
  size_t len = strlen(out) + strlen(err) + 2;
  char *all = malloc(len), *w = all;
  ASSERT_NOT_NULL(all);
  snprintf(all, len, "%s\n%s", out, err);
  for (const char *p = all; *p;) {
    if ((p == all || p[-1] == '\n') && strncmp(p, "xvfb-run:", 9) == 0) {
      const char *nl = strchr(p, '\n');
      p = nl ? nl + 1 : p + strlen(p);
      continue;
    }
    if (p[0] == '0' && p[1] == 'x') {
      p += 2;
      while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
        p++;
      memcpy(w, "0x?", 3);
      w += 3;
    } else {
      *w++ = *p++;
    }
  }
  *w = '\0';
  free(out);
  free(err);
  return all;
}

/* vkcube --validate prints what the validation layer tells its debug
 * callback: recorded, not a line of it changes (the loader adds nothing),
 * and the two errors --force_errors makes are in the GPU log. */
TEST(vulkan_vkcube_output_unchanged) {
  vk_env();
  vk_need_vkcube();
  if (access(VALIDATION_MANIFEST, R_OK) != 0)
    SKIP("the Khronos validation layer is not installed "
         "(Debian vulkan-validationlayers)");
  const char *cli = vk_cli_path(false);
  char trace[512];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "cube.pftrace"));
  char *plain = vkcube_output(NULL, NULL);
  char *recorded = vkcube_output(cli, trace);
  ASSERT(strstr(plain, "VUID-") != NULL); /* it did print its errors */
  ASSERT_STR_EQ(recorded, plain);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  Q_EQ(tp,
       "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id "
       "WHERE t.name = 'GPU Log' AND s.name = 'ERROR'",
       2);
  gp_tp_close(tp);
  free(plain);
  free(recorded);
}

/* A Vulkan program recorded by a gpuperf whose layer is not there (not
 * built beside its libgpuperf, or not where GPUPERF_VULKAN_LAYER_DIR
 * says): record says so before the program runs, and again when nothing
 * was recorded, naming the fix. */
TEST(vulkan_record_says_layer_missing) {
  vk_env();
  char sample[512], lib[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  const char *cli = vk_cli_path(false);
  vk_built("libgpuperf.so", lib, sizeof(lib));
  /* A CLI with its libgpuperf and nothing else: as a build without
   * libvulkan-dev leaves it. */
  const char *dir = gp_test_path(1, "bare");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "mkdir -p '%s' && cp '%s' '%s/' && cp '%s' '%s/' && "
           "ln -sf libgpuperf.so '%s/libgpuperf.so.0'",
           dir, cli, dir, lib, dir, dir);
  ASSERT_EQ(system(cmd), 0);
  char bare[600];
  snprintf(bare, sizeof(bare), "%s/gpuperf", dir);
  char *trace = strdup(gp_test_path(0, "t.pftrace"));
  for (int env = 0; env < 2; env++) {
    char *argv[] = {
        env ? (char *)cli : bare, "record", "-o", trace, "--", sample, NULL};
    char *envv[] = {env ? "GPUPERF_VULKAN_LAYER_DIR=/nonexistent" : NULL, NULL};
    char *out = NULL, *err = NULL;
    int rc = ocl_run(argv, envv, 120, &out, &err);
    if (rc == 3)
      SKIP("no Vulkan device");
    ASSERT_EQ(rc, 0);
    const char *want = env ? "GPUPERF_VULKAN_LAYER_DIR=/nonexistent has no "
                             "vulkan/implicit_layer.d/gpuperf_layer.json"
                           : "Vulkan layer (libgpuperf-vulkan.so) is not built";
    char first[600];
    snprintf(first, sizeof(first),
             "gpuperf record: warning: '%s' uses Vulkan, but its Vulkan work "
             "will not be recorded: ",
             sample);
    if (!strstr(err, first) || !strstr(err, want) ||
        (!env && !strstr(err, "install libvulkan-dev")))
      gp_test_fail(__FILE__, __LINE__, "want '%s' and '%s' in:\n%s", first,
                   want, err);
    ASSERT(strstr(err, "nothing was recorded; gpuperf's Vulkan layer") != NULL);
    free(out);
    free(err);
  }
  free(trace);
}

/* The sample's trace read by Perfetto's own trace processor: the stages,
 * the VkQueueSubmit events, their args, flows and tracks are the rows
 * that it gives (the tp_parity_* queries), where GPUPERF_PERFETTO_TP names
 * it. */
TEST(vulkan_sample_parity_with_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || access(shell, X_OK) != 0)
    SKIP("GPUPERF_PERFETTO_TP does not name Perfetto's "
         "trace_processor_shell");
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, NULL, &out);
  ASSERT(strstr(out, "sample: ok ") != NULL);
  tp_parity_compare(shell, tp, gp_test_path(0, "trace.pftrace"));
  gp_tp_close(tp);
  free(out);
}

/* The SPIR-V size of shader file name (tests/vulkan/shaders/), compiled
 * here by glslangValidator as the build compiled it; -1 if it cannot be. */
static long spirv_size(const char *name) {
  char out[600], cmd[1400];
  snprintf(out, sizeof(out), "%s/%s.spv", gp_test_path(0, ""), name);
  snprintf(cmd, sizeof(cmd),
           "glslangValidator -s -V -o '%s' '%s/tests/vulkan/shaders/%s' "
           ">/dev/null 2>&1",
           out, getenv("GPUPERF_SRC") ? getenv("GPUPERF_SRC") : ".", name);
  if (system(cmd) != 0)
    return -1;
  FILE *f = fopen(out, "rb");
  if (!f)
    return -1;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fclose(f);
  return n;
}

/* The sample's three shader modules are modules of the sizes their
 * SPIR-V has (compiled again here, not read from the layer), each
 * unloaded when the sample destroys it; its two pipelines' three stages
 * are functions named by their entry points, of those modules. */
TEST(vulkan_shader_modules_are_modules) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  static const char *const shaders[] = {"sample.vert", "sample.frag",
                                        "sample.comp"};
  long size[3];
  for (int i = 0; i < 3; i++)
    if ((size[i] = spirv_size(shaders[i])) <= 0)
      SKIP("glslangValidator cannot compile tests/vulkan/shaders/%s (run "
           "from the source tree, or set GPUPERF_SRC)",
           shaders[i]);
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp =
      vk_record(cmd,
                "data_sources { config { name: \"gpu.renderstages\" } }\n"
                "gpuperf_options { code_objects: true }\n",
                &out);
  ASSERT(strstr(out, "sample: ok ") != NULL);
  static const char arg[] = "(SELECT int_value FROM args a WHERE "
                            "a.arg_set_id = s.arg_set_id AND a.key = ";
  char sql[1024];
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'GPU module load'", 3);
  for (int i = 0; i < 3; i++) {
    int same = 0;
    for (int j = 0; j < 3; j++)
      same += size[j] == size[i];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM slice s WHERE s.name = 'GPU module load' "
             "AND %s'debug.size_bytes') = %ld",
             arg, size[i]);
    Q_EQ(tp, sql, same);
  }
  /* Each unloaded, after its load. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM slice s JOIN slice u ON u.name = 'GPU "
           "module unload' AND %s'debug.module_id') = (SELECT int_value FROM "
           "args b WHERE b.arg_set_id = u.arg_set_id AND b.key = "
           "'debug.module_id') AND u.ts >= s.ts WHERE s.name = 'GPU module "
           "load'",
           arg);
  Q_EQ(tp, sql, 3);
  /* The stages: two of the graphics pipeline (indexes 0 and 1), one of
   * the compute pipeline, each of a module loaded, named "main". */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM slice s WHERE s.name = 'GPU function' AND "
           "(SELECT display_value FROM args a WHERE a.arg_set_id = "
           "s.arg_set_id AND a.key = 'debug.name') = 'main' AND "
           "%s'debug.module_id') IN (SELECT int_value FROM args b JOIN slice "
           "l ON l.arg_set_id = b.arg_set_id WHERE l.name = 'GPU module "
           "load' AND b.key = 'debug.module_id')",
           arg);
  Q_EQ(tp, sql, 3);
  snprintf(sql, sizeof(sql),
           "SELECT sum(%s'debug.function_index')) FROM slice s WHERE s.name "
           "= 'GPU function'",
           arg);
  Q_EQ(tp, sql, 1);
  gp_tp_close(tp);
  free(out);
}

/* How often lavapipe flushed its work, as Gallium's own trace of the
 * driver (GALLIUM_TRACE=path) counts the calls of pipe_context::flush;
 * -1 if there is no such trace. */
static long driver_flushes(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  long n = 0;
  char line[4096];
  while (fgets(line, sizeof(line), f))
    n += strstr(line, "method='flush'") != NULL;
  fclose(f);
  return n;
}

/* A recorded frame loop makes lavapipe do what it does unrecorded, as the
 * driver's own trace counts it, whether its frames are recorded with
 * ONE_TIME_SUBMIT (a render pass each) or SIMULTANEOUS_USE (vkmark's
 * clear: a clear between two barriers). Lavapipe skips a command
 * buffer's first pipeline barrier (a render pass begins with one) and its
 * last; any other it runs as a flush and a wait for the work before. The
 * layer's reset and copy at the beginning made the first one run, once a
 * frame (up to a fifth of a loop of render passes' frame rate): they are
 * in a prologue of their own now. A SIMULTANEOUS_USE frame's copy at its
 * end made the last one run: such frames' copies are deferred now, as
 * ONE_TIME_SUBMIT's are. */
static void flushes_as_unrecorded(const char *sample, int simultaneous);

TEST(vulkan_frame_loop_flushes_as_unrecorded) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  for (int simultaneous = 0; simultaneous < 2; simultaneous++)
    flushes_as_unrecorded(sample, simultaneous);
}

/* vulkan_frame_loop_flushes_as_unrecorded for one way of recording the
 * frames: ONE_TIME_SUBMIT, or SIMULTANEOUS_USE (vkmark's). */
static void flushes_as_unrecorded(const char *sample, int simultaneous) {
  char plain[512], traced[512], gt[600];
  char *cmd[] = {(char *)sample, "--frames", "40",
                 simultaneous ? "--simultaneous" : NULL, NULL},
       *out = NULL;
  snprintf(plain, sizeof(plain), "%s", gp_test_path(2, "plain.xml"));
  snprintf(traced, sizeof(traced), "%s", gp_test_path(3, "traced.xml"));
  snprintf(gt, sizeof(gt), "GALLIUM_TRACE=%s", plain);
  char *env[] = {gt, "ASAN_OPTIONS=detect_leaks=0", NULL};
  int rc = ocl_run(cmd, env, 120, NULL, NULL);
  if (rc == 3)
    SKIP("no Vulkan device");
  ASSERT_EQ(rc, 0);
  long before = driver_flushes(plain);
  if (before <= 0)
    SKIP("this Vulkan driver writes no Gallium trace (GALLIUM_TRACE): "
         "lavapipe does");
  setenv("GALLIUM_TRACE", traced, 1);
  gp_tp *tp = vk_record(cmd, NULL, &out);
  unsetenv("GALLIUM_TRACE");
  ASSERT(strstr(out, "sample: frames=40 submits=40\n") != NULL);
  /* (Through Gallium's trace wrapper lavapipe now and then gives a
   * timestamp of 0 as available: that frame is then untimed, readback.c
   * times_hold(), so only the count is asked here.) */
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame'", 40);
  long after = driver_flushes(traced);
  /* (With the layer's first commands in the frame's command buffer:
   * 126 against 86; with a SIMULTANEOUS_USE frame's copy at its end,
   * after its last barrier: 86 against 46. One a frame more, each.) */
  if (after < before || after > before + 2)
    gp_test_fail(__FILE__, __LINE__,
                 "lavapipe flushed %ld times recorded, %ld unrecorded (%s)",
                 after, before,
                 simultaneous ? "SIMULTANEOUS_USE" : "ONE_TIME_SUBMIT");
  gp_tp_close(tp);
  free(out);
}

#else

TEST(vulkan_frame_loop_flushes_as_unrecorded) {
  SKIP("built without the trace processor");
}
TEST(vulkan_shader_modules_are_modules) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_vkcube) {
  SKIP("built without the trace processor");
}
TEST(vulkan_vkcube_output_unchanged) {
  SKIP("built without the trace processor");
}
TEST(vulkan_sample_parity_with_perfetto) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_says_layer_missing) {
  SKIP("built without the trace processor");
}

#endif
