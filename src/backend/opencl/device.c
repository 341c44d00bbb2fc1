/*
 * device.c - OpenCL devices as gpuperf devices, and their profiling clocks.
 *
 * A device is registered the first time it appears in a context the
 * program creates (never earlier: see oclInt.h): its name, vendor, driver
 * version, compute units, clock, memory and limits are asked of the driver
 * and written as a DEVICE record, with one hardware queue ("Compute").
 *
 * Profiling times are in the device's clock; each record's times are
 * mapped to the trace clock with pairs of simultaneous readings measured
 * around that very command, which keeps the mapping exact where it matters
 * even though the trace clock slews against every other clock. How depends
 * on what the driver offers:
 *
 *  RAW      PoCL's timestamps are CLOCK_MONOTONIC_RAW (and it does not
 *           implement clGetDeviceAndHostTimer). Each enqueue takes an
 *           anchor (that clock between two trace-clock readings) right
 *           before the driver call, or reuses its thread's if that is
 *           under 50 us old, the completion another; the command's
 *           times, all between the two, are interpolated between them.
 *           That PoCL uses this clock is checked, not assumed: while
 *           unconfirmed, enqueues also read it after the call, and the
 *           first command to complete must show its QUEUED time inside.
 *  BRACKET  the check failed (a driver on some other clock): QUEUED is
 *           taken during the enqueue call, so it is paired with the middle
 *           of the call (error: half the call), and the other times follow
 *           at the device clock's rate, taken as the trace clock's.
 *  TIMER    clGetDeviceAndHostTimer works (drivers with a host timer,
 *           OpenCL >= 2.1): snapshots of it (every 50 ms while commands
 *           complete) map times through the clock module.
 *
 * Every device has a clock in the clock module (clock.h) that receives
 * these pairs as snapshots every 50 ms or so, so a trace carries them.
 * max_error_ns keeps the widest pair used: the bound the clock test holds
 * the records to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oclInt.h"

#include <CL/cl_ext.h>

#define SNAPSHOT_NS 50000000ull /* a snapshot every 50 ms */

static _Atomic int test_mode;
static _Atomic int64_t test_skew;

/* See oclInt.h. */
void gp__ocl_test_clock(int mode, int64_t skew_ns) {
  atomic_store(&test_mode, mode);
  atomic_store(&test_skew, skew_ns);
}

/* See oclInt.h. */
uint64_t gp__ocl_raw_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* See oclInt.h. */
void gp__ocl_anchor_take(gp__ocl_anchor *a) {
  /* Three readings take ~50 ns; if the thread was preempted in between,
   * try again (twice at most) for a tighter pair. */
  for (int i = 0; i < 3; i++) {
    uint64_t t0 = gp_get_timestamp();
    uint64_t raw = gp__ocl_raw_now();
    uint64_t t1 = gp_get_timestamp();
    if (i == 0 || (t1 - t0 + 1) / 2 < a->err) {
      a->raw = raw;
      a->trace = t0 + (t1 - t0) / 2;
      a->err = (t1 - t0 + 1) / 2;
    }
    if (a->err < 1000)
      break;
  }
}

GP_TLS gp__ocl_anchor gp__ocl_last_anchor;

/* See oclInt.h. */
void gp__ocl_anchor_renew(gp__ocl_anchor *a) {
  gp__ocl_anchor_take(a);
  gp__ocl_last_anchor = *a;
}

static void note_error(gp__ocl_device *d, uint64_t err) {
  uint64_t cur = atomic_load_explicit(&d->max_error_ns, memory_order_relaxed);
  while (err > cur &&
         !atomic_compare_exchange_weak(&d->max_error_ns, &cur, err))
    ;
}

/* Adds a snapshot if the period has passed since the last one. */
static void maybe_snapshot(gp__ocl_device *d, const gp_clock_snapshot *s) {
  uint64_t next = atomic_load_explicit(&d->next_snapshot, memory_order_relaxed);
  if (GP_LIKELY(s->trace_ts < next))
    return;
  pthread_mutex_lock(&d->clock_lock);
  if (s->trace_ts >= atomic_load(&d->next_snapshot) &&
      gp_clock_add_snapshot(d->clock_id, s) == 0)
    atomic_store(&d->next_snapshot, s->trace_ts + SNAPSHOT_NS);
  pthread_mutex_unlock(&d->clock_lock);
}

/* ------------------------------------------------------------------ */
/* TIMER                                                                */

/* A snapshot of the device timer: the tightest of three readings between
 * two of the trace clock. False if the timer can't be read. */
