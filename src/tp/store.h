/*
 * store.h - the imported trace, held in columnar arrays.
 *
 * The importer appends rows here; the SQL layer (vtab.c) presents them to
 * SQLite as virtual tables with Perfetto's names and columns. Keeping the
 * rows in plain arrays instead of SQLite B-trees is what makes importing
 * millions of events a second possible: a counter sample costs 20 bytes
 * (ts, track, value) and an API-call slice 40.
 *
 * Ids are row indices. Strings are string-pool ids (GP_TP_NONE = NULL).
 * Slices are appended in timestamp order, so slice.id and counter.id
 * follow ts, as in Perfetto.
 *
 * Arg sets. Args are grouped in sets, deduplicated by content like
 * Perfetto's (two identical sets share one id). Set ids [0, nsets) are
 * stored sets: set i is args[first[i] .. first[i+1]). Render-stage slices
 * have a further set each, numbered after the stored ones, whose args are
 * derived from the slice's GPU columns (context_id, render_target, ...)
 * around a stored set of its "extra" args (kernel, launch, extra_data):
 *
 *   arg_set_id                  args
 *   [0, nsets)                  stored args, in insertion order
 *   nsets + gpu ext row         render_stage_category?, extras, the 11
 *                               always-present render-stage args
 */
#ifndef GPUPERF_TP_STORE_H
#define GPUPERF_TP_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "tp/util.h"

/* Arg value types, in the spelling of Perfetto's args.value_type. */
enum {
  GP_TP_ARG_INT,
  GP_TP_ARG_UINT,
  GP_TP_ARG_STRING, /* value = string id, GP_TP_NONE for NULL */
  GP_TP_ARG_REAL,   /* value = the double's bits */
  GP_TP_ARG_POINTER,
  GP_TP_ARG_BOOL,
  GP_TP_ARG_JSON,
  GP_TP_ARG_NULL,
};

/* One arg: key (string id), flat key (key without [i] indices), value. */
typedef struct gp__tp_arg {
  uint32_t key;
  uint32_t flat_key;
  uint8_t type;
  int64_t value;
} gp__tp_arg;

/* What the tracing service (TraceStats) and traced_probes (FtraceStats)
 * wrote about their own work, as Perfetto names them (parse_stats.c).
 * "idx" marks the indexed ones: by buffer (traced_buf_*) or CPU
 * (ftrace_cpu_*); their rows with a NULL idx stay 0. */
