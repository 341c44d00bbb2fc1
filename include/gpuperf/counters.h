/*
 * gpuperf/counters.h - devices and what can be measured on them.
 *
 * Every backend publishes its devices here: the simulated GPUs, OpenCL and
 * CUDA devices, and host counter sources. A device has an id (dense, from
 * 0, in the order devices appear; it is the gpu_id written into traces),
 * descriptive information and its hardware queues.
 *
 * A device may also publish a counter catalog: counters with ids unique
 * on that device, names, units, groups and blocks with a capacity (how
 * many of a block's counters can count at once). Counters are read in
 * three ways: perfmons (sets of counters that jobs carry, switched and
 * accumulated by the device's scheduler, the V3D model), monitors (the
 * GL_AMD_performance_monitor-shaped API built on perfmons), and sampling
 * (periodic, or per activity through a filter pipeline), which writes
 * COUNTER records into the activity stream.
 */
#ifndef GPUPERF_COUNTERS_H
#define GPUPERF_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* ------------------------------------------------------------------ */
/* Counter catalogs                                                     */

/* Counter groups; values match Perfetto's GpuCounterGroup. Custom groups
 * use ids from GP_COUNTER_GROUP_FIRST_CUSTOM. */
typedef enum gp_counter_group {
  GP_COUNTER_GROUP_UNCLASSIFIED = 0,
  GP_COUNTER_GROUP_SYSTEM = 1,
  GP_COUNTER_GROUP_VERTICES = 2,
  GP_COUNTER_GROUP_FRAGMENTS = 3,
  GP_COUNTER_GROUP_PRIMITIVES = 4,
  GP_COUNTER_GROUP_MEMORY = 5,
  GP_COUNTER_GROUP_COMPUTE = 6,
  GP_COUNTER_GROUP_RAY_TRACING = 7,
  GP_COUNTER_GROUP_FIRST_CUSTOM = 100
} gp_counter_group;

/* Units; values match Perfetto's GpuCounterDescriptor.MeasureUnit. */
typedef enum gp_unit {
  GP_UNIT_NONE = 0,
  GP_UNIT_BIT = 1,
  GP_UNIT_KILOBIT = 2,
  GP_UNIT_MEGABIT = 3,
  GP_UNIT_GIGABIT = 4,
  GP_UNIT_TERABIT = 5,
  GP_UNIT_PETABIT = 6,
  GP_UNIT_BYTE = 7,
  GP_UNIT_KILOBYTE = 8,
  GP_UNIT_MEGABYTE = 9,
  GP_UNIT_GIGABYTE = 10,
  GP_UNIT_TERABYTE = 11,
  GP_UNIT_PETABYTE = 12,
  GP_UNIT_HERTZ = 13,
  GP_UNIT_KILOHERTZ = 14,
  GP_UNIT_MEGAHERTZ = 15,
  GP_UNIT_GIGAHERTZ = 16,
  GP_UNIT_TERAHERTZ = 17,
  GP_UNIT_PETAHERTZ = 18,
  GP_UNIT_NANOSECOND = 19,
  GP_UNIT_MICROSECOND = 20,
  GP_UNIT_MILLISECOND = 21,
  GP_UNIT_SECOND = 22,
  GP_UNIT_MINUTE = 23,
  GP_UNIT_HOUR = 24,
  GP_UNIT_VERTEX = 25,
  GP_UNIT_PIXEL = 26,
  GP_UNIT_TRIANGLE = 27,
  GP_UNIT_MILLIWATT = 28,
  GP_UNIT_WATT = 29,
  GP_UNIT_KILOWATT = 30,
  GP_UNIT_JOULE = 31,
  GP_UNIT_VOLT = 32,
  GP_UNIT_AMPERE = 33,
  GP_UNIT_CELSIUS = 34,
  GP_UNIT_FAHRENHEIT = 35,
  GP_UNIT_KELVIN = 36,
  GP_UNIT_PERCENT = 37,
  GP_UNIT_PRIMITIVE = 38,
  GP_UNIT_FRAGMENT = 39,
  GP_UNIT_INSTRUCTION = 40
} gp_unit;

