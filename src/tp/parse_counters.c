/*
 * parse_counters.c - GPU counters: descriptors (inline "mode 1", whose
 * counter ids are global, and interned "mode 2", scoped to a sequence
 * generation and iid), counter groups, and samples.
 *
 * Descriptors are processed in file order, at tokenization: an inline one
 * when its packet is tokenized, an interned one when the first event
 * refers to it. Samples are parsed in timestamp order. A
 * backwards-looking counter (the default) reports, at each sample, the
 * value of the interval that just ended, so the sample's value is written
 * into the previous row of the track and the new row gets 0; a
 * forwards-looking counter's sample is stored as is.
 */
#include <stdio.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MAX_UNITS 32
#define MAX_GROUPS 64

static const char *const unit_names[] = {
    "",    "bit", "Kb",  "Mb",        "Gb",       "Tb",         "Pb",
    "B",   "KB",  "MB",  "GB",        "TB",       "PB",         "Hz",
    "KHz", "MHz", "GHz", "THz",       "PHz",      "ns",         "us",
    "ms",  "s",   "min", "h",         "Vertex",   "Pixel",      "Triangle",
    "mW",  "W",   "kW",  "J",         "V",        "A",          "C",
    "F",   "K",   "%",   "Primitive", "Fragment", "Instruction"};

static const char *unit_name(uint64_t u) {
  return u < sizeof(unit_names) / sizeof(unit_names[0]) ? unit_names[u]
                                                        : "Unknown";
}

/* One GpuCounterSpec, decoded. */
typedef struct spec {
  bool has_id, has_name, has_units;
  uint32_t id;
  const uint8_t *name, *desc;
  size_t name_len, desc_len;
  bool has_desc;
  uint64_t num[MAX_UNITS], den[MAX_UNITS];
  uint32_t nnum, nden;
  uint64_t groups[MAX_GROUPS];
  uint32_t ngroups;
  bool forwards;
} spec;

static int decode_spec(gp__tp_importer *imp, const gp__pb_reader *parent,
                       const gp__pb_field *pf, spec *s) {
  memset(s, 0, sizeof(*s));
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    bool v = f.wire_type == GP_PB_VARINT, l = f.wire_type == GP_PB_LEN;
    if (f.id == 1 && v) {
      s->has_id = true;
      s->id = (uint32_t)f.value;
    } else if (f.id == 2 && l) {
      s->has_name = true;
      s->name = f.data;
      s->name_len = f.size;
    } else if (f.id == 3 && l) {
      s->has_desc = true;
      s->desc = f.data;
      s->desc_len = f.size;
    } else if (f.id == 7 && v) {
      s->has_units = true;
      if (s->nnum < MAX_UNITS)
        s->num[s->nnum++] = f.value;
    } else if (f.id == 8 && v) {
      s->has_units = true;
      if (s->nden < MAX_UNITS)
        s->den[s->nden++] = f.value;
    } else if (f.id == 10 && v) {
      if (s->ngroups < MAX_GROUPS)
        s->groups[s->ngroups++] = f.value;
    } else if (f.id == 11 && v) {
      s->forwards = f.value == 2;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuCounterSpec");
  return 0;
}

/* "Vertex/s", "Triangle/ms:ms", ... or NONE without units. */
static int format_unit(gp__tp_importer *imp, const spec *s, uint32_t *out) {
  *out = GP_TP_NONE;
  if (!s->has_units)
    return 0;
  char buf[MAX_UNITS * 2 * 16];
  size_t n = 0;
  for (uint32_t i = 0; i < s->nnum; i++)
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ":" : "",
                          unit_name(s->num[i]));
  char sep = '/';
  for (uint32_t i = 0; i < s->nden; i++) {
    const char *u = unit_name(s->den[i]);
    if (!*u)
      continue;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%c%s", sep, u);
    sep = ':';
  }
  return gp__tp_intern(imp, buf, n, out);
}

