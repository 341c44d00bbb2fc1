/*
 * catalog.c - the registry of counter catalogs and the public calls that
 * read it: catalog, counters, blocks, groups, selection by name or glob,
 * unit and type names.
 *
 * A backend that can count publishes a catalog for a device it has
 * registered (gp__counters_register); from then on the catalog is
 * immutable and read without locks. A slot is published with a release
 * store, so a reader that sees the pointer sees the whole entry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"

typedef struct entry {
  const gp__catalog *cat;
  const gp__provider_ops *ops;
  void *prov;
} entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static entry entries[GP__MAX_DEVICES];
static _Atomic(const gp__catalog *) published[GP__MAX_DEVICES];
#define MAX_HOOKS 8
static void (*hooks[MAX_HOOKS])(uint32_t device_id);

/* See countersInt.h. */
int gp__counters_register(uint32_t device_id, const gp__catalog *cat,
                          const gp__provider_ops *ops, void *prov) {
  gp_device_info di;
  if (!cat || !ops || (cat->num_counters > 0 && !cat->counters))
    return GP_EINVAL;
  if (device_id >= GP__MAX_DEVICES || gp_device_get_info(device_id, &di) != 0)
    return GP_ENODEV;
  if (cat->num_blocks > GP_PERFMON_MAX_COUNTERS ||
      (cat->num_blocks > 0 && !cat->blocks))
    return GP_EINVAL;
  for (uint32_t b = 0; b < cat->num_blocks; b++)
    if (cat->blocks[b].id != b)
      return GP_EINVAL;
  for (uint32_t i = 0; i < cat->num_counters; i++) {
    if (cat->counters[i].info.block_id >= cat->num_blocks)
      return GP_EINVAL;
    for (uint32_t j = 0; j < i; j++)
      if (cat->counters[j].info.id == cat->counters[i].info.id)
        return GP_EINVAL;
  }
  pthread_mutex_lock(&reg_lock);
  if (atomic_load(&published[device_id])) {
    pthread_mutex_unlock(&reg_lock);
    return GP_EEXIST;
  }
  entries[device_id] = (entry){cat, ops, prov};
  atomic_store_explicit(&published[device_id], cat, memory_order_release);
  pthread_mutex_unlock(&reg_lock);
  return 0;
}

/* See countersInt.h. */
void gp__counters_announce(uint32_t device_id) {
  void (*fns[MAX_HOOKS])(uint32_t);
  pthread_mutex_lock(&reg_lock);
  memcpy(fns, hooks, sizeof(fns));
  pthread_mutex_unlock(&reg_lock);
  if (!gp__catalog_get(device_id, NULL))
    return;
  for (int i = 0; i < MAX_HOOKS; i++)
    if (fns[i])
      fns[i](device_id);
}

/* See countersInt.h. */
int gp__counters_add_device_hook(void (*fn)(uint32_t device_id)) {
  int rc = GP_ENOSPC;
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < MAX_HOOKS && rc != 0; i++) {
    if (!hooks[i]) {
      hooks[i] = fn;
      rc = 0;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  return rc;
}

/* See countersInt.h. */
void gp__counters_remove_device_hook(void (*fn)(uint32_t device_id)) {
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < MAX_HOOKS; i++)
    if (hooks[i] == fn)
      hooks[i] = NULL;
  pthread_mutex_unlock(&reg_lock);
}

/* See countersInt.h. */
const gp__catalog *gp__catalog_get(uint32_t device_id, int *err) {
  uint32_t n = 0;
  gp_device_count(&n);
  if (device_id >= n || device_id >= GP__MAX_DEVICES) {
    if (err)
      *err = GP_ENODEV;
    return NULL;
  }
  const gp__catalog *c =
      atomic_load_explicit(&published[device_id], memory_order_acquire);
  if (!c && err)
    *err = GP_ENOENT;
  return c;
}

