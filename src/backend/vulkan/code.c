/*
 * code.c - a Vulkan program's device code as MODULE and FUNCTION records
 * (CUPTI's kinds, gpuperf/activity.h): each VkShaderModule is a module,
 * loaded when it is made (its SPIR-V's size) and unloaded when it is
 * destroyed; each shader stage of a pipeline is a function of its
 * stage's module, named by its entry point, indexed by its place among
 * the pipeline's stages.
 *
 * Module ids are the layer's own, process-unique, given to every shader
 * module made while the layer is loaded (so a pipeline's stages find
 * theirs whether or not MODULE records were wanted then). A stage whose
 * code came inline (VK_KHR_maintenance5: no VkShaderModule) or from a
 * module made before the layer saw it names module 0. No time is taken
 * but the record's own.
 */
#include <stdatomic.h>
#include <string.h>

#include "vkInt.h"

static _Atomic uint32_t next_module = 1, next_function = 1;

static void module_record(const gp__vk_device *dev, uint32_t id, uint64_t size,
                          bool unload) {
  if (!gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_MODULE, dev->context_id))
    return;
  gp_activity_module *r = gp__vk_core->activity_reserve(
      GP_ACTIVITY_KIND_MODULE, sizeof(*r), dev->context_id, 0);
  if (!r)
    return;
  r->timestamp = gp_get_timestamp();
  r->size_bytes = size;
  r->context_id = dev->context_id;
  r->module_id = id;
  r->flags = unload ? GP_ACTIVITY_FLAG_MODULE_UNLOAD : 0;
  r->name_id = 0; /* shader modules have no name of their own */
  gp__vk_core->activity_commit(r);
}

/* See vkInt.h. */
void gp__vk_shader_created(gp__vk_device *dev, VkShaderModule m,
                           size_t code_size) {
  uint32_t id = atomic_fetch_add(&next_module, 1);
  pthread_mutex_lock(&dev->lock);
  int rc = gp__vk_map_put(&dev->shaders, (uint64_t)(uintptr_t)m,
                          (void *)(uintptr_t)id);
  pthread_mutex_unlock(&dev->lock);
  if (rc == 0)
    module_record(dev, id, code_size, false);
}

/* The module id of m on dev, 0 if the layer did not see it made. */
static uint32_t module_of(gp__vk_device *dev, VkShaderModule m) {
  if (m == VK_NULL_HANDLE)
    return 0;
  pthread_mutex_lock(&dev->lock);
  uint32_t id = (uint32_t)(uintptr_t)gp__vk_map_get(&dev->shaders,
                                                    (uint64_t)(uintptr_t)m);
  pthread_mutex_unlock(&dev->lock);
  return id;
}

static void function_record(const gp__vk_device *dev, uint32_t module,
                            uint32_t index, const char *entry) {
  gp_activity_function *r = gp__vk_core->activity_reserve(
      GP_ACTIVITY_KIND_FUNCTION, sizeof(*r), dev->context_id, 0);
  if (!r)
    return;
  r->timestamp = gp_get_timestamp();
  r->id = atomic_fetch_add(&next_function, 1);
  r->context_id = dev->context_id;
  r->module_id = module;
  r->function_index = index;
  r->name_id = gp__vk_core->string_intern(entry ? entry : "");
  r->reserved0 = 0;
  gp__vk_core->activity_commit(r);
}

/* See vkInt.h. */
void gp__vk_pipeline_stages(gp__vk_device *dev,
                            const VkPipelineShaderStageCreateInfo *stages,
                            uint32_t n) {
  if (!gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_FUNCTION,
                                     dev->context_id))
    return;
  for (uint32_t i = 0; i < n; i++)
    function_record(dev, module_of(dev, stages[i].module), i, stages[i].pName);
}

static VKAPI_ATTR void VKAPI_CALL layer_DestroyShaderModule(
    VkDevice device, VkShaderModule m, const VkAllocationCallbacks *a) {
  gp__vk_device *dev = gp__vk_device_of(device);
  if (m != VK_NULL_HANDLE) {
    pthread_mutex_lock(&dev->lock);
    uint32_t id = (uint32_t)(uintptr_t)gp__vk_map_del(&dev->shaders,
                                                      (uint64_t)(uintptr_t)m);
    pthread_mutex_unlock(&dev->lock);
    if (id)
      module_record(dev, id, 0, true);
  }
  dev->DestroyShaderModule(device, m, a);
}

/* See vkInt.h. */
PFN_vkVoidFunction gp__vk_code_intercept(const char *name) {
  if (strcmp(name, "vkDestroyShaderModule") == 0)
    return (PFN_vkVoidFunction)layer_DestroyShaderModule;
  return gp__vk_memory_intercept(name);
}
