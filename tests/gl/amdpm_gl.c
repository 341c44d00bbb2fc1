/*
 * amdpm_gl.c - the GL side of the GL_AMD_performance_monitor test double
 * (amdpm_double.c says what it is): the driver's functions found through
 * the next definitions, the extension's name in the extension strings,
 * the double's errors through glGetError, and the GetProcAddress
 * functions that hand out the double's entry points. Built twice: for
 * the AMD double, and with GLD_INTEL for the GL_INTEL_performance_query
 * double (intelpq_double.c), whose extension and entry points it then
 * hands out instead (amdpm.h).
 */
#include "amdpm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- The driver's functions, as the next definition gives them ---- */

static const char *const real_names[] = {
    "glGetString",  "glGetStringi",        "glGetIntegerv",
    "glGetError",   "glGenQueries",        "glDeleteQueries",
    "glBeginQuery", "glEndQuery",          "glQueryCounter",
    "glGetQueryiv", "glGetQueryObjectuiv", "glGetQueryObjectui64v"};

_Static_assert(sizeof(real_gl) ==
                   sizeof(real_names) / sizeof(real_names[0]) * sizeof(void *),
               "gld_real and real_names differ");
real_gl gld_real;
static atomic_int real_done;
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;

static gld_proc own_proc(const char *name);

typedef void *(*gld_dlsym_fn)(void *, const char *);

/* dlsym itself, C library's: another interposer may wrap dlsym and hand
 * out its own wrappers (which would call us back). Through a pointer,
 * RTLD_NEXT still means "after the caller", and the caller is us. */
static void *real_dlsym(void *handle, const char *name) {
  static _Atomic(gld_dlsym_fn) fn;
  gld_dlsym_fn f = atomic_load(&fn);
  if (!f) {
    f = (gld_dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
    if (!f)
      f = (gld_dlsym_fn)dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
    if (!f)
      f = dlsym;
    atomic_store(&fn, f);
  }
  return f(handle, name);
}

/* Name's definition in a GL library already loaded (none is loaded
 * here), or NULL: for programs and loaders that open libGL or libEGL
 * themselves with RTLD_LOCAL, out of RTLD_NEXT's reach. */
static void *from_loaded(const char *name) {
  static const char *const libs[] = {"libOpenGL.so.0", "libGL.so.1",
                                     "libGLX.so.0", "libEGL.so.1",
                                     "libGLESv2.so.2"};
  void *p = NULL;
  for (size_t i = 0; !p && i < sizeof(libs) / sizeof(libs[0]); i++) {
    void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
      p = real_dlsym(h, name);
      dlclose(h);
    }
  }
  return p;
}

/* What a loaded library's own GetProcAddress function self (the GLX or
 * the EGL one) answers for name, or NULL. */
static gld_proc loaded_gpa(const char *self, const char *name) {
  gld_egpa gpa = (gld_egpa)from_loaded(self);
  return gpa ? gpa(name) : NULL;
}

/* The next glXGetProcAddressARB / eglGetProcAddress's answer for name,
 * or NULL. */
static gld_proc next_gpa(const char *name) {
  gld_gpa gx = (gld_gpa)real_dlsym(RTLD_NEXT, "glXGetProcAddressARB");
  if (gx && (void *)gx != (void *)glXGetProcAddressARB) {
    gld_proc p = gx((const GLubyte *)name);
    if (p)
      return p;
  }
  gld_egpa eg = (gld_egpa)real_dlsym(RTLD_NEXT, "eglGetProcAddress");
  if (eg && (void *)eg != (void *)eglGetProcAddress)
    return eg(name);
  return NULL;
}

/* The next definition of a GL function: the exported one after us, else
 * what the next GetProcAddress returns, else a loaded library's own.
 * Never one of our own (an interposer whose dlsym wrapper loses
 * RTLD_NEXT's caller could hand us ourselves back). */
static void *next_gl(const char *name) {
  void *p = real_dlsym(RTLD_NEXT, name);
  gld_proc own = own_proc(name);
  if (!p || (own && p == (void *)own))
    p = (void *)next_gpa(name);
  if (!p || (own && p == (void *)own))
    p = from_loaded(name);
  if (!p || (own && p == (void *)own))
    p = (void *)loaded_gpa("eglGetProcAddress", name);
  if (!p || (own && p == (void *)own))
    p = (void *)loaded_gpa("glXGetProcAddressARB", name);
  if (own && p == (void *)own)
    p = NULL;
  return p;
}

