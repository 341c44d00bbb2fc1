/*
 * session_lost.c - what a recorded process leaves behind for its
 * recorder when it is killed by SIGKILL, the one death it cannot see: its
 * death page, <dir>/<seq>.open, a file it maps shared.
 *
 * - Counting: every thread counts the records it commits into a cell of
 *   its own there (gp__activity_count_into: one increment per record), and
 *   the session adds up the records it has written to its part of the
 *   trace.
 * - Salvage: the buffers the threads write their records into lie in the
 *   page too (its buffer area, gp__activity_share_buffers), each thread's
 *   cell says which records of its buffer are committed and not yet
 *   written, and the page holds a copy of the string table and of the
 *   devices, all the records refer to. After the death, the recorder
 *   writes those records (session_salvage.c, gp_record_salvage()).
 *
 * The page is removed when the part is finished. If it is left, its
 * process died without finishing (or still runs); the recorder salvages
 * what it can, and
 *
 *     lost at process death = sum(cells) - written - salvaged
 *
 * which `gpuperf record` reads with gp_record_lost_at_death() and writes
 * into the trace with gp_record_write_lost(), as a counter track
 * "gpuperf lost at process death" of the process.
 *
 * The page (all little-endian, as the machine writes it; the header is
 * gp__death_page in sessionInt.h):
 *
 *   offset       size           field
 *        0       8              magic "GPDEATH3"
 *        8       4              ncells: thread cells that follow
 *       12       4              stride of a cell (64: one cache line each)
 *       16       4              cells_offset (4096)
 *       20       4              pid of the process
 *       24       4              overflow: 1 if a thread had no cell
 *       28       4              salvage done: 1 once the recorder
 *                                salvaged (reserved otherwise)
 *       32       8              written: records written to the part
 *       40       8              salvaged: records the recorder salvaged
 *       48      24              area_offset, area_size, buf_size
 *       72      32              str_offset, str_cap, str_used, str_full
 *      104      24              dev_offset, dev_max, dev_count
 *      128      56              delivery (gp__delivery, core.h)
 *      184      64              comm: the process's name
 *      248      16              delivery_written, delivery_records: of
 *                                the delivery under way, `written`
 *                                before it and the records it writes
 *      264       8              nqueued: entries that follow
 *      272     512              queued: 16 x 4 words, the buffers handed
 *                                over and not yet written (core.h)
 *     4096      ncells * 64     the cells: words 0-3 as core.h says
 *   dev_offset  dev_max * 1432  gp__death_device, by device id
 *   str_offset  str_cap         the string log (gp__string_mirror)
 *  area_offset  area_size       AREA_BUFFERS buffers of buf_size bytes
 *
 * Disk blocks are reserved (posix_fallocate) for the header, cells,
 * devices and strings when the page is made, and for each buffer before it
 * is first given out, so that no store into the mapping can meet a full
 * disk (SIGBUS). Where they cannot be, the process records as before, with
 * its records counted but not salvaged.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfetto/proto.h"
#include "sessionInt.h"

#define NCELLS 1024u
#define STRIDE 64u
#define CELLS_OFFSET 4096u
#define DEV_OFFSET (CELLS_OFFSET + NCELLS * STRIDE)
#define DEV_MAX 64u
#define STR_OFFSET (DEV_OFFSET + DEV_MAX * sizeof(gp__death_device))
#define STR_CAP (1u << 20)
#define AREA_OFFSET GP_ALIGN8(STR_OFFSET + STR_CAP)
#define AREA_BUFFERS 16u
_Static_assert(AREA_BUFFERS == GP_DEATH_QUEUED, "an entry per buffer");

_Static_assert(sizeof(gp__death_device) == 1432, "the page layout above");
_Static_assert(sizeof(gp__death_page) <= CELLS_OFFSET, "the header's room");

/* This process's, or NULL. Atomic: the collector and device hooks read it
 * while the session closes it (the mapping stays, see close). */
