/* lists/tp.h - tests of the trace processor, query and report. */
