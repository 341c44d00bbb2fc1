/*
 * parse_sysstats.c - SysStats packets (linux.sys_stats: /proc/meminfo,
 * /proc/vmstat, /proc/stat and more) as counters, on the tracks Perfetto
 * v58.2's SystemProbesParser::ParseSysStats makes: one per key, with the
 * same type, name, unit and dimensions, made in the same order (kind by
 * kind, in the order that parser reads them, whatever the order on the
 * wire), so that track and arg set ids match.
 *
 *   kind (SysStats field)   track type       name                 dims
 *   meminfo (1)             meminfo          MemTotal, ...        meminfo_key
 *   devfreq (10)            clock_frequency  "<key> Frequency"    linux_device
 *   cpufreq_khz (11)        cpu_frequency    cpufreq              cpu
 *   vmstat (2)              vmstat           nr_free_pages, ...   vmstat_key
 *   cpu_stat (3)            cpustat          cpu.times.user_ns .. cpu,
 *                                                                 cpustat_key
 *   num_irq (6)             num_irq          "num_irq (id: N)"    irq
 *   num_softirq (8)         num_softirq      "num_softirq (id: N)" irq
 *   num_forks (4), num_irq_total (5), num_softirq_total (7): tracks of
 *                           their own name, no dimension
 *   psi (14)                psi              psi.cpu.some, ...    psi_resource
 *   buddy_info (12)         buddyinfo        mem.buddyinfo[N][Z][K kB]  node,
 *                                                               zone, chunk
 *   disk_stat (13)          diskstat         diskstat.[DEV].read_amount, ..
 *                                                          device, counter
 *   thermal_zone (15)       thermal_temperature_sys  its type     thermal_zone
 *   cpuidle_state (16)      cpu_idle_state   cpuidleC.STATE       cpu, state
 *   gpufreq_mhz (17)        gpu_frequency    gpufreq              ugpu, gpu 0
 *   slab_info (18)          slabinfo         mem.slab.NAME        slab_name
 *
 * meminfo values are kB, stored as bytes (unit "bytes"); slab sizes and
 * buddy chunk sizes use SystemInfo's page size; a disk's counters are
 * what changed since its previous sample (none at its first).
 */
#include <stdio.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/ftrace_desc.h"
#include "tp/import.h"

/* SysStats fields (sys_stats.proto). */
enum {
  SS_MEMINFO = 1,
  SS_VMSTAT = 2,
  SS_CPU_STAT = 3,
  SS_NUM_FORKS = 4,
  SS_NUM_IRQ_TOTAL = 5,
  SS_NUM_IRQ = 6,
  SS_NUM_SOFTIRQ_TOTAL = 7,
  SS_NUM_SOFTIRQ = 8,
  SS_DEVFREQ = 10,
  SS_CPUFREQ_KHZ = 11,
  SS_BUDDY_INFO = 12,
  SS_DISK_STAT = 13,
  SS_PSI = 14,
  SS_THERMAL_ZONE = 15,
  SS_CPUIDLE_STATE = 16,
  SS_GPUFREQ_MHZ = 17,
  SS_SLAB_INFO = 18,
};

/* MeminfoCounters values -> the /proc/meminfo key Perfetto names the
 * track after (its sys_stats_counters.h). */
static const char *const meminfo_names[] = {
    "MemUnspecified",
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "SwapCached",
    "Active",
    "Inactive",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "Unevictable",
    "Mlocked",
    "SwapTotal",
    "SwapFree",
    "Dirty",
    "Writeback",
    "AnonPages",
    "Mapped",
    "Shmem",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "KernelStack",
    "PageTables",
    "CommitLimit",
    "Committed_AS",
    "VmallocTotal",
    "VmallocUsed",
    "VmallocChunk",
    "CmaTotal",
    "CmaFree",
    "Gpu",
    "Zram",
    "Misc",
    "ION_heap",
    "ION_heap_pool",
};
#define NMEMINFO (sizeof(meminfo_names) / sizeof(meminfo_names[0]))

/* CpuTimes fields 2..9 and the cpustat_key of each. */
static const char *const cpustat_keys[] = {
    "user_ns",    "user_nice_ns", "system_mode_ns", "idle_ns",
    "io_wait_ns", "irq_ns",       "softirq_ns",     "steal_ns",
};

