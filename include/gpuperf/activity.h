/*
 * gpuperf/activity.h - activity records and the buffers that carry them.
 *
 * The model is CUPTI's activity API. Backends (the simulated GPUs, OpenCL,
 * CUDA) describe what happened as records: a kernel ran, a copy moved bytes,
 * an API call took so long, a counter had this value. Records are written
 * into per-thread buffers that the application supplies through a request
 * callback; full buffers, and partial ones at a flush, come back through a
 * completion callback, called from one collector thread. The application
 * walks a buffer with gp_activity_get_next_record().
 *
 * Record layout. Every record starts with gp_activity {kind, size}: size is
 * the whole record in bytes, a multiple of 8. A reader that does not know a
 * kind, or finds a record larger than the struct it knows, skips by size;
 * structs grow only by adding fields at the end. All fields are fixed-width;
 * all times are nanoseconds in the trace clock (CLOCK_BOOTTIME, see
 * clock.h), 0 meaning unknown. Strings are ids into a process-wide string
 * table, resolved with gp_activity_string().
 *
 * Records of GPU work (kernel, memcpy, memset, render stage) end with
 * num_wait_ids uint64 correlation ids of the work they waited on (event
 * dependencies); use gp_activity_wait_ids() to reach them.
 */
#ifndef GPUPERF_ACTIVITY_H
#define GPUPERF_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"
#include "gpuperf/markers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record kinds. Values are stable: they are written into buffers. */
typedef enum gp_activity_kind {
  GP_ACTIVITY_KIND_INVALID = 0,
  GP_ACTIVITY_KIND_KERNEL = 1,           /* gp_activity_kernel (concurrent) */
  GP_ACTIVITY_KIND_MEMCPY = 2,           /* gp_activity_memcpy, all kinds */
  GP_ACTIVITY_KIND_MEMSET = 3,           /* gp_activity_memset */
  GP_ACTIVITY_KIND_API = 4,              /* gp_activity_api */
  GP_ACTIVITY_KIND_MARKER = 5,           /* gp_activity_marker */
  GP_ACTIVITY_KIND_DEVICE = 6,           /* gp_activity_device */
  GP_ACTIVITY_KIND_CONTEXT = 7,          /* gp_activity_context */
  GP_ACTIVITY_KIND_NAME = 8,             /* gp_activity_name */
  GP_ACTIVITY_KIND_OVERHEAD = 9,         /* gp_activity_overhead */
  GP_ACTIVITY_KIND_ENVIRONMENT = 10,     /* gp_activity_environment */
  GP_ACTIVITY_KIND_COUNTER = 11,         /* gp_activity_counter */
  GP_ACTIVITY_KIND_DROPPED = 12,         /* gp_activity_dropped */
  GP_ACTIVITY_KIND_SYNCHRONIZATION = 13, /* gp_activity_sync */
  GP_ACTIVITY_KIND_RENDER_STAGE = 14,    /* gp_activity_render_stage */
  GP_ACTIVITY_KIND_GPU_LOG = 15,         /* gp_activity_gpu_log */
  GP_ACTIVITY_KIND_GPU_MEMORY = 16,      /* gp_activity_gpu_memory */
  GP_ACTIVITY_KIND_DMA_FENCE = 17,       /* gp_activity_dma_fence */
  GP_ACTIVITY_KIND_GPU_FTRACE = 18,      /* gp_activity_gpu_ftrace */
  GP_ACTIVITY_KIND_MODULE = 19,          /* gp_activity_module */
  GP_ACTIVITY_KIND_FUNCTION = 20,        /* gp_activity_function */
  /* gp_activity_device_attribute */
  GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE = 21,
  GP_ACTIVITY_KIND_MARKER_DATA = 22, /* gp_activity_marker_data */
  /* Source level (gpuperf/activity_source.h) */
  GP_ACTIVITY_KIND_SOURCE_LOCATOR = 23,        /* .._source_locator */
  GP_ACTIVITY_KIND_GLOBAL_ACCESS = 24,         /* .._global_access */
  GP_ACTIVITY_KIND_SHARED_ACCESS = 25,         /* .._shared_access */
  GP_ACTIVITY_KIND_BRANCH = 26,                /* .._branch */
  GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION = 27, /* .._instruction_execution */
  /* gp_activity_cdp_kernel (activity_cdp.h) */
  GP_ACTIVITY_KIND_CDP_KERNEL = 28,
  GP_ACTIVITY_KIND_PREEMPTION = 29, /* gp_activity_preemption */
  /* gp_activity_um_counter (activity_um.h) */
  GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER = 30,
  /* activity_events.h: per-kernel event and metric values */
  GP_ACTIVITY_KIND_EVENT = 31,           /* gp_activity_event */
  GP_ACTIVITY_KIND_METRIC = 32,          /* gp_activity_metric */
  GP_ACTIVITY_KIND_EVENT_INSTANCE = 33,  /* gp_activity_event_instance */
  GP_ACTIVITY_KIND_METRIC_INSTANCE = 34, /* gp_activity_metric_instance */
  GP_ACTIVITY_KIND_COUNT                 /* one past the last kind */
} gp_activity_kind;

/* The header every record starts with. */
typedef struct gp_activity {
  uint32_t kind; /* gp_activity_kind */
  uint32_t size; /* bytes in the whole record, a multiple of 8 */
} gp_activity;

/* The kinds whose records have headers of their own (they use
 * gp_activity): events and metrics, source level, dynamic parallelism,
 * unified memory. */
#include "gpuperf/activity_cdp.h"
#include "gpuperf/activity_events.h"
#include "gpuperf/activity_source.h"
#include "gpuperf/activity_um.h"

