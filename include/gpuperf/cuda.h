/*
 * gpuperf/cuda.h - the CUDA collector (CUPTI), and the metrics NVIDIA
 * GPUs can count.
 *
 * These functions live in libgpuperf-cuda.so, which is built only where
 * the CUDA toolkit (with CUPTI) is installed. That library has no core of
 * its own: it writes into the process's one libgpuperf.so, so a program
 * that wants CUDA records through the activity API links
 * -lgpuperf-cuda -lgpuperf, and its records join every other backend's.
 *
 * The usual way in is not this header at all: `gpuperf record -- CMD`
 * sets CUDA_INJECTION64_PATH to libgpuperf-cuda.so, and the CUDA driver
 * loads it and calls its InitializeInjection() while it initialises.
 *
 * What is recorded: kernels (grid, block, shared memory, registers,
 * mangled and demangled names), copies of every kind (peer-to-peer
 * included), fills, runtime and driver API calls, synchronizations,
 * NVTX ranges and markers, CUPTI's own overhead, devices, contexts, names
 * and environment samples, with correlation ids kept, event dependencies
 * as wait ids, and CUPTI's dropped-record counts carried into ours
 * (GP_DROP_SOURCE). See docs/cuda.md.
 */
#ifndef GPUPERF_CUDA_H
#define GPUPERF_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Starts collecting CUDA activity in this process: finds the driver
 * (libcuda.so.1) and at least one device, subscribes to CUPTI and enables
 * its activity kinds; records flow into the activity API like any other
 * backend's (enable the kinds you want with gp_activity_enable()). flags
 * must be 0. Returns 0; GP_ENODEV if there is no driver or no device (the
 * reason is in gp_cuda_status(), starting "no CUDA device"); GP_EBUSY if
 * already started (also by injection); GP_EPERM if the driver refuses
 * profiling; GP_EIO for another CUPTI error; GP_EINVAL for flags.
 */
GP_EXPORT int gp_cuda_start(uint32_t flags);

/*
 * Flushes what CUPTI holds (forced), stops counter sampling, disables
 * CUPTI's activity kinds and unsubscribes. GP_ESTATE if not started.
 */
GP_EXPORT int gp_cuda_stop(void);

/*
 * Why the last start failed (one line, no trailing newline), or "" after
 * a successful start. The string is static; it changes with the next
 * start.
 */
GP_EXPORT const char *gp_cuda_status(void);

/*
 * Copies the chip name ("GH100") of a CUDA device, by its gpuperf device
 * id, into buf (size bytes, NUL-terminated). Needs a started collector
 * and the device present: GP_ENODEV for a device that is not a CUDA one,
 * GP_ESTATE if not started, GP_ESIZE if buf is too small, GP_EIO if CUPTI
 * cannot tell.
 */
GP_EXPORT int gp_cuda_device_chip(uint32_t device_id, char *buf, size_t size);

/*
 * The absolute path of the libcupti this library runs with, or "" if it
 * cannot be told. NVTX ranges reach CUPTI (and so gpuperf) when a program
 * runs with NVTX_INJECTION64_PATH set to it, or to libgpuperf-cuda.so,
 * whose InitializeInjectionNvtx2() hands over to this libcupti's (what
 * `gpuperf record` sets).
 */
GP_EXPORT const char *gp_cuda_cupti_library(void);

/* ------------------------------------------------------------------ */
/* Metric catalogs (the Profiler Host API: works without a GPU)         */

/* Which CUPTI profiler the metrics are for. */
typedef enum gp_cuda_profiler {
  GP_CUDA_PROFILER_RANGE = 0,      /* per kernel (range profiler) */
  GP_CUDA_PROFILER_PM_SAMPLING = 1 /* periodic (PM sampling) */
} gp_cuda_profiler;

/* What a base metric measures; values match CUpti_MetricType. */
typedef enum gp_cuda_metric_type {
  GP_CUDA_METRIC_COUNTER = 0,
  GP_CUDA_METRIC_RATIO = 1,
  GP_CUDA_METRIC_THROUGHPUT = 2
} gp_cuda_metric_type;

/* One base metric. Strings live as long as the catalog. */
typedef struct gp_cuda_metric_info {
  const char *name;        /* base name, "sm__cycles_elapsed" */
  const char *description; /* "" if CUPTI has none */
  const char *hw_unit;     /* the hardware unit counting it, "sm" */
  const char *dim_unit;    /* its dimension, "cycle", "byte" ... */
  uint32_t type;           /* gp_cuda_metric_type */
  uint32_t reserved0;
} gp_cuda_metric_info;

/*
 * Stores the number of chips CUPTI knows in *n and, if names is not NULL,
 * a pointer to their names ("GH100" ...; owned by CUPTI, valid while the
 * library is loaded). GP_EINVAL if n is NULL, GP_EIO if CUPTI fails.
 */
GP_EXPORT int gp_cuda_chips(size_t *n, const char *const **names);

typedef struct gp_cuda_metrics gp_cuda_metrics;

/*
 * Opens the metric catalog of a chip for one profiler. chip is borrowed
 * for the call. Returns GP_ENODEV for a chip CUPTI does not know,
 * GP_EINVAL for NULL arguments or an unknown profiler, GP_EIO for another
 * CUPTI failure; *out is then unchanged. Close with gp_cuda_metrics_close.
 */
GP_EXPORT int gp_cuda_metrics_open(const char *chip, uint32_t profiler,
                                   gp_cuda_metrics **out);

/* Closes a catalog (NULL is accepted). */
GP_EXPORT void gp_cuda_metrics_close(gp_cuda_metrics *m);

/* Number of base metrics in the catalog (all types). */
GP_EXPORT size_t gp_cuda_metrics_count(const gp_cuda_metrics *m);

/*
 * Fills *info for the index-th base metric (sorted by name). GP_ENOENT
 * past the end, GP_EINVAL for NULL.
 */
GP_EXPORT int gp_cuda_metrics_get(gp_cuda_metrics *m, size_t index,
                                  gp_cuda_metric_info *info);

/*
 * Looks up a base metric, or the base of a full name with its rollup
 * ("sm__cycles_elapsed.max" finds sm__cycles_elapsed). GP_ENOCOUNTER if
 * there is none.
 */
GP_EXPORT int gp_cuda_metrics_find(gp_cuda_metrics *m, const char *name,
                                   gp_cuda_metric_info *info);

/*
 * Stores the suffixes a base metric accepts (".sum", ".avg.peak_sustained"
 * ...) in *subs (owned by the catalog) and their number in *n.
 * GP_ENOCOUNTER for an unknown metric.
 */
GP_EXPORT int gp_cuda_metrics_submetrics(gp_cuda_metrics *m, const char *name,
                                         const char *const **subs, size_t *n);

/*
 * Checks that a set of full metric names (with rollups, as
 * "gpu__time_duration.sum") can be collected together, and stores in
 * *passes how many replay passes they need. On GP_ENOCOUNTER, *bad (if
 * not NULL) is the index of the first name CUPTI refused; nothing else
 * changes.
 */
GP_EXPORT int gp_cuda_metrics_plan(gp_cuda_metrics *m, const char *const *names,
                                   size_t num_names, size_t *passes,
                                   size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_CUDA_H */
