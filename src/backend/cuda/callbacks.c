/*
 * callbacks.c - what the collector learns from CUPTI's callbacks rather
 * than from its activity records.
 *
 *   - Runtime and driver API calls that launch work, record events, wait
 *     for events or synchronize feed the dependency bookkeeping (deps.c)
 *     with the program's own stream and event handles, and kernel
 *     launches reach the range profiler (profiler.c). A table maps each
 *     such cbid to what it does and where its stream and event parameters
 *     sit (offsetof on the toolkit's generated *_params structs, so a
 *     layout change is a compile error, not a silent misread).
 *   - Resource callbacks register contexts as they are created, so every
 *     record that names one finds it known, and forget streams as they go.
 *   - NVTX callbacks become our markers and ranges (markers.h): that both
 *     writes MARKER records with the thread's nesting depth and keeps the
 *     thread's range stack that the counter filters read at each launch.
 *
 * A runtime call runs driver calls inside it; those are not launches of
 * their own. While a runtime call is in progress on a thread, a nested
 * driver call that launches or synchronizes only gives its correlation id
 * as an alias of the runtime call's, because CUPTI's records of the work
 * may carry either.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtSync.h>

/* cupti.h (through cudaInt.h) brings the runtime and driver *_params
 * structs; the NVTX ones need the NVTX types first. */
#include "cudaInt.h"

#include <generated_nvtx_meta.h>

enum {
  OP_NONE = 0,
  OP_KERNEL,       /* launches a kernel on a stream */
  OP_WORK,         /* launches other work (copy, fill, graph) on a stream */
  OP_EVENT_RECORD, /* records an event on a stream */
  OP_STREAM_WAIT,  /* makes a stream wait for an event */
  OP_EVENT_SYNC,   /* host waits for an event */
  OP_STREAM_SYNC,  /* host waits for a stream */
  OP_CTX_SYNC,     /* host waits for everything */
  OP_STREAM_DESTROY,
  OP_EVENT_DESTROY
};

/* Where a call's stream is: at `off` in its params, or (indirect) in the
 * launch config struct a pointer at `off` points to, at `inner`. */
typedef struct api_op {
  uint16_t cbid;
  uint8_t op;
  uint8_t ptsz;   /* per-thread default stream variant */
  int16_t stream; /* offset, -1: none (the legacy default stream) */
  int16_t event;  /* offset, -1: none */
  int16_t inner;  /* offset in the config struct, -1: direct */
} api_op;

/* The launch stub nvcc 13 generates for <<<...>>> calls
 * __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t,
 * cudaStream_t) (crt/device_functions.h); the toolkit ships no params
 * struct for it, so here is one with that signature's layout. */
typedef struct launch13_params {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void **args;
  size_t sharedMem;
  cudaStream_t stream;
} launch13_params;

#define RT_ID(n) CUPTI_RUNTIME_TRACE_CBID_##n
#define DR_ID(n) CUPTI_DRIVER_TRACE_CBID_##n
#define OFF(type, field) ((int16_t)offsetof(type, field))

