/*
 * gpuperf/callback.h - callbacks at host calls, in the model of CUPTI's
 * callback API (cuptiSubscribe, cuptiEnableCallback, cuptiEnableDomain).
 *
 * A subscriber is a function and a pointer of the tool's. It is called,
 * on the thread that made the call, for what it enabled:
 *
 *   domain        callback id (cbid)          data
 *   API           GP_CALLBACK_API_ID(api      gp_callback_api_data, at
 *                 domain, call): a host call    the call's entry and at
 *                 of the simulator, OpenCL,     its exit
 *                 ... (the cbid of its API
 *                 record)
 *   RESOURCE      gp_callback_resource_id     gp_callback_resource_data
 *   SYNCHRONIZE   gp_callback_sync_id         gp_callback_sync_data
 *   MARKER        gp_callback_marker_id       gp_callback_marker_data
 *
 * The correlation id in the API data is that of the call's API record
 * and of the GPU work it launched (activity.h), so a tool can join what
 * it saw at the call with what the activity API delivers later.
 *
 * Where CUPTI allows one subscriber, up to GP_CALLBACK_MAX_SUBSCRIBERS may
 * be subscribed at once; each has its own enables and its own
 * correlation_data. A callback runs inside the call that caused it: it
 * must be quick, and it must not unsubscribe another subscriber. It may
 * make gpuperf or GPU API calls of its own (they may call back in turn).
 *
 * Which entry points call back is in docs/activity.md ("Callbacks").
 */
#ifndef GPUPERF_CALLBACK_H
#define GPUPERF_CALLBACK_H

#include <stdint.h>

#include "gpuperf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GP_CALLBACK_MAX_SUBSCRIBERS 8u
/* API callback ids within one API domain are below this. */
#define GP_CALLBACK_MAX_API_CBID 2048u

typedef enum gp_callback_domain {
  GP_CALLBACK_DOMAIN_INVALID = 0,
  GP_CALLBACK_DOMAIN_API = 1,         /* host calls: entry and exit */
  GP_CALLBACK_DOMAIN_RESOURCE = 2,    /* contexts and streams made, ended */
  GP_CALLBACK_DOMAIN_SYNCHRONIZE = 3, /* context and stream synchronised */
  GP_CALLBACK_DOMAIN_MARKER = 4,      /* gp_marker_instant, gp_range_* */
  GP_CALLBACK_DOMAIN_COUNT
} gp_callback_domain;

/* The callback id of call `cbid` of API domain `api` (gp_api_domain). */
#define GP_CALLBACK_API_ID(api, cbid)                                          \
  ((((uint32_t)(api)) << 16) | (uint32_t)(cbid))
/* Its API domain and its call. */
#define GP_CALLBACK_API_DOMAIN_OF(id) ((uint32_t)(id) >> 16)
#define GP_CALLBACK_API_CBID_OF(id) ((uint32_t)(id)&0xffffu)

typedef enum gp_callback_site {
  GP_CALLBACK_SITE_ENTER = 0,
  GP_CALLBACK_SITE_EXIT = 1
} gp_callback_site;

/* GP_CALLBACK_DOMAIN_API: a host call, at its entry and at its exit. */
typedef struct gp_callback_api_data {
  uint32_t site;        /* gp_callback_site */
  uint32_t api_domain;  /* gp_api_domain (activity.h) */
  uint32_t cbid;        /* the call within api_domain, as in its API record */
  int32_t return_value; /* at exit: the call's status (0 at entry) */
  const char *function_name; /* "gp_sim_launch", "clFinish", ... */
  /* The call's API record's and its GPU work's correlation id; the same
   * at entry and exit. */
  uint64_t correlation_id;
  /* Eight bytes of this subscriber's own for this call: what it stores
   * at entry, it finds at exit (0 at entry). */
  uint64_t *correlation_data;
  uint32_t context_id; /* the context the call names, 0 when none */
  uint32_t stream_id;  /* the stream (queue) it names, 0 when none */
  uint32_t thread_id;
  uint32_t reserved0;
} gp_callback_api_data;

