/*
 * cb_probe.c - the callback API (gpuperf/callback.h) through the Vulkan
 * layer, in a program that links libgpuperf.so and enables the layer
 * itself (VK_LAYER_GPUPERF_trace, manifest directory argv[1]).
 *
 *   vulkan-cb-probe MANIFEST_DIR
 *
 * Subscribes to the API and SYNCHRONIZE domains, collects API records,
 * makes a few calls the layer wraps (memory, a submit, the three waits),
 * then checks: every Vulkan API record has its entry and exit callbacks
 * with its correlation id, call and status, and no callback is without
 * its record; vkQueueWaitIdle raised STREAM_SYNCHRONIZED on the queue's
 * stream and vkDeviceWaitIdle CONTEXT_SYNCHRONIZED, with the calls'
 * correlation ids; and gp_activity_get_*_id of the VkDevice and VkQueue
 * give the ids of the queue's NAME record, as the callbacks' context and
 * stream do. Prints "ok N" (N records) and exits 0; a line naming
 * what differed and 1; 77 without a Vulkan device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "cb_log.h"
#include "gpuperf/gpuperf.h"

#define MAXEV 256

static cb_event evs[MAXEV];
static int nev;

static void on_cb(void *user, gp_callback_domain domain, uint32_t cbid,
                  const void *data) {
  (void)user;
  if (nev < MAXEV)
    cb_note(&evs[nev++], domain, cbid, data, 1);
}

/* The API records delivered, copied out, and the queue's stream as its
 * NAME record ("VkQueue 0.0") gives it. */
static gp_activity_api recs[MAXEV];
static int nrec;
static uint32_t named_stream, named_context, named_device;

static void complete(uint8_t *buf, size_t size, size_t valid) {
  (void)size;
  const gp_activity *r = NULL;
  while (gp_activity_get_next_record(buf, valid, &r) == 0)
    if (r->kind == GP_ACTIVITY_KIND_API && nrec < MAXEV &&
        ((const gp_activity_api *)r)->domain == GP_API_DOMAIN_VULKAN) {
      recs[nrec++] = *(const gp_activity_api *)r;
    } else if (r->kind == GP_ACTIVITY_KIND_NAME) {
      const gp_activity_name *n = (const gp_activity_name *)r;
      if (n->object_kind == GP_OBJECT_STREAM &&
          strcmp(gp_activity_string(n->name_id), "VkQueue 0.0") == 0) {
        named_stream = n->stream_id;
        named_context = n->context_id;
        named_device = n->device_id;
      }
    }
  free(buf);
}

