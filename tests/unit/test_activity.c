/*
 * test_activity.c - the activity buffer core: record layout and
 * iteration, enabling, attributes, flush, drops and their accounting.
 */
#include <pthread.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "harness.h"
#include "testutil.h"

/* Writes one MARKER-kind record through the producer path. */
static bool produce(uint64_t id, uint32_t context_id) {
  gp_activity_marker *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_MARKER, sizeof(*r), context_id, 0);
  if (!r)
    return false;
  r->timestamp = gp_get_timestamp();
  r->id = id;
  r->flags = GP_ACTIVITY_FLAG_MARKER_INSTANT;
  r->name_id = 0;
  r->domain_id = 0;
  r->process_id = 1;
  r->thread_id = 2;
  r->depth = 0;
  gp__activity_commit(r);
  return true;
}

TEST(activity_record_layout) {
  ASSERT_EQ(sizeof(gp_activity), 8);
  ASSERT_EQ(offsetof(gp_activity_kernel, hdr), 0);
  ASSERT_EQ(sizeof(gp_activity_kernel) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_memcpy) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_memset) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_api) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_api_submit) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_marker) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_device) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_context) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_name) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_overhead) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_environment) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_counter) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_dropped) % 8, 0);
  ASSERT_EQ(sizeof(gp_activity_sync) % 8, 0);
  /* The code-object and attribute records: sizes readers skip by. */
  ASSERT_EQ(sizeof(gp_activity_module), 40);
  ASSERT_EQ(sizeof(gp_activity_function), 40);
  ASSERT_EQ(sizeof(gp_activity_device_attribute), 32);
  ASSERT_EQ(offsetof(gp_activity_device_attribute, value), 24);
  ASSERT_EQ(sizeof(gp_activity_event), 72);
  ASSERT_EQ(sizeof(gp_activity_event_instance), 48);
  ASSERT_EQ(sizeof(gp_activity_metric), 72);
  ASSERT_EQ(sizeof(gp_activity_metric_instance), 48);
  ASSERT_EQ(offsetof(gp_activity_metric, value), 16);
  /* Fixed offsets readers depend on. */
  ASSERT_EQ(offsetof(gp_activity_kernel, correlation_id), 8);
  ASSERT_EQ(offsetof(gp_activity_api, correlation_id), 8);
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_KERNEL), "KERNEL");
  ASSERT_STR_EQ(gp_activity_kind_name(999), "UNKNOWN");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_GPU_FTRACE),
                "GPU_FTRACE");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_MODULE), "MODULE");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_FUNCTION), "FUNCTION");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE),
                "DEVICE_ATTRIBUTE");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_EVENT), "EVENT");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_METRIC_INSTANCE),
                "METRIC_INSTANCE");
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_COUNT), "UNKNOWN");
  ASSERT_STR_EQ(gp_device_attr_name(GP_DEVICE_ATTR_COMPUTE_UNITS),
                "compute_units");
  ASSERT_STR_EQ(gp_device_attr_name(GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK),
                "max_shared_memory_per_block");
  ASSERT_STR_EQ(gp_device_attr_name(GP_DEVICE_ATTR_COUNT), "unknown");
  ASSERT_STR_EQ(gp_memcpy_kind_name(GP_MEMCPY_PTOP), "PtoP");
  ASSERT_STR_EQ(gp_drop_reason_name(GP_DROP_DECLINED), "declined");
}

