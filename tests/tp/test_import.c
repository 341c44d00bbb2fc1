/*
 * test_import.c - diff tests of the importer: small traces built with the
 * protobuf writer, a query, the expected CSV. Each covers a rule of
 * gpu-import-spec.md that the conformance cases do not pin down alone:
 * compressed packets, clocks (sequence-scoped, incremental, deferred,
 * unresolvable), incremental state and interning generations, flows in
 * both orders, track compression, machines, unknown fields.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "tp/tputil.h"

#define SEQ_CLEARED 1
#define SEQ_NEEDS 2

/* An inline (mode 1) counter descriptor with one forwards-looking spec. */
static void counter_descriptor(tg *t, uint32_t id, const char *name, int gpu) {
  gp__pb_writer *w = &t->w;
  gp__pb_begin(w, 52);
  gp__pb_begin(w, 1);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, id);
  gp__pb_string(w, 2, name);
  gp__pb_uint(w, 11, 2); /* FORWARDS_LOOKING: values stored as they come */
  gp__pb_end(w);
  gp__pb_end(w);
  gp__pb_int(w, 3, gpu);
  gp__pb_end(w);
}

static void counter_sample(tg *t, uint32_t id, int64_t v) {
  gp__pb_writer *w = &t->w;
  gp__pb_begin(w, 52);
  gp__pb_begin(w, 2);
  gp__pb_uint(w, 1, id);
  gp__pb_int(w, 2, v);
  gp__pb_end(w);
  gp__pb_end(w);
}

static void snapshot2(tg *t, uint32_t c1, uint64_t t1, uint32_t c2, uint64_t t2,
                      bool incremental1, uint64_t unit1) {
  gp__pb_writer *w = &t->w;
  gp__pb_begin(w, 6);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, c1);
  gp__pb_uint(w, 2, t1);
  if (incremental1)
    gp__pb_uint(w, 3, 1);
  if (unit1)
    gp__pb_uint(w, 4, unit1);
  gp__pb_end(w);
  gp__pb_begin(w, 1);
  gp__pb_uint(w, 1, c2);
  gp__pb_uint(w, 2, t2);
  gp__pb_end(w);
  gp__pb_end(w);
}

static const char counters_sql[] =
    "SELECT ts, cast_int!(value) AS v FROM counter ORDER BY ts, v";

/* A few counter packets, as plain bytes. */
static uint8_t *counter_trace(size_t *n) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 5, 1, 0);
  counter_descriptor(&t, 1, "c", 0);
  tg_end(&t);
  for (int i = 0; i < 3; i++) {
    tg_packet(&t, 10 + (uint64_t)i, 1, 0);
    counter_sample(&t, 1, 100 + i);
    tg_end(&t);
  }
  uint8_t *p = tg_bytes(&t, n);
  tg_fini(&t);
  return p;
}

TEST(tp_import_compressed_packets) {
  size_t n;
  uint8_t *plain = counter_trace(&n);
  uLongf zn = compressBound(n);
  uint8_t *z = malloc(zn);
  ASSERT_EQ(compress(z, &zn, plain, n), Z_OK);
  /* The same packets, inflated from compressed_packets (field 50). */
  tg t;
  tg_init(&t);
  tg_packet(&t, 0, 0, 0);
  gp__pb_bytes(&t.w, 50, z, zn);
  tg_end(&t);
  gp_tp *a = tp_open_bytes(plain, n), *b = tp_open_tg(&t);
  char *ca = tp_csv(a, counters_sql), *cb = tp_csv(b, counters_sql);
  tp_assert_csv(cb, ca, "compressed == plain");
  tp_assert_csv(ca, "\"ts\",\"v\"\n10,100\n11,101\n12,102", "plain");
  free(ca);
  free(cb);
  gp_tp_close(a);
  gp_tp_close(b);
  tg_fini(&t);

  /* Damaged compressed data: an error at the field, not a crash. */
  z[zn / 2] ^= 0x55;
  z[zn / 2 + 1] ^= 0xaa;
  tg_init(&t);
  tg_packet(&t, 0, 0, 0);
  gp__pb_bytes(&t.w, 50, z, zn - 3);
  tg_end(&t);
  size_t bn;
  uint8_t *bad = tg_bytes(&t, &bn);
  gp_tp *tp = NULL;
  gp_tp_error err;
  ASSERT_ERR(gp_tp_open_buffer(bad, bn, "z.pftrace", NULL, &tp, &err),
             GP_ECORRUPT);
  ASSERT(tp == NULL);
  ASSERT(strstr(err.message, "compressed_packets") != NULL);
  ASSERT(strstr(err.message, "z.pftrace: offset ") != NULL);
  free(bad);
  tg_fini(&t);
  free(z);
  free(plain);
}

