/*
 * list_vulkan.c - the Vulkan physical devices present, for `gpuperf list`,
 * asked of the Vulkan loader (libvulkan.so.1) opened at run time: the CLI
 * does not depend on Vulkan, and says so in one line where there is no
 * loader or no driver.
 *
 * Only the start of the Vulkan structures used is written here (the
 * layouts are the Vulkan 1.0 ABI: sType first, then pNext, fields in
 * declaration order), so that no Vulkan headers are needed to build the
 * CLI. VkPhysicalDeviceProperties is read into a buffer far larger than
 * the structure; only its first fields are looked at.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef int32_t vk_result;
typedef void *vk_handle; /* VkInstance, VkPhysicalDevice */
typedef void (*vk_void_fn)(void);

#define VK_STYPE_APPLICATION_INFO 0
#define VK_STYPE_INSTANCE_CREATE_INFO 1
#define VK_API_1_1 ((1u << 22) | (1u << 12))

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

#define MAX_DEVS 16

static const char *type_name(uint32_t t) {
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

static const char *vendor_name(uint32_t v) {
  switch (v) {
  case 0x1002:
    return "AMD";
  case 0x10de:
    return "NVIDIA";
  case 0x8086:
    return "Intel";
  case 0x13b5:
    return "ARM";
  case 0x5143:
    return "Qualcomm";
  case 0x14e4:
    return "Broadcom";
  case 0x10005:
    return "Mesa";
  default:
    return NULL;
  }
}

/* Prints the devices of an instance; returns their number. */
static int print_devices(FILE *out, get_proc_fn gipa, vk_handle inst) {
  enum_devices_fn enumerate =
      (enum_devices_fn)(uintptr_t)gipa(inst, "vkEnumeratePhysicalDevices");
  get_props_fn props =
      (get_props_fn)(uintptr_t)gipa(inst, "vkGetPhysicalDeviceProperties");
  vk_handle devs[MAX_DEVS];
  uint32_t n = MAX_DEVS;
  vk_result r = enumerate && props ? enumerate(inst, &n, devs) : -1;
  if ((r != 0 && r != 5 /* VK_INCOMPLETE */) || n == 0) {
    fprintf(out, "\nVulkan: no physical devices (no Vulkan driver "
                 "installed?)\n");
    return 0;
  }
  fprintf(out, "\nVulkan (through the loader; `gpuperf record` records "
               "their render stages, calls, memory and debug log):\n");
  for (uint32_t i = 0; i < n; i++) {
    /* Far larger than VkPhysicalDeviceProperties (824 bytes in 1.3). */
    _Alignas(16) unsigned char buf[4096];
    memset(buf, 0, sizeof(buf));
    props(devs[i], buf);
    vk_props_head h;
    memcpy(&h, buf, sizeof(h));
    h.name[sizeof(h.name) - 1] = '\0';
    const char *vendor = vendor_name(h.vendor_id);
    char vid[16];
    snprintf(vid, sizeof(vid), "0x%04x", h.vendor_id);
    fprintf(out,
            "  device %u: %s [%s] vendor %s, Vulkan %u.%u.%u, driver "
            "0x%x\n",
            i, h.name, type_name(h.device_type), vendor ? vendor : vid,
            h.api_version >> 22, (h.api_version >> 12) & 0x3ff,
            h.api_version & 0xfff, h.driver_version);
    fprintf(out, "      counters (per render stage, from pipeline-statistics "
                 "queries):");
    for (int k = 0; k < CLI_VULKAN_COUNTERS; k++)
      fprintf(out, "%s %s", k ? "," : "", cli_vulkan_counters[k]);
    fprintf(out, "\n");
  }
  return (int)n;
}

/* See cli.h. */
int cli_list_vulkan(FILE *out) {
#if defined(__SANITIZE_ADDRESS__)
#define LIST_VULKAN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIST_VULKAN_SANITIZED 1
#endif
#endif
#ifdef LIST_VULKAN_SANITIZED
  /* The loader and drivers keep allocations the leak checker would report
   * as gpuperf's. */
  fprintf(out, "\nVulkan: not listed in a sanitizer build\n");
  return 0;
#endif
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(out, "\nVulkan: no loader (libvulkan.so.1) on this system\n");
    return 0;
  }
  get_proc_fn gipa =
      (get_proc_fn)(uintptr_t)dlsym(lib, "vkGetInstanceProcAddr");
  create_instance_fn create =
      gipa ? (create_instance_fn)(uintptr_t)gipa(NULL, "vkCreateInstance")
           : NULL;
  if (!create) {
    fprintf(out, "\nVulkan: the loader lacks vkCreateInstance\n");
    dlclose(lib);
    return 0;
  }
  vk_app_info app = {.stype = VK_STYPE_APPLICATION_INFO,
                     .app_name = "gpuperf list",
                     .engine_name = "gpuperf",
                     .api_version = VK_API_1_1};
  vk_instance_info ci = {.stype = VK_STYPE_INSTANCE_CREATE_INFO, .app = &app};
  vk_handle inst = NULL;
  vk_result r = create(&ci, NULL, &inst);
  int n = 0;
  if (r != 0 || !inst) {
    fprintf(out,
            "\nVulkan: no instance (vkCreateInstance returned %d: no "
            "Vulkan driver installed?)\n",
            (int)r);
  } else {
    n = print_devices(out, gipa, inst);
    destroy_instance_fn destroy =
        (destroy_instance_fn)(uintptr_t)gipa(inst, "vkDestroyInstance");
    if (destroy)
      destroy(inst, NULL);
  }
  dlclose(lib);
  return n;
}
