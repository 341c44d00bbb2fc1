/*
 * test_vulkan.c - the Vulkan layer on lavapipe: `gpuperf record` of the
 * headless sample (tests/vulkan/sample.c), read back through the trace
 * processor (vkcube and other programs as a user runs them:
 * test_vulkan_programs.c). Every stage the sample submits is
 * there with its name or debug label, inside its submission's host
 * window and inside its command buffer; the semaphore between the two
 * submissions is a flow; the validation layer's messages reach the GPU
 * log; a program that loads the layer without being recorded runs as
 * before.
 */
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "harness.h"
#include "opencl/oclutil.h"

#include "api/vkutil.h"
#if HAVE_TP
#include "api/derived_check.h"
#endif

TEST(vulkan_layer_exports_only_entry_points) {
  char lib[512];
  vk_built("libgpuperf-vulkan.so", lib, sizeof(lib));
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    gp_test_fail(__FILE__, __LINE__, "dlopen %s: %s", lib, dlerror());
  ASSERT_NOT_NULL(dlsym(h, "gpuperf_NegotiateLoaderLayerInterfaceVersion"));
  ASSERT_NOT_NULL(dlsym(h, "gpuperf_GetInstanceProcAddr"));
  ASSERT_NOT_NULL(dlsym(h, "gpuperf_GetDeviceProcAddr"));
  ASSERT(dlsym(h, "gp__vk_map_get") == NULL);
  ASSERT(dlsym(h, "vkQueueSubmit") == NULL); /* never interposes */
  dlclose(h);
  char json[512];
  vk_built("vulkan/gpuperf_layer.json", json, sizeof(json));
}

/* The callback API through the layer (tests/vulkan/cb_probe.c, a
 * program linking libgpuperf.so): every Vulkan API record has its entry
 * and exit callbacks with its correlation id, call and status; the waits
 * raise their synchronisation callbacks. */
