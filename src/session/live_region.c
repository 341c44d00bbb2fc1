/*
 * live_region.c - the shared region of gpuperf/live.h: made by a
 * recording process (live.c) and rewritten in place under a sequence
 * lock, read by `gpuperf top` (gp_live_read) without stopping the
 * process. gpuperf/live.h has the layout.
 *
 * The region is a file mapped MAP_SHARED by both sides, so a snapshot is
 * a memcpy into the pages the readers map: no write(2), no rename, no
 * reader-visible file churn. It is made under a temporary name and
 * renamed into place once its header is whole, so a reader never maps a
 * half-made one.
 *
 * Its header names its process by pid and start time (/proc/<pid>/stat),
 * so that `top` can tell a region whose process is gone, or whose pid was
 * given to a later process, and remove it (gp_live_remove_stale): a
 * process killed with SIGKILL never removes its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sessionInt.h"

#define MAGIC "gpuperfL"
#define HEADER_SIZE 64u
#define OFF_VERSION 8
#define OFF_HEADER_SIZE 12
#define OFF_SNAP_SIZE 16
#define OFF_PID 20
#define OFF_SEQ 24
#define OFF_START 32
#define REGION_SIZE (HEADER_SIZE + sizeof(gp_live_snapshot))
/* How long a reader waits for a writer caught mid-update, by the clock:
 * a count of sched_yield() calls is a count of other programs' time
 * slices on a loaded machine (10000 of them took over 30 s under
 * stress-ng). */
#define READ_WAIT_NS 50000000ull

struct gp__live_region {
  uint8_t *base; /* REGION_SIZE bytes, mapped shared */
  char path[512];
};

static _Atomic uint64_t *seq_of(const uint8_t *base) {
  return (_Atomic uint64_t *)(uintptr_t)(base + OFF_SEQ);
}

static void put32(uint8_t *p, uint32_t v) {
  memcpy(p, &v, 4);
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* The start time of process pid (field 22 of /proc/<pid>/stat, clock
 * ticks after boot), or 0 if it cannot be read (no such process). */
static uint64_t start_ticks(uint32_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%u/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The name (field 2) is in parentheses and may hold anything: count
   * the fields after its last ')'. */
  char *p = strrchr(buf, ')');
  if (!p)
    return 0;
  p++;
  for (int field = 2; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p)
      return 0;
    p++;
  }
  return strtoull(p, NULL, 10);
}

/* See sessionInt.h. */
int gp__live_region_create(const char *path, uint32_t pid,
                           gp__live_region **out) {
  gp__live_region *r = calloc(1, sizeof(*r));
  if (!r)
    return GP_ENOMEM;
  char tmp[600];
  int n = snprintf(r->path, sizeof(r->path), "%s", path);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  int rc = 0;
  int fd = -1;
  if (n < 0 || (size_t)n >= sizeof(r->path)) {
    rc = GP_ESIZE;
    goto fail_free;
  }
  fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    rc = -errno;
    goto fail_free;
  }
  if (ftruncate(fd, (off_t)REGION_SIZE) != 0) {
    rc = -errno;
    goto fail_unlink;
  }
  r->base = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (r->base == MAP_FAILED) {
    rc = -errno;
    r->base = NULL;
    goto fail_unlink;
  }
  /* The file is all zeros: a sequence of 0 and an empty snapshot. */
  memcpy(r->base, MAGIC, 8);
  put32(r->base + OFF_VERSION, GP_LIVE_VERSION);
  put32(r->base + OFF_HEADER_SIZE, HEADER_SIZE);
  put32(r->base + OFF_SNAP_SIZE, (uint32_t)sizeof(gp_live_snapshot));
  put32(r->base + OFF_PID, pid);
  uint64_t start = start_ticks(pid);
  memcpy(r->base + OFF_START, &start, 8);
  if (rename(tmp, r->path) != 0) {
    rc = -errno;
    goto fail_unmap;
  }
  close(fd);
  *out = r;
  return 0;
fail_unmap:
  munmap(r->base, REGION_SIZE);
fail_unlink:
  close(fd);
  unlink(tmp);
fail_free:
  free(r);
  return rc;
}

/* See sessionInt.h. */
void gp__live_region_publish(gp__live_region *r, const gp_live_snapshot *s) {
  _Atomic uint64_t *seq = seq_of(r->base);
  uint64_t v = atomic_load_explicit(seq, memory_order_relaxed);
  atomic_store_explicit(seq, v + 1, memory_order_relaxed);
  /* Readers that see the new bytes see the odd sequence first. */
  atomic_thread_fence(memory_order_release);
  memcpy(r->base + HEADER_SIZE, s, sizeof(*s));
  atomic_store_explicit(seq, v + 2, memory_order_release);
}

/* See sessionInt.h. */
void gp__live_region_destroy(gp__live_region *r, bool remove) {
  if (!r)
    return;
  if (remove)
    unlink(r->path);
  munmap(r->base, REGION_SIZE);
  free(r);
}

