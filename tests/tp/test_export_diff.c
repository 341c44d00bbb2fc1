/*
 * test_export_diff.c - `gpuperf export` and `gpuperf diff`.
 *
 * The trace processor reads protobuf only, so the Chrome JSON export is
 * read back by a small strict JSON parser here and interpreted as
 * Perfetto's JSON importer documents it: "X" events are slices with ts
 * and dur in microseconds, "C" events counter values, "M" events name
 * processes and threads. The kernels read back must be the trace's:
 * same count, same total time to the nanosecond.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

/* ------------------------------------------------------------------ */
/* A strict JSON reader, enough for trace events                        */

typedef struct jp {
  const char *p;
  bool bad;
  /* the event being read */
  char ph[8], cat[64], name[256];
  double ts, dur;
  /* what was read */
  long kernels, slices, counters, meta, flow_starts, flow_ends;
  long kernels_with_args; /* grid, block, registers, correlation id */
  int kargs;              /* of those, in the event being read */
  double kernel_us;
} jp;

static void ws(jp *j) {
  while (isspace((unsigned char)*j->p))
    j->p++;
}

static void str(jp *j, char *out, size_t size) {
  size_t n = 0;
  if (*j->p != '"') {
    j->bad = true;
    return;
  }
  for (j->p++; *j->p && *j->p != '"'; j->p++) {
    char c = *j->p;
    if (c == '\\') {
      j->p++;
      if (*j->p == 'u') {
        for (int i = 0; i < 4; i++)
          if (!isxdigit((unsigned char)*++j->p))
            j->bad = true;
        c = '?';
      } else if (strchr("\"\\/bfnrt", *j->p)) {
        c = *j->p;
      } else {
        j->bad = true;
      }
    } else if ((unsigned char)c < 0x20) {
      j->bad = true;
    }
    if (out && n + 1 < size)
      out[n++] = c;
  }
  if (*j->p != '"')
    j->bad = true;
  else
    j->p++;
  if (out)
    out[n] = '\0';
}

static void value(jp *j, int depth, const char *key);

static void object(jp *j, int depth) {
  j->p++; /* { */
  if (depth == 2) {
    j->ph[0] = j->cat[0] = j->name[0] = '\0';
    j->ts = j->dur = NAN;
    j->kargs = 0;
  }
  ws(j);
  if (*j->p == '}') {
    j->p++;
    return;
  }
  for (;;) {
    char key[64];
    ws(j);
    str(j, key, sizeof(key));
    ws(j);
    if (*j->p++ != ':')
      j->bad = true;
    value(j, depth, key);
    ws(j);
    if (*j->p == ',') {
      j->p++;
      continue;
    }
    if (*j->p++ != '}')
      j->bad = true;
    break;
  }
  if (depth == 2) { /* an event of traceEvents */
    if (strcmp(j->ph, "X") == 0) {
      j->slices++;
      if (strcmp(j->cat, "kernel") == 0) {
        j->kernels++;
        j->kernel_us += j->dur;
        j->kernels_with_args += j->kargs == 4;
      }
    } else if (strcmp(j->ph, "C") == 0) {
      j->counters++;
    } else if (strcmp(j->ph, "M") == 0) {
      j->meta++;
    } else if (strcmp(j->ph, "s") == 0) {
      j->flow_starts++;
    } else if (strcmp(j->ph, "f") == 0) {
      j->flow_ends++;
    }
  }
}

static void array(jp *j, int depth) {
  j->p++; /* [ */
  ws(j);
  if (*j->p == ']') {
    j->p++;
    return;
  }
  for (;;) {
    value(j, depth, NULL);
    ws(j);
    if (*j->p == ',') {
      j->p++;
      continue;
    }
    if (*j->p++ != ']')
      j->bad = true;
    break;
  }
}

/* depth: how many objects enclose the value: 1 in the document object,
 * 2 in an event (an object in the traceEvents array), 3 in its args. */
