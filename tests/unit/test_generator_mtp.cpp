// MTP speculative decoding: greedy with MTP gives exactly the tokens of greedy without it for draft
// lengths 1..3 and MTP hit rates 0/60/100%, the acceptance counters add up, the backend ends in the state
// of exactly the kept tokens, and the MTP cache holds the true (x_{q+1}, h_q) triple for every position.
#include <gtest/gtest.h>

#include <atomic>
#include <numeric>

#include "test_generator_fakes.h"

namespace qc {
namespace {

using testing::FakeBackend;
using testing::FakeOptions;

std::vector<int32_t> make_prompt(int n, int n_vocab) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(static_cast<int32_t>((i * 5 + 1) % n_vocab));
  return p;
}

GenerateRequest request(std::vector<int32_t> prompt, int max_new, int draft_len) {
  GenerateRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new;
  r.sampler = SamplerParams::greedy();
  r.mtp = {draft_len > 0, std::max(draft_len, 1)};
  return r;
}

// The backend's main state and the MTP cache after a run whose context (tokens actually run) is
// `context`: state of exactly those tokens, MTP entries 0 .. P-2 are the true triples.
void expect_consistent(const FakeBackend& b, const std::vector<int32_t>& context, const std::string& label,
                       bool mtp = true) {
  const auto h = testing::true_states(context);
  ASSERT_EQ(b.position(), static_cast<int>(context.size())) << label;
  EXPECT_EQ(b.state(), h.back()) << label;
  if (!mtp) return;
  for (size_t q = 0; q + 1 < context.size(); ++q) {
    ASSERT_LT(q, b.mtp_token.size()) << label;
    EXPECT_EQ(b.mtp_token[q], context[q + 1]) << label << " MTP entry " << q << ": token";
    EXPECT_EQ(b.mtp_state[q], h[q]) << label << " MTP entry " << q << ": hidden";
  }
}

std::vector<int32_t> context_of(const std::vector<int32_t>& prompt, const GenerateResult& r) {
  std::vector<int32_t> c = prompt;
  if (!r.tokens.empty()) c.insert(c.end(), r.tokens.begin(), r.tokens.end() - 1);
  return c;
}

void expect_counters_add_up(const GenerationStats& st, int k, const std::string& label) {
  int64_t sum_accepted = 0;
  for (int j = 0; j < kMaxDraftLen; ++j) {
    const auto u = static_cast<size_t>(j);
    EXPECT_LE(st.mtp_accepted[u], st.mtp_drafted[u]) << label << " position " << j;
    if (j >= k) {
      EXPECT_EQ(st.mtp_drafted[u], 0) << label << " position " << j;
    }
    if (j > 0) {
      EXPECT_LE(st.mtp_accepted[u], st.mtp_accepted[u - 1]) << label;
      EXPECT_LE(st.mtp_drafted[u], st.mtp_drafted[u - 1]) << label;
    }
    sum_accepted += st.mtp_accepted[u];
  }
  // Every step emits its accepted drafts plus one token; the first token comes from the prefill.
  EXPECT_EQ(st.generated_tokens, 1 + st.decode_steps + sum_accepted) << label;
  EXPECT_EQ(st.mtp_draft_len, k) << label;
}

// Both rollbacks: snapshot + restore + re-run (speculative 0), and forward_speculative + commit(m)
// (speculative 4), which must never re-run nor restore.
TEST(GeneratorMtp, GreedyWithMtpEqualsGreedyWithout) {
  const auto prompt = make_prompt(9, 48);
  constexpr int kNew = 60;
  for (const int spec : {0, 4})
    for (const int chunk : {3, 64}) {
      for (const int hit : {0, 60, 100}) {
        FakeOptions o;
        o.mtp_accept_percent = hit;
        o.speculative_tokens = spec;
        FakeBackend base_backend(o);
        Generator base(base_backend, testing::fake_text(), GeneratorOptions{chunk});
        auto want = base.generate(request(prompt, kNew, 0));
        ASSERT_TRUE(want.ok());
        ASSERT_EQ(want->tokens.size(), static_cast<size_t>(kNew));
        for (int k = 1; k <= kMaxDraftLen; ++k) {
          const std::string label = "spec " + std::to_string(spec) + " chunk " + std::to_string(chunk) +
                                    " hit " + std::to_string(hit) + "% k " + std::to_string(k);
          FakeBackend b(o);
          Generator g(b, testing::fake_text(), GeneratorOptions{chunk});
          auto r = g.generate(request(prompt, kNew, k));
          ASSERT_TRUE(r.ok()) << label;
          ASSERT_EQ(r->stop_reason, StopReason::max_tokens) << label << " " << r->error;
          EXPECT_TRUE(r->mtp_used) << label;
          EXPECT_EQ(r->tokens, want->tokens) << label;
          EXPECT_EQ(r->text, want->text) << label;
          EXPECT_EQ(r->stats.final_logits_hash, want->stats.final_logits_hash) << label;
          expect_counters_add_up(r->stats, k, label);
          expect_consistent(b, context_of(prompt, *r), label);
          const GenerationStats& st = r->stats;
          const int64_t accepted =
              std::accumulate(st.mtp_accepted.begin(), st.mtp_accepted.end(), int64_t{0});
          if (hit == 0) {
            EXPECT_EQ(accepted, 0) << label;
          } else if (hit == 100) {
            for (int j = 0; j < k; ++j)
              EXPECT_EQ(st.mtp_accepted[static_cast<size_t>(j)], st.mtp_drafted[static_cast<size_t>(j)])
                  << label;
            EXPECT_EQ(st.rerun_passes, 0) << label;
            EXPECT_LT(st.decode_steps, kNew / k + 2) << label;  // about k+1 tokens per pass
          } else {                                              // right sometimes, wrong sometimes
            EXPECT_GT(accepted, 0) << label;
            EXPECT_LT(st.mtp_accepted[0], st.mtp_drafted[0]) << label;
            if (spec == 0) {
              EXPECT_GT(st.rerun_passes, 0) << label;
            }
          }
          EXPECT_EQ(st.forward_passes, (9 + chunk - 1) / chunk + st.decode_steps + st.rerun_passes) << label;
          if (spec > 0) {  // one weight pass per step, rolled back by commit(m)
            EXPECT_EQ(st.rerun_passes, 0) << label;
            EXPECT_EQ(b.restores, 0) << label;
            EXPECT_EQ(b.speculative_calls, b.commits) << label;
            // k >= 1 in every step but possibly the last (one token left in the budget: no drafts).
            EXPECT_LE(b.speculative_calls, st.decode_steps) << label;
            EXPECT_GE(b.speculative_calls, st.decode_steps - 1) << label;
          }
        }
      }
    }
}

TEST(GeneratorMtp, StopTokenInsideAnAcceptedRun) {
  FakeOptions o;
  o.script = [](int pos) { return static_cast<int32_t>((pos * 3) % 17); };
  o.mtp_accept_percent = 100;
  const auto prompt = make_prompt(5, 48);
  // Generated from positions 4, 5, ...: 12 15 1 4 7 10 ...; stop on 7 (the 5th token).
  for (int k = 0; k <= 2 * kMaxDraftLen + 1; ++k) {  // k > kMaxDraftLen: the same with commit(m)
    o.speculative_tokens = k > kMaxDraftLen ? 4 : 0;
    FakeBackend b(o);
    Generator g(b, testing::fake_text());
    const int draft = k > kMaxDraftLen ? k - kMaxDraftLen - 1 : k;
    GenerateRequest rq = request(prompt, 50, draft);
    rq.stop_tokens = {7};
    auto r = g.generate(rq);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->tokens, (std::vector<int32_t>{12, 15, 1, 4, 7})) << "k " << k;
    EXPECT_EQ(r->stop_reason, StopReason::stop_token);
    EXPECT_EQ(r->text, "<12><15><1><4>");
    if (o.speculative_tokens > 0) {
      EXPECT_EQ(r->stats.rerun_passes, 0) << "k " << k;
    }
    expect_consistent(b, context_of(prompt, *r), "k " + std::to_string(k), draft > 0);
  }
}

