/*
 * clickhouse.h - the ClickHouse side of `gpuperf export --to
 * clickhouse://` (clickhouse.c): the servers (one, or one per shard of a
 * cluster), their connections, the tables and views an export writes
 * and reads through, the shard of each (trace, machine), and the commit
 * that makes a trace's new copy visible all at once. docs/scale.md
 * describes the layout and its guarantees; export_clickhouse.c reads the
 * trace and sends its rows.
 */
#ifndef GPUPERF_CLICKHOUSE_H
#define GPUPERF_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_client.h"

#define CH_MAX_HOSTS 64

/* The Distributed tables' sharding key; the export asks the server to
 * evaluate this same expression to place its direct writes. */
#define CH_SHARD_KEY "cityHash64(trace, machine)"

/* One exported table: NAME_local (MergeTree) on every server, NAME_all
 * (Distributed) with a cluster, NAME (the view of committed rows). */
typedef struct ch_table {
  const char *name;
  const char *columns; /* after "trace String, machine UInt32, gen, day" */
  const char *order;   /* ORDER BY, after "trace, machine" */
  const char *sql;     /* on our trace processor: machine, then columns */
} ch_table;

typedef struct ch_target {
  char hosts[CH_MAX_HOSTS][128], ports[CH_MAX_HOSTS][16];
  int nhosts;
  bool tls;
  char db[128];
  char user[128]; /* "" if none */
  const char *cluster;
  const char *cacert; /* --cacert FILE, or NULL */
  long connect_timeout_ms, timeout_ms;
  int retries;
  http_client *http[CH_MAX_HOSTS];
  /* Which objects each server already has (preflight's answer). */
  char *existing[CH_MAX_HOSTS];
  /* The trace's machines (sorted) and the shard of each. */
  uint32_t *machines;
  int *shard_of;
  size_t nmachines;
} ch_target;

/* Whether s is a plain identifier ([A-Za-z0-9_]+). */
bool ch_ident_ok(const char *s);

/*
 * Parses clickhouse[s]://[USER@]HOST:PORT[,HOST:PORT...]/DB into t
 * (zeroed by the caller). USER may instead come from
 * GPUPERF_CLICKHOUSE_USER. Returns false if url is not of that form.
 */
bool ch_parse_url(const char *url, ch_target *t);

/*
 * Opens a client per server (the password from
 * GPUPERF_CLICKHOUSE_PASSWORD) and asks each, cheaply, which of the
 * export's tables its database has: fails fast when a server cannot be
 * reached or refuses us, and when the database holds tables of the
 * older layout (tables list the exported tables, n of them). Returns 0
 * or an exit status, the error printed.
 */
int ch_connect(ch_target *t, const ch_table *tables, size_t n);

/*
 * Creates on every server what it lacks of the layout for tables (n):
 * the database, NAME_local, NAME_all with a cluster, the commit log and
 * the views. Returns 0 or an exit status, the error printed.
 */
int ch_create_layout(ch_target *t, const ch_table *tables, size_t n);

/*
 * Learns from the first server the shard of (trace, m) for each of the
 * machines m (n of them; machine 0 is added), by evaluating
 * CH_SHARD_KEY % shards there. Returns 0 or an exit status.
 */
int ch_map_shards(ch_target *t, const char *trace, const uint32_t *machines,
                  size_t n);

/* The server that holds machine m's rows (after ch_map_shards). */
int ch_shard(const ch_target *t, uint32_t m);

/* Whether ch_map_shards placed machine m (ch_shard knows its server). */
bool ch_knows_machine(const ch_target *t, uint32_t m);

/*
 * Runs one statement on server h; body (may be NULL) is sent after it.
 * idempotent: whether it may be tried again after an unclear failure.
 * The answer, if resp is not NULL, is returned there (malloc'd). Returns
 * 0 or an exit status, the error (naming the server) printed.
 */
int ch_exec(ch_target *t, int h, const char *query, const char *body,
            size_t len, bool idempotent, char **resp);

/*
 * Makes generation gen of trace the visible one: one row in the commit
 * log (on the shard of (trace, 0)), then removes older generations' rows
 * where there are any. Returns 0 or an exit status; a failed clean-up
 * after the commit is only warned about.
 */
int ch_commit(ch_target *t, const ch_table *tables, size_t n, const char *trace,
              uint64_t gen, const char *day, const char *file, uint64_t rows);

/* Connections opened to all servers so far. */
long ch_connects(const ch_target *t);

/* Closes the connections and frees what t holds. */
void ch_close(ch_target *t);

#endif /* GPUPERF_CLICKHOUSE_H */
