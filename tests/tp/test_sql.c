/*
 * test_sql.c - PerfettoSQL: the interval helpers' exact semantics
 * (half-open intervals, instants, partitions with NULL, several tables,
 * empty inputs), counter_leading_intervals' thinning, macros, modules,
 * CREATE PERFETTO MACRO / TABLE / VIEW / FUNCTION, several statements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

TEST(tp_sql_interval_intersect_semantics) {
  gp_tp *tp = tp_small_trace();
  /* Half-open overlaps; touching ends do not intersect; an instant p is
   * in [a, b) iff a <= p < b; two instants only at the same point. */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE intervals.intersect;\n"
            "WITH a(id, ts, dur) AS (VALUES (1, 0, 10), (2, 10, 10), "
            "(3, 5, 0), (4, 30, 0)),\n"
            "b(id, ts, dur) AS (VALUES (10, 5, 10), (11, 10, 0), (12, 20, 5), "
            "(13, 30, 0), (14, 0, 0))\n"
            "SELECT id_0, id_1, ts, dur FROM _interval_intersect!((a, b), ()) "
            "ORDER BY id_0, id_1",
            "\"id_0\",\"id_1\",\"ts\",\"dur\"\n"
            "1,10,5,5\n1,14,0,0\n2,10,10,5\n2,11,10,0\n3,10,5,0\n4,13,30,0");
  /* Three tables, a partition column with NULL as a value of its own;
   * partitions missing from a table produce nothing. */
  tp_expect(
      tp,
      "INCLUDE PERFETTO MODULE intervals.intersect;\n"
      "WITH a(id, ts, dur, p) AS (VALUES (1, 0, 100, 'x'), "
      "(2, 0, 100, NULL), (3, 0, 100, 'only_a')),\n"
      "b(id, ts, dur, p) AS (VALUES (10, 10, 20, 'x'), (11, 50, 10, NULL), "
      "(12, 0, 10, 'only_b')),\n"
      "c(id, ts, dur, p) AS (VALUES (20, 15, 100, 'x'), (21, 55, 1, NULL))\n"
      "SELECT id_0, id_1, id_2, ts, dur, p FROM "
      "_interval_intersect!((a, b, c), (p)) ORDER BY id_0",
      "\"id_0\",\"id_1\",\"id_2\",\"ts\",\"dur\",\"p\"\n"
      "1,10,20,15,15,\"x\"\n2,11,21,55,1,\"[NULL]\"");
  /* An empty table: an empty result. */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE intervals.intersect;\n"
            "WITH a(id, ts, dur) AS (VALUES (1, 0, 10)),\n"
            "e AS (SELECT * FROM a WHERE 0)\n"
            "SELECT count(*) AS n FROM _interval_intersect!((a, e), ())",
            "\"n\"\n0");
  /* One window: _interval_intersect_single!. */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE intervals.intersect;\n"
            "WITH a(id, ts, dur) AS (VALUES (1, 0, 10), (2, 10, 10), "
            "(3, 5, 0), (4, 30, 0))\n"
            "SELECT id, ts, dur FROM _interval_intersect_single!(5, 10, a) "
            "ORDER BY id",
            "\"id\",\"ts\",\"dur\"\n1,5,5\n2,10,5\n3,5,0");
  /* Other column names. */
  tp_expect(
      tp,
      "INCLUDE PERFETTO MODULE intervals.intersect;\n"
      "WITH a(k, s, d) AS (VALUES (1, 0, 10)),\n"
      "b(k2, s2, d2) AS (VALUES (7, 5, 10))\n"
      "SELECT id_0, id_1, ts, dur FROM _interval_intersect_with_col_names!"
      "(a, k, s, d, b, k2, s2, d2, ())",
      "\"id_0\",\"id_1\",\"ts\",\"dur\"\n1,7,5,5");
  char msg[512];
  ASSERT_ERR(tp_fail(tp,
                     "INCLUDE PERFETTO MODULE intervals.intersect;\n"
                     "WITH a(id, ts, dur) AS (VALUES (1, -5, 10))\n"
                     "SELECT * FROM _interval_intersect!((a, a), ())",
                     msg, sizeof(msg)),
             GP_ESQL);
  ASSERT(strstr(msg, "must not be negative") != NULL);
  gp_tp_close(tp);
}