static int counter_track(gp__tp_importer *imp, uint32_t machine, int32_t gpu,
                         const spec *s, uint32_t *track) {
  gp__tp_db *db = imp->db;
  uint32_t ugpu, name, desc = GP_TP_NONE, unit;
  int rc;
  if ((rc = gp__tp_gpu_get(imp, machine, (uint32_t)gpu, &ugpu)) ||
      (rc = gp__tp_intern(imp, s->name, s->name_len, &name)) ||
      (rc = format_unit(imp, s, &unit)))
    return rc;
  if (s->has_desc && (rc = gp__tp_intern(imp, s->desc, s->desc_len, &desc)))
    return rc;
  gp__tp_argb dims, src;
  uint32_t k_ugpu, k_gpu, k_name;
  if ((rc = gp__tp_intern(imp, "ugpu", 4, &k_ugpu)) ||
      (rc = gp__tp_intern(imp, "gpu", 3, &k_gpu)) ||
      (rc = gp__tp_intern(imp, "name", 4, &k_name)))
    return rc;
  dims.n = 0;
  gp__tp_argb_int(&dims, k_ugpu, ugpu);
  gp__tp_argb_int(&dims, k_gpu, (uint32_t)gpu);
  gp__tp_argb_str(&dims, k_name, name);
  src.n = 0;
  gp__tp_argb_str(&src, db->k_description, desc);
  gp__tp_track_spec ts = {"gpu_counter", name, true,          unit, machine,
                          &src,          ugpu, (uint32_t)gpu, -1,   -1,
                          GP_TP_NONE};
  return gp__tp_track_intern(imp, &ts, &dims, track, NULL);
}

