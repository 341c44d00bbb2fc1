/* lists/writer.h - tests of the trace writer, the TraceConfig text format,
 * sessions, `gpuperf demo` and `gpuperf record`. */

/* unit: the writer through our own decoder */
GP_TEST_ENTRY(writer_roundtrip_every_field, 20)
GP_TEST_ENTRY(writer_deterministic_bytes, 30)
GP_TEST_ENTRY(writer_golden_small_trace, 20)
GP_TEST_ENTRY(writer_drops_clear_incremental_state, 10)
GP_TEST_ENTRY(writer_counters_interned_descriptor, 10)
GP_TEST_ENTRY(writer_counters_inline_descriptor, 10)
GP_TEST_ENTRY(writer_dump_matches_perfetto_decoding, 20)
GP_TEST_ENTRY(writer_machine_id_on_every_packet, 10)
GP_TEST_ENTRY(writer_failed_write_is_marked_and_recovered, 10)
GP_TEST_ENTRY(writer_device_snapshots_all_or_marked_lost, 20)
GP_TEST_ENTRY(writer_time_zero_is_written, 10)
GP_TEST_ENTRY(session_write_errors_are_reported, 20)

/* unit: the TraceConfig text format */
GP_TEST_ENTRY(tconfig_every_field_and_roundtrip, 10)
GP_TEST_ENTRY(tconfig_unhonourable_fields_refused, 10)
GP_TEST_ENTRY(tconfig_defaults_and_add_counters, 10)
GP_TEST_ENTRY(tconfig_bad_input_names_line_and_column, 10)
GP_TEST_ENTRY(tconfig_linux_ftrace, 10)
GP_TEST_ENTRY(tconfig_nothing_recorded_on_error, 10)

/* api: sessions, `gpuperf record` and `gpuperf demo` */
GP_TEST_ENTRY(record_children_get_sequences_and_status, 30)
GP_TEST_ENTRY(record_exec_children, 30)
GP_TEST_ENTRY(record_sigkill_leaves_a_readable_trace, 30)
GP_TEST_ENTRY(record_cli_keeps_whole_packets_of_a_killed_program, 30)
GP_TEST_ENTRY(record_duration_ms_ends_the_recording, 30)
GP_TEST_ENTRY(record_bad_config_runs_nothing, 20)
GP_TEST_ENTRY(record_e_selects_counters, 30)
GP_TEST_ENTRY(demo_writes_the_same_trace_twice, 30)
GP_TEST_ENTRY(demo_long_traces_are_byte_identical, 60)
GP_TEST_ENTRY(session_start_errors_leave_nothing, 20)
GP_TEST_ENTRY(session_counters_from_the_catalog, 30)
GP_TEST_ENTRY(session_instrumented_counters_inside_kernels, 30)

/* robustness: mutated configs and traces */
GP_TEST_ENTRY(tconfig_survives_mutated_input, 60)
GP_TEST_ENTRY(writer_dump_survives_corrupt_traces, 60)
GP_TEST_ENTRY(writer_untimed_gpu_work, 20)
GP_TEST_ENTRY(writer_overhead_slices_named_by_kind, 20)
GP_TEST_ENTRY(writer_module_function_instants_in_a_recorded_trace, 20)
GP_TEST_ENTRY(writer_marker_attributes_as_args, 20)
GP_TEST_ENTRY(writer_device_attributes_in_gpu_info, 20)
GP_TEST_ENTRY(writer_events_and_metrics_in_a_recorded_trace, 30)
GP_TEST_ENTRY(writer_instances_without_their_event, 30)
GP_TEST_ENTRY(writer_source_level_instants_in_a_recorded_trace, 20)
GP_TEST_ENTRY(writer_source_level_is_off_by_default, 20)
GP_TEST_ENTRY(record_processes_without_gpu_work_leave_no_trace, 60)

/* unit: Perfetto's producer protocol against the documented bytes */
GP_TEST_ENTRY(producer_abi_frames_match_the_documented_bytes, 10)
GP_TEST_ENTRY(producer_abi_bind_reply_and_split, 10)
GP_TEST_ENTRY(producer_abi_commands_decode, 10)
GP_TEST_ENTRY(producer_abi_binary_config_means_what_the_text_means, 10)
GP_TEST_ENTRY(producer_abi_chunk_layout, 10)
GP_TEST_ENTRY(producer_abi_full_buffer_drops_and_counts, 10)
GP_TEST_ENTRY(producer_abi_fuzz_corpus_replays, 20)

/* api: the producer with real programs, against the protocol's service
 * side (tests/programs/perfetto_peer) and Perfetto's own where given */
GP_TEST_ENTRY(producer_demo_gives_the_rows_of_the_file, 60)
GP_TEST_ENTRY(producer_service_flush_stop_and_clear_drive_the_sessions, 60)
GP_TEST_ENTRY(producer_full_shared_memory_is_never_silent, 60)
GP_TEST_ENTRY(producer_without_a_service_changes_nothing, 30)
GP_TEST_ENTRY(producer_cli_errors_are_clear, 30)
GP_TEST_ENTRY(producer_record_opencl_and_system_counters, 90)
GP_TEST_ENTRY(producer_program_death_and_service_death, 60)
GP_TEST_ENTRY(producer_record_vulkan, 120)
GP_TEST_ENTRY(producer_hung_service_costs_at_most_the_handshake, 60)
GP_TEST_ENTRY(producer_unsealed_shrinking_memory_is_refused, 60)
GP_TEST_ENTRY(producer_flush_into_a_full_buffer_then_death_does_not_hang, 200)
GP_TEST_ENTRY(producer_with_perfettos_service, 120)

/* api: the producer through a restart of the service (the peer, and
 * Perfetto's traced where GPUPERF_PERFETTO_BIN is set), and in one trace
 * with traced_probes' data */
GP_TEST_ENTRY(producer_reconnects_to_a_restarted_peer, 90)
GP_TEST_ENTRY(producer_daemon_reconnects_to_a_restarted_peer, 60)
GP_TEST_ENTRY(producer_survives_a_restart_of_perfettos_service, 120)
GP_TEST_ENTRY(producer_record_and_daemon_survive_a_restart_of_perfettos_service,
              120)
GP_TEST_ENTRY(producer_shares_processes_with_traced_probes, 120)

/* api: the gpu.counters config's rules (test_config_rules.c) */
GP_TEST_ENTRY(config_activity_ranges_count_across_gpus, 60)
GP_TEST_ENTRY(config_activity_ranges_count_across_processes, 60)
GP_TEST_ENTRY(config_activity_ranges_unshared_warns, 60)
GP_TEST_ENTRY(config_mode1_keeps_configured_ids, 60)
GP_TEST_ENTRY(config_both_samplings_same_groups, 60)
GP_TEST_ENTRY(config_unmatched_suffix_warns_once, 60)
GP_TEST_ENTRY(config_unmatched_renderstages_suffix_warns_once, 60)
GP_TEST_ENTRY(config_renderstages_suffix_names_devices, 60)
GP_TEST_ENTRY(config_vendor_suffix_rule, 10)
GP_TEST_ENTRY(writer_cdp_and_unified_memory_in_a_recorded_trace, 30)
