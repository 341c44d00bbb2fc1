/*
 * dlsym.c - gl-dlsym: where dlsym finds glXSwapBuffers, from a program
 * that links libGL and runs with libgpuperf-gl.so preloaded (the test
 * opengl_dlsym_rtld_next). Prints the file of each answer:
 *   next:   dlsym(RTLD_NEXT): the first definition after this program,
 *           the preloaded library's (if our dlsym passed the caller on);
 *   handle: dlsym on libGL's own handle, as loaders that open libGL do:
 *           our wrapper (the hook hands it out).
 */
#include <GL/glx.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char *file_of(void *p) {
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname)
    return "(none)";
  const char *slash = strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

int main(void) {
  void *volatile keep = (void *)glXSwapBuffers; /* links libGL */
  (void)keep;
  printf("next: %s\n", file_of(dlsym(RTLD_NEXT, "glXSwapBuffers")));
  void *h = dlopen("libGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
  printf("handle: %s\n", file_of(h ? dlsym(h, "glXSwapBuffers") : NULL));
  return 0;
}
