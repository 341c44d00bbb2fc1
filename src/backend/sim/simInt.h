/*
 * simInt.h - private structures of the simulated GPU backend, shared by
 * sim.c (the public gp_sim_* calls), sched.c (time, scheduling and
 * retirement into records) and model.c (device models and cost model).
 *
 * All simulator state is guarded by one mutex, sim.lock: calls are short
 * and the simulator is about being observed, not about scaling.
 */
#ifndef GPUPERF_SIM_INT_H
#define GPUPERF_SIM_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/core.h"
#include "counters/countersInt.h"

#define SIM_MAX_QUEUES 8
#define SIM_INLINE_WAITS 4
#define SIM_BUSY_LOG 512 /* busy intervals kept per queue */

/* The calls' ids: gp_sim_cbid (gpuperf/sim.h). */

/*
 * What a kernel adds to the simulated hardware counters, worked out by the
 * cost model once per launch: quantities that add up across kernels (the
 * counter catalogs of simcounters.c turn their sums into counter values).
 * Only doubles, in one block, added into a perfmon's segment as one block
 * (sim_acc.k).
 */
typedef struct sim_work_stats {
  double kernels; /* 1: what the sums of a segment count */
  double flops, threads, instructions;
  double dram_read, dram_write; /* bytes */
  double l2_read, l2_write;     /* 32-byte sectors requested */
  double l2_read_hit, l2_write_hit;
  double active_cycles; /* per compute unit: cycles with work resident */
  double occ_cycles;    /* occupancy x active cycles */
  double issue_cycles;  /* per compute unit: issuing */
  double stall_cycles;  /* per compute unit: waiting for memory */
} sim_work_stats;

/*
 * What jobs did, in quantities that add up across jobs: the simulated
 * hardware counters. The counter catalogs (simcounters.c) turn a sum of
 * these, over a span of time with so much busy time in it, into counter
 * values. Only doubles (gp__sim_acc_add adds them as an array).
 */
typedef struct sim_acc {
  double jobs;
  double work_ns;   /* sum of job durations */
  double kernel_ns; /* sum of kernel durations */
  sim_work_stats k; /* kernels' counts; copies and fills add DRAM bytes */
} sim_acc;

typedef struct sim_busy {
  uint64_t start, end;
} sim_busy;

#define SIM_UNION_MAX 16

/* The union of busy intervals of a segment; intervals that can no longer
 * merge with new work (they ended before the host's present) are folded
 * into `closed`. While the segment's jobs all ran on one queue they never
 * overlapped: `closed` is then their total and no interval is kept. */
typedef struct sim_union {
  uint64_t closed;
  uint32_t n;
  uint32_t reserved0;
  uint64_t others_end; /* the latest end of iv[0 .. n - 1), 0 if none */
  sim_busy iv[SIM_UNION_MAX];
} sim_union;

/*
 * A job as a perfmon's run tells jobs apart: the kernel launch, with what
 * its work statistics and duration depend on besides the device's model,
 * and the queue. Two kernel jobs with equal keys on one device do the same
 * work, to the bit (the cost model is deterministic and a kernel's
 * description never changes), on the same queue.
 */
typedef struct sim_job_key {
  uint64_t kernel; /* gp_sim_kernel.serial; 0 for copies and fills */
  gp_sim_dim3 grid, block;
  uint32_t dynamic_shared;
  uint32_t queue;
} sim_job_key;

/*
 * The latest jobs of a segment while they repeat one kernel launch on the
 * segment's one queue (one key): kept as (what one job adds, how many)
 * and added into the segment's sums (gp__sim_add_n, to the bit what
 * adding them one by one gives) only when another job comes, the segment
 * ends or its perfmon is read. A job that repeats the run costs one
 * comparison of keys and a count.
 *
 * A kernel job that repeats nothing is added at once, as any job, and its
 * key kept with SIM_RUN_ONE set in the queue: only the next job, if it is
 * the same launch, copies the counts and makes the two a run. The queue
 * is SIM_QUEUES_NONE (no job matches) while no segment is open and once
 * the segment runs on many queues, whose jobs are all added at once.
 */
