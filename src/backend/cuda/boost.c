/*
 * boost.c - gp_activity_get_auto_boost_state for CUDA contexts: CUPTI's
 * cuptiGetAutoBoostState, which wants the CUcontext.
 *
 * The core asks a device's backend with our context id; CUPTI wants the
 * CUcontext. The resource callbacks (callbacks.c) note each live
 * context's handle here when it is made and forget it when it goes, and
 * the query looks it up. The table is small and linear: programs have a
 * handful of contexts. A context made while the table is full gets no
 * answer (GP_ENOENT, as a context that is not live).
 */
#include <pthread.h>

#include "cudaInt.h"

#define BOOST_CONTEXTS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  uint32_t id; /* ours; 0: free */
  CUcontext handle;
} live[BOOST_CONTEXTS];

/* The core's query for a CUDA device (gp__auto_boost_fn). */
static int auto_boost(void *user, uint32_t device_id, uint32_t context_id,
                      gp_auto_boost_state *state) {
  (void)user, (void)device_id;
  CUcontext c = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < BOOST_CONTEXTS && !c; i++)
    if (live[i].id == context_id)
      c = live[i].handle;
  pthread_mutex_unlock(&lock);
  if (!c)
    return GP_ENOENT;
  CUpti_ActivityAutoBoostState s;
  CUptiResult r = cuptiGetAutoBoostState(c, &s);
  if (r == CUPTI_ERROR_NOT_SUPPORTED)
    return GP_ENOTSUP;
  if (r != CUPTI_SUCCESS)
    return GP_EIO;
  state->enabled = s.enabled;
  state->pid = s.pid;
  return 0;
}

/* See cudaInt.h. */
void gp__cuda_boost_context(uint32_t context_id, uint32_t device_id,
                            CUcontext handle) {
  if (!context_id)
    return;
  pthread_mutex_lock(&lock);
  /* Its own slot if it has one, else the first free one. */
  size_t slot = BOOST_CONTEXTS;
  for (size_t i = 0; i < BOOST_CONTEXTS; i++) {
    if (live[i].id == context_id) {
      slot = i;
      break;
    }
    if (!live[i].id && slot == BOOST_CONTEXTS)
      slot = i;
  }
  if (slot < BOOST_CONTEXTS && (handle || live[slot].id == context_id)) {
    live[slot].id = handle ? context_id : 0;
    live[slot].handle = handle;
  }
  pthread_mutex_unlock(&lock);
  if (handle)
    GP_CORE->device_set_auto_boost(device_id, auto_boost, NULL);
}
