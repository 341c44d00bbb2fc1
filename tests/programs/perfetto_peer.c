/*
 * perfetto_peer.c - the service side of Perfetto's producer protocol, as
 * much as the tests of gpuperf's producer need, written from the
 * documented ABI (docs/perfetto.md) independently of the producer's SMB
 * writer: it is the second implementation that checks the first. Where
 * Perfetto's own traced is available (GPUPERF_PERFETTO_BIN) the tests run
 * against that instead as well; this peer lets them run everywhere.
 *
 *   perfetto_peer --socket PATH --out TRACE [--source NAME]...
 *                 [--counters PERIOD_NS:NAME,...] [--stop-after-ms N]
 *                 [--smb-kb N]
 *                 [--page-kb N] [--ready FILE] [--clear-after-ms N]
 *                 [--mute 1] [--shrink-smb-after-ms N] [--no-drain 1]
 *                 [--flush-after-ms N] [--exit-after-ms N] [--got FILE]
 *
 * It listens on PATH, accepts producers, and enables each data source
 * named by --source in every producer that registers it: SetupTracing
 * (a memfd SMB passed with SCM_RIGHTS), SetupDataSource, StartDataSource
 * with a DataSourceConfig of that name (for gpu.counters, with --counters:
 * a gpu_counter_config of that period and those counter names).
 * The SMB has the size and page size the producer asked for, as with
 * Perfetto's service, unless --smb-kb and --page-kb say otherwise.
 * Committed chunks are checked (page state, chunk ids in order per
 * writer, fragment flags, no reserved TracePacket fields), reassembled
 * into packets, stamped with trusted_packet_sequence_id as the service
 * does, and freed. --stop-after-ms asks for a flush and then stops every
 * data source that long after it started, and the peer ends once all have
 * said they stopped; otherwise it ends when every producer has
 * disconnected, or on SIGTERM. It writes the trace
 * and a summary line on stdout:
 *
 *   peer: producers P started S stopped T flushes F acks A chunks C
 *   packets N bytes B updates U specs K groups G errors E shrinks S
 *
 * (U: UpdateDataSource calls; K: the most counter specs a gpu.counters
 * descriptor held; G: the most counter_groups one held; S: SMBs shrunk)
 *
 * --got FILE is made when the first chunk is committed (a test waits for
 * it rather than for a time that a loaded machine overruns).
 *
 * and exits 0, or 1 if any protocol error was seen (each named on stderr).
 * With --mute 1 it answers nothing: a service that hangs. The SMB is a
 * memfd sealed against shrinking and growing, as Perfetto's service makes
 * it; with --shrink-smb-after-ms N it is not sealed, and N ms after a data
 * source starts the peer shrinks it to 0 bytes: a hostile service.
 * --no-drain 1 never frees a committed chunk (a full buffer stays full);
 * --flush-after-ms N sends a Flush (alone) N ms after a data source
 * starts; --exit-after-ms N then closes every connection and ends, as a
 * service that dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "perfetto/ipc.h"
#include "perfetto/pb.h"

#define MAX_CONN 16
#define MAX_SRC 8
#define MAX_WRITERS 64
#define MAX_INST 32

static const char *const methods[] = {"InitializeConnection",
                                      "RegisterDataSource",
                                      "UnregisterDataSource",
                                      "CommitData",
                                      "GetAsyncCommand",
                                      "RegisterTraceWriter",
                                      "UnregisterTraceWriter",
                                      "NotifyDataSourceStarted",
                                      "NotifyDataSourceStopped",
                                      "ActivateTriggers",
                                      "Sync",
                                      "UpdateDataSource"};
enum {
  M_INIT = 1,
  M_REGISTER,
  M_UNREGISTER,
  M_COMMIT,
  M_ASYNC,
  M_REG_WRITER,
  M_UNREG_WRITER,
  M_STARTED,
  M_STOPPED,
  M_TRIGGERS,
  M_SYNC,
  M_UPDATE
};

typedef struct writer {
  uint32_t id;
  uint32_t seq;       /* trusted_packet_sequence_id given */
  int64_t last_chunk; /* -1: none yet */
  uint8_t *partial;   /* a packet continuing in the next chunk */
  size_t npartial, cappartial;
  bool have_partial;
} writer;

