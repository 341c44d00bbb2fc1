/*
 * export_clickhouse.c - `gpuperf export FILE --to clickhouse://HOST:PORT/DB
 * [--cluster NAME]`: a trace's main tables into ClickHouse, for analysis
 * at cluster scale (docs/scale.md).
 *
 * The tables (gpu_slice, counter, track, slice, flow, gpu, machine,
 * process) are read from our trace processor, each row with the `trace`
 * it came from, its `machine` (the raw machine id, as in merged traces),
 * the export's generation and day, and sent through ClickHouse's HTTP
 * interface as TabSeparated INSERTs of --batch-rows rows. With --cluster
 * each row goes straight to the shard that the Distributed tables'
 * sharding key gives its (trace, machine). Nothing is visible until the
 * export commits (clickhouse.c): a trace appears whole or not at all.
 * gpu_slice and counter, the big tables, are sent while the trace is
 * read: the import hands their rows over as they become final
 * (gp_tp_options.stream) and a sender thread sends them; the other
 * tables are read by SQL after the import.
 * The default trace name is the file's name and the start of its
 * SHA-256, so two files of one name never replace each other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ch_stream.h"
#include "cli.h"
#include "gpuperf/tp.h"
#include "clickhouse.h"
#include "trace_hash.h"

#define NTABLES (sizeof(tables) / sizeof(tables[0]))

/* The bytes of rows held for sending, all servers' batches together: a
 * batch goes at --batch-rows rows or at its share of this, whichever
 * comes first, so that what the export holds does not grow with the
 * number of servers or the length of the rows. */
#define BATCH_BYTES (8u << 20)

/* The two tables sent while the trace is read (tables[0] and [1]). */
#define NSTREAMED 2

/* The machine (raw id) of a track t. */
#define MACHINE_OF(t)                                                          \
  "coalesce((SELECT raw_id FROM machine WHERE id = " t ".machine_id), 0)"

static const ch_table tables[] = {
    {"gpu_slice",
     "id UInt64, ts Int64, dur Int64, track_id UInt64, name String, "
     "ugpu Int64, gpu Int64, gpu_name String, queue String, "
     "render_stage_category Int64, context_id Int64, submission_id Int64, "
     "upid Int64",
     "ts",
     "SELECT " MACHINE_OF(
         "t") ", s.id, s.ts, s.dur, s.track_id, "
              "coalesce(s.name, ''), coalesce(g.id, -1), coalesce(g.gpu, -1), "
              "coalesce(g.name, ''), coalesce(t.name, ''), "
              "coalesce(s.render_stage_category, -1), coalesce(s.context_id, "
              "-1), "
              "coalesce(s.submission_id, -1), coalesce(s.upid, -1) FROM "
              "gpu_slice s "
              "JOIN gpu_track t ON s.track_id = t.id LEFT JOIN gpu g ON g.id = "
              "extract_arg(t.dimension_arg_set_id, 'ugpu')"},
    {"counter", "id UInt64, ts Int64, track_id UInt64, value Float64",
     "track_id, ts",
     "SELECT " MACHINE_OF(
         "t") ", c.id, c.ts, c.track_id, c.value FROM "
              "counter c JOIN counter_track t ON c.track_id = t.id"},
    {"track",
     "id UInt64, name String, type String, parent_id Int64, unit String, "
     "ugpu Int64, gpu Int64",
     "id",
     "SELECT " MACHINE_OF(
         "t") ", t.id, coalesce(t.name, ''), "
              "coalesce(t.type, ''), coalesce(t.parent_id, -1), "
              "coalesce((SELECT unit "
              "FROM counter_track c WHERE c.id = t.id), ''), "
              "coalesce(extract_arg(t.dimension_arg_set_id, 'ugpu'), -1), "
              "coalesce(extract_arg(t.dimension_arg_set_id, 'gpu'), -1) FROM "
              "track t"},
    {"slice",
     "id UInt64, ts Int64, dur Int64, track_id UInt64, category String, "
     "name String, depth UInt32, parent_id Int64",
     "ts",
     "SELECT " MACHINE_OF(
         "t") ", s.id, s.ts, s.dur, s.track_id, "
              "coalesce(s.category, ''), coalesce(s.name, ''), s.depth, "
              "coalesce(s.parent_id, -1) FROM slice s JOIN track t ON "
              "s.track_id = "
              "t.id"},
    {"flow", "id UInt64, slice_out UInt64, slice_in UInt64", "id",
     "SELECT " MACHINE_OF("t") ", f.id, f.slice_out, f.slice_in FROM flow f "
                               "JOIN slice s ON s.id = f.slice_out JOIN track "
                               "t ON s.track_id = t.id"},
    {"gpu",
     "id UInt64, gpu Int64, name String, vendor String, model String, "
     "architecture String, uuid String",
     "id",
     "SELECT coalesce((SELECT raw_id FROM machine m WHERE m.id = "
     "g.machine_id), 0), g.id, g.gpu, coalesce(g.name, ''), "
     "coalesce(g.vendor, ''), coalesce(g.model, ''), "
     "coalesce(g.architecture, ''), coalesce(g.uuid, '') FROM gpu g"},
    {"machine",
     "id UInt64, hostname String, boot_id String, offset_ns Int64, "
     "uncertainty_ns Int64",
     "id",
     "SELECT m.raw_id, m.id, coalesce((SELECT extract_arg(s.arg_set_id, "
     "'debug.hostname') FROM slice s JOIN track t ON s.track_id = t.id "
     "WHERE s.name = 'gpuperf host' AND coalesce(t.machine_id, 0) = m.id "
     "LIMIT 1), ''), coalesce((SELECT extract_arg(s.arg_set_id, "
     "'debug.boot_id') FROM slice s JOIN track t ON s.track_id = t.id "
     "WHERE s.name = 'gpuperf host' AND coalesce(t.machine_id, 0) = m.id "
     "LIMIT 1), ''), coalesce((SELECT extract_arg(arg_set_id, "
     "'debug.offset_ns') FROM slice WHERE name = 'clock alignment' AND "
     "extract_arg(arg_set_id, 'debug.machine_id') = m.raw_id), 0), "
     "coalesce((SELECT extract_arg(arg_set_id, 'debug.uncertainty_ns') "
     "FROM slice WHERE name = 'clock alignment' AND extract_arg(arg_set_id, "
     "'debug.machine_id') = m.raw_id), 0) FROM machine m"},
    {"process", "upid UInt64, pid Int64, name String", "upid",
     "SELECT coalesce((SELECT raw_id FROM machine m WHERE m.id = "
     "p.machine_id), 0), p.upid, coalesce(p.pid, -1), coalesce(p.name, '') "
     "FROM process p"},
};

