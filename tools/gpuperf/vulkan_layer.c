/*
 * vulkan_layer.c - making the programs that `gpuperf record` and `gpuperf
 * stat` run load the Vulkan layer, through the loader's environment: its
 * manifest's directory is added to VK_ADD_LAYER_PATH (which keeps the
 * system's layers, the validation layer among them, in view) and the
 * layer's name to VK_INSTANCE_LAYERS (which the Debian loader 1.3.239
 * honours; layers named there sit above those the program enables).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define LAYER_NAME "VK_LAYER_GPUPERF_trace"

/* The directory holding gpuperf_layer.json: $GPUPERF_VULKAN_LAYER_DIR,
 * else vulkan/ beside the libgpuperf.so we run with (the build directory)
 * or gpuperf/vulkan/ (an installation). False if nowhere. */
static bool find_manifest_dir(char *buf, size_t size) {
  const char *env = getenv("GPUPERF_VULKAN_LAYER_DIR");
  char probe[4200];
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    snprintf(probe, sizeof(probe), "%s/gpuperf_layer.json", buf);
    return access(probe, R_OK) == 0;
  }
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname)
    return false;
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 1;
  const char *base = slash ? info.dli_fname : ".";
  static const char *const where[] = {"%.*s/vulkan", "%.*s/gpuperf/vulkan"};
  for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
    snprintf(buf, size, where[i], dir, base);
    snprintf(probe, sizeof(probe), "%s/gpuperf_layer.json", buf);
    if (access(probe, R_OK) == 0)
      return true;
  }
  return false;
}

/* Prepends value to the ':'-separated list in variable name, unless it is
 * there already. */
static void prepend(const char *name, const char *value) {
  const char *old = getenv(name);
  if (old && strstr(old, value))
    return;
  size_t len = strlen(value) + (old ? strlen(old) : 0) + 2;
  char *v = malloc(len);
  if (!v)
    return;
  snprintf(v, len, "%s%s%s", value, old && *old ? ":" : "", old ? old : "");
  setenv(name, v, 1);
  free(v);
}

/* See cli.h. */
void cli_enable_vulkan_layer(void) {
#if defined(__SANITIZE_ADDRESS__)
  return; /* an instrumented layer cannot load into uninstrumented programs */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return;
#endif
#endif
  const char *off = getenv("GPUPERF_VULKAN");
  if (off && strcmp(off, "0") == 0)
    return;
  char dir[4096];
  if (!find_manifest_dir(dir, sizeof(dir)))
    return;
  prepend("VK_ADD_LAYER_PATH", dir);
  prepend("VK_INSTANCE_LAYERS", LAYER_NAME);
}
