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

/* Exit status: success, usage error, bad input, counters held by someone
 * else (V3D: docs/gpu-linux.md). */
#define CLI_OK 0
#define CLI_USAGE 1
#define CLI_BAD_INPUT 2
#define CLI_BUSY 3

int cmd_list(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_producer(int argc, char **argv);

/* `gpuperf record --producer -- CMD`: runs cmd with GPUPERF_PRODUCER set
 * (cmd_producer.c); returns gpuperf's exit status. */
int cli_record_producer(char **cmd, bool quiet);

/*
 * Adds libgpuperf-opencl.so and libgpuperf-gl.so (found beside the loaded
 * libgpuperf, or named by GPUPERF_OPENCL_LIB and GPUPERF_GL_LIB) to
 * LD_PRELOAD, so that a program run next records its OpenCL and OpenGL
 * calls. GPUPERF_OPENCL=0 and GPUPERF_OPENGL=0 leave one out; sanitizer
 * builds and libraries not found add nothing.
 */
void cli_preload_libraries(void);

/* Like cli_opencl_library(), for libgpuperf-gl.so ($GPUPERF_GL_LIB). */
bool cli_gl_library(char *buf, size_t size);

/*
 * Stores in buf the path of libgpuperf-opencl.so: $GPUPERF_OPENCL_LIB,
 * else beside the libgpuperf.so we run with (the build directory) or in
 * its gpuperf/ subdirectory (an installation). Returns false if it is in
 * none of them (buf then names where it should be).
 */
bool cli_opencl_library(char *buf, size_t size);

/*
 * For `gpuperf record` and `gpuperf stat`, before cmd runs: prints one
 * warning per GPU API that cmd's executable links (libvulkan, libcuda or
 * libcudart; OpenCL's is cli_preload_libraries') whose gpuperf library is
 * not built or not found, naming the fix. tool names the command in the
 * message ("record"). Returns how many it printed.
 */
int cli_warn_missing_libraries(const char *tool, char *const *cmd);

/*
 * Writes into buf (size bytes) why GPU work of cmd may have gone
 * unrecorded: each gpuperf library (Vulkan layer, OpenCL, CUDA) that is
 * not built or not found, with its fix, "; "-separated; only those of the
 * APIs cmd's executable links, if it links any. Returns the length
 * written, 0 if none is missing.
 */
size_t cli_missing_libraries(char *const *cmd, char *buf, size_t size);

/*
 * Sets the variables that make programs started from here load the layer
 * VK_LAYER_GPUPERF_trace as an implicit layer (vulkan_layer.c): its
 * manifest directory first in XDG_DATA_DIRS, GPUPERF_VULKAN_LAYER=1. Does
 * nothing if GPUPERF_VULKAN=0, in sanitizer builds, or if its manifest is
 * not found.
 */
void cli_enable_vulkan_layer(void);

/*
 * Stores in buf the directory of the Vulkan layer's manifests:
 * $GPUPERF_VULKAN_LAYER_DIR, else vulkan/ beside the libgpuperf.so we run
 * with (the build directory) or gpuperf/vulkan/ (an installation). Returns
 * false if the implicit manifest is in none of them (buf then names the
 * first place looked at).
 */
bool cli_vulkan_manifest_dir(char *buf, size_t size);

/* Prints "gpuperf: " and the message to stderr, control characters in it
 * (from file names, trace strings) escaped as gp_tp_put_escaped() does
 * and its own line breaks kept; returns status. */
int cli_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* s (a file name, a trace string) escaped as gp_tp_put_escaped() does,
 * cut to fit, into buf; returns buf. */
const char *cli_escaped(char *buf, size_t size, const char *s);

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

/*
 * `gpuperf query PATTERN ...` on many traces (query_batch.c): runs sql on
 * every trace the glob pattern names, `jobs` at a time (0: one per CPU),
 * and prints one result with a `trace` column. Returns an exit status.
 */
int cli_query_batch(const char *pattern, const char *sql, int format,
                    unsigned jobs, bool keep_going, bool quiet);

/* Whether `query` runs as a batch: a batch option was given, or trace is
 * a glob pattern rather than an existing file. */
bool cli_query_is_batch(const char *trace, bool batch_option);

/*
 * `gpuperf export FILE --to clickhouse://HOST:PORT/DB [--cluster NAME]`
 * (export_clickhouse.c); argv[0] is the command's name. Returns an exit
 * status.
 */
int cli_export_clickhouse(int argc, char **argv);

/* The simulated training step used by `gpuperf demo`. */
typedef struct demo_options {
  uint32_t gpus;
  uint32_t steps;
  bool collective; /* an "allreduce" range around each gradient exchange */
  double jitter;   /* each launch's work varies by up to +-jitter %, drawn
                      from seed: noise for `diff` tests, still
                      deterministic; 0: none */
  uint32_t seed;
  const char *slow; /* this kernel (short name) does slow_pct % more work */
  double slow_pct;
} demo_options;

/* Initialises the simulator with opts->gpus compute devices. */
int demo_sim_init(const demo_options *opts);

/* Runs the workload on the simulated GPUs, initialised before with
 * demo_sim_init(). Returns 0 or a gpuperf error. */
int demo_workload_run(const demo_options *opts);

/*
 * `demo --machines N`: runs the demo as N nodes (child processes), each
 * trace re-timed onto the node's clocks (demo_node_clock) and written to
 * demo_node_path(output, k). Prints the true clock differences. Returns
 * a CLI exit status.
 */
int demo_machines(uint32_t machines, const demo_options *opts,
                  const char *config, const char *output);

/* Node k's true clocks: BOOTTIME = t + boot_off + drift * (t - t0) and
 * REALTIME = t + epoch + real_off, t being the simulated time. */
void demo_node_clock(uint32_t k, int64_t *boot_off, double *drift,
                     int64_t *real_off);

/* The trace file of node k: output with "-nodeK" before its extension. */
void demo_node_path(const char *output, uint32_t k, char *buf, size_t size);

#endif /* GPUPERF_CLI_H */