TEST(GeneratorMtp, CancellationInsideAStepStopsWithinOneToken) {
  FakeOptions o;
  o.mtp_accept_percent = 100;  // every step emits k+1 tokens, so index 3 falls inside a step
  const auto prompt = make_prompt(6, 48);
  for (int k = 1; k <= 2 * kMaxDraftLen; ++k) {  // k > kMaxDraftLen: draft k - 3 with commit(m)
    o.speculative_tokens = k > kMaxDraftLen ? 4 : 0;
    FakeBackend b(o);
    Generator g(b, testing::fake_text());
    std::atomic<bool> cancel{false};
    GenerateObserver obs;
    obs.cancel = &cancel;
    obs.on_token = [&](const TokenEvent& ev) {
      if (ev.index == 3) cancel = true;
    };
    auto r = g.generate(request(prompt, 50, k > kMaxDraftLen ? k - kMaxDraftLen : k), obs);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->stop_reason, StopReason::cancelled);
    EXPECT_EQ(r->tokens.size(), 4u) << "k " << k;
    if (k > kMaxDraftLen) {
      EXPECT_EQ(b.restores, 0) << "k " << k;
    }
    expect_consistent(b, context_of(prompt, *r), "k " + std::to_string(k));
  }
}

TEST(GeneratorMtp, ContextAndTokenBudgetLimitTheDrafts) {
  const auto prompt = make_prompt(10, 48);
  for (const int hit : {60, 100, -60}) {  // -60: 60% with commit(m)
    FakeOptions o;
    o.n_ctx = 16;
    o.mtp_accept_percent = hit < 0 ? -hit : hit;
    o.speculative_tokens = hit < 0 ? 4 : 0;
    FakeBackend base_backend(o);
    Generator base(base_backend, testing::fake_text());
    auto want_full = base.generate(request(prompt, 100, 0));
    ASSERT_TRUE(want_full.ok());
    base_backend.reset();
    auto want_five = base.generate(request(prompt, 5, 0));
    ASSERT_TRUE(want_five.ok());
    for (int k = 1; k <= kMaxDraftLen; ++k) {
      FakeBackend b(o);
      Generator g(b, testing::fake_text());
      auto full = g.generate(request(prompt, 100, k));
      ASSERT_TRUE(full.ok());
      EXPECT_EQ(full->stop_reason, StopReason::context_full);
      EXPECT_EQ(full->tokens, want_full->tokens) << "k " << k;
      EXPECT_EQ(b.position(), 16);
      expect_consistent(b, context_of(prompt, *full), "full k " + std::to_string(k));
      b.reset();
      auto five = g.generate(request(prompt, 5, k));
      ASSERT_TRUE(five.ok());
      EXPECT_EQ(five->stop_reason, StopReason::max_tokens);
      EXPECT_EQ(five->tokens, want_five->tokens) << "k " << k;
      expect_counters_add_up(five->stats, k, "five k " + std::to_string(k));
    }
  }
}