static void value(jp *j, int depth, const char *key) {
  ws(j);
  if (j->bad || depth > 32) {
    j->bad = true;
    return;
  }
  bool ev = depth == 2 && key;
  if (*j->p == '{') {
    object(j, depth + 1);
  } else if (*j->p == '[') {
    array(j, depth);
  } else if (*j->p == '"') {
    char buf[256];
    str(j, buf, sizeof(buf));
    if (ev && strcmp(key, "ph") == 0)
      snprintf(j->ph, sizeof(j->ph), "%.7s", buf);
    else if (ev && strcmp(key, "cat") == 0)
      snprintf(j->cat, sizeof(j->cat), "%.63s", buf);
    else if (ev && strcmp(key, "name") == 0)
      snprintf(j->name, sizeof(j->name), "%.255s", buf);
  } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "null", 4) == 0) {
    j->p += 4;
  } else if (strncmp(j->p, "false", 5) == 0) {
    j->p += 5;
  } else {
    char *end;
    double v = strtod(j->p, &end);
    if (end == j->p)
      j->bad = true;
    j->p = end;
    if (depth == 3 && key &&
        (strcmp(key, "launch__grid_size_x") == 0 ||
         strcmp(key, "launch__block_size_x") == 0 ||
         strcmp(key, "launch__registers_per_thread") == 0 ||
         strcmp(key, "correlation_id") == 0))
      j->kargs++;
    if (ev && strcmp(key, "ts") == 0)
      j->ts = v;
    else if (ev && strcmp(key, "dur") == 0)
      j->dur = v;
  }
}

TEST(export_chrome_json_round_trip) {
  const char *trace = gp_test_path(0, "demo.pftrace");
  const char *json = gp_test_path(1, "demo.json");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "3", "-o", trace, NULL),
            0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, "--format", "chrome-json", "-o",
                   json, NULL),
            0);
  free(out);
  free(err);
  char *doc = tp_read_file(json, NULL);
  ASSERT_NOT_NULL(doc);
  jp j;
  memset(&j, 0, sizeof(j));
  j.p = doc;
  value(&j, 0, NULL);
  ws(&j);
  ASSERT(!j.bad);
  ASSERT_EQ(*j.p, '\0');
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  ASSERT_EQ(j.kernels, (long)tp_int(tp, "SELECT count(*) FROM gpu_slice "
                                        "WHERE render_stage_category = 2"));
  /* Microseconds with three decimals: exact to the nanosecond. */
  ASSERT_EQ(llround(j.kernel_us * 1000),
            (long long)tp_int(tp, "SELECT sum(dur) FROM gpu_slice WHERE "
                                  "render_stage_category = 2"));
  /* Every slice (the streams' mirrors of GPU work too), every flow,
   * every kernel with its launch arguments and correlation id. */
  ASSERT_EQ(j.slices, (long)tp_int(tp, "SELECT count(*) FROM slice"));
  ASSERT_EQ(j.flow_starts, (long)tp_int(tp, "SELECT count(*) FROM flow"));
  ASSERT_EQ(j.flow_ends, j.flow_starts);
  ASSERT_EQ(j.kernels_with_args, j.kernels);
  ASSERT_EQ(j.counters, (long)tp_int(tp, "SELECT count(*) FROM counter"));
  ASSERT(j.meta >= 4); /* two GPUs, a process, a thread at least */
  gp_tp_close(tp);
  free(doc);
  /* CSV of the GPU work: a header and a row per slice. */
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, "--format", "csv", NULL), 0);
  static const char head[] =
      "ts_ns,dur_ns,gpu,queue,name,kind,bytes,correlation_id,stream,grid_x,"
      "grid_y,grid_z,block_x,block_y,block_z,shared_mem_static,"
      "shared_mem_dynamic,registers\n";
  ASSERT(strncmp(out, head, sizeof(head) - 1) == 0);
  int rows = 0;
  for (const char *p = out; (p = strchr(p, '\n')); p++)
    rows++;
  ASSERT_EQ(rows, 1 + 54);
  free(out);
  free(err);
  /* Usage errors are one line; -o onto the trace is refused. */
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, NULL), 1);
  ASSERT(strstr(err, "--format") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, "--format", "chrome-json", "-o",
                   trace, NULL),
            1);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, "--to", "clickhouse://x", NULL),
            1);
  ASSERT(strstr(err, "is not clickhouse://HOST:PORT") != NULL);
  free(out);
  free(err);
}

