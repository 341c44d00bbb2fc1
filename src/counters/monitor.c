/*
 * monitor.c - monitors: the application-facing counter API, shaped like
 * GL_AMD_performance_monitor and built on perfmons, the way Mesa's V3D
 * driver builds the extension on the kernel's perfmons.
 *
 * Groups are the device's counter blocks; a group's "max active" is the
 * block's capacity. A monitor belongs to one context. Between begin and
 * end, the context's jobs carry the monitor's perfmon (the provider binds
 * it to the context); the result is that perfmon's values, available once
 * the jobs submitted before the end have completed: the fence the Mesa
 * driver keeps for the last job is the perfmon's own "pending" state here.
 * One monitor per context may be active at a time.
 */
#include <float.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"

struct gp_monitor {
  uint32_t context_id;
  uint32_t device_id;
  const gp__catalog *cat;
  uint8_t *selected; /* by catalog index */
  bool active;
  gp_perfmon *pm; /* of the last begin; NULL if none */
};

#define MAX_ACTIVE 256

static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static gp_monitor *active_mons[MAX_ACTIVE]; /* one per context at most */

/* ------------------------------------------------------------------ */
/* Groups and counters                                                  */

static int group_of(uint32_t device_id, uint32_t group,
                    const gp__catalog **cat) {
  int rc = 0;
  *cat = gp__catalog_get(device_id, &rc);
  if (!*cat)
    return rc;
  return group < (*cat)->num_blocks ? 0 : GP_ENOENT;
}

/* See perfmon.h. */
int gp_monitor_get_groups(uint32_t device_id, uint32_t *num_groups,
                          uint32_t *groups, size_t cap) {
  int rc = 0;
  const gp__catalog *cat = gp__catalog_get(device_id, &rc);
  if (!cat)
    return rc;
  if (!num_groups || (cap > 0 && !groups))
    return GP_EINVAL;
  *num_groups = cat->num_blocks;
  for (uint32_t i = 0; i < cat->num_blocks && i < cap; i++)
    groups[i] = cat->blocks[i].id;
  return 0;
}

/* See perfmon.h. */
int gp_monitor_get_group_info(uint32_t device_id, uint32_t group,
                              gp_monitor_group_info *info) {
  const gp__catalog *cat;
  int rc = group_of(device_id, group, &cat);
  if (rc != 0)
    return rc;
  if (!info)
    return GP_EINVAL;
  memset(info, 0, sizeof(*info));
  info->id = group;
  info->max_active = cat->blocks[group].capacity;
  info->name = cat->blocks[group].name;
  info->description = cat->blocks[group].description;
  for (uint32_t i = 0; i < cat->num_counters; i++)
    if (cat->counters[i].info.block_id == group)
      info->num_counters++;
  return 0;
}

/* See perfmon.h. */
int gp_monitor_get_counters(uint32_t device_id, uint32_t group, uint32_t *ids,
                            size_t cap, size_t *count) {
  const gp__catalog *cat;
  int rc = group_of(device_id, group, &cat);
  if (rc != 0)
    return rc;
  if (!count || (cap > 0 && !ids))
    return GP_EINVAL;
  size_t n = 0;
  for (uint32_t i = 0; i < cat->num_counters; i++) {
    if (cat->counters[i].info.block_id != group)
      continue;
    if (n < cap)
      ids[n] = cat->counters[i].info.id;
    n++;
  }
  *count = n;
  return 0;
}

