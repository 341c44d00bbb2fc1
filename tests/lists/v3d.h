/* lists/v3d.h - V3D perfmons through the kernel's ioctls (issue 38),
 * against the render-node test double (tests/v3d). */

GP_TEST_ENTRY(v3d_double_refuses_as_the_uapi_documents, 30)
GP_TEST_ENTRY(v3d_list_shows_kernel_counters, 60)
GP_TEST_ENTRY(v3d_list_builtin_tables_by_version, 60)
GP_TEST_ENTRY(v3d_record_values_equal_what_the_double_counted, 120)
GP_TEST_ENTRY(v3d_arbitration_says_who_and_exits_3, 120)
GP_TEST_ENTRY(v3d_arbitration_wait_until_free, 120)
GP_TEST_ENTRY(v3d_program_per_job_refused_while_gpuperf_counts, 120)
GP_TEST_ENTRY(v3d_more_than_32_counters_refused, 60)
GP_TEST_ENTRY(v3d_gl_program_counts_per_frame, 180)
GP_TEST_ENTRY(v3d_producer_into_perfettos_traced, 120)
