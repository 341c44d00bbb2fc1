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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/*
 * A file written whole or not at all: gp__outfile_open() creates
 * path.tmp-XXXXXX beside path (mode 0644) and returns it
 * open for writing, the name in *tmp (malloc'd), or NULL with errno set;
 * gp__outfile_close() closes it and, if ok and the close succeeded,
 * renames it over path (0), else removes it and leaves path as it was
 * (a negative errno; -EIO when ok was false). A link at path: the file
 * it names is replaced.
 */
FILE *gp__outfile_open(const char *path, char **tmp);
int gp__outfile_close(FILE *f, char *tmp, const char *path, bool ok);

/* ---- ftrace_events.c ---- */

/* "group/name" of the kernel's GPU trace event e (gp_ftrace_event), or
 * NULL past the last. */
const char *gp__ftrace_event_name(int e);

/* The mask (bit e: gp_ftrace_event e) of the events spec names, as a
 * linux.ftrace data source writes them: "group/name", the group and a
 * star after its slash (every event of the group gpuperf reads) or a
 * bare "name"; 0 if none. */
uint32_t gp__ftrace_event_match(const char *spec);

/* ---- clock.c ---- */

/*
 * Installs a virtual time source: gp_get_timestamp() then returns now()
 * instead of reading a clock. NULL restores the real clock. Used by the
 * simulator's deterministic mode.
 */
void gp__clock_set_virtual(uint64_t (*now)(void));

/* True while a virtual time source is installed. */
bool gp__clock_is_virtual(void);

/*
 * A thread's copy of the TSC line (clock.c): gp__now() reads
 * the time from it with no call, no lock and no shared load. It is good
 * for `span` ticks past base_tsc; span 0 sends every reading to
 * gp__timestamp_slow(), which takes a fresh copy. span is atomic because
 * gp__clock_set_virtual() zeroes it in every thread's copy (a virtual
 * clock then takes over at once); the rest is the owner's alone.
 */
typedef struct gp__tls_line_t {
  uint64_t base_tsc; /* the line's tick at base_ns */
  _Atomic uint64_t span;
  uint64_t mult; /* ns per tick, 32.32 */
  uint64_t base_ns;
  struct gp__tls_line_t *prev, *next; /* every thread's copy (clock.c) */
  int listed;                         /* in that list; -1: thread exiting */
} gp__tls_line_t;

/* The core's per-thread words in one block, so that a record's slot and
 * its timestamp's line are reached from one thread-pointer offset. */
typedef struct gp__tls_t {
  struct gp__slot *slot; /* the thread's slot (slot.h) */
  gp__tls_line_t line;   /* its copy of the TSC line (clock.c) */
} gp__tls_t;
extern GP_TLS gp__tls_t gp__tls;

/*
 * span as gp__now() reads it: a relaxed load, which is one plain move on
 * every machine the TSC line runs on. GCC treats even a relaxed atomic as
 * a barrier to its other optimisations, and would then load the record's
 * slot and position again after every timestamp; a volatile load is the
 * same move without that (as Linux's READ_ONCE). Under ThreadSanitizer,
 * which checks the C11 model, the atomic load itself.
 */
#if defined(__SANITIZE_THREAD__)
#define GP__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GP__TSAN 1
#endif
#endif
static inline uint64_t gp__tls_span(gp__tls_line_t *l) {
#if defined(GP__TSAN)
  return atomic_load_explicit(&l->span, memory_order_relaxed);
#else
  return *(volatile uint64_t *)&l->span;
#endif
}

/* Everything gp__now() does not do inline: a virtual clock, a copy past
 * its span or none, calibration, no TSC. */
uint64_t gp__timestamp_slow(void);

/*
 * gp_get_timestamp(), inlined into the library's own producers: an
 * rdtsc, a subtraction, a compare, a multiply, a shift and an add.
 */
