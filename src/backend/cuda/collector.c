/*
 * collector.c - starting and stopping the CUPTI collector: the driver
 * probe, InitializeInjection for CUDA_INJECTION64_PATH, gp_cuda_start()
 * for programs that link us, CUPTI subscription and activity kinds, the
 * flush hook and the flush at exit.
 *
 * Two ways in. The CUDA driver loads the library named by
 * CUDA_INJECTION64_PATH while it initialises (inside cuInit) and calls
 * InitializeInjection(); the driver is then certainly there, but calling
 * back into it would re-enter cuInit, so devices are described later, as
 * their contexts are created. A program that links us calls
 * gp_cuda_start() instead, which first makes sure that there is a driver
 * and a device at all: CUPTI without a driver answers most calls with
 * CUPTI_ERROR_UNKNOWN and crashes on some (cuptiDeviceGetChipName, the
 * range profiler), so nothing past the probe runs without a device.
 *
 * A failure to start is reported, never fatal to the program: the
 * detail goes to gp_cuda_status() and, from InitializeInjection, to
 * stderr as one line starting "gpuperf-cuda: ".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti_target.h>

#include "counters/countersInt.h"
#include "cudaInt.h"

#define FLUSH_PERIOD_MS_DEFAULT 500u

/* The driver entry points we call, found with dlsym: linking libcuda
 * would make the library unloadable where there is no driver. */
static struct {
  void *lib;
  __typeof__(&cuInit) init;
  __typeof__(&cuDeviceGetCount) get_count;
  __typeof__(&cuDeviceGet) get;
  __typeof__(&cuDeviceGetName) get_name;
  __typeof__(&cuDeviceTotalMem_v2) total_mem;
  __typeof__(&cuDeviceGetAttribute) get_attr;
  __typeof__(&cuDeviceGetUuid_v2) get_uuid;
  __typeof__(&cuDriverGetVersion) driver_version;
  __typeof__(&cuGetErrorName) error_name;
} drv;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char status[512];
static bool running;
static bool atexit_done;
static CUpti_SubscriberHandle subscriber;
static bool um_on; /* CUPTI's unified memory counters are enabled */

/* The CUPTI kinds we enable; optional ones may be refused by a device
 * or driver without failing the start. */
static const struct {
  CUpti_ActivityKind kind;
  bool optional;
} kinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, false},
    {CUPTI_ACTIVITY_KIND_MEMCPY, false},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, true},
    {CUPTI_ACTIVITY_KIND_MEMSET, false},
    {CUPTI_ACTIVITY_KIND_RUNTIME, false},
    {CUPTI_ACTIVITY_KIND_DRIVER, false},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, true},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, true},
    {CUPTI_ACTIVITY_KIND_DEVICE, true},
    {CUPTI_ACTIVITY_KIND_CONTEXT, true},
    {CUPTI_ACTIVITY_KIND_NAME, true},
    {CUPTI_ACTIVITY_KIND_ENVIRONMENT, true},
    {CUPTI_ACTIVITY_KIND_FUNCTION, true},
    {CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE, true},
    {CUPTI_ACTIVITY_KIND_PREEMPTION, true},
};

/*
 * Asks CUPTI for every unified memory counter and enables the kind (when
 * ours is enabled at the collector's start); the
 * configuration of gp_activity_configure_unified_memory_counter filters
 * the records as they are translated (translate_dp.c). A driver that
 * refuses the later kinds gets the four of CUPTI 6.5; one that refuses
 * those too records none, and `status` says so. Returns whether the kind
 * is on.
 */
static bool um_counters_enable(void) {
  CUpti_ActivityUnifiedMemoryCounterConfig c[GP_UM_COUNTER_KIND_COUNT - 1];
  for (uint32_t k = 1; k < GP_UM_COUNTER_KIND_COUNT; k++)
    c[k - 1] = (CUpti_ActivityUnifiedMemoryCounterConfig){
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_ALL_DEVICES,
        (CUpti_ActivityUnifiedMemoryCounterKind)k, 0, 1};
  if (cuptiActivityConfigureUnifiedMemoryCounter(c, GP_UM_COUNTER_KIND_COUNT -
                                                        1) != CUPTI_SUCCESS &&
      cuptiActivityConfigureUnifiedMemoryCounter(c, 4) != CUPTI_SUCCESS)
    return false;
  return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) ==
         CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Status                                                               */

