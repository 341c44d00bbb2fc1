/*
 * writerInt.h - private state of the trace writer, shared by writer.c
 * (sequence, packets, sink, host tracks, API calls, ranges, logs),
 * writer_gpu.c (GPU work, stream tracks), writer_devices.c (devices and
 * GpuInfo), writer_counters.c (counter descriptors and samples) and
 * writer_clocks.c (clock snapshots).
 *
 * Interning. Every interned value has an iid that never changes for the
 * writer's life (iids of hardware queues and stages are even computed
 * from what they name, so equal queues get equal iids in every process).
 * What is reset with the incremental state is only whether an entry has
 * been emitted: an entry is current when its `gen` equals the writer's
 * generation, which a reset increments.
 */
#ifndef GPUPERF_PERFETTO_WRITER_INT_H
#define GPUPERF_PERFETTO_WRITER_INT_H

#include <pthread.h>

#include "core/core.h"
#include "pb.h"
#include "proto.h"
#include "writer.h"

#define TW_MAX_DEVICES 64
#define TW_MAX_PENDING 16  /* interned entries one packet may introduce */
#define TW_STREAM_CACHE 16 /* streams remembered by stream_track() */
#define TW_CTX_CACHE 16    /* contexts remembered by context_iid() */
#define TW_KERNEL_CACHE 64 /* kernels remembered by kernel_iid() */
#define TW_TAIL_CACHE 64   /* encoded tails remembered by write_tail() */
#define TW_TAIL_KEY 8      /* words of a tail's key */
#define TW_SYNC_RING 256   /* recent SYNCHRONIZATION waits, by call */
/* Write out mid-buffer past this: the chunks held stay few, and a chunk
 * touched for the first time costs 16 page faults (12-40 us each on a VM;
 * 4 MiB here cost a traced demo 3 ms of faults). */
#define TW_FLUSH_BYTES (256u << 10)
#define TW_HOST_SNAPSHOT_NS 1000000000ull /* host clocks every trace second */
#define TW_OVERHEAD_PERIOD_NS 1000000000ull
/* REALTIME in virtual time: 2023-11-14 22:13:20 UTC plus the virtual clock. */
#define TW_VIRTUAL_REALTIME_EPOCH 1700000000000000000ull

/* What a track is, for its uuid. */
enum {
  TW_TRACK_PROCESS = 1,
  TW_TRACK_THREAD = 2,
  TW_TRACK_API = 3,
  TW_TRACK_DEVICE = 4,
  TW_TRACK_STREAM = 5,
  TW_TRACK_COUNTER = 6,
  TW_TRACK_ASYNC = 7,
  TW_TRACK_SOURCE = 8, /* the process's source-level records */
  TW_TRACK_UM = 9      /* a stream's unified memory (key: device, stream) */
};
/* The uuid of track (kind, key): numbered in order of first use, with the
 * sequence id in the low 12 bits (or, past 4095 sequences, bits 40 and
 * up), so uuids are unique across the processes of a trace and short;
 * but a process's or thread's (key: its id) is the same in every writer
 * on the host (writer.c). */
uint64_t gp__tw_track_uuid(struct gp__tw *w, uint32_t kind, uint64_t key);

/* A hash map entry: two 64-bit key words, an iid, and small payloads. */
typedef struct tw_entry {
  uint64_t k1, k2;
  uint64_t iid;
  uint64_t aux; /* per map: string ids, device, ... */
  uint32_t gen; /* emitted in this generation (0: never) */
  uint32_t used;
} tw_entry;

typedef struct tw_map {
  tw_entry *e;
  size_t cap, n; /* cap is a power of two */
} tw_map;

/* Returns the entry for (k1, k2), inserting a zeroed one (used = 1) if
 * absent and *created is set; NULL when memory runs out. */
tw_entry *gp__tw_map_get(tw_map *m, uint64_t k1, uint64_t k2, bool *created);
void gp__tw_map_fini(tw_map *m);

