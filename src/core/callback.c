/*
 * callback.c - the callback API (gpuperf/callback.h): subscribers, their
 * enables, and the dispatch that the backends call at their entry points.
 *
 * A subscriber is a slot of a fixed table. Its enables are bitsets: for
 * the API domain one of GP_CALLBACK_MAX_API_CBID bits per API domain, for
 * the others one 64-bit word. gp__cb_mask is the union of every slot's
 * enables, coarse (a bit per domain, and for the API domain a bit per API
 * domain): it is what an entry point reads first, one relaxed load, and
 * it calls in here only when its bit is set.
 *
 * Subscribing, unsubscribing and enabling take one mutex; the dispatch
 * takes none. It counts itself in the slot's `busy` around the call, so
 * that unsubscribe can wait until no other thread is inside the
 * callback; a thread unsubscribing from its own callback does not wait
 * for itself (a thread-local count of the calls it is inside).
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "core/core.h"

#define NSUB GP_CALLBACK_MAX_SUBSCRIBERS
#define API_WORDS (GP_CALLBACK_MAX_API_CBID / 64)
#define NAPI 8 /* API domains with bitsets: gp_api_domain values 0..7 */

struct gp_callback_subscriber {
  _Atomic bool active;
  _Atomic uint32_t busy; /* threads inside the callback */
  gp_callback_fn fn;
  void *user;
  _Atomic uint64_t api[NAPI][API_WORDS];
  _Atomic uint64_t other[GP_CALLBACK_DOMAIN_COUNT];
};

static gp_callback_subscriber subs[NSUB];

/* The innermost list holding this thread's RESOURCE and SYNCHRONIZE
 * callbacks (gp__callback_hold), NULL when none does. A pointer, not the
 * list: libgpuperf's thread-local block stays small, for processes that
 * dlopen it. */
static __thread gp__cb_held *holding;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* How many calls of subs[i]'s fn this thread is inside (a callback may
 * call back in, and be called again). */
static __thread uint8_t inside[NSUB];

_Atomic uint32_t gp__cb_mask;

/* Domain bits of gp__cb_mask: 1 << domain; API domain a: 1 << (8 + a). */
static uint32_t api_bit(uint32_t a) {
  return 1u << (8 + a);
}

static int slot_of(const gp_callback_subscriber *s) {
  if (!s || s < subs || s >= subs + NSUB ||
      (size_t)((const char *)s - (const char *)subs) % sizeof(*s) != 0)
    return -1;
  return atomic_load(&s->active) ? (int)(s - subs) : -1;
}

/* The union of the enables; under lock. */
static void remask(void) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < NSUB; i++) {
    gp_callback_subscriber *s = &subs[i];
    if (!atomic_load_explicit(&s->active, memory_order_relaxed))
      continue;
    for (uint32_t a = 0; a < NAPI; a++)
      for (uint32_t w = 0; w < API_WORDS; w++)
        if (atomic_load_explicit(&s->api[a][w], memory_order_relaxed)) {
          m |= api_bit(a) | (1u << GP_CALLBACK_DOMAIN_API);
          break;
        }
    for (uint32_t d = GP_CALLBACK_DOMAIN_RESOURCE; d < GP_CALLBACK_DOMAIN_COUNT;
         d++)
      if (atomic_load_explicit(&s->other[d], memory_order_relaxed))
        m |= 1u << d;
  }
  atomic_store_explicit(&gp__cb_mask, m, memory_order_release);
}

/* See callback.h. */
int gp_callback_subscribe(gp_callback_subscriber **subscriber,
                          gp_callback_fn fn, void *userdata) {
  if (!subscriber || !fn)
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  for (uint32_t i = 0; i < NSUB; i++) {
    gp_callback_subscriber *s = &subs[i];
    if (atomic_load(&s->active) || atomic_load(&s->busy))
      continue;
    memset(s->api, 0, sizeof(s->api));
    memset(s->other, 0, sizeof(s->other));
    s->fn = fn;
    s->user = userdata;
    atomic_store(&s->active, true);
    pthread_mutex_unlock(&lock);
    *subscriber = s;
    return 0;
  }
  pthread_mutex_unlock(&lock);
  return GP_EBUSY;
}

