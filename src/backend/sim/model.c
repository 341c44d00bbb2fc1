/*
 * model.c - the simulated device models and their cost model.
 *
 * Two models: "compute", a data-centre GPU in the A100 class (108 compute
 * units at 1.41 GHz, 19.5 TFLOP/s, 1.55 TB/s of DRAM, PCIe 4 and a
 * peer-to-peer link), and "v3d", the Broadcom V3D 4.2 of a Raspberry Pi 4
 * (8 QPUs in 2 slices at 500 MHz, about 32 GFLOP/s, sharing 4 GB/s of
 * LPDDR4 with the CPU). The figures are public orders of magnitude, not a
 * claim about any product; what matters is that costs follow from work in
 * a way a profiler user would recognise: a kernel is as slow as the worse
 * of its arithmetic and its memory traffic, poor occupancy hides latency
 * badly, partial waves waste units, and small copies pay a fixed latency.
 */
#include <math.h>
#include <string.h>

#include "simInt.h"

static const sim_model compute_model = {
    .model = GP_SIM_MODEL_COMPUTE,
    .name_fmt = "Sim Compute GPU #%u",
    .vendor = "gpuperf",
    .model_name = "SimCompute X100",
    .architecture = "simt-100",
    .driver_version = "gpuperf-sim " GP_VERSION_STRING,
    .memory_bytes = 80ull << 30,
    .dram_bw = 1.555e12,
    .peak_flops = 19.5e12,
    .h2d_pinned_bw = 24e9,
    .h2d_pageable_bw = 11e9,
    .p2p_bw = 250e9,
    .hth_bw = 9e9,
    .fill_bw = 1.3e12,
    .launch_ns = 2500,
    .copy_ns = 1800,
    .compute_units = 108,
    .core_clock_khz = 1410000,
    .memory_clock_khz = 1215000,
    .max_threads_per_block = 1024,
    .max_threads_per_cu = 2048,
    .max_blocks_per_cu = 32,
    .registers_per_cu = 65536,
    .shared_per_block = 48 * 1024,
    .shared_per_cu = 164 * 1024,
    .warp = 32,
    .num_queues = 7,
    .queues =
        {
            {"Compute 0", "compute queue 0 (streams 0, 4, 8, ...)",
             GP_QUEUE_COMPUTE, 0},
            {"Compute 1", "compute queue 1 (streams 1, 5, 9, ...)",
             GP_QUEUE_COMPUTE, 0},
            {"Compute 2", "compute queue 2 (streams 2, 6, 10, ...)",
             GP_QUEUE_COMPUTE, 0},
            {"Compute 3", "compute queue 3 (streams 3, 7, 11, ...)",
             GP_QUEUE_COMPUTE, 0},
            {"Copy HtoD", "host-to-device copy engine", GP_QUEUE_COPY, 0},
            {"Copy DtoH", "device-to-host copy engine", GP_QUEUE_COPY, 0},
            {"Copy P2P", "peer-to-peer copy engine", GP_QUEUE_COPY, 0},
        },
    .first_compute = 0,
    .num_compute = 4,
    .q_h2d = 4,
    .q_d2h = 5,
    .q_p2p = 6,
    .idle_w = 55.0,
    .busy_w = 400.0,
    .idle_c = 34.0,
    .busy_c = 78.0,
    .clock_drift_ppb = 37000, /* 37 ppm fast */
};

static const sim_model v3d_model = {
    .model = GP_SIM_MODEL_V3D,
    .name_fmt = "Sim V3D 4.2 #%u",
    .vendor = "Broadcom (simulated)",
    .model_name = "V3D 4.2",
    .architecture = "v3d-4.2",
    .driver_version = "gpuperf-sim " GP_VERSION_STRING,
    .memory_bytes = 1ull << 30, /* the CMA share of system memory */
    .dram_bw = 4e9,
    .peak_flops = 32e9,
    .h2d_pinned_bw = 3e9, /* same memory: a cache-coherent copy */
    .h2d_pageable_bw = 2e9,
    .p2p_bw = 1e9,
    .hth_bw = 2e9,
    .fill_bw = 3.5e9,
    .launch_ns = 20000,
    .copy_ns = 8000,
    .compute_units = 8, /* QPUs */
    .core_clock_khz = 500000,
    .memory_clock_khz = 1600000,
    .max_threads_per_block = 256,
    .max_threads_per_cu = 64, /* 16-wide SIMD, 4 threads per QPU */
    .max_blocks_per_cu = 4,
    .registers_per_cu = 4096,
    .shared_per_block = 16 * 1024,
    .shared_per_cu = 16 * 1024,
    .warp = 16,
    .num_queues = 5,
    .queues =
        {
            {"bin", "binner: tile lists from vertex processing",
             GP_QUEUE_GRAPHICS, 0},
            {"render", "renderer: per-tile fragment processing",
             GP_QUEUE_GRAPHICS, 0},
            {"tfu", "texture formatting unit (copies)", GP_QUEUE_COPY, 0},
            {"csd", "compute shader dispatch", GP_QUEUE_COMPUTE, 0},
            {"cache_clean", "cache clean and flush", GP_QUEUE_OTHER, 0},
        },
    .first_compute = 3,
    .num_compute = 1,
    .q_h2d = 2,
    .q_d2h = 2,
    .q_p2p = 2,
    .idle_w = 1.2,
    .busy_w = 4.8,
    .idle_c = 42.0,
    .busy_c = 68.0,
    .clock_drift_ppb = -21000, /* 21 ppm slow */
};

