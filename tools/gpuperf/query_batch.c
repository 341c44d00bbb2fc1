/*
 * query_batch.c - `gpuperf query 'runs/\*.pftrace' -f q.sql`: the same SQL
 * on many traces at once, like Perfetto's batch trace processor.
 *
 * The traces named by the glob (sorted) are imported and queried by -j
 * worker threads (default: one per online CPU), each with its own trace
 * processor. The rows come back as one result whose first column,
 * `trace`, names the file, in the glob's order whatever order the
 * workers finish in. Progress goes to stderr, one line per trace. A
 * trace that fails (not a trace, SQL error on its tables) is named there;
 * without --keep-going the batch stops at the first failure and prints
 * nothing else, with it the others still answer. Exit status 2 whenever
 * one failed.
 *
 * File names and trace strings are shown as a single trace's query shows
 * them: progress lines always, and the table and CSV on a terminal,
 * escaped (gp_tp_put_escaped); JSON by gp_tp_put_json_string and
 * gp_tp_put_json_number (non-finite numbers as null).
 */
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gpuperf/tp.h"
#include "report.h"

typedef struct cell {
  gp_tp_type type;
  int64_t i;
  double d;
  char *s;
} cell;

typedef struct job {
  const char *path;
  int ncols;
  char **names;
  cell *cells; /* nrows * ncols */
  size_t nrows, cap;
  char *error; /* NULL on success */
  double secs;
  int done;
} job;

typedef struct batch {
  job *jobs;
  size_t njobs, next, finished;
  const char *sql;
  bool keep_going, quiet, stop;
  pthread_mutex_t lock;
} batch;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

static char *fail(job *j, const char *msg) {
  j->error = dupstr(msg ? msg : "out of memory");
  return j->error;
}

/* Imports one trace and keeps the rows of the query. */
static void run_job(job *j, const char *sql) {
  double t0 = now_s();
  gp_tp *tp = NULL;
  gp_tp_rows *rows = NULL;
  gp_tp_error err;
  int rc;
  if (gp_tp_open(j->path, NULL, &tp, &err) != 0) {
    fail(j, err.message);
    goto out;
  }
  if (gp_tp_query(tp, sql, &rows, &err) != 0) {
    fail(j, err.message);
    goto out;
  }
  j->ncols = gp_tp_rows_columns(rows);
  j->names = calloc((size_t)j->ncols + 1, sizeof(char *));
  for (int c = 0; j->names && c < j->ncols; c++)
    j->names[c] = dupstr(gp_tp_rows_name(rows, c));
  while ((rc = gp_tp_rows_next(rows, &err)) == 1) {
    if (j->nrows == j->cap) {
      size_t nc = j->cap ? j->cap * 2 : 64;
      cell *p = realloc(j->cells, nc * (size_t)j->ncols * sizeof(cell));
      if (!p) {
        fail(j, NULL);
        goto out;
      }
      j->cells = p;
      j->cap = nc;
    }
    cell *row = &j->cells[j->nrows++ * (size_t)j->ncols];
    for (int c = 0; c < j->ncols; c++) {
      cell *x = &row[c];
      memset(x, 0, sizeof(*x));
      x->type = gp_tp_rows_type(rows, c);
      if (x->type == GP_TP_INT)
        x->i = gp_tp_rows_int(rows, c);
      else if (x->type == GP_TP_REAL)
        x->d = gp_tp_rows_real(rows, c);
      else if (x->type == GP_TP_TEXT)
        x->s = dupstr(gp_tp_rows_text(rows, c));
      else if (x->type == GP_TP_BLOB)
        x->type = GP_TP_NULL;
    }
  }
  if (rc < 0)
    fail(j, err.message);
out:
  gp_tp_rows_destroy(rows);
  gp_tp_close(tp);
  j->secs = now_s() - t0;
}

