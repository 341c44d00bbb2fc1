/*
 * v3d_double.c - a test double of the V3D render node's ioctl interface
 * (libv3d-double.so), for machines without a V3D GPU. Preloaded
 * (LD_PRELOAD), it answers open() of one path ($V3D_DOUBLE_NODE) with a
 * file of its own and every ioctl on that file as the kernel's v3d driver
 * documents it (include/uapi/drm/v3d_drm.h, drivers/gpu/drm/v3d/
 * v3d_perfmon.c and v3d_submit.c, igt-gpu-tools tests/v3d/v3d_perfmon.c);
 * see tests/v3d/README.md. It is not the kernel, and no real V3D has been
 * run here.
 *
 * What it answers:
 *   DRM_IOCTL_VERSION         driver "v3d"
 *   GET_PARAM                 CORE0_IDENT0/1 (the version), SUPPORTS_PERFMON,
 *                             MAX_PERF_COUNTERS; EINVAL for pad or an
 *                             unknown param
 *   PERFMON_CREATE            EINVAL for 0 or more than 32 counters, or a
 *                             counter past the table; ids per file from 1
 *   PERFMON_DESTROY           EINVAL for an id this file does not have
 *   PERFMON_GET_VALUES        EINVAL for pad or an unknown id, EFAULT for
 *                             a NULL values_ptr; cumulative
 *   PERFMON_GET_COUNTER       EINVAL for reserved bytes or a counter past
 *                             the table
 *   PERFMON_SET_GLOBAL        EINVAL for unknown flags or id, or a clear
 *                             with no global perfmon; EBUSY while a global
 *                             perfmon is set or a job's perfmon is active
 *   SUBMIT_CL, SUBMIT_CSD     a simulated job: EAGAIN if it names a perfmon
 *                             while a global one is set, ENOENT for an
 *                             unknown perfmon; else every counter advances
 *                             by v3dd_job_amount() and the counting
 *                             perfmon (the global one, else the job's)
 *                             adds the amounts of its counters
 *   anything else             ENOTTY
 *
 * Environment: V3D_DOUBLE_NODE (the path), V3D_DOUBLE_STATE (the shared
 * state file, v3d_double.h), V3D_DOUBLE_VERSION (42, default, or 71),
 * V3D_DOUBLE_WITHOUT (a comma list of SET_GLOBAL and GET_COUNTER: those
 * answer ENOTTY, as on an older kernel; without GET_COUNTER the
 * MAX_PERF_COUNTERS param is unknown too).
 *
 * Closing the file releases its perfmons (clearing the global one if it
 * is theirs), as the kernel does; so does the death of the process that
 * opened it, found at the next call of any process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/linux/v3d_uapi.h"
#include "counters/v3d.h"
#include "v3d_double.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_FDS 4096

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *node;
static int state_fd = -1;
static v3dd_state *st;
static int version = 42;
static uint32_t ncounters = GP__V3D42_NUM;
static bool no_set_global, no_get_counter;
static int fd_file[MAX_FDS]; /* file slot + 1, per fd of this process */

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);

