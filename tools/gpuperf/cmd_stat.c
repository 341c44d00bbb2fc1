/*
 * cmd_stat.c - `gpuperf stat [-e COUNTERS] -- CMD ARGS...`: runs a program
 * that drives GPUs through libgpuperf and prints its counter totals,
 * overall and per kernel, and the host CPU counters of the process tree,
 * as `perf stat` does for CPU events.
 *
 * The measuring happens inside the program: stat validates the counter
 * names against the devices it sees, makes a private directory, and runs
 * CMD with GPUPERF_STAT_DIR, GPUPERF_STAT_EVENTS and GPUPERF_STAT_PERIOD_NS
 * in its environment and libgpuperf preloaded. The library's start-up hook
 * in every process of the tree counts and, at exit, writes DIR/stat.PID
 * (format in src/session/stat.c and docs/counters.md); stat merges those
 * files by device and counter name and prints them. It exits with CMD's
 * status (128 + N if CMD died of signal N, 127 if it could not run).
 *
 * A run that crashed (CMD killed by a signal, or no process of it left a
 * file) is reported on stderr and its counts are left out of the figures
 * of -r N; gpuperf then exits with that run's status (1 for a run that
 * left no counts). A single run that crashed still shows what it counted,
 * headed as partial.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_record.h"
#include "cli_stat.h"

#define MAX_EVENTS 64

stat_row stat_rows[MAX_ROWS];
size_t stat_nrows;
/* The run being read: files, processes, processes that died of a signal. */
static int run_files, run_procs, run_dying;
int stat_max_procs; /* the most processes a counted run had */

/* How the totals are printed: perf stat's text, -x SEP, or --json. */
const char *stat_sep;
bool stat_json;
int stat_repeats = 1;
int stat_counted;

static void stat_usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf stat [-e COUNTERS] [-o FILE] [--period NS] [-r N]\n"
          "                    [-x SEP | --json] [--wait] -- CMD [ARGS...]\n\n"
          "Runs CMD and prints the totals of GPU counters (per device and\n"
          "per kernel; Utilization on every device it used; submits and\n"
          "render stages on Vulkan devices) and of the host CPU's\n"
          "perf_event counters. CMD is a program that drives GPUs through\n"
          "libgpuperf (the simulated GPUs), OpenCL, OpenGL or Vulkan;\n"
          "libgpuperf, libgpuperf-opencl.so, libgpuperf-gl.so and the\n"
          "Vulkan layer are preloaded into it\n"
          "(a program that links an API whose gpuperf library is not built\n"
          "is warned about).\n"
          "Exits with CMD's status; a run that crashed (killed by a signal,\n"
          "or no counts) is reported, left out of the figures, and gives\n"
          "its status; 3 when counters asked for are held by another\n"
          "program (CMD is not run). Counts show a rate per second after '#'\n"
          "(a device's totals over the time it was sampled, a kernel's over\n"
          "its GPU time, the host's over task-clock); more counters than a\n"
          "device counts at once are multiplexed where it can (the simulated\n"
          "GPUs), scaled, with the share of the time they counted: (66.67%%).\n"
          "Then the elapsed time and, for one run, the user and system CPU\n"
          "time of CMD's process tree.\n\n"
          "  -e, --events LIST  counter names or globs, comma-separated, "
          "repeatable\n"
          "                     (default: each device's default counters;\n"
          "                     see 'gpuperf list')\n"
          "  -o, --output FILE  write the totals to FILE instead of stderr\n"
          "      --period NS    sampling period of the totals (default "
          "1000000);\n"
          "                     multiplexed counters take turns every 4\n"
          "                     periods\n"
          "  -r, --repeat N     run CMD N times; print means and their spread\n"
          "                     (+- the standard error, in %% of the mean;\n"
          "                     the elapsed time's +- in seconds);\n"
          "                     a run that crashed is reported and left out\n"
          "  -x, --field-separator SEP\n"
          "                     one line per value, perf stat's fields in\n"
          "                     its order: value, unit, event, run time (ns),\n"
          "                     percentage running, variance (with -r),\n"
          "                     metric, metric unit; then device, kernel;\n"
          "                     time-elapsed, time-user, time-sys last\n"
          "      --json         one JSON object per value\n"
          "      --wait         wait until counters someone else holds are\n"
          "                     free (a V3D GPU's: docs/gpu-linux.md)\n");
}

