/*
 * device.c - the registry of devices and contexts every backend shares.
 *
 * Device ids are dense from 0 in registration order and never reused, so
 * they can stand for Perfetto's gpu_id. Contexts get process-unique ids
 * from 1. Both registries emit their records (DEVICE, DEVICE_ATTRIBUTE,
 * CONTEXT, NAME) when those kinds are enabled.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define MAX_DEVICES 64

typedef struct device {
  gp_device_info info;
  gp_device_queue_info *queues;
  gp__frontier_fn frontier; /* under lock */
  void *frontier_user;
  gp__auto_boost_fn auto_boost; /* under lock; NULL: cannot say */
  void *auto_boost_user;
} device;

typedef struct context_entry {
  uint32_t device_id;
  uint32_t api;
  bool live;
} context_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static device devices[MAX_DEVICES];
static _Atomic uint32_t num_devices;
static context_entry *contexts; /* index = context id */
static uint32_t contexts_cap, next_context = 1;
#define MAX_HOOKS 8
static void (*_Atomic hooks[MAX_HOOKS])(uint32_t device_id);

static const char *dup_or_empty(const char *s) {
  char *d = strdup(s ? s : "");
  return d ? d : "";
}

/* See core.h. */
int gp__device_register(const gp_device_info *info,
                        const gp_device_queue_info *queues, uint32_t num_queues,
                        uint32_t *device_id) {
  if (!info || !device_id || (num_queues > 0 && !queues))
    return GP_EINVAL;
  gp_device_queue_info *q = calloc(num_queues ? num_queues : 1, sizeof(*q));
  if (!q)
    return GP_ENOMEM;
  pthread_mutex_lock(&lock);
  uint32_t id = atomic_load(&num_devices);
  if (id == MAX_DEVICES) {
    pthread_mutex_unlock(&lock);
    free(q);
    return GP_ENOSPC;
  }
  device *d = &devices[id];
  d->info = *info;
  d->info.id = id;
  d->info.name = dup_or_empty(info->name);
  d->info.vendor = dup_or_empty(info->vendor);
  d->info.model = dup_or_empty(info->model);
  d->info.architecture = dup_or_empty(info->architecture);
  d->info.driver_version = dup_or_empty(info->driver_version);
  d->info.num_queues = num_queues;
  for (uint32_t i = 0; i < num_queues; i++) {
    q[i] = queues[i];
    q[i].name = dup_or_empty(queues[i].name);
    q[i].description = dup_or_empty(queues[i].description);
  }
  d->queues = q;
  atomic_store(&num_devices, id + 1);
  pthread_mutex_unlock(&lock);
  *device_id = id;
  gp__device_emit(id);
  gp__device_emit_attributes(id);
  for (int i = 0; i < MAX_HOOKS; i++) {
    void (*fn)(uint32_t) = atomic_load(&hooks[i]);
    if (fn)
      fn(id);
  }
  return 0;
}

