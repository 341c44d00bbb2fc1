/*
 * flows.c - the flows of GPU work: between render stages (event_wait_ids)
 * and between host track events and render stages (GpuCorrelation), in
 * whichever order the two ends arrive. Per event id it remembers the GPU
 * slices that carry it, those that wait for it, and the latest track
 * event that submitted it or waits for it.
 *
 * The lists of slices live as links in one array (an id has one or two
 * slices in a list, mostly: a vector each cost ~100 bytes of headers and
 * heap, 8 MB of a demo trace's import). A list is circular and named by
 * its last link, so appending and walking in order are O(1) per slice.
 */
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"
#include "tp/spill.h"

static uint64_t evflow_id(const gp__tp_evflow *f) {
  return (uint64_t)f->id_hi << 32 | f->id_lo;
}

/* Rebuilds the index of evflows with nslots slots (a power of two). */
static bool index_evflows(gp__tp_importer *imp, size_t nslots) {
  GP_TP_VEC(gp__tp_flow_slot) slots = {0};
  if (!gp__tp_vec_reserve(&slots, nslots))
    return false;
  for (size_t i = 0; i < nslots; i++) {
    if (i % 512 == 0)
      gp__tp_spill_poll();
    slots.v[i].e = GP_TP_NONE;
  }
  slots.n = nslots;
  for (uint32_t e = 0; e < imp->evflows.n; e++) {
    gp__tp_spill_poll();
    uint64_t h = gp__tp_mix64(evflow_id(&imp->evflows.v[e]));
    size_t i = (size_t)h & (nslots - 1);
    while (slots.v[i].e != GP_TP_NONE)
      i = (i + 1) & (nslots - 1);
    slots.v[i] = (gp__tp_flow_slot){e, (uint32_t)(h >> 32)};
  }
  gp__tp_vec_free(&imp->flow_slots);
  imp->flow_slots.v = slots.v;
  imp->flow_slots.n = slots.n;
  imp->flow_slots.cap = slots.cap;
  imp->flow_slots.ready = slots.ready;
  return true;
}

/*
 * Finds or adds the flow state of event_id. The ids live in the states
 * themselves; a slot of the index holds a state's number and its hash's
 * high half, so that probing past other ids (most of an absent id's
 * probes) reads no state: each such read was a cache miss, and this
 * lookup took 13-15% of a demo trace's import.
 */
static int evflow(gp__tp_importer *imp, uint64_t event_id,
                  gp__tp_evflow **out) {
  size_t n = imp->evflows.n, nslots = imp->flow_slots.n;
  gp__tp_spill_poll();
  if ((n + 1) * 4 > nslots * 3 &&
      (n >= GP_TP_NONE - 1 || !index_evflows(imp, nslots ? nslots * 2 : 1024)))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  nslots = imp->flow_slots.n;
  uint64_t h = gp__tp_mix64(event_id);
  uint32_t tag = (uint32_t)(h >> 32);
  size_t i = (size_t)h & (nslots - 1);
  for (gp__tp_flow_slot sl; (sl = imp->flow_slots.v[i]).e != GP_TP_NONE;
       i = (i + 1) & (nslots - 1))
    if (sl.tag == tag && evflow_id(&imp->evflows.v[sl.e]) == event_id) {
      *out = &imp->evflows.v[sl.e];
      return 0; /* valid until the next evflow(): nothing else moves it */
    }
  gp__tp_evflow f = {(uint32_t)event_id, (uint32_t)(event_id >> 32),
                     GP_TP_NONE,         GP_TP_NONE,
                     GP_TP_NONE,         GP_TP_NONE,
                     GP_TP_NONE};
  if (!gp__tp_vec_push(&imp->evflows, f))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  imp->flow_slots.v[i] = (gp__tp_flow_slot){(uint32_t)n, tag};
  *out = &imp->evflows.v[n];
  return 0;
}

/* See import.h. */
void gp__tp_flow_prefetch(const gp__tp_importer *imp, uint64_t event_id) {
  size_t nslots = imp->flow_slots.n;
  if (nslots)
    __builtin_prefetch(
        &imp->flow_slots.v[(size_t)gp__tp_mix64(event_id) & (nslots - 1)]);
}

/* Appends slice to the list *list (GP_TP_NONE: empty). */
static int list_add(gp__tp_importer *imp, uint32_t *list, uint32_t slice) {
  uint32_t n = (uint32_t)imp->links.n;
  if (n == GP_TP_NONE || !gp__tp_vec_reserve(&imp->links, 1))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  gp__tp_link l = {slice, n};
  if (*list != GP_TP_NONE) {
    l.next = imp->links.v[*list].next;
    imp->links.v[*list].next = n;
  }
  imp->links.v[imp->links.n++] = l;
  *list = n;
  return 0;
}

/* The first link of a list, or GP_TP_NONE. */
static uint32_t list_first(const gp__tp_importer *imp, uint32_t list) {
  return list == GP_TP_NONE ? GP_TP_NONE : imp->links.v[list].next;
}

/* The link after l in list, GP_TP_NONE after the last. */
static uint32_t list_next(const gp__tp_importer *imp, uint32_t list,
                          uint32_t l) {
  return l == list ? GP_TP_NONE : imp->links.v[l].next;
}

/* Calls flow(out, in) for each GPU slice of ev, as out (dir 0) or in. */
static int flows_with_gpu_slices(gp__tp_importer *imp, const gp__tp_evflow *ev,
                                 uint32_t other, bool gpu_is_out) {
  uint32_t first = ev->slice, more = ev->more;
  int rc = 0;
  if (first != GP_TP_NONE)
    rc = gpu_is_out ? gp__tp_flow_add(imp, first, other)
                    : gp__tp_flow_add(imp, other, first);
  for (uint32_t l = list_first(imp, more); !rc && l != GP_TP_NONE;
       l = list_next(imp, more, l)) {
    uint32_t s = imp->links.v[l].slice;
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
  if (ev->submitter != GP_TP_NONE &&
      (rc = gp__tp_flow_add(imp, ev->submitter, slice)))
    return rc;
  if (ev->te_waiter != GP_TP_NONE &&
      (rc = gp__tp_flow_add(imp, slice, ev->te_waiter)))
    return rc;
  uint32_t w = ev->waiters;
  for (uint32_t l = list_first(imp, w); !rc && l != GP_TP_NONE;
       l = list_next(imp, w, l))
    rc = gp__tp_flow_add(imp, slice, imp->links.v[l].slice);
  return rc;
}

/* See import.h. */
int gp__tp_flow_event_wait(gp__tp_importer *imp, uint64_t waited,
                           uint32_t slice) {
  gp__tp_evflow *ev;
  int rc = evflow(imp, waited, &ev);
  if (rc || (rc = flows_with_gpu_slices(imp, ev, slice, true)))
    return rc;
  return list_add(imp, &ev->waiters, slice);
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
