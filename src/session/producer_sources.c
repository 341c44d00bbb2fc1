/*
 * producer_sources.c - the data sources of gpuperf's Perfetto producer
 * (producerInt.h): each instance the service sets up and starts is a
 * session (the same config code as `gpuperf record -c`) whose writer's
 * bytes go into the shared memory buffer, one writer id per instance;
 * flushes commit what is complete, a full buffer waits as the data
 * source's buffer_exhausted_policy allows and then drops and counts.
 * When the service goes away, running instances become orphans whose
 * packets are counted and not kept (producerInt.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "perfetto/proto.h"
#include "perfetto/tconfig.h"
#include "producerInt.h"

/* Complete chunks sent per CommitData. One: each chunk goes to the service
 * as soon as it is full, as Perfetto's own writers do, so that a service
 * that dies has as little as possible of ours in its shared memory. */
#define COMMIT_BATCH 1
#define STALL_DROP_NS 100000000ull   /* SMB full, drop policy: 100 ms */
#define STALL_STALL_NS 2000000000ull /* SMB full, stall policies: 2 s */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Packets begun in chunks (the oldest first) of a writer, read from
 * their headers, and count and flags of the chunk it is writing (count 0:
 * none): what no service will read when they cannot be committed. The
 * packet the first chunk continues is lost with them (its start, sent,
 * is discarded without its end) unless it was counted already, with the
 * commit before that failed. The shared memory is still mapped. */
static uint64_t packets_in(const gp__prod_instance *in,
                           const gp__ipc_chunk_ref *refs, size_t n,
                           unsigned open_count, unsigned open_flags) {
  const gp__smb *m = &gp__prod.smb;
  uint64_t lost = 0;
  for (size_t i = 0; i <= n; i++) {
    unsigned count = open_count, flags = open_flags;
    if (i < n) {
      const uint8_t *c =
          m->base + refs[i].page * m->page_size + GP_SMB_PAGE_HEADER;
      uint16_t v = __atomic_load_n((const uint16_t *)(const void *)(c + 6),
                                   __ATOMIC_ACQUIRE);
      count = v & GP_SMB_MAX_FRAGMENTS;
      flags = v >> 10;
    }
    bool cont = (flags & GP_SMB_FIRST_CONTINUES) && count > 0;
    lost += count - (cont ? 1 : 0);
    if (i == 0 && cont && !in->commit_failed)
      lost++;
  }
  return lost;
}

/* Commits n chunks of an instance; those that cannot be sent are lost,
 * and counted. Holds its lock. */
static void commit_some(gp__prod_instance *in, const gp__ipc_chunk_ref *refs,
                        size_t n, uint64_t flush_id) {
  if (gp__prod_commit(refs, n, flush_id)) {
    in->commit_failed = false;
    return;
  }
  if (n == 0)
    return;
  in->lost += packets_in(in, refs, n, 0, 0);
  in->commit_failed = true;
}

/* Commits the complete chunks an instance has waiting. Holds its lock. */
static void commit_done(gp__prod_instance *in, uint64_t flush_id) {
  gp__ipc_chunk_ref refs[64];
  size_t n;
  do {
    n = gp__smb_take_done(&in->w, refs, GP_ARRAY_SIZE(refs));
    commit_some(in, refs, n, in->w.ndone ? 0 : flush_id);
  } while (in->w.ndone > 0);
  if (n == 0 && flush_id)
    gp__prod_commit(NULL, 0, flush_id);
}

/* ------------------------------------------------------------------ */
/* The sink: a session's packets into the SMB                          */

/* SMB full: commit what is waiting and wait for the service, as long as
 * the data source's buffer_exhausted_policy allows. */