/* ------------------------------------------------------------------ */
/* Reading the processes' files                                         */

static char *unescape(const char *s, size_t len) {
  char *d = malloc(len + 1), *o = d;
  if (!d)
    return NULL;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\\' && i + 1 < len) {
      char c = s[++i];
      *o++ = c == 't' ? '\t' : c == 'n' ? '\n' : c;
    } else {
      *o++ = s[i];
    }
  }
  *o = '\0';
  return d;
}

/* Splits line (no newline) at tabs into at most max unescaped fields. */
static size_t split(const char *line, char **f, size_t max) {
  size_t n = 0;
  const char *p = line;
  while (n < max) {
    size_t len = strcspn(p, "\t");
    f[n++] = unescape(p, len);
    if (!p[len])
      break;
    p += len + 1;
  }
  return n;
}

/* See cli_stat.h. */
bool stat_same(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static stat_row *find_row(char kind, const char *dev, const char *kernel,
                          const char *counter) {
  for (size_t i = 0; i < stat_nrows; i++)
    if (stat_rows[i].kind == kind && stat_same(stat_rows[i].device, dev) &&
        stat_same(stat_rows[i].kernel, kernel) &&
        stat_same(stat_rows[i].counter, counter))
      return &stat_rows[i];
  if (stat_nrows == MAX_ROWS)
    return NULL;
  stat_row *r = &stat_rows[stat_nrows++];
  memset(r, 0, sizeof(*r));
  r->kind = kind;
  r->device = dev ? strdup(dev) : NULL;
  r->kernel = kernel ? strdup(kernel) : NULL;
  r->counter = counter ? strdup(counter) : NULL;
  return r;
}

static void merge_value(stat_row *r, const char *units, const char *how,
                        double v, double w) {
  if (!r)
    return;
  if (!r->units)
    r->units = strdup(units);
  r->avg = strcmp(how, "avg") == 0;
  if (!r->avg) {
    r->value += v;
  } else if (w > 0) {
    r->value = (r->value * r->weight + v * w) / (r->weight + w);
    r->weight += w;
  }
}

/* A multiplexed counter's ns counted and enabled (a "running" line). */
static void add_running(stat_row *r, const char *running, const char *enabled) {
  if (!r)
    return;
  r->running += strtod(running, NULL);
  r->enabled += strtod(enabled, NULL);
}

/* Merges one stat file; returns false if it is not one. */
static bool read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char line[8192];
  char *fl[10];
  bool ok =
      fgets(line, sizeof(line), f) && strncmp(line, "gpuperf-stat\t1", 14) == 0;
  while (ok && fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    size_t n = split(line, fl, 10);
    if (n == 7 && strcmp(fl[0], "counter") == 0) {
      merge_value(find_row('c', fl[1], NULL, fl[2]), fl[3], fl[4],
                  strtod(fl[5], NULL), strtod(fl[6], NULL));
    } else if (n == 5 && strcmp(fl[0], "kernel") == 0) {
      stat_row *r = find_row('k', fl[1], fl[2], NULL);
      if (r) {
        r->launches += strtoull(fl[3], NULL, 10);
        r->time_ns += strtoull(fl[4], NULL, 10);
      }
    } else if (n == 8 && strcmp(fl[0], "kvalue") == 0) {
      merge_value(find_row('v', fl[1], fl[2], fl[3]), fl[4], fl[5],
                  strtod(fl[6], NULL), strtod(fl[7], NULL));
    } else if (n == 4 && strcmp(fl[0], "host") == 0) {
      merge_value(find_row('h', "", NULL, fl[1]), fl[2], "sum",
                  strtod(fl[3], NULL), 0);
    } else if (n == 5 && strcmp(fl[0], "stage") == 0) {
      stat_row *r = find_row('s', fl[1], fl[2], NULL);
      if (r) {
        r->launches += strtoull(fl[3], NULL, 10);
        r->time_ns += strtoull(fl[4], NULL, 10);
      }
    } else if (n == 3 && strcmp(fl[0], "submits") == 0) {
      merge_value(find_row('u', fl[1], NULL, "submits"), "-", "sum",
                  strtod(fl[2], NULL), 0);
    } else if (n == 5 && strcmp(fl[0], "running") == 0) {
      add_running(find_row('c', fl[1], NULL, fl[2]), fl[3], fl[4]);
    } else if (n == 6 && strcmp(fl[0], "krunning") == 0) {
      add_running(find_row('v', fl[1], fl[2], fl[3]), fl[4], fl[5]);
    } else if (n == 3 && strcmp(fl[0], "sampled") == 0) {
      merge_value(find_row('d', fl[1], NULL, "sampled"), "NANOSECOND", "sum",
                  strtod(fl[2], NULL), 0);
    } else if (n >= 1 && strcmp(fl[0], "process") == 0) {
      run_procs++;
    } else if (n >= 1 && strcmp(fl[0], "ended") == 0) {
      run_dying++;
    }
    for (size_t i = 0; i < n; i++)
      free(fl[i]);
  }
  fclose(f);
  return ok;
}

