// RMSNorm with the fused residual add and the fused int8 quantisation of its output (layer entries, the
// post-attention norm, the final norm), and the standalone activation quantiser.
//
// Cost: one block per token row (for the token path's M <= kMaxTokens rows without the add, n / 512 blocks
// per row, each reducing the whole row: norm.cuh rmsnorm_row_slice, the same bits); the data is a few KB per
// row, so these are latency kernels whose point is to remove launches and passes: "x += y; x_hat = norm(x);
// q = quant(x_hat)" is one kernel and one read of x instead of three.
#pragma once

#include <cuda_runtime_api.h>

#include "layout.h"
#include "status.h"

namespace qc::gpu {

struct RmsNormArgs {
  const float* x = nullptr;  // [M][ld_x] the residual stream
  int ld_x = 0;
  const float* add = nullptr;  // optional [M][ld_add]: x' = x + add is normalised and written to x_out
  int ld_add = 0;
  float* x_out = nullptr;  // [M][ld_x_out]; required with `add`, may alias x (in-place h += y)
  int ld_x_out = 0;
  const float* weight = nullptr;  // [n] f32 (GGUF norms already include the +1)
  int n = 0;                      // row length; multiple of 32 when out_q is requested
  int m = 1;                      // token rows 1..kMaxRows
  float eps = 1e-6f;
  float* out = nullptr;  // optional [M][ld_out] normed f32
  int ld_out = 0;
  QActOut out_q{};  // optional quantised normed (out_q.lo null: format h); hi null: none
  // optional [M][ld_out16] f16(normed * 2^-shift16) saturated: the f16 prompt path's input, with
  // gemm_f16.h rows_to_f16's bits, without writing and re-reading the f32 rows
  uint16_t* out16 = nullptr;
  int ld_out16 = 0;
  int shift16 = 0;
  bool pdl = false;
};
GpuStatus rmsnorm(const RmsNormArgs& args, cudaStream_t stream);

// Quantise f32 rows to format h (out.lo null) or hl (layout.h). n multiple of 32. Bit-exact with the CPU
// mirror of the formula in layout.h (no reductions other than max, which is exact).
struct QuantizeArgs {
  const float* x = nullptr;  // [M][ld_x]
  int ld_x = 0;
  int n = 0;
  int m = 1;
  QActOut out{};
  bool pdl = false;
};
GpuStatus quantize_act(const QuantizeArgs& args, cudaStream_t stream);

}  // namespace qc::gpu
