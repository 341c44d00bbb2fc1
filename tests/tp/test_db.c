/*
 * test_db.c - keeping the imported tables in a SQLite file (--db): the
 * second open reuses it with identical answers; a changed trace is
 * re-imported; a file that is not ours is refused and left alone; the
 * saved file is an ordinary SQLite database.
 */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "tp/tputil.h"

/* A trace with render stages (args), track events and counters. */
static void write_trace(const char *path) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 1, 1, 1);
  gp__pb_begin(&t.w, 12);
  gp__pb_begin(&t.w, 24);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_string(&t.w, 2, "q");
  gp__pb_uint(&t.w, 4, 2);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  for (int i = 0; i < 20; i++) {
    tg_packet(&t, 10 + (uint64_t)i * 10, 1, 2);
    gp__pb_begin(&t.w, 53);
    gp__pb_uint(&t.w, 1, (uint64_t)i + 1);
    gp__pb_uint(&t.w, 2, (uint64_t)(i % 7) + 1);
    gp__pb_uint(&t.w, 13, 1);
    gp__pb_uint(&t.w, 14, 1);
    gp__pb_uint(&t.w, 10, (uint64_t)i);
    gp__pb_string(&t.w, 17, i % 2 ? "odd" : "even");
    gp__pb_end(&t.w);
    tg_end(&t);
    tg_packet(&t, 12 + (uint64_t)i * 10, 2, 0);
    gp__pb_begin(&t.w, 52);
    if (i == 0) {
      gp__pb_begin(&t.w, 1);
      gp__pb_begin(&t.w, 1);
      gp__pb_uint(&t.w, 1, 1);
      gp__pb_string(&t.w, 2, "Utilization");
      gp__pb_uint(&t.w, 7, 37);
      gp__pb_end(&t.w);
      gp__pb_end(&t.w);
    }
    gp__pb_begin(&t.w, 2);
    gp__pb_uint(&t.w, 1, 1);
    gp__pb_double(&t.w, 3, (double)(i * 5 % 100));
    gp__pb_end(&t.w);
    gp__pb_end(&t.w);
    tg_end(&t);
  }
  tg_write(&t, path);
  tg_fini(&t);
}

static const char *const queries[] = {
    "SELECT id, ts, dur, name, render_stage_category, submission_id, "
    "hw_queue_id, context_id FROM gpu_slice ORDER BY id",
    "SELECT arg_set_id, flat_key, key, int_value, string_value, real_value, "
    "value_type, display_value FROM args ORDER BY id",
    "SELECT extract_arg(arg_set_id, 'submission_id') AS s FROM gpu_slice "
    "ORDER BY id",
    "SELECT c.ts, c.value, t.name, t.unit, t.gpu_id FROM counter c JOIN "
    "gpu_counter_track t ON c.track_id = t.id ORDER BY c.ts",
    "SELECT * FROM track ORDER BY id",
    "SELECT * FROM stats ORDER BY id",
    "SELECT * FROM trace_bounds",
    "INCLUDE PERFETTO MODULE counters.intervals; SELECT * FROM "
    "counter_leading_intervals!(counter) ORDER BY ts",
};
#define NQ (sizeof(queries) / sizeof(queries[0]))

static void answers(const char *trace, const char *db, char **out,
                    bool *from_db) {
  gp_tp_options o = {.size = sizeof(o), .flags = 0, .db_path = db};
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(trace, &o, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "open: %s", err.message);
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  *from_db = info.from_db;
  for (size_t i = 0; i < NQ; i++)
    out[i] = tp_csv(tp, queries[i]);
  gp_tp_close(tp);
}

