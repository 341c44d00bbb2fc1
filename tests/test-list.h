/*
 * test-list.h - the registry of every test: GP_TEST_ENTRY(name, timeout_s).
 * A test listed here is declared by harness.h and run by harness.c; one
 * defined but not listed is a compile error (-Wmissing-prototypes).
 */

/* unit: errors, strings, clocks, activity buffers */
GP_TEST_ENTRY(error_names_and_messages, 10)
GP_TEST_ENTRY(strings_intern_roundtrip, 10)
GP_TEST_ENTRY(strings_many_grow_the_index, 30)
GP_TEST_ENTRY(strings_concurrent_interning_agrees, 30)
GP_TEST_ENTRY(clock_tracks_boottime, 30)
GP_TEST_ENTRY(clock_without_tsc, 10)
GP_TEST_ENTRY(clock_monotonic_per_thread, 60)
GP_TEST_ENTRY(clock_device_mapping, 10)
GP_TEST_ENTRY(clock_host_clocks, 10)
GP_TEST_ENTRY(activity_record_layout, 10)
GP_TEST_ENTRY(activity_iterate_and_skip_unknown, 10)
GP_TEST_ENTRY(activity_iterate_rejects_corrupt_headers, 10)
GP_TEST_ENTRY(activity_wait_ids_tail, 10)
GP_TEST_ENTRY(activity_enable_disable_global, 10)
GP_TEST_ENTRY(activity_enable_disable_per_context, 20)
GP_TEST_ENTRY(activity_attributes, 10)
GP_TEST_ENTRY(activity_callbacks_required, 10)
GP_TEST_ENTRY(activity_flush_delivers_partial_buffers, 10)
GP_TEST_ENTRY(activity_thread_exit_hands_over_buffer, 10)
GP_TEST_ENTRY(activity_max_records_per_buffer, 10)
GP_TEST_ENTRY(activity_periodic_flush, 20)
GP_TEST_ENTRY(activity_drop_reasons, 10)
GP_TEST_ENTRY(activity_dropped_per_context, 10)
GP_TEST_ENTRY(activity_four_threads_accounting, 120)
GP_TEST_ENTRY(activity_finalize_flushes_and_disables, 10)

/* unit: protobuf wire format */
GP_TEST_ENTRY(pb_scalars_roundtrip, 10)
GP_TEST_ENTRY(pb_nested_across_chunks, 10)
GP_TEST_ENTRY(pb_writer_misuse_sets_error, 10)
GP_TEST_ENTRY(pb_reader_rejects_malformed_input, 10)

/* api: markers and the simulated GPUs */
GP_TEST_ENTRY(markers_ranges_and_records, 10)
GP_TEST_ENTRY(markers_depth_limit, 10)
GP_TEST_ENTRY(sim_api_kernel_correlation, 20)
GP_TEST_ENTRY(sim_dependency_waits_and_overlap, 20)
GP_TEST_ENTRY(sim_copy_kinds, 20)
GP_TEST_ENTRY(sim_invalid_arguments_change_nothing, 20)
GP_TEST_ENTRY(sim_failed_calls_are_recorded, 10)
GP_TEST_ENTRY(sim_deterministic_records, 30)
GP_TEST_ENTRY(sim_forced_flush_retires_work_in_flight, 20)
GP_TEST_ENTRY(sim_device_context_name_records, 20)
GP_TEST_ENTRY(sim_environment_samples, 20)
GP_TEST_ENTRY(sim_real_time_mode, 20)
