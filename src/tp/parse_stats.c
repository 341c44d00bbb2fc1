/*
 * parse_stats.c - what the recording programs said about their own work:
 * the tracing service's TraceStats (TracePacket field 35) and
 * traced_probes' FtraceStats (field 34), into the stats table under
 * Perfetto's names (v58.2, proto_trace_reader.cc and ftrace_parser.cc).
 *
 * Both are read when the reader meets them, before the sort, as Perfetto
 * does: an FtraceStats packet is consumed there, a TraceStats packet also
 * takes its place in the order (reader.c pushes it and parses nothing).
 * The values are set, not added: a second packet overwrites the first.
 *
 *   TraceStats field            stat                        idx
 *   2..9, 12..14 (scalars)      traced_<name>               -
 *   15 final_flush_outcome      traced_final_flush_*        - (added)
 *   11 filter_stats             filter_*                    -
 *      20 bytes_discarded_per_buffer
 *                               traced_buf_bytes_filtered_out  buffer
 *   1 buffer_stats              traced_buf_<name>           buffer
 *   18 writer_stats             traced_buf_sequence_packet_loss,
 *                               _incremental_sequences_dropped,
 *                               _data_loss_<cause>          buffer
 *
 * The writer_stats rows are Perfetto's own analysis: for each sequence
 * the service names, the losses the reader saw on it so far (gp__tp_seq).
 *
 * FtraceStats come twice per CPU, at the start and the end of the trace:
 * ftrace_cpu_<name>_begin / _end, and _delta (end minus start) where the
 * start was seen. Times are seconds in a double, stored as ns. Data loss
 * in the kernel buffer is flagged elsewhere (ftrace_cpu_has_data_loss,
 * from each bundle's lost_events): Perfetto keeps overrun_delta as info.
 *
 * Not reproduced: Perfetto's own bookkeeping rows (clock_sync_cache_miss,
 * guess_trace_type_duration_ns, parse_trace_duration_ns) describe how it
 * ran, not the trace; and the import-log rows it adds next to
 * ftrace_setup_errors (gpuperf has no trace_import_logs table).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

/* TraceStats fields (trace_stats.proto) */
enum {
  TS_BUFFER_STATS = 1,
  TS_FILTER_STATS = 11,
  TS_FINAL_FLUSH_OUTCOME = 15,
  TS_WRITER_STATS = 18,
  WS_SEQUENCE_ID = 1,
  WS_BUFFER = 4,
  FS_BYTES_DISCARDED_PER_BUFFER = 20,
  FINAL_FLUSH_SUCCEEDED = 1,
  FINAL_FLUSH_FAILED = 2,
};

/* A varint field of a message and the stat it sets. */
typedef struct field_stat {
  uint32_t field;
  int stat;
} field_stat;

static const field_stat trace_stats_fields[] = {
    {2, GP_TP_STAT_traced_producers_connected},
    {3, GP_TP_STAT_traced_producers_seen},
    {4, GP_TP_STAT_traced_data_sources_registered},
    {5, GP_TP_STAT_traced_data_sources_seen},
    {6, GP_TP_STAT_traced_tracing_sessions},
    {7, GP_TP_STAT_traced_total_buffers},
    {8, GP_TP_STAT_traced_chunks_discarded},
    {9, GP_TP_STAT_traced_patches_discarded},
    {12, GP_TP_STAT_traced_flushes_requested},
    {13, GP_TP_STAT_traced_flushes_succeeded},
    {14, GP_TP_STAT_traced_flushes_failed},
};

static const field_stat filter_stats_fields[] = {
    {1, GP_TP_STAT_filter_input_packets}, {2, GP_TP_STAT_filter_input_bytes},
    {3, GP_TP_STAT_filter_output_bytes},  {4, GP_TP_STAT_filter_errors},
    {5, GP_TP_STAT_filter_time_taken_ns},
};