/* The job's error, led by its path (the importer's messages have it). */
static const char *named_error(job *j) {
  size_t n = strlen(j->path);
  if (strncmp(j->error, j->path, n) == 0 && j->error[n] == ':')
    return j->error;
  char *m = malloc(n + strlen(j->error) + 3);
  if (m) {
    sprintf(m, "%s: %s", j->path, j->error);
    free(j->error);
    j->error = m;
  }
  return j->error;
}

static void *worker(void *arg) {
  batch *b = arg;
  for (;;) {
    pthread_mutex_lock(&b->lock);
    if (b->stop || b->next == b->njobs) {
      pthread_mutex_unlock(&b->lock);
      return NULL;
    }
    job *j = &b->jobs[b->next++];
    pthread_mutex_unlock(&b->lock);
    run_job(j, b->sql);
    pthread_mutex_lock(&b->lock);
    j->done = 1;
    b->finished++;
    if (j->error && !b->keep_going)
      b->stop = true;
    if (!b->quiet) {
      /* A file name or a trace string cannot drive the terminal. */
      if (j->error) {
        fprintf(stderr, "[%zu/%zu] FAILED ", b->finished, b->njobs);
        gp_tp_put_escaped(stderr, named_error(j));
      } else {
        fprintf(stderr, "[%zu/%zu] ", b->finished, b->njobs);
        gp_tp_put_escaped(stderr, j->path);
        fprintf(stderr, ": %zu row%s in %.2f s", j->nrows,
                j->nrows == 1 ? "" : "s", j->secs);
      }
      fputc('\n', stderr);
    }
    pthread_mutex_unlock(&b->lock);
  }
}

/* ------------------------------------------------------------------ */
/* Output                                                               */

static void cell_text(const cell *x, bool csv, char *buf, size_t size,
                      const char **out) {
  switch (x->type) {
  case GP_TP_INT:
    snprintf(buf, size, "%lld", (long long)x->i);
    *out = buf;
    break;
  case GP_TP_REAL:
    snprintf(buf, size, csv ? "%f" : "%g", x->d);
    *out = buf;
    break;
  case GP_TP_TEXT:
    *out = x->s ? x->s : "";
    break;
  default:
    *out = csv ? "[NULL]" : "NULL";
    break;
  }
}

static void write_csv(FILE *f, const batch *b, const job *h, bool escape) {
  report_put_csv_str(f, "trace", escape);
  for (int c = 0; c < h->ncols; c++) {
    fputc(',', f);
    report_put_csv_str(f, h->names[c], escape);
  }
  fputc('\n', f);
  char buf[64];
  for (size_t k = 0; k < b->njobs; k++) {
    const job *j = &b->jobs[k];
    for (size_t r = 0; !j->error && r < j->nrows; r++) {
      report_put_csv_str(f, j->path, escape);
      for (int c = 0; c < j->ncols; c++) {
        const cell *x = &j->cells[r * (size_t)j->ncols + c];
        const char *t;
        cell_text(x, true, buf, sizeof(buf), &t);
        fputc(',', f);
        if (x->type == GP_TP_TEXT)
          report_put_csv_str(f, t, escape);
        else
          fputs(t, f);
      }
      fputc('\n', f);
    }
  }
}

static void write_json(FILE *f, const batch *b, const job *h) {
  fputs("[", f);
  bool first = true;
  char buf[64];
  for (size_t k = 0; k < b->njobs; k++) {
    const job *j = &b->jobs[k];
    for (size_t r = 0; !j->error && r < j->nrows; r++) {
      fputs(first ? "\n  {" : ",\n  {", f);
      first = false;
      fputs("\"trace\": ", f);
      gp_tp_put_json_string(f, j->path);
      for (int c = 0; c < j->ncols; c++) {
        const cell *x = &j->cells[r * (size_t)j->ncols + c];
        const char *t;
        cell_text(x, false, buf, sizeof(buf), &t);
        fputs(", ", f);
        gp_tp_put_json_string(f, h->names[c]);
        fputs(": ", f);
        if (x->type == GP_TP_TEXT)
          gp_tp_put_json_string(f, t);
        else if (x->type == GP_TP_REAL)
          gp_tp_put_json_number(f, x->d);
        else if (x->type == GP_TP_NULL)
          fputs("null", f);
        else
          fputs(t, f);
      }
      fputc('}', f);
    }
  }
  fputs(first ? "]\n" : "\n]\n", f);
}

