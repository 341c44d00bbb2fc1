/*
 * test_sim.c - the simulated GPUs through the public API: correlation,
 * dependencies, overlap, every copy kind, events, determinism, argument
 * checking, and the records around the work (device, context, name,
 * synchronisation, environment).
 */
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "testutil.h"

static gp_sim_dim3 dim(uint32_t x) {
  gp_sim_dim3 d = {x, 1, 1};
  return d;
}

static const gp_activity_api *api_for(uint64_t corr) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_API, i)); i++)
    if (((const gp_activity_api *)r)->correlation_id == corr)
      return (const gp_activity_api *)r;
  return NULL;
}

static const gp_activity_kernel *kernel_named(const char *name, size_t nth) {
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++) {
    const gp_activity_kernel *k = (const gp_activity_kernel *)r;
    if (strcmp(gp_activity_string(k->name_id), name) == 0 && nth-- == 0)
      return k;
  }
  return NULL;
}

static void enable_gpu_kinds(void) {
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MEMSET));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_SYNCHRONIZATION));
}

TEST(sim_api_kernel_correlation) {
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z6matmulPfS_S_i", 2048, 64);
  kd.demangled_name = "matmul(float*, float*, float*, int)";
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(gp_sim_launch(s, k, dim(256), dim(128), 1024));
  ASSERT_OK(gp_sim_stream_synchronize(s));
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 3);
  uint64_t prev_end = 0;
  for (size_t i = 0; i < 3; i++) {
    const gp_activity_kernel *kr =
        (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
    ASSERT_NE(kr->correlation_id, 0);
    const gp_activity_api *a = api_for(kr->correlation_id);
    ASSERT_NOT_NULL(a);
    ASSERT_STR_EQ(gp_activity_string(a->name_id), "gp_sim_launch");
    ASSERT_EQ(a->domain, GP_API_DOMAIN_SIM);
    ASSERT_EQ(a->return_value, 0);
    ASSERT_LE(a->start, kr->queued);
    ASSERT_LE(kr->queued, kr->submitted);
    ASSERT_LE(kr->submitted, kr->start);
    ASSERT_LT(kr->start, kr->end);
    ASSERT_GE(kr->start, prev_end); /* in stream order */
    prev_end = kr->end;
    ASSERT_STR_EQ(gp_activity_string(kr->name_id), "_Z6matmulPfS_S_i");
    ASSERT_STR_EQ(gp_activity_string(kr->demangled_name_id),
                  "matmul(float*, float*, float*, int)");
    ASSERT_EQ(kr->grid_x, 256);
    ASSERT_EQ(kr->block_x, 128);
    ASSERT_EQ(kr->dynamic_shared_memory, 1024);
    ASSERT_EQ(kr->registers_per_thread, 32);
    ASSERT_EQ(kr->context_id, gp_sim_context_id(ctx));
    ASSERT_EQ(kr->stream_id, gp_sim_stream_id(s));
    ASSERT_EQ(kr->num_wait_ids, 0);
  }
  /* The synchronize call ends after the last kernel. */
  const gp_activity_sync *sy =
      (const gp_activity_sync *)tu_find(GP_ACTIVITY_KIND_SYNCHRONIZATION, 0);
  ASSERT_NOT_NULL(sy);
  ASSERT_EQ(sy->sync_kind, GP_SYNC_STREAM_SYNCHRONIZE);
  ASSERT_GE(sy->end, prev_end);
  ASSERT_EQ(sy->wait_id,
            ((const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, 2))
                ->correlation_id);
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_sim_context_destroy(ctx));
}

