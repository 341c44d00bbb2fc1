/*
 * test_sql_cte.c - an interval intersection over a CTE of counter
 * intervals (psql_cte.c): read by tracks where the CTE's body only looks
 * at each interval's track, read from the body otherwise, and in every
 * shape the same rows, with the same errors, as SQLite's own evaluation
 * of the CTE (`AS MATERIALIZED`, which the rewrite leaves alone).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

static const char includes[] = "INCLUDE PERFETTO MODULE counters.intervals;\n"
                               "INCLUDE PERFETTO MODULE intervals.intersect;\n";

/* Counter rows of four tracks: tracks 1 and 3 share partition 'a' and
 * both start at ts 100 (ties across tracks); track 2 has a run of equal
 * values to thin; track 4 is in no row of t. k: more intervals than u,
 * so that u's partitions, in its order, drive the intersection; its
 * integer partitions meet track ids, its real one a value. */
static const char data[] =
    "WITH c(id, ts, track_id, value) AS (VALUES (9, 100, 3, 5.0), "
    "(1, 0, 1, 1.0), (2, 100, 1, 2.0), (3, 200, 1, 4.0), (4, 0, 2, 8.0), "
    "(5, 100, 2, 16.0), (6, 300, 2, 16.0), (7, 350, 2, 16.0), "
    "(8, 400, 2, 3.0), (10, 250, 3, 6.0), (11, 50, 4, 1.5)),\n"
    "t(id, p, name) AS (VALUES (3, 'a', 'x'), (1, 'a', 'x'), (2, 'b', 'x'), "
    "(5, 'c', 'x'), (2, 'b', 'y')),\n"
    "k(id, ts, dur, p, name) AS (VALUES (20, 50, 200, 'a', 'x'), "
    "(21, 90, 300, 'b', 'x'), (22, 0, 1000, NULL, NULL), "
    "(23, 100, 0, 'a', 'x'), (24, 0, 10, 'a', 'x'), (25, 10, 10, 'b', 'y'), "
    "(26, 20, 500, 'b', 'y'), (27, 300, 1, 'a', 'x'), (28, 0, 1000, 'a', "
    "'x'), (29, 999, 1, 'b', 'x'), (30, 600, 100, 'c', 'x'), "
    "(31, 100, 100, 'a', 'y'), (32, 5, 5, NULL, NULL), (33, 0, 1000, 1, 1), "
    "(34, 100, 200, 3, 3), (35, 0, 1000, 16.0, NULL)),\n"
    "u AS%s (%s)\n"
    "SELECT ii.ts, ii.dur, ii.id_0, ii.id_1, %s, printf('%%.17g', u.value) "
    "AS v FROM _interval_intersect!((k, u), (%s)) ii JOIN u ON u.id = "
    "ii.id_1";

/* The query of body with partition columns parts (select: how they come
 * out), u materialized or not. */
