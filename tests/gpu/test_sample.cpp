// Device sampling against the CPU mirror of the rule in sample.h (same RNG, same order), determinism, the
// draw counter, and the frequency of draws against the distribution.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu_ref.h"
#include "gpu_test_util.h"
#include "sample.h"
#include "sample_rng.h"

namespace qc::gpu::test {
namespace {

struct SampleDevice {
  DevBuf<float> logits;
  DevBuf<unsigned long long> counter;
  DevBuf<int> token;
  DevBuf<uint8_t> scratch;
  int n;
  SampleDevice(const std::vector<float>& l, int max_k)
      : logits(l),
        counter(1),
        token(1),
        scratch(std::max<size_t>(sample_scratch_bytes(static_cast<int>(l.size()), max_k), 8192 * 8)),
        n(static_cast<int>(l.size())) {}

  // One draw at `ctr`; returns the token and the counter after the call.
  std::pair<int, unsigned long long> draw(const DeviceSampleParams& p, unsigned long long ctr) {
    counter.upload({ctr});
    token.poison();
    SampleArgs a;
    a.logits = logits.get();
    a.n_vocab = n;
    a.params = p;
    a.d_counter = counter.get();
    a.out_token = token.get();
    a.scratch = scratch.get();
    const GpuStatus st = sample_token(a, nullptr);
    if (!st.ok()) {
      ADD_FAILURE() << st.describe();
      return {-1, 0};
    }
    return {token.download()[0], counter.download()[0]};
  }
};

// scratch: stage 2 never holds more than 8192 candidates (8 bytes each), whatever k.
TEST(Sample, MatchesCpuMirror) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(40);
  for (int n : {248320, 1000, 300}) {
    std::vector<float> logits = random_normal(rng, n, 2.5f);
    // Ties in the candidate set: tie-break by the lower index must agree.
    for (int i = 0; i < 6; ++i) logits[static_cast<size_t>(i) * (n / 7) + 3] = 9.0f;
    logits[n / 3] = std::numeric_limits<float>::quiet_NaN();  // ignored (counts as -inf)
    SampleDevice dev(logits, 256);
    const float temps[] = {0.0f, 0.7f, 1.0f, 1.6f};
    const int ks[] = {1, 20, 64, 256};
    const float ps[] = {1.0f, 0.8f, 0.95f};
    const float mins[] = {0.0f, 0.05f};
    int checked = 0;
    for (float t : temps)
      for (int k : ks)
        for (float p : ps)
          for (float mp : mins) {
            DeviceSampleParams sp{t, k, p, mp, 0x5eedull + static_cast<uint64_t>(checked)};
            for (unsigned long long ctr : {0ull, 1ull, 77ull, 123456789ull}) {
              const auto [tok, after] = dev.draw(sp, ctr);
              ASSERT_EQ(tok, sample_ref(logits, sp, ctr))
                  << "n=" << n << " T=" << t << " k=" << k << " p=" << p << " min_p=" << mp << " ctr=" << ctr;
              ASSERT_EQ(after, t > 0.0f ? ctr + 1 : ctr) << "counter advance";
            }
            ++checked;
          }
  }
}

TEST(Sample, DeterministicAndGreedyIsArgmax) {
  QC_REQUIRE_DEVICE();
  std::mt19937 rng(41);
  const std::vector<float> logits = random_normal(rng, 248320, 3.0f);
  SampleDevice dev(logits, 256);
  const DeviceSampleParams p{0.9f, 40, 0.9f, 0.0f, 7};
  for (unsigned long long ctr = 0; ctr < 20; ++ctr) ASSERT_EQ(dev.draw(p, ctr).first, dev.draw(p, ctr).first);
  const int best = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  EXPECT_EQ(dev.draw(DeviceSampleParams{0.0f, 20, 1.0f, 0.0f, 1}, 5).first, best);
  EXPECT_EQ(dev.draw(DeviceSampleParams{1.0f, 1, 1.0f, 0.0f, 1}, 5).first, best);
}

// 4000 draws (counters 0..3999) over 8 candidates: each token's count within 5 standard deviations of
// n * p (binomial). Fails for a biased RNG, a wrong cumulative walk or a wrong temperature.
TEST(Sample, FrequenciesFollowTheDistribution) {
  QC_REQUIRE_DEVICE();
  const std::vector<float> logits = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, -1.0f, 0.25f, 1.25f, -5.0f, -6.0f};
  SampleDevice dev(logits, 256);
  const DeviceSampleParams p{1.3f, 8, 1.0f, 0.0f, 2024};
  std::vector<int> count(logits.size(), 0);
  const int draws = 4000;
  for (int c = 0; c < draws; ++c) ++count[dev.draw(p, c).first];
  std::vector<int> idx(logits.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  double z = 0.0;
  for (int i = 0; i < 8; ++i) z += std::exp(logits[idx[i]] / 1.3);
  for (int i = 0; i < 8; ++i) {
    const double pr = std::exp(logits[idx[i]] / 1.3) / z;
    const double sd = std::sqrt(draws * pr * (1 - pr));
    EXPECT_NEAR(count[idx[i]], draws * pr, 5 * sd) << "token " << idx[i];
  }
  EXPECT_EQ(count[8] + count[9], 0) << "tokens outside the top 8 were drawn";
}

TEST(SampleArgs, RejectsTopKOutOfRange) {
  float l[4] = {};
  unsigned long long c = 0;
  int t = 0;
  SampleArgs a;
  a.logits = l;
  a.n_vocab = 4;
  a.d_counter = &c;
  a.out_token = &t;
  a.scratch = l;
  a.params.top_k = 0;
  const GpuStatus st = sample_token(a, nullptr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.describe().find("top_k must be in [1, 256]"), std::string::npos) << st.describe();
}

}  // namespace
}  // namespace qc::gpu::test
