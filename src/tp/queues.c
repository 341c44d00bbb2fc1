/*
 * queues.c - the queues of Perfetto's sorter, and the ftrace data that
 * goes into them (see import.h and sort.c).
 *
 * Perfetto's sorter keeps one queue per stream and merges them by time;
 * where timestamps tie, which queue an entry is in, and when the queue
 * was made, decide what is parsed first, and so the ids of the tracks and
 * slices it creates. The queues here are made when Perfetto v58's
 * importer makes them:
 *
 *  - a machine's reader makes its packet stream, then its track event
 *    stream, when it is made: the host's before anything is read, a
 *    remote machine's at its first packet (an adopted machine is the
 *    host's);
 *  - the ftrace tokenizer pushes a bundle's compact sched_switch events,
 *    then its compact sched_waking events, then its other events, each
 *    kind into a stream per CPU; the first push of a kind from CPU c makes
 *    that kind's streams for all CPUs up to c that it does not have yet.
 *
 * Every ftrace event is parsed: those no parser of its own takes still
 * become rows of the ftrace_event table, as in Perfetto's.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

#define MAX_FTRACE_CPUS 1024 /* Perfetto's kMaxCpuCount */

/* FtraceEventBundle fields, and CompactSched's (ftrace_event_bundle.proto) */
enum {
  BUNDLE_CPU = 1,
  BUNDLE_EVENT = 2,
  BUNDLE_LOST_EVENTS = 3,
  BUNDLE_COMPACT_SCHED = 4,
  BUNDLE_LAST_READ_EVENT_TS = 9,
  BUNDLE_PREVIOUS_BUNDLE_END_TS = 10,
  CS_SWITCH_TS = 1,
  CS_SWITCH_COMM = 6,
  CS_INTERN_TABLE = 5,
  CS_WAKING_TS = 7,
  CS_WAKING_COMM = 11,
};

static int new_queue(gp__tp_importer *imp, uint32_t *idx, uint64_t off) {
  if (!gp__tp_vec_push(&imp->queues, ((gp__tp_queue){0})) ||
      !gp__tp_vec_push(&imp->queue_cpu, GP_TP_NONE) ||
      !gp__tp_vec_push(&imp->win.dirty, 0))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  *idx = (uint32_t)(imp->queues.n - 1);
  return 0;
}

/* See import.h. */
int gp__tp_reader_queues(gp__tp_importer *imp, uint32_t m, uint64_t off) {
  while (imp->readerq.n <= m)
    if (!gp__tp_vec_push(&imp->readerq, ((gp__tp_readerq){0})))
      return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  gp__tp_readerq *q = &imp->readerq.v[m];
  if (q->made)
    return 0;
  q->made = true;
  int rc = new_queue(imp, &q->packets, off);
  return rc ? rc : new_queue(imp, &q->track_events, off);
}

/* See import.h. */
uint32_t gp__tp_packet_queue(gp__tp_importer *imp, uint32_t m, bool te) {
  if (m >= imp->readerq.n || !imp->readerq.v[m].made)
    m = 0; /* a machine row's queues are made with the row */
  return te ? imp->readerq.v[m].track_events : imp->readerq.v[m].packets;
}

/* See import.h. */
int gp__tp_push_entry(gp__tp_importer *imp, uint32_t q, int64_t ts,
                      uint64_t ref, uint64_t off) {
  if (!gp__tp_vec_push(&imp->queues.v[q], ((gp__tp_entry){ts, ref})))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory sorting events");
  if (!imp->win.dirty.v[q]) {
    imp->win.dirty.v[q] = 1;
    if (!gp__tp_vec_push(&imp->win.pushed, q))
      return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  }
  return 0;
}

/* The queue of ftrace data of kind k from CPU cpu on machine row m. */
static int cpu_queue(gp__tp_importer *imp, uint32_t m, int k, uint32_t cpu,
                     uint32_t *idx, uint64_t off) {
  int rc = gp__tp_reader_queues(imp, m, off);
  gp__tp_readerq *q = &imp->readerq.v[m];
  while (!rc && q->cpu[k].n <= cpu) {
    uint32_t made = 0;
    if ((rc = new_queue(imp, &made, off)) != 0)
      break;
    if (!gp__tp_vec_push(&q->cpu[k], made))
      rc = gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
    else
      imp->queue_cpu.v[made] = (uint32_t)(q->cpu[k].n - 1);
  }
  if (!rc)
    *idx = q->cpu[k].v[cpu];
  return rc;
}

