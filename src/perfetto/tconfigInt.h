/*
 * tconfigInt.h - the parsed TraceConfig, shared by tconfig.c (reading and
 * checking) and tconfig_format.c (writing it back as text).
 */
#ifndef GPUPERF_PERFETTO_TCONFIG_INT_H
#define GPUPERF_PERFETTO_TCONFIG_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuperf/session.h"
#include "textproto.h"

/* Names of the enums the schema knows, by value (NULL-ended). */
extern const char *const gp__tc_fill_policies[];
extern const char *const gp__tc_name_bases[];

/* A slot of the sources' name index: index + 1 into src (0 = empty) and
 * the name's hash. */
typedef struct tc_slot {
  uint32_t index;
  uint32_t hash;
} tc_slot;

typedef struct tc_source {
  gp_data_source_info info;
  bool period_set;     /* counter_period_ns given */
  bool isc;            /* instrumented_sampling_config given */
  bool counter_config; /* gpu_counter_config given */
  bool renderstages_config;
  bool vulkan_memory_config;
  bool target_set;
  uint32_t line;
} tc_source;

typedef struct tc_buffer {
  uint32_t size_kb, fill_policy;
} tc_buffer;

struct gp_trace_config {
  gp__arena arena;
  tc_source *src;
  uint32_t nsrc, capsrc;
  tc_slot *by_name; /* hash index of src by name */
  uint32_t nslots;  /* power of two, > 2 * nsrc */
  tc_buffer *buffers;
  uint32_t nbuf;
  uint32_t duration_ms, flush_period_ms, file_write_period_ms;
  int write_into_file; /* -1 unset */
  uint32_t descriptor_mode, machine_id;
  bool code_objects; /* gpuperf_options.code_objects */
  bool source_level; /* gpuperf_options.source_level */
  bool options_given;
};

#endif /* GPUPERF_PERFETTO_TCONFIG_INT_H */
