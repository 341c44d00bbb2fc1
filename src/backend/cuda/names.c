/*
 * names.c - the names the translation gives records: API functions
 * without their version suffixes, and kernels' demangled names, with the
 * caches that keep both off the per-record cost.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

/* ------------------------------------------------------------------ */
/* API names                                                            */

#define NAME_CACHE 2048
static _Atomic uint32_t runtime_names[NAME_CACHE], driver_names[NAME_CACHE];

/* Strips version suffixes ("_v7000", "_v2") and per-thread-stream ones
 * ("_ptsz", "_ptds"), in any order: the variants are one function to a
 * reader. */
static size_t base_name_len(const char *s) {
  size_t n = strlen(s);
  for (;;) {
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
      i--;
    if (i < n && i >= 3 && s[i - 1] == 'v' && s[i - 2] == '_') {
      n = i - 2;
    } else if (n > 5 && (strncmp(s + n - 5, "_ptsz", 5) == 0 ||
                         strncmp(s + n - 5, "_ptds", 5) == 0)) {
      n -= 5;
    } else {
      return n;
    }
  }
}

/* See cudaInt.h. */
uint32_t gp__cuda_api_name(uint32_t domain, uint32_t cbid) {
  _Atomic uint32_t *cache =
      domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? runtime_names
      : domain == CUPTI_CB_DOMAIN_DRIVER_API ? driver_names
                                             : NULL;
  if (cache && cbid < NAME_CACHE) {
    uint32_t id = atomic_load_explicit(&cache[cbid], memory_order_relaxed);
    if (id)
      return id;
  }
  const char *name = NULL;
  if (cuptiGetCallbackName((CUpti_CallbackDomain)domain, cbid, &name) !=
          CUPTI_SUCCESS ||
      !name)
    return 0;
  uint32_t id = GP_CORE->string_intern_n(name, base_name_len(name));
  if (cache && cbid < NAME_CACHE)
    atomic_store_explicit(&cache[cbid], id, memory_order_relaxed);
  return id;
}

/* ------------------------------------------------------------------ */
/* Demangling                                                           */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
#define DEMANGLE_CACHE 4096
static _Atomic uint64_t demangled[DEMANGLE_CACHE]; /* mangled id << 32 | id */

static void find_demangler(void) {
  /* The C++ runtime is in nearly every CUDA program; elsewhere load it. */
  void *f = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!f) {
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h)
      f = dlsym(h, "__cxa_demangle");
  }
  *(void **)&demangler = f;
}

/* The demangled form of mangled, whose string id is mid. */
static uint32_t demangle_id(const char *mangled, uint32_t mid) {
  if (!mangled || strncmp(mangled, "_Z", 2) != 0)
    return 0;
  uint64_t e = atomic_load_explicit(&demangled[mid % DEMANGLE_CACHE],
                                    memory_order_relaxed);
  if (mid != 0 && (uint32_t)(e >> 32) == mid)
    return (uint32_t)e;
  pthread_once(&demangler_once, find_demangler);
  if (!demangler)
    return 0;
  int status = -1;
  char *out = demangler(mangled, NULL, NULL, &status);
  uint32_t id = 0;
  if (out && status == 0)
    id = GP_CORE->string_intern(out);
  free(out);
  if (mid != 0)
    atomic_store_explicit(&demangled[mid % DEMANGLE_CACHE],
                          ((uint64_t)mid << 32) | id, memory_order_relaxed);
  return id;
}

/* See cudaInt.h. */
uint32_t gp__cuda_demangle(const char *mangled) {
  if (!mangled || strncmp(mangled, "_Z", 2) != 0)
    return 0;
  return demangle_id(mangled, GP_CORE->string_intern(mangled));
}

/* CUPTI hands out the same name pointer for every launch of a kernel.
 * Remembering pointer -> string id spares hashing the name per record;
 * the string is compared, so a pointer CUPTI reused for another name is
 * not believed. */
#define NAME_PTR_CACHE 1024
typedef struct name_entry {
  const char *ptr;
  uint32_t id, demangled_id;
} name_entry;
static GP_TLS name_entry *name_cache; /* per thread, on the heap */
static pthread_key_t name_cache_key;
static pthread_once_t name_cache_once = PTHREAD_ONCE_INIT;

static void name_cache_key_init(void) {
  pthread_key_create(&name_cache_key, free);
}

/* See cudaInt.h. */
void gp__cuda_kernel_names(const char *name, uint32_t *id, uint32_t *dem) {
  *id = 0;
  *dem = 0;
  if (!name)
    return;
  if (!name_cache) {
    pthread_once(&name_cache_once, name_cache_key_init);
    name_cache = calloc(NAME_PTR_CACHE, sizeof(*name_cache));
    if (name_cache)
      pthread_setspecific(name_cache_key, name_cache);
  }
  name_entry *e =
      name_cache ? &name_cache[((uintptr_t)name >> 3) % NAME_PTR_CACHE] : NULL;
  if (e && e->ptr == name && e->id &&
      strcmp(gp_activity_string(e->id), name) == 0) {
    *id = e->id;
    *dem = e->demangled_id;
    return;
  }
  *id = GP_CORE->string_intern(name);
  *dem = demangle_id(name, *id);
  if (e && *id)
    *e = (name_entry){name, *id, *dem};
}
