/*
 * bench/vulkan.c - what the Vulkan layer costs a program.
 *
 *   vulkan [--runs R] [--submits S] [--commands C] [--frames F]
 *          [--size WxH] [--way W] [--vkcube FRAMES]
 *
 * In-process, on the first Vulkan device (lavapipe here), three ways, each
 * R times (default 5), interleaved (plain, layer, traced, plain, ...):
 * "plain" (an instance without the layer), "layer" (with
 * VK_LAYER_GPUPERF_trace, nothing recorded) and "traced" (with it, API,
 * RENDER_STAGE and GPU_MEMORY records collected into buffers a completion
 * callback consumes). Three loops, each printed as median [min..max] over
 * the runs:
 *
 *  - fill: S (default 200) primary command buffers of C (default 64) small
 *    vkCmdFillBuffer transfers, each submitted with a fence and waited
 *    for: host ns per recorded command and per vkQueueSubmit;
 *  - pass: S command buffers of one render pass (a clear of a W x H
 *    image, default 800x600 as vkmark's window), each submitted with a fence
 * and waited for: host ns per vkQueueSubmit, and per iteration (record, submit,
 * wait);
 *  - frames: F (default 3000) frames of the same render pass with two
 *    frames in flight, as a presenting program renders (wait for the
 *    frame slot's fence, record its command buffer, submit with the
 *    fence), headless: frames per second, and traced against plain.
 *
 * --way plain|layer|traced runs the loops of that way alone (for
 * valgrind --tool=callgrind, which counts instructions where the
 * machine's noise hides a difference in time).
 *
 * --vkcube FRAMES (run under xvfb-run): runs `vkcube --c FRAMES` plain
 * and under `gpuperf record` (GPUPERF_CLI, or ../gpuperf beside this
 * program) R times each, alternately, and prints the median wall time per
 * frame of each and their ratio (target <= 1.05).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "gpuperf/gpuperf.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define CHECK(x)                                                               \
  do {                                                                         \
    VkResult r_ = (x);                                                         \
    if (r_ != VK_SUCCESS) {                                                    \
      fprintf(stderr, "vulkan: %s: %d\n", #x, r_);                             \
      exit(2);                                                                 \
    }                                                                          \
  } while (0)

/* One way of calling: an instance, a device, what a run needs. */
typedef struct way {
  const char *name;
  VkInstance inst;
  VkDevice dev;
  VkQueue queue;
  VkBuffer buf;
  VkDeviceMemory mem;
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkFence fence;
  /* the render pass of the pass and frames loops */
  VkImage img;
  VkDeviceMemory img_mem;
  VkImageView view;
  VkRenderPass rp;
  VkFramebuffer fb;
  uint32_t width, height;
  VkCommandBuffer slot_cb[2]; /* frames in flight */
  VkFence slot_fence[2];
} way;

/* The first memory type of bits with all of flags. */
static uint32_t mem_type(VkPhysicalDevice phys, uint32_t bits,
                         VkMemoryPropertyFlags flags) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(phys, &mp);
  for (uint32_t t = 0; t < mp.memoryTypeCount; t++)
    if ((bits & (1u << t)) &&
        (mp.memoryTypes[t].propertyFlags & flags) == flags)
      return t;
  fprintf(stderr, "vulkan: no memory type\n");
  exit(2);
}

