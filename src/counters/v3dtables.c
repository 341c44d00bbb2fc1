/*
 * v3dtables.c - the Broadcom V3D performance counters, as the Linux
 * kernel publishes them (drivers/gpu/drm/v3d/v3d_perfmon.c,
 * v3d_v42_performance_counters[] and v3d_v71_performance_counters[], also
 * Mesa's v3d counter tables): the hardware index order, category, name and
 * description of each of the 87 counters of V3D 4.2 (Raspberry Pi 4) and
 * the 93 of V3D 7.1 (Raspberry Pi 5). These are published facts; gpuperf
 * gives counter i the id i + 1 (id 0 reads as "unset" to many trace
 * consumers). The simulated V3D (src/backend/sim) and the real one
 * through the kernel (src/backend/linux/v3d.c) share them.
 *
 * Units and groups are gpuperf's: Perfetto's fixed group that fits the
 * category, plus one custom group per category (ids from 100, in the
 * order of GP__V3D_CATEGORY_*).
 */
#include <string.h>

#include "v3d.h"

#define V3D(idx, cat, grp, custom, unit, dflt, nm, desc)                       \
  {                                                                            \
    {.id = (idx) + 1,                                                          \
     .name = nm,                                                               \
     .description = desc,                                                      \
     .category = cat,                                                          \
     .type = GP_COUNTER_TYPE_INT64,                                            \
     .block_id = 0,                                                            \
     .num_numerator_units = (unit) != GP_UNIT_NONE,                            \
     .numerator_units = {unit},                                                \
     .num_groups = 2,                                                          \
     .groups = {grp, GP_COUNTER_GROUP_FIRST_CUSTOM + (custom)},                \
     .select_by_default = dflt},                                               \
        GP__SUM, 0                                                             \
  }

