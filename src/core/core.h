/*
 * core.h - what the library's modules share and the public API does not
 * show: the producer side of activity buffers, the string table, the
 * device and context registries, clock internals and small helpers.
 *
 * Backends include this header (and only this one from src/core) to emit
 * records. Every function here is hidden from the shared library.
 */
#ifndef GPUPERF_CORE_H
#define GPUPERF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/gpuperf.h"

#define GP_LIKELY(x) __builtin_expect(!!(x), 1)
#define GP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GP_ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

/* Thread-local storage that is cheap to reach even from the shared
 * library: the library is loaded at start-up or as a preload, and uses a
 * few words of static TLS. */
#define GP_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- misc.c ---- */

/* The calling thread's kernel thread id, cached. */
uint32_t gp__tid(void);

/* The process id, refreshed after fork. */
uint32_t gp__pid(void);

/*
 * Matches name against a shell glob ('*', '?', '[...]'), as fnmatch()
 * without flags. Returns true on a match.
 */
bool gp__glob_match(const char *pattern, const char *name);

/* ---- clock.c ---- */

/*
 * Installs a virtual time source: gp_get_timestamp() then returns now()
 * instead of reading a clock. NULL restores the real clock. Used by the
 * simulator's deterministic mode.
 */
void gp__clock_set_virtual(uint64_t (*now)(void));

/* True while a virtual time source is installed. */
bool gp__clock_is_virtual(void);

/* Period between re-measurements of the TSC line, ns. */
#define GP_CLOCK_RECAL_NS 50000000ull

/*
 * The slope (32.32 ns per tick) that takes the TSC line from err_ns off
 * (measured minus predicted) back onto the measured clock over one period
 * when the counter runs at `rate`, within the slew limit (500 ppm).
 */
uint64_t gp__clock_slew_mult(uint64_t rate, int64_t err_ns);

/* ---- strings.c ---- */

/*
 * Returns the id of s in the process-wide string table, adding a copy if it
 * is new; 0 for NULL or when memory runs out (0 reads back as ""). Lookups
 * of known strings take no lock.
 */
uint32_t gp__string_intern(const char *s);

/* Same, for a string of len bytes that need not be NUL-terminated. */
uint32_t gp__string_intern_n(const char *s, size_t len);

/* ---- activity.c: producing records ---- */

/*
 * Reserves size bytes (a multiple of 8, header included) for a record of
 * kind in the calling thread's buffer and fills in the header. Returns NULL
 * if the record is dropped (counted by kind and reason, against context_id
 * and stream_id). At most one reservation per thread may be open; finish it
 * with gp__activity_commit(). Lock-free and allocation-free unless the
 * thread's buffer is full.
 */
void *gp__activity_reserve(uint32_t kind, uint32_t size, uint32_t context_id,
                           uint32_t stream_id);

/* Publishes the record reserved last on this thread. */
void gp__activity_commit(void *record);

/*
 * Makes every thread count the records it commits (DROPPED records
 * included) into a cell of its own: the slot's n-th thread-slot counts
 * into *(uint64_t *)(cells + n * stride), for n < ncells; a thread past
 * ncells sets *overflow to 1 and counts nowhere. cells == NULL stops it.
 * The cells are meant to be shared memory another process reads after
 * this one died (session/session_lost.c); they are never read here.
 * Costs one increment per record. A forked child stops counting (its
 * parent's cells are not its own) until it is called again; from a fork
 * child handler, pass in_fork_child (no lock is taken then).
 */
void gp__activity_count_into(uint8_t *cells, uint32_t ncells, size_t stride,
                             uint32_t *overflow, bool in_fork_child);

/* ---- death.c: finishing on the way out ---- */