#define GP_TP_STATS_TRACE(X)                                                   \
  X(traced_producers_connected, "info", "trace",                               \
    "Producers connected to the service when it wrote its stats")              \
  X(traced_producers_seen, "info", "trace",                                    \
    "Producers that ever connected to the service")                            \
  X(traced_data_sources_registered, "info", "trace",                           \
    "Data sources registered with the service")                                \
  X(traced_data_sources_seen, "info", "trace",                                 \
    "Data sources the service ever saw registered")                            \
  X(traced_tracing_sessions, "info", "trace",                                  \
    "Tracing sessions the service was running")                                \
  X(traced_total_buffers, "info", "trace",                                     \
    "Buffers the service held across its sessions")                            \
  X(traced_chunks_discarded, "info", "trace",                                  \
    "Chunks the service discarded (all buffers)")                              \
  X(traced_patches_discarded, "info", "trace",                                 \
    "Patches the service discarded (all buffers)")                             \
  X(traced_flushes_requested, "info", "trace",                                 \
    "Flushes the service asked for")                                           \
  X(traced_flushes_succeeded, "info", "trace",                                 \
    "Flushes every data source answered")                                      \
  X(traced_flushes_failed, "data_loss", "trace",                               \
    "Flushes some data source did not answer in time: data may be missing")    \
  X(traced_final_flush_succeeded, "info", "trace",                             \
    "The flush at the end of the trace succeeded")                             \
  X(traced_final_flush_failed, "data_loss", "trace",                           \
    "The flush at the end of the trace failed: its last data may be missing")  \
  X(filter_errors, "error", "trace", "Errors of the service's trace filter")   \
  X(filter_input_bytes, "info", "trace", "Bytes before the trace filter")      \
  X(filter_input_packets, "info", "trace", "Packets before the trace filter")  \
  X(filter_output_bytes, "info", "trace", "Bytes after the trace filter")      \
  X(filter_time_taken_ns, "info", "trace", "Time spent in the trace filter")   \
  X(traced_buf_buffer_size, "info", "trace", "Buffer size in bytes (idx)")     \
  X(traced_buf_bytes_written, "info", "trace", "Bytes written (idx: buffer)")  \
  X(traced_buf_bytes_overwritten, "info", "trace",                             \
    "Bytes overwritten before being read (idx: buffer)")                       \
  X(traced_buf_bytes_read, "info", "trace", "Bytes read (idx: buffer)")        \
  X(traced_buf_bytes_filtered_out, "info", "trace",                            \
    "Bytes the trace filter removed (idx: buffer)")                            \
  X(traced_buf_padding_bytes_written, "info", "trace",                         \
    "Padding bytes written (idx: buffer)")                                     \
  X(traced_buf_padding_bytes_cleared, "info", "trace",                         \
    "Padding bytes cleared (idx: buffer)")                                     \
  X(traced_buf_chunks_written, "info", "trace",                                \
    "Chunks written (idx: buffer)")                                            \
  X(traced_buf_chunks_rewritten, "info", "trace",                              \
    "Chunks rewritten in place (idx: buffer)")                                 \
  X(traced_buf_chunks_overwritten, "info", "trace",                            \
    "Chunks overwritten before being read (idx: buffer)")                      \
  X(traced_buf_chunks_discarded, "info", "trace",                              \
    "Chunks discarded, the buffer being full (idx: buffer)")                   \
  X(traced_buf_chunks_read, "info", "trace", "Chunks read (idx: buffer)")      \
  X(traced_buf_chunks_relocated, "info", "trace",                              \
    "Chunks moved to the write cursor (idx: buffer)")                          \
  X(traced_buf_chunks_committed_out_of_order, "info", "trace",                 \
    "Chunks committed out of order (idx: buffer)")                             \
  X(traced_buf_write_wrap_count, "info", "trace",                              \
    "Times the write cursor wrapped (idx: buffer)")                            \
  X(traced_buf_patches_succeeded, "info", "trace",                             \
    "Patches applied (idx: buffer)")                                           \
  X(traced_buf_patches_failed, "data_loss", "trace",                           \
    "Patches whose chunk was gone: data may be lost (idx: buffer)")            \
  X(traced_buf_readaheads_succeeded, "info", "trace",                          \
    "Read-aheads that succeeded (idx: buffer)")                                \
  X(traced_buf_readaheads_failed, "info", "trace",                             \
    "Read-aheads that failed (idx: buffer)")                                   \
  X(traced_buf_abi_violations, "data_loss", "trace",                           \
    "Chunks breaking the shared-memory ABI (idx: buffer)")                     \
  X(traced_buf_trace_writer_packet_loss, "data_loss", "trace",                 \
    "Packets the service saw lost in this buffer (idx: buffer)")               \
  X(traced_buf_sequence_packet_loss, "data_loss", "analysis",                  \
    "Packets marked previous_packet_dropped on the buffer's sequences "        \
    "(idx: buffer)")                                                           \
  X(traced_buf_incremental_sequences_dropped, "data_loss", "analysis",         \
    "Sequences of the buffer all of whose packets needing incremental "        \
    "state were dropped for want of it (idx: buffer)")                         \
  X(traced_buf_data_loss_read_gap, "data_loss", "trace",                       \
    "Sequence losses from a gap in chunk ids at read (idx: buffer)")           \
  X(traced_buf_data_loss_chunk_corrupted, "data_loss", "trace",                \
    "Sequence losses from chunks that did not decode (idx: buffer)")           \
  X(traced_buf_data_loss_orphan_continuation, "data_loss", "trace",            \
    "Sequence losses from a fragment without its beginning (idx: buffer)")     \
  X(traced_buf_data_loss_reassembly_gap, "data_loss", "trace",                 \
    "Sequence losses from a chunk id gap inside a fragmented packet "          \
    "(idx: buffer)")                                                           \
  X(traced_buf_data_loss_reassembly_broken_chain, "data_loss", "trace",        \
    "Sequence losses from a broken fragment chain (idx: buffer)")              \
  X(traced_buf_data_loss_overwrite, "data_loss", "trace",                      \
    "Sequence losses from unread chunks overwritten (idx: buffer)")            \
  X(traced_buf_data_loss_writer_abort, "data_loss", "trace",                   \
    "Sequence losses from a writer abandoning a fragmented packet "            \
    "(idx: buffer)")                                                           \
  X(traced_buf_data_loss_smb_full, "data_loss", "trace",                       \
    "Sequence losses from a full shared memory buffer (idx: buffer)")          \
  X(ftrace_cpu_bytes_begin, "info", "trace",                                   \
    "Kernel buffer bytes read, at "                                            \
    "the start (idx: CPU)")                                                    \
  X(ftrace_cpu_bytes_end, "info", "trace",                                     \
    "Kernel buffer bytes read, at the end (idx: CPU)")                         \
  X(ftrace_cpu_bytes_delta, "info", "trace",                                   \
    "Kernel buffer bytes read, end minus start (idx: CPU)")                    \
  X(ftrace_cpu_commit_overrun_begin, "info", "trace",                          \
    "Kernel buffer commit overruns, at the start (idx: CPU)")                  \
  X(ftrace_cpu_commit_overrun_end, "info", "trace",                            \
    "Kernel buffer commit overruns, at the end (idx: CPU)")                    \
  X(ftrace_cpu_commit_overrun_delta, "error", "trace",                         \
    "Kernel buffer commit overruns, end minus start: events lost (idx: CPU)")  \
  X(ftrace_cpu_dropped_events_begin, "info", "trace",                          \
    "Kernel buffer events dropped, at the start (idx: CPU)")                   \
  X(ftrace_cpu_dropped_events_end, "info", "trace",                            \
    "Kernel buffer events dropped, at the end (idx: CPU)")                     \
  X(ftrace_cpu_dropped_events_delta, "error", "trace",                         \
    "Kernel buffer events dropped, end minus start: events lost (idx: CPU)")   \
  X(ftrace_cpu_entries_begin, "info", "trace",                                 \
    "Events in the kernel buffer, at the start (idx: CPU)")                    \
  X(ftrace_cpu_entries_end, "info", "trace",                                   \
    "Events in the kernel buffer, at the end (idx: CPU)")                      \
  X(ftrace_cpu_entries_delta, "info", "trace",                                 \
    "Events in the kernel buffer, end minus start (idx: CPU)")                 \
  X(ftrace_cpu_now_ts_begin, "info", "trace",                                  \
    "Kernel buffer clock in ns, at the start (idx: CPU)")                      \
  X(ftrace_cpu_now_ts_end, "info", "trace",                                    \
    "Kernel buffer clock in ns, at the end (idx: CPU)")                        \
  X(ftrace_cpu_oldest_event_ts_begin, "info", "trace",                         \
    "Oldest event in the kernel buffer, ns, at the start (idx: CPU)")          \
  X(ftrace_cpu_oldest_event_ts_end, "info", "trace",                           \
    "Oldest event in the kernel buffer, ns, at the end (idx: CPU)")            \
  X(ftrace_cpu_overrun_begin, "info", "trace",                                 \
    "Kernel buffer overruns, at the start (idx: CPU)")                         \
  X(ftrace_cpu_overrun_end, "info", "trace",                                   \
    "Kernel buffer overruns, at the end (idx: CPU)")                           \
  X(ftrace_cpu_overrun_delta, "info", "trace",                                 \
    "Kernel buffer overruns, end minus start (idx: CPU)")                      \
  X(ftrace_cpu_read_events_begin, "info", "trace",                             \
    "Events read from the kernel buffer, at the start (idx: CPU)")             \
  X(ftrace_cpu_read_events_end, "info", "trace",                               \
    "Events read from the kernel buffer, at the end (idx: CPU)")               \
  X(ftrace_cpu_read_events_delta, "info", "trace",                             \
    "Events read from the kernel buffer, end minus start (idx: CPU)")          \
  X(ftrace_kprobe_hits_begin, "info", "trace", "kretprobe hits at the start")  \
  X(ftrace_kprobe_hits_end, "info", "trace", "kretprobe hits at the end")      \
  X(ftrace_kprobe_hits_delta, "info", "trace", "kretprobe hits while tracing") \
  X(ftrace_kprobe_misses_begin, "info", "trace",                               \
    "kretprobe misses at the start")                                           \
  X(ftrace_kprobe_misses_end, "info", "trace", "kretprobe misses at the end")  \
  X(ftrace_kprobe_misses_delta, "data_loss", "trace",                          \
    "kretprobe events missed while tracing")                                   \
  X(ftrace_setup_errors, "notice", "trace",                                    \
    "ftrace events or atrace categories that could not be enabled")            \
  X(ftrace_abi_errors_skipped_zero_data_length, "info", "analysis",            \
    "Zero-length kernel buffer records traced_probes skipped")

