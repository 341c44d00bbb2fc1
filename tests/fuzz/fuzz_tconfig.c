/*
 * fuzz_tconfig.c - libFuzzer target: the TraceConfig text format parser
 * and its write-back. `make fuzz-writer` builds it with clang.
 */
#include <stdint.h>
#include <stdlib.h>

#include "gpuperf/gpuperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gp_trace_config *c = NULL;
  char err[256];
  if (gp_trace_config_parse((const char *)data, size, &c, err, sizeof(err)) ==
      0) {
    size_t need = 0;
    gp_trace_config_format(c, NULL, 0, &need);
    char *text = malloc(need + 1);
    if (text && gp_trace_config_format(c, text, need + 1, &need) == 0) {
      /* What we write back must read again. */
      gp_trace_config *d = NULL;
      if (gp_trace_config_parse(text, need, &d, err, sizeof(err)) != 0)
        abort();
      gp_trace_config_destroy(d);
    }
    free(text);
    gp_trace_config_destroy(c);
  }
  return 0;
}
