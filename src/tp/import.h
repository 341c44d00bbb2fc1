/*
 * import.h - the state of one import, shared by the tokenizer (reader.c)
 * and the parsers (parse_*.c, tracks.c).
 *
 * Import runs in two passes, as Perfetto's does:
 *
 *  1. Tokenize, in file order: frame packets, inflate compressed_packets,
 *     track sequences (incremental state, interning, packet defaults),
 *     take clock snapshots, convert every timestamp to the trace clock,
 *     and handle what must be seen in file order (GpuInfo, inline GPU
 *     counter descriptors, track descriptors). Each packet (and each
 *     ftrace event) to parse becomes a 16-byte entry {ts, ref}, pushed
 *     into one of the queues that Perfetto's sorter would push it into
 *     (a machine's packets, its track events, an ftrace CPU's events).
 *  2. Merge the queues by ts as Perfetto's sorter does (sort.c), then
 *     parse the entries in that order into the tables of store.h. The
 *     order decides the ids of tracks, slices and other rows.
 *
 * An entry's ref packs what parse needs to find the data again:
 *
 *   bits 62..63  kind (GP_TP_ENT_PACKET, GP_TP_ENT_FTRACE, GP_TP_ENT_SKIP,
 *                GP_TP_ENT_COMPACT)
 *   bits 40..61  generation (sequence state the packet was tokenized in)
 *   bits  0..39  source offset of the tag of the field to parse: the
 *                packet's data field (gpu_render_stage_event, ...) or
 *                the FtraceEvent in its bundle; for a compact sched
 *                event, its index in imp->cs (queues.c)
 *
 * Source offsets below file_size are in the file; above it, in the buffer
 * of data inflated from compressed_packets.
 */
#ifndef GPUPERF_TP_IMPORT_H
#define GPUPERF_TP_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "gpuperf/tp.h"
#include "perfetto/pb.h"
#include "tp/clocks.h"
#include "tp/pbfast.h"
#include "tp/procs.h"
#include "tp/store.h"
#include "tp/util.h"

#define GP_TP_ENT_PACKET 0u
#define GP_TP_ENT_FTRACE 1u
#define GP_TP_ENT_SKIP 2u    /* a packet not imported: ordering only */
#define GP_TP_ENT_COMPACT 3u /* a compact sched event (imp->cs) */
#define GP_TP_GEN_BITS 22
#define GP_TP_OFF_BITS 40
#define GP_TP_MAX_GENS (1u << GP_TP_GEN_BITS)

typedef struct gp__tp_entry {
  int64_t ts;
  uint64_t ref;
} gp__tp_entry;

/* The entries pushed into one queue of Perfetto's sorter, in push order. */
typedef GP_TP_VEC(gp__tp_entry) gp__tp_queue;

/*
 * The windows of Perfetto's sorter. It sorts the whole trace at its end,
 * unless the service flushed its data sources twice before a read of its
 * buffers (TracingServiceEvent): then, at that read, it hands out what was
 * pushed before the previous such read, in order, and drops whatever is
 * pushed later with an earlier timestamp (sorter_push_event_out_of_order).
 * A window is the queues' lengths at one such read, kept as the changes
 * since the window before.
 */
typedef struct gp__tp_wchange {
  uint32_t queue, len;
} gp__tp_wchange;
typedef struct gp__tp_windows {
  uint32_t flushes; /* all_data_sources_flushed since the last window */
  bool full_sort;   /* a packet waits for a clock: one sort at the end */
  GP_TP_VEC(gp__tp_wchange) changes;
  GP_TP_VEC(uint32_t) ends;   /* window k's changes end at ends[k] */
  GP_TP_VEC(uint8_t) dirty;   /* by queue: pushed since the last window */
  GP_TP_VEC(uint32_t) pushed; /* the dirty queues */
} gp__tp_windows;

/* The queues of one machine's reader, made when Perfetto's importer makes
 * them (queues.c): its packets and its track events when the machine is
 * first seen; those of CPUs 0..c of a kind of ftrace data when data of
 * that kind from CPU c is first pushed. */
enum { GP_TP_FQ_EVENTS, GP_TP_FQ_SWITCH, GP_TP_FQ_WAKING, GP_TP_FQ_KINDS };
typedef struct gp__tp_readerq {
  bool made;
  uint32_t packets, track_events;
  GP_TP_VEC(uint32_t) cpu[GP_TP_FQ_KINDS]; /* by CPU: index in queues */
} gp__tp_readerq;

static inline uint64_t gp__tp_ref(uint32_t kind, uint32_t gen, uint64_t off) {
  return (uint64_t)kind << 62 | (uint64_t)gen << GP_TP_OFF_BITS | off;
}
static inline uint32_t gp__tp_ref_kind(uint64_t ref) {
  return (uint32_t)(ref >> 62);
}
static inline uint32_t gp__tp_ref_gen(uint64_t ref) {
  return (uint32_t)(ref >> GP_TP_OFF_BITS) & (GP_TP_MAX_GENS - 1);
}
static inline uint64_t gp__tp_ref_off(uint64_t ref) {
  return ref & ((1ull << GP_TP_OFF_BITS) - 1);
}

/* A generation of a sequence: its interning namespace and defaults. */
typedef struct gp__tp_gen {
  uint32_t seq_id;
  uint32_t machine;  /* machine row of the sequence's packets */
  uint32_t ns;       /* interning namespace */
  uint32_t ts_clock; /* trace_packet_defaults.timestamp_clock_id, 0 none */
  uint64_t ted_off;  /* track_event_defaults message, ted_len 0 = none */
  uint32_t ted_len;
} gp__tp_gen;

typedef struct gp__tp_seq {
  uint32_t gen;
  bool valid;
  /* The thread of the last TrackDescriptor with a thread (pid and tid)
   * seen on the sequence while its state was valid, kept across clears:
   * Perfetto's thread descriptor of the sequence, from which an event on
   * a process or global track gets legacy_event.passthrough_utid. */
  bool td_valid;
  int64_t td_pid, td_tid;
  bool first_packet; /* a packet said first_packet_on_sequence */
  /* For TraceStats.writer_stats (parse_stats.c): packets with
   * previous_packet_dropped after the first, each loss cause bit
   * (DATA_LOSS_READ_GAP = 2 ... DATA_LOSS_SMB_FULL = 256) among them, and
   * packets needing incremental state, total and skipped. */
  uint32_t dropped, loss[8], needs_state, needs_state_skipped;
  bool ftrace_setup_seen; /* its ftrace setup errors were counted */
} gp__tp_seq;

/* An interned message: (ns, field, iid) -> where its bytes are. */
typedef struct gp__tp_interned {
  uint64_t off; /* payload offset in the source */
  uint32_t len;
  uint32_t cache; /* parser's decoded form (string id, ...), NONE = none */
} gp__tp_interned;