TEST(tp_sql_interval_intersect_large_is_linearithmic) {
  gp_tp *tp = tp_small_trace();
  /* 200k x 200k intervals: a nested loop would take minutes. Each [2i,
   * 2i+2) meets [2i+1, 2i+3) and [2i-1, 2i+1): 2 n - 1 results. */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE intervals.intersect;\n"
            "WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r "
            "WHERE i < 199999),\n"
            "a AS (SELECT i AS id, 2 * i AS ts, 2 AS dur FROM r),\n"
            "b AS (SELECT i AS id, 2 * i + 1 AS ts, 2 AS dur FROM r)\n"
            "SELECT count(*) AS n, sum(dur) AS d FROM "
            "_interval_intersect!((a, b), ())",
            "\"n\",\"d\"\n399999,399999");
  gp_tp_close(tp);
}

TEST(tp_sql_counter_leading_intervals) {
  gp_tp *tp = tp_small_trace();
  /* Track 1: a run of 5s keeps its first, second and last row; a trailing
   * run of 7s keeps only its first two. Track 2: a held row at ts 0 is
   * never kept (Perfetto's sentinel). The last row lasts to trace_end. */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE counters.intervals;\n"
            "WITH c(id, ts, track_id, value) AS (VALUES "
            "(1, 10, 1, 5.0), (2, 20, 1, 5.0), (3, 30, 1, 5.0), "
            "(4, 40, 1, 5.0), (5, 50, 1, 7.0), (6, 60, 1, 7.0), "
            "(7, 70, 1, 7.0), (8, 80, 1, 7.0), "
            "(9, -2, 2, 3.0), (10, -1, 2, 3.0), (11, 0, 2, 3.0), "
            "(12, 5, 2, 4.0))\n"
            "SELECT id, ts, dur, track_id, value, next_value, delta_value "
            "FROM counter_leading_intervals!(c) ORDER BY track_id, ts",
            "\"id\",\"ts\",\"dur\",\"track_id\",\"value\",\"next_value\","
            "\"delta_value\"\n"
            "1,10,10,1,5.000000,5.000000,\"[NULL]\"\n"
            "2,20,20,1,5.000000,5.000000,0.000000\n"
            "4,40,10,1,5.000000,7.000000,0.000000\n"
            "5,50,10,1,7.000000,7.000000,2.000000\n"
            "6,60,940,1,7.000000,\"[NULL]\",0.000000\n"
            "9,-2,1,2,3.000000,3.000000,\"[NULL]\"\n"
            "10,-1,6,2,3.000000,4.000000,0.000000\n"
            "12,5,995,2,4.000000,\"[NULL]\",1.000000");
  /* Rows come in ts order whatever the input order (ties: input order). */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE counters.intervals;\n"
            "WITH c(id, ts, track_id, value) AS (VALUES (2, 20, 1, 2.0), "
            "(1, 10, 1, 1.0), (3, 30, 1, 3.0))\n"
            "SELECT id, dur FROM counter_leading_intervals!((SELECT * FROM c))",
            "\"id\",\"dur\"\n1,10\n2,10\n3,970");
  gp_tp_close(tp);
}

/* The plan of sql (EXPLAIN QUERY PLAN put before its last statement). */
static char *plan_of(gp_tp *tp, const char *includes, const char *sql) {
  char *q = malloc(strlen(includes) + strlen(sql) + 32);
  sprintf(q, "%sEXPLAIN QUERY PLAN %s", includes, sql);
  char *csv = tp_csv(tp, q);
  free(q);
  return csv;
}