TEST(tp_import_clocks) {
  tg t;
  tg_init(&t);
  /* Sequence 5: clock 64 is incremental, in microseconds: 10 us is
   * BOOTTIME 5000 ns. */
  tg_packet(&t, 0, 5, 0);
  snapshot2(&t, 64, 10, 6, 5000, true, 1000);
  tg_end(&t);
  tg_packet(&t, 1, 1, 0);
  counter_descriptor(&t, 1, "c", 0);
  tg_end(&t);
  /* +1 us and +2 us: clock 64 at 11 and 13 us -> 6000 and 8000 ns. */
  tg_packet(&t, 1, 5, 0);
  gp__pb_uint(&t.w, 58, 64);
  counter_sample(&t, 1, 1);
  tg_end(&t);
  tg_packet(&t, 2, 5, 0);
  gp__pb_uint(&t.w, 58, 64);
  counter_sample(&t, 1, 2);
  tg_end(&t);
  /* Sequence 6 has its own clock 64 (not incremental) through defaults. */
  tg_packet(&t, 0, 6, 0);
  snapshot2(&t, 64, 100, 6, 7000, false, 0);
  tg_end(&t);
  tg_packet(&t, 0, 6, 0);
  gp__pb_begin(&t.w, 59);
  gp__pb_uint(&t.w, 58, 64);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 150, 6, 0); /* -> 7050 */
  counter_sample(&t, 1, 3);
  tg_end(&t);
  /* Clock 200 converts only through a snapshot that comes later: the
   * packet waits until the end of the file. */
  tg_packet(&t, 20, 1, 0);
  gp__pb_uint(&t.w, 58, 200);
  counter_sample(&t, 1, 4);
  tg_end(&t);
  tg_packet(&t, 0, 1, 0);
  snapshot2(&t, 200, 0, 6, 9000, false, 0);
  tg_end(&t);
  /* Clock 300 never converts: dropped with a stat. */
  tg_packet(&t, 5, 1, 0);
  gp__pb_uint(&t.w, 58, 300);
  counter_sample(&t, 1, 5);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp, counters_sql, "\"ts\",\"v\"\n6000,1\n7050,3\n8000,2\n9020,4");
  ASSERT_EQ(tp_int(tp, "SELECT value FROM stats WHERE name = "
                       "'clock_sync_failure_undeferrable_packet_loss'"),
            1);
  gp_tp_close(tp);
  tg_fini(&t);
}

/* An interned event name on the current packet. */
static void intern_name(tg *t, uint64_t iid, const char *name) {
  gp__pb_begin(&t->w, 12);
  gp__pb_begin(&t->w, 2);
  gp__pb_uint(&t->w, 1, iid);
  gp__pb_string(&t->w, 2, name);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
}

/* A render stage on legacy queue 0 with a name by iid. */
static void stage_named(tg *t, uint64_t event_id, uint64_t dur,
                        uint64_t name_iid) {
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, event_id);
  gp__pb_uint(&t->w, 2, dur);
  gp__pb_uint(&t->w, 20, name_iid);
  gp__pb_end(&t->w);
}

