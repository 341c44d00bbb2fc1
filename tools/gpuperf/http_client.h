/*
 * http_client.h - POSTs to one HTTP(S) server through libcurl, for
 * ClickHouse's HTTP interface (export_clickhouse.c).
 *
 * One http_client is one libcurl easy handle, kept for the life of the
 * client so that its connection is reused (HTTP keep-alive): an export
 * opens one connection per server unless the server closes it. Every
 * request has a deadline (the total timeout) that covers its retries.
 */
#ifndef GPUPERF_HTTP_CLIENT_H
#define GPUPERF_HTTP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct http_client http_client;

typedef struct http_options {
  const char *user;        /* sent as X-ClickHouse-User; NULL: none */
  const char *password;    /* sent as X-ClickHouse-Key; NULL: none */
  long connect_timeout_ms; /* per connection attempt */
  long timeout_ms;         /* per request, all its tries together */
  int retries;             /* further tries of a request that may repeat */
  const char *user_agent;  /* NULL: libcurl's */
  const char *cainfo;      /* CA certificates (PEM file); NULL: the system's */
} http_options;

/*
 * Creates a client for base_url ("http://host:port" or "https://...",
 * copied). o is copied (its strings too). Returns 0, or -1 with a message
 * in err if libcurl cannot be set up.
 */
int http_client_create(const char *base_url, const http_options *o,
                       http_client **out, char *err, size_t errsize);

/* Closes the connection and frees the client; accepts NULL. */
void http_client_destroy(http_client *c);

/*
 * POSTs body (len bytes) to base_url + path ("/?query=..."). A request
 * marked idempotent is tried again, with a growing pause, after a
 * timeout, a broken connection or an HTTP 502/503/504; any request is
 * tried again when no connection could be made (nothing was sent). All
 * tries end by the request's deadline. Returns the HTTP status of the
 * last answer (200 ...), or -1 with a message in err if none came. The
 * response body, NUL-terminated, is returned in *resp (malloc'd, the
 * caller frees it; resp may be NULL).
 */
int http_post(http_client *c, const char *path, const char *body, size_t len,
              bool idempotent, char **resp, char *err, size_t errsize);

/* How many connections the client has opened so far (libcurl's count). */
long http_client_connects(const http_client *c);

/* Appends s, percent-encoded for a URL query value, to out (size bytes,
 * NUL-terminated); returns false if it did not fit. */
bool http_url_encode(char *out, size_t size, const char *s);

#endif /* GPUPERF_HTTP_CLIENT_H */