TEST(tp_sql_counter_intervals_lookups) {
  gp_tp *tp = tp_small_trace();
  /* Joined by id, a row comes with its neighbours' values (row 3 was
   * thinned away); 4.0 equals 4, the text '4' and NULL equal nothing. */
  static const char inc[] = "INCLUDE PERFETTO MODULE counters.intervals;\n";
  static const char by_id[] =
      "WITH c(id, ts, track_id, value) AS (VALUES (1, 10, 1, 5.0), "
      "(2, 20, 1, 5.0), (3, 30, 1, 5.0), (4, 40, 1, 5.0), (5, 50, 1, 7.0), "
      "(12, 5, 2, 4.0), (11, 0, 2, 3.0)),\n"
      "x(k) AS (VALUES (4), (12), (3), (4.0), ('4'), (NULL))\n"
      "SELECT x.k, u.id, u.dur, u.next_value, u.delta_value FROM x "
      "JOIN counter_leading_intervals!(c) u ON u.id = x.k ORDER BY u.id, x.k";
  char *sql = malloc(sizeof(inc) + sizeof(by_id));
  sprintf(sql, "%s%s", inc, by_id);
  tp_expect(tp, sql,
            "\"k\",\"id\",\"dur\",\"next_value\",\"delta_value\"\n"
            "4,4,10,7.000000,0.000000\n4.000000,4,10,7.000000,0.000000\n"
            "12,12,995,\"[NULL]\",1.000000");
  free(sql);
  /* ... served by a lookup (idxNum 7: both arguments and the id), not by
   * a pass over every interval per row of x. */
  char *plan = plan_of(tp, inc, by_id);
  ASSERT(strstr(plan, "__gp_counter_intervals VIRTUAL TABLE INDEX 7:") != NULL);
  free(plan);
  /* Joined by track: each track's rows, from a small table of tracks. */
  static const char by_track[] =
      "WITH c(id, ts, track_id, value) AS (VALUES (1, 10, 1, 5.0), "
      "(2, 20, 2, 6.0), (3, 30, 1, 7.0), (4, 40, 3, 8.0)),\n"
      "t(tid) AS (VALUES (2), (1), (9))\n"
      "SELECT t.tid, u.id, u.dur FROM t "
      "JOIN counter_leading_intervals!(c) u ON u.track_id = t.tid";
  sql = malloc(sizeof(inc) + sizeof(by_track));
  sprintf(sql, "%s%s", inc, by_track);
  tp_expect(tp, sql, "\"tid\",\"id\",\"dur\"\n2,2,980\n1,1,20\n1,3,970");
  free(sql);
  plan = plan_of(tp, inc, by_track);
  ASSERT(strstr(plan, "__gp_counter_intervals VIRTUAL TABLE INDEX 11:") !=
         NULL);
  free(plan);
  /* Ids in no order (many runs to merge): every lookup finds its row, as
   * a join that cannot use the lookup does. */
  static const char shuffled[] =
      "INCLUDE PERFETTO MODULE counters.intervals;\n"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE "
      "i < 999),\n"
      "c AS (SELECT (i * 7919) %% 1000 AS id, i AS ts, i %% 3 AS track_id, "
      "CAST(i AS REAL) AS value FROM n)\n"
      "SELECT count(*) AS k, sum(u.dur * x.i + u.delta_value) AS s FROM n x "
      "JOIN counter_leading_intervals!(c) u ON u.id%s = x.i%s";
  char a[1024], b[1024];
  snprintf(a, sizeof(a), shuffled, "", "");
  snprintf(b, sizeof(b), shuffled, " + 0", " + 0");
  char *ca = tp_csv(tp, a), *cb = tp_csv(tp, b);
  ASSERT_STR_EQ(ca, cb);
  ASSERT(strncmp(ca, "\"k\",\"s\"\n1000,", 12) == 0);
  free(ca);
  free(cb);
  gp_tp_close(tp);
}

