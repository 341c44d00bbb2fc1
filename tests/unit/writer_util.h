/*
 * writer_util.h - what the trace writer's tests share: reading a trace
 * into packets with gpuperf's own decoder (src/perfetto/pb.h), reading
 * fields of a message, checking a trace's sequences and interning, and
 * running commands.
 */
#ifndef GPUPERF_TESTS_WRITER_UTIL_H
#define GPUPERF_TESTS_WRITER_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/session.h"
#include "perfetto/writer.h"

/* One TracePacket, with the fields the checks need. */
typedef struct wt_packet {
  uint64_t offset;  /* in the file */
  uint64_t ts;      /* 0 if absent */
  bool has_ts;      /* the packet has a timestamp field (0 is a time) */
  uint32_t seq;     /* trusted_packet_sequence_id */
  uint32_t flags;   /* sequence_flags */
  bool dropped;     /* previous_packet_dropped */
  uint32_t data_id; /* the field number of its data (53, 11, 60, ...), 0 */
  const uint8_t *data;
  size_t data_size;
  const uint8_t *interned; /* interned_data payload, NULL if none */
  size_t interned_size;
} wt_packet;

typedef struct wt_trace {
  uint8_t *bytes;
  size_t size;
  wt_packet *p;
  size_t n;
  size_t valid; /* bytes of whole packets */
} wt_trace;

/* Reads a file (fails the test if it cannot). */
uint8_t *wt_read_file(const char *path, size_t *size);

/* A file's text, NUL-terminated and malloc'ed; "" if the file is missing
 * (a program's stderr that it never wrote). */
char *wt_read_text(const char *path);

/* A deterministic recording session of the TraceConfig text config into
 * path; fails the test if it cannot start. */
gp_session *wt_recording(const char *config, const char *path);

/* Every row of sql on the trace at path by our trace processor, cells
 * separated by '|', rows by '\n' (malloc'ed); fails the test on error. */
char *wt_tp_rows(const char *path, const char *sql);

/* The first cell of the first row of sql on the trace at path, as an
 * integer (0 without rows). */
int64_t wt_tp_one(const char *path, const char *sql);

/* Writes text to path (created or replaced); fails the test if it
 * cannot. */
void wt_write_text(const char *path, const char *text);

/* Parses bytes (taking ownership) into packets; stops at the first
 * malformed or truncated packet (t->valid says where). */
void wt_parse(wt_trace *t, uint8_t *bytes, size_t size);
void wt_load(wt_trace *t, const char *path);
void wt_free(wt_trace *t);

/* Fields of a message: the first value of field id (false if absent), the
 * number of occurrences, and the k-th LEN payload. */
bool wt_u64(const uint8_t *msg, size_t size, uint32_t id, uint64_t *v);
size_t wt_count(const uint8_t *msg, size_t size, uint32_t id);
bool wt_sub(const uint8_t *msg, size_t size, uint32_t id, size_t k,
            const uint8_t **sub, size_t *sub_size);
/* A string field (its k-th occurrence) compared with s. */
bool wt_str_is(const uint8_t *msg, size_t size, uint32_t id, size_t k,
               const char *s);

/* Number of packets whose data field is data_id (0: all). */
size_t wt_count_packets(const wt_trace *t, uint32_t data_id);

/*
 * Checks every rule of sequences and interning (fails the test on the
 * first violation, naming the packet): every packet has a sequence id;
 * each sequence's first packet clears the incremental state; a packet
 * after previous_packet_dropped clears it; every packet that refers to an
 * interned entry says it needs the state, and the entry was defined in the
 * same generation, earlier or in that packet; an iid never names two
 * different values, in any generation.
 */
void wt_check_sequences(const wt_trace *t);

/* The id a registered device clock has in a trace: sequence-scoped, 64 +
 * its index (docs/trace-format.md, "Clock snapshots"). */
static inline uint64_t wt_trace_clock(uint64_t registered) {
  return registered >= 128 && registered < 192 ? 64 + (registered - 128)
                                               : registered;
}

/* Runs a shell command; returns its exit status (128 + signal). */
int wt_system(const char *cmd);

/* How many entries of dir have part in their name (0 if dir is missing). */
int wt_entries_with(const char *dir, const char *part);

/* $GPUPERF_BUILD/<rel>, skipping the test if GPUPERF_BUILD is unset. */
const char *wt_build_path(const char *rel);

/* The same for a file that must be there: the test skips if it was not
 * built. Four calls' results stay valid at once. */
const char *wt_built(const char *rel);

/* A trace written into memory. */
typedef struct wt_membuf {
  uint8_t *p;
  size_t n, cap;
} wt_membuf;

/* A sink appending to a wt_membuf. */
int wt_mem_sink(void *user, const uint8_t *data, size_t len);

/* A deterministic writer (sequence 7) writing into m, descriptor mode
 * mode. */
gp__tw *wt_mem_writer(wt_membuf *m, uint32_t mode);

/* The same, writing code and device attribute records too
 * (gpuperf_options.code_objects). */
gp__tw *wt_mem_writer_code(wt_membuf *m);

/* Appends a 100 ns kernel record at t to buf at *off. */
void wt_put_kernel(uint8_t *buf, size_t *off, uint64_t corr, uint64_t t);

/* Appends a counter record to buf at off; returns the new offset. */
size_t wt_put_counter(uint8_t *buf, size_t off, uint32_t device, uint32_t id,
                      uint64_t ws, uint64_t ts, uint64_t corr, double v);

#endif /* GPUPERF_TESTS_WRITER_UTIL_H */