TEST(vulkan_callbacks_match_records) {
  vk_env();
  char probe[512], dir[512];
  vk_built("tests/vulkan-cb-probe", probe, sizeof(probe));
  vk_built("vulkan/gpuperf_layer.json", dir, sizeof(dir));
  *strrchr(dir, '/') = '\0';
  char *argv[] = {probe, dir, NULL}, *out = NULL;
  char *quiet[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
  int rc = ocl_run(argv, quiet, 120, &out, NULL);
  if (rc == 77) {
    free(out);
    SKIP("no Vulkan device");
  }
  if (rc != 0 || !out || strncmp(out, "ok ", 3) != 0)
    gp_test_fail(__FILE__, __LINE__, "vulkan-cb-probe: status %d\n%s", rc,
                 out ? out : "");
  ASSERT_GE(atoi(out + 3), 6);
  free(out);
}

/* Runs the sample with the layer enabled by hand, unrecorded: same
 * results, same output. */
TEST(vulkan_layer_alone_changes_nothing) {
  vk_env();
  char sample[512], dir[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  vk_built("vulkan/gpuperf_layer.json", dir, sizeof(dir));
  *strrchr(dir, '/') = '\0';
  char *argv[] = {sample, NULL}, *plain = NULL, *layered = NULL;
  /* In sanitizer builds the sample is instrumented too, and lavapipe and
   * the loader leave allocations behind when they unload: not ours. */
  char *quiet[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
  int rc = ocl_run(argv, quiet, 120, &plain, NULL);
  if (rc == 3)
    SKIP("no Vulkan device");
  ASSERT_EQ(rc, 0);
  char add[600];
  snprintf(add, sizeof(add), "VK_ADD_LAYER_PATH=%s", dir);
  char *env[] = {add, "VK_INSTANCE_LAYERS=VK_LAYER_GPUPERF_trace",
                 "ASAN_OPTIONS=detect_leaks=0", NULL};
  ASSERT_EQ(ocl_run(argv, env, 120, &layered, NULL), 0);
  ASSERT_STR_EQ(layered, plain);
  ASSERT(strstr(plain, "sample: ok vertices=3 ia_vertices=3 ") != NULL);
  free(plain);
  free(layered);
}

/* RENDER_STAGE records take the common GPU-work header from the core's
 * helper: header fields, its own fields zeroed, wait ids after the struct
 * (where gp_activity_wait_ids() finds them), nothing written past. */
TEST(vulkan_render_stage_record_header) {
  _Alignas(8) uint8_t buf[256];
  static const uint64_t waits[2] = {41, 42};
  gp__gpu_work w = {.correlation_id = 7,
                    .queued = 100,
                    .start = 300,
                    .end = 400,
                    .device_id = 2,
                    .context_id = 3,
                    .stream_id = 4,
                    .queue_id = 5,
                    .num_wait_ids = 2,
                    .wait_ids = waits};
  uint32_t size = gp__gpu_work_size(GP_ACTIVITY_KIND_RENDER_STAGE, 2);
  ASSERT_EQ(size, sizeof(gp_activity_render_stage) + 16);
  ASSERT_EQ(size % 8, 0);
  memset(buf, 0xAB, sizeof(buf));
  gp_activity_render_stage *r = (gp_activity_render_stage *)buf;
  r->hdr.kind = GP_ACTIVITY_KIND_RENDER_STAGE;
  r->hdr.size = size;
  gp__gpu_work_fill(r, GP_ACTIVITY_KIND_RENDER_STAGE, &w);
  ASSERT_EQ(r->correlation_id, 7);
  ASSERT_EQ(r->queued, 100);
  ASSERT_EQ(r->submitted, 0);
  ASSERT_EQ(r->start, 300);
  ASSERT_EQ(r->end, 400);
  ASSERT_EQ(r->device_id, 2);
  ASSERT_EQ(r->stream_id, 4);
  ASSERT_EQ(r->queue_id, 5);
  ASSERT_EQ(r->num_wait_ids, 2);
  ASSERT_EQ(r->stage, 0);
  ASSERT_EQ(r->render_pass, 0);
  ASSERT_EQ(r->name_id, 0);
  ASSERT_EQ(r->submission_id, 0);
  uint32_t n = 0;
  const uint64_t *ids = gp_activity_wait_ids(&r->hdr, &n);
  ASSERT_EQ(n, 2);
  ASSERT_NOT_NULL(ids);
  ASSERT_EQ(ids[0], 41);
  ASSERT_EQ(ids[1], 42);
  ASSERT_EQ(buf[size], 0xAB);
}

/* vulkan.memory_tracker and its config are accepted, kept and written
 * back; the config anywhere else is refused with its line. */
TEST(vulkan_memory_config_parses) {
  static const char text[] =
      "data_sources { config { name: \"vulkan.memory_tracker\"\n"
      "  vulkan_memory_config { track_driver_memory_usage: true\n"
      "                         track_device_memory_usage: false } } }\n";
  gp_trace_config *c = NULL;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(text, strlen(text), &c, err, sizeof(err)));
  gp_data_source_info ds;
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_VULKAN_MEMORY);
  ASSERT_EQ(ds.track_driver_memory_usage, 1);
  ASSERT_EQ(ds.track_device_memory_usage, 0);
  char out[1024];
  size_t need = 0;
  ASSERT_OK(gp_trace_config_format(c, out, sizeof(out), &need));
  ASSERT(strstr(out, "vulkan_memory_config { track_driver_memory_usage: true "
                     "track_device_memory_usage: false }") != NULL);
  gp_trace_config *again = NULL;
  ASSERT_OK(gp_trace_config_parse(out, need, &again, err, sizeof(err)));
  ASSERT_OK(gp_trace_config_get_data_source(again, 0, &ds));
  ASSERT_EQ(ds.track_driver_memory_usage, 1);
  gp_trace_config_destroy(again);
  gp_trace_config_destroy(c);
  static const char wrong[] =
      "data_sources { config { name: \"gpu.log\"\n"
      "  vulkan_memory_config { track_driver_memory_usage: true } } }\n";
  ASSERT_ERR(gp_trace_config_parse(wrong, strlen(wrong), &c, err, sizeof(err)),
             GP_EPARSE);
  ASSERT(strstr(err, "line 2") != NULL);
  ASSERT(strstr(err, "vulkan.memory_tracker") != NULL);
}

#if HAVE_TP

static const char *const config_with_log =
    "buffers { size_kb: 4096 }\n"
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.log\" } }\n";

/* The sample's seven stages, as the sample submitted them. */
static void check_sample_stages(gp_tp *tp, const char *submit) {
  char sql[1024];
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0", 7);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE submission_id = 1 AND name IN "
       "('Compute work', 'Double values', 'Transfer')",
       4);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE submission_id = 2 AND name IN "
       "('Draw work', 'Offscreen pass', 'Transfer')",
       3);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Transfer'", 3);
  /* Every stage took time, on the one queue. */
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE dur > 0", 7);
  Q_EQ(tp, "SELECT count(DISTINCT hw_queue_id) FROM stage", 1);
  /* Handles: the render pass and its framebuffer; one command buffer per
   * submission; the transfers name their destination. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE name = 'Offscreen pass' AND "
       "render_pass != 0 AND render_target != 0",
       1);
  Q_EQ(tp,
       "SELECT count(DISTINCT command_buffer) FROM stage WHERE "
       "command_buffer != 0",
       2);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE name = 'Transfer' AND "
       "render_target != 0",
       3);
  /* Each part lies inside its command buffer's stage. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage r JOIN stage c ON "
       "c.command_buffer = r.command_buffer AND c.name IN ('Compute work', "
       "'Draw work') WHERE r.name NOT IN ('Compute work', 'Draw work') AND "
       "r.ts >= c.ts AND r.ts + r.dur <= c.ts + c.dur",
       5);
  /* Inside the host window: after its vkQueueSubmit began, before the
   * program's wait for the fence ended. */
  snprintf(sql, sizeof(sql),
           "WITH sub AS (SELECT ts, row_number() OVER (ORDER BY ts) AS n FROM "
           "host_call WHERE name = '%s'), "
           "w AS (SELECT max(ts + dur) AS e FROM slice WHERE name = "
           "'vkWaitForFences') "
           "SELECT count(*) FROM stage g JOIN sub ON sub.n = "
           "g.submission_id, w WHERE g.ts >= sub.ts AND g.ts + g.dur <= w.e",
           submit);
  Q_EQ(tp, sql, 7);
  /* Correlation: each submit flows to its stages; the semaphore flows
   * from the first submission's work into the second's. */
  snprintf(sql, sizeof(sql),
           "SELECT count(*) FROM flow f JOIN slice a ON a.id = f.slice_out "
           "JOIN stage g ON g.id = f.slice_in WHERE a.name = '%s'",
           submit);
  Q_EQ(tp, sql, 7);
  Q_EQ(tp,
       "SELECT count(*) > 0 FROM flow f JOIN stage a ON a.id = "
       "f.slice_out JOIN stage b ON b.id = f.slice_in WHERE "
       "a.submission_id = 1 AND b.name = 'Draw work'",
       1);
  /* The program's object names (VulkanApiEvent), on the stages. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE name = 'Offscreen pass' AND "
       "render_pass_name = 'Main pass' AND render_target_name = 'Offscreen "
       "target' AND command_buffer_name = 'Draw work'",
       1);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE command_buffer_name = "
       "'Compute work'",
       4);
  /* Each call as Perfetto's VulkanApiEvent.VkQueueSubmit too, on the
   * "Vulkan Events" track: its submission id, command buffer, thread and
   * time are those of the call and its stages. */
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_slice g JOIN track t ON g.track_id = t.id "
       "WHERE t.name = 'Vulkan Events' AND g.name = 'vkQueueSubmit'",
       2);
  snprintf(sql, sizeof(sql),
           "WITH v AS (SELECT g.* FROM gpu_slice g JOIN track t ON g.track_id "
           "= t.id WHERE t.name = 'Vulkan Events'), "
           "h AS (SELECT c.ts, c.dur, th.tid, p.pid FROM host_call c JOIN "
           "thread_track tt ON c.track_id = tt.id JOIN thread th USING (utid) "
           "JOIN process p USING (upid) WHERE c.name = '%s') "
           "SELECT count(*) FROM v JOIN h ON v.ts = h.ts AND v.dur = h.dur "
           "WHERE extract_arg(v.arg_set_id, 'tid') = h.tid AND "
           "extract_arg(v.arg_set_id, 'pid') = h.pid AND "
           "(SELECT count(*) FROM stage s WHERE s.submission_id = "
           "v.submission_id AND s.command_buffer = v.command_buffer) > 0 AND "
           "extract_arg(v.arg_set_id, 'command_buffers[0]') = v.command_buffer",
           submit);
  Q_EQ(tp, sql, 2);
  /* The device: lavapipe's, unless the tests run on another driver
   * (GPUPERF_TEST_VK_ICD, vk_env), where it is one GPU of some name. */
  const char *icd = getenv("GPUPERF_TEST_VK_ICD");
  if (icd && *icd)
    Q_EQ(tp, "SELECT count(*) FROM gpu WHERE name != ''", 1);
  else
    Q_EQ(tp, "SELECT count(*) FROM gpu WHERE name LIKE 'llvmpipe%'", 1);
}

