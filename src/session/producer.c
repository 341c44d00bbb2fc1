/*
 * producer.c - gpuperf as a producer of Perfetto's tracing service
 * (docs/perfetto.md). A process connects to the service's producer socket,
 * registers gpuperf's data sources with their counter catalog, and, when
 * a trace config enables one of them, runs an ordinary session (the same
 * config code as `gpuperf record -c`) whose writer puts its packets into
 * the shared memory buffer instead of a file.
 *
 * Threads. One reader thread per process reads the socket: replies, and
 * the service's commands (set up the SMB, start, stop, flush, clear
 * incremental state), which it carries out itself. Packets are written by
 * whichever thread feeds a session's writer (the collector, or a thread
 * stopping a session) under the instance's lock; frames are sent under
 * send_lock. Lock order: instance lock, then send_lock; P.lock is never
 * held while taking either.
 *
 * Requests the producer waits for (bind, InitializeConnection,
 * RegisterDataSource, Sync) are matched to replies by request id in a
 * small ring; everything else is sent with drop_reply.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "perfetto/ipc.h"
#include "perfetto/proto.h"
#include "perfetto/smb.h"
#include "perfetto/tconfig.h"
#include "producer.h"
#include "sessionInt.h"

#define PAGE_HINT (32u * 1024u)
#define SMB_HINT (2u * 1024u * 1024u)
#define COMMIT_BATCH 8               /* complete chunks sent per CommitData */
#define REPLY_TIMEOUT_MS 5000        /* for the handshake's replies */
#define STALL_DROP_NS 100000000ull   /* SMB full, drop policy: 100 ms */
#define STALL_STALL_NS 2000000000ull /* SMB full, stall policies: 2 s */
#define RECV_CAP (2u * GP_IPC_MAX_FRAME)

enum {
  M_INIT,
  M_REGISTER,
  M_COMMIT,
  M_ASYNC,
  M_STOPPED,
  M_REGISTER_WRITER,
  M_UNREGISTER_WRITER,
  M_SYNC,
  M_COUNT
};
static const char *const method_names[M_COUNT] = {"InitializeConnection",
                                                  "RegisterDataSource",
                                                  "CommitData",
                                                  "GetAsyncCommand",
                                                  "NotifyDataSourceStopped",
                                                  "RegisterTraceWriter",
                                                  "UnregisterTraceWriter",
                                                  "Sync"};

static const char *const source_names[] = {"gpu.renderstages", "gpu.counters",
                                           "gpu.counters.gpuperf",
                                           "vulkan.memory_tracker", "gpu.log"};

typedef struct instance {
  bool used;
  uint64_t id;
  gp_trace_config *cfg; /* from SetupDataSource (or StartDataSource) */
  gp_session *s;        /* running: started */
  pthread_mutex_t lock; /* w and the framing state below */
  gp__smb_writer w;
  bool have_writer;
  uint32_t policy;
  uint64_t stall_start_ns;
  /* Framing of the writer's bytes: tag and length of the next packet. */
  uint8_t hdr[20];
  unsigned nhdr;
  size_t pkt_left;
  uint64_t drops_seen;
  char name[64];
} instance;

#define RING 16
static struct {
  pthread_mutex_t cmd_lock; /* the instances: commands, stopping */
  pthread_mutex_t lock, send_lock;
  pthread_cond_t cond;
  int fd;
  bool dead;
  pthread_t reader;
  bool reader_running;
  uint64_t next_request; /* under send_lock */
  uint32_t service_id;
  uint32_t method[M_COUNT];
  uint64_t async_request;
  struct {
    uint64_t id;
    bool ok;
  } ring[RING];
  unsigned ring_next;
  char last_error[256];
  int pending_fd; /* the last file descriptor received, -1 none */
  gp__smb smb;
  void *smb_base;
  size_t smb_size;
  bool have_smb;
  instance inst[MAX_SESSIONS];
  uint16_t next_writer;
  gp__pb_writer out, args; /* under send_lock */
  gp_producer_stats st;    /* under lock */
  bool quiet;
} P = {.cmd_lock = PTHREAD_MUTEX_INITIALIZER,
       .lock = PTHREAD_MUTEX_INITIALIZER,
       .send_lock = PTHREAD_MUTEX_INITIALIZER,
       .cond = PTHREAD_COND_INITIALIZER,
       .fd = -1,
       .pending_fd = -1};

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...) {
  if (P.quiet)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "gpuperf: producer: %s\n", msg);
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Sending                                                              */

