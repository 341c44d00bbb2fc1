/*
 * buffers.c - the buffers CUPTI writes its records into, and what happens
 * when it hands one back.
 *
 * CUPTI asks for a buffer whenever it needs one (on any thread) and gives
 * it back full, or partial at a flush, on its own worker thread or on the
 * thread that flushes. The buffers come from a bounded pool: at most
 * `limit` are out at once, idle ones are reused. When the pool is
 * exhausted the request is declined, as CUPTI's contract allows; CUPTI
 * then drops records and counts them, and those counts are carried into
 * ours (GP_DROP_SOURCE) when a buffer completes, so that a reader sees
 * every loss.
 *
 * A completed buffer is translated record by record (translate.c) on the
 * completing thread, then returned to the pool. Before that the CUPTI
 * clock gets a fresh snapshot (at most every 100 ms), so that the mapping
 * of the timestamps in the buffer is interpolated, not extrapolated.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

#define MIN_SIZE (64u * 1024u)
#define MAX_SIZE (1u << 30)
#define SNAPSHOT_INTERVAL_NS 100000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static size_t buf_size = 8u << 20;
static size_t buf_limit = 16;
static uint8_t **idle; /* up to buf_limit buffers of buf_size */
static size_t num_idle;
static gp__cuda_buffer_stats stats;

/* See cudaInt.h. */
int gp__cuda_buffers_configure(size_t size, size_t limit) {
  if (size < MIN_SIZE || size > MAX_SIZE || limit == 0 || limit > 4096)
    return GP_ERANGE;
  pthread_mutex_lock(&lock);
  if (stats.outstanding > 0) {
    pthread_mutex_unlock(&lock);
    return GP_EBUSY;
  }
  uint8_t **n = realloc(idle, limit * sizeof(*n));
  if (!n) {
    pthread_mutex_unlock(&lock);
    return GP_ENOMEM;
  }
  idle = n;
  if (size != buf_size) {
    for (size_t i = 0; i < num_idle; i++)
      free(idle[i]);
    num_idle = 0;
  }
  while (num_idle > limit)
    free(idle[--num_idle]);
  buf_size = size;
  buf_limit = limit;
  pthread_mutex_unlock(&lock);
  return 0;
}

/* See cudaInt.h. */
void CUPTIAPI gp__cuda_buffer_request(uint8_t **buffer, size_t *size,
                                      size_t *max_num_records) {
  uint8_t *b = NULL;
  size_t sz;
  pthread_mutex_lock(&lock);
  sz = buf_size;
  stats.requested++;
  if (num_idle > 0) {
    b = idle[--num_idle];
  } else if (stats.outstanding < buf_limit) {
    b = aligned_alloc(8, sz);
  }
  if (b)
    stats.outstanding++;
  else
    stats.declined++;
  pthread_mutex_unlock(&lock);
  *buffer = b;
  *size = b ? sz : 0;
  *max_num_records = 0;
}

static void give_back(uint8_t *buffer, size_t size) {
  pthread_mutex_lock(&lock);
  if (stats.outstanding > 0)
    stats.outstanding--;
  if (!idle)
    idle = malloc(buf_limit * sizeof(*idle));
  /* A buffer of an older size (reconfigured since) is not kept. */
  if (idle && num_idle < buf_limit && size == buf_size) {
    idle[num_idle++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

/* See cudaInt.h. */
void gp__cuda_carry_drops(uint32_t cupti_context, uint32_t stream_id,
                          size_t count) {
  if (count == 0)
    return;
  uint32_t ctx = 0;
  if (cupti_context != 0) {
    uint32_t dev = gp__cuda_context_device(cupti_context);
    if (dev != UINT32_MAX)
      ctx = gp__cuda_context(cupti_context, dev, 0);
  }
  GP_CORE->activity_add_drops(GP_ACTIVITY_KIND_INVALID, GP_DROP_SOURCE, ctx,
                              ctx ? stream_id : 0, count);
  pthread_mutex_lock(&lock);
  stats.cupti_dropped += count;
  pthread_mutex_unlock(&lock);
}

static void emit_overhead(uint64_t start, uint64_t end, uint64_t bytes) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_OVERHEAD, 0))
    return;
  gp_activity_overhead *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_OVERHEAD, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->start = start;
  r->end = end;
  r->overhead_kind = GP_OVERHEAD_BUFFER_FLUSH;
  r->process_id = GP_CORE->pid();
  r->thread_id = GP_CORE->tid();
  r->reserved0 = 0;
  r->bytes = bytes;
  GP_CORE->activity_commit(r);
}

/* See cudaInt.h. */
void CUPTIAPI gp__cuda_buffer_complete(CUcontext ctx, uint32_t stream_id,
                                       uint8_t *buffer, size_t size,
                                       size_t valid_size) {
  uint64_t t0 = gp_get_timestamp();
  gp__cuda_clock_refresh(SNAPSHOT_INTERVAL_NS);
  gp__cuda_xlate_stats st = {0};
  if (buffer && valid_size > 0)
    gp__cuda_translate_buffer(buffer, valid_size, &st);

  size_t dropped = 0;
  uint32_t cupti_ctx = 0;
  if (ctx)
    cuptiGetContextId(ctx, &cupti_ctx);
  if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) ==
          CUPTI_SUCCESS &&
      dropped > 0)
    gp__cuda_carry_drops(cupti_ctx, stream_id, dropped);

  pthread_mutex_lock(&lock);
  stats.completed++;
  stats.bytes += valid_size;
  stats.xlate.records += st.records;
  stats.xlate.translated += st.translated;
  stats.xlate.disabled += st.disabled;
  stats.xlate.unknown += st.unknown;
  stats.xlate.dropped += st.dropped;
  pthread_mutex_unlock(&lock);
  if (buffer)
    give_back(buffer, size);
  if (valid_size > 0)
    emit_overhead(t0, gp_get_timestamp(), valid_size);
}

/* See cudaInt.h. */
void gp__cuda_buffers_stats(gp__cuda_buffer_stats *out) {
  pthread_mutex_lock(&lock);
  *out = stats;
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_buffers_release(void) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < num_idle; i++)
    free(idle[i]);
  num_idle = 0;
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
int gp__cuda_replay(const void *records, size_t size) {
  if (!records)
    return GP_EINVAL;
  GP_CORE->activate();
  uint8_t *buf = NULL;
  size_t cap = 0, max_records = 0;
  gp__cuda_buffer_request(&buf, &cap, &max_records);
  if (!buf)
    return GP_ENOMEM;
  if (size > cap) {
    gp__cuda_buffer_complete(NULL, 0, buf, cap, 0);
    return GP_ESIZE;
  }
  memcpy(buf, records, size);
  gp__cuda_buffer_complete(NULL, 0, buf, cap, size);
  return 0;
}
