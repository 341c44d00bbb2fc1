/*
 * parse_sched.c - scheduling and task lifetimes from ftrace, as Perfetto
 * v58 imports them: sched_switch (plain and compact) into the sched table
 * and, with sched_waking (plain and compact) and task_newtask, into
 * thread_state; task_newtask, task_rename and sched_process_free into the
 * process tracker (procs.c).
 *
 * Per CPU, the slice of the task running there is open until the next
 * switch on that CPU closes it with the state the task left in. Per
 * thread, its last thread_state row is open until its next change:
 * Running from a switch in, the task state from a switch out, R from a
 * wakeup or its creation. A row whose end is unknown keeps dur -1, as in
 * Perfetto; a switch out of a thread whose last row was not Running
 * (events lost) leaves that row open too.
 *
 * Compact sched events carry no prev_* fields: they are the previous
 * switch's next_* on that CPU, so the first compact switch on a CPU only
 * starts the chain, and a compact waking's waker is the task running on
 * its CPU (none before the first switch there: the waking is skipped).
 */
#include <stdio.h>
#include <string.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

/* ------------------------------------------------------------------ */
/* Drops at the start of the trace                                      */

/* See import.h. */
int gp__tp_ftrace_drop(gp__tp_importer *imp, int64_t ts) {
  gp__tp_sched_state *s = &imp->sched;
  if (!s->drops_known) {
    /* Perfetto fixes both when it parses its first ftrace event; here
     * from what the whole trace said (a trace read in windows could have
     * said more after its first window: not modelled). */
    s->drops_known = true;
    s->drop_before =
        imp->tracing_started_ts == INT64_MIN ? 0 : imp->tracing_started_ts;
    s->soft_drop_before =
        imp->ftrace_data_start == INT64_MIN ? 0 : imp->ftrace_data_start;
    if (s->soft_drop_before < s->drop_before)
      s->soft_drop_before = s->drop_before;
  }
  if (ts < s->drop_before) {
    gp__tp_stat(imp, GP_TP_STAT_ftrace_packet_before_tracing_start, 1);
    return GP_TP_DROP_ALL;
  }
  return ts < s->soft_drop_before ? GP_TP_DROP_SOFT : GP_TP_DROP_NONE;
}

/* ------------------------------------------------------------------ */
/* Task states                                                           */

/* The kernel version of a machine (SystemInfo.utsname.release, read when
 * tokenized, so known before any event is parsed) as major * 1000 +
 * minor; 4.4 when unknown, as Perfetto assumes. Read once per machine. */
static int kernel_version(gp__tp_importer *imp, uint32_t machine) {
  gp__tp_sched_state *s = &imp->sched;
  if (machine < s->kernel.n && s->kernel.v[machine])
    return s->kernel.v[machine];
  uint32_t rel = imp->db->machines.v[machine].uts[1];
  int major = 4, minor = 4;
  if (rel != GP_TP_NONE &&
      sscanf(gp__tp_str(&imp->db->strings, rel), "%d.%d", &major, &minor) != 2)
    major = 4, minor = 4;
  while (s->kernel.n <= machine && gp__tp_vec_push(&s->kernel, 0))
    ;
  if (machine < s->kernel.n) /* else out of memory: read again next time */
    s->kernel.v[machine] = major * 1000 + minor;
  return major * 1000 + minor;
}

/*
 * The letters of a sched_switch prev_state, as Perfetto's TaskState spells
 * them for the machine's kernel (the bits past TASK_REPORT moved at 4.8
 * and 4.14); NONE for a state that is not valid on that kernel.
 */
