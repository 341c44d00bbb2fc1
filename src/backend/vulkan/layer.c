/*
 * layer.c - the layer's entry points and dispatch: interface negotiation
 * with the loader, vkGetInstanceProcAddr and vkGetDeviceProcAddr, instance
 * and device creation (with the next layer's functions kept per instance
 * and per device, found by the loader's dispatch key), the registration
 * of each Vulkan device with the core (GpuInfo: name, vendor, driver,
 * UUID, one hardware queue per VkQueue) and its context.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend_off.h"
#include "vkInt.h"

const gp_backend_ops *gp__vk_core;
const gp_counters_backend_ops *gp__vk_counters;

/* See vkInt.h. */
void gp__vk_counters_load(void) {
  gp__vk_counters = gp_counters_backend_interface(
      GP_COUNTERS_BACKEND_VERSION, sizeof(gp_counters_backend_ops));
}

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static gp__vk_map instances; /* dispatch key -> gp__vk_instance */
static gp__vk_map devices;   /* dispatch key -> gp__vk_device */
static gp__vk_map phys_ids;  /* VkPhysicalDevice -> core device id + 1 */

static uint64_t key_of(const void *dispatchable) {
  return (uint64_t)(uintptr_t) * (void *const *)dispatchable;
}

/* ------------------------------------------------------------------ */
/* The core                                                             */

static const gp_backend_ops off_ops = GP__BACKEND_OFF_INIT;

static void flush_one(gp__vk_device *dev, void *user) {
  bool forced = *(bool *)user;
  pthread_mutex_lock(&dev->lock);
  gp__vk_resolve(dev, forced, NULL);
  pthread_mutex_unlock(&dev->lock);
}

/* In a signal handler finishing the session (core/death.c): the thread it
 * interrupted may hold dev's lock or be inside the driver, so neither is
 * touched unless the lock is free; the work in flight is lost, counted (a
 * device whose lock is held counts one: a loss, of unknown size). */
static void lose_one(gp__vk_device *dev, void *user) {
  (void)user;
  uint64_t n = 0;
  if (pthread_mutex_trylock(&dev->lock) == 0) {
    for (const gp__vk_pending *p = dev->pending; p; p = p->next)
      n++;
    pthread_mutex_unlock(&dev->lock);
  } else {
    n = 1;
  }
  if (n)
    gp__vk_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                    GP_DROP_SOURCE, 0, 0, n);
}

/* Flush hook: what finished is written; a forced flush waits for the rest
 * (the session is ending: their times are wanted), except in a signal
 * handler, which happens only when no present came within a second of
 * the signal (gp__vk_presented()). */
static void flush_hook(void *user, bool forced) {
  (void)user;
  if (forced && gp__vk_core->death_in_handler()) {
    if (!gp__vk_devices_try_each(lose_one, NULL))
      gp__vk_core->activity_add_drops(GP_ACTIVITY_KIND_RENDER_STAGE,
                                      GP_DROP_SOURCE, 0, 0, 1);
  } else
    gp__vk_devices_each(flush_one, &forced);
}

/* Whether the program presents (a safe point for core/death.c comes with
 * each present). Async-signal-safe. */
static atomic_bool presents_seen;
static bool presenting(void) {
  return atomic_load(&presents_seen);
}

/* See vkInt.h. */
void gp__vk_presented(void) {
  if (!atomic_load_explicit(&presents_seen, memory_order_relaxed))
    atomic_store(&presents_seen, true);
  gp__vk_core->death_point();
}

static void core_once(void) {
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  if (!c) {
    fprintf(stderr, "gpuperf: libgpuperf-vulkan.so and the libgpuperf it "
                    "loaded are of different builds: Vulkan calls are not "
                    "recorded\n");
    c = &off_ops;
  }
  gp__vk_core = c;
  c->activate();
  c->activity_add_flush_hook(flush_hook, NULL);
  c->death_set_defer(presenting);
}