TEST(diff_two_demo_runs) {
  const char *a = gp_test_path(0, "a.pftrace");
  const char *b = gp_test_path(1, "b.pftrace");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "3", "-o", a, NULL), 0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "6", "-o", b, NULL), 0);
  free(out);
  free(err);
  /* Twice the steps: twice the kernels, the same mean time. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, b, "--format", "csv", NULL), 0);
  /* A count has no spread: past the minimum effect it is "changed". */
  ASSERT(strstr(out, "kernels,\"matmul_kernel\",\"count\",\"count\",6,12,"
                     "100,\"changed\"\n") != NULL);
  /* The wall time (the trace's span) is compared too. */
  ASSERT(strstr(out, "run,\"wall\",\"time\",\"ns\",") != NULL);
  ASSERT(strstr(out, "kernels,\"matmul_kernel\",\"mean\",\"ns\",") != NULL);
  ASSERT(strstr(out, "copies,\"Memcpy HtoD\",\"bytes\",\"B\",50331648,"
                     "100663296,100,") != NULL);
  ASSERT(strstr(out, "queues,\"0 Compute 1\",\"busy\",\"ns\",") != NULL);
  ASSERT(strstr(out, "counters,\"Utilization 0\",\"mean\",\"%\",") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, b, "--fail-if", "total>+5%", NULL),
            3);
  ASSERT(strstr(out, "kernel time +100.0%") != NULL);
  ASSERT(strstr(err, "--fail-if held: total +100.0%") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, b, "--fail-if", "total<-5%", NULL),
            0);
  free(out);
  free(err);
  /* A run against itself: no change, nothing fails. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, a, "--fail-if", "total>+0%",
                   "--fail-if", "kernel:matmul_kernel>+0%", NULL),
            0);
  ASSERT(strstr(out, "\nno change (by 1% and 50 ns or more)\n") != NULL);
  /* Unchanged rows are hidden, and said to be. */
  ASSERT(strstr(out, "matmul_kernel") == NULL);
  ASSERT(strstr(out, "unchanged rows hidden; --all shows them") != NULL);
  ASSERT(strstr(out, "significant") == NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, a, "--format", "json", NULL), 0);
  ASSERT(strstr(out, "\"change_pct\": 0,") != NULL);
  ASSERT(strstr(out, "\"hint\": \"same\"") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, NULL), 1);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "diff", a, b, "--fail-if", "total>5", NULL), 1);
  free(out);
  free(err);
}

/* The Chrome JSON loaded by Perfetto's own trace processor: as many
 * slices and flows as Perfetto reads from the original trace, the same
 * flows between the same names (a JSON flow goes from the earlier slice
 * to the later, so each pair is compared without its direction), no
 * flow its importer had to drop, and every kernel's launch arguments. */