TEST(sim_dependency_waits_and_overlap) {
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *c0, *c1;
  ASSERT_OK(gp_sim_context_create(0, &c0));
  ASSERT_OK(gp_sim_context_create(1, &c1));
  gp_sim_stream *a, *b, *remote;
  ASSERT_OK(gp_sim_stream_create(c0, &a));
  ASSERT_OK(gp_sim_stream_create(c0, &b));
  ASSERT_OK(gp_sim_stream_create(c1, &remote));
  gp_sim_kernel_desc big = tu_kernel_desc("big", 100000, 16);
  gp_sim_kernel_desc small = tu_kernel_desc("small", 100, 16);
  gp_sim_kernel *kb, *ks;
  ASSERT_OK(gp_sim_kernel_create(&big, &kb));
  ASSERT_OK(gp_sim_kernel_create(&small, &ks));
  gp_sim_event *ev;
  ASSERT_OK(gp_sim_event_create(c0, &ev));

  /* a: big; b: big (overlaps a); remote waits for a, then small. */
  ASSERT_OK(gp_sim_launch(a, kb, dim(1024), dim(256), 0));
  ASSERT_OK(gp_sim_event_record(ev, a));
  ASSERT_OK(gp_sim_launch(b, kb, dim(1024), dim(256), 0));
  ASSERT_OK(gp_sim_stream_wait_event(remote, ev));
  ASSERT_OK(gp_sim_launch(remote, ks, dim(4), dim(64), 0));
  ASSERT_EQ(gp_sim_event_query(ev), GP_EAGAIN); /* a is still running */
  ASSERT_OK(gp_sim_context_synchronize(c0));
  ASSERT_OK(gp_sim_context_synchronize(c1));
  ASSERT_OK(gp_sim_event_query(ev));
  ASSERT_OK(gp_activity_flush_all(0));

  const gp_activity_kernel *ka = kernel_named("big", 0);
  const gp_activity_kernel *kb2 = kernel_named("big", 1);
  const gp_activity_kernel *kr = kernel_named("small", 0);
  ASSERT_NOT_NULL(ka);
  ASSERT_NOT_NULL(kb2);
  ASSERT_NOT_NULL(kr);
  /* Different streams on different hardware queues overlap in time. */
  ASSERT_NE(ka->queue_id, kb2->queue_id);
  ASSERT_LT(kb2->start, ka->end);
  ASSERT_LT(ka->start, kb2->end);
  /* The waiting kernel, on another device, starts after its dependency. */
  ASSERT_GE(kr->start, ka->end);
  ASSERT_NE(kr->device_id, ka->device_id);
  uint32_t n;
  const uint64_t *w = gp_activity_wait_ids(&kr->hdr, &n);
  ASSERT_EQ(n, 1);
  ASSERT_EQ(w[0], ka->correlation_id);
  /* Its "submitted" is when the dependency was met. */
  ASSERT_GE(kr->submitted, ka->end);

  uint64_t ns;
  gp_sim_event *e2;
  ASSERT_OK(gp_sim_event_create(c0, &e2));
  ASSERT_ERR(gp_sim_event_elapsed(ev, e2, &ns), GP_ESTATE);
  ASSERT_OK(gp_sim_event_record(e2, b));
  ASSERT_OK(gp_sim_event_synchronize(e2));
  ASSERT_OK(gp_sim_event_elapsed(ev, e2, &ns));
  ASSERT_GT(ns, 0);
  ASSERT_OK(gp_sim_event_destroy(e2));
  ASSERT_OK(gp_sim_event_destroy(ev));
  ASSERT_OK(gp_sim_context_destroy(c0));
  ASSERT_OK(gp_sim_context_destroy(c1));
}

