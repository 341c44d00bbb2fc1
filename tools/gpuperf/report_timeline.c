/*
 * report_timeline.c - the data of the HTML report's timeline: every
 * slice of the report's window, once, as a compact JSON object that the
 * page's renderer (report_timeline_js.c) lays out at each zoom level.
 *
 * Lanes are GPU hardware queues (rp_work, keyed by GPU and queue name)
 * and host tracks (rp_host), labelled with the thread's and process's
 * real names and ids. A lane has one row per slice depth, so nested
 * ranges and the calls inside them sit on rows of their own. gpuperf's
 * own 0 ns markers ("gpuperf host") are left out; its slices with a
 * duration are kept (they are time it took).
 *
 * The object, written as `var TL={...}` (escaped for a <script> block):
 *
 *   start  the window's start, ns (a string: it may pass 2^53)
 *   span   the window's length, ns
 *   lanes  [label, kind ("g" GPU queue, "h" host track), ...] flat pairs
 *   rows   [lane, depth, count, ...] flat triples, in slice order
 *   s      6 numbers a slice, rows one after the other, each row's
 *          slices by start time: ts (ns from the previous slice of the
 *          row; the first from the window's start), dur, name (index
 *          into names), class (0 kernel, 1 copy, 2 other GPU work, 3 API
 *          call, 4 user range, 5 gpuperf's own), args (1 + index into
 *          args, 0 for none), id (the trace's slice id, as a difference
 *          from the previous slice's of the row)
 *   names  distinct slice names
 *   keys   distinct argument keys
 *   args   distinct argument sets, each [key index, "value", ...]
 *   f      flows, [from slice, to slice, ...] as indices into s / 6
 *
 * Names, keys and argument sets are interned, so 36,000 kernels with a
 * handful of names and launch configurations cost a few bytes each.
 * Everything here is linear in the slices and arguments of the window,
 * except the sort of slice ids that maps flows (n log n).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "report_timeline.h"

/* ------------------------------------------------------------------ */
/* Interned strings                                                     */

/* A set of distinct byte strings, each with its index in insertion
 * order: an open-addressing hash table over an array of copies. */
typedef struct intern {
  char **str;
  size_t *len;
  size_t n, cap;
  int32_t *slot; /* index + 1, 0 for empty */
  size_t nslot;
} intern;

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int intern_grow(intern *t) {
  size_t ns = t->nslot ? t->nslot * 2 : 256;
  int32_t *slot = calloc(ns, sizeof(*slot));
  if (!slot)
    return -ENOMEM;
  for (size_t i = 0; i < t->n; i++) {
    size_t j = hash(t->str[i], t->len[i]) & (ns - 1);
    while (slot[j])
      j = (j + 1) & (ns - 1);
    slot[j] = (int32_t)i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->nslot = ns;
  return 0;
}

/* The index of s (n bytes) in t, added if new (*added tells). Returns
 * -ENOMEM (t unchanged) when out of memory. */
static long intern_add(intern *t, const char *s, size_t n, bool *added) {
  *added = false;
  if (2 * (t->n + 1) > t->nslot && intern_grow(t))
    return -ENOMEM;
  size_t j = hash(s, n) & (t->nslot - 1);
  for (; t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
    size_t i = (size_t)t->slot[j] - 1;
    if (t->len[i] == n && memcmp(t->str[i], s, n) == 0)
      return (long)i;
  }
  if (t->n == t->cap || t->n >= INT32_MAX - 1) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    char **str =
        t->n < INT32_MAX - 1 ? realloc(t->str, cap * sizeof(*str)) : NULL;
    if (!str)
      return -ENOMEM;
    t->str = str;
    size_t *len = realloc(t->len, cap * sizeof(*len));
    if (!len)
      return -ENOMEM;
    t->len = len;
    t->cap = cap;
  }
  char *copy = malloc(n + 1);
  if (!copy)
    return -ENOMEM;
  memcpy(copy, s, n);
  copy[n] = '\0';
  t->str[t->n] = copy;
  t->len[t->n] = n;
  t->slot[j] = (int32_t)++t->n;
  *added = true;
  return (long)t->n - 1;
}

