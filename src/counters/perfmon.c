/*
 * perfmon.c - perfmons: creation (validated in full before anything is
 * allocated), reference counting, the id table, reading values through
 * the provider's fences, the global perfmon, and switch statistics.
 *
 * The generic part owns the perfmon's identity and lifetime; the device's
 * provider owns its values (it switches, accumulates and reads them under
 * its own lock). The id table holds no reference: a lookup takes one only
 * from a perfmon whose count is not yet zero, so a perfmon being freed is
 * never handed out.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static gp_perfmon **table; /* index = id */
static uint32_t table_cap, next_id = 1;
static _Atomic uint64_t switches[GP__MAX_DEVICES];

/* Publishes pm under a new id. Returns GP_ENOMEM with nothing changed. */
static int table_insert(gp_perfmon *pm) {
  pthread_mutex_lock(&table_lock);
  if (next_id >= table_cap) {
    uint32_t ncap = table_cap ? table_cap * 2 : 64;
    gp_perfmon **n = realloc(table, ncap * sizeof(*n));
    if (!n) {
      pthread_mutex_unlock(&table_lock);
      return GP_ENOMEM;
    }
    memset(n + table_cap, 0, (ncap - table_cap) * sizeof(*n));
    table = n;
    table_cap = ncap;
  }
  pm->id = next_id++;
  table[pm->id] = pm;
  pthread_mutex_unlock(&table_lock);
  return 0;
}

static void table_remove(gp_perfmon *pm) {
  pthread_mutex_lock(&table_lock);
  if (pm->id < table_cap && table[pm->id] == pm)
    table[pm->id] = NULL;
  pthread_mutex_unlock(&table_lock);
}

static void perfmon_free(gp_perfmon *pm) {
  free(pm->ids);
  free(pm->index);
  free(pm->num);
  free(pm->den);
  free(pm);
}

/* See perfmon.h. */
int gp_perfmon_create(uint32_t device_id, const uint32_t *ids, size_t n,
                      gp_perfmon **out) {
  if (!ids || !out || n == 0)
    return GP_EINVAL;
  int rc = 0;
  const gp__catalog *cat = gp__catalog_get(device_id, &rc);
  if (!cat)
    return rc;
  rc = gp__catalog_check(cat, ids, n, NULL);
  if (rc != 0)
    return rc;
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(device_id, &prov);

  gp_perfmon *pm = calloc(1, sizeof(*pm));
  if (!pm)
    return GP_ENOMEM;
  pm->ids = malloc(n * sizeof(*pm->ids));
  pm->index = malloc(n * sizeof(*pm->index));
  pm->num = calloc(n, sizeof(*pm->num));
  pm->den = calloc(n, sizeof(*pm->den));
  if (!pm->ids || !pm->index || !pm->num || !pm->den) {
    rc = GP_ENOMEM;
    goto fail_free;
  }
  atomic_init(&pm->refs, 1);
  atomic_init(&pm->destroyed, 0);
  pm->device_id = device_id;
  pm->num_counters = (uint32_t)n;
  pm->cat = cat;
  memcpy(pm->ids, ids, n * sizeof(*ids));
  gp__catalog_check(cat, ids, n, pm->index);
  if (ops->perfmon_open) {
    rc = ops->perfmon_open(prov, pm);
    if (rc != 0)
      goto fail_free;
  }
  rc = table_insert(pm);
  if (rc != 0)
    goto fail_close;
  *out = pm;
  return 0;

fail_close:
  if (ops->perfmon_close)
    ops->perfmon_close(prov, pm);
fail_free:
  perfmon_free(pm);
  return rc;
}

/* See perfmon.h. */
gp_perfmon *gp_perfmon_get(gp_perfmon *pm) {
  if (pm)
    atomic_fetch_add_explicit(&pm->refs, 1, memory_order_relaxed);
  return pm;
}

/* See perfmon.h. */
void gp_perfmon_put(gp_perfmon *pm) {
  if (!pm || atomic_fetch_sub_explicit(&pm->refs, 1, memory_order_acq_rel) != 1)
    return;
  table_remove(pm);
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(pm->device_id, &prov);
  if (ops && ops->perfmon_close)
    ops->perfmon_close(prov, pm);
  perfmon_free(pm);
}