TEST(tp_import_incremental_state) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1, 7, SEQ_CLEARED);
  intern_name(&t, 1, "first");
  tg_end(&t);
  tg_packet(&t, 10, 7, SEQ_NEEDS);
  stage_named(&t, 1, 5, 1);
  tg_end(&t);
  /* The producer lost data: state invalid until cleared again. */
  tg_packet(&t, 20, 7, SEQ_NEEDS);
  gp__pb_uint(&t.w, 42, 1);
  stage_named(&t, 2, 5, 1);
  tg_end(&t);
  tg_packet(&t, 30, 7, 0);
  intern_name(&t, 2, "ignored");
  tg_end(&t);
  /* A new generation: iid 1 means something else, iid 2 nothing. */
  tg_packet(&t, 40, 7, SEQ_CLEARED);
  intern_name(&t, 1, "second");
  tg_end(&t);
  tg_packet(&t, 50, 7, SEQ_NEEDS);
  stage_named(&t, 3, 5, 1);
  tg_end(&t);
  tg_packet(&t, 60, 7, SEQ_NEEDS);
  stage_named(&t, 4, 5, 2);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp, "SELECT ts, name FROM gpu_slice ORDER BY ts",
            "\"ts\",\"name\"\n10,\"first\"\n50,\"second\"\n60,\"[NULL]\"");
  tp_expect(tp,
            "SELECT name, value FROM stats WHERE name IN "
            "('packet_skipped_seq_needs_incremental_state_invalid', "
            "'interned_data_skipped_incremental_state_invalid', "
            "'sequence_previous_packet_dropped') ORDER BY name",
            "\"name\",\"value\"\n"
            "\"interned_data_skipped_incremental_state_invalid\",1\n"
            "\"packet_skipped_seq_needs_incremental_state_invalid\",1\n"
            "\"sequence_previous_packet_dropped\",1");
  gp_tp_close(tp);
  tg_fini(&t);
}

/* A render stage on legacy queue q with a literal name. */
static void stage(tg *t, uint64_t event_id, uint64_t dur, int32_t q,
                  const char *name, const uint64_t *waits, int nwaits) {
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, event_id);
  gp__pb_uint(&t->w, 2, dur);
  gp__pb_int(&t->w, 3, q);
  gp__pb_string(&t->w, 17, name);
  for (int i = 0; i < nwaits; i++)
    gp__pb_uint(&t->w, 18, waits[i]);
  gp__pb_end(&t->w);
}

/* A track event on the default track, with a GpuCorrelation. */
static void te(tg *t, int type, const char *name, uint64_t submit,
               uint64_t wait) {
  gp__pb_begin(&t->w, 11);
  gp__pb_uint(&t->w, 9, (uint64_t)type);
  if (name)
    gp__pb_string(&t->w, 23, name);
  if (submit || wait) {
    gp__pb_begin(&t->w, 3000);
    if (submit)
      gp__pb_uint(&t->w, 1, submit);
    if (wait)
      gp__pb_uint(&t->w, 2, wait);
    gp__pb_end(&t->w);
  }
  gp__pb_end(&t->w);
}

TEST(tp_import_flows_both_orders) {
  tg t;
  tg_init(&t);
  /* Host submits event 1 before the GPU slice exists. */
  tg_packet(&t, 10, 2, 0);
  te(&t, 1, "submit1", 1, 0);
  tg_end(&t);
  tg_packet(&t, 12, 2, 0);
  te(&t, 2, NULL, 0, 0);
  tg_end(&t);
  /* k3 waits for event 2 before any slice has it. */
  uint64_t w2 = 2, w1 = 1;
  tg_packet(&t, 20, 1, 0);
  stage(&t, 1, 5, 0, "k1", NULL, 0);
  tg_end(&t);
  tg_packet(&t, 21, 1, 0);
  stage(&t, 3, 5, 1, "k3", &w2, 1);
  tg_end(&t);
  tg_packet(&t, 30, 1, 0);
  stage(&t, 2, 5, 0, "k2", &w1, 1);
  tg_end(&t);
  /* The host waits for event 2 after it ran, and submits event 2 late. */
  tg_packet(&t, 40, 2, 0);
  te(&t, 3, "wait2", 0, 2);
  tg_end(&t);
  tg_packet(&t, 41, 2, 0);
  te(&t, 3, "late_submit2", 2, 0);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp,
            "SELECT o.name AS src, i.name AS dst FROM flow f "
            "JOIN slice o ON f.slice_out = o.id JOIN slice i ON f.slice_in = "
            "i.id ORDER BY o.name, i.name",
            "\"src\",\"dst\"\n"
            "\"k1\",\"k2\"\n"
            "\"k2\",\"k3\"\n"
            "\"k2\",\"wait2\"\n"
            "\"late_submit2\",\"k2\"\n"
            "\"submit1\",\"k1\"");
  gp_tp_close(tp);
  tg_fini(&t);
}

