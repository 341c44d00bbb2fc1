/*
 * export_fmt.c - `gpuperf export --format chrome-json|csv`: a trace in the
 * formats other tools read, keeping what the trace has.
 *
 * chrome-json is Chrome's trace-event format (what chrome://tracing,
 * Perfetto's UI and its trace processor, and many scripts read):
 *
 *   - every slice of the trace as a complete ("X") event: GPU work on one
 *     pseudo-process per GPU (pid 2^30 + GPU) with a thread per hardware
 *     queue; host calls and user ranges on their process and thread; the
 *     GPU work mirrored on a process's logical stream tracks ("Device #0"
 *     > "Stream #2") on a thread per stream of that process, so the JSON
 *     has as many slices as the trace;
 *   - categories: kernel, copy (Memcpy), fill (Memset), gpu (other GPU
 *     work), stream (a stream's mirror), api, the range's own category or
 *     range, gpuperf (gpuperf's own slices);
 *   - args: a GPU slice's every arg (grid and block sizes, registers,
 *     shared memory, bytes...), its correlation id (the launching call's,
 *     read from the call's GpuCorrelation event id: id >> 8) and stream;
 *     a host call's correlation id;
 *   - every flow of the trace (launch -> kernel, copy -> kernel) as a
 *     flow start ("s") at its source slice's start and a flow end ("f",
 *     "bp": "e": bound to the enclosing slice) at its target's start;
 *   - process_name and thread_name metadata: GPU names, queue names,
 *     process and thread names from the trace, stream names;
 *   - counters as "C" events on their GPU's process.
 *
 * Times are microseconds written exactly (ns / 1000 with three decimals).
 *
 * csv writes one table: work (GPU work with its correlation id, stream
 * and launch configuration), host, counters, flows, or any table or view
 * of the trace processor by name.
 *
 * Both read the report layer's views (gp_report_views) and a few tables
 * of their own (ex_*), each built once, so the cost is n log n.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "export_fmt.h"
#include "report.h"
#include "trace_open.h"

/* The pid of GPU n's pseudo-process in the JSON (real pids are below). */
#define GPU_PID_BASE 1073741824 /* 2^30 */
/* The tid of a host track that is not a thread (an async range track, a
 * stream): this plus the track id. */
#define TRACK_TID_BASE 1073741824

/* In the SQL below, 1073741824 is GPU_PID_BASE and TRACK_TID_BASE; a
 * GpuCorrelation event id e (docs/trace-format.md) gives its correlation
 * id as e >> 8, or past 255 sequences (e < 0 as an int64) as its low 40
 * bits (e & 1099511627775). */

