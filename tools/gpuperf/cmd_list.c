/*
 * cmd_list.c - `gpuperf list`: the devices gpuperf can see, with their
 * hardware queues. (Also what GPUPERF_HUD=help prints.)
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_cuda.h"

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
  putchar('"');
}

static const char *queue_kind(uint32_t k) {
  switch (k) {
  case GP_QUEUE_GRAPHICS:
    return "graphics";
  case GP_QUEUE_COMPUTE:
    return "compute";
  case GP_QUEUE_COPY:
    return "copy";
  default:
    return "other";
  }
}

static void print_text(const gp_device_info *d) {
  char bdf[16], mem[32];
  gp_device_pci_bdf(d, bdf, sizeof(bdf));
  printf("device %u: %s\n", d->id, d->name);
  printf("  vendor %s, model %s, architecture %s\n", d->vendor, d->model,
         d->architecture);
  printf("  %u compute units at %u MHz, %s of memory, PCI %s\n",
         d->compute_units, d->core_clock_khz / 1000,
         cli_fmt_bytes(mem, sizeof(mem), (double)d->global_memory_bytes), bdf);
  printf("  queues:");
  for (uint32_t q = 0; q < d->num_queues; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(d->id, q, &qi) == 0)
      printf("%s %s (%s)", q ? "," : "", qi.name, queue_kind(qi.kind));
  }
  printf("\n");
}

static void print_json(const gp_device_info *d, bool first) {
  char bdf[16];
  gp_device_pci_bdf(d, bdf, sizeof(bdf));
  printf("%s\n  {\"id\": %u, \"name\": ", first ? "" : ",", d->id);
  json_string(d->name);
  printf(", \"vendor\": ");
  json_string(d->vendor);
  printf(", \"model\": ");
  json_string(d->model);
  printf(", \"architecture\": ");
  json_string(d->architecture);
  printf(", \"pci_bdf\": \"%s\", \"compute_units\": %u, \"core_clock_khz\": %u,"
         " \"memory_bytes\": %llu, \"queues\": [",
         bdf, d->compute_units, d->core_clock_khz,
         (unsigned long long)d->global_memory_bytes);
  for (uint32_t q = 0; q < d->num_queues; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(d->id, q, &qi) != 0)
      continue;
    printf("%s{\"name\": ", q ? ", " : "");
    json_string(qi.name);
    printf(", \"kind\": \"%s\"}", queue_kind(qi.kind));
  }
  printf("]}");
}

static void list_usage(FILE *out) {
  fprintf(out, "usage: gpuperf list [--device N] [--json]\n\n"
               "Lists the devices gpuperf sees (the simulated GPUs, set with\n"
               "GPUPERF_SIM_DEVICES, default \"compute,compute,v3d\").\n\n"
               "  --device N   only device N\n"
               "  --json       machine-readable output\n");
}

/* See cli.h. */
int cmd_list(int argc, char **argv) {
  static const struct option longopts[] = {{"device", required_argument, 0, 'd'},
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
  uint32_t n = 0;
  int rc = gp_sim_device_count(&n);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "cannot start the simulated GPUs: %s "
                     "(check GPUPERF_SIM_DEVICES and GPUPERF_SIM_TIME)",
                     gp_strerror(rc));
  gp_device_count(&n);
  if (one && only >= n)
    return cli_error(CLI_BAD_INPUT, "no device %llu (there are %u)",
                     (unsigned long long)only, n);
  if (json)
    printf("{\"devices\": [");
  bool first = true;
  for (uint32_t i = 0; i < n; i++) {
    if (one && i != only)
      continue;
    gp_device_info d;
    if (gp_device_get_info(i, &d) != 0)
      continue;
    if (json)
      print_json(&d, first);
    else
      print_text(&d);
    first = false;
  }
  if (json)
    printf("\n]}\n");
  else if (!one)
    cli_cuda_list_note(stdout);
  return CLI_OK;
}
