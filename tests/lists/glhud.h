/* lists/glhud.h - the HUD in a GL window: its data side (hud_view,
 * hud_feed) and its renderer (src/backend/opengl/hud_gl.c) on Xvfb. */

/* api: the view and the frame metrics (test_hud_view.c) */
GP_TEST_ENTRY(hud_view_without_hud, 10)
GP_TEST_ENTRY(hud_view_panes_from_the_syntax, 10)
GP_TEST_ENTRY(hud_feed_frame_metrics, 10)
GP_TEST_ENTRY(hud_view_syntax_errors, 10)
GP_TEST_ENTRY(hud_help_lists_frame_metrics, 60)
GP_TEST_ENTRY(hud_frame_metric_without_window, 120)

/* api: the renderer on Xvfb, on screenshots (test_gl_hud.c) */
GP_TEST_ENTRY(gl_hud_screen_glx_compat, 120)
GP_TEST_ENTRY(gl_hud_screen_glx_core, 120)
GP_TEST_ENTRY(gl_hud_screen_egl_es3, 120)
GP_TEST_ENTRY(gl_hud_screen_gl2_path, 120)
GP_TEST_ENTRY(gl_hud_screen_es2_path, 120)
GP_TEST_ENTRY(gl_hud_largest_view, 120)
GP_TEST_ENTRY(gl_hud_live_values_and_rows, 120)
GP_TEST_ENTRY(gl_hud_window_takes_over_the_terminal, 120)
