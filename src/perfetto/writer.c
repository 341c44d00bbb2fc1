/*
 * writer.c - the trace writer's sequence: packets and their sequence
 * flags, interned data, the sink (a file written after every buffer),
 * the writer's life cycle (clock snapshots are writer_clocks.c's), and
 * the dispatch of records to
 * writer_host.c (threads, API calls, ranges, drops, logs), writer_gpu.c
 * (GPU work), writer_devices.c (devices and their attributes),
 * writer_code.c (modules and functions) and writer_counters.c
 * (counters).
 *
 * One writer is one packet sequence. Its first packet clears the
 * incremental state; so does the first packet after any loss the writer
 * knows of (dropped activity records, a failed write), which then also
 * says previous packets were dropped, and interned entries are written
 * again as they are next used.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "writerInt.h"

/* ------------------------------------------------------------------ */
/* Hash maps                                                            */

static size_t map_hash(uint64_t k1, uint64_t k2) {
  uint64_t h = k1 * 0x9e3779b97f4a7c15ull ^ (k2 + 0x632be59bd9b4e019ull);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return (size_t)h;
}

static bool map_grow(tw_map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  tw_entry *ne = calloc(ncap, sizeof(*ne));
  if (!ne)
    return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->e[i].used)
      continue;
    size_t j = map_hash(m->e[i].k1, m->e[i].k2) & (ncap - 1);
    while (ne[j].used)
      j = (j + 1) & (ncap - 1);
    ne[j] = m->e[i];
  }
  free(m->e);
  m->e = ne;
  m->cap = ncap;
  return true;
}

/* See writerInt.h. */
tw_entry *gp__tw_map_get(tw_map *m, uint64_t k1, uint64_t k2, bool *created) {
  if (created)
    *created = false;
  if (m->cap) {
    size_t j = map_hash(k1, k2) & (m->cap - 1);
    while (m->e[j].used) {
      if (m->e[j].k1 == k1 && m->e[j].k2 == k2)
        return &m->e[j];
      j = (j + 1) & (m->cap - 1);
    }
  }
  if ((m->n + 1) * 2 > m->cap && !map_grow(m))
    return NULL;
  size_t j = map_hash(k1, k2) & (m->cap - 1);
  while (m->e[j].used)
    j = (j + 1) & (m->cap - 1);
  tw_entry *e = &m->e[j];
  memset(e, 0, sizeof(*e));
  e->k1 = k1;
  e->k2 = k2;
  e->used = 1;
  m->n++;
  if (created)
    *created = true;
  return e;
}

/* When process or thread id started, in clock ticks after boot
 * (/proc/ID/stat, field 22); 0 if it cannot be read (it is gone). */
static uint64_t start_ticks(uint64_t id) {
  char path[48], buf[1024];
  snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)id);
  FILE *f = fopen(path, "re");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the name may hold spaces */
  unsigned long long t = 0;
  /* state ppid pgrp session tty tpgid flags minflt cminflt majflt
   * cmajflt utime stime cutime cstime priority nice threads itreal */
  if (!p || sscanf(p + 1,
                   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                   "%*d %*d %*d %*d %*d %*d %llu",
                   &t) != 1)
    return 0;
  return t;
}

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb53fe1a85b93ull;
  return x ^ (x >> 33);
}

/* See writerInt.h. A process's or a thread's track has one uuid for every
 * writer on the host, whatever its sequence: Perfetto's trace processor
 * takes a second descriptor uuid for one pid (or tid) for a new process
 * (thread) that reused the id. So it comes from the id and the time the
 * process or thread started, which tells a reused id apart. (Not in
 * deterministic mode, whose ids are not the system's.) */
uint64_t gp__tw_track_uuid(gp__tw *w, uint32_t kind, uint64_t key) {
  tw_entry *e = gp__tw_map_get(&w->track_ids, kind, key, NULL);
  if (e && e->iid)
    return e->iid;
  uint64_t uuid;
  if ((kind == TW_TRACK_PROCESS || kind == TW_TRACK_THREAD) &&
      !w->o.deterministic) {
    uuid = mix64(mix64(key << 2 | kind) ^ start_ticks(key)) | 1ull << 63;
  } else {
    uint64_t n = ++w->next_track, seq = w->o.sequence_id;
    uuid = seq < 4096 ? (n << 12) | seq : (seq << 40) | n;
  }
  if (e)
    e->iid = uuid;
  return uuid;
}

