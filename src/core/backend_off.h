/*
 * backend_off.h - a core table that records nothing (core/backend.h), for
 * the backends built as libraries of their own (the OpenCL preload, the
 * CUDA collector, the Vulkan layer): what each of them uses until it has
 * the process's libgpuperf, and for good when that libgpuperf is of
 * another build. One definition, so a table entry added once is "off" in
 * every backend.
 *
 * Include it in one file of a backend: it defines static functions and
 * GP__BACKEND_OFF_INIT, the table's initializer.
 */
#ifndef GPUPERF_CORE_BACKEND_OFF_H
#define GPUPERF_CORE_BACKEND_OFF_H

#include "core/backend.h"

static bool off_enabled(uint32_t kind, uint32_t context_id) {
  (void)kind, (void)context_id;
  return false;
}
static void *off_reserve(uint32_t kind, uint32_t size, uint32_t context_id,
                         uint32_t stream_id) {
  (void)kind, (void)size, (void)context_id, (void)stream_id;
  return NULL;
}
static void off_commit(void *record) {
  (void)record;
}
static uint64_t off_correlation(void) {
  return 0;
}
static int off_add_hook(gp__flush_hook hook, void *user) {
  (void)hook, (void)user;
  return GP_ENOTSUP;
}
static void off_remove_hook(gp__flush_hook hook, void *user) {
  (void)hook, (void)user;
}
static uint32_t off_intern(const char *s) {
  (void)s;
  return 0;
}
static uint32_t off_intern_n(const char *s, size_t len) {
  (void)s, (void)len;
  return 0;
}
static int off_device(const gp_device_info *info,
                      const gp_device_queue_info *queues, uint32_t n,
                      uint32_t *id) {
  (void)info, (void)queues, (void)n, (void)id;
  return GP_ENOTSUP;
}
static int off_context(uint32_t device_id, uint32_t api, uint32_t stream,
                       uint32_t *id) {
  (void)device_id, (void)api, (void)stream, (void)id;
  return GP_ENOTSUP;
}
static void off_uncontext(uint32_t id) {
  (void)id;
}
static void off_name(uint32_t kind, uint32_t device_id, uint32_t context_id,
                     uint32_t stream_id, uint32_t thread_id, const char *n) {
  (void)kind, (void)device_id, (void)context_id, (void)stream_id;
  (void)thread_id, (void)n;
}
static uint32_t off_id(void) {
  return 0;
}
static void off_activate(void) {}
static void off_drops(uint32_t kind, uint32_t reason, uint32_t context_id,
                      uint32_t stream_id, uint64_t count) {
  (void)kind, (void)reason, (void)context_id, (void)stream_id, (void)count;
}
static bool off_glob(const char *pattern, const char *name) {
  (void)pattern, (void)name;
  return false;
}
static void off_in_flight(int delta) {
  (void)delta;
}
static void off_submitting(uint64_t start) {
  (void)start;
}
static int off_frontier(uint32_t device_id, gp__frontier_fn fn, void *user) {
  (void)device_id, (void)fn, (void)user;
  return GP_ENODEV;
}
static int off_hud_view(gp_hud_view *view) {
  (void)view;
  return GP_ENOENT;
}
static void off_hud_feed(uint32_t what, uint64_t t_ns, double value) {
  (void)what, (void)t_ns, (void)value;
}
static bool off_in_handler(void) {
  return false;
}
static void off_set_defer(bool (*fn)(void)) {
  (void)fn;
}
static void off_point(void) {}
static const _Atomic uint32_t off_cb_mask;
static void off_cb_api(gp__cb_api_call *c, uint32_t site, int32_t rc) {
  (void)c, (void)site, (void)rc;
}
static void off_cb(uint32_t domain, uint32_t cbid, const void *data) {
  (void)domain, (void)cbid, (void)data;
}
static int off_handle_put(uint32_t api, uint32_t what, const void *handle,
                          const void *aux, uint32_t device_id,
                          uint32_t context_id, uint32_t stream_id) {
  (void)api, (void)what, (void)handle, (void)aux, (void)device_id,
      (void)context_id, (void)stream_id;
  return GP_ENOTSUP;
}
static void off_handle_drop(uint32_t api, uint32_t what, const void *handle,
                            const void *aux) {
  (void)api, (void)what, (void)handle, (void)aux;
}
static bool off_scope(uint32_t *context_id, uint32_t *stream_id) {
  *context_id = *stream_id = 0;
  return false;
}
static bool off_um_wanted(uint32_t kind, uint32_t device_id) {
  (void)kind, (void)device_id;
  return false;
}
static int off_auto_boost(uint32_t device_id, gp__auto_boost_fn fn,
                          void *user) {
  (void)device_id, (void)fn, (void)user;
  return GP_ENODEV;
}
static void off_describe(uint32_t context_id, uint32_t stream, uint32_t f) {
  (void)context_id, (void)stream, (void)f;
}

/* Initializer of a gp_backend_ops that records nothing. */
#define GP__BACKEND_OFF_INIT                                                   \
  {                                                                            \
    .version = GP_BACKEND_INTERFACE_VERSION, .size = sizeof(gp_backend_ops),   \
    .activity_enabled = off_enabled, .activity_reserve = off_reserve,          \
    .activity_commit = off_commit, .correlation_next = off_correlation,        \
    .activity_add_flush_hook = off_add_hook, .string_intern = off_intern,      \
    .device_register = off_device, .context_register = off_context,            \
    .context_unregister = off_uncontext, .emit_name = off_name, .tid = off_id, \
    .pid = off_id, .activate = off_activate,                                   \
    .activity_remove_flush_hook = off_remove_hook,                             \
    .activity_add_drops = off_drops, .string_intern_n = off_intern_n,          \
    .glob_match = off_glob, .activity_work_in_flight = off_in_flight,          \
    .device_set_frontier = off_frontier,                                       \
    .activity_submitting = off_submitting, .hud_view = off_hud_view,           \
    .hud_feed = off_hud_feed, .death_in_handler = off_in_handler,              \
    .death_set_defer = off_set_defer, .death_point = off_point,                \
    .callback_mask = &off_cb_mask, .callback_api = off_cb_api,                 \
    .callback = off_cb, .activity_flush_scope = off_scope,                     \
    .handle_put = off_handle_put, .handle_drop = off_handle_drop,              \
    .um_wanted = off_um_wanted, .device_set_auto_boost = off_auto_boost,       \
    .context_describe = off_describe,                                          \
  }

#endif /* GPUPERF_CORE_BACKEND_OFF_H */