/* Interned entries one packet introduces (written into its interned_data). */
typedef enum tw_pending_kind {
  TW_PEND_EVENT_NAME,  /* iid, string id in a */
  TW_PEND_CATEGORY,    /* iid, string id in a */
  TW_PEND_DEBUG_NAME,  /* iid, string id in a */
  TW_PEND_CONTEXT,     /* iid, pid in a, api in b */
  TW_PEND_QUEUE,       /* iid, device in a, queue in b */
  TW_PEND_STAGE,       /* iid, stage index in a */
  TW_PEND_KERNEL,      /* iid, kernel entry in p */
  TW_PEND_ARG_NAMES,   /* every compute arg name */
  TW_PEND_COUNTER_DESC /* iid, device in a */
} tw_pending_kind;

typedef struct tw_pending {
  uint32_t kind;
  uint64_t iid;
  uint64_t a, b;
  const tw_entry *p;
} tw_pending;

/* One counter spec of a device's descriptor: a catalog counter, sampled
 * periodically or per activity (two specs when both). */
typedef struct tw_spec {
  uint32_t id;      /* catalog counter id */
  uint32_t instr;   /* 1: per-activity values */
  uint32_t out_id;  /* its counter_id in the trace (see make_out_id()) */
  uint64_t last_ts; /* periodic: timestamp of the last sample written */
  /* How each of its samples begins, encoded once: the GpuCounterEvent
   * `counters` tag, a length byte to fill in, the counter_id field. */
  uint8_t head[8];
  uint32_t head_len;
} tw_spec;

/* Counter descriptor state of one device. */
typedef struct tw_counter_dev {
  tw_spec *specs; /* in the order they were added */
  size_t n, cap;
  size_t next;       /* the spec after the last one looked up */
  uint64_t desc_iid; /* mode 2: current descriptor's iid, 0 none yet */
  uint32_t desc_gen; /* generation it was emitted in */
  bool dirty;        /* specs were added since the descriptor was made */
  size_t inline_n;   /* mode 1: specs [0, inline_n) already described */
  /* The environment specs by which (writer_counters.c): index + 1 in
   * specs where each was last found, 0: not yet. */
  uint32_t env_at[8];
} tw_counter_dev;

/* Counter samples with one (device, timestamp), assembled into one
 * GpuCounterEvent: encoded as they come, copied into the packet whole. */
#define TW_GROUP_MAX 32
#define TW_SAMPLE_MAX 19 /* a sample's bytes: head 8, value field 11 */
typedef struct tw_group {
  bool active;
  uint32_t device;
  uint64_t ts;
  uint32_t n;   /* samples */
  uint32_t len; /* their bytes in buf */
  uint8_t buf[TW_GROUP_MAX * TW_SAMPLE_MAX];
} tw_group;

#define TW_DIRECT_QUEUES 32 /* queues with their emitted-generation inline */

/* A DEVICE_ATTRIBUTE record, kept for the device's GpuInfo. */
typedef struct tw_attr {
  uint32_t device_id;
  uint32_t attribute;  /* gp_device_attr, or CUDA's (flags) */
  uint32_t flags;      /* GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_* */
  uint32_t value_type; /* gp_value_type */
  int64_t value;       /* the int64, or the double's bits */
  bool written;        /* a GpuInfo said it */
} tw_attr;

typedef struct tw_device {
  bool known;
  uint32_t queue_gen[TW_DIRECT_QUEUES];
  bool tracked; /* device track emitted */
  uint32_t api; /* gp_api */
  uint32_t clock_id;
  bool no_counters;      /* no gpu.counters data source applies to it */
  bool no_render_stages; /* no gpu.renderstages data source applies to it */
  bool no_slices;        /* the one that does is low_overhead */
  tw_counter_dev ctr;
} tw_device;

