/* lists/opencl.h - tests of the OpenCL interception library. */

/* api: records captured in-process, on PoCL */
GP_TEST_ENTRY(opencl_records_match_sample, 120)
GP_TEST_ENTRY(opencl_device_context_and_names, 60)
GP_TEST_ENTRY(opencl_behaviour_unchanged, 120)
GP_TEST_ENTRY(opencl_dependencies_and_correlation, 60)
GP_TEST_ENTRY(opencl_callbacks_match_records, 60)
GP_TEST_ENTRY(opencl_object_ids_by_handle, 60)
GP_TEST_ENTRY(opencl_program_module_and_kernel_functions, 60)
GP_TEST_ENTRY(opencl_device_attributes_match_clGetDeviceInfo, 60)
GP_TEST_ENTRY(opencl_invalid_calls_record_errors, 60)
GP_TEST_ENTRY(opencl_objects_made_before_recording, 60)
GP_TEST_ENTRY(opencl_threads_and_early_releases, 120)
GP_TEST_ENTRY(opencl_fork_child_forgets_parent_work, 60)
GP_TEST_ENTRY(opencl_no_platform_is_clean, 60)
GP_TEST_ENTRY(opencl_two_devices_one_context, 60)

/* api: profiling times mapped to the trace clock */
GP_TEST_ENTRY(opencl_clock_monotonic_raw, 60)
GP_TEST_ENTRY(opencl_clock_enqueue_brackets, 60)
GP_TEST_ENTRY(opencl_clock_unconfirmed_raw_falls_back, 60)

/* api: the preload library in other programs */
GP_TEST_ENTRY(opencl_preload_exports_only_entry_points, 30)
GP_TEST_ENTRY(opencl_preload_sample_unchanged, 120)
GP_TEST_ENTRY(opencl_preload_plugin_opened_local, 120)
GP_TEST_ENTRY(opencl_preload_fork_and_exec, 180)
GP_TEST_ENTRY(opencl_preload_harmless_without_opencl, 30)
GP_TEST_ENTRY(opencl_stat_per_kernel_totals, 120)

/* api: gpuperf record, and the trace through the trace processor */
GP_TEST_ENTRY(opencl_trace_of_the_sample, 240)
GP_TEST_ENTRY(opencl_trace_fork_and_exec, 300)
