// Dense-weight (F32 / F16 / BF16) projection of many token rows: the prefill path's counterpart of
// gemv_dense (which takes M <= 4). Used for the matrices a Q8_0 model keeps dense -- GDN's 48-row beta and
// alpha projections, which the importer stores f32 -- and for whole F32/F16/BF16 models.
//   y[m][n] = (residual[m][n] +) sum_k W[n][k] * x[m][k]
// Each output is one warp's lane-strided FMA chain in ascending k, reduced by warp_sum (fixed tree): a
// row's bits depend on that row alone, not on M or on the rows beside it. Deterministic.
//
// Cost: a block holds kRows token rows and 8 weight rows, so W is read ceil(M / kRows) times (through L2)
// and x once per 8 weight rows; for the 48 x 5120 f32 GDN projections at M = 1024 that is 64 reads of
// 1 MB, about 20 us. Not a tensor-core kernel: the big projections are Q8_0 (gemm_q8).
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct GemmDenseArgs {
  const void* w = nullptr;  // [n][ld_w] of `type`
  DenseType type = DenseType::kF32;
  int n = 0;
  int k = 0;
  int ld_w = 0;
  const float* x = nullptr;  // [M][ld_x]
  int ld_x = 0;
  int m = 1;                 // 1 .. kMaxRows
  float* y = nullptr;        // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional, may alias y (same ld)
  int ld_residual = 0;
};
GpuStatus gemm_dense(const GemmDenseArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
