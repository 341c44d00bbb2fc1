/*
 * memory.c - vulkan.memory_tracker: device memory, buffers and images, and
 * the driver's host allocations, as GPU_MEMORY records (Perfetto's
 * VulkanMemoryEvent).
 *
 * Device memory: vkAllocateMemory and vkFreeMemory are CREATE and DESTROY
 * of DEVICE_MEMORY with the memory type, its heap and the size. Buffers
 * and images: CREATE at creation (the size asked for, or the image's
 * requirement), BIND with the memory, offset and required size, and at
 * destruction DESTROY_BOUND (the bound size, so that the bind counters
 * return to zero) or DESTROY. Only objects created while the kind is
 * recorded are followed, so that every DESTROY has its CREATE.
 *
 * Driver memory: when the kind is recorded at vkCreateDevice and the
 * program gives no allocator of its own, the device is created with ours;
 * Mesa drivers allocate the device's objects through it. Each allocation
 * carries a 16-byte (or alignment-sized) header with its size and scope.
 */
#include <stdlib.h>
#include <string.h>

#include "vkInt.h"

/* What we remember of a device memory allocation or an object. */
typedef struct mem_info {
  uint64_t size;
  uint64_t memory; /* objects: the memory bound, 0 if none */
  uint32_t type, heap;
  uint32_t source; /* objects: BUFFER or IMAGE */
} mem_info;

static bool tracking(void) {
  return gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_GPU_MEMORY, 0);
}

