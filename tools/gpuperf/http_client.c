/*
 * http_client.c - HTTP(S) POSTs through libcurl (see http_client.h).
 *
 * One easy handle per client, reused for every request, so libcurl keeps
 * its connection open between requests (keep-alive) and reconnects by
 * itself when the server has closed it. TLS, proxies from the environment
 * and name resolution are libcurl's. What is ours: the deadline of each
 * request over all its tries, which failures are tried again, and the
 * count of connections for the export's summary.
 */
#include "http_client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct http_client {
  CURL *curl;
  struct curl_slist *headers;
  char *base;
  http_options o;
  long connects;
  char errbuf[CURL_ERROR_SIZE];
};

typedef struct buf {
  char *p;
  size_t n, cap;
  bool oom;
} buf;

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg) {
  buf *b = arg;
  size_t n = size * nmemb;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->n + n + 1 > cap)
      cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = true;
      return 0; /* libcurl then fails the transfer */
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, data, n);
  b->n += n;
  b->p[b->n] = '\0';
  return n;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void) {
  global_rc = curl_global_init(CURL_GLOBAL_ALL);
}

/* See http_client.h. */
int http_client_create(const char *base_url, const http_options *o,
                       http_client **out, char *err, size_t errsize) {
  *out = NULL;
  pthread_once(&global_once, global_init);
  if (global_rc != CURLE_OK) {
    snprintf(err, errsize, "libcurl: %s", curl_easy_strerror(global_rc));
    return -1;
  }
  http_client *c = calloc(1, sizeof(*c));
  if (!c || !(c->base = strdup(base_url)) || !(c->curl = curl_easy_init())) {
    snprintf(err, errsize, "libcurl: cannot set up a connection");
    http_client_destroy(c);
    return -1;
  }
  c->o = *o;
  /* The strings are copied: libcurl copies USERAGENT and CAINFO, the
   * headers below. */
  c->o.user = c->o.password = c->o.user_agent = c->o.cainfo = NULL;
  char h[600];
  /* An empty "Expect:" stops libcurl from waiting for 100-continue. */
  struct curl_slist *l = curl_slist_append(NULL, "Expect:");
  if (l && o->user &&
      snprintf(h, sizeof(h), "X-ClickHouse-User: %s", o->user) < (int)sizeof(h))
    l = curl_slist_append(l, h);
  if (l && o->password &&
      snprintf(h, sizeof(h), "X-ClickHouse-Key: %s", o->password) <
          (int)sizeof(h))
    l = curl_slist_append(l, h);
  if (!l) {
    snprintf(err, errsize, "libcurl: out of memory");
    http_client_destroy(c);
    return -1;
  }
  c->headers = l;
  CURL *e = c->curl;
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  if (o->user_agent)
    curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent);
  if (o->cainfo)
    curl_easy_setopt(e, CURLOPT_CAINFO, o->cainfo);
  *out = c;
  return 0;
}

/* See http_client.h. */
void http_client_destroy(http_client *c) {
  if (!c)
    return;
  if (c->curl)
    curl_easy_cleanup(c->curl);
  curl_slist_free_all(c->headers);
  free(c->base);
  free(c);
}

/* See http_client.h. */
long http_client_connects(const http_client *c) {
  return c->connects;
}

static long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a failed try may be repeated: a connection never made, always;
 * one that broke or timed out, only if the request may run twice. */
static bool may_retry(CURLcode rc, long status, bool idempotent) {
  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
    return true;
  if (!idempotent)
    return false;
  if (rc == CURLE_OK)
    return status == 502 || status == 503 || status == 504;
  return rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_SEND_ERROR ||
         rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING;
}

/* See http_client.h. */
int http_post(http_client *c, const char *path, const char *body, size_t len,
              bool idempotent, char **resp, char *err, size_t errsize) {
  if (resp)
    *resp = NULL;
  size_t ulen = strlen(c->base) + strlen(path) + 1;
  char *url = malloc(ulen);
  if (!url) {
    snprintf(err, errsize, "%s: out of memory", c->base);
    return -1;
  }
  snprintf(url, ulen, "%s%s", c->base, path);
  CURL *e = c->curl;
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, body ? body : "");
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  long deadline = now_ms() + c->o.timeout_ms, pause_ms = 100, status = -1;
  buf b = {0};
  for (int attempt = 0;; attempt++) {
    long left = deadline - now_ms();
    if (left < 1)
      left = 1;
    b.n = 0;
    if (b.p)
      b.p[0] = '\0';
    c->errbuf[0] = '\0';
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, left);
    CURLcode rc = curl_easy_perform(e);
    long nc = 0;
    if (curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &nc) == CURLE_OK)
      c->connects += nc;
    status = -1;
    if (rc == CURLE_OK)
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    else if (b.oom)
      snprintf(err, errsize, "%s: out of memory for the answer", c->base);
    else
      snprintf(err, errsize, "%s: %s%s%s%s", c->base, curl_easy_strerror(rc),
               c->errbuf[0] ? " (" : "", c->errbuf, c->errbuf[0] ? ")" : "");
    if (b.oom || attempt >= c->o.retries || !may_retry(rc, status, idempotent))
      break;
    if (now_ms() + pause_ms >= deadline)
      break;
    struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    pause_ms *= 2;
  }
  free(url);
  if (status < 0 || !resp)
    free(b.p);
  else
    *resp = b.p;
  return (int)status;
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