/* Stats: X(name, severity, source, description). */
#define GP_TP_STATS(X)                                                         \
  X(gpu_counters_invalid_spec, "error", "analysis",                            \
    "A GPU counter spec without id or name, a duplicate id, or a sample "      \
    "naming an id its interned descriptor does not define")                    \
  X(gpu_counters_missing_spec, "error", "analysis",                            \
    "A GPU counter sample whose descriptor could not be found")                \
  X(gpu_counters_missing_timestamp, "error", "trace",                          \
    "GPU counter samples in a packet without timestamp (dropped)")             \
  X(packet_skipped_seq_needs_incremental_state_invalid, "notice", "analysis",  \
    "Packets needing incremental state on a sequence whose state was not "     \
    "valid (dropped)")                                                         \
  X(interned_data_skipped_incremental_state_invalid, "notice", "analysis",     \
    "Interned data on a sequence whose state was not valid (ignored)")         \
  X(clock_sync_failure_undeferrable_packet_loss, "data_loss", "analysis",      \
    "Packets whose timestamp could not be converted to the trace clock "       \
    "(dropped)")                                                               \
  X(clock_snapshot_invalid, "error", "analysis",                               \
    "Clock snapshots that could not be used")                                  \
  X(sequence_previous_packet_dropped, "data_loss", "trace",                    \
    "Packets with previous_packet_dropped set: the producer lost data")        \
  X(track_event_parser_errors, "info", "analysis",                             \
    "Track events that could not be imported (unknown track uuid, ...)")       \
  X(track_event_track_hierarchy_loop, "error", "analysis",                     \
    "Track events dropped: their track is its own ancestor")                   \
  X(track_event_track_hierarchy_too_deep, "error", "analysis",                 \
    "Track events dropped: their track has more than 100 ancestors")           \
  X(track_hierarchy_missing_uuid, "info", "analysis",                          \
    "Track events dropped: an ancestor of their track was never described")    \
  X(track_event_tokenizer_errors, "info", "analysis",                          \
    "Track descriptors or events that could not be tokenized")                 \
  X(track_event_missing_timestamp, "error", "analysis",                        \
    "Track events in a packet without timestamp (dropped)")                    \
  X(track_event_invalid_timestamp, "error", "analysis",                        \
    "Track events at a negative time (dropped)")                               \
  X(track_event_missing_sequence_id, "error", "analysis",                      \
    "Track events in a packet without trusted_packet_sequence_id (dropped)")   \
  X(trace_sorter_negative_timestamp_dropped, "error", "trace",                 \
    "Packets other than track events at a negative time (dropped)")            \
  X(interned_data_tokenizer_errors, "info", "analysis",                        \
    "Interned entries without iid (ignored), and lookups of an interned "      \
    "entry that is not there")                                                 \
  X(misplaced_end_event, "data_loss", "analysis",                              \
    "Slice ends that did not match an open slice")                             \
  X(slice_drop_overlapping_complete_event, "error", "analysis",                \
    "Complete slices partially overlapping an open one (dropped)")             \
  X(slice_max_depth_exceeded, "error", "analysis",                             \
    "Slices nested deeper than 512 (dropped)")                                 \
  X(flow_invalid_id, "error", "trace",                                         \
    "Flow events whose other end never appeared")                              \
  X(vulkan_allocations_invalid_string_id, "error", "trace",                    \
    "Vulkan memory events naming an unknown interned string")                  \
  X(ftrace_bundle_tokenizer_errors, "error", "analysis",                       \
    "ftrace bundles without their CPU, events without their time (skipped)")   \
  X(task_state_invalid, "error", "analysis",                                   \
    "sched_switch prev_state values not valid on the trace's kernel")          \
  X(mismatched_sched_switch_tids, "error", "analysis",                         \
    "sched_switch events whose prev_pid is not the task the CPU's previous "   \
    "switch put there (the previous slice stays open)")                        \
  X(compact_sched_switch_skipped, "info", "analysis",                          \
    "First compact sched_switch of each CPU (only starts the chain)")          \
  X(compact_sched_waking_skipped, "info", "analysis",                          \
    "Compact sched_waking events before their CPU's first switch")             \
  X(compact_sched_has_parse_errors, "error", "trace",                          \
    "CompactSched bundles whose arrays did not decode whole")                  \
  X(ftrace_packet_before_tracing_start, "info", "analysis",                    \
    "ftrace events from before the service started tracing (dropped)")         \
  X(ftrace_cpu_has_data_loss, "data_loss", "trace",                            \
    "CPUs whose kernel buffer overwrote events between reads (idx: CPU)")      \
  GP_TP_STATS_TRACE(X)                                                         \
  X(proc_stat_unknown_counters, "error", "analysis",                           \
    "ProcessStats fields that are no known counter")                           \
  X(process_tracker_errors, "error", "analysis",                               \
    "Threads that two events placed in two different processes")               \
  X(packet_type_not_imported, "info", "analysis",                              \
    "Packets of a type this trace processor does not import (skipped)")        \
  X(trace_truncated_bytes, "data_loss", "trace",                               \
    "Bytes of an incomplete last packet ignored (--allow-truncated)")          \
  X(sorter_push_event_out_of_order, "error", "trace",                          \
    "Events that came, in a window of the service's reads, after events "      \
    "later than them (dropped)")                                               \
  X(config_write_into_file_discard, "data_loss", "trace",                      \
    "Buffers (idx) of a trace written into a file that discard when full")     \
  X(config_write_into_file_no_flush, "error", "trace",                         \
    "A trace written into a file without flush_period_ms, by a service "       \
    "older than v54 (or of no known version)")                                 \
  X(meminfo_unknown_keys, "error", "analysis",                                 \
    "SysStats meminfo values of a key this version does not know (skipped)")   \
  X(vmstat_unknown_keys, "error", "analysis",                                  \
    "SysStats vmstat values of a key this version does not know (skipped)")    \
  X(invalid_cpu_times, "error", "analysis",                                    \
    "SysStats CPU times without their CPU (skipped)")                          \
  X(psi_unknown_resource, "error", "analysis",                                 \
    "SysStats PSI samples of an unknown resource (the rest of the packet "     \
    "skipped)")                                                                \
  X(cpu_info_empty, "error", "analysis",                                       \
    "A CpuInfo packet without CPUs (/proc/cpuinfo unreadable where traced)")   \
  X(cpu_info_unknown_cpu_features, "info", "analysis",                         \
    "CpuInfo feature bits this version does not name (kept in "                \
    "cpu_features.raw_bitmap)")                                                \
  X(ftrace_missing_event_id, "info", "analysis",                               \
    "ftrace events without a payload, which names the event (dropped)")

