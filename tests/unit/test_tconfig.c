/*
 * test_tconfig.c - the TraceConfig text format: every field the Perfetto
 * seed shows, written back and read again, and bad input (syntax,
 * unknown fields, ranges, rules the schema cannot say) rejected with the
 * line and column at fault.
 */
#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "perfetto/tconfig.h"

static const char full[] =
    "# a config with every field gpuperf reads\n"
    "buffers { size_kb: 65536 fill_policy: RING_BUFFER }\n"
    "buffers: { size_kb: 1024 }\n"
    "duration_ms: 10000\n"
    "flush_period_ms: 250;\n"
    "write_into_file: true\n"
    "data_sources {\n"
    "  config {\n"
    "    name: \"gpu.counters.v3d\"\n"
    "    target_buffer: 1\n"
    "    gpu_counter_config {\n"
    "      counter_period_ns: 500000\n"
    "      counter_names: \"sm__cycles_elapsed.avg\"\n"
    "      counter_names: 'sm__cycles_active.avg'\n"
    "      counter_names: [\"dram__*\", \"Util\" \"ization\"]\n"
    "      instrumented_sampling_config {\n"
    "        activity_name_filters {\n"
    "          name_glob: \"myKernel*\"\n"
    "          name_base: DEMANGLED_KERNEL_NAME\n"
    "        }\n"
    "        activity_name_filters { name_glob: \"_Z*\" }\n"
    "        activity_tx_include_globs: \"training*\"\n"
    "        activity_tx_exclude_globs: \"warmup*\"\n"
    "        activity_ranges { skip: 10 count: 5 }\n"
    "        activity_ranges { skip: 100 }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n"
    "data_sources {\n"
    "  config {\n"
    "    name: \"gpu.counters\"\n"
    "    gpu_counter_config {\n"
    "      counter_ids: 1\n"
    "      counter_ids: [3, 0x6a]\n"
    "      instrumented_sampling: true\n"
    "      fix_gpu_clock: false\n"
    "    }\n"
    "  }\n"
    "}\n"
    "data_sources < config < name: \"gpu.renderstages\"\n"
    "  gpu_renderstages_config { low_overhead: true full_loadstore: false } > "
    ">\n"
    "data_sources { config { name: \"gpu.log\" } }\n"
    "gpuperf_options { counter_descriptor_mode: 1 machine_id: 7 }\n";

