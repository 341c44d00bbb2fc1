/*
 * writer.h - the Perfetto trace writer: a consumer of the activity stream.
 *
 * A writer turns completed activity buffers (it is fed by a tracing
 * session's buffer observer, on the collector thread) into TracePackets of
 * one packet sequence and hands the bytes to a sink: a file descriptor,
 * written after every buffer so that a recording killed at any moment
 * leaves a trace readable up to its last write, or a callback (tests,
 * benchmarks). docs/trace-format.md describes what is written, packet by
 * packet, and why; every function here is internal to libgpuperf.
 *
 * A writer is used by one thread at a time; the functions lock internally,
 * so the collector thread may feed it while another thread finishes it.
 */
#ifndef GPUPERF_PERFETTO_WRITER_H
#define GPUPERF_PERFETTO_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the bytes go. Returns 0, or a negative GP_E* code (the bytes are
 * then lost and the writer marks the loss in the next packet). */
typedef int (*gp__tw_sink_fn)(void *user, const uint8_t *data, size_t len);

/* The counter descriptor modes of Perfetto's GpuCounterEvent. */
#define GP_TW_DESCRIPTOR_INLINE 1   /* mode 1: descriptor in the event */
#define GP_TW_DESCRIPTOR_INTERNED 2 /* mode 2: InternedGpuCounterDescriptor */

/* The instant that names the host (debug annotations hostname, boot_id);
 * see writer_identity.c. */
#define GP_TW_HOST_EVENT "gpuperf host"

struct gp_device_info;
struct gp_device_queue_info;

/*
 * What records refer to, for a writer that encodes the records of another
 * process (one that died: session/session_lost.c salvages its records).
 * Without one, the writer asks this process's core. string() returns ""
 * for an id it does not know; intern() adds a string the writer needs
 * (stage names) and returns its id; the device functions return 0 or a
 * GP_E* code as gp_device_get_info() and gp_device_get_queue() do. Device
 * clock snapshots are not written for such a writer.
 */
typedef struct gp__tw_context {
  const char *(*string)(void *user, uint32_t id);
  uint32_t (*intern)(void *user, const char *s, size_t len);
  uint32_t (*device_count)(void *user);
  int (*device_info)(void *user, uint32_t device_id,
                     struct gp_device_info *info);
  int (*device_queue)(void *user, uint32_t device_id, uint32_t queue,
                      struct gp_device_queue_info *q);
  void *user;
  const char *process_name; /* of the process written */
} gp__tw_context;

typedef struct gp__tw_options {
  uint32_t sequence_id;     /* trusted_packet_sequence_id, 1 .. 2^24-1 */
  uint32_t machine_id;      /* written on every packet when not 0 */
  uint32_t descriptor_mode; /* GP_TW_DESCRIPTOR_*, 0 = interned */
  bool deterministic;       /* no real-time values, pids or tids (see docs) */
  bool render_stages;       /* GPU work, API calls, user ranges */
  bool stream_slices;       /* GPU work also on the process's stream tracks
                               (of the devices whose gpu.renderstages data
                               source is not low_overhead: sources_cfg) */
  bool work_by_vendor;      /* a gpu.renderstages data source of sources_cfg
                               has a vendor suffix: whose GPU work is
                               written, and with stream slices, is decided
                               per device (false: the same for all) */
  bool counters;            /* COUNTER records */
  bool code_objects;        /* MODULE, FUNCTION, DEVICE_ATTRIBUTE records
                               (gpuperf_options.code_objects) */
  bool source_level;        /* SOURCE_LOCATOR, GLOBAL_ACCESS, SHARED_ACCESS,
                               BRANCH, INSTRUCTION_EXECUTION records
                               (gpuperf_options.source_level) */
  bool gpu_log;             /* failed calls and drops as GpuLog packets */
  bool vk_device_memory;    /* VulkanMemoryEvent: device memory, objects */
  bool vk_driver_memory;    /* VulkanMemoryEvent: the driver's host memory */
  bool host_identity;       /* SystemInfo and the "gpuperf host" event */
  bool service_sequenced;   /* a Perfetto service stamps each packet's
                               sequence (and machine): neither
                               trusted_packet_sequence_id nor machine_id
                               is written; sequence_id still makes track
                               uuids unique */
  int fd;                   /* output file, or -1 to use sink */
  gp__tw_sink_fn sink;      /* used when fd < 0; NULL discards */
  void *sink_user;
  /* Called, when not NULL, after the bytes of one flush went to the sink;
   * a negative return says some were lost (the next packets then start
   * the incremental state over and mark the loss). */
  int (*sink_flushed)(void *user);
  const gp__tw_context *ctx; /* NULL: this process (borrowed for the
                                writer's life) */
  uint32_t pid;              /* the process written, 0: this one */
  /* When not NULL (borrowed for the writer's life), the config whose data
   * sources apply to devices by vendor suffix (tconfig.h): the COUNTER
   * and ENVIRONMENT records of a device no gpu.counters data source of it
   * applies to are left out, and so is the GPU work (kernels, copies,
   * fills, render stages) of a device no gpu.renderstages data source
   * applies to; the one that does decides on its stream slices
   * (low_overhead). */
  const struct gp_trace_config *sources_cfg;
} gp__tw_options;

