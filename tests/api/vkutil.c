/*
 * vkutil.c - what the Vulkan tests share (test_vulkan.c,
 * test_vulkan_programs.c): lavapipe alone, the build's outputs and CLI,
 * and recording a program into a trace opened for queries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/vkutil.h"
#include "harness.h"
#include "opencl/oclutil.h"

/* See vkutil.h. */
const char *vk_built(const char *name, char *buf, size_t size) {
  if (!ocl_build_path(name, buf, size))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  if (access(buf, X_OK) != 0 && access(buf, R_OK) != 0)
    SKIP("%s was not built (libvulkan-dev or glslang-tools missing)", name);
  return buf;
}

/* See vkutil.h. */
const char *vk_cli_path(bool sample) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if defined(__SANITIZE_ADDRESS__)
  if (!sample)
    SKIP("gpuperf record loads no layer in a sanitizer build");
  char dir[512];
  vk_built("vulkan/gpuperf_layer.json", dir, sizeof(dir));
  *strrchr(dir, '/') = '\0';
  setenv("VK_ADD_LAYER_PATH", dir, 1);
  setenv("VK_INSTANCE_LAYERS", "VK_LAYER_GPUPERF_trace", 1);
  setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* the driver's, not ours */
#else
  (void)sample;
#endif
  return cli;
}

/* See vkutil.h. */
void vk_env(void) {
  /* GPUPERF_TEST_VK_ICD: another driver's ICD manifest (a real GPU's, as
   * scripts run on a lent GPU machine), instead of lavapipe. */
  const char *icd = getenv("GPUPERF_TEST_VK_ICD");
  if (!icd || !*icd)
    icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
  setenv("VK_ICD_FILENAMES", icd, 1);
  setenv("VK_DRIVER_FILES", icd, 1);
  unsetenv("VK_INSTANCE_LAYERS");
  unsetenv("VK_ADD_LAYER_PATH");
  unsetenv("VK_LOADER_DEBUG");
  const char *xdg = gp_test_path(2, "xdg");
  mkdir(xdg, 0700);
  setenv("XDG_RUNTIME_DIR", xdg, 1);
  if (access(icd, R_OK) != 0)
    SKIP("lavapipe is not installed (Debian mesa-vulkan-drivers)");
}

/* See vkutil.h. */
bool vk_on_path(const char *prog) {
  const char *path = getenv("PATH");
  char buf[1024];
  for (const char *p = path; p && *p;) {
    const char *c = strchr(p, ':');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, prog);
    if (access(buf, X_OK) == 0)
      return true;
    p = c ? c + 1 : NULL;
  }
  return false;
}

/* See vkutil.h. */
void vk_need_vkcube(void) {
  if (!vk_on_path("xvfb-run") || !vk_on_path("Xvfb"))
    SKIP("xvfb-run is not installed (Debian xvfb)");
  if (!vk_on_path("vkcube"))
    SKIP("vkcube is not installed (Debian vulkan-tools)");
}

#if HAVE_TP

/* See vkutil.h. */
gp_tp *vk_record_with(char *const *cmd, const char *config, char *const *args,
                      char **out) {
  const char *cli = vk_cli_path(true);
  static char trace[512], cfg[512];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "trace.pftrace"));
  char *argv[32] = {(char *)cli, "record", "-q", "-o", trace};
  int n = 5;
  for (int i = 0; args && args[i] && n < 16; i++)
    argv[n++] = args[i];
  if (config) {
    snprintf(cfg, sizeof(cfg), "%s", gp_test_path(1, "config.txtpb"));
    FILE *f = fopen(cfg, "w");
    ASSERT_NOT_NULL(f);
    fputs(config, f);
    fclose(f);
    argv[n++] = "-c";
    argv[n++] = cfg;
  }
  argv[n++] = "--";
  for (int i = 0; cmd[i] && n < 31; i++)
    argv[n++] = cmd[i];
  argv[n] = NULL;
  char *err = NULL;
  int rc = ocl_run(argv, NULL, 240, out, &err);
  if (rc == 3)
    SKIP("no Vulkan device");
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d:\n%s", rc,
                 err ? err : "");
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  /* gpu_slice also holds the "Vulkan Events" track's vkQueueSubmit slices
   * and the GPU log: the stages alone, and the host's calls alone. */
  gp_tp_rows *rows = NULL;
  if (gp_tp_query(tp,
                  "CREATE VIEW stage AS SELECT g.* FROM gpu_slice g JOIN "
                  "track t ON g.track_id = t.id WHERE t.type = "
                  "'gpu_render_stage'; CREATE VIEW host_call AS SELECT s.* "
                  "FROM slice s JOIN thread_track t ON s.track_id = t.id",
                  &rows, &e) != 0 ||
      gp_tp_rows_next(rows, &e) < 0) /* the last statement runs here */
    gp_test_fail(__FILE__, __LINE__, "views: %s", e.message);
  gp_tp_rows_destroy(rows);
  return tp;
}

/* See vkutil.h. */
gp_tp *vk_record(char *const *cmd, const char *config, char **out) {
  return vk_record_with(cmd, config, NULL, out);
}

/* See vkutil.h. */
void vk_check_gpu_info(gp_tp *tp) {
  Q_EQ(tp,
       "SELECT count(*) FROM gpu WHERE name GLOB 'llvmpipe*' AND uuid IS NOT "
       "NULL AND uuid != '00000000000000000000000000000000'",
       1);
  Q_EQ(tp,
       "SELECT count(*) FROM gpu g JOIN args a USING (arg_set_id) WHERE "
       "g.name GLOB 'llvmpipe*' AND a.key = 'driver_version' AND "
       "a.display_value GLOB 'llvmpipe Mesa *'",
       1);
}

#endif