/* See callback.h. */
int gp_callback_unsubscribe(gp_callback_subscriber *subscriber) {
  pthread_mutex_lock(&lock);
  int i = slot_of(subscriber);
  if (i < 0) {
    pthread_mutex_unlock(&lock);
    return GP_EINVAL;
  }
  atomic_store(&subscriber->active, false);
  remask();
  pthread_mutex_unlock(&lock);
  /* Dispatches that saw it active finish; this thread's own is not
   * waited for. */
  uint32_t self = inside[i];
  while (atomic_load(&subscriber->busy) > self)
    sched_yield();
  return 0;
}

/* The bit of (domain, cbid) in s: its word and mask; false if out of
 * range. */
static bool locate(gp_callback_subscriber *s, uint32_t domain, uint32_t cbid,
                   _Atomic uint64_t **word, uint64_t *bit) {
  if (domain == GP_CALLBACK_DOMAIN_API) {
    uint32_t a = GP_CALLBACK_API_DOMAIN_OF(cbid),
             c = GP_CALLBACK_API_CBID_OF(cbid);
    if (a >= NAPI || c >= GP_CALLBACK_MAX_API_CBID)
      return false;
    *word = &s->api[a][c / 64];
    *bit = 1ull << (c % 64);
    return true;
  }
  static const uint32_t count[GP_CALLBACK_DOMAIN_COUNT] = {
      [GP_CALLBACK_DOMAIN_RESOURCE] = GP_CALLBACK_RESOURCE_COUNT,
      [GP_CALLBACK_DOMAIN_SYNCHRONIZE] = GP_CALLBACK_SYNC_COUNT,
      [GP_CALLBACK_DOMAIN_MARKER] = GP_CALLBACK_MARKER_COUNT};
  if (cbid == 0 || cbid >= count[domain])
    return false;
  *word = &s->other[domain];
  *bit = 1ull << cbid;
  return true;
}

/* The same for a subscriber that may not be one: 0, GP_EINVAL for an
 * unknown subscriber, GP_ERANGE for an id out of range. Under lock. */
static int bit_of(gp_callback_subscriber *s, uint32_t domain, uint32_t cbid,
                  _Atomic uint64_t **word, uint64_t *bit) {
  if (slot_of(s) < 0)
    return GP_EINVAL;
  return locate(s, domain, cbid, word, bit) ? 0 : GP_ERANGE;
}

static bool domain_ok(uint32_t domain) {
  return domain > GP_CALLBACK_DOMAIN_INVALID &&
         domain < GP_CALLBACK_DOMAIN_COUNT;
}

/* See callback.h. */
int gp_callback_enable(gp_callback_subscriber *subscriber, uint32_t enable,
                       gp_callback_domain domain, uint32_t cbid) {
  if (!domain_ok(domain))
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  _Atomic uint64_t *w;
  uint64_t bit;
  int rc = bit_of(subscriber, domain, cbid, &w, &bit);
  if (!rc && enable)
    atomic_fetch_or(w, bit);
  else if (!rc)
    atomic_fetch_and(w, ~bit);
  if (!rc)
    remask();
  pthread_mutex_unlock(&lock);
  return rc;
}

/* Sets or clears every bit of one domain; under lock. */
static void set_domain(gp_callback_subscriber *s, uint32_t domain,
                       bool enable) {
  if (domain == GP_CALLBACK_DOMAIN_API) {
    for (uint32_t a = 0; a < NAPI; a++)
      for (uint32_t w = 0; w < API_WORDS; w++)
        atomic_store(&s->api[a][w], enable ? ~0ull : 0);
  } else {
    atomic_store(&s->other[domain], enable ? ~0ull : 0);
  }
}