/* What a writer did, for summaries, tests and the benchmark. */
typedef struct gp__tw_stats {
  uint64_t records;        /* activity records consumed */
  uint64_t packets;        /* TracePackets written */
  uint64_t bytes;          /* bytes handed to the sink */
  uint64_t render_stages;  /* gpu_render_stage_event packets */
  uint64_t track_events;   /* track_event packets */
  uint64_t counter_events; /* gpu_counter_event packets */
  uint64_t dropped;        /* activity records reported dropped */
  uint64_t untimed;        /* GPU work without start/end: not drawn */
  uint64_t sink_errors;    /* writes that failed (their bytes were lost) */
  uint64_t clock_lost;     /* device clock snapshots the clocks dropped */
  uint64_t writer_ns;      /* CPU time spent encoding and writing */
  int first_error;         /* first sink error, 0 if none */
} gp__tw_stats;

typedef struct gp__tw gp__tw;

/*
 * Creates a writer. opts is copied. Writes nothing until the first
 * gp__tw_consume() or gp__tw_finish(). Returns GP_EINVAL for a bad
 * sequence id or descriptor mode, GP_ENOSPC when 16 writers of this
 * process's records exist (each reads the device clocks' snapshots with
 * a consumer of its own, core.h), GP_ENOMEM.
 */
int gp__tw_create(const gp__tw_options *opts, gp__tw **out);

/* Frees a writer (does not close its fd). NULL is accepted. */
void gp__tw_destroy(gp__tw *w);

/*
 * Tells the writer which counters of a device are sampled, periodically
 * and/or per activity, so that one counter descriptor covers them all.
 * ids is copied. Counters seen later in records are added as they come.
 */
int gp__tw_select_counters(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                           size_t n, bool periodic, bool instrumented);

/*
 * In counter descriptor mode 1, where counter ids are global to a trace:
 * whether one of ids[0..n) is already the id of a counter of another
 * device than device_id. Returns 0 (none, or mode 2), or GP_EEXIST with
 * the id in *id and that device in *other.
 */
int gp__tw_counter_id_taken(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                            size_t n, uint32_t *id, uint32_t *other);

/*
 * Encodes the records of one completed buffer and writes the packets to
 * the sink. Malformed buffers are encoded up to the first bad record.
 */
void gp__tw_consume(gp__tw *w, const uint8_t *buffer, size_t valid_size);

/*
 * Writes the final packets (clock snapshots, drop and overhead counters)
 * and flushes. Returns 0 or the first sink error of the writer's life.
 * Later consume calls are ignored.
 */
int gp__tw_finish(gp__tw *w);

/* Starts the incremental state over (Perfetto's ClearIncrementalState):
 * the next packet is marked SEQ_INCREMENTAL_STATE_CLEARED and interned
 * data is emitted again. */
void gp__tw_clear_incremental(gp__tw *w);

/* A counter of the process itself (the host CPU's perf_event counters a
 * session samples in it), written as a counter track under the process's
 * track: one TrackDescriptor with a CounterDescriptor the first time a
 * key is seen, then one TYPE_COUNTER TrackEvent per value. */
typedef struct gp__tw_process_counter {
  uint32_t key;     /* < 64: the same key, the same track */
  const char *name; /* the track's name (borrowed for the call) */
  bool time_ns;     /* the unit: nanoseconds, else a count */
  int64_t value;
} gp__tw_process_counter;

/* Writes n values of process counters taken at ts (trace clock) and
 * flushes. Returns GP_EINVAL (nothing written) for a key past 63, 0
 * otherwise; after gp__tw_finish() nothing is written. */
int gp__tw_process_counters(gp__tw *w, uint64_t ts,
                            const gp__tw_process_counter *c, size_t n);

/* Copies the statistics into *st. */
void gp__tw_get_stats(gp__tw *w, gp__tw_stats *st);

#endif /* GPUPERF_PERFETTO_WRITER_H */
