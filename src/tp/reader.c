/*
 * reader.c - the importer's driver: framing, compressed packets, sequence
 * state and interning, clocks, the sort, and the parse loop (see import.h
 * for the two passes and the entry format).
 *
 * Every malformed byte is an error naming its offset: a length past the
 * end, a truncated varint, a bad wire type, data that does not inflate.
 * Nothing is read past the end of the input; nested messages are only
 * decoded as deep as the schema goes, so nesting depth is bounded.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"
#include "tp/spill.h"

/* TracePacket fields. */
enum {
  PKT_FTRACE_EVENTS = 1,
  PKT_PROCESS_TREE = 2,
  PKT_PROCESS_STATS = 9,
  PKT_TRUSTED_UID = 3,
  PKT_CLOCK_SNAPSHOT = 6,
  PKT_SYS_STATS = 7,
  PKT_CPU_INFO = 67,
  PKT_TIMESTAMP = 8,
  PKT_SEQ_ID = 10,
  PKT_TRACK_EVENT = 11,
  PKT_INTERNED_DATA = 12,
  PKT_SEQ_FLAGS = 13,
  PKT_INCREMENTAL_STATE_CLEARED = 41,
  PKT_PREVIOUS_PACKET_DROPPED = 42,
  PKT_COMPRESSED_PACKETS = 50,
  PKT_GPU_COUNTER_EVENT = 52,
  PKT_GPU_RENDER_STAGE_EVENT = 53,
  PKT_TIMESTAMP_CLOCK_ID = 58,
  PKT_TRACE_PACKET_DEFAULTS = 59,
  PKT_TRACK_DESCRIPTOR = 60,
  PKT_VULKAN_MEMORY_EVENT = 62,
  PKT_GPU_LOG = 63,
  PKT_VULKAN_API_EVENT = 65,
  PKT_GPU_MEM_TOTAL_EVENT = 71,
  PKT_TRUSTED_PID = 79,
  PKT_FIRST_PACKET_ON_SEQUENCE = 87,
  PKT_MACHINE_ID = 98,
  PKT_SYSTEM_INFO = 45,
  PKT_TRACE_CONFIG = 33,
  PKT_SERVICE_EVENT = 69,
  PKT_GPU_INFO = 128,
  PKT_GENERIC_GPU_FREQUENCY_EVENT = 129,
  PKT_FTRACE_STATS = 34,
  PKT_TRACE_STATS = 35,
  PKT_SYNCHRONIZATION_MARKER = 36,
  PKT_TRACE_UUID = 89,
  PKT_TRACE_PROVENANCE = 124,
};

#define SEQ_INCREMENTAL_STATE_CLEARED 1u
#define SEQ_NEEDS_INCREMENTAL_STATE 2u
/* Inflating stops past max(256 MiB, 256 x the file): a few kilobytes
 * must not claim gigabytes (a real trace compresses 5-20x). */
#define MIN_INFLATE_CAP (256ull << 20)
#define INFLATE_RATIO 256

/* ------------------------------------------------------------------ */
/* Packets                                                               */

/* The top-level fields of a TracePacket. */
typedef struct top {
  bool has_ts, has_clock, has_seq, has_machine;
  uint64_t ts;
  uint32_t clock, seq, flags, dropped, machine;
  bool cleared;
  const uint8_t *interned, *defaults, *snapshot, *compressed, *trace_stats;
  size_t interned_len, defaults_len, snapshot_len, compressed_len,
      trace_stats_len;
  bool sync_marker; /* synchronization_marker: no claim on the host */
  uint32_t data_id;
  const uint8_t *data;
  size_t data_len;
  uint64_t data_tag; /* source offset of the data field's tag */
  bool unknown;      /* a data field we do not import */
  bool unsorted;     /* one Perfetto handles before its sorter */
  bool first_on_seq; /* first_packet_on_sequence */
} top;

static bool is_data_field(uint32_t id) {
  switch (id) {
  case PKT_FTRACE_EVENTS:
  case PKT_PROCESS_TREE:
  case PKT_PROCESS_STATS:
  case PKT_TRACK_EVENT:
  case PKT_GPU_COUNTER_EVENT:
  case PKT_GPU_RENDER_STAGE_EVENT:
  case PKT_TRACK_DESCRIPTOR:
  case PKT_VULKAN_MEMORY_EVENT:
  case PKT_GPU_LOG:
  case PKT_VULKAN_API_EVENT:
  case PKT_GPU_MEM_TOTAL_EVENT:
  case PKT_SYS_STATS:
  case PKT_CPU_INFO:
  case PKT_GPU_INFO:
  case PKT_GENERIC_GPU_FREQUENCY_EVENT:
  case PKT_SYSTEM_INFO:
  case PKT_TRACE_CONFIG:
  case PKT_SERVICE_EVENT:
  case PKT_FTRACE_STATS:
  case PKT_TRACE_UUID:
    return true;
  default:
    return false;
  }
}

