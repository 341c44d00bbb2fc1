/*
 * backend.h - the producer side of the core (core.h), for backends built
 * as shared objects of their own.
 *
 * A preload or injection library (libgpuperf-opencl.so, libgpuperf-cuda.so)
 * must write its
 * records into the one libgpuperf a process loads, where sessions and the
 * program's own callbacks consume them; a private copy of the core would
 * be a second, unseen stream. But the core's producer functions are hidden
 * in libgpuperf.so. gp_backend_interface() hands such a library a table of
 * them, checked by version and size. It is exported by libgpuperf.so (and
 * present in libgpuperf.a) but it is not a public API: its only users are
 * gpuperf's own backends, built from the same sources.
 */
#ifndef GPUPERF_CORE_BACKEND_H
#define GPUPERF_CORE_BACKEND_H

#include "core/core.h"
#include "core/hud_view.h"

/*
 * Version 2: the OpenCL preload's needs. Version 3 (the CUDA injection
 * library), 4 (the OpenCL preload's work in flight), 5 (device
 * frontiers, for derived counters), 6 (the HUD in a GL window,
 * core/hud_view.h), 7 (signals finished at a safe point, core.h's
 * gp__death_*), 8 (the callback API, gpuperf/callback.h, the scope
 * of a flush of one context, and the API objects' ids) and 9 (unified
 * memory counters' configuration, a device's auto boost query, a
 * context described again) append
 * the entries marked so. The table only
 * ever grows at its end, so a library built for an older version gets the same
 * table and reads the prefix it knows.
 */
#define GP_BACKEND_INTERFACE_VERSION 9u

/* Each entry is the core.h function of the same name (gp__ dropped). */
typedef struct gp_backend_ops {
  uint32_t version; /* GP_BACKEND_INTERFACE_VERSION */
  uint32_t size;    /* sizeof(gp_backend_ops) */
  bool (*activity_enabled)(uint32_t kind, uint32_t context_id);
  void *(*activity_reserve)(uint32_t kind, uint32_t size, uint32_t context_id,
                            uint32_t stream_id);
  void (*activity_commit)(void *record);
  uint64_t (*correlation_next)(void);
  int (*activity_add_flush_hook)(gp__flush_hook hook, void *user);
  uint32_t (*string_intern)(const char *s);
  int (*device_register)(const gp_device_info *info,
                         const gp_device_queue_info *queues,
                         uint32_t num_queues, uint32_t *device_id);
  int (*context_register)(uint32_t device_id, uint32_t api,
                          uint32_t default_stream_id, uint32_t *context_id);
  void (*context_unregister)(uint32_t context_id);
  void (*emit_name)(uint32_t object_kind, uint32_t device_id,
                    uint32_t context_id, uint32_t stream_id, uint32_t thread_id,
                    const char *name);
  uint32_t (*tid)(void);
  uint32_t (*pid)(void);
  void (*activate)(void);
  /* since version 3 */
  void (*activity_remove_flush_hook)(gp__flush_hook hook, void *user);
  void (*activity_add_drops)(uint32_t kind, uint32_t reason,
                             uint32_t context_id, uint32_t stream_id,
                             uint64_t count);
  uint32_t (*string_intern_n)(const char *s, size_t len);
  bool (*glob_match)(const char *pattern, const char *name);
  /* since version 4 */
  void (*activity_work_in_flight)(int delta);
  /* since version 5 */
  int (*device_set_frontier)(uint32_t device_id, gp__frontier_fn fn,
                             void *user);
  void (*activity_submitting)(uint64_t start);
  /* since version 6 */
  int (*hud_view)(gp_hud_view *view);
  void (*hud_feed)(uint32_t what, uint64_t t_ns, double value);
  /* since version 7 */
  bool (*death_in_handler)(void);
  void (*death_set_defer)(bool (*fn)(void));
  void (*death_point)(void);
  /* since version 8: callback_mask points at gp__cb_mask */
  const _Atomic uint32_t *callback_mask;
  void (*callback_api)(gp__cb_api_call *c, uint32_t site, int32_t rc);
  void (*callback)(uint32_t domain, uint32_t cbid, const void *data);
  bool (*activity_flush_scope)(uint32_t *context_id, uint32_t *stream_id);
  int (*handle_put)(uint32_t api, uint32_t what, const void *handle,
                    const void *aux, uint32_t device_id, uint32_t context_id,
                    uint32_t stream_id);
  void (*handle_drop)(uint32_t api, uint32_t what, const void *handle,
                      const void *aux);
  /* since version 9 */
  bool (*um_wanted)(uint32_t kind, uint32_t device_id);
  int (*device_set_auto_boost)(uint32_t device_id, gp__auto_boost_fn fn,
                               void *user);
  void (*context_describe)(uint32_t context_id, uint32_t default_stream_id,
                           uint32_t flags);
} gp_backend_ops;

/* gp__callback_resource (core.h) for a backend with the core's table. */
static inline void gp__backend_callback_resource(const gp_backend_ops *core,
                                                 uint32_t cbid, uint32_t api,
                                                 uint32_t device_id,
                                                 uint32_t context_id,
                                                 uint32_t stream_id) {
  if (GP_LIKELY(
          !(atomic_load_explicit(core->callback_mask, memory_order_relaxed) &
            GP__CB_BIT(GP_CALLBACK_DOMAIN_RESOURCE))))
    return;
  gp_callback_resource_data d = {api, device_id, context_id, stream_id};
  core->callback(GP_CALLBACK_DOMAIN_RESOURCE, cbid, &d);
}

/*
 * Returns the core's producer functions if the caller was built for
 * version (2 to GP_BACKEND_INTERFACE_VERSION) with the table of that
 * version, size bytes; NULL otherwise (a library of another build, which
 * must then record nothing). The table lives as long as the library.
 */
GP_EXPORT const gp_backend_ops *gp_backend_interface(uint32_t version,
                                                     size_t size);

#endif /* GPUPERF_CORE_BACKEND_H */