TEST(activity_iterate_and_skip_unknown) {
  _Alignas(8) uint8_t buf[256];
  memset(buf, 0, sizeof(buf));
  gp_activity *a = (gp_activity *)buf;
  a->kind = GP_ACTIVITY_KIND_MARKER;
  a->size = sizeof(gp_activity_marker);
  gp_activity *b = (gp_activity *)(buf + a->size);
  b->kind = 4242; /* a kind from the future, 24 bytes */
  b->size = 24;
  gp_activity *c = (gp_activity *)(buf + a->size + b->size);
  c->kind = GP_ACTIVITY_KIND_DROPPED;
  c->size = sizeof(gp_activity_dropped);
  size_t valid = a->size + b->size + c->size;

  const gp_activity *r = NULL;
  uint32_t kinds[3];
  int n = 0, rc;
  while ((rc = gp_activity_get_next_record(buf, valid, &r)) == 0)
    kinds[n++] = r->kind;
  ASSERT_ERR(rc, GP_EEND);
  ASSERT_EQ(n, 3);
  ASSERT_EQ(kinds[0], GP_ACTIVITY_KIND_MARKER);
  ASSERT_EQ(kinds[1], 4242);
  ASSERT_EQ(kinds[2], GP_ACTIVITY_KIND_DROPPED);

  r = NULL;
  ASSERT_ERR(gp_activity_get_next_record(buf, 0, &r), GP_EEND);
  ASSERT_ERR(gp_activity_get_next_record(NULL, valid, &r), GP_EINVAL);
  ASSERT_ERR(gp_activity_get_next_record(buf, valid, NULL), GP_EINVAL);
}

TEST(activity_iterate_rejects_corrupt_headers) {
  _Alignas(8) uint8_t buf[64];
  memset(buf, 0, sizeof(buf));
  gp_activity *a = (gp_activity *)buf;
  const gp_activity *r;

  a->kind = 1;
  a->size = 0; /* would loop forever */
  r = NULL;
  ASSERT_ERR(gp_activity_get_next_record(buf, 64, &r), GP_ECORRUPT);
  a->size = 12; /* not a multiple of 8 */
  r = NULL;
  ASSERT_ERR(gp_activity_get_next_record(buf, 64, &r), GP_ECORRUPT);
  a->size = 72; /* past the end */
  r = NULL;
  ASSERT_ERR(gp_activity_get_next_record(buf, 64, &r), GP_ECORRUPT);
  a->size = 16;
  r = NULL;
  ASSERT_ERR(gp_activity_get_next_record(buf, 4, &r), GP_ECORRUPT);
  ASSERT_OK(gp_activity_get_next_record(buf, 64, &r));
  ASSERT(r == a);
}

TEST(activity_wait_ids_tail) {
  _Alignas(8) uint8_t buf[sizeof(gp_activity_kernel) + 16];
  memset(buf, 0, sizeof(buf));
  gp_activity_kernel *k = (gp_activity_kernel *)buf;
  k->hdr.kind = GP_ACTIVITY_KIND_KERNEL;
  k->hdr.size = sizeof(buf);
  k->num_wait_ids = 2;
  uint64_t ids[2] = {17, 99};
  memcpy(buf + sizeof(*k), ids, sizeof(ids));
  uint32_t n = 0;
  const uint64_t *w = gp_activity_wait_ids(&k->hdr, &n);
  ASSERT_EQ(n, 2);
  ASSERT_EQ(w[0], 17);
  ASSERT_EQ(w[1], 99);
  /* A count that does not fit the record is not believed. */
  k->num_wait_ids = 3;
  ASSERT(gp_activity_wait_ids(&k->hdr, &n) == NULL);
  ASSERT_EQ(n, 0);
}

TEST(activity_enable_disable_global) {
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_DROPPED), 1);
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++) {
    if (k == GP_ACTIVITY_KIND_DROPPED)
      continue;
    if (strcmp(gp_activity_kind_name(k), "UNKNOWN") == 0) {
      /* A value between kinds (kinds are not every value below COUNT). */
      ASSERT_ERR(gp_activity_enable((gp_activity_kind)k), GP_EKIND);
      ASSERT_ERR(gp_activity_is_enabled(0, (gp_activity_kind)k), GP_EKIND);
      continue;
    }
    ASSERT_EQ(gp_activity_is_enabled(0, (gp_activity_kind)k), 0);
    ASSERT_OK(gp_activity_enable((gp_activity_kind)k));
    ASSERT_EQ(gp_activity_is_enabled(0, (gp_activity_kind)k), 1);
    ASSERT_OK(gp_activity_disable((gp_activity_kind)k));
    ASSERT_EQ(gp_activity_is_enabled(0, (gp_activity_kind)k), 0);
  }
  ASSERT_ERR(gp_activity_enable(GP_ACTIVITY_KIND_INVALID), GP_EKIND);
  ASSERT_ERR(gp_activity_enable(GP_ACTIVITY_KIND_COUNT), GP_EKIND);
  ASSERT_ERR(gp_activity_disable((gp_activity_kind)999), GP_EKIND);
  ASSERT_ERR(gp_activity_is_enabled(0, (gp_activity_kind)999), GP_EKIND);
  /* Failed calls changed nothing. */
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_KERNEL), 0);
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_DROPPED), 1);
}

