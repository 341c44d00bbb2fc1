/* Recording that loses nothing (issue 11): safe output, recovery, bounds,
 * thread-exit state, deaths of recorded processes. */
GP_TEST_ENTRY(opencl_exited_threads_leave_no_state, 120)
