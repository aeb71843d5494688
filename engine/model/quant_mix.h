// Which number format each tensor of a file gets: the names --outtype / --type accept (f32, f16, bf16, q8_0,
// q4_0, q5_0, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k) and, for each, the per-tensor choice llama.cpp's
// quantizer makes for that file type.
//
// Followed: ggml-org/llama.cpp src/llama-quant.cpp at commit 007dbbf3fd17 (tensor_allows_quantization,
// tensor_get_category, category_is_attn_v, llama_tensor_get_type_impl, tensor_type_fallback,
// llama_ftype_get_default_type, init_quantize_state_counters), with the loader's tensor order from
// llama-model-loader.h's weight_name_comparer (by layer number, then by name). What that code does for this
// architecture (dense, not Falcon, no 70B special case, no experts, no importance matrix, no overrides):
//   - only 2-D tensors whose name ends in "weight", is not a "_norm.weight" and not an "ssm_conv1d" are
//     quantised; everything else keeps the converter's type (F32 here);
//   - output.weight, and token_embd.weight when there is no output.weight (tied), become Q6_K in every
//     quantised mix except q8_0 (stays Q8_0), or Q8_0 when their row length is not a multiple of the mix's
//     default block size;
//   - attn_v.weight AND attn_qkv.weight (the GDN layers' fused q/k/v projection: llama.cpp files both
//     under category_is_attn_v, so its separate ATTENTION_QKV rule is never reached) share one counter:
//     q4_k_m and q5_k_m give the i-th of them Q6_K when use_more_bits(i, n) (i < n/8 || i >= 7n/8 ||
//     (i - n/8) % 3 == 2), n being how many the file has; q4_k_s gives the first four Q5_K. Every layer of
//     a qwen35 file, the MTP block included, has exactly one of the two, so i is the layer index and n the
//     block count;
//   - ffn_down.weight: the i-th (again the layer index) against n = the block count (hparams.n_layer_all,
//     MTP included): q4_k_m and q5_k_m give Q6_K when use_more_bits(i, n); q4_k_s gives Q5_K when i < n/8;
//   - every other quantised tensor takes the mix's default type (Q4_K for q4_k_*, Q5_K for q5_k_*, ...);
//   - last, a row length (ne[0]) that is not a multiple of the chosen type's block falls back: Q4_K -> Q5_0,
//     Q6_K -> Q8_0, Q5_K -> Q5_1 in llama.cpp, which the engine does not have: Q8_0 here (the one departure;
//     more bits, never fewer); when the fallback's 32-value block does not fit either, F16. A default type
//     of Q4_0, Q5_0 or Q8_0 with such a row is an error in llama.cpp ("no tensor type fallback"), and here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/quant.h"
#include "qwenchat/result.h"

namespace qc {

enum class QuantMix : uint8_t {
  kF32,
  kF16,
  kBF16,
  kQ8_0,
  kQ4_0,
  kQ5_0,
  kQ4_K_S,
  kQ4_K_M,
  kQ5_K_S,
  kQ5_K_M,
  kQ6_K
};

const char* quant_mix_name(QuantMix m);  // "q4_k_m"
// Any case; `what` names the setting in the error ("--outtype: expected one of f32, f16, ..., got \"q4\"").
Result<QuantMix> quant_mix_from_name(const std::string& name, const std::string& what);
// The one-type file of a DType (Q4_K -> q4_k_m, Q5_K -> q5_k_m, as general.file_type has always named them).
QuantMix quant_mix_of(DType t);
// llama_ftype_get_default_type: the type of every quantised tensor the rules do not single out.
DType quant_mix_default_type(QuantMix m);
// llama.cpp's LLAMA_FTYPE, written as general.file_type.
uint32_t quant_mix_file_type(QuantMix m);

// Where a tensor stands among its kind in the file, in llama.cpp's order (see the header comment).
struct MixPosition {
  int i_attn_v = 0, n_attn_v = 0;      // attn_v / attn_qkv: index among them and their count
  int i_ffn_down = 0, n_ffn_down = 0;  // ffn_down: index among them, and the block count
  bool tied_embeddings = false;        // no output.weight: token_embd is also the lm_head
};

// The type of one tensor (GGUF name, GGUF shape {ne0, ne1, ...}) in a file of mix `m`. Errors: a row
// length that no type llama.cpp would fall back to can hold (see above).
Result<DType> quant_mix_tensor_type(QuantMix m, const std::string& name, const std::vector<uint64_t>& shape,
                                    const MixPosition& pos);

struct MixTensor {
  std::string name;
  std::vector<uint64_t> shape;  // GGUF order
};
// The type of every tensor of a file (returned in the order given), counting positions as llama.cpp does:
// tensors visited by layer number then name, n_attn_v = how many attn_v/attn_qkv there are, n_ffn_down =
// `block_count` (the GGUF's {arch}.block_count: main layers plus MTP layers).
Result<std::vector<DType>> quant_mix_types(QuantMix m, const std::vector<MixTensor>& tensors,
                                           int block_count);

}  // namespace qc