/* TraceStats.BufferStats, in Perfetto's order of setting them. */
static const field_stat buffer_stats_fields[] = {
    {12, GP_TP_STAT_traced_buf_buffer_size},
    {1, GP_TP_STAT_traced_buf_bytes_written},
    {13, GP_TP_STAT_traced_buf_bytes_overwritten},
    {14, GP_TP_STAT_traced_buf_bytes_read},
    {15, GP_TP_STAT_traced_buf_padding_bytes_written},
    {16, GP_TP_STAT_traced_buf_padding_bytes_cleared},
    {2, GP_TP_STAT_traced_buf_chunks_written},
    {10, GP_TP_STAT_traced_buf_chunks_rewritten},
    {3, GP_TP_STAT_traced_buf_chunks_overwritten},
    {18, GP_TP_STAT_traced_buf_chunks_discarded},
    {17, GP_TP_STAT_traced_buf_chunks_read},
    {20, GP_TP_STAT_traced_buf_chunks_relocated},
    {11, GP_TP_STAT_traced_buf_chunks_committed_out_of_order},
    {4, GP_TP_STAT_traced_buf_write_wrap_count},
    {5, GP_TP_STAT_traced_buf_patches_succeeded},
    {6, GP_TP_STAT_traced_buf_patches_failed},
    {7, GP_TP_STAT_traced_buf_readaheads_succeeded},
    {8, GP_TP_STAT_traced_buf_readaheads_failed},
    {9, GP_TP_STAT_traced_buf_abi_violations},
    {19, GP_TP_STAT_traced_buf_trace_writer_packet_loss},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_FIELDS 21 /* a field number above every one in these tables */

/*
 * The last value of each varint field of a message (data, len) listed
 * in tab, into v (indexed by field number); fields absent stay 0, as a
 * protobuf decoder reads them.
 */
static int read_varints(gp__tp_importer *imp, const uint8_t *data, size_t len,
                        const char *what, uint64_t v[MAX_FIELDS]) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  memset(v, 0, MAX_FIELDS * sizeof(v[0]));
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.wire_type == GP_PB_VARINT && f.id < MAX_FIELDS)
      v[f.id] = f.value;
  return rc < 0 ? gp__tp_corrupt(imp, &r, what) : 0;
}

/* FilterStats (data, len): its scalars, and the bytes it removed from
 * each buffer. */
static int filter_stats(gp__tp_importer *imp, const uint8_t *data, size_t len) {
  uint64_t v[MAX_FIELDS];
  int rc = read_varints(imp, data, len, "trace_stats.filter_stats", v);
  if (rc)
    return rc;
  for (size_t i = 0; i < NELEM(filter_stats_fields); i++)
    imp->db->stats[filter_stats_fields[i].stat] =
        (int64_t)v[filter_stats_fields[i].field];
  gp__pb_reader r;
  gp__pb_field f;
  int64_t buf = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != FS_BYTES_DISCARDED_PER_BUFFER || f.wire_type != GP_PB_VARINT)
      continue;
    rc = gp__tp_stat_idx_set(imp, GP_TP_STAT_traced_buf_bytes_filtered_out,
                             buf++, (int64_t)f.value);
    if (rc)
      return rc;
  }
  return rc < 0 ? gp__tp_corrupt(imp, &r, "trace_stats.filter_stats") : 0;
}

/* The losses seen on the sequences of one buffer. */
typedef struct buf_loss {
  int32_t buffer;
  int64_t dropped, incremental, loss[8];
} buf_loss;

typedef GP_TP_VEC(buf_loss) buf_losses;

/* The stats of each loss cause bit, from 2 (bit 1) to 256 (bit 8). */
static const int loss_stats[8] = {
    GP_TP_STAT_traced_buf_data_loss_read_gap,
    GP_TP_STAT_traced_buf_data_loss_chunk_corrupted,
    GP_TP_STAT_traced_buf_data_loss_orphan_continuation,
    GP_TP_STAT_traced_buf_data_loss_reassembly_gap,
    GP_TP_STAT_traced_buf_data_loss_reassembly_broken_chain,
    GP_TP_STAT_traced_buf_data_loss_overwrite,
    GP_TP_STAT_traced_buf_data_loss_writer_abort,
    GP_TP_STAT_traced_buf_data_loss_smb_full,
};

/* One WriterStats (data, len): its sequence's losses added to its
 * buffer's, when the reader has seen that sequence. */
static int writer_stats(gp__tp_importer *imp, const uint8_t *data, size_t len,
                        buf_losses *bufs) {
  uint64_t v[MAX_FIELDS];
  int rc = read_varints(imp, data, len, "trace_stats.writer_stats", v);
  if (rc)
    return rc;
  uint64_t *si = gp__tp_map_get(&imp->seq_by_id, (uint32_t)v[WS_SEQUENCE_ID]);
  if (!si)
    return 0;
  const gp__tp_seq *s = &imp->seqs.v[*si];
  int32_t buffer = (int32_t)(uint32_t)v[WS_BUFFER];
  size_t b = 0;
  while (b < bufs->n && bufs->v[b].buffer != buffer)
    b++;
  if (b == bufs->n && !gp__tp_vec_push(bufs, ((buf_loss){.buffer = buffer})))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  buf_loss *l = &bufs->v[b];
  l->dropped += s->dropped;
  l->incremental +=
      s->needs_state_skipped > 0 && s->needs_state_skipped == s->needs_state;
  for (int i = 0; i < 8; i++)
    l->loss[i] += s->loss[i];
  return 0;
}

