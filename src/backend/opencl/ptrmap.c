/*
 * ptrmap.c - see ptrmap.h. Linear probing over a power-of-two table;
 * the table is rebuilt (twice as large while it fills with live entries,
 * the same size when it fills with tombstones) once 60% of its slots have
 * held a key.
 */
#include <stdlib.h>

#include "core/core.h"
#include "ptrmap.h"

#define MIN_CAPACITY 64u

static size_t slot_of(uintptr_t key, size_t mask) {
  uint64_t h = (uint64_t)key >> 3;
  h *= 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & mask;
}

static gp__ptrmap_tab *tab_new(size_t cap) {
  gp__ptrmap_tab *t = calloc(1, sizeof(*t));
  if (!t)
    return NULL;
  t->keys = calloc(cap, sizeof(*t->keys));
  t->vals = calloc(cap, sizeof(*t->vals));
  if (!t->keys || !t->vals) {
    free(t->keys);
    free(t->vals);
    free(t);
    return NULL;
  }
  t->mask = cap - 1;
  return t;
}

static void tab_free(gp__ptrmap_tab *t) {
  while (t) {
    gp__ptrmap_tab *next = t->retired;
    free(t->keys);
    free(t->vals);
    free(t);
    t = next;
  }
}

/* See ptrmap.h. */
void gp__ptrmap_init(gp__ptrmap *m, bool lockfree_readers) {
  atomic_store(&m->tab, NULL);
  m->used = 0;
  m->live = 0;
  m->lockfree_readers = lockfree_readers;
}

/* See ptrmap.h. */
void *gp__ptrmap_get(gp__ptrmap *m, const void *key) {
  gp__ptrmap_tab *t = atomic_load_explicit(&m->tab, memory_order_acquire);
  if (!t || !key)
    return NULL;
  uintptr_t k = (uintptr_t)key;
  for (size_t i = slot_of(k, t->mask);; i = (i + 1) & t->mask) {
    uintptr_t s = atomic_load_explicit(&t->keys[i], memory_order_acquire);
    if (s == k)
      return atomic_load_explicit(&t->vals[i], memory_order_acquire);
    if (s == 0)
      return NULL;
  }
}

/* Inserts into a table known to have room; returns the slot. */
static size_t probe_insert(gp__ptrmap_tab *t, uintptr_t k, bool *found) {
  for (size_t i = slot_of(k, t->mask);; i = (i + 1) & t->mask) {
    uintptr_t s = atomic_load_explicit(&t->keys[i], memory_order_relaxed);
    if (s == k) {
      *found = true;
      return i;
    }
    if (s == 0) {
      *found = false;
      return i;
    }
  }
}

/* Rebuilds into a table sized for the live entries plus growth. */
static int rebuild(gp__ptrmap *m) {
  gp__ptrmap_tab *old = atomic_load_explicit(&m->tab, memory_order_relaxed);
  size_t cap = MIN_CAPACITY;
  while (cap < (m->live + 1) * 4)
    cap *= 2;
  gp__ptrmap_tab *t = tab_new(cap);
  if (!t)
    return GP_ENOMEM;
  size_t live = 0;
  if (old) {
    for (size_t i = 0; i <= old->mask; i++) {
      void *v = atomic_load_explicit(&old->vals[i], memory_order_relaxed);
      uintptr_t k = atomic_load_explicit(&old->keys[i], memory_order_relaxed);
      if (!k || !v)
        continue;
      bool found;
      size_t j = probe_insert(t, k, &found);
      atomic_store_explicit(&t->vals[j], v, memory_order_relaxed);
      atomic_store_explicit(&t->keys[j], k, memory_order_relaxed);
      live++;
    }
  }
  if (m->lockfree_readers) {
    t->retired = old; /* readers may still walk it */
  } else {
    t->retired = NULL;
  }
  atomic_store_explicit(&m->tab, t, memory_order_release);
  if (!m->lockfree_readers && old) {
    old->retired = NULL;
    tab_free(old);
  }
  m->used = live;
  m->live = live;
  return 0;
}

/* See ptrmap.h. */
int gp__ptrmap_put(gp__ptrmap *m, const void *key, void *val, void **old) {
  if (!key || !val)
    return GP_EINVAL;
  gp__ptrmap_tab *t = atomic_load_explicit(&m->tab, memory_order_relaxed);
  uintptr_t k = (uintptr_t)key;
  bool found = false;
  size_t i = 0;
  if (t) {
    i = probe_insert(t, k, &found);
    if (found) {
      void *prev = atomic_load_explicit(&t->vals[i], memory_order_relaxed);
      atomic_store_explicit(&t->vals[i], val, memory_order_release);
      if (!prev)
        m->live++;
      if (old)
        *old = prev;
      return 0;
    }
  }
  if (!t || (m->used + 1) * 10 > (t->mask + 1) * 6) {
    int rc = rebuild(m);
    if (rc != 0)
      return rc;
    t = atomic_load_explicit(&m->tab, memory_order_relaxed);
    i = probe_insert(t, k, &found);
  }
  /* Value first, then the key that makes the slot visible to readers. */
  atomic_store_explicit(&t->vals[i], val, memory_order_relaxed);
  atomic_store_explicit(&t->keys[i], k, memory_order_release);
  m->used++;
  m->live++;
  if (old)
    *old = NULL;
  return 0;
}

/* See ptrmap.h. */
void *gp__ptrmap_del(gp__ptrmap *m, const void *key) {
  gp__ptrmap_tab *t = atomic_load_explicit(&m->tab, memory_order_relaxed);
  if (!t || !key)
    return NULL;
  bool found;
  size_t i = probe_insert(t, (uintptr_t)key, &found);
  if (!found)
    return NULL;
  void *prev = atomic_load_explicit(&t->vals[i], memory_order_relaxed);
  if (prev) {
    atomic_store_explicit(&t->vals[i], NULL, memory_order_release);
    m->live--;
  }
  return prev;
}

/* See ptrmap.h. */
void gp__ptrmap_each(gp__ptrmap *m,
                     void (*fn)(void *user, const void *key, void *val),
                     void *user) {
  /* Acquire, as gp__ptrmap_get(): it may run on a thread that holds none
   * of the writers' locks (a flush on the HUD's or the collector's). */
  gp__ptrmap_tab *t = atomic_load_explicit(&m->tab, memory_order_acquire);
  if (!t)
    return;
  for (size_t i = 0; i <= t->mask; i++) {
    uintptr_t k = atomic_load_explicit(&t->keys[i], memory_order_acquire);
    void *v = atomic_load_explicit(&t->vals[i], memory_order_acquire);
    if (k && v)
      fn(user, (const void *)k, v);
  }
}
