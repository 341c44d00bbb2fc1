/*
 * cli.h - what the gpuperf subcommands share: their entry points, exit
 * codes and small argument helpers. The CLI uses the public API only.
 */
#ifndef GPUPERF_CLI_H
#define GPUPERF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuperf/gpuperf.h"

/* Exit status: success, usage error, bad input. */
#define CLI_OK 0
#define CLI_USAGE 1
#define CLI_BAD_INPUT 2

int cmd_list(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/*
 * Adds libgpuperf-opencl.so (found beside the loaded libgpuperf, or named
 * by GPUPERF_OPENCL_LIB) to LD_PRELOAD, so that a program run next records
 * its OpenCL calls. Does nothing with GPUPERF_OPENCL=0, in sanitizer
 * builds, or if the library is not found.
 */
void cli_preload_opencl(void);

/*
 * Prints the OpenCL platforms and devices the ICD loader (opened at run
 * time) reports, or one line saying why there are none. Returns the
 * number of devices printed.
 */
int cli_list_opencl(FILE *out);

/* Prints "gpuperf: " and the message to stderr; returns status. */
int cli_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Parses a whole decimal number in [min, max] into *out. Returns false (and
 * prints an error naming opt) if s is not such a number.
 */
bool cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
                   uint64_t *out);

/* Formats ns as "12.3 us" etc. into buf. */
const char *cli_fmt_ns(char *buf, size_t size, double ns);

/* Formats a byte count as "1.5 MiB" etc. into buf. */
const char *cli_fmt_bytes(char *buf, size_t size, double bytes);

/* The simulated training step used by `gpuperf demo`. */
typedef struct demo_options {
  uint32_t gpus;
  uint32_t steps;
} demo_options;

/* Initialises the simulator with opts->gpus compute devices. */
int demo_sim_init(const demo_options *opts);

/* Runs the workload on the simulated GPUs, initialised before with
 * demo_sim_init(). Returns 0 or a gpuperf error. */
int demo_workload_run(const demo_options *opts);

#endif /* GPUPERF_CLI_H */