typedef struct tsv {
  char *p;
  size_t n, cap;
  bool oom;
} tsv;

static void put(tsv *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap : 1 << 16;
    while (b->n + n + 1 > nc)
      nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = nc;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void put_escaped(tsv *b, const char *s) {
  for (const char *q = s; *q; q++) {
    if (*q == '\t')
      put(b, "\\t", 2);
    else if (*q == '\n')
      put(b, "\\n", 2);
    else if (*q == '\\')
      put(b, "\\\\", 2);
    else
      put(b, q, 1);
  }
}

/* One TabSeparated row: trace, machine (the query's first column), then
 * meta ("\tGEN\tDAY"), then the query's other columns. */
static void put_row(tsv *b, const char *trace, const char *meta,
                    gp_tp_rows *rows, int ncols) {
  char num[64];
  put_escaped(b, trace);
  for (int c = 0; c < ncols; c++) {
    put(b, "\t", 1);
    switch (gp_tp_rows_type(rows, c)) {
    case GP_TP_INT:
      put(b, num,
          (size_t)snprintf(num, sizeof(num), "%lld",
                           (long long)gp_tp_rows_int(rows, c)));
      break;
    case GP_TP_REAL:
      put(b, num,
          (size_t)snprintf(num, sizeof(num), "%.17g",
                           gp_tp_rows_real(rows, c)));
      break;
    case GP_TP_TEXT:
      put_escaped(b, gp_tp_rows_text(rows, c));
      break;
    default:
      put(b, "0", 1);
      break;
    }
    if (c == 0)
      put(b, meta, strlen(meta));
  }
  put(b, "\n", 1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sends host h's batch (n rows) and empties it. An INSERT is not tried
 * again after an unclear failure: it could land twice. */
static int flush_batch(ch_target *t, int h, const char *q, tsv *b, uint64_t *n,
                       uint64_t *total) {
  if (b->oom)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  if (*n == 0)
    return 0;
  int status = ch_exec(t, h, q, b->p, b->n, false, NULL);
  if (!status)
    *total += *n;
  *n = 0;
  b->n = 0;
  return status;
}

/*
 * Sends one table in batches of batch_rows; adds to *total. Each row goes
 * straight into the _local table of its (trace, machine)'s shard, where
 * the Distributed table would send it, without the second hop.
 */
static int send_table(ch_target *t, gp_tp *tp, const ch_table *tb,
                      const char *trace, const char *meta, uint64_t batch_rows,
                      uint64_t *total) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, tb->sql, &rows, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "reading %s: %s", tb->name, err.message);
  char q[256];
  snprintf(q, sizeof(q), "INSERT INTO %s.%s_local FORMAT TabSeparated", t->db,
           tb->name);
  int ncols = gp_tp_rows_columns(rows), rc = 0, status = 0;
  tsv b[CH_MAX_HOSTS];
  uint64_t in_batch[CH_MAX_HOSTS];
  memset(b, 0, sizeof(b));
  memset(in_batch, 0, sizeof(in_batch));
  size_t max_bytes = BATCH_BYTES / (size_t)t->nhosts;
  while (!status && (rc = gp_tp_rows_next(rows, &err)) == 1) {
    int h = ch_shard(t, (uint32_t)gp_tp_rows_int(rows, 0));
    put_row(&b[h], trace, meta, rows, ncols);
    if (++in_batch[h] == batch_rows || b[h].n >= max_bytes)
      status = flush_batch(t, h, q, &b[h], &in_batch[h], total);
  }
  if (rc < 0 && !status)
    status = cli_error(CLI_BAD_INPUT, "reading %s: %s", tb->name, err.message);
  for (int h = 0; h < t->nhosts; h++) {
    if (!status)
      status = flush_batch(t, h, q, &b[h], &in_batch[h], total);
    free(b[h].p);
  }
  gp_tp_rows_destroy(rows);
  return status;
}

/*
 * Streaming: gpu_slice and counter rows come from the import as soon as
 * they are final (gp_tp_options.stream), are written as the queries of
 * tables[0] and [1] would write them, and go to a sender thread
 * (ch_stream.c) in batches while the import goes on. The batches being
 * filled hold at most BATCH_BYTES / 2, the sender's queue the other
 * half: the same 8 MB as the batches of a table sent after the import.
 */
typedef struct live {
  ch_target *t;
  const char *trace, *meta;
  uint64_t batch_rows;
  size_t max_bytes; /* of one batch being filled */
  uint32_t *machines;
  size_t nmachines, cap;
  bool mapped;
  int status; /* the first failure: an exit status, printed */
  ch_stream *stream;
  char q[NSTREAMED][256];
  tsv b[NSTREAMED][CH_MAX_HOSTS];
  uint64_t n[NSTREAMED][CH_MAX_HOSTS];
  uint64_t rows[NSTREAMED]; /* handed over by the import, by table */
  double import_end_s;
} live;

static void put_int(tsv *b, int64_t v) {
  char num[32];
  put(b, "\t", 1);
  put(b, num, (size_t)snprintf(num, sizeof(num), "%lld", (long long)v));
}

static void put_text(tsv *b, const char *s) {
  put(b, "\t", 1);
  put_escaped(b, s ? s : "");
}

/* One row as put_row writes tables[k]'s query's row (coalesce(x, -1),
 * coalesce(s, '')). */
static void put_stream_row(tsv *b, const live *L, const gp_tp_stream_row *r) {
  char num[64];
  put_escaped(b, L->trace);
  put(b, num,
      (size_t)snprintf(num, sizeof(num), "\t%lld", (long long)r->machine));
  put(b, L->meta, strlen(L->meta));
  put_int(b, r->id);
  put_int(b, r->ts);
  if (r->table == GP_TP_STREAM_COUNTER) {
    put_int(b, r->track_id);
    put(b, num, (size_t)snprintf(num, sizeof(num), "\t%.17g", r->value));
    put(b, "\n", 1);
    return;
  }
  bool gpu = !(r->nulls & GP_TP_STREAM_NULL_GPU);
  put_int(b, r->dur);
  put_int(b, r->track_id);
  put_text(b, r->name);
  put_int(b, gpu ? r->ugpu : -1);
  put_int(b, gpu ? r->gpu : -1);
  put_text(b, gpu ? r->gpu_name : NULL);
  put_text(b, r->track_name);
  put_int(b, r->nulls & GP_TP_STREAM_NULL_CATEGORY ? -1
                                                   : r->render_stage_category);
  put_int(b, r->nulls & GP_TP_STREAM_NULL_CONTEXT_ID ? -1 : r->context_id);
  put_int(b,
          r->nulls & GP_TP_STREAM_NULL_SUBMISSION_ID ? -1 : r->submission_id);
  put_int(b, r->nulls & GP_TP_STREAM_NULL_UPID ? -1 : r->upid);
  put(b, "\n", 1);
}

/* Hands batch (k, h) to the sender; the next one starts empty. */
static int live_flush(live *L, int k, int h) {
  tsv *b = &L->b[k][h];
  if (b->oom)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  if (L->n[k][h] == 0)
    return 0;
  int st = ch_stream_put(L->stream, h, L->q[k], b->p, b->n, L->n[k][h]);
  memset(b, 0, sizeof(*b));
  L->n[k][h] = 0;
  return st;
}

/* The first row: every machine is known, so the shards are; then the
 * sender starts (it has the connections to itself from here). */
static int live_begin(live *L) {
  L->mapped = true;
  int st = ch_map_shards(L->t, L->trace, L->machines, L->nmachines);
  if (!st)
    st = ch_stream_start(L->t, BATCH_BYTES / 2, &L->stream);
  return st;
}

/* gp_tp_options.stream: a row of gpu_slice or counter, or a machine. */
static int on_row(void *user, const gp_tp_stream_row *r) {
  live *L = user;
  if (L->status)
    return GP_ESTATE;
  if (r->table == GP_TP_STREAM_MACHINE) {
    if (L->nmachines == L->cap) {
      size_t cap = L->cap ? 2 * L->cap : 16;
      uint32_t *p = realloc(L->machines, cap * sizeof(*p));
      if (!p)
        return GP_ENOMEM;
      L->machines = p;
      L->cap = cap;
    }
    L->machines[L->nmachines++] = (uint32_t)r->machine;
    return 0;
  }
  if (!L->mapped && (L->status = live_begin(L)))
    return GP_EIO;
  if (!ch_knows_machine(L->t, (uint32_t)r->machine)) {
    L->status = cli_error(CLI_BAD_INPUT,
                          "internal: a row of machine %lld, unknown when "
                          "the rows began",
                          (long long)r->machine);
    return GP_ESTATE;
  }
  int k = r->table == GP_TP_STREAM_GPU_SLICE ? 0 : 1;
  int h = ch_shard(L->t, (uint32_t)r->machine);
  put_stream_row(&L->b[k][h], L, r);
  L->rows[k]++;
  if (++L->n[k][h] == L->batch_rows || L->b[k][h].n >= L->max_bytes)
    L->status = live_flush(L, k, h);
  else if (L->n[k][h] % 4096 == 0)
    L->status = ch_stream_status(L->stream); /* stop soon after a failure */
  return L->status ? GP_EIO : 0;
}

/* After the import: the last batches, then the sender stops. *sent gets
 * the rows it sent. */
static int live_end(live *L, int status, uint64_t *sent, double *first_s) {
  for (int k = 0; k < NSTREAMED; k++)
    for (int h = 0; h < L->t->nhosts; h++) {
      if (!status && L->stream)
        status = live_flush(L, k, h);
      free(L->b[k][h].p);
      memset(&L->b[k][h], 0, sizeof(L->b[k][h]));
    }
  int st = ch_stream_finish(L->stream, sent, first_s);
  L->stream = NULL;
  free(L->machines);
  L->machines = NULL;
  return status ? status : st;
}

/* The trace's raw machine ids (0 for tracks of no machine), malloc'd. */
static int trace_machines(gp_tp *tp, uint32_t **out, size_t *n) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  *out = NULL;
  *n = 0;
  if (gp_tp_query(tp, "SELECT DISTINCT coalesce(raw_id, 0) FROM machine", &rows,
                  &err) != 0)
    return cli_error(CLI_BAD_INPUT, "reading machine: %s", err.message);
  size_t cap = 0;
  int rc;
  while ((rc = gp_tp_rows_next(rows, &err)) == 1) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      uint32_t *p = realloc(*out, cap * sizeof(**out));
      if (!p) {
        gp_tp_rows_destroy(rows);
        return cli_error(CLI_BAD_INPUT, "out of memory");
      }
      *out = p;
    }
    (*out)[(*n)++] = (uint32_t)gp_tp_rows_int(rows, 0);
  }
  gp_tp_rows_destroy(rows);
  if (rc < 0)
    return cli_error(CLI_BAD_INPUT, "reading machine: %s", err.message);
  return 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf export FILE --to "
          "clickhouse[s]://[USER@]HOST:PORT[,HOST:PORT...]/DB\n"
          "                      [--cluster NAME] [--trace-name NAME] "
          "[--batch-rows N]\n"
          "                      [--timeout SECS] [--connect-timeout SECS] "
          "[--retries N]\n"
          "                      [--cacert FILE] [--in-memory] [--no-stream] "
          "[-q]\n\n"
          "Writes the trace's main tables (gpu_slice, counter, track, slice, "
          "flow,\n"
          "gpu, machine, process; each row with its trace and machine) into\n"
          "ClickHouse through its HTTP interface (PORT: the HTTP port, 8123; "
          "with\n"
          "clickhouses://, HTTPS, 8443). Rows are written under a new "
          "generation\n"
          "and made visible by one commit at the end: the views (gpu_slice, "
          "...)\n"
          "show a trace whole or not at all, and a failed export leaves the\n"
          "previous copy as it was. docs/scale.md has the schema and "
          "queries.\n\n"
          "  --cluster NAME      HOSTs are the shards of cluster NAME, in the\n"
          "                      order of its remote_servers entry: tables\n"
          "                      NAME_local on each, rows by "
          "cityHash64(trace,\n"
          "                      machine) %% shards, Distributed NAME_all "
          "over them\n"
          "  --trace-name NAME   the trace column (default: the file's name, "
          "'@' and\n"
          "                      the first 12 hex digits of its SHA-256)\n"
          "  --batch-rows N      rows per INSERT, at most (default 100000; "
          "fewer where\n"
          "                      the rows for one server pass 8 MB / "
          "servers)\n"
          "  --timeout SECS      the most one request may take, its retries "
          "included\n"
          "                      (default 300)\n"
          "  --connect-timeout SECS  per connection attempt (default 10)\n"
          "  --retries N         further tries of a failed request that may "
          "repeat\n"
          "                      (default 3, pauses from 0.1 s, doubling)\n"
          "  --cacert FILE       with clickhouses://, trust the CA "
          "certificates in FILE\n"
          "                      (PEM) instead of the system's\n"
          "  --in-memory         import the trace in memory: faster, but the "
          "memory\n"
          "                      grows with the trace (1.6 bytes a byte); by "
          "default the\n"
          "                      import's arrays live in temporary files in "
          "$TMPDIR\n"
          "                      (else /var/tmp), up to 2.2 bytes of disk a "
          "byte of\n"
          "                      trace, and the export stays under 64 MB "
          "resident\n"
          "  --no-stream         send every table after the import, by "
          "SQL (by default\n"
          "                      gpu_slice and counter rows are sent while "
          "the trace is\n"
          "                      read); the same rows, later\n"
          "  -q, --quiet         no summary\n\n"
          "The user is USER, else GPUPERF_CLICKHOUSE_USER; the password is "
          "read from\n"
          "GPUPERF_CLICKHOUSE_PASSWORD (never from the command line).\n");
}

