/*
 * test_tracefs_real.c - a real program recorded with a linux.ftrace data
 * source asking for the dma_fence events: vkcube on lavapipe under Xvfb,
 * as root with tracefs mounted. The truth it is held to is a tracefs
 * instance of the test's own, with the same events enabled over a window
 * that holds the recording's: the trace has at most the fence events that
 * instance saw (Perfetto's ftrace_event table counts them), and none where
 * it saw none. Lavapipe renders on the CPU and Xvfb has no DRM device, so
 * on such a machine no fence is made and both counts are 0; the test says
 * what it saw.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"
#include "vkutil.h"

#if HAVE_TP
#include "tp/tputil.h"

static const char *const fence_events[] = {
    "dma_fence_init", "dma_fence_emit", "dma_fence_signaled",
    "dma_fence_wait_start", "dma_fence_wait_end"};
#define NFENCE (sizeof(fence_events) / sizeof(fence_events[0]))

static void write_file(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  if (!f)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, strerror(errno));
  fputs(s, f);
  fclose(f);
}

/* The lines of the instance's trace naming a Perfetto dma_fence event. */
static long count_fence_lines(const char *text) {
  long n = 0;
  for (const char *l = text; l && *l;) {
    const char *end = strchr(l, '\n');
    if (*l != '#')
      for (size_t i = 0; i < NFENCE; i++) {
        char key[64];
        snprintf(key, sizeof(key), " %s: ", fence_events[i]);
        const char *at = strstr(l, key);
        if (at && (!end || at < end)) {
          n++;
          break;
        }
      }
    l = end ? end + 1 : NULL;
  }
  return n;
}

TEST(tracefs_real_vulkan_dma_fence) {
  vk_env();
  vk_need_vkcube();
  const char *cli = vk_cli_path(false);
  if (geteuid() != 0)
    SKIP("reading tracefs takes root");
  const char *root = "/sys/kernel/tracing";
  char path[512];
  snprintf(path, sizeof(path), "%s/events/dma_fence/dma_fence_init", root);
  if (access(path, F_OK) != 0)
    SKIP("no tracefs with the dma_fence events at %s", root);
  /* The test's own instance: the same events, the boot clock. */
  char inst[256];
  snprintf(inst, sizeof(inst), "%s/instances/gpuperf-test-%d", root,
           (int)getpid());
  if (mkdir(inst, 0700) != 0)
    SKIP("cannot make a tracefs instance: %s", strerror(errno));
  snprintf(path, sizeof(path), "%s/trace_clock", inst);
  write_file(path, "boot");
  for (size_t i = 0; i < NFENCE; i++) {
    snprintf(path, sizeof(path), "%s/events/dma_fence/%s/enable", inst,
             fence_events[i]);
    write_file(path, "1");
  }
  char trace[512], cfg[600];
  snprintf(trace, sizeof(trace), "%s", gp_test_path(0, "fences.pftrace"));
  snprintf(cfg, sizeof(cfg), "%s.config", trace);
  write_file(cfg, "data_sources { config { name: \"gpu.renderstages\" } }\n"
                  "data_sources { config { name: \"linux.ftrace\" "
                  "ftrace_config { ftrace_events: \"dma_fence/*\" } } }\n");
  char *argv[] = {"/usr/bin/xvfb-run",
                  "-a",
                  (char *)cli,
                  "record",
                  "-q",
                  "-o",
                  trace,
                  "-c",
                  cfg,
                  "--",
                  "vkcube",
                  "--c",
                  "60",
                  NULL};
  char *env[] = {"GPUPERF_TRACEFS=", NULL}; /* the config alone */
  char *err = NULL;
  int rc = ocl_run(argv, env, 240, NULL, &err);
  /* The instance's events (read, not consumed), then it goes. */
  snprintf(path, sizeof(path), "%s/trace", inst);
  char *text = tp_read_file(path, NULL);
  for (size_t i = 0; i < NFENCE; i++) {
    snprintf(path, sizeof(path), "%s/events/dma_fence/%s/enable", inst,
             fence_events[i]);
    write_file(path, "0");
  }
  rmdir(inst);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "xvfb-run gpuperf record vkcube: %d\n%s",
                 rc, err ? err : "");
  if (err && strstr(err, "linux.ftrace"))
    gp_test_fail(__FILE__, __LINE__, "tracefs was not read:\n%s", err);
  free(err);
  long seen = count_fence_lines(text);
  free(text);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);
  Q_EQ(tp, "SELECT count(*) FROM gpu_slice WHERE name = 'Render pass'", 60);
  int64_t slices = tp_int(tp, "SELECT count(*) FROM slice WHERE name IN "
                              "('fence', 'dma_fence_wait')");
  gp_tp_close(tp);
  printf("  dma_fence events while vkcube ran: %ld (the test's instance); "
         "fence and wait slices in the trace: %lld\n",
         seen, (long long)slices);
  if (seen == 0)
    ASSERT_EQ(slices, 0);
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (shell && *shell) {
    char *csv = tp_perfetto_csv(shell, trace,
                                "SELECT count(*) AS n FROM ftrace_event "
                                "WHERE name GLOB 'dma_fence_*'");
    const char *nl = strchr(csv, '\n');
    long in_trace = nl ? strtol(nl + 1, NULL, 10) : -1;
    free(csv);
    printf("  dma_fence events in the trace (Perfetto's ftrace_event): %ld\n",
           in_trace);
    ASSERT(in_trace >= 0 && in_trace <= seen);
  }
}

#else

TEST(tracefs_real_vulkan_dma_fence) {
  SKIP("built without the trace processor");
}

#endif