TEST(vulkan_record_sample) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, NULL, &out);
  ASSERT(strstr(out, "sample: ok vertices=3 ia_vertices=3 ") != NULL);
  check_sample_stages(tp, "vkQueueSubmit");
  /* Host calls, as many as the sample made. */
  Q_EQ(tp, "SELECT count(*) FROM host_call WHERE name = 'vkQueueSubmit'", 2);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'vkCreateShaderModule'", 3);
  Q_EQ(tp,
       "SELECT count(*) FROM slice WHERE name IN "
       "('vkCreateComputePipelines', 'vkCreateGraphicsPipelines')",
       2);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'vkAllocateMemory'", 4);
  Q_EQ(tp, "SELECT count(*) FROM slice WHERE name = 'vkFreeMemory'", 4);
  /* The memory tracker is on by default: device memory, buffers, images
   * (not the driver's host allocations). */
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_DEVICE_MEMORY' AND operation = 'CREATE'",
       4);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_BUFFER' AND operation = 'BIND'",
       3);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'DRIVER'",
       0);
  vk_check_gpu_info(tp);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  free(out);
}

/* The same work submitted with vkQueueSubmit2 (synchronization2). */
TEST(vulkan_record_sample_submit2) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, "--submit2", NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, NULL, &out);
  ASSERT(strstr(out, "sample: ok vertices=3 ia_vertices=3 ") != NULL);
  check_sample_stages(tp, "vkQueueSubmit2");
  gp_tp_close(tp);
  free(out);
}

