/*
 * report/diff.c - what changed between two reports (`gpuperf diff`).
 *
 * Rows of a section are matched by key (kernel name, copy kind, GPU and
 * queue, counter and GPU) after sorting both sides by it, so the diff
 * costs n log n. Each metric of a matched key becomes one row: the
 * values in A and B, the change in percent, and a hint that separates
 * change from noise in two steps:
 *
 *   - a minimum effect: a change under min_pct percent of A, or for a
 *     time under min_ns, is "small" and never significant, however
 *     steady the runs (a deterministic run changing a mean by 0.26 ns);
 *   - the spread, where it is known (a kernel's mean and total): the
 *     change over its standard error, sqrt(sA^2/nA + sB^2/nB) for a
 *     mean, sqrt(nA sA^2 + nB sB^2) for a total; 3 or more is
 *     "significant", under 1 "noise", between "maybe"; with no spread
 *     at all any change past the minimum is significant. Without a
 *     spread (counts, bytes, busy, counters) a change past the minimum
 *     is "changed".
 *
 * gp_report_metric_change() judges the totals `--fail-if` names the same
 * way, so a condition can require significance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "reportInt.h"

typedef struct keyed {
  char *key; /* the key columns joined by \x1f (owned) */
  const gp__rcell *row;
} keyed;

