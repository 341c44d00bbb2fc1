/*
 * fuzz_importer.c - libFuzzer target for the trace processor's importer.
 *
 *   make fuzz                      build build-fuzz/fuzz-importer (clang)
 *   make fuzz-run FUZZ_SECONDS=600 run it over tests/fuzz/corpus/importer
 *
 * Each input is imported as a trace; when it opens, the tables are read
 * through SQL (every intrinsic table, args and the GPU views), so the
 * virtual tables see whatever the importer stored. Built with ASan and
 * UBSan: any out-of-bounds access, leak or undefined behaviour is a
 * finding. Inputs that once crashed are kept in tests/fuzz/crashes and
 * replayed by the normal test suite (tp_fuzz_replay).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuperf/tp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const queries[] = {
    "SELECT count(*), sum(dur), max(depth) FROM slice",
    "SELECT * FROM gpu_slice",
    "SELECT * FROM args",
    "SELECT count(*), sum(value) FROM counter",
    "SELECT * FROM track",
    "SELECT * FROM gpu",
    "SELECT * FROM flow",
    "SELECT * FROM process JOIN thread USING (upid)",
    "SELECT * FROM stats WHERE value != 0",
    "SELECT * FROM gpu_counter_group",
    "SELECT * FROM vulkan_memory_allocations",
    "SELECT extract_arg(arg_set_id, 'context_id') FROM gpu_slice",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gp_tp_options opts = {.size = sizeof(opts),
                        .flags = (size & 1) ? GP_TP_ALLOW_TRUNCATED : 0,
                        .db_path = NULL};
  gp_tp *tp;
  if (gp_tp_open_buffer(data, size, "fuzz", &opts, &tp, NULL) != 0)
    return 0;
  FILE *devnull = fopen("/dev/null", "w");
  for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
    gp_tp_write(tp, queries[i], GP_TP_FORMAT_CSV, devnull, NULL, NULL);
  fclose(devnull);
  gp_tp_close(tp);
  return 0;
}
