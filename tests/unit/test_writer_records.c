/*
 * test_writer_records.c - the writer fed with records made by hand:
 * drops, counters in both descriptor modes, failed writes, GPU work
 * without timestamps, device clock snapshots; and our dump against Perfetto's
 * own decoding of its conformance traces.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "gpuperf/tp.h"
#include "harness.h"
#include "perfetto/dump.h"
#include "perfetto/pb.h"
#include "perfetto/proto.h"
#include "perfetto/writer.h"
#include "writer_util.h"

TEST(writer_drops_clear_incremental_state) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, 0);
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  wt_put_kernel(buf, &off, 1, 1000);
  gp_activity_dropped *d = (gp_activity_dropped *)(buf + off);
  memset(d, 0, sizeof(*d));
  d->hdr.kind = GP_ACTIVITY_KIND_DROPPED;
  d->hdr.size = sizeof(*d);
  d->first = d->last = 1500;
  d->count = 42;
  d->dropped_kind = GP_ACTIVITY_KIND_KERNEL;
  d->reason = GP_DROP_NO_BUFFER;
  off += sizeof(*d);
  wt_put_kernel(buf, &off, 2, 2000);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_stats st;
  gp__tw_get_stats(w, &st);
  ASSERT_EQ(st.dropped, 42);
  gp__tw_destroy(w);

  wt_trace t;
  wt_parse(&t, m.p, m.n);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  /* The drop: a counter value, then the next packet clears the state and
   * says packets were lost; the second kernel's entries come again. */
  size_t i;
  for (i = 0; i < t.n; i++) {
    uint64_t v;
    if (t.p[i].data_id == GP_PB_PACKET_TRACK_EVENT &&
        wt_u64(t.p[i].data, t.p[i].data_size, GP_PB_TE_COUNTER_VALUE, &v) &&
        v == 42)
      break;
  }
  ASSERT_LT(i, t.n);
  ASSERT(t.p[i].dropped);
  ASSERT(t.p[i].flags & GP_PB_SEQ_INCREMENTAL_STATE_CLEARED);
  size_t kernels_interned = 0;
  for (size_t j = 0; j < t.n; j++)
    if (t.p[j].interned)
      kernels_interned += wt_count(t.p[j].interned, t.p[j].interned_size,
                                   GP_PB_INTERNED_COMPUTE_KERNELS);
  ASSERT_EQ(kernels_interned, 2);
  /* The iid is the same in both generations (checked by the checker). */
  wt_free(&t);
}

/* Writes two periodic windows of counters 1 and 2 on device 0 and one
 * per-activity value of counter 1; returns the parsed trace. */
static void counter_trace(uint32_t mode, wt_trace *t) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, mode);
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  off = wt_put_counter(buf, off, 0, 1, 1000, 2000, 0, 10.0);
  off = wt_put_counter(buf, off, 0, 2, 1000, 2000, 0, 20.0);
  off = wt_put_counter(buf, off, 0, 1, 2000, 3000, 0, 11.0);
  off = wt_put_counter(buf, off, 0, 2, 2000, 3000, 0, 21.0);
  off = wt_put_counter(buf, off, 0, 1, 2500, 2900, 77, 5.5);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_destroy(w);
  wt_parse(t, m.p, m.n);
  ASSERT_EQ(t->valid, t->size);
  wt_check_sequences(t);
}

/* The specs describing the trace's counters: those of the last interned
 * descriptor (each one repeats the earlier specs), or of every inline one
 * (each adds the specs not described yet). */