TEST(export_chrome_json_in_perfetto) {
  const char *shell = getenv("GPUPERF_PERFETTO_TP");
  if (!shell || access(shell, X_OK) != 0)
    SKIP("GPUPERF_PERFETTO_TP does not name Perfetto's trace_processor_shell");
  const char *trace = gp_test_path(3, "demo.pftrace");
  const char *json = gp_test_path(4, "demo.json");
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "-o", trace, NULL), 0);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "export", trace, "--format", "chrome-json", "-o",
                   json, NULL),
            0);
  ASSERT_STR_EQ(err, ""); /* no flow left out */
  free(out);
  free(err);
  static const char counts[] =
      "SELECT (SELECT count(*) FROM slice) AS slices, (SELECT count(*) FROM "
      "flow) AS flows;";
  static const char pairs[] =
      "SELECT min(so.name, si.name) AS a, max(so.name, si.name) AS b, "
      "count(*) AS n FROM flow f JOIN slice so ON so.id = f.slice_out JOIN "
      "slice si ON si.id = f.slice_in GROUP BY a, b ORDER BY a, b;";
  char *want = tp_perfetto_csv(shell, trace, counts);
  char *got = tp_perfetto_csv(shell, json, counts);
  ASSERT_STR_EQ(got, want);
  ASSERT_STR_EQ(want, "\"slices\",\"flows\"\n799,280\n");
  free(want);
  free(got);
  want = tp_perfetto_csv(shell, trace, pairs);
  got = tp_perfetto_csv(shell, json, pairs);
  ASSERT_STR_EQ(got, want);
  free(want);
  free(got);
  got = tp_perfetto_csv(shell, json,
                        "SELECT count(*) AS n FROM stats WHERE name GLOB "
                        "'flow_*' AND value > 0;");
  ASSERT_STR_EQ(got, "\"n\"\n0\n");
  free(got);
  want = tp_perfetto_csv(shell, trace,
                         "SELECT count(*) AS n FROM gpu_slice WHERE "
                         "render_stage_category = 2;");
  got = tp_perfetto_csv(shell, json,
                        "SELECT count(DISTINCT s.id) AS n FROM slice s JOIN "
                        "args a USING (arg_set_id) WHERE s.category = "
                        "'kernel' AND a.key IN ('args.launch__grid_size_x', "
                        "'args.launch__registers_per_thread', "
                        "'args.correlation_id');");
  ASSERT_STR_EQ(got, want);
  free(want);
  free(got);
}

/* Runs the CLI and returns its status; out and err freed. */
static int diff_status(const char *a, const char *b, const char *opt,
                       const char *val, const char *opt2, const char *val2,
                       char **err_out) {
  char *out, *err;
  int rc = tp_cli(&out, &err, "diff", a, b, opt, val, opt2, val2, NULL);
  free(out);
  if (err_out)
    *err_out = err;
  else
    free(err);
  return rc;
}

/* diff separates change from noise. The runs come from the demo itself:
 * --jitter makes each launch do up to +-2% more or less work (noise, a
 * seeded draw), --slow a kernel do 10% more (a real change), --slow at
 * 0.001% a 1 ns change of a mean in runs without spread (what the old
 * diff called significant: a 0.26 ns change of a mean was). */
