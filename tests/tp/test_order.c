/*
 * test_order.c - the order in which the importer parses what ties in
 * time, which decides the ids of tracks and slices: Perfetto's sorter has
 * a queue per stream (a machine's packets, its track events, each ftrace
 * CPU's events), and at equal timestamps the queue being taken goes on
 * before the others, which follow in the order they were made
 * (src/tp/sort.c, queues.c).
 *
 * The expected rows are Perfetto v58.2's own: trace_processor_shell
 * (built from the fetched source, outside the repository) ran the same
 * query on the same trace, written by GPUPERF_ORDER_OUT=FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perfetto/proto.h"
#include "tp/tputil.h"

static void descriptor(tg *t, uint64_t uuid, const char *name) {
  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(&t->w, GP_PB_TD_UUID, uuid);
  gp__pb_string(&t->w, GP_PB_TD_NAME, name);
  gp__pb_end(&t->w);
  tg_end(t);
}

static void instant(tg *t, uint64_t ts, uint64_t uuid, const char *name) {
  tg_packet(t, ts, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(&t->w, GP_PB_TE_TYPE, GP_PB_TE_TYPE_INSTANT);
  gp__pb_uint(&t->w, GP_PB_TE_TRACK_UUID, uuid);
  gp__pb_string(&t->w, GP_PB_TE_NAME, name);
  gp__pb_end(&t->w);
  tg_end(t);
}

static void freq(tg *t, uint64_t ts, uint32_t gpu) {
  tg_packet(t, ts, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_GPU_FREQUENCY);
  gp__pb_uint(&t->w, GP_PB_GFREQ_GPU_ID, gpu);
  gp__pb_uint(&t->w, GP_PB_GFREQ_FREQUENCY_KHZ, 1000);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* An ftrace bundle (cpu < 0: none) with one event at ts: a dma_fence_init
 * of timeline name, or (name NULL) an event of a kind not imported. */
static void ftrace(tg *t, int64_t cpu, uint64_t ts, const char *name) {
  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_FTRACE_EVENTS);
  if (cpu >= 0)
    gp__pb_uint(&t->w, GP_PB_FTRACE_BUNDLE_CPU, (uint64_t)cpu);
  gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_TIMESTAMP, ts);
  gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_PID, 5);
  if (name) {
    gp__pb_begin(&t->w, GP_PB_FTRACE_DMA_FENCE_INIT);
    gp__pb_uint(&t->w, GP_PB_DMA_FENCE_CONTEXT, 1);
    gp__pb_string(&t->w, GP_PB_DMA_FENCE_DRIVER, "drv");
    gp__pb_uint(&t->w, GP_PB_DMA_FENCE_SEQNO, 1);
    gp__pb_string(&t->w, GP_PB_DMA_FENCE_TIMELINE, name);
    gp__pb_end(&t->w);
  } else {
    gp__pb_begin(&t->w, 9999); /* no FtraceEvent has this field */
    gp__pb_uint(&t->w, 1, 1);
    gp__pb_end(&t->w);
  }
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
}

static gp_tp *open_written(tg *t) {
  const char *out = getenv("GPUPERF_ORDER_OUT");
  if (out)
    tg_write(t, out);
  gp_tp *tp = tp_open_tg(t);
  tg_fini(t);
  return tp;
}

