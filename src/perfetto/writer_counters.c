/*
 * writer_counters.c - COUNTER records as gpu_counter_event packets.
 *
 * Descriptors. In mode 2 (the default) each device's counters are
 * described by an InternedGpuCounterDescriptor whose iid the samples
 * reference; when a counter not yet described shows up, a new descriptor
 * (new iid, all counters so far) is interned. In mode 1 the descriptor is
 * written inside the first GpuCounterEvent that needs it, with gpu_id in
 * the event; Perfetto reads its counter ids as global to the trace (the
 * session refuses to sample one id on two devices: gp__tw_counter_id_taken).
 *
 * Counter ids. In both modes a counter's id in the trace is its catalog
 * id, the one a config names and the producer's descriptor lists. The one
 * exception is a counter sampled both ways on one device: of its two
 * specs, the one made second (in a session, the per-activity one) has bit
 * 31 set. The environment specs below have ids of their own.
 *
 * Periodic samples. Each value covers its sampling window and is written
 * at the window's end, BACKWARDS_LOOKING, as Perfetto expects; the trace
 * processor moves a value to the previous sample of its track, so a zero
 * sample is written at the start of a window that does not begin where
 * the previous one ended (the first one, in particular): no value is lost.
 *
 * Environment samples (ENVIRONMENT records: clocks, temperature, power,
 * fan, memory) use Perfetto's dedicated packets where it has them: the
 * core clock as a GenericGpuFrequencyEvent (track "gpufreq", kHz), memory
 * in use as a GpuMemTotalEvent (track "GPU Memory", global for pid 0,
 * per process otherwise). The others become GPU counter specs of their
 * own, ids ENV_ID_BASE + n (outside any catalog's range), FORWARDS_LOOKING
 * since each is a reading at its timestamp.
 *
 * Per-activity (instrumented) values are written as samples of specs of
 * their own, FORWARDS_LOOKING, timestamped at the start of the activity
 * they measured: inside the kernel's [start, end), where Perfetto's GPU
 * compute view looks for them. Groups are the same for both kinds: a
 * counter's fixed groups (spec.groups) and named or custom groups
 * (counter_groups) are its catalog's, however it was sampled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writerInt.h"

#define INSTR_SUFFIX " (per activity)"

/* Counter ids of the environment specs (internal; in the trace see
 * make_out_id()). */
#define ENV_ID_BASE 0x7ff00u
/* In mode 1 the environment specs of each device need ids of their own:
 * ENV_ID_INLINE | device << 3 | which, above any catalog's ids. */
#define ENV_ID_INLINE 0xfff00000u
/* The second spec of a counter sampled both ways on one device. */
#define TWIN_BIT 0x80000000u
enum { ENV_MEM_CLOCK = 1, ENV_TEMP, ENV_POWER, ENV_POWER_LIMIT, ENV_FAN };
_Static_assert(ENV_FAN <
                   sizeof(((tw_counter_dev *)0)->env_at) / sizeof(uint32_t),
               "tw_counter_dev.env_at has a slot for each environment spec");

static const struct {
  const char *name, *description;
  uint32_t unit;
} env_specs[] = {
    [ENV_MEM_CLOCK] = {"Memory clock", "Memory clock (environment samples)",
                       GP_UNIT_KILOHERTZ},
    [ENV_TEMP] = {"GPU temperature", "GPU temperature (environment samples)",
                  GP_UNIT_CELSIUS},
    [ENV_POWER] = {"GPU power", "Power drawn (environment samples)",
                   GP_UNIT_WATT},
    [ENV_POWER_LIMIT] = {"GPU power limit", "Power limit (environment samples)",
                         GP_UNIT_WATT},
    [ENV_FAN] = {"Fan speed",
                 "Fan speed, percent of the maximum "
                 "(environment samples)",
                 GP_UNIT_PERCENT},
};

static bool is_env(uint32_t id) {
  return id > ENV_ID_BASE && id - ENV_ID_BASE < GP_ARRAY_SIZE(env_specs);
}

static bool has_spec(const tw_counter_dev *d, uint32_t id, uint32_t instr,
                     size_t below) {
  for (size_t i = 0; i < below && i < d->n; i++)
    if (d->specs[i].id == id && d->specs[i].instr == instr)
      return true;
  return false;
}

