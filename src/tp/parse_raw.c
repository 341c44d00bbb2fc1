/*
 * parse_raw.c - the ftrace_event table (Perfetto's raw table: one row per
 * ftrace event, every field of its payload an arg), the cpu rows it
 * refers to, and the CPU frequency and idle counters.
 *
 * An event's row is what Perfetto's ParseTypedFtraceToRaw makes: the
 * event's name (NULL for a field number of FtraceEvent that names no
 * event; no row at all past the last known one), its thread and cpu row,
 * and an arg per field of the payload whose number is below 32 and that
 * the event's proto declares with a scalar type, named after the field,
 * typed as InsertFieldIntoArgs types it (ints, uints, zigzag ints,
 * strings, reals). A field seen twice keeps its first place and its last
 * value. The legacy `generic` event (GenericFtraceEvent) is named by its
 * event_name and has its name/value pairs as args. The names and types
 * come from ftrace_desc.c, generated from Perfetto's protos.
 *
 * A field holding a kernel function's address is that function's name
 * where the sequence interned it (kernel_symbols), as Perfetto names it.
 *
 * Not done (no row): self-describing events (field numbers from 65536),
 * whose descriptors come in the bundle.
 */
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/ftrace_desc.h"
#include "tp/import.h"

/* Perfetto's kMaxFtraceEventFields: fields from this number are not
 * args. */
#define MAX_EVENT_FIELDS 32u

/* FtraceEvent.generic and its fields (generic.proto). */
enum { EV_GENERIC = 327 };
enum { GEN_EVENT_NAME = 1, GEN_FIELD = 2 };
enum { GF_NAME = 1, GF_STR = 3, GF_INT = 4, GF_UINT = 5 };

/* cpu_frequency (state 1, cpu_id 2) and cpu_idle (the same). */
enum { POWER_STATE = 1, POWER_CPU_ID = 2 };

/* The fields holding a kernel function's address, named by the
 * sequence's interned kernel symbols where it has them (Perfetto's
 * kKernelFunctionFields): sched_blocked_reason.caller, the workqueue
 * events' function, funcgraph_entry/exit.func, mm_shrink_slab_start.shrink
 * and hrtimer_expire_entry.function. */
static const struct {
  uint16_t event, field;
} kernel_functions[] = {{18, 2},  {59, 2},  {56, 2},  {58, 2}, {57, 2},
                        {437, 2}, {438, 3}, {443, 8}, {553, 3}};

/* InternedString.str. */
enum { IN_STR = 2 };

static bool is_kernel_function(uint32_t event, uint32_t field) {
  for (size_t i = 0; i < sizeof(kernel_functions) / sizeof(kernel_functions[0]);
       i++)
    if (kernel_functions[i].event == event &&
        kernel_functions[i].field == field)
      return true;
  return false;
}

