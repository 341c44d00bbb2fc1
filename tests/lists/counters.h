/* lists/counters.h - tests of counters, perfmons, monitors, sampling, perf_event. */
