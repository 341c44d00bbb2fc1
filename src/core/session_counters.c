/*
 * session_counters.c - the counters side of tracing sessions: which
 * gpu.counters data source applies to a device (vendor suffixes), the
 * counter ids its names, globs or ids select there (or the catalog's
 * defaults), and starting and stopping sampling (counters.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sessionInt.h"

/* ------------------------------------------------------------------ */
/* Counters                                                             */

static bool contains_ci(const char *hay, const char *needle) {
  if (!hay || !*needle)
    return !*needle;
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return true;
  }
  return false;
}

/* The gpu.counters data source that applies to a device: one whose vendor
 * suffix the device matches, else the one without a suffix. */
static bool counters_source_for(const gp_trace_config *cfg, uint32_t dev,
                                gp_data_source_info *out) {
  gp_device_info di;
  if (gp_device_get_info(dev, &di) != 0)
    return false;
  bool generic = false;
  gp_data_source_info ds, g;
  for (uint32_t i = 0; gp_trace_config_get_data_source(cfg, i, &ds) == 0; i++) {
    if (ds.kind != GP_DATA_SOURCE_GPU_COUNTERS)
      continue;
    if (!*ds.vendor) {
      g = ds;
      generic = true;
    } else if (contains_ci(di.name, ds.vendor) ||
               contains_ci(di.vendor, ds.vendor) ||
               contains_ci(di.model, ds.vendor) ||
               contains_ci(di.architecture, ds.vendor)) {
      *out = ds;
      return true;
    }
  }
  if (generic)
    *out = g;
  return generic;
}

/* Resolves the counters ds asks for on dev into ids. Returns how many,
 * or a negative error. `matched[i]` is set for each name that matched. */
static int resolve(uint32_t dev, const gp_data_source_info *ds,
                   const gp_counter_catalog_info *cat, uint32_t *ids,
                   size_t cap, bool *matched) {
  const gp_counter_config *cc = &ds->counters;
  size_t n = 0;
  if (cc->num_counter_ids) {
    for (size_t i = 0; i < cc->num_counter_ids && n < cap; i++) {
      gp_counter_info ci;
      if (gp_counter_lookup(dev, cc->counter_ids[i], &ci) == 0) {
        ids[n++] = cc->counter_ids[i];
        if (matched)
          matched[i] = true;
      }
    }
  } else if (cc->num_counter_names) {
    for (size_t i = 0; i < cc->num_counter_names; i++) {
      size_t got = 0;
      int rc = gp_counter_select(dev, &cc->counter_names[i], 1, ids + n,
                                 cap - n, &got);
      if (rc == GP_ENOCOUNTER)
        continue;
      if (rc != 0)
        return rc;
      if (matched)
        matched[i] = true;
      /* Keep ids unique across names. */
      size_t base = n;
      for (size_t j = 0; j < got; j++) {
        uint32_t v = ids[base + j];
        bool dup = false;
        for (size_t k = 0; k < n && !dup; k++)
          dup = ids[k] == v;
        if (!dup)
          ids[n++] = v;
      }
    }
  } else {
    for (uint32_t i = 0; i < cat->num_counters && n < cap; i++) {
      gp_counter_info ci;
      if (gp_counter_get(dev, i, &ci) == 0 && ci.select_by_default)
        ids[n++] = ci.id;
    }
  }
  return (int)n;
}

/* Starts sampling on dev for s. Returns 0 if started or nothing applies. */
/* See sessionInt.h. */
int gp__session_counters_on(gp_session *s, uint32_t dev, bool *matched) {
  gp_data_source_info ds;
  gp_counter_catalog_info cat;
  if (dev >= MAX_DEV || (s->counters_on & (1ull << dev)) ||
      !counters_source_for(s->cfg, dev, &ds))
    return 0;
  if (gp_counter_catalog(dev, &cat) != 0)
    return 0; /* this device has no counters */
  uint32_t ids[512];
  int n = resolve(dev, &ds, &cat, ids, GP_ARRAY_SIZE(ids), matched);
  if (n <= 0)
    return n;
  gp_counter_config cc = ds.counters;
  cc.counter_ids = ids;
  cc.num_counter_ids = (size_t)n;
  cc.counter_names = NULL;
  cc.num_counter_names = 0;
  int rc = gp_counters_start(dev, &cc);
  if (rc != 0)
    return rc;
  s->counters_on |= 1ull << dev;
  s->counters_ever |= 1ull << dev;
  gp__tw_select_counters(s->w, dev, ids, (size_t)n, cc.counter_period_ns > 0,
                         cc.instrumented != 0);
  return 0;
}

/* Starts counters on the devices that exist now; checks that every name
 * matched some device when devices with counters exist. */
/* See sessionInt.h. */
int gp__session_counters_start(gp_session *s, const gp_session_options *o) {
  gp_data_source_info ds;
  bool want = false;
  for (uint32_t i = 0; gp_trace_config_get_data_source(s->cfg, i, &ds) == 0;
       i++)
    want |= ds.kind == GP_DATA_SOURCE_GPU_COUNTERS;
  if (!want)
    return 0;
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  bool any_catalog = false;
  for (uint32_t d = 0; d < ndev && d < MAX_DEV; d++) {
    gp_counter_catalog_info cat;
    if (gp_counter_catalog(d, &cat) == 0)
      any_catalog = true;
  }
  for (uint32_t i = 0; gp_trace_config_get_data_source(s->cfg, i, &ds) == 0;
       i++) {
    if (ds.kind != GP_DATA_SOURCE_GPU_COUNTERS)
      continue;
    size_t nsel = ds.counters.num_counter_ids + ds.counters.num_counter_names;
    bool *matched = calloc(nsel + 1, sizeof(bool));
    if (!matched)
      return GP_ENOMEM;
    for (uint32_t d = 0; d < ndev && d < MAX_DEV; d++) {
      gp_data_source_info applies;
      if (!counters_source_for(s->cfg, d, &applies) ||
          strcmp(applies.name, ds.name) != 0)
        continue;
      int rc = gp__session_counters_on(s, d, matched);
      if (rc != 0) {
        gp_device_info di;
        gp_device_get_info(d, &di);
        gp__session_error(
            o, "cannot sample the counters of %s on device %u (%s): %s",
            ds.name, d, di.name, gp_strerror(rc));
        free(matched);
        return rc;
      }
    }
    for (size_t k = 0; any_catalog && k < nsel; k++) {
      if (matched[k])
        continue;
      if (ds.counters.num_counter_names)
        gp__session_error(o, "%s: no device has a counter matching '%s'",
                          ds.name, ds.counters.counter_names[k]);
      else
        gp__session_error(o, "%s: no device has a counter with id %u", ds.name,
                          ds.counters.counter_ids[k]);
      free(matched);
      return GP_ENOCOUNTER;
    }
    free(matched);
  }
  return 0;
}

/* See sessionInt.h. */
void gp__session_counters_stop(gp_session *s) {
  for (uint32_t d = 0; d < MAX_DEV; d++)
    if (s->counters_on & (1ull << d))
      gp_counters_stop(d);
  s->counters_on = 0;
}
