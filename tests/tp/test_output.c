/*
 * test_output.c - what `query` shows and where --db can go wrong: a trace
 * changed in the middle (same size, same mtime) is imported again; a
 * damaged database file is rebuilt with a warning that names it; text
 * from the trace cannot drive a terminal; JSON is valid UTF-8.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

/* 200 render stages whose ts are all 3-byte varints; stage k (the middle
 * one) starts at `mid_ts`. */
static void stages_trace(const char *path, uint64_t mid_ts, const char *name) {
  tg t;
  tg_init(&t);
  for (int i = 0; i < 200; i++) {
    tg_packet(&t, i == 100 ? mid_ts : 20000 + (uint64_t)i * 100, 1, 0);
    gp__pb_begin(&t.w, 53);
    gp__pb_uint(&t.w, 1, (uint64_t)i + 1);
    gp__pb_uint(&t.w, 2, 10);
    gp__pb_string(&t.w, 17, name);
    gp__pb_end(&t.w);
    tg_end(&t);
  }
  tg_write(&t, path);
  tg_fini(&t);
}

static int64_t max_ts(const char *trace, const char *db, bool *from_db) {
  gp_tp_options o = {.size = sizeof(o), .flags = 0, .db_path = db};
  gp_tp *tp;
  gp_tp_error err;
  if (gp_tp_open(trace, &o, &tp, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "open: %s", err.message);
  gp_tp_info info;
  gp_tp_get_info(tp, &info);
  *from_db = info.from_db;
  int64_t v = tp_int(tp, "SELECT max(ts) FROM gpu_slice");
  gp_tp_close(tp);
  return v;
}

TEST(tp_db_content_change_in_the_middle) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "t.db");
  stages_trace(trace, 30000, "k");
  bool from_db;
  ASSERT_EQ(max_ts(trace, db, &from_db), 39900);
  ASSERT(!from_db);
  ASSERT_EQ(max_ts(trace, db, &from_db), 39900);
  ASSERT(from_db);
  /* The same size, a timestamp in the middle changed, the mtime put
   * back: the cache must not answer. */
  struct stat st;
  ASSERT_EQ(stat(trace, &st), 0);
  stages_trace(trace, 50000, "k");
  struct stat st2;
  ASSERT_EQ(stat(trace, &st2), 0);
  ASSERT_EQ(st2.st_size, st.st_size);
  struct timespec ts[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, trace, ts, 0), 0);
  ASSERT_EQ(max_ts(trace, db, &from_db), 50000);
  ASSERT(!from_db);
}

TEST(tp_db_damaged_file_rebuilt_with_warning) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "t.db");
  stages_trace(trace, 30000, "k");
  char *out = NULL, *err = NULL;
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv",
                   "SELECT count(*) AS n FROM gpu_slice", NULL),
            0);
  free(out);
  free(err);
  /* Scribble over every page but the first (the header and meta). */
  struct stat st;
  ASSERT_EQ(stat(db, &st), 0);
  ASSERT_GT(st.st_size, 8192);
  int fd = open(db, O_WRONLY);
  ASSERT(fd >= 0);
  char junk[4096];
  memset(junk, 0xa5, sizeof(junk));
  for (off_t o = 4096; o + 4096 <= st.st_size; o += 4096)
    ASSERT_EQ(pwrite(fd, junk, sizeof(junk), o), (ssize_t)sizeof(junk));
  close(fd);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv",
                   "SELECT count(*) AS n FROM gpu_slice", NULL),
            0);
  ASSERT_STR_EQ(out, "\"n\"\n200\n");
  ASSERT(strstr(err, "warning") != NULL);
  ASSERT(strstr(err, db) != NULL);
  ASSERT(strstr(err, "damaged") != NULL && strstr(err, "rebuilt") != NULL);
  free(out);
  free(err);
  /* Rebuilt: the next run uses it silently. */
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv",
                   "SELECT count(*) AS n FROM gpu_slice", NULL),
            0);
  ASSERT_STR_EQ(out, "\"n\"\n200\n");
  ASSERT(strstr(err, "warning") == NULL);
  free(out);
  free(err);
}

/* Overwrites the root page of every table and index in the database
 * file db but its meta data (__gp_meta, and the schema on page 1). */
