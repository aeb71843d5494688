// The qwen35 GGUF layout for a given shape, as llama.cpp's converter writes it (QWEN35.md section 5): the
// list of tensors (name, GGUF shape, role) in file order and the qwen35.* metadata. Shared by the
// synthetic-model generator and the Hugging Face importer, so both write files with exactly the same
// tensor names, shapes and keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/types.h"
#include "model/presets.h"
#include "model/quant.h"
#include "model/quant_mix.h"

namespace qc {

// What a tensor is; decides its number format in a file and, in the generator, its random init.
enum class TensorRole {
  kEmbedding,        // token_embd
  kProjection,       // every 2-D weight (matrices whose input dimension is a multiple of 32)
  kSmallProjection,  // ssm_alpha, ssm_beta: {H, Nv} projections feeding exponentials
  kNorm,             // RMSNorm weights that carry HF's +1 (every norm but ssm_norm)
  kSsmNorm,          // the GDN output norm: no +1
  kSsmA,             // -exp(A_log)
  kDtBias,           // ssm_dt.bias
  kConv,             // ssm_conv1d taps {K, channels}
};

struct Qwen35Tensor {
  std::string name;             // "blk.3.attn_qkv.weight"
  std::vector<uint64_t> shape;  // GGUF order {in, out}; {n} for vectors
  TensorRole role;
  bool quantizable() const {
    return role == TensorRole::kEmbedding || role == TensorRole::kProjection ||
           role == TensorRole::kSmallProjection;
  }
};

// Every tensor of a model of this shape, in the order the files store them: token_embd, the main layers
// (layer i is attention iff (i+1) % full_attention_interval == 0), the MTP block blk.{n_layer} when
// n_mtp > 0, output_norm, and output unless the embeddings are tied.
std::vector<Qwen35Tensor> qwen35_tensor_layout(const ModelShape& shape);

// The qwen35.* and general.* metadata for a shape (general.name says "qwenchat synthetic <name>"; the
// importer replaces it). `mix` sets general.file_type; a DType means its one-type file (quant_mix_of).
std::vector<gguf::KeyValue> qwen35_metadata(const ModelShape& shape, QuantMix mix);
std::vector<gguf::KeyValue> qwen35_metadata(const ModelShape& shape, DType weight_type);

// The per-tensor type of every tensor of `layout` in a file of `mix` (model/quant_mix.h's rules, block count
// n_layer + n_mtp), in layout order.
Result<std::vector<DType>> qwen35_tensor_types(const ModelShape& shape,
                                               const std::vector<Qwen35Tensor>& layout, QuantMix mix);

uint32_t ggml_type_id(DType t);     // gguf::TensorType id of a DType
// general.file_type of the one-type file of t: quant_mix_file_type(quant_mix_of(t)).
uint32_t llama_file_type(DType t);

}  // namespace qc
