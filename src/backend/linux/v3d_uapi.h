/*
 * v3d_uapi.h - the part of the kernel's V3D DRM interface gpuperf uses,
 * written from the layouts include/uapi/drm/v3d_drm.h and drm.h document
 * (these machines have no kernel DRM headers installed). Sizes are
 * checked at compile time: a struct that crosses into the kernel must
 * have exactly the size whose ioctl number encodes it.
 *
 *   ioctl                        nr    struct (bytes)
 *   DRM_IOCTL_VERSION            0x00  gp__drm_version (64 on LP64)
 *   DRM_IOCTL_V3D_SUBMIT_CL      0x40  gp__v3d_submit_cl (72)
 *   DRM_IOCTL_V3D_GET_PARAM      0x44  gp__v3d_get_param (16)
 *   DRM_IOCTL_V3D_SUBMIT_CSD     0x47  gp__v3d_submit_csd (88)
 *   DRM_IOCTL_V3D_PERFMON_CREATE 0x48  gp__v3d_perfmon_create (40)
 *   ..._PERFMON_DESTROY          0x49  gp__v3d_perfmon_destroy (4)
 *   ..._PERFMON_GET_VALUES       0x4a  gp__v3d_perfmon_get_values (16)
 *   ..._PERFMON_GET_COUNTER      0x4c  gp__v3d_perfmon_get_counter (360)
 *   ..._PERFMON_SET_GLOBAL       0x4d  gp__v3d_perfmon_set_global (8)
 *
 * The test double of the render node (tests/v3d) includes this file too,
 * so the two sides agree by construction; what they agree on is checked
 * against the kernel's header by the sizes above.
 */
#ifndef GPUPERF_LINUX_V3D_UAPI_H
#define GPUPERF_LINUX_V3D_UAPI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

#define GP__DRM_IOCTL_BASE 'd'
#define GP__DRM_COMMAND_BASE 0x40

typedef struct gp__drm_version {
  int version_major, version_minor, version_patchlevel;
  size_t name_len;
  char *name;
  size_t date_len;
  char *date;
  size_t desc_len;
  char *desc;
} gp__drm_version;

typedef struct gp__v3d_submit_cl {
  uint32_t bcl_start, bcl_end, rcl_start, rcl_end;
  uint32_t in_sync_bcl, in_sync_rcl, out_sync;
  uint32_t qma, qms, qts;
  uint64_t bo_handles;
  uint32_t bo_handle_count;
  uint32_t flags;
  uint32_t perfmon_id; /* 0: none */
  uint32_t pad;
  uint64_t extensions;
} gp__v3d_submit_cl;

typedef struct gp__v3d_submit_csd {
  uint32_t cfg[7];
  uint32_t coef[4];
  uint32_t pad0; /* the compiler's padding before bo_handles, named */
  uint64_t bo_handles;
  uint32_t bo_handle_count;
  uint32_t in_sync, out_sync;
  uint32_t perfmon_id;
  uint64_t extensions;
  uint32_t flags;
  uint32_t pad;
} gp__v3d_submit_csd;

/* DRM_V3D_PARAM_* */
enum {
  GP__V3D_PARAM_CORE0_IDENT0 = 4,
  GP__V3D_PARAM_CORE0_IDENT1 = 5,
  GP__V3D_PARAM_SUPPORTS_PERFMON = 10,
  GP__V3D_PARAM_MAX_PERF_COUNTERS = 13
};

typedef struct gp__v3d_get_param {
  uint32_t param;
  uint32_t pad;
  uint64_t value;
} gp__v3d_get_param;

#define GP__V3D_MAX_PERF_COUNTERS 32 /* DRM_V3D_MAX_PERF_COUNTERS */

typedef struct gp__v3d_perfmon_create {
  uint32_t id; /* out */
  uint32_t ncounters;
  uint8_t counters[GP__V3D_MAX_PERF_COUNTERS];
} gp__v3d_perfmon_create;

typedef struct gp__v3d_perfmon_destroy {
  uint32_t id;
} gp__v3d_perfmon_destroy;

typedef struct gp__v3d_perfmon_get_values {
  uint32_t id;
  uint32_t pad;
  uint64_t values_ptr; /* ncounters uint64_t, cumulative since creation */
} gp__v3d_perfmon_get_values;

typedef struct gp__v3d_perfmon_get_counter {
  uint8_t counter;
  uint8_t name[64];
  uint8_t category[32];
  uint8_t description[256];
  uint8_t reserved[7]; /* must be zero */
} gp__v3d_perfmon_get_counter;

#define GP__V3D_PERFMON_CLEAR_GLOBAL 0x0001

typedef struct gp__v3d_perfmon_set_global {
  uint32_t flags;
  uint32_t id;
} gp__v3d_perfmon_set_global;

#define GP__DRM_IOCTL_VERSION _IOWR(GP__DRM_IOCTL_BASE, 0x00, gp__drm_version)
#define GP__V3D_IO(rw, nr, type) rw(GP__DRM_IOCTL_BASE, 0x40 + (nr), type)
#define GP__V3D_IOCTL_SUBMIT_CL GP__V3D_IO(_IOWR, 0x00, gp__v3d_submit_cl)
#define GP__V3D_IOCTL_GET_PARAM GP__V3D_IO(_IOWR, 0x04, gp__v3d_get_param)
#define GP__V3D_IOCTL_SUBMIT_CSD GP__V3D_IO(_IOW, 0x07, gp__v3d_submit_csd)
#define GP__V3D_IOCTL_PERFMON_CREATE                                           \
  GP__V3D_IO(_IOWR, 0x08, gp__v3d_perfmon_create)
#define GP__V3D_IOCTL_PERFMON_DESTROY                                          \
  GP__V3D_IO(_IOWR, 0x09, gp__v3d_perfmon_destroy)
#define GP__V3D_IOCTL_PERFMON_GET_VALUES                                       \
  GP__V3D_IO(_IOWR, 0x0a, gp__v3d_perfmon_get_values)
#define GP__V3D_IOCTL_PERFMON_GET_COUNTER                                      \
  GP__V3D_IO(_IOWR, 0x0c, gp__v3d_perfmon_get_counter)
#define GP__V3D_IOCTL_PERFMON_SET_GLOBAL                                       \
  GP__V3D_IO(_IOW, 0x0d, gp__v3d_perfmon_set_global)

_Static_assert(sizeof(gp__v3d_submit_cl) == 72, "drm_v3d_submit_cl");
_Static_assert(sizeof(gp__v3d_submit_csd) == 88, "drm_v3d_submit_csd");
_Static_assert(sizeof(gp__v3d_get_param) == 16, "drm_v3d_get_param");
_Static_assert(sizeof(gp__v3d_perfmon_create) == 40, "perfmon_create");
_Static_assert(sizeof(gp__v3d_perfmon_destroy) == 4, "perfmon_destroy");
_Static_assert(sizeof(gp__v3d_perfmon_get_values) == 16, "get_values");
_Static_assert(sizeof(gp__v3d_perfmon_get_counter) == 360, "get_counter");
_Static_assert(sizeof(gp__v3d_perfmon_set_global) == 8, "set_global");

#endif /* GPUPERF_LINUX_V3D_UAPI_H */
