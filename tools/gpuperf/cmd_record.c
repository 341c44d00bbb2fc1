/*
 * cmd_record.c - `gpuperf record [-c CONFIG] [-e COUNTERS] [-o FILE] --
 * CMD ARGS...`: records another program into one Perfetto trace.
 *
 * The mechanism is the library's (session.h): record makes a directory
 * FILE.parts-XXXXXX next to the output, writes the config there, and runs
 * CMD with GPUPERF_RECORD_DIR and GPUPERF_RECORD_CONFIG in its
 * environment. Every process of the program that loads libgpuperf
 * (directly, or through the OpenCL or CUDA interception libraries) writes
 * its own packet sequence into <dir>/<N>.pftrace as it runs. When CMD
 * exits, record_merge.c turns the parts into the output (safely: a new
 * file renamed over the old one, which is kept as FILE.old) and record
 * exits with CMD's status (128 + the signal if it was killed).
 *
 * Nothing is destroyed before something better exists: the output is not
 * touched until the merge, not at all if CMD cannot be started. If record
 * itself is killed, the parts stay with a RECOVER note, CMD gets SIGTERM
 * (PR_SET_PDEATHSIG), and `gpuperf record --recover DIR` makes the trace.
 * Record is a subreaper: processes CMD leaves running are named in the
 * summary as not recorded from then on.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cuda.h"
#include "cli_record.h"

#define MAX_EVENTS 64

static pid_t child_pid;

static void forward_signal(int sig) {
  if (child_pid > 0)
    kill(child_pid, sig);
}

static void record_usage(FILE *out) {
  fprintf(
      out,
      "usage: gpuperf record [-c CONFIG] [-e COUNTERS] [-o FILE] [-q] "
      "[--wait] [--] CMD [ARGS...]\n"
      "       gpuperf record --producer [-q] [--] CMD [ARGS...]\n\n"
      "Runs CMD and records what its processes do on GPUs into one\n"
      "Perfetto trace (open it in ui.perfetto.dev, or query it with\n"
      "gpuperf query). Programs that use libgpuperf, or OpenCL (through\n"
      "libgpuperf-opencl.so, preloaded), or OpenGL (libgpuperf-gl.so,\n"
      "preloaded), or Vulkan (through the layer VK_LAYER_GPUPERF_trace),\n"
      "are recorded; each process,\n"
      "children included, gets its own packet sequence. A program that\n"
      "links an API whose gpuperf library is not built is warned about.\n\n"
      "  -c, --config FILE     TraceConfig in the protobuf text format\n"
      "                        (default: gpu.renderstages, gpu.counters,\n"
      "                        gpu.log and vulkan.memory_tracker); a\n"
      "                        linux.ftrace data source adds the kernel's\n"
      "                        GPU events from tracefs (as root:\n"
      "                        docs/gpu-linux.md)\n"
      "  -e, --event COUNTERS  counters to sample, names or globs, comma\n"
      "                        separated, instead of each device's default\n"
      "                        counters (as perf stat -e); the name\n"
      "                        'default' adds those back; host CPU\n"
      "                        counters (task-clock, ...) become counter\n"
      "                        tracks of each process\n"
      "  -o, --output FILE     trace file (default gpuperf.pftrace); one\n"
      "                        that exists is kept as FILE.old\n"
      "  -q, --quiet           no summary\n"
      "      --recover DIR     make the trace from the FILE.parts-XXXXXX\n"
      "                        folder a killed record left (into -o, or\n"
      "                        FILE)\n"
      "      --wait            wait until counters someone else holds\n"
      "                        are free (a V3D GPU's: docs/gpu-linux.md)\n"
      "                        instead of exiting with status 3\n"
      "      --producer        send CMD's GPU work to Perfetto's tracing\n"
      "                        service instead of a file (GPUPERF_PRODUCER=\n"
      "                        perfetto; the config given to `perfetto`\n"
      "                        decides what is recorded: docs/perfetto.md)\n\n"
      "Exit status: CMD's, 128 + the signal that ended it, 1 for a usage\n"
      "error, 2 for a bad config or a trace that could not be written\n"
      "whole, 3 when counters asked for are held by another program\n"
      "(CMD is not run).\n");
}

/* Reads the config (or the default) and adds the -e names; returns its
 * text (malloc'd) or NULL after printing why (*status). */