/* See perfmon.h. */
int gp_monitor_get_counter_info(uint32_t device_id, uint32_t group,
                                uint32_t counter,
                                gp_monitor_counter_info *info) {
  const gp__catalog *cat;
  int rc = group_of(device_id, group, &cat);
  if (rc != 0)
    return rc;
  if (!info)
    return GP_EINVAL;
  int k = gp__catalog_find(cat, counter);
  if (k < 0 || cat->counters[k].info.block_id != group)
    return GP_ENOCOUNTER;
  const gp_counter_info *ci = &cat->counters[k].info;
  memset(info, 0, sizeof(*info));
  info->id = ci->id;
  info->group = group;
  info->type = ci->type;
  info->name = ci->name;
  info->description = ci->description;
  info->range_min = 0.0;
  if (ci->type == GP_COUNTER_TYPE_PERCENT)
    info->range_max = 100.0;
  else if (ci->peak_value > 0.0)
    info->range_max = ci->peak_value;
  else if (ci->type == GP_COUNTER_TYPE_INT64)
    info->range_max = 9223372036854775807.0;
  else
    info->range_max = DBL_MAX;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Monitors                                                             */

static int find_context(uint32_t context_id, uint32_t *device_id) {
  uint32_t n = 0;
  gp_device_count(&n);
  for (uint32_t d = 0; d < n && d < GP__MAX_DEVICES; d++) {
    void *prov = NULL;
    const gp__provider_ops *ops = gp__provider_get(d, &prov);
    if (!ops || !ops->context_device)
      continue;
    /* Providers serve several devices: ask once per provider state. */
    if (ops->context_device(prov, context_id, device_id) == 0)
      return 0;
  }
  return GP_ENOENT;
}

/* See perfmon.h. */
int gp_monitor_create(uint32_t context_id, gp_monitor **out) {
  if (!out)
    return GP_EINVAL;
  uint32_t dev = 0;
  int rc = find_context(context_id, &dev);
  if (rc != 0)
    return rc;
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  if (!cat || cat->num_counters == 0)
    return GP_ENOTSUP;
  gp_monitor *m = calloc(1, sizeof(*m));
  if (!m)
    return GP_ENOMEM;
  m->selected = calloc(cat->num_counters, 1);
  if (!m->selected) {
    free(m);
    return GP_ENOMEM;
  }
  m->context_id = context_id;
  m->device_id = dev;
  m->cat = cat;
  *out = m;
  return 0;
}

static int slot_of(const gp_monitor *m) {
  for (int i = 0; i < MAX_ACTIVE; i++)
    if (active_mons[i] && active_mons[i]->context_id == m->context_id)
      return i;
  return -1;
}

static int end_locked(gp_monitor *m) {
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(m->device_id, &prov);
  int rc = ops->context_bind(prov, m->context_id, NULL);
  /* The context may be gone: its jobs then carry nothing anyway. */
  (void)rc;
  int k = slot_of(m);
  if (k >= 0 && active_mons[k] == m)
    active_mons[k] = NULL;
  m->active = false;
  return 0;
}

/* See perfmon.h. */
int gp_monitor_destroy(gp_monitor *m) {
  if (!m)
    return 0;
  pthread_mutex_lock(&mon_lock);
  if (m->active)
    end_locked(m);
  pthread_mutex_unlock(&mon_lock);
  gp_perfmon_destroy(m->pm);
  free(m->selected);
  free(m);
  return 0;
}

/* See perfmon.h. */
int gp_monitor_select_counters(gp_monitor *m, uint32_t enable, uint32_t group,
                               const uint32_t *ids, size_t n) {
  if (!m || enable > 1 || (n > 0 && !ids))
    return GP_EINVAL;
  const gp__catalog *cat = m->cat;
  pthread_mutex_lock(&mon_lock);
  int rc = 0;
  if (m->active) {
    rc = GP_ESTATE;
    goto out;
  }
  if (group >= cat->num_blocks) {
    rc = GP_ENOENT;
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    int k = gp__catalog_find(cat, ids[i]);
    if (k < 0 || cat->counters[k].info.block_id != group) {
      rc = GP_ENOCOUNTER;
      goto out;
    }
  }
  if (enable) {
    /* Count what the selection would become before changing it. */
    uint32_t in_group = 0, total = 0;
    for (uint32_t i = 0; i < cat->num_counters; i++) {
      bool sel = m->selected[i];
      for (size_t j = 0; j < n && !sel; j++)
        sel = cat->counters[i].info.id == ids[j];
      if (!sel)
        continue;
      total++;
      if (cat->counters[i].info.block_id == group)
        in_group++;
    }
    if (in_group > cat->blocks[group].capacity || total > cat->max_active) {
      rc = GP_ECAPACITY;
      goto out;
    }
  }
  for (size_t i = 0; i < n; i++)
    m->selected[gp__catalog_find(cat, ids[i])] = (uint8_t)enable;
  gp_perfmon_destroy(m->pm);
  m->pm = NULL;
out:
  pthread_mutex_unlock(&mon_lock);
  return rc;
}

/* Selected ids in result order: by group, then by id. */
static size_t selected_ids(const gp_monitor *m, uint32_t *ids) {
  size_t n = 0;
  for (uint32_t b = 0; b < m->cat->num_blocks; b++) {
    size_t first = n;
    for (uint32_t i = 0; i < m->cat->num_counters; i++)
      if (m->selected[i] && m->cat->counters[i].info.block_id == b)
        ids[n++] = m->cat->counters[i].info.id;
    /* Insertion sort by id within the group (groups are small). */
    for (size_t i = first + 1; i < n; i++) {
      uint32_t x = ids[i];
      size_t j = i;
      while (j > first && ids[j - 1] > x) {
        ids[j] = ids[j - 1];
        j--;
      }
      ids[j] = x;
    }
  }
  return n;
}

/* See perfmon.h. */
int gp_monitor_begin(gp_monitor *m) {
  if (!m)
    return GP_EINVAL;
  uint32_t ids[GP_PERFMON_MAX_COUNTERS];
  int rc = 0;
  pthread_mutex_lock(&mon_lock);
  if (m->active) {
    rc = GP_ESTATE;
    goto out;
  }
  if (slot_of(m) >= 0) {
    rc = GP_EBUSY;
    goto out;
  }
  int free_slot = -1;
  for (int i = 0; i < MAX_ACTIVE && free_slot < 0; i++)
    if (!active_mons[i])
      free_slot = i;
  if (free_slot < 0) {
    rc = GP_ENOSPC;
    goto out;
  }
  size_t n = selected_ids(m, ids);
  if (n == 0) {
    rc = GP_EINVAL;
    goto out;
  }
  gp_perfmon *pm = NULL;
  rc = gp_perfmon_create(m->device_id, ids, n, &pm);
  if (rc != 0)
    goto out;
  void *prov = NULL;
  const gp__provider_ops *ops = gp__provider_get(m->device_id, &prov);
  rc = ops->context_bind ? ops->context_bind(prov, m->context_id, pm)
                         : GP_ENOTSUP;
  if (rc != 0) {
    gp_perfmon_destroy(pm);
    goto out;
  }
  gp_perfmon_destroy(m->pm);
  m->pm = pm;
  m->active = true;
  active_mons[free_slot] = m;
out:
  pthread_mutex_unlock(&mon_lock);
  return rc;
}

/* See perfmon.h. */
int gp_monitor_end(gp_monitor *m) {
  if (!m)
    return GP_EINVAL;
  pthread_mutex_lock(&mon_lock);
  int rc = m->active ? end_locked(m) : GP_ESTATE;
  pthread_mutex_unlock(&mon_lock);
  return rc;
}

/* See perfmon.h. */
int gp_monitor_get_result(gp_monitor *m, uint32_t pname, void *data,
                          size_t size, size_t *written) {
  if (!m || !data || pname > GP_MONITOR_RESULT)
    return GP_EINVAL;
  if (written)
    *written = 0;
  pthread_mutex_lock(&mon_lock);
  bool ready = !m->active && m->pm;
  gp_perfmon *pm = gp_perfmon_get(m->pm);
  pthread_mutex_unlock(&mon_lock);
  int rc = 0;
  if (!ready) {
    rc = GP_ESTATE;
    goto out;
  }
  gp_counter_value vals[GP_PERFMON_MAX_COUNTERS];
  uint32_t n = pm->num_counters;
  if (pname != GP_MONITOR_RESULT) {
    if (size < sizeof(uint32_t)) {
      rc = GP_ESIZE;
      goto out;
    }
    uint32_t v;
    if (pname == GP_MONITOR_RESULT_SIZE) {
      v = n * (uint32_t)sizeof(gp_monitor_result);
    } else {
      rc = gp_perfmon_get_values(pm, vals, 0);
      if (rc != 0 && rc != GP_EAGAIN)
        goto out;
      v = rc == 0;
      rc = 0;
    }
    memcpy(data, &v, sizeof(v));
    if (written)
      *written = sizeof(v);
    goto out;
  }
  if (size < sizeof(gp_monitor_result)) {
    rc = GP_ESIZE;
    goto out;
  }
  rc = gp_perfmon_get_values(pm, vals, 1);
  if (rc != 0)
    goto out;
  size_t fit = size / sizeof(gp_monitor_result);
  gp_monitor_result *res = data;
  for (uint32_t i = 0; i < n && i < fit; i++) {
    const gp_counter_info *ci = &pm->cat->counters[pm->index[i]].info;
    memset(&res[i], 0, sizeof(res[i]));
    res[i].group = ci->block_id;
    res[i].counter = ci->id;
    res[i].type = ci->type;
    res[i].value = vals[i];
  }
  if (written)
    *written = (fit < n ? fit : n) * sizeof(gp_monitor_result);
out:
  gp_perfmon_put(pm);
  return rc;
}
