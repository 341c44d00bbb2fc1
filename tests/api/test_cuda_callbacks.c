/*
 * test_cuda_callbacks.c - what the collector learns from CUPTI callbacks,
 * fed to its real subscriber function with the toolkit's own callback
 * data and *_params structs: event dependencies become wait ids on the
 * work's records (runtime and driver calls, per-thread default streams,
 * a driver call nested in a runtime call), synchronizations name what
 * they waited for, NVTX calls become ranges and markers with domains and
 * registered strings, and API names lose their version suffixes.
 *
 * Without the CUDA toolkit at build time every test here skips.
 */
#include "harness.h"
#include "testutil.h"

#ifdef GP_HAVE_CUDA

#include <nvtx3/nvToolsExt.h>

#include "core/core.h"
#include "cudaInt.h"

#include <generated_nvtx_meta.h>

/* Calls the subscriber for one API call: enter, nested (if any), exit. */
static void api_call(CUpti_CallbackDomain domain, uint32_t cbid, uint32_t corr,
                     const void *params) {
  CUpti_CallbackData cb;
  memset(&cb, 0, sizeof(cb));
  cb.functionParams = params;
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  gp__cuda_callback(NULL, domain, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, domain, cbid, &cb);
}

static void rt(uint32_t cbid, uint32_t corr, const void *params) {
  api_call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, corr, params);
}

static void drv(uint32_t cbid, uint32_t corr, const void *params) {
  api_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, corr, params);
}

/* A runtime launch with a driver launch nested in it, as the runtime
 * makes it. */
static void rt_launch_nested(uint32_t rt_cbid, uint32_t corr, uint32_t drv_corr,
                             cudaStream_t s) {
  cudaLaunchKernel_v7000_params rp;
  memset(&rp, 0, sizeof(rp));
  rp.stream = s;
  cuLaunchKernel_params dp;
  memset(&dp, 0, sizeof(dp));
  dp.hStream = (CUstream)s;
  CUpti_CallbackData cb;
  memset(&cb, 0, sizeof(cb));
  cb.functionParams = &rp;
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, &cb);
  CUpti_CallbackData nb = cb;
  nb.functionParams = &dp;
  nb.correlationId = drv_corr;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &nb);
  nb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &nb);
  cb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, &cb);
}

/* Translates a kernel record of corr and returns our record. */
static const gp_activity_kernel *kernel_rec(uint32_t corr) {
  CUpti_ActivityKernel10 k;
  memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.contextId = 1;
  k.correlationId = corr;
  k.name = "k";
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&k));
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_KERNEL, i)); i++)
    if (((const gp_activity_kernel *)r)->correlation_id == corr)
      return (const gp_activity_kernel *)r;
  gp_test_fail(__FILE__, __LINE__, "no kernel record for %u", corr);
}

static void expect_waits(const gp_activity *r, uint32_t n,
                         const uint64_t *want) {
  uint32_t got = 99;
  const uint64_t *ids = gp_activity_wait_ids(r, &got);
  ASSERT_EQ(got, n);
  for (uint32_t i = 0; i < n; i++)
    ASSERT_UEQ(ids[i], want[i]);
}

static uint64_t sync_wait(uint32_t corr) {
  CUpti_ActivitySynchronization2 s;
  memset(&s, 0, sizeof(s));
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.correlationId = corr;
  s.contextId = 1;
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&s));
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_SYNCHRONIZATION, i)); i++)
    if (((const gp_activity_sync *)r)->correlation_id == corr)
      return ((const gp_activity_sync *)r)->wait_id;
  gp_test_fail(__FILE__, __LINE__, "no sync record for %u", corr);
}