static char *config_text(const char *config, char **names, size_t nnames,
                         size_t *len, int *status) {
  gp_trace_config *cfg = NULL;
  char err[512] = "";
  int rc;
  *status = CLI_BAD_INPUT;
  if (config) {
    size_t n = 0;
    char *text = cli_slurp(config, &n);
    if (!text) {
      cli_error(CLI_BAD_INPUT, "cannot read %s: %s", config, strerror(errno));
      return NULL;
    }
    /* An empty config would record nothing: say so rather than run. */
    size_t blank = 0;
    while (blank < n && text[blank] && strchr(" \t\r\n", text[blank]))
      blank++;
    if (blank == n) {
      free(text);
      cli_error(CLI_BAD_INPUT,
                "%s: empty config, it would record nothing (leave out -c for "
                "the default)",
                config);
      return NULL;
    }
    rc = gp_trace_config_parse(text, n, &cfg, err, sizeof(err));
    free(text);
    if (rc != 0) {
      cli_error(CLI_BAD_INPUT, "%s: %s", config,
                err[0] ? err : gp_strerror(rc));
      return NULL;
    }
  } else if ((rc = gp_trace_config_default(&cfg)) != 0) {
    cli_error(CLI_BAD_INPUT, "default config: %s", gp_strerror(rc));
    return NULL;
  }
  for (size_t i = 0; i < nnames; i++) {
    if ((rc = gp_trace_config_add_counters(cfg, names[i])) != 0) {
      gp_trace_config_destroy(cfg);
      cli_error(CLI_BAD_INPUT, "-e '%s': %s", names[i],
                rc == GP_EINVAL   ? "cannot be added to a config that selects "
                                    "counters by id"
                : rc == GP_ERANGE ? "too many counter names in one data "
                                    "source (at most 64)"
                                  : gp_strerror(rc));
      return NULL;
    }
  }
  size_t need = 0;
  gp_trace_config_format(cfg, NULL, 0, &need);
  char *text = malloc(need + 1);
  if (!text || gp_trace_config_format(cfg, text, need + 1, &need) != 0) {
    free(text);
    gp_trace_config_destroy(cfg);
    cli_error(CLI_BAD_INPUT, "out of memory");
    return NULL;
  }
  gp_trace_config_destroy(cfg);
  *len = need;
  return text;
}

static int write_file(const char *path, const char *text, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  size_t off = 0;
  while (off < len) {
    ssize_t k = write(fd, text + off, len - off);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      int e = k < 0 ? errno : EIO;
      close(fd);
      return -e;
    }
    off += (size_t)k;
  }
  return close(fd) != 0 ? -errno : 0;
}

/* Runs argv in a child with the recording environment. Returns its pid,
 * or -errno if it could not be started (exec failed: *exec_errno). */
static pid_t spawn(char **argv, const char *dir, const char *cfg_path,
                   int *exec_errno) {
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0)
    return -errno;
  pid_t parent = getpid();
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(pfd[0]);
    close(pfd[1]);
    return -e;
  }
  if (pid == 0) {
    close(pfd[0]);
    /* The program must not outlive a killed recorder unnoticed. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      _exit(128 + SIGTERM);
    setenv("GPUPERF_RECORD_DIR", dir, 1);
    setenv("GPUPERF_RECORD_CONFIG", cfg_path, 1);
    cli_cuda_record_env();   /* CUDA programs: the driver loads the collector */
    cli_preload_libraries(); /* OpenCL and OpenGL programs too */
    cli_enable_vulkan_layer(); /* and Vulkan programs */
    execvp(argv[0], argv);
    int e = errno;
    ssize_t k = write(pfd[1], &e, sizeof(e));
    (void)k;
    _exit(e == ENOENT ? 127 : 126);
  }
  close(pfd[1]);
  int e = 0;
  ssize_t k;
  while ((k = read(pfd[0], &e, sizeof(e))) < 0 && errno == EINTR) {
  }
  close(pfd[0]);
  *exec_errno = k == (ssize_t)sizeof(e) ? e : 0;
  return pid;
}