static int send_all(const gp__pb_writer *w) {
  for (gp__pb_chunk *c = w->head; c; c = c->next) {
    size_t used = c == w->cur ? (size_t)(w->p - c->data) : c->used;
    const uint8_t *p = c->data;
    while (used > 0) {
      ssize_t k = send(P.fd, p, used, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        return k < 0 ? -errno : GP_EIO;
      p += k;
      used -= (size_t)k;
    }
    if (c == w->cur)
      break;
  }
  return 0;
}

/* Sends P.args as the arguments of method m; returns the request id, or 0
 * if the method is missing or the socket failed. Holds send_lock. */
static uint64_t invoke_locked(int m, bool drop_reply) {
  if (P.fd < 0 || P.dead || !P.method[m])
    return 0;
  size_t n = (size_t)gp__pb_size(&P.args);
  uint8_t stack[512];
  uint8_t *flat = n <= sizeof(stack) ? stack : malloc(n);
  if (!flat || gp__pb_error(&P.args))
    return 0;
  gp__pb_copy(&P.args, flat);
  uint64_t id = ++P.next_request;
  gp__pb_writer_reset(&P.out);
  gp__ipc_put_invoke(&P.out, id, P.service_id, P.method[m], flat, n,
                     drop_reply);
  if (flat != stack)
    free(flat);
  if (gp__pb_error(&P.out) || send_all(&P.out) != 0)
    return 0;
  return id;
}

/* Sends chunks (with flush_id, if not 0) as one CommitData. */
static void commit(const gp__ipc_chunk_ref *chunks, size_t n,
                   uint64_t flush_id) {
  if (n == 0 && !flush_id)
    return;
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  gp__ipc_put_commit(&P.args, chunks, n, flush_id);
  invoke_locked(M_COMMIT, true);
  pthread_mutex_unlock(&P.send_lock);
  pthread_mutex_lock(&P.lock);
  P.st.commits++;
  P.st.chunks += n;
  pthread_mutex_unlock(&P.lock);
}

/* Commits the complete chunks an instance has waiting. Holds its lock. */
static void commit_done(instance *in, uint64_t flush_id) {
  gp__ipc_chunk_ref refs[64];
  size_t n;
  do {
    n = gp__smb_take_done(&in->w, refs, GP_ARRAY_SIZE(refs));
    commit(refs, n, in->w.ndone ? 0 : flush_id);
  } while (in->w.ndone > 0);
  if (n == 0 && flush_id)
    commit(NULL, 0, flush_id);
}

/* A simple request: sends an id-only message to method m, no reply. */
static void notify(int m, uint64_t id) {
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  gp__ipc_put_id(&P.args, id);
  invoke_locked(m, true);
  pthread_mutex_unlock(&P.send_lock);
}

/* ------------------------------------------------------------------ */
/* The sink: a session's packets into the SMB                          */

/* SMB full: commit what is waiting and wait for the service, as long as
 * the data source's buffer_exhausted_policy allows. */
static bool starved(void *user, unsigned attempt) {
  instance *in = user;
  if (attempt == 0) {
    in->stall_start_ns = mono_ns();
    pthread_mutex_lock(&P.lock);
    P.st.stalls++;
    pthread_mutex_unlock(&P.lock);
  }
  commit_done(in, 0);
  uint64_t limit = in->policy >= 2 ? STALL_STALL_NS : STALL_DROP_NS;
  if (P.dead || mono_ns() - in->stall_start_ns > limit)
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
  instance *in = user;
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
      gp__smb_packet_begin(&in->w, (size_t)len);
      in->pkt_left = (size_t)len;
      continue;
    }
    size_t k = n < in->pkt_left ? n : in->pkt_left;
    gp__smb_packet_write(&in->w, d, k);
    in->pkt_left -= k;
    d += k;
    n -= k;
    if (in->pkt_left == 0 && in->w.ndone >= COMMIT_BATCH)
      commit_done(in, 0);
  }
  pthread_mutex_unlock(&in->lock);
  return 0;
}