/* Record flags, per kind. */
#define GP_ACTIVITY_FLAG_NONE 0u
#define GP_ACTIVITY_FLAG_MEMCPY_ASYNC (1u << 0)   /* MEMCPY, MEMSET */
#define GP_ACTIVITY_FLAG_MARKER_INSTANT (1u << 0) /* MARKER */
#define GP_ACTIVITY_FLAG_MARKER_START (1u << 1)   /* MARKER */
#define GP_ACTIVITY_FLAG_MARKER_END (1u << 2)     /* MARKER */
#define GP_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS (1u << 0) /* DEVICE */
#define GP_ACTIVITY_FLAG_MODULE_UNLOAD (1u << 0)             /* MODULE */
/* DEVICE_ATTRIBUTE: the attribute is CUDA's CUdevice_attribute */
#define GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE (1u << 0)
/* MARKER_DATA: whether the marker has a colour (CUPTI's two flags) */
#define GP_ACTIVITY_FLAG_MARKER_COLOR_NONE (1u << 0)
#define GP_ACTIVITY_FLAG_MARKER_COLOR_ARGB (1u << 1)
/* CONTEXT: a CUDA context of a client of the Multi-Process Service
 * (CUPTI's compute API kind CUDA_MPS). */
#define GP_ACTIVITY_FLAG_CONTEXT_CUDA_MPS (1u << 0)

/* Correlation id 0 means "no correlation". */
#define GP_CORRELATION_ID_UNKNOWN 0u

/* Which API a context (and so its GPU work) belongs to. The values of the
 * first six match Perfetto's InternedGraphicsContext.Api. */
typedef enum gp_api {
  GP_API_UNDEFINED = 0,
  GP_API_OPEN_GL = 1,
  GP_API_VULKAN = 2,
  GP_API_OPEN_CL = 3,
  GP_API_CUDA = 4,
  GP_API_HIP = 5,
  GP_API_SIM = 64 /* gpuperf's simulated GPUs */
} gp_api;

/* Which family of host calls an API record belongs to. */
typedef enum gp_api_domain {
  GP_API_DOMAIN_UNKNOWN = 0,
  GP_API_DOMAIN_SIM = 1, /* gp_sim_* calls */
  GP_API_DOMAIN_CUDA_RUNTIME = 2,
  GP_API_DOMAIN_CUDA_DRIVER = 3,
  GP_API_DOMAIN_OPENCL = 4,
  GP_API_DOMAIN_VULKAN = 5,
  GP_API_DOMAIN_OPENGL = 6 /* GL, GLX and EGL calls (libgpuperf-gl.so) */
} gp_api_domain;

/* Source and destination of a copy; values match CUPTI's. */
typedef enum gp_memcpy_kind {
  GP_MEMCPY_UNKNOWN = 0,
  GP_MEMCPY_HTOD = 1,
  GP_MEMCPY_DTOH = 2,
  GP_MEMCPY_HTOA = 3,
  GP_MEMCPY_ATOH = 4,
  GP_MEMCPY_ATOA = 5,
  GP_MEMCPY_ATOD = 6,
  GP_MEMCPY_DTOA = 7,
  GP_MEMCPY_DTOD = 8, /* within one device */
  GP_MEMCPY_HTOH = 9,
  GP_MEMCPY_PTOP = 10 /* between two devices */
} gp_memcpy_kind;

/* The kind of memory on either side of a copy or under a memset. */
typedef enum gp_memory_kind {
  GP_MEMORY_UNKNOWN = 0,
  GP_MEMORY_PAGEABLE = 1,
  GP_MEMORY_PINNED = 2,
  GP_MEMORY_DEVICE = 3,
  GP_MEMORY_ARRAY = 4,
  GP_MEMORY_MANAGED = 5
} gp_memory_kind;

/* A kernel execution. Ends with num_wait_ids uint64 ids. */
typedef struct gp_activity_kernel {
  gp_activity hdr;
  uint64_t correlation_id; /* the API record that launched it */
  uint64_t queued;         /* host enqueued it */
  uint64_t submitted;      /* dependencies met, handed to the hardware */
  uint64_t start;
  uint64_t end;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t queue_id;          /* hardware queue index on the device */
  uint32_t name_id;           /* mangled name (string id) */
  uint32_t demangled_name_id; /* demangled name, 0 if none */
  uint32_t grid_x, grid_y, grid_z;
  uint32_t block_x, block_y, block_z;
  uint32_t static_shared_memory;  /* bytes per block */
  uint32_t dynamic_shared_memory; /* bytes per block */
  uint32_t registers_per_thread;
  uint32_t flags;
  uint32_t perfmon_id; /* perfmon the job carried, 0 if none */
  uint32_t num_wait_ids;
} gp_activity_kernel;

/* A memory copy of any kind, peer-to-peer included. Ends with wait ids. */
typedef struct gp_activity_memcpy {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t queued;
  uint64_t submitted;
  uint64_t start;
  uint64_t end;
  uint64_t bytes;
  uint32_t device_id; /* the device whose queue ran the copy */
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t queue_id;
  uint32_t src_device_id; /* UINT32_MAX for host memory */
  uint32_t dst_device_id; /* UINT32_MAX for host memory */
  uint32_t src_context_id;
  uint32_t dst_context_id;
  uint8_t copy_kind; /* gp_memcpy_kind */
  uint8_t src_kind;  /* gp_memory_kind */
  uint8_t dst_kind;  /* gp_memory_kind */
  uint8_t reserved0;
  uint32_t flags;
  uint32_t perfmon_id;
  uint32_t num_wait_ids;
} gp_activity_memcpy;

/* A memory fill. Ends with wait ids. */
typedef struct gp_activity_memset {
  gp_activity hdr;
  uint64_t correlation_id;
  uint64_t queued;
  uint64_t submitted;
  uint64_t start;
  uint64_t end;
  uint64_t bytes;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t queue_id;
  uint32_t value;
  uint8_t memory_kind; /* gp_memory_kind */
  uint8_t reserved0[3];
  uint32_t flags;
  uint32_t perfmon_id;
  uint32_t num_wait_ids;
  uint32_t reserved1;
} gp_activity_memset;

/* A host API call (runtime or driver). */
typedef struct gp_activity_api {
  gp_activity hdr;
  uint64_t correlation_id; /* shared with the GPU work it launched */
  uint64_t start;
  uint64_t end;
  uint32_t process_id;
  uint32_t thread_id;
  uint32_t domain;  /* gp_api_domain */
  uint32_t cbid;    /* function id within the domain */
  uint32_t name_id; /* function name */
  int32_t return_value;
} gp_activity_api;

