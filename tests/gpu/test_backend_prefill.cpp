// The CUDA backend's prompt path (Backend::prefill, cuda/prefill_program.h) on whole models, with each of
// its GEMMs (f16 through cuBLASLt, int8 on hl activations): the last token's logits and hidden state, and
// the state it leaves for decoding, against the f64 oracle; the same bits whatever the chunking; MTP cache
// entries that drafts read like the decode path's; clear errors. Skipped without a device (and the f16
// cases without the toolkit's libcublasLt).
//
// Bounds (oracle_bounds.h: gain 4, 33 quantisation points per token, the prompt path's floor of four f16
// roundings; GDN rounds in f32, the token and group scans to ~1e-5 of the RMS, the chunked one to ~3e-4
// (test_gdn_prefill.cpp): below the floor):
// - int8: every projection input in format hl, as the hl-class GEMVs;
// - f16: eps_f16 per projection output; lm_head stays hl, inside that.
#include <cstdio>

#include "backend_test_util.h"
#include "cublaslt.h"
#include "gdn_prefill.h"
#include "oracle_bounds.h"

namespace qc::cuda::test {
namespace {

const double kBoundInt8 = oracle_bound(ActFormat::kHL, kQuantPoints, kPromptFloor);
const double kBoundF16 = prompt_f16_bound();

class CudaPrefill : public ::testing::TestWithParam<PrefillGemm> {
 protected:
  void SetUp() override {
    std::string why;
    if (GetParam() == PrefillGemm::kF16 && !gpu::cublaslt(&why))
      GTEST_SKIP() << "cuBLASLt unavailable: " << why;
  }
  double bound() const { return GetParam() == PrefillGemm::kF16 ? kBoundF16 : kBoundInt8; }
  std::unique_ptr<CudaBackend> make_prefill_cuda(const Model& model, int n_ctx, int rows,
                                                 gpu::GdnScan gdn_scan = gpu::GdnScan::kToken) const;
};

std::unique_ptr<CudaBackend> CudaPrefill::make_prefill_cuda(const Model& model, int n_ctx, int rows,
                                                            gpu::GdnScan gdn_scan) const {
  CudaBackendOptions o;
  o.n_ctx = n_ctx;
  o.prefill_rows = rows;
  o.gdn_scan = gdn_scan;
  o.prefill_gemm = GetParam();
  auto b = CudaBackend::create(model.config(), model.weights(), o);
  if (!b.ok()) throw std::runtime_error("CudaBackend::create: " + b.error().describe());
  if (rows > 0 &&
      std::string(CudaProbe::prefill_gemm(**b)) != (GetParam() == PrefillGemm::kF16 ? "f16" : "int8"))
    throw std::runtime_error(std::string("asked for one GEMM, got ") + CudaProbe::prefill_gemm(**b) + ": " +
                             (*b)->info().note);
  return std::move(b).value();
}

struct LastRow {
  std::vector<float> logits, hidden;
};

// `tokens` from a reset backend through prefill() in calls of the given sizes (the last size repeats).
LastRow prefill_sequence(Backend& b, const std::vector<int32_t>& tokens, const std::vector<int>& calls,
                         bool mtp = false) {
  b.reset();
  LastRow out;
  size_t at = 0, ci = 0;
  while (at < tokens.size()) {
    const size_t n = std::min(static_cast<size_t>(calls[std::min(ci, calls.size() - 1)]), tokens.size() - at);
    ++ci;
    Backend::PrefillMtp m;
    m.entries = mtp;
    if (at + n < tokens.size()) m.next_token = tokens[at + n];
    auto r = b.prefill(std::span<const int32_t>(tokens.data() + at, n), static_cast<int>(at), m);
    if (!r.ok()) throw std::runtime_error("prefill: " + r.error().describe());
    if (r->n_tokens != 1) throw std::runtime_error("prefill returned more than the last row");
    out.logits.assign(r->logits.begin(), r->logits.end());
    out.hidden.assign(r->hidden.begin(), r->hidden.end());
    at += n;
  }
  return out;
}

std::vector<float> row_of(const std::vector<float>& rows, size_t r, size_t width) {
  return std::vector<float>(rows.begin() + static_cast<std::ptrdiff_t>(r * width),
                            rows.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
}

std::vector<float> last_row(const std::vector<float>& rows, size_t width) {
  return std::vector<float>(rows.end() - static_cast<std::ptrdiff_t>(width), rows.end());
}

TEST_P(CudaPrefill, LastRowAndTheStateItLeavesMatchTheOracle) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab), H = static_cast<size_t>(c.n_embd);
  auto oracle = make_oracle(*model);
  auto gpu = make_prefill_cuda(*model, 512, 128);
  ASSERT_EQ(gpu->prefill_rows(), 128);
  for (const int n : {1, 4, 5, 63, 64, 65, 129, 300}) {
    const auto tokens = random_tokens(n + 2, c.n_vocab, 100 + static_cast<uint32_t>(n));
    const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + n);
    const SeqOut ref = run_sequence(*oracle, tokens, {32});  // the oracle's max_batch; its bits do not care
    const LastRow got = prefill_sequence(*gpu, prompt, {128});
    const double dl = rel_dist(got.logits, row_of(ref.logits, static_cast<size_t>(n - 1), V), 0, V);
    const double dh = rel_dist(got.hidden, row_of(ref.hidden, static_cast<size_t>(n - 1), H), 0, H);
    // Decoding continues from the state the prompt path left: two more tokens through forward().
    double dnext = 0.0;
    for (int i = 0; i < 2; ++i) {
      auto r = gpu->forward(std::span<const int32_t>(tokens.data() + n + i, 1), n + i);
      ASSERT_TRUE(r.ok()) << r.error().describe();
      const std::vector<float> row(r->logits.begin(), r->logits.end());
      std::vector<float> want(ref.logits.begin() + static_cast<std::ptrdiff_t>((n + i) * V),
                              ref.logits.begin() + static_cast<std::ptrdiff_t>((n + i + 1) * V));
      dnext = std::max(dnext, rel_dist(row, want, 0, V));
    }
    std::printf("[ distance ] prompt %3d: last logits %.3e hidden %.3e, next tokens %.3e (bound %.3e)\n", n,
                dl, dh, dnext, bound());
    EXPECT_LT(dl, bound()) << n;
    EXPECT_LT(dh, bound()) << n;
    EXPECT_LT(dnext, bound()) << n;
  }
}

