/*
 * vulkan_layer.c - making the programs that `gpuperf record` and `gpuperf
 * stat` run load the Vulkan layer, without a word from the loader: the
 * layer's implicit manifest (vulkan/implicit_layer.d/gpuperf_layer.json
 * under the manifest directory) is enabled only by GPUPERF_VULKAN_LAYER=1,
 * and the directory is put first in XDG_DATA_DIRS, where the loader (the
 * Debian loader 1.3.239 too) looks for implicit layers. An implicit layer
 * sits above the layers the program enables (the validation layer among
 * them), as VK_INSTANCE_LAYERS would put it, but the loader tells the
 * program's debug callbacks nothing about it (with VK_INSTANCE_LAYERS it
 * warns "env var 'VK_INSTANCE_LAYERS' defined and adding layers" into
 * them, changing the program's output).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define IMPLICIT "vulkan/implicit_layer.d/gpuperf_layer.json"

/* See cli.h. */
bool cli_vulkan_manifest_dir(char *buf, size_t size) {
  const char *env = getenv("GPUPERF_VULKAN_LAYER_DIR");
  char probe[4200];
  if (env && *env) {
    snprintf(buf, size, "%s", env);
    snprintf(probe, sizeof(probe), "%s/" IMPLICIT, buf);
    return access(probe, R_OK) == 0;
  }
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname) {
    snprintf(buf, size, "(libgpuperf.so not located)");
    return false;
  }
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 1;
  const char *base = slash ? info.dli_fname : ".";
  static const char *const where[] = {"%.*s/vulkan", "%.*s/gpuperf/vulkan"};
  for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
    snprintf(buf, size, where[i], dir, base);
    snprintf(probe, sizeof(probe), "%s/" IMPLICIT, buf);
    if (access(probe, R_OK) == 0)
      return true;
  }
  snprintf(buf, size, "%.*s/vulkan", dir, base); /* where it was looked for */
  return false;
}

/* Prepends value to the ':'-separated list in variable name, unless it is
 * there already; an unset or empty list is first given its default
 * (fallback, may be NULL). */
static void prepend(const char *name, const char *value, const char *fallback) {
  const char *old = getenv(name);
  if (!old || !*old)
    old = fallback;
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
  if (!cli_vulkan_manifest_dir(dir, sizeof(dir)))
    return;
  /* The XDG default when unset, so that nothing else the program looks
   * up there is lost. */
  prepend("XDG_DATA_DIRS", dir, "/usr/local/share:/usr/share");
  setenv("GPUPERF_VULKAN_LAYER", "1", 1);
}
