/*
 * make_seeds.c - writes the seed traces of the importer's fuzz corpus:
 * small traces that between them use every packet and field the importer
 * understands, so the fuzzer starts from inputs that reach deep.
 *
 *   make fuzz-seeds    (writes tests/fuzz/corpus/importer/seed-*)
 *
 * The corpus kept in the repository is these seeds plus what fuzzing
 * found interesting, minimised with libFuzzer's -merge=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perfetto/pb.h"

static gp__pb_writer w;

static void packet(uint64_t ts, uint32_t seq, uint32_t flags) {
  gp__pb_begin(&w, 1);
  if (ts)
    gp__pb_uint(&w, 8, ts);
  if (seq)
    gp__pb_uint(&w, 10, seq);
  if (flags)
    gp__pb_uint(&w, 13, flags);
}

static void end(void) {
  gp__pb_end(&w);
}

static int save(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
  size_t n = (size_t)gp__pb_size(&w);
  uint8_t *p = malloc(n ? n : 1);
  gp__pb_copy(&w, p);
  FILE *f = fopen(path, "wb");
  int rc = f && fwrite(p, 1, n, f) == n ? 0 : 1;
  if (f)
    fclose(f);
  free(p);
  gp__pb_writer_reset(&w);
  return rc;
}

static void render_stages(void) {
  packet(1, 1, 1);
  gp__pb_begin(&w, 12);
  gp__pb_begin(&w, 23); /* graphics context */
  gp__pb_uint(&w, 1, 7);
  gp__pb_uint(&w, 2, 42);
  gp__pb_uint(&w, 3, 4);
  gp__pb_end(&w);
  for (int i = 1; i <= 2; i++) {
    gp__pb_begin(&w, 24);
    gp__pb_uint(&w, 1, (uint64_t)i);
    gp__pb_string(&w, 2, i == 1 ? "queue" : "stage");
    gp__pb_string(&w, 3, "desc");
    gp__pb_uint(&w, 4, 2);
    gp__pb_end(&w);
  }
  gp__pb_begin(&w, 1000); /* compute kernel */
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "_Z1kv");
  gp__pb_string(&w, 3, "k()");
  gp__pb_string(&w, 4, "sm_90");
  gp__pb_begin(&w, 5);
  gp__pb_uint(&w, 1, 1);
  gp__pb_uint(&w, 4, 32);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_begin(&w, 1001);
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "registers");
  gp__pb_end(&w);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "name");
  gp__pb_end(&w);
  gp__pb_begin(&w, 29);
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "str");
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  for (int i = 0; i < 3; i++) {
    packet(10 + (uint64_t)i * 3, 1, 2);
    gp__pb_begin(&w, 53);
    gp__pb_uint(&w, 1, (uint64_t)i + 1);
    gp__pb_uint(&w, 2, 5);
    gp__pb_uint(&w, 13, 1);
    gp__pb_uint(&w, 14, 2);
    gp__pb_uint(&w, 5, 7);
    gp__pb_uint(&w, 19, 1);
    gp__pb_uint(&w, 20, 1);
    gp__pb_uint(&w, 10, 9);
    gp__pb_uint(&w, 15, 0x8000000000000000ull);
    gp__pb_uint(&w, 15, 1);
    gp__pb_uint(&w, 16, 4);
    if (i)
      gp__pb_uint(&w, 18, (uint64_t)i);
    gp__pb_begin(&w, 6);
    gp__pb_string(&w, 1, "key");
    gp__pb_string(&w, 2, "value");
    gp__pb_end(&w);
    gp__pb_begin(&w, 21);
    gp__pb_begin(&w, 1);
    gp__pb_uint(&w, 1, 4);
    gp__pb_uint(&w, 2, 2);
    gp__pb_end(&w);
    gp__pb_begin(&w, 3);
    gp__pb_string(&w, 2, "arg");
    gp__pb_uint(&w, 7, 1);
    gp__pb_end(&w);
    gp__pb_end(&w);
    gp__pb_end(&w);
    end();
  }
  packet(30, 0, 0); /* legacy specifications */
  gp__pb_begin(&w, 53);
  gp__pb_begin(&w, 7);
  gp__pb_begin(&w, 2);
  gp__pb_string(&w, 1, "q0");
  gp__pb_end(&w);
  gp__pb_begin(&w, 3);
  gp__pb_string(&w, 1, "s0");
  gp__pb_end(&w);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 2, 5);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_uint(&w, 1, 9);
  gp__pb_int(&w, 3, -1);
  gp__pb_int(&w, 4, 0);
  gp__pb_end(&w);
  end();
}

