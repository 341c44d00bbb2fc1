/*
 * oclInt.h - what the modules of the OpenCL interception library share.
 *
 * The library defines the OpenCL entry points (cl_api.h lists them) and
 * forwards each call to the real ICD loader, found lazily with
 * dlsym(RTLD_NEXT) (resolve.c). Around the call it writes an API record
 * (calls.c) into the process's libgpuperf, reached through
 * gp_backend_interface(); around each enqueue it also starts tracking the
 * command (enqueue.c, track.c) until its event completes, then reads the
 * event's profiling times, maps them to the trace clock (device.c) and
 * writes a KERNEL, MEMCPY or MEMSET record (pending.c). Context, queue,
 * kernel and event calls keep the tables the records need (objects.c).
 *
 * Rules every module follows:
 *  - nothing OpenCL is called before the program's first OpenCL call (a
 *    child forked after PoCL initialised itself hangs in the driver);
 *  - no lock of ours is held across a call into the driver that may run
 *    event callbacks (clFinish, clFlush, clWaitForEvents, enqueues,
 *    clSetEventCallback, clReleaseEvent): on some drivers callbacks run
 *    on the calling thread, and ours take our locks (asking an event for
 *    its status or profiling times, or retaining one, runs none);
 *  - the program's objects keep the reference counts the program gave
 *    them: we never retain its events, queues or contexts.
 */
#ifndef GPUPERF_OPENCL_OCLINT_H
#define GPUPERF_OPENCL_OCLINT_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl.h>

#include <pthread.h>
#include <stdatomic.h>

#include "core/backend.h"

#include "cl_api.h"
#include "ptrmap.h"

/* Entry points are the only symbols the preload library exports. */
#define GP_CL_ENTRY __attribute__((visibility("default")))

/* Deferred commands of an in-order queue are handed to the reaper once
 * this many wait (and all of them are read on clFinish and at a flush). */
#define GP_OCL_REAP_BATCH 16

/* Call ids: the row of each entry point in cl_api.h. */
enum {
#define GP_CL_ID_ROW(h, r, name, ...) GP_CL_ID_##name,
  GP_CL_API(GP_CL_ID_ROW)
#undef GP_CL_ID_ROW
      GP_CL_ID_COUNT
};

/* ------------------------------------------------------------------ */
/* resolve.c: the real entry points                                    */

extern void *_Atomic gp__ocl_real_fn[GP_CL_ID_COUNT];

/* Name of a call id ("clFinish"), "" for an unknown one. */
const char *gp__ocl_call_name(uint32_t id);

/*
 * Finds the driver's (the ICD loader's) function for call id and caches
 * it. Returns NULL, after one message on stderr, if there is none.
 */
void *gp__ocl_resolve(uint32_t id);

static inline void *gp__ocl_real(uint32_t id) {
  void *p = atomic_load_explicit(&gp__ocl_real_fn[id], memory_order_acquire);
  return GP_LIKELY(p != NULL) ? p : gp__ocl_resolve(id);
}

/* The real function behind an entry point, typed, or NULL. */
#define GP_CL_REAL(name) ((__typeof__(&name))gp__ocl_real(GP_CL_ID_##name))

/* Runs the library's one-time set-up (fork handlers, flush hook). Calls
 * nothing in OpenCL. Cheap after the first call. */
void gp__ocl_init(void);

/* ------------------------------------------------------------------ */
/* The core's producer functions (core/backend.h), reached through the   */
/* table of the libgpuperf the process loaded: the preload library has   */
/* no core of its own.                                                   */

extern const gp_backend_ops *_Atomic gp__ocl_core_ops;

/* Loads the table; if the core is missing or of another version, one
 * message and a table that records nothing. Never NULL. */
const gp_backend_ops *gp__ocl_core_load(void);

static inline const gp_backend_ops *gp__ocl_core(void) {
  const gp_backend_ops *c =
      atomic_load_explicit(&gp__ocl_core_ops, memory_order_acquire);
  return GP_LIKELY(c != NULL) ? c : gp__ocl_core_load();
}

#define GP_CORE (gp__ocl_core())

/* ------------------------------------------------------------------ */
/* calls.c: API records                                                 */

typedef struct gp__ocl_call {
  uint64_t corr;       /* correlation id, 0 when nothing is recorded */
  uint64_t start;      /* trace clock at entry */
  uint32_t id;         /* call id */
  bool api;            /* an API record is wanted */
  bool cb;             /* the API callbacks were called at entry: at exit too */
  gp__cb_api_call cbc; /* their data (set only when cb) */
} gp__ocl_call;

