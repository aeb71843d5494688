// Test helper: a small qwen35 model filled from seeded random data, held in memory (no GGUF file).
// Shapes follow QWEN35.md with deliberately awkward choices: value heads != key heads, key head dim !=
// value head dim, more query heads than KV heads, partial RoPE, GDN and attention layers interleaved
// (>= 2 attention layers), an MTP block. Scales keep activations O(1): norms around 1, projections
// ~ U(-1,1)/sqrt(in), so every layer's output is of the order of its input.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/quant.h"
#include "model/weights.h"

namespace qc::test {

struct RandomModelSpec {
  int n_vocab = 384;
  int n_embd = 64;
  int n_layer = 4;             // layer i is attention iff (i+1) % attention_interval == 0
  int attention_interval = 2;  // 4 layers: GDN, attention, GDN, attention
  int n_ff = 96;
  int n_head = 4;
  int n_kv = 2;
  int head_dim = 32;
  int rope_dims = 16;
  float rope_theta = 10000.0f;
  int ssm_k_heads = 2;
  int ssm_v_heads = 4;
  int ssm_k_dim = 16;
  int ssm_v_dim = 32;
  int conv_kernel = 4;
  float rms_eps = 1e-6f;
  bool mtp = true;
  bool shared_head_norm = true;
  bool tied = false;
  DType dtype = DType::kF32;       // projections and embedding
  DType norm_dtype = DType::kF32;  // norms (Q8_0 only where the length is a multiple of 32)
  uint32_t seed = 1;
};

// Owns the bytes every TensorView points into; do not move it while a backend uses it (hold it by pointer).
struct RandomModel {
  RandomModelSpec spec;
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> storage;
};

namespace detail {

class Filler {
 public:
  Filler(RandomModel* m, uint32_t seed) : m_(m), rng_(seed) {}

  // rows x cols values uniform in [center - scale, center + scale], stored as `type` (F32 when a Q8_0
  // request does not fit whole blocks).
  TensorView make(const std::string& name, DType type, int64_t rows, int64_t cols, float center,
                  float scale) {
    if (type == DType::kQ8_0 && cols % kQ8Block != 0) type = DType::kF32;
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(cols));
    auto bytes =
        std::make_unique<std::vector<uint8_t>>(dtype_bytes(type, static_cast<uint64_t>(rows * cols)));
    TensorView t;
    t.name = name;
    t.type = type;
    t.rows = rows;
    t.cols = cols;
    t.data = bytes->data();
    for (int64_t r = 0; r < rows; ++r) {
      for (float& x : row) x = center + scale * u(rng_);
      encode_row(type, row.data(), bytes->data() + r * t.row_bytes(), cols);
    }
    m_->storage.push_back(std::move(bytes));
    return t;
  }
  // A projection [out][in] with entries ~ U(-1,1)/sqrt(in).
  TensorView proj(const std::string& name, DType type, int64_t out, int64_t in) {
    return make(name, type, out, in, 0.0f, 1.0f / std::sqrt(static_cast<float>(in)));
  }
  TensorView norm(const std::string& name, DType type, int64_t n) {
    return make(name, type, 1, n, 1.0f, 0.2f);
  }

