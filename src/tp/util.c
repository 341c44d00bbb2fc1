/*
 * util.c - growable arrays, the 64-bit hash map and the string pool of the
 * trace processor (see util.h).
 */
#include "tp/util.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "tp/spill.h"

#define BIG (64u << 10)
#define PAGE 4096u

#define HUGE (2u << 20)         /* a transparent huge page (x86-64, arm64 4K) */
#define HUGE_FROM (8u << 20)    /* arrays this big are rounded to huge pages */
#define READY_AHEAD (32u << 10) /* pages made present ahead of the writes */

/* The length of the mapping that holds bytes: whole pages, and whole huge
 * pages from HUGE_FROM up, so that every huge-page range of it is whole
 * (the kernel gives a huge page only to a range the mapping covers
 * entirely; a range first touched while it did not stays in small pages).
 * Below HUGE_FROM, the up to 2 MiB a huge page holds beyond the array's
 * end would weigh more than the faults it saves. */
static size_t map_len(size_t bytes) {
  size_t unit = bytes >= HUGE_FROM ? HUGE : PAGE;
  return (bytes + unit - 1) & ~(size_t)(unit - 1);
}

/*
 * Maps len bytes (a multiple of PAGE) at a HUGE boundary. Transparent huge
 * pages are not asked for (MADV_HUGEPAGE): on the VMs we run on, where the
 * kernel gives them only on request, a fresh 2 MiB page cost more than
 * the small pages it stands for, made present ahead of the writes
 * (make_ready): a 228 MB system trace's import spent 4.0 s in the kernel
 * with them and 0.85 s without, for the same 1.05 GB, and bench/tp's GPU
 * import ran at 4.0-4.5 M events/s either way. Where the kernel backs
 * every mapping with them, the alignment lets it. With old (old_len bytes)
 * the pages of old move there (mremap: no copy) and old is gone; without,
 * the new bytes are zero. Returns MAP_FAILED, with old untouched, if the
 * address space is short.
 */
static void *map_huge(size_t len, void *old, size_t old_len) {
  void *moved;
  if (old && gp__tp_spill_remap(old, len, &moved))
    return moved;
  if (!old && gp__tp_spill_on())
    return gp__tp_spill_map(len);
  size_t span = len + HUGE;
  if (span < len)
    return MAP_FAILED;
  char *r = mmap(NULL, span, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED)
    return MAP_FAILED;
  uintptr_t a = ((uintptr_t)r + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
  if (a > (uintptr_t)r)
    munmap(r, a - (uintptr_t)r);
  if ((uintptr_t)r + span > a + len)
    munmap((void *)(a + len), (uintptr_t)r + span - (a + len));
  void *p;
  if (old)
    p = mremap(old, old_len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)a);
  else
    p = mmap((void *)a, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) {
    munmap((void *)a, len);
    return MAP_FAILED;
  }
  return p;
}

/*
 * Makes the pages of a mapped array present from element *ready up to
 * READY_AHEAD bytes beyond element want, and moves *ready there. Where
 * the kernel cannot (before Linux 5.14, or short of memory), the pages
 * come as the writes fault them in, as they would have anyway.
 */
