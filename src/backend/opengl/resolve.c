/*
 * resolve.c - the real GL, GLX and EGL functions behind our wrappers, and
 * the table that maps a name to our wrapper for the lookups.
 *
 * A real function is the next definition after ours: dlsym(RTLD_NEXT)
 * finds it in the libGL, libOpenGL, libGLESv2 or libEGL the program
 * linked. A program (or loader) that opened libGL itself with
 * RTLD_LOCAL has it out of RTLD_NEXT's reach; then the libraries are
 * looked for among those already loaded, and last the real
 * glXGetProcAddressARB or eglGetProcAddress is asked. A lookup that hands
 * the program our wrapper records what the real lookup returned, so the
 * wrapper calls exactly what the program would have called.
 *
 * All of glvnd's GL entry points are dispatch stubs that call the
 * current context's driver, so one real pointer per name serves every
 * context and thread.
 */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "glInt.h"

/* Our wrappers (entry.c), by index. */
#define GP_GL_DECL(name, cbid) extern void gp__gl_w_##name(void);
GP_GL_WRAPPED(GP_GL_DECL)
#undef GP_GL_DECL

static const struct {
  const char *name;
  void (*wrapper)(void);
  uint32_t cbid;
} fns[GP_GL_FN_COUNT] = {
#define GP_GL_ROW(name, id) {#name, gp__gl_w_##name, id},
    GP_GL_WRAPPED(GP_GL_ROW)
#undef GP_GL_ROW
};

static void *_Atomic reals[GP_GL_FN_COUNT];

static int index_of(const char *name) {
  if (!name || (name[0] != 'g' && name[0] != 'e'))
    return -1;
  for (int i = 0; i < GP_GL_FN_COUNT; i++)
    if (strcmp(fns[i].name, name) == 0)
      return i;
  return -1;
}

/* See glInt.h. */
const char *gp__gl_fn_name(uint32_t cbid) {
  for (int i = 0; i < GP_GL_FN_COUNT; i++)
    if (fns[i].cbid == cbid)
      return fns[i].name;
  return "gl?";
}

/* A loaded GL library's definition of name, or NULL. */
static void *from_loaded(const char *name) {
  static const char *const libs[] = {"libGL.so.1",     "libOpenGL.so.0",
                                     "libGLESv2.so.2", "libEGL.so.1",
                                     "libGLX.so.0",    "libGL.so"};
  for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
    void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
      continue;
    void *p = gp__gl_real_dlsym(h, name);
    dlclose(h);
    if (p)
      return p;
  }
  return NULL;
}

typedef void *(*getproc_fn)(const char *);

/* The real glXGetProcAddressARB or eglGetProcAddress. */
static getproc_fn real_getproc(bool egl) {
  void *p = gp__gl_lookup_real(egl ? 2 : 1);
  if (!p)
    p = from_loaded(egl ? "eglGetProcAddress" : "glXGetProcAddressARB");
  return (getproc_fn)p;
}

/* See glInt.h. */
void *gp__gl_proc(const char *name, bool egl) {
  getproc_fn gp = real_getproc(egl);
  void *p = gp ? gp(name) : NULL;
  if (!p && !egl) { /* a GLX process may still have the EGL one */
    gp = real_getproc(true);
    p = gp ? gp(name) : NULL;
  }
  return p;
}

/* See glInt.h. */
void *gp__gl_real(int i) {
  void *p = atomic_load_explicit(&reals[i], memory_order_acquire);
  if (p)
    return p;
  const char *name = fns[i].name;
  p = gp__gl_real_dlsym(RTLD_NEXT, name);
  if (!p)
    p = from_loaded(name);
  if (!p && name[0] == 'g' && name[1] == 'l' && name[2] != 'X')
    p = gp__gl_proc(name, false);
  if (p == (void *)fns[i].wrapper) /* never ourselves */
    p = NULL;
  if (p)
    atomic_store_explicit(&reals[i], p, memory_order_release);
  return p;
}

/* See glInt.h. */
void *gp__gl_intercept(const char *name, void *p) {
  int i = index_of(name);
  if (i < 0 || !p || p == (void *)fns[i].wrapper)
    return p;
  void *none = NULL;
  atomic_compare_exchange_strong(&reals[i], &none, p);
  return (void *)fns[i].wrapper;
}