static void read_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  char path[4096 + 512];
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, "stat.", 5) != 0)
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (strstr(e->d_name, ".tmp") == NULL && read_file(path))
      run_files++;
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* Running the command                                                  */

/* Prepends the loaded libgpuperf to LD_PRELOAD, so that CMD counts even
 * if it does not link it itself. */
static void preload_self(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  /* A sanitizer build of the library cannot be preloaded ahead of its
   * runtime: CMD must link the library itself. */
  return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return;
#endif
#endif
  Dl_info info;
  if (!dladdr((void *)gp_version, &info) || !info.dli_fname ||
      !strstr(info.dli_fname, "libgpuperf"))
    return; /* linked statically: CMD must load the library itself */
  const char *old = getenv("LD_PRELOAD");
  size_t len = strlen(info.dli_fname) + (old ? strlen(old) : 0) + 2;
  char *v = malloc(len);
  if (!v)
    return;
  snprintf(v, len, "%s%s%s", info.dli_fname, old && *old ? ":" : "",
           old ? old : "");
  setenv("LD_PRELOAD", v, 1);
  free(v);
  cli_preload_libraries(); /* OpenCL and OpenGL programs too */
  cli_enable_vulkan_layer();
}

static double tv_s(const struct timeval *tv) {
  return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Clears each row's values of the run just read. */
static void run_clear(void) {
  for (size_t i = 0; i < stat_nrows; i++) {
    stat_row *r = &stat_rows[i];
    r->value = r->weight = r->running = r->enabled = 0;
    r->launches = r->time_ns = 0;
  }
  run_files = run_procs = run_dying = 0;
}

/* Counts the run just read into each row's runs (a row it lacks counts
 * it as zero), then clears them for the next run. */
static void run_done(void) {
  for (size_t i = 0; i < stat_nrows; i++) {
    stat_row *r = &stat_rows[i];
    bool k = r->kind == 'k' || r->kind == 's';
    double v = k ? (double)r->time_ns : r->value;
    if (v != 0 || r->launches || r->weight > 0 || r->enabled > 0)
      r->rn++;
    r->runsum += r->running;
    r->ensum += r->enabled;
    r->rsum += v;
    r->rsq += v * v;
    r->lsum += (double)r->launches;
    r->wsum += r->weight;
  }
  if (run_procs > stat_max_procs)
    stat_max_procs = run_procs;
  stat_counted++;
  run_clear();
}

/* Sets each row's values to the mean of the counted runs. */
static void runs_mean(void) {
  for (size_t i = 0; i < stat_nrows; i++) {
    stat_row *r = &stat_rows[i];
    if (!r->rn || !stat_counted)
      continue;
    r->value = r->rsum / stat_counted;
    r->weight = r->wsum / stat_counted;
    r->running = r->runsum / stat_counted;
    r->enabled = r->ensum / stat_counted;
    if (r->kind == 'k' || r->kind == 's') {
      r->time_ns = (uint64_t)llround(r->value);
      r->launches = (uint64_t)llround(r->lsum / stat_counted);
    }
  }
}

/* One line on stderr about run i (of repeats) of cmd that crashed. */
static void report_crash(int i, const char *cmd, int sig, int status,
                         bool partial) {
  char which[48] = "";
  if (stat_repeats > 1)
    snprintf(which, sizeof(which), "run %d of %d: ", i + 1, stat_repeats);
  if (sig)
    cli_error(0, "%s'%s' was killed by signal %d (%s): %s", which, cmd, sig,
              strsignal(sig),
              partial            ? "the counts below are partial"
              : stat_repeats > 1 ? "its counts are left out"
                                 : "it left no counts");
  else
    cli_error(0,
              "%s'%s' exited with status %d and left no counts (it did "
              "not load libgpuperf, or it was killed before it could write "
              "them)%s",
              which, cmd, status, stat_repeats > 1 ? ": left out" : "");
}

/* Checks the names, runs cmd and prints its totals; returns the exit
 * status of gpuperf. */
static int stat_run(char **names, size_t nnames, const char *output,
                    uint64_t period, char **cmd) {
  int status = cli_check_events(names, nnames, true);
  if (status != CLI_OK)
    return status;

  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s/gpuperf-stat.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return cli_error(CLI_BAD_INPUT, "cannot make a directory in %s: %s",
                     tmp && *tmp ? tmp : "/tmp", strerror(errno));
  FILE *out = stderr;
  if (output && !(out = fopen(output, "w"))) {
    rmdir(dir);
    return cli_error(CLI_BAD_INPUT, "cannot write %s: %s", output,
                     strerror(errno));
  }
  char joined[8192] = "", pbuf[32];
  for (size_t i = 0; i < nnames; i++) {
    size_t o = strlen(joined);
    snprintf(joined + o, sizeof(joined) - o, "%s%s", i ? "," : "", names[i]);
  }
  snprintf(pbuf, sizeof(pbuf), "%llu", (unsigned long long)period);
  setenv("GPUPERF_STAT_DIR", dir, 1);
  setenv("GPUPERF_STAT_EVENTS", joined, 1);
  setenv("GPUPERF_STAT_PERIOD_NS", pbuf, 1);
  unsetenv("GPUPERF_STAT_HOST_PID");
  preload_self();
  cli_warn_missing_libraries("stat", cmd);

  /* Wall, user and system time: the last run's, sums and squares. */
  double last[3] = {0, 0, 0}, tsum[3] = {0, 0, 0}, tsq[3] = {0, 0, 0};
  int rc = 0, status_out = 0, crashed = 0, partial_sig = 0;
  for (int i = 0; i < stat_repeats; i++) {
    /* read_dir empties and removes the directory: make it anew. */
    if (i > 0 && mkdir(dir, 0700) != 0) {
      cli_error(0, "cannot make %s: %s", dir, strerror(errno));
      break;
    }
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
      rmdir(dir);
      if (out != stderr)
        fclose(out);
      return cli_error(CLI_BAD_INPUT, "cannot fork: %s", strerror(errno));
    }
    if (pid == 0) {
      execvp(cmd[0], cmd);
      fprintf(stderr, "gpuperf stat: cannot run '%s': %s\n", cmd[0],
              strerror(errno));
      _exit(127);
    }
    /* Like perf stat: ^C goes to the program, and we report after it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    while (wait4(pid, &ws, 0, &ru) < 0 && errno == EINTR) {
    }
    /* The run's times: wall, and the CPU time of CMD and the children it
     * waited for. */
    double t[3] = {now_s() - t0, tv_s(&ru.ru_utime), tv_s(&ru.ru_stime)};
    int sig = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
    rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : sig ? 128 + sig : 1;
    read_dir(dir);
    if (rc == 127 && run_files == 0) { /* CMD could not run */
      status_out = status_out ? status_out : rc;
      run_clear();
      break;
    }
    if (sig || run_files == 0) {
      /* Crashed: reported, and kept out of the figures; one run alone
       * still shows what it counted, as partial. */
      bool partial = stat_repeats == 1 && run_files > 0;
      report_crash(i, cmd[0], sig, rc, partial);
      crashed++;
      status_out = status_out ? status_out : rc ? rc : 1;
      if (partial) {
        partial_sig = sig;
        memcpy(last, t, sizeof(last));
        run_done();
      } else {
        run_clear();
      }
      if (sig == SIGINT)
        break; /* ^C: the person wants it to end */
      continue;
    }
    if (run_dying)
      cli_error(0,
                "run %d: %d process%s of '%s' died of a signal: %s counts "
                "stop there",
                i + 1, run_dying, run_dying == 1 ? "" : "es", cmd[0],
                run_dying == 1 ? "its" : "their");
    if (run_dying && stat_repeats == 1)
      partial_sig = -1;
    for (int k = 0; k < 3; k++) {
      last[k] = t[k];
      tsum[k] += t[k];
      tsq[k] += t[k] * t[k];
    }
    run_done();
    if (rc != 0) { /* a failing run ends the repeats, as in perf */
      status_out = status_out ? status_out : rc;
      break;
    }
  }
  /* The times: of the only run when it was partial, else the means of
   * those timed and their standard errors (perf's "+-"). */
  double mean[3], se[3] = {NAN, NAN, NAN};
  memcpy(mean, last, sizeof(mean));
  int timed = partial_sig > 0 ? 0 : stat_counted;
  for (int k = 0; k < 3 && timed > 0; k++) {
    mean[k] = tsum[k] / timed;
    double var =
        timed > 1 ? (tsq[k] - timed * mean[k] * mean[k]) / (timed - 1) : 0;
    if (timed > 1)
      se[k] = var > 0 ? sqrt(var / timed) : 0;
  }
  if (stat_counted > 0)
    runs_mean();
  stat_times times = {mean[0], mean[1], mean[2], se[0], se[1], se[2]};
  if (stat_counted > 0)
    stat_print_report(out, cmd, &times, crashed, partial_sig);
  else if (crashed > 1 || (crashed == 1 && stat_repeats > 1))
    cli_error(0, "no run of '%s' completed: nothing to show", cmd[0]);
  if (out != stderr && fclose(out) != 0)
    cli_error(0, "cannot write %s: %s", output, strerror(errno));
  return status_out;
}

