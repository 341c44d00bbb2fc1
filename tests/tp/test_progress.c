/*
 * test_progress.c - the progress line of `query` (and, through the same
 * code, report and export) on a terminal: the import's percent and time
 * left, the database's while it is saved, the query's seconds; nothing
 * when stderr is not a terminal or with -q. GPUPERF_PROGRESS_AFTER_MS=0
 * puts the line up at once, so no assertion depends on the machine's
 * speed: each percent the import reaches is shown as it comes.
 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

/* Runs the CLI with stderr on a pseudo-terminal (tty) or a pipe and
 * stdout into out_path; returns what it wrote on stderr. */
static char *cli_stderr(bool tty, const char *out_path, char *const argv[]) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set to the gpuperf binary (run via make test)");
  int m = -1, pfd[2] = {-1, -1};
  const char *sname = NULL;
  if (tty) {
    m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
      SKIP("no pseudo-terminal available here");
    sname = ptsname(m);
    ASSERT_NOT_NULL(sname);
  } else {
    ASSERT_EQ(pipe(pfd), 0);
    m = pfd[0];
  }
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int e = tty ? open(sname, O_RDWR | O_NOCTTY) : pfd[1];
    int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (e < 0 || o < 0)
      _exit(126);
    dup2(e, 2);
    dup2(o, 1);
    setenv("GPUPERF_PROGRESS_AFTER_MS", "0", 1);
    unsetenv("GPUPERF_NO_PROGRESS");
    char *args[16];
    int n = 0;
    args[n++] = (char *)cli;
    for (int i = 0; argv[i] && n < 15; i++)
      args[n++] = argv[i];
    args[n] = NULL;
    execv(cli, args);
    _exit(127);
  }
  if (!tty)
    close(pfd[1]);
  size_t n = 0, cap = 1 << 20;
  char *buf = calloc(1, cap);
  ASSERT_NOT_NULL(buf);
  int st;
  for (;;) {
    ssize_t got = read(m, buf + n, cap - 1 - n);
    if (got > 0 && n + (size_t)got < cap - 1) {
      n += (size_t)got;
      continue;
    }
    if (got == 0 || got < 0) /* EOF, or EIO: the child closed the tty */
      break;
  }
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(m);
  buf[n] = '\0';
  return buf;
}

/* Checks the percents of the lines of phase in err: at least two, none
 * above 100, never going back, each with its time left. Returns how many. */
static int percents(const char *err, const char *phase) {
  int count = 0, last = -1;
  for (const char *p = err; (p = strstr(p, phase)) != NULL; p++) {
    const char *eol = strpbrk(p, "\r\n");
    const char *colon = strstr(p, ": ");
    if (!colon || (eol && colon > eol))
      continue;
    int pct = -1, left = -1;
    if (sscanf(colon, ": %d%%, %d s left", &pct, &left) != 2)
      continue;
    ASSERT(pct >= 0 && pct <= 100 && left >= 0);
    ASSERT(pct >= last);
    last = pct;
    count++;
  }
  ASSERT(count >= 2);
  return count;
}

TEST(tp_progress_percent_and_time_left) {
  const char *trace = gp_test_path(0, "t.pftrace");
  const char *out = gp_test_path(1, "out.csv");
  const char *db = gp_test_path(2, "t.db");
  char *o, *e;
  /* Some 5.5 MiB: more than one step of the framing's progress. */
  ASSERT_EQ(tp_cli(&o, &e, "demo", "-q", "--steps", "1000", "-o", trace, NULL),
            0);
  free(o);
  free(e);
  char *want = NULL;
  ASSERT_EQ(tp_cli(&want, &e, "query", trace, "SELECT count(*) FROM slice",
                   "--format", "csv", NULL),
            0);
  free(e);

  /* The import, then the query's seconds (the result goes to a file). */
  char *q[] = {"query",    (char *)trace, "SELECT count(*) FROM slice",
               "--format", "csv",         NULL};
  char *err = cli_stderr(true, out, q);
  percents(err, "reading ");
  ASSERT(strstr(err, "querying ") != NULL);
  ASSERT(strstr(err, " done") != NULL);
  size_t size;
  char *got = tp_read_file(out, &size);
  ASSERT_STR_EQ(got, want); /* the answer is the same with the line */
  free(got);
  free(err);

  /* Saving a --db: its own phase, in percent. */
  char *qd[] = {"query", (char *)trace, "SELECT 1", "--db", (char *)db, NULL};
  err = cli_stderr(true, out, qd);
  percents(err, "reading ");
  percents(err, "saving the tables of ");
  free(err);
  ASSERT_EQ(access(db, F_OK), 0);

  /* Not a terminal, or -q: nothing on stderr at all. */
  err = cli_stderr(false, out, q);
  ASSERT_STR_EQ(err, "");
  free(err);
  char *qq[] = {"query", (char *)trace, "SELECT 1", "-q", NULL};
  err = cli_stderr(true, out, qq);
  ASSERT(strstr(err, "reading") == NULL);
  free(err);
  free(want);
}
