// Shared setup of the CUDA backend tests: a small qwen35 model with the shapes the kernels support
// (head_dim 128, GDN key/value heads 2/4 of 64, K dims that are not multiples of 512 so every GEMV
// runs its tail path), written once per process with qc::write_synthetic_model and loaded with the
// engine's loader; the f64 CPU oracle; helpers to run token sequences and compare logits.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_backend.h"
#include "cuda/cuda_probe.h"
#include "generate/generator.h"
#include "gpu_test_util.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "runtime/engine.h"

namespace qc::cuda::test {

inline ModelShape backend_test_shape(bool tied) {
  ModelShape s;
  s.name = "gpu-backend-test";
  s.n_embd = 256;  // K = 256 (< one 512-weight segment: the partial-segment path)
  s.n_layer = 8;   // 6 GDN + 2 attention layers
  s.n_ff = 704;    // down projection K = 704 = 512 + 192
  s.n_head = 4;
  s.n_head_kv = 2;  // GQA group 2
  s.head_dim = 128;
  s.rope_dims = 32;
  s.rope_theta = 1e7f;
  s.ssm_n_k_heads = 2;
  s.ssm_n_v_heads = 4;  // value heads != key heads (tiled order)
  s.ssm_head_k_dim = 64;
  s.ssm_head_v_dim = 64;
  s.n_vocab = 2000;  // not a multiple of anything the kernels tile by
  s.n_mtp = 1;
  s.tied_embeddings = tied;
  s.n_ctx_train = 4096;
  return s;
}

// The model files of this process (written on first use, removed at exit).
class ModelFiles {
 public:
  static const std::string& path(DType type, bool tied) {
    static ModelFiles files;
    const std::string key = std::string(dtype_name(type)) + (tied ? "-tied" : "");
    auto it = files.paths_.find(key);
    if (it != files.paths_.end()) return it->second;
    SyntheticModelOptions o;
    o.shape = backend_test_shape(tied);
    o.seed = 20261202;
    o.mix = quant_mix_of(type);
    o.out_path = (files.dir_ / ("model-" + key + ".gguf")).string();
    const Status st = write_synthetic_model(o);
    if (!st.ok()) throw std::runtime_error("write_synthetic_model: " + st.error().describe());
    return files.paths_.emplace(key, o.out_path).first->second;
  }

 private:
  ModelFiles() {
    dir_ = std::filesystem::temp_directory_path() / ("qwenchat-gpu-backend-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  ~ModelFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  std::map<std::string, std::string> paths_;
};

inline std::unique_ptr<Model> load_model(DType type, bool tied = false) {
  auto m = Model::load(ModelFiles::path(type, tied));
  if (!m.ok()) throw std::runtime_error("Model::load: " + m.error().describe());
  return std::move(m).value();
}

inline std::unique_ptr<Backend> make_oracle(const Model& model, bool probes = false) {
  EngineOptions o;
  o.n_ctx = 512;
  o.n_threads = 0;
  o.kernels.probes = probes;
  auto b = make_backend(BackendKind::kCpuF64, model, o);
  if (!b.ok()) throw std::runtime_error("oracle: " + b.error().describe());
  return std::move(b).value();
}

inline std::unique_ptr<CudaBackend> make_cuda(const Model& model, const KernelConfig& cfg, int n_ctx = 512) {
  CudaBackendOptions o;
  o.n_ctx = n_ctx;
  o.kernels = cfg;
  auto b = CudaBackend::create(model.config(), model.weights(), o);
  if (!b.ok()) throw std::runtime_error("CudaBackend::create: " + b.error().describe());
  return std::move(b).value();
}

inline KernelConfig config_with(GemvVariant v) {
  KernelConfig k;
  k.gemv = v;
  return k;
}

// Seeded token ids in [1, n_vocab).
inline std::vector<int32_t> random_tokens(int n, int n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(1, n_vocab - 1);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = d(rng);
  return t;
}

// Runs `tokens` from a reset backend in calls of the given sizes (the last size repeats) and returns the
// logits [n][V] and post-norm hidden [n][H] of every token.
struct SeqOut {
  std::vector<float> logits, hidden;
};
inline SeqOut run_sequence(Backend& b, const std::vector<int32_t>& tokens, const std::vector<int>& calls) {
  b.reset();
  SeqOut out;
  size_t at = 0, ci = 0;
  while (at < tokens.size()) {
    const size_t n = std::min(static_cast<size_t>(calls[std::min(ci, calls.size() - 1)]), tokens.size() - at);
    ++ci;
    auto r = b.forward(std::span<const int32_t>(tokens.data() + at, n), static_cast<int>(at));
    if (!r.ok()) throw std::runtime_error("forward: " + r.error().describe());
    out.logits.insert(out.logits.end(), r->logits.begin(), r->logits.end());
    out.hidden.insert(out.hidden.end(), r->hidden.begin(), r->hidden.end());
    at += n;
  }
  return out;
}

// ||a - b|| / ||b|| over row `r` of width n.
inline double rel_dist(const std::vector<float>& a, const std::vector<float>& b, size_t r, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t i = r * n; i < (r + 1) * n; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    num += d * d;
    den += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

inline int argmax_row(const std::vector<float>& x, size_t r, size_t n) {
  size_t best = r * n;
  for (size_t i = r * n; i < (r + 1) * n; ++i)
    if (x[i] > x[best]) best = i;
  return static_cast<int>(best - r * n);
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline uint64_t fnv1a(const std::vector<float>& x) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = reinterpret_cast<const unsigned char*>(x.data());
  for (size_t i = 0; i < x.size() * sizeof(float); ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Greedy generation with qc::Generator (no tokenizer: token ids only).
struct GreedyRun {
  std::vector<int32_t> tokens;
  std::string final_hash;
  double mtp_acceptance = -1.0;
};
inline GreedyRun greedy(Backend& b, const std::vector<int32_t>& prompt, int n_new, int mtp_draft = 0) {
  b.reset();
  Generator gen(b, TokenText{});
  GenerateRequest req;
  req.prompt = prompt;
  req.max_new_tokens = n_new;
  req.sampler = SamplerParams::greedy();
  req.mtp.enabled = mtp_draft > 0;
  req.mtp.draft_len = std::max(mtp_draft, 1);
  auto r = gen.generate(req);
  if (!r.ok()) throw std::runtime_error("generate: " + r.error().describe());
  if (r->stop_reason == StopReason::error) throw std::runtime_error("generate failed: " + r->error);
  GreedyRun g;
  g.tokens = r->tokens;
  g.final_hash = r->stats.final_logits_hash;
  if (r->stats.mtp_draft_len > 0) g.mtp_acceptance = r->stats.mtp_acceptance(0);
  return g;
}

}  // namespace qc::cuda::test

#define QC_REQUIRE_CUDA_DEVICE() QC_REQUIRE_DEVICE()
