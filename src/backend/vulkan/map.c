/*
 * map.c - an open-addressing hash map from Vulkan handles (64-bit, never
 * 0) to pointers, for the layer's tables of command buffers, queues and
 * semaphores. Linear probing, deletion by backward shift, doubling at half
 * full: every operation is O(1) expected. Callers lock.
 */
#include <stdlib.h>

#include "vkInt.h"

static size_t slot(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

/* See vkInt.h. */
void *gp__vk_map_get(const gp__vk_map *m, uint64_t key) {
  if (!m->cap || !key)
    return NULL;
  for (size_t i = slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key)
      return m->vals[i];
    if (!m->keys[i])
      return NULL;
  }
}

static int grow(gp__vk_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  uint64_t *keys = calloc(cap, sizeof(*keys));
  void **vals = calloc(cap, sizeof(*vals));
  if (!keys || !vals) {
    free(keys);
    free(vals);
    return GP_ENOMEM;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i])
      continue;
    size_t j = slot(m->keys[i], cap);
    while (keys[j])
      j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = keys;
  m->vals = vals;
  m->cap = cap;
  return 0;
}

/* See vkInt.h. */
int gp__vk_map_put(gp__vk_map *m, uint64_t key, void *val) {
  if (!key)
    return GP_EINVAL;
  if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
    return GP_ENOMEM;
  size_t i = slot(key, m->cap);
  while (m->keys[i] && m->keys[i] != key)
    i = (i + 1) & (m->cap - 1);
  if (!m->keys[i])
    m->n++;
  m->keys[i] = key;
  m->vals[i] = val;
  return 0;
}

/* See vkInt.h. */
void *gp__vk_map_del(gp__vk_map *m, uint64_t key) {
  if (!m->cap || !key)
    return NULL;
  size_t i = slot(key, m->cap);
  while (m->keys[i] != key) {
    if (!m->keys[i])
      return NULL;
    i = (i + 1) & (m->cap - 1);
  }
  void *val = m->vals[i];
  m->n--;
  /* Shift back the entries of the probe run that follows. */
  for (size_t j = (i + 1) & (m->cap - 1); m->keys[j];
       j = (j + 1) & (m->cap - 1)) {
    size_t home = slot(m->keys[j], m->cap);
    bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      m->keys[i] = m->keys[j];
      m->vals[i] = m->vals[j];
      i = j;
    }
  }
  m->keys[i] = 0;
  m->vals[i] = NULL;
  return val;
}

/* See vkInt.h. */
void gp__vk_map_fini(gp__vk_map *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->n = 0;
}