TEST(tp_order_queues_as_perfettos_sorter) {
  tg t;
  tg_init(&t);
  descriptor(&t, 1, "A");
  descriptor(&t, 2, "B");
  descriptor(&t, 3, "C");
  descriptor(&t, 4, "D");
  /* 100: nothing taken yet: packets, then track events, then ftrace. */
  instant(&t, 100, 1, "a1");
  freq(&t, 100, 0);
  ftrace(&t, 1, 100, "t1");
  ftrace(&t, -1, 100, "lost"); /* no CPU: Perfetto skips the bundle */
  /* 300: the track events' queue was being taken (200): it goes on. */
  instant(&t, 200, 2, "b1");
  freq(&t, 300, 1);
  instant(&t, 300, 3, "c1");
  /* 400: an ftrace event not imported (360) was taken last: packets go
   * first again. Without it, the track events' queue (350) would. */
  instant(&t, 350, 1, "a2");
  ftrace(&t, 0, 360, NULL);
  instant(&t, 400, 4, "d1");
  freq(&t, 400, 2);
  gp_tp *tp = open_written(&t);
  tp_expect(tp,
            "SELECT t.id, t.type, t.name, extract_arg(t.dimension_arg_set_id, "
            "'gpu') AS gpu FROM track t ORDER BY t.id",
            "\"id\",\"type\",\"name\",\"gpu\"\n"
            "0,\"gpu_frequency\",\"gpufreq\",0\n"
            "1,\"global_merged_track_event\",\"A\",\"[NULL]\"\n"
            "2,\"drm_fence\",\"fence-t1-1\",\"[NULL]\"\n"
            "3,\"global_merged_track_event\",\"B\",\"[NULL]\"\n"
            "4,\"global_merged_track_event\",\"C\",\"[NULL]\"\n"
            "5,\"gpu_frequency\",\"gpufreq\",1\n"
            "6,\"gpu_frequency\",\"gpufreq\",2\n"
            "7,\"global_merged_track_event\",\"D\",\"[NULL]\"\n");
  tp_expect(tp, "SELECT id, track_id, ts, name FROM slice ORDER BY id",
            "\"id\",\"track_id\",\"ts\",\"name\"\n"
            "0,1,100,\"a1\"\n1,2,100,\"fence\"\n2,3,200,\"b1\"\n"
            "3,4,300,\"c1\"\n4,1,350,\"a2\"\n5,7,400,\"d1\"\n");
  tp_expect(tp,
            "SELECT name, severity, value FROM stats WHERE value != 0 AND "
            "name NOT LIKE '%_duration_ns' AND name NOT IN "
            "('packet_type_not_imported', 'clock_sync_cache_miss') "
            "ORDER BY name",
            "\"name\",\"severity\",\"value\"\n"
            "\"ftrace_bundle_tokenizer_errors\",\"error\",1\n");
  gp_tp_close(tp);
}

/* Perfetto refuses a bundle of CPU 1024 or more (kMaxCpuCount): the
 * trace is taken for corrupt. */
TEST(tp_order_ftrace_cpu_past_the_maximum) {
  tg t;
  tg_init(&t);
  ftrace(&t, 1024, 100, "t1");
  size_t n;
  uint8_t *p = tg_bytes(&t, &n);
  tg_fini(&t);
  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_ERR(gp_tp_open_buffer(p, n, "cpu.pftrace", NULL, &tp, &err),
             GP_ECORRUPT);
  ASSERT(strstr(err.message, "CPU 1024") != NULL);
  free(p);
}