static inline __attribute__((always_inline)) uint64_t gp__now(void) {
#if defined(__x86_64__) || defined(__i386__)
  gp__tls_line_t *l = &gp__tls.line;
  uint64_t d = __builtin_ia32_rdtsc() - l->base_tsc;
  /* d < span also rules out a tick before the base (d wraps). */
  if (GP_LIKELY(d < gp__tls_span(l)))
    return l->base_ns + ((d * l->mult) >> 32);
#endif
  return gp__timestamp_slow();
}

/* Period between re-measurements of the TSC line, ns. */
#define GP_CLOCK_RECAL_NS 50000000ull

/*
 * The slope (32.32 ns per tick) that takes the TSC line from err_ns off
 * (measured minus predicted) back onto the measured clock over one period
 * when the counter runs at `rate`, within the slew limit (500 ppm).
 */
uint64_t gp__clock_slew_mult(uint64_t rate, int64_t err_ns);

/* What gp_get_timestamp() reads now, in words: "tsc" (the calibrated
 * line), "virtual", or which clock_gettime() fallback. For benches and
 * diagnostics; a static string. */
const char *gp__clock_source_name(void);

/* Consumers of device clock snapshots open at once, and the snapshots a
 * clock keeps for those that lag (beyond its ring of 256). */
#define GP_CLOCK_MAX_CONSUMERS 16
#define GP_CLOCK_SPILL_MAX 65536u

/*
 * Opens a consumer of device clock snapshots: one that reads every
 * snapshot of the clocks it follows (gp__clock_consume), however far it
 * lags behind the producer, where gp_clock_get_snapshots() gives only the
 * most recent. It follows every device clock: from the snapshots each one
 * holds now, and from the first of each clock registered later. Stores a
 * handle in *consumer. GP_EINVAL for NULL, GP_ENOSPC when
 * GP_CLOCK_MAX_CONSUMERS are open. Close it when done: until then the
 * snapshots it has not read are kept for it (at most GP_CLOCK_SPILL_MAX
 * beyond the ring, per clock).
 */
int gp__clock_consumer_open(uint32_t *consumer);

/* Closes a consumer, freeing what was kept for it alone. A stale handle
 * (closed, or inherited across fork) and 0 are ignored. */
void gp__clock_consumer_close(uint32_t consumer);

/* The number of snapshots clock_id keeps beyond its ring for consumers
 * that have not read them; 0 for a clock not registered. For tests. */
size_t gp__clock_spilled(uint32_t clock_id);

/*
 * Copies to out, oldest first, up to cap snapshots of clock_id that
 * consumer has not read, stopping at the first whose trace_ts is not
 * below bound (that one and later ones wait for a later call), and marks
 * them read; stores their number in *n. *lost is set to the number of
 * snapshots the consumer missed just before them (the clock had to drop
 * them: GP_CLOCK_SPILL_MAX were kept, or memory ran out), usually 0. Returns
 * GP_EINVAL for a bad argument or a consumer not open, GP_ENOENT for a
 * clock not registered. Takes the lock snapshot writers take, never one
 * of gp_clock_to_trace().
 */
int gp__clock_consume(uint32_t consumer, uint32_t clock_id, uint64_t bound,
                      gp_clock_snapshot *out, size_t cap, size_t *n,
                      uint64_t *lost);

/* ---- strings.c ---- */

/* The hash of s[0..len) that the string table indexes by (FNV-1a), for
 * readers of its mirror (a salvage) that index the same strings. */
uint64_t gp__string_hash(const char *s, size_t len);

/*
 * Returns the id of s in the process-wide string table, adding a copy if it
 * is new; 0 for NULL or when memory runs out (0 reads back as ""). Lookups
 * of known strings take no lock.
 */
uint32_t gp__string_intern(const char *s);

/* Same, for a string of len bytes that need not be NUL-terminated. */
uint32_t gp__string_intern_n(const char *s, size_t len);

/*
 * Copies every string of the table, and from now on each new one as it is
 * added, into log (cap bytes of shared memory that another process reads
 * after this one died: session/session_lost.c). Entries, 8-aligned:
 * {uint32 id, uint32 len, len bytes, zero padding}; *used counts the bytes
 * of whole entries (stored after each); *full becomes 1 when one did not
 * fit, and the log stops there. log == NULL stops. A forked child never
 * writes its parent's log. From a fork child handler, pass in_fork_child.
 */