TEST(activity_enable_disable_per_context) {
  gp_sim_context *a, *b;
  ASSERT_OK(gp_sim_context_create(0, &a));
  ASSERT_OK(gp_sim_context_create(0, &b));
  uint32_t ida = gp_sim_context_id(a), idb = gp_sim_context_id(b);

  ASSERT_ERR(gp_activity_enable_context(ida, GP_ACTIVITY_KIND_API), GP_ENOTSUP);
  ASSERT_ERR(gp_activity_enable_context(9999, GP_ACTIVITY_KIND_KERNEL),
             GP_ENOENT);
  ASSERT_ERR(gp_activity_enable_context(ida, (gp_activity_kind)0), GP_EKIND);
  ASSERT_EQ(gp_activity_is_enabled(ida, GP_ACTIVITY_KIND_KERNEL), 0);

  /* Globally off, on for a: only a. */
  ASSERT_OK(gp_activity_enable_context(ida, GP_ACTIVITY_KIND_KERNEL));
  ASSERT_EQ(gp_activity_is_enabled(ida, GP_ACTIVITY_KIND_KERNEL), 1);
  ASSERT_EQ(gp_activity_is_enabled(idb, GP_ACTIVITY_KIND_KERNEL), 0);
  /* Globally on, off for a: the context setting wins. */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_disable_context(ida, GP_ACTIVITY_KIND_KERNEL));
  ASSERT_EQ(gp_activity_is_enabled(ida, GP_ACTIVITY_KIND_KERNEL), 0);
  ASSERT_EQ(gp_activity_is_enabled(idb, GP_ACTIVITY_KIND_KERNEL), 1);

  /* And records follow the settings. */
  tu_capture(1 << 16, 0);
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 10, 4);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_dim3 g = {64, 1, 1}, bl = {128, 1, 1};
  ASSERT_OK(gp_sim_launch(gp_sim_default_stream(a), k, g, bl, 0));
  ASSERT_OK(gp_sim_launch(gp_sim_default_stream(b), k, g, bl, 0));
  ASSERT_OK(gp_sim_context_synchronize(a));
  ASSERT_OK(gp_sim_context_synchronize(b));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
  const gp_activity_kernel *rec =
      (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_EQ(rec->context_id, idb);

  /* A destroyed context's settings are gone with it. */
  ASSERT_OK(gp_sim_context_destroy(a));
  ASSERT_ERR(gp_activity_enable_context(ida, GP_ACTIVITY_KIND_KERNEL),
             GP_ENOENT);
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_sim_context_destroy(b));
}