static int fail(const char *what) {
  printf("mismatch: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: vulkan-cb-probe MANIFEST_DIR\n");
    return 2;
  }
  setenv("VK_ADD_LAYER_PATH", argv[1], 1);
  gp_activity_register_callbacks(cb_request, complete);
  gp_activity_enable(GP_ACTIVITY_KIND_API);
  gp_activity_enable(GP_ACTIVITY_KIND_NAME);
  gp_callback_subscriber *sub;
  if (gp_callback_subscribe(&sub, on_cb, NULL) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_API) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_SYNCHRONIZE) != 0 ||
      gp_callback_enable_domain(sub, 1, GP_CALLBACK_DOMAIN_RESOURCE) != 0)
    return fail("subscribe");

  const char *layers[] = {"VK_LAYER_GPUPERF_trace"};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = 1,
                              .ppEnabledLayerNames = layers};
  VkInstance inst;
  if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS)
    return 77;
  VkPhysicalDevice phys;
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, &phys);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n)
    return 77;
  float prio = 1;
  VkDeviceQueueCreateInfo qi = {
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qi};
  VkDevice dev;
  if (vkCreateDevice(phys, &dci, NULL, &dev) != VK_SUCCESS)
    return fail("vkCreateDevice");
  VkQueue q;
  vkGetDeviceQueue(dev, 0, 0, &q);
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, 4096,
                             0};
  VkDeviceMemory mem;
  if (vkAllocateMemory(dev, &ai, NULL, &mem) != VK_SUCCESS)
    return fail("vkAllocateMemory");
  vkFreeMemory(dev, mem, NULL);
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  VkFence fence;
  if (vkCreateFence(dev, &fci, NULL, &fence) != VK_SUCCESS ||
      vkQueueSubmit(q, 0, NULL, fence) != VK_SUCCESS ||
      vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS ||
      vkQueueWaitIdle(q) != VK_SUCCESS || vkDeviceWaitIdle(dev) != VK_SUCCESS)
    return fail("a Vulkan call");
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  /* The handles' ids (gp_activity_get_*_id) against the NAME record. */
  uint32_t ctx_id = 0, stream_id = 0, dev_id = 0, dev_id2 = 0;
  if (!named_stream)
    return fail("no NAME record of the queue");
  if (gp_activity_get_context_id(GP_API_VULKAN, dev, NULL, &ctx_id) != 0 ||
      ctx_id != named_context)
    return fail("gp_activity_get_context_id(VkDevice)");
  if (gp_activity_get_stream_id(GP_API_VULKAN, dev, q, &stream_id) != 0 ||
      stream_id != named_stream)
    return fail("gp_activity_get_stream_id(VkQueue)");
  if (gp_activity_get_device_id(GP_API_VULKAN, dev, NULL, &dev_id) != 0 ||
      dev_id != named_device)
    return fail("gp_activity_get_device_id(VkDevice)");
  /* The loader hands the program and the layer different
   * VkPhysicalDevice handles: that one is not known. */
  if (gp_activity_get_device_id(GP_API_VULKAN, NULL, phys, &dev_id2) !=
      GP_ENOENT)
    return fail("gp_activity_get_device_id(VkPhysicalDevice)");
  vkDestroyFence(dev, fence, NULL);
  vkDestroyDevice(dev, NULL); /* its queue and context end: RESOURCE */
  if (gp_activity_get_context_id(GP_API_VULKAN, dev, NULL, &ctx_id) !=
      GP_ENOENT)
    return fail("a destroyed VkDevice still has a context id");
  gp_callback_unsubscribe(sub);
  vkDestroyInstance(inst, NULL);

  /* Each record: its pair; no callback without its record. */
  if (nrec < 6)
    return fail("fewer than 6 Vulkan API records");
  const char *bad = cb_check_pairs(evs, nev, recs, nrec, 1, named_context);
  if (bad)
    return fail(bad);
  /* The waits. */
  int stream_sync = 0, ctx_sync = 0;
  for (int i = 0; i < nev; i++) {
    const cb_event *e = &evs[i];
    if (e->domain != GP_CALLBACK_DOMAIN_SYNCHRONIZE)
      continue;
    const cb_event *call = cb_find(evs, nev, e->corr, GP_CALLBACK_SITE_ENTER);
    if (!call || call->context != e->context)
      return fail("a synchronisation's call");
    if (e->cbid == GP_CALLBACK_SYNC_STREAM_SYNCHRONIZED)
      stream_sync += e->stream == named_stream && e->stream == call->stream;
    else if (e->cbid == GP_CALLBACK_SYNC_CONTEXT_SYNCHRONIZED)
      ctx_sync++;
  }
  if (stream_sync != 1 || ctx_sync != 1)
    return fail("the synchronisations");
  /* The context and the queue, made. */
  int made_ctx = 0, made_queue = 0;
  for (int i = 0; i < nev; i++) {
    if (evs[i].domain != GP_CALLBACK_DOMAIN_RESOURCE)
      continue;
    made_ctx += evs[i].cbid == GP_CALLBACK_RESOURCE_CONTEXT_CREATED &&
                evs[i].context == named_context;
    made_queue += evs[i].cbid == GP_CALLBACK_RESOURCE_STREAM_CREATED &&
                  evs[i].context == named_context &&
                  evs[i].stream == named_stream;
  }
  int ended_queue = 0, ended_ctx = 0;
  for (int i = 0; i < nev; i++) {
    if (evs[i].domain != GP_CALLBACK_DOMAIN_RESOURCE)
      continue;
    ended_queue +=
        evs[i].cbid == GP_CALLBACK_RESOURCE_STREAM_DESTROY_STARTING &&
        evs[i].stream == named_stream;
    ended_ctx += evs[i].cbid == GP_CALLBACK_RESOURCE_CONTEXT_DESTROY_STARTING &&
                 evs[i].context == named_context;
  }
  if (made_ctx != 1 || made_queue != 1 || ended_queue != 1 || ended_ctx != 1)
    return fail("the RESOURCE callbacks");
  printf("ok %d\n", nrec);
  return 0;
}
