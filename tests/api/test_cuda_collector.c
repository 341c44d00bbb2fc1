/*
 * test_cuda_collector.c - the CUDA collector as a whole, where there is
 * no GPU: libgpuperf-cuda.so loads into a program without CUDA and says
 * "no CUDA device" cleanly, whether it is injected (InitializeInjection)
 * or started (gp_cuda_start), with no driver at all or with the
 * toolkit's link stub in the driver's place; the metric catalogs of the
 * Profiler Host API, offline; `gpuperf cuda` and the note in `gpuperf
 * list`; the device check script, up to where it needs a GPU.
 *
 * The probes run as separate programs (build/tests/cuda-probe), never in
 * the test process: some CUPTI calls crash without a driver.
 *
 * Without the CUDA toolkit at build time every test here skips. Where a
 * real driver is installed, the no-device tests skip too (they would be
 * testing a GPU machine's behaviour).
 */
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#ifdef GP_HAVE_CUDA

#include "cudaInt.h"
#include "gpuperf/session.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif

/* Under AddressSanitizer the Profiler Host API is refused (libcupti
 * loads libnvperf_host.so with RTLD_DEEPBIND): check the refusal, then
 * skip what needs it. */
static void skip_if_asan(void) {
#ifdef ASAN_BUILD
  size_t n = 0;
  ASSERT_ERR(gp_cuda_chips(&n, NULL), GP_ENOTSUP);
  ASSERT(strstr(gp_cuda_status(), "AddressSanitizer"));
  gp_cuda_metrics *m = NULL;
  ASSERT_ERR(gp_cuda_metrics_open("GH100", GP_CUDA_PROFILER_RANGE, &m),
             GP_ENOTSUP);
  SKIP("the Profiler Host API is refused in AddressSanitizer builds "
       "(libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND)");
#endif
}

static const char *env_or_skip(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v)
    SKIP("%s is not set (run through `make test`)", name);
  return v;
}

static void skip_if_driver(void) {
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h)
    h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (h)
    SKIP("a CUDA driver (libcuda.so.1) is installed here: the no-device "
         "paths are not what this machine does");
}

/* Runs a shell command; captures stdout+stderr into out; returns the exit
 * status (-1 if it did not exit). */
