/*
 * fuzz_linux.c - libFuzzer target: the parsers of the Linux GPU sources,
 * on the same input: DRM fdinfo usage stats (gp__fdinfo_parse) and one
 * tracefs trace_pipe line (gp__tracefs_parse, gp__tracefs_field), with
 * the busy % of every engine against itself. `make fuzz-linux` builds it
 * with clang.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/drm.h"
#include "backend/linux/tracefs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  gp__fdinfo f;
  if (gp__fdinfo_parse(text, &f)) {
    if (f.num_engines > GP__DRM_MAX_ENGINES ||
        f.num_regions > GP__DRM_MAX_REGIONS)
      abort();
    for (uint32_t e = 0; e < f.num_engines; e++) {
      if (strlen(f.engines[e].name) >= GP__DRM_NAME)
        abort();
      double p = gp__fdinfo_busy_pct(&f.engines[e], &f.engines[e], 1000);
      if (p > 0) /* no time passed between a reading and itself */
        abort();
    }
  }
  gp__tracefs_event ev;
  if (gp__tracefs_parse(text, &ev)) {
    uint64_t v;
    gp__tracefs_field(&ev, "gpu_id", &v);
    gp__tracefs_field(&ev, "size", &v);
  }
  free(text);
  return 0;
}