TEST(sim_copy_kinds) {
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *c0, *c1;
  ASSERT_OK(gp_sim_context_create(0, &c0));
  ASSERT_OK(gp_sim_context_create(1, &c1));
  gp_sim_stream *s = gp_sim_default_stream(c0);
  uint64_t d0, d0b, d1;
  const uint64_t n = 64 << 20;
  ASSERT_OK(gp_sim_malloc(c0, n, &d0));
  ASSERT_OK(gp_sim_malloc(c0, n, &d0b));
  ASSERT_OK(gp_sim_malloc(c1, n, &d1));
  static char pageable[64], pinned[64], other[64];
  ASSERT_OK(gp_sim_host_register(pinned, n));
  ASSERT_ERR(gp_sim_host_register(pinned, n), GP_EEXIST);

  ASSERT_OK(
      gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pageable), n, GP_MEMCPY_HTOD));
  ASSERT_OK(gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pinned), n, GP_MEMCPY_HTOD));
  ASSERT_OK(gp_sim_memcpy_async(s, GP_SIM_HOST(pinned), d0, n, GP_MEMCPY_DTOH));
  ASSERT_OK(gp_sim_memcpy_async(s, d0b, d0, n, GP_MEMCPY_DTOD));
  ASSERT_OK(gp_sim_memcpy_async(s, d1, d0, n, GP_MEMCPY_PTOP));
  ASSERT_OK(gp_sim_memcpy(s, GP_SIM_HOST(other), GP_SIM_HOST(pageable), 64,
                          GP_MEMCPY_HTOH));
  ASSERT_OK(gp_sim_memset_async(s, d0, 0, n));

  /* Wrong way round, wrong device, too long, arrays, zero bytes. */
  ASSERT_ERR(
      gp_sim_memcpy_async(s, GP_SIM_HOST(pageable), d0, n, GP_MEMCPY_HTOD),
      GP_EINVAL);
  ASSERT_ERR(
      gp_sim_memcpy_async(s, d1, GP_SIM_HOST(pageable), n, GP_MEMCPY_HTOD),
      GP_EINVAL);
  ASSERT_ERR(
      gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pageable), n + 1, GP_MEMCPY_HTOD),
      GP_EINVAL);
  ASSERT_ERR(gp_sim_memcpy_async(s, d0b, d0, n, GP_MEMCPY_PTOP), GP_EINVAL);
  ASSERT_ERR(
      gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pageable), n, GP_MEMCPY_HTOA),
      GP_ENOTSUP);
  ASSERT_ERR(
      gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pageable), 0, GP_MEMCPY_HTOD),
      GP_EINVAL);
  ASSERT_ERR(
      gp_sim_memcpy_async(s, d0, GP_SIM_HOST(pageable), 8, (gp_memcpy_kind)77),
      GP_EINVAL);
  ASSERT_ERR(gp_sim_memset_async(s, d1, 0, 8), GP_EINVAL);
  ASSERT_OK(gp_sim_context_synchronize(c0));
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MEMCPY), 6);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MEMSET), 1);
  const gp_activity_memcpy *m[6];
  for (size_t i = 0; i < 6; i++)
    m[i] = (const gp_activity_memcpy *)tu_find(GP_ACTIVITY_KIND_MEMCPY, i);
  ASSERT_EQ(m[0]->copy_kind, GP_MEMCPY_HTOD);
  ASSERT_EQ(m[0]->src_kind, GP_MEMORY_PAGEABLE);
  ASSERT_EQ(m[0]->dst_kind, GP_MEMORY_DEVICE);
  ASSERT_EQ(m[1]->src_kind, GP_MEMORY_PINNED);
  /* Pinned memory is faster than pageable. */
  ASSERT_LT(m[1]->end - m[1]->start, m[0]->end - m[0]->start);
  ASSERT_EQ(m[2]->copy_kind, GP_MEMCPY_DTOH);
  ASSERT_EQ(m[2]->dst_kind, GP_MEMORY_PINNED);
  ASSERT_UEQ(m[2]->dst_device_id, UINT32_MAX);
  ASSERT_EQ(m[3]->copy_kind, GP_MEMCPY_DTOD);
  ASSERT_EQ(m[4]->copy_kind, GP_MEMCPY_PTOP);
  uint32_t dev0, dev1;
  ASSERT_OK(gp_sim_device_id(0, &dev0));
  ASSERT_OK(gp_sim_device_id(1, &dev1));
  ASSERT_EQ(m[4]->src_device_id, dev0);
  ASSERT_EQ(m[4]->dst_device_id, dev1);
  ASSERT_EQ(m[4]->dst_context_id, gp_sim_context_id(c1));
  ASSERT_EQ(m[5]->copy_kind, GP_MEMCPY_HTOH);
  ASSERT_EQ(m[5]->flags & GP_ACTIVITY_FLAG_MEMCPY_ASYNC, 0);
  ASSERT_EQ(m[0]->flags & GP_ACTIVITY_FLAG_MEMCPY_ASYNC,
            GP_ACTIVITY_FLAG_MEMCPY_ASYNC);
  for (size_t i = 0; i < 6; i++) {
    ASSERT_EQ(m[i]->bytes, i == 5 ? 64 : n);
    ASSERT_NOT_NULL(api_for(m[i]->correlation_id));
  }
  const gp_activity_memset *ms =
      (const gp_activity_memset *)tu_find(GP_ACTIVITY_KIND_MEMSET, 0);
  ASSERT_EQ(ms->bytes, n);
  ASSERT_EQ(ms->memory_kind, GP_MEMORY_DEVICE);

  ASSERT_OK(gp_sim_free(c0, d0));
  ASSERT_ERR(gp_sim_free(c0, d0), GP_ENOENT);
  ASSERT_ERR(gp_sim_free(c1, d0b), GP_ENOENT);
  ASSERT_OK(gp_sim_host_unregister(pinned));
  ASSERT_ERR(gp_sim_host_unregister(pinned), GP_ENOENT);
  ASSERT_OK(gp_sim_context_destroy(c0));
  ASSERT_OK(gp_sim_context_destroy(c1));
}

