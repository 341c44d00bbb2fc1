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
 *   thermal_zone (15)       thermal_temperature_sys  its type     thermal_zone
 *
 * meminfo values are kB, stored as bytes (unit "bytes"). Not imported yet:
 * buddy_info, disk_stat, cpuidle_state, gpufreq_mhz, slab_info.
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
  SS_PSI = 14,
  SS_THERMAL_ZONE = 15,
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
    if (f.wire_type != GP_PB_LEN)
      continue;
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
  if ((rc = pass(imp, p, SS_PSI, &stop)) != 0 || stop)
    return rc;
  return pass(imp, p, SS_THERMAL_ZONE, &stop);
}
