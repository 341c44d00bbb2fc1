/*
 * v3d_jobs.c - a program that uses the V3D render node ($V3D_DOUBLE_NODE)
 * as a Mesa driver would, through the kernel's ioctls, for the tests of
 * gpuperf's V3D backend against the double (tests/v3d/README.md). It
 * links libgpuperf, so that `gpuperf record` records it; a user range
 * around its work is its first GPU work for gpuperf.
 *
 *   v3d-jobs run N         N jobs (SUBMIT_CL, no perfmon of their own),
 *                          2 ms apart
 *   v3d-jobs perjob N      N jobs each with a perfmon of its own; prints
 *                          "perjob: N ok, M EAGAIN"
 *   v3d-jobs hold-global   makes a global perfmon, prints "ready", waits
 *                          for a signal
 *   v3d-jobs hold-perjob   runs one job with its own perfmon (which stays
 *                          active), prints "ready", waits for a signal
 *   v3d-jobs abi           the uapi's documented refusals, one by one;
 *                          prints "abi: N checks" and exits 0, or names
 *                          the first that failed and exits 1
 *
 * Exit status 2 when the node cannot be opened or an ioctl fails
 * unexpectedly.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/v3d_uapi.h"
#include "gpuperf/markers.h"

static int fd = -1;

static int io(unsigned long req, void *arg) {
  return ioctl(fd, req, arg) == 0 ? 0 : errno;
}

static uint32_t create(uint32_t n, uint8_t first) {
  gp__v3d_perfmon_create c;
  memset(&c, 0, sizeof(c));
  c.ncounters = n;
  for (uint32_t i = 0; i < n; i++)
    c.counters[i] = (uint8_t)(first + i);
  if (io(GP__V3D_IOCTL_PERFMON_CREATE, &c) != 0) {
    fprintf(stderr, "v3d-jobs: PERFMON_CREATE: %s\n", strerror(errno));
    exit(2);
  }
  return c.id;
}

static int job(uint32_t perfmon) {
  gp__v3d_submit_cl s;
  memset(&s, 0, sizeof(s));
  s.perfmon_id = perfmon;
  return io(GP__V3D_IOCTL_SUBMIT_CL, &s);
}

static void nap_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static int checks;

#define EXPECT(call, err)                                                      \
  do {                                                                         \
    int got_ = (call);                                                         \
    checks++;                                                                  \
    if (got_ != (err)) {                                                       \
      printf("abi: %s gave %s, not %s\n", #call, strerror(got_),               \
             strerror(err));                                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

/* The refusals include/uapi/drm/v3d_drm.h, v3d_perfmon.c and igt's
 * v3d_perfmon tests document. */
