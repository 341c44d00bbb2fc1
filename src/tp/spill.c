/*
 * spill.c - the trace processor's big arrays in temporary files, and the
 * watcher that keeps their resident pages few (see spill.h).
 *
 * Each spilled array is a shared mapping of an unlinked file of its own
 * (O_TMPFILE), so that it grows like an anonymous one: the file is
 * extended, then mremap() extends the mapping, with no copy. The file's
 * blocks are allocated as it grows (fallocate): a write into a shared
 * mapping of a file with a hole and a full disk would be a SIGBUS.
 *
 * Why a watcher thread, not calls from the import's loops: rows are read
 * back by SQL in many places (scans, joins, the indexes a query builds),
 * and any loop over a big table touches its pages. The thread reads the
 * process's resident file pages (/proc/self/statm, "shared") every few
 * milliseconds and, above the limit, drops every watched mapping's
 * resident pages. Dropping is safe at any moment for these mappings and
 * only these: a shared file mapping keeps its data in the page cache and
 * the file, and the watched read-only file mappings were never written;
 * a later access faults the page back in. The registry's lock is held
 * while dropping, so that no mapping is unmapped or moved meanwhile.
 */
#include "tp/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS 2000000 /* the watcher's period: 2 ms */
#define POLL_CALLS 64   /* gp__tp_spill_poll calls between checks */

typedef struct spill_map {
  char *p;
  size_t len;
  int fd; /* -1: a watched mapping, not ours */
} spill_map;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static spill_map *maps;
static size_t nmaps, capmaps;
static int depth; /* nested gp__tp_spill_begin calls */
static char dir[4096];
static size_t keep_bytes;
static pthread_t watcher;
static bool watcher_up, stopping;
static int statm_fd = -1;
static long page_size;
static long shared_base; /* resident file pages when spilling began */
/* depth > 0, readable without the lock by gp__tp_spill_poll; and its
 * count of calls (approximate where several threads call it). */
static _Atomic int polling;
static _Thread_local unsigned poll_calls;

/* Resident file-backed pages of the process ("shared" in statm), or -1. */
static long shared_pages(void) {
  char buf[256];
  ssize_t n = pread(statm_fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  long size, resident, shared;
  if (sscanf(buf, "%ld %ld %ld", &size, &resident, &shared) != 3)
    return -1;
  return shared;
}

static unsigned long drops;

/* See spill.h. */
unsigned long gp__tp_spill_drops(void) {
  pthread_mutex_lock(&mu);
  unsigned long n = drops;
  pthread_mutex_unlock(&mu);
  return n;
}

/* Drops the resident pages of every mapping (the lock held). */
static void drop_all(void) {
  drops++;
  for (size_t i = 0; i < nmaps; i++)
    madvise(maps[i].p, maps[i].len, MADV_DONTNEED);
}

/* Drops the resident pages if there are too many (the lock held). */
static void check(void) {
  long s = statm_fd >= 0 ? shared_pages() : -1;
  if (s >= 0 && s > shared_base &&
      (size_t)(s - shared_base) * (size_t)page_size > keep_bytes)
    drop_all();
}

static void *watch(void *arg) {
  (void)arg;
  struct timespec t = {0, POLL_NS};
  for (;;) {
    nanosleep(&t, NULL);
    pthread_mutex_lock(&mu);
    if (stopping) {
      pthread_mutex_unlock(&mu);
      return NULL;
    }
    check();
    pthread_mutex_unlock(&mu);
  }
}

/* See spill.h. */
void gp__tp_spill_poll(void) {
  if (!polling || ++poll_calls % POLL_CALLS)
    return;
  pthread_mutex_lock(&mu);
  if (depth > 0 && shared_base >= 0)
    check();
  pthread_mutex_unlock(&mu);
}

/* A new unlinked file in dir, or -errno. */
static int new_file(const char *d) {
  int fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
    return fd >= 0 ? fd : -errno;
  char path[4200];
  snprintf(path, sizeof(path), "%s/gpuperf-spill-XXXXXX", d);
  fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0)
    return -errno;
  unlink(path);
  return fd;
}

/* Makes the file fd len bytes long, its blocks from `from` allocated. */
static int file_size(int fd, size_t from, size_t len) {
  if (len > from && fallocate(fd, 0, (off_t)from, (off_t)(len - from)) == 0)
    return 0;
  if (len > from && errno != EOPNOTSUPP)
    return -errno;
  return ftruncate(fd, (off_t)len) == 0 ? 0 : -errno;
}

/* See spill.h. */
int gp__tp_spill_begin(const char *d, size_t keep) {
  if (!d || !*d)
    d = getenv("TMPDIR");
  if (!d || !*d)
    d = "/var/tmp";
  int fd = new_file(d);
  if (fd < 0)
    return fd;
  close(fd);
  pthread_mutex_lock(&mu);
  if (depth++ == 0) {
    snprintf(dir, sizeof(dir), "%s", d);
    keep_bytes = keep;
    page_size = sysconf(_SC_PAGESIZE);
    statm_fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    shared_base = statm_fd >= 0 ? shared_pages() : -1;
    stopping = false;
    polling = 1;
    /* Without statm the arrays still spill; only the dropping stops. */
    watcher_up =
        shared_base >= 0 && pthread_create(&watcher, NULL, watch, NULL) == 0;
  }
  pthread_mutex_unlock(&mu);
  return 0;
}

