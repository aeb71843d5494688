#include "model/quant_mix.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>

namespace qc {
namespace {

constexpr QuantMix kAllMixes[] = {QuantMix::kF32,    QuantMix::kF16,    QuantMix::kBF16,   QuantMix::kQ8_0,
                                  QuantMix::kQ4_0,   QuantMix::kQ5_0,   QuantMix::kQ4_K_S, QuantMix::kQ4_K_M,
                                  QuantMix::kQ5_K_S, QuantMix::kQ5_K_M, QuantMix::kQ6_K};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// tensor_allows_quantization, the parts that can match a qwen35 name.
bool allows_quantization(const std::string& name, const std::vector<uint64_t>& shape) {
  return shape.size() >= 2 && ends_with(name, "weight") && !contains(name, "_norm.weight") &&
         !contains(name, "ssm_conv1d");
}

enum class Category { kTokenEmbd, kOutput, kAttnV, kFfnDown, kOther };

// tensor_get_category, reduced to the categories whose rules fire for the mixes here (attn_q, attn_k,
// attn_output, ffn_up and ffn_gate have rules only for other file types). The order of the tests is
// llama.cpp's: attn_qkv is found before attn_v, and both are attn_v-like (category_is_attn_v).
Category category(const std::string& name) {
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight") return Category::kTokenEmbd;
  if (contains(name, "attn_qkv.weight") || contains(name, "attn_v.weight")) return Category::kAttnV;
  if (contains(name, "ffn_down")) return Category::kFfnDown;
  return Category::kOther;
}

bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

bool is_block_format(DType t) {
  return t != DType::kF32 && t != DType::kF16 && t != DType::kBF16;
}

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// llama_tensor_get_type_impl for this architecture (see the header).
DType mix_rules(QuantMix m, DType t, const std::string& name, int64_t ne0, const MixPosition& pos) {
  const Category cat = category(name);
  const bool k_m = m == QuantMix::kQ4_K_M || m == QuantMix::kQ5_K_M;
  if (cat == Category::kOutput || (pos.tied_embeddings && cat == Category::kTokenEmbd)) {
    if (ne0 % dtype_block(t) != 0) return DType::kQ8_0;
    return t != DType::kQ8_0 ? DType::kQ6_K : t;
  }
  if (cat == Category::kAttnV) {
    if (k_m && use_more_bits(pos.i_attn_v, pos.n_attn_v)) return DType::kQ6_K;
    if (m == QuantMix::kQ4_K_S && pos.i_attn_v < 4) return DType::kQ5_K;
  }
  if (cat == Category::kFfnDown) {
    if (k_m && use_more_bits(pos.i_ffn_down, pos.n_ffn_down)) return DType::kQ6_K;
    if (m == QuantMix::kQ4_K_S && pos.i_ffn_down < pos.n_ffn_down / 8) return DType::kQ5_K;
  }
  return t;
}

}  // namespace

const char* quant_mix_name(QuantMix m) {
  switch (m) {
    case QuantMix::kF32:
      return "f32";
    case QuantMix::kF16:
      return "f16";
    case QuantMix::kBF16:
      return "bf16";
    case QuantMix::kQ8_0:
      return "q8_0";
    case QuantMix::kQ4_0:
      return "q4_0";
    case QuantMix::kQ5_0:
      return "q5_0";
    case QuantMix::kQ4_K_S:
      return "q4_k_s";
    case QuantMix::kQ4_K_M:
      return "q4_k_m";
    case QuantMix::kQ5_K_S:
      return "q5_k_s";
    case QuantMix::kQ5_K_M:
      return "q5_k_m";
    case QuantMix::kQ6_K:
      return "q6_k";
  }
  return "?";
}

Result<QuantMix> quant_mix_from_name(const std::string& name, const std::string& what) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  std::string all;
  for (QuantMix m : kAllMixes) {
    if (lower == quant_mix_name(m)) return m;
    all += std::string(all.empty() ? "" : ", ") + quant_mix_name(m);
  }
  return make_error(what + ": expected one of " + all + ", got \"" + name + "\"");
}

QuantMix quant_mix_of(DType t) {
  switch (t) {
    case DType::kF32:
      return QuantMix::kF32;
    case DType::kF16:
      return QuantMix::kF16;
    case DType::kBF16:
      return QuantMix::kBF16;
    case DType::kQ8_0:
      return QuantMix::kQ8_0;
    case DType::kQ4_0:
      return QuantMix::kQ4_0;
    case DType::kQ5_0:
      return QuantMix::kQ5_0;
    case DType::kQ4_K:
      return QuantMix::kQ4_K_M;
    case DType::kQ5_K:
      return QuantMix::kQ5_K_M;
    case DType::kQ6_K:
      return QuantMix::kQ6_K;
  }
  return QuantMix::kF32;
}

