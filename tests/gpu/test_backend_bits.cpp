// Bit-level properties of the CUDA backend: variants of one identity class (qwenchat_kernels/gemv_variant.h) give the same
// greedy token stream and logits hash; the CUDA graph, PDL and the fusions change no bit; two runs give
// the same bits; a prompt in one call equals single steps; snapshot/restore replays exactly; a kernel-config
// change re-captures; greedy with MTP equals greedy without. Plus errors, memory accounting, no device.
#include <cmath>
#include <cstdio>

#include "backend_test_util.h"

namespace qc::cuda::test {
namespace {

constexpr int kNewTokens = 16;

TEST(CudaBackend, IdentityClassesGiveIdenticalGreedyStreams) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto prompt = random_tokens(6, model->config().n_vocab, 3);
  auto gpu = make_cuda(*model, KernelConfig{});
  struct Member {
    std::string label;
    KernelConfig k;
  };
  auto member = [](GemvVariant v, const char* what, bool fuse, bool graph, bool pdl) {
    KernelConfig k = config_with(v);
    k.fuse_gate_up = fuse;
    k.fuse_residual_norm_quant = fuse;
    k.cuda_graph = graph;
    k.programmatic_launch = pdl;
    return Member{std::string(gemv_variant_name(v)) + what, k};
  };
  const std::vector<std::vector<Member>> classes = {
      {member(GemvVariant::kH, "", true, true, true), member(GemvVariant::kHU, "", true, true, true),
       member(GemvVariant::kH2, "", true, true, true), member(GemvVariant::kTileH, "", true, true, true),
       member(GemvVariant::kTileH, " unfused", false, true, true),
       member(GemvVariant::kTileH, " eager", true, false, true)},
      {member(GemvVariant::kHL, "", true, true, true), member(GemvVariant::kHLU, "", true, true, true),
       member(GemvVariant::kHLU4, "", true, true, true), member(GemvVariant::kHL2, "", true, true, true),
       member(GemvVariant::kTile, "", true, true, true),
       member(GemvVariant::kTile, " unfused", false, true, true),
       member(GemvVariant::kTile, " eager", true, false, true),
       member(GemvVariant::kTile, " no-pdl", true, true, false)},
  };
  for (const auto& cls : classes) {
    GreedyRun first;
    for (size_t i = 0; i < cls.size(); ++i) {
      ASSERT_TRUE(gpu->set_kernel_config(cls[i].k).ok());
      const GreedyRun g = greedy(*gpu, prompt, kNewTokens);
      ASSERT_EQ(g.tokens.size(), static_cast<size_t>(kNewTokens)) << cls[i].label;
      if (i == 0) {
        first = g;
        std::printf("[ greedy   ] class of %s: hash %s\n", cls[i].label.c_str(), g.final_hash.c_str());
        continue;
      }
      EXPECT_EQ(g.tokens, first.tokens) << cls[i].label << " vs " << cls[0].label;
      EXPECT_EQ(g.final_hash, first.final_hash) << cls[i].label << " vs " << cls[0].label;
    }
  }
}

TEST(CudaBackend, GraphAndEagerGiveIdenticalBits) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(9, model->config().n_vocab, 5);
  auto gpu = make_cuda(*model, KernelConfig{});
  for (GemvVariant v : {GemvVariant::kTile, GemvVariant::kH, GemvVariant::kSplitK, GemvVariant::kDeq}) {
    KernelConfig k = config_with(v);
    ASSERT_TRUE(gpu->set_kernel_config(k).ok());
    const SeqOut graph = run_sequence(*gpu, tokens, {3, 1});
    k.cuda_graph = false;
    ASSERT_TRUE(gpu->set_kernel_config(k).ok());
    const SeqOut eager = run_sequence(*gpu, tokens, {3, 1});
    EXPECT_TRUE(same_bits(graph.logits, eager.logits)) << gemv_variant_name(v);
    EXPECT_TRUE(same_bits(graph.hidden, eager.hidden)) << gemv_variant_name(v);
  }
}

TEST(CudaBackend, TwoRunsSameLogitsHash) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(10, model->config().n_vocab, 9);
  auto a = make_cuda(*model, KernelConfig{});
  const uint64_t h1 = fnv1a(run_sequence(*a, tokens, {4, 1}).logits);
  const uint64_t h2 = fnv1a(run_sequence(*a, tokens, {4, 1}).logits);  // same backend after reset()
  auto b = make_cuda(*model, KernelConfig{});
  const uint64_t h3 = fnv1a(run_sequence(*b, tokens, {4, 1}).logits);  // a fresh backend
  std::printf("[ hash     ] logits hash %016llx\n", static_cast<unsigned long long>(h1));
  EXPECT_EQ(h1, h2);
  EXPECT_EQ(h1, h3);
}

