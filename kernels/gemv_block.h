// GEMV for block-quantised weights (block_quant.h: Q4_0, Q5_0, Q4_K, Q5_K, Q6_K as the file stores them):
// y[m][n] = sum_k W[n][k] * x[m][k] (+ residual), M <= 4, W read once for all M. Two activation forms:
// - kF32 (x): the weights dequantised in registers exactly as the CPU reference does (block_quant.cuh), an
//   f32 FMA chain per weight; the result differs from the reference's by the f32 summation order only.
// - kH / kHL (xq, the quantised words the Q8_0 GEMVs read, layout.h): per 32-weight piece the integer dot
//   products of the weights' quants with the activation words (dp4a), scaled by the piece's factors
//   (block_quant.cuh IntPiece): ~1.5 instructions per weight instead of ~7, as llama.cpp's MMVQ does. The
//   weights are still exactly the reference's; the activations carry the format's error (kHL: <= s/254).
#pragma once

#include <cuda_runtime_api.h>

#include "block_quant.h"
#include "layout.h"
#include "qwenchat_kernels/gemv_variant.h"
#include "status.h"

namespace qc::gpu {

struct GemvBlockArgs {
  BlockWeights w{};
  ActFormat format = ActFormat::kF32;
  const float* x = nullptr;  // kF32: [M][ld_x], 16-byte aligned rows
  int ld_x = 0;              // multiple of 4, >= K
  QActIn xq{};               // kH (hi, scale) / kHL (hi, lo, scale): ld >= K, 16-byte aligned rows
  float* y = nullptr;        // [M][ld_y]
  int ld_y = 0;
  const float* residual = nullptr;  // optional, may alias y
  int ld_residual = 0;
  int m = 1;
  int warps_per_row = 0;  // 1, 2, 4 or 8; 0 = auto: 8 (one block per row) for small N, 2 for long rows with
                          // few warps (kH / kHL), else 1
  int rows_per_warp = 0;  // kH / kHL: rows per warp sharing the activation loads, 1 or 2; 0 = auto (1 at M = 1,
                          // else 2). Same bits.
  int pipeline = -1;      // kH / kHL: 1 = a lane issues its next piece's loads before decoding the current one
                          // (two in flight), 0 = one; -1 = auto. Same bits.
  int act_sums = -1;      // kH / kHL, Q4_K / Q5_K: 1 = the activation sums of their min term formed once per block
                          // in shared memory, 0 = per piece and row; -1 = auto (other types: 0). Same bits.
  bool pdl = false;
};
GpuStatus gemv_block(const GemvBlockArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