static int task_state(gp__tp_importer *imp, uint32_t machine, int64_t raw64,
                      uint32_t *out) {
  enum {
    S = 0x1,
    D = 0x2,
    T = 0x4,
    t_ = 0x8,
    X = 0x10,
    Z = 0x20,
    P = 0x40,
    x = 0x80,
    K = 0x100,
    W = 0x200,
    N = 0x400,
    I = 0x4000,
    PREEMPT = 0x8000
  };
  uint16_t raw = (uint16_t)raw64;
  unsigned parsed = raw & (0x40 - 1);
  int v = kernel_version(imp, machine);
  if (v >= 4014) {
    if (raw & 0x40)
      parsed |= P;
    if (raw & 0x80)
      parsed |= I;
    if (raw & 0x100)
      parsed |= PREEMPT;
    if (raw & 0xfe00) {
      *out = GP_TP_NONE;
      gp__tp_stat(imp, GP_TP_STAT_task_state_invalid, 1);
      return 0;
    }
  } else {
    if (raw & 0x40)
      parsed |= x;
    if (raw & 0x80)
      parsed |= K;
    if (raw & 0x100)
      parsed |= W;
    if (raw & 0x200)
      parsed |= P;
    if (raw & 0x400)
      parsed |= N;
    if (parsed == (D | N))
      parsed = I;
    if (raw & (v >= 4008 ? 0x1000 : 0x800))
      parsed |= PREEMPT;
  }
  char buf[16];
  size_t n = 0;
  if (!(parsed & ~(unsigned)PREEMPT)) {
    buf[n++] = 'R';
    if (parsed & PREEMPT)
      buf[n++] = '+';
  } else {
    static const struct {
      unsigned flag;
      char c;
    } letters[] = {{S, 'S'}, {D, 'D'}, {T, 'T'}, {t_, 't'}, {X, 'X'}, {Z, 'Z'},
                   {P, 'P'}, {x, 'x'}, {K, 'K'}, {W, 'W'},  {N, 'N'}, {I, 'I'}};
    for (size_t i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
      if (parsed & letters[i].flag)
        buf[n++] = letters[i].c;
  }
  return gp__tp_intern(imp, buf, n, out);
}

/* ------------------------------------------------------------------ */
/* thread_state                                                          */

static bool ts_running(const gp__tp_sched_state *s, uint32_t state) {
  return state == s->k_running;
}

static bool ts_blocked(const gp__tp_sched_state *s, uint32_t state) {
  return state != s->k_running && state != s->k_runnable;
}

/* The last thread_state row of utid, or NONE. */
static uint32_t ts_last(const gp__tp_importer *imp, uint32_t utid) {
  return utid < imp->sched.last_state.n ? imp->sched.last_state.v[utid]
                                        : GP_TP_NONE;
}

/* ThreadStateTracker::ClosePendingState. */
static void ts_close(gp__tp_importer *imp, int64_t ts, uint32_t utid,
                     bool data_loss) {
  uint32_t r = ts_last(imp, utid);
  if (r != GP_TP_NONE && !data_loss)
    imp->db->thread_states.v[r].dur = ts - imp->db->thread_states.v[r].ts;
}

/* ThreadStateTracker::AddOpenState: cpu, waker and irq (common flags)
 * are optional (UINT32_MAX, NONE, -1). */
static int ts_open(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   uint32_t utid, uint32_t state, uint32_t cpu, uint32_t waker,
                   int irq_flags) {
  gp__tp_sched_state *s = &imp->sched;
  if (utid == gp__tp_swapper_utid(imp, machine))
    return 0;
  gp__tp_thread_state row = {ts,         -1,         utid,       state,
                             GP_TP_NONE, GP_TP_NONE, GP_TP_NONE, -1};
  int rc;
  if (cpu != UINT32_MAX && (rc = gp__tp_cpu_get(imp, machine, cpu, &row.ucpu)))
    return rc;
  if (irq_flags >= 0)
    row.irq_context = (irq_flags & (0x08 | 0x10)) ? 1 : 0;
  if (waker != GP_TP_NONE) {
    row.waker_utid = waker;
    uint32_t w = ts_last(imp, waker);
    if (w != GP_TP_NONE && ts_running(s, imp->db->thread_states.v[w].state))
      row.waker_id = w;
  }
  if (!gp__tp_vec_push(&imp->db->thread_states, row))
    return nomem(imp);
  while (s->last_state.n <= utid)
    if (!gp__tp_vec_push(&s->last_state, GP_TP_NONE))
      return nomem(imp);
  s->last_state.v[utid] = (uint32_t)imp->db->thread_states.n - 1;
  return 0;
}

/* ThreadStateTracker::PushSchedSwitchEvent. */
static int ts_switch(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t cpu, uint32_t prev, uint32_t prev_state,
                     uint32_t next) {
  gp__tp_sched_state *s = &imp->sched;
  uint32_t r = ts_last(imp, prev);
  bool loss =
      r != GP_TP_NONE && !ts_running(s, imp->db->thread_states.v[r].state);
  ts_close(imp, ts, prev, loss);
  int rc =
      ts_open(imp, ts, machine, prev, prev_state, UINT32_MAX, GP_TP_NONE, -1);
  if (rc)
    return rc;
  ts_close(imp, ts, next, false);
  return ts_open(imp, ts, machine, next, s->k_running, cpu, GP_TP_NONE, -1);
}

/* ThreadStateTracker::PushWakingEvent (irq_flags -1: none given). */
static int ts_waking(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t utid, uint32_t waker, int irq_flags) {
  gp__tp_sched_state *s = &imp->sched;
  uint32_t r = ts_last(imp, utid);
  if (r != GP_TP_NONE) {
    if (!ts_blocked(s, imp->db->thread_states.v[r].state))
      return 0; /* a spurious wakeup: Perfetto keeps it in a table of its
                   own, which is not imported here */
    ts_close(imp, ts, utid, false);
  }
  return ts_open(imp, ts, machine, utid, s->k_runnable, UINT32_MAX, waker,
                 irq_flags);
}

/* ------------------------------------------------------------------ */
/* sched                                                                 */

/* The switch state of CPU cpu of machine (made on first use). */
static int cpu_state(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                     gp__tp_cpu_sched **out) {
  gp__tp_sched_state *s = &imp->sched;
  bool ins;
  uint64_t *i = gp__tp_map_put(&s->cpu_by_key, (uint64_t)machine << 32 | cpu,
                               s->cpus.n, &ins);
  if (!i)
    return nomem(imp);
  if (ins) {
    gp__tp_cpu_sched c = {0, GP_TP_NONE, GP_TP_NONE, 0};
    if (!gp__tp_vec_push(&s->cpus, c))
      return nomem(imp);
  }
  *out = &s->cpus.v[*i];
  return 0;
}

/* SchedEventTracker::AddStartSlice: a slice of utid on cpu from ts. */
static int slice_start(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                       uint32_t cpu, uint32_t utid, int32_t prio,
                       uint32_t *out) {
  gp__tp_sched_slice sl = {ts, -1, utid, GP_TP_NONE, 0, prio};
  int rc = gp__tp_cpu_get(imp, machine, cpu, &sl.ucpu);
  if (rc)
    return rc;
  if (!gp__tp_vec_push(&imp->db->sched, sl))
    return nomem(imp);
  *out = (uint32_t)imp->db->sched.n - 1;
  return 0;
}

static void slice_close(gp__tp_importer *imp, uint32_t slice, int64_t ts,
                        uint32_t end_state) {
  gp__tp_sched_slice *sl = &imp->db->sched.v[slice];
  sl->dur = ts - sl->ts;
  sl->end_state = end_state;
}

/* The ftrace_event row Perfetto makes for a sched_switch, under prev. */
static int switch_row(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                      uint32_t cpu, uint32_t prev_utid, int64_t prev_pid,
                      uint32_t prev_comm, int32_t prev_prio, int64_t prev_state,
                      int64_t next_pid, uint32_t next_comm, int32_t next_prio) {
  gp__tp_sched_state *s = &imp->sched;
  gp__tp_argb *b = &s->argb;
  b->n = 0;
  b->overflow = false;
  gp__tp_argb_str(b, s->k_sw[0], prev_comm);
  gp__tp_argb_int(b, s->k_sw[1], prev_pid);
  gp__tp_argb_int(b, s->k_sw[2], prev_prio);
  gp__tp_argb_int(b, s->k_sw[3], prev_state);
  gp__tp_argb_str(b, s->k_sw[4], next_comm);
  gp__tp_argb_int(b, s->k_sw[5], next_pid);
  gp__tp_argb_int(b, s->k_sw[6], next_prio);
  return gp__tp_raw_row(imp, ts, machine, cpu, prev_utid, s->k_switch,
                        INT64_MIN, b);
}

/* FtraceSchedEventTracker::PushSchedSwitch. */
static int sched_switch(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                        uint32_t cpu, int64_t prev_pid, uint32_t prev_comm,
                        int32_t prev_prio, int64_t prev_state, int64_t next_pid,
                        uint32_t next_comm, int32_t next_prio) {
  uint32_t next_utid, prev_utid, state, slice;
  gp__tp_cpu_sched *c;
  int rc;
  if ((rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)next_pid,
                                 &next_utid)) != 0)
    return rc;
  gp__tp_thread_name(imp, next_utid, next_comm, GP_TP_TNAME_FTRACE);
  if ((rc = cpu_state(imp, machine, cpu, &c)) != 0 ||
      (rc = task_state(imp, machine, prev_state, &state)) != 0)
    return rc;
  if (c->slice != GP_TP_NONE) {
    if (prev_pid == c->last_pid)
      slice_close(imp, c->slice, ts, state);
    else
      gp__tp_stat(imp, GP_TP_STAT_mismatched_sched_switch_tids, 1);
  }
  if ((rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)prev_pid,
                                 &prev_utid)) != 0)
    return rc;
  gp__tp_thread_name(imp, prev_utid, prev_comm, GP_TP_TNAME_FTRACE);
  if ((rc = switch_row(imp, ts, machine, cpu, prev_utid, prev_pid, prev_comm,
                       prev_prio, prev_state, next_pid, next_comm,
                       next_prio)) != 0 ||
      (rc = slice_start(imp, ts, machine, cpu, next_utid, next_prio, &slice)))
    return rc;
  c->slice = slice; /* c stays valid: only cpu_state() adds CPUs */
  c->last_pid = next_pid;
  c->last_utid = next_utid;
  c->last_prio = next_prio;
  return ts_switch(imp, ts, machine, cpu, prev_utid, state, next_utid);
}

