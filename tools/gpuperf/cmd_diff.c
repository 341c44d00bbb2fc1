/*
 * cmd_diff.c - `gpuperf diff A B`: what changed between two runs.
 *
 *   gpuperf diff A B [--format text|csv|json] [--fail-if COND]...
 *
 * Both traces are summarised as `gpuperf report` does (report_build.c,
 * every row, no ranking cut); rows are matched by key (kernel name, copy
 * kind, GPU and queue, counter and GPU) after sorting both sides, and
 * each metric gets its values in A and B and the change in percent. For
 * kernels a hint says whether the change of the mean stands out of the
 * spread: |mean B - mean A| over the standard error of the difference
 * (sqrt(sA^2/nA + sB^2/nB)); 3 or more is "significant", under 1 "noise",
 * between "maybe". With no spread at all (deterministic runs) any change
 * is significant.
 *
 * --fail-if 'METRIC>+P%' (or '<-P%') makes the exit status 3 when the
 * change of METRIC passes P percent: total (all kernel time), copies
 * (all copy and fill time), busy (busy time of all GPUs), or
 * kernel:NAME (that kernel's total time). For CI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "trace_open.h"

#define DIFF_FAILED 3
#define MAX_CONDS 16

static void usage(FILE *f) {
  fprintf(f, "usage: gpuperf diff A B [--format text|csv|json] [--fail-if "
             "COND]...\n\n"
             "Compares two traces (two runs of the same program): per kernel\n"
             "count, total and mean time with the change and a significance\n"
             "hint from the spread; per copy kind count, bytes and time; busy\n"
             "time per GPU queue; the time-weighted mean of each counter.\n\n"
             "  --format FMT     text (default), csv or json\n"
             "  --fail-if COND   exit 3 if COND holds: METRIC>+P%% or "
             "METRIC<-P%%,\n"
             "                   METRIC total (kernel time), copies, busy or\n"
             "                   kernel:NAME; e.g. --fail-if 'total>+5%%'\n"
             "  --allow-truncated  read traces whose last packet is "
             "incomplete\n\n"
             "Exit status: 0 success, 1 usage error, 2 bad trace, 3 a "
             "--fail-if condition held.\n");
}

typedef struct cond {
  char metric[256];
  bool above; /* '>' */
  double pct;
} cond;

static bool parse_cond(const char *s, cond *c) {
  const char *op = strpbrk(s, "<>");
  if (!op || op == s || (size_t)(op - s) >= sizeof(c->metric))
    return false;
  memcpy(c->metric, s, (size_t)(op - s));
  c->metric[op - s] = '\0';
  c->above = *op == '>';
  char *end;
  c->pct = strtod(op + 1, &end);
  if (end == op + 1 || strcmp(end, "%") != 0 || !isfinite(c->pct))
    return false;
  return strcmp(c->metric, "total") == 0 || strcmp(c->metric, "copies") == 0 ||
         strcmp(c->metric, "busy") == 0 ||
         strncmp(c->metric, "kernel:", 7) == 0;
}

/* ------------------------------------------------------------------ */
/* Matching rows                                                         */

typedef struct keyed {
  char key[600];
  const rcell *row;
} keyed;

