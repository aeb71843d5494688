// The Q8_0 GEMV family's table (kernels/gemv_q8/variants.h), without a GPU: #11 moved the launch decisions
// out of gemv_q8.cpp's switch and gemv_q8_tile.cu's engine tables into one table, promising the same choice
// for every (variant, M, K, N, SM count). Two checks hold it to that:
//  - PinnedShapes: the 27B and small-model shapes, M = 1..4, on sm_90 and below, against the schedules the
//    old code chose (printed by it before the change, abdcde3);
//  - SameAsBefore*: the old functions, frozen below verbatim, against the table over every K (multiple of
//    32) up to 20480, many N, every request KernelConfig can make and the engine picks of the sweeps.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gemv_q8/variants.h"

namespace qc::gpu {
namespace {

std::string label(const TileTuning& t) {
  return "e" + std::to_string(t.engine) + " R" + std::to_string(t.rows_per_warp) + " U" +
         std::to_string(t.unroll) + " b" + std::to_string(t.blocks_per_sm) + " W" + std::to_string(t.warps) +
         " c" + std::to_string(t.chunk) + " S" + std::to_string(t.stages) + " g" +
         std::to_string(t.grid_per_sm) + " G" + std::to_string(t.grid) + " t" + std::to_string(t.trigger);
}

bool same(const TileTuning& a, const TileTuning& b) {
  return a.rows_per_warp == b.rows_per_warp && a.unroll == b.unroll && a.blocks_per_sm == b.blocks_per_sm &&
         a.engine == b.engine && a.warps == b.warps && a.chunk == b.chunk && a.stages == b.stages &&
         a.grid_per_sm == b.grid_per_sm && a.grid == b.grid && a.trigger == b.trigger;
}

// ---- the launch decisions before #11 (kernels/gemv_q8_tile.cu at abdcde3), frozen; errors as strings ----
namespace before {

constexpr int kSegBytes = 512;
TileTuning tile_tuning_for(int m, int k, int n, int sm_count);
TileTuning gateup_tuning_for(int m, int k, int n, int sm_count);

TileTuning engine_defaults(int engine, int m, int k, bool gateup) {
  const int nseg = (k + kSegBytes - 1) / kSegBytes;
  TileTuning t;
  t.engine = engine;
  if (engine == 1) {
    if (gateup) {
      t.rows_per_warp = 1;
      t.unroll = 4;
      t.blocks_per_sm = 3;
    } else if (m == 1) {
      t.rows_per_warp = 1;
      t.unroll = nseg >= 12 ? 8 : 4;
      t.blocks_per_sm = nseg >= 30 ? 0 : (nseg >= 12 ? 3 : 4);
    } else {
      t.rows_per_warp = 2;
      t.unroll = 4;
      t.blocks_per_sm = 2;
    }
  } else if (engine == 2) {
    t.warps = 8;
    t.rows_per_warp = (m == 1 || gateup) ? 1 : 2;
    t.chunk = 64;
    t.stages = 2;
    t.grid_per_sm = m == 1 ? 2 : 1;
    t.trigger = m == 1 ? 1 : 2;
  } else {
    t.warps = gateup ? 16 : (m == 1 ? 8 : 4);
    t.rows_per_warp = gateup ? 1 : 2;
    t.unroll = gateup ? 8 : 4;
    t.grid_per_sm = gateup ? 1 : 4;
    t.trigger = 2;
  }
  return t;
}

std::string resolve(TileTuning& t, int m, int k, int n, int sms, bool gateup, int cc_major) {
  const TileTuning d = gateup ? gateup_tuning_for(m, k, n, sms) : tile_tuning_for(m, k, n, sms);
  if (t.engine == 0) t.engine = (t.unroll != 0 || t.blocks_per_sm >= 0) ? 1 : d.engine;
  if (!(t.engine >= 1 && t.engine <= 3))
    return "gemv tile: engine must be 0 (auto), 1, 2 or 3, got " + std::to_string(t.engine);
  if (t.engine == 2 && cc_major < 9) {
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
  if (t.engine != 1) return "";
  const bool ok = (t.rows_per_warp == 1 && (t.unroll == 4 || t.unroll == 8)) ||
                  (!gateup && t.rows_per_warp == 2 && t.unroll == 4);
  if (!ok)
    return std::string("gemv tile: unsupported schedule rows_per_warp=") + std::to_string(t.rows_per_warp) +
           " unroll=" + std::to_string(t.unroll) + (gateup ? " (gate+up needs rows_per_warp 1)" : "") +
           "; compiled: (1,4), (1,8), (2,4)";
  if (!(t.blocks_per_sm >= 0 && t.blocks_per_sm <= 8))
    return "gemv tile: blocks_per_sm must be in [0, 8], got " + std::to_string(t.blocks_per_sm);
  return "";
}

TileTuning tile_tuning_for(int m, int k, int n, int sm_count) {
  (void)sm_count;
  const int nseg = (k + kSegBytes - 1) / kSegBytes;
  TileTuning e3 = engine_defaults(3, 2, k, false);
  e3.warps = 4;
  e3.grid_per_sm = 4;
  if (nseg >= 30) return m == 1 ? engine_defaults(1, 1, k, false) : e3;
  if (nseg >= 12 && n <= 8192) {
    if (m == 1 || m == 4) return engine_defaults(1, m, k, false);
    return e3;
  }
  return engine_defaults(1, m, k, false);
}

TileTuning gateup_tuning_for(int m, int k, int n, int sm_count) {
  (void)n;
  (void)sm_count;
  return engine_defaults(m == 1 ? 2 : 1, m, k, true);
}

}  // namespace before

// What the tile entry launches for a request: the schedule, or the error.
std::string decide(const TileTuning& request, int m, int k, int n, int sms, bool gateup, int cc_major) {
  TileTuning t = request;
  const std::string bad = resolve_tile_tuning(t, m, k, n, sms, gateup, cc_major);
  return bad.empty() ? label(t) : "error: " + bad;
}
std::string decide_before(const TileTuning& request, int m, int k, int n, int sms, bool gateup,
                          int cc_major) {
  TileTuning t = request;
  const std::string bad = before::resolve(t, m, k, n, sms, gateup, cc_major);
  return bad.empty() ? label(t) : "error: " + bad;
}

// Every request KernelConfig can make (tile_rows_per_warp, tile_unroll, tile_blocks_per_sm; the rest 0).
std::vector<TileTuning> config_requests() {
  std::vector<TileTuning> out;
  for (int r : {0, 1, 2})
    for (int u : {0, 4, 8})
      for (int b = -1; b <= 8; ++b) {
        TileTuning t;
        t.rows_per_warp = r;
        t.unroll = u;
        t.blocks_per_sm = b;
        out.push_back(t);
      }
  return out;
}

// Engine picks as the benchmark and the GPU tests make them: an engine with some fields left to the table.
std::vector<TileTuning> engine_requests() {
  std::vector<TileTuning> out;
  for (int e = 0; e <= 4; ++e)
    for (int r : {0, 1, 2, 4})
      for (int u : {0, 4, 8}) {
        TileTuning t;
        t.engine = e;
        t.rows_per_warp = r;
        t.unroll = u;
        out.push_back(t);
        t.warps = 4;
        t.grid_per_sm = 3;
        t.trigger = 1;
        out.push_back(t);
        t.chunk = 8;
        t.stages = 3;
        t.grid = 17;
        out.push_back(t);
      }
  return out;
}

TEST(GemvTable, EveryVariantHasOneKernel) {
  struct Row {
    GemvVariant v;
    GemvKernel kernel;
    bool hl;
    int rows_per_warp, unroll;
    bool split_over_k;
  };
  // gemv_q8.cpp's switch before #11: RowsShape{hl, rows_per_warp, unroll, split_k} per rows variant.
  const Row rows[] = {
      {GemvVariant::kH, GemvKernel::kRows, false, 1, 1, false},
      {GemvVariant::kHL, GemvKernel::kRows, true, 1, 1, false},
      {GemvVariant::kHU, GemvKernel::kRows, false, 1, 2, false},
      {GemvVariant::kHLU, GemvKernel::kRows, true, 1, 2, false},
      {GemvVariant::kHLU4, GemvKernel::kRows, true, 1, 4, false},
      {GemvVariant::kH2, GemvKernel::kRows, false, 2, 1, false},
      {GemvVariant::kHL2, GemvKernel::kRows, true, 2, 1, false},
      {GemvVariant::kSplitK, GemvKernel::kRows, true, 1, 1, true},
  };
  for (const Row& r : rows) {
    const GemvVariantEntry* e = gemv_variant_entry(r.v);
    ASSERT_NE(e, nullptr) << gemv_variant_name(r.v);
    EXPECT_EQ(e->variant, r.v);
    EXPECT_EQ(e->kernel, r.kernel) << gemv_variant_name(r.v);
    EXPECT_EQ(e->rows.hl, r.hl) << gemv_variant_name(r.v);
    EXPECT_EQ(e->rows.rows_per_warp, r.rows_per_warp) << gemv_variant_name(r.v);
    EXPECT_EQ(e->rows.unroll, r.unroll) << gemv_variant_name(r.v);
    EXPECT_EQ(e->rows.split_k, 1) << gemv_variant_name(r.v);
    EXPECT_EQ(e->split_over_k, r.split_over_k) << gemv_variant_name(r.v);
  }
  EXPECT_EQ(gemv_variant_entry(GemvVariant::kDeq)->kernel, GemvKernel::kDeq);
  EXPECT_EQ(gemv_variant_entry(GemvVariant::kTile)->kernel, GemvKernel::kTile);
  EXPECT_TRUE(gemv_variant_entry(GemvVariant::kTile)->hl);
  EXPECT_EQ(gemv_variant_entry(GemvVariant::kTileH)->kernel, GemvKernel::kTile);
  EXPECT_FALSE(gemv_variant_entry(GemvVariant::kTileH)->hl);
  EXPECT_EQ(gemv_variant_entry(GemvVariant::kMma)->kernel, GemvKernel::kMma);
  EXPECT_TRUE(gemv_variant_entry(GemvVariant::kMma)->hl);
  EXPECT_EQ(gemv_variant_entry(GemvVariant::kMmaH)->kernel, GemvKernel::kMma);
  EXPECT_FALSE(gemv_variant_entry(GemvVariant::kMmaH)->hl);
  for (int i = 0; i < kGemvVariantCount; ++i) {
    const auto v = static_cast<GemvVariant>(i);
    ASSERT_NE(gemv_variant_entry(v), nullptr) << i;
    // The kernel reads the activation format the norm kernels write for the variant.
    const GemvVariantEntry& e = *gemv_variant_entry(v);
    const ActFormat f = gemv_act_format(v);
    const ActFormat reads = e.kernel == GemvKernel::kDeq    ? ActFormat::kF32
                            : e.kernel == GemvKernel::kRows ? (e.rows.hl ? ActFormat::kHL : ActFormat::kH)
                                                            : (e.hl ? ActFormat::kHL : ActFormat::kH);
    EXPECT_EQ(f, reads) << gemv_variant_name(v);
  }
  EXPECT_EQ(gemv_variant_entry(static_cast<GemvVariant>(kGemvVariantCount)), nullptr);
}

// The default KernelConfig (tile fields 0, 0, -1) on the model shapes: what the old code launched, printed by
// it before the change (label(): engine, R rows per warp, U unroll, b blocks/SM, W warps, c chunk, S stages,
// g grid/SM, G grid, t trigger). Stacked sites as the backend launches them (device_model.h).
TEST(GemvTable, PinnedShapes) {
  struct Pin {
    const char* shape;
    int k, n, m;
    bool gateup;
    const char* sm90;
    const char* below_sm90;
  };
  const Pin pins[] = {
      {"27B ffn gate|up stacked", 5120, 34816, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate|up stacked", 5120, 34816, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate|up stacked", 5120, 34816, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate|up stacked", 5120, 34816, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate+up fused", 5120, 17408, 1, true, "e2 R1 U0 b-1 W8 c64 S2 g2 G0 t1",
       "e3 R1 U8 b-1 W16 c0 S0 g1 G0 t2"},
      {"27B ffn gate+up fused", 5120, 17408, 2, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate+up fused", 5120, 17408, 3, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"27B ffn gate+up fused", 5120, 17408, 4, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"27B ffn down", 17408, 5120, 1, false, "e1 R1 U8 b0 W0 c0 S0 g0 G0 t0",
       "e1 R1 U8 b0 W0 c0 S0 g0 G0 t0"},
      {"27B ffn down", 17408, 5120, 2, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B ffn down", 17408, 5120, 3, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B ffn down", 17408, 5120, 4, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B gdn qkv|z", 5120, 16384, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z", 5120, 16384, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z", 5120, 16384, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z", 5120, 16384, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z|beta|alpha", 5120, 16480, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z|beta|alpha", 5120, 16480, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z|beta|alpha", 5120, 16480, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B gdn qkv|z|beta|alpha", 5120, 16480, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B out-proj", 6144, 5120, 1, false, "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0"},
      {"27B out-proj", 6144, 5120, 2, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B out-proj", 6144, 5120, 3, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B out-proj", 6144, 5120, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B attn q+gate|k|v", 5120, 14336, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"27B attn q+gate|k|v", 5120, 14336, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B attn q+gate|k|v", 5120, 14336, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B attn q+gate|k|v", 5120, 14336, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B lm_head", 5120, 248320, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"27B lm_head", 5120, 248320, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B lm_head", 5120, 248320, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B lm_head", 5120, 248320, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"27B mtp eh_proj", 10240, 5120, 1, false, "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0"},
      {"27B mtp eh_proj", 10240, 5120, 2, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B mtp eh_proj", 10240, 5120, 3, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"27B mtp eh_proj", 10240, 5120, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate|up", 1024, 7168, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate|up", 1024, 7168, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate|up", 1024, 7168, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate|up", 1024, 7168, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate+up fused", 1024, 3584, 1, true, "e2 R1 U0 b-1 W8 c64 S2 g2 G0 t1",
       "e3 R1 U8 b-1 W16 c0 S0 g1 G0 t2"},
      {"0.8B ffn gate+up fused", 1024, 3584, 2, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate+up fused", 1024, 3584, 3, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn gate+up fused", 1024, 3584, 4, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn down", 3584, 1024, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn down", 3584, 1024, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn down", 3584, 1024, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B ffn down", 3584, 1024, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B out-proj", 2048, 1024, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"0.8B out-proj", 2048, 1024, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B out-proj", 2048, 1024, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"0.8B out-proj", 2048, 1024, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"9B ffn down", 12288, 4096, 1, false, "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U8 b3 W0 c0 S0 g0 G0 t0"},
      {"9B ffn down", 12288, 4096, 2, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"9B ffn down", 12288, 4096, 3, false, "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2",
       "e3 R2 U4 b-1 W4 c0 S0 g4 G0 t2"},
      {"9B ffn down", 12288, 4096, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0",
       "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"9B ffn gate+up fused", 4096, 12288, 1, true, "e2 R1 U0 b-1 W8 c64 S2 g2 G0 t1",
       "e3 R1 U8 b-1 W16 c0 S0 g1 G0 t2"},
      {"9B ffn gate+up fused", 4096, 12288, 2, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"9B ffn gate+up fused", 4096, 12288, 3, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"9B ffn gate+up fused", 4096, 12288, 4, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"test ffn down", 704, 256, 1, false, "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0", "e1 R1 U4 b4 W0 c0 S0 g0 G0 t0"},
      {"test ffn down", 704, 256, 2, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0", "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"test ffn down", 704, 256, 3, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0", "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"test ffn down", 704, 256, 4, false, "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0", "e1 R2 U4 b2 W0 c0 S0 g0 G0 t0"},
      {"test ffn gate+up fused", 256, 704, 1, true, "e2 R1 U0 b-1 W8 c64 S2 g2 G0 t1",
       "e3 R1 U8 b-1 W16 c0 S0 g1 G0 t2"},
      {"test ffn gate+up fused", 256, 704, 2, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"test ffn gate+up fused", 256, 704, 3, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
      {"test ffn gate+up fused", 256, 704, 4, true, "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0",
       "e1 R1 U4 b3 W0 c0 S0 g0 G0 t0"},
  };
  for (const Pin& p : pins) {
    for (int sms : {78, 132}) {
      EXPECT_EQ(decide(TileTuning{}, p.m, p.k, p.n, sms, p.gateup, 9), p.sm90) << p.shape << " M=" << p.m;
      EXPECT_EQ(decide(TileTuning{}, p.m, p.k, p.n, sms, p.gateup, 8), p.below_sm90)
          << p.shape << " M=" << p.m;
    }
  }
}

const std::vector<int> kWidths = {16,   48,   256,   704,   1000,  1024,  4096,  5120,  8192,
                                  8193, 8224, 12288, 14336, 16384, 16480, 17408, 34816, 248320};

TEST(GemvTable, SameAsBeforeForEveryShape) {
  for (int k = 32; k <= 20480; k += 32)
    for (int n : kWidths)
      for (int m = 1; m <= 4; ++m) {
        for (int sms : {66, 132}) {
          ASSERT_TRUE(same(tile_tuning_for(m, k, n, sms), before::tile_tuning_for(m, k, n, sms)))
              << label(tile_tuning_for(m, k, n, sms)) << " k=" << k << " n=" << n << " m=" << m;
          ASSERT_TRUE(same(gateup_tuning_for(m, k, n, sms), before::gateup_tuning_for(m, k, n, sms)))
              << label(gateup_tuning_for(m, k, n, sms)) << " k=" << k << " n=" << n << " m=" << m;
        }
        for (int e = 1; e <= 3; ++e)
          for (bool gateup : {false, true})
            ASSERT_EQ(label(engine_defaults(e, m, k, gateup)),
                      label(before::engine_defaults(e, m, k, gateup)))
                << "engine " << e << " k=" << k << " m=" << m << " gate+up " << gateup;
        for (bool gateup : {false, true})
          for (int cc : {8, 9})
            ASSERT_EQ(decide(TileTuning{}, m, k, n, 132, gateup, cc),
                      decide_before(TileTuning{}, m, k, n, 132, gateup, cc))
                << "k=" << k << " n=" << n << " m=" << m << " gate+up " << gateup << " cc " << cc;
      }
}

TEST(GemvTable, SameAsBeforeForEveryRequest) {
  std::vector<TileTuning> requests = config_requests();
  for (const TileTuning& t : engine_requests()) requests.push_back(t);
  // K around every class boundary (12 and 30 segments) and the model shapes.
  const int ks[] = {256, 704, 1024, 2048, 3584, 5120, 5632, 5664, 6144, 10240, 12288, 14848, 14880, 17408};
  const int ns[] = {48, 5120, 8192, 8193, 17408, 248320};  // N matters at 8192 only (the out-proj class)
  int errors = 0;
  for (const TileTuning& request : requests)
    for (int k : ks)
      for (int n : ns)
        for (int m = 1; m <= 4; ++m)
          for (bool gateup : {false, true})
            for (int cc : {8, 9}) {
              const std::string now = decide(request, m, k, n, 132, gateup, cc);
              ASSERT_EQ(now, decide_before(request, m, k, n, 132, gateup, cc))
                  << "request " << label(request) << " k=" << k << " n=" << n << " m=" << m << " gate+up "
                  << gateup << " cc " << cc;
              errors += now.rfind("error", 0) == 0 ? 1 : 0;
            }
  EXPECT_GT(errors, 0);  // the error paths were compared too
}

}  // namespace
}  // namespace qc::gpu
