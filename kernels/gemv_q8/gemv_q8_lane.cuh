// The accumulation-order contract of the Q8_0 GEMVs. Every variant that claims bit-identity computes each
// output (token m, row n) exactly like this, whatever its schedule:
//
//   lane l (0..31) of the warp that owns the row covers bytes [s*512 + 16*l, +16) of every 512-weight
//   segment s = 0, 1, ..., ceil(K/512)-1; the lane is active in segment s iff s*512 + 16*l < K (the last
//   segment is partial when K is not a multiple of 512: its first (K mod 512)/16 lanes take part).
//   acc_l = 0; for s ascending, if active:
//       v     = float(dot16(w, a_hi))                        (h)
//       v     = fma(float(dot16(w, a_lo)), kInv127, v)       (hl)
//       acc_l = fma(v, f16(d[n][b]) * xs[m][b], acc_l)       with b = 16*s + l/2, the quantisation block
//   y = butterfly sum of acc_l over the 32 lanes (warp_sum)  (+ residual, one f32 add)
//
// Integer dot products are exact (16 products of |q| <= 127: |dot| < 2^18, exact in f32), so only the f32
// steps above round, and they are written with explicit _rn intrinsics so the compiler cannot contract or
// reorder them differently in different kernels. Schedules that keep this per-lane sequence (more segments
// in flight, several rows per warp, rows walked by a persistent grid, activations read from shared memory
// instead of global) are bit-identical; splitting K over warps or chunks is not.
#pragma once

#include "common.cuh"

namespace qc::gpu {

inline constexpr int kSegBytes = 512;  // weights per warp-wide 16-byte-per-lane load
inline constexpr int kSegBlocks = 16;  // quantisation blocks per segment

__device__ __forceinline__ int dot16(int4 w, int4 a) {
  int d = __dp4a(w.x, a.x, 0);
  d = __dp4a(w.y, a.y, d);
  d = __dp4a(w.z, a.z, d);
  return __dp4a(w.w, a.w, d);
}

template <bool kHL>
__device__ __forceinline__ float seg_value(int4 w, int4 a_hi, int4 a_lo) {
  const float v = __int2float_rn(dot16(w, a_hi));
  if constexpr (kHL) return __fmaf_rn(__int2float_rn(dot16(w, a_lo)), kInv127, v);
  return v;
}

__device__ __forceinline__ float seg_fold(float acc, float v, uint16_t w_scale, float x_scale) {
  return __fmaf_rn(v, __fmul_rn(h2f(w_scale), x_scale), acc);
}

__device__ __forceinline__ bool lane_active(int seg, int lane, int k) {
  return seg * kSegBytes + 16 * lane < k;
}
__device__ __forceinline__ int num_segments(int k) {
  return (k + kSegBytes - 1) / kSegBytes;
}

// Weight loads bypass L1 (streamed once) and use the read-only path.
__device__ __forceinline__ int4 load_w16(const int8_t* p) {
  int4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

}  // namespace qc::gpu