/* The cache of interned names: events by id, then fields by row. */
static int names_cache(gp__tp_importer *imp) {
  if (imp->ft_names)
    return 0;
  const gp__tp_fdesc *d = &gp__tp_ftrace_desc;
  imp->ft_names = calloc((size_t)d->nevents + d->nfields, sizeof(uint32_t));
  if (!imp->ft_names)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* The string id of name, cached in *slot (string id + 1). */
static int cached_name(gp__tp_importer *imp, uint32_t *slot, const char *name,
                       uint32_t *out) {
  if (*slot) {
    *out = *slot - 1;
    return 0;
  }
  int rc = gp__tp_intern(imp, name, strlen(name), out);
  if (rc == 0)
    *slot = *out + 1;
  return rc;
}

/* See import.h. */
int gp__tp_cpu_row(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                   uint32_t *ucpu) {
  if (cpu >= GP_TP_CPUS_PER_MACHINE)
    return gp__tp_fail(imp, GP_ECORRUPT, 0,
                       "CPU %u: past the %u CPUs a machine may have", cpu,
                       GP_TP_CPUS_PER_MACHINE);
  gp__tp_db *db = imp->db;
  uint64_t u = (uint64_t)machine * GP_TP_CPUS_PER_MACHINE + cpu;
  if (u >= UINT32_MAX)
    return gp__tp_fail(imp, GP_ERANGE, 0, "too many machines");
  if (u >= db->cpus.n) {
    size_t want = (size_t)u + 1;
    if (!gp__tp_vec_reserve(&db->cpus, want - db->cpus.n))
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    gp__tp_cpu none = {false, 0, GP_TP_NONE, -1, GP_TP_NONE};
    while (db->cpus.n < want)
      db->cpus.v[db->cpus.n++] = none;
  }
  *ucpu = (uint32_t)u;
  return 0;
}

/* See import.h. */
int gp__tp_cpu_get(gp__tp_importer *imp, uint32_t machine, uint32_t cpu,
                   uint32_t *ucpu) {
  int rc = gp__tp_cpu_row(imp, machine, cpu, ucpu);
  if (rc == 0)
    imp->db->cpus.v[*ucpu].seen = true;
  return rc;
}

/* See import.h. */
int gp__tp_raw_row(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                   uint32_t cpu, uint32_t utid, uint32_t name,
                   int64_t common_flags, const gp__tp_argb *args) {
  gp__tp_db *db = imp->db;
  uint32_t ucpu, set = GP_TP_NONE;
  int rc;
  if ((rc = gp__tp_cpu_get(imp, machine, cpu, &ucpu)) != 0)
    return rc;
  if (args && (rc = gp__tp_argset_commit(db, args, &set)) != 0)
    return gp__tp_fail(imp, rc, 0, "out of memory");
  if (db->fe_ts.n >= UINT32_MAX - 1)
    return gp__tp_fail(imp, GP_ERANGE, 0, "too many ftrace events");
  if (!gp__tp_vec_reserve(&db->fe_ts, 1) ||
      !gp__tp_vec_reserve(&db->fe_name, 1) ||
      !gp__tp_vec_reserve(&db->fe_utid, 1) ||
      !gp__tp_vec_reserve(&db->fe_args, 1) ||
      !gp__tp_vec_reserve(&db->fe_ucpu, 1) ||
      !gp__tp_vec_reserve(&db->fe_flags, 1))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  db->fe_ts.v[db->fe_ts.n++] = ts;
  db->fe_name.v[db->fe_name.n++] = name;
  db->fe_utid.v[db->fe_utid.n++] = utid;
  /* Perfetto's column is not nullable: a row without args says 0. */
  db->fe_args.v[db->fe_args.n++] = set == GP_TP_NONE ? 0 : set;
  db->fe_ucpu.v[db->fe_ucpu.n++] = ucpu;
  db->fe_flags.v[db->fe_flags.n++] =
      common_flags == INT64_MIN ? 0 : (uint16_t)common_flags;
  return 0;
}

/* See import.h. */
int gp__tp_raw_key(gp__tp_importer *imp, uint32_t event, uint32_t field,
                   uint32_t *key) {
  const char *name;
  uint32_t row = 0;
  *key = GP_TP_NONE;
  if (gp__tp_ftrace_field(event, field, &row, &name) == GP_TP_FT_NONE)
    return 0;
  int rc = names_cache(imp);
  if (rc)
    return rc;
  return cached_name(imp, &imp->ft_names[gp__tp_ftrace_desc.nevents + row],
                     name, key);
}

/* Adds arg (key, type, v), or, as Perfetto's args inserter does, gives an
 * arg already there with that key the new value. */
static void put_arg(gp__tp_argb *b, uint32_t key, uint8_t type, int64_t v) {
  for (uint32_t i = 0; i < b->n; i++)
    if (b->a[i].key == key) {
      b->a[i].type = type;
      b->a[i].value = v;
      return;
    }
  gp__tp_argb_add(b, key, key, type, v);
}

/* The arg of field f typed `type` (GP_TP_FT_*) into b. */
static int field_arg(gp__tp_importer *imp, gp__tp_argb *b, uint32_t key,
                     uint32_t type, const gp__pb_field *f) {
  bool len = f->wire_type == GP_PB_LEN;
  switch (type) {
  case GP_TP_FT_INT:
    if (!len)
      put_arg(b, key, GP_TP_ARG_INT,
              f->wire_type == GP_PB_I32 ? (int64_t)(uint32_t)f->value
                                        : (int64_t)f->value);
    return 0;
  case GP_TP_FT_UINT:
    if (!len)
      put_arg(b, key, GP_TP_ARG_UINT, (int64_t)f->value);
    return 0;
  case GP_TP_FT_SINT:
    if (!len)
      put_arg(b, key, GP_TP_ARG_INT,
              (int64_t)(f->value >> 1) ^ -(int64_t)(f->value & 1));
    return 0;
  case GP_TP_FT_STRING: {
    if (!len)
      return 0;
    uint32_t s;
    int rc = gp__tp_intern(imp, f->data, f->size, &s);
    if (rc == 0)
      put_arg(b, key, GP_TP_ARG_STRING, s);
    return rc;
  }
  case GP_TP_FT_DOUBLE:
  case GP_TP_FT_FLOAT: {
    double d;
    if (f->wire_type == GP_PB_I32) {
      float x;
      uint32_t bits = (uint32_t)f->value;
      memcpy(&x, &bits, sizeof(x));
      d = x;
    } else if (f->wire_type == GP_PB_I64) {
      memcpy(&d, &f->value, sizeof(d));
    } else {
      return 0;
    }
    int64_t v;
    memcpy(&v, &d, sizeof(v));
    put_arg(b, key, GP_TP_ARG_REAL, v);
    return 0;
  }
  default:
    return 0;
  }
}

/* The args of a typed event's payload (data, n). */
static int typed_args(gp__tp_importer *imp, uint32_t id, const uint8_t *data,
                      size_t n, uint64_t off, gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, n, off);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id >= MAX_EVENT_FIELDS)
      continue;
    const char *name;
    uint32_t row = 0, key;
    uint32_t type = gp__tp_ftrace_field(id, f.id, &row, &name);
    if (type == GP_TP_FT_NONE)
      continue;
    if ((rc = cached_name(imp, &imp->ft_names[gp__tp_ftrace_desc.nevents + row],
                          name, &key)) != 0)
      return rc;
    if (type == GP_TP_FT_UINT && f.wire_type == GP_PB_VARINT &&
        is_kernel_function(id, f.id)) {
      /* The symbol if the sequence has it (a lookup that misses is
       * counted, as Perfetto counts it), else the address. */
      uint32_t sym = gp__tp_interned_str(
          imp, imp->ftrace_gen, GP_TP_IN_KERNEL_SYMBOLS, f.value, IN_STR, &rc);
      if (rc)
        return rc;
      if (sym != GP_TP_NONE) {
        put_arg(b, key, GP_TP_ARG_STRING, sym);
        continue;
      }
    }
    if ((rc = field_arg(imp, b, key, type, &f)) != 0)
      return rc;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ftrace event");
  return 0;
}

