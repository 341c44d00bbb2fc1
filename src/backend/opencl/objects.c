/*
 * objects.c - contexts, queues and kernels: what records need to know
 * about them, and the wrappers that keep it.
 *
 * A context registers its devices (DEVICE records) and one gpuperf context
 * per device (CONTEXT records, API OPEN_CL). A queue becomes a stream, with
 * a NAME record, and gets CL_QUEUE_PROFILING_ENABLE added to the
 * properties the program gave, which nothing else changes; the program
 * still sees its own properties (clGetCommandQueueInfo) and, on queues
 * where it did not ask for profiling, clGetEventProfilingInfo still
 * answers CL_PROFILING_INFO_NOT_AVAILABLE. A kernel's name is read when it
 * is created; its __local arguments (clSetKernelArg with a size and no
 * value) give the record's dynamic shared memory.
 *
 * Objects made out of our sight (before recording started, or by an
 * extension) are looked up from the driver the first time they are used.
 * Records of these objects are never freed while a reader might hold them:
 * a new object at an old one's address reuses its record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oclInt.h"

/* Some queue had profiling added: profiling queries must be checked. */
static _Atomic bool any_forced;

/* ------------------------------------------------------------------ */
/* Contexts                                                             */

static void CL_CALLBACK context_destroyed(cl_context ctx, void *user) {
  gp__ocl_context *c = user;
  pthread_mutex_lock(&gp__ocl.objects_lock);
  if (gp__ptrmap_get(&gp__ocl.contexts, ctx) == c)
    gp__ptrmap_del(&gp__ocl.contexts, ctx);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  for (uint32_t i = 0; i < c->num_devices; i++) {
    GP_CORE->handle_drop(GP_API_OPEN_CL, GP__HANDLE_CONTEXT, ctx,
                         c->devices[i]);
    if (c->context_ids[i])
      GP_CORE->context_unregister(c->context_ids[i]);
  }
  GP_CORE->handle_drop(GP_API_OPEN_CL, GP__HANDLE_CONTEXT, ctx, NULL);
  /* c itself stays: a lock-free reader may still hold it. */
}

/* Records a context and its devices. NULL if the driver won't describe it
 * or memory runs out. */
static gp__ocl_context *context_register(cl_context ctx) {
  cl_uint n = 0;
  if (GP_CL_REAL(clGetContextInfo)(ctx, CL_CONTEXT_NUM_DEVICES, sizeof(n), &n,
                                   NULL) != CL_SUCCESS ||
      n == 0 || n > 4096)
    return NULL;
  gp__ocl_context *c = calloc(1, sizeof(*c));
  cl_device_id *devs = calloc(n, sizeof(*devs));
  uint32_t *ids = calloc(n, sizeof(*ids));
  if (!c || !devs || !ids)
    goto fail;
  if (GP_CL_REAL(clGetContextInfo)(ctx, CL_CONTEXT_DEVICES, n * sizeof(*devs),
                                   devs, NULL) != CL_SUCCESS)
    goto fail;
  c->cl = ctx;
  c->num_devices = n;
  c->devices = devs;
  c->context_ids = ids;
  bool cl30 = false;
  for (cl_uint i = 0; i < n; i++) {
    gp__ocl_device *d = gp__ocl_device_get(devs[i]);
    if (!d)
      continue;
    cl30 = cl30 || d->version >= 300;
    if (GP_CORE->context_register(d->device_id, GP_API_OPEN_CL, 0, &ids[i]) !=
        0) {
      ids[i] = 0;
      continue;
    }
    /* For gp_activity_get_*_id: by (context, device), and by the context
     * alone where it has one device. */
    GP_CORE->handle_put(GP_API_OPEN_CL, GP__HANDLE_CONTEXT, ctx, devs[i],
                        d->device_id, ids[i], 0);
    if (n == 1)
      GP_CORE->handle_put(GP_API_OPEN_CL, GP__HANDLE_CONTEXT, ctx, NULL,
                          d->device_id, ids[i], 0);
  }
  pthread_mutex_lock(&gp__ocl.objects_lock);
  int rc = gp__ptrmap_put(&gp__ocl.contexts, ctx, c, NULL);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  if (rc != 0)
    return c; /* usable for this call, looked up again next time */
  /* OpenCL 3.0: learn when the context goes, without holding it. */
  if (cl30 && GP_CL_REAL(clSetContextDestructorCallback))
    GP_CL_REAL(clSetContextDestructorCallback)(ctx, context_destroyed, c);
  return c;

fail:
  free(ids);
  free(devs);
  free(c);
  return NULL;
}

