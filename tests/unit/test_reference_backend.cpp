// The reference backend as a qc::Backend: float vs double, prompt vs single steps, snapshot/restore,
// determinism across backends and thread counts, MTP isolation, error cases, the memory estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "random_model.h"
#include "reference/reference_backend.h"
#include "reference/reference_model.h"

namespace qc {
namespace {

std::vector<int32_t> some_tokens(int n, int vocab, int salt = 0) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((i * 97 + 13 + salt * 31) % vocab));
  return t;
}

std::unique_ptr<Backend> make(const test::RandomModel& m, RefPrecision p, int threads, int n_ctx = 64,
                              int max_batch = 32) {
  ReferenceOptions o;
  o.precision = p;
  o.n_threads = threads;
  o.n_ctx = n_ctx;
  o.max_batch = max_batch;
  auto b = make_reference_backend(m.config, m.weights, o);
  EXPECT_TRUE(b.ok()) << b.error().describe();
  if (!b.ok()) return nullptr;
  KernelConfig k;
  k.probes = true;
  EXPECT_TRUE((*b)->set_kernel_config(k).ok());
  return std::move(b).value();
}

std::vector<float> copy(std::span<const float> s) {
  return std::vector<float>(s.begin(), s.end());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs tokens one call each and returns every token's logits.
std::vector<float> run_steps(Backend& b, const std::vector<int32_t>& tokens) {
  std::vector<float> all;
  for (int32_t t : tokens) {
    auto out = b.forward(std::span<const int32_t>(&t, 1), b.position());
    EXPECT_TRUE(out.ok()) << out.error().describe();
    if (!out.ok()) return all;
    all.insert(all.end(), out->logits.begin(), out->logits.end());
  }
  return all;
}

// Float against double on the whole forward, 24 tokens, F32 and Q8_0 weights.
//
// Tolerance: derived size, checked by measurement, with margin. One f32 dot product of length K with
// random signs errs by about u sqrt(K/16) |w||x| (u = 6e-8; lanes of K/16 sequential terms), i.e. ~2e-7
// relative for K <= 128 here. Each layer adds such an error to the residual stream with O(1) gain; 4
// layers with ~6 matvecs each plus the head, adding in quadrature, give ~5 * 2e-7 = 1e-6 on O(1) logits.
// Measured worst |logit_f32 - logit_f64| over 24 tokens: 5.4e-7 for both dtypes (max |logit| ~ 2.1).
// The bound 1e-5 is ~20x the measurement and still far below a real discrepancy (a wrong head mapping or
// norm moves logits by 1e-2 or more).
TEST(RefBackend, FloatCloseToDouble) {
  for (DType t : {DType::kF32, DType::kQ8_0}) {
    test::RandomModelSpec s;
    s.dtype = t;
    s.seed = 21;
    auto m = test::make_random_model(s);
    auto f = make(*m, RefPrecision::kFloat, 2);
    auto d = make(*m, RefPrecision::kDouble, 2);
    const std::vector<int32_t> tokens = some_tokens(24, s.n_vocab);
    auto of = f->forward(tokens, 0);
    auto od = d->forward(tokens, 0);
    ASSERT_TRUE(of.ok() && od.ok());
    double worst = 0.0;
    double biggest = 0.0;
    for (size_t i = 0; i < od->logits.size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(of->logits[i]) - od->logits[i]));
      biggest = std::max(biggest, std::fabs(static_cast<double>(od->logits[i])));
    }
    EXPECT_LT(worst, 1e-5) << dtype_name(t);
    EXPECT_GT(biggest, 0.3) << "logits too small for the test to mean anything";
    std::printf("[ float vs double ] %s: max |dlogit| = %.6g, max |logit| = %.9g\n", dtype_name(t), worst,
                biggest);
  }
}

// A prompt of N tokens in one call gives exactly the bits of N single steps (same precision), also in
// the per-token hidden states.
TEST(RefBackend, PromptEqualsSingleStepsBitIdentical) {
  for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
    test::RandomModelSpec s;
    s.dtype = DType::kQ8_0;
    auto m = test::make_random_model(s);
    auto a = make(*m, p, 2);
    auto b = make(*m, p, 2);
    const std::vector<int32_t> tokens = some_tokens(9, s.n_vocab);
    auto out = a->forward(tokens, 0);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->n_tokens, 9);
    EXPECT_EQ(out->logits.size(), 9u * s.n_vocab);
    EXPECT_EQ(out->hidden.size(), 9u * s.n_embd);
    const std::vector<float> prompt = copy(out->logits);
    EXPECT_TRUE(same_bits(prompt, run_steps(*b, tokens)));
    EXPECT_EQ(a->position(), 9);
    EXPECT_EQ(b->position(), 9);
  }
}