/* The counter_id in the trace of a new spec (id, instr) of device, d its
 * specs so far (see the top of this file). */
static uint32_t make_out_id(const gp__tw *w, uint32_t device,
                            const tw_counter_dev *d, uint32_t id,
                            uint32_t instr) {
  if (is_env(id))
    return w->o.descriptor_mode == GP_TW_DESCRIPTOR_INLINE
               ? ENV_ID_INLINE | (device << 3) | (id - ENV_ID_BASE)
               : id;
  return has_spec(d, id, !instr, d->n) ? (id | TWIN_BIT) : id;
}

static inline uint32_t spec_id(const gp__tw *w, uint32_t device,
                               const tw_spec *s) {
  (void)w;
  (void)device;
  return s->out_id;
}

/* gp__tw_device_seen() without a call once the device is known: every
 * sample asks. device < TW_MAX_DEVICES. */
static inline void device_seen(gp__tw *w, uint32_t device) {
  if (GP_UNLIKELY(!w->dev[device].known))
    gp__tw_device_seen(w, device);
}

/* The counter state of device, NULL when its counters are not written
 * (an unknown device, or one no gpu.counters data source applies to). */
static inline tw_counter_dev *counter_dev(gp__tw *w, uint32_t device) {
  if (device >= TW_MAX_DEVICES)
    return NULL;
  device_seen(w, device);
  return w->dev[device].no_counters ? NULL : &w->dev[device].ctr;
}

/* Encodes how the samples of spec s of device begin (tw_spec.head). */
static void spec_head(const gp__tw *w, uint32_t device, tw_spec *s) {
  /* One-byte tags: the head is at most 1 + 1 + 1 + 5 bytes. */
  _Static_assert(GP_PB_GCE_COUNTERS < 16 && GP_PB_GC_COUNTER_ID < 16,
                 "sample tags take one byte");
  uint8_t *p = s->head;
  *p++ = (GP_PB_GCE_COUNTERS << 3) | GP_PB_LEN;
  *p++ = 0; /* the length, filled in per sample */
  p = gp__pb_put_uint(p, GP_PB_GC_COUNTER_ID, spec_id(w, device, s));
  s->head_len = (uint32_t)(p - s->head);
}

/* find_spec() past its first guess: looks the spec up, adds it if new;
 * NULL when out of memory. */
static tw_spec *find_spec_slow(const gp__tw *w, uint32_t device,
                               tw_counter_dev *d, uint32_t id, uint32_t instr) {
  for (size_t i = 0; i < d->n; i++)
    if (d->specs[i].id == id && d->specs[i].instr == instr) {
      d->next = i + 1;
      return &d->specs[i];
    }
  if (d->n == d->cap) {
    size_t ncap = d->cap ? d->cap * 2 : 16;
    tw_spec *ns = realloc(d->specs, ncap * sizeof(*ns));
    if (!ns)
      return NULL;
    d->specs = ns;
    d->cap = ncap;
  }
  uint32_t out_id = make_out_id(w, device, d, id, instr);
  tw_spec *s = &d->specs[d->n++];
  d->next = d->n;
  s->id = id;
  s->instr = instr;
  s->out_id = out_id;
  s->last_ts = 0;
  spec_head(w, device, s);
  d->dirty = true;
  return s;
}

/* The spec for (id, instr) of device (d its state), added if new. A
 * sampler emits its counters in the same order window after window, so
 * the spec after the last one looked up is tried first, inline. */
static inline tw_spec *find_spec(const gp__tw *w, uint32_t device,
                                 tw_counter_dev *d, uint32_t id,
                                 uint32_t instr) {
  size_t i = d->next;
  if (GP_LIKELY(i < d->n && d->specs[i].id == id &&
                d->specs[i].instr == instr)) {
    d->next = i + 1;
    return &d->specs[i];
  }
  return find_spec_slow(w, device, d, id, instr);
}