/* Returns the model for a gp_sim_model value, or NULL. */
const sim_model *gp__sim_model_get(uint32_t model) {
  switch (model) {
  case GP_SIM_MODEL_COMPUTE:
    return &compute_model;
  case GP_SIM_MODEL_V3D:
    return &v3d_model;
  default:
    return NULL;
  }
}

static uint32_t min_u32(uint32_t a, uint32_t b) {
  return a < b ? a : b;
}

/*
 * Returns the duration in ns of a kernel launch and fills *st with what the
 * work did. Deterministic: no randomness, only the inputs.
 */
uint64_t gp__sim_kernel_cost(const sim_model *m, const gp_sim_kernel_desc *k,
                             gp_sim_dim3 grid, gp_sim_dim3 block,
                             uint32_t dynamic_shared, sim_work_stats *st) {
  uint64_t blocks = (uint64_t)grid.x * grid.y * grid.z;
  uint32_t threads_per_block = block.x * block.y * block.z;
  uint64_t threads = blocks * threads_per_block;

  /* Occupancy: resident blocks per unit, limited by threads, registers,
   * shared memory and the block limit. */
  uint32_t warps_per_block = (threads_per_block + m->warp - 1) / m->warp;
  uint32_t by_threads = m->max_threads_per_cu / (warps_per_block * m->warp);
  uint32_t regs = k->registers_per_thread ? k->registers_per_thread : 32;
  uint32_t by_regs =
      m->registers_per_cu / (regs * warps_per_block * m->warp + 1);
  uint32_t shared = k->static_shared_memory + dynamic_shared;
  uint32_t by_shared =
      shared ? m->shared_per_cu / shared : m->max_blocks_per_cu;
  uint32_t per_cu = min_u32(min_u32(by_threads, by_regs),
                            min_u32(by_shared, m->max_blocks_per_cu));
  if (per_cu == 0)
    per_cu = 1;
  uint64_t slots = (uint64_t)per_cu * m->compute_units;
  uint64_t waves = (blocks + slots - 1) / slots;
  double resident =
      (double)(blocks < slots ? blocks : slots) / (double)m->compute_units;
  double max_warps = (double)m->max_threads_per_cu / m->warp;
  double occupancy = resident * warps_per_block / max_warps;
  if (occupancy > 1.0)
    occupancy = 1.0;

  /* Throughput: latency hiding improves with occupancy; a partial last
   * wave leaves units idle. */
  double hide = 0.3 + 0.7 * sqrt(occupancy);
  double flops = (double)threads * k->flops_per_thread;
  double traffic = (double)threads * k->bytes_per_thread;
  double locality = k->cache_locality;
  double dram = traffic * (1.0 - 0.9 * locality);
  double wave_eff = (double)blocks / (double)(waves * slots);
  if (blocks >= slots)
    wave_eff = 0.5 + 0.5 * wave_eff; /* later waves fill in */
  double t_compute = flops / (m->peak_flops * hide * wave_eff);
  double t_memory = dram / (m->dram_bw * (0.5 + 0.5 * hide));
  double t = t_compute > t_memory ? t_compute : t_memory;
  uint64_t ns = m->launch_ns + (uint64_t)llround(t * 1e9);

  if (st) {
    double cycles_per_ns = m->core_clock_khz / 1e6;
    double busy_ns = t * 1e9;
    double rf = k->read_fraction;
    double l2_requests = traffic / 32.0; /* 32-byte sectors */
    double l2_hits = l2_requests * 0.9 * locality;
    st->kernels = 1.0;
    st->flops = flops;
    st->threads = (double)threads;
    /* One warp instruction per warp-wide operation, one per sector. */
    st->instructions = flops / m->warp + l2_requests;
    st->dram_read = dram * rf;
    st->dram_write = dram * (1.0 - rf);
    st->l2_read = l2_requests * rf;
    st->l2_write = l2_requests - st->l2_read;
    st->l2_read_hit = l2_hits * rf;
    st->l2_write_hit = l2_hits - st->l2_read_hit;
    /* Units are active for the busy part, scaled by how many had work. */
    double used = blocks < slots ? (double)blocks / (double)slots : 1.0;
    if (used * m->compute_units < 1.0)
      used = 1.0 / m->compute_units;
    st->active_cycles = busy_ns * cycles_per_ns * (used > 1.0 ? 1.0 : used);
    st->occ_cycles = occupancy * st->active_cycles;
    /* Of the active cycles, the compute-bound share issues; the rest
     * waits for memory. */
    double issue = t > 0.0 ? t_compute / t : 1.0;
    st->issue_cycles = st->active_cycles * (issue > 1.0 ? 1.0 : issue);
    st->stall_cycles = st->active_cycles - st->issue_cycles;
  }
  return ns;
}

