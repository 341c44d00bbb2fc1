/*
 * loaders.c - the OpenCL and Vulkan devices present on this machine, asked
 * of their loaders (libOpenCL.so.1, libvulkan.so.1) opened at run time,
 * with the counters a recorded program gets on each.
 *
 * Why here. Those devices become gpuperf devices only inside a recorded
 * program: the OpenCL preload library registers a device at the program's
 * first context on it, the Vulkan layer at vkCreateDevice. A process that
 * only lists or checks counter names (`gpuperf list`, `record -e` and
 * `stat -e` before they run anything, GPUPERF_HUD=help) has no catalog of
 * them, so their counters are written down here, kept in step with what
 * those backends publish:
 *
 *   OpenCL  one queue, "Compute" (src/backend/opencl/device.c), and the
 *           derived `Utilization` and `Utilization.Compute`
 *           (src/counters/derived.c);
 *   Vulkan  the seven pipeline statistics and `Utilization`
 *           (src/backend/vulkan/pstats.c), or `Utilization` alone where
 *           the driver lacks pipelineStatisticsQuery.
 *
 * The library does not depend on OpenCL or Vulkan: where a loader or a
 * driver is missing, one line says so. Only the few enum values and the
 * start of the structures used are written here (from the Khronos
 * headers: the Vulkan 1.0 ABI puts sType first, then pNext, then the
 * fields in declaration order). Nothing is asked before someone asks
 * (gp__loaders_get): a program's OpenCL driver must not initialise before
 * the program's own first call (a child forked after PoCL initialised
 * itself hangs in the driver).
 */
#include <dlfcn.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"
#include "loaders.h"

static const char *const opencl_counters[] = {"Utilization",
                                              "Utilization.Compute"};
static const char *const vulkan_counters[] = {
    "ia_vertices",          "ia_primitives",       "vs_invocations",
    "clipping_invocations", "clipping_primitives", "fs_invocations",
    "cs_invocations",       "Utilization"};

#if defined(__SANITIZE_ADDRESS__)
#define LOADERS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOADERS_SANITIZED 1
#endif
#endif

static gp__loaders found;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static gp__loader_device *new_device(uint32_t api) {
  if (found.num_devices == GP__LOADER_MAX_DEVICES)
    return NULL;
  gp__loader_device *d = &found.devices[found.num_devices++];
  memset(d, 0, sizeof(*d));
  d->api = api;
  return d;
}

/* ------------------------------------------------------------------ */
/* OpenCL                                                               */

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef void *cl_id; /* cl_platform_id, cl_device_id */

#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903
#define CL_DEVICE_TYPE_CPU (1u << 1)
#define CL_DEVICE_TYPE_GPU (1u << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1u << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DEVICE_VERSION 0x102F

typedef cl_int (*get_platforms_fn)(cl_uint, cl_id *, cl_uint *);
typedef cl_int (*get_info_fn)(cl_id, cl_uint, size_t, void *, size_t *);
typedef cl_int (*get_devices_fn)(cl_id, cl_ulong, cl_uint, cl_id *, cl_uint *);

static void info_str(get_info_fn f, cl_id id, cl_uint what, char *buf,
                     size_t size) {
  buf[0] = '\0';
  if (f(id, what, size - 1, buf, NULL) != 0)
    snprintf(buf, size, "?");
  buf[size - 1] = '\0';
}

static const char *cl_type_name(cl_ulong t) {
  if (t & CL_DEVICE_TYPE_GPU)
    return "GPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "accelerator";
  if (t & CL_DEVICE_TYPE_CPU)
    return "CPU";
  return "other";
}

