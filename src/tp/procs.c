/*
 * procs.c - processes and threads as Perfetto's ProcessTracker keeps them
 * (see procs.h): the rules that decide which utid and upid an event's tid
 * and pid mean, and so the rows and ids of the thread and process tables.
 *
 * Perfetto keeps, per tid, the list of threads that had it (newest last)
 * and the live one; per pid, its process; per process, its threads; and
 * pairs of threads (or a process and the thread that made it) waiting for
 * one of them to learn its process. Here the per-tid lists and per-process
 * lists are chains through arrays by utid, and the pending pairs are lists
 * by thread, so that resolving them costs what they hold rather than a
 * scan of all that wait (Perfetto scans).
 */
#include "gpuperf/error.h"
#include "tp/import.h"

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static uint64_t tkey(uint32_t machine, int64_t tid) {
  return (uint64_t)machine << 32 | (uint32_t)tid;
}

/* The maps here never delete: an entry erased holds GP_TP_NONE. */
static uint32_t lookup(const gp__tp_map *m, uint64_t k) {
  uint64_t *v = gp__tp_map_get(m, k);
  return v ? (uint32_t)*v : GP_TP_NONE;
}

static int store(gp__tp_importer *imp, gp__tp_map *m, uint64_t k, uint32_t v) {
  uint64_t *slot = gp__tp_map_put(m, k, v, NULL);
  if (!slot)
    return nomem(imp);
  *slot = v;
  return 0;
}

static void clear(gp__tp_map *m, uint64_t k) {
  uint64_t *v = gp__tp_map_get(m, k);
  if (v)
    *v = GP_TP_NONE;
}