static void intern_fini(intern *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->str[i]);
  free(t->str);
  free(t->len);
  free(t->slot);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */

/* s (n bytes) as a JSON string that is also safe inside a <script>
 * block: no "</script", "<!--" or "]]>" can form (<, > and & are
 * \u-escaped), and U+2028/2029, which older parsers take for line ends,
 * are escaped too. Control characters become \u00XX. */
static void json_str(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20 || c == '<' || c == '>' || c == '&')
      fprintf(f, "\\u%04x", c);
    else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
             ((unsigned char)s[i + 2] == 0xa8 ||
              (unsigned char)s[i + 2] == 0xa9)) {
      fprintf(f, "\\u%04x", (unsigned char)s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
      i += 2;
    } else
      fputc(c, f);
  }
  fputc('"', f);
}

/* ------------------------------------------------------------------ */
/* The data                                                             */

typedef struct idmap {
  int64_t id;
  int64_t index;
} idmap;

typedef struct tl_state {
  FILE *f;
  int oom;
  int64_t start;
  intern names, keys, sets, lanes;
  /* arguments: the set being read, as "key index \x1f value \x1e"... */
  int64_t set_id;
  char *buf;
  size_t blen, bcap;
  idmap *set_of; /* arg_set_id -> 1 + index into sets, by arg_set_id */
  size_t nset_of, cap_set_of;
  /* slices */
  int64_t nslices, row_n, prev_ts, prev_id, depth;
  long lane;     /* of the row being written; -1 before the first */
  char **labels; /* per lane: label, then its kind ('g' or 'h') */
  size_t cap_labels;
  int64_t *rows; /* lane, depth, count per row */
  size_t nrows, cap_rows;
  idmap *ids; /* slice id -> 1 + index into s */
  size_t cap_ids;
  int64_t nflows;
} tl_state;

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap)
    return p;
  size_t cap2 = *cap ? *cap * 2 : 64;
  while (cap2 < need)
    cap2 *= 2;
  void *q = realloc(p, cap2 * size);
  if (q)
    *cap = cap2;
  return q;
}

static void buf_add(tl_state *s, const char *p, size_t n) {
  char *b = grow(s->buf, &s->bcap, s->blen + n + 1, 1);
  if (!b) {
    s->oom = 1;
    return;
  }
  s->buf = b;
  memcpy(s->buf + s->blen, p, n);
  s->blen += n;
}

/* Interns the argument set read so far and remembers it for set_id. */
static void set_end(tl_state *s) {
  if (s->set_id < 0 || s->oom)
    return;
  bool added;
  long i = intern_add(&s->sets, s->buf ? s->buf : "", s->blen, &added);
  if (i < 0) {
    s->oom = 1;
    return;
  }
  if (added) {
    /* Written out at once: "[k,"v",k,"v"]" from the "k\x1fv\x1e" form. */
    fputs(i ? ",[" : "[", s->f);
    const char *p = s->buf, *end = s->buf + s->blen;
    for (bool first = true; p < end; first = false) {
      const char *us = memchr(p, '\x1f', (size_t)(end - p));
      const char *rs = memchr(us, '\x1e', (size_t)(end - us));
      fprintf(s->f, "%s%.*s,", first ? "" : ",", (int)(us - p), p);
      json_str(s->f, us + 1, (size_t)(rs - us - 1));
      p = rs + 1;
    }
    fputc(']', s->f);
  }
  idmap *m = grow(s->set_of, &s->cap_set_of, s->nset_of + 1, sizeof(*m));
  if (!m) {
    s->oom = 1;
    return;
  }
  s->set_of = m;
  s->set_of[s->nset_of++] = (idmap){s->set_id, i + 1};
}

