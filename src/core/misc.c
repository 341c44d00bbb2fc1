/*
 * misc.c - small helpers every module uses: cached thread and process
 * ids, and shell-style glob matching (counter names, kernel filters).
 */
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
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