static gp__ocl_context *context_get(cl_context ctx) {
  gp__ocl_context *c = gp__ptrmap_get(&gp__ocl.contexts, ctx);
  return c ? c : context_register(ctx);
}

/* See oclInt.h. */
uint32_t gp__ocl_context_id(cl_context ctx, gp__ocl_device *dev) {
  gp__ocl_context *c = context_get(ctx);
  if (!c || !dev)
    return 0;
  for (uint32_t i = 0; i < c->num_devices; i++)
    if (c->devices[i] == dev->cl)
      return c->context_ids[i];
  return 0;
}

static cl_context context_wrap(cl_context ctx, gp__ocl_call *c,
                               cl_int *errcode_ret, cl_int err) {
  if (ctx && gp__ocl_recording())
    context_register(ctx);
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(c, err);
  return ctx;
}

/* OpenCL entry point: forwarded; registers the context and its devices. */
GP_CL_ENTRY cl_context CL_API_CALL clCreateContext(
    const cl_context_properties *properties, cl_uint num_devices,
    const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret) {
  __typeof__(&clCreateContext) real = GP_CL_REAL(clCreateContext);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateContext, false);
  cl_int err = CL_SUCCESS;
  cl_context ctx =
      real(properties, num_devices, devices, pfn_notify, user_data, &err);
  return context_wrap(ctx, &c, errcode_ret, err);
}

/* OpenCL entry point: forwarded; registers the context and its devices. */
GP_CL_ENTRY cl_context CL_API_CALL clCreateContextFromType(
    const cl_context_properties *properties, cl_device_type device_type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret) {
  __typeof__(&clCreateContextFromType) real =
      GP_CL_REAL(clCreateContextFromType);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateContextFromType, false);
  cl_int err = CL_SUCCESS;
  cl_context ctx = real(properties, device_type, pfn_notify, user_data, &err);
  return context_wrap(ctx, &c, errcode_ret, err);
}

/* ------------------------------------------------------------------ */
/* Queues                                                               */

/* Records queue q. props: its properties now; app_props: the property list
 * the program gave (copied), or NULL. */
static gp__ocl_queue *queue_register(cl_command_queue q, cl_context ctx,
                                     cl_device_id dev,
                                     cl_command_queue_properties props,
                                     bool app_profiling, bool forced,
                                     const cl_queue_properties *app_props,
                                     size_t app_props_size) {
  gp__ocl_device *d = gp__ocl_device_get(dev);
  uint32_t context_id = gp__ocl_context_id(ctx, d);
  cl_queue_properties *copy = NULL;
  if (app_props && app_props_size) {
    copy = malloc(app_props_size);
    if (copy)
      memcpy(copy, app_props, app_props_size);
  }
  pthread_mutex_lock(&gp__ocl.objects_lock);
  gp__ocl_queue *r = gp__ptrmap_get(&gp__ocl.queues, q);
  bool fresh = r == NULL;
  if (fresh && (r = calloc(1, sizeof(*r))) != NULL) {
    pthread_mutex_init(&r->reap_lock, NULL);
    pthread_mutex_init(&r->reap_serial, NULL);
  }
  if (!r) {
    pthread_mutex_unlock(&gp__ocl.objects_lock);
    free(copy);
    return NULL;
  }
  free(r->app_props);
  r->cl = q;
  r->dev = d;
  r->device_id = d ? d->device_id : 0;
  r->context_id = context_id;
  r->stream_id = atomic_fetch_add(&gp__ocl.next_stream, 1) + 1;
  r->out_of_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  r->profiling = (props & CL_QUEUE_PROFILING_ENABLE) != 0;
  r->app_profiling = app_profiling;
  r->forced = forced;
  r->app_props = copy;
  r->app_props_size = copy ? app_props_size : 0;
  r->num_recent = 0;
  r->num_frontier = 0;
  atomic_store(&r->last, 0);
  if (fresh && gp__ptrmap_put(&gp__ocl.queues, q, r, NULL) != 0) {
    pthread_mutex_unlock(&gp__ocl.objects_lock);
    free(copy);
    free(r);
    return NULL;
  }
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  GP_CORE->handle_put(GP_API_OPEN_CL, GP__HANDLE_STREAM, q, NULL, r->device_id,
                      context_id, r->stream_id);
  if (fresh)
    gp__backend_callback_resource(GP_CORE, GP_CALLBACK_RESOURCE_STREAM_CREATED,
                                  GP_API_OPEN_CL, r->device_id, context_id,
                                  r->stream_id);
  if (forced)
    atomic_store(&any_forced, true);
  char name[64];
  snprintf(name, sizeof(name), "OpenCL queue %u (%s)", r->stream_id,
           r->out_of_order ? "out-of-order" : "in-order");
  GP_CORE->emit_name(GP_OBJECT_STREAM, r->device_id, context_id, r->stream_id,
                     0, name);
  return r;
}

