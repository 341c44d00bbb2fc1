/*
 * translate_events.c - CUPTI's EVENT, EVENT_INSTANCE, METRIC and
 * METRIC_INSTANCE records into ours (gpuperf/activity_events.h), and the
 * METRIC records of the collector's own per-kernel values.
 *
 * CUPTI defines the four records but never writes them: they are for
 * tools built on its event and metric APIs to keep what they read
 * ("not produced by the activity API"). Those APIs were deprecated in
 * CUDA 12.8 and are unsupported in 13.0: on CUDA 13, cuptiMetricGetAttribute
 * answers CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, and
 * cuptiActivityGetNextRecord refuses a buffer holding one of these
 * records (CUPTI_ERROR_INVALID_KIND), so none reaches us through CUPTI's
 * buffers. A record handed to gp__cuda_translate() (a tool's own) is
 * translated as it is, with what it lacks left unknown: its device (the
 * records name none), its name and its metric's value kind (the APIs
 * that would say cannot), the metric's domain.
 *
 * The collector's own per-kernel values come from the range profiler
 * (profiler.c), which measures NVIDIA's metrics, device-wide: each is
 * also a METRIC record (gp__cuda_metric_record), a double or a percent,
 * with no instances, for the kernels sampling instruments.
 */
#include "cudaInt.h"

static int event_rec(const CUpti_ActivityEvent *e) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_EVENT, 0))
    return GP_ENOENT;
  gp_activity_event *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_EVENT, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = e->correlationId;
  r->value = e->value;
  r->start = 0; /* CUPTI does not say (its kernel record does) */
  r->end = 0;
  r->device_id = UINT32_MAX;
  r->event_id = e->id;
  r->domain_id = e->domain;
  r->num_instances = 0;
  r->name_id = 0;
  r->domain_name_id = 0;
  r->flags = 0; /* CUPTI's event records have none */
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int event_instance_rec(const CUpti_ActivityEventInstance *e) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_EVENT_INSTANCE, 0))
    return GP_ENOENT;
  gp_activity_event_instance *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_EVENT_INSTANCE, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = e->correlationId;
  r->value = e->value;
  r->device_id = UINT32_MAX;
  r->event_id = e->id;
  r->domain_id = e->domain;
  r->instance = e->instance;
  r->flags = 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* CUPTI's metric flags are ours, bit for bit; others are not kept. */
static uint32_t metric_flags(uint8_t f) {
  _Static_assert(GP_ACTIVITY_FLAG_METRIC_OVERFLOWED ==
                         CUPTI_ACTIVITY_FLAG_METRIC_OVERFLOWED &&
                     GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID ==
                         CUPTI_ACTIVITY_FLAG_METRIC_VALUE_INVALID,
                 "the metric flags are CUPTI's");
  return f & (GP_ACTIVITY_FLAG_METRIC_OVERFLOWED |
              GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID);
}

static int metric_rec(const CUpti_ActivityMetric *m) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_METRIC, 0))
    return GP_ENOENT;
  gp_activity_metric *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_METRIC, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = m->correlationId;
  r->value.u64 = m->value.metricValueUint64; /* the 64 bits, whatever kind */
  r->start = 0;
  r->end = 0;
  r->device_id = UINT32_MAX;
  r->metric_id = m->id;
  r->value_kind = GP_METRIC_VALUE_UNKNOWN;
  r->flags = metric_flags(m->flags);
  r->name_id = 0;
  r->domain_id = UINT32_MAX;
  r->num_instances = 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

static int metric_instance_rec(const CUpti_ActivityMetricInstance *m) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_METRIC_INSTANCE, 0))
    return GP_ENOENT;
  gp_activity_metric_instance *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_METRIC_INSTANCE, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = m->correlationId;
  r->value.u64 = m->value.metricValueUint64;
  r->device_id = UINT32_MAX;
  r->metric_id = m->id;
  r->instance = m->instance;
  r->value_kind = GP_METRIC_VALUE_UNKNOWN;
  r->flags = metric_flags(m->flags);
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}

/* See cudaInt.h. */
int gp__cuda_translate_events(const CUpti_Activity *rec) {
  switch (rec->kind) {
  case CUPTI_ACTIVITY_KIND_EVENT:
    return event_rec((const CUpti_ActivityEvent *)rec);
  case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
    return event_instance_rec((const CUpti_ActivityEventInstance *)rec);
  case CUPTI_ACTIVITY_KIND_METRIC:
    return metric_rec((const CUpti_ActivityMetric *)rec);
  case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    return metric_instance_rec((const CUpti_ActivityMetricInstance *)rec);
  default:
    return GP_EKIND;
  }
}

/* See cudaInt.h. */
int gp__cuda_metric_record(uint32_t device_id, const gp_counter_info *info,
                           double value, uint64_t start, uint64_t end,
                           uint64_t correlation_id) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_METRIC, 0))
    return GP_ENOENT;
  gp_activity_metric *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_METRIC, sizeof(*r), 0, 0);
  if (!r)
    return GP_ENOSPC;
  r->correlation_id = correlation_id;
  r->value.f64 = value;
  r->start = start;
  r->end = end;
  r->device_id = device_id;
  r->metric_id = info->id;
  r->value_kind = info->type == GP_COUNTER_TYPE_PERCENT
                      ? GP_METRIC_VALUE_PERCENT
                      : GP_METRIC_VALUE_DOUBLE;
  /* Not a number (a ratio over nothing can come out so): no value. */
  r->flags = value == value ? 0 : GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID;
  if (r->flags)
    r->value.f64 = 0.0;
  r->name_id = GP_CORE->string_intern(info->name);
  r->domain_id = info->block_id;
  r->num_instances = 1; /* rolled up over the device */
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
  return 0;
}
