/*
 * test_config_rules.c - the gpu.counters config means what the Perfetto
 * seed says: activity_ranges count for the data source as a whole (not per
 * GPU, nor per recorded process), counter ids in the trace are the
 * configured ones (descriptor mode 1 included), both kinds of sampling put
 * a counter in the same groups, and a vendor suffix names devices by
 * vendor alone: the others write nothing, and a suffix that names no
 * device is warned about once. Traces come from `gpuperf demo -c` on
 * simulated GPUs, or `gpuperf record -c` of tests/programs/sim_app's
 * processes; what they hold is read by Perfetto's own
 * trace_processor_shell where it can say it, and the expected figures come
 * from the configs.
 */
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "perfetto/tconfig.h"
#include "unit/writer_util.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

static const char *perfetto_tp(void) {
  const char *tp = getenv("GPUPERF_PERFETTO_TP");
  if (!tp || !*tp)
    SKIP("GPUPERF_PERFETTO_TP is not set (Perfetto's trace_processor_shell)");
  return tp;
}

/* Runs `gpuperf demo -q --gpus N -c CONFIG -o NAME.pftrace` in the test's
 * folder (stderr to NAME.err); returns the exit status. */
static int demo(const char *name, unsigned gpus, const char *config) {
  char cfg[1200], cmd[4096];
  snprintf(cfg, sizeof(cfg), "%s/%s.cfg", gp_test_tmpdir(), name);
  wt_write_text(cfg, config);
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && '%s' demo -q --gpus %u --steps 2 -c '%s.cfg' -o "
           "'%s.pftrace' >'%s.out' 2>'%s.err'",
           gp_test_tmpdir(), cli(), gpus, name, name, name, name);
  return wt_system(cmd);
}

/* The rows of sql on trace NAME.pftrace by Perfetto's trace processor, as
 * CSV without the header, in a malloc'd string. */
static char *ptp_rows(const char *name, const char *sql) {
  char cmd[8192];
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && '%s' -Q \"%s\" '%s.pftrace' "
           "2>/dev/null | tail -n +2 > '%s.rows'",
           gp_test_tmpdir(), perfetto_tp(), sql, name, name);
  ASSERT_EQ(wt_system(cmd), 0);
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s.rows", gp_test_tmpdir(), name);
  size_t n = 0;
  uint8_t *d = wt_read_file(path, &n);
  char *s = malloc(n + 1);
  memcpy(s, d, n);
  s[n] = '\0';
  free(d);
  return s;
}

static size_t count_lines(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* `count: 3` instruments 3 kernels in all, on 2 GPUs together: the seed
 * defines skip and count for the data source as a whole. */
TEST(config_activity_ranges_count_across_gpus) {
  ASSERT_EQ(demo("ranges", 2,
                 "data_sources { config { name: \"gpu.renderstages\" } }\n"
                 "data_sources { config { name: \"gpu.counters\"\n"
                 "  gpu_counter_config { counter_names: "
                 "\"sm__cycles_active.avg\"\n"
                 "    instrumented_sampling_config {\n"
                 "      activity_ranges { skip: 1 count: 3 } } } } }\n"),
            0);
  char *rows = ptp_rows(
      "ranges", "select count(*), count(distinct t.gpu_id) from counter c "
                "join gpu_counter_track t on c.track_id = t.id where t.name "
                "= 'sm__cycles_active.avg'");
  /* 3 values, from both GPUs (the demo alternates its kernels between
   * them, so a count of 3 per GPU would have given 6). */
  ASSERT_STR_EQ(rows, "3,2\n");
  free(rows);
}

/* A config whose per-activity counter values are those of the kernels
 * that skip 1, count 3 let through. */
static const char ranges_config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.counters\"\n"
    "  gpu_counter_config { counter_names: \"sm__cycles_active.avg\"\n"
    "    instrumented_sampling_config {\n"
    "      activity_ranges { skip: 1 count: 3 } } } } }\n";

/* Runs sim_app ARGS in the test's folder under `gpuperf record -c
 * NAME.cfg -o NAME.pftrace`, ranges_config in NAME.cfg (stderr to
 * NAME.err); returns the exit status. */
static int record(const char *name, const char *args) {
  char cfg[1200], cmd[4096];
  snprintf(cfg, sizeof(cfg), "%s/%s.cfg", gp_test_tmpdir(), name);
  wt_write_text(cfg, ranges_config);
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && '%s' record -q -c '%s.cfg' -o '%s.pftrace' -- '%s' %s "
           "2>'%s.err'",
           gp_test_tmpdir(), cli(), name, name,
           wt_build_path("tests/programs/sim_app"), args, name);
  return wt_system(cmd);
}