/* The per-buffer loss rows of TraceStats (data, len). */
static int buffer_losses(gp__tp_importer *imp, const uint8_t *data,
                         size_t len) {
  buf_losses bufs = {0};
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == TS_WRITER_STATS && f.wire_type == GP_PB_LEN &&
        (rc = writer_stats(imp, f.data, f.size, &bufs)) != 0)
      goto out;
  if (rc < 0) {
    rc = gp__tp_corrupt(imp, &r, "trace_stats");
    goto out;
  }
  for (size_t b = 0; b < bufs.n && !rc; b++) {
    const buf_loss *l = &bufs.v[b];
    rc = gp__tp_stat_idx_set(imp, GP_TP_STAT_traced_buf_sequence_packet_loss,
                             l->buffer, l->dropped);
    if (!rc)
      rc = gp__tp_stat_idx_set(
          imp, GP_TP_STAT_traced_buf_incremental_sequences_dropped, l->buffer,
          l->incremental);
    for (int i = 0; i < 8 && !rc; i++)
      rc = gp__tp_stat_idx_set(imp, loss_stats[i], l->buffer, l->loss[i]);
  }
out:
  gp__tp_vec_free(&bufs);
  return rc;
}

/* See import.h. */
int gp__tp_tokenize_trace_stats(gp__tp_importer *imp, const uint8_t *data,
                                size_t len) {
  uint64_t v[MAX_FIELDS];
  int rc = read_varints(imp, data, len, "trace_stats", v);
  if (rc)
    return rc;
  for (size_t i = 0; i < NELEM(trace_stats_fields); i++)
    imp->db->stats[trace_stats_fields[i].stat] =
        (int64_t)v[trace_stats_fields[i].field];

  gp__pb_reader r;
  gp__pb_field f;
  const uint8_t *filter = NULL;
  size_t filter_len = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == TS_FILTER_STATS && f.wire_type == GP_PB_LEN) {
      filter = f.data;
      filter_len = f.size;
    }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "trace_stats");
  if (filter && (rc = filter_stats(imp, filter, filter_len)) != 0)
    return rc;

  if (v[TS_FINAL_FLUSH_OUTCOME] == FINAL_FLUSH_SUCCEEDED)
    gp__tp_stat(imp, GP_TP_STAT_traced_final_flush_succeeded, 1);
  else if (v[TS_FINAL_FLUSH_OUTCOME] == FINAL_FLUSH_FAILED)
    gp__tp_stat(imp, GP_TP_STAT_traced_final_flush_failed, 1);

  int64_t buf = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != TS_BUFFER_STATS || f.wire_type != GP_PB_LEN)
      continue;
    uint64_t b[MAX_FIELDS];
    if ((rc = read_varints(imp, f.data, f.size, "trace_stats.buffer_stats",
                           b)) != 0)
      return rc;
    for (size_t i = 0; i < NELEM(buffer_stats_fields); i++)
      if ((rc = gp__tp_stat_idx_set(imp, buffer_stats_fields[i].stat, buf,
                                    (int64_t)b[buffer_stats_fields[i].field])))
        return rc;
    buf++;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "trace_stats");
  return buffer_losses(imp, data, len);
}

/* FtraceStats and FtraceCpuStats fields (ftrace_stats.proto) */
enum {
  FT_PHASE = 1,
  FT_CPU_STATS = 2,
  FT_ATRACE_ERRORS = 5,
  FT_UNKNOWN_EVENTS = 6,
  FT_FAILED_EVENTS = 7,
  FT_PARSE_ERRORS = 9,
  FT_KPROBE_STATS = 10,
  FT_EXCLUSIVE_FEATURE_ERROR = 13,
  PHASE_START = 1,
  PHASE_END = 2,
  CPU_CPU = 1,
  CPU_OLDEST_EVENT_TS = 6,
  CPU_NOW_TS = 7,
  PARSE_ZERO_DATA_LENGTH = 12, /* FTRACE_STATUS_ABI_ZERO_DATA_LENGTH */
};

