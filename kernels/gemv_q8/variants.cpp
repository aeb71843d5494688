// The Q8_0 GEMV family's table (variants.h): variant -> kernel, and per shape which tile engine runs with
// which schedule. The measured winners come from the H200 runs of 2026-12-02 (run 2:
// docs/measurements/2026-12-02-h200-gemv-engines-run2.*, graph + PDL, hl activations; the h format ranks the
// same way); docs/KERNELS.md "The launcher's table" prints this table with the figures.
#include "variants.h"

#include <algorithm>
#include <iterator>

namespace qc::gpu {
namespace {

// ---- variant -> kernel ----

using enum GemvVariant;
// One row per variant (aligned by hand).
// clang-format off
constexpr GemvVariantEntry kVariants[] = {
    {.variant = kH,      .kernel = GemvKernel::kRows, .rows = {.hl = false, .rows_per_warp = 1, .unroll = 1}},
    {.variant = kHL,     .kernel = GemvKernel::kRows, .rows = {.hl = true,  .rows_per_warp = 1, .unroll = 1}},
    {.variant = kHU,     .kernel = GemvKernel::kRows, .rows = {.hl = false, .rows_per_warp = 1, .unroll = 2}},
    {.variant = kHLU,    .kernel = GemvKernel::kRows, .rows = {.hl = true,  .rows_per_warp = 1, .unroll = 2}},
    {.variant = kHLU4,   .kernel = GemvKernel::kRows, .rows = {.hl = true,  .rows_per_warp = 1, .unroll = 4}},
    {.variant = kH2,     .kernel = GemvKernel::kRows, .rows = {.hl = false, .rows_per_warp = 2, .unroll = 1}},
    {.variant = kHL2,    .kernel = GemvKernel::kRows, .rows = {.hl = true,  .rows_per_warp = 2, .unroll = 1}},
    {.variant = kSplitK, .kernel = GemvKernel::kRows, .rows = {.hl = true,  .rows_per_warp = 1, .unroll = 1},
                         .split_over_k = true},  // rows.split_k = GemvQ8Args::split_k
    {.variant = kDeq,    .kernel = GemvKernel::kDeq},
    {.variant = kTile,   .kernel = GemvKernel::kTile, .hl = true},   // engine and schedule: tile_tuning_for
    {.variant = kTileH,  .kernel = GemvKernel::kTile, .hl = false},  // the same, single-word activations
    {.variant = kMma,    .kernel = GemvKernel::kMma,  .hl = true},   // int8 tensor cores (gemv_q8_mma.cu)
    {.variant = kMmaH,   .kernel = GemvKernel::kMma,  .hl = false},
};
// clang-format on
static_assert(sizeof(kVariants) / sizeof(kVariants[0]) == kGemvVariantCount, "one entry per GemvVariant");

constexpr bool entries_in_enum_order() {
  for (int i = 0; i < kGemvVariantCount; ++i)
    if (static_cast<int>(kVariants[i].variant) != i) return false;
  return true;
}
static_assert(entries_in_enum_order(), "kVariants[i] must describe GemvVariant i");

// ---- the tile engines' schedules (TileTuning fields by name; docs/KERNELS.md's labels in the names) ----

// Engine 1, "batch": R rows per warp, U segments per batch, b blocks per SM (0: one tile per block).
constexpr TileTuning kBatchR1U4b4{.rows_per_warp = 1, .unroll = 4, .blocks_per_sm = 4, .engine = 1};
constexpr TileTuning kBatchR1U4b3{.rows_per_warp = 1, .unroll = 4, .blocks_per_sm = 3, .engine = 1};
constexpr TileTuning kBatchR1U8b3{.rows_per_warp = 1, .unroll = 8, .blocks_per_sm = 3, .engine = 1};
constexpr TileTuning kBatchR1U8b0{.rows_per_warp = 1, .unroll = 8, .blocks_per_sm = 0, .engine = 1};
constexpr TileTuning kBatchR2U4b2{.rows_per_warp = 2, .unroll = 4, .blocks_per_sm = 2, .engine = 1};
// Engine 3, "ring": W warps, R rows each, a ring of U segments, g blocks per SM, trigger after the last load.
constexpr TileTuning kRingW4R2U4g4{
    .rows_per_warp = 2, .unroll = 4, .engine = 3, .warps = 4, .grid_per_sm = 4, .trigger = 2};
// Engine 2, "stream", fused gate+up at M = 1: C8 consumer warps, R1, whole rows per stage (chunk 64 covers
// any row), 2 stages, 2 blocks per SM, trigger right after the dependency wait.
constexpr TileTuning kStreamC8R1WholeS2g2t1{
    .rows_per_warp = 1, .engine = 2, .warps = 8, .chunk = 64, .stages = 2, .grid_per_sm = 2, .trigger = 1};

constexpr int segments(int k) {
  return (k + kGemvSegmentWeights - 1) / kGemvSegmentWeights;
}

// ---- shape classes of the plain GEMV (first match wins) ----

struct ShapeClass {
  const char* name;
  int min_segments;    // a row has at least this many 512-weight segments (K > 512 * (min - 1))
  int max_n;           // and at most this many rows (0: any)
  TileTuning by_m[4];  // the schedule for M = 1, 2, 3, 4
};

constexpr ShapeClass kShapeClasses[] = {
    // M = 2 costs 1.04x the M = 1 time with engine 3, 1.57x with engine 1.
    {.name = "long rows: ffn down (K = 17408; 30+ segments)",
     .min_segments = 30,
     .max_n = 0,
     .by_m = {kBatchR1U8b0, kRingW4R2U4g4, kRingW4R2U4g4, kRingW4R2U4g4}},
    {.name = "middle rows, narrow: out-proj (K = 6144, N = 5120; 12-29 segments, N <= 8192)",
     .min_segments = 12,
     .max_n = 8192,
     .by_m = {kBatchR1U8b3, kRingW4R2U4g4, kRingW4R2U4g4, kBatchR2U4b2}},
    {.name = "middle rows, wide (no 27B shape; 12-29 segments, N > 8192)",
     .min_segments = 12,
     .max_n = 0,
     .by_m = {kBatchR1U8b3, kBatchR2U4b2, kBatchR2U4b2, kBatchR2U4b2}},
    {.name = "short rows: K = 5120 (gate/up, qkv+z, q+gate, lm_head; < 12 segments)",
     .min_segments = 0,
     .max_n = 0,
     .by_m = {kBatchR1U4b4, kBatchR2U4b2, kBatchR2U4b2, kBatchR2U4b2}},
};

// The fused gate+up, any shape: M = 1 engine 2 with whole rows (82% of the ceiling per pair, as fast as two
// plain launches while it also does the SwiGLU and the quantisation that would be a third kernel); engine
// 1's fused form walks 544 32-row tiles unevenly (71%). M >= 2 was only measured inside the token graph.
constexpr TileTuning kGateUpByM[4] = {kStreamC8R1WholeS2g2t1, kBatchR1U4b3, kBatchR1U4b3, kBatchR1U4b3};

// M outside [1, 4] never reaches a launch (gemv_q8 and gemv_q8_gateup check it first).
constexpr int m_index(int m) {
  return std::clamp(m, 1, 4) - 1;
}

}  // namespace

const GemvVariantEntry* gemv_variant_entry(GemvVariant v) {
  const int i = static_cast<int>(v);
  return i >= 0 && i < kGemvVariantCount ? &kVariants[i] : nullptr;
}

TileTuning tile_tuning_for(int m, int k, int n, int sm_count) {
  (void)sm_count;
  const int nseg = segments(k);
  for (const ShapeClass& c : kShapeClasses)
    if (nseg >= c.min_segments && (c.max_n == 0 || n <= c.max_n)) return c.by_m[m_index(m)];
  return kShapeClasses[std::size(kShapeClasses) - 1].by_m[m_index(m)];  // unreachable: the last row takes all
}

TileTuning gateup_tuning_for(int m, int k, int n, int sm_count) {
  (void)k;
  (void)n;
  (void)sm_count;
  return kGateUpByM[m_index(m)];
}

TileTuning engine_defaults(int engine, int m, int k, bool gateup) {
  if (engine == 1) {  // the winners of the 2026-12-02 sweeps, as in the tables above
    if (gateup) return kBatchR1U4b3;
    if (m != 1) return kBatchR2U4b2;
    const int nseg = segments(k);
    return nseg >= 30 ? kBatchR1U8b0 : (nseg >= 12 ? kBatchR1U8b3 : kBatchR1U4b4);
  }
  if (engine == 2)  // its best of run 2: whole rows per stage, 2 stages (the ring fits 2 on the SM)
    return TileTuning{.rows_per_warp = (m == 1 || gateup) ? 1 : 2,
                      .engine = 2,
                      .warps = 8,
                      .chunk = 64,
                      .stages = 2,
                      .grid_per_sm = m == 1 ? 2 : 1,
                      .trigger = m == 1 ? 1 : 2};
  // engine 3, its best of run 2
  return TileTuning{.rows_per_warp = gateup ? 1 : 2,
                    .unroll = gateup ? 8 : 4,
                    .engine = engine,
                    .warps = gateup ? 16 : (m == 1 ? 8 : 4),
                    .grid_per_sm = gateup ? 1 : 4,
                    .trigger = 2};
}

std::string resolve_tile_tuning(TileTuning& t, int m, int k, int n, int sms, bool gateup, int cc_major) {
  const TileTuning d = gateup ? gateup_tuning_for(m, k, n, sms) : tile_tuning_for(m, k, n, sms);
  if (t.engine == 0) t.engine = (t.unroll != 0 || t.blocks_per_sm >= 0) ? 1 : d.engine;
  if (t.engine < 1 || t.engine > 3)
    return "gemv tile: engine must be 0 (auto), 1, 2 or 3, got " + std::to_string(t.engine);
  if (t.engine == 2 && cc_major < 9) {  // bulk copies are sm_90: the ring does the same job elsewhere
    t.engine = 3;
    if (t.rows_per_warp == 4) t.rows_per_warp = 2;
    t.unroll = 0;
  }
  const TileTuning e = t.engine == d.engine ? d : engine_defaults(t.engine, m, k, gateup);
  if (t.rows_per_warp == 0) t.rows_per_warp = e.rows_per_warp;
  if (t.unroll == 0) t.unroll = (t.engine != 2 && t.rows_per_warp == 2) ? 4 : e.unroll;
  if (t.blocks_per_sm < 0) t.blocks_per_sm = e.blocks_per_sm;
  if (t.warps == 0) t.warps = e.warps;
  if (t.chunk == 0) t.chunk = e.chunk;
  if (t.stages == 0) t.stages = e.stages;
  if (t.grid_per_sm == 0) t.grid_per_sm = e.grid_per_sm;
  if (t.trigger == 0) t.trigger = e.trigger;
  if (t.engine != 1) return {};  // engines 2 and 3 check their own fields
  const bool ok = (t.rows_per_warp == 1 && (t.unroll == 4 || t.unroll == 8)) ||
                  (!gateup && t.rows_per_warp == 2 && t.unroll == 4);
  if (!ok)
    return std::string("gemv tile: unsupported schedule rows_per_warp=") + std::to_string(t.rows_per_warp) +
           " unroll=" + std::to_string(t.unroll) + (gateup ? " (gate+up needs rows_per_warp 1)" : "") +
           "; compiled: (1,4), (1,8), (2,4)";
  if (t.blocks_per_sm < 0 || t.blocks_per_sm > 8)
    return "gemv tile: blocks_per_sm must be in [0, 8], got " + std::to_string(t.blocks_per_sm);
  return {};
}

}  // namespace qc::gpu
