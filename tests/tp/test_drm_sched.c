/*
 * test_drm_sched.c - the kernel's GPU ftrace events beside dma_fence:
 * power/gpu_frequency and kgsl_gpu_frequency (gpufreq counters), the DRM
 * vblank events, and the GPU scheduler's jobs (drm_sched_job, drm_run_job
 * and drm_sched_process_job before Linux 6.17; drm_sched_job_queue,
 * drm_sched_job_run and drm_sched_job_done since), in a trace written
 * here as traced_probes writes FtraceEventBundle packets.
 *
 * The expected rows are Perfetto v58.2's own: trace_processor_shell
 * (built from the fetched source, outside the repository) ran the same
 * queries on the same trace, written by GPUPERF_DRM_OUT=FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perfetto/proto.h"
#include "tp/tputil.h"

/* An FtraceEvent field of a bundle on CPU 0: (id, varint fields, one
 * string field). */
typedef struct fev {
  uint64_t ts;
  uint32_t pid, id;
  uint32_t nv;
  uint32_t vid[4];
  uint64_t v[4];
  uint32_t sid;
  const char *s;
} fev;

static void bundle(tg *t, const fev *e, size_t n) {
  tg_packet(t, 0, 1, 0);
  gp__pb_begin(&t->w, GP_PB_PACKET_FTRACE_EVENTS);
  gp__pb_uint(&t->w, GP_PB_FTRACE_BUNDLE_CPU, 0);
  for (size_t i = 0; i < n; i++) {
    gp__pb_begin(&t->w, GP_PB_FTRACE_BUNDLE_EVENT);
    gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_TIMESTAMP, e[i].ts);
    gp__pb_uint(&t->w, GP_PB_FTRACE_EVENT_PID, e[i].pid);
    gp__pb_begin(&t->w, e[i].id);
    for (uint32_t k = 0; k < e[i].nv; k++)
      gp__pb_uint(&t->w, e[i].vid[k], e[i].v[k]);
    if (e[i].s)
      gp__pb_string(&t->w, e[i].sid, e[i].s);
    gp__pb_end(&t->w);
    gp__pb_end(&t->w);
  }
  gp__pb_end(&t->w);
  tg_end(t);
}

enum {
  GPU_FREQ = 332,
  KGSL_FREQ = 509,
  VBLANK = 409,
  VBLANK_DELIVERED = 410,
  SCHED_JOB = 411,
  RUN_JOB = 412,
  PROCESS_JOB = 413,
  JOB_DONE = 592,
  JOB_QUEUE = 593,
  JOB_RUN = 594,
};

