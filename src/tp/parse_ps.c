/*
 * parse_ps.c - linux.process_stats: ProcessTree (the processes and threads
 * of the system, with names, command lines, parents and uids) and
 * ProcessStats (their memory, OOM score and CPU time counters), as
 * Perfetto v58's SystemProbesParser imports them.
 *
 * A process in a ProcessTree without a command line is skipped whole.
 * Kernel worker names ("kworker/1:2-events") are cut before their '+' or
 * '-' where kthreadd (pid 2) is the parent. Counters go on the process's
 * counter tracks: "mem.<key>" (type process_memory), "mem.smaps.<key>"
 * (smaps), "runtime.<key>" (proc_stat_runtime) and "oom_score_adj".
 * A process's is_kthread goes into its args; file descriptors are not
 * imported.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

/* "kworker/1:2-events" -> "kworker/1:2": the length to keep. */
static size_t kworker_len(const uint8_t *s, size_t n) {
  if (n < 8 || memcmp(s, "kworker/", 8) != 0)
    return n;
  for (size_t i = 8; i < n; i++)
    if (s[i] == '+' || s[i] == '-')
      return i;
  return n;
}

/* ProcessTree.Process and .Thread fields (process_tree.proto). */
enum {
  PT_PROCESSES = 1,
  PT_THREADS = 2,
  PR_PID = 1,
  PR_PPID = 2,
  PR_CMDLINE = 3,
  PR_UID = 5,
  PR_START_FROM_BOOT = 7,
  PR_IS_KTHREAD = 8,
  PR_CMDLINE_IS_COMM = 9,
  TH_TID = 1,
  TH_NAME = 2,
  TH_TGID = 3,
};

/* One ProcessTree.Process of a packet of sequence seq; pid goes into
 * *kthreads when its parent is kthreadd. */
static int tree_process(gp__tp_importer *imp, uint32_t machine, uint32_t seq,
                        const gp__pb_reader *parent, const gp__pb_field *pf,
                        gp__tp_map *kthreads, char **buf, size_t *cap) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  uint64_t pid = 0, ppid = 0, uid = 0, start = 0;
  bool has_uid = false, has_start = false, is_comm = false;
  int kthread = -1;
  size_t nargs = 0, total = 0;
  const uint8_t *argv0 = NULL;
  size_t argv0_len = 0;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == PR_CMDLINE && f.wire_type == GP_PB_LEN) {
      if (!nargs++) {
        argv0 = f.data;
        argv0_len = f.size;
      }
      total += f.size + 1;
    } else if (f.wire_type == GP_PB_VARINT) {
      if (f.id == PR_PID)
        pid = f.value;
      else if (f.id == PR_PPID)
        ppid = f.value;
      else if (f.id == PR_UID)
        has_uid = true, uid = f.value;
      else if (f.id == PR_START_FROM_BOOT)
        has_start = true, start = f.value;
      else if (f.id == PR_CMDLINE_IS_COMM)
        is_comm = f.value != 0;
      else if (f.id == PR_IS_KTHREAD)
        kthread = f.value != 0;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessTree.Process");
  if (!nargs)
    return 0;
  pid = (uint32_t)pid;
  ppid = (uint32_t)ppid;
  /* The command line, its parts joined by spaces. */
  if (total > *cap) {
    char *nb = realloc(*buf, total);
    if (!nb)
      return nomem(imp);
    *buf = nb;
    *cap = total;
  }
  size_t len = 0;
  bool cut = false;
  if (ppid == 2) {
    if (!gp__tp_map_put(kthreads, pid, 1, NULL))
      return nomem(imp);
    size_t k = kworker_len(argv0, argv0_len);
    if (k != argv0_len) {
      argv0_len = k;
      memcpy(*buf, argv0, k);
      len = k;
      cut = true; /* the cut name is the whole command line */
    }
  }
  if (nargs == 1)
    for (size_t i = 0; i < argv0_len; i++)
      if (argv0[i] == ' ') {
        argv0_len = i;
        break;
      }
  if (!cut) {
    gp__pb_reader_sub(&r, parent, pf);
    size_t seen = 0;
    while ((rc = gp__tp_pb_next(&r, &f)) > 0)
      if (f.id == PR_CMDLINE && f.wire_type == GP_PB_LEN) {
        memcpy(*buf + len, f.data, f.size);
        len += f.size;
        if (++seen < nargs)
          (*buf)[len++] = ' ';
      }
  }
  uint32_t pupid, upid, name, cmdline;
  if ((rc = gp__tp_process_get_main(imp, machine, (int64_t)ppid, &pupid)) ||
      (rc = gp__tp_process_get_main(imp, machine, (int64_t)pid, &upid)) ||
      (rc = gp__tp_intern_text(imp, argv0, argv0_len, &name)) ||
      (rc = gp__tp_intern_text(imp, *buf, len, &cmdline)))
    return rc;
  gp__tp_process *pr = &imp->db->processes.v[upid];
  if (pr->parent_upid == GP_TP_NONE)
    pr->parent_upid = pupid; /* a changed parent is kept as it was */
  gp__tp_process_name(imp, upid, name, GP_TP_PNAME_SYSTEM);
  pr->cmdline = cmdline;
  if (is_comm) {
    uint32_t utid;
    if ((rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)pid, &utid)))
      return rc;
    gp__tp_thread_name(imp, utid, cmdline, GP_TP_TNAME_PROCESS_TREE);
  }
  if (has_uid)
    pr->uid = (uint32_t)uid;
  if (has_start && pr->start_ts == INT64_MIN)
    pr->start_ts = gp__tp_boottime(imp, seq, (int64_t)start);
  if (kthread >= 0) {
    gp__tp_argb b;
    uint32_t k;
    b.n = 0;
    b.overflow = false;
    if ((rc = key(imp, "is_kthread", &k)) != 0)
      return rc;
    gp__tp_argb_bool(&b, k, kthread);
    if ((rc = gp__tp_argset_commit(imp->db, &b,
                                   &imp->db->processes.v[upid].args)))
      return nomem(imp);
  }
  return 0;
}

