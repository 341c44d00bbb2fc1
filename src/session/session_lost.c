/*
 * session_lost.c - counting what a recorded process loses when it is
 * killed by SIGKILL, the one death it cannot see.
 *
 * A recorded process (GPUPERF_RECORD_DIR) maps <dir>/<seq>.open, its
 * death page, shared: every thread counts the records it commits into a
 * cell of its own there (gp__activity_count_into: one increment per
 * record), and the session adds up the records it has written to its
 * part of the trace. The page is removed when the part is finished. If it
 * is left, its process died without finishing (or still runs), and
 *
 *     lost at process death = sum(cells) - written
 *
 * which `gpuperf record` reads with gp_record_lost_at_death() and writes
 * into the trace with gp_record_write_lost(), as a counter track
 * "gpuperf lost at process death" of the process.
 *
 * The page (all little-endian, as the machine writes it):
 *
 *   offset  size  field
 *        0     8  magic "GPDEATH1"
 *        8     4  ncells: thread cells that follow
 *       12     4  stride of a cell (64: one cache line each)
 *       16     4  cells_offset (4096)
 *       20     4  pid of the process
 *       24     4  overflow: 1 if a thread had no cell (the count is short)
 *       28     4  reserved, 0
 *       32     8  written: records written to the part
 *     4096  ncells * stride: the cells, a uint64_t at the start of each
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfetto/proto.h"
#include "sessionInt.h"

#define PAGE_MAGIC "GPDEATH1"
#define NCELLS 1024u
#define STRIDE 64u
#define CELLS_OFFSET 4096u
#define PAGE_BYTES (CELLS_OFFSET + NCELLS * STRIDE)

typedef struct death_page {
  char magic[8];
  uint32_t ncells, stride, cells_offset;
  int32_t pid;
  uint32_t overflow, reserved;
  uint64_t written;
} death_page;

static death_page *page; /* this process's, or NULL */

/* See sessionInt.h. */
int gp__death_page_open(const char *dir, uint32_t seq, bool in_fork_child) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  void *m = MAP_FAILED;
  if (ftruncate(fd, PAGE_BYTES) == 0)
    m = mmap(NULL, PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (m == MAP_FAILED)
    return -e; /* the note stays: the part is still reported as unfinished */
  death_page *p = m;
  p->ncells = NCELLS;
  p->stride = STRIDE;
  p->cells_offset = CELLS_OFFSET;
  p->pid = (int32_t)getpid();
  memcpy(p->magic, PAGE_MAGIC, 8);
  page = p;
  gp__activity_count_into((uint8_t *)p + CELLS_OFFSET, NCELLS, STRIDE,
                          &p->overflow, in_fork_child);
  return 0;
}

/* See sessionInt.h. */
void gp__death_page_written(const uint8_t *buffer, size_t valid) {
  if (!page)
    return;
  uint64_t n = 0;
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(buffer, valid, &r) == 0)
    n++;
  page->written += n;
}

/* See sessionInt.h. */
void gp__death_page_close(const char *dir, uint32_t seq, bool remove) {
  if (page) {
    gp__activity_count_into(NULL, 0, 0, NULL, false);
    munmap(page, PAGE_BYTES);
    page = NULL;
  }
  if (remove && dir) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
    unlink(path);
  }
}

/* See sessionInt.h. */
void gp__death_page_forget(void) {
  /* A forked child: the mapping is its parent's; core stopped counting
   * into it already. */
  if (page)
    munmap(page, PAGE_BYTES);
  page = NULL;
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
  death_page h;
  ssize_t k = pread(fd, &h, sizeof(h), 0);
  int rc = GP_ECORRUPT;
  if (k == (ssize_t)sizeof(h) && memcmp(h.magic, PAGE_MAGIC, 8) == 0 &&
      h.ncells <= NCELLS && h.stride >= 8 && h.cells_offset >= sizeof(h)) {
    uint64_t sum = 0;
    rc = 0;
    for (uint32_t i = 0; i < h.ncells && rc == 0; i++) {
      uint64_t v;
      if (pread(fd, &v, sizeof(v),
                (off_t)h.cells_offset + (off_t)i * h.stride) !=
          (ssize_t)sizeof(v))
        rc = GP_ECORRUPT;
      sum += v;
    }
    if (rc == 0 && h.overflow)
      rc = GP_ERANGE; /* a count is missing: say "unknown", not a number */
    *lost = sum > h.written ? sum - h.written : 0;
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
  uint64_t proc_uuid = (1ull << 63) | ((uint64_t)seq << 8) | 1;
  uint64_t track_uuid = (1ull << 63) | ((uint64_t)seq << 8) | 2;
  uint8_t out[512], pkt[200], msg[160], sub[64];
  size_t o = 0, n, m, k;
  static const char name[] = "gpuperf lost at process death";

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
  m += put_len(msg + m, GP_PB_TD_NAME, name, sizeof(name) - 1);
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