// A prompt longer than the oracle's context: the prompt path in chunks of 1024 against the decode path
// (both within the bound of the exact result, so within twice it of each other).
TEST_P(CudaPrefill, LongPromptAcrossChunksMatchesTheDecodePath) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab), H = static_cast<size_t>(c.n_embd);
  auto gpu = make_prefill_cuda(*model, 4096, 1024);
  const auto tokens = random_tokens(2049, c.n_vocab, 2049);
  const LastRow got = prefill_sequence(*gpu, tokens, {1024});
  const SeqOut dec = run_sequence(*gpu, tokens, {4});
  const double dl = rel_dist(got.logits, last_row(dec.logits, V), 0, V);
  const double dh = rel_dist(got.hidden, last_row(dec.hidden, H), 0, H);
  std::printf(
      "[ distance ] prompt 2049 (chunks 1024+1024+1) vs decode path: logits %.3e hidden %.3e (bound %.3e)\n",
      dl, dh, 2 * bound());
  EXPECT_LT(dl, 2 * bound());
  EXPECT_LT(dh, 2 * bound());
}

// Every row is computed from its own inputs and the carried state: the chunking changes no bit of the
// last row or of the state (the next decoded token's logits).
TEST_P(CudaPrefill, ChunkingChangesNoBit) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  auto gpu = make_prefill_cuda(*model, 512, 256);
  const auto tokens = random_tokens(301, c.n_vocab, 301);
  const std::vector<int32_t> prompt(tokens.begin(), tokens.end() - 1);
  std::vector<float> first_next;
  LastRow first;
  for (const std::vector<int>& calls :
       std::vector<std::vector<int>>{{256}, {1, 63, 64, 65, 107}, {4}, {100, 200}}) {
    const LastRow got = prefill_sequence(*gpu, prompt, calls);
    auto r = gpu->forward(std::span<const int32_t>(tokens.data() + 300, 1), 300);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const std::vector<float> next(r->logits.begin(), r->logits.end());
    if (first.logits.empty()) {
      first = got;
      first_next = next;
      continue;
    }
    EXPECT_TRUE(same_bits(got.logits, first.logits)) << "calls of " << calls[0] << "...";
    EXPECT_TRUE(same_bits(got.hidden, first.hidden)) << "calls of " << calls[0] << "...";
    EXPECT_TRUE(same_bits(next, first_next)) << "calls of " << calls[0] << "...: the state differs";
  }
}