typedef struct sim_run {
  sim_job_key key;
  uint64_t count;       /* jobs of the run not yet in the segment's sums */
  uint64_t dur;         /* each one's duration, ns */
  sim_work_stats stats; /* each one's counts */
} sim_run;

#define SIM_RUN_ONE 0x80000000u

/* seg_queue while no segment is open, and once a segment's jobs ran on
 * more than one queue. */
#define SIM_QUEUES_NONE UINT32_MAX
#define SIM_QUEUES_MANY (UINT32_MAX - 1)

/*
 * A device's perfmon state, as its scheduler keeps it. A segment is a run
 * of consecutive jobs with the same effective perfmon (the global one if
 * set, else the job's own, possibly none); segments never overlap in
 * time, and `acc` and `run` are the hardware counters of the current one.
 */
typedef struct sim_pmstate {
  /* What every job reads, together. */
  gp_perfmon *global; /* reference */
  gp_perfmon *cur;    /* effective perfmon of the segment (reference) */
  uint64_t tail;      /* end of the device's last job, any queue */
  uint32_t seg_queue; /* the one queue its jobs ran on, NONE, MANY (the
                         zeroed state is safe: cur is NULL, so the first
                         job with a perfmon switches, which resets it) */
  uint32_t reserved0;
  uint64_t seg_start; /* 0 while no segment is open */
  uint64_t seg_end;
  sim_run run;
  sim_union busy;
  sim_acc acc;
} sim_pmstate;

/* A job kept for periodic sampling until its windows are emitted. */
typedef struct sim_job {
  uint64_t start, end;
  sim_acc acc;
} sim_job;

/*
 * Periodic sampling on a device. The log keeps the jobs that may still
 * reach a window, in the order they were scheduled (the order a window
 * adds them in: floating-point sums depend on it). A job that ended by
 * win_start reaches no window: those before `head` are forgotten, and
 * those in log[head, n) are skipped until they can be dropped without
 * moving a 152-byte job per window (see emit_window()). A reader of
 * log[0, n) sees the forgotten ones too, all ended by win_start.
 */
typedef struct sim_sampling {
  gp__sampler *s;           /* reference; NULL when not sampling */
  uint64_t win_start;       /* host ns: start of the next window */
  uint64_t win_start_trace; /* the same in trace time, as last written */
  sim_job *log;
  size_t head, n, cap; /* jobs log[head, n) kept */
} sim_sampling;

/* A device model's fixed parameters. */
typedef struct sim_model {
  uint32_t model;       /* gp_sim_model */
  const char *name_fmt; /* "%u" gets the device id */
  const char *vendor, *model_name, *architecture, *driver_version;
  uint64_t memory_bytes;
  double dram_bw;                        /* bytes/s */
  double peak_flops;                     /* flops/s */
  double h2d_pinned_bw, h2d_pageable_bw; /* host<->device, bytes/s */
  double p2p_bw;                         /* device<->device across devices */
  double hth_bw;                         /* host to host */
  double fill_bw;                        /* memset */
  uint64_t launch_ns;                    /* fixed cost of a kernel */
  uint64_t copy_ns;                      /* fixed cost of a copy */
  uint32_t compute_units;
  uint32_t core_clock_khz, memory_clock_khz;
  uint32_t max_threads_per_block;
  uint32_t max_threads_per_cu;
  uint32_t max_blocks_per_cu;
  uint32_t registers_per_cu;
  uint32_t shared_per_block, shared_per_cu;
  uint32_t warp;
  uint32_t num_queues;
  gp_device_queue_info queues[SIM_MAX_QUEUES];
  /* Queue indexes by role. */
  uint32_t first_compute, num_compute;
  uint32_t q_h2d, q_d2h, q_p2p;
  /* Environment model. */
  double idle_w, busy_w, idle_c, busy_c;
  int64_t clock_drift_ppb; /* device clock rate error */
} sim_model;

