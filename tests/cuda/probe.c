/*
 * probe.c - a program without CUDA that loads libgpuperf-cuda.so the way
 * the CUDA driver does (dlopen, then InitializeInjection), and then the
 * way a program linking it does (gp_cuda_start). Used by the tests to
 * check that the collector loads anywhere and says "no CUDA device"
 * cleanly where there is none.
 *
 *   cuda-probe LIB inject   dlopen + InitializeInjection; exit 0 if it
 *                           returned 1 (the driver's success value)
 *   cuda-probe LIB inject-driver
 *                           the same after loading libcuda.so.1 first
 *                           (as the driver is loaded when it injects us)
 *   cuda-probe LIB nvtx     dlopen + InitializeInjectionNvtx2, as NVTX
 *                           does; exit 0 if it returned non-zero
 *   cuda-probe LIB start    dlopen + gp_cuda_start; prints "start: <code>"
 *                           and the status line; exit 0 if it started,
 *                           3 if not
 *
 * Exit 2: the library or a symbol could not be found.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* NVTX's export table function; CUPTI asks for tables when it needs them. */
static const void *no_table(uint32_t id) {
  (void)id;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cuda-probe LIB inject|inject-driver|nvtx|start\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "probe: %s\n", dlerror());
    return 2;
  }
  const char *(*status)(void) =
      (const char *(*)(void))dlsym(lib, "gp_cuda_status");
  if (!status) {
    fprintf(stderr, "probe: gp_cuda_status not exported\n");
    return 2;
  }
  if (strcmp(argv[2], "inject-driver") == 0) {
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "probe: %s\n", dlerror());
      return 2;
    }
    argv[2] = "inject";
  }
  if (strcmp(argv[2], "inject") == 0) {
    int (*init)(void) = (int (*)(void))dlsym(lib, "InitializeInjection");
    if (!init) {
      fprintf(stderr, "probe: InitializeInjection not exported\n");
      return 2;
    }
    int rc = init();
    printf("inject: %d\nstatus: %s\n", rc, status());
    return rc == 1 ? 0 : 1;
  }
  if (strcmp(argv[2], "nvtx") == 0) {
    int (*init)(const void *(*)(uint32_t)) =
        (int (*)(const void *(*)(uint32_t)))dlsym(lib,
                                                  "InitializeInjectionNvtx2");
    if (!init) {
      fprintf(stderr, "probe: InitializeInjectionNvtx2 not exported\n");
      return 2;
    }
    int rc = init(no_table);
    printf("nvtx: %d\n", rc);
    return rc != 0 ? 0 : 1;
  }
  if (strcmp(argv[2], "start") == 0) {
    int (*start)(uint32_t) = (int (*)(uint32_t))dlsym(lib, "gp_cuda_start");
    const char *(*name)(int) =
        (const char *(*)(int))dlsym(lib, "gp_error_name");
    if (!start || !name) {
      fprintf(stderr, "probe: gp_cuda_start or gp_error_name not exported\n");
      return 2;
    }
    int rc = start(0);
    printf("start: %s\nstatus: %s\n", rc ? name(rc) : "0", status());
    return rc == 0 ? 0 : 3;
  }
  fprintf(stderr, "probe: unknown mode '%s'\n", argv[2]);
  return 2;
}
