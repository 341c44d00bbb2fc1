/*
 * handles.c - gpuperf's ids for an API's own objects (a cl_context, a
 * VkQueue, a CUcontext, ...): what CUPTI's cuptiGetContextId,
 * cuptiGetDeviceId and cuptiGetStreamId give for CUDA's, for every API.
 *
 * Backends note each object when they register it (gp__handle_put) and
 * forget it when it goes (gp__handle_drop); gp_activity_get_*_id look it
 * up. One table for all, keyed by (api, what, handle, aux), in open
 * addressing with linear probing, kept at most half full, and deletion by
 * backward shift (no tombstones), under one mutex: lookups are rare
 * calls of a tool, registrations come with object creation.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/core.h"

typedef struct entry {
  const void *handle; /* NULL: empty */
  const void *aux;
  uint32_t api, what;
  uint32_t device_id, context_id, stream_id;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *tab;
static size_t cap, used; /* cap: a power of two, or 0 */

static size_t slot_of(uint32_t api, uint32_t what, const void *h,
                      const void *aux) {
  uint64_t k = (uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ull ^
               (uint64_t)(uintptr_t)aux * 0xc2b2ae3d27d4eb4full ^
               ((uint64_t)api << 8 | what);
  k ^= k >> 29;
  return (size_t)k & (cap - 1);
}

static bool same(const entry *e, uint32_t api, uint32_t what, const void *h,
                 const void *aux) {
  return e->handle == h && e->aux == aux && e->api == api && e->what == what;
}

/* The entry of the key, or NULL; under lock. */
static entry *find(uint32_t api, uint32_t what, const void *h,
                   const void *aux) {
  if (!cap)
    return NULL;
  for (size_t i = slot_of(api, what, h, aux);; i = (i + 1) & (cap - 1)) {
    if (!tab[i].handle)
      return NULL;
    if (same(&tab[i], api, what, h, aux))
      return &tab[i];
  }
}

/* Doubles the table (or makes it); false without memory. Under lock. */
static bool grow(void) {
  size_t ncap = cap ? cap * 2 : 64;
  entry *n = calloc(ncap, sizeof(*n));
  if (!n)
    return false;
  entry *old = tab;
  size_t ocap = cap;
  tab = n;
  cap = ncap;
  for (size_t i = 0; i < ocap; i++) {
    if (!old[i].handle)
      continue;
    size_t j = slot_of(old[i].api, old[i].what, old[i].handle, old[i].aux);
    while (tab[j].handle)
      j = (j + 1) & (cap - 1);
    tab[j] = old[i];
  }
  free(old);
  return true;
}

/* See core.h. */
int gp__handle_put(uint32_t api, uint32_t what, const void *handle,
                   const void *aux, uint32_t device_id, uint32_t context_id,
                   uint32_t stream_id) {
  if (!handle)
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  entry *e = find(api, what, handle, aux);
  if (!e) {
    if ((used + 1) * 2 > cap && !grow()) {
      pthread_mutex_unlock(&lock);
      return GP_ENOMEM;
    }
    size_t i = slot_of(api, what, handle, aux);
    while (tab[i].handle)
      i = (i + 1) & (cap - 1);
    e = &tab[i];
    used++;
  }
  *e = (entry){handle, aux, api, what, device_id, context_id, stream_id};
  pthread_mutex_unlock(&lock);
  return 0;
}

/* See core.h. */
void gp__handle_drop(uint32_t api, uint32_t what, const void *handle,
                     const void *aux) {
  pthread_mutex_lock(&lock);
  entry *e = find(api, what, handle, aux);
  if (e) {
    /* Backward shift: each later entry of the run moves into the hole
     * unless its home slot lies cyclically in (hole, its slot]. */
    size_t hole = (size_t)(e - tab);
    for (size_t j = (hole + 1) & (cap - 1); tab[j].handle;
         j = (j + 1) & (cap - 1)) {
      size_t home = slot_of(tab[j].api, tab[j].what, tab[j].handle, tab[j].aux);
      bool stays =
          hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays)
        continue;
      tab[hole] = tab[j];
      hole = j;
    }
    tab[hole] = (entry){0};
    used--;
  }
  pthread_mutex_unlock(&lock);
}

/* Looks up (api, what, handle, aux) into *out; GP_ENOENT if unknown. */
static int get(uint32_t api, uint32_t what, const void *handle, const void *aux,
               entry *out) {
  pthread_mutex_lock(&lock);
  entry *e = find(api, what, handle, aux);
  if (e)
    *out = *e;
  pthread_mutex_unlock(&lock);
  return e ? 0 : GP_ENOENT;
}

/* See activity.h. */
int gp_activity_get_context_id(uint32_t api, const void *context,
                               const void *device, uint32_t *context_id) {
  if (!context || !context_id)
    return GP_EINVAL;
  entry e;
  int rc = get(api, GP__HANDLE_CONTEXT, context, device, &e);
  if (rc == 0)
    *context_id = e.context_id;
  return rc;
}

/* See activity.h. */
int gp_activity_get_device_id(uint32_t api, const void *context,
                              const void *device, uint32_t *device_id) {
  if ((!context && !device) || !device_id)
    return GP_EINVAL;
  entry e;
  int rc = device ? get(api, GP__HANDLE_DEVICE, device, NULL, &e)
                  : get(api, GP__HANDLE_CONTEXT, context, NULL, &e);
  if (rc == 0)
    *device_id = e.device_id;
  return rc;
}

/* See activity.h. */
int gp_activity_get_stream_id(uint32_t api, const void *context,
                              const void *stream, uint32_t *stream_id) {
  if (!stream || !stream_id)
    return GP_EINVAL;
  entry e;
  int rc = get(api, GP__HANDLE_STREAM, stream, NULL, &e);
  if (rc == 0 && context) {
    /* A context given must be the stream's (CUPTI's rule). */
    entry c;
    if (get(api, GP__HANDLE_CONTEXT, context, NULL, &c) != 0 ||
        c.context_id != e.context_id)
      return GP_EINVAL;
  }
  if (rc == 0)
    *stream_id = e.stream_id;
  return rc;
}