// The GDN scans on a grid (CudaBackendOptions::gdn_scan: groups of 4, chunks of 64, scaled segments of 16):
// the last row and the next decoded token against the oracle within the bound (their rounding,
// test_gdn_prefill.cpp, is below the floor), the same bits for calls starting on the grid (prefill_grid()),
// within twice the bound of an uninterrupted run for calls starting elsewhere.
TEST_P(CudaPrefill, GdnScansKeepTheirBitsOnTheGrid) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab), H = static_cast<size_t>(c.n_embd);
  auto oracle = make_oracle(*model);
  const auto tokens = random_tokens(301, c.n_vocab, 301);
  const std::vector<int32_t> prompt(tokens.begin(), tokens.end() - 1);
  const SeqOut ref = run_sequence(*oracle, tokens, {32});
  for (const gpu::GdnScan scan : {gpu::GdnScan::kGroup, gpu::GdnScan::kChunked, gpu::GdnScan::kScaled}) {
    const int grid = gpu::gdn_prefill_grid(scan);
    SCOPED_TRACE("grid " + std::to_string(grid));
    auto gpu = make_prefill_cuda(*model, 512, 256, scan);
    ASSERT_EQ(gpu->prefill_grid(), grid);
    std::vector<float> first_next;
    LastRow first;
    for (const std::vector<int>& calls : std::vector<std::vector<int>>{
             {256}, {64}, {128, 64}, {192, 128}, {1, 63, 64, 65, 107}, {100, 200}}) {
      const LastRow got = prefill_sequence(*gpu, prompt, calls);
      auto r = gpu->forward(std::span<const int32_t>(tokens.data() + 300, 1), 300);
      ASSERT_TRUE(r.ok()) << r.error().describe();
      const std::vector<float> next(r->logits.begin(), r->logits.end());
      EXPECT_LT(rel_dist(got.logits, row_of(ref.logits, 299, V), 0, V), bound()) << "calls of " << calls[0];
      EXPECT_LT(rel_dist(got.hidden, row_of(ref.hidden, 299, H), 0, H), bound()) << "calls of " << calls[0];
      EXPECT_LT(rel_dist(next, row_of(ref.logits, 300, V), 0, V), bound()) << "calls of " << calls[0];
      if (first.logits.empty()) {
        first = got;
        first_next = next;
        continue;
      }
      bool on_grid = true;  // every call starts on the grid (the last size repeats, as in prefill_sequence)
      for (size_t i = 0, at = 0; at < prompt.size(); ++i) {
        on_grid = on_grid && at % static_cast<size_t>(grid) == 0;
        at += static_cast<size_t>(calls[std::min(i, calls.size() - 1)]);
      }
      if (on_grid) {
        EXPECT_TRUE(same_bits(got.logits, first.logits)) << "calls of " << calls[0] << "...";
        EXPECT_TRUE(same_bits(got.hidden, first.hidden)) << "calls of " << calls[0] << "...";
        EXPECT_TRUE(same_bits(next, first_next)) << "calls of " << calls[0] << "...: the state differs";
      } else {
        EXPECT_LT(rel_dist(got.logits, first.logits, 0, V), 2 * bound()) << "calls of " << calls[0] << "...";
        EXPECT_LT(rel_dist(next, first_next, 0, V), 2 * bound()) << "calls of " << calls[0] << "...";
      }
    }
  }
}