GP_TLS gp__ocl_last gp__ocl_last_used;

/* See oclInt.h. */
gp__ocl_queue *gp__ocl_queue_get(cl_command_queue q) {
  gp__ocl_queue *r = gp__ptrmap_get(&gp__ocl.queues, q);
  if (GP_LIKELY(r != NULL)) {
    gp__ocl_last_used.queue_cl = q;
    gp__ocl_last_used.queue = r;
    return r;
  }
  if (!q)
    return NULL;
  cl_context ctx = NULL;
  cl_device_id dev = NULL;
  cl_command_queue_properties props = 0;
  __typeof__(&clGetCommandQueueInfo) info = GP_CL_REAL(clGetCommandQueueInfo);
  if (!info ||
      info(q, CL_QUEUE_CONTEXT, sizeof(ctx), &ctx, NULL) != CL_SUCCESS ||
      info(q, CL_QUEUE_DEVICE, sizeof(dev), &dev, NULL) != CL_SUCCESS ||
      info(q, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL) != CL_SUCCESS)
    return NULL;
  return queue_register(q, ctx, dev, props,
                        (props & CL_QUEUE_PROFILING_ENABLE) != 0, false, NULL,
                        0);
}

/* Length of a 0-terminated property list in entries, terminator included;
 * 0 for NULL. */
static size_t props_len(const cl_queue_properties *p) {
  if (!p)
    return 0;
  size_t n = 0;
  while (p[n] != 0)
    n += 2;
  return n + 1;
}

/* OpenCL entry point: forwarded with CL_QUEUE_PROFILING_ENABLE added to
 * the program's properties (not on-device queues; not if the device
 * refuses it); registers the queue as a stream. */
