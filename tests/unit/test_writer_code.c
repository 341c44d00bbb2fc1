/*
 * test_writer_code.c - where MODULE, FUNCTION and DEVICE_ATTRIBUTE
 * records end up in a trace, read back with our trace processor: the
 * instants a recorded simulated run gets on its process track, named by
 * the kernels the test made, and the attributes a writer fed by hand
 * puts in the GpuInfo's extra_info (the gpu table's args).
 */
#include "core/core.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "perfetto/writer.h"
#include "testutil.h"
#include "writer_util.h"

static const char render_config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "gpuperf_options { code_objects: true }\n";

TEST(writer_module_function_instants_in_a_recorded_trace) {
  const char *path = gp_test_path(0, "code.pftrace");
  gp_session *s = wt_recording(render_config, path);
  gp_sim_kernel_desc kd = tu_kernel_desc("_Z5scalePfi", 8, 8);
  gp_sim_kernel *k1, *k2;
  ASSERT_OK(gp_sim_kernel_create(&kd, &k1));
  kd = tu_kernel_desc("_Z5shiftPfi", 8, 8);
  ASSERT_OK(gp_sim_kernel_create(&kd, &k2));
  ASSERT_OK(gp_sim_kernel_destroy(k1));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);
  ASSERT_OK(gp_sim_kernel_destroy(k2)); /* after the recording: not in it */

  /* On the process's track, in the order they happened. */
  char *rows =
      wt_tp_rows(path, "SELECT s.name, t.type, "
                       "(SELECT display_value FROM args a WHERE a.arg_set_id = "
                       "s.arg_set_id AND a.key = 'debug.name'), "
                       "(SELECT display_value FROM args a WHERE a.arg_set_id = "
                       "s.arg_set_id AND a.key = 'debug.module_id') "
                       "FROM slice s JOIN track t ON s.track_id = t.id "
                       "WHERE s.name GLOB 'GPU *' ORDER BY s.ts, s.id");
  ASSERT_STR_EQ(rows, "GPU module load|process_track_event|_Z5scalePfi|1\n"
                      "GPU function|process_track_event|_Z5scalePfi|1\n"
                      "GPU module load|process_track_event|_Z5shiftPfi|2\n"
                      "GPU function|process_track_event|_Z5shiftPfi|2\n"
                      "GPU module unload|process_track_event|_Z5scalePfi|1\n");
  free(rows);
  /* A function's own fields, as its debug annotations. */
  rows = wt_tp_rows(path, "SELECT a.key, a.display_value FROM slice s JOIN "
                          "args a USING (arg_set_id) WHERE s.name = 'GPU "
                          "function' AND a.key GLOB 'debug.*' ORDER BY s.ts, "
                          "a.key LIMIT 5");
  ASSERT_STR_EQ(rows, "debug.context_id|0\n"
                      "debug.function_id|1\n"
                      "debug.function_index|0\n"
                      "debug.module_id|1\n"
                      "debug.name|_Z5scalePfi\n");
  free(rows);
}

static size_t put_attr(uint8_t *buf, size_t off, uint32_t attr, uint32_t flags,
                       int64_t v) {
  gp_activity_device_attribute *a = (gp_activity_device_attribute *)(buf + off);
  memset(a, 0, sizeof(*a));
  a->hdr.kind = GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE;
  a->hdr.size = sizeof(*a);
  a->device_id = 0;
  a->attribute = attr;
  a->flags = flags;
  a->value_type = GP_VALUE_INT64;
  a->value.i64 = v;
  return off + sizeof(*a);
}

/* The value of the gpu's arg key in the trace held by m, or "" (a row for
 * each value it has). */
static char *gpu_arg(const wt_membuf *m, const char *key) {
  gp_tp *tp;
  gp_tp_error e;
  ASSERT_OK(gp_tp_open_buffer(m->p, m->n, "attrs", NULL, &tp, &e));
  char sql[256];
  snprintf(sql, sizeof(sql),
           "SELECT a.display_value FROM gpu g JOIN args a USING "
           "(arg_set_id) WHERE g.ugpu = 0 AND a.key = '%s'",
           key);
  gp_tp_rows *r;
  ASSERT_OK(gp_tp_query(tp, sql, &r, &e));
  static char out[256];
  out[0] = '\0';
  while (gp_tp_rows_next(r, &e) == 1)
    snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s;",
             gp_tp_rows_text(r, 0));
  gp_tp_rows_destroy(r);
  gp_tp_close(tp);
  return out;
}