/* InternedData field numbers the parsers look up. */
enum {
  GP_TP_IN_EVENT_CATEGORIES = 1,
  GP_TP_IN_EVENT_NAMES = 2,
  GP_TP_IN_DEBUG_ANNOTATION_NAMES = 3,
  GP_TP_IN_FUNCTION_NAMES = 5,
  GP_TP_IN_VULKAN_MEMORY_KEYS = 22,
  GP_TP_IN_KERNEL_SYMBOLS = 26,
  GP_TP_IN_GRAPHICS_CONTEXTS = 23,
  GP_TP_IN_GPU_SPECIFICATIONS = 24,
  GP_TP_IN_DEBUG_ANNOTATION_STRING_VALUES = 29,
  GP_TP_IN_GPU_COUNTER_DESCRIPTORS = 47,
  GP_TP_IN_COMPUTE_KERNELS = 1000,
  GP_TP_IN_COMPUTE_ARG_NAMES = 1001,
};

/* A region of the inflate buffer and where its compressed bytes were. */
typedef struct gp__tp_inflated_region {
  uint64_t start; /* source offset of the first inflated byte */
  uint64_t size;
  uint64_t file_off; /* offset of the compressed_packets field */
} gp__tp_inflated_region;

/* A counter id's track (GPU counter descriptors, modes 1 and 2). */
typedef struct gp__tp_ctr_spec {
  uint32_t track;
  bool forwards;
} gp__tp_ctr_spec;

/* Track-event descriptor state, by uuid. */
typedef struct gp__tp_desc {
  uint64_t uuid;
  uint64_t parent_uuid;
  uint32_t name;    /* string or NONE */
  int64_t pid, tid; /* -1 = absent */
  bool is_counter;
  bool counter_incremental;
  int64_t counter_unit_multiplier;
  uint32_t counter_unit; /* string */
  uint32_t track;        /* created lazily, NONE */
  double counter_last;   /* incremental counters */
  uint32_t machine;
  uint8_t merge;          /* sibling_merge_behavior: GP_TP_MERGE_* */
  uint32_t merge_key;     /* string, for GP_TP_MERGE_BY_KEY */
  uint32_t upid;          /* the process a process descriptor named, or NONE */
  uint32_t pt_name;       /* its process or thread descriptor's name */
  bool is_process;        /* a process descriptor (pid, no thread) */
  uint32_t description;   /* string or NONE */
  uint8_t child_ordering; /* ChildTracksOrdering: 0 unknown */
  bool has_rank;
  int64_t sibling_order_rank;
  bool reserved;    /* a descriptor was seen (not only a reference) */
  uint8_t bad_tree; /* its ancestors: 1 loop, 2 too deep (events dropped) */
} gp__tp_desc;

/* How a child track merges with its siblings (Perfetto's reservation). */
enum { GP_TP_MERGE_BY_NAME = 0, GP_TP_MERGE_NONE = 1, GP_TP_MERGE_BY_KEY = 2 };

/* An open slice on a track's stack. */
typedef struct gp__tp_open {
  uint32_t slice;
  int64_t end; /* INT64_MIN: not ended yet (begin/end pair) */
} gp__tp_open;

typedef struct gp__tp_stack {
  GP_TP_VEC(gp__tp_open) s;
} gp__tp_stack;

/* A render-stage track-compression set: tracks sharing dimensions, in
 * creation order. A stage goes to the first track free at its start;
 * since stages arrive in time order, a freed track stays free, so two
 * heaps find that track in O(log n): busy tracks by end, free ones by
 * index (render_tracks.c). */
typedef struct gp__tp_cset {
  uint32_t dims;  /* the dimension arg set they share; each track's own
                     adds track_compressor_idx, its index in t */
  uint32_t group; /* the tracks' track_group_id */
  GP_TP_VEC(struct gp__tp_cset_track {
    uint32_t track;
    int64_t end;
  })
  t;
  GP_TP_VEC(struct gp__tp_cset_busy {
    int64_t end;
    uint32_t idx; /* in t */
  })
  busy;                      /* min-heap by (end, idx) */
  GP_TP_VEC(uint32_t) freed; /* min-heap of indexes in t */
  int64_t last_ts;           /* latest start seen */
} gp__tp_cset;

/* A link of a list of slice ids (flows.c): lists are circular, and a
 * list is named by its last link, whose next is the first. */
typedef struct gp__tp_link {
  uint32_t slice;
  uint32_t next; /* index in links */
} gp__tp_link;

/* Per render-stage event id: the GPU slices with that id (the first in
 * `slice`, more in the list `more`), the GPU slices waiting on it (the
 * list `waiters`), and the track-event slices that submitted it or wait
 * for it (the latest of each). Lists are GP_TP_NONE while empty. */
typedef struct gp__tp_evflow {
  uint32_t id_lo, id_hi; /* the event id (two words: 28 bytes, not 32) */
  uint32_t slice;
  uint32_t more;
  uint32_t waiters;
  uint32_t submitter;
  uint32_t te_waiter;
} gp__tp_evflow;

/* A dma_fence timeline (one fence context): its track and the seqnos
 * pending on it, q.v[head..n) (parse_drm.c). */
typedef struct gp__tp_fence_tl {
  uint32_t track;
  bool has_emit; /* dma_fence_emit seen: dma_fence_init is ignored */
  GP_TP_VEC(uint32_t) q;
  size_t head;
} gp__tp_fence_tl;

/* A GPU scheduler job: a dma-fence (context, seqno) since Linux 6.17,
 * else a global id (the fence's address) and a local id. */
typedef struct gp__tp_sched_job {
  bool fence;
  uint64_t a, b; /* fence: context, seqno; else global id, local id */
} gp__tp_sched_job;

/* A GPU scheduler ring: its track, its running jobs (q.v[head..n), the
 * front's slice open), and the slices of queued jobs by their local id or
 * fence (parse_drm_sched.c). */
typedef struct gp__tp_sched_ring {
  uint32_t track;
  GP_TP_VEC(gp__tp_sched_job) q;
  size_t head;
  gp__tp_map out_local;  /* local id -> queue slice */
  gp__tp_map2 out_fence; /* (context, seqno) -> queue slice */
} gp__tp_sched_ring;

/* A compact sched_switch or sched_waking event, decoded when tokenized
 * (as Perfetto's tokenizer makes its InlineSchedSwitch/Waking): the form
 * the parser reads. */
typedef struct gp__tp_csched {
  int64_t prev_state;                /* switch */
  int32_t pid;                       /* switch: next_pid; waking: pid */
  int32_t prio;                      /* switch: next_prio; waking: prio */
  uint32_t comm;                     /* string */
  uint16_t target_cpu, common_flags; /* waking */
  bool waking;
} gp__tp_csched;

/* The form they wait in until parsed, 16 bytes: values that do not fit
 * (wide) wait whole in gp__tp_cs.wide. */
typedef struct gp__tp_cs_packed {
  int32_t pid;
  uint32_t comm;
  int32_t state; /* switch: prev_state; waking: target_cpu << 16 | flags */
  int16_t prio;
  uint8_t waking;
  uint8_t wide;
} gp__tp_cs_packed;

/* The compact sched events of an import, in chunks of GP_TP_CS_CHUNK; a
 * chunk is freed once its last event is parsed, so that they are not all
 * held beside the tables the parse makes. */
#define GP_TP_CS_SHIFT 16
#define GP_TP_CS_CHUNK (1u << GP_TP_CS_SHIFT)
typedef struct gp__tp_cs {
  GP_TP_VEC(gp__tp_cs_packed *) chunks;
  GP_TP_VEC(uint32_t) left; /* by chunk: events not parsed yet */
  uint64_t n;
  gp__tp_map wide_at; /* index -> position in wide */
  GP_TP_VEC(gp__tp_csched) wide;
} gp__tp_cs;

