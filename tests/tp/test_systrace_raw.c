/*
 * test_systrace_raw.c - Linux system traces (ftrace, linux.sys_stats) against
 * Perfetto v58.2's own answers, and the ftrace event descriptor table.
 *
 * The traces were recorded by Perfetto's traced/traced_probes, and the
 * CSVs were printed by its trace_processor_shell (see the folder's
 * README.md); gpuperf computed none of them. They are read from
 * $GPUPERF_SYSTRACE_DIR, else tests/data/systrace: each trace absent
 * there is skipped, with the reason.
 *
 * Two kinds of checks:
 *
 *  - by content: the rows this importer's ftrace_event (but sched_switch
 *    and sched_waking, made by the sched importer), its args, the
 *    cpu_counter_track rows and the counters and counter tracks of the
 *    CPU and SysStats tracks, in id order but without their ids (which
 *    depend on rows other importers make) nor utids; and the stats of
 *    FtraceStats and SysStats packets;
 *  - exactly: the queries of the folder's queries.txt against the CSVs
 *    byte for byte, once what the ids depend on is imported (sched_switch
 *    rows for ftrace_event; process memory counters for counter ids):
 *    skipped, with the reason, until then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/ftrace_desc.h"
#include "tp/tputil.h"

static const char *const traces[] = {"sys_3s_compact", "sys_3s_plain",
                                     "sys_30s", "sys_opencl_producer"};
#define NTRACES (sizeof(traces) / sizeof(traces[0]))

/* The counter track types this importer makes (parse_raw.c,
 * parse_sysstats.c). */
static const char *const sys_types[] = {"meminfo",
                                        "vmstat",
                                        "cpustat",
                                        "num_forks",
                                        "cpu_idle",
                                        "cpu_frequency",
                                        "num_irq",
                                        "num_softirq",
                                        "num_irq_total",
                                        "num_softirq_total",
                                        "psi",
                                        "clock_frequency",
                                        "thermal_temperature_sys"};

static const char *dir(void) {
  const char *d = getenv("GPUPERF_SYSTRACE_DIR");
  return d && *d ? d : "tests/data/systrace";
}

/* ------------------------------------------------------------------ */
/* CSV, as trace_processor_shell and gpuperf print it                     */

/* A CSV line split into at most 16 fields, in place (quotes kept). */
typedef struct csvrow {
  char *f[16];
  int n;
} csvrow;

static void split(char *line, csvrow *r) {
  r->n = 0;
  char *p = line;
  for (;;) {
    if (r->n < 16)
      r->f[r->n++] = p;
    bool q = false;
    while (*p && (q || *p != ',')) {
      if (*p == '"')
        q = !q;
      p++;
    }
    if (!*p)
      return;
    *p++ = '\0';
  }
}

/* The lines of a CSV text (modified in place), the header dropped. */
typedef struct lines {
  char **l;
  size_t n;
} lines;

static lines to_lines(char *text) {
  lines ls = {NULL, 0};
  size_t cap = 0;
  bool header = true;
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = '\0';
    size_t len = strlen(p);
    if (len && p[len - 1] == '\r')
      p[len - 1] = '\0';
    if (header)
      header = false;
    else if (*p) {
      if (ls.n == cap) {
        cap = cap ? 2 * cap : 256;
        ls.l = realloc(ls.l, cap * sizeof(char *));
        ASSERT(ls.l != NULL);
      }
      ls.l[ls.n++] = p;
    }
    p = nl ? nl + 1 : NULL;
  }
  return ls;
}

/* A growing text. */
typedef struct buf {
  char *s;
  size_t n, cap;
} buf;

static void put(buf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->cap) {
    b->cap = (b->n + k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    ASSERT(b->s != NULL);
  }
  memcpy(b->s + b->n, s, k + 1);
  b->n += k;
}

static bool is_sys_type(const char *quoted) {
  for (size_t i = 0; i < sizeof(sys_types) / sizeof(sys_types[0]); i++) {
    size_t k = strlen(sys_types[i]);
    if (quoted[0] == '"' && !strncmp(quoted + 1, sys_types[i], k) &&
        quoted[k + 1] == '"' && quoted[k + 2] == '\0')
      return true;
  }
  return false;
}

/* ------------------------------------------------------------------ */
/* The content views, built the same way from both sides' CSVs            */

/* ftrace_event (id, ts, name, cpu, utid, common_flags, ucpu) and its args
 * (id, flat_key, key, value_type, display_value), both CSV texts taken
 * (freed): a line per event but sched_switch and sched_waking,
 * "ts,name,cpu,common_flags,ucpu" then its args. */
