/*
 * fuzz_salvage.c - libFuzzer target for the salvage of a SIGKILLed
 * process's records (src/session/session_salvage.c, gp_record_salvage)
 * and its loss count (session_lost.c, gp_record_lost_at_death): the death
 * page is untrusted input (issue 35 D5).
 *
 *   make fuzz-writer    builds build/fuzz/fuzz_salvage (clang)
 *   build/fuzz/fuzz_salvage -max_total_time=60 build/fuzz/salvage-corpus
 *
 * The input is the page, written as 1.open beside an empty part
 * 1.pftrace; its first 8 bytes are replaced by the page's magic so that
 * the fuzzer reaches past it (a page without it is refused at once).
 * Built with ASan and UBSan: an out-of-bounds access, an overflow, a leak
 * or a hang (libFuzzer's -timeout) is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/session.h"
#include "session/sessionInt.h"

#include "fuzz_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], page[300], part[300];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    fuzz_make_dir(dir, sizeof(dir), "fuzz-salvage");
    snprintf(page, sizeof(page), "%s/1.open", dir);
    snprintf(part, sizeof(part), "%s/1.pftrace", dir);
  }
  if (size > (8u << 20))
    return 0;
  uint8_t *m = malloc(size + 1);
  if (!m)
    return 0;
  memcpy(m, data, size);
  if (size >= 8)
    memcpy(m, GP_DEATH_MAGIC, 8);
  int rc = fuzz_put(page, m, size) | fuzz_put(part, NULL, 0);
  free(m);
  if (rc)
    abort();
  uint64_t lost = 0, salvaged = 0;
  int32_t pid = 0;
  gp_record_lost_at_death(dir, 1, &lost, &pid);
  gp_record_salvage(dir, 1, &salvaged);
  return 0;
}
