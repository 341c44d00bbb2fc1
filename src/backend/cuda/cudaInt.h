/*
 * cudaInt.h - what the modules of the CUPTI collector share.
 *
 * The collector (libgpuperf-cuda.so) is built only where the CUDA toolkit
 * is found. Its parts:
 *
 *   ids.c        CUPTI device and context ids -> ours; the CUPTI clock
 *   translate.c  one CUPTI activity record -> our records
 *   names.c      API function names, demangled kernel names
 *   deps.c       stream/event bookkeeping -> wait ids of GPU work
 *   buffers.c    the buffer pool CUPTI fills; completion; dropped counts
 *   callbacks.c  CUPTI callbacks: API calls, resources, NVTX ranges
 *   collector.c  start and stop, InitializeInjection(Nvtx2), the driver
 *   metrics.c    metric catalogs of the Profiler Host API (offline)
 *   profiler.c   range profiler and PM sampling at run time
 *   envconfig.c  counters asked for in the environment
 *   provider.c   CUDA devices' counter catalogs in the counters API
 *   coreops.c    the core and counters of the process's one libgpuperf
 *
 * Everything here is internal (hidden). State is process-wide: there is
 * one CUPTI per process.
 */
#ifndef GPUPERF_CUDA_INT_H
#define GPUPERF_CUDA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "core/backend.h"
#include "counters/backend.h"
#include "gpuperf/cuda.h"

/* ---- coreops.c ---- */

/*
 * The producer functions of the core and of the counters (core.h,
 * countersInt.h) reach libgpuperf.so through these copies of its backend
 * tables, loaded at load time; tables that record nothing where the
 * libgpuperf is of another build. Call them as GP_CORE->activity_reserve(
 * ...), GP_COUNTERS->counter_emit(...).
 */
extern gp_backend_ops gp__cuda_core;
extern gp_counters_backend_ops gp__cuda_counters;
#define GP_CORE (&gp__cuda_core)
#define GP_COUNTERS (&gp__cuda_counters)

/* ---- ids.c ---- */

/*
 * Returns our device id for a CUPTI device id, registering a device
 * described only by its number if CUPTI never described it (records can
 * arrive before the DEVICE record). UINT32_MAX if registration fails.
 */
uint32_t gp__cuda_device(uint32_t cupti_device);

/*
 * Registers (or returns) our device for CUPTI device `cupti_device` with
 * the description in info (copied). If the device was registered from its
 * number alone, the earlier id stays. Stores the id in *device_id.
 */
int gp__cuda_device_describe(uint32_t cupti_device, const gp_device_info *info,
                             uint32_t *device_id);

/* The CUPTI ordinal of our device id, or UINT32_MAX if it is not CUDA's. */
uint32_t gp__cuda_device_ordinal(uint32_t device_id);

/* True if cupti_device is known (described or referenced). */
bool gp__cuda_device_known(uint32_t cupti_device);

/*
 * Returns our context id for a CUPTI context id on a CUPTI device,
 * registering it on first sight; 0 if cupti_context is 0 or registration
 * fails. default_stream is remembered from the first registration.
 */
uint32_t gp__cuda_context(uint32_t cupti_context, uint32_t cupti_device,
                          uint32_t default_stream);

/* The CUPTI device of a known CUPTI context, or UINT32_MAX. */
uint32_t gp__cuda_context_device(uint32_t cupti_context);

/* Marks a CUPTI context gone (our context is unregistered). */
void gp__cuda_context_gone(uint32_t cupti_context);

/*
 * The clock of CUPTI timestamps, registered on first use as "cupti" with
 * cuptiGetTimestamp() as its read function, with a first snapshot taken.
 * Returns 0 if registration failed.
 */
uint32_t gp__cuda_clock(void);

/*
 * Takes a snapshot of the CUPTI clock if the last one is older than
 * min_interval_ns (0: always). Returns 0 or the error of the snapshot.
 */
int gp__cuda_clock_refresh(uint64_t min_interval_ns);

/* Converts a CUPTI timestamp to the trace clock; 0 stays 0 (unknown). */
uint64_t gp__cuda_ts(uint64_t cupti_ts);