TEST(tp_import_overlapping_stages_compress) {
  tg t;
  tg_init(&t);
  /* [100,110) and [110,120) touch: one track. [105,115) overlaps the
   * first: a second. [106,108) overlaps both: a third. [120,130) goes to
   * the first track free at its start. */
  const struct {
    uint64_t ts, dur;
    const char *name;
  } s[] = {{100, 10, "a"},
           {105, 10, "b"},
           {106, 2, "c"},
           {110, 10, "d"},
           {120, 10, "e"}};
  for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
    tg_packet(&t, s[i].ts, 1, 0);
    stage(&t, i + 1, s[i].dur, 0, s[i].name, NULL, 0);
    tg_end(&t);
  }
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp,
            "SELECT s.name, s.track_id - (SELECT min(id) FROM gpu_track) AS "
            "lane, s.depth, t.name AS queue FROM gpu_slice s JOIN gpu_track t "
            "ON s.track_id = t.id ORDER BY s.ts",
            "\"name\",\"lane\",\"depth\",\"queue\"\n"
            "\"a\",0,0,\"Unknown GPU Queue 0\"\n"
            "\"b\",1,0,\"Unknown GPU Queue 0\"\n"
            "\"c\",2,0,\"Unknown GPU Queue 0\"\n"
            "\"d\",0,0,\"Unknown GPU Queue 0\"\n"
            "\"e\",0,0,\"Unknown GPU Queue 0\"");
  gp_tp_close(tp);
  tg_fini(&t);
}

TEST(tp_import_machines) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1, 1, 0); /* a host packet: no adoption */
  counter_descriptor(&t, 1, "host_c", 0);
  tg_end(&t);
  tg_packet(&t, 2, 1, 0);
  gp__pb_uint(&t.w, 98, 7);
  counter_descriptor(&t, 1, "remote_c", 0); /* ids are per machine */
  tg_end(&t);
  tg_packet(&t, 3, 1, 0);
  gp__pb_uint(&t.w, 98, 7);
  counter_sample(&t, 1, 70);
  tg_end(&t);
  tg_packet(&t, 4, 1, 0);
  counter_sample(&t, 1, 10);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp, "SELECT id, raw_id FROM machine ORDER BY id",
            "\"id\",\"raw_id\"\n0,0\n1,7");
  tp_expect(tp, "SELECT gpu, machine_id FROM gpu ORDER BY machine_id",
            "\"gpu\",\"machine_id\"\n0,0\n0,1");
  tp_expect(tp,
            "SELECT t.name, t.machine_id, c.ts, cast_int!(c.value) AS v "
            "FROM counter c JOIN counter_track t ON c.track_id = t.id "
            "ORDER BY c.ts",
            "\"name\",\"machine_id\",\"ts\",\"v\"\n"
            "\"remote_c\",1,3,70\n\"host_c\",0,4,10");
  gp_tp_close(tp);
  tg_fini(&t);
}

TEST(tp_import_unknown_fields_skipped) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 10, 1, 0);
  gp__pb_uint(&t.w, 900, 1);     /* unknown varint */
  gp__pb_fixed32(&t.w, 901, 7);  /* unknown fixed32 */
  gp__pb_string(&t.w, 902, "x"); /* unknown bytes */
  gp__pb_begin(&t.w, 53);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_uint(&t.w, 2, 5);
  gp__pb_fixed64(&t.w, 77, 9); /* unknown in the event */
  gp__pb_begin(&t.w, 78);      /* unknown nested message */
  gp__pb_uint(&t.w, 1, 2);
  gp__pb_end(&t.w);
  gp__pb_string(&t.w, 17, "kept");
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 11, 1, 0);
  gp__pb_begin(&t.w, 38); /* BatteryCounters: not imported, counted */
  gp__pb_end(&t.w);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp, "SELECT ts, dur, name FROM gpu_slice",
            "\"ts\",\"dur\",\"name\"\n10,5,\"kept\"");
  ASSERT_EQ(tp_int(tp, "SELECT value FROM stats WHERE name = "
                       "'packet_type_not_imported'"),
            1);
  gp_tp_close(tp);
  tg_fini(&t);
}