static gp__death_page *_Atomic page;
static size_t page_bytes;
static int page_fd = -1; /* to reserve the blocks of buffers */
static pthread_mutex_t area_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t area_used[AREA_BUFFERS]; /* 0 free, 1 given, 2 unusable */
static uint8_t area_backed[AREA_BUFFERS];

/* The buffer area's allocator (core.h, gp__buffer_area). */
static uint8_t *area_alloc(size_t size) {
  gp__death_page *p = atomic_load(&page);
  if (!p || p->pid != (int32_t)getpid() || size != p->buf_size)
    return NULL;
  uint8_t *b = NULL;
  pthread_mutex_lock(&area_lock);
  for (uint32_t i = 0; i < AREA_BUFFERS && !b; i++) {
    if (area_used[i])
      continue;
    off_t off = (off_t)(p->area_offset + (uint64_t)i * p->buf_size);
    if (!area_backed[i]) {
      if (page_fd < 0 || posix_fallocate(page_fd, off, (off_t)size) != 0) {
        area_used[i] = 2; /* no disk for it: the heap instead */
        continue;
      }
      area_backed[i] = 1;
    }
    area_used[i] = 1;
    b = (uint8_t *)p + off;
  }
  pthread_mutex_unlock(&area_lock);
  return b;
}

static void area_release(uint8_t *buf) {
  gp__death_page *p = atomic_load(&page);
  if (!p || p->pid != (int32_t)getpid() || !p->buf_size)
    return;
  uint64_t i = ((uint64_t)(buf - (uint8_t *)p) - p->area_offset) / p->buf_size;
  pthread_mutex_lock(&area_lock);
  if (i < AREA_BUFFERS && area_used[i] == 1)
    area_used[i] = 0;
  pthread_mutex_unlock(&area_lock);
}

static void copy_str(char *dst, size_t size, const char *src) {
  snprintf(dst, size, "%s", src ? src : "");
}

/* Copies device id into the page (a device hook, core.h). */
static void page_device(uint32_t id) {
  gp__death_page *p = atomic_load(&page);
  gp_device_info di;
  if (!p || p->pid != (int32_t)getpid() || !p->dev_offset || id >= p->dev_max ||
      gp_device_get_info(id, &di) != 0)
    return;
  gp__death_device *d = (gp__death_device *)((uint8_t *)p + p->dev_offset) + id;
  memset(d, 0, sizeof(*d));
  d->id = id;
  d->api = di.api;
  d->clock_id = di.clock_id;
  d->flags = di.flags;
  d->num_queues = di.num_queues;
  d->compute_units = di.compute_units;
  d->core_clock_khz = di.core_clock_khz;
  d->memory_clock_khz = di.memory_clock_khz;
  d->max_threads_per_block = di.max_threads_per_block;
  d->max_shared_memory_per_block = di.max_shared_memory_per_block;
  d->pci_domain = di.pci_domain;
  d->pci_bus = di.pci_bus;
  d->pci_device = di.pci_device;
  d->pci_function = di.pci_function;
  d->global_memory_bytes = di.global_memory_bytes;
  d->memory_bandwidth_bytes_per_s = di.memory_bandwidth_bytes_per_s;
  memcpy(d->uuid, di.uuid, 16);
  copy_str(d->name, sizeof(d->name), di.name);
  copy_str(d->vendor, sizeof(d->vendor), di.vendor);
  copy_str(d->model, sizeof(d->model), di.model);
  copy_str(d->architecture, sizeof(d->architecture), di.architecture);
  copy_str(d->driver_version, sizeof(d->driver_version), di.driver_version);
  for (uint32_t q = 0; q < di.num_queues && q < GP_DEATH_DEV_QUEUES; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(id, q, &qi) == 0) {
      copy_str(d->queues[q].name, sizeof(d->queues[q].name), qi.name);
      d->queues[q].kind = qi.kind;
    }
  }
  if (id + 1 > __atomic_load_n(&p->dev_count, __ATOMIC_RELAXED))
    __atomic_store_n(&p->dev_count, id + 1, __ATOMIC_RELEASE);
}

