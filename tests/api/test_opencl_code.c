/*
 * test_opencl_code.c - MODULE, FUNCTION and DEVICE_ATTRIBUTE records of
 * the OpenCL interception library on PoCL, checked against what OpenCL
 * itself answers: the program's binary size and kernel names
 * (clGetProgramInfo), the device's clGetDeviceInfo values, and our ids
 * of the test's own context and device.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "harness.h"
#include "opencl/oclutil.h"
#include "testutil.h"

static const char source[] =
    "__kernel void alpha(__global float *a) { a[get_global_id(0)] *= 2; }\n"
    "__kernel void beta(__global float *a) { a[get_global_id(0)] += 1; }\n";

/* The index of name among the program's kernel names, as OpenCL lists
 * them ("alpha;beta"). */
static uint32_t index_in(const char *names, const char *name) {
  uint32_t i = 0;
  for (const char *s = names;; i++) {
    size_t n = strcspn(s, ";");
    if (n == strlen(name) && strncmp(s, name, n) == 0)
      return i;
    ASSERT(s[n] != '\0');
    s += n + 1;
  }
}

TEST(opencl_program_module_and_kernel_functions) {
  ocl_env();
  ocl_require_device();
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MODULE));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_FUNCTION));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL)); /* the context */
  cl_device_id dev;
  cl_context ctx = ocl_first_context(&dev);
  uint32_t context_id = 0;
  ASSERT_OK(gp_activity_get_context_id(GP_API_OPEN_CL, ctx, NULL, &context_id));
  const char *src = source;
  cl_int e = 0;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  ASSERT_EQ(e, CL_SUCCESS);
  uint64_t t0 = gp_get_timestamp();
  ASSERT_EQ(clBuildProgram(prog, 1, &dev, "", NULL, NULL), CL_SUCCESS);
  uint64_t t1 = gp_get_timestamp();
  size_t binary_size = 0;
  ASSERT_EQ(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(binary_size),
                             &binary_size, NULL),
            CL_SUCCESS);
  char names[64] = "";
  ASSERT_EQ(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, sizeof(names),
                             names, NULL),
            CL_SUCCESS);
  cl_kernel kb = clCreateKernel(prog, "beta", &e);
  ASSERT_EQ(e, CL_SUCCESS);
  cl_kernel all[2];
  cl_uint made = 0;
  ASSERT_EQ(clCreateKernelsInProgram(prog, 2, all, &made), CL_SUCCESS);
  ASSERT_EQ(made, 2);
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MODULE), 1);
  const gp_activity_module *m =
      (const void *)tu_find(GP_ACTIVITY_KIND_MODULE, 0);
  ASSERT_NE(m->module_id, 0);
  ASSERT_EQ(m->context_id, context_id);
  ASSERT_GT(binary_size, 0);
  ASSERT_UEQ(m->size_bytes, binary_size);
  ASSERT_EQ(m->flags, 0);
  ASSERT_EQ(m->name_id, 0); /* programs have no name */
  ASSERT_GE(m->timestamp, t0);
  ASSERT_LE(m->timestamp, t1);

  /* beta by itself, then both (in the program's order) by the second
   * call: each the program's module, at its place among its kernels. */
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_FUNCTION), 3);
  uint32_t ids[3];
  for (size_t i = 0; i < 3; i++) {
    const gp_activity_function *f =
        (const void *)tu_find(GP_ACTIVITY_KIND_FUNCTION, i);
    const char *name = gp_activity_string(f->name_id);
    if (i == 0)
      ASSERT_STR_EQ(name, "beta");
    ASSERT_EQ(f->module_id, m->module_id);
    ASSERT_EQ(f->context_id, context_id);
    ASSERT_EQ(f->function_index, index_in(names, name));
    ASSERT_GE(f->timestamp, t1);
    ids[i] = f->id;
  }
  ASSERT_NE(ids[0], ids[1]);
  ASSERT_NE(ids[1], ids[2]);
  ASSERT_NE(ids[0], ids[2]);
  clReleaseKernel(kb);
  clReleaseKernel(all[0]);
  clReleaseKernel(all[1]);
  clReleaseProgram(prog);
  clReleaseContext(ctx);
}

static cl_ulong device_info(cl_device_id dev, cl_device_info what,
                            size_t size) {
  cl_ulong v = 0; /* little-endian: a narrower answer fills the low part */
  ASSERT_EQ(clGetDeviceInfo(dev, what, size, &v, NULL), CL_SUCCESS);
  return v;
}

TEST(opencl_device_attributes_match_clGetDeviceInfo) {
  ocl_env();
  ocl_require_device();
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE));
  /* Devices are registered while something of their work is recorded. */
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_KERNEL));
  cl_device_id dev;
  cl_context ctx = ocl_first_context(&dev);
  uint32_t device_id = 0;
  ASSERT_OK(gp_activity_get_device_id(GP_API_OPEN_CL, NULL, dev, &device_id));
  ASSERT_OK(gp_activity_flush_all(0));
  int64_t want[GP_DEVICE_ATTR_COUNT] = {
      [GP_DEVICE_ATTR_COMPUTE_UNITS] = (int64_t)device_info(
          dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint)),
      [GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK] = (int64_t)device_info(
          dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t)),
      [GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES] = (int64_t)device_info(
          dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong)),
      [GP_DEVICE_ATTR_CORE_CLOCK_KHZ] =
          1000 * (int64_t)device_info(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY,
                                      sizeof(cl_uint)),
      [GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK] =
          (int64_t)device_info(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong)),
  };
  uint32_t seen = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE, i)); i++) {
    const gp_activity_device_attribute *a = (const void *)r;
    if (a->device_id != device_id)
      continue;
    ASSERT_EQ(a->flags, 0);
    ASSERT_EQ(a->value_type, GP_VALUE_INT64);
    ASSERT_LT(a->attribute, GP_DEVICE_ATTR_COUNT);
    ASSERT_EQ(seen & (1u << a->attribute), 0);
    seen |= 1u << a->attribute;
    ASSERT_EQ(a->value.i64, want[a->attribute]);
  }
  /* Every attribute PoCL gives a value for. */
  for (uint32_t a = 1; a < GP_DEVICE_ATTR_COUNT; a++)
    if (want[a] != 0)
      ASSERT(seen & (1u << a));
  clReleaseContext(ctx);
}