static bool starved(void *user, unsigned attempt) {
  gp__prod_instance *in = user;
  if (attempt == 0) {
    in->stall_start_ns = mono_ns();
    pthread_mutex_lock(&gp__prod.lock);
    gp__prod.st.stalls++;
    pthread_mutex_unlock(&gp__prod.lock);
  }
  commit_done(in, 0);
  uint64_t limit = in->policy >= 2 ? STALL_STALL_NS : STALL_DROP_NS;
  if (__atomic_load_n(&gp__prod.dead, __ATOMIC_ACQUIRE) ||
      mono_ns() - in->stall_start_ns > limit)
    return false;
  if (attempt < 8) {
    sched_yield();
  } else {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  return true;
}

/* The writer's bytes are Trace fields: tag 0x0a (packet, field 1), a
 * varint length, the TracePacket. They may be cut anywhere. */
static int sink_write(void *user, const uint8_t *d, size_t n) {
  gp__prod_instance *in = user;
  pthread_mutex_lock(&in->lock);
  while (n > 0) {
    if (in->pkt_left == 0) {
      if (in->nhdr >= sizeof(in->hdr)) { /* defensive: never happens */
        in->nhdr = 0;
        in->w.dropped++;
      }
      in->hdr[in->nhdr++] = *d++;
      n--;
      uint64_t tag, len;
      const uint8_t *end = in->hdr + in->nhdr;
      size_t k = gp__pb_get_varint(in->hdr, end, &tag);
      size_t l = k ? gp__pb_get_varint(in->hdr + k, end, &len) : 0;
      if (k == 0 || l == 0)
        continue; /* more header bytes to come */
      in->nhdr = 0;
      if (tag != ((GP_PB_TRACE_PACKET << 3) | GP_PB_LEN)) {
        in->w.dropped++; /* defensive: the writer writes only packets */
        continue;
      }
      if (in->orphan)
        in->lost++; /* no service to take it */
      else
        gp__smb_packet_begin(&in->w, (size_t)len);
      in->pkt_left = (size_t)len;
      continue;
    }
    size_t k = n < in->pkt_left ? n : in->pkt_left;
    if (!in->orphan)
      gp__smb_packet_write(&in->w, d, k);
    in->pkt_left -= k;
    d += k;
    n -= k;
    if (in->pkt_left == 0 && !in->orphan && in->w.ndone >= COMMIT_BATCH)
      commit_done(in, 0);
  }
  pthread_mutex_unlock(&in->lock);
  return 0;
}

/* After each flush of the writer: packets dropped make it start over. */
static int sink_flushed(void *user) {
  gp__prod_instance *in = user;
  pthread_mutex_lock(&in->lock);
  bool lost = in->w.dropped != in->drops_seen;
  in->drops_seen = in->w.dropped;
  pthread_mutex_unlock(&in->lock);
  return lost ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */

/* An instance of this service (an orphan's id was another service's). */
static gp__prod_instance *find(uint64_t id) {
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (gp__prod.inst[i].used && !gp__prod.inst[i].orphan &&
        gp__prod.inst[i].id == id)
      return &gp__prod.inst[i];
  return NULL;
}

static gp__prod_instance *setup(uint64_t id, const uint8_t *cfg, size_t len) {
  gp__prod_instance *in = find(id);
  if (in)
    return in;
  for (int i = 0; i < MAX_SESSIONS && !in; i++)
    if (!gp__prod.inst[i].used)
      in = &gp__prod.inst[i];
  if (!in) {
    gp__prod_warn("data source instance %llu refused: %d are running already",
                  (unsigned long long)id, MAX_SESSIONS);
    return NULL;
  }
  gp__ipc_ds_config ds;
  char err[256] = "";
  gp_trace_config *c = NULL;
  int rc = gp__ipc_ds_config_decode(cfg, len, &ds);
  if (rc == 0)
    rc = gp__trace_config_from_source(cfg, len, &c, err, sizeof(err));
  if (rc != 0) {
    gp__prod_warn("the service's config of data source %.*s is refused: %s",
                  (int)(ds.name_len < 64 ? ds.name_len : 64),
                  ds.name ? ds.name : "?", *err ? err : gp_strerror(rc));
    return NULL;
  }
  memset(in, 0, sizeof(*in));
  pthread_mutex_init(&in->lock, NULL);
  in->used = true;
  in->id = id;
  in->cfg = c;
  in->policy = ds.buffer_exhausted_policy;
  snprintf(in->name, sizeof(in->name), "%.*s", (int)ds.name_len, ds.name);
  uint32_t target = ds.target_buffer;
  if (gp__prod.have_smb && gp__prod.next_writer < GP_SMB_MAX_WRITER_ID) {
    gp__smb_writer_init(&in->w, &gp__prod.smb, ++gp__prod.next_writer, target,
                        starved, in);
    in->have_writer = true;
  }
  return in;
}

/* The first instance a service starts after it came back carries what
 * was lost while none was there: a counter of the process, its value the
 * packets lost, at the time the service answered again (so the trace that
 * follows says it, in Perfetto's trace processor as in ours). */
static void report_lost(gp__prod_instance *in, uint64_t lost, uint64_t until,
                        uint64_t away_ns) {
  gp__tw_process_counter c = {GP_PROD_LOST_KEY,
                              "gpuperf lost while no tracing service", false,
                              (int64_t)lost};
  gp__session_write_process_counters(in->s, until, &c, 1);
  gp__prod_warn("%llu packets were lost while no tracing service was there "
                "(%.1f s); the counter \"%s\" of this trace says so",
                (unsigned long long)lost, (double)away_ns / 1e9, c.name);
}

static void start(gp__prod_instance *in) {
  if (in->s)
    return;
  if (!in->have_writer) {
    gp__prod_warn(
        "data source %s not started: no shared memory from the service",
        in->name);
    return;
  }
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  gp__ipc_put_register_writer(&gp__prod.args, in->w.id, in->w.target_buffer);
  gp__prod_invoke_locked(M_REGISTER_WRITER, true);
  pthread_mutex_unlock(&gp__prod.send_lock);
  gp__session_sink sink = {sink_write, sink_flushed, in};
  char err[256] = "";
  gp_session_options o = {0};
  /* A sequence of its own per process and instance: unique track uuids. */
  o.sequence_id = (uint32_t)(((uint64_t)getpid() * MAX_SESSIONS +
                              (uint64_t)(in - gp__prod.inst)) %
                             ((1u << 24) - 2)) +
                  1;
  o.error = err;
  o.error_size = sizeof(err);
  int rc = gp__session_start_sink(in->cfg, &o, &sink, &in->s);
  if (rc != 0) {
    gp__prod_warn("data source %s not started: %s", in->name,
                  *err ? err : gp_strerror(rc));
    in->s = NULL;
    return;
  }
  gp__prod_count_orphans(); /* this one runs: they may stop */
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.st.started++;
  uint64_t lost = gp__prod.lost_pending;
  uint64_t until = gp__prod.lost_until_ts;
  uint64_t away = gp__prod.lost_until_mono - gp__prod.lost_since_mono;
  gp__prod.lost_pending = 0;
  pthread_mutex_unlock(&gp__prod.lock);
  if (lost)
    report_lost(in, lost, until, away);
}

/* Stops and forgets an instance: its last packets are committed before
 * the service, if it asked for the stop, is told it stopped. Unasked (the
 * program ends) the service is not told: Perfetto's takes a stop it did
 * not ask for as an error of state, and learns of the end when we
 * disconnect. */
static uint64_t stop(gp__prod_instance *in, bool asked) {
  if (in->orphan)
    asked = false; /* the service that asked is gone */
  if (in->s) {
    int rc = gp_session_stop(in->s);
    if (rc != 0)
      gp__prod_warn("data source %s: %s", in->name, gp_strerror(rc));
    gp_session_destroy(in->s);
    in->s = NULL;
  }
  uint64_t dropped = 0;
  if (in->have_writer) {
    pthread_mutex_lock(&in->lock);
    gp__smb_complete(&in->w);
    commit_done(in, 0);
    dropped = in->w.dropped;
    pthread_mutex_lock(&gp__prod.lock);
    gp__prod.st.packets += in->w.packets;
    gp__prod.st.bytes += in->w.bytes;
    gp__prod.st.dropped += dropped;
    pthread_mutex_unlock(&gp__prod.lock);
    gp__smb_writer_fini(&in->w);
    pthread_mutex_unlock(&in->lock);
    gp__prod_notify(M_UNREGISTER_WRITER, in->w.id);
  }
  if (dropped)
    gp__prod_warn("data source %s: %llu packets dropped: the tracing service's "
                  "shared memory was full",
                  in->name, (unsigned long long)dropped);
  if (asked)
    gp__prod_notify(M_STOPPED, in->id);
  uint64_t lost = in->lost; /* the session has written its last */
  gp_trace_config_destroy(in->cfg);
  pthread_mutex_destroy(&in->lock);
  memset(in, 0, sizeof(*in));
  return lost;
}

static bool listed(const gp__ipc_command *c, uint64_t id) {
  if (c->all_ids)
    return true;
  for (uint32_t i = 0; i < c->nids; i++)
    if (c->ids[i] == id)
      return true;
  return false;
}

/* Everything written so far goes to the service, then the flush is
 * acknowledged (CommitData with its request id). */
static void flush(const gp__ipc_command *c) {
  gp_activity_flush_all(0);
  for (int i = 0; i < MAX_SESSIONS; i++) {
    gp__prod_instance *in = &gp__prod.inst[i];
    if (!in->used || !in->have_writer || !listed(c, in->id))
      continue;
    pthread_mutex_lock(&in->lock);
    if (in->pkt_left == 0) /* a packet half-written stays in its chunk */
      gp__smb_complete(&in->w);
    commit_done(in, 0);
    pthread_mutex_unlock(&in->lock);
  }
  gp__prod_commit(NULL, 0, c->flush_request_id);
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.st.flushes++;
  pthread_mutex_unlock(&gp__prod.lock);
}

static void setup_tracing(const gp__ipc_command *c) {
  int fd = gp__prod.pending_fd;
  gp__prod.pending_fd = -1;
  if (gp__prod.have_smb) { /* one SMB per connection; a second is refused */
    if (fd >= 0)
      close(fd);
    return;
  }
  struct stat st;
  size_t page = (size_t)c->page_size_kb * 1024;
  /* A buffer the service could shrink under us would end the program
   * with SIGBUS: as Perfetto's producers, only a memfd sealed against
   * shrinking is used (Perfetto's service seals it so). */
  int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
  if (fd >= 0 && (seals < 0 || !(seals & F_SEAL_SHRINK))) {
    gp__prod_warn("the service's shared memory is not sealed against "
                  "shrinking (F_SEAL_SHRINK): not used, nothing is traced "
                  "through the service");
    close(fd);
    return;
  }
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    gp__prod_warn("the service set up tracing without shared memory");
    if (fd >= 0)
      close(fd);
    return;
  }
  void *base =
      mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    gp__prod_warn("cannot map the service's shared memory: %s",
                  strerror(errno));
    return;
  }
  if (gp__smb_init(&gp__prod.smb, base, (size_t)st.st_size, page) != 0) {
    gp__prod_warn(
        "the service's shared memory (%lld bytes, pages of %zu) is not "
        "usable",
        (long long)st.st_size, page);
    munmap(base, (size_t)st.st_size);
    return;
  }
  gp__prod.smb_base = base;
  gp__prod.smb_size = (size_t)st.st_size;
  gp__prod.have_smb = true;
}

