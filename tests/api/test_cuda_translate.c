/*
 * test_cuda_translate.c - the CUPTI collector's translation layer, fed
 * with records built from the real cupti_activity.h structs of the
 * installed toolkit and walked by the real libcupti, as CUPTI would hand
 * them over: every kind we translate, checked field by field; CUPTI's
 * timestamps mapped through real cuptiGetTimestamp() snapshots; names
 * copied before CUPTI's memory goes; kinds we do not translate counted;
 * CUPTI's dropped records carried into ours; the bounded buffer pool.
 *
 * Without the CUDA toolkit at build time every test here skips.
 */
#include "harness.h"
#include "testutil.h"

#ifdef GP_HAVE_CUDA

#include "cudaInt.h"

/* A CUPTI buffer from the collector's own pool, filled record by record. */
typedef struct cbuf {
  uint8_t *buf;
  size_t size, used;
} cbuf;

static void cbuf_init(cbuf *b) {
  size_t maxr = 1;
  gp__cuda_buffer_request(&b->buf, &b->size, &maxr);
  ASSERT_NOT_NULL(b->buf);
  ASSERT_GE(b->size, 64 * 1024);
  ASSERT_EQ(maxr, 0);
  ASSERT_EQ((uintptr_t)b->buf & 7u, 0);
  b->used = 0;
}

static void *put(cbuf *b, size_t size, uint32_t kind) {
  ASSERT_EQ(size % 8, 0);
  ASSERT_LE(b->used + size, b->size);
  uint8_t *p = b->buf + b->used;
  memset(p, 0, size);
  ((CUpti_Activity *)p)->kind = (CUpti_ActivityKind)kind;
  b->used += size;
  return p;
}

/* An OVERHEAD record of kind on thread tid of process 4242. */
static void put_overhead(cbuf *b, uint32_t kind, uint32_t tid, uint64_t start,
                         uint64_t end) {
  CUpti_ActivityOverhead3 *o = put(b, sizeof(*o), CUPTI_ACTIVITY_KIND_OVERHEAD);
  o->overheadKind = kind;
  o->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o->objectId.pt.processId = 4242;
  o->objectId.pt.threadId = tid;
  o->start = start;
  o->end = end;
}

/* Completes the buffer as CUPTI does and flushes our records out. */
static void complete(cbuf *b) {
  gp__cuda_buffer_complete(NULL, 0, b->buf, b->size, b->used);
  ASSERT_OK(gp_activity_flush_all(0));
}

static void enable_all(void) {
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++)
    if (strcmp(gp_activity_kind_name(k), "UNKNOWN") != 0) /* not a kind */
      ASSERT_OK(gp_activity_enable((gp_activity_kind)k));
}

static uint64_t cupti_now(void) {
  uint64_t t = 0;
  ASSERT_EQ(cuptiGetTimestamp(&t), CUPTI_SUCCESS);
  return t;
}

/* What a CUPTI timestamp should become. */
static uint64_t mapped(uint64_t cupti_ts) {
  uint64_t t = 0;
  ASSERT_OK(gp_clock_to_trace(gp__cuda_clock(), cupti_ts, &t));
  return t;
}

static const gp_activity *nth(uint32_t kind, size_t i) {
  const gp_activity *r = tu_find(kind, i);
  if (!r)
    gp_test_fail(__FILE__, __LINE__, "no %s record #%zu",
                 gp_activity_kind_name(kind), i);
  return r;
}