/* A TrackDescriptor for a process, a thread, a child or a counter. */
static void descriptor(tg *t, uint64_t uuid, uint64_t parent, int pid, int tid,
                       const char *name, bool counter) {
  gp__pb_writer *w = &t->w;
  gp__pb_begin(w, 60);
  gp__pb_uint(w, 1, uuid);
  if (parent)
    gp__pb_uint(w, 5, parent);
  if (pid && !tid) {
    gp__pb_begin(w, 3);
    gp__pb_int(w, 1, pid);
    gp__pb_string(w, 6, name);
    gp__pb_end(w);
  } else if (tid) {
    gp__pb_begin(w, 4);
    gp__pb_int(w, 1, pid);
    gp__pb_int(w, 2, tid);
    gp__pb_string(w, 5, name);
    gp__pb_end(w);
  } else {
    gp__pb_string(w, 2, name);
  }
  if (counter) {
    gp__pb_begin(w, 8);
    gp__pb_uint(w, 3, 3);    /* UNIT_SIZE_BYTES */
    gp__pb_uint(w, 4, 1024); /* unit multiplier */
    gp__pb_uint(w, 5, 1);    /* incremental */
    gp__pb_end(w);
  }
  gp__pb_end(w);
}

static void te_on(tg *t, uint64_t track, int type, const char *name,
                  const char *cat) {
  gp__pb_begin(&t->w, 11);
  gp__pb_uint(&t->w, 9, (uint64_t)type);
  gp__pb_uint(&t->w, 11, track);
  if (name)
    gp__pb_string(&t->w, 23, name);
  if (cat)
    gp__pb_string(&t->w, 22, cat);
}

TEST(tp_import_track_events) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1, 3, SEQ_CLEARED);
  descriptor(&t, 100, 0, 42, 0, "app", false);
  tg_end(&t);
  tg_packet(&t, 1, 3, 0);
  descriptor(&t, 101, 100, 42, 43, "main", false);
  tg_end(&t);
  tg_packet(&t, 1, 3, 0);
  descriptor(&t, 102, 101, 0, 0, "child", false);
  tg_end(&t);
  tg_packet(&t, 1, 3, 0);
  descriptor(&t, 103, 100, 0, 0, "mem", true);
  tg_end(&t);
  /* outer [10, 50) with inner [20, 30) and an instant at 25. */
  tg_packet(&t, 10, 3, 0);
  te_on(&t, 101, 1, "outer", "gpu,api");
  gp__pb_begin(&t.w, 4); /* debug annotations */
  gp__pb_string(&t.w, 10, "n");
  gp__pb_int(&t.w, 4, -3);
  gp__pb_end(&t.w);
  gp__pb_begin(&t.w, 4);
  gp__pb_string(&t.w, 10, "d");
  gp__pb_begin(&t.w, 11);
  gp__pb_string(&t.w, 10, "k");
  gp__pb_string(&t.w, 6, "v");
  gp__pb_end(&t.w);
  gp__pb_begin(&t.w, 12);
  gp__pb_double(&t.w, 5, 1.5);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 20, 3, 0);
  te_on(&t, 101, 1, "inner", NULL);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 25, 3, 0);
  te_on(&t, 101, 3, "mark", NULL);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 30, 3, 0);
  te_on(&t, 101, 2, NULL, NULL);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 50, 3, 0);
  te_on(&t, 101, 2, NULL, NULL);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 60, 3, 0);
  te_on(&t, 102, 3, "child_mark", NULL);
  gp__pb_end(&t.w);
  tg_end(&t);
  /* Counter: incremental, in KiB: 1 then +2 -> 1024, 3072 bytes. */
  tg_packet(&t, 70, 3, 0);
  te_on(&t, 103, 4, NULL, NULL);
  gp__pb_int(&t.w, 30, 1);
  gp__pb_end(&t.w);
  tg_end(&t);
  tg_packet(&t, 80, 3, 0);
  te_on(&t, 103, 4, NULL, NULL);
  gp__pb_int(&t.w, 30, 2);
  gp__pb_end(&t.w);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp,
            "SELECT s.ts, s.dur, s.name, s.depth, p.name AS parent, "
            "s.category FROM slice s LEFT JOIN slice p ON s.parent_id = p.id "
            "ORDER BY s.ts",
            "\"ts\",\"dur\",\"name\",\"depth\",\"parent\",\"category\"\n"
            "10,40,\"outer\",0,\"[NULL]\",\"gpu,api\"\n"
            "20,10,\"inner\",1,\"outer\",\"[NULL]\"\n"
            "25,0,\"mark\",2,\"inner\",\"[NULL]\"\n"
            "60,0,\"child_mark\",0,\"[NULL]\",\"[NULL]\"");
  tp_expect(tp,
            "SELECT key, flat_key, value_type, display_value FROM args WHERE "
            "arg_set_id = (SELECT arg_set_id FROM slice WHERE name = "
            "'outer') ORDER BY id",
            "\"key\",\"flat_key\",\"value_type\",\"display_value\"\n"
            "\"debug.n\",\"debug.n\",\"int\",\"-3\"\n"
            "\"debug.d.k\",\"debug.d.k\",\"string\",\"v\"\n"
            "\"debug.d[0]\",\"debug.d\",\"real\",\"1.5\"");
  tp_expect(tp,
            "SELECT t.type, t.name, th.tid, th.name AS thread, p.pid, "
            "p.name AS process FROM thread_track t JOIN thread th USING (utid) "
            "JOIN process p USING (upid) ORDER BY t.id",
            "\"type\",\"name\",\"tid\",\"thread\",\"pid\",\"process\"\n"
            /* Perfetto's names: a thread's own descriptor is its
             * execution track (unnamed), a child merges by name. */
            "\"thread_execution\",\"[NULL]\",43,\"main\",42,\"app\"\n"
            "\"thread_merged_track_event\",\"child\",43,\"main\",42,"
            "\"app\"");
  tp_expect(tp,
            "SELECT t.name, t.unit, c.ts, cast_int!(c.value) AS v FROM counter "
            "c JOIN process_counter_track t ON c.track_id = t.id ORDER BY ts",
            "\"name\",\"unit\",\"ts\",\"v\"\n"
            "\"mem\",\"bytes\",70,1024\n\"mem\",\"bytes\",80,3072");
  gp_tp_close(tp);
  tg_fini(&t);
}

