/*
 * deps.c - which GPU work waited for which: the wait ids of kernels,
 * copies and fills, and what a synchronizing call waited for.
 *
 * CUPTI's records say when work ran, not what it waited on. The program's
 * API calls say it: an event recorded on stream A stands for the last
 * work launched on A; a later cudaStreamWaitEvent(B, event) makes the next
 * work launched on B wait for that work. The callbacks (callbacks.c) feed
 * those calls here with the program's own handles, at launch time on the
 * launching thread; translate.c takes the wait ids when the work's record
 * arrives, by correlation id. Stream order carries the dependency to the
 * work after the first, as in Perfetto's event_wait_ids.
 *
 * All tables are keyed hash tables under one mutex (launch rates are far
 * below what a mutex costs). The table of pending wait ids is bounded:
 * work whose record never comes (a disabled kind, records CUPTI dropped)
 * must not grow it forever, so when it fills, the oldest half goes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cudaInt.h"

#define DEPS_MAX 16384u

typedef struct handle_entry {
  uintptr_t key;
  uint32_t work;  /* stream: last work; event: the work it stands for */
  uint32_t nwait; /* stream: pending waits for its next work */
  uint32_t waits[GP_CUDA_MAX_WAITS];
  bool used;
} handle_entry;

typedef struct dep_entry {
  uint32_t corr;
  uint32_t n;
  uint32_t waits[GP_CUDA_MAX_WAITS];
} dep_entry;

typedef struct table {
  void *slots;
  size_t cap, count; /* cap is a power of two, or 0 */
} table;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static table handles; /* handle_entry */
static table deps;    /* dep_entry, corr 0 = empty */
static uint32_t last_work;
/* deps.count, readable without the lock: most work waits for nothing, and
 * its record should not pay for the lock to learn that. */
static _Atomic size_t num_deps;

static size_t hash_ptr(uintptr_t k) {
  uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 17);
}

/* ---- handles: streams and events ---- */

static handle_entry *h_slots(void) {
  return handles.slots;
}

static handle_entry *h_find(uintptr_t key) {
  if (handles.cap == 0)
    return NULL;
  handle_entry *s = h_slots();
  for (size_t i = hash_ptr(key) & (handles.cap - 1);;
       i = (i + 1) & (handles.cap - 1)) {
    if (!s[i].used)
      return NULL;
    if (s[i].key == key)
      return &s[i];
  }
}

static int h_grow(void) {
  size_t ncap = handles.cap ? handles.cap * 2 : 64;
  handle_entry *n = calloc(ncap, sizeof(*n));
  if (!n)
    return GP_ENOMEM;
  handle_entry *old = h_slots();
  for (size_t i = 0; i < handles.cap; i++) {
    if (!old[i].used)
      continue;
    size_t j = hash_ptr(old[i].key) & (ncap - 1);
    while (n[j].used)
      j = (j + 1) & (ncap - 1);
    n[j] = old[i];
  }
  free(old);
  handles.slots = n;
  handles.cap = ncap;
  return 0;
}

/* Finds or adds the entry of a handle; NULL when memory runs out. */
static handle_entry *h_get(const void *handle) {
  uintptr_t key = (uintptr_t)handle;
  handle_entry *e = h_find(key);
  if (e)
    return e;
  if ((handles.count + 1) * 2 > handles.cap && h_grow() != 0)
    return NULL;
  handle_entry *s = h_slots();
  size_t i = hash_ptr(key) & (handles.cap - 1);
  while (s[i].used)
    i = (i + 1) & (handles.cap - 1);
  memset(&s[i], 0, sizeof(s[i]));
  s[i].key = key;
  s[i].used = true;
  handles.count++;
  return &s[i];
}

