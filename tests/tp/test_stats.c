/*
 * test_stats.c - what Perfetto flags, we flag: the non-zero rows of the
 * `stats` table equal Perfetto's on hostile traces built here (events
 * without timestamps, at time 0, at negative times, without sequence id,
 * out of order, naming interned entries that are not there, interned
 * entries without iid, counters without timestamp).
 *
 * tp_stats_hostile_match_perfetto runs everywhere: our stats against the
 * rows Perfetto v58.2's trace_processor_shell printed for the same bytes.
 * Those rows were obtained by writing each trace below to a file (the
 * hostile_* builders, unchanged since) and running
 *
 *   trace_processor_shell -q q.sql TRACE
 *
 * with q.sql holding STATS_SQL; they are pasted here as Perfetto printed
 * them. tp_stats_live_with_perfetto, where GPUPERF_PERFETTO_TP names
 * that shell, compares both live on the same traces and on every
 * conformance trace.
 *
 * Left out of the comparison, on both sides: Perfetto's timings of its
 * own work (*_duration_ns) and its clock-conversion cache misses
 * (clock_sync_cache_miss), which describe how Perfetto computed, not the
 * trace; and gpuperf's own stats, which Perfetto does not have (GP_ONLY;
 * docs/sql.md says why each is there).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

#define GP_ONLY                                                                \
  "('packet_type_not_imported', 'trace_truncated_bytes', "                     \
  "'sequence_previous_packet_dropped', 'clock_snapshot_invalid')"

#define STATS_SQL                                                              \
  "SELECT name, idx, severity, source, value FROM stats WHERE value != 0 "     \
  "AND name NOT LIKE '%_duration_ns' AND name != 'clock_sync_cache_miss' "     \
  "AND name NOT IN " GP_ONLY " ORDER BY name, idx"

#define SEQ_CLEARED 1u
#define SEQ_NEEDS 2u
#define NEG(x) ((uint64_t) - (int64_t)(x)) /* a negative time, as varint */

/* A packet with an explicit timestamp field, 0 included. */
static void packet_at(tg *t, uint64_t ts, uint32_t seq, uint32_t flags) {
  tg_packet(t, 0, seq, flags);
  gp__pb_uint(&t->w, 8, ts);
}

static void descriptor(tg *t, uint32_t seq, uint64_t uuid, const char *name,
                       bool counter) {
  tg_packet(t, 0, seq, 0);
  gp__pb_begin(&t->w, 60);
  gp__pb_uint(&t->w, 1, uuid);
  gp__pb_string(&t->w, 2, name);
  if (counter) {
    gp__pb_begin(&t->w, 8);
    gp__pb_end(&t->w);
  }
  gp__pb_end(&t->w);
  tg_end(t);
}

/* A TrackEvent of type `type` on uuid, named or counting. */
static void event(tg *t, uint32_t type, uint64_t uuid, const char *name,
                  int64_t value) {
  gp__pb_begin(&t->w, 11);
  gp__pb_uint(&t->w, 9, type);
  gp__pb_uint(&t->w, 11, uuid);
  if (name)
    gp__pb_string(&t->w, 23, name);
  if (type == 4)
    gp__pb_int(&t->w, 30, value);
  gp__pb_end(&t->w);
}

/* Track events: without timestamp, at time 0, at a negative time,
 * without sequence id, out of order; and a counter at time 0 without
 * timestamp, as the writer once wrote its overhead counter. */
static void hostile_track_events(tg *t) {
  tg_packet(t, 0, 1, SEQ_CLEARED);
  tg_end(t);
  descriptor(t, 1, 10, "slices", false);
  descriptor(t, 1, 11, "gpuperf writer overhead", true);
  tg_packet(t, 0, 1, 0); /* no timestamp: dropped */
  event(t, 4, 11, NULL, 0);
  tg_end(t);
  packet_at(t, 0, 1, 0); /* time 0 is a time */
  event(t, 4, 11, NULL, 0);
  tg_end(t);
  packet_at(t, 0, 1, 0);
  event(t, 3, 10, "at zero", 0);
  tg_end(t);
  packet_at(t, 500, 1, 0);
  event(t, 1, 10, "late", 0);
  tg_end(t);
  packet_at(t, 200, 1, 0); /* out of order */
  event(t, 3, 10, "early", 0);
  tg_end(t);
  packet_at(t, 600, 1, 0);
  event(t, 2, 10, NULL, 0);
  tg_end(t);
  packet_at(t, 700, 1, 0); /* an end with nothing open */
  event(t, 2, 10, NULL, 0);
  tg_end(t);
  packet_at(t, NEG(1000), 1, 0); /* negative: dropped */
  event(t, 3, 10, "negative", 0);
  tg_end(t);
  tg_packet(t, 0, 1, 0);
  event(t, 3, 10, "untimed", 0);
  tg_end(t);
  packet_at(t, 800, 0, 0); /* no sequence id: dropped */
  event(t, 3, 10, "unsequenced", 0);
  tg_end(t);
}

/* A render stage of event id `id` at ts: hardware queue, stage and name
 * by iid (0: by plain field / none). */
static void stage(tg *t, uint64_t ts, uint64_t id, uint64_t hwq_iid,
                  uint64_t stage_iid, uint64_t name_iid) {
  packet_at(t, ts, 2, SEQ_NEEDS);
  gp__pb_begin(&t->w, 53);
  gp__pb_uint(&t->w, 1, id);
  gp__pb_uint(&t->w, 2, 10);
  if (hwq_iid)
    gp__pb_uint(&t->w, 13, hwq_iid);
  if (stage_iid)
    gp__pb_uint(&t->w, 14, stage_iid);
  if (name_iid)
    gp__pb_uint(&t->w, 20, name_iid);
  gp__pb_end(&t->w);
  tg_end(t);
}