static void describe_device0(uint64_t *out_id) {
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

TEST(cuda_translate_every_kind) {
  tu_capture(1 << 20, 0);
  enable_all();
  uint64_t dev;
  describe_device0(&dev);
  gp_device_info di;
  ASSERT_OK(gp_device_get_info((uint32_t)dev, &di));
  ASSERT_STR_EQ(di.name, "NVIDIA H100 80GB HBM3");
  ASSERT_STR_EQ(di.vendor, "NVIDIA");
  ASSERT_STR_EQ(di.architecture, "sm_90");
  ASSERT_EQ(di.api, GP_API_CUDA);
  ASSERT_UEQ(di.global_memory_bytes, 85899345920ull);
  ASSERT_UEQ(di.memory_bandwidth_bytes_per_s, 3352000000000ull);
  ASSERT_EQ(di.compute_units, 132);
  ASSERT_EQ(di.core_clock_khz, 1980000);
  ASSERT_EQ(di.max_threads_per_block, 1024);
  ASSERT_EQ(di.max_shared_memory_per_block, 49152);
  ASSERT_EQ(di.flags, GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS);
  ASSERT_EQ(di.uuid[0], 0xa0);
  ASSERT_EQ(di.uuid[15], 0xaf);
  ASSERT_EQ(di.clock_id, gp__cuda_clock());
  ASSERT_EQ(di.num_queues, 2);

  uint64_t t0 = cupti_now();
  cbuf b;
  cbuf_init(&b);

  CUpti_ActivityContext3 *cx =
      put(&b, sizeof(*cx), CUPTI_ACTIVITY_KIND_CONTEXT);
  cx->contextId = 1;
  cx->deviceId = 0;
  cx->nullStreamId = 7;
  cx->computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;

  CUpti_ActivityAPI *ra = put(&b, sizeof(*ra), CUPTI_ACTIVITY_KIND_RUNTIME);
  ra->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  ra->start = t0 + 100;
  ra->end = t0 + 900;
  ra->processId = 4242;
  ra->threadId = 4243;
  ra->correlationId = 11;
  ra->returnValue = 0;

  CUpti_ActivityAPI *da = put(&b, sizeof(*da), CUPTI_ACTIVITY_KIND_DRIVER);
  da->cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
  da->start = t0 + 1000;
  da->end = t0 + 1500;
  da->processId = 4242;
  da->threadId = 4243;
  da->correlationId = 12;
  da->returnValue = 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */

  CUpti_ActivityKernel10 *k =
      put(&b, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  char *kname = strdup("_Z6vecAddPKfS0_Pfi");
  k->registersPerThread = 38;
  k->start = t0 + 2000;
  k->end = t0 + 5000;
  k->completed = t0 + 5000;
  k->queued = t0 + 800;
  k->submitted = t0 + 1200;
  k->deviceId = 0;
  k->contextId = 1;
  k->streamId = 13;
  k->gridX = 4096;
  k->gridY = 2;
  k->gridZ = 1;
  k->blockX = 256;
  k->blockY = 1;
  k->blockZ = 1;
  k->staticSharedMemory = 2048;
  k->dynamicSharedMemory = 4096;
  k->correlationId = 11;
  k->name = kname;

  CUpti_ActivityKernel10 *k2 = put(&b, sizeof(*k2), CUPTI_ACTIVITY_KIND_KERNEL);
  k2->start = t0 + 6000;
  k2->end = t0 + 7000;
  k2->contextId = 1;
  k2->streamId = 7;
  k2->correlationId = 20;
  k2->name = "plain_c_kernel";

  CUpti_ActivityMemcpy6 *mc = put(&b, sizeof(*mc), CUPTI_ACTIVITY_KIND_MEMCPY);
  mc->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  mc->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  mc->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  mc->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  mc->bytes = 1 << 20;
  mc->start = t0 + 1600;
  mc->end = t0 + 1900;
  mc->deviceId = 0;
  mc->contextId = 1;
  mc->streamId = 14;
  mc->correlationId = 12;
  mc->runtimeCorrelationId = 10;

  CUpti_ActivityMemcpy6 *dh = put(&b, sizeof(*dh), CUPTI_ACTIVITY_KIND_MEMCPY);
  dh->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  dh->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
  dh->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  dh->bytes = 4096;
  dh->start = t0 + 8000;
  dh->end = t0 + 8100;
  dh->contextId = 1;
  dh->streamId = 7;
  dh->correlationId = 21;

  CUpti_ActivityMemcpyPtoP4 *pp =
      put(&b, sizeof(*pp), CUPTI_ACTIVITY_KIND_MEMCPY2);
  pp->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  pp->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  pp->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  pp->bytes = 1 << 24;
  pp->start = t0 + 9000;
  pp->end = t0 + 9900;
  pp->deviceId = 0;
  pp->contextId = 1;
  pp->streamId = 15;
  pp->srcDeviceId = 0;
  pp->srcContextId = 1;
  pp->dstDeviceId = 1;
  pp->dstContextId = 2;
  pp->correlationId = 22;

  CUpti_ActivityMemset4 *ms = put(&b, sizeof(*ms), CUPTI_ACTIVITY_KIND_MEMSET);
  ms->value = 0xab;
  ms->bytes = 65536;
  ms->start = t0 + 10000;
  ms->end = t0 + 10050;
  ms->deviceId = 0;
  ms->contextId = 1;
  ms->streamId = 13;
  ms->correlationId = 23;
  ms->flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;

  CUpti_ActivitySynchronization2 *sy =
      put(&b, sizeof(*sy), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  sy->start = t0 + 10100;
  sy->end = t0 + 10200;
  sy->correlationId = 24;
  sy->contextId = 1;
  sy->streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sy->cudaEventId = 3;

  CUpti_ActivityMarker2 *m1 = put(&b, sizeof(*m1), CUPTI_ACTIVITY_KIND_MARKER);
  m1->flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  m1->timestamp = t0 + 50;
  m1->id = 1;
  m1->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m1->objectId.pt.processId = 4242;
  m1->objectId.pt.threadId = 4243;
  m1->name = "training step";
  m1->domain = "app";
  CUpti_ActivityMarker2 *m2 = put(&b, sizeof(*m2), CUPTI_ACTIVITY_KIND_MARKER);
  *m2 = *m1;
  m2->id = 2;
  m2->timestamp = t0 + 60;
  m2->name = "forward";
  CUpti_ActivityMarker2 *m3 = put(&b, sizeof(*m3), CUPTI_ACTIVITY_KIND_MARKER);
  *m3 = *m1;
  m3->flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  m3->id = 2;
  m3->timestamp = t0 + 11000;
  m3->name = NULL;
  m3->domain = NULL;
  CUpti_ActivityMarker2 *m4 = put(&b, sizeof(*m4), CUPTI_ACTIVITY_KIND_MARKER);
  *m4 = *m1;
  m4->flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  m4->id = 9;
  m4->timestamp = t0 + 11100;
  m4->name = "checkpoint";
  m4->domain = NULL;

  put_overhead(&b, CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 4250, t0 + 12000,
               t0 + 12500);
  put_overhead(&b, CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, 4251, t0 + 12600,
               t0 + 13000);

  CUpti_ActivityName *nt = put(&b, sizeof(*nt), CUPTI_ACTIVITY_KIND_NAME);
  nt->objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  nt->objectId.pt.processId = 4242;
  nt->objectId.pt.threadId = 4243;
  nt->name = "loader";
  CUpti_ActivityName *ns = put(&b, sizeof(*ns), CUPTI_ACTIVITY_KIND_NAME);
  ns->objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
  ns->objectId.dcs.deviceId = 0;
  ns->objectId.dcs.contextId = 1;
  ns->objectId.dcs.streamId = 13;
  ns->name = "compute stream";

  static const uint32_t env_kinds[] = {
      CUPTI_ACTIVITY_ENVIRONMENT_SPEED, CUPTI_ACTIVITY_ENVIRONMENT_TEMPERATURE,
      CUPTI_ACTIVITY_ENVIRONMENT_POWER, CUPTI_ACTIVITY_ENVIRONMENT_COOLING};
  for (int i = 0; i < 4; i++) {
    CUpti_ActivityEnvironment *e =
        put(&b, sizeof(*e), CUPTI_ACTIVITY_KIND_ENVIRONMENT);
    e->deviceId = 0;
    e->timestamp = t0 + 13000 + (uint64_t)i;
    e->environmentKind = (CUpti_ActivityEnvironmentKind)env_kinds[i];
    switch (i) {
    case 0:
      e->data.speed.smClock = 1755;
      e->data.speed.memoryClock = 2619;
      e->data.speed.clocksThrottleReasons =
          CUPTI_CLOCKS_THROTTLE_REASON_SW_POWER_CAP;
      break;
    case 1:
      e->data.temperature.gpuTemperature = 61;
      break;
    case 2:
      e->data.power.power = 312000;
      e->data.power.powerLimit = 700000;
      break;
    default:
      e->data.cooling.fanSpeed = 40;
      break;
    }
  }
  /* A kind we do not translate, which CUPTI still walks past. */
  put(&b, sizeof(CUpti_ActivityMarkerData2), CUPTI_ACTIVITY_KIND_MARKER_DATA);

  complete(&b);
  /* CUPTI may reuse the name's memory once the buffer is back. */
  memset(kname, 'X', strlen(kname));
  free(kname);

  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.completed, 1);
  ASSERT_EQ(st.xlate.records, 23);
  ASSERT_EQ(st.xlate.translated, 22);
  ASSERT_EQ(st.xlate.unknown, 1);
  ASSERT_EQ(st.xlate.disabled, 0);
  ASSERT_EQ(st.outstanding, 0);

  /* CONTEXT: the one CUPTI described, and the peer copy's destination */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_CONTEXT), 2);
  const gp_activity_context *c = (const void *)nth(GP_ACTIVITY_KIND_CONTEXT, 0);
  uint32_t ctx = gp__cuda_context(1, 0, 0);
  ASSERT_NE(ctx, 0);
  ASSERT_EQ(c->context_id, ctx);
  ASSERT_EQ(c->device_id, dev);
  ASSERT_EQ(c->api, GP_API_CUDA);
  ASSERT_EQ(c->default_stream_id, 7);

  /* API */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_API), 2);
  const gp_activity_api *a = (const void *)nth(GP_ACTIVITY_KIND_API, 0);
  ASSERT_EQ(a->correlation_id, 11);
  ASSERT_UEQ(a->start, mapped(t0 + 100));
  ASSERT_UEQ(a->end, mapped(t0 + 900));
  ASSERT_EQ(a->process_id, 4242);
  ASSERT_EQ(a->thread_id, 4243);
  ASSERT_EQ(a->domain, GP_API_DOMAIN_CUDA_RUNTIME);
  ASSERT_EQ(a->cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_STR_EQ(gp_activity_string(a->name_id), "cudaLaunchKernel");
  ASSERT_EQ(a->return_value, 0);
  a = (const void *)nth(GP_ACTIVITY_KIND_API, 1);
  ASSERT_EQ(a->domain, GP_API_DOMAIN_CUDA_DRIVER);
  ASSERT_STR_EQ(gp_activity_string(a->name_id), "cuMemcpyHtoDAsync");
  ASSERT_EQ(a->return_value, 700);
  ASSERT_EQ(a->correlation_id, 12);
  /* The mapping keeps differences: CUPTI's clock and ours tick alike. */
  ASSERT_NEAR((double)(a->end - a->start), 500.0, 2.0);

  /* KERNEL */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 2);
  const gp_activity_kernel *kr = (const void *)nth(GP_ACTIVITY_KIND_KERNEL, 0);
  ASSERT_EQ(kr->hdr.size, sizeof(gp_activity_kernel));
  ASSERT_EQ(kr->correlation_id, 11);
  ASSERT_UEQ(kr->queued, mapped(t0 + 800));
  ASSERT_UEQ(kr->submitted, mapped(t0 + 1200));
  ASSERT_UEQ(kr->start, mapped(t0 + 2000));
  ASSERT_UEQ(kr->end, mapped(t0 + 5000));
  ASSERT_EQ(kr->device_id, dev);
  ASSERT_EQ(kr->context_id, ctx);
  ASSERT_EQ(kr->stream_id, 13);
  ASSERT_EQ(kr->queue_id, 0);
  ASSERT_STR_EQ(gp_activity_string(kr->name_id), "_Z6vecAddPKfS0_Pfi");
  ASSERT_STR_EQ(gp_activity_string(kr->demangled_name_id),
                "vecAdd(float const*, float const*, float*, int)");
  ASSERT_EQ(kr->grid_x, 4096);
  ASSERT_EQ(kr->grid_y, 2);
  ASSERT_EQ(kr->grid_z, 1);
  ASSERT_EQ(kr->block_x, 256);
  ASSERT_EQ(kr->block_y, 1);
  ASSERT_EQ(kr->block_z, 1);
  ASSERT_EQ(kr->static_shared_memory, 2048);
  ASSERT_EQ(kr->dynamic_shared_memory, 4096);
  ASSERT_EQ(kr->registers_per_thread, 38);
  ASSERT_EQ(kr->flags, 0);
  ASSERT_EQ(kr->perfmon_id, 0);
  ASSERT_EQ(kr->num_wait_ids, 0);
  kr = (const void *)nth(GP_ACTIVITY_KIND_KERNEL, 1);
  ASSERT_STR_EQ(gp_activity_string(kr->name_id), "plain_c_kernel");
  ASSERT_EQ(kr->demangled_name_id, 0); /* not a C++ name */
  ASSERT_EQ(kr->queued, 0);            /* CUPTI_TIMESTAMP_UNKNOWN stays */
  ASSERT_EQ(kr->submitted, 0);

  /* MEMCPY: host to device, device to host, peer to peer */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MEMCPY), 3);
  const gp_activity_memcpy *m = (const void *)nth(GP_ACTIVITY_KIND_MEMCPY, 0);
  ASSERT_EQ(m->correlation_id, 10); /* the runtime call's */
  ASSERT_UEQ(m->start, mapped(t0 + 1600));
  ASSERT_UEQ(m->end, mapped(t0 + 1900));
  ASSERT_EQ(m->bytes, 1 << 20);
  ASSERT_EQ(m->device_id, dev);
  ASSERT_EQ(m->context_id, ctx);
  ASSERT_EQ(m->stream_id, 14);
  ASSERT_EQ(m->queue_id, 1);
  ASSERT_UEQ(m->src_device_id, UINT32_MAX);
  ASSERT_EQ(m->dst_device_id, dev);
  ASSERT_EQ(m->src_context_id, 0);
  ASSERT_EQ(m->dst_context_id, ctx);
  ASSERT_EQ(m->copy_kind, GP_MEMCPY_HTOD);
  ASSERT_EQ(m->src_kind, GP_MEMORY_PINNED);
  ASSERT_EQ(m->dst_kind, GP_MEMORY_DEVICE);
  ASSERT_EQ(m->flags, GP_ACTIVITY_FLAG_MEMCPY_ASYNC);
  ASSERT_EQ(m->num_wait_ids, 0);
  m = (const void *)nth(GP_ACTIVITY_KIND_MEMCPY, 1);
  ASSERT_EQ(m->correlation_id, 21); /* no runtime call: the driver's */
  ASSERT_EQ(m->copy_kind, GP_MEMCPY_DTOH);
  ASSERT_EQ(m->src_device_id, dev);
  ASSERT_UEQ(m->dst_device_id, UINT32_MAX);
  ASSERT_EQ(m->src_kind, GP_MEMORY_DEVICE); /* DEVICE_STATIC */
  ASSERT_EQ(m->dst_kind, GP_MEMORY_PAGEABLE);
  ASSERT_EQ(m->flags, 0);
  m = (const void *)nth(GP_ACTIVITY_KIND_MEMCPY, 2);
  ASSERT_EQ(m->copy_kind, GP_MEMCPY_PTOP);
  ASSERT_EQ(m->correlation_id, 22);
  ASSERT_EQ(m->bytes, 1 << 24);
  ASSERT_EQ(m->src_device_id, dev);
  uint32_t dev1 = gp__cuda_device(1);
  ASSERT_NE(dev1, dev);
  ASSERT_EQ(m->dst_device_id, dev1);
  ASSERT_EQ(m->src_context_id, ctx);
  ASSERT_EQ(m->dst_context_id, gp__cuda_context(2, 1, 0));
  ASSERT_NE(m->dst_context_id, ctx);
  ASSERT_EQ(m->stream_id, 15);
  ASSERT_UEQ(m->start, mapped(t0 + 9000));
  /* Device 1 was never described: it got a name from its number. */
  ASSERT_OK(gp_device_get_info(dev1, &di));
  ASSERT_STR_EQ(di.name, "CUDA device 1");
  ASSERT_EQ(di.api, GP_API_CUDA);

  /* MEMSET */
  const gp_activity_memset *s = (const void *)nth(GP_ACTIVITY_KIND_MEMSET, 0);
  ASSERT_EQ(s->correlation_id, 23);
  ASSERT_EQ(s->value, 0xab);
  ASSERT_EQ(s->bytes, 65536);
  ASSERT_UEQ(s->start, mapped(t0 + 10000));
  ASSERT_UEQ(s->end, mapped(t0 + 10050));
  ASSERT_EQ(s->device_id, dev);
  ASSERT_EQ(s->context_id, ctx);
  ASSERT_EQ(s->stream_id, 13);
  ASSERT_EQ(s->queue_id, 1);
  ASSERT_EQ(s->memory_kind, GP_MEMORY_MANAGED);
  ASSERT_EQ(s->flags, GP_ACTIVITY_FLAG_MEMCPY_ASYNC);

  /* SYNCHRONIZATION */
  const gp_activity_sync *y =
      (const void *)nth(GP_ACTIVITY_KIND_SYNCHRONIZATION, 0);
  ASSERT_EQ(y->correlation_id, 24);
  ASSERT_EQ(y->sync_kind, GP_SYNC_EVENT_SYNCHRONIZE);
  ASSERT_UEQ(y->start, mapped(t0 + 10100));
  ASSERT_UEQ(y->end, mapped(t0 + 10200));
  ASSERT_EQ(y->device_id, dev);
  ASSERT_EQ(y->context_id, ctx);
  ASSERT_EQ(y->stream_id, 0); /* CUPTI's invalid value */
  ASSERT_EQ(y->event_id, 3);
  ASSERT_EQ(y->wait_id, 0);

  /* MARKER: start, nested start, end of the inner, instant */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 4);
  const gp_activity_marker *mk = (const void *)nth(GP_ACTIVITY_KIND_MARKER, 0);
  ASSERT_EQ(mk->flags, GP_ACTIVITY_FLAG_MARKER_START);
  ASSERT_UEQ(mk->timestamp, mapped(t0 + 50));
  ASSERT_EQ(mk->id, 1);
  ASSERT_STR_EQ(gp_activity_string(mk->name_id), "training step");
  ASSERT_STR_EQ(gp_activity_string(mk->domain_id), "app");
  ASSERT_EQ(mk->process_id, 4242);
  ASSERT_EQ(mk->thread_id, 4243);
  ASSERT_EQ(mk->depth, 1);
  mk = (const void *)nth(GP_ACTIVITY_KIND_MARKER, 1);
  ASSERT_STR_EQ(gp_activity_string(mk->name_id), "forward");
  ASSERT_EQ(mk->depth, 2);
  mk = (const void *)nth(GP_ACTIVITY_KIND_MARKER, 2);
  ASSERT_EQ(mk->flags, GP_ACTIVITY_FLAG_MARKER_END);
  ASSERT_EQ(mk->id, 2);
  ASSERT_EQ(mk->name_id, 0);
  ASSERT_EQ(mk->depth, 2);
  ASSERT_EQ(mk->thread_id, 4243);
  mk = (const void *)nth(GP_ACTIVITY_KIND_MARKER, 3);
  ASSERT_EQ(mk->flags, GP_ACTIVITY_FLAG_MARKER_INSTANT);
  ASSERT_STR_EQ(gp_activity_string(mk->name_id), "checkpoint");
  ASSERT_EQ(mk->domain_id, 0);
  ASSERT_EQ(mk->depth, 0);

  /* OVERHEAD: CUPTI's, and ours for translating the buffer */
  const gp_activity_overhead *o = NULL, *jo = NULL;
  const gp_activity *r;
  bool ours = false;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_OVERHEAD, i)); i++) {
    const gp_activity_overhead *x = (const void *)r;
    if (x->thread_id == 4250)
      o = x;
    else if (x->thread_id == 4251)
      jo = x;
    else if (x->bytes == b.used)
      ours = true;
  }
  ASSERT_NOT_NULL(o);
  ASSERT_EQ(o->overhead_kind, GP_OVERHEAD_BUFFER_FLUSH);
  ASSERT_NOT_NULL(jo);
  ASSERT_EQ(jo->overhead_kind, GP_OVERHEAD_DRIVER_COMPILER);
  ASSERT_EQ(o->process_id, 4242);
  ASSERT_UEQ(o->start, mapped(t0 + 12000));
  ASSERT_UEQ(o->end, mapped(t0 + 12500));
  ASSERT(ours);

  /* NAME: a thread and a stream */
  bool thread_named = false, stream_named = false;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_NAME, i)); i++) {
    const gp_activity_name *n = (const void *)r;
    if (n->object_kind == GP_OBJECT_THREAD) {
      ASSERT_EQ(n->thread_id, 4243);
      ASSERT_STR_EQ(gp_activity_string(n->name_id), "loader");
      thread_named = true;
    } else if (n->object_kind == GP_OBJECT_STREAM) {
      ASSERT_EQ(n->device_id, dev);
      ASSERT_EQ(n->context_id, ctx);
      ASSERT_EQ(n->stream_id, 13);
      ASSERT_STR_EQ(gp_activity_string(n->name_id), "compute stream");
      stream_named = true;
    }
  }
  ASSERT(thread_named);
  ASSERT(stream_named);

  /* ENVIRONMENT, units converted */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_ENVIRONMENT), 4);
  const gp_activity_environment *e =
      (const void *)nth(GP_ACTIVITY_KIND_ENVIRONMENT, 0);
  ASSERT_EQ(e->environment_kind, GP_ENVIRONMENT_SPEED);
  ASSERT_EQ(e->device_id, dev);
  ASSERT_UEQ(e->timestamp, mapped(t0 + 13000));
  ASSERT_EQ(e->data.speed.core_clock_khz, 1755000);
  ASSERT_EQ(e->data.speed.memory_clock_khz, 2619000);
  ASSERT_EQ(e->data.speed.throttle_reasons,
            CUPTI_CLOCKS_THROTTLE_REASON_SW_POWER_CAP);
  e = (const void *)nth(GP_ACTIVITY_KIND_ENVIRONMENT, 1);
  ASSERT_EQ(e->environment_kind, GP_ENVIRONMENT_TEMPERATURE);
  ASSERT_EQ(e->data.temperature.gpu_temperature_mc, 61000);
  e = (const void *)nth(GP_ACTIVITY_KIND_ENVIRONMENT, 2);
  ASSERT_EQ(e->environment_kind, GP_ENVIRONMENT_POWER);
  ASSERT_EQ(e->data.power.power_mw, 312000);
  ASSERT_EQ(e->data.power.power_limit_mw, 700000);
  e = (const void *)nth(GP_ACTIVITY_KIND_ENVIRONMENT, 3);
  ASSERT_EQ(e->environment_kind, GP_ENVIRONMENT_COOLING);
  ASSERT_EQ(e->data.cooling.fan_speed_pct, 40);

  /* DEVICE: the one described, the one named from its number */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE), 2);
  const gp_activity_device *d = (const void *)nth(GP_ACTIVITY_KIND_DEVICE, 0);
  ASSERT_EQ(d->device_id, dev);
  ASSERT_STR_EQ(gp_activity_string(d->name_id), "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(d->compute_units, 132);
  ASSERT_EQ(d->clock_id, gp__cuda_clock());
}

