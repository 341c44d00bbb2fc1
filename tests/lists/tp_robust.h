/* lists/tp_robust.h - the trace processor on hostile input (linear on
 * shapes that make a careless importer quadratic, exact on overflow),
 * --db identity and damage, safe query output, and table parity with
 * Perfetto's trace processor. */
GP_TEST_ENTRY(tp_hostile_overlapping_stages_linear, 120)
GP_TEST_ENTRY(tp_hostile_descending_clocks_linear, 120)
GP_TEST_ENTRY(tp_hostile_tid_reuse_linear, 120)
GP_TEST_ENTRY(tp_hostile_clock_snapshots_any_order, 20)
GP_TEST_ENTRY(tp_hostile_many_clocks_memory_proportional, 60)
GP_TEST_ENTRY(tp_hostile_clock_series_extended, 20)
GP_TEST_ENTRY(tp_hostile_trace_config_sources_linear, 120)
GP_TEST_ENTRY(tp_hostile_report_many_gpus_linear, 120)
GP_TEST_ENTRY(tp_overflow_stage_end_saturates, 20)

/* --db identity and damage; what query shows (test_output.c) */
GP_TEST_ENTRY(tp_db_content_change_in_the_middle, 30)
GP_TEST_ENTRY(tp_db_damaged_file_rebuilt_with_warning, 30)
GP_TEST_ENTRY(tp_db_damaged_table_rebuilt_by_query, 30)
GP_TEST_ENTRY(tp_cli_json_is_valid_utf8, 30)
GP_TEST_ENTRY(tp_cli_terminal_output_escaped, 30)

/* the progress line on a terminal (test_progress.c) */
GP_TEST_ENTRY(tp_progress_percent_and_time_left, 120)

/* our tables against Perfetto v58.2's (test_parity.c) */
GP_TEST_ENTRY(tp_parity_demo_tables, 60)
GP_TEST_ENTRY(tp_parity_track_descriptor_rules, 20)
GP_TEST_ENTRY(tp_parity_track_hierarchy_faults, 30)
GP_TEST_ENTRY(tp_parity_recorded_opencl, 120)
GP_TEST_ENTRY(tp_parity_conformance_tables, 120)
GP_TEST_ENTRY(tp_parity_demo_all_tables, 60)
GP_TEST_ENTRY(tp_systrace_tables_equal_perfettos, 120)
GP_TEST_ENTRY(tp_systrace_live_with_perfetto, 300)
GP_TEST_ENTRY(tp_systrace_queries_known, 10)
GP_TEST_ENTRY(tp_parity_live_with_perfetto, 300)
GP_TEST_ENTRY(tp_stats_hostile_match_perfetto, 20)
GP_TEST_ENTRY(tp_stats_live_with_perfetto, 120)
GP_TEST_ENTRY(tp_stats_trace_loss_match_perfetto, 20)
GP_TEST_ENTRY(tp_stats_ftrace_parse_errors_fail, 20)