DType quant_mix_default_type(QuantMix m) {
  switch (m) {
    case QuantMix::kF32:
      return DType::kF32;
    case QuantMix::kF16:
      return DType::kF16;
    case QuantMix::kBF16:
      return DType::kBF16;
    case QuantMix::kQ8_0:
      return DType::kQ8_0;
    case QuantMix::kQ4_0:
      return DType::kQ4_0;
    case QuantMix::kQ5_0:
      return DType::kQ5_0;
    case QuantMix::kQ4_K_S:
    case QuantMix::kQ4_K_M:
      return DType::kQ4_K;
    case QuantMix::kQ5_K_S:
    case QuantMix::kQ5_K_M:
      return DType::kQ5_K;
    case QuantMix::kQ6_K:
      return DType::kQ6_K;
  }
  return DType::kF32;
}

uint32_t quant_mix_file_type(QuantMix m) {
  switch (m) {  // enum llama_ftype in include/llama.h
    case QuantMix::kF32:
      return 0;  // LLAMA_FTYPE_ALL_F32
    case QuantMix::kF16:
      return 1;  // LLAMA_FTYPE_MOSTLY_F16
    case QuantMix::kBF16:
      return 32;  // LLAMA_FTYPE_MOSTLY_BF16
    case QuantMix::kQ8_0:
      return 7;
    case QuantMix::kQ4_0:
      return 2;
    case QuantMix::kQ5_0:
      return 8;
    case QuantMix::kQ4_K_S:
      return 14;
    case QuantMix::kQ4_K_M:
      return 15;
    case QuantMix::kQ5_K_S:
      return 16;
    case QuantMix::kQ5_K_M:
      return 17;
    case QuantMix::kQ6_K:
      return 18;
  }
  return 0;
}

Result<DType> quant_mix_tensor_type(QuantMix m, const std::string& name, const std::vector<uint64_t>& shape,
                                    const MixPosition& pos) {
  if (!allows_quantization(name, shape)) return DType::kF32;  // what the converter wrote, kept
  const DType def = quant_mix_default_type(m);
  if (!is_block_format(def)) return def;  // f32/f16/bf16: llama.cpp applies no rules to unquantised types
  const int64_t ne0 = static_cast<int64_t>(shape[0]);
  const DType chosen = mix_rules(m, def, name, ne0, pos);
  if (ne0 % dtype_block(chosen) == 0) return chosen;
  // tensor_type_fallback. Q5_K would become Q5_1 there, a type the engine lacks: Q8_0 (see the header).
  DType fallback = DType::kF16;
  switch (chosen) {
    case DType::kQ4_K:
      fallback = DType::kQ5_0;
      break;
    case DType::kQ5_K:
    case DType::kQ6_K:
      fallback = DType::kQ8_0;
      break;
    default:
      return make_error(name + " " + shape_str(shape) + ": row length " + std::to_string(ne0) +
                            " is not a multiple of " + dtype_name(chosen) + "'s block of " +
                            std::to_string(dtype_block(chosen)) + ", and " + quant_mix_name(m) +
                            " has no fallback type for it (llama.cpp refuses it too)",
                        "use a K-quant mix (q4_k_m, ...), q8_0 or f16 for this model");
  }
  if (ne0 % dtype_block(fallback) != 0) fallback = DType::kF16;
  return fallback;
}

Result<std::vector<DType>> quant_mix_types(QuantMix m, const std::vector<MixTensor>& tensors,
                                           int block_count) {
  // llama.cpp visits the weights in weight_name_comparer order: layer number ("blk.N."; -1 for the rest),
  // then the name.
  auto layer_of = [](const std::string& name) {
    int layer = -1;
    if (std::sscanf(name.c_str(), "blk.%d.", &layer) != 1) layer = -1;
    return layer;
  };
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    if (la != lb) return la < lb;
    return tensors[a].name < tensors[b].name;
  });
  MixPosition pos;
  pos.tied_embeddings = true;  // init_quantize_state_counters: tied until an output.weight is seen
  for (const MixTensor& t : tensors) {
    const Category c = category(t.name);
    if (c == Category::kAttnV) ++pos.n_attn_v;
    if (c == Category::kOutput) pos.tied_embeddings = false;
  }
  pos.n_ffn_down = block_count;
  std::vector<DType> types(tensors.size(), DType::kF32);
  for (size_t i : order) {
    const MixTensor& t = tensors[i];
    QC_ASSIGN(types[i], quant_mix_tensor_type(m, t.name, t.shape, pos));
    // The counters advance only where llama_tensor_get_type_impl runs: quantised tensors of a block-format
    // mix (it is not called for unquantised ones or for f16/bf16/f32 files).
    if (!allows_quantization(t.name, t.shape) || !is_block_format(quant_mix_default_type(m))) continue;
    const Category c = category(t.name);
    if (c == Category::kAttnV) ++pos.i_attn_v;
    if (c == Category::kFfnDown) ++pos.i_ffn_down;
  }
  return types;
}

}  // namespace qc
