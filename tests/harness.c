/*
 * harness.c - the test runner.
 *
 *   gpuperf-tests [-j N] [-v] [--list] [--timeout-scale X] [PATTERN...]
 *
 * Runs every test of test-list.h (or those whose name matches one of the
 * glob PATTERNs) each in a forked process with its own temporary directory
 * and a timeout, N at a time (default: the number of CPUs). A test passes
 * if its process exits 0, skips with status 77, and fails otherwise
 * (assertion, crash, sanitizer report, timeout). The output of failed and
 * skipped tests is shown; -v shows all. Exit status: 0 if nothing failed.
 */
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

typedef struct test_def {
  const char *name;
  void (*fn)(void);
  int timeout_s;
} test_def;

static const test_def tests[] = {
#define GP_TEST_ENTRY(name, timeout_s) {#name, test_##name, timeout_s},
#include "test-list.h"
#undef GP_TEST_ENTRY
};
#define NUM_TESTS (sizeof(tests) / sizeof(tests[0]))

static char tmpdir[256];
static char paths[4][512];

/* See harness.h. */
void gp_test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(NULL);
  _exit(1);
}

/* See harness.h. */
void gp_test_skip(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "skip: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(NULL);
  _exit(GP_TEST_SKIP_STATUS);
}

/* See harness.h. */
const char *gp_test_tmpdir(void) {
  return tmpdir;
}

/* See harness.h. */
const char *gp_test_path(int slot, const char *name) {
  snprintf(paths[slot & 3], sizeof(paths[0]), "%s/%s", tmpdir, name);
  return paths[slot & 3];
}

typedef struct running {
  pid_t pid;
  size_t index;
  double started;
  FILE *out;
  char dir[256];
} running;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void print_output(FILE *out, const char *indent) {
  char line[1024];
  rewind(out);
  while (fgets(line, sizeof(line), out))
    printf("%s%s%s", indent, line, line[strlen(line) - 1] == '\n' ? "" : "\n");
}

static bool selected(const char *name, int npat, char **pats) {
  if (npat == 0)
    return true;
  for (int i = 0; i < npat; i++)
    if (fnmatch(pats[i], name, 0) == 0 || strcmp(pats[i], name) == 0)
      return true;
  return false;
}

static pid_t start_test(size_t i, running *r) {
  r->out = tmpfile();
  if (!r->out)
    return -1;
  snprintf(r->dir, sizeof(r->dir), "/tmp/gpuperf-test-XXXXXX");
  if (!mkdtemp(r->dir))
    return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    int fd = fileno(r->out);
    dup2(fd, 1);
    dup2(fd, 2);
    snprintf(tmpdir, sizeof(tmpdir), "%s", r->dir);
    setvbuf(stdout, NULL, _IOLBF, 0);
    tests[i].fn();
    fflush(NULL);
    _exit(0);
  }
  r->pid = pid;
  r->index = i;
  r->started = now_s();
  return pid;
}

int main(int argc, char **argv) {
  long jobs = sysconf(_SC_NPROCESSORS_ONLN);
  double scale = 1.0;
  bool verbose = false;
  int npat = 0;
  char **pats = calloc((size_t)argc, sizeof(char *));
  const char *env_scale = getenv("GPUPERF_TEST_TIMEOUT_SCALE");
  if (env_scale)
    scale = atof(env_scale);
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--list") == 0) {
      for (size_t i = 0; i < NUM_TESTS; i++)
        printf("%s\n", tests[i].name);
      free(pats);
      return 0;
    } else if (strcmp(argv[a], "-j") == 0 && a + 1 < argc) {
      jobs = atol(argv[++a]);
    } else if (strcmp(argv[a], "-v") == 0) {
      verbose = true;
    } else if (strcmp(argv[a], "--timeout-scale") == 0 && a + 1 < argc) {
      scale = atof(argv[++a]);
    } else if (argv[a][0] == '-') {
      fprintf(stderr,
              "usage: %s [-j N] [-v] [--list] [--timeout-scale X] "
              "[PATTERN...]\n",
              argv[0]);
      return 1;
    } else {
      pats[npat++] = argv[a];
    }
  }
  if (jobs < 1)
    jobs = 1;
  if (scale <= 0)
    scale = 1.0;

  size_t todo[NUM_TESTS], ntodo = 0;
  for (size_t i = 0; i < NUM_TESTS; i++)
    if (selected(tests[i].name, npat, pats))
      todo[ntodo++] = i;
  if (ntodo == 0) {
    fprintf(stderr, "no test matches\n");
    return 1;
  }

  running *run = calloc((size_t)jobs, sizeof(*run));
  int passed = 0, failed = 0, skipped = 0;
  size_t next = 0, active = 0;
  double t0 = now_s();
  while (next < ntodo || active > 0) {
    while (next < ntodo && active < (size_t)jobs) {
      size_t slot;
      for (slot = 0; run[slot].pid != 0; slot++) {
      }
      if (start_test(todo[next], &run[slot]) < 0) {
        perror("gpuperf-tests: cannot start test");
        return 1;
      }
      next++;
      active++;
    }
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      double now = now_s();
      for (long s = 0; s < jobs; s++) {
        running *r = &run[s];
        if (r->pid && now - r->started > tests[r->index].timeout_s * scale) {
          kill(-r->pid, SIGKILL);
          kill(r->pid, SIGKILL);
        }
      }
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
      continue;
    }
    long s;
    for (s = 0; s < jobs && run[s].pid != pid; s++) {
    }
    if (s == jobs)
      continue; /* a grandchild we do not track */
    running *r = &run[s];
    const test_def *t = &tests[r->index];
    double ms = (now_s() - r->started) * 1000.0;
    bool timed_out = ms / 1000.0 > t->timeout_s * scale;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      passed++;
      printf("PASS  %-48s %8.0f ms\n", t->name, ms);
      if (verbose)
        print_output(r->out, "      ");
      nftw(r->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    } else if (WIFEXITED(status) &&
               WEXITSTATUS(status) == GP_TEST_SKIP_STATUS) {
      skipped++;
      printf("SKIP  %-48s\n", t->name);
      print_output(r->out, "      ");
      nftw(r->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    } else {
      failed++;
      if (timed_out)
        printf("FAIL  %-48s timed out after %d s\n", t->name,
               (int)(t->timeout_s * scale));
      else if (WIFSIGNALED(status))
        printf("FAIL  %-48s killed by signal %d\n", t->name, WTERMSIG(status));
      else
        printf("FAIL  %-48s exit status %d\n", t->name, WEXITSTATUS(status));
      print_output(r->out, "      ");
      printf("      (files kept in %s)\n", r->dir);
    }
    fflush(stdout);
    fclose(r->out);
    memset(r, 0, sizeof(*r));
    active--;
  }
  printf("\n%d passed, %d failed, %d skipped (%.1f s)\n", passed, failed,
         skipped, now_s() - t0);
  free(run);
  free(pats);
  return failed ? 1 : 0;
}
