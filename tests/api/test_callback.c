/*
 * test_callback.c - the callback API (gpuperf/callback.h) on the
 * simulator: enter/exit pairs whose correlation ids are those of the API
 * records and GPU work the activity API delivers, the resource,
 * synchronisation and marker domains, enables by id, several
 * subscribers, a callback that calls the simulator, and unsubscribe.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "cb_log.h"
#include "harness.h"
#include "testutil.h"

#define MAXEV 4096

typedef struct log_t {
  int tag; /* what this subscriber leaves in correlation_data */
  cb_event ev[MAXEV];
  int n;
} log_t;

static void on_cb(void *user, gp_callback_domain domain, uint32_t cbid,
                  const void *data) {
  log_t *l = user;
  if (l->n < MAXEV)
    cb_note(&l->ev[l->n++], domain, cbid, data, (uint64_t)l->tag);
}

static int count(const log_t *l, uint32_t domain, uint32_t cbid) {
  int n = 0;
  for (int i = 0; i < l->n; i++)
    n += l->ev[i].domain == domain && l->ev[i].cbid == cbid;
  return n;
}

/* Checks that the API events come in entry/exit pairs (each exit right
 * after its entry: the simulator calls no API inside another), with the
 * subscriber's correlation_data carried across; returns the pairs. */
static int check_pairs(const log_t *l) {
  int pairs = 0;
  const cb_event *open = NULL;
  for (int i = 0; i < l->n; i++) {
    const cb_event *e = &l->ev[i];
    if (e->domain != GP_CALLBACK_DOMAIN_API)
      continue;
    if (e->site == GP_CALLBACK_SITE_ENTER) {
      ASSERT(open == NULL);
      ASSERT_EQ(e->data, 0);
      ASSERT_NE(e->corr, 0);
      open = e;
    } else {
      ASSERT_NOT_NULL(open);
      ASSERT_EQ(e->cbid, open->cbid);
      ASSERT_EQ(e->corr, open->corr);
      ASSERT_EQ(e->thread, open->thread);
      ASSERT_EQ(e->data, cb_mark(open->corr, (uint64_t)l->tag));
      open = NULL;
      pairs++;
    }
  }
  ASSERT(open == NULL);
  return pairs;
}

/* The exit event of the API call with correlation id corr, or NULL. */
static const cb_event *exit_of(const log_t *l, uint64_t corr) {
  for (int i = 0; i < l->n; i++)
    if (l->ev[i].domain == GP_CALLBACK_DOMAIN_API &&
        l->ev[i].site == GP_CALLBACK_SITE_EXIT && l->ev[i].corr == corr)
      return &l->ev[i];
  return NULL;
}

static log_t lg, lg2;

