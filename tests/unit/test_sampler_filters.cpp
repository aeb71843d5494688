// Each stage of the sampler pipeline on crafted inputs, the NaN/inf rules, validate(), and the whole
// pipeline against a naive full-sort implementation on random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "generate/sampler.h"

namespace qc {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

SamplerParams plain(float temperature = 1.0f) {  // no filter, no penalty
  SamplerParams p = SamplerParams::greedy();
  p.temperature = temperature;
  return p;
}

std::vector<float> logs(std::vector<double> probs) {
  std::vector<float> x;
  for (const double p : probs) x.push_back(static_cast<float>(std::log(p)));
  return x;
}

std::vector<int> kept(std::span<const float> dist) {
  std::vector<int> ids;
  for (size_t i = 0; i < dist.size(); ++i)
    if (dist[i] > 0.0f) ids.push_back(static_cast<int>(i));
  return ids;
}

TEST(SamplerFilters, GreedyTiesGoToTheLowestId) {
  Sampler s(SamplerParams::greedy(), 4);
  const std::vector<float> x = {1.0f, 3.0f, 3.0f, 2.0f};
  EXPECT_EQ(s.sample(x), 1);
  EXPECT_EQ(s.draws(), 0u);  // greedy uses no draw
  const auto d = s.distribution(x);
  EXPECT_EQ(kept(d), std::vector<int>({1}));
  EXPECT_EQ(d[1], 1.0f);
}

TEST(SamplerFilters, NaNIsMinusInfinityAndAllUnusableGivesTokenZero) {
  Sampler g(SamplerParams::greedy(), 3);
  EXPECT_EQ(g.sample(std::vector<float>{kNaN, 1.0f, 2.0f}), 2);
  EXPECT_FALSE(g.last_degenerate());
  EXPECT_EQ(g.sample(std::vector<float>{kNaN, kNaN, kNaN}), 0);
  EXPECT_TRUE(g.last_degenerate());
  EXPECT_EQ(g.sample(std::vector<float>{-kInf, kNaN, -kInf}), 0);
  EXPECT_TRUE(g.last_degenerate());

  Sampler s(plain(), 3);
  const uint64_t before = s.draws();
  EXPECT_EQ(s.sample(std::vector<float>{kNaN, kNaN, kNaN}), 0);
  EXPECT_TRUE(s.last_degenerate());
  EXPECT_EQ(s.draws(), before + 1);  // one draw per non-greedy sample, whatever the input
  EXPECT_EQ(s.sample(std::vector<float>{kNaN, 0.5f, kNaN}), 1);
  EXPECT_FALSE(s.last_degenerate());
  // A short row: the missing entries count as -inf.
  EXPECT_EQ(s.sample(std::vector<float>{-kInf, -kInf}), 0);
  EXPECT_TRUE(s.last_degenerate());
}

TEST(SamplerFilters, PlusInfinityTokensShareTheMass) {
  Sampler s(plain(), 4);
  const auto d = s.distribution(std::vector<float>{0.0f, kInf, 1.0f, kInf});
  EXPECT_EQ(kept(d), std::vector<int>({1, 3}));
  EXPECT_EQ(d[1], 0.5f);
  EXPECT_EQ(d[3], 0.5f);
}

TEST(SamplerFilters, OverflowToMinusInfinityFallsBackToGreedyOnRawLogits) {
  // x / T = -inf for both finite logits: no candidate survives step 3, so greedy on the raw row.
  Sampler s(plain(1e-3f), 2);
  EXPECT_EQ(s.sample(std::vector<float>{-2e38f, -1e38f}), 1);
  EXPECT_FALSE(s.last_degenerate());
}

TEST(SamplerFilters, TopKKeepsTheKBestWithTiesToLowerIds) {
  SamplerParams p = plain();
  p.top_k = 3;
  Sampler s(p, 6);
  EXPECT_EQ(kept(s.distribution(std::vector<float>{0.1f, 2.0f, 0.5f, 1.0f, 0.5f, -1.0f})),
            std::vector<int>({1, 2, 3}));  // 0.5 tie between ids 2 and 4: id 2 kept
  // The softmax is over the kept set only.
  const auto d = s.distribution(std::vector<float>{0.0f, 0.0f, 0.0f, -5.0f, -5.0f, -5.0f});
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(d[static_cast<size_t>(i)], 1.0f / 3.0f);
  p.top_k = 10;  // larger than the vocabulary: no filter
  ASSERT_TRUE(s.set_params(p).ok());
  EXPECT_EQ(kept(s.distribution(std::vector<float>{0.1f, 2.0f, 0.5f, 1.0f, 0.5f, -1.0f})).size(), 6u);
}

TEST(SamplerFilters, TopPKeepsTheSmallestSetReachingTheMass) {
  const auto x = logs({0.5, 0.3, 0.15, 0.05});
  // Cumulative masses 0.5, 0.8, 0.95, 1.0; thresholds chosen away from them (float log/exp round trip
  // moves each probability by ~1e-7 relative).
  const std::vector<std::pair<float, std::vector<int>>> cases = {
      {0.49f, {0}}, {0.51f, {0, 1}}, {0.79f, {0, 1}}, {0.81f, {0, 1, 2}}, {0.96f, {0, 1, 2, 3}}};
  for (const auto& [top_p, want] : cases) {
    SamplerParams p = plain();
    p.top_p = top_p;
    Sampler s(p, 4);
    const auto d = s.distribution(x);
    EXPECT_EQ(kept(d), want) << "top_p " << top_p;
    if (want.size() == 2) {  // renormalised: 0.5/0.8, 0.3/0.8 (tolerance: float rounding, 1e-6 relative)
      EXPECT_NEAR(d[0], 0.625, 1e-6);
      EXPECT_NEAR(d[1], 0.375, 1e-6);
    }
  }
}

TEST(SamplerFilters, MinPKeepsTokensAboveTheFractionOfTheBest) {
  const auto x = logs({0.5, 0.3, 0.15, 0.05});
  const std::vector<std::pair<float, std::vector<int>>> cases = {{0.05f, {0, 1, 2, 3}},  // threshold 0.025
                                                                 {0.25f, {0, 1, 2}},     // threshold 0.125
                                                                 {0.35f, {0, 1}},        // threshold 0.175
                                                                 {0.7f, {0}},            // threshold 0.35
                                                                 {1.0f, {0}}};           // only the best
  for (const auto& [min_p, want] : cases) {
    SamplerParams p = plain();
    p.min_p = min_p;
    Sampler s(p, 4);
    EXPECT_EQ(kept(s.distribution(x)), want) << "min_p " << min_p;
    p.top_p = 0.99f;  // the same through the sorted-prefix path (top-p sorted first)
    Sampler t(p, 4);
    EXPECT_EQ(kept(t.distribution(x)), want) << "min_p " << min_p << " after top_p";
  }
}

TEST(SamplerFilters, TemperatureScalesLogits) {
  Sampler s(plain(0.5f), 2);
  const auto d = s.distribution(std::vector<float>{1.0f, 0.0f});
  // p0/p1 = exp((1 - 0) / 0.5) = e^2; float rounding ~1e-7 relative, log of the ratio within 1e-5.
  EXPECT_NEAR(std::log(d[0] / d[1]), 2.0, 1e-5);
}

// log(p_i / p_ref) recovers the penalised logit difference (T = 1, no filters).
TEST(SamplerFilters, PenaltiesFollowTheFormula) {
  SamplerParams p = plain();
  p.presence_penalty = 0.5f;
  p.repetition_penalty = 2.0f;
  p.penalty_last_n = -1;
  Sampler s(p, 5);
  for (const int32_t t : {0, 1, 0, 4}) s.accept(t);
  const std::vector<float> x = {2.0f, -1.0f, 0.5f, 0.0f, 0.0f};
  const auto d = s.distribution(x);
  // Token 0 seen twice, penalised once: 2/2 - 0.5 = 0.5. Token 1: -1*2 - 0.5 = -2.5. Token 4: 0 -> -0.5.
  // Tolerance: float expf and division, ~1e-7 relative per probability -> 1e-5 on the log ratio.
  EXPECT_NEAR(std::log(d[0] / d[3]), 0.5, 1e-5);
  EXPECT_NEAR(std::log(d[1] / d[3]), -2.5, 1e-5);
  EXPECT_NEAR(std::log(d[2] / d[3]), 0.5, 1e-5);
  EXPECT_NEAR(std::log(d[4] / d[3]), -0.5, 1e-5);

  // Window of 1: only the last accepted token (4) is penalised.
  p.penalty_last_n = 1;
  ASSERT_TRUE(s.set_params(p).ok());
  const auto w = s.distribution(x);
  EXPECT_NEAR(std::log(w[0] / w[3]), 2.0, 1e-5);
  EXPECT_NEAR(std::log(w[4] / w[3]), -0.5, 1e-5);
  // Window 0: no penalty.
  p.penalty_last_n = 0;
  ASSERT_TRUE(s.set_params(p).ok());
  EXPECT_NEAR(std::log(s.distribution(x)[4] / s.distribution(x)[3]), 0.0, 1e-6);
  // reset() forgets the history.
  p.penalty_last_n = -1;
  ASSERT_TRUE(s.set_params(p).ok());
  s.reset();
  EXPECT_TRUE(s.history().empty());
  const auto r = s.distribution(x);
  EXPECT_NEAR(std::log(r[0] / r[3]), 2.0, 1e-5);
}

TEST(SamplerFilters, PenaltiesApplyToGreedyToo) {
  SamplerParams p = SamplerParams::greedy();
  p.presence_penalty = 2.0f;
  Sampler s(p, 3);
  const std::vector<float> x = {3.0f, 2.0f, 0.0f};
  EXPECT_EQ(s.sample(x), 0);
  s.accept(0);
  EXPECT_EQ(s.sample(x), 1);  // 3 - 2 = 1 < 2
  s.accept(99);               // out of range: ignored
  EXPECT_EQ(s.history().size(), 1u);
}

TEST(SamplerFilters, ValidateNamesTheParameterAndTheValue) {
  const auto message = [](SamplerParams p) {
    const Status st = p.validate();
    return st.ok() ? std::string("ok") : st.error().message;
  };
  EXPECT_EQ(message(SamplerParams{}), "ok");
  EXPECT_EQ(message(SamplerParams::greedy()), "ok");
  EXPECT_EQ(message(SamplerParams::qwen_thinking()), "ok");
  EXPECT_EQ(message(SamplerParams::qwen_instruct()), "ok");
  SamplerParams p;
  p.top_p = 1.5f;
  EXPECT_EQ(message(p), "sampler top_p must be in (0, 1] (1 = off), got 1.5");
  p = {};
  p.top_p = 0.0f;
  EXPECT_NE(message(p).find("top_p"), std::string::npos);
  p = {};
  p.temperature = -0.1f;
  EXPECT_EQ(message(p), "sampler temperature must be finite and >= 0 (0 = greedy), got -0.1");
  p = {};
  p.temperature = kNaN;
  EXPECT_NE(message(p).find("temperature"), std::string::npos);
  p = {};
  p.top_k = -1;
  EXPECT_EQ(message(p), "sampler top_k must be >= 0 (0 = off), got -1");
  p = {};
  p.min_p = 1.25f;
  EXPECT_EQ(message(p), "sampler min_p must be in [0, 1] (0 = off), got 1.25");
  p = {};
  p.presence_penalty = kInf;
  EXPECT_NE(message(p).find("presence_penalty"), std::string::npos);
  p = {};
  p.repetition_penalty = 0.0f;
  EXPECT_EQ(message(p), "sampler repetition_penalty must be finite and > 0 (1 = off), got 0");
  p = {};
  p.penalty_last_n = -2;
  EXPECT_EQ(message(p), "sampler penalty_last_n must be >= -1 (-1 = all, 0 = none), got -2");

  EXPECT_FALSE(Sampler::create(p, 10).ok());
  EXPECT_FALSE(Sampler::create(SamplerParams{}, 0).ok());
  Sampler s(SamplerParams{}, 10);
  EXPECT_FALSE(s.set_params(p).ok());
  EXPECT_EQ(s.params().penalty_last_n, 256);  // unchanged
}

// Naive reference: full sort, same arithmetic (expf weights, double sums), straight from sampler.h.
struct Reference {
  std::vector<float> dist;  // [n] final probabilities
  std::vector<int> ids;     // kept ids in the final order
  std::vector<float> w;     // [n] weights
  double total = 0.0;       // weight sum over the kept set
};

Reference reference(std::vector<float> x, const SamplerParams& p, const std::vector<int32_t>& history) {
  const int n = static_cast<int>(x.size());
  for (float& v : x)
    if (std::isnan(v)) v = -kInf;
  std::vector<bool> seen(x.size(), false);
  const size_t begin = p.penalty_last_n < 0
                           ? 0
                           : history.size() - std::min(history.size(), static_cast<size_t>(p.penalty_last_n));
  for (size_t j = begin; j < history.size(); ++j) {
    const auto t = static_cast<size_t>(history[j]);
    if (seen[t]) continue;
    seen[t] = true;
    x[t] = x[t] > 0 ? x[t] / p.repetition_penalty : x[t] * p.repetition_penalty;
    x[t] -= p.presence_penalty;
  }
  for (float& v : x) {
    v /= p.temperature;
    if (v == kInf) v = FLT_MAX;
  }
  Reference r;
  for (int i = 0; i < n; ++i)
    if (x[static_cast<size_t>(i)] > -kInf) r.ids.push_back(i);
  const auto at = [&](int i) { return x[static_cast<size_t>(i)]; };
  std::sort(r.ids.begin(), r.ids.end(),
            [&](int a, int b) { return at(a) > at(b) || (at(a) == at(b) && a < b); });
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < r.ids.size()) r.ids.resize(static_cast<size_t>(p.top_k));
  r.w.assign(x.size(), 0.0f);
  const float mx = at(r.ids[0]);
  double total = 0.0;
  for (const int i : r.ids) total += r.w[static_cast<size_t>(i)] = std::exp(at(i) - mx);
  if (p.top_p < 1.0f) {
    double cum = 0.0;
    size_t cut = r.ids.size();
    for (size_t i = 0; i < r.ids.size(); ++i) {
      cum += r.w[static_cast<size_t>(r.ids[i])];
      if (cum >= static_cast<double>(p.top_p) * total) {
        cut = i + 1;
        break;
      }
    }
    r.ids.resize(cut);
  }
  if (p.min_p > 0.0f) {
    std::vector<int> keep;
    for (const int i : r.ids)
      if (r.w[static_cast<size_t>(i)] >= p.min_p) keep.push_back(i);
    r.ids = keep;
  }
  for (const int i : r.ids) r.total += r.w[static_cast<size_t>(i)];
  r.dist.assign(x.size(), 0.0f);
  for (const int i : r.ids)
    r.dist[static_cast<size_t>(i)] = static_cast<float>(r.w[static_cast<size_t>(i)] / r.total);
  return r;
}