static size_t collect_specs(const wt_trace *t, const uint8_t **specs,
                            size_t *sizes, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    const uint8_t *e, *d;
    size_t en, dn;
    if (t->p[i].interned &&
        wt_sub(t->p[i].interned, t->p[i].interned_size,
               GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, 0, &e, &en) &&
        wt_sub(e, en, GP_PB_IGCD_DESCRIPTOR, 0, &d, &dn)) {
      n = 0;
      for (size_t k = 0;
           n < cap && wt_sub(d, dn, GP_PB_GCD_SPECS, k, &specs[n], &sizes[n]);
           k++)
        n++;
    } else if (t->p[i].data_id == GP_PB_PACKET_GPU_COUNTER_EVENT &&
               wt_sub(t->p[i].data, t->p[i].data_size,
                      GP_PB_GCE_COUNTER_DESCRIPTOR, 0, &d, &dn)) {
      for (size_t k = 0;
           n < cap && wt_sub(d, dn, GP_PB_GCD_SPECS, k, &specs[n], &sizes[n]);
           k++)
        n++;
    }
  }
  return n;
}

static void check_counter_trace(const wt_trace *t, uint32_t id1, uint32_t id2,
                                uint32_t instr1) {
  const uint8_t *specs[8];
  size_t sizes[8];
  ASSERT_EQ(collect_specs(t, specs, sizes, 8), 3);
  for (size_t k = 0; k < 3; k++) {
    const uint8_t *s = specs[k];
    size_t sn = sizes[k];
    uint64_t id, dir, group;
    ASSERT(wt_u64(s, sn, GP_PB_SPEC_COUNTER_ID, &id));
    ASSERT(wt_u64(s, sn, GP_PB_SPEC_VALUE_DIRECTION, &dir));
    ASSERT(wt_count(s, sn, GP_PB_SPEC_C_NAME) == 1);
    /* Groups are the catalog's for both kinds (none here: no catalog). */
    ASSERT(!wt_u64(s, sn, GP_PB_SPEC_GROUPS, &group));
    if (id == instr1) {
      ASSERT_EQ(dir, GP_PB_VALUE_DIRECTION_FORWARDS);
    } else {
      ASSERT(id == id1 || id == id2);
      ASSERT_EQ(dir, GP_PB_VALUE_DIRECTION_BACKWARDS);
    }
  }
  /* Samples: a zero at the first window's start (both counters in one
   * event), then one event per window end, then the per-activity value
   * at the start of its activity. */
  uint64_t want_ts[] = {1000, 2000, 2500, 3000};
  size_t want_n[] = {2, 2, 1, 2};
  size_t e = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (t->p[i].data_id != GP_PB_PACKET_GPU_COUNTER_EVENT ||
        !wt_count(t->p[i].data, t->p[i].data_size, GP_PB_GCE_COUNTERS))
      continue;
    ASSERT_LT(e, 4);
    size_t k;
    for (k = 0; k < 4 && want_ts[k] != t->p[i].ts; k++) {
    }
    ASSERT_LT(k, 4);
    ASSERT_EQ(wt_count(t->p[i].data, t->p[i].data_size, GP_PB_GCE_COUNTERS),
              want_n[k]);
    const uint8_t *c;
    size_t cn;
    uint64_t bits, id;
    ASSERT(wt_sub(t->p[i].data, t->p[i].data_size, GP_PB_GCE_COUNTERS, 0, &c,
                  &cn));
    ASSERT(wt_u64(c, cn, GP_PB_GC_COUNTER_ID, &id));
    ASSERT(wt_u64(c, cn, GP_PB_GC_DOUBLE_VALUE, &bits));
    double v;
    memcpy(&v, &bits, sizeof(v));
    if (k == 0)
      ASSERT_NEAR(v, 0.0, 0);
    else if (k == 1)
      ASSERT(id == id1 && v == 10.0);
    else if (k == 2)
      ASSERT(id == instr1 && v == 5.5);
    e++;
  }
  ASSERT_EQ(e, 4);
}

TEST(writer_counters_interned_descriptor) {
  wt_trace t;
  counter_trace(GP_TW_DESCRIPTOR_INTERNED, &t);
  check_counter_trace(&t, 1, 2, 0x80000001u);
  /* Every sample event names the descriptor by iid. */
  for (size_t i = 0; i < t.n; i++) {
    uint64_t v;
    if (t.p[i].data_id == GP_PB_PACKET_GPU_COUNTER_EVENT)
      ASSERT(wt_u64(t.p[i].data, t.p[i].data_size,
                    GP_PB_GCE_COUNTER_DESCRIPTOR_IID, &v));
  }
  wt_free(&t);
}