/* The per-activity values of trace NAME.pftrace, by our trace processor
 * and, where it is set, by Perfetto's (they must agree). */
static int64_t instrumented(const char *name) {
  static const char sql[] =
      "select count(*) from counter c join gpu_counter_track t on "
      "c.track_id = t.id where t.name = 'sm__cycles_active.avg'";
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s.pftrace", gp_test_tmpdir(), name);
  int64_t n = wt_tp_one(path, sql);
  const char *tp = getenv("GPUPERF_PERFETTO_TP");
  if (tp && *tp) {
    char *rows = ptp_rows(name, sql);
    ASSERT_EQ(strtoll(rows, NULL, 10), n);
    free(rows);
  }
  return n;
}

/* What skip 1, count 3 leave of the kernels trace NAME.pftrace holds
 * (render stage category 2, compute: Perfetto's own reading), counted
 * over the whole recording (*whole) and per process, added up
 * (*per_process); returns how many processes ran kernels. */
static size_t ranges_expected(const char *name, int64_t *whole,
                              int64_t *per_process) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s.pftrace", gp_test_tmpdir(), name);
  char *rows = wt_tp_rows(path, "select count(*) from gpu_slice where "
                                "render_stage_category = 2 group by upid");
  const int64_t skip = 1, count = 3;
  int64_t total = 0;
  size_t procs = 0;
  *per_process = 0;
  for (char *p = rows; *p; procs++) {
    char *end;
    int64_t k = strtoll(p, &end, 10);
    ASSERT(end != p && *end == '\n');
    total += k;
    *per_process += k > skip ? (k - skip < count ? k - skip : count) : 0;
    p = end + 1;
  }
  free(rows);
  *whole = total > skip ? (total - skip < count ? total - skip : count) : 0;
  return procs;
}

/* `count: 3` instruments 3 kernels in all across the processes of one
 * recording too: each process joins on its own (forked before its GPU
 * work, or exec'd), and they count in the index they share. */
TEST(config_activity_ranges_count_across_processes) {
  static const char *const args[] = {"--steps 2 --fork 1",
                                     "--steps 2 --fork 1 --exec"};
  for (size_t i = 0; i < 2; i++) {
    char name[32];
    snprintf(name, sizeof(name), "procs%zu", i);
    ASSERT_EQ(record(name, args[i]), 0);
    int64_t whole, per_process;
    ASSERT_EQ(ranges_expected(name, &whole, &per_process), 2);
    /* The figures tell the two rules apart (3 against 6). */
    ASSERT_NE(whole, per_process);
    ASSERT_EQ(instrumented(name), whole);
    ASSERT_EQ(whole, 3);
    /* Nothing of the shared index is left behind. */
    char ls[1400];
    snprintf(ls, sizeof(ls),
             "ls -d '%s/%s.pftrace'.parts-* 2>/dev/null | "
             "grep -q .",
             gp_test_tmpdir(), name);
    ASSERT_NE(wt_system(ls), 0);
  }
}

/* Where the shared index cannot be mapped (here a folder is in its
 * place), each process says so once and counts its own activities. */
