/*
 * sample.c - a headless Vulkan program for the layer's tests: an ordinary
 * program (the loader, nothing of gpuperf's), run on lavapipe.
 *
 * Submission 1 ("Compute work"): fills a storage buffer with 21s (a
 * transfer), doubles it under the debug label "Double values" (a compute
 * dispatch), copies it to a host buffer (a transfer), and signals a
 * semaphore. Submission 2 ("Draw work") waits for the semaphore, clears
 * and draws one triangle in an offscreen render pass under the label
 * "Offscreen pass", inside a pipeline-statistics query of its own, and
 * copies the image to a host buffer. It checks the results, and prints
 *
 *   sample: ok vertices=3 ia_vertices=V ia_primitives=P vs=S clip=C
 *     clip_primitives=CP fs=F cs=X submits=2
 *
 * (on one line). --validation enables the Khronos validation layer;
 * --leak leaves one buffer undestroyed, which that layer reports;
 * --no-query leaves its own statistics queries out (a layer that measures
 * the same statistics cannot while they are active) and prints
 * "sample: ok vertices=3 submits=2".
 * --frames F renders F more frames (below); --size S makes the image
 * S x S (64 by default); --timed waits for each frame as soon as it is
 * submitted and prints its time from before vkQueueSubmit to after
 * vkWaitForFences, "sample: frame F window_ns=N raster_ns=R
 * raster_threads=T", on the host's clock, with the CPU time that
 * lavapipe's T rasterizer threads (llvmpipe-N) ran in that window, as the
 * kernel counts it (/proc/self/task/.../schedstat): work the device did
 * for the frame, measured without the device's timestamps.
 * Exit 0 on success, 1 on a usage error, 3 without a Vulkan device.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vulkan/vulkan.h>

#include "sample.comp.h"
#include "sample.frag.h"
#include "sample.vert.h"

#define N 256              /* values in the storage buffer */
static uint32_t side = 64; /* image side (--size) */
#define W side

#define CHECK(x)                                                               \
  do {                                                                         \
    VkResult r_ = (x);                                                         \
    if (r_ != VK_SUCCESS) {                                                    \
      fprintf(stderr, "sample: %s failed: %d (line %d)\n", #x, r_, __LINE__);  \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

static VkInstance inst;
static VkPhysicalDevice phys;
static VkDevice dev;
static VkQueue queue;
static VkQueue queue2; /* --two-queues: the second submission's */
static VkPhysicalDeviceMemoryProperties memprops;
static PFN_vkCmdBeginDebugUtilsLabelEXT begin_label;
static PFN_vkCmdEndDebugUtilsLabelEXT end_label;
static PFN_vkSetDebugUtilsObjectNameEXT set_name;

static bool has_instance_ext(const char *name) {
  uint32_t n = 0;
  vkEnumerateInstanceExtensionProperties(NULL, &n, NULL);
  VkExtensionProperties *e = calloc(n ? n : 1, sizeof(*e));
  vkEnumerateInstanceExtensionProperties(NULL, &n, e);
  bool found = false;
  for (uint32_t i = 0; i < n; i++)
    found = found || strcmp(e[i].extensionName, name) == 0;
  free(e);
  return found;
}

static uint32_t memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < memprops.memoryTypeCount; i++)
    if ((bits & (1u << i)) &&
        (memprops.memoryTypes[i].propertyFlags & want) == want)
      return i;
  fprintf(stderr, "sample: no memory type\n");
  exit(2);
}

static VkDeviceMemory bind_memory(VkMemoryRequirements req,
                                  VkMemoryPropertyFlags want) {
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL,
                             req.size, memory_type(req.memoryTypeBits, want)};
  VkDeviceMemory m;
  CHECK(vkAllocateMemory(dev, &ai, NULL, &m));
  return m;
}

static VkBuffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage,
                            VkMemoryPropertyFlags want, VkDeviceMemory *m) {
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = size,
                           .usage = usage};
  VkBuffer b;
  CHECK(vkCreateBuffer(dev, &bi, NULL, &b));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b, &req);
  *m = bind_memory(req, want);
  CHECK(vkBindBufferMemory(dev, b, *m, 0));
  return b;
}

/* The CPU time the kernel counted for this process's threads named
 * llvmpipe-N (lavapipe's rasterizers), in ns; *n: how many. */
static long long raster_cpu_ns(int *n) {
  long long sum = 0;
  *n = 0;
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char path[300], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    bool raster =
        fgets(comm, sizeof(comm), f) && strncmp(comm, "llvmpipe-", 9) == 0;
    fclose(f);
    snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
    long long ns = 0;
    if (raster && (f = fopen(path, "r"))) {
      if (fscanf(f, "%lld", &ns) == 1)
        sum += ns, (*n)++;
      fclose(f);
    }
  }
  if (d)
    closedir(d);
  return sum;
}

static VkShaderModule shader(const uint32_t *code, size_t size) {
  VkShaderModuleCreateInfo ci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 NULL, 0, size, code};
  VkShaderModule m;
  CHECK(vkCreateShaderModule(dev, &ci, NULL, &m));
  return m;
}

static void label(VkCommandBuffer cb, const char *name) {
  if (begin_label) {
    VkDebugUtilsLabelEXT l = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
                              .pLabelName = name};
    begin_label(cb, &l);
  }
}

static void unlabel(VkCommandBuffer cb) {
  if (end_label)
    end_label(cb);
}

static void name_object(VkObjectType type, uint64_t handle, const char *name) {
  if (set_name) {
    VkDebugUtilsObjectNameInfoEXT ni = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT,
        .objectType = type,
        .objectHandle = handle,
        .pObjectName = name};
    set_name(dev, &ni);
  }
}

/* A command pool (flags) and two primary command buffers of it, named n0
 * and n1. */
static VkCommandPool two_cmdbufs(VkCommandPoolCreateFlags flags, const char *n0,
                                 const char *n1, VkCommandBuffer cbs[2]) {
  VkCommandPoolCreateInfo cpci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  NULL, flags, 0};
  VkCommandPool pool;
  CHECK(vkCreateCommandPool(dev, &cpci, NULL, &pool));
  VkCommandBufferAllocateInfo cai = {
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2};
  CHECK(vkAllocateCommandBuffers(dev, &cai, cbs));
  name_object(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)cbs[0], n0);
  name_object(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)cbs[1], n1);
  return pool;
}

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src,
                    VkAccessFlags sa, VkPipelineStageFlags dst,
                    VkAccessFlags da) {
  VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, sa, da};
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void setup(bool validation, bool sync2, bool two_queues) {
  bool debug = has_instance_ext(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "gpuperf vulkan sample",
                           .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app,
                              .enabledExtensionCount = debug ? 1 : 0,
                              .ppEnabledExtensionNames = exts,
                              .enabledLayerCount = validation ? 1 : 0,
                              .ppEnabledLayerNames = layers};
  if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS) {
    fprintf(stderr, "sample: no Vulkan instance\n");
    exit(3);
  }
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(inst, &n, &phys);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
    fprintf(stderr, "sample: no Vulkan device\n");
    exit(3);
  }
  vkGetPhysicalDeviceMemoryProperties(phys, &memprops);
  float prio[2] = {1.0f, 1.0f};
  VkDeviceQueueCreateInfo qi = {
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, prio};
  if (two_queues) {
    VkQueueFamilyProperties fam[1];
    uint32_t nf = 1;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, fam);
    if (nf == 0 || fam[0].queueCount < 2) {
      fprintf(stderr, "sample: the first queue family has one queue\n");
      exit(4);
    }
    qi.queueCount = 2;
  }
  VkPhysicalDeviceFeatures feats = {.pipelineStatisticsQuery = VK_TRUE};
  VkPhysicalDeviceVulkan13Features v13 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
      .synchronization2 = VK_TRUE};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = sync2 ? &v13 : NULL,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qi,
                            .pEnabledFeatures = &feats};
  CHECK(vkCreateDevice(phys, &dci, NULL, &dev));
  vkGetDeviceQueue(dev, 0, 0, &queue);
  queue2 = queue;
  if (two_queues)
    vkGetDeviceQueue(dev, 0, 1, &queue2);
  if (debug) {
    begin_label = (PFN_vkCmdBeginDebugUtilsLabelEXT)vkGetDeviceProcAddr(
        dev, "vkCmdBeginDebugUtilsLabelEXT");
    end_label = (PFN_vkCmdEndDebugUtilsLabelEXT)vkGetDeviceProcAddr(
        dev, "vkCmdEndDebugUtilsLabelEXT");
    set_name = (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(
        dev, "vkSetDebugUtilsObjectNameEXT");
  }
}

