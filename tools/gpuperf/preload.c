/*
 * preload.c - making the programs that `gpuperf stat` and `gpuperf record`
 * run load the interception libraries, so that what they do through OpenCL
 * and OpenGL is recorded without any change to them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The path of libgpuperf-NAME.so into buf: $env, else beside the loaded
 * libgpuperf or in its gpuperf/ subdirectory. False if not found (buf
 * then names where it should be). */
static bool find_library(const char *name, const char *env_name, char *buf,
                         size_t size) {
  const char *env = getenv(env_name);
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    return access(buf, R_OK) == 0;
  }
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname) {
    snprintf(buf, size, "libgpuperf-%s.so", name);
    return false;
  }
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 1;
  const char *base = slash ? info.dli_fname : ".";
  static const char *const where[] = {"%.*s/libgpuperf-%s.so",
                                      "%.*s/gpuperf/libgpuperf-%s.so"};
  for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
    snprintf(buf, size, where[i], dir, base, name);
    if (access(buf, R_OK) == 0)
      return true;
  }
  snprintf(buf, size, where[0], dir, base, name); /* where it should be */
  return false;
}

/* See cli.h. */
bool cli_opencl_library(char *buf, size_t size) {
  return find_library("opencl", "GPUPERF_OPENCL_LIB", buf, size);
}

/* See cli.h. */
bool cli_gl_library(char *buf, size_t size) {
  return find_library("gl", "GPUPERF_GL_LIB", buf, size);
}

/* Puts lib first in LD_PRELOAD unless a library of that file name is
 * there already. */
static void preload(const char *lib) {
  const char *old = getenv("LD_PRELOAD");
  const char *slash = strrchr(lib, '/');
  if (old && strstr(old, slash ? slash + 1 : lib))
    return; /* already there */
  size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
  char *v = malloc(len);
  if (!v)
    return;
  snprintf(v, len, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
  setenv("LD_PRELOAD", v, 1);
  free(v);
}

static bool off(const char *env) {
  const char *v = getenv(env);
  return v && strcmp(v, "0") == 0;
}

/* See cli.h. */
void cli_preload_libraries(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return; /* an instrumented library cannot be preloaded before its runtime */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return;
#endif
#endif
  char lib[4096] = "";
  if (!off("GPUPERF_OPENGL")) {
    /* Built only where the GL headers are: its absence is said by
     * cli_warn_missing_libraries() for programs that link GL. */
    if (cli_gl_library(lib, sizeof(lib)))
      preload(lib);
  }
  if (off("GPUPERF_OPENCL"))
    return;
  lib[0] = '\0';
  if (!cli_opencl_library(lib, sizeof(lib))) {
    /* Silence here would be an empty trace later. */
    fprintf(stderr,
            "gpuperf: warning: %s not found (build it with 'make', or name "
            "it in GPUPERF_OPENCL_LIB): OpenCL calls will not be recorded\n",
            lib[0] ? lib : "libgpuperf-opencl.so");
    return;
  }
  preload(lib);
}
