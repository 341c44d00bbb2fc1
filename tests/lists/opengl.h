/* lists/opengl.h - tests of libgpuperf-gl.so, under Xvfb on llvmpipe. */

GP_TEST_ENTRY(opengl_record_sample, 240)
GP_TEST_ENTRY(opengl_record_sample_egl_pbuffer, 240)
GP_TEST_ENTRY(opengl_record_glxgears, 240)
GP_TEST_ENTRY(opengl_sigint_without_a_swap, 240)
GP_TEST_ENTRY(opengl_record_es2gears, 240)
GP_TEST_ENTRY(opengl_record_loaders, 240)
GP_TEST_ENTRY(opengl_amd_counters_per_frame, 240)
GP_TEST_ENTRY(opengl_intel_counters_per_frame, 240)
GP_TEST_ENTRY(opengl_debug_output, 240)
GP_TEST_ENTRY(opengl_sample_parity_with_perfetto, 240)
GP_TEST_ENTRY(opengl_list_device, 120)
GP_TEST_ENTRY(opengl_dlsym_rtld_next, 60)
