/*
 * test_systrace.c - system traces, recorded here with Perfetto's own
 * traced, traced_probes and perfetto (scripts/record-systrace.sh), against
 * Perfetto v58.2's own answers on them.
 *
 * tests/data/systrace/queries.txt holds NAME|SQL lines; for each trace
 * there, expected/TRACE/NAME.csv is what trace_processor_shell printed for
 * that query (a query with no rows has no file). Each query listed in
 * `compared` must give those rows byte for byte, ids included: the thread
 * and process ids follow Perfetto's process tracker (src/tp/procs.c), the
 * others its parse order. The stats too, but for three rows that are
 * Perfetto's bookkeeping of its own run (how long its import took, misses
 * of its clock cache), not facts of the trace. Where GPUPERF_PERFETTO_TP
 * names a shell, tp_systrace_live_with_perfetto also asks it directly.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

#define DATA "tests/data/systrace"

/* The queries of queries.txt compared here. */
static const char *const compared[] = {
    "thread",
    "process",
    "process_args",
    "sched",
    "thread_state",
    "counter",
    "counter_track",
    "cpu_counter_track",
    "process_counter_track",
    "track",
    "track_dimension_args",
    "ftrace_event",
    "ftrace_event_args",
    "stats",
    "trace_bounds",
    "gpu_slice_process",
    "gpu_launcher_state",
};

/* The stats rows of Perfetto's own work, which gpuperf does not have. */
static bool bookkeeping(const char *line, size_t len) {
  static const char *const names[] = {"\"clock_sync_cache_miss\"",
                                      "\"guess_trace_type_duration_ns\"",
                                      "\"parse_trace_duration_ns\""};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (len >= strlen(names[i]) && !strncmp(line, names[i], strlen(names[i])))
      return true;
  return false;
}

/* text without Perfetto's bookkeeping rows (in place). */
static void drop_bookkeeping(char *text) {
  char *out = text;
  for (char *l = text; *l;) {
    char *end = strchr(l, '\n');
    size_t len = end ? (size_t)(end - l + 1) : strlen(l);
    if (!bookkeeping(l, len)) {
      memmove(out, l, len);
      out += len;
    }
    l += len;
  }
  *out = 0;
}

/* The SQL of query `name` in queries.txt (malloc'd), or NULL. */
static char *query_sql(const char *queries, const char *name) {
  size_t n = strlen(name);
  for (const char *l = queries; l && *l;) {
    const char *end = strchr(l, '\n');
    size_t len = end ? (size_t)(end - l) : strlen(l);
    if (len > n && !strncmp(l, name, n) && l[n] == '|') {
      char *sql = strndup(l + n + 1, len - n - 1);
      ASSERT_NOT_NULL(sql);
      return sql;
    }
    l = end ? end + 1 : NULL;
  }
  return NULL;
}

/* The traces of the data folder (names without .pftrace), sorted. */
static int traces(char names[][64], int max) {
  DIR *d = opendir(DATA);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    size_t len = strlen(e->d_name);
    if (len > 8 && len < 64 + 8 && !strcmp(e->d_name + len - 8, ".pftrace")) {
      memcpy(names[n], e->d_name, len - 8);
      names[n++][len - 8] = 0;
    }
  }
  closedir(d);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char t[64];
      memcpy(t, names[j], 64);
      memcpy(names[j], names[j - 1], 64);
      memcpy(names[j - 1], t, 64);
    }
  return n;
}

/* Compares every compared query on trace `name`; returns the number that
 * differ (each printed). */