TEST(config_activity_ranges_unshared_warns) {
  const char *tmp = gp_test_tmpdir();
  char dir[1200], cfg[1200], cmd[6000];
  snprintf(dir, sizeof(dir), "%s/solo.pftrace.parts-x", tmp);
  snprintf(cfg, sizeof(cfg), "%s/solo.cfg", tmp);
  wt_write_text(cfg, ranges_config);
  snprintf(cmd, sizeof(cmd),
           "mkdir -p '%s/activity_ranges' && cd '%s' && "
           "GPUPERF_RECORD_DIR='%s' GPUPERF_RECORD_CONFIG='%s' '%s' --steps 2 "
           "--fork 1 2>solo.err && '%s' record -q --recover '%s' -o "
           "solo.pftrace",
           dir, tmp, dir, cfg, wt_build_path("tests/programs/sim_app"), cli(),
           dir);
  ASSERT_EQ(wt_system(cmd), 0);
  char path[1300];
  snprintf(path, sizeof(path), "%s/solo.err", tmp);
  char *err = wt_read_text(path);
  ASSERT_EQ(count_lines(err, "\n"), 2);
  ASSERT_EQ(count_lines(err, "activity_ranges skip and count the activities "
                             "of this process alone"),
            2);
  free(err);
  int64_t whole, per_process;
  ASSERT_EQ(ranges_expected("solo", &whole, &per_process), 2);
  ASSERT_NE(whole, per_process);
  ASSERT_EQ(instrumented("solo"), per_process);
}

/* The counter_id fields of the specs of a trace's descriptors (inline and
 * interned), into ids; how many. */
static size_t spec_ids(const wt_trace *t, uint64_t *ids, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    const uint8_t *e, *d, *sp;
    size_t en, dn, sn;
    bool got = false;
    if (t->p[i].interned &&
        wt_sub(t->p[i].interned, t->p[i].interned_size,
               GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, 0, &e, &en))
      got = wt_sub(e, en, GP_PB_IGCD_DESCRIPTOR, 0, &d, &dn);
    else if (t->p[i].data_id == GP_PB_PACKET_GPU_COUNTER_EVENT)
      got = wt_sub(t->p[i].data, t->p[i].data_size,
                   GP_PB_GCE_COUNTER_DESCRIPTOR, 0, &d, &dn);
    for (size_t k = 0; got && wt_sub(d, dn, GP_PB_GCD_SPECS, k, &sp, &sn); k++)
      if (n < cap && wt_u64(sp, sn, GP_PB_SPEC_COUNTER_ID, &ids[n]))
        n++;
  }
  return n;
}

/* Descriptor mode 1: the ids in the trace are the ids of the config (and
 * of the catalog), not rewritten; Perfetto's importer makes one track per
 * counter of them. Two GPUs sampling the same id in mode 1 would share a
 * track in Perfetto: refused, with a message that says what to do. */
