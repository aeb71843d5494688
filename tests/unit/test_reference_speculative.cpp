// The reference backend's speculative forward (backend.h): forward_speculative of M tokens + commit(m)
// gives, for every M in 1..4 and m in 1..M, in float and double, the bits of the old rollback (snapshot,
// forward of M, restore, forward of the m kept tokens): logits and hidden rows, the recurrent state (GDN
// states and conv windows, hashed) and every later token. Then the contract's refusals, the capability
// query, and the generator on a real model: greedy with MTP equals greedy without, with no re-run pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "generate/generator.h"
#include "random_model.h"
#include "reference/reference_backend.h"
#include "reference/reference_model.h"

namespace qc {
namespace {

std::vector<int32_t> tokens_of(int n, int vocab, int salt) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((i * 53 + 7 + salt * 101) % vocab));
  return t;
}

std::unique_ptr<Backend> make(const test::RandomModel& m, RefPrecision p, int speculative_tokens = 4,
                              int max_batch = 32) {
  ReferenceOptions o;
  o.precision = p;
  o.n_threads = 2;
  o.n_ctx = 64;
  o.max_batch = max_batch;
  o.speculative_tokens = speculative_tokens;
  auto b = make_reference_backend(m.config, m.weights, o);
  EXPECT_TRUE(b.ok()) << b.error().describe();
  return b.ok() ? std::move(b).value() : nullptr;
}

uint64_t state_hash(const Backend& b) {
  if (const auto* f = dynamic_cast<const ref::ReferenceModel<float>*>(&b)) return f->recurrent_state_hash();
  if (const auto* d = dynamic_cast<const ref::ReferenceModel<double>*>(&b)) return d->recurrent_state_hash();
  ADD_FAILURE() << "not a reference backend";
  return 0;
}

std::vector<float> rows(std::span<const float> s, size_t first, size_t count, size_t width) {
  return std::vector<float>(s.begin() + static_cast<std::ptrdiff_t>(first * width),
                            s.begin() + static_cast<std::ptrdiff_t>((first + count) * width));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Everything one rollback path produced.
struct PathOut {
  std::vector<float> verify_logits, verify_hidden;  // the M-token pass, all rows
  std::vector<float> kept_logits, kept_hidden;      // rows of the m kept tokens (the re-run's, if any)
  uint64_t state = 0;                               // recurrent state right after the rollback
  int position = 0;
  std::vector<float> next_logits, next_hidden;  // three more tokens after the rollback
};

TEST(RefSpeculative, CommitEqualsRestoreAndRerun) {
  for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
    test::RandomModelSpec s;
    s.dtype = DType::kQ8_0;
    auto model = test::make_random_model(s);
    const size_t V = static_cast<size_t>(s.n_vocab), H = static_cast<size_t>(s.n_embd);
    const std::vector<int32_t> prefix = tokens_of(5, s.n_vocab, 1);
    const std::vector<int32_t> batch = tokens_of(4, s.n_vocab, 2);
    const std::vector<int32_t> next = tokens_of(3, s.n_vocab, 3);
    auto spec = make(*model, p);
    auto plain = make(*model, p, /*speculative_tokens=*/0);
    auto fresh = make(*model, p);
    ASSERT_EQ(spec->max_speculative_tokens(), 4);
    ASSERT_EQ(plain->max_speculative_tokens(), 0);
    for (int M = 1; M <= 4; ++M) {
      const std::span<const int32_t> verify(batch.data(), static_cast<size_t>(M));
      for (int m = 1; m <= M; ++m) {
        const std::string label = std::string(p == RefPrecision::kFloat ? "f32" : "f64") + " M " +
                                  std::to_string(M) + " m " + std::to_string(m);
        auto finish = [&](Backend& b, PathOut& o) {
          o.state = state_hash(b);
          o.position = b.position();
          auto r = b.forward(next, b.position());
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          o.next_logits = rows(r->logits, 0, next.size(), V);
          o.next_hidden = rows(r->hidden, 0, next.size(), H);
        };
        // New path: one speculative pass, commit(m).
        PathOut a;
        spec->reset();
        ASSERT_TRUE(spec->forward(prefix, 0).ok());
        {
          auto r = spec->forward_speculative(verify, 5);
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          EXPECT_EQ(spec->position(), 5 + M) << label;
          ASSERT_TRUE(spec->commit(m).ok()) << label;
          // The spans stay valid across commit().
          a.verify_logits = rows(r->logits, 0, static_cast<size_t>(M), V);
          a.verify_hidden = rows(r->hidden, 0, static_cast<size_t>(M), H);
          a.kept_logits = rows(r->logits, 0, static_cast<size_t>(m), V);
          a.kept_hidden = rows(r->hidden, 0, static_cast<size_t>(m), H);
        }
        ASSERT_NO_FATAL_FAILURE(finish(*spec, a));
        // Old path: snapshot, forward of M, restore, forward of the m kept tokens.
        PathOut b;
        plain->reset();
        ASSERT_TRUE(plain->forward(prefix, 0).ok());
        const std::unique_ptr<StateSnapshot> snap = plain->snapshot();
        ASSERT_NE(snap, nullptr);
        {
          auto r = plain->forward(verify, 5);
          ASSERT_TRUE(r.ok()) << label;
          b.verify_logits = rows(r->logits, 0, static_cast<size_t>(M), V);
          b.verify_hidden = rows(r->hidden, 0, static_cast<size_t>(M), H);
        }
        ASSERT_TRUE(plain->restore(*snap).ok()) << label;
        {
          auto r = plain->forward(verify.first(static_cast<size_t>(m)), 5);
          ASSERT_TRUE(r.ok()) << label;
          b.kept_logits = rows(r->logits, 0, static_cast<size_t>(m), V);
          b.kept_hidden = rows(r->hidden, 0, static_cast<size_t>(m), H);
        }
        ASSERT_NO_FATAL_FAILURE(finish(*plain, b));
        // A backend that never saw the rejected tokens.
        fresh->reset();
        std::vector<int32_t> ctx = prefix;
        ctx.insert(ctx.end(), batch.begin(), batch.begin() + m);
        ASSERT_TRUE(fresh->forward(ctx, 0).ok());
        const uint64_t clean_state = state_hash(*fresh);

        EXPECT_EQ(a.position, 5 + m) << label;
        EXPECT_EQ(b.position, 5 + m) << label;
        EXPECT_TRUE(same_bits(a.verify_logits, b.verify_logits)) << label;
        EXPECT_TRUE(same_bits(a.verify_hidden, b.verify_hidden)) << label;
        EXPECT_TRUE(same_bits(a.kept_logits, b.kept_logits)) << label;
        EXPECT_TRUE(same_bits(a.kept_hidden, b.kept_hidden)) << label;
        EXPECT_EQ(a.state, b.state) << label;
        EXPECT_EQ(a.state, clean_state) << label;
        EXPECT_TRUE(same_bits(a.next_logits, b.next_logits)) << label;
        EXPECT_TRUE(same_bits(a.next_hidden, b.next_hidden)) << label;
      }
    }
  }
}

