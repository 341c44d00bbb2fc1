/*
 * parse_cpuinfo.c - CpuInfo packets (linux.system_info: /proc/cpuinfo and
 * cpufreq), read in file order as Perfetto v58.2's SystemProbesParser::
 * ParseCpuInfo reads them: each CPU listed (numbered by its place in the
 * list) gets its cpu row, its processor name, capacity, and cluster id,
 * its available frequencies (cpu_available_frequencies), and as args its
 * ARM identifier and its known feature bits. CPUs are grouped into
 * clusters by capacity when every CPU has one, else by their highest
 * frequency when every CPU has some: 0 for the lowest, one more for each
 * larger value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

/* CpuInfo (cpu_info.proto). */
enum { CI_CPUS = 1 };
enum {
  CPU_PROCESSOR = 1,
  CPU_FREQS = 2,
  CPU_CAPACITY = 3,
  CPU_ARM = 4,
  CPU_FEATURES = 5
};

/* Perfetto's kCpuInfoFeatures, by bit (append-only there). */
static const char *const features[] = {"mte", "mte3"};
#define NFEATURES (sizeof(features) / sizeof(features[0]))

typedef struct cpuinfo {
  const uint8_t *proc;
  size_t proc_len;
  bool has_capacity, has_arm;
  uint32_t capacity;
  uint32_t arm[5]; /* implementer, architecture, variant, part, revision */
  uint64_t features;
  uint32_t max_freq, nfreq;
  const uint8_t *data; /* the Cpu message, for its frequencies */
  size_t len;
  uint32_t cpu;
  uint32_t cluster;
} cpuinfo;

static int decode_cpu(gp__tp_importer *imp, const uint8_t *p, size_t n,
                      cpuinfo *c) {
  gp__pb_reader r, ar;
  gp__pb_field f, g;
  int rc;
  c->data = p;
  c->len = n;
  gp__pb_reader_init(&r, p, n, gp__tp_off(imp, p));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    bool v = f.wire_type == GP_PB_VARINT;
    if (f.id == CPU_PROCESSOR && f.wire_type == GP_PB_LEN) {
      c->proc = f.data;
      c->proc_len = f.size;
    } else if (f.id == CPU_FREQS && v) {
      c->nfreq++;
      if ((uint32_t)f.value > c->max_freq || c->nfreq == 1)
        c->max_freq = (uint32_t)f.value;
    } else if (f.id == CPU_CAPACITY && v) {
      c->has_capacity = true;
      c->capacity = (uint32_t)f.value;
    } else if (f.id == CPU_FEATURES && v) {
      c->features = f.value;
    } else if (f.id == CPU_ARM && f.wire_type == GP_PB_LEN) {
      c->has_arm = true;
      memset(c->arm, 0, sizeof(c->arm));
      gp__pb_reader_init(&ar, f.data, f.size, gp__tp_off(imp, f.data));
      while ((rc = gp__tp_pb_next(&ar, &g)) > 0)
        if (g.wire_type == GP_PB_VARINT && g.id >= 1 && g.id <= 5)
          c->arm[g.id - 1] = (uint32_t)g.value;
      if (rc < 0)
        return gp__tp_corrupt(imp, &ar, "CpuInfo.ArmCpuIdentifier");
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "CpuInfo.Cpu");
  return 0;
}

/* Cluster ids: by key (capacity or highest frequency), 0 for the least,
 * one more at each larger key. */
static int by_key(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sets the cluster ids; with capacities, order[] gets the CPUs by
 * capacity (Perfetto sorts its list so, and makes the rows in that
 * order), else stays as it is. */
static int clusters(gp__tp_importer *imp, cpuinfo *c, uint32_t n, bool capacity,
                    uint32_t *order) {
  uint64_t *k = malloc(n * sizeof(uint64_t));
  if (!k)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  for (uint32_t i = 0; i < n; i++)
    k[i] = (uint64_t)(capacity ? c[i].capacity : c[i].max_freq) << 32 | i;
  qsort(k, n, sizeof(uint64_t), by_key);
  uint32_t cl = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i && k[i] >> 32 > k[i - 1] >> 32)
      cl++;
    c[(uint32_t)k[i]].cluster = cl;
    if (capacity)
      order[i] = (uint32_t)k[i];
  }
  free(k);
  return 0;
}

