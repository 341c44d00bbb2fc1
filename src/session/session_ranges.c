/*
 * session_ranges.c - the activity index the processes of one recording
 * share, so that a gpu.counters data source's activity_ranges (skip N,
 * count M) count the activities of the whole recorded program, as the
 * seed defines them for the data source as a whole, and not those of each
 * process on its own.
 *
 * The index lives in <dir>/activity_ranges, a file of the recording
 * folder (GPUPERF_RECORD_DIR) that each recorded process maps shared: the
 * first one to need it makes it, the others find it. A process forked
 * after joining keeps the mapping, and so the count; one that execs maps
 * the file again. Layout (native byte order, all zero when made):
 *
 *   offset   size  field
 *   8*i      8     the number of activities data source i of the config
 *                  has let through its name and range filters so far, in
 *                  every process of the recording (i < RANGES_CELLS)
 *
 * An activity takes its index with one atomic add on the cell (a lock-free
 * 64-bit atomic works across processes on a shared mapping); a config
 * without activity_ranges maps nothing and adds nothing. The mapping
 * stays for the life of the process: filters of sessions that ended may
 * still point into it (see gp__counters_start_shared()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sessionInt.h"

#define RANGES_CELLS 512u
#define RANGES_SIZE (RANGES_CELLS * sizeof(uint64_t))

static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t *ranges_base; /* RANGES_SIZE bytes, mapped shared */
static char ranges_dir[4096];         /* the folder it belongs to */

/* Whether some gpu.counters data source of cfg has activity_ranges. */
static bool wants_ranges(const gp_trace_config *cfg) {
  gp_data_source_info ds;
  for (uint32_t i = 0; gp_trace_config_get_data_source(cfg, i, &ds) == 0; i++)
    if (ds.kind == GP_DATA_SOURCE_GPU_COUNTERS && ds.counters.instrumented &&
        ds.counters.num_ranges)
      return true;
  return false;
}

/* See sessionInt.h. */
int gp__ranges_shared_map(const char *dir, const gp_trace_config *cfg,
                          char *path, size_t path_size) {
  snprintf(path, path_size, "%s/%s", dir, GP_RANGES_FILE);
  if (!wants_ranges(cfg))
    return 0;
  pthread_mutex_lock(&ranges_lock);
  int rc = 0;
  if (ranges_base && strcmp(ranges_dir, dir) == 0)
    goto out; /* mapped already (a fork of a process that joined) */
  /* Whatever was mapped before belongs to another recording: it stays
   * mapped (filters may still point into it), but this one does not use
   * it, even if mapping its own fails. */
  ranges_base = NULL;
  ranges_dir[0] = '\0';
  if (strlen(dir) >= sizeof(ranges_dir)) {
    rc = -ENAMETOOLONG;
    goto out;
  }
  char file[4200];
  snprintf(file, sizeof(file), "%s/%s", dir, GP_RANGES_FILE);
  int fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    rc = -errno;
    goto out;
  }
  /* Disk blocks are reserved before the first store: on a full disk a
   * store into a hole of a shared mapping is a SIGBUS. Reserving what is
   * there already changes nothing, so every process may do it. */
  int e = posix_fallocate(fd, 0, (off_t)RANGES_SIZE);
  if (e != 0) {
    close(fd);
    rc = -e;
    goto out;
  }
  void *m = mmap(NULL, RANGES_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  e = errno;
  close(fd);
  if (m == MAP_FAILED) {
    rc = -e;
    goto out;
  }
  if (!__atomic_always_lock_free(sizeof(uint64_t), 0)) {
    /* Defensive: an atomic made of a lock in this process's memory would
     * not be atomic for the others. */
    munmap(m, RANGES_SIZE);
    rc = GP_ENOTSUP;
    goto out;
  }
  ranges_base = m;
  snprintf(ranges_dir, sizeof(ranges_dir), "%s", dir);
out:
  pthread_mutex_unlock(&ranges_lock);
  return rc;
}

/* See sessionInt.h. */
_Atomic uint64_t *gp__ranges_shared_cell(uint32_t index) {
  pthread_mutex_lock(&ranges_lock);
  _Atomic uint64_t *c =
      ranges_base && index < RANGES_CELLS ? ranges_base + index : NULL;
  pthread_mutex_unlock(&ranges_lock);
  return c;
}

/* See sessionInt.h. */
void gp__ranges_after_fork(void) {
  pthread_mutex_init(&ranges_lock, NULL);
}
