/*
 * proto.h - field numbers and enum values of the Perfetto messages gpuperf
 * writes (and its own dump and tests read).
 *
 * Source: ../shared/reference/perfetto/gpu-fields.md (Perfetto's protos,
 * proto2) and, for the track-event descriptors not listed there,
 * protos/perfetto/trace/track_event/{process,thread,counter}_descriptor.proto
 * and debug_annotation.proto. Every repeated scalar here is unpacked
 * (one tag per element), as proto2 declares them. Names are
 * GP_PB_<MESSAGE>_<FIELD>; enum values GP_PB_<ENUM>_<VALUE>.
 */
#ifndef GPUPERF_PERFETTO_PROTO_H
#define GPUPERF_PERFETTO_PROTO_H

/* Trace: the file is a sequence of `packet` fields. */
#define GP_PB_TRACE_PACKET 1

/* TracePacket */
enum {
  GP_PB_PACKET_FTRACE_EVENTS = 1,
  GP_PB_PACKET_CLOCK_SNAPSHOT = 6,
  GP_PB_PACKET_TIMESTAMP = 8,
  GP_PB_PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
  GP_PB_PACKET_TRACK_EVENT = 11,
  GP_PB_PACKET_INTERNED_DATA = 12,
  GP_PB_PACKET_SEQUENCE_FLAGS = 13,
  GP_PB_PACKET_PREVIOUS_PACKET_DROPPED = 42,
  GP_PB_PACKET_GPU_COUNTER_EVENT = 52,
  GP_PB_PACKET_GPU_RENDER_STAGE_EVENT = 53,
  GP_PB_PACKET_TIMESTAMP_CLOCK_ID = 58,
  GP_PB_PACKET_TRACK_DESCRIPTOR = 60,
  GP_PB_PACKET_GPU_LOG = 63,
  GP_PB_PACKET_FIRST_PACKET_ON_SEQUENCE = 87,
  GP_PB_PACKET_MACHINE_ID = 98,
  GP_PB_PACKET_GPU_INFO = 128,
  GP_PB_PACKET_GPU_FREQUENCY = 129,
  GP_PB_PACKET_GPU_MEM_TOTAL = 71
};

/* FtraceEventBundle, FtraceEvent and the dma_fence events' messages
 * (protos/perfetto/trace/ftrace/{ftrace_event_bundle,ftrace_event,
 * dma_fence}.proto; the DmaFence*FtraceEvent messages share one layout).
 * dma_fence_destroy and dma_fence_enable_signal have no message. */
enum {
  GP_PB_FTRACE_BUNDLE_CPU = 1,
  GP_PB_FTRACE_BUNDLE_EVENT = 2,
  GP_PB_FTRACE_EVENT_TIMESTAMP = 1,
  GP_PB_FTRACE_EVENT_PID = 2,
  GP_PB_FTRACE_SCHED_SWITCH = 4,
  GP_PB_FTRACE_CPU_FREQUENCY = 11,
  GP_PB_FTRACE_CPU_IDLE = 13,
  GP_PB_FTRACE_SCHED_WAKING = 20,
  GP_PB_FTRACE_TASK_NEWTASK = 235,
  GP_PB_FTRACE_TASK_RENAME = 236,
  GP_PB_FTRACE_SCHED_PROCESS_FREE = 240,
  GP_PB_FTRACE_GPU_MEM_TOTAL = 340,
  GP_PB_FTRACE_GPU_FREQUENCY = 332,      /* power/gpu_frequency */
  GP_PB_FTRACE_KGSL_GPU_FREQUENCY = 509, /* kgsl/kgsl_gpu_frequency */
  /* drm_vblank_event, _delivered, drm_sched_job, drm_run_job and
   * drm_sched_process_job; since Linux 6.17 drm_sched_job_done, _queue
   * and _run */
  GP_PB_FTRACE_DRM_VBLANK_EVENT = 409,
  GP_PB_FTRACE_DRM_VBLANK_EVENT_DELIVERED = 410,
  GP_PB_FTRACE_DRM_SCHED_JOB = 411,
  GP_PB_FTRACE_DRM_RUN_JOB = 412,
  GP_PB_FTRACE_DRM_SCHED_PROCESS_JOB = 413,
  GP_PB_FTRACE_DRM_SCHED_JOB_ADD_DEP = 591,
  GP_PB_FTRACE_DRM_SCHED_JOB_DONE = 592,
  GP_PB_FTRACE_DRM_SCHED_JOB_QUEUE = 593,
  GP_PB_FTRACE_DRM_SCHED_JOB_RUN = 594,
  GP_PB_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE = 595,
  GP_PB_FTRACE_DMA_FENCE_INIT = 414,
  GP_PB_FTRACE_DMA_FENCE_EMIT = 415,
  GP_PB_FTRACE_DMA_FENCE_SIGNALED = 416,
  GP_PB_FTRACE_DMA_FENCE_WAIT_START = 417,
  GP_PB_FTRACE_DMA_FENCE_WAIT_END = 418,
  GP_PB_DMA_FENCE_CONTEXT = 1,
  GP_PB_DMA_FENCE_DRIVER = 2,
  GP_PB_DMA_FENCE_SEQNO = 3,
  GP_PB_DMA_FENCE_TIMELINE = 4
};