TEST(writer_counters_inline_descriptor) {
  wt_trace t;
  counter_trace(GP_TW_DESCRIPTOR_INLINE, &t);
  /* The catalog ids, as in mode 2: the per-activity twin of counter 1
   * (made second) has bit 31. */
  check_counter_trace(&t, 1, 2, 0x80000001u);
  for (size_t i = 0; i < t.n; i++) {
    uint64_t v;
    if (t.p[i].data_id == GP_PB_PACKET_GPU_COUNTER_EVENT) {
      ASSERT(!(t.p[i].flags & GP_PB_SEQ_NEEDS_INCREMENTAL_STATE));
      ASSERT(wt_u64(t.p[i].data, t.p[i].data_size, GP_PB_GCE_GPU_ID, &v));
    }
  }
  wt_free(&t);
}

/* ------------------------------------------------------------------ */
/* The dump against Perfetto's own decoding of its conformance traces   */

static char *squeeze(const char *s, size_t n) {
  char *out = malloc(n + 1);
  size_t k = 0;
  bool line_start = true;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (line_start && (c == ' ' || c == '\t'))
      continue;
    if (c == '\n') {
      while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == '\t'))
        k--;
      if (k > 0 && out[k - 1] != '\n')
        out[k++] = '\n';
      line_start = true;
      continue;
    }
    line_start = false;
    out[k++] = c;
  }
  out[k] = '\0';
  return out;
}

TEST(writer_dump_matches_perfetto_decoding) {
  const char *shared = getenv("GPUPERF_SHARED");
  if (!shared || !*shared)
    SKIP("GPUPERF_SHARED is not set (run through `make test`)");
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/conformance", shared);
  DIR *dp = opendir(dir);
  if (!dp)
    SKIP("no conformance cases in %s", dir);
  struct dirent *de;
  int cases = 0;
  while ((de = readdir(dp))) {
    if (de->d_name[0] == '.')
      continue;
    char pb[1400], txt[1400];
    snprintf(pb, sizeof(pb), "%s/%s/trace.pb", dir, de->d_name);
    snprintf(txt, sizeof(txt), "%s/%s/trace.decoded.txtpb", dir, de->d_name);
    if (access(pb, R_OK) != 0 || access(txt, R_OK) != 0)
      continue;
    size_t n, tn;
    uint8_t *data = wt_read_file(pb, &n);
    uint8_t *want = wt_read_file(txt, &tn);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ASSERT_OK(gp__trace_dump(data, n, mem));
    fclose(mem);
    char *a = squeeze(text, len), *b = squeeze((const char *)want, tn);
    if (strcmp(a, b) != 0) {
      size_t i = 0, line = 1;
      while (a[i] && a[i] == b[i])
        line += a[i++] == '\n';
      gp_test_fail(__FILE__, __LINE__,
                   "%s: our dump differs from Perfetto's at line %zu:\n"
                   "    ours:     %.60s\n    Perfetto: %.60s",
                   de->d_name, line, a + i, b + i);
    }
    free(a);
    free(b);
    free(text);
    free(data);
    free(want);
    cases++;
  }
  closedir(dp);
  ASSERT_GT(cases, 20);
}

/* A sink that loses the n-th write. */
typedef struct flaky {
  wt_membuf m;
  int writes, fail_at;
} flaky;

static int flaky_sink(void *user, const uint8_t *data, size_t len) {
  flaky *f = user;
  if (++f->writes == f->fail_at)
    return GP_EIO;
  return wt_mem_sink(&f->m, data, len);
}