GP_CL_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(
    cl_context context, cl_device_id device,
    const cl_queue_properties *properties, cl_int *errcode_ret) {
  __typeof__(&clCreateCommandQueueWithProperties) real =
      GP_CL_REAL(clCreateCommandQueueWithProperties);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  if (!gp__ocl_recording())
    return real(context, device, properties, errcode_ret);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateCommandQueueWithProperties, false);
  size_t n = props_len(properties);
  cl_queue_properties local[64];
  cl_queue_properties *mine = n + 2 <= 64 ? local : malloc((n + 2) * 8);
  cl_command_queue_properties flags = 0;
  bool on_device = false, forced = false;
  const cl_queue_properties *use = properties;
  if (mine) {
    size_t k = 0, at = SIZE_MAX;
    for (size_t i = 0; i + 1 < n; i += 2) {
      if (properties[i] == CL_QUEUE_PROPERTIES) {
        flags = (cl_command_queue_properties)properties[i + 1];
        at = i;
      }
      mine[k++] = properties[i];
      mine[k++] = properties[i + 1];
    }
    on_device = (flags & CL_QUEUE_ON_DEVICE) != 0;
    if (!on_device && !(flags & CL_QUEUE_PROFILING_ENABLE)) {
      forced = true;
      if (at != SIZE_MAX) {
        mine[at + 1] = flags | CL_QUEUE_PROFILING_ENABLE;
      } else {
        mine[k++] = CL_QUEUE_PROPERTIES;
        mine[k++] = CL_QUEUE_PROFILING_ENABLE;
      }
      mine[k] = 0;
      use = mine;
    }
  }
  cl_int err = CL_SUCCESS;
  cl_command_queue q = real(context, device, use, &err);
  if (q == NULL && forced && err == CL_INVALID_QUEUE_PROPERTIES) {
    /* The device refuses profiling: give the program what it asked for. */
    forced = false;
    q = real(context, device, properties, &err);
  }
  if (q)
    queue_register(q, context, device,
                   flags | (forced ? CL_QUEUE_PROFILING_ENABLE : 0),
                   (flags & CL_QUEUE_PROFILING_ENABLE) != 0, forced, properties,
                   n * sizeof(cl_queue_properties));
  if (mine != local)
    free(mine);
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(&c, err);
  return q;
}

/* OpenCL 1.x entry point: as clCreateCommandQueueWithProperties. */
GP_CL_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(
    cl_context context, cl_device_id device,
    cl_command_queue_properties properties, cl_int *errcode_ret) {
  __typeof__(&clCreateCommandQueue) real = GP_CL_REAL(clCreateCommandQueue);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  if (!gp__ocl_recording())
    return real(context, device, properties, errcode_ret);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateCommandQueue, false);
  bool forced = !(properties & CL_QUEUE_PROFILING_ENABLE);
  cl_int err = CL_SUCCESS;
  cl_command_queue q =
      real(context, device, properties | CL_QUEUE_PROFILING_ENABLE, &err);
  if (q == NULL && forced && err == CL_INVALID_QUEUE_PROPERTIES) {
    forced = false;
    q = real(context, device, properties, &err);
  }
  if (q)
    queue_register(q, context, device,
                   properties | (forced ? CL_QUEUE_PROFILING_ENABLE : 0),
                   !forced, forced, NULL, 0);
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(&c, err);
  return q;
}

/* True if the program must not see profiling on queue q. */
static bool hidden_profiling(cl_command_queue q) {
  if (!atomic_load_explicit(&any_forced, memory_order_relaxed))
    return false;
  gp__ocl_queue *r = gp__ptrmap_get(&gp__ocl.queues, q);
  return r && r->forced && !r->app_profiling;
}

/* OpenCL entry point: forwarded; properties read back as the program
 * set them, without the profiling we added. */
GP_CL_ENTRY cl_int CL_API_CALL clGetCommandQueueInfo(
    cl_command_queue command_queue, cl_command_queue_info param_name,
    size_t param_value_size, void *param_value, size_t *param_value_size_ret) {
  __typeof__(&clGetCommandQueueInfo) real = GP_CL_REAL(clGetCommandQueueInfo);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clGetCommandQueueInfo, false);
  cl_int rc;
  gp__ocl_queue *r = NULL;
  if (param_name == CL_QUEUE_PROPERTIES_ARRAY &&
      hidden_profiling(command_queue) &&
      (r = gp__ptrmap_get(&gp__ocl.queues, command_queue)) != NULL) {
    /* The list the program gave, not ours. */
    rc = real(command_queue, param_name, 0, NULL, NULL);
    if (rc == CL_SUCCESS) {
      if (param_value && param_value_size < r->app_props_size)
        rc = CL_INVALID_VALUE;
      else if (param_value)
        memcpy(param_value, r->app_props, r->app_props_size);
      if (rc == CL_SUCCESS && param_value_size_ret)
        *param_value_size_ret = r->app_props_size;
    }
  } else {
    rc = real(command_queue, param_name, param_value_size, param_value,
              param_value_size_ret);
    if (rc == CL_SUCCESS && param_name == CL_QUEUE_PROPERTIES && param_value &&
        param_value_size >= sizeof(cl_command_queue_properties) &&
        hidden_profiling(command_queue))
      *(cl_command_queue_properties *)param_value &=
          ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
  }
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* OpenCL 1.0 entry point: forwarded, except that profiling we added is
 * not turned off; old properties as the program set them. */
