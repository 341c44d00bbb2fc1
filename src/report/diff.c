/*
 * report/diff.c - what changed between two reports (`gpuperf diff`).
 *
 * Rows of a section are matched by key (kernel name, copy kind, GPU and
 * queue, counter and GPU) after sorting both sides by it, so the diff
 * costs n log n. Each metric of a matched key becomes one row: the
 * values in A and B, the change in percent, and a hint. For kernels the
 * hint says whether the change of the mean stands out of the spread:
 * |mean B - mean A| over the standard error of the difference,
 * sqrt(sA^2/nA + sB^2/nB); 3 or more is "significant", under 1 "noise",
 * between "maybe". With no spread at all (deterministic runs) any change
 * is significant.
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

static const char *hint(const gp__rcell *a, const gp__rcell *b) {
  if (!a)
    return "new in B";
  if (!b)
    return "gone in B";
  double ma = a[5].value, mb = b[5].value, d = fabs(mb - ma);
  double se = sqrt(a[7].value * a[7].value / a[1].value +
                   b[7].value * b[7].value / b[1].value);
  if (d == 0)
    return "same";
  if (se == 0 || d / se >= 3)
    return "significant";
  return d / se < 1 ? "noise" : "maybe";
}

/* Adds the rows of key (a, b: its rows in A and B, one may be NULL). */
static void add_rows(gp_report_table *out, const spec *s, const char *key,
                     const gp__rcell *a, const gp__rcell *b,
                     const gp_report_table *ta) {
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
    if (s->spread && strcmp(s->m[m].name, "mean") == 0)
      gp__report_text(out, &row[6], hint(a, b));
    else if (!a || !b)
      gp__report_text(out, &row[6], a ? "gone in B" : "new in B");
    else
      gp__report_text(out, &row[6], "");
  }
  free(name);
}

/* Compares table s->table of A and B into a new table of d. */
static void diff_section(gp_report *d, const gp_report *ra, const gp_report *rb,
                         const spec *s) {
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
  keys_free(ka, na);
  keys_free(kb, nb);
}

/* See gpuperf/report.h. */
int gp_report_diff(const gp_report *a, const gp_report *b, gp_report **out) {
  if (!a || !b || !out)
    return GP_EINVAL;
  gp_report *d = calloc(1, sizeof(*d));
  size_t n = strlen(a->name) + strlen(b->name) + 8;
  if (!d || !(d->name = malloc(n))) {
    free(d);
    return GP_ENOMEM;
  }
  snprintf(d->name, n, "%s vs %s", a->name, b->name);
  for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]) && !d->oom; s++)
    diff_section(d, a, b, &specs[s]);
  if (d->oom) {
    gp_report_destroy(d);
    return GP_ENOMEM;
  }
  *out = d;
  return 0;
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
  return NAN;
}
