/*
 * test_stat_forms.c - `gpuperf stat` as perf stat prints it: msec and
 * "CPUs utilized" for task-clock, short kernel names, -x SEP and --json
 * lines, and -r N with the mean and its spread; and `gpuperf list`
 * showing the OpenCL devices present.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "unit/writer_util.h"
#include "opencl/oclutil.h"
#include "tp/tputil.h"

TEST(stat_perf_like_forms) {
  const char *app = wt_built("tests/stat_app");
  char *out, *err, line[512];
  /* Text: task-clock in msec with CPUs utilized (when perf_event works),
   * kernels by their short names. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-e", "dram__bytes_read.sum,task-clock",
                   "--", app, "--launches", "3", NULL),
            0);
  ASSERT(strstr(err, "kernel saxpy: 3 launches") != NULL);
  ASSERT(strstr(err, "saxpy(") == NULL);
  ASSERT(strstr(err, "NANOSECOND") == NULL);
  if (gp_host_perf_status(NULL, 0) == 0) {
    ASSERT_NOT_NULL(tp_line_of(err, "task-clock", line, sizeof(line)));
    ASSERT(strstr(line, " msec") != NULL);
    ASSERT(strstr(line, "CPUs utilized") != NULL);
  }
  free(out);
  free(err);
  /* -x, : perf stat's fields (value, unit, event, run time, percentage,
   * metric, metric unit), then device and kernel. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "-e", "dram__bytes_read.sum",
                   "--", app, "--launches", "3", NULL),
            0);
  ASSERT_NOT_NULL(tp_line_of(err, ",100.00,,,Sim Compute GPU #0,saxpy\n", line,
                             sizeof(line)));
  ASSERT_NOT_NULL(tp_line_of(err, "3,,launches,", line, sizeof(line)));
  ASSERT(strstr(line, ",100.00,,,Sim Compute GPU #0,saxpy") != NULL);
  ASSERT_NOT_NULL(
      tp_line_of(err, ",bytes,dram__bytes_read.sum,", line, sizeof(line)));
  ASSERT(strstr(line, ",100.00,") != NULL); /* then its rate */
  ASSERT(strstr(line, "/sec,Sim Compute GPU #0,") != NULL);
  ASSERT_NOT_NULL(tp_line_of(err, ",s,time-elapsed,", line, sizeof(line)));
  ASSERT(strstr(line, ",100.00,,,,") != NULL);
  ASSERT(strstr(err, "Performance counter stats") == NULL);
  free(out);
  free(err);
  /* --json and -r 3: a spread ("variance", in %) with each value. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "--json", "-r", "3", "-e",
                   "dram__bytes_read.sum", "--", app, "--launches", "2", NULL),
            0);
  ASSERT_NOT_NULL(tp_line_of(err,
                             "\"event\": \"launches\", \"device\": \"Sim "
                             "Compute GPU #0\", \"kernel\": \"saxpy\"",
                             line, sizeof(line)));
  ASSERT(strncmp(line, "{\"counter-value\": 2, ", 21) == 0);
  ASSERT_NOT_NULL(
      tp_line_of(err, "\"event\": \"time-elapsed\"", line, sizeof(line)));
  ASSERT(strstr(line, "\"variance\": ") != NULL);
  free(out);
  free(err);
  /* -r: the text form says how many runs, and "+-". */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-r", "2", "-e", "dram__bytes_read.sum",
                   "--", app, NULL),
            0);
  ASSERT(strstr(err, "(2 runs):") != NULL);
  ASSERT(strstr(err, "seconds time elapsed  ( +- ") != NULL);
  free(out);
  free(err);
  /* Usage errors: one line. */
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-r", "0", "--", app, NULL), 1);
  ASSERT_EQ(strchr(err, '\n') - err + 1, (long)strlen(err));
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "stat", "-x", ",", "--json", "--", app, NULL),
            1);
  ASSERT_EQ(strchr(err, '\n') - err + 1, (long)strlen(err));
  free(out);
  free(err);
}

/* `gpuperf list` names the OpenCL devices the ICD loader reports (PoCL's
 * CPU device here), after gpuperf's own. */
TEST(list_shows_opencl_devices) {
  void *probe = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!probe)
    SKIP("no OpenCL ICD loader (libOpenCL.so.1)");
  dlclose(probe);
  ocl_env();
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "list", NULL), 0);
  if (strstr(out, "OpenCL: not listed in a sanitizer build")) {
    free(out);
    free(err);
    SKIP("a sanitizer build of gpuperf does not list OpenCL devices");
  }
  const char *ocl = strstr(out, "\nOpenCL (through the ICD loader");
  ASSERT_NOT_NULL(ocl);
  ASSERT(strstr(out, "Sim Compute GPU #0") < ocl);
  ASSERT(strstr(ocl, "platform 0: Portable Computing Language") != NULL);
  ASSERT(strstr(ocl, "    device 0: ") != NULL);
  ASSERT(strstr(ocl, "[CPU]") != NULL);
  free(out);
  free(err);
}

/* `gpuperf list` shows the Vulkan physical devices the loader reports
 * (lavapipe here) with the counters the layer records on them. */
TEST(list_shows_vulkan_devices) {
  void *probe = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!probe)
    SKIP("no Vulkan loader (libvulkan.so.1)");
  dlclose(probe);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "list", NULL), 0);
  if (strstr(out, "Vulkan: not listed in a sanitizer build")) {
    free(out);
    free(err);
    SKIP("a sanitizer build of gpuperf does not list Vulkan devices");
  }
  if (strstr(out, "\nVulkan: no ")) {
    free(out);
    free(err);
    SKIP("no Vulkan driver (mesa-vulkan-drivers) installed");
  }
  const char *vk = strstr(out, "\nVulkan (through the loader");
  ASSERT_NOT_NULL(vk);
  ASSERT(strstr(out, "\nOpenCL") == NULL || strstr(out, "\nOpenCL") < vk);
  ASSERT(strstr(vk, "  device 0: ") != NULL);
  ASSERT(strstr(vk, "llvmpipe") != NULL); /* lavapipe, the driver here */
  ASSERT(strstr(vk, "ia_vertices") != NULL);
  ASSERT(strstr(vk, "cs_invocations") != NULL);
  free(out);
  free(err);
}
