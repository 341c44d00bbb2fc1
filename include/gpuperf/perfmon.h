/*
 * gpuperf/perfmon.h - perfmons (the V3D kernel model, made general) and
 * monitors (an application API shaped like GL_AMD_performance_monitor).
 *
 * A perfmon is a set of counters of one device, at most what the device
 * can count at once. GPU work ("jobs") carries a perfmon; the device's
 * scheduler switches perfmons at job boundaries: it reads the hardware
 * counters, adds them into the outgoing perfmon, programs the incoming
 * one and starts it. Consecutive jobs that carry the same perfmon cause no
 * switch, and jobs of different perfmons never run at the same time, so a
 * perfmon only ever counts the work of its own jobs. Values accumulate for
 * the life of the perfmon and are read back through fences: without
 * waiting, reading answers GP_EAGAIN while jobs of the perfmon are still
 * pending; with waiting, it blocks until they end.
 *
 * A global (system-wide) perfmon counts every job of every client of its
 * device. While one is set, a job carrying a perfmon of its own is refused
 * with GP_EAGAIN, and setting a second global perfmon fails with GP_EBUSY,
 * as the V3D uapi does.
 *
 * Perfmons are reference counted: gp_perfmon_create() returns one
 * reference, jobs in flight and streams hold their own, and the memory
 * goes when the last reference is put. Destroying a perfmon while its
 * jobs are in flight is safe.
 *
 * A monitor is what an application (or a GL driver) uses: it enumerates
 * groups (the device's counter blocks) and their counters, selects
 * counters per group, and brackets work with begin/end; every job
 * submitted from the monitor's context in between carries the monitor's
 * perfmon. One monitor per context may be active at a time.
 *
 * All functions return 0 or a negative GP_E* code; a failed call changes
 * nothing.
 */
#ifndef GPUPERF_PERFMON_H
#define GPUPERF_PERFMON_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_perfmon gp_perfmon;
typedef struct gp_monitor gp_monitor;

/* A counter value: i64 for GP_COUNTER_TYPE_INT64 counters, f64 for
 * DOUBLE and PERCENT ones (see gp_counter_info.type). */
typedef union gp_counter_value {
  int64_t i64;
  double f64;
} gp_counter_value;

/* The most counters any perfmon can hold, whatever the device. */
#define GP_PERFMON_MAX_COUNTERS 64

/* ------------------------------------------------------------------ */
/* Perfmons                                                             */

/*
 * Creates a perfmon on device_id counting the counters ids[0 .. n-1] (ids
 * of the device's catalog), in that order. ids is borrowed for the call.
 * Everything is validated before anything is allocated: GP_EINVAL if ids
 * or pm is NULL, n is 0 or an id appears twice; GP_ENODEV for an unknown
 * device; GP_ENOENT if the device has no counters; GP_ENOCOUNTER for an id
 * the catalog does not have; GP_ECAPACITY for more counters than the
 * device's max_active or than one of its blocks can count at once. On
 * the host CPU device, GP_EPERM or -EACCES when perf_event_open() is
 * refused (gp_host_perf_status() says why). Stores one reference in *pm;
 * nothing is created on error.
 */
GP_EXPORT int gp_perfmon_create(uint32_t device_id, const uint32_t *ids,
                                size_t n, gp_perfmon **pm);

/*
 * Destroys the caller's perfmon: its id no longer resolves, it stops
 * being the global perfmon if it was, later jobs may no longer carry it
 * (a stream bound to it fails to submit with GP_ENOENT), and the
 * reference from gp_perfmon_create() is dropped. Jobs already in flight
 * keep their own references and finish counting into it. NULL is
 * accepted. Returns 0.
 */
GP_EXPORT int gp_perfmon_destroy(gp_perfmon *pm);

/* Takes a new reference on pm and returns pm (NULL for NULL). */
GP_EXPORT gp_perfmon *gp_perfmon_get(gp_perfmon *pm);

