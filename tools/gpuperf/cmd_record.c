/*
 * cmd_record.c - `gpuperf record [-c CONFIG] [-e COUNTERS] [-o FILE] --
 * CMD ARGS...`: records another program into one Perfetto trace.
 *
 * The mechanism is the library's (session.h): record makes a directory
 * next to the output, writes the config there, and runs CMD with
 * GPUPERF_RECORD_DIR and GPUPERF_RECORD_CONFIG in its environment. Every
 * process of the program that loads libgpuperf (directly, or through the
 * OpenCL or CUDA interception libraries) writes its own packet sequence
 * into <dir>/<N>.pftrace as it runs, flushed at least every second. When
 * CMD exits, record concatenates the files (Perfetto traces concatenate),
 * keeping only whole packets of a file whose process was killed in the
 * middle of a write, removes the directory and exits with CMD's status
 * (128 + the signal if it was killed). If record itself is killed, the
 * directory stays, and concatenating its .pftrace files recovers the
 * trace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cuda.h"

static pid_t child_pid;

static void forward_signal(int sig) {
  if (child_pid > 0)
    kill(child_pid, sig);
}

static void record_usage(FILE *out) {
  fprintf(
      out,
      "usage: gpuperf record [-c CONFIG] [-e COUNTERS] [-o FILE] [-q] "
      "[--] CMD [ARGS...]\n\n"
      "Runs CMD and records what its processes do on GPUs into one\n"
      "Perfetto trace (open it in ui.perfetto.dev, or query it with\n"
      "gpuperf query). Programs that use libgpuperf, or OpenCL (through\n"
      "libgpuperf-opencl.so, preloaded), are recorded; each process,\n"
      "children included, gets its own packet sequence.\n\n"
      "  -c, --config FILE     TraceConfig in the protobuf text format\n"
      "                        (default: gpu.renderstages and gpu.counters)\n"
      "  -e, --event COUNTERS  counters to sample, names or globs, comma\n"
      "                        separated (adds to gpu.counters)\n"
      "  -o, --output FILE     trace file (default gpuperf.pftrace)\n"
      "  -q, --quiet           no summary\n\n"
      "Exit status: CMD's, 128 + the signal that ended it, 1 for a usage\n"
      "error, 2 for a bad config.\n");
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) {
      if (ferror(f)) {
        free(buf);
        buf = NULL;
      }
      break;
    }
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Length of the prefix of a trace made of whole `packet` fields. */
static size_t whole_packets(const unsigned char *d, size_t n, uint64_t *count) {
  size_t off = 0;
  *count = 0;
  while (off < n) {
    size_t p = off;
    if (d[p++] != 0x0a) /* field 1, length-delimited */
      break;
    uint64_t len = 0;
    int shift = 0;
    while (p < n && shift < 64) {
      len |= (uint64_t)(d[p] & 0x7f) << shift;
      shift += 7;
      if (!(d[p++] & 0x80))
        break;
      if (p == n)
        return off;
    }
    if (p > n || len > n - p)
      break;
    off = p + (size_t)len;
    (*count)++;
  }
  return off;
}

typedef struct part {
  unsigned long n;
  char name[300];
} part;