static void process_descriptor(tg *t, uint64_t uuid, uint32_t pid,
                               const char *name) {
  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(&t->w, GP_PB_TD_UUID, uuid);
  gp__pb_begin(&t->w, GP_PB_TD_PROCESS);
  gp__pb_uint(&t->w, GP_PB_PD_PID, pid);
  gp__pb_string(&t->w, GP_PB_PD_PROCESS_NAME, name);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* A child track described again: the name it had stays (it merges with
 * siblings by name); and a second process descriptor uuid for one pid is
 * a new process that reused the pid. */
TEST(tp_order_descriptors_described_twice) {
  tg t;
  tg_init(&t);
  process_descriptor(&t, 10, 42, "first");
  tg_packet(&t, 0, 1, 0);
  gp__pb_begin(&t.w, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(&t.w, GP_PB_TD_UUID, 20);
  gp__pb_uint(&t.w, GP_PB_TD_PARENT_UUID, 10);
  gp__pb_string(&t.w, GP_PB_TD_NAME, "Stream #1");
  gp__pb_end(&t.w);
  tg_end(&t);
  instant(&t, 100, 20, "s1");
  process_descriptor(&t, 11, 42, "second");
  tg_packet(&t, 0, 1, 0);
  gp__pb_begin(&t.w, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(&t.w, GP_PB_TD_UUID, 20);
  gp__pb_uint(&t.w, GP_PB_TD_PARENT_UUID, 10);
  gp__pb_string(&t.w, GP_PB_TD_NAME, "Stream #1 (renamed)");
  gp__pb_end(&t.w);
  tg_end(&t);
  instant(&t, 200, 10, "p1");
  instant(&t, 300, 11, "p2");
  gp_tp *tp = open_written(&t);
  tp_expect(tp,
            "SELECT t.id, t.type, t.name, p.pid, p.name AS pname FROM track "
            "t LEFT JOIN process p ON p.upid = extract_arg("
            "t.dimension_arg_set_id, 'upid') ORDER BY t.id",
            "\"id\",\"type\",\"name\",\"pid\",\"pname\"\n"
            "0,\"process_track_event\",\"[NULL]\",42,\"first\"\n"
            "1,\"process_merged_track_event\",\"Stream #1\",42,"
            "\"first\"\n"
            "2,\"process_track_event\",\"[NULL]\",42,\"second\"\n");
  tp_expect(tp, "SELECT upid, pid, name FROM process ORDER BY upid",
            "\"upid\",\"pid\",\"name\"\n0,0,\"[NULL]\"\n1,42,\"first\"\n"
            "2,42,\"second\"\n");
  gp_tp_close(tp);
}

/* A TracingServiceEvent at ts: all_data_sources_flushed (field 3) or
 * read_tracing_buffers_completed (4). */
static void service_event(tg *t, uint64_t ts, uint32_t field) {
  tg_packet(t, ts, 1, 0);
  gp__pb_begin(&t->w, 69);
  gp__pb_uint(&t->w, field, 1);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* Two flushes before a read make a window: at the next such read the
 * sorter hands out what was pushed before the first, and an event pushed
 * later with an earlier time is dropped. The TraceConfig writes into a
 * file with a discarding buffer, without periodic flushes, by a service
 * of v53. */
TEST(tp_order_service_windows) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 0, 1, 0);
  gp__pb_begin(&t.w, 33); /* trace_config */
  gp__pb_begin(&t.w, 1);  /* buffers: RING_BUFFER */
  gp__pb_uint(&t.w, 4, 1);
  gp__pb_end(&t.w);
  gp__pb_begin(&t.w, 1); /* buffers: DISCARD */
  gp__pb_uint(&t.w, 4, 2);
  gp__pb_end(&t.w);
  gp__pb_uint(&t.w, 8, 1); /* write_into_file */
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 0, 1, 0);
  gp__pb_begin(&t.w, 45); /* system_info */
  gp__pb_string(&t.w, 4, "Perfetto v53.1 (test)");
  gp__pb_end(&t.w);
  tg_end(&t);
  service_event(&t, 1, 3);
  service_event(&t, 2, 3);
  freq(&t, 100, 0);
  service_event(&t, 3, 4); /* a window: hands out what came before: none */
  freq(&t, 200, 0);
  service_event(&t, 4, 3);
  service_event(&t, 5, 3);
  service_event(&t, 6, 4); /* hands out 100 */
  freq(&t, 50, 0);         /* before 100: dropped */
  freq(&t, 150, 1);
  gp_tp *tp = open_written(&t);
  tp_expect(tp,
            "SELECT c.ts, extract_arg(t.dimension_arg_set_id, 'gpu') AS gpu "
            "FROM counter c JOIN track t ON t.id = c.track_id ORDER BY c.id",
            "\"ts\",\"gpu\"\n100,0\n150,1\n200,0\n");
  tp_expect(tp,
            "SELECT name, idx, severity, value FROM stats WHERE value != 0 "
            "AND name NOT LIKE '%_duration_ns' AND name NOT IN "
            "('packet_type_not_imported', 'clock_sync_cache_miss') "
            "ORDER BY name, idx",
            "\"name\",\"idx\",\"severity\",\"value\"\n"
            "\"config_write_into_file_discard\",1,\"data_loss\",1\n"
            "\"config_write_into_file_no_flush\",\"[NULL]\",\"error\",1\n"
            "\"sorter_push_event_out_of_order\",\"[NULL]\",\"error\",1\n");
  gp_tp_close(tp);
}