static bool timer_measure(gp__ocl_device *d, gp_clock_snapshot *out) {
  __typeof__(&clGetDeviceAndHostTimer) timer =
      GP_CL_REAL(clGetDeviceAndHostTimer);
  uint64_t best = UINT64_MAX;
  for (int i = 0; timer && i < 3; i++) {
    cl_ulong dts = 0, hts = 0;
    uint64_t t0 = gp_get_timestamp();
    if (timer(d->cl, &dts, &hts) != CL_SUCCESS)
      return false;
    uint64_t t1 = gp_get_timestamp();
    if (t1 - t0 < best) {
      best = t1 - t0;
      out->device_ts = dts;
      out->trace_ts = t0 + (t1 - t0) / 2;
      out->error_ns = (t1 - t0 + 1) / 2;
    }
  }
  return best != UINT64_MAX;
}

static void timer_tick(gp__ocl_device *d) {
  uint64_t now = gp_get_timestamp();
  uint64_t next = atomic_load_explicit(&d->next_snapshot, memory_order_relaxed);
  if (GP_LIKELY(now < next) || !atomic_compare_exchange_strong(
                                   &d->next_snapshot, &next, now + SNAPSHOT_NS))
    return;
  gp_clock_snapshot s;
  pthread_mutex_lock(&d->clock_lock);
  if (timer_measure(d, &s) && gp_clock_add_snapshot(d->clock_id, &s) == 0)
    note_error(d, s.error_ns);
  pthread_mutex_unlock(&d->clock_lock);
}

/* ------------------------------------------------------------------ */
/* RAW and BRACKET                                                      */

/* Decides, from a command bracketed with MONOTONIC_RAW readings, whether
 * the device's profiling clock is MONOTONIC_RAW. */
static void judge_raw(gp__ocl_device *d, const gp__ocl_entry *e,
                      uint64_t queued) {
  pthread_mutex_lock(&d->clock_lock);
  if (atomic_load(&d->raw_verdict) == 0) {
    queued += (uint64_t)atomic_load(&test_skew);
    if (queued >= e->anchor.raw && queued <= e->raw_after) {
      atomic_store(&d->raw_verdict, 1);
    } else {
      atomic_store(&d->raw_verdict, -1);
      atomic_store(&d->clock_mode, GP_OCL_CLOCK_BRACKET);
    }
  }
  pthread_mutex_unlock(&d->clock_lock);
}

/* Maps device time t with anchors a and b (a.raw <= b.raw): the offset
 * between the clocks moves linearly from a's to b's, and is a's or b's
 * outside them. With a == b, a fixed offset. */
static uint64_t between(const gp__ocl_anchor *a, const gp__ocl_anchor *b,
                        uint64_t t) {
  int64_t off_a = (int64_t)(a->trace - a->raw);
  int64_t off_b = (int64_t)(b->trace - b->raw);
  int64_t off = off_a;
  if (t >= b->raw)
    off = off_b;
  else if (t > a->raw && off_b != off_a)
    off = off_a + (int64_t)((double)(off_b - off_a) * (double)(t - a->raw) /
                            (double)(b->raw - a->raw));
  return t + (uint64_t)off;
}