/* The GPU ftrace events' own fields (power.proto GpuFrequencyFtraceEvent,
 * gpu_mem.proto GpuMemTotalFtraceEvent, gpu_scheduler.proto). DrmSchedJob
 * and DrmRunJob share one layout, DrmSchedJobQueue and DrmSchedJobRun
 * another, DrmSchedJobAddDep and DrmSchedJobUnschedulable a third. */
enum {
  GP_PB_FTRACE_GPU_FREQUENCY_GPU_ID = 1,
  GP_PB_FTRACE_GPU_FREQUENCY_STATE = 2,
  GP_PB_FTRACE_GPU_MEM_TOTAL_GPU_ID = 1,
  GP_PB_FTRACE_GPU_MEM_TOTAL_PID = 2,
  GP_PB_FTRACE_GPU_MEM_TOTAL_SIZE = 3,
  GP_PB_DRM_JOB_ENTITY = 1, /* DrmSchedJob, DrmRunJob */
  GP_PB_DRM_JOB_FENCE = 2,
  GP_PB_DRM_JOB_HW_JOB_COUNT = 3,
  GP_PB_DRM_JOB_ID = 4,
  GP_PB_DRM_JOB_JOB_COUNT = 5,
  GP_PB_DRM_JOB_NAME = 6,
  GP_PB_DRM_PROCESS_JOB_FENCE = 1,
  GP_PB_DRM_QUEUE_NAME = 1, /* DrmSchedJobQueue, DrmSchedJobRun */
  GP_PB_DRM_QUEUE_JOB_COUNT = 2,
  GP_PB_DRM_QUEUE_HW_JOB_COUNT = 3,
  GP_PB_DRM_QUEUE_DEV = 4,
  GP_PB_DRM_QUEUE_FENCE_CONTEXT = 5,
  GP_PB_DRM_QUEUE_FENCE_SEQNO = 6,
  GP_PB_DRM_QUEUE_CLIENT_ID = 7,
  GP_PB_DRM_DONE_FENCE_CONTEXT = 1,
  GP_PB_DRM_DONE_FENCE_SEQNO = 2,
  GP_PB_DRM_DEP_FENCE_CONTEXT = 1, /* DrmSchedJobAddDep, _Unschedulable */
  GP_PB_DRM_DEP_FENCE_SEQNO = 2,
  GP_PB_DRM_DEP_CTX = 3,
  GP_PB_DRM_DEP_SEQNO = 4
};

/* TracePacket.SequenceFlags */
#define GP_PB_SEQ_INCREMENTAL_STATE_CLEARED 1u
#define GP_PB_SEQ_NEEDS_INCREMENTAL_STATE 2u

/* ClockSnapshot and ClockSnapshot.Clock */
enum {
  GP_PB_CLOCK_SNAPSHOT_CLOCKS = 1,
  GP_PB_CLOCK_SNAPSHOT_PRIMARY_TRACE_CLOCK = 2,
  GP_PB_CLOCK_ID = 1,
  GP_PB_CLOCK_TIMESTAMP = 2
};

