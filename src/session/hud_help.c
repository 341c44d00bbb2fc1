/*
 * hud_help.c - GPUPERF_HUD=help: what can be measured in this program, as
 * GALLIUM_HUD=help lists Mesa's counters.
 *
 * The list is the one `gpuperf list` prints: the simulated GPUs (as
 * GPUPERF_SIM_DEVICES configures them), the host CPU and the DRM cards,
 * brought up here so that their catalogs exist, then the OpenCL and
 * Vulkan devices their loaders report, with the counters a program gets
 * on them when `gpuperf record` runs it; first, the frame metrics a GL
 * window's HUD shows (hud_frames.c). A program run with
 * GPUPERF_HUD=help prints it and exits before main() (hud.c); under
 * `gpuperf record` or `stat` the command line prints it and runs the
 * program without the HUD.
 */
#include <stdio.h>
#include <string.h>

#include "gpuperf/gpuperf.h"
#include "gpuperf/hud.h"

/* See gpuperf/hud.h. */
int gp_hud_help_print(FILE *out) {
  uint32_t n = 0, host = 0;
  int rc = gp_sim_device_count(&n);
  fprintf(out,
          "GPUPERF_HUD=help: the devices this program can use and their "
          "counters.\n"
          "Show counters live with GPUPERF_HUD=NAME[,NAME...] (exact names), "
          "count them with\n'gpuperf stat -e NAME[,NAME...] -- PROGRAM' "
          "(names or globs), or record them with\ncounter_names in a "
          "gpu.counters config.\n\n"
          "In a GL window (libgpuperf-gl.so draws the HUD in it), these "
          "need no device:\n"
          "  fps            frames per second\n"
          "  frametime      CPU time between swaps, ms\n"
          "  gpu-frametime  GPU time of a frame, ms\n\n");
  if (rc != 0)
    fprintf(out,
            "(no simulated GPUs: %s; check GPUPERF_SIM_DEVICES and "
            "GPUPERF_SIM_TIME)\n\n",
            gp_strerror(rc));
  gp_host_device_register(&host);
  gp_drm_register_devices();
  return gp_device_list_print(out, GP_ALL_DEVICES, GP_LIST_LOADERS);
}