TEST(config_mode1_keeps_configured_ids) {
  ASSERT_EQ(demo("mode1", 1,
                 "data_sources { config { name: \"gpu.counters\"\n"
                 "  gpu_counter_config { counter_period_ns: 200000\n"
                 "    counter_ids: 1 counter_ids: 4 counter_ids: 10 } } }\n"
                 "gpuperf_options { counter_descriptor_mode: 1 }\n"),
            0);
  wt_trace t;
  char path[1200];
  snprintf(path, sizeof(path), "%s/mode1.pftrace", gp_test_tmpdir());
  wt_load(&t, path);
  uint64_t ids[64];
  size_t n = spec_ids(&t, ids, 64);
  size_t hits = 0;
  for (size_t i = 0; i < n; i++) {
    hits += ids[i] == 1 || ids[i] == 4 || ids[i] == 10;
    /* Anything else is an environment reading (temperature, power). */
    if (ids[i] != 1 && ids[i] != 4 && ids[i] != 10 && ids[i] < 0xfff00000u)
      gp_test_fail(__FILE__, __LINE__, "spec id %llu is not configured",
                   (unsigned long long)ids[i]);
  }
  ASSERT_EQ(hits, 3);
  wt_free(&t);
  char *rows = ptp_rows("mode1", "select name from gpu_counter_track where "
                                 "name in ('Utilization', "
                                 "'sm__cycles_active.avg', "
                                 "'dram__bytes_read.sum') order by name");
  ASSERT_STR_EQ(rows, "\"Utilization\"\n\"dram__bytes_read.sum\"\n"
                      "\"sm__cycles_active.avg\"\n");
  free(rows);

  /* The same on two GPUs: refused (exit status 2), said on stderr. */
  ASSERT_EQ(demo("mode1x2", 2,
                 "data_sources { config { name: \"gpu.counters\"\n"
                 "  gpu_counter_config { counter_ids: 4 } } }\n"
                 "gpuperf_options { counter_descriptor_mode: 1 }\n"),
            2);
  snprintf(path, sizeof(path), "%s/mode1x2.err", gp_test_tmpdir());
  size_t en = 0;
  char *err = (char *)wt_read_file(path, &en);
  err = realloc(err, en + 1);
  err[en] = '\0';
  if (!strstr(err, "counter_descriptor_mode 1: counter id 4 is sampled on") ||
      !strstr(err, "use mode 2"))
    gp_test_fail(__FILE__, __LINE__, "stderr: %s", err);
  free(err);
}

/* A counter sampled both ways (periodically and per kernel) is in the same
 * groups on both of its tracks, as Perfetto's importer reads them. */
TEST(config_both_samplings_same_groups) {
  ASSERT_EQ(demo("groups", 1,
                 "data_sources { config { name: \"gpu.counters\"\n"
                 "  gpu_counter_config { counter_period_ns: 200000\n"
                 "    counter_names: \"sm__cycles_active.avg\"\n"
                 "    instrumented_sampling: true } } }\n"),
            0);
  const char *q = "select group_concat(g, ' ') from (select g.group_id || "
                  "':' || ifnull(g.name, '') as g from gpu_counter_group g "
                  "join gpu_counter_track t on g.track_id = t.id where t.name "
                  "= '%s' order by 1)";
  char sql[1024];
  snprintf(sql, sizeof(sql), q, "sm__cycles_active.avg");
  char *periodic = ptp_rows("groups", sql);
  snprintf(sql, sizeof(sql), q, "sm__cycles_active.avg (per activity)");
  char *instr = ptp_rows("groups", sql);
  ASSERT_STR_EQ(periodic, instr);
  /* The catalog's groups (gpuperf list): Compute (6) and a custom one. */
  if (!strstr(periodic, "6:") || !strstr(periodic, "Compute Core"))
    gp_test_fail(__FILE__, __LINE__, "groups: %s", periodic);
  free(periodic);
  free(instr);
}

/* A suffix that names no device: one warning, and no device writes
 * counters, frequencies, temperatures or power. */
TEST(config_unmatched_suffix_warns_once) {
  ASSERT_EQ(demo("adreno", 2,
                 "data_sources { config { name: \"gpu.renderstages\" } }\n"
                 "data_sources { config { name: \"gpu.counters.adreno\" } }\n"),
            0);
  char path[1200];
  snprintf(path, sizeof(path), "%s/adreno.err", gp_test_tmpdir());
  size_t en = 0;
  char *err = (char *)wt_read_file(path, &en);
  err = realloc(err, en + 1);
  err[en] = '\0';
  ASSERT_EQ(count_lines(err, "warning"), 1);
  ASSERT_EQ(count_lines(err, "gpu.counters.adreno: no device's vendor is "
                             "'adreno'"),
            1);
  free(err);
  char *rows = ptp_rows("adreno", "select (select count(*) from "
                                  "gpu_counter_track) + (select count(*) "
                                  "from counter_track where name = "
                                  "'gpufreq'), (select count(*) from "
                                  "gpu_slice)");
  ASSERT(strncmp(rows, "0,", 2) == 0); /* nothing of the counters */
  ASSERT(strcmp(rows, "0,0\n") != 0);  /* the GPU work is there */
  free(rows);
}

