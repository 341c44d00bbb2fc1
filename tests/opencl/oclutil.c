/*
 * oclutil.c - see oclutil.h.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "oclutil.h"
#include "testutil.h"

/* See oclutil.h. */
const char *ocl_build_path(const char *name, char *buf, size_t size) {
  const char *b = getenv("GPUPERF_BUILD");
  if (!b || !*b)
    return NULL;
  snprintf(buf, size, "%s/%s", b, name);
  return buf;
}

/* See oclutil.h. */
void ocl_env(void) {
  char cache[512];
  if (!ocl_build_path("pocl-cache", cache, sizeof(cache)))
    snprintf(cache, sizeof(cache), "%s", gp_test_path(3, "pocl-cache"));
  setenv("POCL_CACHE_DIR", cache, 1);
  setenv("POCL_DEVICES", "pthread", 1);
  setenv("POCL_MAX_PTHREAD_COUNT", "2", 1);
  setenv("OCL_ICD_FILENAMES", "libpocl.so.2", 1);
  unsetenv("OCL_ICD_VENDORS");
  unsetenv("POCL_DEBUG");
  unsetenv("POCL_TRACING");
  unsetenv("OPENCL_LAYERS");
}

/* See oclutil.h. */
cl_context ocl_first_context(cl_device_id *dev) {
  cl_platform_id p;
  ASSERT_EQ(clGetPlatformIDs(1, &p, NULL), CL_SUCCESS);
  ASSERT_EQ(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, dev, NULL), CL_SUCCESS);
  cl_int e = 0;
  cl_context ctx = clCreateContext(NULL, 1, dev, NULL, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  return ctx;
}

void ocl_require_device(void) {
  cl_platform_id p[4];
  cl_uint np = 0;
  if (clGetPlatformIDs(4, p, &np) != CL_SUCCESS || np == 0)
    SKIP("no OpenCL platform (is pocl-opencl-icd installed?)");
  for (cl_uint i = 0; i < np && i < 4; i++) {
    cl_device_id d;
    cl_uint nd = 0;
    if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 1, &d, &nd) == CL_SUCCESS &&
        nd > 0)
      return;
  }
  SKIP("no OpenCL device on the platforms found");
}

/* See oclutil.h. */
void ocl_capture_all(void) {
  tu_capture(1 << 20, 0);
  static const gp_activity_kind kinds[] = {
      GP_ACTIVITY_KIND_API,    GP_ACTIVITY_KIND_KERNEL,
      GP_ACTIVITY_KIND_MEMCPY, GP_ACTIVITY_KIND_MEMSET,
      GP_ACTIVITY_KIND_DEVICE, GP_ACTIVITY_KIND_CONTEXT,
      GP_ACTIVITY_KIND_NAME,   GP_ACTIVITY_KIND_SYNCHRONIZATION};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
    ASSERT_OK(gp_activity_enable(kinds[i]));
}

/* See oclutil.h. */
bool ocl_next(const gp_activity **r) {
  size_t size = 0;
  const uint8_t *log = tu_log(&size);
  return log && gp_activity_get_next_record(log, size, r) == 0;
}

/* See oclutil.h. */
const gp_activity_api *ocl_api(uint64_t corr) {
  for (const gp_activity *r = NULL; ocl_next(&r);)
    if (r->kind == GP_ACTIVITY_KIND_API &&
        ((const gp_activity_api *)r)->correlation_id == corr)
      return (const gp_activity_api *)r;
  return NULL;
}

/* See oclutil.h. */
const char *ocl_api_name(const gp_activity_api *a) {
  return gp_activity_string(a->name_id);
}

/* ------------------------------------------------------------------ */
/* Subprocesses                                                         */

static int find_asan(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libasan.so")) {
    snprintf(data, 512, "%s", info->dlpi_name);
    return 1;
  }
  return 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n < 2) {
      cap *= 2;
      char *b = realloc(buf, cap);
      if (!b) {
        free(buf);
        buf = NULL;
      }
      buf = b;
    }
  }
  fclose(f);
  if (buf)
    buf[n] = '\0';
  return buf;
}

/* See oclutil.h. */
int ocl_run(char *const argv[], char *const env[], int timeout_s, char **out,
            char **err) {
  static int serial;
  char out_path[512], err_path[512];
  snprintf(out_path, sizeof(out_path), "%s/run%d.out", gp_test_tmpdir(),
           serial);
  snprintf(err_path, sizeof(err_path), "%s/run%d.err", gp_test_tmpdir(),
           serial++);
  /* An instrumented preload library needs the sanitizer runtime first. */
  char asan[512] = "";
  dl_iterate_phdr(find_asan, asan);
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    for (size_t i = 0; env && env[i]; i++) {
      if (asan[0] && strncmp(env[i], "LD_PRELOAD=", 11) == 0) {
        static char pre[2048];
        snprintf(pre, sizeof(pre), "LD_PRELOAD=%s:%s", asan, env[i] + 11);
        putenv(pre);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
      } else {
        putenv(env[i]);
      }
    }
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0)
      _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int st = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid)
      break;
    ASSERT(w == 0 || errno == EINTR);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      char *e = slurp(err_path);
      gp_test_fail(__FILE__, __LINE__, "%s ran past %d s; stderr:\n%s", argv[0],
                   timeout_s, e ? e : "");
    }
    usleep(5000);
  }
  if (out)
    *out = slurp(out_path);
  if (err)
    *err = slurp(err_path);
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
