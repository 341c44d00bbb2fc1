/* lists/gpulinux.h - tests of real-GPU counters on Linux (issue 12): the
 * busy counter derived from the activity timeline. */

/* api: derived Utilization on PoCL, the seed query recomputed */
GP_TEST_ENTRY(derived_utilization_opencl_sample, 240)
GP_TEST_ENTRY(derived_utilization_clpeak, 300)