/* See producerInt.h. */
void gp__prod_command(const gp__ipc_command *c) {
  gp__prod_instance *in;
  switch (c->kind) {
  case GP_IPC_CMD_SETUP_TRACING:
    setup_tracing(c);
    break;
  case GP_IPC_CMD_SETUP:
    setup(c->instance_id, c->config, c->config_len);
    break;
  case GP_IPC_CMD_START:
    if ((in = setup(c->instance_id, c->config, c->config_len)))
      start(in);
    break;
  case GP_IPC_CMD_STOP:
    if ((in = find(c->instance_id)))
      stop(in, true);
    else
      gp__prod_notify(M_STOPPED, c->instance_id);
    break;
  case GP_IPC_CMD_FLUSH:
    flush(c);
    break;
  case GP_IPC_CMD_CLEAR:
    for (int i = 0; i < MAX_SESSIONS; i++)
      if (gp__prod.inst[i].used && gp__prod.inst[i].s &&
          !gp__prod.inst[i].orphan && listed(c, gp__prod.inst[i].id))
        gp__session_clear_incremental(gp__prod.inst[i].s);
    break;
  default:
    break;
  }
}

/* See producerInt.h. */
void gp__prod_stop_all(void) {
  uint64_t lost = 0;
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (gp__prod.inst[i].used)
      lost += stop(&gp__prod.inst[i], false);
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.st.lost += lost;
  lost += gp__prod.lost_pending; /* counted when the service came back */
  gp__prod.lost_pending = 0;
  pthread_mutex_unlock(&gp__prod.lock);
  if (lost)
    gp__prod_warn("%llu packets were lost: the tracing service went away and "
                  "no trace took them",
                  (unsigned long long)lost);
}

