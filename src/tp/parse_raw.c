/*
 * parse_raw.c - the ftrace_event table (every ftrace event, its fields as
 * args) and the CPU power counters. Being written: for now no rows.
 */
#include "tp/import.h"

/* See import.h. */
int gp__tp_raw_event(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t cpu, uint32_t utid, const gp__pb_reader *parent,
                     const gp__pb_field *f) {
  (void)imp, (void)ts, (void)machine, (void)cpu, (void)utid, (void)parent,
      (void)f;
  return 0;
}

/* See import.h. */
int gp__tp_parse_cpu_power(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           const gp__pb_reader *parent, const gp__pb_field *f) {
  (void)imp, (void)ts, (void)machine, (void)parent, (void)f;
  return 0;
}

/* See import.h. */
int gp__tp_cpu_get(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                   uint32_t *ucpu) {
  (void)imp, (void)machine;
  *ucpu = cpu;
  return 0;
}

/* See import.h. */
int gp__tp_raw_row(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   uint32_t cpu, uint32_t utid, uint32_t name,
                   int64_t common_flags, const gp__tp_argb *args) {
  (void)imp, (void)ts, (void)machine, (void)cpu, (void)utid, (void)name,
      (void)common_flags, (void)args;
  return 0;
}