/* See import.h. */
int64_t gp__tp_boottime(gp__tp_importer *imp, uint32_t seq, int64_t ns) {
  uint64_t key = gp__tp_clock_key(GP_TP_CLOCK_BOOTTIME, seq);
  int64_t abs = gp__tp_clocks_abs(&imp->clocks, key, ns), ts;
  if (gp__tp_clocks_convert(&imp->clocks, key, abs, &ts) != 0)
    ts = abs; /* no snapshot links BOOTTIME: it is the trace time */
  return ts;
}

/* The same for an event's time, which the latest time follows. */
static int64_t ftrace_time(gp__tp_importer *imp, uint32_t seq, int64_t ns) {
  int64_t ts = gp__tp_boottime(imp, seq, ns);
  if (ts > imp->max_ts)
    imp->max_ts = ts;
  return ts;
}

/* The varints of a packed field, and how many there are. */
typedef struct packed {
  const uint8_t *p, *end;
  size_t n;
} packed;

static void packed_init(packed *pk, const gp__pb_field *f) {
  pk->p = f->data;
  pk->end = f->data + f->size;
  pk->n = 0;
  uint64_t v;
  for (const uint8_t *p = pk->p; p < pk->end;) {
    size_t k = gp__pb_get_varint(p, pk->end, &v);
    if (!k)
      break;
    p += k;
    pk->n++;
  }
}

static uint64_t packed_next(packed *pk) {
  uint64_t v = 0;
  pk->p += gp__pb_get_varint(pk->p, pk->end, &v);
  return v;
}

/*
 * The compact sched_switch and sched_waking events of a CompactSched: as
 * many as every one of their packed fields has values for, up to the
 * first whose comm index is past the intern table, as Perfetto reads
 * them. Each is decoded into imp->cs, its entry naming it there.
 */
static int compact_sched(gp__tp_importer *imp, const gp__pb_field *cs,
                         uint32_t m, uint32_t cpu, uint32_t seq, uint32_t gen,
                         uint64_t off) {
  static const uint8_t first[2] = {1, 7}, last[2] = {6, 12};
  static const uint8_t ts_id[2] = {CS_SWITCH_TS, CS_WAKING_TS};
  static const uint8_t comm_id[2] = {CS_SWITCH_COMM, CS_WAKING_COMM};
  packed f[13];
  memset(f, 0, sizeof(f));
  GP_TP_VEC(uint32_t) table = {0};
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  gp__pb_reader_init(&r, cs->data, cs->size, gp__tp_off(imp, cs->data));
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.id == CS_INTERN_TABLE && g.wire_type == GP_PB_LEN) {
      uint32_t s;
      if ((rc = gp__tp_intern(imp, g.data, g.size, &s)) != 0)
        goto out;
      if (!gp__tp_vec_push(&table, s)) {
        rc = gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
        goto out;
      }
    } else if (g.id >= 1 && g.id <= 12 && g.wire_type == GP_PB_LEN) {
      packed_init(&f[g.id], &g);
    }
  }
  if (rc < 0) {
    rc = gp__tp_corrupt(imp, &r, "compact_sched");
    goto out;
  }
  rc = 0;
  for (int k = 0; k < 2; k++) {
    size_t n = SIZE_MAX, most = 0;
    for (int i = first[k]; i <= last[k]; i++)
      if (i != CS_INTERN_TABLE && i != 12) { /* common flags are optional */
        n = f[i].n < n ? f[i].n : n;
        most = f[i].n > most ? f[i].n : most;
      }
    if (n != most)
      gp__tp_stat(imp, GP_TP_STAT_compact_sched_has_parse_errors, 1);
    if (!n || n == SIZE_MAX)
      continue;
    uint32_t q;
    if ((rc = cpu_queue(imp, m, k ? GP_TP_FQ_WAKING : GP_TP_FQ_SWITCH, cpu, &q,
                        off)) != 0)
      goto out;
    int64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
      gp__tp_csched e = {0};
      acc += (int64_t)packed_next(&f[ts_id[k]]);
      uint64_t comm = packed_next(&f[comm_id[k]]);
      if (comm >= table.n) {
        gp__tp_stat(imp, GP_TP_STAT_compact_sched_has_parse_errors, 1);
        break;
      }
      e.comm = table.v[comm];
      e.waking = k == 1;
      if (!k) {
        e.prev_state = (int64_t)packed_next(&f[2]);
        e.pid = (int32_t)packed_next(&f[3]);
        e.prio = (int32_t)packed_next(&f[4]);
      } else {
        e.pid = (int32_t)packed_next(&f[8]);
        e.target_cpu = (uint16_t)packed_next(&f[9]);
        e.prio = (int32_t)(uint16_t)packed_next(&f[10]);
        if (f[12].p < f[12].end)
          e.common_flags = (uint16_t)packed_next(&f[12]);
      }
      if ((rc = gp__tp_cs_push(imp, &e)) != 0)
        goto out;
      rc = gp__tp_push_entry(imp, q, ftrace_time(imp, seq, acc),
                             gp__tp_ref(GP_TP_ENT_COMPACT, gen, imp->cs.n - 1),
                             off);
      if (rc)
        goto out;
    }
  }