/* See countersInt.h. */
const gp__provider_ops *gp__provider_get(uint32_t device_id, void **prov) {
  if (!gp__catalog_get(device_id, NULL))
    return NULL;
  if (prov)
    *prov = entries[device_id].prov;
  return entries[device_id].ops;
}

/* See countersInt.h. */
int gp__catalog_find(const gp__catalog *cat, uint32_t counter_id) {
  for (uint32_t i = 0; i < cat->num_counters; i++)
    if (cat->counters[i].info.id == counter_id)
      return (int)i;
  return -1;
}

/* See countersInt.h. */
int gp__catalog_check(const gp__catalog *cat, const uint32_t *ids, size_t n,
                      uint32_t *index) {
  if (n > 0 && !ids)
    return GP_EINVAL;
  uint32_t per_block[GP_PERFMON_MAX_COUNTERS] = {0};
  /* Unknown ids first: they are the most useful error to report. */
  for (size_t i = 0; i < n; i++)
    if (gp__catalog_find(cat, ids[i]) < 0)
      return GP_ENOCOUNTER;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < i; j++)
      if (ids[i] == ids[j])
        return GP_EINVAL;
  if (n > cat->max_active || n > GP_PERFMON_MAX_COUNTERS)
    return GP_ECAPACITY;
  for (size_t i = 0; i < n; i++) {
    int k = gp__catalog_find(cat, ids[i]);
    uint32_t b = cat->counters[k].info.block_id;
    if (b < GP_PERFMON_MAX_COUNTERS && ++per_block[b] > cat->blocks[b].capacity)
      return GP_ECAPACITY;
    if (index)
      index[i] = (uint32_t)k;
  }
  return 0;
}

static bool has_glob(const char *s) {
  return strpbrk(s, "*?[") != NULL;
}

/* See countersInt.h. */
int gp__catalog_select(const gp__catalog *cat, const char *const *names,
                       size_t num_names, bool lenient, uint32_t *ids,
                       size_t cap, size_t *count) {
  if ((num_names > 0 && !names) || !count || (cap > 0 && !ids))
    return GP_EINVAL;
  for (size_t j = 0; j < num_names; j++)
    if (!names[j] || !*names[j])
      return GP_EINVAL;
  /* Every name must match something before anything is stored. */
  if (!lenient) {
    for (size_t j = 0; j < num_names; j++) {
      bool hit = false;
      for (uint32_t i = 0; i < cat->num_counters && !hit; i++) {
        const char *cn = cat->counters[i].info.name;
        hit = has_glob(names[j]) ? gp__glob_match(names[j], cn)
                                 : strcmp(names[j], cn) == 0;
      }
      if (!hit)
        return GP_ENOCOUNTER;
    }
  }
  size_t n = 0;
  for (uint32_t i = 0; i < cat->num_counters; i++) {
    const char *cn = cat->counters[i].info.name;
    bool hit = false;
    for (size_t j = 0; j < num_names && !hit; j++)
      hit = has_glob(names[j]) ? gp__glob_match(names[j], cn)
                               : strcmp(names[j], cn) == 0;
    if (hit)
      n++;
  }
  if (n > cap)
    return GP_ENOSPC;
  size_t k = 0;
  for (uint32_t i = 0; i < cat->num_counters; i++) {
    const char *cn = cat->counters[i].info.name;
    bool hit = false;
    for (size_t j = 0; j < num_names && !hit; j++)
      hit = has_glob(names[j]) ? gp__glob_match(names[j], cn)
                               : strcmp(names[j], cn) == 0;
    if (hit)
      ids[k++] = cat->counters[i].info.id;
  }
  *count = k;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Public reading                                                       */

/* See counters.h. */
int gp_counter_catalog(uint32_t device_id, gp_counter_catalog_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  memset(info, 0, sizeof(*info));
  info->num_counters = c->num_counters;
  info->num_blocks = c->num_blocks;
  info->num_groups = c->num_groups;
  info->max_active = c->max_active;
  info->min_sampling_period_ns = c->min_period_ns;
  info->max_sampling_period_ns = c->max_period_ns;
  info->supports_instrumented = c->supports_instrumented;
  info->supports_multiplex = c->supports_multiplex;
  return 0;
}

/* See counters.h. */
int gp_counter_get(uint32_t device_id, uint32_t index, gp_counter_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  if (index >= c->num_counters)
    return GP_ENOENT;
  *info = c->counters[index].info;
  info->device_id = device_id;
  return 0;
}

/* See counters.h. */
int gp_counter_lookup(uint32_t device_id, uint32_t counter_id,
                      gp_counter_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  int k = gp__catalog_find(c, counter_id);
  if (k < 0)
    return GP_ENOCOUNTER;
  *info = c->counters[k].info;
  info->device_id = device_id;
  return 0;
}

/* See counters.h. */
int gp_counter_block_get(uint32_t device_id, uint32_t index,
                         gp_counter_block_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  if (index >= c->num_blocks)
    return GP_ENOENT;
  *info = c->blocks[index];
  info->num_counters = 0;
  for (uint32_t i = 0; i < c->num_counters; i++)
    if (c->counters[i].info.block_id == c->blocks[index].id)
      info->num_counters++;
  return 0;
}

/* See counters.h. */
int gp_counter_group_get(uint32_t device_id, uint32_t index,
                         gp_counter_group_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  if (index >= c->num_groups)
    return GP_ENOENT;
  *info = c->groups[index];
  return 0;
}

/* See counters.h. */
int gp_counter_group_lookup(uint32_t device_id, uint32_t group_id,
                            gp_counter_group_info *info) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  if (!info)
    return GP_EINVAL;
  for (uint32_t i = 0; i < c->num_groups; i++) {
    if (c->groups[i].id == group_id) {
      *info = c->groups[i];
      return 0;
    }
  }
  return GP_ENOENT;
}

