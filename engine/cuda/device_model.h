// The model as the CUDA backend holds it: every weight's place in device memory, grouped the way the
// decode step launches them. Built by one layout function that runs twice (cuda_util.h, Carver): once to
// count the bytes (the memory estimate), once over the real allocation.
//
// Device formats (docs/KERNELS.md, kernels/layout.h):
// - Q8_0 matrices in the split layout (int8 rows of round_up(K, 16) bytes, 16-byte aligned, f16 scales
//   [rows][K/32]); the GEMV variants of KernelConfig run on them.
// - F32 / F16 / BF16 matrices stay in their format, rows contiguous, and run through gemv_dense with f32
//   activations (exact weights: an F32 model on the GPU differs from the f64 oracle by f32 rounding only).
// - Q4_0 / Q5_0 / Q4_K / Q5_K / Q6_K matrices stay as the file stores them (kernels/block_quant.h) and run
//   through gemv_block with f32 activations; the prompt path dequantises them to f16 like Q8_0.
// - Vectors (norms, conv taps, dt bias, ssm_a) are decoded to f32 whatever their file type.
// Projections that read the same input are stacked row-wise into one matrix per storage type, so one
// launch covers them: GDN [qkv | z | beta | alpha], attention [q+gate | k | v], FFN [gate | up]. Rows of
// a Q8_0 matrix are independent, so stacking changes no bit of any output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cuda/cuda_util.h"
#include "block_quant.h"
#include "embed.h"
#include "layout.h"
#include "model/config.h"
#include "model/weights.h"
#include "qwenchat/result.h"

namespace qc::cuda {

// How a generated weight is initialised (WeightSource for the benchmark); uploads ignore it.
enum class WeightRole : uint8_t { kProjection, kEmbedding, kNorm, kGatedNorm, kSsmA, kDtBias, kConv };

// One tensor of the file and where it goes on the device: what a WeightSource fills.
// The kernels' name for a block-quantised storage type (Q4_0, Q5_0, Q4_K, Q5_K, Q6_K); false for others.
bool block_type(DType t, gpu::BlockType* out);

struct TensorSlot {
  enum class Kind : uint8_t { kQ8, kDense, kBlock, kF32Vector };
  const TensorView* src = nullptr;  // the file's tensor; null when the weights are generated on the device
  std::string name;
  WeightRole role = WeightRole::kProjection;
  Kind kind = Kind::kQ8;
  DType type = DType::kQ8_0;  // storage type (kF32Vector: the file's type, decoded to f32)
  int64_t rows = 0, cols = 0;
  int8_t* q = nullptr;    // kQ8: [rows][row_stride]
  uint16_t* d = nullptr;  // kQ8: [rows][cols / 32]
  int row_stride = 0;
  void* data = nullptr;  // kDense / kBlock: the file's rows of `type`; kF32Vector: rows * cols floats

  uint64_t device_bytes() const;
};

// One GEMV launch over a run of stacked rows that share a storage type.
struct Linear {
  enum class Format : uint8_t { kQ8, kDense, kBlock };
  Format format = Format::kQ8;
  gpu::Q8Weights w{};           // kQ8
  gpu::BlockWeights blocks{};   // kBlock
  uint16_t* w16 = nullptr;      // kQ8 / kBlock: the prompt path's resident f16 copy [rows][cols] (prefill_weights.h) or null
  const void* dense = nullptr;  // kDense: [rows][cols] of dense_type
  gpu::DenseType dense_type = gpu::DenseType::kF32;
  int rows = 0, cols = 0;
  int out_offset = 0;      // first output column of these rows in the site's output row
  uint64_t bytes() const;  // weight bytes one launch reads
  bool q8() const { return format == Format::kQ8; }
  // The prompt path multiplies Q8_0 and block-quantised matrices on the f16 tensor cores (dequantised to
  // f16 first); dense ones on gemm_dense.
  bool f16_gemm() const { return format != Format::kDense; }
};

// Projections that share one input, writing one output row of n_out columns.
struct Site {
  std::vector<Linear> parts;
  int n_out = 0;
  int k = 0;
  uint64_t bytes() const;
};

struct DevLayer {
  bool recurrent = false;
  const float* attn_norm = nullptr;  // [H]
  const float* post_norm = nullptr;  // [H]
  Site in_proj;                      // GDN: qkv | z | beta | alpha; attention: q+gate | k | v
  Site out_proj;                     // ssm_out / attn_output
  Site gate_up;                      // gate | up (n_ff rows each)
  Site down;
  // GDN
  int col_z = 0, col_beta = 0, col_alpha = 0;  // output columns of in_proj
  const float* conv_w = nullptr;               // [conv_dim][conv_kernel]
  const float* dt_bias = nullptr;              // [Nv]
  const float* ssm_a = nullptr;                // [Nv]
  const float* ssm_norm = nullptr;             // [Dv]
  int gdn_index = -1;                          // slot in the GDN state block
  // attention
  int col_k = 0, col_v = 0;
  const float* q_norm = nullptr;  // [head_dim]
  const float* k_norm = nullptr;
  int n_kv = 0;
  int kv_index = -1;  // slot in the KV cache block (the MTP block's is the last)
};

struct DevEmbedding {
  gpu::EmbedType type = gpu::EmbedType::kQ8;
  gpu::Q8Weights q8{};
  const void* dense = nullptr;
  gpu::BlockWeights blocks{};
  // The lookup's arguments (the caller sets tokens, rows and output).
  gpu::EmbedArgs args(int n_vocab, int dim) const;
};

struct DeviceModel {
  std::vector<DevLayer> layers;
  DevEmbedding embd;
  const float* output_norm = nullptr;
  Site lm_head;  // the output matrix, or the embedding table when tied (same storage)
  bool has_mtp = false;
  DevLayer mtp_layer;
  Site mtp_eh_proj;  // K = 2H
  const float* mtp_enorm = nullptr;
  const float* mtp_hnorm = nullptr;
  const float* mtp_head_norm = nullptr;  // shared_head_norm or output_norm
  std::vector<TensorSlot> slots;         // every tensor to fill, in file order
  uint64_t embedding_bytes = 0;          // the table (read one row per token)
  bool tied = false;
};

// Shapes the kernels support (docs/KERNELS.md); the error names the field, the supported values and the
// model's value.
Status check_cuda_support(const ModelConfig& c);

// Lays the weights out in `carver`. `have_data`: the views point into a file (uploads); false for the
// descriptions of generated weights (describe_generated_weights), where presence is judged by name.
Result<DeviceModel> layout_model(const ModelConfig& c, const ModelWeights& w, bool have_data, Carver& carver);

// Views (names, types, shapes; no data) of a model whose 2-D weights have type `matrix_type` and whose
// vectors are F32, as llama.cpp's converter writes them: the benchmark generates such weights on the device.
// `per_tensor`, when given, overrides the matrix type by GGUF name (a mix: model/qwen35_layout.h
// qwen35_tensor_types), so a Q4_K_M file is described as llama.cpp's quantizer would write it.
ModelWeights describe_generated_weights(const ModelConfig& c, DType matrix_type, bool tied_embeddings,
                                        const std::map<std::string, DType>* per_tensor = nullptr);

}  // namespace qc::cuda