/* Whether a subscriber enabled an OpenCL API callback (gpuperf/callback.h). */
static inline bool gp__ocl_cb_on(const gp_backend_ops *core) {
  return GP_UNLIKELY(
      atomic_load_explicit(core->callback_mask, memory_order_relaxed) &
      GP__CB_API_BIT(GP_API_DOMAIN_OPENCL));
}

/* Calls the entry callbacks of c, which names context and stream (0:
 * none). */
void gp__ocl_call_enter(gp__ocl_call *c, uint32_t context, uint32_t stream);

/* Calls the exit callbacks of c (entered), with status rv. */
void gp__ocl_call_exit(gp__ocl_call *c, int32_t rv);

/*
 * Starts a call: decides whether an API record is wanted, and gives the
 * call a correlation id if one is wanted, want_corr is set (enqueues
 * whose command is tracked) or a subscriber wants its callbacks (then
 * called here). Reads the trace clock.
 */
void gp__ocl_call_begin(gp__ocl_call *c, uint32_t id, bool want_corr);

/* Same, with the core's table already read and whether an API record is
 * wanted already known (api: the API kind is enabled), so that an
 * enqueue asks the core once; context and stream: what the call names,
 * for the callbacks (0: none). */
static inline void gp__ocl_call_begin_on(gp__ocl_call *c,
                                         const gp_backend_ops *core,
                                         uint32_t id, bool want_corr, bool api,
                                         uint32_t context, uint32_t stream) {
  c->id = id;
  c->api = api;
  c->cb = gp__ocl_cb_on(core);
  c->corr = (api || want_corr || c->cb) ? core->correlation_next() : 0;
  if (GP_UNLIKELY(c->cb))
    gp__ocl_call_enter(c, context, stream);
  c->start = gp_get_timestamp();
}

static inline void gp__ocl_call_begin_api(gp__ocl_call *c, uint32_t id,
                                          bool want_corr, bool api) {
  gp__ocl_call_begin_on(c, gp__ocl_core(), id, want_corr, api, 0, 0);
}

static inline void gp__ocl_call_begin_with(gp__ocl_call *c,
                                           const gp_backend_ops *core,
                                           uint32_t id, bool want_corr,
                                           bool api) {
  gp__ocl_call_begin_on(c, core, id, want_corr, api, 0, 0);
}

/* Ends a call: writes its API record (if wanted) with return value rv. */
void gp__ocl_call_end(gp__ocl_call *c, int32_t rv);

/* Same, with the end time already read. */
void gp__ocl_call_end_at(gp__ocl_call *c, int32_t rv, uint64_t end);

/* What the calling thread's API records need once it wrote one: its NAME
 * record is written (named), its ids (pid 0: not read yet, or a fork's
 * child). */
typedef struct gp__ocl_caller {
  bool named;
  uint32_t pid, tid;
} gp__ocl_caller;

extern GP_TLS gp__ocl_caller gp__ocl_me;

/* The string ids of the calls' names, 0 until interned. */
extern _Atomic uint32_t gp__ocl_call_name_ids[GP_CL_ID_COUNT];

/* Writes c's API record, its name name_id, with core. */
static inline void gp__ocl_api_record(const gp_backend_ops *core,
                                      const gp__ocl_call *c, int32_t rv,
                                      uint64_t end, uint32_t name_id) {
  gp_activity_api *r =
      core->activity_reserve(GP_ACTIVITY_KIND_API, sizeof(*r), 0, 0);
  if (!r)
    return;
  r->correlation_id = c->corr;
  r->start = c->start;
  r->end = end;
  r->process_id = gp__ocl_me.pid;
  r->thread_id = gp__ocl_me.tid;
  r->domain = GP_API_DOMAIN_OPENCL;
  r->cbid = c->id;
  r->name_id = name_id;
  r->return_value = rv;
  core->activity_commit(r);
}

/* gp__ocl_call_end_at, inline once the thread and the call's name are
 * known, with the core's table already read. */
static inline void gp__ocl_call_end_with(const gp_backend_ops *core,
                                         gp__ocl_call *c, int32_t rv,
                                         uint64_t end) {
  if (GP_UNLIKELY(c->cb))
    gp__ocl_call_exit(c, rv);
  if (!c->api)
    return;
  uint32_t name_id =
      atomic_load_explicit(&gp__ocl_call_name_ids[c->id], memory_order_relaxed);
  if (GP_UNLIKELY(!gp__ocl_me.named || gp__ocl_me.pid == 0 || name_id == 0))
    gp__ocl_call_end_at(c, rv, end);
  else
    gp__ocl_api_record(core, c, rv, end, name_id);
}