/* The API record of a queue submission whose render stages are recorded
 * (GP_API_DOMAIN_VULKAN: vkQueueSubmit, vkQueueSubmit2) goes on past the
 * gp_activity_api: hdr.size >= sizeof(gp_activity_api_submit) says so.
 * The trace writes it as Perfetto's VulkanApiEvent.VkQueueSubmit too. */
#define GP_ACTIVITY_SUBMIT_MAX_COMMAND_BUFFERS 1024u
typedef struct gp_activity_api_submit {
  gp_activity_api api;
  uint64_t queue;         /* the API's queue handle */
  uint32_t submission_id; /* the render stages' submission_id */
  /* Command buffers submitted, in order; at most
   * GP_ACTIVITY_SUBMIT_MAX_COMMAND_BUFFERS are listed of
   * total_command_buffers. */
  uint32_t num_command_buffers;
  uint32_t total_command_buffers;
  uint32_t reserved0;
  uint64_t command_buffers[]; /* num_command_buffers handles */
} gp_activity_api_submit;

/* A user marker: instant, or the start or end of a range. */
typedef struct gp_activity_marker {
  gp_activity hdr;
  uint64_t timestamp;
  uint64_t id;        /* range id: the same on START and END */
  uint32_t flags;     /* GP_ACTIVITY_FLAG_MARKER_* */
  uint32_t name_id;   /* 0 on END */
  uint32_t domain_id; /* string id of the domain, 0 for the default */
  uint32_t process_id;
  uint32_t thread_id;
  uint32_t depth; /* nesting depth of push/pop ranges, 0 otherwise */
} gp_activity_marker;

/*
 * What a marker carried besides its name (gpuperf/markers.h's attributes,
 * NVTX's event attributes): CUPTI's CUpti_ActivityMarkerData. Written just
 * before the MARKER record (INSTANT or START) of the same id, by the same
 * thread, only for a marker given attributes.
 */
typedef struct gp_activity_marker_data {
  gp_activity hdr;
  uint64_t id;           /* the MARKER record's id */
  uint32_t flags;        /* GP_ACTIVITY_FLAG_MARKER_COLOR_NONE or _ARGB */
  uint32_t color;        /* 0xAARRGGBB with _ARGB, else 0 */
  uint32_t category;     /* 0: none */
  uint32_t payload_kind; /* gp_marker_payload_kind */
  gp_marker_payload payload;
} gp_activity_marker_data;

/* A device, emitted when it appears or when DEVICE is enabled. */
typedef struct gp_activity_device {
  gp_activity hdr;
  uint64_t global_memory_bytes;
  uint64_t memory_bandwidth_bytes_per_s;
  uint32_t device_id;
  uint32_t flags;
  uint32_t name_id;
  uint32_t vendor_id;         /* string id of the vendor name */
  uint32_t model_id;          /* string id */
  uint32_t architecture_id;   /* string id */
  uint32_t driver_version_id; /* string id, 0 if unknown */
  uint32_t pci_domain, pci_bus, pci_device, pci_function;
  uint32_t compute_units;
  uint32_t core_clock_khz;
  uint32_t memory_clock_khz;
  uint32_t max_threads_per_block;
  uint32_t max_shared_memory_per_block;
  uint32_t num_queues;
  uint32_t clock_id; /* the device's clock (clock.h), 0 if none */
  uint8_t uuid[16];
} gp_activity_device;

/* A context, emitted when created; again where its backend learns more of
 * it later (the flags: CUPTI says a context runs under MPS only in its
 * own CONTEXT record, after the context was made): the later record
 * holds. */
typedef struct gp_activity_context {
  gp_activity hdr;
  uint32_t context_id;
  uint32_t device_id;
  uint32_t api; /* gp_api */
  uint32_t default_stream_id;
  uint32_t process_id;
  uint32_t flags; /* GP_ACTIVITY_FLAG_CONTEXT_CUDA_MPS */
} gp_activity_context;

/* What a NAME record names. */
typedef enum gp_object_kind {
  GP_OBJECT_UNKNOWN = 0,
  GP_OBJECT_PROCESS = 1,
  GP_OBJECT_THREAD = 2,
  GP_OBJECT_DEVICE = 3,
  GP_OBJECT_CONTEXT = 4,
  GP_OBJECT_STREAM = 5,
  GP_OBJECT_API_OBJECT = 6 /* an object of a graphics API, by its handle */
} gp_object_kind;

/* A name given to a thread, stream, context or device. */
typedef struct gp_activity_name {
  gp_activity hdr;
  uint32_t object_kind; /* gp_object_kind */
  uint32_t process_id;
  uint32_t thread_id;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t name_id;
  uint32_t reserved0;
  uint64_t object_handle;   /* API_OBJECT: the API's handle, else 0 */
  uint64_t timestamp;       /* API_OBJECT: when it was named, else 0 */
  uint32_t api_object_type; /* API_OBJECT: VkObjectType for Vulkan */
  uint32_t reserved1;
} gp_activity_name;

/* Where gpuperf itself spent time. */
typedef enum gp_overhead_kind {
  GP_OVERHEAD_UNKNOWN = 0,
  GP_OVERHEAD_BUFFER_FLUSH = 1,    /* completing buffers to the client */
  GP_OVERHEAD_INSTRUMENTATION = 2, /* per-activity counter sampling */
  GP_OVERHEAD_RESOURCE = 3,        /* creating and destroying our objects */
  GP_OVERHEAD_DRIVER_COMPILER = 4  /* the driver compiling code (JIT):
                                      CUPTI's, the program's cost */
} gp_overhead_kind;

typedef struct gp_activity_overhead {
  gp_activity hdr;
  uint64_t start;
  uint64_t end;
  uint32_t overhead_kind; /* gp_overhead_kind */
  uint32_t process_id;
  uint32_t thread_id;
  uint32_t reserved0;
  uint64_t bytes; /* bytes moved, when that means something (flush) */
} gp_activity_overhead;

