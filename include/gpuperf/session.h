/*
 * gpuperf/session.h - tracing sessions: a trace config, a start, a stop,
 * and a Perfetto trace file in between.
 *
 * A session is a consumer of the activity stream (activity.h): it enables
 * the record kinds its config asks for, starts counter sampling on the
 * devices its config names, and writes every completed buffer as Perfetto
 * TracePackets of one packet sequence into its file as they come, flushed
 * at least every second (docs/trace-format.md says what is written). It
 * works beside the application's own buffer callbacks, which see the same
 * records.
 *
 * Configs are Perfetto TraceConfigs in the protobuf text format:
 *
 *   buffers { size_kb: 65536 }
 *   duration_ms: 10000
 *   data_sources { config { name: "gpu.renderstages" } }
 *   data_sources {
 *     config {
 *       name: "gpu.counters"
 *       gpu_counter_config {
 *         counter_period_ns: 1000000
 *         counter_names: "Utilization"
 *         counter_names: "sm__*"
 *       }
 *     }
 *   }
 *
 * Data sources: gpu.renderstages (GPU work, API calls, user ranges),
 * gpu.counters (counter samples), gpu.log (failed calls and dropped
 * records as log messages), each optionally with a vendor suffix
 * ("gpu.counters.nvidia": for counters, only the devices whose vendor, or
 * one word of it, is "nvidia", case-insensitively; a DRM card's vendor is
 * its driver's name; others write no counters; the same for
 * gpu.renderstages.nvidia and GPU work, API calls and user ranges staying
 * the process's; gp_session_warning() says when a suffix named no
 * device). gpuperf's own options
 * go in an extra top-level block that Perfetto's tools do not know:
 *
 *   gpuperf_options { counter_descriptor_mode: 1  machine_id: 7 }
 *
 * docs/trace-format.md lists every field accepted.
 *
 * Recording another program (the mechanism behind `gpuperf record`):
 * when a process loads libgpuperf.so with GPUPERF_RECORD_DIR set in its
 * environment, it starts a session as if by gp_session_start_from_env()
 * when it first does GPU work (its first simulator, OpenCL or CUDA call,
 * or user range), and stops it at exit; processes that never do (the
 * compilers and shells a program runs) leave no trace. Each recorded process
 * claims the file "<dir>/<N>.pftrace" for the smallest N >= 1 not yet
 * taken (N is its packet sequence id, so every process of a recording has
 * its own sequence), and a child made with fork() claims a new one in the
 * child; a program started with exec() loads the library again and does
 * the same. The files can be concatenated into one trace in any order.
 * Beside its file a process keeps "<N>.open" until its trace is finished
 * (left behind, it means the process was killed by SIGKILL) and leaves
 * "<N>.failed" (with the error) if its trace could not be written whole.
 * Such a session flushes every 5 ms unless the config says otherwise, and
 * is finished on exit(), _exit() and fatal signals too (docs/recording.md).
 * GPUPERF_RECORD_CONFIG names a config file (text format); without it the
 * default config is used. A program that links libgpuperf statically has
 * no constructor to run: it calls gp_session_start_from_env() itself.
 */
#ifndef GPUPERF_SESSION_H
#define GPUPERF_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/counters.h"
#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Trace configs                                                        */

typedef struct gp_trace_config gp_trace_config;

typedef enum gp_data_source_kind {
  GP_DATA_SOURCE_GPU_COUNTERS = 1,     /* gpu.counters[.vendor] */
  GP_DATA_SOURCE_GPU_RENDERSTAGES = 2, /* gpu.renderstages[.vendor] */
  GP_DATA_SOURCE_GPU_LOG = 3,          /* gpu.log[.vendor] */
  GP_DATA_SOURCE_VULKAN_MEMORY = 4,    /* vulkan.memory_tracker */
  GP_DATA_SOURCE_LINUX_FTRACE = 5      /* linux.ftrace: GPU events only */
} gp_data_source_kind;

