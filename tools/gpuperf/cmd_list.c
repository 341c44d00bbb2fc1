/*
 * cmd_list.c - `gpuperf list`: the devices gpuperf can see (the simulated
 * GPUs, the host CPU and the DRM cards), with their queues and counters:
 * ids, names, types, units, groups, blocks and descriptions; then the
 * OpenCL and Vulkan devices their loaders report, with the counters a
 * recorded program gets on them. Every counter `record -e` and `stat -e`
 * accept is there. The listing itself is the library's
 * gp_device_list_print(), which GPUPERF_HUD=help prints too; in the text
 * form the CUDA devices (cmd_cuda.c) follow.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_cuda.h"

static void list_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf list [--device N] [--json]\n\n"
          "Lists the devices gpuperf sees and what can be measured on them:\n"
          "the simulated GPUs (set with GPUPERF_SIM_DEVICES, default\n"
          "\"compute,compute,v3d\"), the host CPU (perf_event counters) and\n"
          "the DRM cards (sysfs); then the OpenCL platforms and devices,\n"
          "Vulkan devices and CUDA devices present, with the counters\n"
          "recordings get on them: every counter 'record -e' and 'stat -e'\n"
          "accept. Counters marked * are selected by default.\n"
          "GPUPERF_HUD=help in the environment of any program using\n"
          "libgpuperf prints the same.\n\n"
          "  --device N   only device N (of gpuperf's own)\n"
          "  --json       machine-readable output (the OpenCL and Vulkan\n"
          "               devices in \"loader_devices\")\n");
}

/* See cli.h. */
int cmd_list(int argc, char **argv) {
  static const struct option longopts[] = {
      {"device", required_argument, 0, 'd'},
      {"json", no_argument, 0, 'j'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  bool json = false, one = false;
  uint64_t only = 0;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 'd':
      if (!cli_parse_u64("--device", optarg, 0, 1000, &only))
        return CLI_USAGE;
      one = true;
      break;
    case 'j':
      json = true;
      break;
    case 'h':
      list_usage(stdout);
      return CLI_OK;
    default:
      list_usage(stderr);
      return CLI_USAGE;
    }
  }
  if (optind < argc)
    return cli_error(CLI_USAGE, "unexpected argument '%s'", argv[optind]);
  uint32_t n = 0, host = 0;
  int rc = gp_sim_device_count(&n);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT,
                     "cannot start the simulated GPUs: %s "
                     "(check GPUPERF_SIM_DEVICES and GPUPERF_SIM_TIME)",
                     gp_strerror(rc));
  rc = gp_host_device_register(&host);
  if (rc != 0)
    cli_error(0, "warning: the host CPU is not listed: %s", gp_strerror(rc));
  rc = gp_drm_register_devices(); /* as a recorded program's session does */
  if (rc != 0)
    cli_error(0, "warning: a DRM card is not listed: %s", gp_strerror(rc));
  gp_device_count(&n);
  if (one && only >= n)
    return cli_error(CLI_BAD_INPUT, "no device %llu (there are %u)",
                     (unsigned long long)only, n);
  rc = gp_device_list_print(stdout, one ? (uint32_t)only : GP_ALL_DEVICES,
                            (json ? GP_LIST_JSON : 0) | GP_LIST_LOADERS);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "cannot write the list: %s",
                     gp_strerror(rc));
  if (!json && !one)
    cli_cuda_list_note(stdout);
  return CLI_OK;
}