/* Columns: arg_set_id, key, display value (not NULL); by arg_set_id. */
static void arg_row(gp_tp_rows *r, void *user) {
  tl_state *s = user;
  int64_t id = gp_tp_rows_int(r, 0);
  if (id != s->set_id) {
    set_end(s);
    s->set_id = id;
    s->blen = 0;
  }
  const char *key = gp_tp_rows_text(r, 1), *v = gp_tp_rows_text(r, 2);
  key = key ? key : "";
  v = v ? v : "";
  bool added;
  long k = intern_add(&s->keys, key, strlen(key), &added);
  if (k < 0) {
    s->oom = 1;
    return;
  }
  char num[32];
  int n = snprintf(num, sizeof(num), "%ld\x1f", k);
  buf_add(s, num, (size_t)n);
  /* The separators cannot occur in a value: a value's own are '?'. */
  size_t at = s->blen;
  buf_add(s, v, strlen(v));
  for (size_t i = at; !s->oom && i < s->blen; i++)
    if (s->buf[i] == '\x1e' || s->buf[i] == '\x1f')
      s->buf[i] = '?';
  buf_add(s, "\x1e", 1);
}

static int cmp_idmap(const void *a, const void *b) {
  const idmap *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The value for id in the sorted map m (n entries), or 0. */
static int64_t idmap_find(const idmap *m, size_t n, int64_t id) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && m[lo].id == id ? m[lo].index : 0;
}

/* Ends the row being written: its lane, depth and count go to rows. */
static void row_end(tl_state *s) {
  if (!s->row_n)
    return;
  int64_t *r = grow(s->rows, &s->cap_rows, 3 * (s->nrows + 1), sizeof(*r));
  if (!r) {
    s->oom = 1;
    return;
  }
  s->rows = r;
  r += 3 * s->nrows++;
  r[0] = s->lane;
  r[1] = s->depth;
  r[2] = s->row_n;
  s->row_n = 0;
}

/* Columns: lane key, lane label, lane kind, depth, ts, dur, name, class,
 * arg_set_id, id; ordered by lane key, depth, ts. */
static void slice_row(gp_tp_rows *r, void *user) {
  tl_state *s = user;
  if (s->oom)
    return;
  const char *key = gp_tp_rows_text(r, 0);
  key = key ? key : "";
  bool added;
  long lane = intern_add(&s->lanes, key, strlen(key), &added);
  if (lane < 0) {
    s->oom = 1;
    return;
  }
  if (added) {
    char **l = grow(s->labels, &s->cap_labels, s->lanes.n, sizeof(*l));
    const char *label = gp_tp_rows_text(r, 1), *kind = gp_tp_rows_text(r, 2);
    size_t n = label ? strlen(label) : 0;
    char *copy = l ? malloc(n + 2) : NULL;
    if (!copy) {
      s->oom = 1;
      return;
    }
    memcpy(copy, label ? label : "", n);
    copy[n] = '\0';
    copy[n + 1] = kind && *kind == 'g' ? 'g' : 'h';
    s->labels = l;
    l[lane] = copy;
  }
  int64_t depth = gp_tp_rows_int(r, 3);
  if (lane != s->lane || depth != s->depth) {
    row_end(s);
    s->lane = lane;
    s->depth = depth;
    s->prev_ts = s->start;
    s->prev_id = 0;
  }
  const char *name = gp_tp_rows_text(r, 6);
  name = name ? name : "";
  long ni = intern_add(&s->names, name, strlen(name), &added);
  idmap *ids = grow(s->ids, &s->cap_ids, (size_t)s->nslices + 1, sizeof(*ids));
  if (ni < 0 || !ids) {
    s->oom = 1;
    return;
  }
  s->ids = ids;
  int64_t ts = gp_tp_rows_int(r, 4), id = gp_tp_rows_int(r, 9);
  int64_t args = gp_tp_rows_type(r, 8) == GP_TP_NULL
                     ? 0
                     : idmap_find(s->set_of, s->nset_of, gp_tp_rows_int(r, 8));
  fprintf(s->f, "%s%" PRId64 ",%" PRId64 ",%ld,%d,%" PRId64 ",%" PRId64,
          s->nslices ? "," : "", report_sub_sat(ts, s->prev_ts),
          gp_tp_rows_int(r, 5), ni, (int)gp_tp_rows_int(r, 7), args,
          report_sub_sat(id, s->prev_id));
  s->ids[s->nslices] = (idmap){id, s->nslices + 1};
  s->nslices++;
  s->row_n++;
  s->prev_ts = ts;
  s->prev_id = id;
}

