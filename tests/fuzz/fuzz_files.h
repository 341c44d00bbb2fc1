/*
 * fuzz_files.h - for fuzz targets whose code under test reads files: a
 * folder of their own, made once, and the input's bytes written to a path.
 */
#ifndef GPUPERF_FUZZ_FILES_H
#define GPUPERF_FUZZ_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A new folder under $TMPDIR (or /tmp) named NAME-XXXXXX into dir; aborts
 * if it cannot be made. */
static inline void fuzz_make_dir(char *dir, size_t size, const char *name) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, size, "%s/%s-XXXXXX", tmp ? tmp : "/tmp", name);
  if (!mkdtemp(dir))
    abort();
}

/* Writes the n bytes at d to path (replacing it); 0 or -1. */
static inline int fuzz_put(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t w = n ? fwrite(d, 1, n, f) : 0;
  return fclose(f) == 0 && w == n ? 0 : -1;
}

#endif
