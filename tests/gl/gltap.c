/*
 * gltap.c - a second GL interposer for the double's tests: it stands for
 * any other LD_PRELOAD library that wraps GL (libgpuperf-gl.so, a
 * debugging tool) placed before or after the double, to show that each
 * still sees the calls. It wraps glBeginQuery and glGetString, exported
 * and through glXGetProcAddress(ARB)/eglGetProcAddress, chaining each to
 * the next definition, counts the calls, and writes the counts to the
 * file named by GLTAP_OUT at exit:
 *
 *   glBeginQuery N
 *   glGetString N
 */
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*tap_proc)(void);
typedef tap_proc (*tap_gpa)(const char *);

EXPORT tap_proc glXGetProcAddressARB(const GLubyte *name);
EXPORT tap_proc glXGetProcAddress(const GLubyte *name);
EXPORT tap_proc eglGetProcAddress(const char *name);

static atomic_ulong begins, strings;

/* The next definition of name: exported after us, else what the next
 * GetProcAddress gives. */
static void *next(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  tap_gpa gpa = (tap_gpa)dlsym(RTLD_NEXT, "eglGetProcAddress");
  if (!p && gpa)
    p = (void *)gpa(name);
  gpa = (tap_gpa)dlsym(RTLD_NEXT, "glXGetProcAddressARB");
  if (!p && gpa)
    p = (void *)gpa(name);
  return p;
}

EXPORT void GLAPIENTRY glBeginQuery(GLenum target, GLuint id) {
  static void (*real)(GLenum, GLuint);
  if (!real)
    real = (void (*)(GLenum, GLuint))next("glBeginQuery");
  atomic_fetch_add(&begins, 1);
  if (real)
    real(target, id);
}

EXPORT const GLubyte *GLAPIENTRY glGetString(GLenum name) {
  static const GLubyte *(*real)(GLenum);
  if (!real)
    real = (const GLubyte *(*)(GLenum))next("glGetString");
  atomic_fetch_add(&strings, 1);
  return real ? real(name) : NULL;
}

static tap_proc chain(const char *self, const char *name) {
  if (name && !strcmp(name, "glBeginQuery"))
    return (tap_proc)glBeginQuery;
  if (name && !strcmp(name, "glGetString"))
    return (tap_proc)glGetString;
  tap_gpa gpa = (tap_gpa)dlsym(RTLD_NEXT, self);
  return gpa ? gpa(name) : NULL;
}

EXPORT tap_proc glXGetProcAddressARB(const GLubyte *name) {
  return chain("glXGetProcAddressARB", (const char *)name);
}

EXPORT tap_proc glXGetProcAddress(const GLubyte *name) {
  return chain("glXGetProcAddress", (const char *)name);
}

EXPORT tap_proc eglGetProcAddress(const char *name) {
  return chain("eglGetProcAddress", name);
}

__attribute__((destructor)) static void tap_report(void) {
  const char *path = getenv("GLTAP_OUT");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f)
    return;
  fprintf(f, "glBeginQuery %lu\nglGetString %lu\n", atomic_load(&begins),
          atomic_load(&strings));
  fclose(f);
}