/* See writerInt.h. */
void gp__tw_map_fini(tw_map *m) {
  free(m->e);
  memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: the writer's cost, not counting the
 * time its thread waits for a core. */
static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* See writerInt.h. */
size_t gp__tw_u64_to_str(uint64_t v, char *buf) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++)
    buf[i] = tmp[n - 1 - i];
  buf[n] = '\0';
  return n;
}

/* The time a record is about, for the first snapshot and the bounds. */
static uint64_t record_time(const gp_activity *r) {
  switch (r->kind) {
  case GP_ACTIVITY_KIND_KERNEL:
    return ((const gp_activity_kernel *)r)->start;
  case GP_ACTIVITY_KIND_MEMCPY:
    return ((const gp_activity_memcpy *)r)->start;
  case GP_ACTIVITY_KIND_MEMSET:
    return ((const gp_activity_memset *)r)->start;
  case GP_ACTIVITY_KIND_API:
    return ((const gp_activity_api *)r)->start;
  case GP_ACTIVITY_KIND_MARKER:
    return ((const gp_activity_marker *)r)->timestamp;
  case GP_ACTIVITY_KIND_COUNTER:
    return ((const gp_activity_counter *)r)->timestamp;
  case GP_ACTIVITY_KIND_ENVIRONMENT:
    return ((const gp_activity_environment *)r)->timestamp;
  case GP_ACTIVITY_KIND_DROPPED:
    return ((const gp_activity_dropped *)r)->first;
  case GP_ACTIVITY_KIND_SYNCHRONIZATION:
    return ((const gp_activity_sync *)r)->start;
  case GP_ACTIVITY_KIND_RENDER_STAGE:
    return ((const gp_activity_render_stage *)r)->start;
  case GP_ACTIVITY_KIND_GPU_LOG:
    return ((const gp_activity_gpu_log *)r)->timestamp;
  case GP_ACTIVITY_KIND_GPU_MEMORY:
    return ((const gp_activity_gpu_memory *)r)->timestamp;
  case GP_ACTIVITY_KIND_DMA_FENCE:
    return ((const gp_activity_dma_fence *)r)->timestamp;
  case GP_ACTIVITY_KIND_GPU_FTRACE:
    return ((const gp_activity_gpu_ftrace *)r)->timestamp;
  case GP_ACTIVITY_KIND_MODULE:
    return r->size >= sizeof(gp_activity_module)
               ? ((const gp_activity_module *)r)->timestamp
               : 0;
  case GP_ACTIVITY_KIND_CDP_KERNEL:
    return r->size >= sizeof(gp_activity_cdp_kernel)
               ? ((const gp_activity_cdp_kernel *)r)->start
               : 0;
  case GP_ACTIVITY_KIND_PREEMPTION:
    return r->size >= sizeof(gp_activity_preemption)
               ? ((const gp_activity_preemption *)r)->timestamp
               : 0;
  case GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
    return r->size >= sizeof(gp_activity_um_counter)
               ? ((const gp_activity_um_counter *)r)->start
               : 0;
  case GP_ACTIVITY_KIND_FUNCTION:
    return r->size >= sizeof(gp_activity_function)
               ? ((const gp_activity_function *)r)->timestamp
               : 0;
  case GP_ACTIVITY_KIND_NAME:
    return r->size >= sizeof(gp_activity_name)
               ? ((const gp_activity_name *)r)->timestamp
               : 0;
  default:
    return 0;
  }
}

/* Starts a new generation of incremental state; lost: packets (or the
 * records they would have held) were lost before this point. */
/* See writerInt.h. */
void gp__tw_reset_incremental(gp__tw *w, bool lost) {
  w->gen++;
  w->clear_next = true;
  if (lost)
    w->lost_next = true;
}

/* See writer.h. */
void gp__tw_clear_incremental(gp__tw *w) {
  pthread_mutex_lock(&w->lock);
  gp__tw_reset_incremental(w, false);
  pthread_mutex_unlock(&w->lock);
}

/* ------------------------------------------------------------------ */
/* What records refer to                                                */

