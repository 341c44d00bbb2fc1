/*
 * simcounters.c - the counters of the simulated GPUs: their catalogs
 * ("compute" and the real V3D 4.2 one), how the cost model's work
 * statistics become counter values, and the provider hooks through which
 * perfmons, monitors and sampling reach the simulator.
 *
 * Every value follows from the cost model. A job's statistics become a
 * sim_acc (quantities that add up across jobs); a measurement is a sum of
 * those over a span of time (a perfmon's segment, a sampling window, one
 * activity) together with the busy time in that span, and each counter is
 * a formula over the three. Utilization is busy time / span, busy time
 * being the union of the intervals during which any queue of the device
 * ran work, the definition gp__sim_busy_fraction() uses. Active cycles
 * never exceed elapsed ones: overlapping kernels share the compute units,
 * so active cycles are capped at the busy cycles of the span.
 */
#include <math.h>
#include <string.h>

#include "simInt.h"
#include "counters/v3d.h"

/* ------------------------------------------------------------------ */
/* The compute catalog                                                  */

enum {
  C_UTIL,
  C_TIME,
  C_ELAPSED,
  C_ACTIVE,
  C_OCCUPANCY,
  C_INST,
  C_FLOPS,
  C_L2_SECTORS,
  C_L2_HIT_RATE,
  C_DRAM_READ,
  C_DRAM_WRITE,
  C_DRAM_PCT,
  C_COUNT
};

enum { B_DEVICE, B_SM, B_LTS, B_DRAM, B_COUNT };

#define CG_CUSTOM_SM (GP_COUNTER_GROUP_FIRST_CUSTOM + 0)
#define CG_CUSTOM_L2 (GP_COUNTER_GROUP_FIRST_CUSTOM + 1)

#define CDEF(idx, nm, ty, comb, blk, g1, g2, ng, u, nu, peak, dflt, desc)      \
  [idx] = {{.id = (idx) + 1,                                                   \
            .name = nm,                                                        \
            .description = desc,                                               \
            .category = "",                                                    \
            .type = ty,                                                        \
            .block_id = blk,                                                   \
            .num_numerator_units = nu,                                         \
            .numerator_units = {u},                                            \
            .num_groups = ng,                                                  \
            .groups = {g1, g2},                                                \
            .peak_value = peak,                                                \
            .select_by_default = dflt},                                        \
           comb,                                                               \
           0}

