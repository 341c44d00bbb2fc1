/*
 * parse_sched.c - scheduling: sched_switch and sched_waking (plain and
 * compact) into sched slices and thread states, and task lifetimes.
 * Being written.
 */
#include "perfetto/proto.h"
#include "tp/import.h"

/* See import.h. */
int gp__tp_ftrace_drop(gp__tp_importer *imp, int64_t ts) {
  (void)imp, (void)ts;
  return GP_TP_DROP_NONE;
}

/* See import.h. */
int gp__tp_parse_sched(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                       uint32_t cpu, uint32_t pid, const gp__pb_reader *parent,
                       const gp__pb_field *f) {
  (void)ts, (void)cpu, (void)parent;
  if (f->id == GP_PB_FTRACE_SCHED_PROCESS_FREE) {
    gp__pb_reader r;
    gp__pb_field g;
    int rc;
    int64_t tid = 0;
    gp__pb_reader_sub(&r, parent, f);
    while ((rc = gp__tp_pb_next(&r, &g)) > 0)
      if (g.id == 2 && g.wire_type == GP_PB_VARINT)
        tid = (int64_t)(int32_t)(uint32_t)g.value;
    if (rc < 0)
      return gp__tp_corrupt(imp, &r, "SchedProcessFreeFtraceEvent");
    gp__tp_thread_end(imp, machine, (uint32_t)tid, ts);
  }
  (void)pid;
  return 0;
}

/* See import.h. */
int gp__tp_parse_compact_sched(gp__tp_importer *imp, int64_t ts,
                               const gp__tp_csched *e, uint32_t machine,
                               uint32_t cpu) {
  (void)imp, (void)ts, (void)e, (void)machine, (void)cpu;
  return 0;
}