/* See writerInt.h. */
const char *gp__tw_string(const gp__tw *w, uint32_t id) {
  if (!w->o.ctx)
    return gp_activity_string(id);
  const char *s = w->o.ctx->string(w->o.ctx->user, id);
  return s ? s : "";
}

/* See writerInt.h. */
uint32_t gp__tw_intern(const gp__tw *w, const char *s, size_t len) {
  if (!w->o.ctx)
    return gp__string_intern_n(s, len);
  return w->o.ctx->intern(w->o.ctx->user, s, len);
}

/* See writerInt.h. */
uint32_t gp__tw_intern_cached_slow(const gp__tw *w, uint32_t *cache,
                                   const char *s) {
  if (w->o.ctx)
    return w->o.ctx->intern(w->o.ctx->user, s, strlen(s));
  uint32_t id = __atomic_load_n(cache, __ATOMIC_RELAXED);
  if (!id) {
    id = gp__string_intern(s);
    __atomic_store_n(cache, id, __ATOMIC_RELAXED);
  }
  return id;
}

/* See writerInt.h. */
uint32_t gp__tw_device_count(const gp__tw *w) {
  uint32_t n = 0;
  if (w->o.ctx)
    n = w->o.ctx->device_count(w->o.ctx->user);
  else
    gp_device_count(&n);
  return n;
}

/* See writerInt.h. */
int gp__tw_device_info(const gp__tw *w, uint32_t device_id,
                       gp_device_info *info) {
  if (w->o.ctx)
    return w->o.ctx->device_info(w->o.ctx->user, device_id, info);
  return gp_device_get_info(device_id, info);
}

/* See writerInt.h. */
int gp__tw_device_queue(const gp__tw *w, uint32_t device_id, uint32_t queue,
                        gp_device_queue_info *q) {
  if (w->o.ctx)
    return w->o.ctx->device_queue(w->o.ctx->user, device_id, queue, q);
  return gp_device_get_queue(device_id, queue, q);
}

/* ------------------------------------------------------------------ */
/* Sink                                                                 */

/* Chunks gathered for one writev(): a flush holds a few 64 KiB chunks
 * (TW_FLUSH_BYTES and one buffer's packets past it), so this is one call
 * per flush where a write() per chunk was four or more. */
#define TW_IOV 16

typedef struct sink_ctx {
  gp__tw *w;
  int rc;
  int n; /* chunks gathered in iov */
  struct iovec iov[TW_IOV];
} sink_ctx;

/* Writes iov[0, n) whole, going on after short writes; 0 or -errno. */
static int fd_writev_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t k = writev(fd, iov, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (k == 0)
      return GP_EIO;
    while (n > 0 && (size_t)k >= iov->iov_len) {
      k -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0) {
      iov->iov_base = (uint8_t *)iov->iov_base + k;
      iov->iov_len -= (size_t)k;
    }
  }
  return 0;
}

/* Writes the chunks gathered so far to the file. */
static int sink_fd_drain(sink_ctx *c) {
  int rc = fd_writev_all(c->w->o.fd, c->iov, c->n);
  c->n = 0;
  return rc;
}

static int sink_chunk(void *user, const uint8_t *data, size_t len) {
  sink_ctx *c = user;
  gp__tw *w = c->w;
  int rc = 0;
  if (w->o.fd >= 0) {
    c->iov[c->n].iov_base = (void *)data;
    c->iov[c->n].iov_len = len;
    if (++c->n == TW_IOV)
      rc = sink_fd_drain(c);
  } else if (w->o.sink) {
    rc = w->o.sink(w->o.sink_user, data, len);
  }
  c->rc = rc;
  return rc;
}

/* Writes out every complete packet held. On failure the bytes are lost:
 * a file is cut back to its last good length and the loss is marked. */