TEST(tp_sql_interval_inputs_equal_or_not) {
  gp_tp *tp = tp_small_trace();
  /* Aggregates over the same rows share one buffer; a longer, shorter or
   * different input (matching a prefix first) gets its own, right. */
  tp_expect(
      tp,
      "INCLUDE PERFETTO MODULE counters.intervals;\n"
      "WITH a(id, ts, track_id, value) AS (VALUES (1, 10, 1, 1.0), "
      "(2, 20, 1, 2.0), (3, 30, 1, 3.0)),\n"
      "b AS (SELECT * FROM a UNION ALL SELECT 4, 40, 1, 4.0),\n"
      "c AS (SELECT * FROM a WHERE id < 3),\n"
      "d AS (SELECT id, ts, track_id, value + (id = 2) AS value FROM a)\n"
      "SELECT (SELECT group_concat(dur) FROM "
      "counter_leading_intervals!(a)) AS a1,\n"
      "(SELECT group_concat(dur) FROM counter_leading_intervals!(a)) AS "
      "a2,\n"
      "(SELECT group_concat(dur) FROM counter_leading_intervals!(b)) AS b,\n"
      "(SELECT group_concat(dur) FROM counter_leading_intervals!(c)) AS c,\n"
      "(SELECT group_concat(value) FROM counter_leading_intervals!(d)) AS "
      "d,\n"
      "(SELECT group_concat(value) FROM counter_leading_intervals!(a)) AS "
      "a3",
      "\"a1\",\"a2\",\"b\",\"c\",\"d\",\"a3\"\n"
      "\"10,10,970\",\"10,10,970\",\"10,10,10,960\",\"10,980\","
      "\"1.0,3.0,3.0\",\"1.0,2.0,3.0\"");
  gp_tp_close(tp);
}

/* The seed's shape: a CTE of counter intervals, intersected and joined
 * back by id. */
static const char cte_includes[] =
    "INCLUDE PERFETTO MODULE counters.intervals;\n"
    "INCLUDE PERFETTO MODULE intervals.intersect;\n";
static const char cte_query[] =
    "WITH c(id, ts, track_id, value) AS (VALUES (1, 0, 1, 1.0), "
    "(2, 100, 1, 2.0), (3, 200, 1, 4.0), (4, 0, 2, 8.0), (5, 300, 2, 16.0)),\n"
    "u AS%s (SELECT id, ts, dur, value, track_id AS p FROM "
    "counter_leading_intervals!(c)),\n"
    "k(id, ts, dur, p) AS (VALUES (10, 50, 100, 1), (11, 250, 100, 2))\n"
    "SELECT k.id, SUM(u.value * ii.dur) AS s FROM k\n"
    "JOIN _interval_intersect!((k, u), (p)) ii ON ii.id_0 = k.id\n"
    "JOIN u ON u.id = ii.id_1 GROUP BY k.id ORDER BY k.id";

