/*
 * oclutil.h - helpers of the OpenCL tests: a reproducible PoCL
 * environment, skipping without a device, capture of every kind the
 * interception library writes, walking the captured records, and running
 * programs (the sample, under the preload library) as subprocesses.
 */
#ifndef GPUPERF_TESTS_OPENCL_OCLUTIL_H
#define GPUPERF_TESTS_OPENCL_OCLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/gpuperf.h"

/*
 * Sets the environment for PoCL: the pthread device with two workers, a
 * kernel cache shared by the test run (under $GPUPERF_BUILD), only PoCL's
 * ICD, no debug output. Call before any OpenCL call.
 */
void ocl_env(void);

/* Skips the test unless an OpenCL device can be found (after ocl_env). */
void ocl_require_device(void);

/* The first platform's first device in *dev, and a context of it alone
 * (fails the test if either cannot be had). In OpenCL's own types
 * (cl_context, cl_device_id *), named so that the tests that only run
 * programs need no OpenCL header. */
struct _cl_context;
struct _cl_device_id;
struct _cl_context *ocl_first_context(struct _cl_device_id **dev);

/* Captures records (testutil) and enables every kind the library writes. */
void ocl_capture_all(void);

/* Iterates the captured log: *r = NULL first. Returns false at the end. */
bool ocl_next(const gp_activity **r);

/* The API record with correlation id corr, or NULL. */
const gp_activity_api *ocl_api(uint64_t corr);

/* Name of an API record's call. */
const char *ocl_api_name(const gp_activity_api *a);

/* Path of a file in the build directory ($GPUPERF_BUILD), or NULL. */
const char *ocl_build_path(const char *name, char *buf, size_t size);

/*
 * Runs argv (argv[0] a path) with extra environment entries ("K=V", NULL
 * terminated, may be NULL), stdout into *out (malloc'ed, NUL-terminated)
 * and stderr into *err (same, may be NULL). Returns the exit status, or
 * 128 + signal. Fails the test if it cannot run it or it runs past
 * timeout_s.
 */
int ocl_run(char *const argv[], char *const env[], int timeout_s, char **out,
            char **err);

#endif /* GPUPERF_TESTS_OPENCL_OCLUTIL_H */
