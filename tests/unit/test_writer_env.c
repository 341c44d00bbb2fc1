/*
 * test_writer_env.c - ENVIRONMENT records in traces: the core clock as
 * Perfetto's GenericGpuFrequencyEvent, memory in use as GpuMemTotalEvent
 * (global for pid 0, per process otherwise), temperature, power, memory
 * clock and fan as GPU counter tracks. Perfetto's own conformance queries
 * for those packets (gpu_frequency_event, gpu_mem_total in
 * $GPUPERF_SHARED/conformance) run verbatim on a trace the writer made
 * from known records, and give the rows the import rules of
 * reference/perfetto/gpu-import-spec.md (F.5, F.7) prescribe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "tp/tputil.h"
#include "writer_util.h"

static size_t put_env(uint8_t *buf, size_t off, uint32_t device, uint64_t ts,
                      uint32_t kind, uint32_t a, uint32_t b, uint64_t bytes) {
  gp_activity_environment *e = (gp_activity_environment *)(buf + off);
  memset(e, 0, sizeof(*e));
  e->hdr.kind = GP_ACTIVITY_KIND_ENVIRONMENT;
  e->hdr.size = sizeof(*e);
  e->timestamp = ts;
  e->device_id = device;
  e->environment_kind = kind;
  switch (kind) {
  case GP_ENVIRONMENT_SPEED:
    e->data.speed.core_clock_khz = a;
    e->data.speed.memory_clock_khz = b;
    break;
  case GP_ENVIRONMENT_TEMPERATURE:
    e->data.temperature.gpu_temperature_mc = a;
    break;
  case GP_ENVIRONMENT_POWER:
    e->data.power.power_mw = a;
    e->data.power.power_limit_mw = b;
    break;
  case GP_ENVIRONMENT_COOLING:
    e->data.cooling.fan_speed_pct = a;
    break;
  default:
    e->data.memory.pid = a;
    e->data.memory.used_bytes = bytes;
  }
  return off + sizeof(*e);
}

static gp_tp *write_and_open(const uint8_t *buf, size_t off) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, GP_TW_DESCRIPTOR_INTERNED);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_destroy(w);
  gp_tp *tp = tp_open_bytes(m.p, m.n);
  free(m.p);
  return tp;
}

/* Runs the conformance case's query on tp and compares with expected the
 * way Perfetto's runner does (whitespace stripped). */
static void conformance_query(gp_tp *tp, const char *cas,
                              const char *expected) {
  const char *shared = tp_shared();
  if (!shared)
    SKIP("GPUPERF_SHARED is not set: Perfetto's queries are not here");
  char path[1024];
  snprintf(path, sizeof(path), "%s/conformance/%s/query.sql", shared, cas);
  char *sql = tp_read_file(path, NULL);
  if (!sql)
    SKIP("%s is absent", path);
  char *csv = NULL;
  size_t len = 0;
  gp_tp_error err;
  FILE *f = open_memstream(&csv, &len);
  int rc = gp_tp_write(tp, sql, GP_TP_FORMAT_CSV, f, NULL, &err);
  fclose(f);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", cas, err.message);
  /* The writer's own "gpuperf dropped records" track (a process counter
   * track every trace of ours has) is not GPU data: left out. */
  for (char *l = strstr(csv, "\"gpuperf dropped records\""); l;
       l = strstr(csv, "\"gpuperf dropped records\"")) {
    char *nl = strchr(l, '\n');
    memmove(l, nl ? nl + 1 : l + strlen(l), strlen(nl ? nl + 1 : "") + 1);
  }
  tp_assert_csv(csv, expected, cas);
  printf("  %s: query.sql verbatim gives the expected rows\n", cas);
  free(csv);
  free(sql);
}

TEST(writer_env_gpu_frequency_packets) {
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  off = put_env(buf, off, 0, 1000, GP_ENVIRONMENT_SPEED, 1500000, 0, 0);
  off = put_env(buf, off, 0, 2000, GP_ENVIRONMENT_SPEED, 2100000, 0, 0);
  gp_tp *tp = write_and_open(buf, off);
  /* As Perfetto's gpu_frequency_event case: track "gpufreq", kHz. */
  conformance_query(tp, "gpu_frequency_event",
                    "\"track_name\",\"track_type\","
                    "\"ts\",\"value\"\n"
                    "\"gpufreq\",\"gpu_frequency\","
                    "1000,1500000.000000\n"
                    "\"gpufreq\",\"gpu_frequency\","
                    "2000,2100000.000000\n");
  tp_expect(tp,
            "SELECT unit, gpu_id FROM gpu_counter_track WHERE name = "
            "'gpufreq'",
            "\"unit\",\"gpu_id\"\n\"kHz\",0\n");
  gp_tp_close(tp);
}

