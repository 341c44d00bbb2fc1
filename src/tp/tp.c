/*
 * tp.c - the public trace-processor API (gpuperf/tp.h): opening a trace
 * (importing it, or reusing a saved database), running queries, reading
 * rows. Writing results as CSV, a table or JSON is in write.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "gpuperf/tp.h"
#include "tp/import.h"
#include "tp/spill.h"
#include "tp/sqlInt.h"

/* With GP_TP_SPILL: the resident pages of spilled arrays and of the trace
 * file's mapping that the process may hold before they are dropped. */
#define SPILL_KEEP (24u << 20)

struct gp_tp_rows {
  gp_tp *tp;
  sqlite3_stmt *st;
  bool done;
};

/* See sqlInt.h. */
int gp__tp_set_error(gp_tp_error *err, int code, uint64_t offset,
                     const char *fmt, ...) {
  if (!err)
    return code;
  err->code = code;
  err->offset = offset;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  return code;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void tp_free(gp_tp *tp) {
  if (!tp)
    return;
  sqlite3_finalize(tp->extract_stmt);
  if (tp->sql)
    sqlite3_close_v2(tp->sql);
  gp__tp_bufs_clear(tp);
  gp__tp_psql_free(tp);
  for (int t = 0; t < GP_TP_MAX_TABLES; t++)
    for (int c = 0; c < GP_TP_MAX_COLS; c++) {
      gp__tp_colindex *ix = &tp->index[t][c];
      gp__tp_array_free(ix->rows, ix->n, sizeof(*ix->rows));
      gp__tp_array_free(ix->vals, ix->n, sizeof(*ix->vals));
    }
  if (tp->db) {
    gp__tp_db_fini(tp->db);
    free(tp->db);
  }
  free(tp->db_path);
  bool spilled = tp->spilled;
  free(tp);
  if (spilled)
    gp__tp_spill_end();
}

/* Registers what every connection needs (memory or database mode). */
static int setup_sql(gp_tp *tp, char *msg, size_t size) {
  if (gp__tp_functions_register(tp) || gp__tp_intervals_register(tp)) {
    snprintf(msg, size, "cannot register SQL functions: %s",
             sqlite3_errmsg(tp->sql));
    return GP_ESQL;
  }
  /* Query-time temp tables stay in memory. */
  sqlite3_exec(tp->sql, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
  return 0;
}

/* Imports size bytes at data. own_map: data is a read-only private
 * mapping of the file that the caller unmaps afterwards, whose pages the
 * import may drop once parsed (the peak then holds less of the file). */
static int import_data(const void *data, size_t size, const char *name,
                       const gp_tp_options *o, bool own_map, gp_tp **out,
                       gp_tp_error *err) {
  double t0 = now_s();
  bool spill = o && (o->flags & GP_TP_SPILL);
  if (spill) {
    int rc = gp__tp_spill_begin(NULL, SPILL_KEEP);
    if (rc)
      return gp__tp_set_error(
          err, rc, UINT64_MAX, "cannot make temporary files in %s: %s",
          getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp",
          strerror(-rc));
  }
  gp_tp *tp = calloc(1, sizeof(*tp));
  if (!tp) {
    if (spill)
      gp__tp_spill_end();
    return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
  }
  tp->spilled = spill;
  tp->db = malloc(sizeof(*tp->db));
  if (!tp->db || gp__tp_db_init(tp->db) != 0) {
    free(tp->db);
    tp->db = NULL;
    tp_free(tp);
    return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
  }
  gp__tp_importer imp;
  gp__tp_importer_init(&imp, tp->db, name, data, size);
  imp.allow_truncated = o && (o->flags & GP_TP_ALLOW_TRUNCATED);
  if (o && o->size >= offsetof(gp_tp_options, progress_user) + sizeof(void *)) {
    imp.progress = o->progress;
    imp.progress_user = o->progress_user;
  }
  if (o && o->size >= offsetof(gp_tp_options, stream_user) + sizeof(void *)) {
    imp.stream = o->stream;
    imp.stream_user = o->stream_user;
  }
  imp.release_input = own_map;
  int rc = size == 0 ? GP_ECORRUPT : gp__tp_import(&imp);
  if (!rc && imp.packets == 0)
    rc = gp__tp_fail(&imp, GP_ECORRUPT, 0,
                     "no trace packets: not a Perfetto protobuf trace");
  if (rc) {
    if (size == 0)
      gp__tp_set_error(err, rc, 0, "%s: empty file, not a trace", name);
    else if (rc == GP_ECORRUPT || imp.err_off)
      gp__tp_set_error(err, rc, imp.err_off, "%s: offset %" PRIu64 ": %s", name,
                       imp.err_off, imp.errmsg);
    else
      gp__tp_set_error(err, rc, UINT64_MAX, "%s: %s%s", name,
                       imp.errmsg[0] ? imp.errmsg : gp_strerror(rc),
                       spill && rc == GP_ENOMEM
                           ? " (or no room left for the temporary files: "
                             "$TMPDIR, else /var/tmp)"
                           : "");
    gp__tp_importer_fini(&imp);
    tp_free(tp);
    return rc;
  }
  tp->info.trace_bytes = size;
  tp->info.packets = imp.packets;
  tp->info.events = imp.events;
  gp__tp_importer_fini(&imp);
  if (own_map) /* nothing reads the file from here on */
    madvise((void *)(uintptr_t)data, size, MADV_DONTNEED);
  if ((rc = gp__tp_db_seal(tp->db)) != 0) {
    tp_free(tp);
    return gp__tp_set_error(err, rc, UINT64_MAX, "out of memory");
  }
  tp->info.start_ts = tp->db->start_ts;
  tp->info.end_ts = tp->db->end_ts;
  char msg[400] = "";
  if (sqlite3_open_v2(":memory:", &tp->sql,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      NULL) != SQLITE_OK) {
    tp_free(tp);
    return gp__tp_set_error(err, GP_ESQL, UINT64_MAX, "cannot open SQLite");
  }
  if ((rc = setup_sql(tp, msg, sizeof(msg))) ||
      (rc = gp__tp_vtab_register(tp, msg, sizeof(msg))) ||
      (rc = gp__tp_views_create(tp, "main", msg, sizeof(msg)))) {
    tp_free(tp);
    return gp__tp_set_error(err, rc, UINT64_MAX, "%s", msg);
  }
  tp->info.import_seconds = now_s() - t0;
  *out = tp;
  return 0;
}

/* See tp.h. */
int gp_tp_open_buffer(const void *data, size_t size, const char *name,
                      const gp_tp_options *opts, gp_tp **out,
                      gp_tp_error *err) {
  if (!out || (!data && size))
    return gp__tp_set_error(err, GP_EINVAL, UINT64_MAX, "invalid argument");
  return import_data(data, size, name ? name : "trace", opts, false, out, err);
}

/* See tp.h. */
int gp_tp_open(const char *path, const gp_tp_options *opts, gp_tp **out,
               gp_tp_error *err) {
  if (!path || !out || (opts && opts->size < sizeof(uint32_t) * 2))
    return gp__tp_set_error(err, GP_EINVAL, UINT64_MAX, "invalid argument");
  const char *db_path =
      opts && opts->size >= offsetof(gp_tp_options, db_path) + sizeof(char *)
          ? opts->db_path
          : NULL;
  uint32_t flags = opts ? opts->flags : 0;
  char msg[400] = "", warn[512] = "";
  double t0 = now_s();
  if (db_path && !(flags & GP_TP_REBUILD_DB)) {
    sqlite3 *sql = NULL;
    gp_tp_info info;
    memset(&info, 0, sizeof(info));
    int rc = gp__tp_db_load(db_path, path, &sql, &info, msg, sizeof(msg), warn,
                            sizeof(warn));
    if (rc < 0)
      return gp__tp_set_error(err, rc, UINT64_MAX, "%s", msg);
    if (rc == 1) {
      gp_tp *tp = calloc(1, sizeof(*tp));
      if (!tp) {
        sqlite3_close(sql);
        return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
      }
      tp->sql = sql;
      tp->info = info;
      if (!(tp->db_path = strdup(db_path))) {
        tp_free(tp);
        return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
      }
      if ((rc = setup_sql(tp, msg, sizeof(msg)))) {
        tp_free(tp);
        return gp__tp_set_error(err, rc, UINT64_MAX, "%s", msg);
      }
      tp->info.import_seconds = now_s() - t0;
      *out = tp;
      return 0;
    }
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return gp__tp_set_error(err, -e, UINT64_MAX, "%s: %s", path, strerror(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return gp__tp_set_error(err, -e, UINT64_MAX, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    if (S_ISDIR(st.st_mode))
      return gp__tp_set_error(err, -EISDIR, UINT64_MAX,
                              "%s: is a directory, not a trace", path);
    return gp__tp_set_error(err, -ENODEV, UINT64_MAX,
                            "%s: not a regular file (a device or pipe): "
                            "traces are read from files",
                            path);
  }
  size_t size = (size_t)st.st_size;
  void *map = NULL;
  /* Spilling, the file's pages come as they are read and go with the
   * spilled arrays' (MAP_POPULATE would make all of them resident). */
  bool spill = flags & GP_TP_SPILL;
  if (size) {
    map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | (spill ? 0 : MAP_POPULATE),
               fd, 0);
    if (map == MAP_FAILED) {
      int e = errno;
      close(fd);
      return gp__tp_set_error(err, -e, UINT64_MAX, "%s: %s", path, strerror(e));
    }
    madvise(map, size, MADV_SEQUENTIAL);
    if (spill)
      gp__tp_spill_watch(map, size);
  }
  close(fd);
  gp_tp *tp = NULL;
  int rc = import_data(map, size, path, opts, true, &tp, err);
  if (map) {
    if (spill)
      gp__tp_spill_unwatch(map);
    munmap(map, size);
  }
  if (rc)
    return rc;
  if (db_path &&
      (rc = gp__tp_db_save(tp, db_path, path, opts, msg, sizeof(msg)))) {
    gp_tp_close(tp);
    return gp__tp_set_error(err, rc, UINT64_MAX, "%s: %s", db_path, msg);
  }
  tp->info.import_seconds = now_s() - t0;
  memcpy(tp->warning, warn, sizeof(tp->warning));
  *out = tp;
  return 0;
}

/* See tp.h. */
const char *gp_tp_warning(const gp_tp *tp) {
  return tp && tp->warning[0] ? tp->warning : NULL;
}

/* See tp.h. */
void gp_tp_close(gp_tp *tp) {
  tp_free(tp);
}

/* See tp.h. */
void gp_tp_get_info(const gp_tp *tp, gp_tp_info *info) {
  if (tp && info)
    *info = tp->info;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                  */

/* A query that failed on a damaged database file: GP_ECORRUPT, and a
 * message that names the file (the caller may open the trace again with
 * GP_TP_REBUILD_DB). rc otherwise. */
static int damaged_db(gp_tp *tp, int rc, gp_tp_error *err) {
  int e = sqlite3_errcode(tp->sql);
  if (!tp->db_path || (e != SQLITE_CORRUPT && e != SQLITE_NOTADB))
    return rc;
  return gp__tp_set_error(err, GP_ECORRUPT, UINT64_MAX,
                          "%s: damaged trace database (%s): rebuild it from "
                          "the trace",
                          tp->db_path, sqlite3_errstr(e));
}

/* See tp.h. */
int gp_tp_query(gp_tp *tp, const char *sql, gp_tp_rows **out,
                gp_tp_error *err) {
  if (!tp || !sql || !out)
    return gp__tp_set_error(err, GP_EINVAL, UINT64_MAX, "invalid argument");
  gp_tp_rows *r = calloc(1, sizeof(*r));
  if (!r)
    return gp__tp_set_error(err, GP_ENOMEM, UINT64_MAX, "out of memory");
  if (tp->live_rows == 0)
    gp__tp_bufs_clear(tp);
  int rc = gp__tp_psql_run(tp, sql, &r->st, err);
  if (rc) {
    free(r);
    if (tp->live_rows == 0)
      gp__tp_bufs_clear(tp);
    return damaged_db(tp, rc, err);
  }
  tp->live_rows++;
  r->tp = tp;
  r->done = !r->st;
  *out = r;
  return 0;
}

/* See tp.h. */
int gp_tp_rows_next(gp_tp_rows *rows, gp_tp_error *err) {
  gp__tp_spill_poll();
  if (!rows)
    return gp__tp_set_error(err, GP_EINVAL, UINT64_MAX, "invalid argument");
  if (rows->done)
    return 0;
  int rc = sqlite3_step(rows->st);
  if (rc == SQLITE_ROW)
    return 1;
  rows->done = true;
  if (rc == SQLITE_DONE)
    return 0;
  return damaged_db(rows->tp,
                    gp__tp_set_error(err, GP_ESQL, UINT64_MAX, "%s",
                                     sqlite3_errmsg(rows->tp->sql)),
                    err);
}

/* See tp.h. */
int gp_tp_rows_columns(const gp_tp_rows *rows) {
  return rows && rows->st ? sqlite3_column_count(rows->st) : 0;
}

/* See tp.h. */
const char *gp_tp_rows_name(const gp_tp_rows *rows, int col) {
  return rows && rows->st ? sqlite3_column_name(rows->st, col) : NULL;
}

/* See tp.h. */
gp_tp_type gp_tp_rows_type(const gp_tp_rows *rows, int col) {
  if (!rows || !rows->st)
    return GP_TP_NULL;
  switch (sqlite3_column_type(rows->st, col)) {
  case SQLITE_INTEGER:
    return GP_TP_INT;
  case SQLITE_FLOAT:
    return GP_TP_REAL;
  case SQLITE_TEXT:
    return GP_TP_TEXT;
  case SQLITE_BLOB:
    return GP_TP_BLOB;
  default:
    return GP_TP_NULL;
  }
}

/* See tp.h. */
int64_t gp_tp_rows_int(const gp_tp_rows *rows, int col) {
  return rows && rows->st ? sqlite3_column_int64(rows->st, col) : 0;
}

/* See tp.h. */
double gp_tp_rows_real(const gp_tp_rows *rows, int col) {
  return rows && rows->st ? sqlite3_column_double(rows->st, col) : 0;
}

/* See tp.h. */
const char *gp_tp_rows_text(const gp_tp_rows *rows, int col) {
  return rows && rows->st ? (const char *)sqlite3_column_text(rows->st, col)
                          : NULL;
}

/* See tp.h. */
const void *gp_tp_rows_blob(const gp_tp_rows *rows, int col, size_t *size) {
  if (!rows || !rows->st) {
    if (size)
      *size = 0;
    return NULL;
  }
  const void *p = sqlite3_column_blob(rows->st, col);
  if (size)
    *size = (size_t)sqlite3_column_bytes(rows->st, col);
  return p;
}

/* See tp.h. */
void gp_tp_rows_destroy(gp_tp_rows *rows) {
  if (!rows)
    return;
  sqlite3_finalize(rows->st);
  if (--rows->tp->live_rows == 0)
    gp__tp_bufs_clear(rows->tp); /* no statement can still use them */
  free(rows);
}