struct gp__tw {
  pthread_mutex_t lock;
  uint64_t untimed_written;  /* untimed count last written (0: no track) */
  uint64_t process_counters; /* keys whose track descriptor is written */
  gp__tw_options o;
  gp__pb_writer pb;
  bool began, finished;
  uint32_t gen;          /* interning generation */
  bool clear_next;       /* next packet clears the incremental state */
  bool lost_next;        /* ... and says packets were lost */
  uint32_t pid;          /* our process (real) */
  uint32_t vpid;         /* our process as written */
  uint64_t max_ts;       /* largest record timestamp seen */
  uint64_t first_ts;     /* first record timestamp seen */
  uint64_t host_snap_ts; /* trace time of the last host snapshot */
  uint64_t last_overhead_ns, last_overhead_real;
  uint64_t off;      /* bytes of the file known good */
  uint64_t next_iid; /* event names, categories, kernels, ... */
  tw_map names, categories, debug_names, kernels, contexts, queues, stages;
  tw_map threads, processes, streams, apis, asyncs, track_ids;
  uint64_t next_track; /* tracks numbered so far */
  uint32_t arg_names_gen;
  uint32_t next_vtid;
  tw_device dev[TW_MAX_DEVICES];
  /* Reads the devices' clock snapshots (core.h); 0: none (ctx set, or
   * finished). */
  uint32_t clock_consumer;
  uint32_t num_devices; /* one past the largest device id seen */
  uint32_t gpu_info_n;  /* devices the last GpuInfo described */
  /* DEVICE_ATTRIBUTE records, by device, flags and attribute. */
  tw_attr *attrs;
  uint32_t num_attrs, attrs_cap;
  bool attrs_pending;   /* some are not written yet */
  tw_group lead, group; /* counter samples being assembled */
  /* Event names by string id (ids are dense): iid and generation. */
  struct tw_name {
    uint64_t iid;
    uint32_t gen;
  } * name_tab;
  size_t name_cap;
  gp__pb_short pkt;       /* the open packet, when its length is short */
  gp__pb_short rse;       /* the open render stage event */
  uint32_t stage_gen[32]; /* stages emitted, by stage index */
  /* stream_track() cache, direct-mapped by key: uuid 0 is empty. Also
   * work_prepare()'s, for the sites of the last two ops on the stream,
   * newest first (writer_gpu.c). */
  struct tw_stream_slot {
    uint64_t key, uuid;
    struct tw_site {
      uint64_t uuid; /* its stream track or 0 */
      uint32_t gen;  /* 0: none */
      uint32_t device, queue, stage;
      uint8_t len;
      uint8_t bytes[31]; /* its context .. stage_iid fields, encoded */
      uint8_t end_len;   /* 0 when uuid is */
      uint8_t end[16];   /* the slice end TrackEvent on track uuid */
      /* The tail cache slot of the last tail written at this site (NULL:
       * none); a guess, checked by key. */
      const struct tw_tail *tail;
    } site[2];
  } stream_cache[TW_STREAM_CACHE];
  /* context_iid() cache, direct-mapped by context: the generation in
   * which the context was last queued (0: empty). */
  struct tw_ctx_slot {
    uint32_t ctx, gen;
  } ctx_cache[TW_CTX_CACHE];
  /* Encoded tails of GPU work (launch messages, extra data) by what they
   * encode, direct-mapped (see writer_gpu.c). */
  struct tw_tail {
    uint32_t key[TW_TAIL_KEY];
    uint8_t len;
    uint8_t bytes[127];
  } * tails;
  /* kernel_iid() cache, two-way by key: the iid and slice name
   * of kernels emitted in generation gen (0: empty). */
  struct tw_kernel_slot {
    uint64_t k1, k2, iid;
    uint32_t name_id, gen;
  } kernel_cache[TW_KERNEL_CACHE];
  tw_pending pend[TW_MAX_PENDING];
  int npend;
  struct {
    uint64_t corr, wait_id;
  } sync_ring[TW_SYNC_RING]; /* by correlation id modulo the size */
  /* thread_track() cache: the last thread asked for (uuid 0: none) and
   * the track_uuid field of its track, encoded (writer_host.c). */
  uint64_t last_thread_key, last_thread_uuid;
  /* slice_event()'s category cache: the last category's string id, iid
   * and the generation it was looked up in (0: none). */
  uint32_t last_cat_id, last_cat_gen;
  uint64_t last_cat_iid;
  /* The MARKER_DATA record waiting for its marker, the next MARKER record
   * of its thread (marker_data.id 0: none). */
  gp_activity_marker_data marker_data;
  /* The EVENT or METRIC instant held open for its instances
   * (writer_events.c); NULL until the first. */
  struct tw_kev *kev;
  uint8_t last_thread_field[16];
  uint8_t last_thread_field_len;
  /* The sequence id field of every plain packet, encoded once (little
   * endian, seq_head_len bytes; none when service_sequenced). */
  uint8_t seq_head_len;
  uint64_t seq_head;
  gp__tw_stats st;
  struct tw_source *source; /* writer_source.c's, NULL until used */
};

