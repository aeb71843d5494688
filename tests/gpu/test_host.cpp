// Host-only parts of the kernel layer (no device needed): the GGUF Q8_0 repack, KernelConfig names and
// range checks, the sampler's counter-based RNG.
#include <cstring>
#include <random>

#include "cpu_ref.h"
#include "gemv_block.h"
#include "gpu_test_util.h"
#include "layout.h"
#include "qwenchat/kernel_config.h"
#include "sample_rng.h"

namespace qc::gpu::test {
namespace {

TEST(HostRepack, GgufQ8ToSplitLayout) {
  std::mt19937 rng(50);
  for (int cols : {32, 96, 5120}) {
    const int rows = 7, blocks = cols / 32;
    std::vector<uint8_t> gguf(static_cast<size_t>(rows) * blocks * 34);
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : gguf) b = static_cast<uint8_t>(byte(rng));
    const int stride = q8_row_stride(cols);
    std::vector<int8_t> q(q8_split_q_bytes(rows, cols), 42);
    std::vector<uint16_t> d(q8_split_d_count(rows, cols));
    const GpuStatus st = repack_q8_0(gguf.data(), rows, cols, q.data(), d.data());
    ASSERT_TRUE(st.ok()) << st.describe();
    for (int r = 0; r < rows; ++r)
      for (int b = 0; b < blocks; ++b) {
        const uint8_t* blk = gguf.data() + (static_cast<size_t>(r) * blocks + b) * 34;
        uint16_t scale;
        std::memcpy(&scale, blk, 2);
        ASSERT_EQ(d[static_cast<size_t>(r) * blocks + b], scale);
        for (int j = 0; j < 32; ++j)
          ASSERT_EQ(q[static_cast<size_t>(r) * stride + b * 32 + j], static_cast<int8_t>(blk[2 + j]));
      }
  }
  int8_t q[64];
  uint16_t d[2];
  uint8_t g[68] = {};
  const GpuStatus bad = repack_q8_0(g, 1, 48, q, d);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.describe().find("multiple of 32, got 48"), std::string::npos) << bad.describe();
}

TEST(HostKernelConfig, NamesRoundTripAndClasses) {
  for (int i = 0; i < kGemvVariantCount; ++i) {
    const auto v = static_cast<GemvVariant>(i);
    const auto back = parse_gemv_variant(gemv_variant_name(v));
    ASSERT_TRUE(back.has_value()) << gemv_variant_name(v);
    EXPECT_EQ(*back, v);
  }
  EXPECT_FALSE(parse_gemv_variant("h3").has_value());
  EXPECT_TRUE(gemv_bit_identical(GemvVariant::kH, GemvVariant::kTileH));
  EXPECT_TRUE(gemv_bit_identical(GemvVariant::kHL, GemvVariant::kTile));
  EXPECT_TRUE(gemv_bit_identical(GemvVariant::kHLU4, GemvVariant::kHL2));
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kH, GemvVariant::kHL));
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kHL, GemvVariant::kSplitK));
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kDeq, GemvVariant::kSplitK));
  EXPECT_EQ(gemv_act_format(GemvVariant::kTile), ActFormat::kHL);
  EXPECT_EQ(gemv_act_format(GemvVariant::kHU), ActFormat::kH);
  EXPECT_EQ(gemv_act_format(GemvVariant::kDeq), ActFormat::kF32);
  EXPECT_EQ(gemv_act_format(GemvVariant::kMma), ActFormat::kHL);
  EXPECT_EQ(gemv_act_format(GemvVariant::kMmaH), ActFormat::kH);
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kMma, GemvVariant::kTile));
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kMmaH, GemvVariant::kTileH));
  EXPECT_FALSE(gemv_bit_identical(GemvVariant::kMma, GemvVariant::kMmaH));
  EXPECT_NE(gemv_variant_list().find("tile_h"), std::string::npos);
  for (int i = 0; i < kBlockEngineCount; ++i) {
    const auto e = static_cast<BlockEngine>(i);
    EXPECT_EQ(parse_block_engine(block_engine_name(e)), e);
  }
  EXPECT_EQ(parse_block_engine("segment"), std::nullopt);
  EXPECT_EQ(block_engine_list(), "auto, registers, stream, segments");
}

