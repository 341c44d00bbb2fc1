/*
 * plugin.c - the sample workload as a plugin: a shared library linked with
 * the OpenCL loader, which plugin_host.c opens with RTLD_LOCAL, as Python
 * opens its extension modules. The loader then is not in the global
 * scope, where the interception library's dlsym(RTLD_NEXT) looks first.
 */
#include <stdio.h>

#include "workload.h"

int plugin_run(int iterations);

/* Runs the workload and prints its results and counts; returns its
 * status. */
__attribute__((visibility("default"))) int plugin_run(int iterations) {
  wl_options opt = {iterations, 4096, "main"};
  wl_counts counts;
  int rc = wl_run(&opt, stdout, &counts);
  if (rc == 0)
    wl_print_counts(&counts, opt.tag, stdout);
  fflush(stdout);
  return rc;
}
