#include "model/qwen35_layout.h"

namespace qc {

std::vector<Qwen35Tensor> qwen35_tensor_layout(const ModelShape& s) {
  std::vector<Qwen35Tensor> t;
  const uint64_t H = static_cast<uint64_t>(s.n_embd);
  const uint64_t qkv =
      static_cast<uint64_t>(2 * s.ssm_n_k_heads * s.ssm_head_k_dim + s.ssm_n_v_heads * s.ssm_head_v_dim);
  const uint64_t inner = static_cast<uint64_t>(s.ssm_n_v_heads * s.ssm_head_v_dim);
  const uint64_t nv = static_cast<uint64_t>(s.ssm_n_v_heads);
  const uint64_t qdim = static_cast<uint64_t>(s.n_head * s.head_dim);
  const uint64_t kvdim = static_cast<uint64_t>(s.n_head_kv * s.head_dim);
  const uint64_t hd = static_cast<uint64_t>(s.head_dim);
  const uint64_t ff = static_cast<uint64_t>(s.n_ff);
  using R = TensorRole;
  t.push_back({"token_embd.weight", {H, static_cast<uint64_t>(s.n_vocab)}, R::kEmbedding});
  auto attention = [&](const std::string& p) {
    t.push_back({p + "attn_q.weight", {H, 2 * qdim}, R::kProjection});
    t.push_back({p + "attn_k.weight", {H, kvdim}, R::kProjection});
    t.push_back({p + "attn_v.weight", {H, kvdim}, R::kProjection});
    t.push_back({p + "attn_output.weight", {qdim, H}, R::kProjection});
    t.push_back({p + "attn_q_norm.weight", {hd}, R::kNorm});
    t.push_back({p + "attn_k_norm.weight", {hd}, R::kNorm});
  };
  auto common = [&](const std::string& p) {
    t.push_back({p + "attn_norm.weight", {H}, R::kNorm});
    t.push_back({p + "post_attention_norm.weight", {H}, R::kNorm});
    t.push_back({p + "ffn_gate.weight", {H, ff}, R::kProjection});
    t.push_back({p + "ffn_up.weight", {H, ff}, R::kProjection});
    t.push_back({p + "ffn_down.weight", {ff, H}, R::kProjection});
  };
  for (int il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    common(p);
    if ((il + 1) % s.full_attention_interval == 0) {
      attention(p);
    } else {
      t.push_back({p + "attn_qkv.weight", {H, qkv}, R::kProjection});
      t.push_back({p + "attn_gate.weight", {H, inner}, R::kProjection});
      t.push_back({p + "ssm_beta.weight", {H, nv}, R::kSmallProjection});
      t.push_back({p + "ssm_alpha.weight", {H, nv}, R::kSmallProjection});
      t.push_back({p + "ssm_conv1d.weight", {static_cast<uint64_t>(s.ssm_conv_kernel), qkv}, R::kConv});
      t.push_back({p + "ssm_dt.bias", {nv}, R::kDtBias});
      t.push_back({p + "ssm_a", {nv}, R::kSsmA});
      t.push_back({p + "ssm_norm.weight", {static_cast<uint64_t>(s.ssm_head_v_dim)}, R::kSsmNorm});
      t.push_back({p + "ssm_out.weight", {inner, H}, R::kProjection});
    }
  }
  if (s.n_mtp > 0) {
    const std::string p = "blk." + std::to_string(s.n_layer) + ".";
    common(p);
    attention(p);
    t.push_back({p + "nextn.eh_proj.weight", {2 * H, H}, R::kProjection});
    t.push_back({p + "nextn.enorm.weight", {H}, R::kNorm});
    t.push_back({p + "nextn.hnorm.weight", {H}, R::kNorm});
    t.push_back({p + "nextn.shared_head_norm.weight", {H}, R::kNorm});
  }
  t.push_back({"output_norm.weight", {H}, R::kNorm});
  if (!s.tied_embeddings) {
    t.push_back({"output.weight", {H, static_cast<uint64_t>(s.n_vocab)}, R::kProjection});
  }
  return t;
}

uint32_t ggml_type_id(DType t) {
  switch (t) {
    case DType::kF32:
      return static_cast<uint32_t>(gguf::TensorType::kF32);
    case DType::kF16:
      return static_cast<uint32_t>(gguf::TensorType::kF16);
    case DType::kBF16:
      return static_cast<uint32_t>(gguf::TensorType::kBF16);
    case DType::kQ8_0:
      return static_cast<uint32_t>(gguf::TensorType::kQ8_0);
    case DType::kQ4_0:
    case DType::kQ5_0:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return static_cast<uint32_t>(*dtype_block_format(t));
  }
  return 0;
}

uint32_t llama_file_type(DType t) {
  return quant_mix_file_type(quant_mix_of(t));
}

std::vector<gguf::KeyValue> qwen35_metadata(const ModelShape& s, DType weight_type) {
  return qwen35_metadata(s, quant_mix_of(weight_type));
}

Result<std::vector<DType>> qwen35_tensor_types(const ModelShape& s, const std::vector<Qwen35Tensor>& layout,
                                               QuantMix mix) {
  std::vector<MixTensor> tensors;
  tensors.reserve(layout.size());
  for (const Qwen35Tensor& t : layout) tensors.push_back({t.name, t.shape});
  return quant_mix_types(mix, tensors, s.n_layer + s.n_mtp);
}

std::vector<gguf::KeyValue> qwen35_metadata(const ModelShape& s, QuantMix mix) {
  using gguf::Value;
  const std::string a = "qwen35.";
  const int half = s.rope_dims / 2;
  const int s1 = (half * 11 + 16) / 32;  // Qwen's M-RoPE sections [11, 11, 10] of 32, scaled
  std::vector<gguf::KeyValue> kv = {
      {"general.architecture", Value::of_string("qwen35")},
      {"general.name", Value::of_string("qwenchat synthetic " + s.name)},
      {"general.file_type", Value::of_u32(quant_mix_file_type(mix))},
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

}  // namespace qc