static char *raw_view(char *events, char *args) {
  lines ev = to_lines(events), ar = to_lines(args);
  buf b = {NULL, 0, 0};
  put(&b, "");
  size_t j = 0;
  for (size_t i = 0; i < ev.n; i++) {
    csvrow r;
    split(ev.l[i], &r);
    ASSERT_EQ(r.n, 7);
    long long id = atoll(r.f[0]);
    bool mine = strcmp(r.f[2], "\"sched_switch\"") != 0 &&
                strcmp(r.f[2], "\"sched_waking\"") != 0;
    char line[512];
    if (mine) {
      snprintf(line, sizeof(line), "%s,%s,%s,%s,%s", r.f[1], r.f[2], r.f[3],
               r.f[5], r.f[6]);
      put(&b, line);
    }
    for (; j < ar.n && atoll(ar.l[j]) <= id; j++) {
      if (atoll(ar.l[j]) < id || !mine)
        continue;
      put(&b, " | ");
      put(&b, strchr(ar.l[j], ',') + 1);
    }
    if (mine)
      put(&b, "\n");
  }
  free(ev.l);
  free(ar.l);
  free(events);
  free(args);
  return b.s;
}

/* counter (id, ts, track_id, value) and counter_track (id, name, type,
 * unit, machine_id), both taken (freed): the counter tracks of sys_types, then
 * their values "ts,name,type,unit,value", in id order. */
static char *counter_view(char *counters, char *tracks) {
  lines cl = to_lines(counters), tl = to_lines(tracks);
  buf b = {NULL, 0, 0};
  put(&b, "");
  long long *ids = calloc(tl.n + 1, sizeof(long long));
  char **desc = calloc(tl.n + 1, sizeof(char *));
  size_t nt = 0;
  for (size_t i = 0; i < tl.n; i++) {
    csvrow r;
    split(tl.l[i], &r);
    ASSERT_EQ(r.n, 5);
    if (!is_sys_type(r.f[2]))
      continue;
    char line[512];
    snprintf(line, sizeof(line), "%s,%s,%s,%s", r.f[1], r.f[2], r.f[3], r.f[4]);
    ids[nt] = atoll(r.f[0]);
    desc[nt] = strdup(line);
    put(&b, "track ");
    put(&b, line);
    put(&b, "\n");
    nt++;
  }
  for (size_t i = 0; i < cl.n; i++) {
    csvrow r;
    split(cl.l[i], &r);
    ASSERT_EQ(r.n, 4);
    long long t = atoll(r.f[2]);
    for (size_t k = 0; k < nt; k++)
      if (ids[k] == t) {
        put(&b, r.f[1]);
        put(&b, ",");
        put(&b, desc[k]);
        put(&b, ",");
        put(&b, r.f[3]);
        put(&b, "\n");
        break;
      }
  }
  for (size_t k = 0; k < nt; k++)
    free(desc[k]);
  free(desc);
  free(ids);
  free(cl.l);
  free(tl.l);
  free(counters);
  free(tracks);
  return b.s;
}

/* cpu_counter_track (id, name, type, cpu), taken (freed): its rows
 * without their id. */
static char *cpu_track_view(char *text) {
  lines l = to_lines(text);
  buf b = {NULL, 0, 0};
  put(&b, "");
  for (size_t i = 0; i < l.n; i++) {
    put(&b, strchr(l.l[i], ',') + 1);
    put(&b, "\n");
  }
  free(l.l);
  free(text);
  return b.s;
}

/* stats (name, idx, severity, source, value), taken (freed): the rows of
 * the stats of the system packets (FtraceStats, TraceStats, SysStats,
 * CpuInfo). */
static char *stats_view(char *text) {
  static const char *const prefixes[] = {"\"ftrace_cpu_",
                                         "\"ftrace_kprobe_",
                                         "\"meminfo_unknown_keys",
                                         "\"vmstat_unknown_keys",
                                         "\"invalid_cpu_times",
                                         "\"psi_unknown_resource",
                                         "\"traced_",
                                         "\"filter_",
                                         "\"cpu_info_"};
  lines l = to_lines(text);
  buf b = {NULL, 0, 0};
  put(&b, "");
  for (size_t i = 0; i < l.n; i++)
    for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
      if (!strncmp(l.l[i], prefixes[k], strlen(prefixes[k]))) {
        put(&b, l.l[i]);
        put(&b, "\n");
        break;
      }
  free(l.l);
  free(text);
  return b.s;
}

/* ------------------------------------------------------------------ */
/* Running the folder's queries                                          */

/* The SQL of query name in queries.txt (malloc'ed). */
static char *query_sql(const char *name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/queries.txt", dir());
  char *text = tp_read_file(path, NULL);
  ASSERT(text != NULL);
  size_t k = strlen(name);
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n');
    if (!strncmp(p, name, k) && p[k] == '|') {
      size_t len = nl ? (size_t)(nl - p) - k - 1 : strlen(p + k + 1);
      char *sql = strndup(p + k + 1, len);
      free(text);
      return sql;
    }
    p = nl ? nl + 1 : NULL;
  }
  free(text);
  gp_test_fail(__FILE__, __LINE__, "no query %s in queries.txt", name);
  return NULL;
}