TEST(writer_device_attributes_in_gpu_info) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 1;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  ASSERT_OK(gp_sim_init(&sc)); /* device 0: 108 units at 1410000 kHz */
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer_code(&m);
  _Alignas(8) uint8_t buf[1024];
  /* What the device info says already: nothing to write again. */
  size_t off = 0;
  wt_put_kernel(buf, &off, 1, 1000);
  off = put_attr(buf, off, GP_DEVICE_ATTR_COMPUTE_UNITS, 0, 108);
  gp__tw_consume(w, buf, off);
  /* Later: a clock the device info does not say, and CUDA's compute
   * capability (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
   * _MINOR = 76), given out of order. */
  off = 0;
  off = put_attr(buf, off, 76, GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE, 0);
  off = put_attr(buf, off, 75, GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE, 9);
  off = put_attr(buf, off, GP_DEVICE_ATTR_CORE_CLOCK_KHZ, 0, 1200000);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_destroy(w);

  wt_trace t;
  uint8_t *copy = malloc(m.n);
  ASSERT_NOT_NULL(copy);
  memcpy(copy, m.p, m.n);
  wt_parse(&t, copy, m.n);
  /* Once at the start, once more with the second buffer's news only. */
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_INFO), 2);
  wt_free(&t);
  ASSERT_STR_EQ(gpu_arg(&m, "compute_units"), "108;");
  ASSERT_STR_EQ(gpu_arg(&m, "cu_device_attribute_75"), "9;");
  ASSERT_STR_EQ(gpu_arg(&m, "cu_device_attribute_76"), "0;");
  /* The record's value follows the device info's, which the first
   * GpuInfo said (importers keep a gpu's args). */
  ASSERT_STR_EQ(gpu_arg(&m, "core_clock_khz"), "1410000;1200000;");
  ASSERT_STR_EQ(gpu_arg(&m, "memory_bytes"), "85899345920;");
  free(m.p);
}

/* What markers carried (MARKER_DATA) becomes args of their slices in a
 * recorded trace: a colour, a category and a payload of each kind, on
 * a push/pop range, an instant and a start/end range; a marker without
 * attributes has none. */
TEST(writer_marker_attributes_as_args) {
  const char *path = gp_test_path(0, "markers.pftrace");
  gp_session *s = wt_recording(
      "data_sources { config { name: \"gpu.renderstages\" } }\n", path);
  gp_marker_attrs a = {.flags = GP_MARKER_ATTR_COLOR | GP_MARKER_ATTR_CATEGORY,
                       .color = 0xff336699u,
                       .category = 4,
                       .payload_kind = GP_MARKER_PAYLOAD_UINT64,
                       .payload.u64 = 17};
  ASSERT_OK(gp_range_push_ex("app", "step", &a));
  gp_marker_attrs b = {.payload_kind = GP_MARKER_PAYLOAD_DOUBLE,
                       .payload.f64 = 0.5};
  ASSERT_OK(gp_marker_instant_ex("app", "loss", &b));
  ASSERT_OK(gp_marker_instant("app", "plain"));
  ASSERT_OK(gp_range_pop());
  gp_marker_attrs c = {.payload_kind = GP_MARKER_PAYLOAD_INT64,
                       .payload.i64 = -8};
  uint64_t rid;
  ASSERT_OK(gp_range_start_ex("io", "load", &c, &rid));
  ASSERT_OK(gp_range_end(rid));
  ASSERT_OK(gp_session_stop(s));
  gp_session_destroy(s);

  char *rows = wt_tp_rows(
      path, "SELECT s.name, s.category, s.dur > 0, a.key, a.display_value "
            "FROM slice s LEFT JOIN args a ON a.arg_set_id = s.arg_set_id "
            "AND a.key GLOB 'debug.*' WHERE s.name IN ('step', 'loss', "
            "'plain', 'load') ORDER BY s.ts, a.key");
  ASSERT_STR_EQ(rows, "step|app|1|debug.category|4\n"
                      "step|app|1|debug.color|#ff336699\n"
                      "step|app|1|debug.payload|17\n"
                      "loss|app|0|debug.payload|0.5\n"
                      "plain|app|0||\n"
                      "load|io|1|debug.payload|-8\n");
  free(rows);
}
