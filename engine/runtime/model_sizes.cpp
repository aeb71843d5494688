#include "runtime/model_sizes.h"

#include <algorithm>
#include <cmath>

#include "model/config.h"
#include "model/qwen35_layout.h"
#include "reference/reference_backend.h"

namespace qc {
namespace {

// The config the loader would read from a file of this shape (what the caches are sized from).
ModelConfig config_of(const ModelShape& s) {
  ModelConfig c;
  c.architecture = "qwen35";
  c.n_vocab = s.n_vocab;
  c.n_embd = s.n_embd;
  c.n_layer = s.n_layer;
  c.n_ff = s.n_ff;
  c.n_ctx_train = s.n_ctx_train;
  c.n_head = s.n_head;
  c.head_dim = s.head_dim;
  c.rope_dims = s.rope_dims;
  c.ssm_conv_kernel = s.ssm_conv_kernel;
  c.ssm_n_k_heads = s.ssm_n_k_heads;
  c.ssm_n_v_heads = s.ssm_n_v_heads;
  c.ssm_head_k_dim = s.ssm_head_k_dim;
  c.ssm_head_v_dim = s.ssm_head_v_dim;
  c.full_attention_interval = s.full_attention_interval;
  c.n_mtp = s.n_mtp;
  c.is_recurrent.resize(static_cast<size_t>(s.n_layer));
  c.n_head_kv.assign(static_cast<size_t>(s.n_layer + s.n_mtp), s.n_head_kv);
  for (int i = 0; i < s.n_layer; ++i) {
    const bool recurrent = (i + 1) % s.full_attention_interval != 0;
    c.is_recurrent[static_cast<size_t>(i)] = recurrent;
    if (recurrent) c.n_head_kv[static_cast<size_t>(i)] = 0;
  }
  return c;
}

uint64_t weight_bytes(const ModelShape& s, double bits) {
  double bytes = 0;
  for (const Qwen35Tensor& t : qwen35_tensor_layout(s)) {
    double n = 1;
    for (uint64_t d : t.shape) n *= static_cast<double>(d);
    bytes += t.quantizable() ? n * bits / 8.0 : n * 4.0;  // vectors, norms and conv taps stay F32
  }
  return static_cast<uint64_t>(std::llround(bytes));
}

}  // namespace

const std::vector<WeightFormat>& weight_formats() {
  static const std::vector<WeightFormat> f = {
      {"Q4_K_M", 4.85, true},  // llama.cpp's reported average for Q4_K_M files
      {"Q8_0", 8.5, true},     // 34 bytes per block of 32
      {"F16", 16.0, true},
  };
  return f;
}

SizeEstimate estimate_for_shape(const ModelShape& shape, int n_ctx) {
  SizeEstimate e;
  e.preset = shape.name;
  e.n_params = shape.n_params();
  for (const WeightFormat& f : weight_formats())
    e.weight_bytes.push_back(weight_bytes(shape, f.bits_per_weight));
  ReferenceOptions o;  // the CPU backend's defaults, as estimate_load uses them
  o.n_ctx = std::clamp(n_ctx, 1, shape.n_ctx_train);
  e.n_ctx = o.n_ctx;
  e.cache_bytes = reference_state_bytes(config_of(shape), o);
  return e;
}

std::vector<SizeEstimate> qwen_size_estimates(int n_ctx) {
  std::vector<SizeEstimate> out;
  for (const std::string& name : preset_names()) {
    if (name == "tiny" || name == "small") continue;  // test shapes, not released sizes
    if (auto shape = preset_shape(name); shape.ok()) out.push_back(estimate_for_shape(*shape, n_ctx));
  }
  return out;
}

}  // namespace qc