/* InternedData (the GPU extensions 1000, 1001 included) */
enum {
  GP_PB_INTERNED_EVENT_CATEGORIES = 1,
  GP_PB_INTERNED_EVENT_NAMES = 2,
  GP_PB_INTERNED_DEBUG_ANNOTATION_NAMES = 3,
  GP_PB_INTERNED_GRAPHICS_CONTEXTS = 23,
  GP_PB_INTERNED_GPU_SPECIFICATIONS = 24,
  GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS = 47,
  GP_PB_INTERNED_COMPUTE_KERNELS = 1000,  /* GpuInternedData extension */
  GP_PB_INTERNED_COMPUTE_ARG_NAMES = 1001 /* GpuInternedData extension */
};

/* The {iid, name} shape shared by EventName, EventCategory,
 * DebugAnnotationName, InternedComputeArgName. */
enum { GP_PB_INTERNED_IID = 1, GP_PB_INTERNED_NAME = 2 };

/* InternedGraphicsContext */
enum { GP_PB_GCTX_IID = 1, GP_PB_GCTX_PID = 2, GP_PB_GCTX_API = 3 };

/* InternedGpuRenderStageSpecification */
enum {
  GP_PB_SPEC_IID = 1,
  GP_PB_SPEC_NAME = 2,
  GP_PB_SPEC_DESCRIPTION = 3,
  GP_PB_SPEC_CATEGORY = 4
};
#define GP_PB_STAGE_CATEGORY_OTHER 0
#define GP_PB_STAGE_CATEGORY_GRAPHICS 1
#define GP_PB_STAGE_CATEGORY_COMPUTE 2

/* InternedComputeKernel */
enum {
  GP_PB_KERNEL_IID = 1,
  GP_PB_KERNEL_NAME = 2,
  GP_PB_KERNEL_DEMANGLED_NAME = 3,
  GP_PB_KERNEL_ARCH = 4,
  GP_PB_KERNEL_ARGS = 5
};

/* GpuRenderStageEvent */
enum {
  GP_PB_RSE_EVENT_ID = 1,
  GP_PB_RSE_DURATION = 2,
  GP_PB_RSE_CONTEXT = 5,
  GP_PB_RSE_EXTRA_DATA = 6,
  GP_PB_RSE_RENDER_TARGET_HANDLE = 8,
  GP_PB_RSE_RENDER_PASS_HANDLE = 9,
  GP_PB_RSE_SUBMISSION_ID = 10,
  GP_PB_RSE_GPU_ID = 11,
  GP_PB_RSE_COMMAND_BUFFER_HANDLE = 12,
  GP_PB_RSE_HW_QUEUE_IID = 13,
  GP_PB_RSE_STAGE_IID = 14,
  GP_PB_RSE_NAME = 17,
  GP_PB_RSE_EVENT_WAIT_IDS = 18,
  GP_PB_RSE_KERNEL_IID = 19,
  GP_PB_RSE_NAME_IID = 20,
  GP_PB_RSE_LAUNCH = 21
};
/* GpuRenderStageEvent.ExtraData */
enum { GP_PB_EXTRA_NAME = 1, GP_PB_EXTRA_VALUE = 2 };
/* ComputeKernelLaunch and Dim3 */
enum {
  GP_PB_LAUNCH_GRID_SIZE = 1,
  GP_PB_LAUNCH_WORKGROUP_SIZE = 2,
  GP_PB_LAUNCH_ARGS = 3,
  GP_PB_DIM3_X = 1,
  GP_PB_DIM3_Y = 2,
  GP_PB_DIM3_Z = 3
};
/* ExtraComputeArg */
enum {
  GP_PB_ARG_NAME_IID = 1,
  GP_PB_ARG_NAME = 2,
  GP_PB_ARG_INT_VALUE = 3,
  GP_PB_ARG_UINT_VALUE = 4,
  GP_PB_ARG_DOUBLE_VALUE = 5,
  GP_PB_ARG_STRING_VALUE = 6
};

/* GpuInfo, GpuInfo.Gpu, Gpu.KeyValue */
enum {
  GP_PB_GPU_INFO_GPUS = 1,
  GP_PB_GPU_NAME = 1,
  GP_PB_GPU_VENDOR = 2,
  GP_PB_GPU_MODEL = 3,
  GP_PB_GPU_ARCHITECTURE = 4,
  GP_PB_GPU_UUID = 5,
  GP_PB_GPU_EXTRA_INFO = 6,
  GP_PB_GPU_PCI_BDF = 7,
  GP_PB_KV_KEY = 1,
  GP_PB_KV_VALUE = 2
};