/* How a counter's values read. */
typedef enum gp_counter_type {
  GP_COUNTER_TYPE_INT64 = 0,  /* a count (values as int64) */
  GP_COUNTER_TYPE_DOUBLE = 1, /* a rate or ratio (values as double) */
  GP_COUNTER_TYPE_PERCENT = 2 /* 0..100 (values as double) */
} gp_counter_type;

#define GP_COUNTER_MAX_UNITS 4
#define GP_COUNTER_MAX_GROUPS 4

/* One counter. Strings live as long as the process. */
typedef struct gp_counter_info {
  uint32_t id; /* unique on its device (Perfetto's counter_id) */
  uint32_t device_id;
  const char *name;
  const char *description;
  const char *category; /* the vendor's category, "" if none */
  uint32_t type;        /* gp_counter_type */
  uint32_t block_id;
  uint32_t num_numerator_units;
  uint32_t numerator_units[GP_COUNTER_MAX_UNITS]; /* gp_unit */
  uint32_t num_denominator_units;
  uint32_t denominator_units[GP_COUNTER_MAX_UNITS]; /* gp_unit */
  uint32_t num_groups;
  uint32_t groups[GP_COUNTER_MAX_GROUPS]; /* gp_counter_group or custom */
  double peak_value; /* largest meaningful value, 0 if unknown */
  uint32_t select_by_default;
  uint32_t reserved0;
} gp_counter_info;

/* A block: counters that share hardware, capacity of them at once. */
typedef struct gp_counter_block_info {
  uint32_t id;
  uint32_t capacity;
  uint32_t num_counters;
  uint32_t reserved0;
  const char *name;
  const char *description;
} gp_counter_block_info;

/* A group with a name: custom groups, and names for the fixed ones. */
typedef struct gp_counter_group_info {
  uint32_t id;
  uint32_t reserved0;
  const char *name;
  const char *description;
} gp_counter_group_info;

/* The catalog as a whole. */
typedef struct gp_counter_catalog_info {
  uint32_t num_counters;
  uint32_t num_blocks;
  uint32_t num_groups; /* named groups (gp_counter_group_get) */
  uint32_t max_active; /* counters one perfmon may hold */
  uint64_t min_sampling_period_ns;
  uint64_t max_sampling_period_ns;
  uint32_t supports_instrumented; /* per-activity sampling possible */
  /* Sampling may time-multiplex more counters than max_active and the
   * blocks' capacities allow (gp_counter_config.multiplex). */
  uint32_t supports_multiplex;
} gp_counter_catalog_info;

/*
 * Describes a device's catalog. GP_ENODEV for an unknown device, GP_ENOENT
 * if the device publishes no counters.
 */
GP_EXPORT int gp_counter_catalog(uint32_t device_id,
                                 gp_counter_catalog_info *info);

/* The index-th counter of a device (0 .. num_counters-1). GP_ENOENT past
 * the end. */
GP_EXPORT int gp_counter_get(uint32_t device_id, uint32_t index,
                             gp_counter_info *info);

/* The counter with this id. GP_ENOCOUNTER if there is none. */
GP_EXPORT int gp_counter_lookup(uint32_t device_id, uint32_t counter_id,
                                gp_counter_info *info);

/* The index-th block / named group of a device. GP_ENOENT past the end. */
GP_EXPORT int gp_counter_block_get(uint32_t device_id, uint32_t index,
                                   gp_counter_block_info *info);
GP_EXPORT int gp_counter_group_get(uint32_t device_id, uint32_t index,
                                   gp_counter_group_info *info);

/*
 * Resolves counter names or shell globs to ids, in catalog order, without
 * duplicates, into ids (up to cap) and their number into *count. A plain
 * name (no glob characters) that matches nothing, or a glob that matches
 * nothing, gives GP_ENOCOUNTER (nothing stored). GP_ENOSPC if more than
 * cap match.
 */