/*
 * Between begin and end, gp__cuda_ts() on this thread maps through a
 * copy of the snapshots taken at begin (no lock per timestamp; the same
 * result as gp_clock_to_trace() with those snapshots). Used around the
 * translation of one buffer.
 */
void gp__cuda_ts_begin(void);
void gp__cuda_ts_end(void);

/* Forgets the context mappings (devices stay registered for good). */
void gp__cuda_ids_reset(void);

/* ---- names.c ---- */

/*
 * The name of an API function without its version suffix
 * ("cudaLaunchKernel" for cudaLaunchKernel_v7000), interned; 0 if CUPTI
 * does not know the cbid.
 */
uint32_t gp__cuda_api_name(uint32_t domain, uint32_t cbid);

/* Returns the demangled form of a mangled name, interned; 0 if it is not
 * a mangled name or no demangler is available. */
uint32_t gp__cuda_demangle(const char *mangled);

/* A kernel's name and demangled name as string ids (0 for NULL), through
 * a per-thread cache keyed by CUPTI's name pointer and checked against
 * the string. */
void gp__cuda_kernel_names(const char *name, uint32_t *id, uint32_t *dem);

/* ---- translate.c ---- */

/* What a translated buffer contained. */
typedef struct gp__cuda_xlate_stats {
  uint64_t records;    /* CUPTI records seen */
  uint64_t translated; /* that produced (or updated) something of ours */
  uint64_t disabled;   /* of a kind we translate, but not enabled */
  uint64_t unknown;    /* of a kind we do not translate */
  uint64_t dropped;    /* ours that could not be written */
} gp__cuda_xlate_stats;

/*
 * Translates one CUPTI record into ours (or into a device/context
 * registration). Returns 0 if something was produced, GP_EKIND for a kind
 * we do not translate, GP_ENOENT if the matching kind of ours is disabled,
 * GP_ENOSPC if our record was dropped (counted by the core), GP_EINVAL for
 * NULL. Strings are interned before the function returns: CUPTI's
 * pointers are never kept.
 */
int gp__cuda_translate(const CUpti_Activity *record);

/* ---- boost.c ---- */

/* Notes handle as our context context_id of our device device_id, for
 * the auto boost query (and makes the device answer it), or with handle
 * NULL forgets the context. */
void gp__cuda_boost_context(uint32_t context_id, uint32_t device_id,
                            CUcontext handle);

/* ---- translate_dp.c ---- */

/* CUPTI's CDP kernel, preemption and unified memory counter records into
 * ours: 0, GP_ENOENT (the kind is not enabled), GP_ENOSPC (no room),
 * GP_EKIND (a counter kind we do not know), as gp__cuda_translate. */
int gp__cuda_cdp_kernel(const CUpti_ActivityCdpKernel *c);
int gp__cuda_preemption(const CUpti_ActivityPreemption *p);
int gp__cuda_um_counter(const CUpti_ActivityUnifiedMemoryCounter3 *u);
/* ---- translate_source.c ---- */

/* gp__cuda_translate() for CUPTI's source-level kinds (SOURCE_LOCATOR,
 * GLOBAL_ACCESS, SHARED_ACCESS, BRANCH, INSTRUCTION_EXECUTION); GP_EKIND
 * for any other kind. */
int gp__cuda_translate_source(const CUpti_Activity *record);

/* Our kind for one of those CUPTI kinds, GP_ACTIVITY_KIND_INVALID else. */
uint32_t gp__cuda_source_kind_map(uint32_t cupti_kind);

/*
 * Asks CUPTI for the source-level kinds whose kind of ours is enabled
 * (at the collector's start). A kind CUPTI refuses (CUDA 13 removed them)
 * is said once per process on stderr; the session goes on without it.
 * Returns the refused ones as bits, in the order of the list above.
 */
uint32_t gp__cuda_source_enable(void);

/* Gives back to CUPTI the kinds gp__cuda_source_enable() got. */
void gp__cuda_source_disable(void);

