/*
 * area.c - buffer areas (core.h, gp__activity_share_buffers): the shared
 * memory a recorded process takes its buffers from, so that its records
 * outlive a SIGKILL, and the entries that say where the records of the
 * buffers handed over to the collector are until written.
 */
#include <stdlib.h>
#include <unistd.h>

#include "activityInt.h"

/*
 * Buffer areas (core.h, gp__activity_share_buffers). Areas are never
 * unmapped while the process runs, so a buffer from one stays valid after
 * the area was taken back; the areas ever given are remembered (a few: a
 * process and its forked children) to send such buffers back where they
 * came from. A forked child's copy of its parent's area is foreign: never
 * written, never given out, its buffers never released (the parent's free
 * list is the parent's).
 */
#define MAX_AREAS 4
typedef struct area_entry {
  gp__buffer_area a;
  pid_t pid; /* the process the area is for */
} area_entry;
static pthread_mutex_t area_lock = PTHREAD_MUTEX_INITIALIZER;
static area_entry areas[MAX_AREAS]; /* an entry is filled, then counted */
static _Atomic int num_areas;
static _Atomic int cur_area = -1; /* index in areas, -1: none */

static area_entry *area_of(const uint8_t *buf) {
  int n = atomic_load(&num_areas);
  for (int i = 0; i < n; i++)
    if (buf >= areas[i].a.base && buf < areas[i].a.base + areas[i].a.size)
      return &areas[i];
  return NULL;
}

/* See activityInt.h. */
uint64_t gp__area_word(const uint8_t *buf) {
  int i = atomic_load(&cur_area);
  if (i < 0 || !buf || buf < areas[i].a.base ||
      buf >= areas[i].a.base + areas[i].a.size || areas[i].pid != getpid())
    return 0;
  return (uint64_t)(buf - areas[i].a.base) + 1;
}

/* See activityInt.h. */
uint64_t *gp__area_queued(uint64_t word) {
  int i = atomic_load(&cur_area);
  if (i < 0 || word == 0 || areas[i].pid != getpid() || !areas[i].a.queued ||
      !areas[i].a.buf_size)
    return NULL;
  uint64_t k = (word - 1) / areas[i].a.buf_size;
  return k < areas[i].a.nqueued ? areas[i].a.queued[k] : NULL;
}

/* See activityInt.h. */
void gp__area_queued_note(uint64_t word, uint64_t base, uint64_t from,
                          uint64_t to) {
  uint64_t *e = gp__area_queued(word);
  if (!e)
    return;
  /* Word 0 last: a reader trusts an entry whose word 0 is set. */
  __atomic_store_n(&e[0], 0, __ATOMIC_RELEASE);
  __atomic_store_n(&e[1], base, __ATOMIC_RELAXED);
  __atomic_store_n(&e[2], from, __ATOMIC_RELAXED);
  __atomic_store_n(&e[3], to, __ATOMIC_RELAXED);
  __atomic_store_n(&e[0], word, __ATOMIC_RELEASE);
}

/* See activityInt.h. */
bool gp__area_foreign(const uint8_t *buf) {
  area_entry *e = area_of(buf);
  return e && e->pid != getpid();
}

/* See activityInt.h. */
void gp__area_after_fork(void) {
  pthread_mutex_init(&area_lock, NULL);
  int i = atomic_load(&cur_area);
  if (i >= 0 && areas[i].pid != getpid())
    atomic_store(&cur_area, -1);
}

/* See core.h. */
void gp__activity_share_buffers(const gp__buffer_area *area,
                                bool in_fork_child) {
  if (!in_fork_child)
    pthread_mutex_lock(&area_lock);
  if (!area) {
    atomic_store(&cur_area, -1);
  } else {
    int i, n = atomic_load(&num_areas);
    /* The same memory again (a fork child's page where its parent's was):
     * updated in place, while no other thread runs. */
    for (i = 0; i < n; i++)
      if (areas[i].a.base == area->base)
        break;
    if (i < MAX_AREAS) {
      areas[i].a = *area;
      areas[i].pid = getpid();
      if (i == n)
        atomic_store(&num_areas, n + 1);
      atomic_store(&cur_area, i);
    } /* else: no room to remember it; the heap it is */
  }
  if (!in_fork_child)
    pthread_mutex_unlock(&area_lock);
}

/* See activityInt.h. */
gp__delivery *gp__area_delivery(void) {
  int i = atomic_load(&cur_area);
  return i >= 0 && areas[i].pid == getpid() ? areas[i].a.delivery : NULL;
}

/* See activityInt.h. */
uint8_t *gp__area_alloc(size_t size) {
  int i = atomic_load(&cur_area);
  if (i >= 0 && areas[i].pid == getpid() && areas[i].a.alloc)
    return areas[i].a.alloc(size);
  return NULL;
}

/* See activityInt.h. */
bool gp__area_release(uint8_t *buf) {
  area_entry *e = area_of(buf);
  if (!e)
    return false;
  if (e->pid == getpid() && e->a.release)
    e->a.release(buf);
  /* else: the parent's; it is not ours to give back. */
  return true;
}

/* See activityInt.h. */
bool gp__area_holds(const uint8_t *buf) {
  return area_of(buf) != NULL;
}