/* See writerInt.h. */
int gp__tw_counter_taken(const gp__tw *w, uint32_t device_id,
                         const uint32_t *ids, size_t n, uint32_t *id,
                         uint32_t *other) {
  if (w->o.descriptor_mode != GP_TW_DESCRIPTOR_INLINE)
    return 0;
  for (uint32_t e = 0; e < TW_MAX_DEVICES; e++) {
    const tw_counter_dev *d = &w->dev[e].ctr;
    if (e == device_id || d->n == 0)
      continue;
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < d->n; k++)
        if (d->specs[k].out_id == ids[i]) {
          *id = ids[i];
          *other = e;
          return GP_EEXIST;
        }
  }
  return 0;
}

/* See writerInt.h. */
int gp__tw_counter_select(gp__tw *w, uint32_t device_id, const uint32_t *ids,
                          size_t n, bool periodic, bool instrumented) {
  tw_counter_dev *d = counter_dev(w, device_id);
  if (!d)
    return GP_ENODEV;
  for (size_t i = 0; i < n; i++) {
    if ((periodic && !find_spec(w, device_id, d, ids[i], 0)) ||
        (instrumented && !find_spec(w, device_id, d, ids[i], 1)))
      return GP_ENOMEM;
  }
  return 0;
}

/* See writerInt.h. */
void gp__tw_counter_fini(gp__tw *w) {
  for (uint32_t i = 0; i < TW_MAX_DEVICES; i++) {
    free(w->dev[i].ctr.specs);
    memset(&w->dev[i].ctr, 0, sizeof(w->dev[i].ctr));
  }
}

/* ------------------------------------------------------------------ */
/* Descriptors                                                          */

static bool lookup(uint32_t device, uint32_t id, gp_counter_info *ci) {
  memset(ci, 0, sizeof(*ci));
  return gp_counter_lookup(device, id, ci) == 0;
}

static bool in_group(const gp_counter_info *ci, uint32_t group) {
  for (uint32_t g = 0; g < ci->num_groups && g < GP_COUNTER_MAX_GROUPS; g++)
    if (ci->groups[g] == group)
      return true;
  return false;
}

static void write_spec(gp__tw *w, uint32_t device, const tw_counter_dev *d,
                       size_t i) {
  gp__pb_writer *pb = &w->pb;
  const tw_spec *s = &d->specs[i];
  gp_counter_info ci;
  if (is_env(s->id)) {
    gp__pb_begin(pb, GP_PB_GCD_SPECS);
    gp__pb_uint(pb, GP_PB_SPEC_COUNTER_ID, spec_id(w, device, s));
    gp__pb_string(pb, GP_PB_SPEC_C_NAME, env_specs[s->id - ENV_ID_BASE].name);
    gp__pb_string(pb, GP_PB_SPEC_C_DESCRIPTION,
                  env_specs[s->id - ENV_ID_BASE].description);
    gp__pb_uint(pb, GP_PB_SPEC_NUMERATOR_UNITS,
                env_specs[s->id - ENV_ID_BASE].unit);
    gp__pb_uint(pb, GP_PB_SPEC_GROUPS, GP_COUNTER_GROUP_SYSTEM);
    gp__pb_uint(pb, GP_PB_SPEC_VALUE_DIRECTION, GP_PB_VALUE_DIRECTION_FORWARDS);
    gp__pb_end(pb);
    return;
  }
  bool known = lookup(device, s->id, &ci);
  char name[160];
  if (!known)
    snprintf(name, sizeof(name), "counter %u", s->id);
  else if (s->instr && has_spec(d, s->id, 0, d->n))
    snprintf(name, sizeof(name), "%s" INSTR_SUFFIX, ci.name);
  else
    snprintf(name, sizeof(name), "%s", ci.name);
  gp__pb_begin(pb, GP_PB_GCD_SPECS);
  gp__pb_uint(pb, GP_PB_SPEC_COUNTER_ID, spec_id(w, device, s));
  gp__pb_string(pb, GP_PB_SPEC_C_NAME, name);
  if (known && ci.description && *ci.description)
    gp__pb_string(pb, GP_PB_SPEC_C_DESCRIPTION, ci.description);
  if (known && ci.peak_value != 0)
    gp__pb_double(pb, GP_PB_SPEC_DOUBLE_PEAK, ci.peak_value);
  for (uint32_t u = 0;
       known && u < ci.num_numerator_units && u < GP_COUNTER_MAX_UNITS; u++)
    gp__pb_uint(pb, GP_PB_SPEC_NUMERATOR_UNITS, ci.numerator_units[u]);
  for (uint32_t u = 0;
       known && u < ci.num_denominator_units && u < GP_COUNTER_MAX_UNITS; u++)
    gp__pb_uint(pb, GP_PB_SPEC_DENOMINATOR_UNITS, ci.denominator_units[u]);
  if (known && ci.select_by_default)
    gp__pb_uint(pb, GP_PB_SPEC_SELECT_BY_DEFAULT, 1);
  for (uint32_t g = 0; known && g < ci.num_groups && g < GP_COUNTER_MAX_GROUPS;
       g++)
    if (ci.groups[g] < GP_COUNTER_GROUP_FIRST_CUSTOM)
      gp__pb_uint(pb, GP_PB_SPEC_GROUPS, ci.groups[g]);
  gp__pb_uint(pb, GP_PB_SPEC_VALUE_DIRECTION,
              s->instr ? GP_PB_VALUE_DIRECTION_FORWARDS
                       : GP_PB_VALUE_DIRECTION_BACKWARDS);
  gp__pb_end(pb);
}