static void check_full(const gp_trace_config *c) {
  gp_trace_config_info ti;
  ASSERT_OK(gp_trace_config_get_info(c, &ti));
  ASSERT_EQ(ti.num_data_sources, 4);
  ASSERT_EQ(ti.num_buffers, 2);
  ASSERT_EQ(ti.buffer_size_kb, 65536 + 1024);
  ASSERT_EQ(ti.duration_ms, 10000);
  ASSERT_EQ(ti.flush_period_ms, 250);
  ASSERT_EQ(ti.counter_descriptor_mode, 1);
  ASSERT_EQ(ti.machine_id, 7);

  gp_data_source_info ds;
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_COUNTERS);
  ASSERT_STR_EQ(ds.name, "gpu.counters.v3d");
  ASSERT_STR_EQ(ds.vendor, "v3d");
  ASSERT_EQ(ds.target_buffer, 1);
  const gp_counter_config *cc = &ds.counters;
  ASSERT_EQ(cc->counter_period_ns, 500000);
  ASSERT_EQ(cc->num_counter_names, 4);
  ASSERT_STR_EQ(cc->counter_names[0], "sm__cycles_elapsed.avg");
  ASSERT_STR_EQ(cc->counter_names[1], "sm__cycles_active.avg");
  ASSERT_STR_EQ(cc->counter_names[2], "dram__*");
  ASSERT_STR_EQ(cc->counter_names[3], "Utilization");
  ASSERT_EQ(cc->num_counter_ids, 0);
  ASSERT_EQ(cc->instrumented, 1);
  ASSERT_EQ(cc->num_name_filters, 2);
  ASSERT_STR_EQ(cc->name_filters[0].name_glob, "myKernel*");
  ASSERT_EQ(cc->name_filters[0].name_base, GP_NAME_BASE_DEMANGLED);
  ASSERT_STR_EQ(cc->name_filters[1].name_glob, "_Z*");
  ASSERT_EQ(cc->name_filters[1].name_base, GP_NAME_BASE_MANGLED);
  ASSERT_EQ(cc->num_tx_include_globs, 1);
  ASSERT_STR_EQ(cc->tx_include_globs[0], "training*");
  ASSERT_EQ(cc->num_tx_exclude_globs, 1);
  ASSERT_STR_EQ(cc->tx_exclude_globs[0], "warmup*");
  ASSERT_EQ(cc->num_ranges, 2);
  ASSERT_EQ(cc->ranges[0].skip, 10);
  ASSERT_EQ(cc->ranges[0].count, 5);
  ASSERT_EQ(cc->ranges[1].skip, 100);
  ASSERT_UEQ(cc->ranges[1].count, UINT32_MAX);

  ASSERT_OK(gp_trace_config_get_data_source(c, 1, &ds));
  ASSERT_STR_EQ(ds.vendor, "");
  ASSERT_EQ(ds.counters.num_counter_ids, 3);
  ASSERT_EQ(ds.counters.counter_ids[0], 1);
  ASSERT_EQ(ds.counters.counter_ids[1], 3);
  ASSERT_EQ(ds.counters.counter_ids[2], 106);
  ASSERT_EQ(ds.counters.instrumented, 1);
  ASSERT_EQ(ds.counters.counter_period_ns, 0); /* instrumented only */
  ASSERT_EQ(ds.fix_gpu_clock, 0);

  ASSERT_OK(gp_trace_config_get_data_source(c, 2, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_RENDERSTAGES);
  ASSERT_EQ(ds.low_overhead, 1);
  ASSERT_EQ(ds.num_trace_metrics, 0);
  ASSERT_EQ(ds.full_loadstore, 0);
  ASSERT_OK(gp_trace_config_get_data_source(c, 3, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_LOG);
  ASSERT_ERR(gp_trace_config_get_data_source(c, 4, &ds), GP_ENOENT);
}

TEST(tconfig_every_field_and_roundtrip) {
  gp_trace_config *c = NULL;
  char err[256];
  ASSERT_OK(
      gp_trace_config_parse(full, sizeof(full) - 1, &c, err, sizeof(err)));
  check_full(c);
  /* Written back, read again: the same config. */
  size_t need = 0;
  char small[8];
  ASSERT_ERR(gp_trace_config_format(c, small, sizeof(small), &need), GP_ESIZE);
  char *text = malloc(need + 1);
  ASSERT_OK(gp_trace_config_format(c, text, need + 1, &need));
  ASSERT_EQ(strlen(text), need);
  gp_trace_config *d = NULL;
  ASSERT_OK(gp_trace_config_parse(text, need, &d, err, sizeof(err)));
  check_full(d);
  size_t need2 = 0;
  char *text2 = malloc(need + 1);
  ASSERT_OK(gp_trace_config_format(d, text2, need + 1, &need2));
  ASSERT_STR_EQ(text, text2);
  free(text);
  free(text2);
  gp_trace_config_destroy(c);
  gp_trace_config_destroy(d);
}

TEST(tconfig_defaults_and_add_counters) {
  gp_trace_config *c;
  ASSERT_OK(gp_trace_config_default(&c));
  gp_data_source_info ds;
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_RENDERSTAGES);
  ASSERT_OK(gp_trace_config_get_data_source(c, 1, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_COUNTERS);
  ASSERT_EQ(ds.counters.counter_period_ns, GP_DEFAULT_COUNTER_PERIOD_NS);
  ASSERT_EQ(ds.counters.num_counter_names, 0);
  /* -e adds names; bad lists change nothing. */
  ASSERT_ERR(gp_trace_config_add_counters(c, ""), GP_EINVAL);
  ASSERT_ERR(gp_trace_config_add_counters(c, "a,,b"), GP_EINVAL);
  ASSERT_ERR(gp_trace_config_add_counters(c, "a,"), GP_EINVAL);
  ASSERT_OK(gp_trace_config_get_data_source(c, 1, &ds));
  ASSERT_EQ(ds.counters.num_counter_names, 0);
  ASSERT_OK(gp_trace_config_add_counters(c, "Utilization,sm__*"));
  ASSERT_OK(gp_trace_config_add_counters(c, "dram__bytes_read.sum"));
  ASSERT_OK(gp_trace_config_get_data_source(c, 1, &ds));
  ASSERT_EQ(ds.counters.num_counter_names, 3);
  ASSERT_STR_EQ(ds.counters.counter_names[1], "sm__*");
  gp_trace_config_destroy(c);
  /* A config without gpu.counters gets one. */
  ASSERT_OK(gp_trace_config_parse("", 0, &c, NULL, 0));
  ASSERT_OK(gp_trace_config_add_counters(c, "x"));
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, &ds));
  ASSERT_STR_EQ(ds.name, "gpu.counters");
  gp_trace_config_destroy(c);
  /* ... but not one that selects by id. */
  const char *ids = "data_sources { config { name: \"gpu.counters\" "
                    "gpu_counter_config { counter_ids: 1 } } }";
  ASSERT_OK(gp_trace_config_parse(ids, strlen(ids), &c, NULL, 0));
  ASSERT_ERR(gp_trace_config_add_counters(c, "x"), GP_EINVAL);
  gp_trace_config_destroy(c);
}

