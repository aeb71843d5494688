// Number formats: f16/bf16 conversions against exact references, Q8_0 against ggml's rule.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/quant.h"

namespace qc {
namespace {

TEST(Quant, F16ExactValuesRoundTrip) {
  // Every finite f16 bit pattern converts to f32 and back unchanged (f16 -> f32 is exact).
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const uint16_t x = static_cast<uint16_t>(h);
    const bool nan = (x & 0x7c00u) == 0x7c00u && (x & 0x3ffu) != 0;
    if (nan) {
      EXPECT_TRUE(std::isnan(f16_to_f32(x)));
      continue;
    }
    EXPECT_EQ(f32_to_f16(f16_to_f32(x)), x) << "pattern " << h;
  }
}

TEST(Quant, F16KnownValuesAndRounding) {
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // halfway to the next step rounds up to inf
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);
  // 1 + 2^-11 is exactly halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);            // halfway to the smallest subnormal: even
  EXPECT_EQ(f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::nanf("")))));
}

TEST(Quant, F16RoundsToNearestOnRandomValues) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = u(rng) * std::ldexp(1.0f, -(i % 30));
    const float y = f16_to_f32(f32_to_f16(x));
    if (std::isinf(y)) {
      EXPECT_GE(std::fabs(x), 65520.0f);
      continue;
    }
    // Nearest: no f16 neighbour of y is closer to x.
    const uint16_t h = f32_to_f16(x);
    for (int d : {-1, 1}) {
      const uint16_t n = static_cast<uint16_t>(h + d);
      if ((n & 0x7c00u) == 0x7c00u) continue;
      EXPECT_LE(std::fabs(y - x), std::fabs(f16_to_f32(n) - x)) << x;
    }
  }
}

TEST(Quant, Bf16RoundTripAndRounding) {
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), f32_to_bf16(1.0f));  // tie to even
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
}

TEST(Quant, Q8RoundTripErrorBound) {
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0.0f, 2.0f);
  const int n = 32 * 64;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = g(rng);
  std::vector<uint8_t> q(dtype_bytes(DType::kQ8_0, n));
  quantize_q8_0(x.data(), q.data(), n);
  dequantize_q8_0(q.data(), y.data(), n);
  for (int b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    // Error per value: rounding to the int8 grid (d/2) plus the f16 rounding of the scale
    // (|q| <= 127 times d * 2^-11 relative): bound d/2 + 127 * d * 2^-11.
    const float d = amax / 127.0f;
    for (int i = 0; i < 32; ++i) {
      EXPECT_LE(std::fabs(x[b * 32 + i] - y[b * 32 + i]), d * 0.5f + 127.0f * d * std::ldexp(1.0f, -11) + 1e-7f);
    }
  }
}

TEST(Quant, Q8BlockLayoutMatchesGgml) {
  // One block: scale first (f16 of max/127), then round(x / d) with the f32 d, half away from zero.
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i - 16) * 0.25f;  // max |x| = 4
  std::vector<uint8_t> q(34);
  quantize_q8_0(x.data(), q.data(), 32);
  uint16_t dh = static_cast<uint16_t>(q[0] | (q[1] << 8));
  EXPECT_EQ(dh, f32_to_f16(4.0f / 127.0f));
  EXPECT_EQ(static_cast<int8_t>(q[2]), -127);  // -4 / (4/127)
  EXPECT_EQ(static_cast<int8_t>(q[2 + 16]), 0);
  EXPECT_EQ(static_cast<int8_t>(q[2 + 18]), static_cast<int8_t>(std::round(0.5f * 127.0f / 4.0f)));
  // All-zero block: scale 0, quants 0, decodes to zeros.
  std::vector<float> z(32, 0.0f), back(32, 1.0f);
  quantize_q8_0(z.data(), q.data(), 32);
  dequantize_q8_0(q.data(), back.data(), 32);
  for (float v : back) EXPECT_EQ(v, 0.0f);
}

TEST(Quant, TypeNamesParseInAnyCaseAndErrorsNameTheSetting) {
  for (const DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0}) {
    auto upper = dtype_from_name(dtype_name(t), "--type");
    ASSERT_TRUE(upper.ok());
    EXPECT_EQ(*upper, t);
  }
  auto lower = dtype_from_name("q8_0", "--type");
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(*lower, DType::kQ8_0);
  for (const char* bad : {"q4_0", "", "q8_", "f32 "}) {
    auto r = dtype_from_name(bad, "--outtype");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, std::string("--outtype: expected q8_0, f16, bf16 or f32, got \"") + bad + "\"");
  }
}

}  // namespace
}  // namespace qc