GP_CL_ENTRY cl_int CL_API_CALL clSetCommandQueueProperty(
    cl_command_queue command_queue, cl_command_queue_properties properties,
    cl_bool enable, cl_command_queue_properties *old_properties) {
  __typeof__(&clSetCommandQueueProperty) real =
      GP_CL_REAL(clSetCommandQueueProperty);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clSetCommandQueueProperty, false);
  gp__ocl_queue *r = gp__ptrmap_get(&gp__ocl.queues, command_queue);
  bool hide = hidden_profiling(command_queue);
  cl_command_queue_properties ask = properties;
  if (r && r->forced && !enable)
    ask &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
  cl_int rc = CL_SUCCESS;
  if (ask != 0 || properties == 0)
    rc = real(command_queue, ask, enable, old_properties);
  else if (old_properties)
    rc = GP_CL_REAL(clGetCommandQueueInfo)(command_queue, CL_QUEUE_PROPERTIES,
                                           sizeof(*old_properties),
                                           old_properties, NULL);
  if (rc == CL_SUCCESS) {
    if (old_properties && hide)
      *old_properties &=
          ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
    if (r && r->forced && (properties & CL_QUEUE_PROFILING_ENABLE))
      r->app_profiling = enable != CL_FALSE;
  }
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* OpenCL entry point: CL_PROFILING_INFO_NOT_AVAILABLE, as without us, on
 * queues whose profiling we added; else forwarded. */
GP_CL_ENTRY cl_int CL_API_CALL clGetEventProfilingInfo(
    cl_event event, cl_profiling_info param_name, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) {
  __typeof__(&clGetEventProfilingInfo) real =
      GP_CL_REAL(clGetEventProfilingInfo);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clGetEventProfilingInfo, false);
  cl_int rc;
  cl_command_queue q = NULL;
  if (atomic_load_explicit(&any_forced, memory_order_relaxed) &&
      GP_CL_REAL(clGetEventInfo)(event, CL_EVENT_COMMAND_QUEUE, sizeof(q), &q,
                                 NULL) == CL_SUCCESS &&
      hidden_profiling(q))
    rc = CL_PROFILING_INFO_NOT_AVAILABLE; /* as without us */
  else
    rc = real(event, param_name, param_value_size, param_value,
              param_value_size_ret);
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Kernels                                                              */

/* Records kernel k under name (NULL: ask the driver). */
static gp__ocl_kernel *kernel_register(cl_kernel k, const char *name,
                                       const gp__ocl_kernel *like) {
  char buf[512];
  if (!name) {
    size_t len = 0;
    buf[0] = '\0';
    if (GP_CL_REAL(clGetKernelInfo)(k, CL_KERNEL_FUNCTION_NAME, sizeof(buf) - 1,
                                    buf, &len) != CL_SUCCESS)
      buf[0] = '\0';
    buf[sizeof(buf) - 1] = '\0';
    name = buf;
  }
  uint32_t id = GP_CORE->string_intern(name[0] ? name : "[unnamed kernel]");
  pthread_mutex_lock(&gp__ocl.objects_lock);
  gp__ocl_kernel *r = gp__ptrmap_get(&gp__ocl.kernels, k);
  bool fresh = r == NULL;
  if (fresh && !(r = calloc(1, sizeof(*r)))) {
    pthread_mutex_unlock(&gp__ocl.objects_lock);
    return NULL;
  }
  r->cl = k;
  atomic_store(&r->name_id, id);
  uint64_t total = 0;
  for (int i = 0; i < GP_OCL_LOCAL_ARGS; i++) {
    uint32_t v = like ? atomic_load(&like->local_bytes[i]) : 0;
    atomic_store(&r->local_bytes[i], v);
    total += v;
  }
  atomic_store(&r->local_total, total);
  if (fresh && gp__ptrmap_put(&gp__ocl.kernels, k, r, NULL) != 0) {
    pthread_mutex_unlock(&gp__ocl.objects_lock);
    free(r);
    return NULL;
  }
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  return r;
}