enum {
#define GP_TP_STAT_ENUM(name, sev, src, desc) GP_TP_STAT_##name,
  GP_TP_STATS(GP_TP_STAT_ENUM)
#undef GP_TP_STAT_ENUM
      GP_TP_NSTATS
};

/* An indexed stat's value for one idx (the stats table's idx column). */
typedef struct gp__tp_istat {
  uint32_t stat;
  int64_t idx, value;
} gp__tp_istat;

typedef struct gp__tp_track {
  uint32_t name, type; /* strings */
  uint8_t is_counter;  /* event_type: 'counter' or 'slice' */
  uint32_t dims;       /* dimension arg set */
  uint32_t source;     /* source arg set */
  uint32_t parent;     /* track id */
  uint32_t machine;
  uint32_t group;                /* track_group_id (NONE: NULL) */
  uint32_t unit;                 /* counter_unit string */
  uint32_t description;          /* string, mirrors source arg 'description' */
  int64_t ugpu, gpu, upid, utid; /* -1 = NULL; mirror the dimensions */
} gp__tp_track;

typedef struct gp__tp_gpu {
  int64_t gpu; /* the gpu number */
  uint32_t name, vendor, model, architecture, uuid, pci_bdf; /* strings */
  uint32_t machine;
  uint32_t args; /* arg set */
} gp__tp_gpu;