TEST(tp_db_reuse_and_invalidate) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "t.db");
  write_trace(trace);
  char *mem[NQ], *first[NQ], *second[NQ];
  bool from_db;
  answers(trace, NULL, mem, &from_db);
  ASSERT(!from_db);
  answers(trace, db, first, &from_db);
  ASSERT(!from_db);
  struct stat st;
  ASSERT_EQ(stat(db, &st), 0);
  answers(trace, db, second, &from_db);
  ASSERT(from_db);
  for (size_t i = 0; i < NQ; i++) {
    tp_assert_csv(first[i], mem[i], queries[i]);
    tp_assert_csv(second[i], mem[i], queries[i]);
    free(first[i]);
    free(second[i]);
  }
  /* A changed trace (a new mtime) is imported again. */
  struct timespec ts[2] = {{0, UTIME_OMIT}, {time(NULL) + 100, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, trace, ts, 0), 0);
  answers(trace, db, first, &from_db);
  ASSERT(!from_db);
  answers(trace, db, second, &from_db);
  ASSERT(from_db);
  for (size_t i = 0; i < NQ; i++) {
    tp_assert_csv(second[i], mem[i], queries[i]);
    free(first[i]);
    free(second[i]);
    free(mem[i]);
  }
  /* Another trace of the same size and mtime (copied with cp -p, say) is
   * told apart by its content. */
  struct stat before;
  ASSERT_EQ(stat(trace, &before), 0);
  size_t n;
  char *bytes = tp_read_file(trace, &n);
  char *odd = memmem(bytes, n, "odd", 3);
  ASSERT_NOT_NULL(odd);
  odd[0] = 'e';
  FILE *f = fopen(trace, "wb");
  ASSERT_EQ(fwrite(bytes, 1, n, f), n);
  fclose(f);
  free(bytes);
  struct timespec same[2] = {{0, UTIME_OMIT}, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, trace, same, 0), 0);
  answers(trace, db, first, &from_db);
  ASSERT(!from_db);
  for (size_t i = 0; i < NQ; i++)
    free(first[i]);
  /* The file is plain SQLite: the views work without gpuperf. */
  sqlite3 *s;
  ASSERT_EQ(sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st2;
  ASSERT_EQ(sqlite3_prepare_v2(s,
                               "SELECT count(*), sum(dur) FROM gpu_slice "
                               "JOIN gpu_track t ON gpu_slice.track_id = t.id",
                               -1, &st2, NULL),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st2), SQLITE_ROW);
  ASSERT_EQ(sqlite3_column_int(st2, 0), 20);
  sqlite3_finalize(st2);
  sqlite3_close(s);
}

TEST(tp_db_refuses_foreign_files) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "notes.txt");
  write_trace(trace);
  FILE *f = fopen(db, "w");
  fputs("my precious notes\n", f);
  fclose(f);
  gp_tp_options o = {.size = sizeof(o), .flags = 0, .db_path = db};
  gp_tp *tp;
  gp_tp_error err;
  ASSERT_ERR(gp_tp_open(trace, &o, &tp, &err), GP_EEXIST);
  ASSERT(strstr(err.message, "not a gpuperf trace database") != NULL);
  char *still = tp_read_file(db, NULL);
  ASSERT_STR_EQ(still, "my precious notes\n");
  free(still);
  /* An unwritable location fails cleanly and leaves nothing behind. */
  gp_tp_options o2 = {
      .size = sizeof(o2), .flags = 0, .db_path = "/nonexistent-dir/x.db"};
  ASSERT_NE(gp_tp_open(trace, &o2, &tp, &err), 0);
  ASSERT(strstr(err.message, "/nonexistent-dir/x.db") != NULL);
}

TEST(tp_db_cli) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "t.db");
  write_trace(trace);
  const char *sql = "SELECT name, count(*) AS n FROM gpu_slice GROUP BY name "
                    "ORDER BY name";
  char *a, *b, *err;
  ASSERT_EQ(tp_cli(&a, &err, "query", trace, sql, "--db", db, "--format", "csv",
                   NULL),
            0);
  free(err);
  ASSERT_EQ(tp_cli(&b, &err, "query", "--db", db, trace, sql, "--format", "csv",
                   NULL),
            0);
  free(err);
  ASSERT_STR_EQ(a, "\"name\",\"n\"\n\"even\",10\n\"odd\",10\n");
  ASSERT_STR_EQ(b, a);
  free(a);
  free(b);
}