TEST(cuda_event_dependencies_become_wait_ids) {
  tu_capture(1 << 18, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MEMCPY));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MEMSET));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_SYNCHRONIZATION));
  ASSERT_NE(gp__cuda_context(1, 0, 0), 0);
  cudaStream_t A = (cudaStream_t)0x1000, B = (cudaStream_t)0x2000;
  cudaEvent_t E = (cudaEvent_t)0x3000, E2 = (cudaEvent_t)0x3100;
  CUevent E3 = (CUevent)0x3200;

  /* Kernel 100 on A (the runtime runs cuLaunchKernel 101 inside). */
  rt_launch_nested(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100, 101,
                   A);
  cudaEventRecord_v3020_params er = {.event = E, .stream = A};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 102, &er);
  cudaStreamWaitEvent_v3020_params sw = {.stream = B, .event = E};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 103, &sw);
  /* Kernel 104 on B through nvcc 13's launch stub; its record may carry
   * the nested driver call's id 204. */
  rt_launch_nested(CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 104, 204,
                   B);
  cudaMemcpyAsync_v3020_params mc;
  memset(&mc, 0, sizeof(mc));
  mc.stream = B;
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 105, &mc);
  cudaEventSynchronize_v3020_params es = {.event = E};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, 106, &es);
  cudaStreamSynchronize_v3020_params ss = {.stream = B};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 107, &ss);
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, 108, NULL);

  /* The per-thread default stream: NULL in a _ptsz call. */
  cudaLaunchKernel_ptsz_v7000_params pk;
  memset(&pk, 0, sizeof(pk));
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, 109, &pk);
  /* The legacy stream is another stream: its work (116) is not what an
   * event recorded on the per-thread stream stands for. */
  cudaLaunchKernel_v7000_params lk;
  memset(&lk, 0, sizeof(lk));
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 116, &lk);
  cudaEventRecord_ptsz_v7000_params er2 = {.event = E2, .stream = NULL};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000, 110, &er2);
  cudaStreamWaitEvent_v3020_params sw2 = {.stream = A, .event = E2};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 111, &sw2);
  cudaMemsetAsync_v3020_params ms;
  memset(&ms, 0, sizeof(ms));
  ms.stream = A;
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 112, &ms);

  /* The driver API on its own. */
  cuEventRecord_params der = {.hEvent = E3, .hStream = (CUstream)B};
  drv(CUPTI_DRIVER_TRACE_CBID_cuEventRecord, 113, &der);
  cuStreamWaitEvent_params dsw = {.hStream = (CUstream)A, .hEvent = E3};
  drv(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, 114, &dsw);
  cuLaunchKernel_params dl;
  memset(&dl, 0, sizeof(dl));
  dl.hStream = (CUstream)A;
  drv(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 115, &dl);

  /* The first kernel waited for nothing; the one on B for it, under
   * either of its ids. */
  expect_waits(&kernel_rec(100)->hdr, 0, NULL);
  const uint64_t w100[] = {100};
  expect_waits(&kernel_rec(204)->hdr, 1, w100);

  /* The copy after it on B is ordered by the stream, not by a wait. */
  CUpti_ActivityMemcpy6 m;
  memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.contextId = 1;
  m.correlationId = 305;        /* the driver's id ... */
  m.runtimeCorrelationId = 105; /* ... and the runtime call's */
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&m));
  CUpti_ActivityMemset4 f;
  memset(&f, 0, sizeof(f));
  f.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  f.contextId = 1;
  f.correlationId = 112;
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&f));
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity_memcpy *mr =
      (const void *)tu_find(GP_ACTIVITY_KIND_MEMCPY, 0);
  ASSERT_NOT_NULL(mr);
  ASSERT_EQ(mr->correlation_id, 105);
  expect_waits(&mr->hdr, 0, NULL);
  const gp_activity *fr = tu_find(GP_ACTIVITY_KIND_MEMSET, 0);
  ASSERT_NOT_NULL(fr);
  const uint64_t w109[] = {109};
  expect_waits(fr, 1, w109);
  expect_waits(&kernel_rec(116)->hdr, 0, NULL);
  const uint64_t w105[] = {105};
  expect_waits(&kernel_rec(115)->hdr, 1, w105);

  /* What each synchronization waited for. */
  ASSERT_EQ(sync_wait(103), 100); /* cudaStreamWaitEvent: the event's */
  ASSERT_EQ(sync_wait(106), 100); /* cudaEventSynchronize */
  ASSERT_EQ(sync_wait(107), 105); /* cudaStreamSynchronize(B) */
  ASSERT_EQ(sync_wait(108), 105); /* cudaDeviceSynchronize: the last */
  ASSERT_EQ(sync_wait(999), 0);   /* nothing known */

  /* Destroyed handles are forgotten: a new event at E's address stands
   * for nothing until recorded. */
  cudaEventDestroy_v3020_params ed = {.event = E};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020, 120, &ed);
  cudaStreamWaitEvent_v3020_params sw3 = {.stream = A, .event = E};
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 121, &sw3);
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 122, &lk);
  lk.stream = A;
  rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 123, &lk);
  expect_waits(&kernel_rec(123)->hdr, 0, NULL);
}