/* ---- writer.c: packets ---- */

#define TW_PACKET_LARGE (1u << 31)
/* The ts of a packet that has no time: descriptors, system and GPU info.
 * Every other ts is written, 0 included: Perfetto drops a TrackEvent,
 * a GpuCounterEvent ... whose packet has no timestamp, and 0 is a time. */
#define TW_NO_TS UINT64_MAX
/* gp__tw_packet_begin() for packets that are not plain (below) or when
 * the current chunk is full. */
void gp__tw_packet_begin_slow(gp__tw *w, uint64_t ts, uint32_t flags);

/* True when the next packet is a plain one: no interned data to write,
 * no incremental state to clear, no machine id; its head is then
 * gp__tw_put_packet_head()'s. */
static inline bool gp__tw_packet_plain(const gp__tw *w) {
  return !w->npend && !w->clear_next && !w->o.machine_id;
}

/* Writes the head of a plain packet at p, in 48 bytes reserved (3 + 11 +
 * 11 + 11 at most): its tag, two length bytes for gp__pb_put_len2() to
 * patch (at p + 1), the timestamp (TW_NO_TS: none), the sequence id and
 * flags.
 * Returns the end of the head. These are the bytes gp__tw_packet_begin()
 * writes for the same packet. */
static inline uint8_t *gp__tw_put_packet_head(const gp__tw *w, uint8_t *p,
                                              uint64_t ts, uint32_t flags) {
  *p++ = (GP_PB_TRACE_PACKET << 3) | GP_PB_LEN;
  p += 2;
  if (ts != TW_NO_TS) {
    *p++ = (GP_PB_PACKET_TIMESTAMP << 3) | GP_PB_VARINT;
    p = gp__pb_put_varint_ts(p, ts);
  }
  /* Its bytes precomputed: one 8-byte store (the 48 bytes reserved leave
   * room past the head for it) instead of a flag test and a varint. */
  memcpy(p, &w->seq_head, 8);
  p += w->seq_head_len;
  if (flags)
    p = gp__pb_put_uint(p, GP_PB_PACKET_SEQUENCE_FLAGS, flags);
  return p;
}

/*
 * Opens a TracePacket as gp__tw_packet_begin() does and returns where its
 * content goes, with n more bytes reserved there (n < 16 KiB) for raw
 * puts (gp__pb_put_uint() ...); NULL if memory ran out (the error flag is
 * then set). Close it with gp__tw_packet_close() at the content's end. A
 * plain packet's head is put in the same reservation: one bounds check
 * for the whole packet. Always inline: GCC left it out of line in
 * writer_host.c, where ts, flags and n then cost a call per packet.
 */
static inline __attribute__((always_inline)) uint8_t *
gp__tw_packet_open(gp__tw *w, uint64_t ts, uint32_t flags, size_t n) {
  gp__pb_writer *pb = &w->pb;
  if (GP_LIKELY(gp__tw_packet_plain(w) && !(flags & TW_PACKET_LARGE) &&
                gp__pb_reserve(pb, 48 + n))) {
    /* The common packet: its length takes two bytes. */
    w->pkt.len_at = pb->p + 1;
    w->pkt.start = gp__pb_pos(pb) + 3; /* just after the length */
    w->st.packets++;
    return gp__tw_put_packet_head(w, pb->p, ts, flags);
  }
  gp__tw_packet_begin_slow(w, ts, flags);
  return gp__pb_reserve(pb, n) ? pb->p : NULL;
}