/* What the last sched_switch on a CPU said (parse_sched.c). */
typedef struct gp__tp_cpu_sched {
  int64_t last_pid;
  uint32_t slice;     /* its open sched slice, NONE */
  uint32_t last_utid; /* NONE: no switch seen */
  int32_t last_prio;
} gp__tp_cpu_sched;

/* Scheduling state of an import (parse_sched.c). */
typedef struct gp__tp_sched_state {
  GP_TP_VEC(gp__tp_cpu_sched) cpus;
  gp__tp_map cpu_by_key;          /* machine << 32 | cpu -> index in cpus */
  GP_TP_VEC(uint32_t) last_state; /* by utid: last thread_state row */
  GP_TP_VEC(int) kernel;          /* by machine: its kernel version, 0 */
  bool drops_known;
  int64_t drop_before, soft_drop_before;
  gp__tp_argb argb; /* the args of the row being made */
  uint32_t k_sw[7], k_wk[4], k_running, k_runnable, k_switch, k_waking;
} gp__tp_sched_state;

/* Legacy (Specifications) hardware queues and stages. */
typedef struct gp__tp_hwq {
  uint32_t name;
  uint32_t description;
  bool set;
} gp__tp_hwq;

typedef struct gp__tp_stage {
  uint32_t name;
  uint32_t description;
} gp__tp_stage;

/* Decoded interned messages, cached (gp__tp_interned.cache indexes). */
typedef struct gp__tp_spec_cache {
  uint32_t name, description;
  int64_t category;
} gp__tp_spec_cache;

typedef struct gp__tp_args_cache {
  uint32_t first, n; /* in imp->cached_args */
  int64_t pid;       /* graphics contexts */
} gp__tp_args_cache;

/* A small direct-mapped cache of GPU counter lookups. */
#define GP_TP_CTR_CACHE 256
typedef struct gp__tp_ctr_cache {
  uint32_t ns, id;
  uint64_t iid;
  uint32_t spec; /* GP_TP_NONE: slot empty */
  uint32_t machine;
  bool global;
} gp__tp_ctr_cache;

/* A slot of the evflows' index: the evflow and the high half of its id's
 * hash, so that a probe reads the evflow only when the tags match. */
typedef struct gp__tp_flow_slot {
  uint32_t e, tag;
} gp__tp_flow_slot;

typedef struct gp__tp_importer {
  gp__tp_db *db;
  const char *name; /* file name for messages */

  /* Source bytes. */
  const uint8_t *file;
  uint64_t file_size;
  GP_TP_VEC(uint8_t) inflated;
  GP_TP_VEC(gp__tp_inflated_region) regions;
  bool allow_truncated;
  /* The source is a read-only private mapping of the trace file, owned by
   * the caller: pages already parsed may be dropped (madvise) to keep the
   * peak memory down; touching them again reads the file again. */
  bool release_input;
  uint64_t released; /* bytes from the start dropped so far */
  /* gp_tp_options.progress: the import's work is 2 x file_size units,
   * the file's bytes framed, then the offsets parsed up to. */
  void (*progress)(void *user, const char *phase, uint64_t done,
                   uint64_t total);
  void *progress_user;
  /* gp_tp_options.stream (stream.c): what each track's rows wait for,
   * by track id (GP_TP_STREAM_*), and whether any waits for the end. */
  int (*stream)(void *user, const gp_tp_stream_row *row);
  void *stream_user;
  GP_TP_VEC(uint8_t) stream_track;
  bool stream_deferred;

  /* First error. */
  int err;
  uint64_t err_off;
  char errmsg[512];

  /* Tokenizer. */
  gp__tp_clocks clocks;
  GP_TP_VEC(gp__tp_gen) gens;
  GP_TP_VEC(gp__tp_seq) seqs;
  gp__tp_map seq_by_id; /* seq id -> index in seqs */
  uint32_t next_ns;
  GP_TP_VEC(gp__tp_interned) interned;
  gp__tp_map2 interned_by_key; /* (ns << 32 | field, iid) -> index */
  int64_t max_ts;
  GP_TP_VEC(gp__tp_queue) queues; /* in the order Perfetto makes them */
  GP_TP_VEC(uint32_t) queue_cpu;  /* by queue: its ftrace CPU, or NONE */
  gp__tp_cs cs;                   /* compact sched events, as tokenized */
  /* Windows (queues.c): where Perfetto's sorter, in a trace with flushes
   * and buffer reads of the service, hands out what is in by then. */
  gp__tp_windows win;
  /* What the service said of the trace (service.c): its last TraceConfig
   * (has_config), and its version's major number (-1: none given). */
  bool has_config, write_into_file, flush_period;
  int svc_major;
  gp__tp_map istat_by_key; /* stat << 32 | idx -> index in db->istats */
  GP_TP_VEC(gp__tp_readerq) readerq; /* by machine row */
  GP_TP_VEC(struct gp__tp_deferred {
    uint64_t ref;
    uint64_t clock_key;
    int64_t ts;
  })
  deferred;
  bool host_used;
  bool adopted;
  uint64_t adopted_raw;
  gp__tp_map machine_by_raw; /* raw machine id -> machine row */

  /* Parser: shared trackers. */
  gp__tp_map gpu_by_num;    /* machine << 32 | gpu -> gpu row */
  gp__tp_map track_by_dims; /* type << 32 | dims set -> track */
  gp__tp_map upid_by_pid;   /* machine << 32 | pid -> upid */
  gp__tp_map uuid_by_upid;  /* upid -> its process descriptor's uuid */
  gp__tp_map utid_by_tid;   /* machine << 32 | tid -> utid (live) */
  gp__tp_procs procs;       /* the rest of the process tracker */
  gp__tp_sched_state sched;
  /* When the service started tracing (TracingServiceEvent), and from
   * when every CPU's ftrace data is complete (the latest first-bundle
   * previous_bundle_end_timestamp); INT64_MIN: not said. */
  int64_t tracing_started_ts, ftrace_data_start;
  gp__tp_map ftrace_first; /* machine << 32 | cpu -> 1: first bundle seen */
  GP_TP_VEC(gp__tp_stack) stacks; /* by track id */

  /* GPU counters. */
  gp__tp_map ctr_global;    /* machine << 32 | counter id -> ctr_spec idx */
  gp__tp_map2 ctr_interned; /* (ns << 32 | counter id, iid) -> spec idx */
  gp__tp_map2 desc_done;    /* (ns, iid) -> 1 once processed */
  GP_TP_VEC(gp__tp_ctr_spec) ctr_specs;
  GP_TP_VEC(uint32_t) last_counter_row; /* by track id, backwards values */

  /* Render stages. */
  GP_TP_VEC(gp__tp_hwq) hwq_legacy;
  gp__tp_map hwq_placeholder; /* hw queue id -> 1 while it needs a name */
  GP_TP_VEC(gp__tp_stage) stage_legacy;
  gp__tp_map cset_by_dims; /* dims set -> index in csets */
  GP_TP_VEC(gp__tp_cset) csets;
  gp__tp_map ctx_seen;     /* graphics context id -> 1 */
  gp__tp_map2 debug_names; /* (object type, handle) -> string id */
  GP_TP_VEC(gp__tp_evflow) evflows;
  GP_TP_VEC(gp__tp_flow_slot)
  flow_slots;                   /* hash index of evflows by id: n slots,
                                   a power of two, GP_TP_NONE = empty */
  GP_TP_VEC(gp__tp_link) links; /* of the evflows' lists */

  /* Caches of decoded interned messages and hot lookups. */
  GP_TP_VEC(gp__tp_spec_cache) spec_cache;
  GP_TP_VEC(gp__tp_args_cache) args_cache;
  GP_TP_VEC(gp__tp_arg) cached_args;
  gp__tp_map2 track_cache; /* (gpu << 33 | iid << 32 | name, hwq) -> cset */
  gp__tp_ctr_cache ctr_cache[GP_TP_CTR_CACHE];
  uint32_t k_launch[6]; /* launch.grid_size.x ... launch.workgroup_size.z */
  uint32_t k_kernel[3]; /* kernel_name, kernel_demangled_name, arch */
  uint32_t k_dims[5];   /* ugpu, gpu, render_stage_source, hwqueue_* */
  uint32_t k_src_iid, k_src_id;
  uint32_t k_cidx;       /* track_compressor_idx */
  uint32_t track_groups; /* track groups (compression sets) so far */

  /* dma_fence timelines. */
  gp__tp_map fence_by_ctx; /* machine << 32 | context -> index in fences */
  GP_TP_VEC(gp__tp_fence_tl) fences;

  /* GPU scheduler rings (parse_drm_sched.c). */
  gp__tp_map ring_by_name; /* machine << 32 | name string -> index */
  GP_TP_VEC(gp__tp_sched_ring) rings;
  gp__tp_map2 busy_fence; /* running job (fence context, seqno) -> ring */
  gp__tp_map busy_global; /* running job (global id) -> ring */

  /* ftrace_event (parse_raw.c): the interned names of the events and
   * fields of ftrace_desc.c, string id + 1 (0: not interned yet), events
   * by id then fields by row; allocated on first use. */
  uint32_t *ft_names;
  /* The generation of the ftrace event being parsed (reader.c), whose
   * interned kernel symbols name its kernel function fields. */
  uint32_t ftrace_gen;
  /* SysStats (parse_sysstats.c): SystemInfo.page_size (0 until one says,
   * 4096 if one says 0), and each disk's last counters, by device name
   * (a string) -> index in disks. */
  uint32_t page_size;
  gp__tp_map disk_by_name;
  GP_TP_VEC(struct gp__tp_disk { int64_t prev[8]; }) disks;

  /* Singleton tracks. */
  uint32_t gpu_log_track;
  uint32_t vulkan_events_track;

  /* Track events. */
  GP_TP_VEC(gp__tp_desc) descs;
  gp__tp_map desc_by_uuid; /* uuid -> index in descs */
  gp__tp_map running_sum;  /* vulkan memory counters: track -> value bits */
  gp__tp_map flow_v1;      /* track-event flow id -> slice (pending) */

  /* Counts for the caller. */
  uint64_t packets;
  uint64_t events; /* entries parsed */
} gp__tp_importer;