/* PsiResource values -> psi_resource. */
static const char *const psi_keys[] = {
    "resource.unspecified",
    "cpu.some",
    "cpu.full",
    "io.some",
    "io.full",
    "mem.some",
    "mem.full",
};

static int intern_c(gp__tp_importer *imp, const char *s, uint32_t *out) {
  return gp__tp_intern(imp, s, strlen(s), out);
}

/* The counter track of (type, dims) on machine, made with name and unit
 * (a string, or NULL) when new. */
static int sys_track(gp__tp_importer *imp, uint32_t machine, const char *type,
                     uint32_t name, const char *unit, const gp__tp_argb *dims,
                     uint32_t *track) {
  uint32_t u = GP_TP_NONE;
  int rc;
  if (unit && (rc = intern_c(imp, unit, &u)) != 0)
    return rc;
  gp__tp_track_spec spec = {type, name, true, u,  machine,   NULL,
                            -1,   -1,   -1,   -1, GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, dims, track, NULL);
}

/* A dimension (key, string value) into b. */
static int dim_str(gp__tp_importer *imp, gp__tp_argb *b, const char *key,
                   const void *v, size_t n) {
  uint32_t k, s;
  int rc;
  if ((rc = intern_c(imp, key, &k)) || (rc = gp__tp_intern(imp, v, n, &s)))
    return rc;
  gp__tp_argb_str(b, k, s);
  return 0;
}

static int dim_int(gp__tp_importer *imp, gp__tp_argb *b, const char *key,
                   int64_t v) {
  uint32_t k;
  int rc = intern_c(imp, key, &k);
  if (rc == 0)
    gp__tp_argb_int(b, k, v);
  return rc;
}

/* See import.h. */
int gp__tp_cpu_counter_track(gp__tp_importer *imp, uint32_t machine,
                             uint32_t cpu, const char *type, const char *name,
                             uint32_t *track) {
  gp__tp_argb dims;
  uint32_t ucpu, n;
  int rc;
  dims.n = 0;
  dims.overflow = false;
  if ((rc = gp__tp_cpu_get(imp, machine, cpu, &ucpu)) ||
      (rc = dim_int(imp, &dims, "cpu", cpu)) || (rc = intern_c(imp, name, &n)))
    return rc;
  return sys_track(imp, machine, type, n, NULL, &dims, track);
}

/* A value on the track of (type, one string dimension dim = key), named
 * name (NULL: after the key itself). */
static int keyed(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                 const char *type, const char *dim, const void *key,
                 size_t keylen, const char *name, const char *unit,
                 double value) {
  gp__tp_argb dims;
  uint32_t n, track;
  int rc;
  dims.n = 0;
  dims.overflow = false;
  if ((rc = dim_str(imp, &dims, dim, key, keylen)) != 0)
    return rc;
  if (name)
    rc = intern_c(imp, name, &n);
  else
    rc = gp__tp_intern(imp, key, keylen, &n);
  if (rc || (rc = sys_track(imp, machine, type, n, unit, &dims, &track)))
    return rc;
  return gp__tp_counter_add(imp, ts, track, value, NULL);
}

/* A value on a track of no dimension, named after its type. */
static int single(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                  const char *type, double value) {
  gp__tp_argb dims;
  uint32_t n, track;
  dims.n = 0;
  dims.overflow = false;
  int rc;
  if ((rc = intern_c(imp, type, &n)) ||
      (rc = sys_track(imp, machine, type, n, NULL, &dims, &track)))
    return rc;
  return gp__tp_counter_add(imp, ts, track, value, NULL);
}

/* A message's (key varint 1, value varint 2) pair; false if corrupt. */
static bool key_value(const gp__pb_field *f, uint64_t *key, uint64_t *value,
                      const uint8_t **s, size_t *sn) {
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  *key = *value = 0;
  if (s) {
    *s = (const uint8_t *)"";
    *sn = 0;
  }
  gp__pb_reader_init(&r, f->data, f->size, 0);
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.id == 1 && g.wire_type == GP_PB_VARINT)
      *key = g.value;
    else if (g.id == 1 && g.wire_type == GP_PB_LEN && s) {
      *s = g.data;
      *sn = g.size;
    } else if (g.id == 2 && g.wire_type == GP_PB_VARINT)
      *value = g.value;
  }
  return rc == 0;
}