/* The tables both formats read, on top of the report's views. */
static const char prepare_sql[] =
    "CREATE OR REPLACE PERFETTO TABLE ex_corr AS SELECT slice_in AS id, "
    "min(CASE WHEN e >= 0 THEN e >> 8 ELSE e & 1099511627775 END) AS "
    "corr FROM (SELECT f.slice_in, extract_arg(s.arg_set_id, "
    "'gpu_correlation.render_stage_submission_event_ids[0]') AS e FROM "
    "flow f JOIN slice s ON s.id = f.slice_out) WHERE e IS NOT NULL "
    "GROUP BY slice_in;\n"
    "CREATE OR REPLACE PERFETTO INDEX ex_corr_id ON ex_corr(id);\n"
    "CREATE OR REPLACE PERFETTO TABLE ex_mirror AS SELECT s.id, s.ts, "
    "s.dur, s.name, s.track_id, t.name AS stream, p.name AS device, "
    "CAST(substr(p.name, 9) AS INT) AS dev, pt.upid FROM slice s JOIN "
    "track t ON s.track_id = t.id JOIN track p ON p.id = t.parent_id "
    "LEFT JOIN process_track pt ON pt.id = t.id WHERE p.name GLOB "
    "'Device #*';\n"
    "CREATE OR REPLACE PERFETTO INDEX ex_mirror_ts ON ex_mirror(ts);\n"
    "CREATE OR REPLACE PERFETTO TABLE ex_work AS SELECT w.id, w.ts, "
    "w.dur, coalesce(g.gpu, w.ugpu) AS gpu, w.ugpu, w.track_id, "
    "w.queue, w.name, CASE WHEN w.is_kernel THEN 'kernel' WHEN "
    "w.raw_name GLOB 'Memset*' THEN 'fill' WHEN w.is_copy THEN 'copy' "
    "ELSE 'gpu' END AS kind, CAST(w.bytes AS INT) AS bytes, c.corr AS "
    "correlation_id, (SELECT min(m.stream) FROM ex_mirror m WHERE m.ts "
    "= w.ts AND m.name = w.raw_name AND m.dev = coalesce(g.gpu, "
    "w.ugpu)) AS stream, w.arg_set_id FROM rp_work w LEFT JOIN gpu g ON "
    "g.id = w.ugpu LEFT JOIN ex_corr c ON c.id = w.id;\n"
    "CREATE OR REPLACE PERFETTO TABLE ex_host AS SELECT h.id, "
    "coalesce(p.pid, 0) AS pid, coalesce(th.tid, 1073741824 + "
    "h.track_id) AS tid, th.tid AS thread_tid, p.pid AS process_pid, "
    "h.ts, h.dur, h.name, h.kind, h.category, CASE h.kind WHEN 'api' "
    "THEN 'api' WHEN 'range' THEN coalesce(h.category, 'range') ELSE "
    "'gpuperf' END AS cat, (SELECT CASE WHEN e >= 0 THEN e >> 8 ELSE e "
    "& 1099511627775 END FROM (SELECT extract_arg(s.arg_set_id, "
    "'gpu_correlation.render_stage_submission_event_ids[0]') AS e FROM "
    "slice s WHERE s.id = h.id)) AS correlation_id FROM rp_host h LEFT "
    "JOIN thread_track tt ON tt.id = h.track_id LEFT JOIN thread th ON "
    "th.utid = tt.utid LEFT JOIN process p ON p.upid = h.upid;\n"
    "CREATE OR REPLACE PERFETTO TABLE ex_slice AS SELECT id, 1073741824 "
    "+ ugpu AS pid, track_id AS tid, ts, dur, name, kind AS cat, "
    "arg_set_id, correlation_id AS corr, stream FROM ex_work UNION ALL "
    "SELECT id, pid, tid, ts, dur, name, cat, NULL, correlation_id, "
    "NULL FROM ex_host UNION ALL SELECT m.id, coalesce(p.pid, 0), "
    "1073741824 + m.track_id, m.ts, m.dur, m.name, 'stream', NULL, "
    "NULL, m.stream FROM ex_mirror m LEFT JOIN process p ON p.upid = "
    "m.upid;\n"
    "CREATE OR REPLACE PERFETTO INDEX ex_slice_id ON ex_slice(id);\n"
    "SELECT 1";

/* ------------------------------------------------------------------ */
/* Arg sets, written once as JSON members                               */

typedef struct argset {
  int64_t id;
  size_t off, len; /* in the text */
} argset;

typedef struct argsets {
  argset *v;
  size_t n, cap;
  char *text;
  size_t tlen, tcap;
  bool oom;
} argsets;

static void text_add(argsets *a, const char *s, size_t n) {
  if (a->oom)
    return;
  if (a->tlen + n + 1 > a->tcap) {
    size_t cap = a->tcap ? a->tcap : 4096;
    while (cap < a->tlen + n + 1)
      cap *= 2;
    char *t = realloc(a->text, cap);
    if (!t) {
      a->oom = true;
      return;
    }
    a->text = t;
    a->tcap = cap;
  }
  memcpy(a->text + a->tlen, s, n);
  a->tlen += n;
  a->text[a->tlen] = '\0';
}

/* What a FILE writes, into the text (JSON strings and numbers are written
 * by the trace processor's own writers, which take a FILE). */
static void text_put(argsets *a, void (*put)(FILE *, const void *),
                     const void *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m) {
    a->oom = true;
    return;
  }
  put(m, v);
  if (fclose(m) != 0 || !buf)
    a->oom = true;
  else
    text_add(a, buf, len);
  free(buf);
}

static void put_str(FILE *f, const void *s) {
  gp_tp_put_json_string(f, s);
}

