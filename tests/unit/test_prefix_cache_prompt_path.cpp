// The prefix cache with a backend that has a prompt path of its own (Backend::prefill_rows() > 0, the CUDA
// backend): decoded positions carry other bits than prefilled ones, so the next message must not continue
// the live state (which holds the reply's decoded tokens) but restart at the reply's turn boundary, which
// only the prompt path wrote. Without a prompt path the live state is continued as before.
#include <gtest/gtest.h>

#include "runtime/prefix_cache.h"
#include "test_generator_fakes.h"

namespace qc {
namespace {

using testing::FakeBackend;
using testing::FakeOptions;

struct Turn {
  int reused = 0;
  std::vector<int32_t> tokens;
};

// One reply through the cache the way the worker drives it (runtime/worker_generate.cpp).
Turn reply(PrefixCache& cache, FakeBackend& b, Generator& g, const std::vector<int32_t>& prompt, int checkpoint) {
  Turn t;
  auto reused = cache.prepare(b, g, prompt, /*mtp=*/true);
  EXPECT_TRUE(reused.ok()) << reused.error().describe();
  t.reused = reused.ok() ? *reused : -1;
  GenerateRequest req;
  req.prompt.assign(prompt.begin() + t.reused, prompt.end());
  req.max_new_tokens = 8;
  req.sampler = SamplerParams::greedy();
  req.mtp = {true, 2};
  req.checkpoint = checkpoint > t.reused ? checkpoint - t.reused : 0;
  GenerateObserver obs;
  obs.on_checkpoint = [&](std::span<const float> hidden) {
    cache.checkpoint(b, std::span<const int32_t>(prompt).first(static_cast<size_t>(b.position())), hidden);
  };
  auto r = g.generate(req, obs);
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return t;
  t.tokens = r->tokens;
  cache.finish(b, g, prompt, r->tokens, r->stop_reason != StopReason::error);
  return t;
}

TEST(PrefixCachePromptPath, TheNextMessageRestartsAtTheTurnBoundaryNotTheLiveState) {
  for (const int rows : {0, 16}) {
    FakeOptions o;
    o.prefill_rows = rows;
    FakeBackend b(o);
    Generator g(b, testing::fake_text(), GeneratorOptions{64});
    PrefixCache cache(1 << 20);
    std::vector<int32_t> p1 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    const Turn t1 = reply(cache, b, g, p1, 6);  // turn boundary after 6 tokens
    EXPECT_EQ(t1.reused, 0);
    ASSERT_FALSE(t1.tokens.empty());
    std::vector<int32_t> p2 = p1;
    p2.insert(p2.end(), t1.tokens.begin(), t1.tokens.end());
    p2.insert(p2.end(), {11, 12, 13});
    const Turn t2 = reply(cache, b, g, p2, static_cast<int>(p1.size()));
    if (rows == 0) {
      EXPECT_EQ(t2.reused, static_cast<int>(p1.size() + t1.tokens.size()) - 1) << "the live state continues";
    } else {
      EXPECT_EQ(t2.reused, 6) << "decoded positions are not continued on a backend with a prompt path";
    }
    // Either way the reply is the one a fresh prefill gives.
    FakeBackend fresh_b(o);
    Generator fresh(fresh_b, testing::fake_text(), GeneratorOptions{64});
    GenerateRequest req;
    req.prompt = p2;
    req.max_new_tokens = 8;
    req.sampler = SamplerParams::greedy();
    req.mtp = {true, 2};
    auto want = fresh.generate(req);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(t2.tokens, want->tokens) << "rows " << rows;
  }
}

}  // namespace
}  // namespace qc