/* See core.h. */
int gp__device_add_hook(void (*fn)(uint32_t device_id)) {
  pthread_mutex_lock(&lock);
  int rc = GP_ENOSPC;
  for (int i = 0; i < MAX_HOOKS && rc != 0; i++) {
    if (!atomic_load(&hooks[i])) {
      atomic_store(&hooks[i], fn);
      rc = 0;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See core.h. */
uint32_t gp__device_count(void) {
  return atomic_load(&num_devices);
}

/* See core.h. */
int gp__device_set_frontier(uint32_t device_id, gp__frontier_fn fn,
                            void *user) {
  pthread_mutex_lock(&lock);
  int rc = GP_ENODEV;
  if (device_id < atomic_load(&num_devices)) {
    devices[device_id].frontier = fn;
    devices[device_id].frontier_user = user;
    rc = 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See core.h. */
int gp__device_set_auto_boost(uint32_t device_id, gp__auto_boost_fn fn,
                              void *user) {
  pthread_mutex_lock(&lock);
  int rc = GP_ENODEV;
  if (device_id < atomic_load(&num_devices)) {
    devices[device_id].auto_boost = fn;
    devices[device_id].auto_boost_user = user;
    rc = 0;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See activity.h. */
int gp_activity_get_auto_boost_state(uint32_t context_id,
                                     gp_auto_boost_state *state) {
  if (!state)
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  if (context_id == 0 || context_id >= next_context ||
      !contexts[context_id].live) {
    pthread_mutex_unlock(&lock);
    return GP_ENOENT;
  }
  uint32_t dev = contexts[context_id].device_id;
  gp__auto_boost_fn fn = devices[dev].auto_boost;
  void *user = devices[dev].auto_boost_user;
  pthread_mutex_unlock(&lock);
  /* Outside the lock: the backend may ask its driver. */
  return fn ? fn(user, dev, context_id, state) : GP_ENOTSUP;
}

/* See core.h. */
bool gp__device_frontier(uint32_t device_id, uint64_t *t) {
  pthread_mutex_lock(&lock);
  gp__frontier_fn fn = NULL;
  void *user = NULL;
  if (device_id < atomic_load(&num_devices)) {
    fn = devices[device_id].frontier;
    user = devices[device_id].frontier_user;
  }
  pthread_mutex_unlock(&lock);
  if (!fn)
    return false;
  /* In this order: work submitted after `now` was read starts after it;
   * a submission that was in progress then is seen by its mark, or is on
   * the backend's lists by the time they are read. */
  uint64_t now = gp_get_timestamp();
  uint64_t least = gp__activity_submitting_min();
  uint64_t listed = fn(user, device_id);
  if (least > now)
    least = now;
  *t = listed < least ? listed : least;
  return true;
}

/* See counters.h. */
int gp_device_count(uint32_t *n) {
  if (!n)
    return GP_EINVAL;
  *n = atomic_load(&num_devices);
  return 0;
}

/* See counters.h. */
int gp_device_get_info(uint32_t device_id, gp_device_info *info) {
  if (!info)
    return GP_EINVAL;
  if (device_id >= atomic_load(&num_devices))
    return GP_ENODEV;
  *info = devices[device_id].info;
  return 0;
}

/* See counters.h. */
int gp_device_get_queue(uint32_t device_id, uint32_t queue,
                        gp_device_queue_info *q) {
  if (!q)
    return GP_EINVAL;
  if (device_id >= atomic_load(&num_devices))
    return GP_ENODEV;
  if (queue >= devices[device_id].info.num_queues)
    return GP_ENOENT;
  *q = devices[device_id].queues[queue];
  return 0;
}

/* See counters.h. */
int gp_device_pci_bdf(const gp_device_info *info, char *buf, size_t size) {
  if (!info || !buf)
    return GP_EINVAL;
  int n = snprintf(buf, size, "%04x:%02x:%02x.%x", info->pci_domain & 0xffff,
                   info->pci_bus & 0xff, info->pci_device & 0x1f,
                   info->pci_function & 0x7);
  return (n < 0 || (size_t)n >= size) ? GP_ESIZE : 0;
}

/* See core.h. */
void gp__device_emit(uint32_t device_id) {
  if (device_id >= atomic_load(&num_devices) ||
      !gp__activity_enabled(GP_ACTIVITY_KIND_DEVICE, 0))
    return;
  const gp_device_info *in = &devices[device_id].info;
  gp_activity_device *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_DEVICE, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->global_memory_bytes = in->global_memory_bytes;
  r->memory_bandwidth_bytes_per_s = in->memory_bandwidth_bytes_per_s;
  r->device_id = device_id;
  r->flags = in->flags;
  r->name_id = gp__string_intern(in->name);
  r->vendor_id = gp__string_intern(in->vendor);
  r->model_id = gp__string_intern(in->model);
  r->architecture_id = gp__string_intern(in->architecture);
  r->driver_version_id = gp__string_intern(in->driver_version);
  r->pci_domain = in->pci_domain;
  r->pci_bus = in->pci_bus;
  r->pci_device = in->pci_device;
  r->pci_function = in->pci_function;
  r->compute_units = in->compute_units;
  r->core_clock_khz = in->core_clock_khz;
  r->memory_clock_khz = in->memory_clock_khz;
  r->max_threads_per_block = in->max_threads_per_block;
  r->max_shared_memory_per_block = in->max_shared_memory_per_block;
  r->num_queues = in->num_queues;
  r->clock_id = in->clock_id;
  memcpy(r->uuid, in->uuid, sizeof(r->uuid));
  gp__activity_commit(r);
}

/* See core.h. */
void gp__device_emit_all(void) {
  uint32_t n = atomic_load(&num_devices);
  for (uint32_t i = 0; i < n; i++)
    gp__device_emit(i);
}

/* See core.h. */
bool gp__device_info_attr(const gp_device_info *info, uint32_t attr,
                          uint64_t *value) {
  switch (attr) {
  case GP_DEVICE_ATTR_COMPUTE_UNITS:
    *value = info->compute_units;
    return true;
  case GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK:
    *value = info->max_threads_per_block;
    return true;
  case GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES:
    *value = info->global_memory_bytes;
    return true;
  case GP_DEVICE_ATTR_CORE_CLOCK_KHZ:
    *value = info->core_clock_khz;
    return true;
  case GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = info->max_shared_memory_per_block;
    return true;
  default:
    return false;
  }
}

/* See core.h. The attributes are the registered gp_device_info's, so
 * every backend gives the same ones the same way; a value of 0 is one
 * the backend did not know, and gets no record. */
void gp__device_emit_attributes(uint32_t device_id) {
  if (device_id >= atomic_load(&num_devices) ||
      !gp__activity_enabled(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, 0))
    return;
  const gp_device_info *in = &devices[device_id].info;
  for (uint32_t a = 1; a < GP_DEVICE_ATTR_COUNT; a++) {
    uint64_t v = 0;
    if (!gp__device_info_attr(in, a, &v) || v == 0)
      continue;
    gp_activity_device_attribute *r = gp__activity_reserve(
        GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, sizeof(*r), 0, 0);
    if (!r)
      return;
    r->device_id = device_id;
    r->attribute = a;
    r->flags = 0;
    r->value_type = GP_VALUE_INT64;
    r->value.i64 = (int64_t)v;
    gp__activity_commit(r);
  }
}

/* See core.h. */
void gp__device_emit_all_attributes(void) {
  uint32_t n = atomic_load(&num_devices);
  for (uint32_t i = 0; i < n; i++)
    gp__device_emit_attributes(i);
}

/* Writes a CONTEXT record (if enabled). */
static void context_record(uint32_t id, uint32_t device_id, uint32_t api,
                           uint32_t default_stream_id, uint32_t flags) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_CONTEXT, 0))
    return;
  gp_activity_context *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_CONTEXT, sizeof(*r), id, 0);
  if (!r)
    return;
  r->context_id = id;
  r->device_id = device_id;
  r->api = api;
  r->default_stream_id = default_stream_id;
  r->process_id = gp__pid();
  r->flags = flags;
  gp__activity_commit(r);
}

/* See core.h. */
int gp__context_register(uint32_t device_id, uint32_t api,
                         uint32_t default_stream_id, uint32_t *context_id) {
  if (!context_id)
    return GP_EINVAL;
  if (device_id >= atomic_load(&num_devices))
    return GP_ENODEV;
  pthread_mutex_lock(&lock);
  if (next_context >= contexts_cap) {
    uint32_t ncap = contexts_cap ? contexts_cap * 2 : 64;
    context_entry *n = realloc(contexts, ncap * sizeof(*n));
    if (!n) {
      pthread_mutex_unlock(&lock);
      return GP_ENOMEM;
    }
    memset(n + contexts_cap, 0, (ncap - contexts_cap) * sizeof(*n));
    contexts = n;
    contexts_cap = ncap;
  }
  uint32_t id = next_context++;
  contexts[id].device_id = device_id;
  contexts[id].api = api;
  contexts[id].live = true;
  pthread_mutex_unlock(&lock);
  *context_id = id;
  gp__callback_resource(GP_CALLBACK_RESOURCE_CONTEXT_CREATED, api, device_id,
                        id, 0);
  context_record(id, device_id, api, default_stream_id, 0);
  return 0;
}

/* See core.h. */
void gp__context_describe(uint32_t context_id, uint32_t default_stream_id,
                          uint32_t flags) {
  pthread_mutex_lock(&lock);
  bool live =
      context_id && context_id < next_context && contexts[context_id].live;
  uint32_t dev = live ? contexts[context_id].device_id : 0;
  uint32_t api = live ? contexts[context_id].api : 0;
  pthread_mutex_unlock(&lock);
  if (live)
    context_record(context_id, dev, api, default_stream_id, flags);
}

/* See core.h. */
void gp__context_unregister(uint32_t context_id) {
  pthread_mutex_lock(&lock);
  bool live =
      context_id > 0 && context_id < next_context && contexts[context_id].live;
  uint32_t api = live ? contexts[context_id].api : 0;
  uint32_t device_id = live ? contexts[context_id].device_id : 0;
  pthread_mutex_unlock(&lock);
  if (live)
    gp__callback_resource(GP_CALLBACK_RESOURCE_CONTEXT_DESTROY_STARTING, api,
                          device_id, context_id, 0);
  pthread_mutex_lock(&lock);
  if (live)
    contexts[context_id].live = false;
  pthread_mutex_unlock(&lock);
  gp__activity_forget_context(context_id);
}

/* See core.h. */
bool gp__context_exists(uint32_t context_id) {
  pthread_mutex_lock(&lock);
  bool live =
      context_id > 0 && context_id < next_context && contexts[context_id].live;
  pthread_mutex_unlock(&lock);
  return live;
}

/* See core.h. */
void gp__emit_name(uint32_t object_kind, uint32_t device_id,
                   uint32_t context_id, uint32_t stream_id, uint32_t thread_id,
                   const char *name) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_NAME, 0))
    return;
  gp_activity_name *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_NAME, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->object_kind = object_kind;
  r->process_id = gp__pid();
  r->thread_id = thread_id;
  r->device_id = device_id;
  r->context_id = context_id;
  r->stream_id = stream_id;
  r->name_id = gp__string_intern(name);
  r->reserved0 = 0;
  r->object_handle = 0;
  r->timestamp = 0;
  r->api_object_type = 0;
  r->reserved1 = 0;
  gp__activity_commit(r);
}
