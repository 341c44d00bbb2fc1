/*
 * dump.h - a readable dump of Perfetto traces in the protobuf text format,
 * as Perfetto's own tools print them (`packet { timestamp: 0 ... }`).
 *
 * Field names and enum values come from a table of the messages gpuperf
 * writes and the GPU messages of Perfetto's trace (proto.h's sources);
 * fields it does not know are printed by number (`#123: 5`). Used by the
 * golden tests and for looking into traces while debugging.
 */
#ifndef GPUPERF_PERFETTO_DUMP_H
#define GPUPERF_PERFETTO_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Prints the trace data[0..size) to out. Returns 0, or GP_ECORRUPT if the
 * data is malformed (everything before the bad packet is printed, then a
 * line naming its offset).
 */
int gp__trace_dump(const uint8_t *data, size_t size, FILE *out);

#endif /* GPUPERF_PERFETTO_DUMP_H */
