// The CUDA backend's speculative forward (backend.h, cuda_backend.h): forward_speculative of M = 2..4
// tokens + commit(m) for every m gives the bits of the old rollback on the same device (snapshot, forward
// of M, restore, forward of the m kept tokens) -- rows, GDN states, KV caches and later tokens -- for the
// default config, eager launches, the h class and the tensor-core GEMVs (mma); it stays within the f64
// oracle's bounds; the generator on it never re-runs and equals the generator on the fallback path.
// Skipped without a device.
//
// Bit-identity rests on the rows of an M-token pass being those of an m-token pass (GEMVs: row
// independence; attention: the same split length for ctx buckets up to ~2k positions at these shapes,
// which covers the positions used here -- see MultiTokenForwardEqualsSingleSteps).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "backend_test_util.h"
#include "oracle_bounds.h"

namespace qc::cuda::test {
namespace {

// Every state region (KV caches f16, GDN states f32) copied to the host as raw bytes. The backend's
// stream is non-blocking and commit() does not synchronise: wait for the device first.
std::vector<uint8_t> device_state(const CudaBackend& b) {
  ::qc::gpu::test::cuda_or_throw(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<uint8_t> all;
  for (const CudaProbe::Region& r : CudaProbe::state_regions(b)) {
    const size_t bytes = r.count * (r.f16 ? 2 : 4);
    const size_t at = all.size();
    all.resize(at + bytes);
    ::qc::gpu::test::cuda_or_throw(cudaMemcpy(all.data() + at, r.ptr, bytes, cudaMemcpyDeviceToHost),
                                   "cudaMemcpy");
  }
  return all;
}

std::vector<float> rows_of(std::span<const float> s, size_t count, size_t width) {
  return std::vector<float>(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(count * width));
}

// Row r of width n.
std::vector<float> row_of(const std::vector<float>& x, size_t r, size_t n) {
  return std::vector<float>(x.begin() + static_cast<std::ptrdiff_t>(r * n),
                            x.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
}

struct PathOut {
  std::vector<float> verify_logits, verify_hidden;  // all M rows of the verification pass
  std::vector<float> kept_logits, kept_hidden;      // the m kept rows (the re-run's on the old path)
  std::vector<uint8_t> state;                       // KV caches + GDN states right after the rollback
  int position = 0;
  std::vector<float> next_logits, next_hidden;  // three tokens after the rollback
};

TEST(CudaBackendSpeculative, CommitEqualsRestoreAndRerun) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab), H = static_cast<size_t>(c.n_embd);
  const auto prefix = random_tokens(5, c.n_vocab, 41);
  const auto batch = random_tokens(4, c.n_vocab, 43);
  const auto next = random_tokens(3, c.n_vocab, 47);
  const int P = static_cast<int>(prefix.size());

  // Oracle rows: the verification pass of M tokens, and the kept context followed by `next`.
  auto oracle = make_oracle(*model);
  std::vector<SeqOut> oracle_verify(5), oracle_kept(5);
  for (int n = 1; n <= 4; ++n) {
    std::vector<int32_t> t = prefix;
    t.insert(t.end(), batch.begin(), batch.begin() + n);
    oracle_verify[static_cast<size_t>(n)] = run_sequence(*oracle, t, {static_cast<int>(t.size())});
    t.insert(t.end(), next.begin(), next.end());
    oracle_kept[static_cast<size_t>(n)] = run_sequence(*oracle, t, {static_cast<int>(t.size())});
  }

  struct Case {
    std::string label;
    KernelConfig k;
  };
  KernelConfig eager;
  eager.cuda_graph = false;
  const std::vector<Case> cases = {
      {"default", KernelConfig{}},
      {"eager", eager},
      {"h", config_with(GemvVariant::kH)},
      {"mma", config_with(GemvVariant::kMma)}};
  for (const Case& cs : cases) {
    auto gpu = make_cuda(*model, cs.k);
    ASSERT_EQ(gpu->max_speculative_tokens(), 4);
    const double bound = oracle_bound(cs.k.gemv);
    double worst = 0.0;
    for (int M = 2; M <= 4; ++M) {
      const std::span<const int32_t> verify(batch.data(), static_cast<size_t>(M));
      for (int m = 1; m <= M; ++m) {
        const std::string label = cs.label + " M " + std::to_string(M) + " m " + std::to_string(m);
        auto finish = [&](PathOut& o) {
          o.state = device_state(*gpu);
          o.position = gpu->position();
          auto r = gpu->forward(next, gpu->position());
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          o.next_logits = rows_of(r->logits, next.size(), V);
          o.next_hidden = rows_of(r->hidden, next.size(), H);
        };
        // New path: one speculative pass, commit(m).
        PathOut a;
        gpu->reset();
        ASSERT_TRUE(gpu->forward(prefix, 0).ok()) << label;
        {
          auto r = gpu->forward_speculative(verify, P);
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          EXPECT_EQ(gpu->position(), P + M) << label;
          EXPECT_TRUE(gpu->snapshot() == nullptr) << label;  // refused while pending
          const Status st = gpu->commit(m);
          ASSERT_TRUE(st.ok()) << label << ": " << st.error().describe();
          a.verify_logits = rows_of(r->logits, static_cast<size_t>(M), V);  // spans outlive commit()
          a.verify_hidden = rows_of(r->hidden, static_cast<size_t>(M), H);
          a.kept_logits = rows_of(r->logits, static_cast<size_t>(m), V);
          a.kept_hidden = rows_of(r->hidden, static_cast<size_t>(m), H);
        }
        ASSERT_NO_FATAL_FAILURE(finish(a));
        // Old path on the same backend: snapshot, forward of M, restore, forward of the m kept tokens.
        PathOut b;
        gpu->reset();
        ASSERT_TRUE(gpu->forward(prefix, 0).ok()) << label;
        const std::unique_ptr<StateSnapshot> snap = gpu->snapshot();
        ASSERT_NE(snap, nullptr) << label;
        {
          auto r = gpu->forward(verify, P);
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          b.verify_logits = rows_of(r->logits, static_cast<size_t>(M), V);
          b.verify_hidden = rows_of(r->hidden, static_cast<size_t>(M), H);
        }
        ASSERT_TRUE(gpu->restore(*snap).ok()) << label;
        {
          auto r = gpu->forward(verify.first(static_cast<size_t>(m)), P);
          ASSERT_TRUE(r.ok()) << label << ": " << r.error().describe();
          b.kept_logits = rows_of(r->logits, static_cast<size_t>(m), V);
          b.kept_hidden = rows_of(r->hidden, static_cast<size_t>(m), H);
        }
        ASSERT_NO_FATAL_FAILURE(finish(b));

        EXPECT_EQ(a.position, P + m) << label;
        EXPECT_EQ(b.position, P + m) << label;
        EXPECT_TRUE(same_bits(a.verify_logits, b.verify_logits)) << label;
        EXPECT_TRUE(same_bits(a.verify_hidden, b.verify_hidden)) << label;
        EXPECT_TRUE(same_bits(a.kept_logits, b.kept_logits)) << label;
        EXPECT_TRUE(same_bits(a.kept_hidden, b.kept_hidden)) << label;
        EXPECT_TRUE(a.state == b.state) << label << ": GDN states or KV caches differ after the rollback";
        EXPECT_TRUE(same_bits(a.next_logits, b.next_logits)) << label;
        EXPECT_TRUE(same_bits(a.next_hidden, b.next_hidden)) << label;

        // Against the f64 oracle: the verification rows and the tokens after the rollback.
        const SeqOut& ov = oracle_verify[static_cast<size_t>(M)];
        const SeqOut& ok = oracle_kept[static_cast<size_t>(m)];
        for (int i = 0; i < M; ++i) {
          const size_t row = static_cast<size_t>(P + i);
          worst = std::max(worst, rel_dist(row_of(a.verify_logits, static_cast<size_t>(i), V),
                                           row_of(ov.logits, row, V), 0, V));
          EXPECT_LT(
              rel_dist(row_of(a.verify_hidden, static_cast<size_t>(i), H), row_of(ov.hidden, row, H), 0, H),
              bound)
              << label << " verification row " << i;
        }
        for (size_t i = 0; i < next.size(); ++i) {
          const size_t row = static_cast<size_t>(P + m) + i;
          worst = std::max(worst, rel_dist(row_of(a.next_logits, i, V), row_of(ok.logits, row, V), 0, V));
          EXPECT_LT(rel_dist(row_of(a.next_hidden, i, H), row_of(ok.hidden, row, H), 0, H), bound)
              << label << " token after the rollback " << i;
        }
      }
    }
    std::printf(
        "[ spec     ] %-7s commit == restore+rerun checked for M 2..4; worst logits distance to the "
        "oracle %.3e (bound %.3e)\n",
        cs.label.c_str(), worst, bound);
    EXPECT_LT(worst, bound) << cs.label;
  }
}

// The contract on the device: refusals while a speculation is pending, commit's range, reset().
TEST(CudaBackendSpeculative, ContractRefusals) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const int V = model->config().n_vocab;
  auto gpu = make_cuda(*model, KernelConfig{});
  const auto t = random_tokens(8, V, 53);
  const std::span<const int32_t> ts(t);
  ASSERT_TRUE(gpu->forward(ts.first(2), 0).ok());
  EXPECT_FALSE(gpu->commit(1).ok());                            // nothing pending
  EXPECT_FALSE(gpu->forward_speculative(ts.first(5), 2).ok());  // more than kMaxTokens
  EXPECT_FALSE(gpu->forward_speculative(ts.first(2), 1).ok());  // wrong position
  EXPECT_EQ(gpu->position(), 2);
  ASSERT_TRUE(gpu->forward_speculative(ts.subspan(2, 3), 2).ok());
  EXPECT_EQ(gpu->position(), 5);
  const std::vector<float> h(static_cast<size_t>(model->config().n_embd), 0.5f);
  EXPECT_FALSE(gpu->forward(ts.subspan(5, 1), 5).ok());
  EXPECT_FALSE(gpu->mtp_forward(1, h, 4).ok());
  EXPECT_TRUE(gpu->snapshot() == nullptr);
  EXPECT_FALSE(gpu->commit(0).ok());
  EXPECT_FALSE(gpu->commit(4).ok());
  EXPECT_TRUE(gpu->commit(2).ok());
  EXPECT_EQ(gpu->position(), 4);
  EXPECT_TRUE(gpu->forward(ts.subspan(4, 1), 4).ok());
  ASSERT_TRUE(gpu->forward_speculative(ts.subspan(5, 2), 5).ok());
  gpu->reset();
  EXPECT_FALSE(gpu->commit(1).ok());
  EXPECT_EQ(gpu->position(), 0);
  EXPECT_TRUE(gpu->forward(ts.first(1), 0).ok());
}

// Forwards every call to a backend but reports no speculative forward: the generator's fallback path
// (snapshot, restore, re-run) on the same device.
class FallbackBackend final : public Backend {
 public:
  explicit FallbackBackend(Backend& b) : b_(b) {}
  BackendInfo info() const override { return b_.info(); }
  const ModelConfig& config() const override { return b_.config(); }
  int n_ctx() const override { return b_.n_ctx(); }
  int position() const override { return b_.position(); }
  int max_batch() const override { return b_.max_batch(); }
  void reset() override { b_.reset(); }
  Result<StepOutput> forward(std::span<const int32_t> tokens, int pos) override {
    return b_.forward(tokens, pos);
  }
  int prefill_rows() const override { return b_.prefill_rows(); }  // the same prompt path
  Result<StepOutput> prefill(std::span<const int32_t> tokens, int pos, const PrefillMtp& mtp) override {
    return b_.prefill(tokens, pos, mtp);
  }
  bool has_mtp() const override { return b_.has_mtp(); }
  Result<StepOutput> mtp_forward(int32_t token, std::span<const float> hidden, int pos) override {
    return b_.mtp_forward(token, hidden, pos);
  }
  std::unique_ptr<StateSnapshot> snapshot() const override { return b_.snapshot(); }
  Status restore(const StateSnapshot& snap) override { return b_.restore(snap); }
  std::span<const float> layer_norms() const override { return b_.layer_norms(); }