/* Columns: slice_out, slice_in. Flows with an end outside the timeline
 * (a slice out of the window, or a GPU slice's mirror on its stream
 * track) are left out. */
static void flow_row(gp_tp_rows *r, void *user) {
  tl_state *s = user;
  size_t n = (size_t)s->nslices;
  int64_t a = idmap_find(s->ids, n, gp_tp_rows_int(r, 0));
  int64_t b = idmap_find(s->ids, n, gp_tp_rows_int(r, 1));
  if (!a || !b)
    return;
  fprintf(s->f, "%s%" PRId64 ",%" PRId64, s->nflows ? "," : "", a - 1, b - 1);
  s->nflows++;
}

static void strings_json(FILE *f, const char *name, const intern *t) {
  fprintf(f, ",\"%s\":[", name);
  for (size_t i = 0; i < t->n; i++) {
    if (i)
      fputc(',', f);
    json_str(f, t->str[i], t->len[i]);
  }
  fputc(']', f);
}

/* The slices the timeline shows, with their lane and class. */
static const char view_sql[] =
    "CREATE OR REPLACE PERFETTO VIEW tl_slice AS "
    "SELECT 'g' || printf('%08d', w.ugpu) || '/' || w.queue AS k, "
    "coalesce(g.name, g.model, 'GPU ' || w.ugpu) || ': ' || w.queue AS label, "
    "'g' AS lk, coalesce(x.depth, 0) AS depth, w.ts, w.dur, w.name, "
    "CASE WHEN w.is_copy THEN 1 WHEN w.is_kernel THEN 0 ELSE 2 END AS cls, "
    "w.arg_set_id, w.id FROM rp_work w LEFT JOIN gpu g ON g.id = w.ugpu "
    "LEFT JOIN slice x ON x.id = w.id "
    "UNION ALL SELECT 'h' || printf('%010d', coalesce(h.upid, 0)) || '/' || "
    "printf('%010d', h.track_id), CASE WHEN th.utid IS NOT NULL THEN "
    "coalesce(th.name, 'thread') || ' ' || coalesce(th.tid, '?') ELSE "
    "coalesce(t.name, 'process track') END || coalesce(' (' || "
    "coalesce(p.name, 'process') || ' ' || p.pid || ')', ''), 'h', h.depth, "
    "h.ts, h.dur, h.name, CASE h.kind WHEN 'api' THEN 3 WHEN 'range' THEN 4 "
    "ELSE 5 END, s.arg_set_id, h.id FROM rp_host h JOIN slice s ON s.id = "
    "h.id JOIN track t ON t.id = h.track_id LEFT JOIN thread_track tt ON "
    "tt.id = h.track_id LEFT JOIN thread th ON th.utid = tt.utid LEFT JOIN "
    "process p ON p.upid = h.upid WHERE NOT (h.kind = 'overhead' AND "
    "h.dur = 0);\nSELECT 1";

