/*
 * events.c - the counter names given to `-e`, checked before anything
 * runs, by `gpuperf record` and `gpuperf stat` alike: a name no device
 * of this machine has (gp_counter_name_check(): the devices registered
 * here, and those OpenCL and Vulkan devices get inside the program) is an
 * error (exit 2) that says why where that can be told, not a warning
 * after the program ran. `gpuperf list` shows the same counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_record.h"

/* The most counters all names may select on a device, to be told. */
#define MAX_SELECTED (GP_PERFMON_MAX_COUNTERS * 8)

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

bool cli_wait_counters;

/*
 * The counters of a V3D GPU are counted system-wide through one global
 * perfmon, which the kernel gives to one owner at a time: asks whether
 * they are free now (gp_drm_v3d_check), and says who may hold them if
 * not. With --wait, asks again every 100 ms until they are. Returns
 * CLI_OK, CLI_BUSY or CLI_BAD_INPUT (a kernel without system-wide
 * counters).
 */
static int check_v3d(uint32_t d) {
  char msg[2048];
  bool said = false;
  for (;;) {
    int rc = gp_drm_v3d_check(d, msg, sizeof(msg));
    if (rc == 0 || rc == GP_ENODEV) {
      if (said)
        cli_error(0, "the V3D counters are free: starting");
      return CLI_OK;
    }
    if (rc != GP_EBUSY)
      return cli_error(CLI_BAD_INPUT, "%s", msg);
    if (!cli_wait_counters)
      return cli_error(CLI_BUSY, "%s", msg);
    if (!said)
      cli_error(0, "waiting (--wait): %s", msg);
    said = true;
    struct timespec t = {0, 100000000L};
    nanosleep(&t, NULL);
  }
}

/*
 * See cli_record.h. What the names select on each device is checked by
 * creating, then destroying, a perfmon: its validation is the device's.
 */
int cli_check_events(char **names, size_t n, bool multiplex) {
  uint32_t ndev = 0, host = 0;
  /* The simulated GPUs' catalogs, on the real clock: the recorder stamps
   * the loss counters and salvaged records of its processes, which are on
   * theirs (virtual time would become this process's clock). */
  gp_sim_config sc;
  int rc = gp_sim_config_from_env(&sc);
  if (rc == 0) {
    sc.time_mode = GP_SIM_TIME_REAL;
    gp_sim_init(&sc); /* GP_EBUSY: made already */
    rc = gp_sim_device_count(&ndev);
  }
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT,
                     "cannot start the simulated GPUs: %s "
                     "(check GPUPERF_SIM_DEVICES and GPUPERF_SIM_TIME)",
                     gp_strerror(rc));
  gp_host_device_register(&host);
  gp_drm_register_devices(); /* as the recorded program's session will */
  gp_device_count(&ndev);
  for (size_t j = 0; j < n; j++) {
    char why[600];
    if (strcmp(names[j], "default") != 0 && /* the defaults */
        gp_counter_name_check(names[j], why, sizeof(why)) != 0)
      return cli_error(CLI_BAD_INPUT, "unknown counter '%s': %s", names[j],
                       why);
  }
  if (n == 0)
    return CLI_OK;
  for (uint32_t d = 0; d < ndev; d++) {
    /* All the names select, without duplicates (each name at most
     * GP_PERFMON_MAX_COUNTERS). */
    uint32_t ids[MAX_SELECTED], total = 0;
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
                           "'%s' selects more than the %d counters one "
                           "sampling of device %u takes, multiplexed or not",
                           names[j], GP_PERFMON_MAX_COUNTERS, d);
        continue;
      }
      for (size_t k = 0; k < cnt; k++) {
        bool dup = false;
        for (uint32_t m = 0; m < total && !dup; m++)
          dup = ids[m] == got[k];
        if (!dup && total < MAX_SELECTED)
          ids[total++] = got[k];
      }
    }
    gp_device_info di;
    gp_device_get_info(d, &di);
    if (total > GP_PERFMON_MAX_COUNTERS)
      return cli_error(CLI_BAD_INPUT,
                       "%s%u counters selected on device %u (%s): more than "
                       "the %d one sampling takes, multiplexed or not",
                       total == MAX_SELECTED ? "at least " : "", total, d,
                       di.name, GP_PERFMON_MAX_COUNTERS);
    gp_counter_catalog_info ci;
    if (total == 0 ||
        (multiplex && gp_counter_catalog(d, &ci) == 0 && ci.supports_multiplex))
      continue;
    gp_perfmon *pm = NULL;
    rc = gp_perfmon_create(d, ids, total, &pm);
    gp_perfmon_destroy(pm);
    if (rc == GP_ECAPACITY)
      return cli_error(CLI_BAD_INPUT,
                       "%u counters selected on device %u (%s): more than it "
                       "can count at once (see the blocks in 'gpuperf list "
                       "--device %u')",
                       total, d, di.name, d);
    /* A refused host CPU is reported by the program's own session. */
    (void)host;
    int status = rc == 0 ? check_v3d(d) : CLI_OK;
    if (status != CLI_OK)
      return status;
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