static void counters(void) {
  packet(5, 1, 1);
  gp__pb_begin(&w, 12);
  gp__pb_begin(&w, 47);
  gp__pb_uint(&w, 1, 1);
  gp__pb_int(&w, 3, 1);
  gp__pb_begin(&w, 2);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "Utilization");
  gp__pb_uint(&w, 7, 37);
  gp__pb_uint(&w, 8, 22);
  gp__pb_uint(&w, 10, 6);
  gp__pb_end(&w);
  gp__pb_begin(&w, 6);
  gp__pb_uint(&w, 1, 6);
  gp__pb_string(&w, 2, "compute");
  gp__pb_uint(&w, 4, 1);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(6, 2, 0);
  gp__pb_begin(&w, 52);
  gp__pb_begin(&w, 1);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 3);
  gp__pb_string(&w, 2, "inline");
  gp__pb_uint(&w, 11, 2);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_int(&w, 3, 0);
  gp__pb_end(&w);
  end();
  for (int i = 0; i < 4; i++) {
    packet(10 + (uint64_t)i, 1, 2);
    gp__pb_begin(&w, 52);
    gp__pb_uint(&w, 4, 1);
    gp__pb_begin(&w, 2);
    gp__pb_uint(&w, 1, 1);
    gp__pb_double(&w, 3, i * 10.5);
    gp__pb_end(&w);
    gp__pb_end(&w);
    end();
    packet(10 + (uint64_t)i, 2, 0);
    gp__pb_begin(&w, 52);
    gp__pb_begin(&w, 2);
    gp__pb_uint(&w, 1, 3);
    gp__pb_int(&w, 2, i);
    gp__pb_end(&w);
    gp__pb_end(&w);
    end();
  }
}

static void track_events(void) {
  packet(1, 3, 1);
  gp__pb_begin(&w, 60);
  gp__pb_uint(&w, 1, 100);
  gp__pb_begin(&w, 3);
  gp__pb_uint(&w, 1, 10);
  gp__pb_string(&w, 6, "proc");
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_begin(&w, 59);
  gp__pb_begin(&w, 11);
  gp__pb_uint(&w, 11, 101);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(1, 3, 0);
  gp__pb_begin(&w, 60);
  gp__pb_uint(&w, 1, 101);
  gp__pb_uint(&w, 5, 100);
  gp__pb_begin(&w, 4);
  gp__pb_uint(&w, 1, 10);
  gp__pb_uint(&w, 2, 11);
  gp__pb_string(&w, 5, "thread");
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(1, 3, 0);
  gp__pb_begin(&w, 60);
  gp__pb_uint(&w, 1, 102);
  gp__pb_uint(&w, 5, 100);
  gp__pb_string(&w, 2, "counter");
  gp__pb_begin(&w, 8);
  gp__pb_uint(&w, 3, 1);
  gp__pb_uint(&w, 5, 1);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  for (int i = 0; i < 3; i++) {
    packet(10 + (uint64_t)i * 10, 3, 0);
    gp__pb_begin(&w, 11);
    gp__pb_uint(&w, 9, 1);
    gp__pb_string(&w, 23, "call");
    gp__pb_string(&w, 22, "cat");
    gp__pb_fixed64(&w, 47, 5);
    gp__pb_begin(&w, 4);
    gp__pb_string(&w, 10, "d");
    gp__pb_begin(&w, 11);
    gp__pb_string(&w, 10, "k");
    gp__pb_uint(&w, 3, 1);
    gp__pb_end(&w);
    gp__pb_begin(&w, 12);
    gp__pb_string(&w, 6, "x");
    gp__pb_end(&w);
    gp__pb_end(&w);
    gp__pb_begin(&w, 3000);
    gp__pb_uint(&w, 1, (uint64_t)i + 1);
    gp__pb_uint(&w, 2, (uint64_t)i);
    gp__pb_end(&w);
    gp__pb_uint(&w, 3001, 4);
    gp__pb_uint(&w, 31, 102);
    gp__pb_int(&w, 12, i);
    gp__pb_end(&w);
    end();
    packet(15 + (uint64_t)i * 10, 3, 0);
    gp__pb_begin(&w, 11);
    gp__pb_uint(&w, 9, 2);
    gp__pb_fixed64(&w, 48, 5);
    gp__pb_end(&w);
    end();
    packet(16 + (uint64_t)i * 10, 3, 0);
    gp__pb_begin(&w, 11);
    gp__pb_uint(&w, 9, 4);
    gp__pb_uint(&w, 11, 102);
    gp__pb_int(&w, 30, 3);
    gp__pb_end(&w);
    end();
  }
}