static int decode_top(gp__tp_importer *imp, const uint8_t *p, size_t n,
                      top *t) {
  memset(t, 0, sizeof(*t));
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, p, n, gp__tp_off(imp, p));
  int rc;
  for (;;) {
    uint64_t at = gp__pb_offset(&r);
    if ((rc = gp__tp_pb_next(&r, &f)) <= 0)
      break;
    bool v = f.wire_type == GP_PB_VARINT, l = f.wire_type == GP_PB_LEN;
    switch (f.id) {
    case PKT_TIMESTAMP:
      if (v) {
        t->has_ts = true;
        t->ts = f.value;
      }
      break;
    case PKT_TIMESTAMP_CLOCK_ID:
      if (v) {
        t->has_clock = true;
        t->clock = (uint32_t)f.value;
      }
      break;
    case PKT_SEQ_ID:
      if (v) {
        t->has_seq = true;
        t->seq = (uint32_t)f.value;
      }
      break;
    case PKT_SEQ_FLAGS:
      if (v)
        t->flags = (uint32_t)f.value;
      break;
    case PKT_INCREMENTAL_STATE_CLEARED:
      if (v)
        t->cleared = f.value != 0;
      break;
    case PKT_PREVIOUS_PACKET_DROPPED:
      if (v)
        t->dropped = (uint32_t)f.value;
      break;
    case PKT_MACHINE_ID:
      if (v) {
        t->has_machine = true;
        t->machine = (uint32_t)f.value;
      }
      break;
    case PKT_INTERNED_DATA:
      if (l) {
        t->interned = f.data;
        t->interned_len = f.size;
      }
      break;
    case PKT_TRACE_PACKET_DEFAULTS:
      if (l) {
        t->defaults = f.data;
        t->defaults_len = f.size;
      }
      break;
    case PKT_CLOCK_SNAPSHOT:
      if (l) {
        t->snapshot = f.data;
        t->snapshot_len = f.size;
      }
      break;
    case PKT_COMPRESSED_PACKETS:
      if (l) {
        t->compressed = f.data;
        t->compressed_len = f.size;
      }
      break;
    case PKT_TRACE_STATS: /* parsed before the sort, then sorted */
      if (l) {
        t->trace_stats = f.data;
        t->trace_stats_len = f.size;
      }
      break;
    case PKT_SYNCHRONIZATION_MARKER: /* sorted, nothing to parse */
      t->sync_marker = true;
      break;
    case PKT_TRACE_PROVENANCE: /* sorted; used by ProtoVMs, not here */
      break;
    case PKT_TRUSTED_UID:
    case PKT_TRUSTED_PID:
    case PKT_FIRST_PACKET_ON_SEQUENCE:
      t->first_on_seq = v && f.value != 0;
      break;
    default:
      if (l && is_data_field(f.id)) {
        t->data_id = f.id;
        t->data = f.data;
        t->data_len = f.size;
        t->data_tag = at;
      } else {
        t->unknown = true;
        /* interrupt_info, remote_clock_sync and extension_descriptor
         * are read, never sorted */
        t->unsorted |= f.id == 130 || f.id == 107 || f.id == 72;
      }
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "TracePacket");
  return 0;
}

/* The machine row of a packet (file order decides adoption). */
static int tokenize_machine(gp__tp_importer *imp, const top *t, uint64_t off) {
  if (!t->has_machine || t->machine == 0) {
    if (!imp->adopted && !t->sync_marker)
      imp->host_used = true;
    return 0;
  }
  if (gp__tp_map_get(&imp->machine_by_raw, t->machine))
    return 0;
  gp__tp_db *db = imp->db;
  uint64_t row;
  if (!imp->adopted && !imp->host_used) {
    /* The first remote machine seen before any host packet becomes the
     * host: relabel machine row 0. */
    imp->adopted = true;
    imp->adopted_raw = t->machine;
    db->machines.v[0].raw_id = t->machine;
    row = 0;
  } else {
    gp__tp_machine m = {t->machine,
                        {GP_TP_NONE, GP_TP_NONE, GP_TP_NONE, GP_TP_NONE}};
    if (!gp__tp_vec_push(&db->machines, m))
      return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
    row = db->machines.n - 1;
    /* Each machine has its own swapper (pid and tid 0), as Perfetto's
     * importer makes one when it first sees the machine. */
    gp__tp_process sp = {0,         GP_TP_NONE, GP_TP_NONE,    INT64_MIN,
                         INT64_MIN, GP_TP_NONE, (uint32_t)row, INT64_MIN,
                         GP_TP_NONE};
    gp__tp_thread st = {0,         GP_TP_NONE, (uint32_t)db->processes.n,
                        INT64_MIN, INT64_MIN,  (uint32_t)row,
                        true,      1};
    if (!gp__tp_vec_push(&db->processes, sp) ||
        !gp__tp_vec_push(&db->threads, st))
      return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
    int rc =
        gp__tp_procs_swapper(imp, (uint32_t)row, (uint32_t)db->processes.n - 1,
                             (uint32_t)db->threads.n - 1);
    if (!rc)
      rc = gp__tp_reader_queues(imp, (uint32_t)row, off);
    if (rc)
      return rc;
  }
  if (!gp__tp_map_put(&imp->machine_by_raw, t->machine, row, NULL))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  return 0;
}