/* Perfetto's CSV of query name on trace: the file, or the header alone
 * (no file: an empty answer). */
static char *expected_csv(const char *trace, const char *name) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/expected/%s/%s.csv", dir(), trace, name);
  char *t = tp_read_file(path, NULL);
  return t ? t : strdup("");
}

static char *ours_csv(gp_tp *tp, const char *name) {
  char *sql = query_sql(name);
  char *csv = tp_csv(tp, sql);
  free(sql);
  return csv;
}

/* Opens trace from the folder; NULL (after a message) if it is absent. */
static gp_tp *open_trace(const char *trace) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s.pftrace", dir(), trace);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("  %s: absent (%s)\n", trace, path);
    return NULL;
  }
  fclose(f);
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(path, NULL, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: import failed: %s", path,
                 err.message);
  return tp;
}

/* Compares two views; on a difference prints where and returns 1. */
static int same(const char *trace, const char *what, const char *ours,
                const char *theirs) {
  if (!strcmp(ours, theirs))
    return 0;
  size_t i = 0, line = 1;
  while (ours[i] && ours[i] == theirs[i])
    line += ours[i++] == '\n';
  const char *a = ours + i, *b = theirs + i;
  while (a > ours && a[-1] != '\n')
    a--;
  while (b > theirs && b[-1] != '\n')
    b--;
  int na = (int)strcspn(a, "\n"), nb = (int)strcspn(b, "\n");
  printf("  %s %s: line %zu differs\n    ours:     %.*s\n    perfetto: "
         "%.*s\n",
         trace, what, line, na, a, nb, b);
  return 1;
}

/* ------------------------------------------------------------------ */
/* Tests                                                                  */

TEST(tp_systrace_ftrace_event_rows) {
  int bad = 0, seen = 0;
  for (size_t t = 0; t < NTRACES; t++) {
    gp_tp *tp = open_trace(traces[t]);
    if (!tp)
      continue;
    seen++;
    char *ours = raw_view(ours_csv(tp, "ftrace_event"),
                          ours_csv(tp, "ftrace_event_args"));
    char *theirs = raw_view(expected_csv(traces[t], "ftrace_event"),
                            expected_csv(traces[t], "ftrace_event_args"));
    ASSERT(strlen(theirs) > 0);
    bad += same(traces[t], "ftrace_event and args", ours, theirs);
    free(ours);
    free(theirs);
    gp_tp_close(tp);
  }
  if (!seen)
    SKIP("no system trace in %s", dir());
  ASSERT_EQ(bad, 0);
}

TEST(tp_systrace_cpu_and_sys_stats_counters_and_stats) {
  int bad = 0, seen = 0;
  for (size_t t = 0; t < NTRACES; t++) {
    gp_tp *tp = open_trace(traces[t]);
    if (!tp)
      continue;
    seen++;
    char *ours =
        counter_view(ours_csv(tp, "counter"), ours_csv(tp, "counter_track"));
    char *theirs = counter_view(expected_csv(traces[t], "counter"),
                                expected_csv(traces[t], "counter_track"));
    ASSERT(strlen(theirs) > 0);
    bad += same(traces[t], "counters", ours, theirs);
    free(ours);
    free(theirs);
    ours = cpu_track_view(ours_csv(tp, "cpu_counter_track"));
    theirs = cpu_track_view(expected_csv(traces[t], "cpu_counter_track"));
    bad += same(traces[t], "cpu_counter_track", ours, theirs);
    free(ours);
    free(theirs);
    ours = stats_view(ours_csv(tp, "stats"));
    theirs = stats_view(expected_csv(traces[t], "stats"));
    ASSERT(strlen(theirs) > 0);
    bad += same(traces[t], "ftrace and sys_stats stats", ours, theirs);
    free(ours);
    free(theirs);
    gp_tp_close(tp);
  }
  if (!seen)
    SKIP("no system trace in %s", dir());
  ASSERT_EQ(bad, 0);
}