/* After each flush of the writer: packets dropped make it start over. */
static int sink_flushed(void *user) {
  instance *in = user;
  pthread_mutex_lock(&in->lock);
  bool lost = in->w.dropped != in->drops_seen;
  in->drops_seen = in->w.dropped;
  pthread_mutex_unlock(&in->lock);
  return lost ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */

static instance *find(uint64_t id) {
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (P.inst[i].used && P.inst[i].id == id)
      return &P.inst[i];
  return NULL;
}

static instance *setup(uint64_t id, const uint8_t *cfg, size_t len) {
  instance *in = find(id);
  if (in)
    return in;
  for (int i = 0; i < MAX_SESSIONS && !in; i++)
    if (!P.inst[i].used)
      in = &P.inst[i];
  if (!in) {
    warn("data source instance %llu refused: %d are running already",
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
    warn("the service's config of data source %.*s is refused: %s",
         (int)(ds.name_len < 64 ? ds.name_len : 64), ds.name ? ds.name : "?",
         *err ? err : gp_strerror(rc));
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
  if (P.have_smb && P.next_writer < GP_SMB_MAX_WRITER_ID) {
    gp__smb_writer_init(&in->w, &P.smb, ++P.next_writer, target, starved, in);
    in->have_writer = true;
  }
  return in;
}

static void start(instance *in) {
  if (in->s)
    return;
  if (!in->have_writer) {
    warn("data source %s not started: no shared memory from the service",
         in->name);
    return;
  }
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  gp__ipc_put_register_writer(&P.args, in->w.id, in->w.target_buffer);
  invoke_locked(M_REGISTER_WRITER, true);
  pthread_mutex_unlock(&P.send_lock);
  gp__session_sink sink = {sink_write, sink_flushed, in};
  char err[256] = "";
  gp_session_options o = {0};
  /* A sequence of its own per process and instance: unique track uuids. */
  o.sequence_id =
      (uint32_t)(((uint64_t)getpid() * MAX_SESSIONS + (uint64_t)(in - P.inst)) %
                 ((1u << 24) - 2)) +
      1;
  o.error = err;
  o.error_size = sizeof(err);
  int rc = gp__session_start_sink(in->cfg, &o, &sink, &in->s);
  if (rc != 0) {
    warn("data source %s not started: %s", in->name,
         *err ? err : gp_strerror(rc));
    in->s = NULL;
    return;
  }
  pthread_mutex_lock(&P.lock);
  P.st.started++;
  pthread_mutex_unlock(&P.lock);
}

/* Stops and forgets an instance: its last packets are committed before
 * the service is told it stopped. */
static void stop(instance *in) {
  if (in->s) {
    int rc = gp_session_stop(in->s);
    if (rc != 0)
      warn("data source %s: %s", in->name, gp_strerror(rc));
    gp_session_destroy(in->s);
    in->s = NULL;
  }
  uint64_t dropped = 0;
  if (in->have_writer) {
    pthread_mutex_lock(&in->lock);
    gp__smb_complete(&in->w);
    commit_done(in, 0);
    dropped = in->w.dropped;
    pthread_mutex_lock(&P.lock);
    P.st.packets += in->w.packets;
    P.st.bytes += in->w.bytes;
    P.st.dropped += dropped;
    pthread_mutex_unlock(&P.lock);
    gp__smb_writer_fini(&in->w);
    pthread_mutex_unlock(&in->lock);
    notify(M_UNREGISTER_WRITER, in->w.id);
  }
  if (dropped)
    warn("data source %s: %llu packets dropped: the tracing service's "
         "shared memory was full",
         in->name, (unsigned long long)dropped);
  notify(M_STOPPED, in->id);
  gp_trace_config_destroy(in->cfg);
  pthread_mutex_destroy(&in->lock);
  memset(in, 0, sizeof(*in));
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
  gp__ipc_chunk_ref refs[64];
  size_t n = 0;
  for (int i = 0; i < MAX_SESSIONS; i++) {
    instance *in = &P.inst[i];
    if (!in->used || !in->have_writer || !listed(c, in->id))
      continue;
    pthread_mutex_lock(&in->lock);
    if (in->pkt_left == 0) /* a packet half-written stays in its chunk */
      gp__smb_complete(&in->w);
    while (in->w.ndone > 0) {
      if (n == GP_ARRAY_SIZE(refs)) {
        commit(refs, n, 0);
        n = 0;
      }
      n += gp__smb_take_done(&in->w, refs + n, GP_ARRAY_SIZE(refs) - n);
    }
    pthread_mutex_unlock(&in->lock);
  }
  commit(refs, n, c->flush_request_id);
  pthread_mutex_lock(&P.lock);
  P.st.flushes++;
  pthread_mutex_unlock(&P.lock);
}

static void setup_tracing(const gp__ipc_command *c) {
  int fd = P.pending_fd;
  P.pending_fd = -1;
  if (P.have_smb) { /* one SMB per connection; a second is refused */
    if (fd >= 0)
      close(fd);
    return;
  }
  struct stat st;
  size_t page = (size_t)c->page_size_kb * 1024;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    warn("the service set up tracing without shared memory");
    if (fd >= 0)
      close(fd);
    return;
  }
  void *base =
      mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    warn("cannot map the service's shared memory: %s", strerror(errno));
    return;
  }
  if (gp__smb_init(&P.smb, base, (size_t)st.st_size, page) != 0) {
    warn("the service's shared memory (%lld bytes, pages of %zu) is not "
         "usable",
         (long long)st.st_size, page);
    munmap(base, (size_t)st.st_size);
    return;
  }
  P.smb_base = base;
  P.smb_size = (size_t)st.st_size;
  P.have_smb = true;
}

static void command(const gp__ipc_command *c) {
  instance *in;
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
      stop(in);
    else
      notify(M_STOPPED, c->instance_id);
    break;
  case GP_IPC_CMD_FLUSH:
    flush(c);
    break;
  case GP_IPC_CMD_CLEAR:
    for (int i = 0; i < MAX_SESSIONS; i++)
      if (P.inst[i].used && P.inst[i].s && listed(c, P.inst[i].id))
        gp__session_clear_incremental(P.inst[i].s);
    break;
  default:
    break;
  }
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */

static void post_reply(uint64_t id, bool ok) {
  pthread_mutex_lock(&P.lock);
  P.ring[P.ring_next % RING].id = id;
  P.ring[P.ring_next % RING].ok = ok;
  P.ring_next++;
  pthread_cond_broadcast(&P.cond);
  pthread_mutex_unlock(&P.lock);
}

static void frame(const uint8_t *p, size_t n) {
  gp__ipc_frame f;
  if (gp__ipc_frame_decode(p, n, &f) != 0) {
    warn("a corrupt frame from the service was ignored");
    return;
  }
  if (f.type == GP_IPC_BIND_SERVICE_REPLY) {
    P.service_id = f.service_id;
    for (int m = 0; m < M_COUNT; m++)
      if (gp__ipc_method_id(&f, method_names[m], &P.method[m]) != 0)
        P.method[m] = 0;
    post_reply(f.request_id, f.success);
  } else if (f.type == GP_IPC_INVOKE_METHOD_REPLY) {
    if (f.request_id == P.async_request && P.async_request) {
      gp__ipc_command c;
      if (!f.success)
        warn("the service ended the command stream");
      else if (gp__ipc_command_decode(f.reply, f.reply_len, &c) == 0) {
        pthread_mutex_lock(&P.cmd_lock);
        command(&c);
        pthread_mutex_unlock(&P.cmd_lock);
      } else
        warn("a corrupt command from the service was ignored");
    } else {
      if (f.reply && f.reply_len) {
        /* RegisterDataSourceResponse.error (field 1), if any. */
        gp__pb_reader r;
        gp__pb_field x;
        gp__pb_reader_init(&r, f.reply, f.reply_len, 0);
        while (gp__pb_next(&r, &x) > 0)
          if (x.id == 1 && x.wire_type == GP_PB_LEN && x.size) {
            pthread_mutex_lock(&P.lock);
            snprintf(P.last_error, sizeof(P.last_error), "%.*s", (int)x.size,
                     (const char *)x.data);
            pthread_mutex_unlock(&P.lock);
            f.success = false;
          }
      }
      post_reply(f.request_id, f.success);
    }
  } else if (f.type == GP_IPC_REQUEST_ERROR) {
    pthread_mutex_lock(&P.lock);
    snprintf(P.last_error, sizeof(P.last_error), "%.*s", (int)f.error_len,
             f.error ? f.error : "");
    pthread_mutex_unlock(&P.lock);
    post_reply(f.request_id, false);
  }
}

static void keep_fds(struct msghdr *mh) {
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
      continue;
    size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int fds[8];
    memcpy(fds, CMSG_DATA(cm), (k < 8 ? k : 8) * sizeof(int));
    for (size_t i = 0; i < k && i < 8; i++) {
      if (P.pending_fd >= 0)
        close(P.pending_fd);
      P.pending_fd = fds[i];
    }
  }
}