void gp__string_mirror(uint8_t *log, size_t cap, uint64_t *used, uint64_t *full,
                       bool in_fork_child);

/* ---- activity.c: producing records ---- */

/* gp__activity_reserve() and gp__activity_commit(): inline, in slot.h. */
#include "slot.h"

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

/*
 * Records that survive SIGKILL. With a buffer area given, the buffers the
 * core allocates itself (no request callback registered) come from
 * area->alloc, shared memory another process can read after this one died
 * (session/session_lost.c), and each thread's cell (gp__activity_count_into;
 * a stride of at least 40 bytes) tells where the records it committed
 * since the last write are, as 64-bit words:
 *
 *   word  meaning
 *      0  records committed (the count above)
 *      1  offset of the thread's current buffer in the area + 1; 0: none,
 *         or a buffer outside the area
 *      2  word 0 when the thread took that buffer: the buffer holds
 *         word0 - word2 committed records from its start, one after the
 *         other ({kind, size} headers)
 *      3  bytes at the start of that buffer whose records are written
 *         (delivered to the observers)
 *      4  GPU work in flight, as this thread counted it (a signed count,
 *         gp__activity_work_in_flight): summed over the cells, the work
 *         queued whose record is not written yet
 *
 * Words 1-3 change only when a thread takes or hands over a buffer and when
 * a flush's copy of its records was delivered, never per record. While
 * observers run, *area->delivery says which records they are writing
 * (gp__delivery). area->alloc returns NULL when it has no buffer of that
 * size (the heap is used then); area->release takes back what alloc gave.
 * area == NULL stops allocating from the area (buffers from it still in use
 * are released into it). In a forked child the area is its parent's: the
 * child stops using it, and drops the buffer it held from it, until given
 * one of its own; from a fork child handler, pass in_fork_child.
 */
typedef struct gp__delivery {
  uint64_t state;       /* 1 while observers run, else 0 */
  uint64_t cell;        /* thread cell the records came from, or UINT64_MAX */
  uint64_t buf, base;   /* that cell's words 1 and 2 when they were copied */
  uint64_t to;          /* its word 3 once they are written */
  uint64_t part_before; /* set by the observer: bytes of its output before */
  uint64_t part_after;  /* ... and after writing them; UINT64_MAX until */
} gp__delivery;

/* gp__delivery.cell of the delivery of a handed-over buffer's records
 * (its buf and base: the queued entry's words 0 and 1, below). */
#define GP_DELIVERY_QUEUED (UINT64_MAX - 1)

/*
 * A buffer of the area that a thread handed over full, queued for the
 * collector: its records are no longer in the thread's cell, so the area
 * says where they are until they are written, in an entry of `queued`
 * (nqueued of them, one per buffer of buf_size bytes, by the buffer's
 * place in the area), four 64-bit words:
 *
 *   word  meaning
 *      0  the buffer's offset in the area + 1; 0: the entry is free
 *      1  the thread's word 2 when it took the buffer (which records)
 *      2  bytes at the buffer's start whose records are written
 *      3  bytes of committed records in it when it was handed over
 *
 * Filled before the thread's cell lets go of the buffer (a reader that
 * sees both takes the cell's), emptied once its records are written and
 * before the buffer is used again. A delivery of them says
 * GP_DELIVERY_QUEUED.
 */
typedef struct gp__buffer_area {
  uint8_t *base; /* the area: buffers lie in [base, base + size) */
  size_t size;
  uint8_t *(*alloc)(size_t size);
  void (*release)(uint8_t *buffer);
  gp__delivery *delivery; /* in the area's shared memory */
  uint64_t (*queued)[4];  /* in it too; NULL: handed-over ones not kept */
  uint32_t nqueued;
  size_t buf_size;
} gp__buffer_area;

void gp__activity_share_buffers(const gp__buffer_area *area,
                                bool in_fork_child);

