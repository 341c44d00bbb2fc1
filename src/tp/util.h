/*
 * util.h - the containers the trace processor is built from: growable
 * arrays, an open-addressing hash map from 64-bit keys to 64-bit values,
 * and a string pool that gives every distinct string a dense 32-bit id.
 *
 * They exist because the importer keeps millions of rows in columnar
 * arrays (a counter sample costs 20 bytes, not a SQLite row) and interns
 * every name once. None of them is thread-safe; one import owns them.
 * Memory failures are reported by return value (false / GP_ENOMEM) and
 * leave the container as it was.
 */
#ifndef GPUPERF_TP_UTIL_H
#define GPUPERF_TP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The "no value" of 32-bit ids and string ids. */
#define GP_TP_NONE UINT32_MAX

/* Wrapping arithmetic on int64: traces are untrusted input, and signed
 * overflow must not be undefined behaviour. */
static inline int64_t gp__tp_wadd(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t gp__tp_wsub(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t gp__tp_wmul(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Saturating arithmetic on int64: ends of intervals (ts + dur) and
 * spans (end - start) clamp to INT64_MIN / INT64_MAX instead of wrapping
 * to the other side of the time line. */
static inline int64_t gp__tp_sadd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
static inline int64_t gp__tp_ssub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* ------------------------------------------------------------------ */
/* Growable arrays                                                       */

/*
 * A typed growable array: GP_TP_VEC(int64_t) ts; zero-initialised is empty.
 * cap is what the allocation holds; ready (<= cap) is what can be written
 * without a system call: all of it for arrays in the C heap, the part
 * whose pages are already there for arrays in their own mappings (see
 * gp__tp_vec_grow). Code that replaces v or cap by hand sets ready to 0.
 */
#define GP_TP_VEC(T)                                                           \
  struct {                                                                     \
    T *v;                                                                      \
    size_t n, cap, ready;                                                      \
  }

/*
 * Makes room for `more` elements of `elem` bytes after the n in use, and
 * sets *ready to how many elements can be written without a page fault.
 * Returns false (nothing changed) if memory runs out. Arrays of 64 KiB
 * or more live in their own mappings, which grow by remapping (no copy,
 * and no page touched twice: copies into fresh pages of the C heap were
 * half the importer's page faults); from 8 MiB they are whole huge pages
 * at a huge-page boundary, which transparent huge pages can back. The
 * pages of a mapping are made present for the `more` elements and 32 KiB
 * beyond (so reserve only what is about to be written), in one system
 * call each time: a page fault per 4 KiB page was a fifth of
 * an import's time on the VMs we run on, and asking for the pages in
 * bulk costs about half as much as faulting them in one by one.
 */
bool gp__tp_vec_grow(void **v, size_t *cap, size_t *ready, size_t n,
                     size_t more, size_t elem);

/* Frees what gp__tp_vec_grow allocated (cap elements of elem bytes). */
void gp__tp_vec_release(void *v, size_t cap, size_t elem);

/*
 * Gives the whole pages of elements [from, to) of an array gp__tp_vec_grow
 * allocated (cap elements of elem bytes) back to the system, for arrays
 * read once front to back: those elements read as zero afterwards. Arrays
 * under 64 KiB (in the C heap) are left as they are.
 */
void gp__tp_vec_drop(void *v, size_t cap, size_t elem, size_t from, size_t to);

/*
 * Asks that the pages of an array gp__tp_vec_grow allocated (cap elements
 * of elem bytes) not yet touched be small ones: for an array filled while
 * another is given back piece by piece (the sort's merge), where a huge
 * page committed ahead of the writes would be held twice at the peak.
 */
void gp__tp_vec_small_pages(void *v, size_t cap, size_t elem);

/*
 * An array of n elements of elem bytes whose size is known up front (a
 * query's or an import's scratch arrays): from 64 KiB in its own mapping
 * at a huge-page boundary, as gp__tp_vec_grow's, so that transparent huge
 * pages back it (a fresh 4 KiB page costs 12-40 us on the VMs we run on,
 * a 2 MiB one what about one small page does); smaller ones in the C
 * heap. Contents undefined. NULL if memory runs out (or n * elem
 * overflows). Freed with gp__tp_array_free() with the same n and elem.
 * It is also what a vec of cap n holds: it can be a GP_TP_VEC's v, with
 * cap = n and ready = 0, and go with gp__tp_vec_free.
 */
void *gp__tp_array_alloc(size_t n, size_t elem);

/* Frees what gp__tp_array_alloc(n, elem) returned (NULL: nothing). */
void gp__tp_array_free(void *p, size_t n, size_t elem);

#define gp__tp_vec_reserve(vec, more)                                          \
  ((vec)->n + (more) <= (vec)->ready ||                                        \
   gp__tp_vec_grow((void **)&(vec)->v, &(vec)->cap, &(vec)->ready, (vec)->n,   \
                   (more), sizeof(*(vec)->v)))

/* Appends x; evaluates to false if memory ran out. */
#define gp__tp_vec_push(vec, x)                                                \
  (gp__tp_vec_reserve(vec, 1) ? ((vec)->v[(vec)->n++] = (x), true) : false)

#define gp__tp_vec_free(vec)                                                   \
  do {                                                                         \
    gp__tp_vec_release((vec)->v, (vec)->cap, sizeof(*(vec)->v));               \
    (vec)->v = NULL;                                                           \
    (vec)->n = (vec)->cap = (vec)->ready = 0;                                  \
  } while (0)

/* ------------------------------------------------------------------ */
/* Hashing                                                               */

static inline uint64_t gp__tp_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

/* A 64-bit hash of n bytes (seeded, so it can be chained). */
uint64_t gp__tp_hash_bytes(const void *data, size_t n, uint64_t seed);

/* ------------------------------------------------------------------ */
/* Hash map: uint64 key -> uint64 value                                  */

/* A slot holds its key and value together, so that a probe reads one
 * place (one cache line; one page, where the map is spilled): key 0 marks
 * an empty slot, and the key 0 itself is kept beside the slots. */
typedef struct gp__tp_mslot {
  uint64_t key, val;
} gp__tp_mslot;

typedef struct gp__tp_map {
  gp__tp_mslot *slots;
  size_t cap; /* power of two, or 0 */
  size_t n;   /* keys, the key 0 included */
  bool has0;  /* the key 0 is in, with value val0 */
  uint64_t val0;
} gp__tp_map;

/* Returns a pointer to the value of key, or NULL if absent. */
uint64_t *gp__tp_map_get(const gp__tp_map *m, uint64_t key);

/*
 * Finds key, inserting it with value `init` if absent. *inserted (may be
 * NULL) says which. Returns a pointer to the value (valid until the next
 * insertion), or NULL if memory ran out (nothing inserted).
 */
uint64_t *gp__tp_map_put(gp__tp_map *m, uint64_t key, uint64_t init,
                         bool *inserted);

void gp__tp_map_free(gp__tp_map *m);

/* ------------------------------------------------------------------ */
/* Hash map: (uint64, uint64) key -> uint64 value                        */

/* As gp__tp_map: the key (0, 0) marks an empty slot, and is kept beside. */
typedef struct gp__tp_mslot2 {
  uint64_t k1, k2, val;
} gp__tp_mslot2;

typedef struct gp__tp_map2 {
  gp__tp_mslot2 *slots;
  size_t cap, n;
  bool has0;
  uint64_t val0;
} gp__tp_map2;

uint64_t *gp__tp_map2_get(const gp__tp_map2 *m, uint64_t k1, uint64_t k2);
uint64_t *gp__tp_map2_put(gp__tp_map2 *m, uint64_t k1, uint64_t k2,
                          uint64_t init, bool *inserted);
void gp__tp_map2_free(gp__tp_map2 *m);

/* ------------------------------------------------------------------ */
/* String pool                                                           */

typedef struct gp__tp_strpool {
  char *arena;             /* NUL-terminated strings, back to back */
  size_t used, cap;        /* bytes of arena */
  GP_TP_VEC(uint32_t) off; /* id -> offset in arena */
  GP_TP_VEC(uint32_t) len; /* id -> length */
  uint32_t *slots;         /* hash index of ids, GP_TP_NONE = empty */
  size_t nslots;           /* power of two */
} gp__tp_strpool;

/*
 * Interns s[0..n) (it may contain no NUL) and returns its id, or
 * GP_TP_NONE if memory runs out or the pool passes 4 GiB.
 */
uint32_t gp__tp_str_intern(gp__tp_strpool *p, const char *s, size_t n);

static inline uint32_t gp__tp_str_intern_c(gp__tp_strpool *p, const char *s) {
  return gp__tp_str_intern(p, s, strlen(s));
}

/* The string of id (NUL-terminated; owned by the pool), NULL for NONE. */
static inline const char *gp__tp_str(const gp__tp_strpool *p, uint32_t id) {
  return id == GP_TP_NONE ? NULL : p->arena + p->off.v[id];
}

static inline uint32_t gp__tp_str_len(const gp__tp_strpool *p, uint32_t id) {
  return id == GP_TP_NONE ? 0 : p->len.v[id];
}

/* Looks s up without interning it; GP_TP_NONE if it was never interned. */
uint32_t gp__tp_str_find(const gp__tp_strpool *p, const char *s, size_t n);

void gp__tp_strpool_free(gp__tp_strpool *p);

#endif /* GPUPERF_TP_UTIL_H */
