/*
 * test_trace_stats.c - the stats the recording programs wrote about
 * themselves (TraceStats from the tracing service, FtraceStats from
 * traced_probes) come out of the stats table as Perfetto v58.2's.
 *
 * (On the system traces recorded with Perfetto's own programs, every
 * stats row is compared in test_systrace.c.)
 *
 * tp_stats_trace_loss_match_perfetto: a trace built here whose service
 * and ftrace stats report every kind of loss (overwritten and discarded
 * chunks, failed patches and flushes, packets dropped on sequences for
 * each cause, sequences starved of incremental state, kernel buffer
 * overruns, kprobe misses, setup errors). Perfetto's rows were obtained
 * by writing loss_trace() to a file and running
 *
 *   trace_processor_shell -q q.sql TRACE
 *
 * with q.sql holding STATS_SQL; they are pasted below as it printed them.
 *
 * tp_stats_ftrace_parse_errors_fail: a kernel buffer parse error other
 * than a zero-length record, or an FtraceStats of no known phase, fails
 * the import, as it fails Perfetto's ("Trace parse failure" from
 * trace_processor_shell on the same packets; a zero-length record alone
 * loads, counted in ftrace_abi_errors_skipped_zero_data_length).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "harness.h"
#include "tp/tputil.h"

#define GP_ONLY                                                                \
  "('packet_type_not_imported', 'trace_truncated_bytes', "                     \
  "'sequence_previous_packet_dropped', 'clock_snapshot_invalid')"

#define STATS_SQL                                                              \
  "SELECT name, idx, severity, source, value FROM stats WHERE value != 0 "     \
  "AND name NOT LIKE '%_duration_ns' AND name != 'clock_sync_cache_miss' "     \
  "AND name NOT IN " GP_ONLY " ORDER BY name, idx"

#define SEQ_NEEDS 2u

/* A packet on seq whose previous_packet_dropped is reasons. */
static void dropped(tg *t, uint32_t seq, uint32_t reasons) {
  tg_packet(t, 0, seq, 0);
  gp__pb_uint(&t->w, 42, reasons);
  tg_end(t);
}

/* One FtraceCpuStats, every counter k times its base. */
static void cpu_stats(tg *t, uint32_t cpu, uint64_t k, double now) {
  gp__pb_begin(&t->w, 2);
  gp__pb_uint(&t->w, 1, cpu);
  gp__pb_uint(&t->w, 2, 10 * k);   /* entries */
  gp__pb_uint(&t->w, 3, 3 * k);    /* overrun */
  gp__pb_uint(&t->w, 4, 2 * k);    /* commit_overrun */
  gp__pb_uint(&t->w, 5, 4096 * k); /* bytes_read */
  gp__pb_double(&t->w, 6, now - 1.5);
  gp__pb_double(&t->w, 7, now);
  gp__pb_uint(&t->w, 8, k);       /* dropped_events */
  gp__pb_uint(&t->w, 9, 100 * k); /* read_events */
  gp__pb_end(&t->w);
}