/* A W x H color image, a render pass that clears it, its framebuffer. */
static void pass_init(way *w, VkPhysicalDevice phys) {
  VkImageCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
                          .imageType = VK_IMAGE_TYPE_2D,
                          .format = VK_FORMAT_R8G8B8A8_UNORM,
                          .extent = {w->width, w->height, 1},
                          .mipLevels = 1,
                          .arrayLayers = 1,
                          .samples = VK_SAMPLE_COUNT_1_BIT,
                          .tiling = VK_IMAGE_TILING_OPTIMAL,
                          .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT};
  CHECK(vkCreateImage(w->dev, &ii, NULL, &w->img));
  VkMemoryRequirements req;
  vkGetImageMemoryRequirements(w->dev, w->img, &req);
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL,
                             req.size, mem_type(phys, req.memoryTypeBits, 0)};
  CHECK(vkAllocateMemory(w->dev, &ai, NULL, &w->img_mem));
  CHECK(vkBindImageMemory(w->dev, w->img, w->img_mem, 0));
  VkImageViewCreateInfo vi = {
      .sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
      .image = w->img,
      .viewType = VK_IMAGE_VIEW_TYPE_2D,
      .format = VK_FORMAT_R8G8B8A8_UNORM,
      .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
  CHECK(vkCreateImageView(w->dev, &vi, NULL, &w->view));
  VkAttachmentDescription att = {
      .format = VK_FORMAT_R8G8B8A8_UNORM,
      .samples = VK_SAMPLE_COUNT_1_BIT,
      .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
      .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
      .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
      .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
      .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
      .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
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
  CHECK(vkCreateRenderPass(w->dev, &rpi, NULL, &w->rp));
  VkFramebufferCreateInfo fi = {.sType =
                                    VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                .renderPass = w->rp,
                                .attachmentCount = 1,
                                .pAttachments = &w->view,
                                .width = w->width,
                                .height = w->height,
                                .layers = 1};
  CHECK(vkCreateFramebuffer(w->dev, &fi, NULL, &w->fb));
  VkCommandBufferAllocateInfo cai = {
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, w->pool,
      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2};
  CHECK(vkAllocateCommandBuffers(w->dev, &cai, w->slot_cb));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL,
                           VK_FENCE_CREATE_SIGNALED_BIT};
  for (int i = 0; i < 2; i++)
    CHECK(vkCreateFence(w->dev, &fci, NULL, &w->slot_fence[i]));
}

static void way_init(way *w, const char *name, bool layer, uint32_t width,
                     uint32_t height) {
  w->name = name;
  w->width = width;
  w->height = height;
  const char *layers[] = {"VK_LAYER_GPUPERF_trace"};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_3};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = layer ? 1 : 0,
                              .ppEnabledLayerNames = layers};
  CHECK(vkCreateInstance(&ici, NULL, &w->inst));
  VkPhysicalDevice phys;
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(w->inst, &n, &phys);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || !n) {
    fprintf(stderr, "vulkan: no device\n");
    exit(3);
  }
  float prio = 1;
  VkDeviceQueueCreateInfo qi = {
      VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qi};
  CHECK(vkCreateDevice(phys, &dci, NULL, &w->dev));
  vkGetDeviceQueue(w->dev, 0, 0, &w->queue);
  VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = 4096,
                           .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  CHECK(vkCreateBuffer(w->dev, &bi, NULL, &w->buf));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(w->dev, w->buf, &req);
  uint32_t type = 0;
  while (!(req.memoryTypeBits & (1u << type)))
    type++;
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL,
                             req.size, type};
  CHECK(vkAllocateMemory(w->dev, &ai, NULL, &w->mem));
  CHECK(vkBindBufferMemory(w->dev, w->buf, w->mem, 0));
  VkCommandPoolCreateInfo pci = {
      VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, 0};
  CHECK(vkCreateCommandPool(w->dev, &pci, NULL, &w->pool));
  VkCommandBufferAllocateInfo cai = {
      VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, w->pool,
      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  CHECK(vkAllocateCommandBuffers(w->dev, &cai, &w->cb));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  CHECK(vkCreateFence(w->dev, &fci, NULL, &w->fence));
  pass_init(w, phys);
}

static void way_fini(way *w) {
  for (int i = 0; i < 2; i++)
    vkDestroyFence(w->dev, w->slot_fence[i], NULL);
  vkFreeCommandBuffers(w->dev, w->pool, 2, w->slot_cb);
  vkDestroyFramebuffer(w->dev, w->fb, NULL);
  vkDestroyRenderPass(w->dev, w->rp, NULL);
  vkDestroyImageView(w->dev, w->view, NULL);
  vkDestroyImage(w->dev, w->img, NULL);
  vkFreeMemory(w->dev, w->img_mem, NULL);
  vkDestroyFence(w->dev, w->fence, NULL);
  vkFreeCommandBuffers(w->dev, w->pool, 1, &w->cb);
  vkDestroyCommandPool(w->dev, w->pool, NULL);
  vkDestroyBuffer(w->dev, w->buf, NULL);
  vkFreeMemory(w->dev, w->mem, NULL);
  vkDestroyDevice(w->dev, NULL);
  vkDestroyInstance(w->inst, NULL);
}