static void cl_devices(get_info_fn dinfo, cl_id *devs, cl_uint nd,
                       uint32_t platform) {
  for (cl_uint i = 0; i < nd; i++) {
    gp__loader_device *d = new_device(GP_API_OPEN_CL);
    if (!d)
      return;
    cl_ulong type = 0, mem = 0;
    cl_uint cus = 0, mhz = 0;
    dinfo(devs[i], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    dinfo(devs[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, NULL);
    dinfo(devs[i], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(mhz), &mhz, NULL);
    dinfo(devs[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
    d->platform = platform;
    d->index = i;
    info_str(dinfo, devs[i], CL_DEVICE_NAME, d->name, sizeof(d->name));
    info_str(dinfo, devs[i], CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
    info_str(dinfo, devs[i], CL_DEVICE_VERSION, d->version, sizeof(d->version));
    d->type = cl_type_name(type);
    d->compute_units = cus;
    d->clock_mhz = mhz;
    d->memory_bytes = mem;
    d->num_counters = GP_ARRAY_SIZE(opencl_counters);
    d->counters = opencl_counters;
  }
}

static void ask_opencl(void) {
  char *why = found.opencl_status;
  size_t wsize = sizeof(found.opencl_status);
  /* RTLD_LOCAL: the loader's symbols stay out of the program's namespace. */
  void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, wsize, "no ICD loader (libOpenCL.so.1) on this system");
    return;
  }
  get_platforms_fn platforms =
      (get_platforms_fn)(uintptr_t)dlsym(lib, "clGetPlatformIDs");
  get_info_fn pinfo = (get_info_fn)(uintptr_t)dlsym(lib, "clGetPlatformInfo");
  get_devices_fn devices =
      (get_devices_fn)(uintptr_t)dlsym(lib, "clGetDeviceIDs");
  get_info_fn dinfo = (get_info_fn)(uintptr_t)dlsym(lib, "clGetDeviceInfo");
  cl_id plats[GP__LOADER_MAX_PLATFORMS];
  cl_uint np = 0;
  if (!platforms || !pinfo || !devices || !dinfo) {
    snprintf(why, wsize, "the ICD loader lacks the OpenCL 1.0 calls");
  } else if (platforms(GP__LOADER_MAX_PLATFORMS, plats, &np) != 0 || !np) {
    snprintf(why, wsize, "no platforms (no ICD installed)");
  } else {
    if (np > GP__LOADER_MAX_PLATFORMS)
      np = GP__LOADER_MAX_PLATFORMS;
    for (cl_uint p = 0; p < np; p++) {
      gp__loader_platform *pl = &found.platforms[p];
      info_str(pinfo, plats[p], CL_PLATFORM_NAME, pl->name, sizeof(pl->name));
      info_str(pinfo, plats[p], CL_PLATFORM_VENDOR, pl->vendor,
               sizeof(pl->vendor));
      info_str(pinfo, plats[p], CL_PLATFORM_VERSION, pl->version,
               sizeof(pl->version));
      cl_id devs[GP__LOADER_MAX_DEVICES];
      cl_uint nd = 0;
      if (devices(plats[p], CL_DEVICE_TYPE_ALL, GP__LOADER_MAX_DEVICES, devs,
                  &nd) != 0)
        nd = 0;
      if (nd > GP__LOADER_MAX_DEVICES)
        nd = GP__LOADER_MAX_DEVICES;
      cl_devices(dinfo, devs, nd, p);
    }
    found.num_platforms = np;
  }
  /* The ICD loader and its drivers stay loaded: unloading a driver that
   * started threads is not safe, and the process asked for a reason. */
}

/* ------------------------------------------------------------------ */
/* Vulkan                                                               */

typedef int32_t vk_result;
typedef void *vk_handle; /* VkInstance, VkPhysicalDevice */
typedef void (*vk_void_fn)(void);

#define VK_STYPE_APPLICATION_INFO 0
#define VK_STYPE_INSTANCE_CREATE_INFO 1
#define VK_API_1_1 ((1u << 22) | (1u << 12))
#define VK_INCOMPLETE 5
/* VkPhysicalDeviceFeatures: 55 VkBool32 in 1.0; pipelineStatisticsQuery
 * is the 25th. */
#define VK_FEATURE_PIPELINE_STATISTICS 24

typedef struct vk_app_info {
  uint32_t stype;
  const void *next;
  const char *app_name;
  uint32_t app_version;
  const char *engine_name;
  uint32_t engine_version;
  uint32_t api_version;
} vk_app_info;

typedef struct vk_instance_info {
  uint32_t stype;
  const void *next;
  uint32_t flags;
  const vk_app_info *app;
  uint32_t num_layers;
  const char *const *layers;
  uint32_t num_extensions;
  const char *const *extensions;
} vk_instance_info;

/* The first fields of VkPhysicalDeviceProperties. */
typedef struct vk_props_head {
  uint32_t api_version;
  uint32_t driver_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t device_type;
  char name[256];
} vk_props_head;

typedef vk_void_fn (*get_proc_fn)(vk_handle, const char *);
typedef vk_result (*create_instance_fn)(const vk_instance_info *, const void *,
                                        vk_handle *);
typedef void (*destroy_instance_fn)(vk_handle, const void *);
typedef vk_result (*enum_devices_fn)(vk_handle, uint32_t *, vk_handle *);
typedef void (*get_props_fn)(vk_handle, void *);

static const char *vk_type_name(uint32_t t) {
  switch (t) {
  case 1:
    return "integrated GPU";
  case 2:
    return "discrete GPU";
  case 3:
    return "virtual GPU";
  case 4:
    return "CPU";
  default:
    return "other";
  }
}

static void vk_devices(get_proc_fn gipa, vk_handle inst) {
  enum_devices_fn enumerate =
      (enum_devices_fn)(uintptr_t)gipa(inst, "vkEnumeratePhysicalDevices");
  get_props_fn props =
      (get_props_fn)(uintptr_t)gipa(inst, "vkGetPhysicalDeviceProperties");
  get_props_fn features =
      (get_props_fn)(uintptr_t)gipa(inst, "vkGetPhysicalDeviceFeatures");
  vk_handle devs[GP__LOADER_MAX_DEVICES];
  uint32_t n = GP__LOADER_MAX_DEVICES;
  vk_result r = enumerate && props ? enumerate(inst, &n, devs) : -1;
  if ((r != 0 && r != VK_INCOMPLETE) || n == 0) {
    snprintf(found.vulkan_status, sizeof(found.vulkan_status),
             "no physical devices (no Vulkan driver installed?)");
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    gp__loader_device *d = new_device(GP_API_VULKAN);
    if (!d)
      return;
    /* Far larger than VkPhysicalDeviceProperties (824 bytes in 1.3) and
     * VkPhysicalDeviceFeatures (220). */
    _Alignas(16) unsigned char buf[4096];
    memset(buf, 0, sizeof(buf));
    props(devs[i], buf);
    vk_props_head h;
    memcpy(&h, buf, sizeof(h));
    h.name[sizeof(h.name) - 1] = '\0';
    const char *vendor = gp__gpu_vendor_name(h.vendor_id);
    d->index = i;
    snprintf(d->name, sizeof(d->name), "%s", h.name);
    if (vendor)
      snprintf(d->vendor, sizeof(d->vendor), "%s", vendor);
    else
      snprintf(d->vendor, sizeof(d->vendor), "0x%04x", h.vendor_id);
    snprintf(d->version, sizeof(d->version), "Vulkan %u.%u.%u",
             h.api_version >> 22, (h.api_version >> 12) & 0x3ff,
             h.api_version & 0xfff);
    d->type = vk_type_name(h.device_type);
    d->driver_version = h.driver_version;
    uint32_t stats = 1;
    if (features) {
      memset(buf, 0, sizeof(buf));
      features(devs[i], buf);
      memcpy(&stats, buf + VK_FEATURE_PIPELINE_STATISTICS * sizeof(uint32_t),
             sizeof(stats));
    }
    size_t first = stats ? 0 : GP_ARRAY_SIZE(vulkan_counters) - 1;
    for (size_t k = first; k < GP_ARRAY_SIZE(vulkan_counters); k++)
      d->names[d->num_counters++] = vulkan_counters[k];
    d->counters = d->names;
  }
}

static void ask_vulkan(void) {
  char *why = found.vulkan_status;
  size_t wsize = sizeof(found.vulkan_status);
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, wsize, "no loader (libvulkan.so.1) on this system");
    return;
  }
  get_proc_fn gipa =
      (get_proc_fn)(uintptr_t)dlsym(lib, "vkGetInstanceProcAddr");
  create_instance_fn create =
      gipa ? (create_instance_fn)(uintptr_t)gipa(NULL, "vkCreateInstance")
           : NULL;
  if (!create) {
    snprintf(why, wsize, "the loader lacks vkCreateInstance");
    return;
  }
  vk_app_info app = {.stype = VK_STYPE_APPLICATION_INFO,
                     .app_name = "gpuperf list",
                     .engine_name = "gpuperf",
                     .api_version = VK_API_1_1};
  vk_instance_info ci = {.stype = VK_STYPE_INSTANCE_CREATE_INFO, .app = &app};
  vk_handle inst = NULL;
  vk_result r = create(&ci, NULL, &inst);
  if (r != 0 || !inst) {
    snprintf(why, wsize,
             "no instance (vkCreateInstance returned %d: no Vulkan driver "
             "installed?)",
             (int)r);
    return;
  }
  vk_devices(gipa, inst);
  destroy_instance_fn destroy =
      (destroy_instance_fn)(uintptr_t)gipa(inst, "vkDestroyInstance");
  if (destroy)
    destroy(inst, NULL);
}

/* ------------------------------------------------------------------ */
/* OpenGL                                                               */

/* libgpuperf-gl.so: $GPUPERF_GL_LIB, else beside this libgpuperf or in
 * its gpuperf/ subdirectory; its probe makes a context of its own (EGL,
 * surfaceless) and says what a recorded program would get. */
static void ask_opengl(void) {
  char path[4096] = "";
  const char *env = getenv("GPUPERF_GL_LIB");
  void *h = NULL;
  if (env && *env) {
    snprintf(path, sizeof(path), "%s", env);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  } else {
    Dl_info info;
    if (dladdr((void *)gp__loaders_get, &info) && info.dli_fname) {
      const char *slash = strrchr(info.dli_fname, '/');
      int dir = slash ? (int)(slash - info.dli_fname) : 1;
      const char *base = slash ? info.dli_fname : ".";
      static const char *const where[] = {"%.*s/libgpuperf-gl.so",
                                          "%.*s/gpuperf/libgpuperf-gl.so"};
      for (size_t i = 0; i < GP_ARRAY_SIZE(where) && !h; i++) {
        snprintf(path, sizeof(path), where[i], dir, base);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      }
    }
  }
  if (!h) {
    snprintf(found.opengl_status, sizeof(found.opengl_status),
             "libgpuperf-gl.so not found (it is built where the GL and EGL "
             "headers are: libgl-dev, libegl-dev)");
    return;
  }
  gp__gl_probe_fn probe = (gp__gl_probe_fn)dlsym(h, "gpuperf_gl_probe");
  static gp__gl_probe_result r;
  if (!probe || probe(&r) != 0) {
    snprintf(found.opengl_status, sizeof(found.opengl_status), "%s",
             probe ? r.error : "libgpuperf-gl.so has no probe (another build)");
    return; /* kept loaded: its strings may be in use */
  }
  gp__loader_device *d = new_device(GP_API_OPEN_GL);
  if (!d)
    return;
  snprintf(d->name, sizeof(d->name), "%s", r.name);
  snprintf(d->vendor, sizeof(d->vendor), "%s", r.vendor);
  snprintf(d->version, sizeof(d->version), "%s", r.version);
  d->type = "OpenGL";
  d->num_counters = r.num_counters;
  d->counters = r.counters;
  d->categories = r.categories;
}

/* ------------------------------------------------------------------ */
/* Asking, matching, printing                                          */

static void ask(void) {
#ifdef LOADERS_SANITIZED
  /* The loaders and drivers keep allocations the leak checker would
   * report as gpuperf's. */
  snprintf(found.opencl_status, sizeof(found.opencl_status),
           "not listed in a sanitizer build");
  snprintf(found.vulkan_status, sizeof(found.vulkan_status),
           "not listed in a sanitizer build");
  snprintf(found.opengl_status, sizeof(found.opengl_status),
           "not listed in a sanitizer build");
  return;
#endif
  ask_opencl();
  ask_vulkan();
  ask_opengl();
}

/* See loaders.h. */
const gp__loaders *gp__loaders_get(void) {
  pthread_once(&once, ask);
  return &found;
}

/* See loaders.h. */
bool gp__loaders_match(const char *name) {
  const gp__loaders *l = gp__loaders_get();
  bool glob = strpbrk(name, "*?[") != NULL;
  for (uint32_t i = 0; i < l->num_devices; i++)
    for (uint32_t k = 0; k < l->devices[i].num_counters; k++) {
      const char *c = l->devices[i].counters[k];
      if (glob ? fnmatch(name, c, 0) == 0 : strcmp(name, c) == 0)
        return true;
    }
  return false;
}

/* "counters (HOW): A, B" for the counters of d from first to end. */
static void print_counters(FILE *out, const gp__loader_device *d,
                           uint32_t first, uint32_t end, const char *how) {
  if (first >= end)
    return;
  fprintf(out, "      counters (%s): ", how);
  for (uint32_t k = first; k < end; k++)
    fprintf(out, "%s%s", k > first ? ", " : "", d->counters[k]);
  fputc('\n', out);
}

static void print_opencl(FILE *out, const gp__loaders *l) {
  if (l->opencl_status[0]) {
    fprintf(out, "\nOpenCL: %s\n", l->opencl_status);
    return;
  }
  fprintf(out, "\nOpenCL (through the ICD loader; `gpuperf record` records "
               "their kernels, copies and calls):\n");
  for (uint32_t p = 0; p < l->num_platforms; p++) {
    const gp__loader_platform *pl = &l->platforms[p];
    fprintf(out, "  platform %u: %s (%s, %s)\n", p, pl->name, pl->vendor,
            pl->version);
    bool any = false;
    for (uint32_t i = 0; i < l->num_devices; i++) {
      const gp__loader_device *d = &l->devices[i];
      if (d->api != GP_API_OPEN_CL || d->platform != p)
        continue;
      char mb[32];
      gp__list_fmt_bytes(mb, sizeof(mb), (double)d->memory_bytes);
      fprintf(out, "    device %u: %s [%s] %s, %s\n", d->index, d->name,
              d->type, d->vendor, d->version);
      fprintf(out, "      %u compute units, %u MHz, %s global memory\n",
              d->compute_units, d->clock_mhz, mb);
      print_counters(out, d, 0, d->num_counters,
                     "derived from the command timeline when recorded");
      any = true;
    }
    if (!any)
      fprintf(out, "    (no devices)\n");
  }
}

static void print_vulkan(FILE *out, const gp__loaders *l) {
  if (l->vulkan_status[0]) {
    fprintf(out, "\nVulkan: %s\n", l->vulkan_status);
    return;
  }
  fprintf(out, "\nVulkan (through the loader; `gpuperf record` records "
               "their render stages, calls, memory and debug log):\n");
  for (uint32_t i = 0; i < l->num_devices; i++) {
    const gp__loader_device *d = &l->devices[i];
    if (d->api != GP_API_VULKAN)
      continue;
    fprintf(out, "  device %u: %s [%s] vendor %s, %s, driver 0x%x\n", d->index,
            d->name, d->type, d->vendor, d->version, d->driver_version);
    /* Utilization is the last: the pipeline statistics come first. */
    print_counters(out, d, 0, d->num_counters - 1,
                   "per render stage, from pipeline-statistics queries");
    print_counters(out, d, d->num_counters - 1, d->num_counters,
                   "derived from its command buffers' GPU times when "
                   "recorded");
  }
}

static void print_opengl(FILE *out, const gp__loaders *l) {
  if (l->opengl_status[0]) {
    fprintf(out, "\nOpenGL: %s\n", l->opengl_status);
    return;
  }
  fprintf(out, "\nOpenGL (a context of libgpuperf-gl.so's own; `gpuperf "
               "record` records frames, render passes, calls and debug "
               "output):\n");
  for (uint32_t i = 0; i < l->num_devices; i++) {
    const gp__loader_device *d = &l->devices[i];
    if (d->api != GP_API_OPEN_GL)
      continue;
    fprintf(out, "  device: %s, %s, %s\n", d->name, d->vendor, d->version);
    /* Runs of one category: gpuperf's per-frame counters, the driver's
     * GL_AMD_performance_monitor groups, then Utilization. */
    for (uint32_t k = 0; k < d->num_counters;) {
      const char *cat = d->categories ? d->categories[k] : "";
      uint32_t e = k + 1;
      while (e < d->num_counters && d->categories &&
             strcmp(d->categories[e], cat) == 0)
        e++;
      char how[160];
      snprintf(how, sizeof(how), "%s", cat);
      print_counters(out, d, k, e, how);
      k = e;
    }
  }
}

/* See loaders.h. */
void gp__loaders_print(FILE *out) {
  const gp__loaders *l = gp__loaders_get();
  print_opencl(out, l);
  print_vulkan(out, l);
  print_opengl(out, l);
}