/* Default sampling period of gpu.counters without counter_period_ns (and
 * without instrumented sampling). */
#define GP_DEFAULT_COUNTER_PERIOD_NS 1000000ull

/* One data source of a config. Pointers are owned by the config and live
 * until it is destroyed or changed. */
typedef struct gp_data_source_info {
  uint32_t kind; /* gp_data_source_kind */
  uint32_t target_buffer;
  const char *name;   /* as written, "gpu.counters.v3d" */
  const char *vendor; /* the suffix, "v3d"; "" if none */
  /* gpu.counters: what to sample, ready for gp_counters_start(). */
  gp_counter_config counters;
  /* fix_gpu_clock, full_loadstore and trace_metrics are refused by the
   * parser (no device gpuperf drives can honour them): always 0 here. */
  uint32_t fix_gpu_clock;
  /* gpu.renderstages */
  uint32_t full_loadstore;
  uint32_t
      low_overhead; /* GPU work on hardware queues only (no stream slices) */
  uint32_t num_trace_metrics;
  const char *const *trace_metrics; /* empty */
  /* vulkan.memory_tracker (vulkan_memory_config) */
  uint32_t track_driver_memory_usage; /* host allocations of the driver */
  uint32_t track_device_memory_usage; /* device memory, buffers, images */
  /* linux.ftrace (ftrace_config): the kernel's GPU trace events to read
   * from tracefs, bit e for gp_ftrace_event e (activity.h); the size of
   * each CPU's tracefs buffer in KiB (0: the kernel's); how often tracefs
   * is read, in ms (0: every 100 ms). */
  uint32_t ftrace_events;
  uint32_t ftrace_buffer_size_kb;
  uint32_t ftrace_drain_period_ms;
} gp_data_source_info;

typedef struct gp_trace_config_info {
  uint32_t num_data_sources;
  uint32_t num_buffers;
  uint64_t buffer_size_kb;          /* all buffers together, 0 if none given */
  uint32_t duration_ms;             /* 0: until stopped */
  uint32_t flush_period_ms;         /* 0: the default, 500 */
  uint32_t counter_descriptor_mode; /* 1 (inline) or 2 (interned, default) */
  uint32_t machine_id;              /* 0: none */
} gp_trace_config_info;

/*
 * Parses a TraceConfig in the protobuf text format (text need not be
 * NUL-terminated). On success stores a new config in *out. On error
 * returns GP_EPARSE (syntax, unknown field, value out of range, a config
 * gpuperf cannot record) with "line L, column C: what" written into err
 * (err_size bytes, may be 0), or GP_ENOMEM; *out is untouched.
 */
GP_EXPORT int gp_trace_config_parse(const char *text, size_t len,
                                    gp_trace_config **out, char *err,
                                    size_t err_size);

/* Stores in *out the default config: gpu.renderstages, gpu.counters
 * (the counters each device selects by default, every
 * GP_DEFAULT_COUNTER_PERIOD_NS), gpu.log and vulkan.memory_tracker
 * (device memory, buffers and images), in that order. */
GP_EXPORT int gp_trace_config_default(gp_trace_config **out);

/* The most counter_names or counter_ids one data source may list. */
#define GP_TRACE_CONFIG_MAX_COUNTERS 64

/*
 * Adds counters to sample, as `gpuperf record -e` does: names is a comma
 * list of counter names or globs ("Utilization,sm__*"), copied. Adds a
 * gpu.counters data source if there is none; otherwise extends the first
 * one (GP_EINVAL if it selects counters by id). GP_EINVAL for an empty
 * name, GP_ERANGE past GP_TRACE_CONFIG_MAX_COUNTERS names in the data
 * source. A failed call changes nothing.
 */
GP_EXPORT int gp_trace_config_add_counters(gp_trace_config *cfg,
                                           const char *names);