/*
 * Counts GPU work in flight in the calling thread's cell (word 4 above):
 * a backend adds 1 when it queues work it will write a record for once
 * the work is done, and -1 when it writes it (or knows it never will).
 * What a process that died had in flight is then known (the sum over its
 * cells): work whose completion it never saw. No lock, no atomic
 * read-modify-write.
 */
void gp__activity_work_in_flight(int delta);

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

/* True once the process has begun to die (a fatal signal or abort()):
 * nothing may wait on another thread then. */
bool gp__dying(void);

/* True while a signal handler finishes the session: the thread it
 * interrupted may be inside a driver, which must not be called then. */
bool gp__death_in_handler(void);

/* fn (async-signal-safe) says whether a safe point (gp__death_point) is
 * near: then SIGINT, SIGTERM, SIGHUP and SIGQUIT finish the session there,
 * outside their handler (death.c). NULL: never. */
void gp__death_set_defer(bool (*fn)(void));

/* The same, where no backend has set one yet (the simulator: a graphics
 * library's, which knows its frames, comes first). */
void gp__death_set_defer_if_unset(bool (*fn)(void));

/* A safe point: where a deferred signal is pending, finishes the session
 * and raises it again (does not return then). One relaxed load if not. */
void gp__death_point(void);

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

/*
 * Inside a flush hook: whether the flush is of one context (and stream),
 * gp_activity_flush(); *context_id and *stream_id then say which (stream
 * 0: all the context's). A forced flush of one context forces only the
 * work of that context (and stream) still in flight; what has ended is
 * retired whatever its context.
 */
bool gp__activity_flush_scope(uint32_t *context_id, uint32_t *stream_id);
int gp__activity_add_flush_hook(gp__flush_hook hook, void *user);
void gp__activity_remove_flush_hook(gp__flush_hook hook, void *user);

/*
 * Settle hooks bracket every gp_activity_flush_all(), on the flushing
 * thread, and every periodic collection on the collector thread (the
 * flush period): with GP__SETTLE_BEGIN after the flush hooks ran and before the
 * threads' buffers are collected, and with GP__SETTLE_END once everything
 * collected has been seen by the observers. So every record committed
 * before the BEGIN call returned has reached the observers when END is
 * called. A flush that left records in a thread's buffer (no buffer to
 * copy them into) ends with GP__SETTLE_PARTIAL instead. Used by the
 * counters layer's derived windows. GP_ENOSPC past 4.
 */
#define GP__SETTLE_BEGIN 0
#define GP__SETTLE_END 1
#define GP__SETTLE_PARTIAL 2
typedef void (*gp__settle_hook)(int phase);
int gp__activity_add_settle_hook(gp__settle_hook hook);

/* Calls the settle hooks with phase (hooks.c; the collector's). */
void gp__settle(int phase);

/* True on the collector thread: the one thread that never waits for a
 * buffer to come back, so the one that may write records while holding a
 * lock an observer takes. */
bool gp__activity_on_collector(void);

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
/* The same for DEVICE_ATTRIBUTE. */
void gp__device_emit_all_attributes(void);

/* ---- GPU work records: the header every backend fills alike ---- */

/*
 * KERNEL, MEMCPY and MEMSET records (activity.h) share a header: the
 * correlation id, the four times, where the work ran, its flags and
 * perfmon, and a tail of wait ids after the struct. Every backend (the
 * simulator, OpenCL, CUDA, Vulkan, and any later one) fills that header
 * with gp__gpu_work_fill() rather than field by field, so a field added
 * to it reaches every backend at once. A backend fills only the fields
 * of its kind after it:
 *
 *   gp__gpu_work w = {.correlation_id = corr, .queued = q, .submitted = s,
 *                     .start = t0, .end = t1, .device_id = dev,
 *                     .context_id = ctx, .stream_id = stream,
 *                     .queue_id = queue, .wait_ids = waits,
 *                     .num_wait_ids = n};
 *   uint32_t size = gp__gpu_work_size(GP_ACTIVITY_KIND_KERNEL, n);
 *   gp_activity_kernel *r =
 *       gp__activity_reserve(GP_ACTIVITY_KIND_KERNEL, size, ctx, stream);
 *   if (r) {
 *     gp__gpu_work_fill(r, GP_ACTIVITY_KIND_KERNEL, &w);
 *     r->name_id = ...;            (grid, block, ...: KERNEL's own)
 *     gp__activity_commit(r);
 *   }
 *
 * A library outside libgpuperf.so reserves and commits through its
 * backend table (backend.h) instead; the two helpers are inline and call
 * nothing, so they serve both. Times are trace-clock nanoseconds, 0 where
 * unknown (a writer then shows the work as an instant or counts it; see
 * docs/trace-format.md).
 */