TEST(cuda_translate_code_and_device_attributes) {
  tu_capture(1 << 16, 0);
  enable_all();
  uint64_t dev;
  describe_device0(&dev);
  cbuf b;
  cbuf_init(&b);
  CUpti_ActivityContext3 *cx =
      put(&b, sizeof(*cx), CUPTI_ACTIVITY_KIND_CONTEXT);
  cx->contextId = 1;
  cx->deviceId = 0;
  cx->computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
  CUpti_ActivityModule *m = put(&b, sizeof(*m), CUPTI_ACTIVITY_KIND_MODULE);
  m->contextId = 1;
  m->id = 2;
  m->cubinSize = 123456;
  CUpti_ActivityFunction *f = put(&b, sizeof(*f), CUPTI_ACTIVITY_KIND_FUNCTION);
  char *fname = strdup("_Z6vecAddPKfS0_Pfi");
  f->id = 3;
  f->contextId = 1;
  f->moduleId = 2;
  f->functionIndex = 5;
  f->name = fname;
  /* A CUdevice attribute: its int in the union's low half, the rest of
   * the union left as CUPTI found it. */
  CUpti_ActivityDeviceAttribute *a =
      put(&b, sizeof(*a), CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE);
  a->flags = CUPTI_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE;
  a->deviceId = 0;
  a->attribute.cu = CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
  a->value.vUint64 = 0xdeadbeef00000000ull;
  a->value.vInt32 = 132;
  /* One of CUPTI's own (event API) attributes: we have none like it. */
  CUpti_ActivityDeviceAttribute *ca =
      put(&b, sizeof(*ca), CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE);
  ca->deviceId = 0;
  ca->attribute.cupti = CUPTI_DEVICE_ATTR_MAX_EVENT_ID;
  ca->value.vUint32 = 7;
  complete(&b);
  free(fname); /* CUPTI's memory, gone once the buffer is back */
  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.xlate.unknown, 1);

  uint32_t ctx = gp__cuda_context(1, 0, 0);
  ASSERT_NE(ctx, 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MODULE), 1);
  const gp_activity_module *mr = (const void *)nth(GP_ACTIVITY_KIND_MODULE, 0);
  ASSERT_EQ(mr->hdr.size, sizeof(*mr));
  ASSERT_EQ(mr->module_id, 2);
  ASSERT_EQ(mr->context_id, ctx);
  ASSERT_UEQ(mr->size_bytes, 123456);
  ASSERT_EQ(mr->flags, 0);
  ASSERT_EQ(mr->timestamp, 0); /* CUPTI's record has no time */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_FUNCTION), 1);
  const gp_activity_function *fr =
      (const void *)nth(GP_ACTIVITY_KIND_FUNCTION, 0);
  ASSERT_EQ(fr->id, 3);
  ASSERT_EQ(fr->context_id, ctx);
  ASSERT_EQ(fr->module_id, mr->module_id);
  ASSERT_EQ(fr->function_index, 5);
  ASSERT_STR_EQ(gp_activity_string(fr->name_id), "_Z6vecAddPKfS0_Pfi");
  /* CUPTI's one, and ours of the device CUPTI described (the core's). */
  const gp_activity_device_attribute *cu = NULL, *units = NULL;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, i)); i++) {
    const gp_activity_device_attribute *ar = (const void *)r;
    ASSERT_EQ(ar->device_id, dev);
    if (ar->flags == GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE) {
      ASSERT(cu == NULL);
      cu = ar;
    } else if (ar->attribute == GP_DEVICE_ATTR_COMPUTE_UNITS) {
      units = ar;
    }
  }
  ASSERT_NOT_NULL(cu);
  ASSERT_EQ(cu->attribute, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  ASSERT_EQ(cu->value_type, GP_VALUE_INT64);
  ASSERT_EQ(cu->value.i64, 132);
  ASSERT_NOT_NULL(units);
  ASSERT_EQ(units->value.i64, 132);
}