static uint32_t machine_row(gp__tp_importer *imp, const top *t) {
  if (!t->has_machine || t->machine == 0)
    return 0;
  uint64_t *row = gp__tp_map_get(&imp->machine_by_raw, t->machine);
  return row ? (uint32_t)*row : 0;
}

/* Offset of the length varint of the LEN field whose tag starts at at. */
static uint64_t len_offset(const gp__tp_importer *imp, uint64_t at) {
  const uint8_t *p = gp__tp_src(imp, at);
  size_t n = 0;
  while (p[n] & 0x80)
    n++; /* the tag was validated when the field was read */
  return at + n + 1;
}

/* SystemInfo.utsname (sysname 1, version 2, release 3, machine 4) into
 * the machine row's sysname, release, version and arch. */
static int tokenize_system_info(gp__tp_importer *imp, uint32_t machine,
                                const uint8_t *p, size_t n) {
  static const int col_of[5] = {-1, 0, 2, 1, 3};
  gp__pb_reader r, u;
  gp__pb_field f, g;
  int rc;
  uint32_t page_size = 0;
  gp__pb_reader_init(&r, p, n, gp__tp_off(imp, p));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 4 && f.wire_type == GP_PB_LEN) /* tracing_service_version */
      gp__tp_service_version(imp, f.data, f.size);
    if (f.id == 6 && f.wire_type == GP_PB_VARINT) /* page_size */
      page_size = (uint32_t)f.value;
    if (f.id != 1 || f.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader_sub(&u, &r, &f);
    while ((rc = gp__tp_pb_next(&u, &g)) > 0) {
      if (g.id < 1 || g.id > 4 || g.wire_type != GP_PB_LEN)
        continue;
      uint32_t s =
          gp__tp_str_intern(&imp->db->strings, (const char *)g.data, g.size);
      if (s == GP_TP_NONE)
        return GP_ENOMEM;
      imp->db->machines.v[machine].uts[col_of[g.id]] = s;
    }
    if (rc < 0)
      return gp__tp_corrupt(imp, &u, "system_info");
  }
  /* SysStats' buddy_info and slab_info sizes use it (0: 4096). */
  imp->page_size = page_size ? page_size : 4096;
  return rc < 0 ? gp__tp_corrupt(imp, &r, "system_info") : 0;
}

/* Whether a TrackEvent has a time of its own: a timestamp_delta_us
 * (1) or a non-zero timestamp_absolute_us (16), the legacy fields
 * Perfetto reads when the packet has no timestamp. */
static bool track_event_timed(const uint8_t *p, size_t n) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, p, n, 0);
  while (gp__tp_pb_next(&r, &f) > 0)
    if (f.wire_type == GP_PB_VARINT &&
        (f.id == 1 || (f.id == 16 && f.value != 0)))
      return true;
  return false; /* a malformed event is the parser's to report */
}

/*
 * The stats Perfetto's tokenizer records for a track event it drops:
 * no trusted_packet_sequence_id, or no time at all (a packet without
 * timestamp: time 0 is a time). True when the event is dropped.
 */
static bool track_event_dropped(gp__tp_importer *imp, const top *t) {
  if (!t->has_seq) {
    gp__tp_stat(imp, GP_TP_STAT_track_event_missing_sequence_id, 1);
    return true;
  }
  if (!t->has_ts && !track_event_timed(t->data, t->data_len)) {
    gp__tp_stat(imp, GP_TP_STAT_track_event_missing_timestamp, 1);
    return true;
  }
  return false;
}

/* A TrackDescriptor: its track reserved, and the thread it names kept as
 * the sequence's thread descriptor. */
static int tokenize_descriptor(gp__tp_importer *imp, const top *t,
                               uint32_t machine) {
  int64_t pid, tid;
  int rc = gp__tp_tokenize_track_descriptor(imp, machine, t->data, t->data_len,
                                            &pid, &tid);
  uint64_t *si = gp__tp_map_get(&imp->seq_by_id, t->seq);
  if (!rc && tid >= 0 && si && imp->seqs.v[*si].valid) {
    gp__tp_seq *s = &imp->seqs.v[*si];
    s->td_valid = true;
    s->td_pid = pid;
    s->td_tid = tid;
  }
  return rc;
}

/* An entry that only takes its place in the order: a packet Perfetto's
 * sorter holds in the machine's packet queue, which we do not parse. */
static int push_skip(gp__tp_importer *imp, uint32_t gen, int64_t ts,
                     uint64_t lenoff) {
  if (ts < 0)
    return 0; /* dropped by the sorter, and counted */
  return gp__tp_push_entry(
      imp, gp__tp_packet_queue(imp, imp->gens.v[gen].machine, false), ts,
      gp__tp_ref(GP_TP_ENT_SKIP, gen, lenoff), lenoff);
}

/* The part of tokenization that follows timestamp conversion (also run at
 * EOF for packets whose clock could not be converted before). */