static int cpu_times(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     const gp__pb_field *f) {
  gp__pb_reader r;
  gp__pb_field g;
  uint64_t v[10] = {0};
  bool has_cpu = false;
  int rc;
  gp__pb_reader_init(&r, f->data, f->size, 0);
  while ((rc = gp__tp_pb_next(&r, &g)) > 0)
    if (g.wire_type == GP_PB_VARINT && g.id >= 1 && g.id <= 9) {
      v[g.id] = g.value;
      has_cpu |= g.id == 1;
    }
  if (rc < 0)
    return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.CpuTimes");
  if (!has_cpu) {
    gp__tp_stat(imp, GP_TP_STAT_invalid_cpu_times, 1);
    return 0;
  }
  uint32_t cpu = (uint32_t)v[1], ucpu;
  if ((rc = gp__tp_cpu_get(imp, machine, cpu, &ucpu)) != 0)
    return rc;
  for (int i = 0; i < 8; i++) {
    gp__tp_argb dims;
    char name[64];
    uint32_t n, track;
    dims.n = 0;
    dims.overflow = false;
    snprintf(name, sizeof(name), "cpu.times.%s", cpustat_keys[i]);
    if ((rc = dim_int(imp, &dims, "cpu", cpu)) ||
        (rc = dim_str(imp, &dims, "cpustat_key", cpustat_keys[i],
                      strlen(cpustat_keys[i]))) ||
        (rc = intern_c(imp, name, &n)) ||
        (rc = sys_track(imp, machine, "cpustat", n, NULL, &dims, &track)) ||
        (rc = gp__tp_counter_add(imp, ts, track, (double)v[i + 2], NULL)))
      return rc;
  }
  return 0;
}

/* The string field `id` of message (data, n) into *s, *sn ("" if none);
 * the varint fields 1..8 into v[] (v may be NULL). False if corrupt. */
static bool fields_of(const uint8_t *data, size_t n, uint32_t id,
                      const uint8_t **s, size_t *sn, uint64_t *v) {
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  *s = (const uint8_t *)"";
  *sn = 0;
  gp__pb_reader_init(&r, data, n, 0);
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.id == id && g.wire_type == GP_PB_LEN) {
      *s = g.data;
      *sn = g.size;
    } else if (v && g.id <= 8 && g.wire_type == GP_PB_VARINT) {
      v[g.id] = g.value;
    }
  }
  return rc == 0;
}

/* BuddyInfo: node 1, zone 2, order_pages 3: a track per chunk size. */
static int buddy_info(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                      const gp__pb_field *f) {
  const uint8_t *node, *zone;
  size_t nn, zn;
  uint64_t unused[9] = {0};
  if (!fields_of(f->data, f->size, 1, &node, &nn, unused) ||
      !fields_of(f->data, f->size, 2, &zone, &zn, NULL))
    return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.BuddyInfo");
  gp__pb_reader r;
  gp__pb_field g;
  uint32_t order = 0;
  int rc;
  gp__pb_reader_init(&r, f->data, f->size, 0);
  while (gp__tp_pb_next(&r, &g) > 0) {
    if (g.id != 3 || g.wire_type != GP_PB_VARINT)
      continue;
    /* Perfetto's arithmetic: an int shift times the uint32 page size. */
    uint32_t kb = (uint32_t)((1u << (order & 31)) * imp->page_size) / 1024;
    order++;
    gp__tp_argb dims;
    char name[600];
    uint32_t n, track;
    dims.n = 0;
    dims.overflow = false;
    snprintf(name, sizeof(name), "mem.buddyinfo[%.*s][%.*s][%u kB]",
             (int)(nn > 250 ? 250 : nn), (const char *)node,
             (int)(zn > 250 ? 250 : zn), (const char *)zone, kb);
    if ((rc = dim_str(imp, &dims, "buddyinfo_node", node, nn)) ||
        (rc = dim_str(imp, &dims, "buddyinfo_zone", zone, zn)) ||
        (rc = dim_int(imp, &dims, "buddyinfo_chunk_size_kb", kb)) ||
        (rc = intern_c(imp, name, &n)) ||
        (rc = sys_track(imp, machine, "buddyinfo", n, NULL, &dims, &track)) ||
        (rc = gp__tp_counter_add(imp, ts, track, (double)(uint32_t)g.value,
                                 NULL)))
      return rc;
  }
  return 0;
}