static int add_group(gp__tp_importer *imp, int64_t group, uint32_t track,
                     uint32_t name, uint32_t desc) {
  gp__tp_counter_group g = {group, track, name, desc};
  if (!gp__tp_vec_push(&imp->db->counter_groups, g))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* The custom groups of a descriptor (counter_groups entries). */
typedef struct group_meta {
  uint32_t n;
  struct {
    uint64_t id;
    uint32_t name, desc;
  } g[MAX_GROUPS];
} group_meta;

/* Name and description of group `id` in the descriptor, NONE if absent. */
static void meta_find(const group_meta *m, uint64_t id, uint32_t *name,
                      uint32_t *desc) {
  *name = *desc = GP_TP_NONE;
  for (uint32_t i = 0; i < m->n; i++)
    if (m->g[i].id == id) {
      *name = m->g[i].name;
      *desc = m->g[i].desc;
      return;
    }
}

/*
 * Processes a GpuCounterDescriptor. interned: mode 2 (ns/iid identify the
 * map; specs without id or name are silently skipped, duplicate ids keep
 * the first); else mode 1 (ids global per machine; invalid and duplicate
 * specs are counted in gpu_counters_invalid_spec).
 */
static int process_descriptor(gp__tp_importer *imp, uint32_t machine,
                              int32_t gpu, const uint8_t *data, size_t len,
                              bool interned, uint32_t ns, uint64_t iid) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  int rc;
  group_meta meta;
  meta.n = 0;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 6 || f.wire_type != GP_PB_LEN)
      continue;
    bool has_gid = false;
    uint64_t gid = 0;
    uint32_t name = GP_TP_NONE, desc = GP_TP_NONE;
    gp__pb_reader_sub(&sub, &r, &f);
    int rc2;
    while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
      if (g.id == 1 && g.wire_type == GP_PB_VARINT) {
        has_gid = true;
        gid = (uint32_t)g.value;
      } else if (g.id == 2 && g.wire_type == GP_PB_LEN) {
        if ((rc2 = gp__tp_intern(imp, g.data, g.size, &name)))
          return rc2;
      } else if (g.id == 3 && g.wire_type == GP_PB_LEN) {
        if ((rc2 = gp__tp_intern(imp, g.data, g.size, &desc)))
          return rc2;
      }
    }
    if (rc2 < 0)
      return gp__tp_corrupt(imp, &sub, "GpuCounterGroupSpec");
    if (!has_gid || meta.n == MAX_GROUPS)
      continue;
    bool dup = false;
    for (uint32_t i = 0; i < meta.n; i++)
      dup |= meta.g[i].id == gid;
    if (dup)
      continue; /* the first entry of a group id names it */
    meta.g[meta.n].id = gid;
    meta.g[meta.n].name = name;
    meta.g[meta.n].desc = desc;
    meta.n++;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuCounterDescriptor");

  /* Specs, in order. local: counter ids resolved by this descriptor. */
  gp__tp_map local = {0};
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 1 || f.wire_type != GP_PB_LEN)
      continue;
    spec s;
    if ((rc = decode_spec(imp, &r, &f, &s)))
      goto out;
    if (!s.has_id || !s.has_name) {
      if (!interned)
        gp__tp_stat(imp, GP_TP_STAT_gpu_counters_invalid_spec, 1);
      continue;
    }
    if (!interned &&
        gp__tp_map_get(&imp->ctr_global, (uint64_t)machine << 32 | s.id)) {
      gp__tp_stat(imp, GP_TP_STAT_gpu_counters_invalid_spec, 1);
      continue;
    }
    uint32_t track;
    if ((rc = counter_track(imp, machine, gpu, &s, &track)))
      goto out;
    bool first;
    if (!gp__tp_map_put(&local, s.id, track, &first)) {
      rc = gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
      goto out;
    }
    if (first || !interned) {
      if (s.ngroups == 0) {
        rc = add_group(imp, 0, track, GP_TP_NONE, GP_TP_NONE);
      } else {
        for (uint32_t i = 0; !rc && i < s.ngroups; i++) {
          uint32_t gname, gdesc;
          meta_find(&meta, (uint32_t)s.groups[i], &gname, &gdesc);
          rc = add_group(imp, (int32_t)(uint32_t)s.groups[i], track, gname,
                         gdesc);
        }
      }
      if (rc)
        goto out;
    }
    gp__tp_ctr_spec cs = {track, s.forwards};
    uint64_t *slot;
    if (interned)
      slot = gp__tp_map2_put(&imp->ctr_interned, (uint64_t)ns << 32 | s.id, iid,
                             imp->ctr_specs.n, &first);
    else
      slot = gp__tp_map_put(&imp->ctr_global, (uint64_t)machine << 32 | s.id,
                            imp->ctr_specs.n, &first);
    if (!slot || (first && !gp__tp_vec_push(&imp->ctr_specs, cs))) {
      rc = gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
      goto out;
    }
  }
  if (rc < 0) {
    rc = gp__tp_corrupt(imp, &r, "GpuCounterDescriptor");
    goto out;
  }

  /* Custom groups: one row per listed counter this descriptor resolved. */
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 6 || f.wire_type != GP_PB_LEN)
      continue;
    bool has_gid = false;
    uint64_t gid = 0;
    uint32_t name = GP_TP_NONE, desc = GP_TP_NONE;
    gp__pb_reader_sub(&sub, &r, &f);
    while (gp__tp_pb_next(&sub, &g) > 0) {
      if (g.id == 1 && g.wire_type == GP_PB_VARINT) {
        has_gid = true;
        gid = (uint32_t)g.value;
      } else if (g.id == 2 && g.wire_type == GP_PB_LEN) {
        name = gp__tp_str_find(&imp->db->strings, (const char *)g.data, g.size);
      } else if (g.id == 3 && g.wire_type == GP_PB_LEN) {
        desc = gp__tp_str_find(&imp->db->strings, (const char *)g.data, g.size);
      }
    }
    if (!has_gid)
      continue;
    gp__pb_reader_sub(&sub, &r, &f);
    while (gp__tp_pb_next(&sub, &g) > 0) {
      if (g.id != 4 || g.wire_type != GP_PB_VARINT)
        continue;
      uint64_t *t = gp__tp_map_get(&local, (uint32_t)g.value);
      if (t && (rc = add_group(imp, (int32_t)(uint32_t)gid, (uint32_t)*t, name,
                               desc)))
        goto out;
    }
  }
  rc = 0;
