/*
 * service.c - what Perfetto's tracing service says about a trace it
 * recorded, and what Perfetto's importer makes of it (proto_trace_reader.cc):
 *
 *  - TracingServiceEvent: flushes and reads of its buffers, which decide
 *    the sorter's windows (import.h);
 *  - TraceConfig: a trace written into a file with buffers that discard
 *    when full (config_write_into_file_discard, per buffer), or without
 *    periodic flushes by a service older than v54
 *    (config_write_into_file_no_flush);
 *  - SystemInfo.tracing_service_version, for the latter.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

/* TraceConfig fields, and BufferConfig's (trace_config.proto) */
enum {
  CFG_BUFFERS = 1,
  CFG_WRITE_INTO_FILE = 8,
  CFG_FLUSH_PERIOD_MS = 13,
  BUF_FILL_POLICY = 4,
  FILL_DISCARD = 2,
};

/* See import.h. */
int gp__tp_stat_idx(gp__tp_importer *imp, int stat, int64_t idx, int64_t n) {
  gp__tp_db *db = imp->db;
  bool ins;
  uint64_t *i =
      gp__tp_map_put(&imp->istat_by_key, (uint64_t)stat << 32 | (uint32_t)idx,
                     db->istats.n, &ins);
  if (!i || (ins && !gp__tp_vec_push(&db->istats,
                                     ((gp__tp_istat){(uint32_t)stat, idx, 0}))))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  db->istats.v[*i].value += n;
  return 0;
}

/* See import.h. */
int gp__tp_stat_idx_set(gp__tp_importer *imp, int stat, int64_t idx,
                        int64_t v) {
  int rc = gp__tp_stat_idx(imp, stat, idx, 0);
  if (rc)
    return rc;
  uint64_t *i =
      gp__tp_map_get(&imp->istat_by_key, (uint64_t)stat << 32 | (uint32_t)idx);
  imp->db->istats.v[*i].value = v;
  return 0;
}

/* See import.h. */
bool gp__tp_stat_idx_get(const gp__tp_importer *imp, int stat, int64_t idx,
                         int64_t *v) {
  const uint64_t *i =
      gp__tp_map_get(&imp->istat_by_key, (uint64_t)stat << 32 | (uint32_t)idx);
  if (i)
    *v = imp->db->istats.v[*i].value;
  return i != NULL;
}

/* TracingServiceEvent fields */
enum { SVC_TRACING_STARTED = 2, SVC_ALL_FLUSHED = 3, SVC_READ_COMPLETED = 4 };

/* See import.h. Perfetto's TraceSorter: NotifyFlushEvent and
 * NotifyReadBufferEvent, in file order. A window records the length of
 * each queue pushed since the window before. */
int gp__tp_tokenize_service_event(gp__tp_importer *imp, const uint8_t *data,
                                  size_t len, int64_t ts, uint64_t off) {
  gp__pb_reader r;
  gp__pb_field f;
  bool flushed = false, read = false;
  int rc;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_VARINT || !f.value)
      continue;
    flushed |= f.id == SVC_ALL_FLUSHED;
    if (f.id == SVC_TRACING_STARTED)
      imp->tracing_started_ts = ts; /* where ftrace data may begin */
    read |= f.id == SVC_READ_COMPLETED;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "service_event");
  gp__tp_windows *w = &imp->win;
  w->flushes += flushed;
  if (!read || w->full_sort || w->flushes < 2)
    return 0;
  w->flushes = 0;
  for (size_t i = 0; i < w->pushed.n; i++) {
    uint32_t q = w->pushed.v[i];
    w->dirty.v[q] = 0;
    gp__tp_wchange c = {q, (uint32_t)imp->queues.v[q].n};
    if (!gp__tp_vec_push(&w->changes, c))
      return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  }
  w->pushed.n = 0;
  if (!gp__tp_vec_push(&w->ends, (uint32_t)w->changes.n))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  return 0;
}

/* See import.h. The sorter hands out nothing at a read until the second
 * window (the first extracts what was pushed before the trace began); a
 * window with nothing in it before it hands out nothing either. */
bool gp__tp_may_defer(gp__tp_importer *imp) {
  gp__tp_windows *w = &imp->win;
  if (w->full_sort)
    return true;
  if (w->ends.n >= 2 && w->ends.v[w->ends.n - 2] > 0)
    return false;
  w->full_sort = true;
  return true;
}

/* See import.h. The last TraceConfig is the one the end looks at; each
 * counts its discarding buffers. */
int gp__tp_tokenize_trace_config(gp__tp_importer *imp, const uint8_t *data,
                                 size_t len) {
  gp__pb_reader r, b;
  gp__pb_field f, g;
  int rc;
  bool into_file = false, flush = false;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == CFG_WRITE_INTO_FILE && f.wire_type == GP_PB_VARINT)
      into_file = f.value != 0;
    else if (f.id == CFG_FLUSH_PERIOD_MS && f.wire_type == GP_PB_VARINT)
      flush = f.value != 0;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "trace_config");
  imp->has_config = true;
  imp->write_into_file = into_file;
  imp->flush_period = flush;
  if (!into_file)
    return 0;
  int64_t i = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != CFG_BUFFERS || f.wire_type != GP_PB_LEN)
      continue;
    uint64_t policy = 0;
    gp__pb_reader_sub(&b, &r, &f);
    while ((rc = gp__tp_pb_next(&b, &g)) > 0)
      if (g.id == BUF_FILL_POLICY && g.wire_type == GP_PB_VARINT)
        policy = g.value;
    if (rc < 0)
      return gp__tp_corrupt(imp, &b, "trace_config.buffers");
    if (policy == FILL_DISCARD &&
        (rc = gp__tp_stat_idx(imp, GP_TP_STAT_config_write_into_file_discard, i,
                              1)) != 0)
      return rc;
    i++;
  }
  return 0;
}

/* See import.h. "Perfetto vNN.M..." gives NN. */
void gp__tp_service_version(gp__tp_importer *imp, const uint8_t *p, size_t n) {
  static const char prefix[] = "Perfetto v";
  size_t k = sizeof(prefix) - 1;
  imp->svc_major = -1;
  if (n <= k || memcmp(p, prefix, k) != 0)
    return;
  size_t e = k;
  while (e < n && p[e] != '.' && p[e] != '-')
    e++;
  if (e == n || e == k || e - k > 9)
    return;
  int v = 0;
  for (size_t i = k; i < e; i++) {
    if (p[i] < '0' || p[i] > '9')
      return;
    v = v * 10 + (p[i] - '0');
  }
  imp->svc_major = v;
}

/* See import.h. Since v54 the service flushes at each write into the
 * file: only older ones (or one of no known version) need the period. */
void gp__tp_service_finish(gp__tp_importer *imp) {
  if (imp->has_config && imp->write_into_file && !imp->flush_period &&
      imp->svc_major < 54)
    gp__tp_stat(imp, GP_TP_STAT_config_write_into_file_no_flush, 1);
}