TEST(tp_import_gpu_ftrace_events) {
  static const fev ev[] = {
      /* gpufreq: gpu_id 1, state 2 (kHz); kgsl: gpu_freq 1 (MHz / 1000 in
       * the kernel: x1000), gpu_id 2 */
      {10, 100, GPU_FREQ, 2, {1, 2}, {0, 500000}, 0, NULL},
      {20, 100, GPU_FREQ, 2, {1, 2}, {1, 300000}, 0, NULL},
      {30, 100, KGSL_FREQ, 2, {1, 2}, {600, 2}, 0, NULL},
      /* vblank: crtc 1, seq 3; delivered: crtc 1, seq 3 */
      {40, 0, VBLANK, 2, {1, 3}, {0, 100}, 0, NULL},
      {45, 200, VBLANK_DELIVERED, 2, {1, 3}, {0, 100}, 0, NULL},
      /* before 6.17: id 4, fence 2, name 6 */
      {50, 300, SCHED_JOB, 2, {4, 2}, {1, 1001}, 6, "gfx"},
      {60, 0, RUN_JOB, 2, {4, 2}, {1, 1001}, 6, "gfx"},
      {65, 300, SCHED_JOB, 2, {4, 2}, {2, 1002}, 6, "gfx"},
      {70, 0, RUN_JOB, 2, {4, 2}, {2, 1002}, 6, "gfx"},
      {80, 0, PROCESS_JOB, 1, {1}, {1001}, 0, NULL},
      {90, 0, PROCESS_JOB, 1, {1}, {1002}, 0, NULL},
      {95, 0, PROCESS_JOB, 1, {1}, {1003}, 0, NULL}, /* never run */
      /* since 6.17: name 1, fence_context 5, fence_seqno 6 */
      {100, 301, JOB_QUEUE, 2, {5, 6}, {7, 1}, 1, "comp"},
      {105, 301, JOB_QUEUE, 2, {5, 6}, {7, 2}, 1, "comp"},
      {110, 0, JOB_RUN, 2, {5, 6}, {7, 1}, 1, "comp"},
      {112, 0, JOB_RUN, 2, {5, 6}, {7, 2}, 1, "comp"},
      {120, 0, JOB_DONE, 2, {1, 2}, {7, 1}, 0, NULL},
      {130, 0, JOB_DONE, 2, {1, 2}, {7, 2}, 0, NULL},
  };
  tg t;
  tg_init(&t);
  bundle(&t, ev, sizeof(ev) / sizeof(ev[0]));
  const char *out = getenv("GPUPERF_DRM_OUT");
  if (out)
    tg_write(&t, out);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  tp_expect(tp,
            "SELECT id, type, name, extract_arg(dimension_arg_set_id, 'gpu') "
            "AS gpu FROM track ORDER BY id",
            "\"id\",\"type\",\"name\",\"gpu\"\n"
            "0,\"gpu_frequency\",\"gpufreq\",0\n"
            "1,\"gpu_frequency\",\"gpufreq\",1\n"
            "2,\"gpu_frequency\",\"gpufreq\",2\n"
            "3,\"drm_vblank\",\"vblank-0\",\"[NULL]\"\n"
            "4,\"thread_execution\",\"[NULL]\",\"[NULL]\"\n"
            "5,\"drm_sched_ring\",\"sched-gfx\",\"[NULL]\"\n"
            "6,\"thread_execution\",\"[NULL]\",\"[NULL]\"\n"
            "7,\"drm_sched_ring\",\"sched-comp\",\"[NULL]\"\n");
  tp_expect(tp, "SELECT id, ts, track_id, value FROM counter ORDER BY id",
            "\"id\",\"ts\",\"track_id\",\"value\"\n"
            "0,10,0,500000.000000\n"
            "1,20,1,300000.000000\n"
            "2,30,2,600000.000000\n");
  tp_expect(tp,
            "SELECT s.id, s.ts, s.dur, s.track_id, s.name, s.depth FROM slice "
            "s ORDER BY s.id",
            "\"id\",\"ts\",\"dur\",\"track_id\",\"name\",\"depth\"\n"
            "0,40,0,3,\"signal\",0\n"
            "1,45,0,3,\"deliver\",0\n"
            "2,50,0,4,\"drm_sched_job_queue\",0\n"
            "3,60,20,5,\"job\",0\n"
            "4,65,0,4,\"drm_sched_job_queue\",0\n"
            "5,80,10,5,\"job\",0\n"
            "6,100,0,6,\"drm_sched_job_queue\",0\n"
            "7,105,0,6,\"drm_sched_job_queue\",0\n"
            "8,110,10,7,\"job\",0\n"
            "9,120,10,7,\"job\",0\n");
  tp_expect(tp,
            "SELECT s.id, a.key, a.value_type, a.display_value FROM slice s "
            "JOIN args a USING (arg_set_id) ORDER BY 1, 2",
            "\"id\",\"key\",\"value_type\",\"display_value\"\n"
            "0,\"vblank seqno\",\"uint\",\"100\"\n"
            "1,\"vblank seqno\",\"uint\",\"100\"\n"
            "2,\"gpu sched job\",\"uint\",\"1\"\n"
            "2,\"gpu sched ring\",\"string\",\"gfx\"\n"
            "3,\"gpu sched job\",\"uint\",\"1\"\n"
            "4,\"gpu sched job\",\"uint\",\"2\"\n"
            "4,\"gpu sched ring\",\"string\",\"gfx\"\n"
            "5,\"gpu sched job\",\"uint\",\"2\"\n"
            "6,\"fence context\",\"uint\",\"7\"\n"
            "6,\"fence seqno\",\"uint\",\"1\"\n"
            "6,\"gpu sched ring\",\"string\",\"comp\"\n"
            "7,\"fence context\",\"uint\",\"7\"\n"
            "7,\"fence seqno\",\"uint\",\"2\"\n"
            "7,\"gpu sched ring\",\"string\",\"comp\"\n"
            "8,\"fence context\",\"uint\",\"7\"\n"
            "8,\"fence seqno\",\"uint\",\"1\"\n"
            "9,\"fence context\",\"uint\",\"7\"\n"
            "9,\"fence seqno\",\"uint\",\"2\"\n");
  tp_expect(tp, "SELECT slice_out, slice_in FROM flow ORDER BY 1, 2",
            "\"slice_out\",\"slice_in\"\n"
            "2,3\n"
            "4,5\n"
            "6,8\n"
            "7,9\n");
  tp_expect(
      tp,
      "SELECT t.id, a.key, a.value_type, a.display_value FROM track t "
      "JOIN args a ON a.arg_set_id = t.dimension_arg_set_id ORDER BY 1, 2",
      "\"id\",\"key\",\"value_type\",\"display_value\"\n"
      "0,\"gpu\",\"int\",\"0\"\n"
      "0,\"ugpu\",\"int\",\"0\"\n"
      "1,\"gpu\",\"int\",\"1\"\n"
      "1,\"ugpu\",\"int\",\"1\"\n"
      "2,\"gpu\",\"int\",\"2\"\n"
      "2,\"ugpu\",\"int\",\"2\"\n"
      "3,\"drm_crtc\",\"int\",\"0\"\n"
      "4,\"utid\",\"int\",\"3\"\n"
      "5,\"name\",\"string\",\"gfx\"\n"
      "6,\"utid\",\"int\",\"4\"\n"
      "7,\"name\",\"string\",\"comp\"\n");
  tp_expect(tp, "SELECT utid, tid, upid FROM thread ORDER BY utid",
            "\"utid\",\"tid\",\"upid\"\n"
            "0,0,0\n"
            "1,100,\"[NULL]\"\n"
            "2,200,\"[NULL]\"\n"
            "3,300,\"[NULL]\"\n"
            "4,301,\"[NULL]\"\n");
  gp_tp_close(tp);
}
