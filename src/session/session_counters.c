/*
 * session_counters.c - the counters side of tracing sessions: which
 * gpu.counters data source applies to a device (vendor suffixes), the
 * counter ids its names, globs or ids select there (or the catalog's
 * defaults), and starting and stopping sampling (counters.h); and what a
 * session says of the vendor suffixes (of gpu.counters and
 * gpu.renderstages) that named no device.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/linux/drm.h"
#include "counters/countersInt.h"
#include "counters/derived.h"
#include "perfetto/tconfig.h"
#include "sessionInt.h"

/* Sessions that start counters on devices announced later (the simulated
 * GPUs announce their catalogs on first use). The counters layer calls
 * the hook on the announcing thread, holding no lock: sampling starts at
 * once, at the same point of a virtual-time run every time. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static gp_session *watching[MAX_SESSIONS];
static bool hooked;

static void on_catalog(uint32_t device_id) {
  pthread_mutex_lock(&watch_lock);
  for (int i = 0; i < MAX_SESSIONS; i++) {
    gp_session *s = watching[i];
    if (!s)
      continue;
    int rc = gp__session_counters_on(s, device_id);
    if (rc != 0 && s->counter_error == 0)
      s->counter_error = rc;
  }
  pthread_mutex_unlock(&watch_lock);
}

/* See sessionInt.h. */
void gp__session_counters_unwatch(gp_session *s) {
  pthread_mutex_lock(&watch_lock);
  for (int i = 0; i < MAX_SESSIONS; i++)
    if (watching[i] == s)
      watching[i] = NULL;
  pthread_mutex_unlock(&watch_lock);
}

/* See sessionInt.h. */
void gp__session_counters_after_fork(void) {
  pthread_mutex_init(&watch_lock, NULL);
}

/* ------------------------------------------------------------------ */
/* Counters                                                             */

/* The gpu.counters data source that applies to a device (tconfig.h: its
 * vendor suffix names the device, else the one without a suffix). */
static bool counters_source_for(gp_session *s, uint32_t dev,
                                gp_data_source_info *out, uint32_t *index) {
  gp_device_info di;
  if (gp_device_get_info(dev, &di) != 0)
    return false;
  int i = gp__trace_config_source_for(s->cfg, GP_DATA_SOURCE_GPU_COUNTERS, &di);
  if (i < 0 || gp_trace_config_get_data_source(s->cfg, (uint32_t)i, out) != 0)
    return false;
  *index = (uint32_t)i;
  if (*out->vendor && *index < 64)
    s->suffix_hit |= 1ull << *index;
  return true;
}

/* Resolves the counters ds asks for on dev into ids. Returns how many,
 * or a negative error. `matched[i]` is set for each name that matched. */
