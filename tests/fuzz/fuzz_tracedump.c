/*
 * fuzz_tracedump.c - libFuzzer target: the trace dump (and so the
 * bounds-checked protobuf reader under it) on arbitrary bytes.
 */
#include <stdint.h>
#include <stdio.h>

#include "perfetto/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *null;
  if (!null)
    null = fopen("/dev/null", "w");
  if (null)
    gp__trace_dump(data, size, null);
  return 0;
}
