/*
 * parse_track.c - track descriptors and track events: the host side of a
 * GPU trace (API calls, user ranges, counters) and the GpuCorrelation
 * extension that links an API call to the render stages it submitted or
 * waited for.
 *
 * Supported: descriptors for processes, threads, plain and counter
 * tracks (parent chains, names, units, multipliers, incremental values);
 * events of type SLICE_BEGIN, SLICE_END, INSTANT and COUNTER on the
 * event's track_uuid, the sequence's default or the default track;
 * categories and names (inline or interned); the slice's args
 * (track_args.c: debug annotations, gpu_api, GpuCorrelation ids, the
 * passthrough thread); extra counter values; flow_ids and
 * terminating_flow_ids; the flows of the gpu_correlation extension. Legacy
 * events (phases, pid/tid overrides, thread descriptors on the packet) are
 * counted in track_event_parser_errors.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MAX_PARENTS 100 /* ancestors, as Perfetto's kMaxAncestors */
#define MAX_EXTRA 64

enum {
  TE_SLICE_BEGIN = 1,
  TE_SLICE_END = 2,
  TE_INSTANT = 3,
  TE_COUNTER = 4,
};

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

static int desc_get(gp__tp_importer *imp, uint64_t uuid, uint32_t machine,
                    uint32_t *out) {
  bool ins;
  uint64_t *i = gp__tp_map_put(&imp->desc_by_uuid, uuid, imp->descs.n, &ins);
  if (!i)
    return nomem(imp);
  if (ins) {
    gp__tp_desc d;
    memset(&d, 0, sizeof(d));
    d.uuid = uuid;
    d.name = GP_TP_NONE;
    d.pid = d.tid = -1;
    d.counter_unit_multiplier = 1;
    d.counter_unit = GP_TP_NONE;
    d.track = GP_TP_NONE;
    d.upid = GP_TP_NONE;
    d.description = GP_TP_NONE;
    d.machine = machine;
    if (!gp__tp_vec_push(&imp->descs, d))
      return nomem(imp);
  }
  *out = (uint32_t)*i;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Descriptors (tokenize time)                                           */

static int decode_process(gp__tp_importer *imp, const gp__pb_reader *parent,
                          const gp__pb_field *pf, int64_t *pid,
                          uint32_t *name) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 1 && f.wire_type == GP_PB_VARINT)
      *pid = (int32_t)(uint32_t)f.value;
    else if (f.id == 6 && f.wire_type == GP_PB_LEN &&
             (rc = gp__tp_intern(imp, f.data, f.size, name)))
      return rc;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessDescriptor");
  return 0;
}

static int decode_thread(gp__tp_importer *imp, const gp__pb_reader *parent,
                         const gp__pb_field *pf, int64_t *pid, int64_t *tid,
                         uint32_t *name) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 1 && f.wire_type == GP_PB_VARINT)
      *pid = (int32_t)(uint32_t)f.value;
    else if (f.id == 2 && f.wire_type == GP_PB_VARINT)
      *tid = (int64_t)f.value;
    else if (f.id == 5 && f.wire_type == GP_PB_LEN &&
             (rc = gp__tp_intern(imp, f.data, f.size, name)))
      return rc;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ThreadDescriptor");
  return 0;
}

static int decode_counter(gp__tp_importer *imp, const gp__pb_reader *parent,
                          const gp__pb_field *pf, gp__tp_desc *d) {
  static const char *const units[] = {NULL, "ns", "count", "bytes"};
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  d->is_counter = true;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    if (f.id == 3 && f.wire_type == GP_PB_VARINT && f.value >= 1 &&
        f.value <= 3 && d->counter_unit == GP_TP_NONE)
      rc2 = key(imp, units[f.value], &d->counter_unit);
    else if (f.id == 6 && f.wire_type == GP_PB_LEN)
      rc2 = gp__tp_intern(imp, f.data, f.size, &d->counter_unit);
    else if (f.id == 4 && f.wire_type == GP_PB_VARINT)
      d->counter_unit_multiplier = (int64_t)f.value;
    else if (f.id == 5 && f.wire_type == GP_PB_VARINT)
      d->counter_incremental = f.value != 0;
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "CounterDescriptor");
  return 0;
}

/*
 * The process of a process descriptor (descs[i], pid on machine), named
 * name: one descriptor uuid per process, so a second uuid for a pid is a
 * new process that reused it (Perfetto's track_event_tracker.cc); a uuid
 * described again keeps its process. A process new here gets its main
 * thread at once, as Perfetto's GetOrCreateProcess gives it one.
 */
