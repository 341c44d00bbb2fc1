/*
 * events.c - the counter names given to `-e`, checked before anything
 * runs, by `gpuperf record` and `gpuperf stat` alike: a name no device
 * has is an error (exit 2), not a warning after the program ran.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_record.h"

static bool has_glob(const char *s) {
  return strpbrk(s, "*?[") != NULL;
}

/*
 * Counters of devices that exist only inside the recorded program, so no
 * catalog of them is at hand here: the derived busy counter of OpenCL
 * devices (src/counters/derived.c) and the pipeline statistics of Vulkan
 * devices (src/backend/vulkan/pstats.c). Kept in step with those files.
 */
static const char *const derived_names[] = {"Utilization", "Utilization.*"};

/* See cli.h. */
const char *const cli_vulkan_counters[CLI_VULKAN_COUNTERS] = {
    "ia_vertices",          "ia_primitives",       "vs_invocations",
    "clipping_invocations", "clipping_primitives", "fs_invocations",
    "cs_invocations",
};

static bool name_in(const char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (fnmatch(list[i], name, 0) == 0 ||
        (has_glob(name) && fnmatch(name, list[i], 0) == 0))
      return true;
  return false;
}

static bool program_only_name(const char *name) {
  return name_in(derived_names, 2, name) ||
         name_in(cli_vulkan_counters, CLI_VULKAN_COUNTERS, name);
}

/* The counters device d samples by default (at most
 * GP_PERFMON_MAX_COUNTERS of them). */
static void default_ids(uint32_t d, uint32_t *ids, size_t *n) {
  gp_counter_catalog_info cat;
  *n = 0;
  if (gp_counter_catalog(d, &cat) != 0)
    return;
  for (uint32_t i = 0; i < cat.num_counters && *n < GP_PERFMON_MAX_COUNTERS;
       i++) {
    gp_counter_info ci;
    if (gp_counter_get(d, i, &ci) == 0 && ci.select_by_default)
      ids[(*n)++] = ci.id;
  }
}

/*
 * See cli_record.h. What the names select on each device is checked by
 * creating, then destroying, a perfmon: its validation is the device's.
 */
int cli_check_events(char **names, size_t n) {
  uint32_t ndev = 0, host = 0;
  int rc = gp_sim_device_count(&ndev);
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT,
                     "cannot start the simulated GPUs: %s "
                     "(check GPUPERF_SIM_DEVICES and GPUPERF_SIM_TIME)",
                     gp_strerror(rc));
  gp_host_device_register(&host);
  gp_drm_register_devices(); /* as the recorded program's session will */
  gp_device_count(&ndev);
  for (size_t j = 0; j < n; j++) {
    bool hit = strcmp(names[j], "default") == 0; /* the defaults */
    for (uint32_t d = 0; d < ndev && !hit; d++) {
      uint32_t ids[GP_PERFMON_MAX_COUNTERS];
      size_t cnt = 0;
      const char *one[1] = {names[j]};
      int r = gp_counter_select(d, one, 1, ids, GP_PERFMON_MAX_COUNTERS, &cnt);
      hit = r == 0 || r == GP_ENOSPC;
    }
    if (!hit)
      hit = program_only_name(names[j]);
    if (!hit)
      return cli_error(CLI_BAD_INPUT,
                       "unknown counter '%s': no device has a counter %s "
                       "(see 'gpuperf list')",
                       names[j],
                       has_glob(names[j]) ? "matching it" : "named so");
  }
  if (n == 0)
    return CLI_OK;
  for (uint32_t d = 0; d < ndev; d++) {
    uint32_t ids[GP_PERFMON_MAX_COUNTERS], total = 0;
    for (size_t j = 0; j < n; j++) {
      uint32_t got[GP_PERFMON_MAX_COUNTERS];
      size_t cnt = 0;
      const char *one[1] = {names[j]};
      if (strcmp(names[j], "default") == 0) {
        default_ids(d, got, &cnt);
      } else if (gp_counter_select(d, one, 1, got, GP_PERFMON_MAX_COUNTERS,
                                   &cnt) != 0) {
        if (gp_counter_select(d, one, 1, got, 0, &cnt) == GP_ENOSPC)
          return cli_error(CLI_BAD_INPUT,
                           "'%s' selects more counters than device %u can "
                           "count at once",
                           names[j], d);
        continue;
      }
      for (size_t k = 0; k < cnt; k++) {
        bool dup = false;
        for (uint32_t m = 0; m < total && !dup; m++)
          dup = ids[m] == got[k];
        if (!dup && total < GP_PERFMON_MAX_COUNTERS)
          ids[total++] = got[k];
      }
    }
    if (total == 0)
      continue;
    gp_perfmon *pm = NULL;
    rc = gp_perfmon_create(d, ids, total, &pm);
    gp_perfmon_destroy(pm);
    gp_device_info di;
    gp_device_get_info(d, &di);
    if (rc == GP_ECAPACITY)
      return cli_error(CLI_BAD_INPUT,
                       "%u counters selected on device %u (%s): more than it "
                       "can count at once (see the blocks in 'gpuperf list "
                       "--device %u')",
                       total, d, di.name, d);
    /* A refused host CPU is reported by the program's own session. */
    (void)host;
  }
  return CLI_OK;
}

/* See cli_record.h. */
int cli_split_events(const char *list, char **names, size_t *n, size_t max) {
  const char *p = list;
  size_t before = *n;
  while (*p) {
    size_t len = strcspn(p, ",");
    if (len && *n == max)
      return cli_error(CLI_BAD_INPUT, "-e: more than %zu counter names", max);
    if (len && !(names[(*n)++] = strndup(p, len))) {
      (*n)--;
      return cli_error(CLI_BAD_INPUT, "out of memory");
    }
    p += len;
    if (*p == ',')
      p++;
  }
  if (*n == before)
    return cli_error(CLI_USAGE, "-e '%s': no counter name", list);
  return CLI_OK;
}
