/*
 * programs.c - OpenCL programs as modules and their kernels as functions
 * (MODULE and FUNCTION records, CUPTI's kinds for loaded code).
 *
 * A program built (clBuildProgram) is a module on each device it built
 * for: one MODULE record per such device, with the device's context (our
 * context of the program's context on that device), the program's binary
 * size for it, and no name (programs have none). A program's module id is
 * given at each successful build (a rebuilt program is new code) or, for
 * a program built out of our sight (before recording, or linked with
 * clLinkProgram), when one of its kernels is first made; it is kept in
 * a map from the program's handle, which a program released and another
 * made at its address does not confuse, as the new one is built first.
 * A kernel made (clCreateKernel, clCreateKernelsInProgram) is a function
 * of that module on each device the program built for: one FUNCTION
 * record per device, its index being its place in the program's
 * CL_PROGRAM_KERNEL_NAMES. A build that ends after clBuildProgram
 * returns (one with a callback, on a driver that builds in the
 * background) gives no MODULE record; unloads are not recorded (OpenCL
 * says when a program is released, not when its code goes).
 */
#include <stdlib.h>
#include <string.h>

#include "oclInt.h"

/* Module and function ids: unique in the process, never 0. */
static _Atomic uint32_t last_module_id, last_function_id;

/* The program's module id; a new one if fresh or the program has none.
 * 0 if memory runs out. */
static uint32_t module_id(cl_program p, bool fresh) {
  void *v = gp__ptrmap_get(&gp__ocl.programs, p);
  if (v && !fresh)
    return (uint32_t)(uintptr_t)v;
  uint32_t id = atomic_fetch_add(&last_module_id, 1) + 1;
  pthread_mutex_lock(&gp__ocl.objects_lock);
  int rc = gp__ptrmap_put(&gp__ocl.programs, p, (void *)(uintptr_t)id, NULL);
  pthread_mutex_unlock(&gp__ocl.objects_lock);
  return rc == 0 ? id : 0;
}

/* The devices a program is for and its context; *n of them, malloc'ed
 * (NULL if the driver will not say). */
static cl_device_id *program_devices(cl_program p, cl_uint *n,
                                     cl_context *ctx) {
  *n = 0;
  if (GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_CONTEXT, sizeof(*ctx), ctx,
                                   NULL) != CL_SUCCESS ||
      GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_NUM_DEVICES, sizeof(*n), n,
                                   NULL) != CL_SUCCESS ||
      *n == 0 || *n > 4096)
    return NULL;
  cl_device_id *devs = calloc(*n, sizeof(*devs));
  if (devs &&
      GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_DEVICES, *n * sizeof(*devs),
                                   devs, NULL) == CL_SUCCESS)
    return devs;
  free(devs);
  *n = 0;
  return NULL;
}

static bool built_for(cl_program p, cl_device_id dev) {
  cl_build_status st = CL_BUILD_NONE;
  return GP_CL_REAL(clGetProgramBuildInfo)(p, dev, CL_PROGRAM_BUILD_STATUS,
                                           sizeof(st), &st,
                                           NULL) == CL_SUCCESS &&
         st == CL_BUILD_SUCCESS;
}

/* Our context of the program's context on device dev, 0 if none. */
static uint32_t device_context(cl_context ctx, cl_device_id dev) {
  gp__ocl_device *d = gp__ocl_device_get(dev);
  return d ? gp__ocl_context_id(ctx, d) : 0;
}

