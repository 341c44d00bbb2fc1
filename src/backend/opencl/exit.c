/*
 * exit.c - _exit(), _Exit() and abort() of a program recorded through the
 * preload library. The preload comes before libc in the program's symbol
 * search order (libgpuperf, which defines the same three, comes after
 * it), so these are the ones the program's own calls reach: each finishes
 * the recording session of the process first (gp_session_finish_recorded
 * does nothing when the process is not recorded), then ends the process
 * as libc's would. See docs/recording.md.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oclInt.h"

__attribute__((noreturn)) static void exit_group(int status) {
  for (;;)
    syscall(SYS_exit_group, status);
}

/* _exit(2), with the recorded process's session finished first. */
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  gp_session_finish_recorded();
  exit_group(status);
}

/* _Exit(3): the same. */
__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  gp_session_finish_recorded();
  exit_group(status);
}

/* abort(3): the session finished, then libc's abort. */
__attribute__((visibility("default"), noreturn)) void abort(void) {
  gp_session_finish_recorded();
  void (*real)(void) = (void (*)(void))dlsym(RTLD_NEXT, "abort");
  if (real)
    real();
  signal(SIGABRT, SIG_DFL);
  raise(SIGABRT);
  exit_group(128 + SIGABRT);
}