// run, snapshot, run more, restore, rerun: identical logits; also restoring twice and into a state that
// moved on with other tokens.
TEST(RefBackend, SnapshotRestoreRerunsIdentically) {
  for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
    test::RandomModelSpec s;
    auto m = test::make_random_model(s);
    auto b = make(*m, p, 1);
    ASSERT_TRUE(b->forward(some_tokens(5, s.n_vocab), 0).ok());
    const std::unique_ptr<StateSnapshot> snap = b->snapshot();
    EXPECT_EQ(snap->position(), 5);
    const std::vector<int32_t> more = some_tokens(4, s.n_vocab, 1);
    const std::vector<float> first = run_steps(*b, more);
    ASSERT_TRUE(b->restore(*snap).ok());
    EXPECT_EQ(b->position(), 5);
    EXPECT_TRUE(same_bits(first, run_steps(*b, more)));
    // Diverge with other tokens, then come back.
    ASSERT_TRUE(b->restore(*snap).ok());
    const std::vector<float> other = run_steps(*b, some_tokens(3, s.n_vocab, 2));
    EXPECT_FALSE(same_bits(std::vector<float>(first.begin(), first.begin() + 3 * s.n_vocab), other));
    ASSERT_TRUE(b->restore(*snap).ok());
    EXPECT_TRUE(same_bits(first, run_steps(*b, more)));
  }
}

// Two backends on the same model, 1 and 2 threads (and 3): identical bits, main model and MTP.
TEST(RefBackend, DeterministicAcrossBackendsAndThreadCounts) {
  for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
    test::RandomModelSpec s;
    s.dtype = DType::kQ8_0;
    s.n_vocab = 2048;  // enough lm_head rows that the split really uses every thread
    auto m = test::make_random_model(s);
    const std::vector<int32_t> tokens = some_tokens(12, s.n_vocab);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 2, 3}) {
      auto b = make(*m, p, threads);
      auto out = b->forward(tokens, 0);
      ASSERT_TRUE(out.ok());
      std::vector<float> r = copy(out->logits);
      const std::vector<float> h = copy(out->hidden);
      auto mtp = b->mtp_forward(7, std::span<const float>(h).subspan(h.size() - s.n_embd), 11);
      ASSERT_TRUE(mtp.ok());
      r.insert(r.end(), mtp->logits.begin(), mtp->logits.end());
      results.push_back(r);
    }
    for (size_t i = 1; i < results.size(); ++i) EXPECT_TRUE(same_bits(results[0], results[i])) << "run " << i;
  }
}

TEST(RefBackend, ErrorCasesLeaveStateUntouched) {
  test::RandomModelSpec s;
  auto m = test::make_random_model(s);
  auto b = make(*m, RefPrecision::kFloat, 1, /*n_ctx=*/8, /*max_batch=*/4);
  ASSERT_TRUE(b->forward(some_tokens(3, s.n_vocab), 0).ok());
  const std::unique_ptr<StateSnapshot> snap = b->snapshot();
  const std::vector<float> expected = run_steps(*b, {5});
  ASSERT_TRUE(b->restore(*snap).ok());

  const int32_t good[1] = {5};
  const int32_t too_big[1] = {s.n_vocab};
  const int32_t negative[2] = {1, -1};
  EXPECT_FALSE(b->forward(good, 2).ok());                        // position behind
  EXPECT_FALSE(b->forward(good, 4).ok());                        // position ahead
  EXPECT_FALSE(b->forward(too_big, 3).ok());                     // token out of range
  EXPECT_FALSE(b->forward(negative, 3).ok());                    // second token bad
  EXPECT_FALSE(b->forward(std::span<const int32_t>(), 3).ok());  // no tokens
  EXPECT_FALSE(b->forward(some_tokens(5, s.n_vocab), 3).ok());   // more than max_batch
  EXPECT_EQ(b->position(), 3);
  EXPECT_TRUE(same_bits(expected, run_steps(*b, {5})));  // nothing above touched the state

  // Context full: 4 positions used of 8; 5 more do not fit, 4 do, then one more does not.
  auto fits = b->forward(some_tokens(4, s.n_vocab), 4);
  ASSERT_TRUE(fits.ok()) << fits.error().describe();
  auto full = b->forward(good, 8);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.error().message.find("n_ctx = 8"), std::string::npos) << full.error().message;

  // MTP argument checks.
  std::vector<float> h(static_cast<size_t>(s.n_embd), 0.5f);
  EXPECT_FALSE(b->mtp_forward(s.n_vocab, h, 0).ok());
  EXPECT_FALSE(b->mtp_forward(1, std::span<const float>(h).first(3), 0).ok());
  EXPECT_FALSE(b->mtp_forward(1, h, 8).ok());
  EXPECT_FALSE(b->mtp_forward(1, h, -1).ok());
  EXPECT_TRUE(b->mtp_forward(1, h, 7).ok());

  // Snapshots: not from another backend, not across reset().
  auto other = make(*m, RefPrecision::kFloat, 1, 8, 4);
  EXPECT_FALSE(other->restore(*snap).ok());
  b->reset();
  EXPECT_EQ(b->position(), 0);
  EXPECT_FALSE(b->restore(*snap).ok());
}

