// Block-level RMSNorm with the optional residual add and the optional int8 quantisation, shared by
// norm_quant.cu (layer entries, final norm) and mtp.cu (the adapter's two halves).
//
// rmsnorm(x, w) = x * (1 / sqrt(mean(x^2) + eps)) * w, all in f32 (QWEN35.md section 2). The sum of squares
// is a fixed-order block reduction (common.cuh), the reciprocal square root is the correctly rounded
// 1/sqrt (not rsqrtf), so the result depends on the data and the block size only.
#pragma once

#include "common.cuh"

namespace qc::gpu {

struct NormRow {
  const float* x;    // [n] input
  const float* add;  // [n] or null: x' = x + add (the residual add), written to x_out
  float* x_out;      // [n] or null (required when add is set; may alias x)
  const float* w;    // [n] norm weight
  float* out;        // [n] normed f32 or null
  int8_t* q_hi;      // [n] or null: quantised normed (n multiple of 32)
  int8_t* q_lo;      // [n] or null (format h)
  float* q_scale;    // [n / 32]
  int n;
  float eps;
  uint16_t* out16 = nullptr;  // [n] or null: f16(y * scale16) saturated, gemm_f16.h rows_to_f16's rounding
  float scale16 = 1.0f;
};

// One block handles one row. `buf` is n floats of shared memory, `scratch` 32 floats.
__device__ inline void rmsnorm_row_block(const NormRow& r, float* buf, float* scratch) {
  float ss = 0.0f;
  for (int i = threadIdx.x; i < r.n; i += blockDim.x) {
    float v = r.x[i];
    if (r.add) {
      v = __fadd_rn(v, r.add[i]);
      r.x_out[i] = v;
    }
    buf[i] = v;
    ss = __fmaf_rn(v, v, ss);
  }
  const float total = block_sum(ss, scratch);
  const float inv = __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(total, static_cast<float>(r.n)), r.eps)));
  for (int i = threadIdx.x; i < r.n; i += blockDim.x) {
    const float y = __fmul_rn(__fmul_rn(buf[i], inv), r.w[i]);
    buf[i] = y;
    if (r.out) r.out[i] = y;
    if (r.out16) r.out16[i] = f2h(saturate_f16(__fmul_rn(y, r.scale16)));
  }
  if (r.q_hi) {
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int b = warp; b < r.n / kQBlock; b += nwarps)
      quantize_block_warp(buf[b * kQBlock + lane], r.q_hi + b * kQBlock,
                          r.q_lo ? r.q_lo + b * kQBlock : nullptr, r.q_scale + b);
  }
}

}  // namespace qc::gpu
