/*
 * cmd_cuda.c - `gpuperf cuda`: the CUDA devices and the metrics NVIDIA
 * GPUs can count.
 *
 * With a GPU it starts the CUDA collector in this process, lists the
 * devices with their chips and how many metrics each can count. Without
 * one it can still list any supported chip's metrics (--chip), and check
 * that a set of metrics can be collected together and in how many passes
 * (--check): CUPTI's Profiler Host API needs no GPU for that.
 *
 * The collector is reached through dlopen (cli_cuda.h): the CLI itself
 * does not depend on CUDA.
 */
#include <dlfcn.h>
#include <fnmatch.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cuda.h"
#include "gpuperf/cuda.h"

/* The collector's functions we use, from its own handle. */
typedef struct cuda_api {
  void *lib;
  __typeof__(&gp_cuda_start) start;
  __typeof__(&gp_cuda_status) status;
  __typeof__(&gp_cuda_device_chip) device_chip;
  __typeof__(&gp_cuda_chips) chips;
  __typeof__(&gp_cuda_metrics_open) open;
  __typeof__(&gp_cuda_metrics_close) close;
  __typeof__(&gp_cuda_metrics_count) count;
  __typeof__(&gp_cuda_metrics_get) get;
  __typeof__(&gp_cuda_metrics_plan) plan;
  __typeof__(&gp_device_count) device_count;
  __typeof__(&gp_device_get_info) device_info;
} cuda_api;

/* See cli_cuda.h. */
bool cli_cuda_library(char *buf, size_t size) {
  const char *env = getenv("GPUPERF_CUDA_LIB");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return access(buf, R_OK) == 0;
  }
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname) {
    snprintf(buf, size, "libgpuperf-cuda.so");
    return false;
  }
  char dir[PATH_MAX];
  if (!realpath(info.dli_fname, dir))
    snprintf(dir, sizeof(dir), "%s", info.dli_fname);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof(dir), ".");
  snprintf(buf, size, "%s/libgpuperf-cuda.so", dir);
  return access(buf, R_OK) == 0;
}

static int load(cuda_api *a, bool quiet) {
  char path[PATH_MAX];
  memset(a, 0, sizeof(*a));
  if (!cli_cuda_library(path, sizeof(path))) {
    if (!quiet)
      cli_error(CLI_BAD_INPUT,
                "the CUDA collector is not built (no %s; it is built where "
                "the CUDA toolkit is found, see docs/cuda.md)",
                path);
    return CLI_BAD_INPUT;
  }
  a->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) {
    if (!quiet)
      cli_error(CLI_BAD_INPUT, "cannot load %s: %s", path, dlerror());
    return CLI_BAD_INPUT;
  }
  struct {
    void **slot;
    const char *name;
  } syms[] = {
      {(void **)&a->start, "gp_cuda_start"},
      {(void **)&a->status, "gp_cuda_status"},
      {(void **)&a->device_chip, "gp_cuda_device_chip"},
      {(void **)&a->chips, "gp_cuda_chips"},
      {(void **)&a->open, "gp_cuda_metrics_open"},
      {(void **)&a->close, "gp_cuda_metrics_close"},
      {(void **)&a->count, "gp_cuda_metrics_count"},
      {(void **)&a->get, "gp_cuda_metrics_get"},
      {(void **)&a->plan, "gp_cuda_metrics_plan"},
      {(void **)&a->device_count, "gp_device_count"},
      {(void **)&a->device_info, "gp_device_get_info"},
  };
  for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
    *syms[i].slot = dlsym(a->lib, syms[i].name);
    if (!*syms[i].slot) {
      if (!quiet)
        cli_error(CLI_BAD_INPUT, "%s lacks %s: rebuild it", path, syms[i].name);
      dlclose(a->lib);
      a->lib = NULL;
      return CLI_BAD_INPUT;
    }
  }
  return 0;
}