/* True if any kind the library writes is collected at all. */
bool gp__ocl_recording(void);

/* Writes a SYNCHRONIZATION record for a host wait, if enabled. */
void gp__ocl_emit_sync(const gp__ocl_call *c, uint64_t end, uint32_t sync_kind,
                       uint32_t device_id, uint32_t context_id,
                       uint32_t stream_id, uint64_t wait_id);

/* ------------------------------------------------------------------ */
/* device.c: devices and their clocks                                  */

enum {
  GP_OCL_CLOCK_TIMER = 1,  /* clGetDeviceAndHostTimer works: read it */
  GP_OCL_CLOCK_RAW = 2,    /* profiling on CLOCK_MONOTONIC_RAW (PoCL) */
  GP_OCL_CLOCK_BRACKET = 3 /* unknown: pair QUEUED with the enqueue call */
};

typedef struct gp__ocl_device {
  cl_device_id cl;
  uint32_t device_id; /* gpuperf device id */
  uint32_t clock_id;  /* its profiling clock (clock.h) */
  int version;        /* OpenCL version of the device, e.g. 300 */
  _Atomic int clock_mode;
  _Atomic int raw_verdict;          /* RAW: 0 unknown, 1 confirmed, -1 not */
  _Atomic uint64_t next_snapshot;   /* trace time of the next snapshot */
  _Atomic uint64_t best_bracket_ns; /* BRACKET: tightest pair seen */
  _Atomic uint64_t max_error_ns;    /* widest anchor or snapshot used */
  pthread_mutex_t clock_lock;       /* mode changes and snapshots */
} gp__ocl_device;

/* A device-clock reading (MONOTONIC_RAW here) paired with the trace clock
 * read just before and after it: trace is the midpoint, err half the gap. */
typedef struct gp__ocl_anchor {
  uint64_t raw, trace, err;
} gp__ocl_anchor;

/* Takes an anchor now. */
void gp__ocl_anchor_take(gp__ocl_anchor *a);

/* How old an anchor an enqueue may reuse. Reading MONOTONIC_RAW costs
 * about 70 ns in the virtual machines we measured, a tenth of what the
 * interception adds to an enqueue; an anchor a few tens of us older
 * lengthens a span of the mapping that is already about a millisecond
 * (the reaper's period) by a few percent. */
#define GP_OCL_ANCHOR_REUSE_NS 50000

/* The calling thread's last anchor (trace 0: none). */
extern GP_TLS gp__ocl_anchor gp__ocl_last_anchor;

/* Takes an anchor and keeps it as the thread's last. */
void gp__ocl_anchor_renew(gp__ocl_anchor *a);

/* Stores in a the calling thread's last anchor if it was taken less than
 * GP_OCL_ANCHOR_REUSE_NS before now (the trace clock, read just before),
 * else takes a new one. */
static inline void gp__ocl_anchor_recent(gp__ocl_anchor *a, uint64_t now) {
  uint64_t t = gp__ocl_last_anchor.trace;
  if (GP_LIKELY(t && now >= t && now - t < GP_OCL_ANCHOR_REUSE_NS))
    *a = gp__ocl_last_anchor;
  else
    gp__ocl_anchor_renew(a);
}

/*
 * Returns the record of an OpenCL device, registering it (DEVICE record,
 * clock) the first time it is seen. NULL if out of memory or past the
 * device limit. Makes driver queries; takes no lock of the caller's.
 */
gp__ocl_device *gp__ocl_device_get(cl_device_id dev);

/* True if enqueues on d take an anchor before the driver call (the device
 * is, or may be, on CLOCK_MONOTONIC_RAW). */
static inline bool gp__ocl_device_anchors(gp__ocl_device *d) {
  return atomic_load_explicit(&d->clock_mode, memory_order_relaxed) ==
         GP_OCL_CLOCK_RAW;
}

/* True while d's use of CLOCK_MONOTONIC_RAW is not confirmed yet: enqueues
 * also read that clock after the driver call. */
static inline bool gp__ocl_device_unverified(gp__ocl_device *d) {
  return atomic_load_explicit(&d->clock_mode, memory_order_relaxed) ==
             GP_OCL_CLOCK_RAW &&
         atomic_load_explicit(&d->raw_verdict, memory_order_relaxed) == 0;
}

/*
 * For tests: devices registered from now on start with clock mode mode
 * (0: decide as usual), and the MONOTONIC_RAW check sees QUEUED times
 * shifted by skew_ns (so that it fails).
 */
