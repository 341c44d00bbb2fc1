/*
 * seq.c - the importer's per-sequence state, read in file order: errors,
 * interned data (stored by sequence generation, decoded on first use and
 * cached), generations (a new one on SEQ_INCREMENTAL_STATE_CLEARED or new
 * trace_packet_defaults), and clock snapshots.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define CACHE_ABSENT (GP_TP_NONE - 1)

/* ------------------------------------------------------------------ */
/* Errors                                                                */

/* See import.h. */
int gp__tp_fail(gp__tp_importer *imp, int code, uint64_t off, const char *fmt,
                ...) {
  if (imp->err)
    return imp->err;
  imp->err = code;
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  imp->err_off = off;
  if (off >= imp->file_size) {
    for (size_t i = 0; i < imp->regions.n; i++) {
      const gp__tp_inflated_region *rg = &imp->regions.v[i];
      if (off >= rg->start && off - rg->start <= rg->size) {
        imp->err_off = rg->file_off;
        snprintf(imp->errmsg, sizeof(imp->errmsg),
                 "%s (at byte %llu of the packets inflated from "
                 "compressed_packets)",
                 msg, (unsigned long long)(off - rg->start));
        return code;
      }
    }
  }
  snprintf(imp->errmsg, sizeof(imp->errmsg), "%s", msg);
  return code;
}

/* See import.h. */
int gp__tp_corrupt(gp__tp_importer *imp, const gp__pb_reader *r,
                   const char *what) {
  return gp__tp_fail(imp, GP_ECORRUPT, gp__pb_offset(r), "malformed %s", what);
}

/* ------------------------------------------------------------------ */
/* Interning                                                             */

/* See import.h. */
gp__tp_interned *gp__tp_interned_get(gp__tp_importer *imp, uint32_t ns,
                                     uint32_t field, uint64_t iid) {
  uint64_t *i =
      gp__tp_map2_get(&imp->interned_by_key, (uint64_t)ns << 32 | field, iid);
  if (!i) {
    /* Perfetto counts every lookup that misses. */
    gp__tp_stat(imp, GP_TP_STAT_interned_data_tokenizer_errors, 1);
    return NULL;
  }
  return &imp->interned.v[*i];
}

static int interned_put(gp__tp_importer *imp, uint32_t ns, uint32_t field,
                        uint64_t iid, uint64_t off, uint32_t len) {
  if (!gp__tp_vec_reserve(&imp->interned, 1))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory interning data");
  bool ins;
  uint64_t *slot =
      gp__tp_map2_put(&imp->interned_by_key, (uint64_t)ns << 32 | field, iid,
                      imp->interned.n, &ins);
  if (!slot)
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory interning data");
  if (!ins)
    return 0; /* the first definition in a generation wins */
  gp__tp_interned *e = &imp->interned.v[imp->interned.n++];
  e->off = off;
  e->len = len;
  e->cache = GP_TP_NONE;
  return 0;
}

/* See import.h. */
uint32_t gp__tp_interned_str(gp__tp_importer *imp, uint32_t gen, uint32_t field,
                             uint64_t iid, uint32_t str_field, int *rc) {
  *rc = 0;
  gp__tp_interned *e =
      gp__tp_interned_get(imp, imp->gens.v[gen].ns, field, iid);
  if (!e)
    return GP_TP_NONE;
  if (e->cache == CACHE_ABSENT)
    return GP_TP_NONE;
  if (e->cache != GP_TP_NONE)
    return e->cache;
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, e->off, e->len);
  uint32_t s = CACHE_ABSENT;
  int n;
  while ((n = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == str_field && f.wire_type == GP_PB_LEN) {
      *rc = gp__tp_intern(imp, f.data, f.size, &s);
      if (*rc)
        return GP_TP_NONE;
    }
  if (n < 0) {
    *rc = gp__tp_corrupt(imp, &r, "interned data");
    return GP_TP_NONE;
  }
  e->cache = s; /* entries are only added while tokenizing: e is valid */
  return s == CACHE_ABSENT ? GP_TP_NONE : s;
}

/* See import.h. */
int gp__tp_intern(gp__tp_importer *imp, const void *s, size_t n,
                  uint32_t *out) {
  *out = gp__tp_str_intern(&imp->db->strings, s, n);
  if (*out == GP_TP_NONE)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory interning strings");
  return 0;
}

/* See import.h. */
int gp__tp_intern_text(gp__tp_importer *imp, const void *s, size_t n,
                       uint32_t *out) {
  if (!n) {
    *out = GP_TP_NONE;
    return 0;
  }
  return gp__tp_intern(imp, s, n, out);
}

/* ------------------------------------------------------------------ */
/* Sequences                                                             */

/* See import.h. */
int gp__tp_seq_new_gen(gp__tp_importer *imp, uint32_t seq_id,
                       const gp__tp_gen *copy, uint32_t *out, uint64_t off) {
  if (imp->gens.n >= GP_TP_MAX_GENS)
    return gp__tp_fail(imp, GP_ERANGE, off,
                       "more than %u sequence generations (incremental-state "
                       "resets or packet-defaults changes)",
                       GP_TP_MAX_GENS);
  gp__tp_gen g = {0};
  if (copy) {
    g = *copy;
  } else {
    g.seq_id = seq_id;
    g.ns = imp->next_ns++;
  }
  if (!gp__tp_vec_push(&imp->gens, g))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  *out = (uint32_t)imp->gens.n - 1;
  return 0;
}