TEST(callback_sim_pairs_match_activity_records) {
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_SYNCHRONIZATION));
  gp_callback_subscriber *sub;
  lg.tag = 1;
  ASSERT_OK(gp_callback_subscribe(&sub, on_cb, &lg));
  ASSERT_OK(gp_callback_enable_all_domains(sub, 1));

  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_stream *s;
  ASSERT_OK(gp_sim_stream_create(ctx, &s));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 1024, 32);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  uint64_t dev = 0;
  ASSERT_OK(gp_sim_malloc(ctx, 4096, &dev));
  static char host[4096];
  for (int i = 0; i < 3; i++)
    ASSERT_OK(gp_sim_launch(s, k, tu_dim(64), tu_dim(64), 0));
  ASSERT_OK(
      gp_sim_memcpy_async(s, GP_SIM_HOST(host), dev, 4096, GP_MEMCPY_DTOH));
  ASSERT_ERR(gp_sim_launch(s, NULL, tu_dim(1), tu_dim(1), 0), GP_EINVAL);
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_sim_stream_destroy(s));
  ASSERT_OK(gp_sim_free(ctx, dev));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  uint32_t ctx_id = gp_sim_context_id(ctx), s_id = 0;
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_callback_unsubscribe(sub));

  /* Every API record has its pair, with its correlation id, call and
   * status; nothing more. */
  int pairs = check_pairs(&lg);
  int records = 0;
  for (size_t i = 0; tu_find(GP_ACTIVITY_KIND_API, i); i++) {
    const gp_activity_api *a =
        (const gp_activity_api *)tu_find(GP_ACTIVITY_KIND_API, i);
    if (a->domain != GP_API_DOMAIN_SIM)
      continue;
    records++;
    const cb_event *x = exit_of(&lg, a->correlation_id);
    ASSERT_NOT_NULL(x);
    ASSERT_EQ(x->api_domain, GP_API_DOMAIN_SIM);
    ASSERT_EQ(x->call, a->cbid);
    ASSERT_EQ(x->cbid, GP_CALLBACK_API_ID(GP_API_DOMAIN_SIM, a->cbid));
    ASSERT_EQ(x->rc, a->return_value);
    ASSERT_EQ(x->thread, a->thread_id);
  }
  /* Those before the flush; the context's destruction came after it. */
  ASSERT_EQ(records, pairs - 1);
  ASSERT_EQ(records, 14);
  /* The launches: the kernels' correlation ids, context and stream. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 3);
  for (size_t i = 0; i < 3; i++) {
    const gp_activity_kernel *kr =
        (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
    const cb_event *x = exit_of(&lg, kr->correlation_id);
    ASSERT_NOT_NULL(x);
    ASSERT_EQ(x->call, GP_SIM_CBID_LAUNCH);
    ASSERT_EQ(x->context, kr->context_id);
    ASSERT_EQ(x->stream, kr->stream_id);
    ASSERT_EQ(x->context, ctx_id);
    s_id = kr->stream_id;
  }
  const gp_activity_memcpy *m =
      (const gp_activity_memcpy *)tu_find(GP_ACTIVITY_KIND_MEMCPY, 0);
  ASSERT_NOT_NULL(m);
  ASSERT_NOT_NULL(exit_of(&lg, m->correlation_id));
  /* The failed launch: its status at exit. */
  int failed = 0;
  for (int i = 0; i < lg.n; i++)
    failed += lg.ev[i].domain == GP_CALLBACK_DOMAIN_API &&
              lg.ev[i].site == GP_CALLBACK_SITE_EXIT &&
              lg.ev[i].rc == GP_EINVAL;
  ASSERT_EQ(failed, 1);

  /* Resources: the context and the stream, made and ended. */
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_RESOURCE,
                  GP_CALLBACK_RESOURCE_CONTEXT_CREATED),
            1);
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_RESOURCE,
                  GP_CALLBACK_RESOURCE_CONTEXT_DESTROY_STARTING),
            1);
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_RESOURCE,
                  GP_CALLBACK_RESOURCE_STREAM_CREATED),
            1);
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_RESOURCE,
                  GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING),
            1);
  for (int i = 0; i < lg.n; i++) {
    const cb_event *e = &lg.ev[i];
    if (e->domain == GP_CALLBACK_DOMAIN_RESOURCE) {
      ASSERT_EQ(e->context, ctx_id);
      ASSERT_EQ(e->api_domain, GP_API_SIM);
      if (e->cbid == GP_CALLBACK_RESOURCE_STREAM_CREATED)
        ASSERT_EQ(e->stream, s_id);
    }
  }
  /* Synchronisations, with the calls' correlation ids, inside them: after
   * the entry, before the exit. */
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_SYNCHRONIZE,
                  GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED),
            1);
  ASSERT_EQ(count(&lg, GP_CALLBACK_DOMAIN_SYNCHRONIZE,
                  GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED),
            1);
  for (int i = 1; i + 1 < lg.n; i++) {
    const cb_event *e = &lg.ev[i];
    if (e->domain != GP_CALLBACK_DOMAIN_SYNCHRONIZE)
      continue;
    ASSERT_EQ(lg.ev[i - 1].site, GP_CALLBACK_SITE_ENTER);
    ASSERT_EQ(lg.ev[i - 1].corr, e->corr);
    ASSERT_EQ(lg.ev[i + 1].corr, e->corr);
    ASSERT_EQ(e->context, ctx_id);
    if (e->cbid == GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED)
      ASSERT_EQ(e->stream, s_id);
  }
}

/* A callback that calls the simulator itself: a stream made inside
 * STREAM_CREATED's callback (held under the simulator's lock, it would
 * wait for itself forever). */
static gp_sim_context *reenter_ctx;
static int reentered;
static void on_reenter(void *user, gp_callback_domain domain, uint32_t cbid,
                       const void *data) {
  (void)user, (void)data;
  if (domain == GP_CALLBACK_DOMAIN_RESOURCE &&
      cbid == GP_CALLBACK_RESOURCE_STREAM_CREATED && !reentered) {
    reentered = 1;
    uint64_t addr = 0;
    if (gp_sim_malloc(reenter_ctx, 64, &addr) == 0 &&
        gp_sim_free(reenter_ctx, addr) == 0)
      reentered = 2;
  }
}