static int descriptor_process(gp__tp_importer *imp, uint32_t machine,
                              int64_t pid, uint32_t name, uint32_t i,
                              uint32_t *upid) {
  int rc;
  if (imp->descs.v[i].upid != GP_TP_NONE)
    *upid = imp->descs.v[i].upid;
  else if ((rc = gp__tp_process_get_main(imp, machine, pid, upid)))
    return rc;
  uint64_t uuid = imp->descs.v[i].uuid;
  bool ins;
  uint64_t *u = gp__tp_map_put(&imp->uuid_by_upid, *upid, uuid, &ins);
  if (!u)
    return nomem(imp);
  if (!ins && *u != uuid) {
    if ((rc = gp__tp_process_new(imp, machine, pid, upid)))
      return rc;
    if (!gp__tp_map_put(&imp->uuid_by_upid, *upid, uuid, NULL))
      return nomem(imp);
  }
  gp__tp_process_name(imp, *upid, name, GP_TP_PNAME_TRACK_DESCRIPTOR);
  imp->descs.v[i].upid = *upid;
  return 0;
}

/* See import.h. */
int gp__tp_tokenize_track_descriptor(gp__tp_importer *imp, uint32_t machine,
                                     const uint8_t *data, size_t len,
                                     int64_t *thread_pid, int64_t *thread_tid) {
  *thread_pid = *thread_tid = -1;
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  gp__tp_desc d;
  memset(&d, 0, sizeof(d));
  d.name = d.counter_unit = d.description = GP_TP_NONE;
  d.pid = d.tid = -1;
  d.counter_unit_multiplier = 1;
  uint32_t pname = GP_TP_NONE, tname = GP_TP_NONE, merge_key = GP_TP_NONE;
  int64_t ppid = -1, tpid = -1;
  uint64_t merge = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    if (f.id == 1 && f.wire_type == GP_PB_VARINT)
      d.uuid = f.value;
    else if (f.id == 5 && f.wire_type == GP_PB_VARINT)
      d.parent_uuid = f.value;
    else if ((f.id == 2 || f.id == 10 || f.id == 13) &&
             f.wire_type == GP_PB_LEN)
      rc2 = gp__tp_intern(imp, f.data, f.size, &d.name);
    else if (f.id == 3 && f.wire_type == GP_PB_LEN)
      rc2 = decode_process(imp, &r, &f, &ppid, &pname);
    else if (f.id == 4 && f.wire_type == GP_PB_LEN)
      rc2 = decode_thread(imp, &r, &f, &tpid, &d.tid, &tname);
    else if (f.id == 8 && f.wire_type == GP_PB_LEN)
      rc2 = decode_counter(imp, &r, &f, &d);
    else if (f.id == 15 && f.wire_type == GP_PB_VARINT)
      merge = f.value;
    else if (f.id == 11 && f.wire_type == GP_PB_VARINT)
      d.child_ordering = f.value <= 3 ? (uint8_t)f.value : 0;
    else if (f.id == 12 && f.wire_type == GP_PB_VARINT) {
      d.has_rank = true;
      d.sibling_order_rank = (int32_t)f.value;
    } else if (f.id == 14 && f.wire_type == GP_PB_LEN)
      rc2 = gp__tp_intern(imp, f.data, f.size, &d.description);
    else if (f.id == 16 && f.wire_type == GP_PB_LEN)
      rc2 = gp__tp_intern(imp, f.data, f.size, &merge_key);
    else if (f.id == 17 && f.wire_type == GP_PB_VARINT) {
      char buf[48];
      int n = snprintf(buf, sizeof(buf), "sibling_merge_key_int:%llu",
                       (unsigned long long)f.value);
      rc2 = gp__tp_intern(imp, buf, (size_t)n, &merge_key);
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "TrackDescriptor");
  /* SiblingMergeBehavior: 0, 1 by name; 2 none; 3 by key. */
  d.merge = merge == 2   ? GP_TP_MERGE_NONE
            : merge == 3 ? GP_TP_MERGE_BY_KEY
                         : GP_TP_MERGE_BY_NAME;
  d.merge_key = merge_key;
  d.upid = GP_TP_NONE;
  d.pid = d.tid >= 0 ? tpid : ppid;
  if (d.tid >= 0 && tpid >= 0) {
    *thread_pid = tpid;
    *thread_tid = d.tid;
  }
  /* Its thread or process is made (and named) where the descriptor is
   * parsed, in time order, as Perfetto's ParseTrackDescriptor does. */
  d.is_process = d.tid < 0 && ppid >= 0;
  d.pt_name = d.tid >= 0 ? tname : pname;
  uint32_t i;
  if ((rc = desc_get(imp, d.uuid, machine, &i)))
    return rc;
  gp__tp_desc *o = &imp->descs.v[i];
  if (!o->reserved && o->track == GP_TP_NONE) {
    d.track = GP_TP_NONE;
    d.machine = machine;
    d.reserved = true;
    *o = d;
  } else if (d.name != GP_TP_NONE) {
    /* A later descriptor names a track that had no name, or renames one
     * that does not merge with its siblings, in use or not; the rest of
     * it is the first one's (Perfetto's ReserveDescriptorTrack). */
    bool alone = d.merge == GP_TP_MERGE_NONE;
    if (o->name == GP_TP_NONE || alone)
      o->name = d.name;
    if (alone && o->track != GP_TP_NONE)
      imp->db->tracks.v[o->track].name = d.name;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Resolving a descriptor to a track                                     */

/*
 * The source args of a descriptor's track (TrackEventTracker::AddTrackArgs):
 * source "descriptor", its uuid as trace_id, whether it is the root of its
 * scope, whether the sequence of the event that made it began with a first
 * packet, and the descriptor's ordering, rank and description.
 */
static int source_args(gp__tp_importer *imp, const gp__tp_desc *d, bool root,
                       uint32_t seq, gp__tp_argb *b) {
  static const char *const ordering[4] = {NULL, "lexicographic",
                                          "chronological", "explicit"};
  uint32_t k_src, k_id, k_root, k_first, k_order, k_rank, k_desc, v_desc;
  int rc;
  if ((rc = key(imp, "source", &k_src)) || (rc = key(imp, "trace_id", &k_id)) ||
      (rc = key(imp, "is_root_in_scope", &k_root)) ||
      (rc = key(imp, "has_first_packet_on_sequence", &k_first)) ||
      (rc = key(imp, "child_ordering", &k_order)) ||
      (rc = key(imp, "sibling_order_rank", &k_rank)) ||
      (rc = key(imp, "description", &k_desc)) ||
      (rc = key(imp, "descriptor", &v_desc)))
    return rc;
  b->n = 0;
  gp__tp_argb_str(b, k_src, v_desc);
  gp__tp_argb_int(b, k_id, (int64_t)d->uuid);
  gp__tp_argb_bool(b, k_root, root);
  uint64_t *si = seq ? gp__tp_map_get(&imp->seq_by_id, seq) : NULL;
  if (si && imp->seqs.v[*si].first_packet)
    gp__tp_argb_bool(b, k_first, true);
  if (d->child_ordering) {
    uint32_t v;
    if ((rc = key(imp, ordering[d->child_ordering], &v)))
      return rc;
    gp__tp_argb_str(b, k_order, v);
  }
  if (d->has_rank)
    gp__tp_argb_int(b, k_rank, d->sibling_order_rank);
  if (d->description != GP_TP_NONE)
    gp__tp_argb_str(b, k_desc, d->description);
  return 0;
}

/* Whether descriptor di's ancestors make a tree Perfetto resolves
 * (track_event_tracker.cc, IsTrackHierarchyValid): each described, no
 * loop, the root reached within MAX_PARENTS steps (at most 99 ancestors).
 * Counts the stat of the fault: the event is dropped. A loop or a chain too
 * deep cannot change (a uuid keeps its first descriptor's parent), so it is
 * remembered; a parent not yet described may be later. */
static bool tree_ok(gp__tp_importer *imp, uint32_t di) {
  gp__tp_desc *d = &imp->descs.v[di];
  if (d->bad_tree) {
    gp__tp_stat(imp,
                d->bad_tree == 1
                    ? GP_TP_STAT_track_event_track_hierarchy_loop
                    : GP_TP_STAT_track_event_track_hierarchy_too_deep,
                1);
    return false;
  }
  uint64_t seen[MAX_PARENTS];
  uint64_t cur = d->uuid;
  for (int i = 0; i < MAX_PARENTS; i++) {
    if (cur == 0)
      return true;
    for (int j = 0; j < i; j++)
      if (seen[j] == cur) {
        d->bad_tree = 1;
        gp__tp_stat(imp, GP_TP_STAT_track_event_track_hierarchy_loop, 1);
        return false;
      }
    uint64_t *ci = gp__tp_map_get(&imp->desc_by_uuid, cur);
    const gp__tp_desc *c = ci ? &imp->descs.v[*ci] : NULL;
    if (i > 0 && (!c || !c->reserved)) {
      gp__tp_stat(imp, GP_TP_STAT_track_hierarchy_missing_uuid, 1);
      return false;
    }
    seen[i] = cur;
    cur = c ? c->parent_uuid : 0;
  }
  d->bad_tree = 2;
  gp__tp_stat(imp, GP_TP_STAT_track_event_track_hierarchy_too_deep, 1);
  return false;
}

/* See import.h. */
int gp__tp_parse_track_descriptor(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  uint64_t uuid = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == 1 && f.wire_type == GP_PB_VARINT)
      uuid = f.value;
  uint64_t *di =
      rc == 0 && uuid ? gp__tp_map_get(&imp->desc_by_uuid, uuid) : NULL;
  if (!di)
    return 0; /* a bad descriptor was counted when tokenized */
  uint32_t i = (uint32_t)*di;
  if (imp->descs.v[i].track == GP_TP_NONE)
    tree_ok(imp, i);
  gp__tp_desc *d = &imp->descs.v[i];
  if (d->tid >= 0) {
    uint32_t utid, name = d->pt_name;
    if ((rc = gp__tp_thread_update(imp, p->machine, d->tid, d->pid, &utid)))
      return rc;
    gp__tp_thread_name(imp, utid, name, GP_TP_TNAME_TRACK_DESCRIPTOR);
  } else if (d->is_process) {
    uint32_t upid;
    if ((rc =
             descriptor_process(imp, p->machine, d->pid, d->pt_name, i, &upid)))
      return rc;
  }
  return 0;
}

/* The track of descriptor di, made (with its parents) at the first event
 * on it, an event of sequence seq; GP_TP_NONE (the event is dropped, and
 * counted) where its ancestors do not make a tree (tree_ok). */
static int desc_track(gp__tp_importer *imp, uint32_t di, int depth,
                      uint32_t seq, uint32_t *out) {
  gp__tp_desc d = imp->descs.v[di];
  if (d.track != GP_TP_NONE) {
    *out = d.track;
    return 0;
  }
  if (depth == 0 && !tree_ok(imp, di)) {
    *out = GP_TP_NONE;
    return 0;
  }
  uint32_t parent = GP_TP_NONE;
  int rc;
  uint64_t *pi = d.parent_uuid && depth < MAX_PARENTS
                     ? gp__tp_map_get(&imp->desc_by_uuid, d.parent_uuid)
                     : NULL;
  if (pi && (rc = desc_track(imp, (uint32_t)*pi, depth + 1, seq, &parent)))
    return rc;
  /* The scope: this descriptor's own thread or process (a root track),
   * else the nearest ancestor's. The parent link is kept only below a
   * track that is not a root (Perfetto's track_event_tracker.cc). */
  int64_t tid = d.tid, pid = d.pid;
  uint32_t named_upid = d.upid;
  bool own = tid >= 0 || pid >= 0;
  bool parent_root = false;
  if (pi) {
    const gp__tp_desc *a = &imp->descs.v[*pi];
    parent_root = a->tid >= 0 || a->pid >= 0;
  }
  for (int k = 0; !own && pi && k < MAX_PARENTS; k++) {
    const gp__tp_desc *a = &imp->descs.v[*pi];
    if (a->tid >= 0 || a->pid >= 0) {
      tid = a->tid;
      pid = a->pid;
      named_upid = a->upid;
      break;
    }
    pi = a->parent_uuid ? gp__tp_map_get(&imp->desc_by_uuid, a->parent_uuid)
                        : NULL;
  }
  uint32_t utid = GP_TP_NONE, upid = GP_TP_NONE, k_utid, k_upid, k_uuid;
  uint32_t k_puuid, k_mtype, k_mval;
  if ((rc = key(imp, "utid", &k_utid)) || (rc = key(imp, "upid", &k_upid)) ||
      (rc = key(imp, "track_uuid", &k_uuid)) ||
      (rc = key(imp, "parent_track_uuid", &k_puuid)) ||
      (rc = key(imp, "merge_key_type", &k_mtype)) ||
      (rc = key(imp, "merge_key_value", &k_mval)))
    return rc;
  if (tid >= 0 && (rc = gp__tp_thread_update(imp, d.machine, tid,
                                             pid >= 0 ? pid : 0, &utid)))
    return rc;
  if (tid < 0 && pid >= 0 &&
      (rc = gp__tp_process_get(imp, d.machine, pid, &upid)))
    return rc;
  if (tid < 0 && named_upid != GP_TP_NONE)
    upid = named_upid; /* the process its (or its root's) descriptor named */
  if (utid != GP_TP_NONE)
    upid = imp->db->threads.v[utid].upid;
  const char *type;
  const char *scope = tid >= 0 ? "thread" : pid >= 0 ? "process" : "global";
  char tbuf[40];
  gp__tp_argb dims;
  dims.n = 0;
  if (tid >= 0)
    gp__tp_argb_int(&dims, k_utid, utid);
  else if (pid >= 0)
    gp__tp_argb_int(&dims, k_upid, upid);
  bool merged = !own && !d.is_counter && d.merge != GP_TP_MERGE_NONE;
  uint32_t name = d.name;
  /* Named before its dimensions: a merged track's name is its merge key. */
  if (d.uuid == 0 && name == GP_TP_NONE &&
      (rc = key(imp, "Default Track", &name)))
    return rc;
  if (own && tid >= 0 && !d.is_counter) {
    /* A thread's own descriptor: the thread's execution track, unnamed. */
    type = "thread_execution";
    name = GP_TP_NONE;
  } else if (merged) {
    snprintf(tbuf, sizeof(tbuf), "%s_merged_track_event", scope);
    type = tbuf;
    uint32_t mkey = d.merge == GP_TP_MERGE_BY_KEY ? d.merge_key : name;
    gp__tp_argb_int(&dims, k_puuid, (int64_t)d.parent_uuid);
    gp__tp_argb_int(&dims, k_mtype, d.merge);
    if (mkey != GP_TP_NONE)
      gp__tp_argb_str(&dims, k_mval, mkey);
    /* A TrackCompressor track, the first of its set (overlapping slices
     * stay on it: see docs/sql.md). */
    gp__tp_argb_int(&dims, imp->k_cidx, 0);
  } else {
    snprintf(tbuf, sizeof(tbuf), "%s_%strack_event", scope,
             d.is_counter ? "counter_" : "");
    type = tbuf;
    gp__tp_argb_int(&dims, k_uuid, (int64_t)d.uuid);
  }
  /* Thread and process scoped children hang under their parent only when
   * it is not a root; global ones always do. */
  if (own || (tid >= 0 || pid >= 0 ? parent_root : false))
    parent = GP_TP_NONE;
  /* Source args, but on a thread's own track; the root of its scope: a
   * process's or thread's own track, or the default track. */
  gp__tp_argb src;
  bool thread_own = own && tid >= 0 && !d.is_counter;
  if (!thread_own && (rc = source_args(imp, &d, own || d.uuid == 0, seq, &src)))
    return rc;
  gp__tp_track_spec spec = {type,
                            name,
                            d.is_counter,
                            d.counter_unit,
                            d.machine,
                            thread_own ? NULL : &src,
                            -1,
                            -1,
                            upid == GP_TP_NONE || tid >= 0 ? -1 : (int64_t)upid,
                            utid == GP_TP_NONE ? -1 : (int64_t)utid,
                            parent};
  uint32_t track;
  bool created;
  if ((rc = gp__tp_track_intern(imp, &spec, &dims, &track, &created)))
    return rc;
  if (merged && created)
    imp->db->tracks.v[track].group = imp->track_groups++;
  imp->descs.v[di].track = track;
  *out = track;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                                */

typedef struct te {
  uint64_t type, track_uuid, name_iid;
  bool has_track, has_name_iid, has_type;
  const uint8_t *name;
  size_t name_len;
  bool has_name;
  bool has_counter, counter_is_double;
  int64_t counter_int;
  double counter_double;
  uint32_t nextra_uuids, nextra_values;
  bool has_api;
  uint64_t api;
  bool legacy;
  /* Fields that later passes read (categories, debug annotations, flows
   * and GPU correlations): a pass whose fields are absent is skipped. */
  bool has_cats, has_annotations, has_links;
  bool has_corr;     /* GpuCorrelation's first id, to prefetch its flows */
  bool has_gpu_corr; /* a GpuCorrelation: its ids become args too */
  uint64_t corr;
  /* Last, and not cleared: only their first nextra_* are ever read. */
  uint64_t extra_uuids[MAX_EXTRA];
  int64_t extra_values[MAX_EXTRA];
} te;

static int decode_te(gp__tp_importer *imp, const gp__tp_pkt *p, te *e) {
  memset(e, 0, offsetof(te, extra_uuids));
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    bool v = f.wire_type == GP_PB_VARINT;
    switch (f.id) {
    case 9:
      if (v) {
        e->has_type = true;
        e->type = f.value;
      }
      break;
    case 11:
      if (v) {
        e->has_track = true;
        e->track_uuid = f.value;
      }
      break;
    case 10:
      if (v) {
        e->has_name_iid = true;
        e->name_iid = f.value;
      }
      break;
    case 23:
      if (f.wire_type == GP_PB_LEN) {
        e->has_name = true;
        e->name = f.data;
        e->name_len = f.size;
      }
      break;
    case 30:
      if (v) {
        e->has_counter = true;
        e->counter_int = (int64_t)f.value;
      }
      break;
    case 44:
      if (f.wire_type == GP_PB_I64) {
        e->has_counter = true;
        e->counter_is_double = true;
        e->counter_double = gp__pb_as_double(&f);
      }
      break;
    case 31:
      if (v && e->nextra_uuids < MAX_EXTRA)
        e->extra_uuids[e->nextra_uuids++] = f.value;
      break;
    case 12:
      if (v && e->nextra_values < MAX_EXTRA)
        e->extra_values[e->nextra_values++] = (int64_t)f.value;
      break;
    case 3001:
      if (v) {
        e->has_api = true;
        e->api = f.value;
      }
      break;
    case 6: /* legacy_event */
      e->legacy = true;
      break;
    case 3:
    case 22:
      e->has_cats = true;
      break;
    case 4:
      e->has_annotations = true;
      break;
    case 3000:
      if (f.wire_type == GP_PB_LEN)
        e->has_gpu_corr = true;
      if (!e->has_corr && f.wire_type == GP_PB_LEN) {
        gp__pb_reader sub;
        gp__pb_field g;
        gp__pb_reader_sub(&sub, &r, &f);
        if (gp__tp_pb_next(&sub, &g) > 0 && g.wire_type == GP_PB_VARINT) {
          e->has_corr = true;
          e->corr = g.value;
        }
      }
      e->has_links = true;
      break;
    case 47:
    case 48:
      e->has_links = true;
      break;
    default:
      break;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "TrackEvent");
  return 0;
}

/* The category string: interned categories and inline ones, joined. */
static int categories(gp__tp_importer *imp, const gp__tp_pkt *p, const te *e,
                      uint32_t *out) {
  *out = GP_TP_NONE;
  if (!e->has_cats)
    return 0;
  char buf[1024];
  size_t n = 0;
  unsigned count = 0;
  uint32_t single = GP_TP_NONE;
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    uint32_t s = GP_TP_NONE;
    if (f.id == 3 && f.wire_type == GP_PB_VARINT) {
      int rc2;
      s = gp__tp_interned_str(imp, p->gen, GP_TP_IN_EVENT_CATEGORIES, f.value,
                              2, &rc2);
      if (rc2)
        return rc2;
    } else if (f.id == 22 && f.wire_type == GP_PB_LEN) {
      int rc2 = gp__tp_intern(imp, f.data, f.size, &s);
      if (rc2)
        return rc2;
    }
    if (s == GP_TP_NONE)
      continue;
    single = s;
    const char *str = gp__tp_str(&imp->db->strings, s);
    int w = snprintf(buf + n, sizeof(buf) - n, "%s%s", count ? "," : "", str);
    if (w > 0 && (size_t)w < sizeof(buf) - n)
      n += (size_t)w;
    count++;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "TrackEvent");
  if (count == 1)
    *out = single;
  else if (count > 1)
    return gp__tp_intern(imp, buf, n, out);
  return 0;
}

/*
 * The thread an event on a process or global track passes through, as
 * Perfetto's importer finds it (track_event_event_importer.h,
 * ParseInitialTrackAssociation): the sequence's thread descriptor (its
 * last thread TrackDescriptor) is made a thread (UpdateThread), and on a
 * process track it counts when that thread is the track's process's.
 * *out: its utid, or NONE.
 */
static int passthrough_utid(gp__tp_importer *imp, const gp__tp_pkt *p,
                            uint32_t track, uint32_t *out) {
  *out = GP_TP_NONE;
  uint64_t *si = gp__tp_map_get(&imp->seq_by_id, p->seq_id);
  if (!si || !imp->seqs.v[*si].td_valid)
    return 0;
  const gp__tp_seq *s = &imp->seqs.v[*si];
  int64_t tu = imp->db->tracks.v[track].utid;
  int64_t tp = imp->db->tracks.v[track].upid;
  if (tu >= 0)
    return 0; /* a thread's track: nothing passes through */
  uint32_t utid;
  int rc = gp__tp_thread_update(imp, p->machine, s->td_tid, s->td_pid, &utid);
  if (rc)
    return rc;
  if (tp < 0 || (int64_t)imp->db->threads.v[utid].upid == tp)
    *out = utid;
  return 0;
}

/* GpuCorrelation (extension 3000) and v2 flows of an event's slice. */
static int slice_links(gp__tp_importer *imp, const gp__tp_pkt *p,
                       uint32_t slice) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    if (f.id == 3000 && f.wire_type == GP_PB_LEN) {
      gp__pb_reader_sub(&sub, &r, &f);
      while (!rc2 && (rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
        rc2 = 0;
        if (g.wire_type != GP_PB_VARINT)
          continue;
        if (g.id == 1)
          rc2 = gp__tp_flow_submission(imp, g.value, slice);
        else if (g.id == 2)
          rc2 = gp__tp_flow_te_wait(imp, g.value, slice);
      }
      if (rc2 < 0 && !imp->err)
        rc2 = gp__tp_corrupt(imp, &sub, "GpuCorrelation");
    } else if ((f.id == 47 || f.id == 48) && f.wire_type == GP_PB_I64) {
      bool ins;
      uint64_t *prev = gp__tp_map_put(&imp->flow_v1, f.value, slice, &ins);
      if (!prev)
        return nomem(imp);
      if (!ins) {
        if (*prev != GP_TP_NONE && *prev != slice)
          rc2 = gp__tp_flow_add(imp, (uint32_t)*prev, slice);
        *prev = f.id == 47 ? slice : GP_TP_NONE;
      } else if (f.id == 48) {
        *prev = GP_TP_NONE;
        gp__tp_stat(imp, GP_TP_STAT_flow_invalid_id, 1);
      }
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "TrackEvent");
  return 0;
}

/* A value of counter descriptor di, of the event in packet p; its args
 * (annotations, passthrough thread) only where `args` (an extra counter
 * value takes none, as in Perfetto). */
static int counter_value(gp__tp_importer *imp, uint32_t di, int64_t ts,
                         double v, const gp__tp_pkt *p, const te *e,
                         uint64_t uuid, bool with_args) {
  uint32_t track, row, args = GP_TP_NONE;
  int rc = desc_track(imp, di, 0, p->seq_id, &track);
  if (rc || track == GP_TP_NONE)
    return rc;
  if (with_args) {
    uint32_t passthrough = GP_TP_NONE;
    if (uuid && (rc = passthrough_utid(imp, p, track, &passthrough)))
      return rc;
    const gp__tp_te_args ea = {e->has_annotations, e->has_api, e->api,
                               e->has_gpu_corr, passthrough};
    if ((rc = gp__tp_track_event_args(imp, p, &ea, &args)))
      return rc;
  }
  gp__tp_desc *d = &imp->descs.v[di];
  v *= (double)d->counter_unit_multiplier;
  if (d->counter_incremental) {
    d->counter_last += v;
    v = d->counter_last;
  }
  if ((rc = gp__tp_counter_add(imp, ts, track, v, &row)))
    return rc;
  if (args != GP_TP_NONE && !gp__tp_map_put(&imp->db->c_args, row, args, NULL))
    return nomem(imp);
  return 0;
}

/* See import.h. */
int gp__tp_parse_track_event(gp__tp_importer *imp, const gp__tp_pkt *p) {
  te e;
  int rc = decode_te(imp, p, &e);
  if (rc)
    return rc;
  if (e.has_corr)
    gp__tp_flow_prefetch(imp, e.corr);
  const gp__tp_gen *gen = &imp->gens.v[p->gen];
  uint64_t uuid = e.track_uuid;
  uint64_t extra_uuids[MAX_EXTRA];
  uint32_t nextra = e.nextra_uuids;
  memcpy(extra_uuids, e.extra_uuids, nextra * sizeof(extra_uuids[0]));
  if (gen->ted_len) {
    gp__pb_reader r;
    gp__pb_field f;
    gp__tp_reader_at(imp, &r, gen->ted_off, gen->ted_len);
    bool own_extra = nextra > 0;
    while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
      if (f.id == 11 && f.wire_type == GP_PB_VARINT && !e.has_track)
        uuid = f.value;
      else if (f.id == 31 && f.wire_type == GP_PB_VARINT && !own_extra &&
               nextra < MAX_EXTRA)
        extra_uuids[nextra++] = f.value;
    }
    if (rc < 0)
      return gp__tp_corrupt(imp, &r, "TrackEventDefaults");
  }
  if (e.legacy || (!e.has_type)) {
    gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
    return 0;
  }
  uint64_t *di = gp__tp_map_get(&imp->desc_by_uuid, uuid);
  uint32_t d;
  if (!di) {
    if (uuid != 0) {
      gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
      return 0;
    }
    if ((rc = desc_get(imp, 0, p->machine, &d)))
      return rc;
  } else {
    d = (uint32_t)*di;
  }

  /* Extra counter values ride on any event type. */
  for (uint32_t i = 0; i < nextra && i < e.nextra_values; i++) {
    uint64_t *xi = gp__tp_map_get(&imp->desc_by_uuid, extra_uuids[i]);
    if (!xi || !imp->descs.v[*xi].is_counter) {
      gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
      continue;
    }
    if ((rc = counter_value(imp, (uint32_t)*xi, p->ts,
                            (double)e.extra_values[i], p, &e, 0, false)))
      return rc;
  }

  if (e.type == TE_COUNTER) {
    if (!imp->descs.v[d].is_counter || !e.has_counter) {
      gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
      return 0;
    }
    return counter_value(imp, d, p->ts,
                         e.counter_is_double ? e.counter_double
                                             : (double)e.counter_int,
                         p, &e, uuid, true);
  }
  if (imp->descs.v[d].is_counter) {
    gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
    return 0;
  }
  uint32_t track, cat, name = GP_TP_NONE, args, slice = GP_TP_NONE;
  uint32_t passthrough = GP_TP_NONE;
  if ((rc = desc_track(imp, d, 0, uuid ? p->seq_id : 0, &track)) ||
      track == GP_TP_NONE || (rc = categories(imp, p, &e, &cat)) ||
      (uuid && (rc = passthrough_utid(imp, p, track, &passthrough))))
    return rc;
  if (e.has_name_iid)
    name = gp__tp_interned_str(imp, p->gen, GP_TP_IN_EVENT_NAMES, e.name_iid, 2,
                               &rc);
  else if (e.has_name)
    rc = gp__tp_intern(imp, e.name, e.name_len, &name);
  if (rc)
    return rc;
  const gp__tp_te_args ea = {e.has_annotations, e.has_api, e.api,
                             e.has_gpu_corr, passthrough};
  switch (e.type) {
  case TE_SLICE_BEGIN:
    if ((rc = gp__tp_track_event_args(imp, p, &ea, &args)) ||
        (rc = gp__tp_slice_begin(imp, p->ts, track, cat, name, args, &slice)))
      return rc;
    break;
  case TE_SLICE_END:
    /* An end with nothing open is ignored without a stat, as Perfetto's
     * SliceTracker does (misplaced_end_event is for a parent that ended
     * before its open children: tracks.c). */
    if ((rc = gp__tp_slice_end(imp, p->ts, track, &slice)))
      return rc;
    break;
  case TE_INSTANT:
    if ((rc = gp__tp_track_event_args(imp, p, &ea, &args)) ||
        (rc = gp__tp_slice_scoped(imp, p->ts, 0, track, cat, name, args,
                                  &slice)))
      return rc;
    break;
  default:
    gp__tp_stat(imp, GP_TP_STAT_track_event_parser_errors, 1);
    return 0;
  }
  if (slice == GP_TP_NONE || !e.has_links)
    return 0;
  return slice_links(imp, p, slice);
}

/* See import.h. */
int gp__tp_parse_finish(gp__tp_importer *imp) {
  /* Flows whose start was seen but never an end are not errors in
   * Perfetto either; slices still open keep dur -1, as there. */
  (void)imp;
  return 0;
}