static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static void add_device_hook(void) {
  gp__device_add_hook(page_device);
}

/* Reserves the salvage part of the page and hands it to the core: the
 * string log, the devices, the buffer area. Nothing if the disk has no
 * room for it (the records are then only counted). */
static void page_share(gp__death_page *p, int fd, size_t bsize,
                       bool in_fork_child) {
  if (posix_fallocate(fd, 0, (off_t)AREA_OFFSET) != 0 || bsize == 0 ||
      bsize % 8)
    return;
  p->dev_offset = DEV_OFFSET;
  p->dev_max = DEV_MAX;
  p->str_offset = STR_OFFSET;
  p->str_cap = STR_CAP;
  gp__string_mirror((uint8_t *)p + STR_OFFSET, STR_CAP, &p->str_used,
                    &p->str_full, in_fork_child);
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++)
    page_device(d);
  if (!in_fork_child)
    pthread_once(&hook_once, add_device_hook);
  p->buf_size = bsize;
  p->area_size = (uint64_t)bsize * AREA_BUFFERS;
  p->area_offset = AREA_OFFSET;
  if (in_fork_child) /* it may have been held by a thread that is gone */
    pthread_mutex_init(&area_lock, NULL);
  pthread_mutex_lock(&area_lock);
  memset(area_used, 0, sizeof(area_used));
  memset(area_backed, 0, sizeof(area_backed));
  pthread_mutex_unlock(&area_lock);
  memset(p->queued, 0, sizeof(p->queued));
  p->nqueued = AREA_BUFFERS;
  gp__buffer_area a = {.base = (uint8_t *)p + AREA_OFFSET,
                       .size = p->area_size,
                       .alloc = area_alloc,
                       .release = area_release,
                       .delivery = &p->delivery,
                       .queued = p->queued,
                       .nqueued = AREA_BUFFERS,
                       .buf_size = bsize};
  gp__activity_share_buffers(&a, in_fork_child);
}

/* See sessionInt.h. */
int gp__death_page_open(const char *dir, uint32_t seq, bool in_fork_child) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  /* A fork child handler may not ask (the core's lock is held until its
   * own handler runs): the parent's size it is. */
  static size_t bsize;
  if (!in_fork_child) {
    size_t n = sizeof(bsize);
    gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &n, &bsize);
  }
  size_t bytes = AREA_OFFSET + bsize * AREA_BUFFERS;
  void *m = MAP_FAILED;
  if (ftruncate(fd, (off_t)bytes) == 0)
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  if (m == MAP_FAILED) {
    close(fd);
    return -e; /* the note stays: the part is still reported as unfinished */
  }
  gp__death_page *p = m;
  p->ncells = NCELLS;
  p->stride = STRIDE;
  p->cells_offset = CELLS_OFFSET;
  p->pid = (int32_t)getpid();
  snprintf(p->comm, sizeof(p->comm), "%s", program_invocation_short_name);
  memcpy(p->magic, GP_DEATH_MAGIC, 8);
  page_bytes = bytes;
  page_fd = fd; /* before the page is seen: area_alloc() reads both */
  atomic_store(&page, p);
  page_share(p, fd, bsize, in_fork_child);
  gp__activity_count_into((uint8_t *)p + CELLS_OFFSET, NCELLS, STRIDE,
                          &p->overflow, in_fork_child);
  return 0;
}