/* Why the clocks of an ENVIRONMENT SPEED record are held back, bits of
 * its throttle_reasons; values as CUPTI's clocksThrottleReasons. */
#define GP_THROTTLE_REASON_NONE 0x00000000u
#define GP_THROTTLE_REASON_GPU_IDLE 0x00000001u
#define GP_THROTTLE_REASON_USER_DEFINED_CLOCKS 0x00000002u
#define GP_THROTTLE_REASON_SW_POWER_CAP 0x00000004u
#define GP_THROTTLE_REASON_HW_SLOWDOWN 0x00000008u
#define GP_THROTTLE_REASON_UNSUPPORTED 0x40000000u
#define GP_THROTTLE_REASON_UNKNOWN 0x80000000u

/* Environment samples: clocks, temperature, power, cooling. */
typedef enum gp_environment_kind {
  GP_ENVIRONMENT_UNKNOWN = 0,
  GP_ENVIRONMENT_SPEED = 1,
  GP_ENVIRONMENT_TEMPERATURE = 2,
  GP_ENVIRONMENT_POWER = 3,
  GP_ENVIRONMENT_COOLING = 4,
  GP_ENVIRONMENT_MEMORY = 5 /* GPU memory in use (Perfetto's GpuMemTotal) */
} gp_environment_kind;

typedef struct gp_activity_environment {
  gp_activity hdr;
  uint64_t timestamp;
  uint32_t device_id;
  uint32_t environment_kind; /* gp_environment_kind */
  union {
    struct {
      uint32_t core_clock_khz;
      uint32_t memory_clock_khz;
      uint32_t throttle_reasons; /* GP_THROTTLE_REASON_* */
      uint32_t reserved0;
    } speed;
    struct {
      uint32_t gpu_temperature_mc; /* millidegrees Celsius */
      uint32_t reserved0[3];
    } temperature;
    struct {
      uint32_t power_mw;
      uint32_t power_limit_mw;
      uint32_t reserved0[2];
    } power;
    struct {
      uint32_t fan_speed_pct; /* percent of maximum */
      uint32_t reserved0[3];
    } cooling;
    struct {
      uint32_t pid; /* 0: the whole device; else that process's use */
      uint32_t reserved0;
      uint64_t used_bytes;
    } memory;
  } data;
} gp_activity_environment;

/* How a counter value is stored. */
typedef enum gp_value_type {
  GP_VALUE_INT64 = 0,
  GP_VALUE_DOUBLE = 1
} gp_value_type;

/* One counter value: a periodic sample (correlation_id 0) or a value
 * measured over one activity (correlation_id of that activity). */
typedef struct gp_activity_counter {
  gp_activity hdr;
  uint64_t timestamp;      /* periodic: end of the sampling window */
  uint64_t correlation_id; /* instrumented: the activity measured */
  uint64_t window_start;   /* start of the window the value covers */
  uint32_t device_id;
  uint32_t counter_id;
  uint32_t value_type; /* gp_value_type */
  uint32_t perfmon_id; /* 0 for periodic samples */
  union {
    int64_t i64;
    double f64;
  } value;
} gp_activity_counter;

/* Why records were dropped. */
typedef enum gp_drop_reason {
  GP_DROP_NO_BUFFER = 0,    /* the buffer pool limit was reached */
  GP_DROP_DECLINED = 1,     /* the request callback returned no buffer */
  GP_DROP_NO_CALLBACKS = 2, /* no buffer callbacks registered */
  GP_DROP_TOO_LARGE = 3,    /* the record does not fit in a buffer */
  GP_DROP_SOURCE = 4,       /* lost by the source before reaching us (CUPTI's
                               own buffers); the kind may be INVALID */
  GP_DROP_LATE = 5,         /* COUNTER: work arrived after a derived value
                               of its time was final, and is missing from
                               it; the count is of such work records */
  GP_DROP_REASON_COUNT
} gp_drop_reason;

/* Written into a thread's next buffer after that thread dropped records:
 * one record per (kind, reason) with the count and the time span. */
typedef struct gp_activity_dropped {
  gp_activity hdr;
  uint64_t first; /* time of the first record dropped */
  uint64_t last;  /* time of the last record dropped */
  uint64_t count;
  uint32_t dropped_kind; /* gp_activity_kind of the dropped records */
  uint32_t reason;       /* gp_drop_reason */
  uint32_t thread_id;
  uint32_t reserved0;
} gp_activity_dropped;

/* What a host thread waited for. */
typedef enum gp_sync_kind {
  GP_SYNC_UNKNOWN = 0,
  GP_SYNC_EVENT_SYNCHRONIZE = 1,
  GP_SYNC_STREAM_WAIT_EVENT = 2,
  GP_SYNC_STREAM_SYNCHRONIZE = 3,
  GP_SYNC_CONTEXT_SYNCHRONIZE = 4
} gp_sync_kind;

typedef struct gp_activity_sync {
  gp_activity hdr;
  uint64_t correlation_id; /* the API call that waited */
  uint64_t start;
  uint64_t end;
  uint64_t wait_id;   /* correlation id of the GPU work waited for, 0 if none */
  uint32_t sync_kind; /* gp_sync_kind */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t event_id;
  uint32_t reserved0;
} gp_activity_sync;

/* What part of a graphics command buffer a render stage measured. */
typedef enum gp_render_stage_kind {
  GP_RENDER_STAGE_COMMAND_BUFFER = 0, /* a whole command buffer */
  GP_RENDER_STAGE_RENDER_PASS = 1,    /* render pass or dynamic rendering */
  GP_RENDER_STAGE_COMPUTE = 2,        /* a dispatch */
  GP_RENDER_STAGE_TRANSFER = 3,       /* copy, blit, clear, fill, update */
  GP_RENDER_STAGE_KIND_COUNT
} gp_render_stage_kind;

/* A span of GPU work inside a graphics API's submission (Vulkan): a command
 * buffer or a part of one, timed on the GPU. All stages of one submission
 * share its correlation id. Ends with num_wait_ids uint64 correlation ids
 * of the submissions it waited for (semaphores). */
