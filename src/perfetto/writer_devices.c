/*
 * writer_devices.c - what a trace says about the GPUs its work ran on:
 * each device the writer meets is noted (its API and clock, for its
 * tracks and clock snapshots), and a GpuInfo packet describes devices
 * 0 .. n-1 (name, vendor, model, architecture, uuid, PCI address, and
 * sizes and clocks as extra_info), written again when more appear.
 */
#include <string.h>

#include "tconfig.h"
#include "writerInt.h"

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
  } kv[] = {
      {"compute_units", di.compute_units},
      {"core_clock_khz", di.core_clock_khz},
      {"memory_clock_khz", di.memory_clock_khz},
      {"memory_bytes", di.global_memory_bytes},
      {"memory_bandwidth_bytes_per_s", di.memory_bandwidth_bytes_per_s},
      {"max_threads_per_block", di.max_threads_per_block},
      {"max_shared_memory_per_block", di.max_shared_memory_per_block},
      {"hardware_queues", di.num_queues},
  };
  if (di.driver_version && *di.driver_version) {
    gp__pb_begin(pb, GP_PB_GPU_EXTRA_INFO);
    gp__pb_string(pb, GP_PB_KV_KEY, "driver_version");
    gp__pb_string(pb, GP_PB_KV_VALUE, di.driver_version);
    gp__pb_end(pb);
  }
  for (size_t i = 0; i < GP_ARRAY_SIZE(kv); i++) {
    char num[24];
    gp__tw_u64_to_str(kv[i].value, num);
    gp__pb_begin(pb, GP_PB_GPU_EXTRA_INFO);
    gp__pb_string(pb, GP_PB_KV_KEY, kv[i].key);
    gp__pb_string(pb, GP_PB_KV_VALUE, num);
    gp__pb_end(pb);
  }
  char bdf[16];
  if (gp_device_pci_bdf(&di, bdf, sizeof(bdf)) == 0)
    gp__pb_string(pb, GP_PB_GPU_PCI_BDF, bdf);
  gp__pb_end(pb);
}

/* See writerInt.h: one GpuInfo for devices 0 .. num_devices-1 (the index
 * in `gpus` is the gpu_id), written again when more devices appear. */
void gp__tw_gpu_info(gp__tw *w) {
  if (w->num_devices == 0 || w->gpu_info_n == w->num_devices)
    return;
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, TW_NO_TS, TW_PACKET_LARGE);
  gp__pb_begin(pb, GP_PB_PACKET_GPU_INFO);
  for (uint32_t d = 0; d < w->num_devices; d++)
    write_gpu(w, pb, d);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->gpu_info_n = w->num_devices;
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