/* The cpu row of c: its columns, frequencies and args. */
static int apply(gp__tp_importer *imp, uint32_t machine, const cpuinfo *c) {
  gp__tp_db *db = imp->db;
  uint32_t ucpu, key;
  int rc;
  if ((rc = gp__tp_cpu_get(imp, machine, c->cpu, &ucpu)) != 0)
    return rc;
  gp__tp_cpu *row = &db->cpus.v[ucpu];
  if (c->proc_len &&
      (rc = gp__tp_intern(imp, c->proc, c->proc_len, &row->processor)) != 0)
    return rc;
  row->cluster = c->cluster;
  if (c->has_capacity)
    row->capacity = c->capacity;
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, c->data, c->len, gp__tp_off(imp, c->data));
  while (gp__tp_pb_next(&r, &f) > 0)
    if (f.id == CPU_FREQS && f.wire_type == GP_PB_VARINT) {
      if (!gp__tp_vec_push(&db->cf_ucpu, ucpu) ||
          !gp__tp_vec_push(&db->cf_freq, (uint32_t)f.value))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    }
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  static const char *const arm_keys[] = {
      "arm_cpu_implementer", "arm_cpu_architecture", "arm_cpu_variant",
      "arm_cpu_part", "arm_cpu_revision"};
  for (int i = 0; c->has_arm && i < 5; i++) {
    if ((rc = gp__tp_intern(imp, arm_keys[i], strlen(arm_keys[i]), &key)))
      return rc;
    gp__tp_argb_uint(&b, key, c->arm[i]);
  }
  for (size_t i = 0; i < NFEATURES; i++) {
    char name[64];
    if (!(c->features & (1ull << i)))
      continue;
    size_t n =
        (size_t)snprintf(name, sizeof(name), "cpu_features.%s", features[i]);
    if ((rc = gp__tp_intern(imp, name, n, &key)) != 0)
      return rc;
    gp__tp_argb_bool(&b, key, true);
  }
  if (c->features) {
    if ((rc = gp__tp_intern(imp, "cpu_features.raw_bitmap", 23, &key)) != 0)
      return rc;
    gp__tp_argb_uint(&b, key, c->features);
  }
  if (c->features >> NFEATURES)
    gp__tp_stat(imp, GP_TP_STAT_cpu_info_unknown_cpu_features, 1);
  if ((rc = gp__tp_argset_commit(db, &b, &row->args)) != 0)
    return gp__tp_fail(imp, rc, 0, "out of memory");
  return 0;
}

/* See import.h. */
int gp__tp_tokenize_cpu_info(gp__tp_importer *imp, uint32_t machine,
                             const uint8_t *data, size_t len) {
  gp__pb_reader r;
  gp__pb_field f;
  uint32_t n = 0;
  int rc;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    n += f.id == CI_CPUS && f.wire_type == GP_PB_LEN;
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "CpuInfo");
  if (n == 0) {
    gp__tp_stat(imp, GP_TP_STAT_cpu_info_empty, 1);
    return 0;
  }
  cpuinfo *c = calloc(n, sizeof(cpuinfo));
  uint32_t *order = malloc(n * sizeof(uint32_t));
  if (!c || !order) {
    free(c);
    free(order);
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  }
  uint32_t i = 0;
  bool all_cap = true, all_freq = true;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while (rc == 0 && gp__tp_pb_next(&r, &f) > 0) {
    if (f.id != CI_CPUS || f.wire_type != GP_PB_LEN)
      continue;
    c[i].cpu = order[i] = i;
    rc = decode_cpu(imp, f.data, f.size, &c[i]);
    all_cap &= c[i].has_capacity;
    all_freq &= c[i].nfreq > 0;
    i++;
  }
  if (rc == 0 && (all_cap || all_freq))
    rc = clusters(imp, c, n, all_cap, order);
  for (i = 0; rc == 0 && i < n; i++)
    rc = apply(imp, machine, &c[order[i]]);
  free(c);
  free(order);
  return rc;
}