TEST(tp_sql_interval_cte_read_from_its_body) {
  gp_tp *tp = tp_small_trace();
  /* The same sums whether SQLite materializes u (as the query asks) or
   * the intersection reads u's body (the default). */
  for (int m = 0; m < 2; m++) {
    char q[2048], full[2200];
    snprintf(q, sizeof(q), cte_query, m ? " MATERIALIZED" : "");
    snprintf(full, sizeof(full), "%s%s", cte_includes, q);
    tp_expect(tp, full, "\"id\",\"s\"\n10,150.000000\n11,1200.000000");
    char *plan = plan_of(tp, cte_includes, q);
    /* By default u is not materialized: its one remaining use is planned
     * inline and looked up by id. */
    ASSERT_EQ(strstr(plan, "MATERIALIZE u") != NULL, m == 1);
    if (!m)
      ASSERT(strstr(plan, "__gp_counter_intervals VIRTUAL TABLE INDEX 7:") !=
             NULL);
    free(plan);
    /* u's body now runs twice (its copy and its definition): both ask
     * __gp_ci_memo first, so the counter rows are read once. */
    char *ex = malloc(strlen(cte_includes) + strlen(q) + 16);
    sprintf(ex, "%sEXPLAIN %s", cte_includes, q);
    char *code = tp_csv(tp, ex);
    int memos = 0;
    for (const char *at = code; (at = strstr(at, "__gp_ci_memo(")) != NULL;
         at++)
      memos++;
    ASSERT_EQ(memos, m ? 0 : 2);
    free(code);
    free(ex);
  }
  /* Left as written: a column list, a nested WITH, RECURSIVE. */
  static const char *const kept[] = {
      "WITH c(id, ts, track_id, value) AS (VALUES (1, 0, 1, 1.0)),\n"
      "u(id, ts, dur, value, p) AS (SELECT id, ts, dur, value, track_id FROM "
      "counter_leading_intervals!(c)),\n"
      "k(id, ts, dur, p) AS (VALUES (10, 50, 100, 1))\n"
      "SELECT count(*) FROM _interval_intersect!((k, u), (p)) ii "
      "JOIN u ON u.id = ii.id_1",
      "WITH c(id, ts, track_id, value) AS (VALUES (1, 0, 1, 1.0)),\n"
      "u AS (SELECT id, ts, dur, value, track_id AS p FROM "
      "counter_leading_intervals!(c)),\n"
      "k(id, ts, dur, p) AS (VALUES (10, 50, 100, 1))\n"
      "SELECT count(*) FROM _interval_intersect!((k, u), (p)) ii "
      "JOIN u ON u.id = ii.id_1 WHERE EXISTS (WITH z AS (SELECT 1) "
      "SELECT * FROM z)",
  };
  for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
    char full[2200];
    snprintf(full, sizeof(full), "%s%s", cte_includes, kept[i]);
    tp_expect(tp, full, "\"count(*)\"\n1");
    char *plan = plan_of(tp, cte_includes, kept[i]);
    ASSERT(strstr(plan, "MATERIALIZE u") != NULL);
    free(plan);
  }
  gp_tp_close(tp);
}

TEST(tp_sql_macros) {
  gp_tp *tp = tp_small_trace();
  tp_expect(tp,
            "CREATE PERFETTO MACRO add_one(x Expr) RETURNS Expr AS $x + 1;\n"
            "CREATE PERFETTO MACRO twice(x Expr) RETURNS Expr AS "
            "add_one!(add_one!($x));\n"
            "CREATE PERFETTO MACRO cnt(t TableOrSubquery) RETURNS Expr AS "
            "(SELECT count(*) FROM $t);\n"
            "SELECT add_one!(41) AS a, twice!(1) AS b, "
            "cnt!((SELECT 1 UNION ALL SELECT 2)) AS c, 1 != 2 AS d, "
            "'x!(y' AS e, cast_int!(2.9) AS f, cast_string!(7) AS g, "
            "cast_double!(1) AS h",
            "\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\"\n"
            "42,3,2,1,\"x!(y\",2,\"7\",1.000000");
  /* Macros persist for the handle; redefinition needs OR REPLACE. */
  tp_expect(tp, "SELECT add_one!(1) AS a", "\"a\"\n2");
  char msg[512];
  tp_fail(tp, "CREATE PERFETTO MACRO add_one(x Expr) RETURNS Expr AS $x", msg,
          sizeof(msg));
  ASSERT(strstr(msg, "already exists") != NULL);
  tp_expect(tp,
            "CREATE OR REPLACE PERFETTO MACRO add_one(x Expr) RETURNS Expr AS "
            "$x + 100; SELECT add_one!(1) AS a",
            "\"a\"\n101");
  tp_fail(tp, "SELECT nope!(1)", msg, sizeof(msg));
  ASSERT(strstr(msg, "unknown macro nope!") != NULL);
  tp_fail(tp,
          "CREATE PERFETTO MACRO loop(x Expr) RETURNS Expr AS loop!($x);\n"
          "SELECT loop!(1)",
          msg, sizeof(msg));
  ASSERT(strstr(msg, "nested more than") != NULL);
  ASSERT(strstr(msg, "line 2") != NULL);
  tp_fail(tp, "SELECT add_one!(1, 2)", msg, sizeof(msg));
  ASSERT(strstr(msg, "expected 1 arguments, got 2") != NULL);
  tp_fail(tp, "SELECT * FROM counter_leading_intervals!(counter)", msg,
          sizeof(msg));
  ASSERT(strstr(msg, "INCLUDE PERFETTO MODULE counters.intervals") != NULL);
  gp_tp_close(tp);
}