/* gpu.renderstages.adreno names no device: one warning, and no device
 * writes GPU work; the counters, which no suffix limits, are there. */
TEST(config_unmatched_renderstages_suffix_warns_once) {
  ASSERT_EQ(demo("rsadreno", 2,
                 "data_sources { config { name: \"gpu.renderstages.adreno\" } "
                 "}\n"
                 "data_sources { config { name: \"gpu.counters\" } }\n"),
            0);
  char path[1200];
  snprintf(path, sizeof(path), "%s/rsadreno.err", gp_test_tmpdir());
  char *err = wt_read_text(path);
  ASSERT_EQ(count_lines(err, "warning"), 1);
  ASSERT_EQ(count_lines(err, "gpu.renderstages.adreno: no device's vendor "
                             "is 'adreno' ("),
            1);
  ASSERT_EQ(count_lines(err, "): it recorded no GPU work"), 1);
  free(err);
  snprintf(path, sizeof(path), "%s/rsadreno.pftrace", gp_test_tmpdir());
  ASSERT_EQ(wt_tp_one(path, "select count(*) from gpu_slice"), 0);
  ASSERT_GT(wt_tp_one(path, "select count(*) from gpu_counter_track"), 0);
  const char *tp = getenv("GPUPERF_PERFETTO_TP");
  if (tp && *tp) {
    char *rows = ptp_rows("rsadreno", "select (select count(*) from "
                                      "gpu_slice), (select count(*) > 0 from "
                                      "gpu_counter_track)");
    ASSERT_STR_EQ(rows, "0,1\n");
    free(rows);
  }
}

/* Runs n kernels "busy" on each of the simulated devices 0 .. ndev-1 in
 * a session of config text writing NAME.pftrace; returns the session's
 * warning (malloc'd, "" if none). */
static char *sim_session(const char *name, const char *text, uint32_t ndev,
                         unsigned n) {
  gp_trace_config *cfg;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(text, strlen(text), &cfg, err, sizeof(err)));
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.flags = GP_SESSION_DETERMINISTIC;
  o.error = err;
  o.error_size = sizeof(err);
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s.pftrace", gp_test_tmpdir(), name);
  gp_session *s;
  int rc = gp_session_start(cfg, path, &o, &s);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "start: %s: %s", gp_error_name(rc), err);
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "busy";
  d.flops_per_thread = 100;
  d.bytes_per_thread = 16;
  d.read_fraction = 0.5;
  gp_sim_kernel *k;
  ASSERT_OK(gp_sim_kernel_create(&d, &k));
  const gp_sim_dim3 grid = {64, 1, 1}, block = {64, 1, 1};
  for (uint32_t dev = 0; dev < ndev; dev++) {
    gp_sim_context *ctx;
    ASSERT_OK(gp_sim_context_create(dev, &ctx));
    for (unsigned i = 0; i < n; i++)
      ASSERT_OK(gp_sim_launch(gp_sim_default_stream(ctx), k, grid, block, 0));
    ASSERT_OK(gp_sim_context_synchronize(ctx));
    ASSERT_OK(gp_sim_context_destroy(ctx));
  }
  gp_sim_kernel_destroy(k);
  ASSERT_OK(gp_session_stop(s));
  const char *w = gp_session_warning(s);
  char *copy = strdup(w ? w : "");
  gp_session_destroy(s);
  gp_trace_config_destroy(cfg);
  return copy;
}

/* The kernels of a trace per GPU ("gpu,count" rows, by gpu), by our trace
 * processor and, where it is set, by Perfetto's (they must agree). */