void gp__ocl_test_clock(int mode, int64_t skew_ns);

/* Reads CLOCK_MONOTONIC_RAW in ns. */
uint64_t gp__ocl_raw_now(void);

struct gp__ocl_entry;

/*
 * Maps the profiling times dev_ts[0..3] (queued, submitted, start, end;
 * 0 = unknown) of entry e's command to the trace clock into out[0..3] (0
 * where unknown), deciding or refining the clock mapping with what e
 * measured on the host. Call after the command completed: after is an
 * anchor taken since (NULL: one is taken now).
 */
void gp__ocl_device_map(gp__ocl_device *d, const struct gp__ocl_entry *e,
                        const uint64_t dev_ts[4], uint64_t out[4],
                        const gp__ocl_anchor *after);

/* ------------------------------------------------------------------ */
/* objects.c: contexts, queues, kernels                                */

#define GP_OCL_RECENT 32     /* commands remembered per queue for markers */
#define GP_OCL_LOCAL_ARGS 32 /* kernel arguments tracked for local memory */

typedef struct gp__ocl_context {
  cl_context cl;
  uint32_t num_devices;
  cl_device_id *devices;
  uint32_t *context_ids; /* gpuperf context per device */
} gp__ocl_context;

typedef struct gp__ocl_queue {
  cl_command_queue cl;
  gp__ocl_device *dev;
  uint32_t device_id, context_id, stream_id;
  bool out_of_order;
  bool profiling;     /* profiling is on (asked for, or forced by us) */
  bool app_profiling; /* the program asked for profiling */
  bool forced;        /* we added CL_QUEUE_PROFILING_ENABLE */
  cl_queue_properties *app_props; /* the program's property list, or NULL */
  size_t app_props_size;          /* bytes, terminator included */
  /* What a marker without a wait list stands for. In-order: the last
   * command (last). Out-of-order, under gp__ocl.lock: the commands since
   * the last barrier or, if none, what that barrier stood for (the
   * frontier). */
  _Atomic uint64_t last;
  uint32_t num_recent, num_frontier;
  uint64_t recent[GP_OCL_RECENT];
  uint64_t frontier[GP_OCL_RECENT];
  /* In-order queues: commands with our own events, oldest first, read in
   * batches by the reaper (reaper.c), and on clFinish and flushes
   * (pending.c): those of the queue's owner (the first thread that
   * enqueued such a command) on its ring, without a lock; the others, and
   * the owner's when the ring is full, on the list. */
  _Atomic(void *) ring_owner;        /* that thread's token (pending.c) */
  struct gp__ocl_ring *_Atomic ring; /* set once, by the owner */
  pthread_mutex_t reap_lock;         /* the list */
  struct gp__ocl_entry *reap_head, *reap_tail;
  _Atomic uint64_t reap_n;              /* entries on the list */
  pthread_mutex_t reap_serial;          /* held by the one reading the list */
  _Atomic bool reap_handed;             /* on the reaper's list of queues */
  struct gp__ocl_queue *reap_todo_next; /* that list (its lock) */
} gp__ocl_queue;

typedef struct gp__ocl_kernel {
  cl_kernel cl;
  _Atomic uint32_t name_id;
  _Atomic uint32_t local_bytes[GP_OCL_LOCAL_ARGS]; /* __local argument sizes */
  _Atomic uint64_t local_total;                    /* their sum */
} gp__ocl_kernel;

/*
 * Returns the queue's record, registering a queue created out of our
 * sight (found through driver queries). NULL if it cannot be known.
 */
gp__ocl_queue *gp__ocl_queue_get(cl_command_queue q);

/* Returns the kernel's record, asking the driver for its name if it was
 * created out of our sight. NULL if out of memory. */
gp__ocl_kernel *gp__ocl_kernel_get(cl_kernel k);

/* The queue and the kernel the calling thread last looked up, and their
 * records. A record, once made, stays its object's address's record for
 * the life of the process (a new object at the same address updates it
 * in place), so what a thread found once it may use again. */
typedef struct gp__ocl_last {
  cl_command_queue queue_cl;
  gp__ocl_queue *queue;
  cl_kernel kernel_cl;
  gp__ocl_kernel *kernel;
} gp__ocl_last;

extern GP_TLS gp__ocl_last gp__ocl_last_used;