static int tw_flush(gp__tw *w) {
  uint64_t size = gp__pb_size(&w->pb);
  int rc = 0;
  if (size == 0 && !gp__pb_error(&w->pb))
    return 0;
  if (gp__pb_error(&w->pb)) {
    rc = GP_ENOMEM;
  } else {
    sink_ctx c;
    c.w = w;
    c.rc = c.n = 0;
    gp__pb_for_each(&w->pb, sink_chunk, &c);
    if (c.rc == 0 && c.n > 0)
      c.rc = sink_fd_drain(&c);
    rc = c.rc;
  }
  if (rc == 0) {
    w->off += size;
    w->st.bytes += size;
    if (w->o.sink_flushed && w->o.fd < 0 &&
        w->o.sink_flushed(w->o.sink_user) < 0)
      gp__tw_reset_incremental(w, true);
  } else {
    if (w->o.fd >= 0 && ftruncate(w->o.fd, (off_t)w->off) == 0)
      lseek(w->o.fd, (off_t)w->off, SEEK_SET);
    w->st.sink_errors++;
    if (w->st.first_error == 0)
      w->st.first_error = rc;
    gp__tw_reset_incremental(w, true);
  }
  gp__pb_writer_reset(&w->pb);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Packets and interned data                                            */

/* See writerInt.h. */
void gp__tw_pend(gp__tw *w, uint32_t kind, uint64_t iid, uint64_t a, uint64_t b,
                 const tw_entry *p) {
  if (w->npend == TW_MAX_PENDING)
    return; /* cannot happen: no packet needs that many (defensive) */
  tw_pending *q = &w->pend[w->npend++];
  q->kind = kind;
  q->iid = iid;
  q->a = a;
  q->b = b;
  q->p = p;
}

static void write_name_entry(const gp__tw *w, gp__pb_writer *pb, uint32_t field,
                             uint64_t iid, uint32_t string_id) {
  gp__pb_short e = gp__pb_begin_long(pb, field);
  gp__pb_uint(pb, GP_PB_INTERNED_IID, iid);
  gp__pb_string(pb, GP_PB_INTERNED_NAME, gp__tw_string(w, string_id));
  gp__pb_end_long(pb, e);
}

/* The packet's interned_data: the lengths as gp__pb_begin() puts them,
 * without its calls (most such packets hold one short entry). */
static void write_pending(gp__tw *w) {
  gp__pb_writer *pb = &w->pb;
  gp__pb_short data = gp__pb_begin_long(pb, GP_PB_PACKET_INTERNED_DATA);
  for (int i = 0; i < w->npend; i++) {
    const tw_pending *p = &w->pend[i];
    switch (p->kind) {
    case TW_PEND_EVENT_NAME:
      write_name_entry(w, pb, GP_PB_INTERNED_EVENT_NAMES, p->iid,
                       (uint32_t)p->a);
      break;
    case TW_PEND_CATEGORY:
      write_name_entry(w, pb, GP_PB_INTERNED_EVENT_CATEGORIES, p->iid,
                       (uint32_t)p->a);
      break;
    case TW_PEND_DEBUG_NAME:
      write_name_entry(w, pb, GP_PB_INTERNED_DEBUG_ANNOTATION_NAMES, p->iid,
                       (uint32_t)p->a);
      break;
    case TW_PEND_COUNTER_DESC:
      gp__tw_counter_write_pending(w, p);
      break;
    default:
      gp__tw_gpu_write_pending(w, p);
      break;
    }
  }
  gp__pb_end_long(pb, data);
  w->npend = 0;
}

/* See writerInt.h: the packets that are not plain, and plain ones when
 * the chunk is full. Packets without interned data are short: their
 * length takes two bytes instead of four. */
void gp__tw_packet_begin_slow(gp__tw *w, uint64_t ts, uint32_t flags) {
  gp__pb_writer *pb = &w->pb;
  bool large = (flags & TW_PACKET_LARGE) != 0;
  flags &= ~TW_PACKET_LARGE;
  if (w->npend || large) {
    w->pkt.len_at = NULL;
    gp__pb_begin(pb, GP_PB_TRACE_PACKET);
  } else {
    w->pkt = gp__pb_begin_medium(pb, GP_PB_TRACE_PACKET);
    if (!w->pkt.len_at)
      w->pkt.start = 1; /* out of memory: the error flag is set */
  }
  if (ts != TW_NO_TS)
    gp__pb_uint(pb, GP_PB_PACKET_TIMESTAMP, ts);
  if (!w->o.service_sequenced)
    gp__pb_uint(pb, GP_PB_PACKET_SEQUENCE_ID, w->o.sequence_id);
  if (w->o.machine_id && !w->o.service_sequenced)
    gp__pb_uint(pb, GP_PB_PACKET_MACHINE_ID, w->o.machine_id);
  if (w->clear_next) {
    if (w->st.packets == 0)
      gp__pb_uint(pb, GP_PB_PACKET_FIRST_PACKET_ON_SEQUENCE, 1);
    if (w->lost_next)
      gp__pb_uint(pb, GP_PB_PACKET_PREVIOUS_PACKET_DROPPED, 1);
    flags |= GP_PB_SEQ_INCREMENTAL_STATE_CLEARED;
    w->clear_next = w->lost_next = false;
  }
  if (w->npend)
    write_pending(w);
  if (flags)
    gp__pb_uint(pb, GP_PB_PACKET_SEQUENCE_FLAGS, flags);
  w->st.packets++;
}

/* See writerInt.h. */
uint64_t gp__tw_intern_string(gp__tw *w, tw_map *m, uint32_t kind,
                              uint32_t string_id) {
  tw_entry *e = gp__tw_map_get(m, string_id, 0, NULL);
  if (!e)
    return 0;
  if (!e->iid)
    e->iid = ++w->next_iid;
  if (e->gen != w->gen) {
    e->gen = w->gen;
    gp__tw_pend(w, kind, e->iid, string_id, 0, NULL);
  }
  return e->iid;
}

/* See writerInt.h. */
uint64_t gp__tw_event_name_slow(gp__tw *w, uint32_t string_id) {
  if (string_id >= w->name_cap) {
    size_t ncap = w->name_cap ? w->name_cap : 256;
    while (ncap <= string_id)
      ncap *= 2;
    struct tw_name *n = realloc(w->name_tab, ncap * sizeof(*n));
    if (!n)
      return gp__tw_intern_string(w, &w->names, TW_PEND_EVENT_NAME, string_id);
    memset(n + w->name_cap, 0, (ncap - w->name_cap) * sizeof(*n));
    w->name_tab = n;
    w->name_cap = ncap;
  }
  struct tw_name *e = &w->name_tab[string_id];
  if (!e->iid)
    e->iid = ++w->next_iid;
  if (e->gen != w->gen) {
    e->gen = w->gen;
    gp__tw_pend(w, TW_PEND_EVENT_NAME, e->iid, string_id, 0, NULL);
  }
  return e->iid;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */

static void tw_begin(gp__tw *w, uint64_t hint) {
  w->began = true;
  gp__tw_write_host_snapshot(w, hint);
  gp__tw_process_track(w);
  if (w->o.host_identity)
    gp__tw_host_identity(w, w->host_snap_ts);
  gp__tw_own_counter_tracks(w);
  uint32_t n = gp__tw_device_count(w);
  for (uint32_t d = 0; d < n && d < TW_MAX_DEVICES; d++)
    gp__tw_device_seen(w, d);
  gp__tw_gpu_info(w);
}

/* See writer.h. */
int gp__tw_create(const gp__tw_options *opts, gp__tw **out) {
  if (!opts || !out || opts->sequence_id == 0 ||
      opts->sequence_id >= (1u << 24) || opts->descriptor_mode > 2)
    return GP_EINVAL;
  /* Every device clock snapshot of this process, from now on (none for
   * another process's records). */
  uint32_t consumer = 0;
  int rc = opts->ctx ? 0 : gp__clock_consumer_open(&consumer);
  if (rc != 0)
    return rc;
  gp__tw *w = calloc(1, sizeof(*w));
  if (!w) {
    gp__clock_consumer_close(consumer);
    return GP_ENOMEM;
  }
  pthread_mutex_init(&w->lock, NULL);
  w->o = *opts;
  if (w->o.descriptor_mode == 0)
    w->o.descriptor_mode = GP_TW_DESCRIPTOR_INTERNED;
  gp__pb_writer_init(&w->pb);
  if (!w->o.service_sequenced) { /* sequence_id < 2^24: 5 bytes at most */
    uint8_t head[8] = {0};
    w->seq_head_len = (uint8_t)(gp__pb_put_uint(head, GP_PB_PACKET_SEQUENCE_ID,
                                                w->o.sequence_id) -
                                head);
    memcpy(&w->seq_head, head, 8);
  }
  w->gen = 1;
  w->clear_next = true;
  /* getpid(), not gp__pid(): a writer may be made in a fork handler,
   * before the cached pid is refreshed. */
  w->pid = opts->pid ? opts->pid : (uint32_t)getpid();
  w->vpid = 1000 * w->o.sequence_id;
  w->clock_consumer = consumer;
  *out = w;
  return 0;
}

/* See writer.h. */
void gp__tw_destroy(gp__tw *w) {
  if (!w)
    return;
  gp__clock_consumer_close(w->clock_consumer);
  gp__tw_counter_fini(w);
  gp__tw_events_fini(w);
  gp__tw_source_fini(w);
  free(w->name_tab);
  free(w->tails);
  free(w->attrs);
  tw_map *maps[] = {&w->names,     &w->categories, &w->debug_names, &w->kernels,
                    &w->contexts,  &w->queues,     &w->stages,      &w->threads,
                    &w->processes, &w->streams,    &w->apis,        &w->asyncs,
                    &w->track_ids};
  for (size_t i = 0; i < GP_ARRAY_SIZE(maps); i++)
    gp__tw_map_fini(maps[i]);
  gp__pb_writer_fini(&w->pb);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

/* See writer.h. */
int gp__tw_select_counters(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                           size_t n, bool periodic, bool instrumented) {
  pthread_mutex_lock(&w->lock);
  int rc = gp__tw_counter_select(w, device_id, ids, n, periodic, instrumented);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

/* See writer.h. */
int gp__tw_counter_id_taken(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                            size_t n, uint32_t *id, uint32_t *other) {
  pthread_mutex_lock(&w->lock);
  int rc = gp__tw_counter_taken(w, device_id, ids, n, id, other);
  pthread_mutex_unlock(&w->lock);
  return rc;
}

static void dispatch(gp__tw *w, const gp_activity *r) {
  switch (r->kind) {
  case GP_ACTIVITY_KIND_KERNEL:
    if (w->o.source_level)
      gp__tw_source_kernel(w, (const gp_activity_kernel *)r);
    if (gp__tw_work_written(w, ((const gp_activity_kernel *)r)->device_id))
      gp__tw_gpu_kernel(w, (const gp_activity_kernel *)r);
    break;
  case GP_ACTIVITY_KIND_MEMCPY:
    if (gp__tw_work_written(w, ((const gp_activity_memcpy *)r)->device_id))
      gp__tw_gpu_memcpy(w, (const gp_activity_memcpy *)r);
    break;
  case GP_ACTIVITY_KIND_MEMSET:
    if (gp__tw_work_written(w, ((const gp_activity_memset *)r)->device_id))
      gp__tw_gpu_memset(w, (const gp_activity_memset *)r);
    break;
  case GP_ACTIVITY_KIND_API:
    gp__tw_api(w, (const gp_activity_api *)r);
    if (r->size >= sizeof(gp_activity_api_submit) && w->o.render_stages)
      gp__tw_vk_submit(w, (const gp_activity_api_submit *)r);
    break;
  case GP_ACTIVITY_KIND_MARKER:
    gp__tw_marker(w, (const gp_activity_marker *)r);
    break;
  case GP_ACTIVITY_KIND_MARKER_DATA:
    if (r->size >= sizeof(gp_activity_marker_data))
      gp__tw_marker_data(w, (const gp_activity_marker_data *)r);
    break;
  case GP_ACTIVITY_KIND_DEVICE:
    gp__tw_device_seen(w, ((const gp_activity_device *)r)->device_id);
    break;
  case GP_ACTIVITY_KIND_CONTEXT:
    gp__tw_gpu_context(w, (const gp_activity_context *)r);
    break;
  case GP_ACTIVITY_KIND_NAME:
    gp__tw_name(w, (const gp_activity_name *)r);
    break;
  case GP_ACTIVITY_KIND_OVERHEAD:
    gp__tw_overhead(w, (const gp_activity_overhead *)r);
    break;
  case GP_ACTIVITY_KIND_COUNTER:
    if (w->o.counters)
      gp__tw_counter_record(w, (const gp_activity_counter *)r);
    break;
  case GP_ACTIVITY_KIND_DROPPED:
    gp__tw_dropped(w, (const gp_activity_dropped *)r);
    break;
  case GP_ACTIVITY_KIND_SYNCHRONIZATION:
    gp__tw_sync(w, (const gp_activity_sync *)r);
    break;
  case GP_ACTIVITY_KIND_RENDER_STAGE:
    if (gp__tw_work_written(w,
                            ((const gp_activity_render_stage *)r)->device_id))
      gp__tw_gpu_render_stage(w, (const gp_activity_render_stage *)r);
    break;
  case GP_ACTIVITY_KIND_GPU_LOG:
    if (w->o.gpu_log)
      gp__tw_gpu_log(w, (const gp_activity_gpu_log *)r);
    break;
  case GP_ACTIVITY_KIND_GPU_MEMORY:
    gp__tw_gpu_memory(w, (const gp_activity_gpu_memory *)r);
    break;
  case GP_ACTIVITY_KIND_DMA_FENCE:
    if (r->size >= sizeof(gp_activity_dma_fence))
      gp__tw_dma_fence(w, (const gp_activity_dma_fence *)r);
    break;
  case GP_ACTIVITY_KIND_GPU_FTRACE:
    if (r->size >= sizeof(gp_activity_gpu_ftrace))
      gp__tw_gpu_ftrace(w, (const gp_activity_gpu_ftrace *)r);
    break;
  case GP_ACTIVITY_KIND_ENVIRONMENT:
    if (w->o.counters)
      gp__tw_environment(w, (const gp_activity_environment *)r);
    break;
  case GP_ACTIVITY_KIND_CDP_KERNEL:
    if (r->size >= sizeof(gp_activity_cdp_kernel) &&
        gp__tw_work_written(w, ((const gp_activity_cdp_kernel *)r)->device_id))
      gp__tw_gpu_cdp_kernel(w, (const gp_activity_cdp_kernel *)r);
    break;
  case GP_ACTIVITY_KIND_PREEMPTION:
    if (r->size >= sizeof(gp_activity_preemption))
      gp__tw_preemption(w, (const gp_activity_preemption *)r);
    break;
  case GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
    if (r->size >= sizeof(gp_activity_um_counter))
      gp__tw_um_counter(w, (const gp_activity_um_counter *)r);
    break;
  /* Code and device attributes: only where the config asks (they are
   * also collected for the program's own use, as by gpuperf demo). */
  case GP_ACTIVITY_KIND_MODULE:
    if (w->o.code_objects && r->size >= sizeof(gp_activity_module))
      gp__tw_module(w, (const gp_activity_module *)r);
    break;
  case GP_ACTIVITY_KIND_FUNCTION:
    if (w->o.code_objects && r->size >= sizeof(gp_activity_function))
      gp__tw_function(w, (const gp_activity_function *)r);
    break;
  case GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE:
    if (w->o.code_objects && r->size >= sizeof(gp_activity_device_attribute))
      gp__tw_device_attribute(w, (const gp_activity_device_attribute *)r);
    break;
  /* Per-kernel events and metrics (writer_events.c). */
  case GP_ACTIVITY_KIND_EVENT:
    if (r->size >= sizeof(gp_activity_event))
      gp__tw_event_record(w, (const gp_activity_event *)r);
    break;
  case GP_ACTIVITY_KIND_METRIC:
    if (r->size >= sizeof(gp_activity_metric))
      gp__tw_metric_record(w, (const gp_activity_metric *)r);
    break;
  case GP_ACTIVITY_KIND_EVENT_INSTANCE:
    if (r->size >= sizeof(gp_activity_event_instance))
      gp__tw_event_instance(w, (const gp_activity_event_instance *)r);
    break;
  case GP_ACTIVITY_KIND_METRIC_INSTANCE:
    if (r->size >= sizeof(gp_activity_metric_instance))
      gp__tw_metric_instance(w, (const gp_activity_metric_instance *)r);
    break;
  default: /* the source-level kinds where asked; kinds we do not know */
    if (w->o.source_level)
      gp__tw_source_record(w, r);
    break;
  }
}

/* Periodic packets at the end of a buffer: clocks and our overhead. */
static void periodic(gp__tw *w) {
  gp__tw_counter_flush(w);
  gp__tw_untimed_flush(w);
  gp__tw_gpu_info(w);
  gp__tw_write_device_snapshots(w, w->o.deterministic ? w->max_ts : UINT64_MAX);
  if (w->max_ts >= w->host_snap_ts + TW_HOST_SNAPSHOT_NS)
    gp__tw_write_host_snapshot(w, w->max_ts);
  if (!w->o.deterministic) {
    uint64_t now = mono_ns();
    if (now - w->last_overhead_real >= TW_OVERHEAD_PERIOD_NS) {
      w->last_overhead_real = now;
      gp__tw_own_counter(w, TW_COUNTER_OVERHEAD, gp__tw_now_ts(w),
                         w->st.writer_ns);
    }
  }
}

/* See writer.h. */
void gp__tw_consume(gp__tw *w, const uint8_t *buffer, size_t valid_size) {
  pthread_mutex_lock(&w->lock);
  if (w->finished) {
    pthread_mutex_unlock(&w->lock);
    return;
  }
  uint64_t t0 = cpu_ns();
  if (!w->began) {
    const gp_activity *r = NULL;
    uint64_t hint = 0;
    while (!hint && gp_activity_get_next_record(buffer, valid_size, &r) == 0)
      hint = record_time(r);
    tw_begin(w, hint);
  }
  uint32_t k = 0;
  /* The records up to the first whose size cannot be trusted, checked as
   * gp__record_at() checks them but with the bounds folded: a size below
   * the header's wraps around and fails the one compare with the room
   * left. (r was a variable whose address was taken, kept in memory.) */
  const uint8_t *p = buffer, *end = buffer ? buffer + valid_size : NULL;
  while ((size_t)(end - p) >= sizeof(gp_activity)) {
    const gp_activity *r = (const gp_activity *)p;
    uint32_t size = r->size;
    if ((size_t)size - sizeof(gp_activity) >
            (size_t)(end - p) - sizeof(gp_activity) ||
        (size & 7u))
      break;
    dispatch(w, r);
    /* Bound the memory held: write out now and then (whole packets). */
    if ((++k & 255) == 0 && gp__pb_size(&w->pb) > TW_FLUSH_BYTES)
      tw_flush(w);
    p += size;
  }
  w->st.records += k;
  periodic(w);
  tw_flush(w);
  w->st.writer_ns += cpu_ns() - t0;
  pthread_mutex_unlock(&w->lock);
}

/* See writer.h. */
int gp__tw_process_counters(gp__tw *w, uint64_t ts,
                            const gp__tw_process_counter *c, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (c[i].key >= 64)
      return GP_EINVAL;
  pthread_mutex_lock(&w->lock);
  if (!w->finished) {
    uint64_t t0 = cpu_ns();
    if (!w->began)
      tw_begin(w, ts);
    for (size_t i = 0; i < n; i++)
      gp__tw_process_counter_value(w, ts, &c[i]);
    tw_flush(w);
    w->st.writer_ns += cpu_ns() - t0;
  }
  pthread_mutex_unlock(&w->lock);
  return 0;
}

/* See writer.h. */
int gp__tw_finish(gp__tw *w) {
  pthread_mutex_lock(&w->lock);
  if (w->finished) {
    int rc = w->st.first_error;
    pthread_mutex_unlock(&w->lock);
    return rc;
  }
  uint64_t t0 = cpu_ns();
  if (!w->began)
    tw_begin(w, 0);
  gp__tw_events_flush(w);
  gp__tw_counter_flush(w);
  gp__tw_gpu_info(w);
  gp__tw_write_device_snapshots(w, UINT64_MAX);
  /* Nothing more is read: what the clocks kept for us goes now. */
  gp__clock_consumer_close(w->clock_consumer);
  w->clock_consumer = 0;
  uint64_t end = gp__tw_now_ts(w);
  if (end > w->host_snap_ts)
    gp__tw_write_host_snapshot(w, end);
  gp__tw_own_counter(w, TW_COUNTER_DROPPED, end, w->st.dropped);
  gp__tw_untimed_flush(w);
  if (!w->o.deterministic)
    gp__tw_own_counter(w, TW_COUNTER_OVERHEAD, end,
                       w->st.writer_ns + (cpu_ns() - t0));
  tw_flush(w);
  w->st.writer_ns += cpu_ns() - t0;
  w->finished = true;
  int rc = w->st.first_error;
  pthread_mutex_unlock(&w->lock);
  return rc;
}

/* See writer.h. */
void gp__tw_get_stats(gp__tw *w, gp__tw_stats *st) {
  pthread_mutex_lock(&w->lock);
  *st = w->st;
  pthread_mutex_unlock(&w->lock);
}