/* See oclInt.h. */
gp__ocl_kernel *gp__ocl_kernel_get(cl_kernel k) {
  gp__ocl_kernel *r = gp__ptrmap_get(&gp__ocl.kernels, k);
  if (GP_UNLIKELY(r == NULL) && k)
    r = kernel_register(k, NULL, NULL);
  if (GP_LIKELY(r != NULL)) {
    gp__ocl_last_used.kernel_cl = k;
    gp__ocl_last_used.kernel = r;
  }
  return r;
}

/* OpenCL entry point: forwarded; remembers the kernel's name and writes
 * its FUNCTION records. */
GP_CL_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program program,
                                                 const char *kernel_name,
                                                 cl_int *errcode_ret) {
  __typeof__(&clCreateKernel) real = GP_CL_REAL(clCreateKernel);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  if (!gp__ocl_recording() &&
      !GP_CORE->activity_enabled(GP_ACTIVITY_KIND_FUNCTION, 0))
    return real(program, kernel_name, errcode_ret);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateKernel, false);
  cl_int err = CL_SUCCESS;
  cl_kernel k = real(program, kernel_name, &err);
  gp__ocl_kernel *r = k ? kernel_register(k, kernel_name, NULL) : NULL;
  if (r)
    gp__ocl_function_emit(program, atomic_load(&r->name_id));
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(&c, err);
  return k;
}

/* OpenCL entry point: forwarded; remembers the kernels' names and writes
 * their FUNCTION records. */
GP_CL_ENTRY cl_int CL_API_CALL
clCreateKernelsInProgram(cl_program program, cl_uint num_kernels,
                         cl_kernel *kernels, cl_uint *num_kernels_ret) {
  __typeof__(&clCreateKernelsInProgram) real =
      GP_CL_REAL(clCreateKernelsInProgram);
  if (!real)
    return CL_INVALID_OPERATION;
  if (!gp__ocl_recording() &&
      !GP_CORE->activity_enabled(GP_ACTIVITY_KIND_FUNCTION, 0))
    return real(program, num_kernels, kernels, num_kernels_ret);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateKernelsInProgram, false);
  cl_uint made = 0;
  cl_int rc = real(program, num_kernels, kernels, &made);
  if (num_kernels_ret)
    *num_kernels_ret = made;
  if (rc == CL_SUCCESS && kernels)
    for (cl_uint i = 0; i < made && i < num_kernels; i++) {
      gp__ocl_kernel *r = kernel_register(kernels[i], NULL, NULL);
      if (r)
        gp__ocl_function_emit(program, atomic_load(&r->name_id));
    }
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* OpenCL entry point: forwarded; the clone keeps the name and __local
 * arguments of its source. */
GP_CL_ENTRY cl_kernel CL_API_CALL clCloneKernel(cl_kernel source_kernel,
                                                cl_int *errcode_ret) {
  __typeof__(&clCloneKernel) real = GP_CL_REAL(clCloneKernel);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  if (!gp__ocl_recording())
    return real(source_kernel, errcode_ret);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCloneKernel, false);
  cl_int err = CL_SUCCESS;
  cl_kernel k = real(source_kernel, &err);
  if (k) {
    gp__ocl_kernel *src = gp__ocl_kernel_get(source_kernel);
    kernel_register(
        k, src ? gp_activity_string(atomic_load(&src->name_id)) : NULL, src);
  }
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(&c, err);
  return k;
}

