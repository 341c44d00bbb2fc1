/*
 * dump.c - the text dump of traces (dump.h): a schema of the messages we
 * know, as tables, and a printer that walks the wire format with the
 * bounds-checked reader of pb.h.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "dump.h"
#include "pb.h"

typedef enum dtype {
  D_UINT, /* varint, unsigned */
  D_INT,  /* varint, signed (int32/int64) */
  D_BOOL,
  D_ENUM,
  D_STRING, /* also bytes: escaped the same way */
  D_DOUBLE,
  D_FIXED64,
  D_MSG
} dtype;

typedef struct dmsg dmsg;

typedef struct dfield {
  uint32_t id;
  const char *name;
  dtype type;
  const void *sub; /* D_MSG: const dmsg *; D_ENUM: const char *const * */
} dfield;

struct dmsg {
  const dfield *fields;
  size_t n;
};

#define MSG(name, ...)                                                         \
  static const dfield name##_f[] = {__VA_ARGS__};                              \
  static const dmsg name = {name##_f, sizeof(name##_f) / sizeof(dfield)}

/* Enums: names by value ("" for a value without a name), NULL-ended. */
static const char *const e_builtin_clock[] = {"BUILTIN_CLOCK_UNKNOWN",
                                              "BUILTIN_CLOCK_REALTIME",
                                              "BUILTIN_CLOCK_REALTIME_COARSE",
                                              "BUILTIN_CLOCK_MONOTONIC",
                                              "BUILTIN_CLOCK_MONOTONIC_COARSE",
                                              "BUILTIN_CLOCK_MONOTONIC_RAW",
                                              "BUILTIN_CLOCK_BOOTTIME",
                                              "",
                                              "",
                                              "BUILTIN_CLOCK_TSC",
                                              "BUILTIN_CLOCK_PERF",
                                              "BUILTIN_CLOCK_TRACE_FILE",
                                              NULL};
static const char *const e_te_type[] = {"TYPE_UNSPECIFIED",
                                        "TYPE_SLICE_BEGIN",
                                        "TYPE_SLICE_END",
                                        "TYPE_INSTANT",
                                        "TYPE_COUNTER",
                                        "TYPE_STATE",
                                        NULL};
static const char *const e_gpu_api[] = {"GPU_API_UNDEFINED",
                                        "GPU_API_OPEN_GL",
                                        "GPU_API_VULKAN",
                                        "GPU_API_OPEN_CL",
                                        "GPU_API_CUDA",
                                        "GPU_API_HIP",
                                        NULL};
static const char *const e_ctx_api[] = {
    "UNDEFINED", "OPEN_GL", "VULKAN", "OPEN_CL", "CUDA", "HIP", NULL};
static const char *const e_stage_cat[] = {"OTHER", "GRAPHICS", "COMPUTE", NULL};
static const char *const e_group[] = {"UNCLASSIFIED", "SYSTEM",      "VERTICES",
                                      "FRAGMENTS",    "PRIMITIVES",  "MEMORY",
                                      "COMPUTE",      "RAY_TRACING", NULL};
static const char *const e_unit[] = {
    "NONE",        "BIT",         "KILOBIT",   "MEGABIT",   "GIGABIT",
    "TERABIT",     "PETABIT",     "BYTE",      "KILOBYTE",  "MEGABYTE",
    "GIGABYTE",    "TERABYTE",    "PETABYTE",  "HERTZ",     "KILOHERTZ",
    "MEGAHERTZ",   "GIGAHERTZ",   "TERAHERTZ", "PETAHERTZ", "NANOSECOND",
    "MICROSECOND", "MILLISECOND", "SECOND",    "MINUTE",    "HOUR",
    "VERTEX",      "PIXEL",       "TRIANGLE",  "MILLIWATT", "WATT",
    "KILOWATT",    "JOULE",       "VOLT",      "AMPERE",    "CELSIUS",
    "FAHRENHEIT",  "KELVIN",      "PERCENT",   "PRIMITIVE", "FRAGMENT",
    "INSTRUCTION", NULL};
static const char *const e_direction[] = {
    "VALUE_DIRECTION_UNSPECIFIED", "VALUE_DIRECTION_BACKWARDS_LOOKING",
    "VALUE_DIRECTION_FORWARDS_LOOKING", NULL};
static const char *const e_severity[] = {"LOG_SEVERITY_UNSPECIFIED",
                                         "LOG_SEVERITY_VERBOSE",
                                         "LOG_SEVERITY_DEBUG",
                                         "LOG_SEVERITY_INFO",
                                         "LOG_SEVERITY_WARNING",
                                         "LOG_SEVERITY_ERROR",
                                         NULL};
static const char *const e_counter_unit[] = {
    "UNIT_UNSPECIFIED", "UNIT_TIME_NS", "UNIT_COUNT", "UNIT_SIZE_BYTES", NULL};

/* Leaf messages first: each table names the ones below it. */
MSG(m_clock, {1, "clock_id", D_UINT, NULL}, {2, "timestamp", D_UINT, NULL},
    {3, "is_incremental", D_BOOL, NULL},
    {4, "unit_multiplier_ns", D_UINT, NULL});
MSG(m_clock_snapshot, {1, "clocks", D_MSG, &m_clock},
    {2, "primary_trace_clock", D_ENUM, e_builtin_clock});
MSG(m_name_entry, {1, "iid", D_UINT, NULL}, {2, "name", D_STRING, NULL});
MSG(m_utsname, {1, "sysname", D_STRING, NULL}, {2, "version", D_STRING, NULL},
    {3, "release", D_STRING, NULL}, {4, "machine", D_STRING, NULL});
MSG(m_system_info, {1, "utsname", D_MSG, &m_utsname});
MSG(m_interned_string, {1, "iid", D_UINT, NULL}, {2, "str", D_STRING, NULL});
MSG(m_gctx, {1, "iid", D_UINT, NULL}, {2, "pid", D_INT, NULL},
    {3, "api", D_ENUM, e_ctx_api});
MSG(m_spec, {1, "iid", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "description", D_STRING, NULL}, {4, "category", D_ENUM, e_stage_cat});
MSG(m_extra_arg, {1, "name_iid", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "int_value", D_INT, NULL}, {4, "uint_value", D_UINT, NULL},
    {5, "double_value", D_DOUBLE, NULL}, {6, "string_value", D_STRING, NULL},
    {7, "string_value_iid", D_UINT, NULL});
MSG(m_kernel, {1, "iid", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "demangled_name", D_STRING, NULL}, {4, "arch", D_STRING, NULL},
    {5, "args", D_MSG, &m_extra_arg});
MSG(m_gc_spec, {1, "counter_id", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "description", D_STRING, NULL}, {5, "int_peak_value", D_INT, NULL},
    {6, "double_peak_value", D_DOUBLE, NULL},
    {7, "numerator_units", D_ENUM, e_unit},
    {8, "denominator_units", D_ENUM, e_unit},
    {9, "select_by_default", D_BOOL, NULL}, {10, "groups", D_ENUM, e_group},
    {11, "value_direction", D_ENUM, e_direction});
MSG(m_gc_block, {1, "block_id", D_UINT, NULL},
    {2, "block_capacity", D_UINT, NULL}, {3, "name", D_STRING, NULL},
    {4, "description", D_STRING, NULL}, {5, "counter_ids", D_UINT, NULL});
MSG(m_gc_group, {1, "group_id", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "description", D_STRING, NULL}, {4, "counter_ids", D_UINT, NULL});
MSG(m_gc_desc, {1, "specs", D_MSG, &m_gc_spec},
    {2, "blocks", D_MSG, &m_gc_block},
    {3, "min_sampling_period_ns", D_UINT, NULL},
    {4, "max_sampling_period_ns", D_UINT, NULL},
    {5, "supports_instrumented_sampling", D_BOOL, NULL},
    {6, "counter_groups", D_MSG, &m_gc_group},
    {7, "supports_counter_names", D_BOOL, NULL},
    {8, "supports_counter_name_globs", D_BOOL, NULL});
MSG(m_igcd, {1, "iid", D_UINT, NULL},
    {2, "counter_descriptor", D_MSG, &m_gc_desc}, {3, "gpu_id", D_INT, NULL});
MSG(m_interned, {1, "event_categories", D_MSG, &m_name_entry},
    {2, "event_names", D_MSG, &m_name_entry},
    {3, "debug_annotation_names", D_MSG, &m_name_entry},
    {5, "function_names", D_MSG, &m_interned_string},
    {22, "vulkan_memory_keys", D_MSG, &m_interned_string},
    {23, "graphics_contexts", D_MSG, &m_gctx},
    {24, "gpu_specifications", D_MSG, &m_spec},
    {29, "debug_annotation_string_values", D_MSG, &m_interned_string},
    {47, "gpu_counter_descriptors", D_MSG, &m_igcd},
    {1000, "[perfetto.protos.GpuInternedData.compute_kernels]", D_MSG,
     &m_kernel},
    {1001, "[perfetto.protos.GpuInternedData.compute_arg_names]", D_MSG,
     &m_name_entry});
MSG(m_counter, {1, "counter_id", D_UINT, NULL}, {2, "int_value", D_INT, NULL},
    {3, "double_value", D_DOUBLE, NULL});
MSG(m_gce, {1, "counter_descriptor", D_MSG, &m_gc_desc},
    {2, "counters", D_MSG, &m_counter}, {3, "gpu_id", D_INT, NULL},
    {4, "counter_descriptor_iid", D_UINT, NULL});
MSG(m_extra_data, {1, "name", D_STRING, NULL}, {2, "value", D_STRING, NULL});
MSG(m_dim3, {1, "x", D_UINT, NULL}, {2, "y", D_UINT, NULL},
    {3, "z", D_UINT, NULL});
MSG(m_launch, {1, "grid_size", D_MSG, &m_dim3},
    {2, "workgroup_size", D_MSG, &m_dim3}, {3, "args", D_MSG, &m_extra_arg});
MSG(m_ctx_spec, {1, "context", D_UINT, NULL}, {2, "pid", D_INT, NULL});
MSG(m_description, {1, "name", D_STRING, NULL},
    {2, "description", D_STRING, NULL});
MSG(m_specifications, {1, "context_spec", D_MSG, &m_ctx_spec},
    {2, "hw_queue", D_MSG, &m_description},
    {3, "stage", D_MSG, &m_description});
MSG(m_rse, {1, "event_id", D_UINT, NULL}, {2, "duration", D_UINT, NULL},
    {3, "hw_queue_id", D_INT, NULL}, {4, "stage_id", D_INT, NULL},
    {5, "context", D_UINT, NULL}, {6, "extra_data", D_MSG, &m_extra_data},
    {7, "specifications", D_MSG, &m_specifications},
    {8, "render_target_handle", D_UINT, NULL},
    {9, "render_pass_handle", D_UINT, NULL},
    {10, "submission_id", D_UINT, NULL}, {11, "gpu_id", D_INT, NULL},
    {12, "command_buffer_handle", D_UINT, NULL},
    {13, "hw_queue_iid", D_UINT, NULL}, {14, "stage_iid", D_UINT, NULL},
    {15, "render_subpass_index_mask", D_UINT, NULL},
    {16, "render_pass_instance_id", D_UINT, NULL}, {17, "name", D_STRING, NULL},
    {18, "event_wait_ids", D_UINT, NULL}, {19, "kernel_iid", D_UINT, NULL},
    {20, "name_iid", D_UINT, NULL}, {21, "launch", D_MSG, &m_launch});
MSG(m_kv, {1, "key", D_STRING, NULL}, {2, "value", D_STRING, NULL});
MSG(m_gpu, {1, "name", D_STRING, NULL}, {2, "vendor", D_STRING, NULL},
    {3, "model", D_STRING, NULL}, {4, "architecture", D_STRING, NULL},
    {5, "uuid", D_STRING, NULL}, {6, "extra_info", D_MSG, &m_kv},
    {7, "pci_bdf", D_STRING, NULL});
MSG(m_gpu_info, {1, "gpus", D_MSG, &m_gpu});
MSG(m_gpu_log, {1, "severity", D_ENUM, e_severity}, {2, "tag", D_STRING, NULL},
    {3, "log_message", D_STRING, NULL});
MSG(m_mem_total, {1, "gpu_id", D_UINT, NULL}, {2, "pid", D_UINT, NULL},
    {3, "size", D_UINT, NULL});
MSG(m_gpu_freq, {1, "gpu_id", D_UINT, NULL},
    {2, "frequency_khz", D_UINT, NULL});
MSG(m_vk_name, {1, "pid", D_UINT, NULL}, {2, "vk_device", D_UINT, NULL},
    {3, "object_type", D_INT, NULL}, {4, "object", D_UINT, NULL},
    {5, "object_name", D_STRING, NULL});
MSG(m_vk_submit, {1, "duration_ns", D_UINT, NULL}, {2, "pid", D_UINT, NULL},
    {3, "tid", D_UINT, NULL}, {4, "vk_queue", D_UINT, NULL},
    {5, "vk_command_buffers", D_UINT, NULL},
    {6, "submission_id", D_UINT, NULL});
MSG(m_vk_api, {1, "vk_debug_utils_object_name", D_MSG, &m_vk_name},
    {2, "vk_queue_submit", D_MSG, &m_vk_submit});
MSG(m_correlation, {1, "render_stage_submission_event_ids", D_UINT, NULL},
    {2, "render_stage_wait_event_ids", D_UINT, NULL});
MSG(m_debug_annotation, {1, "name_iid", D_UINT, NULL},
    {2, "bool_value", D_BOOL, NULL}, {3, "uint_value", D_UINT, NULL},
    {4, "int_value", D_INT, NULL}, {5, "double_value", D_DOUBLE, NULL},
    {6, "string_value", D_STRING, NULL}, {7, "pointer_value", D_UINT, NULL},
    {10, "name", D_STRING, NULL});
MSG(m_track_event, {3, "category_iids", D_UINT, NULL},
    {4, "debug_annotations", D_MSG, &m_debug_annotation},
    {9, "type", D_ENUM, e_te_type}, {10, "name_iid", D_UINT, NULL},
    {11, "track_uuid", D_UINT, NULL}, {22, "categories", D_STRING, NULL},
    {23, "name", D_STRING, NULL}, {30, "counter_value", D_INT, NULL},
    {31, "extra_counter_track_uuids", D_UINT, NULL},
    {44, "double_counter_value", D_DOUBLE, NULL},
    {47, "flow_ids", D_FIXED64, NULL},
    {48, "terminating_flow_ids", D_FIXED64, NULL},
    {3000, "[perfetto.protos.GpuTrackEvent.gpu_correlation]", D_MSG,
     &m_correlation},
    {3001, "[perfetto.protos.GpuTrackEvent.gpu_api]", D_ENUM, e_gpu_api});
MSG(m_process, {1, "pid", D_INT, NULL}, {2, "cmdline", D_STRING, NULL},
    {6, "process_name", D_STRING, NULL});
MSG(m_thread, {1, "pid", D_INT, NULL}, {2, "tid", D_INT, NULL},
    {5, "thread_name", D_STRING, NULL});
MSG(m_counter_desc, {1, "type", D_UINT, NULL},
    {2, "categories", D_STRING, NULL}, {3, "unit", D_ENUM, e_counter_unit},
    {4, "unit_multiplier", D_INT, NULL}, {5, "is_incremental", D_BOOL, NULL});
MSG(m_track_desc, {1, "uuid", D_UINT, NULL}, {2, "name", D_STRING, NULL},
    {3, "process", D_MSG, &m_process}, {4, "thread", D_MSG, &m_thread},
    {5, "parent_uuid", D_UINT, NULL}, {8, "counter", D_MSG, &m_counter_desc},
    {10, "static_name", D_STRING, NULL});
MSG(m_defaults, {58, "timestamp_clock_id", D_UINT, NULL});
MSG(m_sched_free, {1, "comm", D_STRING, NULL}, {2, "pid", D_INT, NULL},
    {3, "prio", D_INT, NULL});
MSG(m_dma_fence, {1, "context", D_UINT, NULL}, {2, "driver", D_STRING, NULL},
    {3, "seqno", D_UINT, NULL}, {4, "timeline", D_STRING, NULL});
MSG(m_ftrace_gpu_freq, {1, "gpu_id", D_UINT, NULL}, {2, "state", D_UINT, NULL});
MSG(m_drm_job, {1, "entity", D_UINT, NULL}, {2, "fence", D_UINT, NULL},
    {3, "hw_job_count", D_INT, NULL}, {4, "id", D_UINT, NULL},
    {5, "job_count", D_UINT, NULL}, {6, "name", D_STRING, NULL});
MSG(m_drm_process_job, {1, "fence", D_UINT, NULL});
MSG(m_drm_dep, {1, "fence_context", D_UINT, NULL},
    {2, "fence_seqno", D_UINT, NULL}, {3, "ctx", D_UINT, NULL},
    {4, "seqno", D_UINT, NULL});
MSG(m_drm_done, {1, "fence_context", D_UINT, NULL},
    {2, "fence_seqno", D_UINT, NULL});
MSG(m_drm_queue, {1, "name", D_STRING, NULL}, {2, "job_count", D_UINT, NULL},
    {3, "hw_job_count", D_INT, NULL}, {4, "dev", D_STRING, NULL},
    {5, "fence_context", D_UINT, NULL}, {6, "fence_seqno", D_UINT, NULL},
    {7, "client_id", D_UINT, NULL});
MSG(m_ftrace_event, {1, "timestamp", D_UINT, NULL}, {2, "pid", D_UINT, NULL},
    {240, "sched_process_free", D_MSG, &m_sched_free},
    {332, "gpu_frequency", D_MSG, &m_ftrace_gpu_freq},
    {340, "gpu_mem_total", D_MSG, &m_mem_total},
    {411, "drm_sched_job", D_MSG, &m_drm_job},
    {412, "drm_run_job", D_MSG, &m_drm_job},
    {413, "drm_sched_process_job", D_MSG, &m_drm_process_job},
    {414, "dma_fence_init", D_MSG, &m_dma_fence},
    {415, "dma_fence_emit", D_MSG, &m_dma_fence},
    {416, "dma_fence_signaled", D_MSG, &m_dma_fence},
    {417, "dma_fence_wait_start", D_MSG, &m_dma_fence},
    {418, "dma_fence_wait_end", D_MSG, &m_dma_fence},
    {591, "drm_sched_job_add_dep", D_MSG, &m_drm_dep},
    {592, "drm_sched_job_done", D_MSG, &m_drm_done},
    {593, "drm_sched_job_queue", D_MSG, &m_drm_queue},
    {594, "drm_sched_job_run", D_MSG, &m_drm_queue},
    {595, "drm_sched_job_unschedulable", D_MSG, &m_drm_dep});
MSG(m_ftrace_bundle, {1, "cpu", D_UINT, NULL},
    {2, "event", D_MSG, &m_ftrace_event});
MSG(m_packet, {1, "ftrace_events", D_MSG, &m_ftrace_bundle},
    {3, "trusted_uid", D_INT, NULL},
    {6, "clock_snapshot", D_MSG, &m_clock_snapshot},
    {8, "timestamp", D_UINT, NULL},
    {10, "trusted_packet_sequence_id", D_UINT, NULL},
    {11, "track_event", D_MSG, &m_track_event},
    {12, "interned_data", D_MSG, &m_interned},
    {13, "sequence_flags", D_UINT, NULL},
    {41, "incremental_state_cleared", D_BOOL, NULL},
    {42, "previous_packet_dropped", D_BOOL, NULL},
    {52, "gpu_counter_event", D_MSG, &m_gce},
    {53, "gpu_render_stage_event", D_MSG, &m_rse},
    {58, "timestamp_clock_id", D_UINT, NULL},
    {59, "trace_packet_defaults", D_MSG, &m_defaults},
    {45, "system_info", D_MSG, &m_system_info},
    {60, "track_descriptor", D_MSG, &m_track_desc},
    {63, "gpu_log", D_MSG, &m_gpu_log},
    {65, "vulkan_api_event", D_MSG, &m_vk_api},
    {71, "gpu_mem_total_event", D_MSG, &m_mem_total},
    {79, "trusted_pid", D_INT, NULL},
    {87, "first_packet_on_sequence", D_BOOL, NULL},
    {98, "machine_id", D_UINT, NULL}, {128, "gpu_info", D_MSG, &m_gpu_info},
    {129, "generic_gpu_frequency_event", D_MSG, &m_gpu_freq});

/* ------------------------------------------------------------------ */
/* Printing                                                             */

static void indent(FILE *out, int depth) {
  for (int i = 0; i < depth; i++)
    fputs("  ", out);
}

/* C-escaped as protobuf's text format does: octal for bytes outside
 * printable ASCII. */
static void print_escaped(FILE *out, const uint8_t *p, size_t n) {
  fputc('"', out);
  for (size_t i = 0; i < n; i++) {
    uint8_t c = p[i];
    switch (c) {
    case '\n':
      fputs("\\n", out);
      break;
    case '\r':
      fputs("\\r", out);
      break;
    case '\t':
      fputs("\\t", out);
      break;
    case '"':
      fputs("\\\"", out);
      break;
    case '\'':
      fputs("\\'", out);
      break;
    case '\\':
      fputs("\\\\", out);
      break;
    default:
      if (c < 0x20 || c >= 0x7f)
        fprintf(out, "\\%03o", c);
      else
        fputc(c, out);
    }
  }
  fputc('"', out);
}

static void print_double(FILE *out, double d) {
  char buf[40];
  snprintf(buf, sizeof(buf), "%.15g", d);
  if (strtod(buf, NULL) != d)
    snprintf(buf, sizeof(buf), "%.17g", d);
  fputs(buf, out);
}

static const dfield *find(const dmsg *m, uint32_t id) {
  for (size_t i = 0; m && i < m->n; i++)
    if (m->fields[i].id == id)
      return &m->fields[i];
  return NULL;
}

static bool looks_like_message(const uint8_t *p, size_t n) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, p, n, 0);
  int rc;
  while ((rc = gp__pb_next(&r, &f)) == 1) {
  }
  return rc == 0 && n > 0;
}

