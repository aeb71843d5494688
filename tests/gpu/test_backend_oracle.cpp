// The CUDA backend against the CPU double-precision oracle (make_backend kCpuF64) on whole models: logits
// and hidden states over a token sequence for every GEMV variant, dense-weight models, the MTP block and
// the per-layer probes. Skipped without a device.
// Bounds: oracle_bounds.h (derivation there).
#include <cstdio>

#include "backend_test_util.h"
#include "oracle_bounds.h"

namespace qc::cuda::test {
namespace {

struct Worst {
  double logits = 0.0, hidden = 0.0;
};
Worst worst_distance(const SeqOut& g, const SeqOut& r, size_t n, size_t V, size_t H) {
  Worst w;
  for (size_t i = 0; i < n; ++i) {
    w.logits = std::max(w.logits, rel_dist(g.logits, r.logits, i, V));
    w.hidden = std::max(w.hidden, rel_dist(g.hidden, r.hidden, i, H));
  }
  return w;
}

TEST(CudaBackend, EveryVariantMatchesOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  auto oracle = make_oracle(*model);
  const auto tokens = random_tokens(12, c.n_vocab, 7);
  const SeqOut ref = run_sequence(*oracle, tokens, {12});
  auto gpu = make_cuda(*model, KernelConfig{});
  for (int i = 0; i < kGemvVariantCount; ++i) {
    const auto v = static_cast<GemvVariant>(i);
    KernelConfig k = config_with(v);
    k.split_k = 3;
    ASSERT_TRUE(gpu->set_kernel_config(k).ok());
    // A 5-token call (chunks of 4 and 1), then single steps: prompt and decode paths both.
    const SeqOut out = run_sequence(*gpu, tokens, {5, 1});
    ASSERT_EQ(out.logits.size(), ref.logits.size());
    const Worst w = worst_distance(out, ref, tokens.size(), static_cast<size_t>(c.n_vocab),
                                   static_cast<size_t>(c.n_embd));
    const double b = oracle_bound(v);
    std::printf("[ distance ] %-7s logits %.3e  hidden %.3e  (bound %.3e)\n", gemv_variant_name(v), w.logits,
                w.hidden, b);
    EXPECT_LT(w.logits, b) << gemv_variant_name(v);
    EXPECT_LT(w.hidden, b) << gemv_variant_name(v);
  }
}

// Dense weights run through gemv_dense with f32 activations: only the floor separates them from the
// oracle. F32 with a tied lm_head (the embedding table), BF16 with a separate one.
TEST(CudaBackend, DenseWeightModelsMatchOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  for (const auto& [type, tied] : {std::pair{DType::kF32, true}, std::pair{DType::kBF16, false}}) {
    auto model = load_model(type, tied);
    const auto& c = model->config();
    auto oracle = make_oracle(*model);
    const auto tokens = random_tokens(10, c.n_vocab, 11);
    const SeqOut ref = run_sequence(*oracle, tokens, {10});
    auto gpu = make_cuda(*model, KernelConfig{});
    const SeqOut out = run_sequence(*gpu, tokens, {3, 1});
    const Worst w = worst_distance(out, ref, tokens.size(), static_cast<size_t>(c.n_vocab),
                                   static_cast<size_t>(c.n_embd));
    std::printf("[ distance ] %s%s model: logits %.3e  hidden %.3e  (bound %.3e)\n", dtype_name(type),
                tied ? " tied" : "", w.logits, w.hidden, kDecodeFloor);
    EXPECT_LT(w.logits, kDecodeFloor) << dtype_name(type);
    EXPECT_LT(w.hidden, kDecodeFloor) << dtype_name(type);
  }
}

// The MTP block on the device: every position of a sequence, each backend fed its own hidden states (the
// chain the generator runs). Q gains the block's 6 quantised inputs; 33 + 6 -> the h bound grows by
// sqrt(39/33), which the tile (hl) bound used here absorbs: 4 sqrt(39) 1e-4 + floor = 5.3e-3.
TEST(CudaBackend, MtpDraftsMatchOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  ASSERT_GT(c.n_mtp, 0);
  auto oracle = make_oracle(*model);
  auto gpu = make_cuda(*model, config_with(GemvVariant::kTile));
  ASSERT_TRUE(gpu->has_mtp());
  const auto tokens = random_tokens(9, c.n_vocab, 13);
  const SeqOut ref = run_sequence(*oracle, tokens, {9});
  const SeqOut out = run_sequence(*gpu, tokens, {4, 1});
  const size_t H = static_cast<size_t>(c.n_embd), V = static_cast<size_t>(c.n_vocab);
  const double b = oracle_bound(ActFormat::kHL, 39.0);
  double worst_l = 0.0, worst_h = 0.0;
  for (size_t q = 0; q + 1 < tokens.size(); ++q) {
    auto r = oracle->mtp_forward(tokens[q + 1], std::span<const float>(ref.hidden).subspan(q * H, H),
                                 static_cast<int>(q));
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const std::vector<float> rl(r->logits.begin(), r->logits.end()), rh(r->hidden.begin(), r->hidden.end());
    auto g = gpu->mtp_forward(tokens[q + 1], std::span<const float>(out.hidden).subspan(q * H, H),
                              static_cast<int>(q));
    ASSERT_TRUE(g.ok()) << g.error().describe();
    ASSERT_EQ(g->logits.size(), V);
    const std::vector<float> gl(g->logits.begin(), g->logits.end()), gh(g->hidden.begin(), g->hidden.end());
    worst_l = std::max(worst_l, rel_dist(gl, rl, 0, V));
    worst_h = std::max(worst_h, rel_dist(gh, rh, 0, H));
  }
  std::printf("[ distance ] MTP logits %.3e  hidden %.3e  (bound %.3e)\n", worst_l, worst_h, b);
  EXPECT_LT(worst_l, b);
  EXPECT_LT(worst_h, b);
  // The main model's state is untouched by the MTP calls: the next token matches a run without them.
  auto again = gpu->forward(std::span<const int32_t>(tokens.data(), 1), gpu->position());
  ASSERT_TRUE(again.ok()) << again.error().describe();
  auto fresh = make_cuda(*model, config_with(GemvVariant::kTile));
  std::vector<int32_t> longer = tokens;
  longer.push_back(tokens[0]);
  const SeqOut plain = run_sequence(*fresh, longer, {4, 1});
  const std::vector<float> last(again->logits.begin(), again->logits.end());
  const std::vector<float> want(plain.logits.end() - static_cast<long>(V), plain.logits.end());
  EXPECT_TRUE(same_bits(last, want)) << "mtp_forward changed the main model's state";
}

// Per-layer L2 norms of the residual stream (probe kernel, copied back after the step) against the
// oracle's, for the last token of the last call; same bound as the hidden state (tile: hl).
TEST(CudaBackend, LayerNormsMatchOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  auto oracle = make_oracle(*model, /*probes=*/true);
  KernelConfig k = config_with(GemvVariant::kTile);
  k.probes = true;
  auto gpu = make_cuda(*model, k);
  const auto tokens = random_tokens(6, c.n_vocab, 17);
  (void)run_sequence(*oracle, tokens, {6});
  (void)run_sequence(*gpu, tokens, {4, 2});
  const auto r = oracle->layer_norms();
  const auto g = gpu->layer_norms();
  ASSERT_EQ(r.size(), static_cast<size_t>(c.n_layer));
  ASSERT_EQ(g.size(), r.size());
  const double b = oracle_bound(GemvVariant::kTile);
  for (size_t l = 0; l < r.size(); ++l) {
    ASSERT_GT(r[l], 0.0f);
    EXPECT_LT(std::fabs(g[l] - r[l]) / r[l], b) << "layer " << l << ": gpu " << g[l] << " oracle " << r[l];
  }
  // Probes off: no norms.
  k.probes = false;
  ASSERT_TRUE(gpu->set_kernel_config(k).ok());
  (void)run_sequence(*gpu, tokens, {1});
  EXPECT_TRUE(gpu->layer_norms().empty());
}

// Probes only read the residual stream: switching them changes no output bit (why the worker keeps the
// kept states when only probes change, engine/runtime/worker.cpp), graph and eager alike.
TEST(CudaBackend, ProbesChangeNoOutputBit) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(6, model->config().n_vocab, 23);
  for (const bool graph : {true, false}) {
    KernelConfig k = config_with(GemvVariant::kTile);
    k.cuda_graph = graph;
    auto gpu = make_cuda(*model, k);
    const SeqOut off = run_sequence(*gpu, tokens, {4, 1});
    k.probes = true;
    ASSERT_TRUE(gpu->set_kernel_config(k).ok());
    const SeqOut on = run_sequence(*gpu, tokens, {4, 1});
    EXPECT_FALSE(gpu->layer_norms().empty());
    EXPECT_TRUE(same_bits(on.logits, off.logits)) << "graph " << graph;
    EXPECT_TRUE(same_bits(on.hidden, off.hidden)) << "graph " << graph;
  }
}

}  // namespace
}  // namespace qc::cuda::test
