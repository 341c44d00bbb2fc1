/*
 * schema.c - the Perfetto views over the intrinsic tables, and saving
 * and loading the tables as a SQLite database file.
 *
 * A saved database holds every intrinsic table as an ordinary table (with
 * the indexes queries need), the same views, and __gp_meta: the format
 * version and the identity of the trace (size, modification time, and a
 * hash of its first and last 64 KiB). It
 * is written to a temporary file and renamed into place, so a reader never
 * sees half a database; it is reused only while the trace is unchanged.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "tp/sqlInt.h"

/* The views, by name; each body reads only intrinsic tables. */
static const struct {
  const char *name;
  const char *body;
} views[] = {
    {"slice", "SELECT id, ts, dur, track_id, category, name, depth, parent_id, "
              "arg_set_id, thread_ts, thread_dur, thread_instruction_count, "
              "thread_instruction_delta, category AS cat, id AS slice_id "
              "FROM __intrinsic_slice"},
    {"slices", "SELECT * FROM slice"},
    {"gpu_slice",
     "SELECT id, ts, dur, track_id, category, name, depth, parent_id, "
     "arg_set_id, context_id, render_target, render_target_name, render_pass, "
     "render_pass_name, command_buffer, command_buffer_name, frame_id, "
     "submission_id, hw_queue_id, upid, render_subpasses, "
     "render_stage_category FROM __intrinsic_gpu_slice"},
    {"counter", "SELECT id, ts, track_id, value, arg_set_id "
                "FROM __intrinsic_counter"},
    {"track",
     "SELECT id, name, type, dimension_arg_set_id, parent_id, "
     "source_arg_set_id, machine_id, track_group_id, type AS classification "
     "FROM __intrinsic_track"},
    {"counter_track",
     "SELECT id, name, parent_id, type, dimension_arg_set_id, "
     "source_arg_set_id, machine_id, counter_unit AS unit, description "
     "FROM __intrinsic_track WHERE event_type = 'counter'"},
    {"gpu_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, "
     "counter_unit AS unit, description, ugpu, gpu_id FROM __intrinsic_track "
     "WHERE event_type = 'counter' AND ugpu IS NOT NULL"},
    {"process_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, "
     "counter_unit AS unit, description, upid FROM __intrinsic_track "
     "WHERE event_type = 'counter' AND upid IS NOT NULL"},
    {"thread_counter_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, machine_id, "
     "counter_unit AS unit, description, utid FROM __intrinsic_track "
     "WHERE event_type = 'counter' AND utid IS NOT NULL"},
    {"gpu_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, "
     "dimension_arg_set_id, machine_id, type AS scope, description, "
     "NULL AS context_id FROM __intrinsic_track WHERE type IN ('drm_vblank', "
     "'drm_sched_ring', 'drm_fence', 'mali_mcu_state', 'gpu_render_stage', "
     "'vulkan_events', 'gpu_log', 'graphics_frame_event')"},
    {"thread_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, "
     "dimension_arg_set_id, machine_id, utid FROM __intrinsic_track "
     "WHERE event_type = 'slice' AND utid IS NOT NULL"},
    {"process_track",
     "SELECT id, name, type, parent_id, source_arg_set_id, "
     "dimension_arg_set_id, machine_id, upid FROM __intrinsic_track "
     "WHERE event_type = 'slice' AND upid IS NOT NULL"},
    {"args", "SELECT * FROM __intrinsic_args"},
    {"flow", "SELECT * FROM __intrinsic_flow"},
    {"gpu",
     "SELECT id, id AS ugpu, gpu, name, vendor, model, architecture, uuid, "
     "pci_bdf, machine_id, arg_set_id FROM __intrinsic_gpu "
     "WHERE gpu IS NOT NULL"},
    {"gpu_counter_group", "SELECT * FROM __intrinsic_gpu_counter_group"},
    {"process",
     "SELECT id, id AS upid, pid, name, start_ts, end_ts, parent_upid, uid, "
     "android_appid, android_user_id, cmdline, arg_set_id, machine_id "
     "FROM __intrinsic_process"},
    {"thread", "SELECT id, id AS utid, tid, name, start_ts, end_ts, upid, "
               "is_main_thread, machine_id FROM __intrinsic_thread"},
    {"stats",
     "SELECT id, name, NULL AS key, idx, severity, source, value, "
     "description, 0 AS machine_id, 0 AS trace_id FROM __intrinsic_stats"},
    {"machine", "SELECT * FROM __intrinsic_machine"},
    {"vulkan_memory_allocations",
     "SELECT * FROM __intrinsic_vulkan_memory_allocations"},
    {"counters", "SELECT v.*, t.name, t.unit FROM counter AS v "
                 "JOIN counter_track AS t ON v.track_id = t.id ORDER BY ts"},
    {"trace_bounds", "SELECT trace_start() AS start_ts, trace_end() AS end_ts"},
};

