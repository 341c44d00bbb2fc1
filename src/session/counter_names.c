/*
 * counter_names.c - whether a counter name means something on this
 * machine, and when it does not, why: for the names `gpuperf record -e`
 * and `stat -e` check before anything runs (gp_counter_name_check()), and
 * for those GPUPERF_HUD drops.
 *
 * A name is known when a device registered in this process has it, or
 * when an OpenCL or Vulkan device present gets it in a recorded program
 * (counters/loaders.c). An unknown name is explained where its family
 * tells why it is missing here: a hardware event of the CPU's PMU (asked
 * of perf_event_open(2) itself: a machine without a PMU, a virtual
 * machine's usually, says ENOENT), a counter of DRM cards, of Vulkan
 * devices, or a `Utilization.<queue>` for a queue no device has.
 *
 * The hardware events are perf's generic ones; their names are those
 * src/backend/linux/perf_event.c publishes in the host CPU's catalog
 * (which lists only what the kernel accepts, so the events it leaves out
 * are written here too).
 */
#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/linux/drm.h"
#include "counters/countersInt.h"
#include "counters/loaders.h"
#include "counter_names.h"

typedef struct hw_event {
  const char *name;
  uint64_t config;
  const char *config_name;
} hw_event;

#define HW(name, c)                                                            \
  { name, PERF_COUNT_HW_##c, "PERF_COUNT_HW_" #c }
static const hw_event hw_events[] = {
    HW("cycles", CPU_CYCLES),
    HW("instructions", INSTRUCTIONS),
    HW("cache-references", CACHE_REFERENCES),
    HW("cache-misses", CACHE_MISSES),
    HW("branch-instructions", BRANCH_INSTRUCTIONS),
    HW("branch-misses", BRANCH_MISSES),
    HW("bus-cycles", BUS_CYCLES),
    HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND),
    HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND),
    HW("ref-cycles", REF_CPU_CYCLES),
};
#undef HW

static const char *const vulkan_stats[] = {
    "ia_vertices",          "ia_primitives",       "vs_invocations",
    "clipping_invocations", "clipping_primitives", "fs_invocations",
    "cs_invocations"};

/* The DRM cards' counters (src/backend/linux/drmprovider.c). */
static const char *const drm_names[] = {
    "gpu-frequency",       "power",
    "temperature",         "fan",
    "vram-used",           "vram-total",
    "client-memory-total", "client-memory-resident",
    "engine-*-busy"};

/* Whether name (a name or a glob) matches entry (a name or a glob). */
static bool matches(const char *name, const char *entry) {
  return fnmatch(name, entry, 0) == 0 || fnmatch(entry, name, 0) == 0;
}

static bool in(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (matches(name, list[i]))
      return true;
  return false;
}

/* -errno of opening a hardware event on this process, user space only
 * (what kernel.perf_event_paranoid 2 allows); 0 if it opens. */
static int open_hw(uint64_t config) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.type = PERF_TYPE_HARDWARE;
  a.config = config;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  int fd =
      (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0)
    return -errno;
  close(fd);
  return 0;
}

static bool explain_hw(const char *name, char *why, size_t size) {
  const hw_event *e = NULL;
  for (size_t i = 0; i < GP_ARRAY_SIZE(hw_events) && !e; i++)
    if (matches(name, hw_events[i].name))
      e = &hw_events[i];
  if (!e)
    return false;
  int rc = open_hw(e->config);
  const char *err = rc ? strerrorname_np(-rc) : NULL;
  if (rc == -ENOENT || rc == -EOPNOTSUPP || rc == -ENODEV) {
    bool pmu = e->config != PERF_COUNT_HW_CPU_CYCLES &&
               open_hw(PERF_COUNT_HW_CPU_CYCLES) == 0;
    snprintf(why, size, "%s (perf_event_open of %s: %s)",
             pmu ? "the CPU's PMU does not count this event"
                 : "this machine has no hardware PMU",
             e->config_name, err ? err : "?");
  } else if (rc == -EACCES || rc == -EPERM) {
    char msg[400];
    gp_host_perf_status(msg, sizeof(msg));
    snprintf(why, size, "a hardware event of the CPU, and %s", msg);
  } else if (rc != 0) {
    snprintf(why, size, "perf_event_open of %s failed here: %s", e->config_name,
             err ? err : "?");
  } else {
    snprintf(why, size,
             "a hardware event of the CPU, counted where the host CPU is a "
             "device (gpuperf stat, record -e)");
  }
  return true;
}