/* See sessionInt.h. */
void gp__death_page_write_begin(uint64_t bytes, const uint8_t *buffer,
                                size_t valid) {
  gp__death_page *p = atomic_load(&page);
  if (!p)
    return;
  uint64_t n = 0;
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(buffer, valid, &r) == 0)
    n++;
  p->delivery_records = n;
  if (p->pid != (int32_t)getpid() ||
      __atomic_load_n(&p->delivery.state, __ATOMIC_ACQUIRE) != 1)
    return;
  p->delivery_written = p->written;
  /* Last: it says the two words above are this delivery's. */
  __atomic_store_n(&p->delivery.part_before, bytes, __ATOMIC_RELEASE);
}

/* See sessionInt.h. */
void gp__death_page_write_end(uint64_t bytes) {
  gp__death_page *p = atomic_load(&page);
  if (!p)
    return;
  if (p->pid == (int32_t)getpid() &&
      __atomic_load_n(&p->delivery.state, __ATOMIC_ACQUIRE) == 1)
    __atomic_store_n(&p->delivery.part_after, bytes, __ATOMIC_RELEASE);
  p->written += p->delivery_records;
}

/* See sessionInt.h. */
void gp__death_page_close(const char *dir, uint32_t seq, bool remove) {
  if (atomic_load(&page)) {
    gp__activity_count_into(NULL, 0, 0, NULL, false);
    gp__activity_share_buffers(NULL, false);
    gp__string_mirror(NULL, 0, NULL, NULL, false);
    /* Not unmapped: buffers of its area may still be in use (they go back
     * to it when done); the process's exit unmaps it. */
    atomic_store(&page, NULL);
    pthread_mutex_lock(&area_lock); /* area_alloc() may be using it */
    if (page_fd >= 0)
      close(page_fd);
    page_fd = -1;
    pthread_mutex_unlock(&area_lock);
  }
  if (remove && dir) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
    unlink(path);
  }
}

/* See sessionInt.h. */
void gp__death_page_forget(void) {
  /* A forked child: the mapping is its parent's; the core stopped using
   * it already (or stops in its own fork handler), and nothing of it is
   * touched here again. */
  gp__death_page *p = atomic_load(&page);
  if (p)
    munmap(p, page_bytes);
  if (page_fd >= 0)
    close(page_fd);
  page_fd = -1;
  atomic_store(&page, NULL);
}

/* See session.h. */
int gp_record_lost_at_death(const char *dir, uint32_t seq, uint64_t *lost,
                            int32_t *pid) {
  if (!dir || !lost || !pid)
    return GP_EINVAL;
  char path[4200];
  snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  gp__death_page h;
  ssize_t k = pread(fd, &h, sizeof(h), 0);
  int rc = GP_ECORRUPT;
  if (k == (ssize_t)sizeof(h) && memcmp(h.magic, GP_DEATH_MAGIC, 8) == 0 &&
      h.ncells <= NCELLS && h.stride >= 8 && h.cells_offset >= sizeof(h)) {
    uint64_t sum = 0, flight = 0;
    rc = 0;
    for (uint32_t i = 0; i < h.ncells && rc == 0; i++) {
      uint64_t v[5];
      size_t n = h.stride >= sizeof(v) ? 5 : 1;
      if (pread(fd, v, n * 8, (off_t)h.cells_offset + (off_t)i * h.stride) !=
          (ssize_t)(n * 8))
        rc = GP_ECORRUPT;
      sum += v[0];
      if (n == 5)
        flight += v[4]; /* signed counts: the sum wraps right */
    }
    if (rc == 0 && h.overflow)
      rc = GP_ERANGE; /* a count is missing: say "unknown", not a number */
    uint64_t kept = h.written + h.salvaged;
    *lost = sum > kept ? sum - kept : 0;
    /* GPU work it had queued and never saw done: lost as well. */
    if ((int64_t)flight > 0)
      *lost += flight;
    *pid = h.pid;
  } else if (k == 0) {
    rc = GP_ENOENT; /* a note without a page: the process could not map it */
  }
  close(fd);
  return rc;
}

/* Appends a varint. */
static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  do {
    p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n;
}