/* See sqlInt.h. */
int gp__tp_views_create(gp_tp *tp, const char *schema, char *err,
                        size_t errsize) {
  for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
    char *sql = sqlite3_mprintf("CREATE VIEW %s.%s AS %s", schema,
                                views[i].name, views[i].body);
    if (!sql)
      return GP_ENOMEM;
    int rc = sqlite3_exec(tp->sql, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    if (rc != SQLITE_OK) {
      snprintf(err, errsize, "cannot create view %s: %s", views[i].name,
               sqlite3_errmsg(tp->sql));
      return GP_ESQL;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Saved databases                                                       */

/* A fingerprint of the trace's content: a hash of its first and last
 * 64 KiB (with size and mtime, this tells a changed or other trace apart
 * without reading it all). -1 if it cannot be read. */
static int64_t fingerprint(const char *path, int64_t size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  static const size_t chunk = 64 << 10;
  uint8_t *buf = malloc(chunk);
  uint64_t h = 0x8f1bbcdcca62c1d6ull;
  bool ok = buf != NULL;
  for (int part = 0; ok && part < 2; part++) {
    if (part && size > (int64_t)chunk &&
        fseeko(f, (off_t)(size - (int64_t)chunk), SEEK_SET) != 0)
      ok = false;
    size_t n = ok ? fread(buf, 1, chunk, f) : 0;
    h = gp__tp_hash_bytes(buf, n, h);
  }
  free(buf);
  fclose(f);
  return ok ? (int64_t)(h >> 1) : -1;
}

static int64_t mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t errsize) {
  if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
    return 0;
  snprintf(err, errsize, "%s", sqlite3_errmsg(db));
  return GP_ESQL;
}

/* See sqlInt.h. */
int gp__tp_db_save(gp_tp *tp, const char *path, const char *trace_path,
                   char *err, size_t errsize) {
  struct stat st;
  if (stat(trace_path, &st) != 0) {
    snprintf(err, errsize, "%s: %s", trace_path, strerror(errno));
    return -errno;
  }
  char tmp[4096];
  if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid()) >=
      sizeof(tmp)) {
    snprintf(err, errsize, "%s: path too long", path);
    return GP_EINVAL;
  }
  unlink(tmp);
  char *sql = sqlite3_mprintf("ATTACH %Q AS gp_out", tmp);
  int rc = sql ? exec(tp->sql, sql, err, errsize) : GP_ENOMEM;
  sqlite3_free(sql);
  if (rc)
    return rc;
  rc = exec(tp->sql,
            "PRAGMA gp_out.journal_mode = OFF; PRAGMA gp_out.synchronous = "
            "OFF; BEGIN",
            err, errsize);
  for (int t = 0; !rc && t < gp__tp_ntables; t++) {
    const gp__tp_tabdef *def = gp__tp_tables[t];
    char create[4096];
    size_t n = (size_t)snprintf(create, sizeof(create),
                                "CREATE TABLE gp_out.%s(id INTEGER PRIMARY KEY",
                                def->name);
    for (int c = 1; c < def->ncols; c++)
      n += (size_t)snprintf(create + n, sizeof(create) - n, ", %s %s",
                            def->cols[c].name, def->cols[c].type);
    snprintf(create + n, sizeof(create) - n, ")");
    rc = exec(tp->sql, create, err, errsize);
    if (!rc) {
      sql = sqlite3_mprintf("INSERT INTO gp_out.%s SELECT * FROM main.%s",
                            def->name, def->name);
      rc = sql ? exec(tp->sql, sql, err, errsize) : GP_ENOMEM;
      sqlite3_free(sql);
    }
    for (int i = 0; !rc && def->db_indexes[i]; i++) {
      char fmt[512], idx[512];
      snprintf(fmt, sizeof(fmt), "%s", def->db_indexes[i]);
      /* "CREATE INDEX %s_x ON %s(...)": schema-qualify the index name. */
      snprintf(idx, sizeof(idx), fmt, def->name, def->name);
      sql = sqlite3_mprintf("CREATE INDEX gp_out.%s", idx + 13);
      rc = sql ? exec(tp->sql, sql, err, errsize) : GP_ENOMEM;
      sqlite3_free(sql);
    }
  }
  if (!rc) {
    char meta[1024];
    snprintf(meta, sizeof(meta),
             "CREATE TABLE gp_out.__gp_meta(key TEXT PRIMARY KEY, value);"
             "INSERT INTO gp_out.__gp_meta VALUES"
             "('format', %d), ('trace_size', %" PRId64 "),"
             "('trace_mtime_ns', %" PRId64 "), ('start_ts', %" PRId64 "),"
             "('end_ts', %" PRId64 "), ('packets', %" PRIu64 "),"
             "('events', %" PRIu64 "), ('trace_fingerprint', %" PRId64 ")",
             GP_TP_DB_FORMAT, (int64_t)st.st_size, mtime_ns(&st),
             tp->info.start_ts, tp->info.end_ts, tp->info.packets,
             tp->info.events, fingerprint(trace_path, (int64_t)st.st_size));
    rc = exec(tp->sql, meta, err, errsize);
  }
  if (!rc)
    rc = gp__tp_views_create(tp, "gp_out", err, errsize);
  if (!rc)
    rc = exec(tp->sql, "COMMIT", err, errsize);
  else
    sqlite3_exec(tp->sql, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_exec(tp->sql, "DETACH gp_out", NULL, NULL, NULL);
  if (!rc && rename(tmp, path) != 0) {
    rc = -errno;
    snprintf(err, errsize, "%s: %s", path, strerror(errno));
  }
  if (rc)
    unlink(tmp);
  return rc;
}

static bool meta_int(sqlite3 *db, const char *key, int64_t *out) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT value FROM __gp_meta WHERE key = ?", -1,
                         &st, NULL) != SQLITE_OK)
    return false;
  sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
  bool ok = sqlite3_step(st) == SQLITE_ROW &&
            sqlite3_column_type(st, 0) == SQLITE_INTEGER;
  if (ok)
    *out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return ok;
}