static char *kernels_per_gpu(const char *name) {
  static const char sql[] =
      "select a.int_value, count(*) from gpu_slice s join gpu_track t on "
      "s.track_id = t.id join args a on a.arg_set_id = "
      "t.dimension_arg_set_id and a.key = 'gpu' where s.name = 'busy' "
      "group by 1 order by 1";
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s.pftrace", gp_test_tmpdir(), name);
  char *rows = wt_tp_rows(path, sql);
  for (char *p = rows; *p; p++)
    if (*p == '|')
      *p = ',';
  const char *tp = getenv("GPUPERF_PERFETTO_TP");
  if (tp && *tp) {
    char *theirs = ptp_rows(name, sql);
    ASSERT_STR_EQ(theirs, rows);
    free(theirs);
  }
  return rows;
}

/* gpu.renderstages.<vendor> as gpu.counters.<vendor>: only the devices
 * whose vendor it names write GPU work, and where a suffixed and a plain
 * data source both apply, each device's own says whether its work also
 * has stream slices (low_overhead). Device 0 is a simulated compute GPU
 * (vendor "gpuperf"), device 1 a simulated V3D ("Broadcom (simulated)"). */
TEST(config_renderstages_suffix_names_devices) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 2;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  sc.models[1] = GP_SIM_MODEL_V3D;
  ASSERT_OK(gp_sim_init(&sc));
  char *w = sim_session(
      "broadcom",
      "data_sources { config { name: \"gpu.renderstages.broadcom\" } }\n", 2,
      5);
  ASSERT_STR_EQ(w, ""); /* it named a device */
  free(w);
  char *rows = kernels_per_gpu("broadcom");
  ASSERT_STR_EQ(rows, "1,5\n");
  free(rows);

  w = sim_session("both",
                  "data_sources { config { name: \"gpu.renderstages\"\n"
                  "  gpu_renderstages_config { low_overhead: true } } }\n"
                  "data_sources { config { name: "
                  "\"gpu.renderstages.broadcom\" } }\n",
                  2, 5);
  ASSERT_STR_EQ(w, "");
  free(w);
  rows = kernels_per_gpu("both");
  ASSERT_STR_EQ(rows, "0,5\n1,5\n");
  free(rows);
  /* Stream slices (slices of the kernel outside the GPU tracks): the V3D's
   * only, whose data source is not low_overhead. */
  char path[1200];
  snprintf(path, sizeof(path), "%s/both.pftrace", gp_test_tmpdir());
  ASSERT_EQ(wt_tp_one(path, "select count(*) from slice where name = "
                            "'busy' and track_id not in (select id from "
                            "gpu_track)"),
            5);
}

/* The suffix is matched on the vendor (a DRM card's is its driver's name)
 * alone, a whole word of it, ignoring case. */
TEST(config_vendor_suffix_rule) {
  gp_device_info di;
  memset(&di, 0, sizeof(di));
  di.name = "Adreno 740 (nvidia in its name)";
  di.vendor = "NVIDIA Corporation";
  di.model = "v3d";
  di.architecture = "amd";
  ASSERT(gp__vendor_suffix_matches("nvidia", &di));
  ASSERT(gp__vendor_suffix_matches("Corporation", &di));
  ASSERT(gp__vendor_suffix_matches("gpuperf", &di)); /* gpuperf's own */
  ASSERT(!gp__vendor_suffix_matches("nvid", &di));
  ASSERT(!gp__vendor_suffix_matches("adreno", &di)); /* the name */
  ASSERT(!gp__vendor_suffix_matches("v3d", &di));    /* the model */
  ASSERT(!gp__vendor_suffix_matches("amd", &di));    /* the architecture */
  di.vendor = "v3d"; /* a DRM card: its driver */
  ASSERT(gp__vendor_suffix_matches("V3D", &di));
  di.vendor = "Broadcom (simulated)";
  ASSERT(gp__vendor_suffix_matches("broadcom", &di));
  ASSERT(gp__vendor_suffix_matches("simulated", &di));
  ASSERT(!gp__vendor_suffix_matches("sim", &di));
  di.vendor = NULL;
  ASSERT(!gp__vendor_suffix_matches("x", &di));
}