static int check(const char *queries, const char *name) {
  char path[2048];
  snprintf(path, sizeof(path), DATA "/%s.pftrace", name);
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(path, NULL, &tp, &err) != 0) {
    printf("  %s: import failed: %s\n", name, err.message);
    return 1;
  }
  int bad = 0;
  for (size_t q = 0; q < sizeof(compared) / sizeof(compared[0]); q++) {
    char *sql = query_sql(queries, compared[q]);
    if (!sql) {
      printf("  queries.txt has no query %s\n", compared[q]);
      bad++;
      continue;
    }
    snprintf(path, sizeof(path), DATA "/expected/%s/%s.csv", name, compared[q]);
    char *want = tp_read_file(path, NULL);
    char *ours = tp_csv(tp, sql);
    if (want && !strcmp(compared[q], "stats"))
      drop_bookkeeping(want);
    /* No file: Perfetto gave no rows, so ours is the header alone. */
    bool same = want ? strcmp(ours, want) == 0
                     : !strchr(ours, '\n') || !strchr(ours, '\n')[1];
    if (!same) {
      printf("  %s: %s differs from Perfetto's (%s)\n", name, compared[q],
             want ? path : "no rows");
      const char *a = ours, *b = want ? want : "";
      for (int line = 1; *a || *b; line++) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        size_t la = ea ? (size_t)(ea - a) : strlen(a);
        size_t lb = eb ? (size_t)(eb - b) : strlen(b);
        if (la != lb || memcmp(a, b, la)) {
          printf("    line %d\n    ours:     %.*s\n    Perfetto: %.*s\n", line,
                 (int)la, a, (int)lb, b);
          break;
        }
        a = ea ? ea + 1 : a + la;
        b = eb ? eb + 1 : b + lb;
      }
      bad++;
    }
    free(ours);
    free(want);
    free(sql);
  }
  gp_tp_close(tp);
  return bad;
}

TEST(tp_systrace_tables_equal_perfettos) {
  char *queries = tp_read_file(DATA "/queries.txt", NULL);
  if (!queries)
    SKIP(DATA "/queries.txt is absent");
  char names[16][64];
  int n = traces(names, 16);
  ASSERT(n >= 4); /* 3 s compact and plain, 30 s, OpenCL producer */
  int bad = 0;
  for (int i = 0; i < n; i++)
    bad += check(queries, names[i]);
  free(queries);
  ASSERT_EQ(bad, 0);
}

/* The same queries asked of Perfetto's own shell on the same traces: the
 * committed answers are still what v58.2 says. */
TEST(tp_systrace_live_with_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || !*shell)
    SKIP("GPUPERF_PERFETTO_TP is not set: Perfetto's trace_processor_shell "
         "is not at hand");
  char *queries = tp_read_file(DATA "/queries.txt", NULL);
  if (!queries)
    SKIP(DATA "/queries.txt is absent");
  char names[16][64];
  int n = traces(names, 16), bad = 0;
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof(path), DATA "/%s.pftrace", names[i]);
    gp_tp *tp;
    gp_tp_error err;
    ASSERT_EQ(gp_tp_open(path, NULL, &tp, &err), 0);
    for (size_t q = 0; q < sizeof(compared) / sizeof(compared[0]); q++) {
      char *sql = query_sql(queries, compared[q]);
      ASSERT_NOT_NULL(sql);
      char *theirs = tp_perfetto_csv(shell, path, sql);
      char *ours = tp_csv(tp, sql);
      if (theirs && !strcmp(compared[q], "stats"))
        drop_bookkeeping(theirs);
      if (theirs && !tp_csv_equal(ours, theirs)) {
        printf("  %s: %s differs from the live shell\n", names[i], compared[q]);
        bad++;
      }
      free(theirs);
      free(ours);
      free(sql);
    }
    gp_tp_close(tp);
  }
  free(queries);
  ASSERT_EQ(bad, 0);
}

/* Every compared name is a query of queries.txt (a renamed query would
 * otherwise be skipped silently). */
TEST(tp_systrace_queries_known) {
  char *queries = tp_read_file(DATA "/queries.txt", NULL);
  if (!queries)
    SKIP(DATA "/queries.txt is absent");
  for (size_t q = 0; q < sizeof(compared) / sizeof(compared[0]); q++) {
    char *sql = query_sql(queries, compared[q]);
    ASSERT_NOT_NULL(sql);
    free(sql);
  }
  free(queries);
}