/* Opens a TracePacket at ts (TW_NO_TS: no timestamp) with the sequence fields
 * and flags (GP_PB_SEQ_NEEDS_INCREMENTAL_STATE when interned data is used);
 * writes and clears the pending interned entries. Packets are assumed to
 * stay under 16 KiB unless they hold interned data or TW_PACKET_LARGE is
 * in flags. Inline, as most packets are plain. */
static inline void gp__tw_packet_begin(gp__tw *w, uint64_t ts, uint32_t flags) {
  uint8_t *p = gp__tw_packet_open(w, ts, flags, 0);
  if (p)
    w->pb.p = p;
}

/* Closes the packet gp__tw_packet_begin() opened. */
static inline void gp__tw_packet_end(gp__tw *w) {
  if (w->pkt.len_at || w->pkt.start)
    gp__pb_end_medium(&w->pb, w->pkt);
  else
    gp__pb_end(&w->pb);
  w->pkt.len_at = NULL;
  w->pkt.start = 0;
}

/* Closes the packet gp__tw_packet_open() opened, its content put up to
 * end (NULL: the open failed). */
static inline void gp__tw_packet_close(gp__tw *w, uint8_t *end) {
  if (end)
    w->pb.p = end;
  gp__tw_packet_end(w);
}

/* Puts a TrackEvent of type `type` on track `uuid`, named unless
 * name_iid is 0, at p (35 bytes reserved); returns its end. */
static inline uint8_t *gp__tw_put_track_event(uint8_t *p, uint32_t type,
                                              uint64_t name_iid,
                                              uint64_t uuid) {
  p = gp__pb_put_varint(p, (GP_PB_PACKET_TRACK_EVENT << 3) | GP_PB_LEN);
  uint8_t *len = p++;
  p = gp__pb_put_uint(p, GP_PB_TE_TYPE, type);
  if (name_iid)
    p = gp__pb_put_uint(p, GP_PB_TE_NAME_IID, name_iid);
  p = gp__pb_put_uint(p, GP_PB_TE_TRACK_UUID, uuid);
  *len = (uint8_t)(p - len - 1);
  return p;
}

/* Puts at p, in 48 + 35 bytes reserved, a plain packet whose TrackEvent
 * ends the slice on track uuid at ts; returns its end. The second packet
 * of a slice written in one reservation. */
static inline uint8_t *gp__tw_put_slice_end_packet(const gp__tw *w, uint8_t *p,
                                                   uint64_t ts, uint64_t uuid) {
  uint8_t *p0 = p;
  p = gp__tw_put_packet_head(w, p0, ts, 0);
  p = gp__tw_put_track_event(p, GP_PB_TE_TYPE_SLICE_END, 0, uuid);
  gp__pb_put_len2(p0 + 1, (uint64_t)(p - p0 - 3));
  return p;
}

/* Queues an interned entry for the next packet. */
void gp__tw_pend(gp__tw *w, uint32_t kind, uint64_t iid, uint64_t a, uint64_t b,
                 const tw_entry *p);

/* Makes sure the device is known (GpuInfo written, clock followed;
 * writer_devices.c). */
void gp__tw_device_seen(gp__tw *w, uint32_t device_id);

/* Whether the GPU work of device dev is written: a gpu.renderstages data
 * source applies to it (a vendor suffix may name other devices). */
static inline bool gp__tw_work_written(gp__tw *w, uint32_t dev) {
  if (!w->o.render_stages)
    return false;
  if (!w->o.work_by_vendor || dev >= TW_MAX_DEVICES)
    return true;
  if (!w->dev[dev].known)
    gp__tw_device_seen(w, dev);
  return !w->dev[dev].no_render_stages;
}

/* The pid and tid as written (virtual ones in deterministic mode). */
uint32_t gp__tw_pid(gp__tw *w, uint32_t pid);

/* Emits the process track descriptor of our own process if needed and
 * returns its uuid. */
uint64_t gp__tw_process_track(gp__tw *w);

/* Writes a TrackDescriptor. */
void gp__tw_track_descriptor(gp__tw *w, uint64_t uuid, uint64_t parent,
                             const char *name);

/* The host's name and boot id (or GPUPERF_HOSTNAME, GPUPERF_BOOT_ID),
 * NUL-terminated and truncated to the sizes given. */
