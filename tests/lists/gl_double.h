/* lists/gl_double.h - the GL_AMD_performance_monitor test double
 * (tests/gl) against a GL program written from the specification. */

GP_TEST_ENTRY(gl_double_absent_without_preload, 60)
GP_TEST_ENTRY(gl_double_extension_and_entry_points, 60)
GP_TEST_ENTRY(gl_double_catalog_is_v3d, 60)
GP_TEST_ENTRY(gl_double_errors_as_specified, 60)
GP_TEST_ENTRY(gl_double_monitor_values, 60)
GP_TEST_ENTRY(gl_double_glxinfo_lists_it, 120)
GP_TEST_ENTRY(gl_double_with_another_interposer, 60)
GP_TEST_ENTRY(gl_double_libegl_opened_locally, 60)
GP_TEST_ENTRY(gl_double_through_libgpuperf_gl, 120)
GP_TEST_ENTRY(gl_intel_double_through_libgpuperf_gl, 60)
GP_TEST_ENTRY(opengl_callbacks_match_records, 60)
GP_TEST_ENTRY(gl_intel_double_client, 60)
