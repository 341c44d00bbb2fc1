/*
 * clickhouse.c - the servers, layout, shards and commit of a ClickHouse
 * export (see clickhouse.h; docs/scale.md has the design).
 *
 * Why a commit log: ClickHouse makes one INSERT block atomic on one
 * table of one server, nothing wider. A trace is many INSERTs into eight
 * tables on several shards, so each export writes its rows under a new
 * generation `gen`, invisible to the views, and only then adds one row
 * (trace, gen) to the commit log; the views show each trace's newest
 * committed generation. A failed export leaves rows no view shows, and
 * the previous copy as it was. Older generations are deleted after the
 * commit (ALTER TABLE ... DELETE, a mutation), only where they exist.
 * Written for ClickHouse 18.16 (Debian's) and later: no window
 * functions, no ON CLUSTER (which needs ZooKeeper).
 */
#include "clickhouse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpuperf/gpuperf.h"

/* See clickhouse.h. */
bool ch_ident_ok(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* See clickhouse.h. */
bool ch_parse_url(const char *url, ch_target *t) {
  static const char plain[] = "clickhouse://", tls[] = "clickhouses://";
  const char *p;
  if (strncmp(url, plain, sizeof(plain) - 1) == 0) {
    p = url + sizeof(plain) - 1;
  } else if (strncmp(url, tls, sizeof(tls) - 1) == 0) {
    p = url + sizeof(tls) - 1;
    t->tls = true;
  } else {
    return false;
  }
  const char *slash = strchr(p, '/'), *at = strchr(p, '@');
  const char *env_user = getenv("GPUPERF_CLICKHOUSE_USER");
  if (env_user && snprintf(t->user, sizeof(t->user), "%s", env_user) >=
                      (int)sizeof(t->user))
    return false;
  if (at && slash && at < slash) {
    if (at == p || at - p >= (long)sizeof(t->user))
      return false;
    snprintf(t->user, sizeof(t->user), "%.*s", (int)(at - p), p);
    p = at + 1;
  }
  for (const char *c = t->user; *c; c++)
    if ((unsigned char)*c < 0x20)
      return false;
  if (!slash ||
      snprintf(t->db, sizeof(t->db), "%s", slash + 1) >= (int)sizeof(t->db) ||
      !ch_ident_ok(t->db))
    return false;
  while (p < slash) {
    const char *comma = memchr(p, ',', (size_t)(slash - p));
    const char *end = comma ? comma : slash;
    const char *colon = memchr(p, ':', (size_t)(end - p));
    if (!colon || colon == p || colon + 1 == end || t->nhosts == CH_MAX_HOSTS ||
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

/* See clickhouse.h. */
int ch_exec(ch_target *t, int h, const char *query, const char *body,
            size_t len, bool idempotent, char **resp) {
  size_t cap = 16 + 3 * strlen(query);
  char *path = malloc(cap), err[512] = "", *answer = NULL;
  if (!path)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  strcpy(path, "/?query=");
  http_url_encode(path, cap, query);
  int status = http_post(t->http[h], path, body, len, idempotent, &answer, err,
                         sizeof(err));
  free(path);
  if (resp)
    *resp = NULL;
  if (status == 200) {
    if (resp)
      *resp = answer ? answer : strdup("");
    else
      free(answer);
    return 0;
  }
  if (status < 0)
    cli_error(CLI_BAD_INPUT, "ClickHouse at %s:%s: %s", t->hosts[h],
              t->ports[h], err);
  else
    cli_error(CLI_BAD_INPUT, "ClickHouse at %s:%s answered %d: %.300s",
              t->hosts[h], t->ports[h], status, answer ? answer : "");
  free(answer);
  return CLI_BAD_INPUT;
}

/* Whether server h has object name (a line "name\tengine" of its list). */
static const char *existing(const ch_target *t, int h, const char *name) {
  size_t n = strlen(name);
  for (const char *l = t->existing[h]; l && *l;) {
    const char *e = strchr(l, '\n');
    if (strncmp(l, name, n) == 0 && l[n] == '\t')
      return l + n + 1;
    l = e ? e + 1 : l + strlen(l);
  }
  return NULL;
}

/* See clickhouse.h. */
int ch_connect(ch_target *t, const ch_table *tables, size_t n) {
  const char *pw = getenv("GPUPERF_CLICKHOUSE_PASSWORD");
  /* The user agent lets a server's query_log tell our requests apart. */
  http_options o = {t->user[0] ? t->user : NULL,
                    pw,
                    t->connect_timeout_ms,
                    t->timeout_ms,
                    t->retries,
                    "gpuperf-export/" GP_VERSION_STRING,
                    t->cacert};
  char q[768], url[200], err[256];
  /* With a cluster, also how many shards the server knows it by: direct
   * writes for a different count would not be where the Distributed
   * tables look. */
  int len = snprintf(q, sizeof(q),
                     "SELECT name, engine FROM system.tables WHERE database "
                     "= '%s' UNION ALL SELECT '', 'Database' FROM "
                     "system.databases WHERE name = '%s'",
                     t->db, t->db);
  if (t->cluster)
    snprintf(q + len, sizeof(q) - (size_t)len,
             " UNION ALL SELECT '#shards', toString(count()) FROM "
             "system.clusters WHERE cluster = '%s' AND replica_num = 1",
             t->cluster);
  for (int h = 0; h < t->nhosts; h++) {
    snprintf(url, sizeof(url), "%s://%s:%s", t->tls ? "https" : "http",
             t->hosts[h], t->ports[h]);
    if (http_client_create(url, &o, &t->http[h], err, sizeof(err)))
      return cli_error(CLI_BAD_INPUT, "%s", err);
    if (ch_exec(t, h, q, NULL, 0, true, &t->existing[h]))
      return CLI_BAD_INPUT;
    const char *shards = existing(t, h, "#shards");
    if (t->cluster && (!shards || atoi(shards) != t->nhosts))
      return cli_error(CLI_BAD_INPUT,
                       "ClickHouse at %s:%s: cluster '%s' has %d shards "
                       "there, but the URL lists %d servers (one per shard, "
                       "in the order of its remote_servers entry)",
                       t->hosts[h], t->ports[h], t->cluster,
                       shards ? atoi(shards) : 0, t->nhosts);
    for (size_t i = 0; i < n; i++) {
      const char *engine = existing(t, h, tables[i].name);
      if (engine && strncmp(engine, "View\n", 5) != 0)
        return cli_error(CLI_BAD_INPUT,
                         "ClickHouse at %s:%s: %s.%s is not the view this "
                         "export writes through (an older gpuperf's "
                         "table?): export into another database, or drop "
                         "%s's gpuperf tables first",
                         t->hosts[h], t->ports[h], t->db, tables[i].name,
                         t->db);
    }
  }
  return 0;
}

/* Runs q on server h unless it already has object name. */
static int create(ch_target *t, int h, const char *name, const char *q) {
  if (existing(t, h, name))
    return 0;
  return ch_exec(t, h, q, NULL, 0, true, NULL);
}

/* See clickhouse.h. */
int ch_create_layout(ch_target *t, const ch_table *tables, size_t n) {
  char q[2048], name[160];
  const char *db = t->db, *all = t->cluster ? "_all" : "_local";
  for (int h = 0; h < t->nhosts; h++) {
    snprintf(q, sizeof(q), "CREATE DATABASE IF NOT EXISTS %s", db);
    if (create(t, h, "", q))
      return CLI_BAD_INPUT;
    for (size_t i = 0; i < n; i++) {
      const ch_table *tb = &tables[i];
      snprintf(name, sizeof(name), "%s_local", tb->name);
      snprintf(q, sizeof(q),
               "CREATE TABLE IF NOT EXISTS %s.%s (trace String, machine "
               "UInt32, gen UInt64, day Date, %s) ENGINE = MergeTree() "
               "PARTITION BY toYYYYMM(day) ORDER BY (trace, machine, %s)",
               db, name, tb->columns, tb->order);
      if (create(t, h, name, q))
        return CLI_BAD_INPUT;
    }
    snprintf(q, sizeof(q),
             "CREATE TABLE IF NOT EXISTS %s.committed_local (trace String, "
             "machine UInt32, gen UInt64, day Date, file String, rows UInt64) "
             "ENGINE = MergeTree() PARTITION BY toYYYYMM(day) ORDER BY "
             "(trace, gen)",
             db);
    if (create(t, h, "committed_local", q))
      return CLI_BAD_INPUT;
    for (size_t i = 0; t->cluster && i <= n; i++) {
      const char *base = i < n ? tables[i].name : "committed";
      snprintf(name, sizeof(name), "%s_all", base);
      snprintf(q, sizeof(q),
               "CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE = "
               "Distributed(%s, %s, %s_local, " CH_SHARD_KEY ")",
               db, name, db, base, t->cluster, db, base);
      if (create(t, h, name, q))
        return CLI_BAD_INPUT;
    }
    snprintf(q, sizeof(q),
             "CREATE VIEW IF NOT EXISTS %s.traces AS SELECT trace, g AS gen, "
             "d AS day, f AS file, r AS rows FROM (SELECT trace, max(gen) AS "
             "g, argMax(day, gen) AS d, argMax(file, gen) AS f, argMax(rows, "
             "gen) AS r FROM %s.committed%s GROUP BY trace)",
             db, db, all);
    if (create(t, h, "traces", q))
      return CLI_BAD_INPUT;
    for (size_t i = 0; i < n; i++) {
      snprintf(q, sizeof(q),
               "CREATE VIEW IF NOT EXISTS %s.%s AS SELECT * FROM %s.%s%s "
               "WHERE (trace, gen) GLOBAL IN (SELECT trace, gen FROM "
               "%s.traces)",
               db, tables[i].name, db, tables[i].name, all, db);
      if (create(t, h, tables[i].name, q))
        return CLI_BAD_INPUT;
    }
  }
  return 0;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* See clickhouse.h. */
int ch_map_shards(ch_target *t, const char *trace, const uint32_t *machines,
                  size_t n) {
  t->machines = malloc((n + 1) * sizeof(*t->machines));
  t->shard_of = malloc((n + 1) * sizeof(*t->shard_of));
  size_t cap = 256 + strlen(trace) + 12 * (n + 1);
  char *q = malloc(cap), *resp = NULL;
  if (!t->machines || !t->shard_of || !q) {
    free(q);
    return cli_error(CLI_BAD_INPUT, "out of memory");
  }
  memcpy(t->machines, machines, n * sizeof(*machines));
  t->machines[n] = 0;
  qsort(t->machines, n + 1, sizeof(*t->machines), cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i <= n; i++)
    if (k == 0 || t->machines[k - 1] != t->machines[i])
      t->machines[k++] = t->machines[i];
  t->nmachines = k;
  /* The same expression the Distributed tables use, on the same types. */
  size_t len = (size_t)snprintf(q, cap,
                                "SELECT machine, " CH_SHARD_KEY
                                " %% %d FROM (SELECT '%s' AS trace, "
                                "toUInt32(arrayJoin([",
                                t->nhosts, trace);
  for (size_t i = 0; i < k; i++)
    len += (size_t)snprintf(q + len, cap - len, "%s%u", i ? "," : "",
                            t->machines[i]);
  snprintf(q + len, cap - len, "])) AS machine) ORDER BY machine");
  int rc = ch_exec(t, 0, q, NULL, 0, true, &resp);
  free(q);
  if (rc)
    return rc;
  const char *p = resp;
  for (size_t i = 0; i < k; i++) {
    unsigned m;
    int s, used;
    if (sscanf(p, "%u\t%d\n%n", &m, &s, &used) != 2 || m != t->machines[i] ||
        s < 0 || s >= t->nhosts) {
      free(resp);
      return cli_error(CLI_BAD_INPUT,
                       "ClickHouse at %s:%s: unexpected answer to the shard "
                       "query",
                       t->hosts[0], t->ports[0]);
    }
    t->shard_of[i] = s;
    p += used;
  }
  free(resp);
  return 0;
}

/* See clickhouse.h. */
int ch_shard(const ch_target *t, uint32_t m) {
  const uint32_t *f =
      bsearch(&m, t->machines, t->nmachines, sizeof(m), cmp_u32);
  return f ? t->shard_of[f - t->machines] : 0;
}

/* See clickhouse.h. */
bool ch_knows_machine(const ch_target *t, uint32_t m) {
  return t->nmachines &&
         bsearch(&m, t->machines, t->nmachines, sizeof(m), cmp_u32) != NULL;
}

/* Deletes trace's rows older than gen on server h, table by table, where
 * a cheap count finds any. */
static int clean(ch_target *t, int h, const ch_table *tables, size_t n,
                 const char *trace, uint64_t gen) {
  size_t cap = 400 * (n + 1);
  char *q = malloc(cap), *resp = NULL;
  if (!q)
    return cli_error(CLI_BAD_INPUT, "out of memory");
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(q + len, cap - len,
                            "%sSELECT %zu, count() FROM %s.%s_local WHERE "
                            "trace = '%s' AND gen < %llu",
                            i ? " UNION ALL " : "", i, t->db, tables[i].name,
                            trace, (unsigned long long)gen);
  int rc = ch_exec(t, h, q, NULL, 0, true, &resp);
  for (const char *p = resp; !rc && p && *p;) {
    size_t i;
    unsigned long long c;
    int used;
    if (sscanf(p, "%zu\t%llu\n%n", &i, &c, &used) != 2 || i >= n)
      break;
    p += used;
    if (!c)
      continue;
    snprintf(q, cap,
             "ALTER TABLE %s.%s_local DELETE WHERE trace = '%s' AND "
             "gen < %llu",
             t->db, tables[i].name, trace, (unsigned long long)gen);
    rc = ch_exec(t, h, q, NULL, 0, true, NULL);
  }
  free(resp);
  free(q);
  return rc;
}

/* See clickhouse.h. */
int ch_commit(ch_target *t, const ch_table *tables, size_t n, const char *trace,
              uint64_t gen, const char *day, const char *file, uint64_t rows) {
  char q[256], row[2048];
  snprintf(q, sizeof(q),
           "INSERT INTO %s.committed_local (trace, machine, gen, day, file, "
           "rows) FORMAT TabSeparated",
           t->db);
  /* The file name is the user's: kept out of the row if it would break
   * the format (the trace name was checked). */
  bool plain = true;
  for (const char *c = file; *c; c++)
    plain = plain && *c != '\t' && *c != '\n' && *c != '\\';
  int len = snprintf(row, sizeof(row), "%s\t0\t%llu\t%s\t%s\t%llu\n", trace,
                     (unsigned long long)gen, day, plain ? file : "",
                     (unsigned long long)rows);
  if (len >= (int)sizeof(row))
    len = snprintf(row, sizeof(row), "%s\t0\t%llu\t%s\t\t%llu\n", trace,
                   (unsigned long long)gen, day, (unsigned long long)rows);
  /* A commit row sent twice is harmless: the views read max(gen). */
  int rc = ch_exec(t, ch_shard(t, 0), q, row, (size_t)len, true, NULL);
  if (rc)
    return rc;
  for (int h = 0; h < t->nhosts; h++)
    if (clean(t, h, tables, n, trace, gen))
      fprintf(stderr,
              "gpuperf: warning: trace '%s' is committed, but its older "
              "rows on %s:%s are left (invisible to the views)\n",
              trace, t->hosts[h], t->ports[h]);
  return 0;
}

/* See clickhouse.h. */
long ch_connects(const ch_target *t) {
  long n = 0;
  for (int h = 0; h < t->nhosts; h++)
    if (t->http[h])
      n += http_client_connects(t->http[h]);
  return n;
}

/* See clickhouse.h. */
void ch_close(ch_target *t) {
  for (int h = 0; h < t->nhosts; h++) {
    http_client_destroy(t->http[h]);
    free(t->existing[h]);
    t->http[h] = NULL;
    t->existing[h] = NULL;
  }
  free(t->machines);
  free(t->shard_of);
  t->machines = NULL;
  t->shard_of = NULL;
}