/* The collector asks the driver for every CUdevice attribute itself
 * (CUPTI 13.0 wrote no DEVICE_ATTRIBUTE record on an H200): once ours are
 * written for a device, a record CUPTI writes of one of them would repeat
 * it and is dropped; another device's still counts. */
TEST(cuda_own_device_attributes_replace_cuptis) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  CUpti_ActivityDeviceAttribute a;
  memset(&a, 0, sizeof(a));
  a.kind = CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE;
  a.flags = CUPTI_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE;
  a.attribute.cu = CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
  a.value.vInt32 = 9;
  a.deviceId = 41;
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&a)); /* kept */
  ASSERT_OK(gp__cuda_attribute_record(
      40, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9, true));
  a.deviceId = 40;
  ASSERT_ERR(gp__cuda_translate((const CUpti_Activity *)&a), GP_EEXIST);
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE), 2);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_device_attribute *r =
        (const void *)nth(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, i);
    ASSERT_EQ(r->device_id, gp__cuda_device(i ? 40 : 41));
    ASSERT_EQ(r->attribute, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    ASSERT_EQ(r->flags, GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE);
    ASSERT_EQ(r->value.i64, 9);
  }
  ASSERT_OK(gp_activity_disable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  ASSERT_ERR(gp__cuda_attribute_record(
                 40, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9, true),
             GP_ENOENT);
}