static void *reader_main(void *arg) {
  (void)arg;
  uint8_t *buf = malloc(RECV_CAP);
  size_t have = 0;
  while (buf) {
    union {
      struct cmsghdr h;
      char space[CMSG_SPACE(8 * sizeof(int))];
    } ctl;
    struct iovec iov = {buf + have, RECV_CAP - have};
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = &ctl;
    mh.msg_controllen = sizeof(ctl);
    ssize_t k = recvmsg(P.fd, &mh, MSG_CMSG_CLOEXEC);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    keep_fds(&mh);
    have += (size_t)k;
    long used;
    const uint8_t *pl;
    size_t pn, off = 0;
    while ((used = gp__ipc_frame_split(buf + off, have - off, &pl, &pn)) > 0) {
      frame(pl, pn);
      off += (size_t)used;
    }
    if (used < 0) {
      warn("the service sent a frame larger than %u bytes: disconnected",
           GP_IPC_MAX_FRAME);
      break;
    }
    memmove(buf, buf + off, have - off);
    have -= off;
  }
  free(buf);
  pthread_mutex_lock(&P.lock);
  P.dead = true;
  pthread_cond_broadcast(&P.cond);
  pthread_mutex_unlock(&P.lock);
  return NULL;
}

/* Waits for the reply to request id; true if it came and said success. */
static bool wait_reply(uint64_t id) {
  if (!id)
    return false;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += REPLY_TIMEOUT_MS / 1000;
  pthread_mutex_lock(&P.lock);
  for (;;) {
    for (int i = 0; i < RING; i++)
      if (P.ring[i].id == id) {
        bool ok = P.ring[i].ok;
        pthread_mutex_unlock(&P.lock);
        return ok;
      }
    if (P.dead || pthread_cond_timedwait(&P.cond, &P.lock, &ts) == ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&P.lock);
  return false;
}

/* ------------------------------------------------------------------ */
/* Connecting                                                           */

/* See producer.h. */
const char *gp_producer_socket(void) {
  const char *name = getenv("PERFETTO_PRODUCER_SOCK_NAME");
  if (name && *name)
    return name;
  return access("/run/perfetto/", R_OK | W_OK | X_OK) == 0
             ? "/run/perfetto/traced-producer.sock"
             : "/tmp/perfetto-producer";
}

static int sock_connect(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof(sa.sun_path))
    return GP_EINVAL;
  memcpy(sa.sun_path, path, len);
  if (path[0] == '@') /* Linux abstract namespace, as Perfetto allows */
    sa.sun_path[0] = '\0';
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
                             (path[0] == '@' ? 0 : 1));
  if (connect(fd, (struct sockaddr *)&sa, sl) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  return fd;
}