typedef struct conn {
  int fd;
  uint8_t buf[2 * GP_IPC_MAX_FRAME];
  size_t have;
  uint64_t async_id; /* request id of its GetAsyncCommand, 0 none */
  bool smb_sent;
  int smb_fd; /* --shrink-smb-after-ms: the SMB's memfd until shrunk, else -1 */
  uint8_t *smb;
  size_t smb_size, page;
  size_t size_hint, page_hint; /* from InitializeConnection */
  char names[MAX_SRC][64];
  int nnames;
  bool started[MAX_SRC];
  writer w[MAX_WRITERS];
  int nw;
} conn;

typedef struct inst {
  bool used, stopped, stop_sent, flush_sent;
  uint64_t id;
  conn *c;
  uint64_t start_ns;
} inst;

static conn *C[MAX_CONN];
static inst I[MAX_INST];
static const char *sources[MAX_SRC];
static int nsources;
static struct {
  uint8_t *bytes; /* --counters: gpu.counters' config, else NULL */
  size_t len;
} counters;
static uint64_t next_instance = 1, next_seq = 1, next_flush = 1;
static uint64_t stop_after_ms, clear_after_ms, shrink_after_ms;
static uint64_t flush_after_ms, exit_after_ms; /* 0: never */
static bool no_drain;
static size_t smb_kb, page_kb; /* 0: the producer's hints, as the service */
static FILE *out;
static volatile sig_atomic_t quit;
static struct {
  uint64_t producers, started, stopped, flushes, chunks, packets, bytes, errors;
  uint64_t flush_acks, clears, shrinks;
  uint64_t updates, specs; /* UpdateDataSource calls; most counter specs */
  uint64_t groups;         /* most counter_groups in one descriptor */
} st;
static const char *got_path;   /* --got: made at the first chunk */
static uint64_t pending_flush; /* request id awaiting its ack */
static bool bound;             /* some connection bound the producer port */

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "peer: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  st.errors++;
}

static void send_frame(conn *c, gp__pb_writer *w, int fd) {
  size_t n = (size_t)gp__pb_size(w);
  uint8_t *flat = malloc(n);
  gp__pb_copy(w, flat);
  struct iovec iov = {flat, n};
  struct msghdr mh = {0};
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(sizeof(int))];
  } ctl;
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (fd >= 0) {
    memset(&ctl, 0, sizeof(ctl));
    mh.msg_control = &ctl;
    mh.msg_controllen = sizeof(ctl);
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  }
  ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
  if (k != (ssize_t)n && k >= 0) /* the rest, without the descriptor */
    (void)!write(c->fd, flat + k, n - (size_t)k);
  free(flat);
}

static void reply(conn *c, uint64_t id, const uint8_t *msg, size_t len,
                  bool has_more, int fd) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__ipc_put_reply(&w, id, true, has_more, msg, len);
  send_frame(c, &w, fd);
  gp__pb_writer_fini(&w);
}

/* One async command (a GetAsyncCommandResponse built in cmd). */
static void command(conn *c, gp__pb_writer *cmd, int fd) {
  if (!c->async_id)
    return;
  size_t n = (size_t)gp__pb_size(cmd);
  uint8_t *flat = malloc(n ? n : 1);
  gp__pb_copy(cmd, flat);
  reply(c, c->async_id, flat, n, true, fd);
  free(flat);
}

static void ds_config(gp__pb_writer *w, const char *name) {
  if (counters.bytes && !strcmp(name, "gpu.counters")) {
    gp__pb_bytes(w, 2, counters.bytes, counters.len);
    return;
  }
  gp__pb_begin(w, 2);
  gp__pb_string(w, 1, name);
  gp__pb_uint(w, 2, 0); /* target_buffer */
  gp__pb_end(w);
}

