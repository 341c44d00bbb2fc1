/*
 * test_clickhouse_queries.c - the queries of docs/scale.md, read from the
 * page itself (each after a "<!-- query: NAME -->" line), run by
 * ClickHouse over a 2-shard database holding 3 traces from 2 machines
 * (two node traces and their merge), must give for each trace the rows
 * that `gpuperf query` gives on that trace's file.
 */
#include "clickhouse_util.h"

/* The ```sql block after "<!-- query: name -->" in docs/scale.md. */
static char *doc_query(const char *name) {
  const char *build = getenv("GPUPERF_BUILD");
  if (!build)
    SKIP("GPUPERF_BUILD is not set (run through 'make test')");
  char path[1100], marker[128];
  snprintf(path, sizeof(path), "%s/../docs/scale.md", build);
  char *doc = ch_slurp(path);
  snprintf(marker, sizeof(marker), "<!-- query: %s -->\n```sql\n", name);
  char *p = strstr(doc, marker);
  ASSERT_NOT_NULL(p);
  p += strlen(marker);
  char *end = strstr(p, "\n```");
  ASSERT_NOT_NULL(end);
  char *q = strndup(p, (size_t)(end - p));
  free(doc);
  return q;
}

/* `gpuperf query file sql --format json`'s rows as TSV lines (the values
 * in column order; strings unescaped for \" and \\ only). */
static char *cli_rows(const char *cli, const char *file, const char *sql) {
  char out[1100];
  snprintf(out, sizeof(out), "%s/query.json", gp_test_tmpdir());
  char *argv[] = {(char *)cli, "query", (char *)file, (char *)sql,
                  "--format",  "json",  NULL};
  ASSERT_EQ(ch_run(argv, out), 0);
  char *js = ch_slurp(out), *tsv = malloc(strlen(js) + 1), *o = tsv;
  ASSERT_NOT_NULL(tsv);
  for (char *line = strstr(js, "{\""); line; line = strstr(line, "{\"")) {
    char *p = line + 1;
    bool first = true;
    while (*p == '"') {
      p = strstr(p, "\": ");
      ASSERT_NOT_NULL(p);
      p += 3;
      if (!first)
        *o++ = '\t';
      first = false;
      if (*p == '"') {
        for (p++; *p != '"'; p++) {
          if (*p == '\\')
            p++;
          *o++ = *p;
        }
        p++;
      } else {
        char *v0 = o;
        while (*p != ',' && *p != '}')
          *o++ = *p++;
        if (o - v0 == 4 && strncmp(v0, "null", 4) == 0)
          o = v0;
      }
      if (*p == ',')
        p += 2;
    }
    *o++ = '\n';
    line = p;
  }
  *o = '\0';
  free(js);
  return tsv;
}

/* Compares two TSV results field by field: numbers within 1e-9
 * (relative), anything else exactly. */
static void same_rows(const char *what, const char *a, const char *b) {
  const char *a0 = a, *b0 = b;
  while (*a && *b) {
    size_t na = strcspn(a, "\t\n"), nb = strcspn(b, "\t\n");
    char *ea, *eb;
    double x = strtod(a, &ea), y = strtod(b, &eb);
    bool numbers = na && nb && ea == a + na && eb == b + nb;
    if ((numbers ? fabs(x - y) > 1e-9 * fmax(1.0, fabs(x))
                 : na != nb || memcmp(a, b, na) != 0) ||
        a[na] != b[nb])
      gp_test_fail(__FILE__, __LINE__,
                   "%s: ClickHouse and gpuperf query differ at '%.*s' vs "
                   "'%.*s'\nClickHouse:\n%s\ngpuperf query:\n%s",
                   what, (int)na, a, (int)nb, b, a0, b0);
    a += na + (a[na] != '\0');
    b += nb + (b[nb] != '\0');
  }
  if (*a || *b)
    gp_test_fail(__FILE__, __LINE__,
                 "%s: row counts differ\nClickHouse:\n%s\ngpuperf query:\n%s",
                 what, a0, b0);
}

/* The lines of tsv whose first field is trace, without that field. */
static char *rows_of(const char *tsv, const char *trace, int *n) {
  char *out = malloc(strlen(tsv) + 1), *o = out;
  ASSERT_NOT_NULL(out);
  size_t tl = strlen(trace);
  *n = 0;
  for (const char *l = tsv; *l;) {
    const char *e = strchr(l, '\n');
    ASSERT_NOT_NULL(e);
    if (strncmp(l, trace, tl) == 0 && l[tl] == '\t') {
      memcpy(o, l + tl + 1, (size_t)(e - l - (long)tl));
      o += e - l - (long)tl;
      ++*n;
    }
    l = e + 1;
  }
  *o = '\0';
  return out;
}

/* Each documented query and the same question asked of one trace in our
 * SQL, with the machine as the export writes it. */
#define MACHINE                                                                \
  "coalesce((SELECT raw_id FROM machine m WHERE m.id = t.machine_id), 0)"
