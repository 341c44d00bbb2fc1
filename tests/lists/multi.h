/* lists/multi.h - many machines: host identity, `gpuperf merge`,
 * `demo --machines`. */
GP_TEST_ENTRY(multi_demo_machines_merge_on_one_clock, 60)
GP_TEST_ENTRY(multi_merge_bad_input_is_named, 30)
