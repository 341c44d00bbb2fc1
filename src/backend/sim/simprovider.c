/*
 * simprovider.c - the simulated GPUs as a counter provider: the hooks the
 * counters subsystem calls for perfmons (reading through the fence, the
 * global perfmon), monitors (binding a perfmon to a context) and sampling
 * (starting and stopping a device's sampler).
 *
 * Every hook takes the simulator lock, unless the calling thread already
 * holds it.
 */
#include <stdlib.h>
#include <string.h>

#include "simInt.h"

static bool lock_unless_held(void) {
  if (gp__sim_locked)
    return false;
  gp__sim_lock();
  return true;
}

/* The simulator device with this gpuperf id, or NULL (also once the
 * simulator was shut down). Lock held. */
sim_device *gp__sim_device_by_id(uint32_t device_id) {
  if (!gp__sim.initialised)
    return NULL;
  for (uint32_t i = 0; i < gp__sim.num_devices; i++)
    if (gp__sim.devices[i].device_id == device_id)
      return &gp__sim.devices[i];
  return NULL;
}

static gp_sim_context *context_by_id(uint32_t context_id) {
  for (size_t i = 0; i < gp__sim.num_contexts; i++)
    if (gp__sim.contexts[i]->id == context_id)
      return gp__sim.contexts[i];
  return NULL;
}

/*
 * The fence: pm's jobs are pending while the host has not reached the end
 * of its last one. Once they are done, the segment still running on the
 * hardware (if pm is the programmed perfmon) is captured without a switch.
 */
static int sp_read(void *prov, gp_perfmon *pm, bool wait,
                   gp_counter_value *out) {
  (void)prov;
  bool locked = lock_unless_held();
  int rc = 0;
  for (;;) {
    sim_device *d = gp__sim_device_by_id(pm->device_id);
    if (!d)
      break; /* the simulator is gone: values are final */
    uint64_t last_end = gp__sim_perfmon_last_end(d, pm);
    if (last_end > gp__sim_now()) {
      if (!wait) {
        rc = GP_EAGAIN;
        break;
      }
      /* In real time this sleeps without the lock: check again. */
      gp__sim_wait_until(last_end);
      gp__sim_retire(false);
      continue;
    }
    if (d->pm.cur == pm)
      gp__sim_perfmon_fold(d);
    break;
  }
  if (rc == 0)
    gp__perfmon_values(pm, out);
  if (locked)
    gp__sim_unlock();
  return rc;
}

static int sp_set_global(void *prov, uint32_t device_id, gp_perfmon *pm,
                         gp_perfmon *current) {
  (void)prov;
  bool locked = lock_unless_held();
  int rc = 0;
  sim_device *d = gp__sim_device_by_id(device_id);
  if (!d) {
    rc = GP_ENODEV;
  } else if (pm) {
    if (d->pm.global)
      rc = GP_EBUSY;
    else
      d->pm.global = gp_perfmon_get(pm);
  } else if (!current || d->pm.global != current) {
    rc = GP_ESTATE;
  } else {
    gp_perfmon_put(d->pm.global);
    d->pm.global = NULL;
  }
  if (locked)
    gp__sim_unlock();
  return rc;
}

static int sp_context_device(void *prov, uint32_t context_id,
                             uint32_t *device_id) {
  (void)prov;
  bool locked = lock_unless_held();
  gp_sim_context *ctx = gp__sim.initialised ? context_by_id(context_id) : NULL;
  if (ctx)
    *device_id = ctx->dev->device_id;
  if (locked)
    gp__sim_unlock();
  return ctx ? 0 : GP_ENOENT;
}

static int sp_context_bind(void *prov, uint32_t context_id, gp_perfmon *pm) {
  (void)prov;
  bool locked = lock_unless_held();
  int rc = 0;
  gp_sim_context *ctx = gp__sim.initialised ? context_by_id(context_id) : NULL;
  if (!ctx) {
    rc = GP_ENOENT;
  } else if (pm && ctx->dev->pm.global) {
    rc = GP_EAGAIN;
  } else {
    gp_perfmon_put(ctx->pm);
    ctx->pm = gp_perfmon_get(pm);
  }
  if (locked)
    gp__sim_unlock();
  return rc;
}

static int sp_sampling_start(void *prov, gp__sampler *s) {
  (void)prov;
  bool locked = lock_unless_held();
  int rc = 0;
  sim_device *d = gp__sim_device_by_id(s->device_id);
  if (!d) {
    rc = GP_ENODEV;
  } else if (d->smp.s) {
    rc = GP_EBUSY; /* defensive: the counters layer allows one sampler */
  } else {
    memset(&d->smp, 0, sizeof(d->smp));
    d->smp.s = gp__sampler_get(s);
    d->smp.win_start = gp__sim_now();
    s->mux_epoch = d->smp.win_start; /* slices align with the windows */
    gp__sim_sampling_seed(d);
  }
  if (locked)
    gp__sim_unlock();
  return rc;
}

static void sp_sampling_stop(void *prov, gp__sampler *s) {
  (void)prov;
  bool locked = lock_unless_held();
  sim_device *d = gp__sim_device_by_id(s->device_id);
  if (d && d->smp.s == s) {
    /* The last window covers the work already submitted. */
    uint64_t until = gp__sim_now();
    for (size_t i = 0; i < d->smp.n; i++)
      if (d->smp.log[i].end > until)
        until = d->smp.log[i].end;
    gp__sim_sampling_emit(d, until, true);
    free(d->smp.log);
    gp__sampler_put(d->smp.s);
    memset(&d->smp, 0, sizeof(d->smp));
  }
  if (locked)
    gp__sim_unlock();
}

const gp__provider_ops gp__sim_provider = {
    .perfmon_open = NULL,
    .perfmon_close = NULL,
    .perfmon_read = sp_read,
    .set_global = sp_set_global,
    .context_device = sp_context_device,
    .context_bind = sp_context_bind,
    .sampling_start = sp_sampling_start,
    .sampling_stop = sp_sampling_stop,
};