typedef struct gp_activity_render_stage {
  gp_activity hdr;
  uint64_t correlation_id; /* the submission (its API record) */
  uint64_t queued;         /* host submitted it */
  uint64_t submitted;      /* 0: unknown */
  uint64_t start;
  uint64_t end;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id; /* the API's queue */
  uint32_t queue_id;  /* hardware queue index on the device */
  uint32_t flags;
  uint32_t perfmon_id;
  uint32_t num_wait_ids;
  uint32_t stage;         /* gp_render_stage_kind */
  uint64_t render_target; /* framebuffer or image handle, 0 if none */
  uint64_t render_pass;   /* render pass handle, 0 if none */
  uint64_t command_buffer;
  uint32_t name_id; /* debug label or object name, 0: the stage's name */
  uint32_t submission_id;
} gp_activity_render_stage;

/* GPU log severities; values match Perfetto's GpuLog.Severity. */
typedef enum gp_log_severity {
  GP_LOG_UNSPECIFIED = 0,
  GP_LOG_VERBOSE = 1,
  GP_LOG_DEBUG = 2,
  GP_LOG_INFO = 3,
  GP_LOG_WARNING = 4,
  GP_LOG_ERROR = 5
} gp_log_severity;

/* A message from a driver or a layer (Vulkan's debug-utils messenger). */
typedef struct gp_activity_gpu_log {
  gp_activity hdr;
  uint64_t timestamp;
  uint32_t severity;   /* gp_log_severity */
  uint32_t tag_id;     /* string id: who said it ("Validation") */
  uint32_t message_id; /* string id of the message */
  uint32_t process_id;
  uint32_t thread_id;
  uint32_t reserved0;
} gp_activity_gpu_log;

/* What a GPU_MEMORY record is about; values match Perfetto's
 * VulkanMemoryEvent.Source. */
typedef enum gp_gpu_memory_source {
  GP_GPU_MEMORY_SOURCE_UNSPECIFIED = 0,
  GP_GPU_MEMORY_SOURCE_DRIVER = 1, /* host memory the driver allocated */
  GP_GPU_MEMORY_SOURCE_DEVICE = 2,
  GP_GPU_MEMORY_SOURCE_DEVICE_MEMORY = 3, /* a device memory allocation */
  GP_GPU_MEMORY_SOURCE_BUFFER = 4,
  GP_GPU_MEMORY_SOURCE_IMAGE = 5
} gp_gpu_memory_source;

/* What happened; values match Perfetto's VulkanMemoryEvent.Operation. */
typedef enum gp_gpu_memory_op {
  GP_GPU_MEMORY_OP_UNSPECIFIED = 0,
  GP_GPU_MEMORY_OP_CREATE = 1,
  GP_GPU_MEMORY_OP_DESTROY = 2,
  GP_GPU_MEMORY_OP_BIND = 3,
  GP_GPU_MEMORY_OP_DESTROY_BOUND = 4 /* a bound buffer or image destroyed */
} gp_gpu_memory_op;

/* A memory event of a graphics API (Vulkan): device memory allocated or
 * freed, a buffer or image created, bound or destroyed, host memory the
 * driver allocated through the program's allocation callbacks. */
typedef struct gp_activity_gpu_memory {
  gp_activity hdr;
  uint64_t timestamp;
  uint64_t device;         /* the API's device handle */
  uint64_t device_memory;  /* the allocation's handle, 0 if none */
  uint64_t object_handle;  /* buffer or image handle, 0 if none */
  uint64_t memory_address; /* driver: host address; bind: offset */
  uint64_t size;           /* bytes */
  uint32_t process_id;
  uint32_t source;      /* gp_gpu_memory_source */
  uint32_t operation;   /* gp_gpu_memory_op */
  uint32_t memory_type; /* memory type index (device memory, bind) */
  uint32_t heap;        /* memory heap index */
  uint32_t scope;       /* driver: VkSystemAllocationScope + 1, 0 if none */
} gp_activity_gpu_memory;

/* The kernel's dma_fence trace events that a DMA_FENCE record carries;
 * the values are ours (Perfetto has one FtraceEvent field per event). */
typedef enum gp_dma_fence_event {
  GP_DMA_FENCE_INIT = 1,       /* dma_fence_init: the fence was created */
  GP_DMA_FENCE_EMIT = 2,       /* dma_fence_emit: handed to the hardware */
  GP_DMA_FENCE_SIGNALED = 3,   /* dma_fence_signaled: the work is done */
  GP_DMA_FENCE_WAIT_START = 4, /* dma_fence_wait_start: a task waits */
  GP_DMA_FENCE_WAIT_END = 5    /* dma_fence_wait_end: it stopped waiting */
} gp_dma_fence_event;

/* A dma_fence event of the kernel (Linux tracefs): a fence of a driver's
 * timeline (its context) and its sequence number along that timeline. */
typedef struct gp_activity_dma_fence {
  gp_activity hdr;
  uint64_t timestamp;
  uint32_t event;       /* gp_dma_fence_event */
  uint32_t thread_id;   /* the task the kernel was running (ftrace pid) */
  uint32_t cpu;         /* the CPU it ran on */
  uint32_t context;     /* the fence's context (its timeline) */
  uint32_t seqno;       /* its sequence number on that timeline */
  uint32_t driver_id;   /* string id: the driver ("v3d", "amdgpu") */
  uint32_t timeline_id; /* string id: the timeline's name */
  uint32_t reserved0;
} gp_activity_dma_fence;

/* The kernel's GPU trace events (tracefs) that gpuperf reads: those
 * Perfetto has a message for. The values are ours and stable: bit i of a
 * linux.ftrace data source's ftrace_events is event i. The scheduler's
 * events were renamed in Linux 6.16. The dma_fence events are DMA_FENCE
 * records, the others GPU_FTRACE records. */
