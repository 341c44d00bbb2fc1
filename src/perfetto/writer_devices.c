/*
 * writer_devices.c - what a trace says about the GPUs its work ran on:
 * each device the writer meets is noted (its API and clock, for its
 * tracks and clock snapshots), and a GpuInfo packet describes devices
 * 0 .. n-1 (name, vendor, model, architecture, uuid, PCI address, and
 * sizes and clocks as extra_info), written again when more appear.
 *
 * DEVICE_ATTRIBUTE records are extra_info too. gpuperf's own attributes
 * are the sizes and clocks the device info gives (compute_units,
 * core_clock_khz, ...): a record's value is written under that key, in
 * place of the device info's. CUDA's CUdevice attributes, which the
 * device info does not have, follow as "cu_device_attribute_<n>" in
 * the order of n. Attributes that arrive after their device's GpuInfo
 * was written, saying something it did not, go out in a GpuInfo of
 * their own whose other entries are empty: an importer adds each
 * extra_info to the gpu's args and keeps what it had, so only the news
 * is written, not every key again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tconfig.h"
#include "writerInt.h"

/* The attributes of device d: a sorted run of w->attrs; *n of them. */
static const tw_attr *device_attrs(const gp__tw *w, uint32_t d, uint32_t *n) {
  uint32_t i = 0;
  while (i < w->num_attrs && w->attrs[i].device_id < d)
    i++;
  uint32_t j = i;
  while (j < w->num_attrs && w->attrs[j].device_id == d)
    j++;
  *n = j - i;
  return w->attrs + i;
}

/* The extra_info key of one of our attributes: the device info's. */
static const char *const attr_keys[GP_DEVICE_ATTR_COUNT] = {
    [GP_DEVICE_ATTR_COMPUTE_UNITS] = "compute_units",
    [GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK] = "max_threads_per_block",
    [GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES] = "memory_bytes",
    [GP_DEVICE_ATTR_CORE_CLOCK_KHZ] = "core_clock_khz",
    [GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK] =
        "max_shared_memory_per_block",
};

/* The extra_info key of attribute a into buf; false for none. */
static bool attr_key(const tw_attr *a, char *buf, size_t size) {
  if (a->flags & GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE) {
    snprintf(buf, size, "cu_device_attribute_%u", a->attribute);
    return true;
  }
  if (a->attribute >= GP_DEVICE_ATTR_COUNT || !attr_keys[a->attribute])
    return false;
  snprintf(buf, size, "%s", attr_keys[a->attribute]);
  return true;
}

static void attr_value_str(const tw_attr *a, char *buf, size_t size) {
  if (a->value_type == GP_VALUE_DOUBLE) {
    double v;
    memcpy(&v, &a->value, sizeof(v));
    snprintf(buf, size, "%.17g", v);
  } else {
    snprintf(buf, size, "%lld", (long long)a->value);
  }
}

static void extra_info(gp__pb_writer *pb, const char *key, const char *value) {
  gp__pb_begin(pb, GP_PB_GPU_EXTRA_INFO);
  gp__pb_string(pb, GP_PB_KV_KEY, key);
  gp__pb_string(pb, GP_PB_KV_VALUE, value);
  gp__pb_end(pb);
}

