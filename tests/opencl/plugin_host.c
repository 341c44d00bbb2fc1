/*
 * plugin_host.c - opens build/tests/libopencl-plugin.so with RTLD_LOCAL
 * and runs its workload: a program that does not link OpenCL itself.
 *
 *   opencl-plugin-host PLUGIN.so
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: opencl-plugin-host PLUGIN.so\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "opencl-plugin-host: %s\n", dlerror());
    return 1;
  }
  int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
  if (!run) {
    fprintf(stderr, "opencl-plugin-host: %s\n", dlerror());
    return 1;
  }
  return run(1);
}