 private:
  RandomModel* m_;
  std::mt19937 rng_;
};

inline LayerWeights attention_layer(Filler& f, const RandomModelSpec& s, const std::string& p) {
  LayerWeights l;
  l.recurrent = false;
  l.attn_norm = f.norm(p + "attn_norm", s.norm_dtype, s.n_embd);
  l.post_norm = f.norm(p + "post_attention_norm", s.norm_dtype, s.n_embd);
  l.attn.wq = f.proj(p + "attn_q", s.dtype, int64_t{s.n_head} * s.head_dim * 2, s.n_embd);
  l.attn.wk = f.proj(p + "attn_k", s.dtype, int64_t{s.n_kv} * s.head_dim, s.n_embd);
  l.attn.wv = f.proj(p + "attn_v", s.dtype, int64_t{s.n_kv} * s.head_dim, s.n_embd);
  l.attn.wo = f.proj(p + "attn_output", s.dtype, s.n_embd, int64_t{s.n_head} * s.head_dim);
  l.attn.q_norm = f.norm(p + "attn_q_norm", s.norm_dtype, s.head_dim);
  l.attn.k_norm = f.norm(p + "attn_k_norm", s.norm_dtype, s.head_dim);
  return l;
}

inline LayerWeights gdn_layer(Filler& f, const RandomModelSpec& s, const std::string& p) {
  LayerWeights l;
  l.recurrent = true;
  const int64_t qkv = 2 * int64_t{s.ssm_k_heads} * s.ssm_k_dim + int64_t{s.ssm_v_heads} * s.ssm_v_dim;
  const int64_t inner = int64_t{s.ssm_v_heads} * s.ssm_v_dim;
  l.attn_norm = f.norm(p + "attn_norm", s.norm_dtype, s.n_embd);
  l.post_norm = f.norm(p + "post_attention_norm", s.norm_dtype, s.n_embd);
  l.gdn.wqkv = f.proj(p + "attn_qkv", s.dtype, qkv, s.n_embd);
  l.gdn.wgate = f.proj(p + "attn_gate", s.dtype, inner, s.n_embd);
  l.gdn.wbeta = f.proj(p + "ssm_beta", s.dtype, s.ssm_v_heads, s.n_embd);
  l.gdn.walpha = f.proj(p + "ssm_alpha", s.dtype, s.ssm_v_heads, s.n_embd);
  l.gdn.conv1d = f.make(p + "ssm_conv1d", DType::kF32, qkv, s.conv_kernel, 0.0f, 0.6f);
  l.gdn.dt_bias = f.make(p + "ssm_dt.bias", DType::kF32, 1, s.ssm_v_heads, 0.0f, 1.0f);
  // ssm_a = -exp(A_log) in [-2.0, -0.1]: decays exp(g) between ~0.2 and ~0.95 per token.
  l.gdn.a = f.make(p + "ssm_a", DType::kF32, 1, s.ssm_v_heads, -1.05f, 0.95f);
  l.gdn.norm = f.norm(p + "ssm_norm", s.norm_dtype, s.ssm_v_dim);
  l.gdn.wout = f.proj(p + "ssm_out", s.dtype, s.n_embd, inner);
  return l;
}

inline void add_ffn(Filler& f, const RandomModelSpec& s, const std::string& p, LayerWeights* l) {
  l->ffn.gate = f.proj(p + "ffn_gate", s.dtype, s.n_ff, s.n_embd);
  l->ffn.up = f.proj(p + "ffn_up", s.dtype, s.n_ff, s.n_embd);
  l->ffn.down = f.proj(p + "ffn_down", s.dtype, s.n_embd, s.n_ff);
}

}  // namespace detail

inline std::unique_ptr<RandomModel> make_random_model(const RandomModelSpec& s) {
  auto m = std::make_unique<RandomModel>();
  m->spec = s;
  ModelConfig& c = m->config;
  c.architecture = "qwen35";
  c.name = "random";
  c.n_vocab = s.n_vocab;
  c.n_embd = s.n_embd;
  c.n_layer = s.n_layer;
  c.n_ff = s.n_ff;
  c.rms_eps = s.rms_eps;
  c.n_head = s.n_head;
  c.head_dim = s.head_dim;
  c.rope_theta = s.rope_theta;
  c.rope_dims = s.rope_dims;
  c.ssm_conv_kernel = s.conv_kernel;
  c.ssm_n_k_heads = s.ssm_k_heads;
  c.ssm_n_v_heads = s.ssm_v_heads;
  c.ssm_head_k_dim = s.ssm_k_dim;
  c.ssm_head_v_dim = s.ssm_v_dim;
  c.full_attention_interval = s.attention_interval;
  c.n_mtp = s.mtp ? 1 : 0;
  for (int i = 0; i < s.n_layer; ++i) {
    const bool recurrent = (i + 1) % s.attention_interval != 0;
    c.is_recurrent.push_back(recurrent);
    c.n_head_kv.push_back(recurrent ? 0 : s.n_kv);
  }
  if (s.mtp) c.n_head_kv.push_back(s.n_kv);

  detail::Filler f(m.get(), s.seed);
  ModelWeights& w = m->weights;
  w.token_embd = f.make("token_embd", s.dtype, s.n_vocab, s.n_embd, 0.0f, 1.0f);
  w.output_norm = f.norm("output_norm", s.norm_dtype, s.n_embd);
  w.tied_embeddings = s.tied;
  w.output = s.tied ? w.token_embd : f.proj("output", s.dtype, s.n_vocab, s.n_embd);
  for (int i = 0; i < s.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights l = c.is_recurrent[static_cast<size_t>(i)] ? detail::gdn_layer(f, s, p)
                                                            : detail::attention_layer(f, s, p);
    detail::add_ffn(f, s, p, &l);
    w.layers.push_back(std::move(l));
  }
  if (s.mtp) {
    const std::string p = "blk." + std::to_string(s.n_layer) + ".";
    MtpWeights mtp;
    mtp.eh_proj = f.proj(p + "nextn.eh_proj", s.dtype, s.n_embd, 2 * int64_t{s.n_embd});
    mtp.enorm = f.norm(p + "nextn.enorm", s.norm_dtype, s.n_embd);
    mtp.hnorm = f.norm(p + "nextn.hnorm", s.norm_dtype, s.n_embd);
    if (s.shared_head_norm)
      mtp.shared_head_norm = f.norm(p + "nextn.shared_head_norm", s.norm_dtype, s.n_embd);
    mtp.layer = detail::attention_layer(f, s, p);
    detail::add_ffn(f, s, p, &mtp.layer);
    w.mtp = std::move(mtp);
  }
  return m;
}

}  // namespace qc::test