GP_EXPORT int gp_counter_select(uint32_t device_id, const char *const *names,
                                size_t num_names, uint32_t *ids, size_t cap,
                                size_t *count);

/* ------------------------------------------------------------------ */
/* Sampling into the activity stream                                    */

/* Which name of a kernel the activity name filters match. Values match
 * Perfetto's ActivityNameFilter.NameBase. */
typedef enum gp_name_base {
  GP_NAME_BASE_MANGLED = 0,   /* the mangled name (default) */
  GP_NAME_BASE_DEMANGLED = 1, /* the full demangled name */
  GP_NAME_BASE_FUNCTION = 2   /* the bare function name */
} gp_name_base;

typedef struct gp_activity_name_filter {
  const char *name_glob; /* required */
  uint32_t name_base;    /* gp_name_base */
  uint32_t reserved0;
} gp_activity_name_filter;

/* Instrument `count` activities after skipping `skip` (counted over the
 * activities that passed the name and range filters). As in Perfetto's
 * config, where an unset count means all the rest, count 0 does too. */
typedef struct gp_activity_range {
  uint32_t skip;
  uint32_t count; /* UINT32_MAX (or 0): all the rest */
} gp_activity_range;

/*
 * What to sample, as Perfetto's GpuCounterConfig says it. Either
 * counter_ids or counter_names (names or globs), not both. Periodic
 * sampling when counter_period_ns > 0; per-activity sampling when
 * instrumented is set, decided by the filters in this order: name filters
 * (any must match; none = all pass), TX-range include/exclude globs over
 * the enclosing user ranges (excludes win; none = all pass), then skip /
 * count ranges (none = all). Pointers are borrowed for the duration of the
 * call only.
 */
typedef struct gp_counter_config {
  uint64_t counter_period_ns;
  const uint32_t *counter_ids;
  size_t num_counter_ids;
  const char *const *counter_names;
  size_t num_counter_names;
  uint32_t instrumented;
  /* 0 or 1. With 1, a selection larger than the device counts at once is
   * time-multiplexed where the catalog supports_multiplex: the counters
   * take turns, perf's way, in slices of GP_COUNTER_MUX_PERIODS sampling
   * periods (4 ms without a period): slice k counts, from the k-th
   * counter on (modulo their number, in the order given or selected),
   * each that still fits. A periodic record covers one window within a
   * slice, a per-activity one the activity, counted with the slice it
   * started in; a counter has records only for what it counted. */
  uint32_t multiplex;
  const gp_activity_name_filter *name_filters;
  size_t num_name_filters;
  const char *const *tx_include_globs;
  size_t num_tx_include_globs;
  const char *const *tx_exclude_globs;
  size_t num_tx_exclude_globs;
  const gp_activity_range *ranges;
  size_t num_ranges;
} gp_counter_config;

/*
 * Starts sampling counters of a device (or of every device with a catalog,
 * for GP_ALL_DEVICES) into COUNTER records: periodic samples carry
 * correlation_id 0 and the window they cover; per-activity values carry the
 * activity's correlation id and its [start, end] as the window. Validates
 * the whole config first: GP_ENOCOUNTER for an unknown counter,
 * GP_ECAPACITY for more than the hardware can count at once (unless
 * multiplexed, see gp_counter_config.multiplex), GP_EINVAL for
 * a bad period or filter; nothing starts on error. GP_EBUSY if sampling
 * already runs on the device. GP_ENOTSUP if instrumented sampling is asked
 * of a device that cannot do it (the host CPU; with GP_ALL_DEVICES such a
 * device takes only the periodic part, if any). With GP_ALL_DEVICES, each
 * id or name must exist on at least one device, and each device samples
 * those it has. Only kernels are instrumented.
 */
#define GP_ALL_DEVICES UINT32_MAX
#define GP_COUNTER_MUX_PERIODS 4
GP_EXPORT int gp_counters_start(uint32_t device_id,
                                const gp_counter_config *config);