/* The trace's default name, "BASENAME@HASH", into buf. */
static int default_name(const char *file, char *buf, size_t size) {
  char hex[65], err[300];
  if (trace_sha256_hex(file, hex, err, sizeof(err)))
    return cli_error(CLI_BAD_INPUT, "%s", err);
  const char *slash = strrchr(file, '/');
  snprintf(buf, size, "%s@%.12s", slash ? slash + 1 : file, hex);
  return 0;
}

/* The export's generation (ns since 1970), its UTC day, and the two as
 * the columns after machine ("\tGEN\tDAY"). */
static uint64_t make_gen(char day[16], char meta[64]) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t gen = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  struct tm tm;
  gmtime_r(&now.tv_sec, &tm);
  strftime(day, 16, "%Y-%m-%d", &tm);
  snprintf(meta, 64, "\t%llu\t%s", (unsigned long long)gen, day);
  return gen;
}

/* Whether the rows streamed of tables[k] are as many as its query gives
 * (a cheap guard, checked before the commit: counts, not values). */
static int check_count(gp_tp *tp, int k, uint64_t streamed) {
  static const char *const count[NSTREAMED] = {
      "SELECT count(*) FROM gpu_slice s JOIN gpu_track t ON s.track_id = t.id",
      "SELECT count(*) FROM counter c JOIN counter_track t ON c.track_id = "
      "t.id"};
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, count[k], &rows, &err) != 0 ||
      gp_tp_rows_next(rows, &err) != 1) {
    gp_tp_rows_destroy(rows);
    return cli_error(CLI_BAD_INPUT, "counting %s: %s", tables[k].name,
                     err.message);
  }
  uint64_t want = (uint64_t)gp_tp_rows_int(rows, 0);
  gp_tp_rows_destroy(rows);
  if (want != streamed)
    return cli_error(CLI_BAD_INPUT,
                     "internal: %llu %s rows streamed, but the table has "
                     "%llu (nothing was committed)",
                     (unsigned long long)streamed, tables[k].name,
                     (unsigned long long)want);
  return 0;
}