TEST(RefBackend, RejectsBadOptionsAndMismatchedWeights) {
  test::RandomModelSpec s;
  auto m = test::make_random_model(s);
  ReferenceOptions o;
  o.n_ctx = 0;
  EXPECT_FALSE(make_reference_backend(m->config, m->weights, o).ok());
  o.n_ctx = 16;
  o.max_batch = 0;
  EXPECT_FALSE(make_reference_backend(m->config, m->weights, o).ok());
  o.max_batch = 4;
  o.n_threads = -1;
  EXPECT_FALSE(make_reference_backend(m->config, m->weights, o).ok());
  o.n_threads = 1;
  ASSERT_TRUE(make_reference_backend(m->config, m->weights, o).ok());

  {  // a projection with the wrong shape: the error names the tensor, expected and actual
    ModelWeights w = m->weights;
    w.layers[1].attn.wk.rows += 1;
    auto r = make_reference_backend(m->config, w, o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("blk.1.attn_k"), std::string::npos) << r.error().message;
  }
  {  // a missing tensor
    ModelWeights w = m->weights;
    w.layers[0].gdn.conv1d.data = nullptr;
    EXPECT_FALSE(make_reference_backend(m->config, w, o).ok());
  }
  {  // layer kinds that disagree with the config
    ModelWeights w = m->weights;
    w.layers[0].recurrent = false;
    EXPECT_FALSE(make_reference_backend(m->config, w, o).ok());
  }
  {  // KV heads that do not divide the query heads
    ModelConfig c = m->config;
    c.n_head_kv[1] = 3;
    EXPECT_FALSE(make_reference_backend(c, m->weights, o).ok());
  }
  {  // too few layers
    ModelWeights w = m->weights;
    w.layers.pop_back();
    EXPECT_FALSE(make_reference_backend(m->config, w, o).ok());
  }
}

// The MTP block returns one token's logits and hidden state, writes only its own KV cache and leaves the
// main model's state alone: the main model's next logits are the same bits with or without MTP calls.
TEST(RefBackend, MtpShapeAndLeavesMainStateUntouched) {
  test::RandomModelSpec s;
  s.dtype = DType::kQ8_0;
  auto m = test::make_random_model(s);
  auto a = make(*m, RefPrecision::kFloat, 2);
  auto b = make(*m, RefPrecision::kFloat, 2);
  ASSERT_TRUE(a->has_mtp());
  const std::vector<int32_t> tokens = some_tokens(6, s.n_vocab);
  auto oa = a->forward(tokens, 0);
  ASSERT_TRUE(oa.ok());
  const std::vector<float> h = copy(oa->hidden);
  ASSERT_TRUE(b->forward(tokens, 0).ok());
  const std::vector<float> norms_before = copy(a->layer_norms());

  // Chained drafts: the second call feeds the first call's own hidden output (aliasing the output buffer).
  auto d1 = a->mtp_forward(tokens[5], std::span<const float>(h).subspan(4 * s.n_embd, s.n_embd), 4);
  ASSERT_TRUE(d1.ok());
  EXPECT_EQ(d1->n_tokens, 1);
  EXPECT_EQ(d1->logits.size(), static_cast<size_t>(s.n_vocab));
  EXPECT_EQ(d1->hidden.size(), static_cast<size_t>(s.n_embd));
  const std::vector<float> first_draft = copy(d1->logits);
  auto d2 = a->mtp_forward(3, d1->hidden, 5);
  ASSERT_TRUE(d2.ok());
  EXPECT_FALSE(same_bits(first_draft, copy(d2->logits)));
  EXPECT_EQ(a->position(), 6);
  EXPECT_TRUE(same_bits(norms_before, copy(a->layer_norms())));

  const std::vector<int32_t> next = some_tokens(3, s.n_vocab, 5);
  EXPECT_TRUE(same_bits(run_steps(*a, next), run_steps(*b, next)));

  // Without an MTP block the call is an error, not a crash.
  test::RandomModelSpec s2;
  s2.mtp = false;
  auto m2 = test::make_random_model(s2);
  auto c = make(*m2, RefPrecision::kFloat, 1);
  EXPECT_FALSE(c->has_mtp());
  EXPECT_FALSE(c->mtp_forward(1, std::span<const float>(h).first(s.n_embd), 0).ok());
}