void gp__tw_host_id_get(char *host, size_t hsize, char *boot, size_t bsize);

/* Writes SystemInfo and the GP_TW_HOST_EVENT instant at ts (see
 * writer_identity.c). */
void gp__tw_host_identity(gp__tw *w, uint64_t ts);

/* Formats v in decimal into buf (>= 21 bytes); returns the length. */
size_t gp__tw_u64_to_str(uint64_t v, char *buf);

/* gp__tw_event_name() for names not yet emitted in this generation. */
uint64_t gp__tw_event_name_slow(gp__tw *w, uint32_t string_id);

/* The iid of an event name (string id), queued if not yet emitted. */
static inline uint64_t gp__tw_event_name(gp__tw *w, uint32_t string_id) {
  if (GP_LIKELY(string_id < w->name_cap)) {
    const struct tw_name *e = &w->name_tab[string_id];
    if (e->iid && e->gen == w->gen)
      return e->iid;
  }
  return gp__tw_event_name_slow(w, string_id);
}

/* Notes a record timestamp (first and largest). */
static inline void gp__tw_saw_ts(gp__tw *w, uint64_t ts) {
  if (ts > w->max_ts)
    w->max_ts = ts;
  if (w->first_ts == 0)
    w->first_ts = ts;
}

/* The latest time the writer knows, for values that have no time of
 * their own (our counters): the largest record timestamp, or before any,
 * the time of its latest host clock snapshot. Never 0 for want of a time,
 * which would put the value at the start of the boot clock. */
static inline uint64_t gp__tw_now_ts(const gp__tw *w) {
  return w->max_ts ? w->max_ts : w->host_snap_ts;
}

/* Event ids of render stages: unique across the processes of a trace,
 * and short: (correlation id << 8) | sequence id for the first 255
 * sequences; past that, bit 63 | sequence id << 40 | correlation id. */
static inline uint64_t gp__tw_event_id(const gp__tw *w, uint64_t corr) {
  uint64_t seq = w->o.sequence_id;
  if (seq < 256 && corr < (1ull << 55))
    return (corr << 8) | seq;
  return (1ull << 63) | (seq << 40) | (corr & ((1ull << 40) - 1));
}

/* Starts a new generation of incremental state; lost: packets (or the
 * records they would have held) were lost before this point. */
void gp__tw_reset_incremental(gp__tw *w, bool lost);

/* The iid of string_id in map m (kind: its TW_PEND_*), queued if new in
 * this generation. */
uint64_t gp__tw_intern_string(gp__tw *w, tw_map *m, uint32_t kind,
                              uint32_t string_id);

/* ---- writer_clocks.c ---- */
/* Writes a snapshot of the host clocks at the time hint in deterministic
 * mode (0: now), and notes its time in host_snap_ts. A writer into a
 * Perfetto service only notes the time. */
void gp__tw_write_host_snapshot(gp__tw *w, uint64_t hint);
/* Writes the device-clock snapshots taken since the last ones written,
 * those before `bound` (trace time) only; snapshots lost meanwhile are
 * marked in the next packet. */
void gp__tw_write_device_snapshots(gp__tw *w, uint64_t bound);

/* ---- writer_host.c ---- */
#define TW_COUNTER_DROPPED 1 /* our own counter tracks */
#define TW_COUNTER_OVERHEAD 2
#define TW_COUNTER_UNTIMED 3
void gp__tw_api(gp__tw *w, const gp_activity_api *a);
void gp__tw_vk_submit(gp__tw *w, const gp_activity_api_submit *s);
void gp__tw_sync(gp__tw *w, const gp_activity_sync *s);
void gp__tw_marker(gp__tw *w, const gp_activity_marker *m);
/* Keeps what a marker carried for the MARKER record of its id, which
 * follows it (writer_host.c). */