/* Parsing text must fail with GP_EPARSE and a message starting with the
 * position and containing `what`. */
static void bad(const char *text, const char *where, const char *what) {
  gp_trace_config *c = (gp_trace_config *)(uintptr_t)1;
  char err[512];
  int rc = gp_trace_config_parse(text, strlen(text), &c, err, sizeof(err));
  if (rc != GP_EPARSE)
    gp_test_fail(__FILE__, __LINE__, "parsing <<%s>> returned %s", text,
                 gp_error_name(rc));
  ASSERT(c == (gp_trace_config *)(uintptr_t)1); /* untouched */
  if (strncmp(err, where, strlen(where)) != 0 || !strstr(err, what))
    gp_test_fail(__FILE__, __LINE__,
                 "parsing <<%s>>\n    message: %s\n    expected: %s... %s",
                 text, err, where, what);
}

TEST(tconfig_bad_input_names_line_and_column) {
  bad("duration_ms: 10\nfoo: 1\n", "line 2, column 1:", "unknown field 'foo'");
  bad("data_sources {\n  config {\n    nam: \"x\"\n  }\n}\n",
      "line 3, column 5:", "unknown field 'nam' in config");
  bad("duration_ms 10", "line 1, column 13:", "expected ':'");
  bad("duration_ms: -1", "line 1, column 14:", "negative");
  bad("duration_ms: 4294967296", "line 1, column 14:", "out of range");
  bad("duration_ms: 12abc", "line 1, column 14:", "not a whole number");
  bad("duration_ms: 1\nduration_ms: 2", "line 2, column 1:",
      "'duration_ms' is given twice (first at line 1, column 1)");
  bad("data_sources { config { name: \"gpu.log\" }",
      "line 1, column 42:", "not closed");
  bad("data_sources { config { name: \"gpu.log } }",
      "line 1, column 31:", "string not closed");
  bad("write_into_file: yes", "line 1, column 18:", "expected true or false");
  bad("buffers { fill_policy: ALWAYS }",
      "line 1, column 24:", "'ALWAYS' is not a value of 'fill_policy'");
  bad("duration_ms: 1 $", "line 1, column 16:", "unexpected character '$'");
  bad("data_sources { config { name: \"linux.ftrace\" } }",
      "line 1, column 25:", "linux.ftrace needs ftrace_config");
  bad("data_sources { config { name: \"linux.ftrace.x\" } }",
      "line 1, column 25:", "not one gpuperf records");
  bad("data_sources { config { name: \"gpu.counters.\" } }",
      "line 1, column 25:", "not one gpuperf records");
  bad("data_sources { config { } }", "line 1, column 16:", "has no name");
  bad("data_sources { }", "line 1, column 1:", "needs a config");
  bad("data_sources { config { name: \"gpu.log\" } }\n"
      "data_sources { config { name: \"gpu.log\" } }",
      "line 2, column 25:", "given twice (first at line 1)");
  bad("data_sources { config { name: \"gpu.renderstages\"\n"
      "  gpu_counter_config { counter_ids: 1 } } }",
      "line 2, column 3:", "gpu_counter_config belongs to a gpu.counters");
  bad("data_sources { config { name: \"gpu.counters\"\n"
      "  gpu_renderstages_config { } } }",
      "line 2, column 3:", "gpu_renderstages_config belongs");
  bad("data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  counter_ids: 1\n  counter_names: \"x\" } } }",
      "line 3, column 3:", "counter_ids or counter_names, not both");
  bad("data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  instrumented_sampling: true\n"
      "  instrumented_sampling_config { } } } }",
      "line 3, column 3:", "oneof");
  bad("data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  instrumented_sampling_config {\n"
      "    activity_name_filters { name_base: FUNCTION_NAME } } } } }",
      "line 3, column 5:", "needs a name_glob");
  bad("data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  counter_names: \"\" } } }",
      "line 2, column 3:", "empty name");
  bad("data_sources { config { name: \"gpu.counters\" gpu_counter_config {\n"
      "  counter_period_ns: 0 } } }",
      "line 2, column 3:", "samples nothing");
  bad("buffers { size_kb: 1 }\n"
      "data_sources { config { name: \"gpu.log\" target_buffer: 1 } }",
      "line 2, column 41:", "there is only 1 buffer");
  bad("gpuperf_options { counter_descriptor_mode: 3 }",
      "line 1, column 19:", "must be 1 (inline) or 2");
  bad("duration_ms: [1, 2]", "line 1, column 14:", "not a repeated field");
  bad("data_sources { config { name: \"a\\q\" } }",
      "line 1, column 31:", "unknown escape");
  bad("[perfetto.x] { }", "line 1, column 1:", "extensions are not supported");
}

