/*
 * flows.c - the flows of GPU work: between render stages (event_wait_ids)
 * and between host track events and render stages (GpuCorrelation), in
 * whichever order the two ends arrive. Per event id it remembers the GPU
 * slices that carry it, those that wait for it, and the latest track
 * event that submitted it or waits for it.
 */
#include "gpuperf/error.h"
#include "tp/import.h"

static int evflow(gp__tp_importer *imp, uint64_t event_id,
                  gp__tp_evflow **out) {
  bool ins;
  uint64_t *i =
      gp__tp_map_put(&imp->flow_by_event, event_id, imp->evflows.n, &ins);
  if (!i)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  if (ins) {
    gp__tp_evflow f = {GP_TP_NONE, GP_TP_NONE, GP_TP_NONE, GP_TP_NONE,
                       GP_TP_NONE};
    if (!gp__tp_vec_push(&imp->evflows, f))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  }
  *out = &imp->evflows.v[*i];
  return 0;
}

static int list_add(gp__tp_importer *imp, uint32_t *list, uint32_t slice) {
  if (*list == GP_TP_NONE) {
    if (!gp__tp_vec_push(&imp->lists, ((gp__tp_slist){0})))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    *list = (uint32_t)imp->lists.n - 1;
  }
  if (!gp__tp_vec_push(&imp->lists.v[*list], slice))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* Calls flow(out, in) for each GPU slice of ev, as out (dir 0) or in. */
static int flows_with_gpu_slices(gp__tp_importer *imp, const gp__tp_evflow *ev,
                                 uint32_t other, bool gpu_is_out) {
  uint32_t first = ev->slice, more = ev->more;
  int rc = 0;
  if (first != GP_TP_NONE)
    rc = gpu_is_out ? gp__tp_flow_add(imp, first, other)
                    : gp__tp_flow_add(imp, other, first);
  if (more != GP_TP_NONE)
    for (size_t i = 0; !rc && i < imp->lists.v[more].n; i++) {
      uint32_t s = imp->lists.v[more].v[i];
      rc = gpu_is_out ? gp__tp_flow_add(imp, s, other)
                      : gp__tp_flow_add(imp, other, s);
    }
  return rc;
}

/* See import.h. */
int gp__tp_flow_gpu_slice(gp__tp_importer *imp, uint64_t event_id,
                          uint32_t slice) {
  gp__tp_evflow *ev;
  int rc = evflow(imp, event_id, &ev);
  if (rc)
    return rc;
  if (ev->slice == GP_TP_NONE)
    ev->slice = slice;
  else if ((rc = list_add(imp, &ev->more, slice)))
    return rc;
  ev = &imp->evflows.v[*gp__tp_map_get(&imp->flow_by_event, event_id)];
  if (ev->submitter != GP_TP_NONE &&
      (rc = gp__tp_flow_add(imp, ev->submitter, slice)))
    return rc;
  if (ev->te_waiter != GP_TP_NONE &&
      (rc = gp__tp_flow_add(imp, slice, ev->te_waiter)))
    return rc;
  if (ev->waiters != GP_TP_NONE)
    for (size_t i = 0; !rc && i < imp->lists.v[ev->waiters].n; i++)
      rc = gp__tp_flow_add(imp, slice, imp->lists.v[ev->waiters].v[i]);
  return rc;
}

/* See import.h. */
int gp__tp_flow_event_wait(gp__tp_importer *imp, uint64_t waited,
                           uint32_t slice) {
  gp__tp_evflow *ev;
  int rc = evflow(imp, waited, &ev);
  if (rc || (rc = flows_with_gpu_slices(imp, ev, slice, true)))
    return rc;
  ev = &imp->evflows.v[*gp__tp_map_get(&imp->flow_by_event, waited)];
  uint32_t w = ev->waiters;
  rc = list_add(imp, &w, slice);
  imp->evflows.v[*gp__tp_map_get(&imp->flow_by_event, waited)].waiters = w;
  return rc;
}

/* See import.h. */
int gp__tp_flow_submission(gp__tp_importer *imp, uint64_t event_id,
                           uint32_t te_slice) {
  gp__tp_evflow *ev;
  int rc = evflow(imp, event_id, &ev);
  if (rc)
    return rc;
  ev->submitter = te_slice;
  return flows_with_gpu_slices(imp, ev, te_slice, false);
}

/* See import.h. */
int gp__tp_flow_te_wait(gp__tp_importer *imp, uint64_t event_id,
                        uint32_t te_slice) {
  gp__tp_evflow *ev;
  int rc = evflow(imp, event_id, &ev);
  if (rc)
    return rc;
  ev->te_waiter = te_slice;
  return flows_with_gpu_slices(imp, ev, te_slice, true);
}