static int tokenize_data(gp__tp_importer *imp, const top *t, uint32_t gen,
                         int64_t ts, uint64_t lenoff) {
  /* A negative time: Perfetto's track-event tokenizer drops the event,
   * its sorter any other packet it would sort (a track descriptor has
   * been read by then; ftrace events have times of their own). */
  bool sorted = t->data_id != PKT_FTRACE_EVENTS && t->data_id != PKT_GPU_INFO &&
                t->data_id != PKT_SYSTEM_INFO &&
                t->data_id != PKT_SERVICE_EVENT &&
                t->data_id != PKT_FTRACE_STATS &&
                t->data_id != PKT_TRACE_UUID && t->data_id != PKT_CPU_INFO;
  if (ts < 0 && sorted) {
    if (t->data_id == PKT_TRACK_EVENT) {
      gp__tp_stat(imp, GP_TP_STAT_track_event_invalid_timestamp, 1);
      return 0;
    }
    gp__tp_stat(imp, GP_TP_STAT_trace_sorter_negative_timestamp_dropped, 1);
    if (t->data_id != PKT_TRACK_DESCRIPTOR && t->data_id != PKT_TRACE_CONFIG)
      return 0;
  }
  switch (t->data_id) {
  case PKT_GPU_COUNTER_EVENT: {
    bool drop = false;
    int rc = gp__tp_tokenize_gpu_counter_event(
        imp, machine_row(imp, t), gen, t->data, t->data_len, t->has_ts, &drop);
    if (rc || drop)
      return rc;
    break;
  }
  case PKT_GPU_INFO:
    return gp__tp_tokenize_gpu_info(imp, machine_row(imp, t), t->data,
                                    t->data_len);
  case PKT_TRACK_DESCRIPTOR: {
    int rc = tokenize_descriptor(imp, t, machine_row(imp, t));
    if (rc || ts < 0) /* a negative time: as push_skip() */
      return rc;
    break; /* parsed in its place too: gp__tp_parse_track_descriptor() */
  }
  case PKT_TRACE_CONFIG: {
    int rc = gp__tp_tokenize_trace_config(imp, t->data, t->data_len);
    return rc ? rc : push_skip(imp, gen, ts, lenoff);
  }
  case PKT_FTRACE_EVENTS:
    return gp__tp_tokenize_ftrace(imp, t->data, t->data_len, t->seq, gen,
                                  lenoff);
  case PKT_SYSTEM_INFO:
    return tokenize_system_info(imp, machine_row(imp, t), t->data, t->data_len);
  case PKT_SERVICE_EVENT:
    return gp__tp_tokenize_service_event(imp, t->data, t->data_len, ts, lenoff);
  case PKT_FTRACE_STATS:
    return gp__tp_tokenize_ftrace_stats(imp, t->data, t->data_len, t->seq,
                                        lenoff);
  case PKT_TRACE_UUID:
    return 0; /* Perfetto's metadata table, which gpuperf does not have */
  case PKT_CPU_INFO:
    return gp__tp_tokenize_cpu_info(imp, machine_row(imp, t), t->data,
                                    t->data_len);
  case 0:
    return push_skip(imp, gen, ts, lenoff);
  default:
    break;
  }
  return gp__tp_push_entry(imp,
                           gp__tp_packet_queue(imp, imp->gens.v[gen].machine,
                                               t->data_id == PKT_TRACK_EVENT),
                           ts, gp__tp_ref(GP_TP_ENT_PACKET, gen, t->data_tag),
                           lenoff);
}

static int tokenize_packets(gp__tp_importer *imp, uint64_t off, uint64_t end,
                            bool inflated);

static int inflate_packets(gp__tp_importer *imp, const top *t, uint64_t off) {
  uint64_t field_off = gp__tp_off(imp, t->compressed);
  if (imp->regions.n && field_off >= imp->file_size)
    return gp__tp_fail(imp, GP_ECORRUPT, field_off,
                       "compressed_packets nested in compressed_packets");
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  if (inflateInit(&zs) != Z_OK)
    return gp__tp_fail(imp, GP_ENOMEM, off, "cannot initialise zlib");
  /* zlib reads from the file mapping, which does not move. */
  zs.next_in = (Bytef *)(uintptr_t)t->compressed;
  uint64_t start = imp->inflated.n;
  uint64_t left = t->compressed_len;
  int zrc = Z_OK;
  int rc = 0;
  while (zrc != Z_STREAM_END) {
    uint64_t cap = imp->file_size * INFLATE_RATIO;
    if (cap < MIN_INFLATE_CAP)
      cap = MIN_INFLATE_CAP;
    if (imp->inflated.n > cap) {
      rc = gp__tp_fail(imp, GP_ECORRUPT, field_off,
                       "compressed_packets inflate to more than %llu bytes "
                       "(%dx the file): refusing a decompression bomb",
                       (unsigned long long)cap, INFLATE_RATIO);
      break;
    }
    if (!gp__tp_vec_reserve(&imp->inflated, 1 << 16)) {
      rc = gp__tp_fail(imp, GP_ENOMEM, field_off,
                       "out of memory inflating compressed_packets");
      break;
    }
    if (zs.avail_in == 0) {
      uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
      zs.avail_in = chunk;
      left -= chunk;
    }
    zs.next_out = imp->inflated.v + imp->inflated.n;
    zs.avail_out = (uInt)(imp->inflated.cap - imp->inflated.n);
    uInt before = zs.avail_out;
    zrc = inflate(&zs, Z_NO_FLUSH);
    imp->inflated.n += before - zs.avail_out;
    if (zrc == Z_STREAM_END)
      break;
    if (zrc != Z_OK && !(zrc == Z_BUF_ERROR && zs.avail_in == 0 && left)) {
      rc = gp__tp_fail(imp, GP_ECORRUPT, field_off,
                       "compressed_packets do not inflate (zlib: %s)",
                       zs.msg ? zs.msg : "truncated data");
      break;
    }
    if (zs.avail_in == 0 && left == 0 && zs.avail_out != 0) {
      rc = gp__tp_fail(imp, GP_ECORRUPT, field_off,
                       "compressed_packets end before the zlib stream does");
      break;
    }
  }
  inflateEnd(&zs);
  if (rc)
    return rc;
  gp__tp_inflated_region rg = {imp->file_size + start, imp->inflated.n - start,
                               field_off};
  if (!gp__tp_vec_push(&imp->regions, rg))
    return gp__tp_fail(imp, GP_ENOMEM, field_off, "out of memory");
  return tokenize_packets(imp, imp->file_size + start,
                          imp->file_size + imp->inflated.n, true);
}