typedef enum gp_ftrace_event {
  GP_FTRACE_GPU_FREQUENCY = 0,               /* power/gpu_frequency */
  GP_FTRACE_GPU_MEM_TOTAL = 1,               /* gpu_mem/gpu_mem_total */
  GP_FTRACE_DRM_SCHED_JOB = 2,               /* gpu_scheduler/, to 6.15 */
  GP_FTRACE_DRM_RUN_JOB = 3,                 /* gpu_scheduler/, to 6.15 */
  GP_FTRACE_DRM_SCHED_PROCESS_JOB = 4,       /* gpu_scheduler/, to 6.15 */
  GP_FTRACE_DRM_SCHED_JOB_QUEUE = 5,         /* gpu_scheduler/, 6.16 on */
  GP_FTRACE_DRM_SCHED_JOB_RUN = 6,           /* gpu_scheduler/, 6.16 on */
  GP_FTRACE_DRM_SCHED_JOB_DONE = 7,          /* gpu_scheduler/, 6.16 on */
  GP_FTRACE_DRM_SCHED_JOB_ADD_DEP = 8,       /* gpu_scheduler/, 6.16 on */
  GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE = 9, /* gpu_scheduler/, 6.16 on */
  GP_FTRACE_DMA_FENCE_INIT = 10,             /* dma_fence/dma_fence_init */
  GP_FTRACE_DMA_FENCE_EMIT = 11,             /* dma_fence/dma_fence_emit */
  GP_FTRACE_DMA_FENCE_SIGNALED = 12,         /* dma_fence/dma_fence_signaled */
  GP_FTRACE_DMA_FENCE_WAIT_START = 13, /* dma_fence/dma_fence_wait_start */
  GP_FTRACE_DMA_FENCE_WAIT_END = 14,   /* dma_fence/dma_fence_wait_end */
  GP_FTRACE_EVENT_COUNT = 15
} gp_ftrace_event;

/*
 * One of the kernel's GPU trace events other than dma_fence's (those are
 * DMA_FENCE records), with the fields Perfetto's message for it has
 * (protos/perfetto/trace/ftrace/{power,gpu_mem,gpu_scheduler}.proto);
 * fields an event does not have are 0. The trace writer writes it as
 * traced_probes does: an FtraceEventBundle of the cpu, holding one
 * FtraceEvent (timestamp, pid, the event's message).
 */
typedef struct gp_activity_gpu_ftrace {
  gp_activity hdr;
  uint64_t timestamp;
  uint32_t event;       /* gp_ftrace_event */
  uint32_t thread_id;   /* the task the kernel was running (ftrace pid) */
  uint32_t cpu;         /* the CPU it ran on */
  uint32_t gpu_id;      /* gpu_frequency, gpu_mem_total: the kernel's GPU */
  uint64_t value;       /* gpu_frequency: state (kHz); gpu_mem_total: size */
  uint32_t pid;         /* gpu_mem_total: the process (0: the whole GPU) */
  uint32_t ring_id;     /* scheduler: string id of the ring ("name"), 0 none */
  uint32_t dev_id;      /* scheduler, 6.16 on: string id of the device */
  uint32_t job_count;   /* scheduler: jobs queued on the entity */
  int32_t hw_job_count; /* scheduler: jobs on the hardware */
  uint32_t reserved0;
  uint64_t entity; /* to 6.15: the entity (a hashed pointer) */
  uint64_t fence;  /* to 6.15: the job's fence (a hashed pointer) */
  uint64_t job_id; /* to 6.15: the job's id */
  uint64_t fence_context, fence_seqno; /* 6.16 on: the job's fence */
  uint64_t dep_context, dep_seqno;     /* add_dep, unschedulable: the fence
                                          the job waits for */
  uint64_t client_id;                  /* 6.16 on: the DRM client */
} gp_activity_gpu_ftrace;

/*
 * A module of device code loaded into a context, or unloaded from it
 * (GP_ACTIVITY_FLAG_MODULE_UNLOAD): CUPTI's CUpti_ActivityModule, for any
 * runtime's loaded code. The simulator makes one module per kernel
 * created (gp_sim_kernel_create) and unloads it when the kernel is
 * destroyed; OpenCL, a program built; CUDA, a module CUPTI reports.
 * (context_id, module_id) names the module: FUNCTION records refer to it.
 */
typedef struct gp_activity_module {
  gp_activity hdr;
  uint64_t timestamp;  /* when it was loaded or unloaded, 0 if unknown */
  uint64_t size_bytes; /* the code's size (CUDA: the cubin's), 0 if unknown */
  uint32_t context_id; /* 0: usable in any context (the simulator's) */
  uint32_t module_id;
  uint32_t flags;   /* GP_ACTIVITY_FLAG_MODULE_UNLOAD */
  uint32_t name_id; /* string id of its name, 0 if it has none */
} gp_activity_module;

/*
 * A function of a module that work can run (a kernel): CUPTI's
 * CUpti_ActivityFunction. Simulated kernels (one per module), the kernels
 * of an OpenCL program, CUDA's global functions. A KERNEL record of the
 * same name (its name_id) ran this function.
 */
typedef struct gp_activity_function {
  gp_activity hdr;
  uint64_t timestamp; /* when the runtime made it known, 0 if unknown */
  uint32_t id;        /* the function's id, unique in its backend */
  uint32_t context_id;
  uint32_t module_id;      /* the MODULE record's module_id */
  uint32_t function_index; /* its index among the module's functions */
  uint32_t name_id;        /* string id of its (mangled) name */
  uint32_t reserved0;
} gp_activity_function;

/*
 * The device attributes gpuperf gives for devices of every backend; the
 * values are ours and stable. Each says the same as gp_device_info's
 * field of that name, and a DEVICE_ATTRIBUTE record of it is written
 * only where the device's backend knows it.
 */
typedef enum gp_device_attr {
  GP_DEVICE_ATTR_UNKNOWN = 0,
  GP_DEVICE_ATTR_COMPUTE_UNITS = 1,               /* SMs, CUs, QPUs */
  GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK = 2,       /* OpenCL: work-group size */
  GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES = 3,         /* device memory */
  GP_DEVICE_ATTR_CORE_CLOCK_KHZ = 4,              /* the highest core clock */
  GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 5, /* OpenCL: local memory */
  GP_DEVICE_ATTR_COUNT
} gp_device_attr;