/*
 * Translates every record of a CUPTI buffer (valid_size bytes), walking it
 * with cuptiActivityGetNextRecord(). Adds to *stats if not NULL. Returns 0,
 * or GP_ECORRUPT if CUPTI could not walk the buffer to its end.
 */
int gp__cuda_translate_buffer(const uint8_t *buffer, size_t valid_size,
                              gp__cuda_xlate_stats *stats);

/* ---- translate_events.c ---- */

/* gp__cuda_translate() of CUPTI's EVENT, EVENT_INSTANCE, METRIC and
 * METRIC_INSTANCE records (its returns); GP_EKIND for other kinds. */
int gp__cuda_translate_events(const CUpti_Activity *record);

/*
 * Writes the METRIC record of one value the collector measured over one
 * kernel (the range profiler's): counter info of device device_id, value,
 * the kernel's [start, end) in trace time and its correlation id. A
 * value that is not a number is flagged METRIC_VALUE_INVALID. Returns 0,
 * GP_ENOENT if METRIC is disabled, GP_ENOSPC if the record was dropped.
 */
int gp__cuda_metric_record(uint32_t device_id, const gp_counter_info *info,
                           double value, uint64_t start, uint64_t end,
                           uint64_t correlation_id);

/* The gp_activity_kind a CUPTI kind becomes, 0 for none. */
uint32_t gp__cuda_kind_map(uint32_t cupti_kind);

/* Forgets marker nesting state (for tests). */
void gp__cuda_translate_reset(void);

/* ---- deps.c ---- */

/*
 * The dependency bookkeeping, fed from API callbacks with the program's
 * own handles (streams and events are opaque pointers; NULL is the legacy
 * default stream). Wait ids are correlation ids of GPU work.
 */

/* GPU work with correlation id corr was launched on stream. */
void gp__cuda_deps_launch(const void *stream, uint32_t corr);

/* The same work is also known under another correlation id (a driver
 * call nested in a runtime call). */
void gp__cuda_deps_alias(uint32_t corr, uint32_t alias);

/* An event was recorded on a stream: it stands for the stream's last
 * work. */
void gp__cuda_deps_event_record(const void *event, const void *stream);

/* A stream was made to wait for an event. */
void gp__cuda_deps_stream_wait(const void *stream, const void *event);

/*
 * A synchronizing call with correlation id corr waits: for an event's work
 * (GP_SYNC_EVENT_SYNCHRONIZE, GP_SYNC_STREAM_WAIT_EVENT: handle is the
 * event), a stream's last work (GP_SYNC_STREAM_SYNCHRONIZE), or the last
 * work launched anywhere (GP_SYNC_CONTEXT_SYNCHRONIZE, handle unused).
 */
void gp__cuda_deps_sync(uint32_t corr, int what, const void *handle);

/* A stream or event was destroyed: forget it. */
void gp__cuda_deps_forget(const void *handle);

/*
 * Takes the wait ids recorded for the work with correlation id corr: up
 * to cap are copied into ids; returns their number (0 if none). The entry
 * is removed.
 */
uint32_t gp__cuda_deps_take(uint32_t corr, uint64_t *ids, uint32_t cap);

/* Entries of wait ids not yet taken. */
size_t gp__cuda_deps_pending(void);

/* Forgets everything (tests, stop). */
void gp__cuda_deps_reset(void);

/* Most wait ids kept for one piece of work. */
#define GP_CUDA_MAX_WAITS 8

/* ---- buffers.c ---- */

/* CUPTI's buffer callbacks, registered by collector.c. */
void CUPTIAPI gp__cuda_buffer_request(uint8_t **buffer, size_t *size,
                                      size_t *max_num_records);
void CUPTIAPI gp__cuda_buffer_complete(CUcontext ctx, uint32_t stream_id,
                                       uint8_t *buffer, size_t size,
                                       size_t valid_size);