/* Drops a reference; the last one frees pm. NULL is accepted. */
GP_EXPORT void gp_perfmon_put(gp_perfmon *pm);

/* Finds a live (not destroyed) perfmon by id and stores a new reference
 * in *pm. GP_ENOENT if there is none, GP_EINVAL if pm is NULL. */
GP_EXPORT int gp_perfmon_lookup(uint32_t id, gp_perfmon **pm);

/* The perfmon's id (never 0; it is the perfmon_id of records), 0 for
 * NULL. */
GP_EXPORT uint32_t gp_perfmon_id(const gp_perfmon *pm);

typedef struct gp_perfmon_info {
  uint32_t id;
  uint32_t device_id;
  uint32_t num_counters;
  uint32_t destroyed;          /* 1 once gp_perfmon_destroy() was called */
  const uint32_t *counter_ids; /* lives as long as the perfmon */
} gp_perfmon_info;

/* Fills *info. GP_EINVAL if pm or info is NULL. */
GP_EXPORT int gp_perfmon_get_info(const gp_perfmon *pm, gp_perfmon_info *info);

/*
 * Reads the accumulated values of pm into values, which must have room
 * for its num_counters entries, in the order of creation. With wait 0,
 * returns GP_EAGAIN at once (values untouched) while jobs carrying pm are
 * pending; with wait 1, waits for them first. Reading does not stop or
 * reset the perfmon: later jobs keep adding to the same values. GP_EINVAL
 * for NULL arguments or a wait other than 0 or 1.
 */
GP_EXPORT int gp_perfmon_get_values(gp_perfmon *pm, gp_counter_value *values,
                                    uint32_t wait);

/*
 * Makes pm its device's global perfmon: from the next job on, it counts
 * every job of every client, and jobs carrying a perfmon of their own are
 * refused with GP_EAGAIN. Takes a reference. GP_EBUSY if the device
 * already has a global perfmon, GP_ENOENT if pm was destroyed,
 * GP_ENOTSUP if the device has no job scheduler (the host CPU).
 */
GP_EXPORT int gp_perfmon_set_global(gp_perfmon *pm);

/* Stops pm being the global perfmon (its values are kept). GP_ESTATE if
 * it is not its device's global perfmon. */
GP_EXPORT int gp_perfmon_clear_global(gp_perfmon *pm);

/*
 * Stores in *count how many times the scheduler of device_id has switched
 * perfmons (a job whose perfmon differs from the previous job's, "none"
 * included). GP_ENODEV / GP_ENOENT as gp_perfmon_create().
 */
GP_EXPORT int gp_perfmon_switch_count(uint32_t device_id, uint64_t *count);

/* ------------------------------------------------------------------ */
/* Monitors (GL_AMD_performance_monitor)                                */

/*
 * Stores the number of counter groups of a device in *num_groups, and up
 * to cap group ids in groups (may be NULL). Groups are the catalog's
 * blocks. GP_ENODEV, GP_ENOENT (no counters), GP_EINVAL (num_groups NULL).
 */
GP_EXPORT int gp_monitor_get_groups(uint32_t device_id, uint32_t *num_groups,
                                    uint32_t *groups, size_t cap);

typedef struct gp_monitor_group_info {
  uint32_t id;
  uint32_t num_counters;
  uint32_t max_active; /* counters of this group one monitor may select */
  uint32_t reserved0;
  const char *name;
  const char *description;
} gp_monitor_group_info;

/* Describes a group. GP_ENOENT for a group id the device does not have. */
GP_EXPORT int gp_monitor_get_group_info(uint32_t device_id, uint32_t group,
                                        gp_monitor_group_info *info);

/*
 * Stores up to cap counter ids of a group in ids (may be NULL) and their
 * number in *count. GP_ENOENT for an unknown group.
 */
GP_EXPORT int gp_monitor_get_counters(uint32_t device_id, uint32_t group,
                                      uint32_t *ids, size_t cap, size_t *count);