static void clocks(void) {
  packet(0, 4, 0);
  gp__pb_begin(&w, 6);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 64);
  gp__pb_uint(&w, 2, 1);
  gp__pb_uint(&w, 3, 1);
  gp__pb_uint(&w, 4, 1000);
  gp__pb_end(&w);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 6);
  gp__pb_uint(&w, 2, 100);
  gp__pb_end(&w);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 3);
  gp__pb_uint(&w, 2, 50);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(0, 4, 0);
  gp__pb_begin(&w, 59);
  gp__pb_uint(&w, 58, 64);
  gp__pb_end(&w);
  end();
  for (int i = 0; i < 3; i++) {
    packet(2, 4, 0);
    gp__pb_begin(&w, 63);
    gp__pb_uint(&w, 1, (uint64_t)i + 3);
    gp__pb_string(&w, 2, "tag");
    gp__pb_string(&w, 3, "msg");
    gp__pb_end(&w);
    end();
  }
  packet(70, 5, 0);
  gp__pb_uint(&w, 58, 3);
  gp__pb_begin(&w, 129);
  gp__pb_uint(&w, 1, 0);
  gp__pb_uint(&w, 2, 1500);
  gp__pb_end(&w);
  end();
}

static void others(void) {
  packet(1, 0, 0);
  gp__pb_begin(&w, 128);
  gp__pb_begin(&w, 1);
  gp__pb_string(&w, 1, "gpu");
  gp__pb_bytes(&w, 5, "\x01\x02\x03\x04", 4);
  gp__pb_begin(&w, 6);
  gp__pb_string(&w, 1, "k");
  gp__pb_string(&w, 2, "v");
  gp__pb_end(&w);
  gp__pb_string(&w, 7, "0000:01:00.0");
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(2, 0, 0);
  gp__pb_begin(&w, 71);
  gp__pb_uint(&w, 1, 0);
  gp__pb_uint(&w, 2, 5);
  gp__pb_uint(&w, 3, 4096);
  gp__pb_end(&w);
  end();
  packet(0, 0, 0);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 0);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, 3);
  gp__pb_uint(&w, 2, 5);
  gp__pb_begin(&w, 340);
  gp__pb_uint(&w, 1, 0);
  gp__pb_uint(&w, 2, 5);
  gp__pb_uint(&w, 3, 100);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, 4);
  gp__pb_begin(&w, 240);
  gp__pb_uint(&w, 2, 5);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(5, 1, 1);
  gp__pb_begin(&w, 12);
  gp__pb_begin(&w, 5);
  gp__pb_uint(&w, 1, 1);
  gp__pb_string(&w, 2, "vkAllocateMemory");
  gp__pb_end(&w);
  gp__pb_begin(&w, 22);
  gp__pb_uint(&w, 1, 2);
  gp__pb_string(&w, 2, "key");
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(6, 1, 2);
  gp__pb_begin(&w, 62);
  gp__pb_uint(&w, 1, 1);
  gp__pb_uint(&w, 2, 1);
  gp__pb_int(&w, 3, 6);
  gp__pb_uint(&w, 6, 64);
  gp__pb_uint(&w, 7, 1);
  gp__pb_uint(&w, 8, 2);
  gp__pb_fixed64(&w, 16, 9);
  gp__pb_begin(&w, 9);
  gp__pb_uint(&w, 1, 2);
  gp__pb_int(&w, 2, 7);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(7, 0, 0);
  gp__pb_begin(&w, 65);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 3, 6);
  gp__pb_uint(&w, 4, 16);
  gp__pb_string(&w, 5, "cb");
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
  packet(8, 0, 0);
  gp__pb_uint(&w, 98, 3);
  gp__pb_begin(&w, 65);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, 2);
  gp__pb_uint(&w, 2, 1);
  gp__pb_uint(&w, 3, 2);
  gp__pb_uint(&w, 5, 16);
  gp__pb_uint(&w, 5, 17);
  gp__pb_uint(&w, 6, 1);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
}

/* Extreme values where timestamps, durations, ids and counts go: the
 * ends of int64 and uint64 (10-byte varints), sums that overflow
 * (ts = 2^62 with dur = 2^63 - 1), clocks in descending time, stages
 * that all overlap, huge iids and uuids. */
