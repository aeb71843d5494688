// The counter-based RNG: Philox-4x32-10 known answers, the uniform's range, resolution and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "generate/sampler.h"

namespace qc {
namespace {

// Known-answer vectors from Random123's tests/kat_vectors ("philox4x32 10" lines: counter, key, output).
TEST(SamplerRng, Philox4x32_10KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(SamplerRng, CounterUniformIsTheDocumentedFunctionOfPhilox) {
  const uint64_t seed = 0x0123456789abcdefull, counter = 0xfedcba9876543210ull;
  const auto out = philox4x32_10({0x76543210u, 0xfedcba98u, 0u, 0u}, {0x89abcdefu, 0x01234567u});
  EXPECT_EQ(counter_uniform(seed, counter), static_cast<float>(out[0] >> 8) / 16777216.0f);
  // Zero counter and key: output word 0x6627e8d5 >> 8 = 0x6627e8.
  EXPECT_EQ(counter_uniform(0, 0), static_cast<float>(0x6627e8) / 16777216.0f);
}

TEST(SamplerRng, CounterUniformRangeResolutionAndDeterminism) {
  constexpr int kN = 200000;
  double sum = 0.0;
  std::set<float> distinct;
  for (int i = 0; i < kN; ++i) {
    const float u = counter_uniform(42, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    const float scaled = u * 16777216.0f;  // exactly an integer: 24 bits, exact in a float
    ASSERT_EQ(scaled, std::floor(scaled));
    ASSERT_EQ(u, counter_uniform(42, static_cast<uint64_t>(i)));  // stateless
    sum += u;
    if (i < 1000) distinct.insert(u);
  }
  // Mean of kN uniforms has sigma = sqrt(1/12/kN) = 6.45e-4; 6 sigma = 3.9e-3 (two-sided tail 2e-9).
  EXPECT_NEAR(sum / kN, 0.5, 3.9e-3);
  // 1000 draws from 2^24 values: the chance of any collision is ~ 1000^2 / 2 / 2^24 = 3%, so allow a few.
  EXPECT_GE(distinct.size(), 995u);
  // Seeds and high counter bits matter.
  EXPECT_NE(counter_uniform(1, 0), counter_uniform(2, 0));
  EXPECT_NE(counter_uniform(1ull << 32, 0), counter_uniform(0, 0));
  EXPECT_NE(counter_uniform(0, 1ull << 32), counter_uniform(0, 0));
}

}  // namespace
}  // namespace qc