/* One run: ns per recorded command and per vkQueueSubmit. */
static void run(way *w, int submits, int commands, double *per_cmd,
                double *per_submit) {
  uint64_t rec = 0, sub = 0;
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  for (int s = 0; s < submits; s++) {
    uint64_t t0 = now_ns();
    CHECK(vkBeginCommandBuffer(w->cb, &bi));
    for (int c = 0; c < commands; c++)
      vkCmdFillBuffer(w->cb, w->buf, (VkDeviceSize)(c % 64) * 64, 64,
                      (uint32_t)c);
    CHECK(vkEndCommandBuffer(w->cb));
    uint64_t t1 = now_ns();
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &w->cb};
    CHECK(vkQueueSubmit(w->queue, 1, &si, w->fence));
    uint64_t t2 = now_ns();
    CHECK(vkWaitForFences(w->dev, 1, &w->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(w->dev, 1, &w->fence));
    rec += t1 - t0;
    sub += t2 - t1;
  }
  *per_cmd = (double)rec / ((double)submits * commands);
  *per_submit = (double)sub / submits;
}

/* Records one render pass that clears the image into cb. */
static void record_pass(way *w, VkCommandBuffer cb) {
  VkCommandBufferBeginInfo bi = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkClearValue clear = {.color = {.float32 = {0.2f, 0.4f, 0.6f, 1}}};
  VkRenderPassBeginInfo rbi = {.sType =
                                   VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                               .renderPass = w->rp,
                               .framebuffer = w->fb,
                               .renderArea = {{0, 0}, {w->width, w->height}},
                               .clearValueCount = 1,
                               .pClearValues = &clear};
  CHECK(vkBeginCommandBuffer(cb, &bi));
  vkCmdBeginRenderPass(cb, &rbi, VK_SUBPASS_CONTENTS_INLINE);
  vkCmdEndRenderPass(cb);
  CHECK(vkEndCommandBuffer(cb));
}

/* The pass loop: ns per vkQueueSubmit and per iteration (record, submit,
 * wait for the fence). */
static void run_pass(way *w, int submits, double *per_submit,
                     double *per_iter) {
  uint64_t sub = 0, t_start = now_ns();
  for (int s = 0; s < submits; s++) {
    record_pass(w, w->cb);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &w->cb};
    uint64_t t1 = now_ns();
    CHECK(vkQueueSubmit(w->queue, 1, &si, w->fence));
    sub += now_ns() - t1;
    CHECK(vkWaitForFences(w->dev, 1, &w->fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(w->dev, 1, &w->fence));
  }
  *per_submit = (double)sub / submits;
  *per_iter = (double)(now_ns() - t_start) / submits;
}

/* The frame loop, two frames in flight: frames per second. */
static double run_frames(way *w, int frames) {
  uint64_t t0 = now_ns();
  for (int f = 0; f < frames; f++) {
    int i = f & 1;
    CHECK(vkWaitForFences(w->dev, 1, &w->slot_fence[i], VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(w->dev, 1, &w->slot_fence[i]));
    record_pass(w, w->slot_cb[i]);
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &w->slot_cb[i]};
    CHECK(vkQueueSubmit(w->queue, 1, &si, w->slot_fence[i]));
  }
  CHECK(vkWaitForFences(w->dev, 2, w->slot_fence, VK_TRUE, UINT64_MAX));
  return frames / ((double)(now_ns() - t0) / 1e9);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(*v), cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "median [min..max]" of v (sorted in place) into buf. */
static const char *spread(double *v, int n, double scale, char *buf,
                          size_t size) {
  double m = median(v, n);
  snprintf(buf, size, "%.1f [%.1f..%.1f]", m / scale, v[0] / scale,
           v[n - 1] / scale);
  return buf;
}

/* Buffers for the traced way: records are produced and thrown away. */
static void request(uint8_t **buffer, size_t *size, size_t *max) {
  *size = 1 << 20;
  *buffer = aligned_alloc(8, *size);
  *max = 0;
}
static void complete(uint8_t *buffer, size_t size, size_t valid) {
  (void)size, (void)valid;
  free(buffer);
}

/* Runs argv to completion; returns the wall time in ns, or 0. */
static uint64_t timed(char *const argv[]) {
  uint64_t t0 = now_ns();
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
      WEXITSTATUS(st) != 0)
    return 0;
  return now_ns() - t0;
}

