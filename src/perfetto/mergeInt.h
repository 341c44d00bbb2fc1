/*
 * mergeInt.h - private state of the trace merge (merge.c: inputs, the
 * scan and the clock alignment; merge_rewrite.c: packet rewriting).
 */
#ifndef GPUPERF_PERFETTO_MERGE_INT_H
#define GPUPERF_PERFETTO_MERGE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pb.h"

/* Builtin clock ids (Perfetto's BuiltinClock). */
enum {
  MG_CLOCK_REALTIME = 1,
  MG_CLOCK_REALTIME_COARSE = 2,
  MG_CLOCK_MONOTONIC = 3,
  MG_CLOCK_MONOTONIC_COARSE = 4,
  MG_CLOCK_MONOTONIC_RAW = 5,
  MG_CLOCK_BOOTTIME = 6
};

/* A small open-addressing map of non-zero 64-bit keys to 64-bit values. */
typedef struct mg_map {
  uint64_t *keys, *vals;
  size_t cap, n;
} mg_map;

/* The value of key, or NULL. */
uint64_t *gp__mg_map_get(const mg_map *m, uint64_t key);
/* The slot of key, inserted (value 0) if new; NULL without memory. */
uint64_t *gp__mg_map_put(mg_map *m, uint64_t key);
void gp__mg_map_free(mg_map *m);

/*
 * The output buffer of the rewrite: protobuf with minimal lengths. A
 * nested message is opened without reserving its length; closing it
 * moves the content to make room for the exact varint (packets are small,
 * so the move costs little), so the merged trace is no larger than its
 * inputs.
 */
typedef struct mg_buf {
  uint8_t *p;
  size_t n, cap;
  size_t stack[GP_PB_MAX_DEPTH];
  int depth;
  bool oom;
} mg_buf;

void gp__mg_buf_fini(mg_buf *b);
void gp__mg_uint(mg_buf *b, uint32_t field, uint64_t v);
void gp__mg_fixed(mg_buf *b, uint32_t field, uint64_t v, int bytes);
void gp__mg_bytes(mg_buf *b, uint32_t field, const void *data, size_t len);
void gp__mg_begin(mg_buf *b, uint32_t field);
void gp__mg_end(mg_buf *b);
static inline void gp__mg_string(mg_buf *b, uint32_t field, const char *s) {
  gp__mg_bytes(b, field, s, strlen(s));
}

/* a + b and a - b saturated to the int64 range: times and clock offsets
 * come from the inputs, which may hold any 64-bit value. */
static inline int64_t gp__mg_add_sat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
static inline int64_t gp__mg_sub_sat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* d rounded to the nearest integer, clamped to the int64 range (NaN: 0). */
static inline int64_t gp__mg_round_sat(double d) {
  if (!(d == d))
    return 0;
  if (d >= 9223372036854775807.0)
    return INT64_MAX;
  if (d <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

/* A linear clock map: t -> t + off + slope * (t - pivot), saturated. */
typedef struct mg_clock_map {
  int64_t pivot, off;
  double slope;
} mg_clock_map;

static inline int64_t gp__mg_apply(const mg_clock_map *m, int64_t t) {
  double d = m->slope * (double)gp__mg_sub_sat(t, m->pivot);
  return gp__mg_add_sat(gp__mg_add_sat(t, m->off), gp__mg_round_sat(d));
}

/* How one input's packets are rewritten. */
typedef struct mg_rewrite {
  mg_clock_map map;    /* BOOTTIME and MONOTONIC values */
  int64_t real_off;    /* added to REALTIME values */
  uint32_t machine_id; /* written on every packet (0: none) */
  bool renumber;       /* sequences, uuids and ids made unique */
  uint64_t id_xor;     /* xored into track uuids, event and flow ids */
  const char *prefix;  /* "host: " before GPU and process names, or NULL */
  uint32_t *next_seq;  /* the next free output sequence id */
  mg_map seqs;         /* input seq -> output seq | default clock << 32 */
  bool bad_time;       /* a timestamp fell before 0 */
  bool huge_time;      /* a timestamp was past INT64_MAX (no clock has it) */
} mg_rewrite;

/*
 * Rewrites one TracePacket (its payload data[0..len)) into out as a
 * `packet` field of Trace. Returns 0, GP_ECORRUPT, GP_ENOMEM.
 */
int gp__mg_rewrite_packet(mg_rewrite *rw, const uint8_t *data, size_t len,
                          mg_buf *out);

/* Reads TracePackets from a file, one at a time. */
typedef struct mg_reader {
  FILE *f;
  const char *path;
  uint8_t *buf;
  size_t cap;
  uint64_t offset; /* of the next field */
} mg_reader;

/* Opens path; 0 or -errno. */
int gp__mg_reader_open(mg_reader *r, const char *path);
/* The next packet's payload into *data, *len: 1, 0 at the end,
 * GP_ECORRUPT (truncated), GP_ENOMEM, -errno. */
int gp__mg_reader_next(mg_reader *r, const uint8_t **data, size_t *len);
void gp__mg_reader_close(mg_reader *r);

#endif /* GPUPERF_PERFETTO_MERGE_INT_H */