TEST(vulkan_record_sample_with_validation) {
  vk_env();
  if (access(VALIDATION_MANIFEST, R_OK) != 0)
    SKIP("the Khronos validation layer is not installed "
         "(Debian vulkan-validationlayers)");
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, "--validation", "--leak", NULL}, *out = NULL;
  /* gpu.log as configured, and in the default config. */
  for (int dflt = 0; dflt < 2; dflt++) {
    gp_tp *tp = vk_record(cmd, dflt ? NULL : config_with_log, &out);
    ASSERT(strstr(out, "sample: ok ") != NULL);
    check_sample_stages(tp, "vkQueueSubmit");
    /* The leaked buffer, reported by the validation layer below us. */
    Q_EQ(tp,
         "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id "
         "WHERE t.name = 'GPU Log' AND s.name = 'ERROR' AND "
         "extract_arg(s.arg_set_id, 'tag') = 'Vulkan validation' AND "
         "extract_arg(s.arg_set_id, 'message') LIKE "
         "'%VUID-vkDestroyDevice-device-00378%'",
         1);
    gp_tp_close(tp);
    free(out);
  }
  gp_tp *tp;

  /* Everything the layer adds (timestamps, statistics queries, the
   * feature, its allocator), in each way of submitting, and its giving way
   * to the sample's own statistics queries (i == 2), is valid: the
   * validation layer says nothing. */
  for (size_t i = 0; i < 3; i++) {
    char *cmd2[] = {sample, "--validation", i < 2 ? "--no-query" : NULL,
                    i == 1 ? "--submit2" : NULL, NULL};
    out = NULL;
    tp = vk_record(cmd2,
                   "buffers { size_kb: 4096 }\n"
                   "data_sources { config { name: \"gpu.renderstages\" } }\n"
                   "data_sources { config { name: \"gpu.log\" } }\n"
                   "data_sources { config { name: \"gpu.counters\" "
                   "gpu_counter_config { counter_names: \"*_invocations\" "
                   "instrumented_sampling: true } } }\n"
                   "data_sources { config { name: \"vulkan.memory_tracker\" "
                   "vulkan_memory_config { track_driver_memory_usage: true } } "
                   "}\n",
                   &out);
    ASSERT(strstr(out, "sample: ok ") != NULL);
    check_sample_stages(tp, i == 1 ? "vkQueueSubmit2" : "vkQueueSubmit");
    /* Nothing from the validation layer; where the sample's own query
     * took the statistics of a stage, one warning says they were lost. */
    Q_GPU_LOG_ROWS(tp, i == 2 ? 1 : 0);
    Q_EQ(tp,
         "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id "
         "WHERE t.name = 'GPU Log' AND s.name = 'WARNING' AND "
         "extract_arg(s.arg_set_id, 'message') LIKE '%inside the program''s "
         "own pipeline-statistics query%statistics are lost'",
         i == 2 ? 1 : 0);
    Q_EQ(tp,
         "SELECT count(*) > 0 FROM counter c JOIN counter_track t ON "
         "c.track_id = t.id WHERE t.name = 'fs_invocations'",
         i < 2);
    gp_tp_close(tp);
    free(out);
  }
}

/* Secondary command buffers: the one inside the render pass is part of
 * the pass's stage; the one executed outside any pass is a stage of its
 * own, named after it, timed inside its primary. What the layer adds
 * around them is valid (the validation layer says nothing). */
TEST(vulkan_record_secondary_command_buffers) {
  vk_env();
  if (access(VALIDATION_MANIFEST, R_OK) != 0)
    SKIP("the Khronos validation layer is not installed "
         "(Debian vulkan-validationlayers)");
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, "--secondary", "--validation", NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, config_with_log, &out);
  ASSERT(strstr(out, "sample: ok vertices=3 submits=2") != NULL);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0", 7);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0 AND dur > 0", 7);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE submission_id = 2 AND name IN "
       "('Draw work', 'Offscreen pass', 'Readback')",
       3);
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE name = 'Offscreen pass' AND "
       "render_pass != 0 AND render_target != 0",
       1);
  /* The copy is the secondary's, not a transfer of the primary's own. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage WHERE submission_id = 2 AND name = "
       "'Transfer'",
       0);
  /* Inside its primary, after the pass. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage r JOIN stage c ON c.name = 'Draw "
       "work' JOIN stage p ON p.name = 'Offscreen pass' WHERE r.name = "
       "'Readback' AND r.ts >= c.ts AND r.ts + r.dur <= c.ts + c.dur AND "
       "r.ts >= p.ts + p.dur",
       1);
  Q_GPU_LOG_ROWS(tp, 0);
  gp_tp_close(tp);
  free(out);
}

/* A frame loop (the sample's --frames): each of two command buffers
 * recorded again for every frame, two frames in flight. On lavapipe a
 * recording submitted once leaves its timestamps in its query pool for
 * the command buffer's next recording to copy (cmd.c), and the last ones
 * are read when the command buffer is freed: every frame the sample
 * rendered is there, timed, inside its command buffer, after its
 * vkQueueSubmit began, one after another; with the validation layer
 * below, what the layer recorded is valid. */