/* DiskStat: device_name 1, then read_sectors, read_time_ms,
 * write_sectors, write_time_ms, discard_sectors, discard_time_ms,
 * flush_count, flush_time_ms (2..9): from a device's second sample on,
 * the amounts and throughputs since the one before. */
static int disk_stat(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     const gp__pb_field *f) {
  const uint8_t *dev;
  size_t dn;
  uint64_t v[10] = {0};
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  gp__pb_reader_init(&r, f->data, f->size, 0);
  dev = (const uint8_t *)"";
  dn = 0;
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.id == 1 && g.wire_type == GP_PB_LEN) {
      dev = g.data;
      dn = g.size;
    } else if (g.id >= 2 && g.id <= 9 && g.wire_type == GP_PB_VARINT) {
      v[g.id] = g.value;
    }
  }
  if (rc < 0)
    return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.DiskStat");
  uint32_t dev_id;
  if ((rc = gp__tp_intern(imp, dev, dn, &dev_id)) != 0)
    return rc;
  bool ins;
  uint64_t *slot =
      gp__tp_map_put(&imp->disk_by_name, dev_id, imp->disks.n, &ins);
  if (!slot)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  if (ins) {
    struct gp__tp_disk d;
    for (int i = 0; i < 8; i++)
      d.prev[i] = -1;
    if (!gp__tp_vec_push(&imp->disks, d))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  }
  /* cur[]: read, write, discard amounts, flush count, then their times */
  int64_t cur[8] = {(int64_t)v[2], (int64_t)v[4], (int64_t)v[6], (int64_t)v[8],
                    (int64_t)v[3], (int64_t)v[5], (int64_t)v[7], (int64_t)v[9]};
  int64_t *prev = imp->disks.v[*slot].prev;
  if (prev[0] != -1) {
    static const double per_mb = 2048.0; /* 512-byte sectors */
    double amount[3], thpt[3];
    for (int i = 0; i < 3; i++) {
      amount[i] = (double)(cur[i] - prev[i]) / per_mb;
      int64_t dt = cur[4 + i] - prev[4 + i];
      thpt[i] = dt == 0 ? 0 : amount[i] * 1000.0 / (double)dt;
    }
    const struct {
      const char *name, *unit;
      double value;
    } out[] = {
        {"read_amount", "MB", amount[0]},
        {"read_throughput", "MB/s", thpt[0]},
        {"write_amount", "MB", amount[1]},
        {"write_throughput", "MB/s", thpt[1]},
        {"discard_amount", "MB", amount[2]},
        {"discard_throughput", "MB/s", thpt[2]},
        {"flush_amount", "count", (double)(cur[3] - prev[3])},
        {"flush_time", "ms", (double)(cur[7] - prev[7])},
    };
    for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
      gp__tp_argb dims;
      char name[600];
      uint32_t n, track;
      dims.n = 0;
      dims.overflow = false;
      snprintf(name, sizeof(name), "diskstat.[%.*s].%s",
               (int)(dn > 500 ? 500 : dn), (const char *)dev, out[i].name);
      if ((rc = dim_str(imp, &dims, "device_name", dev, dn)) ||
          (rc = dim_str(imp, &dims, "counter_name", out[i].name,
                        strlen(out[i].name))) ||
          (rc = intern_c(imp, name, &n)) ||
          (rc = sys_track(imp, machine, "diskstat", n, out[i].unit, &dims,
                          &track)) ||
          (rc = gp__tp_counter_add(imp, ts, track, out[i].value, NULL)))
        return rc;
    }
  }
  memcpy(prev, cur, sizeof(cur));
  return 0;
}

