#include "model/synthetic.h"

#include <cmath>

#include "gguf/writer.h"

namespace qc {
namespace {

// SplitMix64: a seeded, counter-friendly generator (one state word; fast enough to fill 27B weights).
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0,1)
  // Approximate standard normal: sum of 4 uniforms, scaled to unit variance (Irwin-Hall). Cheap and bounded
  // (|x| <= 3.46), which keeps random activations sane; exact normality does not matter here.
  float normal() {
    const double s4 = uniform() + uniform() + uniform() + uniform() - 2.0;
    return static_cast<float>(s4 * 1.7320508075688772);
  }
};

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// How each tensor is initialised. Values follow the shapes of a trained model closely enough that a
// forward pass neither explodes nor vanishes: projections ~ N(0, 1/in), norm weights near 1 (GGUF norms
// carry the +1), A_log in log([1,16]) as in the reference init, dt bias = softplus^-1 of dt in [1e-3, 1e-1].
enum class Init { kProjection, kEmbedding, kNormOne, kSsmA, kDtBias, kConv };

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> shape;  // GGUF order {in, out}
  bool quantizable;             // 2-D weights take the file's weight type; the rest stay F32
  Init init;
};

std::vector<TensorSpec> tensor_specs(const ModelShape& s) {
  std::vector<TensorSpec> t;
  const uint64_t H = static_cast<uint64_t>(s.n_embd);
  const uint64_t qkv = static_cast<uint64_t>(2 * s.ssm_n_k_heads * s.ssm_head_k_dim + s.ssm_n_v_heads * s.ssm_head_v_dim);
  const uint64_t inner = static_cast<uint64_t>(s.ssm_n_v_heads * s.ssm_head_v_dim);
  const uint64_t nv = static_cast<uint64_t>(s.ssm_n_v_heads);
  const uint64_t qdim = static_cast<uint64_t>(s.n_head * s.head_dim);
  const uint64_t kvdim = static_cast<uint64_t>(s.n_head_kv * s.head_dim);
  const uint64_t hd = static_cast<uint64_t>(s.head_dim);
  t.push_back({"token_embd.weight", {H, static_cast<uint64_t>(s.n_vocab)}, true, Init::kEmbedding});
  auto attention = [&](const std::string& p) {
    t.push_back({p + "attn_q.weight", {H, 2 * qdim}, true, Init::kProjection});
    t.push_back({p + "attn_k.weight", {H, kvdim}, true, Init::kProjection});
    t.push_back({p + "attn_v.weight", {H, kvdim}, true, Init::kProjection});
    t.push_back({p + "attn_output.weight", {qdim, H}, true, Init::kProjection});
    t.push_back({p + "attn_q_norm.weight", {hd}, false, Init::kNormOne});
    t.push_back({p + "attn_k_norm.weight", {hd}, false, Init::kNormOne});
  };
  auto common = [&](const std::string& p) {
    t.push_back({p + "attn_norm.weight", {H}, false, Init::kNormOne});
    t.push_back({p + "post_attention_norm.weight", {H}, false, Init::kNormOne});
    t.push_back({p + "ffn_gate.weight", {H, static_cast<uint64_t>(s.n_ff)}, true, Init::kProjection});
    t.push_back({p + "ffn_up.weight", {H, static_cast<uint64_t>(s.n_ff)}, true, Init::kProjection});
    t.push_back({p + "ffn_down.weight", {static_cast<uint64_t>(s.n_ff), H}, true, Init::kProjection});
  };
  for (int il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    common(p);
    if ((il + 1) % s.full_attention_interval == 0) {
      attention(p);
    } else {
      t.push_back({p + "attn_qkv.weight", {H, qkv}, true, Init::kProjection});
      t.push_back({p + "attn_gate.weight", {H, inner}, true, Init::kProjection});
      t.push_back({p + "ssm_beta.weight", {H, nv}, true, Init::kProjection});
      t.push_back({p + "ssm_alpha.weight", {H, nv}, true, Init::kProjection});
      t.push_back({p + "ssm_conv1d.weight", {static_cast<uint64_t>(s.ssm_conv_kernel), qkv}, false, Init::kConv});
      t.push_back({p + "ssm_dt.bias", {nv}, false, Init::kDtBias});
      t.push_back({p + "ssm_a", {nv}, false, Init::kSsmA});
      t.push_back({p + "ssm_norm.weight", {static_cast<uint64_t>(s.ssm_head_v_dim)}, false, Init::kNormOne});
      t.push_back({p + "ssm_out.weight", {inner, H}, true, Init::kProjection});
    }
  }
  if (s.n_mtp > 0) {
    const std::string p = "blk." + std::to_string(s.n_layer) + ".";
    common(p);
    attention(p);
    t.push_back({p + "nextn.eh_proj.weight", {2 * H, H}, true, Init::kProjection});
    t.push_back({p + "nextn.enorm.weight", {H}, false, Init::kNormOne});
    t.push_back({p + "nextn.hnorm.weight", {H}, false, Init::kNormOne});
    t.push_back({p + "nextn.shared_head_norm.weight", {H}, false, Init::kNormOne});
  }
  t.push_back({"output_norm.weight", {H}, false, Init::kNormOne});
  if (!s.tied_embeddings) {
    t.push_back({"output.weight", {H, static_cast<uint64_t>(s.n_vocab)}, true, Init::kProjection});
  }
  return t;
}