/* Blocks and named groups of the catalog, listing the specs [from, to). */
static void write_blocks_and_groups(gp__tw *w, uint32_t device,
                                    const tw_counter_dev *d, size_t from,
                                    size_t to) {
  gp__pb_writer *pb = &w->pb;
  gp_counter_catalog_info cat;
  if (gp_counter_catalog(device, &cat) != 0)
    return;
  for (uint32_t b = 0; b < cat.num_blocks; b++) {
    gp_counter_block_info bi;
    if (gp_counter_block_get(device, b, &bi) != 0)
      continue;
    bool any = false;
    for (size_t i = from; i < to; i++) {
      gp_counter_info ci;
      if (!lookup(device, d->specs[i].id, &ci) || ci.block_id != bi.id)
        continue;
      if (!any) {
        gp__pb_begin(pb, GP_PB_GCD_BLOCKS);
        gp__pb_uint(pb, GP_PB_BLOCK_ID, bi.id);
        gp__pb_uint(pb, GP_PB_BLOCK_CAPACITY, bi.capacity);
        if (bi.name)
          gp__pb_string(pb, GP_PB_BLOCK_NAME, bi.name);
        if (bi.description && *bi.description)
          gp__pb_string(pb, GP_PB_BLOCK_DESCRIPTION, bi.description);
        any = true;
      }
      gp__pb_uint(pb, GP_PB_BLOCK_COUNTER_IDS,
                  spec_id(w, device, &d->specs[i]));
    }
    if (any)
      gp__pb_end(pb);
  }
  for (uint32_t g = 0; g < cat.num_groups; g++) {
    gp_counter_group_info gi;
    if (gp_counter_group_get(device, g, &gi) != 0)
      continue;
    bool any = false;
    for (size_t i = from; i < to; i++) {
      const tw_spec *s = &d->specs[i];
      gp_counter_info ci;
      if (!lookup(device, s->id, &ci) || !in_group(&ci, gi.id))
        continue;
      if (!any) { /* groups without a counter of ours are left out */
        gp__pb_begin(pb, GP_PB_GCD_COUNTER_GROUPS);
        gp__pb_uint(pb, GP_PB_GROUP_ID, gi.id);
        if (gi.name)
          gp__pb_string(pb, GP_PB_GROUP_NAME, gi.name);
        if (gi.description && *gi.description)
          gp__pb_string(pb, GP_PB_GROUP_DESCRIPTION, gi.description);
        any = true;
      }
      gp__pb_uint(pb, GP_PB_GROUP_COUNTER_IDS, spec_id(w, device, s));
    }
    if (any)
      gp__pb_end(pb);
  }
  if (cat.min_sampling_period_ns)
    gp__pb_uint(pb, GP_PB_GCD_MIN_PERIOD, cat.min_sampling_period_ns);
  if (cat.max_sampling_period_ns)
    gp__pb_uint(pb, GP_PB_GCD_MAX_PERIOD, cat.max_sampling_period_ns);
  if (cat.supports_instrumented)
    gp__pb_uint(pb, GP_PB_GCD_SUPPORTS_INSTRUMENTED, 1);
}

