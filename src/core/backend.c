/*
 * backend.c - gp_backend_interface(): see backend.h.
 */
#include <stddef.h>

#include "core/backend.h"

static const gp_backend_ops ops = {
    .version = GP_BACKEND_INTERFACE_VERSION,
    .size = sizeof(gp_backend_ops),
    .activity_enabled = gp__activity_enabled,
    .activity_reserve = gp__activity_reserve_out,
    .activity_commit = gp__activity_commit_out,
    .correlation_next = gp__correlation_next,
    .activity_add_flush_hook = gp__activity_add_flush_hook,
    .string_intern = gp__string_intern,
    .device_register = gp__device_register,
    .context_register = gp__context_register,
    .context_unregister = gp__context_unregister,
    .emit_name = gp__emit_name,
    .tid = gp__tid,
    .pid = gp__pid,
    .activate = gp__activate,
    .activity_remove_flush_hook = gp__activity_remove_flush_hook,
    .activity_add_drops = gp__activity_add_drops,
    .string_intern_n = gp__string_intern_n,
    .glob_match = gp__glob_match,
    .activity_work_in_flight = gp__activity_work_in_flight,
    .device_set_frontier = gp__device_set_frontier,
    .activity_submitting = gp__activity_submitting,
    .hud_view = gp__hud_view,
    .hud_feed = gp__hud_feed,
    .death_in_handler = gp__death_in_handler,
    .death_set_defer = gp__death_set_defer,
    .death_point = gp__death_point,
    .callback_mask = &gp__cb_mask,
    .callback_api = gp__callback_api,
    .callback = gp__callback,
    .activity_flush_scope = gp__activity_flush_scope,
    .handle_put = gp__handle_put,
    .handle_drop = gp__handle_drop,
    .um_wanted = gp__um_wanted,
    .device_set_auto_boost = gp__device_set_auto_boost,
    .context_describe = gp__context_describe,
};

/* The size of the table of each version it grew through. */
static size_t version_size(uint32_t version) {
  switch (version) {
  case 2:
    return offsetof(gp_backend_ops, activity_remove_flush_hook);
  case 3:
    return offsetof(gp_backend_ops, activity_work_in_flight);
  case 4:
    return offsetof(gp_backend_ops, device_set_frontier);
  case 5:
    return offsetof(gp_backend_ops, hud_view);
  case 6:
    return offsetof(gp_backend_ops, death_in_handler);
  case 7:
    return offsetof(gp_backend_ops, callback_mask);
  case 8:
    return offsetof(gp_backend_ops, um_wanted);
  case GP_BACKEND_INTERFACE_VERSION:
    return sizeof(gp_backend_ops);
  default:
    return 0;
  }
}

/* See backend.h. */
const gp_backend_ops *gp_backend_interface(uint32_t version, size_t size) {
  if (version_size(version) == 0 || size != version_size(version))
    return NULL;
  return &ops;
}