static const gp__counter_def compute_counters[C_COUNT] = {
    CDEF(C_UTIL, "Utilization", GP_COUNTER_TYPE_PERCENT, GP__RATIO, B_DEVICE,
         GP_COUNTER_GROUP_SYSTEM, 0, 1, GP_UNIT_PERCENT, 1, 100.0, 1,
         "Share of the time during which any queue of the device was running "
         "work (kernels, copies or fills)"),
    CDEF(C_TIME, "gpu__time_duration.sum", GP_COUNTER_TYPE_INT64, GP__SUM,
         B_DEVICE, GP_COUNTER_GROUP_SYSTEM, 0, 1, GP_UNIT_NANOSECOND, 1, 0.0, 0,
         "Total duration of the jobs measured"),
    CDEF(C_ELAPSED, "sm__cycles_elapsed.avg", GP_COUNTER_TYPE_DOUBLE, GP__SUM,
         B_SM, GP_COUNTER_GROUP_COMPUTE, CG_CUSTOM_SM, 2, 0, 0, 0.0, 0,
         "Cycles elapsed on the compute units (SMs) while counting, average "
         "over the units"),
    CDEF(C_ACTIVE, "sm__cycles_active.avg", GP_COUNTER_TYPE_DOUBLE, GP__SUM,
         B_SM, GP_COUNTER_GROUP_COMPUTE, CG_CUSTOM_SM, 2, 0, 0, 0.0, 1,
         "Cycles with at least one warp resident, average over the units"),
    CDEF(C_OCCUPANCY, "sm__warps_active.avg.pct_of_peak_sustained_active",
         GP_COUNTER_TYPE_PERCENT, GP__RATIO, B_SM, GP_COUNTER_GROUP_COMPUTE,
         CG_CUSTOM_SM, 2, GP_UNIT_PERCENT, 1, 100.0, 1,
         "Achieved occupancy: resident warps as a share of the maximum, over "
         "the active cycles"),
    CDEF(C_INST, "smsp__inst_executed.sum", GP_COUNTER_TYPE_INT64, GP__SUM,
         B_SM, GP_COUNTER_GROUP_COMPUTE, CG_CUSTOM_SM, 2, GP_UNIT_INSTRUCTION,
         1, 0.0, 0, "Warp instructions executed"),
    CDEF(C_FLOPS, "smsp__sass_thread_inst_executed_ops_fadd_fmul_ffma.sum",
         GP_COUNTER_TYPE_INT64, GP__SUM, B_SM, GP_COUNTER_GROUP_COMPUTE,
         CG_CUSTOM_SM, 2, 0, 0, 0.0, 0,
         "Single-precision floating-point operations executed by threads"),
    CDEF(C_L2_SECTORS, "lts__t_sectors.sum", GP_COUNTER_TYPE_INT64, GP__SUM,
         B_LTS, GP_COUNTER_GROUP_MEMORY, CG_CUSTOM_L2, 2, 0, 0, 0.0, 0,
         "32-byte sectors requested from the L2 cache"),
    CDEF(C_L2_HIT_RATE, "lts__t_sector_hit_rate.pct", GP_COUNTER_TYPE_PERCENT,
         GP__RATIO, B_LTS, GP_COUNTER_GROUP_MEMORY, CG_CUSTOM_L2, 2,
         GP_UNIT_PERCENT, 1, 100.0, 1,
         "Share of L2 sector requests that hit in the cache"),
    CDEF(C_DRAM_READ, "dram__bytes_read.sum", GP_COUNTER_TYPE_INT64, GP__SUM,
         B_DRAM, GP_COUNTER_GROUP_MEMORY, 0, 1, GP_UNIT_BYTE, 1, 0.0, 1,
         "Bytes read from device memory"),
    CDEF(C_DRAM_WRITE, "dram__bytes_write.sum", GP_COUNTER_TYPE_INT64, GP__SUM,
         B_DRAM, GP_COUNTER_GROUP_MEMORY, 0, 1, GP_UNIT_BYTE, 1, 0.0, 1,
         "Bytes written to device memory"),
    CDEF(C_DRAM_PCT, "dram__throughput.avg.pct_of_peak_sustained_elapsed",
         GP_COUNTER_TYPE_PERCENT, GP__RATIO, B_DRAM, GP_COUNTER_GROUP_MEMORY, 0,
         1, GP_UNIT_PERCENT, 1, 100.0, 0,
         "Device memory traffic as a share of the peak bandwidth over the "
         "time counted"),
};

static const gp_counter_block_info compute_blocks[B_COUNT] = {
    {B_DEVICE, 2, 0, 0, "device", "device-wide time counters"},
    {B_SM, 4, 0, 0, "sm", "compute unit (SM) counters"},
    {B_LTS, 2, 0, 0, "lts", "L2 cache slice counters"},
    {B_DRAM, 2, 0, 0, "dram", "device memory counters"},
};

static const gp_counter_group_info compute_groups[] = {
    {GP_COUNTER_GROUP_SYSTEM, 0, "System", "the device as a whole"},
    {GP_COUNTER_GROUP_MEMORY, 0, "Memory", "caches and device memory"},
    {GP_COUNTER_GROUP_COMPUTE, 0, "Compute", "the compute units"},
    {CG_CUSTOM_SM, 0, "Compute Core", "what the SMs did"},
    {CG_CUSTOM_L2, 0, "L2 Cache", "the L2 cache"},
};

static const gp__catalog compute_catalog = {
    .counters = compute_counters,
    .num_counters = C_COUNT,
    .num_blocks = B_COUNT,
    .blocks = compute_blocks,
    .groups = compute_groups,
    .num_groups = GP_ARRAY_SIZE(compute_groups),
    .max_active = 10,
    .min_period_ns = 10000,
    .max_period_ns = 10000000000ull,
    .supports_instrumented = 1,
    .has_scheduler = 1,
    .supports_multiplex = 1, /* sched.c emits through gp__sampler_emit() */
};