/* A unit of work on a hardware queue, until it is retired into a record. */
typedef struct sim_op {
  uint32_t kind; /* GP_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET */
  bool emit;     /* record it when retired */
  uint64_t correlation_id;
  uint64_t queued, submitted, start, end; /* host ns */
  uint32_t device_id;                     /* gpuperf device id */
  uint32_t dev_index;                     /* simulator device index */
  uint32_t context_id, stream_id;
  uint32_t perfmon_id;
  gp_perfmon *pm;     /* the perfmon that counts the job (borrowed;
                         scheduling counts the job into it and forgets it) */
  gp__sampler *instr; /* instrumented by this sampler (reference) */
  sim_job_key key;    /* the queue; a kernel's launch */
  /* Kernel. */
  uint32_t name_id, demangled_id;
  uint32_t static_shared, registers;
  /* Copy and fill. */
  uint64_t bytes;
  uint8_t copy_kind, src_kind, dst_kind; /* as records keep them */
  uint32_t value;
  uint32_t src_device, dst_device, src_context, dst_context;
  uint32_t flags;
  /* Dependencies: correlation ids waited on. */
  uint32_t num_waits;
  uint64_t waits_inline[SIM_INLINE_WAITS];
  uint64_t *waits_heap; /* when num_waits > SIM_INLINE_WAITS */
  sim_work_stats stats;
  struct sim_extra *extra; /* gp_sim_launch_ex's additions (owned), or NULL */
  /* The source-level records of a kernel (sim_source.c): which kinds
   * (0: none), and its instruction model's trip counts. */
  struct sim_source_work {
    uint32_t loads, stores, fmas;
    uint8_t kinds, cached;
  } src;
} sim_op;

/* One managed range's faults at a kernel's start (sim_managed.c). */
typedef struct sim_um_fault {
  uint64_t addr;   /* the first faulting page */
  uint64_t pages;  /* pages that faulted */
  uint64_t bytes;  /* of them, bytes migrated from the host */
  uint64_t t0, t1; /* when serviced: offsets from the op's start, ns */
  uint32_t access; /* gp_um_access */
  uint32_t reserved0;
} sim_um_fault;

/* One child grid of a CDP launch (sim_cdp.c); times are offsets from the
 * op's start, ns. */
typedef struct sim_cdp_child {
  int64_t grid_id;
  uint64_t queued, submitted, start, end;
  uint32_t parent_block; /* the launching block, linear index */
  uint32_t reserved0;
} sim_cdp_child;

/*
 * What gp_sim_launch_ex adds to a kernel op, written when it retires
 * (gp__sim_extra_emit). One allocation: the struct, then nfaults faults,
 * then nchildren children.
 */
typedef struct sim_extra {
  uint32_t nfaults, nchildren;
  sim_um_fault *faults;
  sim_cdp_child *children;
  /* The children's kernel and launch. */
  uint32_t child_name_id, child_static_shared, child_registers;
  uint32_t child_dynamic_shared;
  gp_sim_dim3 child_grid, child_block;
  gp_sim_dim3 parent_grid; /* to name the launching blocks */
  bool sync;               /* launching blocks waited: preempted */
  bool records;            /* some of its records are enabled (at launch) */
} sim_extra;

typedef struct sim_heap_key {
  uint64_t end, correlation_id;
  uint32_t slot; /* in gp__sim.ops */
} sim_heap_key;

typedef struct sim_queue {
  uint64_t free_at;           /* host ns when the queue is idle again */
  sim_busy log[SIM_BUSY_LOG]; /* recent busy intervals, in order */
  uint32_t log_head, log_count;
} sim_queue;

typedef struct sim_alloc {
  uint64_t addr, bytes;
  uint32_t context_id;
  /* Managed memory (gp_sim_malloc_managed): where each GP_SIM_UM_PAGE
   * page is (SIM_UM_*); NULL for device memory. */
  uint8_t *where;
} sim_alloc;

#define SIM_UM_NOWHERE 0 /* never touched */
#define SIM_UM_HOST 1
#define SIM_UM_DEVICE 2

