/*
 * main.c - the gpuperf command line: dispatch to subcommands.
 *
 * Subcommands follow Linux perf where the meaning is the same. Each lives
 * in its own cmd_*.c and uses only the public API of libgpuperf.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_cuda.h"
#include "gpuperf/tp.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"list", cmd_list, "list devices (and what can be measured on them)"},
    {"demo", cmd_demo,
     "run a simulated two-GPU training step and summarise it"},
    {"stat", cmd_stat, "run a program and print its counter totals"},
    {"record", cmd_record, "record a program's GPU work into a Perfetto trace"},
    {"report", cmd_report,
     "summarise a trace: kernels, queues, API calls, counters"},
    {"query", cmd_query, "run SQL (PerfettoSQL) on a trace"},
    {"top", cmd_top, "live view of GPUs, GPU processes and their kernels"},
    {"export", cmd_export,
     "write a trace as Chrome JSON or CSV, or into ClickHouse (--to)"},
    {"diff", cmd_diff, "compare two traces: kernels, copies, busy, counters"},
    {"merge", cmd_merge, "merge the traces of several machines on one clock"},
    {"producer", cmd_producer,
     "offer this machine's GPU counters to Perfetto's tracing service"},
    {"cuda", cmd_cuda, "CUDA devices and the metrics NVIDIA GPUs can count"},
};

/*
 * GPUPERF_HUD is for the programs `record` and `stat` run, not for this
 * process: the library leaves it to us (gpuperf/hud.h), and the HUD is
 * started here only for `demo`, whose GPU work is in this process.
 */
GP_EXPORT const int gp_hud_at_load = 0;

/* GPUPERF_HUD for the command cmd: shown for demo's own work; for a
 * program run by record or stat, help is printed here, on stderr, and the
 * program runs without the HUD (it would print the list and exit). */
static void hud_for(const char *cmd) {
  const char *v = getenv("GPUPERF_HUD");
  if (!v || !*v)
    return;
  if (strcmp(cmd, "demo") == 0) {
    gp_hud_start_from_env();
  } else if (strcmp(v, "help") == 0 &&
             (strcmp(cmd, "record") == 0 || strcmp(cmd, "stat") == 0)) {
    gp_hud_help_print(stderr);
    fprintf(stderr,
            "\ngpuperf %s: GPUPERF_HUD=help: the program runs without "
            "the HUD\n\n",
            cmd);
    unsetenv("GPUPERF_HUD");
  }
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: gpuperf [--version] [--help] COMMAND [ARGS]\n\n"
          "gpuperf is perf for GPUs: it records what GPUs did and what their\n"
          "counters said.\n\n"
          "commands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out,
          "\nRun 'gpuperf COMMAND --help' for the options of a command.\n");
}

/* See cli.h. */
int cli_error(int status, const char *fmt, ...) {
  va_list ap;
  char *msg = NULL;
  va_start(ap, fmt);
  int n = vasprintf(&msg, fmt, ap);
  va_end(ap);
  fputs("gpuperf: ", stderr);
  if (n < 0) {
    fputs(fmt, stderr); /* out of memory: at least what went wrong */
  } else {
    /* File names and trace strings in the message cannot drive the
     * terminal; the message's own line breaks stay. */
    for (char *line = msg, *nl; line; line = nl) {
      if ((nl = strchr(line, '\n')))
        *nl++ = '\0';
      gp_tp_put_escaped(stderr, line);
      if (nl)
        fputc('\n', stderr);
    }
  }
  free(msg);
  fputc('\n', stderr);
  return status;
}

/* See cli.h. */
const char *cli_escaped(char *buf, size_t size, const char *s) {
  FILE *m = size > 1 ? fmemopen(buf, size, "w") : NULL;
  if (!m) {
    if (size)
      buf[0] = '\0';
    return buf;
  }
  setvbuf(m, NULL, _IONBF, 0);
  gp_tp_put_escaped(m, s);
  fclose(m);
  buf[size - 1] = '\0';
  return buf;
}

/* See cli.h. */
bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
                   uint64_t *out) {
  char *end = NULL;
  if (!s || !*s || *s == '-') {
    cli_error(CLI_USAGE, "%s needs a number", opt);
    return false;
  }
  unsigned long long v = strtoull(s, &end, 10);
  if (*end != '\0' || v < min || v > max) {
    cli_error(CLI_USAGE, "%s: '%s' is not a number from %llu to %llu", opt, s,
              (unsigned long long)min, (unsigned long long)max);
    return false;
  }
  *out = v;
  return true;
}

/* See cli.h. */
const char *cli_fmt_ns(char *buf, size_t size, double ns) {
  if (ns >= 1e9)
    snprintf(buf, size, "%.3f s", ns / 1e9);
  else if (ns >= 1e6)
    snprintf(buf, size, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    snprintf(buf, size, "%.3f us", ns / 1e3);
  else
    snprintf(buf, size, "%.0f ns", ns);
  return buf;
}

/* See cli.h. */
const char *cli_fmt_bytes(char *buf, size_t size, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
      strcmp(cmd, "help") == 0) {
    usage(stdout);
    return CLI_OK;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("gpuperf %s\n", gp_version());
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(cmd, commands[i].name) == 0) {
      hud_for(cmd);
      return commands[i].run(argc - 1, argv + 1);
    }
  return cli_error(CLI_USAGE,
                   "'%s' is not a gpuperf command (see gpuperf --help)", cmd);
}
