/*
 * ftrace_events.c - the names of the kernel's GPU trace events gpuperf
 * reads (gp_ftrace_event, activity.h), shared by the config parser, which
 * turns a linux.ftrace data source's ftrace_events into a mask of them,
 * and the tracefs reader, which enables them by these names.
 */
#include <string.h>

#include "core.h"

static const char *const names[GP_FTRACE_EVENT_COUNT] = {
    [GP_FTRACE_GPU_FREQUENCY] = "power/gpu_frequency",
    [GP_FTRACE_GPU_MEM_TOTAL] = "gpu_mem/gpu_mem_total",
    [GP_FTRACE_DRM_SCHED_JOB] = "gpu_scheduler/drm_sched_job",
    [GP_FTRACE_DRM_RUN_JOB] = "gpu_scheduler/drm_run_job",
    [GP_FTRACE_DRM_SCHED_PROCESS_JOB] = "gpu_scheduler/drm_sched_process_job",
    [GP_FTRACE_DRM_SCHED_JOB_QUEUE] = "gpu_scheduler/drm_sched_job_queue",
    [GP_FTRACE_DRM_SCHED_JOB_RUN] = "gpu_scheduler/drm_sched_job_run",
    [GP_FTRACE_DRM_SCHED_JOB_DONE] = "gpu_scheduler/drm_sched_job_done",
    [GP_FTRACE_DRM_SCHED_JOB_ADD_DEP] = "gpu_scheduler/drm_sched_job_add_dep",
    [GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE] =
        "gpu_scheduler/drm_sched_job_unschedulable",
    [GP_FTRACE_DMA_FENCE_INIT] = "dma_fence/dma_fence_init",
    [GP_FTRACE_DMA_FENCE_EMIT] = "dma_fence/dma_fence_emit",
    [GP_FTRACE_DMA_FENCE_SIGNALED] = "dma_fence/dma_fence_signaled",
    [GP_FTRACE_DMA_FENCE_WAIT_START] = "dma_fence/dma_fence_wait_start",
    [GP_FTRACE_DMA_FENCE_WAIT_END] = "dma_fence/dma_fence_wait_end",
};

/* See core.h. */
const char *gp__ftrace_event_name(int e) {
  return e >= 0 && e < GP_FTRACE_EVENT_COUNT ? names[e] : NULL;
}

/* See core.h. */
uint32_t gp__ftrace_event_match(const char *spec) {
  const char *slash = strchr(spec, '/');
  uint32_t mask = 0;
  for (int i = 0; i < GP_FTRACE_EVENT_COUNT; i++) {
    const char *sl = strchr(names[i], '/');
    size_t group = (size_t)(sl - names[i]);
    if (!slash) { /* a bare name, as Perfetto also takes */
      if (strcmp(sl + 1, spec) == 0)
        mask |= 1u << i;
    } else if (strcmp(slash + 1, "*") == 0) {
      if ((size_t)(slash - spec) == group &&
          strncmp(spec, names[i], group) == 0)
        mask |= 1u << i;
    } else if (strcmp(spec, names[i]) == 0) {
      mask |= 1u << i;
    }
  }
  return mask;
}
