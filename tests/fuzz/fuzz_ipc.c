/*
 * fuzz_ipc.c - libFuzzer target: the frames a tracing service sends a
 * producer (ipc_input.h). `make fuzz-writer` builds it with clang; run
 * build/fuzz/fuzz_ipc tests/fuzz/corpus/ipc -max_total_time=60.
 */
#include <stdint.h>

#include "ipc_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ipc_input(data, size);
  return 0;
}
