/*
 * test_derived.c - the busy counter derived from the activity timeline on
 * a real OpenCL driver (PoCL): `gpuperf record` of the sample program and
 * of clpeak, then the seed document's example query verbatim. Each
 * Utilization window is recomputed here from the trace's GPU slices (the
 * union of the device's work inside the window), and each of the query's
 * five avg_utilization values from those recomputed windows; the
 * counter's track must say it is derived.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"

#if __has_include("gpuperf/tp.h")
#include "gpuperf/tp.h"
#include "tp/seed.h"
#include "tp/tputil.h"
#define HAVE_TP 1
#else
#define HAVE_TP 0
#endif

#if HAVE_TP

typedef struct span {
  int64_t s, e;
} span;

#include "api/derived_check.h"

static int by_start(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->s < y->s ? -1 : x->s > y->s;
}

/* The rows of sql (two integer columns) as spans [c0, c0 + c1). */
static span *spans_of(gp_tp *tp, const char *sql, size_t *n) {
  gp_tp_rows *r;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &r, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, err.message);
  size_t cap = 1024, k = 0;
  span *v = malloc(cap * sizeof(*v));
  while (gp_tp_rows_next(r, &err) == 1) {
    if (k == cap)
      v = realloc(v, (cap *= 2) * sizeof(*v));
    v[k].s = gp_tp_rows_int(r, 0);
    v[k].e = v[k].s + gp_tp_rows_int(r, 1);
    k++;
  }
  gp_tp_rows_destroy(r);
  *n = k;
  return v;
}

/* Sorts and merges v into disjoint spans; returns how many remain. */
static size_t merge(span *v, size_t n) {
  qsort(v, n, sizeof(*v), by_start);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (k && v[i].s <= v[k - 1].e) {
      if (v[i].e > v[k - 1].e)
        v[k - 1].e = v[i].e;
    } else {
      v[k++] = v[i];
    }
  }
  return k;
}

static int64_t overlap(const span *u, size_t n, int64_t a, int64_t z) {
  int64_t t = 0;
  for (size_t i = 0; i < n && u[i].s < z; i++) {
    int64_t s = u[i].s > a ? u[i].s : a, e = u[i].e < z ? u[i].e : z;
    if (e > s)
      t += e - s;
  }
  return t;
}

/* See derived_check.h. */
win *derived_check_windows(gp_tp *tp, int64_t ugpu, size_t *n) {
  char sql[512];
  snprintf(sql, sizeof(sql),
           "SELECT s.ts, s.dur FROM gpu_slice s JOIN gpu_track t ON "
           "s.track_id = t.id WHERE extract_arg(t.dimension_arg_set_id, "
           "'ugpu') = %lld AND s.dur > 0",
           (long long)ugpu);
  size_t ns;
  span *u = spans_of(tp, sql, &ns);
  ns = merge(u, ns);
  snprintf(sql, sizeof(sql),
           "SELECT c.ts, c.value FROM counter c JOIN gpu_counter_track t ON "
           "c.track_id = t.id WHERE t.name = 'Utilization' AND t.ugpu = %lld "
           "ORDER BY c.ts",
           (long long)ugpu);
  gp_tp_rows *r;
  gp_tp_error err;
  ASSERT_OK(gp_tp_query(tp, sql, &r, &err));
  size_t cap = 1024, k = 0;
  win *w = malloc(cap * sizeof(*w));
  while (gp_tp_rows_next(r, &err) == 1) {
    if (k == cap)
      w = realloc(w, (cap *= 2) * sizeof(*w));
    w[k].ts = gp_tp_rows_int(r, 0);
    w[k].value = gp_tp_rows_real(r, 1);
    k++;
  }
  gp_tp_rows_destroy(r);
  ASSERT_GT(k, 1);
  int64_t busy_total = 0;
  for (size_t i = 0; i + 1 < k; i++) {
    int64_t len = w[i + 1].ts - w[i].ts;
    ASSERT_GT(len, 0);
    int64_t b = overlap(u, ns, w[i].ts, w[i + 1].ts);
    busy_total += b;
    w[i].want = 100.0 * (double)b / (double)len;
    if (fabs(w[i].value - w[i].want) > 1e-6)
      gp_test_fail(__FILE__, __LINE__,
                   "window %zu [%lld, %lld): Utilization %.9f, the slices "
                   "give %.9f",
                   i, (long long)w[i].ts, (long long)w[i + 1].ts, w[i].value,
                   w[i].want);
  }
  /* The windows cover all the GPU's work. */
  int64_t all = 0;
  for (size_t i = 0; i < ns; i++)
    all += u[i].e - u[i].s;
  ASSERT_EQ(busy_total, all);
  w[k - 1].want = w[k - 1].value; /* the last row: to the trace's end */
  /* The time-weighted mean of the counter against the busy share of the
   * span it covers, recomputed from the slices alone. */
  double weighted = 0;
  for (size_t i = 0; i + 1 < k; i++)
    weighted += w[i].value * (double)(w[i + 1].ts - w[i].ts);
  double span_ns = (double)(w[k - 1].ts - w[0].ts);
  double mean = weighted / span_ns, share = 100.0 * (double)all / span_ns;
  free(u);
  printf("  gpu %lld: %zu windows, busy %lld ns, all match the slices; "
         "time-weighted Utilization %.3f%%, busy share from the slices "
         "%.3f%%\n",
         (long long)ugpu, k - 1, (long long)all, mean, share);
  ASSERT_LE(fabs(mean - share), 1.0);
  *n = k;
  return w;
}

