/*
 * frontier.c - how far back an OpenCL device's records are complete (the
 * frontier of core.h, gp__frontier_fn), so that its derived `Utilization`
 * windows are final only once every command that ran in them is written,
 * however late the driver tells of them (PoCL: at clFinish, seconds after).
 *
 * A command's GPU work starts after the driver call that enqueues it
 * began, and until its record is written the command is in one of three
 * places: an enqueue in progress (its thread's word below holds the call's
 * start), a pending list or a queue's reap list (each entry holds the
 * call's start, host_start), or being written (counted in its list's
 * `finishing`). The frontier is the least of those starts and of the time
 * the scan began, read in that order: an enqueue that began after the
 * scan's start does its driver call after it too. The words are stored
 * with release before the driver call, whose submission of the work is a
 * later store of the same thread, so the work cannot start before its
 * word is visible. When commands are being written (finishing > 0) their
 * times are unknown for a moment: the last frontier found is given again,
 * which is still true.
 */
#include <stdlib.h>

#include "oclInt.h"

/* One thread's enqueue in progress; on a cache line of its own, written
 * by its thread only (two stores per enqueue). */
typedef struct enq_word {
  _Atomic uint64_t since; /* the call's start, 0: none in progress */
  _Atomic int used;       /* owned by a live thread */
  struct enq_word *_Atomic next;
} __attribute__((aligned(64))) enq_word;

static enq_word *_Atomic words;
static GP_TLS enq_word *mine;
static pthread_key_t word_key;
static pthread_once_t word_once = PTHREAD_ONCE_INIT;

static void word_release(void *w) {
  enq_word *e = w;
  atomic_store_explicit(&e->since, 0, memory_order_release);
  atomic_store_explicit(&e->used, 0, memory_order_release);
}

static void word_init(void) {
  pthread_key_create(&word_key, word_release);
}

/* The calling thread's word (a free one reused, or a new one), or NULL
 * when out of memory. Words are never freed: scans walk them unlocked. */
static enq_word *word_attach(void) {
  pthread_once(&word_once, word_init);
  enq_word *w;
  for (w = atomic_load(&words); w; w = atomic_load(&w->next)) {
    int expect = 0;
    if (atomic_compare_exchange_strong(&w->used, &expect, 1))
      break;
  }
  if (!w) {
    w = aligned_alloc(64, sizeof(*w));
    if (!w)
      return NULL;
    atomic_init(&w->since, 0);
    atomic_init(&w->used, 1);
    enq_word *head = atomic_load(&words);
    do {
      atomic_store(&w->next, head);
    } while (!atomic_compare_exchange_weak(&words, &head, w));
  }
  mine = w;
  pthread_setspecific(word_key, w);
  return w;
}

/* See oclInt.h. */
void gp__ocl_enqueue_mark(uint64_t start) {
  enq_word *w = mine;
  if (GP_UNLIKELY(!w) && (start == 0 || !(w = word_attach())))
    return;
  atomic_store_explicit(&w->since, start, memory_order_release);
}

/* The devices' last frontiers, given again while commands are written.
 * Any frontier once found stays true, so the order of two scans' stores
 * does not matter. */
#define MAX_FRONTIER_DEVICES 64 /* the core registry's bound */
static _Atomic uint64_t last[MAX_FRONTIER_DEVICES];

static uint64_t frontier(void *user, uint32_t device_id) {
  (void)user;
  if (device_id >= MAX_FRONTIER_DEVICES)
    return 0; /* defensive: ids come from the registry */
  uint64_t f = gp_get_timestamp();
  for (enq_word *w = atomic_load(&words); w; w = atomic_load(&w->next)) {
    uint64_t s = atomic_load_explicit(&w->since, memory_order_acquire);
    if (s && s < f)
      f = s;
  }
  bool writing = false;
  uint64_t oldest = gp__ocl_pending_oldest(device_id, &writing);
  if (oldest < f)
    f = oldest;
  if (writing)
    return atomic_load(&last[device_id]);
  atomic_store(&last[device_id], f);
  return f;
}

/* See oclInt.h. */
void gp__ocl_frontier_install(uint32_t device_id) {
  if (GP_CORE->size >= offsetof(gp_backend_ops, device_set_frontier) +
                           sizeof(GP_CORE->device_set_frontier))
    GP_CORE->device_set_frontier(device_id, frontier, NULL);
}