/* FtraceSchedEventTracker::PushSchedSwitchCompact. */
static int compact_switch(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                          uint32_t cpu, const gp__tp_csched *e, bool raw_only) {
  uint32_t next_utid, state, slice;
  gp__tp_cpu_sched *c;
  int rc;
  if ((rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)e->pid, &next_utid)))
    return rc;
  gp__tp_thread_name(imp, next_utid, e->comm, GP_TP_TNAME_FTRACE);
  if ((rc = cpu_state(imp, machine, cpu, &c)) != 0)
    return rc;
  if (c->last_utid == GP_TP_NONE) {
    gp__tp_stat(imp, GP_TP_STAT_compact_sched_switch_skipped, 1);
    c->last_pid = (uint32_t)e->pid;
    c->last_utid = next_utid;
    c->last_prio = e->prio;
    return 0;
  }
  if ((rc = task_state(imp, machine, e->prev_state, &state)) != 0)
    return rc;
  if (c->slice != GP_TP_NONE)
    slice_close(imp, c->slice, ts, state);
  uint32_t prev_utid = c->last_utid;
  int64_t prev_pid = c->last_pid;
  int32_t prev_prio = c->last_prio;
  /* The name it has now: a task_rename while it ran shows here. */
  uint32_t prev_comm = imp->db->threads.v[prev_utid].name;
  c->last_pid = (uint32_t)e->pid;
  c->last_utid = next_utid;
  c->last_prio = e->prio;
  if ((rc = switch_row(imp, ts, machine, cpu, prev_utid, prev_pid, prev_comm,
                       prev_prio, e->prev_state, (uint32_t)e->pid, e->comm,
                       e->prio)) != 0)
    return rc;
  if (raw_only) {
    c->slice = GP_TP_NONE; /* c stays valid: only cpu_state() adds CPUs */
    return 0;
  }
  if ((rc = slice_start(imp, ts, machine, cpu, next_utid, e->prio, &slice)))
    return rc;
  c->slice = slice;
  return ts_switch(imp, ts, machine, cpu, prev_utid, state, next_utid);
}

