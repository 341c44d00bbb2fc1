/*
 * um.c - which unified memory counters are recorded
 * (gp_activity_configure_unified_memory_counter, gpuperf/activity_um.h).
 *
 * The configuration is one word per counter kind: bit 0 "on for every
 * device", and, for a kind on for one device only, that device's id + 1
 * in the upper half. CUPTI's scopes are process-wide (this process, one
 * device or all), so nothing here is per thread or per context.
 * Producers ask gp__um_wanted() for each record; it is a relaxed load.
 */
#include <stdatomic.h>

#include "core.h"

/* Per kind: 0 off; UM_ALL on for every device; (device + 1) << 32 on
 * for that device alone. Every kind is on until the first configuration. */
#define UM_ALL 1ull
static _Atomic uint64_t um_conf[GP_UM_COUNTER_KIND_COUNT] = {
    0, UM_ALL, UM_ALL, UM_ALL, UM_ALL, UM_ALL, UM_ALL, UM_ALL, UM_ALL};

/* See core.h. */
bool gp__um_wanted(uint32_t kind, uint32_t device_id) {
  if (kind == GP_UM_COUNTER_UNKNOWN || kind >= GP_UM_COUNTER_KIND_COUNT)
    return false;
  uint64_t c = atomic_load_explicit(&um_conf[kind], memory_order_relaxed);
  return c == UM_ALL || (c >> 32) == (uint64_t)device_id + 1;
}

/* See activity_um.h. */
int gp_activity_configure_unified_memory_counter(
    const gp_um_counter_config *config, uint32_t count) {
  if (!config || count == 0)
    return GP_EINVAL;
  /* Everything is checked before anything changes. */
  uint32_t ndev = gp__device_count();
  for (uint32_t i = 0; i < count; i++) {
    const gp_um_counter_config *c = &config[i];
    if (c->kind == GP_UM_COUNTER_UNKNOWN ||
        c->kind >= GP_UM_COUNTER_KIND_COUNT ||
        c->scope == GP_UM_SCOPE_UNKNOWN || c->scope >= GP_UM_SCOPE_COUNT)
      return GP_EINVAL;
    if (c->scope == GP_UM_SCOPE_PROCESS_SINGLE_DEVICE && c->device_id >= ndev)
      return GP_EINVAL;
  }
  uint64_t next[GP_UM_COUNTER_KIND_COUNT];
  for (uint32_t k = 0; k < GP_UM_COUNTER_KIND_COUNT; k++)
    next[k] = atomic_load(&um_conf[k]);
  for (uint32_t i = 0; i < count; i++) {
    const gp_um_counter_config *c = &config[i];
    if (!c->enable)
      next[c->kind] = 0;
    else if (c->scope == GP_UM_SCOPE_PROCESS_ALL_DEVICES)
      next[c->kind] = UM_ALL;
    else
      next[c->kind] = ((uint64_t)c->device_id + 1) << 32;
  }
  for (uint32_t k = 0; k < GP_UM_COUNTER_KIND_COUNT; k++)
    atomic_store(&um_conf[k], next[k]);
  return 0;
}

/* See activity_um.h. */
const char *gp_um_counter_kind_name(uint32_t kind) {
  static const char *const names[GP_UM_COUNTER_KIND_COUNT] = {
      "unknown",         "bytes_htod",      "bytes_dtoh",
      "cpu_page_faults", "gpu_page_faults", "thrashing",
      "throttling",      "remote_map",      "bytes_dtod"};
  return kind < GP_UM_COUNTER_KIND_COUNT ? names[kind] : "unknown";
}