TEST(tp_import_trace_bounds) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 100, 1, 0);
  stage(&t, 1, 50, 0, "a", NULL, 0);
  tg_end(&t);
  tg_packet(&t, 120, 1, 0);
  counter_descriptor(&t, 1, "c", 0);
  tg_end(&t);
  tg_packet(&t, 130, 1, 0);
  counter_sample(&t, 1, 1);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp,
            "SELECT start_ts, end_ts, trace_start(), trace_end(), trace_dur() "
            "FROM trace_bounds",
            "\"start_ts\",\"end_ts\",\"trace_start()\",\"trace_end()\","
            "\"trace_dur()\"\n100,150,100,150,50");
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  ASSERT_EQ(info.start_ts, 100);
  ASSERT_EQ(info.end_ts, 150);
  ASSERT_EQ(info.packets, 3);
  gp_tp_close(tp);
  tg_fini(&t);
}

static void vk_mem(tg *t, int source, int op, int64_t ts, uint64_t size,
                   int scope, int type) {
  gp__pb_begin(&t->w, 62);
  gp__pb_uint(&t->w, 1, (uint64_t)source);
  gp__pb_uint(&t->w, 2, (uint64_t)op);
  gp__pb_int(&t->w, 3, ts);
  gp__pb_uint(&t->w, 4, 99);
  gp__pb_uint(&t->w, 6, size);
  if (scope)
    gp__pb_uint(&t->w, 8, (uint64_t)scope);
  if (type >= 0)
    gp__pb_uint(&t->w, 18, (uint64_t)type);
  gp__pb_end(&t->w);
}