static void start_sources(conn *c) {
  if (!c->async_id)
    return;
  for (int k = 0; k < c->nnames; k++) {
    bool wanted = false;
    for (int s = 0; s < nsources; s++)
      wanted |= !strcmp(sources[s], c->names[k]);
    if (!wanted || c->started[k])
      continue;
    gp__pb_writer w;
    gp__pb_writer_init(&w);
    if (!c->smb_sent) {
      /* Sealed as Perfetto's service seals it, unless the peer is to
       * shrink it (--shrink-smb-after-ms: a hostile service). */
      int fd =
          memfd_create("perfetto_peer_smb",
                       MFD_CLOEXEC | (shrink_after_ms ? 0 : MFD_ALLOW_SEALING));
      c->smb_size = smb_kb         ? smb_kb * 1024
                    : c->size_hint ? c->size_hint
                                   : 256 * 1024;
      c->page = page_kb ? page_kb * 1024 : c->page_hint ? c->page_hint : 4096;
      if (c->page % 4096 || c->page > 65536 || c->smb_size % c->page) {
        error("the producer's hints (%zu bytes, pages of %zu) are not valid",
              c->smb_size, c->page);
        c->page = 4096;
        c->smb_size = 256 * 1024;
      }
      if (fd < 0 || ftruncate(fd, (off_t)c->smb_size) != 0)
        error("memfd: %s", strerror(errno));
      if (!shrink_after_ms &&
          fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) !=
              0)
        error("memfd seals: %s", strerror(errno));
      c->smb =
          mmap(NULL, c->smb_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      gp__pb_begin(&w, 3); /* setup_tracing */
      gp__pb_uint(&w, 1, c->page / 1024);
      gp__pb_end(&w);
      command(c, &w, fd);
      if (shrink_after_ms)
        c->smb_fd = fd; /* kept, to shrink it */
      else
        close(fd);
      c->smb_sent = true;
      gp__pb_writer_reset(&w);
    }
    uint64_t id = next_instance++;
    gp__pb_begin(&w, 6); /* setup_data_source */
    gp__pb_uint(&w, 1, id);
    ds_config(&w, c->names[k]);
    gp__pb_end(&w);
    command(c, &w, -1);
    gp__pb_writer_reset(&w);
    gp__pb_begin(&w, 1); /* start_data_source */
    gp__pb_uint(&w, 1, id);
    ds_config(&w, c->names[k]);
    gp__pb_end(&w);
    command(c, &w, -1);
    gp__pb_writer_fini(&w);
    c->started[k] = true;
    for (int i = 0; i < MAX_INST; i++)
      if (!I[i].used) {
        I[i] = (inst){.used = true, .id = id, .c = c, .start_ns = now_ms()};
        break;
      }
    st.started++;
  }
}

static writer *writer_for(conn *c, uint32_t id) {
  for (int i = 0; i < c->nw; i++)
    if (c->w[i].id == id)
      return &c->w[i];
  if (c->nw == MAX_WRITERS)
    return NULL;
  writer *w = &c->w[c->nw++];
  memset(w, 0, sizeof(*w));
  w->id = id;
  w->seq = (uint32_t)next_seq++;
  w->last_chunk = -1;
  return w;
}

/* A whole packet: checked as the service's validator does, stamped with
 * its sequence, written. */
static void emit(writer *w, const uint8_t *p, size_t n) {
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, p, n, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    static const uint32_t reserved[] = {3, 10, 33, 35, 50, 36, 79, 98};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(*reserved); i++)
      if (x.id == reserved[i]) {
        error("writer %u wrote the reserved TracePacket field %u", w->id, x.id);
        return;
      }
  }
  if (rc < 0) {
    error("writer %u wrote a malformed packet of %zu bytes", w->id, n);
    return;
  }
  uint8_t seq[16], *q = seq;
  *q++ = (10 << 3) | 0; /* trusted_packet_sequence_id, appended */
  q = gp__pb_put_varint(q, w->seq);
  size_t nseq = (size_t)(q - seq);
  uint8_t hdr[16];
  q = hdr;
  *q++ = 0x0a;
  q = gp__pb_put_varint(q, n + nseq);
  fwrite(hdr, 1, (size_t)(q - hdr), out);
  fwrite(p, 1, n, out);
  fwrite(seq, 1, nseq, out);
  st.packets++;
  st.bytes += n;
}

static void partial_add(writer *w, const uint8_t *p, size_t n) {
  if (w->npartial + n > w->cappartial) {
    w->cappartial = 2 * (w->npartial + n);
    w->partial = realloc(w->partial, w->cappartial);
  }
  memcpy(w->partial + w->npartial, p, n);
  w->npartial += n;
}