typedef struct gp__gpu_work {
  uint64_t correlation_id; /* the API call that launched it, 0 if none */
  uint64_t queued;         /* host enqueued it */
  uint64_t submitted;      /* handed to the hardware */
  uint64_t start;
  uint64_t end;
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint32_t queue_id; /* hardware queue index on the device */
  uint32_t flags;    /* GP_ACTIVITY_FLAG_* of the kind */
  uint32_t perfmon_id;
  uint32_t num_wait_ids;
  const uint64_t *wait_ids; /* borrowed for the call: num_wait_ids ids */
} gp__gpu_work;

/* The fixed part of a GPU work record of kind; 0 for other kinds. */
static inline __attribute__((always_inline)) uint32_t
gp__gpu_work_base(uint32_t kind) {
  switch (kind) {
  case GP_ACTIVITY_KIND_KERNEL:
    return (uint32_t)sizeof(gp_activity_kernel);
  case GP_ACTIVITY_KIND_MEMCPY:
    return (uint32_t)sizeof(gp_activity_memcpy);
  case GP_ACTIVITY_KIND_MEMSET:
    return (uint32_t)sizeof(gp_activity_memset);
  case GP_ACTIVITY_KIND_RENDER_STAGE:
    return (uint32_t)sizeof(gp_activity_render_stage);
  default:
    return 0;
  }
}

/*
 * Bytes to reserve for a GPU work record of kind (KERNEL, MEMCPY, MEMSET
 * or RENDER_STAGE) ending with num_wait_ids wait ids: a multiple of 8; 0
 * for other kinds.
 */
static inline uint32_t gp__gpu_work_size(uint32_t kind, uint32_t num_wait_ids) {
  uint32_t base = gp__gpu_work_base(kind);
  return base ? base + 8u * num_wait_ids : 0;
}

/* Writes the header fields of w into r, a record of any of the four. */
#define GP__GPU_WORK_SET(r, w)                                                 \
  do {                                                                         \
    (r)->correlation_id = (w)->correlation_id;                                 \
    (r)->queued = (w)->queued;                                                 \
    (r)->submitted = (w)->submitted;                                           \
    (r)->start = (w)->start;                                                   \
    (r)->end = (w)->end;                                                       \
    (r)->device_id = (w)->device_id;                                           \
    (r)->context_id = (w)->context_id;                                         \
    (r)->stream_id = (w)->stream_id;                                           \
    (r)->queue_id = (w)->queue_id;                                             \
    (r)->flags = (w)->flags;                                                   \
    (r)->perfmon_id = (w)->perfmon_id;                                         \
    (r)->num_wait_ids = (w)->num_wait_ids;                                     \
  } while (0)

/*
 * Fills a GPU work record of kind that was reserved with
 * gp__gpu_work_size(kind, w->num_wait_ids) bytes: zeroes everything after
 * the {kind, size} header (so fields of the kind left unset read 0),
 * writes w's fields and copies the wait ids after the struct. Other
 * kinds are left untouched. Calls nothing; with a constant kind it
 * compiles to the stores themselves.
 */