/* A BufferStats whose fields are field number times k. */
static void buffer_stats(tg *t, uint64_t k) {
  static const uint32_t fields[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                    11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  gp__pb_begin(&t->w, 1);
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
    gp__pb_uint(&t->w, fields[i], fields[i] * k);
  gp__pb_end(&t->w);
}

static void writer(tg *t, uint32_t seq, uint32_t buffer) {
  gp__pb_begin(&t->w, 18);
  gp__pb_uint(&t->w, 1, seq);
  gp__pb_uint(&t->w, 4, buffer);
  gp__pb_end(&t->w);
}

/* The trace of tp_stats_trace_loss_match_perfetto. */
static void loss_trace(tg *t) {
  tg_init(t);
  /* sequence 5 loses packets for several causes (its first packet's
   * flag does not count); 7 never gets the incremental state its
   * packets need */
  dropped(t, 5, 1);
  dropped(t, 5, 1 | 2 | 64);
  dropped(t, 5, 1 | 256);
  dropped(t, 5, 1 | 4 | 8 | 16 | 32 | 128);
  for (int i = 0; i < 2; i++) {
    tg_packet(t, 0, 7, SEQ_NEEDS);
    gp__pb_begin(&t->w, 11);
    gp__pb_end(&t->w);
    tg_end(t);
  }
  /* a setup error on sequence 4, before sequence 3 starts */
  tg_packet(t, 1000, 4, 0);
  gp__pb_begin(&t->w, 34);
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_string(&t->w, 7, "sched/missing");
  gp__pb_end(&t->w);
  tg_end(t);
  tg_packet(t, 1000, 3, 0);
  gp__pb_begin(&t->w, 34);
  gp__pb_uint(&t->w, 1, 1);
  cpu_stats(t, 0, 1, 10.25);
  cpu_stats(t, 1, 1, 10.5);
  gp__pb_string(&t->w, 7, "a/b");
  gp__pb_string(&t->w, 6, "c/d");
  gp__pb_string(&t->w, 6, "e/f");
  gp__pb_string(&t->w, 5, "atrace: no such category");
  gp__pb_uint(&t->w, 9, 12); /* a zero-length record: counted */
  gp__pb_begin(&t->w, 10);
  gp__pb_int(&t->w, 1, 5);
  gp__pb_int(&t->w, 2, 1);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
  /* the service's markers and identity */
  tg_packet(t, 0, 0, 0);
  gp__pb_begin(&t->w, 36);
  gp__pb_end(&t->w);
  tg_end(t);
  tg_packet(t, 0, 0, 0);
  gp__pb_begin(&t->w, 89);
  gp__pb_int(&t->w, 1, 0x0123456789abcdefll);
  gp__pb_int(&t->w, 2, 0x1122334455667788ll);
  gp__pb_end(&t->w);
  tg_end(t);
  tg_packet(t, 0, 0, 0);
  gp__pb_begin(&t->w, 124);
  gp__pb_end(&t->w);
  tg_end(t);
  /* the end: CPU 1 has no end, CPU 2 no start; errors at the end are
   * not setup errors */
  tg_packet(t, 5000, 3, 0);
  gp__pb_begin(&t->w, 34);
  gp__pb_uint(&t->w, 1, 2);
  cpu_stats(t, 0, 7, 20.125);
  cpu_stats(t, 2, 5, 20.5);
  gp__pb_string(&t->w, 7, "late/error");
  gp__pb_uint(&t->w, 9, 12);
  gp__pb_begin(&t->w, 10);
  gp__pb_int(&t->w, 1, 9);
  gp__pb_int(&t->w, 2, 4);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
  tg_packet(t, 6000, 0, 0);
  gp__pb_begin(&t->w, 35);
  buffer_stats(t, 1);
  buffer_stats(t, 0);
  gp__pb_uint(&t->w, 2, 2);  /* producers_connected */
  gp__pb_uint(&t->w, 3, 3);  /* producers_seen */
  gp__pb_uint(&t->w, 4, 4);  /* data_sources_registered */
  gp__pb_uint(&t->w, 5, 5);  /* data_sources_seen */
  gp__pb_uint(&t->w, 6, 1);  /* tracing_sessions */
  gp__pb_uint(&t->w, 7, 2);  /* total_buffers */
  gp__pb_uint(&t->w, 8, 6);  /* chunks_discarded */
  gp__pb_uint(&t->w, 9, 7);  /* patches_discarded */
  gp__pb_uint(&t->w, 10, 8); /* invalid_packets: not imported */
  gp__pb_begin(&t->w, 11);
  for (uint32_t f = 1; f <= 5; f++)
    gp__pb_uint(&t->w, f, 10 + f);
  gp__pb_uint(&t->w, 20, 100);
  gp__pb_uint(&t->w, 20, 0);
  gp__pb_uint(&t->w, 20, 300);
  gp__pb_end(&t->w);
  gp__pb_uint(&t->w, 12, 3); /* flushes_requested */
  gp__pb_uint(&t->w, 13, 2); /* flushes_succeeded */
  gp__pb_uint(&t->w, 14, 1); /* flushes_failed */
  gp__pb_uint(&t->w, 15, 2); /* final flush failed */
  writer(t, 5, 0);
  writer(t, 3, 0);
  writer(t, 7, 1);
  writer(t, 9, 1); /* a sequence never seen */
  writer(t, 11, 4);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* Perfetto v58.2's STATS_SQL on loss_trace(). */
static const char loss_perfetto[] =
    "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n"
    "\"filter_errors\",\"[NULL]\",\"error\",\"trace\",14\n"
    "\"filter_input_bytes\",\"[NULL]\",\"info\",\"trace\",12\n"
    "\"filter_input_packets\",\"[NULL]\",\"info\",\"trace\",11\n"
    "\"filter_output_bytes\",\"[NULL]\",\"info\",\"trace\",13\n"
    "\"filter_time_taken_ns\",\"[NULL]\",\"info\",\"trace\",15\n"
    "\"ftrace_abi_errors_skipped_zero_data_length\",\"[NULL]\",\"info\","
    "\"analysis\",2\n"
    "\"ftrace_cpu_bytes_begin\",0,\"info\",\"trace\",4096\n"
    "\"ftrace_cpu_bytes_begin\",1,\"info\",\"trace\",4096\n"
    "\"ftrace_cpu_bytes_delta\",0,\"info\",\"trace\",24576\n"
    "\"ftrace_cpu_bytes_end\",0,\"info\",\"trace\",28672\n"
    "\"ftrace_cpu_bytes_end\",2,\"info\",\"trace\",20480\n"
    "\"ftrace_cpu_commit_overrun_begin\",0,\"info\",\"trace\",2\n"
    "\"ftrace_cpu_commit_overrun_begin\",1,\"info\",\"trace\",2\n"
    "\"ftrace_cpu_commit_overrun_delta\",0,\"error\",\"trace\",12\n"
    "\"ftrace_cpu_commit_overrun_end\",0,\"info\",\"trace\",14\n"
    "\"ftrace_cpu_commit_overrun_end\",2,\"info\",\"trace\",10\n"
    "\"ftrace_cpu_dropped_events_begin\",0,\"info\",\"trace\",1\n"
    "\"ftrace_cpu_dropped_events_begin\",1,\"info\",\"trace\",1\n"
    "\"ftrace_cpu_dropped_events_delta\",0,\"error\",\"trace\",6\n"
    "\"ftrace_cpu_dropped_events_end\",0,\"info\",\"trace\",7\n"
    "\"ftrace_cpu_dropped_events_end\",2,\"info\",\"trace\",5\n"
    "\"ftrace_cpu_entries_begin\",0,\"info\",\"trace\",10\n"
    "\"ftrace_cpu_entries_begin\",1,\"info\",\"trace\",10\n"
    "\"ftrace_cpu_entries_delta\",0,\"info\",\"trace\",60\n"
    "\"ftrace_cpu_entries_end\",0,\"info\",\"trace\",70\n"
    "\"ftrace_cpu_entries_end\",2,\"info\",\"trace\",50\n"
    "\"ftrace_cpu_now_ts_begin\",0,\"info\",\"trace\",10250000000\n"
    "\"ftrace_cpu_now_ts_begin\",1,\"info\",\"trace\",10500000000\n"
    "\"ftrace_cpu_now_ts_end\",0,\"info\",\"trace\",20125000000\n"
    "\"ftrace_cpu_now_ts_end\",2,\"info\",\"trace\",20500000000\n"
    "\"ftrace_cpu_oldest_event_ts_begin\",0,\"info\",\"trace\",8750000000\n"
    "\"ftrace_cpu_oldest_event_ts_begin\",1,\"info\",\"trace\",9000000000\n"
    "\"ftrace_cpu_oldest_event_ts_end\",0,\"info\",\"trace\",18625000000\n"
    "\"ftrace_cpu_oldest_event_ts_end\",2,\"info\",\"trace\",19000000000\n"
    "\"ftrace_cpu_overrun_begin\",0,\"info\",\"trace\",3\n"
    "\"ftrace_cpu_overrun_begin\",1,\"info\",\"trace\",3\n"
    "\"ftrace_cpu_overrun_delta\",0,\"info\",\"trace\",18\n"
    "\"ftrace_cpu_overrun_end\",0,\"info\",\"trace\",21\n"
    "\"ftrace_cpu_overrun_end\",2,\"info\",\"trace\",15\n"
    "\"ftrace_cpu_read_events_begin\",0,\"info\",\"trace\",100\n"
    "\"ftrace_cpu_read_events_begin\",1,\"info\",\"trace\",100\n"
    "\"ftrace_cpu_read_events_delta\",0,\"info\",\"trace\",600\n"
    "\"ftrace_cpu_read_events_end\",0,\"info\",\"trace\",700\n"
    "\"ftrace_cpu_read_events_end\",2,\"info\",\"trace\",500\n"
    "\"ftrace_kprobe_hits_begin\",\"[NULL]\",\"info\",\"trace\",5\n"
    "\"ftrace_kprobe_hits_delta\",\"[NULL]\",\"info\",\"trace\",4\n"
    "\"ftrace_kprobe_hits_end\",\"[NULL]\",\"info\",\"trace\",9\n"
    "\"ftrace_kprobe_misses_begin\",\"[NULL]\",\"info\",\"trace\",1\n"
    "\"ftrace_kprobe_misses_delta\",\"[NULL]\",\"data_loss\",\"trace\",3\n"
    "\"ftrace_kprobe_misses_end\",\"[NULL]\",\"info\",\"trace\",4\n"
    "\"ftrace_setup_errors\",\"[NULL]\",\"notice\",\"trace\",5\n"
    "\"packet_skipped_seq_needs_incremental_state_invalid\",\"[NULL]\","
    "\"notice\",\"analysis\",2\n"
    "\"traced_buf_abi_violations\",0,\"data_loss\",\"trace\",9\n"
    "\"traced_buf_buffer_size\",0,\"info\",\"trace\",12\n"
    "\"traced_buf_bytes_filtered_out\",0,\"info\",\"trace\",100\n"
    "\"traced_buf_bytes_filtered_out\",2,\"info\",\"trace\",300\n"
    "\"traced_buf_bytes_overwritten\",0,\"info\",\"trace\",13\n"
    "\"traced_buf_bytes_read\",0,\"info\",\"trace\",14\n"
    "\"traced_buf_bytes_written\",0,\"info\",\"trace\",1\n"
    "\"traced_buf_chunks_committed_out_of_order\",0,\"info\",\"trace\",11\n"
    "\"traced_buf_chunks_discarded\",0,\"info\",\"trace\",18\n"
    "\"traced_buf_chunks_overwritten\",0,\"info\",\"trace\",3\n"
    "\"traced_buf_chunks_read\",0,\"info\",\"trace\",17\n"
    "\"traced_buf_chunks_relocated\",0,\"info\",\"trace\",20\n"
    "\"traced_buf_chunks_rewritten\",0,\"info\",\"trace\",10\n"
    "\"traced_buf_chunks_written\",0,\"info\",\"trace\",2\n"
    "\"traced_buf_data_loss_chunk_corrupted\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_orphan_continuation\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_overwrite\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_read_gap\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_reassembly_broken_chain\",0,\"data_loss\","
    "\"trace\",1\n"
    "\"traced_buf_data_loss_reassembly_gap\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_smb_full\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_data_loss_writer_abort\",0,\"data_loss\",\"trace\",1\n"
    "\"traced_buf_incremental_sequences_dropped\",1,\"data_loss\",\"analysis\","
    "1\n"
    "\"traced_buf_padding_bytes_cleared\",0,\"info\",\"trace\",16\n"
    "\"traced_buf_padding_bytes_written\",0,\"info\",\"trace\",15\n"
    "\"traced_buf_patches_failed\",0,\"data_loss\",\"trace\",6\n"
    "\"traced_buf_patches_succeeded\",0,\"info\",\"trace\",5\n"
    "\"traced_buf_readaheads_failed\",0,\"info\",\"trace\",8\n"
    "\"traced_buf_readaheads_succeeded\",0,\"info\",\"trace\",7\n"
    "\"traced_buf_sequence_packet_loss\",0,\"data_loss\",\"analysis\",3\n"
    "\"traced_buf_trace_writer_packet_loss\",0,\"data_loss\",\"trace\",19\n"
    "\"traced_buf_write_wrap_count\",0,\"info\",\"trace\",4\n"
    "\"traced_chunks_discarded\",\"[NULL]\",\"info\",\"trace\",6\n"
    "\"traced_data_sources_registered\",\"[NULL]\",\"info\",\"trace\",4\n"
    "\"traced_data_sources_seen\",\"[NULL]\",\"info\",\"trace\",5\n"
    "\"traced_final_flush_failed\",\"[NULL]\",\"data_loss\",\"trace\",1\n"
    "\"traced_flushes_failed\",\"[NULL]\",\"data_loss\",\"trace\",1\n"
    "\"traced_flushes_requested\",\"[NULL]\",\"info\",\"trace\",3\n"
    "\"traced_flushes_succeeded\",\"[NULL]\",\"info\",\"trace\",2\n"
    "\"traced_patches_discarded\",\"[NULL]\",\"info\",\"trace\",7\n"
    "\"traced_producers_connected\",\"[NULL]\",\"info\",\"trace\",2\n"
    "\"traced_producers_seen\",\"[NULL]\",\"info\",\"trace\",3\n"
    "\"traced_total_buffers\",\"[NULL]\",\"info\",\"trace\",2\n"
    "\"traced_tracing_sessions\",\"[NULL]\",\"info\",\"trace\",1\n";

TEST(tp_stats_trace_loss_match_perfetto) {
  tg t;
  loss_trace(&t);
  const char *dump = getenv("GPUPERF_DUMP_LOSS_TRACE");
  if (dump)
    tg_write(&t, dump);
  gp_tp *tp = tp_open_tg(&t);
  char *ours = tp_csv(tp, STATS_SQL);
  tp_assert_csv(ours, loss_perfetto, "loss_trace");
  free(ours);
  gp_tp_close(tp);
  tg_fini(&t);
}

/* An FtraceStats of phase with one parse error code. */
static int open_ftrace_stats(uint64_t phase, uint64_t code, char *msg,
                             size_t size) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1000, 3, 0);
  gp__pb_begin(&t.w, 34);
  gp__pb_uint(&t.w, 1, phase);
  gp__pb_uint(&t.w, 9, code);
  gp__pb_end(&t.w);
  tg_end(&t);
  size_t n;
  uint8_t *data = tg_bytes(&t, &n);
  gp_tp *tp = NULL;
  gp_tp_error err;
  int rc = gp_tp_open_buffer(data, n, "test trace", NULL, &tp, &err);
  if (rc == 0)
    gp_tp_close(tp);
  else
    snprintf(msg, size, "%s", err.message);
  free(data);
  tg_fini(&t);
  return rc;
}

TEST(tp_stats_ftrace_parse_errors_fail) {
  char msg[512] = "";
  ASSERT_OK(open_ftrace_stats(1, 12, msg, sizeof(msg)));
  ASSERT_ERR(open_ftrace_stats(2, 4, msg, sizeof(msg)), GP_ECORRUPT);
  ASSERT(strstr(msg, "ftrace parse error") != NULL);
  ASSERT_ERR(open_ftrace_stats(3, 12, msg, sizeof(msg)), GP_ECORRUPT);
  ASSERT(strstr(msg, "phase") != NULL);
}
