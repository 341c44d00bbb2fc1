/*
 * misc.c - small helpers every module uses: cached thread and process
 * ids, and shell-style glob matching (counter names, kernel filters).
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

static GP_TLS uint32_t tls_tid;
/* Atomic: the first calls may come from several threads at once (the
 * collector's overhead record and the program's first call, say). */
static _Atomic uint32_t cached_pid;

static void after_fork_child(void) {
  atomic_store_explicit(&cached_pid, 0, memory_order_relaxed);
  tls_tid = 0;
}

static void register_atfork(void) {
  pthread_atfork(NULL, NULL, after_fork_child);
}

/* See core.h. */
uint32_t gp__tid(void) {
  if (GP_UNLIKELY(tls_tid == 0))
    tls_tid = (uint32_t)syscall(SYS_gettid);
  return tls_tid;
}

/* See core.h. */
uint32_t gp__pid(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  uint32_t pid = atomic_load_explicit(&cached_pid, memory_order_relaxed);
  if (GP_UNLIKELY(pid == 0)) {
    pthread_once(&once, register_atfork);
    pid = (uint32_t)getpid();
    atomic_store_explicit(&cached_pid, pid, memory_order_relaxed);
  }
  return pid;
}

/* See core.h. */
bool gp__glob_match(const char *pattern, const char *name) {
  if (!pattern || !name)
    return false;
  return fnmatch(pattern, name, 0) == 0;
}

/* The file a path names: itself, or what a link at it leads to. */
static char *real_target(const char *path) {
  struct stat st;
  char *real = NULL;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    real = realpath(path, NULL);
  return real ? real : strdup(path);
}

/* See core.h. */
FILE *gp__outfile_open(const char *path, char **tmp) {
  *tmp = NULL;
  char *target = real_target(path);
  size_t n = target ? strlen(target) + sizeof(".tmp-XXXXXX") : 0;
  char *t = target ? malloc(n) : NULL;
  if (!t) {
    free(target);
    errno = ENOMEM;
    return NULL;
  }
  snprintf(t, n, "%s.tmp-XXXXXX", target);
  free(target);
  int fd = mkostemp(t, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    free(t);
    errno = e;
    return NULL;
  }
  fchmod(fd, 0644); /* as the session's trace files */
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    int e = errno;
    close(fd);
    unlink(t);
    free(t);
    errno = e;
    return NULL;
  }
  *tmp = t;
  return f;
}

/* See core.h. */
int gp__outfile_close(FILE *f, char *tmp, const char *path, bool ok) {
  int rc = 0;
  if (fclose(f) != 0)
    rc = -errno;
  if (rc == 0 && !ok)
    rc = -EIO;
  if (rc == 0) {
    char *target = real_target(path);
    if (!target || rename(tmp, target) != 0)
      rc = target ? -errno : -ENOMEM;
    free(target);
  }
  if (rc != 0)
    unlink(tmp);
  free(tmp);
  return rc;
}