static int tokenize_packet(gp__tp_importer *imp, uint64_t lenoff,
                           const uint8_t *p, size_t n) {
  top t;
  int rc = decode_top(imp, p, n, &t);
  if (rc)
    return rc;
  imp->packets++;
  if (t.compressed)
    return inflate_packets(imp, &t, lenoff);
  if ((rc = tokenize_machine(imp, &t, lenoff)) != 0)
    return rc;

  gp__tp_seq *seq = NULL;
  bool fresh = false;
  if ((rc = gp__tp_seq_get(imp, t.seq, &seq, &fresh, lenoff)) != 0)
    return rc;
  if (t.first_on_seq)
    seq->first_packet = true;
  if (t.has_seq && !fresh && t.dropped) {
    gp__tp_stat(imp, GP_TP_STAT_sequence_previous_packet_dropped, 1);
    /* for TraceStats.writer_stats: the causes are bits 1 to 8 */
    seq->dropped++;
    for (int i = 0; i < 8; i++)
      seq->loss[i] += (t.dropped >> (i + 1)) & 1;
  }
  if (t.cleared || (t.flags & SEQ_INCREMENTAL_STATE_CLEARED)) {
    uint32_t gen;
    if ((rc = gp__tp_seq_new_gen(imp, t.seq, NULL, &gen, lenoff)) != 0)
      return rc;
    seq = &imp->seqs.v[*gp__tp_map_get(&imp->seq_by_id, t.seq)];
    seq->gen = gen;
    seq->valid = true;
  } else if (t.dropped) {
    seq->valid = false;
  }
  if (t.defaults) {
    uint32_t gen;
    gp__tp_gen copy = imp->gens.v[seq->gen];
    if ((rc = gp__tp_seq_defaults(imp, &copy, t.defaults, t.defaults_len)) ||
        (rc = gp__tp_seq_new_gen(imp, t.seq, &copy, &gen, lenoff)))
      return rc;
    seq->gen = gen;
  }
  if (t.interned) {
    if (!seq->valid)
      gp__tp_stat(
          imp, GP_TP_STAT_interned_data_skipped_incremental_state_invalid, 1);
    else if ((rc = gp__tp_seq_interned(imp, imp->gens.v[seq->gen].ns,
                                       t.interned, t.interned_len)) != 0)
      return rc;
  }
  if (t.snapshot)
    return gp__tp_seq_clock_snapshot(imp, t.seq, t.snapshot, t.snapshot_len);
  if (t.trace_stats && (rc = gp__tp_tokenize_trace_stats(
                            imp, t.trace_stats, t.trace_stats_len)) != 0)
    return rc;
  if (t.flags & SEQ_NEEDS_INCREMENTAL_STATE) {
    if (t.seq == 0)
      return gp__tp_fail(imp, GP_ECORRUPT, lenoff,
                         "packet needs incremental state but has no "
                         "trusted_packet_sequence_id");
    seq->needs_state++;
    seq->needs_state_skipped += !seq->valid;
    if (!seq->valid) {
      gp__tp_stat(imp,
                  GP_TP_STAT_packet_skipped_seq_needs_incremental_state_invalid,
                  1);
      return 0;
    }
  }
  if (t.unknown && !t.data_id) {
    gp__tp_stat(imp, GP_TP_STAT_packet_type_not_imported, 1);
    if (t.unsorted)
      return 0;
  }

  uint32_t machine = machine_row(imp, &t);
  if (imp->gens.v[seq->gen].machine != machine) {
    gp__tp_gen copy = imp->gens.v[seq->gen];
    copy.machine = machine;
    uint32_t g2;
    if ((rc = gp__tp_seq_new_gen(imp, t.seq, &copy, &g2, lenoff)) != 0)
      return rc;
    seq->gen = g2;
  }
  uint32_t gen = seq->gen;
  if (t.data_id == PKT_TRACK_EVENT && track_event_dropped(imp, &t))
    return 0;
  int64_t ts;
  if (t.has_ts) {
    ts = (int64_t)t.ts;
    uint32_t clock = t.clock ? t.clock : imp->gens.v[gen].ts_clock;
    if (clock) {
      if (clock >= 64 && clock < 128 && t.seq == 0)
        return gp__tp_fail(imp, GP_ECORRUPT, lenoff,
                           "packet uses sequence-scoped clock %u but has no "
                           "trusted_packet_sequence_id",
                           clock);
      uint64_t key = gp__tp_clock_key(clock, t.seq);
      int64_t ns = gp__tp_clocks_abs(&imp->clocks, key, ts);
      if (gp__tp_clocks_convert(&imp->clocks, key, ns, &ts) != 0) {
        if (!gp__tp_may_defer(imp)) {
          gp__tp_stat(
              imp, GP_TP_STAT_clock_sync_failure_undeferrable_packet_loss, 1);
          return 0;
        }
        struct gp__tp_deferred d = {gp__tp_ref(GP_TP_ENT_PACKET, gen, lenoff),
                                    key, ns};
        if (!gp__tp_vec_push(&imp->deferred, d))
          return gp__tp_fail(imp, GP_ENOMEM, lenoff, "out of memory");
        return 0;
      }
    }
  } else {
    ts = imp->max_ts;
  }
  if (ts > imp->max_ts)
    imp->max_ts = ts;
  return tokenize_data(imp, &t, gen, ts, lenoff);
}