/* Indexed by the hardware counter number. */
const gp__counter_def gp__v3d42_counters[GP__V3D42_NUM] = {
    V3D(0, "FEP", GP_COUNTER_GROUP_FRAGMENTS, 0, GP_UNIT_PRIMITIVE, 0,
        "FEP-valid-primitives-no-rendered-pixels",
        "[FEP] Valid primitives that result in no rendered pixels, for all "
        "rendered tiles"),
    V3D(1, "FEP", GP_COUNTER_GROUP_FRAGMENTS, 0, GP_UNIT_PRIMITIVE, 0,
        "FEP-valid-primitives-rendered-pixels",
        "[FEP] Valid primitives for all rendered tiles (primitives may be "
        "counted in more than one tile)"),
    V3D(2, "FEP", GP_COUNTER_GROUP_FRAGMENTS, 0, GP_UNIT_NONE, 0,
        "FEP-clipped-quads", "[FEP] Early-Z/Near/Far clipped quads"),
    V3D(3, "FEP", GP_COUNTER_GROUP_FRAGMENTS, 0, GP_UNIT_NONE, 0,
        "FEP-valid-quads", "[FEP] Valid quads"),
    V3D(4, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-not-passing-stencil-test",
        "[TLB] Quads with no pixels passing the stencil test"),
    V3D(5, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-not-passing-z-and-stencil-test",
        "[TLB] Quads with no pixels passing the Z and stencil tests"),
    V3D(6, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-passing-z-and-stencil-test",
        "[TLB] Quads with any pixels passing the Z and stencil tests"),
    V3D(7, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-with-zero-coverage",
        "[TLB] Quads with all pixels having zero coverage"),
    V3D(8, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-with-non-zero-coverage",
        "[TLB] Quads with any pixels having non-zero coverage"),
    V3D(9, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-quads-written-to-color-buffer",
        "[TLB] Quads with valid pixels written to colour buffer"),
    V3D(10, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_PRIMITIVE, 0,
        "PTB-primitives-discarded-outside-viewport",
        "[PTB] Primitives discarded by being outside the viewport"),
    V3D(11, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_PRIMITIVE, 0,
        "PTB-primitives-need-clipping", "[PTB] Primitives that need clipping"),
    V3D(12, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_PRIMITIVE, 0,
        "PTB-primitives-discarded-reversed",
        "[PTB] Primitives that are discarded because they are reversed"),
    V3D(13, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 1,
        "QPU-total-idle-clk-cycles",
        "[QPU] Total idle clock cycles for all QPUs"),
    V3D(14, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 1,
        "QPU-total-active-clk-cycles-vertex-coord-shading",
        "[QPU] Total active clock cycles for all QPUs doing "
        "vertex/coordinate/user shading (counts only when QPU is not stalled)"),
    V3D(15, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-active-clk-cycles-fragment-shading",
        "[QPU] Total active clock cycles for all QPUs doing fragment shading "
        "(counts only when QPU is not stalled)"),
    V3D(16, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-clk-cycles-executing-valid-instr",
        "[QPU] Total clock cycles for all QPUs executing valid instructions"),
    V3D(17, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 1,
        "QPU-total-clk-cycles-waiting-TMU",
        "[QPU] Total clock cycles for all QPUs stalled waiting for TMUs only "
        "(counter won't increment if QPU also stalling for another reason)"),
    V3D(18, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-clk-cycles-waiting-scoreboard",
        "[QPU] Total clock cycles for all QPUs stalled waiting for Scoreboard "
        "only (counter won't increment if QPU also stalling for another "
        "reason)"),
    V3D(19, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-clk-cycles-waiting-varyings",
        "[QPU] Total clock cycles for all QPUs stalled waiting for Varyings "
        "only (counter won't increment if QPU also stalling for another "
        "reason)"),
    V3D(20, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-instr-cache-hit",
        "[QPU] Total instruction cache hits for all slices"),
    V3D(21, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-instr-cache-miss",
        "[QPU] Total instruction cache misses for all slices"),
    V3D(22, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-uniform-cache-hit",
        "[QPU] Total uniforms cache hits for all slices"),
    V3D(23, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-uniform-cache-miss",
        "[QPU] Total uniforms cache misses for all slices"),
    V3D(24, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 1,
        "TMU-total-text-quads-access", "[TMU] Total texture cache accesses"),
    V3D(25, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 0,
        "TMU-total-text-cache-miss",
        "[TMU] Total texture cache misses (number of fetches from "
        "memory/L2cache)"),
    V3D(26, "VPM", GP_COUNTER_GROUP_VERTICES, 5, GP_UNIT_NONE, 0,
        "VPM-total-clk-cycles-VDW-stalled",
        "[VPM] Total clock cycles VDW is stalled waiting for VPM access"),
    V3D(27, "VPM", GP_COUNTER_GROUP_VERTICES, 5, GP_UNIT_NONE, 0,
        "VPM-total-clk-cycles-VCD-stalled",
        "[VPM] Total clock cycles VCD is stalled waiting for VPM access"),
    V3D(28, "CLE", GP_COUNTER_GROUP_SYSTEM, 6, GP_UNIT_NONE, 0,
        "CLE-bin-thread-active-cycles", "[CLE] Bin thread active cycles"),
    V3D(29, "CLE", GP_COUNTER_GROUP_SYSTEM, 6, GP_UNIT_NONE, 0,
        "CLE-render-thread-active-cycles", "[CLE] Render thread active cycles"),
    V3D(30, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 1,
        "L2T-total-cache-hit", "[L2T] Total Level 2 cache hits"),
    V3D(31, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 1,
        "L2T-total-cache-miss", "[L2T] Total Level 2 cache misses"),
    V3D(32, "CORE", GP_COUNTER_GROUP_SYSTEM, 8, GP_UNIT_NONE, 1, "cycle-count",
        "[CORE] Cycle counter"),
    V3D(33, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-clk-cycles-waiting-vertex-coord-shading",
        "[QPU] Total stalled clock cycles for all QPUs doing "
        "vertex/coordinate/user shading"),
    V3D(34, "QPU", GP_COUNTER_GROUP_COMPUTE, 3, GP_UNIT_NONE, 0,
        "QPU-total-clk-cycles-waiting-fragment-shading",
        "[QPU] Total stalled clock cycles for all QPUs doing fragment shading"),
    V3D(35, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_PRIMITIVE, 0,
        "PTB-primitives-binned", "[PTB] Total primitives binned"),
    V3D(36, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-writes-seen-watch-0", "[AXI] Writes seen by watch 0"),
    V3D(37, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-reads-seen-watch-0", "[AXI] Reads seen by watch 0"),
    V3D(38, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-writes-stalled-seen-watch-0",
        "[AXI] Write stalls seen by watch 0"),
    V3D(39, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-reads-stalled-seen-watch-0", "[AXI] Read stalls seen by watch 0"),
    V3D(40, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_BYTE, 0,
        "AXI-write-bytes-seen-watch-0",
        "[AXI] Total bytes written seen by watch 0"),
    V3D(41, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_BYTE, 0,
        "AXI-read-bytes-seen-watch-0",
        "[AXI] Total bytes read seen by watch 0"),
    V3D(42, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-writes-seen-watch-1", "[AXI] Writes seen by watch 1"),
    V3D(43, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-reads-seen-watch-1", "[AXI] Reads seen by watch 1"),
    V3D(44, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-writes-stalled-seen-watch-1",
        "[AXI] Write stalls seen by watch 1"),
    V3D(45, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_NONE, 0,
        "AXI-reads-stalled-seen-watch-1", "[AXI] Read stalls seen by watch 1"),
    V3D(46, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_BYTE, 0,
        "AXI-write-bytes-seen-watch-1",
        "[AXI] Total bytes written seen by watch 1"),
    V3D(47, "AXI", GP_COUNTER_GROUP_MEMORY, 9, GP_UNIT_BYTE, 0,
        "AXI-read-bytes-seen-watch-1",
        "[AXI] Total bytes read seen by watch 1"),
    V3D(48, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-partial-quads-written-to-color-buffer",
        "[TLB] Partial quads written to the colour buffer"),
    V3D(49, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 0,
        "TMU-total-config-access", "[TMU] Total config accesses"),
    V3D(50, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-no-id-stalled", "[L2T] No ID stall"),
    V3D(51, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-command-queue-stalled", "[L2T] Command queue full stall"),
    V3D(52, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-TMU-writes", "[L2T] TMU write accesses"),
    V3D(53, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 0,
        "TMU-active-cycles", "[TMU] Active cycles"),
    V3D(54, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 0,
        "TMU-stalled-cycles", "[TMU] Stalled cycles"),
    V3D(55, "CLE", GP_COUNTER_GROUP_SYSTEM, 6, GP_UNIT_NONE, 0,
        "CLE-thread-active-cycles", "[CLE] Bin or render thread active cycles"),
    V3D(56, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0, "L2T-TMU-reads",
        "[L2T] TMU read accesses"),
    V3D(57, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0, "L2T-CLE-reads",
        "[L2T] CLE read accesses"),
    V3D(58, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0, "L2T-VCD-reads",
        "[L2T] VCD read accesses"),
    V3D(59, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-TMU-config-reads", "[L2T] TMU CFG read accesses"),
    V3D(60, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC0-reads", "[L2T] SLC0 read accesses"),
    V3D(61, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC1-reads", "[L2T] SLC1 read accesses"),
    V3D(62, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC2-reads", "[L2T] SLC2 read accesses"),
    V3D(63, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-TMU-write-miss", "[L2T] TMU write misses"),
    V3D(64, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-TMU-read-miss", "[L2T] TMU read misses"),
    V3D(65, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-CLE-read-miss", "[L2T] CLE read misses"),
    V3D(66, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-VCD-read-miss", "[L2T] VCD read misses"),
    V3D(67, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-TMU-config-read-miss", "[L2T] TMU CFG read misses"),
    V3D(68, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC0-read-miss", "[L2T] SLC0 read misses"),
    V3D(69, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC1-read-miss", "[L2T] SLC1 read misses"),
    V3D(70, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-SLC2-read-miss", "[L2T] SLC2 read misses"),
    V3D(71, "CORE", GP_COUNTER_GROUP_SYSTEM, 8, GP_UNIT_NONE, 1,
        "core-memory-writes", "[CORE] Total memory writes"),
    V3D(72, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-memory-writes", "[L2T] Total memory writes"),
    V3D(73, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_NONE, 0,
        "PTB-memory-writes", "[PTB] Total memory writes"),
    V3D(74, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-memory-writes", "[TLB] Total memory writes"),
    V3D(75, "CORE", GP_COUNTER_GROUP_SYSTEM, 8, GP_UNIT_NONE, 1,
        "core-memory-reads", "[CORE] Total memory reads"),
    V3D(76, "L2T", GP_COUNTER_GROUP_MEMORY, 7, GP_UNIT_NONE, 0,
        "L2T-memory-reads", "[L2T] Total memory reads"),
    V3D(77, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_NONE, 0,
        "PTB-memory-reads", "[PTB] Total memory reads"),
    V3D(78, "PSE", GP_COUNTER_GROUP_PRIMITIVES, 10, GP_UNIT_NONE, 0,
        "PSE-memory-reads", "[PSE] Total memory reads"),
    V3D(79, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-memory-reads", "[TLB] Total memory reads"),
    V3D(80, "GMP", GP_COUNTER_GROUP_MEMORY, 11, GP_UNIT_NONE, 0,
        "GMP-memory-reads", "[GMP] Total memory reads"),
    V3D(81, "PTB", GP_COUNTER_GROUP_PRIMITIVES, 2, GP_UNIT_NONE, 0,
        "PTB-memory-words-writes", "[PTB] Total memory words written"),
    V3D(82, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-memory-words-writes", "[TLB] Total memory words written"),
    V3D(83, "PSE", GP_COUNTER_GROUP_PRIMITIVES, 10, GP_UNIT_NONE, 0,
        "PSE-memory-words-reads", "[PSE] Total memory words read"),
    V3D(84, "TLB", GP_COUNTER_GROUP_FRAGMENTS, 1, GP_UNIT_NONE, 0,
        "TLB-memory-words-reads", "[TLB] Total memory words read"),
    V3D(85, "TMU", GP_COUNTER_GROUP_MEMORY, 4, GP_UNIT_NONE, 0, "TMU-MRU-hits",
        "[TMU] Total MRU hits"),
    V3D(86, "CORE", GP_COUNTER_GROUP_SYSTEM, 8, GP_UNIT_NONE, 1,
        "compute-active-cycles", "[CORE] Compute active cycles"),
};

/* V3D 7.1, indexed by the hardware counter number: category, name,
 * description. Groups and units come from gp__v3d_counter_fill(). */
const gp__v3d_desc gp__v3d71_counters[GP__V3D71_NUM] = {
    {"CORE", "cycle-count", "[CORE] Cycle counter"},
    {"CORE", "core-active", "[CORE] Bin/Render/Compute active cycles"},
    {"CLE", "CLE-bin-thread-active-cycles", "[CLE] Bin thread active cycles"},
    {"CLE", "CLE-render-thread-active-cycles",
     "[CLE] Render thread active cycles"},
    {"CORE", "compute-active-cycles", "[CORE] Compute active cycles"},
    {"FEP", "FEP-valid-primitives-no-rendered-pixels",
     "[FEP] Valid primitives that result in no rendered pixels, for all "
     "rendered tiles"},
    {"FEP", "FEP-valid-primitives-rendered-pixels",
     "[FEP] Valid primitives for all rendered tiles (primitives may be counted "
     "in more than one tile)"},
    {"FEP", "FEP-clipped-quads", "[FEP] Early-Z/Near/Far clipped quads"},
    {"FEP", "FEP-valid-quads", "[FEP] Valid quads"},
    {"TLB", "TLB-quads-not-passing-stencil-test",
     "[TLB] Quads with no pixels passing the stencil test"},
    {"TLB", "TLB-quads-not-passing-z-and-stencil-test",
     "[TLB] Quads with no pixels passing the Z and stencil tests"},
    {"TLB", "TLB-quads-passing-z-and-stencil-test",
     "[TLB] Quads with any pixels passing the Z and stencil tests"},
    {"TLB", "TLB-quads-written-to-color-buffer",
     "[TLB] Quads with valid pixels written to colour buffer"},
    {"TLB", "TLB-partial-quads-written-to-color-buffer",
     "[TLB] Partial quads written to the colour buffer"},
    {"PTB", "PTB-primitives-need-clipping",
     "[PTB] Primitives that need clipping"},
    {"PTB", "PTB-primitives-discarded-outside-viewport",
     "[PTB] Primitives discarded by being outside the viewport"},
    {"PTB", "PTB-primitives-binned", "[PTB] Total primitives binned"},
    {"PTB", "PTB-primitives-discarded-reversed",
     "[PTB] Primitives that are discarded because they are reversed"},
    {"QPU", "QPU-total-instr-cache-hit",
     "[QPU] Total instruction cache hits for all slices"},
    {"QPU", "QPU-total-instr-cache-miss",
     "[QPU] Total instruction cache misses for all slices"},
    {"QPU", "QPU-total-uniform-cache-hit",
     "[QPU] Total uniforms cache hits for all slices"},
    {"QPU", "QPU-total-uniform-cache-miss",
     "[QPU] Total uniforms cache misses for all slices"},
    {"TMU", "TMU-active-cycles", "[TMU] Active cycles"},
    {"TMU", "TMU-stalled-cycles", "[TMU] Stalled cycles"},
    {"TMU", "TMU-total-text-quads-access",
     "[TMU] Total texture cache accesses"},
    {"TMU", "TMU-cache-x4-active-cycles",
     "[TMU] Cache active cycles for x4 access"},
    {"TMU", "TMU-cache-x4-stalled-cycles",
     "[TMU] Cache stalled cycles for x4 access"},
    {"TMU", "TMU-total-text-quads-x4-access",
     "[TMU] Total texture cache x4 access"},
    {"L2T", "L2T-total-cache-hit", "[L2T] Total Level 2 cache hits"},
    {"L2T", "L2T-total-cache-miss", "[L2T] Total Level 2 cache misses"},
    {"L2T", "L2T-local", "[L2T] Local mode access"},
    {"L2T", "L2T-writeback", "[L2T] Writeback"},
    {"L2T", "L2T-zero", "[L2T] Zero"},
    {"L2T", "L2T-merge", "[L2T] Merge"},
    {"L2T", "L2T-fill", "[L2T] Fill"},
    {"L2T", "L2T-stalls-no-wid", "[L2T] Stalls because no WID available"},
    {"L2T", "L2T-stalls-no-rid", "[L2T] Stalls because no RID available"},
    {"L2T", "L2T-stalls-queue-full",
     "[L2T] Stalls because internal queue full"},
    {"L2T", "L2T-stalls-wrightback",
     "[L2T] Stalls because writeback in flight"},
    {"L2T", "L2T-stalls-mem", "[L2T] Stalls because AXI blocks read"},
    {"L2T", "L2T-stalls-fill",
     "[L2T] Stalls because fill pending for victim cache-line"},
    {"L2T", "L2T-hitq", "[L2T] Sent request via hit queue"},
    {"L2T", "L2T-hitq-full",
     "[L2T] Sent request via main queue because hit queue is full"},
    {"L2T", "L2T-stalls-read-data",
     "[L2T] Stalls because waiting for data from SDRAM"},
    {"L2T", "L2T-TMU-read-hits", "[L2T] TMU read hits"},
    {"L2T", "L2T-TMU-read-miss", "[L2T] TMU read misses"},
    {"L2T", "L2T-VCD-read-hits", "[L2T] VCD read hits"},
    {"L2T", "L2T-VCD-read-miss", "[L2T] VCD read misses"},
    {"L2T", "L2T-SLC-read-hits", "[L2T] SLC read hits (all slices)"},
    {"L2T", "L2T-SLC-read-miss", "[L2T] SLC read misses (all slices)"},
    {"AXI", "AXI-writes-seen-watch-0", "[AXI] Writes seen by watch 0"},
    {"AXI", "AXI-reads-seen-watch-0", "[AXI] Reads seen by watch 0"},
    {"AXI", "AXI-writes-stalled-seen-watch-0",
     "[AXI] Write stalls seen by watch 0"},
    {"AXI", "AXI-reads-stalled-seen-watch-0",
     "[AXI] Read stalls seen by watch 0"},
    {"AXI", "AXI-write-bytes-seen-watch-0",
     "[AXI] Total bytes written seen by watch 0"},
    {"AXI", "AXI-read-bytes-seen-watch-0",
     "[AXI] Total bytes read seen by watch 0"},
    {"AXI", "AXI-writes-seen-watch-1", "[AXI] Writes seen by watch 1"},
    {"AXI", "AXI-reads-seen-watch-1", "[AXI] Reads seen by watch 1"},
    {"AXI", "AXI-writes-stalled-seen-watch-1",
     "[AXI] Write stalls seen by watch 1"},
    {"AXI", "AXI-reads-stalled-seen-watch-1",
     "[AXI] Read stalls seen by watch 1"},
    {"AXI", "AXI-write-bytes-seen-watch-1",
     "[AXI] Total bytes written seen by watch 1"},
    {"AXI", "AXI-read-bytes-seen-watch-1",
     "[AXI] Total bytes read seen by watch 1"},
    {"CORE", "core-memory-writes", "[CORE] Total memory writes"},
    {"L2T", "L2T-memory-writes", "[L2T] Total memory writes"},
    {"PTB", "PTB-memory-writes", "[PTB] Total memory writes"},
    {"TLB", "TLB-memory-writes", "[TLB] Total memory writes"},
    {"CORE", "core-memory-reads", "[CORE] Total memory reads"},
    {"L2T", "L2T-memory-reads", "[L2T] Total memory reads"},
    {"PTB", "PTB-memory-reads", "[PTB] Total memory reads"},
    {"PSE", "PSE-memory-reads", "[PSE] Total memory reads"},
    {"TLB", "TLB-memory-reads", "[TLB] Total memory reads"},
    {"PTB", "PTB-memory-words-writes", "[PTB] Total memory words written"},
    {"TLB", "TLB-memory-words-writes", "[TLB] Total memory words written"},
    {"PSE", "PSE-memory-words-reads", "[PSE] Total memory words read"},
    {"TLB", "TLB-memory-words-reads", "[TLB] Total memory words read"},
    {"AXI", "AXI-read-trans", "[AXI] Read transaction count"},
    {"AXI", "AXI-write-trans", "[AXI] Write transaction count"},
    {"AXI", "AXI-read-wait-cycles", "[AXI] Read total wait cycles"},
    {"AXI", "AXI-write-wait-cycles", "[AXI] Write total wait cycles"},
    {"AXI", "AXI-max-outstanding-reads",
     "[AXI] Maximum outstanding read transactions"},
    {"AXI", "AXI-max-outstanding-writes",
     "[AXI] Maximum outstanding write transactions"},
    {"QPU", "QPU-wait-bubble",
     "[QPU] Pipeline bubble in qcycles due all threads waiting"},
    {"QPU", "QPU-ic-miss-bubble",
     "[QPU] Pipeline bubble in qcycles due instruction-cache miss"},
    {"QPU", "QPU-active", "[QPU] Executed shader instruction"},
    {"QPU", "QPU-total-active-clk-cycles-fragment-shading",
     "[QPU] Total active clock cycles for all QPUs doing fragment shading "
     "(counts only when QPU is not stalled)"},
    {"QPU", "QPU-stalls", "[QPU] Stalled qcycles executing shader instruction"},
    {"QPU", "QPU-total-clk-cycles-waiting-fragment-shading",
     "[QPU] Total stalled clock cycles for all QPUs doing fragment shading"},
    {"QPU", "QPU-stalls-TMU", "[QPU] Stalled qcycles waiting for TMU"},
    {"QPU", "QPU-stalls-TLB", "[QPU] Stalled qcycles waiting for TLB"},
    {"QPU", "QPU-stalls-VPM", "[QPU] Stalled qcycles waiting for VPM"},
    {"QPU", "QPU-stalls-uniforms",
     "[QPU] Stalled qcycles waiting for uniforms"},
    {"QPU", "QPU-stalls-SFU", "[QPU] Stalled qcycles waiting for SFU"},
    {"QPU", "QPU-stalls-other",
     "[QPU] Stalled qcycles waiting for any other reason (vary/W/Z)"},
};

#define V3DG(k) (GP_COUNTER_GROUP_FIRST_CUSTOM + (k))
const gp_counter_group_info gp__v3d_groups[GP__V3D_NUM_GROUPS] = {
    {GP_COUNTER_GROUP_SYSTEM, 0, "System", "core and control lists"},
    {GP_COUNTER_GROUP_VERTICES, 0, "Vertices", "vertex pipeline"},
    {GP_COUNTER_GROUP_FRAGMENTS, 0, "Fragments", "fragment pipeline"},
    {GP_COUNTER_GROUP_PRIMITIVES, 0, "Primitives", "primitive setup"},
    {GP_COUNTER_GROUP_MEMORY, 0, "Memory", "caches, bus and memory"},
    {GP_COUNTER_GROUP_COMPUTE, 0, "Compute", "the shader processors"},
    {V3DG(0), 0, "FEP", "front-end pipeline"},
    {V3DG(1), 0, "TLB", "tile buffer"},
    {V3DG(2), 0, "PTB", "primitive tile binner"},
    {V3DG(3), 0, "QPU", "quad processing units (shader cores)"},
    {V3DG(4), 0, "TMU", "texture and memory lookup unit"},
    {V3DG(5), 0, "VPM", "vertex pipeline memory"},
    {V3DG(6), 0, "CLE", "control list executor"},
    {V3DG(7), 0, "L2T", "level 2 texture cache"},
    {V3DG(8), 0, "CORE", "the core"},
    {V3DG(9), 0, "AXI", "AXI bus watches"},
    {V3DG(10), 0, "PSE", "primitive setup engine"},
    {V3DG(11), 0, "GMP", "memory protection"},
};

/* Each category's fixed group, in the order of the custom groups. */
static const struct {
  const char *category;
  uint32_t group;
} category_groups[] = {
    {"FEP", GP_COUNTER_GROUP_FRAGMENTS},  {"TLB", GP_COUNTER_GROUP_FRAGMENTS},
    {"PTB", GP_COUNTER_GROUP_PRIMITIVES}, {"QPU", GP_COUNTER_GROUP_COMPUTE},
    {"TMU", GP_COUNTER_GROUP_MEMORY},     {"VPM", GP_COUNTER_GROUP_VERTICES},
    {"CLE", GP_COUNTER_GROUP_SYSTEM},     {"L2T", GP_COUNTER_GROUP_MEMORY},
    {"CORE", GP_COUNTER_GROUP_SYSTEM},    {"AXI", GP_COUNTER_GROUP_MEMORY},
    {"PSE", GP_COUNTER_GROUP_PRIMITIVES}, {"GMP", GP_COUNTER_GROUP_MEMORY},
};

/* See v3d.h. */
void gp__v3d_counter_fill(uint32_t index, const gp__v3d_desc *d,
                          bool select_default, gp__counter_def *out) {
  memset(out, 0, sizeof(*out));
  for (uint32_t i = 0; i < GP__V3D42_NUM; i++)
    if (strcmp(gp__v3d42_counters[i].info.name, d->name) == 0)
      *out = gp__v3d42_counters[i];
  if (!out->info.num_groups) {
    out->info.type = GP_COUNTER_TYPE_INT64;
    out->info.num_groups = 1;
    out->info.groups[0] = GP_COUNTER_GROUP_SYSTEM;
    for (uint32_t k = 0; k < GP_ARRAY_SIZE(category_groups); k++)
      if (strcmp(category_groups[k].category, d->category) == 0) {
        out->info.num_groups = 2;
        out->info.groups[0] = category_groups[k].group;
        out->info.groups[1] = V3DG(k);
      }
    out->combine = GP__SUM;
  }
  out->info.id = index + 1;
  out->info.name = d->name;
  out->info.description = d->description;
  out->info.category = d->category;
  out->info.block_id = 0;
  out->info.select_by_default &= select_default;
}