/* Stops sampling (emitting the last partial window). GP_ESTATE if not
 * sampling. */
GP_EXPORT int gp_counters_stop(uint32_t device_id);

/* ------------------------------------------------------------------ */
/* Names, listing and the host CPU                                      */

/* Perfetto's MeasureUnit name of a unit ("BYTE", "PERCENT"), or
 * "UNKNOWN". */
GP_EXPORT const char *gp_unit_name(uint32_t unit);

/* The name of a counter type ("int64", "double", "percent"), or
 * "unknown". */
GP_EXPORT const char *gp_counter_type_name(uint32_t type);

/* The named group with this id (custom, or a name for a fixed one).
 * GP_ENOENT if the device names no such group. */
GP_EXPORT int gp_counter_group_lookup(uint32_t device_id, uint32_t group_id,
                                      gp_counter_group_info *info);

/* Flags of gp_device_list_print(). */
#define GP_LIST_JSON 1u        /* JSON instead of text */
#define GP_LIST_NO_COUNTERS 2u /* devices and queues only */
#define GP_LIST_LOADERS 4u     /* then the OpenCL and Vulkan devices */

/*
 * Prints the devices gpuperf knows and their counters (id, name, type,
 * units, groups, blocks, description) to out: every device, or only
 * device_id (GP_ALL_DEVICES for all). With GP_LIST_LOADERS (and all
 * devices), then the OpenCL and Vulkan devices their loaders report
 * (libOpenCL.so.1 and libvulkan.so.1, opened at run time; asking them
 * initialises their drivers in this process) with the counters a program
 * recorded by `gpuperf record` gets on each; in JSON, as the members
 * "loader_devices" and "loader_notes" (why an API has none). This is what
 * `gpuperf list` and GPUPERF_HUD=help print. GP_EINVAL for NULL out or
 * unknown flags, GP_ENODEV for an unknown device, GP_EIO if writing
 * failed.
 */
GP_EXPORT int gp_device_list_print(FILE *out, uint32_t device_id,
                                   uint32_t flags);

/*
 * Whether some device of this machine has a counter that name (a name or
 * a shell glob) matches: one registered in this process (as
 * gp_counter_select() finds them), or one that an OpenCL or Vulkan device
 * present gets in a program recorded by `gpuperf record` (asking their
 * loaders, as GP_LIST_LOADERS does). Returns 0 if so; otherwise
 * GP_ENOCOUNTER, having written into why (size bytes; may be NULL) one
 * line that says why the machine lacks it where that can be told, e.g.
 * "this machine has no hardware PMU (perf_event_open of
 * PERF_COUNT_HW_CPU_CYCLES: ENOENT)", else that no device has it.
 * GP_EINVAL for a NULL or empty name. This is how `gpuperf record -e` and
 * `gpuperf stat -e` check names before they run anything, and what
 * `gpuperf list` shows is what it accepts.
 */
GP_EXPORT int gp_counter_name_check(const char *name, char *why, size_t size);

/*
 * Registers the host CPU as a device (once; later calls return the same
 * id) whose catalog is the perf_event counters this machine offers:
 * hardware events where the kernel has them, software events (task-clock,
 * context switches, page faults, ...) always. A perfmon on it counts the
 * calling process, its threads and children created afterwards. Host CPU
 * devices do not run jobs: perfmons are never pending and there is no
 * global perfmon. Stores the device id in *device_id.
 */
GP_EXPORT int gp_host_device_register(uint32_t *device_id);

/*
 * Says whether perf_event_open() can count this process: returns 0 if it
 * can, or the error it gave (GP_EPERM, GP_EACCES as -EACCES, GP_ENOSYS as
 * -ENOSYS ...) and writes into msg (size bytes, may be NULL) one line
 * naming the cause, kernel.perf_event_paranoid with its current value
 * when that is the reason.
 */
GP_EXPORT int gp_host_perf_status(char *msg, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_COUNTERS_H */
