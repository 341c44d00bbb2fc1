/*
 * enqueue.c - the wrappers of every clEnqueue* call: what each command is
 * as a record.
 *
 *   NDRange kernel, task, native kernel   KERNEL
 *   read, write, copy (buffer, rect, image, image<->buffer),
 *   map and unmap (buffer, image, SVM), SVM memcpy, migrations   MEMCPY
 *   fill (buffer, image, SVM)                                 MEMSET
 *   markers, barriers, wait-for-events, SVM free     no record: their
 *                         events stand for the commands they waited on
 *
 * Copy kinds follow the memory on each side: buffers are device memory,
 * images arrays, SVM allocations managed memory, anything else host
 * memory. A map reads the device's data to the host (no bytes when mapped
 * with CL_MAP_WRITE_INVALIDATE_REGION); the unmap of a region mapped for
 * writing writes it back. A kernel's grid counts work-groups and its block
 * is the work-group size; when the program lets the driver pick the
 * work-group size (local size NULL), the block is 0 (unknown: drivers do
 * not say what they chose) and the grid holds the global size in
 * work-items.
 *
 * Each wrapper below is the OpenCL entry point of the same name: it
 * forwards the call unchanged (with our event when the program passed none
 * and the command is tracked) and records it as the table above says. It
 * describes its command only when it is tracked; otherwise it costs the
 * driver call plus the API record.
 */
#include <string.h>

#include "track.h"