static int by_key(const void *a, const void *b) {
  return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* The rows of t keyed by its key columns (kcols of them), sorted. */
static keyed *keys(const rtable *t, const int *kcols, int nk) {
  keyed *k = calloc(t->nrows + 1, sizeof(keyed));
  if (!k)
    return NULL;
  for (size_t i = 0; i < t->nrows; i++) {
    const rcell *row = &t->cells[i * (size_t)t->ncols];
    k[i].row = row;
    for (int j = 0; j < nk; j++) {
      size_t n = strlen(k[i].key);
      const rcell *c = &row[kcols[j]];
      if (c->s)
        snprintf(k[i].key + n, sizeof(k[i].key) - n, "%s%s", j ? "\x1f" : "",
                 c->s);
      else
        snprintf(k[i].key + n, sizeof(k[i].key) - n, "%s%.0f", j ? "\x1f" : "",
                 c->v);
    }
  }
  qsort(k, t->nrows, sizeof(keyed), by_key);
  return k;
}

/* What one section compares: key columns, then metrics (column, unit). */
typedef struct spec {
  const char *table, *title;
  int kcols[2], nk;
  struct {
    int col;
    const char *name, *unit;
  } m[4];
  int nm;
  bool spread; /* kernels: count 1, mean 5, stddev 7 give a hint */
} spec;

static const spec specs[] = {
    {"kernels",
     "Kernels",
     {0},
     1,
     {{1, "count", "count"}, {2, "total", "ns"}, {5, "mean", "ns"}},
     3,
     true},
    {"copies",
     "Copies and fills",
     {0},
     1,
     {{1, "count", "count"}, {2, "bytes", "B"}, {3, "total", "ns"}},
     3,
     false},
    {"queues", "Busy per GPU queue", {0, 1}, 2, {{3, "busy", "ns"}}, 1, false},
    {"counters",
     "Counters (time-weighted mean)",
     {0, 1},
     2,
     {{7, "mean", NULL}},
     1,
     false},
};

static const rcol dcols[] = {
    {"name", "name", RC_TEXT}, {"metric", "metric", RC_TEXT},
    {"unit", "unit", RC_TEXT}, {"a", "A", RC_VALUE},
    {"b", "B", RC_VALUE},      {"change_pct", "change", RC_PCT},
    {"hint", "hint", RC_TEXT}};

static double pct(double a, double b) {
  if (isnan(a) || isnan(b))
    return NAN;
  if (a == 0)
    return b == 0 ? 0 : NAN;
  return 100.0 * (b - a) / a;
}

static const char *hint(const rcell *a, const rcell *b) {
  if (!a)
    return "new in B";
  if (!b)
    return "gone in B";
  double ma = a[5].v, mb = b[5].v, d = fabs(mb - ma);
  double se = sqrt(a[7].v * a[7].v / a[1].v + b[7].v * b[7].v / b[1].v);
  if (d == 0)
    return "same";
  if (se == 0 || d / se >= 3)
    return "significant";
  return d / se < 1 ? "noise" : "maybe";
}

static void key_text(char *buf, size_t size, const char *key) {
  snprintf(buf, size, "%s", key);
  for (char *p = buf; *p; p++)
    if (*p == '\x1f')
      *p = ' ';
}

static void add_rows(rtable *out, const spec *s, const char *key,
                     const rcell *a, const rcell *b, const rtable *ta) {
  char name[600];
  key_text(name, sizeof(name), key);
  for (int m = 0; m < s->nm; m++) {
    rcell *row = rtable_row(out);
    rcell_text(&row[0], name);
    rcell_text(&row[1], s->m[m].name);
    const char *unit = s->m[m].unit;
    if (!unit && ta && ta->unit_col >= 0) {
      const rcell *src = a ? a : b;
      unit = src[ta->unit_col].s;
    }
    rcell_text(&row[2], unit ? unit : "");
    row[3].v = a ? a[s->m[m].col].v : NAN;
    row[4].v = b ? b[s->m[m].col].v : NAN;
    row[5].v = pct(row[3].v, row[4].v);
    if (s->spread && strcmp(s->m[m].name, "mean") == 0)
      rcell_text(&row[6], hint(a, b));
    else if (!a || !b)
      rcell_text(&row[6], a ? "gone in B" : "new in B");
    else
      rcell_text(&row[6], "");
  }
}

/* Compares table s->table of A and B into a new table of d. */
static void diff_section(report *d, const report *ra, const report *rb,
                         const spec *s) {
  const rtable *ta = report_table(ra, s->table),
               *tb = report_table(rb, s->table);
  d->tabs = realloc(d->tabs, (d->ntabs + 1) * sizeof(rtable));
  if (!d->tabs) {
    fputs("gpuperf: out of memory\n", stderr);
    exit(CLI_BAD_INPUT);
  }
  rtable *t = &d->tabs[d->ntabs++];
  memset(t, 0, sizeof(*t));
  t->id = s->table;
  t->title = s->title;
  t->ncols = 7;
  t->unit_col = 2;
  memcpy(t->cols, dcols, sizeof(dcols));
  keyed *ka = keys(ta, s->kcols, s->nk), *kb = keys(tb, s->kcols, s->nk);
  size_t i = 0, j = 0;
  while (ka && kb && (i < ta->nrows || j < tb->nrows)) {
    int c = i == ta->nrows   ? 1
            : j == tb->nrows ? -1
                             : strcmp(ka[i].key, kb[j].key);
    if (c == 0) {
      add_rows(t, s, ka[i].key, ka[i].row, kb[j].row, ta);
      i++;
      j++;
    } else if (c < 0) {
      add_rows(t, s, ka[i].key, ka[i].row, NULL, ta);
      i++;
    } else {
      add_rows(t, s, kb[j].key, NULL, kb[j].row, tb);
      j++;
    }
  }
  free(ka);
  free(kb);
}

/* The sum of column col of table id. */
static double total(const report *r, const char *id, int col,
                    const char *only) {
  const rtable *t = report_table(r, id);
  double s = 0;
  for (size_t i = 0; t && i < t->nrows; i++) {
    const rcell *row = &t->cells[i * (size_t)t->ncols];
    if ((!only || (row[0].s && strcmp(row[0].s, only) == 0)) &&
        !isnan(row[col].v))
      s += row[col].v;
  }
  return s;
}

static double metric(const report *r, const char *m) {
  if (strcmp(m, "total") == 0)
    return total(r, "kernels", 2, NULL);
  if (strcmp(m, "copies") == 0)
    return total(r, "copies", 3, NULL);
  if (strcmp(m, "busy") == 0)
    return total(r, "gpus", 5, NULL);
  return total(r, "kernels", 2, m + 7);
}

static int open_report(const char *path, uint32_t flags, report *r) {
  gp_tp *tp;
  int rc = trace_open("diff", path, flags, NULL, &tp);
  if (rc)
    return rc;
  report_filter f = {INT64_MIN, INT64_MAX, NULL, -1, 1000000};
  rc = report_build(tp, path, &f, r);
  trace_progress_end();
  gp_tp_close(tp);
  return rc;
}

/* See cli.h. */
int cmd_diff(int argc, char **argv) {
  const char *files[2] = {NULL, NULL}, *format = "text";
  cond conds[MAX_CONDS];
  int nconds = 0, nfiles = 0;
  uint32_t flags = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool takes = strcmp(a, "--format") == 0 || strcmp(a, "--fail-if") == 0;
    if (takes && i + 1 >= argc)
      return cli_error(CLI_USAGE, "diff: %s needs a value (see --help)", a);
    const char *val = takes ? argv[++i] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return CLI_OK;
    } else if (strcmp(a, "--format") == 0) {
      if (strcmp(val, "text") && strcmp(val, "csv") && strcmp(val, "json"))
        return cli_error(CLI_USAGE,
                         "diff: --format '%s' is not text, csv or json", val);
      format = val;
    } else if (strcmp(a, "--fail-if") == 0) {
      if (nconds == MAX_CONDS || !parse_cond(val, &conds[nconds]))
        return cli_error(CLI_USAGE,
                         "diff: --fail-if '%s' is not METRIC>+P%% or "
                         "METRIC<-P%% (total, copies, busy, kernel:NAME)",
                         val);
      nconds++;
    } else if (strcmp(a, "--allow-truncated") == 0) {
      flags |= GP_TP_ALLOW_TRUNCATED;
    } else if (a[0] == '-' && a[1]) {
      return cli_error(CLI_USAGE, "diff: unknown option '%s' (see --help)", a);
    } else if (nfiles < 2) {
      files[nfiles++] = a;
    } else {
      return cli_error(CLI_USAGE, "diff: two traces only ('%s' is a third)", a);
    }
  }
  if (nfiles != 2)
    return cli_error(CLI_USAGE, "diff: needs two traces, A and B (see --help)");
  if (strcmp(files[0], "-") == 0 && strcmp(files[1], "-") == 0)
    return cli_error(CLI_USAGE, "diff: only one trace can be standard input");
  report ra, rb, d;
  memset(&d, 0, sizeof(d));
  int rc = open_report(files[0], flags, &ra);
  if (rc) {
    report_free(&ra);
    return rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT;
  }
  rc = open_report(files[1], flags, &rb);
  if (rc) {
    report_free(&ra);
    report_free(&rb);
    return rc == CLI_USAGE ? CLI_USAGE : CLI_BAD_INPUT;
  }
  size_t n = strlen(files[0]) + strlen(files[1]) + 8;
  d.trace = malloc(n);
  if (d.trace)
    snprintf(d.trace, n, "%s vs %s", files[0], files[1]);
  d.start = 0;
  d.end = 0;
  for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
    diff_section(&d, &ra, &rb, &specs[s]);
  int status = CLI_OK;
  char held[MAX_CONDS * 300] = "";
  for (int c = 0; c < nconds; c++) {
    double p = pct(metric(&ra, conds[c].metric), metric(&rb, conds[c].metric));
    if (!isnan(p) && (conds[c].above ? p > conds[c].pct : p < conds[c].pct)) {
      size_t l = strlen(held);
      if (l + sizeof(conds[c].metric) + 32 < sizeof(held))
        snprintf(held + l, sizeof(held) - l, "%s%.256s %+.1f%%", l ? ", " : "",
                 conds[c].metric, p);
      status = DIFF_FAILED;
    }
  }
  if (strcmp(format, "csv") == 0) {
    report_print_csv(&d, stdout);
  } else if (strcmp(format, "json") == 0) {
    report_print_json(&d, stdout);
  } else {
    printf("gpuperf diff: A = %s, B = %s\n", files[0], files[1]);
    printf("kernel time %+.1f%%, copy time %+.1f%%, GPU busy %+.1f%%\n",
           pct(metric(&ra, "total"), metric(&rb, "total")),
           pct(metric(&ra, "copies"), metric(&rb, "copies")),
           pct(metric(&ra, "busy"), metric(&rb, "busy")));
    size_t changed = 0;
    for (size_t i = 0; i < d.ntabs; i++)
      for (size_t j = 0; j < d.tabs[i].nrows; j++) {
        double c = d.tabs[i].cells[j * 7 + 5].v;
        changed += isnan(c) || fabs(c) >= 0.05;
      }
    if (changed)
      printf("%zu metrics changed by 0.05%% or more\n", changed);
    else
      printf("no change\n");
    report_print_text_tables(&d, stdout);
  }
  if (status == DIFF_FAILED)
    cli_error(0, "diff: --fail-if held: %s", held);
  report_free(&ra);
  report_free(&rb);
  report_free(&d);
  return status;
}