TEST(cuda_kernel_names_are_not_trusted_by_address) {
  /* CUPTI reuses a name pointer for every launch of a kernel, and may
   * reuse its memory for another name later: the string decides. */
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  char name[32] = "_Z3fooi";
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.contextId = 1;
  k.name = name;
  for (int i = 0; i < 2; i++)
    ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&k));
  strcpy(name, "_Z3barv");
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&k));
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 3);
  const gp_activity_kernel *r[3];
  for (int i = 0; i < 3; i++)
    r[i] = (const void *)nth(GP_ACTIVITY_KIND_KERNEL, (size_t)i);
  ASSERT_EQ(r[0]->name_id, r[1]->name_id);
  ASSERT_STR_EQ(gp_activity_string(r[1]->demangled_name_id), "foo(int)");
  ASSERT_STR_EQ(gp_activity_string(r[2]->name_id), "_Z3barv");
  ASSERT_STR_EQ(gp_activity_string(r[2]->demangled_name_id), "bar()");
}

/* CUPTI leaves a kernel it measured for per-kernel counters without
 * times (start and end 0, seen on an H200): the record is placed at the
 * host time its launch began, which the profiler noted by correlation id
 * (its queued time; the writer draws such work as an instant there).
 * Each noted time is taken once; a kernel whose launch was not measured,
 * or whose slot a later launch took, stays untimed. */