TEST(GeneratorMtp, ModelWithoutMtpDecodesWithoutItAndSaysSo) {
  FakeOptions o;
  o.has_mtp = false;
  const auto prompt = make_prompt(6, 48);
  FakeBackend base_backend(o);
  auto want = Generator(base_backend, testing::fake_text()).generate(request(prompt, 20, 0));
  ASSERT_TRUE(want.ok());
  FakeBackend b(o);
  auto r = Generator(b, testing::fake_text()).generate(request(prompt, 20, 2));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->mtp_used);
  EXPECT_NE(r->note.find("no MTP block"), std::string::npos);
  EXPECT_EQ(r->tokens, want->tokens);
  EXPECT_EQ(r->stats.mtp_draft_len, 0);
  EXPECT_EQ(b.mtp_calls, 0);
}

TEST(GeneratorMtp, ContinuingConversationKeepsTheMtpCacheComplete) {
  const auto p1 = make_prompt(7, 48);
  for (int k = 1; k <= 2 * kMaxDraftLen; ++k) {  // k > kMaxDraftLen: draft k - 3 with commit(m)
    FakeOptions o;
    o.speculative_tokens = k > kMaxDraftLen ? 4 : 0;
    FakeBackend b(o), base_backend(o);
    Generator g(b, testing::fake_text(), GeneratorOptions{4});
    Generator base(base_backend, testing::fake_text(), GeneratorOptions{4});
    const int draft = k > kMaxDraftLen ? k - kMaxDraftLen : k;
    auto r1 = g.generate(request(p1, 15, draft));
    auto w1 = base.generate(request(p1, 15, 0));
    ASSERT_TRUE(r1.ok() && w1.ok());
    ASSERT_EQ(r1->tokens, w1->tokens);
    // The next turn starts with the token the first one ended on (sampled, never run).
    std::vector<int32_t> p2 = {r1->tokens.back(), 3, 1, 4, 1, 5};
    auto r2 = g.generate(request(p2, 15, draft));
    auto w2 = base.generate(request(p2, 15, 0));
    ASSERT_TRUE(r2.ok() && w2.ok());
    EXPECT_EQ(r2->tokens, w2->tokens) << "k " << k;
    std::vector<int32_t> context = context_of(p1, *r1);
    const auto second = context_of(p2, *r2);
    context.insert(context.end(), second.begin(), second.end());
    expect_consistent(b, context, "k " + std::to_string(k));  // includes the entry at the turn boundary
  }
}

