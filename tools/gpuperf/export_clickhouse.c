/*
 * export_clickhouse.c - `gpuperf export FILE --to clickhouse://HOST:PORT/DB
 * [--cluster NAME]`: a trace's main tables into ClickHouse, for analysis
 * at cluster scale (docs/scale.md).
 *
 * The tables (gpu_slice, counter, track, slice, flow, gpu, machine,
 * process) are read from our trace processor, each row with the `trace`
 * it came from and its `machine` (the raw machine id, as in merged
 * traces), and sent through ClickHouse's HTTP interface as TabSeparated
 * INSERTs of --batch-rows rows (http_client.c). Every table is a
 * MergeTree partitioned by trace: exporting a trace again first drops its
 * partition, so rows are never duplicated. With --cluster the URL lists
 * the cluster's shards (HOST:PORT,HOST:PORT,...; HTTP ports): each gets
 * the MergeTree tables as NAME_local and a Distributed table NAME over
 * them, sharded by `machine` (so one machine's rows stay together); the
 * export writes each row straight into its shard's NAME_local (shard
 * machine % shards, the URL listing the shards in the cluster's order,
 * as the Distributed tables would send it). Written for ClickHouse 18.16 and
 * later (no window functions, no ON CLUSTER, which needs ZooKeeper).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "gpuperf/tp.h"
#include "http_client.h"

#define MAX_HOSTS 64

typedef struct ch_table {
  const char *name;
  const char *columns; /* after "trace String, machine UInt32, " */
  const char *order;   /* ORDER BY, after "trace, machine" */
  const char *sql;     /* on our trace processor: machine, then columns */
} ch_table;

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

typedef struct ch_target {
  char hosts[MAX_HOSTS][128], ports[MAX_HOSTS][16];
  int nhosts;
  char db[128];
  char auth[600]; /* "&user=...&password=..." (URL-encoded) or "" */
  const char *cluster;
} ch_target;

static bool ident_ok(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* clickhouse://[USER@]HOST:PORT[,HOST:PORT...]/DB; the password, if
 * any, from GPUPERF_CLICKHOUSE_PASSWORD (not on the command line). */
static bool parse_url(const char *url, ch_target *t) {
  static const char scheme[] = "clickhouse://";
  if (strncmp(url, scheme, sizeof(scheme) - 1) != 0)
    return false;
  const char *p = url + sizeof(scheme) - 1, *slash = strchr(p, '/');
  const char *at = strchr(p, '@');
  if (at && slash && at < slash) {
    char user[128];
    if (at == p || at - p >= (long)sizeof(user))
      return false;
    snprintf(user, sizeof(user), "%.*s", (int)(at - p), p);
    const char *pw = getenv("GPUPERF_CLICKHOUSE_PASSWORD");
    strcpy(t->auth, "&user=");
    if (!http_url_encode(t->auth, sizeof(t->auth), user))
      return false;
    if (pw && (strlen(t->auth) + 10 >= sizeof(t->auth) ||
               !strcat(t->auth, "&password=") ||
               !http_url_encode(t->auth, sizeof(t->auth), pw)))
      return false;
    p = at + 1;
  }
  if (!slash ||
      snprintf(t->db, sizeof(t->db), "%s", slash + 1) >= (int)sizeof(t->db) ||
      !ident_ok(t->db))
    return false;
  while (p < slash) {
    const char *comma = memchr(p, ',', (size_t)(slash - p));
    const char *end = comma ? comma : slash;
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon || colon == p || colon + 1 == end || t->nhosts == MAX_HOSTS ||
        colon - p >= 128 || end - colon - 1 >= 16)
      return false;
    snprintf(t->hosts[t->nhosts], 128, "%.*s", (int)(colon - p), p);
    snprintf(t->ports[t->nhosts], 16, "%.*s", (int)(end - colon - 1),
             colon + 1);
    for (const char *d = t->ports[t->nhosts]; *d; d++)
      if (*d < '0' || *d > '9')
        return false;
    t->nhosts++;
    p = comma ? comma + 1 : slash;
  }
  return t->nhosts > 0;
}

