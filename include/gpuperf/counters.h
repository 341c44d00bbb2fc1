/*
 * gpuperf/counters.h - devices and what can be measured on them.
 *
 * Every backend publishes its devices here: the simulated GPUs, OpenCL and
 * CUDA devices, and host counter sources. A device has an id (dense, from
 * 0, in the order devices appear; it is the gpu_id written into traces),
 * descriptive information and its hardware queues.
 */
#ifndef GPUPERF_COUNTERS_H
#define GPUPERF_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a hardware queue runs. */
typedef enum gp_queue_kind {
  GP_QUEUE_OTHER = 0,
  GP_QUEUE_GRAPHICS = 1,
  GP_QUEUE_COMPUTE = 2,
  GP_QUEUE_COPY = 3
} gp_queue_kind;

typedef struct gp_device_queue_info {
  const char *name;        /* "Compute 0" */
  const char *description; /* may be "" */
  uint32_t kind;           /* gp_queue_kind */
  uint32_t reserved0;
} gp_device_queue_info;

/* Device information. Strings live as long as the process. */
typedef struct gp_device_info {
  uint32_t id;
  uint32_t api; /* gp_api of the backend that drives it */
  const char *name;
  const char *vendor;
  const char *model;
  const char *architecture;
  const char *driver_version;
  uint8_t uuid[16];
  uint32_t pci_domain, pci_bus, pci_device, pci_function;
  uint64_t global_memory_bytes;
  uint64_t memory_bandwidth_bytes_per_s;
  uint32_t compute_units;
  uint32_t core_clock_khz;
  uint32_t memory_clock_khz;
  uint32_t max_threads_per_block;
  uint32_t max_shared_memory_per_block;
  uint32_t num_queues;
  uint32_t clock_id; /* device clock (clock.h), 0 if it uses the trace clock */
  uint32_t flags;    /* GP_ACTIVITY_FLAG_DEVICE_* */
} gp_device_info;

/* Stores the number of devices in *n. GP_EINVAL if n is NULL. */
GP_EXPORT int gp_device_count(uint32_t *n);

/*
 * Fills *info for a device. Returns GP_EINVAL if info is NULL, GP_ENODEV
 * for an unknown id.
 */
GP_EXPORT int gp_device_get_info(uint32_t device_id, gp_device_info *info);

/*
 * Fills *q for one hardware queue of a device. GP_ENODEV for an unknown
 * device, GP_ENOENT for a queue index past num_queues.
 */
GP_EXPORT int gp_device_get_queue(uint32_t device_id, uint32_t queue,
                                  gp_device_queue_info *q);

/* Formats a device's PCI address as "dddd:bb:dd.f" into buf (>= 13 bytes). */
GP_EXPORT int gp_device_pci_bdf(const gp_device_info *info, char *buf,
                                size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_COUNTERS_H */
