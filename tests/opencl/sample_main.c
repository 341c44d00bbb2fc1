/*
 * sample_main.c - the sample OpenCL program gpuperf's tests trace.
 *
 *   opencl-sample [-n ITERATIONS] [--size N] [--fork] [--exec]
 *                 [--exit-status N] [--die HOW] [--child-die HOW]
 *                 [--busy-last N]
 *
 * Runs the workload (workload.h) and prints its results and then its
 * counts ("count ..." lines: what a trace of it must contain). --fork
 * forks before touching OpenCL and runs the workload in both processes
 * (lines tagged "child" and "parent"); --exec runs the workload, then
 * runs this program again in a child process through fork and exec (lines
 * tagged "exec"). --exit-status N makes a successful run exit with N, to
 * check that a tracer passes the status on. --die HOW ends the process
 * 10 ms after its workload by kill (SIGKILL), segv, abort, _exit or exit,
 * and --child-die the child of --fork. --busy-last N leaves N long
 * kernels in flight after the workload, before --die (wl_busy; not with
 * --fork or --exec). Exit status 77: no OpenCL
 * device. A plain OpenCL program: it knows nothing of gpuperf.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static int usage(void) {
  fprintf(stderr, "usage: opencl-sample [-n ITERATIONS] [--size N] [--fork] "
                  "[--exec] [--exit-status N] [--die HOW] [--child-die HOW] "
                  "[--busy-last N]\n");
  return 2;
}

/* Ends the process as how says; returns if how is NULL. */
static void die(const char *how) {
  if (!how)
    return;
  fflush(NULL);
  struct timespec ts = {0, 10000000L};
  nanosleep(&ts, NULL);
  if (strcmp(how, "kill") == 0)
    raise(SIGKILL);
  else if (strcmp(how, "segv") == 0)
    *(volatile int *)(uintptr_t)0 = 1;
  else if (strcmp(how, "abort") == 0)
    abort();
  else if (strcmp(how, "_exit") == 0)
    _exit(0);
  exit(0);
}

static int run(const wl_options *opt) {
  wl_counts counts;
  int rc = wl_run(opt, stdout, &counts);
  if (rc == 0)
    wl_print_counts(&counts, opt->tag, stdout);
  fflush(stdout);
  return rc;
}

static int wait_child(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return 1;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(int argc, char **argv) {
  wl_options opt = {1, 4096, "main"};
  bool do_fork = false, do_exec = false;
  int exit_status = 0;
  const char *how = NULL, *child_how = NULL;
  unsigned busy = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-n") == 0 && i + 1 < argc) {
      opt.iterations = atoi(argv[++i]);
    } else if (strcmp(a, "--size") == 0 && i + 1 < argc) {
      opt.n = (size_t)strtoul(argv[++i], NULL, 10);
    } else if (strcmp(a, "--fork") == 0) {
      do_fork = true;
    } else if (strcmp(a, "--exec") == 0) {
      do_exec = true;
    } else if (strcmp(a, "--exit-status") == 0 && i + 1 < argc) {
      exit_status = atoi(argv[++i]);
    } else if (strcmp(a, "--die") == 0 && i + 1 < argc) {
      how = argv[++i];
    } else if (strcmp(a, "--child-die") == 0 && i + 1 < argc) {
      child_how = argv[++i];
    } else if (strcmp(a, "--busy-last") == 0 && i + 1 < argc) {
      busy = (unsigned)atoi(argv[++i]);
    } else if (strcmp(a, "--tag") == 0 && i + 1 < argc) {
      opt.tag = argv[++i];
    } else {
      return usage();
    }
  }
  if (opt.iterations < 1 || opt.n < 256 || opt.n % 256 != 0) {
    fprintf(stderr, "opencl-sample: need -n >= 1 and --size a multiple of "
                    "256\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);

  if (do_fork) {
    /* Before any OpenCL call: a child forked after the driver started
     * cannot use it (PoCL hangs). */
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    opt.tag = pid == 0 ? "child" : "parent";
    int rc = run(&opt);
    if (pid == 0) {
      if (rc == 0)
        die(child_how);
      exit(rc); /* not _exit: a tracer finishes its trace at exit */
    }
    int crc = wait_child(pid);
    if (rc == 0 && crc != 0 && !child_how)
      rc = crc;
    if (rc == 0)
      die(how);
    return rc == 0 ? exit_status : rc;
  }

  int rc = run(&opt);
  if (rc == 0 && busy)
    rc = wl_busy(busy, stdout);
  if (rc == 0 && do_exec) {
    char n[16], size[32];
    snprintf(n, sizeof(n), "%d", opt.iterations);
    snprintf(size, sizeof(size), "%zu", opt.n);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      execl("/proc/self/exe", argv[0], "-n", n, "--size", size, "--tag", "exec",
            (char *)NULL);
      perror("exec");
      _exit(127);
    }
    rc = wait_child(pid);
  }
  if (rc == 0)
    die(how);
  return rc == 0 ? exit_status : rc;
}