static int resolve(uint32_t dev, const gp_data_source_info *ds,
                   const gp_counter_catalog_info *cat, uint32_t *ids,
                   size_t cap, bool *matched, size_t nmatched) {
  const gp_counter_config *cc = &ds->counters;
  size_t n = 0;
  if (cc->num_counter_ids) {
    for (size_t i = 0; i < cc->num_counter_ids && n < cap; i++) {
      gp_counter_info ci;
      if (gp_counter_lookup(dev, cc->counter_ids[i], &ci) == 0) {
        ids[n++] = cc->counter_ids[i];
        if (matched && i < nmatched)
          matched[i] = true;
      }
    }
  } else if (cc->num_counter_names) {
    for (size_t i = 0; i < cc->num_counter_names; i++) {
      size_t got = 0;
      int rc;
      if (strcmp(cc->counter_names[i], "default") == 0) {
        /* The device's default counters, next to the names (-e default). */
        for (uint32_t j = 0; j < cat->num_counters && n + got < cap; j++) {
          gp_counter_info ci;
          if (gp_counter_get(dev, j, &ci) == 0 && ci.select_by_default)
            ids[n + got++] = ci.id;
        }
        rc = 0;
      } else {
        rc = gp_counter_select(dev, &cc->counter_names[i], 1, ids + n, cap - n,
                               &got);
      }
      if (rc == GP_ENOCOUNTER)
        continue;
      if (rc != 0)
        return rc;
      if (matched && i < nmatched)
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

/* Tells the writer which of ids (on dev) get periodic samples and which
 * per-activity ones. A counter sampled one way only (a Vulkan device's
 * pipeline statistics and Utilization) gets that one spec whatever cc
 * asked for, so that its track keeps its plain name. */
static void select_for_writer(gp_session *s, uint32_t dev, const uint32_t *ids,
                              size_t n, const gp_counter_config *cc) {
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  for (size_t i = 0; i < n; i++) {
    int idx = cat ? gp__catalog_find(cat, ids[i]) : -1;
    uint32_t how = idx >= 0 ? cat->counters[idx].sampled : GP__SAMPLED_ANY;
    bool periodic = how == GP__SAMPLED_PERIODIC ||
                    (how == GP__SAMPLED_ANY && cc->counter_period_ns > 0);
    bool instr = how == GP__SAMPLED_INSTRUMENTED ||
                 (how == GP__SAMPLED_ANY && cc->instrumented);
    gp__tw_select_counters(s->w, dev, ids + i, 1, periodic, instr);
  }
}

/* Keeps the first reason counters could not be sampled, naming the
 * device and the counters, for the warning at the end. */
static void why_not_sampled(gp_session *s, uint32_t dev, const uint32_t *ids,
                            size_t n, int rc) {
  if (s->counter_why[0])
    return;
  gp_device_info di;
  if (gp_device_get_info(dev, &di) != 0)
    di.name = "?";
  size_t o =
      (size_t)snprintf(s->counter_why, sizeof(s->counter_why),
                       "%s (device %u): %s: ", di.name, dev, gp_strerror(rc));
  for (size_t i = 0; i < n && o < sizeof(s->counter_why); i++) {
    gp_counter_info ci;
    const char *name = gp_counter_lookup(dev, ids[i], &ci) == 0 ? ci.name : "?";
    o += (size_t)snprintf(s->counter_why + o, sizeof(s->counter_why) - o,
                          "%s%s", i ? ", " : "", name);
  }
}

/* See sessionInt.h. */
int gp__session_counters_on(gp_session *s, uint32_t dev) {
  gp_data_source_info ds;
  gp_counter_catalog_info cat;
  uint32_t index = 0;
  if (dev >= MAX_DEV || (s->counters_on & (1ull << dev)) ||
      !counters_source_for(s, dev, &ds, &index))
    return 0;
  if (gp_counter_catalog(dev, &cat) != 0)
    return 0; /* this device has no counters */
  s->saw_catalog = true;
  /* The config holds at most GP_TRACE_CONFIG_MAX_COUNTERS (64) names or
   * ids per data source; resolve() is bounded by the array anyway. */
  bool matched[GP_TRACE_CONFIG_MAX_COUNTERS] = {false};
  uint32_t ids[512];
  int n = resolve(dev, &ds, &cat, ids, GP_ARRAY_SIZE(ids), matched,
                  GP_ARRAY_SIZE(matched));
  if (index < GP_ARRAY_SIZE(s->matched))
    for (int k = 0; k < 64; k++)
      if (matched[k])
        s->matched[index] |= 1ull << k;
  if (n <= 0)
    return n;
  gp_counter_config cc = ds.counters;
  cc.counter_ids = ids;
  cc.num_counter_ids = (size_t)n;
  cc.counter_names = NULL;
  cc.num_counter_names = 0;
  /* In descriptor mode 1 Perfetto reads counter ids as global to the
   * trace (the first device to describe one keeps it): an id sampled on
   * two devices would put the second one's values on the first one's
   * track. Refused, with what to do instead. */
  uint32_t taken = 0, other = 0;
  if (gp__tw_counter_id_taken(s->w, dev, ids, (size_t)n, &taken, &other)) {
    gp_device_info a, b;
    if (gp_device_get_info(dev, &a) != 0)
      a.name = "?";
    if (gp_device_get_info(other, &b) != 0)
      b.name = "?";
    if (!s->counter_why[0])
      snprintf(s->counter_why, sizeof(s->counter_why),
               "counter_descriptor_mode 1: counter id %u is sampled on %s "
               "(device %u) and %s (device %u), and Perfetto reads mode 1 "
               "ids as global to a trace: use mode 2, or a vendor suffix "
               "that names one of them",
               taken, b.name, other, a.name, dev);
    return GP_EEXIST;
  }
  /* The writer learns the specs first, so that their order (and the ids
   * of a counter sampled both ways) does not depend on which samples
   * reach it first. */
  select_for_writer(s, dev, ids, (size_t)n, &cc);
  /* One filter pipeline per data source: its skip/count ranges count
   * the activities of all its devices together, as the seed defines
   * them (for the data source as a whole); in a recorded process, those
   * of the recording's other processes too (session_ranges.c). */
  _Atomic uint64_t *cell =
      s->env && cc.num_ranges ? gp__ranges_shared_cell(index) : NULL;
  int rc = index < GP_ARRAY_SIZE(s->filters)
               ? gp__counters_start_shared(dev, &cc, &s->filters[index], cell)
               : gp_counters_start(dev, &cc);
  if (rc == GP_EBUSY) {
    /* Sampling runs already (another session, or the application): its
     * records reach every observer, this session's writer included. */
    return 0;
  }
  if (rc != 0) {
    why_not_sampled(s, dev, ids, (size_t)n, rc);
    return rc;
  }
  s->counters_on |= 1ull << dev;
  s->counters_ever |= 1ull << dev;
  return 0;
}

/* See sessionInt.h. */
int gp__session_counters_unmatched(const gp_session *s, char *msg,
                                   size_t size) {
  if (!s->saw_catalog)
    return 0; /* no device with counters yet: nothing can be said */
  gp_data_source_info ds;
  for (uint32_t i = 0; gp_trace_config_get_data_source(s->cfg, i, &ds) == 0;
       i++) {
    if (ds.kind != GP_DATA_SOURCE_GPU_COUNTERS ||
        i >= GP_ARRAY_SIZE(s->matched))
      continue;
    size_t nsel = ds.counters.num_counter_ids + ds.counters.num_counter_names;
    for (size_t k = 0; k < nsel && k < 64; k++) {
      if (s->matched[i] & (1ull << k))
        continue;
      if (ds.counters.num_counter_names)
        snprintf(msg, size, "%s: no device has a counter matching '%s'",
                 ds.name, ds.counters.counter_names[k]);
      else
        snprintf(msg, size, "%s: no device has a counter with id %u", ds.name,
                 ds.counters.counter_ids[k]);
      return GP_ENOCOUNTER;
    }
  }
  return 0;
}

/* Appends to msg[0..size) at *o, as snprintf; *o stops at size - 1. */
static void append(char *msg, size_t size, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *msg, size_t size, size_t *o, const char *fmt, ...) {
  if (*o + 1 >= size)
    return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(msg + *o, size - *o, fmt, ap);
  va_end(ap);
  if (k > 0)
    *o = *o + (size_t)k < size ? *o + (size_t)k : size - 1;
}

/* Whether some device of the process has a vendor the suffix names. */
static bool suffix_names_a_device(const char *suffix) {
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    gp_device_info di;
    if (gp_device_get_info(d, &di) == 0 &&
        gp__vendor_suffix_matches(suffix, &di))
      return true;
  }
  return false;
}

/* See sessionInt.h. */
bool gp__session_suffix_unmatched(const gp_session *s, char *msg, size_t size) {
  gp_data_source_info ds;
  size_t o = 0;
  unsigned bad = 0;
  const char *what = "";
  for (uint32_t i = 0;
       i < 64 && gp_trace_config_get_data_source(s->cfg, i, &ds) == 0; i++) {
    if ((ds.kind != GP_DATA_SOURCE_GPU_COUNTERS &&
         ds.kind != GP_DATA_SOURCE_GPU_RENDERSTAGES) ||
        !*ds.vendor || strcmp(ds.vendor, "gpuperf") == 0)
      continue;
    /* Counters: a device took its samples from it. Render stages: a
     * device's work was to be written by it (writer_devices.c). */
    if (ds.kind == GP_DATA_SOURCE_GPU_COUNTERS
            ? (s->suffix_hit >> i) & 1
            : suffix_names_a_device(ds.vendor))
      continue;
    append(msg, size, &o, "%s%s: no device's vendor is '%s'", bad ? "; " : "",
           ds.name, ds.vendor);
    what = ds.kind == GP_DATA_SOURCE_GPU_COUNTERS ? "it sampled nothing"
                                                  : "it recorded no GPU work";
    bad++;
  }
  if (!bad)
    return false;
  append(msg, size, &o, " (");
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    gp_device_info di;
    if (gp_device_get_info(d, &di) == 0)
      append(msg, size, &o, "%s%s: %s", d ? ", " : "", di.name,
             di.vendor ? di.vendor : "");
  }
  append(msg, size, &o, "%s): %s", ndev ? "" : "no devices",
         bad == 1 ? what : "they recorded nothing");
  return true;
}

/* See sessionInt.h. */
int gp__session_counters_start(gp_session *s, const gp_session_options *o) {
  gp_data_source_info ds;
  bool want = false;
  for (uint32_t i = 0; gp_trace_config_get_data_source(s->cfg, i, &ds) == 0;
       i++)
    want |= ds.kind == GP_DATA_SOURCE_GPU_COUNTERS;
  if (!want)
    return 0;
  /* DRM cards (sysfs, hwmon, fdinfo) are devices with counters; devices
   * without hardware counters get the derived busy counter. */
  const char *drm = getenv("GPUPERF_DRM");
  if (!drm || strcmp(drm, "0") != 0)
    gp__drm_devices_register();
  gp__derived_enable();
  /* Watch first, under the same lock as the devices of now, so that no
   * announcement falls in between and none is handled twice. */
  pthread_mutex_lock(&watch_lock);
  if (!hooked && gp__counters_add_device_hook(on_catalog) == 0)
    hooked = true;
  for (int i = 0; i < MAX_SESSIONS; i++) {
    if (!watching[i]) {
      watching[i] = s;
      break;
    }
  }
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev && d < MAX_DEV; d++) {
    int rc = gp__session_counters_on(s, d);
    if (rc != 0) {
      pthread_mutex_unlock(&watch_lock);
      gp_device_info di;
      gp_device_get_info(d, &di);
      if (rc == GP_EEXIST)
        gp__session_error(o, "%s", s->counter_why);
      else
        gp__session_error(o, "cannot sample counters on device %u (%s): %s", d,
                          di.name, gp_strerror(rc));
      return rc;
    }
  }
  pthread_mutex_unlock(&watch_lock);
  char msg[256];
  int rc = gp__session_counters_unmatched(s, msg, sizeof(msg));
  if (rc != 0)
    gp__session_error(o, "%s", msg);
  return rc;
}

/* See sessionInt.h. */
void gp__session_counters_stop(gp_session *s) {
  for (uint32_t d = 0; d < MAX_DEV; d++)
    if (s->counters_on & (1ull << d))
      gp_counters_stop(d);
  s->counters_on = 0;
  for (size_t i = 0; i < GP_ARRAY_SIZE(s->filters); i++) {
    gp__filter_put(s->filters[i]);
    s->filters[i] = NULL;
  }
}
