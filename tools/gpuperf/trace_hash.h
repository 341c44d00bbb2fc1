/*
 * trace_hash.h - the SHA-256 of a file (OpenSSL's libcrypto), which names
 * a trace by its content (the ClickHouse export's default trace name).
 */
#ifndef GPUPERF_TRACE_HASH_H
#define GPUPERF_TRACE_HASH_H

#include <stddef.h>

/*
 * Reads path to its end and writes its SHA-256 as 64 lowercase hex digits
 * and a NUL into hex. Returns 0, or -1 with a message naming the file in
 * err (cannot open or read it).
 */
int trace_sha256_hex(const char *path, char hex[65], char *err, size_t errsize);

#endif /* GPUPERF_TRACE_HASH_H */