/* The mask of the events of a linux.ftrace data source parsed from
 * text (which must have one, the first); its numbers into *ds. */
static uint32_t ftrace_mask(const char *text, gp_data_source_info *ds) {
  gp_trace_config *c = NULL;
  char err[512];
  if (gp_trace_config_parse(text, strlen(text), &c, err, sizeof(err)) != 0)
    gp_test_fail(__FILE__, __LINE__, "parsing <<%s>>: %s", text, err);
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, ds));
  ASSERT_EQ(ds->kind, GP_DATA_SOURCE_LINUX_FTRACE);
  ASSERT_STR_EQ(ds->name, "linux.ftrace");
  ASSERT_STR_EQ(ds->vendor, "");
  uint32_t m = ds->ftrace_events;
  ds->name = ds->vendor = NULL; /* the config's, freed below */
  gp_trace_config_destroy(c);
  return m;
}

#define BIT(e) (1u << (e))

/* linux.ftrace: the GPU events, by group/name, group/star or bare name;
 * buffer_size_kb and drain_period_ms; written back and read again; any
 * other event refused with the reason. */
TEST(tconfig_linux_ftrace) {
  gp_data_source_info ds;
  const char text[] =
      "data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  ftrace_events: \"dma_fence/*\"\n"
      "  ftrace_events: \"power/gpu_frequency\"\n"
      "  ftrace_events: \"gpu_mem_total\"\n"
      "  buffer_size_kb: 4096 drain_period_ms: 250 } } }\n";
  uint32_t want =
      BIT(GP_FTRACE_DMA_FENCE_INIT) | BIT(GP_FTRACE_DMA_FENCE_EMIT) |
      BIT(GP_FTRACE_DMA_FENCE_SIGNALED) | BIT(GP_FTRACE_DMA_FENCE_WAIT_START) |
      BIT(GP_FTRACE_DMA_FENCE_WAIT_END) | BIT(GP_FTRACE_GPU_FREQUENCY) |
      BIT(GP_FTRACE_GPU_MEM_TOTAL);
  ASSERT_EQ(ftrace_mask(text, &ds), want);
  ASSERT_EQ(ds.ftrace_buffer_size_kb, 4096);
  ASSERT_EQ(ds.ftrace_drain_period_ms, 250);
  ASSERT_EQ(ftrace_mask("data_sources { config { name: \"linux.ftrace\" "
                        "ftrace_config { ftrace_events: \"gpu_scheduler/*\" "
                        "} } }",
                        &ds),
            BIT(GP_FTRACE_DRM_SCHED_JOB) | BIT(GP_FTRACE_DRM_RUN_JOB) |
                BIT(GP_FTRACE_DRM_SCHED_PROCESS_JOB) |
                BIT(GP_FTRACE_DRM_SCHED_JOB_QUEUE) |
                BIT(GP_FTRACE_DRM_SCHED_JOB_RUN) |
                BIT(GP_FTRACE_DRM_SCHED_JOB_DONE) |
                BIT(GP_FTRACE_DRM_SCHED_JOB_ADD_DEP) |
                BIT(GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE));
  ASSERT_EQ(ds.ftrace_buffer_size_kb, 0);
  /* Written back, read again: the same. */
  gp_trace_config *c = NULL;
  ASSERT_OK(gp_trace_config_parse(text, strlen(text), &c, NULL, 0));
  char out[2048];
  size_t need = 0;
  ASSERT_OK(gp_trace_config_format(c, out, sizeof(out), &need));
  gp_trace_config_destroy(c);
  ASSERT(strstr(out, "ftrace_events: \"dma_fence/dma_fence_wait_end\""));
  ASSERT_EQ(ftrace_mask(out, &ds), want);
  ASSERT_EQ(ds.ftrace_buffer_size_kb, 4096);
  ASSERT_EQ(ds.ftrace_drain_period_ms, 250);
  /* Sent encoded (DataSourceConfig: name 1, ftrace_config 100;
   * FtraceConfig: ftrace_events 1, buffer_size_kb 10): the same. */
  static const uint8_t bin[] = {
      0x0a, 12,  'l',  'i',  'n', 'u',  'x', '.',  'f', 't', 'r', 'a',
      'c',  'e', 0xa2, 0x06, 28,  0x0a, 24,  'd',  'm', 'a', '_', 'f',
      'e',  'n', 'c',  'e',  '/', 'd',  'm', 'a',  '_', 'f', 'e', 'n',
      'c',  'e', '_',  'i',  'n', 'i',  't', 0x50, 0x40};
  char err[256];
  ASSERT_OK(
      gp__trace_config_from_source(bin, sizeof(bin), &c, err, sizeof(err)));
  ASSERT_OK(gp_trace_config_get_data_source(c, 0, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_LINUX_FTRACE);
  ASSERT_EQ(ds.ftrace_events, BIT(GP_FTRACE_DMA_FENCE_INIT));
  ASSERT_EQ(ds.ftrace_buffer_size_kb, 64);
  gp_trace_config_destroy(c);
  /* Refused: events gpuperf does not read, a config without events, an
   * ftrace_config elsewhere, fields gpuperf does not read. */
  bad("data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  ftrace_events: \"sched/sched_switch\" } } }",
      "line 2, column 3:",
      "'sched/sched_switch' is not a GPU event gpuperf reads");
  bad("data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  ftrace_events: \"dma_fence/dma_fence_destroy\" } } }",
      "line 2, column 3:", "traced_probes");
  bad("data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  ftrace_events: \"sched/*\" } } }",
      "line 2, column 3:", "not a GPU event");
  bad("data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  buffer_size_kb: 64 } } }",
      "line 1, column 46:", "needs ftrace_config { ftrace_events");
  bad("data_sources { config { name: \"gpu.log\"\n"
      "  ftrace_config { ftrace_events: \"dma_fence/*\" } } }",
      "line 2, column 3:", "ftrace_config belongs to a linux.ftrace");
  bad("data_sources { config { name: \"linux.ftrace\" ftrace_config {\n"
      "  atrace_categories: \"gfx\" } } }",
      "line 2, column 3:", "unknown field 'atrace_categories'");
}

TEST(tconfig_nothing_recorded_on_error) {
  /* A failed parse leaves no config and no partial state behind: the
   * same text parses after being corrected. */
  const char *broken = "data_sources { config { name: \"gpu.log\" }\n";
  gp_trace_config *c = NULL;
  char err[256];
  ASSERT_ERR(
      gp_trace_config_parse(broken, strlen(broken), &c, err, sizeof(err)),
      GP_EPARSE);
  ASSERT(c == NULL);
  ASSERT_ERR(gp_trace_config_parse(NULL, 1, &c, err, sizeof(err)), GP_EINVAL);
  ASSERT_ERR(gp_trace_config_parse("", 0, NULL, err, sizeof(err)), GP_EINVAL);
  /* A tiny error buffer is not overrun. */
  char tiny[8];
  memset(tiny, 'x', sizeof(tiny));
  ASSERT_ERR(gp_trace_config_parse("foo: 1", 6, &c, tiny, 5), GP_EPARSE);
  ASSERT_EQ(tiny[4], '\0');
  ASSERT_EQ(tiny[5], 'x');
}

/* A small deterministic generator for the mutations below. */
static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

TEST(tconfig_survives_mutated_input) {
  /* Thousands of corrupted variants of a valid config: each parses or
   * fails with GP_EPARSE and a positioned message; none crashes (the
   * sanitizer build checks memory errors). */
  uint64_t seed = 42;
  size_t n = sizeof(full) - 1;
  char *buf = malloc(n + 64);
  static const char alphabet[] = "{}<>[]:;,\"'\\#\n 0x-9azAZ_.";
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(buf, full, n);
    size_t len = n;
    int edits = 1 + (int)(rnd(&seed) % 4);
    for (int e = 0; e < edits; e++) {
      size_t at = rnd(&seed) % len;
      switch (rnd(&seed) % 3) {
      case 0:
        buf[at] = alphabet[rnd(&seed) % (sizeof(alphabet) - 1)];
        break;
      case 1:
        len = at + 1; /* truncate */
        break;
      default:
        buf[at] = (char)(rnd(&seed) & 0xff);
        break;
      }
    }
    gp_trace_config *c = NULL;
    char err[256] = "";
    int rc = gp_trace_config_parse(buf, len, &c, err, sizeof(err));
    if (rc == 0) {
      size_t need = 0;
      ASSERT_ERR(gp_trace_config_format(c, NULL, 0, &need), GP_ESIZE);
      gp_trace_config_destroy(c);
    } else {
      ASSERT_EQ(rc, GP_EPARSE);
      ASSERT(strncmp(err, "line ", 5) == 0);
    }
  }
  free(buf);
}