/* A GpuCounterDescriptor of the specs [from, to) of a device. */
static void write_descriptor(gp__tw *w, uint32_t field, uint32_t device,
                             const tw_counter_dev *d, size_t from, size_t to) {
  gp__pb_writer *pb = &w->pb;
  gp__pb_begin(pb, field);
  for (size_t i = from; i < to; i++)
    write_spec(w, device, d, i);
  write_blocks_and_groups(w, device, d, from, to);
  gp__pb_uint(pb, GP_PB_GCD_SUPPORTS_NAMES, 1);
  gp__pb_uint(pb, GP_PB_GCD_SUPPORTS_NAME_GLOBS, 1);
  gp__pb_end(pb);
}

/* See writerInt.h: an InternedGpuCounterDescriptor (mode 2). */
void gp__tw_counter_write_pending(gp__tw *w, const tw_pending *p) {
  gp__pb_writer *pb = &w->pb;
  uint32_t device = (uint32_t)p->a;
  const tw_counter_dev *d = &w->dev[device].ctr;
  gp__pb_begin(pb, GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS);
  gp__pb_uint(pb, GP_PB_IGCD_IID, p->iid);
  write_descriptor(w, GP_PB_IGCD_DESCRIPTOR, device, d, 0, d->n);
  gp__pb_int(pb, GP_PB_IGCD_GPU_ID, (int32_t)device);
  gp__pb_end(pb);
}

/* ------------------------------------------------------------------ */
/* Samples                                                              */

static void write_group(gp__tw *w, tw_group *g) {
  if (!g->active)
    return;
  g->active = false;
  if (g->n == 0)
    return;
  tw_counter_dev *d = &w->dev[g->device].ctr;
  gp__pb_writer *pb = &w->pb;
  bool interned = w->o.descriptor_mode == GP_TW_DESCRIPTOR_INTERNED;
  size_t inline_from = d->inline_n, inline_to = d->n;
  if (interned) {
    if (d->dirty || !d->desc_iid) {
      d->desc_iid = ++w->next_iid;
      d->dirty = false;
      d->desc_gen = 0;
    }
    if (d->desc_gen != w->gen) {
      d->desc_gen = w->gen;
      gp__tw_pend(w, TW_PEND_COUNTER_DESC, d->desc_iid, g->device, 0, NULL);
    }
    /* The whole packet in one reservation, the samples copied in one
     * piece: the event's tag and 4 length bytes (as gp__pb_begin() puts
     * them), the samples, the descriptor iid (11). */
    uint8_t *p = gp__tw_packet_open(w, g->ts, GP_PB_SEQ_NEEDS_INCREMENTAL_STATE,
                                    2 + 4 + g->len + 11);
    if (p) {
      p = gp__pb_put_varint(p, ((uint64_t)GP_PB_PACKET_GPU_COUNTER_EVENT << 3) |
                                   GP_PB_LEN);
      uint8_t *len = p;
      p += 4;
      memcpy(p, g->buf, g->len);
      p += g->len;
      p = gp__pb_put_uint(p, GP_PB_GCE_COUNTER_DESCRIPTOR_IID, d->desc_iid);
      gp__pb_put_len4(len, (uint64_t)(p - len - 4));
    }
    gp__tw_packet_close(w, p);
    w->st.counter_events++;
    return;
  }
  gp__tw_packet_begin(w, g->ts, TW_PACKET_LARGE);
  gp__pb_begin(pb, GP_PB_PACKET_GPU_COUNTER_EVENT);
  if (inline_from < inline_to) {
    write_descriptor(w, GP_PB_GCE_COUNTER_DESCRIPTOR, g->device, d, inline_from,
                     inline_to);
    d->inline_n = inline_to;
  }
  /* The samples, encoded already (group_put()). */
  if (gp__pb_reserve(pb, g->len)) {
    memcpy(pb->p, g->buf, g->len);
    pb->p += g->len;
  }
  gp__pb_int(pb, GP_PB_GCE_GPU_ID, (int32_t)g->device);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->st.counter_events++;
}

/* See writerInt.h. */
void gp__tw_counter_flush(gp__tw *w) {
  write_group(w, &w->lead);
  write_group(w, &w->group);
}

/* Encodes a sample of spec s into g, which has room: value v, the bits of
 * a double when dbl (GpuCounter.double_value), else int_value. */