/*
 * One attribute of a device: CUPTI's CUpti_ActivityDeviceAttribute.
 * Written for every device when DEVICE_ATTRIBUTE is enabled, and for each
 * device registered afterwards. With
 * GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE (CUDA only), attribute is
 * CUDA's CUdevice_attribute as CUPTI gave it, and value an int64;
 * otherwise it is a gp_device_attr.
 */
typedef struct gp_activity_device_attribute {
  gp_activity hdr;
  uint32_t device_id;
  uint32_t attribute;  /* gp_device_attr, or CUdevice_attribute (flag) */
  uint32_t flags;      /* GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE */
  uint32_t value_type; /* gp_value_type */
  union {
    int64_t i64; /* GP_VALUE_INT64 */
    double f64;  /* GP_VALUE_DOUBLE */
  } value;
} gp_activity_device_attribute;

/* ------------------------------------------------------------------ */
/* Collection                                                          */

/*
 * Enables or disables collection of one kind, for all contexts. By default
 * every kind is disabled except DROPPED. Returns 0, or GP_EKIND for a kind
 * that does not exist (nothing changes).
 */
GP_EXPORT int gp_activity_enable(gp_activity_kind kind);
GP_EXPORT int gp_activity_disable(gp_activity_kind kind);

/*
 * Enables or disables one kind for one context; this setting supersedes the
 * global one for records of that context. Only the kinds whose records name
 * a context (KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, COUNTER, RENDER_STAGE)
 * can be set
 * per context: others give GP_ENOTSUP. Returns GP_EKIND for an unknown kind,
 * GP_ENOENT for an unknown context. A failed call changes nothing.
 */
GP_EXPORT int gp_activity_enable_context(uint32_t context_id,
                                         gp_activity_kind kind);
GP_EXPORT int gp_activity_disable_context(uint32_t context_id,
                                          gp_activity_kind kind);

/*
 * Returns 1 if records of kind are collected for context_id (0: no
 * particular context), 0 if not, GP_EKIND for an unknown kind.
 */
GP_EXPORT int gp_activity_is_enabled(uint32_t context_id,
                                     gp_activity_kind kind);

/*
 * Asks for an empty buffer. *size holds the suggested size on entry
 * (GP_ACTIVITY_ATTR_BUFFER_SIZE); set *buffer and *size to the buffer given,
 * 8-byte aligned, or *buffer to NULL to decline (records are then dropped
 * and counted). *max_num_records: 0 to fill the buffer, or a maximum.
 * Called from any thread that produces records.
 */
typedef void (*gp_buffer_request_fn)(uint8_t **buffer, size_t *size,
                                     size_t *max_num_records);

/*
 * Returns a buffer holding valid_size bytes of records. Ownership of buffer
 * passes back to the application. Called from the collector thread only,
 * one buffer at a time, in the order buffers were filled per thread.
 */
typedef void (*gp_buffer_complete_fn)(uint8_t *buffer, size_t size,
                                      size_t valid_size);

/*
 * Registers the buffer callbacks and starts the collector thread. Returns
 * GP_EINVAL if either is NULL. Registering again replaces the pair after
 * every buffer obtained from the old pair has been completed to it.
 */
GP_EXPORT int gp_activity_register_callbacks(gp_buffer_request_fn request,
                                             gp_buffer_complete_fn complete);

/*
 * Iterates over the records of a buffer. Pass *record = NULL to get the
 * first record; afterwards pass the previous one. Returns 0 and sets
 * *record, GP_EEND when there are no more records, GP_EINVAL if buffer or
 * record is NULL, GP_ECORRUPT if a record header is malformed or runs past
 * valid_size (iteration cannot continue).
 */
GP_EXPORT int gp_activity_get_next_record(const uint8_t *buffer,
                                          size_t valid_size,
                                          const gp_activity **record);

/*
 * Returns the wait ids at the end of a KERNEL, MEMCPY, MEMSET or
 * RENDER_STAGE record and stores their number in *n; NULL with *n = 0 for
 * other kinds or none.
 */
GP_EXPORT const uint64_t *gp_activity_wait_ids(const gp_activity *record,
                                               uint32_t *n);

/* Flags for gp_activity_flush_all(). */
#define GP_ACTIVITY_FLUSH_FORCED 1u

/*
 * Delivers every record written so far through the completion callback,
 * partially filled buffers included, and returns when they have been
 * completed. Without GP_ACTIVITY_FLUSH_FORCED, GPU work that has not
 * finished yet is left for later; with it, backends also emit records for
 * work still in flight. Returns GP_ENOCALLBACK if no callbacks are
 * registered, GP_EINVAL for unknown flags.
 */
GP_EXPORT int gp_activity_flush_all(uint32_t flags);

/*
 * Flushes for one context (and one of its streams; stream_id 0: all of
 * them), as CUPTI's cuptiActivityFlush with a context: every record
 * written so far is delivered, as by gp_activity_flush_all (buffers are
 * per thread, not per context, so records of other contexts come too);
 * with GP_ACTIVITY_FLUSH_FORCED, only the work of that context (stream)
 * still in flight is forced into records, and other contexts' stays in
 * flight. context_id 0 (stream_id 0) is gp_activity_flush_all. Returns
 * GP_ENOENT for a context that is not registered and live, GP_EINVAL for
 * unknown flags or a stream without a context, and flush_all's errors.
 */
GP_EXPORT int gp_activity_flush(uint32_t context_id, uint32_t stream_id,
                                uint32_t flags);

/*
 * Stores in *dropped the number of records dropped since the last call for
 * the same (context_id, stream_id), and resets that count. context_id 0
 * (with stream_id 0) counts every dropped record; a context id counts the
 * records of that context, and stream_id 0 then means all its streams.
 * Returns GP_EINVAL if dropped is NULL.
 */
GP_EXPORT int gp_activity_get_num_dropped_records(uint32_t context_id,
                                                  uint32_t stream_id,
                                                  size_t *dropped);

