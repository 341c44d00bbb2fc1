/*
 * http_client.c - a minimal HTTP/1.1 POST over TCP (see http_client.h),
 * enough for ClickHouse's HTTP interface: the request is written whole,
 * the response read to the end of the connection; bodies sent with
 * Content-Length or chunked are both understood.
 */
#include "http_client.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

static int connect_to(const char *host, const char *port, char *err,
                      size_t errsize) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int rc = getaddrinfo(host, port, &hints, &res);
  if (rc != 0) {
    snprintf(err, errsize, "%s:%s: %s", host, port, gai_strerror(rc));
    return -1;
  }
  int fd = -1, saved = 0;
  for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      saved = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0)
    snprintf(err, errsize, "%s:%s: %s", host, port,
             strerror(saved ? saved : ECONNREFUSED));
  return fd;
}

static bool send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Decodes a chunked body in place; returns its length. */
static size_t dechunk(char *b, size_t n) {
  size_t in = 0, out = 0;
  while (in < n) {
    char *end = NULL;
    unsigned long len = strtoul(b + in, &end, 16);
    char *nl = strstr(b + in, "\r\n");
    if (!nl || len == 0)
      break;
    in = (size_t)(nl - b) + 2;
    if (len > n - in)
      len = n - in;
    memmove(b + out, b + in, len);
    out += len;
    in += len + 2;
  }
  b[out] = '\0';
  return out;
}

/* See http_client.h. */
int http_post(const char *host, const char *port, const char *path,
              const char *body, size_t len, char **resp, char *err,
              size_t errsize) {
  if (resp)
    *resp = NULL;
  int fd = connect_to(host, port, err, errsize);
  if (fd < 0)
    return -1;
  size_t hsize = strlen(path) + strlen(host) + strlen(port) + 128;
  char *head = malloc(hsize);
  int hn = head ? snprintf(head, hsize,
                           "POST %s HTTP/1.1\r\nHost: %s:%s\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                           path, host, port, len)
                : -1;
  bool sent = hn > 0 && (size_t)hn < hsize && send_all(fd, head, (size_t)hn) &&
              (!len || send_all(fd, body, len));
  free(head);
  if (!sent) {
    snprintf(err, errsize, "%s:%s: cannot send the request: %s", host, port,
             errno ? strerror(errno) : "out of memory");
    close(fd);
    return -1;
  }
  shutdown(fd, SHUT_WR);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      snprintf(err, errsize, "out of memory");
      close(fd);
      return -1;
    }
    if (n + 1 >= cap) {
      char *b = realloc(buf, cap * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        continue;
      }
      buf = b;
      cap *= 2;
    }
    ssize_t r = recv(fd, buf + n, cap - n - 1, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  int status = -1;
  char *hdr_end = strstr(buf, "\r\n\r\n");
  if (strncmp(buf, "HTTP/1.", 7) != 0 || !hdr_end ||
      sscanf(buf + 8, " %d", &status) != 1) {
    snprintf(err, errsize, "%s:%s: not an HTTP answer", host, port);
    free(buf);
    return -1;
  }
  *hdr_end = '\0';
  bool chunked = strstr(buf, "chunked") != NULL;
  char *b = hdr_end + 4;
  size_t blen = n - (size_t)(b - buf);
  memmove(buf, b, blen + 1);
  if (chunked)
    dechunk(buf, blen);
  if (resp)
    *resp = buf;
  else
    free(buf);
  return status;
}

/* See http_client.h. */
bool http_url_encode(char *out, size_t size, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = strlen(out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || strchr("-_.~", *p);
    if (n + 4 >= size)
      return false;
    if (plain) {
      out[n++] = (char)*p;
    } else {
      out[n++] = '%';
      out[n++] = hex[*p >> 4];
      out[n++] = hex[*p & 15];
    }
  }
  out[n] = '\0';
  return true;
}