static void put_real(FILE *f, const void *v) {
  gp_tp_put_json_number(f, *(const double *)v);
}

/* Columns: arg_set_id, key, value_type, int_value, string_value,
 * real_value; by arg_set_id. */
static void arg_row(gp_tp_rows *r, void *user) {
  argsets *a = user;
  int64_t id = gp_tp_rows_int(r, 0);
  const char *key = gp_tp_rows_text(r, 1);
  if (a->oom || !key)
    return;
  if (!a->n || a->v[a->n - 1].id != id) {
    if (a->n == a->cap) {
      size_t cap = a->cap ? a->cap * 2 : 256;
      argset *v = realloc(a->v, cap * sizeof(*v));
      if (!v) {
        a->oom = true;
        return;
      }
      a->v = v;
      a->cap = cap;
    }
    a->v[a->n++] = (argset){id, a->tlen, 0};
  } else {
    text_add(a, ",", 1);
  }
  text_put(a, put_str, key);
  text_add(a, ":", 1);
  const char *type = gp_tp_rows_text(r, 2);
  if (type && strcmp(type, "string") == 0 &&
      gp_tp_rows_type(r, 4) != GP_TP_NULL) {
    text_put(a, put_str, gp_tp_rows_text(r, 4));
  } else if (type && strcmp(type, "real") == 0 &&
             gp_tp_rows_type(r, 5) != GP_TP_NULL) {
    double v = gp_tp_rows_real(r, 5);
    text_put(a, put_real, &v);
  } else if (gp_tp_rows_type(r, 3) != GP_TP_NULL) {
    char num[32];
    int n = snprintf(num, sizeof(num), "%" PRId64, gp_tp_rows_int(r, 3));
    text_add(a, num, (size_t)n);
  } else {
    text_add(a, "null", 4);
  }
  a->v[a->n - 1].len = a->tlen - a->v[a->n - 1].off;
}

/* The members of arg set id, or NULL. */
static const argset *argset_find(const argsets *a, int64_t id) {
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a->v[mid].id < id)
      lo = mid + 1;
    else if (a->v[mid].id > id)
      hi = mid;
    else
      return &a->v[mid];
  }
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Chrome JSON                                                          */

/* ns as exact microseconds: "1234.567". */
static void us(FILE *f, int64_t ns) {
  if (ns < 0) {
    fputc('-', f);
    ns = ns == INT64_MIN ? INT64_MAX : -ns;
  }
  fprintf(f, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000));
}

typedef struct jstate {
  FILE *f;
  bool first;
  const argsets *args;
  long long flows;
} jstate;

static void sep(jstate *j) {
  fputs(j->first ? "\n" : ",\n", j->f);
  j->first = false;
}

/* Columns: pid, tid, kind ('M' process, 'T' thread), name. */
static void meta_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  sep(j);
  bool proc = strcmp(gp_tp_rows_text(r, 2), "M") == 0;
  fprintf(j->f,
          "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
          ",\"args\":{\"name\":",
          proc ? "process_name" : "thread_name", gp_tp_rows_int(r, 0),
          gp_tp_rows_int(r, 1));
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 3));
  fputs("}}", j->f);
}

/* Columns: pid, tid, ts, dur, name, cat, arg_set_id, corr, stream. */
static void slice_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  trace_progress_step(1);
  sep(j);
  fprintf(j->f, "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
          gp_tp_rows_int(r, 0), gp_tp_rows_int(r, 1));
  us(j->f, gp_tp_rows_int(r, 2));
  fputs(",\"dur\":", j->f);
  us(j->f, gp_tp_rows_int(r, 3));
  fputs(",\"name\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 4));
  fputs(",\"cat\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 5));
  const argset *a = gp_tp_rows_type(r, 6) == GP_TP_NULL
                        ? NULL
                        : argset_find(j->args, gp_tp_rows_int(r, 6));
  bool corr = gp_tp_rows_type(r, 7) != GP_TP_NULL,
       stream = gp_tp_rows_type(r, 8) != GP_TP_NULL;
  if (a || corr || stream) {
    fputs(",\"args\":{", j->f);
    if (a)
      fwrite(j->args->text + a->off, 1, a->len, j->f);
    if (corr)
      fprintf(j->f, "%s\"correlation_id\":%" PRId64, a ? "," : "",
              gp_tp_rows_int(r, 7));
    if (stream) {
      fputs(a || corr ? ",\"stream\":" : "\"stream\":", j->f);
      gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 8));
    }
    fputc('}', j->f);
  }
  fputc('}', j->f);
}