/* FtraceSchedEventTracker::PushSchedWakingCompact. */
static int compact_waking(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                          uint32_t cpu, const gp__tp_csched *e, bool raw_only) {
  gp__tp_sched_state *s = &imp->sched;
  gp__tp_cpu_sched *c;
  int rc;
  if ((rc = cpu_state(imp, machine, cpu, &c)) != 0)
    return rc;
  if (c->last_utid == GP_TP_NONE) {
    gp__tp_stat(imp, GP_TP_STAT_compact_sched_waking_skipped, 1);
    return 0;
  }
  uint32_t cur = c->last_utid;
  gp__tp_argb *b = &s->argb;
  b->n = 0;
  b->overflow = false;
  gp__tp_argb_str(b, s->k_wk[0], e->comm);
  gp__tp_argb_int(b, s->k_wk[1], (uint32_t)e->pid);
  gp__tp_argb_int(b, s->k_wk[2], e->prio);
  gp__tp_argb_int(b, s->k_wk[3], e->target_cpu);
  if ((rc = gp__tp_raw_row(imp, ts, machine, cpu, cur, s->k_waking,
                           e->common_flags, b)) != 0 ||
      raw_only)
    return rc;
  uint32_t wakee;
  if ((rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)e->pid, &wakee)))
    return rc;
  return ts_waking(imp, ts, machine, wakee, cur, e->common_flags);
}

