/*
 * hostile.h - traces and configs shaped to make a careless importer
 * quadratic, shared by bench/tp_hostile.c (figures at 8 MB) and
 * tests/tp/test_hostile.c (a ratio of times between two sizes).
 *
 * Each generator writes into a caller-initialised protobuf writer (or
 * returns malloc'ed text) and stops once the output reaches `bytes`:
 *
 *   overlap     render stages on one hardware queue, each overlapping all
 *               the earlier ones (every stage needs a track of its own)
 *   clocks      clock snapshots of BOOTTIME and MONOTONIC in descending
 *               time, then a packet timed in MONOTONIC
 *   clocks64    the same with 64 clocks per snapshot
 *   zigzag      clock snapshots each past one end of those before, the
 *               ends alternating (neither ascending nor descending)
 *   gpus        GpuInfo with one GPU per 64 bytes, one stage on each
 *   tconfig     a TraceConfig with one data source per 48 bytes
 *   compressed  the overlap trace inside one compressed_packets packet
 *               (zlib), so the importer inflates `bytes` from far fewer
 *   tid_reuse   ftrace: one tid made again and again as a new thread
 *               (task_newtask) and freed, each time woken once (every
 *               lookup of the tid meets all its ended threads, if they
 *               are kept in its list)
 *
 * Header-only (static functions) so that the bench, which links only the
 * library, and the tests can both use it.
 */
#ifndef GPUPERF_TESTS_TP_HOSTILE_H
#define GPUPERF_TESTS_TP_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "perfetto/pb.h"

#define HOSTILE_T0 1000000000000ll

static inline void hostile_overlap(gp__pb_writer *w, size_t bytes) {
  for (uint64_t i = 0; gp__pb_size(w) < bytes; i++) {
    gp__pb_begin(w, 1);
    gp__pb_uint(w, 8, (uint64_t)HOSTILE_T0 + i);
    gp__pb_uint(w, 10, 1);
    gp__pb_begin(w, 53);
    gp__pb_uint(w, 1, i + 1);         /* event_id */
    gp__pb_uint(w, 2, 1000000000ull); /* duration: past every later one */
    gp__pb_uint(w, 3, 0);             /* hw_queue_id */
    gp__pb_uint(w, 4, 0);             /* stage_id */
    gp__pb_end(w);
    gp__pb_end(w);
  }
}

/* One FtraceEvent of task pid at t, its payload field `event` begun (the
 * caller writes the payload's fields and ends two levels). */
static inline void hostile_ftrace_event(gp__pb_writer *w, uint64_t t,
                                        uint32_t pid, uint32_t event) {
  gp__pb_begin(w, 2);
  gp__pb_uint(w, 1, t);
  gp__pb_uint(w, 2, pid);
  gp__pb_begin(w, event);
}

static inline void hostile_tid_reuse(gp__pb_writer *w, size_t bytes) {
  uint64_t t = (uint64_t)HOSTILE_T0;
  while (gp__pb_size(w) < bytes) {
    gp__pb_begin(w, 1);
    gp__pb_uint(w, 10, 1);
    gp__pb_begin(w, 1);   /* ftrace_events */
    gp__pb_uint(w, 1, 0); /* cpu */
    for (int i = 0; i < 64; i++, t += 1000) {
      hostile_ftrace_event(w, t, 1, 235); /* task_newtask by pid 1 */
      gp__pb_uint(w, 1, 100);             /* pid: always the same */
      gp__pb_string(w, 2, "worker");
      gp__pb_uint(w, 3, 0x00010000); /* CLONE_THREAD */
      gp__pb_end(w);
      gp__pb_end(w);
      hostile_ftrace_event(w, t + 100, 1, 20); /* sched_waking of it */
      gp__pb_string(w, 1, "worker");
      gp__pb_uint(w, 2, 100);
      gp__pb_end(w);
      gp__pb_end(w);
      hostile_ftrace_event(w, t + 200, 100, 240); /* sched_process_free */
      gp__pb_string(w, 1, "worker");
      gp__pb_uint(w, 2, 100);
      gp__pb_end(w);
      gp__pb_end(w);
    }
    gp__pb_end(w);
    gp__pb_end(w);
  }
}

/* A snapshot of nclk clocks (BOOTTIME first) at time t, clock k reading
 * t - k * 1000. */