static inline void group_put(tw_group *g, const tw_spec *s, bool dbl,
                             uint64_t v) {
  uint8_t *p = g->buf + g->len;
  memcpy(p, s->head, sizeof(s->head)); /* within buf: see TW_SAMPLE_MAX */
  uint8_t *len = p + 1;
  p += s->head_len;
  if (dbl)
    p = gp__pb_put_fixed64(p, GP_PB_GC_DOUBLE_VALUE, v);
  else
    p = gp__pb_put_uint(p, GP_PB_GC_INT_VALUE, v);
  *len = (uint8_t)(p - len - 1);
  g->len = (uint32_t)(p - g->buf);
  g->n++;
}

/* Adds a sample to g, writing what was assembled first if the sample
 * belongs to another (device, timestamp). */
static inline void add_sample(gp__tw *w, tw_group *g, uint32_t device,
                              uint64_t ts, const tw_spec *s, bool dbl,
                              uint64_t v) {
  if (g->active && (g->device != device || g->ts != ts || g->n == TW_GROUP_MAX))
    gp__tw_counter_flush(w);
  if (!g->active) {
    g->active = true;
    g->device = device;
    g->ts = ts;
    g->n = 0;
    g->len = 0;
  }
  group_put(g, s, dbl, v);
}

/* gp__tw_counter_record() for every record: finds the spec (adding it),
 * writes what was assembled when the group changes, adds the zero sample
 * in front of a window that does not follow the last. */
static void __attribute__((noinline))
counter_record_any(gp__tw *w, const gp_activity_counter *c) {
  uint32_t device = c->device_id;
  tw_counter_dev *d = counter_dev(w, device);
  if (!d)
    return;
  uint32_t instr = c->correlation_id != 0;
  tw_spec *s = find_spec(w, device, d, c->counter_id, instr);
  if (!s)
    return;
  bool dbl = c->value_type == GP_VALUE_DOUBLE;
  uint64_t v; /* either member, as it is written */
  memcpy(&v, &c->value, sizeof(v));
  if (instr) {
    uint64_t ts = c->window_start ? c->window_start : c->timestamp;
    gp__tw_saw_ts(w, ts);
    add_sample(w, &w->group, device, ts, s, dbl, v);
    return;
  }
  gp__tw_saw_ts(w, c->timestamp);
  if (c->window_start && c->window_start < c->timestamp &&
      s->last_ts != c->window_start)
    add_sample(w, &w->lead, device, c->window_start, s, dbl, 0);
  add_sample(w, &w->group, device, c->timestamp, s, dbl, v);
  s->last_ts = c->timestamp;
}

/* See writerInt.h. */
void gp__tw_counter_record(gp__tw *w, const gp_activity_counter *c) {
  /* Most values are a window's next periodic counter, after its first:
   * the spec is the one after the last, the group is open for the same
   * (device, timestamp) and has room, no zero sample goes in front. That
   * case is tested here and encoded without a call, so it needs no stack
   * frame; anything else goes the general way, which does the same
   * for it. */
  uint32_t device = c->device_id;
  const tw_group *g = &w->group;
  if (GP_LIKELY(device < TW_MAX_DEVICES && w->dev[device].known &&
                c->correlation_id == 0 && g->active && g->device == device &&
                g->ts == c->timestamp && g->n < TW_GROUP_MAX)) {
    tw_counter_dev *d = &w->dev[device].ctr;
    size_t i = d->next;
    tw_spec *s = i < d->n ? &d->specs[i] : NULL;
    if (GP_LIKELY(s && s->id == c->counter_id && s->instr == 0 &&
                  !(c->window_start && c->window_start < c->timestamp &&
                    s->last_ts != c->window_start))) {
      d->next = i + 1;
      uint64_t v;
      memcpy(&v, &c->value, sizeof(v));
      gp__tw_saw_ts(w, c->timestamp);
      group_put(&w->group, s, c->value_type == GP_VALUE_DOUBLE, v);
      s->last_ts = c->timestamp;
      return;
    }
  }
  counter_record_any(w, c);
}

/* ------------------------------------------------------------------ */
/* Environment                                                          */

/* A sample of environment spec `which` of a device already seen. Its
 * spec is found by the index it was found at before (the samplers of
 * periodic counters go by find_spec()'s guess of the next one, which
 * environment samples in between made miss). */