TEST(sim_invalid_arguments_change_nothing) {
  gp_sim_config bad = {0};
  ASSERT_ERR(gp_sim_init(&bad), GP_EINVAL);
  bad.num_devices = 1;
  bad.models[0] = 99;
  ASSERT_ERR(gp_sim_init(&bad), GP_EINVAL);
  bad.models[0] = GP_SIM_MODEL_COMPUTE;
  bad.reserved0 = 1;
  ASSERT_ERR(gp_sim_init(&bad), GP_EINVAL);
  uint32_t ndev;
  ASSERT_OK(gp_device_count(&ndev));
  ASSERT_EQ(ndev, 0); /* nothing was created */

  gp_sim_config cfg = {0};
  cfg.num_devices = 2;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  cfg.models[1] = GP_SIM_MODEL_V3D;
  ASSERT_OK(gp_sim_init(&cfg));
  ASSERT_ERR(gp_sim_init(&cfg), GP_EBUSY);
  ASSERT_OK(gp_device_count(&ndev));
  ASSERT_EQ(ndev, 2);

  gp_sim_context *ctx = NULL;
  ASSERT_ERR(gp_sim_context_create(7, &ctx), GP_ENODEV);
  ASSERT(ctx == NULL);
  ASSERT_ERR(gp_sim_context_create(0, NULL), GP_EINVAL);
  ASSERT_OK(gp_sim_context_create(1, &ctx)); /* the v3d */
  gp_sim_stream *s = gp_sim_default_stream(ctx);
  gp_sim_kernel *k = NULL;
  ASSERT_ERR(gp_sim_kernel_create(NULL, &k), GP_EINVAL);
  gp_sim_kernel_desc kd = tu_kernel_desc("k", -1, 0);
  ASSERT_ERR(gp_sim_kernel_create(&kd, &k), GP_EINVAL);
  kd = tu_kernel_desc("k", 1, 1);
  kd.read_fraction = 1.5;
  ASSERT_ERR(gp_sim_kernel_create(&kd, &k), GP_EINVAL);
  ASSERT(k == NULL);
  kd = tu_kernel_desc("k", 1, 1);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_ERR(gp_sim_launch(NULL, k, dim(1), dim(1), 0), GP_EINVAL);
  ASSERT_ERR(gp_sim_launch(s, NULL, dim(1), dim(1), 0), GP_EINVAL);
  ASSERT_ERR(gp_sim_launch(s, k, dim(0), dim(1), 0), GP_EINVAL);
  /* The v3d takes at most 256 threads per workgroup. */
  ASSERT_ERR(gp_sim_launch(s, k, dim(1), dim(512), 0), GP_EINVAL);
  ASSERT_ERR(gp_sim_launch(s, k, dim(1), dim(64), 1 << 20), GP_EINVAL);
  ASSERT_OK(gp_sim_launch(s, k, dim(1), dim(256), 0));
  uint64_t addr = 0;
  ASSERT_ERR(gp_sim_malloc(ctx, 0, &addr), GP_EINVAL);
  ASSERT_ERR(gp_sim_malloc(ctx, 1ull << 40, &addr), GP_ENOMEM);
  ASSERT_EQ(addr, 0);
  ASSERT_ERR(gp_sim_stream_create(NULL, &s), GP_EINVAL);
  ASSERT_ERR(gp_sim_stream_destroy(gp_sim_default_stream(ctx)), GP_EINVAL);
  ASSERT_ERR(gp_sim_event_create(ctx, NULL), GP_EINVAL);
  ASSERT_ERR(gp_sim_event_query(NULL), GP_EINVAL);
  ASSERT_ERR(gp_sim_stream_synchronize(NULL), GP_EINVAL);
  ASSERT_OK(gp_sim_context_destroy(NULL));
  ASSERT_OK(gp_sim_kernel_destroy(k));
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_OK(gp_sim_shutdown());
  ASSERT_ERR(gp_sim_shutdown(), GP_ESTATE);
}

