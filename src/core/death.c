/*
 * death.c - a process that dies still finishes what gpuperf does for it.
 *
 * A process recorded by `gpuperf record` writes its part of the trace as
 * its records are flushed (every ENV_FLUSH_MS) and finishes it at exit();
 * one counted by `gpuperf stat` writes its totals at exit(). Those are the
 * finishers (gp__death_add_finisher: session.c and counters/stat.c add
 * theirs). The other ways out would skip them:
 *
 * - Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP,
 *   SIGSYS) and the signals that end a process by default (SIGINT,
 *   SIGTERM, SIGHUP, SIGQUIT, SIGPIPE): where the program left the default
 *   action, our handler finishes the session (a forced flush: work in
 *   flight is waited for a moment, then written with what is known), then
 *   restores the default action and raises the signal again, so the
 *   process dies as it would have. Where the program has a handler of its
 *   own, that handler runs instead (it may recover; if it exits, exit()
 *   finishes the session). Finishing is not async-signal-safe: a process
 *   that crashed while holding one of our locks would hang, so a watchdog
 *   (SIGALRM after DEATH_WATCHDOG_S seconds) then ends it with its
 *   original signal.
 * - _exit() and _Exit(): libgpuperf defines both (the program's calls
 *   reach them before libc's), finishes the session, then ends the
 *   process with the exit_group system call, as libc does. A vfork child
 *   (which shares its parent's memory) is left alone. abort() likewise,
 *   then libc's. The OpenCL preload library, which comes before libc,
 *   defines the same three and calls gp_session_finish_recorded().
 *
 * A graphics API cannot be called from a handler that may have
 * interrupted the driver (llvmpipe then waits forever on a fence the
 * interrupted thread had yet to flush). So where a backend says a safe
 * point is near (gp__death_set_defer: the GL library, whose contexts swap
 * every frame; the Vulkan layer, at each present; the simulator, whose
 * programs call it all the time), SIGINT, SIGTERM, SIGHUP and SIGQUIT are
 * only noted, and the session is finished at the next safe point
 * (gp__death_point: after a swap, a present, a simulator call), outside
 * the handler, before the signal is raised again; after
 * DEATH_DEFER_S without one, in the handler after all, the backend
 * calling nothing (gp__death_in_handler) and counting what it loses.
 *
 * SIGKILL cannot be seen from inside: its records since the last flush
 * are lost, and counted (session_lost.c) for the recorder to report.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"

#define DEATH_WATCHDOG_S 5
#define DEATH_DEFER_S 1

static const int watched[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,
                              SIGABRT, SIGTRAP, SIGSYS,  SIGINT,
                              SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE};
#define NWATCHED ((int)(sizeof(watched) / sizeof(watched[0])))

static _Atomic int dying_sig;       /* the signal being handled, 0 if none */
static _Atomic pid_t finishing_tid; /* the thread finishing, 0 if none */
static _Atomic bool armed;
static _Atomic bool in_handler;  /* finishing inside a signal handler */
static _Atomic int deferred_sig; /* noted, to finish at a safe point */
static bool (*_Atomic defer_fn)(void);

#define MAX_FINISHERS 4
static void (*_Atomic finishers[MAX_FINISHERS])(void);

/* See core.h. */
bool gp__dying(void) {
  return atomic_load_explicit(&dying_sig, memory_order_relaxed) != 0;
}

/* See core.h. */
bool gp__death_in_handler(void) {
  return atomic_load_explicit(&in_handler, memory_order_relaxed);
}

/* See core.h. */
void gp__death_set_defer(bool (*fn)(void)) {
  atomic_store(&defer_fn, fn);
}

/* See core.h. */
void gp__death_set_defer_if_unset(bool (*fn)(void)) {
  bool (*expect)(void) = NULL;
  atomic_compare_exchange_strong(&defer_fn, &expect, fn);
}

/* See core.h. */
int gp__death_add_finisher(void (*fn)(void)) {
  for (int i = 0; i < MAX_FINISHERS; i++) {
    void (*expect)(void) = NULL;
    if (atomic_load(&finishers[i]) == fn ||
        atomic_compare_exchange_strong(&finishers[i], &expect, fn))
      return 0;
  }
  return GP_ENOSPC;
}

/* Runs every finisher (each does nothing the second time). */
static void finish_all(void) {
  for (int i = 0; i < MAX_FINISHERS; i++) {
    void (*fn)(void) = atomic_load(&finishers[i]);
    if (fn)
      fn();
  }
}

__attribute__((noreturn)) static void exit_group(int status);

static void restore_default_and_raise(int sig) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  raise(sig);
  /* Blocked while its handler runs: let it through now. */
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* SIGALRM to handler in seconds (async-signal-safe). */
static void alarm_in(unsigned seconds, void (*handler)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  alarm(seconds);
}