void gp__tw_marker_data(gp__tw *w, const gp_activity_marker_data *d);
void gp__tw_dropped(gp__tw *w, const gp_activity_dropped *d);
void gp__tw_overhead(gp__tw *w, const gp_activity_overhead *o);
void gp__tw_name(gp__tw *w, const gp_activity_name *n);
void gp__tw_own_counter_tracks(gp__tw *w);
void gp__tw_own_counter(gp__tw *w, uint32_t which, uint64_t ts, uint64_t value);
/* One value of a process counter (writer.h), its track described first. */
void gp__tw_process_counter_value(gp__tw *w, uint64_t ts,
                                  const gp__tw_process_counter *c);

/* GPU work that came without start and end (a command that failed, a
 * timestamp the driver could not take) is drawn as an instant at the time
 * it was queued; without even that it is not drawn, and counted in the
 * trace as "gpuperf untimed GPU work". Adjusts *start and *end; returns
 * true if the work is not to be drawn. */
static inline bool gp__tw_untimed(gp__tw *w, uint64_t queued, uint64_t *start,
                                  uint64_t *end) {
  if (GP_LIKELY(*start != 0 && *end >= *start))
    return false;
  if (queued != 0) {
    *start = *end = queued;
    return false;
  }
  w->st.untimed++;
  return true;
}

/* Writes the untimed count if it changed since it was last written. */
void gp__tw_untimed_flush(gp__tw *w);

/* ---- writer_gpu.c ---- */
void gp__tw_gpu_kernel(gp__tw *w, const gp_activity_kernel *k);
/* A CDP child grid as a kernel's slice on its parent's stream, nested in
 * the parent's slice, with its grid ids and launching block as extra
 * data. */
void gp__tw_gpu_cdp_kernel(gp__tw *w, const gp_activity_cdp_kernel *c);
void gp__tw_gpu_memcpy(gp__tw *w, const gp_activity_memcpy *m);
void gp__tw_gpu_memset(gp__tw *w, const gp_activity_memset *m);
void gp__tw_gpu_render_stage(gp__tw *w, const gp_activity_render_stage *r);
void gp__tw_gpu_log(gp__tw *w, const gp_activity_gpu_log *l);
void gp__tw_gpu_memory(gp__tw *w, const gp_activity_gpu_memory *m);
/* A dma_fence event of the kernel as Perfetto's ftrace data source
 * writes it: an FtraceEventBundle with one DmaFence*FtraceEvent
 * (writer_host.c). */
void gp__tw_dma_fence(gp__tw *w, const gp_activity_dma_fence *f);
/* A GPU_FTRACE record as the FtraceEventBundle traced_probes writes for
 * the kernel's event (writer_host.c). */
void gp__tw_gpu_ftrace(gp__tw *w, const gp_activity_gpu_ftrace *f);
void gp__tw_gpu_context(gp__tw *w, const gp_activity_context *c);
void gp__tw_gpu_stream_name(gp__tw *w, const gp_activity_name *n);
/* GpuInfo for devices seen since the last one (all of them again), or
 * one of the device attributes that came since (writer_devices.c). */
void gp__tw_gpu_info(gp__tw *w);
/* Keeps a device attribute for its device's GpuInfo (writer_devices.c). */
void gp__tw_device_attribute(gp__tw *w, const gp_activity_device_attribute *a);
/* MODULE and FUNCTION records as instants on the process track
 * (writer_code.c). */
/* A named debug annotation of the TrackEvent open in pb (the slice's
 * "debug.<name>" arg): a string, or an unsigned value (writer_code.c). */
void gp__tw_annotate_string(gp__pb_writer *pb, const char *name, const char *v);
void gp__tw_annotate_uint(gp__pb_writer *pb, const char *name, uint64_t v);
/* Opens a TrackEvent of type (GP_PB_TE_TYPE_*) on track at ts (0: the
 * latest time known), its category and name (NULL: none) as strings, not
 * interned: for rare events that carry debug annotations, which the caller
 * adds before gp__tw_event_end() (writer_code.c). */
void gp__tw_event_begin(gp__tw *w, uint64_t ts, uint32_t type, uint64_t track,
                        const char *category, const char *name);
void gp__tw_event_end(gp__tw *w);

void gp__tw_module(gp__tw *w, const gp_activity_module *m);