/* Removes an entry, shifting later ones of its run back (no tombstones). */
static void h_remove(handle_entry *e) {
  handle_entry *s = h_slots();
  size_t mask = handles.cap - 1;
  size_t i = (size_t)(e - s);
  s[i].used = false;
  handles.count--;
  for (size_t j = (i + 1) & mask; s[j].used; j = (j + 1) & mask) {
    size_t home = hash_ptr(s[j].key) & mask;
    /* Move s[j] into the hole at i if its home is not in (i, j]. */
    bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!between) {
      s[i] = s[j];
      s[j].used = false;
      i = j;
    }
  }
}

/* ---- pending wait ids by correlation id ---- */

static dep_entry *d_slots(void) {
  return deps.slots;
}

static dep_entry *d_find(uint32_t corr) {
  if (deps.cap == 0 || corr == 0)
    return NULL;
  dep_entry *s = d_slots();
  for (size_t i = hash_ptr(corr) & (deps.cap - 1);;
       i = (i + 1) & (deps.cap - 1)) {
    if (s[i].corr == 0)
      return NULL;
    if (s[i].corr == corr)
      return &s[i];
  }
}

static void d_insert_into(dep_entry *s, size_t cap, const dep_entry *e) {
  size_t i = hash_ptr(e->corr) & (cap - 1);
  while (s[i].corr != 0)
    i = (i + 1) & (cap - 1);
  s[i] = *e;
}

/* Rebuilds the table at capacity ncap, keeping entries with corr >=
 * keep_from. */
static int d_rebuild(size_t ncap, uint32_t keep_from) {
  dep_entry *n = calloc(ncap, sizeof(*n));
  if (!n)
    return GP_ENOMEM;
  dep_entry *old = d_slots();
  size_t count = 0;
  for (size_t i = 0; i < deps.cap; i++) {
    if (old[i].corr != 0 && old[i].corr >= keep_from) {
      d_insert_into(n, ncap, &old[i]);
      count++;
    }
  }
  free(old);
  deps.slots = n;
  deps.cap = ncap;
  deps.count = count;
  return 0;
}

static void d_remove(dep_entry *e) {
  dep_entry *s = d_slots();
  size_t mask = deps.cap - 1;
  size_t i = (size_t)(e - s);
  s[i].corr = 0;
  deps.count--;
  for (size_t j = (i + 1) & mask; s[j].corr != 0; j = (j + 1) & mask) {
    size_t home = hash_ptr(s[j].corr) & mask;
    bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!between) {
      s[i] = s[j];
      s[j].corr = 0;
      i = j;
    }
  }
}

/* Adds wait ids to the entry of corr (merging with what it has). */
static void d_add(uint32_t corr, const uint32_t *waits, uint32_t n) {
  if (corr == 0 || n == 0)
    return;
  dep_entry *e = d_find(corr);
  if (!e) {
    if (deps.count >= DEPS_MAX) {
      /* Keep the newer half: old work's records have long come, or
       * never will. */
      uint32_t lo = UINT32_MAX, hi = 0;
      dep_entry *s = d_slots();
      for (size_t i = 0; i < deps.cap; i++) {
        if (s[i].corr == 0)
          continue;
        lo = s[i].corr < lo ? s[i].corr : lo;
        hi = s[i].corr > hi ? s[i].corr : hi;
      }
      if (d_rebuild(deps.cap, lo + (hi - lo) / 2 + 1) != 0)
        return;
    } else if ((deps.count + 1) * 2 > deps.cap &&
               d_rebuild(deps.cap ? deps.cap * 2 : 256, 0) != 0) {
      return;
    }
    dep_entry ne = {.corr = corr, .n = 0};
    d_insert_into(d_slots(), deps.cap, &ne);
    deps.count++;
    e = d_find(corr);
  }
  for (uint32_t i = 0; i < n && e->n < GP_CUDA_MAX_WAITS; i++) {
    bool dup = false;
    for (uint32_t j = 0; j < e->n; j++)
      dup |= e->waits[j] == waits[i];
    if (!dup && waits[i] != 0 && waits[i] != corr)
      e->waits[e->n++] = waits[i];
  }
}