/* gp__ocl_queue_get, without a table lookup for the thread's last queue. */
static inline gp__ocl_queue *gp__ocl_queue_find(cl_command_queue q) {
  if (GP_LIKELY(q == gp__ocl_last_used.queue_cl && q))
    return gp__ocl_last_used.queue;
  return gp__ocl_queue_get(q);
}

/* gp__ocl_kernel_get, without a table lookup for the thread's last
 * kernel. */
static inline gp__ocl_kernel *gp__ocl_kernel_find(cl_kernel k) {
  if (GP_LIKELY(k == gp__ocl_last_used.kernel_cl && k))
    return gp__ocl_last_used.kernel;
  return gp__ocl_kernel_get(k);
}

/* The gpuperf context of (context, device), registering both if new; 0 if
 * it cannot be had. */
uint32_t gp__ocl_context_id(cl_context ctx, gp__ocl_device *dev);

/* ------------------------------------------------------------------ */
/* frontier.c: how far back a device's records are complete            */

/* Installs the frontier of a registered device in the core. */
void gp__ocl_frontier_install(uint32_t device_id);

/*
 * The least call start of device_id's commands on the pending and reap
 * lists (UINT64_MAX: none); *writing is set if some command, of any
 * device, is being written and so on no list (pending.c).
 */
uint64_t gp__ocl_pending_oldest(uint32_t device_id, bool *writing);

/* ------------------------------------------------------------------ */
/* track.c and pending.c: commands in flight                           */

/* Wait ids an entry holds without a separate allocation. */
#define GP_OCL_INLINE_WAITS 6

/* What an enqueued command is, for its record. */
typedef struct gp__ocl_cmd {
  uint32_t kind; /* GP_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET; 0: none */
  uint32_t name_id;
  union { /* by kind: an entry copies the command whole on every enqueue */
    struct {
      /* Kernels: the work sizes as enqueued, turned into the record's grid
       * and block when it is written (gp__ocl_kernel_shape): work-items
       * per dimension (1 past the dimensions) and the work-group size
       * (local: the program gave one; a 0 in it counts as 1). */
      uint64_t work[3], group[3];
      bool local;
      uint32_t dynamic_shared;
    };
    struct { /* MEMCPY and MEMSET */
      uint64_t bytes;
      uint32_t value;             /* memset: the fill pattern's first bytes */
      uint8_t copy_kind;          /* gp_memcpy_kind */
      uint8_t src_kind, dst_kind; /* gp_memory_kind; memset: dst_kind */
      bool src_host, dst_host;    /* memcpy side in host memory */
    };
  };
} gp__ocl_cmd;

/* A kernel command's grid (work-groups) and block (work-group size; 0
 * when the driver chose it, and then the grid counts work-items). */
void gp__ocl_kernel_shape(const gp__ocl_cmd *c, uint32_t grid[3],
                          uint32_t block[3]);

typedef struct gp__ocl_evinfo gp__ocl_evinfo;

typedef struct gp__ocl_entry {
  struct gp__ocl_entry *prev, *next; /* pending list (pending.c) */
  _Atomic int refs;                  /* the record's owner and the callback */
  bool retired;                      /* the record has an owner (list lock) */
  bool internal;                     /* event is ours, released once read */
  bool deferred;                     /* read when reaped, no callback */
  bool in_flight; /* counted as GPU work in flight (the core's cell) */
  struct gp__ocl_entry *reap_next; /* the queue's reap list */
  cl_int swept_status;             /* status a flush found it in */
  cl_event event;
  gp__ocl_evinfo *evinfo; /* the program's event's info while pending */
  gp__ocl_device *dev;
  gp__ocl_cmd cmd;
  uint64_t corr;
  uint64_t host_start, host_end; /* the enqueue call, trace clock */
  gp__ocl_anchor anchor;         /* before the driver call, raw 0 if none */
  uint64_t raw_after;            /* MONOTONIC_RAW after it, while checking */
  uint32_t device_id, context_id, stream_id;
  uint32_t num_waits;
  uint64_t *waits; /* correlation ids it waited on: inline_waits or heap */
  uint64_t inline_waits[GP_OCL_INLINE_WAITS];
} gp__ocl_entry;

/* What an event of the program stands for: the command that completes it
 * (one id) or, for markers and barriers, the commands they wait for. */
struct gp__ocl_evinfo {
  gp__ocl_entry *entry; /* the command while it is pending, else NULL */
  uint32_t device_id, context_id, stream_id;
  uint32_t num_ids;
  uint64_t ids[];
};