static int abi(void) {
  gp__v3d_perfmon_create c;
  memset(&c, 0, sizeof(c));
  EXPECT(io(GP__V3D_IOCTL_PERFMON_CREATE, &c), EINVAL); /* no counters */
  c.ncounters = 33;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_CREATE, &c), EINVAL); /* past 32 */
  c.ncounters = 1;
  c.counters[0] = 200;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_CREATE, &c), EINVAL); /* no counter 200 */
  gp__v3d_perfmon_destroy d = {9999};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_DESTROY, &d), EINVAL);
  uint64_t v[32];
  gp__v3d_perfmon_get_values g = {9999, 0, (uint64_t)(uintptr_t)v};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_VALUES, &g), EINVAL);
  uint32_t id = create(32, 0);
  g.id = id;
  g.pad = 1;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_VALUES, &g), EINVAL); /* pad */
  g.pad = 0;
  g.values_ptr = 0;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_VALUES, &g), EFAULT);
  gp__v3d_perfmon_get_counter gc;
  memset(&gc, 0, sizeof(gc));
  gc.reserved[3] = 1;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_COUNTER, &gc), EINVAL);
  memset(&gc, 0, sizeof(gc));
  gc.counter = 255;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_COUNTER, &gc), EINVAL);
  gp__v3d_perfmon_set_global sg = {0x2, id};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), EINVAL); /* flags */
  sg = (gp__v3d_perfmon_set_global){0, 9999};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), EINVAL); /* id */
  sg = (gp__v3d_perfmon_set_global){GP__V3D_PERFMON_CLEAR_GLOBAL, id};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), EINVAL); /* none set */
  EXPECT(job(9999), ENOENT); /* a perfmon this file does not have */
  /* Global and per-job exclude each other. */
  uint32_t other = create(1, 5);
  sg = (gp__v3d_perfmon_set_global){0, id};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), 0);
  EXPECT(job(other), EAGAIN);
  sg.id = other;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), EBUSY);
  EXPECT(job(0), 0); /* counted by the global perfmon */
  g = (gp__v3d_perfmon_get_values){id, 0, (uint64_t)(uintptr_t)v};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_VALUES, &g), 0);
  EXPECT(v[0] > 0 ? 0 : EIO, 0);
  sg = (gp__v3d_perfmon_set_global){GP__V3D_PERFMON_CLEAR_GLOBAL, other};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), 0); /* any id clears */
  EXPECT(job(other), 0); /* now its own perfmon runs, and stays active */
  sg = (gp__v3d_perfmon_set_global){0, id};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), EBUSY);
  EXPECT(job(0), 0); /* a job without one stops it */
  EXPECT(io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg), 0);
  d.id = id; /* destroying the global perfmon clears it */
  EXPECT(io(GP__V3D_IOCTL_PERFMON_DESTROY, &d), 0);
  EXPECT(job(other), 0);
  d.id = other;
  EXPECT(io(GP__V3D_IOCTL_PERFMON_DESTROY, &d), 0);
  EXPECT(io(GP__V3D_IOCTL_PERFMON_DESTROY, &d), EINVAL); /* gone */
  g = (gp__v3d_perfmon_get_values){other, 0, (uint64_t)(uintptr_t)v};
  EXPECT(io(GP__V3D_IOCTL_PERFMON_GET_VALUES, &g), EINVAL);
  printf("abi: %d checks\n", checks);
  return 0;
}

static void on_signal(int sig) {
  (void)sig;
  _exit(0);
}

int main(int argc, char **argv) {
  const char *node = getenv("V3D_DOUBLE_NODE");
  if (argc < 2 || !node) {
    fprintf(stderr, "usage: V3D_DOUBLE_NODE=PATH v3d-jobs "
                    "run N|perjob N|hold-global|hold-perjob|abi\n");
    return 2;
  }
  if ((fd = open(node, O_RDWR | O_CLOEXEC)) < 0) {
    fprintf(stderr, "v3d-jobs: %s: %s\n", node, strerror(errno));
    return 2;
  }
  const char *mode = argv[1];
  int n = argc > 2 ? atoi(argv[2]) : 0;
  if (strcmp(mode, "abi") == 0)
    return abi();
  if (strcmp(mode, "run") == 0 || strcmp(mode, "perjob") == 0) {
    gp_range_push("v3d-jobs", mode); /* gpuperf's session starts here */
    int ok = 0, again = 0;
    uint32_t own = strcmp(mode, "perjob") == 0 ? create(4, 0) : 0;
    for (int i = 0; i < n; i++) {
      int rc = job(own);
      if (rc == 0)
        ok++;
      else if (rc == EAGAIN)
        again++;
      else {
        fprintf(stderr, "v3d-jobs: SUBMIT_CL: %s\n", strerror(rc));
        return 2;
      }
      if (i + 1 < n)
        nap_ms(2); /* the last job ends the run: the final window has it */
    }
    gp_range_pop();
    if (own)
      printf("perjob: %d ok, %d EAGAIN\n", ok, again);
    return 0;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  if (strcmp(mode, "hold-global") == 0) {
    gp__v3d_perfmon_set_global sg = {0, create(1, 0)};
    if (io(GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &sg) != 0) {
      fprintf(stderr, "v3d-jobs: SET_GLOBAL: %s\n", strerror(errno));
      return 2;
    }
  } else if (strcmp(mode, "hold-perjob") == 0) {
    if (job(create(1, 0)) != 0) {
      fprintf(stderr, "v3d-jobs: SUBMIT_CL: %s\n", strerror(errno));
      return 2;
    }
  } else {
    fprintf(stderr, "v3d-jobs: unknown mode '%s'\n", mode);
    return 2;
  }
  printf("ready\n");
  fflush(stdout);
  for (;;)
    pause();
}