static void tl_fini(tl_state *s) {
  intern_fini(&s->names);
  intern_fini(&s->keys);
  intern_fini(&s->sets);
  for (size_t i = 0; i < s->lanes.n; i++)
    free(s->labels[i]);
  intern_fini(&s->lanes);
  free(s->labels);
  free(s->buf);
  free(s->set_of);
  free(s->rows);
  free(s->ids);
}

/* Writes "var TL={...};" (see the top of this file). */
static int timeline_data(const gp_report *r, gp_tp *tp, FILE *f) {
  tl_state s;
  memset(&s, 0, sizeof(s));
  s.f = f;
  s.set_id = -1;
  s.lane = -1;
  gp_report_window(r, &s.start, NULL);
  int rc = report_each_row(tp, "report", view_sql, NULL, NULL);
  if (rc)
    goto out;
  fprintf(f, "var TL={\"start\":\"%" PRId64 "\",\"span\":%.0f,\"args\":[",
          s.start, report_span(r));
  rc = report_each_row(tp, "report",
                       "SELECT a.arg_set_id, a.key, a.display_value FROM args "
                       "a WHERE a.arg_set_id IN (SELECT arg_set_id FROM "
                       "tl_slice) AND a.display_value IS NOT NULL ORDER BY "
                       "a.arg_set_id, a.id",
                       arg_row, &s);
  set_end(&s);
  if (rc || s.oom)
    goto out;
  fputs("],\"s\":[", f);
  s.blen = 0;
  rc = report_each_row(tp, "report",
                       "SELECT k, label, lk, depth, ts, dur, name, cls, "
                       "arg_set_id, id FROM tl_slice ORDER BY k, depth, ts, id",
                       slice_row, &s);
  row_end(&s);
  if (rc || s.oom)
    goto out;
  fputs("],\"f\":[", f);
  if (s.nslices) /* qsort wants an array, even of none */
    qsort(s.ids, (size_t)s.nslices, sizeof(*s.ids), cmp_idmap);
  rc = report_each_row(tp, "report",
                       "SELECT slice_out, slice_in FROM flow ORDER BY id",
                       flow_row, &s);
  if (rc)
    goto out;
  fputs("],\"rows\":[", f);
  for (size_t i = 0; i < s.nrows; i++)
    fprintf(f, "%s%" PRId64 ",%" PRId64 ",%" PRId64, i ? "," : "",
            s.rows[3 * i], s.rows[3 * i + 1], s.rows[3 * i + 2]);
  fputs("],\"lanes\":[", f);
  for (size_t i = 0; i < s.lanes.n; i++) {
    size_t n = strlen(s.labels[i]);
    if (i)
      fputc(',', f);
    json_str(f, s.labels[i], n);
    fprintf(f, ",\"%c\"", s.labels[i][n + 1]);
  }
  fputc(']', f);
  strings_json(f, "names", &s.names);
  strings_json(f, "keys", &s.keys);
  fputs("};\n", f);
out:
  tl_fini(&s);
  return rc ? rc : s.oom ? -ENOMEM : 0;
}

/* See report_timeline.h. */
int report_timeline_html(const gp_report *r, gp_tp *tp, FILE *f) {
  fputs("<h2>Timeline</h2>\n<p class=note>GPU queues, then host threads "
        "(nested ranges and calls on rows by depth). Wheel or W/S to zoom, "
        "drag, shift+wheel or A/D to pan; click a slice for its details "
        "and flows, a merged block (&#8220;N slices&#8221;) to zoom to it. "
        "<button id=tlin>zoom in</button> <button id=tlout>zoom out</button> "
        "<button id=tlall>whole window</button> <span id=tlwin></span></p>\n"
        "<div id=tlbox><svg id=timeline></svg><div id=tltip></div></div>\n"
        "<div id=tldet class=note>Click a slice for its details.</div>\n"
        "<script>",
        f);
  int rc = timeline_data(r, tp, f);
  if (rc)
    return rc;
  fprintf(f, "%s</script>\n", report_timeline_js);
  return 0;
}