/* See oclInt.h. */
void gp__ocl_device_map(gp__ocl_device *d, const gp__ocl_entry *e,
                        const uint64_t dev_ts[4], uint64_t out[4],
                        const gp__ocl_anchor *after) {
  memset(out, 0, 4 * sizeof(uint64_t));
  if (dev_ts[0] == 0)
    return;
  if (gp__ocl_device_unverified(d) && e->anchor.raw != 0 && e->raw_after != 0)
    judge_raw(d, e, dev_ts[0]);
  int mode = atomic_load_explicit(&d->clock_mode, memory_order_relaxed);
  if (mode == GP_OCL_CLOCK_TIMER) {
    timer_tick(d);
    for (int i = 0; i < 4; i++)
      if (dev_ts[i] && gp_clock_to_trace(d->clock_id, dev_ts[i], &out[i]) != 0)
        out[i] = 0;
    return;
  }
  if (mode == GP_OCL_CLOCK_RAW && atomic_load(&d->raw_verdict) == 1 &&
      e->anchor.raw != 0) {
    gp__ocl_anchor b;
    if (after && after->raw >= e->anchor.raw)
      b = *after;
    else
      gp__ocl_anchor_take(&b);
    for (int i = 0; i < 4; i++)
      out[i] = dev_ts[i] ? between(&e->anchor, &b, dev_ts[i]) : 0;
    note_error(d, e->anchor.err > b.err ? e->anchor.err : b.err);
    gp_clock_snapshot s = {b.raw, b.trace, b.err};
    maybe_snapshot(d, &s);
    return;
  }
  /* BRACKET, or a RAW device not confirmed yet: the enqueue call holds
   * QUEUED, whatever the device's clock. */
  if (e->host_start == 0 || e->host_end < e->host_start)
    return;
  gp__ocl_anchor q = {dev_ts[0],
                      e->host_start + (e->host_end - e->host_start) / 2,
                      (e->host_end - e->host_start + 1) / 2};
  for (int i = 0; i < 4; i++)
    out[i] = dev_ts[i] ? between(&q, &q, dev_ts[i]) : 0;
  note_error(d, q.err);
  if (mode == GP_OCL_CLOCK_BRACKET) {
    /* Only the tighter pairs make snapshots. */
    uint64_t best = atomic_load(&d->best_bracket_ns);
    if (q.err <= 2 * best) {
      if (q.err < best)
        atomic_store(&d->best_bracket_ns, q.err);
      gp_clock_snapshot s = {q.raw, q.trace, q.err};
      maybe_snapshot(d, &s);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Registration                                                         */

static pthread_mutex_t register_lock = PTHREAD_MUTEX_INITIALIZER;

/* A string property into buf ("" if the driver won't say). */
static const char *info_str(cl_device_id dev, cl_device_info what, char *buf,
                            size_t size) {
  buf[0] = '\0';
  if (GP_CL_REAL(clGetDeviceInfo)(dev, what, size - 1, buf, NULL) != CL_SUCCESS)
    buf[0] = '\0';
  buf[size - 1] = '\0';
  return buf;
}

static uint64_t info_u64(cl_device_id dev, cl_device_info what, size_t width) {
  uint64_t v = 0;
  if (width == 4) {
    cl_uint u = 0;
    if (GP_CL_REAL(clGetDeviceInfo)(dev, what, sizeof(u), &u, NULL) ==
        CL_SUCCESS)
      v = u;
  } else {
    cl_ulong u = 0;
    if (GP_CL_REAL(clGetDeviceInfo)(dev, what, sizeof(u), &u, NULL) ==
        CL_SUCCESS)
      v = u;
  }
  return v;
}

/* "OpenCL 2.1 ..." -> 201; 0 if unreadable. */
static int version_of(const char *s) {
  int major = 0, minor = 0;
  if (sscanf(s, "OpenCL %d.%d", &major, &minor) != 2)
    return 0;
  return major * 100 + minor;
}

static bool has_extension(const char *exts, const char *name) {
  size_t n = strlen(name);
  for (const char *p = exts; (p = strstr(p, name)) != NULL; p += n)
    if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return true;
  return false;
}

/* Probes clGetDeviceAndHostTimer, only on drivers that may have it: an
 * older driver's dispatch table has no such entry. */
static bool timer_works(cl_device_id dev, const char *version) {
  if (version_of(version) < 201 || !GP_CL_REAL(clGetDeviceAndHostTimer))
    return false;
  cl_platform_id plat = NULL;
  cl_ulong res = 0;
  if (GP_CL_REAL(clGetDeviceInfo)(dev, CL_DEVICE_PLATFORM, sizeof(plat), &plat,
                                  NULL) != CL_SUCCESS ||
      GP_CL_REAL(clGetPlatformInfo)(plat, CL_PLATFORM_HOST_TIMER_RESOLUTION,
                                    sizeof(res), &res, NULL) != CL_SUCCESS ||
      res == 0)
    return false;
  cl_ulong d = 0, h = 0;
  return GP_CL_REAL(clGetDeviceAndHostTimer)(dev, &d, &h) == CL_SUCCESS &&
         d != 0;
}

static void fill_info(cl_device_id dev, gp_device_info *info, char *name,
                      char *vendor, char *driver, char *version, char *exts,
                      size_t exts_size) {
  memset(info, 0, sizeof(*info));
  info->api = GP_API_OPEN_CL;
  info->name = info_str(dev, CL_DEVICE_NAME, name, 256);
  info->vendor = info_str(dev, CL_DEVICE_VENDOR, vendor, 256);
  info->model = info->name;
  info->driver_version = info_str(dev, CL_DRIVER_VERSION, driver, 256);
  info->architecture = info_str(dev, CL_DEVICE_VERSION, version, 256);
  info_str(dev, CL_DEVICE_EXTENSIONS, exts, exts_size);
  info->global_memory_bytes = info_u64(dev, CL_DEVICE_GLOBAL_MEM_SIZE, 8);
  info->compute_units = (uint32_t)info_u64(dev, CL_DEVICE_MAX_COMPUTE_UNITS, 4);
  info->core_clock_khz =
      (uint32_t)info_u64(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, 4) * 1000u;
  size_t wg = 0;
  if (GP_CL_REAL(clGetDeviceInfo)(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                  sizeof(wg), &wg, NULL) == CL_SUCCESS)
    info->max_threads_per_block = wg > UINT32_MAX ? UINT32_MAX : (uint32_t)wg;
  uint64_t local = info_u64(dev, CL_DEVICE_LOCAL_MEM_SIZE, 8);
  info->max_shared_memory_per_block =
      local > UINT32_MAX ? UINT32_MAX : (uint32_t)local;
  cl_command_queue_properties qp = 0;
  if (GP_CL_REAL(clGetDeviceInfo)(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof(qp),
                                  &qp, NULL) == CL_SUCCESS &&
      (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    info->flags |= GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
  if (has_extension(exts, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr pci;
    if (GP_CL_REAL(clGetDeviceInfo)(dev, CL_DEVICE_PCI_BUS_INFO_KHR,
                                    sizeof(pci), &pci, NULL) == CL_SUCCESS) {
      info->pci_domain = pci.pci_domain;
      info->pci_bus = pci.pci_bus;
      info->pci_device = pci.pci_device;
      info->pci_function = pci.pci_function;
    }
  }
  if (has_extension(exts, "cl_khr_device_uuid")) {
    cl_uchar uuid[CL_UUID_SIZE_KHR];
    if (GP_CL_REAL(clGetDeviceInfo)(dev, CL_DEVICE_UUID_KHR, sizeof(uuid), uuid,
                                    NULL) == CL_SUCCESS)
      memcpy(info->uuid, uuid, sizeof(info->uuid));
  }
  info->num_queues = 1;
}

/* See oclInt.h. */
gp__ocl_device *gp__ocl_device_get(cl_device_id dev) {
  gp__ocl_device *d = gp__ptrmap_get(&gp__ocl.devices, dev);
  if (d || !dev)
    return d;
  pthread_mutex_lock(&register_lock);
  d = gp__ptrmap_get(&gp__ocl.devices, dev);
  if (d) {
    pthread_mutex_unlock(&register_lock);
    return d;
  }
  d = calloc(1, sizeof(*d));
  char *strings = malloc(4 * 256 + 8192);
  if (!d || !strings)
    goto fail;
  gp_device_info info;
  char *name = strings, *vendor = strings + 256, *driver = strings + 512;
  char *version = strings + 768, *exts = strings + 1024;
  fill_info(dev, &info, name, vendor, driver, version, exts, 8192);

  d->cl = dev;
  d->version = version_of(version);
  pthread_mutex_init(&d->clock_lock, NULL);
  int mode = atomic_load(&test_mode);
  if (mode == 0)
    mode = timer_works(dev, version) ? GP_OCL_CLOCK_TIMER : GP_OCL_CLOCK_RAW;
  atomic_store(&d->clock_mode, mode);
  atomic_store(&d->best_bracket_ns, UINT64_MAX);
  char clock_name[300];
  snprintf(clock_name, sizeof(clock_name), "OpenCL %s profiling clock", name);
  /* No read function: we feed the snapshots ourselves, of the right kind
   * once we know which (see the top of this file). */
  if (gp_clock_register(clock_name, NULL, NULL, &d->clock_id) != 0)
    goto fail;
  if (mode == GP_OCL_CLOCK_TIMER)
    timer_tick(d);
  info.clock_id = d->clock_id;
  gp_device_queue_info queue = {"Compute", "OpenCL command queues",
                                GP_QUEUE_COMPUTE, 0};
  if (GP_CORE->device_register(&info, &queue, 1, &d->device_id) != 0) {
    gp_clock_unregister(d->clock_id);
    goto fail;
  }
  gp__ocl_frontier_install(d->device_id);
  GP_CORE->handle_put(GP_API_OPEN_CL, GP__HANDLE_DEVICE, dev, NULL,
                      d->device_id, 0, 0);
  pthread_mutex_lock(&gp__ocl.objects_lock);
  int rc = gp__ptrmap_put(&gp__ocl.devices, dev, d, NULL);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  free(strings);
  pthread_mutex_unlock(&register_lock);
  /* Without a table entry the device would be registered again on the
   * next call; keep using the record we made. */
  (void)rc;
  return d;

fail:
  free(strings);
  free(d);
  pthread_mutex_unlock(&register_lock);
  return NULL;
}

static void reinit_clock_lock(void *user, const void *key, void *val) {
  (void)user;
  (void)key;
  pthread_mutex_init(&((gp__ocl_device *)val)->clock_lock, NULL);
}

/* See oclInt.h. */
void gp__ocl_device_atfork_child(void) {
  pthread_mutex_init(&register_lock, NULL);
  gp__ptrmap_each(&gp__ocl.devices, reinit_clock_lock, NULL);
}
