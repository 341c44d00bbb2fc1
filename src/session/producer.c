/*
 * producer.c - gpuperf as a producer of Perfetto's tracing service
 * (docs/perfetto.md). A process connects to the service's producer socket,
 * registers gpuperf's data sources with their counter catalog, and, when
 * a trace config enables one of them, runs an ordinary session (the same
 * config code as `gpuperf record -c`) whose writer puts its packets into
 * the shared memory buffer instead of a file.
 *
 * This file is the connection: the socket, frames, the handshake and the
 * reader thread; producer_sources.c is the data sources.
 *
 * Threads. One reader thread per process reads the socket: replies, and
 * the service's commands (set up the SMB, start, stop, flush, clear
 * incremental state), which it carries out itself (producer_sources.c).
 * Packets are written by whichever thread feeds a session's writer (the
 * collector, or a thread stopping a session); producerInt.h lists the
 * locks and their order. When the service goes away, the reader orphans
 * the instances (their packets are counted, not kept) and the program
 * runs on; a keeper thread connects again, backing off, and does the
 * handshake again with the new service, which then starts what its
 * sessions enable (producerInt.h).
 *
 * Requests the producer waits for (bind, InitializeConnection,
 * RegisterDataSource, Sync) are matched to replies by request id in a
 * small ring; everything else is sent with drop_reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
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
#include "producer.h"
#include "counters/countersInt.h"
#include "producerInt.h"
#include "core/thread.h"

#define PAGE_HINT (32u * 1024u)
#define SMB_HINT (2u * 1024u * 1024u)
#define REPLY_TIMEOUT_MS 5000 /* for the handshake's replies */
#define RECV_CAP (2u * GP_IPC_MAX_FRAME)
/* The keeper's first wait before connecting again, and its longest. */
#define RETRY_FIRST_MS 100
#define RETRY_MAX_MS 2000

static const char *const method_names[M_COUNT] = {"InitializeConnection",
                                                  "RegisterDataSource",
                                                  "CommitData",
                                                  "GetAsyncCommand",
                                                  "NotifyDataSourceStopped",
                                                  "RegisterTraceWriter",
                                                  "UnregisterTraceWriter",
                                                  "Sync",
                                                  "UpdateDataSource"};

static const char *const source_names[] = {"gpu.renderstages", "gpu.counters",
                                           "gpu.counters.gpuperf",
                                           "vulkan.memory_tracker", "gpu.log"};

gp__producer gp__prod = {.cmd_lock = PTHREAD_MUTEX_INITIALIZER,
                         .lock = PTHREAD_MUTEX_INITIALIZER,
                         .send_lock = PTHREAD_MUTEX_INITIALIZER,
                         .cond = PTHREAD_COND_INITIALIZER,
                         .fd = -1,
                         .pending_fd = -1};