/* Runtime: NAME_params has `stream` and/or `event`. */
#define RT_S(n, op, pt)                                                        \
  { RT_ID(n), op, pt, OFF(n##_params, stream), -1, -1 }
#define RT_SE(n, op, pt)                                                       \
  { RT_ID(n), op, pt, OFF(n##_params, stream), OFF(n##_params, event), -1 }
#define RT_E(n, op)                                                            \
  { RT_ID(n), op, 0, -1, OFF(n##_params, event), -1 }
#define RT_0(n, op, pt)                                                        \
  { RT_ID(n), op, pt, -1, -1, -1 }

static const api_op runtime_ops[] = {
    {RT_ID(__cudaLaunchKernel_v13000), OP_KERNEL, 0,
     OFF(launch13_params, stream), -1, -1},
    {RT_ID(__cudaLaunchKernel_ptsz_v13000), OP_KERNEL, 1,
     OFF(launch13_params, stream), -1, -1},
    RT_S(cudaLaunchKernel_v7000, OP_KERNEL, 0),
    RT_S(cudaLaunchKernel_ptsz_v7000, OP_KERNEL, 1),
    {RT_ID(cudaLaunchKernelExC_v11060), OP_KERNEL, 0,
     OFF(cudaLaunchKernelExC_v11060_params, config), -1,
     OFF(cudaLaunchConfig_t, stream)},
    {RT_ID(cudaLaunchKernelExC_ptsz_v11060), OP_KERNEL, 1,
     OFF(cudaLaunchKernelExC_ptsz_v11060_params, config), -1,
     OFF(cudaLaunchConfig_t, stream)},
    RT_S(cudaLaunchCooperativeKernel_v9000, OP_KERNEL, 0),
    RT_S(cudaLaunchCooperativeKernel_ptsz_v9000, OP_KERNEL, 1),
    RT_S(cudaGraphLaunch_v10000, OP_WORK, 0),
    RT_S(cudaGraphLaunch_ptsz_v10000, OP_WORK, 1),
    RT_S(cudaMemcpyAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemcpyAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemcpy2DAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemcpy2DAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemcpy3DAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemcpy3DAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemcpyPeerAsync_v4000, OP_WORK, 0),
    RT_S(cudaMemcpyToSymbolAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemcpyToSymbolAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemcpyFromSymbolAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemcpyFromSymbolAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemsetAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemsetAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemset2DAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemset2DAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemset3DAsync_v3020, OP_WORK, 0),
    RT_S(cudaMemset3DAsync_ptsz_v7000, OP_WORK, 1),
    RT_S(cudaMemcpyBatchAsync_v13000, OP_WORK, 0),
    RT_S(cudaMemcpyBatchAsync_ptsz_v13000, OP_WORK, 1),
    /* Synchronous copies and fills run on the default stream. */
    RT_0(cudaMemcpy_v3020, OP_WORK, 0),
    RT_0(cudaMemcpy_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemcpy2D_v3020, OP_WORK, 0),
    RT_0(cudaMemcpy2D_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemcpy3D_v3020, OP_WORK, 0),
    RT_0(cudaMemcpy3D_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemcpyPeer_v4000, OP_WORK, 0),
    RT_0(cudaMemcpyToSymbol_v3020, OP_WORK, 0),
    RT_0(cudaMemcpyToSymbol_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemcpyFromSymbol_v3020, OP_WORK, 0),
    RT_0(cudaMemcpyFromSymbol_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemset_v3020, OP_WORK, 0),
    RT_0(cudaMemset_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemset2D_v3020, OP_WORK, 0),
    RT_0(cudaMemset2D_ptds_v7000, OP_WORK, 1),
    RT_0(cudaMemset3D_v3020, OP_WORK, 0),
    RT_0(cudaMemset3D_ptds_v7000, OP_WORK, 1),
    RT_SE(cudaEventRecord_v3020, OP_EVENT_RECORD, 0),
    RT_SE(cudaEventRecord_ptsz_v7000, OP_EVENT_RECORD, 1),
    RT_SE(cudaEventRecordWithFlags_v11010, OP_EVENT_RECORD, 0),
    RT_SE(cudaEventRecordWithFlags_ptsz_v11010, OP_EVENT_RECORD, 1),
    RT_SE(cudaStreamWaitEvent_v3020, OP_STREAM_WAIT, 0),
    RT_SE(cudaStreamWaitEvent_ptsz_v7000, OP_STREAM_WAIT, 1),
    RT_E(cudaEventSynchronize_v3020, OP_EVENT_SYNC),
    RT_S(cudaStreamSynchronize_v3020, OP_STREAM_SYNC, 0),
    RT_S(cudaStreamSynchronize_ptsz_v7000, OP_STREAM_SYNC, 1),
    RT_0(cudaDeviceSynchronize_v3020, OP_CTX_SYNC, 0),
    RT_0(cudaThreadSynchronize_v3020, OP_CTX_SYNC, 0),
    RT_S(cudaStreamDestroy_v5050, OP_STREAM_DESTROY, 0),
    RT_E(cudaEventDestroy_v3020, OP_EVENT_DESTROY),
};

/* Driver: NAME_params has `hStream` and/or `hEvent`. */
#define DR_S(n, op, pt)                                                        \
  { DR_ID(n), op, pt, OFF(n##_params, hStream), -1, -1 }
#define DR_SE(n, op, pt)                                                       \
  { DR_ID(n), op, pt, OFF(n##_params, hStream), OFF(n##_params, hEvent), -1 }
#define DR_E(n, op)                                                            \
  { DR_ID(n), op, 0, -1, OFF(n##_params, hEvent), -1 }
#define DR_0(n, op)                                                            \
  { DR_ID(n), op, 0, -1, -1, -1 }

static const api_op driver_ops[] = {
    DR_S(cuLaunchKernel, OP_KERNEL, 0),
    DR_S(cuLaunchKernel_ptsz, OP_KERNEL, 1),
    {DR_ID(cuLaunchKernelEx), OP_KERNEL, 0,
     OFF(cuLaunchKernelEx_params, config), -1, OFF(CUlaunchConfig, hStream)},
    {DR_ID(cuLaunchKernelEx_ptsz), OP_KERNEL, 1,
     OFF(cuLaunchKernelEx_ptsz_params, config), -1,
     OFF(CUlaunchConfig, hStream)},
    DR_S(cuLaunchCooperativeKernel, OP_KERNEL, 0),
    DR_S(cuLaunchCooperativeKernel_ptsz, OP_KERNEL, 1),
    DR_S(cuGraphLaunch, OP_WORK, 0),
    DR_S(cuGraphLaunch_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyAsync, OP_WORK, 0),
    DR_S(cuMemcpyAsync_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyHtoDAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpyHtoDAsync_v2_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyDtoHAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpyDtoHAsync_v2_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyDtoDAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpyDtoDAsync_v2_ptsz, OP_WORK, 1),
    DR_S(cuMemcpy2DAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpy2DAsync_v2_ptsz, OP_WORK, 1),
    DR_S(cuMemcpy3DAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpy3DAsync_v2_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyPeerAsync, OP_WORK, 0),
    DR_S(cuMemcpyPeerAsync_ptsz, OP_WORK, 1),
    DR_S(cuMemsetD8Async, OP_WORK, 0),
    DR_S(cuMemsetD8Async_ptsz, OP_WORK, 1),
    DR_S(cuMemsetD16Async, OP_WORK, 0),
    DR_S(cuMemsetD16Async_ptsz, OP_WORK, 1),
    DR_S(cuMemsetD32Async, OP_WORK, 0),
    DR_S(cuMemsetD32Async_ptsz, OP_WORK, 1),
    DR_S(cuMemcpyBatchAsync_v2, OP_WORK, 0),
    DR_S(cuMemcpyBatchAsync_v2_ptsz, OP_WORK, 1),
    DR_SE(cuEventRecord, OP_EVENT_RECORD, 0),
    DR_SE(cuEventRecord_ptsz, OP_EVENT_RECORD, 1),
    DR_SE(cuEventRecordWithFlags, OP_EVENT_RECORD, 0),
    DR_SE(cuEventRecordWithFlags_ptsz, OP_EVENT_RECORD, 1),
    DR_SE(cuStreamWaitEvent, OP_STREAM_WAIT, 0),
    DR_SE(cuStreamWaitEvent_ptsz, OP_STREAM_WAIT, 1),
    DR_E(cuEventSynchronize, OP_EVENT_SYNC),
    DR_S(cuStreamSynchronize, OP_STREAM_SYNC, 0),
    DR_S(cuStreamSynchronize_ptsz, OP_STREAM_SYNC, 1),
    DR_0(cuCtxSynchronize, OP_CTX_SYNC),
    DR_0(cuCtxSynchronize_v2, OP_CTX_SYNC),
    DR_S(cuStreamDestroy_v2, OP_STREAM_DESTROY, 0),
    DR_E(cuEventDestroy_v2, OP_EVENT_DESTROY),
};

/* cbid -> index + 1 into the tables above. */
static uint8_t runtime_index[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t driver_index[CUPTI_DRIVER_TRACE_CBID_SIZE];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static void build_index(void) {
  for (size_t i = 0; i < GP_ARRAY_SIZE(runtime_ops); i++)
    runtime_index[runtime_ops[i].cbid] = (uint8_t)(i + 1);
  for (size_t i = 0; i < GP_ARRAY_SIZE(driver_ops); i++)
    driver_index[driver_ops[i].cbid] = (uint8_t)(i + 1);
}

/* Fails the build if a table outgrows its uint8 index. */
_Static_assert(GP_ARRAY_SIZE(runtime_ops) < 255, "runtime_ops too large");
_Static_assert(GP_ARRAY_SIZE(driver_ops) < 255, "driver_ops too large");

static const api_op *find_op(CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid) {
  pthread_once(&index_once, build_index);
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && runtime_index[cbid])
      return &runtime_ops[runtime_index[cbid] - 1];
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && driver_index[cbid])
      return &driver_ops[driver_index[cbid] - 1];
  }
  return NULL;
}

static const void *read_ptr(const void *base, int16_t off) {
  const void *p;
  memcpy(&p, (const uint8_t *)base + off, sizeof(p));
  return p;
}

/* The stream handle a call names, with the special handles made one:
 * CU_STREAM_LEGACY is the NULL stream, and NULL in a per-thread variant
 * is the thread's own default stream. */
static const void *op_stream(const api_op *op, const void *params) {
  const void *s = NULL;
  if (op->stream >= 0 && params) {
    s = read_ptr(params, op->stream);
    if (op->inner >= 0)
      s = s ? read_ptr(s, op->inner) : NULL;
  }
  if (s == (const void *)CU_STREAM_LEGACY)
    s = NULL;
  if (s == NULL && op->ptsz)
    s = (const void *)CU_STREAM_PER_THREAD;
  return s;
}

static const void *op_event(const api_op *op, const void *params) {
  return op->event >= 0 && params ? read_ptr(params, op->event) : NULL;
}

/* ------------------------------------------------------------------ */
/* API calls                                                            */

static GP_TLS uint32_t runtime_corr; /* runtime call in progress, or 0 */
static GP_TLS uint32_t runtime_depth;
/* The outermost call in progress on this thread, of either API (the
 * program's own call), or 0: a synchronisation's call. */
static GP_TLS uint32_t outer_corr;
static GP_TLS uint32_t outer_depth;

static void apply(const api_op *op, const CUpti_CallbackData *cb) {
  const void *params = cb->functionParams;
  uint32_t corr = cb->correlationId;
  switch (op->op) {
  case OP_KERNEL:
  case OP_WORK:
    gp__cuda_deps_launch(op_stream(op, params), corr);
    break;
  case OP_EVENT_RECORD:
    gp__cuda_deps_event_record(op_event(op, params), op_stream(op, params));
    break;
  case OP_STREAM_WAIT:
    gp__cuda_deps_stream_wait(op_stream(op, params), op_event(op, params));
    gp__cuda_deps_sync(corr, GP_SYNC_STREAM_WAIT_EVENT, op_event(op, params));
    break;
  case OP_EVENT_SYNC:
    gp__cuda_deps_sync(corr, GP_SYNC_EVENT_SYNCHRONIZE, op_event(op, params));
    break;
  case OP_STREAM_SYNC:
    gp__cuda_deps_sync(corr, GP_SYNC_STREAM_SYNCHRONIZE, op_stream(op, params));
    break;
  case OP_CTX_SYNC:
    gp__cuda_deps_sync(corr, GP_SYNC_CONTEXT_SYNCHRONIZE, NULL);
    break;
  case OP_STREAM_DESTROY:
    gp__cuda_deps_forget(op_stream(op, params));
    break;
  case OP_EVENT_DESTROY:
    gp__cuda_deps_forget(op_event(op, params));
    break;
  default:
    break;
  }
}

/* Our subscribers' API callbacks (gpuperf/callback.h), from CUPTI's: the
 * calls in progress on this thread (a driver call nests in a runtime
 * call), each with its data from entry to exit, in a block of the
 * thread's own on the heap (this library is dlopen'ed: its thread-local
 * data must stay small), freed when the thread ends. Deeper calls are
 * not forwarded. */
#define FWD_DEPTH 8
typedef struct fwd_stack {
  uint32_t depth, skipped;
  gp__cb_api_call calls[FWD_DEPTH];
} fwd_stack;
static __thread fwd_stack *fwd;
static pthread_key_t fwd_key;
static pthread_once_t fwd_once = PTHREAD_ONCE_INIT;

static void fwd_key_make(void) {
  pthread_key_create(&fwd_key, free);
}

static fwd_stack *fwd_get(void) {
  if (GP_LIKELY(fwd != NULL))
    return fwd;
  pthread_once(&fwd_once, fwd_key_make);
  fwd = calloc(1, sizeof(*fwd));
  if (fwd)
    pthread_setspecific(fwd_key, fwd);
  return fwd;
}

/* Our context id of CUDA context c (registered on first sight), and its
 * CUPTI device in *dev; 0 where CUPTI cannot say which it is. */
static uint32_t our_context(CUcontext c, uint32_t *dev) {
  uint32_t cctx = 0;
  *dev = 0;
  if (!c || cuptiGetContextId(c, &cctx) != CUPTI_SUCCESS ||
      cuptiGetDeviceId(c, dev) != CUPTI_SUCCESS)
    return 0;
  return gp__cuda_context(cctx, *dev, 0);
}

/* Our context id (and the stream's CUPTI id) of the call cb, 0 unknown. */
static void fwd_where(const CUpti_CallbackData *cb, const api_op *op,
                      uint32_t *ctx, uint32_t *stream) {
  uint32_t cdev;
  *stream = 0;
  *ctx = our_context(cb->context, &cdev);
  if (!cb->context)
    return;
  const void *st = op ? op_stream(op, cb->functionParams) : NULL;
  uint32_t sid = 0;
  if (st && cuptiGetStreamId(cb->context, (CUstream)(uintptr_t)st, &sid) ==
                CUPTI_SUCCESS)
    *stream = sid;
}

static void forward(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                    const CUpti_CallbackData *cb, const api_op *op) {
  uint32_t api = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                     ? GP_API_DOMAIN_CUDA_RUNTIME
                     : GP_API_DOMAIN_CUDA_DRIVER;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (!(atomic_load_explicit(GP_CORE->callback_mask, memory_order_relaxed) &
          GP__CB_API_BIT(api)))
      return;
    fwd_stack *f = fwd_get();
    if (!f)
      return;
    if (f->depth == FWD_DEPTH) {
      f->skipped++;
      return;
    }
    gp__cb_api_call *c = &f->calls[f->depth++];
    uint32_t ctx, stream;
    fwd_where(cb, op, &ctx, &stream);
    c->d = (gp_callback_api_data){.api_domain = api,
                                  .cbid = cbid,
                                  .function_name =
                                      cb->functionName ? cb->functionName : "",
                                  .correlation_id = cb->correlationId,
                                  .context_id = ctx,
                                  .stream_id = stream,
                                  .thread_id = GP_CORE->tid()};
    GP_CORE->callback_api(c, GP_CALLBACK_SITE_ENTER, 0);
    return;
  }
  /* The exit of the innermost call entered (if it was). */
  fwd_stack *f = fwd;
  if (!f)
    return;
  if (f->skipped) {
    f->skipped--;
    return;
  }
  if (!f->depth || f->calls[f->depth - 1].d.correlation_id != cb->correlationId)
    return; /* entered before a subscriber wanted it */
  gp__cb_api_call *c = &f->calls[--f->depth];
  int32_t rc = 0;
  if (cb->functionReturnValue)
    memcpy(&rc, cb->functionReturnValue, sizeof(rc));
  GP_CORE->callback_api(c, GP_CALLBACK_SITE_EXIT, rc);
}

static void api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData *cb) {
  forward(domain, cbid, cb, find_op(domain, cbid));
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  bool enter = cb->callbackSite == CUPTI_API_ENTER;
  if (enter) {
    if (outer_depth++ == 0)
      outer_corr = cb->correlationId;
  } else if (outer_depth > 0 && --outer_depth == 0) {
    outer_corr = 0;
  }
  /* Track the runtime call in progress on this thread, whatever it is. */
  if (runtime) {
    if (enter) {
      if (runtime_depth++ == 0)
        runtime_corr = cb->correlationId;
    } else if (runtime_depth > 0 && --runtime_depth == 0) {
      runtime_corr = 0;
    }
  }
  const api_op *op = find_op(domain, cbid);
  if (!op)
    return;
  bool nested = !runtime && runtime_corr != 0;
  /* The launch the program made is bracketed once, at its own level. */
  if (op->op == OP_KERNEL && !nested)
    gp__cuda_profiler_launch(cb->context, cb->symbolName, cb->correlationId,
                             enter);
  if (!enter)
    return;
  if (nested) {
    /* Inside a runtime call: the same work, another correlation id. */
    gp__cuda_deps_alias(runtime_corr, cb->correlationId);
    return;
  }
  apply(op, cb);
}

/* CUPTI's synchronisation callbacks, made after the wait inside the call
 * that waited: our subscribers' SYNCHRONIZE callbacks, with the
 * correlation id of the program's call (the outermost in progress; 0 if
 * CUPTI made one outside any call). */
static void sync_callback(CUpti_CallbackId cbid,
                          const CUpti_SynchronizeData *sd) {
  if (!(atomic_load_explicit(GP_CORE->callback_mask, memory_order_relaxed) &
        GP__CB_BIT(GP_CALLBACK_DOMAIN_SYNCHRONIZE)))
    return;
  uint32_t id;
  if (cbid == CUPTI_CBID_SYNCHRONIZE_STREAM_SYNCHRONIZED)
    id = GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED;
  else if (cbid == CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED)
    id = GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED;
  else
    return;
  uint32_t dev, sid = 0;
  gp_callback_sync_data d = {our_context(sd->context, &dev), 0, outer_corr};
  if (id == GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED && sd->context &&
      cuptiGetStreamId(sd->context, sd->stream, &sid) == CUPTI_SUCCESS)
    d.stream_id = sid;
  GP_CORE->callback(GP_CALLBACK_DOMAIN_SYNCHRONIZE, id, &d);
}

/* ------------------------------------------------------------------ */
/* Resources                                                            */

/* A module loaded into a context, or about to be unloaded: a MODULE
 * record, as CUPTI's resource callback describes it (CUPTI defines the
 * activity record but never writes one). The context is ours where CUPTI
 * can say which it is. */
static void module_event(const CUpti_ResourceData *rd, bool unload) {
  const CUpti_ModuleResourceData *m = rd->resourceDescriptor;
  if (!m || !GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MODULE, 0))
    return;
  uint32_t dev, ours = our_context(rd->context, &dev);
  gp_activity_module *r =
      GP_CORE->activity_reserve(GP_ACTIVITY_KIND_MODULE, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = gp_get_timestamp();
  r->size_bytes = m->cubinSize;
  r->context_id = ours;
  r->module_id = m->moduleId;
  r->flags = unload ? GP_ACTIVITY_FLAG_MODULE_UNLOAD : 0;
  r->name_id = 0; /* CUDA modules have no name */
  GP_CORE->activity_commit(r);
}

static void resource_callback(CUpti_CallbackId cbid,
                              const CUpti_ResourceData *rd) {
  switch (cbid) {
  case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: {
    uint32_t ctx_id = 0, dev = 0;
    if (cuptiGetContextId(rd->context, &ctx_id) != CUPTI_SUCCESS ||
        cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS)
      return;
    gp__cuda_describe_device(dev);
    uint32_t ours = gp__cuda_context(ctx_id, dev, 0);
    if (ours) { /* for gp_activity_get_*_id and the auto boost query */
      GP_CORE->handle_put(GP_API_CUDA, GP__HANDLE_CONTEXT, rd->context, NULL,
                          gp__cuda_device(dev), ours, 0);
      gp__cuda_boost_context(ours, gp__cuda_device(dev), rd->context);
    }
    gp__cuda_profiler_context(rd->context, true);
    break;
  }
  case CUPTI_CBID_RESOURCE_STREAM_CREATED: {
    uint32_t dev, sid = 0, ours = 0;
    if (cuptiGetStreamId(rd->context, rd->resourceHandle.stream, &sid) !=
            CUPTI_SUCCESS ||
        !(ours = our_context(rd->context, &dev)))
      break;
    GP_CORE->handle_put(GP_API_CUDA, GP__HANDLE_STREAM,
                        rd->resourceHandle.stream, NULL, gp__cuda_device(dev),
                        ours, sid);
    gp__backend_callback_resource(GP_CORE, GP_CALLBACK_RESOURCE_STREAM_CREATED,
                                  GP_API_CUDA, gp__cuda_device(dev), ours, sid);
    break;
  }
  case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING: {
    GP_CORE->handle_drop(GP_API_CUDA, GP__HANDLE_CONTEXT, rd->context, NULL);
    gp__cuda_profiler_context(rd->context, false);
    uint32_t ctx_id = 0, dev;
    gp__cuda_boost_context(our_context(rd->context, &dev), 0, NULL);
    if (cuptiGetContextId(rd->context, &ctx_id) == CUPTI_SUCCESS)
      gp__cuda_context_gone(ctx_id);
    break;
  }
  case CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING: {
    /* Its ids as noted when it was made (the lookups of
     * gp_activity_get_*_id), for the subscribers; then forgotten. */
    uint32_t sid = 0, ctx = 0, dev = 0;
    if (gp_activity_get_stream_id(GP_API_CUDA, rd->context,
                                  rd->resourceHandle.stream, &sid) == 0 &&
        gp_activity_get_context_id(GP_API_CUDA, rd->context, NULL, &ctx) == 0 &&
        gp_activity_get_device_id(GP_API_CUDA, rd->context, NULL, &dev) == 0)
      gp__backend_callback_resource(
          GP_CORE, GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING, GP_API_CUDA,
          dev, ctx, sid);
    GP_CORE->handle_drop(GP_API_CUDA, GP__HANDLE_STREAM,
                         rd->resourceHandle.stream, NULL);
    gp__cuda_deps_forget(rd->resourceHandle.stream);
    break;
  }
  case CUPTI_CBID_RESOURCE_MODULE_LOADED:
  case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
    module_event(rd, cbid == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
    break;
  default:
    break;
  }
}

/* ------------------------------------------------------------------ */
/* NVTX                                                                 */

/* NVTX handles (domains, registered strings) and range ids are the
 * program's: we map them to names and to our range ids. */
typedef struct handle_name {
  uintptr_t handle;
  uint64_t value; /* string id, or our range id */
} handle_name;

typedef struct handle_list {
  handle_name *v;
  size_t n, cap;
} handle_list;

static pthread_mutex_t nvtx_lock = PTHREAD_MUTEX_INITIALIZER;
static handle_list domains, strings, ranges;

static void list_put(handle_list *l, uintptr_t h, uint64_t value) {
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].handle == h) {
      l->v[i].value = value;
      return;
    }
  }
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 16;
    handle_name *nv = realloc(l->v, ncap * sizeof(*nv));
    if (!nv)
      return;
    l->v = nv;
    l->cap = ncap;
  }
  l->v[l->n++] = (handle_name){h, value};
}

/* Returns the value for h (0 if unknown); removes it if take is set. */
static uint64_t list_get(handle_list *l, uintptr_t h, bool take) {
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].handle == h) {
      uint64_t v = l->v[i].value;
      if (take)
        l->v[i] = l->v[--l->n];
      return v;
    }
  }
  return 0;
}

static const char *domain_name(nvtxDomainHandle_t d) {
  if (!d)
    return NULL;
  pthread_mutex_lock(&nvtx_lock);
  uint32_t id = (uint32_t)list_get(&domains, (uintptr_t)d, false);
  pthread_mutex_unlock(&nvtx_lock);
  return id ? gp_activity_string(id) : NULL;
}

/* The message of an event attributes struct, or NULL. wide is scratch
 * space for a converted wide string. */
static const char *attr_message(const nvtxEventAttributes_t *a, char *wide,
                                size_t wide_size) {
  if (!a)
    return NULL;
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return a->message.ascii;
  case NVTX_MESSAGE_TYPE_UNICODE:
    if (a->message.unicode &&
        wcstombs(wide, a->message.unicode, wide_size) != (size_t)-1) {
      wide[wide_size - 1] = '\0';
      return wide;
    }
    return NULL;
  case NVTX_MESSAGE_TYPE_REGISTERED: {
    pthread_mutex_lock(&nvtx_lock);
    uint32_t id =
        (uint32_t)list_get(&strings, (uintptr_t)a->message.registered, false);
    pthread_mutex_unlock(&nvtx_lock);
    return id ? gp_activity_string(id) : NULL;
  }
  default:
    return NULL;
  }
}

/* NVTX's colour, category and payload as a marker's attributes (into
 * *out); NULL where the event has none of them. Payloads of 32 bits and
 * floats widen to the 64-bit kinds. */
static const gp_marker_attrs *attrs_of(const nvtxEventAttributes_t *a,
                                       gp_marker_attrs *out) {
  if (!a)
    return NULL;
  memset(out, 0, sizeof(*out));
  if (a->colorType == NVTX_COLOR_ARGB) {
    out->flags |= GP_MARKER_ATTR_COLOR;
    out->color = a->color;
  }
  if (a->category) {
    out->flags |= GP_MARKER_ATTR_CATEGORY;
    out->category = a->category;
  }
  switch (a->payloadType) {
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
    out->payload_kind = GP_MARKER_PAYLOAD_UINT64;
    out->payload.u64 = a->payload.ullValue;
    break;
  case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
    out->payload_kind = GP_MARKER_PAYLOAD_UINT64;
    out->payload.u64 = a->payload.uiValue;
    break;
  case NVTX_PAYLOAD_TYPE_INT64:
    out->payload_kind = GP_MARKER_PAYLOAD_INT64;
    out->payload.i64 = a->payload.llValue;
    break;
  case NVTX_PAYLOAD_TYPE_INT32:
    out->payload_kind = GP_MARKER_PAYLOAD_INT64;
    out->payload.i64 = a->payload.iValue;
    break;
  case NVTX_PAYLOAD_TYPE_DOUBLE:
    out->payload_kind = GP_MARKER_PAYLOAD_DOUBLE;
    out->payload.f64 = a->payload.dValue;
    break;
  case NVTX_PAYLOAD_TYPE_FLOAT:
    out->payload_kind = GP_MARKER_PAYLOAD_DOUBLE;
    out->payload.f64 = a->payload.fValue;
    break;
  default:
    break;
  }
  return out->flags || out->payload_kind ? out : NULL;
}

static void range_start(const char *domain, const char *msg,
                        const gp_marker_attrs *attrs, const void *ret) {
  uint64_t ours = 0;
  if (gp_range_start_ex(domain, msg ? msg : "", attrs, &ours) != 0 || !ret)
    return;
  nvtxRangeId_t id;
  memcpy(&id, ret, sizeof(id));
  pthread_mutex_lock(&nvtx_lock);
  list_put(&ranges, (uintptr_t)id, ours);
  pthread_mutex_unlock(&nvtx_lock);
}

static void range_end(nvtxRangeId_t id) {
  pthread_mutex_lock(&nvtx_lock);
  uint64_t ours = list_get(&ranges, (uintptr_t)id, true);
  pthread_mutex_unlock(&nvtx_lock);
  if (ours)
    gp_range_end(ours);
}

static void nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d) {
  const void *p = d->functionParams;
  const void *ret = d->functionReturnValue;
  char wide[256];
  gp_marker_attrs at;
  if (!p)
    return;
  switch (cbid) {
  case CUPTI_CBID_NVTX_nvtxMarkA:
    gp_marker_instant(NULL, ((const nvtxMarkA_params *)p)->message);
    break;
  case CUPTI_CBID_NVTX_nvtxMarkEx: {
    const nvtxEventAttributes_t *e =
        ((const nvtxMarkEx_params *)p)->eventAttrib;
    const char *m = attr_message(e, wide, sizeof(wide));
    gp_marker_instant_ex(NULL, m ? m : "", attrs_of(e, &at));
    break;
  }
  case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
    const nvtxDomainMarkEx_params *q = p;
    const char *m = attr_message(q->core.eventAttrib, wide, sizeof(wide));
    gp_marker_instant_ex(domain_name(q->domain), m ? m : "",
                         attrs_of(q->core.eventAttrib, &at));
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangePushA: {
    const char *m = ((const nvtxRangePushA_params *)p)->message;
    gp_range_push(NULL, m ? m : "");
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangePushEx: {
    const nvtxEventAttributes_t *e =
        ((const nvtxRangePushEx_params *)p)->eventAttrib;
    const char *m = attr_message(e, wide, sizeof(wide));
    gp_range_push_ex(NULL, m ? m : "", attrs_of(e, &at));
    break;
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
    const nvtxDomainRangePushEx_params *q = p;
    const char *m = attr_message(q->core.eventAttrib, wide, sizeof(wide));
    gp_range_push_ex(domain_name(q->domain), m ? m : "",
                     attrs_of(q->core.eventAttrib, &at));
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangePop:
  case CUPTI_CBID_NVTX_nvtxDomainRangePop:
    gp_range_pop();
    break;
  case CUPTI_CBID_NVTX_nvtxRangeStartA:
    range_start(NULL, ((const nvtxRangeStartA_params *)p)->message, NULL, ret);
    break;
  case CUPTI_CBID_NVTX_nvtxRangeStartEx: {
    const nvtxEventAttributes_t *e =
        ((const nvtxRangeStartEx_params *)p)->eventAttrib;
    range_start(NULL, attr_message(e, wide, sizeof(wide)), attrs_of(e, &at),
                ret);
    break;
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
    const nvtxDomainRangeStartEx_params *q = p;
    range_start(domain_name(q->domain),
                attr_message(q->core.eventAttrib, wide, sizeof(wide)),
                attrs_of(q->core.eventAttrib, &at), ret);
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangeEnd:
    range_end(((const nvtxRangeEnd_params *)p)->id);
    break;
  case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
    range_end(((const nvtxDomainRangeEnd_params *)p)->core.id);
    break;
  case CUPTI_CBID_NVTX_nvtxDomainCreateA:
    if (ret) {
      nvtxDomainHandle_t h;
      memcpy(&h, ret, sizeof(h));
      uint32_t id =
          GP_CORE->string_intern(((const nvtxDomainCreateA_params *)p)->name);
      pthread_mutex_lock(&nvtx_lock);
      list_put(&domains, (uintptr_t)h, id);
      pthread_mutex_unlock(&nvtx_lock);
    }
    break;
  case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
    if (ret) {
      nvtxStringHandle_t h;
      memcpy(&h, ret, sizeof(h));
      uint32_t id = GP_CORE->string_intern(
          ((const nvtxDomainRegisterStringA_params *)p)->string);
      pthread_mutex_lock(&nvtx_lock);
      list_put(&strings, (uintptr_t)h, id);
      pthread_mutex_unlock(&nvtx_lock);
    }
    break;
  default:
    break;
  }
}

/* ------------------------------------------------------------------ */

/* See cudaInt.h. */
void CUPTIAPI gp__cuda_callback(void *userdata, CUpti_CallbackDomain domain,
                                CUpti_CallbackId cbid, const void *cbdata) {
  (void)userdata;
  if (!cbdata)
    return;
  switch (domain) {
  case CUPTI_CB_DOMAIN_RUNTIME_API:
  case CUPTI_CB_DOMAIN_DRIVER_API:
    api_callback(domain, cbid, cbdata);
    break;
  case CUPTI_CB_DOMAIN_RESOURCE:
    resource_callback(cbid, cbdata);
    break;
  case CUPTI_CB_DOMAIN_NVTX:
    nvtx_callback(cbid, cbdata);
    break;
  case CUPTI_CB_DOMAIN_SYNCHRONIZE:
    sync_callback(cbid, cbdata);
    break;
  default:
    break;
  }
}

/* See cudaInt.h. */
void gp__cuda_callbacks_reset(void) {
  pthread_mutex_lock(&nvtx_lock);
  free(domains.v);
  free(strings.v);
  free(ranges.v);
  memset(&domains, 0, sizeof(domains));
  memset(&strings, 0, sizeof(strings));
  memset(&ranges, 0, sizeof(ranges));
  pthread_mutex_unlock(&nvtx_lock);
}