TEST(RefSpeculative, ContractRefusalsLeaveTheStateAlone) {
  test::RandomModelSpec s;
  auto model = test::make_random_model(s);
  auto b = make(*model, RefPrecision::kFloat);
  const std::vector<int32_t> t = tokens_of(6, s.n_vocab, 4);
  const std::span<const int32_t> ts(t);
  ASSERT_TRUE(b->forward(ts.first(2), 0).ok());
  const uint64_t before = state_hash(*b);
  EXPECT_FALSE(b->commit(1).ok());                            // nothing pending
  EXPECT_FALSE(b->forward_speculative(ts.first(5), 2).ok());  // more than max_speculative_tokens
  EXPECT_FALSE(b->forward_speculative(ts.first(2), 1).ok());  // wrong position
  EXPECT_FALSE(b->forward_speculative({}, 2).ok());           // no tokens
  EXPECT_EQ(b->position(), 2);
  EXPECT_EQ(state_hash(*b), before);

  ASSERT_TRUE(b->forward_speculative(ts.subspan(2, 3), 2).ok());
  EXPECT_EQ(b->position(), 5);
  const std::vector<float> h(static_cast<size_t>(s.n_embd), 0.5f);
  EXPECT_FALSE(b->forward(ts.subspan(5, 1), 5).ok());
  EXPECT_FALSE(b->forward_speculative(ts.subspan(5, 1), 5).ok());
  EXPECT_FALSE(b->mtp_forward(1, h, 4).ok());
  EXPECT_TRUE(b->snapshot() == nullptr);
  EXPECT_FALSE(b->commit(0).ok());
  EXPECT_FALSE(b->commit(4).ok());
  EXPECT_TRUE(b->commit(2).ok());  // still pending after the refused commits
  EXPECT_EQ(b->position(), 4);
  EXPECT_FALSE(b->commit(1).ok());
  EXPECT_TRUE(b->forward(ts.subspan(4, 1), 4).ok());
  EXPECT_TRUE(b->mtp_forward(1, h, 4).ok());

  // reset() drops a pending speculation.
  ASSERT_TRUE(b->forward_speculative(ts.first(2), 5).ok());
  EXPECT_EQ(b->position(), 7);
  b->reset();
  EXPECT_FALSE(b->commit(1).ok());
  EXPECT_EQ(b->position(), 0);
  EXPECT_TRUE(b->forward(ts.first(1), 0).ok());

  // The limit: speculative_tokens capped at max_batch; 0 = unsupported.
  EXPECT_EQ(make(*model, RefPrecision::kFloat, 4, /*max_batch=*/2)->max_speculative_tokens(), 2);
  auto none = make(*model, RefPrecision::kDouble, 0);
  EXPECT_EQ(none->max_speculative_tokens(), 0);
  EXPECT_FALSE(none->forward_speculative(ts.first(1), 0).ok());
  EXPECT_FALSE(none->commit(1).ok());
}

