/*
 * cmd_merge.c - `gpuperf merge A B ... -o OUT`: the traces of several
 * machines as one multi-machine trace on one timeline (gpuperf/merge.h,
 * docs/merge.md), with a summary of how each machine was aligned.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpuperf/merge.h"
#include "gpuperf/tp.h"

static void merge_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf merge A.pftrace B.pftrace ... -o OUT [--sync-on "
          "NAME]\n"
          "                     [--realtime-error NS] [--force-sync] "
          "[-q]\n\n"
          "Merges the traces of several machines into one: each input gets "
          "its own\n"
          "machine_id, its timestamps move onto the first input's clock "
          "through the\n"
          "REALTIME clock snapshots both carry, and its GPU and process "
          "names get\n"
          "the machine's name. The uncertainty left is printed and stored in "
          "the\n"
          "trace (slice 'clock alignment' on track 'gpuperf merge').\n\n"
          "  -o, --output OUT       the merged trace (required)\n"
          "  --sync-on NAME         refine on the ends of slice NAME (a "
          "collective or\n"
          "                         barrier present as often on every "
          "machine)\n"
          "  --realtime-error NS    how far apart REALTIME clocks may be "
          "(default\n"
          "                         1000000: NTP on a LAN)\n"
          "  --force-sync           apply --sync-on's correction even beyond "
          "what\n"
          "                         REALTIME allows (refused otherwise: the "
          "windows\n"
          "                         probably hold different collectives)\n"
          "  -q, --quiet            no summary\n");
}

static void print_machines(const char *const *inputs, size_t n,
                           const gp_merge_machine *m, const char *output) {
  char b1[32], b2[32];
  printf("%-24s %-16s %10s %16s %12s %14s  %s\n", "input", "host", "machine_id",
         "offset", "drift", "uncertainty", "aligned on");
  for (size_t k = 0; k < n; k++) {
    char method[64];
    if (k == 0)
      snprintf(method, sizeof(method), "reference");
    else if (m[k].sync_points)
      snprintf(method, sizeof(method), "REALTIME + %u sync points",
               m[k].sync_points);
    else
      snprintf(method, sizeof(method), "REALTIME (%u snapshots)",
               m[k].snapshots);
    const char *host = m[k].hostname[0] ? m[k].hostname : "?";
    double off = (double)m[k].offset_ns;
    snprintf(b1, sizeof(b1), "%s%s", off < 0 ? "-" : "",
             cli_fmt_ns(b2, sizeof(b2), off < 0 ? -off : off));
    char in_s[256], host_s[256];
    printf("%-24.24s %-16.16s %10u %16s %9.3f ppm %14s  %s\n",
           cli_escaped(in_s, sizeof(in_s), inputs[k]),
           cli_escaped(host_s, sizeof(host_s), host), m[k].machine_id, b1,
           m[k].drift_ppm,
           cli_fmt_ns(b2, sizeof(b2), (double)m[k].uncertainty_ns), method);
  }
  char out_s[4096];
  printf("merged %zu machine%s into %s\n", n, n == 1 ? "" : "s",
         cli_escaped(out_s, sizeof(out_s), output));
}

/* See cli.h. */
int cmd_merge(int argc, char **argv) {
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'},
      {"sync-on", required_argument, 0, 's'},
      {"realtime-error", required_argument, 0, 'r'},
      {"force-sync", no_argument, 0, 'f'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  const char *output = NULL;
  gp_merge_options o;
  memset(&o, 0, sizeof(o));
  o.size = sizeof(o);
  bool quiet = false;
  uint64_t v;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "ho:q", longopts, NULL)) != -1) {
    switch (c) {
    case 'o':
      output = optarg;
      break;
    case 's':
      if (!*optarg)
        return cli_error(CLI_USAGE, "--sync-on needs a slice name");
      o.sync_on = optarg;
      break;
    case 'r':
      if (!cli_parse_u64("--realtime-error", optarg, 1, 3600000000000ull, &v))
        return CLI_USAGE;
      o.realtime_error_ns = v;
      break;
    case 'f':
      o.force_sync = 1;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      merge_usage(stdout);
      return CLI_OK;
    default:
      merge_usage(stderr);
      return CLI_USAGE;
    }
  }
  size_t n = (size_t)(argc - optind);
  if (!output || !*output) {
    merge_usage(stderr);
    return cli_error(CLI_USAGE, "merge needs -o OUT");
  }
  if (n == 0) {
    merge_usage(stderr);
    return cli_error(CLI_USAGE, "merge needs at least one trace");
  }
  if (n > GP_MERGE_MAX_INPUTS)
    return cli_error(CLI_USAGE, "merge takes at most %d traces",
                     GP_MERGE_MAX_INPUTS);
  const char *const *inputs = (const char *const *)(argv + optind);
  for (size_t k = 0; k < n; k++)
    if (strcmp(inputs[k], output) == 0)
      return cli_error(CLI_USAGE, "%s is both an input and the output", output);
  gp_merge_machine *m = calloc(n, sizeof(*m));
  if (!m)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  char err[512] = "";
  int rc = gp_trace_merge(inputs, n, output, &o, m, err, sizeof(err));
  if (rc != 0) {
    free(m);
    return cli_error(CLI_BAD_INPUT, "%s", err[0] ? err : gp_strerror(rc));
  }
  if (!quiet)
    print_machines(inputs, n, m, output);
  free(m);
  return CLI_OK;
}
