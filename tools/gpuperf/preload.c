/*
 * preload.c - making the programs that `gpuperf stat` and `gpuperf record`
 * run load the interception libraries, so that what they do through OpenCL
 * is recorded without any change to them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* See cli.h. */
bool cli_opencl_library(char *buf, size_t size) {
  const char *env = getenv("GPUPERF_OPENCL_LIB");
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return access(buf, R_OK) == 0;
  }
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname) {
    snprintf(buf, size, "libgpuperf-opencl.so");
    return false;
  }
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 1;
  const char *base = slash ? info.dli_fname : ".";
  static const char *const where[] = {"%.*s/libgpuperf-opencl.so",
                                      "%.*s/gpuperf/libgpuperf-opencl.so"};
  for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
    snprintf(buf, size, where[i], dir, base);
    if (access(buf, R_OK) == 0)
      return true;
  }
  snprintf(buf, size, where[0], dir, base); /* where it should be */
  return false;
}

/* See cli.h. */
void cli_preload_opencl(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return; /* an instrumented library cannot be preloaded before its runtime */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return;
#endif
#endif
  const char *off = getenv("GPUPERF_OPENCL");
  if (off && strcmp(off, "0") == 0)
    return;
  char lib[4096] = "";
  if (!cli_opencl_library(lib, sizeof(lib))) {
    /* Silence here would be an empty trace later. */
    fprintf(stderr,
            "gpuperf: warning: %s not found (build it with 'make', or name "
            "it in GPUPERF_OPENCL_LIB): OpenCL calls will not be recorded\n",
            lib[0] ? lib : "libgpuperf-opencl.so");
    return;
  }
  const char *old = getenv("LD_PRELOAD");
  if (old && strstr(old, "libgpuperf-opencl.so"))
    return; /* already there */
  size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
  char *v = malloc(len);
  if (!v)
    return;
  snprintf(v, len, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
  setenv("LD_PRELOAD", v, 1);
  free(v);
}