/* See producerInt.h. */
void gp__prod_warn(const char *fmt, ...) {
  if (gp__prod.quiet)
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
      ssize_t k = send(gp__prod.fd, p, used, MSG_NOSIGNAL);
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

/* See producerInt.h. */
uint64_t gp__prod_invoke_locked(int m, bool drop_reply) {
  if (gp__prod.fd < 0 || __atomic_load_n(&gp__prod.dead, __ATOMIC_ACQUIRE) ||
      !gp__prod.method[m])
    return 0;
  size_t n = (size_t)gp__pb_size(&gp__prod.args);
  uint8_t stack[512];
  uint8_t *flat = n <= sizeof(stack) ? stack : malloc(n);
  if (!flat || gp__pb_error(&gp__prod.args))
    return 0;
  gp__pb_copy(&gp__prod.args, flat);
  uint64_t id = ++gp__prod.next_request;
  gp__pb_writer_reset(&gp__prod.out);
  gp__ipc_put_invoke(&gp__prod.out, id, gp__prod.service_id, gp__prod.method[m],
                     flat, n, drop_reply);
  if (flat != stack)
    free(flat);
  if (gp__pb_error(&gp__prod.out) || send_all(&gp__prod.out) != 0)
    return 0;
  return id;
}

/* See producerInt.h. */
bool gp__prod_commit(const gp__ipc_chunk_ref *chunks, size_t n,
                     uint64_t flush_id) {
  if (n == 0 && !flush_id)
    return true;
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  gp__ipc_put_commit(&gp__prod.args, chunks, n, flush_id);
  bool sent = gp__prod_invoke_locked(M_COMMIT, true) != 0;
  pthread_mutex_unlock(&gp__prod.send_lock);
  if (!sent)
    return false;
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.st.commits++;
  gp__prod.st.chunks += n;
  pthread_mutex_unlock(&gp__prod.lock);
  return true;
}

/* See producerInt.h. */
void gp__prod_notify(int m, uint64_t id) {
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  gp__ipc_put_id(&gp__prod.args, id);
  gp__prod_invoke_locked(m, true);
  pthread_mutex_unlock(&gp__prod.send_lock);
}

/* ------------------------------------------------------------------ */
/* Reading                                                              */

static void post_reply(uint64_t id, bool ok) {
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.ring[gp__prod.ring_next % GP_PROD_RING].id = id;
  gp__prod.ring[gp__prod.ring_next % GP_PROD_RING].ok = ok;
  gp__prod.ring_next++;
  pthread_cond_broadcast(&gp__prod.cond);
  pthread_mutex_unlock(&gp__prod.lock);
}

static void frame(const uint8_t *p, size_t n) {
  gp__ipc_frame f;
  if (gp__ipc_frame_decode(p, n, &f) != 0) {
    gp__prod_warn("a corrupt frame from the service was ignored");
    return;
  }
  if (f.type == GP_IPC_BIND_SERVICE_REPLY) {
    gp__prod.service_id = f.service_id;
    for (int m = 0; m < M_COUNT; m++)
      if (gp__ipc_method_id(&f, method_names[m], &gp__prod.method[m]) != 0)
        gp__prod.method[m] = 0;
    post_reply(f.request_id, f.success);
  } else if (f.type == GP_IPC_INVOKE_METHOD_REPLY) {
    pthread_mutex_lock(&gp__prod.lock);
    uint64_t async = gp__prod.async_request;
    pthread_mutex_unlock(&gp__prod.lock);
    if (f.request_id == async && async) {
      gp__ipc_command c;
      if (!f.success)
        gp__prod_warn("the service ended the command stream");
      else if (gp__ipc_command_decode(f.reply, f.reply_len, &c) == 0) {
        pthread_mutex_lock(&gp__prod.cmd_lock);
        gp__prod_command(&c);
        pthread_mutex_unlock(&gp__prod.cmd_lock);
      } else
        gp__prod_warn("a corrupt command from the service was ignored");
    } else {
      if (f.reply && f.reply_len) {
        /* RegisterDataSourceResponse.error (field 1), if any. */
        gp__pb_reader r;
        gp__pb_field x;
        gp__pb_reader_init(&r, f.reply, f.reply_len, 0);
        while (gp__pb_next(&r, &x) > 0)
          if (x.id == 1 && x.wire_type == GP_PB_LEN && x.size) {
            pthread_mutex_lock(&gp__prod.lock);
            snprintf(gp__prod.last_error, sizeof(gp__prod.last_error), "%.*s",
                     (int)x.size, (const char *)x.data);
            pthread_mutex_unlock(&gp__prod.lock);
            f.success = false;
          }
      }
      post_reply(f.request_id, f.success);
    }
  } else if (f.type == GP_IPC_REQUEST_ERROR) {
    pthread_mutex_lock(&gp__prod.lock);
    snprintf(gp__prod.last_error, sizeof(gp__prod.last_error), "%.*s",
             (int)f.error_len, f.error ? f.error : "");
    pthread_mutex_unlock(&gp__prod.lock);
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
      if (gp__prod.pending_fd >= 0)
        close(gp__prod.pending_fd);
      gp__prod.pending_fd = fds[i];
    }
  }
}