static void write_gpu(const gp__tw *w, gp__pb_writer *pb, uint32_t d) {
  gp_device_info di;
  gp__pb_begin(pb, GP_PB_GPU_INFO_GPUS);
  if (gp__tw_device_info(w, d, &di) != 0) {
    gp__pb_end(pb);
    return;
  }
  gp__pb_string(pb, GP_PB_GPU_NAME, di.name);
  gp__pb_string(pb, GP_PB_GPU_VENDOR, di.vendor);
  gp__pb_string(pb, GP_PB_GPU_MODEL, di.model);
  gp__pb_string(pb, GP_PB_GPU_ARCHITECTURE, di.architecture);
  static const uint8_t zero[16];
  if (memcmp(di.uuid, zero, 16) != 0)
    gp__pb_bytes(pb, GP_PB_GPU_UUID, di.uuid, 16);
  const struct {
    const char *key;
    uint64_t value;
    uint32_t attr; /* the gp_device_attr that says the same, or 0 */
  } kv[] = {
      {NULL, di.compute_units, GP_DEVICE_ATTR_COMPUTE_UNITS},
      {NULL, di.core_clock_khz, GP_DEVICE_ATTR_CORE_CLOCK_KHZ},
      {"memory_clock_khz", di.memory_clock_khz, 0},
      {NULL, di.global_memory_bytes, GP_DEVICE_ATTR_GLOBAL_MEMORY_BYTES},
      {"memory_bandwidth_bytes_per_s", di.memory_bandwidth_bytes_per_s, 0},
      {NULL, di.max_threads_per_block, GP_DEVICE_ATTR_MAX_THREADS_PER_BLOCK},
      {NULL, di.max_shared_memory_per_block,
       GP_DEVICE_ATTR_MAX_SHARED_MEMORY_PER_BLOCK},
      {"hardware_queues", di.num_queues, 0},
  };
  if (di.driver_version && *di.driver_version)
    extra_info(pb, "driver_version", di.driver_version);
  uint32_t na;
  const tw_attr *attrs = device_attrs(w, d, &na);
  for (size_t i = 0; i < GP_ARRAY_SIZE(kv); i++) {
    char num[32];
    gp__tw_u64_to_str(kv[i].value, num);
    for (uint32_t j = 0; j < na && kv[i].attr; j++)
      if (attrs[j].flags == 0 && attrs[j].attribute == kv[i].attr)
        attr_value_str(&attrs[j], num, sizeof(num));
    extra_info(pb, kv[i].attr ? attr_keys[kv[i].attr] : kv[i].key, num);
  }
  for (uint32_t j = 0; j < na; j++) {
    char key[48], num[32];
    if (!(attrs[j].flags & GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE) ||
        !attr_key(&attrs[j], key, sizeof(key)))
      continue;
    attr_value_str(&attrs[j], num, sizeof(num));
    extra_info(pb, key, num);
  }
  char bdf[16];
  if (gp_device_pci_bdf(&di, bdf, sizeof(bdf)) == 0)
    gp__pb_string(pb, GP_PB_GPU_PCI_BDF, bdf);
  gp__pb_end(pb);
}

/* A GpuInfo of the attributes not written yet: devices without any get
 * an empty entry, which adds nothing. */
static void write_attr_news(gp__tw *w) {
  gp__pb_writer *pb = &w->pb;
  uint32_t last = 0;
  for (uint32_t i = 0; i < w->num_attrs; i++)
    if (!w->attrs[i].written)
      last = w->attrs[i].device_id;
  gp__tw_packet_begin(w, TW_NO_TS, TW_PACKET_LARGE);
  gp__pb_begin(pb, GP_PB_PACKET_GPU_INFO);
  uint32_t i = 0;
  for (uint32_t d = 0; d <= last; d++) {
    gp__pb_begin(pb, GP_PB_GPU_INFO_GPUS);
    for (; i < w->num_attrs && w->attrs[i].device_id == d; i++) {
      char key[48], num[32];
      if (w->attrs[i].written || !attr_key(&w->attrs[i], key, sizeof(key)))
        continue;
      attr_value_str(&w->attrs[i], num, sizeof(num));
      extra_info(pb, key, num);
    }
    gp__pb_end(pb);
  }
  gp__pb_end(pb);
  gp__tw_packet_end(w);
}

/* See writerInt.h: one GpuInfo for devices 0 .. num_devices-1 (the index
 * in `gpus` is the gpu_id), written again when more devices appear; or
 * one of the attributes that came since. */
void gp__tw_gpu_info(gp__tw *w) {
  if (w->num_devices == 0)
    return;
  if (w->gpu_info_n == w->num_devices) {
    if (w->attrs_pending)
      write_attr_news(w);
  } else {
    gp__pb_writer *pb = &w->pb;
    gp__tw_packet_begin(w, TW_NO_TS, TW_PACKET_LARGE);
    gp__pb_begin(pb, GP_PB_PACKET_GPU_INFO);
    for (uint32_t d = 0; d < w->num_devices; d++)
      write_gpu(w, pb, d);
    gp__pb_end(pb);
    gp__tw_packet_end(w);
    w->gpu_info_n = w->num_devices;
  }
  for (uint32_t i = 0; i < w->num_attrs; i++)
    w->attrs[i].written = true;
  w->attrs_pending = false;
}