/* GpuCounterEvent and GpuCounterEvent.GpuCounter */
enum {
  GP_PB_GCE_COUNTER_DESCRIPTOR = 1,
  GP_PB_GCE_COUNTERS = 2,
  GP_PB_GCE_GPU_ID = 3,
  GP_PB_GCE_COUNTER_DESCRIPTOR_IID = 4,
  GP_PB_GC_COUNTER_ID = 1,
  GP_PB_GC_INT_VALUE = 2,
  GP_PB_GC_DOUBLE_VALUE = 3
};
/* InternedGpuCounterDescriptor */
enum { GP_PB_IGCD_IID = 1, GP_PB_IGCD_DESCRIPTOR = 2, GP_PB_IGCD_GPU_ID = 3 };
/* GpuCounterDescriptor */
enum {
  GP_PB_GCD_SPECS = 1,
  GP_PB_GCD_BLOCKS = 2,
  GP_PB_GCD_MIN_PERIOD = 3,
  GP_PB_GCD_MAX_PERIOD = 4,
  GP_PB_GCD_SUPPORTS_INSTRUMENTED = 5,
  GP_PB_GCD_COUNTER_GROUPS = 6,
  GP_PB_GCD_SUPPORTS_NAMES = 7,
  GP_PB_GCD_SUPPORTS_NAME_GLOBS = 8
};
/* GpuCounterDescriptor.GpuCounterSpec */
enum {
  GP_PB_SPEC_COUNTER_ID = 1,
  GP_PB_SPEC_C_NAME = 2,
  GP_PB_SPEC_C_DESCRIPTION = 3,
  GP_PB_SPEC_INT_PEAK = 5,
  GP_PB_SPEC_DOUBLE_PEAK = 6,
  GP_PB_SPEC_NUMERATOR_UNITS = 7,
  GP_PB_SPEC_DENOMINATOR_UNITS = 8,
  GP_PB_SPEC_SELECT_BY_DEFAULT = 9,
  GP_PB_SPEC_GROUPS = 10,
  GP_PB_SPEC_VALUE_DIRECTION = 11
};
#define GP_PB_VALUE_DIRECTION_BACKWARDS 1
#define GP_PB_VALUE_DIRECTION_FORWARDS 2
/* GpuCounterBlock */
enum {
  GP_PB_BLOCK_ID = 1,
  GP_PB_BLOCK_CAPACITY = 2,
  GP_PB_BLOCK_NAME = 3,
  GP_PB_BLOCK_DESCRIPTION = 4,
  GP_PB_BLOCK_COUNTER_IDS = 5
};
/* GpuCounterGroupSpec */
enum {
  GP_PB_GROUP_ID = 1,
  GP_PB_GROUP_NAME = 2,
  GP_PB_GROUP_DESCRIPTION = 3,
  GP_PB_GROUP_COUNTER_IDS = 4
};

/* GpuLog */
enum { GP_PB_LOG_SEVERITY = 1, GP_PB_LOG_TAG = 2, GP_PB_LOG_MESSAGE = 3 };
#define GP_PB_LOG_SEVERITY_INFO 3
#define GP_PB_LOG_SEVERITY_WARNING 4
#define GP_PB_LOG_SEVERITY_ERROR 5

/* VulkanApiEvent (TracePacket.vulkan_api_event) */
#define GP_PB_PACKET_VULKAN_API_EVENT 65
enum {
  GP_PB_VKAPI_OBJECT_NAME = 1, /* VkDebugUtilsObjectName */
  GP_PB_VKNAME_PID = 1,
  GP_PB_VKNAME_DEVICE = 2,
  GP_PB_VKNAME_OBJECT_TYPE = 3,
  GP_PB_VKNAME_OBJECT = 4,
  GP_PB_VKNAME_OBJECT_NAME = 5,
  GP_PB_VKAPI_QUEUE_SUBMIT = 2, /* VkQueueSubmit */
  GP_PB_VKSUBMIT_DURATION_NS = 1,
  GP_PB_VKSUBMIT_PID = 2,
  GP_PB_VKSUBMIT_TID = 3,
  GP_PB_VKSUBMIT_QUEUE = 4,
  GP_PB_VKSUBMIT_COMMAND_BUFFERS = 5,
  GP_PB_VKSUBMIT_SUBMISSION_ID = 6
};