/* See cli.h. */
int cmd_stat(int argc, char **argv) {
  static const struct option longopts[] = {
      {"events", required_argument, 0, 'e'},
      {"output", required_argument, 0, 'o'},
      {"period", required_argument, 0, 'p'},
      {"repeat", required_argument, 0, 'r'},
      {"field-separator", required_argument, 0, 'x'},
      {"json", no_argument, 0, 'j'},
      {"wait", no_argument, 0, 'W'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  char *names[MAX_EVENTS];
  size_t nnames = 0;
  const char *output = NULL;
  uint64_t period = 1000000;
  int c, status = CLI_OK;
  optind = 1;
  opterr = 0;
  /* '+': options end at the first non-option (CMD's own options). */
  while ((c = getopt_long(argc, argv, "+e:o:r:x:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'e':
      if ((status = cli_split_events(optarg, names, &nnames, MAX_EVENTS)))
        goto out;
      break;
    case 'o':
      output = optarg;
      break;
    case 'p':
      if (!cli_parse_u64("--period", optarg, 1000, 60000000000ull, &period)) {
        status = CLI_USAGE;
        goto out;
      }
      break;
    case 'r': {
      uint64_t n;
      if (!cli_parse_u64("stat: -r", optarg, 1, 100000, &n)) {
        status = CLI_USAGE;
        goto out;
      }
      stat_repeats = (int)n;
      break;
    }
    case 'x':
      if (!*optarg) {
        status = cli_error(CLI_USAGE, "stat: -x needs a separator");
        goto out;
      }
      stat_sep = optarg;
      break;
    case 'j':
      stat_json = true;
      break;
    case 'W':
      cli_wait_counters = true;
      break;
    case 'h':
      stat_usage(stdout);
      goto out;
    default:
      status = cli_error(CLI_USAGE,
                         "stat: bad option or missing value in '%s' (see "
                         "--help)",
                         argv[optind - 1]);
      goto out;
    }
  }
  if (stat_sep && stat_json) {
    status = cli_error(CLI_USAGE, "stat: -x and --json: one or the other");
    goto out;
  }
  if (optind >= argc) {
    status =
        cli_error(CLI_USAGE, "stat: no command to run (gpuperf stat -- CMD)");
    goto out;
  }
  status = stat_run(names, nnames, output, period, argv + optind);
out:
  for (size_t i = 0; i < nnames; i++)
    free(names[i]);
  return status;
}