/* Runs one statement on host h; body (may be NULL) is sent after it. */
static int ch_exec(const ch_target *t, int h, const char *query,
                   const char *params, const char *body, size_t len) {
  char path[8192] = "/?query=";
  if (!http_url_encode(path, sizeof(path), query))
    return cli_error(CLI_BAD_INPUT, "ClickHouse statement too long");
  if (params)
    strncat(path, params, sizeof(path) - strlen(path) - 1);
  strncat(path, t->auth, sizeof(path) - strlen(path) - 1);
  char err[256] = "", *resp = NULL;
  int status = http_post(t->hosts[h], t->ports[h], path, body ? body : "", len,
                         &resp, err, sizeof(err));
  if (status == 200) {
    free(resp);
    return 0;
  }
  if (status < 0)
    cli_error(CLI_BAD_INPUT, "ClickHouse at %s", err);
  else
    cli_error(CLI_BAD_INPUT, "ClickHouse at %s:%s answered %d: %.300s",
              t->hosts[h], t->ports[h], status, resp ? resp : "");
  free(resp);
  return CLI_BAD_INPUT;
}

/* Creates the tables on every host and drops the trace's old rows. */
static int prepare(const ch_target *t, const char *trace) {
  char q[2048];
  for (int h = 0; h < t->nhosts; h++) {
    snprintf(q, sizeof(q), "CREATE DATABASE IF NOT EXISTS %s", t->db);
    if (ch_exec(t, h, q, NULL, NULL, 0))
      return CLI_BAD_INPUT;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
      const ch_table *tb = &tables[i];
      const char *suffix = t->cluster ? "_local" : "";
      snprintf(q, sizeof(q),
               "CREATE TABLE IF NOT EXISTS %s.%s%s (trace String, machine "
               "UInt32, %s) ENGINE = MergeTree() PARTITION BY trace ORDER BY "
               "(trace, machine, %s)",
               t->db, tb->name, suffix, tb->columns, tb->order);
      if (ch_exec(t, h, q, NULL, NULL, 0))
        return CLI_BAD_INPUT;
      if (t->cluster) {
        snprintf(q, sizeof(q),
                 "CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE = "
                 "Distributed(%s, %s, %s_local, machine)",
                 t->db, tb->name, t->db, tb->name, t->cluster, t->db, tb->name);
        if (ch_exec(t, h, q, NULL, NULL, 0))
          return CLI_BAD_INPUT;
      }
      snprintf(q, sizeof(q), "ALTER TABLE %s.%s%s DROP PARTITION '%s'", t->db,
               tb->name, suffix, trace);
      if (ch_exec(t, h, q, NULL, NULL, 0))
        return CLI_BAD_INPUT;
    }
  }
  return 0;
}

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