TEST(writer_env_gpu_mem_total_packets) {
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  off = put_env(buf, off, 0, 0, GP_ENVIRONMENT_MEMORY, 0, 0, 123);
  off = put_env(buf, off, 0, 0, GP_ENVIRONMENT_MEMORY, 1, 0, 100);
  off = put_env(buf, off, 1, 0, GP_ENVIRONMENT_MEMORY, 0, 0, 456);
  off = put_env(buf, off, 0, 5, GP_ENVIRONMENT_MEMORY, 0, 0, 256);
  off = put_env(buf, off, 0, 5, GP_ENVIRONMENT_MEMORY, 1, 0, 233);
  off = put_env(buf, off, 1, 5, GP_ENVIRONMENT_MEMORY, 0, 0, 512);
  off = put_env(buf, off, 0, 10, GP_ENVIRONMENT_MEMORY, 0, 0, 123);
  off = put_env(buf, off, 0, 10, GP_ENVIRONMENT_MEMORY, 1, 0, 0);
  gp_tp *tp = write_and_open(buf, off);
  /* The values of Perfetto's gpu_mem_total case, written as records:
   * its expected rows, global and per-process "GPU Memory" tracks. */
  conformance_query(tp, "gpu_mem_total",
                    "\"name\",\"unit\",\"gpu_id\",\"ts\",\"pid\",\"value\"\n"
                    "\"GPU Memory\",\"bytes\",0,0,\"[NULL]\",123\n"
                    "\"GPU Memory\",\"bytes\",0,0,1,100\n"
                    "\"GPU Memory\",\"bytes\",0,5,\"[NULL]\",256\n"
                    "\"GPU Memory\",\"bytes\",0,5,1,233\n"
                    "\"GPU Memory\",\"bytes\",0,10,\"[NULL]\",123\n"
                    "\"GPU Memory\",\"bytes\",0,10,1,0\n"
                    "\"GPU Memory\",\"bytes\",1,0,\"[NULL]\",456\n"
                    "\"GPU Memory\",\"bytes\",1,5,\"[NULL]\",512\n");
  gp_tp_close(tp);
}

TEST(writer_env_counter_tracks) {
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  for (uint64_t i = 0; i < 3; i++) {
    uint64_t ts = 1000 + i * 1000;
    off = put_env(buf, off, 0, ts, GP_ENVIRONMENT_SPEED, 1410000, 1215000, 0);
    off = put_env(buf, off, 0, ts, GP_ENVIRONMENT_TEMPERATURE,
                  (uint32_t)(40000 + i * 500), 0, 0);
    off = put_env(buf, off, 0, ts, GP_ENVIRONMENT_POWER,
                  (uint32_t)(55000 + i * 1000), 400000, 0);
    off = put_env(buf, off, 0, ts, GP_ENVIRONMENT_COOLING, (uint32_t)(30 + i),
                  0, 0);
  }
  gp_tp *tp = write_and_open(buf, off);
  /* Readings, so forwards-looking: each row is its own sample. */
  tp_expect(tp,
            "SELECT t.name, t.unit, group_concat(c.value, ' ') AS v FROM "
            "counter c JOIN gpu_counter_track t ON t.id = c.track_id GROUP BY "
            "t.id ORDER BY t.name",
            "\"name\",\"unit\",\"v\"\n"
            "\"Fan speed\",\"%\",\"30.0 31.0 32.0\"\n"
            "\"GPU power\",\"W\",\"55.0 56.0 57.0\"\n"
            "\"GPU power limit\",\"W\",\"400.0 400.0 400.0\"\n"
            "\"GPU temperature\",\"C\",\"40.0 40.5 41.0\"\n"
            "\"Memory clock\",\"KHz\",\"1215000.0 1215000.0 1215000.0\"\n"
            "\"gpufreq\",\"kHz\",\"1410000.0 1410000.0 1410000.0\"\n");
  gp_tp_close(tp);
}
