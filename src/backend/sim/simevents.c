/*
 * simevents.c - the EVENT, METRIC, EVENT_INSTANCE and METRIC_INSTANCE
 * records of an instrumented simulated kernel (gpuperf/activity_events.h):
 * the counters the sampler measures over the kernel, raw counts as
 * events and derived values as metrics, each with its instances.
 *
 * Which is which. A counter of type INT64 that adds up (GP__SUM) is a
 * raw count: an EVENT, its domain the counter's block. Every other one (a
 * ratio, a percentage, an average per unit) is a METRIC.
 *
 * Instances: a model. The cost model works a kernel out as a whole; the
 * instances give each unit of a domain its share. On the "compute" GPU
 * the sm block has one instance per SM: the kernel's blocks are dealt to
 * the SMs in turn (block b to SM b mod units, as a hardware block
 * scheduler hands out its first wave), and an SM's share of each count is
 * its share of the blocks. An event's instances are whole numbers that
 * add up to it exactly (the count times the blocks dealt so far, floored:
 * each instance is the difference of two such floors). A metric's
 * instance is the metric's formula over the SM's share: its own cycles
 * where the metric averages over units (elapsed, active cycles), the
 * same ratio where it is one (occupancy), which an SM that ran no block
 * cannot have (METRIC_VALUE_INVALID). The other blocks (device, lts,
 * dram; the V3D's perfcnt) have one instance: the model does not split
 * the L2 into slices or memory into partitions, and the V3D 4.2 has one
 * core, whose counters the kernel reads (core 0 of V3D_CORE_READ).
 *
 * Widths. A catalog's counter_bits says how wide the hardware counters
 * that count one job are (the V3D's: 32). An event over a kernel whose
 * count reaches 2^bits holds the count modulo 2^bits and is flagged
 * EVENT_OVERFLOWED; a metric over it would be METRIC_OVERFLOWED (no
 * simulated metric is: the V3D catalog has only raw counts, and the
 * compute GPU's counters are 64 bits wide). The COUNTER records of the
 * same kernel keep the full count, as they always did.
 */
#include <string.h>

#include "simInt.h"

/* The counters of one sampler over one kernel, and what every record of
 * it shares. */
typedef struct ev_ctx {
  const sim_op *op;
  const sim_device *d;
  const gp__catalog *cat;
  uint64_t start, end; /* trace clock */
  bool ev, ev_inst, met, met_inst;
  uint64_t blocks; /* of the kernel's grid */
  uint32_t units;  /* the SMs */
} ev_ctx;

/* The compute catalog's sm block (simcounters.c's B_SM): one instance
 * per compute unit. */
#define SIM_SM_BLOCK 1u

static uint32_t block_instances(const ev_ctx *c, uint32_t block) {
  if (c->d->m->model == GP_SIM_MODEL_COMPUTE && block == SIM_SM_BLOCK)
    return c->units;
  return 1;
}

/* Blocks dealt to SMs 0 .. i-1 (block b to SM b mod units). */
static uint64_t blocks_before(const ev_ctx *c, uint32_t i) {
  uint64_t q = c->blocks / c->units, r = c->blocks % c->units;
  return q * i + (i < r ? i : r);
}

static bool is_event(const gp__counter_def *def) {
  return def->info.type == GP_COUNTER_TYPE_INT64 && def->combine == GP__SUM;
}

/* A count as the hardware counter of width bits holds it. */
static uint64_t wrap(uint64_t v, uint32_t bits, uint32_t *flags) {
  if (bits == 0 || bits >= 64 || v >> bits == 0)
    return v;
  *flags |= GP_ACTIVITY_FLAG_EVENT_OVERFLOWED;
  return v & ((1ull << bits) - 1);
}

static uint32_t block_name(const ev_ctx *c, uint32_t block) {
  return block < c->cat->num_blocks
             ? gp__string_intern(c->cat->blocks[block].name)
             : 0;
}