// The generator on the reference backend: the same greedy tokens with and without MTP for draft lengths
// 1..3, no re-run pass where commit(m) is available (and the same tokens and final state through the
// fallback). A vocabulary of 8 with seed 2 makes random drafts right often enough that every m occurs
// (measured: 22 steps with 3 drafts, 7/5/4 accepted at positions 0/1/2; most seeds accept almost nothing).
TEST(RefSpeculative, GeneratorCommitsWithoutRerunPasses) {
  test::RandomModelSpec s;
  s.n_vocab = 8;
  s.seed = 2;
  auto model = test::make_random_model(s);
  const std::vector<int32_t> prompt = tokens_of(5, s.n_vocab, 5);
  constexpr int kNew = 40;
  auto request = [&](int draft) {
    GenerateRequest r;
    r.prompt = prompt;
    r.max_new_tokens = kNew;
    r.sampler = SamplerParams::greedy();
    r.mtp = {draft > 0, std::max(draft, 1)};
    return r;
  };
  auto base_backend = make(*model, RefPrecision::kFloat);
  Generator base(*base_backend, TokenText{});
  auto want = base.generate(request(0));
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(want->tokens.size(), static_cast<size_t>(kNew));
  const uint64_t want_state = state_hash(*base_backend);
  for (int draft = 1; draft <= kMaxDraftLen; ++draft) {
    for (const int spec : {4, 0}) {
      const std::string label = "draft " + std::to_string(draft) + " speculative " + std::to_string(spec);
      auto b = make(*model, RefPrecision::kFloat, spec);
      Generator g(*b, TokenText{});
      auto r = g.generate(request(draft));
      ASSERT_TRUE(r.ok()) << label;
      ASSERT_EQ(r->stop_reason, StopReason::max_tokens) << label << " " << r->error;
      EXPECT_TRUE(r->mtp_used) << label;
      EXPECT_EQ(r->tokens, want->tokens) << label;
      EXPECT_EQ(r->stats.final_logits_hash, want->stats.final_logits_hash) << label;
      EXPECT_EQ(b->position(), base_backend->position()) << label;
      EXPECT_EQ(state_hash(*b), want_state) << label;
      const GenerationStats& st = r->stats;
      EXPECT_EQ(st.forward_passes, 1 + st.decode_steps + st.rerun_passes) << label;
      if (spec > 0) {
        EXPECT_EQ(st.rerun_passes, 0) << label;
      }
      if (spec > 0 && draft == kMaxDraftLen) {  // commit(m) ran for every m in 1..4
        EXPECT_GT(st.mtp_drafted[0] - st.mtp_accepted[0], 0) << "m = 1";
        EXPECT_GT(st.mtp_accepted[0] - st.mtp_accepted[1], 0) << "m = 2";
        EXPECT_GT(st.mtp_accepted[1] - st.mtp_accepted[2], 0) << "m = 3";
        EXPECT_GT(st.mtp_accepted[2], 0) << "m = 4";
      }
      std::printf("[ mtp      ] %s: drafted %lld accepted %lld/%lld/%lld, decode passes %lld, re-runs %lld\n",
                  label.c_str(), static_cast<long long>(st.mtp_drafted[0]),
                  static_cast<long long>(st.mtp_accepted[0]), static_cast<long long>(st.mtp_accepted[1]),
                  static_cast<long long>(st.mtp_accepted[2]), static_cast<long long>(st.decode_steps),
                  static_cast<long long>(st.rerun_passes));
    }
  }
}

}  // namespace
}  // namespace qc
