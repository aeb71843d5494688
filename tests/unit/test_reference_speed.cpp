// Speed of the float reference on small Q8_0 models, 1 and 2 threads. Disabled by default (no timing in
// the test run); run with
//   qwenchat_unit_tests --gtest_also_run_disabled_tests --gtest_filter='RefSpeed.*'
// It prints ms/token; the only assertion is that the runs succeed and agree bit for bit.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "random_model.h"
#include "reference/reference_backend.h"

namespace qc {
namespace {

void time_model(const test::RandomModelSpec& s, const char* label, int n_tokens) {
  auto m = test::make_random_model(s);
  std::vector<float> first;
  for (int threads : {1, 2}) {
    ReferenceOptions o;
    o.n_threads = threads;
    o.n_ctx = n_tokens + 8;
    auto b = make_reference_backend(m->config, m->weights, o);
    ASSERT_TRUE(b.ok()) << b.error().describe();
    Backend& be = **b;
    std::vector<float> logits;
    int32_t tok = 1;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n_tokens; ++i) {
      auto out = be.forward(std::span<const int32_t>(&tok, 1), i);
      ASSERT_TRUE(out.ok());
      tok = static_cast<int32_t>((tok * 31 + 7) % s.n_vocab);
      if (i == n_tokens - 1) logits.assign(out->logits.begin(), out->logits.end());
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ speed ] %s, %d thread(s): %.2f ms/token (%d tokens)\n", label, threads, ms / n_tokens,
                n_tokens);
    if (first.empty()) {
      first = logits;
    } else {
      EXPECT_EQ(0, std::memcmp(first.data(), logits.data(), first.size() * sizeof(float)));
    }
  }
}

TEST(RefSpeed, DISABLED_SmallModelMsPerToken) {
  test::RandomModelSpec s;
  s.n_vocab = 8192;
  s.n_embd = 256;
  s.n_layer = 4;
  s.attention_interval = 4;
  s.n_ff = 896;
  s.n_head = 4;
  s.n_kv = 2;
  s.head_dim = 64;
  s.rope_dims = 16;
  s.ssm_k_heads = 4;
  s.ssm_v_heads = 8;
  s.ssm_k_dim = 32;
  s.ssm_v_dim = 32;
  s.dtype = DType::kQ8_0;
  time_model(s, "H=256 4 layers vocab 8192 Q8_0", 200);
}

// The shapes of Qwen3.5-0.8B (H=1024, 24 layers, FFN 3584, 8/2 heads x 256, GDN 16/16 x 128,
// vocab 248320, tied embeddings), Q8_0: about 0.8 GB of random weights.
TEST(RefSpeed, DISABLED_Qwen08BShapeMsPerToken) {
  test::RandomModelSpec s;
  s.n_vocab = 248320;
  s.n_embd = 1024;
  s.n_layer = 24;
  s.attention_interval = 4;
  s.n_ff = 3584;
  s.n_head = 8;
  s.n_kv = 2;
  s.head_dim = 256;
  s.rope_dims = 64;
  s.rope_theta = 1e7f;
  s.ssm_k_heads = 16;
  s.ssm_v_heads = 16;
  s.ssm_k_dim = 128;
  s.ssm_v_dim = 128;
  s.tied = true;
  s.mtp = false;
  s.dtype = DType::kQ8_0;
  time_model(s, "Qwen3.5-0.8B shapes Q8_0", 8);
}

}  // namespace
}  // namespace qc