out:
  gp__tp_vec_free(&table);
  return rc;
}

/* See import.h. */
int gp__tp_cs_push(gp__tp_importer *imp, const gp__tp_csched *e) {
  gp__tp_cs *cs = &imp->cs;
  uint64_t i = cs->n;
  size_t c = (size_t)(i >> GP_TP_CS_SHIFT);
  if (c >= cs->chunks.n) {
    gp__tp_cs_packed *chunk =
        gp__tp_array_alloc(GP_TP_CS_CHUNK, sizeof(*chunk));
    if (!chunk || !gp__tp_vec_push(&cs->chunks, chunk) ||
        !gp__tp_vec_push(&cs->left, 0)) {
      if (chunk && (cs->chunks.n <= c || cs->chunks.v[c] != chunk))
        gp__tp_array_free(chunk, GP_TP_CS_CHUNK, sizeof(*chunk));
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    }
  }
  gp__tp_cs_packed *p = &cs->chunks.v[c][i & (GP_TP_CS_CHUNK - 1)];
  p->pid = e->pid;
  p->comm = e->comm;
  p->waking = e->waking;
  p->prio = (int16_t)e->prio;
  p->state = e->waking
                 ? (int32_t)((uint32_t)e->target_cpu << 16 | e->common_flags)
                 : (int32_t)e->prev_state;
  p->wide = p->prio != e->prio || (!e->waking && p->state != e->prev_state);
  if (p->wide && (!gp__tp_map_put(&cs->wide_at, i, cs->wide.n, NULL) ||
                  !gp__tp_vec_push(&cs->wide, *e)))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  cs->left.v[c]++;
  cs->n++;
  return 0;
}

/* See import.h. */
void gp__tp_cs_take(gp__tp_importer *imp, uint64_t i, gp__tp_csched *e) {
  gp__tp_cs *cs = &imp->cs;
  size_t c = (size_t)(i >> GP_TP_CS_SHIFT);
  const gp__tp_cs_packed *p = &cs->chunks.v[c][i & (GP_TP_CS_CHUNK - 1)];
  if (p->wide) {
    *e = cs->wide.v[*gp__tp_map_get(&cs->wide_at, i)];
  } else {
    e->pid = p->pid;
    e->comm = p->comm;
    e->waking = p->waking;
    e->prio = p->prio;
    e->prev_state = e->waking ? 0 : p->state;
    e->target_cpu = e->waking ? (uint16_t)((uint32_t)p->state >> 16) : 0;
    e->common_flags = e->waking ? (uint16_t)p->state : 0;
  }
  if (--cs->left.v[c] == 0) {
    gp__tp_array_free(cs->chunks.v[c], GP_TP_CS_CHUNK,
                      sizeof(*cs->chunks.v[c]));
    cs->chunks.v[c] = NULL;
  }
}

/* The kernel overwrote events of CPU cpu between two reads: Perfetto
 * sets an indexed stat to 1. */
static int lost_events(gp__tp_importer *imp, uint32_t cpu) {
  for (size_t i = 0; i < imp->db->istats.n; i++)
    if (imp->db->istats.v[i].stat == GP_TP_STAT_ftrace_cpu_has_data_loss &&
        imp->db->istats.v[i].idx == cpu)
      return 0;
  return gp__tp_stat_idx(imp, GP_TP_STAT_ftrace_cpu_has_data_loss, cpu, 1);
}