/* FtraceCpuStats counters: field, then the _begin, _end and _delta stats. */
static const struct {
  uint32_t field;
  int stat[3];
} cpu_counters[] = {
    {2,
     {GP_TP_STAT_ftrace_cpu_entries_begin, GP_TP_STAT_ftrace_cpu_entries_end,
      GP_TP_STAT_ftrace_cpu_entries_delta}},
    {3,
     {GP_TP_STAT_ftrace_cpu_overrun_begin, GP_TP_STAT_ftrace_cpu_overrun_end,
      GP_TP_STAT_ftrace_cpu_overrun_delta}},
    {4,
     {GP_TP_STAT_ftrace_cpu_commit_overrun_begin,
      GP_TP_STAT_ftrace_cpu_commit_overrun_end,
      GP_TP_STAT_ftrace_cpu_commit_overrun_delta}},
    {5,
     {GP_TP_STAT_ftrace_cpu_bytes_begin, GP_TP_STAT_ftrace_cpu_bytes_end,
      GP_TP_STAT_ftrace_cpu_bytes_delta}},
    {8,
     {GP_TP_STAT_ftrace_cpu_dropped_events_begin,
      GP_TP_STAT_ftrace_cpu_dropped_events_end,
      GP_TP_STAT_ftrace_cpu_dropped_events_delta}},
    {9,
     {GP_TP_STAT_ftrace_cpu_read_events_begin,
      GP_TP_STAT_ftrace_cpu_read_events_end,
      GP_TP_STAT_ftrace_cpu_read_events_delta}},
};

/* Seconds in a double as ns; past the int64 range, its end (Perfetto
 * clamps only the top, the rest being undefined there: NaN gives 0). */
static int64_t seconds_ns(uint64_t bits) {
  double s;
  memcpy(&s, &bits, sizeof(s));
  double ns = s * 1e9;
  if (isnan(ns))
    return 0;
  if (ns >= (double)INT64_MAX)
    return INT64_MAX;
  if (ns <= (double)INT64_MIN)
    return INT64_MIN;
  return (int64_t)ns;
}

/* One FtraceCpuStats (data, len) of phase (0 start, 1 end). */
static int cpu_stats(gp__tp_importer *imp, const uint8_t *data, size_t len,
                     int phase) {
  uint64_t v[MAX_FIELDS], now = 0, oldest = 0;
  int rc = read_varints(imp, data, len, "ftrace_stats.cpu_stats", v);
  if (rc)
    return rc;
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type == GP_PB_I64 && f.id == CPU_NOW_TS)
      now = f.value;
    else if (f.wire_type == GP_PB_I64 && f.id == CPU_OLDEST_EVENT_TS)
      oldest = f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ftrace_stats.cpu_stats");
  int64_t cpu = (int32_t)(uint32_t)v[CPU_CPU];
  for (size_t i = 0; i < NELEM(cpu_counters) && !rc; i++) {
    int64_t x = (int64_t)v[cpu_counters[i].field], begin;
    rc = gp__tp_stat_idx_set(imp, cpu_counters[i].stat[phase], cpu, x);
    if (!rc && phase == 1 &&
        gp__tp_stat_idx_get(imp, cpu_counters[i].stat[0], cpu, &begin))
      rc = gp__tp_stat_idx_set(imp, cpu_counters[i].stat[2], cpu,
                               (int64_t)((uint64_t)x - (uint64_t)begin));
  }
  if (!rc)
    rc = gp__tp_stat_idx_set(imp,
                             phase ? GP_TP_STAT_ftrace_cpu_now_ts_end
                                   : GP_TP_STAT_ftrace_cpu_now_ts_begin,
                             cpu, seconds_ns(now));
  if (!rc)
    rc =
        gp__tp_stat_idx_set(imp,
                            phase ? GP_TP_STAT_ftrace_cpu_oldest_event_ts_end
                                  : GP_TP_STAT_ftrace_cpu_oldest_event_ts_begin,
                            cpu, seconds_ns(oldest));
  return rc;
}