TEST(vulkan_record_frame_loop) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  bool validation = access(VALIDATION_MANIFEST, R_OK) == 0;
  char *cmd[] = {sample, "--frames", "25", validation ? "--validation" : NULL,
                 NULL};
  char *out = NULL;
  gp_tp *tp = vk_record(cmd, config_with_log, &out);
  ASSERT(strstr(out, "sample: ok ") != NULL);
  ASSERT(strstr(out, "sample: frames=25 submits=25\n") != NULL);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame'", 25);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame' AND dur > 0", 25);
  /* The sample's own two submissions come first. */
  Q_EQ(tp,
       "SELECT count(DISTINCT submission_id) FROM stage WHERE name = "
       "'Frame' AND submission_id > 2",
       25);
  /* Each inside its command buffer's stage, which is timed too. */
  Q_EQ(tp,
       "SELECT count(*) FROM stage f JOIN stage c ON c.submission_id = "
       "f.submission_id AND c.command_buffer = f.command_buffer AND c.name "
       "IN ('Slot 0', 'Slot 1') WHERE f.name = 'Frame' AND c.dur > "
       "0 AND f.ts >= c.ts AND f.ts + f.dur <= c.ts + c.dur",
       25);
  /* After its vkQueueSubmit began (the host's clock). */
  Q_EQ(tp,
       "WITH sub AS (SELECT ts, row_number() OVER (ORDER BY ts) AS n FROM "
       "host_call WHERE name = 'vkQueueSubmit') "
       "SELECT count(*) FROM stage g JOIN sub ON sub.n = g.submission_id "
       "WHERE g.name = 'Frame' AND g.ts >= sub.ts",
       25);
  /* One after another, as the one queue ran them. */
  Q_EQ(tp,
       "WITH f AS (SELECT ts, lag(ts + dur) OVER (ORDER BY submission_id) "
       "AS prev FROM stage WHERE name = 'Frame') "
       "SELECT count(*) FROM f WHERE prev IS NULL OR ts >= prev",
       25);
  Q_GPU_LOG_ROWS(tp, 0);
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  free(out);

  /* Each frame's command buffer submitted twice (ONE_TIME_SUBMIT
   * notwithstanding, without the validation layer): every submission
   * is there and timed, and the program ends. */
  char *cmd2[] = {sample, "--frames", "6", "--twice", NULL};
  tp = vk_record(cmd2, NULL, &out);
  ASSERT(strstr(out, "sample: frames=6 submits=12\n") != NULL);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame' AND dur > 0", 12);
  Q_EQ(tp,
       "SELECT count(DISTINCT submission_id) FROM stage WHERE name = "
       "'Frame'",
       12);
  gp_tp_close(tp);
  free(out);

  /* Recorded with SIMULTANEOUS_USE (as vkmark's frames are): deferred
   * like ONE_TIME_SUBMIT's while each recording is submitted once, every
   * frame timed; with --twice, the last two frames' command buffers each
   * twice in one submission (valid here): every run there, and the first
   * run of each of those deferred recordings, which may not have begun
   * when the second is noted, without times (never waited for nor read
   * early). Under the validation layer, nothing said. */
  for (int twice = 0; twice < 2; twice++) {
    char *cmd3[8] = {sample, "--frames", "10", "--simultaneous"};
    int k = 4;
    if (twice)
      cmd3[k++] = "--twice";
    if (validation)
      cmd3[k++] = "--validation";
    cmd3[k] = NULL;
    tp = vk_record(cmd3, config_with_log, &out);
    int n = twice ? 12 : 10;
    char want[64];
    snprintf(want, sizeof(want), "sample: frames=10 submits=%d\n", n);
    ASSERT(strstr(out, want) != NULL);
    Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame'", n);
    Q_EQ(tp,
         "SELECT count(DISTINCT submission_id) FROM stage WHERE name = "
         "'Frame'",
         10);
    Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame' AND dur > 0", 10);
    Q_GPU_LOG_ROWS(tp, 0);
    gp_tp_close(tp);
    free(out);
  }
}

/* The number after key in line (-1 if absent). */
static int64_t field(const char *line, const char *key) {
  const char *p = strstr(line, key);
  return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* How long each frame's render pass took, against what the device did
 * for it as measured without its timestamps: the sample (--timed) waits
 * for each frame of a 2048x2048 image alone and prints the host's time
 * around it and the CPU time that lavapipe's rasterizer threads ran in
 * it, as the kernel counts it. A pass lasts at least as long as its
 * rasterizers' average CPU time (they run it in parallel), and no longer
 * than the host's window. Lavapipe reads a timestamp as its latest
 * tile's, so the one the layer writes at the beginning of the pass is
 * the start of its last tile: taken as the start, a frame measured 1.0
 * to 1.3 ms of its rasterizers' 2.2 to 2.8 (and a pass that only clears,
 * 0.0 us). */
