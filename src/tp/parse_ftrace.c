/*
 * parse_ftrace.c - one FtraceEvent, handed to its parsers as Perfetto's
 * FtraceParser::ParseFtraceEvent hands it.
 *
 * Every event but sched_switch first becomes a row of the ftrace_event
 * table under the thread of its task (making that thread, as
 * GetOrCreateThread does), whatever else is made of it; sched_switch
 * makes its row itself (parse_sched.c), with the previous task as its
 * thread. Then the events with parsers of their own go to them:
 * scheduling and task lifetime (parse_sched.c), CPU frequency and idle
 * states (parse_raw.c), GPU memory and frequency (parse_other.c),
 * dma_fence (parse_drm.c) and the GPU scheduler (parse_drm_sched.c).
 *
 * Events before the service started tracing are dropped, and those before
 * every CPU's data is known to be complete only make their ftrace_event
 * rows (Perfetto's drop and soft drop): see gp__tp_ftrace_drop().
 */
#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

/* FtraceEvent's own fields (ftrace_event.proto). */
enum { EV_TIMESTAMP = 1, EV_PID = 2 };

/* See import.h. */
int gp__tp_parse_ftrace_event(gp__tp_importer *imp, int64_t ts, uint64_t off,
                              size_t len, uint32_t machine, uint32_t cpu) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, off, len);
  int rc;
  uint32_t task = 0; /* the event's pid, wherever it comes */
  bool has_pid = false;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == EV_PID && f.wire_type == GP_PB_VARINT) {
      task = (uint32_t)f.value;
      has_pid = true;
    }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "FtraceEvent");
  int drop = gp__tp_ftrace_drop(imp, ts);
  if (drop == GP_TP_DROP_ALL)
    return 0;
  gp__tp_reader_at(imp, &r, off, len);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == EV_PID || f.id == EV_TIMESTAMP)
      continue;
    if (!has_pid)
      return 0; /* Perfetto gives up on it (an error it only logs) */
    if (f.id != GP_PB_FTRACE_SCHED_SWITCH) {
      uint32_t utid;
      if ((rc = gp__tp_ftrace_thread(imp, machine, task, &utid)) != 0 ||
          (rc = gp__tp_raw_event(imp, ts, machine, cpu, utid, &r, &f)) != 0)
        return rc;
    }
    if (drop == GP_TP_DROP_SOFT || f.wire_type != GP_PB_LEN)
      continue;
    switch (f.id) {
    case GP_PB_FTRACE_SCHED_SWITCH:
    case GP_PB_FTRACE_SCHED_WAKING:
    case GP_PB_FTRACE_SCHED_PROCESS_FREE:
    case GP_PB_FTRACE_TASK_NEWTASK:
    case GP_PB_FTRACE_TASK_RENAME:
      rc = gp__tp_parse_sched(imp, ts, machine, cpu, task, &r, &f);
      break;
    case GP_PB_FTRACE_CPU_FREQUENCY:
    case GP_PB_FTRACE_CPU_IDLE:
      rc = gp__tp_parse_cpu_power(imp, ts, machine, &r, &f);
      break;
    case GP_PB_FTRACE_GPU_MEM_TOTAL:
    case GP_PB_FTRACE_GPU_FREQUENCY:
    case GP_PB_FTRACE_KGSL_GPU_FREQUENCY:
      rc = gp__tp_parse_ftrace_gpu(imp, ts, machine, task, &r, &f);
      break;
    default:
      if (f.id >= GP_PB_FTRACE_DMA_FENCE_INIT &&
          f.id <= GP_PB_FTRACE_DMA_FENCE_WAIT_END)
        rc = gp__tp_parse_dma_fence(imp, ts, machine, task, &r, &f);
      else if ((f.id >= GP_PB_FTRACE_DRM_VBLANK_EVENT &&
                f.id <= GP_PB_FTRACE_DRM_SCHED_PROCESS_JOB) ||
               (f.id >= GP_PB_FTRACE_DRM_SCHED_JOB_DONE &&
                f.id <= GP_PB_FTRACE_DRM_SCHED_JOB_RUN))
        rc = gp__tp_parse_drm_sched(imp, ts, machine, task, &r, &f);
    }
    if (rc)
      return rc;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "FtraceEvent");
  return 0;
}
