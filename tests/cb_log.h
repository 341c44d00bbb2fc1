/*
 * cb_log.h - what the tests of the callback API (gpuperf/callback.h)
 * note of each callback: one flat event, whatever its domain. Header
 * only, C and C++: the test binary and the probes tests/vulkan/cb_probe.c
 * and tests/cuda/cb_probe.cu (programs of their own) use it.
 */
#ifndef GPUPERF_TESTS_CB_LOG_H
#define GPUPERF_TESTS_CB_LOG_H

#include <stdlib.h>
#include <string.h>

#include "gpuperf/gpuperf.h"

typedef struct cb_event {
  uint32_t domain, cbid;
  uint32_t site, api_domain, call; /* API (api_domain: RESOURCE's api) */
  int32_t rc;                      /* API, at exit */
  uint64_t corr;                   /* API, SYNCHRONIZE */
  uint64_t data; /* API: *correlation_data as the callback found it */
  uint32_t context, stream, thread;
  uint64_t range_id; /* MARKER */
} cb_event;

/* The correlation_data a subscriber tagged tag leaves at an API entry. */
static inline uint64_t cb_mark(uint64_t corr, uint64_t tag) {
  return corr * 10 + tag;
}

/* Notes one callback into e; at an API entry, leaves cb_mark(corr, tag)
 * in the subscriber's correlation_data. */
static inline void cb_note(cb_event *e, uint32_t domain, uint32_t cbid,
                           const void *data, uint64_t tag) {
  memset(e, 0, sizeof(*e));
  e->domain = domain;
  e->cbid = cbid;
  if (domain == GP_CALLBACK_DOMAIN_API) {
    const gp_callback_api_data *d = (const gp_callback_api_data *)data;
    e->site = d->site;
    e->api_domain = d->api_domain;
    e->call = d->cbid;
    e->rc = d->return_value;
    e->corr = d->correlation_id;
    e->context = d->context_id;
    e->stream = d->stream_id;
    e->thread = d->thread_id;
    e->data = *d->correlation_data;
    if (d->site == GP_CALLBACK_SITE_ENTER)
      *d->correlation_data = cb_mark(d->correlation_id, tag);
  } else if (domain == GP_CALLBACK_DOMAIN_RESOURCE) {
    const gp_callback_resource_data *d =
        (const gp_callback_resource_data *)data;
    e->api_domain = d->api;
    e->context = d->context_id;
    e->stream = d->stream_id;
  } else if (domain == GP_CALLBACK_DOMAIN_SYNCHRONIZE) {
    const gp_callback_sync_data *d = (const gp_callback_sync_data *)data;
    e->context = d->context_id;
    e->stream = d->stream_id;
    e->corr = d->correlation_id;
  } else if (domain == GP_CALLBACK_DOMAIN_MARKER) {
    const gp_callback_marker_data *d = (const gp_callback_marker_data *)data;
    e->range_id = d->range_id;
    e->thread = d->thread_id;
  }
}

/* The API event of correlation id corr at site among ev[0..n), or NULL. */
static inline const cb_event *cb_find(const cb_event *ev, int n, uint64_t corr,
                                      uint32_t site) {
  for (int i = 0; i < n; i++)
    if (ev[i].domain == GP_CALLBACK_DOMAIN_API && ev[i].corr == corr &&
        ev[i].site == site)
      return &ev[i];
  return NULL;
}

/*
 * Checks that each API record of recs[0..nrec) has its entry and exit
 * among ev[0..n) (a subscriber tagged tag), with its correlation id,
 * call, status and the subscriber's data carried across, in context
 * (any context but 0 when context is 0), and that no exit is without its
 * record. NULL when so, else what differed (a record's name, or a
 * phrase).
 */
static inline const char *cb_check_pairs(const cb_event *ev, int n,
                                         const gp_activity_api *recs, int nrec,
                                         uint64_t tag, uint32_t context) {
  for (int i = 0; i < nrec; i++) {
    const gp_activity_api *a = &recs[i];
    const cb_event *in =
        cb_find(ev, n, a->correlation_id, GP_CALLBACK_SITE_ENTER);
    const cb_event *out =
        cb_find(ev, n, a->correlation_id, GP_CALLBACK_SITE_EXIT);
    if (!a->correlation_id || !in || !out)
      return gp_activity_string(a->name_id);
    if (in->call != a->cbid || out->call != a->cbid ||
        in->cbid != GP_CALLBACK_API_ID(a->domain, a->cbid) ||
        out->rc != a->return_value ||
        out->data != cb_mark(a->correlation_id, tag) ||
        (context ? in->context != context : !in->context))
      return "a pair's call, status, data or context";
  }
  int exits = 0;
  for (int i = 0; i < n; i++)
    exits += ev[i].domain == GP_CALLBACK_DOMAIN_API &&
             ev[i].site == GP_CALLBACK_SITE_EXIT;
  return exits == nrec ? NULL : "callbacks without records";
}

/* An activity buffer request callback: 64 KiB from the heap, which the
 * completion callback frees. */
static inline void cb_request(uint8_t **buf, size_t *size, size_t *max) {
  *size = 1 << 16;
  *buf = (uint8_t *)aligned_alloc(8, *size);
  *max = 0;
}

#endif /* GPUPERF_TESTS_CB_LOG_H */
