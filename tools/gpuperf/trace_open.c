/*
 * trace_open.c - how report, export and diff open a trace: the default
 * file, standard input, devices and pipes, the clear one-line errors for
 * what is not a Perfetto trace (empty, JSON, cut short), and a progress
 * line on a terminal when reading a trace (the import and the command's
 * queries on it) takes more than a second: named after its phase
 * (reading, summarising, writing), with the percent done and the time
 * left where the phase knows how much it has to do.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "trace_open.h"

/* What a stream may hold at most: half the machine's memory. */
static size_t stream_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return (size_t)1 << 32;
  return (size_t)pages / 2 * (size_t)page;
}

/* Whether the first byte can start a trace: a Trace's packet field (tag
 * 0x0a), or the JSON that looks_json() names (a byte order mark, space, a
 * brace or bracket). */
static bool may_start_trace(unsigned char c) {
  return c == 0x0a || c == 0xef || c == ' ' || c == '\n' || c == '\r' ||
         c == '\t' || c == '{' || c == '[';
}

/* Reads all of f (malloc'ed); NULL on error with errno set: EILSEQ when
 * its first byte cannot start a trace (/dev/zero, a binary that is not
 * one: said at once, not after reading it all), EFBIG past
 * stream_limit(). */
static char *slurp(FILE *f, size_t *size) {
  size_t n = 0, cap = 1 << 16, limit = stream_limit();
  char *buf = malloc(cap);
  while (buf) {
    if (n > 0 && !may_start_trace((unsigned char)buf[0])) {
      free(buf);
      errno = EILSEQ;
      return NULL;
    }
    if (n >= limit) {
      free(buf);
      errno = EFBIG;
      return NULL;
    }
    if (n == cap) {
      char *p = realloc(buf, cap * 2);
      if (!p) {
        free(buf);
        errno = ENOMEM;
        return NULL;
      }
      buf = p;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  if (buf && ferror(f)) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  *size = n;
  return buf;
}

/* Whether the first bytes look like JSON (Chrome's trace-event format or
 * a JSON array of events) rather than protobuf. */
static bool looks_json(const unsigned char *p, size_t n) {
  size_t i = 0;
  if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
    i = 3; /* a UTF-8 byte order mark */
  while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
    i++;
  return i < n && (p[i] == '{' || p[i] == '[');
}

/* ------------------------------------------------------------------ */
/* Progress: a thread that speaks up after a second on a terminal        */

typedef struct progress {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool running, done, printed;
  long first_ms;         /* when the line first appears */
  struct timespec start; /* when the trace was opened (CLOCK_MONOTONIC) */
  char name[256];
  double mib;
  const char *phase;      /* "reading", "summarising", "writing" */
  uint64_t total;         /* the phase's units of work, 0: not known */
  uint64_t steps;         /* done so far (atomic: the writer adds) */
  struct timespec phase0; /* when the phase began (CLOCK_MONOTONIC) */
  int shown_pct;          /* the percent last shown by trace_progress_tp */
} progress;

/* One trace is read at a time; diff reads its two one after the other. */
static progress the_progress;

static double since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) +
         (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The line: the phase and the trace, then its percent and the time left
 * where the phase knows its total (from the rate so far), else the
 * seconds it has taken. \x1b[K clears what a longer line left. */
static void progress_line(progress *p) {
  fprintf(stderr, "\rgpuperf: %s ", p->phase);
  gp_tp_put_escaped(stderr, p->name);
  double t = since(&p->phase0);
  uint64_t done = __atomic_load_n(&p->steps, __ATOMIC_RELAXED);
  if (p->total && done) {
    double f = done >= p->total ? 1 : (double)done / (double)p->total;
    fprintf(stderr, ": %.0f%%, %.0f s left\x1b[K", 100 * f,
            ceil(t * (1 - f) / f));
  } else {
    fprintf(stderr, " (%.1f MiB)... %.0f s\x1b[K", p->mib, t);
  }
  p->printed = true;
}

/* Whether the line is up, or due: the command has run past the delay
 * before it appears. */
static bool progress_due(const progress *p) {
  return p->printed || since(&p->start) * 1000 >= (double)p->first_ms;
}

/* See trace_open.h. */
void trace_progress_phase(const char *phase, uint64_t total) {
  progress *p = &the_progress;
  if (!p->running)
    return;
  pthread_mutex_lock(&p->mu);
  p->phase = phase;
  p->total = total;
  __atomic_store_n(&p->steps, 0, __ATOMIC_RELAXED);
  clock_gettime(CLOCK_MONOTONIC, &p->phase0);
  /* Shown at once once the line is up (by the caller: not left to the
   * thread's next turn). */
  if (progress_due(p))
    progress_line(p);
  pthread_mutex_unlock(&p->mu);
}

/* See trace_open.h. */
void trace_progress_step(uint64_t n) {
  if (the_progress.running)
    __atomic_fetch_add(&the_progress.steps, n, __ATOMIC_RELAXED);
}

/* See trace_open.h. */
void trace_progress_end(void) {
  progress *p = &the_progress;
  if (!p->running)
    return;
  pthread_mutex_lock(&p->mu);
  p->done = true;
  if (progress_due(p)) { /* the last state, then done */
    progress_line(p);
    fputs(" done\n", stderr);
  }
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  p->running = false;
}

/* See trace_open.h. */
void trace_progress_tp(void *user, const char *phase, uint64_t done,
                       uint64_t total) {
  (void)user;
  progress *p = &the_progress;
  if (!p->running)
    return;
  pthread_mutex_lock(&p->mu);
  const char *name =
      strcmp(phase, "saving") == 0 ? "saving the tables of" : "reading";
  if (p->phase != name || p->total != total) {
    p->phase = name;
    p->total = total;
    p->shown_pct = -1;
    clock_gettime(CLOCK_MONOTONIC, &p->phase0);
  }
  __atomic_store_n(&p->steps, done, __ATOMIC_RELAXED);
  /* Once the line is up, each new percent is shown as it comes. */
  int pct = total ? (int)(done >= total ? 100 : done * 100 / total) : -1;
  if (pct > p->shown_pct && done && progress_due(p)) {
    progress_line(p);
    p->shown_pct = pct;
  }
  pthread_mutex_unlock(&p->mu);
}

static void *progress_main(void *arg) {
  progress *p = arg;
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  pthread_mutex_lock(&p->mu);
  for (long wait = p->first_ms; !p->done; wait = 500) {
    dl.tv_nsec += (wait % 1000) * 1000000;
    dl.tv_sec += wait / 1000 + dl.tv_nsec / 1000000000;
    dl.tv_nsec %= 1000000000;
    while (!p->done && pthread_cond_timedwait(&p->cv, &p->mu, &dl) == 0)
      ;
    if (!p->done)
      progress_line(p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* See trace_open.h. */
void trace_progress_start(const char *name, uint64_t size) {
  progress *p = &the_progress;
  trace_progress_end();
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof(p->name), "%s", name);
  p->mib = (double)size / (1 << 20);
  p->phase = "reading";
  clock_gettime(CLOCK_MONOTONIC, &p->phase0);
  p->start = p->phase0;
  /* GPUPERF_PROGRESS_AFTER_MS: when the line first appears (tests). */
  const char *after = getenv("GPUPERF_PROGRESS_AFTER_MS");
  p->first_ms = after ? atol(after) : 1000;
  if (p->first_ms < 0)
    p->first_ms = 0;
  if (isatty(2) && !getenv("GPUPERF_NO_PROGRESS")) {
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->running = pthread_create(&p->thread, NULL, progress_main, p) == 0;
    if (!p->running) {
      pthread_mutex_destroy(&p->mu);
      pthread_cond_destroy(&p->cv);
    }
  }
}

/* See trace_open.h. */
int trace_open(const char *cmd, const char *path, uint32_t flags,
               const char *db, gp_tp **out) {
  struct stat st;
  bool dflt = !path;
  if (dflt)
    path = TRACE_DEFAULT;
  bool in = strcmp(path, "-") == 0;
  if (!in && stat(path, &st) != 0) {
    if (dflt)
      return cli_error(CLI_USAGE,
                       "%s: no trace named and no %s here (name a file, or "
                       "make one with gpuperf record)",
                       cmd, TRACE_DEFAULT);
    return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(errno));
  }
  if (!in && S_ISDIR(st.st_mode))
    return cli_error(CLI_BAD_INPUT, "%s: is a directory, not a trace", path);
  char *data = NULL;
  size_t size = 0;
  unsigned char head[64];
  size_t nhead = 0;
  if (in || !S_ISREG(st.st_mode)) {
    /* stdin, a pipe or a device: read it whole, it cannot be re-read. */
    FILE *f = in ? stdin : fopen(path, "rb");
    if (!f)
      return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(errno));
    data = slurp(f, &size);
    int e = errno;
    if (!in)
      fclose(f);
    if (!data && e == EILSEQ)
      return cli_error(CLI_BAD_INPUT,
                       "%s: not a Perfetto trace (its first byte cannot start "
                       "one)",
                       in ? "standard input" : path);
    if (!data && e == EFBIG)
      return cli_error(CLI_BAD_INPUT,
                       "%s: more than %zu MiB from a stream, half this "
                       "machine's memory: write it to a file and open that",
                       in ? "standard input" : path, stream_limit() >> 20);
    if (!data)
      return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(e));
    nhead = size < sizeof(head) ? size : sizeof(head);
    memcpy(head, data, nhead);
  } else {
    size = (size_t)st.st_size;
    FILE *f = fopen(path, "rb");
    if (!f)
      return cli_error(CLI_BAD_INPUT, "%s: %s", path, strerror(errno));
    nhead = fread(head, 1, sizeof(head), f);
    fclose(f);
  }
  const char *name = in ? "standard input" : path;
  if (size == 0) {
    free(data);
    return cli_error(CLI_BAD_INPUT, "%s: empty, not a trace", name);
  }
  if (looks_json(head, nhead)) {
    free(data);
    return cli_error(CLI_BAD_INPUT,
                     "%s: a JSON trace (Chrome trace-event format), not a "
                     "Perfetto protobuf trace: open it in ui.perfetto.dev",
                     name);
  }
  trace_progress_start(name, size);
  gp_tp_options opts = {.size = sizeof(opts),
                        .flags = flags,
                        .db_path = data ? NULL : db,
                        .progress = trace_progress_tp};
  gp_tp_error err;
  int rc = data ? gp_tp_open_buffer(data, size, name, &opts, out, &err)
                : gp_tp_open(path, &opts, out, &err);
  free(data);
  if (rc == 0)
    return 0;
  trace_progress_end();
  bool cut = rc == GP_ECORRUPT && !(flags & GP_TP_ALLOW_TRUNCATED) &&
             (strstr(err.message, "past the end") ||
              strstr(err.message, "truncated")) &&
             !strstr(err.message, "--allow-truncated");
  return cli_error(CLI_BAD_INPUT, "%s%s", err.message,
                   cut ? " (cut short? --allow-truncated reads what is "
                         "complete)"
                       : "");
}

/* See trace_open.h. */
bool trace_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
    return false;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