TEST(cuda_deps_table_is_bounded) {
  /* Work whose record never comes must not grow the table forever. */
  cudaStream_t A = (cudaStream_t)0x1000, B = (cudaStream_t)0x2000;
  cudaEvent_t E = (cudaEvent_t)0x3000;
  cudaLaunchKernel_v7000_params k;
  memset(&k, 0, sizeof(k));
  uint32_t corr = 1;
  for (int i = 0; i < 40000; i++) {
    k.stream = A;
    rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr++, &k);
    cudaEventRecord_v3020_params er = {.event = E, .stream = A};
    rt(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, corr++, &er);
    cudaStreamWaitEvent_v3020_params sw = {.stream = B, .event = E};
    rt(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, corr++, &sw);
    k.stream = B;
    rt(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr++, &k);
  }
  ASSERT_LE(gp__cuda_deps_pending(), 16384);
  ASSERT_GT(gp__cuda_deps_pending(), 1000);
  /* The newest are kept. */
  uint64_t ids[4];
  ASSERT_EQ(gp__cuda_deps_take(corr - 1, ids, 4), 1);
  ASSERT_UEQ(ids[0], corr - 4);
  ASSERT_EQ(gp__cuda_deps_take(4, ids, 4), 0);
}

/* ------------------------------------------------------------------ */
/* NVTX                                                                 */