TEST(writer_failed_write_is_marked_and_recovered) {
  flaky f = {{NULL, 0, 0}, 0, 2};
  gp__tw_options o;
  memset(&o, 0, sizeof(o));
  o.sequence_id = 3;
  o.deterministic = true;
  o.render_stages = true;
  o.fd = -1;
  o.sink = flaky_sink;
  o.sink_user = &f;
  gp__tw *w;
  ASSERT_OK(gp__tw_create(&o, &w));
  _Alignas(8) uint8_t buf[4096];
  for (int b = 0; b < 3; b++) { /* three buffers, three writes */
    size_t off = 0;
    wt_put_kernel(buf, &off, (uint64_t)(10 * b + 1), 1000 + 1000 * (uint64_t)b);
    wt_put_kernel(buf, &off, (uint64_t)(10 * b + 2), 1500 + 1000 * (uint64_t)b);
    gp__tw_consume(w, buf, off);
  }
  ASSERT_ERR(gp__tw_finish(w), GP_EIO);
  gp__tw_stats st;
  gp__tw_get_stats(w, &st);
  ASSERT_EQ(st.sink_errors, 1);
  gp__tw_destroy(w);
  wt_trace t;
  wt_parse(&t, f.m.p, f.m.n);
  ASSERT_EQ(t.valid, t.size); /* whole packets only */
  wt_check_sequences(&t);     /* the loss is said, the state cleared */
  /* The second buffer's two kernels were lost; the first and the third
   * are there, the third's entries defined again. */
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 4);
  bool marked = false;
  for (size_t i = 0; i < t.n; i++)
    marked |= t.p[i].dropped;
  ASSERT(marked);
  wt_free(&t);
}

/* One integer from a query on a trace in memory. */
static int64_t tp_int(gp_tp *tp, const char *sql) {
  gp_tp_rows *rows;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp, sql, &rows, &err));
  ASSERT_EQ(gp_tp_rows_next(rows, &err), 1);
  int64_t v = gp_tp_rows_int(rows, 0);
  gp_tp_rows_destroy(rows);
  return v;
}

/* GPU work without start and end (a failed command) is an instant at the
 * time it was queued; without that either it is not drawn but counted. */
TEST(writer_untimed_gpu_work) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, 0);
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  wt_put_kernel(buf, &off, 1, 1000);
  gp_activity_kernel *failed = (gp_activity_kernel *)(buf + off);
  wt_put_kernel(buf, &off, 2, 2000);
  failed->start = failed->end = 0;
  failed->queued = 1900;
  gp_activity_kernel *lost = (gp_activity_kernel *)(buf + off);
  wt_put_kernel(buf, &off, 3, 3000);
  lost->start = lost->end = lost->queued = 0;
  wt_put_kernel(buf, &off, 4, 4000);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_stats st;
  gp__tw_get_stats(w, &st);
  ASSERT_EQ(st.untimed, 1);
  gp__tw_destroy(w);

  gp_tp *tp;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open_buffer(m.p, m.n, "untimed", NULL, &tp, &err));
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM gpu_slice"), 3);
  ASSERT_EQ(tp_int(tp, "SELECT ts * 10 + (dur = 0) FROM gpu_slice "
                       "ORDER BY ts LIMIT 1 OFFSET 1"),
            19001);
  ASSERT_EQ(tp_int(tp, "SELECT max(c.value) FROM counter c JOIN "
                       "counter_track t ON t.id = c.track_id WHERE t.name = "
                       "'gpuperf untimed GPU work'"),
            1);
  gp_tp_close(tp);
  free(m.p);
}

/* Device clock snapshots: every one the clock took is written, in order,
 * however many came between two buffers; those the clock could not keep
 * for a writer that lagged too far are a loss the trace marks. */
