/*
 * gpuperf/activity_events.h - EVENT, METRIC, EVENT_INSTANCE and
 * METRIC_INSTANCE records: CUPTI 6.5's per-kernel event and metric values
 * (CUpti_ActivityEvent, _EventInstance, _Metric, _MetricInstance), for
 * any device whose counters can be measured over one kernel.
 *
 * Included by gpuperf/activity.h; include that instead.
 *
 * What is an event and what a metric. A device's counter catalog
 * (gpuperf/counters.h) has raw counts (a GP_COUNTER_TYPE_INT64 counter
 * that adds up across work: instructions, bytes, cycles) and derived
 * values (ratios, percentages, averages: Utilization, a hit rate, cycles
 * per unit on average). Over one kernel, the first are EVENT records,
 * with the block the counter belongs to as the event domain; the others
 * METRIC records, with the kind of value they hold and flags. Where a
 * domain has several instances (the SMs of a GPU), each EVENT is followed
 * by one EVENT_INSTANCE record per instance and each METRIC by one
 * METRIC_INSTANCE per instance, when those kinds are enabled: an event's
 * instances add up to it.
 *
 * They are written for the kernels that counter sampling instruments
 * (gp_counters_start with instrumented = 1: the same counters, the same
 * kernels as the COUNTER records with a correlation id, which stay as
 * they are), each kind when it is enabled: by the simulated GPUs, whose
 * values are the kernel's own as if it ran alone and whose records
 * follow their kernel's KERNEL record; by the CUDA collector, METRIC
 * records of its range profiler's values (NVIDIA's metrics, device-wide).
 * CUPTI's own records of these kinds are translated (docs/cuda.md).
 */
#ifndef GPUPERF_ACTIVITY_EVENTS_H
#define GPUPERF_ACTIVITY_EVENTS_H

#include <stdint.h>

#include "gpuperf/activity.h"

/* EVENT, EVENT_INSTANCE: the hardware counter wrapped its width while
 * counting (a 32-bit V3D counter over a long kernel); value is what the
 * counter held, the count modulo 2^width. gpuperf's: CUPTI's event
 * records have no flags. */
#define GP_ACTIVITY_FLAG_EVENT_OVERFLOWED (1u << 0)
/* METRIC, METRIC_INSTANCE (CUPTI's CUPTI_ACTIVITY_FLAG_METRIC_*): an event
 * the metric is derived from overflowed; the value could not be computed
 * (a ratio over nothing: a hit rate without requests, an occupancy of an
 * SM that ran no block), value is then 0. */
#define GP_ACTIVITY_FLAG_METRIC_OVERFLOWED (1u << 0)
#define GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID (1u << 1)

/* Which member of a metric's value holds it; the values are CUPTI's
 * CUpti_MetricValueKind. */
typedef enum gp_metric_value_kind {
  GP_METRIC_VALUE_DOUBLE = 0,            /* f64 */
  GP_METRIC_VALUE_UINT64 = 1,            /* u64 */
  GP_METRIC_VALUE_PERCENT = 2,           /* f64, 57.5 for 57.5 % */
  GP_METRIC_VALUE_THROUGHPUT = 3,        /* u64, bytes per second */
  GP_METRIC_VALUE_INT64 = 4,             /* i64 */
  GP_METRIC_VALUE_UTILIZATION_LEVEL = 5, /* u64, 0 (idle) .. 10 (max) */
  /* The source did not say (CUPTI 13 can no longer tell a metric's
   * kind): the 64 bits as the source gave them, in u64. */
  GP_METRIC_VALUE_UNKNOWN = 255
} gp_metric_value_kind;

/* A metric's value (CUPTI's CUpti_MetricValue), by its value_kind. */
typedef union gp_metric_value {
  double f64;
  uint64_t u64;
  int64_t i64;
} gp_metric_value;

/*
 * A raw counter's value over one kernel: CUPTI's CUpti_ActivityEvent,
 * with the device, the names and the kernel's time besides.
 */
typedef struct gp_activity_event {
  gp_activity hdr;
  uint64_t correlation_id; /* the kernel measured (its KERNEL record's) */
  uint64_t value;          /* the count (EVENT_OVERFLOWED: modulo 2^width) */
  uint64_t start, end;     /* the kernel's, trace clock; 0: unknown (CUPTI's
                              records do not say) */
  uint32_t device_id;      /* UINT32_MAX: unknown (CUPTI's) */
  uint32_t event_id;       /* the counter's id in the device's catalog;
                              CUDA: CUPTI's CUpti_EventID */
  uint32_t domain_id;      /* its block (gp_counter_block_info.id); CUDA:
                              CUPTI's CUpti_EventDomainID */
  uint32_t num_instances;  /* instances of the domain on the device (the
                              EVENT_INSTANCE records that follow when the
                              kind is enabled); 0: unknown */
  uint32_t name_id;        /* string id of the counter's name, 0: unknown */
  uint32_t domain_name_id; /* string id of the block's name, 0: unknown */
  uint32_t flags;          /* GP_ACTIVITY_FLAG_EVENT_OVERFLOWED */
  uint32_t reserved0;
} gp_activity_event;

/* One instance's share of an EVENT (an SM's, a core's): CUPTI's
 * CUpti_ActivityEventInstance. Written right after its EVENT record (when
 * EVENT is enabled), by the same thread, instances in order. */
typedef struct gp_activity_event_instance {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t value;
  uint32_t device_id;
  uint32_t event_id;
  uint32_t domain_id;
  uint32_t instance; /* 0 .. num_instances - 1 */
  uint32_t flags;    /* GP_ACTIVITY_FLAG_EVENT_OVERFLOWED */
  uint32_t reserved0;
} gp_activity_event_instance;

/*
 * A derived value over one kernel: CUPTI's CUpti_ActivityMetric, with the
 * device, the value's kind, the domain, the name and the kernel's time.
 */
typedef struct gp_activity_metric {
  gp_activity hdr;
  uint64_t correlation_id; /* the kernel measured */
  gp_metric_value value;   /* by value_kind; 0 with METRIC_VALUE_INVALID */
  uint64_t start, end;     /* the span measured, trace clock: the kernel's
                              (the simulator's), its launch call (the CUDA
                              collector's); 0: unknown (CUPTI's records) */
  uint32_t device_id;      /* UINT32_MAX: unknown (CUPTI's) */
  uint32_t metric_id;      /* the counter's id in the device's catalog;
                              CUDA: CUPTI's CUpti_MetricID */
  uint32_t value_kind;     /* gp_metric_value_kind */
  uint32_t flags;          /* GP_ACTIVITY_FLAG_METRIC_* */
  uint32_t name_id;        /* string id of the metric's name, 0: unknown */
  uint32_t domain_id;      /* the block its counts come from */
  uint32_t num_instances;  /* instances of that block (METRIC_INSTANCE
                              records that follow); 0: unknown */
  uint32_t reserved0;
} gp_activity_metric;

/* A metric over one instance's share of the kernel's work: CUPTI's
 * CUpti_ActivityMetricInstance. Written right after its METRIC record
 * (when METRIC is enabled), by the same thread, instances in order. */
typedef struct gp_activity_metric_instance {
  gp_activity hdr;
  uint64_t correlation_id;
  gp_metric_value value;
  uint32_t device_id;
  uint32_t metric_id;
  uint32_t instance;
  uint32_t value_kind; /* gp_metric_value_kind */
  uint32_t flags;      /* GP_ACTIVITY_FLAG_METRIC_* */
  uint32_t reserved0;
} gp_activity_metric_instance;

#endif /* GPUPERF_ACTIVITY_EVENTS_H */
