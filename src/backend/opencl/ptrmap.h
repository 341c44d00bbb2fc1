/*
 * ptrmap.h - a hash map from pointers (OpenCL handles) to pointers.
 *
 * The interception library looks up the queue and kernel of every enqueue
 * and the events of every wait list. An open-addressing table keyed by the
 * handle's address does that in a few loads. Writers are serialised by the
 * caller (one mutex); readers of a map made with lockfree_readers need no
 * lock at all: slots are published with release stores, a slot's key never
 * changes once set, and a table replaced by a larger one is kept (not
 * freed) because a reader may still be walking it. Such maps are meant for
 * objects that are created rarely (queues, kernels, contexts, devices); a
 * map without lock-free readers frees old tables and suits churn (events).
 *
 * Deleting stores NULL as the value (a tombstone); tombstones are dropped
 * when the table is rebuilt. NULL can therefore not be stored as a value.
 */
#ifndef GPUPERF_OPENCL_PTRMAP_H
#define GPUPERF_OPENCL_PTRMAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gp__ptrmap_tab {
  size_t mask; /* capacity - 1, capacity a power of two */
  _Atomic uintptr_t *keys;
  void *_Atomic *vals;
  struct gp__ptrmap_tab *retired; /* older tables, kept for readers */
} gp__ptrmap_tab;

typedef struct gp__ptrmap {
  gp__ptrmap_tab *_Atomic tab;
  size_t used; /* slots with a key (live or tombstone) */
  size_t live; /* slots with a value */
  bool lockfree_readers;
} gp__ptrmap;

/* Initialises an empty map (no allocation until the first put). */
void gp__ptrmap_init(gp__ptrmap *m, bool lockfree_readers);

/*
 * Returns the value stored for key, or NULL. Lock-free for maps made with
 * lockfree_readers; otherwise the caller holds the writers' lock.
 */
void *gp__ptrmap_get(gp__ptrmap *m, const void *key);

/*
 * Stores val (not NULL) for key and stores the value it replaces (or NULL)
 * in *old if old is not NULL. Caller holds the writers' lock. Returns 0, or
 * GP_ENOMEM (nothing changes) if the table could not grow.
 */
int gp__ptrmap_put(gp__ptrmap *m, const void *key, void *val, void **old);

/* Removes key and returns its value (NULL if absent). Writers' lock. */
void *gp__ptrmap_del(gp__ptrmap *m, const void *key);

/*
 * Calls fn for every live entry, in no particular order. Writers' lock;
 * fn must not change the map.
 */
void gp__ptrmap_each(gp__ptrmap *m,
                     void (*fn)(void *user, const void *key, void *val),
                     void *user);

#endif /* GPUPERF_OPENCL_PTRMAP_H */