TEST(sim_failed_calls_are_recorded) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  gp_sim_context *ctx;
  ASSERT_ERR(gp_sim_context_create(99, &ctx), GP_ENODEV);
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_API), 1);
  const gp_activity_api *a =
      (const gp_activity_api *)tu_find(GP_ACTIVITY_KIND_API, 0);
  ASSERT_EQ(a->return_value, GP_ENODEV);
  ASSERT_STR_EQ(gp_activity_string(a->name_id), "gp_sim_context_create");
}

/* One fixed workload, the same every time. */
static void workload(void) {
  gp_sim_context *c0, *c1;
  gp_sim_stream *s0, *s1, *p;
  gp_sim_kernel *k1, *k2;
  gp_sim_event *ev;
  uint64_t a, b, r;
  static char host[16];
  gp_sim_kernel_desc d1 = tu_kernel_desc("fwd", 500, 32);
  gp_sim_kernel_desc d2 = tu_kernel_desc("bwd", 900, 48);
  ASSERT_OK(gp_sim_context_create(0, &c0));
  ASSERT_OK(gp_sim_context_create(1, &c1));
  ASSERT_OK(gp_sim_stream_create(c0, &s0));
  ASSERT_OK(gp_sim_stream_create(c0, &s1));
  ASSERT_OK(gp_sim_stream_create(c1, &p));
  ASSERT_OK(gp_sim_kernel_create(&d1, &k1));
  ASSERT_OK(gp_sim_kernel_create(&d2, &k2));
  ASSERT_OK(gp_sim_event_create(c0, &ev));
  ASSERT_OK(gp_sim_malloc(c0, 1 << 24, &a));
  ASSERT_OK(gp_sim_malloc(c0, 1 << 24, &b));
  ASSERT_OK(gp_sim_malloc(c1, 1 << 24, &r));
  for (int step = 0; step < 5; step++) {
    ASSERT_OK(gp_range_push(NULL, "step"));
    ASSERT_OK(
        gp_sim_memcpy_async(s0, a, GP_SIM_HOST(host), 1 << 24, GP_MEMCPY_HTOD));
    ASSERT_OK(gp_sim_launch(s0, k1, dim(512), dim(256), 0));
    ASSERT_OK(gp_sim_event_record(ev, s0));
    ASSERT_OK(gp_sim_stream_wait_event(s1, ev));
    ASSERT_OK(gp_sim_launch(s1, k2, dim(512), dim(256), 0));
    ASSERT_OK(gp_sim_memset_async(s1, b, 0, 1 << 20));
    ASSERT_OK(gp_sim_stream_wait_event(p, ev));
    ASSERT_OK(gp_sim_memcpy_async(p, r, a, 1 << 24, GP_MEMCPY_PTOP));
    ASSERT_OK(gp_sim_host_work(20000));
    ASSERT_OK(gp_sim_context_synchronize(c0));
    ASSERT_OK(gp_sim_context_synchronize(c1));
    ASSERT_OK(gp_range_pop());
  }
}

/* Zeroes what legitimately differs between runs: pids and tids. */
static void normalise(uint8_t *log, size_t size) {
  gp_activity *r = NULL;
  while (gp_activity_get_next_record(log, size, (const gp_activity **)&r) ==
         0) {
    if (r->kind == GP_ACTIVITY_KIND_API) {
      ((gp_activity_api *)r)->process_id = 0;
      ((gp_activity_api *)r)->thread_id = 0;
    } else if (r->kind == GP_ACTIVITY_KIND_MARKER) {
      ((gp_activity_marker *)r)->process_id = 0;
      ((gp_activity_marker *)r)->thread_id = 0;
    }
  }
}