 protected:
  Status apply_kernel_config(const KernelConfig& cfg) override { return b_.set_kernel_config(cfg); }

 private:
  Backend& b_;
};

struct GenOut {
  GenerateResult r;
  std::vector<uint8_t> state;
};
GenOut generate_greedy(Backend& b, const CudaBackend& dev, const std::vector<int32_t>& prompt, int draft) {
  b.reset();
  Generator gen(b, TokenText{});
  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = 24;
  req.sampler = SamplerParams::greedy();
  req.mtp.enabled = draft > 0;
  req.mtp.draft_len = std::max(draft, 1);
  auto r = gen.generate(req);
  if (!r.ok()) throw std::runtime_error("generate: " + r.error().describe());
  if (r->stop_reason == StopReason::error) throw std::runtime_error("generate failed: " + r->error);
  return GenOut{std::move(r).value(), device_state(dev)};
}

// The generator on the CUDA backend: one weight pass per step (no re-run), the tokens of greedy without
// MTP, and the same tokens, final logits row and device state as the fallback path on the same device.
TEST(CudaBackendSpeculative, GeneratorCommitsWithoutRerunPasses) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto prompt = random_tokens(5, model->config().n_vocab, 59);
  auto gpu = make_cuda(*model, KernelConfig{});
  FallbackBackend fallback(*gpu);
  const GenOut plain = generate_greedy(*gpu, *gpu, prompt, 0);
  for (int draft = 1; draft <= kMaxDraftLen; ++draft) {
    const GenOut spec = generate_greedy(*gpu, *gpu, prompt, draft);
    const GenOut old = generate_greedy(fallback, *gpu, prompt, draft);
    const GenerationStats& st = spec.r.stats;
    EXPECT_TRUE(spec.r.mtp_used) << draft;
    EXPECT_EQ(spec.r.tokens, plain.r.tokens) << "draft " << draft;
    EXPECT_EQ(old.r.tokens, plain.r.tokens) << "draft " << draft;
    EXPECT_EQ(st.rerun_passes, 0) << "draft " << draft;
    EXPECT_EQ(st.forward_passes, 1 + st.decode_steps) << "draft " << draft;
    EXPECT_EQ(spec.r.stats.final_logits_hash, old.r.stats.final_logits_hash) << "draft " << draft;
    EXPECT_TRUE(spec.state == old.state) << "draft " << draft << ": device state differs from the fallback's";
    std::printf(
        "[ spec     ] draft %d: acceptance %.2f, %lld decode passes (fallback: %lld + %lld re-runs)\n", draft,
        st.mtp_acceptance(0), static_cast<long long>(st.decode_steps),
        static_cast<long long>(old.r.stats.decode_steps), static_cast<long long>(old.r.stats.rerun_passes));
  }
}

}  // namespace
}  // namespace qc::cuda::test
