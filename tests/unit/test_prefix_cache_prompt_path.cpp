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
  const int kept = b.prefill_grid_floor(checkpoint);  // on the prompt path's grid, like the worker
  req.checkpoint = kept > t.reused ? kept - t.reused : 0;
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

// The same reply from a fresh backend that prefills the whole prompt (what reuse must reproduce).
std::vector<int32_t> fresh_reply(const FakeOptions& o, const std::vector<int32_t>& prompt) {
  FakeBackend b(o);
  Generator g(b, testing::fake_text(), GeneratorOptions{64});
  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = 8;
  req.sampler = SamplerParams::greedy();
  req.mtp = {true, 2};
  auto r = g.generate(req);
  EXPECT_TRUE(r.ok());
  return r.ok() ? r->tokens : std::vector<int32_t>{};
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
    EXPECT_EQ(t2.tokens, fresh_reply(o, p2)) << "rows " << rows;
  }
}

// A backend whose prompt path keeps its bits only for calls starting on a grid (the CUDA backend's chunked
// Gated DeltaNet, Backend::prefill_grid): the generator ends its chunks on the grid whatever the first
// call's start, the kept state sits on the grid point before the turn boundary, and the next reply, which
// starts there, is the one a fresh prefill gives.
TEST(PrefixCachePromptPath, CallsAndKeptStatesStayOnTheGrid) {
  FakeOptions o;
  o.prefill_rows = 16;
  o.prefill_grid = 8;
  {
    FakeBackend b(o);
    Generator g(b, testing::fake_text(), GeneratorOptions{64});
    ASSERT_TRUE(b.forward(std::vector<int32_t>{1, 2, 3, 4, 5}, 0).ok());
    GenerateRequest req;
    for (int i = 0; i < 40; ++i) req.prompt.push_back(6 + i);
    req.max_new_tokens = 1;
    req.sampler = SamplerParams::greedy();
    ASSERT_TRUE(g.generate(req).ok());
    EXPECT_EQ(b.prefill_starts, (std::vector<int>{5, 16, 32}))
        << "chunks end on the grid after an off-grid start";
  }
  FakeBackend b(o);
  Generator g(b, testing::fake_text(), GeneratorOptions{64});
  PrefixCache cache(1 << 20);
  std::vector<int32_t> p1;
  for (int i = 0; i < 21; ++i) p1.push_back(1 + i);
  const Turn t1 = reply(cache, b, g, p1, 13);  // the turn boundary after 13 tokens: the state at 8 is kept
  ASSERT_FALSE(t1.tokens.empty());
  EXPECT_EQ(b.prefill_starts, (std::vector<int>{0, 8})) << "a call ends at the kept state";
  std::vector<int32_t> p2 = p1;
  p2.insert(p2.end(), t1.tokens.begin(), t1.tokens.end());
  p2.insert(p2.end(), {30, 31, 32});
  b.prefill_starts.clear();
  const Turn t2 = reply(cache, b, g, p2, static_cast<int>(p1.size()));
  EXPECT_EQ(t2.reused, 8);
  ASSERT_FALSE(b.prefill_starts.empty());
  for (const int s : b.prefill_starts) EXPECT_EQ(s % 8, 0) << "call at " << s;
  EXPECT_EQ(t2.tokens, fresh_reply(o, p2));
}

}  // namespace
}  // namespace qc