static void run_to_file(const char *path) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    tu_capture(1 << 16, 0);
    enable_gpu_kinds();
    ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
    ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_ENVIRONMENT));
    workload();
    ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
    size_t size;
    uint8_t *log = (uint8_t *)tu_log(&size);
    normalise(log, size);
    FILE *f = fopen(path, "wb");
    ASSERT_NOT_NULL(f);
    ASSERT_EQ(fwrite(log, 1, size, f), size);
    fclose(f);
    _exit(0);
  }
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static uint8_t *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  ASSERT_NOT_NULL(f);
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  rewind(f);
  uint8_t *b = malloc(*size + 1);
  ASSERT_EQ(fread(b, 1, *size, f), *size);
  fclose(f);
  return b;
}

TEST(sim_deterministic_records) {
  run_to_file(gp_test_path(0, "run1.bin"));
  run_to_file(gp_test_path(1, "run2.bin"));
  size_t n1, n2;
  uint8_t *a = slurp(gp_test_path(0, "run1.bin"), &n1);
  uint8_t *b = slurp(gp_test_path(1, "run2.bin"), &n2);
  ASSERT_GT(n1, 1000);
  ASSERT_EQ(n1, n2);
  ASSERT(memcmp(a, b, n1) == 0);
  free(a);
  free(b);
}

TEST(sim_forced_flush_retires_work_in_flight) {
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_kernel_desc kd = tu_kernel_desc("long", 1e6, 0);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(
      gp_sim_launch(gp_sim_default_stream(ctx), k, dim(4096), dim(256), 0));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 0); /* still running */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_API), 3);
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
  /* Retired once: a later sync and flush add nothing. */
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
}

/* The kernel records captured so far on (context, stream). */
static size_t kernels_on(uint32_t ctx, uint32_t stream) {
  size_t n = 0;
  for (size_t i = 0; tu_find(GP_ACTIVITY_KIND_KERNEL, i); i++) {
    const gp_activity_kernel *k =
        (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, i);
    n += k->context_id == ctx && (!stream || k->stream_id == stream);
  }
  return n;
}

/* gp_activity_flush with a context (and stream), forced: only that
 * context's (stream's) work in flight becomes records; the rest stays in
 * flight until a flush that names it. */
