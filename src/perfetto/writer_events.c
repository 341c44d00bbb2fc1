/*
 * writer_events.c - EVENT, METRIC, EVENT_INSTANCE and METRIC_INSTANCE
 * records in a trace.
 *
 * A kernel's counter values are in the trace already, from its COUNTER
 * records: the per-activity GPU counter samples inside the kernel's
 * slice, where Perfetto's GPU compute view sums them. What EVENT and
 * METRIC records add is the rest: the event domain, the per-instance
 * values, the overflow and invalid flags, the value's kind. Each EVENT or
 * METRIC record, with the instance records that follow it, becomes one
 * instant on the "Device #N" track of the process (the parent of the
 * kernels' stream tracks), at the kernel's start, named after the
 * counter, its fields as debug annotations (the slice's args):
 *
 *   arg                          EVENT                METRIC
 *   debug.value                  uint                 double, or uint/int
 *   debug.correlation_id         the kernel's         the kernel's
 *   debug.event_id / metric_id   catalog or CUPTI id  catalog or CUPTI id
 *   debug.domain_id, .domain     block id, name       block id
 *   debug.value_kind             -                    "double", "percent", ...
 *   debug.overflowed             true when flagged    true when flagged
 *   debug.invalid                -                    true when flagged
 *   debug.instances[i]           instance i's value   the same ("invalid"
 *                                                     where it has none)
 *   debug.overflowed_instances[] the instances flagged overflowed
 *   debug.first_instance         the first instance's number, when not 0
 *
 * The instances of a record follow it from the same thread, so the
 * writer holds the record's instant open until something else begins
 * (another EVENT or METRIC, an instance of another one) or the writer
 * finishes; instances that come without their record (it was disabled,
 * or a flush cut between) make an instant of their own, without
 * debug.value. A record without a time (CUPTI's) is placed at the latest
 * time the writer knows; without a device (CUPTI's), on the process's
 * track. Written where a gpu.counters data source applies to the device.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfetto/proto.h"
#include "writerInt.h"

/* Instances held per instant at most: past that, a new instant goes on
 * with first_instance. */
#define KEV_MAX_INSTANCES 4096u

struct tw_kev {
  bool open;
  bool metric; /* a METRIC and its instances, else an EVENT */
  bool whole;  /* the EVENT or METRIC record itself was seen */
  uint64_t corr, ts;
  uint32_t device, id, domain, domain_name_id, name_id, flags, kind;
  uint32_t num_instances, first;
  gp_metric_value value;
  uint32_t n, cap;
  uint64_t *vals;   /* instance values (the union's 64 bits) */
  uint32_t *iflags; /* instance flags */
};

static void annotate_bool(gp__pb_writer *pb, const char *name) {
  gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(pb, GP_PB_DA_NAME, name);
  gp__pb_uint(pb, GP_PB_DA_BOOL_VALUE, 1);
  gp__pb_end(pb);
}

static const char *value_kind_name(uint32_t k) {
  switch (k) {
  case GP_METRIC_VALUE_DOUBLE:
    return "double";
  case GP_METRIC_VALUE_UINT64:
    return "uint64";
  case GP_METRIC_VALUE_PERCENT:
    return "percent";
  case GP_METRIC_VALUE_THROUGHPUT:
    return "throughput";
  case GP_METRIC_VALUE_INT64:
    return "int64";
  case GP_METRIC_VALUE_UTILIZATION_LEVEL:
    return "utilization_level";
  default:
    return "unknown";
  }
}

/* One value of a metric of kind k into an annotation's value field (or an
 * array element's). */
static void metric_value(gp__pb_writer *pb, uint32_t k, gp_metric_value v) {
  if (k == GP_METRIC_VALUE_DOUBLE || k == GP_METRIC_VALUE_PERCENT)
    gp__pb_double(pb, GP_PB_DA_DOUBLE_VALUE, v.f64);
  else if (k == GP_METRIC_VALUE_INT64)
    gp__pb_int(pb, GP_PB_DA_INT_VALUE, v.i64);
  else
    gp__pb_uint(pb, GP_PB_DA_UINT_VALUE, v.u64);
}

