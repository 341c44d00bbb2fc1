/*
 * tracedump.c - prints a Perfetto trace in the text format with gpuperf's
 * own decoder (src/perfetto/dump.c), for tests and debugging:
 *
 *   tracedump FILE
 *
 * Exit status 0, 1 on a usage error, 2 if the file cannot be read or is
 * malformed (what could be decoded is printed first).
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfetto/dump.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tracedump FILE\n");
    return 1;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  size_t cap = 1 << 20, n = 0;
  uint8_t *buf = malloc(cap);
  size_t k;
  while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "tracedump: out of memory\n");
    return 2;
  }
  int rc = gp__trace_dump(buf, n, stdout);
  free(buf);
  return rc == 0 ? 0 : 2;
}