static void nvtx(uint32_t cbid, const void *params, const void *ret) {
  CUpti_NvtxData d = {.functionName = "nvtx",
                      .functionParams = params,
                      .functionReturnValue = ret};
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

static nvtxEventAttributes_t attr_ascii(const char *msg) {
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = msg;
  return a;
}

static const gp_activity_marker *marker(size_t i) {
  const gp_activity_marker *m =
      (const void *)tu_find(GP_ACTIVITY_KIND_MARKER, i);
  if (!m)
    gp_test_fail(__FILE__, __LINE__, "no marker #%zu", i);
  return m;
}

TEST(cuda_nvtx_calls_become_ranges_and_markers) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  nvtxDomainHandle_t dom = (nvtxDomainHandle_t)0xd1;
  nvtxDomainCreateA_params dc = {.name = "app"};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainCreateA, &dc, &dom);
  nvtxStringHandle_t str = (nvtxStringHandle_t)0x51;
  nvtxDomainRegisterStringA_params rs = {.domain = dom,
                                         .string = "registered step"};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, &rs, &str);

  nvtxRangePushA_params p1 = {.message = "outer"};
  nvtx(CUPTI_CBID_NVTX_nvtxRangePushA, &p1, NULL);
  nvtxEventAttributes_t a;
  memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = str;
  nvtxDomainRangePushEx_params p2 = {.domain = dom,
                                     .core = {.eventAttrib = &a}};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &p2, NULL);
  nvtxEventAttributes_t w;
  memset(&w, 0, sizeof(w));
  w.version = NVTX_VERSION;
  w.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  w.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  w.message.unicode = L"wide";
  nvtxRangePushEx_params p3 = {.eventAttrib = &w};
  nvtx(CUPTI_CBID_NVTX_nvtxRangePushEx, &p3, NULL);

  /* The thread's range stack is what the counter filters will read. */
  uint32_t ids[4];
  ASSERT_EQ(gp_range_stack(ids, 4), 3);
  ASSERT_STR_EQ(gp_activity_string(ids[0]), "outer");
  ASSERT_STR_EQ(gp_activity_string(ids[1]), "registered step");
  ASSERT_STR_EQ(gp_activity_string(ids[2]), "wide");
  nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &(nvtxRangePop_params){0}, NULL);
  nvtxDomainRangePop_params pp = {.domain = dom};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainRangePop, &pp, NULL);
  nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &(nvtxRangePop_params){0}, NULL);
  ASSERT_EQ(gp_range_stack(NULL, 0), 0);
  /* A pop too many is the program's mistake, not a crash. */
  nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &(nvtxRangePop_params){0}, NULL);

  /* Start/end ranges pair by the id NVTX returned. */
  nvtxRangeId_t rid = 77;
  nvtxRangeStartA_params s1 = {.message = "async load"};
  nvtx(CUPTI_CBID_NVTX_nvtxRangeStartA, &s1, &rid);
  nvtxEventAttributes_t sa = attr_ascii("in app domain");
  nvtxRangeId_t rid2 = 78;
  nvtxDomainRangeStartEx_params s2 = {.domain = dom,
                                      .core = {.eventAttrib = &sa}};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &s2, &rid2);
  nvtxRangeEnd_params e1 = {.id = 77};
  nvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, &e1, NULL);
  nvtxDomainRangeEnd_params e2 = {.domain = dom, .core = {.id = 78}};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &e2, NULL);
  nvtxRangeEnd_params e3 = {.id = 12345}; /* never started */
  nvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, &e3, NULL);

  nvtxMarkA_params mk = {.message = "checkpoint"};
  nvtx(CUPTI_CBID_NVTX_nvtxMarkA, &mk, NULL);
  nvtxEventAttributes_t ma = attr_ascii("marked in app");
  nvtxDomainMarkEx_params dm = {.domain = dom, .core = {.eventAttrib = &ma}};
  nvtx(CUPTI_CBID_NVTX_nvtxDomainMarkEx, &dm, NULL);
  nvtx(CUPTI_CBID_NVTX_nvtxMarkA, NULL, NULL); /* no params: ignored */
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 12);
  const gp_activity_marker *m = marker(0);
  ASSERT_EQ(m->flags, GP_ACTIVITY_FLAG_MARKER_START);
  ASSERT_STR_EQ(gp_activity_string(m->name_id), "outer");
  ASSERT_EQ(m->domain_id, 0);
  ASSERT_EQ(m->depth, 1);
  ASSERT_EQ(m->thread_id, gp__tid());
  m = marker(1);
  ASSERT_STR_EQ(gp_activity_string(m->name_id), "registered step");
  ASSERT_STR_EQ(gp_activity_string(m->domain_id), "app");
  ASSERT_EQ(m->depth, 2);
  uint64_t inner = m->id;
  ASSERT_EQ(marker(2)->depth, 3);
  ASSERT_EQ(marker(3)->flags, GP_ACTIVITY_FLAG_MARKER_END); /* wide */
  m = marker(4);
  ASSERT_EQ(m->flags, GP_ACTIVITY_FLAG_MARKER_END);
  ASSERT_UEQ(m->id, inner);
  ASSERT_EQ(m->depth, 2);
  ASSERT_EQ(marker(5)->depth, 1);
  const gp_activity_marker *st = marker(6), *st2 = marker(7);
  ASSERT_STR_EQ(gp_activity_string(st->name_id), "async load");
  ASSERT_EQ(st->flags, GP_ACTIVITY_FLAG_MARKER_START);
  ASSERT_STR_EQ(gp_activity_string(st2->domain_id), "app");
  ASSERT_EQ(marker(8)->flags, GP_ACTIVITY_FLAG_MARKER_END);
  ASSERT_UEQ(marker(8)->id, st->id);
  ASSERT_UEQ(marker(9)->id, st2->id);
  m = marker(10);
  ASSERT_EQ(m->flags, GP_ACTIVITY_FLAG_MARKER_INSTANT);
  ASSERT_STR_EQ(gp_activity_string(m->name_id), "checkpoint");
  m = marker(11);
  ASSERT_STR_EQ(gp_activity_string(m->name_id), "marked in app");
  ASSERT_STR_EQ(gp_activity_string(m->domain_id), "app");
  for (size_t i = 1; i < 12; i++)
    ASSERT_LE(marker(i - 1)->timestamp, marker(i)->timestamp);
}

/* NVTX's colour, category and payload (every payload type) become the
 * markers' MARKER_DATA, right before each MARKER record; an Ex call
 * without any of them gives none. */