/* Reaps what has ended among the processes reparented to us, and names
 * those still running: what they do from now on is not recorded. */
static unsigned name_leftovers(bool quiet) {
  int st;
  while (waitpid(-1, &st, WNOHANG) > 0) {
  }
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  unsigned n = 0;
  int pid;
  while (fscanf(f, "%d", &pid) == 1) {
    char comm[64] = "?";
    snprintf(path, sizeof(path), "/proc/%d/comm", pid);
    FILE *c = fopen(path, "r");
    if (c) {
      if (fgets(comm, sizeof(comm), c))
        comm[strcspn(comm, "\n")] = '\0';
      fclose(c);
    }
    n++;
    if (!quiet)
      fprintf(stderr,
              "gpuperf record: process %d (%s) was left running by the "
              "program: its GPU work from now on is not recorded\n",
              pid, comm);
  }
  fclose(f);
  return n;
}

/* Records cmd into output; returns the exit status of gpuperf. */
static int record_run(const char *config, char **names, size_t nnames,
                      const char *output, bool quiet, char **cmd) {
  /* Everything is checked before anything runs or is written. */
  struct stat ost;
  if (stat(output, &ost) == 0 && S_ISDIR(ost.st_mode))
    return cli_error(CLI_USAGE,
                     "-o %s is a folder: name the trace file to write "
                     "(e.g. %s/gpuperf.pftrace)",
                     output, output);
  int status = cli_check_events(names, nnames, false);
  if (status != CLI_OK)
    return status;
  size_t len = 0;
  char *text = config_text(config, names, nnames, &len, &status);
  if (!text)
    return status;

  char dir[4200];
  snprintf(dir, sizeof(dir), "%s.parts-XXXXXX", output);
  if (!mkdtemp(dir)) {
    int e = errno;
    free(text);
    return cli_error(CLI_BAD_INPUT, "cannot create a folder next to %s: %s",
                     output, strerror(e));
  }
  char cfg_path[4300];
  snprintf(cfg_path, sizeof(cfg_path), "%s/config.pbtxt", dir);
  int rc = write_file(cfg_path, text, len);
  free(text);
  if (rc != 0) {
    rec_remove_parts(dir);
    return cli_error(CLI_BAD_INPUT, "cannot write %s: %s", cfg_path,
                     strerror(-rc));
  }
  rec_write_note(dir, output);
  /* Processes the program leaves behind become ours, to be named. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  /* A program that links an API whose library is missing would record
   * nothing of it, silently: say so first. */
  cli_warn_missing_libraries("record", cmd);
  int exec_errno = 0;
  child_pid = spawn(cmd, dir, cfg_path, &exec_errno);
  if (child_pid < 0 || exec_errno) {
    int e = child_pid < 0 ? (int)-child_pid : exec_errno;
    if (child_pid > 0)
      while (waitpid(child_pid, NULL, 0) < 0 && errno == EINTR) {
      }
    rec_remove_parts(dir);
    cli_error(CLI_BAD_INPUT,
              "cannot run '%s': %s (nothing recorded; %s is "
              "untouched)",
              cmd[0], strerror(e), output);
    return e == ENOENT ? 127 : 126;
  }
  /* ^C reaches the whole process group: let the program decide, and merge
   * after it ends. A TERM sent to us alone is passed on. */
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGTERM, forward_signal);
  signal(SIGHUP, forward_signal);
  int wst = 0;
  while (waitpid(child_pid, &wst, 0) < 0 && errno == EINTR) {
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  int code = WIFEXITED(wst) ? WEXITSTATUS(wst)
                            : 128 + (WIFSIGNALED(wst) ? WTERMSIG(wst) : 0);
  unsigned left = name_leftovers(quiet);

  rec_summary sum;
  char err[9000] = "";
  rc = rec_merge_into(dir, output, quiet, &sum, err, sizeof(err));
  if (rc != 0) {
    cli_error(CLI_BAD_INPUT, "%s", err);
    return CLI_BAD_INPUT;
  }
  bool removed = left == 0 && sum.failed == 0 ? rec_remove_parts(dir) : false;
  if (!quiet && !sum.failed) {
    char b[32];
    fprintf(stderr,
            "gpuperf record: %u process%s recorded, %llu packets, %s written "
            "to %s\n",
            sum.procs, sum.procs == 1 ? "" : "es",
            (unsigned long long)sum.packets,
            cli_fmt_bytes(b, sizeof(b), (double)sum.bytes), output);
    if (sum.procs == 0 && sum.failed == 0 && sum.unclean == 0) {
      char missing[4096];
      bool some = cli_missing_libraries(cmd, missing, sizeof(missing)) > 0;
      fprintf(stderr,
              "gpuperf record: no process of '%s' did GPU work through "
              "gpuperf (the simulated GPUs, OpenCL, OpenGL, CUDA or Vulkan): "
              "nothing was recorded%s%s\n",
              cmd[0], some ? "; " : "", some ? missing : "");
    }
    rec_print_deaths(&sum);
    if (!removed && sum.failed == 0)
      fprintf(stderr, "gpuperf record: the process parts are left in %s\n",
              dir);
  }
  if (sum.failed) {
    cli_error(CLI_BAD_INPUT,
              "%u process%s could not write %s part of the trace (%s): %s "
              "is incomplete (%llu packets); the parts are kept in %s",
              sum.failed, sum.failed == 1 ? "" : "es",
              sum.failed == 1 ? "its" : "their",
              sum.first_failed[0] ? sum.first_failed : "disk full?", output,
              (unsigned long long)sum.packets, dir);
    return CLI_BAD_INPUT;
  }
  return code;
}

