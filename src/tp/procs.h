/*
 * procs.h - processes and threads as Perfetto's ProcessTracker keeps them:
 * which utid a tid means at a point of the trace, which upid a pid means,
 * how threads find their process (directly, through the thread that made
 * them, or later, when a thread of the pair learns its process), names by
 * priority of their source, and the end of threads and processes.
 *
 * The state is per machine (keys carry the machine row), as Perfetto keeps
 * one tracker per machine. Every lookup is O(1) expected, save that a tid
 * reused many times is searched through its threads, newest first.
 */
#ifndef GPUPERF_TP_PROCS_H
#define GPUPERF_TP_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "tp/util.h"

/* Where a thread's name came from; a name replaces one of lower or equal
 * priority (Perfetto's ThreadNamePriority). */
enum {
  GP_TP_TNAME_OTHER = 0,
  GP_TP_TNAME_FTRACE = 1,
  GP_TP_TNAME_PROCESS_TREE = 2,
  GP_TP_TNAME_TRACK_DESCRIPTOR_TYPE = 3,
  GP_TP_TNAME_TRACK_DESCRIPTOR = 4,
  GP_TP_TNAME_CONSTANT = 5,
};

/* The same for processes (Perfetto's ProcessNamePriority). */
enum {
  GP_TP_PNAME_OTHER = 0,
  GP_TP_PNAME_TRACK_DESCRIPTOR = 2,
  GP_TP_PNAME_SYSTEM = 4,
};

/* A pending pair of threads; and one of the pair's links in a thread's
 * list; and a process waiting in its maker thread's list. */
typedef struct gp__tp_edge {
  uint32_t a, b;
  bool live;
} gp__tp_edge;
typedef struct gp__tp_elink {
  uint32_t edge, next;
} gp__tp_elink;
typedef struct gp__tp_plink {
  uint32_t upid, next;
} gp__tp_plink;

/* The tracker's state (in the importer; freed with it). */
typedef struct gp__tp_procs {
  /* By utid: the thread before it with the same tid (NONE), whether it
   * left its tid's list, its next thread in its process's list, the
   * process it is listed in (NONE), its name's priority, and its pending
   * associations (heads of lists in edges and parents). */
  GP_TP_VEC(uint32_t) tid_prev;
  GP_TP_VEC(uint8_t) tid_gone;
  GP_TP_VEC(uint32_t) pnext;
  GP_TP_VEC(uint32_t) listed_in;
  GP_TP_VEC(uint8_t) tname_prio;
  GP_TP_VEC(uint32_t) edge_head;
  GP_TP_VEC(uint32_t) parent_head;
  /* By upid: its first listed thread, its name's priority. */
  GP_TP_VEC(uint32_t) pfirst;
  GP_TP_VEC(uint8_t) pname_prio;
  gp__tp_map tid_last; /* machine << 32 | tid -> newest utid of the tid */
  /* Pending thread pairs (AssociateThreads before either knew its
   * process): each pair is two links, one in each thread's list. */
  GP_TP_VEC(gp__tp_edge) edges;
  GP_TP_VEC(gp__tp_elink) elinks;
  /* Processes made by a thread whose own process is not known yet. */
  GP_TP_VEC(gp__tp_plink) plinks;
  GP_TP_VEC(uint32_t) swapper; /* by machine: its swapper's utid */
} gp__tp_procs;

#endif /* GPUPERF_TP_PROCS_H */