TEST(cuda_nvtx_attributes_become_marker_data) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER_DATA));
  nvtxEventAttributes_t a = attr_ascii("colored");
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xff112233u;
  a.category = 5;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  a.payload.uiValue = 9;
  nvtxRangePushEx_params push = {.eventAttrib = &a};
  nvtx(CUPTI_CBID_NVTX_nvtxRangePushEx, &push, NULL);
  nvtx(CUPTI_CBID_NVTX_nvtxRangePop, &push, NULL);
  nvtxEventAttributes_t f = attr_ascii("float");
  f.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
  f.payload.fValue = 1.5f;
  nvtxMarkEx_params mark = {.eventAttrib = &f};
  nvtx(CUPTI_CBID_NVTX_nvtxMarkEx, &mark, NULL);
  nvtxEventAttributes_t i = attr_ascii("int");
  i.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  i.payload.iValue = -4;
  nvtxRangeStartEx_params start = {.eventAttrib = &i};
  nvtxRangeId_t rid = 77;
  nvtx(CUPTI_CBID_NVTX_nvtxRangeStartEx, &start, &rid);
  nvtxEventAttributes_t none = attr_ascii("none");
  nvtxMarkEx_params mark2 = {.eventAttrib = &none};
  nvtx(CUPTI_CBID_NVTX_nvtxMarkEx, &mark2, NULL);
  nvtxRangeEnd_params end = {.id = rid};
  nvtx(CUPTI_CBID_NVTX_nvtxRangeEnd, &end, NULL);
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER_DATA), 3);
  const gp_activity_marker_data *d[3];
  for (size_t k = 0; k < 3; k++)
    d[k] = (const void *)tu_find(GP_ACTIVITY_KIND_MARKER_DATA, k);
  ASSERT_EQ(d[0]->flags, GP_ACTIVITY_FLAG_MARKER_COLOR_ARGB);
  ASSERT_EQ(d[0]->color, 0xff112233u);
  ASSERT_EQ(d[0]->category, 5);
  ASSERT_EQ(d[0]->payload_kind, GP_MARKER_PAYLOAD_UINT64);
  ASSERT_UEQ(d[0]->payload.u64, 9);
  ASSERT_EQ(d[1]->flags, GP_ACTIVITY_FLAG_MARKER_COLOR_NONE);
  ASSERT_EQ(d[1]->payload_kind, GP_MARKER_PAYLOAD_DOUBLE);
  ASSERT(d[1]->payload.f64 == 1.5);
  ASSERT_EQ(d[2]->payload_kind, GP_MARKER_PAYLOAD_INT64);
  ASSERT_EQ(d[2]->payload.i64, -4);
  /* Each the id of a marker that starts or marks. */
  for (size_t k = 0; k < 3; k++) {
    bool found = false;
    for (size_t j = 0; j < tu_count(GP_ACTIVITY_KIND_MARKER); j++) {
      const gp_activity_marker *m =
          (const void *)tu_find(GP_ACTIVITY_KIND_MARKER, j);
      found |= m->id == d[k]->id && !(m->flags & GP_ACTIVITY_FLAG_MARKER_END);
    }
    ASSERT(found);
  }
}

TEST(cuda_api_names_and_demangling) {
  static const struct {
    uint32_t domain, cbid;
    const char *name;
  } cases[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API,
       CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel"},
      {CUPTI_CB_DOMAIN_RUNTIME_API,
       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, "cudaMemcpyAsync"},
      {CUPTI_CB_DOMAIN_RUNTIME_API,
       CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
       "__cudaLaunchKernel"},
      {CUPTI_CB_DOMAIN_RUNTIME_API,
       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000, "cudaMemcpy"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
       "cuMemcpyHtoDAsync"},
      {CUPTI_CB_DOMAIN_DRIVER_API,
       CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
       "cuLaunchKernel"},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
       "cuCtxSynchronize"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    uint32_t id = gp__cuda_api_name(cases[i].domain, cases[i].cbid);
    ASSERT_STR_EQ(gp_activity_string(id), cases[i].name);
    ASSERT_EQ(gp__cuda_api_name(cases[i].domain, cases[i].cbid),
              id); /* cached */
  }
  ASSERT_EQ(gp__cuda_api_name(CUPTI_CB_DOMAIN_RUNTIME_API, 100000), 0);

  ASSERT_STR_EQ(gp_activity_string(gp__cuda_demangle("_Z6matmulPfS_S_i")),
                "matmul(float*, float*, float*, int)");
  ASSERT_STR_EQ(
      gp_activity_string(gp__cuda_demangle("_ZN4cute6kernelILi128EEEvPKfPf")),
      "void cute::kernel<128>(float const*, float*)");
  ASSERT_EQ(gp__cuda_demangle("_Znot a name"), 0);
  ASSERT_EQ(gp__cuda_demangle("vecAdd"), 0);
  ASSERT_EQ(gp__cuda_demangle(NULL), 0);
}