typedef struct gp__tp_process {
  int64_t pid;
  uint32_t name, cmdline;   /* strings */
  int64_t start_ts, end_ts; /* INT64_MIN = NULL */
  uint32_t parent_upid;
  uint32_t machine;
  int64_t uid;   /* INT64_MIN = NULL */
  uint32_t args; /* arg set (is_kthread), NONE = NULL */
} gp__tp_process;

typedef struct gp__tp_thread {
  int64_t tid;
  uint32_t name;
  uint32_t upid; /* GP_TP_NONE if unknown */
  int64_t start_ts, end_ts;
  uint32_t machine;
  bool is_idle;   /* a machine's swapper (tid 0), as Perfetto marks it */
  int8_t is_main; /* is_main_thread: -1 NULL, 0, 1 */
} gp__tp_thread;

/* A sched slice: utid ran on a CPU from ts for dur (-1: until the end). */
typedef struct gp__tp_sched_slice {
  int64_t ts, dur;
  uint32_t utid;
  uint32_t end_state; /* string, NONE = NULL */
  uint32_t ucpu;
  int32_t priority;
} gp__tp_sched_slice;

/* A thread's state from ts for dur (-1: open). */
typedef struct gp__tp_thread_state {
  int64_t ts, dur;
  uint32_t utid;
  uint32_t state;      /* string: "Running", "R", "S", ...; NONE = NULL */
  uint32_t ucpu;       /* NONE = NULL */
  uint32_t waker_utid; /* NONE = NULL */
  uint32_t waker_id;   /* thread_state row of the waker, NONE = NULL */
  int8_t irq_context;  /* -1 = NULL */
} gp__tp_thread_state;