/* An enqueue in progress, between the driver call and its tracking. */
typedef struct gp__ocl_enqueue {
  gp__ocl_call call;
  const gp_backend_ops *core; /* GP_CORE, read once */
  gp__ocl_queue *q;
  bool track;        /* a GPU record is wanted */
  bool unverified;   /* the device's clock was being checked (anchor) */
  cl_event internal; /* our event when the program passed none */
  cl_event *evp;     /* what to pass the driver as the event pointer */
  gp__ocl_anchor anchor;
  uint32_t kind; /* of the record, 0 for a marker or barrier */
} gp__ocl_enqueue;

/*
 * Starts an enqueue on queue q of a command whose record is of kind (0
 * for a marker or barrier): the API call, and the decision whether the
 * command is tracked. Leaves in en->evp the event pointer to pass to the
 * driver: the program's, or ours if it passed NULL and we track.
 */
void gp__ocl_enqueue_begin(gp__ocl_enqueue *en, uint32_t id, cl_command_queue q,
                           cl_event *app_event, uint32_t kind);

/*
 * Finishes an enqueue whose driver call returned rc: on success tracks the
 * command described by cmd (unused for markers and barriers, which are
 * remembered only for dependencies; barrier says the command also holds
 * back later ones), with its wait list; then writes the API record.
 * app_event is the program's event pointer (NULL if it passed none).
 */
void gp__ocl_enqueue_end(gp__ocl_enqueue *en, cl_int rc, const gp__ocl_cmd *cmd,
                         cl_uint num_waits, const cl_event *wait_list,
                         cl_event *app_event, bool barrier);

/* The correlation id of the command behind a program event, 0 if none
 * (for SYNCHRONIZATION records). */
uint64_t gp__ocl_event_corr(cl_event ev);

/* After the program waited on events (clWaitForEvents): retires commands
 * that completed or failed and whose callback has not run yet. */
void gp__ocl_reconcile_events(cl_uint n, const cl_event *list);

/* Before the program releases one of its events: records a failed command
 * now (its callback may never come), and forgets the event if this is the
 * last reference. */
void gp__ocl_event_releasing(cl_event ev);

/* A user event appeared at ev's address: forget what the address meant. */
void gp__ocl_event_forget(cl_event ev);

/* What the tracker did so far (for tests and the docs' claims). */
typedef struct gp__ocl_stats {
  uint64_t tracked;  /* commands whose completion we waited for */
  uint64_t recorded; /* GPU records written with profiling times */
  uint64_t unknown;  /* GPU records written without them */
  uint64_t failed;   /* commands that ended in an error */
  uint64_t internal; /* events we made because the program passed none */
  uint64_t released; /* of those, released again */
  uint64_t pending;  /* commands still in flight */
} gp__ocl_stats;

void gp__ocl_get_stats(gp__ocl_stats *out);

/* ---- pending.c: entries in flight ---- */

/* Slots of a queue's ring of deferred commands (a power of two; a build
 * may choose fewer, to exercise a full ring). */
#ifndef GP_OCL_RING
#define GP_OCL_RING 2048
#endif

/*
 * A queue's ring: the commands its owner enqueued with events of ours,
 * oldest first, written by that one thread and read by the one holding
 * the queue's reap_serial. The owner fills slot tail % GP_OCL_RING, then
 * publishes it by storing tail + 1 (release); the reader takes slots from
 * head and stores head past them once they count as finishing. Neither
 * side takes a lock or does an atomic read-modify-write. tail never goes
 * back: it is how many commands the ring ever took (stats).
 */
typedef struct gp__ocl_ring {
  _Alignas(64) _Atomic uint64_t tail; /* written by the owner */
  _Alignas(64) _Atomic uint64_t head; /* written by the reader */
  _Alignas(64) struct {
    gp__ocl_entry *_Atomic entry;
    _Atomic uint64_t start; /* its host_start, for gp__ocl_pending_oldest */
  } slot[GP_OCL_RING];
} gp__ocl_ring;

/* Commands waiting on q's ring and list. */
uint64_t gp__ocl_reap_waiting(gp__ocl_queue *q);

/* Hands q, whose ring or list has a batch waiting, to the reaper (or
 * reads the batch here, with anchor, if there is none). */
void gp__ocl_reap_hand(gp__ocl_queue *q, const gp__ocl_anchor *anchor);

/*
 * A fresh entry with room for num_waits wait ids, holding two references
 * (its record's writer and its callback), or NULL if out of memory. The
 * caller fills it, then links it (gp__ocl_entry_link) and watches it.
 */
gp__ocl_entry *gp__ocl_entry_new(uint32_t num_waits);