static inline void hostile_snapshot(gp__pb_writer *w, int64_t t, int nclk) {
  static const uint32_t builtin[] = {6, 3, 1, 4, 5, 2};
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 10, 1);
  gp__pb_begin(w, 6);
  for (int k = 0; k < nclk; k++) {
    gp__pb_begin(w, 1);
    gp__pb_uint(w, 1, k < 6 ? builtin[k] : 128u + (uint32_t)k);
    gp__pb_uint(w, 2, (uint64_t)(t - k * 1000));
    gp__pb_end(w);
  }
  gp__pb_end(w);
  gp__pb_end(w);
}

static inline void hostile_clocks_n(gp__pb_writer *w, size_t bytes, int nclk,
                                    bool zigzag) {
  int64_t t = HOSTILE_T0 * 4;
  for (int64_t i = 1; gp__pb_size(w) + 64 < bytes; i++) {
    hostile_snapshot(w, t, nclk);
    t += zigzag ? (i % 2 ? i : -i) * 1000000 : -1000000;
  }
  /* One stage timed in MONOTONIC: converted through the snapshots. */
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 8, (uint64_t)HOSTILE_T0 * 3);
  gp__pb_uint(w, 58, 3);
  gp__pb_uint(w, 10, 1);
  gp__pb_begin(w, 53);
  gp__pb_uint(w, 1, 1);
  gp__pb_uint(w, 2, 1000);
  gp__pb_end(w);
  gp__pb_end(w);
}

static inline void hostile_clocks(gp__pb_writer *w, size_t bytes) {
  hostile_clocks_n(w, bytes, 2, false);
}

static inline void hostile_clocks64(gp__pb_writer *w, size_t bytes) {
  hostile_clocks_n(w, bytes, 64, false);
}

static inline void hostile_zigzag(gp__pb_writer *w, size_t bytes) {
  hostile_clocks_n(w, bytes, 2, true);
}

static inline void hostile_gpus(gp__pb_writer *w, size_t bytes) {
  uint64_t n = bytes / 64 ? bytes / 64 : 1;
  gp__pb_begin(w, 1);
  gp__pb_begin(w, 128);
  for (uint64_t i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof(name), "GPU %llu", (unsigned long long)i);
    gp__pb_begin(w, 1);
    gp__pb_string(w, 1, name);
    gp__pb_end(w);
  }
  gp__pb_end(w);
  gp__pb_end(w);
  for (uint64_t i = 0; i < n; i++) {
    gp__pb_begin(w, 1);
    gp__pb_uint(w, 8, (uint64_t)HOSTILE_T0 + i * 10);
    gp__pb_uint(w, 10, 1);
    gp__pb_begin(w, 53);
    gp__pb_uint(w, 1, i + 1);
    gp__pb_uint(w, 2, 5);
    gp__pb_uint(w, 3, 0);
    gp__pb_int(w, 11, (int64_t)i);
    gp__pb_end(w);
    gp__pb_end(w);
  }
}

/* The overlap trace of `bytes` (inflated) in one compressed_packets
 * packet. Returns 0, or -1 if zlib fails. */
static inline int hostile_compressed(gp__pb_writer *w, size_t bytes) {
  gp__pb_writer in;
  gp__pb_writer_init(&in);
  hostile_overlap(&in, bytes);
  size_t n = (size_t)gp__pb_size(&in);
  uint8_t *raw = malloc(n ? n : 1);
  uLongf zn = compressBound((uLong)n);
  uint8_t *z = malloc(zn);
  int rc = -1;
  if (raw && z) {
    gp__pb_copy(&in, raw);
    if (compress2(z, &zn, raw, (uLong)n, 9) == Z_OK) {
      gp__pb_begin(w, 1);
      gp__pb_uint(w, 10, 1);
      gp__pb_bytes(w, 50, z, zn);
      gp__pb_end(w);
      rc = 0;
    }
  }
  free(raw);
  free(z);
  gp__pb_writer_fini(&in);
  return rc;
}

/* A TraceConfig of about `bytes` with distinct data sources (malloc'ed,
 * NUL-terminated; NULL if out of memory). */
static inline char *hostile_tconfig(size_t bytes, size_t *len) {
  char *s = malloc(bytes + 128);
  if (!s)
    return NULL;
  size_t n = 0;
  for (unsigned i = 0; n < bytes; i++)
    n += (size_t)snprintf(s + n, bytes + 128 - n,
                          "data_sources { config { name: \"gpu.log.v%u\" } }\n",
                          i);
  *len = n;
  return s;
}

#endif /* GPUPERF_TESTS_TP_HOSTILE_H */
