/*
 * markers.c - user markers and ranges (the NVTX-like part of the API).
 *
 * Push/pop ranges live on a per-thread stack of string ids, which the
 * counter filters read to decide whether an activity sits inside a
 * matching range; the stack is kept whether or not MARKER records are
 * being collected. Start/end ranges may cross threads and do not nest;
 * the set of open ones is kept so that ending an unknown range is an
 * error rather than a dangling END record.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

typedef struct range {
  uint64_t id;
  uint32_t name_id;
  uint32_t domain_id;
} range;

/* The thread's stack, on the heap from its first push (freed at the
 * thread's exit): GP_RANGE_MAX_DEPTH ranges in static TLS (1 KiB) would
 * leave too little of glibc's spare static TLS for a process that
 * dlopens the library (core.h, GP_TLS). */
static GP_TLS range *tls_stack;
static GP_TLS uint32_t tls_depth;
static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;

static void stack_key_make(void) {
  pthread_key_create(&stack_key, free);
}

/* The thread's stack, allocated on first use; NULL if out of memory. */
static range *stack(void) {
  if (GP_LIKELY(tls_stack != NULL))
    return tls_stack;
  range *r = calloc(GP_RANGE_MAX_DEPTH, sizeof(*r));
  if (!r)
    return NULL;
  pthread_once(&stack_once, stack_key_make);
  pthread_setspecific(stack_key, r);
  tls_stack = r;
  return r;
}
static _Atomic uint64_t next_range_id;

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *open_ids;
static size_t open_n, open_cap;

static void emit(uint32_t flags, uint64_t id, uint32_t name_id,
                 uint32_t domain_id, uint32_t depth) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_MARKER, 0))
    return;
  gp_activity_marker *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = gp__now();
  r->id = id;
  r->flags = flags;
  r->name_id = name_id;
  r->domain_id = domain_id;
  r->process_id = gp__pid();
  r->thread_id = gp__tid();
  r->depth = depth;
  gp__activity_commit(r);
}

/* Whether attrs (NULL: none) are ones a marker can carry. */
static bool attrs_ok(const gp_marker_attrs *a) {
  return !a ||
         (!(a->flags & ~(GP_MARKER_ATTR_COLOR | GP_MARKER_ATTR_CATEGORY)) &&
          a->payload_kind <= GP_MARKER_PAYLOAD_DOUBLE);
}

/* The MARKER_DATA record of marker id, before its MARKER record (the
 * writer attaches it to the marker that follows on the thread). */
static void emit_data(uint64_t id, const gp_marker_attrs *a) {
  if (!a || !gp__activity_enabled(GP_ACTIVITY_KIND_MARKER_DATA, 0))
    return;
  gp_activity_marker_data *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_MARKER_DATA, sizeof(*r), 0, 0);
  if (!r)
    return;
  bool color = (a->flags & GP_MARKER_ATTR_COLOR) != 0;
  r->id = id;
  r->flags = color ? GP_ACTIVITY_FLAG_MARKER_COLOR_ARGB
                   : GP_ACTIVITY_FLAG_MARKER_COLOR_NONE;
  r->color = color ? a->color : 0;
  r->category = (a->flags & GP_MARKER_ATTR_CATEGORY) ? a->category : 0;
  r->payload_kind = a->payload_kind;
  r->payload = a->payload;
  if (!a->payload_kind)
    r->payload.u64 = 0;
  gp__activity_commit(r);
}

/* The MARKER callback of a successful marker call, if one is enabled. */
static void marker_cb(uint32_t cbid, const char *domain, const char *name,
                      uint64_t range_id) {
  if (GP_LIKELY(!(atomic_load_explicit(&gp__cb_mask, memory_order_relaxed) &
                  GP__CB_BIT(GP_CALLBACK_DOMAIN_MARKER))))
    return;
  gp_callback_marker_data d = {domain, name, range_id, gp__tid(), 0};
  gp__callback(GP_CALLBACK_DOMAIN_MARKER, cbid, &d);
}

/* See markers.h. */
int gp_marker_instant(const char *domain, const char *name) {
  return gp_marker_instant_ex(domain, name, NULL);
}

