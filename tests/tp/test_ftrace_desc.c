/*
 * test_ftrace_desc.c - the generated table of ftrace events and their
 * fields (src/tp/ftrace_desc.c, scripts/gen-ftrace-desc.py) against
 * numbers and names quoted from Perfetto v58.2's .proto files, not from
 * the table itself. (The ftrace_event rows it gives are compared with
 * Perfetto's own answers in test_systrace.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/ftrace_desc.h"

/* Field and event numbers as Perfetto v58.2's protos declare them, quoted
 * from the .proto text:
 *   ftrace_event.proto:  PrintFtraceEvent print = 3;
 *                        SchedSwitchFtraceEvent sched_switch = 4;
 *                        GenericFtraceEvent generic = 327;
 *                        CpuFrequencyFtraceEvent cpu_frequency = 11;
 *                        PsciDomainIdleEnterFtraceEvent
 *                            psci_domain_idle_enter = 615;
 *   sched.proto:   SchedSwitchFtraceEvent { optional string prev_comm = 1;
 *                  optional int32 prev_pid = 2; optional int64 prev_state
 *                  = 4; ... optional int32 next_prio = 7; }
 *   ftrace.proto:  PrintFtraceEvent { optional uint64 ip = 1;
 *                  optional string buf = 2; }
 *   power.proto:   CpuFrequencyFtraceEvent { optional uint32 state = 1;
 *                  optional uint32 cpu_id = 2; }
 *   generic.proto: GenericFtraceEvent { optional string event_name = 1;
 *                  repeated Field field = 2; }
 *   ftrace_event.proto: ScsiDispatchCmdErrorFtraceEvent
 *                            scsi_dispatch_cmd_error = 597;
 *   scsi.proto:    ScsiDispatchCmdErrorFtraceEvent { ... optional bytes
 *                  cmnd = 14; }
 *   sys_stats_counters.proto: VMSTAT_UNSPECIFIED = 0;
 *                  VMSTAT_NR_FREE_PAGES = 1; */
TEST(tp_ftrace_desc_matches_protos) {
  const char *n;
  uint32_t row;
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(3), "print");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(4), "sched_switch");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(11), "cpu_frequency");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(327), "generic");
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(615), "psci_domain_idle_enter");
  ASSERT_EQ(gp__tp_ftrace_nevents(), 616u);
  /* timestamp, pid, common_flags and removed numbers name no event */
  ASSERT(gp__tp_ftrace_event_name(1) == NULL);
  ASSERT(gp__tp_ftrace_event_name(5) == NULL);
  ASSERT(gp__tp_ftrace_event_name(616) == NULL);

  ASSERT_EQ(gp__tp_ftrace_field(4, 1, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "prev_comm");
  ASSERT_EQ(gp__tp_ftrace_field(4, 2, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "prev_pid");
  ASSERT_EQ(gp__tp_ftrace_field(4, 4, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "prev_state");
  ASSERT_EQ(gp__tp_ftrace_field(4, 7, &row, &n), GP_TP_FT_INT);
  ASSERT_STR_EQ(n, "next_prio");
  ASSERT_EQ(gp__tp_ftrace_field(4, 8, &row, &n), GP_TP_FT_NONE);
  ASSERT_EQ(gp__tp_ftrace_field(3, 1, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "ip");
  ASSERT_EQ(gp__tp_ftrace_field(3, 2, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "buf");
  ASSERT_EQ(gp__tp_ftrace_field(11, 1, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "state");
  ASSERT_EQ(gp__tp_ftrace_field(11, 2, &row, &n), GP_TP_FT_UINT);
  ASSERT_STR_EQ(n, "cpu_id");
  /* a message field is no arg */
  ASSERT_EQ(gp__tp_ftrace_field(327, 1, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "event_name");
  ASSERT_EQ(gp__tp_ftrace_field(327, 2, &row, &n), GP_TP_FT_NONE);
  /* bytes are strings */
  ASSERT_STR_EQ(gp__tp_ftrace_event_name(597), "scsi_dispatch_cmd_error");
  ASSERT_EQ(gp__tp_ftrace_field(597, 14, &row, &n), GP_TP_FT_STRING);
  ASSERT_STR_EQ(n, "cmnd");
  ASSERT_STR_EQ(gp__tp_vmstat_name(0), "VmstatUnspecified");
  ASSERT_STR_EQ(gp__tp_vmstat_name(1), "nr_free_pages");
}