static void make_ready(char *v, size_t cap, size_t *ready, size_t want,
                       size_t elem) {
  size_t to = want + READY_AHEAD / elem;
  if (to > cap)
    to = cap;
  if (to <= *ready)
    return;
  gp__tp_spill_poll();
  /* Spilled arrays are not made present ahead: a big reservation (a
   * hash index rebuilt) would be resident all at once. */
  if (gp__tp_spill_on()) {
    *ready = to;
    return;
  }
  uintptr_t a = ((uintptr_t)v + *ready * elem) & ~(uintptr_t)(PAGE - 1);
  uintptr_t b = ((uintptr_t)v + to * elem + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  uintptr_t end = (uintptr_t)v + map_len(cap * elem);
  if (b > end)
    b = end;
#ifdef MADV_POPULATE_WRITE
  if (b > a)
    madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#endif
  *ready = to;
}

/* See util.h. */
bool gp__tp_vec_grow(void **v, size_t *cap, size_t *ready, size_t n,
                     size_t more, size_t elem) {
  size_t want = n + more;
  if (want < n)
    return false;
  if (want <= *cap) { /* only pages to make present */
    if (*cap * elem < BIG)
      *ready = *cap;
    else
      make_ready(*v, *cap, ready, want, elem);
    return true;
  }
  size_t ncap =
      *cap ? *cap
           : 2; /* many vectors hold one element: one per queue or track */
  while (ncap < want) {
    size_t next = ncap + ncap / 2 + 16;
    if (next < ncap)
      return false;
    ncap = next;
  }
  if (ncap > SIZE_MAX / elem)
    return false;
  size_t old = *cap * elem, bytes = ncap * elem;
  /* The mapping's slack is capacity too, where counting it keeps what
   * cap * elem says: where the array lives (BIG) and the mapping's size. */
  size_t rcap = map_len(bytes) / elem;
  if (bytes >= BIG && rcap * elem >= BIG &&
      map_len(rcap * elem) == map_len(bytes))
    ncap = rcap;
  void *p;
  size_t nready; /* the elements of the new allocation already present */
  if (bytes < BIG) {
    p = realloc(*v, bytes);
    if (!p)
      return false;
    nready = ncap;
  } else if (old >= BIG) {
    /* In place where the addresses after it are free (keeps the huge
     * pages and their alignment), else moved to a new aligned range. A
     * spilled array grows with its file. */
    if (!gp__tp_spill_remap(*v, map_len(bytes), &p))
      p = mremap(*v, map_len(old), map_len(bytes), 0);
    if (p == MAP_FAILED) {
      p = map_huge(map_len(bytes), *v, map_len(old));
      if (p == MAP_FAILED)
        return false;
    }
    nready = *ready; /* the pages moved with the mapping */
  } else {
    p = map_huge(map_len(bytes), NULL, 0);
    if (p == MAP_FAILED)
      return false;
    nready = 0; /* present before the copy: one call for all of it */
    make_ready(p, ncap, &nready, want, elem);
    if (n)
      memcpy(p, *v, n * elem);
    free(*v);
  }
  *v = p;
  *cap = ncap;
  if (bytes >= BIG)
    make_ready(p, ncap, &nready, want, elem);
  *ready = nready;
  return true;
}

/* See util.h. */
void gp__tp_vec_release(void *v, size_t cap, size_t elem) {
  if (!v)
    return;
  if (cap * elem >= BIG) {
    if (!gp__tp_spill_unmap(v))
      munmap(v, map_len(cap * elem));
  } else {
    free(v);
  }
}

/* See util.h. */
void *gp__tp_array_alloc(size_t n, size_t elem) {
  if (n == 0)
    n = 1;
  if (elem && n > SIZE_MAX / elem)
    return NULL;
  size_t bytes = n * elem;
  if (bytes < BIG)
    return malloc(bytes);
  void *p = map_huge(map_len(bytes), NULL, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* See util.h. */
void gp__tp_array_free(void *p, size_t n, size_t elem) {
  if (!p)
    return;
  size_t bytes = (n ? n : 1) * elem;
  if (bytes < BIG)
    free(p);
  else if (!gp__tp_spill_unmap(p))
    munmap(p, map_len(bytes));
}

/* See util.h. */
void gp__tp_vec_small_pages(void *v, size_t cap, size_t elem) {
#ifdef MADV_NOHUGEPAGE
  if (v && cap * elem >= BIG)
    madvise(v, map_len(cap * elem), MADV_NOHUGEPAGE);
#else
  (void)v;
  (void)cap;
  (void)elem;
#endif
}

/* See util.h. */
void gp__tp_vec_drop(void *v, size_t cap, size_t elem, size_t from, size_t to) {
  if (!v || cap * elem < BIG || to > cap || from >= to)
    return;
  uintptr_t a =
      ((uintptr_t)v + from * elem + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  uintptr_t b = ((uintptr_t)v + to * elem) & ~(uintptr_t)(PAGE - 1);
  if (b > a && !gp__tp_spill_punch(v, a - (uintptr_t)v, b - a))
    madvise((void *)a, b - a, MADV_DONTNEED);
}

/* See util.h. */
uint64_t gp__tp_hash_bytes(const void *data, size_t n, uint64_t seed) {
  const uint8_t *p = data;
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = gp__tp_mix64(h ^ w) + 0x9e3779b97f4a7c15ull;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++)
    w |= (uint64_t)p[i] << (8 * i);
  return gp__tp_mix64(h ^ w ^ 0x5bd1e995u);
}

/* bytes of zeroed memory for a hash map's or the string pool's arrays:
 * a spilled mapping while spilling (from BIG up), else the C heap. */
static void *big_calloc(size_t bytes) {
  if (bytes >= BIG && gp__tp_spill_on()) {
    void *p = gp__tp_spill_map(map_len(bytes));
    return p == MAP_FAILED ? NULL : p;
  }
  return calloc(1, bytes ? bytes : 1);
}

static void big_free(void *p) {
  if (p && !gp__tp_spill_unmap(p))
    free(p);
}

/* big_calloc's realloc: old_bytes of p kept, the rest undefined. */
static void *big_realloc(void *p, size_t old_bytes, size_t bytes) {
  void *q;
  if (p && gp__tp_spill_remap(p, map_len(bytes), &q))
    return q == MAP_FAILED ? NULL : q;
  if (bytes < BIG || !gp__tp_spill_on())
    return realloc(p, bytes);
  if (!(q = big_calloc(bytes)))
    return NULL;
  if (old_bytes)
    memcpy(q, p, old_bytes);
  free(p);
  return q;
}

/* ------------------------------------------------------------------ */
/* Hash map                                                              */

/* A map's put of the key that marks an empty slot (0, or (0, 0)), kept
 * beside the slots: has0, val0 and the map's count n. */
static uint64_t *put_zero(bool *has0, uint64_t *val0, size_t *n, uint64_t init,
                          bool *inserted) {
  if (inserted)
    *inserted = !*has0;
  if (!*has0) {
    *has0 = true;
    *val0 = init;
    (*n)++;
  }
  return val0;
}

/* Where key (not 0) is, or the empty slot where it would go. */
static size_t map_slot(const gp__tp_map *m, uint64_t key) {
  size_t mask = m->cap - 1;
  size_t i = (size_t)gp__tp_mix64(key) & mask;
  while (m->slots[i].key && m->slots[i].key != key)
    i = (i + 1) & mask;
  return i;
}

/* See util.h. */
uint64_t *gp__tp_map_get(const gp__tp_map *m, uint64_t key) {
  gp__tp_spill_poll();
  if (!key)
    return m->has0 ? (uint64_t *)(uintptr_t)&m->val0 : NULL;
  if (!m->cap)
    return NULL;
  size_t i = map_slot(m, key);
  return m->slots[i].key ? &m->slots[i].val : NULL;
}

static bool map_rehash(gp__tp_map *m, size_t ncap) {
  gp__tp_map n = *m;
  n.slots = big_calloc(ncap * sizeof(*n.slots));
  if (!n.slots)
    return false;
  n.cap = ncap;
  for (size_t i = 0; i < m->cap; i++) {
    if (i % 256 == 0)
      gp__tp_spill_poll();
    if (m->slots[i].key)
      n.slots[map_slot(&n, m->slots[i].key)] = m->slots[i];
  }
  big_free(m->slots);
  *m = n;
  return true;
}

/* See util.h. */
uint64_t *gp__tp_map_put(gp__tp_map *m, uint64_t key, uint64_t init,
                         bool *inserted) {
  gp__tp_spill_poll();
  if (!key)
    return put_zero(&m->has0, &m->val0, &m->n, init, inserted);
  if ((m->n + 1) * 4 > m->cap * 3 && !map_rehash(m, m->cap ? m->cap * 2 : 64))
    return NULL;
  size_t i = map_slot(m, key);
  if (inserted)
    *inserted = !m->slots[i].key;
  if (!m->slots[i].key) {
    m->slots[i].key = key;
    m->slots[i].val = init;
    m->n++;
  }
  return &m->slots[i].val;
}

/* See util.h. */
void gp__tp_map_free(gp__tp_map *m) {
  big_free(m->slots);
  memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* Hash map with two-word keys                                           */

static bool used2(const gp__tp_mslot2 *s) {
  return s->k1 || s->k2;
}

static size_t map2_slot(const gp__tp_map2 *m, uint64_t k1, uint64_t k2) {
  size_t mask = m->cap - 1;
  size_t i =
      (size_t)gp__tp_mix64(k1 ^ gp__tp_mix64(k2 + 0x632be59bd9b4e019ull)) &
      mask;
  while (used2(&m->slots[i]) && (m->slots[i].k1 != k1 || m->slots[i].k2 != k2))
    i = (i + 1) & mask;
  return i;
}

/* See util.h. */
uint64_t *gp__tp_map2_get(const gp__tp_map2 *m, uint64_t k1, uint64_t k2) {
  gp__tp_spill_poll();
  if (!k1 && !k2)
    return m->has0 ? (uint64_t *)(uintptr_t)&m->val0 : NULL;
  if (!m->cap)
    return NULL;
  size_t i = map2_slot(m, k1, k2);
  return used2(&m->slots[i]) ? &m->slots[i].val : NULL;
}

/* See util.h. */
void gp__tp_map2_free(gp__tp_map2 *m) {
  big_free(m->slots);
  memset(m, 0, sizeof(*m));
}

static bool map2_rehash(gp__tp_map2 *m, size_t ncap) {
  gp__tp_map2 n = *m;
  n.slots = big_calloc(ncap * sizeof(*n.slots));
  if (!n.slots)
    return false;
  n.cap = ncap;
  for (size_t i = 0; i < m->cap; i++) {
    if (i % 256 == 0)
      gp__tp_spill_poll();
    if (used2(&m->slots[i]))
      n.slots[map2_slot(&n, m->slots[i].k1, m->slots[i].k2)] = m->slots[i];
  }
  big_free(m->slots);
  *m = n;
  return true;
}

/* See util.h. */
uint64_t *gp__tp_map2_put(gp__tp_map2 *m, uint64_t k1, uint64_t k2,
                          uint64_t init, bool *inserted) {
  gp__tp_spill_poll();
  if (!k1 && !k2)
    return put_zero(&m->has0, &m->val0, &m->n, init, inserted);
  if ((m->n + 1) * 4 > m->cap * 3 && !map2_rehash(m, m->cap ? m->cap * 2 : 64))
    return NULL;
  size_t i = map2_slot(m, k1, k2);
  if (inserted)
    *inserted = !used2(&m->slots[i]);
  if (!used2(&m->slots[i])) {
    m->slots[i].k1 = k1;
    m->slots[i].k2 = k2;
    m->slots[i].val = init;
    m->n++;
  }
  return &m->slots[i].val;
}

/* ------------------------------------------------------------------ */
/* String pool                                                           */

static uint32_t str_hash(const char *s, size_t n) {
  return (uint32_t)gp__tp_hash_bytes(s, n, 0x243f6a8885a308d3ull);
}

static size_t str_slot(const gp__tp_strpool *p, const char *s, size_t n,
                       uint32_t h) {
  size_t mask = p->nslots - 1;
  size_t i = h & mask;
  for (;;) {
    uint32_t id = p->slots[i];
    if (id == GP_TP_NONE)
      return i;
    if (p->len.v[id] == n && memcmp(p->arena + p->off.v[id], s, n) == 0)
      return i;
    i = (i + 1) & mask;
  }
}

static bool str_reindex(gp__tp_strpool *p, size_t nslots) {
  uint32_t *slots = big_calloc(nslots * sizeof(uint32_t));
  if (!slots)
    return false;
  memset(slots, 0xff, nslots * sizeof(uint32_t));
  big_free(p->slots);
  p->slots = slots;
  p->nslots = nslots;
  for (uint32_t id = 0; id < p->off.n; id++) {
    const char *s = p->arena + p->off.v[id];
    size_t i = str_slot(p, s, p->len.v[id], str_hash(s, p->len.v[id]));
    p->slots[i] = id;
  }
  return true;
}

/* See util.h. */
uint32_t gp__tp_str_find(const gp__tp_strpool *p, const char *s, size_t n) {
  if (!p->nslots)
    return GP_TP_NONE;
  return p->slots[str_slot(p, s, n, str_hash(s, n))];
}

/* See util.h. */
uint32_t gp__tp_str_intern(gp__tp_strpool *p, const char *s, size_t n) {
  if ((p->off.n + 1) * 2 > p->nslots &&
      !str_reindex(p, p->nslots ? p->nslots * 2 : 1024))
    return GP_TP_NONE;
  uint32_t h = str_hash(s, n);
  size_t slot = str_slot(p, s, n, h);
  if (p->slots[slot] != GP_TP_NONE)
    return p->slots[slot];
  if (n >= UINT32_MAX - p->used || p->off.n >= GP_TP_NONE - 1)
    return GP_TP_NONE;
  if (p->used + n + 1 > p->cap) {
    size_t ncap = p->cap ? p->cap : 65536;
    while (ncap < p->used + n + 1)
      ncap *= 2;
    char *a = big_realloc(p->arena, p->used, ncap);
    if (!a)
      return GP_TP_NONE;
    p->arena = a;
    p->cap = ncap;
  }
  if (!gp__tp_vec_reserve(&p->off, 1) || !gp__tp_vec_reserve(&p->len, 1))
    return GP_TP_NONE;
  uint32_t id = (uint32_t)p->off.n;
  memcpy(p->arena + p->used, s, n);
  p->arena[p->used + n] = '\0';
  p->off.v[p->off.n++] = (uint32_t)p->used;
  p->len.v[p->len.n++] = (uint32_t)n;
  p->used += n + 1;
  p->slots[slot] = id;
  return id;
}

/* See util.h. */
void gp__tp_strpool_free(gp__tp_strpool *p) {
  big_free(p->arena);
  gp__tp_vec_free(&p->off);
  gp__tp_vec_free(&p->len);
  big_free(p->slots);
  memset(p, 0, sizeof(*p));
}