out:
  gp__tp_map_free(&local);
  return rc;
}

/* The decoded top of a GpuCounterEvent. */
typedef struct event {
  const uint8_t *desc;
  size_t desc_len;
  bool has_iid, has_counters;
  uint64_t iid;
  int32_t gpu;
} event;

static int decode_event(gp__tp_importer *imp, const uint8_t *data, size_t len,
                        event *e) {
  memset(e, 0, sizeof(*e));
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 1 && f.wire_type == GP_PB_LEN) {
      e->desc = f.data;
      e->desc_len = f.size;
    } else if (f.id == 2 && f.wire_type == GP_PB_LEN) {
      e->has_counters = true;
    } else if (f.id == 3 && f.wire_type == GP_PB_VARINT) {
      e->gpu = (int32_t)(uint32_t)f.value;
    } else if (f.id == 4 && f.wire_type == GP_PB_VARINT) {
      e->has_iid = true;
      e->iid = f.value;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuCounterEvent");
  return 0;
}

/* Mode 2: processes the interned descriptor iid of generation gen once. */
static int interned_descriptor(gp__tp_importer *imp, uint32_t machine,
                               uint32_t gen, uint64_t iid) {
  uint32_t ns = imp->gens.v[gen].ns;
  if (gp__tp_map2_get(&imp->desc_done, ns, iid))
    return 0;
  gp__tp_interned *in =
      gp__tp_interned_get(imp, ns, GP_TP_IN_GPU_COUNTER_DESCRIPTORS, iid);
  const uint8_t *desc = NULL;
  size_t desc_len = 0;
  int32_t gpu = 0;
  if (in) {
    gp__pb_reader r;
    gp__pb_field f;
    gp__tp_reader_at(imp, &r, in->off, in->len);
    int rc;
    while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
      if (f.id == 2 && f.wire_type == GP_PB_LEN) {
        desc = f.data;
        desc_len = f.size;
      } else if (f.id == 3 && f.wire_type == GP_PB_VARINT) {
        gpu = (int32_t)(uint32_t)f.value;
      }
    }
    if (rc < 0)
      return gp__tp_corrupt(imp, &r, "InternedGpuCounterDescriptor");
  }
  if (!desc) {
    gp__tp_stat(imp, GP_TP_STAT_gpu_counters_invalid_spec, 1);
    return 0;
  }
  if (!gp__tp_map2_put(&imp->desc_done, ns, iid, 1, NULL))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return process_descriptor(imp, machine, gpu, desc, desc_len, true, ns, iid);
}

/* See import.h. */
int gp__tp_tokenize_gpu_counter_event(gp__tp_importer *imp, uint32_t machine,
                                      uint32_t gen, const uint8_t *data,
                                      size_t len, bool has_ts, bool *drop) {
  event e;
  int rc = decode_event(imp, data, len, &e);
  if (rc)
    return rc;
  if (e.has_iid)
    rc = interned_descriptor(imp, machine, gen, e.iid);
  else if (e.desc)
    rc = process_descriptor(imp, machine, e.gpu, e.desc, e.desc_len, false, 0,
                            0);
  if (rc)
    return rc;
  if (e.has_counters && !has_ts) {
    gp__tp_stat(imp, GP_TP_STAT_gpu_counters_missing_timestamp, 1);
    *drop = true;
  }
  return 0;
}

static int push_value(gp__tp_importer *imp, int64_t ts, double value,
                      const gp__tp_ctr_spec *cs) {
  gp__tp_db *db = imp->db;
  if (cs->forwards)
    return gp__tp_counter_add(imp, ts, cs->track, value, NULL);
  if (cs->track >= imp->last_counter_row.n) {
    size_t n = imp->last_counter_row.n;
    if (!gp__tp_vec_reserve(&imp->last_counter_row, cs->track + 1 - n))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    for (size_t i = n; i <= cs->track; i++)
      imp->last_counter_row.v[i] = GP_TP_NONE;
    imp->last_counter_row.n = cs->track + 1;
  }
  uint32_t row;
  int rc = gp__tp_counter_add_open(imp, ts, cs->track, &row);
  if (rc)
    return rc;
  /* The previous row's value is final now: it can be streamed. */
  uint32_t *last = &imp->last_counter_row.v[cs->track];
  if (*last != GP_TP_NONE) {
    db->c_value.v[*last] = value;
    rc = gp__tp_stream_counter(imp, *last);
  }
  *last = row;
  return rc;
}

