/* lists/counters.h - tests of counters, perfmons, monitors, sampling,
 * perf_event. */

/* api: catalogs and perfmons */
GP_TEST_ENTRY(counters_catalogs_published, 10)
GP_TEST_ENTRY(counters_select_names_and_globs, 10)
GP_TEST_ENTRY(perfmon_create_rejects_bad_sets, 10)
GP_TEST_ENTRY(perfmon_two_clients_get_own_counts, 20)
GP_TEST_ENTRY(perfmon_same_perfmon_no_switch, 10)
GP_TEST_ENTRY(perfmon_values_through_fence, 10)
GP_TEST_ENTRY(perfmon_global_conflicts, 10)
GP_TEST_ENTRY(perfmon_destroy_with_jobs_in_flight, 10)
GP_TEST_ENTRY(perfmon_add_n_matches_one_by_one, 20)
GP_TEST_ENTRY(perfmon_runs_sum_like_one_by_one, 10)
GP_TEST_ENTRY(perfmon_busy_union_across_queues, 10)

/* api: monitors (GL_AMD_performance_monitor) */
GP_TEST_ENTRY(monitor_groups_and_counters, 10)
GP_TEST_ENTRY(monitor_misuse_errors, 10)
GP_TEST_ENTRY(monitor_results_match_jobs, 10)

/* api: sampling and the filter pipeline */
GP_TEST_ENTRY(sampling_config_validation, 10)
GP_TEST_ENTRY(sampling_periodic_windows, 20)
GP_TEST_ENTRY(sampling_multiplexed_takes_turns, 30)
GP_TEST_ENTRY(sampling_seed_example_filter, 20)
GP_TEST_ENTRY(sampling_exclude_beats_include, 10)
GP_TEST_ENTRY(sampling_name_bases_and_ranges, 20)
GP_TEST_ENTRY(sampling_instrumented_values, 10)
GP_TEST_ENTRY(sampling_derived_stop_outlasts_the_buffer_pool, 30)
GP_TEST_ENTRY(sampling_derived_ignores_ends_past_the_present, 30)
GP_TEST_ENTRY(sampling_log_drops_jobs_ended_behind_a_long_one, 20)
GP_TEST_ENTRY(counter_round_matches_llround, 10)
GP_TEST_ENTRY(sim_device_time_matches_128_bit_formula, 10)

/* api: EVENT, METRIC and their instances (test_event_kinds.c) */
GP_TEST_ENTRY(sim_events_add_up_from_their_instances, 20)
GP_TEST_ENTRY(sim_metrics_follow_from_their_events, 20)
GP_TEST_ENTRY(sim_metric_without_requests_is_invalid, 20)
GP_TEST_ENTRY(sim_v3d_event_overflows_its_32_bits, 20)
GP_TEST_ENTRY(sim_event_kinds_follow_their_enables, 20)

/* cli: list, GPUPERF_HUD=help, stat */
GP_TEST_ENTRY(cli_list_counters, 20)
GP_TEST_ENTRY(cli_hud_help_prints_list, 60)
GP_TEST_ENTRY(list_shows_every_counter_record_accepts, 400)
GP_TEST_ENTRY(cli_stat_totals_per_counter_and_kernel, 30)
GP_TEST_ENTRY(cli_stat_children_and_errors, 30)

/* api: stat against an independent truth (issue 26) */
GP_TEST_ENTRY(stat_utilization_on_every_simulated_device, 60)
GP_TEST_ENTRY(stat_utilization_is_the_kernels_share_clpeak, 180)
GP_TEST_ENTRY(stat_vulkan_gpu_section_vkcube, 300)
GP_TEST_ENTRY(stat_repeat_leaves_a_crashed_run_out, 60)

/* api: stat beside perf stat (issue 32 item 8) */
GP_TEST_ENTRY(stat_repeat_keeps_thousands_separators, 60)
GP_TEST_ENTRY(stat_user_and_sys_are_the_childrens_rusage, 60)
GP_TEST_ENTRY(stat_rates_per_second, 60)
GP_TEST_ENTRY(stat_multiplexes_beyond_capacity, 60)
GP_TEST_ENTRY(stat_multiplexed_not_counted, 30)
GP_TEST_ENTRY(stat_multiplexes_the_v3d, 30)

/* api: the host CPU through perf_event */
GP_TEST_ENTRY(perf_event_host_catalog_and_perfmon, 20)
GP_TEST_ENTRY(perf_event_periodic_sampling, 20)
GP_TEST_ENTRY(perf_event_refused_names_paranoid, 10)
GP_TEST_ENTRY(perf_event_unprivileged_process, 20)