/* Columns: flow id, then pid, tid, ts of the slice that starts first,
 * then of the other. A flow start ("s") at the first slice's start binds
 * to the slice open there on its thread (that slice: host calls have no
 * children); the end ("f", "bp":"e") to the slice enclosing the other's
 * start. Readers of the JSON (Perfetto's importer among them) take a flow
 * as going from the earlier slice to the later one, so its start must be
 * the earlier: a flow from a copy to the synchronize call that waited for
 * it, which began before the copy, reads as call -> copy (an end before
 * its start would be dropped). The ids are the flow table's, plus one. */
static void flow_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  int64_t id = gp_tp_rows_int(r, 0) + 1;
  trace_progress_step(1);
  for (int end = 0; end < 2; end++) {
    sep(j);
    fprintf(j->f,
            "{\"ph\":\"%s\",\"id\":%" PRId64 ",\"cat\":\"flow\",\"name\":"
            "\"flow\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
            end ? "f\",\"bp\":\"e" : "s", id, gp_tp_rows_int(r, 1 + 3 * end),
            gp_tp_rows_int(r, 2 + 3 * end));
    us(j->f, gp_tp_rows_int(r, 3 + 3 * end));
    fputc('}', j->f);
  }
  j->flows++;
}

/* Columns: pid, ts, name, value. */
static void counter_row(gp_tp_rows *r, void *user) {
  jstate *j = user;
  trace_progress_step(1);
  sep(j);
  fprintf(j->f,
          "{\"ph\":\"C\",\"pid\":%" PRId64 ",\"ts\":", gp_tp_rows_int(r, 0));
  us(j->f, gp_tp_rows_int(r, 1));
  fputs(",\"name\":", j->f);
  gp_tp_put_json_string(j->f, gp_tp_rows_text(r, 2));
  fputs(",\"args\":{\"value\":", j->f);
  gp_tp_put_json_number(j->f, gp_tp_rows_real(r, 3));
  fputs("}}", j->f);
}

static void count_row(gp_tp_rows *r, void *user) {
  *(long long *)user = gp_tp_rows_int(r, 0);
}

/* Names: GPUs, their queues; processes and threads from the trace
 * (else "process N", "thread N"); a stream is "Device #N Stream #M", a
 * range track its own name. */
static const char meta_sql[] =
    "SELECT DISTINCT 1073741824 + w.ugpu, 0, 'M', coalesce(g.name, "
    "g.model, 'GPU ' || w.gpu) FROM ex_work w LEFT JOIN gpu g ON g.id = "
    "w.ugpu UNION ALL SELECT DISTINCT 1073741824 + ugpu, track_id, 'T', "
    "queue FROM ex_work UNION ALL SELECT x.pid, 0, 'M', "
    "coalesce((SELECT name FROM process WHERE pid = x.pid AND name IS "
    "NOT NULL ORDER BY upid LIMIT 1), 'process ' || x.pid) FROM (SELECT "
    "DISTINCT pid FROM ex_slice WHERE pid < 1073741824) x UNION ALL "
    "SELECT x.pid, x.tid, 'T', CASE WHEN x.tid < 1073741824 THEN "
    "coalesce((SELECT t.name FROM thread t LEFT JOIN process p ON "
    "p.upid = t.upid WHERE t.tid = x.tid AND coalesce(p.pid, 0) = x.pid "
    "AND t.name IS NOT NULL ORDER BY t.utid LIMIT 1), 'thread ' || "
    "x.tid) ELSE coalesce((SELECT p.name || ' ' || t.name FROM track t "
    "JOIN track p ON p.id = t.parent_id WHERE t.id = x.tid - 1073741824 "
    "AND p.name GLOB 'Device #*'), (SELECT name FROM track WHERE id = "
    "x.tid - 1073741824), 'track ' || (x.tid - 1073741824)) END FROM "
    "(SELECT DISTINCT pid, tid FROM ex_slice WHERE pid < 1073741824) x";