/* A GenericFtraceEvent (data, n): its name into *name, its fields into
 * b, as Perfetto's ParseLegacyGenericFtrace reads them. */
static int generic_args(gp__tp_importer *imp, const uint8_t *data, size_t n,
                        uint64_t off, uint32_t *name, gp__tp_argb *b) {
  gp__pb_reader r, fr;
  gp__pb_field f, g;
  int rc;
  *name = GP_TP_NONE;
  /* InternString of an absent event_name is the empty string. */
  if ((rc = gp__tp_intern(imp, "", 0, name)) != 0)
    return rc;
  gp__pb_reader_init(&r, data, n, off);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    if (f.id == GEN_EVENT_NAME) {
      if ((rc = gp__tp_intern(imp, f.data, f.size, name)) != 0)
        return rc;
      continue;
    }
    if (f.id != GEN_FIELD)
      continue;
    const uint8_t *fname = (const uint8_t *)"";
    size_t fname_len = 0;
    bool has_int = false, has_uint = false, has_str = false;
    int64_t iv = 0;
    uint64_t uv = 0;
    const uint8_t *sv = NULL;
    size_t sn = 0;
    gp__pb_reader_init(&fr, f.data, f.size, gp__pb_offset(&r) - f.size);
    while ((rc = gp__tp_pb_next(&fr, &g)) > 0) {
      if (g.id == GF_NAME && g.wire_type == GP_PB_LEN) {
        fname = g.data;
        fname_len = g.size;
      } else if (g.id == GF_STR && g.wire_type == GP_PB_LEN) {
        has_str = true;
        sv = g.data;
        sn = g.size;
      } else if (g.id == GF_INT && g.wire_type == GP_PB_VARINT) {
        has_int = true;
        iv = (int64_t)g.value;
      } else if (g.id == GF_UINT && g.wire_type == GP_PB_VARINT) {
        has_uint = true;
        uv = g.value;
      }
    }
    if (rc < 0)
      return gp__tp_corrupt(imp, &fr, "GenericFtraceEvent.Field");
    uint32_t key, s;
    if ((rc = gp__tp_intern(imp, fname, fname_len, &key)) != 0)
      return rc;
    /* The order Perfetto tests them in; a uint is stored as an int. */
    if (has_int) {
      put_arg(b, key, GP_TP_ARG_INT, iv);
    } else if (has_uint) {
      put_arg(b, key, GP_TP_ARG_INT, (int64_t)uv);
    } else if (has_str) {
      if ((rc = gp__tp_intern(imp, sv, sn, &s)) != 0)
        return rc;
      put_arg(b, key, GP_TP_ARG_STRING, s);
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GenericFtraceEvent");
  return 0;
}

/* See import.h. */
int gp__tp_raw_event(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                     uint32_t cpu, uint32_t utid, const gp__pb_reader *parent,
                     const gp__pb_field *f) {
  (void)parent;
  uint32_t id = f->id;
  if (id >= gp__tp_ftrace_nevents())
    return 0; /* self-describing events, or past what v58.2 knows */
  int rc = names_cache(imp);
  if (rc)
    return rc;
  gp__tp_argb b;
  b.n = 0;
  b.overflow = false;
  uint32_t name = GP_TP_NONE;
  bool len = f->wire_type == GP_PB_LEN;
  uint64_t off = len ? gp__tp_off(imp, f->data) : 0;
  if (id == EV_GENERIC) {
    if (len && (rc = generic_args(imp, f->data, f->size, off, &name, &b)))
      return rc;
    if (!len && (rc = gp__tp_intern(imp, "", 0, &name)) != 0)
      return rc;
  } else {
    const char *ename = gp__tp_ftrace_event_name(id);
    if (ename && (rc = cached_name(imp, &imp->ft_names[id], ename, &name)))
      return rc;
    if (len && (rc = typed_args(imp, id, f->data, f->size, off, &b)) != 0)
      return rc;
  }
  return gp__tp_raw_row(imp, ts, machine, cpu, utid, name, INT64_MIN, &b);
}

/* See import.h. */
void gp__tp_raw_free(gp__tp_importer *imp) {
  free(imp->ft_names);
  imp->ft_names = NULL;
}

/* See import.h. */
int gp__tp_parse_cpu_power(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                           const gp__pb_reader *parent, const gp__pb_field *f) {
  (void)parent;
  bool freq = f->id == GP_PB_FTRACE_CPU_FREQUENCY;
  uint64_t state = 0, cpu = 0;
  gp__pb_reader r;
  gp__pb_field g;
  gp__pb_reader_init(&r, f->data, f->size, gp__tp_off(imp, f->data));
  int rc;
  while ((rc = gp__tp_pb_next(&r, &g)) > 0) {
    if (g.wire_type != GP_PB_VARINT)
      continue;
    if (g.id == POWER_STATE)
      state = (uint32_t)g.value;
    else if (g.id == POWER_CPU_ID)
      cpu = (uint32_t)g.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, freq ? "cpu_frequency" : "cpu_idle");
  uint32_t track;
  if ((rc = gp__tp_cpu_counter_track(imp, machine, (uint32_t)cpu,
                                     freq ? "cpu_frequency" : "cpu_idle",
                                     freq ? "cpufreq" : "cpuidle", &track)))
    return rc;
  return gp__tp_counter_add(imp, ts, track, (double)state, NULL);
}