/* One TabSeparated row: trace, then the query's columns. */
static void put_row(tsv *b, const char *trace, gp_tp_rows *rows, int ncols) {
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
  }
  put(b, "\n", 1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sends host h's batch (n rows) and empties it. */
static int flush_batch(const ch_target *t, int h, const char *q, tsv *b,
                       uint64_t *n, uint64_t *total) {
  if (b->oom)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  if (*n == 0)
    return 0;
  int status = ch_exec(t, h, q, NULL, b->p, b->n);
  if (!status)
    *total += *n;
  *n = 0;
  b->n = 0;
  return status;
}

/*
 * Sends one table in batches of batch_rows; adds to *total. With a
 * cluster, each row goes straight to its shard's _local table: shard
 * machine % shards, as the Distributed tables' sharding key `machine`
 * (equal weights) would send it, without the second hop.
 */
static int send_table(const ch_target *t, gp_tp *tp, const ch_table *tb,
                      const char *trace, uint64_t batch_rows, uint64_t *total) {
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  if (gp_tp_query(tp, tb->sql, &rows, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "reading %s: %s", tb->name, err.message);
  char q[256];
  snprintf(q, sizeof(q), "INSERT INTO %s.%s%s FORMAT TabSeparated", t->db,
           tb->name, t->cluster ? "_local" : "");
  int ncols = gp_tp_rows_columns(rows), rc = 0, status = 0;
  tsv b[MAX_HOSTS];
  uint64_t in_batch[MAX_HOSTS];
  memset(b, 0, sizeof(b));
  memset(in_batch, 0, sizeof(in_batch));
  while (!status && (rc = gp_tp_rows_next(rows, &err)) == 1) {
    int h = (int)((uint64_t)gp_tp_rows_int(rows, 0) % (uint64_t)t->nhosts);
    put_row(&b[h], trace, rows, ncols);
    if (++in_batch[h] == batch_rows)
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

static void usage(FILE *out) {
  fprintf(
      out,
      "usage: gpuperf export FILE --to "
      "clickhouse://[USER@]HOST:PORT[,HOST:PORT...]/DB\n"
      "                      [--cluster NAME] [--trace-name NAME] "
      "[--batch-rows N] [-q]\n\n"
      "Writes the trace's main tables (gpu_slice, counter, track, slice, "
      "flow,\n"
      "gpu, machine, process; each row with its trace and machine) into\n"
      "ClickHouse through its HTTP interface (PORT: the HTTP port, "
      "8123 by\n"
      "default). Tables are MergeTree, one partition per trace: "
      "exporting a\n"
      "trace again replaces its rows. docs/scale.md has the schema and "
      "queries.\n\n"
      "  --cluster NAME      HOSTs are the shards of cluster NAME, in the\n"
      "                      order of its remote_servers entry: tables\n"
      "                      NAME_local on each, rows by machine %% shards,\n"
      "                      and Distributed tables over them\n"
      "  --trace-name NAME   the trace column (default: the file's "
      "name)\n"
      "  --batch-rows N      rows per INSERT (default 100000)\n"
      "  -q, --quiet         no summary\n\n"
      "USER's password, if any, is read from GPUPERF_CLICKHOUSE_PASSWORD.\n");
}

/* See cli.h. */
int cli_export_clickhouse(int argc, char **argv) {
  const char *file = NULL, *url = NULL, *name = NULL;
  ch_target t;
  memset(&t, 0, sizeof(t));
  uint64_t batch_rows = 100000;
  bool quiet = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--to") == 0 || strcmp(a, "--cluster") == 0 ||
               strcmp(a, "--trace-name") == 0 ||
               strcmp(a, "--batch-rows") == 0) {
      if (i + 1 >= argc)
        return cli_error(CLI_USAGE, "%s needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 't' && a[3] == 'o')
        url = v;
      else if (a[2] == 'c')
        t.cluster = v;
      else if (a[2] == 't')
        name = v;
      else if (!cli_parse_u64(a, v, 1, 10000000, &batch_rows))
        return CLI_USAGE;
    } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
      quiet = true;
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
  if (!parse_url(url, &t))
    return cli_error(CLI_USAGE,
                     "--to: '%s' is not clickhouse://HOST:PORT[,...]/DB", url);
  if (t.cluster && !ident_ok(t.cluster))
    return cli_error(CLI_USAGE, "--cluster: '%s' is not a cluster name",
                     t.cluster);
  if (t.nhosts > 1 && !t.cluster)
    return cli_error(CLI_USAGE, "several hosts need --cluster NAME");
  if (!name) {
    const char *slash = strrchr(file, '/');
    name = slash ? slash + 1 : file;
  }
  for (const char *c = name; *c; c++)
    if (*c == '\'' || *c == '\\' || (unsigned char)*c < 0x20)
      return cli_error(CLI_USAGE,
                       "--trace-name: '%s' has a quote, backslash "
                       "or control character",
                       name);
  gp_tp *tp = NULL;
  gp_tp_error err;
  if (gp_tp_open(file, NULL, &tp, &err) != 0)
    return cli_error(CLI_BAD_INPUT, "%s", err.message);
  double t0 = now_s();
  int status = prepare(&t, name);
  uint64_t total = 0;
  for (size_t i = 0; !status && i < sizeof(tables) / sizeof(tables[0]); i++)
    status = send_table(&t, tp, &tables[i], name, batch_rows, &total);
  double secs = now_s() - t0;
  gp_tp_close(tp);
  if (!status && !quiet)
    printf("exported %s as trace '%s': %llu rows in %.2f s (%.0f rows/s) "
           "into %s%s%s on %d server%s\n",
           file, name, (unsigned long long)total, secs,
           secs > 0 ? (double)total / secs : 0.0, t.db,
           t.cluster ? ", cluster " : "", t.cluster ? t.cluster : "", t.nhosts,
           t.nhosts == 1 ? "" : "s");
  return status;
}
