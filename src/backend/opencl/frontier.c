/*
 * frontier.c - how far back an OpenCL device's records are complete (the
 * frontier of core.h, gp__frontier_fn), so that its derived `Utilization`
 * windows are final only once every command that ran in them is written,
 * however late the driver tells of them (PoCL: at clFinish, seconds after).
 *
 * A command's GPU work starts after the driver call that enqueues it
 * began, and until its record is written the command is in one of three
 * places: an enqueue in progress (marked in the core with the call's
 * start, gp__activity_submitting(), from before the driver call until the
 * command is pending), a pending list or a queue's reap list or ring
 * (each entry, and each ring slot, holds the call's start, host_start), or
 * being written (counted in its list's `finishing`). The core reads the marks;
 * the function here gives the least start on the lists. While commands are
 * being written their times are unknown for a moment: the last answer is given
 * again, which is still true (a frontier once found stays a frontier).
 */
#include "oclInt.h"

#define MAX_FRONTIER_DEVICES 64 /* the core registry's bound */

static _Atomic uint64_t last[MAX_FRONTIER_DEVICES];

static uint64_t frontier(void *user, uint32_t device_id) {
  (void)user;
  if (device_id >= MAX_FRONTIER_DEVICES)
    return 0; /* defensive: ids come from the registry */
  bool writing = false;
  uint64_t f = gp__ocl_pending_oldest(device_id, &writing);
  if (writing)
    return atomic_load(&last[device_id]);
  /* UINT64_MAX (nothing pending) is not kept: the core bounds it by the
   * time it asked, which a later answer must not skip past. */
  if (f != UINT64_MAX)
    atomic_store(&last[device_id], f);
  return f;
}

/* See oclInt.h. */
void gp__ocl_frontier_install(uint32_t device_id) {
  GP_CORE->device_set_frontier(device_id, frontier, NULL);
}