TEST(writer_device_snapshots_all_or_marked_lost) {
  uint32_t clk, dev;
  ASSERT_OK(gp_clock_register("wclock", NULL, NULL, &clk));
  gp_device_info di;
  memset(&di, 0, sizeof(di));
  di.name = "clocked";
  di.clock_id = clk;
  ASSERT_OK(gp__device_register(&di, NULL, 0, &dev));
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, 0);
  /* The writer reads nothing until its first buffer: the clock keeps all
   * but the oldest `over` for it. */
  const uint64_t over = 10, total = GP_CLOCK_SPILL_MAX + 256 + over;
  for (uint64_t i = 0; i < total; i++) {
    gp_clock_snapshot s = {5 + 10 * i, 1000 + 10 * i, 0};
    ASSERT_OK(gp_clock_add_snapshot(clk, &s));
  }
  _Alignas(8) uint8_t buf[512];
  size_t off = 0;
  wt_put_kernel(buf, &off, 1, 1000 + 10 * 300);
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_stats st;
  gp__tw_get_stats(w, &st);
  ASSERT_EQ(st.clock_lost, over);
  gp__tw_destroy(w);

  wt_trace t;
  wt_parse(&t, m.p, m.n);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  uint64_t next = over;
  size_t marked = 0;
  for (size_t i = 0; i < t.n; i++) {
    const uint8_t *c;
    size_t cs;
    uint64_t id = 0, v = 0;
    if (t.p[i].data_id != GP_PB_PACKET_CLOCK_SNAPSHOT ||
        !wt_sub(t.p[i].data, t.p[i].data_size, GP_PB_CLOCK_SNAPSHOT_CLOCKS, 1,
                &c, &cs) ||
        !wt_u64(c, cs, GP_PB_CLOCK_ID, &id) || id != wt_trace_clock(clk))
      continue;
    ASSERT(wt_u64(c, cs, GP_PB_CLOCK_TIMESTAMP, &v));
    ASSERT_EQ(v, 5 + 10 * next);
    ASSERT_EQ(t.p[i].ts, 1000 + 10 * next);
    if (t.p[i].dropped) {
      ASSERT_EQ(next, over); /* the first one after the loss says so */
      marked++;
    }
    next++;
  }
  ASSERT_EQ(next, total);
  ASSERT_EQ(marked, 1);
  wt_free(&t);
}

/* Time 0 is a time, not an absence: a packet whose data Perfetto places
 * on the timeline (TrackEvent, GpuCounterEvent, render stage, GpuLog)
 * carries its timestamp even when it is 0, else Perfetto drops it
 * (track_event_missing_timestamp, gpu_counters_missing_timestamp). Here
 * an instant marker at time 0, then records lost: the drops counter's
 * values go out too. Descriptors and GpuInfo have no time, and none is
 * written. */
TEST(writer_time_zero_is_written) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw *w = wt_mem_writer(&m, 0);
  _Alignas(8) uint8_t buf[512];
  gp_activity_marker *mk = (gp_activity_marker *)buf;
  memset(mk, 0, sizeof(*mk));
  mk->hdr.kind = GP_ACTIVITY_KIND_MARKER;
  mk->hdr.size = sizeof(*mk);
  mk->flags = GP_ACTIVITY_FLAG_MARKER_INSTANT;
  mk->name_id = gp__string_intern("at zero");
  mk->process_id = mk->thread_id = (uint32_t)getpid();
  gp_activity_dropped *d = (gp_activity_dropped *)(buf + sizeof(*mk));
  memset(d, 0, sizeof(*d));
  d->hdr.kind = GP_ACTIVITY_KIND_DROPPED;
  d->hdr.size = sizeof(*d);
  d->count = 3;
  d->dropped_kind = GP_ACTIVITY_KIND_KERNEL;
  d->reason = GP_DROP_NO_BUFFER;
  gp__tw_consume(w, buf, sizeof(*mk) + sizeof(*d));
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_destroy(w);

  wt_trace t;
  wt_parse(&t, m.p, m.n);
  ASSERT_EQ(t.valid, t.size);
  size_t timed = 0;
  for (size_t i = 0; i < t.n; i++) {
    uint32_t id = t.p[i].data_id;
    if (id == GP_PB_PACKET_TRACK_EVENT ||
        id == GP_PB_PACKET_GPU_COUNTER_EVENT ||
        id == GP_PB_PACKET_GPU_RENDER_STAGE_EVENT ||
        id == GP_PB_PACKET_GPU_LOG) {
      ASSERT(t.p[i].has_ts);
      timed++;
    } else if (id == GP_PB_PACKET_TRACK_DESCRIPTOR ||
               id == GP_PB_PACKET_GPU_INFO) {
      ASSERT(!t.p[i].has_ts);
    }
  }
  ASSERT_GE(timed, 3);

  gp_tp *tp;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open_buffer(t.bytes, t.size, "time0", NULL, &tp, &err));
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM slice WHERE ts = 0 AND dur = 0 "
                       "AND name = 'at zero'"),
            1);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track "
                       "k ON k.id = c.track_id WHERE k.name = "
                       "'gpuperf dropped records'"),
            2);
  /* Records lost before any other time is known: the values are at the
   * writer's clock snapshot, not at the start of the boot clock. */
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM counter c JOIN counter_track "
                       "k ON k.id = c.track_id WHERE k.name = "
                       "'gpuperf dropped records' AND c.ts = 0"),
            0);
  gp_tp_close(tp);
  wt_free(&t);
}