// The decode attention's K / V batch (CudaBackendOptions::attention_kv_ahead, kernels/attention.cu) changes
// no bit of a whole model's logits: 70 positions, so a warp walks several batches of its split; and an
// unknown batch is an error naming the option.
TEST(CudaBackend, AttentionKvAheadChangesNoBit) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(70, model->config().n_vocab, 71);
  std::vector<SeqOut> runs;
  for (int ahead : {1, 4}) {
    CudaBackendOptions o;
    o.n_ctx = 512;
    o.attention_kv_ahead = ahead;
    auto b = CudaBackend::create(model->config(), model->weights(), o);
    ASSERT_TRUE(b.ok()) << b.error().describe();
    runs.push_back(run_sequence(**b, tokens, {4, 1}));
  }
  EXPECT_TRUE(same_bits(runs[0].logits, runs[1].logits));
  EXPECT_TRUE(same_bits(runs[0].hidden, runs[1].hidden));
  CudaBackendOptions bad;
  bad.n_ctx = 512;
  bad.attention_kv_ahead = 3;
  auto b = CudaBackend::create(model->config(), model->weights(), bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("attention_kv_ahead must be 0 (default), 1 or 4, got 3"), std::string::npos)
      << b.error().message;
}

// N tokens in one call (chunks of 4: one weight pass for 4 rows) against N single steps: the same bits.
// The GEMVs give a row the bits of an M = 1 run and attention splits a row's sequence by a length that
// depends on its position alone (kernels/attention.h), so how a prompt is cut into calls changes no bit
// (what conversation state reuse relies on, runtime/prefix_cache.h).
TEST(CudaBackend, MultiTokenForwardEqualsSingleSteps) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const size_t V = static_cast<size_t>(model->config().n_vocab);
  const auto tokens = random_tokens(10, static_cast<int>(V), 21);
  auto gpu = make_cuda(*model, KernelConfig{});
  for (GemvVariant v : {GemvVariant::kTile, GemvVariant::kHL2, GemvVariant::kSplitK}) {
    ASSERT_TRUE(gpu->set_kernel_config(config_with(v)).ok());
    const SeqOut batch = run_sequence(*gpu, tokens, {10});
    const SeqOut single = run_sequence(*gpu, tokens, {1});
    double worst = 0.0;
    for (size_t r = 0; r < tokens.size(); ++r) {
      EXPECT_EQ(argmax_row(batch.logits, r, V), argmax_row(single.logits, r, V))
          << gemv_variant_name(v) << " row " << r;
      worst = std::max(worst, rel_dist(batch.logits, single.logits, r, V));
    }
    std::printf("[ batch    ] %-5s 10 tokens in one call vs single steps: max rel diff %.3e, bits %s\n",
                gemv_variant_name(v), worst, same_bits(batch.logits, single.logits) ? "equal" : "differ");
    EXPECT_TRUE(same_bits(batch.logits, single.logits)) << gemv_variant_name(v);
    EXPECT_TRUE(same_bits(batch.hidden, single.hidden)) << gemv_variant_name(v);
  }
}

TEST(CudaBackend, SnapshotRestoreReplaysExactly) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(16, model->config().n_vocab, 23);
  auto gpu = make_cuda(*model, KernelConfig{});
  gpu->reset();
  ASSERT_TRUE(gpu->forward(std::span<const int32_t>(tokens.data(), 5), 0).ok());
  auto snap = gpu->snapshot();
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(snap->position(), 5);
  auto first = gpu->forward(std::span<const int32_t>(tokens.data() + 5, 3), 5);
  ASSERT_TRUE(first.ok());
  const std::vector<float> a(first->logits.begin(), first->logits.end());
  // Run far past the snapshot (more positions than the conv ring holds), then roll back.
  ASSERT_TRUE(gpu->forward(std::span<const int32_t>(tokens.data() + 8, 8), 8).ok());
  ASSERT_TRUE(gpu->restore(*snap).ok());
  EXPECT_EQ(gpu->position(), 5);
  auto second = gpu->forward(std::span<const int32_t>(tokens.data() + 5, 3), 5);
  ASSERT_TRUE(second.ok());
  const std::vector<float> b(second->logits.begin(), second->logits.end());
  EXPECT_TRUE(same_bits(a, b));
  // A snapshot from before reset() is refused; so is one of another backend.
  gpu->reset();
  EXPECT_FALSE(gpu->restore(*snap).ok());
  auto other = make_cuda(*model, KernelConfig{});
  auto foreign = other->snapshot();
  ASSERT_NE(foreign, nullptr);
  EXPECT_FALSE(gpu->restore(*foreign).ok());
}