/* One ProcessTree.Thread. */
static int tree_thread(gp__tp_importer *imp, uint32_t machine,
                       const gp__pb_reader *parent, const gp__pb_field *pf,
                       const gp__tp_map *kthreads) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  uint64_t tid = 0, tgid = 0;
  const uint8_t *name = NULL;
  size_t name_len = 0;
  bool has_name = false;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == TH_NAME && f.wire_type == GP_PB_LEN)
      has_name = true, name = f.data, name_len = f.size;
    else if (f.id == TH_TID && f.wire_type == GP_PB_VARINT)
      tid = (uint32_t)f.value;
    else if (f.id == TH_TGID && f.wire_type == GP_PB_VARINT)
      tgid = (uint32_t)f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessTree.Thread");
  uint32_t utid, s;
  if ((rc = gp__tp_thread_update(imp, machine, (int64_t)tid, (int64_t)tgid,
                                 &utid)))
    return rc;
  if (!has_name)
    return 0;
  if (tid == tgid && gp__tp_map_get(kthreads, tid))
    name_len = kworker_len(name, name_len);
  if ((rc = gp__tp_intern_text(imp, name, name_len, &s)) ||
      (rc = gp__tp_ftrace_thread(imp, machine, (uint32_t)tid, &utid)))
    return rc;
  gp__tp_thread_name(imp, utid, s, GP_TP_TNAME_PROCESS_TREE);
  return 0;
}