/* Makes e (a tracked command's: it counts as work in flight) pending, to
 * be watched (not for deferred entries, which their
 * queue's reap list holds). Caller holds gp__ocl.lock (and may then give
 * e an evinfo before dropping it). */
void gp__ocl_entry_link(gp__ocl_entry *e);

/* Registers e's completion callback (no lock held): from then on e may
 * be retired and written on any thread. */
void gp__ocl_entry_watch(gp__ocl_entry *e);

/* Instead of a callback: puts e (an internal event's, on in-order queue
 * q) on q's reap list, and hands the list to the reaper once a batch
 * waits (without a reaper, reads it here, mapping with anchor, taken
 * before the enqueue's driver call). */
void gp__ocl_entry_defer(gp__ocl_entry *e, gp__ocl_queue *q,
                         const gp__ocl_anchor *anchor);

/* The calling thread's free entries (pending.c), and how many of them it
 * freed itself. */
extern GP_TLS gp__ocl_entry *gp__ocl_own_free;
extern GP_TLS unsigned gp__ocl_own_free_n;

/* A token per thread: its address tells a queue's owner (while a thread
 * lives, no other has its address). */
extern GP_TLS char gp__ocl_ring_token;

/* Starts fetching free entry e (if any) for the command after this one.
 * It was last written on the thread that finished with it: read cold,
 * each of its cache lines stalled the enqueue that took it; fetched now,
 * they arrive during the driver's call. */
static inline void gp__ocl_prefetch_entry(const gp__ocl_entry *e) {
  if (e)
    for (size_t off = 0; off < sizeof(*e); off += 64)
      __builtin_prefetch((const char *)e + off, 1, 3);
}

/* Makes recycled entry e fresh (its waits set already). */
static inline void gp__ocl_entry_init(gp__ocl_entry *e) {
  e->prev = e->next = e->reap_next = NULL;
  atomic_init(&e->refs, 2);
  e->retired = false;
  e->deferred = false;
  e->in_flight = false;
  e->evinfo = NULL;
  e->num_waits = 0;
}

/* gp__ocl_entry_new(0), inline while the thread has a free entry after
 * the one it takes (to fetch ahead). */
static inline gp__ocl_entry *gp__ocl_entry_new0(void) {
  gp__ocl_entry *e = gp__ocl_own_free;
  if (GP_UNLIKELY(!e || !e->next))
    return gp__ocl_entry_new(0);
  gp__ocl_own_free = e->next;
  if (gp__ocl_own_free_n)
    gp__ocl_own_free_n--;
  gp__ocl_prefetch_entry(e->next);
  e->waits = e->inline_waits;
  gp__ocl_entry_init(e);
  return e;
}

/* Puts e on ring r, whose owner is the calling thread, its work counted
 * in flight first (the core's cell; core: the core's table). Stores in *n
 * how many commands then wait on the ring. False, doing nothing, if the
 * ring is full. */
static inline bool gp__ocl_ring_put(const gp_backend_ops *core, gp__ocl_ring *r,
                                    gp__ocl_entry *e, uint64_t *n) {
  uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
  if (GP_UNLIKELY(t - h >= GP_OCL_RING))
    return false;
  e->in_flight = true;
  core->activity_work_in_flight(1);
  e->reap_next = NULL;
  size_t i = t % GP_OCL_RING;
  atomic_store_explicit(&r->slot[i].start, e->host_start, memory_order_relaxed);
  atomic_store_explicit(&r->slot[i].entry, e, memory_order_relaxed);
  atomic_store_explicit(&r->tail, t + 1, memory_order_release);
  *n = t + 1 - h;
  return true;
}

/* Once n commands of q wait to be read: a batch is handed to the reaper
 * (unless it has q already). */
static inline void gp__ocl_reap_due(gp__ocl_queue *q, uint64_t n,
                                    const gp__ocl_anchor *anchor) {
  if (n >= GP_OCL_REAP_BATCH &&
      !atomic_load_explicit(&q->reap_handed, memory_order_relaxed))
    gp__ocl_reap_hand(q, anchor);
}

/* gp__ocl_entry_defer, inline while e goes on the ring of q's owner, the
 * calling thread, without filling it; core: the core's table. */
static inline void gp__ocl_entry_defer_inline(const gp_backend_ops *core,
                                              gp__ocl_entry *e,
                                              gp__ocl_queue *q,
                                              const gp__ocl_anchor *anchor) {
  gp__ocl_ring *r = atomic_load_explicit(&q->ring, memory_order_relaxed);
  uint64_t n;
  if (GP_UNLIKELY(atomic_load_explicit(&q->ring_owner, memory_order_relaxed) !=
                      &gp__ocl_ring_token ||
                  !r || !gp__ocl_ring_put(core, r, e, &n))) {
    gp__ocl_entry_defer(e, q, anchor);
    return;
  }
  gp__ocl_reap_due(q, n, anchor);
}

