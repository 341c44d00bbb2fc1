/*
 * test_api.c - the public API of gpuperf/tp.h: typed rows, errors with
 * messages, output formats, result sets used side by side, and opening
 * files that are not traces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "tp/tputil.h"

static gp_tp *one_slice(void) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 10, 1, 0);
  gp__pb_begin(&t.w, 53);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_uint(&t.w, 2, 5);
  gp__pb_string(&t.w, 17, "k\"1");
  gp__pb_end(&t.w);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  return tp;
}

TEST(tp_api_typed_rows) {
  gp_tp *tp = one_slice();
  gp_tp_rows *r;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp,
                        "SELECT 7 AS i, 2.5 AS d, 'txt' AS s, NULL AS n, "
                        "x'abcd' AS b",
                        &r, &err));
  ASSERT_EQ(gp_tp_rows_columns(r), 5);
  ASSERT_STR_EQ(gp_tp_rows_name(r, 2), "s");
  ASSERT_EQ(gp_tp_rows_next(r, &err), 1);
  ASSERT_EQ(gp_tp_rows_type(r, 0), GP_TP_INT);
  ASSERT_EQ(gp_tp_rows_int(r, 0), 7);
  ASSERT_EQ(gp_tp_rows_type(r, 1), GP_TP_REAL);
  ASSERT_NEAR(gp_tp_rows_real(r, 1), 2.5, 0);
  ASSERT_EQ(gp_tp_rows_type(r, 2), GP_TP_TEXT);
  ASSERT_STR_EQ(gp_tp_rows_text(r, 2), "txt");
  ASSERT_EQ(gp_tp_rows_type(r, 3), GP_TP_NULL);
  ASSERT(gp_tp_rows_text(r, 3) == NULL);
  size_t n;
  const unsigned char *b = gp_tp_rows_blob(r, 4, &n);
  ASSERT_EQ(gp_tp_rows_type(r, 4), GP_TP_BLOB);
  ASSERT_EQ(n, 2);
  ASSERT_EQ(b[0], 0xab);
  ASSERT_EQ(gp_tp_rows_next(r, &err), 0);
  ASSERT_EQ(gp_tp_rows_next(r, &err), 0); /* stays at the end */
  gp_tp_rows_destroy(r);
  gp_tp_rows_destroy(NULL);
  gp_tp_close(tp);
  gp_tp_close(NULL);
}

TEST(tp_api_errors_carry_messages) {
  gp_tp *tp = one_slice();
  gp_tp_rows *r = (gp_tp_rows *)&r;
  gp_tp_error err;
  ASSERT_ERR(gp_tp_query(tp, "SELECT * FROM no_such_table", &r, &err), GP_ESQL);
  ASSERT(r == (gp_tp_rows *)&r); /* untouched on failure */
  ASSERT_EQ(err.code, GP_ESQL);
  ASSERT(strstr(err.message, "no_such_table") != NULL);
  /* An error while stepping. */
  ASSERT_OK(gp_tp_query(tp, "SELECT abs(-9223372036854775807 - 1)", &r, &err));
  ASSERT_ERR(gp_tp_rows_next(r, &err), GP_ESQL);
  ASSERT(strstr(err.message, "overflow") != NULL);
  gp_tp_rows_destroy(r);
  /* Errors are optional to receive. */
  ASSERT_ERR(gp_tp_query(tp, "SELEKT", &r, NULL), GP_ESQL);
  ASSERT_ERR(gp_tp_query(NULL, "SELECT 1", &r, &err), GP_EINVAL);
  gp_tp_close(tp);
}