TEST(callback_may_call_the_simulator) {
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_reenter, NULL));
  ASSERT_OK(gp_callback_enable(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE,
                               GP_CALLBACK_RESOURCE_STREAM_CREATED));
  ASSERT_OK(gp_sim_context_create(0, &reenter_ctx));
  gp_sim_stream *s;
  ASSERT_OK(gp_sim_stream_create(reenter_ctx, &s));
  ASSERT_EQ(reentered, 2);
  ASSERT_OK(gp_callback_unsubscribe(sub));
}

TEST(callback_enables_by_id_and_subscribers) {
  gp_callback_subscriber *a, *b;
  lg.tag = 1, lg.n = 0;
  lg2.tag = 2, lg2.n = 0;
  ASSERT_OK(gp_callback_subscribe(&a, on_cb, &lg));
  ASSERT_OK(gp_callback_subscribe(&b, on_cb, &lg2));
  uint32_t launch = GP_CALLBACK_API_ID(GP_API_DOMAIN_SIM, GP_SIM_CBID_LAUNCH);
  ASSERT_STR_EQ(gp_callback_domain_name(GP_CALLBACK_DOMAIN_API), "API");
  /* a: the launches only; b: every simulator call. */
  ASSERT_OK(gp_callback_enable(a, 1, GP_CALLBACK_DOMAIN_API, launch));
  ASSERT_OK(gp_callback_enable_domain(b, 1, GP_CALLBACK_DOMAIN_API));
  uint32_t on = 9;
  ASSERT_OK(gp_callback_get_state(a, GP_CALLBACK_DOMAIN_API, launch, &on));
  ASSERT_EQ(on, 1);
  ASSERT_OK(gp_callback_get_state(a, GP_CALLBACK_DOMAIN_API,
                                  GP_CALLBACK_API_ID(GP_API_DOMAIN_SIM, 1),
                                  &on));
  ASSERT_EQ(on, 0);
  /* Errors. */
  ASSERT_ERR(gp_callback_enable(a, 1, GP_CALLBACK_DOMAIN_API,
                                GP_CALLBACK_API_ID(9, 1)),
             GP_ERANGE);
  ASSERT_ERR(gp_callback_enable(a, 1, GP_CALLBACK_DOMAIN_API,
                                GP_CALLBACK_API_ID(1, 5000)),
             GP_ERANGE);
  ASSERT_ERR(gp_callback_enable(a, 1, GP_CALLBACK_DOMAIN_RESOURCE, 99),
             GP_ERANGE);
  ASSERT_ERR(gp_callback_enable(a, 1, (gp_callback_domain)7, 1), GP_EINVAL);
  ASSERT_ERR(gp_callback_enable(NULL, 1, GP_CALLBACK_DOMAIN_API, launch),
             GP_EINVAL);
  ASSERT_ERR(gp_callback_subscribe(NULL, on_cb, NULL), GP_EINVAL);
  gp_callback_subscriber *more[GP_CALLBACK_MAX_SUBSCRIBERS];
  int n = 0;
  while (n < (int)GP_CALLBACK_MAX_SUBSCRIBERS &&
         gp_callback_subscribe(&more[n], on_cb, NULL) == 0)
    n++;
  ASSERT_EQ(n, (int)GP_CALLBACK_MAX_SUBSCRIBERS - 2);
  gp_callback_subscriber *one_more;
  ASSERT_ERR(gp_callback_subscribe(&one_more, on_cb, NULL), GP_EBUSY);
  for (int i = 0; i < n; i++)
    ASSERT_OK(gp_callback_unsubscribe(more[i]));
  ASSERT_ERR(gp_callback_unsubscribe(more[0]), GP_EINVAL);

  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 1024, 32);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(8), tu_dim(8), 0));
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(8), tu_dim(8), 0));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  /* a saw the two launches, b the five calls; each has its own
   * correlation_data (check_pairs checks the tag). */
  ASSERT_EQ(check_pairs(&lg), 2);
  ASSERT_EQ(check_pairs(&lg2), 5);
  for (int i = 0; i < lg.n; i++)
    ASSERT_EQ(lg.ev[i].cbid, launch);
  /* Disabled, then unsubscribed: nothing more. */
  ASSERT_OK(gp_callback_enable(a, 0, GP_CALLBACK_DOMAIN_API, launch));
  ASSERT_OK(gp_callback_unsubscribe(b));
  int na = lg.n, nb = lg2.n;
  ASSERT_OK(gp_sim_launch(s, k, tu_dim(8), tu_dim(8), 0));
  ASSERT_EQ(lg.n, na);
  ASSERT_EQ(lg2.n, nb);
  ASSERT_OK(gp_callback_unsubscribe(a));
}