/* VulkanMemoryEvent (TracePacket.vulkan_memory_event) */
#define GP_PB_PACKET_VULKAN_MEMORY_EVENT 62
enum {
  GP_PB_VKMEM_SOURCE = 1,
  GP_PB_VKMEM_OPERATION = 2,
  GP_PB_VKMEM_TIMESTAMP = 3,
  GP_PB_VKMEM_PID = 4,
  GP_PB_VKMEM_MEMORY_ADDRESS = 5, /* fixed64 */
  GP_PB_VKMEM_MEMORY_SIZE = 6,
  GP_PB_VKMEM_ALLOCATION_SCOPE = 8,
  GP_PB_VKMEM_DEVICE = 16,        /* fixed64 */
  GP_PB_VKMEM_DEVICE_MEMORY = 17, /* fixed64 */
  GP_PB_VKMEM_MEMORY_TYPE = 18,
  GP_PB_VKMEM_HEAP = 19,
  GP_PB_VKMEM_OBJECT_HANDLE = 20 /* fixed64 */
};

/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor */
enum {
  GP_PB_TD_UUID = 1,
  GP_PB_TD_NAME = 2,
  GP_PB_TD_PROCESS = 3,
  GP_PB_TD_THREAD = 4,
  GP_PB_TD_PARENT_UUID = 5,
  GP_PB_TD_COUNTER = 8,
  GP_PB_PD_PID = 1,
  GP_PB_PD_CMDLINE = 2,
  GP_PB_PD_PROCESS_NAME = 6,
  GP_PB_THD_PID = 1,
  GP_PB_THD_TID = 2,
  GP_PB_THD_THREAD_NAME = 5,
  GP_PB_CD_UNIT = 3
};
#define GP_PB_COUNTER_UNIT_TIME_NS 1
#define GP_PB_COUNTER_UNIT_COUNT 2

/* TrackEvent (GpuTrackEvent extensions 3000, 3001 included) */
enum {
  GP_PB_TE_CATEGORY_IIDS = 3,
  GP_PB_TE_DEBUG_ANNOTATIONS = 4,
  GP_PB_TE_TYPE = 9,
  GP_PB_TE_NAME_IID = 10,
  GP_PB_TE_TRACK_UUID = 11,
  GP_PB_TE_CATEGORIES = 22,
  GP_PB_TE_NAME = 23,
  GP_PB_TE_COUNTER_VALUE = 30,
  GP_PB_TE_GPU_CORRELATION = 3000,
  GP_PB_TE_GPU_API = 3001
};
#define GP_PB_TE_TYPE_SLICE_BEGIN 1
#define GP_PB_TE_TYPE_SLICE_END 2
#define GP_PB_TE_TYPE_INSTANT 3
#define GP_PB_TE_TYPE_COUNTER 4
/* GpuCorrelation */
enum {
  GP_PB_CORR_SUBMISSION_IDS = 1, /* render_stage_submission_event_ids */
  GP_PB_CORR_WAIT_IDS = 2        /* render_stage_wait_event_ids */
};
/* DebugAnnotation */
enum {
  GP_PB_DA_NAME_IID = 1,
  GP_PB_DA_BOOL_VALUE = 2,
  GP_PB_DA_UINT_VALUE = 3,
  GP_PB_DA_INT_VALUE = 4,
  GP_PB_DA_DOUBLE_VALUE = 5,
  GP_PB_DA_STRING_VALUE = 6,
  GP_PB_DA_NAME = 10,
  GP_PB_DA_ARRAY_VALUES = 12 /* repeated DebugAnnotation, without names */
};
/* GenericGpuFrequencyEvent */
enum { GP_PB_GFREQ_GPU_ID = 1, GP_PB_GFREQ_FREQUENCY_KHZ = 2 };
/* GpuMemTotalEvent */
enum { GP_PB_GMEM_GPU_ID = 1, GP_PB_GMEM_PID = 2, GP_PB_GMEM_SIZE = 3 };

#endif /* GPUPERF_PERFETTO_PROTO_H */
