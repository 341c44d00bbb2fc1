/*
 * thread.h - starting a thread of gpuperf's own inside a program.
 *
 * A signal sent to a process (kill, timeout's SIGINT, Ctrl-C) goes to any
 * one of its threads that does not block it. Were it one of ours (the
 * collector, a sampler, the HUD), the program's own threads would go on
 * drawing while death.c finished the session there, or the program's
 * handler would run where the program never expected it. So ours block
 * every signal a process is sent; the synchronous ones (a crash of our
 * own code) stay unblocked, for death.c's handler to finish the session.
 */
#ifndef GP_CORE_THREAD_H
#define GP_CORE_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create(t, attr, fn, arg), the new thread blocking every signal
 * but the synchronous ones. Returns pthread_create's result. */
static inline int gp__thread_start(pthread_t *t, const pthread_attr_t *attr,
                                   void *(*fn)(void *), void *arg) {
  static const int sync_sigs[] = {SIGSEGV, SIGBUS,  SIGFPE,
                                  SIGILL,  SIGTRAP, SIGSYS};
  sigset_t set, old;
  sigfillset(&set);
  for (size_t i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
    sigdelset(&set, sync_sigs[i]);
  pthread_sigmask(SIG_SETMASK, &set, &old);
  int rc = pthread_create(t, attr, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

#endif