static inline __attribute__((always_inline)) void
gp__gpu_work_fill(void *record, uint32_t kind, const gp__gpu_work *w) {
  uint8_t *p = (uint8_t *)record;
  uint32_t base = gp__gpu_work_base(kind);
  if (base == 0)
    return;
  memset(p + sizeof(gp_activity), 0, base - sizeof(gp_activity));
  if (kind == GP_ACTIVITY_KIND_KERNEL)
    GP__GPU_WORK_SET((gp_activity_kernel *)record, w);
  else if (kind == GP_ACTIVITY_KIND_MEMCPY)
    GP__GPU_WORK_SET((gp_activity_memcpy *)record, w);
  else if (kind == GP_ACTIVITY_KIND_RENDER_STAGE)
    GP__GPU_WORK_SET((gp_activity_render_stage *)record, w);
  else
    GP__GPU_WORK_SET((gp_activity_memset *)record, w);
  if (w->num_wait_ids)
    memcpy(p + base, w->wait_ids, 8u * (size_t)w->num_wait_ids);
}

/* ---- record.c: reading records ---- */

/*
 * The record at offset off of buffer[0, valid_size), or NULL at the end
 * or at a record whose size field cannot be trusted (short, unaligned or
 * past valid_size): gp_activity_get_next_record()'s checks, inline for
 * consumers that take every record of every buffer (the trace writer).
 * Iterate with off += r->size.
 */
static inline const gp_activity *gp__record_at(const uint8_t *buffer,
                                               size_t valid_size, size_t off) {
  if (off >= valid_size || valid_size - off < sizeof(gp_activity))
    return NULL;
  const gp_activity *r = (const gp_activity *)(buffer + off);
  if (r->size < sizeof(gp_activity) || (r->size & 7u) ||
      r->size > valid_size - off)
    return NULL;
  return r;
}

/* ---- hooks.c: the one call up, made through a hook ---- */

/*
 * The core depends on nothing above it, yet one event must reach the layer
 * above: a process starting GPU work. Every backend calls gp__activate()
 * before its first GPU work (the simulator's calls, the first OpenCL call,
 * CUDA's injection) and the markers call it too; it runs the hook the
 * layer above installed, if any. src/session installs one at load time
 * when the process is being recorded (GPUPERF_RECORD_DIR): it starts the
 * process's session the first time. With no hook it is one acquire load.
 */
typedef void (*gp__activate_hook)(void);
void gp__activate(void);

/*
 * Installs the activation hook (NULL removes it); the last one installed
 * wins. The hook may run on any thread, any number of times, concurrently:
 * it must be cheap after its first run. It may call into the backends
 * (the session's starts counter sampling, which reaches the providers),
 * so a backend calls gp__activate() holding no lock of its own.
 */
void gp__activate_set_hook(gp__activate_hook hook);

/*
 * The same for the end: gp_activity_finalize() runs the finalize hook (if
 * installed) before it flushes and stops the collector, so that sessions
 * the layer above keeps until exit (a recorded process's, a producer's)
 * end while records and counter samples are still delivered. NULL
 * removes it.
 */
typedef void (*gp__finalize_hook)(void);
void gp__finalize_set_hook(gp__finalize_hook hook);
void gp__finalizing(void);

/*
 * The HUD's two calls for libraries that draw it in a window (the backend
 * table's hud_view and hud_feed; core/hud_view.h has the struct and the
 * GP_HUD_FEED_* kinds). src/session's HUD installs them when it starts;
 * without them gp__hud_view() returns GP_ENOENT and gp__hud_feed() does
 * nothing, each after one acquire load.
 */
struct gp_hud_view;
typedef struct gp__hud_hooks {
  int (*view)(struct gp_hud_view *view);
  void (*feed)(uint32_t what, uint64_t t_ns, double value);
} gp__hud_hooks;
void gp__hud_set_hooks(const gp__hud_hooks *hooks); /* NULL removes them */
int gp__hud_view(struct gp_hud_view *view);
void gp__hud_feed(uint32_t what, uint64_t t_ns, double value);

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

/* The value device info gives for gp_device_attr attr (the field of the
 * same meaning; 0 where the backend did not know it); false for an
 * attribute that is not one of ours. */