/* Grows the per-thread and per-process arrays to the tables' sizes. */
static int grow(gp__tp_importer *imp) {
  gp__tp_procs *p = &imp->procs;
  while (p->tid_prev.n < imp->db->threads.n)
    if (!gp__tp_vec_push(&p->tid_prev, GP_TP_NONE) ||
        !gp__tp_vec_push(&p->tid_gone, 0) ||
        !gp__tp_vec_push(&p->pnext, GP_TP_NONE) ||
        !gp__tp_vec_push(&p->listed_in, GP_TP_NONE) ||
        !gp__tp_vec_push(&p->tname_prio, GP_TP_TNAME_OTHER) ||
        !gp__tp_vec_push(&p->edge_head, GP_TP_NONE) ||
        !gp__tp_vec_push(&p->parent_head, GP_TP_NONE))
      return nomem(imp);
  while (p->pfirst.n < imp->db->processes.n)
    if (!gp__tp_vec_push(&p->pfirst, GP_TP_NONE) ||
        !gp__tp_vec_push(&p->pname_prio, GP_TP_PNAME_OTHER))
      return nomem(imp);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Liveness                                                              */

/* Perfetto's IsThreadAlive: not ended, and its process (if known) neither
 * ended nor replaced by a newer process of its pid. */
static bool alive(gp__tp_importer *imp, uint32_t utid) {
  const gp__tp_thread *t = &imp->db->threads.v[utid];
  if (t->end_ts != INT64_MIN)
    return false;
  if (t->upid == GP_TP_NONE)
    return true;
  const gp__tp_process *pr = &imp->db->processes.v[t->upid];
  if (pr->end_ts != INT64_MIN)
    return false;
  uint32_t cur = lookup(&imp->upid_by_pid, tkey(t->machine, pr->pid));
  return cur == GP_TP_NONE || cur == t->upid;
}

/* Whether thread u can never be found again: it left its tid's list, or
 * it or its process ended (neither restarts). */
static bool gone(gp__tp_importer *imp, uint32_t u) {
  const gp__tp_thread *t = &imp->db->threads.v[u];
  return imp->procs.tid_gone.v[u] || t->end_ts != INT64_MIN ||
         (t->upid != GP_TP_NONE &&
          imp->db->processes.v[t->upid].end_ts != INT64_MIN);
}

/*
 * The next thread of tid's list from u (u included) that is alive. Threads
 * gone for good are unlinked on the way, so that a tid reused many times
 * costs its lookups O(1) amortized rather than a walk past all its dead
 * threads. (A thread whose process's pid now names another process is
 * skipped but kept: that pid may come back to it, as in Perfetto.) *prev
 * is the thread before u in the list (NONE: u is its head), and is moved
 * along with u.
 */
static uint32_t next_live(gp__tp_importer *imp, uint64_t k, uint32_t *prev,
                          uint32_t u) {
  gp__tp_procs *p = &imp->procs;
  while (u != GP_TP_NONE && !alive(imp, u)) {
    uint32_t next = p->tid_prev.v[u];
    if (gone(imp, u)) {
      if (*prev == GP_TP_NONE) {
        uint64_t *head = gp__tp_map_get(&p->tid_last, k);
        if (head)
          *head = next;
      } else {
        p->tid_prev.v[*prev] = next;
      }
    } else {
      *prev = u;
    }
    u = next;
  }
  return u;
}

/* Perfetto's RefreshLiveTid: the newest live thread of tid, or none. */
static void refresh_live(gp__tp_importer *imp, uint32_t machine, int64_t tid) {
  uint64_t k = tkey(machine, tid);
  uint32_t prev = GP_TP_NONE;
  uint32_t u = next_live(imp, k, &prev, lookup(&imp->procs.tid_last, k));
  if (u == GP_TP_NONE) {
    clear(&imp->utid_by_tid, k);
    return;
  }
  uint64_t *live = gp__tp_map_get(&imp->utid_by_tid, k);
  if (live) /* it has an entry: the thread was made with one */
    *live = u;
}

/* Perfetto's InvalidateProcessThreads. */
static void invalidate(gp__tp_importer *imp, uint32_t upid) {
  gp__tp_procs *p = &imp->procs;
  for (uint32_t u = p->pfirst.v[upid]; u != GP_TP_NONE; u = p->pnext.v[u])
    refresh_live(imp, imp->db->threads.v[u].machine, imp->db->threads.v[u].tid);
}

/* Perfetto's GetThreadOrNull(tid, pid): the newest live thread of tid
 * whose process is unknown or has that pid. */
static uint32_t find_in(gp__tp_importer *imp, uint32_t machine, int64_t tid,
                        int64_t pid) {
  gp__tp_procs *p = &imp->procs;
  uint64_t k = tkey(machine, tid);
  uint32_t prev = GP_TP_NONE;
  for (uint32_t u = next_live(imp, k, &prev, lookup(&p->tid_last, k));
       u != GP_TP_NONE; u = next_live(imp, k, &prev, p->tid_prev.v[u])) {
    uint32_t up = imp->db->threads.v[u].upid;
    if (up == GP_TP_NONE || imp->db->processes.v[up].pid == pid)
      return u;
    prev = u;
  }
  return GP_TP_NONE;
}

/* See import.h. */
uint32_t gp__tp_thread_find(gp__tp_importer *imp, uint32_t machine,
                            int64_t tid) {
  return lookup(&imp->utid_by_tid, tkey(machine, tid));
}

/* ------------------------------------------------------------------ */
/* Threads                                                               */

/* See import.h. */
int gp__tp_thread_start(gp__tp_importer *imp, uint32_t machine, int64_t ts,
                        int64_t tid, uint32_t *utid) {
  gp__tp_db *db = imp->db;
  gp__tp_thread th = {tid,       GP_TP_NONE, GP_TP_NONE, ts,
                      INT64_MIN, machine,    false,      -1};
  if (!gp__tp_vec_push(&db->threads, th))
    return nomem(imp);
  uint32_t u = (uint32_t)db->threads.n - 1;
  int rc = grow(imp);
  if (rc)
    return rc;
  gp__tp_procs *p = &imp->procs;
  uint64_t k = tkey(machine, tid);
  p->tid_prev.v[u] = lookup(&p->tid_last, k);
  if ((rc = store(imp, &p->tid_last, k, u)) != 0 ||
      (rc = store(imp, &imp->utid_by_tid, k, u)) != 0)
    return rc;
  *utid = u;
  return 0;
}

/* See import.h. */
void gp__tp_thread_end(gp__tp_importer *imp, uint32_t machine, int64_t tid,
                       int64_t ts) {
  uint32_t u = gp__tp_thread_find(imp, machine, tid);
  if (u == GP_TP_NONE)
    return;
  gp__tp_thread *t = &imp->db->threads.v[u];
  t->end_ts = ts;
  imp->procs.tid_gone.v[u] = 1;
  refresh_live(imp, machine, tid);
  if (t->upid == GP_TP_NONE)
    return;
  gp__tp_process *pr = &imp->db->processes.v[t->upid];
  if (pr->pid != tid)
    return;
  pr->end_ts = ts;
  clear(&imp->upid_by_pid, tkey(machine, tid));
  invalidate(imp, t->upid);
}

/* See import.h. */
int gp__tp_ftrace_thread(gp__tp_importer *imp, uint32_t machine, uint32_t tid,
                         uint32_t *utid) {
  *utid = gp__tp_thread_find(imp, machine, tid);
  if (*utid != GP_TP_NONE)
    return 0;
  return gp__tp_thread_start(imp, machine, INT64_MIN, tid, utid);
}

/* See import.h. */
void gp__tp_thread_name(gp__tp_importer *imp, uint32_t utid, uint32_t name,
                        int prio) {
  if (name == GP_TP_NONE || utid >= imp->procs.tname_prio.n)
    return;
  if (prio >= imp->procs.tname_prio.v[utid]) {
    imp->db->threads.v[utid].name = name;
    imp->procs.tname_prio.v[utid] = (uint8_t)prio;
  }
}

/* See import.h. */
void gp__tp_process_name(gp__tp_importer *imp, uint32_t upid, uint32_t name,
                         int prio) {
  if (name == GP_TP_NONE || upid >= imp->procs.pname_prio.n)
    return;
  if (prio >= imp->procs.pname_prio.v[upid]) {
    imp->db->processes.v[upid].name = name;
    imp->procs.pname_prio.v[upid] = (uint8_t)prio;
  }
}

/* See import.h. */
void gp__tp_thread_and_process_name(gp__tp_importer *imp, uint32_t utid,
                                    uint32_t name, int prio) {
  gp__tp_thread_name(imp, utid, name, prio);
  const gp__tp_thread *t = &imp->db->threads.v[utid];
  if (t->upid != GP_TP_NONE && imp->db->processes.v[t->upid].pid == t->tid)
    gp__tp_process_name(imp, t->upid, name, GP_TP_PNAME_SYSTEM);
}

/* Perfetto's AssociateThreadToProcessInternal. */
static void associate(gp__tp_importer *imp, uint32_t utid, uint32_t upid,
                      bool is_main) {
  gp__tp_procs *p = &imp->procs;
  gp__tp_thread *t = &imp->db->threads.v[utid];
  t->upid = upid;
  t->is_main = is_main;
  if (p->listed_in.v[utid] == GP_TP_NONE) {
    p->listed_in.v[utid] = upid;
    p->pnext.v[utid] = p->pfirst.v[upid];
    p->pfirst.v[upid] = utid;
  }
}

/*
 * Perfetto's ResolvePendingAssociations: utid now belongs to upid, and so
 * do the threads paired with it, transitively; the processes its threads
 * made get upid as parent.
 */
static int resolve(gp__tp_importer *imp, uint32_t utid, uint32_t upid,
                   bool assoc_main) {
  gp__tp_procs *p = &imp->procs;
  GP_TP_VEC(uint32_t) todo = {0};
  if (!gp__tp_vec_push(&todo, utid))
    return nomem(imp);
  while (todo.n) {
    uint32_t u = todo.v[--todo.n];
    for (uint32_t l = p->parent_head.v[u]; l != GP_TP_NONE;
         l = p->plinks.v[l].next)
      imp->db->processes.v[p->plinks.v[l].upid].parent_upid = upid;
    p->parent_head.v[u] = GP_TP_NONE;
    for (uint32_t l = p->edge_head.v[u]; l != GP_TP_NONE;
         l = p->elinks.v[l].next) {
      gp__tp_edge *e = &p->edges.v[p->elinks.v[l].edge];
      if (!e->live)
        continue;
      e->live = false;
      uint32_t other = e->a == u ? e->b : e->a;
      const gp__tp_thread *o = &imp->db->threads.v[other];
      associate(imp, other, upid,
                assoc_main && o->tid == imp->db->processes.v[upid].pid);
      if (!gp__tp_vec_push(&todo, other)) {
        gp__tp_vec_free(&todo);
        return nomem(imp);
      }
    }
    p->edge_head.v[u] = GP_TP_NONE;
  }
  gp__tp_vec_free(&todo);
  return 0;
}

/* See import.h. */
int gp__tp_threads_pair(gp__tp_importer *imp, uint32_t utid1, uint32_t utid2,
                        bool assoc_main) {
  gp__tp_procs *p = &imp->procs;
  const gp__tp_db *db = imp->db;
  uint32_t up1 = db->threads.v[utid1].upid, up2 = db->threads.v[utid2].upid;
  if (up1 != GP_TP_NONE && up2 == GP_TP_NONE) {
    associate(imp, utid2, up1,
              assoc_main &&
                  db->threads.v[utid2].tid == db->processes.v[up1].pid);
    return resolve(imp, utid2, up1, assoc_main);
  }
  if (up2 != GP_TP_NONE && up1 == GP_TP_NONE) {
    associate(imp, utid1, up2,
              assoc_main &&
                  db->threads.v[utid1].tid == db->processes.v[up2].pid);
    return resolve(imp, utid1, up2, assoc_main);
  }
  if (up1 != GP_TP_NONE && up1 != up2) {
    gp__tp_stat(imp, GP_TP_STAT_process_tracker_errors, 1);
    return 0;
  }
  if (up1 != GP_TP_NONE)
    return 0; /* both already in the same process */
  gp__tp_edge e = {utid1, utid2, true};
  uint32_t ei = (uint32_t)p->edges.n;
  if (!gp__tp_vec_push(&p->edges, e) ||
      !gp__tp_vec_push(&p->elinks,
                       ((gp__tp_elink){ei, p->edge_head.v[utid1]})) ||
      !gp__tp_vec_push(&p->elinks, ((gp__tp_elink){ei, p->edge_head.v[utid2]})))
    return nomem(imp);
  p->edge_head.v[utid1] = (uint32_t)p->elinks.n - 2;
  p->edge_head.v[utid2] = (uint32_t)p->elinks.n - 1;
  return 0;
}

/* Perfetto's GetOrCreateThreadWithParentInternal. */
static int thread_with_parent(gp__tp_importer *imp, uint32_t machine,
                              int64_t tid, uint32_t upid, bool is_main,
                              bool assoc_main, uint32_t *utid) {
  int rc;
  uint32_t u = find_in(imp, machine, tid, imp->db->processes.v[upid].pid);
  if (u == GP_TP_NONE &&
      (rc = gp__tp_thread_start(imp, machine, INT64_MIN, tid, &u)) != 0)
    return rc;
  if (imp->db->threads.v[u].upid == GP_TP_NONE)
    associate(imp, u, upid, is_main);
  *utid = u;
  return resolve(imp, u, imp->db->threads.v[u].upid, assoc_main);
}

/* ------------------------------------------------------------------ */
/* Processes                                                             */

/* Perfetto's GetOrCreateProcessInternal. */
static int process_get(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                       bool main_thread, uint32_t *upid) {
  gp__tp_db *db = imp->db;
  uint64_t k = tkey(machine, pid);
  *upid = lookup(&imp->upid_by_pid, k);
  if (*upid != GP_TP_NONE)
    return 0;
  gp__tp_process pr = {pid,        GP_TP_NONE, GP_TP_NONE, INT64_MIN, INT64_MIN,
                       GP_TP_NONE, machine,    INT64_MIN,  GP_TP_NONE};
  if (!gp__tp_vec_push(&db->processes, pr))
    return nomem(imp);
  *upid = (uint32_t)db->processes.n - 1;
  int rc = store(imp, &imp->upid_by_pid, k, *upid);
  if (!rc)
    rc = grow(imp);
  if (rc || !main_thread)
    return rc;
  uint32_t utid;
  return gp__tp_thread_update(imp, machine, pid, pid, &utid);
}

/* See import.h. */
int gp__tp_process_get(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                       uint32_t *upid) {
  return process_get(imp, machine, pid, false, upid);
}

/* See import.h. */
int gp__tp_process_get_main(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                            uint32_t *upid) {
  return process_get(imp, machine, pid, true, upid);
}

/* See import.h. */
int gp__tp_thread_update(gp__tp_importer *imp, uint32_t machine, int64_t tid,
                         int64_t pid, uint32_t *utid) {
  uint32_t upid;
  int rc = process_get(imp, machine, pid, true, &upid);
  if (rc)
    return rc;
  return thread_with_parent(imp, machine, tid, upid, tid == pid, true, utid);
}

/* See import.h. */
int gp__tp_process_start(gp__tp_importer *imp, uint32_t machine, int64_t ts,
                         uint32_t parent_upid, int64_t pid, uint32_t name,
                         int tprio, bool main_thread, uint32_t *upid) {
  gp__tp_procs *p = &imp->procs;
  uint64_t k = tkey(machine, pid);
  uint32_t recycled = lookup(&imp->upid_by_pid, k);
  clear(&imp->upid_by_pid, k);
  clear(&p->tid_last, k);
  clear(&imp->utid_by_tid, k);
  int rc;
  if (main_thread) {
    uint32_t utid;
    if ((rc = gp__tp_thread_start(imp, machine, ts, pid, &utid)) != 0)
      return rc;
    gp__tp_thread_name(imp, utid, name, tprio);
  }
  if ((rc = process_get(imp, machine, pid, main_thread, upid)) != 0)
    return rc;
  gp__tp_process *pr = &imp->db->processes.v[*upid];
  if (ts != INT64_MIN)
    pr->start_ts = ts;
  gp__tp_process_name(imp, *upid, name, GP_TP_PNAME_SYSTEM);
  if (parent_upid != GP_TP_NONE)
    pr->parent_upid = parent_upid;
  if (recycled != GP_TP_NONE)
    invalidate(imp, recycled);
  return 0;
}

/* See import.h. */
int gp__tp_process_new(gp__tp_importer *imp, uint32_t machine, int64_t pid,
                       uint32_t *upid) {
  return gp__tp_process_start(imp, machine, INT64_MIN, GP_TP_NONE, pid,
                              GP_TP_NONE, GP_TP_TNAME_TRACK_DESCRIPTOR, true,
                              upid);
}

/* See import.h. */
int gp__tp_process_parent_thread(gp__tp_importer *imp, uint32_t upid,
                                 uint32_t parent_utid) {
  gp__tp_procs *p = &imp->procs;
  uint32_t pup = imp->db->threads.v[parent_utid].upid;
  if (pup != GP_TP_NONE) {
    imp->db->processes.v[upid].parent_upid = pup;
    return 0;
  }
  if (!gp__tp_vec_push(&p->plinks,
                       ((gp__tp_plink){upid, p->parent_head.v[parent_utid]})))
    return nomem(imp);
  p->parent_head.v[parent_utid] = (uint32_t)p->plinks.n - 1;
  return 0;
}

/* See import.h. */
uint32_t gp__tp_swapper_utid(gp__tp_importer *imp, uint32_t machine) {
  return machine < imp->procs.swapper.n ? imp->procs.swapper.v[machine] : 0;
}

/* See import.h. */
int gp__tp_procs_swapper(gp__tp_importer *imp, uint32_t machine, uint32_t upid,
                         uint32_t utid) {
  int rc = grow(imp);
  if (rc)
    return rc;
  gp__tp_procs *p = &imp->procs;
  uint64_t k = tkey(machine, 0);
  imp->db->threads.v[utid].is_main = 1;
  if ((rc = store(imp, &p->tid_last, k, utid)) != 0 ||
      (rc = store(imp, &imp->utid_by_tid, k, utid)) != 0 ||
      (rc = store(imp, &imp->upid_by_pid, k, upid)) != 0)
    return rc;
  while (p->swapper.n <= machine)
    if (!gp__tp_vec_push(&p->swapper, GP_TP_NONE))
      return nomem(imp);
  p->swapper.v[machine] = utid;
  associate(imp, utid, upid, true);
  gp__tp_thread_name(imp, utid, imp->db->k_swapper, GP_TP_TNAME_CONSTANT);
  return 0;
}

/* See import.h. */
void gp__tp_procs_free(gp__tp_importer *imp) {
  gp__tp_procs *p = &imp->procs;
  gp__tp_vec_free(&p->tid_prev);
  gp__tp_vec_free(&p->tid_gone);
  gp__tp_vec_free(&p->pnext);
  gp__tp_vec_free(&p->listed_in);
  gp__tp_vec_free(&p->tname_prio);
  gp__tp_vec_free(&p->edge_head);
  gp__tp_vec_free(&p->parent_head);
  gp__tp_vec_free(&p->pfirst);
  gp__tp_vec_free(&p->pname_prio);
  gp__tp_map_free(&p->tid_last);
  gp__tp_vec_free(&p->edges);
  gp__tp_vec_free(&p->elinks);
  gp__tp_vec_free(&p->plinks);
  gp__tp_vec_free(&p->swapper);
}