/* See import.h. */
int gp__tp_tokenize_ftrace(gp__tp_importer *imp, const uint8_t *data,
                           size_t len, uint32_t seq, uint32_t gen,
                           uint64_t off) {
  gp__pb_reader r, sub;
  gp__pb_field f, g, cs = {0};
  int rc;
  bool has_cpu = false, has_cs = false, lost = false, has_start = false;
  uint64_t cpu = 0, start = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == BUNDLE_CPU && f.wire_type == GP_PB_VARINT) {
      has_cpu = true;
      cpu = f.value;
    } else if (f.id == BUNDLE_COMPACT_SCHED && f.wire_type == GP_PB_LEN) {
      has_cs = true;
      cs = f;
    } else if (f.id == BUNDLE_LOST_EVENTS && f.wire_type == GP_PB_VARINT) {
      lost = f.value != 0;
    } else if ((f.id == BUNDLE_PREVIOUS_BUNDLE_END_TS ||
                f.id == BUNDLE_LAST_READ_EVENT_TS) &&
               f.wire_type == GP_PB_VARINT) {
      has_start = true;
      start = f.value;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ftrace_events");
  if (!has_cpu) {
    gp__tp_stat(imp, GP_TP_STAT_ftrace_bundle_tokenizer_errors, 1);
    return 0; /* as Perfetto does */
  }
  if (cpu >= MAX_FTRACE_CPUS)
    return gp__tp_fail(imp, GP_ECORRUPT, off,
                       "ftrace bundle of CPU %llu: more than the %u CPUs a "
                       "trace can have (a corrupt trace?)",
                       (unsigned long long)cpu, MAX_FTRACE_CPUS);
  uint32_t m = imp->gens.v[gen].machine;
  if (lost && (rc = lost_events(imp, (uint32_t)cpu)) != 0)
    return rc;
  if (has_cs &&
      (rc = compact_sched(imp, &cs, m, (uint32_t)cpu, seq, gen, off)) != 0)
    return rc;
  bool has_queue = false;
  uint32_t queue = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  for (;;) {
    uint64_t at = gp__pb_offset(&r);
    if ((rc = gp__tp_pb_next(&r, &f)) <= 0)
      break;
    if (f.id != BUNDLE_EVENT || f.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader_sub(&sub, &r, &f);
    bool has_ts = false, has_event = false;
    uint64_t ts = 0;
    int rc2;
    while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
      if (g.id == 1 && g.wire_type == GP_PB_VARINT) {
        has_ts = true;
        ts = g.value;
      }
      has_event |= g.wire_type == GP_PB_LEN;
    }
    if (rc2 < 0)
      return gp__tp_corrupt(imp, &sub, "FtraceEvent");
    /* As Perfetto's tokenizer: an event needs its time, and a payload
     * (its first length-delimited field) to be an event at all. */
    if (!has_ts) {
      gp__tp_stat(imp, GP_TP_STAT_ftrace_bundle_tokenizer_errors, 1);
      continue;
    }
    if (!has_event) {
      gp__tp_stat(imp, GP_TP_STAT_ftrace_missing_event_id, 1);
      continue;
    }
    if (!has_queue && (rc2 = cpu_queue(imp, m, GP_TP_FQ_EVENTS, (uint32_t)cpu,
                                       &queue, off)) != 0)
      return rc2;
    has_queue = true;
    int64_t tts = ftrace_time(imp, seq, (int64_t)ts);
    rc2 = gp__tp_push_entry(imp, queue, tts,
                            gp__tp_ref(GP_TP_ENT_FTRACE, gen, at), off);
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ftrace_events");
  /* A CPU's first bundle says from when its data is complete (Perfetto
   * v44+): the latest of these is where every CPU's data is. */
  bool ins;
  if (!gp__tp_map_put(&imp->ftrace_first, (uint64_t)m << 32 | cpu, 1, &ins))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  if (ins && has_start) {
    int64_t t = gp__tp_boottime(imp, seq, (int64_t)start);
    if (imp->ftrace_data_start == INT64_MIN || t > imp->ftrace_data_start)
      imp->ftrace_data_start = t;
  }
  return 0;
}

/* See import.h. */
void gp__tp_queues_free(gp__tp_importer *imp) {
  gp__tp_vec_free(&imp->win.changes);
  gp__tp_vec_free(&imp->win.ends);
  gp__tp_vec_free(&imp->win.dirty);
  gp__tp_vec_free(&imp->win.pushed);
  for (size_t i = 0; i < imp->queues.n; i++)
    gp__tp_vec_free(&imp->queues.v[i]);
  gp__tp_vec_free(&imp->queues);
  gp__tp_vec_free(&imp->queue_cpu);
  gp__tp_cs *cs = &imp->cs;
  for (size_t i = 0; i < cs->chunks.n; i++)
    gp__tp_array_free(cs->chunks.v[i], GP_TP_CS_CHUNK,
                      sizeof(*cs->chunks.v[i]));
  gp__tp_vec_free(&cs->chunks);
  gp__tp_vec_free(&cs->left);
  gp__tp_map_free(&cs->wide_at);
  gp__tp_vec_free(&cs->wide);
  cs->n = 0;
  for (size_t i = 0; i < imp->readerq.n; i++)
    for (int k = 0; k < GP_TP_FQ_KINDS; k++)
      gp__tp_vec_free(&imp->readerq.v[i].cpu[k]);
  gp__tp_vec_free(&imp->readerq);
}
