// Token embedding: out[m] = row d_tokens[m] of the table, converted to f32. Token ids are read from device
// memory so the lookup can sit in a captured CUDA graph. An id outside [0, n_vocab) yields a row of NaN
// (visible downstream, never an out-of-bounds read).
#pragma once

#include <cuda_runtime_api.h>

#include "block_quant.h"
#include "layout.h"
#include "status.h"

namespace qc::gpu {

enum class EmbedType : uint8_t { kQ8, kF32, kF16, kBF16, kBlock };

struct EmbedArgs {
  const int* d_tokens = nullptr;  // [M] device
  int m = 1;
  EmbedType type = EmbedType::kQ8;
  Q8Weights q8{};               // kQ8: rows = n_vocab, cols = dim
  const void* dense = nullptr;  // kF32 / kF16 / kBF16: [n_vocab][dim] (f16/bf16 as 16-bit words)
  BlockWeights blocks{};        // kBlock: rows = n_vocab, cols = dim; values exactly the CPU reference's
  int n_vocab = 0;
  int dim = 0;
  float* out = nullptr;  // [M][ld_out]
  int ld_out = 0;
  bool pdl = false;
};
GpuStatus embed(const EmbedArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