static void emit_modules(cl_program p) {
  cl_context ctx = NULL;
  cl_uint n;
  cl_device_id *devs = program_devices(p, &n, &ctx);
  if (!devs)
    return;
  size_t *sizes = calloc(n, sizeof(*sizes));
  if (sizes && GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_BINARY_SIZES,
                                            n * sizeof(*sizes), sizes,
                                            NULL) != CL_SUCCESS)
    memset(sizes, 0, n * sizeof(*sizes));
  uint32_t id = module_id(p, true);
  for (cl_uint i = 0; id && i < n; i++) {
    if (!built_for(p, devs[i]))
      continue;
    uint32_t context = device_context(ctx, devs[i]);
    gp_activity_module *r =
        GP_CORE->activity_reserve(GP_ACTIVITY_KIND_MODULE, sizeof(*r), 0, 0);
    if (!r)
      break;
    r->timestamp = gp_get_timestamp();
    r->size_bytes = sizes ? sizes[i] : 0;
    r->context_id = context;
    r->module_id = id;
    r->flags = 0;
    r->name_id = 0;
    GP_CORE->activity_commit(r);
  }
  free(sizes);
  free(devs);
}

/* The index of name among the program's kernel names ("a;b;c"), or
 * UINT32_MAX. */
static uint32_t kernel_index(cl_program p, const char *name) {
  size_t len = 0;
  if (GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &len) !=
          CL_SUCCESS ||
      len == 0)
    return UINT32_MAX;
  char *names = malloc(len + 1);
  if (!names)
    return UINT32_MAX;
  uint32_t index = UINT32_MAX;
  if (GP_CL_REAL(clGetProgramInfo)(p, CL_PROGRAM_KERNEL_NAMES, len, names,
                                   NULL) == CL_SUCCESS) {
    names[len] = '\0';
    size_t want = strlen(name);
    uint32_t i = 0;
    for (char *s = names; index == UINT32_MAX; i++) {
      size_t n = strcspn(s, ";");
      if (n == want && memcmp(s, name, n) == 0)
        index = i;
      if (s[n] == '\0')
        break;
      s += n + 1;
    }
  }
  free(names);
  return index;
}

/* See oclInt.h. */
void gp__ocl_function_emit(cl_program p, uint32_t name_id) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_FUNCTION, 0))
    return;
  cl_context ctx = NULL;
  cl_uint n;
  cl_device_id *devs = program_devices(p, &n, &ctx);
  if (!devs)
    return;
  uint32_t module = module_id(p, false);
  uint32_t index = kernel_index(p, gp_activity_string(name_id));
  uint64_t now = gp_get_timestamp();
  for (cl_uint i = 0; module && i < n; i++) {
    if (!built_for(p, devs[i]))
      continue;
    uint32_t context = device_context(ctx, devs[i]);
    gp_activity_function *r =
        GP_CORE->activity_reserve(GP_ACTIVITY_KIND_FUNCTION, sizeof(*r), 0, 0);
    if (!r)
      break;
    r->timestamp = now;
    r->id = atomic_fetch_add(&last_function_id, 1) + 1;
    r->context_id = context;
    r->module_id = module;
    r->function_index = index;
    r->name_id = name_id;
    r->reserved0 = 0;
    GP_CORE->activity_commit(r);
  }
  free(devs);
}

/* OpenCL entry point: forwarded; a program built is a module (MODULE
 * records). */
GP_CL_ENTRY cl_int CL_API_CALL clBuildProgram(
    cl_program program, cl_uint num_devices, const cl_device_id *device_list,
    const char *options,
    void(CL_CALLBACK *pfn_notify)(cl_program program, void *user_data),
    void *user_data) {
  __typeof__(&clBuildProgram) real = GP_CL_REAL(clBuildProgram);
  if (!real)
    return CL_INVALID_OPERATION;
  if (!gp__ocl_recording() &&
      !GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MODULE, 0))
    return real(program, num_devices, device_list, options, pfn_notify,
                user_data);
  gp__ocl_call c;
  gp__ocl_call_begin(&c, GP_CL_ID_clBuildProgram, false);
  cl_int rc =
      real(program, num_devices, device_list, options, pfn_notify, user_data);
  if (rc == CL_SUCCESS && GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MODULE, 0))
    emit_modules(program);
  gp__ocl_call_end(&c, rc);
  return rc;
}
