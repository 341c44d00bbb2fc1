/*
 * schema.c - the Perfetto views over the intrinsic tables, and saving
 * and loading the tables as a SQLite database file.
 *
 * A saved database holds every intrinsic table as an ordinary table (with
 * the indexes queries need), the same views, and __gp_meta: the format
 * version and the identity of the trace (size, modification time, and a
 * hash of its whole content). It is written to a temporary file and renamed
 * into place, so a reader never sees half a database; it is reused only while
 * the trace is unchanged.
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
    {"cpu_counter_track",
     "SELECT ct.id, ct.name, ct.type, ct.parent_id, ct.source_arg_set_id, "
     "ct.machine_id, ct.unit, ct.description, a.int_value AS cpu "
     "FROM counter_track AS ct JOIN args AS a "
     "ON ct.dimension_arg_set_id = a.arg_set_id WHERE a.key = 'cpu'"},
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
               "is_main_thread, is_idle, machine_id, arg_set_id "
               "FROM __intrinsic_thread"},
    {"stats",
     "SELECT id, name, NULL AS key, idx, severity, source, value, "
     "description, 0 AS machine_id, 0 AS trace_id FROM __intrinsic_stats"},
    /* label_index: 1, 2, ... for the machines other than the host. */
    {"machine", "SELECT *, iif(raw_id = 0, 0, sum(iif(raw_id = 0, 0, 1)) "
                "OVER (ORDER BY id)) AS label_index FROM __intrinsic_machine"},
    {"vulkan_memory_allocations",
     "SELECT * FROM __intrinsic_vulkan_memory_allocations"},
    {"counters", "SELECT v.*, t.name, t.unit FROM counter AS v "
                 "JOIN counter_track AS t ON v.track_id = t.id ORDER BY ts"},
    {"ftrace_event",
     "SELECT id, ts, name, ucpu AS cpu, utid, arg_set_id, common_flags, ucpu "
     "FROM __intrinsic_ftrace_event"},
    {"raw", "SELECT * FROM ftrace_event"},
    {"cpu", "SELECT id, id AS ucpu, cpu, cluster_id, processor, machine_id, "
            "capacity, arg_set_id FROM __intrinsic_cpu WHERE cpu IS NOT NULL"},
    {"cpu_available_frequencies",
     "SELECT id, ucpu AS cpu, freq, ucpu FROM __intrinsic_cpu_freq"},
    {"trace_bounds", "SELECT trace_start() AS start_ts, trace_end() AS end_ts"},
    /* Perfetto's: cpu is ucpu (one machine's CPUs are its cpu rows). */
    {"sched", "SELECT id, ts, dur, ucpu AS cpu, utid, end_state, priority, "
              "ucpu, ts + dur AS ts_end FROM __intrinsic_sched_slice"},
    {"sched_slice", "SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu "
                    "FROM sched"},
    {"thread_state",
     "SELECT id, ts, dur, ucpu AS cpu, utid, state, io_wait, "
     "blocked_function, waker_utid, waker_id, irq_context, ucpu "
     "FROM __intrinsic_thread_state"},
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

/* The trace's content hash: the whole file, read in 1 MiB blocks and
 * mixed in four independent 64-bit lanes (multiply-rotate rounds, as in
 * xxHash64), so it runs at memory speed: a few ms per 100 MB, far below
 * an import. Any changed byte changes it (up to hash collisions), which
 * size and mtime alone do not promise. -1 if the file cannot be read. */
#define HASH_BLOCK (1u << 20)

static inline uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

static inline uint64_t hash_round(uint64_t acc, uint64_t w) {
  return rotl64(acc + w * 0xc2b2ae3d27d4eb4full, 31) * 0x9e3779b97f4a7c15ull;
}

static int64_t content_hash(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  uint8_t *buf = malloc(HASH_BLOCK);
  uint64_t lane[4] = {0x60ea27eeadc0b5d6ull, 0xc2b2ae3d27d4eb4full, 0,
                      0x61c8864e7a143579ull};
  uint64_t total = 0;
  bool ok = buf != NULL;
  size_t n = 0;
  while (ok && (n = fread(buf, 1, HASH_BLOCK, f)) > 0) {
    size_t whole = n & ~(size_t)31;
    for (size_t i = 0; i < whole; i += 32)
      for (int k = 0; k < 4; k++) {
        uint64_t w;
        memcpy(&w, buf + i + 8 * (size_t)k, 8);
        lane[k] = hash_round(lane[k], w);
      }
    /* Only the last block may end in a partial 32 bytes. */
    uint64_t tail = gp__tp_hash_bytes(buf + whole, n - whole, lane[0]);
    lane[0] = hash_round(lane[0], tail);
    total += n;
    if (n < HASH_BLOCK)
      break;
  }
  if (ferror(f))
    ok = false;
  free(buf);
  fclose(f);
  uint64_t h = total * 0x27d4eb2f165667c5ull;
  for (int k = 0; k < 4; k++)
    h = gp__tp_mix64(h ^ lane[k]);
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
                   const gp_tp_options *o, char *err, size_t errsize) {
  bool say =
      o && o->size >= offsetof(gp_tp_options, progress_user) + sizeof(void *) &&
      o->progress;
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
  /* Progress in rows copied or indexed: a table's copy and each of its
   * indexes cost about a pass over its rows. */
  uint64_t total = 0, done = 0;
  for (int t = 0; say && t < gp__tp_ntables; t++) {
    const gp__tp_tabdef *def = gp__tp_tables[t];
    uint64_t passes = 1;
    for (int i = 0; def->db_indexes[i]; i++)
      passes++;
    total += (def->rows(tp->db) + 1) * passes;
  }
  for (int t = 0; !rc && t < gp__tp_ntables; t++) {
    const gp__tp_tabdef *def = gp__tp_tables[t];
    uint64_t rows = say ? def->rows(tp->db) + 1 : 0;
    if (say)
      o->progress(o->progress_user, "saving", done, total);
    done += rows;
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
      if (say)
        o->progress(o->progress_user, "saving", done, total);
      done += rows;
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
             "('events', %" PRIu64 "), ('trace_hash', %" PRId64 ")",
             GP_TP_DB_FORMAT, (int64_t)st.st_size, mtime_ns(&st),
             tp->info.start_ts, tp->info.end_ts, tp->info.packets,
             tp->info.events, content_hash(trace_path));
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
                   gp_tp_info *info, char *err, size_t errsize, char *warn,
                   size_t warnsize) {
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
            meta_int(db, "trace_hash", &fp);
  int why = sqlite3_errcode(db);
  meta_int(db, "packets", &packets);
  meta_int(db, "events", &events);
  if (!ok && why == SQLITE_CORRUPT) {
    /* A SQLite file whose pages are damaged (a cut write, a bad disk): it
     * cannot be told apart from ours, and is rebuilt. Damage that only a
     * query reaches is reported by the query (GP_ECORRUPT, naming the
     * file): checking every page here would cost as much as an import. */
    snprintf(warn, warnsize, "%s: damaged trace database (%s): rebuilt from %s",
             path, sqlite3_errstr(why), trace_path);
    sqlite3_close(db);
    return 0;
  }
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
      mtime != mtime_ns(&st) || fp != content_hash(trace_path)) {
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