/* avg_utilization of [ts, ts + dur) from the windows recomputed from the
 * slices, as the query weighs them (the last row holds to trace_end). */
static double avg_from_windows(const win *w, size_t n, int64_t ts, int64_t dur,
                               int64_t end) {
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t a = w[i].ts > ts ? w[i].ts : ts;
    int64_t z = i + 1 < n ? w[i + 1].ts : end;
    if (z > ts + dur)
      z = ts + dur;
    if (z > a)
      sum += w[i].want * (double)(z - a);
  }
  return sum / (double)dur;
}

/* Records argv (after `--`) into trace, then checks the seed query. */
static void record_and_check(char **prog, const char *trace) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf record preloads nothing in a sanitizer build");
#endif
  char *argv[32] = {(char *)cli, "record", "-q", "-o", (char *)trace, "--"};
  int n = 6;
  for (int i = 0; prog[i] && n < 30; i++)
    argv[n++] = prog[i];
  argv[n] = NULL;
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, NULL, 240, &out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != 0)
    gp_test_fail(__FILE__, __LINE__, "gpuperf record exited %d:\n%s", rc,
                 err ? err : "");
  free(out);
  free(err);
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(trace, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", trace, e.message);

  /* Marked derived: its description and its group say so. */
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM gpu_counter_track WHERE name = "
                       "'Utilization' AND description LIKE 'Derived%'"),
            0);
  ASSERT_GT(tp_int(tp, "SELECT count(*) FROM gpu_counter_group g JOIN "
                       "gpu_counter_track t ON t.id = g.track_id WHERE "
                       "t.name = 'Utilization' AND g.name = 'derived'"),
            0);

  row rows[16];
  int nr = tp_seed_run(tp, rows);
  ASSERT_EQ(nr, 5);
  tp_seed_check_rows(tp, rows, nr);

  int64_t end = tp_int(tp, "SELECT trace_end()");
  for (int i = 0; i < nr; i++) {
    char sql[8192];
    snprintf(sql, sizeof(sql),
             "SELECT s.ts, extract_arg(t.dimension_arg_set_id, 'ugpu') FROM "
             "gpu_slice s JOIN gpu_track t ON s.track_id = t.id JOIN gpu g "
             "ON g.id = extract_arg(t.dimension_arg_set_id, 'ugpu') WHERE "
             "s.render_stage_category = 2 AND s.name = '%s' AND s.dur = %lld "
             "AND g.name = '%s'",
             rows[i].kernel, (long long)rows[i].dur, rows[i].gpu);
    size_t nc;
    span *c = spans_of(tp, sql, &nc); /* (ts, ugpu) pairs */
    ASSERT_GT(nc, 0);
    bool ok = false;
    double got = 0;
    for (size_t j = 0; j < nc && !ok; j++) {
      int64_t ugpu = c[j].e - c[j].s;
      size_t nw;
      win *w = derived_check_windows(tp, ugpu, &nw);
      got = avg_from_windows(w, nw, c[j].s, rows[i].dur, end);
      ok = fabs(got - rows[i].avg) <= 1e-6 * (fabs(got) + 1);
      free(w);
    }
    printf("  %-36s %9lld ns  avg_utilization %.6f, from the slices %.6f\n",
           rows[i].kernel, (long long)rows[i].dur, rows[i].avg, got);
    ASSERT(ok);
    free(c);
  }
  gp_tp_close(tp);
}

TEST(derived_utilization_opencl_sample) {
  ocl_env();
  static char sample[512];
  if (!ocl_build_path("tests/opencl-sample", sample, sizeof(sample)))
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  char *prog[] = {sample, "-n", "12", NULL};
  record_and_check(prog, gp_test_path(0, "sample.pftrace"));
}

/* clpeak on the PATH, or NULL. */
static const char *find_clpeak(void) {
  static char found[1024];
  const char *path = getenv("PATH");
  found[0] = '\0';
  for (const char *p = path; p && *p && !*found;) {
    size_t len = strcspn(p, ":");
    snprintf(found, sizeof(found), "%.*s/clpeak", (int)len, p);
    if (access(found, X_OK) != 0)
      found[0] = '\0';
    p += len + (p[len] == ':');
  }
  return *found ? found : NULL;
}

TEST(derived_utilization_clpeak) {
  ocl_env();
  const char *found = find_clpeak();
  if (!found)
    SKIP("clpeak is not installed (Debian package clpeak)");
  char *prog[] = {(char *)found, "--kernel-latency", NULL};
  record_and_check(prog, gp_test_path(0, "clpeak.pftrace"));
}

/* Kernels of 0.05 to 1.5 s that PoCL tells of only at clFinish, many
 * seconds after they ran: every window waits for them (issue 26). */
TEST(derived_utilization_clpeak_compute_sp) {
  ocl_env();
  const char *found = find_clpeak();
  if (!found)
    SKIP("clpeak is not installed (Debian package clpeak)");
  char *prog[] = {(char *)found, "--compute-sp", NULL};
  record_and_check(prog, gp_test_path(0, "clpeak-sp.pftrace"));
}

#else

TEST(derived_utilization_opencl_sample) {
  SKIP("built without the trace processor");
}

TEST(derived_utilization_clpeak) {
  SKIP("built without the trace processor");
}

TEST(derived_utilization_clpeak_compute_sp) {
  SKIP("built without the trace processor");
}

#endif