static uint64_t kev_track(gp__tw *w, uint32_t device) {
  return device < TW_MAX_DEVICES ? gp__tw_device_track(w, device)
                                 : gp__tw_process_track(w);
}

static void instances(gp__tw *w, const struct tw_kev *k) {
  gp__pb_writer *pb = &w->pb;
  uint32_t bad = k->metric ? GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID : 0;
  gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(pb, GP_PB_DA_NAME, "instances");
  for (uint32_t i = 0; i < k->n; i++) {
    gp__pb_begin(pb, GP_PB_DA_ARRAY_VALUES);
    gp_metric_value v = {.u64 = k->vals[i]};
    if (k->iflags[i] & bad)
      gp__pb_string(pb, GP_PB_DA_STRING_VALUE, "invalid");
    else if (k->metric)
      metric_value(pb, k->kind, v);
    else
      gp__pb_uint(pb, GP_PB_DA_UINT_VALUE, v.u64);
    gp__pb_end(pb);
  }
  gp__pb_end(pb);
  bool any = false;
  for (uint32_t i = 0; i < k->n && !any; i++)
    any = (k->iflags[i] & GP_ACTIVITY_FLAG_EVENT_OVERFLOWED) != 0;
  if (!any)
    return;
  gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(pb, GP_PB_DA_NAME, "overflowed_instances");
  for (uint32_t i = 0; i < k->n; i++) {
    if (!(k->iflags[i] & GP_ACTIVITY_FLAG_EVENT_OVERFLOWED))
      continue;
    gp__pb_begin(pb, GP_PB_DA_ARRAY_VALUES);
    gp__pb_uint(pb, GP_PB_DA_UINT_VALUE, k->first + i);
    gp__pb_end(pb);
  }
  gp__pb_end(pb);
}

/* See writerInt.h. */
void gp__tw_events_flush(gp__tw *w) {
  struct tw_kev *k = w->kev;
  if (!k || !k->open)
    return;
  k->open = false;
  char name[64];
  const char *nm = k->name_id ? gp__tw_string(w, k->name_id) : "";
  if (!*nm) {
    snprintf(name, sizeof(name), "%s %u", k->metric ? "metric" : "event",
             k->id);
    nm = name;
  }
  gp__tw_event_begin(w, k->ts, GP_PB_TE_TYPE_INSTANT, kev_track(w, k->device),
                     NULL, nm);
  gp__pb_writer *pb = &w->pb;
  if (k->whole) {
    if (k->metric) {
      gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
      gp__pb_string(pb, GP_PB_DA_NAME, "value");
      metric_value(pb, k->kind, k->value);
      gp__pb_end(pb);
      gp__tw_annotate_string(pb, "value_kind", value_kind_name(k->kind));
    } else {
      gp__tw_annotate_uint(pb, "value", k->value.u64);
    }
    if (k->flags & (k->metric ? GP_ACTIVITY_FLAG_METRIC_OVERFLOWED
                              : GP_ACTIVITY_FLAG_EVENT_OVERFLOWED))
      annotate_bool(pb, "overflowed");
    if (k->metric && (k->flags & GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID))
      annotate_bool(pb, "invalid");
    if (k->num_instances)
      gp__tw_annotate_uint(pb, "num_instances", k->num_instances);
  }
  gp__tw_annotate_uint(pb, "correlation_id", k->corr);
  gp__tw_annotate_uint(pb, k->metric ? "metric_id" : "event_id", k->id);
  if (k->domain != UINT32_MAX)
    gp__tw_annotate_uint(pb, "domain_id", k->domain);
  if (k->domain_name_id)
    gp__tw_annotate_string(pb, "domain", gp__tw_string(w, k->domain_name_id));
  if (k->first)
    gp__tw_annotate_uint(pb, "first_instance", k->first);
  if (k->n)
    instances(w, k);
  gp__tw_event_end(w);
}

/* Opens an instant (whole: from its EVENT or METRIC record), writing the
 * one open before it. NULL when out of memory. */