/* ------------------------------------------------------------------ */
/* The bookkeeping                                                      */

/* See cudaInt.h. */
void gp__cuda_deps_launch(const void *stream, uint32_t corr) {
  if (corr == 0)
    return;
  pthread_mutex_lock(&lock);
  handle_entry *s = h_get(stream);
  if (s) {
    d_add(corr, s->waits, s->nwait);
    s->nwait = 0;
    s->work = corr;
  }
  last_work = corr;
  atomic_store_explicit(&num_deps, deps.count, memory_order_release);
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_deps_alias(uint32_t corr, uint32_t alias) {
  if (corr == 0 || alias == 0 || corr == alias)
    return;
  pthread_mutex_lock(&lock);
  dep_entry *e = d_find(corr);
  if (e) {
    dep_entry copy = *e;
    d_add(alias, copy.waits, copy.n);
  }
  atomic_store_explicit(&num_deps, deps.count, memory_order_release);
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_deps_event_record(const void *event, const void *stream) {
  pthread_mutex_lock(&lock);
  handle_entry *s = h_find((uintptr_t)stream);
  uint32_t work = s ? s->work : 0;
  handle_entry *e = h_get(event);
  if (e)
    e->work = work;
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_deps_stream_wait(const void *stream, const void *event) {
  pthread_mutex_lock(&lock);
  handle_entry *e = h_find((uintptr_t)event);
  uint32_t work = e ? e->work : 0;
  if (work != 0) {
    handle_entry *s = h_get(stream);
    if (s && s->nwait < GP_CUDA_MAX_WAITS) {
      bool dup = false;
      for (uint32_t i = 0; i < s->nwait; i++)
        dup |= s->waits[i] == work;
      if (!dup)
        s->waits[s->nwait++] = work;
    }
  }
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_deps_sync(uint32_t corr, int what, const void *handle) {
  pthread_mutex_lock(&lock);
  uint32_t work = 0;
  if (what == GP_SYNC_CONTEXT_SYNCHRONIZE) {
    work = last_work;
  } else {
    handle_entry *h = h_find((uintptr_t)handle);
    work = h ? h->work : 0;
  }
  if (work)
    d_add(corr, &work, 1);
  atomic_store_explicit(&num_deps, deps.count, memory_order_release);
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
void gp__cuda_deps_forget(const void *handle) {
  pthread_mutex_lock(&lock);
  handle_entry *h = h_find((uintptr_t)handle);
  if (h)
    h_remove(h);
  pthread_mutex_unlock(&lock);
}

/* See cudaInt.h. */
uint32_t gp__cuda_deps_take(uint32_t corr, uint64_t *ids, uint32_t cap) {
  uint32_t n = 0;
  if (atomic_load_explicit(&num_deps, memory_order_acquire) == 0)
    return 0;
  pthread_mutex_lock(&lock);
  dep_entry *e = d_find(corr);
  if (e) {
    for (; n < e->n && n < cap; n++)
      ids[n] = e->waits[n];
    d_remove(e);
  }
  atomic_store_explicit(&num_deps, deps.count, memory_order_release);
  pthread_mutex_unlock(&lock);
  return n;
}

/* See cudaInt.h. */
size_t gp__cuda_deps_pending(void) {
  pthread_mutex_lock(&lock);
  size_t n = deps.count;
  pthread_mutex_unlock(&lock);
  return n;
}

/* See cudaInt.h. */
void gp__cuda_deps_reset(void) {
  pthread_mutex_lock(&lock);
  free(handles.slots);
  free(deps.slots);
  memset(&handles, 0, sizeof(handles));
  memset(&deps, 0, sizeof(deps));
  last_work = 0;
  atomic_store_explicit(&num_deps, deps.count, memory_order_release);
  pthread_mutex_unlock(&lock);
}