typedef struct gp__tp_counter_group {
  int64_t group_id;
  uint32_t track;
  uint32_t name, description;
} gp__tp_counter_group;

typedef struct gp__tp_gpu_context {
  uint64_t context_id;
  int64_t pid;
  uint32_t api; /* string */
} gp__tp_gpu_context;

typedef struct gp__tp_vk_alloc {
  int64_t ts;
  uint32_t source, operation, scope, function_name; /* strings */
  uint32_t upid;
  int64_t device, device_memory, memory_type, heap, object_handle,
      memory_address, memory_size; /* INT64_MIN = NULL */
  uint32_t args;
} gp__tp_vk_alloc;

typedef struct gp__tp_machine {
  int64_t raw_id;
  uint32_t uts[4]; /* SystemInfo.utsname: sysname, release, version, arch */
} gp__tp_machine;

/* The cpu rows of each machine (Perfetto's kMaxCpusPerMachine). */
#define GP_TP_CPUS_PER_MACHINE 4096u

/* A cpu row: whether the CPU was seen, and what CpuInfo said of it. */
typedef struct gp__tp_cpu {
  bool seen;
  uint32_t cluster;   /* cluster_id */
  uint32_t processor; /* string, NONE: NULL */
  int64_t capacity;   /* -1: NULL */
  uint32_t args;      /* arg set, NONE: NULL */
} gp__tp_cpu;

/* Kinds of rows in the GPU-slice extension table. */
enum { GP_TP_GEXT_RENDER_STAGE = 0, GP_TP_GEXT_OTHER = 1 };

/* The rarely-set string columns of render stages, stored sparsely. */
enum {
  GP_TP_RARE_RT_NAME,
  GP_TP_RARE_RP_NAME,
  GP_TP_RARE_CB_NAME,
  GP_TP_RARE_SUBPASSES,
};

typedef struct gp__tp_rare {
  uint32_t row;
  uint32_t col;
  uint32_t str;
} gp__tp_rare;