/* See spill.h. */
void gp__tp_spill_end(void) {
  pthread_mutex_lock(&mu);
  if (depth > 0 && --depth == 0)
    polling = 0;
  bool join = depth == 0 && watcher_up;
  if (join)
    stopping = true;
  pthread_mutex_unlock(&mu);
  if (join) {
    pthread_join(watcher, NULL);
    watcher_up = false;
  }
  pthread_mutex_lock(&mu);
  if (depth == 0 && statm_fd >= 0) {
    close(statm_fd);
    statm_fd = -1;
  }
  pthread_mutex_unlock(&mu);
}

/* See spill.h. */
bool gp__tp_spill_on(void) {
  return polling != 0;
}

/* Adds a mapping to the registry (the lock held); false if out of memory. */
static bool add(char *p, size_t len, int fd) {
  if (nmaps == capmaps) {
    size_t nc = capmaps ? 2 * capmaps : 64;
    spill_map *m = realloc(maps, nc * sizeof(*m));
    if (!m)
      return false;
    maps = m;
    capmaps = nc;
  }
  maps[nmaps++] = (spill_map){p, len, fd};
  return true;
}

/* The registry's entry of p (the lock held), or NULL. */
static spill_map *find(const void *p) {
  for (size_t i = nmaps; i-- > 0;)
    if (maps[i].p == p)
      return &maps[i];
  return NULL;
}

static void forget(spill_map *m) {
  *m = maps[--nmaps];
}

/* See spill.h. */
void *gp__tp_spill_map(size_t len) {
  pthread_mutex_lock(&mu);
  int fd = new_file(dir);
  void *p = MAP_FAILED;
  if (fd >= 0 && file_size(fd, 0, len) == 0)
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  /* Before the first access: the page cache then holds the file in
   * small pages (no readahead), and a fault maps 16 of them (the
   * kernel's fault-around), not a large folio of up to 2 MiB. Measured
   * on Linux 6.18: 1,000 reads at random in 256 MiB made 240 MB
   * resident without, 56 MB with. */
  if (p != MAP_FAILED)
    madvise(p, len, MADV_RANDOM);
  if (p != MAP_FAILED && !add(p, len, fd)) {
    munmap(p, len);
    p = MAP_FAILED;
  }
  if (p == MAP_FAILED && fd >= 0)
    close(fd);
  pthread_mutex_unlock(&mu);
  return p;
}

/* See spill.h. */
bool gp__tp_spill_remap(void *p, size_t new_len, void **out) {
  pthread_mutex_lock(&mu);
  spill_map *m = find(p);
  if (!m || m->fd < 0) {
    pthread_mutex_unlock(&mu);
    return false;
  }
  *out = MAP_FAILED;
  if (new_len <= m->len || file_size(m->fd, m->len, new_len) == 0) {
    void *q = mremap(m->p, m->len, new_len, MREMAP_MAYMOVE);
    if (q != MAP_FAILED) {
      if (new_len < m->len && ftruncate(m->fd, (off_t)new_len) != 0) {
        /* Only disk left used: the mapping is right. */
      }
      m->p = q;
      m->len = new_len;
      *out = q;
    }
  }
  pthread_mutex_unlock(&mu);
  return true;
}

/* See spill.h. */
bool gp__tp_spill_unmap(void *p) {
  pthread_mutex_lock(&mu);
  spill_map *m = p ? find(p) : NULL;
  bool ours = m && m->fd >= 0;
  if (ours) {
    munmap(m->p, m->len);
    close(m->fd);
    forget(m);
  }
  pthread_mutex_unlock(&mu);
  return ours;
}

/* See spill.h. */
bool gp__tp_spill_punch(void *p, size_t off, size_t len) {
  pthread_mutex_lock(&mu);
  spill_map *m = find(p);
  bool ours = m && m->fd >= 0;
  size_t pg = (size_t)page_size ? (size_t)page_size : 4096;
  size_t a = (off + pg - 1) / pg * pg, b = (off + len) / pg * pg;
  if (ours && b > a) {
    madvise(m->p + a, b - a, MADV_DONTNEED);
    fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a,
              (off_t)(b - a));
  }
  pthread_mutex_unlock(&mu);
  return ours;
}

/* See spill.h. */
void gp__tp_spill_watch(const void *p, size_t len) {
  pthread_mutex_lock(&mu);
  add((char *)(uintptr_t)p, len, -1);
  pthread_mutex_unlock(&mu);
}

/* See spill.h. */
void gp__tp_spill_unwatch(const void *p) {
  pthread_mutex_lock(&mu);
  spill_map *m = find(p);
  if (m && m->fd < 0)
    forget(m);
  pthread_mutex_unlock(&mu);
}