static void init(void) {
  real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
  real_openat =
      (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
  real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
  real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
  node = getenv("V3D_DOUBLE_NODE");
  const char *v = getenv("V3D_DOUBLE_VERSION");
  if (v && strcmp(v, "71") == 0) {
    version = 71;
    ncounters = GP__V3D71_NUM;
  }
  const char *w = getenv("V3D_DOUBLE_WITHOUT");
  no_set_global = w && strstr(w, "SET_GLOBAL");
  no_get_counter = w && strstr(w, "GET_COUNTER");
  const char *path = getenv("V3D_DOUBLE_STATE");
  if (!node || !path)
    return;
  int fd = real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) {
    fprintf(stderr, "v3d-double: %s: %s\n", path, strerror(errno));
    return;
  }
  off_t size = lseek(fd, 0, SEEK_END);
  if (size < (off_t)sizeof(v3dd_state) &&
      ftruncate(fd, sizeof(v3dd_state)) != 0) {
    fprintf(stderr, "v3d-double: %s: %s\n", path, strerror(errno));
    real_close(fd);
    return;
  }
  void *m =
      mmap(NULL, sizeof(v3dd_state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    real_close(fd);
    return;
  }
  st = m;
  st->magic = V3DD_MAGIC;
  flock(fd, LOCK_UN);
  state_fd = fd;
}

static void lock_state(void) {
  pthread_mutex_lock(&lock);
  while (flock(state_fd, LOCK_EX) != 0 && errno == EINTR) {
  }
}

static void unlock_state(void) {
  flock(state_fd, LOCK_UN);
  pthread_mutex_unlock(&lock);
}

/* The kernel's v3d_perfmon_delete(): stop it if active, clear it if it is
 * the global perfmon, free it. */
static void perfmon_delete(uint32_t slot) {
  if (st->active == slot + 1)
    st->active = 0;
  if (st->global == slot + 1)
    st->global = 0;
  memset(&st->perfmons[slot], 0, sizeof(st->perfmons[slot]));
}

static void file_release(uint32_t f) {
  for (uint32_t p = 0; p < V3DD_PERFMONS; p++)
    if (st->perfmons[p].file == f + 1)
      perfmon_delete(p);
  memset(&st->files[f], 0, sizeof(st->files[f]));
}

/* Files of processes that died without closing them: the kernel closes
 * those at exit. */
static void reap(void) {
  for (uint32_t f = 0; f < V3DD_FILES; f++)
    if (st->files[f].pid && kill(st->files[f].pid, 0) != 0 && errno == ESRCH)
      file_release(f);
}

static bool ours(int fd) {
  pthread_once(&once, init);
  return st && fd >= 0 && fd < MAX_FDS && fd_file[fd];
}

static int open_node(int fd) {
  if (fd < 0 || fd >= MAX_FDS)
    return fd;
  lock_state();
  reap();
  for (uint32_t f = 0; f < V3DD_FILES; f++) {
    if (!st->files[f].pid) {
      st->files[f].pid = getpid();
      st->files[f].next_id = 1;
      fd_file[fd] = (int)f + 1;
      unlock_state();
      return fd;
    }
  }
  unlock_state();
  real_close(fd);
  errno = ENFILE;
  return -1;
}

/* The perfmon slot of id on file f, or -1. */
static int find(uint32_t f, uint32_t id) {
  for (uint32_t p = 0; p < V3DD_PERFMONS; p++)
    if (st->perfmons[p].file == f + 1 && st->perfmons[p].id == id && id)
      return (int)p;
  return -1;
}

static void copy_str(uint8_t *dst, size_t size, const char *src) {
  snprintf((char *)dst, size, "%s", src);
}

static int do_version(gp__drm_version *v) {
  static const char *const s[3] = {"v3d", "20180419", "Broadcom V3D graphics"};
  char *dst[3] = {v->name, v->date, v->desc};
  size_t *len[3] = {&v->name_len, &v->date_len, &v->desc_len};
  v->version_major = 1;
  v->version_minor = 0;
  v->version_patchlevel = 0;
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(s[i]);
    if (dst[i] && *len[i])
      memcpy(dst[i], s[i], n < *len[i] ? n : *len[i]);
    *len[i] = n;
  }
  return 0;
}

static int do_get_param(gp__v3d_get_param *p) {
  if (p->pad)
    return -EINVAL;
  switch (p->param) {
  case GP__V3D_PARAM_CORE0_IDENT0:
    p->value = (uint64_t)(version / 10) << 24 | 0x443356; /* "V3D" */
    return 0;
  case GP__V3D_PARAM_CORE0_IDENT1:
    p->value = (uint64_t)(version % 10) | 0x10; /* minor | one slice */
    return 0;
  case GP__V3D_PARAM_SUPPORTS_PERFMON:
    p->value = 1;
    return 0;
  case GP__V3D_PARAM_MAX_PERF_COUNTERS:
    if (no_get_counter)
      return -EINVAL; /* an older kernel does not know the param */
    p->value = ncounters;
    return 0;
  default:
    if (p->param < GP__V3D_PARAM_MAX_PERF_COUNTERS) {
      p->value = 1;
      return 0;
    }
    return -EINVAL;
  }
}

static int do_create(uint32_t f, gp__v3d_perfmon_create *c) {
  if (c->ncounters == 0 || c->ncounters > GP__V3D_MAX_PERF_COUNTERS)
    return -EINVAL;
  for (uint32_t i = 0; i < c->ncounters; i++)
    if (c->counters[i] >= ncounters)
      return -EINVAL;
  for (uint32_t p = 0; p < V3DD_PERFMONS; p++) {
    v3dd_perfmon *pm = &st->perfmons[p];
    if (pm->file)
      continue;
    pm->file = f + 1;
    pm->id = st->files[f].next_id++;
    pm->ncounters = c->ncounters;
    memcpy(pm->counters, c->counters, sizeof(pm->counters));
    memset(pm->values, 0, sizeof(pm->values));
    c->id = pm->id;
    return 0;
  }
  return -ENOMEM;
}

static int do_get_counter(gp__v3d_perfmon_get_counter *c) {
  if (no_get_counter)
    return -ENOTTY;
  for (size_t i = 0; i < sizeof(c->reserved); i++)
    if (c->reserved[i])
      return -EINVAL;
  if (c->counter >= ncounters)
    return -EINVAL;
  gp__v3d_desc d;
  if (version == 71) {
    d = gp__v3d71_counters[c->counter];
  } else {
    const gp_counter_info *i = &gp__v3d42_counters[c->counter].info;
    d = (gp__v3d_desc){i->category, i->name, i->description};
  }
  copy_str(c->name, sizeof(c->name), d.name);
  copy_str(c->category, sizeof(c->category), d.category);
  copy_str(c->description, sizeof(c->description), d.description);
  return 0;
}