static bool explain_drm(const char *name, char *why, size_t size) {
  if (!in(name, drm_names, GP_ARRAY_SIZE(drm_names)))
    return false;
  gp_drm_gpu g[8];
  size_t n = 0;
  gp_drm_gpus(g, GP_ARRAY_SIZE(g), &n);
  const char *off = getenv("GPUPERF_DRM");
  if (off && strcmp(off, "0") == 0)
    snprintf(why, size,
             "a counter of DRM cards, and GPUPERF_DRM=0 leaves "
             "them out");
  else if (n == 0)
    snprintf(why, size,
             "a counter of DRM cards, and this machine has none (no "
             "%s/sys/class/drm/card*)",
             gp__linux_root());
  else
    snprintf(why, size,
             "a counter of DRM cards, and the %zu card%s here (%s%s) do%s "
             "not report it",
             n, n == 1 ? "" : "s", g[0].card, n > 1 ? ", ..." : "",
             n == 1 ? "es" : "");
  return true;
}

static bool explain_vulkan(const char *name, bool loaders, char *why,
                           size_t size) {
  if (!in(name, vulkan_stats, GP_ARRAY_SIZE(vulkan_stats)))
    return false;
  if (!loaders) {
    snprintf(why, size,
             "a pipeline-statistics counter of Vulkan devices, and this "
             "process has none (the gpuperf Vulkan layer registers them; "
             "gpuperf record loads it)");
    return true;
  }
  const gp__loaders *l = gp__loaders_get();
  bool any = false;
  for (uint32_t i = 0; i < l->num_devices; i++)
    any |= l->devices[i].api == GP_API_VULKAN;
  if (!any)
    snprintf(why, size,
             "a pipeline-statistics counter of Vulkan devices, and there is "
             "none here (Vulkan: %s)",
             l->vulkan_status);
  else
    snprintf(why, size,
             "a pipeline-statistics counter of Vulkan devices, and the "
             "Vulkan devices here lack pipelineStatisticsQuery");
  return true;
}

/* The per-queue Utilization counters there are, those of the loaders'
 * devices included, comma-separated into buf. */
static void queue_counters(bool loaders, char *buf, size_t size) {
  size_t o = 0;
  buf[0] = '\0';
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    const gp__catalog *cat = gp__catalog_get(d, NULL);
    for (uint32_t k = 0; cat && k < cat->num_counters && o < size; k++) {
      const char *c = cat->counters[k].info.name;
      if (strncmp(c, "Utilization.", 12) == 0 && !strstr(buf, c))
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", c);
    }
  }
  const gp__loaders *l = loaders ? gp__loaders_get() : NULL;
  for (uint32_t i = 0; l && i < l->num_devices && o < size; i++)
    for (uint32_t k = 0; k < l->devices[i].num_counters && o < size; k++) {
      const char *c = l->devices[i].counters[k];
      if (strncmp(c, "Utilization.", 12) == 0 && !strstr(buf, c))
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", c);
    }
}

static bool explain_utilization(const char *name, bool loaders, char *why,
                                size_t size) {
  if (strncmp(name, "Utilization", 11) != 0)
    return false;
  if (name[11] == '.') {
    char q[256];
    queue_counters(loaders, q, sizeof(q));
    snprintf(why, size,
             "no device here has a busy counter for a queue named '%s' "
             "(those there are: %s)",
             name + 12, q[0] ? q : "none");
    return true;
  }
  if (name[11] != '\0')
    return false;
  if (!loaders) {
    snprintf(why, size,
             "this process has no GPU device yet (OpenCL and Vulkan devices "
             "are registered at the program's first use of them)");
    return true;
  }
  const gp__loaders *l = gp__loaders_get();
  snprintf(why, size,
           "no device here has a busy counter (OpenCL: %s; Vulkan: %s)",
           l->opencl_status[0] ? l->opencl_status : "no device",
           l->vulkan_status[0] ? l->vulkan_status : "no device");
  return true;
}

/* See counter_names.h. */
bool gp__counter_explain(const char *name, bool loaders, char *why,
                         size_t size) {
  if (!why || !size)
    return false;
  why[0] = '\0';
  return explain_hw(name, why, size) || explain_drm(name, why, size) ||
         explain_vulkan(name, loaders, why, size) ||
         explain_utilization(name, loaders, why, size);
}

/* See counters.h. */
int gp_counter_name_check(const char *name, char *why, size_t size) {
  if (!name || !*name)
    return GP_EINVAL;
  if (why && size)
    why[0] = '\0';
  uint32_t ndev = 0;
  gp_device_count(&ndev);
  for (uint32_t d = 0; d < ndev; d++) {
    uint32_t ids[GP_PERFMON_MAX_COUNTERS];
    size_t cnt = 0;
    int rc = gp_counter_select(d, &name, 1, ids, GP_PERFMON_MAX_COUNTERS, &cnt);
    if (rc == 0 || rc == GP_ENOSPC)
      return 0;
  }
  if (gp__loaders_match(name))
    return 0;
  char buf[512];
  if (!gp__counter_explain(name, true, buf, sizeof(buf)))
    snprintf(buf, sizeof(buf),
             "no device on this machine has a counter %s (`gpuperf list` "
             "shows those it has)",
             strpbrk(name, "*?[") ? "matching it" : "named so");
  if (why && size)
    snprintf(why, size, "%s", buf);
  return GP_ENOCOUNTER;
}