TEST(activity_attributes) {
  size_t v = 0, sz = sizeof(v);
  ASSERT_OK(gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &v));
  ASSERT_EQ(v, 1 << 20);
  ASSERT_EQ(sz, sizeof(size_t));
  sz = sizeof(v);
  ASSERT_OK(
      gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz, &v));
  ASSERT_EQ(v, 64);

  size_t nv = 8192;
  sz = sizeof(nv);
  ASSERT_OK(gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &nv));
  sz = sizeof(v);
  ASSERT_OK(gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &v));
  ASSERT_EQ(v, 8192);

  /* Too small a value size: the needed size comes back, nothing changes. */
  uint32_t small = 77;
  sz = sizeof(small);
  ASSERT_ERR(
      gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &small),
      GP_ESIZE);
  ASSERT_EQ(sz, sizeof(size_t));
  ASSERT_EQ(small, 77);
  sz = sizeof(small);
  small = 4096;
  ASSERT_ERR(
      gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &small),
      GP_ESIZE);
  sz = sizeof(v);
  ASSERT_OK(gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &v));
  ASSERT_EQ(v, 8192);

  /* NULLs and unknown attributes. */
  ASSERT_ERR(gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, NULL, &v),
             GP_EINVAL);
  sz = sizeof(v);
  ASSERT_ERR(gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, NULL),
             GP_EINVAL);
  ASSERT_ERR(gp_activity_get_attribute((gp_activity_attr)42, &sz, &v),
             GP_EINVAL);
  ASSERT_ERR(gp_activity_set_attribute((gp_activity_attr)-1, &sz, &v),
             GP_EINVAL);

  /* Out of range values are refused, nothing changes. */
  size_t bad = 100;
  sz = sizeof(bad);
  ASSERT_ERR(gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_SIZE, &sz, &bad),
             GP_ERANGE);
  bad = 0;
  ASSERT_ERR(
      gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz, &bad),
      GP_ERANGE);
  sz = sizeof(v);
  ASSERT_OK(
      gp_activity_get_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz, &v));
  ASSERT_EQ(v, 64);

  /* The device-side buffers (CUPTI's): 0 until set, the driver's default;
   * sizes 0 or 64 KiB to 1 GiB. */
  static const gp_activity_attr dev[] = {
      GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
      GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP,
      GP_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT};
  for (size_t i = 0; i < 3; i++) {
    sz = sizeof(v);
    ASSERT_OK(gp_activity_get_attribute(dev[i], &sz, &v));
    ASSERT_EQ(v, 0);
    size_t set = i < 2 ? (size_t)16 << 20 : 8;
    ASSERT_OK(gp_activity_set_attribute(dev[i], &sz, &set));
    ASSERT_OK(gp_activity_get_attribute(dev[i], &sz, &v));
    ASSERT_EQ(v, set);
  }
  bad = 1000;
  ASSERT_ERR(
      gp_activity_set_attribute(GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &bad),
      GP_ERANGE);
  bad = 100000;
  ASSERT_ERR(gp_activity_set_attribute(
                 GP_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, &sz, &bad),
             GP_ERANGE);
  bad = 0; /* back to the driver's */
  ASSERT_OK(gp_activity_set_attribute(GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz,
                                      &bad));
  ASSERT_OK(
      gp_activity_get_attribute(GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &sz, &v));
  ASSERT_EQ(v, 0);
}

TEST(activity_callbacks_required) {
  ASSERT_ERR(gp_activity_register_callbacks(NULL, NULL), GP_EINVAL);
  ASSERT_ERR(gp_activity_flush_all(0), GP_ENOCALLBACK);
  tu_capture(4096, 0);
  ASSERT_ERR(gp_activity_flush_all(0x80), GP_EINVAL);
  ASSERT_OK(gp_activity_flush_all(0));
}

TEST(activity_flush_delivers_partial_buffers) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  for (int i = 0; i < 10; i++)
    ASSERT(produce((uint64_t)i, 0));
  ASSERT_EQ(tu_count(0), 0); /* nothing is delivered before a flush */
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 10);
  for (int i = 10; i < 25; i++)
    ASSERT(produce((uint64_t)i, 0));
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 25);
  /* In order, each exactly once. */
  for (size_t i = 0; i < 25; i++) {
    const gp_activity_marker *m =
        (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, i);
    ASSERT_EQ(m->id, i);
  }
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 25);
}

static void *produce_and_exit(void *arg) {
  (void)arg;
  for (int i = 0; i < 5; i++)
    produce(100 + (uint64_t)i, 0);
  return NULL;
}

TEST(activity_thread_exit_hands_over_buffer) {
  tu_capture(1 << 16, 0);
  pthread_t t;
  ASSERT_OK(-pthread_create(&t, NULL, produce_and_exit, NULL));
  ASSERT_OK(-pthread_join(t, NULL));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 5);
}