/* Returns the duration in ns of a copy. */
uint64_t gp__sim_copy_cost(const sim_model *m, uint32_t copy_kind,
                           uint32_t src_kind, uint32_t dst_kind,
                           uint64_t bytes) {
  double bw;
  switch (copy_kind) {
  case GP_MEMCPY_HTOD:
    bw = src_kind == GP_MEMORY_PINNED ? m->h2d_pinned_bw : m->h2d_pageable_bw;
    break;
  case GP_MEMCPY_DTOH:
    bw = dst_kind == GP_MEMORY_PINNED ? m->h2d_pinned_bw : m->h2d_pageable_bw;
    break;
  case GP_MEMCPY_DTOD:
    bw = m->dram_bw / 2.0; /* read and write the same DRAM */
    break;
  case GP_MEMCPY_PTOP:
    bw = m->p2p_bw;
    break;
  default:
    bw = m->hth_bw;
    break;
  }
  return m->copy_ns + (uint64_t)llround((double)bytes / bw * 1e9);
}

/* Returns the duration in ns of a fill. */
uint64_t gp__sim_fill_cost(const sim_model *m, uint64_t bytes) {
  return m->launch_ns / 2 + (uint64_t)llround((double)bytes / m->fill_bw * 1e9);
}

static const char *const cbid_names[GP_SIM_CBID_COUNT] = {
    [GP_SIM_CBID_INVALID] = "gp_sim_invalid",
    [GP_SIM_CBID_CONTEXT_CREATE] = "gp_sim_context_create",
    [GP_SIM_CBID_CONTEXT_DESTROY] = "gp_sim_context_destroy",
    [GP_SIM_CBID_STREAM_CREATE] = "gp_sim_stream_create",
    [GP_SIM_CBID_STREAM_DESTROY] = "gp_sim_stream_destroy",
    [GP_SIM_CBID_STREAM_SET_NAME] = "gp_sim_stream_set_name",
    [GP_SIM_CBID_MALLOC] = "gp_sim_malloc",
    [GP_SIM_CBID_FREE] = "gp_sim_free",
    [GP_SIM_CBID_HOST_REGISTER] = "gp_sim_host_register",
    [GP_SIM_CBID_HOST_UNREGISTER] = "gp_sim_host_unregister",
    [GP_SIM_CBID_KERNEL_CREATE] = "gp_sim_kernel_create",
    [GP_SIM_CBID_KERNEL_DESTROY] = "gp_sim_kernel_destroy",
    [GP_SIM_CBID_LAUNCH] = "gp_sim_launch",
    [GP_SIM_CBID_MEMCPY_ASYNC] = "gp_sim_memcpy_async",
    [GP_SIM_CBID_MEMCPY] = "gp_sim_memcpy",
    [GP_SIM_CBID_MEMSET_ASYNC] = "gp_sim_memset_async",
    [GP_SIM_CBID_EVENT_CREATE] = "gp_sim_event_create",
    [GP_SIM_CBID_EVENT_DESTROY] = "gp_sim_event_destroy",
    [GP_SIM_CBID_EVENT_RECORD] = "gp_sim_event_record",
    [GP_SIM_CBID_STREAM_WAIT_EVENT] = "gp_sim_stream_wait_event",
    [GP_SIM_CBID_EVENT_QUERY] = "gp_sim_event_query",
    [GP_SIM_CBID_EVENT_SYNCHRONIZE] = "gp_sim_event_synchronize",
    [GP_SIM_CBID_EVENT_ELAPSED] = "gp_sim_event_elapsed",
    [GP_SIM_CBID_STREAM_SYNCHRONIZE] = "gp_sim_stream_synchronize",
    [GP_SIM_CBID_CONTEXT_SYNCHRONIZE] = "gp_sim_context_synchronize",
    [GP_SIM_CBID_STREAM_SET_PERFMON] = "gp_sim_stream_set_perfmon",
    [GP_SIM_CBID_MALLOC_MANAGED] = "gp_sim_malloc_managed",
    [GP_SIM_CBID_HOST_ACCESS] = "gp_sim_host_access",
};

/* Returns the function name for an API cbid. */
const char *gp__sim_cbid_name(uint32_t cbid) {
  return cbid < GP_SIM_CBID_COUNT && cbid_names[cbid] ? cbid_names[cbid]
                                                      : "gp_sim_unknown";
}