/* See import.h. */
int gp__tp_parse_process_tree(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_map kthreads = {0};
  char *buf = NULL;
  size_t cap = 0;
  int rc, rc2 = 0;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  while (!rc2 && (rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == PT_PROCESSES && f.wire_type == GP_PB_LEN)
      rc2 = tree_process(imp, p->machine, p->seq_id, &r, &f, &kthreads, &buf,
                         &cap);
  if (!rc2 && rc < 0)
    rc2 = gp__tp_corrupt(imp, &r, "ProcessTree");
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  while (!rc2 && (rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == PT_THREADS && f.wire_type == GP_PB_LEN)
      rc2 = tree_thread(imp, p->machine, &r, &f, &kthreads);
  free(buf);
  gp__tp_map_free(&kthreads);
  return rc2;
}

/* ------------------------------------------------------------------ */
/* ProcessStats                                                          */

/* ProcessStats.Process fields. */
enum {
  PS_PROCESSES = 1,
  PS_PID = 1,
  PS_OOM_SCORE_ADJ = 10,
  PS_THREADS = 11,
  PS_IS_PEAK_RSS_RESETTABLE = 12,
  PS_CHROME_PRIVATE_FOOTPRINT = 13,
  PS_FDS = 15,
  PS_RUNTIME_USER = 21,
  PS_RUNTIME_KERNEL = 22,
};

/* The counter track of process upid of a type, name and key dimension. */
static int ps_track(gp__tp_importer *imp, uint32_t machine, uint32_t upid,
                    const char *type, const char *dim, const char *val,
                    const char *name, uint32_t *track) {
  uint32_t k_upid, k_dim = GP_TP_NONE, v = GP_TP_NONE, n;
  int rc;
  if ((rc = key(imp, "upid", &k_upid)) || (rc = key(imp, name, &n)) ||
      (dim && ((rc = key(imp, dim, &k_dim)) || (rc = key(imp, val, &v)))))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_int(&dims, k_upid, upid);
  if (dim)
    gp__tp_argb_str(&dims, k_dim, v);
  gp__tp_track_spec spec = {type, n,  true, GP_TP_NONE, machine,   NULL,
                            -1,   -1, upid, -1,         GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, &dims, track, NULL);
}

/* The key of a ProcessStats memory field ("virt", ...) and its kind: 1
 * process_memory, 2 smaps; 0: not a memory field. */
static int memory_key(uint32_t id, const char **k) {
  static const char *const mem[] = {
      [2] = "virt",     [3] = "rss",           [4] = "rss.anon",
      [5] = "rss.file", [6] = "rss.shmem",     [7] = "swap",
      [8] = "locked",   [9] = "rss.watermark", [24] = "dmabuf_rss"};
  static const char *const smaps[] = {
      [16] = "rss",      [17] = "pss",      [18] = "pss.anon",
      [19] = "pss.file", [20] = "pss.smem", [23] = "swap.pss"};
  if (id < sizeof(mem) / sizeof(mem[0]) && mem[id]) {
    *k = mem[id];
    return 1;
  }
  if (id < sizeof(smaps) / sizeof(smaps[0]) && smaps[id]) {
    *k = smaps[id];
    return 2;
  }
  return 0;
}

static int stats_process(gp__tp_importer *imp, const gp__tp_pkt *p,
                         const gp__pb_reader *parent, const gp__pb_field *pf) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  uint64_t pid = 0;
  int rc;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == PS_PID && f.wire_type == GP_PB_VARINT)
      pid = (uint32_t)f.value;
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessStats.Process");
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    uint32_t upid, track, utid;
    int rc2;
    if (f.id == PS_PID)
      continue;
    if (f.id == PS_THREADS && f.wire_type == GP_PB_LEN) {
      int64_t tid = 0;
      gp__pb_reader_sub(&sub, &r, &f);
      while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0)
        if (g.id == 1 && g.wire_type == GP_PB_VARINT)
          tid = (uint32_t)g.value;
      if (rc2 < 0)
        return gp__tp_corrupt(imp, &sub, "ProcessStats.Thread");
      if ((rc2 =
               gp__tp_thread_update(imp, p->machine, tid, (int64_t)pid, &utid)))
        return rc2;
      continue;
    }
    if (f.id == PS_FDS || f.id == PS_IS_PEAK_RSS_RESETTABLE ||
        f.id == PS_CHROME_PRIVATE_FOOTPRINT)
      continue;
    if ((rc2 = gp__tp_process_get_main(imp, p->machine, (int64_t)pid, &upid)))
      return rc2;
    double value = (double)(int64_t)f.value;
    const char *k;
    char name[64];
    int kind = memory_key(f.id, &k);
    if (f.id == PS_OOM_SCORE_ADJ) {
      rc2 = ps_track(imp, p->machine, upid, "oom_score_adj", NULL, NULL,
                     "oom_score_adj", &track);
    } else if (kind == 1) {
      snprintf(name, sizeof(name), "mem.%s", k);
      rc2 = ps_track(imp, p->machine, upid, "process_memory",
                     "process_memory_key", k, name, &track);
      value *= 1024;
    } else if (kind == 2) {
      snprintf(name, sizeof(name), "mem.smaps.%s", k);
      rc2 = ps_track(imp, p->machine, upid, "smaps", "smaps_key", k, name,
                     &track);
      value *= 1024;
    } else if (f.id == PS_RUNTIME_USER || f.id == PS_RUNTIME_KERNEL) {
      k = f.id == PS_RUNTIME_USER ? "user_ns" : "kernel_ns";
      snprintf(name, sizeof(name), "runtime.%s", k);
      rc2 = ps_track(imp, p->machine, upid, "proc_stat_runtime",
                     "proc_stat_runtime_key", k, name, &track);
    } else {
      gp__tp_stat(imp, GP_TP_STAT_proc_stat_unknown_counters, 1);
      continue;
    }
    if (rc2 || (rc2 = gp__tp_counter_add(imp, p->ts, track, value, NULL)))
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessStats.Process");
  return 0;
}

/* See import.h. */
int gp__tp_parse_process_stats(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == PS_PROCESSES && f.wire_type == GP_PB_LEN) {
      int rc2 = stats_process(imp, p, &r, &f);
      if (rc2)
        return rc2;
    }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ProcessStats");
  return 0;
}