static int run(const char *cmd, char *out, size_t size) {
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  size_t n = fread(out, 1, size - 1, p);
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int probe(const char *env, const char *mode, char *out, size_t size) {
  const char *build = env_or_skip("GPUPERF_BUILD");
  char cmd[2048];
  snprintf(cmd, sizeof(cmd),
           "%s '%s/tests/cuda-probe' '%s/libgpuperf-cuda.so' %s 2>&1", env,
           build, build, mode);
  return run(cmd, out, size);
}

TEST(cuda_collector_loads_without_cuda) {
  skip_if_driver();
  char out[4096];
  /* As the driver would load it: it says why and does not fail the
   * program's CUDA initialisation (returns 1). */
  ASSERT_EQ(probe("", "inject", out, sizeof(out)), 0);
  ASSERT(strstr(out, "inject: 1\n"));
  ASSERT(strstr(out, "gpuperf-cuda: no CUDA device: the CUDA driver "
                     "(libcuda.so.1) is not loaded in this process"));
  /* As a program linking it would start it. */
  ASSERT_EQ(probe("", "start", out, sizeof(out)), 3);
  ASSERT(strstr(out, "start: GP_ENODEV\n"));
  ASSERT(strstr(out, "status: no CUDA device: the CUDA driver (libcuda.so.1) "
                     "cannot be loaded"));
  /* Nothing printed on its own: only the status line. */
  ASSERT(!strstr(out, "gpuperf-cuda:"));
  /* As NVTX would load it: handed over to libcupti's entry point. */
  ASSERT_EQ(probe("", "nvtx", out, sizeof(out)), 0);
  ASSERT(strstr(out, "nvtx: 1\n"));
  ASSERT(!strstr(out, "gpuperf-cuda:"));
}

TEST(cuda_record_injects_the_collector) {
  const char *cli = env_or_skip("GPUPERF_CLI");
  const char *build = env_or_skip("GPUPERF_BUILD");
  char cmd[2048], out[1 << 16], want[1200];
  snprintf(cmd, sizeof(cmd),
           "env -u CUDA_INJECTION64_PATH -u NVTX_INJECTION64_PATH "
           "'%s' record -q -o '%s' -- env 2>&1",
           cli, gp_test_path(0, "env.pftrace"));
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  char lib[1024];
  ASSERT(realpath(build, lib) != NULL);
  snprintf(want, sizeof(want), "CUDA_INJECTION64_PATH=%s/libgpuperf-cuda.so\n",
           lib);
  ASSERT(strstr(out, want));
  snprintf(want, sizeof(want), "NVTX_INJECTION64_PATH=%s/libgpuperf-cuda.so\n",
           lib);
  ASSERT(strstr(out, want));
  /* The user's own choice stays. */
  snprintf(cmd, sizeof(cmd),
           "CUDA_INJECTION64_PATH=/opt/other.so NVTX_INJECTION64_PATH= "
           "'%s' record -q -o '%s' -- env 2>&1",
           cli, gp_test_path(0, "env.pftrace"));
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(strstr(out, "CUDA_INJECTION64_PATH=/opt/other.so\n"));
  ASSERT(!strstr(out, "NVTX_INJECTION64_PATH=/"));
}

TEST(cuda_collector_with_the_driver_stub) {
  skip_if_driver();
  const char *home = getenv("CUDA_HOME");
  char stub[1024];
  snprintf(stub, sizeof(stub), "%s/lib64/stubs/libcuda.so",
           home && *home ? home : "/usr/local/cuda");
  if (access(stub, R_OK) != 0)
    SKIP("no driver stub at %s", stub);
  /* The stub, named as the driver: loadable, but no driver behind it. */
  ASSERT_EQ(symlink(stub, gp_test_path(0, "libcuda.so.1")), 0);
  char env[1100], out[4096];
  snprintf(env, sizeof(env), "LD_LIBRARY_PATH='%s'", gp_test_tmpdir());
  ASSERT_EQ(probe(env, "start", out, sizeof(out)), 3);
  ASSERT(strstr(out, "start: GP_ENODEV\n"));
  ASSERT(strstr(out, "no CUDA device: cuInit failed with "
                     "CUDA_ERROR_STUB_LIBRARY (34)"));
  /* Injected into a process that has the stub loaded: CUPTI refuses. */
  ASSERT_EQ(probe(env, "inject-driver", out, sizeof(out)), 0);
  ASSERT(strstr(out, "inject: 1\n"));
  ASSERT(strstr(out, "gpuperf-cuda: no CUDA device: cuptiSubscribe failed"));
}

TEST(cuda_metric_catalogs_offline) {
  skip_if_asan();
  size_t n = 0;
  const char *const *chips = NULL;
  ASSERT_OK(gp_cuda_chips(&n, &chips));
  ASSERT_GE(n, 10);
  bool gh100 = false;
  for (size_t i = 0; i < n; i++)
    gh100 |= strcmp(chips[i], "GH100") == 0;
  ASSERT(gh100);
  ASSERT_ERR(gp_cuda_chips(NULL, NULL), GP_EINVAL);

  gp_cuda_metrics *m = NULL;
  ASSERT_ERR(gp_cuda_metrics_open("NOPE", GP_CUDA_PROFILER_RANGE, &m),
             GP_ENODEV);
  ASSERT(m == NULL);
  ASSERT_ERR(gp_cuda_metrics_open("GH100", 7, &m), GP_EINVAL);
  ASSERT_OK(gp_cuda_metrics_open("GH100", GP_CUDA_PROFILER_RANGE, &m));
  size_t count = gp_cuda_metrics_count(m);
  ASSERT_GT(count, 3000);
  /* Sorted by name, each with its type. */
  gp_cuda_metric_info a, b;
  ASSERT_OK(gp_cuda_metrics_get(m, 0, &a));
  for (size_t i = 1; i < count; i += count / 50) {
    ASSERT_OK(gp_cuda_metrics_get(m, i, &b));
    ASSERT_LT(strcmp(a.name, b.name), 0);
    ASSERT_LE(b.type, GP_CUDA_METRIC_THROUGHPUT);
    a = b;
  }
  ASSERT_ERR(gp_cuda_metrics_get(m, count, &a), GP_ENOENT);

  gp_cuda_metric_info mi;
  ASSERT_OK(gp_cuda_metrics_find(m, "sm__cycles_elapsed", &mi));
  ASSERT_STR_EQ(mi.name, "sm__cycles_elapsed");
  ASSERT_STR_EQ(mi.description, "# of cycles elapsed on SM");
  ASSERT_STR_EQ(mi.hw_unit, "sm");
  ASSERT_STR_EQ(mi.dim_unit, "gpc_cycle");
  ASSERT_EQ(mi.type, GP_CUDA_METRIC_COUNTER);
  /* A full name finds its base. */
  ASSERT_OK(gp_cuda_metrics_find(m, "sm__cycles_elapsed.avg.per_second", &mi));
  ASSERT_STR_EQ(mi.name, "sm__cycles_elapsed");
  ASSERT_OK(gp_cuda_metrics_find(m, "sm__throughput", &mi));
  ASSERT_EQ(mi.type, GP_CUDA_METRIC_THROUGHPUT);
  ASSERT_ERR(gp_cuda_metrics_find(m, "no__such_metric.sum", &mi),
             GP_ENOCOUNTER);

  const char *const *subs = NULL;
  size_t ns = 0;
  ASSERT_OK(gp_cuda_metrics_submetrics(m, "sm__cycles_elapsed", &subs, &ns));
  ASSERT_GT(ns, 10);
  bool max = false;
  for (size_t i = 0; i < ns; i++)
    max |= strcmp(subs[i], ".max") == 0;
  ASSERT(max);
  ASSERT_ERR(
      gp_cuda_metrics_submetrics(m, "sm__cycles_elapsed.max", &subs, &ns),
      GP_ENOCOUNTER);

  /* Plans: what can be collected together, in how many passes. */
  const char *good[] = {"gpu__time_duration.sum", "sm__cycles_elapsed.max"};
  size_t passes = 0, bad = 77;
  ASSERT_OK(gp_cuda_metrics_plan(m, good, 2, &passes, &bad));
  ASSERT_GE(passes, 1);
  ASSERT_EQ(bad, 77);
  const char *one[] = {"gpu__time_duration.sum"};
  size_t p1 = 0;
  ASSERT_OK(gp_cuda_metrics_plan(m, one, 1, &p1, NULL));
  ASSERT_EQ(p1, 1);
  const char *wrong[] = {"gpu__time_duration.sum", "sm__cycles_elapsed",
                         "dram__bytes_read.sum"};
  passes = 99;
  ASSERT_ERR(gp_cuda_metrics_plan(m, wrong, 3, &passes, &bad), GP_ENOCOUNTER);
  ASSERT_EQ(bad, 1); /* a base name needs a rollup */
  ASSERT_EQ(passes, 99);
  ASSERT_ERR(gp_cuda_metrics_plan(m, wrong, 0, &passes, &bad), GP_EINVAL);
  gp_cuda_metrics_close(m);
  gp_cuda_metrics_close(NULL);

  /* PM sampling has a catalog of its own, and no replay. */
  ASSERT_OK(gp_cuda_metrics_open("GH100", GP_CUDA_PROFILER_PM_SAMPLING, &m));
  ASSERT_GT(gp_cuda_metrics_count(m), 500);
  ASSERT_OK(gp_cuda_metrics_plan(m, good, 2, &passes, NULL));
  ASSERT_EQ(passes, 1);
  gp_cuda_metrics_close(m);

  /* The configuration image the range profiler would be given. */
  gp__cuda_host *h = NULL;
  ASSERT_OK(gp__cuda_host_open("GA100", GP_CUDA_PROFILER_RANGE, NULL, good, 2,
                               &h, NULL));
  size_t size = 0;
  const uint8_t *img = gp__cuda_host_config(h, &size, &passes);
  ASSERT_NOT_NULL(img);
  ASSERT_GT(size, 100);
  size_t nn = 0;
  const char *const *names = gp__cuda_host_names(h, &nn);
  ASSERT_EQ(nn, 2);
  ASSERT_STR_EQ(names[1], "sm__cycles_elapsed.max");
  gp__cuda_host_close(h);
}

static void no_emit(void *user, uint32_t dev, size_t metric, double value,
                    uint64_t ts, uint64_t window_start, uint64_t corr) {
  (void)user, (void)dev, (void)metric, (void)value, (void)ts;
  (void)window_start, (void)corr;
}

TEST(cuda_sampling_configuration) {
  /* What can be checked without a GPU: validation, one configuration per
   * device, stop and restart, a PM setup that fails leaves nothing. */
  const char *two[] = {"gpu__time_duration.sum", "sm__cycles_elapsed.max"};
  gp__cuda_sampling c = {
      .metrics = two, .num_metrics = 2, .instrumented = true, .emit = no_emit};
  ASSERT_ERR(gp__cuda_sampling_start(0, NULL), GP_EINVAL);
  ASSERT_ERR(gp__cuda_sampling_start(64, &c), GP_EINVAL);
  gp__cuda_sampling bad = c;
  bad.emit = NULL;
  ASSERT_ERR(gp__cuda_sampling_start(0, &bad), GP_EINVAL);
  bad = c;
  bad.num_metrics = 0;
  ASSERT_ERR(gp__cuda_sampling_start(0, &bad), GP_EINVAL);
  bad = c;
  bad.instrumented = false;
  ASSERT_ERR(gp__cuda_sampling_start(0, &bad), GP_EINVAL);
  const char *empty[] = {"gpu__time_duration.sum", ""};
  bad = c;
  bad.metrics = empty;
  ASSERT_ERR(gp__cuda_sampling_start(0, &bad), GP_EINVAL);
  const char *many[65];
  for (int i = 0; i < 65; i++)
    many[i] = "gpu__time_duration.sum";
  bad = c;
  bad.metrics = many;
  bad.num_metrics = 65;
  ASSERT_ERR(gp__cuda_sampling_start(0, &bad), GP_ECAPACITY);

  ASSERT_OK(gp__cuda_sampling_start(0, &c));
  ASSERT_ERR(gp__cuda_sampling_start(0, &c), GP_EBUSY);
  ASSERT_OK(gp__cuda_sampling_start(1, &c)); /* another device */
  gp__cuda_sampling_stop(0);
  gp__cuda_sampling_stop(0); /* twice: nothing */
  ASSERT_OK(gp__cuda_sampling_start(0, &c));
  gp__cuda_sampling_stop(0);
  gp__cuda_sampling_stop(1);

  /* PM sampling needs the device: without a driver CUPTI refuses, and
   * the device is left free. */
  skip_if_driver();
  gp__cuda_sampling pm = {
      .metrics = two, .num_metrics = 2, .period_ns = 1000000, .emit = no_emit};
  int rc = gp__cuda_sampling_start(2, &pm);
  ASSERT_NE(rc, 0);
#ifdef ASAN_BUILD
  ASSERT_EQ(rc, GP_ENOTSUP);
  ASSERT(strstr(gp_cuda_status(), "AddressSanitizer"));
#else
  ASSERT(strstr(gp_cuda_status(), "cuptiPmSamplingGetCounterAvailability"));
#endif
  ASSERT_OK(gp__cuda_sampling_start(2, &c));
  gp__cuda_sampling_stop(2);
}

TEST(cuda_devices_publish_counter_catalogs) {
  /* A device described by CUPTI, as if present; its chip's catalog. */
  CUpti_ActivityDevice5 d;
  memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H100";
  d.computeCapabilityMajor = 9;
  ASSERT_OK(gp__cuda_translate((const CUpti_Activity *)&d));
  uint32_t dev = gp__cuda_device(0);
#ifdef ASAN_BUILD
  ASSERT_ERR(gp__cuda_provider_publish(dev, 0, "GH100"), GP_ENOTSUP);
  SKIP("the Profiler Host API is refused in AddressSanitizer builds");
#endif
  ASSERT_ERR(gp__cuda_provider_publish(dev, 0, "NOPE"), GP_ENODEV);
  ASSERT_OK(gp__cuda_provider_publish(dev, 0, "GH100"));
  ASSERT_ERR(gp__cuda_provider_publish(dev, 0, "GH100"), GP_EEXIST);

  gp_counter_catalog_info ci;
  ASSERT_OK(gp_counter_catalog(dev, &ci));
  ASSERT_GT(ci.num_counters, 3000);
  ASSERT_EQ(ci.num_blocks, 1);
  ASSERT_EQ(ci.max_active, 64);
  ASSERT_EQ(ci.supports_instrumented, 1);
  ASSERT_GT(ci.max_sampling_period_ns, ci.min_sampling_period_ns);

  const char *names[] = {"dram__bytes_read.sum",
                         "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                         "gpu__time_duration.sum"};
  uint32_t ids[8];
  size_t n = 0;
  ASSERT_OK(gp_counter_select(dev, names, 3, ids, 8, &n));
  ASSERT_EQ(n, 3);
  /* In catalog (name) order. */
  gp_counter_info info;
  ASSERT_OK(gp_counter_lookup(dev, ids[0], &info));
  ASSERT_STR_EQ(info.name, "dram__bytes_read.sum");
  ASSERT_STR_EQ(info.description, "# of bytes read from DRAM");
  ASSERT_STR_EQ(info.category, "dram");
  ASSERT_EQ(info.type, GP_COUNTER_TYPE_INT64);
  ASSERT_EQ(info.num_numerator_units, 1);
  ASSERT_EQ(info.numerator_units[0], GP_UNIT_BYTE);
  ASSERT_EQ(info.groups[0], GP_COUNTER_GROUP_MEMORY);
  ASSERT_OK(gp_counter_lookup(dev, ids[1], &info));
  ASSERT_STR_EQ(info.name, "gpu__time_duration.sum");
  ASSERT_EQ(info.numerator_units[0], GP_UNIT_NANOSECOND);
  ASSERT_OK(gp_counter_lookup(dev, ids[2], &info));
  ASSERT_STR_EQ(info.name, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  ASSERT_EQ(info.type, GP_COUNTER_TYPE_PERCENT);
  ASSERT_EQ(info.groups[0], GP_COUNTER_GROUP_COMPUTE);
  const char *glob[] = {"dram__bytes_*"};
  ASSERT_OK(gp_counter_select(dev, glob, 1, ids, 8, &n));
  ASSERT_EQ(n, 2); /* dram__bytes_read.sum, dram__bytes_write.sum */
  const char *unknown[] = {"sm__cycles_elapsed.max"}; /* not the rollup */
  ASSERT_ERR(gp_counter_select(dev, unknown, 1, ids, 8, &n), GP_ENOCOUNTER);

  /* The list shows them. */
  FILE *f = fopen(gp_test_path(0, "list.txt"), "w+");
  ASSERT_NOT_NULL(f);
  ASSERT_OK(gp_device_list_print(f, dev, 0));
  rewind(f);
  static char text[1 << 22];
  size_t len = fread(text, 1, sizeof(text) - 1, f);
  text[len] = '\0';
  fclose(f);
  ASSERT(strstr(text, "NVIDIA H100"));
  ASSERT(strstr(text, "dram__bytes_read.sum"));

  /* Sampling through the counters API lands on the device's one
   * configuration: busy for anything else until stopped. */
  gp_counter_config cfg;
  memset(&cfg, 0, sizeof(cfg));
  cfg.counter_names = names;
  cfg.num_counter_names = 3;
  cfg.instrumented = 1;
  ASSERT_OK(gp_counters_start(dev, &cfg));
  const char *one[] = {"gpu__time_duration.sum"};
  gp__cuda_sampling mine = {
      .metrics = one, .num_metrics = 1, .instrumented = true, .emit = no_emit};
  ASSERT_ERR(gp__cuda_sampling_start(0, &mine), GP_EBUSY);
  ASSERT_OK(gp_counters_stop(dev));
  ASSERT_OK(gp__cuda_sampling_start(0, &mine));
  gp__cuda_sampling_stop(0);

  /* Periodic sampling needs the device itself: refused here, and
   * nothing is left started. */
  skip_if_driver();
  cfg.instrumented = 0;
  cfg.counter_period_ns = 1000000;
  ASSERT_NE(gp_counters_start(dev, &cfg), 0);
  ASSERT_ERR(gp_counters_stop(dev), GP_ESTATE);
  ASSERT_OK(gp__cuda_sampling_start(0, &mine));
  gp__cuda_sampling_stop(0);
}

TEST(cuda_counter_environment_is_checked) {
  ASSERT_OK(gp__cuda_profiler_start()); /* none set */
  gp__cuda_profiler_stop();
  setenv("GPUPERF_CUDA_PM_METRICS", "sm__cycles_elapsed.max", 1);
  setenv("GPUPERF_CUDA_PM_PERIOD_NS", "5", 1);
  ASSERT_ERR(gp__cuda_profiler_start(), GP_ENOTSUP);
  ASSERT(strstr(gp_cuda_status(), "GPUPERF_CUDA_PM_PERIOD_NS 1000"));
  setenv("GPUPERF_CUDA_PM_PERIOD_NS", "20000", 1);
  char list[65 * 8 + 1] = "";
  for (int i = 0; i < 65; i++)
    strcat(list, "a.sum,");
  setenv("GPUPERF_CUDA_METRICS", list, 1);
  ASSERT_ERR(gp__cuda_profiler_start(), GP_ENOTSUP);
  setenv("GPUPERF_CUDA_METRICS", " gpu__time_duration.sum,,", 1);
  ASSERT_OK(gp__cuda_profiler_start());
  gp__cuda_profiler_stop();
}

TEST(cuda_cli_lists_metrics_without_a_gpu) {
  const char *cli = env_or_skip("GPUPERF_CLI");
  skip_if_asan();
  char cmd[1024], out[1 << 16];
  snprintf(cmd, sizeof(cmd), "'%s' cuda --chip GH100 'dram__bytes_*' 2>&1",
           cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(strstr(out, "dram__bytes_read "));
  ASSERT(strstr(out, "# of bytes read from DRAM"));
  ASSERT(strstr(out, "of GH100"));
  snprintf(cmd, sizeof(cmd),
           "'%s' cuda --chip GH100 --json sm__cycles_elapsed 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(strstr(out,
                "{\"name\": \"sm__cycles_elapsed\", \"type\": \"counter\", "
                "\"hw_unit\": \"sm\", \"dim_unit\": \"gpc_cycle\""));
  snprintf(cmd, sizeof(cmd),
           "'%s' cuda --chip GH100 --check gpu__time_duration.sum 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(strstr(out, "1 metrics, 1 pass on GH100"));
  snprintf(cmd, sizeof(cmd),
           "'%s' cuda --chip GH100 --check gpu__time_duration.sum,bogus 2>&1",
           cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 2);
  ASSERT(strstr(out, "cannot collect 'bogus'"));
  snprintf(cmd, sizeof(cmd), "'%s' cuda --chip XY999 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 2);
  ASSERT(strstr(out, "unknown chip 'XY999'"));
  ASSERT(strstr(out, "GH100"));
  snprintf(cmd, sizeof(cmd), "'%s' cuda --check x 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 1);
  snprintf(cmd, sizeof(cmd), "'%s' cuda --chips 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(strstr(out, "GH100\n"));
}

TEST(cuda_cli_says_no_cuda_device) {
  skip_if_driver();
  const char *cli = env_or_skip("GPUPERF_CLI");
  char cmd[1024], out[1 << 16];
  snprintf(cmd, sizeof(cmd), "'%s' cuda 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 2);
  ASSERT(strstr(out, "gpuperf: no CUDA device: "));
  /* `gpuperf list` shows CUDA devices only where there are some. */
  snprintf(cmd, sizeof(cmd), "'%s' list 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(!strstr(out, "CUDA"));
  /* --json stays one JSON document. */
  snprintf(cmd, sizeof(cmd), "'%s' list --json 2>&1", cli);
  ASSERT_EQ(run(cmd, out, sizeof(out)), 0);
  ASSERT(!strstr(out, "CUDA:"));
}

/* The device check's config file name (under the test's folder), read
 * into text (size bytes) and parsed. */
static gp_trace_config *check_config(const char *name, char *text,
                                     size_t size) {
  FILE *f = fopen(gp_test_path(0, name), "r");
  ASSERT_NOT_NULL(f);
  size_t n = fread(text, 1, size - 1, f);
  fclose(f);
  text[n] = '\0';
  gp_trace_config *cfg = NULL;
  char err[256] = "";
  ASSERT_OK(gp_trace_config_parse(text, n, &cfg, err, sizeof(err)));
  return cfg;
}

TEST(cuda_device_check_script_without_a_gpu) {
  skip_if_driver();
  const char *build = env_or_skip("GPUPERF_BUILD");
  const char *home = getenv("CUDA_HOME");
  char nvcc[1024];
  snprintf(nvcc, sizeof(nvcc), "%s/bin/nvcc",
           home && *home ? home : "/usr/local/cuda");
  if (access(nvcc, X_OK) != 0)
    SKIP("no nvcc at %s", nvcc);
  char cmd[4096], out[1 << 16];
  /* Run from the repository root (the test runs there under make). */
  snprintf(
      cmd, sizeof(cmd),
      "GPUPERF_CHECK_DIR='%s/check' scripts/device-check-cuda.sh '%s' 2>&1",
      gp_test_tmpdir(), build);
  if (access("scripts/device-check-cuda.sh", X_OK) != 0)
    SKIP("not run from the repository root");
  ASSERT_EQ(run(cmd, out, sizeof(out)), 77);
  ASSERT(strstr(out, "device-check-cuda: building the sample with "));
  ASSERT(strstr(out, "device-check-cuda: SKIP: no CUDA device: "));
  /* The configs it would record with are ones gpuperf accepts: GPU work
   * (and the code loaded); GPU work and its default counters per kernel. */
  char text[2048];
  gp_trace_config *cfg = check_config("check/config.pbtxt", text, sizeof(text));
  ASSERT(strstr(text, "code_objects: true"));
  ASSERT(strstr(text, "source_level: true"));
  gp_data_source_info tds;
  ASSERT_OK(gp_trace_config_get_data_source(cfg, 0, &tds));
  ASSERT_EQ(tds.kind, GP_DATA_SOURCE_GPU_RENDERSTAGES);
  ASSERT_ERR(gp_trace_config_get_data_source(cfg, 1, &tds), GP_ENOENT);
  gp_trace_config_destroy(cfg);
  cfg = check_config("check/config-counters.pbtxt", text, sizeof(text));
  gp_data_source_info ds;
  ASSERT_OK(gp_trace_config_get_data_source(cfg, 0, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_RENDERSTAGES);
  ASSERT_OK(gp_trace_config_get_data_source(cfg, 1, &ds));
  ASSERT_EQ(ds.kind, GP_DATA_SOURCE_GPU_COUNTERS);
  ASSERT_EQ(ds.counters.instrumented, 1);
  ASSERT_EQ(ds.counters.num_counter_names, 2);
  ASSERT_STR_EQ(ds.counters.counter_names[0], "gpu__time_duration.sum");
  ASSERT_STR_EQ(ds.counters.counter_names[1], "sm__cycles_elapsed.sum");
  gp_trace_config_destroy(cfg);
  /* The sample was really built, and it says the same when run. */
  struct stat st;
  ASSERT_EQ(stat(gp_test_path(0, "check/sample"), &st), 0);
  ASSERT(st.st_mode & S_IXUSR);
  snprintf(cmd, sizeof(cmd), "'%s' 2 2>&1", gp_test_path(0, "check/sample"));
  ASSERT_EQ(run(cmd, out, sizeof(out)), 77);
  ASSERT(strstr(out, "sample: no CUDA device: "));
  /* Usage errors of the script. */
  snprintf(cmd, sizeof(cmd), "scripts/device-check-cuda.sh /nonexistent 2>&1");
  ASSERT_EQ(run(cmd, out, sizeof(out)), 2);
  ASSERT(strstr(out, "build first"));
}

#else /* !GP_HAVE_CUDA */

#define NO_CUDA(name)                                                          \
  TEST(name) {                                                                 \
    SKIP("the CUDA toolkit (cupti.h, cuda.h, libcupti.so) was not found at "   \
         "build time; see mk/cuda.mk (CUDA_HOME)");                            \
  }
NO_CUDA(cuda_collector_loads_without_cuda)
NO_CUDA(cuda_collector_with_the_driver_stub)
NO_CUDA(cuda_record_injects_the_collector)
NO_CUDA(cuda_metric_catalogs_offline)
NO_CUDA(cuda_sampling_configuration)
NO_CUDA(cuda_counter_environment_is_checked)
NO_CUDA(cuda_devices_publish_counter_catalogs)
NO_CUDA(cuda_cli_lists_metrics_without_a_gpu)
NO_CUDA(cuda_cli_says_no_cuda_device)
NO_CUDA(cuda_device_check_script_without_a_gpu)

#endif