TEST(activity_max_records_per_buffer) {
  tu_capture(1 << 16, 3);
  for (int i = 0; i < 10; i++)
    ASSERT(produce((uint64_t)i, 0));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 10);
  /* 3 + 3 + 3 in full buffers, 1 by the flush. */
  ASSERT_EQ(tu_buffers_completed(), 4);
}

TEST(activity_periodic_flush) {
  tu_capture(1 << 16, 0);
  size_t ms = 20, sz = sizeof(ms);
  ASSERT_OK(
      gp_activity_set_attribute(GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS, &sz, &ms));
  for (int i = 0; i < 7; i++)
    ASSERT(produce((uint64_t)i, 0));
  /* No explicit flush: the collector delivers within a few periods. */
  for (int waited = 0; waited < 2000 && tu_count(0) < 7; waited += 5)
    usleep(5000);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 7);
}

TEST(activity_drop_reasons) {
  /* No callbacks at all. */
  ASSERT(!produce(1, 0));
  ASSERT(!produce(2, 0));
  gp_activity_drop_stats st;
  ASSERT_OK(gp_activity_get_drop_stats(&st));
  ASSERT_EQ(st.count[GP_ACTIVITY_KIND_MARKER][GP_DROP_NO_CALLBACKS], 2);

  /* The application declines. */
  tu_capture(4096, 0);
  tu_capture_decline(1);
  for (int i = 0; i < 5; i++)
    ASSERT(!produce(3, 0));
  ASSERT_OK(gp_activity_get_drop_stats(&st));
  ASSERT_EQ(st.count[GP_ACTIVITY_KIND_MARKER][GP_DROP_DECLINED], 5);

  /* A record larger than the buffer. */
  tu_capture_decline(0);
  ASSERT(gp__activity_reserve(GP_ACTIVITY_KIND_COUNTER, 8192, 0, 0) == NULL);
  ASSERT_OK(gp_activity_get_drop_stats(&st));
  ASSERT_EQ(st.count[GP_ACTIVITY_KIND_COUNTER][GP_DROP_TOO_LARGE], 1);
  ASSERT_EQ(st.total, 8);

  /* The next record that gets through is preceded by DROPPED records. */
  ASSERT(produce(4, 0));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 1);
  uint64_t reported = 0;
  for (size_t i = 0; tu_find(GP_ACTIVITY_KIND_DROPPED, i); i++) {
    const gp_activity_dropped *d =
        (const gp_activity_dropped *)tu_find(GP_ACTIVITY_KIND_DROPPED, i);
    reported += d->count;
    ASSERT(d->first <= d->last);
  }
  ASSERT_EQ(reported, 8);

  size_t n = 0;
  ASSERT_OK(gp_activity_get_num_dropped_records(0, 0, &n));
  ASSERT_EQ(n, 8);
  ASSERT_OK(gp_activity_get_num_dropped_records(0, 0, &n));
  ASSERT_EQ(n, 0); /* reset on read */
  ASSERT_ERR(gp_activity_get_num_dropped_records(0, 0, NULL), GP_EINVAL);
  ASSERT_ERR(gp_activity_get_drop_stats(NULL), GP_EINVAL);
}

TEST(activity_dropped_per_context) {
  tu_capture(4096, 0);
  tu_capture_decline(1);
  for (int i = 0; i < 3; i++)
    produce(1, 7);
  for (int i = 0; i < 2; i++)
    produce(1, 8);
  size_t n;
  ASSERT_OK(gp_activity_get_num_dropped_records(7, 0, &n));
  ASSERT_EQ(n, 3);
  ASSERT_OK(gp_activity_get_num_dropped_records(7, 0, &n));
  ASSERT_EQ(n, 0);
  ASSERT_OK(gp_activity_get_num_dropped_records(8, 0, &n));
  ASSERT_EQ(n, 2);
  ASSERT_OK(gp_activity_get_num_dropped_records(0, 0, &n));
  ASSERT_EQ(n, 5);
}

