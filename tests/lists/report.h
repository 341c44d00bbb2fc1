/* lists/report.h - tests of `gpuperf report`, export and diff. */

GP_TEST_ENTRY(report_sections_on_demo, 60)
GP_TEST_ENTRY(report_window_and_filters, 60)
GP_TEST_ENTRY(report_sections_on_gpu_compute_kernel, 30)
GP_TEST_ENTRY(report_sections_on_opencl, 120)
GP_TEST_ENTRY(report_cli_errors, 60)
GP_TEST_ENTRY(report_html_in_chromium, 120)
GP_TEST_ENTRY(export_chrome_json_round_trip, 60)
GP_TEST_ENTRY(diff_two_demo_runs, 60)
GP_TEST_ENTRY(stat_perf_like_forms, 60)
GP_TEST_ENTRY(list_shows_opencl_devices, 30)
GP_TEST_ENTRY(report_text_cleans_control_characters, 20)
GP_TEST_ENTRY(report_sections_on_clpeak, 120)