static void *reader_main(void *arg) {
  int fd = (int)(intptr_t)arg;
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
    ssize_t k = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
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
      uint32_t n = have - off >= 4
                       ? (uint32_t)buf[off] | (uint32_t)buf[off + 1] << 8 |
                             (uint32_t)buf[off + 2] << 16 |
                             (uint32_t)buf[off + 3] << 24
                       : 0;
      if (n == 0)
        gp__prod_warn("the service sent a frame of 0 bytes: disconnected");
      else
        gp__prod_warn("the service sent a frame of %u bytes, larger than "
                      "%u: disconnected",
                      n, GP_IPC_MAX_FRAME - GP_IPC_HEADER);
      break;
    }
    memmove(buf, buf + off, have - off);
    have -= off;
  }
  free(buf);
  /* Nobody reads the shared memory any more: what is written from now on
   * is counted as lost until a service is back (gp_producer_stop() stops
   * the instances itself). */
  pthread_mutex_lock(&gp__prod.cmd_lock);
  pthread_mutex_lock(&gp__prod.lock);
  bool stopping = gp__prod.stopping;
  pthread_mutex_unlock(&gp__prod.lock);
  if (!stopping) {
    bool running = false;
    for (int i = 0; i < MAX_SESSIONS; i++)
      running |= gp__prod.inst[i].used && gp__prod.inst[i].s &&
                 !gp__prod.inst[i].orphan;
    if (running) {
      pthread_mutex_lock(&gp__prod.lock);
      if (!gp__prod.lost_pending)
        gp__prod.lost_since_mono = mono_ns();
      pthread_mutex_unlock(&gp__prod.lock);
      gp__prod_warn("the tracing service went away: connecting again");
    }
    gp__prod_orphan_all();
  }
  pthread_mutex_unlock(&gp__prod.cmd_lock);
  pthread_mutex_lock(&gp__prod.lock);
  __atomic_store_n(&gp__prod.dead, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&gp__prod.cond);
  pthread_mutex_unlock(&gp__prod.lock);
  return NULL;
}

/* Waits for the reply to request id; true if it came and said success. */
/* The handshake as a whole waits at most REPLY_TIMEOUT_MS for the service
 * (a program's first GPU call waits for it): one deadline for every reply. */
static struct timespec handshake_deadline;