typedef struct gp__tp_db {
  gp__tp_strpool strings;

  /* Stored args and arg sets (dedup by content hash). */
  GP_TP_VEC(gp__tp_arg) args;
  GP_TP_VEC(uint32_t) set_first; /* nsets + 1 entries once sealed */
  gp__tp_map set_by_hash;        /* hash -> set id (+ chaining below) */
  GP_TP_VEC(uint32_t) set_next;  /* next set with the same hash */

  /* counter */
  GP_TP_VEC(int64_t) c_ts;
  GP_TP_VEC(uint32_t) c_track;
  GP_TP_VEC(double) c_value;
  gp__tp_map c_args; /* row -> arg set, for the few rows that have one */

  /* slice */
  GP_TP_VEC(int64_t) s_ts;
  GP_TP_VEC(int64_t) s_dur;
  GP_TP_VEC(uint32_t) s_track;
  GP_TP_VEC(uint32_t) s_cat;
  GP_TP_VEC(uint32_t) s_name;
  GP_TP_VEC(uint32_t) s_depth;
  GP_TP_VEC(uint32_t) s_parent;
  GP_TP_VEC(uint32_t) s_args; /* stored set (non render-stage slices) */
  GP_TP_VEC(uint32_t) s_gext; /* row in the GPU extension or NONE */

  /* GPU-slice extension: one row per slice on a GPU track. */
  GP_TP_VEC(uint32_t) g_slice;
  GP_TP_VEC(uint8_t) g_kind;
  GP_TP_VEC(uint32_t) g_ctx, g_rt, g_rp, g_cb, g_hwq; /* u64 dictionary */
  GP_TP_VEC(int64_t) g_sub;
  GP_TP_VEC(uint32_t) g_upid;
  GP_TP_VEC(int8_t) g_cat;       /* render_stage_category, -1 = absent */
  GP_TP_VEC(uint32_t) g_extra;   /* stored set of extra args */
  GP_TP_VEC(gp__tp_rare) g_rare; /* sorted by (row, col) */
  GP_TP_VEC(uint64_t) dict;
  gp__tp_map dict_map;
  /* Built at seal: first args row id of each render-stage set. */
  GP_TP_VEC(uint64_t) g_argrow;

  /* ftrace_event: one row per ftrace event (Perfetto's raw table), 26
   * bytes a row plus its args. */
  GP_TP_VEC(int64_t) fe_ts;
  GP_TP_VEC(uint32_t) fe_name;  /* string (NONE: NULL) */
  GP_TP_VEC(uint32_t) fe_utid;  /* thread */
  GP_TP_VEC(uint32_t) fe_args;  /* stored arg set (NONE: NULL) */
  GP_TP_VEC(uint32_t) fe_ucpu;  /* cpu row */
  GP_TP_VEC(uint16_t) fe_flags; /* common_flags */

  /* cpu: GP_TP_CPUS_PER_MACHINE rows per machine, as Perfetto's
   * CpuTracker preallocates them (ucpu = machine * that + cpu); a row is
   * shown (its cpu column set) once the CPU is seen. By ucpu, up to the
   * last one seen or described. */
  GP_TP_VEC(gp__tp_cpu) cpus;
  /* cpu_freq: the frequencies CpuInfo lists, by CPU. */
  GP_TP_VEC(uint32_t) cf_ucpu;
  GP_TP_VEC(uint32_t) cf_freq;

  /* flow */
  GP_TP_VEC(uint32_t) f_out;
  GP_TP_VEC(uint32_t) f_in;

  GP_TP_VEC(gp__tp_track) tracks;
  GP_TP_VEC(gp__tp_gpu) gpus;
  GP_TP_VEC(gp__tp_process) processes;
  GP_TP_VEC(gp__tp_thread) threads;
  GP_TP_VEC(gp__tp_counter_group) counter_groups;
  GP_TP_VEC(gp__tp_gpu_context) gpu_contexts;
  GP_TP_VEC(gp__tp_vk_alloc) vk_allocs;
  GP_TP_VEC(gp__tp_machine) machines;
  GP_TP_VEC(gp__tp_sched_slice) sched;
  GP_TP_VEC(gp__tp_thread_state) thread_states;
  int64_t stats[GP_TP_NSTATS];
  GP_TP_VEC(gp__tp_istat) istats; /* indexed stats: rows after stats[] */
  /* The stats with one value (not indexed): the stats table's first
   * rows, zero or not; an indexed stat has only its rows with an idx. */
  uint16_t single[GP_TP_NSTATS];
  uint32_t nsingle;

  /* Set by gp__tp_db_seal(). */
  bool sealed;
  int64_t start_ts, end_ts; /* trace bounds */
  uint64_t nargs_total;     /* stored + derived arg rows */

  /* Interned strings used everywhere. */
  uint32_t k_description, k_context_id, k_render_target, k_render_target_name,
      k_render_pass, k_render_pass_name, k_render_subpasses, k_command_buffer,
      k_command_buffer_name, k_submission_id, k_hw_queue_id, k_upid,
      k_render_stage_category, k_swapper;
} gp__tp_db;

/* Initialises an empty database with the host machine, the swapper
 * process/thread (upid 0, utid 0, the thread named "swapper" and idle, as
 * Perfetto's proto importer makes them) and the common strings. */
