/*
 * bench/vulkan.c - what the Vulkan layer costs a program.
 *
 *   vulkan [--runs R] [--submits S] [--commands C] [--vkcube FRAMES]
 *
 * In-process, on the first Vulkan device (lavapipe here), three ways, each
 * R times (default 5), alternately: "plain" (an instance without the
 * layer), "layer" (with VK_LAYER_GPUPERF_trace, nothing recorded) and
 * "traced" (with it, API, RENDER_STAGE and GPU_MEMORY records collected
 * into buffers a completion callback consumes). Each run records S
 * (default 200) primary command buffers of C (default 64) small
 * vkCmdFillBuffer transfers, submits each with a fence and waits for it.
 * Prints medians of the host time spent recording a command and in one
 * vkQueueSubmit, and the difference to plain.
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
} way;

static void way_init(way *w, const char *name, bool layer) {
  w->name = name;
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
}

static void way_fini(way *w) {
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

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(*v), cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

int main(int argc, char **argv) {
  int runs = 5, submits = 200, commands = 64, frames = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--submits") == 0 && i + 1 < argc)
      submits = atoi(argv[++i]);
    else if (strcmp(argv[i], "--commands") == 0 && i + 1 < argc)
      commands = atoi(argv[++i]);
    else if (strcmp(argv[i], "--vkcube") == 0 && i + 1 < argc)
      frames = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: vulkan [--runs R] [--submits S] [--commands C] "
                      "[--vkcube FRAMES]\n");
      return 1;
    }
  }
  if (runs < 1 || runs > 100 || submits < 1 || commands < 1 || frames < 0) {
    fprintf(stderr, "vulkan: counts out of range\n");
    return 1;
  }
  if (frames)
    return vkcube(argv[0], frames, runs);
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
  way_init(&ways[0], "plain", false);
  way_init(&ways[1], "layer", true);
  way_init(&ways[2], "traced", true);
  double cmd[3][100], sub[3][100];
  for (int r = 0; r < runs; r++)
    for (int k = 0; k < 3; k++) {
      if (k == 2) {
        gp_activity_enable(GP_ACTIVITY_KIND_API);
        gp_activity_enable(GP_ACTIVITY_KIND_RENDER_STAGE);
        gp_activity_enable(GP_ACTIVITY_KIND_GPU_MEMORY);
      }
      run(&ways[k], submits, commands, &cmd[k][r], &sub[k][r]);
      gp_activity_disable(GP_ACTIVITY_KIND_API);
      gp_activity_disable(GP_ACTIVITY_KIND_RENDER_STAGE);
      gp_activity_disable(GP_ACTIVITY_KIND_GPU_MEMORY);
    }
  double mc[3], ms[3];
  for (int k = 0; k < 3; k++) {
    mc[k] = median(cmd[k], runs);
    ms[k] = median(sub[k], runs);
  }
  printf("%d submits of %d vkCmdFillBuffer each, %d runs, medians:\n", submits,
         commands, runs);
  for (int k = 0; k < 3; k++)
    printf("  %-6s  %8.0f ns per recorded command (%+6.0f)   %9.0f ns per "
           "vkQueueSubmit (%+7.0f)\n",
           ways[k].name, mc[k], mc[k] - mc[0], ms[k], ms[k] - ms[0]);
  gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
  for (int k = 0; k < 3; k++)
    way_fini(&ways[k]);
  return 0;
}