TEST(callback_markers) {
  gp_callback_subscriber *sub;
  lg.tag = 1, lg.n = 0;
  ASSERT_OK(gp_callback_subscribe(&sub, on_cb, &lg));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_MARKER));
  ASSERT_OK(gp_range_push("app", "step"));
  ASSERT_OK(gp_marker_instant("app", "here"));
  ASSERT_OK(gp_range_pop());
  uint64_t rid;
  ASSERT_OK(gp_range_start("io", "load", &rid));
  ASSERT_OK(gp_range_end(rid));
  ASSERT_ERR(gp_range_pop(), GP_ESTATE); /* failed: no callback */
  ASSERT_EQ(lg.n, 5);
  ASSERT_EQ(lg.ev[0].cbid, GP_CALLBACK_MARKER_RANGE_PUSH);
  ASSERT_EQ(lg.ev[1].cbid, GP_CALLBACK_MARKER_INSTANT);
  ASSERT_EQ(lg.ev[2].cbid, GP_CALLBACK_MARKER_RANGE_POP);
  ASSERT_EQ(lg.ev[3].cbid, GP_CALLBACK_MARKER_RANGE_START);
  ASSERT_EQ(lg.ev[3].range_id, rid);
  ASSERT_EQ(lg.ev[4].cbid, GP_CALLBACK_MARKER_RANGE_END);
  ASSERT_EQ(lg.ev[4].range_id, rid);
  ASSERT_OK(gp_callback_unsubscribe(sub));
}

/* Unsubscribing waits for a callback running on another thread. */
static _Atomic int in_cb, release_cb, after_return;
static void on_slow(void *user, gp_callback_domain domain, uint32_t cbid,
                    const void *data) {
  (void)user, (void)domain, (void)cbid, (void)data;
  atomic_store(&in_cb, 1);
  while (!atomic_load(&release_cb))
    sched_yield();
  atomic_store(&after_return, 1);
}
static void *marker_thread(void *arg) {
  (void)arg;
  gp_marker_instant(NULL, "m");
  return NULL;
}
static void *release_later(void *arg) {
  (void)arg;
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  atomic_store(&release_cb, 1);
  return NULL;
}

TEST(callback_unsubscribe_waits_for_running_callbacks) {
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_slow, NULL));
  ASSERT_OK(gp_callback_enable(sub, 1, GP_CALLBACK_DOMAIN_MARKER,
                               GP_CALLBACK_MARKER_INSTANT));
  pthread_t t, r;
  ASSERT_EQ(pthread_create(&t, NULL, marker_thread, NULL), 0);
  while (!atomic_load(&in_cb))
    sched_yield();
  ASSERT_EQ(pthread_create(&r, NULL, release_later, NULL), 0);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  /* Whatever the timing, the callback had returned by then. */
  ASSERT_EQ(atomic_load(&after_return), 1);
  pthread_join(t, NULL);
  pthread_join(r, NULL);
}

/* A callback that calls back in (a marker inside the marker's callback)
 * and unsubscribes from the inner call: it does not wait for itself. */
static gp_callback_subscriber *nested_sub;
static int nested_depth, nested_calls;
static void on_nested(void *user, gp_callback_domain domain, uint32_t cbid,
                      const void *data) {
  (void)user, (void)domain, (void)cbid, (void)data;
  nested_calls++;
  if (nested_depth++ == 0)
    gp_marker_instant(NULL, "inner");
  else if (gp_callback_unsubscribe(nested_sub) != 0)
    nested_calls = -100;
  nested_depth--;
}

TEST(callback_unsubscribes_itself_from_a_nested_call) {
  ASSERT_OK(gp_callback_subscribe(&nested_sub, on_nested, NULL));
  ASSERT_OK(
      gp_callback_enable_domain(nested_sub, 1, GP_CALLBACK_DOMAIN_MARKER));
  ASSERT_OK(gp_marker_instant(NULL, "outer"));
  ASSERT_EQ(nested_calls, 2);
  ASSERT_OK(gp_marker_instant(NULL, "after")); /* unsubscribed */
  ASSERT_EQ(nested_calls, 2);
}