TEST(vulkan_render_pass_times_hold_the_work) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  enum { FRAMES = 6 };
  char *cmd[] = {sample, "--frames", "6", "--timed", "--size", "2048", NULL};
  char *out = NULL;
  gp_tp *tp = vk_record(cmd, NULL, &out);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE name = 'Frame' AND dur > 0",
       FRAMES);
  const char *line = out;
  for (int f = 0; f < FRAMES; f++) {
    char key[64];
    snprintf(key, sizeof(key), "sample: frame %d window_ns=", f);
    line = strstr(line, key);
    ASSERT(line != NULL);
    int64_t window = field(line, "window_ns=");
    int64_t raster = field(line, "raster_ns=");
    int64_t threads = field(line, "raster_threads=");
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SELECT dur FROM stage WHERE name = 'Frame' ORDER BY ts LIMIT "
             "1 OFFSET %d",
             f);
    int64_t dur = tp_int(tp, sql);
    /* (the host's and the trace's clocks agree to a few us) */
    if (dur <= 0 || dur > window + 20000)
      gp_test_fail(__FILE__, __LINE__,
                   "frame %d: %lld ns, outside the host's window of %lld ns", f,
                   (long long)dur, (long long)window);
    /* lavapipe: its rasterizers' CPU time, with slack */
    if (threads > 0 && dur < raster / threads * 9 / 10 - 100000)
      gp_test_fail(__FILE__, __LINE__,
                   "frame %d: %lld ns, less than its %lld rasterizers' %lld "
                   "ns each",
                   f, (long long)dur, (long long)threads,
                   (long long)(raster / threads));
    line++;
  }
  Q_NO_LOSS(tp);
  gp_tp_close(tp);
  free(out);
}

/* Two queues of one device: the semaphore-linked submissions on each,
 * every stage on its own queue, timed and linked as on one. Lavapipe has
 * one queue: skipped there. */
TEST(vulkan_record_two_queues) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *plain_argv[] = {sample, "--two-queues", NULL};
  char *quiet[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
  int rc = ocl_run(plain_argv, quiet, 120, NULL, NULL);
  if (rc == 3)
    SKIP("no Vulkan device");
  if (rc == 4)
    SKIP("the device has one queue (lavapipe does): nothing to test here");
  ASSERT_EQ(rc, 0);
  char *cmd[] = {sample, "--two-queues", NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, config_with_log, &out);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0", 7);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0 AND dur > 0", 7);
  Q_EQ(tp,
       "SELECT count(DISTINCT hw_queue_id) FROM stage WHERE "
       "submission_id > 0",
       2);
  Q_EQ(tp,
       "SELECT count(DISTINCT submission_id) FROM (SELECT submission_id, "
       "hw_queue_id FROM stage WHERE submission_id > 0 GROUP BY 1, 2)",
       2);
  Q_EQ(tp,
       "SELECT count(*) > 0 FROM flow f JOIN stage a ON a.id = "
       "f.slice_out JOIN stage b ON b.id = f.slice_in WHERE "
       "a.submission_id = 1 AND b.name = 'Draw work'",
       1);
  gp_tp_close(tp);
  free(out);
}

/* A queue without timestamps (timestampValidBits 0, made so here by the
 * layer's test double GPUPERF_VULKAN_TEST_TIMESTAMP_BITS, as lavapipe has
 * them): every stage is still there, at its submission, with no
 * duration, and the GPU log says why, once. */
TEST(vulkan_no_timestamps_marked) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  setenv("GPUPERF_VULKAN_TEST_TIMESTAMP_BITS", "0", 1);
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, config_with_log, &out);
  ASSERT(strstr(out, "sample: ok vertices=3 ") != NULL);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0", 7);
  Q_EQ(tp, "SELECT count(*) FROM stage WHERE submission_id > 0 AND dur > 0", 0);
  /* At their submission's start: no made-up time. */
  Q_EQ(tp,
       "WITH sub AS (SELECT ts, row_number() OVER (ORDER BY ts) AS n FROM "
       "host_call WHERE name = 'vkQueueSubmit') SELECT count(*) FROM stage g "
       "JOIN sub ON sub.n = g.submission_id WHERE g.ts = sub.ts",
       7);
  Q_EQ(tp,
       "SELECT count(*) FROM slice s JOIN track t ON s.track_id = t.id "
       "WHERE t.name = 'GPU Log' AND s.name = 'WARNING' AND "
       "extract_arg(s.arg_set_id, 'message') LIKE '%no timestamps%'",
       1);
  gp_tp_close(tp);
  free(out);
}

/* Every allocation freed, every bind undone: the running sums that
 * Perfetto's importer keeps per memory type and scope end at zero, and
 * the sample's own objects are all there. */