static const struct {
  const char *doc, *ours;
} queries[] = {
    {"kernels",
     "SELECT " MACHINE " AS machine, s.name, count(*) AS count, sum(s.dur) "
     "AS total_ns, avg(s.dur) AS avg_ns, max(s.dur) AS max_ns FROM gpu_slice "
     "s JOIN gpu_track t ON s.track_id = t.id WHERE s.render_stage_category "
     "= 2 GROUP BY 1, 2 ORDER BY 1, 4 DESC, 2"},
    {"utilization",
     "WITH x AS (SELECT " MACHINE " AS machine, c.track_id, c.ts, c.value, "
     "LEAD(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts) AS nts FROM "
     "counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = "
     "'Utilization') SELECT machine, track_id, sum(value * (nts - ts)) * 1.0 "
     "/ sum(nts - ts) AS u FROM x WHERE nts IS NOT NULL GROUP BY machine, "
     "track_id ORDER BY machine, track_id"},
    {"seed",
     "WITH u AS (SELECT " MACHINE " AS machine, "
     "extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu, c.ts AS i_ts, "
     "LEAD(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts) AS i_end, "
     "c.value AS value FROM counter c JOIN counter_track t ON c.track_id = "
     "t.id WHERE t.name = 'Utilization'), k AS (SELECT " MACHINE " AS "
     "machine, extract_arg(t.dimension_arg_set_id, 'ugpu') AS ugpu, s.id AS "
     "id, s.name AS kernel, coalesce(g.name, '') AS gpu_name, s.dur AS dur, "
     "s.ts AS k_ts, s.ts + s.dur AS k_end FROM gpu_slice s JOIN gpu_track t "
     "ON s.track_id = t.id LEFT JOIN gpu g ON g.id = "
     "extract_arg(t.dimension_arg_set_id, 'ugpu') WHERE "
     "s.render_stage_category = 2 AND s.dur > 0 ORDER BY s.dur DESC, s.id "
     "LIMIT 5) SELECT k.machine, k.kernel, k.gpu_name, k.dur, sum(u.value * "
     "(min(k.k_end, u.i_end) - max(k.k_ts, u.i_ts))) * 1.0 / "
     "sum(min(k.k_end, u.i_end) - max(k.k_ts, u.i_ts)) AS a FROM k JOIN u "
     "ON u.machine = k.machine AND u.ugpu = k.ugpu AND u.i_end IS NOT NULL "
     "AND u.i_ts < k.k_end AND u.i_end > k.k_ts GROUP BY k.id ORDER BY "
     "k.dur DESC, k.id"},
};

TEST(clickhouse_doc_queries_per_trace) {
  const char *cli = ch_need();
  const char *dir = gp_test_tmpdir();
  char base[1100], files[3][1100], url[256];
  snprintf(base, sizeof(base), "%s/q.pftrace", dir);
  snprintf(files[0], sizeof(files[0]), "%s/q-node0.pftrace", dir);
  snprintf(files[1], sizeof(files[1]), "%s/q-node1.pftrace", dir);
  snprintf(files[2], sizeof(files[2]), "%s/both.pftrace", dir);
  char *demo[] = {(char *)cli, "demo", "--machines", "2",  "--gpus", "2",
                  "--steps",   "6",    "-o",         base, NULL};
  ASSERT_EQ(ch_run(demo, NULL), 0);
  char *merge[] = {(char *)cli, "merge",     files[0],    files[1], "-o",
                   files[2],    "--sync-on", "allreduce", NULL};
  ASSERT_EQ(ch_run(merge, NULL), 0);
  ch_start_two();
  ch_url(url, sizeof(url));
  char names[3][256];
  for (int k = 0; k < 3; k++) {
    char *exp[] = {(char *)cli, "export",  files[k], "--to", url,
                   "--cluster", "gp_test", "-q",     NULL};
    ASSERT_EQ(ch_run(exp, NULL), 0);
    char q[1400];
    snprintf(q, sizeof(q), "SELECT trace FROM traces WHERE file = '%.1100s'",
             files[k]);
    char *n = ch_q(0, q);
    ASSERT(n && strchr(n, '\n'));
    *strchr(n, '\n') = '\0';
    snprintf(names[k], sizeof(names[k]), "%s", n);
    free(n);
  }
  ASSERT_EQ(ch_num(0, "SELECT uniqExact(trace, machine) FROM gpu_slice"), 4);
  for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++) {
    char *sql = doc_query(queries[i].doc);
    char *all = ch_q(0, sql);
    if (!all)
      gp_test_fail(__FILE__, __LINE__, "ClickHouse failed the %s query",
                   queries[i].doc);
    int total = 0;
    for (const char *p = all; (p = strchr(p, '\n')); p++)
      total++;
    int seen = 0;
    for (int k = 0; k < 3; k++) {
      int n = 0;
      char *got = rows_of(all, names[k], &n);
      char *want = cli_rows(cli, files[k], queries[i].ours);
      char what[512];
      snprintf(what, sizeof(what), "%.200s on %.300s", queries[i].doc,
               names[k]);
      ASSERT_GT(n, 0);
      same_rows(what, got, want);
      seen += n;
      free(got);
      free(want);
    }
    ASSERT_EQ(seen, total);
    free(all);
    free(sql);
  }
  ch_stop_all();
}