void fill(const TensorSpec& spec, uint64_t seed, std::vector<float>& out) {
  SplitMix64 rng{seed ^ name_hash(spec.name)};
  const double in = static_cast<double>(spec.shape[0]);
  for (float& v : out) {
    switch (spec.init) {
      case Init::kProjection: v = rng.normal() * static_cast<float>(1.0 / std::sqrt(in)); break;
      case Init::kEmbedding: v = rng.normal(); break;
      case Init::kNormOne: v = 1.0f + 0.1f * rng.normal(); break;
      case Init::kSsmA: v = -static_cast<float>(1.0 + 15.0 * rng.uniform()); break;  // -exp(A_log), A_log in log[1,16]
      case Init::kDtBias: {
        const double dt = std::exp(std::log(1e-3) + rng.uniform() * (std::log(1e-1) - std::log(1e-3)));
        v = static_cast<float>(dt + std::log(-std::expm1(-dt)));  // softplus^-1(dt)
        break;
      }
      case Init::kConv: v = rng.normal() * 0.5f; break;
    }
  }
}

uint32_t ggml_type(DType t) {
  switch (t) {
    case DType::kF32: return static_cast<uint32_t>(gguf::TensorType::kF32);
    case DType::kF16: return static_cast<uint32_t>(gguf::TensorType::kF16);
    case DType::kBF16: return static_cast<uint32_t>(gguf::TensorType::kBF16);
    case DType::kQ8_0: return static_cast<uint32_t>(gguf::TensorType::kQ8_0);
  }
  return 0;
}

// llama.cpp's LLAMA_FTYPE values for general.file_type.
uint32_t file_type(DType t) {
  switch (t) {
    case DType::kF32: return 0;
    case DType::kF16: return 1;
    case DType::kQ8_0: return 7;
    case DType::kBF16: return 32;
  }
  return 0;
}

}  // namespace

std::vector<gguf::KeyValue> qwen35_metadata(const ModelShape& s, DType weight_type) {
  using gguf::Value;
  const std::string a = "qwen35.";
  const int half = s.rope_dims / 2;
  const int s1 = (half * 11 + 16) / 32;  // Qwen's M-RoPE sections [11, 11, 10] of 32, scaled
  std::vector<gguf::KeyValue> kv = {
      {"general.architecture", Value::of_string("qwen35")},
      {"general.name", Value::of_string("qwenchat synthetic " + s.name)},
      {"general.file_type", Value::of_u32(file_type(weight_type))},
      {"general.quantization_version", Value::of_u32(2)},
      {a + "block_count", Value::of_u32(static_cast<uint32_t>(s.n_layer + s.n_mtp))},
      {a + "context_length", Value::of_u32(static_cast<uint32_t>(s.n_ctx_train))},
      {a + "embedding_length", Value::of_u32(static_cast<uint32_t>(s.n_embd))},
      {a + "feed_forward_length", Value::of_u32(static_cast<uint32_t>(s.n_ff))},
      {a + "attention.head_count", Value::of_u32(static_cast<uint32_t>(s.n_head))},
      {a + "attention.head_count_kv", Value::of_u32(static_cast<uint32_t>(s.n_head_kv))},
      {a + "rope.freq_base", Value::of_f32(s.rope_theta)},
      {a + "attention.layer_norm_rms_epsilon", Value::of_f32(s.rms_eps)},
      {a + "attention.key_length", Value::of_u32(static_cast<uint32_t>(s.head_dim))},
      {a + "attention.value_length", Value::of_u32(static_cast<uint32_t>(s.head_dim))},
      {a + "rope.dimension_count", Value::of_u32(static_cast<uint32_t>(s.rope_dims))},
      {a + "rope.dimension_sections", Value::i32s({s1, s1, half - 2 * s1, 0})},
      {a + "ssm.conv_kernel", Value::of_u32(static_cast<uint32_t>(s.ssm_conv_kernel))},
      {a + "ssm.state_size", Value::of_u32(static_cast<uint32_t>(s.ssm_head_k_dim))},
      {a + "ssm.group_count", Value::of_u32(static_cast<uint32_t>(s.ssm_n_k_heads))},
      {a + "ssm.time_step_rank", Value::of_u32(static_cast<uint32_t>(s.ssm_n_v_heads))},
      {a + "ssm.inner_size", Value::of_u32(static_cast<uint32_t>(s.ssm_n_v_heads * s.ssm_head_v_dim))},
      {a + "full_attention_interval", Value::of_u32(static_cast<uint32_t>(s.full_attention_interval))},
  };
  if (s.n_mtp > 0) kv.push_back({a + "nextn_predict_layers", Value::of_u32(static_cast<uint32_t>(s.n_mtp))});
  return kv;
}

Status write_synthetic_model(const SyntheticModelOptions& opts) {
  const ModelShape& s = opts.shape;
  QC_TRY(s.validate());
  gguf::Writer w;
  for (gguf::KeyValue& kv : qwen35_metadata(s, opts.weight_type)) w.set(std::move(kv.key), std::move(kv.value));
  if (opts.extra_metadata) opts.extra_metadata(w);

  const std::vector<TensorSpec> specs = tensor_specs(s);
  std::vector<DType> types;
  for (const TensorSpec& t : specs) {
    const DType type = t.quantizable ? opts.weight_type : DType::kF32;
    types.push_back(type);
    QC_TRY(w.add_tensor(t.name, ggml_type(type), t.shape));
  }
  QC_TRY(w.begin(opts.out_path));
  std::vector<float> values;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& t = specs[i];
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    values.resize(n);
    fill(t, opts.seed, values);
    bytes.resize(dtype_bytes(types[i], n));
    encode_row(types[i], values.data(), bytes.data(), static_cast<int64_t>(n));
    QC_TRY(w.write_tensor(t.name, bytes));
    if (opts.progress) opts.progress(i + 1, specs.size(), t.name);
  }
  return w.finish();
}

}  // namespace qc