static void set_status(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void set_status(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(status, sizeof(status), fmt, ap);
  va_end(ap);
}

/* See cudaInt.h. */
const char *gp__cuda_status(void) {
  return status;
}

/* See cuda.h. */
const char *gp_cuda_status(void) {
  return status;
}

/* See cudaInt.h. */
int gp__cuda_cupti_error(const char *what, CUptiResult rc) {
  const char *name = NULL;
  if (cuptiGetResultString(rc, &name) != CUPTI_SUCCESS || !name)
    name = "CUPTI_ERROR_?";
  if (rc == CUPTI_ERROR_UNKNOWN || rc == CUPTI_ERROR_NOT_INITIALIZED)
    set_status("no CUDA device: %s failed with %s (%d): CUPTI found no "
               "working CUDA driver",
               what, name, (int)rc);
  else
    set_status("%s failed with %s (%d)", what, name, (int)rc);
  switch (rc) {
  case CUPTI_ERROR_UNKNOWN:
  case CUPTI_ERROR_NOT_INITIALIZED:
  case CUPTI_ERROR_INVALID_DEVICE:
    return GP_ENODEV;
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    return GP_EPERM;
  case CUPTI_ERROR_NOT_SUPPORTED:
  case CUPTI_ERROR_NOT_COMPATIBLE:
  case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
    return GP_ENOTSUP;
  case CUPTI_ERROR_OUT_OF_MEMORY:
    return GP_ENOMEM;
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    return GP_EBUSY;
  default:
    return GP_EIO;
  }
}

/* See cudaInt.h. */
int gp__cuda_refuse(const char *why) {
  set_status("%s", why);
  return GP_ENOTSUP;
}

/* See cudaInt.h. */
bool gp__cuda_running(void) {
  pthread_mutex_lock(&lock);
  bool r = running;
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------------ */
/* The driver                                                           */

/* "NAME (n)" for a driver error, into a static buffer (start holds the
 * lock). The stub's cuGetErrorName fails too: a few names are known here. */
static const char *cu_error(CUresult r) {
  static char buf[96];
  const char *s = NULL;
  if (!drv.error_name || drv.error_name(r, &s) != CUDA_SUCCESS || !s) {
    switch (r) {
    case CUDA_ERROR_NOT_INITIALIZED:
      s = "CUDA_ERROR_NOT_INITIALIZED";
      break;
    case CUDA_ERROR_STUB_LIBRARY:
      s = "CUDA_ERROR_STUB_LIBRARY";
      break;
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      s = "CUDA_ERROR_DEVICE_UNAVAILABLE";
      break;
    case CUDA_ERROR_NO_DEVICE:
      s = "CUDA_ERROR_NO_DEVICE";
      break;
    case CUDA_ERROR_OPERATING_SYSTEM:
      s = "CUDA_ERROR_OPERATING_SYSTEM";
      break;
    case CUDA_ERROR_NOT_PERMITTED:
      s = "CUDA_ERROR_NOT_PERMITTED";
      break;
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      s = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
      break;
    default:
      s = "CUDA_ERROR";
      break;
    }
  }
  snprintf(buf, sizeof(buf), "%s (%d)", s, (int)r);
  return buf;
}

/* Finds libcuda.so.1 and its entry points. loaded_only: only if the
 * process has it already (we were injected by the driver). */
static int driver_open(bool loaded_only) {
  if (drv.lib)
    return 0;
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib && loaded_only) {
    set_status("no CUDA device: the CUDA driver (libcuda.so.1) is not loaded "
               "in this process; libgpuperf-cuda.so is meant to be loaded by "
               "the driver through CUDA_INJECTION64_PATH");
    return GP_ENODEV;
  }
  if (!lib)
    lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    set_status("no CUDA device: the CUDA driver (libcuda.so.1) cannot be "
               "loaded: %s",
               e ? e : "not found");
    return GP_ENODEV;
  }
  *(void **)&drv.init = dlsym(lib, "cuInit");
  *(void **)&drv.get_count = dlsym(lib, "cuDeviceGetCount");
  *(void **)&drv.get = dlsym(lib, "cuDeviceGet");
  *(void **)&drv.get_name = dlsym(lib, "cuDeviceGetName");
  *(void **)&drv.total_mem = dlsym(lib, "cuDeviceTotalMem_v2");
  *(void **)&drv.get_attr = dlsym(lib, "cuDeviceGetAttribute");
  *(void **)&drv.get_uuid = dlsym(lib, "cuDeviceGetUuid_v2");
  *(void **)&drv.driver_version = dlsym(lib, "cuDriverGetVersion");
  *(void **)&drv.error_name = dlsym(lib, "cuGetErrorName");
  if (!drv.init || !drv.get_count || !drv.get || !drv.get_attr) {
    set_status("no CUDA device: libcuda.so.1 lacks cuInit or cuDeviceGet*");
    memset(&drv, 0, sizeof(drv));
    dlclose(lib);
    return GP_ENODEV;
  }
  drv.lib = lib;
  return 0;
}