typedef struct sim_device {
  const sim_model *m;
  uint32_t index;
  uint32_t device_id; /* gpuperf id */
  uint32_t clock_id;
  int64_t clock_offset;   /* device clock = host + offset + drift */
  uint64_t last_snapshot; /* trace time of the latest clock snapshot */
  uint64_t clock_epoch;
  sim_queue queues[SIM_MAX_QUEUES];
  uint64_t next_addr;
  sim_alloc *allocs;
  size_t num_allocs, cap_allocs;
  /* Environment sampling. */
  uint64_t next_env; /* host ns of the next sample */
  double temp_c;
  /* Counters. */
  sim_pmstate pm;
  sim_sampling smp;
} sim_device;

struct gp_sim_context {
  uint32_t id;
  sim_device *dev;
  gp_sim_stream *default_stream;
  gp_sim_stream **streams; /* all streams, default included */
  size_t num_streams, cap_streams;
  gp_sim_event **events;
  size_t num_events, cap_events;
  uint32_t next_stream_id;
  uint32_t next_event_id;
  gp_perfmon *pm; /* an active monitor's perfmon (reference) */
};

/* A pending dependency: work on another stream this stream must wait for. */
typedef struct sim_wait {
  uint64_t correlation_id; /* 0: none recorded (only the time matters) */
  uint64_t done_at;
} sim_wait;

struct gp_sim_stream {
  gp_sim_context *ctx;
  uint32_t id;
  uint32_t ordinal;   /* 0 for the default stream, then 1, 2, ... */
  uint64_t tail_end;  /* host ns when the last op ends */
  uint64_t tail_corr; /* its correlation id */
  sim_wait *waits;    /* for the next op */
  uint32_t num_waits;
  size_t cap_waits;
  gp_perfmon *pm; /* carried by its jobs (reference), or NULL */
};

struct gp_sim_event {
  gp_sim_context *ctx;
  uint32_t id;
  bool recorded;
  uint64_t correlation_id; /* last op captured, 0 if none */
  uint64_t done_at;
  uint32_t dev_index;
};

struct gp_sim_kernel {
  gp_sim_kernel_desc desc; /* strings owned */
  uint32_t name_id, demangled_id;
  uint64_t serial; /* unique in the process, never 0 (sim_job_key) */
};

/* The simulator. */
typedef struct sim_state {
  pthread_mutex_t lock;
  bool initialised;
  uint32_t time_mode;
  _Atomic uint64_t vnow; /* virtual host time, ns */
  sim_device devices[GP_SIM_MAX_DEVICES];
  uint32_t num_devices;
  gp_sim_context **contexts;
  size_t num_contexts, cap_contexts;
  /* In-flight ops: a binary min-heap by (end, correlation id) of small
   * keys, each naming the op's slot in ops (slots not in use are on the
   * free stack), so that sifting moves 24 bytes, not whole ops. */
  sim_heap_key *heap;
  sim_op *ops;
  uint32_t *free_slots;
  size_t heap_n, heap_cap, num_free;
  /* Pinned host ranges. */
  struct {
    uint64_t addr, bytes;
  } * pinned;
  size_t num_pinned, cap_pinned;
  /* Devices whose catalogs are to be announced once the lock is free. */
  _Atomic uint32_t num_announce;
  uint32_t announce[GP_SIM_MAX_DEVICES];
} sim_state;

/* Hidden like every internal symbol: position-independent code then
 * addresses it directly rather than loading its address from the GOT. */
extern sim_state gp__sim __attribute__((visibility("hidden")));

/* True on the thread holding gp__sim.lock (taken with gp__sim_lock). */
extern GP_TLS bool gp__sim_locked;

static inline void gp__sim_lock(void) {
  pthread_mutex_lock(&gp__sim.lock);
  gp__sim_locked = true;
}

static inline void gp__sim_unlock(void) {
  gp__sim_locked = false;
  pthread_mutex_unlock(&gp__sim.lock);
}

/* An API call being made: set by gp__sim_api_begin(). */
typedef struct sim_api_call {
  uint32_t cbid;
  uint64_t correlation_id;
  uint64_t start;
  bool cb; /* the API callbacks were called at entry: at exit too */
  gp__cb_api_call api;
  gp__cb_held held; /* callbacks raised under the lock */
} sim_api_call;