/* The counter catalog of every device, as one GpuCounterDescriptor
 * (counter ids are catalog ids: a device that repeats an id is not listed
 * twice). Kept well under the frame limit. */
static void put_descriptor(gp__pb_writer *w) {
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  uint32_t seen[512];
  size_t nseen = 0;
  gp__pb_begin(w, 5); /* DataSourceDescriptor.gpu_counter_descriptor */
  for (uint32_t d = 0; d < ndev; d++) {
    gp_counter_catalog_info cat;
    if (gp_counter_catalog(d, &cat) != 0)
      continue;
    for (uint32_t i = 0; i < cat.num_counters && nseen < 512; i++) {
      gp_counter_info ci;
      if (gp_counter_get(d, i, &ci) != 0)
        continue;
      bool dup = false;
      for (size_t k = 0; k < nseen && !dup; k++)
        dup = seen[k] == ci.id;
      if (dup || gp__pb_size(w) > 64 * 1024)
        continue;
      seen[nseen++] = ci.id;
      gp__pb_begin(w, 1); /* specs */
      gp__pb_uint(w, 1, ci.id);
      gp__pb_string(w, 2, ci.name);
      if (ci.description && *ci.description)
        gp__pb_string(w, 3, ci.description);
      for (uint32_t u = 0; u < ci.num_numerator_units; u++)
        gp__pb_uint(w, 7, ci.numerator_units[u]);
      for (uint32_t u = 0; u < ci.num_denominator_units; u++)
        gp__pb_uint(w, 8, ci.denominator_units[u]);
      if (ci.select_by_default)
        gp__pb_uint(w, 9, 1);
      for (uint32_t g = 0; g < ci.num_groups; g++)
        if (ci.groups[g] < GP_COUNTER_GROUP_FIRST_CUSTOM)
          gp__pb_uint(w, 10, ci.groups[g]);
      gp__pb_end(w);
    }
    for (uint32_t b = 0; b < cat.num_blocks; b++) {
      gp_counter_block_info bi;
      if (gp_counter_block_get(d, b, &bi) != 0 || gp__pb_size(w) > 96 * 1024)
        continue;
      gp__pb_begin(w, 2); /* blocks */
      gp__pb_uint(w, 1, bi.id);
      gp__pb_uint(w, 2, bi.capacity);
      if (bi.name)
        gp__pb_string(w, 3, bi.name);
      for (uint32_t i = 0; i < cat.num_counters; i++) {
        gp_counter_info ci;
        if (gp_counter_get(d, i, &ci) == 0 && ci.block_id == bi.id)
          gp__pb_uint(w, 5, ci.id);
      }
      gp__pb_end(w);
    }
    if (cat.min_sampling_period_ns)
      gp__pb_uint(w, 3, cat.min_sampling_period_ns);
    if (cat.max_sampling_period_ns)
      gp__pb_uint(w, 4, cat.max_sampling_period_ns);
    if (cat.supports_instrumented)
      gp__pb_uint(w, 5, 1);
  }
  gp__pb_uint(w, 7, 1); /* supports_counter_names */
  gp__pb_uint(w, 8, 1); /* supports_counter_name_globs */
  gp__pb_end(w);
}