/* ------------------------------------------------------------------ */
/* Errors                                                                */

/*
 * Records the first error: code, source offset (translated to a file
 * offset when it falls in inflated data) and a printf-style message.
 * Returns code.
 */
int gp__tp_fail(gp__tp_importer *imp, int code, uint64_t off, const char *fmt,
                ...) __attribute__((format(printf, 4, 5)));

/* GP_ECORRUPT at the reader's current offset, naming what was decoded. */
int gp__tp_corrupt(gp__tp_importer *imp, const gp__pb_reader *r,
                   const char *what);

/* Increments a stat. */
static inline void gp__tp_stat(gp__tp_importer *imp, int stat, int64_t n) {
  imp->db->stats[stat] += n;
}

/* Increments an indexed stat's value for idx (service.c). */
int gp__tp_stat_idx(gp__tp_importer *imp, int stat, int64_t idx, int64_t n);

/* Sets an indexed stat's value for idx, adding its row if there is none,
 * as Perfetto's SetIndexedStats (service.c). 0 or GP_ENOMEM. */
int gp__tp_stat_idx_set(gp__tp_importer *imp, int stat, int64_t idx, int64_t v);

/* Whether an indexed stat has a row for idx; its value into *v if so
 * (service.c). */
bool gp__tp_stat_idx_get(const gp__tp_importer *imp, int stat, int64_t idx,
                         int64_t *v);

/* ------------------------------------------------------------------ */
/* Source access                                                         */

static inline const uint8_t *gp__tp_src(const gp__tp_importer *imp,
                                        uint64_t off) {
  return off < imp->file_size ? imp->file + off
                              : imp->inflated.v + (off - imp->file_size);
}

/* Source offset of a pointer into the file or the inflate buffer. */
static inline uint64_t gp__tp_off(const gp__tp_importer *imp,
                                  const uint8_t *p) {
  if (p >= imp->file && p <= imp->file + imp->file_size)
    return (uint64_t)(p - imp->file);
  return imp->file_size + (uint64_t)(p - imp->inflated.v);
}

/* A reader over a message stored at source offset off, length len. */
static inline void gp__tp_reader_at(const gp__tp_importer *imp,
                                    gp__pb_reader *r, uint64_t off,
                                    size_t len) {
  gp__pb_reader_init(r, gp__tp_src(imp, off), len, off);
}

/* ------------------------------------------------------------------ */
/* Interning                                                             */

/* The interned entry (ns, field, iid), or NULL. */
gp__tp_interned *gp__tp_interned_get(gp__tp_importer *imp, uint32_t ns,
                                     uint32_t field, uint64_t iid);

/*
 * The name of an interned message whose string field `str_field` (2 for
 * EventName/InternedString/...) gives it: interned in the string pool and
 * cached. GP_TP_NONE if absent. 0 or a negative code in *rc.
 */
uint32_t gp__tp_interned_str(gp__tp_importer *imp, uint32_t gen, uint32_t field,
                             uint64_t iid, uint32_t str_field, int *rc);

/* ------------------------------------------------------------------ */
/* Sequences (seq.c)                                                     */

/* A new generation for seq_id: a copy of *copy (new defaults, machine)
 * or, with copy NULL, a fresh interning namespace. Its index in *out. */
int gp__tp_seq_new_gen(gp__tp_importer *imp, uint32_t seq_id,
                       const gp__tp_gen *copy, uint32_t *out, uint64_t off);

/* The state of sequence seq_id, created (invalid) on first sight. */
int gp__tp_seq_get(gp__tp_importer *imp, uint32_t seq_id, gp__tp_seq **out,
                   bool *is_new, uint64_t off);

/* Stores the entries of an InternedData message in namespace ns. */
int gp__tp_seq_interned(gp__tp_importer *imp, uint32_t ns, const uint8_t *data,
                        size_t len);

/* Reads TracePacketDefaults into g (replacing its defaults). */
int gp__tp_seq_defaults(gp__tp_importer *imp, gp__tp_gen *g,
                        const uint8_t *data, size_t len);