/*
 * gpuperf's ids of an API's objects, as CUPTI's cuptiGetContextId,
 * cuptiGetDeviceId and cuptiGetStreamId give them for CUDA's, for every
 * API whose objects gpuperf saw made (api: gp_api):
 *
 *   api             context                  device             stream
 *   GP_API_SIM      gp_sim_context *         -                  gp_sim_stream *
 *   GP_API_OPEN_CL  cl_context, and its      cl_device_id cl_command_queue
 *                   cl_device_id when it
 *                   has several devices
 *   GP_API_VULKAN   VkDevice                 -                  VkQueue
 *   GP_API_CUDA     CUcontext                -                  CUstream
 *
 * gp_activity_get_device_id takes a device handle, or a context handle
 * (device NULL) for its device. (A Vulkan layer never sees the
 * program's VkPhysicalDevice handles: the loader wraps them.)
 * gp_activity_get_stream_id checks that a context given is the stream's (NULL:
 * not checked). Returns 0, GP_EINVAL for a NULL handle or output (or a stream
 * of another context), GP_ENOENT for an object gpuperf did not see made or saw
 * go (made before its library was loaded, say).
 */
GP_EXPORT int gp_activity_get_context_id(uint32_t api, const void *context,
                                         const void *device,
                                         uint32_t *context_id);
GP_EXPORT int gp_activity_get_device_id(uint32_t api, const void *context,
                                        const void *device,
                                        uint32_t *device_id);
GP_EXPORT int gp_activity_get_stream_id(uint32_t api, const void *context,
                                        const void *stream,
                                        uint32_t *stream_id);

/* A device's auto boost state (CUPTI's CUpti_ActivityAutoBoostState). */
typedef struct gp_auto_boost_state {
  uint32_t enabled; /* 1: the device raises its clocks on its own */
  uint32_t pid;     /* the process that asked for this state; 0: none */
} gp_auto_boost_state;

/*
 * The auto boost state of a context's device, as CUPTI's
 * cuptiGetAutoBoostState: profiles taken while a GPU boosts its clocks on
 * its own can differ from run to run. Returns 0, GP_EINVAL if state is
 * NULL, GP_ENOENT for a context that is not live, GP_ENOTSUP where the
 * device's backend cannot say (CUPTI_ERROR_NOT_SUPPORTED).
 */
GP_EXPORT int gp_activity_get_auto_boost_state(uint32_t context_id,
                                               gp_auto_boost_state *state);

/* Cumulative drop counts by kind and reason (never reset). */
typedef struct gp_activity_drop_stats {
  uint64_t count[GP_ACTIVITY_KIND_COUNT][GP_DROP_REASON_COUNT];
  uint64_t total;
} gp_activity_drop_stats;

/* Fills *stats. Returns GP_EINVAL if stats is NULL. */
GP_EXPORT int gp_activity_get_drop_stats(gp_activity_drop_stats *stats);

/* Attributes of the activity API. All values are size_t. */
typedef enum gp_activity_attr {
  GP_ACTIVITY_ATTR_BUFFER_SIZE = 0,       /* suggested size, default 1 MiB */
  GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT = 1, /* buffers held at once, default 64 */
  GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS = 2,   /* periodic flush, 0 = off */
  /* CUPTI's device-side buffers, where a backend keeps records on the GPU
   * before they reach the host (the CUDA collector: CUPTI's attributes of
   * the same names, set when it starts). 0, the default: the driver's own
   * default (CUPTI 6.5's: 4 MiB, 8 MiB, 4 buffers). */
  GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE = 3,       /* bytes per buffer */
  GP_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP = 4,   /* the same, CDP work */
  GP_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT = 5, /* buffers per context */
  GP_ACTIVITY_ATTR_COUNT
} gp_activity_attr;

/*
 * Reads an attribute into value. *value_size holds the size of value on
 * entry and the bytes written on return. Returns GP_EINVAL if value_size or
 * value is NULL or attr is unknown, GP_ESIZE if *value_size is too small
 * (then *value_size is set to the size needed and value is untouched).
 */
GP_EXPORT int gp_activity_get_attribute(gp_activity_attr attr,
                                        size_t *value_size, void *value);

/*
 * Writes an attribute. Same errors as get; GP_ERANGE for a value out of
 * range (buffer size below 1 KiB or above 1 GiB, pool limit 0; a device
 * buffer size other than 0 below 64 KiB or above 1 GiB). A failed call
 * changes nothing.
 */
GP_EXPORT int gp_activity_set_attribute(gp_activity_attr attr,
                                        size_t *value_size, const void *value);

/*
 * Returns the string for a string id found in a record, or "" for id 0 or
 * an unknown id. The string lives until the process exits.
 */
GP_EXPORT const char *gp_activity_string(uint32_t string_id);

/* Returns the name of a kind ("KERNEL"), or "UNKNOWN". */
GP_EXPORT const char *gp_activity_kind_name(uint32_t kind);

/* Returns the name of a gp_device_attr ("compute_units"), or "unknown". */
GP_EXPORT const char *gp_device_attr_name(uint32_t attribute);

/* Returns the name of a drop reason ("no_buffer"), or "unknown". */
GP_EXPORT const char *gp_drop_reason_name(uint32_t reason);

/* Returns the name of a memcpy kind ("HtoD"), or "Unknown". */
GP_EXPORT const char *gp_memcpy_kind_name(uint32_t kind);

/*
 * Flushes (forced), stops the collector thread and disables every kind.
 * Every buffer the request callback gave is completed before it returns
 * (the empty ones with valid_size 0): from then on the library never
 * reads or writes one of them, and calls neither callback, until
 * gp_activity_register_callbacks() is called again; after that, a later
 * enable starts collection again. Call it once the program's threads
 * have stopped producing records. In a process recorded by
 * `gpuperf record` or sending to Perfetto's service (GPUPERF_PRODUCER),
 * that recording ends first, with its last records and counter samples;
 * GPU work after it is not recorded. Returns 0 or the flush error.
 */
GP_EXPORT int gp_activity_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_ACTIVITY_H */