static bool register_source(const char *name) {
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  gp__pb_begin(&P.args, 1); /* RegisterDataSourceRequest.descriptor */
  gp__pb_string(&P.args, 1, name);
  gp__pb_uint(&P.args, 2, 1); /* will_notify_on_stop */
  gp__pb_uint(&P.args, 4, 1); /* handles_incremental_state_clear */
  if (strncmp(name, "gpu.counters", 12) == 0)
    put_descriptor(&P.args);
  gp__pb_end(&P.args);
  uint64_t id = invoke_locked(M_REGISTER, false);
  pthread_mutex_unlock(&P.send_lock);
  return wait_reply(id);
}

static int fail(char *err, size_t size, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t size, int rc, const char *fmt, ...) {
  if (err && size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
  }
  return rc;
}

static void at_exit(void) {
  gp_producer_stop();
}

/* See producer.h. */
int gp_producer_start(const char *name, uint32_t flags, char *err,
                      size_t size) {
  if (!name || !*name)
    return fail(err, size, GP_EINVAL, "a producer needs a name");
  pthread_mutex_lock(&P.lock);
  bool running = P.fd >= 0;
  pthread_mutex_unlock(&P.lock);
  if (running)
    return GP_EBUSY;
  P.quiet = (flags & GP_PRODUCER_QUIET) != 0;
  const char *path = gp_producer_socket();
  int fd = sock_connect(path);
  if (fd < 0)
    return fail(err, size, fd,
                "cannot connect to the tracing service at %s: %s", path,
                gp_strerror(fd));
  P.fd = fd;
  P.dead = false;
  gp__pb_writer_init(&P.out);
  gp__pb_writer_init(&P.args);
  if (pthread_create(&P.reader, NULL, reader_main, NULL) != 0) {
    close(fd);
    P.fd = -1;
    return fail(err, size, GP_ENOMEM, "cannot start the reader thread");
  }
  P.reader_running = true;
  pthread_mutex_lock(&P.send_lock);
  uint64_t bind_id = ++P.next_request;
  gp__pb_writer_reset(&P.out);
  gp__ipc_put_bind(&P.out, bind_id, "producer_port");
  int rc = send_all(&P.out);
  pthread_mutex_unlock(&P.send_lock);
  if (rc != 0 || !wait_reply(bind_id) || !P.method[M_INIT] ||
      !P.method[M_REGISTER] || !P.method[M_COMMIT] || !P.method[M_ASYNC]) {
    gp_producer_stop();
    return fail(err, size, GP_EIO,
                "%s does not answer as Perfetto's producer port", path);
  }
  char sdk[64];
  snprintf(sdk, sizeof(sdk), "gpuperf %s", gp_version());
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  gp__ipc_put_init(&P.args, PAGE_HINT, SMB_HINT, name, sdk);
  uint64_t init_id = invoke_locked(M_INIT, false);
  pthread_mutex_unlock(&P.send_lock);
  if (!wait_reply(init_id)) {
    gp_producer_stop();
    return fail(err, size, GP_EIO, "the tracing service refused %s: %s", name,
                P.last_error);
  }
  for (size_t i = 0; i < GP_ARRAY_SIZE(source_names); i++)
    if ((!(flags & GP_PRODUCER_COUNTERS_ONLY) ||
         strncmp(source_names[i], "gpu.counters", 12) == 0) &&
        !register_source(source_names[i]))
      warn("data source %s not registered: %s", source_names[i],
           *P.last_error ? P.last_error : "no answer");
  /* Commands come as replies to one streaming GetAsyncCommand. */
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  P.async_request = P.next_request + 1;
  invoke_locked(M_ASYNC, false);
  pthread_mutex_unlock(&P.send_lock);
  /* The service answers Sync after the commands that registering caused
   * (a session already running starts our data sources at once): once it
   * has, those are running and the program's first work is recorded. */
  pthread_mutex_lock(&P.send_lock);
  gp__pb_writer_reset(&P.args);
  uint64_t sync_id = invoke_locked(M_SYNC, false);
  pthread_mutex_unlock(&P.send_lock);
  wait_reply(sync_id);
  static bool registered;
  if (!registered) {
    registered = true;
    atexit(at_exit);
  }
  return 0;
}