static int by_number(const void *a, const void *b) {
  const part *x = a, *y = b;
  return x->n < y->n ? -1 : x->n > y->n;
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = write(fd, c, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    c += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Concatenates the process files of dir into fd, in sequence order, and
 * removes them. Returns 0 or -errno; *procs, *packets, *bytes say what. */
static int merge(const char *dir, int fd, bool quiet, unsigned *procs,
                 uint64_t *packets, uint64_t *bytes) {
  DIR *dp = opendir(dir);
  if (!dp)
    return -errno;
  part *parts = NULL;
  size_t np = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    char *end;
    unsigned long n = strtoul(de->d_name, &end, 10);
    if (end == de->d_name || strcmp(end, ".pftrace") != 0)
      continue;
    if (np == cap) {
      cap = cap ? cap * 2 : 16;
      part *q = realloc(parts, cap * sizeof(*q));
      if (!q) {
        closedir(dp);
        free(parts);
        return -ENOMEM;
      }
      parts = q;
    }
    parts[np].n = n;
    snprintf(parts[np].name, sizeof(parts[np].name), "%s", de->d_name);
    np++;
  }
  closedir(dp);
  if (np > 1)
    qsort(parts, np, sizeof(*parts), by_number);
  int rc = 0;
  *procs = 0;
  *packets = *bytes = 0;
  for (size_t i = 0; i < np && rc == 0; i++) {
    char path[4600];
    snprintf(path, sizeof(path), "%s/%s", dir, parts[i].name);
    size_t len = 0;
    unsigned char *data = (unsigned char *)slurp(path, &len);
    if (!data) {
      rc = -errno;
      break;
    }
    uint64_t count = 0;
    size_t keep = whole_packets(data, len, &count);
    if (keep < len && !quiet)
      fprintf(stderr,
              "gpuperf record: sequence %lu ends inside a packet (its process "
              "was killed while writing?): kept its first %llu packets\n",
              parts[i].n, (unsigned long long)count);
    if (len > 0)
      (*procs)++;
    rc = write_all(fd, data, keep);
    *packets += count;
    *bytes += keep;
    free(data);
    if (rc == 0)
      unlink(path);
  }
  free(parts);
  return rc;
}

/* See cli.h. */
int cmd_record(int argc, char **argv) {
  const char *config = NULL, *events = NULL, *output = "gpuperf.pftrace";
  bool quiet = false;
  static const struct option longopts[] = {
      {"config", required_argument, 0, 'c'},
      {"event", required_argument, 0, 'e'},
      {"output", required_argument, 0, 'o'},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+c:e:o:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      config = optarg;
      break;
    case 'e':
      events = optarg;
      break;
    case 'o':
      if (!*optarg)
        return cli_error(CLI_USAGE, "-o needs a file name");
      output = optarg;
      break;
    case 'q':
      quiet = true;
      break;
    case 'h':
      record_usage(stdout);
      return CLI_OK;
    default:
      record_usage(stderr);
      return CLI_USAGE;
    }
  }
  if (optind >= argc) {
    record_usage(stderr);
    return cli_error(CLI_USAGE, "no command to record");
  }

  /* The config: read and check it all before running anything. */
  gp_trace_config *cfg = NULL;
  char err[512] = "";
  int rc;
  if (config) {
    size_t len = 0;
    char *text = slurp(config, &len);
    if (!text)
      return cli_error(CLI_BAD_INPUT, "cannot read %s: %s", config,
                       strerror(errno));
    /* An empty config would record nothing: say so rather than run. */
    size_t blank = 0;
    while (blank < len && strchr(" \t\r\n", text[blank]) && text[blank])
      blank++;
    if (blank == len) {
      free(text);
      return cli_error(CLI_BAD_INPUT,
                       "%s: empty config, it would record nothing (leave out "
                       "-c for the default)",
                       config);
    }
    rc = gp_trace_config_parse(text, len, &cfg, err, sizeof(err));
    free(text);
    if (rc != 0)
      return cli_error(CLI_BAD_INPUT, "%s: %s", config,
                       err[0] ? err : gp_strerror(rc));
  } else if ((rc = gp_trace_config_default(&cfg)) != 0) {
    return cli_error(CLI_BAD_INPUT, "default config: %s", gp_strerror(rc));
  }
  if (events && (rc = gp_trace_config_add_counters(cfg, events)) != 0) {
    gp_trace_config_destroy(cfg);
    return cli_error(CLI_USAGE, "-e '%s': %s", events,
                     rc == GP_EINVAL ? "expected counter names or globs, "
                                       "comma separated (and a config that "
                                       "selects counters by name)"
                                     : gp_strerror(rc));
  }
  size_t need = 0;
  gp_trace_config_format(cfg, NULL, 0, &need);
  char *text = malloc(need + 1);
  if (!text || gp_trace_config_format(cfg, text, need + 1, &need) != 0) {
    free(text);
    gp_trace_config_destroy(cfg);
    return cli_error(CLI_BAD_INPUT, "out of memory");
  }
  gp_trace_config_destroy(cfg);

  int out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    free(text);
    return cli_error(CLI_BAD_INPUT, "cannot create %s: %s", output,
                     strerror(errno));
  }
  char dir[4200];
  snprintf(dir, sizeof(dir), "%s.parts-XXXXXX", output);
  if (!mkdtemp(dir)) {
    int e = errno;
    close(out);
    free(text);
    return cli_error(CLI_BAD_INPUT, "cannot create a directory next to %s: %s",
                     output, strerror(e));
  }
  char cfg_path[4300];
  snprintf(cfg_path, sizeof(cfg_path), "%s/config.pbtxt", dir);
  int cfd = open(cfg_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (cfd < 0 || write_all(cfd, text, need) != 0 || close(cfd) != 0) {
    free(text);
    close(out);
    unlink(cfg_path);
    rmdir(dir);
    return cli_error(CLI_BAD_INPUT, "cannot write %s", cfg_path);
  }
  free(text);

  fflush(NULL);
  child_pid = fork();
  if (child_pid < 0) {
    int e = errno;
    unlink(cfg_path);
    rmdir(dir);
    close(out);
    return cli_error(CLI_BAD_INPUT, "cannot start %s: %s", argv[optind],
                     strerror(e));
  }
  if (child_pid == 0) {
    setenv("GPUPERF_RECORD_DIR", dir, 1);
    setenv("GPUPERF_RECORD_CONFIG", cfg_path, 1);
    cli_cuda_record_env(); /* CUDA programs: the driver loads the collector */
    cli_preload_opencl();  /* OpenCL programs are recorded too */
    execvp(argv[optind], argv + optind);
    int e = errno;
    fprintf(stderr, "gpuperf: cannot run '%s': %s\n", argv[optind],
            strerror(e));
    _exit(e == ENOENT ? 127 : 126);
  }
  /* ^C reaches the whole process group: let the program decide, and merge
   * after it ends. A TERM sent to us alone is passed on. */
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGTERM, forward_signal);
  signal(SIGHUP, forward_signal);
  int status = 0;
  while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR) {
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);

  unsigned procs = 0;
  uint64_t packets = 0, bytes = 0;
  rc = merge(dir, out, quiet, &procs, &packets, &bytes);
  if (close(out) != 0 && rc == 0)
    rc = -errno;
  int code = WIFEXITED(status)
                 ? WEXITSTATUS(status)
                 : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (rc != 0) {
    cli_error(CLI_BAD_INPUT,
              "cannot write %s: %s (the process traces are "
              "left in %s)",
              output, strerror(-rc), dir);
    return code ? code : CLI_BAD_INPUT;
  }
  unlink(cfg_path);
  if (rmdir(dir) != 0 && !quiet)
    fprintf(stderr,
            "gpuperf record: %s is not empty (a process still "
            "running?); left in place\n",
            dir);
  if (!quiet) {
    char b[32];
    fprintf(stderr,
            "gpuperf record: %u process%s recorded, %llu packets, %s written "
            "to %s\n",
            procs, procs == 1 ? "" : "es", (unsigned long long)packets,
            cli_fmt_bytes(b, sizeof(b), (double)bytes), output);
    if (procs == 0)
      fprintf(stderr,
              "gpuperf record: no process of '%s' did GPU work through "
              "gpuperf (the simulated GPUs, OpenCL or CUDA): nothing was "
              "recorded\n",
              argv[optind]);
  }
  return code;
}
