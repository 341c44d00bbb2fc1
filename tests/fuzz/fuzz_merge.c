/*
 * fuzz_merge.c - libFuzzer target for `gpuperf merge` and the re-timing
 * of `demo --machines` (src/perfetto/merge.c, merge_rewrite.c): their
 * own packet reader, the clock alignment and the packet rewrite.
 *
 *   make fuzz-writer    builds build/fuzz/fuzz_merge (clang)
 *   build/fuzz/fuzz_merge -max_total_time=60 build/fuzz/merge-corpus \
 *       tests/fuzz/corpus/merge tests/fuzz/corpus/importer
 *
 * The input is two traces: its first two bytes (little-endian) say how
 * long A is, A follows, B is the rest (a trace of the importer's corpus
 * is A with B empty or cut, more or less). A and B are written to files
 * (the merge reads paths) and merged both ways, with --sync-on for odd
 * sizes; A is re-timed by an offset and a drift taken from its bytes.
 * Built with ASan and UBSan: an overflow of a time (issue 35 D4), an
 * out-of-bounds access or a leak is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/merge.h"

#include "fuzz_files.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], pa[300], pb[300], out[300];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    fuzz_make_dir(dir, sizeof(dir), "fuzz-merge");
    snprintf(pa, sizeof(pa), "%s/a", dir);
    snprintf(pb, sizeof(pb), "%s/b", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
  }
  if (size < 2)
    return 0;
  size_t la = (size_t)(data[0] | data[1] << 8);
  if (la > size - 2)
    la = size - 2;
  const uint8_t *a = data + 2, *b = a + la;
  if (fuzz_put(pa, a, la) || fuzz_put(pb, b, size - 2 - la))
    abort();
  gp_merge_options o;
  memset(&o, 0, sizeof(o));
  o.size = sizeof(o);
  o.sync_on = size & 1 ? "Kernel" : NULL;
  o.force_sync = size & 2 ? 1 : 0; /* past the REALTIME check too */
  char err[512];
  const char *ab[2] = {pa, pb}, *ba[2] = {pb, pa};
  gp_merge_machine m[2];
  gp_trace_merge(ab, 2, out, &o, m, err, sizeof(err));
  gp_trace_merge(ba, 2, out, &o, m, err, sizeof(err));
  int64_t off = 0;
  double drift = 0;
  if (la >= 16) {
    memcpy(&off, a, sizeof(off));
    memcpy(&drift, a + 8, sizeof(drift));
  }
  gp_trace_retime(pa, out, off, drift, off, err, sizeof(err));
  unlink(out);
  return 0;
}