#define THREADS 4
#define PER_THREAD 1000000

static void *produce_many(void *arg) {
  uint64_t *ok = arg;
  for (uint64_t i = 0; i < PER_THREAD; i++)
    if (produce(i, 0))
      (*ok)++;
  return NULL;
}

TEST(activity_four_threads_accounting) {
  /* Small buffers, a small pool and a slow consumer: records must be
   * dropped, and every one of them accounted for. */
  size_t limit = 4, sz = sizeof(limit);
  ASSERT_OK(gp_activity_set_attribute(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, &sz,
                                      &limit));
  tu_capture(16384, 0);
  tu_capture_delay(200);
  pthread_t t[THREADS];
  uint64_t ok[THREADS] = {0};
  for (int i = 0; i < THREADS; i++)
    ASSERT_OK(-pthread_create(&t[i], NULL, produce_many, &ok[i]));
  for (int i = 0; i < THREADS; i++)
    ASSERT_OK(-pthread_join(t[i], NULL));
  tu_capture_delay(0);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));

  uint64_t written = 0;
  for (int i = 0; i < THREADS; i++)
    written += ok[i];
  gp_activity_drop_stats st;
  ASSERT_OK(gp_activity_get_drop_stats(&st));
  uint64_t dropped = 0;
  for (int r = 0; r < GP_DROP_REASON_COUNT; r++)
    dropped += st.count[GP_ACTIVITY_KIND_MARKER][r];
  uint64_t delivered = tu_count(GP_ACTIVITY_KIND_MARKER);
  printf("written %" PRIu64 " delivered %" PRIu64 " dropped %" PRIu64 "\n",
         written, delivered, dropped);
  ASSERT_EQ(delivered + dropped, (uint64_t)THREADS * PER_THREAD);
  ASSERT_EQ(delivered, written);
  ASSERT_GT(dropped, 0);
  ASSERT_EQ(dropped, st.count[GP_ACTIVITY_KIND_MARKER][GP_DROP_NO_BUFFER]);
  /* DROPPED records never claim more than was dropped. */
  uint64_t reported = 0;
  size_t size;
  const uint8_t *log = tu_log(&size);
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(log, size, &r) == 0)
    if (r->kind == GP_ACTIVITY_KIND_DROPPED)
      reported += ((const gp_activity_dropped *)r)->count;
  ASSERT_LE(reported, dropped);
  ASSERT_GT(reported, 0);
}

TEST(activity_finalize_flushes_and_disables) {
  tu_capture(4096, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  ASSERT_OK(gp_marker_instant(NULL, "before"));
  ASSERT_OK(gp_activity_finalize());
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 1);
  ASSERT_EQ(gp_activity_is_enabled(0, GP_ACTIVITY_KIND_MARKER), 0);
  /* Every buffer the callbacks gave is back; none is asked for again
   * until callbacks are registered anew. */
  size_t back = tu_buffers_completed();
  ASSERT_EQ(back, tu_buffers_requested());
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  ASSERT_OK(gp_marker_instant(NULL, "unseen"));
  ASSERT_ERR(gp_activity_flush_all(0), GP_ENOCALLBACK);
  ASSERT_EQ(tu_buffers_completed(), back);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 1);
  /* Collection starts again when asked to. */
  tu_capture(4096, 0);
  ASSERT_OK(gp_marker_instant(NULL, "after"));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 2);
}

TEST(activity_fork_child_starts_afresh) {
  tu_capture(1 << 16, 0);
  for (int i = 0; i < 3; i++)
    ASSERT(produce((uint64_t)i, 0));
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    /* The parent's three records are the parent's to deliver. */
    for (int i = 0; i < 2; i++)
      if (!produce(10 + (uint64_t)i, 0))
        _exit(10);
    if (gp_activity_flush_all(0) != 0)
      _exit(11);
    _exit((int)tu_count(GP_ACTIVITY_KIND_MARKER));
  }
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 2);
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 3);
}
