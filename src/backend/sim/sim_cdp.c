/*
 * sim_cdp.c - the simulator's dynamic parallelism: when the child grids
 * of a gp_sim_launch_ex with cdp_blocks run, and the CDP_KERNEL and
 * PREEMPTION records (gpuperf/activity_cdp.h) of a retired kernel op;
 * also where an op's additions are written (gp__sim_extra_emit).
 *
 * The model (docs/sim.md). The parent's work takes P ns alone. Its first
 * n blocks reach their launches halfway, at P/2: each child grid is
 * queued then, handed to the hardware a launch latency later (the
 * model's launch_ns), and the children run one after another, C ns each
 * (the cost model's time for the child launch). Without sync the parent
 * grid completes at the later of P and its last child's end (a grid is
 * not complete before its children); with sync each launching block is
 * preempted (saved) when it launches and restored when its child ends,
 * and the parent's second half runs after the last restore. The child
 * grids' work counts in the device's counters as the parent's.
 */
#include "simInt.h"

/* See simInt.h: fills out[0, n) with the children's times, offsets from
 * the start of the parent's work, and returns the parent's duration from
 * there. */
uint64_t gp__sim_cdp_plan(const sim_model *m, uint64_t parent_ns,
                          uint64_t child_ns, uint32_t n, bool sync,
                          sim_cdp_child *out) {
  uint64_t half = parent_ns / 2, t = 0;
  for (uint32_t i = 0; i < n; i++) {
    sim_cdp_child *c = &out[i];
    c->grid_id = (int64_t)gp__correlation_next(); /* process-unique */
    c->parent_block = i;
    c->queued = half;
    c->submitted = half + m->launch_ns;
    c->start = c->submitted > t ? c->submitted : t;
    c->end = c->start + child_ns;
    t = c->end;
  }
  if (n == 0)
    return parent_ns;
  if (sync)
    return t + (parent_ns - half);
  return t > parent_ns ? t : parent_ns;
}

/* The coordinates of linear block index i of grid g. */
static void block_xyz(gp_sim_dim3 g, uint32_t i, uint32_t *x, uint32_t *y,
                      uint32_t *z) {
  *x = i % g.x;
  *y = (i / g.x) % g.y;
  *z = i / g.x / g.y;
}

static void emit_preemption(const sim_op *op, uint32_t kind, uint64_t ts,
                            gp_sim_dim3 grid, uint32_t block) {
  gp_activity_preemption *r = gp__activity_reserve(
      GP_ACTIVITY_KIND_PREEMPTION, sizeof(*r), op->context_id, op->stream_id);
  if (!r)
    return;
  r->preemption_kind = kind;
  r->device_id = op->device_id;
  r->timestamp = ts;
  r->grid_id = (int64_t)op->correlation_id;
  block_xyz(grid, block, &r->block_x, &r->block_y, &r->block_z);
  r->context_id = op->context_id;
  r->stream_id = op->stream_id;
  r->reserved0 = 0;
  gp__activity_commit(r);
}

static void emit_child(const sim_op *op, const sim_device *d,
                       const sim_extra *x, const sim_cdp_child *c) {
  gp_activity_cdp_kernel *r = gp__activity_reserve(
      GP_ACTIVITY_KIND_CDP_KERNEL, sizeof(*r), op->context_id, op->stream_id);
  if (!r)
    return;
  r->correlation_id = op->correlation_id;
  r->grid_id = c->grid_id;
  r->parent_grid_id = (int64_t)op->correlation_id;
  r->queued = gp__sim_to_trace(d, op->start + c->queued);
  r->submitted = gp__sim_to_trace(d, op->start + c->submitted);
  r->start = gp__sim_to_trace(d, op->start + c->start);
  r->end = gp__sim_to_trace(d, op->start + c->end);
  r->completed = r->end; /* children of children are not modelled */
  r->device_id = op->device_id;
  r->context_id = op->context_id;
  r->stream_id = op->stream_id;
  r->name_id = x->child_name_id;
  r->grid_x = x->child_grid.x;
  r->grid_y = x->child_grid.y;
  r->grid_z = x->child_grid.z;
  r->block_x = x->child_block.x;
  r->block_y = x->child_block.y;
  r->block_z = x->child_block.z;
  block_xyz(x->parent_grid, c->parent_block, &r->parent_block_x,
            &r->parent_block_y, &r->parent_block_z);
  r->static_shared_memory = x->child_static_shared;
  r->dynamic_shared_memory = x->child_dynamic_shared;
  r->registers_per_thread = x->child_registers;
  r->local_memory_per_thread = 0;
  r->local_memory_total = 0;
  r->flags = 0;
  r->queue_id = op->key.queue;
  gp__activity_commit(r);
}

/* See simInt.h: the records of what gp_sim_launch_ex added to op. */
void gp__sim_extra_emit(const sim_op *op, const sim_device *d) {
  const sim_extra *x = op->extra;
  gp__sim_um_emit(op, d);
  if (!x->nchildren)
    return;
  if (gp__activity_enabled(GP_ACTIVITY_KIND_KERNEL, op->context_id) ||
      gp__activity_enabled(GP_ACTIVITY_KIND_CDP_KERNEL, op->context_id))
    for (uint32_t i = 0; i < x->nchildren; i++)
      emit_child(op, d, x, &x->children[i]);
  if (!x->sync ||
      !gp__activity_enabled(GP_ACTIVITY_KIND_PREEMPTION, op->context_id))
    return;
  for (uint32_t i = 0; i < x->nchildren; i++) {
    const sim_cdp_child *c = &x->children[i];
    emit_preemption(op, GP_PREEMPTION_SAVE,
                    gp__sim_to_trace(d, op->start + c->queued), x->parent_grid,
                    c->parent_block);
    emit_preemption(op, GP_PREEMPTION_RESTORE,
                    gp__sim_to_trace(d, op->start + c->end), x->parent_grid,
                    c->parent_block);
  }
}