/*
 * Adds fn to what runs when the process ends by exit() (its caller's own
 * atexit), _exit(), _Exit(), abort() or a fatal signal left at its default
 * action (once gp__death_watch() ran): a recording session finishing its
 * trace, `gpuperf stat` writing its totals. fn must do nothing when called
 * again, or in a process it does not belong to (a vfork or fork child).
 * Returns GP_ENOSPC past 4.
 */
int gp__death_add_finisher(void (*fn)(void));

/* Installs the fatal-signal handlers (docs/recording.md), once. */
void gp__death_watch(void);

/*
 * Returns true if records of kind are collected (for context_id, 0 = no
 * context). One relaxed load, plus one more for contexts with settings of
 * their own.
 */
bool gp__activity_enabled(uint32_t kind, uint32_t context_id);

/* Allocates a process-unique correlation id (never 0). */
uint64_t gp__correlation_next(void);

/*
 * Called at every flush before thread buffers are collected: forced is
 * true for GP_ACTIVITY_FLUSH_FORCED. A backend retires its finished work
 * (and, if forced, what is still in flight) into records.
 */
typedef void (*gp__flush_hook)(void *user, bool forced);
int gp__activity_add_flush_hook(gp__flush_hook hook, void *user);
void gp__activity_remove_flush_hook(gp__flush_hook hook, void *user);

/*
 * Observers see every completed buffer, read-only, on the collector thread
 * before the application's completion callback gets it. When observers
 * exist and the application registered no callbacks, buffers come from an
 * internal pool. Used by tracing sessions.
 */
typedef void (*gp__buffer_observer)(void *user, const uint8_t *buffer,
                                    size_t valid_size);
int gp__activity_add_observer(gp__buffer_observer fn, void *user);
void gp__activity_remove_observer(gp__buffer_observer fn, void *user);

/*
 * Counts count records that a source dropped before they reached us (a
 * backend's own buffers overflowed), by kind and reason and against
 * context_id and stream_id, exactly as our own drops are counted; a
 * DROPPED record follows in the calling thread's next buffer. Ignores
 * count 0 and kinds or reasons out of range.
 */
void gp__activity_add_drops(uint32_t kind, uint32_t reason, uint32_t context_id,
                            uint32_t stream_id, uint64_t count);

/* Forgets the per-context settings of a context that went away. */
void gp__activity_forget_context(uint32_t context_id);

/* Called when DEVICE is enabled, so devices already known are recorded. */
void gp__device_emit_all(void);

/* ---- session.c ---- */

/*
 * Called by every backend before its first GPU work (the simulator's
 * calls, the first OpenCL call, CUDA's injection) and by the markers:
 * when the process is being recorded (GPUPERF_RECORD_DIR), starts its
 * session the first time. One relaxed load when not recording.
 */
void gp__session_env_activate(void);

/* ---- device.c: devices and contexts ---- */

/*
 * Registers a device: info and queues are copied (strings included) and
 * info->id is ignored. Stores the new id in *device_id and emits a DEVICE
 * record if that kind is enabled. GP_ENOSPC past 64 devices.
 */
int gp__device_register(const gp_device_info *info,
                        const gp_device_queue_info *queues, uint32_t num_queues,
                        uint32_t *device_id);

/* Emits a DEVICE record for one device (if enabled). */
void gp__device_emit(uint32_t device_id);

/*
 * Registers a context of device_id for api and stores its id (never 0) in
 * *context_id; emits a CONTEXT record if enabled.
 */
int gp__context_register(uint32_t device_id, uint32_t api,
                         uint32_t default_stream_id, uint32_t *context_id);

/* Marks a context gone; its per-context settings are forgotten. */
void gp__context_unregister(uint32_t context_id);

/* True if context_id is registered and live. */
bool gp__context_exists(uint32_t context_id);

/* Emits a NAME record for an object (if enabled). */
void gp__emit_name(uint32_t object_kind, uint32_t device_id,
                   uint32_t context_id, uint32_t stream_id, uint32_t thread_id,
                   const char *name);

#endif /* GPUPERF_CORE_H */
