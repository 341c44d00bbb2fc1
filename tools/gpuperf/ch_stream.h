/*
 * ch_stream.h - a sender thread for `gpuperf export --to clickhouse://`
 * (ch_stream.c): batches of rows made by the import's thread are queued
 * here and sent as INSERTs by one thread of their own, so that the
 * import goes on while a batch is on the wire. The queue holds a bounded
 * number of bytes: a producer that finds it full waits (backpressure),
 * so what the export holds does not grow with the trace.
 */
#ifndef GPUPERF_CH_STREAM_H
#define GPUPERF_CH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "clickhouse.h"

typedef struct ch_stream ch_stream;

/*
 * Starts the sender for t, whose connections it uses alone until
 * ch_stream_finish (the caller sends nothing meanwhile). max_bytes: the
 * most the queue holds, the batch being sent included (one batch is
 * always taken). Returns 0 with *out set, or an exit status (printed).
 */
int ch_stream_start(ch_target *t, size_t max_bytes, ch_stream **out);

/*
 * Queues body (len bytes, malloc'd; ownership passes to the stream
 * whatever the result) for `query` (borrowed until ch_stream_finish) on
 * server h: rows of them. Waits while the queue is full. Returns 0, or
 * the exit status of an earlier failed INSERT (the export must stop).
 */
int ch_stream_put(ch_stream *s, int h, const char *query, char *body,
                  size_t len, uint64_t rows);

/* Whether an INSERT failed already (nothing more will be sent). */
int ch_stream_status(ch_stream *s);

/* The rows whose INSERTs have succeeded so far (NULL: 0). */
uint64_t ch_stream_sent(ch_stream *s);

/*
 * Sends what is queued, stops the thread and frees s (NULL: 0). Returns
 * 0 or the exit status of the first failed INSERT; *rows (may be NULL)
 * gets the rows sent, *first_s the CLOCK_MONOTONIC time the first
 * INSERT succeeded (0 if none).
 */
int ch_stream_finish(ch_stream *s, uint64_t *rows, double *first_s);

#endif /* GPUPERF_CH_STREAM_H */