/* sim.c (see there for each contract) */
int gp__sim_api_begin_at(sim_api_call *c, uint32_t cbid,
                         const gp_sim_context *ctx, const gp_sim_stream *s);
static inline int gp__sim_api_begin(sim_api_call *c, uint32_t cbid) {
  return gp__sim_api_begin_at(c, cbid, NULL, NULL);
}
int gp__sim_api_end(sim_api_call *c, int rc);
uint64_t gp__sim_api_cost(uint32_t cbid);
void gp__sim_emit_sync(const sim_api_call *c, uint32_t kind, sim_device *d,
                       uint32_t context_id, uint32_t stream_id,
                       uint32_t event_id, uint64_t wait_id);
int gp__sim_grow(void **arr, size_t *cap, size_t need, size_t elem);
void gp__sim_remove_ptr(void **arr, size_t *n, void *p);
bool gp__sim_context_live(const gp_sim_context *ctx);
uint64_t gp__sim_context_tail(const gp_sim_context *ctx, uint64_t *corr);
sim_device *gp__sim_device_of(uint64_t addr);
sim_alloc *gp__sim_find_alloc(sim_device *d, uint64_t addr, uint64_t bytes);
bool gp__sim_host_pinned(uint64_t addr, uint64_t bytes);

/* model.c */
const sim_model *gp__sim_model_get(uint32_t model);
uint64_t gp__sim_kernel_cost(const sim_model *m, const gp_sim_kernel_desc *k,
                             gp_sim_dim3 grid, gp_sim_dim3 block,
                             uint32_t dynamic_shared, sim_work_stats *st);
uint64_t gp__sim_copy_cost(const sim_model *m, uint32_t copy_kind,
                           uint32_t src_kind, uint32_t dst_kind,
                           uint64_t bytes);
uint64_t gp__sim_fill_cost(const sim_model *m, uint64_t bytes);
const char *gp__sim_cbid_name(uint32_t cbid);

/* sim_source.c (with gp__sim.lock held): at launch, which source-level
 * kinds a kernel op records and its model's counts; at retirement, its
 * records. */
void gp__sim_source_prepare(sim_op *op, const gp_sim_kernel_desc *k);
void gp__sim_source_emit(const sim_op *op, const sim_model *m);

/* sched.c (all with gp__sim.lock held) */
uint64_t gp__sim_now(void);
void gp__sim_advance(uint64_t ns);
void gp__sim_wait_until(uint64_t t);
uint64_t gp__sim_device_time(const sim_device *d, uint64_t host_ns);
void gp__sim_clock_snapshot(sim_device *d);
int gp__sim_schedule(gp_sim_stream *s, sim_op *op, uint64_t duration);
void gp__sim_retire(bool all);
void gp__sim_flush_hook(void *user, bool forced);
double gp__sim_busy_fraction(const sim_device *d, uint64_t t0, uint64_t t1);
void gp__sim_perfmon_fold(sim_device *d);
uint64_t gp__sim_perfmon_last_end(const sim_device *d, const gp_perfmon *pm);
void gp__sim_sampling_emit(sim_device *d, uint64_t until, bool final);
void gp__sim_sampling_seed(sim_device *d);

/* sim.c */
void gp__sim_announce(void);

/* sched.c: trace time of host time h on device d. */
uint64_t gp__sim_to_trace(const sim_device *d, uint64_t h);

/* sim_managed.c (with gp__sim.lock held) */
int gp__sim_um_faults(gp_sim_stream *s, const gp_sim_managed_range *r,
                      uint32_t n, sim_um_fault *out, uint64_t *ns);
bool gp__sim_um_check(const gp_sim_stream *s, const gp_sim_managed_range *r,
                      uint32_t n);
/* The UNIFIED_MEMORY_COUNTER records of a retired kernel op's faults. */
void gp__sim_um_emit(const sim_op *op, const sim_device *d);

/* sim_cdp.c (with gp__sim.lock held) */
uint64_t gp__sim_cdp_plan(const sim_model *m, uint64_t parent_ns,
                          uint64_t child_ns, uint32_t n, bool sync,
                          sim_cdp_child *out);
