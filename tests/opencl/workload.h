/*
 * workload.h - the sample OpenCL program's work, as a function.
 *
 * One run exercises what the interception library must see: kernels (1-D,
 * 2-D, a __local argument, a fixed work-group size, a task), every copy
 * kind (buffers, rects, images, image<->buffer, maps, SVM, migrations),
 * fills, markers and barriers, three queues (in-order without profiling,
 * in-order with it, out-of-order) with events crossing between them, a
 * user event, a command that fails, and calls that pass no event.
 *
 * It is an ordinary OpenCL program: it includes nothing of gpuperf. It
 * writes what it computed and what it observed (event reference counts,
 * queue properties, profiling availability) to a stream, deterministic
 * for a given driver, and counts every command it enqueued the way
 * gpuperf records them, so that a test can compare.
 *
 * Built into the sample program (sample_main.c) and into the test binary.
 */
#ifndef GPUPERF_TESTS_OPENCL_WORKLOAD_H
#define GPUPERF_TESTS_OPENCL_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Copy kinds, numbered as gpuperf's gp_memcpy_kind (and CUPTI's). */
enum {
  WL_HTOD = 1,
  WL_DTOH = 2,
  WL_HTOA = 3,
  WL_ATOH = 4,
  WL_ATOA = 5,
  WL_ATOD = 6,
  WL_DTOA = 7,
  WL_DTOD = 8,
  WL_HTOH = 9,
  WL_COPY_KINDS = 11
};

#define WL_MAX_KERNEL_GROUPS 32

/* Launches of one kernel with one shape. */
typedef struct wl_kernel_count {
  char name[32];
  uint32_t grid[3], block[3]; /* work-groups; block 0 = driver's choice */
  uint32_t local_bytes;       /* __local argument bytes */
  unsigned launches;          /* that completed */
  unsigned failed;            /* that ended in an error */
} wl_kernel_count;

typedef struct wl_counts {
  wl_kernel_count kernels[WL_MAX_KERNEL_GROUPS];
  unsigned num_kernel_groups;
  unsigned copies[WL_COPY_KINDS];
  uint64_t copy_bytes[WL_COPY_KINDS];
  unsigned fills;
  uint64_t fill_bytes;
  unsigned markers;      /* markers, barriers, SVM frees: no record */
  unsigned null_events;  /* commands enqueued with no event asked for */
  unsigned commands;     /* kernels + copies + fills */
  unsigned dependencies; /* wait-list edges between recorded commands */
} wl_counts;

typedef struct wl_options {
  int iterations;  /* repetitions of the main phase, >= 1 */
  size_t n;        /* elements per buffer (a multiple of 256) */
  const char *tag; /* prefix of every output line */
} wl_options;

/* Returned when there is no OpenCL device to run on. */
#define WL_NO_DEVICE 77

/*
 * Runs the workload, writing results to out and filling *counts. Returns
 * 0, WL_NO_DEVICE, or another non-zero value after printing the failed
 * call to stderr.
 */
int wl_run(const wl_options *opt, FILE *out, wl_counts *counts);

/*
 * Leaves n long kernels (a spin of ~0.1 s each on a CPU device) queued or
 * running on an in-order queue of a context of its own, flushed and not
 * waited for, and returns: what a process that then dies had in flight.
 * Prints "count busy=N" to out. Returns as wl_run(); the objects are
 * left to the process's end.
 */
int wl_busy(unsigned n, FILE *out);

/* Prints counts as "count ..." lines (what a trace must show). */
void wl_print_counts(const wl_counts *counts, const char *tag, FILE *out);

/* Name of a copy kind ("HtoD"). */
const char *wl_copy_kind_name(int kind);

#endif /* GPUPERF_TESTS_OPENCL_WORKLOAD_H */