static const char *type_name(uint32_t t) {
  switch (t) {
  case GP_CUDA_METRIC_COUNTER:
    return "counter";
  case GP_CUDA_METRIC_RATIO:
    return "ratio";
  case GP_CUDA_METRIC_THROUGHPUT:
    return "throughput";
  default:
    return "?";
  }
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

static bool matches(const char *name, char **pats, int npat) {
  if (npat == 0)
    return true;
  for (int i = 0; i < npat; i++)
    if (fnmatch(pats[i], name, 0) == 0)
      return true;
  return false;
}

/* Lists a chip's metrics matching the patterns. */
static int list_metrics(cuda_api *a, const char *chip, uint32_t profiler,
                        bool json, char **pats, int npat) {
  gp_cuda_metrics *m = NULL;
  int rc = a->open(chip, profiler, &m);
  if (rc == GP_ENODEV) {
    size_t n = 0;
    const char *const *names = NULL;
    a->chips(&n, &names);
    fprintf(stderr, "gpuperf: unknown chip '%s'; CUPTI knows:", chip);
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, " %s", names[i]);
    fputc('\n', stderr);
    return CLI_BAD_INPUT;
  }
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "cannot list the metrics of %s: %s (%s)",
                     chip, gp_strerror(rc), a->status());
  size_t n = a->count(m), shown = 0;
  const char *prof =
      profiler == GP_CUDA_PROFILER_PM_SAMPLING ? "pm-sampling" : "range";
  if (json) {
    printf("{\"chip\": ");
    json_string(stdout, chip);
    printf(", \"profiler\": \"%s\", \"metrics\": [", prof);
  }
  for (size_t i = 0; i < n; i++) {
    gp_cuda_metric_info mi;
    if (a->get(m, i, &mi) != 0 || !matches(mi.name, pats, npat))
      continue;
    if (json) {
      printf("%s\n  {\"name\": ", shown ? "," : "");
      json_string(stdout, mi.name);
      printf(", \"type\": \"%s\", \"hw_unit\": ", type_name(mi.type));
      json_string(stdout, mi.hw_unit);
      printf(", \"dim_unit\": ");
      json_string(stdout, mi.dim_unit);
      printf(", \"description\": ");
      json_string(stdout, mi.description);
      printf("}");
    } else {
      printf("%-56s %-10s %-8s %-12s %s\n", mi.name, type_name(mi.type),
             mi.hw_unit, mi.dim_unit, mi.description);
    }
    shown++;
  }
  if (json)
    printf("\n]}\n");
  else
    printf("%zu of %zu %s metrics of %s (add a rollup to collect one: .sum, "
           ".avg, .max, .min for counters, .ratio for ratios, "
           ".avg.pct_of_peak_sustained_elapsed for throughputs)\n",
           shown, n, prof, chip);
  a->close(m);
  if (npat > 0 && shown == 0)
    return cli_error(CLI_BAD_INPUT, "no metric of %s matches", chip);
  return CLI_OK;
}

/* Checks that a comma-separated set of metrics can be collected. */
static int check_metrics(cuda_api *a, const char *chip, uint32_t profiler,
                         char *list) {
  const char *names[256];
  size_t n = 0;
  char *save = NULL;
  for (char *t = strtok_r(list, ",", &save); t && n < 256;
       t = strtok_r(NULL, ",", &save))
    if (*t)
      names[n++] = t;
  if (n == 0)
    return cli_error(CLI_USAGE, "--check needs metric names");
  gp_cuda_metrics *m = NULL;
  int rc = a->open(chip, profiler, &m);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "unknown chip '%s' (gpuperf cuda --chips)",
                     chip);
  size_t passes = 0, bad = 0;
  rc = a->plan(m, names, n, &passes, &bad);
  a->close(m);
  if (rc == GP_ENOCOUNTER)
    return cli_error(CLI_BAD_INPUT,
                     "%s cannot collect '%s' (a base metric needs a rollup, "
                     "as '.sum'; see gpuperf cuda --chip %s)",
                     chip, names[bad], chip);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "cannot check the metrics: %s (%s)",
                     gp_strerror(rc), a->status());
  printf("%zu metrics, %zu pass%s on %s\n", n, passes, passes == 1 ? "" : "es",
         chip);
  return CLI_OK;
}