/* The queries byte for byte, once the rows the ids depend on are made. */
TEST(tp_systrace_exact_tables) {
  static const char *const names[] = {"ftrace_event",  "ftrace_event_args",
                                      "trace_bounds",  "counter",
                                      "counter_track", "cpu_counter_track"};
  int bad = 0, seen = 0, ran = 0;
  char why[256] = "";
  for (size_t t = 0; t < NTRACES; t++) {
    gp_tp *tp = open_trace(traces[t]);
    if (!tp)
      continue;
    seen++;
    bool sched = tp_int(tp, "SELECT count(*) FROM ftrace_event WHERE name = "
                            "'sched_switch'") > 0;
    bool procmem = tp_int(tp, "SELECT count(*) FROM counter_track WHERE "
                              "type = 'process_memory'") > 0;
    for (size_t q = 0; q < sizeof(names) / sizeof(names[0]); q++) {
      bool raw = q < 3;
      if ((raw && !sched) || (!raw && !procmem)) {
        snprintf(why, sizeof(why), "%s",
                 raw ? "no sched_switch rows yet"
                     : "no process memory tracks yet");
        continue;
      }
      ran++;
      char *ours = ours_csv(tp, names[q]);
      char *theirs = expected_csv(traces[t], names[q]);
      if (!tp_csv_equal(ours, theirs))
        bad += same(traces[t], names[q], ours, theirs);
      free(ours);
      free(theirs);
    }
    gp_tp_close(tp);
  }
  if (!seen)
    SKIP("no system trace in %s", dir());
  ASSERT_EQ(bad, 0);
  if (*why)
    SKIP("%d queries compared; some not yet: %s", ran, why);
}

/* Field and event numbers as Perfetto v58.2's protos declare them, quoted
 * from the .proto text:
 *   ftrace_event.proto:  PrintFtraceEvent print = 3;
 *                        SchedSwitchFtraceEvent sched_switch = 4;
 *                        GenericFtraceEvent generic = 327;
 *                        CpuFrequencyFtraceEvent cpu_frequency = 11;
 *                        PsciDomainIdleEnterFtraceEvent
 *                            psci_domain_idle_enter = 615;
 *   sched.proto:   SchedSwitchFtraceEvent { optional string prev_comm = 1;
 *                  optional int32 prev_pid = 2; optional int64 prev_state
 *                  = 4; ... optional int32 next_prio = 7; }
 *   ftrace.proto:  PrintFtraceEvent { optional uint64 ip = 1;
 *                  optional string buf = 2; }
 *   power.proto:   CpuFrequencyFtraceEvent { optional uint32 state = 1;
 *                  optional uint32 cpu_id = 2; }
 *   generic.proto: GenericFtraceEvent { optional string event_name = 1;
 *                  repeated Field field = 2; }
 *   ftrace_event.proto: ScsiDispatchCmdErrorFtraceEvent
 *                            scsi_dispatch_cmd_error = 597;
 *   scsi.proto:    ScsiDispatchCmdErrorFtraceEvent { ... optional bytes
 *                  cmnd = 14; }
 *   sys_stats_counters.proto: VMSTAT_UNSPECIFIED = 0;
 *                  VMSTAT_NR_FREE_PAGES = 1; */
TEST(tp_ftrace_desc_matches_protos) {
  const char *n;
  uint32_t row;
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(3), "print");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(4), "sched_switch");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(11), "cpu_frequency");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(327), "generic");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(615), "psci_domain_idle_enter");
  ASSERT_EQ(gp__tp_ftrace_nevents(), 616u);
  /* timestamp, pid, common_flags and removed numbers name no event */
  ASSERT(gp__tp_ftrace_event_name(1) == NULL);
  ASSERT(gp__tp_ftrace_event_name(5) == NULL);
  ASSERT(gp__tp_ftrace_event_name(616) == NULL);

  ASSERT_EQ(gp__tp_ftrace_field(4, 1, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "prev_comm");
  ASSERT_EQ(gp__tp_ftrace_field(4, 2, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "prev_pid");
  ASSERT_EQ(gp__tp_ftrace_field(4, 4, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "prev_state");
  ASSERT_EQ(gp__tp_ftrace_field(4, 7, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "next_prio");
  ASSERT_EQ(gp__tp_ftrace_field(4, 8, &row, &n), GP_TP_FT_NONE);
  ASSERT_EQ(gp__tp_ftrace_field(3, 1, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "ip");
  ASSERT_EQ(gp__tp_ftrace_field(3, 2, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "buf");
  ASSERT_EQ(gp__tp_ftrace_field(11, 1, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "state");
  ASSERT_EQ(gp__tp_ftrace_field(11, 2, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "cpu_id");
  /* a message field is no arg */
  ASSERT_EQ(gp__tp_ftrace_field(327, 1, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "event_name");
  ASSERT_EQ(gp__tp_ftrace_field(327, 2, &row, &n), GP_TP_FT_NONE);
  /* bytes are strings */
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(597), "scsi_dispatch_cmd_error");
  ASSERT_EQ(gp__tp_ftrace_field(597, 14, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "cmnd");
  ASSERT_STR_EQ(gp__tp_vmstat_name(0), "VmstatUnspecified");
  ASSERT_STR_EQ(gp__tp_vmstat_name(1), "nr_free_pages");
}
