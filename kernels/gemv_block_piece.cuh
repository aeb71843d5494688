// One 32-weight piece of a block-quantised row against the quantised activations (dp4a), shared by the two
// engines of gemv_block: the register engine (gemv_block.cu, weights loaded into registers) and the stream
// engine (gemv_block_stream.cu, weights staged in shared memory by the bulk copy engine). Both fold a row's
// pieces through accumulate_piece in the same order, so they give the same bits.
#pragma once

#include "block_quant.cuh"
#include "common.cuh"
#include "gemv_block.h"

namespace qc::gpu {

// The activation words of piece p of token row m: written by the kernel before this one, so read with
// ordinary loads after pdl_wait() (common.cuh), never through the read-only path.
struct PieceActs {
  int4 h0, h1, l0, l1;
};
template <bool HL>
__device__ __forceinline__ PieceActs piece_acts(const QActIn& xq, int m, int p) {
  PieceActs a{};
  const int4* xh = reinterpret_cast<const int4*>(xq.hi + static_cast<size_t>(m) * xq.ld + p * 32);
  a.h0 = xh[0];
  a.h1 = xh[1];
  if constexpr (HL) {
    const int4* xl = reinterpret_cast<const int4*>(xq.lo + static_cast<size_t>(m) * xq.ld + p * 32);
    a.l0 = xl[0];
    a.l1 = xl[1];
  }
  return a;
}

// The sum of the values a piece's words stand for, in units of the piece's scale (hl: of scale / 127):
// what Q4_K / Q5_K's min term multiplies. Exact in int (|.| <= 32 * 16256).
template <bool HL>
__device__ __forceinline__ int piece_act_sum(const PieceActs& a) {
  constexpr int kOnes = 0x01010101;
  auto sum8 = [](const int4& x, const int4& y) {
    int s = __dp4a(kOnes, x.x, __dp4a(kOnes, x.y, __dp4a(kOnes, x.z, __dp4a(kOnes, x.w, 0))));
    return __dp4a(kOnes, y.x, __dp4a(kOnes, y.y, __dp4a(kOnes, y.z, __dp4a(kOnes, y.w, s))));
  };
  const int sh = sum8(a.h0, a.h1);
  if constexpr (HL) return 127 * sh + sum8(a.l0, a.l1);
  return sh;
}

// One piece of R rows' contribution to the M token rows: the integer dot products of the rows' quants
// with the activation words (dp4a), scaled by each row's factors, added to acc once. The activation words
// and their sums (for Q4_K/Q5_K's min) are loaded and formed once for all R rows; with kSums the sums come
// from shared memory (formed once per block, `sums` [M][pieces]).
template <BlockType T, int M, bool HL, int R, bool kSums>
__device__ __forceinline__ void accumulate_piece(const IntPiece (&w)[R], const QActIn& xq, int p, int pieces,
                                                 const int* sums, float (&acc)[R][M]) {
  constexpr bool kMin = T == BlockType::kQ4_K || T == BlockType::kQ5_K;
  constexpr bool kTwoScales = T == BlockType::kQ6_K;
#pragma unroll
  for (int m = 0; m < M; ++m) {
    const PieceActs x = piece_acts<HL>(xq, m, p);
    int sx = 0;
    if constexpr (kMin) sx = kSums ? sums[m * pieces + p] : piece_act_sum<HL>(x);
    float unit = xq.scale[static_cast<size_t>(m) * xq.ld_scale + p];
    if constexpr (HL) unit = __fmul_rn(unit, 1.0f / 127.0f);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      int d0 = __dp4a(w[r].q[0], x.h0.x, 0), d1 = __dp4a(w[r].q[4], x.h1.x, 0);
      d0 = __dp4a(w[r].q[1], x.h0.y, d0);
      d0 = __dp4a(w[r].q[2], x.h0.z, d0);
      d0 = __dp4a(w[r].q[3], x.h0.w, d0);
      d1 = __dp4a(w[r].q[5], x.h1.y, d1);
      d1 = __dp4a(w[r].q[6], x.h1.z, d1);
      d1 = __dp4a(w[r].q[7], x.h1.w, d1);
      if constexpr (HL) {
        // hi + lo / 127 as one integer: 127 hi + lo (|.| <= 16256 per value; a piece's sums stay below
        // 2^24, so their float conversions below are exact).
        int e0 = __dp4a(w[r].q[0], x.l0.x, 0), e1 = __dp4a(w[r].q[4], x.l1.x, 0);
        e0 = __dp4a(w[r].q[1], x.l0.y, e0);
        e0 = __dp4a(w[r].q[2], x.l0.z, e0);
        e0 = __dp4a(w[r].q[3], x.l0.w, e0);
        e1 = __dp4a(w[r].q[5], x.l1.y, e1);
        e1 = __dp4a(w[r].q[6], x.l1.z, e1);
        e1 = __dp4a(w[r].q[7], x.l1.w, e1);
        d0 = 127 * d0 + e0;
        d1 = 127 * d1 + e1;
      }
      float v = kTwoScales
                    ? __fmaf_rn(w[r].a1, static_cast<float>(d1), __fmul_rn(w[r].a0, static_cast<float>(d0)))
                    : __fmul_rn(w[r].a0, static_cast<float>(d0 + d1));
      if constexpr (kMin) v = __fmaf_rn(-w[r].mn, static_cast<float>(sx), v);
      acc[r][m] = __fmaf_rn(unit, v, acc[r][m]);
    }
  }
}

}  // namespace qc::gpu