/* ------------------------------------------------------------------ */
/* The V3D 4.2 catalog                                                  */

static const gp_counter_block_info v3d_blocks[] = {
    {0, 32, 0, 0, "perfcnt",
     "the V3D performance counters: any 32 of the 87 at once "
     "(DRM_V3D_MAX_PERF_COUNTERS)"},
};

static const gp__catalog v3d_catalog = {
    .counters = gp__v3d42_counters,
    .num_counters = 87,
    .num_blocks = 1,
    .blocks = v3d_blocks,
    .groups = gp__v3d_groups,
    .num_groups = GP__V3D_NUM_GROUPS,
    .max_active = 32,
    .min_period_ns = 10000,
    .max_period_ns = 10000000000ull,
    .supports_instrumented = 1,
    .has_scheduler = 1,
    .supports_multiplex = 1, /* sched.c emits through gp__sampler_emit() */
    /* The V3D_PCTR_0_PCTRn registers the kernel reads at each job's end
     * are 32 bits wide (v3d_perfmon.c adds them into 64-bit values). */
    .counter_bits = 32,
};

/* See simInt.h. */
const gp__catalog *gp__sim_catalog(uint32_t model) {
  switch (model) {
  case GP_SIM_MODEL_COMPUTE:
    return &compute_catalog;
  case GP_SIM_MODEL_V3D:
    return &v3d_catalog;
  default:
    return NULL;
  }
}

/* ------------------------------------------------------------------ */
/* From work to values                                                  */

/*
 * n successive `s += x` in double arithmetic (round to nearest, ties to
 * even), bit for bit, in O(log n) steps.
 *
 * While s stays within one binade [2^52 u, 2^53 u) (u its ulp), every sum
 * is rounded to a multiple of u, so each add moves s by the same x rounded
 * to a multiple of u: D u. The steps up to the binade's top are one
 * multiplication; the step that crosses it is done as it is, and the next
 * binade (twice the ulp) starts over. The sum grows by x each step, so
 * the binades crossed are about log2 of n, plus those for s to outgrow x.
 * At a tie (x exactly halfway between two multiples of u) the rounding
 * goes to the even neighbour, which after one real step keeps s even and
 * the increment constant. Below the smallest normal the spacing is that
 * of the lowest binade, which the same arithmetic covers.
 */
double gp__sim_add_n(double s, double x, uint64_t n) {
  const uint64_t frac = (1ull << 52) - 1, b53 = 1ull << 53;
  while (n > 0) {
    uint64_t sb, xb;
    memcpy(&sb, &s, sizeof(sb));
    memcpy(&xb, &x, sizeof(xb));
    uint32_t se = (uint32_t)(sb >> 52) & 0x7ff,
             xe = (uint32_t)(xb >> 52) & 0x7ff;
    /* NaN, infinities and zeros: after one add, adding x changes nothing. */
    if (se == 0x7ff || xe == 0x7ff || (xb << 1) == 0)
      return s + x;
    uint32_t ue = se ? se : 1, ux = xe ? xe : 1; /* ulp exponents (biased) */
    if ((sb | xb) >> 63 || ux > ue) {
      /* x in a higher binade than s: one add (s at least doubles, so this
       * happens a few times at most). Negative operands, never met in
       * sums of counts, go one add at a time. */
      s += x;
      n--;
      continue;
    }
    /* s = S u, x = X u with X = XM / 2^sh; D u is x rounded to a multiple
     * of u. */
    uint64_t S = se ? (sb & frac) | (1ull << 52) : sb & frac;
    uint64_t XM = xe ? (xb & frac) | (1ull << 52) : xb & frac;
    uint32_t sh = ue - ux;
    if (sh > 53)
      return s; /* x < u / 2: every add rounds back to s */
    uint64_t fi = XM >> sh, D = fi;
    bool tie = false;
    if (sh > 0) {
      uint64_t rem = XM & ((1ull << sh) - 1), half = 1ull << (sh - 1);
      tie = rem == half;
      D = tie ? fi + (fi & 1) : fi + (rem > half);
    }
    /* S + X < 2^53 (the exact sum is still below the binade's top)
     * exactly when S <= last. */
    uint64_t last = b53 - 1 - fi;
    if (S > last || (tie && (S & 1))) {
      s += x;
      n--;
      continue;
    }
    if (D == 0)
      return s;
    uint64_t k = (last - S) / D + 1;
    if (k > n)
      k = n;
    S += k * D; /* <= 2^53: a top of exactly 2^53 u is the next binade */
    n -= k;
    sb = ((uint64_t)(ue - 1) << 52) + S;
    memcpy(&s, &sb, sizeof(s));
  }
  return s;
}