// MTP entries written by the prompt path are what the drafts read: after a prompt, the draft at its last
// position matches the one after the decode path wrote the entries with mtp_forward (within twice the bound),
// and greedy generation with MTP gives the tokens of greedy without it.
TEST_P(CudaPrefill, MtpEntriesServeTheDrafts) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  const size_t V = static_cast<size_t>(c.n_vocab), H = static_cast<size_t>(c.n_embd);
  auto gpu = make_prefill_cuda(*model, 512, 64);
  const auto tokens = random_tokens(151, c.n_vocab, 151);
  const std::vector<int32_t> prompt(tokens.begin(), tokens.end() - 1);
  const LastRow got = prefill_sequence(*gpu, prompt, {64}, /*mtp=*/true);
  auto draft = gpu->mtp_forward(tokens.back(), got.hidden, 149);
  ASSERT_TRUE(draft.ok()) << draft.error().describe();
  const std::vector<float> d_prefill(draft->logits.begin(), draft->logits.end());
  // The decode path: forward() rows, then every entry through mtp_forward.
  const SeqOut dec = run_sequence(*gpu, prompt, {4});
  for (int q = 0; q + 1 < 150; ++q) {
    const std::vector<float> h(dec.hidden.begin() + static_cast<std::ptrdiff_t>(q * H),
                               dec.hidden.begin() + static_cast<std::ptrdiff_t>((q + 1) * H));
    ASSERT_TRUE(gpu->mtp_forward(prompt[static_cast<size_t>(q) + 1], h, q).ok());
  }
  auto want = gpu->mtp_forward(tokens.back(), last_row(dec.hidden, H), 149);
  ASSERT_TRUE(want.ok()) << want.error().describe();
  const std::vector<float> d_decode(want->logits.begin(), want->logits.end());
  const double dd = rel_dist(d_prefill, d_decode, 0, V);
  std::printf("[ distance ] MTP draft after the prompt path vs the decode path: %.3e (bound %.3e)\n", dd,
              2 * bound());
  EXPECT_LT(dd, 2 * bound());
  for (const int draft_len : {1, 3}) {
    const GreedyRun with = greedy(*gpu, prompt, 24, draft_len);
    const GreedyRun without = greedy(*gpu, prompt, 24);
    EXPECT_EQ(with.tokens, without.tokens) << draft_len;
    std::printf("[ mtp      ] draft %d after a 150-token prompt: acceptance %.2f\n", draft_len,
                with.mtp_acceptance);
  }
}

TEST_P(CudaPrefill, RefusedCallsChangeNothing) {
  QC_REQUIRE_CUDA_DEVICE();
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  auto gpu = make_prefill_cuda(*model, 512, 32);
  const auto tokens = random_tokens(40, c.n_vocab, 40);
  gpu->reset();
  ASSERT_TRUE(gpu->prefill(std::span<const int32_t>(tokens.data(), 8), 0, {}).ok());
  auto too_many = gpu->prefill(std::span<const int32_t>(tokens.data(), 33), 8, {});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("expected 1..32"), std::string::npos) << too_many.error().message;
  auto wrong_pos = gpu->prefill(std::span<const int32_t>(tokens.data(), 4), 3, {});
  ASSERT_FALSE(wrong_pos.ok());
  EXPECT_NE(wrong_pos.error().message.find("does not continue"), std::string::npos);
  std::vector<int32_t> bad = {1, c.n_vocab};
  EXPECT_FALSE(gpu->prefill(bad, 8, {}).ok());
  Backend::PrefillMtp m;
  m.entries = true;
  std::vector<float> short_hidden(3);
  m.prev_hidden = short_hidden;
  EXPECT_FALSE(gpu->prefill(std::span<const int32_t>(tokens.data() + 8, 4), 8, m).ok());
  EXPECT_EQ(gpu->position(), 8);
  // Still the same state: the rest of the prompt gives the bits of an uninterrupted run.
  auto rest = gpu->prefill(std::span<const int32_t>(tokens.data() + 8, 32), 8, {});
  ASSERT_TRUE(rest.ok()) << rest.error().describe();
  const std::vector<float> after(rest->logits.begin(), rest->logits.end());
  const LastRow whole = prefill_sequence(*gpu, tokens, {32});
  EXPECT_TRUE(same_bits(after, whole.logits));
  // Off: prefill_rows 0 means no prompt path, and prefill() says so.
  auto off = make_prefill_cuda(*model, 512, 0);
  EXPECT_EQ(off->prefill_rows(), 0);
  EXPECT_FALSE(off->prefill(std::span<const int32_t>(tokens.data(), 4), 0, {}).ok());
}