/* writer_events.c: EVENT and METRIC records as instants on the device's
 * track, each with the instance records that follow it (held open until
 * something else begins: gp__tw_events_flush writes it). _fini frees
 * what the writer held for them. */
void gp__tw_event_record(gp__tw *w, const gp_activity_event *e);
void gp__tw_metric_record(gp__tw *w, const gp_activity_metric *m);
void gp__tw_event_instance(gp__tw *w, const gp_activity_event_instance *e);
void gp__tw_metric_instance(gp__tw *w, const gp_activity_metric_instance *m);
void gp__tw_events_flush(gp__tw *w);
void gp__tw_events_fini(gp__tw *w);

/* The uuid of the "Device #N" track of the process (under its API's
 * track), described the first time (writer_gpu.c). */
uint64_t gp__tw_device_track(gp__tw *w, uint32_t device_id);
/* ---- writer_source.c: the source-level records (source_level) ---- */
/* Remembers a kernel's end and name for the records that count it. */
void gp__tw_source_kernel(gp__tw *w, const gp_activity_kernel *k);
/* A SOURCE_LOCATOR (kept), GLOBAL_ACCESS, SHARED_ACCESS, BRANCH or
 * INSTRUCTION_EXECUTION record (an instant); other kinds are ignored. */
void gp__tw_source_record(gp__tw *w, const gp_activity *r);
/* Frees what writer_source.c kept. */
void gp__tw_source_fini(gp__tw *w);
void gp__tw_function(gp__tw *w, const gp_activity_function *f);
/* PREEMPTION records as instants on the process track, UNIFIED_MEMORY_
 * COUNTER records as slices on a track per device (writer_um.c). */
void gp__tw_preemption(gp__tw *w, const gp_activity_preemption *p);
void gp__tw_um_counter(gp__tw *w, const gp_activity_um_counter *u);
/* Writes the interned entries of GPU kinds (queue, stage, context,
 * kernel, arg names). */
void gp__tw_gpu_write_pending(gp__tw *w, const tw_pending *p);

/* ---- writer_counters.c ---- */
void gp__tw_counter_record(gp__tw *w, const gp_activity_counter *c);
int gp__tw_counter_select(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                          size_t n, bool periodic, bool instrumented);
void gp__tw_counter_write_pending(gp__tw *w, const tw_pending *p);
int gp__tw_counter_taken(const gp__tw *w, uint32_t device_id,
                         const uint32_t *ids, size_t n, uint32_t *id,
                         uint32_t *other);
void gp__tw_counter_fini(gp__tw *w);
/* Writes the counter samples being grouped into a packet. */
void gp__tw_counter_flush(gp__tw *w);
/* An ENVIRONMENT record: GPU frequency as a GenericGpuFrequencyEvent,
 * memory in use as a GpuMemTotalEvent, the rest as GPU counter tracks. */
void gp__tw_environment(gp__tw *w, const gp_activity_environment *e);

/* writer.c: what records refer to, from the writer's context (writer.h,
 * gp__tw_context) or this process's core. */
const char *gp__tw_string(const gp__tw *w, uint32_t id);
uint32_t gp__tw_intern(const gp__tw *w, const char *s, size_t len);
/* gp__tw_intern_cached() when the id is not cached yet, or a context is
 * asked. */
uint32_t gp__tw_intern_cached_slow(const gp__tw *w, uint32_t *cache,
                                   const char *s);
/* A string's id, cached in *cache when the core is asked. Inline: every
 * copy and fill asks for its stage's name. */
static inline uint32_t gp__tw_intern_cached(const gp__tw *w, uint32_t *cache,
                                            const char *s) {
  if (!w->o.ctx) {
    uint32_t id = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (GP_LIKELY(id))
      return id;
  }
  return gp__tw_intern_cached_slow(w, cache, s);
}
uint32_t gp__tw_device_count(const gp__tw *w);
int gp__tw_device_info(const gp__tw *w, uint32_t device_id,
                       gp_device_info *info);
int gp__tw_device_queue(const gp__tw *w, uint32_t device_id, uint32_t queue,
                        gp_device_queue_info *q);

#endif /* GPUPERF_PERFETTO_WRITER_INT_H */