static void event_records(const ev_ctx *c, const gp__counter_def *def,
                          double num, double den) {
  gp_counter_value v;
  gp__counter_finish(def, num, den, &v);
  uint64_t total = v.i64 > 0 ? (uint64_t)v.i64 : 0;
  uint32_t n = block_instances(c, def->info.block_id);
  uint32_t bits = c->cat->counter_bits;
  const sim_op *op = c->op;
  if (c->ev) {
    gp_activity_event *r = gp__activity_reserve(
        GP_ACTIVITY_KIND_EVENT, sizeof(*r), op->context_id, op->stream_id);
    if (r) {
      r->flags = 0;
      r->correlation_id = op->correlation_id;
      r->value = wrap(total, bits, &r->flags);
      r->start = c->start;
      r->end = c->end;
      r->device_id = op->device_id;
      r->event_id = def->info.id;
      r->domain_id = def->info.block_id;
      r->num_instances = n;
      r->name_id = gp__string_intern(def->info.name);
      r->domain_name_id = block_name(c, def->info.block_id);
      r->reserved0 = 0;
      gp__activity_commit(r);
    }
  }
  if (!c->ev_inst)
    return;
  uint64_t prev = 0;
  for (uint32_t i = 0; i < n; i++) {
    /* total * (blocks dealt to SMs 0 .. i), floored: exact in 128 bits. */
    uint64_t upto = n == 1 ? total
                           : (uint64_t)((unsigned __int128)total *
                                        blocks_before(c, i + 1) / c->blocks);
    gp_activity_event_instance *r =
        gp__activity_reserve(GP_ACTIVITY_KIND_EVENT_INSTANCE, sizeof(*r),
                             op->context_id, op->stream_id);
    if (r) {
      r->flags = 0;
      r->correlation_id = op->correlation_id;
      r->value = wrap(upto - prev, bits, &r->flags);
      r->device_id = op->device_id;
      r->event_id = def->info.id;
      r->domain_id = def->info.block_id;
      r->instance = i;
      r->reserved0 = 0;
      gp__activity_commit(r);
    }
    prev = upto;
  }
}

/* A metric's value from (num, den): its kind, and its flags. */
static uint32_t metric_value(const gp__counter_def *def, double num, double den,
                             gp_metric_value *out, uint32_t *flags) {
  gp_counter_value v;
  uint32_t type = gp__counter_finish(def, num, den, &v);
  *flags = def->combine == GP__RATIO && !(den > 0.0)
               ? GP_ACTIVITY_FLAG_METRIC_VALUE_INVALID
               : 0;
  if (type == GP_VALUE_INT64) {
    out->i64 = v.i64;
    return GP_METRIC_VALUE_INT64;
  }
  out->f64 = v.f64;
  return def->info.type == GP_COUNTER_TYPE_PERCENT ? GP_METRIC_VALUE_PERCENT
                                                   : GP_METRIC_VALUE_DOUBLE;
}

/* SM i's share of the kernel's work: its blocks' share of the counts,
 * and of the cycles the cost model gives per unit on average (their
 * total over the units, times the share). */
static void sm_share(const ev_ctx *c, uint32_t i, sim_acc *a) {
  const sim_op *op = c->op;
  double share = (double)(blocks_before(c, i + 1) - blocks_before(c, i)) /
                 (double)c->blocks;
  double per_unit = share * c->units;
  double dur = (double)(op->end - op->start);
  a->jobs = 1.0;
  a->work_ns = dur;
  a->kernel_ns = dur;
  const double *s = (const double *)&op->stats;
  double *k = (double *)&a->k;
  for (size_t j = 0; j < sizeof(sim_work_stats) / sizeof(double); j++)
    k[j] = s[j] * share;
  a->k.kernels = 1.0;
  a->k.active_cycles = op->stats.active_cycles * per_unit;
  a->k.occ_cycles = op->stats.occ_cycles * per_unit;
  a->k.issue_cycles = op->stats.issue_cycles * per_unit;
  a->k.stall_cycles = op->stats.stall_cycles * per_unit;
}