typedef struct gp_monitor_counter_info {
  uint32_t id;
  uint32_t group;
  uint32_t type; /* gp_counter_type (COUNTER_TYPE_AMD) */
  uint32_t reserved0;
  double range_min; /* COUNTER_RANGE_AMD */
  double range_max;
  const char *name;
  const char *description;
} gp_monitor_counter_info;

/* Describes a counter of a group. GP_ENOENT for an unknown group,
 * GP_ENOCOUNTER for a counter that is not in the group. */
GP_EXPORT int gp_monitor_get_counter_info(uint32_t device_id, uint32_t group,
                                          uint32_t counter,
                                          gp_monitor_counter_info *info);

/*
 * Creates a monitor for the work of one context (a context id as records
 * carry it, e.g. gp_sim_context_id()). No counter is selected. GP_ENOENT
 * if no backend knows the context, GP_ENOTSUP if its device has no
 * counters.
 */
GP_EXPORT int gp_monitor_create(uint32_t context_id, gp_monitor **mon);

/* Destroys a monitor, ending it first if it is active. NULL accepted. */
GP_EXPORT int gp_monitor_destroy(gp_monitor *mon);

/*
 * Selects (enable 1) or deselects (enable 0) counters of one group; ids
 * borrowed for the call. GP_ESTATE while the monitor is active; GP_ENOENT
 * for an unknown group; GP_ENOCOUNTER for a counter not in the group;
 * GP_ECAPACITY if the group's max_active, or the device's, would be
 * exceeded; GP_EINVAL for NULL arguments or enable other than 0/1.
 * Selecting clears the results of an earlier begin/end.
 */
GP_EXPORT int gp_monitor_select_counters(gp_monitor *mon, uint32_t enable,
                                         uint32_t group, const uint32_t *ids,
                                         size_t n);

/*
 * Starts counting: every job submitted from the monitor's context until
 * gp_monitor_end() carries the monitor's perfmon (a stream with a perfmon
 * of its own keeps it). Earlier results are discarded. GP_ESTATE if this
 * monitor is already active, GP_EBUSY if another monitor is active on the
 * context, GP_EINVAL if no counter is selected, GP_EAGAIN if the device
 * has a global perfmon.
 */
GP_EXPORT int gp_monitor_begin(gp_monitor *mon);

/* Stops counting; results become available once the jobs submitted
 * before the end have completed. GP_ESTATE if the monitor is not active. */
GP_EXPORT int gp_monitor_end(gp_monitor *mon);

/* What gp_monitor_get_result() answers (the PERFMON_RESULT_*_AMD pnames). */
typedef enum gp_monitor_pname {
  GP_MONITOR_RESULT_AVAILABLE = 0, /* uint32_t: 1 if results are ready */
  GP_MONITOR_RESULT_SIZE = 1,      /* uint32_t: bytes of the result */
  GP_MONITOR_RESULT = 2            /* gp_monitor_result[]; waits */
} gp_monitor_pname;

/* One counter of a result, in selection order (by group, then id). */
typedef struct gp_monitor_result {
  uint32_t group;
  uint32_t counter;
  uint32_t type; /* gp_counter_type: which member of value is set */
  uint32_t reserved0;
  gp_counter_value value;
} gp_monitor_result;

/*
 * Answers pname into data (size bytes) and stores the bytes written in
 * *written (may be NULL). RESULT_AVAILABLE and RESULT_SIZE write one
 * uint32_t and never wait; RESULT waits for the monitored jobs, then
 * writes as many whole entries as fit. GP_ESTATE while the monitor is
 * active or if it never ran; GP_EINVAL for an unknown pname or NULL data;
 * GP_ESIZE if size is smaller than one uint32_t (or one entry).
 */
GP_EXPORT int gp_monitor_get_result(gp_monitor *mon, uint32_t pname, void *data,
                                    size_t size, size_t *written);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_PERFMON_H */
