/*
 * ch_stream.c - the sender thread of a streamed ClickHouse export (see
 * ch_stream.h). One thread, one queue: batches go out in the order they
 * were queued, each an INSERT that is not repeated after an unclear
 * failure (clickhouse.c's rule). After the first failure the rest is
 * dropped and every producer is told, so the import stops early.
 */
#include "ch_stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"

#define QCAP 64 /* batches queued at most, whatever their size */

typedef struct batch {
  int h;
  const char *query;
  char *body;
  size_t len;
  uint64_t rows;
} batch;

struct ch_stream {
  ch_target *t;
  size_t max_bytes;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t more, room;
  batch q[QCAP]; /* q[head .. head + n), the first being sent */
  int head, n;
  size_t bytes; /* queued, the batch being sent included */
  bool closing;
  int status;
  uint64_t rows;
  double first_s;
};

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sender(void *arg) {
  ch_stream *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (s->n == 0 && !s->closing)
      pthread_cond_wait(&s->more, &s->mu);
    if (s->n == 0)
      break;
    batch b = s->q[s->head];
    int failed = s->status;
    pthread_mutex_unlock(&s->mu);
    int st = failed ? failed
                    : ch_exec(s->t, b.h, b.query, b.body, b.len, false, NULL);
    free(b.body);
    double now = mono_s();
    pthread_mutex_lock(&s->mu);
    s->head = (s->head + 1) % QCAP;
    s->n--;
    s->bytes -= b.len;
    if (st && !s->status)
      s->status = st;
    if (!st) {
      s->rows += b.rows;
      if (s->first_s == 0)
        s->first_s = now;
    }
    pthread_cond_broadcast(&s->room);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* See ch_stream.h. */
int ch_stream_start(ch_target *t, size_t max_bytes, ch_stream **out) {
  ch_stream *s = calloc(1, sizeof(*s));
  if (!s)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  s->t = t;
  s->max_bytes = max_bytes;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->more, NULL);
  pthread_cond_init(&s->room, NULL);
  if (pthread_create(&s->thread, NULL, sender, s) != 0) {
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->more);
    pthread_cond_destroy(&s->room);
    free(s);
    return cli_error(CLI_BAD_INPUT, "cannot start the sender thread");
  }
  *out = s;
  return 0;
}

/* See ch_stream.h. */
int ch_stream_put(ch_stream *s, int h, const char *query, char *body,
                  size_t len, uint64_t rows) {
  pthread_mutex_lock(&s->mu);
  while (!s->status &&
         (s->n == QCAP || (s->n > 0 && s->bytes + len > s->max_bytes)))
    pthread_cond_wait(&s->room, &s->mu);
  int st = s->status;
  if (!st) {
    s->q[(s->head + s->n) % QCAP] = (batch){h, query, body, len, rows};
    s->n++;
    s->bytes += len;
    pthread_cond_signal(&s->more);
  }
  pthread_mutex_unlock(&s->mu);
  if (st)
    free(body);
  return st;
}

/* See ch_stream.h. */
int ch_stream_status(ch_stream *s) {
  pthread_mutex_lock(&s->mu);
  int st = s->status;
  pthread_mutex_unlock(&s->mu);
  return st;
}

/* See ch_stream.h. */
uint64_t ch_stream_sent(ch_stream *s) {
  if (!s)
    return 0;
  pthread_mutex_lock(&s->mu);
  uint64_t n = s->rows;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* See ch_stream.h. */
int ch_stream_finish(ch_stream *s, uint64_t *rows, double *first_s) {
  if (rows)
    *rows = 0;
  if (first_s)
    *first_s = 0;
  if (!s)
    return 0;
  pthread_mutex_lock(&s->mu);
  s->closing = true;
  pthread_cond_signal(&s->more);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  int st = s->status;
  if (rows)
    *rows = s->rows;
  if (first_s)
    *first_s = s->first_s;
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->more);
  pthread_cond_destroy(&s->room);
  free(s);
  return st;
}