TEST(tp_import_vulkan_memory) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1, 1, 0);
  vk_mem(&t, 1, 1, 1, 100, 2, -1); /* driver create, scope OBJECT */
  tg_end(&t);
  tg_packet(&t, 2, 1, 0);
  vk_mem(&t, 1, 1, 2, 50, 2, -1);
  tg_end(&t);
  tg_packet(&t, 3, 1, 0);
  vk_mem(&t, 1, 2, 3, 100, 2, -1); /* destroy */
  tg_end(&t);
  tg_packet(&t, 4, 1, 0);
  vk_mem(&t, 4, 3, 4, 64, 0, 3); /* buffer bind, memory type 3 */
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tp_expect(tp,
            "SELECT t.name, c.ts, cast_int!(c.value) AS v FROM counter c JOIN "
            "counter_track t ON c.track_id = t.id ORDER BY c.ts",
            "\"name\",\"ts\",\"v\"\n"
            "\"vulkan.mem.driver.scope.OBJECT\",1,100\n"
            "\"vulkan.mem.driver.scope.OBJECT\",2,150\n"
            "\"vulkan.mem.driver.scope.OBJECT\",3,50\n"
            "\"vulkan.mem.device.memory.type.3.bind\",4,64");
  tp_expect(tp,
            "SELECT source, operation, timestamp, memory_size, scope, "
            "memory_type FROM vulkan_memory_allocations ORDER BY id",
            "\"source\",\"operation\",\"timestamp\",\"memory_size\",\"scope\","
            "\"memory_type\"\n"
            "\"DRIVER\",\"CREATE\",1,100,\"OBJECT\",\"[NULL]\"\n"
            "\"DRIVER\",\"CREATE\",2,50,\"OBJECT\",\"[NULL]\"\n"
            "\"DRIVER\",\"DESTROY\",3,100,\"OBJECT\",\"[NULL]\"\n"
            "\"GPU_BUFFER\",\"BIND\",4,64,\"[NULL]\",3");
  gp_tp_close(tp);
  tg_fini(&t);
}

/*
 * Packets out of time order, as n samples of one counter whose value is
 * the packet's place in the file: interleaved sorted streams (with equal
 * timestamps across streams), or shuffled (runs of one or two, many
 * ties). Imported from a file (so the input is released as the parse
 * goes) and from memory, the counter rows must come in time order, ties
 * in file order, and all of them: the merge that orders them spans many
 * of the pieces it gives back.
 */
static void out_of_order_trace(tg *t, int n, bool shuffled) {
  tg_init(t);
  tg_packet(t, 1, 1, 0);
  counter_descriptor(t, 1, "c", 0);
  tg_end(t);
  enum { STREAMS = 5 };
  int next[STREAMS] = {0};
  uint32_t seed = 12345;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    uint64_t ts;
    if (shuffled) {
      ts = 10 + (seed >> 8) % (uint32_t)(n / 3);
    } else {
      int s = (int)((seed >> 16) % STREAMS);
      /* Stream 4 repeats stream 0's timestamps: ties across streams. */
      ts = 10 + (uint64_t)next[s]++ * 5 + (uint64_t)(s == 4 ? 0 : s);
    }
    tg_packet(t, ts, 1, 0);
    counter_sample(t, 1, i);
    tg_end(t);
  }
}

TEST(tp_import_orders_packets_stably) {
  static const char inversions[] =
      "SELECT count(*) FROM counter a JOIN counter b ON b.id = a.id + 1 "
      "WHERE b.ts < a.ts OR (b.ts = a.ts AND b.value < a.value)";
  const int n = 70000; /* more than four pieces of the merge */
  for (int shuffled = 0; shuffled < 2; shuffled++) {
    tg t;
    out_of_order_trace(&t, n, shuffled);
    const char *path = gp_test_path(0, "order.pftrace");
    tg_write(&t, path);
    gp_tp *from_file = NULL;
    ASSERT_OK(gp_tp_open(path, NULL, &from_file, NULL));
    gp_tp *from_memory = tp_open_tg(&t);
    gp_tp *both[2] = {from_file, from_memory};
    for (int k = 0; k < 2; k++) {
      ASSERT_EQ(tp_int(both[k], "SELECT count(*) FROM counter"), n);
      ASSERT_EQ(tp_int(both[k], "SELECT sum(cast_int!(value)) FROM counter"),
                (int64_t)n * (n - 1) / 2);
      ASSERT_EQ(tp_int(both[k], inversions), 0);
      gp_tp_close(both[k]);
    }
    tg_fini(&t);
  }
}