void gp__sim_extra_emit(const sim_op *op, const sim_device *d);

/* simcounters.c */
const gp__catalog *gp__sim_catalog(uint32_t model);
extern const gp__provider_ops gp__sim_provider;
void gp__sim_op_acc(const sim_op *op, const sim_model *m, sim_acc *a);
double gp__sim_add_n(double s, double x, uint64_t n);
void gp__sim_counter_eval(const sim_model *m, const gp__catalog *cat,
                          uint32_t index, const sim_acc *a, double span_ns,
                          double busy_ns, double *num, double *den);
void gp__sim_counter_eval_n(const sim_model *m, const gp__catalog *cat,
                            const uint32_t *index, uint32_t n, const sim_acc *a,
                            double span_ns, double busy_ns, double *num,
                            double *den);
sim_device *gp__sim_device_by_id(uint32_t device_id);

/*
 * simevents.c: writes the EVENT, METRIC, EVENT_INSTANCE and
 * METRIC_INSTANCE records (those enabled) of kernel op of device d,
 * instrumented by s, whose counters' values over it are (num[i], den[i])
 * for s->index[i]; start and end are the kernel's in trace time. Nothing
 * for copies and fills, nor when none of the four kinds is enabled.
 */
void gp__sim_emit_events(const sim_op *op, const sim_device *d,
                         const gp__sampler *s, const double *num,
                         const double *den, uint64_t start, uint64_t end);

/* Adds scale times *src to *dst, sum by sum. Inline and unrolled: in a
 * loop over jobs the sums of *dst stay in registers (or pair up into
 * vector operations, whose lanes round as the scalar ones do: the sums
 * are the same to the bit either way). */
static inline void gp__sim_acc_add(sim_acc *restrict dst,
                                   const sim_acc *restrict src, double scale) {
  double *d = (double *)dst;
  const double *s = (const double *)src;
#pragma GCC unroll 32
  for (size_t i = 0; i < sizeof(sim_acc) / sizeof(double); i++)
    d[i] += s[i] * scale;
}

/* Adds one kernel job of duration dur and counts *st to *a. */
static inline void gp__sim_acc_add_kernel(sim_acc *restrict a,
                                          const sim_work_stats *restrict st,
                                          double dur) {
  a->jobs += 1.0;
  a->work_ns += dur;
  a->kernel_ns += dur;
  /* Unrolled, one by one: the cost model has just stored these one by
   * one, and a wider load spanning two of them could not be forwarded
   * from the store buffer. */
  double *d = (double *)&a->k;
  const double *s = (const double *)st;
#pragma GCC unroll 16
  for (size_t i = 0; i < sizeof(sim_work_stats) / sizeof(double); i++)
    d[i] += s[i];
}

/* Adds what op did to *a (inline, adds only; the cost model derived the
 * rest): a kernel's op->stats, a copy's or fill's bytes. */
static inline void gp__sim_op_acc_add(sim_acc *a, const sim_op *op,
                                      const sim_model *m) {
  double dur = (double)(op->end - op->start);
  if (op->kind == GP_ACTIVITY_KIND_KERNEL) {
    gp__sim_acc_add_kernel(a, &op->stats, dur);
    return;
  }
  a->jobs += 1.0;
  a->work_ns += dur;
  switch (op->kind) {
  case GP_ACTIVITY_KIND_MEMCPY: {
    double b = (double)op->bytes;
    /* On the V3D, host and GPU share one DRAM: a copy reads and writes
     * it; elsewhere each side counts its own. */
    bool shared = m->model == GP_SIM_MODEL_V3D;
    if (shared || op->src_device == op->device_id)
      a->k.dram_read += b;
    if (shared || op->dst_device == op->device_id)
      a->k.dram_write += b;
    break;
  }
  case GP_ACTIVITY_KIND_MEMSET:
    a->k.dram_write += (double)op->bytes;
    break;
  default:
    break;
  }
}

#endif /* GPUPERF_SIM_INT_H */