/* The spec of counter id for a packet (descriptor iid in ns, or the
 * machine's global ids): through a small direct-mapped cache, since a
 * sampler repeats the same few ids. NULL if unknown. */
static const gp__tp_ctr_spec *lookup_spec(gp__tp_importer *imp, bool global,
                                          uint32_t ns, uint64_t iid,
                                          uint32_t machine, uint32_t id) {
  uint64_t h = gp__tp_mix64(((uint64_t)ns << 32 | id) ^ iid * 31 ^
                            ((uint64_t)machine << 48) ^ global);
  gp__tp_ctr_cache *c = &imp->ctr_cache[h & (GP_TP_CTR_CACHE - 1)];
  if (c->spec != GP_TP_NONE && c->id == id && c->global == global &&
      (global ? c->machine == machine : (c->ns == ns && c->iid == iid)))
    return &imp->ctr_specs.v[c->spec];
  uint64_t *si =
      global
          ? gp__tp_map_get(&imp->ctr_global, (uint64_t)machine << 32 | id)
          : gp__tp_map2_get(&imp->ctr_interned, (uint64_t)ns << 32 | id, iid);
  if (!si)
    return NULL;
  c->spec = (uint32_t)*si;
  c->id = id;
  c->ns = ns;
  c->iid = iid;
  c->machine = machine;
  c->global = global;
  return &imp->ctr_specs.v[*si];
}

/* See import.h. */
int gp__tp_parse_gpu_counter_event(gp__tp_importer *imp, const gp__tp_pkt *p) {
  const uint8_t *data = gp__tp_src(imp, p->data_off);
  event e;
  int rc = decode_event(imp, data, p->data_len, &e);
  if (rc || !e.has_counters)
    return rc;
  uint32_t ns = imp->gens.v[p->gen].ns;
  bool checked = false;
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__pb_reader_init(&r, data, p->data_len, p->data_off);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 2 || f.wire_type != GP_PB_LEN)
      continue;
    bool has_id = false, has_val = false;
    uint32_t id = 0;
    double v = 0;
    gp__pb_reader_sub(&sub, &r, &f);
    int rc2;
    while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
      if (g.id == 1 && g.wire_type == GP_PB_VARINT) {
        has_id = true;
        id = (uint32_t)g.value;
      } else if (g.id == 2 && g.wire_type == GP_PB_VARINT) {
        has_val = true;
        v = (double)(int64_t)g.value;
      } else if (g.id == 3 && g.wire_type == GP_PB_I64) {
        has_val = true;
        v = gp__pb_as_double(&g);
      }
    }
    if (rc2 < 0)
      return gp__tp_corrupt(imp, &sub, "GpuCounter");
    if (!has_id || !has_val)
      continue;
    const gp__tp_ctr_spec *sp =
        lookup_spec(imp, !e.has_iid, ns, e.iid, p->machine, id);
    if (!sp && e.has_iid && !checked) {
      /* A descriptor that was missing is counted once, when tokenized. */
      if (!gp__tp_map2_get(&imp->desc_done, ns, e.iid))
        return 0;
      checked = true;
    }
    if (!sp) {
      if (e.has_iid)
        gp__tp_stat(imp, GP_TP_STAT_gpu_counters_invalid_spec, 1);
      continue;
    }
    gp__tp_ctr_spec cs = *sp;
    if ((rc2 = push_value(imp, p->ts, v, &cs)))
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuCounterEvent");
  return 0;
}