static void read_chunk(conn *c, uint32_t page, uint32_t chunk) {
  if (!c->smb || page >= c->smb_size / c->page) {
    error("CommitData names page %u outside the SMB", page);
    return;
  }
  uint8_t *pg = c->smb + (size_t)page * c->page;
  uint32_t bitmap = __atomic_load_n((uint32_t *)(void *)pg, __ATOMIC_ACQUIRE);
  uint32_t layout = (bitmap >> 28) & 7;
  static const unsigned nchunks[8] = {0, 1, 2, 4, 7, 14, 0, 0};
  if (chunk >= nchunks[layout]) {
    error("page %u chunk %u: layout %u", page, chunk, layout);
    return;
  }
  if (((bitmap >> (2 * chunk)) & 3) != 3) {
    error("page %u chunk %u committed in state %u", page, chunk,
          (bitmap >> (2 * chunk)) & 3);
    return;
  }
  size_t csize = ((c->page - 8) / nchunks[layout]) & ~(size_t)3;
  uint8_t *ch = pg + 8 + chunk * csize;
  uint32_t chunk_id;
  uint16_t wid, packets;
  memcpy(&chunk_id, ch, 4);
  memcpy(&wid, ch + 4, 2);
  memcpy(&packets, ch + 6, 2);
  unsigned count = packets & 0x3ff, flags = packets >> 10;
  writer *w = writer_for(c, wid);
  if (!w)
    return;
  if (w->last_chunk >= 0 && chunk_id != (uint32_t)(w->last_chunk + 1))
    error("writer %u: chunk %u after chunk %lld", wid, chunk_id,
          (long long)w->last_chunk);
  w->last_chunk = chunk_id;
  if (st.chunks++ == 0 && got_path) {
    FILE *g = fopen(got_path, "w");
    if (g)
      fclose(g);
  }
  const uint8_t *p = ch + 8, *end = ch + csize;
  for (unsigned i = 0; i < count; i++) {
    if (end - p < 4) {
      error("writer %u chunk %u: fragment %u past the chunk", wid, chunk_id, i);
      break;
    }
    uint64_t len = 0;
    size_t k = gp__pb_get_varint(p, p + 4, &len);
    if (k == 0 || len > (size_t)(end - p - 4)) {
      error("writer %u chunk %u: fragment %u of size %llu", wid, chunk_id, i,
            (unsigned long long)len);
      break;
    }
    p += 4;
    bool first = i == 0, last = i + 1 == count;
    if (first && (flags & 1)) {
      if (!w->have_partial)
        error("writer %u chunk %u continues a packet never begun", wid,
              chunk_id);
      else
        partial_add(w, p, len);
    } else {
      if (w->have_partial)
        error("writer %u chunk %u: a packet was left unfinished", wid,
              chunk_id);
      w->have_partial = false;
      w->npartial = 0;
      partial_add(w, p, len);
      w->have_partial = true;
    }
    if (!(last && (flags & 2))) {
      emit(w, w->partial, w->npartial);
      w->have_partial = false;
      w->npartial = 0;
    }
    p += len;
  }
  /* Free again, as the service does once it has copied the chunk. */
  uint32_t cur = bitmap, next;
  do {
    next = cur & ~(3u << (2 * chunk));
    if ((next & 0x0fffffff) == 0)
      next = 0;
  } while (!__atomic_compare_exchange_n((uint32_t *)(void *)pg, &cur, next,
                                        false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED));
}

static void on_commit(conn *c, const uint8_t *a, size_t n) {
  gp__pb_reader r;
  gp__pb_field x;
  gp__pb_reader_init(&r, a, n, 0);
  while (gp__pb_next(&r, &x) > 0) {
    if (x.id == 1 && x.wire_type == GP_PB_LEN) {
      gp__pb_reader m;
      gp__pb_field y;
      uint32_t page = 0, chunk = 0;
      gp__pb_reader_sub(&m, &r, &x);
      while (gp__pb_next(&m, &y) > 0) {
        if (y.id == 1)
          page = (uint32_t)y.value;
        else if (y.id == 2)
          chunk = (uint32_t)y.value;
      }
      if (!no_drain) /* --no-drain: a service that never frees a chunk */
        read_chunk(c, page, chunk);
    } else if (x.id == 3 && x.value) {
      if (x.value == pending_flush)
        st.flush_acks++;
    }
  }
}