static void emit(uint64_t device, uint32_t source, uint32_t op, uint64_t memory,
                 uint64_t object, uint64_t addr, uint64_t size, uint32_t type,
                 uint32_t heap, uint32_t scope) {
  gp_activity_gpu_memory *r = gp__vk_core->activity_reserve(
      GP_ACTIVITY_KIND_GPU_MEMORY, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = gp_get_timestamp();
  r->device = device;
  r->device_memory = memory;
  r->object_handle = object;
  r->memory_address = addr;
  r->size = size;
  r->process_id = gp__vk_core->pid();
  r->source = source;
  r->operation = op;
  r->memory_type = type;
  r->heap = heap;
  r->scope = scope;
  gp__vk_core->activity_commit(r);
}

static uint64_t dev_key(const gp__vk_device *dev) {
  return (uint64_t)(uintptr_t)dev->handle;
}

/* ------------------------------------------------------------------ */
/* Device memory                                                        */

static VKAPI_ATTR VkResult VKAPI_CALL
layer_AllocateMemory(VkDevice device, const VkMemoryAllocateInfo *ai,
                     const VkAllocationCallbacks *a, VkDeviceMemory *m) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr = gp__vk_enter(&k, dev, NULL, GP_VK_API_ALLOCATE_MEMORY,
                               "vkAllocateMemory", 0);
  uint64_t start = gp_get_timestamp();
  VkResult r = dev->AllocateMemory(device, ai, a, m);
  gp__vk_api(GP_VK_API_ALLOCATE_MEMORY, "vkAllocateMemory", start,
             gp_get_timestamp(), corr, r);
  gp__vk_exit(&k, r);
  if (r != VK_SUCCESS || !tracking())
    return r;
  mem_info *i = calloc(1, sizeof(*i));
  if (!i)
    return r;
  i->size = ai->allocationSize;
  i->type = ai->memoryTypeIndex;
  i->heap = ai->memoryTypeIndex < VK_MAX_MEMORY_TYPES
                ? dev->mem_heap[ai->memoryTypeIndex]
                : 0;
  pthread_mutex_lock(&dev->lock);
  if (gp__vk_map_put(&dev->memories, (uint64_t)(uintptr_t)*m, i) != 0) {
    free(i);
    i = NULL;
  }
  pthread_mutex_unlock(&dev->lock);
  if (i)
    emit(dev_key(dev), GP_GPU_MEMORY_SOURCE_DEVICE_MEMORY,
         GP_GPU_MEMORY_OP_CREATE, (uint64_t)(uintptr_t)*m, 0, 0, i->size,
         i->type, i->heap, 0);
  return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_FreeMemory(
    VkDevice device, VkDeviceMemory m, const VkAllocationCallbacks *a) {
  gp__vk_device *dev = gp__vk_device_of(device);
  gp__vk_call k;
  uint64_t corr =
      gp__vk_enter(&k, dev, NULL, GP_VK_API_FREE_MEMORY, "vkFreeMemory", 0);
  uint64_t start = gp_get_timestamp();
  pthread_mutex_lock(&dev->lock);
  mem_info *i = gp__vk_map_del(&dev->memories, (uint64_t)(uintptr_t)m);
  pthread_mutex_unlock(&dev->lock);
  dev->FreeMemory(device, m, a);
  gp__vk_api(GP_VK_API_FREE_MEMORY, "vkFreeMemory", start, gp_get_timestamp(),
             corr, VK_SUCCESS);
  gp__vk_exit(&k, VK_SUCCESS);
  if (i)
    emit(dev_key(dev), GP_GPU_MEMORY_SOURCE_DEVICE_MEMORY,
         GP_GPU_MEMORY_OP_DESTROY, (uint64_t)(uintptr_t)m, 0, 0, i->size,
         i->type, i->heap, 0);
  free(i);
}

/* ------------------------------------------------------------------ */
/* Buffers and images                                                   */

static void object_created(gp__vk_device *dev, uint32_t source, uint64_t object,
                           uint64_t size) {
  if (!tracking())
    return;
  mem_info *i = calloc(1, sizeof(*i));
  if (!i)
    return;
  i->size = size;
  i->source = source;
  pthread_mutex_lock(&dev->lock);
  if (gp__vk_map_put(&dev->objects, object, i) != 0) {
    free(i);
    i = NULL;
  }
  pthread_mutex_unlock(&dev->lock);
  if (i)
    emit(dev_key(dev), source, GP_GPU_MEMORY_OP_CREATE, 0, object, 0, size, 0,
         0, 0);
}

static void object_bound(gp__vk_device *dev, uint64_t object, uint64_t memory,
                         uint64_t offset, uint64_t size) {
  pthread_mutex_lock(&dev->lock);
  mem_info *i = gp__vk_map_get(&dev->objects, object);
  mem_info *m = gp__vk_map_get(&dev->memories, memory);
  uint32_t type = m ? m->type : 0, heap = m ? m->heap : 0, source = 0;
  if (i && !i->memory) {
    i->memory = memory;
    i->type = type;
    i->heap = heap;
    i->size = size;
    source = i->source;
  }
  pthread_mutex_unlock(&dev->lock);
  if (source)
    emit(dev_key(dev), source, GP_GPU_MEMORY_OP_BIND, memory, object, offset,
         size, type, heap, 0);
}

static void object_destroyed(gp__vk_device *dev, uint64_t object) {
  pthread_mutex_lock(&dev->lock);
  mem_info *i = gp__vk_map_del(&dev->objects, object);
  pthread_mutex_unlock(&dev->lock);
  if (!i)
    return;
  emit(dev_key(dev), i->source,
       i->memory ? GP_GPU_MEMORY_OP_DESTROY_BOUND : GP_GPU_MEMORY_OP_DESTROY,
       i->memory, object, 0, i->size, i->type, i->heap, 0);
  free(i);
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateBuffer(VkDevice device, const VkBufferCreateInfo *ci,
                   const VkAllocationCallbacks *a, VkBuffer *b) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->CreateBuffer(device, ci, a, b);
  if (r == VK_SUCCESS)
    object_created(dev, GP_GPU_MEMORY_SOURCE_BUFFER, (uint64_t)(uintptr_t)*b,
                   ci->size);
  return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyBuffer(
    VkDevice device, VkBuffer b, const VkAllocationCallbacks *a) {
  gp__vk_device *dev = gp__vk_device_of(device);
  dev->DestroyBuffer(device, b, a);
  if (b)
    object_destroyed(dev, (uint64_t)(uintptr_t)b);
}

static VKAPI_ATTR VkResult VKAPI_CALL
layer_CreateImage(VkDevice device, const VkImageCreateInfo *ci,
                  const VkAllocationCallbacks *a, VkImage *img) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->CreateImage(device, ci, a, img);
  if (r == VK_SUCCESS && tracking()) {
    VkMemoryRequirements req = {0, 0, 0};
    dev->GetImageMemoryRequirements(device, *img, &req);
    object_created(dev, GP_GPU_MEMORY_SOURCE_IMAGE, (uint64_t)(uintptr_t)*img,
                   req.size);
  }
  return r;
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyImage(
    VkDevice device, VkImage img, const VkAllocationCallbacks *a) {
  gp__vk_device *dev = gp__vk_device_of(device);
  dev->DestroyImage(device, img, a);
  if (img)
    object_destroyed(dev, (uint64_t)(uintptr_t)img);
}

static uint64_t buffer_size(gp__vk_device *dev, VkBuffer b) {
  VkMemoryRequirements req = {0, 0, 0};
  dev->GetBufferMemoryRequirements(dev->handle, b, &req);
  return req.size;
}

static uint64_t image_size(gp__vk_device *dev, VkImage img) {
  VkMemoryRequirements req = {0, 0, 0};
  dev->GetImageMemoryRequirements(dev->handle, img, &req);
  return req.size;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BindBufferMemory(VkDevice device,
                                                             VkBuffer b,
                                                             VkDeviceMemory m,
                                                             VkDeviceSize off) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->BindBufferMemory(device, b, m, off);
  if (r == VK_SUCCESS && tracking())
    object_bound(dev, (uint64_t)(uintptr_t)b, (uint64_t)(uintptr_t)m, off,
                 buffer_size(dev, b));
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BindImageMemory(VkDevice device,
                                                            VkImage img,
                                                            VkDeviceMemory m,
                                                            VkDeviceSize off) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->BindImageMemory(device, img, m, off);
  if (r == VK_SUCCESS && tracking())
    object_bound(dev, (uint64_t)(uintptr_t)img, (uint64_t)(uintptr_t)m, off,
                 image_size(dev, img));
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BindBufferMemory2(
    VkDevice device, uint32_t n, const VkBindBufferMemoryInfo *bi) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->BindBufferMemory2(device, n, bi);
  if (r == VK_SUCCESS && tracking())
    for (uint32_t i = 0; i < n; i++)
      object_bound(dev, (uint64_t)(uintptr_t)bi[i].buffer,
                   (uint64_t)(uintptr_t)bi[i].memory, bi[i].memoryOffset,
                   buffer_size(dev, bi[i].buffer));
  return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL layer_BindImageMemory2(
    VkDevice device, uint32_t n, const VkBindImageMemoryInfo *bi) {
  gp__vk_device *dev = gp__vk_device_of(device);
  VkResult r = dev->BindImageMemory2(device, n, bi);
  if (r == VK_SUCCESS && tracking())
    for (uint32_t i = 0; i < n; i++)
      object_bound(dev, (uint64_t)(uintptr_t)bi[i].image,
                   (uint64_t)(uintptr_t)bi[i].memory, bi[i].memoryOffset,
                   image_size(dev, bi[i].image));
  return r;
}

/* See vkInt.h. */
void gp__vk_memory_fini(gp__vk_device *dev) {
  for (size_t i = 0; i < dev->memories.cap; i++)
    free(dev->memories.vals[i]);
  for (size_t i = 0; i < dev->objects.cap; i++)
    free(dev->objects.vals[i]);
  gp__vk_map_fini(&dev->memories);
  gp__vk_map_fini(&dev->objects);
}

/* ------------------------------------------------------------------ */
/* The driver's host memory                                             */

/* Before each block: its size and scope, and how far back the block
 * really starts (alignment). */
typedef struct block_head {
  uint64_t size;
  uint32_t scope, back;
} block_head;

static void *block_alloc(size_t size, size_t align, uint32_t scope) {
  size_t a = align > sizeof(block_head) ? align : sizeof(block_head);
  if (a & (a - 1))
    return NULL; /* Vulkan alignments are powers of two */
  uint8_t *base = aligned_alloc(a, ((a + size + a - 1) / a) * a);
  if (!base)
    return NULL;
  uint8_t *p = base + a;
  block_head *h = (block_head *)(void *)(p - sizeof(block_head));
  h->size = size;
  h->scope = scope;
  h->back = (uint32_t)a;
  return p;
}

static VKAPI_ATTR void *VKAPI_CALL on_alloc(void *user, size_t size,
                                            size_t align,
                                            VkSystemAllocationScope scope) {
  void *p = block_alloc(size, align, (uint32_t)scope + 1);
  if (p && tracking())
    emit(dev_key(user), GP_GPU_MEMORY_SOURCE_DRIVER, GP_GPU_MEMORY_OP_CREATE, 0,
         0, (uint64_t)(uintptr_t)p, size, 0, 0, (uint32_t)scope + 1);
  return p;
}

static VKAPI_ATTR void VKAPI_CALL on_free(void *user, void *p) {
  if (!p)
    return;
  block_head *h = (block_head *)(void *)((uint8_t *)p - sizeof(block_head));
  if (tracking())
    emit(dev_key(user), GP_GPU_MEMORY_SOURCE_DRIVER, GP_GPU_MEMORY_OP_DESTROY,
         0, 0, (uint64_t)(uintptr_t)p, h->size, 0, 0, h->scope);
  free((uint8_t *)p - h->back);
}

static VKAPI_ATTR void *VKAPI_CALL on_realloc(void *user, void *old,
                                              size_t size, size_t align,
                                              VkSystemAllocationScope scope) {
  if (!old)
    return on_alloc(user, size, align, scope);
  if (size == 0) {
    on_free(user, old);
    return NULL;
  }
  block_head *h = (block_head *)(void *)((uint8_t *)old - sizeof(block_head));
  void *p = on_alloc(user, size, align, scope);
  if (!p)
    return NULL; /* the old block stays, as realloc's contract says */
  memcpy(p, old, h->size < size ? h->size : size);
  on_free(user, old);
  return p;
}

/* See vkInt.h. */
const VkAllocationCallbacks *
gp__vk_driver_allocator(gp__vk_device *dev, const VkAllocationCallbacks *a) {
  if (a || !tracking())
    return a;
  dev->allocator.pUserData = dev; /* its handle is 0 until created */
  dev->allocator.pfnAllocation = on_alloc;
  dev->allocator.pfnReallocation = on_realloc;
  dev->allocator.pfnFree = on_free;
  dev->allocator.pfnInternalAllocation = NULL;
  dev->allocator.pfnInternalFree = NULL;
  dev->own_allocator = true;
  return &dev->allocator;
}

/* See vkInt.h. */
PFN_vkVoidFunction gp__vk_memory_intercept(const char *name) {
  static const struct {
    const char *name;
    PFN_vkVoidFunction fn;
  } table[] = {
#define E(n) {"vk" #n, (PFN_vkVoidFunction)layer_##n}
      E(AllocateMemory),   E(FreeMemory),      E(CreateBuffer),
      E(DestroyBuffer),    E(CreateImage),     E(DestroyImage),
      E(BindBufferMemory), E(BindImageMemory), E(BindBufferMemory2),
      E(BindImageMemory2),
#undef E
  };
  for (size_t i = 0; i < GP_ARRAY_SIZE(table); i++)
    if (strcmp(name, table[i].name) == 0)
      return table[i].fn;
  return gp__vk_query_intercept(name);
}

/* ------------------------------------------------------------------ */
/* Buffers of the layer's own (not tracked: made below the tracker)     */

/* See vkInt.h. */
void *gp__vk_host_buffer(gp__vk_device *dev, VkDeviceSize size, VkBuffer *buf,
                         VkDeviceMemory *mem) {
  *buf = VK_NULL_HANDLE;
  *mem = VK_NULL_HANDLE;
  if (!dev->MapMemory)
    return NULL;
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = size,
                           .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  if (dev->CreateBuffer(dev->handle, &bi, NULL, buf) != VK_SUCCESS) {
    *buf = VK_NULL_HANDLE;
    return NULL;
  }
  VkMemoryRequirements req;
  dev->GetBufferMemoryRequirements(dev->handle, *buf, &req);
  VkPhysicalDeviceMemoryProperties mp;
  dev->inst->GetPhysicalDeviceMemoryProperties(dev->phys, &mp);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t t = 0;
  while (t < mp.memoryTypeCount &&
         !((req.memoryTypeBits & (1u << t)) &&
           (mp.memoryTypes[t].propertyFlags & want) == want))
    t++;
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL,
                             req.size, t};
  void *map = NULL;
  if (t == mp.memoryTypeCount ||
      dev->AllocateMemory(dev->handle, &ai, NULL, mem) != VK_SUCCESS ||
      dev->BindBufferMemory(dev->handle, *buf, *mem, 0) != VK_SUCCESS ||
      dev->MapMemory(dev->handle, *mem, 0, VK_WHOLE_SIZE, 0, &map) !=
          VK_SUCCESS) {
    if (*mem)
      dev->FreeMemory(dev->handle, *mem, NULL);
    *mem = VK_NULL_HANDLE;
    gp__vk_host_buffer_free(dev, buf, mem);
    return NULL;
  }
  return map;
}

/* See vkInt.h. */
void gp__vk_host_buffer_free(gp__vk_device *dev, VkBuffer *buf,
                             VkDeviceMemory *mem) {
  if (*buf)
    dev->DestroyBuffer(dev->handle, *buf, NULL);
  if (*mem)
    dev->FreeMemory(dev->handle, *mem, NULL);
  *buf = VK_NULL_HANDLE;
  *mem = VK_NULL_HANDLE;
}