/* The callback API (gpuperf/callback.h) gets CUPTI's API callbacks as
 * its own: CUPTI's correlation ids (those of the translated API
 * records), a driver call nested in a runtime call, the calls' statuses,
 * each subscriber's correlation_data carried from entry to exit. */
typedef struct fwd_seen {
  uint32_t site, api, call;
  int32_t rc;
  uint64_t corr, data;
  char name[48];
} fwd_seen;
static fwd_seen fwd[16];
static int nfwd;

static void on_fwd(void *user, gp_callback_domain domain, uint32_t cbid,
                   const void *data) {
  (void)user, (void)cbid;
  const gp_callback_api_data *d = data;
  if (domain != GP_CALLBACK_DOMAIN_API || nfwd == 16)
    return;
  fwd_seen *e = &fwd[nfwd++];
  e->site = d->site;
  e->api = d->api_domain;
  e->call = d->cbid;
  e->rc = d->return_value;
  e->corr = d->correlation_id;
  e->data = *d->correlation_data;
  snprintf(e->name, sizeof(e->name), "%s", d->function_name);
  if (d->site == GP_CALLBACK_SITE_ENTER)
    *d->correlation_data = d->correlation_id + 1000 * d->api_domain;
}

/* A runtime launch (status rt_rc) with a driver launch nested in it. */
static void launch_with_status(uint32_t corr, uint32_t drv_corr,
                               int32_t rt_rc) {
  cudaLaunchKernel_v7000_params rp;
  memset(&rp, 0, sizeof(rp));
  cuLaunchKernel_params dp;
  memset(&dp, 0, sizeof(dp));
  CUpti_CallbackData cb, nb;
  memset(&cb, 0, sizeof(cb));
  cb.functionParams = &rp;
  cb.functionName = "cudaLaunchKernel";
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
  CUresult drv_rc = CUDA_SUCCESS;
  nb = cb;
  nb.functionParams = &dp;
  nb.functionName = "cuLaunchKernel";
  nb.correlationId = drv_corr;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &nb);
  nb.callbackSite = CUPTI_API_EXIT;
  nb.functionReturnValue = &drv_rc;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &nb);
  cb.callbackSite = CUPTI_API_EXIT;
  cb.functionReturnValue = &rt_rc;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
}

TEST(cuda_callbacks_reach_subscribers) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_API));
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_fwd, NULL));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_API));
  /* The driver call the runtime makes inside carries the runtime call's
   * correlation id, as CUPTI 13.0 gave it on an H200
   * (scripts/device-check-cuda.sh): each of the two keeps its own data. */
  launch_with_status(40, 40, 1 /* cudaErrorInvalidValue */);
  ASSERT_EQ(nfwd, 4);
  static const struct {
    uint32_t site, api;
    uint64_t corr, data;
    int32_t rc;
  } want[4] = {
      {GP_CALLBACK_SITE_ENTER, GP_API_DOMAIN_CUDA_RUNTIME, 40, 0, 0},
      {GP_CALLBACK_SITE_ENTER, GP_API_DOMAIN_CUDA_DRIVER, 40, 0, 0},
      {GP_CALLBACK_SITE_EXIT, GP_API_DOMAIN_CUDA_DRIVER, 40, 3040, 0},
      {GP_CALLBACK_SITE_EXIT, GP_API_DOMAIN_CUDA_RUNTIME, 40, 2040, 1}};
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(fwd[i].site, want[i].site);
    ASSERT_EQ(fwd[i].api, want[i].api);
    ASSERT_UEQ(fwd[i].corr, want[i].corr);
    ASSERT_UEQ(fwd[i].data, want[i].data);
    ASSERT_EQ(fwd[i].rc, want[i].rc);
  }
  ASSERT_EQ(fwd[0].call, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  ASSERT_STR_EQ(fwd[0].name, "cudaLaunchKernel");
  ASSERT_EQ(fwd[1].call, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  /* The runtime call's API record, as CUPTI will deliver it: the same
   * correlation id as its callbacks. */
  CUpti_ActivityAPI a;
  memset(&a, 0, sizeof(a));
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.correlationId = 40;
  a.returnValue = 1;
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&a));
  ASSERT_OK(gp_activity_flush_all(0));
  const gp_activity_api *r =
      (const gp_activity_api *)tu_find(GP_ACTIVITY_KIND_API, 0);
  ASSERT_NOT_NULL(r);
  ASSERT_UEQ(r->correlation_id, fwd[0].corr);
  ASSERT_EQ(r->cbid, fwd[0].call);
  ASSERT_EQ(r->return_value, fwd[3].rc);
  /* One call by id: the driver's launch only. */
  nfwd = 0;
  ASSERT_OK(gp_callback_enable_domain(sub, 0, GP_CALLBACK_DOMAIN_API));
  ASSERT_OK(gp_callback_enable(
      sub, 1, GP_CALLBACK_DOMAIN_API,
      GP_CALLBACK_API_ID(GP_API_DOMAIN_CUDA_DRIVER,
                         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)));
  launch_with_status(50, 51, 0); /* ids of their own (older CUPTIs) */
  ASSERT_EQ(nfwd, 2);
  ASSERT_UEQ(fwd[0].corr, 51);
  ASSERT_UEQ(fwd[1].corr, 51);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  nfwd = 0;
  launch_with_status(60, 61, 0);
  ASSERT_EQ(nfwd, 0);
}