GP_EXPORT int gp_trace_config_get_info(const gp_trace_config *cfg,
                                       gp_trace_config_info *info);

/* Fills *info for data source index. GP_ENOENT past the last. */
GP_EXPORT int gp_trace_config_get_data_source(const gp_trace_config *cfg,
                                              uint32_t index,
                                              gp_data_source_info *info);

/*
 * Writes the config in the text format into buf (size bytes, NUL
 * included) and the length it needs (without the NUL) into *needed.
 * Returns GP_ESIZE, with nothing written, if buf is too small; parsing
 * the text gives back an equal config.
 */
GP_EXPORT int gp_trace_config_format(const gp_trace_config *cfg, char *buf,
                                     size_t size, size_t *needed);

/* Frees a config. NULL is accepted. */
GP_EXPORT void gp_trace_config_destroy(gp_trace_config *cfg);

/* ------------------------------------------------------------------ */
/* Sessions                                                             */

typedef struct gp_session gp_session;

/* Session flags. */
#define GP_SESSION_DETERMINISTIC (1u << 0) /* no pids, tids, real clocks */

typedef struct gp_session_options {
  uint32_t flags;       /* GP_SESSION_* */
  uint32_t sequence_id; /* packet sequence id, 1 .. 2^24-1; 0: 1 */
  int output_fd;        /* write here when path is NULL: a descriptor
                           above 0 (0 means unset), borrowed, not closed */
  uint32_t reserved0;   /* must be 0 */
  char *error;          /* if not NULL: why gp_session_start() failed */
  size_t error_size;
} gp_session_options;

/*
 * Starts a session writing to the file at path (copied), or, with path
 * NULL, to opts->output_fd. A regular file is written beside path, as
 * path.tmp-XXXXXX, and replaces path at gp_session_stop(): a session that
 * fails to start, or a process killed while recording, leaves a previous
 * file at path as it was. After a write error the trace written so far
 * (whole packets) still takes path's place and a previous file is kept as
 * path.old. A device or pipe at path is written directly, and so is a
 * writable file in a folder where no file can be created. cfg is copied;
 * opts may
 * be NULL. Starts counter sampling on the devices that exist now and on
 * those whose counter catalogs appear while the session runs. Returns
 * GP_EINVAL for bad arguments, -errno if the file cannot be opened,
 * GP_ENOCOUNTER if a counter name or id matches no device that has
 * counters, GP_ECAPACITY or GP_ENOTSUP (from gp_counters_start) if what is
 * asked for cannot be sampled; opts->error then says which. Nothing is
 * left running on error. A device that is sampling already (for another
 * session or the application) is not restarted: its samples, which every
 * observer sees, are recorded as they come.
 */
GP_EXPORT int gp_session_start(const gp_trace_config *cfg, const char *path,
                               const gp_session_options *opts,
                               gp_session **out);

/*
 * Stops a session: stops its counter sampling, delivers every record
 * (GPU work in flight included: a forced flush), writes the last packets,
 * closes its file and puts it in place (see gp_session_start()). Returns 0
 * or the first write error of the session, or -errno if the file could
 * not be put in place (it is then still at path.tmp-XXXXXX).
 * Stopping twice returns the same result.
 */
GP_EXPORT int gp_session_stop(gp_session *s);

/*
 * The directory where processes recording from the environment (`gpuperf
 * record`) publish live statistics for `gpuperf top`: $GPUPERF_LIVE_DIR,
 * else /tmp/gpuperf-live-<uid>. Writes it into buf; GP_EINVAL for a NULL
 * or empty buf, GP_ESIZE if it does not fit.
 */
GP_EXPORT int gp_live_dir(char *buf, size_t size);