/* Starts the collector to find the CUDA devices; prints them. */
static int list_devices(cuda_api *a, uint32_t profiler, bool json, char **pats,
                        int npat) {
  int rc = a->start(0);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "%s", a->status());
  uint32_t n = 0;
  a->device_count(&n);
  int status = CLI_OK;
  for (uint32_t i = 0; i < n; i++) {
    gp_device_info d;
    char chip[64];
    if (a->device_info(i, &d) != 0 || d.api != GP_API_CUDA)
      continue;
    if (a->device_chip(i, chip, sizeof(chip)) != 0)
      snprintf(chip, sizeof(chip), "?");
    if (!json)
      printf("device %u: %s, chip %s, %s, %u SMs\n", i, d.name, chip,
             d.architecture, d.compute_units);
    if (npat > 0 || json) {
      int r = list_metrics(a, chip, profiler, json, pats, npat);
      if (r != CLI_OK)
        status = r;
    }
  }
  return status;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf cuda [--pm] [--json] [PATTERN...]\n"
          "       gpuperf cuda --chip NAME [--pm] [--json] [PATTERN...]\n"
          "       gpuperf cuda --chip NAME [--pm] --check M1,M2,...\n"
          "       gpuperf cuda --chips\n\n"
          "Without --chip: the CUDA devices of this machine, with their chips\n"
          "(needs a GPU and its driver; exit status 2 with the reason if\n"
          "there is none), and the metrics matching PATTERNs (shell globs).\n"
          "With --chip: that chip's metrics, no GPU needed.\n\n"
          "  --chip NAME    a chip CUPTI knows (GH100, AD102 ...)\n"
          "  --chips        list the chips CUPTI knows\n"
          "  --pm           metrics of PM sampling (periodic) instead of the\n"
          "                 range profiler (per kernel)\n"
          "  --check LIST   check that these full metric names (with rollups)\n"
          "                 can be collected together; print the passes\n"
          "  --json         machine-readable output\n");
}

/* See cli_cuda.h. */
int cmd_cuda(int argc, char **argv) {
  static const struct option longopts[] = {{"chip", required_argument, 0, 'c'},
                                           {"chips", no_argument, 0, 'C'},
                                           {"pm", no_argument, 0, 'p'},
                                           {"check", required_argument, 0, 'k'},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
  const char *chip = NULL;
  char *check = NULL;
  bool json = false, chips = false;
  uint32_t profiler = GP_CUDA_PROFILER_RANGE;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      chip = optarg;
      break;
    case 'C':
      chips = true;
      break;
    case 'p':
      profiler = GP_CUDA_PROFILER_PM_SAMPLING;
      break;
    case 'k':
      check = optarg;
      break;
    case 'j':
      json = true;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    default:
      usage(stderr);
      return CLI_USAGE;
    }
  }
  if (check && !chip)
    return cli_error(CLI_USAGE, "--check needs --chip");
  if (check && optind < argc)
    return cli_error(CLI_USAGE, "--check takes no patterns");
  cuda_api a;
  int rc = load(&a, false);
  if (rc != 0)
    return rc;
  if (chips) {
    size_t n = 0;
    const char *const *names = NULL;
    rc = a.chips(&n, &names);
    if (rc != 0)
      return cli_error(CLI_BAD_INPUT, "%s", a.status());
    for (size_t i = 0; i < n; i++)
      printf("%s\n", names[i]);
    return CLI_OK;
  }
  if (check)
    return check_metrics(&a, chip, profiler, check);
  if (chip)
    return list_metrics(&a, chip, profiler, json, argv + optind, argc - optind);
  return list_devices(&a, profiler, json, argv + optind, argc - optind);
}

/* See cli_cuda.h. */
void cli_cuda_list_note(FILE *out) {
  cuda_api a;
  if (load(&a, true) != 0)
    return;
  /* No device, no line: `gpuperf cuda` tells why (and the list stays
   * what GPUPERF_HUD=help prints in a program without CUDA). */
  if (a.start(0) != 0)
    return;
  /* The collector registered the CUDA devices and their catalogs in the
   * CLI's own libgpuperf (it has no core of its own), after the list
   * above was printed: print them the way gpuperf list prints the rest. */
  __typeof__(&gp_device_list_print) print =
      (__typeof__(&gp_device_list_print))dlsym(a.lib, "gp_device_list_print");
  uint32_t n = 0;
  a.device_count(&n);
  for (uint32_t i = 0; i < n; i++) {
    gp_device_info d;
    if (a.device_info(i, &d) != 0 || d.api != GP_API_CUDA)
      continue;
    fprintf(out, "CUDA ");
    if (!print || print(out, i, 0) != 0)
      fprintf(out, "device %u: %s\n", i, d.name);
  }
}

/* See cli_cuda.h. */
bool cli_cuda_record_env(void) {
  char path[PATH_MAX];
  if (!cli_cuda_library(path, sizeof(path)))
    return false;
  const char *have = getenv("CUDA_INJECTION64_PATH");
  if (have && *have)
    return strcmp(have, path) == 0;
  setenv("CUDA_INJECTION64_PATH", path, 1);
  /* The collector hands NVTX's initialisation on to its libcupti. */
  const char *nvtx = getenv("NVTX_INJECTION64_PATH");
  if (!nvtx || !*nvtx)
    setenv("NVTX_INJECTION64_PATH", path, 1);
  return true;
}