TEST(cuda_measured_kernels_are_placed_at_their_launch) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.contextId = 1;
  k.name = "_Z5scalePfi";
  gp__cuda_launch_time_put(900001, 123456789);
  gp__cuda_launch_time_put(900002, 223456789);
  gp__cuda_launch_time_put(900002 + 4096, 323456789); /* takes 900002's */
  uint32_t corrs[4] = {900001, 900001, 900002, 900003};
  for (int i = 0; i < 4; i++) {
    k.correlationId = corrs[i];
    ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&k));
  }
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 4);
  static const uint64_t want[4] = {123456789, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    const gp_activity_kernel *r =
        (const void *)nth(GP_ACTIVITY_KIND_KERNEL, (size_t)i);
    ASSERT_UEQ(r->correlation_id, corrs[i]);
    ASSERT_UEQ(r->queued, want[i]);
    ASSERT_UEQ(r->start, 0);
    ASSERT_UEQ(r->end, 0);
  }
  ASSERT_UEQ(gp__cuda_launch_time_take(900002 + 4096), 323456789);
}

TEST(cuda_translate_timestamps_follow_the_cupti_clock) {
  /* Snapshots pair real cuptiGetTimestamp() readings with our clock. */
  uint32_t clk = gp__cuda_clock();
  ASSERT_GE(clk, GP_CLOCK_FIRST_DEVICE);
  for (int i = 0; i < 3; i++)
    ASSERT_OK(gp__cuda_clock_refresh(0));
  gp_clock_snapshot snaps[8];
  size_t n = 0;
  const char *name = NULL;
  ASSERT_OK(gp_clock_get_snapshots(clk, snaps, 8, &n, &name));
  ASSERT_STR_EQ(name, "cupti");
  ASSERT_GE(n, 4);
  /* CUPTI's clock follows CLOCK_REALTIME, ours CLOCK_BOOTTIME. */
  uint64_t rt = gp_clock_read_host(GP_CLOCK_REALTIME);
  uint64_t bt = gp_clock_read_host(GP_CLOCK_BOOTTIME);
  ASSERT_NEAR((double)snaps[n - 1].device_ts, (double)rt, 50e6);
  ASSERT_NEAR((double)snaps[n - 1].trace_ts, (double)bt, 50e6);
  for (size_t i = 1; i < n; i++) {
    ASSERT_GE(snaps[i].device_ts, snaps[i - 1].device_ts);
    ASSERT_LT(snaps[i].error_ns, 1000000);
  }
  /* A CUPTI reading taken now maps to about now on our clock. */
  uint64_t before = gp_get_timestamp();
  uint64_t t = gp__cuda_ts(cupti_now());
  uint64_t after = gp_get_timestamp();
  ASSERT_GE(t + 1000000, before);
  ASSERT_LE(t, after + 1000000);
  ASSERT_EQ(gp__cuda_ts(0), 0);
  /* Within a buffer, timestamps map through a copy of the snapshots:
   * exactly as gp_clock_to_trace() maps them, before, between and after
   * the snapshots. */
  gp__cuda_ts_begin();
  for (int i = -20; i <= 40; i++) {
    uint64_t d = snaps[0].device_ts + (uint64_t)((int64_t)i * 7919 * 1000);
    if (i < 0)
      d = snaps[0].device_ts - (uint64_t)(-i) * 1000003u;
    if (i == 40)
      d = snaps[n - 1].device_ts + 5000000000ull;
    uint64_t want = 0;
    ASSERT_OK(gp_clock_to_trace(clk, d, &want));
    ASSERT_UEQ(gp__cuda_ts(d), want);
  }
  gp__cuda_ts_end();
  /* A refresh within the interval takes no snapshot. */
  ASSERT_OK(gp__cuda_clock_refresh(60ull * 1000000000ull));
  size_t n2 = 0;
  ASSERT_OK(gp_clock_get_snapshots(clk, snaps, 8, &n2, NULL));
  ASSERT_EQ(n2, n);
}