/* RegisterDataSource and UpdateDataSource: the name (a new one is
 * registered) and the number of counter specs its descriptor holds. */
static void on_register(conn *c, const uint8_t *a, size_t n, bool update) {
  gp__pb_reader r, d, g;
  gp__pb_field x, y, z;
  gp__pb_reader_init(&r, a, n, 0);
  while (gp__pb_next(&r, &x) > 0) {
    if (x.id != 1 || x.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader_sub(&d, &r, &x);
    uint64_t specs = 0, groups = 0;
    while (gp__pb_next(&d, &y) > 0) {
      if (y.id == 1 && y.wire_type == GP_PB_LEN && !update &&
          c->nnames < MAX_SRC)
        snprintf(c->names[c->nnames++], 64, "%.*s", (int)y.size, y.data);
      if (y.id == 5 && y.wire_type == GP_PB_LEN) { /* gpu_counter_descriptor */
        gp__pb_reader_sub(&g, &d, &y);
        while (gp__pb_next(&g, &z) > 0) {
          specs += z.id == 1;
          groups += z.id == 6 && z.wire_type == GP_PB_LEN;
        }
      }
    }
    if (specs > st.specs)
      st.specs = specs;
    if (groups > st.groups)
      st.groups = groups;
  }
  if (update)
    st.updates++;
}

/* The id (field 7) of the DataSourceDescriptor in a RegisterDataSource or
 * UpdateDataSource request, 0 if none. */
static uint64_t descriptor_id(const uint8_t *a, size_t n) {
  gp__pb_reader r, d;
  gp__pb_field x, y;
  uint64_t id = 0;
  gp__pb_reader_init(&r, a, n, 0);
  while (gp__pb_next(&r, &x) > 0) {
    if (x.id != 1 || x.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader_sub(&d, &r, &x);
    while (gp__pb_next(&d, &y) > 0)
      if (y.id == 7 && y.wire_type == GP_PB_VARINT)
        id = y.value;
  }
  return id;
}

static bool mute; /* --mute: accept, read, never answer (a hung service) */

static void on_frame(conn *c, const uint8_t *p, size_t n) {
  if (mute)
    return;
  gp__pb_reader r0;
  gp__pb_field x0;
  gp__ipc_frame f;
  if (gp__ipc_frame_decode(p, n, &f) != 0) {
    error("a corrupt frame");
    return;
  }
  if (f.type == GP_IPC_BIND_SERVICE) {
    /* BindService.service_name (field 1): the service's name as its .proto
     * declares it. Another name gets a reply without success, as from
     * Perfetto's host (ipc/host_impl.cc). */
    gp__pb_reader_init(&r0, f.body, f.body_len, 0);
    bool named = false;
    while (gp__pb_next(&r0, &x0) > 0)
      if (x0.id == 1 && x0.wire_type == GP_PB_LEN)
        named = x0.size == 12 && !memcmp(x0.data, "ProducerPort", 12);
    gp__pb_writer w;
    gp__pb_writer_init(&w);
    if (!named) {
      error("BindService of a service that is not ProducerPort");
      gp__ipc_put_bind_reply(&w, f.request_id, false, 0, NULL, 0);
      send_frame(c, &w, -1);
      gp__pb_writer_fini(&w);
      return;
    }
    bound = true;
    st.producers++;
    gp__ipc_put_bind_reply(&w, f.request_id, true, 42, methods,
                           sizeof(methods) / sizeof(*methods));
    send_frame(c, &w, -1);
    gp__pb_writer_fini(&w);
    return;
  }
  if (f.type != GP_IPC_INVOKE_METHOD) {
    error("unexpected frame type %u", f.type);
    return;
  }
  /* The method id is in the frame body (field 2). */
  gp__pb_reader r;
  gp__pb_field x;
  uint32_t method = 0;
  bool drop = false;
  gp__pb_reader_init(&r, f.body, f.body_len, 0);
  while (gp__pb_next(&r, &x) > 0) {
    if (x.id == 2)
      method = (uint32_t)x.value;
    else if (x.id == 4)
      drop = x.value != 0;
  }
  switch (method) {
  case M_REGISTER:
    on_register(c, f.reply, f.reply_len, false);
    /* As Perfetto's service: a running session sets up and starts a data
     * source as it registers, through the async command stream; without
     * one (no GetAsyncCommand yet) the commands are dropped, and the data
     * source is never started (producer_ipc_service.cc). */
    if (c->async_id)
      start_sources(c);
    else if (c->nnames > 0)
      c->started[c->nnames - 1] = true; /* its start is lost */
    break;
  case M_UPDATE:
    if (!descriptor_id(f.reply, f.reply_len))
      error("UpdateDataSource() must have a non-zero id");
    else
      on_register(c, f.reply, f.reply_len, true);
    break;
  case M_COMMIT:
    on_commit(c, f.reply, f.reply_len);
    break;
  case M_ASYNC:
    /* Commands from now on; data sources registered before are not
     * started for it (Perfetto's service does not). */
    c->async_id = f.request_id;
    return; /* streaming: answered by commands */
  case M_STOPPED: {
    gp__pb_reader_init(&r, f.reply, f.reply_len, 0);
    while (gp__pb_next(&r, &x) > 0)
      for (int i = 0; i < MAX_INST; i++)
        if (I[i].used && I[i].id == x.value && !I[i].stopped) {
          /* Only a stop the service asked for may be reported. */
          if (!I[i].stop_sent)
            error("Stopped data source instance in incorrect state");
          I[i].stopped = true;
          st.stopped++;
        }
    break;
  }
  case M_INIT:
    gp__pb_reader_init(&r, f.reply, f.reply_len, 0);
    while (gp__pb_next(&r, &x) > 0) {
      if (x.id == 1 && x.wire_type == GP_PB_VARINT)
        c->page_hint = (size_t)x.value;
      else if (x.id == 2 && x.wire_type == GP_PB_VARINT)
        c->size_hint = (size_t)x.value;
    }
    break;
  case M_UNREGISTER:
  case M_REG_WRITER:
  case M_UNREG_WRITER:
  case M_STARTED:
  case M_TRIGGERS:
  case M_SYNC:
    break;
  default:
    error("unknown method %u", method);
    break;
  }
  if (!drop)
    reply(c, f.request_id, NULL, 0, false, -1);
}

/* Flush, then stop, every instance older than --stop-after-ms. */
static void timers(void) {
  uint64_t now = now_ms();
  for (int i = 0; i < MAX_INST; i++) {
    inst *in = &I[i];
    if (!in->used || in->stop_sent || !in->c)
      continue;
    conn *sc = in->c;
    if (shrink_after_ms && sc->smb_fd >= 0 &&
        now - in->start_ns >= shrink_after_ms) {
      /* The hostile service: the producer's buffer shrinks to nothing
       * (the peer stops reading it first). */
      munmap(sc->smb, sc->smb_size);
      sc->smb = NULL;
      if (ftruncate(sc->smb_fd, 0) != 0)
        error("shrink: %s", strerror(errno));
      close(sc->smb_fd);
      sc->smb_fd = -1;
      st.shrinks++;
    }
    if (flush_after_ms && now - in->start_ns >= flush_after_ms &&
        !in->flush_sent) {
      gp__pb_writer w;
      gp__pb_writer_init(&w);
      pending_flush = next_flush++;
      gp__pb_begin(&w, 5); /* flush, and nothing else */
      gp__pb_uint(&w, 1, in->id);
      gp__pb_uint(&w, 2, pending_flush);
      gp__pb_end(&w);
      command(in->c, &w, -1);
      gp__pb_writer_fini(&w);
      st.flushes++;
      in->flush_sent = true;
    }
    if (exit_after_ms && now - in->start_ns >= exit_after_ms)
      quit = 1; /* a service that dies: every connection closed at once */
    if (clear_after_ms && now - in->start_ns >= clear_after_ms && !st.clears) {
      gp__pb_writer w;
      gp__pb_writer_init(&w);
      gp__pb_begin(&w, 7);
      gp__pb_uint(&w, 1, in->id);
      gp__pb_end(&w);
      command(in->c, &w, -1);
      gp__pb_writer_fini(&w);
      st.clears++;
    }
    if (!stop_after_ms || now - in->start_ns < stop_after_ms)
      continue;
    gp__pb_writer w;
    gp__pb_writer_init(&w);
    pending_flush = next_flush++;
    gp__pb_begin(&w, 5); /* flush */
    gp__pb_uint(&w, 1, in->id);
    gp__pb_uint(&w, 2, pending_flush);
    gp__pb_end(&w);
    command(in->c, &w, -1);
    st.flushes++;
    gp__pb_writer_reset(&w);
    gp__pb_begin(&w, 2); /* stop_data_source */
    gp__pb_uint(&w, 1, in->id);
    gp__pb_end(&w);
    command(in->c, &w, -1);
    gp__pb_writer_fini(&w);
    in->stop_sent = true;
  }
}

static void on_term(int sig) {
  (void)sig;
  quit = 1;
}

/* --counters PERIOD_NS:NAME,NAME,...: the gpu.counters DataSourceConfig
 * the service sends, { name: "gpu.counters" gpu_counter_config {
 * counter_period_ns counter_names... } } (field 108; names field 6). */
static bool counters_config(const char *v) {
  char *end;
  unsigned long long period = strtoull(v, &end, 10);
  if (*end != ':' || !end[1])
    return false;
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__pb_string(&w, 1, "gpu.counters");
  gp__pb_begin(&w, 108);
  gp__pb_uint(&w, 1, period);
  for (const char *n = end + 1; *n;) {
    size_t len = strcspn(n, ",");
    gp__pb_bytes(&w, 6, n, len);
    n += len + (n[len] == ',');
  }
  gp__pb_end(&w);
  counters.len = (size_t)gp__pb_size(&w);
  counters.bytes = malloc(counters.len);
  gp__pb_copy(&w, counters.bytes);
  gp__pb_writer_fini(&w);
  return true;
}

int main(int argc, char **argv) {
  const char *path = NULL, *outp = NULL, *ready = NULL;
  for (int i = 1; i < argc; i += 2) { /* option, value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "peer: %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "--socket"))
      path = v;
    else if (!strcmp(a, "--out"))
      outp = v;
    else if (!strcmp(a, "--ready"))
      ready = v;
    else if (!strcmp(a, "--got"))
      got_path = v;
    else if (!strcmp(a, "--mute"))
      mute = strcmp(v, "0") != 0;
    else if (!strcmp(a, "--source") && nsources < MAX_SRC)
      sources[nsources++] = v;
    else if (!strcmp(a, "--counters")) {
      if (!counters_config(v))
        return 2;
    } else if (!strcmp(a, "--stop-after-ms"))
      stop_after_ms = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--flush-after-ms"))
      flush_after_ms = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--exit-after-ms"))
      exit_after_ms = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--no-drain"))
      no_drain = strtoull(v, NULL, 10) != 0;
    else if (!strcmp(a, "--shrink-smb-after-ms"))
      shrink_after_ms = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--clear-after-ms"))
      clear_after_ms = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--smb-kb"))
      smb_kb = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--page-kb"))
      page_kb = strtoull(v, NULL, 10);
    else {
      fprintf(stderr, "peer: unknown option %s\n", a);
      return 2;
    }
  }
  if (!path || !outp) {
    fprintf(stderr, "peer: --socket and --out are needed\n");
    return 2;
  }
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  signal(SIGPIPE, SIG_IGN);
  out = fopen(outp, "wb");
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  unlink(path);
  if (!out || ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      listen(ls, 16) != 0) {
    fprintf(stderr, "peer: cannot listen on %s: %s\n", path, strerror(errno));
    return 2;
  }
  if (ready) {
    FILE *f = fopen(ready, "w");
    if (f)
      fclose(f);
  }
  bool any = false;        /* a producer has bound the producer port */
  uint64_t idle_since = 0; /* no producer connected since then */
  while (!quit) {
    struct pollfd pf[MAX_CONN + 1];
    int n = 0;
    pf[n++] = (struct pollfd){ls, POLLIN, 0};
    int live = 0;
    for (int i = 0; i < MAX_CONN; i++)
      if (C[i]) {
        pf[n++] = (struct pollfd){C[i]->fd, POLLIN, 0};
        live++;
      }
    /* Over once every producer has gone (and none came back for 300 ms:
     * programs connect at their first GPU work). */
    any = bound;
    if (live == 0 && any) {
      if (!idle_since)
        idle_since = now_ms();
      else if (now_ms() - idle_since > 300)
        break;
    } else {
      idle_since = 0;
    }
    if (stop_after_ms && st.started && st.stopped == st.started)
      break; /* the tracing session is over */
    int k = poll(pf, (nfds_t)n, 10);
    timers();
    if (k <= 0)
      continue;
    if (pf[0].revents & POLLIN) {
      int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
      for (int i = 0; fd >= 0 && i < MAX_CONN; i++)
        if (!C[i]) {
          C[i] = calloc(1, sizeof(conn));
          C[i]->fd = fd;
          C[i]->smb_fd = -1;
          fd = -1;
        }
      if (fd >= 0)
        close(fd);
    }
    for (int j = 1; j < n; j++) {
      if (!pf[j].revents)
        continue;
      conn *c = NULL;
      int ci = 0;
      for (int i = 0; i < MAX_CONN; i++)
        if (C[i] && C[i]->fd == pf[j].fd) {
          c = C[i];
          ci = i;
        }
      ssize_t got = read(c->fd, c->buf + c->have, sizeof(c->buf) - c->have);
      if (got <= 0) {
        for (int i = 0; i < c->nw; i++) {
          if (c->w[i].have_partial)
            error("writer %u ended in the middle of a packet", c->w[i].id);
          free(c->w[i].partial);
        }
        for (int i = 0; i < MAX_INST; i++)
          if (I[i].c == c)
            I[i].c = NULL;
        close(c->fd);
        if (c->smb_fd >= 0)
          close(c->smb_fd);
        if (c->smb)
          munmap(c->smb, c->smb_size);
        free(c);
        C[ci] = NULL;
        continue;
      }
      c->have += (size_t)got;
      const uint8_t *pl;
      size_t pn, off = 0;
      long used;
      while ((used = gp__ipc_frame_split(c->buf + off, c->have - off, &pl,
                                         &pn)) > 0) {
        on_frame(c, pl, pn);
        off += (size_t)used;
      }
      if (used < 0)
        error("an oversized frame");
      memmove(c->buf, c->buf + off, c->have - off);
      c->have -= off;
    }
  }
  /* Ended (SIGTERM): as a service that dies, take nothing more, but what
   * producers sent before counts as received: their sends fail from now
   * on (EPIPE), which they see as the service gone. */
  for (int i = 0; i < MAX_CONN; i++)
    if (C[i]) {
      conn *c = C[i];
      shutdown(c->fd, SHUT_RD);
      ssize_t got;
      while ((got = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have,
                         MSG_DONTWAIT)) > 0) {
        c->have += (size_t)got;
        const uint8_t *pl;
        size_t pn, off = 0;
        long used;
        while ((used = gp__ipc_frame_split(c->buf + off, c->have - off, &pl,
                                           &pn)) > 0) {
          on_frame(c, pl, pn);
          off += (size_t)used;
        }
        memmove(c->buf, c->buf + off, c->have - off);
        c->have -= off;
      }
    }
  for (int i = 0; i < MAX_CONN; i++)
    if (C[i]) {
      for (int k = 0; k < C[i]->nw; k++)
        free(C[i]->w[k].partial);
      if (C[i]->smb)
        munmap(C[i]->smb, C[i]->smb_size);
      close(C[i]->fd);
      free(C[i]);
    }
  free(counters.bytes);
  fclose(out);
  close(ls);
  unlink(path);
  printf("peer: producers %llu started %llu stopped %llu flushes %llu "
         "acks %llu chunks %llu packets %llu bytes %llu updates %llu specs "
         "%llu groups %llu errors %llu shrinks %llu\n",
         (unsigned long long)st.producers, (unsigned long long)st.started,
         (unsigned long long)st.stopped, (unsigned long long)st.flushes,
         (unsigned long long)st.flush_acks, (unsigned long long)st.chunks,
         (unsigned long long)st.packets, (unsigned long long)st.bytes,
         (unsigned long long)st.updates, (unsigned long long)st.specs,
         (unsigned long long)st.groups, (unsigned long long)st.errors,
         (unsigned long long)st.shrinks);
  return st.errors ? 1 : 0;
}