TEST(tp_sql_modules_and_statements) {
  gp_tp *tp = tp_small_trace();
  char msg[512];
  tp_fail(tp, "INCLUDE PERFETTO MODULE no.such.module;", msg, sizeof(msg));
  ASSERT(strstr(msg, "unknown module 'no.such.module'") != NULL);
  ASSERT(strstr(msg, "intervals.intersect") != NULL); /* lists what exists */
  tp_expect(tp,
            "INCLUDE PERFETTO MODULE intervals.*;\n"
            "SELECT count(*) AS n FROM _interval_intersect_single!(0, 5, "
            "(SELECT 1 AS id, 0 AS ts, 10 AS dur))",
            "\"n\"\n1");
  /* Only the last statement's rows come back; comments are fine. */
  tp_expect(tp, "SELECT 1; -- first\n/* block */ SELECT 2 AS two;",
            "\"two\"\n2");
  tp_fail(tp, "SELECT 1;\n\nSELEC 2", msg, sizeof(msg));
  ASSERT(strstr(msg, "line 3") != NULL);
  tp_fail(tp, "SELECT 'unterminated", msg, sizeof(msg));
  ASSERT(strstr(msg, "unterminated") != NULL);
  gp_tp_close(tp);
}

TEST(tp_sql_create_perfetto_objects) {
  gp_tp *tp = tp_small_trace();
  tp_expect(tp,
            "CREATE PERFETTO TABLE t(x LONG, y STRING) AS SELECT 1 AS x, 'a' "
            "AS y;\n"
            "CREATE PERFETTO VIEW v AS SELECT x + 1 AS z FROM t;\n"
            "CREATE PERFETTO INDEX t_x ON t(x);\n"
            "SELECT x, y, z FROM t, v",
            "\"x\",\"y\",\"z\"\n1,\"a\",2");
  tp_expect(tp,
            "CREATE OR REPLACE PERFETTO TABLE t AS SELECT 5 AS x;\n"
            "SELECT x FROM t",
            "\"x\"\n5");
  tp_expect(tp,
            "CREATE PERFETTO FUNCTION plus(a LONG, b LONG) RETURNS LONG AS "
            "SELECT $a + $b;\n"
            "CREATE PERFETTO FUNCTION upto(n LONG) RETURNS TABLE(i LONG) AS "
            "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
            "WHERE i < $n) SELECT i FROM r;\n"
            "SELECT plus(2, 3) AS p, (SELECT sum(i) FROM upto(4)) AS s, "
            "(SELECT count(*) FROM upto(plus(1, 1))) AS c",
            "\"p\",\"s\",\"c\"\n5,10,2");
  /* Functions see the trace's tables. */
  tp_expect(tp,
            "CREATE PERFETTO FUNCTION slice_dur(sid LONG) RETURNS LONG AS "
            "SELECT dur FROM slice WHERE id = $sid;\n"
            "SELECT slice_dur(0) AS d",
            "\"d\"\n1000");
  char msg[512];
  tp_fail(tp, "CREATE PERFETTO WIDGET w AS SELECT 1", msg, sizeof(msg));
  ASSERT(strstr(msg, "expected MACRO, FUNCTION, TABLE, VIEW or INDEX") != NULL);
  gp_tp_close(tp);
}
