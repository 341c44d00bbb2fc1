/*
 * gpuperf/drm.h - Linux GPUs as the kernel shows them, for tools such as
 * `gpuperf top`: DRM cards with their frequency, power, temperature, fan
 * and VRAM (sysfs, hwmon, devfreq), and the DRM clients of every process
 * that can be read, with their per-engine busy time and memory (fdinfo,
 * Documentation/gpu/drm-usage-stats.rst). Every path is taken under
 * $GPUPERF_SYSROOT when it is set. docs/gpu-linux.md has the details.
 */
#ifndef GPUPERF_DRM_H
#define GPUPERF_DRM_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_DRM_MAX_ENGINES 16

/* A DRM card and its current readings (NaN where it has none). */
typedef struct gp_drm_gpu {
  char card[32];   /* "card0" */
  char driver[32]; /* "amdgpu", "i915", "v3d", ... */
  char pdev[64];   /* PCI address or platform device name */
  double freq_mhz, power_w, temp_c, fan_rpm;
  double vram_used, vram_total; /* bytes */
} gp_drm_gpu;

/*
 * Stores up to cap cards, in name order, into out and their number in *n.
 * Returns 0 (none is not an error), GP_EINVAL for NULL out or n.
 */
GP_EXPORT int gp_drm_gpus(gp_drm_gpu *out, size_t cap, size_t *n);

/*
 * Registers the DRM cards found (under GPUPERF_SYSROOT) as devices of this
 * process with their counter catalogs, as a recording session does, unless
 * GPUPERF_DRM is "0". Idempotent. Returns 0 (no card is not an error) or a
 * negative GP_E* code of the first card that could not be registered.
 */
GP_EXPORT int gp_drm_register_devices(void);

/* One DRM client (an open DRM file description) of a process. */
typedef struct gp_drm_client {
  uint32_t pid;
  uint32_t num_engines;
  char comm[32];
  char driver[32];
  char pdev[64];
  uint64_t client_id;
  uint64_t mem_total, mem_resident; /* bytes, all regions */
  struct {
    char name[32];
    uint64_t busy_ns, capacity, cycles, total_cycles, maxfreq_hz;
    uint32_t has_busy, has_cycles;
  } engines[GP_DRM_MAX_ENGINES];
} gp_drm_client;

/*
 * Reads the DRM clients of every process whose fdinfo can be read (its
 * own user's, or all as root), up to cap, into out, and their number into
 * *n. Returns 0, GP_EINVAL for NULL out or n.
 */
GP_EXPORT int gp_drm_clients(gp_drm_client *out, size_t cap, size_t *n);

/*
 * Busy percentage of engine e of `after` over the wall_ns between two
 * readings of the same client (before may be NULL: a client that appeared
 * since, counted from zero). Negative when it cannot be computed.
 */
GP_EXPORT double gp_drm_engine_busy(const gp_drm_client *before,
                                    const gp_drm_client *after, uint32_t e,
                                    uint64_t wall_ns);

/*
 * Whether gpuperf can count system-wide on V3D device device_id now (one
 * that gp_drm_register_devices() registered): it creates a kernel perfmon,
 * makes it the global perfmon and at once clears and destroys it. Returns
 * 0 if it could; GP_EBUSY if the kernel refused because someone holds the
 * counters (a program's own per-job perfmon, or another global perfmon);
 * GP_ENOTSUP if the kernel has no DRM_IOCTL_V3D_PERFMON_SET_GLOBAL;
 * GP_ENODEV if device_id is not a V3D device; another negative error
 * otherwise. Except for 0 and GP_ENODEV, writes into msg (size bytes; may
 * be NULL) one line that says what happened, who may hold the counters
 * (the processes with V3D open that /proc shows) and what to do. Nobody's
 * counters are taken away: the kernel refuses, gpuperf reports.
 */
GP_EXPORT int gp_drm_v3d_check(uint32_t device_id, char *msg, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_DRM_H */