/* See import.h. */
int gp__tp_seq_get(gp__tp_importer *imp, uint32_t seq_id, gp__tp_seq **out,
                   bool *is_new, uint64_t off) {
  bool ins;
  uint64_t *slot = gp__tp_map_put(&imp->seq_by_id, seq_id, imp->seqs.n, &ins);
  if (!slot || (ins && !gp__tp_vec_reserve(&imp->seqs, 1)))
    return gp__tp_fail(imp, GP_ENOMEM, off, "out of memory");
  if (ins) {
    uint32_t gen;
    int rc = gp__tp_seq_new_gen(imp, seq_id, NULL, &gen, off);
    if (rc)
      return rc;
    gp__tp_seq *s = &imp->seqs.v[imp->seqs.n++];
    memset(s, 0, sizeof(*s));
    s->gen = gen;
  }
  *is_new = ins;
  *out = &imp->seqs.v[*slot];
  return 0;
}

/* See import.h. */
int gp__tp_seq_interned(gp__tp_importer *imp, uint32_t ns, const uint8_t *data,
                        size_t len) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    bool wanted = true;
    switch (f.id) {
    case GP_TP_IN_EVENT_CATEGORIES:
    case GP_TP_IN_EVENT_NAMES:
    case GP_TP_IN_DEBUG_ANNOTATION_NAMES:
    case GP_TP_IN_FUNCTION_NAMES:
    case GP_TP_IN_VULKAN_MEMORY_KEYS:
    case GP_TP_IN_KERNEL_SYMBOLS:
    case GP_TP_IN_GRAPHICS_CONTEXTS:
    case GP_TP_IN_GPU_SPECIFICATIONS:
    case GP_TP_IN_DEBUG_ANNOTATION_STRING_VALUES:
    case GP_TP_IN_GPU_COUNTER_DESCRIPTORS:
    case GP_TP_IN_COMPUTE_KERNELS:
    case GP_TP_IN_COMPUTE_ARG_NAMES:
      break;
    default:
      wanted = false;
    }
    uint64_t iid = 0;
    bool has_iid = false;
    gp__pb_reader_sub(&sub, &r, &f);
    int rc2;
    while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0)
      if (g.id == 1 && g.wire_type == GP_PB_VARINT) {
        iid = g.value;
        has_iid = true;
      }
    if (rc2 < 0 && !wanted)
      continue; /* not ours to read, nor to judge */
    if (rc2 < 0)
      return gp__tp_corrupt(imp, &sub, "interned data entry");
    /* Perfetto keeps no entry without an iid, of any kind, and counts it. */
    if (!has_iid) {
      gp__tp_stat(imp, GP_TP_STAT_interned_data_tokenizer_errors, 1);
      continue;
    }
    if (!wanted)
      continue;
    if (f.size > UINT32_MAX)
      return gp__tp_fail(imp, GP_ECORRUPT, gp__pb_offset(&r),
                         "interned entry too large");
    rc2 = interned_put(imp, ns, f.id, iid, gp__tp_off(imp, f.data),
                       (uint32_t)f.size);
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "interned_data");
  return 0;
}

/* See import.h. */
int gp__tp_seq_defaults(gp__tp_importer *imp, gp__tp_gen *g,
                        const uint8_t *data, size_t len) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  g->ts_clock = 0;
  g->ted_len = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 58 && f.wire_type == GP_PB_VARINT)
      g->ts_clock = (uint32_t)f.value;
    else if (f.id == 11 && f.wire_type == GP_PB_LEN && f.size <= UINT32_MAX) {
      g->ted_off = gp__tp_off(imp, f.data);
      g->ted_len = (uint32_t)f.size;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "trace_packet_defaults");
  return 0;
}

/* See import.h. */
int gp__tp_seq_clock_snapshot(gp__tp_importer *imp, uint32_t seq_id,
                              const uint8_t *data, size_t len) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  gp__tp_snap_clock clk[64];
  uint32_t n = 0, primary = 0;
  bool bad = false;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 2 && f.wire_type == GP_PB_VARINT) {
      primary = (uint32_t)f.value;
    } else if (f.id == 1 && f.wire_type == GP_PB_LEN) {
      uint32_t id = 0;
      gp__tp_snap_clock c = {0, 0, 1, false};
      gp__pb_reader_sub(&sub, &r, &f);
      int rc2;
      while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
        if (g.wire_type != GP_PB_VARINT)
          continue;
        if (g.id == 1)
          id = (uint32_t)g.value;
        else if (g.id == 2)
          c.ts = (int64_t)g.value;
        else if (g.id == 3)
          c.incremental = g.value != 0;
        else if (g.id == 4)
          c.unit = (int64_t)g.value;
      }
      if (rc2 < 0)
        return gp__tp_corrupt(imp, &sub, "clock_snapshot clock");
      if (id >= 64 && id < 128 && seq_id == 0) {
        bad = true;
        continue;
      }
      c.key = gp__tp_clock_key(id, seq_id);
      if (n < 64)
        clk[n++] = c;
      else
        bad = true;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "clock_snapshot");
  if (bad || n == 0) {
    gp__tp_stat(imp, GP_TP_STAT_clock_snapshot_invalid, 1);
    if (n == 0)
      return 0;
  }
  rc = gp__tp_clocks_add_snapshot(&imp->clocks, clk, n, primary);
  if (rc == GP_EINVAL) {
    gp__tp_stat(imp, GP_TP_STAT_clock_snapshot_invalid, 1);
    return 0;
  }
  if (rc)
    return gp__tp_fail(imp, rc, gp__tp_off(imp, data), "clock snapshot: %s",
                       gp_strerror(rc));
  return 0;
}
