/*
 * drm.h - Linux GPUs seen through the kernel's files: DRM fdinfo usage
 * statistics (fdinfo.c), the sysfs, hwmon and devfreq attributes of DRM
 * cards (sysfs.c), and the counter provider that publishes them as
 * devices with catalogs (drmprovider.c).
 *
 * Every path is taken under a root (gp__linux_root(): $GPUPERF_SYSROOT, or
 * "" for the real system), so tests run against /proc- and /sys-shaped
 * fixture trees.
 */
#ifndef GPUPERF_LINUX_DRM_H
#define GPUPERF_LINUX_DRM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define GP__DRM_MAX_ENGINES 16
#define GP__DRM_MAX_REGIONS 8
#define GP__DRM_NAME 32

/* One drm-engine-<name> line (and its -capacity, drm-cycles-, drm-maxfreq-
 * companions). */
typedef struct gp__drm_engine {
  char name[GP__DRM_NAME];
  uint64_t busy_ns;      /* drm-engine-<name>, ns */
  uint64_t capacity;     /* drm-engine-capacity-<name>, 1 if absent */
  uint64_t cycles;       /* drm-cycles-<name> */
  uint64_t total_cycles; /* drm-total-cycles-<name> */
  uint64_t maxfreq_hz;   /* drm-maxfreq-<name>, in Hz */
  bool has_busy, has_cycles;
} gp__drm_engine;

/* One drm-total-<region> / drm-resident-<region> pair, in bytes. */
typedef struct gp__drm_region {
  char name[GP__DRM_NAME];
  uint64_t total, resident;
} gp__drm_region;

/* The drm-usage-stats of one DRM file descriptor. */
typedef struct gp__fdinfo {
  char driver[GP__DRM_NAME]; /* drm-driver */
  char pdev[64];             /* drm-pdev, "" if absent */
  uint64_t client_id;        /* drm-client-id */
  uint32_t num_engines, num_regions;
  gp__drm_engine engines[GP__DRM_MAX_ENGINES];
  gp__drm_region regions[GP__DRM_MAX_REGIONS];
} gp__fdinfo;

/* The root every path is taken under ("" or $GPUPERF_SYSROOT). */
const char *gp__linux_root(void);

/* a followed by b (either may be NULL) into out, cut at size - 1 bytes.
 * Returns out. */
char *gp__join(char *out, size_t size, const char *a, const char *b);

/*
 * Parses the text of one /proc/<pid>/fdinfo/<fd> file. Returns true if it
 * is a DRM file with usage stats (it has drm-driver), false otherwise
 * (*out is then unspecified). Units: "ns" for engines; "KiB", "MiB" or
 * none (bytes) for memory; "Hz", "kHz", "MHz" for drm-maxfreq.
 */
bool gp__fdinfo_parse(const char *text, gp__fdinfo *out);

/* The engine of that name in f, or NULL. */
const gp__drm_engine *gp__fdinfo_engine(const gp__fdinfo *f, const char *name);

/*
 * Busy percentage of an engine between two readings of the same client
 * taken wall_ns apart: delta busy ns / (wall_ns * capacity) * 100, or,
 * for drivers that give cycles only, delta cycles / (delta total cycles,
 * else wall_ns * maxfreq) * 100. Negative when it cannot be computed.
 */
double gp__fdinfo_busy_pct(const gp__drm_engine *a, const gp__drm_engine *b,
                           uint64_t wall_ns);

/*
 * Reads every DRM client of process pid ("self" or a number) under the
 * root, one entry per drm-client-id (several fds may share a client).
 * Stores up to cap of them in out and returns how many; 0 if there are
 * none or the process cannot be read.
 */
size_t gp__fdinfo_read_pid(const char *pid, gp__fdinfo *out, size_t cap);

/* What a DRM card offers, and its current readings. */
typedef struct gp__drm_card {
  char name[GP__DRM_NAME];   /* "card0" */
  char driver[GP__DRM_NAME]; /* from device/uevent DRIVER= */
  char pdev[64];             /* PCI_SLOT_NAME= or the device's name */
  char freq_path[512];       /* frequency source, "" if none */
  int freq_kind;             /* 0 none, 1 MHz, 2 Hz (devfreq), 3 pp_dpm */
  char hwmon[512];           /* device/hwmon/hwmonN, "" if none */
  char vram_used[512];       /* device/mem_info_vram_used, "" if none */
  char vram_total[512];
} gp__drm_card;

/* The cards under <root>/sys/class/drm (card<N> only, not connectors),
 * in name order; up to cap. Returns how many. */
size_t gp__drm_cards(gp__drm_card *out, size_t cap);

/* Current readings of a card: what it lacks is NaN. */
typedef struct gp__drm_reading {
  double freq_mhz, power_w, temp_c, fan_rpm, vram_used, vram_total;
} gp__drm_reading;

void gp__drm_card_read(const gp__drm_card *c, gp__drm_reading *r);

/*
 * A sampling thread's wait for its next period: next (CLOCK_MONOTONIC)
 * advanced by period_ns, then waits on cond (lock held) until that time
 * or *stop (read under lock). drmprovider.c's and v3d.c's threads.
 */
void gp__drm_tick_wait(pthread_cond_t *cond, pthread_mutex_t *lock,
                       const bool *stop, struct timespec *next,
                       uint64_t period_ns);

/*
 * Registers one device per DRM card found under the root, each with a
 * catalog of what it offers (frequency, power, temperature, fan, VRAM,
 * and the per-engine busy % and memory of this process's DRM clients from
 * fdinfo), once per process. Returns how many were registered.
 */
int gp__drm_devices_register(void);

/*
 * Registers one device per V3D render node under <root>/dev/dri (v3d.c),
 * with its perfmon counters, once per process. Returns how many were
 * registered.
 */
int gp__v3d_devices_register(void);

#endif /* GPUPERF_LINUX_DRM_H */