static char *query(const char *body, const char *parts, const char *select,
                   bool materialized) {
  size_t n = sizeof(includes) + sizeof(data) + strlen(body) + strlen(parts) +
             strlen(select) + 64;
  char *q = malloc(n);
  int at = snprintf(q, n, "%s", includes);
  snprintf(q + at, n - (size_t)at, data, materialized ? " MATERIALIZED" : "",
           body, select, parts);
  return q;
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of csv (its header first), sorted. */
static char *sorted(const char *csv) {
  char *copy = strdup(csv), *lines[512], *save = NULL;
  int n = 0;
  for (char *l = strtok_r(copy, "\n", &save); l && n < 512;
       l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  ASSERT(n < 512);
  qsort(lines + 1, (size_t)(n > 0 ? n - 1 : 0), sizeof(char *), cmp_line);
  char *out = malloc(strlen(csv) + 2), *o = out;
  for (int i = 0; i < n; i++)
    o += sprintf(o, "%s\n", lines[i]);
  *o = '\0';
  free(copy);
  return out;
}

/* The rows of the query of body. */
static char *rows_of(gp_tp *tp, const char *body, const char *parts,
                     const char *select, bool materialized) {
  char *q = query(body, parts, select, materialized);
  char *csv = tp_csv(tp, q);
  free(q);
  return csv;
}

/*
 * Runs body three ways: as written, materialized, and (where it goes by
 * tracks) with a WHERE term in parentheses that keeps the rewrite to
 * reading the body. The same rows each time; by tracks, in the same
 * order as the body read (the order of rows of equal start times is
 * SQLite's join order, which materializing may change). Read by tracks
 * or not, as by_tracks says.
 */
static void same_rows(gp_tp *tp, const char *body, const char *parts,
                      const char *select, bool by_tracks) {
  char *got = rows_of(tp, body, parts, select, false);
  char *want = rows_of(tp, body, parts, select, true);
  printf("%s\n  by tracks: %s, %d bytes of rows\n", body,
         by_tracks ? "yes" : "no", (int)strlen(want));
  ASSERT(strchr(want, '\n') && strchr(strchr(want, '\n') + 1, '\n'));
  char *a = sorted(got), *b = sorted(want);
  ASSERT_STR_EQ(a, b);
  free(a);
  free(b);
  if (by_tracks) {
    char *twin = malloc(strlen(body) + 16);
    const char *tail = strrchr(body, ')'); /* past the intervals */
    sprintf(twin, "%s %s (1)", body, strstr(tail, "WHERE") ? "AND" : "WHERE");
    char *body_read = rows_of(tp, twin, parts, select, false);
    ASSERT_STR_EQ(got, body_read);
    free(body_read);
    free(twin);
  }
  free(got);
  free(want);
  /* By tracks: the program aggregates with __gp_iv_ci. */
  char *q = query(body, parts, select, false);
  char *last = strstr(q, "WITH c(");
  char *ex = malloc(strlen(q) + 32);
  sprintf(ex, "%sEXPLAIN %s", includes, last);
  char *code = tp_csv(tp, ex);
  ASSERT_EQ(strstr(code, "__gp_iv_ci(") != NULL, by_tracks);
  free(code);
  sprintf(ex, "%sEXPLAIN QUERY PLAN %s", includes, last);
  char *plan = tp_csv(tp, ex);
  ASSERT(strstr(plan, "MATERIALIZE u") == NULL);
  free(plan);
  free(ex);
  free(q);
}

TEST(tp_sql_interval_cte_read_by_tracks) {
  gp_tp *tp = tp_small_trace();
  /* The seed's shape. */
  same_rows(tp,
            "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
            "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id "
            "WHERE t.name = 'x'",
            "p", "ii.p", true);
  /* A track in two rows of t: its intervals twice, one per partition. */
  same_rows(tp,
            "SELECT u.id, u.ts, u.dur, t.p, t.name, u.value FROM "
            "counter_leading_intervals!(c) AS u INNER JOIN t ON u.track_id = "
            "t.id",
            "p, name", "ii.p, ii.name", true);
  /* LEFT JOIN: track 4's intervals with a NULL partition. */
  same_rows(tp,
            "SELECT u.id AS id, u.ts AS ts, u.dur dur, t.p AS p, u.value FROM "
            "counter_leading_intervals!(c) u LEFT JOIN t ON u.track_id = t.id "
            "AND t.name = 'x'",
            "p", "ii.p", true);
  /* No join: the partition is the track itself. */
  same_rows(tp,
            "SELECT id, ts, dur, value, track_id AS p FROM "
            "counter_leading_intervals!((SELECT id, ts, track_id, value FROM "
            "c WHERE track_id != 4))",
            "p", "ii.p", true);
  /* No partition. */
  same_rows(tp, "SELECT id, ts, dur, value FROM counter_leading_intervals!(c)",
            "", "ii.id_0 AS k", true);
  gp_tp_close(tp);
}

TEST(tp_sql_interval_cte_by_tracks_falls_back) {
  gp_tp *tp = tp_small_trace();
  /* Each body looks at more than the track of an interval, or in a way
   * this pass does not read: the intersection reads the body. */
  static const char *const bodies[] = {
      /* a value in WHERE */
      "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
      "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id WHERE "
      "u.value > 2",
      /* a partition from a value */
      "SELECT u.id, u.ts, u.dur, u.value, u.value AS p FROM "
      "counter_leading_intervals!(c) u",
      /* an expression */
      "SELECT u.id, u.ts, u.dur, u.value, t.p || '' AS p FROM "
      "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id",
      /* an order of its own */
      "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
      "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id ORDER BY "
      "u.ts DESC",
      /* parentheses */
      "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
      "counter_leading_intervals!(c) u JOIN t ON (t.id = u.track_id)",
      /* the intervals' ts named dur and the other way round */
      "SELECT u.id, u.dur AS ts, u.ts AS dur, u.value, t.p FROM "
      "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id",
      /* a column of u unqualified beside another table */
      "SELECT u.id, u.ts, u.dur, value, t.p FROM "
      "counter_leading_intervals!(c) u JOIN t ON t.id = u.track_id",
  };
  for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
    same_rows(tp, bodies[i], "p", "ii.p", false);
  gp_tp_close(tp);
}

/* An error either way, with the same message. */
static void same_error(gp_tp *tp, const char *body) {
  char msg[2][512];
  for (int m = 0; m < 2; m++) {
    char *q = query(body, "p", "ii.p", m == 1);
    ASSERT_ERR(tp_fail(tp, q, msg[m], sizeof(msg[m])), GP_ESQL);
    free(q);
  }
  printf("%s\n  %s\n", body, msg[0]);
  ASSERT(strstr(msg[0], "must not be negative") != NULL);
  ASSERT_STR_EQ(msg[0], msg[1]);
}

TEST(tp_sql_interval_cte_by_tracks_errors) {
  gp_tp *tp = tp_small_trace();
  /* A negative ts; a sample after trace_end() (a negative dur). */
  same_error(tp, "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
                 "counter_leading_intervals!((SELECT * FROM c UNION ALL "
                 "SELECT 40, -5, 1, 1.0)) u JOIN t ON t.id = u.track_id");
  same_error(tp, "SELECT u.id, u.ts, u.dur, u.value, t.p FROM "
                 "counter_leading_intervals!((SELECT * FROM c UNION ALL "
                 "SELECT 40, 2000, 2, 1.0)) u JOIN t ON t.id = u.track_id");
  gp_tp_close(tp);
}

/* ------------------------------------------------------------------ */
/* Counter rows by track                                                 */

/* GPU counters "Utilization" and "Other" on two GPUs: runs of equal
 * values, a repeated timestamp, and a NaN (which SQL reads as NULL). */
static gp_tp *counter_trace(void) {
  tg t;
  tg_init(&t);
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < 40; i++) {
      tg_packet(&t, (uint64_t)(10 * i + (i == 7 ? -10 : 0) + g), 3 + g, 0);
      gp__pb_begin(&t.w, 52);
      gp__pb_int(&t.w, 3, g);
      if (i == 0) {
        gp__pb_begin(&t.w, 1);
        for (int s = 1; s <= 2; s++) {
          gp__pb_begin(&t.w, 1);
          gp__pb_uint(&t.w, 1, (uint64_t)s);
          gp__pb_string(&t.w, 2, s == 1 ? "Utilization" : "Other");
          gp__pb_end(&t.w);
        }
        gp__pb_end(&t.w);
      }
      for (int s = 1; s <= 2; s++) {
        gp__pb_begin(&t.w, 2);
        gp__pb_uint(&t.w, 1, (uint64_t)s);
        double v = (double)((i / 3 + s * g) % 4);
        gp__pb_double(&t.w, 3, i == 20 && s == 1 ? NAN : v);
        gp__pb_end(&t.w);
      }
      gp__pb_end(&t.w);
      tg_end(&t);
    }
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  return tp;
}

/* The seed's shape over counter rows chosen by arg; sel: the CTEs before
 * u (with their commas). */
static const char counter_query[] =
    "INCLUDE PERFETTO MODULE counters.intervals;\n"
    "INCLUDE PERFETTO MODULE intervals.intersect;\n"
    "WITH %s"
    "u AS (SELECT u.id, u.ts, u.dur, u.value, gct.ugpu FROM "
    "counter_leading_intervals!(%s) u JOIN gpu_counter_track gct ON gct.id = "
    "u.track_id),\n"
    "k(id, ts, dur, ugpu) AS (VALUES (1, 0, 500, 0), (2, 95, 100, 1), "
    "(3, 200, 0, 0), (4, 150, 60, 0))\n"
    "SELECT ii.ts, ii.dur, ii.id_0, ii.id_1, ii.ugpu, printf('%%.17g', "
    "u.value) AS v FROM _interval_intersect!((k, u), (ugpu)) ii JOIN u ON "
    "u.id = ii.id_1";

static char *counter_rows_of(gp_tp *tp, const char *ctes, const char *arg,
                             bool explain) {
  char q[4096];
  snprintf(q, sizeof(q), counter_query, ctes, arg);
  if (explain) {
    char *w = strstr(q, "WITH");
    memmove(w + 8, w, strlen(w) + 1);
    memcpy(w, "EXPLAIN ", 8);
  }
  return tp_csv(tp, q);
}

/* The counter rows of arg by track (or not, as by_tracks says): the same
 * rows, in the same order, as with a WHERE term in parentheses, which
 * keeps the rewrite to reading them row by row. */
static void same_counter_rows(gp_tp *tp, const char *ctes, const char *arg,
                              bool by_tracks) {
  char twin[1024];
  size_t n = strlen(arg);
  if (arg[0] == '(')
    snprintf(twin, sizeof(twin), "%.*s %s (1))", (int)(n - 1), arg,
             strstr(arg, "WHERE") ? "AND" : "WHERE");
  else
    snprintf(twin, sizeof(twin), "(SELECT * FROM %s WHERE (1))", arg);
  char *got = counter_rows_of(tp, ctes, arg, false);
  char *want = counter_rows_of(tp, ctes, twin, false);
  printf("%s\n  by tracks: %s, %d bytes of rows\n", arg,
         by_tracks ? "yes" : "no", (int)strlen(want));
  ASSERT(strchr(want, '\n') && strchr(strchr(want, '\n') + 1, '\n'));
  ASSERT_STR_EQ(got, want);
  free(got);
  free(want);
  char *code = counter_rows_of(tp, ctes, arg, true);
  ASSERT_EQ(strstr(code, "__gp_ci_tracks(") != NULL, by_tracks);
  free(code);
  code = counter_rows_of(tp, ctes, twin, true);
  ASSERT(strstr(code, "__gp_ci_tracks(") == NULL);
  free(code);
}

TEST(tp_sql_counter_rows_by_tracks) {
  gp_tp *tp = counter_trace();
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM counter"), 100);
  ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM counter WHERE value IS NULL"), 2);
  /* The seed's. */
  same_counter_rows(tp, "",
                    "(SELECT c.id, c.ts, c.track_id, c.value FROM counter c "
                    "JOIN gpu_counter_track gct ON gct.id = c.track_id WHERE "
                    "gct.name = 'Utilization')",
                    true);
  /* The whole table; a track twice (each of its rows twice). */
  same_counter_rows(tp, "", "counter", true);
  same_counter_rows(tp,
                    "d AS (SELECT id AS tid FROM gpu_counter_track UNION ALL "
                    "SELECT id FROM gpu_counter_track WHERE name = 'Other'),\n",
                    "(SELECT c.value, c.track_id, c.ts, c.id, d.tid FROM "
                    "counter AS c JOIN d ON c.track_id = d.tid)",
                    true);
  /* Not by tracks: a value looked at; other columns under those names; a
   * CTE named counter. */
  same_counter_rows(tp, "",
                    "(SELECT c.id, c.ts, c.track_id, c.value FROM counter c "
                    "WHERE c.value > 1)",
                    false);
  same_counter_rows(tp, "",
                    "(SELECT c.id, c.ts AS ts, c.track_id, c.id AS value FROM "
                    "counter c)",
                    false);
  same_counter_rows(
      tp, "counter AS (SELECT * FROM main.counter WHERE value < 3),\n",
      "counter", false);
  /* A temporary view named counter: the query reads it, not the table. */
  tp_expect(tp,
            "CREATE PERFETTO VIEW counter AS SELECT * FROM main.counter "
            "WHERE value < 2; SELECT count(*) AS n FROM counter",
            "\"n\"\n82");
  same_counter_rows(tp, "", "counter", false);
  gp_tp_close(tp);
}