/* OVERHEAD records become slices on their thread, named by kind: the
 * kinds that are gpuperf's own "gpuperf ...", which the report counts,
 * and the driver's compiling (CUPTI's DRIVER_COMPILER) by what it is. */
TEST(writer_overhead_slices_named_by_kind) {
  wt_membuf m = {NULL, 0, 0};
  gp__tw_options o;
  memset(&o, 0, sizeof(o));
  o.sequence_id = 7;
  o.render_stages = true; /* not deterministic: real-time overhead kept */
  o.fd = -1;
  o.sink = wt_mem_sink;
  o.sink_user = &m;
  gp__tw *w;
  ASSERT_OK(gp__tw_create(&o, &w));
  _Alignas(8) uint8_t buf[4096];
  size_t off = 0;
  static const uint32_t kinds[] = {
      GP_OVERHEAD_BUFFER_FLUSH, GP_OVERHEAD_INSTRUMENTATION,
      GP_OVERHEAD_RESOURCE, GP_OVERHEAD_DRIVER_COMPILER, 99};
  for (size_t i = 0; i < GP_ARRAY_SIZE(kinds); i++) {
    gp_activity_overhead *r = (gp_activity_overhead *)(buf + off);
    memset(r, 0, sizeof(*r));
    r->hdr.kind = GP_ACTIVITY_KIND_OVERHEAD;
    r->hdr.size = sizeof(*r);
    r->start = 1000 + 1000 * i;
    r->end = r->start + 500;
    r->overhead_kind = kinds[i];
    r->process_id = 42;
    r->thread_id = 43;
    off += sizeof(*r);
  }
  gp__tw_consume(w, buf, off);
  ASSERT_OK(gp__tw_finish(w));
  gp__tw_destroy(w);
  gp_tp *tp;
  gp_tp_error err;
  ASSERT_OK(gp_tp_open_buffer(m.p, m.n, "overhead", NULL, &tp, &err));
  gp_tp_rows *rows;
  ASSERT_OK(gp_tp_query(tp, "SELECT name FROM slice ORDER BY ts", &rows, &err));
  static const char *const want[] = {
      "gpuperf buffer completion", "gpuperf instrumentation",
      "gpuperf resources", "driver compiler (JIT)", "gpuperf overhead"};
  size_t n = 0;
  while (gp_tp_rows_next(rows, &err) == 1) {
    ASSERT_LT(n, GP_ARRAY_SIZE(want));
    ASSERT_STR_EQ(gp_tp_rows_text(rows, 0), want[n]);
    n++;
  }
  ASSERT_EQ(n, GP_ARRAY_SIZE(want));
  gp_tp_rows_destroy(rows);
  gp_tp_close(tp);
  free(m.p);
}