/* See simInt.h. */
void gp__sim_op_acc(const sim_op *op, const sim_model *m, sim_acc *a) {
  if (op->kind == GP_ACTIVITY_KIND_KERNEL) {
    /* What adding to zeros gives, without writing the zeros first (every
     * job scheduled while sampling comes here): x + 0.0 is x, but for a
     * -0.0, which the sum made +0.0. */
    double dur = (double)(op->end - op->start);
    a->jobs = 1.0;
    a->work_ns = dur;
    a->kernel_ns = dur;
    double *d = (double *)&a->k;
    const double *s = (const double *)&op->stats;
#pragma GCC unroll 16
    for (size_t i = 0; i < sizeof(sim_work_stats) / sizeof(double); i++)
      d[i] = s[i] + 0.0;
    return;
  }
  memset(a, 0, sizeof(*a));
  gp__sim_op_acc_add(a, op, m);
}

static double pos(double x) {
  return x > 0.0 ? x : 0.0;
}
static double min2(double a, double b) {
  return a < b ? a : b;
}

static void eval_compute(const sim_model *m, uint32_t i, const sim_acc *a,
                         double span, double busy, double *num, double *den) {
  double clk = m->core_clock_khz / 1e6; /* cycles per ns */
  *den = 0.0;
  switch (i) {
  case C_UTIL:
    *num = busy;
    *den = span;
    break;
  case C_TIME:
    *num = a->work_ns;
    break;
  case C_ELAPSED:
    *num = span * clk;
    break;
  case C_ACTIVE:
    *num = min2(a->k.active_cycles, busy * clk);
    break;
  case C_OCCUPANCY:
    *num = a->k.occ_cycles;
    *den = a->k.active_cycles;
    break;
  case C_INST:
    *num = a->k.instructions;
    break;
  case C_FLOPS:
    *num = a->k.flops;
    break;
  case C_L2_SECTORS:
    *num = a->k.l2_read + a->k.l2_write;
    break;
  case C_L2_HIT_RATE:
    *num = a->k.l2_read_hit + a->k.l2_write_hit;
    *den = a->k.l2_read + a->k.l2_write;
    break;
  case C_DRAM_READ:
    *num = a->k.dram_read;
    break;
  case C_DRAM_WRITE:
    *num = a->k.dram_write;
    break;
  case C_DRAM_PCT:
    *num = a->k.dram_read + a->k.dram_write;
    *den = m->dram_bw * span * 1e-9;
    break;
  default:
    *num = 0.0;
    break;
  }
}

/*
 * The V3D 4.2 counters for compute work (CSD jobs) and copies: QPU cycle
 * counters from the compute units' active and stalled cycles, cache
 * counters from the L2 model, bus and memory counters from DRAM traffic
 * (64-byte transactions). The graphics pipeline (FEP, TLB, PTB, VPM, PSE,
 * the CLE threads) is not simulated and counts 0.
 */