static size_t put_tag(uint8_t *p, uint32_t field, uint32_t type) {
  return put_varint(p, (uint64_t)field << 3 | type);
}

static size_t put_uint(uint8_t *p, uint32_t field, uint64_t v) {
  size_t n = put_tag(p, field, 0);
  return n + put_varint(p + n, v);
}

/* Appends field (LEN) holding the len bytes of body. */
static size_t put_len(uint8_t *p, uint32_t field, const void *body,
                      size_t len) {
  size_t n = put_tag(p, field, 2);
  n += put_varint(p + n, len);
  memcpy(p + n, body, len);
  return n + len;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return k < 0 ? -errno : GP_EIO;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* See session.h. */
int gp_record_write_lost(int fd, uint32_t seq, int32_t pid, uint64_t ts,
                         uint64_t lost) {
  if (fd < 0 || seq == 0 || seq >= (1u << 23))
    return GP_EINVAL;
  /* A sequence of our own, beside the process's, and track ids no writer
   * gives (its uuids stay below 2^63). */
  uint32_t own_seq = (1u << 23) | seq;
  bool unknown = lost == GP_RECORD_LOST_UNKNOWN;
  uint64_t proc_uuid = (1ull << 63) | ((uint64_t)seq << 8) | 1;
  uint64_t track_uuid = (1ull << 63) | ((uint64_t)seq << 8) | (unknown ? 3 : 2);
  uint8_t out[512], pkt[200], msg[160], sub[64];
  size_t o = 0, n, m, k;
  const char *name = unknown ? "gpuperf lost at process death, count unknown"
                             : "gpuperf lost at process death";
  size_t name_len = strlen(name);
  if (unknown)
    lost = 1;

  /* The process's track: found again by its pid. */
  k = put_uint(sub, GP_PB_PD_PID, (uint64_t)(uint32_t)pid);
  m = put_uint(msg, GP_PB_TD_UUID, proc_uuid);
  m += put_len(msg + m, GP_PB_TD_PROCESS, sub, k);
  n = put_uint(pkt, GP_PB_PACKET_SEQUENCE_ID, own_seq);
  n += put_uint(pkt + n, GP_PB_PACKET_SEQUENCE_FLAGS,
                GP_PB_SEQ_INCREMENTAL_STATE_CLEARED);
  n += put_len(pkt + n, GP_PB_PACKET_TRACK_DESCRIPTOR, msg, m);
  o += put_len(out + o, 1, pkt, n);

  /* Its counter track. */
  k = put_uint(sub, GP_PB_CD_UNIT, GP_PB_COUNTER_UNIT_COUNT);
  m = put_uint(msg, GP_PB_TD_UUID, track_uuid);
  m += put_len(msg + m, GP_PB_TD_NAME, name, name_len);
  m += put_uint(msg + m, GP_PB_TD_PARENT_UUID, proc_uuid);
  m += put_len(msg + m, GP_PB_TD_COUNTER, sub, k);
  n = put_uint(pkt, GP_PB_PACKET_SEQUENCE_ID, own_seq);
  n += put_len(pkt + n, GP_PB_PACKET_TRACK_DESCRIPTOR, msg, m);
  o += put_len(out + o, 1, pkt, n);

  /* The count, when the recorder learnt of the death. */
  m = put_uint(msg, GP_PB_TE_TYPE, GP_PB_TE_TYPE_COUNTER);
  m += put_uint(msg + m, GP_PB_TE_TRACK_UUID, track_uuid);
  m += put_uint(msg + m, GP_PB_TE_COUNTER_VALUE, lost);
  n = put_uint(pkt, GP_PB_PACKET_TIMESTAMP, ts);
  n += put_uint(pkt + n, GP_PB_PACKET_SEQUENCE_ID, own_seq);
  n += put_len(pkt + n, GP_PB_PACKET_TRACK_EVENT, msg, m);
  o += put_len(out + o, 1, pkt, n);
  return write_all(fd, out, o);
}