/*
 * Hands the collector size bytes of CUPTI activity records (CUPTI's own
 * record layouts, one after the other, as in a buffer CUPTI fills) as if
 * CUPTI had completed a buffer holding them: they are copied into a buffer
 * of the pool and go through gp__cuda_buffer_complete(), walked by
 * libcupti's cuptiActivityGetNextRecord() and translated. The process
 * joins its recording first (its first GPU work). Returns 0, GP_EINVAL for
 * NULL records, GP_ENOMEM when no buffer is free, GP_ESIZE past the pool's
 * buffer size. Not a public API: exported so that a test program can drive
 * the injected library, the library a real process gets, where there is
 * no GPU to make CUPTI produce records (tests/cuda/mixed_app.c).
 */
GP_EXPORT int gp__cuda_replay(const void *records, size_t size);

/*
 * Sets the size of the buffers handed to CUPTI and how many may be out at
 * once. GP_ERANGE outside [64 KiB, 1 GiB] or for a limit of 0; GP_EBUSY
 * while buffers are out. Defaults: 8 MiB, 16.
 */
int gp__cuda_buffers_configure(size_t size, size_t limit);

/* Counters of the pool and of translation so far. */
typedef struct gp__cuda_buffer_stats {
  uint64_t requested, declined, completed, bytes;
  uint64_t cupti_dropped; /* records CUPTI reported dropped */
  size_t outstanding;
  gp__cuda_xlate_stats xlate;
} gp__cuda_buffer_stats;
void gp__cuda_buffers_stats(gp__cuda_buffer_stats *out);

/*
 * Carries records CUPTI dropped into our accounting: counted as dropped
 * for kind INVALID (CUPTI does not say which kinds) with reason
 * GP_DROP_SOURCE, against our context of cupti_context if it is known.
 */
void gp__cuda_carry_drops(uint32_t cupti_context, uint32_t stream_id,
                          size_t count);

/* Frees the pool's idle buffers. */
void gp__cuda_buffers_release(void);

/* ---- callbacks.c ---- */

/* The subscriber callback for every domain we enable. */
void CUPTIAPI gp__cuda_callback(void *userdata, CUpti_CallbackDomain domain,
                                CUpti_CallbackId cbid, const void *cbdata);

/* Forgets NVTX handle state (tests, stop). */
void gp__cuda_callbacks_reset(void);

/* ---- collector.c ---- */

/* The detail of the last failed start, "" if none. */
const char *gp__cuda_status(void);

/* Records a CUPTI error: "what: CUPTI_ERROR_... (n)" into the status. */
int gp__cuda_cupti_error(const char *what, CUptiResult rc);

/* Describes CUPTI device `ordinal` from the driver, if not yet known. */
void gp__cuda_describe_device(uint32_t ordinal);

/* Puts why into the status and returns GP_ENOTSUP. */
int gp__cuda_refuse(const char *why);

/* True while collection runs. */
bool gp__cuda_running(void);

/* ---- metrics.c ---- */

/* GP_ENOTSUP (with the reason in the status) in an AddressSanitizer
 * build, where libcupti's profiling libraries cannot be loaded; else 0. */
int gp__cuda_sanitizer_refuses(void);

/* A Profiler Host API object configured with a set of full metric names:
 * its configuration image, and the evaluation of counter data. */
typedef struct gp__cuda_host gp__cuda_host;

/*
 * Opens a host object for chip and profiler (with the device's counter
 * availability image, or NULL offline) and configures it with names
 * (copied). GP_ENODEV for an unknown chip; GP_ENOCOUNTER if CUPTI refuses
 * a name, whose index goes to *bad. *out is set only on success.
 */
int gp__cuda_host_open(const char *chip, uint32_t profiler,
                       const uint8_t *availability, const char *const *names,
                       size_t num_names, gp__cuda_host **out, size_t *bad);

/* The configuration image (owned by h) and the passes it takes. */
const uint8_t *gp__cuda_host_config(const gp__cuda_host *h, size_t *size,
                                    size_t *passes);

/* The configured names, in order. */
const char *const *gp__cuda_host_names(const gp__cuda_host *h, size_t *n);

/* Evaluates range or sample `index` of a counter data image into values
 * (one per configured name). */
int gp__cuda_host_evaluate(gp__cuda_host *h, const uint8_t *data, size_t size,
                           size_t index, double *values);

void gp__cuda_host_close(gp__cuda_host *h);