TEST(sim_forced_flush_of_one_context_and_stream) {
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *c1, *c2;
  ASSERT_OK(gp_sim_context_create(0, &c1));
  ASSERT_OK(gp_sim_context_create(1, &c2));
  gp_sim_stream *s1 = gp_sim_default_stream(c1), *s2;
  ASSERT_OK(gp_sim_stream_create(c1, &s2));
  gp_sim_kernel_desc kd = tu_kernel_desc("long", 1e6, 0);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  ASSERT_OK(gp_sim_launch(s1, k, dim(4096), dim(256), 0));
  ASSERT_OK(gp_sim_launch(s2, k, dim(4096), dim(256), 0));
  ASSERT_OK(
      gp_sim_launch(gp_sim_default_stream(c2), k, dim(4096), dim(256), 0));
  uint32_t id1 = gp_sim_context_id(c1), id2 = gp_sim_context_id(c2);
  ASSERT_ERR(gp_activity_flush(id2 + 100, 0, 0), GP_ENOENT);
  ASSERT_ERR(gp_activity_flush(0, gp_sim_stream_id(s1), 0), GP_EINVAL);
  ASSERT_ERR(gp_activity_flush(id1, 0, 8), GP_EINVAL);
  ASSERT_OK(gp_activity_flush(id1, 0, 0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 0); /* all still running */
  /* One stream of c1. */
  ASSERT_OK(
      gp_activity_flush(id1, gp_sim_stream_id(s2), GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 1);
  ASSERT_EQ(kernels_on(id1, gp_sim_stream_id(s2)), 1);
  /* The rest of c1. */
  ASSERT_OK(gp_activity_flush(id1, 0, GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 2);
  ASSERT_EQ(kernels_on(id1, 0), 2);
  ASSERT_EQ(kernels_on(id2, 0), 0);
  /* c2's is still there, once. */
  ASSERT_OK(gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED));
  ASSERT_EQ(kernels_on(id2, 0), 1);
  ASSERT_OK(gp_sim_context_synchronize(c1));
  ASSERT_OK(gp_sim_context_synchronize(c2));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 3);
}

/* gp_activity_get_*_id on the simulator's own handles: the ids its
 * records and gp_sim_*_id carry, until the object goes. */
TEST(sim_object_ids_by_handle) {
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(1, &ctx));
  gp_sim_stream *s;
  ASSERT_OK(gp_sim_stream_create(ctx, &s));
  uint32_t id = 0, dev = 0, st = 0;
  ASSERT_OK(gp_activity_get_context_id(GP_API_SIM, ctx, NULL, &id));
  ASSERT_EQ(id, gp_sim_context_id(ctx));
  ASSERT_OK(gp_activity_get_stream_id(GP_API_SIM, ctx, s, &st));
  ASSERT_EQ(st, gp_sim_stream_id(s));
  ASSERT_OK(gp_activity_get_stream_id(GP_API_SIM, NULL,
                                      gp_sim_default_stream(ctx), &st));
  ASSERT_EQ(st, gp_sim_stream_id(gp_sim_default_stream(ctx)));
  ASSERT_OK(gp_activity_get_device_id(GP_API_SIM, ctx, NULL, &dev));
  uint32_t want = 0;
  ASSERT_OK(gp_sim_device_id(1, &want));
  ASSERT_EQ(dev, want);
  /* Another context's stream, an unknown handle, NULLs, another API. */
  gp_sim_context *other;
  ASSERT_OK(gp_sim_context_create(0, &other));
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_SIM, other, s, &st), GP_EINVAL);
  ASSERT_ERR(gp_activity_get_context_id(GP_API_SIM, &want, NULL, &id),
             GP_ENOENT);
  ASSERT_ERR(gp_activity_get_context_id(GP_API_OPEN_CL, ctx, NULL, &id),
             GP_ENOENT);
  ASSERT_ERR(gp_activity_get_context_id(GP_API_SIM, NULL, NULL, &id),
             GP_EINVAL);
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_SIM, NULL, s, NULL), GP_EINVAL);
  /* Gone: forgotten. */
  ASSERT_OK(gp_sim_stream_destroy(s));
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_SIM, NULL, s, &st), GP_ENOENT);
  uint32_t dead = gp_sim_context_id(ctx);
  ASSERT_OK(gp_sim_context_destroy(ctx));
  ASSERT_ERR(gp_activity_get_context_id(GP_API_SIM, ctx, NULL, &id), GP_ENOENT);
  ASSERT_OK(gp_activity_get_context_id(GP_API_SIM, other, NULL, &id));
  ASSERT_EQ(id, gp_sim_context_id(other));
  /* Auto boost: a simulated GPU keeps its model's clocks. */
  gp_auto_boost_state b = {9, 9};
  ASSERT_OK(gp_activity_get_auto_boost_state(id, &b));
  ASSERT_EQ(b.enabled, 0);
  ASSERT_EQ(b.pid, 0);
  ASSERT_ERR(gp_activity_get_auto_boost_state(dead, &b),
             GP_ENOENT); /* destroyed */
  ASSERT_ERR(gp_activity_get_auto_boost_state(id, NULL), GP_EINVAL);
}

