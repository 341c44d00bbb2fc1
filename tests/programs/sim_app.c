/*
 * sim_app.c - a small program that drives the simulated GPUs, for the
 * tests of `gpuperf record`. It links libgpuperf.so and knows nothing of
 * tracing: the library's constructor records it when GPUPERF_RECORD_DIR
 * is set.
 *
 *   sim_app [--steps N] [--sleep-ms N] [--fork N] [--exec] [--forever]
 *           [--exit CODE] [--fail] [--pidfile PATH] [--die HOW]
 *           [--child-die HOW] [--detach-ms N] [--late-fork] [--busy-last]
 *
 * Each step, inside a user range "step N": a copy to the device, two
 * kernels on two streams with an event dependency, a fill, a copy back,
 * and a synchronisation. --fork N forks N children before any GPU work,
 * each running the steps too (with --exec they exec this program
 * instead); --forever repeats until killed; --fail makes one call fail
 * (an invalid launch); --exit sets the exit status; --pidfile writes the
 * process id once the first step is done. --die HOW ends the process 10 ms
 * after its last step by kill (SIGKILL), segv (a null write), abort,
 * _exit or exit; --child-die does so in the forked children. --detach-ms
 * N leaves a detached process (its parent exits at once) that runs the
 * steps N ms later, after this one has ended. --late-fork forks one child
 * after a first step (so after recording started), which runs the steps
 * and ends as --child-die says, while the parent runs them too.
 * --busy-last leaves the last step's GPU work in flight: no
 * synchronisation, nothing destroyed, before --die.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"

static int check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "sim_app: %s: %s\n", what, gp_strerror(rc));
    exit(3);
  }
  return rc;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static const char *pidfile;

/* Ends the process as HOW says; returns if HOW is NULL. */
static void die(const char *how) {
  if (!how)
    return;
  sleep_ms(10);
  fflush(NULL);
  if (!strcmp(how, "kill"))
    raise(SIGKILL);
  else if (!strcmp(how, "segv"))
    *(volatile int *)(uintptr_t)0 = 1;
  else if (!strcmp(how, "abort"))
    abort();
  else if (!strcmp(how, "_exit"))
    _exit(0);
  else if (!strcmp(how, "exit"))
    exit(0);
  fprintf(stderr, "sim_app: --die %s: kill, segv, abort, _exit or exit\n", how);
  exit(1);
}

static int busy_last;

static void run(unsigned steps, unsigned sleep, int forever, int fail) {
  gp_sim_context *ctx;
  gp_sim_stream *s1, *s2;
  gp_sim_event *ev;
  gp_sim_kernel *ka, *kb;
  uint64_t buf;
  static char host[4096];
  check(gp_sim_context_create(0, &ctx), "context");
  check(gp_sim_stream_create(ctx, &s1), "stream");
  check(gp_sim_stream_create(ctx, &s2), "stream");
  check(gp_sim_stream_set_name(s1, "main"), "name");
  check(gp_sim_event_create(ctx, &ev), "event");
  check(gp_sim_malloc(ctx, 1 << 20, &buf), "malloc");
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "_Z7producePfi";
  d.demangled_name = "produce(float*, int)";
  d.flops_per_thread = 100;
  d.bytes_per_thread = 8;
  d.read_fraction = 0.5;
  d.registers_per_thread = 32;
  check(gp_sim_kernel_create(&d, &ka), "kernel");
  d.name = "_Z7consumePKfi";
  d.demangled_name = "consume(float const*, int)";
  check(gp_sim_kernel_create(&d, &kb), "kernel");
  const gp_sim_dim3 grid = {64, 1, 1}, block = {128, 1, 1};
  for (unsigned i = 1; forever || i <= steps; i++) {
    char name[32];
    snprintf(name, sizeof(name), "step %u", i);
    check(gp_range_push("sim_app", name), "range");
    check(gp_sim_memcpy_async(s1, buf, GP_SIM_HOST(host), 4096, GP_MEMCPY_HTOD),
          "copy");
    check(gp_sim_launch(s1, ka, grid, block, 0), "launch");
    check(gp_sim_event_record(ev, s1), "record");
    check(gp_sim_stream_wait_event(s2, ev), "wait");
    check(gp_sim_launch(s2, kb, grid, block, 1024), "launch");
    check(gp_sim_memset_async(s2, buf, 0, 4096), "memset");
    check(gp_sim_memcpy_async(s2, GP_SIM_HOST(host), buf, 4096, GP_MEMCPY_DTOH),
          "copy");
    if (fail && i == 1) {
      const gp_sim_dim3 bad = {0, 1, 1};
      if (gp_sim_launch(s1, ka, bad, block, 0) == 0)
        exit(4);
    }
    if (busy_last && i == steps && !forever) {
      check(gp_range_pop(), "range");
      return; /* its work is still in flight */
    }
    check(gp_sim_context_synchronize(ctx), "synchronize");
    check(gp_range_pop(), "range");
    if (pidfile && i == 1) {
      FILE *f = fopen(pidfile, "w");
      if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
      }
    }
    if (sleep)
      sleep_ms(sleep);
  }
  gp_sim_kernel_destroy(ka);
  gp_sim_kernel_destroy(kb);
  gp_sim_context_destroy(ctx);
}

int main(int argc, char **argv) {
  unsigned steps = 3, sleep = 0, forks = 0, detach_ms = 0;
  int code = 0, forever = 0, do_exec = 0, fail = 0;
  const char *how = NULL, *child_how = NULL;
  int late_fork = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
      sleep = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fork") && i + 1 < argc)
      forks = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
      code = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--exec"))
      do_exec = 1;
    else if (!strcmp(argv[i], "--forever"))
      forever = 1;
    else if (!strcmp(argv[i], "--fail"))
      fail = 1;
    else if (!strcmp(argv[i], "--busy-last"))
      busy_last = 1;
    else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
      pidfile = argv[++i];
    else if (!strcmp(argv[i], "--die") && i + 1 < argc)
      how = argv[++i];
    else if (!strcmp(argv[i], "--child-die") && i + 1 < argc)
      child_how = argv[++i];
    else if (!strcmp(argv[i], "--late-fork"))
      late_fork = 1;
    else if (!strcmp(argv[i], "--detach-ms") && i + 1 < argc)
      detach_ms = (unsigned)atoi(argv[++i]);
    else {
      fprintf(stderr, "sim_app: unknown argument %s\n", argv[i]);
      return 1;
    }
  }
  for (unsigned c = 0; c < forks; c++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 3;
    }
    if (pid == 0) {
      if (do_exec) {
        char n[16];
        snprintf(n, sizeof(n), "%u", steps);
        execl("/proc/self/exe", "sim_app", "--steps", n, (char *)NULL);
        perror("exec");
        _exit(127);
      }
      run(steps, sleep, 0, 0);
      die(child_how);
      exit(0);
    }
  }
  if (detach_ms) {
    pid_t pid = fork();
    if (pid == 0) {
      if (fork() == 0) {
        sleep_ms(detach_ms);
        run(steps, sleep, 0, 0);
        exit(0);
      }
      _exit(0);
    }
    if (pid > 0)
      waitpid(pid, NULL, 0);
  }
  if (late_fork) {
    run(1, 0, 0, 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      run(steps, sleep, 0, 0);
      die(child_how);
      exit(0);
    }
  }
  run(steps, sleep, forever, fail);
  die(how);
  int st;
  while (wait(&st) > 0)
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      code = code ? code : 5;
  return code;
}