/* OpenCL entry point: forwarded; remembers __local argument sizes. */
GP_CL_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel,
                                              cl_uint arg_index,
                                              size_t arg_size,
                                              const void *arg_value) {
  __typeof__(&clSetKernelArg) real = GP_CL_REAL(clSetKernelArg);
  if (!real)
    return CL_INVALID_OPERATION;
  if (!gp__ocl_recording())
    return real(kernel, arg_index, arg_size, arg_value);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clSetKernelArg, false);
  cl_int rc = real(kernel, arg_index, arg_size, arg_value);
  if (rc == CL_SUCCESS && arg_index < GP_OCL_LOCAL_ARGS) {
    gp__ocl_kernel *k = gp__ocl_kernel_get(kernel);
    /* A __local argument is set with its size and no value. */
    uint32_t local =
        arg_value == NULL && arg_size <= UINT32_MAX ? (uint32_t)arg_size : 0;
    if (k) {
      uint32_t was = atomic_exchange_explicit(&k->local_bytes[arg_index], local,
                                              memory_order_relaxed);
      atomic_fetch_add_explicit(&k->local_total,
                                (uint64_t)local - (uint64_t)was,
                                memory_order_relaxed);
    }
  }
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Events and waits                                                     */

/* OpenCL entry point: records a failed command before the program lets
 * go of its event; forgets the event at its last release. */
GP_CL_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event event) {
  __typeof__(&clReleaseEvent) real = GP_CL_REAL(clReleaseEvent);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clReleaseEvent, false);
  gp__ocl_event_releasing(event);
  cl_int rc = real(event);
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* OpenCL entry point: forwarded; a user event stands for no command. */
GP_CL_ENTRY cl_event CL_API_CALL clCreateUserEvent(cl_context context,
                                                   cl_int *errcode_ret) {
  __typeof__(&clCreateUserEvent) real = GP_CL_REAL(clCreateUserEvent);
  if (!real) {
    if (errcode_ret)
      *errcode_ret = CL_INVALID_OPERATION;
    return NULL;
  }
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clCreateUserEvent, false);
  cl_int err = CL_SUCCESS;
  cl_event ev = real(context, &err);
  if (ev)
    gp__ocl_event_forget(ev);
  if (errcode_ret)
    *errcode_ret = err;
  gp__ocl_call_end(&c, err);
  return ev;
}

/* OpenCL entry point: forwarded; a SYNCHRONIZATION record per event, and
 * the records of commands it saw end. */
GP_CL_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint num_events,
                                               const cl_event *event_list) {
  __typeof__(&clWaitForEvents) real = GP_CL_REAL(clWaitForEvents);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  bool sync = GP_CORE->activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, 0);
  gp__ocl_call_begin(&c, GP_CL_ID_clWaitForEvents, sync);
  cl_int rc = real(num_events, event_list);
  uint64_t end = gp_get_timestamp();
  if (rc == CL_SUCCESS || rc == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    gp__ocl_reconcile_events(num_events, event_list);
  for (cl_uint i = 0; sync && event_list && i < num_events; i++) {
    cl_command_queue q = NULL;
    gp__ocl_queue *r = NULL;
    if (GP_CL_REAL(clGetEventInfo)(event_list[i], CL_EVENT_COMMAND_QUEUE,
                                   sizeof(q), &q, NULL) == CL_SUCCESS &&
        q)
      r = gp__ocl_queue_get(q);
    gp__ocl_emit_sync(&c, end, GP_SYNC_EVENT_SYNCHRONIZE, r ? r->device_id : 0,
                      r ? r->context_id : 0, r ? r->stream_id : 0,
                      gp__ocl_event_corr(event_list[i]));
  }
  gp__ocl_call_end_at(&c, rc, end);
  return rc;
}

/* OpenCL entry point: forwarded; a SYNCHRONIZATION record, and the
 * records of the queue's commands that waited to be read, all done now. */