/* See amdpm.h. Retried until every function is known: a program may load
 * libGL after its first call through us. */
int gld_real_ready(void) {
  if (atomic_load_explicit(&real_done, memory_order_acquire))
    return 1;
  pthread_mutex_lock(&real_lock);
  /* The struct's members are function pointers of one size, in the
   * order of real_names; memcpy writes them whatever their types. */
  char *slots = (char *)&gld_real;
  int all = 1;
  for (size_t i = 0; i < sizeof(real_names) / sizeof(real_names[0]); i++) {
    void *p;
    memcpy(&p, slots + i * sizeof(p), sizeof(p));
    if (!p)
      p = next_gl(real_names[i]);
    memcpy(slots + i * sizeof(p), &p, sizeof(p));
    all &= p != NULL;
  }
  if (all)
    atomic_store_explicit(&real_done, 1, memory_order_release);
  pthread_mutex_unlock(&real_lock);
  return all;
}

/* 1 for a desktop GL context, 0 for OpenGL ES or no context. */
static int desktop_context(void) {
  if (!gld_real_ready())
    return 0;
  const char *v = (const char *)gld_real.GetString(GL_VERSION);
  return v && strncmp(v, "OpenGL ES", 9) != 0;
}

/* ---- Errors ---- */

static _Atomic GLenum pending_error;

/* See amdpm.h. GL keeps the first error. */
void gld_set_error(GLenum err) {
  GLenum none = GL_NO_ERROR;
  atomic_compare_exchange_strong(&pending_error, &none, err);
}

/* ---- Extension strings ---- */

typedef struct ext_string {
  struct ext_string *next;
  char *real; /* a copy of the driver's string */
  char *ours; /* it, plus our name */
} ext_string;

static ext_string *ext_strings; /* kept for the process's life */

/* The driver's extension string with ours appended, one copy per
 * distinct string (contexts of several kinds), or real when out of
 * memory. */
static const GLubyte *with_ours(const char *real_s) {
  pthread_mutex_lock(&real_lock);
  ext_string *e = ext_strings;
  while (e && strcmp(e->real, real_s) != 0)
    e = e->next;
  if (!e) {
    size_t n = strlen(real_s);
    e = calloc(1, sizeof(*e));
    char *r = malloc(n + 1), *o = malloc(n + sizeof(EXT_NAME) + 1);
    if (!e || !r || !o) {
      free(e), free(r), free(o);
      pthread_mutex_unlock(&real_lock);
      return (const GLubyte *)real_s;
    }
    memcpy(r, real_s, n + 1);
    memcpy(o, real_s, n);
    size_t k = n;
    if (k && o[k - 1] != ' ')
      o[k++] = ' ';
    memcpy(o + k, EXT_NAME, sizeof(EXT_NAME));
    e->real = r, e->ours = o, e->next = ext_strings;
    ext_strings = e;
  }
  pthread_mutex_unlock(&real_lock);
  return (const GLubyte *)e->ours;
}

EXPORT const GLubyte *GLAPIENTRY glGetString(GLenum name) {
  if (!gld_real_ready())
    return NULL;
  const GLubyte *s = gld_real.GetString(name);
  if (name == GL_EXTENSIONS && s && desktop_context())
    return with_ours((const char *)s);
  return s;
}

EXPORT const GLubyte *GLAPIENTRY glGetStringi(GLenum name, GLuint index) {
  if (!gld_real_ready())
    return NULL;
  if (name == GL_EXTENSIONS && desktop_context()) {
    GLint n = 0;
    gld_real.GetIntegerv(GL_NUM_EXTENSIONS, &n);
    if (n >= 0 && index == (GLuint)n)
      return (const GLubyte *)EXT_NAME;
  }
  return gld_real.GetStringi(name, index);
}

EXPORT void GLAPIENTRY glGetIntegerv(GLenum pname, GLint *data) {
  if (!gld_real_ready())
    return;
  gld_real.GetIntegerv(pname, data);
  if (pname == GL_NUM_EXTENSIONS && data && desktop_context())
    data[0]++;
}

