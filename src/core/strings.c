/*
 * strings.c - the process-wide string table behind every name_id.
 *
 * Records carry 32-bit string ids instead of pointers or inline text, so
 * they stay fixed-size and a kernel name is copied once, not per launch.
 * Ids are dense from 1 and never reused; a string lives until the process
 * exits. Looking up a string that is already known takes no lock: the hash
 * index is an open-addressing array of ids published with release stores,
 * and is replaced (never modified in place after replacement) when it grows.
 * Adding a string takes a mutex.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096 /* 16 M strings */

typedef struct str_entry {
  uint64_t hash;
  uint32_t len;
  char s[];
} str_entry;

typedef struct str_index {
  uint32_t mask;              /* capacity - 1 */
  struct str_index *previous; /* kept alive for readers, freed never */
  _Atomic uint32_t slots[];   /* string ids, 0 = empty */
} str_index;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The mirror (gp__string_mirror), under lock. */
static uint8_t *mirror;
static size_t mirror_cap;
static uint64_t *mirror_used, *mirror_full;
static pid_t mirror_pid;
static str_entry *_Atomic chunks[MAX_CHUNKS];
static _Atomic(str_index *) index_ptr;
static _Atomic uint32_t next_id = 1;
static uint32_t used_slots; /* under lock */

/* See core.h. */
uint64_t gp__string_hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

static str_entry *entry_get(uint32_t id) {
  if (id == 0 || id >= atomic_load_explicit(&next_id, memory_order_acquire))
    return NULL;
  str_entry **chunk = (str_entry **)atomic_load_explicit(
      &chunks[id >> CHUNK_BITS], memory_order_acquire);
  return chunk ? chunk[id & (CHUNK_SIZE - 1)] : NULL;
}

/* Finds s in idx; returns its id or 0. */
static uint32_t index_find(const str_index *idx, const char *s, size_t len,
                           uint64_t h) {
  if (!idx)
    return 0;
  for (uint32_t i = (uint32_t)h & idx->mask;; i = (i + 1) & idx->mask) {
    uint32_t id = atomic_load_explicit(&idx->slots[i], memory_order_acquire);
    if (id == 0)
      return 0;
    str_entry *e = entry_get(id);
    if (e && e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
      return id;
  }
}

static void index_put(str_index *idx, uint32_t id, uint64_t h) {
  uint32_t i = (uint32_t)h & idx->mask;
  while (atomic_load_explicit(&idx->slots[i], memory_order_relaxed) != 0)
    i = (i + 1) & idx->mask;
  atomic_store_explicit(&idx->slots[i], id, memory_order_release);
}

/* Grows the index to hold n more ids; caller holds lock. */
static int index_reserve(void) {
  str_index *old = atomic_load_explicit(&index_ptr, memory_order_relaxed);
  uint32_t cap = old ? old->mask + 1 : 0;
  if (old && (used_slots + 1) * 2 <= cap)
    return 0;
  uint32_t ncap = cap ? cap * 2 : 1024;
  str_index *idx =
      calloc(1, sizeof(*idx) + sizeof(_Atomic uint32_t) * (size_t)ncap);
  if (!idx)
    return GP_ENOMEM;
  idx->mask = ncap - 1;
  idx->previous = old;
  uint32_t n = atomic_load_explicit(&next_id, memory_order_relaxed);
  for (uint32_t id = 1; id < n; id++) {
    str_entry *e = entry_get(id);
    if (e)
      index_put(idx, id, e->hash);
  }
  atomic_store_explicit(&index_ptr, idx, memory_order_release);
  return 0;
}

/* Appends string id to the mirror. Caller holds lock. */
static void mirror_put(uint32_t id, const str_entry *e) {
  if (!mirror || mirror_pid != getpid() || *mirror_full)
    return;
  size_t at = (size_t)*mirror_used, need = GP_ALIGN8(8 + (size_t)e->len);
  if (need > mirror_cap - at) {
    __atomic_store_n(mirror_full, 1, __ATOMIC_RELEASE);
    return;
  }
  uint32_t head[2] = {id, e->len};
  memcpy(mirror + at, head, 8);
  memcpy(mirror + at + 8, e->s, e->len);
  memset(mirror + at + 8 + e->len, 0, need - 8 - e->len);
  __atomic_store_n(mirror_used, at + need, __ATOMIC_RELEASE);
}

/* See core.h. */
void gp__string_mirror(uint8_t *log, size_t cap, uint64_t *used, uint64_t *full,
                       bool in_fork_child) {
  if (!in_fork_child)
    pthread_mutex_lock(&lock);
  mirror = log;
  mirror_cap = log ? cap : 0;
  mirror_used = used;
  mirror_full = full;
  mirror_pid = getpid();
  if (log) {
    uint32_t n = atomic_load_explicit(&next_id, memory_order_relaxed);
    for (uint32_t id = 1; id < n; id++) {
      str_entry *e = entry_get(id);
      if (e)
        mirror_put(id, e);
    }
  }
  if (!in_fork_child)
    pthread_mutex_unlock(&lock);
}

/* See core.h. */
uint32_t gp__string_intern_n(const char *s, size_t len) {
  if (!s)
    return 0;
  uint64_t h = gp__string_hash(s, len);
  uint32_t id = index_find(
      atomic_load_explicit(&index_ptr, memory_order_acquire), s, len, h);
  if (id)
    return id;

  pthread_mutex_lock(&lock);
  id = index_find(atomic_load_explicit(&index_ptr, memory_order_relaxed), s,
                  len, h);
  if (id)
    goto out;
  uint32_t nid = atomic_load_explicit(&next_id, memory_order_relaxed);
  if ((nid >> CHUNK_BITS) >= MAX_CHUNKS || index_reserve() != 0)
    goto out;
  str_entry **chunk = (str_entry **)atomic_load_explicit(
      &chunks[nid >> CHUNK_BITS], memory_order_relaxed);
  if (!chunk) {
    chunk = calloc(CHUNK_SIZE, sizeof(*chunk));
    if (!chunk)
      goto out;
    atomic_store_explicit(&chunks[nid >> CHUNK_BITS], (str_entry *)chunk,
                          memory_order_release);
  }
  str_entry *e = malloc(sizeof(*e) + len + 1);
  if (!e)
    goto out;
  e->hash = h;
  e->len = (uint32_t)len;
  memcpy(e->s, s, len);
  e->s[len] = '\0';
  chunk[nid & (CHUNK_SIZE - 1)] = e;
  atomic_store_explicit(&next_id, nid + 1, memory_order_release);
  index_put(atomic_load_explicit(&index_ptr, memory_order_relaxed), nid, h);
  used_slots++;
  id = nid;
  mirror_put(nid, e);
out:
  pthread_mutex_unlock(&lock);
  return id;
}

/* See core.h. */
uint32_t gp__string_intern(const char *s) {
  return s ? gp__string_intern_n(s, strlen(s)) : 0;
}

/* See activity.h. */
const char *gp_activity_string(uint32_t string_id) {
  str_entry *e = entry_get(string_id);
  return e ? e->s : "";
}
