// GEMV for non-Q8_0 weights: f32 (GDN's 48-wide beta/alpha projections, which our importer keeps f32
// because they feed exponentials), f16 and bf16 (any tensor a file stores that way).
// y[m][n] = sum_k W[n][k] * x[m][k] (+ residual), M <= 4, W read once for all M.
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct GemvDenseArgs {
  const void* w = nullptr;  // [N][ld_w] elements of `type` (f16/bf16 as 16-bit words)
  DenseType type = DenseType::kF32;
  int n = 0;
  int k = 0;
  int ld_w = 0;              // elements between rows, >= k
  const float* x = nullptr;  // [M][ld_x]
  int ld_x = 0;
  float* y = nullptr;  // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional, may alias y
  int ld_residual = 0;
  int m = 1;
  int warps_per_row = 0;  // 0 = auto: 8 (one block per row) for small N, else 1
  bool pdl = false;
};
GpuStatus gemv_dense(const GemvDenseArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