static void damage_tables(const char *db) {
  sqlite3 *s;
  ASSERT_EQ(sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  ASSERT_EQ(sqlite3_prepare_v2(s,
                               "SELECT rootpage, (SELECT page_size FROM "
                               "pragma_page_size) FROM sqlite_master WHERE "
                               "rootpage > 1 AND tbl_name != '__gp_meta'",
                               -1, &st, NULL),
            SQLITE_OK);
  int fd = open(db, O_WRONLY);
  ASSERT(fd >= 0);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    int64_t page = sqlite3_column_int64(st, 0);
    int64_t size = sqlite3_column_int64(st, 1);
    char junk[65536];
    memset(junk, 0x5a, sizeof(junk));
    ASSERT_EQ(pwrite(fd, junk, (size_t)size, (off_t)((page - 1) * size)),
              (ssize_t)size);
    n++;
  }
  close(fd);
  sqlite3_finalize(st);
  sqlite3_close(s);
  ASSERT_GT(n, 5);
}

/* Damage that opening does not see (a table's pages, not the meta data):
 * the query finds it, and query rebuilds the file and answers. */
TEST(tp_db_damaged_table_rebuilt_by_query) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *db = gp_test_path(1, "t.db");
  stages_trace(trace, 30000, "k");
  const char *q = "SELECT count(*) AS n, max(ts) AS m FROM gpu_slice";
  char *out = NULL, *err = NULL;
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv", q,
                   NULL),
            0);
  free(out);
  free(err);
  damage_tables(db);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv", q,
                   NULL),
            0);
  ASSERT_STR_EQ(out, "\"n\",\"m\"\n200,39900\n");
  ASSERT(strstr(err, db) != NULL);
  ASSERT(strstr(err, "damaged trace database") != NULL);
  ASSERT(strstr(err, "rebuilding it") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--db", db, "--format", "csv", q,
                   NULL),
            0);
  ASSERT_STR_EQ(out, "\"n\",\"m\"\n200,39900\n");
  ASSERT(strstr(err, "warning") == NULL);
  free(out);
  free(err);
}

static const char hostile_name[] =
    "a\x1b]0;pwned\x07\x1b[2J\nb\xff\xc3(c\xc2\x9b";

TEST(tp_cli_json_is_valid_utf8) {
  const char *trace = gp_test_path(0, "t.pftrace");
  stages_trace(trace, 30000, hostile_name);
  char *out = NULL, *err = NULL;
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--format", "json",
                   "SELECT name FROM gpu_slice LIMIT 1", NULL),
            0);
  /* C1 controls (U+009B is CSI) are escaped too: the same JSON string,
   * and no control byte for a terminal that shows the JSON. */
  ASSERT_STR_EQ(out, "[\n  {\"name\": \"a\\u001b]0;pwned\\u0007\\u001b[2J\\n"
                     "b\\ufffd\\ufffd(c\\u009b\"}\n]\n");
  ASSERT(strstr(err, "2 bytes of text in the result were not UTF-8") != NULL);
  free(out);
  free(err);
}

/* Runs the CLI with stdout on a pseudo-terminal; returns what it wrote. */
static char *cli_on_tty(const char *a1, const char *a2, const char *a3) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set to the gpuperf binary (run via make test)");
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
    SKIP("no pseudo-terminal available here");
  const char *sname = ptsname(m);
  ASSERT_NOT_NULL(sname);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int s = open(sname, O_RDWR | O_NOCTTY);
    if (s < 0)
      _exit(126);
    dup2(s, 1);
    execl(cli, cli, a1, a2, a3, (char *)NULL);
    _exit(127);
  }
  size_t n = 0, cap = 1 << 16;
  char *buf = calloc(1, cap);
  int st;
  for (;;) {
    ssize_t got = read(m, buf + n, cap - 1 - n);
    if (got > 0) {
      n += (size_t)got;
      continue;
    }
    if (waitpid(pid, &st, WNOHANG) == pid)
      break;
    if (got < 0) /* EIO: the child closed the terminal */
      break;
  }
  if (waitpid(pid, &st, 0) == pid)
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(m);
  buf[n] = '\0';
  return buf;
}

TEST(tp_cli_terminal_output_escaped) {
  const char *trace = gp_test_path(0, "t.pftrace");
  stages_trace(trace, 30000, hostile_name);
  char *out = cli_on_tty("query", trace, "SELECT name FROM gpu_slice LIMIT 1");
  ASSERT(strchr(out, '\x1b') == NULL);
  ASSERT(strchr(out, '\x07') == NULL);
  ASSERT(strstr(out, "\xc2\x9b") == NULL);
  ASSERT(strstr(out, "a\\x1b]0;pwned\\x07\\x1b[2J\\nb\\xff\\xc3(c\\u{9b}") !=
         NULL);
  free(out);
  /* Not a terminal: the bytes as they are (pipes get the data). */
  char *err = NULL;
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "--format", "csv",
                   "SELECT name FROM gpu_slice LIMIT 1", NULL),
            0);
  ASSERT(strstr(out, hostile_name) != NULL);
  free(out);
  free(err);
}
