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
//
// Up to kNormRegs elements a thread (n <= kNormRegs * blockDim, every hidden size up to 6144) the row stays
// in registers and every global load (x, add, w) is issued before the first store. The compiler may not
// move a load across a store that could alias it (x_out may be x; out is any pointer), so the staged loop
// below waits about one memory latency per element it loads. Measured on the H200 (2026-12-04, 27B preset,
// one decode step, eager): 13.5 us per norm call staged, 9.1 us in registers; hu 108.9 -> 116.5 tok/s and
// tile 102.3 -> 111.5 tok/s at context 0 in the same run (docs/PERFORMANCE.md). The prompt path's 1024-row
// norms did not change (5.6 ms for a 2048-token prompt either way: many rows in flight hide the latency).
// Same values, same order of every sum in both paths, so both give the same bits. Two arrays of 12 floats
// take ~60 registers (two 512-thread blocks an SM); 24 took 125 and one block an SM.
constexpr int kNormRegs = 12;

// 1 / sqrt(mean(x^2) + eps) from the row's sum of squares, and an element's normed value: one home for the
// arithmetic every path below shares, which is what makes their bits agree.
__device__ __forceinline__ float norm_inverse(float sum_sq, int n, float eps) {
  return __fdiv_rn(1.0f, __fsqrt_rn(__fadd_rn(__fdiv_rn(sum_sq, static_cast<float>(n)), eps)));
}
__device__ __forceinline__ float norm_scale(float x, float inv, float w) {
  return __fmul_rn(__fmul_rn(x, inv), w);
}

__device__ inline void rmsnorm_row_block(const NormRow& r, float* buf, float* scratch) {
  const int nt = blockDim.x;
  if (r.n <= kNormRegs * nt) {
    float v[kNormRegs], w[kNormRegs];
#pragma unroll
    for (int j = 0; j < kNormRegs; ++j) {
      const int i = threadIdx.x + j * nt;
      if (i < r.n) {
        v[j] = r.x[i];
        w[j] = r.w[i];
      }
    }
    if (r.add) {
#pragma unroll
      for (int j = 0; j < kNormRegs; ++j) {
        const int i = threadIdx.x + j * nt;
        if (i < r.n) v[j] = __fadd_rn(v[j], r.add[i]);
      }
#pragma unroll
      for (int j = 0; j < kNormRegs; ++j) {
        const int i = threadIdx.x + j * nt;
        if (i < r.n) r.x_out[i] = v[j];
      }
    }
    float ss = 0.0f;
#pragma unroll
    for (int j = 0; j < kNormRegs; ++j)
      if (threadIdx.x + j * nt < r.n) ss = __fmaf_rn(v[j], v[j], ss);
    const float total = block_sum(ss, scratch);
    const float inv = norm_inverse(total, r.n, r.eps);
#pragma unroll
    for (int j = 0; j < kNormRegs; ++j) {
      const int i = threadIdx.x + j * nt;
      if (i < r.n) {
        const float y = norm_scale(v[j], inv, w[j]);
        if (r.q_hi) buf[i] = y;
        if (r.out) r.out[i] = y;
        if (r.out16) r.out16[i] = f2h(saturate_f16(__fmul_rn(y, r.scale16)));
      }
    }
  } else {
    float ss = 0.0f;
    for (int i = threadIdx.x; i < r.n; i += nt) {
      float v = r.x[i];
      if (r.add) {
        v = __fadd_rn(v, r.add[i]);
        r.x_out[i] = v;
      }
      buf[i] = v;
      ss = __fmaf_rn(v, v, ss);
    }
    const float total = block_sum(ss, scratch);
    const float inv = norm_inverse(total, r.n, r.eps);
    for (int i = threadIdx.x; i < r.n; i += nt) {
      const float y = norm_scale(buf[i], inv, r.w[i]);
      buf[i] = y;
      if (r.out) r.out[i] = y;
      if (r.out16) r.out16[i] = f2h(saturate_f16(__fmul_rn(y, r.scale16)));
    }
  }
  if (r.q_hi) {
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int b = warp; b < r.n / kQBlock; b += nwarps)
      quantize_block_warp(buf[b * kQBlock + lane], r.q_hi + b * kQBlock,
                          r.q_lo ? r.q_lo + b * kQBlock : nullptr, r.q_scale + b);
  }
}

// The decode path's norms (a few rows, no residual add): the row split over ceil(n / nt) blocks, block
// `slice` writing elements [slice nt, (slice + 1) nt). Every block reduces the whole row itself, with
// rmsnorm_row_block's register-path chains (thread t sums x[t + j nt] for ascending j) and the same
// block_sum, so every block holds the same inv, bit for bit the row block's; then it scales its own slice
// and quantises it from registers, one 32-element block per warp. Same values, same operations: the same
// bits as rmsnorm_row_block. What it costs: ceil(n / nt) reads of the row instead of one (20 KB at n = 5120,
// from L2 after the first); what it buys: the quantisation tail, n / 32 warp-blocks that one 512-thread
// block works through in ceil(n / nt) rounds behind a barrier and a shared-memory stage, spread over as many
// blocks, one round each. Requires blockDim.x == nt with n <= kNormRegs * nt and no add; with q_hi, n a
// multiple of 32 (so a warp's 32 elements lie all inside the row or all outside it).
__device__ inline void rmsnorm_row_slice(const NormRow& r, int slice, float* scratch) {
  const int nt = blockDim.x;
  const int mine = slice * nt + threadIdx.x;
  float ss = 0.0f, x_mine = 0.0f;
#pragma unroll
  for (int j = 0; j < kNormRegs; ++j) {
    const int i = threadIdx.x + j * nt;
    if (i < r.n) {
      const float v = r.x[i];
      if (j == slice) x_mine = v;
      ss = __fmaf_rn(v, v, ss);
    }
  }
  const float w_mine = mine < r.n ? r.w[mine] : 0.0f;
  const float total = block_sum(ss, scratch);
  const float y = norm_scale(x_mine, norm_inverse(total, r.n, r.eps), w_mine);
  if (mine < r.n) {
    if (r.out) r.out[mine] = y;
    if (r.out16) r.out16[mine] = f2h(saturate_f16(__fmul_rn(y, r.scale16)));
  }
  const int base = mine & ~(kQBlock - 1);  // the warp's first element (kQBlock == 32 == warp size)
  if (r.q_hi && base < r.n)
    quantize_block_warp(y, r.q_hi + base, r.q_lo ? r.q_lo + base : nullptr, r.q_scale + base / kQBlock);
}

}  // namespace qc::gpu