/* See vkInt.h. */
void gp__vk_core_load(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, core_once);
}

/* ------------------------------------------------------------------ */
/* Registry                                                             */

/* See vkInt.h. */
gp__vk_device *gp__vk_device_of(const void *dispatchable) {
  if (!dispatchable)
    return NULL;
  pthread_mutex_lock(&reg_lock);
  gp__vk_device *d = gp__vk_map_get(&devices, key_of(dispatchable));
  pthread_mutex_unlock(&reg_lock);
  return d;
}

static gp__vk_instance *instance_of(const void *dispatchable) {
  pthread_mutex_lock(&reg_lock);
  gp__vk_instance *i = gp__vk_map_get(&instances, key_of(dispatchable));
  pthread_mutex_unlock(&reg_lock);
  return i;
}

/* fn on every device of the registry; reg_lock held. */
static void each_locked(void (*fn)(gp__vk_device *dev, void *user),
                        void *user) {
  for (size_t i = 0; i < devices.cap; i++)
    if (devices.keys[i])
      fn(devices.vals[i], user);
}

/* See vkInt.h. */
void gp__vk_devices_each(void (*fn)(gp__vk_device *dev, void *user),
                         void *user) {
  pthread_mutex_lock(&reg_lock);
  each_locked(fn, user);
  pthread_mutex_unlock(&reg_lock);
}

/* See vkInt.h. */
bool gp__vk_devices_try_each(void (*fn)(gp__vk_device *dev, void *user),
                             void *user) {
  if (pthread_mutex_trylock(&reg_lock) != 0)
    return false;
  each_locked(fn, user);
  pthread_mutex_unlock(&reg_lock);
  return true;
}

/* ------------------------------------------------------------------ */
/* Instances                                                            */

static VkLayerInstanceCreateInfo *
instance_link(const VkInstanceCreateInfo *ci) {
  for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext) {
    if (p->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
        ((const VkLayerInstanceCreateInfo *)p)->function == VK_LAYER_LINK_INFO)
      return (VkLayerInstanceCreateInfo *)p;
  }
  return NULL;
}

static bool has_ext(const char *const *names, uint32_t n, const char *want) {
  for (uint32_t i = 0; i < n; i++)
    if (strcmp(names[i], want) == 0)
      return true;
  return false;
}

/* The instance extensions that let a Vulkan 1.0 instance ask for the
 * device's properties2 with its ID properties, added to a copy of ci's
 * list in *mine (those the program enabled are not added twice). Returns
 * the new list (the caller frees it), or NULL when memory is short (*mine
 * as ci). */