TEST(sim_device_context_name_records) {
  tu_capture(1 << 16, 0);
  uint32_t n;
  ASSERT_OK(gp_sim_device_count(&n));
  ASSERT_EQ(n, 3); /* compute, compute, v3d by default */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_CONTEXT));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_NAME));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(2, &ctx));
  gp_sim_stream *s;
  ASSERT_OK(gp_sim_stream_create(ctx, &s));
  ASSERT_OK(gp_sim_stream_set_name(s, "compute stream"));
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 3);
  const gp_activity_device *d =
      (const gp_activity_device *)tu_find(GP_ACTIVITY_KIND_DEVICE, 2);
  ASSERT_STR_EQ(gp_activity_string(d->name_id), "Sim V3D 4.2 #2");
  ASSERT_STR_EQ(gp_activity_string(d->model_id), "V3D 4.2");
  ASSERT_EQ(d->num_queues, 5);
  ASSERT_NE(d->clock_id, 0);
  gp_device_info info;
  ASSERT_OK(gp_device_get_info(d->device_id, &info));
  ASSERT_EQ(info.compute_units, d->compute_units);
  gp_device_queue_info q;
  ASSERT_OK(gp_device_get_queue(d->device_id, 3, &q));
  ASSERT_STR_EQ(q.name, "csd");
  ASSERT_ERR(gp_device_get_queue(d->device_id, 5, &q), GP_ENOENT);
  ASSERT_ERR(gp_device_get_info(99, &info), GP_ENODEV);
  char bdf[16];
  ASSERT_OK(gp_device_pci_bdf(&info, bdf, sizeof(bdf)));
  ASSERT_STR_EQ(bdf, "0000:37:00.0");

  const gp_activity_context *c =
      (const gp_activity_context *)tu_find(GP_ACTIVITY_KIND_CONTEXT, 0);
  ASSERT_NOT_NULL(c);
  ASSERT_EQ(c->context_id, gp_sim_context_id(ctx));
  ASSERT_EQ(c->device_id, d->device_id);
  ASSERT_EQ(c->api, GP_API_SIM);
  bool stream_named = false, thread_named = false;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_NAME, i)); i++) {
    const gp_activity_name *nm = (const gp_activity_name *)r;
    if (nm->object_kind == GP_OBJECT_STREAM) {
      stream_named = true;
      ASSERT_STR_EQ(gp_activity_string(nm->name_id), "compute stream");
      ASSERT_EQ(nm->stream_id, gp_sim_stream_id(s));
    }
    if (nm->object_kind == GP_OBJECT_THREAD)
      thread_named = true;
  }
  ASSERT(stream_named);
  ASSERT(thread_named);
}

TEST(sim_environment_samples) {
  tu_capture(1 << 18, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_ENVIRONMENT));
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  ASSERT_OK(gp_sim_host_work(3000000)); /* 3 ms idle */
  gp_sim_kernel_desc kd = tu_kernel_desc("busy", 2e5, 0);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  for (int i = 0; i < 40; i++)
    ASSERT_OK(gp_sim_launch(gp_sim_default_stream(ctx), k, dim(108 * 8),
                            dim(256), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  ASSERT_OK(gp_activity_flush_all(0));
  uint32_t min_mw = UINT32_MAX, max_mw = 0;
  size_t power = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_ENVIRONMENT, i)); i++) {
    const gp_activity_environment *e = (const gp_activity_environment *)r;
    if (e->environment_kind == GP_ENVIRONMENT_POWER && e->device_id == 0) {
      power++;
      if (e->data.power.power_mw < min_mw)
        min_mw = e->data.power.power_mw;
      if (e->data.power.power_mw > max_mw)
        max_mw = e->data.power.power_mw;
    }
  }
  ASSERT_GT(power, 3);
  ASSERT_EQ(min_mw, 55000);  /* idle */
  ASSERT_GT(max_mw, 300000); /* busy */
}

TEST(sim_real_time_mode) {
  gp_sim_config cfg = {0};
  cfg.num_devices = 1;
  cfg.models[0] = GP_SIM_MODEL_COMPUTE;
  cfg.time_mode = GP_SIM_TIME_REAL;
  ASSERT_OK(gp_sim_init(&cfg));
  tu_capture(1 << 16, 0);
  enable_gpu_kinds();
  gp_sim_context *ctx;
  ASSERT_OK(gp_sim_context_create(0, &ctx));
  gp_sim_kernel_desc kd = tu_kernel_desc("k", 1e5, 0);
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k));
  uint64_t before = gp_get_timestamp();
  ASSERT_OK(
      gp_sim_launch(gp_sim_default_stream(ctx), k, dim(2048), dim(256), 0));
  ASSERT_OK(gp_sim_context_synchronize(ctx));
  uint64_t after = gp_get_timestamp();
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity_kernel *kr =
      (const gp_activity_kernel *)tu_find(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_NOT_NULL(kr);
  /* Timestamps are real trace-clock times, within a microsecond or two of
   * mapping error. */
  ASSERT_GE(kr->start + 2000, before);
  ASSERT_LE(kr->end, after + 2000);
  ASSERT_GT(kr->end - kr->start, 10000);
}