/* FtraceKprobeStats (data, len; NULL when absent) of phase. */
static int kprobe_stats(gp__tp_importer *imp, const uint8_t *data, size_t len,
                        int phase) {
  static const int stat[2][3] = {{GP_TP_STAT_ftrace_kprobe_hits_begin,
                                  GP_TP_STAT_ftrace_kprobe_hits_end,
                                  GP_TP_STAT_ftrace_kprobe_hits_delta},
                                 {GP_TP_STAT_ftrace_kprobe_misses_begin,
                                  GP_TP_STAT_ftrace_kprobe_misses_end,
                                  GP_TP_STAT_ftrace_kprobe_misses_delta}};
  uint64_t v[MAX_FIELDS] = {0};
  int rc;
  if (data &&
      (rc = read_varints(imp, data, len, "ftrace_stats.kprobe_stats", v)) != 0)
    return rc;
  int64_t *st = imp->db->stats;
  for (int i = 0; i < 2; i++) {
    st[stat[i][phase]] = (int64_t)v[1 + i];
    /* a start of 0 reads as no start */
    if (phase == 1 && st[stat[i][0]] != 0)
      st[stat[i][2]] = (int64_t)(v[1 + i] - (uint64_t)st[stat[i][0]]);
  }
  return 0;
}

/* The setup errors of a start-of-trace FtraceStats: each failed or
 * unknown event, atrace's errors, the exclusive-feature error, counted
 * once per sequence. */
static void setup_errors(gp__tp_importer *imp, const uint8_t *data, size_t len,
                         uint32_t seq) {
  uint64_t *si = gp__tp_map_get(&imp->seq_by_id, seq);
  if (si && imp->seqs.v[*si].ftrace_setup_seen)
    return;
  gp__pb_reader r;
  gp__pb_field f;
  int64_t n = 0;
  bool atrace = false, exclusive = false;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while (gp__tp_pb_next(&r, &f) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    n += f.id == FT_FAILED_EVENTS || f.id == FT_UNKNOWN_EVENTS;
    if (f.id == FT_ATRACE_ERRORS)
      atrace = f.size > 0; /* the last one, as a decoder keeps it */
    if (f.id == FT_EXCLUSIVE_FEATURE_ERROR)
      exclusive = f.size > 0;
  }
  n += atrace + exclusive;
  gp__tp_stat(imp, GP_TP_STAT_ftrace_setup_errors, n);
  if (n && si)
    imp->seqs.v[*si].ftrace_setup_seen = true;
}

/* The kernel buffer parse errors traced_probes reported: zero-length
 * records counted, any other fails the import as in Perfetto (which
 * takes them for a bug in itself or the kernel). */
static int parse_errors(gp__tp_importer *imp, const uint8_t *data, size_t len,
                        uint64_t off) {
  gp__pb_reader r;
  gp__pb_field f;
  uint64_t first = 0;
  int n = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while (gp__tp_pb_next(&r, &f) > 0) {
    if (f.id != FT_PARSE_ERRORS || f.wire_type != GP_PB_VARINT)
      continue;
    if (f.value == PARSE_ZERO_DATA_LENGTH) {
      gp__tp_stat(imp, GP_TP_STAT_ftrace_abi_errors_skipped_zero_data_length,
                  1);
      continue;
    }
    if (!n++)
      first = f.value;
  }
  if (!n)
    return 0;
  return gp__tp_fail(imp, GP_ECORRUPT, off,
                     "trace was recorded with %d critical ftrace parse "
                     "error(s) (FtraceParseStatus %llu first): a bug in "
                     "Perfetto or the kernel",
                     n, (unsigned long long)first);
}

/* See import.h. */
int gp__tp_tokenize_ftrace_stats(gp__tp_importer *imp, const uint8_t *data,
                                 size_t len, uint32_t seq, uint64_t off) {
  uint64_t v[MAX_FIELDS];
  int rc = read_varints(imp, data, len, "ftrace_stats", v);
  if (rc)
    return rc;
  if (v[FT_PHASE] != PHASE_START && v[FT_PHASE] != PHASE_END)
    return gp__tp_fail(imp, GP_ECORRUPT, off,
                       "ftrace_stats of unknown phase %llu",
                       (unsigned long long)v[FT_PHASE]);
  int phase = v[FT_PHASE] == PHASE_END;
  gp__pb_reader r;
  gp__pb_field f;
  const uint8_t *kprobe = NULL;
  size_t kprobe_len = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    if (f.id == FT_CPU_STATS && (rc = cpu_stats(imp, f.data, f.size, phase)))
      return rc;
    if (f.id == FT_KPROBE_STATS) {
      kprobe = f.data;
      kprobe_len = f.size;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ftrace_stats");
  if ((rc = kprobe_stats(imp, kprobe, kprobe_len, phase)) != 0)
    return rc;
  if (!phase)
    setup_errors(imp, data, len, seq);
  return parse_errors(imp, data, len, off);
}
