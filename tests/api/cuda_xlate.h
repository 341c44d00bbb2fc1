/*
 * cuda_xlate.h - what the tests of the CUPTI collector's translation share
 * (test_cuda_translate*.c): CUPTI buffers from the collector's own pool,
 * filled with records of the installed cupti_activity.h's layouts and
 * completed as CUPTI completes them, and the expected mapping of CUPTI's
 * timestamps. Include after harness.h and testutil.h, with GP_HAVE_CUDA.
 */
#ifndef GPUPERF_TESTS_CUDA_XLATE_H
#define GPUPERF_TESTS_CUDA_XLATE_H

#include <string.h>

#include "cudaInt.h"

/* A CUPTI buffer from the collector's own pool, filled record by record. */
typedef struct cbuf {
  uint8_t *buf;
  size_t size, used;
} cbuf;

static inline void cbuf_init(cbuf *b) {
  size_t maxr = 1;
  gp__cuda_buffer_request(&b->buf, &b->size, &maxr);
  ASSERT_NOT_NULL(b->buf);
  ASSERT_GE(b->size, 64 * 1024);
  ASSERT_EQ(maxr, 0);
  ASSERT_EQ((uintptr_t)b->buf & 7u, 0);
  b->used = 0;
}

static inline void *put(cbuf *b, size_t size, uint32_t kind) {
  ASSERT_EQ(size % 8, 0);
  ASSERT_LE(b->used + size, b->size);
  uint8_t *p = b->buf + b->used;
  memset(p, 0, size);
  ((CUpti_Activity *)p)->kind = (CUpti_ActivityKind)kind;
  b->used += size;
  return p;
}

/* An OVERHEAD record of kind on thread tid of process 4242. */
static inline void put_overhead(cbuf *b, uint32_t kind, uint32_t tid,
                                uint64_t start, uint64_t end) {
  CUpti_ActivityOverhead3 *o = put(b, sizeof(*o), CUPTI_ACTIVITY_KIND_OVERHEAD);
  o->overheadKind = kind;
  o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o->objectId.pt.processId = 4242;
  o->objectId.pt.threadId = tid;
  o->start = start;
  o->end = end;
}

/* Completes the buffer as CUPTI does and flushes our records out. */
static inline void complete(cbuf *b) {
  gp__cuda_buffer_complete(NULL, 0, b->buf, b->size, b->used);
  ASSERT_OK(gp_activity_flush_all(0));
}

/* Every kind (the numbers between kinds are not ones). */
static inline void enable_all(void) {
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++)
    if (strcmp(gp_activity_kind_name(k), "UNKNOWN") != 0)
      ASSERT_OK(gp_activity_enable((gp_activity_kind)k));
}

static inline uint64_t cupti_now(void) {
  uint64_t t = 0;
  ASSERT_EQ(cuptiGetTimestamp(&t), CUPTI_SUCCESS);
  return t;
}

/* What a CUPTI timestamp should become. */
static inline uint64_t mapped(uint64_t cupti_ts) {
  uint64_t t = 0;
  ASSERT_OK(gp_clock_to_trace(gp__cuda_clock(), cupti_ts, &t));
  return t;
}

static inline const gp_activity *nth(uint32_t kind, size_t i) {
  const gp_activity *r = tu_find(kind, i);
  if (!r)
    gp_test_fail(__FILE__, __LINE__, "no %s record #%zu",
                 gp_activity_kind_name(kind), i);
  return r;
}

static inline void describe_device0(uint64_t *out_id) {
  CUpti_ActivityDevice5 d;
  memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.flags = CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
  d.globalMemoryBandwidth = 3352000000ull; /* kB/s */
  d.globalMemorySize = 85899345920ull;
  d.coreClockRate = 1980000;
  d.numMultiprocessors = 132;
  d.maxThreadsPerBlock = 1024;
  d.maxSharedMemoryPerBlock = 49152;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.id = 0;
  for (int i = 0; i < 16; i++)
    d.uuid.bytes[i] = (char)(0xa0 + i);
  d.name = "NVIDIA H100 80GB HBM3";
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&d));
  *out_id = gp__cuda_device(0);
}

#endif /* GPUPERF_TESTS_CUDA_XLATE_H */
