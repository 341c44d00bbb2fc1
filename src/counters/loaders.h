/*
 * loaders.h - the OpenCL, Vulkan and OpenGL devices present on this
 * machine, as their loaders (for GL: libgpuperf-gl.so's probe) report
 * them, and the counters a recorded program gets on each (loaders.c).
 */
#ifndef GPUPERF_COUNTERS_LOADERS_H
#define GPUPERF_COUNTERS_LOADERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GP__LOADER_MAX_PLATFORMS 8
#define GP__LOADER_MAX_DEVICES 32
#define GP__LOADER_MAX_COUNTERS 8

typedef struct gp__loader_platform {
  char name[256], vendor[128], version[256];
} gp__loader_platform;

typedef struct gp__loader_device {
  uint32_t api;      /* GP_API_OPEN_CL, GP_API_VULKAN or GP_API_OPEN_GL */
  uint32_t platform; /* OpenCL: its platform's index; Vulkan: 0 */
  uint32_t index;    /* within its platform (OpenCL) or instance (Vulkan) */
  char name[256], vendor[128], version[256];
  const char *type;                  /* "GPU", "CPU", "integrated GPU", ... */
  uint32_t compute_units, clock_mhz; /* OpenCL */
  uint64_t memory_bytes;             /* OpenCL */
  uint32_t driver_version;           /* Vulkan */
  uint32_t num_counters;
  const char *const *counters;   /* num_counters names */
  const char *const *categories; /* OpenGL: each counter's; else NULL */
  const char *names[GP__LOADER_MAX_COUNTERS]; /* what counters may point to */
} gp__loader_device;

/* What libgpuperf-gl.so's probe (gpuperf_gl_probe) says of the GL device
 * of a context of its own (EGL, surfaceless), without registering it:
 * 0 and the fields, or -1 and why in error. Strings live as long as the
 * process. */
typedef struct gp__gl_probe_result {
  char name[256], vendor[128], version[256];
  uint32_t num_counters;
  const char **counters, **categories;
  char error[160];
} gp__gl_probe_result;
typedef int (*gp__gl_probe_fn)(gp__gl_probe_result *out);

/* What the loaders said: the devices, and for each API a line saying why
 * it has none ("" when it has some). */
typedef struct gp__loaders {
  uint32_t num_platforms, num_devices;
  gp__loader_platform platforms[GP__LOADER_MAX_PLATFORMS];
  gp__loader_device devices[GP__LOADER_MAX_DEVICES];
  char opencl_status[160], vulkan_status[160], opengl_status[200];
} gp__loaders;

/*
 * Asks the loaders, the first time (dlopen of libOpenCL.so.1 and
 * libvulkan.so.1: the drivers initialise, which takes a moment and must
 * not happen in a program before its own first call), and returns what
 * they said, kept for the life of the process. Never NULL.
 */
const gp__loaders *gp__loaders_get(void);

/* Whether some device of the loaders gets a counter that name (a name or
 * a shell glob) matches. Asks the loaders if that was not done yet. */
bool gp__loaders_match(const char *name);

/* Prints the loaders' devices as text: the sections that follow
 * gpuperf's own devices in `gpuperf list` (list.c writes the JSON). */
void gp__loaders_print(FILE *out);

#endif /* GPUPERF_COUNTERS_LOADERS_H */