/* See callback.h. */
int gp_callback_enable_domain(gp_callback_subscriber *subscriber,
                              uint32_t enable, gp_callback_domain domain) {
  if (!domain_ok(domain))
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  int rc = slot_of(subscriber) < 0 ? GP_EINVAL : 0;
  if (!rc) {
    set_domain(subscriber, domain, enable != 0);
    remask();
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See callback.h. */
int gp_callback_enable_all_domains(gp_callback_subscriber *subscriber,
                                   uint32_t enable) {
  pthread_mutex_lock(&lock);
  int rc = slot_of(subscriber) < 0 ? GP_EINVAL : 0;
  if (!rc) {
    for (uint32_t d = GP_CALLBACK_DOMAIN_API; d < GP_CALLBACK_DOMAIN_COUNT; d++)
      set_domain(subscriber, d, enable != 0);
    remask();
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See callback.h. */
int gp_callback_get_state(gp_callback_subscriber *subscriber,
                          gp_callback_domain domain, uint32_t cbid,
                          uint32_t *enabled) {
  if (!enabled || !domain_ok(domain))
    return GP_EINVAL;
  pthread_mutex_lock(&lock);
  _Atomic uint64_t *w;
  uint64_t bit;
  int rc = bit_of(subscriber, domain, cbid, &w, &bit);
  if (!rc)
    *enabled = (atomic_load(w) & bit) != 0;
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See callback.h. */
const char *gp_callback_domain_name(uint32_t domain) {
  static const char *const names[GP_CALLBACK_DOMAIN_COUNT] = {
      "INVALID", "API", "RESOURCE", "SYNCHRONIZE", "MARKER"};
  return domain < GP_CALLBACK_DOMAIN_COUNT ? names[domain] : "INVALID";
}

/* Calls subscriber i's fn if (domain, cbid) is enabled for it. */
static void call_one(uint32_t i, uint32_t domain, uint32_t cbid,
                     const void *data) {
  gp_callback_subscriber *s = &subs[i];
  _Atomic uint64_t *w;
  uint64_t bit;
  if (!atomic_load_explicit(&s->active, memory_order_relaxed) ||
      !locate(s, domain, cbid, &w, &bit) ||
      !(atomic_load_explicit(w, memory_order_relaxed) & bit))
    return;
  atomic_fetch_add(&s->busy, 1);
  /* Checked again after counting in: unsubscribe clears active, then
   * waits for busy, so either it sees us or we see it. */
  if (atomic_load(&s->active) && inside[i] < UINT8_MAX) {
    inside[i]++;
    s->fn(s->user, (gp_callback_domain)domain, cbid, data);
    inside[i]--;
  }
  atomic_fetch_sub(&s->busy, 1);
}

/* See core.h. */
void gp__callback(uint32_t domain, uint32_t cbid, const void *data) {
  if (!domain_ok(domain))
    return;
  gp__cb_held *h = holding;
  if (h && h->n < GP__CB_HELD_MAX &&
      (domain == GP_CALLBACK_DOMAIN_RESOURCE ||
       domain == GP_CALLBACK_DOMAIN_SYNCHRONIZE)) {
    h->q[h->n].domain = domain;
    h->q[h->n].cbid = cbid;
    memcpy(&h->q[h->n].u, data,
           domain == GP_CALLBACK_DOMAIN_RESOURCE
               ? sizeof(gp_callback_resource_data)
               : sizeof(gp_callback_sync_data));
    h->n++;
    return;
  }
  for (uint32_t i = 0; i < NSUB; i++)
    call_one(i, domain, cbid, data);
}

/* See core.h. */
void gp__callback_hold(gp__cb_held *h) {
  h->n = 0;
  h->outer = holding;
  holding = h;
}

/* See core.h. */
void gp__callback_release(gp__cb_held *h) {
  holding = h->outer;
  /* A callback's own calls hold and deliver theirs in lists of their
   * own. */
  for (uint32_t k = 0; k < h->n; k++)
    for (uint32_t i = 0; i < NSUB; i++)
      call_one(i, h->q[k].domain, h->q[k].cbid, &h->q[k].u);
  h->n = 0;
}

/* See core.h. */
void gp__callback_api(gp__cb_api_call *c, uint32_t site, int32_t rc) {
  gp_callback_api_data *d = &c->d;
  if (site == GP_CALLBACK_SITE_ENTER)
    memset(c->data, 0, sizeof(c->data));
  d->site = site;
  d->return_value = site == GP_CALLBACK_SITE_EXIT ? rc : 0;
  uint32_t id = GP_CALLBACK_API_ID(d->api_domain, d->cbid);
  for (uint32_t i = 0; i < NSUB; i++) {
    d->correlation_data = &c->data[i];
    call_one(i, GP_CALLBACK_DOMAIN_API, id, d);
  }
}
