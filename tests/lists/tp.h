/* lists/tp.h - tests of the trace processor, query and report. */

/* Perfetto's own GPU diff tests */
GP_TEST_ENTRY(tp_conformance_all_cases, 120)

/* import: diff tests on small traces */
GP_TEST_ENTRY(tp_import_compressed_packets, 20)
GP_TEST_ENTRY(tp_import_clocks, 20)
GP_TEST_ENTRY(tp_import_incremental_state, 20)
GP_TEST_ENTRY(tp_import_flows_both_orders, 20)
GP_TEST_ENTRY(tp_import_overlapping_stages_compress, 20)
GP_TEST_ENTRY(tp_import_machines, 20)
GP_TEST_ENTRY(tp_import_unknown_fields_skipped, 20)
GP_TEST_ENTRY(tp_import_track_events, 20)
GP_TEST_ENTRY(tp_import_trace_bounds, 20)
GP_TEST_ENTRY(tp_import_vulkan_memory, 20)

/* PerfettoSQL */
GP_TEST_ENTRY(tp_sql_interval_intersect_semantics, 20)
GP_TEST_ENTRY(tp_sql_interval_intersect_large_is_linearithmic, 60)
GP_TEST_ENTRY(tp_sql_counter_leading_intervals, 20)
GP_TEST_ENTRY(tp_sql_macros, 20)
GP_TEST_ENTRY(tp_sql_modules_and_statements, 20)
GP_TEST_ENTRY(tp_sql_create_perfetto_objects, 20)