static double eval_v3d(const sim_model *m, uint32_t i, const sim_acc *a,
                       double span, double busy) {
  double clk = m->core_clock_khz / 1e6;
  double qpus = m->compute_units;
  double active = a->k.issue_cycles * qpus, stall = a->k.stall_cycles * qpus;
  double stall_share =
      a->k.issue_cycles + a->k.stall_cycles > 0.0
          ? a->k.stall_cycles / (a->k.issue_cycles + a->k.stall_cycles)
          : 0.0;
  double icache_miss = a->k.kernels * 32.0;
  double uniforms = a->k.instructions * 0.05, ucache_miss = a->k.kernels * 8.0;
  double sectors = a->k.l2_read + a->k.l2_write;
  double hits = a->k.l2_read_hit + a->k.l2_write_hit;
  switch (i) {
  case 13: /* QPU-total-idle-clk-cycles */
    return pos(span * clk * qpus - active - stall);
  case 14: /* QPU-total-active-clk-cycles-vertex-coord-shading (user) */
  case 16: /* QPU-total-clk-cycles-executing-valid-instr */
    return active;
  case 17: /* QPU-total-clk-cycles-waiting-TMU */
  case 33: /* QPU-total-clk-cycles-waiting-vertex-coord-shading */
    return stall;
  case 20: /* QPU-total-instr-cache-hit */
    return pos(a->k.instructions - icache_miss);
  case 21:
  case 60: /* L2T-SLC0-reads */
    return icache_miss;
  case 22:
    return pos(uniforms - ucache_miss);
  case 23:
  case 61: /* L2T-SLC1-reads */
    return ucache_miss;
  case 24: /* TMU-total-text-quads-access: 16-byte quad lookups */
    return sectors * 2.0;
  case 25: /* TMU-total-text-cache-miss: fetches from L2 */
  case 56: /* L2T-TMU-reads */
    return a->k.l2_read;
  case 30:
    return hits;
  case 31:
    return pos(sectors - hits);
  case 32: /* cycle-count */
    return span * clk;
  case 36:
  case 71: /* core-memory-writes */
  case 72: /* L2T-memory-writes */
    return a->k.dram_write / 64.0;
  case 37:
  case 75: /* core-memory-reads */
  case 76: /* L2T-memory-reads */
    return a->k.dram_read / 64.0;
  case 38:
    return a->k.dram_write / 64.0 * stall_share;
  case 39:
    return a->k.dram_read / 64.0 * stall_share;
  case 40:
    return a->k.dram_write;
  case 41:
    return a->k.dram_read;
  case 49: /* TMU-total-config-access: one per 16-lane batch */
    return a->k.threads / 16.0;
  case 59: /* L2T-TMU-config-reads */
    return a->k.threads / 64.0;
  case 52: /* L2T-TMU-writes */
    return a->k.l2_write;
  case 53: /* TMU-active-cycles: a sector per cycle */
    return min2(sectors, span * clk);
  case 54: /* TMU-stalled-cycles */
    return a->k.stall_cycles;
  case 63:
    return pos(a->k.l2_write - a->k.l2_write_hit);
  case 64:
    return pos(a->k.l2_read - a->k.l2_read_hit);
  case 68:
    return icache_miss * 0.25;
  case 69:
    return ucache_miss * 0.25;
  case 85: /* TMU-MRU-hits */
    return a->k.l2_read_hit * 0.5;
  case 86: /* compute-active-cycles */
    return min2(a->kernel_ns, busy) * clk;
  default:
    return 0.0;
  }
}

/*
 * The values (num[i], den[i]) of the n counters index[0 .. n) of catalog
 * cat on a device of model m, for work *a over span_ns with busy_ns of
 * busy time in it: a sampling window's or a perfmon's counters in one
 * call, the catalog told apart once.
 */
void gp__sim_counter_eval_n(const sim_model *m, const gp__catalog *cat,
                            const uint32_t *index, uint32_t n, const sim_acc *a,
                            double span_ns, double busy_ns, double *num,
                            double *den) {
  if (cat == &v3d_catalog) {
    for (uint32_t i = 0; i < n; i++) {
      num[i] = eval_v3d(m, index[i], a, span_ns, busy_ns);
      den[i] = 0.0;
    }
  } else {
    for (uint32_t i = 0; i < n; i++)
      eval_compute(m, index[i], a, span_ns, busy_ns, &num[i], &den[i]);
  }
}

/* One counter's value (*num, *den), as gp__sim_counter_eval_n() gives
 * it. */
void gp__sim_counter_eval(const sim_model *m, const gp__catalog *cat,
                          uint32_t index, const sim_acc *a, double span_ns,
                          double busy_ns, double *num, double *den) {
  gp__sim_counter_eval_n(m, cat, &index, 1, a, span_ns, busy_ns, num, den);
}