TEST(GeneratorMtp, SampledSpeculationIsDeterministicPerSeed) {
  const auto run = [](uint64_t seed, int spec = 0) {
    FakeOptions o;
    o.speculative_tokens = spec;
    FakeBackend b(o);
    Generator g(b, testing::fake_text());
    GenerateRequest rq = request(make_prompt(6, 48), 40, 2);
    rq.sampler = SamplerParams::qwen_instruct();
    rq.sampler.top_k = 3;  // a peaked distribution so that drafts are accepted sometimes
    rq.sampler.seed = seed;
    auto r = g.generate(rq);
    EXPECT_TRUE(r.ok());
    expect_counters_add_up(r->stats, 2, "sampled");
    expect_consistent(b, context_of(rq.prompt, *r), "sampled");
    return r->tokens;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
  EXPECT_EQ(run(5, 4), run(5));  // the rollback does not change what is sampled
  EXPECT_EQ(run(6, 4), run(6));
}

}  // namespace
}  // namespace qc

namespace qc {
namespace {

// The backend's prompt path (Backend::prefill): the generator sends every prompt token through it in
// chunks of prefill_rows() (ending at the checkpoint), and the MTP cache still holds the true triple for
// every position -- the backend writes the ones inside a chunk and at its end from the next chunk's first
// token, and the one before a continued prompt from the hidden state the generator kept.
TEST(GeneratorPromptPath, SameTokensAndACompleteMtpCacheForEveryChunking) {
  const auto p1 = make_prompt(23, 48);
  for (const int rows : {1, 4, 7, 23, 64})
    for (const int draft : {0, 1, 3}) {
      const std::string label = "rows " + std::to_string(rows) + " draft " + std::to_string(draft);
      FakeOptions o;
      FakeBackend base_backend(o);
      o.prefill_rows = rows;
      FakeBackend b(o);
      Generator base(base_backend, testing::fake_text(), GeneratorOptions{64});
      Generator g(b, testing::fake_text(), GeneratorOptions{64});
      GenerateRequest req = request(p1, 20, draft);
      req.checkpoint = 11;
      int checkpoints = 0;
      GenerateObserver obs;
      obs.on_checkpoint = [&](std::span<const float> hidden) {
        ++checkpoints;
        EXPECT_EQ(b.position(), 11) << label;
        EXPECT_EQ(hidden.size(), static_cast<size_t>(FakeBackend::kEmbd)) << label;
      };
      auto r1 = g.generate(req, obs);
      auto w1 = base.generate(request(p1, 20, 0));
      ASSERT_TRUE(r1.ok() && w1.ok()) << label;
      ASSERT_EQ(r1->stop_reason, StopReason::max_tokens) << label << " " << r1->error;
      EXPECT_EQ(r1->tokens, w1->tokens) << label;
      EXPECT_EQ(checkpoints, 1) << label;
      const int chunks = (11 + rows - 1) / rows + (12 + rows - 1) / rows;
      EXPECT_EQ(b.prefill_calls, chunks) << label;
      EXPECT_EQ(r1->stats.forward_passes, chunks + r1->stats.decode_steps + r1->stats.rerun_passes) << label;
      if (draft > 0) expect_consistent(b, context_of(p1, *r1), label);
      // A continued conversation: the entry before the new prompt comes through prev_hidden.
      std::vector<int32_t> p2 = {r1->tokens.back(), 3, 1, 4, 1, 5};
      auto r2 = g.generate(request(p2, 10, draft));
      auto w2 = base.generate(request(p2, 10, 0));
      ASSERT_TRUE(r2.ok() && w2.ok()) << label;
      EXPECT_EQ(r2->tokens, w2->tokens) << label;
      if (draft > 0) {
        EXPECT_EQ(b.prev_entries, 1) << label;
        std::vector<int32_t> context = context_of(p1, *r1);
        const auto second = context_of(p2, *r2);
        context.insert(context.end(), second.begin(), second.end());
        expect_consistent(b, context, label);
      }
      EXPECT_EQ(b.forward_calls, r1->stats.decode_steps + r1->stats.rerun_passes + r2->stats.decode_steps +
                                     r2->stats.rerun_passes)
          << label << ": prompt tokens went through forward()";
    }
}

}  // namespace
}  // namespace qc