/* See perfmon.h. */
int gp_perfmon_destroy(gp_perfmon *pm) {
  if (!pm)
    return 0;
  if (atomic_exchange(&pm->destroyed, 1) == 0) {
    table_remove(pm);
    void *prov = NULL;
    const gp__provider_ops *ops = gp__provider_get(pm->device_id, &prov);
    /* Clearing fails harmlessly when pm is not the global perfmon. */
    if (ops && ops->set_global)
      ops->set_global(prov, pm->device_id, NULL, pm);
  }
  gp_perfmon_put(pm);
  return 0;
}

/* See perfmon.h. */
int gp_perfmon_lookup(uint32_t id, gp_perfmon **out) {
  if (!out)
    return GP_EINVAL;
  int rc = GP_ENOENT;
  pthread_mutex_lock(&table_lock);
  gp_perfmon *pm = id > 0 && id < table_cap ? table[id] : NULL;
  if (pm) {
    uint32_t r = atomic_load(&pm->refs);
    while (r > 0 && !atomic_compare_exchange_weak(&pm->refs, &r, r + 1)) {
    }
    if (r > 0) {
      *out = pm;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

/* See perfmon.h. */
uint32_t gp_perfmon_id(const gp_perfmon *pm) {
  return pm ? pm->id : 0;
}

/* See perfmon.h. */
int gp_perfmon_get_info(const gp_perfmon *pm, gp_perfmon_info *info) {
  if (!pm || !info)
    return GP_EINVAL;
  memset(info, 0, sizeof(*info));
  info->id = pm->id;
  info->device_id = pm->device_id;
  info->num_counters = pm->num_counters;
  info->destroyed = atomic_load(&pm->destroyed);
  info->counter_ids = pm->ids;
  return 0;
}

/* See countersInt.h. */
void gp__perfmon_values(const gp_perfmon *pm, gp_counter_value *out) {
  for (uint32_t i = 0; i < pm->num_counters; i++)
    gp__counter_finish(&pm->cat->counters[pm->index[i]], pm->num[i], pm->den[i],
                       &out[i]);
}

/* See perfmon.h. */
int gp_perfmon_get_values(gp_perfmon *pm, gp_counter_value *values,
                          uint32_t wait) {
  if (!pm || !values || wait > 1)
    return GP_EINVAL;
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(pm->device_id, &prov);
  if (!ops || !ops->perfmon_read)
    return GP_ENOTSUP;
  return ops->perfmon_read(prov, pm, wait != 0, values);
}

/* See perfmon.h. */
int gp_perfmon_set_global(gp_perfmon *pm) {
  if (!pm)
    return GP_EINVAL;
  if (atomic_load(&pm->destroyed))
    return GP_ENOENT;
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(pm->device_id, &prov);
  if (!ops || !ops->set_global || !pm->cat->has_scheduler)
    return GP_ENOTSUP;
  return ops->set_global(prov, pm->device_id, pm, NULL);
}

/* See perfmon.h. */
int gp_perfmon_clear_global(gp_perfmon *pm) {
  if (!pm)
    return GP_EINVAL;
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(pm->device_id, &prov);
  if (!ops || !ops->set_global || !pm->cat->has_scheduler)
    return GP_ESTATE;
  return ops->set_global(prov, pm->device_id, NULL, pm);
}

/* See countersInt.h. */
void gp__perfmon_count_switch(uint32_t device_id) {
  if (device_id < GP__MAX_DEVICES)
    atomic_fetch_add_explicit(&switches[device_id], 1, memory_order_relaxed);
}

/* See perfmon.h. */
int gp_perfmon_switch_count(uint32_t device_id, uint64_t *count) {
  int rc = 0;
  if (!gp__catalog_get(device_id, &rc))
    return rc;
  if (!count)
    return GP_EINVAL;
  *count = atomic_load(&switches[device_id]);
  return 0;
}