/* See import.h. */
int gp__tp_parse_compact_sched(gp__tp_importer *imp, int64_t ts,
                               const gp__tp_csched *e, uint32_t machine,
                               uint32_t cpu) {
  int drop = gp__tp_ftrace_drop(imp, ts);
  if (drop == GP_TP_DROP_ALL)
    return 0;
  bool raw_only = drop == GP_TP_DROP_SOFT;
  return e->waking ? compact_waking(imp, ts, machine, cpu, e, raw_only)
                   : compact_switch(imp, ts, machine, cpu, e, raw_only);
}

/* ------------------------------------------------------------------ */
/* Plain events                                                          */

/* The fields of a payload: varints by field number (1..15) and the
 * strings among them. */
typedef struct fields {
  uint64_t v[16];
  const uint8_t *s[16];
  size_t n[16];
} fields;

static int read_fields(gp__tp_importer *imp, const gp__pb_reader *parent,
                       const gp__pb_field *f, fields *out, const char *what) {
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  memset(out, 0, sizeof(*out));
  gp__pb_reader_sub(&r, parent, f);
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.id >= 16)
      continue;
    if (g.wire_type == GP_PB_VARINT) {
      out->v[g.id] = g.value;
    } else if (g.wire_type == GP_PB_LEN) {
      out->s[g.id] = g.data;
      out->n[g.id] = g.size;
    }
  }
  return rc < 0 ? gp__tp_corrupt(imp, &r, what) : 0;
}

/* FtraceParser::ParseTaskNewTask. */
static int task_newtask(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                        uint32_t source_tid, const fields *fl) {
  enum { CLONE_THREAD = 0x00010000 };
  uint32_t new_tid = (uint32_t)fl->v[1], flags = (uint32_t)fl->v[3];
  uint32_t comm, source, created, upid;
  int rc;
  if ((rc = gp__tp_intern_text(imp, fl->s[2], fl->n[2], &comm)) != 0)
    return rc;
  if (new_tid == 0)
    return 0; /* boot-time tracing: init making the idle tasks */
  if (!(flags & CLONE_THREAD)) {
    if ((rc = gp__tp_process_start(imp, machine, ts, GP_TP_NONE, new_tid, comm,
                                   GP_TP_TNAME_FTRACE, true, &upid)) != 0 ||
        (rc = gp__tp_ftrace_thread(imp, machine, source_tid, &source)) != 0 ||
        (rc = gp__tp_ftrace_thread(imp, machine, new_tid, &created)) != 0 ||
        (rc = gp__tp_process_parent_thread(imp, upid, source)) != 0)
      return rc;
  } else {
    if ((rc = gp__tp_ftrace_thread(imp, machine, source_tid, &source)) != 0 ||
        (rc = gp__tp_thread_start(imp, machine, ts, new_tid, &created)) != 0)
      return rc;
    gp__tp_thread_name(imp, created, comm, GP_TP_TNAME_FTRACE);
    if ((rc = gp__tp_threads_pair(imp, source, created, true)) != 0)
      return rc;
  }
  /* PushNewTaskEvent: runnable, woken by its maker, not in an interrupt */
  return ts_open(imp, ts, machine, created, imp->sched.k_runnable, UINT32_MAX,
                 source, 0);
}

