/*
 * resolve.c - finding the real OpenCL entry points, and the library's
 * one-time set-up.
 *
 * Every wrapper calls the function it wraps through gp__ocl_real(), which
 * looks it up the first time: dlsym(RTLD_NEXT) finds the ICD loader the
 * program linked (the usual case, and libOpenCL's default symbol version);
 * when the loader was opened RTLD_LOCAL (a Python extension, a plugin) it
 * is not in the global scope, so the loaded libOpenCL.so.1 is asked
 * directly; failing both, libOpenCL.so.1 is opened, which is what a
 * program that reaches our symbols without having loaded a loader (our own
 * test and benchmark programs, which link the wrappers in) needs.
 *
 * Nothing here runs at load time: resolution and set-up happen at the
 * program's first OpenCL call, never in a constructor, because a process
 * forked after the driver initialised itself can hang in it (PoCL).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/backend_off.h"
#include "oclInt.h"

void *_Atomic gp__ocl_real_fn[GP_CL_ID_COUNT];

static const char *const call_names[GP_CL_ID_COUNT] = {
#define GP_CL_NAME_ROW(h, r, name, ...) #name,
    GP_CL_API(GP_CL_NAME_ROW)
#undef GP_CL_NAME_ROW
};

/* See oclInt.h. */
const char *gp__ocl_call_name(uint32_t id) {
  return id < GP_CL_ID_COUNT ? call_names[id] : "";
}

/* The loader, when it is not in the global scope. */
static void *_Atomic pinned;

static void *loader_lookup(const char *name) {
  void *h = atomic_load(&pinned);
  if (!h) {
    /* Loaded by someone (RTLD_LOCAL): the reference RTLD_NOLOAD adds is
     * kept, so the functions we cache outlive a dlclose by the program. */
    h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
      h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
      return NULL;
    void *expect = NULL;
    if (!atomic_compare_exchange_strong(&pinned, &expect, h)) {
      dlclose(h); /* another thread got there first */
      h = expect;
    }
  }
  return dlsym(h, name);
}

/* See oclInt.h. */
void *gp__ocl_resolve(uint32_t id) {
  static _Atomic uint64_t warned[(GP_CL_ID_COUNT + 63) / 64];
  if (id >= GP_CL_ID_COUNT)
    return NULL;
  gp__ocl_init();
  const char *name = call_names[id];
  void *p = dlsym(RTLD_NEXT, name);
  /* RTLD_NEXT from the program itself (our tests link the wrappers in)
   * can come back to our own definition: that is no real function. */
  if (p) {
    Dl_info self, found;
    if (dladdr((void *)gp__ocl_resolve, &self) && dladdr(p, &found) &&
        self.dli_fbase == found.dli_fbase)
      p = NULL;
  }
  if (!p)
    p = loader_lookup(name);
  if (p) {
    atomic_store_explicit(&gp__ocl_real_fn[id], p, memory_order_release);
    return p;
  }
  uint64_t bit = 1ull << (id % 64);
  if (!(atomic_fetch_or(&warned[id / 64], bit) & bit))
    fprintf(stderr,
            "gpuperf: %s: no OpenCL library provides it (is libOpenCL.so.1 "
            "installed?)\n",
            name);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* The core                                                             */

const gp_backend_ops *_Atomic gp__ocl_core_ops;

static const gp_backend_ops off_ops = GP__BACKEND_OFF_INIT;

/* See oclInt.h. */
const gp_backend_ops *gp__ocl_core_load(void) {
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  if (!c) {
    static _Atomic bool told;
    if (!atomic_exchange(&told, true))
      fprintf(stderr, "gpuperf: libgpuperf-opencl.so and the libgpuperf it "
                      "loaded are of different builds: OpenCL calls are "
                      "not recorded\n");
    c = &off_ops;
  }
  atomic_store_explicit(&gp__ocl_core_ops, c, memory_order_release);
  /* The program's first OpenCL call: a recorded process joins the
   * recording now (before anything asks which kinds are enabled). */
  c->activate();
  return c;
}

/* ------------------------------------------------------------------ */
/* Set-up                                                               */

gp__ocl_state gp__ocl = {
    /* Short sections, taken by program and driver threads alike: spin a
     * little before sleeping. */
    .lock = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP,
    .objects_lock = PTHREAD_MUTEX_INITIALIZER,
    .events = {.lockfree_readers = false},
    .mappings = {.lockfree_readers = false},
    .svm = {.lockfree_readers = false},
    .queues = {.lockfree_readers = true},
    .kernels = {.lockfree_readers = true},
    .contexts = {.lockfree_readers = true},
    .programs = {.lockfree_readers = true},
    .devices = {.lockfree_readers = true},
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_run(void) {
  gp__ocl_track_init();
}

/* See oclInt.h. */
void gp__ocl_init(void) {
  pthread_once(&init_once, init_run);
}