/*
 * Writes the records of the commands of q's reap list that have completed
 * (or failed), oldest first; stops at the first still running. Returns
 * once they are written, also those the reaper was writing. Called on
 * clFinish; never waits for the driver.
 */
void gp__ocl_reap(gp__ocl_queue *q);

/* Before the program waits for q (clFinish): if a batch of q's commands
 * waits to be read, the reaper reads them as they complete during the
 * wait, leaving gp__ocl_reap little to do after it. */
void gp__ocl_reap_while_waiting(gp__ocl_queue *q);

/* Writes the records of up to max of q's oldest commands that are done
 * (with force: done or not), mapping their times with after, an anchor
 * taken since they completed (NULL: one is taken here), as the one reader
 * of q's list at a time; returns how many. */
unsigned gp__ocl_reap_batch(gp__ocl_queue *q, unsigned max, bool force,
                            const gp__ocl_anchor *after);

/* reaper.c: puts q (its reap_handed set) on the reaper's list, starting
 * the reaper if it does not run; false if there is none (it could not
 * start, or the process is exiting): the caller reads q's batch itself. */
bool gp__ocl_reaper_take(gp__ocl_queue *q);

/* reaper.c: in a fork child, no reaper runs (the first batch starts
 * one). */
void gp__ocl_reaper_atfork_child(void);

/* An extra reference to e while looking at it; drop it after. */
void gp__ocl_entry_hold(gp__ocl_entry *e);
void gp__ocl_entry_drop(gp__ocl_entry *e);

/*
 * Takes ownership of e's record: true for the one caller that gets it,
 * who must then call gp__ocl_finish. events_locked: the caller holds
 * gp__ocl.lock already.
 */
bool gp__ocl_retire(gp__ocl_entry *e, bool events_locked);

/*
 * Writes the record of a retired entry: with can_read and status
 * CL_COMPLETE the event's profiling times are read; else the record has
 * only the host's enqueue time. Releases an internal event, drops the
 * owner's reference.
 */
void gp__ocl_finish(gp__ocl_entry *e, cl_int status, bool can_read);

/* Same, mapping the times with an anchor taken after the command ended
 * (NULL: one is taken). */
void gp__ocl_finish_at(gp__ocl_entry *e, cl_int status, bool can_read,
                       const gp__ocl_anchor *after);

/*
 * Writes the FUNCTION records of a kernel of program p named name_id, if
 * that kind is enabled: one per device p was built for (programs.c).
 */
void gp__ocl_function_emit(cl_program p, uint32_t name_id);

/* Registers the flush hook and fork handlers of pending.c (from init). */
void gp__ocl_track_init(void);

/* In a forked child: locks of device.c made usable again. */
void gp__ocl_device_atfork_child(void);

/* Largest number of wait ids a record carries (the rest are dropped). */
#define GP_OCL_MAX_WAITS 256

/* ------------------------------------------------------------------ */
/* Shared state                                                         */

typedef struct gp__ocl_state {
  pthread_mutex_t lock; /* events, mappings, SVM, queues' dependencies */
  gp__ptrmap events;    /* cl_event -> gp__ocl_evinfo (lock) */
  gp__ptrmap mappings;  /* mapped host pointer -> gp__ocl_mapping (lock) */
  gp__ptrmap svm;       /* SVM allocation base -> size (lock) */
  gp__ptrmap queues;    /* lock-free reads */
  gp__ptrmap kernels;   /* lock-free reads */
  gp__ptrmap contexts;  /* lock-free reads */
  gp__ptrmap devices;   /* lock-free reads */
  gp__ptrmap programs;  /* cl_program -> module id; lock-free reads */
  pthread_mutex_t objects_lock; /* writers of the lock-free maps */
  _Atomic uint32_t next_stream;
} gp__ocl_state;

extern gp__ocl_state gp__ocl;

/* A region the program mapped, until it unmaps it. */
typedef struct gp__ocl_mapping {
  uint64_t bytes;
  cl_map_flags flags;
  uint8_t mem_kind; /* gp_memory_kind of the mapped object */
  uint32_t count;   /* maps of this pointer not yet unmapped */
} gp__ocl_mapping;

#endif /* GPUPERF_OPENCL_OCLINT_H */