static void env_sample(gp__tw *w, uint32_t device, uint64_t ts, uint32_t which,
                       double value) {
  tw_counter_dev *d = &w->dev[device].ctr;
  uint32_t at = d->env_at[which];
  tw_spec *s = at && at <= d->n ? &d->specs[at - 1] : NULL;
  if (!s || s->id != ENV_ID_BASE + which || s->instr) {
    s = find_spec_slow(w, device, d, ENV_ID_BASE + which, 0);
    if (!s)
      return;
    d->env_at[which] = (uint32_t)(s - d->specs) + 1;
  }
  uint64_t v;
  memcpy(&v, &value, sizeof(v));
  add_sample(w, &w->group, device, ts, s, true, v);
  s->last_ts = ts;
}

/* Opens a packet at ts and in it message `field`, with its tag and the 4
 * length bytes gp__pb_begin() would put; returns where the message's
 * content goes, 33 bytes reserved there (three fields), the length bytes
 * just before it; NULL if memory ran out. The caller patches the length
 * and closes the packet (gp__tw_packet_close()). */
static uint8_t *env_open(gp__tw *w, uint64_t ts, uint32_t field) {
  uint8_t *p = gp__tw_packet_open(w, ts, 0, 3 + 4 + 33);
  if (!p)
    return NULL;
  p = gp__pb_put_varint(p, ((uint64_t)field << 3) | GP_PB_LEN);
  return p + 4;
}

/* See writerInt.h. */
void gp__tw_environment(gp__tw *w, const gp_activity_environment *e) {
  if (e->device_id >= TW_MAX_DEVICES)
    return;
  uint32_t dev = e->device_id;
  uint64_t ts = e->timestamp;
  device_seen(w, dev);
  if (w->dev[dev].no_counters)
    return; /* excluded by a vendor suffix: nothing of it is written */
  gp__tw_saw_ts(w, ts);
  switch (e->environment_kind) {
  case GP_ENVIRONMENT_SPEED:
    if (e->data.speed.core_clock_khz) {
      uint8_t *p = env_open(w, ts, GP_PB_PACKET_GPU_FREQUENCY);
      if (p) {
        uint8_t *len = p - 4;
        p = gp__pb_put_uint(p, GP_PB_GFREQ_GPU_ID, dev);
        p = gp__pb_put_uint(p, GP_PB_GFREQ_FREQUENCY_KHZ,
                            e->data.speed.core_clock_khz);
        gp__pb_put_len4(len, (uint64_t)(p - len - 4));
      }
      gp__tw_packet_close(w, p);
    }
    if (e->data.speed.memory_clock_khz)
      env_sample(w, dev, ts, ENV_MEM_CLOCK, e->data.speed.memory_clock_khz);
    break;
  case GP_ENVIRONMENT_TEMPERATURE:
    env_sample(w, dev, ts, ENV_TEMP,
               e->data.temperature.gpu_temperature_mc / 1000.0);
    break;
  case GP_ENVIRONMENT_POWER:
    env_sample(w, dev, ts, ENV_POWER, e->data.power.power_mw / 1000.0);
    if (e->data.power.power_limit_mw)
      env_sample(w, dev, ts, ENV_POWER_LIMIT,
                 e->data.power.power_limit_mw / 1000.0);
    break;
  case GP_ENVIRONMENT_COOLING:
    env_sample(w, dev, ts, ENV_FAN, e->data.cooling.fan_speed_pct);
    break;
  case GP_ENVIRONMENT_MEMORY: {
    uint8_t *p = env_open(w, ts, GP_PB_PACKET_GPU_MEM_TOTAL);
    if (p) {
      uint8_t *len = p - 4;
      p = gp__pb_put_uint(p, GP_PB_GMEM_GPU_ID, dev);
      p = gp__pb_put_uint(p, GP_PB_GMEM_PID, e->data.memory.pid);
      p = gp__pb_put_uint(p, GP_PB_GMEM_SIZE, e->data.memory.used_bytes);
      gp__pb_put_len4(len, (uint64_t)(p - len - 4));
    }
    gp__tw_packet_close(w, p);
    break;
  }
  default:
    break;
  }
}