// The block GEMV's engine per matrix (gemv_block.h block_engine_for): auto takes the segment engine only for
// Q4_K / Q5_K in hl with N >= 2K (the 27B's gate/up, qkv+z, q+gate), an asked-for engine where it takes the
// matrix, the registers for everything else.
TEST(HostKernelConfig, BlockEngineForEachMatrix) {
  using E = BlockEngine;
  const BlockWeights gate_up{nullptr, BlockType::kQ4_K, 17408, 5120},
      down{nullptr, BlockType::kQ4_K, 5120, 17408};
  const BlockWeights edge{nullptr, BlockType::kQ5_K, 2 * 5120, 5120},
      below{nullptr, BlockType::kQ5_K, 2 * 5120 - 1, 5120};
  const BlockWeights q6{nullptr, BlockType::kQ6_K, 17408, 5120}, q4_0{nullptr, BlockType::kQ4_0, 17408, 5120};
  EXPECT_EQ(block_engine_for(E::kAuto, gate_up, ActFormat::kHL), E::kSegments);
  EXPECT_EQ(block_engine_for(E::kAuto, edge, ActFormat::kHL), E::kSegments);
  EXPECT_EQ(block_engine_for(E::kAuto, below, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kAuto, down, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kAuto, gate_up, ActFormat::kH), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kAuto, gate_up, ActFormat::kF32), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kAuto, q6, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kAuto, q4_0, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kRegisters, gate_up, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kSegments, down, ActFormat::kH), E::kSegments);
  EXPECT_EQ(block_engine_for(E::kSegments, q6, ActFormat::kHL), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kSegments, gate_up, ActFormat::kF32), E::kRegisters);
  EXPECT_EQ(block_engine_for(E::kStream, q6, ActFormat::kH), E::kStream);
  EXPECT_EQ(block_engine_for(E::kStream, q6, ActFormat::kF32), E::kRegisters);
}

TEST(HostKernelConfig, Validate) {
  KernelConfig c;
  EXPECT_EQ(c.validate(), "");
  c.split_k = 1;
  EXPECT_EQ(c.validate(), "split_k must be in [2, 16], got 1");
  c = KernelConfig{};
  c.tile_blocks_per_sm = 9;
  EXPECT_EQ(c.validate(), "tile_blocks_per_sm must be in [-1, 8], got 9");
  c = KernelConfig{};
  c.block_engine = static_cast<BlockEngine>(7);
  EXPECT_EQ(c.validate(), "block_engine must be a known engine, got 7");
  c = KernelConfig{};
  c.tile_unroll = 6;
  EXPECT_NE(c.validate().find("tile_unroll"), std::string::npos);
  c = KernelConfig{};
  c.tile_rows_per_warp = 2;
  c.tile_unroll = 8;
  EXPECT_NE(c.validate().find("tile_unroll"), std::string::npos);
}

// SplitMix64 reference values (Vigna's splitmix64.c seeded with 0: 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4,
// 0x06C45D188009454F).
TEST(HostRng, SplitMix64Reference) {
  EXPECT_EQ(splitmix64_at(0, 0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitmix64_at(0, 1), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(splitmix64_at(0, 2), 0x06C45D188009454Full);
  EXPECT_EQ(counter_uniform24(0, 0), static_cast<float>(0xE220A8397B1DCDAFull >> 40) / 16777216.0f);
  // Range and rough uniformity over 100000 draws: mean 1/2 within 5 standard errors (0.289/sqrt(n)).
  double sum = 0.0;
  for (uint64_t c = 0; c < 100000; ++c) {
    const float u = counter_uniform24(12345, c);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 5 * 0.2887 / std::sqrt(100000.0));
}

// The CPU quantiser mirror itself: reconstruction error within the format's bound (layout.h).
TEST(HostQuantMirror, ErrorBounds) {
  std::mt19937 rng(52);
  const int n = 4096;
  const std::vector<float> x = random_normal(rng, n, 2.0f);
  std::vector<int8_t> hi(n), lo(n);
  std::vector<float> s(n / 32);
  quantize_ref(x.data(), n, hi.data(), lo.data(), s.data());
  for (int i = 0; i < n; ++i) {
    const double sc = s[i / 32];
    ASSERT_LE(std::fabs(x[i] - sc * hi[i]), sc * (0.5 + 1e-5)) << i;
    ASSERT_LE(std::fabs(x[i] - sc * (hi[i] + lo[i] * static_cast<double>(kInv127f))), sc * (1.0 / 254 + 1e-5))
        << i;
    ASSERT_LE(std::abs(lo[i]), 64);
  }
}

}  // namespace
}  // namespace qc::gpu::test