/* s as the table shows it (escaped for a terminal): malloc'ed, or NULL
 * if memory runs out. */
static char *shown(const char *s, bool escape) {
  if (!escape)
    return strdup(s);
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m)
    return NULL;
  gp_tp_put_escaped(m, s);
  if (fclose(m) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

static size_t shown_len(const char *s, bool escape) {
  char *t = shown(s, escape);
  size_t n = t ? strlen(t) : 1;
  free(t);
  return n;
}

static void pad(FILE *f, const char *s, size_t w, bool escape) {
  char *t = shown(s, escape);
  fputs(t ? t : "?", f);
  for (size_t n = t ? strlen(t) : 1; n < w; n++)
    fputc(' ', f);
  free(t);
}

static int write_table(FILE *f, const batch *b, const job *h, bool escape) {
  size_t *w = calloc((size_t)h->ncols + 1, sizeof(size_t));
  if (!w)
    return -1;
  char buf[64];
  w[0] = strlen("trace");
  for (int c = 0; c < h->ncols; c++)
    w[c + 1] = shown_len(h->names[c], escape);
  for (size_t k = 0; k < b->njobs; k++) {
    const job *j = &b->jobs[k];
    size_t pl = j->error ? 0 : shown_len(j->path, escape);
    for (size_t r = 0; !j->error && r < j->nrows; r++) {
      if (pl > w[0])
        w[0] = pl;
      for (int c = 0; c < j->ncols; c++) {
        const char *t;
        cell_text(&j->cells[r * (size_t)j->ncols + c], false, buf, sizeof(buf),
                  &t);
        size_t l = shown_len(t, escape);
        if (l > w[c + 1])
          w[c + 1] = l;
      }
    }
  }
  pad(f, "trace", w[0], escape);
  for (int c = 0; c < h->ncols; c++) {
    fputs("  ", f);
    pad(f, h->names[c], w[c + 1], escape);
  }
  fputc('\n', f);
  for (int c = 0; c <= h->ncols; c++) {
    if (c)
      fputs("  ", f);
    for (size_t n = 0; n < w[c]; n++)
      fputc('-', f);
  }
  fputc('\n', f);
  for (size_t k = 0; k < b->njobs; k++) {
    const job *j = &b->jobs[k];
    for (size_t r = 0; !j->error && r < j->nrows; r++) {
      pad(f, j->path, w[0], escape);
      for (int c = 0; c < j->ncols; c++) {
        const char *t;
        cell_text(&j->cells[r * (size_t)j->ncols + c], false, buf, sizeof(buf),
                  &t);
        fputs("  ", f);
        pad(f, t, w[c + 1], escape);
      }
      fputc('\n', f);
    }
  }
  free(w);
  return 0;
}

static void free_job(job *j) {
  for (size_t r = 0; r < j->nrows; r++)
    for (int c = 0; c < j->ncols; c++)
      free(j->cells[r * (size_t)j->ncols + c].s);
  for (int c = 0; j->names && c < j->ncols; c++)
    free(j->names[c]);
  free(j->names);
  free(j->cells);
  free(j->error);
}

/* The traces of a batch must answer with the same columns. */
static const job *check_columns(batch *b) {
  const job *h = NULL;
  for (size_t k = 0; k < b->njobs; k++) {
    job *j = &b->jobs[k];
    if (!j->done || j->error)
      continue;
    if (!h) {
      h = j;
      continue;
    }
    bool same = j->ncols == h->ncols;
    for (int c = 0; same && c < j->ncols; c++)
      same = strcmp(j->names[c], h->names[c]) == 0;
    if (!same) {
      fail(j, "its result has other columns than the first trace's");
      fputs("FAILED ", stderr);
      gp_tp_put_escaped(stderr, named_error(j));
      fputc('\n', stderr);
    }
  }
  return h;
}

/* See cli.h. */
int cli_query_batch(const char *pattern, const char *sql, int format,
                    unsigned jobs, bool keep_going, bool quiet) {
  glob_t g;
  memset(&g, 0, sizeof(g));
  int grc = glob(pattern, 0, NULL, &g);
  if (grc == GLOB_NOMATCH || (grc == 0 && g.gl_pathc == 0)) {
    globfree(&g);
    return cli_error(CLI_BAD_INPUT, "%s: no trace matches", pattern);
  }
  if (grc != 0) {
    globfree(&g);
    return cli_error(CLI_BAD_INPUT, "%s: cannot expand the pattern", pattern);
  }
  batch b;
  memset(&b, 0, sizeof(b));
  b.njobs = g.gl_pathc;
  b.sql = sql;
  b.keep_going = keep_going;
  b.quiet = quiet;
  b.jobs = calloc(b.njobs, sizeof(job));
  if (!b.jobs) {
    globfree(&g);
    return cli_error(CLI_BAD_INPUT, "out of memory");
  }
  for (size_t k = 0; k < b.njobs; k++)
    b.jobs[k].path = g.gl_pathv[k];
  if (jobs == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    jobs = n > 0 ? (unsigned)n : 1;
  }
  if (jobs > b.njobs)
    jobs = (unsigned)b.njobs;
  pthread_mutex_init(&b.lock, NULL);
  pthread_t *th = calloc(jobs, sizeof(pthread_t));
  unsigned started = 0;
  double t0 = now_s();
  for (; th && started < jobs; started++)
    if (pthread_create(&th[started], NULL, worker, &b) != 0)
      break;
  if (started == 0)
    worker(&b); /* no thread could start: do it here */
  for (unsigned i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  free(th);
  double secs = now_s() - t0;
  const job *h = check_columns(&b), *first_fail = NULL;
  size_t failed = 0;
  for (size_t k = 0; k < b.njobs; k++)
    if (b.jobs[k].error && failed++ == 0)
      first_fail = &b.jobs[k];
  int status = CLI_OK;
  if (failed && !keep_going) {
    status = cli_error(CLI_BAD_INPUT,
                       "%s (use --keep-going to query the other traces "
                       "anyway)",
                       named_error((job *)first_fail));
  } else if (h) {
    bool escape = isatty(STDOUT_FILENO);
    if (format == GP_TP_FORMAT_CSV)
      write_csv(stdout, &b, h, escape);
    else if (format == GP_TP_FORMAT_JSON)
      write_json(stdout, &b, h);
    else
      write_table(stdout, &b, h, escape);
    if (fflush(stdout) != 0)
      status =
          cli_error(CLI_BAD_INPUT, "writing the result: %s", strerror(errno));
  }
  if (!quiet)
    fprintf(stderr, "%zu trace%s, %zu failed, %u worker%s, %.2f s\n", b.njobs,
            b.njobs == 1 ? "" : "s", failed, jobs, jobs == 1 ? "" : "s", secs);
  if (failed && status == CLI_OK)
    status = CLI_BAD_INPUT;
  for (size_t k = 0; k < b.njobs; k++)
    free_job(&b.jobs[k]);
  free(b.jobs);
  pthread_mutex_destroy(&b.lock);
  globfree(&g);
  return status;
}

/* See cli.h. */
bool cli_query_is_batch(const char *trace, bool batch_option) {
  if (batch_option)
    return true;
  return trace && strpbrk(trace, "*?[") && access(trace, F_OK) != 0;
}
