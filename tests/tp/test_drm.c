/*
 * test_drm.c - the kernel's dma_fence ftrace events in a small trace,
 * against the rows Perfetto v58.2's DrmTracker makes of them (derived
 * from drm_tracker.cc; no trace_processor_shell runs here): init-only
 * timelines, an older seqno's signal ignored, the switch to emit on a
 * timeline's first dma_fence_emit, "unbound" timelines ignored, a fence
 * never signaled left open, and waits on threads of no known process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perfetto/proto.h"
#include "tp/tputil.h"

/* One FtraceEventBundle packet with one dma_fence event (field 414..418). */
static void fence(tg *t, uint64_t ts, uint32_t pid, uint32_t field,
                  const char *timeline, uint32_t context, uint32_t seqno) {
  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_FTRACE_EVENTS);
  gp__pb_uint(&t->w, GP_PB_FTRACE_BUNDLE_CPU, 2);
  gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_TIMESTAMP, ts);
  gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_PID, pid);
  gp__pb_begin(&t->w, field);
  gp__pb_uint(&t->w, GP_PB_DMA_FENCE_CONTEXT, context);
  gp__pb_string(&t->w, GP_PB_DMA_FENCE_DRIVER, "drv");
  gp__pb_uint(&t->w, GP_PB_DMA_FENCE_SEQNO, seqno);
  gp__pb_string(&t->w, GP_PB_DMA_FENCE_TIMELINE, timeline);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
}

TEST(tp_import_dma_fence_rules) {
  enum {
    INIT = GP_PB_FTRACE_DMA_FENCE_INIT,
    EMIT = GP_PB_FTRACE_DMA_FENCE_EMIT,
    SIG = GP_PB_FTRACE_DMA_FENCE_SIGNALED,
    WAIT = GP_PB_FTRACE_DMA_FENCE_WAIT_START,
    WEND = GP_PB_FTRACE_DMA_FENCE_WAIT_END
  };
  tg t;
  tg_init(&t);
  fence(&t, 10, 5, INIT, "tl1", 1, 1);     /* fence 1 from 10 */
  fence(&t, 15, 5, INIT, "unbound", 2, 1); /* no track */
  fence(&t, 20, 5, INIT, "tl1", 1, 2);     /* pending behind 1 */
  fence(&t, 30, 0, SIG, "tl1", 1, 0);      /* older than 1: ignored */
  fence(&t, 40, 0, SIG, "tl1", 1, 2);      /* pops 1; fence 2 from 40 */
  fence(&t, 50, 5, EMIT, "tl1", 1, 5);     /* first emit: 2 ends, 5 */
  fence(&t, 60, 5, INIT, "tl1", 1, 6);     /* init ignored from now on */
  fence(&t, 70, 0, SIG, "tl1", 1, 5);
  fence(&t, 80, 5, EMIT, "tl3", 3, 1); /* never signaled: open */
  fence(&t, 90, 77, WAIT, "tl3", 3, 1);
  fence(&t, 95, 77, WEND, "tl3", 3, 1);
  fence(&t, 96, 78, WEND, "tl3", 3, 1); /* an end without a start */
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  tp_expect(
      tp,
      "SELECT t.name AS track, t.type, extract_arg(t.dimension_arg_set_id,"
      " 'name') AS tl, extract_arg(t.dimension_arg_set_id, 'context') "
      "AS ctx, s.name, s.ts, s.dur, s.depth, extract_arg(s.arg_set_id, "
      "'fence seqno') AS seqno FROM slice s JOIN track t ON t.id = "
      "s.track_id WHERE t.type = 'drm_fence' ORDER BY s.ts",
      "\"track\",\"type\",\"tl\",\"ctx\",\"name\",\"ts\",\"dur\","
      "\"depth\",\"seqno\"\n"
      "\"fence-tl1-1\",\"drm_fence\",\"tl1\",1,\"fence\",10,30,0,1\n"
      "\"fence-tl1-1\",\"drm_fence\",\"tl1\",1,\"fence\",40,10,0,2\n"
      "\"fence-tl1-1\",\"drm_fence\",\"tl1\",1,\"fence\",50,20,0,5\n"
      "\"fence-tl3-3\",\"drm_fence\",\"tl3\",3,\"fence\",80,-1,0,1\n");
  tp_expect(tp, "SELECT name, type FROM gpu_track ORDER BY id",
            "\"name\",\"type\"\n\"fence-tl1-1\",\"drm_fence\"\n"
            "\"fence-tl3-3\",\"drm_fence\"\n");
  tp_expect(tp,
            "SELECT s.name, s.ts, s.dur, th.tid, th.upid, extract_arg("
            "s.arg_set_id, 'fence context') AS ctx, extract_arg(s.arg_set_id,"
            " 'fence seqno') AS seqno FROM slice s JOIN thread_track t ON "
            "t.id = s.track_id JOIN thread th USING (utid)",
            "\"name\",\"ts\",\"dur\",\"tid\",\"upid\",\"ctx\",\"seqno\"\n"
            "\"dma_fence_wait\",90,5,77,\"[NULL]\",3,1\n");
  /* Every event's task is a thread (of no process); the lone end still
   * makes its thread's track, as InternThreadTrack does before
   * SliceTracker::End. */
  tp_expect(tp, "SELECT tid, upid, is_idle FROM thread ORDER BY tid",
            "\"tid\",\"upid\",\"is_idle\"\n0,0,1\n5,\"[NULL]\",0\n"
            "77,\"[NULL]\",0\n78,\"[NULL]\",0\n");
  tp_expect(tp,
            "SELECT th.tid, count(t.id) AS tracks FROM thread th LEFT JOIN "
            "thread_track t USING (utid) WHERE th.tid IN (77, 78) GROUP BY 1 "
            "ORDER BY 1",
            "\"tid\",\"tracks\"\n77,1\n78,1\n");
  gp_tp_close(tp);
}