GP_CL_ENTRY cl_int CL_API_CALL clFinish(cl_command_queue command_queue) {
  __typeof__(&clFinish) real = GP_CL_REAL(clFinish);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  bool sync = GP_CORE->activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, 0);
  gp__ocl_call_begin(&c, GP_CL_ID_clFinish, sync);
  gp__ocl_queue *q = gp__ptrmap_get(&gp__ocl.queues, command_queue);
  if (q && !q->out_of_order)
    gp__ocl_reap_while_waiting(q);
  cl_int rc = real(command_queue);
  uint64_t end = gp_get_timestamp();
  if (q && !q->out_of_order)
    gp__ocl_reap(q); /* all done now */
  if (sync) {
    gp__ocl_queue *r = gp__ocl_queue_get(command_queue);
    if (r)
      gp__ocl_emit_sync(&c, end, GP_SYNC_STREAM_SYNCHRONIZE, r->device_id,
                        r->context_id, r->stream_id, 0);
  }
  if (GP_UNLIKELY(
          atomic_load_explicit(GP_CORE->callback_mask, memory_order_relaxed) &
          GP__CB_BIT(GP_CALLBACK_DOMAIN_SYNCHRONIZE)) &&
      rc == CL_SUCCESS) {
    gp__ocl_queue *r = gp__ocl_queue_get(command_queue);
    gp_callback_sync_data d = {r ? r->context_id : 0, r ? r->stream_id : 0,
                               c.corr};
    if (r)
      GP_CORE->callback(GP_CALLBACK_DOMAIN_SYNCHRONIZE,
                        GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED, &d);
  }
  gp__ocl_call_end_at(&c, rc, end);
  return rc;
}

/* OpenCL entry point: forwarded. The release that ends the queue (its
 * reference count 1 just before: OpenCL has no destructor callback for
 * queues) raises RESOURCE STREAM_DESTROY_STARTING with its ids, and its
 * handle's ids are forgotten. Our record of it stays: commands of it may
 * still be read. */
GP_CL_ENTRY cl_int CL_API_CALL
clReleaseCommandQueue(cl_command_queue command_queue) {
  __typeof__(&clReleaseCommandQueue) real = GP_CL_REAL(clReleaseCommandQueue);
  if (!real)
    return CL_INVALID_OPERATION;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clReleaseCommandQueue, false);
  __typeof__(&clGetCommandQueueInfo) info = GP_CL_REAL(clGetCommandQueueInfo);
  cl_uint refs = 0;
  gp__ocl_queue *r = NULL;
  if (info &&
      info(command_queue, CL_QUEUE_REFERENCE_COUNT, sizeof(refs), &refs,
           NULL) == CL_SUCCESS &&
      refs == 1)
    r = gp__ptrmap_get(&gp__ocl.queues, command_queue); /* seen: noted */
  if (r) {
    gp__backend_callback_resource(
        GP_CORE, GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING, GP_API_OPEN_CL,
        r->device_id, r->context_id, r->stream_id);
    GP_CORE->handle_drop(GP_API_OPEN_CL, GP__HANDLE_STREAM, command_queue,
                         NULL);
  }
  cl_int rc = real(command_queue);
  gp__ocl_call_end(&c, rc);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Shared virtual memory: which pointers are SVM, for copy kinds        */

/* OpenCL entry point: forwarded; remembers the allocation (copy kinds). */
GP_CL_ENTRY void *CL_API_CALL clSVMAlloc(cl_context context,
                                         cl_svm_mem_flags flags, size_t size,
                                         cl_uint alignment) {
  __typeof__(&clSVMAlloc) real = GP_CL_REAL(clSVMAlloc);
  if (!real)
    return NULL;
  if (!gp__ocl_recording())
    return real(context, flags, size, alignment);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clSVMAlloc, false);
  void *p = real(context, flags, size, alignment);
  if (p && size > 0) {
    pthread_mutex_lock(&gp__ocl.lock);
    gp__ptrmap_put(&gp__ocl.svm, p, (void *)(uintptr_t)size, NULL);
    pthread_mutex_unlock(&gp__ocl.lock);
  }
  gp__ocl_call_end(&c, p ? CL_SUCCESS : CL_INVALID_VALUE);
  return p;
}

/* OpenCL entry point: forgets the allocation; forwarded. */
GP_CL_ENTRY void CL_API_CALL clSVMFree(cl_context context, void *svm_pointer) {
  __typeof__(&clSVMFree) real = GP_CL_REAL(clSVMFree);
  if (!real)
    return;
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clSVMFree, false);
  if (svm_pointer) {
    pthread_mutex_lock(&gp__ocl.lock);
    gp__ptrmap_del(&gp__ocl.svm, svm_pointer);
    pthread_mutex_unlock(&gp__ocl.lock);
  }
  real(context, svm_pointer);
  gp__ocl_call_end(&c, CL_SUCCESS);
}
