/* lists/tp.h - tests of the trace processor, query and report. */

/* Perfetto's own GPU diff tests */
GP_TEST_ENTRY(tp_conformance_all_cases, 120)

/* import: diff tests on small traces */
GP_TEST_ENTRY(tp_import_compressed_packets, 20)
GP_TEST_ENTRY(tp_spill_gives_the_same_rows, 60)
GP_TEST_ENTRY(tp_stream_rows_equal_the_tables, 60)
GP_TEST_ENTRY(tp_stream_failure_stops_the_import, 20)
GP_TEST_ENTRY(tp_import_clocks, 20)
GP_TEST_ENTRY(tp_import_incremental_state, 20)
GP_TEST_ENTRY(tp_import_flows_both_orders, 20)
GP_TEST_ENTRY(tp_import_overlapping_stages_compress, 20)
GP_TEST_ENTRY(tp_import_machines, 20)
GP_TEST_ENTRY(tp_import_unknown_fields_skipped, 20)
GP_TEST_ENTRY(tp_import_track_events, 20)
GP_TEST_ENTRY(tp_import_trace_bounds, 20)
GP_TEST_ENTRY(tp_import_vulkan_memory, 20)
GP_TEST_ENTRY(tp_import_orders_packets_stably, 60)
GP_TEST_ENTRY(tp_import_dma_fence_rules, 20)
GP_TEST_ENTRY(tp_import_gpu_ftrace_events, 20)
GP_TEST_ENTRY(tp_ftrace_desc_matches_protos, 20)
GP_TEST_ENTRY(tp_import_raw_and_sys_stats, 20)
GP_TEST_ENTRY(tp_order_queues_as_perfettos_sorter, 20)
GP_TEST_ENTRY(tp_order_ftrace_cpu_past_the_maximum, 20)
GP_TEST_ENTRY(tp_order_descriptors_described_twice, 20)
GP_TEST_ENTRY(tp_order_service_windows, 20)

/* PerfettoSQL */
GP_TEST_ENTRY(tp_sql_interval_intersect_semantics, 20)
GP_TEST_ENTRY(tp_sql_interval_intersect_large_is_linearithmic, 60)
GP_TEST_ENTRY(tp_sql_counter_leading_intervals, 20)
GP_TEST_ENTRY(tp_sql_counter_intervals_lookups, 20)
GP_TEST_ENTRY(tp_sql_interval_inputs_equal_or_not, 20)
GP_TEST_ENTRY(tp_sql_interval_cte_read_from_its_body, 20)
GP_TEST_ENTRY(tp_sql_interval_cte_read_by_tracks, 20)
GP_TEST_ENTRY(tp_sql_interval_cte_by_tracks_falls_back, 20)
GP_TEST_ENTRY(tp_sql_interval_cte_by_tracks_errors, 20)
GP_TEST_ENTRY(tp_sql_counter_rows_by_tracks, 20)
GP_TEST_ENTRY(tp_sql_macros, 20)
GP_TEST_ENTRY(tp_sql_modules_and_statements, 20)
GP_TEST_ENTRY(tp_sql_create_perfetto_objects, 20)

/* the public API */
GP_TEST_ENTRY(tp_api_typed_rows, 20)
GP_TEST_ENTRY(tp_api_errors_carry_messages, 20)
GP_TEST_ENTRY(tp_api_open_failures, 20)
GP_TEST_ENTRY(tp_api_formats, 20)
GP_TEST_ENTRY(tp_api_result_sets_side_by_side, 20)

/* bad input */
GP_TEST_ENTRY(tp_corrupt_random_bytes, 60)
GP_TEST_ENTRY(tp_corrupt_truncated_at_every_offset, 60)
GP_TEST_ENTRY(tp_corrupt_length_past_end, 20)
GP_TEST_ENTRY(tp_corrupt_field_numbers, 10)
GP_TEST_ENTRY(tp_corrupt_deep_nesting, 60)
GP_TEST_ENTRY(tp_corrupt_cli_exit_status, 30)

/* --db */
GP_TEST_ENTRY(tp_db_reuse_and_invalidate, 30)
GP_TEST_ENTRY(tp_db_refuses_foreign_files, 20)
GP_TEST_ENTRY(tp_db_cli, 30)

/* the CLI */
GP_TEST_ENTRY(tp_cli_query, 30)
GP_TEST_ENTRY(tp_cli_query_errors, 30)
GP_TEST_ENTRY(tp_cli_report, 30)

/* the seed's example query */
GP_TEST_ENTRY(tp_seed_query_synthetic, 30)
GP_TEST_ENTRY(tp_seed_query_on_demo, 120)

/* the fuzz corpus and past crashes */
GP_TEST_ENTRY(tp_fuzz_replay, 120)
GP_TEST_ENTRY(tp_cli_report_host_calls_on_demo, 60)
