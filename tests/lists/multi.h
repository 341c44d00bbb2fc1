/* lists/multi.h - many machines: host identity, `gpuperf merge`,
 * `demo --machines`. */
GP_TEST_ENTRY(multi_demo_machines_merge_on_one_clock, 60)
GP_TEST_ENTRY(multi_merge_bad_input_is_named, 30)
GP_TEST_ENTRY(multi_batch_query_names_the_failing_trace, 60)
GP_TEST_ENTRY(clickhouse_two_shard_export_matches_ours, 120)
GP_TEST_ENTRY(clickhouse_export_bad_input_is_named, 30)
GP_TEST_ENTRY(clickhouse_fleet_spreads_over_shards, 180)
GP_TEST_ENTRY(clickhouse_failed_reexport_keeps_the_old_copy, 240)
GP_TEST_ENTRY(clickhouse_doc_queries_per_trace, 180)
GP_TEST_ENTRY(merge_rewrites_every_id_and_time, 10)
GP_TEST_ENTRY(merge_bad_arguments_change_nothing, 10)
GP_TEST_ENTRY(merge_failure_keeps_the_output, 10)
GP_TEST_ENTRY(merge_time_past_int64_is_refused, 10)