TEST(cuda_translate_disabled_and_unknown_kinds) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  cbuf b;
  cbuf_init(&b);
  CUpti_ActivityKernel10 *k =
      put(&b, sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k->contextId = 1;
  k->name = "k";
  k->correlationId = 5;
  CUpti_ActivityAPI *a = put(&b, sizeof(*a), CUPTI_ACTIVITY_KIND_RUNTIME);
  a->cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
  a->correlationId = 5;
  put(&b, sizeof(CUpti_ActivityMarkerData2), CUPTI_ACTIVITY_KIND_MARKER_DATA);
  complete(&b);
  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.xlate.records, 3);
  ASSERT_EQ(st.xlate.translated, 1);
  ASSERT_EQ(st.xlate.disabled, 1);
  ASSERT_EQ(st.xlate.unknown, 1);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_KERNEL), 0);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_API), 1);
  const gp_activity_api *r = (const void *)tu_find(GP_ACTIVITY_KIND_API, 0);
  ASSERT_STR_EQ(gp_activity_string(r->name_id), "cudaMalloc");

  /* Nothing CUPTI can walk: a record of a kind it does not know. */
  gp__cuda_xlate_stats xs = {0};
  uint8_t bad[64] __attribute__((aligned(8)));
  memset(bad, 0, sizeof(bad));
  ((CUpti_Activity *)bad)->kind = (CUpti_ActivityKind)0x7777;
  ASSERT_ERR(gp__cuda_translate_buffer(bad, sizeof(bad), &xs), GP_ECORRUPT);
  ASSERT_EQ(xs.translated, 0);
  ASSERT_ERR(gp__cuda_translate(NULL), GP_EINVAL);
  ASSERT_OK(gp__cuda_translate_buffer(NULL, 0, &xs));
}