static bool wait_reply(uint64_t id) {
  if (!id)
    return false;
  struct timespec ts = handshake_deadline;
  pthread_mutex_lock(&gp__prod.lock);
  for (;;) {
    for (int i = 0; i < GP_PROD_RING; i++)
      if (gp__prod.ring[i].id == id) {
        bool ok = gp__prod.ring[i].ok;
        pthread_mutex_unlock(&gp__prod.lock);
        return ok;
      }
    if (gp__prod.dead || gp__prod.stopping ||
        pthread_cond_timedwait(&gp__prod.cond, &gp__prod.lock, &ts) ==
            ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&gp__prod.lock);
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

/* A connected socket to the service at path, or -errno / GP_EINVAL. */
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

/* See session.h. */
int gp_producer_probe(void) {
  int fd = sock_connect(gp_producer_socket());
  if (fd < 0)
    return fd;
  close(fd);
  return 0;
}

/* The counter catalog of every device, as one GpuCounterDescriptor
 * (counter ids are catalog ids: a device that repeats an id is not listed
 * twice), with its blocks and its named and custom groups. Kept well under
 * the frame limit. */
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
    /* The catalog's named and custom groups with their counters, as the
     * trace's descriptors have them (GpuCounterGroupSpec). */
    for (uint32_t g = 0; g < cat.num_groups; g++) {
      gp_counter_group_info gi;
      if (gp_counter_group_get(d, g, &gi) != 0 || gp__pb_size(w) > 96 * 1024)
        continue;
      gp__pb_begin(w, 6); /* counter_groups */
      gp__pb_uint(w, 1, gi.id);
      if (gi.name)
        gp__pb_string(w, 2, gi.name);
      if (gi.description && *gi.description)
        gp__pb_string(w, 3, gi.description);
      for (uint32_t i = 0; i < cat.num_counters; i++) {
        gp_counter_info ci;
        if (gp_counter_get(d, i, &ci) != 0)
          continue;
        for (uint32_t k = 0; k < ci.num_groups && k < GP_COUNTER_MAX_GROUPS;
             k++)
          if (ci.groups[k] == gi.id) {
            gp__pb_uint(w, 4, ci.id);
            break;
          }
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

/* The id of data source name in its descriptors: its index in
 * source_names, from 1 (0 means none to the service). */
static uint64_t source_id(const char *name) {
  for (size_t i = 0; i < GP_ARRAY_SIZE(source_names); i++)
    if (strcmp(source_names[i], name) == 0)
      return i + 1;
  return GP_ARRAY_SIZE(source_names) + 1; /* defensive: not one of ours */
}

/* Sends the descriptor of data source name with method m (RegisterDataSource
 * or UpdateDataSource); returns the request id (0: not sent). */
static uint64_t send_descriptor(const char *name, int m, bool drop_reply) {
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  gp__pb_begin(&gp__prod.args, 1); /* RegisterDataSourceRequest.descriptor */
  gp__pb_string(&gp__prod.args, 1, name);
  /* The service refuses UpdateDataSource of a descriptor without an id,
   * and matches the update to the registration by it. */
  gp__pb_uint(&gp__prod.args, 7, source_id(name));
  gp__pb_uint(&gp__prod.args, 2, 1); /* will_notify_on_stop */
  gp__pb_uint(&gp__prod.args, 4, 1); /* handles_incremental_state_clear */
  if (strncmp(name, "gpu.counters", 12) == 0)
    put_descriptor(&gp__prod.args);
  gp__pb_end(&gp__prod.args);
  uint64_t id = gp__prod_invoke_locked(m, drop_reply);
  pthread_mutex_unlock(&gp__prod.send_lock);
  return id;
}

static bool register_source(const char *name) {
  return wait_reply(send_descriptor(name, M_REGISTER, false));
}

/* A device whose counter catalog appears after the sources were
 * registered (the simulated GPUs do on first use): the counters
 * descriptors are sent again, with UpdateDataSource where the service
 * has it. */
static void on_device(uint32_t device_id) {
  (void)device_id;
  pthread_mutex_lock(&gp__prod.send_lock); /* fd is send_lock's */
  bool connected = gp__prod.fd >= 0;
  pthread_mutex_unlock(&gp__prod.send_lock);
  if (!connected || !gp__prod.counters_registered)
    return;
  for (size_t i = 0; i < GP_ARRAY_SIZE(source_names); i++)
    if (strncmp(source_names[i], "gpu.counters", 12) == 0)
      send_descriptor(source_names[i], M_UPDATE, true);
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

/* Ends the connection (not the instances): the reader is joined, the
 * socket closed. */
static void disconnect(void) {
  pthread_mutex_lock(&gp__prod.send_lock);
  if (gp__prod.fd >= 0)
    shutdown(gp__prod.fd, SHUT_RDWR);
  pthread_mutex_unlock(&gp__prod.send_lock);
  if (gp__prod.reader_running &&
      !pthread_equal(gp__prod.reader, pthread_self())) {
    pthread_join(gp__prod.reader, NULL);
    gp__prod.reader_running = false;
  }
  pthread_mutex_lock(&gp__prod.send_lock);
  if (gp__prod.fd >= 0)
    close(gp__prod.fd);
  gp__prod.fd = -1;
  pthread_mutex_unlock(&gp__prod.send_lock);
}

/*
 * Connects to the service and does the handshake: bind, InitializeConnection,
 * GetAsyncCommand, the data sources (gp__prod.flags says which), Sync.
 * Orphans of a service that went away are stopped once the new one
 * answers, before anything can start. Returns 0, or an error (err says
 * why) with the connection closed. For gp_producer_start() and the keeper;
 * never two at once.
 */
static int handshake(char *err, size_t size) {
  clock_gettime(CLOCK_REALTIME, &handshake_deadline);
  handshake_deadline.tv_sec += REPLY_TIMEOUT_MS / 1000;
  const char *path = gp_producer_socket();
  int fd = sock_connect(path);
  if (fd < 0)
    return fail(err, size, fd,
                "cannot connect to the tracing service at %s: %s", path,
                gp_strerror(fd));
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__prod.fd = fd;
  pthread_mutex_unlock(&gp__prod.send_lock);
  pthread_mutex_lock(&gp__prod.lock);
  __atomic_store_n(&gp__prod.dead, false, __ATOMIC_RELEASE);
  memset(gp__prod.method, 0, sizeof(gp__prod.method));
  gp__prod.async_request = 0;
  gp__prod.last_error[0] = '\0';
  pthread_mutex_unlock(&gp__prod.lock);
  if (gp__thread_start(&gp__prod.reader, NULL, reader_main,
                       (void *)(intptr_t)fd) != 0) {
    disconnect();
    return fail(err, size, GP_ENOMEM, "cannot start the reader thread");
  }
  gp__prod.reader_running = true;
  pthread_mutex_lock(&gp__prod.send_lock);
  uint64_t bind_id = ++gp__prod.next_request;
  gp__pb_writer_reset(&gp__prod.out);
  gp__ipc_put_bind(&gp__prod.out, bind_id, "ProducerPort");
  int rc = send_all(&gp__prod.out);
  pthread_mutex_unlock(&gp__prod.send_lock);
  if (rc != 0 || !wait_reply(bind_id) || !gp__prod.method[M_INIT] ||
      !gp__prod.method[M_REGISTER] || !gp__prod.method[M_COMMIT] ||
      !gp__prod.method[M_ASYNC]) {
    disconnect();
    return fail(err, size, GP_EIO,
                "%s does not answer as Perfetto's producer port", path);
  }
  char sdk[64];
  snprintf(sdk, sizeof(sdk), "gpuperf %s", gp_version());
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  gp__ipc_put_init(&gp__prod.args, PAGE_HINT, SMB_HINT, gp__prod.name, sdk);
  uint64_t init_id = gp__prod_invoke_locked(M_INIT, false);
  pthread_mutex_unlock(&gp__prod.send_lock);
  if (!wait_reply(init_id)) {
    disconnect();
    return fail(err, size, GP_EIO, "the tracing service refused %s: %s",
                gp__prod.name, gp__prod.last_error);
  }
  /* Commands come as replies to one streaming GetAsyncCommand, asked for
   * before any data source is registered: Perfetto's service drops the
   * Setup and Start of a data source it cannot send yet (a session that
   * runs already starts ours as they register). */
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  pthread_mutex_lock(&gp__prod.lock);
  gp__prod.async_request = gp__prod.next_request + 1;
  pthread_mutex_unlock(&gp__prod.lock);
  gp__prod_invoke_locked(M_ASYNC, false);
  pthread_mutex_unlock(&gp__prod.send_lock);
  for (size_t i = 0; i < GP_ARRAY_SIZE(source_names); i++)
    if ((!(gp__prod.flags & GP_PRODUCER_COUNTERS_ONLY) ||
         strncmp(source_names[i], "gpu.counters", 12) == 0) &&
        !register_source(source_names[i]))
      gp__prod_warn("data source %s not registered: %s", source_names[i],
                    *gp__prod.last_error ? gp__prod.last_error : "no answer");
  gp__prod.counters_registered = true;
  /* The service answers Sync after the commands that registering caused
   * (a session already running starts our data sources at once): once it
   * has, those are running and the program's first work is recorded. */
  pthread_mutex_lock(&gp__prod.send_lock);
  gp__pb_writer_reset(&gp__prod.args);
  uint64_t sync_id = gp__prod_invoke_locked(M_SYNC, false);
  pthread_mutex_unlock(&gp__prod.send_lock);
  wait_reply(sync_id);
  /* Orphans still running: the service is back but started nothing of
   * ours (no session wants it), so nothing more is lost. */
  pthread_mutex_lock(&gp__prod.cmd_lock);
  gp__prod_count_orphans();
  pthread_mutex_unlock(&gp__prod.cmd_lock);
  return 0;
}

/* Waits ms, or less if gp_producer_stop() begins; true if it did. The
 * caller holds lock. */
static bool keeper_wait(unsigned ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  while (!gp__prod.stopping &&
         pthread_cond_timedwait(&gp__prod.cond, &gp__prod.lock, &ts) !=
             ETIMEDOUT) {
  }
  return gp__prod.stopping;
}

/* The keeper: when the connection ends, connects again (Perfetto's own
 * producers do), first after RETRY_FIRST_MS, then twice as long each
 * time up to RETRY_MAX_MS, until gp_producer_stop(). */
static void *keeper_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&gp__prod.lock);
  for (;;) {
    while (!gp__prod.stopping &&
           !__atomic_load_n(&gp__prod.dead, __ATOMIC_ACQUIRE))
      pthread_cond_wait(&gp__prod.cond, &gp__prod.lock);
    if (gp__prod.stopping)
      break;
    pthread_mutex_unlock(&gp__prod.lock);
    disconnect(); /* the reader has ended: join it, close the socket */
    pthread_mutex_lock(&gp__prod.lock);
    unsigned wait = RETRY_FIRST_MS;
    bool back = false;
    while (!back && !keeper_wait(wait)) {
      pthread_mutex_unlock(&gp__prod.lock);
      char err[256];
      back = handshake(err, sizeof(err)) == 0;
      pthread_mutex_lock(&gp__prod.lock);
      wait = wait * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : wait * 2;
    }
    if (back) {
      gp__prod.reconnects++;
      pthread_mutex_unlock(&gp__prod.lock);
      gp__prod_warn("connected again to the tracing service at %s",
                    gp_producer_socket());
      pthread_mutex_lock(&gp__prod.lock);
    }
  }
  pthread_mutex_unlock(&gp__prod.lock);
  return NULL;
}

/* See producer.h. */
int gp_producer_start(const char *name, uint32_t flags, char *err,
                      size_t size) {
  if (!name || !*name)
    return fail(err, size, GP_EINVAL, "a producer needs a name");
  pthread_mutex_lock(&gp__prod.send_lock); /* fd is send_lock's */
  bool connected = gp__prod.fd >= 0;
  pthread_mutex_unlock(&gp__prod.send_lock);
  pthread_mutex_lock(&gp__prod.lock);
  bool running = connected || gp__prod.keeper_running;
  pthread_mutex_unlock(&gp__prod.lock);
  if (running)
    return GP_EBUSY;
  gp__prod.quiet = (flags & GP_PRODUCER_QUIET) != 0;
  snprintf(gp__prod.name, sizeof(gp__prod.name), "%s", name);
  gp__prod.flags = flags;
  gp__prod.stopping = false;
  gp__pb_writer_init(&gp__prod.out);
  gp__pb_writer_init(&gp__prod.args);
  int rc = handshake(err, size);
  if (rc != 0) {
    gp__pb_writer_fini(&gp__prod.out);
    gp__pb_writer_fini(&gp__prod.args);
    return rc;
  }
  gp__counters_add_device_hook(on_device);
  if (gp__thread_start(&gp__prod.keeper, NULL, keeper_main, NULL) == 0)
    gp__prod.keeper_running = true;
  else
    gp__prod_warn("no keeper thread: the connection is not made again if "
                  "the service goes away");
  static bool registered;
  if (!registered) {
    registered = true;
    atexit(at_exit);
  }
  return 0;
}

/* See producer.h. */
void gp_producer_stop(void) {
  pthread_mutex_lock(&gp__prod.send_lock); /* fd is send_lock's */
  bool connected = gp__prod.fd >= 0;
  pthread_mutex_unlock(&gp__prod.send_lock);
  pthread_mutex_lock(&gp__prod.lock);
  bool active = connected || gp__prod.keeper_running;
  gp__prod.stopping = true;
  pthread_cond_broadcast(&gp__prod.cond);
  pthread_mutex_unlock(&gp__prod.lock);
  if (!active)
    return;
  /* A keeper in a handshake stops waiting for replies (wait_reply). */
  if (gp__prod.keeper_running &&
      !pthread_equal(gp__prod.keeper, pthread_self())) {
    pthread_join(gp__prod.keeper, NULL);
    gp__prod.keeper_running = false;
  }
  gp__counters_remove_device_hook(on_device);
  gp__prod.counters_registered = false;
  pthread_mutex_lock(&gp__prod.cmd_lock);
  gp__prod_stop_all();
  pthread_mutex_unlock(&gp__prod.cmd_lock);
  disconnect();
  if (gp__prod.pending_fd >= 0)
    close(gp__prod.pending_fd);
  gp__prod.pending_fd = -1;
  if (gp__prod.have_smb)
    munmap(gp__prod.smb_base, gp__prod.smb_size);
  gp__prod.have_smb = false;
  gp__prod.next_writer = 0;
  gp__pb_writer_fini(&gp__prod.out);
  gp__pb_writer_fini(&gp__prod.args);
}

/* See producer.h. */
int gp_producer_get_stats(gp_producer_stats *st) {
  if (!st)
    return GP_EINVAL;
  pthread_mutex_lock(&gp__prod.send_lock); /* fd is send_lock's */
  bool connected = gp__prod.fd >= 0;
  pthread_mutex_unlock(&gp__prod.send_lock);
  pthread_mutex_lock(&gp__prod.lock);
  *st = gp__prod.st;
  st->connected =
      connected && !__atomic_load_n(&gp__prod.dead, __ATOMIC_ACQUIRE);
  st->running = 0;
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (gp__prod.inst[i].used && gp__prod.inst[i].s && !gp__prod.inst[i].orphan)
      st->running++;
  st->reconnects = gp__prod.reconnects;
  pthread_mutex_unlock(&gp__prod.lock);
  return 0;
}

/* See producer.h. */
void gp__producer_after_fork(void) {
  /* The connection and its sessions are the parent's. */
  pthread_mutex_init(&gp__prod.cmd_lock, NULL);
  pthread_mutex_init(&gp__prod.lock, NULL);
  pthread_mutex_init(&gp__prod.send_lock, NULL);
  pthread_cond_init(&gp__prod.cond, NULL);
  if (gp__prod.fd >= 0)
    close(gp__prod.fd);
  gp__prod.fd = -1;
  gp__prod.dead = true;
  gp__prod.reader_running = false;
  gp__prod.keeper_running = false;
  gp__prod.stopping = false;
  gp__prod.lost_pending = 0;
  memset(gp__prod.inst, 0, sizeof(gp__prod.inst));
  gp__prod.have_smb = false;
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
  if (rc == 0) {
    /* _exit, abort and fatal signals end the sessions too (core/death.c). */
    gp__death_add_finisher(gp_producer_stop);
    gp__death_watch();
  }
  /* No service listening changes nothing for the program; say so only
   * when asked (GPUPERF_PRODUCER_VERBOSE=1). */
  const char *verbose = getenv("GPUPERF_PRODUCER_VERBOSE");
  if (rc != 0 && verbose && strcmp(verbose, "1") == 0)
    fprintf(stderr, "gpuperf: producer: %s\n", err);
}