/* Bytes framed between two progress calls. */
#define PROGRESS_BYTES (4u << 20)

/* Frames the Trace message in [off, end) of the source. */
static int tokenize_packets(gp__tp_importer *imp, uint64_t off, uint64_t end,
                            bool inflated) {
  const uint8_t *base = gp__tp_src(imp, off);
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, base, (size_t)(end - off), off);
  uint64_t said = off;
  for (;;) {
    gp__tp_spill_poll();
    uint64_t at = gp__pb_offset(&r);
    if (imp->progress && !inflated && at - said >= PROGRESS_BYTES) {
      imp->progress(imp->progress_user, "reading", at, 2 * imp->file_size);
      said = at;
    }
    int rc = gp__tp_pb_next(&r, &f);
    if (rc == 0)
      return 0;
    if (rc < 0) {
      /* Say what is wrong with the record at `at`. */
      const uint8_t *p = gp__tp_src(imp, at);
      uint64_t tag, len;
      size_t nt = gp__pb_get_varint(p, base + (end - off), &tag);
      if (!inflated && imp->allow_truncated) {
        gp__tp_stat(imp, GP_TP_STAT_trace_truncated_bytes, (int64_t)(end - at));
        return 0;
      }
      if (nt && (tag & 7) == GP_PB_LEN) {
        size_t nl = gp__pb_get_varint(p + nt, base + (end - off), &len);
        if (nl && len > (end - at) - nt - nl)
          return gp__tp_fail(imp, GP_ECORRUPT, at,
                             "packet length %llu goes past the end of the "
                             "%s (%llu bytes left)",
                             (unsigned long long)len,
                             inflated ? "inflated data" : "file",
                             (unsigned long long)((end - at) - nt - nl));
        if (!nl)
          return gp__tp_fail(imp, GP_ECORRUPT, at, "truncated packet length");
      }
      return gp__tp_fail(imp, GP_ECORRUPT, at,
                         nt ? "malformed field (wire type %u) where a packet "
                              "was expected"
                            : "truncated field tag%.0u",
                         nt ? (unsigned)(tag & 7) : 0u);
    }
    if (f.id != 1 || f.wire_type != GP_PB_LEN)
      continue; /* Trace has no other fields; skip what we do not know */
    uint64_t payload = gp__tp_off(imp, f.data);
    if (payload >= (1ull << GP_TP_OFF_BITS))
      return gp__tp_fail(imp, GP_ERANGE, at,
                         "trace larger than 1 TiB is not supported");
    uint64_t lenoff = len_offset(imp, at);
    rc = tokenize_packet(imp, lenoff, f.data, f.size);
    if (rc)
      return rc;
    /* Inflating may have moved the buffer we are reading. */
    if (inflated) {
      uint64_t pos = gp__pb_offset(&r);
      base = gp__tp_src(imp, off);
      gp__pb_reader_init(&r, base, (size_t)(end - off), off);
      r.p = base + (pos - off);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Parsing                                                               */

static int parse_entry(gp__tp_importer *imp, const gp__tp_entry *e,
                       uint32_t queue) {
  /* A skipped packet's ref is its length varint, not a field: nothing
   * to decode (decoding it as tag and length read past a packet that
   * ended the input). */
  if (gp__tp_ref_kind(e->ref) == GP_TP_ENT_SKIP)
    return 0;
  uint32_t cpu = queue < imp->queue_cpu.n ? imp->queue_cpu.v[queue] : 0;
  if (gp__tp_ref_kind(e->ref) == GP_TP_ENT_COMPACT) {
    gp__tp_csched cs;
    gp__tp_cs_take(imp, gp__tp_ref_off(e->ref), &cs);
    return gp__tp_parse_compact_sched(
        imp, e->ts, &cs, imp->gens.v[gp__tp_ref_gen(e->ref)].machine, cpu);
  }
  uint64_t off = gp__tp_ref_off(e->ref);
  const uint8_t *p = gp__tp_src(imp, off);
  uint32_t gen = gp__tp_ref_gen(e->ref);
  /* The field was validated when tokenized: its tag and length varints
   * end before the data does, so they decode without a bound check. */
  uint64_t tag = 0, len = 0;
  size_t nt = gp__pb_get_varint_known(p, &tag);
  size_t nl = gp__pb_get_varint_known(p + nt, &len);
  uint64_t data_off = off + nt + nl;
  const gp__tp_gen *g = &imp->gens.v[gen];
  if (gp__tp_ref_kind(e->ref) == GP_TP_ENT_FTRACE) {
    imp->ftrace_gen = gen;
    return gp__tp_parse_ftrace_event(imp, e->ts, data_off, (size_t)len,
                                     g->machine, cpu);
  }
  gp__tp_pkt pk;
  pk.ts = e->ts;
  pk.has_ts = true;
  pk.seq_id = g->seq_id;
  pk.gen = gen;
  pk.machine = g->machine;
  pk.data_id = (uint32_t)(tag >> 3);
  pk.data_off = data_off;
  pk.data_len = (size_t)len;
  switch (pk.data_id) {
  case PKT_GPU_COUNTER_EVENT:
    return gp__tp_parse_gpu_counter_event(imp, &pk);
  case PKT_GPU_RENDER_STAGE_EVENT:
    return gp__tp_parse_render_stage(imp, &pk);
  case PKT_GPU_LOG:
    return gp__tp_parse_gpu_log(imp, &pk);
  case PKT_GPU_MEM_TOTAL_EVENT:
    return gp__tp_parse_gpu_mem_total(imp, &pk);
  case PKT_SYS_STATS:
    return gp__tp_parse_sys_stats(imp, &pk);
  case PKT_GENERIC_GPU_FREQUENCY_EVENT:
    return gp__tp_parse_gpu_frequency(imp, &pk);
  case PKT_VULKAN_MEMORY_EVENT:
    return gp__tp_parse_vulkan_memory(imp, &pk);
  case PKT_VULKAN_API_EVENT:
    return gp__tp_parse_vulkan_api(imp, &pk);
  case PKT_TRACK_EVENT:
    return gp__tp_parse_track_event(imp, &pk);
  case PKT_PROCESS_TREE:
    return gp__tp_parse_process_tree(imp, &pk);
  case PKT_PROCESS_STATS:
    return gp__tp_parse_process_stats(imp, &pk);
  case PKT_TRACK_DESCRIPTOR:
    return gp__tp_parse_track_descriptor(imp, &pk);
  default:
    return 0;
  }
}

static int retry_deferred(gp__tp_importer *imp) {
  for (size_t i = 0; i < imp->deferred.n; i++) {
    struct gp__tp_deferred *d = &imp->deferred.v[i];
    int64_t ts;
    if (gp__tp_clocks_convert(&imp->clocks, d->clock_key, d->ts, &ts) != 0) {
      gp__tp_stat(imp, GP_TP_STAT_clock_sync_failure_undeferrable_packet_loss,
                  1);
      continue;
    }
    uint64_t off = gp__tp_ref_off(d->ref);
    const uint8_t *p = gp__tp_src(imp, off);
    uint64_t len = 0;
    size_t nl = gp__pb_get_varint_known(p, &len);
    top t;
    int rc = decode_top(imp, p + nl, (size_t)len, &t);
    if (!rc)
      rc = tokenize_data(imp, &t, gp__tp_ref_gen(d->ref), ts, off);
    if (rc)
      return rc;
  }
  gp__tp_vec_free(&imp->deferred);
  return 0;
}

/* The keys the parsers use on every event, interned once. */
static int intern_keys(gp__tp_importer *imp) {
  static const char *const launch[6] = {
      "launch.grid_size.x",      "launch.grid_size.y",
      "launch.grid_size.z",      "launch.workgroup_size.x",
      "launch.workgroup_size.y", "launch.workgroup_size.z"};
  static const char *const kernel[3] = {"kernel_name", "kernel_demangled_name",
                                        "arch"};
  static const char *const dims[5] = {"ugpu", "gpu", "render_stage_source",
                                      "hwqueue_id", "hwqueue_name"};
  int rc = 0;
  for (int i = 0; !rc && i < 6; i++)
    rc = gp__tp_intern(imp, launch[i], strlen(launch[i]), &imp->k_launch[i]);
  for (int i = 0; !rc && i < 3; i++)
    rc = gp__tp_intern(imp, kernel[i], strlen(kernel[i]), &imp->k_kernel[i]);
  for (int i = 0; !rc && i < 5; i++)
    rc = gp__tp_intern(imp, dims[i], strlen(dims[i]), &imp->k_dims[i]);
  if (!rc)
    rc = gp__tp_intern(imp, "iid", 3, &imp->k_src_iid);
  if (!rc)
    rc = gp__tp_intern(imp, "id", 2, &imp->k_src_id);
  if (!rc)
    rc = gp__tp_intern(imp, "track_compressor_idx", 20, &imp->k_cidx);
  return rc;
}

/* See import.h. */
/*
 * Drops the input's pages below offset `upto` (page-aligned down) from
 * memory, when the importer may (release_input). A page touched again
 * later is read from the file again, so this only ever costs time.
 */
static void release_input(gp__tp_importer *imp, uint64_t upto) {
  if (!imp->release_input)
    return;
  long pg = sysconf(_SC_PAGESIZE);
  uint64_t psz = pg > 0 ? (uint64_t)pg : 4096;
  uint64_t base = (uint64_t)(uintptr_t)imp->file;
  uint64_t from = imp->released, to = ((base + upto) & ~(psz - 1)) - base;
  if (base % psz != 0 || to <= from || to > imp->file_size)
    return;
  madvise((void *)(uintptr_t)(base + from), (size_t)(to - from), MADV_DONTNEED);
  imp->released = to;
}

#define RELEASE_BLOCK 16384 /* entries parsed between two releases */

/*
 * Parses the entries in time order as the merge hands them out (sort.c).
 * Every RELEASE_BLOCK entries, the input below the least offset any
 * entry not yet parsed reads is released: entries are in time order,
 * which follows file order closely, so the file's pages go as the tables
 * grow instead of both being held at the peak. The merge gives back the
 * entries' own pages as it takes them.
 */
static int parse_entries(gp__tp_importer *imp) {
  gp__tp_sorter m;
  /* The queues' arrays are the sorter's now, whatever it returns. */
  int rc = gp__tp_sorter_init(&m, imp->queues.v, imp->queues.n, &imp->win);
  if (rc)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory sorting events");
  gp__tp_entry e;
  uint64_t said = 0;
  /* Every machine is known (tokenizing made them): a stream that sends
   * rows by machine learns them before the first row. */
  rc = gp__tp_stream_begin(imp);
  for (size_t i = 0; !rc && gp__tp_sorter_next(&m, &e); i++) {
    if (i % RELEASE_BLOCK == 0 && i) {
      uint64_t low = gp__tp_sorter_low_off(&m);
      if (low < imp->file_size)
        release_input(imp, low);
      /* Parsed up to about low: entries come in time order, which
       * follows file order closely (not exactly: done never goes back). */
      if (imp->progress && low <= imp->file_size && low > said) {
        imp->progress(imp->progress_user, "reading", imp->file_size + low,
                      2 * imp->file_size);
        said = low;
      }
    }
    gp__tp_spill_poll();
    rc = parse_entry(imp, &e, m.cur);
    imp->events++;
  }
  gp__tp_stat(imp, GP_TP_STAT_sorter_push_event_out_of_order,
              (int64_t)m.out_of_order);
  gp__tp_sorter_fini(&m);
  if (!rc)
    gp__tp_service_finish(imp);
  if (!rc)
    rc = gp__tp_stream_finish(imp);
  return rc;
}

int gp__tp_import(gp__tp_importer *imp) {
  int rc = intern_keys(imp);
  if (!rc)
    rc = gp__tp_procs_swapper(imp, 0, 0, 0);
  if (!rc)
    rc = gp__tp_sched_init(imp);
  if (!rc)
    rc = gp__tp_reader_queues(imp, 0, 0);
  if (!rc)
    rc = tokenize_packets(imp, 0, imp->file_size, false);
  if (!rc)
    rc = retry_deferred(imp);
  if (!rc)
    rc = parse_entries(imp);
  gp__tp_queues_free(imp);
  if (!rc)
    rc = gp__tp_parse_finish(imp);
  return rc ? rc : imp->err;
}

/* See import.h. */
void gp__tp_importer_init(gp__tp_importer *imp, gp__tp_db *db, const char *name,
                          const uint8_t *data, uint64_t size) {
  memset(imp, 0, sizeof(*imp));
  imp->db = db;
  imp->name = name;
  imp->file = data;
  imp->file_size = size;
  gp__tp_clocks_init(&imp->clocks);
  for (int i = 0; i < GP_TP_CTR_CACHE; i++)
    imp->ctr_cache[i].spec = GP_TP_NONE;
  imp->gpu_log_track = GP_TP_NONE;
  imp->svc_major = -1;
  imp->vulkan_events_track = GP_TP_NONE;
  imp->tracing_started_ts = INT64_MIN;
  imp->ftrace_data_start = INT64_MIN;
}

/* See import.h. */
void gp__tp_importer_fini(gp__tp_importer *imp) {
  gp__tp_trackers_free(imp);
  gp__tp_raw_free(imp);
  gp__tp_sys_stats_free(imp);
  gp__tp_clocks_fini(&imp->clocks);
  gp__tp_vec_free(&imp->inflated);
  gp__tp_vec_free(&imp->regions);
  gp__tp_vec_free(&imp->gens);
  gp__tp_vec_free(&imp->seqs);
  gp__tp_map_free(&imp->seq_by_id);
  gp__tp_vec_free(&imp->interned);
  gp__tp_map2_free(&imp->interned_by_key);
  gp__tp_queues_free(imp);
  gp__tp_vec_free(&imp->deferred);
  gp__tp_map_free(&imp->istat_by_key);
  gp__tp_map_free(&imp->machine_by_raw);
  gp__tp_map_free(&imp->ftrace_first);
  gp__tp_sched_free(imp);
}