/* See producer.h. */
void gp_producer_stop(void) {
  if (P.fd < 0)
    return;
  pthread_mutex_lock(&P.cmd_lock);
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (P.inst[i].used)
      stop(&P.inst[i]);
  pthread_mutex_unlock(&P.cmd_lock);
  shutdown(P.fd, SHUT_RDWR);
  if (P.reader_running && !pthread_equal(P.reader, pthread_self())) {
    pthread_join(P.reader, NULL);
    P.reader_running = false;
  }
  close(P.fd);
  P.fd = -1;
  if (P.pending_fd >= 0)
    close(P.pending_fd);
  P.pending_fd = -1;
  if (P.have_smb)
    munmap(P.smb_base, P.smb_size);
  P.have_smb = false;
  gp__pb_writer_fini(&P.out);
  gp__pb_writer_fini(&P.args);
}

/* See producer.h. */
int gp_producer_get_stats(gp_producer_stats *st) {
  if (!st)
    return GP_EINVAL;
  pthread_mutex_lock(&P.lock);
  *st = P.st;
  st->connected = P.fd >= 0 && !P.dead;
  st->running = 0;
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (P.inst[i].used && P.inst[i].s)
      st->running++;
  pthread_mutex_unlock(&P.lock);
  return 0;
}

/* See producer.h. */
void gp__producer_after_fork(void) {
  /* The connection and its sessions are the parent's. */
  pthread_mutex_init(&P.cmd_lock, NULL);
  pthread_mutex_init(&P.lock, NULL);
  pthread_mutex_init(&P.send_lock, NULL);
  pthread_cond_init(&P.cond, NULL);
  if (P.fd >= 0)
    close(P.fd);
  P.fd = -1;
  P.dead = true;
  P.reader_running = false;
  memset(P.inst, 0, sizeof(P.inst));
  P.have_smb = false;
}

/* See producer.h. */
void gp__producer_activate(void) {
  const char *v = getenv("GPUPERF_PRODUCER");
  if (!v || strcmp(v, "perfetto") != 0)
    return;
  char name[64], err[512];
  const char *n = getenv("GPUPERF_PRODUCER_NAME");
  snprintf(name, sizeof(name), "%s", n && *n ? n : "gpuperf");
  int rc = gp_producer_start(name, 0, err, sizeof(err));
  /* No service listening changes nothing for the program; say so only
   * when asked (GPUPERF_PRODUCER_VERBOSE=1). */
  const char *verbose = getenv("GPUPERF_PRODUCER_VERBOSE");
  if (rc != 0 && verbose && strcmp(verbose, "1") == 0)
    fprintf(stderr, "gpuperf: producer: %s\n", err);
}