/* CpuIdleState: cpu_id 1, entries 2 {state 1, duration_us 2}. */
static int cpuidle_state(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                         const gp__pb_field *f) {
  const uint8_t *unused;
  size_t un;
  uint64_t v[9] = {0};
  if (!fields_of(f->data, f->size, 0, &unused, &un, v))
    return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.CpuIdleState");
  uint32_t cpu = (uint32_t)v[1], ucpu;
  gp__pb_reader r;
  gp__pb_field g;
  int rc;
  gp__pb_reader_init(&r, f->data, f->size, 0);
  while (gp__tp_pb_next(&r, &g) > 0) {
    if (g.id != 2 || g.wire_type != GP_PB_LEN)
      continue;
    const uint8_t *st;
    size_t sn;
    uint64_t e[9] = {0};
    if (!fields_of(g.data, g.size, 1, &st, &sn, e))
      return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.CpuIdleState");
    /* Perfetto passes the state on as a C string: it ends at a NUL */
    sn = strnlen((const char *)st, sn);
    gp__tp_argb dims;
    char name[600];
    uint32_t n, track;
    dims.n = 0;
    dims.overflow = false;
    snprintf(name, sizeof(name), "cpuidle%u.%.*s", cpu,
             (int)(sn > 500 ? 500 : sn), (const char *)st);
    if ((rc = gp__tp_cpu_get(imp, machine, cpu, &ucpu)) ||
        (rc = dim_int(imp, &dims, "cpu", cpu)) ||
        (rc = dim_str(imp, &dims, "state", st, sn)) ||
        (rc = intern_c(imp, name, &n)) ||
        (rc = sys_track(imp, machine, "cpu_idle_state", n, "us", &dims,
                        &track)) ||
        (rc = gp__tp_counter_add(imp, ts, track, (double)e[2], NULL)))
      return rc;
  }
  return 0;
}

/* A gpufreq_mhz value: on GPU 0's "gpufreq" track (kHz, as Perfetto's
 * blueprint says, though the value is MHz). */
static int gpufreq(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   uint64_t mhz) {
  uint32_t ugpu, k_ugpu, k_gpu, n, track;
  gp__tp_argb dims;
  int rc;
  if ((rc = gp__tp_gpu_get(imp, machine, 0, &ugpu)) ||
      (rc = intern_c(imp, "ugpu", &k_ugpu)) ||
      (rc = intern_c(imp, "gpu", &k_gpu)) ||
      (rc = intern_c(imp, "gpufreq", &n)))
    return rc;
  dims.n = 0;
  dims.overflow = false;
  gp__tp_argb_int(&dims, k_ugpu, ugpu);
  gp__tp_argb_int(&dims, k_gpu, 0);
  uint32_t unit;
  if ((rc = intern_c(imp, "kHz", &unit)) != 0)
    return rc;
  gp__tp_track_spec spec = {
      "gpu_frequency", n, true, unit, machine, NULL, ugpu, 0, -1, -1,
      GP_TP_NONE};
  if ((rc = gp__tp_track_intern(imp, &spec, &dims, &track, NULL)) != 0)
    return rc;
  return gp__tp_counter_add(imp, ts, track, (double)mhz, NULL);
}

/* SlabInfo: name 1, pages_per_slab 2, num_slabs 3: its size in bytes,
 * with the two counts as the value's args. */
