/*
 * test_gpu_work.c - the GPU-work record header helper (core.h):
 * gp__gpu_work_size() and gp__gpu_work_fill() for KERNEL, MEMCPY and
 * MEMSET, on storage full of garbage as a reserved record is.
 */
#include "core/core.h"
#include "harness.h"

static const uint64_t waits[3] = {11, 22, 33};

static gp__gpu_work sample(void) {
  gp__gpu_work w = {.correlation_id = 7,
                    .queued = 100,
                    .submitted = 200,
                    .start = 300,
                    .end = 400,
                    .device_id = 2,
                    .context_id = 3,
                    .stream_id = 4,
                    .queue_id = 5,
                    .flags = GP_ACTIVITY_FLAG_MEMCPY_ASYNC,
                    .perfmon_id = 6,
                    .num_wait_ids = 3,
                    .wait_ids = waits};
  return w;
}

/* The common fields of any of the three records, against sample(). */
#define CHECK_HEADER(r)                                                        \
  do {                                                                         \
    ASSERT_EQ((r)->hdr.kind, 0xABABABABu);                                     \
    ASSERT_EQ((r)->hdr.size, 0xABABABABu);                                     \
    ASSERT_EQ((r)->correlation_id, 7);                                         \
    ASSERT_EQ((r)->queued, 100);                                               \
    ASSERT_EQ((r)->submitted, 200);                                            \
    ASSERT_EQ((r)->start, 300);                                                \
    ASSERT_EQ((r)->end, 400);                                                  \
    ASSERT_EQ((r)->device_id, 2);                                              \
    ASSERT_EQ((r)->context_id, 3);                                             \
    ASSERT_EQ((r)->stream_id, 4);                                              \
    ASSERT_EQ((r)->queue_id, 5);                                               \
    ASSERT_EQ((r)->flags, GP_ACTIVITY_FLAG_MEMCPY_ASYNC);                      \
    ASSERT_EQ((r)->perfmon_id, 6);                                             \
    ASSERT_EQ((r)->num_wait_ids, 3);                                           \
    const uint64_t *w_ = (const uint64_t *)((r) + 1);                          \
    ASSERT_EQ(w_[0], 11);                                                      \
    ASSERT_EQ(w_[1], 22);                                                      \
    ASSERT_EQ(w_[2], 33);                                                      \
  } while (0)

TEST(gpu_work_header_of_every_kind) {
  _Alignas(8) uint8_t buf[512];
  gp__gpu_work w = sample();
  ASSERT_EQ(gp__gpu_work_size(GP_ACTIVITY_KIND_KERNEL, 3),
            sizeof(gp_activity_kernel) + 24);
  ASSERT_EQ(gp__gpu_work_size(GP_ACTIVITY_KIND_MEMCPY, 0),
            sizeof(gp_activity_memcpy));
  ASSERT_EQ(gp__gpu_work_size(GP_ACTIVITY_KIND_MEMSET, 1) % 8, 0);

  memset(buf, 0xAB, sizeof(buf));
  gp__gpu_work_fill(buf, GP_ACTIVITY_KIND_KERNEL, &w);
  gp_activity_kernel *k = (gp_activity_kernel *)buf;
  CHECK_HEADER(k);
  /* The kind's own fields read 0 until the backend sets them. */
  ASSERT_EQ(k->name_id, 0);
  ASSERT_EQ(k->grid_x, 0);
  ASSERT_EQ(k->registers_per_thread, 0);
  /* Nothing is written past the wait ids. */
  ASSERT_EQ(buf[gp__gpu_work_size(GP_ACTIVITY_KIND_KERNEL, 3)], 0xAB);

  memset(buf, 0xAB, sizeof(buf));
  gp__gpu_work_fill(buf, GP_ACTIVITY_KIND_MEMCPY, &w);
  gp_activity_memcpy *m = (gp_activity_memcpy *)buf;
  CHECK_HEADER(m);
  ASSERT_EQ(m->bytes, 0);
  ASSERT_EQ(m->src_device_id, 0);
  ASSERT_EQ(m->reserved0, 0);
  ASSERT_EQ(buf[gp__gpu_work_size(GP_ACTIVITY_KIND_MEMCPY, 3)], 0xAB);

  memset(buf, 0xAB, sizeof(buf));
  gp__gpu_work_fill(buf, GP_ACTIVITY_KIND_MEMSET, &w);
  gp_activity_memset *s = (gp_activity_memset *)buf;
  CHECK_HEADER(s);
  ASSERT_EQ(s->value, 0);
  ASSERT_EQ(s->reserved1, 0);
  ASSERT_EQ(buf[gp__gpu_work_size(GP_ACTIVITY_KIND_MEMSET, 3)], 0xAB);
}

TEST(gpu_work_other_kinds_are_left_alone) {
  _Alignas(8) uint8_t buf[64];
  gp__gpu_work w = sample();
  memset(buf, 0xAB, sizeof(buf));
  ASSERT_EQ(gp__gpu_work_size(GP_ACTIVITY_KIND_API, 3), 0);
  gp__gpu_work_fill(buf, GP_ACTIVITY_KIND_API, &w);
  for (size_t i = 0; i < sizeof(buf); i++)
    ASSERT_EQ(buf[i], 0xAB);
  /* No wait ids: nothing is read from wait_ids. */
  w.num_wait_ids = 0;
  w.wait_ids = NULL;
  _Alignas(8) uint8_t rec[256];
  gp__gpu_work_fill(rec, GP_ACTIVITY_KIND_MEMSET, &w);
  ASSERT_EQ(((gp_activity_memset *)rec)->num_wait_ids, 0);
}