/* Sends the tables of tp not streamed already (all if L is NULL) under
 * generation gen, then commits it; *total counts every row sent. */
static int export_rest(ch_target *t, gp_tp *tp, live *L, const char *name,
                       const char *file, uint64_t gen, const char *day,
                       const char *meta, uint64_t batch_rows, uint64_t *total) {
  int status = 0;
  for (int k = 0; L && k < NSTREAMED && !status; k++)
    status = check_count(tp, k, L->rows[k]);
  if (!status && !(L && L->mapped)) {
    uint32_t *machines = NULL;
    size_t nmachines = 0;
    status = trace_machines(tp, &machines, &nmachines);
    if (!status)
      status = ch_map_shards(t, name, machines, nmachines);
    free(machines);
  }
  for (size_t i = L ? NSTREAMED : 0; !status && i < NTABLES; i++)
    status = send_table(t, tp, &tables[i], name, meta, batch_rows, total);
  if (!status)
    status = ch_commit(t, tables, NTABLES, name, gen, day, file, *total);
  return status;
}

/* See cli.h. */
int cli_export_clickhouse(int argc, char **argv) {
  const char *file = NULL, *url = NULL, *name = NULL;
  ch_target t;
  memset(&t, 0, sizeof(t));
  uint64_t batch_rows = 100000, timeout = 300, connect_timeout = 10,
           retries = 3;
  bool quiet = false, in_memory = false, stream = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--to") == 0 || strcmp(a, "--cluster") == 0 ||
               strcmp(a, "--trace-name") == 0 || strcmp(a, "--cacert") == 0) {
      if (i + 1 >= argc)
        return cli_error(CLI_USAGE, "%s needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 't' && a[3] == 'o')
        url = v;
      else if (a[2] == 'c' && a[3] == 'l')
        t.cluster = v;
      else if (a[2] == 'c')
        t.cacert = v;
      else
        name = v;
    } else if (strcmp(a, "--batch-rows") == 0 || strcmp(a, "--timeout") == 0 ||
               strcmp(a, "--connect-timeout") == 0 ||
               strcmp(a, "--retries") == 0) {
      if (i + 1 >= argc)
        return cli_error(CLI_USAGE, "%s needs a value", a);
      const char *v = argv[++i];
      bool ok = a[2] == 'b'   ? cli_parse_u64(a, v, 1, 10000000, &batch_rows)
                : a[2] == 't' ? cli_parse_u64(a, v, 1, 86400, &timeout)
                : a[2] == 'c' ? cli_parse_u64(a, v, 1, 3600, &connect_timeout)
                              : cli_parse_u64(a, v, 0, 20, &retries);
      if (!ok)
        return CLI_USAGE;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
    } else if (strcmp(a, "--no-stream") == 0) {
      stream = false;
    } else if (strcmp(a, "--in-memory") == 0) {
      in_memory = true;
    } else if (a[0] == '-' && a[1]) {
      usage(stderr);
      return cli_error(CLI_USAGE, "export: unknown option '%s'", a);
    } else if (!file) {
      file = a;
    } else {
      return cli_error(CLI_USAGE, "export: one trace at a time");
    }
  }
  if (!file || !url) {
    usage(stderr);
    return cli_error(CLI_USAGE, "export needs FILE and --to URL");
  }
  /* The trace is read twice (its hash, then the import) and mapped: a
   * pipe would have to be copied to disk first, which the user can do
   * as well as we can. */
  struct stat st;
  if (strcmp(file, "-") == 0 || (stat(file, &st) == 0 && !S_ISREG(st.st_mode)))
    return cli_error(CLI_USAGE,
                     "export: %s: not a regular file; export reads a trace "
                     "file, not a pipe or standard input (save it to a file "
                     "first)",
                     file);
  if (!ch_parse_url(url, &t))
    return cli_error(CLI_USAGE,
                     "--to: '%s' is not clickhouse://HOST:PORT[,...]/DB "
                     "(clickhouses:// for HTTPS; USER@ before HOST)",
                     url);
  if (t.cluster && !ch_ident_ok(t.cluster))
    return cli_error(CLI_USAGE, "--cluster: '%s' is not a cluster name",
                     t.cluster);
  if (t.nhosts > 1 && !t.cluster)
    return cli_error(CLI_USAGE, "several hosts need --cluster NAME");
  for (const char *c = name ? name : ""; *c; c++)
    if (*c == '\'' || *c == '\\' || (unsigned char)*c < 0x20)
      return cli_error(CLI_USAGE,
                       "--trace-name: '%s' has a quote, backslash "
                       "or control character",
                       name);
  t.timeout_ms = (long)timeout * 1000;
  t.connect_timeout_ms = (long)connect_timeout * 1000;
  t.retries = (int)retries;
  double t0 = now_s();
  /* Every server answers before the (long) import begins. */
  int status = ch_connect(&t, tables, NTABLES);
  char defname[1024];
  if (!status && !name) {
    status = default_name(file, defname, sizeof(defname));
    name = defname;
    for (const char *c = name; !status && *c; c++)
      if (*c == '\'' || *c == '\\' || (unsigned char)*c < 0x20)
        status = cli_error(CLI_USAGE,
                           "%s: the file's name has a quote, backslash or "
                           "control character: give --trace-name",
                           file);
  }
  /* The layout first: rows are sent while the trace is read. */
  char day[16], meta[64];
  uint64_t gen = make_gen(day, meta);
  if (!status)
    status = ch_create_layout(&t, tables, NTABLES);
  live L;
  memset(&L, 0, sizeof(L));
  L.t = &t;
  L.trace = name;
  L.meta = meta;
  L.batch_rows = batch_rows;
  L.max_bytes = BATCH_BYTES / 4 / (size_t)t.nhosts;
  for (int k = 0; k < NSTREAMED; k++)
    snprintf(L.q[k], sizeof(L.q[k]),
             "INSERT INTO %s.%s_local FORMAT TabSeparated", t.db,
             tables[k].name);
  gp_tp *tp = NULL;
  gp_tp_error err;
  gp_tp_options opts = {sizeof(opts), in_memory ? 0 : GP_TP_SPILL, NULL, NULL,
                        NULL,         stream ? on_row : NULL,      &L};
  double import_s = 0, first_s = 0;
  uint64_t sent_during = 0;
  uint64_t total = 0;
  if (!status) {
    int rc = gp_tp_open(file, &opts, &tp, &err);
    import_s = now_s();
    sent_during = ch_stream_sent(L.stream);
    /* The sender's own failure was printed: not the import's echo of it. */
    if (rc != 0 && !L.status)
      status = cli_error(CLI_BAD_INPUT, "%s", err.message);
    status = live_end(&L, status ? status : L.status, &total, &first_s);
  }
  if (!status)
    status = export_rest(&t, tp, stream ? &L : NULL, name, file, gen, day, meta,
                         batch_rows, &total);
  double secs = now_s() - t0;
  gp_tp_close(tp);
  if (!status && !quiet && stream)
    printf("streamed %llu gpu_slice and counter rows, %llu of them sent "
           "before the import ended (%.2f s into the export; the first "
           "INSERT at %.2f s)\n",
           (unsigned long long)(L.rows[0] + L.rows[1]),
           (unsigned long long)sent_during, import_s - t0,
           first_s > 0 ? first_s - t0 : -1.0);
  if (!status && !quiet)
    printf("exported %s as trace '%s': %llu rows in %.2f s (%.0f rows/s, "
           "import included) into %s%s%s on %d server%s over %ld "
           "connection%s\n",
           file, name, (unsigned long long)total, secs,
           secs > 0 ? (double)total / secs : 0.0, t.db,
           t.cluster ? ", cluster " : "", t.cluster ? t.cluster : "", t.nhosts,
           t.nhosts == 1 ? "" : "s", ch_connects(&t),
           ch_connects(&t) == 1 ? "" : "s");
  ch_close(&t);
  return status;
}
