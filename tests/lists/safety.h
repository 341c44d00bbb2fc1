/* Recording that loses nothing (issue 11): safe output, recovery, bounds,
 * thread-exit state, deaths of recorded processes. */
GP_TEST_ENTRY(opencl_exited_threads_leave_no_state, 120)
GP_TEST_ENTRY(record_sim_program_deaths_lose_nothing, 60)
GP_TEST_ENTRY(record_opencl_program_deaths_lose_nothing, 240)
GP_TEST_ENTRY(record_forked_children_that_exit_are_whole, 120)
GP_TEST_ENTRY(record_names_detached_processes, 30)
GP_TEST_ENTRY(record_keeps_an_existing_output, 30)
GP_TEST_ENTRY(record_full_disk_is_an_error, 60)
GP_TEST_ENTRY(record_killed_recorder_can_be_recovered, 30)
GP_TEST_ENTRY(record_counter_lists_are_bounded, 60)
GP_TEST_ENTRY(record_sigkill_salvages_what_it_committed, 30)
GP_TEST_ENTRY(stat_of_a_dying_program_prints_its_counts, 60)
GP_TEST_ENTRY(record_late_forked_child_counts_its_own_loss, 30)