TEST(diff_change_or_noise) {
  const char *base = gp_test_path(0, "base.pftrace");
  const char *tiny = gp_test_path(1, "tiny.pftrace");
  const char *n1 = gp_test_path(2, "n1.pftrace");
  const char *n2 = gp_test_path(3, "n2.pftrace");
  char slow[1024]; /* gp_test_path has four slots */
  snprintf(slow, sizeof(slow), "%s/slow.pftrace", gp_test_tmpdir());
  char *out, *err;
  const char *runs[][7] = {
      {base, NULL},
      {tiny, "--slow", "matmul_kernel=0.001", NULL},
      {n1, "--jitter", "2", "--seed", "1", NULL},
      {n2, "--jitter", "2", "--seed", "2", NULL},
      {slow, "--jitter", "2", "--seed", "3", "--slow", "matmul_kernel=10"},
  };
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
    const char *const *r = runs[i];
    ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "-o", r[0], r[1], r[2], r[3],
                     r[4], r[5], r[6], NULL),
              0);
    free(out);
    free(err);
  }
  /* 1 ns on a 126 us mean, no spread: small, not significant; the gate
   * that requires significance holds still. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", base, tiny, "--format", "csv", NULL), 0);
  ASSERT(strstr(out, "kernels,\"matmul_kernel\",\"mean\",\"ns\",125966,"
                     "125967,0.000794,\"small\"\n") != NULL);
  ASSERT(strstr(out, "significant") == NULL);
  free(out);
  free(err);
  ASSERT_EQ(diff_status(base, tiny, "--fail-if", "kernel:matmul_kernel>+0%!",
                        NULL, NULL, NULL),
            0);
  ASSERT_EQ(diff_status(base, tiny, "--fail-if", "kernel:matmul_kernel>+0%",
                        NULL, NULL, NULL),
            3);
  /* Noise: softmax_kernel's mean moved +0.8% between two jittered runs.
   * Past 0.5% but under the 1% minimum: a gate with '!' does not fire,
   * one without does (the old behaviour); with no minimum the spread
   * still says it is not significant (under 3 standard errors). */
  ASSERT_EQ(tp_cli(&out, &err, "diff", n1, n2, "--format", "csv", NULL), 0);
  ASSERT(strstr(out, "kernels,\"softmax_kernel\",\"mean\",\"ns\",50628.900000,"
                     "51029.350000,0.790951,\"small\"\n") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(diff_status(n1, n2, "--fail-if", "kernel:softmax_kernel>+0.5%!",
                        NULL, NULL, &err),
            0);
  ASSERT(strstr(err, "not held: +0.8% is small") != NULL);
  free(err);
  ASSERT_EQ(diff_status(n1, n2, "--fail-if", "kernel:softmax_kernel>+0.5%",
                        NULL, NULL, NULL),
            3);
  ASSERT_EQ(diff_status(n1, n2, "--fail-if", "kernel:softmax_kernel>+0.5%!",
                        "--min-pct", "0", &err),
            0);
  ASSERT(strstr(err, "is maybe") != NULL || strstr(err, "is noise") != NULL);
  free(err);
  ASSERT_EQ(diff_status(n1, n2, "--fail-if", "total>+0%!", NULL, NULL, NULL),
            0);
  /* A real +10% in one kernel, under the same noise: significant, and
   * the gate fires; the kernel's total and all kernel time too. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", n1, slow, "--format", "csv", NULL), 0);
  ASSERT(strstr(out, "kernels,\"matmul_kernel\",\"mean\",\"ns\",") != NULL);
  char *row = strstr(out, "kernels,\"matmul_kernel\",\"mean\"");
  ASSERT(row && strstr(row, ",\"significant\"\n") ==
                    strchr(row, '\n') - strlen(",\"significant\""));
  free(out);
  free(err);
  ASSERT_EQ(diff_status(n1, slow, "--fail-if", "kernel:matmul_kernel>+5%!",
                        NULL, NULL, &err),
            3);
  ASSERT(strstr(err, "--fail-if held: kernel:matmul_kernel +10.") != NULL);
  free(err);
  ASSERT_EQ(diff_status(n1, slow, "--fail-if", "total>+2%!", NULL, NULL, NULL),
            3);
  ASSERT_EQ(diff_status(n1, slow, "--fail-if", "kernel:matmul_kernel>+15%!",
                        NULL, NULL, NULL),
            0);
  /* A misspelt kernel is a usage error, not a gate that always passes;
   * nothing is printed on stdout. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", n1, slow, "--fail-if",
                   "kernel:matmul_kernal>+5%", NULL),
            1);
  ASSERT_STR_EQ(out, "");
  ASSERT(strstr(err, "no kernel 'matmul_kernal' in A or B") != NULL);
  free(out);
  free(err);
  /* --all shows the unchanged rows the text hides. */
  ASSERT_EQ(tp_cli(&out, &err, "diff", base, base, "--all", NULL), 0);
  ASSERT(strstr(out, "matmul_kernel") != NULL);
  ASSERT(strstr(out, "hidden") == NULL);
  free(out);
  free(err);
}