static int print_message(FILE *out, const dmsg *m, gp__pb_reader *r, int depth);

static int print_field(FILE *out, const dfield *d, const gp__pb_reader *r,
                       const gp__pb_field *f, int depth) {
  indent(out, depth);
  if (d)
    fputs(d->name, out);
  else
    fprintf(out, "#%u", f->id);
  if (f->wire_type == GP_PB_LEN) {
    bool nested = d ? d->type == D_MSG : looks_like_message(f->data, f->size);
    if (nested) {
      fputs(" {\n", out);
      gp__pb_reader sub;
      gp__pb_reader_sub(&sub, r, f);
      int rc = print_message(out, d ? d->sub : NULL, &sub, depth + 1);
      indent(out, depth);
      fputs("}\n", out);
      return rc;
    }
    fputs(": ", out);
    print_escaped(out, f->data, f->size);
    fputc('\n', out);
    return 0;
  }
  fputs(": ", out);
  dtype t = d ? d->type : D_UINT;
  if (f->wire_type == GP_PB_I64 && t != D_DOUBLE && t != D_FIXED64)
    t = D_FIXED64;
  switch (t) {
  case D_INT:
    fprintf(out, "%lld", (long long)gp__pb_as_int(f));
    break;
  case D_BOOL:
    fputs(f->value ? "true" : "false", out);
    break;
  case D_ENUM: {
    const char *const *names = d->sub;
    size_t k = 0;
    while (names[k])
      k++;
    if (f->value < k && names[f->value][0])
      fputs(names[f->value], out);
    else
      fprintf(out, "%llu", (unsigned long long)f->value);
    break;
  }
  case D_DOUBLE:
    print_double(out, gp__pb_as_double(f));
    break;
  default:
    fprintf(out, "%llu", (unsigned long long)f->value);
    break;
  }
  fputc('\n', out);
  return 0;
}

static int print_message(FILE *out, const dmsg *m, gp__pb_reader *r,
                         int depth) {
  gp__pb_field f;
  int rc;
  while ((rc = gp__pb_next(r, &f)) == 1) {
    if ((rc = print_field(out, find(m, f.id), r, &f, depth)) != 0)
      return rc;
  }
  return rc;
}

/* See dump.h. */
int gp__trace_dump(const uint8_t *data, size_t size, FILE *out) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, size, 0);
  int rc;
  for (;;) {
    uint64_t at = gp__pb_offset(&r);
    rc = gp__pb_next(&r, &f);
    if (rc == 0)
      return 0;
    if (rc < 0 || f.id != 1 || f.wire_type != GP_PB_LEN) {
      fprintf(out, "# malformed packet at offset %llu\n",
              (unsigned long long)at);
      return GP_ECORRUPT;
    }
    fputs("packet {\n", out);
    gp__pb_reader sub;
    gp__pb_reader_sub(&sub, &r, &f);
    rc = print_message(out, &m_packet, &sub, 1);
    fputs("}\n", out);
    if (rc < 0) {
      fprintf(out, "# malformed packet at offset %llu\n",
              (unsigned long long)at);
      return GP_ECORRUPT;
    }
  }
}