static int prepare(gp_tp *tp) {
  return report_each_row(tp, "export", prepare_sql, NULL, NULL);
}

/* See export_fmt.h. */
int export_chrome_json(gp_tp *tp, FILE *f, long long *lost_flows) {
  argsets a;
  memset(&a, 0, sizeof(a));
  jstate j = {f, true, &a, 0};
  long long flows = 0;
  int rc;
  if ((rc = prepare(tp)) ||
      (rc = report_each_row(tp, "export",
                            "SELECT a.arg_set_id, a.key, a.value_type, "
                            "a.int_value, a.string_value, a.real_value FROM "
                            "args a WHERE a.arg_set_id IN (SELECT arg_set_id "
                            "FROM ex_work) AND a.key NOT IN ('correlation_id', "
                            "'stream') ORDER BY a.arg_set_id, a.id",
                            arg_row, &a)))
    goto done;
  if (a.oom) {
    rc = cli_error(CLI_BAD_INPUT, "export: out of memory");
    goto done;
  }
  long long events = 0;
  if ((rc = report_each_row(tp, "export",
                            "SELECT (SELECT count(*) FROM ex_slice) + (SELECT "
                            "count(*) FROM flow) + (SELECT count(*) FROM "
                            "rp_counter)",
                            count_row, &events)))
    goto done;
  trace_progress_phase("exporting", (uint64_t)events);
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
  if ((rc = report_each_row(tp, "export", meta_sql, meta_row, &j)) ||
      (rc = report_each_row(tp, "export",
                            "SELECT pid, tid, ts, dur, name, cat, arg_set_id, "
                            "corr, stream FROM ex_slice ORDER BY ts, id",
                            slice_row, &j)) ||
      (rc = report_each_row(tp, "export",
                            "SELECT id, CASE WHEN b THEN ipid ELSE opid END, "
                            "CASE WHEN b THEN itid ELSE otid END, CASE WHEN b "
                            "THEN its ELSE ots END, CASE WHEN b THEN opid "
                            "ELSE ipid END, CASE WHEN b THEN otid ELSE itid "
                            "END, CASE WHEN b THEN ots ELSE its END FROM "
                            "(SELECT f.id, so.pid AS opid, so.tid AS otid, "
                            "so.ts AS ots, si.pid AS ipid, si.tid AS itid, "
                            "si.ts AS its, si.ts < so.ts AS b FROM flow f "
                            "JOIN ex_slice so ON so.id = f.slice_out JOIN "
                            "ex_slice si ON si.id = f.slice_in) ORDER BY id",
                            flow_row, &j)) ||
      (rc = report_each_row(
           tp, "export",
           "SELECT CASE WHEN gpu IS NULL THEN 0 ELSE 1073741824 + gpu "
           "END, ts, name, value FROM rp_counter ORDER BY ts",
           counter_row, &j)) ||
      (rc = report_each_row(tp, "export", "SELECT count(*) FROM flow",
                            count_row, &flows)))
    goto done;
  fputs("\n]}\n", f);
  if (lost_flows)
    *lost_flows = flows - j.flows;
done:
  free(a.v);
  free(a.text);
  return rc;
}

/* ------------------------------------------------------------------ */
/* CSV                                                                  */

static const char work_sql[] =
    "SELECT ts AS ts_ns, dur AS dur_ns, gpu, queue, name, kind, bytes, "
    "correlation_id, stream, extract_arg(arg_set_id, "
    "'launch__grid_size_x') AS grid_x, extract_arg(arg_set_id, "
    "'launch__grid_size_y') AS grid_y, extract_arg(arg_set_id, "
    "'launch__grid_size_z') AS grid_z, extract_arg(arg_set_id, "
    "'launch__block_size_x') AS block_x, extract_arg(arg_set_id, "
    "'launch__block_size_y') AS block_y, extract_arg(arg_set_id, "
    "'launch__block_size_z') AS block_z, extract_arg(arg_set_id, "
    "'launch__shared_mem_per_block_static') AS shared_mem_static, "
    "extract_arg(arg_set_id, 'launch__shared_mem_per_block_dynamic') AS "
    "shared_mem_dynamic, extract_arg(arg_set_id, "
    "'launch__registers_per_thread') AS registers FROM ex_work ORDER BY "
    "ts, id";