static int by_key(const void *a, const void *b) {
  return gp__report_name_cmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

static void keys_free(keyed *k, size_t n) {
  for (size_t i = 0; k && i < n; i++)
    free(k[i].key);
  free(k);
}

/* The rows of t (NULL: none) keyed by its key columns (nk of them),
 * sorted; NULL if out of memory. */
static keyed *keys(const gp_report_table *t, const int *kcols, int nk) {
  size_t n = t ? t->nrows : 0;
  keyed *k = calloc(n + 1, sizeof(keyed));
  if (!k)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const gp__rcell *row = &t->cells[i * (size_t)t->ncols];
    size_t len = 1;
    char num[64];
    for (int j = 0; j < nk; j++) {
      const gp__rcell *c = &row[kcols[j]];
      len += 1 + (c->text ? strlen(c->text) : sizeof(num));
    }
    k[i].row = row;
    if (!(k[i].key = malloc(len))) {
      keys_free(k, n);
      return NULL;
    }
    size_t o = 0;
    for (int j = 0; j < nk; j++) {
      const gp__rcell *c = &row[kcols[j]];
      if (!c->text)
        snprintf(num, sizeof(num), "%.0f", c->value);
      o += (size_t)snprintf(k[i].key + o, len - o, "%s%s", j ? "\x1f" : "",
                            c->text ? c->text : num);
    }
  }
  qsort(k, n, sizeof(keyed), by_key);
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

static const gp__rcol dcols[] = {
    {"name", "name", GP_REPORT_TEXT}, {"metric", "metric", GP_REPORT_TEXT},
    {"unit", "unit", GP_REPORT_TEXT}, {"a", "A", GP_REPORT_VALUE},
    {"b", "B", GP_REPORT_VALUE},      {"change_pct", "change", GP_REPORT_PCT},
    {"hint", "hint", GP_REPORT_TEXT}};

/* See gpuperf/report.h. */
double gp_report_change_pct(double a, double b) {
  if (isnan(a) || isnan(b))
    return NAN;
  if (a == 0)
    return b == 0 ? 0 : NAN;
  return 100.0 * (b - a) / a;
}

/* See gpuperf/report.h. */
void gp_report_diff_options_init(gp_report_diff_options *o) {
  memset(o, 0, sizeof(*o));
  o->size = sizeof(*o);
  o->min_pct = 1;
  o->min_ns = 50;
}

/* Checks o (NULL: the defaults) into *out; GP_EINVAL if it is bad. */
static int options(const gp_report_diff_options *o,
                   gp_report_diff_options *out) {
  if (!o) {
    gp_report_diff_options_init(out);
    return 0;
  }
  if (o->size != sizeof(*o) || o->reserved0 || !(o->min_pct >= 0) ||
      !(o->min_ns >= 0))
    return GP_EINVAL;
  *out = *o;
  return 0;
}

/*
 * The hint for a change from a to b (both present): is_ns says the
 * metric is a time (min_ns applies); se is the change's standard error,
 * NaN where no spread is known. *sig (may be NULL) says whether it is a
 * change that counts (significant or changed).
 */
static const char *judge(double a, double b, bool is_ns, double se,
                         const gp_report_diff_options *o, bool *sig) {
  double d = fabs(b - a);
  bool counts = false;
  const char *h;
  if (isnan(d))
    h = "";
  else if (d == 0)
    h = "same";
  else if ((a != 0 && 100.0 * d / fabs(a) < o->min_pct) ||
           (is_ns && d < o->min_ns))
    h = "small";
  else if (isnan(se))
    h = "changed", counts = true;
  else if (se == 0 || d / se >= 3)
    h = "significant", counts = true;
  else
    h = d / se < 1 ? "noise" : "maybe";
  if (sig)
    *sig = counts;
  return h;
}

/* A kernel row's spread: cells count 1, stddev 7. */
static double var_mean(const gp__rcell *k) {
  return k[7].value * k[7].value / k[1].value;
}
static double var_total(const gp__rcell *k) {
  return k[1].value * k[7].value * k[7].value;
}

/* The hint of metric m of spec s for rows a and b (one may be NULL). */
static const char *row_hint(const spec *s, int m, const char *unit,
                            const gp__rcell *a, const gp__rcell *b,
                            const gp_report_diff_options *o) {
  if (!a || !b)
    return a ? "gone in B" : "new in B";
  int col = s->m[m].col;
  double se = NAN;
  if (s->spread && col == 5)
    se = sqrt(var_mean(a) + var_mean(b));
  else if (s->spread && col == 2)
    se = sqrt(var_total(a) + var_total(b));
  bool is_ns = unit && strcmp(unit, "ns") == 0;
  return judge(a[col].value, b[col].value, is_ns, se, o, NULL);
}

/* Adds the rows of key (a, b: its rows in A and B, one may be NULL). */
static void add_rows(gp_report_table *out, const spec *s, const char *key,
                     const gp__rcell *a, const gp__rcell *b,
                     const gp_report_table *ta,
                     const gp_report_diff_options *o) {
  char *name = strdup(key);
  if (!name) {
    *out->oom = true;
    return;
  }
  for (char *p = name; *p; p++)
    if (*p == '\x1f')
      *p = ' ';
  for (int m = 0; m < s->nm; m++) {
    gp__rcell *row = gp__report_row(out);
    if (!row)
      break;
    gp__report_text(out, &row[0], name);
    gp__report_text(out, &row[1], s->m[m].name);
    const char *unit = s->m[m].unit;
    if (!unit && ta && ta->unit_col >= 0) {
      const gp__rcell *src = a ? a : b;
      unit = src[ta->unit_col].text;
    }
    gp__report_text(out, &row[2], unit ? unit : "");
    row[3].value = a ? a[s->m[m].col].value : NAN;
    row[4].value = b ? b[s->m[m].col].value : NAN;
    row[5].value = gp_report_change_pct(row[3].value, row[4].value);
    gp__report_text(out, &row[6], row_hint(s, m, unit, a, b, o));
  }
  free(name);
}

/* Compares table s->table of A and B into a new table of d. */
static void diff_section(gp_report *d, const gp_report *ra, const gp_report *rb,
                         const spec *s, const gp_report_diff_options *o) {
  const gp_report_table *ta = gp_report_table_find(ra, s->table),
                        *tb = gp_report_table_find(rb, s->table);
  gp_report_table *t =
      gp__report_add_table(d, s->table, s->title, NULL, 7, dcols);
  if (!t)
    return;
  t->unit_col = 2;
  size_t na = ta ? ta->nrows : 0, nb = tb ? tb->nrows : 0;
  keyed *ka = keys(ta, s->kcols, s->nk), *kb = keys(tb, s->kcols, s->nk);
  if (!ka || !kb)
    d->oom = true;
  size_t i = 0, j = 0;
  while (ka && kb && (i < na || j < nb)) {
    int c = i == na   ? 1
            : j == nb ? -1
                      : gp__report_name_cmp(ka[i].key, kb[j].key);
    if (c == 0) {
      add_rows(t, s, ka[i].key, ka[i].row, kb[j].row, ta, o);
      i++;
      j++;
    } else if (c < 0) {
      add_rows(t, s, ka[i].key, ka[i].row, NULL, ta, o);
      i++;
    } else {
      add_rows(t, s, kb[j].key, NULL, kb[j].row, tb, o);
      j++;
    }
  }
  keys_free(ka, na);
  keys_free(kb, nb);
}

/* The run table: the window's length ("wall") and the GPU work's span. */
static void diff_run(gp_report *d, const gp_report *ra, const gp_report *rb,
                     const gp_report_diff_options *o) {
  gp_report_table *t = gp__report_add_table(
      d, "run", "Run",
      "wall: the window (the whole trace); GPU span: first GPU work's "
      "start to the last one's end",
      7, dcols);
  if (!t)
    return;
  t->unit_col = 2;
  double v[2][2] = {{(double)gp__report_sub_sat(ra->end, ra->start),
                     (double)gp__report_sub_sat(ra->work_end, ra->work_start)},
                    {(double)gp__report_sub_sat(rb->end, rb->start),
                     (double)gp__report_sub_sat(rb->work_end, rb->work_start)}};
  static const char *const names[] = {"wall", "GPU span"};
  for (int m = 0; m < 2; m++) {
    gp__rcell *row = gp__report_row(t);
    if (!row)
      return;
    gp__report_text(t, &row[0], names[m]);
    gp__report_text(t, &row[1], "time");
    gp__report_text(t, &row[2], "ns");
    row[3].value = v[0][m];
    row[4].value = v[1][m];
    row[5].value = gp_report_change_pct(v[0][m], v[1][m]);
    gp__report_text(t, &row[6], judge(v[0][m], v[1][m], true, NAN, o, NULL));
  }
}

/* See gpuperf/report.h. */
int gp_report_diff_ex(const gp_report *a, const gp_report *b,
                      const gp_report_diff_options *opts, gp_report **out) {
  gp_report_diff_options o;
  if (!a || !b || !out || options(opts, &o))
    return GP_EINVAL;
  gp_report *d = calloc(1, sizeof(*d));
  size_t n = strlen(a->name) + strlen(b->name) + 8;
  if (!d || !(d->name = malloc(n))) {
    free(d);
    return GP_ENOMEM;
  }
  snprintf(d->name, n, "%s vs %s", a->name, b->name);
  diff_run(d, a, b, &o);
  for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]) && !d->oom; s++)
    diff_section(d, a, b, &specs[s], &o);
  if (d->oom) {
    gp_report_destroy(d);
    return GP_ENOMEM;
  }
  *out = d;
  return 0;
}