/* Interned ids that are not there, and interned entries without iid. */
static void hostile_interning(tg *t) {
  tg_packet(t, 0, 2, SEQ_CLEARED);
  gp__pb_begin(&t->w, 12);
  gp__pb_begin(&t->w, 24); /* gpu_specifications iid 1 */
  gp__pb_uint(&t->w, 1, 1);
  gp__pb_string(&t->w, 2, "queue");
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 24); /* no iid */
  gp__pb_string(&t->w, 2, "lost");
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 2); /* event name without iid */
  gp__pb_string(&t->w, 2, "nameless");
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
  stage(t, 100, 1, 1, 0, 0);    /* fine */
  stage(t, 200, 2, 7, 0, 0);    /* unknown queue: dropped */
  stage(t, 300, 3, 1, 8, 0);    /* unknown stage, named after it */
  stage(t, 400, 4, 1, 8, 9);    /* unknown stage and name */
  stage(t, 500, 5, 1, 0, 9);    /* unknown name */
  stage(t, 150, 6, 1, 1, 0);    /* out of order */
  stage(t, NEG(5), 7, 1, 0, 0); /* negative: dropped */
}

/* GPU counters: samples without timestamp (dropped, the descriptor
 * kept), at time 0, and at a negative time. */
static void hostile_counters(tg *t) {
  tg_packet(t, 0, 3, SEQ_CLEARED);
  gp__pb_begin(&t->w, 52);
  gp__pb_begin(&t->w, 1); /* counter_descriptor */
  gp__pb_begin(&t->w, 1); /* spec */
  gp__pb_uint(&t->w, 1, 5);
  gp__pb_string(&t->w, 2, "busy");
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  gp__pb_begin(&t->w, 2); /* a sample, without timestamp */
  gp__pb_uint(&t->w, 1, 5);
  gp__pb_int(&t->w, 2, 1);
  gp__pb_end(&t->w);
  gp__pb_end(&t->w);
  tg_end(t);
  uint64_t times[3] = {0, 100, NEG(50)};
  for (int i = 0; i < 3; i++) {
    packet_at(t, times[i], 3, 0);
    gp__pb_begin(&t->w, 52);
    gp__pb_begin(&t->w, 2);
    gp__pb_uint(&t->w, 1, 5);
    gp__pb_int(&t->w, 2, 2 + i);
    gp__pb_end(&t->w);
    gp__pb_end(&t->w);
    tg_end(t);
  }
}

typedef struct hostile {
  const char *name;
  void (*build)(tg *t);
  const char *perfetto; /* what Perfetto v58.2 printed for STATS_SQL */
} hostile;

static const hostile hostiles[] = {
    {"track_events", hostile_track_events,
     "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n"
     "\"track_event_invalid_timestamp\",\"[NULL]\",\"error\",\"analysis\",1\n"
     "\"track_event_missing_sequence_id\",\"[NULL]\",\"error\",\"analysis\",1\n"
     "\"track_event_missing_timestamp\",\"[NULL]\",\"error\",\"analysis\",2\n"},
    {"interning", hostile_interning,
     "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n"
     "\"interned_data_tokenizer_errors\",\"[NULL]\",\"info\",\"analysis\",8\n"
     "\"trace_sorter_negative_timestamp_dropped\",\"[NULL]\",\"error\","
     "\"trace\",1\n"},
    {"counters", hostile_counters,
     "\"name\",\"idx\",\"severity\",\"source\",\"value\"\n"
     "\"gpu_counters_missing_timestamp\",\"[NULL]\",\"error\",\"trace\",1\n"
     "\"trace_sorter_negative_timestamp_dropped\",\"[NULL]\",\"error\","
     "\"trace\",1\n"},
};
#define NHOSTILE (sizeof(hostiles) / sizeof(hostiles[0]))

/* Writes hostile trace i; its path (gp_test_path() slot 3). */
static const char *hostile_path(size_t i) {
  tg t;
  tg_init(&t);
  hostiles[i].build(&t);
  char name[64];
  snprintf(name, sizeof(name), "hostile_%s.pftrace", hostiles[i].name);
  const char *path = gp_test_path(3, name);
  tg_write(&t, path);
  tg_fini(&t);
  return path;
}

static gp_tp *open_path(const char *path) {
  gp_tp *tp;
  gp_tp_error err;
  int rc = gp_tp_open(path, NULL, &tp, &err);
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, err.message);
  return tp;
}

TEST(tp_stats_hostile_match_perfetto) {
  for (size_t i = 0; i < NHOSTILE; i++) {
    gp_tp *tp = open_path(hostile_path(i));
    char *ours = tp_csv(tp, STATS_SQL);
    tp_assert_csv(ours, hostiles[i].perfetto, hostiles[i].name);
    free(ours);
    gp_tp_close(tp);
  }
}

static void compare_live(const char *shell, const char *trace) {
  gp_tp *tp = open_path(trace);
  char *theirs = tp_perfetto_csv(shell, trace, STATS_SQL);
  char *ours = tp_csv(tp, STATS_SQL);
  tp_assert_csv(ours, theirs, trace);
  free(theirs);
  free(ours);
  gp_tp_close(tp);
}

TEST(tp_stats_live_with_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || access(shell, X_OK) != 0)
    SKIP("GPUPERF_PERFETTO_TP does not name Perfetto's trace_processor_shell: "
         "tp_stats_hostile_match_perfetto's rows stand in for it");
  for (size_t i = 0; i < NHOSTILE; i++)
    compare_live(shell, hostile_path(i));
  tp_each_conformance_trace(compare_live, shell);
}