/* An SQL name: letters, digits and '_', not starting with a digit. */
static bool sql_name(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

/* See export_fmt.h. */
int export_csv(gp_tp *tp, const char *table, FILE *f, bool escape) {
  char any[200];
  const char *sql;
  if (strcmp(table, "work") == 0)
    sql = work_sql;
  else if (strcmp(table, "host") == 0)
    sql = "SELECT ts AS ts_ns, dur AS dur_ns, kind, name, category, "
          "process_pid AS pid, thread_tid AS tid, correlation_id FROM ex_host "
          "ORDER BY ts, id";
  else if (strcmp(table, "counters") == 0)
    sql = "SELECT ts AS ts_ns, name, gpu, unit, value FROM rp_counter ORDER "
          "BY ts";
  else if (strcmp(table, "flows") == 0)
    sql = "SELECT f.slice_out AS from_id, so.ts AS from_ts_ns, so.name AS "
          "from_name, f.slice_in AS to_id, si.ts AS to_ts_ns, si.name AS "
          "to_name FROM flow f JOIN slice so ON so.id = f.slice_out JOIN "
          "slice si ON si.id = f.slice_in ORDER BY f.id";
  else if (sql_name(table) && strlen(table) < 100)
    snprintf(any, sizeof(any), "SELECT * FROM %s", table), sql = any;
  else
    sql = NULL;
  int rc;
  if (!sql || (rc = prepare(tp)))
    return !sql ? cli_error(CLI_USAGE,
                            "export: --table '%s' is not work, host, "
                            "counters, flows or a table of the trace",
                            table)
                : rc;
  gp_tp_rows *r;
  gp_tp_error err;
  char *count_sql = malloc(strlen(sql) + 64);
  long long total = 0;
  if (count_sql) { /* the progress line's total; a failure shows below */
    sprintf(count_sql, "SELECT count(*) FROM (%s)", sql);
    gp_tp_rows *c;
    if (gp_tp_query(tp, count_sql, &c, &err) == 0) {
      if (gp_tp_rows_next(c, &err) == 1)
        total = gp_tp_rows_int(c, 0);
      gp_tp_rows_destroy(c);
    }
    free(count_sql);
  }
  trace_progress_phase("exporting", (uint64_t)total);
  if (gp_tp_query(tp, sql, &r, &err) != 0) {
    if (sql == any)
      return cli_error(CLI_USAGE,
                       "export: --table '%s' is not work, host, counters, "
                       "flows or a table of the trace (%s)",
                       table, err.message);
    return cli_error(CLI_BAD_INPUT, "export: %s", err.message);
  }
  int n = gp_tp_rows_columns(r);
  for (int c = 0; c < n; c++)
    fprintf(f, "%s%s", c ? "," : "", gp_tp_rows_name(r, c));
  fputc('\n', f);
  while ((rc = gp_tp_rows_next(r, &err)) == 1) {
    trace_progress_step(1);
    for (int c = 0; c < n; c++) {
      if (c)
        fputc(',', f);
      switch (gp_tp_rows_type(r, c)) {
      case GP_TP_INT:
        fprintf(f, "%" PRId64, gp_tp_rows_int(r, c));
        break;
      case GP_TP_REAL: {
        double v = gp_tp_rows_real(r, c);
        if (isinf(v)) /* as the report's CSV: what strtod reads */
          fputs(v > 0 ? "inf" : "-inf", f);
        else
          fprintf(f, "%.17g", v);
        break;
      }
      case GP_TP_TEXT:
        report_put_csv_str(f, gp_tp_rows_text(r, c), escape);
        break;
      default:
        break;
      }
    }
    fputc('\n', f);
  }
  gp_tp_rows_destroy(r);
  if (rc < 0)
    return cli_error(CLI_BAD_INPUT, "export: %s", err.message);
  return 0;
}