/* See markers.h. */
int gp_marker_instant_ex(const char *domain, const char *name,
                         const gp_marker_attrs *attrs) {
  gp__activate();
  if (!name || !attrs_ok(attrs))
    return GP_EINVAL;
  uint64_t id = atomic_fetch_add(&next_range_id, 1) + 1;
  emit_data(id, attrs);
  emit(GP_ACTIVITY_FLAG_MARKER_INSTANT, id, gp__string_intern(name),
       gp__string_intern(domain), 0);
  marker_cb(GP_CALLBACK_MARKER_INSTANT, domain, name, 0);
  return 0;
}

/* See markers.h. */
int gp_range_push(const char *domain, const char *name) {
  return gp_range_push_ex(domain, name, NULL);
}

/* See markers.h. */
int gp_range_push_ex(const char *domain, const char *name,
                     const gp_marker_attrs *attrs) {
  gp__activate();
  if (!name || !attrs_ok(attrs))
    return GP_EINVAL;
  if (tls_depth >= GP_RANGE_MAX_DEPTH)
    return GP_ENOSPC;
  range *st = stack();
  if (!st)
    return GP_ENOMEM;
  range *r = &st[tls_depth];
  r->id = atomic_fetch_add(&next_range_id, 1) + 1;
  r->name_id = gp__string_intern(name);
  r->domain_id = gp__string_intern(domain);
  tls_depth++;
  emit_data(r->id, attrs);
  emit(GP_ACTIVITY_FLAG_MARKER_START, r->id, r->name_id, r->domain_id,
       tls_depth);
  marker_cb(GP_CALLBACK_MARKER_RANGE_PUSH, domain, name, 0);
  return 0;
}

/* See markers.h. */
int gp_range_pop(void) {
  if (tls_depth == 0)
    return GP_ESTATE;
  range *r = &tls_stack[tls_depth - 1];
  emit(GP_ACTIVITY_FLAG_MARKER_END, r->id, 0, r->domain_id, tls_depth);
  tls_depth--;
  marker_cb(GP_CALLBACK_MARKER_RANGE_POP, NULL, NULL, 0);
  return 0;
}

/* See markers.h. */
int gp_range_start(const char *domain, const char *name, uint64_t *range_id) {
  return gp_range_start_ex(domain, name, NULL, range_id);
}

/* See markers.h. */
int gp_range_start_ex(const char *domain, const char *name,
                      const gp_marker_attrs *attrs, uint64_t *range_id) {
  gp__activate();
  if (!name || !range_id || !attrs_ok(attrs))
    return GP_EINVAL;
  uint64_t id = atomic_fetch_add(&next_range_id, 1) + 1;
  pthread_mutex_lock(&open_lock);
  if (open_n == open_cap) {
    size_t ncap = open_cap ? open_cap * 2 : 16;
    uint64_t *n = realloc(open_ids, ncap * sizeof(*n));
    if (!n) {
      pthread_mutex_unlock(&open_lock);
      return GP_ENOMEM;
    }
    open_ids = n;
    open_cap = ncap;
  }
  open_ids[open_n++] = id;
  pthread_mutex_unlock(&open_lock);
  *range_id = id;
  emit_data(id, attrs);
  emit(GP_ACTIVITY_FLAG_MARKER_START, id, gp__string_intern(name),
       gp__string_intern(domain), 0);
  marker_cb(GP_CALLBACK_MARKER_RANGE_START, domain, name, id);
  return 0;
}

/* See markers.h. */
int gp_range_end(uint64_t range_id) {
  pthread_mutex_lock(&open_lock);
  size_t i;
  for (i = 0; i < open_n; i++)
    if (open_ids[i] == range_id)
      break;
  if (i == open_n) {
    pthread_mutex_unlock(&open_lock);
    return GP_ENOENT;
  }
  open_ids[i] = open_ids[--open_n];
  pthread_mutex_unlock(&open_lock);
  emit(GP_ACTIVITY_FLAG_MARKER_END, range_id, 0, 0, 0);
  marker_cb(GP_CALLBACK_MARKER_RANGE_END, NULL, NULL, range_id);
  return 0;
}

/* See markers.h. */
uint32_t gp_range_stack(uint32_t *ids, uint32_t cap) {
  if (ids)
    for (uint32_t i = 0; i < tls_depth && i < cap; i++)
      ids[i] = tls_stack[i].name_id;
  return tls_depth;
}