static struct tw_kev *kev_open(gp__tw *w, bool metric, bool whole) {
  gp__tw_events_flush(w);
  if (!w->kev && !(w->kev = calloc(1, sizeof(*w->kev))))
    return NULL;
  struct tw_kev *k = w->kev;
  k->open = true;
  k->metric = metric;
  k->whole = whole;
  k->n = 0;
  k->first = 0;
  k->flags = 0;
  k->num_instances = 0;
  k->name_id = 0;
  k->domain_name_id = 0;
  k->domain = UINT32_MAX;
  k->kind = GP_METRIC_VALUE_UNKNOWN;
  k->value.u64 = 0;
  return k;
}

/* Whether the workings of device's counters are written. */
static bool device_counters(gp__tw *w, uint32_t device) {
  if (!w->o.counters)
    return false;
  if (device >= TW_MAX_DEVICES)
    return true; /* unknown (CUPTI's): the process's track */
  gp__tw_device_seen(w, device);
  return !w->dev[device].no_counters;
}

/* See writerInt.h. */
void gp__tw_event_record(gp__tw *w, const gp_activity_event *e) {
  gp__tw_saw_ts(w, e->start);
  if (!device_counters(w, e->device_id))
    return;
  struct tw_kev *k = kev_open(w, false, true);
  if (!k)
    return;
  k->corr = e->correlation_id;
  k->ts = e->start;
  k->device = e->device_id;
  k->id = e->event_id;
  k->domain = e->domain_id;
  k->domain_name_id = e->domain_name_id;
  k->name_id = e->name_id;
  k->flags = e->flags;
  k->num_instances = e->num_instances;
  k->value.u64 = e->value;
}

/* See writerInt.h. */
void gp__tw_metric_record(gp__tw *w, const gp_activity_metric *m) {
  gp__tw_saw_ts(w, m->start);
  if (!device_counters(w, m->device_id))
    return;
  struct tw_kev *k = kev_open(w, true, true);
  if (!k)
    return;
  k->corr = m->correlation_id;
  k->ts = m->start;
  k->device = m->device_id;
  k->id = m->metric_id;
  k->domain = m->domain_id;
  k->name_id = m->name_id;
  k->flags = m->flags;
  k->kind = m->value_kind;
  k->num_instances = m->num_instances;
  k->value = m->value;
}

/* Adds one instance to the open instant if it continues it, else opens
 * one for it. */
static void add_instance(gp__tw *w, bool metric, uint64_t corr, uint32_t device,
                         uint32_t id, uint32_t instance, uint32_t kind,
                         uint64_t bits, uint32_t flags) {
  if (!device_counters(w, device))
    return;
  struct tw_kev *k = w->kev;
  bool goes_on = k && k->open && k->metric == metric && k->corr == corr &&
                 k->device == device && k->id == id &&
                 instance == k->first + k->n && k->n < KEV_MAX_INSTANCES;
  if (!goes_on) {
    if (!(k = kev_open(w, metric, false)))
      return;
    k->corr = corr;
    k->ts = 0; /* instances have no time: the latest known */
    k->device = device;
    k->id = id;
    k->kind = kind;
    k->first = instance;
  }
  if (k->n == k->cap) {
    uint32_t ncap = k->cap ? k->cap * 2 : 16;
    uint64_t *v = realloc(k->vals, ncap * sizeof(*v));
    if (v)
      k->vals = v;
    uint32_t *f = realloc(k->iflags, ncap * sizeof(*f));
    if (f)
      k->iflags = f;
    if (!v || !f)
      return;
    k->cap = ncap;
  }
  k->vals[k->n] = bits;
  k->iflags[k->n++] = flags;
}

/* See writerInt.h. */
void gp__tw_event_instance(gp__tw *w, const gp_activity_event_instance *e) {
  add_instance(w, false, e->correlation_id, e->device_id, e->event_id,
               e->instance, 0, e->value, e->flags);
}

/* See writerInt.h. */
void gp__tw_metric_instance(gp__tw *w, const gp_activity_metric_instance *m) {
  add_instance(w, true, m->correlation_id, m->device_id, m->metric_id,
               m->instance, m->value_kind, m->value.u64, m->flags);
}

/* See writerInt.h. */
void gp__tw_events_fini(gp__tw *w) {
  if (!w->kev)
    return;
  free(w->kev->vals);
  free(w->kev->iflags);
  free(w->kev);
  w->kev = NULL;
}