/* See producerInt.h. */
void gp__prod_orphan_all(void) {
  for (int i = 0; i < MAX_SESSIONS; i++) {
    gp__prod_instance *in = &gp__prod.inst[i];
    if (!in->used || in->orphan)
      continue;
    if (!in->s) { /* set up, never started: nothing to lose */
      gp_trace_config_destroy(in->cfg);
      if (in->have_writer)
        gp__smb_writer_fini(&in->w);
      pthread_mutex_destroy(&in->lock);
      memset(in, 0, sizeof(*in));
      continue;
    }
    pthread_mutex_lock(&in->lock);
    if (in->have_writer) {
      in->lost += packets_in(in, in->w.done, in->w.ndone,
                             in->w.chunk ? in->w.count : 0, in->w.flags);
      pthread_mutex_lock(&gp__prod.lock);
      gp__prod.st.packets += in->w.packets;
      gp__prod.st.bytes += in->w.bytes;
      gp__prod.st.dropped += in->w.dropped;
      pthread_mutex_unlock(&gp__prod.lock);
      gp__smb_writer_fini(&in->w);
      in->have_writer = false;
    }
    in->orphan = true;
    pthread_mutex_unlock(&in->lock);
  }
  if (gp__prod.pending_fd >= 0)
    close(gp__prod.pending_fd);
  gp__prod.pending_fd = -1;
  if (gp__prod.have_smb)
    munmap(gp__prod.smb_base, gp__prod.smb_size);
  gp__prod.have_smb = false;
  gp__prod.next_writer = 0;
}

/* See producerInt.h. */
void gp__prod_count_orphans(void) {
  uint64_t lost = 0;
  bool any = false;
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (gp__prod.inst[i].used && gp__prod.inst[i].orphan) {
      lost += stop(&gp__prod.inst[i], false);
      any = true;
    }
  if (!any)
    return;
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.st.lost += lost;
  gp__prod.lost_pending += lost;
  gp__prod.lost_until_ts = gp_get_timestamp();
  gp__prod.lost_until_mono = mono_ns();
  pthread_mutex_unlock(&gp__prod.lock);
}
