/*
 * list_opencl.c - the OpenCL platforms and devices present, for
 * `gpuperf list`, asked of the ICD loader (libOpenCL.so.1) opened at run
 * time: the CLI does not depend on OpenCL, and says so in one line where
 * there is no loader.
 *
 * The few OpenCL enum values used are written here (from the Khronos
 * cl.h) so that no OpenCL headers are needed to build the CLI.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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

#define MAX_IDS 32

static const char *info_str(get_info_fn f, cl_id id, cl_uint what, char *buf,
                            size_t size) {
  buf[0] = '\0';
  if (f(id, what, size - 1, buf, NULL) != 0)
    snprintf(buf, size, "?");
  buf[size - 1] = '\0';
  return buf;
}

static const char *type_name(cl_ulong t) {
  if (t & CL_DEVICE_TYPE_GPU)
    return "GPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "accelerator";
  if (t & CL_DEVICE_TYPE_CPU)
    return "CPU";
  return "other";
}

/* See cli.h. */
int cli_list_opencl(FILE *out) {
#if defined(__SANITIZE_ADDRESS__)
#define LIST_OPENCL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIST_OPENCL_SANITIZED 1
#endif
#endif
#ifdef LIST_OPENCL_SANITIZED
  /* The ICD loader and drivers keep allocations the leak checker would
   * report as gpuperf's. */
  fprintf(out, "\nOpenCL: not listed in a sanitizer build\n");
  return 0;
#endif
  /* RTLD_LOCAL: the loader's symbols stay out of the CLI's namespace. */
  void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(out, "\nOpenCL: no ICD loader (libOpenCL.so.1) on this system\n");
    return 0;
  }
  get_platforms_fn platforms =
      (get_platforms_fn)(uintptr_t)dlsym(lib, "clGetPlatformIDs");
  get_info_fn pinfo = (get_info_fn)(uintptr_t)dlsym(lib, "clGetPlatformInfo");
  get_devices_fn devices =
      (get_devices_fn)(uintptr_t)dlsym(lib, "clGetDeviceIDs");
  get_info_fn dinfo = (get_info_fn)(uintptr_t)dlsym(lib, "clGetDeviceInfo");
  if (!platforms || !pinfo || !devices || !dinfo) {
    fprintf(out, "\nOpenCL: the ICD loader lacks the OpenCL 1.0 calls\n");
    dlclose(lib);
    return 0;
  }
  cl_id plats[MAX_IDS];
  cl_uint np = 0;
  if (platforms(MAX_IDS, plats, &np) != 0 || np == 0) {
    fprintf(out, "\nOpenCL: no platforms (no ICD installed)\n");
    dlclose(lib);
    return 0;
  }
  if (np > MAX_IDS)
    np = MAX_IDS;
  int ndev = 0;
  fprintf(out, "\nOpenCL (through the ICD loader; `gpuperf record` records "
               "their kernels, copies and calls):\n");
  for (cl_uint p = 0; p < np; p++) {
    char name[256], vendor[256], version[256];
    fprintf(
        out, "  platform %u: %s (%s, %s)\n", p,
        info_str(pinfo, plats[p], CL_PLATFORM_NAME, name, sizeof(name)),
        info_str(pinfo, plats[p], CL_PLATFORM_VENDOR, vendor, sizeof(vendor)),
        info_str(pinfo, plats[p], CL_PLATFORM_VERSION, version,
                 sizeof(version)));
    cl_id devs[MAX_IDS];
    cl_uint nd = 0;
    if (devices(plats[p], CL_DEVICE_TYPE_ALL, MAX_IDS, devs, &nd) != 0)
      nd = 0;
    if (nd > MAX_IDS)
      nd = MAX_IDS;
    for (cl_uint d = 0; d < nd; d++) {
      cl_ulong type = 0, mem = 0;
      cl_uint cus = 0, mhz = 0;
      dinfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
      dinfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus), &cus, NULL);
      dinfo(devs[d], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(mhz), &mhz, NULL);
      dinfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
      char mb[32];
      fprintf(
          out, "    device %u: %s [%s] %s, %s\n", d,
          info_str(dinfo, devs[d], CL_DEVICE_NAME, name, sizeof(name)),
          type_name(type),
          info_str(dinfo, devs[d], CL_DEVICE_VENDOR, vendor, sizeof(vendor)),
          info_str(dinfo, devs[d], CL_DEVICE_VERSION, version,
                   sizeof(version)));
      fprintf(out,
              "      %u compute units, %u MHz, %s global memory; counters: "
              "Utilization, Utilization.<queue> (derived from the command "
              "timeline when recorded)\n",
              cus, mhz, cli_fmt_bytes(mb, sizeof(mb), (double)mem));
      ndev++;
    }
    if (nd == 0)
      fprintf(out, "    (no devices)\n");
  }
  dlclose(lib);
  return ndev;
}