EXPORT GLenum GLAPIENTRY glGetError(void) {
  GLenum e = atomic_exchange(&pending_error, GL_NO_ERROR);
  if (e != GL_NO_ERROR)
    return e;
  return gld_real_ready() ? gld_real.GetError() : GL_NO_ERROR;
}

/* ---- GetProcAddress ---- */

static const struct {
  const char *name;
  gld_proc fn;
} own[] = {
#ifdef GLD_INTEL
    {"glGetFirstPerfQueryIdINTEL", (gld_proc)glGetFirstPerfQueryIdINTEL},
    {"glGetNextPerfQueryIdINTEL", (gld_proc)glGetNextPerfQueryIdINTEL},
    {"glGetPerfQueryIdByNameINTEL", (gld_proc)glGetPerfQueryIdByNameINTEL},
    {"glGetPerfQueryInfoINTEL", (gld_proc)glGetPerfQueryInfoINTEL},
    {"glGetPerfCounterInfoINTEL", (gld_proc)glGetPerfCounterInfoINTEL},
    {"glCreatePerfQueryINTEL", (gld_proc)glCreatePerfQueryINTEL},
    {"glDeletePerfQueryINTEL", (gld_proc)glDeletePerfQueryINTEL},
    {"glBeginPerfQueryINTEL", (gld_proc)glBeginPerfQueryINTEL},
    {"glEndPerfQueryINTEL", (gld_proc)glEndPerfQueryINTEL},
    {"glGetPerfQueryDataINTEL", (gld_proc)glGetPerfQueryDataINTEL},
#else
    {"glGetPerfMonitorGroupsAMD", (gld_proc)glGetPerfMonitorGroupsAMD},
    {"glGetPerfMonitorCountersAMD", (gld_proc)glGetPerfMonitorCountersAMD},
    {"glGetPerfMonitorGroupStringAMD",
     (gld_proc)glGetPerfMonitorGroupStringAMD},
    {"glGetPerfMonitorCounterStringAMD",
     (gld_proc)glGetPerfMonitorCounterStringAMD},
    {"glGetPerfMonitorCounterInfoAMD",
     (gld_proc)glGetPerfMonitorCounterInfoAMD},
    {"glGenPerfMonitorsAMD", (gld_proc)glGenPerfMonitorsAMD},
    {"glDeletePerfMonitorsAMD", (gld_proc)glDeletePerfMonitorsAMD},
    {"glSelectPerfMonitorCountersAMD",
     (gld_proc)glSelectPerfMonitorCountersAMD},
    {"glBeginPerfMonitorAMD", (gld_proc)glBeginPerfMonitorAMD},
    {"glEndPerfMonitorAMD", (gld_proc)glEndPerfMonitorAMD},
    {"glGetPerfMonitorCounterDataAMD",
     (gld_proc)glGetPerfMonitorCounterDataAMD},
#endif
    {"glGetString", (gld_proc)glGetString},
    {"glGetStringi", (gld_proc)glGetStringi},
    {"glGetIntegerv", (gld_proc)glGetIntegerv},
    {"glGetError", (gld_proc)glGetError},
    {"glBeginQuery", (gld_proc)glBeginQuery},
    {"glEndQuery", (gld_proc)glEndQuery},
    {"glDeleteQueries", (gld_proc)glDeleteQueries},
};

static gld_proc own_proc(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
    if (strcmp(own[i].name, name) == 0)
      return own[i].fn;
  return NULL;
}

/* Ours for our names, else what the next definition of self returns. */
static gld_proc chain_gpa(const char *self, void *self_addr, const char *name) {
  gld_proc p = own_proc(name);
  if (p)
    return p;
  void *next = real_dlsym(RTLD_NEXT, self);
  if (!next || next == self_addr)
    return loaded_gpa(self, name); /* the library was opened locally */
  return ((gld_egpa)next)(name);
}

EXPORT gld_proc glXGetProcAddressARB(const GLubyte *name) {
  return chain_gpa("glXGetProcAddressARB", (void *)glXGetProcAddressARB,
                   (const char *)name);
}

EXPORT gld_proc glXGetProcAddress(const GLubyte *name) {
  return chain_gpa("glXGetProcAddress", (void *)glXGetProcAddress,
                   (const char *)name);
}

EXPORT gld_proc eglGetProcAddress(const char *name) {
  return chain_gpa("eglGetProcAddress", (void *)eglGetProcAddress, name);
}
