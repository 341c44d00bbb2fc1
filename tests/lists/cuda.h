/* lists/cuda.h - tests of the CUDA/CUPTI collector. They skip where the
 * CUDA toolkit was not found at build time (mk/cuda.mk). */

/* api: translation of CUPTI records (test_cuda_translate.c) */
GP_TEST_ENTRY(cuda_translate_every_kind, 20)
GP_TEST_ENTRY(cuda_translate_code_and_device_attributes, 20)
GP_TEST_ENTRY(cuda_own_device_attributes_replace_cuptis, 20)
GP_TEST_ENTRY(cuda_kernel_names_are_not_trusted_by_address, 20)
GP_TEST_ENTRY(cuda_measured_kernels_are_placed_at_their_launch, 20)
GP_TEST_ENTRY(cuda_translate_timestamps_follow_the_cupti_clock, 20)
GP_TEST_ENTRY(cuda_translate_disabled_and_unknown_kinds, 20)
GP_TEST_ENTRY(cuda_dropped_records_are_carried, 20)
/* api: CDP kernels, preemptions, unified memory (test_cuda_translate_dp.c) */
GP_TEST_ENTRY(cuda_translate_cdp_kernels_and_preemptions, 20)
GP_TEST_ENTRY(cuda_translate_unified_memory_counters, 20)
GP_TEST_ENTRY(cuda_translate_mps_contexts, 20)
GP_TEST_ENTRY(cuda_buffer_pool_is_bounded, 20)

/* api: events and metrics (test_cuda_translate_events.c) */
GP_TEST_ENTRY(cuda_translate_events_and_metrics, 20)
GP_TEST_ENTRY(cuda_cupti_refuses_buffers_of_events, 20)
GP_TEST_ENTRY(cuda_measured_values_become_metric_records, 20)
/* api: the source-level records (test_cuda_translate_source.c) */
GP_TEST_ENTRY(cuda_translate_source_level_records, 20)
GP_TEST_ENTRY(cuda_source_level_records_in_a_cupti_buffer, 20)
GP_TEST_ENTRY(cuda_source_level_refusal_is_said_once, 20)

/* api: what the callbacks feed (test_cuda_callbacks.c) */
GP_TEST_ENTRY(cuda_event_dependencies_become_wait_ids, 20)
GP_TEST_ENTRY(cuda_deps_table_is_bounded, 60)
GP_TEST_ENTRY(cuda_nvtx_calls_become_ranges_and_markers, 20)
GP_TEST_ENTRY(cuda_nvtx_attributes_become_marker_data, 20)
GP_TEST_ENTRY(cuda_api_names_and_demangling, 20)
GP_TEST_ENTRY(cuda_callbacks_reach_subscribers, 20)
GP_TEST_ENTRY(cuda_sync_callbacks_name_their_call, 20)
GP_TEST_ENTRY(cuda_stream_end_reaches_resource_subscribers, 20)
GP_TEST_ENTRY(cuda_module_callbacks_become_module_records, 20)

/* api: the collector, the catalogs, the CLI, the device check script
 * (test_cuda_collector.c) */
GP_TEST_ENTRY(cuda_collector_loads_without_cuda, 30)
GP_TEST_ENTRY(cuda_collector_with_the_driver_stub, 30)
GP_TEST_ENTRY(cuda_record_injects_the_collector, 30)
GP_TEST_ENTRY(cuda_metric_catalogs_offline, 60)
GP_TEST_ENTRY(cuda_sampling_configuration, 30)
GP_TEST_ENTRY(cuda_counter_environment_is_checked, 30)
GP_TEST_ENTRY(cuda_devices_publish_counter_catalogs, 60)
GP_TEST_ENTRY(cuda_cli_lists_metrics_without_a_gpu, 60)
GP_TEST_ENTRY(cuda_cli_says_no_cuda_device, 60)
GP_TEST_ENTRY(cuda_device_check_script_without_a_gpu, 180)

/* api: from CUPTI to a trace (test_cuda_trace.c) */
GP_TEST_ENTRY(cuda_sample_run_becomes_a_trace, 60)
GP_TEST_ENTRY(cuda_device_check_queries_pass_on_a_cupti_fed_trace, 120)
GP_TEST_ENTRY(cuda_recording_samples_the_device_check_counters, 60)

/* api: one core per process: the simulator, OpenCL and the injection
 * library in one recorded process (test_cuda_one_core.c) */
GP_TEST_ENTRY(cuda_sim_and_opencl_share_one_core, 120)
