/*
 * trace_hash.c - a file's SHA-256 through OpenSSL's EVP interface (see
 * trace_hash.h): the same digest `sha256sum` prints, so a trace's
 * default name can be checked by anyone.
 */
#include "trace_hash.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* See trace_hash.h. */
int trace_sha256_hex(const char *path, char hex[65], char *err,
                     size_t errsize) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errsize, "%s: %s", path, strerror(errno));
    return -1;
  }
  enum { CHUNK = 1 << 20 };
  unsigned char *b = malloc(CHUNK), md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  int rc = -1;
  if (!b || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
    snprintf(err, errsize, "%s: cannot hash it (out of memory)", path);
    goto out;
  }
  size_t n;
  while ((n = fread(b, 1, CHUNK, f)) > 0)
    if (!EVP_DigestUpdate(ctx, b, n))
      break;
  if (ferror(f) || n > 0) {
    snprintf(err, errsize, "%s: read error while hashing it", path);
    goto out;
  }
  if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32) {
    snprintf(err, errsize, "%s: SHA-256 failed", path);
    goto out;
  }
  for (unsigned i = 0; i < mdlen; i++)
    snprintf(hex + 2 * i, 3, "%02x", md[i]);
  rc = 0;
out:
  EVP_MD_CTX_free(ctx);
  free(b);
  fclose(f);
  return rc;
}