/* See sqlInt.h. */
int gp__tp_db_load(const char *path, const char *trace_path, sqlite3 **out,
                   gp_tp_info *info, char *err, size_t errsize) {
  struct stat st, dst;
  if (stat(path, &dst) != 0)
    return 0; /* nothing saved yet */
  if (stat(trace_path, &st) != 0) {
    snprintf(err, errsize, "%s: %s", trace_path, strerror(errno));
    return -errno;
  }
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(err, errsize, "%s: %s", path, db ? sqlite3_errmsg(db) : "");
    sqlite3_close(db);
    return GP_ESQL;
  }
  int64_t format = 0, size = -1, mtime = -1, start = 0, end = 0, packets = 0,
          events = 0, fp = -2;
  bool ok = meta_int(db, "format", &format) &&
            meta_int(db, "trace_size", &size) &&
            meta_int(db, "trace_mtime_ns", &mtime) &&
            meta_int(db, "start_ts", &start) && meta_int(db, "end_ts", &end) &&
            meta_int(db, "trace_fingerprint", &fp);
  meta_int(db, "packets", &packets);
  meta_int(db, "events", &events);
  if (!ok) {
    /* Not one of ours (or damaged): refuse to overwrite it blindly. */
    sqlite3_stmt *probe;
    bool ours = sqlite3_prepare_v2(db, "SELECT 1 FROM __gp_meta", -1, &probe,
                                   NULL) == SQLITE_OK;
    sqlite3_finalize(probe);
    sqlite3_close(db);
    if (!ours) {
      snprintf(err, errsize,
               "%s: not a gpuperf trace database (remove it or choose another "
               "--db file)",
               path);
      return GP_EEXIST;
    }
    return 0;
  }
  if (format != GP_TP_DB_FORMAT || size != (int64_t)st.st_size ||
      mtime != mtime_ns(&st) ||
      fp != fingerprint(trace_path, (int64_t)st.st_size)) {
    sqlite3_close(db);
    return 0; /* stale: the caller re-imports and overwrites */
  }
  info->start_ts = start;
  info->end_ts = end;
  info->packets = (uint64_t)packets;
  info->events = (uint64_t)events;
  info->trace_bytes = (uint64_t)st.st_size;
  info->from_db = true;
  *out = db;
  return 1;
}