static const char **add_props2_exts(const VkInstanceCreateInfo *ci,
                                    VkInstanceCreateInfo *mine) {
  static const char *const want[] = {
      VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME,
      VK_KHR_EXTERNAL_MEMORY_CAPABILITIES_EXTENSION_NAME};
  const char **names = malloc((ci->enabledExtensionCount + 2) * sizeof(*names));
  if (!names)
    return NULL;
  uint32_t n = ci->enabledExtensionCount;
  for (uint32_t i = 0; i < n; i++)
    names[i] = ci->ppEnabledExtensionNames[i];
  for (size_t i = 0; i < GP_ARRAY_SIZE(want); i++)
    if (!has_ext(ci->ppEnabledExtensionNames, ci->enabledExtensionCount,
                 want[i]))
      names[n++] = want[i];
  mine->enabledExtensionCount = n;
  mine->ppEnabledExtensionNames = names;
  return names;
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateInstance(const VkInstanceCreateInfo *ci,
                     const VkAllocationCallbacks *alloc, VkInstance *out) {
  VkLayerInstanceCreateInfo *link = instance_link(ci);
  if (!link || !link->u.pLayerInfo)
    return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr next =
      link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkCreateInstance create =
      (PFN_vkCreateInstance)next(VK_NULL_HANDLE, "vkCreateInstance");
  if (!create)
    return VK_ERROR_INITIALIZATION_FAILED;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext; /* for the next layer */
  uint32_t api = ci->pApplicationInfo && ci->pApplicationInfo->apiVersion
                     ? ci->pApplicationInfo->apiVersion
                     : VK_API_VERSION_1_0;
  /* The device's UUID and driver are asked with
   * vkGetPhysicalDeviceProperties2, which a Vulkan 1.0 instance may call
   * only with these extensions (the validation layer below checks it). */
  VkInstanceCreateInfo mine = *ci;
  const char **names = NULL;
  bool props2 = api >= VK_API_VERSION_1_1, khr = false;
  if (!props2) {
    names = add_props2_exts(ci, &mine);
    khr = props2 = names != NULL;
  }
  VkResult r = create(&mine, alloc, out);
  if (r != VK_SUCCESS && names) { /* as the program asked */
    khr = props2 = false;
    r = create(ci, alloc, out);
  }
  free(names);
  if (r != VK_SUCCESS)
    return r;
  gp__vk_core_load();
  gp__vk_instance *inst = calloc(1, sizeof(*inst));
  if (!inst)
    return VK_SUCCESS; /* the program runs on, unrecorded */
  inst->handle = *out;
  inst->gipa = next;
  inst->api_version = api;
#define GET(name) inst->name = (PFN_vk##name)next(*out, "vk" #name)
  GET(DestroyInstance);
  GET(EnumerateDeviceExtensionProperties);
  GET(GetPhysicalDeviceProperties);
  if (khr)
    inst->GetPhysicalDeviceProperties2 =
        (PFN_vkGetPhysicalDeviceProperties2)next(
            *out, "vkGetPhysicalDeviceProperties2KHR");
  else if (props2)
    GET(GetPhysicalDeviceProperties2);
  inst->id_props = api >= VK_API_VERSION_1_1 || khr;
  GET(GetPhysicalDeviceQueueFamilyProperties);
  GET(GetPhysicalDeviceMemoryProperties);
  GET(GetPhysicalDeviceFeatures);
  if (has_ext(ci->ppEnabledExtensionNames, ci->enabledExtensionCount,
              VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
    GET(CreateDebugUtilsMessengerEXT);
    GET(DestroyDebugUtilsMessengerEXT);
  }
#undef GET
  pthread_mutex_lock(&reg_lock);
  int rc = gp__vk_map_put(&instances, key_of(*out), inst);
  pthread_mutex_unlock(&reg_lock);
  if (rc != 0) {
    free(inst);
    return VK_SUCCESS;
  }
  gp__vk_log_attach(inst, alloc);
  return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL
layer_DestroyInstance(VkInstance instance, const VkAllocationCallbacks *alloc) {
  if (!instance)
    return;
  pthread_mutex_lock(&reg_lock);
  gp__vk_instance *inst = gp__vk_map_del(&instances, key_of(instance));
  pthread_mutex_unlock(&reg_lock);
  if (!inst)
    return;
  gp__vk_log_detach(inst, alloc);
  inst->DestroyInstance(instance, alloc);
  free(inst);
}

/* ------------------------------------------------------------------ */
/* Devices                                                              */

static bool device_offers(gp__vk_instance *inst, VkPhysicalDevice phys,
                          const char *name);

/* Registers the physical device with the core once; its hardware queues
 * are its queues, family by family. */
static void register_device(gp__vk_device *dev) {
  gp__vk_instance *inst = dev->inst;
  VkQueueFamilyProperties fams[64];
  uint32_t nf = 64;
  inst->GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nf, fams);
  uint32_t nq = 0;
  for (uint32_t f = 0; f < nf; f++) {
    dev->queue_base[f] = nq;
    dev->timestamp_bits[f] = fams[f].timestampValidBits;
    nq += fams[f].queueCount;
  }
  dev->num_families = nf;
  VkPhysicalDeviceMemoryProperties mp;
  inst->GetPhysicalDeviceMemoryProperties(dev->phys, &mp);
  for (uint32_t t = 0; t < mp.memoryTypeCount && t < VK_MAX_MEMORY_TYPES; t++)
    dev->mem_heap[t] = mp.memoryTypes[t].heapIndex;
  VkPhysicalDeviceProperties props;
  inst->GetPhysicalDeviceProperties(dev->phys, &props);
  dev->period = props.limits.timestampPeriod > 0
                    ? (double)props.limits.timestampPeriod
                    : 1.0;
  pthread_mutex_lock(&reg_lock);
  uintptr_t known =
      (uintptr_t)gp__vk_map_get(&phys_ids, (uint64_t)(uintptr_t)dev->phys);
  pthread_mutex_unlock(&reg_lock);
  if (known) {
    dev->device_id = (uint32_t)(known - 1);
    return;
  }
  /* The device's UUID (Vulkan 1.1 or the instance extensions the layer
   * enables) and its driver (1.2 or VK_KHR_driver_properties), whatever
   * version the program asked for. */
  VkPhysicalDeviceDriverProperties drv = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceIDProperties ids = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  bool have_ids = false, have_drv = false;
  if (inst->GetPhysicalDeviceProperties2) {
    have_drv =
        props.apiVersion >= VK_API_VERSION_1_2 ||
        device_offers(inst, dev->phys, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    have_ids = inst->id_props;
    void **tail = &p2.pNext;
    if (have_ids) {
      *tail = &ids;
      tail = &ids.pNext;
    }
    if (have_drv)
      *tail = &drv;
    if (have_ids || have_drv)
      inst->GetPhysicalDeviceProperties2(dev->phys, &p2);
  }
  char version[VK_MAX_DRIVER_INFO_SIZE + VK_MAX_DRIVER_NAME_SIZE + 32];
  if (have_drv && drv.driverName[0])
    snprintf(version, sizeof(version), "%s %s", drv.driverName, drv.driverInfo);
  else
    snprintf(version, sizeof(version), "%u.%u.%u",
             VK_API_VERSION_MAJOR(props.driverVersion),
             VK_API_VERSION_MINOR(props.driverVersion),
             VK_API_VERSION_PATCH(props.driverVersion));
  const char *vendor = gp__gpu_vendor_name(props.vendorID);
  char vbuf[16];
  if (!vendor) {
    snprintf(vbuf, sizeof(vbuf), "0x%04x", props.vendorID);
    vendor = vbuf;
  }
  static const char *const kinds[] = {"other", "integrated GPU", "discrete GPU",
                                      "virtual GPU", "CPU"};
  gp_device_queue_info q[64];
  char qnames[64][32];
  uint32_t n = 0;
  for (uint32_t f = 0; f < nf && n < 64; f++) {
    VkQueueFlags fl = fams[f].queueFlags;
    uint32_t kind = (fl & VK_QUEUE_GRAPHICS_BIT)   ? GP_QUEUE_GRAPHICS
                    : (fl & VK_QUEUE_COMPUTE_BIT)  ? GP_QUEUE_COMPUTE
                    : (fl & VK_QUEUE_TRANSFER_BIT) ? GP_QUEUE_COPY
                                                   : GP_QUEUE_OTHER;
    for (uint32_t i = 0; i < fams[f].queueCount && n < 64; i++, n++) {
      snprintf(qnames[n], sizeof(qnames[n]), "Queue %u.%u", f, i);
      q[n].name = qnames[n];
      q[n].description = kind == GP_QUEUE_GRAPHICS  ? "graphics"
                         : kind == GP_QUEUE_COMPUTE ? "compute"
                         : kind == GP_QUEUE_COPY    ? "transfer"
                                                    : "";
      q[n].kind = kind;
      q[n].reserved0 = 0;
    }
  }
  gp_device_info info;
  memset(&info, 0, sizeof(info));
  info.api = GP_API_VULKAN;
  info.name = props.deviceName;
  info.vendor = vendor;
  info.model = props.deviceName;
  info.architecture =
      props.deviceType < GP_ARRAY_SIZE(kinds) ? kinds[props.deviceType] : "";
  info.driver_version = version;
  if (have_ids)
    memcpy(info.uuid, ids.deviceUUID, 16);
  info.max_threads_per_block = props.limits.maxComputeWorkGroupInvocations;
  info.max_shared_memory_per_block = props.limits.maxComputeSharedMemorySize;
  info.num_queues = n;

  for (uint32_t h = 0; h < mp.memoryHeapCount; h++)
    if (mp.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.global_memory_bytes += mp.memoryHeaps[h].size;
  uint32_t id = 0;
  if (gp__vk_core->device_register(&info, q, n, &id) != 0)
    return;
  dev->device_id = id;
  gp__vk_core->device_set_frontier(id, gp__vk_frontier, NULL);
  pthread_mutex_lock(&reg_lock);
  gp__vk_map_put(&phys_ids, (uint64_t)(uintptr_t)dev->phys,
                 (void *)(uintptr_t)(id + 1));
  pthread_mutex_unlock(&reg_lock);
  /* The statistics only where the feature is on: a device the driver
   * would not create with it has Utilization alone, and a name that asks
   * for a statistic is then reported as matching nothing. */
  gp__vk_pstats_publish(dev, dev->pstats);
}

/* Enables pipelineStatisticsQuery in a copy of ci (*mine) if the device
 * has it: in pEnabledFeatures (copied into *feats) or, when the program
 * chains VkPhysicalDeviceFeatures2, in that struct, which *patched then
 * points to (the caller restores it). True if enabled. */
static bool enable_pstats(gp__vk_instance *inst, VkPhysicalDevice phys,
                          VkDeviceCreateInfo *mine,
                          VkPhysicalDeviceFeatures *feats,
                          VkPhysicalDeviceFeatures2 **patched) {
  VkPhysicalDeviceFeatures have;
  memset(&have, 0, sizeof(have));
  *patched = NULL;
  if (!inst->GetPhysicalDeviceFeatures)
    return false;
  inst->GetPhysicalDeviceFeatures(phys, &have);
  if (!have.pipelineStatisticsQuery)
    return false;
  for (const VkBaseInStructure *p = mine->pNext; p; p = p->pNext)
    if (p->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
      VkPhysicalDeviceFeatures2 *f2 = (VkPhysicalDeviceFeatures2 *)p;
      if (!f2->features.pipelineStatisticsQuery) {
        f2->features.pipelineStatisticsQuery = VK_TRUE;
        *patched = f2;
      }
      return true;
    }
  if (mine->pEnabledFeatures)
    *feats = *mine->pEnabledFeatures;
  else
    memset(feats, 0, sizeof(*feats));
  feats->pipelineStatisticsQuery = VK_TRUE;
  mine->pEnabledFeatures = feats;
  return true;
}

/* The loader's VkLayerDeviceCreateInfo of that function in ci, or NULL. */
static VkLayerDeviceCreateInfo *device_link(const VkDeviceCreateInfo *ci,
                                            VkLayerFunction function) {
  for (const VkBaseInStructure *p = ci->pNext; p; p = p->pNext) {
    if (p->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
        ((const VkLayerDeviceCreateInfo *)p)->function == function)
      return (VkLayerDeviceCreateInfo *)p;
  }
  return NULL;
}

/* True if the physical device offers extension name. */
static bool device_offers(gp__vk_instance *inst, VkPhysicalDevice phys,
                          const char *name) {
  uint32_t n = 0;
  if (inst->EnumerateDeviceExtensionProperties(phys, NULL, &n, NULL) !=
          VK_SUCCESS ||
      n == 0)
    return false;
  VkExtensionProperties *e = calloc(n, sizeof(*e));
  if (!e)
    return false;
  bool found = false;
  if (inst->EnumerateDeviceExtensionProperties(phys, NULL, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(e[i].extensionName, name) == 0;
  free(e);
  return found;
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateDevice(VkPhysicalDevice phys, const VkDeviceCreateInfo *ci,
                   const VkAllocationCallbacks *alloc, VkDevice *out) {
  VkLayerDeviceCreateInfo *link = device_link(ci, VK_LAYER_LINK_INFO);
  VkLayerDeviceCreateInfo *data = device_link(ci, VK_LOADER_DATA_CALLBACK);
  gp__vk_instance *inst = instance_of(phys);
  if (!link || !link->u.pLayerInfo || !inst)
    return VK_ERROR_INITIALIZATION_FAILED;
  PFN_vkGetInstanceProcAddr gipa =
      link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  PFN_vkCreateDevice create =
      (PFN_vkCreateDevice)gipa(inst->handle, "vkCreateDevice");
  if (!create)
    return VK_ERROR_INITIALIZATION_FAILED;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;

  /* Calibrated timestamps map GPU times to ours: enable the extension if
   * the device has it and the program did not ask for it. */
  VkDeviceCreateInfo mine = *ci;
  const char **names = NULL;
  bool calibrate =
      has_ext(ci->ppEnabledExtensionNames, ci->enabledExtensionCount,
              VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  if (!calibrate &&
      device_offers(inst, phys, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME)) {
    names = malloc((ci->enabledExtensionCount + 1) * sizeof(*names));
    if (names) {
      for (uint32_t i = 0; i < ci->enabledExtensionCount; i++)
        names[i] = ci->ppEnabledExtensionNames[i];
      names[ci->enabledExtensionCount] =
          VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
      mine.enabledExtensionCount = ci->enabledExtensionCount + 1;
      mine.ppEnabledExtensionNames = names;
      calibrate = true;
    }
  }
  /* Pipeline statistics, for the counters of pstats.c. */
  VkPhysicalDeviceFeatures feats;
  VkPhysicalDeviceFeatures2 *patched = NULL;
  bool pstats = enable_pstats(inst, phys, &mine, &feats, &patched);
  /* Ours before the device: the driver's allocator may be ours. */
  gp__vk_device *dev = calloc(1, sizeof(*dev));
  const VkAllocationCallbacks *use =
      dev ? gp__vk_driver_allocator(dev, alloc) : alloc;
  VkResult r = create(phys, &mine, use, out);
  if (patched) /* the program's struct, as it was */
    patched->features.pipelineStatisticsQuery = VK_FALSE;
  if (r != VK_SUCCESS && (names || pstats)) { /* try as the program asked */
    calibrate = pstats = false;
    r = create(phys, ci, use, out);
  }
  free(names);
  if (r != VK_SUCCESS || !dev) {
    free(dev);
    return r;
  }
  dev->handle = *out;
  dev->pstats = pstats;
  dev->phys = phys;
  dev->inst = inst;
  dev->gdpa = gdpa;
  dev->set_loader_data = data ? data->u.pfnSetDeviceLoaderData : NULL;
  pthread_mutex_init(&dev->lock, NULL);
#define GP_VK_FN_GET(name) dev->name = (PFN_vk##name)gdpa(*out, "vk" #name);
  GP_VK_DEVICE_FNS(GP_VK_FN_GET)
#undef GP_VK_FN_GET
  if (!calibrate)
    dev->GetCalibratedTimestampsEXT = NULL;
  register_device(dev);
  gp__vk_core->context_register(dev->device_id, GP_API_VULKAN, 1,
                                &dev->context_id);
  gp__vk_core->handle_put(GP_API_VULKAN, GP__HANDLE_CONTEXT, *out, NULL,
                          dev->device_id, dev->context_id, 0);
  gp__vk_calibrate(dev, true);
  pthread_mutex_lock(&reg_lock);
  int rc = gp__vk_map_put(&devices, key_of(*out), dev);
  pthread_mutex_unlock(&reg_lock);
  if (rc != 0) {
    pthread_mutex_destroy(&dev->lock);
    free(dev);
  }
  return VK_SUCCESS;
}

static VKAPI_ATTR void VKAPI_CALL
layer_DestroyDevice(VkDevice device, const VkAllocationCallbacks *alloc) {
  if (!device)
    return;
  pthread_mutex_lock(&reg_lock);
  gp__vk_device *dev = gp__vk_map_get(&devices, key_of(device));
  pthread_mutex_unlock(&reg_lock);
  if (!dev)
    return;
  /* The program has waited for its work (a destroyed device must be
   * idle): read back what is left, then free our command buffers. */
  pthread_mutex_lock(&dev->lock);
  gp__vk_resolve(dev, true, NULL);
  gp__vk_cmd_fini(dev);
  pthread_mutex_unlock(&dev->lock);
  /* Off the registry (so the flush hook cannot reach it) before freeing. */
  pthread_mutex_lock(&reg_lock);
  gp__vk_map_del(&devices, key_of(device));
  pthread_mutex_unlock(&reg_lock);
  gp__vk_core->handle_drop(GP_API_VULKAN, GP__HANDLE_CONTEXT, device, NULL);
  for (size_t i = 0; i < dev->queues.cap; i++) {
    if (!dev->queues.keys[i])
      continue;
    gp__vk_core->handle_drop(GP_API_VULKAN, GP__HANDLE_STREAM,
                             (const void *)(uintptr_t)dev->queues.keys[i],
                             NULL);
    /* The queues end with their device. */
    gp__backend_callback_resource(
        gp__vk_core, GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING,
        GP_API_VULKAN, dev->device_id, dev->context_id,
        (uint32_t)((uint64_t)(uintptr_t)dev->queues.vals[i] >> 32));
  }
  gp__vk_core->context_unregister(dev->context_id);
  /* The driver frees through our allocator, which needs dev: last. */
  dev->DestroyDevice(device, dev->own_allocator ? &dev->allocator : alloc);
  gp__vk_map_fini(&dev->cmdbufs);
  gp__vk_map_fini(&dev->queues);
  gp__vk_map_fini(&dev->signals);
  gp__vk_map_fini(&dev->shaders);
  gp__vk_memory_fini(dev);
  gp__vk_map_fini(&dev->stat_pools);
  pthread_mutex_destroy(&dev->lock);
  free(dev);
}

/* Gives each VkQueue a stream (its hardware queue on the device). */
static void note_queue(gp__vk_device *dev, uint32_t family, uint32_t index,
                       VkQueue q) {
  if (!q)
    return;
  uint32_t made = 0; /* the stream of a queue first seen */
  pthread_mutex_lock(&dev->lock);
  if (!gp__vk_map_get(&dev->queues, (uint64_t)(uintptr_t)q)) {
    uint32_t hw =
        family < dev->num_families ? dev->queue_base[family] + index : 0;
    uint32_t stream = ++dev->next_stream;
    /* stream in the high half, family and hardware queue + 1 in the low */
    gp__vk_map_put(&dev->queues, (uint64_t)(uintptr_t)q,
                   (void *)(uintptr_t)(((uint64_t)stream << 32) |
                                       ((family & 0xffffu) << 16) |
                                       ((hw + 1) & 0xffffu)));
    char name[48];
    snprintf(name, sizeof(name), "VkQueue %u.%u", family, index);
    gp__vk_core->emit_name(GP_OBJECT_STREAM, dev->device_id, dev->context_id,
                           stream, 0, name);
    gp__vk_core->handle_put(GP_API_VULKAN, GP__HANDLE_STREAM, q, NULL,
                            dev->device_id, dev->context_id, stream);
    made = stream;
  }
  pthread_mutex_unlock(&dev->lock);
  if (made)
    gp__backend_callback_resource(
        gp__vk_core, GP_CALLBACK_RESOURCE_STREAM_CREATED, GP_API_VULKAN,
        dev->device_id, dev->context_id, made);
}

static VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue(VkDevice device,
                                                       uint32_t family,
                                                       uint32_t index,
                                                       VkQueue *q) {
  gp__vk_device *dev = gp__vk_device_of(device);
  dev->GetDeviceQueue(device, family, index, q);
  note_queue(dev, family, index, *q);
}

static VKAPI_ATTR void VKAPI_CALL layer_GetDeviceQueue2(
    VkDevice device, const VkDeviceQueueInfo2 *info, VkQueue *q) {
  gp__vk_device *dev = gp__vk_device_of(device);
  dev->GetDeviceQueue2(device, info, q);
  note_queue(dev, info->queueFamilyIndex, info->queueIndex, *q);
}

/* ------------------------------------------------------------------ */
/* Proc addresses                                                       */

static PFN_vkVoidFunction layer_device_fn(const char *name);

GP_VK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
gpuperf_GetDeviceProcAddr(VkDevice device, const char *name) {
  gp__vk_device *dev = gp__vk_device_of(device);
  if (!dev)
    return NULL;
  PFN_vkVoidFunction next = dev->gdpa(device, name);
  /* Ours only where the next layer has one: an extension the program did
   * not enable stays absent. */
  PFN_vkVoidFunction f = next ? layer_device_fn(name) : NULL;
  return f ? f : next;
}

GP_VK_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL
gpuperf_GetInstanceProcAddr(VkInstance instance, const char *name) {
  if (strcmp(name, "vkGetInstanceProcAddr") == 0)
    return (PFN_vkVoidFunction)gpuperf_GetInstanceProcAddr;
  if (strcmp(name, "vkCreateInstance") == 0)
    return (PFN_vkVoidFunction)layer_CreateInstance;
  if (strcmp(name, "vkGetDeviceProcAddr") == 0)
    return (PFN_vkVoidFunction)gpuperf_GetDeviceProcAddr;
  if (!instance)
    return NULL;
  if (strcmp(name, "vkDestroyInstance") == 0)
    return (PFN_vkVoidFunction)layer_DestroyInstance;
  if (strcmp(name, "vkCreateDevice") == 0)
    return (PFN_vkVoidFunction)layer_CreateDevice;
  gp__vk_instance *inst = instance_of(instance);
  if (!inst)
    return NULL;
  PFN_vkVoidFunction next = inst->gipa(instance, name);
  PFN_vkVoidFunction f = next ? layer_device_fn(name) : NULL;
  return f ? f : next;
}

static PFN_vkVoidFunction layer_device_fn(const char *name) {
  if (strcmp(name, "vkDestroyDevice") == 0)
    return (PFN_vkVoidFunction)layer_DestroyDevice;
  if (strcmp(name, "vkGetDeviceQueue") == 0)
    return (PFN_vkVoidFunction)layer_GetDeviceQueue;
  if (strcmp(name, "vkGetDeviceQueue2") == 0)
    return (PFN_vkVoidFunction)layer_GetDeviceQueue2;
  return gp__vk_device_intercept(name);
}

/* The loader's entry: version 2 of the layer interface (the loader asks
 * for our two proc-address functions through it). */
GP_VK_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
gpuperf_NegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v) {
  if (!v || v->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT)
    return VK_ERROR_INITIALIZATION_FAILED;
  if (v->loaderLayerInterfaceVersion >= 2) {
    v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = gpuperf_GetInstanceProcAddr;
    v->pfnGetDeviceProcAddr = gpuperf_GetDeviceProcAddr;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
  }
  return VK_SUCCESS;
}