typedef struct gp_session_stats {
  uint64_t records;         /* activity records written into the trace */
  uint64_t packets;         /* TracePackets written */
  uint64_t bytes;           /* bytes written */
  uint64_t render_stages;   /* GPU work events */
  uint64_t track_events;    /* slices, instants and counter values */
  uint64_t counter_events;  /* GPU counter sample packets */
  uint64_t dropped;         /* records lost before they reached the trace */
  uint64_t writer_ns;       /* CPU time the session spent writing */
  uint32_t counter_devices; /* devices sampling counters for the session */
  uint32_t sequence_id;
  int counter_error; /* why counters did not start somewhere, 0 if ok */
  uint32_t reserved0;
} gp_session_stats;

/* Fills *st (valid before and after stop). */
GP_EXPORT int gp_session_get_stats(const gp_session *s, gp_session_stats *st);

/*
 * After the stop: what the session has to tell the user about its config,
 * one line, or NULL if nothing: the gpu.counters and gpu.renderstages
 * data sources whose vendor suffix named no device (they recorded
 * nothing), or why counters were not sampled on a device. Owned by the session,
 * valid until it is destroyed. Sessions started from GPUPERF_RECORD_DIR also
 * print it on stderr.
 */
GP_EXPORT const char *gp_session_warning(const gp_session *s);

/* Stops the session if needed and frees it. NULL is accepted. */
GP_EXPORT void gp_session_destroy(gp_session *s);

/*
 * Starts the session GPUPERF_RECORD_DIR and GPUPERF_RECORD_CONFIG describe
 * (see the top of this file) and stores it in *out. Returns GP_ENOENT if
 * GPUPERF_RECORD_DIR is not set, GP_EPARSE for a bad config file, or what
 * gp_session_start() returns.
 */
GP_EXPORT int gp_session_start_from_env(gp_session **out);

/*
 * Finishes now, as at exit(), what `gpuperf record` or `gpuperf stat` do
 * in this process (the session started from GPUPERF_RECORD_DIR, the
 * totals of GPUPERF_STAT_DIR): for interposers of _exit(), abort() and
 * the like, which end a process without exit handlers. Does nothing
 * without them, after they finished, or in a vfork child.
 */
GP_EXPORT void gp_session_finish_recorded(void);

/*
 * For recorders: how many records the process of sequence seq in the
 * recording directory dir committed but never wrote to its part of the
 * trace, read from the "<seq>.open" note it left (it was killed by
 * SIGKILL, or still runs). Stores the count in *lost and the process id in
 * *pid. Returns -ENOENT if there is no note (the part was finished),
 * GP_ENOENT for a note without counts, GP_ERANGE if a thread of it had no
 * counter (*lost is then a lower bound), GP_ECORRUPT for an unreadable
 * note.
 */
GP_EXPORT int gp_record_lost_at_death(const char *dir, uint32_t seq,
                                      uint64_t *lost, int32_t *pid);

/*
 * For recorders: writes the records that the process of sequence seq in
 * the recording directory dir had committed but not written when it died
 * (killed by SIGKILL: its "<seq>.open" note is left, and the process is
 * gone) at the end of its part <dir>/<seq>.pftrace, read from the shared
 * memory the note holds, in a packet sequence of their own (2^22 + seq;
 * seq < 2^22), on the tracks of the same process. Where the process died
 * while writing records that are salvaged, the part is first cut back to
 * where they began. Counter samples are not salvaged (they stay counted
 * as lost). Stores the number of records written in *salvaged and notes
 * it in the note, so that gp_record_lost_at_death() no longer counts them;
 * a second call salvages nothing more. Call it only once the process has
 * ended. Returns 0, -ENOENT if there is no note, GP_ENOENT for a note
 * without salvageable records, GP_ECORRUPT for an unreadable or damaged
 * one (*salvaged: the records before the damage, which were written), or
 * -errno / a GP_E* code if the part could not be written (what was
 * written is then whole packets). Time and memory are linear in the note
 * whatever it holds.
 */
GP_EXPORT int gp_record_salvage(const char *dir, uint32_t seq,
                                uint64_t *salvaged);

