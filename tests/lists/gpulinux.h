/* lists/gpulinux.h - tests of real-GPU counters on Linux (issue 12): the
 * busy counter derived from the activity timeline. */

/* api: derived Utilization on PoCL, the seed query recomputed */
GP_TEST_ENTRY(derived_utilization_opencl_sample, 240)
GP_TEST_ENTRY(derived_utilization_clpeak, 300)
GP_TEST_ENTRY(derived_utilization_clpeak_compute_sp, 400)

/* api: DRM fdinfo, sysfs, hwmon and devfreq on fixture trees */
GP_TEST_ENTRY(drm_fdinfo_busy_from_two_readings, 10)
GP_TEST_ENTRY(drm_fdinfo_clients_and_cards, 10)
GP_TEST_ENTRY(drm_sysfs_values_reach_gpu_counter_track, 240)
GP_TEST_ENTRY(drm_v3d_engines_are_tracks, 120)

/* unit: ENVIRONMENT records as Perfetto's GPU frequency and memory packets
 * and counter tracks */
GP_TEST_ENTRY(writer_env_gpu_frequency_packets, 10)
GP_TEST_ENTRY(writer_env_gpu_mem_total_packets, 10)
GP_TEST_ENTRY(writer_env_counter_tracks, 10)

/* api: GPUPERF_HUD=<counters>: rows, the terminal's line, help */
GP_TEST_ENTRY(hud_file_rows_of_the_program_alone, 150)
GP_TEST_ENTRY(hud_file_one_csv_row_per_period, 90)
GP_TEST_ENTRY(hud_file_opencl_values_under_record, 240)
GP_TEST_ENTRY(hud_file_opencl_values_with_preload_alone, 240)
GP_TEST_ENTRY(hud_tty_line_shows_live_values, 90)
GP_TEST_ENTRY(hud_unknown_name_lists_counters, 90)
GP_TEST_ENTRY(hud_help_under_record_runs_the_program, 150)
GP_TEST_ENTRY(hud_term_keeps_the_programs_lines, 240)
GP_TEST_ENTRY(hud_term_clpeak_under_record, 300)
GP_TEST_ENTRY(hud_term_follows_a_resize, 300)
GP_TEST_ENTRY(hud_term_given_back_on_a_fault_or_exit, 300)

/* cli: gpuperf top; unit: the shared region it reads */
GP_TEST_ENTRY(top_once_plain_view, 30)
GP_TEST_ENTRY(live_region_reads_are_never_torn, 60)
GP_TEST_ENTRY(live_region_mid_update_and_foreign_files, 30)
GP_TEST_ENTRY(live_region_stale_files_removed, 30)
GP_TEST_ENTRY(live_publishes_work_within_the_interval, 60)
GP_TEST_ENTRY(top_tmux_shows_recorded_kernels, 90)
GP_TEST_ENTRY(top_tmux_80x24_busy_in_range_and_q_quits, 240)

/* api: tracefs GPU events */
GP_TEST_ENTRY(tracefs_parse_lines, 10)
GP_TEST_ENTRY(tracefs_records_in_process, 30)
GP_TEST_ENTRY(tracefs_reads_only_events_asked, 30)
GP_TEST_ENTRY(tracefs_fixture_events_reach_trace, 120)
GP_TEST_ENTRY(tracefs_sched_jobs_as_perfetto, 120)
GP_TEST_ENTRY(tracefs_dma_fence_slices, 120)
GP_TEST_ENTRY(tracefs_linux_ftrace_config, 120)
GP_TEST_ENTRY(tracefs_missing_warns_once, 120)
GP_TEST_ENTRY(tracefs_not_root_warns_once, 120)
GP_TEST_ENTRY(tracefs_one_reader_per_recording, 60)
GP_TEST_ENTRY(tracefs_real_instance, 30)
GP_TEST_ENTRY(tracefs_real_dma_fence_format, 10)
GP_TEST_ENTRY(tracefs_real_vulkan_dma_fence, 240)