TEST(vulkan_memory_events_balance) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp =
      vk_record(cmd,
                "buffers { size_kb: 4096 }\n"
                "data_sources { config { name: \"gpu.renderstages\" } }\n"
                "data_sources { config { name: "
                "\"vulkan.memory_tracker\" vulkan_memory_config { "
                "track_driver_memory_usage: true "
                "track_device_memory_usage: true } } }\n",
                &out);
  ASSERT(strstr(out, "sample: ok ") != NULL);
  /* The sample: 4 allocations, 3 buffers, 1 image, each bound. */
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_DEVICE_MEMORY' AND operation = 'CREATE'",
       4);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_BUFFER' AND operation = 'BIND' AND device_memory != 0",
       3);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_IMAGE' AND operation = 'BIND' AND memory_size >= 64 * 64 * 4",
       1);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'GPU_BUFFER' AND operation = 'CREATE' AND memory_size = 1024",
       2);
  /* Balanced: creates and destroys, binds and bound destroys. */
  Q_EQ(tp,
       "SELECT sum(CASE WHEN operation IN ('CREATE') THEN memory_size "
       "WHEN operation = 'DESTROY' THEN -memory_size ELSE 0 END) FROM "
       "vulkan_memory_allocations WHERE source IN ('GPU_DEVICE_MEMORY', "
       "'DRIVER')",
       0);
  Q_EQ(tp,
       "SELECT count(*) FROM vulkan_memory_allocations WHERE source = "
       "'DRIVER' AND operation = 'CREATE' AND scope IS NOT NULL",
       tp_int(tp, "SELECT count(*) FROM vulkan_memory_allocations WHERE "
                  "source = 'DRIVER' AND operation = 'DESTROY'"));
  Q_EQ(tp,
       "SELECT count(*) > 0 FROM vulkan_memory_allocations WHERE source = "
       "'DRIVER'",
       1);
  Q_EQ(tp,
       "SELECT count(*) FROM counter_track t WHERE t.name LIKE 'vulkan.mem.%' "
       "AND (SELECT value FROM counter c WHERE c.track_id = t.id ORDER BY "
       "ts DESC, id DESC LIMIT 1) != 0",
       0);
  Q_EQ(tp,
       "SELECT count(*) >= 3 FROM counter_track WHERE name LIKE 'vulkan.mem.%'",
       1);
  gp_tp_close(tp);
  free(out);
}

/* The value of counter `name` sampled at the start of the stage `stage`
 * (-1 if none). */
static int64_t stage_counter(gp_tp *tp, const char *name, const char *stage) {
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT coalesce((SELECT c.value FROM counter c JOIN counter_track "
           "t ON c.track_id = t.id WHERE t.name = '%s' AND c.ts = (SELECT ts "
           "FROM stage WHERE name = '%s')), -1)",
           name, stage);
  return tp_int(tp, sql);
}

/* The layer's pipeline statistics of each measured stage equal what the
 * sample's own query reads for the same draw and dispatch (a run of its
 * own: two queries of that type cannot be active at once); the name
 * filter of gpu.counters picks the stages measured. */
TEST(vulkan_pipeline_statistics_per_stage) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *plain_argv[] = {sample, NULL}, *plain = NULL;
  char *quiet[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
  int rc = ocl_run(plain_argv, quiet, 120, &plain, NULL);
  if (rc == 3)
    SKIP("no Vulkan device");
  ASSERT_EQ(rc, 0);
  static const struct {
    const char *counter, *key, *stage;
  } want[] = {{"ia_vertices", "ia_vertices=", "Offscreen pass"},
              {"ia_primitives", "ia_primitives=", "Offscreen pass"},
              {"vs_invocations", "vs=", "Offscreen pass"},
              {"clipping_invocations", "clip=", "Offscreen pass"},
              {"clipping_primitives", "clip_primitives=", "Offscreen pass"},
              {"fs_invocations", "fs=", "Offscreen pass"},
              {"cs_invocations", "cs=", "Double values"}};
  char *cmd[] = {sample, "--no-query", NULL}, *out = NULL;
  gp_tp *tp =
      vk_record(cmd,
                "buffers { size_kb: 4096 }\n"
                "data_sources { config { name: \"gpu.renderstages\" } }\n"
                "data_sources { config { name: \"gpu.counters\" "
                "gpu_counter_config { counter_names: \"ia_*\" "
                "counter_names: \"*_invocations\" "
                "counter_names: \"clipping_primitives\" "
                "instrumented_sampling: true } } }\n",
                &out);
  ASSERT(strstr(out, "sample: ok vertices=3 submits=2") != NULL);
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    int64_t own = field(plain, want[i].key);
    ASSERT_GE(own, 1);
    int64_t got = stage_counter(tp, want[i].counter, want[i].stage);
    if (got != own)
      gp_test_fail(__FILE__, __LINE__,
                   "%s of '%s': %lld in the trace, %lld "
                   "from the sample's own query",
                   want[i].counter, want[i].stage, (long long)got,
                   (long long)own);
  }
  ASSERT_EQ(field(plain, "ia_vertices="), 3); /* the draw it issued */
  gp_tp_close(tp);
  free(out);

  /* Only the stages the name filter lets through are measured. */
  out = NULL;
  tp = vk_record(cmd,
                 "buffers { size_kb: 4096 }\n"
                 "data_sources { config { name: \"gpu.renderstages\" } }\n"
                 "data_sources { config { name: \"gpu.counters\" "
                 "gpu_counter_config { counter_names: \"ia_vertices\" "
                 "counter_names: \"cs_invocations\" "
                 "instrumented_sampling_config { activity_name_filters { "
                 "name_glob: \"Offscreen*\" } } } } }\n",
                 &out);
  ASSERT_EQ(stage_counter(tp, "ia_vertices", "Offscreen pass"), 3);
  Q_EQ(tp,
       "SELECT count(DISTINCT c.ts) FROM counter c JOIN counter_track t ON "
       "c.track_id = t.id WHERE t.name IN ('ia_vertices', 'cs_invocations')",
       1);
  ASSERT_EQ(stage_counter(tp, "cs_invocations", "Double values"), -1);
  gp_tp_close(tp);
  free(out);
  free(plain);
}