#define BEGIN(name, queue, event, kind)                                        \
  __typeof__(&name) real = GP_CL_REAL(name);                                   \
  if (GP_UNLIKELY(!real))                                                      \
    return CL_INVALID_OPERATION;                                               \
  gp__ocl_enqueue en;                                                          \
  gp__ocl_enqueue_begin(&en, GP_CL_ID_##name, queue, event, kind)

/* Same, for the map calls, which return a pointer and set *errcode_ret. */
#define BEGIN_MAP(name, queue, event)                                          \
  __typeof__(&name) real = GP_CL_REAL(name);                                   \
  if (GP_UNLIKELY(!real)) {                                                    \
    if (errcode_ret)                                                           \
      *errcode_ret = CL_INVALID_OPERATION;                                     \
    return NULL;                                                               \
  }                                                                            \
  gp__ocl_enqueue en;                                                          \
  gp__ocl_enqueue_begin(&en, GP_CL_ID_##name, queue, event,                    \
                        GP_ACTIVITY_KIND_MEMCPY)

/* ------------------------------------------------------------------ */
/* Describing commands                                                  */

static uint64_t region_size(const size_t *region) {
  return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

static uint64_t image_bytes(cl_mem image, const size_t *region) {
  size_t elem = 0;
  if (GP_CL_REAL(clGetImageInfo)(image, CL_IMAGE_ELEMENT_SIZE, sizeof(elem),
                                 &elem, NULL) != CL_SUCCESS)
    return 0;
  return region_size(region) * elem;
}

static uint64_t mem_size(cl_mem mem) {
  size_t size = 0;
  if (GP_CL_REAL(clGetMemObjectInfo)(mem, CL_MEM_SIZE, sizeof(size), &size,
                                     NULL) != CL_SUCCESS)
    return 0;
  return size;
}

static bool is_image(cl_mem mem) {
  cl_mem_object_type t = 0;
  if (GP_CL_REAL(clGetMemObjectInfo)(mem, CL_MEM_TYPE, sizeof(t), &t, NULL) !=
      CL_SUCCESS)
    return false;
  return t != CL_MEM_OBJECT_BUFFER && t != CL_MEM_OBJECT_PIPE;
}

static void copy_cmd(gp__ocl_cmd *c, uint64_t bytes, uint8_t kind, uint8_t src,
                     uint8_t dst) {
  memset(c, 0, sizeof(*c));
  c->kind = GP_ACTIVITY_KIND_MEMCPY;
  c->bytes = bytes;
  c->copy_kind = kind;
  c->src_kind = src;
  c->dst_kind = dst;
  c->src_host = src == GP_MEMORY_PAGEABLE || src == GP_MEMORY_UNKNOWN;
  c->dst_host = dst == GP_MEMORY_PAGEABLE || dst == GP_MEMORY_UNKNOWN;
}

static void fill_cmd(gp__ocl_cmd *c, uint64_t bytes, const void *pattern,
                     size_t pattern_size, uint8_t mem) {
  memset(c, 0, sizeof(*c));
  c->kind = GP_ACTIVITY_KIND_MEMSET;
  c->bytes = bytes;
  uint32_t v = 0;
  if (pattern)
    memcpy(&v, pattern, pattern_size < 4 ? pattern_size : 4);
  c->value = v;
  c->dst_kind = mem;
}

static void kernel_cmd(gp__ocl_cmd *c, cl_kernel kernel, cl_uint dims,
                       const size_t *global, const size_t *local) {
  /* Field by field, without memset or copy loops: this runs on every
   * kernel enqueue (a library call each would cost more than the work). */
  c->kind = GP_ACTIVITY_KIND_KERNEL;
  gp__ocl_kernel *k = gp__ocl_kernel_find(kernel);
  c->name_id = k ? atomic_load_explicit(&k->name_id, memory_order_relaxed)
                 : GP_CORE->string_intern("[unknown kernel]");
  /* As given: the grid and block are worked out when the record is
   * written (gp__ocl_kernel_shape), off the program's thread. */
  c->local = local != NULL;
  if (GP_LIKELY(dims == 1 && global)) {
    c->work[0] = global[0];
    c->work[1] = c->work[2] = 1;
    c->group[0] = local ? local[0] : 0;
    c->group[1] = c->group[2] = 0;
  } else {
    c->work[0] = global && dims > 0 ? global[0] : 1;
    c->work[1] = global && dims > 1 ? global[1] : 1;
    c->work[2] = global && dims > 2 ? global[2] : 1;
    c->group[0] = local && dims > 0 ? local[0] : 0;
    c->group[1] = local && dims > 1 ? local[1] : 0;
    c->group[2] = local && dims > 2 ? local[2] : 0;
  }
  uint64_t shared =
      k ? atomic_load_explicit(&k->local_total, memory_order_relaxed) : 0;
  c->dynamic_shared = shared > UINT32_MAX ? UINT32_MAX : (uint32_t)shared;
}

static void single_kernel_cmd(gp__ocl_cmd *c, uint32_t name_id) {
  memset(c, 0, sizeof(*c));
  c->kind = GP_ACTIVITY_KIND_KERNEL;
  c->name_id = name_id;
  c->local = true;
  for (int i = 0; i < 3; i++)
    c->work[i] = c->group[i] = 1;
}

/* Is p inside an SVM allocation we saw made? Caller holds gp__ocl.lock. */
typedef struct svm_probe {
  uintptr_t p;
  bool in;
} svm_probe;

static void svm_check(void *user, const void *key, void *val) {
  svm_probe *pr = user;
  uintptr_t base = (uintptr_t)key, size = (uintptr_t)val;
  if (pr->p >= base && pr->p - base < size)
    pr->in = true;
}

static bool is_svm(const void *p) {
  svm_probe pr = {(uintptr_t)p, false};
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ptrmap_each(&gp__ocl.svm, svm_check, &pr);
  pthread_mutex_unlock(&gp__ocl.lock);
  return pr.in;
}

/* Remembers a mapping of ptr until its unmap. */
static void mapping_add(void *ptr, uint64_t bytes, cl_map_flags flags,
                        uint8_t mem_kind) {
  if (!ptr)
    return;
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_mapping *m = gp__ptrmap_get(&gp__ocl.mappings, ptr);
  if (m) {
    m->count++;
    m->bytes = bytes > m->bytes ? bytes : m->bytes;
    m->flags |= flags;
  } else if ((m = malloc(sizeof(*m))) != NULL) {
    m->bytes = bytes;
    m->flags = flags;
    m->mem_kind = mem_kind;
    m->count = 1;
    if (gp__ptrmap_put(&gp__ocl.mappings, ptr, m, NULL) != 0)
      free(m);
  }
  pthread_mutex_unlock(&gp__ocl.lock);
}

/* Describes the unmap of ptr and forgets the mapping. */
static void unmap_cmd(gp__ocl_cmd *c, const void *ptr, uint8_t mem_kind) {
  uint64_t bytes = 0;
  pthread_mutex_lock(&gp__ocl.lock);
  gp__ocl_mapping *m = gp__ptrmap_get(&gp__ocl.mappings, ptr);
  if (m) {
    mem_kind = m->mem_kind;
    if (m->flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
      bytes = m->bytes;
    if (--m->count == 0)
      free(gp__ptrmap_del(&gp__ocl.mappings, ptr));
  }
  pthread_mutex_unlock(&gp__ocl.lock);
  copy_cmd(c, bytes,
           mem_kind == GP_MEMORY_ARRAY ? GP_MEMCPY_HTOA : GP_MEMCPY_HTOD,
           GP_MEMORY_UNKNOWN, mem_kind);
}

#define END(rc, cmd, num, list, event, barrier)                                \
  gp__ocl_enqueue_end(&en, rc, cmd, num, list, event, barrier)

/* ------------------------------------------------------------------ */
/* Kernels                                                              */

/* The entry point programs call most: the enqueue's path inline
 * (track.h). */
GP_CL_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(
    cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  __typeof__(&clEnqueueNDRangeKernel) real = GP_CL_REAL(clEnqueueNDRangeKernel);
  if (GP_UNLIKELY(!real))
    return CL_INVALID_OPERATION;
  gp__ocl_enqueue en;
  gp__ocl_enqueue_begin_inline(&en, GP_CL_ID_clEnqueueNDRangeKernel,
                               command_queue, event, GP_ACTIVITY_KIND_KERNEL);
  cl_int rc = real(command_queue, kernel, work_dim, global_work_offset,
                   global_work_size, local_work_size, num_events_in_wait_list,
                   event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    kernel_cmd(&cmd, kernel, work_dim, global_work_size, local_work_size);
  gp__ocl_enqueue_end_inline(&en, rc, &cmd, num_events_in_wait_list,
                             event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue command_queue,
                                             cl_kernel kernel,
                                             cl_uint num_events_in_wait_list,
                                             const cl_event *event_wait_list,
                                             cl_event *event) {
  BEGIN(clEnqueueTask, command_queue, event, GP_ACTIVITY_KIND_KERNEL);
  cl_int rc = real(command_queue, kernel, num_events_in_wait_list,
                   event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS) {
    gp__ocl_kernel *k = gp__ocl_kernel_find(kernel);
    single_kernel_cmd(&cmd, k ? atomic_load(&k->name_id)
                              : GP_CORE->string_intern("[unknown kernel]"));
  }
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueNativeKernel(
    cl_command_queue command_queue, void(CL_CALLBACK *user_func)(void *),
    void *args, size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list,
    const void **args_mem_loc, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueNativeKernel, command_queue, event, GP_ACTIVITY_KIND_KERNEL);
  cl_int rc =
      real(command_queue, user_func, args, cb_args, num_mem_objects, mem_list,
           args_mem_loc, num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    single_kernel_cmd(&cmd, GP_CORE->string_intern("[native kernel]"));
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Buffers                                                              */

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
    size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueReadBuffer, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, buffer, blocking_read, offset, size, ptr,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, size, GP_MEMCPY_DTOH, GP_MEMORY_DEVICE, GP_MEMORY_PAGEABLE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                     cl_bool blocking_write, size_t offset, size_t size,
                     const void *ptr, cl_uint num_events_in_wait_list,
                     const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueWriteBuffer, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, buffer, blocking_write, offset, size, ptr,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, size, GP_MEMCPY_HTOD, GP_MEMORY_PAGEABLE, GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueReadBufferRect(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read,
    const size_t *buffer_origin, const size_t *host_origin,
    const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch,
    size_t host_row_pitch, size_t host_slice_pitch, void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueReadBufferRect, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, buffer, blocking_read, buffer_origin,
                   host_origin, region, buffer_row_pitch, buffer_slice_pitch,
                   host_row_pitch, host_slice_pitch, ptr,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, region_size(region), GP_MEMCPY_DTOH, GP_MEMORY_DEVICE,
           GP_MEMORY_PAGEABLE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueWriteBufferRect(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write,
    const size_t *buffer_origin, const size_t *host_origin,
    const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch,
    size_t host_row_pitch, size_t host_slice_pitch, const void *ptr,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueWriteBufferRect, command_queue, event,
        GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, buffer, blocking_write, buffer_origin,
                   host_origin, region, buffer_row_pitch, buffer_slice_pitch,
                   host_row_pitch, host_slice_pitch, ptr,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, region_size(region), GP_MEMCPY_HTOD, GP_MEMORY_PAGEABLE,
           GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                    cl_mem dst_buffer, size_t src_offset, size_t dst_offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueCopyBuffer, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc =
      real(command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size,
           num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, size, GP_MEMCPY_DTOD, GP_MEMORY_DEVICE, GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferRect(
    cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer,
    const size_t *src_origin, const size_t *dst_origin, const size_t *region,
    size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch,
    size_t dst_slice_pitch, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueCopyBufferRect, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc =
      real(command_queue, src_buffer, dst_buffer, src_origin, dst_origin,
           region, src_row_pitch, src_slice_pitch, dst_row_pitch,
           dst_slice_pitch, num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  copy_cmd(&cmd, region_size(region), GP_MEMCPY_DTOD, GP_MEMORY_DEVICE,
           GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                    const void *pattern, size_t pattern_size, size_t offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueFillBuffer, command_queue, event, GP_ACTIVITY_KIND_MEMSET);
  cl_int rc = real(command_queue, buffer, pattern, pattern_size, offset, size,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  fill_cmd(&cmd, size, pattern, pattern_size, GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY void *CL_API_CALL clEnqueueMapBuffer(
    cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map,
    cl_map_flags map_flags, size_t offset, size_t size,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event, cl_int *errcode_ret) {
  BEGIN_MAP(clEnqueueMapBuffer, command_queue, event);
  cl_int rc = CL_SUCCESS;
  void *p = real(command_queue, buffer, blocking_map, map_flags, offset, size,
                 num_events_in_wait_list, event_wait_list, en.evp, &rc);
  gp__ocl_cmd cmd;
  if (en.track && p) {
    uint64_t bytes = (map_flags & CL_MAP_WRITE_INVALIDATE_REGION) ? 0 : size;
    copy_cmd(&cmd, bytes, GP_MEMCPY_DTOH, GP_MEMORY_DEVICE, GP_MEMORY_UNKNOWN);
    mapping_add(p, size, map_flags, GP_MEMORY_DEVICE);
  }
  if (errcode_ret)
    *errcode_ret = rc;
  END(p ? rc : (rc ? rc : CL_INVALID_VALUE), &cmd, num_events_in_wait_list,
      event_wait_list, event, false);
  return p;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
                        void *mapped_ptr, cl_uint num_events_in_wait_list,
                        const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueUnmapMemObject, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, memobj, mapped_ptr, num_events_in_wait_list,
                   event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    unmap_cmd(&cmd, mapped_ptr,
              is_image(memobj) ? GP_MEMORY_ARRAY : GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueMigrateMemObjects(
    cl_command_queue command_queue, cl_uint num_mem_objects,
    const cl_mem *mem_objects, cl_mem_migration_flags flags,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueMigrateMemObjects, command_queue, event,
        GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, num_mem_objects, mem_objects, flags,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS) {
    uint64_t bytes = 0;
    if (!(flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
      for (cl_uint i = 0; mem_objects && i < num_mem_objects; i++)
        bytes += mem_size(mem_objects[i]);
    if (flags & CL_MIGRATE_MEM_OBJECT_HOST)
      copy_cmd(&cmd, bytes, GP_MEMCPY_DTOH, GP_MEMORY_DEVICE,
               GP_MEMORY_UNKNOWN);
    else
      copy_cmd(&cmd, bytes, GP_MEMCPY_HTOD, GP_MEMORY_UNKNOWN,
               GP_MEMORY_DEVICE);
  }
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Images                                                               */

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueReadImage(
    cl_command_queue command_queue, cl_mem image, cl_bool blocking_read,
    const size_t *origin, const size_t *region, size_t row_pitch,
    size_t slice_pitch, void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueReadImage, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc =
      real(command_queue, image, blocking_read, origin, region, row_pitch,
           slice_pitch, ptr, num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    copy_cmd(&cmd, image_bytes(image, region), GP_MEMCPY_ATOH, GP_MEMORY_ARRAY,
             GP_MEMORY_PAGEABLE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueWriteImage(
    cl_command_queue command_queue, cl_mem image, cl_bool blocking_write,
    const size_t *origin, const size_t *region, size_t input_row_pitch,
    size_t input_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueWriteImage, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, image, blocking_write, origin, region,
                   input_row_pitch, input_slice_pitch, ptr,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    copy_cmd(&cmd, image_bytes(image, region), GP_MEMCPY_HTOA,
             GP_MEMORY_PAGEABLE, GP_MEMORY_ARRAY);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueFillImage(
    cl_command_queue command_queue, cl_mem image, const void *fill_color,
    const size_t *origin, const size_t *region, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueFillImage, command_queue, event, GP_ACTIVITY_KIND_MEMSET);
  cl_int rc = real(command_queue, image, fill_color, origin, region,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    fill_cmd(&cmd, image_bytes(image, region), fill_color, 16, GP_MEMORY_ARRAY);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueCopyImage(
    cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image,
    const size_t *src_origin, const size_t *dst_origin, const size_t *region,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueCopyImage, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, src_image, dst_image, src_origin, dst_origin,
                   region, num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    copy_cmd(&cmd, image_bytes(src_image, region), GP_MEMCPY_ATOA,
             GP_MEMORY_ARRAY, GP_MEMORY_ARRAY);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueCopyImageToBuffer(
    cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer,
    const size_t *src_origin, const size_t *region, size_t dst_offset,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueCopyImageToBuffer, command_queue, event,
        GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc =
      real(command_queue, src_image, dst_buffer, src_origin, region, dst_offset,
           num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    copy_cmd(&cmd, image_bytes(src_image, region), GP_MEMCPY_ATOD,
             GP_MEMORY_ARRAY, GP_MEMORY_DEVICE);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferToImage(
    cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image,
    size_t src_offset, const size_t *dst_origin, const size_t *region,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event) {
  BEGIN(clEnqueueCopyBufferToImage, command_queue, event,
        GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, src_buffer, dst_image, src_offset, dst_origin,
                   region, num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    copy_cmd(&cmd, image_bytes(dst_image, region), GP_MEMCPY_DTOA,
             GP_MEMORY_DEVICE, GP_MEMORY_ARRAY);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY void *CL_API_CALL clEnqueueMapImage(
    cl_command_queue command_queue, cl_mem image, cl_bool blocking_map,
    cl_map_flags map_flags, const size_t *origin, const size_t *region,
    size_t *image_row_pitch, size_t *image_slice_pitch,
    cl_uint num_events_in_wait_list, const cl_event *event_wait_list,
    cl_event *event, cl_int *errcode_ret) {
  BEGIN_MAP(clEnqueueMapImage, command_queue, event);
  cl_int rc = CL_SUCCESS;
  void *p = real(command_queue, image, blocking_map, map_flags, origin, region,
                 image_row_pitch, image_slice_pitch, num_events_in_wait_list,
                 event_wait_list, en.evp, &rc);
  gp__ocl_cmd cmd;
  if (en.track && p) {
    uint64_t size = image_bytes(image, region);
    uint64_t bytes = (map_flags & CL_MAP_WRITE_INVALIDATE_REGION) ? 0 : size;
    copy_cmd(&cmd, bytes, GP_MEMCPY_ATOH, GP_MEMORY_ARRAY, GP_MEMORY_UNKNOWN);
    mapping_add(p, size, map_flags, GP_MEMORY_ARRAY);
  }
  if (errcode_ret)
    *errcode_ret = rc;
  END(p ? rc : (rc ? rc : CL_INVALID_VALUE), &cmd, num_events_in_wait_list,
      event_wait_list, event, false);
  return p;
}

/* ------------------------------------------------------------------ */
/* Markers and barriers                                                 */

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(
    cl_command_queue command_queue, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueMarkerWithWaitList, command_queue, event, 0);
  cl_int rc =
      real(command_queue, num_events_in_wait_list, event_wait_list, event);
  END(rc, NULL, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(
    cl_command_queue command_queue, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueBarrierWithWaitList, command_queue, event, 0);
  cl_int rc =
      real(command_queue, num_events_in_wait_list, event_wait_list, event);
  END(rc, NULL, num_events_in_wait_list, event_wait_list, event, true);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueMarker(cl_command_queue command_queue,
                                               cl_event *event) {
  BEGIN(clEnqueueMarker, command_queue, event, 0);
  cl_int rc = real(command_queue, event);
  END(rc, NULL, 0, NULL, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueBarrier(cl_command_queue command_queue) {
  BEGIN(clEnqueueBarrier, command_queue, NULL, 0);
  cl_int rc = real(command_queue);
  END(rc, NULL, 0, NULL, NULL, true);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueWaitForEvents(cl_command_queue command_queue, cl_uint num_events,
                       const cl_event *event_list) {
  BEGIN(clEnqueueWaitForEvents, command_queue, NULL, 0);
  cl_int rc = real(command_queue, num_events, event_list);
  END(rc, NULL, num_events, event_list, NULL, true);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Shared virtual memory                                                */

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueSVMFree(
    cl_command_queue command_queue, cl_uint num_svm_pointers,
    void *svm_pointers[],
    void(CL_CALLBACK *pfn_free_func)(cl_command_queue queue,
                                     cl_uint num_svm_pointers,
                                     void *svm_pointers[], void *user_data),
    void *user_data, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMFree, command_queue, event, 0);
  cl_int rc = real(command_queue, num_svm_pointers, svm_pointers, pfn_free_func,
                   user_data, num_events_in_wait_list, event_wait_list, event);
  if (rc == CL_SUCCESS && svm_pointers) {
    pthread_mutex_lock(&gp__ocl.lock);
    for (cl_uint i = 0; i < num_svm_pointers; i++)
      gp__ptrmap_del(&gp__ocl.svm, svm_pointers[i]);
    pthread_mutex_unlock(&gp__ocl.lock);
  }
  END(rc, NULL, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueSVMMemcpy(
    cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr,
    const void *src_ptr, size_t size, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMMemcpy, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, blocking_copy, dst_ptr, src_ptr, size,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS) {
    bool s = is_svm(src_ptr), d = is_svm(dst_ptr);
    uint8_t kind = s ? (d ? GP_MEMCPY_DTOD : GP_MEMCPY_DTOH)
                     : (d ? GP_MEMCPY_HTOD : GP_MEMCPY_HTOH);
    copy_cmd(&cmd, size, kind, s ? GP_MEMORY_MANAGED : GP_MEMORY_PAGEABLE,
             d ? GP_MEMORY_MANAGED : GP_MEMORY_PAGEABLE);
  }
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueSVMMemFill(
    cl_command_queue command_queue, void *svm_ptr, const void *pattern,
    size_t pattern_size, size_t size, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMMemFill, command_queue, event, GP_ACTIVITY_KIND_MEMSET);
  cl_int rc = real(command_queue, svm_ptr, pattern, pattern_size, size,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  fill_cmd(&cmd, size, rc == CL_SUCCESS ? pattern : NULL, pattern_size,
           GP_MEMORY_MANAGED);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueSVMMap(
    cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags,
    void *svm_ptr, size_t size, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMMap, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, blocking_map, flags, svm_ptr, size,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS) {
    uint64_t bytes = (flags & CL_MAP_WRITE_INVALIDATE_REGION) ? 0 : size;
    copy_cmd(&cmd, bytes, GP_MEMCPY_DTOH, GP_MEMORY_MANAGED, GP_MEMORY_UNKNOWN);
    mapping_add(svm_ptr, size, flags, GP_MEMORY_MANAGED);
  }
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL
clEnqueueSVMUnmap(cl_command_queue command_queue, void *svm_ptr,
                  cl_uint num_events_in_wait_list,
                  const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMUnmap, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, svm_ptr, num_events_in_wait_list,
                   event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS)
    unmap_cmd(&cmd, svm_ptr, GP_MEMORY_MANAGED);
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}

GP_CL_ENTRY cl_int CL_API_CALL clEnqueueSVMMigrateMem(
    cl_command_queue command_queue, cl_uint num_svm_pointers,
    const void **svm_pointers, const size_t *sizes,
    cl_mem_migration_flags flags, cl_uint num_events_in_wait_list,
    const cl_event *event_wait_list, cl_event *event) {
  BEGIN(clEnqueueSVMMigrateMem, command_queue, event, GP_ACTIVITY_KIND_MEMCPY);
  cl_int rc = real(command_queue, num_svm_pointers, svm_pointers, sizes, flags,
                   num_events_in_wait_list, event_wait_list, en.evp);
  gp__ocl_cmd cmd;
  if (en.track && rc == CL_SUCCESS) {
    uint64_t bytes = 0;
    if (!(flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED) && sizes)
      for (cl_uint i = 0; i < num_svm_pointers; i++)
        bytes += sizes[i];
    if (flags & CL_MIGRATE_MEM_OBJECT_HOST)
      copy_cmd(&cmd, bytes, GP_MEMCPY_DTOH, GP_MEMORY_MANAGED,
               GP_MEMORY_UNKNOWN);
    else
      copy_cmd(&cmd, bytes, GP_MEMCPY_HTOD, GP_MEMORY_UNKNOWN,
               GP_MEMORY_MANAGED);
  }
  END(rc, &cmd, num_events_in_wait_list, event_wait_list, event, false);
  return rc;
}