TEST(cuda_dropped_records_are_carried) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_CONTEXT));
  uint32_t ctx = gp__cuda_context(3, 0, 0);
  ASSERT_NE(ctx, 0);
  size_t n = 0;
  ASSERT_OK(gp_activity_get_num_dropped_records(0, 0, &n));
  ASSERT_EQ(n, 0);
  gp__cuda_carry_drops(3, 17, 250);
  gp__cuda_carry_drops(0, 0, 5);
  gp__cuda_carry_drops(3, 17, 0); /* nothing */

  gp_activity_drop_stats ds;
  ASSERT_OK(gp_activity_get_drop_stats(&ds));
  ASSERT_EQ(ds.count[GP_ACTIVITY_KIND_INVALID][GP_DROP_SOURCE], 255);
  ASSERT_EQ(ds.total, 255);
  ASSERT_OK(gp_activity_get_num_dropped_records(ctx, 17, &n));
  ASSERT_EQ(n, 250);
  ASSERT_OK(gp_activity_get_num_dropped_records(ctx, 17, &n));
  ASSERT_EQ(n, 0); /* read resets */
  ASSERT_OK(gp_activity_get_num_dropped_records(0, 0, &n));
  ASSERT_EQ(n, 255);
  ASSERT_STR_EQ(gp_drop_reason_name(GP_DROP_SOURCE), "source");

  /* A DROPPED record reaches the stream with the count. */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_CONTEXT));
  gp__cuda_context(4, 0, 0); /* some record to carry it out */
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity *r;
  uint64_t seen = 0;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_DROPPED, i)); i++) {
    const gp_activity_dropped *d = (const void *)r;
    ASSERT_EQ(d->reason, GP_DROP_SOURCE);
    ASSERT_EQ(d->dropped_kind, GP_ACTIVITY_KIND_INVALID);
    ASSERT_LE(d->first, d->last);
    seen += d->count;
  }
  ASSERT_EQ(seen, 255);
  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.cupti_dropped, 255);
}

TEST(cuda_buffer_pool_is_bounded) {
  ASSERT_ERR(gp__cuda_buffers_configure(1024, 2), GP_ERANGE);
  ASSERT_ERR(gp__cuda_buffers_configure(1 << 16, 0), GP_ERANGE);
  ASSERT_OK(gp__cuda_buffers_configure(1 << 16, 2));
  uint8_t *b[3];
  size_t size[3], maxr;
  for (int i = 0; i < 3; i++)
    gp__cuda_buffer_request(&b[i], &size[i], &maxr);
  ASSERT_NOT_NULL(b[0]);
  ASSERT_NOT_NULL(b[1]);
  ASSERT_EQ(size[0], 1 << 16);
  ASSERT(b[2] == NULL); /* declined: CUPTI drops and counts */
  ASSERT_EQ(size[2], 0);
  ASSERT_ERR(gp__cuda_buffers_configure(1 << 17, 2), GP_EBUSY);
  gp__cuda_buffer_stats st;
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.outstanding, 2);
  ASSERT_EQ(st.declined, 1);
  /* An empty completion gives the buffer back; the next request reuses
   * it. */
  gp__cuda_buffer_complete(NULL, 0, b[0], size[0], 0);
  uint8_t *again;
  gp__cuda_buffer_request(&again, &size[2], &maxr);
  ASSERT(again == b[0]);
  gp__cuda_buffer_complete(NULL, 0, again, size[2], 0);
  gp__cuda_buffer_complete(NULL, 0, b[1], size[1], 0);
  gp__cuda_buffers_stats(&st);
  ASSERT_EQ(st.outstanding, 0);
  ASSERT_EQ(st.requested, 4);
  ASSERT_EQ(st.completed, 3);
  gp__cuda_buffers_release();
}

#else /* !GP_HAVE_CUDA */

#define NO_CUDA(name)                                                          \
  TEST(name) {                                                                 \
    SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "   \
         "build time; see mk/cuda.mk (CUDA_HOME)");                            \
  }
NO_CUDA(cuda_translate_every_kind)
NO_CUDA(cuda_translate_code_and_device_attributes)
NO_CUDA(cuda_own_device_attributes_replace_cuptis)
NO_CUDA(cuda_kernel_names_are_not_trusted_by_address)
NO_CUDA(cuda_measured_kernels_are_placed_at_their_launch)
NO_CUDA(cuda_translate_timestamps_follow_the_cupti_clock)
NO_CUDA(cuda_translate_disabled_and_unknown_kinds)
NO_CUDA(cuda_dropped_records_are_carried)
NO_CUDA(cuda_buffer_pool_is_bounded)

#endif