/* The flush hung (a lock held by the crashed code): die as planned. */
static void on_watchdog(int unused) {
  (void)unused;
  int sig = atomic_load(&dying_sig);
  restore_default_and_raise(sig ? sig : SIGKILL);
  _exit(128 + (sig ? sig : SIGKILL)); /* not reached */
}

static void finish_in_handler(int sig) {
  int saved = errno;
  int expect = 0;
  pid_t self = (pid_t)syscall(SYS_gettid);
  if (!atomic_compare_exchange_strong(&dying_sig, &expect, sig) &&
      atomic_load(&finishing_tid) != self) {
    /* Another thread is finishing (or has): its signal, raised again at
     * the end, ends this thread too. Until then, stay out of its way. */
    for (;;)
      pause();
  }
  if (expect == 0) {
    atomic_store(&finishing_tid, self);
    alarm_in(DEATH_WATCHDOG_S, on_watchdog);
    atomic_store(&in_handler, true);
    finish_all();
    alarm(0);
  }
  errno = saved;
  /* A fault re-raised by returning re-executes the faulting instruction
   * under the default action; a sent signal is raised again. */
  restore_default_and_raise(sig);
}

/* No safe point came in time: finished here after all. */
static void on_defer_timeout(int unused) {
  (void)unused;
  finish_in_handler(atomic_load(&deferred_sig));
}

static void on_fatal(int sig) {
  bool (*fn)(void) = atomic_load(&defer_fn);
  bool async =
      sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
  int expect = 0;
  if (async && fn && atomic_load(&dying_sig) == 0 && fn() &&
      atomic_compare_exchange_strong(&deferred_sig, &expect, sig)) {
    int saved = errno;
    alarm_in(DEATH_DEFER_S, on_defer_timeout);
    errno = saved;
    return; /* the program goes on to its next safe point */
  }
  if (expect != 0)
    return; /* already noted: the first one is raised again */
  finish_in_handler(sig);
}

/* See core.h. */
void gp__death_point(void) {
  int sig = atomic_load_explicit(&deferred_sig, memory_order_relaxed);
  if (__builtin_expect(sig == 0, 1))
    return;
  pid_t self = (pid_t)syscall(SYS_gettid);
  if (atomic_load(&dying_sig) != 0 && atomic_load(&finishing_tid) == self)
    return; /* a safe point met while finishing: the finishing goes on */
  /* The watchdog in place of the timeout, before the session is ours. */
  alarm_in(DEATH_WATCHDOG_S, on_watchdog);
  int expect = 0;
  if (!atomic_compare_exchange_strong(&dying_sig, &expect, sig)) {
    alarm(0);
    for (;;) /* the timeout's handler (or a fault) is finishing */
      pause();
  }
  atomic_store(&finishing_tid, self);
  finish_all();
  alarm(0);
  restore_default_and_raise(sig);
  exit_group(128 + sig); /* not reached */
}

/* See core.h. */
void gp__death_watch(void) {
  bool expect = false;
  if (!atomic_compare_exchange_strong(&armed, &expect, true))
    return;
  for (int i = 0; i < NWATCHED; i++) {
    struct sigaction old;
    if (sigaction(watched[i], NULL, &old) != 0)
      continue;
    /* The program's own handlers and ignored signals stay as they are. */
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(watched[i], &sa, NULL);
  }
}

/* See session.h. */
void gp_session_finish_recorded(void) {
  finish_all();
}

/* Ends the process as libc's _exit does. */
__attribute__((noreturn)) static void exit_group(int status) {
  for (;;)
    syscall(SYS_exit_group, status);
}

/* _exit(2), with the recorded process's session finished first. */
GP_EXPORT __attribute__((noreturn)) void _exit(int status) {
  finish_all();
  exit_group(status);
}

/* _Exit(3): the same. */
GP_EXPORT __attribute__((noreturn)) void _Exit(int status) {
  finish_all();
  exit_group(status);
}

/* abort(3), with the session finished first, then libc's. A program's own
 * call comes here; libc's internal ones (a failed assert()) raise
 * SIGABRT, which the handler above sees unless the program (or a library
 * such as LLVM's) put a handler of its own in front. */
GP_EXPORT __attribute__((noreturn)) void abort(void) {
  int expect = 0;
  if (atomic_compare_exchange_strong(&dying_sig, &expect, SIGABRT)) {
    atomic_store(&finishing_tid, (pid_t)syscall(SYS_gettid));
    finish_all();
  }
  void (*real)(void) = (void (*)(void))dlsym(RTLD_NEXT, "abort");
  if (real)
    real();
  restore_default_and_raise(SIGABRT);
  exit_group(128 + SIGABRT);
}