/* See cli.h. */
int cmd_record(int argc, char **argv) {
  const char *config = NULL, *output = "gpuperf.pftrace", *recover = NULL;
  char *names[MAX_EVENTS];
  size_t nnames = 0;
  bool quiet = false, producer = false;
  int status = CLI_OK;
  static const struct option longopts[] = {
      {"config", required_argument, 0, 'c'},
      {"event", required_argument, 0, 'e'},
      {"output", required_argument, 0, 'o'},
      {"quiet", no_argument, 0, 'q'},
      {"recover", required_argument, 0, 'R'},
      {"producer", no_argument, 0, 'P'},
      {"wait", no_argument, 0, 'W'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  int c;
  bool have_o = false;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+c:e:o:qh", longopts, NULL)) != -1) {
    switch (c) {
    case 'c':
      config = optarg;
      break;
    case 'e':
      if ((status = cli_split_events(optarg, names, &nnames, MAX_EVENTS)))
        goto out;
      break;
    case 'o':
      if (!*optarg) {
        status = cli_error(CLI_USAGE, "-o needs a file name");
        goto out;
      }
      output = optarg;
      have_o = true;
      break;
    case 'q':
      quiet = true;
      break;
    case 'R':
      recover = optarg;
      break;
    case 'P':
      producer = true;
      break;
    case 'W':
      cli_wait_counters = true;
      break;
    case 'h':
      record_usage(stdout);
      goto out;
    default:
      record_usage(stderr);
      status = CLI_USAGE;
      goto out;
    }
  }
  if (recover) {
    status = rec_recover(recover, have_o ? output : NULL, quiet);
    goto out;
  }
  if (optind >= argc) {
    record_usage(stderr);
    status = cli_error(CLI_USAGE, "no command to record");
    goto out;
  }
  if (producer) {
    /* The service's trace config decides what is recorded, and where. */
    if (config || nnames || have_o)
      status = cli_error(CLI_USAGE,
                         "--producer: the trace config given to `perfetto` "
                         "says what is recorded; drop -c, -e and -o");
    else
      status = cli_record_producer(argv + optind, quiet);
    goto out;
  }
  status = record_run(config, names, nnames, output, quiet, argv + optind);
out:
  for (size_t i = 0; i < nnames; i++)
    free(names[i]);
  return status;
}