static void extremes(void) {
  static const uint64_t big[] = {1ull << 62,     (uint64_t)INT64_MAX,
                                 1ull << 63,     UINT64_MAX,
                                 UINT64_MAX - 1, (uint64_t)INT64_MAX - 1};
  size_t nb = sizeof(big) / sizeof(big[0]);
  for (size_t i = 0; i < nb; i++) {
    packet(big[i], 1, i == 0 ? 1 : 0);
    gp__pb_begin(&w, 53);
    gp__pb_uint(&w, 1, big[(i + 1) % nb]); /* event_id */
    gp__pb_uint(&w, 2, big[(i + 2) % nb]); /* duration */
    gp__pb_uint(&w, 3, big[(i + 3) % nb]); /* hw_queue_id */
    gp__pb_uint(&w, 4, big[(i + 4) % nb]); /* stage_id */
    gp__pb_uint(&w, 5, big[(i + 5) % nb]); /* context */
    gp__pb_int(&w, 11, (int64_t)big[i]);   /* gpu_id */
    gp__pb_uint(&w, 10, big[i]);           /* submission_id */
    end();
    end();
  }
  for (int i = 0; i < 4; i++) { /* clocks, descending, at the ends */
    packet(0, 2, 0);
    gp__pb_begin(&w, 6);
    gp__pb_begin(&w, 1);
    gp__pb_uint(&w, 1, 6);
    gp__pb_uint(&w, 2, big[nb - 1 - (size_t)i]);
    gp__pb_end(&w);
    gp__pb_begin(&w, 1);
    gp__pb_uint(&w, 1, 64 + (uint32_t)i);
    gp__pb_uint(&w, 2, big[(size_t)i]);
    gp__pb_uint(&w, 3, big[(size_t)i + 1]); /* unit_multiplier_ns */
    gp__pb_uint(&w, 4, 1);                  /* is_incremental */
    gp__pb_end(&w);
    gp__pb_end(&w);
    end();
    packet(big[(size_t)i], 2, 0);
    gp__pb_uint(&w, 58, 64 + (uint32_t)i);
    gp__pb_begin(&w, 11); /* a track event slice begin at the clock */
    gp__pb_uint(&w, 9, 1);
    gp__pb_uint(&w, 11, big[(size_t)i]); /* track_uuid */
    gp__pb_end(&w);
    end();
  }
  packet((uint64_t)INT64_MAX, 3, 0);
  gp__pb_begin(&w, 52); /* a counter at the end of time */
  gp__pb_uint(&w, 4, UINT64_MAX);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, UINT64_MAX);
  gp__pb_int(&w, 2, INT64_MIN);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
}

/* One dma_fence ftrace event (FtraceEvent field 414..418) in a bundle. */
static void fence(uint64_t ts, uint32_t pid, uint32_t field,
                  const char *timeline, uint32_t context, uint32_t seqno) {
  packet(0, 1, 0);
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 1, 0);
  gp__pb_begin(&w, 2);
  gp__pb_uint(&w, 1, ts);
  gp__pb_uint(&w, 2, pid);
  gp__pb_begin(&w, field);
  gp__pb_uint(&w, 1, context);
  gp__pb_string(&w, 2, "drv");
  gp__pb_uint(&w, 3, seqno);
  gp__pb_string(&w, 4, timeline);
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_end(&w);
  end();
}

/* dma_fence timelines: init queues, a signal, the switch to emit,
 * "unbound", a wait on a thread. */
static void fences(void) {
  fence(10, 5, 414, "tl", 1, 1);
  fence(11, 5, 414, "tl", 1, 2);
  fence(12, 5, 414, "unbound", 2, 1);
  fence(20, 0, 416, "tl", 1, 1);
  fence(30, 5, 415, "tl", 1, 3);
  fence(35, 7, 417, "tl", 1, 3);
  fence(40, 0, 416, "tl", 1, 3);
  fence(41, 7, 418, "tl", 1, 3);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/fuzz/corpus/importer";
  gp__pb_writer_init(&w);
  int rc = 0;
  render_stages();
  rc |= save(dir, "render-stages");
  counters();
  rc |= save(dir, "counters");
  track_events();
  rc |= save(dir, "track-events");
  clocks();
  rc |= save(dir, "clocks-logs");
  others();
  rc |= save(dir, "gpuinfo-mem-vulkan");
  extremes();
  rc |= save(dir, "extremes");
  fences();
  rc |= save(dir, "drm-fences");
  /* All of them again, inside compressed_packets. */
  render_stages();
  counters();
  track_events();
  size_t n = (size_t)gp__pb_size(&w);
  uint8_t *plain = malloc(n);
  gp__pb_copy(&w, plain);
  gp__pb_writer_reset(&w);
  uLongf zn = compressBound(n);
  uint8_t *z = malloc(zn);
  compress(z, &zn, plain, n);
  packet(0, 0, 0);
  gp__pb_bytes(&w, 50, z, zn);
  end();
  rc |= save(dir, "compressed");
  free(plain);
  free(z);
  gp__pb_writer_fini(&w);
  if (rc)
    fprintf(stderr, "make_seeds: cannot write into %s\n", dir);
  return rc;
}
