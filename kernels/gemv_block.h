// GEMV for block-quantised weights (block_quant.h: Q4_0, Q5_0, Q4_K, Q5_K, Q6_K as the file stores them)
// with f32 activations: y[m][n] = sum_k W[n][k] * x[m][k] (+ residual), M <= 4, W read once for all M.
// The weights are dequantised in registers exactly as the CPU reference does (block_quant.cuh), so the
// result differs from the reference's by the f32 summation order only.
#pragma once

#include <cuda_runtime_api.h>

#include "block_quant.h"
#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct GemvBlockArgs {
  BlockWeights w{};
  const float* x = nullptr;  // [M][ld_x], 16-byte aligned rows
  int ld_x = 0;              // multiple of 4, >= K
  float* y = nullptr;        // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional, may alias y
  int ld_residual = 0;
  int m = 1;
  int warps_per_row = 0;  // 0 = auto: 8 (one block per row) for small N, else 1
  bool pdl = false;
};
GpuStatus gemv_block(const GemvBlockArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