/* See live.h. */
int gp_live_read(const char *path, gp_live_snapshot *out, uint32_t *pid) {
  if (!path || !out)
    return GP_EINVAL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int rc = -errno;
    close(fd);
    return rc;
  }
  if (st.st_size != (off_t)REGION_SIZE) { /* also guards the mapping */
    close(fd);
    return GP_ECORRUPT;
  }
  uint8_t *base = mmap(NULL, REGION_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  int rc = base == MAP_FAILED ? -errno : 0;
  close(fd);
  if (rc)
    return rc;
  if (memcmp(base, MAGIC, 8) != 0 ||
      get32(base + OFF_VERSION) != GP_LIVE_VERSION ||
      get32(base + OFF_HEADER_SIZE) != HEADER_SIZE ||
      get32(base + OFF_SNAP_SIZE) != sizeof(gp_live_snapshot)) {
    munmap(base, REGION_SIZE);
    return GP_ECORRUPT;
  }
  gp_live_snapshot copy; /* ~22 KB: *out stays whole on failure */
  _Atomic uint64_t *seq = seq_of(base);
  rc = GP_EBUSY;
  uint64_t deadline = 0;
  for (;;) {
    uint64_t a = atomic_load_explicit(seq, memory_order_acquire);
    if (!(a & 1)) {
      memcpy(&copy, base + HEADER_SIZE, sizeof(copy));
      atomic_thread_fence(memory_order_acquire);
      if (atomic_load_explicit(seq, memory_order_relaxed) == a) {
        rc = 0;
        break;
      }
    }
    /* Mid-update (a memcpy away from done, unless the writer stopped), or
     * rewritten while we copied: again, until the deadline. */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    if (!deadline)
      deadline = now + READ_WAIT_NS;
    else if (now >= deadline)
      break;
    if (a & 1)
      sched_yield();
  }
  if (rc == 0) {
    *out = copy;
    /* Defensive: strings end in the buffers whatever the writer did. */
    out->comm[sizeof(out->comm) - 1] = '\0';
    if (out->num_kernels > GP_LIVE_MAX_KERNELS)
      out->num_kernels = GP_LIVE_MAX_KERNELS;
    if (out->num_queues > GP_LIVE_MAX_QUEUES)
      out->num_queues = GP_LIVE_MAX_QUEUES;
    if (out->num_counters > GP_LIVE_MAX_COUNTERS)
      out->num_counters = GP_LIVE_MAX_COUNTERS;
    for (uint32_t i = 0; i < out->num_kernels; i++) {
      out->kernels[i].device[sizeof(out->kernels[i].device) - 1] = '\0';
      out->kernels[i].name[sizeof(out->kernels[i].name) - 1] = '\0';
    }
    for (uint32_t i = 0; i < out->num_queues; i++) {
      out->queues[i].device[sizeof(out->queues[i].device) - 1] = '\0';
      out->queues[i].name[sizeof(out->queues[i].name) - 1] = '\0';
    }
    for (uint32_t i = 0; i < out->num_counters; i++) {
      gp_live_counter *c = &out->counters[i];
      c->device[sizeof(c->device) - 1] = '\0';
      c->name[sizeof(c->name) - 1] = '\0';
      c->unit[sizeof(c->unit) - 1] = '\0';
    }
    if (pid)
      *pid = get32(base + OFF_PID);
  }
  munmap(base, REGION_SIZE);
  return rc;
}

/* See live.h. */
int gp_live_owner_alive(const char *path) {
  if (!path)
    return GP_EINVAL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  uint8_t h[HEADER_SIZE];
  ssize_t n = pread(fd, h, sizeof(h), 0);
  int rc = n < 0 ? -errno : 0;
  close(fd);
  if (rc)
    return rc;
  uint32_t version = n == (ssize_t)sizeof(h) ? get32(h + OFF_VERSION) : 0;
  if (memcmp(h, MAGIC, 8) != 0 || version < 2 || version > GP_LIVE_VERSION ||
      get32(h + OFF_HEADER_SIZE) != HEADER_SIZE)
    return GP_ECORRUPT;
  uint32_t pid = get32(h + OFF_PID);
  uint64_t start = 0;
  if (version >= 3)
    memcpy(&start, h + OFF_START, 8);
  if (pid == 0)
    return GP_ECORRUPT;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
    return 0;
  /* The pid exists: the same process only if it started when ours did
   * (a start time that cannot be read now means it has just ended). */
  return start == 0 || start_ticks(pid) == start ? 1 : 0;
}

/* The pid a live directory's file is named by (<pid> or <pid>.tmp), or 0
 * for another name. */
static uint32_t pid_of_name(const char *name) {
  size_t digits = strspn(name, "0123456789");
  if (digits == 0 || digits > 9 ||
      (name[digits] && strcmp(name + digits, ".tmp") != 0))
    return 0;
  return (uint32_t)strtoul(name, NULL, 10);
}

/* See live.h. */
int gp_live_remove_stale(const char *dir, uint32_t *removed) {
  if (removed)
    *removed = 0;
  if (!dir)
    return GP_EINVAL;
  DIR *d = opendir(dir);
  if (!d)
    return -errno;
  struct dirent *e;
  char path[4096 + 300];
  while ((e = readdir(d))) {
    uint32_t pid = pid_of_name(e->d_name);
    if (!pid)
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    int alive = gp_live_owner_alive(path);
    /* Not a region (yet): judged by the pid in its name. */
    if (alive < 0 && alive != -ENOENT)
      alive = kill((pid_t)pid, 0) != 0 && errno == ESRCH ? 0 : 1;
    if (alive == 0 && unlink(path) == 0 && removed)
      (*removed)++;
  }
  closedir(d);
  return 0;
}
