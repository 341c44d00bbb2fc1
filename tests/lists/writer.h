/* lists/writer.h - tests of the trace writer, TraceConfig parser, demo and record. */