/* See counters.h. */
int gp_counter_select(uint32_t device_id, const char *const *names,
                      size_t num_names, uint32_t *ids, size_t cap,
                      size_t *count) {
  int err = 0;
  const gp__catalog *c = gp__catalog_get(device_id, &err);
  if (!c)
    return err;
  return gp__catalog_select(c, names, num_names, false, ids, cap, count);
}

static const char *const unit_names[] = {
    "NONE",        "BIT",         "KILOBIT",   "MEGABIT",   "GIGABIT",
    "TERABIT",     "PETABIT",     "BYTE",      "KILOBYTE",  "MEGABYTE",
    "GIGABYTE",    "TERABYTE",    "PETABYTE",  "HERTZ",     "KILOHERTZ",
    "MEGAHERTZ",   "GIGAHERTZ",   "TERAHERTZ", "PETAHERTZ", "NANOSECOND",
    "MICROSECOND", "MILLISECOND", "SECOND",    "MINUTE",    "HOUR",
    "VERTEX",      "PIXEL",       "TRIANGLE",  "MILLIWATT", "WATT",
    "KILOWATT",    "JOULE",       "VOLT",      "AMPERE",    "CELSIUS",
    "FAHRENHEIT",  "KELVIN",      "PERCENT",   "PRIMITIVE", "FRAGMENT",
    "INSTRUCTION"};

/* See counters.h. */
const char *gp_unit_name(uint32_t unit) {
  return unit < GP_ARRAY_SIZE(unit_names) ? unit_names[unit] : "UNKNOWN";
}

/* See counters.h. */
const char *gp_counter_type_name(uint32_t type) {
  switch (type) {
  case GP_COUNTER_TYPE_INT64:
    return "int64";
  case GP_COUNTER_TYPE_DOUBLE:
    return "double";
  case GP_COUNTER_TYPE_PERCENT:
    return "percent";
  default:
    return "unknown";
  }
}