/* See gpuperf/report.h. */
int gp_report_diff(const gp_report *a, const gp_report *b, gp_report **out) {
  return gp_report_diff_ex(a, b, NULL, out);
}

/* The sum of column col of table id (rows whose first column is only,
 * if only is not NULL). */
static double total(const gp_report *r, const char *id, int col,
                    const char *only) {
  const gp_report_table *t = gp_report_table_find(r, id);
  double s = 0;
  for (size_t i = 0; t && i < t->nrows; i++) {
    const gp__rcell *row = &t->cells[i * (size_t)t->ncols];
    if ((!only || (row[0].text && strcmp(row[0].text, only) == 0)) &&
        !isnan(row[col].value))
      s += row[col].value;
  }
  return s;
}

/* See gpuperf/report.h. */
double gp_report_metric(const gp_report *r, const char *m) {
  if (!m)
    return NAN;
  if (strcmp(m, "total") == 0)
    return total(r, "kernels", 2, NULL);
  if (strcmp(m, "copies") == 0)
    return total(r, "copies", 3, NULL);
  if (strcmp(m, "busy") == 0)
    return total(r, "gpus", 5, NULL);
  if (strncmp(m, "kernel:", 7) == 0)
    return total(r, "kernels", 2, m + 7);
  if (strcmp(m, "wall") == 0)
    return (double)gp__report_sub_sat(r->end, r->start);
  return NAN;
}

/* The variance of the total of the kernels of r (only: that one, if not
 * NULL); *found says whether it has any such row. */
static double kernel_var(const gp_report *r, const char *only, bool *found) {
  const gp_report_table *t = gp_report_table_find(r, "kernels");
  double v = 0;
  for (size_t i = 0; t && i < t->nrows; i++) {
    const gp__rcell *row = &t->cells[i * (size_t)t->ncols];
    if (only && (!row[0].text || strcmp(row[0].text, only) != 0))
      continue;
    *found = true;
    if (!isnan(row[7].value))
      v += var_total(row);
  }
  return v;
}

/* See gpuperf/report.h. */
int gp_report_metric_change(const gp_report *a, const gp_report *b,
                            const char *m, const gp_report_diff_options *opts,
                            gp_report_change *out) {
  gp_report_diff_options o;
  if (!a || !b || !m || !out || options(opts, &o))
    return GP_EINVAL;
  bool kernel = strncmp(m, "kernel:", 7) == 0, fa = false, fb = false;
  double se = NAN;
  if (kernel || strcmp(m, "total") == 0) {
    const char *only = kernel ? m + 7 : NULL;
    se = sqrt(kernel_var(a, only, &fa) + kernel_var(b, only, &fb));
    if (kernel && !fa && !fb)
      return GP_ENOENT;
  } else if (strcmp(m, "copies") && strcmp(m, "busy") && strcmp(m, "wall")) {
    return GP_EINVAL;
  }
  memset(out, 0, sizeof(*out));
  out->a = gp_report_metric(a, m);
  out->b = gp_report_metric(b, m);
  out->pct = out->a == 0 && out->b > 0 ? INFINITY
                                       : gp_report_change_pct(out->a, out->b);
  double d = fabs(out->b - out->a);
  out->z = isnan(se) ? NAN : se == 0 ? (d > 0 ? INFINITY : 0) : d / se;
  if (kernel && (!fa || !fb)) {
    out->hint = fa ? "gone in B" : "new in B";
    out->significant = true;
  } else {
    out->hint = judge(out->a, out->b, true, se, &o, &out->significant);
  }
  return 0;
}
