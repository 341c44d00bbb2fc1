/*
 * test_clickhouse_stream.c - the streamed export (gpu_slice and counter
 * rows sent while the trace is read) writes the same rows as the export
 * that reads every table by SQL after an in-memory import
 * (`--in-memory --no-stream`, the former way, independent of the
 * stream). A merged 2-machine demo trace goes to a 2-shard cluster both
 * ways under two trace names; per table, ClickHouse's count and a
 * checksum of every column but trace, gen and day (sum of cityHash64)
 * must be equal. With batches small enough that the sender's queue
 * cannot hold them all, rows must have landed before the import ended
 * (the export's own line says how many; its queue's bound, not timing,
 * makes that certain). Skipped where ClickHouse is absent.
 */
#include "clickhouse_util.h"

static const struct {
  const char *name, *columns;
} tables[] = {
    {"gpu_slice", "machine, id, ts, dur, track_id, name, ugpu, gpu, gpu_name, "
                  "queue, render_stage_category, context_id, submission_id, "
                  "upid"},
    {"counter", "machine, id, ts, track_id, value"},
    {"track", "machine, id, name, type, parent_id, unit, ugpu, gpu"},
    {"slice", "machine, id, ts, dur, track_id, category, name, depth, "
              "parent_id"},
    {"flow", "machine, id, slice_out, slice_in"},
    {"gpu", "machine, id, gpu, name, vendor, model, architecture, uuid"},
    {"machine", "machine, id, hostname, boot_id, offset_ns, uncertainty_ns"},
    {"process", "machine, upid, pid, name"},
};

/* "count checksum" of table i's rows of trace `name`, over both shards. */
static void sums(int i, const char *name, long long *count,
                 unsigned long long *sum) {
  char q[1024];
  *count = 0;
  *sum = 0;
  for (int h = 0; h < 2; h++) {
    snprintf(q, sizeof(q),
             "SELECT count(), sum(cityHash64(%s)) FROM gpdb.%s_local WHERE "
             "(trace, gen) IN (SELECT trace, gen FROM gpdb.traces) AND "
             "trace = '%s'",
             tables[i].columns, tables[i].name, name);
    char *r = ch_q(h, q);
    ASSERT_NOT_NULL(r);
    long long c = 0;
    unsigned long long s = 0;
    ASSERT_EQ(sscanf(r, "%lld\t%llu", &c, &s), 2);
    *count += c;
    *sum += s; /* modulo 2^64 on both sides */
    free(r);
  }
}

TEST(clickhouse_streamed_export_equals_queried) {
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char base[1100], nodes[2][1100], merged[1100], url[256], out[1100];
  snprintf(base, sizeof(base), "%s/run.pftrace", dir);
  for (int k = 0; k < 2; k++)
    snprintf(nodes[k], sizeof(nodes[k]), "%s/run-node%d.pftrace", dir, k);
  snprintf(merged, sizeof(merged), "%s/all.pftrace", dir);
  snprintf(out, sizeof(out), "%s/export.out", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "2",  "--gpus", "2",
                  "--steps",   "200",  "-q",         "-o", base,     NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  char *merge[] = {(char *)cli, "merge", nodes[0], nodes[1],
                   "-o",        merged,  NULL};
  ASSERT_EQ(ch_run(merge, NULL), 0);
  ch_start_two();
  ch_url(url, sizeof(url));
  setenv("TMPDIR", dir, 1);
  /* Streamed (spilled, the default), in batches of 200 rows: more than
   * the sender's queue (64 batches) can hold. */
  char *s[] = {(char *)cli, "export",       merged,    "--to",
               url,         "--cluster",    "gp_test", "--trace-name",
               "streamed",  "--batch-rows", "200",     NULL};
  ASSERT_EQ(ch_run(s, out), 0);
  char *o = ch_slurp(out);
  printf("%s", o);
  const char *line = strstr(o, "streamed ");
  ASSERT_NOT_NULL(line);
  unsigned long long streamed = 0, during = 0;
  ASSERT_EQ(sscanf(line, "streamed %llu gpu_slice and counter rows, %llu",
                   &streamed, &during),
            2);
  /* At the import's end the export holds at most the queue's 64 batches
   * and the 4 being filled (2 tables x 2 servers): the rest was sent. */
  ASSERT_GT(streamed, (64 + 4) * 200);
  ASSERT_GE(during, streamed - (64 + 4) * 200);
  free(o);
  char *q[] = {(char *)cli, "export",      merged,        "--to",
               url,         "--cluster",   "gp_test",     "--trace-name",
               "queried",   "--in-memory", "--no-stream", NULL};
  ASSERT_EQ(ch_run(q, out), 0);
  o = ch_slurp(out);
  ASSERT(!strstr(o, "streamed "));
  free(o);
  for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
    long long c1, c2;
    unsigned long long s1, s2;
    sums((int)i, "streamed", &c1, &s1);
    sums((int)i, "queried", &c2, &s2);
    printf("%-9s %8lld rows, checksum %020llu\n", tables[i].name, c1, s1);
    ASSERT_GT(c1, 0);
    ASSERT_EQ(c1, c2);
    ASSERT_EQ(s1, s2);
  }
  ch_stop_all();
}
