// Draws: fixed seed -> fixed sequence, the empirical distribution against the softmax, and the
// speculative acceptance rule (draft as a point mass) keeping the distribution unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "generate/sampler.h"

namespace qc {
namespace {

// Chi-square bound for 5 categories (4 degrees of freedom). For even k the survival function is exact:
//   Q(x; 4) = exp(-x/2) * (1 + x/2),  so Q(33.4) = exp(-16.7) * 17.7 = 9.9e-7.
// A correct sampler exceeds 33.4 for fewer than one seed in a million; the seeds below are fixed, so the
// test is deterministic. 200000 draws detect a 2% relative error on the largest bucket (p = 0.44):
// (0.02 * 0.44 * 2e5)^2 / (0.44 * 2e5) = 35 > 33.4.
constexpr double kChi2Bound4Dof = 33.4;
constexpr int kDraws = 200000;

std::vector<double> softmax(const std::vector<float>& x) {
  std::vector<double> p(x.size());
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) sum += p[i] = std::exp(static_cast<double>(x[i]));
  for (double& v : p) v /= sum;
  return p;
}

double chi_square(const std::vector<int64_t>& counts, const std::vector<double>& p, int n) {
  double chi2 = 0.0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * n;
    chi2 += (static_cast<double>(counts[i]) - e) * (static_cast<double>(counts[i]) - e) / e;
  }
  return chi2;
}

SamplerParams unfiltered(uint64_t seed) {
  SamplerParams p = SamplerParams::greedy();
  p.temperature = 1.0f;
  p.seed = seed;
  return p;
}

TEST(SamplerDraws, FixedSeedGivesFixedSequence) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1000);
  for (float& v : x) v = normal(rng);
  SamplerParams p;  // defaults: temperature 0.7, top_k 20, top_p 0.8
  p.top_k = 0;
  p.top_p = 0.95f;
  p.presence_penalty = 0.5f;
  p.seed = 99;
  Sampler a(p, 1000), b(p, 1000);
  std::vector<int32_t> seq_a, seq_b;
  for (int i = 0; i < 300; ++i) {
    seq_a.push_back(a.sample(x));
    a.accept(seq_a.back());
    seq_b.push_back(b.sample(x));
    b.accept(seq_b.back());
  }
  EXPECT_EQ(seq_a, seq_b);
  EXPECT_EQ(a.draws(), 300u);
  // A reset sampler replays the same sequence; another seed gives another one.
  a.reset();
  std::vector<int32_t> again;
  for (int i = 0; i < 300; ++i) {
    again.push_back(a.sample(x));
    a.accept(again.back());
  }
  EXPECT_EQ(again, seq_a);
  p.seed = 100;
  Sampler c(p, 1000);
  std::vector<int32_t> seq_c;
  for (int i = 0; i < 300; ++i) {
    seq_c.push_back(c.sample(x));
    c.accept(seq_c.back());
  }
  EXPECT_NE(seq_c, seq_a);
}

TEST(SamplerDraws, DistributionUsesNoDraw) {
  Sampler s(unfiltered(5), 3);
  const std::vector<float> x = {0.1f, 0.2f, 0.3f};
  (void)s.distribution(x);
  EXPECT_EQ(s.draws(), 0u);
  (void)s.sample(x);
  EXPECT_EQ(s.draws(), 1u);
}

TEST(SamplerDraws, EmpiricalDistributionMatchesSoftmax) {
  const std::vector<float> x = {1.0f, 0.5f, 0.0f, -0.5f, -1.5f};  // p = 0.44 .. 0.036
  Sampler s(unfiltered(2024), 5);
  std::vector<int64_t> counts(5, 0);
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(s.sample(x))];
  const double chi2 = chi_square(counts, softmax(x), kDraws);
  EXPECT_LT(chi2, kChi2Bound4Dof) << "counts " << counts[0] << " " << counts[1] << " " << counts[2] << " "
                                  << counts[3] << " " << counts[4];
}

TEST(SamplerDraws, SpeculativeRuleKeepsTheDistribution) {
  const std::vector<float> x = {1.0f, 0.5f, 0.0f, -0.5f, -1.5f};
  const std::vector<double> p = softmax(x);
  const int32_t draft = 1;  // p(draft) = 0.27
  Sampler s(unfiltered(77), 5);
  std::vector<int64_t> counts(5, 0);
  int64_t accepted = 0;
  for (int i = 0; i < kDraws; ++i) {
    const DraftVerdict v = s.verify_draft(x, draft);
    ++counts[static_cast<size_t>(v.token)];
    if (v.accepted) {
      ++accepted;
      ASSERT_EQ(v.token, draft);
    } else {
      ASSERT_NE(v.token, draft);  // the residual has the draft removed
    }
  }
  EXPECT_LT(chi_square(counts, p, kDraws), kChi2Bound4Dof);
  // Acceptances ~ Binomial(n, p(draft)): within 5.5 sigma (two-sided tail 4e-8).
  const double sd = std::sqrt(kDraws * p[1] * (1.0 - p[1]));
  EXPECT_NEAR(static_cast<double>(accepted), kDraws * p[1], 5.5 * sd);
  // One draw per test, one more per rejection.
  EXPECT_EQ(s.draws(), static_cast<uint64_t>(kDraws + (kDraws - accepted)));
}

TEST(SamplerDraws, SpeculativeRuleEdgeCases) {
  SamplerParams p = unfiltered(3);
  p.top_k = 2;
  Sampler s(p, 4);
  const std::vector<float> x = {2.0f, 1.0f, 0.0f, -1.0f};
  for (int i = 0; i < 100; ++i) {  // a draft outside the kept set is always rejected
    const DraftVerdict v = s.verify_draft(x, 3);
    EXPECT_FALSE(v.accepted);
    EXPECT_TRUE(v.token == 0 || v.token == 1);
  }
  p.top_k = 1;
  ASSERT_TRUE(s.set_params(p).ok());
  for (int i = 0; i < 100; ++i) {  // p(draft) = 1: always accepted
    const DraftVerdict v = s.verify_draft(x, 0);
    EXPECT_TRUE(v.accepted);
    EXPECT_EQ(v.token, 0);
  }
  Sampler g(SamplerParams::greedy(), 4);  // greedy: accepted iff the argmax, no draw
  EXPECT_TRUE(g.verify_draft(x, 0).accepted);
  const DraftVerdict r = g.verify_draft(x, 2);
  EXPECT_FALSE(r.accepted);
  EXPECT_EQ(r.token, 0);
  EXPECT_EQ(g.draws(), 0u);
}

}  // namespace
}  // namespace qc