static void metric_instance(const ev_ctx *c, const gp__counter_def *def,
                            uint32_t i, double num, double den) {
  const sim_op *op = c->op;
  gp_activity_metric_instance *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_METRIC_INSTANCE, sizeof(*r),
                           op->context_id, op->stream_id);
  if (!r)
    return;
  r->correlation_id = op->correlation_id;
  r->value_kind = metric_value(def, num, den, &r->value, &r->flags);
  r->device_id = op->device_id;
  r->metric_id = def->info.id;
  r->instance = i;
  r->reserved0 = 0;
  gp__activity_commit(r);
}

static void metric_records(const ev_ctx *c, uint32_t index,
                           const gp__counter_def *def, double num, double den) {
  uint32_t n = block_instances(c, def->info.block_id);
  const sim_op *op = c->op;
  if (c->met) {
    gp_activity_metric *r = gp__activity_reserve(
        GP_ACTIVITY_KIND_METRIC, sizeof(*r), op->context_id, op->stream_id);
    if (r) {
      r->correlation_id = op->correlation_id;
      r->value_kind = metric_value(def, num, den, &r->value, &r->flags);
      r->start = c->start;
      r->end = c->end;
      r->device_id = op->device_id;
      r->metric_id = def->info.id;
      r->name_id = gp__string_intern(def->info.name);
      r->domain_id = def->info.block_id;
      r->num_instances = n;
      r->reserved0 = 0;
      gp__activity_commit(r);
    }
  }
  if (!c->met_inst)
    return;
  if (n == 1) {
    metric_instance(c, def, 0, num, den);
    return;
  }
  double dur = (double)(op->end - op->start);
  for (uint32_t i = 0; i < n; i++) {
    sim_acc a;
    sm_share(c, i, &a);
    double inum, iden;
    gp__sim_counter_eval(c->d->m, c->cat, index, &a, dur, dur, &inum, &iden);
    metric_instance(c, def, i, inum, iden);
  }
}

/* See simInt.h. */
void gp__sim_emit_events(const sim_op *op, const sim_device *d,
                         const gp__sampler *s, const double *num,
                         const double *den, uint64_t start, uint64_t end) {
  ev_ctx c = {
      .op = op,
      .d = d,
      .cat = s->cat,
      .start = start,
      .end = end,
      .ev = gp__activity_enabled(GP_ACTIVITY_KIND_EVENT, op->context_id),
      .ev_inst =
          gp__activity_enabled(GP_ACTIVITY_KIND_EVENT_INSTANCE, op->context_id),
      .met = gp__activity_enabled(GP_ACTIVITY_KIND_METRIC, op->context_id),
      .met_inst = gp__activity_enabled(GP_ACTIVITY_KIND_METRIC_INSTANCE,
                                       op->context_id),
  };
  if (!(c.ev || c.ev_inst || c.met || c.met_inst) ||
      op->kind != GP_ACTIVITY_KIND_KERNEL)
    return;
  c.blocks = (uint64_t)op->key.grid.x * op->key.grid.y * op->key.grid.z;
  c.units = d->m->compute_units ? d->m->compute_units : 1;
  if (c.blocks == 0)
    c.blocks = 1; /* defensive: launches of no block are refused */
  uint64_t mask = gp__sampler_mask(s, op->start);
  for (uint32_t i = 0; i < s->num_counters; i++) {
    if (!(mask >> i & 1))
      continue; /* multiplexed: not counted in this kernel's slice */
    const gp__counter_def *def = &s->cat->counters[s->index[i]];
    if (is_event(def))
      event_records(&c, def, num[i], den[i]);
    else
      metric_records(&c, s->index[i], def, num[i], den[i]);
  }
}