static int vkcube(const char *self, int frames, int runs) {
  char cli[4096], n[16], trace[64];
  const char *env = getenv("GPUPERF_CLI");
  if (env && *env)
    snprintf(cli, sizeof(cli), "%s", env);
  else {
    snprintf(cli, sizeof(cli), "%s", self);
    char *slash = strrchr(cli, '/');
    snprintf(slash ? slash + 1 : cli,
             sizeof(cli) - (size_t)(slash ? slash + 1 - cli : 0), "../gpuperf");
  }
  snprintf(n, sizeof(n), "%d", frames);
  snprintf(trace, sizeof(trace), "/tmp/gpuperf-bench-vkcube-%d.pftrace",
           (int)getpid());
  char *plain[] = {"vkcube", "--c", n, NULL};
  char *traced[] = {cli,  "record", "-q",  "-o", trace,
                    "--", "vkcube", "--c", n,    NULL};
  double p[100], t[100];
  for (int i = 0; i < runs; i++) {
    uint64_t a = timed(plain), b = timed(traced);
    if (!a || !b) {
      fprintf(stderr, "vulkan: vkcube failed (run under xvfb-run; is "
                      "vulkan-tools installed?)\n");
      unlink(trace);
      return 2;
    }
    p[i] = (double)a / frames;
    t[i] = (double)b / frames;
  }
  unlink(trace);
  double mp = median(p, runs), mt = median(t, runs);
  printf("vkcube --c %d: %.0f us/frame plain, %.0f us/frame recorded "
         "(medians of %d runs each, alternated, whole process), ratio %.3f "
         "(target <= 1.05)\n",
         frames, mp / 1e3, mt / 1e3, runs, mt / mp);
  return 0;
}

/* Turns the traced way's records on (k == 2) or every kind off. */
static void tracing(int k) {
  if (k == 2) {
    gp_activity_enable(GP_ACTIVITY_KIND_API);
    gp_activity_enable(GP_ACTIVITY_KIND_RENDER_STAGE);
    gp_activity_enable(GP_ACTIVITY_KIND_GPU_MEMORY);
    return;
  }
  gp_activity_disable(GP_ACTIVITY_KIND_API);
  gp_activity_disable(GP_ACTIVITY_KIND_RENDER_STAGE);
  gp_activity_disable(GP_ACTIVITY_KIND_GPU_MEMORY);
}