/*
 * Appends to fd three packets that put lost, at time ts (trace clock), on
 * a counter track "gpuperf lost at process death" of process pid, in a
 * packet sequence of their own (2^23 + seq; seq < 2^23). lost
 * GP_RECORD_LOST_UNKNOWN says instead that records were lost and how many
 * is not known (a damaged note): 1 on a track "gpuperf lost at process
 * death, count unknown". Returns 0 or -errno.
 */
#define GP_RECORD_LOST_UNKNOWN UINT64_MAX
GP_EXPORT int gp_record_write_lost(int fd, uint32_t seq, int32_t pid,
                                   uint64_t ts, uint64_t lost);

/* ------------------------------------------------------------------ */
/* Perfetto producer                                                     */

/*
 * gpuperf as a producer of Perfetto's tracing service (docs/perfetto.md):
 * the process connects to the service's producer socket, registers
 * gpuperf's data sources, and from then on the service starts and stops
 * sessions in it whose packets go into the service's shared memory
 * instead of a file. A process with GPUPERF_PRODUCER=perfetto in its
 * environment does this by itself when it first does GPU work.
 */
typedef struct gp_producer_stats {
  uint32_t connected;  /* the socket is open and the service answers */
  uint32_t running;    /* data source instances running now */
  uint64_t started;    /* instances started so far */
  uint64_t flushes;    /* flush requests answered */
  uint64_t commits;    /* CommitData requests sent */
  uint64_t chunks;     /* chunks handed to the service */
  uint64_t packets;    /* packets written by instances that stopped */
  uint64_t bytes;      /* their bytes */
  uint64_t dropped;    /* packets dropped: the shared memory was full */
  uint64_t stalls;     /* times a writer found the shared memory full */
  uint64_t reconnects; /* times the service went away and was found again */
  uint64_t lost;       /* packets lost while no service was there */
} gp_producer_stats;

/* The producer socket: $PERFETTO_PRODUCER_SOCK_NAME, else
 * /run/perfetto/traced-producer.sock where /run/perfetto/ is usable, else
 * /tmp/perfetto-producer (Perfetto's own rule on Linux). A name that
 * starts with '@' is in Linux's abstract namespace. Borrowed. */
GP_EXPORT const char *gp_producer_socket(void);

/* Whether something listens on the producer socket: connects and closes
 * at once, sending nothing. Returns 0, -errno (-ENOENT: no such socket,
 * -ECONNREFUSED: nobody listens), or GP_EINVAL for a name too long. */
GP_EXPORT int gp_producer_probe(void);

/*
 * Connects this process to the tracing service as producer `name`
 * (copied), registers gpu.renderstages, gpu.counters,
 * gpu.counters.gpuperf, vulkan.memory_tracker and gpu.log, with the
 * counter catalogs of the devices present in the gpu.counters
 * descriptors, and returns once the service has started those that a
 * trace session running now enables. Until gp_producer_stop() (also run
 * at exit) the service drives this process's sessions; if it goes away,
 * the process connects again (from 100 ms to every 2 s) and registers
 * again, and what it lost meanwhile is counted (docs/perfetto.md). Returns 0,
 * GP_EBUSY if connected already, -errno if the socket cannot be reached,
 * GP_EIO if what answers is not a tracing service; err (if not NULL)
 * then says why. flags: GP_PRODUCER_*.
 */
#define GP_PRODUCER_QUIET (1u << 0)         /* no warnings on stderr later */
#define GP_PRODUCER_COUNTERS_ONLY (1u << 1) /* register the counters only */
GP_EXPORT int gp_producer_start(const char *name, uint32_t flags, char *err,
                                size_t err_size);

/* Stops every data source instance (their last packets committed and the
 * service told) and disconnects. Does nothing when not connected. */
GP_EXPORT void gp_producer_stop(void);

/* Fills *st. Returns GP_EINVAL if st is NULL. */
GP_EXPORT int gp_producer_get_stats(gp_producer_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_SESSION_H */
