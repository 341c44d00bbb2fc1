/*
 * http_client.h - the smallest HTTP/1.1 client that talks to ClickHouse's
 * HTTP interface: one POST per connection (Connection: close), over a
 * plain TCP socket. No TLS, no redirects, no chunked request bodies.
 */
#ifndef GPUPERF_HTTP_CLIENT_H
#define GPUPERF_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

/*
 * POSTs body (len bytes) to http://host:port/path. Returns the HTTP
 * status (200 ...), or -1 with a message in err if no answer came (cannot
 * resolve, connect, send or read). The response body, NUL-terminated, is
 * returned in *resp (malloc'd, the caller frees it; may be NULL if not
 * wanted).
 */
int http_post(const char *host, const char *port, const char *path,
              const char *body, size_t len, char **resp, char *err,
              size_t errsize);

/* Appends s, percent-encoded for a URL query value, to out (size bytes,
 * NUL-terminated); returns false if it did not fit. */
bool http_url_encode(char *out, size_t size, const char *s);

#endif /* GPUPERF_HTTP_CLIENT_H */