/* Adds a ClockSnapshot (sequence-scoped clocks keyed by seq_id). */
int gp__tp_seq_clock_snapshot(gp__tp_importer *imp, uint32_t seq_id,
                              const uint8_t *data, size_t len);

/* ------------------------------------------------------------------ */
/* A packet being parsed                                                 */

typedef struct gp__tp_pkt {
  int64_t ts;
  bool has_ts;
  uint32_t seq_id;
  uint32_t gen;
  uint32_t machine; /* machine row */
  uint32_t data_id; /* the data field's number, 0 none */
  uint64_t data_off;
  size_t data_len;
} gp__tp_pkt;

/* A TrackDescriptor packet where it falls in the sorted order (its track
 * was reserved when tokenized): as Perfetto's ParseTrackDescriptor, a tree
 * of ancestors that cannot be resolved is counted (parse_track.c). */
int gp__tp_parse_track_descriptor(gp__tp_importer *imp, const gp__tp_pkt *p);

/* Parsers, by packet data field (parse_*.c). Each returns 0 or an error
 * recorded with gp__tp_fail. */
int gp__tp_parse_gpu_counter_event(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_render_stage(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_gpu_log(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_gpu_mem_total(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_gpu_frequency(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_vulkan_memory(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_vulkan_api(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_track_event(gp__tp_importer *imp, const gp__tp_pkt *p);

/* What a track event's slice args are made of (track_args.c). */
typedef struct gp__tp_te_args {
  bool annotations; /* debug annotations are there to read */
  bool has_api;     /* the gpu_api extension, with its value: */
  uint64_t api;
  bool gpu_corr;        /* a GpuCorrelation extension is there to read */
  uint32_t passthrough; /* legacy_event.passthrough_utid, NONE: none */
} gp__tp_te_args;

/*
 * Commits the args of the track event in packet p (its debug annotations,
 * gpu_api, GpuCorrelation ids and passthrough utid, as a says) as an arg
 * set into *set, NONE when there are none. Returns 0, or an error
 * recorded with gp__tp_fail (a corrupt annotation, no memory).
 */
int gp__tp_track_event_args(gp__tp_importer *imp, const gp__tp_pkt *p,
                            const gp__tp_te_args *a, uint32_t *set);
/* linux.process_stats packets (parse_ps.c). */
int gp__tp_parse_process_tree(gp__tp_importer *imp, const gp__tp_pkt *p);
int gp__tp_parse_process_stats(gp__tp_importer *imp, const gp__tp_pkt *p);

/* One ftrace event (kind GP_TP_ENT_FTRACE) from CPU cpu. */
int gp__tp_parse_ftrace_event(gp__tp_importer *imp, int64_t ts, uint64_t off,
                              size_t len, uint32_t machine, uint32_t cpu);

/*
 * What Perfetto keeps of an ftrace event at ts (parse_sched.c): all of it;
 * only its ftrace_event row (SOFT: before the time from which every CPU's
 * data is complete, FtraceEventBundle.previous_bundle_end_timestamp); or
 * nothing (ALL: before the service started tracing, counted as
 * ftrace_packet_before_tracing_start).
 */
enum { GP_TP_DROP_NONE, GP_TP_DROP_SOFT, GP_TP_DROP_ALL };
int gp__tp_ftrace_drop(gp__tp_importer *imp, int64_t ts);

/* The scheduling and task payloads f of an FtraceEvent of task pid from
 * CPU cpu, read from parent: sched_switch, sched_waking,
 * sched_process_free, task_newtask, task_rename (parse_sched.c). */
int gp__tp_parse_sched(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                       uint32_t cpu, uint32_t pid, const gp__pb_reader *parent,
                       const gp__pb_field *f);

/* The ftrace_event row of field f (an event payload, or any other field
 * of FtraceEvent but pid and timestamp) of an event at ts from CPU cpu,
 * under thread utid, with f's fields as args (parse_raw.c). */
int gp__tp_raw_event(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t cpu, uint32_t utid, const gp__pb_reader *parent,
                     const gp__pb_field *f);

/*
 * One row of the ftrace_event table, for an event whose parser makes it
 * itself (sched_switch, compact sched_waking): at ts, from CPU cpu of
 * machine (its cpu row made as gp__tp_cpu_get does), under thread utid,
 * named by string id name, with common_flags (INT64_MIN: none, shown as
 * 0, as Perfetto's column has no NULL) and the args in args (NULL or
 * empty: none, and arg_set_id 0, as Perfetto's column has no NULL
 * either; copied). Returns 0, or an error recorded with gp__tp_fail
 * (no memory, a CPU number past Perfetto's 4096).
 */
int gp__tp_raw_row(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   uint32_t cpu, uint32_t utid, uint32_t name,
                   int64_t common_flags, const gp__tp_argb *args);

/*
 * The interned name of field `field` of ftrace event `event` (FtraceEvent
 * field numbers, e.g. GP_PB_FTRACE_SCHED_SWITCH and 1 for "prev_comm"),
 * as ftrace_event args name it, into *key (GP_TP_NONE: the event has no
 * such field, or it is not an arg). Returns 0 or GP_ENOMEM (recorded).
 */
int gp__tp_raw_key(gp__tp_importer *imp, uint32_t event, uint32_t field,
                   uint32_t *key);

/*
 * The cpu row (ucpu) of CPU cpu of machine into *ucpu, as Perfetto's
 * CpuTracker::GetOrCreateCpu gives it: machine * 4096 + cpu, the row
 * shown in the cpu table from now on. Returns 0, or GP_ECORRUPT
 * (recorded) for a cpu of 4096 or more, on which Perfetto stops.
 */
int gp__tp_cpu_get(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                   uint32_t *ucpu);

/* The counter track of CPU cpu of machine (dimension cpu) of type (e.g.
 * "cpu_frequency"), named name when new; the CPU's cpu row is made, as
 * Perfetto marks it when it makes such a track (parse_sysstats.c).
 * Returns 0 or an error recorded with gp__tp_fail. */
int gp__tp_cpu_counter_track(gp__tp_importer *imp, uint32_t machine,
                             uint32_t cpu, const char *type, const char *name,
                             uint32_t *track);

/* The cpu row (ucpu) of CPU cpu of machine, made (not shown) if new:
 * gp__tp_cpu_get without marking the CPU seen. */
int gp__tp_cpu_row(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                   uint32_t *ucpu);

/* A CpuInfo packet (data, len) of machine, in file order: the cpu rows'
 * processor, cluster_id, capacity and args, and the frequencies of
 * cpu_available_frequencies (parse_cpuinfo.c). 0 or an error recorded
 * with gp__tp_fail. */
int gp__tp_tokenize_cpu_info(gp__tp_importer *imp, uint32_t machine,
                             const uint8_t *data, size_t len);

/* Frees parse_sysstats.c's state. */
void gp__tp_sys_stats_free(gp__tp_importer *imp);

/* Frees parse_raw.c's state. */
void gp__tp_raw_free(gp__tp_importer *imp);

/* A SysStats packet (TracePacket.sys_stats): meminfo, vmstat, CPU times,
 * interrupts, forks and the rest, as counters on Perfetto's tracks
 * (parse_sysstats.c). */
int gp__tp_parse_sys_stats(gp__tp_importer *imp, const gp__tp_pkt *p);

/* A cpu_frequency or cpu_idle payload f: a value of the CPU's counter
 * track (parse_raw.c). */
int gp__tp_parse_cpu_power(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           const gp__pb_reader *parent, const gp__pb_field *f);

/* A gpu_mem_total, gpu_frequency or kgsl_gpu_frequency payload f of an
 * event of task `task` (parse_other.c). */
int gp__tp_parse_ftrace_gpu(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                            uint32_t task, const gp__pb_reader *parent,
                            const gp__pb_field *f);

/* The interned strings parse_sched.c uses; its state freed. */
int gp__tp_sched_init(gp__tp_importer *imp);
void gp__tp_sched_free(gp__tp_importer *imp);

/* Appends e as event number imp->cs.n (queues.c). 0 or GP_ENOMEM. */
int gp__tp_cs_push(gp__tp_importer *imp, const gp__tp_csched *e);
/* Event i, into *e; its chunk is freed after its last event is taken
 * (queues.c). Each event is taken once. */
void gp__tp_cs_take(gp__tp_importer *imp, uint64_t i, gp__tp_csched *e);

/* One compact sched event (kind GP_TP_ENT_COMPACT) from CPU cpu
 * (parse_sched.c). */
int gp__tp_parse_compact_sched(gp__tp_importer *imp, int64_t ts,
                               const gp__tp_csched *e, uint32_t machine,
                               uint32_t cpu);

/* A dma_fence FtraceEvent payload f (fields 414..418) of an event of
 * task pid, read from parent (parse_drm.c). */
int gp__tp_parse_dma_fence(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           uint32_t pid, const gp__pb_reader *parent,
                           const gp__pb_field *f);
/* Frees the dma_fence timelines. */
void gp__tp_dma_fence_free(gp__tp_importer *imp);

/* The thread of an ftrace event's task tid, as Perfetto's
 * GetOrCreateThread makes it for every event: the live one, else a new
 * thread of no known process (procs.c). */
int gp__tp_ftrace_thread(gp__tp_importer *imp, uint32_t machine, uint32_t tid,
                         uint32_t *utid);

/* That thread's track (type 'thread_execution', dimension utid), as
 * Perfetto's InternThreadTrack makes it (parse_drm.c). */
int gp__tp_ftrace_thread_track(gp__tp_importer *imp, uint32_t machine,
                               uint32_t pid, uint32_t *track);

/* A DRM vblank or GPU scheduler FtraceEvent payload f (fields 409..413,
 * 592..594) of an event of task pid (parse_drm_sched.c). */
int gp__tp_parse_drm_sched(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           uint32_t pid, const gp__pb_reader *parent,
                           const gp__pb_field *f);
/* Frees the scheduler rings. */
void gp__tp_drm_sched_free(gp__tp_importer *imp);

/* Tokenize-time handlers (file order). */
int gp__tp_tokenize_gpu_counter_event(gp__tp_importer *imp, uint32_t machine,
                                      uint32_t gen, const uint8_t *data,
                                      size_t len, bool has_ts, bool *drop);
int gp__tp_tokenize_gpu_info(gp__tp_importer *imp, uint32_t machine,
                             const uint8_t *data, size_t len);
/* A TrackDescriptor; *thread_pid and *thread_tid get its thread's pid and
 * tid when it has a thread with both, else -1. */
int gp__tp_tokenize_track_descriptor(gp__tp_importer *imp, uint32_t machine,
                                     const uint8_t *data, size_t len,
                                     int64_t *thread_pid, int64_t *thread_tid);

/* End of import: pending flows and other leftovers. */
int gp__tp_parse_finish(gp__tp_importer *imp);

/*
 * Asks the CPU to bring event_id's slot of the flow index into the cache,
 * for a parser that will look the id up after other work: the index is a
 * hash table of MBs, so a lookup that waits for its slot was one cache
 * (and TLB) miss, most of flows' time in a demo trace's import.
 */
void gp__tp_flow_prefetch(const gp__tp_importer *imp, uint64_t event_id);

/* Flows of GpuCorrelation: te_slice submitted / waits for event_id. */
int gp__tp_flow_submission(gp__tp_importer *imp, uint64_t event_id,
                           uint32_t te_slice);
int gp__tp_flow_te_wait(gp__tp_importer *imp, uint64_t event_id,
                        uint32_t te_slice);

/* A render stage slice with event_id (flows.c): flows from the track
 * events that submitted it and to those waiting for it or its id. */
int gp__tp_flow_gpu_slice(gp__tp_importer *imp, uint64_t event_id,
                          uint32_t slice);

/* A render stage slice that waited for `waited` (event_wait_ids). */
int gp__tp_flow_event_wait(gp__tp_importer *imp, uint64_t waited,
                           uint32_t slice);

/* Remembers a Vulkan debug-utils object name (latest wins). */
int gp__tp_debug_name_set(gp__tp_importer *imp, int64_t type, uint64_t handle,
                          uint32_t name);

/* The name of a Vulkan object of that type, or GP_TP_NONE. */
uint32_t gp__tp_debug_name_get(gp__tp_importer *imp, int64_t type,
                               uint64_t handle);

/* ------------------------------------------------------------------ */
/* Driving an import (reader.c)                                          */

/* Prepares imp to import data[0..size) (borrowed until fini) into db. */
void gp__tp_importer_init(gp__tp_importer *imp, gp__tp_db *db, const char *name,
                          const uint8_t *data, uint64_t size);

/*
 * One queue's entries in timestamp order, stably (equal timestamps keep
 * their order), without a sorted copy: a k-way merge of the sorted runs
 * (blocks of 256 entries sorted in place first where runs are short) that
 * hands out one entry at a time. sort.c.
 */
typedef struct gp__tp_merge {
  gp__tp_entry *a; /* owned: what gp__tp_vec_grow allocated, cap entries */
  size_t cap, n;
  size_t *pos, *end; /* run i: a[pos[i] .. end[i]) not yet taken */
  uint32_t *heap;    /* runs by (head ts, head position) */
  uint32_t nheap;
  size_t nruns;
  /* Per span of entries (a few KB of input; a piece of the array given
   * back, a system call each, is 8 spans): the entries not yet taken,
   * and the least input offset that the span's entries and those after
   * read (not counting compact sched events and skipped packets, which
   * read none). A taken entry's ref is overwritten (sort.c's TAKEN). */
  uint32_t *span_left;
  uint64_t *smin;
  size_t nspans;
  size_t live; /* no span before it has entries left */
} gp__tp_merge;

/* Takes a[0..n) (cap entries from gp__tp_vec_grow: m owns it from here, in
 * any case). 0 or GP_ENOMEM (m then holds nothing). */
int gp__tp_merge_init(gp__tp_merge *m, gp__tp_entry *a, size_t cap, size_t n);

/* The next entry in order into *out; false when all are taken. A piece of
 * the array goes back to the system when its last entry is taken. */
bool gp__tp_merge_next(gp__tp_merge *m, gp__tp_entry *out);

/* The input below the offset this returns is read by no entry not yet
 * taken (the least offset that an entry of the first span with entries
 * left, looked at one by one, or of a later span reads; UINT64_MAX: none),
 * and may be released. */
uint64_t gp__tp_merge_low_off(gp__tp_merge *m);

void gp__tp_merge_fini(gp__tp_merge *m);

/*
 * All queues' entries in the order Perfetto's sorter hands them to its
 * parsers: the queue with the earliest head (the first made, on a tie)
 * goes on while its entries are no later than the earliest head of the
 * others. sort.c.
 */
typedef struct gp__tp_wqueue {
  gp__tp_entry *a; /* owned (gp__tp_vec_grow's), in push order */
  size_t cap, n;
  uint32_t *h;    /* visible entries not handed out: a heap by (ts, index) */
  size_t nh, vis; /* a[0..vis) has been made visible */
} gp__tp_wqueue;

typedef struct gp__tp_sorter {
  gp__tp_merge *q;   /* the queues, sorted once at the end; or */
  gp__tp_wqueue *wq; /* the queues, handed out window by window */
  size_t nq;
  /* Windows: the next read to apply, each queue's length at the read
   * before the window being handed out (NULL at the end). */
  const gp__tp_windows *win;
  size_t phase;
  uint32_t *lim, *lim_mem;
  int64_t latest;        /* the latest ts handed out */
  uint64_t out_of_order; /* entries dropped for coming after later ones */
  uint32_t *heap; /* queues with entries left but cur, by (head ts, index) */
  uint32_t nheap;
  uint32_t *hpos; /* windows: each queue's slot in heap (UINT32_MAX: none) */
  bool has_cur;
  uint32_t cur;  /* the queue taking its turn */
  int64_t limit; /* its turn lasts while its head is at or before this */
} gp__tp_sorter;

/* Takes the queues' arrays (s owns them from here, in any case) and
 * empties q[0..nq); win: the windows (read while s is in use). 0 or
 * GP_ENOMEM (s then holds nothing). */
int gp__tp_sorter_init(gp__tp_sorter *s, gp__tp_queue *q, size_t nq,
                       const gp__tp_windows *win);
bool gp__tp_sorter_next(gp__tp_sorter *s, gp__tp_entry *out);
/* The least gp__tp_merge_low_off of the queues. */
uint64_t gp__tp_sorter_low_off(gp__tp_sorter *s);
void gp__tp_sorter_fini(gp__tp_sorter *s);

/* queues.c: makes machine row m's packet and track event queues (once),
 * as Perfetto makes a reader's streams when it first sees the machine. */
int gp__tp_reader_queues(gp__tp_importer *imp, uint32_t m, uint64_t off);

/* The queue of a packet of machine row m: its track events (te) or its
 * other packets. */
uint32_t gp__tp_packet_queue(gp__tp_importer *imp, uint32_t m, bool te);

/* Appends {ts, ref} to queue q; off is where, for an error. */
int gp__tp_push_entry(gp__tp_importer *imp, uint32_t q, int64_t ts,
                      uint64_t ref, uint64_t off);

/* ns of BOOTTIME (ftrace's clock, and /proc's) seen on sequence seq, in
 * trace time; BOOTTIME itself where no snapshot links the two. */
int64_t gp__tp_boottime(gp__tp_importer *imp, uint32_t seq, int64_t ns);

/* Tokenizes an FtraceEventBundle (data, len) of sequence seq, generation
 * gen, whose packet is at off. */
int gp__tp_tokenize_ftrace(gp__tp_importer *imp, const uint8_t *data,
                           size_t len, uint32_t seq, uint32_t gen,
                           uint64_t off);

/* service.c: a TracingServiceEvent (data, len): flushes and buffer
 * reads. */
int gp__tp_tokenize_service_event(gp__tp_importer *imp, const uint8_t *data,
                                  size_t len, int64_t ts, uint64_t off);

/* service.c: a TraceConfig packet (data, len). */
int gp__tp_tokenize_trace_config(gp__tp_importer *imp, const uint8_t *data,
                                 size_t len);

/* service.c: SystemInfo.tracing_service_version (p, n). */
void gp__tp_service_version(gp__tp_importer *imp, const uint8_t *p, size_t n);

/* service.c: the stats Perfetto records once all is parsed. */
void gp__tp_service_finish(gp__tp_importer *imp);

/* parse_stats.c: a TraceStats packet (data, len) into the traced_* stats,
 * as Perfetto's reader does when it meets one (before the sort). Its
 * writer_stats count the losses seen so far on each sequence. 0, or
 * GP_ECORRUPT / GP_ENOMEM. */
int gp__tp_tokenize_trace_stats(gp__tp_importer *imp, const uint8_t *data,
                                size_t len);

/* parse_stats.c: an FtraceStats packet (data, len) of sequence seq, at
 * off, into the ftrace_cpu_* and ftrace_kprobe_* stats and
 * ftrace_setup_errors. Fails with GP_ECORRUPT as Perfetto does on a
 * phase other than start or end, and on kernel buffer parse errors
 * other than zero-length records. */
int gp__tp_tokenize_ftrace_stats(gp__tp_importer *imp, const uint8_t *data,
                                 size_t len, uint32_t seq, uint64_t off);

/* A packet waits for a clock snapshot: true if it may (the sorter has
 * handed out nothing yet: it sorts all at the end from now on), false if
 * it is to be dropped. */
bool gp__tp_may_defer(gp__tp_importer *imp);

/* Frees the queues (after parse, or when an import fails). */
void gp__tp_queues_free(gp__tp_importer *imp);

/* Runs both passes. Returns 0 or the first error (imp->errmsg, err_off). */
int gp__tp_import(gp__tp_importer *imp);

/* Frees the importer's state (not db). */
void gp__tp_importer_fini(gp__tp_importer *imp);

/* ------------------------------------------------------------------ */
/* Trackers (tracks.c)                                                   */

/* The gpu row of gpu number `gpu` on machine, created on first use. */
int gp__tp_gpu_get(gp__tp_importer *imp, uint32_t machine, int64_t gpu,
                   uint32_t *out);

/*
 * The track of (type, dimensions): an existing one, or a new one with
 * name, counter/slice kind, unit and source args (used only on creation).
 * dims may be empty. *created says which (may be NULL).
 */
typedef struct gp__tp_track_spec {
  const char *type;
  uint32_t name;
  bool is_counter;
  uint32_t unit;
  uint32_t machine;
  const gp__tp_argb *source;     /* may be NULL */
  int64_t ugpu, gpu, upid, utid; /* dimension mirrors, -1 none */
  uint32_t parent;
} gp__tp_track_spec;

int gp__tp_track_intern(gp__tp_importer *imp, const gp__tp_track_spec *spec,
                        const gp__tp_argb *dims, uint32_t *out, bool *created);

/* Creates a track unconditionally (its dims set may equal another's). */
int gp__tp_track_new(gp__tp_importer *imp, const gp__tp_track_spec *spec,
                     uint32_t dims_set, uint32_t *out);

/*
 * The track of compression set ci (imp->csets) for a render stage
 * [ts, ts + dur): the first of the set's tracks free at ts, or a new one
 * made from spec. Stages must come in ts order (an earlier one is placed
 * correctly but costs a scan). Returns 0 or fails the import (GP_ENOMEM).
 * render_tracks.c.
 */
int gp__tp_stage_track(gp__tp_importer *imp, uint32_t ci,
                       const gp__tp_track_spec *spec, int64_t ts, int64_t dur,
                       uint32_t *out);

/* ------------------------------------------------------------------ */
/* Processes and threads (procs.c), as Perfetto's ProcessTracker        */

/* GetOrCreateProcessWithoutMainThread: the process of pid -> upid. */
int gp__tp_process_get(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                       uint32_t *upid);

/* GetOrCreateProcess: the same, and a process made here gets its main
 * thread (UpdateThread(pid, pid)). */
int gp__tp_process_get_main(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                            uint32_t *upid);

/* StartNewProcess: a new process for pid (what pid meant is forgotten,
 * its threads looked up again), started at ts (INT64_MIN: unknown), of
 * parent parent_upid (NONE), named name (NONE) with thread name priority
 * tprio for its main thread (made first when main_thread). */
int gp__tp_process_start(gp__tp_importer *imp, uint32_t machine, int64_t ts,
                         uint32_t parent_upid, int64_t pid, uint32_t name,
                         int tprio, bool main_thread, uint32_t *upid);

/* A process seen again under a new descriptor uuid (pid reused):
 * gp__tp_process_start with no time, parent or name. */
int gp__tp_process_new(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                       uint32_t *upid);

/* AssociateCreatedProcessToParentThread: upid's parent is the process of
 * parent_utid, now or once that thread's process is known. */
int gp__tp_process_parent_thread(gp__tp_importer *imp, uint32_t upid,
                                 uint32_t parent_utid);

/* UpdateThread: thread tid of process pid (both made if needed) -> utid. */
int gp__tp_thread_update(gp__tp_importer *imp, uint32_t machine, int64_t tid,
                         int64_t pid, uint32_t *utid);

/* StartNewThread: a new thread for tid, started at ts (INT64_MIN). */
int gp__tp_thread_start(gp__tp_importer *imp, uint32_t machine, int64_t ts,
                        int64_t tid, uint32_t *utid);

/* The live thread of tid (GetThreadOrNull), or GP_TP_NONE. */
uint32_t gp__tp_thread_find(gp__tp_importer *imp, uint32_t machine,
                            int64_t tid);

/* EndThread: tid's live thread ends at ts (and its process, if it is the
 * main thread); lookups of tid no longer find it. */
void gp__tp_thread_end(gp__tp_importer *imp, uint32_t machine, int64_t tid,
                       int64_t ts);

/* AssociateThreads: two threads of one process, whichever learns it. */
int gp__tp_threads_pair(gp__tp_importer *imp, uint32_t utid1, uint32_t utid2,
                        bool assoc_main);

/* Names, kept if the new one's priority (GP_TP_TNAME_*, GP_TP_PNAME_*) is
 * at least the current one's; NONE changes nothing. The third also names
 * the process where utid is its main thread. */
void gp__tp_thread_name(gp__tp_importer *imp, uint32_t utid, uint32_t name,
                        int prio);
void gp__tp_process_name(gp__tp_importer *imp, uint32_t upid, uint32_t name,
                         int prio);
void gp__tp_thread_and_process_name(gp__tp_importer *imp, uint32_t utid,
                                    uint32_t name, int prio);

/* The swapper thread of machine (its idle task, tid 0). */
uint32_t gp__tp_swapper_utid(gp__tp_importer *imp, uint32_t machine);

/* Makes a machine's swapper rows (upid, utid) what pid and tid 0 mean on
 * it (SetPidZeroIsUpidZeroIdleProcess). */
int gp__tp_procs_swapper(gp__tp_importer *imp, uint32_t machine, uint32_t upid,
                         uint32_t utid);

/* Frees the tracker's state. */
void gp__tp_procs_free(gp__tp_importer *imp);

/* Appends a counter value; returns its row in *row (may be NULL). The
 * row is streamed (stream.c) now: its value is final. */
int gp__tp_counter_add(gp__tp_importer *imp, int64_t ts, uint32_t track,
                       double value, uint32_t *row);

/* The same for a row whose value the track's next sample sets (a
 * backwards-looking GPU counter): the caller streams it then. */
int gp__tp_counter_add_open(gp__tp_importer *imp, int64_t ts, uint32_t track,
                            uint32_t *row);

/*
 * Slices. scoped: a complete slice [ts, ts+dur). begin: an open one,
 * closed by end. Both return the slice id (GP_TP_NONE if the slice was
 * dropped, with a stat). args = stored arg set (or NONE).
 */
int gp__tp_slice_scoped(gp__tp_importer *imp, int64_t ts, int64_t dur,
                        uint32_t track, uint32_t cat, uint32_t name,
                        uint32_t args, uint32_t *out);
int gp__tp_slice_begin(gp__tp_importer *imp, int64_t ts, uint32_t track,
                       uint32_t cat, uint32_t name, uint32_t args,
                       uint32_t *out);
/* Ends the innermost open slice of track; *out = its id or NONE. */
int gp__tp_slice_end(gp__tp_importer *imp, int64_t ts, uint32_t track,
                     uint32_t *out);

/* Appends a flow between two slices. */
int gp__tp_flow_add(gp__tp_importer *imp, uint32_t out_slice,
                    uint32_t in_slice);

/* Marks a slice as shown by gpu_slice; kind GP_TP_GEXT_*; returns the
 * extension row (columns set by the caller for render stages). */
int gp__tp_gext_add(gp__tp_importer *imp, uint32_t slice, uint8_t kind,
                    uint32_t *row);

/* ------------------------------------------------------------------ */
/* Streaming rows while importing (stream.c; gp_tp_options.stream)      */

/* What a track's gpu_slice rows wait for (imp->stream_track). */
enum {
  GP_TP_STREAM_UNSEEN = 0,  /* no row yet */
  GP_TP_STREAM_NOW = 1,     /* streamed as they are made */
  GP_TP_STREAM_AT_END = 2,  /* the track may be renamed: at the end */
  GP_TP_STREAM_NOT_GPU = 3, /* not a gpu_track: not streamed */
};

/* Hands the machine rows to the stream, before the parse makes any row.
 * 0, or the callback's or a memory error (the import fails with it). */
int gp__tp_stream_begin(gp__tp_importer *imp);

/* Streams gpu_slice row g (its columns all set), unless its track waits
 * for the end. */
int gp__tp_stream_gpu_slice(gp__tp_importer *imp, uint32_t g);

/* Streams counter row `row`, if its track is a counter track. */
int gp__tp_stream_counter(gp__tp_importer *imp, uint32_t row);

/* Marks track's gpu_slice rows as waiting for the end of the parse (the
 * track may still be renamed). Fails if some were streamed already. */
int gp__tp_stream_defer(gp__tp_importer *imp, uint32_t track);

/* At the end of the parse: the rows that waited (open counter values,
 * slices of deferred tracks). */
int gp__tp_stream_finish(gp__tp_importer *imp);

/* Interns s (length n) or fails the import with GP_ENOMEM. */
int gp__tp_intern(gp__tp_importer *imp, const void *s, size_t n, uint32_t *out);

/* The same for a string of the trace, but an empty one is NONE (NULL in
 * SQL), as Perfetto's string pool makes it. */
int gp__tp_intern_text(gp__tp_importer *imp, const void *s, size_t n,
                       uint32_t *out);

/* Releases the parse-time trackers (called once parsing is over). */
void gp__tp_trackers_free(gp__tp_importer *imp);

#endif /* GPUPERF_TP_IMPORT_H */