/* See writerInt.h. */
void gp__tw_device_seen(gp__tw *w, uint32_t device_id) {
  if (device_id >= TW_MAX_DEVICES || w->dev[device_id].known)
    return;
  tw_device *d = &w->dev[device_id];
  gp_device_info di;
  d->known = true;
  if (gp__tw_device_info(w, device_id, &di) == 0) {
    d->api = di.api;
    d->clock_id = di.clock_id;
    const gp_trace_config *cfg = w->o.sources_cfg;
    if (cfg) {
      d->no_counters = gp__trace_config_source_for(
                           cfg, GP_DATA_SOURCE_GPU_COUNTERS, &di) < 0;
      int rs = gp__trace_config_source_for(cfg, GP_DATA_SOURCE_GPU_RENDERSTAGES,
                                           &di);
      gp_data_source_info ds;
      d->no_render_stages = rs < 0;
      d->no_slices =
          rs >= 0 &&
          gp_trace_config_get_data_source(cfg, (uint32_t)rs, &ds) == 0 &&
          ds.low_overhead;
    }
  }
  if (device_id + 1 > w->num_devices)
    w->num_devices = device_id + 1;
  /* GpuInfo follows at the end of the buffer (gp__tw_gpu_info). */
}

/* The value of one of our attributes that device d's info gives. */
static bool info_value(const gp__tw *w, uint32_t d, uint32_t attr, int64_t *v) {
  gp_device_info di;
  uint64_t u = 0;
  if (gp__tw_device_info(w, d, &di) != 0 ||
      !gp__device_info_attr(&di, attr, &u))
    return false;
  *v = (int64_t)u;
  return true;
}

static int attr_cmp(const tw_attr *a, uint32_t device_id, uint32_t flags,
                    uint32_t attribute) {
  if (a->device_id != device_id)
    return a->device_id < device_id ? -1 : 1;
  if (a->flags != flags)
    return a->flags < flags ? -1 : 1;
  if (a->attribute != attribute)
    return a->attribute < attribute ? -1 : 1;
  return 0;
}

/* See writerInt.h. Attributes are kept sorted by device, flags and
 * attribute (devices report theirs once, so a linear insert does); if
 * memory runs out, the attribute is left out of the GpuInfo. One that
 * says what the trace said already is not written again. */
void gp__tw_device_attribute(gp__tw *w, const gp_activity_device_attribute *a) {
  if (a->device_id >= TW_MAX_DEVICES)
    return;
  gp__tw_device_seen(w, a->device_id);
  uint32_t flags = a->flags & GP_ACTIVITY_FLAG_DEVICE_ATTRIBUTE_CUDEVICE;
  int64_t value;
  memcpy(&value, &a->value, sizeof(value));
  uint32_t i = 0;
  int c = -1;
  while (i < w->num_attrs &&
         (c = attr_cmp(&w->attrs[i], a->device_id, flags, a->attribute)) < 0)
    i++;
  bool found = i < w->num_attrs && c == 0;
  /* What the GpuInfo says of it so far: the record kept, or for one of
   * ours, the device info's value. */
  int64_t before = 0;
  uint32_t before_type = GP_VALUE_INT64;
  bool known = false;
  if (found) {
    before = w->attrs[i].value;
    before_type = w->attrs[i].value_type;
    known = true;
  } else if (flags == 0) {
    known = info_value(w, a->device_id, a->attribute, &before);
  }
  bool same = known && before == value && before_type == a->value_type;
  if (!found) {
    if (w->num_attrs == w->attrs_cap) {
      uint32_t cap = w->attrs_cap ? 2 * w->attrs_cap : 32;
      tw_attr *n = realloc(w->attrs, cap * sizeof(*n));
      if (!n)
        return;
      w->attrs = n;
      w->attrs_cap = cap;
    }
    memmove(&w->attrs[i + 1], &w->attrs[i],
            (w->num_attrs - i) * sizeof(w->attrs[0]));
    w->num_attrs++;
  }
  tw_attr *t = &w->attrs[i];
  t->device_id = a->device_id;
  t->attribute = a->attribute;
  t->flags = flags;
  t->value_type = a->value_type;
  t->value = value;
  /* Kept as it was if nothing changed; new to the trace otherwise. */
  if (!found)
    t->written = same;
  if (!same) {
    t->written = false;
    w->attrs_pending = true;
  }
}
