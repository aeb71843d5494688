// Pieces the tile engines share (gemv_q8_tile.cu, gemv_q8_stream.cu, gemv_q8_ring.cu): where a warp finds the
// activation words of a segment (shared memory once staged, else global), the staging copy, and the fused
// gate+up epilogue's quantisation of whole 32-row tiles.
#pragma once

#include "gemv_q8_lane.cuh"

namespace qc::gpu {

// Activation rows as the dot-product loops read them: hi/lo [M][ld] int8, scale [M][ld_s] f32. Generic
// pointers: shared memory after staging, or global memory (ordinary loads: an earlier kernel wrote them).
struct ActView {
  const int8_t* h;
  const int8_t* l;
  const float* s;
  int ld, ld_s;
};

// Shared-memory layout of staged activations: hi [M][kp] | lo [M][kp] (hl) | scale [M][kp/32] with
// kp = nseg*512 (whole segments, so no index needs a bound).
inline int act_stage_bytes(bool hl, int m, int k) {
  const int kp = (k + kSegBytes - 1) / kSegBytes * kSegBytes;
  return (hl ? 2 : 1) * m * kp + m * (kp / kQBlock) * 4;
}

// Copies M activation rows into `smem` (16-byte aligned) with `nthreads` threads; the caller synchronises
// before anyone reads. Returns the view of the staged copy.
template <bool kHL, int M>
__device__ __forceinline__ ActView stage_acts(unsigned char* smem, const ActView& g, int k, int tid,
                                              int nthreads) {
  const int kp = num_segments(k) * kSegBytes;
  int8_t* sh = reinterpret_cast<int8_t*>(smem);
  int8_t* sl = sh + M * kp;
  float* ss = reinterpret_cast<float*>(smem + (kHL ? 2 : 1) * M * kp);
  const int vec = k / 16;
  for (int i = tid; i < M * vec; i += nthreads) {
    const int m = i / vec, v = i - m * vec;
    *reinterpret_cast<int4*>(sh + m * kp + 16 * v) = *reinterpret_cast<const int4*>(g.h + m * g.ld + 16 * v);
    if constexpr (kHL)
      *reinterpret_cast<int4*>(sl + m * kp + 16 * v) =
          *reinterpret_cast<const int4*>(g.l + m * g.ld + 16 * v);
  }
  const int nb = k / kQBlock;
  for (int i = tid; i < M * nb; i += nthreads) {
    const int m = i / nb, b = i - m * nb;
    ss[m * (kp / kQBlock) + b] = g.s[m * g.ld_s + b];
  }
  return ActView{sh, sl, ss, kp, kp / kQBlock};
}

// The activation words of segment `s` for this lane, token row m.
template <bool kHL>
__device__ __forceinline__ void act_words(const ActView& a, int m, int s, int lane, int4& hi, int4& lo,
                                          float& scale) {
  hi = *reinterpret_cast<const int4*>(a.h + m * a.ld + s * kSegBytes + 16 * lane);
  lo = hi;
  if constexpr (kHL) lo = *reinterpret_cast<const int4*>(a.l + m * a.ld + s * kSegBytes + 16 * lane);
  scale = a.s[m * a.ld_s + s * kSegBlocks + lane / 2];
}

// Gate+up output: `tile` holds silu(g)*u of rows [row0, row0 + 32*units) for M tokens ([M][ld_tile] f32);
// warps `first_warp`.. of `nwarps` quantise one (32-row unit, token) pair each, exactly like swiglu().
template <int M>
__device__ __forceinline__ void quantize_tiles(const float* tile, int ld_tile, int units, int row0,
                                               int8_t* oh, int8_t* ol, float* os, int ld_o, int ld_os,
                                               int warp, int nwarps) {
  const int lane = threadIdx.x & 31;
  for (int q = warp; q < units * M; q += nwarps) {
    const int u = q / M, m = q - u * M;
    const int base = row0 + u * kQBlock;
    quantize_block_warp(tile[m * ld_tile + u * kQBlock + lane], oh + m * ld_o + base,
                        ol ? ol + m * ld_o + base : nullptr, os + m * ld_os + base / kQBlock);
  }
}

}  // namespace qc::gpu