TEST(tp_api_open_failures) {
  gp_tp *tp = (gp_tp *)&tp;
  gp_tp_error err;
  const char *missing = gp_test_path(0, "missing.pftrace");
  ASSERT_ERR(gp_tp_open(missing, NULL, &tp, &err), -ENOENT);
  ASSERT(tp == (gp_tp *)&tp);
  ASSERT(strstr(err.message, missing) != NULL);
  ASSERT_ERR(gp_tp_open(gp_test_tmpdir(), NULL, &tp, &err), -EISDIR);
  const char *empty = gp_test_path(1, "empty.pftrace");
  FILE *f = fopen(empty, "w");
  fclose(f);
  ASSERT_ERR(gp_tp_open(empty, NULL, &tp, &err), GP_ECORRUPT);
  ASSERT(strstr(err.message, "empty") != NULL);
  /* A protobuf without packets is not a trace either. */
  const char *nopkt = gp_test_path(2, "nopkt.pftrace");
  f = fopen(nopkt, "wb");
  fputc(0x10, f); /* field 2, varint 1 */
  fputc(0x01, f);
  fclose(f);
  ASSERT_ERR(gp_tp_open(nopkt, NULL, &tp, &err), GP_ECORRUPT);
  ASSERT(strstr(err.message, "no trace packets") != NULL);
  gp_tp_options bad = {.size = 4, .flags = 0, .db_path = NULL};
  ASSERT_ERR(gp_tp_open(nopkt, &bad, &tp, &err), GP_EINVAL);
}

TEST(tp_api_formats) {
  gp_tp *tp = one_slice();
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  gp_tp_error err;
  uint64_t rows;
  ASSERT_OK(gp_tp_write(tp,
                        "SELECT ts, dur, name, 0.5 AS h, NULL AS z FROM "
                        "slice",
                        GP_TP_FORMAT_JSON, f, &rows, &err));
  fclose(f);
  ASSERT_EQ(rows, 1);
  ASSERT_STR_EQ(buf, "[\n  {\"ts\": 10, \"dur\": 5, \"name\": \"k\\\"1\", "
                     "\"h\": 0.5, \"z\": null}\n]\n");
  free(buf);
  f = open_memstream(&buf, &n);
  ASSERT_OK(gp_tp_write(tp, "SELECT ts, name FROM slice", GP_TP_FORMAT_TABLE, f,
                        &rows, &err));
  fclose(f);
  ASSERT_STR_EQ(buf, "ts  name\n--  ----\n10  k\"1\n");
  free(buf);
  f = open_memstream(&buf, &n);
  ASSERT_OK(gp_tp_write(tp, "SELECT ts, name, 1.25 AS r FROM slice",
                        GP_TP_FORMAT_CSV, f, &rows, &err));
  fclose(f);
  ASSERT_STR_EQ(buf, "\"ts\",\"name\",\"r\"\n10,\"k\"1\",1.250000\n");
  free(buf);
  /* A statement without rows (or columns) writes nothing but succeeds. */
  f = open_memstream(&buf, &n);
  ASSERT_OK(gp_tp_write(tp, "CREATE PERFETTO TABLE x AS SELECT 1 AS a",
                        GP_TP_FORMAT_CSV, f, &rows, &err));
  fclose(f);
  ASSERT_EQ(rows, 0);
  free(buf);
  gp_tp_close(tp);
}

TEST(tp_api_result_sets_side_by_side) {
  gp_tp *tp = one_slice();
  const char *q =
      "INCLUDE PERFETTO MODULE counters.intervals;\n"
      "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE "
      "i < 1000), c AS (SELECT i AS id, i * 10 AS ts, 1 AS track_id, "
      "i % 7 AS value FROM r)\n"
      "SELECT id, dur FROM counter_leading_intervals!(c) ORDER BY ts";
  gp_tp_rows *a, *b;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp, q, &a, &err));
  ASSERT_EQ(gp_tp_rows_next(a, &err), 1);
  /* A second query while the first is open must not disturb it. */
  ASSERT_OK(gp_tp_query(tp, q, &b, &err));
  int n = 1, m = 0;
  while (gp_tp_rows_next(b, &err) == 1)
    m++;
  gp_tp_rows_destroy(b);
  int64_t last = 0;
  while (gp_tp_rows_next(a, &err) == 1) {
    n++;
    last = gp_tp_rows_int(a, 0);
  }
  gp_tp_rows_destroy(a);
  ASSERT_EQ(n, 1000);
  ASSERT_EQ(m, 1000);
  ASSERT_EQ(last, 1000);
  gp_tp_close(tp);
}