/* CUPTI's synchronisation callbacks, inside the call that waited (a
 * driver call nested in the program's runtime call, as the runtime makes
 * it), reach SYNCHRONIZE subscribers with the program's call's
 * correlation id; one CUPTI makes outside any call has none. Without a
 * driver CUPTI cannot name the context: 0. */
static gp_callback_sync_data syncs[4];
static uint32_t sync_ids[4];
static int nsync;

static void on_sync(void *user, gp_callback_domain domain, uint32_t cbid,
                    const void *data) {
  (void)user;
  if (domain == GP_CALLBACK_DOMAIN_SYNCHRONIZE && nsync < 4) {
    sync_ids[nsync] = cbid;
    syncs[nsync++] = *(const gp_callback_sync_data *)data;
  }
}

static void stream_sync_call(uint32_t corr, uint32_t drv_corr) {
  CUpti_CallbackData cb;
  memset(&cb, 0, sizeof(cb));
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &cb);
  CUpti_CallbackData nb = cb;
  nb.correlationId = drv_corr;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &nb);
  CUpti_SynchronizeData sd = {NULL, NULL};
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_SYNCHRONIZE,
                    CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED, &sd);
  nb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_DRIVER_API,
                    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &nb);
  cb.callbackSite = CUPTI_API_EXIT;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RUNTIME_API,
                    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &cb);
}

TEST(cuda_sync_callbacks_name_their_call) {
  tu_capture(1 << 16, 0);
  nsync = 0;
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_sync, NULL));
  stream_sync_call(70, 71); /* nothing enabled: nothing */
  ASSERT_EQ(nsync, 0);
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_SYNCHRONIZE));
  stream_sync_call(80, 81);
  CUpti_SynchronizeData sd = {NULL, NULL};
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_SYNCHRONIZE,
                    CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, &sd);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  ASSERT_EQ(nsync, 2);
  ASSERT_EQ(sync_ids[0], GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED);
  ASSERT_UEQ(syncs[0].correlation_id, 80);
  ASSERT_EQ(syncs[0].context_id, 0);
  ASSERT_EQ(sync_ids[1], GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED);
  ASSERT_UEQ(syncs[1].correlation_id, 0);
}

/* A CUDA stream about to be destroyed (CUPTI's resource callback) raises
 * STREAM_DESTROY_STARTING with the ids it was noted with when it was made
 * (here noted by hand: without a driver CUPTI cannot name a stream), and
 * its ids are forgotten. A stream never noted raises nothing. */
static gp_callback_resource_data ends[4];
static int nends;

static void on_resource(void *user, gp_callback_domain domain, uint32_t cbid,
                        const void *data) {
  (void)user;
  if (domain == GP_CALLBACK_DOMAIN_RESOURCE &&
      cbid == GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING && nends < 4)
    ends[nends++] = *(const gp_callback_resource_data *)data;
}