int gp__tp_db_init(gp__tp_db *db);

/* Frees everything (the struct itself is the caller's). */
void gp__tp_db_fini(gp__tp_db *db);

/*
 * Computes what queries need once import is over: trace bounds and the
 * args row ids of derived arg sets. Frees import-only indexes.
 */
int gp__tp_db_seal(gp__tp_db *db);

/* Number of arg sets (stored + derived). */
static inline uint64_t gp__tp_nsets(const gp__tp_db *db) {
  return (db->set_first.n ? db->set_first.n - 1 : 0) + db->g_slice.n;
}

/* ------------------------------------------------------------------ */
/* Building arg sets                                                     */

#define GP_TP_ARGS_MAX 256

/* Args being collected for one set (caller storage). */
typedef struct gp__tp_argb {
  uint32_t n;
  bool overflow; /* more than GP_TP_ARGS_MAX were added; extras ignored */
  gp__tp_arg a[GP_TP_ARGS_MAX];
} gp__tp_argb;

void gp__tp_argb_int(gp__tp_argb *b, uint32_t key, int64_t v);
void gp__tp_argb_uint(gp__tp_argb *b, uint32_t key, uint64_t v);
void gp__tp_argb_real(gp__tp_argb *b, uint32_t key, double v);
void gp__tp_argb_str(gp__tp_argb *b, uint32_t key, uint32_t str);
void gp__tp_argb_bool(gp__tp_argb *b, uint32_t key, bool v);
void gp__tp_argb_ptr(gp__tp_argb *b, uint32_t key, uint64_t v);
/* A key like "command_buffers[2]" whose flat key is "command_buffers". */
void gp__tp_argb_add(gp__tp_argb *b, uint32_t key, uint32_t flat_key,
                     uint8_t type, int64_t v);

/*
 * Stores the set (or finds an identical one) and returns its id in *out;
 * an empty builder gives GP_TP_NONE. 0 or GP_ENOMEM.
 */
int gp__tp_argset_commit(gp__tp_db *db, const gp__tp_argb *b, uint32_t *out);

/* Args of stored set `set`: *first, *n. */
void gp__tp_argset_range(const gp__tp_db *db, uint32_t set, uint32_t *first,
                         uint32_t *n);

/* Dictionary code of a 64-bit value (GPU handle columns); GP_TP_NONE on
 * memory failure. */
uint32_t gp__tp_dict(gp__tp_db *db, uint64_t v);

/* ------------------------------------------------------------------ */
/* Reading args back (stored and derived alike)                          */

/* Number of args in set `set` (any id below gp__tp_nsets). */
uint32_t gp__tp_set_size(const gp__tp_db *db, uint64_t set);

/* The i-th arg of set `set` (i < gp__tp_set_size). */
void gp__tp_set_arg(const gp__tp_db *db, uint64_t set, uint32_t i,
                    gp__tp_arg *out);

/* Finds key (string id) in set; returns false if absent. */
bool gp__tp_set_find(const gp__tp_db *db, uint64_t set, uint32_t key,
                     gp__tp_arg *out);

/* First args row id of set (rows of a set are consecutive). */
uint64_t gp__tp_set_first_row(const gp__tp_db *db, uint64_t set);

/* The set holding args row `row` (< nargs_total). */
uint64_t gp__tp_row_set(const gp__tp_db *db, uint64_t row);

/* The render-stage string column col (GP_TP_RARE_*) of GPU ext row. */
uint32_t gp__tp_rare_get(const gp__tp_db *db, uint32_t row, uint32_t col);

/* The arg set id a slice shows in slice.arg_set_id (NONE: NULL). */
uint64_t gp__tp_slice_argset(const gp__tp_db *db, uint32_t slice);

/* Stat names and metadata, indexed by GP_TP_STAT_*. */
extern const char *const gp__tp_stat_names[GP_TP_NSTATS];
extern const char *const gp__tp_stat_severity[GP_TP_NSTATS];
extern const char *const gp__tp_stat_source[GP_TP_NSTATS];
extern const char *const gp__tp_stat_desc[GP_TP_NSTATS];

/* Value type names ("int", "uint", ...), indexed by GP_TP_ARG_*. */
extern const char *const gp__tp_arg_type_names[8];

#endif /* GPUPERF_TP_STORE_H */
