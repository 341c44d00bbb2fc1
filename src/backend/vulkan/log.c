/*
 * log.c - gpu.log: the messages of the driver and of the layers below us
 * (the Khronos validation layer among them) reach a debug-utils messenger
 * of ours, created on each instance whose program enabled
 * VK_EXT_debug_utils, and become GPU_LOG records with Perfetto's
 * severities and a tag naming the message's type.
 */
#include "vkInt.h"

static uint32_t severity(VkDebugUtilsMessageSeverityFlagBitsEXT s) {
  if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
    return GP_LOG_ERROR;
  if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
    return GP_LOG_WARNING;
  if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
    return GP_LOG_INFO;
  if (s & VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT)
    return GP_LOG_VERBOSE;
  return GP_LOG_UNSPECIFIED;
}

static const char *tag(VkDebugUtilsMessageTypeFlagsEXT t) {
  if (t & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)
    return "Vulkan validation";
  if (t & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
    return "Vulkan performance";
  return "Vulkan";
}

static VKAPI_ATTR VkBool32 VKAPI_CALL
on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
           VkDebugUtilsMessageTypeFlagsEXT type,
           const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)user;
  if (!data || !data->pMessage ||
      !gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_GPU_LOG, 0))
    return VK_FALSE;
  gp_activity_gpu_log *r =
      gp__vk_core->activity_reserve(GP_ACTIVITY_KIND_GPU_LOG, sizeof(*r), 0, 0);
  if (!r)
    return VK_FALSE;
  r->timestamp = gp_get_timestamp();
  r->severity = severity(sev);
  r->tag_id = gp__vk_core->string_intern(tag(type));
  r->message_id = gp__vk_core->string_intern(data->pMessage);
  r->process_id = gp__vk_core->pid();
  r->thread_id = gp__vk_core->tid();
  r->reserved0 = 0;
  gp__vk_core->activity_commit(r);
  return VK_FALSE; /* never abort the call */
}

/* See vkInt.h. */
void gp__vk_log_attach(gp__vk_instance *inst, const VkAllocationCallbacks *a) {
  if (!inst->CreateDebugUtilsMessengerEXT)
    return;
  VkDebugUtilsMessengerCreateInfoEXT ci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message};
  if (inst->CreateDebugUtilsMessengerEXT(inst->handle, &ci, a,
                                         &inst->messenger) != VK_SUCCESS)
    inst->messenger = VK_NULL_HANDLE;
}

/* See vkInt.h. */
void gp__vk_log_detach(gp__vk_instance *inst, const VkAllocationCallbacks *a) {
  if (inst->messenger && inst->DestroyDebugUtilsMessengerEXT)
    inst->DestroyDebugUtilsMessengerEXT(inst->handle, inst->messenger, a);
  inst->messenger = VK_NULL_HANDLE;
}

/* See vkInt.h. */
void gp__vk_warn_once(gp__vk_device *dev, uint32_t *said, uint32_t bit,
                      const char *msg) {
  (void)dev;
  bool before = __atomic_fetch_or(said, bit, __ATOMIC_RELAXED) & bit;
  if (before || !gp__vk_core->activity_enabled(GP_ACTIVITY_KIND_GPU_LOG, 0))
    return;
  gp_activity_gpu_log *r =
      gp__vk_core->activity_reserve(GP_ACTIVITY_KIND_GPU_LOG, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->timestamp = gp_get_timestamp();
  r->severity = GP_LOG_WARNING;
  r->tag_id = gp__vk_core->string_intern("Vulkan");
  r->message_id = gp__vk_core->string_intern(msg);
  r->process_id = gp__vk_core->pid();
  r->thread_id = gp__vk_core->tid();
  r->reserved0 = 0;
  gp__vk_core->activity_commit(r);
}