TEST(cuda_stream_end_reaches_resource_subscribers) {
  tu_capture(1 << 16, 0);
  nends = 0;
  static int ctx_obj, stream_obj, other_obj;
  CUcontext ctx = (CUcontext)&ctx_obj;
  CUstream st = (CUstream)&stream_obj;
  ASSERT_OK(
      gp__handle_put(GP_API_CUDA, GP__HANDLE_CONTEXT, ctx, NULL, 3, 7, 0));
  ASSERT_OK(gp__handle_put(GP_API_CUDA, GP__HANDLE_STREAM, st, NULL, 3, 7, 13));
  gp_callback_subscriber *sub;
  ASSERT_OK(gp_callback_subscribe(&sub, on_resource, NULL));
  ASSERT_OK(gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE));
  CUpti_ResourceData rd;
  memset(&rd, 0, sizeof(rd));
  rd.context = ctx;
  rd.resourceHandle.stream = (CUstream)&other_obj; /* never noted */
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE,
                    CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, &rd);
  ASSERT_EQ(nends, 0);
  rd.resourceHandle.stream = st;
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE,
                    CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, &rd);
  ASSERT_OK(gp_callback_unsubscribe(sub));
  ASSERT_EQ(nends, 1);
  ASSERT_EQ(ends[0].api, GP_API_CUDA);
  ASSERT_EQ(ends[0].device_id, 3);
  ASSERT_EQ(ends[0].context_id, 7);
  ASSERT_EQ(ends[0].stream_id, 13);
  uint32_t sid = 0;
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_CUDA, ctx, st, &sid), GP_ENOENT);
  gp__handle_drop(GP_API_CUDA, GP__HANDLE_CONTEXT, ctx, NULL);
}

/* CUPTI's resource callbacks of a module loaded and about to be unloaded
 * (its data through resourceDescriptor, as CUPTI passes it) become MODULE
 * records. Without a driver there is no context: CUPTI cannot name one,
 * and the records say 0. */
TEST(cuda_module_callbacks_become_module_records) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MODULE));
  CUpti_ModuleResourceData md = {
      .moduleId = 7, .cubinSize = 4096, .pCubin = NULL};
  CUpti_ResourceData rd;
  memset(&rd, 0, sizeof(rd));
  rd.resourceDescriptor = &md;
  uint64_t t0 = gp_get_timestamp();
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE,
                    CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd);
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE,
                    CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, &rd);
  uint64_t t1 = gp_get_timestamp();
  ASSERT_OK(gp_activity_disable(GP_ACTIVITY_KIND_MODULE));
  gp__cuda_callback(NULL, CUPTI_CB_DOMAIN_RESOURCE,
                    CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd); /* not kept */
  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MODULE), 2);
  for (size_t i = 0; i < 2; i++) {
    const gp_activity_module *m =
        (const void *)tu_find(GP_ACTIVITY_KIND_MODULE, i);
    ASSERT_EQ(m->module_id, 7);
    ASSERT_UEQ(m->size_bytes, 4096);
    ASSERT_EQ(m->context_id, 0);
    ASSERT_EQ(m->flags, i ? GP_ACTIVITY_FLAG_MODULE_UNLOAD : 0);
    ASSERT_GE(m->timestamp, t0);
    ASSERT_LE(m->timestamp, t1);
  }
}

#else /* !GP_HAVE_CUDA */

#define NO_CUDA(name)                                                          \
  TEST(name) {                                                                 \
    SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "   \
         "build time; see mk/cuda.mk (CUDA_HOME)");                            \
  }
NO_CUDA(cuda_event_dependencies_become_wait_ids)
NO_CUDA(cuda_deps_table_is_bounded)
NO_CUDA(cuda_nvtx_calls_become_ranges_and_markers)
NO_CUDA(cuda_nvtx_attributes_become_marker_data)
NO_CUDA(cuda_api_names_and_demangling)
NO_CUDA(cuda_callbacks_reach_subscribers)
NO_CUDA(cuda_sync_callbacks_name_their_call)
NO_CUDA(cuda_stream_end_reaches_resource_subscribers)
NO_CUDA(cuda_module_callbacks_become_module_records)

#endif