// A config change drops the captured graphs: a backend switched from tile to h gives the bits of a backend
// that ran h from the start.
TEST(CudaBackend, KernelConfigChangeRecaptures) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto tokens = random_tokens(6, model->config().n_vocab, 29);
  auto a = make_cuda(*model, config_with(GemvVariant::kTile));
  const SeqOut tile = run_sequence(*a, tokens, {2, 1});
  ASSERT_TRUE(a->set_kernel_config(config_with(GemvVariant::kH)).ok());
  const SeqOut switched = run_sequence(*a, tokens, {2, 1});
  auto b = make_cuda(*model, config_with(GemvVariant::kH));
  const SeqOut h = run_sequence(*b, tokens, {2, 1});
  EXPECT_TRUE(same_bits(switched.logits, h.logits));
  EXPECT_FALSE(same_bits(tile.logits, h.logits)) << "tile (hl) and h activations should differ in bits";
  KernelConfig bad;
  bad.split_k = 99;
  EXPECT_FALSE(a->set_kernel_config(bad).ok());
}

// ARCHITECTURE.md invariant: greedy decoding with MTP gives exactly the tokens of greedy decoding without.
TEST(CudaBackend, GreedyWithMtpEqualsGreedyWithout) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto prompt = random_tokens(5, model->config().n_vocab, 31);
  auto gpu = make_cuda(*model, KernelConfig{});
  const GreedyRun plain = greedy(*gpu, prompt, 20);
  for (int draft = 1; draft <= 3; ++draft) {
    const GreedyRun mtp = greedy(*gpu, prompt, 20, draft);
    EXPECT_EQ(mtp.tokens, plain.tokens) << "draft " << draft;
    std::printf("[ mtp      ] draft %d: first-position acceptance %.2f (random weights)\n", draft,
                mtp.mtp_acceptance);
  }
}

TEST(CudaBackend, ErrorsLeaveTheStateUntouched) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const int V = model->config().n_vocab;
  auto gpu = make_cuda(*model, KernelConfig{}, /*n_ctx=*/16);
  const auto tokens = random_tokens(20, V, 37);
  ASSERT_TRUE(gpu->forward(std::span<const int32_t>(tokens.data(), 3), 0).ok());
  EXPECT_FALSE(gpu->forward(std::span<const int32_t>(tokens.data(), 1), 2).ok());  // wrong position
  const std::vector<int32_t> bad = {5, V};
  EXPECT_FALSE(gpu->forward(bad, 3).ok());  // outside the vocabulary
  EXPECT_FALSE(
      gpu->forward(std::span<const int32_t>(tokens.data(), 14), 3).ok());  // context full (3 + 14 > 16)
  EXPECT_FALSE(gpu->forward({}, 3).ok());
  std::vector<int32_t> many(65, 1);
  EXPECT_FALSE(gpu->forward(many, 3).ok());  // more than max_batch
  const std::vector<float> short_hidden(3, 0.0f);
  EXPECT_FALSE(gpu->mtp_forward(1, short_hidden, 0).ok());
  EXPECT_EQ(gpu->position(), 3);
  // The state is intact: continuing gives the bits of a clean run.
  auto cont = gpu->forward(std::span<const int32_t>(tokens.data() + 3, 2), 3);
  ASSERT_TRUE(cont.ok()) << cont.error().describe();
  const std::vector<float> got(cont->logits.begin(), cont->logits.end());
  auto clean = make_cuda(*model, KernelConfig{}, 16);
  const SeqOut ref = run_sequence(*clean, std::vector<int32_t>(tokens.begin(), tokens.begin() + 5), {3, 2});
  const std::vector<float> want(ref.logits.end() - static_cast<long>(2 * V), ref.logits.end());
  EXPECT_TRUE(same_bits(got, want));
}