bool gp__device_info_attr(const gp_device_info *info, uint32_t attr,
                          uint64_t *value);

/* Emits the DEVICE_ATTRIBUTE records of one device (if enabled): one per
 * gp_device_attr its registered info gives (is not 0). */
void gp__device_emit_attributes(uint32_t device_id);

/*
 * Calls fn(device_id) after each device registered from now on, on the
 * registering thread, holding no lock of the registry (so fn may read the
 * device and publish a catalog for it). GP_ENOSPC past 8 hooks.
 */
int gp__device_add_hook(void (*fn)(uint32_t device_id));

/*
 * The vendor a PCI (or Khronos) vendor id stands for ("NVIDIA"), or NULL
 * for one not known here: how the Vulkan layer names the device it
 * registers and how `gpuperf list` names the devices the loaders see.
 */
static inline const char *gp__gpu_vendor_name(uint32_t vendor_id) {
  switch (vendor_id) {
  case 0x1002:
    return "AMD";
  case 0x10de:
    return "NVIDIA";
  case 0x8086:
    return "Intel";
  case 0x13b5:
    return "ARM";
  case 0x5143:
    return "Qualcomm";
  case 0x1010:
    return "Imagination";
  case 0x14e4:
    return "Broadcom";
  case 0x10005:
    return "Mesa";
  default:
    return NULL;
  }
}

/*
 * A device's frontier (docs/counters.md, "Utilization"): a time T of the
 * trace clock such that every piece of the device's work that starts
 * before T has been committed as a record. Derived counters hold back
 * their windows until the frontier passes them.
 *
 * A backend whose records trail its work (the OpenCL preload, the Vulkan
 * layer) marks each submission in progress (gp__activity_submitting(),
 * from before its driver call until the work is on the backend's own
 * lists) and installs a frontier function per device: the least start
 * time (at most the submission's start) of the device's work on its lists
 * whose record is not committed, UINT64_MAX if none; 0 when nothing can
 * be said (work being written, off every list). The core combines it with
 * the time the question was asked and the submissions in progress, read
 * before the function is called. The function is called from flushes, on
 * any thread, holding no lock of ours; it must not flush or register
 * devices.
 */
typedef uint64_t (*gp__frontier_fn)(void *user, uint32_t device_id);

/* Installs (fn NULL: removes) device_id's frontier function. GP_ENODEV
 * for a device not registered. */
int gp__device_set_frontier(uint32_t device_id, gp__frontier_fn fn, void *user);

/* Answers gp_activity_get_auto_boost_state for context_id, a live
 * context of device_id: 0 with *state filled, or the backend's error. */
typedef int (*gp__auto_boost_fn)(void *user, uint32_t device_id,
                                 uint32_t context_id,
                                 gp_auto_boost_state *state);

/* Sets device_id's auto boost query (NULL: it cannot say, GP_ENOTSUP).
 * 0 or GP_ENODEV. */
int gp__device_set_auto_boost(uint32_t device_id, gp__auto_boost_fn fn,
                              void *user);

/* Writes live context context_id's CONTEXT record again, with
 * default_stream_id and flags (GP_ACTIVITY_FLAG_CONTEXT_*): for what a
 * backend learns of a context after registering it. Nothing for a
 * context that is not live. */
void gp__context_describe(uint32_t context_id, uint32_t default_stream_id,
                          uint32_t flags);

/* How many devices are registered: ids 0 .. n - 1 are valid. */
uint32_t gp__device_count(void);

/* Whether UNIFIED_MEMORY_COUNTER records of counter kind `kind`
 * (gp_um_counter_kind) about device_id are wanted by the configuration
 * (um.c; the activity kind's enable is asked separately). */
bool gp__um_wanted(uint32_t kind, uint32_t device_id);

/* device_id's frontier now; false (and *t untouched) when its backend
 * installed no frontier function. */
bool gp__device_frontier(uint32_t device_id, uint64_t *t);

/*
 * Marks the calling thread as submitting GPU work whose call started at
 * start (trace clock), from before the driver call until the work is on
 * its backend's lists (see the frontier, above); 0 ends the mark. A
 * release store to the thread's own slot.
 */