int main(int argc, char **argv) {
  int runs = 5, submits = 200, commands = 64, frames = 3000, cube = 0;
  int width = 800, height = 600;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--submits") == 0 && i + 1 < argc)
      submits = atoi(argv[++i]);
    else if (strcmp(argv[i], "--commands") == 0 && i + 1 < argc)
      commands = atoi(argv[++i]);
    else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc &&
             sscanf(argv[i + 1], "%dx%d", &width, &height) == 2)
      i++;
    else if (strcmp(argv[i], "--way") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--vkcube") == 0 && i + 1 < argc)
      cube = atoi(argv[++i]);
    else {
      fprintf(stderr,
              "usage: vulkan [--runs R] [--submits S] [--commands C] "
              "[--frames F] [--size WxH] [--way W] [--vkcube FRAMES]\n");
      return 1;
    }
  }
  if (runs < 1 || runs > 100 || submits < 1 || commands < 1 || frames < 1 ||
      cube < 0 || width < 1 || width > 4096 || height < 1 || height > 4096) {
    fprintf(stderr, "vulkan: counts out of range\n");
    return 1;
  }
  if (cube)
    return vkcube(argv[0], cube, runs);
  /* The layer's manifest: beside this program's build directory. */
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", argv[0]);
  char *slash = strrchr(dir, '/');
  snprintf(slash ? slash + 1 : dir,
           sizeof(dir) - (size_t)(slash ? slash + 1 - dir : 0), "../vulkan");
  if (!getenv("VK_ADD_LAYER_PATH"))
    setenv("VK_ADD_LAYER_PATH", dir, 1);
  gp_activity_register_callbacks(request, complete);

  way ways[3];
  static const char *const names[3] = {"plain", "layer", "traced"};
  int first = 0, last = 2;
  for (int k = 0; only && k < 3; k++)
    if (strcmp(only, names[k]) == 0)
      first = last = k;
  if (only && strcmp(only, names[first]) != 0) {
    fprintf(stderr, "vulkan: --way plain, layer or traced\n");
    return 1;
  }
  for (int k = first; k <= last; k++)
    way_init(&ways[k], names[k], k > 0, (uint32_t)width, (uint32_t)height);
  if (only) { /* one way: its loops, no comparison */
    double c, s, ps, pi;
    tracing(first);
    run(&ways[first], submits, commands, &c, &s);
    run_pass(&ways[first], submits, &ps, &pi);
    double f = run_frames(&ways[first], frames);
    tracing(-1);
    printf("%s: %.0f ns per recorded command, %.1f us per vkQueueSubmit "
           "(fill); %.1f us per vkQueueSubmit, %.1f us per iteration "
           "(pass); %.0f frames/s\n",
           names[first], c, s / 1e3, ps / 1e3, pi / 1e3, f);
    gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
    way_fini(&ways[first]);
    return 0;
  }
  static double cmd[3][100], sub[3][100], psub[3][100], pit[3][100],
      fps[3][100];
  /* Interleaved: each run does every way once, loop by loop, so that the
   * machine's drift over time reaches all three alike. */
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < 3; k++) {
      tracing(k);
      run(&ways[k], submits, commands, &cmd[k][r], &sub[k][r]);
      tracing(-1);
    }
    for (int k = 0; k < 3; k++) {
      tracing(k);
      run_pass(&ways[k], submits, &psub[k][r], &pit[k][r]);
      tracing(-1);
    }
    for (int k = 0; k < 3; k++) {
      tracing(k);
      fps[k][r] = run_frames(&ways[k], frames);
      tracing(-1);
    }
  }
  char a[64], b[64];
  printf("fill: %d submits of %d vkCmdFillBuffer each, %d runs, median "
         "[min..max]:\n",
         submits, commands, runs);
  double mc0 = median(cmd[0], runs), ms0 = median(sub[0], runs);
  for (int k = 0; k < 3; k++) {
    double mc = median(cmd[k], runs), ms = median(sub[k], runs);
    printf("  %-6s  %s ns per recorded command (%+.0f)   %s us per "
           "vkQueueSubmit (%+.1f)\n",
           ways[k].name, spread(cmd[k], runs, 1, a, sizeof(a)), mc - mc0,
           spread(sub[k], runs, 1e3, b, sizeof(b)), (ms - ms0) / 1e3);
  }
  printf("pass: %d submits of one render pass (%dx%d clear), each waited "
         "for, %d runs, median [min..max]:\n",
         submits, width, height, runs);
  double mp0 = median(psub[0], runs), mi0 = median(pit[0], runs);
  for (int k = 0; k < 3; k++) {
    double mp = median(psub[k], runs), mi = median(pit[k], runs);
    printf("  %-6s  %s us per vkQueueSubmit (%+.1f)   %s us per "
           "iteration (%+.1f)\n",
           ways[k].name, spread(psub[k], runs, 1e3, a, sizeof(a)),
           (mp - mp0) / 1e3, spread(pit[k], runs, 1e3, b, sizeof(b)),
           (mi - mi0) / 1e3);
  }
  printf("frames: %d frames of that render pass, two in flight, %d runs, "
         "median [min..max]:\n",
         frames, runs);
  double mf0 = median(fps[0], runs);
  for (int k = 0; k < 3; k++) {
    double mf = median(fps[k], runs);
    printf("  %-6s  %s frames/s   ratio %.3f   %+.1f us per frame\n",
           ways[k].name, spread(fps[k], runs, 1, a, sizeof(a)), mf / mf0,
           (1e6 / mf - 1e6 / mf0));
  }
  printf("targets: traced pass <= +5 us per submit; traced frames ratio >= "
         "0.95\n");
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  for (int k = 0; k < 3; k++)
    way_fini(&ways[k]);
  return 0;
}
