/*
 * cli_cuda.h - the CLI's way to the CUDA collector, libgpuperf-cuda.so.
 *
 * The CLI links libgpuperf only; the CUDA collector is a library of its
 * own, built where the toolkit is, and installed beside libgpuperf. The
 * CLI finds it at run time (so one CLI serves machines with and without
 * CUDA) and reaches its gp_cuda_* functions with dlsym.
 */
#ifndef GPUPERF_CLI_CUDA_H
#define GPUPERF_CLI_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Stores the absolute path of libgpuperf-cuda.so in buf: $GPUPERF_CUDA_LIB
 * if set, else the file beside the libgpuperf.so the CLI runs with.
 * Returns false (buf holding the path tried) if there is no such file.
 */
bool cli_cuda_library(char *buf, size_t size);

/*
 * `gpuperf cuda`: the CUDA devices and what they can count, or one chip's
 * metrics without a GPU.
 */
int cmd_cuda(int argc, char **argv);

/*
 * Prints, for `gpuperf list`, each CUDA device with its counters (its
 * chip's metrics). Prints nothing where the CUDA collector is not built
 * or there is no CUDA device (`gpuperf cuda` says why).
 */
void cli_cuda_list_note(FILE *out);

/*
 * For `gpuperf record`, in the child about to run the program: sets
 * CUDA_INJECTION64_PATH to libgpuperf-cuda.so, so that the CUDA driver
 * loads the collector, and NVTX_INJECTION64_PATH to the same library,
 * which hands NVTX on to its libcupti, so that NVTX ranges reach it.
 * Values already in the environment are kept (the user's choice). Does
 * nothing where the collector is not built. Returns true if
 * CUDA_INJECTION64_PATH names the collector.
 */
bool cli_cuda_record_env(void);

#endif /* GPUPERF_CLI_CUDA_H */