/* ---- profiler.c ---- */

/* Where sampled values go: metric is the index into the configured
 * metrics; correlation_id is the launch's for per-kernel values, 0 for
 * periodic ones. */
typedef void (*gp__cuda_emit_fn)(void *user, uint32_t cupti_device,
                                 size_t metric, double value,
                                 uint64_t timestamp, uint64_t window_start,
                                 uint64_t correlation_id);

/* Whether a kernel launched now (on the calling thread) is measured. */
typedef bool (*gp__cuda_want_fn)(void *user, const char *mangled,
                                 const char *demangled);

/* What to sample on one device. */
typedef struct gp__cuda_sampling {
  const char *const *metrics; /* full names, copied */
  size_t num_metrics;
  bool instrumented;     /* per kernel, with the range profiler */
  uint64_t period_ns;    /* > 0: periodic, with PM sampling */
  gp__cuda_want_fn want; /* NULL: every kernel */
  gp__cuda_emit_fn emit;
  void *user; /* for want and emit; kept until stopped */
} gp__cuda_sampling;

/*
 * Starts sampling on CUPTI device `cupti_device` (the device must be
 * present). Per-kernel sampling is set up lazily, per context, at the
 * first kernel it measures; PM sampling at once. GP_EBUSY if the device
 * samples already, GP_EINVAL for a bad config, or the error of the PM
 * setup (GP_ENOCOUNTER for a metric PM sampling cannot read, the reason
 * in gp_cuda_status()). Nothing starts on error.
 */
int gp__cuda_sampling_start(uint32_t cupti_device,
                            const gp__cuda_sampling *cfg);

/* Stops sampling on a device, writing out what is pending first. */
void gp__cuda_sampling_stop(uint32_t cupti_device);

/* Stops every device's sampling and frees the state. */
void gp__cuda_profiler_stop(void);

/* Called at a kernel launch (API enter and exit) with the function's
 * name, on the launching thread. */
void gp__cuda_profiler_launch(CUcontext ctx, const char *name, uint32_t corr,
                              bool enter);

/* Called when a context is created or about to be destroyed. */
void gp__cuda_profiler_context(CUcontext ctx, bool created);

/* A DEVICE_ATTRIBUTE record of CUdevice attribute cu_attribute of CUPTI
 * device cupti_device, flagged GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE:
 * ours (the collector asked the driver) or CUPTI's record. Once ours were
 * written for a device, CUPTI's for it are not (GP_EEXIST). GP_ENOENT when
 * the kind is off. */
int gp__cuda_attribute_record(uint32_t cupti_device, uint32_t cu_attribute,
                              int64_t value, bool ours);

/* The host time a measured launch of correlation id corr began (put by
 * the profiler), taken once by its kernel record: 0 if not known. */
void gp__cuda_launch_time_put(uint32_t corr, uint64_t t0);
uint64_t gp__cuda_launch_time_take(uint32_t corr);

/* Writes out what is pending (flush; final: PM sampling too). */
void gp__cuda_profiler_flush(bool final);

/* ---- envconfig.c ---- */

/*
 * Reads the counter configuration of the environment (GPUPERF_CUDA_*),
 * at start. Returns GP_ENOTSUP for a malformed one (the reason in the
 * status); 0 otherwise, also when there is none.
 */
int gp__cuda_profiler_start(void);

/* A device appeared (described from the driver): the environment's
 * configuration, if any, starts on it. */
void gp__cuda_profiler_device(uint32_t cupti_device);

/* Forgets the environment's configuration (stop). */
void gp__cuda_env_stop(void);

/* ---- provider.c ---- */

/*
 * Publishes device_id's counter catalog (the metrics of chip) with the
 * counters API, the CUDA device being CUPTI's cupti_device, and announces
 * it to sessions. GP_ENODEV for an unknown chip, GP_EEXIST if the device
 * has a catalog, GP_ENOTSUP where the host API cannot run (sanitizers).
 */
int gp__cuda_provider_publish(uint32_t device_id, uint32_t cupti_device,
                              const char *chip);

#endif /* GPUPERF_CUDA_INT_H */