/* See import.h. */
int gp__tp_parse_sched(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                       uint32_t cpu, uint32_t pid, const gp__pb_reader *parent,
                       const gp__pb_field *f) {
  fields fl;
  uint32_t a, b, utid;
  int rc = read_fields(imp, parent, f, &fl, "sched ftrace event");
  if (rc)
    return rc;
  switch (f->id) {
  case GP_PB_FTRACE_SCHED_SWITCH:
    /* prev_comm 1, prev_pid 2, prev_prio 3, prev_state 4, next_comm 5,
     * next_pid 6, next_prio 7 */
    if ((rc = gp__tp_intern_text(imp, fl.s[1], fl.n[1], &a)) != 0 ||
        (rc = gp__tp_intern_text(imp, fl.s[5], fl.n[5], &b)) != 0)
      return rc;
    return sched_switch(imp, ts, machine, cpu, (uint32_t)fl.v[2], a,
                        (int32_t)fl.v[3], (int64_t)fl.v[4], (uint32_t)fl.v[6],
                        b, (int32_t)fl.v[7]);
  case GP_PB_FTRACE_SCHED_WAKING: {
    /* comm 1, pid 2, prio 3, success 4, target_cpu 5 */
    uint32_t wakee;
    if ((rc = gp__tp_intern_text(imp, fl.s[1], fl.n[1], &a)) != 0 ||
        (rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)fl.v[2], &wakee)))
      return rc;
    gp__tp_thread_name(imp, wakee, a, GP_TP_TNAME_FTRACE);
    if ((rc = gp__tp_ftrace_thread(imp, machine, pid, &utid)) != 0)
      return rc;
    return ts_waking(imp, ts, machine, wakee, utid, -1);
  }
  case GP_PB_FTRACE_SCHED_PROCESS_FREE: /* comm 1, pid 2, prio 3 */
    gp__tp_thread_end(imp, machine, (uint32_t)fl.v[2], ts);
    return 0;
  case GP_PB_FTRACE_TASK_NEWTASK: /* pid 1, comm 2, clone_flags 3 */
    return task_newtask(imp, ts, machine, pid, &fl);
  case GP_PB_FTRACE_TASK_RENAME: /* pid 1, oldcomm 2, newcomm 3 */
    if ((rc = gp__tp_intern_text(imp, fl.s[3], fl.n[3], &a)) != 0 ||
        (rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)fl.v[1], &utid)))
      return rc;
    gp__tp_thread_and_process_name(imp, utid, a, GP_TP_TNAME_FTRACE);
    return 0;
  }
  return 0;
}

/* See import.h. */
int gp__tp_sched_init(gp__tp_importer *imp) {
  static const char *const sw[7] = {"prev_comm",  "prev_pid",  "prev_prio",
                                    "prev_state", "next_comm", "next_pid",
                                    "next_prio"};
  static const char *const wk[4] = {"comm", "pid", "prio", "target_cpu"};
  gp__tp_sched_state *s = &imp->sched;
  int rc = 0;
  for (int i = 0; !rc && i < 7; i++)
    rc = key(imp, sw[i], &s->k_sw[i]);
  for (int i = 0; !rc && i < 4; i++)
    rc = key(imp, wk[i], &s->k_wk[i]);
  if (!rc)
    rc = key(imp, "Running", &s->k_running);
  if (!rc)
    rc = key(imp, "R", &s->k_runnable);
  if (!rc)
    rc = key(imp, "sched_switch", &s->k_switch);
  if (!rc)
    rc = key(imp, "sched_waking", &s->k_waking);
  return rc;
}

/* See import.h. */
void gp__tp_sched_free(gp__tp_importer *imp) {
  gp__tp_sched_state *s = &imp->sched;
  gp__tp_vec_free(&s->cpus);
  gp__tp_map_free(&s->cpu_by_key);
  gp__tp_vec_free(&s->last_state);
  gp__tp_vec_free(&s->kernel);
}