// Inverse CDF in the final order with the draw of (seed, counter).
int reference_draw(const Reference& r, uint64_t seed, uint64_t counter) {
  const double target = static_cast<double>(counter_uniform(seed, counter)) * r.total;
  double cum = 0.0;
  int last = r.ids[0];
  for (const int i : r.ids) {
    if (r.w[static_cast<size_t>(i)] == 0.0f) continue;
    cum += r.w[static_cast<size_t>(i)];
    last = i;
    if (target < cum) return i;
  }
  return last;
}

TEST(SamplerFilters, MatchesNaiveFullSortReferenceOnRandomInputs) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  size_t max_kept = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int n = trial % 3 == 0 ? 5000 : 97 + trial;  // 5000: top-p must sort past 64 and 512
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = normal(rng);
    x[static_cast<size_t>(trial) % x.size()] = kNaN;
    x[static_cast<size_t>(trial * 7) % x.size()] = x[static_cast<size_t>(trial * 3) % x.size()];  // a tie
    SamplerParams p;
    p.temperature = std::uniform_real_distribution<float>(0.3f, 2.0f)(rng);
    p.top_k = trial % 4 == 0 ? 0 : std::uniform_int_distribution<int>(1, 60)(rng);
    p.top_p = trial % 5 == 0 ? 1.0f : std::uniform_real_distribution<float>(0.3f, 0.999f)(rng);
    p.min_p = trial % 2 == 0 ? 0.0f : std::uniform_real_distribution<float>(0.0f, 0.3f)(rng);
    p.presence_penalty = trial % 3 == 1 ? 1.5f : 0.0f;
    p.repetition_penalty = trial % 3 == 2 ? 1.3f : 1.0f;
    p.penalty_last_n = trial % 2 == 0 ? 16 : -1;
    p.seed = static_cast<uint64_t>(trial) * 1000003u;
    ASSERT_TRUE(p.validate().ok());
    Sampler s(p, n);
    std::vector<int32_t> history;
    for (int j = 0; j < 40; ++j) {
      history.push_back(std::uniform_int_distribution<int32_t>(0, n - 1)(rng));
      s.accept(history.back());
    }
    const auto got = s.distribution(x);
    const Reference ref = reference(x, p, history);
    const auto& want = ref.dist;
    ASSERT_EQ(kept(got), kept(want)) << "trial " << trial;
    max_kept = std::max(max_kept, ref.ids.size());
    // Same arithmetic except the order of the double sums (~1e-16 relative): agreement to float rounding.
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-6f * want[i] + 1e-12f);
    // Draws: 20 in a row from the same row, against the reference's full-sort inverse CDF.
    for (uint64_t d = 0; d < 20; ++d)
      ASSERT_EQ(s.sample(x), reference_draw(ref, p.seed, d)) << "trial " << trial;
  }
  EXPECT_GT(max_kept, 512u);  // the progressive sort went past its first two stages
}

}  // namespace
}  // namespace qc