static int do_set_global(uint32_t f, const gp__v3d_perfmon_set_global *g) {
  if (no_set_global)
    return -ENOTTY;
  if (g->flags & ~(uint32_t)GP__V3D_PERFMON_CLEAR_GLOBAL)
    return -EINVAL;
  int p = find(f, g->id);
  if (p < 0)
    return -EINVAL;
  if (g->flags & GP__V3D_PERFMON_CLEAR_GLOBAL) {
    if (!st->global)
      return -EINVAL;
    if (st->active == st->global)
      st->active = 0;
    st->global = 0;
    return 0;
  }
  if (st->active || st->global) {
    st->refused_ebusy++;
    return -EBUSY;
  }
  st->global = st->active = (uint32_t)p + 1;
  return 0;
}

/* One job, named perfmon perfmon_id of file f (0: none). */
static int do_job(uint32_t f, uint32_t perfmon_id) {
  int own = -1;
  if (perfmon_id) {
    if (st->global) {
      st->refused_eagain++;
      return -EAGAIN;
    }
    if ((own = find(f, perfmon_id)) < 0)
      return -ENOENT;
  }
  uint64_t j = ++st->jobs;
  for (uint32_t c = 0; c < ncounters; c++)
    st->hw[c] += v3dd_job_amount(j, c);
  uint32_t counting = st->global;
  if (!counting) {
    /* v3d_switch_perfmon(): the job's perfmon runs, or none. */
    st->active = own >= 0 ? (uint32_t)own + 1 : 0;
    counting = st->active;
  }
  if (!counting)
    return 0;
  v3dd_perfmon *pm = &st->perfmons[counting - 1];
  for (uint32_t i = 0; i < pm->ncounters; i++) {
    uint64_t a = v3dd_job_amount(j, pm->counters[i]);
    pm->values[i] += a;
    if (counting == st->global)
      st->global_counted[pm->counters[i]] += a;
  }
  return 0;
}

static int dispatch(uint32_t f, unsigned long req, void *arg) {
  switch (req) {
  case GP__DRM_IOCTL_VERSION:
    return do_version(arg);
  case GP__V3D_IOCTL_GET_PARAM:
    return do_get_param(arg);
  case GP__V3D_IOCTL_PERFMON_CREATE:
    return do_create(f, arg);
  case GP__V3D_IOCTL_PERFMON_DESTROY: {
    int p = find(f, ((gp__v3d_perfmon_destroy *)arg)->id);
    if (p < 0)
      return -EINVAL;
    perfmon_delete((uint32_t)p);
    return 0;
  }
  case GP__V3D_IOCTL_PERFMON_GET_VALUES: {
    gp__v3d_perfmon_get_values *g = arg;
    int p = g->pad ? -1 : find(f, g->id);
    if (p < 0)
      return -EINVAL;
    if (!g->values_ptr)
      return -EFAULT; /* copy_to_user() of an address it cannot write */
    memcpy((void *)(uintptr_t)g->values_ptr, st->perfmons[p].values,
           st->perfmons[p].ncounters * sizeof(uint64_t));
    return 0;
  }
  case GP__V3D_IOCTL_PERFMON_GET_COUNTER:
    return do_get_counter(arg);
  case GP__V3D_IOCTL_PERFMON_SET_GLOBAL:
    return do_set_global(f, arg);
  case GP__V3D_IOCTL_SUBMIT_CL: {
    gp__v3d_submit_cl *s = arg;
    if (s->flags & ~3u || s->pad)
      return -EINVAL;
    return do_job(f, s->perfmon_id);
  }
  case GP__V3D_IOCTL_SUBMIT_CSD: {
    gp__v3d_submit_csd *s = arg;
    if (s->flags & ~1u || s->pad)
      return -EINVAL;
    return do_job(f, s->perfmon_id);
  }
  default:
    return -ENOTTY;
  }
}

EXPORT int ioctl(int fd, unsigned long req, ...) {
  va_list ap;
  va_start(ap, req);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  if (!ours(fd))
    return real_ioctl(fd, req, arg);
  if (!arg) {
    errno = EFAULT;
    return -1;
  }
  lock_state();
  reap();
  int rc = dispatch((uint32_t)fd_file[fd] - 1, req, arg);
  unlock_state();
  if (rc < 0) {
    errno = -rc;
    return -1;
  }
  return 0;
}

static bool is_node(const char *path) {
  pthread_once(&once, init);
  return st && node && path && strcmp(path, node) == 0;
}

EXPORT int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = (mode_t)va_arg(ap, int);
  va_end(ap);
  pthread_once(&once, init);
  if (!is_node(path))
    return real_open(path, flags, mode);
  /* A file of our own stands for the node: /dev/null, never written. */
  return open_node(real_open("/dev/null", O_RDWR | (flags & O_CLOEXEC)));
}

EXPORT int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = (mode_t)va_arg(ap, int);
  va_end(ap);
  return open(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = (mode_t)va_arg(ap, int);
  va_end(ap);
  pthread_once(&once, init);
  if (!is_node(path))
    return real_openat(dirfd, path, flags, mode);
  return open(path, flags, mode);
}

EXPORT int close(int fd) {
  if (ours(fd)) {
    lock_state();
    file_release((uint32_t)fd_file[fd] - 1);
    fd_file[fd] = 0;
    unlock_state();
  }
  pthread_once(&once, init);
  return real_close(fd);
}