static int slab_info(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     const gp__pb_field *f) {
  const uint8_t *name;
  size_t nn;
  uint64_t v[9] = {0};
  if (!fields_of(f->data, f->size, 1, &name, &nn, v))
    return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats.SlabInfo");
  gp__tp_argb dims, args;
  char tname[600];
  uint32_t n, track, row, k_pages, k_num, set;
  int rc;
  dims.n = 0;
  dims.overflow = false;
  snprintf(tname, sizeof(tname), "mem.slab.%.*s", (int)(nn > 500 ? 500 : nn),
           (const char *)name);
  double bytes =
      (double)(uint32_t)v[2] * (double)(uint32_t)v[3] * (double)imp->page_size;
  if ((rc = dim_str(imp, &dims, "slab_name", name, nn)) ||
      (rc = intern_c(imp, tname, &n)) ||
      (rc = sys_track(imp, machine, "slabinfo", n, "bytes", &dims, &track)) ||
      (rc = gp__tp_counter_add(imp, ts, track, bytes, &row)) ||
      (rc = intern_c(imp, "pages_per_slab", &k_pages)) ||
      (rc = intern_c(imp, "num_slabs", &k_num)))
    return rc;
  args.n = 0;
  args.overflow = false;
  gp__tp_argb_uint(&args, k_pages, (uint32_t)v[2]);
  gp__tp_argb_uint(&args, k_num, (uint32_t)v[3]);
  if ((rc = gp__tp_argset_commit(imp->db, &args, &set)) != 0 ||
      !gp__tp_map_put(&imp->db->c_args, row, set, NULL))
    return gp__tp_fail(imp, rc ? rc : GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* See import.h. */
void gp__tp_sys_stats_free(gp__tp_importer *imp) {
  gp__tp_map_free(&imp->disk_by_name);
  gp__tp_vec_free(&imp->disks);
}

/* One kind of repeated entry (field id) of the packet, in wire order. */
static int pass(gp__tp_importer *imp, const gp__tp_pkt *p, uint32_t id,
                bool *stop) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc = 0;
  uint32_t nth = 0;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  while (!*stop && (rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != id)
      continue;
    uint64_t k, v;
    const uint8_t *s;
    size_t sn;
    char name[320];
    if (id == SS_CPUFREQ_KHZ) {
      if (f.wire_type != GP_PB_VARINT)
        continue;
      uint32_t track;
      if ((rc = gp__tp_cpu_counter_track(imp, p->machine, nth++,
                                         "cpu_frequency", "cpufreq", &track)) ||
          (rc = gp__tp_counter_add(imp, p->ts, track, (double)(uint32_t)f.value,
                                   NULL)))
        return rc;
      continue;
    }
    if (id == SS_GPUFREQ_MHZ) {
      if (f.wire_type == GP_PB_VARINT &&
          (rc = gpufreq(imp, p->ts, p->machine, f.value)) != 0)
        return rc;
      continue;
    }
    if (f.wire_type != GP_PB_LEN)
      continue;
    if (id == SS_BUDDY_INFO || id == SS_DISK_STAT || id == SS_CPUIDLE_STATE ||
        id == SS_SLAB_INFO) {
      rc = id == SS_BUDDY_INFO  ? buddy_info(imp, p->ts, p->machine, &f)
           : id == SS_DISK_STAT ? disk_stat(imp, p->ts, p->machine, &f)
           : id == SS_SLAB_INFO ? slab_info(imp, p->ts, p->machine, &f)
                                : cpuidle_state(imp, p->ts, p->machine, &f);
      if (rc)
        return rc;
      continue;
    }
    if (id == SS_CPU_STAT) {
      if ((rc = cpu_times(imp, p->ts, p->machine, &f)) != 0)
        return rc;
      continue;
    }
    if (id == SS_THERMAL_ZONE) {
      /* name 1, temp 2, type 3: the track is the type's */
      gp__pb_reader tr;
      gp__pb_field g;
      const uint8_t *type = (const uint8_t *)"";
      size_t tn = 0;
      uint64_t temp = 0;
      gp__pb_reader_init(&tr, f.data, f.size, 0);
      while ((rc = gp__tp_pb_next(&tr, &g)) > 0) {
        if (g.id == 2 && g.wire_type == GP_PB_VARINT)
          temp = g.value;
        else if (g.id == 3 && g.wire_type == GP_PB_LEN) {
          type = g.data;
          tn = g.size;
        }
      }
      if (rc < 0)
        return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats");
      if ((rc = keyed(imp, p->ts, p->machine, "thermal_temperature_sys",
                      "thermal_zone", type, tn, NULL, "C", (double)temp)))
        return rc;
      continue;
    }
    bool str_key = id == SS_DEVFREQ;
    if (!key_value(&f, &k, &v, str_key ? &s : NULL, str_key ? &sn : NULL))
      return gp__tp_fail(imp, GP_ECORRUPT, 0, "corrupt SysStats");
    switch (id) {
    case SS_MEMINFO:
      if (k >= NMEMINFO) {
        gp__tp_stat(imp, GP_TP_STAT_meminfo_unknown_keys, 1);
        continue;
      }
      rc = keyed(imp, p->ts, p->machine, "meminfo", "meminfo_key",
                 meminfo_names[k], strlen(meminfo_names[k]), NULL, "bytes",
                 (double)v * 1024);
      break;
    case SS_VMSTAT: {
      const char *vn = gp__tp_vmstat_name(k);
      if (k >= gp__tp_ftrace_desc.nvmstat) {
        gp__tp_stat(imp, GP_TP_STAT_vmstat_unknown_keys, 1);
        continue;
      }
      if (!vn)
        vn = "";
      rc = keyed(imp, p->ts, p->machine, "vmstat", "vmstat_key", vn, strlen(vn),
                 NULL, NULL, (double)v);
      break;
    }
    case SS_DEVFREQ:
      snprintf(name, sizeof(name), "%.*s Frequency", (int)(sn > 250 ? 250 : sn),
               (const char *)s);
      rc = keyed(imp, p->ts, p->machine, "clock_frequency", "linux_device", s,
                 sn, name, NULL, (double)v);
      break;
    case SS_NUM_IRQ:
    case SS_NUM_SOFTIRQ: {
      const char *type = id == SS_NUM_IRQ ? "num_irq" : "num_softirq";
      gp__tp_argb dims;
      uint32_t n, track;
      dims.n = 0;
      dims.overflow = false;
      snprintf(name, sizeof(name), "%s (id: %u)", type, (uint32_t)k);
      if ((rc = dim_int(imp, &dims, "irq", (uint32_t)k)) ||
          (rc = intern_c(imp, name, &n)) ||
          (rc = sys_track(imp, p->machine, type, n, NULL, &dims, &track)))
        return rc;
      rc = gp__tp_counter_add(imp, p->ts, track, (double)v, NULL);
      break;
    }
    case SS_PSI:
      if (k >= sizeof(psi_keys) / sizeof(psi_keys[0])) {
        gp__tp_stat(imp, GP_TP_STAT_psi_unknown_resource, 1);
        *stop = true; /* Perfetto gives up on the rest of the packet */
        return 0;
      }
      snprintf(name, sizeof(name), "psi.%s", psi_keys[k]);
      rc = keyed(imp, p->ts, p->machine, "psi", "psi_resource", psi_keys[k],
                 strlen(psi_keys[k]), name, NULL, (double)v);
      break;
    default:
      break;
    }
    if (rc)
      return rc;
  }
  if (rc < 0)
    return gp__tp_fail(imp, GP_ECORRUPT, p->data_off, "corrupt SysStats");
  return 0;
}

/* The last value of a singular varint field id, if any. */
static bool last_varint(gp__tp_importer *imp, const gp__tp_pkt *p, uint32_t id,
                        uint64_t *v) {
  gp__pb_reader r;
  gp__pb_field f;
  bool has = false;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  while (gp__tp_pb_next(&r, &f) > 0)
    if (f.id == id && f.wire_type == GP_PB_VARINT) {
      *v = f.value;
      has = true;
    }
  return has;
}

/* See import.h. */
int gp__tp_parse_sys_stats(gp__tp_importer *imp, const gp__tp_pkt *p) {
  /* Perfetto's order: the kinds one after the other. */
  static const uint32_t before[] = {SS_MEMINFO,    SS_DEVFREQ,  SS_CPUFREQ_KHZ,
                                    SS_VMSTAT,     SS_CPU_STAT, SS_NUM_IRQ,
                                    SS_NUM_SOFTIRQ};
  static const struct {
    uint32_t id;
    const char *type;
  } totals[] = {{SS_NUM_FORKS, "num_forks"},
                {SS_NUM_IRQ_TOTAL, "num_irq_total"},
                {SS_NUM_SOFTIRQ_TOTAL, "num_softirq_total"}};
  bool stop = false;
  int rc;
  for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++)
    if ((rc = pass(imp, p, before[i], &stop)) != 0)
      return rc;
  for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
    uint64_t v;
    if (last_varint(imp, p, totals[i].id, &v) &&
        (rc = single(imp, p->ts, p->machine, totals[i].type, (double)v)))
      return rc;
  }
  if ((rc = pass(imp, p, SS_BUDDY_INFO, &stop)) != 0 ||
      (rc = pass(imp, p, SS_DISK_STAT, &stop)) != 0 ||
      (rc = pass(imp, p, SS_PSI, &stop)) != 0 || stop)
    return rc;
  static const uint32_t after[] = {SS_THERMAL_ZONE, SS_CPUIDLE_STATE,
                                   SS_GPUFREQ_MHZ, SS_SLAB_INFO};
  for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++)
    if ((rc = pass(imp, p, after[i], &stop)) != 0)
      return rc;
  return 0;
}