/* fix_gpu_clock, full_loadstore and trace_metrics ask for what no device
 * gpuperf drives can do: each is refused with its name, line and column,
 * never accepted and ignored. */
TEST(tconfig_unhonourable_fields_refused) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"data_sources { config { name: \"gpu.counters\"\n"
       "  gpu_counter_config { fix_gpu_clock: true } } }\n",
       "fix_gpu_clock: gpuperf cannot fix a GPU's clock"},
      {"data_sources { config { name: \"gpu.renderstages\"\n"
       "  gpu_renderstages_config { full_loadstore: true } } }\n",
       "full_loadstore: gpuperf sees no render pass"},
      {"data_sources { config { name: \"gpu.renderstages\"\n"
       "  gpu_renderstages_config { trace_metrics: \"m1\" } } }\n",
       "trace_metrics: gpuperf records no driver trace metrics ('m1')"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    gp_trace_config *c = NULL;
    char err[256] = "";
    ASSERT_ERR(gp_trace_config_parse(cases[i].text, strlen(cases[i].text), &c,
                                     err, sizeof(err)),
               GP_EPARSE);
    ASSERT(c == NULL);
    if (!strstr(err, cases[i].want) || strncmp(err, "line 2, ", 8) != 0)
      gp_test_fail(__FILE__, __LINE__, "case %zu: '%s' lacks 'line 2, ...%s'",
                   i, err, cases[i].want);
  }
  /* false is what leaving them out means: accepted. */
  const char ok[] = "data_sources { config { name: \"gpu.counters\"\n"
                    "  gpu_counter_config { fix_gpu_clock: false } } }\n"
                    "data_sources { config { name: \"gpu.renderstages\"\n"
                    "  gpu_renderstages_config { full_loadstore: false } } }\n";
  gp_trace_config *c = NULL;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(ok, sizeof(ok) - 1, &c, err, sizeof(err)));
  gp_trace_config_destroy(c);
}