/* vkmark's clear scene's frame: the image made a transfer's target,
 * cleared, and made ready for what reads it next, a barrier last. */
static void clear_frame(VkCommandBuffer cb, VkImage img) {
  VkImageSubresourceRange all = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  VkImageMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                            .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                            .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                            .newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                            .image = img,
                            .subresourceRange = all};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1,
                       &b);
  VkClearColorValue color = {.float32 = {0.2f, 0.4f, 0.6f, 1}};
  vkCmdClearColorImage(cb, img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1,
                       &all);
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  b.newLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1,
                       &b);
}

int main(int argc, char **argv) {
  bool validation = false, leak = false, query = true, sync2 = false;
  bool secondary = false, two_queues = false;
  int frames = 0;
  bool twice = false, timed = false, simultaneous = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--validation") == 0)
      validation = true;
    else if (strcmp(argv[i], "--leak") == 0)
      leak = true;
    else if (strcmp(argv[i], "--no-query") == 0)
      query = false;
    else if (strcmp(argv[i], "--submit2") == 0)
      sync2 = true;
    else if (strcmp(argv[i], "--secondary") == 0)
      secondary = true;
    else if (strcmp(argv[i], "--two-queues") == 0)
      two_queues = true;
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else if (strcmp(argv[i], "--twice") == 0)
      twice = true;
    else if (strcmp(argv[i], "--timed") == 0)
      timed = true;
    else if (strcmp(argv[i], "--simultaneous") == 0)
      simultaneous = true;
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
             atoi(argv[i + 1]) >= 1 && atoi(argv[i + 1]) <= 4096)
      side = (uint32_t)atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: vulkan-sample [--validation] [--leak] [--no-query] "
              "[--submit2] [--secondary] [--two-queues] [--frames F [--twice] "
              "[--timed] [--simultaneous]] [--size S]\n");
      return 1;
    }
  }
  if (secondary) /* no query may be active across secondaries */
    query = false;
  setup(validation, sync2, two_queues);

  /* Buffers: storage (device), host readback, image readback. */
  VkDeviceMemory m_store, m_host, m_pix, m_img;
  VkBuffer store = make_buffer(N * 4,
                               VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                               VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &m_store);
  VkMemoryPropertyFlags hostvis = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkBuffer host =
      make_buffer(N * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, hostvis, &m_host);
  VkBuffer pix =
      make_buffer(W * W * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, hostvis, &m_pix);

  /* The offscreen image, its view, render pass and framebuffer. */
  VkImageCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                          .imageType = VK_IMAGE_TYPE_2D,
                          .format = VK_FORMAT_R8G8B8A8_UNORM,
                          .extent = {W, W, 1},
                          .mipLevels = 1,
                          .arrayLayers = 1,
                          .samples = VK_SAMPLE_COUNT_1_BIT,
                          .tiling = VK_IMAGE_TILING_OPTIMAL,
                          .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                   VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                   VK_IMAGE_USAGE_TRANSFER_DST_BIT};
  VkImage img;
  CHECK(vkCreateImage(dev, &ii, NULL, &img));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(dev, img, &req);
  m_img = bind_memory(req, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  CHECK(vkBindImageMemory(dev, img, m_img, 0));
  VkImageViewCreateInfo vi = {
      .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
      .image = img,
      .viewType = VK_IMAGE_VIEW_TYPE_2D,
      .format = VK_FORMAT_R8G8B8A8_UNORM,
      .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
  VkImageView view;
  CHECK(vkCreateImageView(dev, &vi, NULL, &view));
  VkAttachmentDescription att = {
      .format = VK_FORMAT_R8G8B8A8_UNORM,
      .samples = VK_SAMPLE_COUNT_1_BIT,
      .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
      .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
      .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
      .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
      .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
      .finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL};
  VkAttachmentReference ref = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription sub = {.pipelineBindPoint =
                                  VK_PIPELINE_BIND_POINT_GRAPHICS,
                              .colorAttachmentCount = 1,
                              .pColorAttachments = &ref};
  VkRenderPassCreateInfo rpi = {.sType =
                                    VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                .attachmentCount = 1,
                                .pAttachments = &att,
                                .subpassCount = 1,
                                .pSubpasses = &sub};
  VkRenderPass rp;
  CHECK(vkCreateRenderPass(dev, &rpi, NULL, &rp));
  VkFramebufferCreateInfo fbi = {.sType =
                                     VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                 .renderPass = rp,
                                 .attachmentCount = 1,
                                 .pAttachments = &view,
                                 .width = W,
                                 .height = W,
                                 .layers = 1};
  VkFramebuffer fb;
  CHECK(vkCreateFramebuffer(dev, &fbi, NULL, &fb));
  name_object(VK_OBJECT_TYPE_RENDER_PASS, (uint64_t)rp, "Main pass");
  name_object(VK_OBJECT_TYPE_FRAMEBUFFER, (uint64_t)fb, "Offscreen target");

  /* Pipelines. */
  VkShaderModule vs = shader(sample_vert, sizeof(sample_vert));
  VkShaderModule fs = shader(sample_frag, sizeof(sample_frag));
  VkShaderModule cs = shader(sample_comp, sizeof(sample_comp));
  VkDescriptorSetLayoutBinding b0 = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                     VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo dli = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .bindingCount = 1,
      .pBindings = &b0};
  VkDescriptorSetLayout dsl;
  CHECK(vkCreateDescriptorSetLayout(dev, &dli, NULL, &dsl));
  VkPipelineLayoutCreateInfo pli = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &dsl};
  VkPipelineLayout cpl, gpl;
  CHECK(vkCreatePipelineLayout(dev, &pli, NULL, &cpl));
  pli.setLayoutCount = 0;
  CHECK(vkCreatePipelineLayout(dev, &pli, NULL, &gpl));
  VkComputePipelineCreateInfo cpi = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
                VK_SHADER_STAGE_COMPUTE_BIT, cs, "main", NULL},
      .layout = cpl};
  VkPipeline cpipe, gpipe;
  CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &cpipe));
  VkPipelineShaderStageCreateInfo stages[2] = {
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
       VK_SHADER_STAGE_VERTEX_BIT, vs, "main", NULL},
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
       VK_SHADER_STAGE_FRAGMENT_BIT, fs, "main", NULL}};
  VkPipelineVertexInputStateCreateInfo vin = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo ia = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
      .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
  VkViewport vp = {0, 0, W, W, 0, 1};
  VkRect2D sc = {{0, 0}, {W, W}};
  VkPipelineViewportStateCreateInfo vps = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
      .viewportCount = 1,
      .pViewports = &vp,
      .scissorCount = 1,
      .pScissors = &sc};
  VkPipelineRasterizationStateCreateInfo rs = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
      .polygonMode = VK_POLYGON_MODE_FILL,
      .cullMode = VK_CULL_MODE_NONE,
      .lineWidth = 1.0f};
  VkPipelineMultisampleStateCreateInfo ms = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
      .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT};
  VkPipelineColorBlendAttachmentState cba = {.colorWriteMask = 0xf};
  VkPipelineColorBlendStateCreateInfo cb_state = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
      .attachmentCount = 1,
      .pAttachments = &cba};
  VkGraphicsPipelineCreateInfo gpi = {
      .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
      .stageCount = 2,
      .pStages = stages,
      .pVertexInputState = &vin,
      .pInputAssemblyState = &ia,
      .pViewportState = &vps,
      .pRasterizationState = &rs,
      .pMultisampleState = &ms,
      .pColorBlendState = &cb_state,
      .layout = gpl,
      .renderPass = rp};
  CHECK(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpi, NULL, &gpipe));

  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo dpi = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = 1,
      .poolSizeCount = 1,
      .pPoolSizes = &ps};
  VkDescriptorPool dpool;
  CHECK(vkCreateDescriptorPool(dev, &dpi, NULL, &dpool));
  VkDescriptorSetAllocateInfo dsa = {
      VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dpool, 1, &dsl};
  VkDescriptorSet set;
  CHECK(vkAllocateDescriptorSets(dev, &dsa, &set));
  VkDescriptorBufferInfo dbi = {store, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet wr = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                             .dstSet = set,
                             .descriptorCount = 1,
                             .descriptorType =
                                 VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                             .pBufferInfo = &dbi};
  vkUpdateDescriptorSets(dev, 1, &wr, 0, NULL);

  VkQueryPoolCreateInfo qpi = {
      .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
      .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
      .queryCount = 2,
      .pipelineStatistics =
          VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_VERTICES_BIT |
          VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_PRIMITIVES_BIT |
          VK_QUERY_PIPELINE_STATISTIC_VERTEX_SHADER_INVOCATIONS_BIT |
          VK_QUERY_PIPELINE_STATISTIC_CLIPPING_INVOCATIONS_BIT |
          VK_QUERY_PIPELINE_STATISTIC_CLIPPING_PRIMITIVES_BIT |
          VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT |
          VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT};
  VkQueryPool stats;
  CHECK(vkCreateQueryPool(dev, &qpi, NULL, &stats));

  /* Command buffers. */
  VkCommandBuffer cbs[2];
  VkCommandPool pool = two_cmdbufs(0, "Compute work", "Draw work", cbs);
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};

  /* 1: fill, double, copy out. */
  VkCommandBuffer cb = cbs[0];
  CHECK(vkBeginCommandBuffer(cb, &bi));
  if (query)
    vkCmdResetQueryPool(cb, stats, 0, 2);
  vkCmdFillBuffer(cb, store, 0, VK_WHOLE_SIZE, 21);
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  label(cb, "Double values");
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, cpipe);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, cpl, 0, 1, &set,
                          0, NULL);
  if (query)
    vkCmdBeginQuery(cb, stats, 1, 0);
  vkCmdDispatch(cb, N / 64, 1, 1);
  if (query)
    vkCmdEndQuery(cb, stats, 1);
  unlabel(cb);
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  VkBufferCopy bc = {0, 0, N * 4};
  vkCmdCopyBuffer(cb, store, host, 1, &bc);
  CHECK(vkEndCommandBuffer(cb));

  /* 2: draw offscreen, copy the image out. */
  cb = cbs[1];
  CHECK(vkBeginCommandBuffer(cb, &bi));
  label(cb, "Offscreen pass");
  VkClearValue clear = {.color = {{0, 0, 0, 1}}};
  VkRenderPassBeginInfo rbi = {.sType =
                                   VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                               .renderPass = rp,
                               .framebuffer = fb,
                               .renderArea = {{0, 0}, {W, W}},
                               .clearValueCount = 1,
                               .pClearValues = &clear};
  VkBufferImageCopy ic = {
      .imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1},
      .imageExtent = {W, W, 1}};
  /* --secondary: the draw in a secondary command buffer inside the pass,
   * the copy in another ("Readback") after it. */
  VkCommandBuffer sec[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  if (secondary) {
    VkCommandBufferAllocateInfo sai = {
        VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, pool,
        VK_COMMAND_BUFFER_LEVEL_SECONDARY, 2};
    CHECK(vkAllocateCommandBuffers(dev, &sai, sec));
    name_object(VK_OBJECT_TYPE_COMMAND_BUFFER, (uint64_t)(uintptr_t)sec[1],
                "Readback");
    VkCommandBufferInheritanceInfo inh = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .renderPass = rp,
        .subpass = 0,
        .framebuffer = fb};
    VkCommandBufferBeginInfo sbi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT |
                 VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT,
        .pInheritanceInfo = &inh};
    CHECK(vkBeginCommandBuffer(sec[0], &sbi));
    vkCmdBindPipeline(sec[0], VK_PIPELINE_BIND_POINT_GRAPHICS, gpipe);
    vkCmdDraw(sec[0], 3, 1, 0, 0);
    CHECK(vkEndCommandBuffer(sec[0]));
    VkCommandBufferInheritanceInfo none = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    sbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    sbi.pInheritanceInfo = &none;
    CHECK(vkBeginCommandBuffer(sec[1], &sbi));
    vkCmdCopyImageToBuffer(sec[1], img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           pix, 1, &ic);
    CHECK(vkEndCommandBuffer(sec[1]));
  }
  if (query)
    vkCmdBeginQuery(cb, stats, 0, 0);
  vkCmdBeginRenderPass(cb, &rbi,
                       secondary ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS
                                 : VK_SUBPASS_CONTENTS_INLINE);
  if (secondary) {
    vkCmdExecuteCommands(cb, 1, &sec[0]);
  } else {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, gpipe);
    vkCmdDraw(cb, 3, 1, 0, 0);
  }
  vkCmdEndRenderPass(cb);
  if (query)
    vkCmdEndQuery(cb, stats, 0);
  unlabel(cb);
  if (secondary)
    vkCmdExecuteCommands(cb, 1, &sec[1]);
  else
    vkCmdCopyImageToBuffer(cb, img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, pix,
                           1, &ic);
  CHECK(vkEndCommandBuffer(cb));

  VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, NULL,
                               0};
  VkSemaphore sem;
  CHECK(vkCreateSemaphore(dev, &sci, NULL, &sem));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  VkFence fence;
  CHECK(vkCreateFence(dev, &fci, NULL, &fence));
  VkSubmitInfo s1 = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &cbs[0],
                     .signalSemaphoreCount = 1,
                     .pSignalSemaphores = &sem};
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
  VkSubmitInfo s2 = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .waitSemaphoreCount = 1,
                     .pWaitSemaphores = &sem,
                     .pWaitDstStageMask = &wait_stage,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &cbs[1]};
  if (!sync2) {
    CHECK(vkQueueSubmit(queue, 1, &s1, VK_NULL_HANDLE));
    CHECK(vkQueueSubmit(queue2, 1, &s2, fence));
  } else { /* the same with vkQueueSubmit2 */
    VkSemaphoreSubmitInfo ss = {
        .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO,
        .semaphore = sem,
        .stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT};
    VkCommandBufferSubmitInfo c0 = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
        .commandBuffer = cbs[0]};
    VkCommandBufferSubmitInfo c1 = c0;
    c1.commandBuffer = cbs[1];
    VkSubmitInfo2 a = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                       .commandBufferInfoCount = 1,
                       .pCommandBufferInfos = &c0,
                       .signalSemaphoreInfoCount = 1,
                       .pSignalSemaphoreInfos = &ss};
    VkSubmitInfo2 b = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                       .waitSemaphoreInfoCount = 1,
                       .pWaitSemaphoreInfos = &ss,
                       .commandBufferInfoCount = 1,
                       .pCommandBufferInfos = &c1};
    CHECK(vkQueueSubmit2(queue, 1, &a, VK_NULL_HANDLE));
    CHECK(vkQueueSubmit2(queue2, 1, &b, fence));
  }
  CHECK(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));

  /* Check what the GPU did. */
  int bad = 0;
  uint32_t *v;
  CHECK(vkMapMemory(dev, m_host, 0, VK_WHOLE_SIZE, 0, (void **)&v));
  for (int i = 0; i < N; i++)
    bad += v[i] != 42;
  vkUnmapMemory(dev, m_host);
  uint8_t *p;
  CHECK(vkMapMemory(dev, m_pix, 0, VK_WHOLE_SIZE, 0, (void **)&p));
  const uint8_t *mid = p + ((W / 2) * W + W / 2) * 4;
  bad += mid[0] != 255 || p[0] != 0; /* triangle in the middle, not a corner */
  vkUnmapMemory(dev, m_pix);
  /* --frames F: then F frames of the render pass ("Frame"), two in
   * flight, each command buffer recorded again for each frame, as a
   * presenting program renders. --twice: each submitted a second time
   * once the first has run, ONE_TIME_SUBMIT notwithstanding (invalid,
   * but some programs do it). --simultaneous: recorded with
   * SIMULTANEOUS_USE instead of ONE_TIME_SUBMIT, each frame a clear of
   * the image between two barriers, as vkmark's clear scene renders
   * (clear_frame()); --twice is valid then, and puts each command
   * buffer of the last two frames twice in one vkQueueSubmit. */
  if (frames > 0) {
    VkCommandBuffer fcbs[2];
    VkCommandPool fpool =
        two_cmdbufs(VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, "Slot 0",
                    "Slot 1", fcbs);
    VkFence slot[2];
    VkFenceCreateInfo sf = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL,
                            VK_FENCE_CREATE_SIGNALED_BIT};
    for (int i = 0; i < 2; i++)
      CHECK(vkCreateFence(dev, &sf, NULL, &slot[i]));
    for (int f = 0; f < frames; f++) {
      VkCommandBuffer fc = fcbs[f & 1];
      CHECK(vkWaitForFences(dev, 1, &slot[f & 1], VK_TRUE, UINT64_MAX));
      CHECK(vkResetFences(dev, 1, &slot[f & 1]));
      VkCommandBufferBeginInfo frame_bi = bi;
      if (simultaneous)
        frame_bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
      CHECK(vkBeginCommandBuffer(fc, &frame_bi));
      label(fc, "Frame");
      if (simultaneous) {
        clear_frame(fc, img);
      } else {
        vkCmdBeginRenderPass(fc, &rbi, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(fc, VK_PIPELINE_BIND_POINT_GRAPHICS, gpipe);
        vkCmdDraw(fc, 3, 1, 0, 0);
        vkCmdEndRenderPass(fc);
      }
      unlabel(fc);
      CHECK(vkEndCommandBuffer(fc));
      /* (SIMULTANEOUS_USE and --twice: the last frames' two runs in one
       * submission) */
      VkCommandBuffer both[2] = {fc, fc};
      bool at_once = simultaneous && twice && f >= frames - 2;
      VkSubmitInfo fsi = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                          .commandBufferCount = at_once ? 2 : 1,
                          .pCommandBuffers = at_once ? both : &fc};
      struct timespec t0, t1;
      int nr = 0;
      long long r0 = timed ? raster_cpu_ns(&nr) : 0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      CHECK(vkQueueSubmit(queue, 1, &fsi, slot[f & 1]));
      if (timed) {
        CHECK(vkWaitForFences(dev, 1, &slot[f & 1], VK_TRUE, UINT64_MAX));
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long long r1 = raster_cpu_ns(&nr);
        printf("sample: frame %d window_ns=%lld raster_ns=%lld "
               "raster_threads=%d\n",
               f,
               (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll +
                   (t1.tv_nsec - t0.tv_nsec),
               r1 - r0, nr);
      }
      if (twice && !simultaneous) {
        CHECK(vkWaitForFences(dev, 1, &slot[f & 1], VK_TRUE, UINT64_MAX));
        CHECK(vkResetFences(dev, 1, &slot[f & 1]));
        CHECK(vkQueueSubmit(queue, 1, &fsi, slot[f & 1]));
      }
    }
    CHECK(vkWaitForFences(dev, 2, slot, VK_TRUE, UINT64_MAX));
    for (int i = 0; i < 2; i++)
      vkDestroyFence(dev, slot[i], NULL);
    vkFreeCommandBuffers(dev, fpool, 2, fcbs);
    vkDestroyCommandPool(dev, fpool, NULL);
    printf("sample: frames=%d submits=%d\n", frames,
           twice ? simultaneous ? frames + 2 : 2 * frames : frames);
  }
  uint64_t st[2][7];
  memset(st, 0, sizeof(st));
  if (query)
    CHECK(vkGetQueryPoolResults(dev, stats, 0, 2, sizeof(st), st, sizeof(st[0]),
                                VK_QUERY_RESULT_64_BIT));

  /* Clean up (all but the leaked buffer). */
  if (leak) {
    VkBufferCreateInfo lb = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = 64,
                             .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    VkBuffer b;
    CHECK(vkCreateBuffer(dev, &lb, NULL, &b));
  }
  vkDestroyFence(dev, fence, NULL);
  vkDestroySemaphore(dev, sem, NULL);
  vkFreeCommandBuffers(dev, pool, 2, cbs);
  if (secondary)
    vkFreeCommandBuffers(dev, pool, 2, sec);
  vkDestroyCommandPool(dev, pool, NULL);
  vkDestroyQueryPool(dev, stats, NULL);
  vkDestroyDescriptorPool(dev, dpool, NULL);
  vkDestroyPipeline(dev, gpipe, NULL);
  vkDestroyPipeline(dev, cpipe, NULL);
  vkDestroyPipelineLayout(dev, gpl, NULL);
  vkDestroyPipelineLayout(dev, cpl, NULL);
  vkDestroyDescriptorSetLayout(dev, dsl, NULL);
  vkDestroyShaderModule(dev, vs, NULL);
  vkDestroyShaderModule(dev, fs, NULL);
  vkDestroyShaderModule(dev, cs, NULL);
  vkDestroyFramebuffer(dev, fb, NULL);
  vkDestroyRenderPass(dev, rp, NULL);
  vkDestroyImageView(dev, view, NULL);
  vkDestroyImage(dev, img, NULL);
  vkDestroyBuffer(dev, store, NULL);
  vkDestroyBuffer(dev, host, NULL);
  vkDestroyBuffer(dev, pix, NULL);
  vkFreeMemory(dev, m_store, NULL);
  vkFreeMemory(dev, m_host, NULL);
  vkFreeMemory(dev, m_pix, NULL);
  vkFreeMemory(dev, m_img, NULL);
  vkDestroyDevice(dev, NULL);
  vkDestroyInstance(inst, NULL);
  if (bad) {
    fprintf(stderr, "sample: wrong results (%d)\n", bad);
    return 2;
  }
  if (!query) {
    printf("sample: ok vertices=3 submits=2\n");
    return 0;
  }
  /* Query 0 (the draw): the graphics counters; query 1: the dispatch. */
  printf("sample: ok vertices=3 ia_vertices=%llu ia_primitives=%llu vs=%llu "
         "clip=%llu clip_primitives=%llu fs=%llu cs=%llu submits=2\n",
         (unsigned long long)st[0][0], (unsigned long long)st[0][1],
         (unsigned long long)st[0][2], (unsigned long long)st[0][3],
         (unsigned long long)st[0][4], (unsigned long long)st[0][5],
         (unsigned long long)st[1][6]);
  return 0;
}