/* GP_CALLBACK_DOMAIN_RESOURCE callback ids. */
typedef enum gp_callback_resource_id {
  GP_CALLBACK_RESOURCE_CONTEXT_CREATED = 1,
  GP_CALLBACK_RESOURCE_CONTEXT_DESTROY_STARTING = 2,
  GP_CALLBACK_RESOURCE_STREAM_CREATED = 3,
  GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING = 4,
  GP_CALLBACK_RESOURCE_COUNT
} gp_callback_resource_id;

typedef struct gp_callback_resource_data {
  uint32_t api; /* gp_api of the context */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id; /* stream events: the stream; else 0 */
} gp_callback_resource_data;

/* GP_CALLBACK_DOMAIN_SYNCHRONIZE callback ids: after the wait. */
typedef enum gp_callback_sync_id {
  GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED = 1,
  GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED = 2,
  GP_CALLBACK_SYNC_COUNT
} gp_callback_sync_id;

typedef struct gp_callback_sync_data {
  uint32_t context_id;
  uint32_t stream_id;      /* 0 for a context */
  uint64_t correlation_id; /* the synchronising call's */
} gp_callback_sync_data;

/* GP_CALLBACK_DOMAIN_MARKER callback ids: one per marker call. */
typedef enum gp_callback_marker_id {
  GP_CALLBACK_MARKER_INSTANT = 1,
  GP_CALLBACK_MARKER_RANGE_PUSH = 2,
  GP_CALLBACK_MARKER_RANGE_POP = 3,
  GP_CALLBACK_MARKER_RANGE_START = 4,
  GP_CALLBACK_MARKER_RANGE_END = 5,
  GP_CALLBACK_MARKER_COUNT
} gp_callback_marker_id;

typedef struct gp_callback_marker_data {
  const char *domain; /* NULL for POP and END */
  const char *name;   /* NULL for POP and END */
  uint64_t range_id;  /* START, END: the range; PUSH, POP: 0 */
  uint32_t thread_id;
  uint32_t reserved0;
} gp_callback_marker_data;

typedef struct gp_callback_subscriber gp_callback_subscriber;

/* data: the domain's struct above, valid during the call only. */
typedef void (*gp_callback_fn)(void *userdata, gp_callback_domain domain,
                               uint32_t cbid, const void *data);

/*
 * Subscribes fn (with userdata) and stores the subscriber in *subscriber;
 * nothing is enabled yet. GP_EINVAL if an argument is NULL, GP_EBUSY when
 * GP_CALLBACK_MAX_SUBSCRIBERS are subscribed.
 */
GP_EXPORT int gp_callback_subscribe(gp_callback_subscriber **subscriber,
                                    gp_callback_fn fn, void *userdata);

/*
 * Ends a subscription. When it returns, the callback runs on no other
 * thread (one running on the calling thread, which unsubscribes from its
 * own callback, finishes normally). GP_EINVAL for an unknown subscriber.
 */
GP_EXPORT int gp_callback_unsubscribe(gp_callback_subscriber *subscriber);

/*
 * Enables (enable 1) or disables (0) one callback id of a domain.
 * GP_EINVAL for an unknown subscriber or domain, GP_ERANGE for a cbid out
 * of the domain's range (API: GP_CALLBACK_API_ID with an API domain below
 * 8 and a call below GP_CALLBACK_MAX_API_CBID).
 */
GP_EXPORT int gp_callback_enable(gp_callback_subscriber *subscriber,
                                 uint32_t enable, gp_callback_domain domain,
                                 uint32_t cbid);

/* Enables or disables every callback id of a domain. */
GP_EXPORT int gp_callback_enable_domain(gp_callback_subscriber *subscriber,
                                        uint32_t enable,
                                        gp_callback_domain domain);

/* Enables or disables every callback id of every domain. */
GP_EXPORT int gp_callback_enable_all_domains(gp_callback_subscriber *subscriber,
                                             uint32_t enable);

/* Stores in *enabled whether the callback id is enabled. */
GP_EXPORT int gp_callback_get_state(gp_callback_subscriber *subscriber,
                                    gp_callback_domain domain, uint32_t cbid,
                                    uint32_t *enabled);

/* "API", "RESOURCE", "SYNCHRONIZE", "MARKER", or "INVALID". */
GP_EXPORT const char *gp_callback_domain_name(uint32_t domain);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_CALLBACK_H */