/* The Vulkan device's Utilization (derived from its command buffers'
 * GPU times, beside the pipeline statistics in one catalog) in a default
 * recording: every window equals the union of the device's stages in it,
 * and the windows add up to all of the device's busy time. */
TEST(vulkan_derived_utilization) {
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, NULL}, *out = NULL;
  gp_tp *tp = vk_record(cmd, NULL, &out);
  int64_t ugpu = tp_int(tp, "SELECT id FROM gpu WHERE name GLOB 'llvmpipe*'");
  Q_EQ(tp,
       "SELECT count(*) FROM gpu_counter_track WHERE name = 'Utilization' "
       "AND description LIKE 'Derived%'",
       1);
  size_t n = 0;
  win *w = derived_check_windows(tp, ugpu, &n);
  double max = 0;
  for (size_t i = 0; i < n; i++)
    if (w[i].value > max)
      max = w[i].value;
  ASSERT(max > 0); /* the sample's work shows */
  free(w);
  gp_tp_close(tp);
  free(out);
}

/* Samples of the counter track `name` (-1 if there is no such track). */
static int64_t track_samples(gp_tp *tp, const char *name) {
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT CASE WHEN (SELECT count(*) FROM gpu_counter_track WHERE "
           "name = '%s') = 0 THEN -1 ELSE (SELECT count(*) FROM counter c "
           "JOIN gpu_counter_track t ON c.track_id = t.id WHERE t.name = "
           "'%s') END",
           name, name);
  return tp_int(tp, sql);
}

/* Pipeline statistics (per render stage) and Utilization (per window)
 * in one recording, however they are asked for: -e, a periodic config, an
 * instrumented one, or both at once. Each keeps its plain track name. */
TEST(vulkan_counters_compose) {
#if defined(__SANITIZE_ADDRESS__)
  SKIP("a sanitizer build lists no Vulkan counter for -e to name");
#endif
  vk_env();
  char sample[512];
  vk_built("tests/vulkan-sample", sample, sizeof(sample));
  char *cmd[] = {sample, "--no-query", NULL}, *out = NULL;
  static const char *const configs[] = {
      NULL, /* -e */
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" gpu_counter_config { "
      "counter_names: \"Utilization\" counter_names: \"ia_vertices\" "
      "counter_names: \"fs_invocations\" counter_period_ns: 1000000 "
      "instrumented_sampling: true } } }\n",
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" gpu_counter_config { "
      "counter_names: \"Utilization\" counter_names: \"ia_vertices\" "
      "counter_names: \"fs_invocations\" instrumented_sampling: true } } "
      "}\n",
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "data_sources { config { name: \"gpu.counters\" gpu_counter_config { "
      "counter_names: \"Utilization\" counter_names: \"ia_vertices\" "
      "counter_names: \"fs_invocations\" } } }\n"};
  for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
    char *args[] = {"-e", "Utilization,ia_vertices,fs_invocations", NULL};
    gp_tp *tp = vk_record_with(cmd, configs[i], configs[i] ? NULL : args, &out);
    ASSERT(strstr(out, "sample: ok ") != NULL);
    ASSERT_EQ(stage_counter(tp, "ia_vertices", "Offscreen pass"), 3);
    ASSERT_GE(stage_counter(tp, "fs_invocations", "Offscreen pass"), 1);
    ASSERT_GE(track_samples(tp, "Utilization"), 1);
    Q_EQ(tp,
         "SELECT count(*) FROM gpu_counter_track WHERE name LIKE "
         "'%(per activity)'",
         0);
    gp_tp_close(tp);
    free(out);
  }
  /* One statistic alone: measured, and nothing else is sampled. */
  char *args[] = {"-e", "ia_vertices", NULL};
  gp_tp *tp = vk_record_with(cmd, NULL, args, &out);
  ASSERT_EQ(stage_counter(tp, "ia_vertices", "Offscreen pass"), 3);
  ASSERT_EQ(track_samples(tp, "Utilization"), -1);
  gp_tp_close(tp);
  free(out);
}

#else

TEST(vulkan_counters_compose) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_sample) {
  SKIP("built without the trace processor");
}
TEST(vulkan_derived_utilization) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_sample_with_validation) {
  SKIP("built without the trace processor");
}
TEST(vulkan_memory_events_balance) {
  SKIP("built without the trace processor");
}
TEST(vulkan_pipeline_statistics_per_stage) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_sample_submit2) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_secondary_command_buffers) {
  SKIP("built without the trace processor");
}
TEST(vulkan_no_timestamps_marked) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_two_queues) {
  SKIP("built without the trace processor");
}
TEST(vulkan_record_frame_loop) {
  SKIP("built without the trace processor");
}
TEST(vulkan_render_pass_times_hold_the_work) {
  SKIP("built without the trace processor");
}

#endif