void gp__activity_submitting(uint64_t start);

/* The least start of the submissions in progress, UINT64_MAX if none. */
uint64_t gp__activity_submitting_min(void);

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

/* ------------------------------------------------------------------ */
/* Callbacks (callback.c, gpuperf/callback.h)                           */

/*
 * The union of the subscribers' enables: bit d for domain d, and for the
 * API domain also bit 8 + a for each API domain a (gp_api_domain). An
 * entry point reads it (relaxed) and calls back only when its bit is set.
 */
extern _Atomic uint32_t gp__cb_mask;
#define GP__CB_API_BIT(api_domain) (1u << (8 + (api_domain)))
#define GP__CB_BIT(domain) (1u << (domain))

/* An API call's callback data, from its entry to its exit, with each
 * subscriber's correlation_data. Fill d (all but site, return_value and
 * correlation_data) before the entry. */
typedef struct gp__cb_api_call {
  gp_callback_api_data d;
  uint64_t data[GP_CALLBACK_MAX_SUBSCRIBERS];
} gp__cb_api_call;

/* Calls the subscribers that enabled the call, at site (gp_callback_site);
 * rc: the call's status at the exit. */
void gp__callback_api(gp__cb_api_call *c, uint32_t site, int32_t rc);

/* Calls the subscribers that enabled (domain, cbid) with data (the
 * domain's struct). */
void gp__callback(uint32_t domain, uint32_t cbid, const void *data);

/* Raises a RESOURCE callback (cbid) of a context or stream, if a
 * subscriber wants that domain. */
static inline void gp__callback_resource(uint32_t cbid, uint32_t api,
                                         uint32_t device_id,
                                         uint32_t context_id,
                                         uint32_t stream_id) {
  if (GP_LIKELY(!(atomic_load_explicit(&gp__cb_mask, memory_order_relaxed) &
                  GP__CB_BIT(GP_CALLBACK_DOMAIN_RESOURCE))))
    return;
  gp_callback_resource_data d = {api, device_id, context_id, stream_id};
  gp__callback(GP_CALLBACK_DOMAIN_RESOURCE, cbid, &d);
}

/*
 * RESOURCE and SYNCHRONIZE callbacks held back: for a backend that raises
 * them under a lock of its own, which a callback calling that backend
 * would otherwise wait for forever. Between gp__callback_hold(h) and
 * gp__callback_release(h) (innermost first) the thread's callbacks of
 * those domains go into h (up to GP__CB_HELD_MAX; more are delivered at
 * once); the release delivers them, in order.
 */
#define GP__CB_HELD_MAX 8
typedef struct gp__cb_held {
  uint32_t n;
  struct gp__cb_held *outer;
  struct {
    uint32_t domain, cbid;
    union {
      gp_callback_resource_data r;
      gp_callback_sync_data s;
    } u;
  } q[GP__CB_HELD_MAX];
} gp__cb_held;
void gp__callback_hold(gp__cb_held *h);
void gp__callback_release(gp__cb_held *h);

/* ------------------------------------------------------------------ */
/* An API's objects and gpuperf's ids (handles.c)                       */

enum { GP__HANDLE_DEVICE = 1, GP__HANDLE_CONTEXT = 2, GP__HANDLE_STREAM = 3 };

/*
 * Notes an object of api (gp_api): what it is (GP__HANDLE_*), its handle
 * and, for a context of several devices, the device's handle as aux
 * (else NULL), with gpuperf's ids for it; replaces an earlier note of the
 * same key. 0, GP_EINVAL for a NULL handle, GP_ENOMEM.
 */
int gp__handle_put(uint32_t api, uint32_t what, const void *handle,
                   const void *aux, uint32_t device_id, uint32_t context_id,
                   uint32_t stream_id);

/* Forgets the object (nothing if it was not noted). */
void gp__handle_drop(uint32_t api, uint32_t what, const void *handle,
                     const void *aux);

#endif /* GPUPERF_CORE_H */