TEST(CudaBackend, MemoryEstimateIsTheAllocation) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  auto gpu = make_cuda(*model, KernelConfig{}, 1024);
  const MemoryEstimate& m = CudaProbe::memory(*gpu);
  EXPECT_EQ(gpu->info().memory_bytes, m.resident());
  EXPECT_GT(m.weights, 0u);
  // KV cache: 2 attention layers + the MTP block, K and V, 2 heads x 1024 positions x 128 dims of f16.
  EXPECT_EQ(m.kv_cache, 3u * 2u * 2u * 1024u * 128u * 2u);
  // GDN state history of the speculative forward: kMaxTokens - 1 = 3 slots of the 6 GDN layers' states
  // (4 value heads x 64 x 64 f32); the model has an MTP block, so it is allocated.
  EXPECT_EQ(m.history, 3u * 6u * 4u * 64u * 64u * 4u);
  auto snap = gpu->snapshot();
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ(gpu->info().memory_bytes, m.resident() + m.snapshot);
  std::printf("[ memory   ] %s\n", m.describe().c_str());
  // The read ceiling is measured at load (a temporary buffer here: the weights are far below 512 MiB). No
  // speed is asserted (speed belongs to the benchmark), only that a measurement happened and is a rate.
  const double ceiling = gpu->info().read_ceiling_gbs;
  EXPECT_TRUE(std::isfinite(ceiling) && ceiling > 0.0) << ceiling;
  std::printf("[ memory   ] read ceiling measured at load: %.0f GB/s\n", ceiling);

  // Planned against 1 MiB of free memory, the load fails with the sizes named.
  CudaBackendOptions o;
  o.n_ctx = 1024;
  o.memory_limit = 1u << 20;
  auto small = CudaBackend::create(model->config(), model->weights(), o);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.error().message.find("does not fit"), std::string::npos) << small.error().message;
  EXPECT_NE(small.error().message.find("KV cache"), std::string::npos) << small.error().message;
}

// When the MTP state history is all that does not fit, the model still loads without it: no speculative
// forward, a note saying so, and MTP verification on the snapshot + re-run path with the same tokens.
TEST(CudaBackend, HistoryLeftOutWhenItAloneDoesNotFit) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  auto full = make_cuda(*model, KernelConfig{}, 512);
  const MemoryEstimate& m = CudaProbe::memory(*full);
  ASSERT_GT(m.history, 0u);
  EXPECT_GT(full->max_speculative_tokens(), 1);
  EXPECT_TRUE(full->info().note.empty()) << full->info().note;
  const auto prompt = random_tokens(5, model->config().n_vocab, 31);
  const GreedyRun plain = greedy(*full, prompt, 16);
  full.reset();

  CudaBackendOptions o;
  o.n_ctx = 512;
  // Without the prompt path's resident f16 weights, which a load this tight does not make (auto: only with a
  // quarter of the card to spare).
  o.memory_limit = m.total() - m.prefill_weights + kMemoryReserve - m.history / 2;
  auto tight = CudaBackend::create(model->config(), model->weights(), o);
  ASSERT_TRUE(tight.ok()) << tight.error().describe();
  EXPECT_EQ(CudaProbe::memory(**tight).history, 0u);
  EXPECT_EQ((*tight)->max_speculative_tokens(), 0);
  EXPECT_NE((*tight)->info().note.find("MTP state history"), std::string::npos) << (*tight)->info().note;
  for (int draft = 1; draft <= 3; ++draft) EXPECT_EQ(greedy(**tight, prompt, 16, draft).tokens, plain.tokens);
  std::printf("[ memory   ] without the history: %s\n", CudaProbe::memory(**tight).describe().c_str());
}

// Models the kernels cannot run come back as an error naming the field (the `small` preset has head_dim 64).
TEST(CudaBackend, UnsupportedShapeIsAnError) {
  ModelShape s = backend_test_shape(false);
  ModelConfig c;
  c.n_embd = s.n_embd;
  c.n_layer = 4;
  c.n_ff = s.n_ff;
  c.n_head = 4;
  c.n_head_kv = {2, 2, 2, 2};
  c.head_dim = 64;
  c.rope_dims = 16;
  c.ssm_conv_kernel = 4;
  c.ssm_n_k_heads = 2;
  c.ssm_n_v_heads = 4;
  c.ssm_head_k_dim = 64;
  c.ssm_head_v_dim = 64;
  c.is_recurrent = {true, true, true, false};
  const Status st = check_cuda_support(c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("head_dim must be 128 or 256, got 64"), std::string::npos)
      << st.error().message;
  c.head_dim = 128;
  EXPECT_TRUE(check_cuda_support(c).ok());
}

// Without a device (CI machines), asking for the CUDA backend is an error, never a crash.
TEST(CudaBackend, NoDeviceIsAnError) {
  if (gpu::test::device_unavailable_reason().empty()) GTEST_SKIP() << "a CUDA device is present";
  auto model = load_model(DType::kQ8_0);
  EngineOptions o;
  o.n_ctx = 64;
  auto b = make_backend(BackendKind::kCuda, *model, o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("no CUDA device"), std::string::npos) << b.error().message;
  EXPECT_TRUE(cuda_backend_compiled());
}

}  // namespace
}  // namespace qc::cuda::test