INSTANTIATE_TEST_SUITE_P(Gemm, CudaPrefill, ::testing::Values(PrefillGemm::kF16, PrefillGemm::kInt8),
                         [](const ::testing::TestParamInfo<PrefillGemm>& i) {
                           return std::string(i.param == PrefillGemm::kF16 ? "f16" : "int8");
                         });

// The f16 path's weights resident (prefill_weights.h) or dequantised per chunk: the same bits (the same
// dequantisation kernel, the same GEMM slices and algorithms), in the memory estimate either way; resident
// asked for on a card without the room is a clear load error.
TEST(CudaPrefillWeights, ResidentAndPerChunkGiveTheSameBits) {
  QC_REQUIRE_CUDA_DEVICE();
  std::string why;
  if (!gpu::cublaslt(&why)) GTEST_SKIP() << "cuBLASLt unavailable: " << why;
  auto model = load_model(DType::kQ8_0);
  const auto& c = model->config();
  auto make = [&](PrefillWeights w, uint64_t limit) {
    CudaBackendOptions o;
    o.n_ctx = 1024;
    o.prefill_rows = 128;
    o.prefill_gemm = PrefillGemm::kF16;
    o.prefill_weights = w;
    o.memory_limit = limit;
    return CudaBackend::create(c, model->weights(), o);
  };
  auto resident = make(PrefillWeights::kResident, 0);
  ASSERT_TRUE(resident.ok()) << resident.error().describe();
  auto per_chunk = make(PrefillWeights::kPerChunk, 0);
  ASSERT_TRUE(per_chunk.ok()) << per_chunk.error().describe();
  EXPECT_STREQ(CudaProbe::prefill_weights(**resident), "resident");
  EXPECT_STREQ(CudaProbe::prefill_weights(**per_chunk), "per chunk");
  EXPECT_GT(CudaProbe::memory(**resident).prefill_weights, 0u);
  EXPECT_EQ(CudaProbe::memory(**per_chunk).prefill_weights, 0u);
  EXPECT_EQ(CudaProbe::memory(**resident).total(),
            CudaProbe::memory(**per_chunk).total() + CudaProbe::memory(**resident).prefill_weights);
  const auto tokens = random_tokens(300, c.n_vocab, 300);
  const LastRow a = prefill_sequence(**resident, tokens, {128});
  const LastRow b = prefill_sequence(**per_chunk, tokens, {128});
  EXPECT_TRUE(same_bits(a.logits, b.logits));
  EXPECT_TRUE(same_bits(a.hidden, b.hidden));
  // Resident asked for where only the per-chunk load fits: refused, saying what does not fit.
  const uint64_t room = CudaProbe::memory(**per_chunk).total() + kMemoryReserve +
                        CudaProbe::memory(**resident).prefill_weights / 2;
  auto tight = make(PrefillWeights::kResident, room);
  ASSERT_FALSE(tight.ok());
  EXPECT_NE(tight.error().message.find("resident f16 weights"), std::string::npos) << tight.error().message;
  auto tight_auto = make(PrefillWeights::kAuto, room);
  ASSERT_TRUE(tight_auto.ok()) << tight_auto.error().describe();
  EXPECT_STREQ(CudaProbe::prefill_weights(**tight_auto), "per chunk");
}

}  // namespace
}  // namespace qc::cuda::test