/* cuInit and count the devices. */
static int driver_probe(int *count) {
  CUresult r = drv.init(0);
  if (r != CUDA_SUCCESS) {
    if (r == CUDA_ERROR_STUB_LIBRARY)
      set_status("no CUDA device: cuInit failed with %s: libcuda.so.1 is the "
                 "toolkit's link stub, not a driver",
                 cu_error(r));
    else
      set_status("no CUDA device: cuInit failed with %s", cu_error(r));
    return GP_ENODEV;
  }
  *count = 0;
  r = drv.get_count(count);
  if (r != CUDA_SUCCESS || *count <= 0) {
    set_status("no CUDA device: the driver reports %d devices%s%s", *count,
               r != CUDA_SUCCESS ? ", cuDeviceGetCount: " : "",
               r != CUDA_SUCCESS ? cu_error(r) : "");
    return GP_ENODEV;
  }
  return 0;
}

static int attr(CUdevice d, CUdevice_attribute a) {
  int v = 0;
  if (drv.get_attr(&v, a, d) != CUDA_SUCCESS)
    return 0;
  return v;
}

/* See cudaInt.h. */
void gp__cuda_describe_device(uint32_t ordinal) {
  if (gp__cuda_device_known(ordinal) || !drv.lib)
    return;
  CUdevice d;
  if (drv.get(&d, (int)ordinal) != CUDA_SUCCESS)
    return;
  char name[256] = "", arch[32], driver[32] = "";
  if (drv.get_name)
    drv.get_name(name, sizeof(name), d);
  snprintf(arch, sizeof(arch), "sm_%d%d",
           attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
           attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  int version = 0;
  if (drv.driver_version && drv.driver_version(&version) == CUDA_SUCCESS)
    snprintf(driver, sizeof(driver), "CUDA %d.%d", version / 1000,
             (version % 1000) / 10);
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.name = name;
  info.vendor = "NVIDIA";
  info.model = name;
  info.architecture = arch;
  info.driver_version = driver;
  CUuuid uuid;
  if (drv.get_uuid && drv.get_uuid(&uuid, d) == CUDA_SUCCESS)
    memcpy(info.uuid, uuid.bytes, sizeof(info.uuid));
  info.pci_domain = (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  info.pci_bus = (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  info.pci_device = (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  size_t mem = 0;
  if (drv.total_mem && drv.total_mem(&mem, d) == CUDA_SUCCESS)
    info.global_memory_bytes = mem;
  /* Peak bandwidth: two transfers per memory clock over the bus. */
  uint64_t mem_khz = (uint64_t)attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  uint64_t bus_bits =
      (uint64_t)attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info.memory_bandwidth_bytes_per_s = 2u * mem_khz * 1000u * bus_bits / 8u;
  info.compute_units =
      (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.core_clock_khz = (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = (uint32_t)mem_khz;
  info.max_threads_per_block =
      (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_shared_memory_per_block =
      (uint32_t)attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.flags = attr(d, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)
                   ? GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS
                   : 0;
  uint32_t id;
  if (gp__cuda_device_describe(ordinal, &info, &id) != 0)
    return;
  /* Every CUdevice attribute the driver answers, as DEVICE_ATTRIBUTE
   * records: CUPTI defines them, but wrote none (CUPTI 13.0 on an H200,
   * scripts/device-check-cuda.sh). */
  if (GP_CORE->activity_enabled(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, 0))
    for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
      int v = 0;
      if (drv.get_attr(&v, (CUdevice_attribute)a, d) == CUDA_SUCCESS)
        gp__cuda_attribute_record(ordinal, (uint32_t)a, v, true);
    }
  /* Its metrics as a counter catalog (safe: the device is there). */
  CUpti_Device_GetChipName_Params cp;
  memset(&cp, 0, sizeof(cp));
  cp.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  cp.deviceIndex = ordinal;
  if (cuptiDeviceGetChipName(&cp) == CUPTI_SUCCESS && cp.pChipName) {
    int rc = gp__cuda_provider_publish(id, ordinal, cp.pChipName);
    if (rc != 0 && rc != GP_ENOTSUP)
      fprintf(stderr, "gpuperf-cuda: no counters for device %u (%s): %s\n", id,
              cp.pChipName, gp_strerror(rc));
  }
  /* Without the profiler's metrics, the busy counter derived from the
   * activity timeline stands in. */
  if (!GP_COUNTERS->device_has_catalog(id))
    GP_COUNTERS->derived_register(id);
  gp__cuda_profiler_device(ordinal);
}

/* ------------------------------------------------------------------ */
/* Flushing                                                             */

static GP_TLS bool in_flush;

static void flush_hook(void *user, bool forced) {
  (void)user;
  if (in_flush)
    return;
  in_flush = true;
  /* Buffers CUPTI completes now are translated on this thread, into its
   * slot, which the core collects right after the hooks. */
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  gp__cuda_profiler_flush(false);
  in_flush = false;
}

static void at_exit(void) {
  pthread_mutex_lock(&lock);
  bool r = running;
  pthread_mutex_unlock(&lock);
  if (!r)
    return;
  gp__cuda_profiler_flush(true);
  in_flush = true;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  in_flush = false;
  gp__cuda_clock_refresh(0);
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                       */

static size_t env_size(const char *name, size_t dflt) {
  const char *s = getenv(name);
  if (!s || !*s)
    return dflt;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  return *end == '\0' ? (size_t)v : dflt;
}

/* CUPTI's device buffer attributes from gpuperf's, where the program set
 * them (0: CUPTI's own defaults stay). One CUPTI refuses is said, not
 * fatal: records still come, through buffers of CUPTI's size. */
static void device_buffers(void) {
  static const struct {
    gp_activity_attr ours;
    CUpti_ActivityAttribute cupti;
  } map[] = {{GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
              CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE},
             {GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP,
              CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP},
             {GP_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT,
              CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT}};
  for (size_t i = 0; i < GP_ARRAY_SIZE(map); i++) {
    size_t v = 0, n = sizeof(v);
    if (gp_activity_get_attribute(map[i].ours, &n, &v) != 0 || v == 0)
      continue;
    CUptiResult r = cuptiActivitySetAttribute(map[i].cupti, &n, &v);
    if (r != CUPTI_SUCCESS)
      fprintf(stderr,
              "gpuperf-cuda: CUPTI refused device buffer attribute %d = %zu "
              "(CUPTI error %d): its default stays\n",
              (int)map[i].cupti, v, (int)r);
  }
}

/* Subscribes, registers the buffers, enables the kinds. Caller holds
 * lock; the driver is known to be there. */
static int cupti_start(void) {
  int rc =
      gp__cuda_buffers_configure(env_size("GPUPERF_CUDA_BUFFER_SIZE", 8u << 20),
                                 env_size("GPUPERF_CUDA_BUFFERS", 16));
  if (rc != 0 && rc != GP_EBUSY) {
    set_status("GPUPERF_CUDA_BUFFER_SIZE must be 65536 to 1073741824 and "
               "GPUPERF_CUDA_BUFFERS 1 to 4096");
    return rc;
  }
  if (gp__cuda_clock() == 0) {
    set_status("cannot register the CUPTI clock (too many device clocks)");
    return GP_ENOSPC;
  }
  CUptiResult r = cuptiSubscribe(&subscriber, gp__cuda_callback, NULL);
  if (r != CUPTI_SUCCESS)
    return gp__cuda_cupti_error("cuptiSubscribe", r);
  static const CUpti_CallbackDomain domains[] = {
      CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API,
      CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_NVTX,
      CUPTI_CB_DOMAIN_SYNCHRONIZE};
  for (size_t i = 0; i < GP_ARRAY_SIZE(domains); i++) {
    r = cuptiEnableDomain(1, subscriber, domains[i]);
    if (r != CUPTI_SUCCESS) {
      rc = gp__cuda_cupti_error("cuptiEnableDomain", r);
      goto unsubscribe;
    }
  }
  r = cuptiActivityRegisterCallbacks(gp__cuda_buffer_request,
                                     gp__cuda_buffer_complete);
  if (r != CUPTI_SUCCESS) {
    rc = gp__cuda_cupti_error("cuptiActivityRegisterCallbacks", r);
    goto unsubscribe;
  }
  device_buffers();
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++) {
    r = cuptiActivityEnable(kinds[i].kind);
    if (r != CUPTI_SUCCESS && !kinds[i].optional) {
      rc = gp__cuda_cupti_error("cuptiActivityEnable", r);
      goto disable;
    }
  }
  /* As the source-level kinds: only when ours is wanted as we start. */
  if (GP_CORE->activity_enabled(GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER, 0))
    um_on = um_counters_enable();
  gp__cuda_source_enable(); /* refusals are said, not fatal */
  /* Queued and submitted times of kernels; optional. */
  cuptiActivityEnableLatencyTimestamps(1);
  cuptiActivityFlushPeriod(
      (uint32_t)env_size("GPUPERF_CUDA_FLUSH_MS", FLUSH_PERIOD_MS_DEFAULT));
  rc = GP_CORE->activity_add_flush_hook(flush_hook, NULL);
  if (rc != 0) {
    set_status("cannot add the flush hook: %s", gp_strerror(rc));
    goto disable;
  }
  return 0;

disable:
  gp__cuda_source_disable();
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++)
    cuptiActivityDisable(kinds[i].kind);
  if (um_on)
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  um_on = false;
unsubscribe:
  cuptiUnsubscribe(subscriber);
  subscriber = NULL;
  return rc;
}

static int start_locked(bool injected) {
  if (running)
    return GP_EBUSY;
  status[0] = '\0';
  int rc = driver_open(injected);
  if (rc != 0)
    return rc;
  int count = 0;
  if (!injected) {
    rc = driver_probe(&count);
    if (rc != 0)
      return rc;
  }
  rc = cupti_start();
  if (rc != 0)
    return rc;
  if (gp__cuda_profiler_start() != 0) {
    /* Counters were asked for wrongly: tracing goes on, the reason is
     * printed. */
    fprintf(stderr, "gpuperf-cuda: counters: %s\n", status);
  }
  for (int i = 0; i < count; i++)
    gp__cuda_describe_device((uint32_t)i);
  running = true;
  if (!atexit_done) {
    atexit(at_exit);
    atexit_done = true;
  }
  return 0;
}

/* See cuda.h. */
int gp_cuda_start(uint32_t flags) {
  if (flags != 0)
    return GP_EINVAL;
  GP_CORE->activate();
  pthread_mutex_lock(&lock);
  int rc = start_locked(false);
  pthread_mutex_unlock(&lock);
  return rc;
}

/* See cuda.h. */
int gp_cuda_stop(void) {
  pthread_mutex_lock(&lock);
  if (!running) {
    pthread_mutex_unlock(&lock);
    return GP_ESTATE;
  }
  running = false;
  pthread_mutex_unlock(&lock);
  gp__cuda_profiler_flush(true);
  gp__cuda_profiler_stop();
  in_flush = true;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  in_flush = false;
  GP_CORE->activity_remove_flush_hook(flush_hook, NULL);
  gp__cuda_source_disable();
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++)
    cuptiActivityDisable(kinds[i].kind);
  if (um_on)
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
  um_on = false;
  cuptiUnsubscribe(subscriber);
  subscriber = NULL;
  gp__cuda_clock_refresh(0);
  /* Everything CUPTI had is translated: the bookkeeping can go. */
  gp__cuda_deps_reset();
  gp__cuda_callbacks_reset();
  gp__cuda_translate_reset();
  return 0;
}

/* See cuda.h. */
const char *gp_cuda_cupti_library(void) {
  static char path[4096];
  Dl_info info;
  if (!path[0] && dladdr((void *)cuptiGetVersion, &info) && info.dli_fname &&
      !realpath(info.dli_fname, path))
    snprintf(path, sizeof(path), "%s", info.dli_fname);
  return path;
}

/* See cuda.h. */
int gp_cuda_device_chip(uint32_t device_id, char *buf, size_t size) {
  if (!buf || size == 0)
    return GP_EINVAL;
  if (!gp__cuda_running())
    return GP_ESTATE;
  uint32_t ordinal = gp__cuda_device_ordinal(device_id);
  if (ordinal == UINT32_MAX)
    return GP_ENODEV;
  /* Safe here: the collector runs, so the driver and the device are. */
  CUpti_Device_GetChipName_Params p;
  memset(&p, 0, sizeof(p));
  p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  p.deviceIndex = ordinal;
  CUptiResult r = cuptiDeviceGetChipName(&p);
  if (r != CUPTI_SUCCESS || !p.pChipName)
    return gp__cuda_cupti_error("cuptiDeviceGetChipName", r);
  if (strlen(p.pChipName) >= size)
    return GP_ESIZE;
  strcpy(buf, p.pChipName);
  return 0;
}

/*
 * The entry point NVTX calls when NVTX_INJECTION64_PATH names this
 * library: NVTX's calls go to CUPTI, which hands them to our subscriber
 * as callbacks. So it is handed on to libcupti's own, the one this
 * library is linked with; `gpuperf record` can then name one library in
 * both variables. Returns what libcupti returns (non-zero on success), 0
 * with a message if libcupti's entry point cannot be found.
 */
typedef const void *(*nvtx_export_table_fn)(uint32_t id);
GP_EXPORT int InitializeInjectionNvtx2(nvtx_export_table_fn get_export_table);
int InitializeInjectionNvtx2(nvtx_export_table_fn get_export_table) {
  const char *path = gp_cuda_cupti_library();
  void *h = *path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  int (*init)(nvtx_export_table_fn) = NULL;
  if (h)
    *(void **)&init = dlsym(h, "InitializeInjectionNvtx2");
  if (!init || init == InitializeInjectionNvtx2) {
    fprintf(stderr,
            "gpuperf-cuda: NVTX ranges are not recorded: no "
            "InitializeInjectionNvtx2 in libcupti (%s)\n",
            *path ? path : "not found");
    return 0;
  }
  return init(get_export_table);
}

/*
 * The entry point the CUDA driver calls when CUDA_INJECTION64_PATH names
 * this library. Returns 1: a collector that cannot start must not fail
 * the program's CUDA initialisation; the reason is printed instead.
 */
GP_EXPORT int InitializeInjection(void);
int InitializeInjection(void) {
  GP_CORE->activate(); /* a recorded program joins the recording */
  pthread_mutex_lock(&lock);
  int rc = running ? 0 : start_locked(true);
  pthread_mutex_unlock(&lock);
  if (rc != 0)
    fprintf(stderr, "gpuperf-cuda: %s\n", status);
  return 1;
}