TEST(RefBackend, StateBytesMatchAllocationAndInfo) {
  for (bool mtp : {true, false}) {
    for (RefPrecision p : {RefPrecision::kFloat, RefPrecision::kDouble}) {
      test::RandomModelSpec s;
      s.mtp = mtp;
      auto m = test::make_random_model(s);
      ReferenceOptions o;
      o.precision = p;
      o.n_ctx = 100;
      o.max_batch = 7;
      o.n_threads = 1;
      const uint64_t estimate = reference_state_bytes(m->config, o);
      uint64_t allocated = 0;
      if (p == RefPrecision::kFloat) {
        allocated = ref::ReferenceModel<float>(m->config, m->weights, o).allocated_bytes();
      } else {
        allocated = ref::ReferenceModel<double>(m->config, m->weights, o).allocated_bytes();
      }
      EXPECT_EQ(estimate, allocated);
      auto b = make_reference_backend(m->config, m->weights, o);
      ASSERT_TRUE(b.ok());
      EXPECT_EQ((*b)->info().memory_bytes, estimate);
      EXPECT_EQ((*b)->info().name, p == RefPrecision::kFloat ? "cpu-f32" : "cpu-f64");
      EXPECT_EQ((*b)->n_ctx(), 100);
    }
  }
  // The KV cache grows linearly with n_ctx: 2 attention layers + MTP, K and V, 2 heads x 32, f32.
  test::RandomModelSpec s;
  auto m = test::make_random_model(s);
  ReferenceOptions o;
  o.n_ctx = 10;
  const uint64_t small = reference_state_bytes(m->config, o);
  o.n_ctx = 11;
  const uint64_t per_token = reference_state_bytes(m->config, o) - small;
  EXPECT_EQ(per_token, 3u * 2 * 2 * 32 * 4 + 4u * s.n_head);  // + one row of attention scores per head
}

TEST(RefBackend, ProbesOffGivesNoLayerNorms) {
  test::RandomModelSpec s;
  auto m = test::make_random_model(s);
  ReferenceOptions o;
  o.n_ctx = 8;
  auto b = make_reference_backend(m->config, m->weights, o);
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE((*b)->forward(some_tokens(2, s.n_vocab), 0).ok());
  EXPECT_TRUE((*b)->layer_norms().empty());
}

// Probes switch between calls (KernelConfig::probes, no rebuild) and change no output bit.
TEST(RefBackend, ProbesSwitchLiveWithoutChangingOutputs) {
  test::RandomModelSpec s;
  auto m = test::make_random_model(s);
  ReferenceOptions o;
  o.n_ctx = 8;
  auto b = make_reference_backend(m->config, m->weights, o);
  ASSERT_TRUE(b.ok());
  Backend& be = **b;
  const std::vector<int32_t> tokens = some_tokens(3, s.n_vocab);
  auto off = be.forward(tokens, 0);
  ASSERT_TRUE(off.ok());
  const std::vector<float> logits_off = copy(off->logits);
  EXPECT_TRUE(be.layer_norms().empty());
  KernelConfig k;
  k.probes = true;
  ASSERT_TRUE(be.set_kernel_config(k).ok());
  EXPECT_TRUE(be.layer_norms().empty());  // nothing computed under the new setting yet
  be.reset();
  auto on = be.forward(tokens, 0);
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(same_bits(copy(on->logits), logits_off));
  ASSERT_EQ(be.layer_norms().size(), static_cast<size_t>(m->config.n_layer));
  for (float n : be.layer_norms()) EXPECT_GT(n, 0.0f);
  // An invalid config is refused whole: the probes stay on.
  k.probes = false;
  k.split_k = 99;
  EXPECT_FALSE(be.set_kernel_config(k).ok());
  ASSERT_TRUE(be.forward(some_tokens(1, s.n_vocab), 3).ok());
  EXPECT_FALSE(be.layer_norms().empty());
}

}  // namespace
}  // namespace qc
