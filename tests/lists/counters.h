/* lists/counters.h - tests of counters, perfmons, monitors, sampling, perf_event. */

/* api: catalogs and perfmons */
GP_TEST_ENTRY(counters_catalogs_published, 10)
GP_TEST_ENTRY(counters_select_names_and_globs, 10)
GP_TEST_ENTRY(perfmon_create_rejects_bad_sets, 10)
GP_TEST_ENTRY(perfmon_two_clients_get_own_counts, 20)
GP_TEST_ENTRY(perfmon_same_perfmon_no_switch, 10)
GP_TEST_ENTRY(perfmon_values_through_fence, 10)
GP_TEST_ENTRY(perfmon_global_conflicts, 10)
GP_TEST_ENTRY(perfmon_destroy_with_jobs_in_flight, 10)
